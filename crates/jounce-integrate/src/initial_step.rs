//! Automatic choice of the first step size.

use crate::error::EvalError;
use crate::problem::OdeProblem;

/// Initial step size by Hairer–Nørsett–Wanner I, Section II.4, "Starting
/// step size" (the HINIT routine of dopri5.f), for a method of order `order`.
/// Costs one evaluation of f. `f0` is f(t0, y0).
pub fn initial_step(
    p: &mut dyn OdeProblem,
    t0: f64,
    y0: &[f64],
    f0: &[f64],
    order: u32,
    rtol: f64,
    atol: f64,
    h_max: f64,
    direction: f64,
) -> Result<f64, EvalError> {
    let n = y0.len();
    let sc = |i: usize| atol + rtol * y0[i].abs();
    let (mut d0, mut d1) = (0.0, 0.0);
    for i in 0..n {
        d0 += (y0[i] / sc(i)).powi(2);
        d1 += (f0[i] / sc(i)).powi(2);
    }
    let nn = n.max(1) as f64;
    let (d0, d1) = ((d0 / nn).sqrt(), (d1 / nn).sqrt());
    let mut h0 = if d0 < 1e-5 || d1 < 1e-5 {
        1e-6
    } else {
        0.01 * d0 / d1
    };
    h0 = h0.min(h_max);
    let y1: Vec<f64> = (0..n).map(|i| y0[i] + direction * h0 * f0[i]).collect();
    let mut f1 = vec![0.0; n];
    p.rhs(t0 + direction * h0, &y1, &mut f1)?;
    let mut d2 = 0.0;
    for i in 0..n {
        d2 += ((f1[i] - f0[i]) / sc(i)).powi(2);
    }
    let d2 = (d2 / nn).sqrt() / h0;
    let dm = d1.max(d2);
    let h1 = if dm <= 1e-15 {
        (h0 * 1e-3).max(1e-6)
    } else {
        (0.01 / dm).powf(1.0 / (order as f64 + 1.0))
    };
    Ok((100.0 * h0).min(h1).min(h_max))
}
