//! # jounce-formulation: equations of motion an integrator can solve
//!
//! Turns a [`jounce_mechanics::MechanicalSystem`] into an
//! [`jounce_integrate::OdeProblem`]. Each formulation is its own type;
//! it must not know whether the system is planar or spatial, nor which
//! integrator will run it.
//!
//! | name | state y | constraints | singular M |
//! |---|---|---|---|
//! | [`Augmented`] | [q; v] | acceleration level (+ Baumgarte) | yes, if KKT regular |
//! | [`Partitioning`] | [q_i; v_i] | exact (Newton) | yes, if KKT regular |
//! | [`Projection`] | [q; v] | projected after each step | yes, if KKT regular |
//! | [`Penalty`] | [q; v] | penalty, O(1/α) | yes, if M + αΦ_qᵀΦ_q regular |
//!
//! [`build`] makes any of them by name from [`FormulationSettings`];
//! [`examples`] holds small hand-written systems for tests.

mod acceleration_jacobian;
pub mod augmented;
pub mod error;
pub mod examples;
pub mod factory;
pub mod formulation;
mod kkt;
pub mod lu;
pub mod partitioning;
pub mod penalty;
pub mod projection;

pub use augmented::Augmented;
pub use error::FormulationError;
pub use factory::{build, FormulationSettings, NAMES};
pub use formulation::Formulation;
pub use partitioning::Partitioning;
pub use penalty::Penalty;
pub use projection::Projection;
