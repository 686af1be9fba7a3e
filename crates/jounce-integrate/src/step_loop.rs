//! The accept/reject loop of one step, written once: a method supplies only
//! its trial step ([`StepAttempt`]); [`advance`] owns the rest.
//!
//! One call of [`advance`] takes one accepted step towards `t_stop`:
//!
//! 1. h = min(proposal, h_max), trimmed so that the step lands on `t_stop`
//!    without leaving a sliver ([`step_towards`]);
//! 2. a proposal below h_min or below what the arithmetic resolves at t
//!    ([`resolution_floor`]) is a step-size underflow, reported with the
//!    time it happened;
//! 3. the method's trial step of size h ([`StepAttempt::attempt`]) gives an
//!    error norm (≤ 1 passes, in units of the tolerance), none (fixed
//!    steps: accepted as they are), or a failure (an inner iteration that
//!    did not converge, a stage that overflowed) with the factor by which
//!    to shrink h;
//! 4. accepted: counted, committed ([`StepAttempt::commit`]), and the next
//!    proposal is h times the method's factor, not above h right after a
//!    rejection (Hairer, Nørsett & Wanner I, II.4), and not below the
//!    controller's own proposal after a step trimmed to `t_stop` (unless
//!    the method's formulas rest on the ratio of successive steps,
//!    [`StepAttempt::resumes_after_trim`]), and not below the resolution;
//! 5. rejected: counted ([`record_rejection`], which gives up after
//!    [`crate::controller::MAX_ERROR_TEST_FAILURES`] in a row), the step
//!    shrinks, never below the resolution; a step that fails at the
//!    resolution crosses a discontinuity of f and restarts the method
//!    there ([`crate::discontinuity`]).
//!
//! The outer driver ([`crate::solve()`]) owns the rest of the run: stop
//! times, output points, breakpoints (stop and restart), events (location,
//! state changes and restart), post-step corrections and max-steps.

use crate::controller::{record_rejection, step_towards};
use crate::discontinuity::{
    after_rejection, resolution_floor, AfterRejection, MIN_STEPS_BETWEEN_CROSSINGS,
};
use crate::error::IntegrateError;
use crate::problem::OdeProblem;
use crate::stepper::StepContext;

/// The step from t to the next point t_0 + (k + 1) h of a fixed-step
/// grid started at t_0, k steps taken: counted from the grid's start, so
/// that t carries no accumulated rounding of t += h and the last step
/// lands on the stop time ([`step_towards`] trims it there).
#[must_use]
pub fn fixed_grid_step(t0: f64, k: u64, h: f64, t: f64) -> f64 {
    t0 + (k + 1) as f64 * h - t
}

/// What a trial step of size h produced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Trial {
    /// The step was computed, with this error norm (≤ 1 passes; NaN counts
    /// as infinite).
    Estimated(f64),
    /// The step was computed without an error estimate (fixed steps): it
    /// is accepted.
    Unchecked,
    /// The step could not be computed (an inner iteration that did not
    /// converge, a stage that overflowed): retry with h times `factor`.
    Failed {
        /// Factor (< 1) for the next trial.
        factor: f64,
    },
    /// Try the same step again, not counted as a rejection (the method
    /// refreshed something stale, a Jacobian from an earlier step).
    Repeat,
}

/// What the shared loop keeps between the calls of one method.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoopState {
    /// Accepted steps since the last crossing of a discontinuity.
    pub since_crossing: u64,
}

impl Default for LoopState {
    fn default() -> Self {
        Self {
            since_crossing: MIN_STEPS_BETWEEN_CROSSINGS,
        }
    }
}

/// The method side of [`advance`]: a trial step, the step-size factor of
/// its controller, and committing an accepted trial.
pub trait StepAttempt {
    /// Current time.
    fn current_t(&self) -> f64;
    /// The step size the controller proposes for the next trial.
    fn proposed_h(&self) -> f64;
    /// Set the step size of the next trial.
    fn set_h(&mut self, h: f64);
    /// The loop's own state, kept by the method.
    fn loop_state(&mut self) -> &mut LoopState;

