//! The interface of a system in joint (relative, minimal) coordinates, as
//! the formulations see it: nothing here says whether it is planar.
//!
//! A kinematic tree of joints carries n_q joint positions q and n_v joint
//! rates v; joints that close loops, and drivers, are cut and give m
//! closure constraints Φ(t, q) = 0. The equations of motion are
//!
//! ```text
//! M(q) q'' = f(t, q, v) − Φ_qᵀ λ,    Φ(t, q) = 0,
//! ```
//!
//! with M from the composite-rigid-body algorithm, f = Q − C (applied minus
//! velocity-product forces) from recursive Newton–Euler, and, for a tree
//! without closure constraints, q'' = M⁻¹ f directly by the articulated-body
//! algorithm in O(N) (Featherstone, *Rigid Body Dynamics Algorithms*,
//! Springer 2008, ch. 6 and 7).
//!
//! The state-dependent buffers live in a caller-owned [`JointData`] (the
//! model/data split); evaluations allocate nothing.

use nalgebra::DMatrix;
use thiserror::Error;

use super::spatial_work::SpatialJointWork;
use super::work::PlanarJointWork;

/// Workspace of one user of a [`JointCoordinateSystem`], created by
/// [`JointCoordinateSystem::data`]; its layout is the system's business.
#[derive(Clone, Debug)]
pub struct JointData {
    pub(crate) planar: PlanarJointWork,
    /// The 6-D buffers of a spatial system (`None` for a planar one).
    pub(crate) spatial: Option<Box<SpatialJointWork>>,
    /// Baumgarte parameters (α, β) of the closure constraints.
    pub(crate) baumgarte: [f64; 2],
}

impl JointData {
    /// Stabilise the closure constraints in forward dynamics by Baumgarte's
    /// method (Baumgarte 1972; jalon-bayo eq. 7.46): Φ_q q'' = γ − 2α Φ' −
    /// β² Φ, so that Φ'' + 2αΦ' + β²Φ = 0; α = β = 0 (the default) is off.
    pub fn set_baumgarte(&mut self, alpha: f64, beta: f64) {
        self.baumgarte = [alpha, beta];
    }
}

/// Why a joint-coordinate evaluation failed.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum JointSpaceError {
    /// A joint sees no inertia: the bodies it moves (with everything
    /// beyond them) are massless in the joint's direction, so its
    /// acceleration is undetermined.
    #[error(
        "{joint}: the articulated inertia it moves is zero (D = {value:e}); the bodies beyond \
         this joint need mass or inertia in its direction"
    )]
    ZeroArticulatedInertia {
        /// The joint, e.g. `joint 'elbow'`.
        joint: String,
        /// The articulated inertia Sᵀ I^A S found.
        value: f64,
    },
    /// The body state does not satisfy a tree joint, so no joint
    /// coordinates reproduce it.
    #[error("{joint}: the body positions violate this joint by {residual:e}")]
    Inconsistent {
        /// The joint.
        joint: String,
        /// ‖x(q) − x‖∞ for the body poses.
        residual: f64,
    },
    /// The KKT matrix of the closure constraints is singular: redundant cut
    /// joints or drivers, a singular configuration, or a joint without
    /// inertia.
    #[error(
        "the joint-coordinate KKT matrix is singular (redundant or singular closure \
         constraints, or a joint without inertia) among: {0}"
    )]
    SingularClosure(String),
    /// The model has no joint-coordinate form here (a closed loop, a free
    /// body, a joint kind the tree cannot carry).
    #[error("{joint} {problem}")]
    Unsupported {
        /// The joint or body, e.g. `joint 'loop_pin'`.
        joint: String,
        /// Why.
        problem: String,
    },
}

/// A mechanical system in joint coordinates.
///
/// Positions q (n_q) and rates v (n_v) with q' = T(q) v
/// ([`JointCoordinateSystem::position_derivative`]; q' = v while
/// n_q = n_v, as in planar joint coordinates; a free joint's unit
/// quaternion makes n_q > n_v) and m closure constraints. The body-coordinate system it came from has
/// [`JointCoordinateSystem::body_nq`] positions; [`JointCoordinateSystem::body_state`]
/// maps a joint state to it, [`JointCoordinateSystem::joint_state`] back.
pub trait JointCoordinateSystem {
    /// Number of joint positions n_q.
    fn nq(&self) -> usize;

    /// Number of joint rates n_v.
    fn nv(&self) -> usize {
        self.nq()
    }

    /// Number of closure constraints m (cut joints and drivers).
    fn nc(&self) -> usize;
    /// q' = T(q) v (len n_q): the kinematic map of the joint positions;
    /// q' = v by default (n_q = n_v).
    fn position_derivative(&self, _q: &[f64], v: &[f64], qdot: &mut [f64]) {
        qdot.copy_from_slice(v);
    }
    /// q ⊕ δ (len n_q) for the rate-space increment δ (len n_v), on the
    /// configuration manifold (unit quaternions normalised, so that δ = 0
    /// projects q onto it); q + δ by default (n_q = n_v).
    fn integrate_position(&self, q: &[f64], delta: &[f64], out: &mut [f64]) {
        for ((o, x), d) in out.iter_mut().zip(q).zip(delta) {
            *o = x + d;
        }
    }

    /// Number of position coordinates of the body-coordinate system.
    fn body_nq(&self) -> usize;

