//! # jounce-mechanics: the runtime mechanical system
//!
//! Builds a runtime system from a validated model and evaluates the mass
//! matrix, generalized forces, constraints Φ, their Jacobian Φ_q, Φ_t and
//! the acceleration right-hand side γ. Planar now, spatial later: the
//! layers above see only [`MechanicalSystem`].
//!
//! Principal items:
//! * [`MechanicalSystem`] — the interface formulations code against.
//! * [`PlanarSystem`] — planar body coordinates (x, y, θ per body), built by
//!   [`PlanarSystem::from_model`]; derivatives by automatic differentiation.
//! * [`assemble`] / [`Assembly`] — consistent initial positions and
//!   velocities, degrees of freedom, redundant and singular constraints.
//! * [`MechanicsError`], [`AssemblyError`] — structured errors naming elements.
//!
//! Element equations, one file each: [`revolute`], [`translational`],
//! [`rigid`], [`distance`], [`driver`], [`spring_damper`],
//! [`rotational_spring`], [`point_force`] (gravity in [`planar`]).

pub mod assembly;
pub(crate) mod constraints;
pub mod distance;
pub mod driver;
pub mod error;
pub(crate) mod forces;
pub mod kinematics;
pub mod planar;
pub mod point_force;
pub mod revolute;
pub mod rigid;
pub mod rotational_spring;
pub mod spring_damper;
pub mod system;
pub mod translational;

pub use assembly::{assemble, Assembly, AssemblyError};
pub use error::MechanicsError;
pub use planar::PlanarSystem;
pub use system::MechanicalSystem;
