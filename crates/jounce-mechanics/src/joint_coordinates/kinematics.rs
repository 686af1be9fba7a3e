//! Forward kinematics of the tree, joint → body coordinates, node by node
//! from the root (O(N)), and its inverse, body → joint coordinates.
//!
//! For node c with parent p (pose (r_p, θ_p), velocity (ṙ_p, ω_p); ground
//! at rest at the origin), joint point s_p on the parent and s_c on the
//! child, σ = ±1 and coordinate q:
//!
//! ```text
//! revolute:  θ_c = θ_p + σ q,  P = r_p + A(θ_p) s_p,           ω_c = ω_p + σ q'
//! prismatic: θ_c = θ_p + δ,    P = r_p + A(θ_p) s_p + σ q u,    ω_c = ω_p,   u = A(θ_p) e
//! both:      r_c = P − A(θ_c) s_c,   ṙ_c = Ṗ − ω_c × A(θ_c) s_c
//! ```
//!
//! and the joint's motion subspace S and velocity-product term c = Ṡ q' in
//! the world frame at O (see [`super::spatial`]):
//!
//! ```text
//! revolute:  S = σ (1, P_y, −P_x),   c = σ q' (0, Ṗ_y, −Ṗ_x)
//! prismatic: S = σ (0, u_x, u_y),    c = σ q' (0, −ω_p u_y, ω_p u_x)
//! ```
//!
//! (Featherstone 2008, sec. 4.4 and 7.3: in a fixed frame the joint's
//! contribution to the acceleration is S q'' + Ṡ q', with Ṡ from the
//! motion of the joint axis.)

use crate::kinematics::{rotate, rotate_d, Scalar};

use super::spatial::Vec3;
use super::tree::{TreeJointKind, TreeNode};

/// Pose, velocity and joint quantities of one node.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NodeMotion<D> {
    /// (x, y, θ) of the node's frame (a body's centre of mass).
    pub pose: [D; 3],
    /// (ẋ, ẏ, ω).
    pub vel: [D; 3],
    /// Motion subspace S at O.
    pub s: Vec3<D>,
    /// c = Ṡ q'.
    pub c: Vec3<D>,
    /// (sin θ, cos θ) of the pose, reused by the children.
    pub sin_cos: [D; 2],
}

impl<D: Scalar> NodeMotion<D> {
    /// At rest at the origin.
    pub fn zero() -> Self {
        let z = D::from(0.0);
        NodeMotion {
            pose: [z; 3],
            vel: [z; 3],
            s: [z; 3],
            c: [z; 3],
            sin_cos: [z, D::from(1.0)],
        }
    }
}

/// A(θ) s from (sin θ, cos θ).
#[inline]
fn rot<D: Scalar>(sc: [D; 2], s: [f64; 2]) -> [D; 2] {
    [sc[1] * s[0] - sc[0] * s[1], sc[0] * s[0] + sc[1] * s[1]]
}

/// ω × w for a planar angular velocity ω.
#[inline]
fn omega_cross<D: Scalar>(w: D, a: [D; 2]) -> [D; 2] {
    [-(w * a[1]), w * a[0]]
}

/// Position of node `n` from its parent's pose and its coordinate q.
#[inline]
pub(crate) fn node_pose<D: Scalar>(n: &TreeNode, pp: [D; 3], q: D) -> [D; 3] {
    let ap = rotate(pp[2], n.sp);
    let mut p = [pp[0] + ap[0], pp[1] + ap[1]];
    let theta = match n.kind {
        TreeJointKind::Revolute => pp[2] + q * n.sign,
        TreeJointKind::Prismatic { axis } => {
            let u = rotate(pp[2], axis);
            let sq = q * n.sign;
            p[0] += sq * u[0];
            p[1] += sq * u[1];
            pp[2] + D::from(n.offset)
        }
    };
    let ac = rotate(theta, n.sc);
    [p[0] - ac[0], p[1] - ac[1], theta]
}

