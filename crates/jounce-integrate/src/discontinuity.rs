//! Crossing a discontinuity of f that nobody announced.
//!
//! When f(t, y) jumps at an unknown t* (a step force evaluated from t, a
//! switch), every step across t* fails the error test: its local error is
//! about h_after · |Δf| (h_after = the part of the step beyond t*), which
//! does not shrink like h^{p+1}. The rejected steps shrink until they end
//! short of t*, the accepted ones creep up to it, and the step that
//! finally crosses can only pass the test once h_after is below
//! tol/|Δf|: with an absolute tolerance of 1e-9 on a velocity and a jump
//! of 1e7 in its derivative that is 1e-16 s, below the spacing of the
//! floating-point numbers near t* = 2 (4.4e-16). Codes then fail with a
//! "step size underflow" (radau5.f, scipy) or pass by the luck of a step
//! that ends exactly on t* (CVODE).
//!
//! The way out is the one of Gear & Østerby ("Solving ordinary
//! differential equations with discontinuities", ACM TOMS 10, 1984,
//! 23–44): a step that fails the error test at the smallest step the
//! arithmetic resolves at t ([`resolution_floor`]) cannot be failing
//! because of the smooth truncation error, which at that size is below the
//! rounding error, so a discontinuity lies inside it. It is accepted (the
//! error it commits is that of placing the jump within one resolvable step
//! of its true time, ≤ h_floor |Δf|) and the method restarts there, as at
//! an announced breakpoint, with its history dropped. A second crossing
//! within [`MIN_STEPS_BETWEEN_CROSSINGS`] accepted steps is not a jump but
//! a singularity (a solution that blows up), and is reported as a step-size
//! underflow.

/// Accepted steps that must separate two crossings (see the module doc).
pub const MIN_STEPS_BETWEEN_CROSSINGS: u64 = 5;

/// The smallest step the arithmetic resolves at time t: 10 ε |t|, below
/// which radau5.f stops ("step size too small": 0.1 |h| ≤ uround |t|;
/// Hairer & Wanner, Solving ODEs II, radau5.f). At t = 0 it is the
/// smallest normal number.
pub fn resolution_floor(t: f64) -> f64 {
    (10.0 * f64::EPSILON * t.abs()).max(f64::MIN_POSITIVE)
}

/// The smallest step size allowed at t: the larger of the user's h_min
/// and [`resolution_floor`].
pub fn min_step(h_min: f64, t: f64) -> f64 {
    h_min.max(resolution_floor(t))
}

/// What to do after the error test rejected a step of size `h_failed` at
/// time `t`, when the method proposes `h_proposed` for the next attempt.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AfterRejection {
    /// Try again with this step (never below the minimum step).
    Retry(f64),
    /// The step already had the smallest resolvable size: accept it,
    /// it crosses a discontinuity, and restart the method after it.
    Cross,
    /// The step is below the user's minimum, or a second crossing follows
    /// too closely: give up with a step-size underflow.
    Underflow,
}

/// Decide after a rejected step (see the module doc). `accepted_since` is
/// the number of accepted steps since the last crossing (or since the
/// start), `h_min` the user's minimum step size.
pub fn after_rejection(
    h_failed: f64,
    h_proposed: f64,
    t: f64,
    h_min: f64,
    accepted_since: u64,
) -> AfterRejection {
    let floor = resolution_floor(t);
    let h_lo = h_min.max(floor);
    if h_failed > h_lo * (1.0 + 1e-12) {
        return AfterRejection::Retry(h_proposed.max(h_lo));
    }
    // at the minimum: a crossing is allowed only when the user's minimum is
    // not above the resolution (a larger h_min asks for an underflow error)
    if h_min <= floor && accepted_since >= MIN_STEPS_BETWEEN_CROSSINGS {
        AfterRejection::Cross
    } else {
        AfterRejection::Underflow
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_scales_with_t() {
        assert_eq!(resolution_floor(2.0), 20.0 * f64::EPSILON);
        assert_eq!(resolution_floor(0.0), f64::MIN_POSITIVE);
        assert_eq!(min_step(1e-3, 2.0), 1e-3);
    }

    #[test]
    fn rejections_retry_then_cross_then_underflow() {
        let f = resolution_floor(2.0);
        // far above the floor: the proposal
        assert_eq!(
            after_rejection(1e-3, 1e-4, 2.0, 0.0, 10),
            AfterRejection::Retry(1e-4)
        );
        // a proposal below the floor is raised to it
        assert_eq!(
            after_rejection(1e-14, 1e-17, 2.0, 0.0, 10),
            AfterRejection::Retry(f)
        );
        // failing at the floor crosses
        assert_eq!(
            after_rejection(f, 0.1 * f, 2.0, 0.0, 10),
            AfterRejection::Cross
        );
        // unless a crossing was just made, or h_min asks for more
        assert_eq!(
            after_rejection(f, 0.1 * f, 2.0, 0.0, 2),
            AfterRejection::Underflow
        );
        assert_eq!(
            after_rejection(1e-10, 1e-11, 2.0, 1e-10, 10),
            AfterRejection::Underflow
        );
    }
}
