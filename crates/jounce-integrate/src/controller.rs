//! Step-size controllers: one shared component, used by every adaptive
//! method. Methods only produce a candidate step and an error norm; the
//! controller proposes the next step size.
//!
//! # References
//! - Hairer, Nørsett, Wanner, *Solving ODEs I*, 2nd ed., Section II.4, eq. (4.13) (elementary controller).
//! - Gustafsson, Lundh, Söderlind (1988); Hairer–Wanner II, Section IV.8, eq. (8.21) (PI controller, "Lund stabilisation").
//! - Gil, Sanfelice, Nikravesh, eqs. 31–33 and the EPS/EPUS discussion (error per step / per unit step).

/// Whether the tolerance bounds the error per step (EPS) or per unit step
/// (EPUS, error divided by h). The structural methods on the index-3
/// equations replace EPS by a tolerance-proportional per-step tolerance
/// (`structural/driver.rs`, "Control law") and take EPUS when asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ErrorPer {
    /// Error per step: ‖e‖ ≤ tol.
    #[default]
    Step,
    /// Error per unit step: ‖e‖ / h ≤ tol.
    UnitStep,
}

/// Which control law proposes the next step.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum ControllerKind {
    /// h_new = h · fac · err^(−1/k), k = q + 1 (EPS) or q (EPUS), q the lower order of the pair.
    #[default]
    Elementary,
    /// h_new = h · fac · err^(−α) · err_prev^(β), α = 0.7/k − 0.75 β, β = 0.4/k (Hairer's dopri5 values: β = 0.04 for k = 5).
    PI,
}

/// A step-size controller: safety factor, growth limits and the control law.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepController {
    /// Control law.
    pub kind: ControllerKind,
    /// EPS or EPUS.
    pub per: ErrorPer,
    /// Safety factor (0.9 as in dopri5.f).
    pub safety: f64,
    /// Smallest factor h_new / h.
    pub fac_min: f64,
    /// Largest factor h_new / h.
    pub fac_max: f64,
    /// Error norm of the previous accepted step (PI memory).
    err_prev: f64,
}

impl Default for StepController {
    fn default() -> Self {
        Self::new(ControllerKind::Elementary, ErrorPer::Step)
    }
}

impl StepController {
    /// A controller with the usual limits: safety 0.9, factor in [0.2, 10].
    pub fn new(kind: ControllerKind, per: ErrorPer) -> Self {
        Self {
            kind,
            per,
            safety: 0.9,
            fac_min: 0.2,
            fac_max: 10.0,
            err_prev: 1e-4,
        }
    }

    /// Proposed factor h_new / h after a step of size h with error norm
    /// `err` (already divided by the tolerance, so ≤ 1 means accept) from
    /// a method pair whose lower order is `q`.
    ///
    /// With EPUS, `err` is the per-step norm and is divided by h here.
    pub fn factor(&self, err: f64, h: f64, q: u32) -> f64 {
        let e = match self.per {
            ErrorPer::Step => err,
            ErrorPer::UnitStep => err / h.abs(),
        };
        let k = match self.per {
            ErrorPer::Step => q as f64 + 1.0,
            ErrorPer::UnitStep => (q as f64).max(1.0),
        };
        let e = e.max(1e-10);
        let f = match self.kind {
            ControllerKind::Elementary => self.safety * e.powf(-1.0 / k),
            ControllerKind::PI => {
                let beta = 0.4 / k;
                let alpha = 0.7 / k - 0.75 * beta;
                self.safety * e.powf(-alpha) * self.err_prev.max(1e-10).powf(beta)
            }
        };
        f.clamp(self.fac_min, self.fac_max)
    }

    /// Whether a step with this error norm is accepted.
    pub fn accept(&self, err: f64, h: f64) -> bool {
        match self.per {
            ErrorPer::Step => err <= 1.0,
            ErrorPer::UnitStep => err / h.abs() <= 1.0,
        }
    }

    /// Record an accepted step's error norm (PI memory).
    pub fn accepted(&mut self, err: f64, h: f64) {
        self.err_prev = match self.per {
            ErrorPer::Step => err,
            ErrorPer::UnitStep => err / h.abs(),
        }
        .max(1e-4);
    }
}

/// c of [`proportional_scale`].
pub const PROPORTIONAL_SCALE: f64 = 0.1;

/// σ = c · rtol^{1/p} (c = [`PROPORTIONAL_SCALE`]): the factor by which a
/// method of order p that controls the error per step scales its
/// tolerance so that its global error becomes proportional to rtol.
/// Per-step control at a tolerance τ takes steps h ∝ τ^{1/(p+1)}, so N
/// steps of local error τ leave a global error N τ ∝ τ^{p/(p+1)}; with
/// τ = σ rtol = c rtol^{(p+1)/p} that is ∝ rtol (Stetter 1980, "Tolerance
/// proportionality in ODE codes"; Hairer, Nørsett & Wanner I, II.4;
/// Shampine, "Error estimation and control for ODEs", J. Sci. Comput. 25,
/// 2005). c is the one free constant; 0.1 is what brings the structural
/// methods, bdf and radau5 on the index-3 double pendulum within 10 rtol
/// in positions and velocities (`tests/suite/dae_convergence.rs`).
pub fn proportional_scale(rtol: f64, p: u32) -> f64 {
    PROPORTIONAL_SCALE * rtol.max(f64::EPSILON).powf(1.0 / f64::from(p.max(1)))
}

