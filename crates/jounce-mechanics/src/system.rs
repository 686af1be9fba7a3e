//! The interface every mechanical system offers to the formulations.
//!
//! Formulations (and everything above them) see a system only through this
//! trait: positions q, velocities v, a mass matrix, applied forces,
//! constraints and their derivatives. Whether the system is planar (x, y, θ
//! per body) or spatial is not visible here.
//!
//! Positions and velocities may differ in number (n_q ≥ n_v): spatial
//! bodies carry a unit quaternion (4 numbers) for 3 angular velocities,
//! and q' = T(q) v ([`MechanicalSystem::position_derivative`]). Every
//! velocity-level quantity (M, Q, the rows of Φ_q) has n_v columns, the
//! convention of Chrono and Pinocchio: Φ_q is the Jacobian with respect to
//! the velocities, Φ' = Φ_q v + Φ_t.
//!
//! The state-dependent results of an evaluation live in a caller-owned
//! [`SystemData`] (the model/data split); [`MechanicalSystem::evaluate`]
//! fills several quantities in one pass over the elements. The single
//! quantity methods remain for one-off use (assembly, diagnostics, tests).
//!
//! Owns: the required core of the contract and the accessor of each
//! optional capability (the capability traits are in
//! [`crate::capabilities`]). Must not: give any method a default, so that
//! no implementation, wrapper or new mechanics can drop a capability by
//! forgetting it.

use nalgebra::DMatrix;

use crate::capabilities::{
    AppliedLoads, FrictionRows, SecondDerivatives, Sparsity, SwitchingFunctions,
};
use crate::data::{Quantities, SystemData};

/// What is known of a system's mass matrix, for the formulations that
/// exploit it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Structure {
    /// M does not depend on q (planar body coordinates), so that
    /// ∂(M a)/∂q = 0 in tangent matrices and M is evaluated once.
    pub mass_matrix_is_constant: bool,
    /// M is diagonal (planar body coordinates: diag(m, m, J) per body), so
    /// that M⁻¹ is elementwise and Φ_q M⁻¹ Φ_qᵀ keeps the sparsity of Φ_q.
    pub mass_matrix_is_diagonal: bool,
}

/// A constrained mechanical system
///
/// M(q) q'' = Q(t, q, q') − Φ_qᵀ λ,   Φ(t, q) = 0
///
/// with n_q = [`MechanicalSystem::nq`] positions, n_v =
/// [`MechanicalSystem::nv`] velocities and m = [`MechanicalSystem::nc`]
/// constraint equations (joints and drivers).
///
/// The contract is narrow and has **no default methods**: a required core
/// (sizes, the evaluation into a caller-owned [`SystemData`], energies,
/// labels) and one accessor per optional capability
/// ([`MechanicalSystem::second_derivatives`],
/// [`MechanicalSystem::sparsity`], [`MechanicalSystem::applied_loads`],
/// [`MechanicalSystem::switching`], [`MechanicalSystem::friction`],
/// [`MechanicalSystem::joint_coordinates`]). Every implementation, a
/// wrapper included, states each capability it has or has not; one it
/// forgets is a compile error, not a silent "none". What callers do when a
/// capability is absent (finite differences, a dense pattern, no events)
/// is decided once, in [`crate::SystemQueries`].
///
/// Evaluations are pure functions of their arguments (`&self`); they write
/// into caller-provided buffers (one [`SystemData`] per user) and do not
/// allocate.
pub trait MechanicalSystem {
    /// Number of position coordinates n_q = dim(q).
    fn nq(&self) -> usize;

    /// Number of velocity coordinates n_v = dim(v); n_q unless the
    /// positions carry redundant parameters (unit quaternions).
    fn nv(&self) -> usize;

    /// Number of constraint equations m = dim(Φ) (joints and drivers).
    fn nc(&self) -> usize;

    /// q' = T(q) v (len n_q), the kinematic map from velocities to the
    /// rate of the positions (q' = v in planar body coordinates).
    fn position_derivative(&self, q: &[f64], v: &[f64], qdot: &mut [f64]);

    /// q ⊕ δ (len n_q): the positions moved by the velocity-space
    /// increment δ (len n_v), on the configuration manifold — Pinocchio's
    /// `integrate`. q + δ in planar body coordinates; for a unit
    /// quaternion p ⊗ exp(δ_ω) normalised to |p| = 1, so that
    /// `integrate_position(q, 0)` is the projection of q onto the manifold
    /// (how formulations keep quaternions unit). Newton iterations on
    /// positions (assembly, projections) update q through it.
    fn integrate_position(&self, q: &[f64], delta: &[f64], out: &mut [f64]);

