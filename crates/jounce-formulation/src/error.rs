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
        "unknown formulation '{0}'{hint}; known: {known}",
        hint = jounce_model::did_you_mean(.0, crate::factory::NAMES),
        known = crate::factory::NAMES.join(", ")
    )]
    Unknown(String),
    /// The system's positions and velocities differ in number (n_q ≠ n_v,
    /// e.g. unit quaternions), which the formulation cannot integrate yet.
    #[error(
        "formulation '{formulation}' needs as many position coordinates as velocities, \
         but this system has n_q = {nq} positions and n_v = {nv} velocities"
    )]
    PositionsNotVelocities {
        /// Formulation name.
        formulation: String,
        /// Number of positions n_q.
        nq: usize,
        /// Number of velocities n_v.
        nv: usize,
    },
}
