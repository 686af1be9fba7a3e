//! Reference problems with known solutions that jounce's studies run as
//! shipped (not test fixtures: those are in the `testkit` module, compiled
//! for tests only).
//!
//! Owns: the problems' equations and exact solutions. Must not: know about
//! bodies.

use nalgebra::DMatrix;

use crate::error::EvalError;
use crate::problem::OdeProblem;

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
