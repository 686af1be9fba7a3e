//! The contract of a formulation: how an integrator state y relates to the
//! physical state (q, v, λ) of a mechanical system.

use jounce_integrate::{EvalError, OdeProblem};

use crate::error::FormulationError;

/// A mechanical system turned into a problem an integrator solves.
///
/// Each formulation is its own type implementing [`OdeProblem`] (and
/// `SecondOrderProblem` where it has that structure); this trait adds the
/// map between the integrator's state y and the physical state.
pub trait Formulation: OdeProblem {
    /// Registry name ([`crate::NAMES`]).
    fn name(&self) -> &'static str;

    /// Integrator state y0 from a consistent (assembled) q0, v0 at t0.
    ///
    /// # Errors
    /// When the formulation cannot represent the system (e.g. penalty with a
    /// singular mass matrix), naming the cause.
    fn initial_state(
        &mut self,
        t0: f64,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<Vec<f64>, FormulationError>;

    /// Physical coordinates q, velocities v and Lagrange multipliers λ
    /// (len nc; zeros where the formulation has none) at (t, y).
    fn physical_state(
        &mut self,
        t: f64,
        y: &[f64],
        q: &mut [f64],
        v: &mut [f64],
        lambda: &mut [f64],
    ) -> Result<(), EvalError>;

    /// Physical coordinates q and velocities v only, at (t, y): for
    /// per-step watches (singular configurations) that need no
    /// multipliers. `lambda` is scratch of length nc. Default: through
    /// [`Formulation::physical_state`]; formulations whose multipliers
    /// cost a solve give q and v directly.
    fn physical_motion(
        &mut self,
        t: f64,
        y: &[f64],
        q: &mut [f64],
        v: &mut [f64],
        lambda: &mut [f64],
    ) -> Result<(), EvalError> {
        self.physical_state(t, y, q, v, lambda)
    }
}

/// q and v from a state y = [q; v; …] (formulations that integrate the
/// body coordinates themselves).
pub(crate) fn split_motion(y: &[f64], q: &mut [f64], v: &mut [f64]) {
    let n = q.len();
    q.copy_from_slice(&y[..n]);
    v.copy_from_slice(&y[n..2 * n]);
}
