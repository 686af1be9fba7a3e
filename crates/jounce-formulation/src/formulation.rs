//! The contract of a formulation: how an integrator state y relates to the
//! physical state (q, v, λ) of a mechanical system.

use jounce_integrate::{EvalError, EventAction, OdeProblem, StepFix};
use jounce_mechanics::MechanicalSystem;

use crate::error::FormulationError;

/// A mechanical system turned into a problem an integrator solves.
///
/// Each formulation is its own type implementing [`OdeProblem`] (and
/// `SecondOrderProblem` where it has that structure); this trait adds the
/// map between the integrator's state y and the physical state.
pub trait Formulation: OdeProblem {
    /// Registry name ([`crate::FormulationKind::name`]).
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

    /// Number of mode events of the formulation itself (friction elements
    /// that stick or slip), located like the system's switching functions
    /// (after them in the problem's event list). Default: none.
    fn n_mode_events(&self) -> usize {
        0
    }

    /// The mode event functions at (t, y) into `g` (len
    /// [`Formulation::n_mode_events`]); a mode changes where one crosses
    /// zero.
    ///
    /// # Errors
    /// [`EvalError`] when the state cannot be evaluated.
    fn mode_events(&mut self, _t: f64, _y: &[f64], _g: &mut [f64]) -> Result<(), EvalError> {
        Ok(())
    }

    /// Change the mode of event `i` at its root (t, y); may change y (a
    /// projection). Default: nothing changes.
    ///
    /// # Errors
    /// [`EvalError`] when the new mode cannot be evaluated.
    fn handle_mode_event(
        &mut self,
        _i: usize,
        _t: f64,
        _y: &mut [f64],
    ) -> Result<EventAction, EvalError> {
        Ok(EventAction::Continue)
    }

    /// After an event of the system's switching functions (a contact
    /// closing or opening) at (t, y): re-decide the modes that depend on
    /// it; true when a mode (or y) changed. Default: nothing.
    ///
    /// # Errors
    /// [`EvalError`] when the state cannot be evaluated.
    fn after_system_event(&mut self, _t: f64, _y: &mut [f64]) -> Result<bool, EvalError> {
        Ok(false)
    }

    /// The friction forces F_t of the system's friction rows
    /// ([`jounce_mechanics::SystemQueries::n_friction_rows`]) at (t, y)
    /// into `out`; false (out untouched) when the formulation does not
    /// solve for them.
    ///
    /// # Errors
    /// [`EvalError`] when the state cannot be evaluated.
    fn friction_forces(
        &mut self,
        _t: f64,
        _y: &[f64],
        _out: &mut [f64],
    ) -> Result<bool, EvalError> {
        Ok(false)
    }
}

/// Refuse an initial state whose q0, v0 are not of the system's n
/// coordinates, naming the formulation `name` (shared by the formulations
/// that integrate the body coordinates themselves).
pub(crate) fn check_dimensions(
    name: &str,
    n: usize,
    q0: &[f64],
    v0: &[f64],
) -> Result<(), FormulationError> {
    if q0.len() != n || v0.len() != n {
        return Err(FormulationError::BadParameter {
            formulation: name.into(),
            detail: format!(
                "initial state has {} coordinates and {} velocities, the system {n}",
                q0.len(),
                v0.len()
            ),
        });
    }
    Ok(())
}

/// Refuse an initial state whose q0 is not of the system's n_q positions
/// or v0 not of its n_v velocities, naming the formulation `name` (the
/// formulations that accept n_q ≠ n_v).
pub(crate) fn check_state_dimensions(
    name: &str,
    nq: usize,
    nv: usize,
    q0: &[f64],
    v0: &[f64],
) -> Result<(), FormulationError> {
    if nq == nv {
        return check_dimensions(name, nq, q0, v0);
    }
    if q0.len() != nq || v0.len() != nv {
        return Err(FormulationError::BadParameter {
            formulation: name.into(),
            detail: format!(
                "initial state has {} positions and {} velocities, the system {nq} and {nv}",
                q0.len(),
                v0.len()
            ),
        });
    }
    Ok(())
}

/// q ← q ⊕ 0 (`zero` of length n_v): the positions put back on their
/// manifold (unit quaternions normalised) after an accepted step of an ODE
/// form whose positions are not its velocities; `projected` is scratch of
/// length n_q. Shared by `augmented` and `penalty`.
pub(crate) fn retract_positions<S: MechanicalSystem + ?Sized>(
    sys: &S,
    q: &mut [f64],
    zero: &[f64],
    projected: &mut [f64],
) -> StepFix {
    sys.integrate_position(q, zero, projected);
    if projected[..] == q[..] {
        return StepFix::Unchanged;
    }
    q.copy_from_slice(projected);
    StepFix::Corrected
}
