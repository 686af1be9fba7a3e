//! Errors of setting up a formulation.

use thiserror::Error;

/// A formulation cannot be built for this system.
#[derive(Debug, Clone, Error, PartialEq)]
#[non_exhaustive]
pub enum FormulationError {
    /// The formulation needs a regular mass matrix and M is singular.
    #[error(
        "formulation '{formulation}' needs a regular mass matrix, but M is singular ({detail})"
    )]
    SingularMass {
        /// Formulation name.
        formulation: String,
        /// Which coordinates have no inertia.
        detail: String,
    },
    /// The constraint Jacobian lost rank.
    #[error("singular constraint Jacobian: {0}")]
    SingularJacobian(String),
    /// Bad parameter.
    #[error("formulation '{formulation}': {detail}")]
    BadParameter {
        /// Formulation name.
        formulation: String,
        /// What is wrong.
        detail: String,
    },
    /// Unknown formulation.
    #[error(
        "unknown formulation '{0}'; known: augmented, partitioning, projection, penalty, index3"
    )]
    Unknown(String),
}
