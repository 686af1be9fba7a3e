//! The interface every method implements: take one accepted step.
//!
//! A method owns its state (t, y, history, step size) and produces steps;
//! the shared driver in [`crate::solve()`] owns everything else (output,
//! events, breakpoints, post-step corrections, counting, timing).

use crate::error::IntegrateError;
use crate::options::SolverOptions;
use crate::problem::OdeProblem;
use crate::stats::Stats;

/// What a method may use while stepping: the options and the counters.
pub struct StepContext<'a> {
    /// Options of the run.
    pub opts: &'a SolverOptions,
    /// Work counters the method increments (accepted/rejected steps, LU,
    /// Newton). First-order `n_rhs`/`n_jac` are counted by the driver; methods add the evaluations it cannot see (second-order forces and tangents).
    pub stats: &'a mut Stats,
}

/// One integration method, as a stepper.
///
/// Protocol: [`Stepper::reset`] at the initial point and after every
/// discontinuity (event, breakpoint, state change by the problem); then
/// repeated [`Stepper::step`]. After `step` returns `Ok`, the method's
/// state is at the end of one accepted step, `t() ≤ t_stop`, and
/// [`Stepper::interpolate`] is valid on `[t_prev(), t()]`; its full order
/// after [`Stepper::prepare_dense_output`], which a method whose
/// continuous extension costs extra evaluations (DOP853) uses to form it
/// only for the steps that are interpolated.
pub trait Stepper {
    /// Registry name of the method (as in `jounce methods`).
    fn name(&self) -> &'static str;

