//! # jounce-mechanics: the runtime mechanical system
//!
//! Builds a runtime system from a validated model and evaluates the mass
//! matrix, generalized forces, constraints Φ, their Jacobian Φ_q, Φ_t and
//! the acceleration right-hand side γ. Planar now, spatial later: the
//! layers above see only [`MechanicalSystem`].

pub mod system;

pub use system::MechanicalSystem;
