//! Errors of evaluation and of integration.

use thiserror::Error;

/// A problem could not be evaluated at the given point.
#[derive(Debug, Clone, Error, PartialEq)]
#[non_exhaustive]
pub enum EvalError {
    /// A non-finite value (NaN or ∞) came out of an evaluation.
    #[error("non-finite value in {what} at t = {t}")]
    NonFinite {
        /// What was being evaluated.
        what: String,
        /// Time of the evaluation.
        t: f64,
    },
    /// A matrix that must be regular was singular.
    #[error("singular {what} at t = {t}{}", detail_suffix(.detail))]
    Singular {
        /// Which matrix.
        what: String,
        /// Time of the evaluation.
        t: f64,
        /// Which elements are involved, if known.
        detail: String,
    },
    /// An inner iteration (e.g. dependent coordinates) did not converge.
    #[error("{what} did not converge at t = {t}: {detail}")]
    NoConvergence {
        /// Which iteration.
        what: String,
        /// Time of the evaluation.
        t: f64,
        /// Residual or other detail.
        detail: String,
    },
    /// The solution went wrong: a check on it (energy balance, constraint
    /// drift) failed ([`EvalError::StateNotFinite`] when it became
    /// non-finite). Not a failure to
    /// evaluate, but a sign that the numbers computed so far are wrong.
    #[error("solution diverged at t = {t}: {cause}")]
    Diverged {
        /// Time at which it was detected.
        t: f64,
        /// What was seen.
        cause: String,
    },
    /// A step produced a state with a non-finite component: the solution
    /// blew up (a fixed step beyond the stability limit, or an unstable
    /// model or method).
    #[error(
        "solution diverged at t = {t}: component {component} of the state became {value} in \
         the step from t = {t_prev} (h = {h:e})"
    )]
    StateNotFinite {
        /// End of the step.
        t: f64,
        /// Index of the first non-finite component of the state.
        component: usize,
        /// Its value (NaN or ±∞).
        value: f64,
        /// Start of the step.
        t_prev: f64,
        /// The step's length.
        h: f64,
    },
    /// Any other failure, described.
    #[error("{0}")]
    Other(String),
}

fn detail_suffix(d: &str) -> String {
    if d.is_empty() {
        String::new()
    } else {
        format!(" ({d})")
    }
}

/// Why an integration stopped before its end time.
#[derive(Debug, Clone, Error, PartialEq)]
#[non_exhaustive]
pub enum IntegrateError {
    /// The step size fell below the smallest allowed value.
    #[error("step size underflow at t = {t}: h = {h:e} is below the minimum")]
    StepSizeTooSmall {
        /// Time at which it happened.
        t: f64,
        /// The step size that was too small.
        h: f64,
    },
    /// The step budget ([`crate::SolverOptions::max_steps`]) was used up
    /// before t_end. The budget is never exceeded: the driver stops before
    /// a step that would go beyond it. Why it ran out (a budget set too
    /// low, stiffness, a low-order method at a tight tolerance) is for the
    /// caller to diagnose from the counters and the method.
    #[error("step budget used up: {n} steps (accepted and rejected) by t = {t}")]
    TooManySteps {
        /// Time reached.
        t: f64,
        /// Steps taken.
        n: u64,
    },
    /// An explicit method detected stiffness.
    #[error("problem appears stiff at t = {t} ({detail}); use an implicit method")]
    ProbablyStiff {
        /// Time at which stiffness was detected.
        t: f64,
        /// How it was detected.
        detail: String,
    },
    /// Newton's method failed repeatedly even with step reduction.
    #[error("Newton iteration failed at t = {t} with h = {h:e} after {iters} iterations")]
    NewtonFailed {
        /// Time.
        t: f64,
        /// Last step size tried.
        h: f64,
        /// Iterations of the last attempt.
        iters: u32,
    },
    /// Too many consecutive error-test failures.
    #[error("{n} consecutive error-test failures at t = {t}")]
    ErrorTestFailures {
        /// Time.
        t: f64,
        /// Failures in a row.
        n: u32,
    },
    /// The problem itself failed to evaluate.
    #[error("{source}")]
    Eval {
        /// The evaluation error.
        #[from]
        source: EvalError,
    },
    /// The method cannot integrate this problem or these options.
    #[error("method {method}: {detail}")]
    Unsupported {
        /// Method name.
        method: String,
        /// What is missing.
        detail: String,
    },
    /// A method name or parameter was not recognised.
    #[error("{0}")]
    BadMethod(String),
}