    /// δ = L(q) dq (len n_v): the velocity-space increment of a position
    /// change dq (len n_q), the left inverse of the kinematic map that
    /// vanishes off the position manifold's tangent space,
    /// L T(q) = I, L = (TᵀT)⁻¹Tᵀ (the Moore–Penrose pseudo-inverse T⁺).
    /// dq itself in planar body coordinates; for a quaternion
    /// δω' = 2 vec(p* ⊗ dp) / |p|², which is zero along the radial
    /// direction p. Since every quantity of such a system depends on p
    /// only through p/|p| (A(p/|p|)), a derivative f_v in velocity space
    /// (along q ⊕ δ) is the derivative f_v L(q) in q (Haug 1989, §9.3;
    /// the chain rule through q ⊕ δ, whose derivative at δ = 0 is T).
    fn position_increment(&self, q: &[f64], dq: &[f64], delta: &mut [f64]);

    /// ∂(T(q) v)/∂q · dq (len n_q) at fixed v: how the rate of the
    /// positions changes with them. Zero in planar body coordinates; for
    /// a quaternion ½ dp ⊗ (0, ω') (ṗ = ½ p ⊗ (0, ω') is linear in p).
    fn kinematic_map_derivative(&self, q: &[f64], v: &[f64], dq: &[f64], out: &mut [f64]);

    /// The constraints of the position manifold itself, c(q) = 0
    /// (len n_q − n_v): |p|² − 1 per unit quaternion, none when
    /// n_q = n_v; their gradient ∂c/∂q ((n_q − n_v) × n_q) into `grad`.
    /// T(q) is tangent to it (∂c/∂q T = 0: ṗ = ½ p ⊗ (0, ω') keeps
    /// |p|), so q' = T(q) v keeps c constant.
    fn manifold_constraints(&self, q: &[f64], c: &mut [f64], grad: &mut DMatrix<f64>);

    /// Workspace sized for this system, for [`MechanicalSystem::evaluate`],
    /// with Φ_q stored in its sparsity pattern if it has one
    /// ([`SystemData::for_system`] builds the plain one).
    fn data(&self) -> SystemData;

    /// Evaluate every quantity in `what` at (t, q, v) into `data`, and set
    /// `data.evaluated = what`, `data.t = t`. `v` is read only for forces,
    /// velocity constraints and γ. Systems without a one-pass evaluation
    /// delegate to [`crate::evaluate_each`] (the single-quantity methods one
    /// after another).
    fn evaluate(&self, data: &mut SystemData, t: f64, q: &[f64], v: &[f64], what: Quantities);

    /// What is known of the mass matrix (constant, diagonal).
    fn structure(&self) -> Structure;

    /// Mass matrix M(q) (n_v × n_v), symmetric, positive semi-definite.
    fn mass_matrix(&self, q: &[f64], m: &mut DMatrix<f64>);

    /// Applied generalized forces Q(t, q, v) (len n), including
    /// velocity-dependent terms (dampers, quadratic velocity terms).
    fn generalized_forces(&self, t: f64, q: &[f64], v: &[f64], f: &mut [f64]);

    /// ∂Q/∂q and ∂Q/∂v (n × n each), exact (automatic differentiation)
    /// where the system can.
    fn force_jacobians(
        &self,
        t: f64,
        q: &[f64],
        v: &[f64],
        dq: &mut DMatrix<f64>,
        dv: &mut DMatrix<f64>,
    );

    /// Constraint equations Φ(t, q) (len m).
    fn constraints(&self, t: f64, q: &[f64], phi: &mut [f64]);

    /// Constraint Jacobian Φ_q (m × n_v), with respect to the velocities:
    /// Φ' = Φ_q v + Φ_t.
    fn constraint_jacobian(&self, t: f64, q: &[f64], jac: &mut DMatrix<f64>);

    /// Φ_t = ∂Φ/∂t (len m); nonzero only for drivers.
    fn constraint_time_derivative(&self, t: f64, q: &[f64], phi_t: &mut [f64]);