/// Consecutive error-test failures after which a step is given up.
pub const MAX_ERROR_TEST_FAILURES: u32 = 50;

/// Record a step rejected by the error test: count it in `stats`, extend
/// the run of consecutive rejections `in_a_row`, and give up with
/// [`IntegrateError::ErrorTestFailures`] (at time `t`) once the run exceeds
/// [`MAX_ERROR_TEST_FAILURES`].
///
/// # Errors
/// [`IntegrateError::ErrorTestFailures`] as above.
pub fn record_rejection(
    stats: &mut Stats,
    in_a_row: &mut u32,
    t: f64,
) -> Result<(), IntegrateError> {
    stats.n_reject += 1;
    *in_a_row += 1;
    if *in_a_row > MAX_ERROR_TEST_FAILURES {
        return Err(IntegrateError::ErrorTestFailures { t, n: *in_a_row });
    }
    Ok(())
}

/// The step to attempt from `t` towards `t_stop` (an output, breakpoint or
/// end time) when the controller proposes `h_ctrl`: lands exactly on
/// `t_stop` when the proposal reaches it (within 1e-9 h adaptive, 1e-3 h fixed, so that rounding
/// leaves no sliver step), and with `adaptive`, halves the remaining
/// interval when the proposal covers more than half of it, so that the
/// next step is not a sliver either. Returns (h, trimmed): `trimmed` says
/// the step is shorter than the proposal, which the controller should not
/// take as the new step size.
pub fn step_towards(h_ctrl: f64, t: f64, t_stop: f64, adaptive: bool) -> (f64, bool) {
    let remaining = t_stop - t;
    // fixed steps accumulate the rounding of t += h, about n ε t / h
    // relative to h after n steps (1e-5 h after 3e5 steps of 1e-7 to
    // t = 0.03): within 1e-3 h the rest is one step, not a step and a sliver
    let slack = if adaptive { 1e-9 } else { 1e-3 };
    if h_ctrl >= remaining - slack * h_ctrl {
        (remaining, true)
    } else if adaptive && h_ctrl > 0.5 * remaining {
        (0.5 * remaining, true)
    } else {
        (h_ctrl, false)
    }
}

use crate::error::IntegrateError;
use crate::stats::Stats;

#[cfg(test)]
mod tests {
    #[test]
    fn rejections_are_counted_and_a_long_run_gives_up() {
        let mut stats = crate::Stats::default();
        let mut run = 0;
        for _ in 0..super::MAX_ERROR_TEST_FAILURES {
            super::record_rejection(&mut stats, &mut run, 2.5).unwrap();
        }
        assert_eq!(stats.n_reject, 50);
        let e = super::record_rejection(&mut stats, &mut run, 2.5).unwrap_err();
        assert_eq!(
            e,
            crate::IntegrateError::ErrorTestFailures { t: 2.5, n: 51 }
        );
        assert_eq!(stats.n_reject, 51);
    }

    #[test]
    fn steps_land_on_the_stop_time_without_slivers() {
        // reaches t_stop: take exactly the rest
        assert_eq!(super::step_towards(0.3, 1.0, 1.25, true), (0.25, true));
        // rounding: within 1e-9 h counts as reaching
        let (h, _) = super::step_towards(0.1, 0.0, 0.1 + 1e-12, false);
        assert_eq!(h, 0.1 + 1e-12);
        // covers more than half the rest: split it in two (adaptive only)
        assert_eq!(super::step_towards(0.7, 0.0, 1.0, true), (0.5, true));
        assert_eq!(super::step_towards(0.7, 0.0, 1.0, false), (0.7, false));
        // far from t_stop: the proposal
        assert_eq!(super::step_towards(0.1, 0.0, 1.0, true), (0.1, false));
    }

    use super::*;

    #[test]
    fn elementary_factor_is_safety_times_error_power() {
        let c = StepController::new(ControllerKind::Elementary, ErrorPer::Step);
        // err = 2^-5 with q = 4 → factor 0.9 · 2 = 1.8
        let f = c.factor(2f64.powi(-5), 0.1, 4);
        assert!((f - 1.8).abs() < 1e-12, "{f}");
        // a huge error is limited by fac_min
        assert_eq!(c.factor(1e9, 0.1, 4), 0.2);
        assert!(!c.accept(1.5, 0.1));
        assert!(c.accept(0.5, 0.1));
    }

    #[test]
    fn per_unit_step_divides_by_h() {
        let c = StepController::new(ControllerKind::Elementary, ErrorPer::UnitStep);
        assert!(c.accept(0.05, 0.1));
        assert!(!c.accept(0.05, 0.01));
    }

    #[test]
    fn pi_controller_remembers_previous_error() {
        let mut c = StepController::new(ControllerKind::PI, ErrorPer::Step);
        let f1 = c.factor(0.5, 0.1, 4);
        c.accepted(0.01, 0.1);
        let f2 = c.factor(0.5, 0.1, 4);
        // h_new/h = fac · err^(−α) · err_prev^β: a larger previous error allows more growth
        assert!(f2 > f1, "previous error must enter the factor: {f1} {f2}");
        let beta = 0.4 / 5.0;
        assert!((f2 / f1 - (0.01f64 / 1e-4).powf(beta)).abs() < 1e-12);
    }
}