    /// Number of velocity coordinates of the body-coordinate system.
    fn body_nv(&self) -> usize {
        self.body_nq()
    }

    /// Workspace sized for this system.
    fn data(&self) -> JointData;

    /// Name of joint coordinate `i`, e.g. `joint 'elbow' (angle)`.
    fn coordinate_label(&self, i: usize) -> String;

    /// Name of closure constraint row `r`, e.g. `joint 'coupler_pin' (x)`.
    fn constraint_label(&self, r: usize) -> String;

    /// Times at which forces or drivers are not smooth, sorted.
    fn breakpoints(&self) -> Vec<f64>;

    /// Joint positions and rates (q, v) of a body state (x, ẋ) that
    /// satisfies the tree joints.
    ///
    /// # Errors
    /// [`JointSpaceError::Inconsistent`] naming the joint when x violates a
    /// tree joint by more than `tol` (relative to the size of x).
    fn joint_state(
        &self,
        data: &mut JointData,
        body_q: &[f64],
        body_v: &[f64],
        tol: f64,
        q: &mut [f64],
        v: &mut [f64],
    ) -> Result<(), JointSpaceError>;

    /// Body positions and velocities (x, ẋ) of a joint state (forward
    /// kinematics, O(N)).
    fn body_state(
        &self,
        data: &mut JointData,
        q: &[f64],
        v: &[f64],
        body_q: &mut [f64],
        body_v: &mut [f64],
    );

    /// Body accelerations ẍ = J(q) q'' + J̇ q' of a joint state (q, v) and
    /// accelerations a (forward kinematics differentiated along the
    /// motion).
    fn body_acceleration(
        &self,
        data: &mut JointData,
        q: &[f64],
        v: &[f64],
        a: &[f64],
        body_a: &mut [f64],
    );

    /// q'': for a tree (m = 0) of M(q) q'' = f(t, q, v) by the
    /// articulated-body algorithm (O(N)); with closure constraints of the
    /// KKT system [M Φ_qᵀ; Φ_q 0][q''; λ] = [f; γ].
    ///
    /// # Errors
    /// [`JointSpaceError::ZeroArticulatedInertia`] naming the joint,
    /// [`JointSpaceError::SingularClosure`] naming the closure constraints.
    fn forward_dynamics(
        &self,
        data: &mut JointData,
        t: f64,
        q: &[f64],
        v: &[f64],
        a: &mut [f64],
    ) -> Result<(), JointSpaceError>;

    /// Whether [`JointCoordinateSystem::forward_dynamics_jacobians`] and
    /// the inverse-dynamics Jacobians are exact (dual numbers: the planar
    /// trees) rather than difference quotients (the spatial ones, a
    /// documented stopgap).
    fn jacobians_are_exact(&self) -> bool {
        true
    }

    /// ∂q''/∂q (n_v × n_q) and ∂q''/∂v (n_v × n_v) of
    /// [`JointCoordinateSystem::forward_dynamics`], exact (dual numbers)
    /// where [`JointCoordinateSystem::jacobians_are_exact`].
    ///
    /// # Errors
    /// As [`JointCoordinateSystem::forward_dynamics`].
    fn forward_dynamics_jacobians(
        &self,
        data: &mut JointData,
        t: f64,
        q: &[f64],
        v: &[f64],
        da_dq: &mut DMatrix<f64>,
        da_dv: &mut DMatrix<f64>,
    ) -> Result<(), JointSpaceError>;

    /// Joint-space mass matrix M(q) (n_v × n_v), composite-rigid-body
    /// algorithm.
    fn mass_matrix(&self, data: &mut JointData, q: &[f64], m: &mut DMatrix<f64>);

    /// f(t, q, v) = Q − C (len n_v): applied forces minus the velocity
    /// products, M q'' = f (recursive Newton–Euler with q'' = 0).
    fn bias_forces(&self, data: &mut JointData, t: f64, q: &[f64], v: &[f64], f: &mut [f64]);

    /// Inverse dynamics τ = M(q) a − f(t, q, v) (len n_v), recursive
    /// Newton–Euler (O(N)).
    fn inverse_dynamics(
        &self,
        data: &mut JointData,
        t: f64,
        q: &[f64],
        v: &[f64],
        a: &[f64],
        tau: &mut [f64],
    );

    /// K = ∂τ/∂q and C = ∂τ/∂v of τ = M(q) a − f(t, q, v) at fixed a,
    /// exact (dual numbers): the tangent matrices of structural methods.
    fn inverse_dynamics_jacobians(
        &self,
        data: &mut JointData,
        t: f64,
        q: &[f64],
        v: &[f64],
        a: &[f64],
        k: &mut DMatrix<f64>,
        c: &mut DMatrix<f64>,
    );

    /// Closure constraints Φ(t, q) (len m).
    fn constraints(&self, data: &mut JointData, t: f64, q: &[f64], phi: &mut [f64]);

    /// Φ_q (m × n_v), exact (dual numbers).
    fn constraint_jacobian(&self, data: &mut JointData, t: f64, q: &[f64], jac: &mut DMatrix<f64>);

    /// γ (len m) with Φ_q q'' = γ: γ = −d²/ds² Φ(t + s, q + v s) at s = 0.
    fn gamma(&self, data: &mut JointData, t: f64, q: &[f64], v: &[f64], gamma: &mut [f64]);
}