    /// Acceleration right-hand side γ (len m), so that Φ_q q'' = γ:
    /// γ = −(Φ_q q')_q q' − 2 Φ_qt q' − Φ_tt.
    fn gamma(&self, t: f64, q: &[f64], v: &[f64], gamma: &mut [f64]);

    /// ∂(Φ_qᵀ λ)/∂q (n × n): the constraint-force stiffness used by
    /// implicit integration of the augmented equations.
    fn constraint_force_jacobian(&self, t: f64, q: &[f64], lambda: &[f64], out: &mut DMatrix<f64>);

    /// Kinetic energy T = ½ vᵀ M(q) v.
    fn kinetic_energy(&self, q: &[f64], v: &[f64]) -> f64;

    /// Potential energy V(t, q) of gravity and conservative force elements
    /// (springs, one-sided springs), so that T + V is conserved when no
    /// damping, driver or time-dependent force does work.
    fn potential_energy(&self, t: f64, q: &[f64]) -> f64;

    /// Human-readable name of constraint row `row`, naming its element,
    /// e.g. `joint 'crank_pin' (y)`.
    fn constraint_label(&self, row: usize) -> String;

    /// Unit of the multiplier of constraint row `row` and the load it
    /// stands for (sign, body and point), in words; empty when the system
    /// does not say.
    fn constraint_row_meaning(&self, row: usize) -> String;

    /// Human-readable name of coordinate `i`, e.g. `crank.theta`.
    fn coordinate_label(&self, i: usize) -> String;

    /// Human-readable name of velocity `i` (of n_v), whose element name
    /// before the last `.` is its body's, e.g. `top.wz`. The positions'
    /// names where they are the velocities' (n_q = n_v).
    fn velocity_label(&self, i: usize) -> String {
        self.coordinate_label(i)
    }

    /// Human-readable name of velocity-space (tangent) coordinate `i` of
    /// n_v, the increment Δ_i of q ⊞ Δ: the position coordinate's name
    /// where n_q = n_v (the default); for unit quaternions the body's
    /// translation or rotation-vector component, e.g. `rod.rz`.
    fn tangent_coordinate_label(&self, i: usize) -> String {
        self.coordinate_label(i)
    }

    /// Times at which the applied forces or drivers are not smooth (steps,
    /// table knots, ends of ramps), sorted ascending; empty when there are
    /// none.
    fn breakpoints(&self) -> Vec<f64>;

    /// Capability: exact second derivatives (∂γ/∂q, ∂γ/∂v, ∂(Φ_q a)/∂q,
    /// Φ_qt, ∂(M a)/∂q). `None`: callers difference the first derivatives.
    fn second_derivatives(&self) -> Option<&dyn SecondDerivatives>;

    /// Capability: fixed sparsity patterns of Φ_q and of the tangent
    /// matrices, filled in O(nnz). `None`: dense.
    fn sparsity(&self) -> Option<&dyn Sparsity>;

    /// Capability: the applied loads Q_a apart (for the energy account).
    /// `None`: the system cannot tell them from Q.
    fn applied_loads(&self) -> Option<&dyn AppliedLoads>;

    /// Capability: switching functions (contact gaps, one-sided springs)
    /// located as events, and impacts. `None`: the system has none.
    fn switching(&self) -> Option<&dyn SwitchingFunctions>;

    /// Capability: friction elements whose force is solved for with the
    /// accelerations (stick–slip, joint friction). `None`: none.
    fn friction(&self) -> Option<&dyn FrictionRows>;

    /// Capability: the same system in joint (relative) coordinates: a
    /// kinematic tree with cut joints, integrated by the `joint`
    /// formulation. `None`: no such form.
    fn joint_coordinates(&self) -> Option<Box<dyn crate::JointCoordinateSystem>>;
}

/// A friction element evaluated at (t, q, v) ([`FrictionRows::friction_element`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrictionRow {
    /// Sliding velocity v_t of body b relative to body a along the tangent.
    pub sliding_velocity: f64,
    /// γ_f = −(∂v_t/∂q) q'.
    pub gamma: f64,
    /// The normal force F_n ≥ 0.
    pub normal: NormalForce,
    /// Friction coefficient and law.
    pub friction: jounce_model::Friction,
}

/// Where the normal force of a friction element comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NormalForce {
    /// Known from the state (a penalty contact's force).
    Known(f64),
    /// |λ_r|, the magnitude of the multiplier of constraint row `r` (the
    /// reaction of a translational joint normal to its guide).
    Multiplier(usize),
}
