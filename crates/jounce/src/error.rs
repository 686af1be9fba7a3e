//! Errors of a whole run, each saying what failed and where.

use thiserror::Error;

/// Why `jounce run` or `jounce check` stopped.
#[derive(Debug, Error)]
pub enum RunError {
    /// The model file is invalid.
    #[error("{0}")]
    Model(#[from] jounce_model::ModelError),
    /// The model could not be set up (system, assembly, formulation, integrator).
    #[error("{0}")]
    Setup(String),
    /// `jounce check` found the model valid but the run would fail: the
    /// report of what it found, and why.
    #[error("{reason}")]
    Check {
        /// The check's report up to the failure.
        report: String,
        /// Why the run would fail.
        reason: String,
    },
    /// A file could not be written.
    #[error("{0}")]
    Io(#[from] jounce_io::IoError),
    /// The integration failed; the rows up to `failure.t` and the summary
    /// were written.
    #[error(
        "{model}: integration failed: {}{failure}{}",
        cause_prefix(.cause),
        advice_suffix(.advice)
    )]
    Integration {
        /// Model file.
        model: String,
        /// What the mechanism did, when it explains the failure (a lock-up
        /// or a singular configuration at the last accepted step).
        cause: Option<String>,
        /// What failed and when.
        failure: jounce_integrate::SolveFailure,
        /// Why, in the user's terms, and what to do (a step budget the user
        /// set, stiffness, low order at a tight tolerance, a blow-up).
        advice: Option<String>,
        /// The summary that was written.
        summary: Box<jounce_io::RunSummary>,
    },
}

fn cause_prefix(c: &Option<String>) -> String {
    c.as_ref().map_or_else(String::new, |c| {
        format!("{c}; the integrator stopped with: ")
    })
}

fn advice_suffix(a: &Option<String>) -> String {
    a.as_ref().map_or_else(String::new, |a| format!(": {a}"))
}