    /// (Re)start at (t0, y0): drop any history (FSAL stage, back values,
    /// Nordsieck array) and restart at the lowest order. A step size from
    /// before the reset may be kept as a first guess.
    fn reset(
        &mut self,
        p: &mut dyn OdeProblem,
        t0: f64,
        y0: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError>;

    /// Restart at (t0, y0) after the driver stopped at a breakpoint of f
    /// (a jump of a force or of its derivatives at t0). The default is
    /// [`Stepper::reset`]. A one-step method whose reset keeps its step size
    /// overrides it to start with the smaller of that size (the most the
    /// step-size history justifies) and the first-step estimate at
    /// (t0, y0) (Hairer, Nørsett & Wanner I, II.4), which sees f's new
    /// value: the size kept from a smooth stretch before the jump is
    /// otherwise tried first and rejected until it fits (S3: radau5 kept
    /// 13.6 s after the system's rest and was rejected 7 times on its way
    /// to 2e-7 s; sdirk3 10 times, 145 f-evaluations for one step).
    ///
    /// # Errors
    /// As [`Stepper::reset`].
    fn restart_at_breakpoint(
        &mut self,
        p: &mut dyn OdeProblem,
        t0: f64,
        y0: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.reset(p, t0, y0, ctx)
    }

    /// Replace the current value by `y` (len n), a small correction of the
    /// same solution at the same time (see [`crate::StepFix::Corrected`]).
    /// The default restarts the method ([`Stepper::reset`]); multistep
    /// methods override it to keep their history, so that a projection
    /// after every step does not cost them their order.
    fn correct(
        &mut self,
        p: &mut dyn OdeProblem,
        y: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let t = self.t();
        self.reset(p, t, y, ctx)
    }

    /// Advance by one accepted step that does not pass `t_stop`.
    fn step(
        &mut self,
        p: &mut dyn OdeProblem,
        t_stop: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError>;

    /// Current time (end of the last accepted step).
    fn t(&self) -> f64;

    /// Current state.
    fn y(&self) -> &[f64];

    /// Start of the last accepted step.
    fn t_prev(&self) -> f64;

    /// Size of the last accepted step.
    fn h_last(&self) -> f64 {
        self.t() - self.t_prev()
    }

    /// Form what the continuous solution of the last accepted step needs
    /// beyond the step itself (the three extra stages of DOP853's
    /// extension, Hairer, Nørsett & Wanner I, II.6), once per step; called
    /// by the driver before it interpolates in a step, so that steps
    /// without an output point or an event inside do not pay for it. The
    /// default (methods whose interpolant is free) does nothing.
    ///
    /// # Errors
    /// Evaluation errors of the extra stages.
    fn prepare_dense_output(&mut self, _p: &mut dyn OdeProblem) -> Result<(), IntegrateError> {
        Ok(())
    }

    /// An upper estimate of the angle, in radians, by which the continuous
    /// solution of the last accepted step can turn inside it: h·ρ(J) for a
    /// method whose continuous solution is the flow of a linearization
    /// (e^{sJ} turns a mode of frequency ω by ω s). The event scan samples
    /// such a step at intervals of at most π/4 of that angle, so that a
    /// switching function that changes sign several times inside one step
    /// (the LLM steps over whole periods of a penalty contact) is bracketed
    /// at its first root. Polynomial continuous solutions, whose shape the
    /// scan's cubic model and samples already follow, return 0 (the
    /// default).
    fn dense_output_rotation(&self) -> f64 {
        0.0
    }

    /// The method's continuous solution at t ∈ [t_prev(), t()] into `out`
    /// (of the method's full dense order after
    /// [`Stepper::prepare_dense_output`]).
    fn interpolate(&self, t: f64, out: &mut [f64]);
}

/// [`Stepper::restart_at_breakpoint`] of a one-step method whose reset
/// keeps its step size in the field `h` gives access to (h = 0 asks its
/// reset for the first-step estimate, or the user's h0): restart with the
/// smaller of the kept size and that estimate.
///
/// # Errors
/// As [`Stepper::reset`].
pub(crate) fn restart_keeping_step<S: Stepper>(
    stepper: &mut S,
    h: fn(&mut S) -> &mut f64,
    p: &mut dyn OdeProblem,
    t0: f64,
    y0: &[f64],
    ctx: &mut StepContext,
) -> Result<(), IntegrateError> {
    let kept = std::mem::replace(h(stepper), 0.0);
    stepper.reset(p, t0, y0, ctx)?;
    if kept > 0.0 && ctx.opts.fixed_step.is_none() {
        let now = h(stepper);
        *now = now.min(kept);
    }
    Ok(())
}

/// The step size a (re)started method begins with: the fixed step (which
/// must be positive and finite), else the size `kept` from before the
/// restart (0: none), else the user's h0, else `estimate` (the first-step
/// estimate of Hairer, Nørsett & Wanner I, II.4, or the method's own).
/// Shared by every stepper's reset, so that all of them read the options
/// alike.
///
/// # Errors
/// [`IntegrateError::BadMethod`] for a fixed step that is not positive
/// and finite, and the errors of `estimate`.
pub(crate) fn starting_step(
    name: &str,
    opts: &SolverOptions,
    kept: f64,
    estimate: impl FnOnce() -> Result<f64, IntegrateError>,
) -> Result<f64, IntegrateError> {
    if let Some(h) = opts.fixed_step {
        if !(h > 0.0 && h.is_finite()) {
            return Err(IntegrateError::BadMethod(format!(
                "{name}: fixed step size must be positive, got {h}"
            )));
        }
        return Ok(h);
    }
    if kept != 0.0 {
        return Ok(kept);
    }
    match opts.h0 {
        Some(h0) => Ok(h0),
        None => estimate(),
    }
}

/// [`crate::step_loop::StepAttempt::restart_here`] by a full
/// [`Stepper::reset`] at the current point, for a method whose reset is
/// its restart (a consistent derivative, order 1, a fresh controller):
/// the loop's memory of the crossing survives the reset (a second
/// crossing within a few steps is a blow-up, not a jump), the step size
/// the field `h` gives access to is chosen anew when `forget_h` (else the
/// reset's own choice stands), and it is not below what the arithmetic
/// resolves at t (the crossing step had that size; a first-step estimate
/// from a tiny y and a large f can fall below it).
///
/// # Errors
/// As [`Stepper::reset`].
pub(crate) fn restart_by_reset<S: Stepper + crate::step_loop::StepAttempt>(
    stepper: &mut S,
    h: fn(&mut S) -> &mut f64,
    forget_h: bool,
    p: &mut dyn OdeProblem,
    ctx: &mut StepContext,
) -> Result<(), IntegrateError> {
    let (t, y) = (stepper.t(), stepper.y().to_vec());
    if forget_h {
        *h(stepper) = 0.0;
    }
    let crossing = *stepper.loop_state();
    stepper.reset(p, t, &y, ctx)?;
    *stepper.loop_state() = crossing;
    let h = h(stepper);
    *h = h.max(crate::discontinuity::resolution_floor(t));
    Ok(())
}
