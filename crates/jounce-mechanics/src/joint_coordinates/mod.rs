//! # Joint (relative) coordinates
//!
//! A planar system described by one coordinate per joint of a kinematic
//! tree (angles of revolute joints, slides of translational joints), the
//! remaining joints and the drivers cut into closure constraints, with the
//! O(N) recursive algorithms of Featherstone (*Rigid Body Dynamics
//! Algorithms*, Springer 2008): forward kinematics, the articulated-body
//! algorithm (forward dynamics), recursive Newton–Euler (inverse dynamics,
//! bias forces) and the composite-rigid-body algorithm (mass matrix); see
//! also jalon-bayo ch. on relative coordinates and termeer 1996.
//!
//! One concept per file:
//! * [`system`] — [`JointCoordinateSystem`], the interface the
//!   formulations see (not planar), its workspace [`JointData`] and errors;
//! * [`tree`] — the spanning tree and the cut joints;
//! * [`spatial`] — planar spatial vectors at the world origin;
//! * [`kinematics`] — forward kinematics of one node and its inverse;
//! * `aba` — the articulated-body, Newton–Euler and composite-rigid-body
//!   recursions;
//! * `joint_forces` — rotational springs across tree joints as
//!   generalized forces of their coordinates;
//! * `small_tree` — forward dynamics of the smallest trees by the
//!   composite-rigid-body algorithm and an LᵀDL solve (fewer operations
//!   than the articulated-body algorithm there);
//! * `closure_dynamics` — the KKT system in joint coordinates for closed
//!   loops and drivers;
//! * [`planar_joint`] — [`PlanarJointSystem`], the planar implementation;
//! * `work` — the per-scalar buffers of the recursions;
//! * [`spatial_joint`] — [`SpatialJointSystem`], spatial models in joint
//!   coordinates: the same recursions in 6-D spatial vectors;
//! * `spatial_work` — its buffers.
//!
//! Drivers are closure constraints (not rheonomic coordinates): a driven
//! tree joint keeps its coordinate and gains the driver's equation, so that
//! every driver kind (joint or distance) is treated alike and the driving
//! force is a multiplier.

mod aba;
mod closure_dynamics;
mod joint_forces;
pub mod kinematics;
pub mod planar_joint;
mod small_tree;
pub mod spatial;
pub mod spatial_joint;
mod spatial_work;
pub mod system;
pub mod tree;
mod work;

pub use planar_joint::PlanarJointSystem;
pub use spatial_joint::SpatialJointSystem;
pub use system::{JointCoordinateSystem, JointData, JointSpaceError};
