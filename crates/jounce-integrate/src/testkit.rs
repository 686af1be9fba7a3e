//! Reference problems with known solutions and convergence-order helpers,
//! shared by the tests of every method (and by the formulation tests).

use nalgebra::DMatrix;

use crate::error::EvalError;
use crate::method;
use crate::options::SolverOptions;
use crate::problem::{OdeProblem, SecondOrderProblem};
use crate::solve::{solve, Observer};
use crate::FirstOrderForm;

/// Observer that keeps nothing (for convergence studies).
pub struct Discard;

impl<P: ?Sized> Observer<P> for Discard {
    fn output(&mut self, _problem: &mut P, _t: f64, _y: &[f64]) -> Result<(), EvalError> {
        Ok(())
    }
}

/// Least-squares slope of log(err) against log(h).
pub fn loglog_slope(h: &[f64], err: &[f64]) -> f64 {
    let n = h.len() as f64;
    let x: Vec<f64> = h.iter().map(|v| v.ln()).collect();
    let y: Vec<f64> = err.iter().map(|v| v.ln()).collect();
    let mx = x.iter().sum::<f64>() / n;
    let my = y.iter().sum::<f64>() / n;
    let mut sxy = 0.0;
    let mut sxx = 0.0;
    for i in 0..x.len() {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
    }
    sxy / sxx
}

/// Max-norm of a − b.
pub fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// Integrate with method `name` at fixed step h from (t0, y0) to t1 and
/// return y(t1).
pub fn run_fixed(
    name: &str,
    p: &mut dyn OdeProblem,
    t0: f64,
    y0: &[f64],
    t1: f64,
    h: f64,
    extra: &SolverOptions,
) -> Result<Vec<f64>, String> {
    let mut opts = extra.clone();
    opts.fixed_step = Some(h);
    let mut st = method::build(name, &opts).map_err(|e| e.to_string())?;
    let r = solve(p, st.as_mut(), t0, y0, t1, &opts, &mut Discard).map_err(|e| e.to_string())?;
    Ok(r.y)
}

/// Empirical order of method `name` on `p` over [t0, t1]: the log-log slope
/// of the end-point error against h for h = h0, h0/2, ..., h0/2^(levels-1).
pub fn empirical_order(
    name: &str,
    p: &mut dyn OdeProblem,
    t0: f64,
    y0: &[f64],
    t1: f64,
    exact: &[f64],
    h0: f64,
    levels: u32,
    extra: &SolverOptions,
) -> Result<(f64, Vec<f64>), String> {
    let mut hs = Vec::new();
    let mut es = Vec::new();
    for l in 0..levels {
        let h = h0 / 2f64.powi(l as i32);
        let y = run_fixed(name, p, t0, y0, t1, h, extra)?;
        hs.push(h);
        es.push(max_abs_diff(&y, exact));
    }
    Ok((loglog_slope(&hs, &es), es))
}

/// Nonlinear problem with a known solution (gil-sanfelice-nikravesh,
/// section 4; studies.md S7): x1' = −x2/x3², x2' = x1/x3², x3' = 1, with
/// x(t) = [sin(1/t), cos(1/t), t].
pub struct InverseTimeRotation;

impl InverseTimeRotation {
    /// Exact solution at t.
    pub fn exact(t: f64) -> [f64; 3] {
        [(1.0 / t).sin(), (1.0 / t).cos(), t]
    }
}

impl OdeProblem for InverseTimeRotation {
    fn dim(&self) -> usize {
        3
    }
    fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        let x3s = y[2] * y[2];
        dy[0] = -y[1] / x3s;
        dy[1] = y[0] / x3s;
        dy[2] = 1.0;
        Ok(())
    }
    fn jacobian(&mut self, _t: f64, y: &[f64], j: &mut DMatrix<f64>) -> Result<(), EvalError> {
        let x3 = y[2];
        j.fill(0.0);
        j[(0, 1)] = -1.0 / (x3 * x3);
        j[(0, 2)] = 2.0 * y[1] / (x3 * x3 * x3);
        j[(1, 0)] = 1.0 / (x3 * x3);
        j[(1, 2)] = -2.0 * y[0] / (x3 * x3 * x3);
        Ok(())
    }
    fn has_exact_jacobian(&self) -> bool {
        true
    }
}

/// Linear test equation as a real 2-vector: y' = [[a, −b], [b, a]] y, i.e.
/// z' = λ z with λ = a + i b, z = y0 + i y1.
pub struct LinearTest {
    /// Re λ.
    pub a: f64,
    /// Im λ.
    pub b: f64,
}

impl OdeProblem for LinearTest {
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        dy[0] = self.a * y[0] - self.b * y[1];
        dy[1] = self.b * y[0] + self.a * y[1];
        Ok(())
    }
    fn jacobian(&mut self, _t: f64, _y: &[f64], j: &mut DMatrix<f64>) -> Result<(), EvalError> {
        j[(0, 0)] = self.a;
        j[(0, 1)] = -self.b;
        j[(1, 0)] = self.b;
        j[(1, 1)] = self.a;
        Ok(())
    }
    fn has_exact_jacobian(&self) -> bool {
        true
    }
}

/// Forced Duffing oscillator with a manufactured solution:
/// m q'' = sin³ t − q − q³ with m = 1 has q(t) = sin t, v(t) = cos t.
/// Nonlinear, second order, mass matrix 2 (scaled: 2 q'' = 2(sin³t − q − q³)).
pub struct ForcedDuffing;

impl ForcedDuffing {
    /// Exact [q, v] at t.
    pub fn exact(t: f64) -> [f64; 2] {
        [t.sin(), t.cos()]
    }
}

impl SecondOrderProblem for ForcedDuffing {
    fn ndof(&self) -> usize {
        1
    }
    fn mass_matrix(&mut self, _t: f64, _q: &[f64], m: &mut DMatrix<f64>) -> Result<(), EvalError> {
        m[(0, 0)] = 2.0;
        Ok(())
    }
    fn forces(&mut self, t: f64, q: &[f64], _v: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        f[0] = 2.0 * (t.sin().powi(3) - q[0] - q[0].powi(3));
        Ok(())
    }
}

/// The Duffing problem in first-order form, y = [q, v].
pub fn forced_duffing() -> FirstOrderForm<ForcedDuffing> {
    FirstOrderForm::new(ForcedDuffing)
}
