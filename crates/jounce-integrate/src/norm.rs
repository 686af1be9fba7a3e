//! The error norm shared by every adaptive method.

/// Weighted root-mean-square norm of a local error estimate e:
///
/// ‖e‖ = sqrt( (1/n) Σ (e_i / (atol + rtol · max(|y0_i|, |y1_i|)))² )
///
/// (Hairer–Nørsett–Wanner I, eq. II.4.11; the norm of dopri5.f). A step is
/// accepted when ‖e‖ ≤ 1.
pub fn wrms_norm(err: &[f64], y0: &[f64], y1: &[f64], rtol: f64, atol: f64) -> f64 {
    let n = err.len().max(1) as f64;
    let mut s = 0.0;
    for i in 0..err.len() {
        let sc = atol + rtol * y0[i].abs().max(y1[i].abs());
        let r = err[i] / sc;
        s += r * r;
    }
    (s / n).sqrt()
}
