//! Spatial multibody systems: rigid bodies in 3-D in reference-point
//! coordinates with Euler parameters (7 positions and 6 velocities per
//! body), their joints and force elements, and [`SpatialSystem`], the
//! [`crate::MechanicalSystem`] they form.
//!
//! One concept per file: [`quaternion`] (Euler-parameter algebra and the
//! exponential map), [`body`] (coordinates, pose, retraction), one file per
//! joint ([`spherical`], [`revolute`], [`universal`], [`cylindrical`],
//! [`prismatic`], [`fixed`], [`distance`]), [`driver`] (revolute and
//! prismatic drivers), [`contact`] (sphere-plane and sphere-sphere contact), [`stick_slip`]
//! (their stick–slip friction rows), [`forces`] (weight, gyroscopic moment, loads,
//! spring-dampers) and [`system`] (the contract and exact derivatives).

pub mod body;
pub mod contact;
pub mod cylindrical;
pub mod distance;
pub mod driver;
pub mod fixed;
pub mod forces;
pub mod point_on_line;
pub mod prismatic;
pub mod quaternion;
pub mod revolute;
pub mod spherical;
pub mod stick_slip;
pub mod system;
pub mod universal;

pub use system::SpatialSystem;

#[cfg(test)]
mod contact_tests;
#[cfg(test)]
mod drive_tests;
#[cfg(test)]
mod force_tests;
#[cfg(test)]
mod sparsity_tests;
#[cfg(test)]
mod stick_slip_tests;
#[cfg(test)]
mod tests;