/// Pose, velocity, S and c of node `n` from its parent's pose `pp`,
/// (sin θ_p, cos θ_p) `psc` and velocity `pv`, coordinate q and rate qd.
#[inline]
pub(crate) fn node_motion<D: Scalar>(
    n: &TreeNode,
    pp: [D; 3],
    psc: [D; 2],
    pv: [D; 3],
    q: D,
    qd: D,
) -> NodeMotion<D> {
    node_motion_sc(n, pp, psc, pv, q, qd, None)
}

/// [`node_motion`] given (sin θ, cos θ) of the node's own angle in `sc`
/// when the caller knows it (`None`: computed here).
#[inline]
pub(crate) fn node_motion_sc<D: Scalar>(
    n: &TreeNode,
    pp: [D; 3],
    psc: [D; 2],
    pv: [D; 3],
    q: D,
    qd: D,
    sc: Option<[D; 2]>,
) -> NodeMotion<D> {
    let ap = rot(psc, n.sp);
    let sq = q * n.sign;
    let sqd = qd * n.sign;
    let zero = D::from(0.0);
    let (p, pdot, theta, omega, s, c) = match n.kind {
        TreeJointKind::Revolute => {
            let p = [pp[0] + ap[0], pp[1] + ap[1]];
            let w = omega_cross(pv[2], ap);
            let pdot = [pv[0] + w[0], pv[1] + w[1]];
            let s = [D::from(n.sign), p[1] * n.sign, -(p[0] * n.sign)];
            let c = [zero, sqd * pdot[1], -(sqd * pdot[0])];
            (p, pdot, pp[2] + sq, pv[2] + sqd, s, c)
        }
        TreeJointKind::Prismatic { axis } => {
            let u = rot(psc, axis);
            let arm = [ap[0] + sq * u[0], ap[1] + sq * u[1]];
            let p = [pp[0] + arm[0], pp[1] + arm[1]];
            let w = omega_cross(pv[2], arm);
            let pdot = [pv[0] + w[0] + sqd * u[0], pv[1] + w[1] + sqd * u[1]];
            let s = [zero, u[0] * n.sign, u[1] * n.sign];
            let c = [zero, -(sqd * pv[2] * u[1]), sqd * pv[2] * u[0]];
            (p, pdot, pp[2] + D::from(n.offset), pv[2], s, c)
        }
    };
    // a prismatic joint keeps the parent's angle up to a constant offset
    let (sn, cs) = match sc {
        Some([sn, cs]) => (sn, cs),
        None if matches!(n.kind, TreeJointKind::Prismatic { .. }) && n.offset == 0.0 => {
            (psc[0], psc[1])
        }
        None => theta.sin_cos(),
    };
    let ac = rot([sn, cs], n.sc);
    let r = [p[0] - ac[0], p[1] - ac[1]];
    let w = omega_cross(omega, ac);
    let rdot = [pdot[0] - w[0], pdot[1] - w[1]];
    NodeMotion {
        pose: [r[0], r[1], theta],
        vel: [rdot[0], rdot[1], omega],
        s,
        c,
        sin_cos: [sn, cs],
    }
}

/// The coordinate q of node `n` from the poses of its parent `pp` and of
/// itself `pc` (the inverse of [`node_pose`] where the joint holds):
/// revolute q = σ (θ_c − θ_p), prismatic q = σ (P_c − P_p)·u.
#[inline]
pub(crate) fn node_coordinate<D: Scalar>(n: &TreeNode, pp: [D; 3], pc: [D; 3]) -> D {
    match n.kind {
        TreeJointKind::Revolute => (pc[2] - pp[2]) * n.sign,
        TreeJointKind::Prismatic { axis } => {
            let ap = rotate(pp[2], n.sp);
            let ac = rotate(pc[2], n.sc);
            let d = [pc[0] + ac[0] - pp[0] - ap[0], pc[1] + ac[1] - pp[1] - ap[1]];
            let u = rotate_d(pp[2], [D::from(axis[0]), D::from(axis[1])]);
            (d[0] * u[0] + d[1] * u[1]) * n.sign
        }
    }
}
