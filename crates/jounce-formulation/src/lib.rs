//! # jounce-formulation: equations of motion an integrator can solve
//!
//! Turns a [`jounce_mechanics::MechanicalSystem`] into an
//! [`jounce_integrate::OdeProblem`]. Each formulation is its own type;
//! it must not know whether the system is planar or spatial, nor which
//! integrator will run it.

pub mod error;
pub mod formulation;

pub use error::FormulationError;
pub use formulation::Formulation;
