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
//! | `index3` ([`DaeFormulation::index3`]) | [q; v; λ] | exact at every step (Newton of the integrator) | yes, if KKT regular |
//! | `ggl` ([`DaeFormulation::ggl`]) | [q; v; λ; μ] | positions and velocities exact at every step | yes, if KKT regular |
//! | [`Odae`] | [q; v] | acceleration level in f, positions and velocities exact at every step (least squares) | yes, if KKT regular |
//! | [`Joint`] | [q; v] of joint coordinates | tree joints exact by construction; cut joints and drivers at acceleration level | yes, if every joint sees inertia |
//!
//! The first four are ODEs y' = f(t, y) that any method integrates (the
//! [q; v] ones also offer a second-order form for structural methods).
//! `index3` is the index-3 DAE itself, which the structural methods that
//! accept [`jounce_integrate::ProblemForm::ConstrainedSecondOrder`]
//! (newmark, hht, generalized_alpha, midpoint_rule) and the DAE methods
//! (bdf, radau5: [`jounce_integrate::ProblemForm::Dae`]) integrate; `ggl`,
//! the stabilised index-2 form of Gear, Gupta & Leimkuhler, only the DAE
//! methods. `odae` is augmented's ODE with Φ = 0 and Φ_q v + Φ_t = 0 as
//! invariants, the overdetermined DAE of Führer & Leimkuhler, which the
//! BDFs (bdf, ndf: [`jounce_integrate::ProblemForm::Overdetermined`])
//! solve in the least-squares sense with the invariants met at every
//! step. [`provides`] lists the forms of each formulation by name.
//!
//! **Positions that are not velocities** (spatial bodies: n_q = 7,
//! n_v = 6 per body, unit quaternions). Every formulation but `joint`
//! (which integrates its own joint coordinates) takes them: the ODE and
//! DAE forms integrate q' = T(q) v, `odae` adds |p|² − 1 = 0 to its
//! invariants, and `partitioning` and `state_space` are then a
//! [`ManifoldPartitioning`] (positions partitioned on [Φ; |p|² − 1],
//! velocities on Φ_v).
//!
//! **Jacobians.** Every formulation overrides
//! [`jounce_integrate::OdeProblem::jacobian`] with the Jacobian of its own
//! equations, built from the system's derivatives (∂Q/∂q, ∂Q/∂v,
//! ∂(Φ_qᵀλ)/∂q, ∂γ/∂q, ∂γ/∂v, ∂(Φ_q a)/∂q, Φ_qt, ∂(M a)/∂q) and the
//! factorisation the right-hand side already uses: the KKT-based forms
//! differentiate the KKT system, the penalty form its residual, the
//! partitioning form chains through q_d(q_i) and v_d(q_i, v_i). Penalty
//! and augmented also give exact structural tangents (K, C), index3 and
//! ggl the blocks of their DAE iteration matrices. They are
//! reported exact (`has_exact_jacobian`, `has_exact_tangent`) when the
//! system's second derivatives are
//! ([`jounce_mechanics::SystemQueries::has_exact_second_derivatives`],
//! true for [`jounce_mechanics::PlanarSystem`]); otherwise integrators keep
//! their finite differences of the whole right-hand side.
//!
//! **Linear algebra.** The KKT-based forms solve [M Φ_qᵀ; Φ_q 0] as
//! [`LinearSolver`] says (`settings.linear_solver`): under `auto`, the
//! sparse Schur complement Φ_q M⁻¹ Φ_qᵀ (sparse LDLᵀ, ordering and
//! symbolic analysis once, O(N) per right-hand side on a chain) when M is
//! diagonal and regular, a reduced dense system of the multipliers and
//! the massless coordinates for small systems with point masses, and the
//! full-pivot LU of the whole matrix otherwise, which also names redundant
//! constraints whenever another path meets a vanishing pivot.
//!
//! [`build`] makes any of them by name from [`FormulationSettings`];
//! `examples` (with the `testkit` feature) holds small hand-written systems
//! for tests.

mod acceleration_jacobian;
pub mod augmented;
pub mod augmented_lagrangian;
pub mod dae_formulation;
pub mod error;
/// Hand-written example systems for tests and benchmarks: compiled for this
/// crate's tests and, with the `testkit` feature, for other crates'; not
/// part of the library's API.
#[cfg(any(test, feature = "testkit"))]
pub mod examples;
pub mod factory;
pub mod formulation;
pub mod friction;
pub mod joint;
mod kkt;
pub mod linear_solver;
pub mod lu;
pub mod manifold_partitioning;
pub mod odae;
pub mod partitioning;
pub mod penalty;
pub mod projection;
mod reduced_kkt;
mod sparse_partition;
pub mod state_space;
pub mod switching;

pub use augmented::Augmented;
pub use augmented_lagrangian::AugmentedLagrangian;
pub use dae_formulation::{ConstrainedEquations, DaeFormulation};
pub use error::FormulationError;
pub use factory::{
    admits, build, build_kind, forms, help, provides, FormulationKind, FormulationSettings, NAMES,
};
pub use formulation::Formulation;
pub use friction::{FrictionAugmented, FrictionMode};
pub use joint::Joint;
pub use linear_solver::LinearSolver;
pub use manifold_partitioning::ManifoldPartitioning;
pub use odae::Odae;
pub use partitioning::Partitioning;
pub use penalty::Penalty;
pub use projection::Projection;
pub use state_space::StateSpace;
pub use switching::Switched;
