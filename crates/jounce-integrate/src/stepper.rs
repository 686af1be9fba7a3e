//! The interface every method implements: take one accepted step.
//!
//! A method owns its state (t, y, history, step size) and produces steps;
//! the shared driver in [`crate::solve`] owns everything else (output,
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
/// [`Stepper::interpolate`] is valid on `[t_prev(), t()]`.
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

    /// The method's continuous solution at t ∈ [t_prev(), t()] into `out`.
    fn interpolate(&self, t: f64, out: &mut [f64]);
}
