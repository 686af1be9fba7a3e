//! # jounce-mechanics: the runtime mechanical system
//!
//! Builds a runtime system from a validated model and evaluates the mass
//! matrix, generalized forces, constraints Φ, their Jacobian Φ_q, Φ_t and
//! the acceleration right-hand side γ, planar or spatial: the layers above
//! see only [`MechanicalSystem`].
//!
//! Principal items:
//! * [`MechanicalSystem`] — the interface formulations code against:
//!   n_q positions and n_v velocities (different once spatial bodies carry
//!   quaternions), evaluated into a caller-owned [`SystemData`] (the
//!   model/data split) by [`MechanicalSystem::evaluate`], which fills a
//!   set of [`Quantities`] in one pass over the elements.
//! * [`PlanarSystem`] — planar body coordinates (x, y, θ per body), built by
//!   [`PlanarSystem::from_model`]; derivatives by automatic differentiation.
//! * [`SpatialSystem`] — spatial bodies in reference-point coordinates
//!   with Euler parameters (7 positions, 6 velocities per body, ω in the
//!   body frame), built by [`SpatialSystem::from_model`] from a
//!   `[model] space = "spatial"` model ([`spatial`]); Φ_q is the velocity
//!   Jacobian (n_c × n_v) and q moves by
//!   [`MechanicalSystem::integrate_position`] (the exponential map).
//! * Optional capabilities ([`capabilities`]): exact second derivatives
//!   ([`SecondDerivatives`]; nested dual numbers in [`PlanarSystem`],
//!   central differences where absent), sparsity patterns ([`Sparsity`]),
//!   applied loads ([`AppliedLoads`]), switching functions and impacts
//!   ([`SwitchingFunctions`]), friction unknowns ([`FrictionRows`]) and
//!   joint coordinates, each reached through one accessor of
//!   [`MechanicalSystem`] with no default; callers ask through
//!   [`SystemQueries`], which decides once what an absent one means.
//! * [`JointCoordinateSystem`] / [`PlanarJointSystem`] — the same system in
//!   joint (relative) coordinates of its kinematic tree, with the O(N)
//!   articulated-body algorithm and cut joints as closure constraints
//!   ([`joint_coordinates`]; [`MechanicalSystem::joint_coordinates`]).
//! * [`SparseMatrix`] — Φ_q in [`SystemData`] is stored in a fixed
//!   sparsity pattern from the element connectivity
//!   ([`Sparsity::jacobian_pattern`]), values refilled
//!   per evaluation in O(nnz); [`SparseLdlt`] and [`GramFactor`] factor
//!   Φ_q W Φ_qᵀ (the KKT Schur complement, assembly's minimum-norm steps).
//! * [`assemble`] / [`Assembly`] — consistent initial positions and
//!   velocities, degrees of freedom, redundant and singular constraints.
//! * Redundant constraints: [`IndependentRows`] presents only the
//!   independent rows to formulations that need a Φ_q of full row rank,
//!   [`MinimumNormReactions`] reports the (non-unique) multipliers as the
//!   minimum-norm ones over all rows, [`redundant_consistency()`] tells
//!   whether the redundant rows hold wherever the others hold.
//! * [`MechanicsError`], [`AssemblyError`] — structured errors naming elements.
//!
//! Element equations, one file each: [`revolute`], [`translational`],
//! [`rigid`], [`distance`], [`driver`], [`spring_damper`],
//! [`rotational_spring`], [`point_force`], [`contact`], [`beam`] (gravity
//! in [`planar`]).
//!
//! ```text
//! Model ──from_model──▶ PlanarSystem ──(MechanicalSystem)──▶ formulations
//!                            │
//!                            └──assemble──▶ Assembly { q, v, dof, redundant, … }
//! ```
//!
//! # Example
//! A pendulum hinged at the origin, assembled from a guess that violates the
//! hinge, then its constraint Jacobian:
//! ```
//! use jounce_mechanics::{assemble, MechanicalSystem, PlanarSystem};
//! use jounce_model::{Attachment, Body, BodyRef, Joint, JointKind, Model, Settings};
//! use nalgebra::DMatrix;
//!
//! let bob = Body {
//!     name: "bob".into(), mass: 1.0, inertia: 0.01,
//!     position: [1.0, 0.0], angle: 0.0, velocity: [0.0, 0.0], angular_velocity: 0.0,
//!     points: vec![],
//! };
//! let hinge = Joint {
//!     name: "hinge".into(),
//!     kind: JointKind::Revolute {
//!         a: Attachment { body: BodyRef::Ground, point: [0.0, 0.0] },
//!         b: Attachment { body: BodyRef::Body(0), point: [-1.0, 0.0] },
//!     },
//!     friction: None,
//! };
//! let model = Model {
//!     name: "pendulum".into(), source: "<doc>".into(), gravity: [0.0, -9.81],
//!     bodies: vec![bob], joints: vec![hinge], drivers: vec![], forces: vec![],
//!     settings: Settings::default(),
//!     spatial: None,
//! };
//! let sys = PlanarSystem::from_model(&model)?;
//! let a = assemble(&sys, 0.0, &[1.1, 0.2, 0.1], &[0.0, 1.0, 0.0], 1e-12)?;
//! assert_eq!((a.dof, a.redundant.len()), (1, 0));
//! assert!(a.position_residual <= 1e-12);
//!
//! let mut jac = DMatrix::zeros(sys.nc(), sys.nq());
//! sys.constraint_jacobian(0.0, &a.q, &mut jac);
//! assert_eq!(sys.constraint_label(1), "joint 'hinge' (y)");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod assembly;
pub mod beam;
pub mod capabilities;
pub(crate) mod constraints;
pub mod contact;
pub mod data;
pub mod distance;
pub mod driver;
pub mod error;
pub mod finite_differences;
pub(crate) mod forces;
pub mod friction;
pub mod gram;
pub mod independent_rows;
pub mod joint_coordinates;
pub mod kinematics;
pub mod minimum_norm_reactions;
pub mod planar;
pub mod point_force;
pub mod redundant_consistency;
pub mod revolute;
pub mod rigid;
pub mod rotational_spring;
pub mod sparse;
// the sparse LDLᵀ lives in jounce-sparse; its old path is kept
pub use jounce_sparse::sparse_ldlt;
pub mod spatial;
pub mod spring_damper;
pub mod system;
#[doc(hidden)]
pub mod test_system;
pub mod translational;

pub use assembly::{assemble, Assembly, AssemblyError};
pub use capabilities::{
    evaluate_each, AppliedLoads, FrictionRows, SecondDerivatives, Sparsity, SwitchingFunctions,
    SystemQueries,
};
pub use data::{Quantities, SystemData};
pub use error::MechanicsError;
pub use gram::GramFactor;
pub use independent_rows::IndependentRows;
pub use joint_coordinates::{
    JointCoordinateSystem, JointData, JointSpaceError, PlanarJointSystem, SpatialJointSystem,
};
pub use jounce_model::{Friction, FrictionLaw};
pub use jounce_sparse::SparseLdlt;
pub use minimum_norm_reactions::MinimumNormReactions;
pub use planar::PlanarSystem;
pub use redundant_consistency::{
    diagnose_inconsistent_redundancy, redundant_consistency, RedundantRow,
};
pub use sparse::SparseMatrix;
pub use spatial::SpatialSystem;
pub use system::{FrictionRow, MechanicalSystem, NormalForce, Structure};