    /// A trial step of size h from the current point (not yet the current
    /// point).
    ///
    /// # Errors
    /// Failures that no smaller step can cure.
    fn attempt(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<Trial, IntegrateError>;

    /// h_new / h after a trial of size h with error norm `err` (accepted or
    /// not); also where a controller with memory records an accepted
    /// error (`accepted`).
    fn factor(&mut self, err: f64, h: f64, accepted: bool) -> f64;

    /// Whether a trial with error norm `err` passes (error per step: err ≤ 1).
    fn passes(&self, err: f64, _h: f64) -> bool {
        err <= 1.0
    }

    /// Whether the step after one trimmed to `t_stop` may return to the
    /// controller's larger proposal (true: one-step methods). Multistep
    /// methods whose formulas and order selection rest on the ratio of
    /// successive steps answer false: the next step then follows from the
    /// trimmed one by the method's own factor, as in DASSL and ode15s, so
    /// that h_{n+1}/h_n stays within the bound of the method's step
    /// selection (variable-step multistep formulas are zero-stable only
    /// for bounded step ratios: Hairer, Nørsett & Wanner I, III.5;
    /// Grigorieff 1983 for BDF2, ratio < 1 + √2).
    fn resumes_after_trim(&self) -> bool {
        true
    }

    /// Whether the method's `commit` adds its accepted step's error
    /// estimate to [`crate::Stats::accumulated_error`] itself, in its own
    /// scaling (radau, bdf on DAEs, the structural driver); otherwise the
    /// loop adds the error norm of the accepted trial.
    fn sums_accepted_error(&self) -> bool {
        false
    }

    /// Hook after a trial of size h was rejected by the error test (a
    /// method that reuses its Jacobian refreshes it here).
    ///
    /// # Errors
    /// Evaluation errors.
    fn rejected(
        &mut self,
        _p: &mut dyn OdeProblem,
        _h: f64,
        _ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        Ok(())
    }

    /// Make the trial of size h the current point (the step is accepted
    /// and already counted).
    ///
    /// # Errors
    /// Evaluation errors at the new point, or a diagnosis that stops the
    /// run (stiffness).
    fn commit(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError>;

    /// Restart at the current point after a trial crossed a discontinuity
    /// of f: drop what was learnt from before it (FSAL stage, history,
    /// step-size memory) and choose a first step anew.
    ///
    /// # Errors
    /// Evaluation errors at the current point.
    fn restart_here(
        &mut self,
        p: &mut dyn OdeProblem,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError>;
}

/// The four [`StepAttempt`] accessors of a stepper that keeps its current
/// time in `t`, its next step size in `h` and the loop's memory in
/// `loop_state` (most drivers): write `step_state_accessors!();` inside
/// the `impl StepAttempt` block.
/// `step_state_accessors!(st);` reads them from the field `st` instead
/// (a [`crate::one_step::OneStepState`]).
macro_rules! step_state_accessors {
    ($($field:ident)?) => {
        fn current_t(&self) -> f64 {
            self$(.$field)?.t
        }

        fn proposed_h(&self) -> f64 {
            self$(.$field)?.h
        }

        fn set_h(&mut self, h: f64) {
            self$(.$field)?.h = h;
        }

        fn loop_state(&mut self) -> &mut $crate::step_loop::LoopState {
            &mut self$(.$field)?.loop_state
        }
    };
}
pub(crate) use step_state_accessors;

/// The [`StepAttempt::loop_state`] of a stepper that keeps the loop's
/// memory in the field `loop_state` and its own time and step size (write
/// `loop_state_accessor!();` inside the `impl StepAttempt` block).
macro_rules! loop_state_accessor {
    () => {
        fn loop_state(&mut self) -> &mut $crate::step_loop::LoopState {
            &mut self.loop_state
        }
    };
}
pub(crate) use loop_state_accessor;

/// Steps an explicit run must have taken since its stiffness test fired,
/// and the share of its budget they are, before [`stiff_budget_forecast`]
/// judges its pace.
pub const FORECAST_MIN_STEPS: u64 = 1000;
/// The least share of the budget spent since the stiffness test fired
/// before [`stiff_budget_forecast`] judges a run's pace.
pub const FORECAST_MIN_SHARE: f64 = 0.01;
/// How far beyond the budget the forecast must reach before the run is
/// stopped: a stiff phase may end (a contact opens), so a run that would
/// need up to this multiple of its budget at today's pace is let go on.
pub const FORECAST_MARGIN: f64 = 2.0;

/// Stop a run early when Hairer's stiffness test has fired
/// ([`crate::Stats::stiffness_detected_at`] = t_s, after n_s steps) and the
/// run, at the pace of its steps since then, n + (n − n_s)(t_end − t)/(t − t_s),
/// would need more than [`FORECAST_MARGIN`] times its budget of `max_steps`
/// to reach `t_end`: the budget would run out later anyway, after all its
/// steps were paid for (dopri5 on a spring of 2e14 N/m spent its 10⁶ steps
/// to say "stiff" although the test fired after a few thousand). Judged
/// only after [`FORECAST_MIN_STEPS`] steps since the test fired and
/// [`FORECAST_MIN_SHARE`] of the budget, so that a short stiff transient
/// does not stop a run.
pub fn stiff_budget_forecast(
    t: f64,
    t_end: f64,
    stats: &crate::stats::Stats,
    max_steps: u64,
) -> Option<IntegrateError> {
    let ts = stats.stiffness_detected_at?;
    let n = stats.n_steps();
    let since = n.saturating_sub(stats.steps_at_stiffness_detection);
    if since < FORECAST_MIN_STEPS
        || (since as f64) < FORECAST_MIN_SHARE * max_steps as f64
        || t <= ts
    {
        return None;
    }
    let forecast = n as f64 + since as f64 * (t_end - t) / (t - ts);
    (forecast > FORECAST_MARGIN * max_steps as f64).then(|| IntegrateError::ProbablyStiff {
        t,
        detail: format!(
            "Hairer's stiffness test fired at t = {ts}; at the pace of the {since} steps since \
             then the run to t = {t_end} would take about {forecast:.1e} steps, more than the \
             budget of {max_steps}: stopped early instead of spending it"
        ),
    })
}

/// The error of a run whose step budget is used up at `t`: stiffness when
/// Hairer's test fired before ([`crate::Stats::stiffness_detected_at`]), else the
/// budget itself.
pub fn budget_used_up(t: f64, stats: &crate::stats::Stats) -> IntegrateError {
    match stats.stiffness_detected_at {
        Some(ts) => IntegrateError::ProbablyStiff {
            t,
            detail: format!(
                "step budget of {} steps used up; Hairer's stiffness test fired at t = {ts}",
                stats.n_steps()
            ),
        },
        None => IntegrateError::TooManySteps {
            t,
            n: stats.n_steps(),
        },
    }
}

/// Take one accepted step of `m` towards `t_stop` (see the module doc).
///
/// # Errors
/// [`IntegrateError::StepSizeTooSmall`] (with the time), the error-test
/// failures of [`record_rejection`], and the method's own errors.
pub fn advance<M: StepAttempt + ?Sized>(
    m: &mut M,
    p: &mut dyn OdeProblem,
    t_stop: f64,
    ctx: &mut StepContext,
) -> Result<(), IntegrateError> {
    let opts = ctx.opts;
    let adaptive = opts.fixed_step.is_none();
    let mut rejected_in_a_row = 0u32;
    loop {
        let t = m.current_t();
        // the budget counts attempts, rejected ones too: none beyond it
        if ctx.stats.n_steps() >= opts.max_steps {
            return Err(budget_used_up(t, ctx.stats));
        }
        let h_ctrl = m.proposed_h().min(opts.h_max);
        let (h, trimmed) = step_towards(h_ctrl, t, t_stop, adaptive);
        if adaptive && (h < opts.h_min || h_ctrl < resolution_floor(t)) {
            return Err(IntegrateError::StepSizeTooSmall { t, h });
        }
        let err = match m.attempt(p, h, ctx)? {
            Trial::Unchecked => {
                ctx.stats.n_accept += 1;
                m.commit(p, h, ctx)?;
                return Ok(());
            }
            Trial::Repeat => continue,
            Trial::Estimated(err) if err.is_nan() => f64::INFINITY,
            Trial::Estimated(err) => err,
            Trial::Failed { factor } => {
                if !adaptive {
                    return Err(IntegrateError::StepSizeTooSmall { t, h });
                }
                // counted as a rejection (a Newton failure, an overflow)
                let floor = resolution_floor(t);
                if h <= floor {
                    return Err(IntegrateError::StepSizeTooSmall { t, h });
                }
                record_rejection(ctx.stats, &mut rejected_in_a_row, t)?;
                m.set_h((h * factor).max(floor));
                continue;
            }
        };
        if !adaptive {
            ctx.stats.n_accept += 1;
            m.commit(p, h, ctx)?;
            return Ok(());
        }
        let passes = m.passes(err, h);
        let fac = m.factor(err, h, passes);
        if passes {
            ctx.stats.n_accept += 1;
            m.loop_state().since_crossing += 1;
            m.commit(p, h, ctx)?;
            // the accepted step's error estimate, in units of the tolerance
            if !m.sums_accepted_error() {
                ctx.stats.accumulated_error += err;
            }
            // no growth right after a rejection (Hairer)
            let fac = if rejected_in_a_row > 0 {
                fac.min(1.0)
            } else {
                fac
            };
            // after a step trimmed to t_stop, keep the controller's larger
            // size; never below what the arithmetic resolves (a smaller
            // step would fail or cross a discontinuity)
            let h_next = if trimmed && fac >= 1.0 && m.resumes_after_trim() {
                h_ctrl.max(h * fac)
            } else {
                h * fac
            };
            m.set_h(h_next.max(resolution_floor(m.current_t())));
            return Ok(());
        }
        let since = m.loop_state().since_crossing;
        match after_rejection(h, h * fac.min(1.0), t, opts.h_min, since) {
            AfterRejection::Retry(h_next) => {
                m.set_h(h_next);
                m.rejected(p, h, ctx)?;
                record_rejection(ctx.stats, &mut rejected_in_a_row, t)?;
            }
            AfterRejection::Cross => {
                ctx.stats.n_accept += 1;
                m.commit(p, h, ctx)?;
                m.loop_state().since_crossing = 0;
                ctx.stats.n_restart += 1;
                return m.restart_here(p, ctx);
            }
            AfterRejection::Underflow => {
                return Err(IntegrateError::StepSizeTooSmall { t, h });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::stiff_budget_forecast;
    use crate::stats::Stats;

    /// A run `since` steps after its stiffness test fired at t = 1.
    fn stiff_stats(since: u64) -> Stats {
        Stats {
            n_accept: since,
            stiffness_detected_at: Some(1.0),
            ..Stats::default()
        }
    }

    #[test]
    fn a_run_whose_pace_would_spend_twice_its_budget_is_stopped() {
        // 2000 steps for 1e-3 s: 2e6 more to t = 2, budget 1e5
        let e = stiff_budget_forecast(1.001, 2.0, &stiff_stats(2000), 100_000);
        let msg = e.expect("stopped").to_string();
        assert!(
            msg.contains("stopped early") && msg.contains("2.0e6"),
            "{msg}"
        );
    }

    #[test]
    fn a_run_within_its_budget_or_too_young_to_judge_goes_on() {
        // the same pace, a budget of 1e7: within it
        assert!(stiff_budget_forecast(1.001, 2.0, &stiff_stats(2000), 10_000_000).is_none());
        // a short stiff transient: 2000 steps took it to t = 1.9
        assert!(stiff_budget_forecast(1.9, 2.0, &stiff_stats(2000), 10_000).is_none());
        // too few steps since the test fired to judge a pace
        assert!(stiff_budget_forecast(1.0001, 2.0, &stiff_stats(999), 1000).is_none());
        // no stiffness detected: never
        let plain = Stats {
            n_accept: 1_000_000,
            ..Stats::default()
        };
        assert!(stiff_budget_forecast(1e-6, 2.0, &plain, 1_000_000).is_none());
    }
}
