//! Workspace of the recursive algorithms on a planar kinematic tree, one
//! per scalar type (f64 for values, dual numbers for exact derivatives),
//! sized at set-up so that the algorithms allocate nothing.

use num_dual::{Dual2_64, Dual64};

use super::closure_dynamics::KktWork;
use super::kinematics::NodeMotion;
use super::spatial::{Sym3, Vec3};
use crate::kinematics::Scalar;

/// Per-node buffers of forward kinematics, the articulated-body algorithm,
/// the composite-rigid-body algorithm and recursive Newton–Euler.
#[derive(Clone, Debug)]
pub(crate) struct TreeWork<D> {
    /// Pose, velocity, S, c and spatial velocity of each node.
    pub motion: Vec<NodeMotion<D>>,
    /// Generalized force (f_x, f_y, n about the centre of mass) of the
    /// force elements on each node's body.
    pub body_force: Vec<[D; 3]>,
    /// Articulated (ABA) or composite (CRBA) inertia at O.
    pub inertia: Vec<Sym3<D>>,
    /// Articulated bias force p^A (ABA) or net force (RNEA) at O.
    pub force: Vec<Vec3<D>>,
    /// U D⁻¹, U = I^A S, D = Sᵀ U (articulated-body algorithm).
    pub u: Vec<Vec3<D>>,
    /// (u − Uᵀ c) D⁻¹, u = τ − Sᵀ p^A.
    pub tau: Vec<D>,
    /// Spatial acceleration at O.
    pub acc: Vec<Vec3<D>>,
    /// Joint coordinates, rates and accelerations in this scalar.
    pub q: Vec<D>,
    /// Joint rates.
    pub v: Vec<D>,
    /// Joint accelerations (or forces).
    pub a: Vec<D>,
    /// Generalized forces of the force elements applied to joint
    /// coordinates (`joint_forces`).
    pub joint_force: Vec<D>,
}

impl<D: Scalar> TreeWork<D> {
    /// Buffers for `n` nodes.
    pub fn new(n: usize) -> Self {
        let z = D::from(0.0);
        let m = NodeMotion {
            pose: [z; 3],
            vel: [z; 3],
            s: [z; 3],
            c: [z; 3],
            sin_cos: [z, D::from(1.0)],
        };
        Self {
            motion: vec![m; n],
            body_force: vec![[z; 3]; n],
            inertia: vec![[z; 6]; n],
            force: vec![[z; 3]; n],
            u: vec![[z; 3]; n],
            tau: vec![z; n],
            acc: vec![[z; 3]; n],
            q: vec![z; n],
            v: vec![z; n],
            a: vec![z; n],
            joint_force: vec![z; n],
        }
    }
}

/// Workspace of a planar joint-coordinate system.
#[derive(Clone, Debug)]
pub(crate) struct PlanarJointWork {
    /// Values.
    pub re: TreeWork<f64>,
    /// First-order duals (directional derivatives: Jacobians column by
    /// column).
    pub dual: TreeWork<Dual64>,
    /// Node poses in first-order duals (Φ_q column by column).
    pub pose_dual: Vec<[Dual64; 3]>,
    /// Node poses in second-order duals along q + v s (γ).
    pub pose_dual2: Vec<[Dual2_64; 3]>,
    /// KKT dynamics with closure constraints, values.
    pub kkt: KktWork<f64>,
    /// KKT dynamics in first-order duals (exact Jacobians).
    pub kkt_dual: KktWork<Dual64>,
}

impl PlanarJointWork {
    /// Buffers for `n` nodes and `m` closure rows.
    pub fn new(n: usize, m: usize) -> Self {
        Self {
            kkt: KktWork::new(n, m),
            kkt_dual: KktWork::new(n, m),
            re: TreeWork::new(n),
            dual: TreeWork::new(n),
            pose_dual: vec![[Dual64::from(0.0); 3]; n],
            pose_dual2: vec![[Dual2_64::from(0.0); 3]; n],
        }
    }
}
