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
    /// A file could not be written.
    #[error("{0}")]
    Io(#[from] jounce_io::IoError),
    /// The integration failed; the rows up to `failure.t` and the summary
    /// were written.
    #[error("{model}: integration failed: {failure}")]
    Integration {
        /// Model file.
        model: String,
        /// What failed and when.
        failure: jounce_integrate::SolveFailure,
        /// The summary that was written.
        summary: Box<jounce_io::RunSummary>,
    },
}
