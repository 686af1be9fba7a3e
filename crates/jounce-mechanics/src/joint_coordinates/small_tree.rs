//! Forward dynamics of a small tree (at most [`SMALL_TREE_MAX`] joint
//! coordinates) without the articulated-body algorithm: the joint-space
//! mass matrix by the composite-rigid-body algorithm, the bias forces by
//! recursive Newton–Euler with q'' = 0, and M q'' = f solved by the LᵀDL
//! factorisation that eliminates the coordinates from the leaves to the
//! root (Featherstone, *Rigid Body Dynamics Algorithms*, 2008, sec. 6.2
//! and 6.5):
//!
//! ```text
//! f = Q_joint − τ(q, v, q'' = 0) = Q − C,          M = CRBA(q),
//! for k = n−1 … 0:  D_k = M_kk,  M_ij −= M_ik M_jk / D_k,  f_i −= M_ik f_k / D_k   (i, j < k)
//! for k = 0 … n−1:  q''_k = (f_k − Σ_{j<k} M_kj q''_j) / D_k
//! ```
//!
//! and for n = 2 the same pivots D_1 = M_11, D_0 = det M / M_11 with both
//! accelerations from one division by Cramer's rule,
//! q''_0 = (M_11 f_0 − M_10 f_1) / det M, q''_1 = (M_00 f_1 − M_10 f_0) / det M
//! (two independent products instead of a chain of two divisions).
//!
//! Eliminating from the leaves, D_k is the inertia joint k sees with the
//! joints beyond it free: the articulated-body algorithm's D_k, so a zero
//! pivot names the same joint. For the smallest trees this takes fewer
//! operations than the articulated-body algorithm (no 3 × 3 articulated
//! inertias and their rank-one updates; S1, the double pendulum of
//! studies.md, is a tree of two joints); larger trees use the
//! articulated-body algorithm (O(N)).
//! Values only (f64): exact derivatives keep to the articulated-body
//! algorithm in dual numbers.
//!
//! When nothing depends on the absolute orientation (no gravity, no force
//! element on the bodies: only forces on joint coordinates), rotating the
//! whole system about a root revolute joint's ground point changes neither
//! M nor f (M(q) and the velocity products depend on relative positions
//! only), so q'' does not depend on that joint's angle: the kinematics are
//! evaluated with it at zero, which saves its sine and cosine (as a
//! hand-written double pendulum uses only the relative angle).

use super::kinematics::{node_motion, node_motion_sc, NodeMotion};
use super::planar_joint::PlanarJointSystem;
use super::spatial::{add, add_sym, dot3, mul_sym, Sym3, Vec3};
use super::system::JointSpaceError;
use super::tree::TreeJointKind;

/// Largest number of joint coordinates solved by [`PlanarJointSystem::small_tree_dynamics`].
pub(crate) const SMALL_TREE_MAX: usize = 4;

impl PlanarJointSystem {
    /// q'' into `a` at (t, q, v) for a tree of n ≤ [`SMALL_TREE_MAX`]
    /// coordinates (see the module doc).
    ///
    /// # Errors
    /// [`JointSpaceError::ZeroArticulatedInertia`] naming the joint whose
    /// pivot D_k is not positive (below 1e-12 of the trace of the
    /// composite inertia it moves).
    pub(crate) fn small_tree_dynamics(
        &self,
        t: f64,
        q: &[f64],
        v: &[f64],
        a: &mut [f64],
    ) -> Result<(), JointSpaceError> {
        match (q.len(), self.tree.is_chain) {
            // no coordinates (a model without bodies): nothing moves
            (0, _) => Ok(()),
            (1, _) => self.small_tree::<1, true>(t, q, v, a),
            (2, true) => self.small_tree::<2, true>(t, q, v, a),
            (2, false) => self.small_tree::<2, false>(t, q, v, a),
            (3, true) => self.small_tree::<3, true>(t, q, v, a),
            (3, false) => self.small_tree::<3, false>(t, q, v, a),
            (_, true) => self.small_tree::<4, true>(t, q, v, a),
            (_, false) => self.small_tree::<4, false>(t, q, v, a),
        }
    }

    /// [`Self::small_tree_dynamics`] for exactly N nodes, every buffer on
    /// the stack (a fixed size lets the loops unroll and the values stay
    /// in registers); `CHAIN`: node i's parent is i − 1 (the tree is a
    /// chain from ground), so that every index is a constant after
    /// unrolling and no buffer needs memory.
    #[inline]
    fn small_tree<const N: usize, const CHAIN: bool>(
        &self,
        t: f64,
        q: &[f64],
        v: &[f64],
        a: &mut [f64],
    ) -> Result<(), JointSpaceError> {
        let nodes = &self.tree.nodes[..N];
        let parent = |i: usize| {
            if CHAIN {
                i.checked_sub(1)
            } else {
                nodes[i].parent
            }
        };
        let (q, v, a) = (&q[..N], &v[..N], &mut a[..N]);
        // pass 1: kinematics
        let mut motion = [NodeMotion::<f64>::zero(); N];
        for i in 0..N {
            let n = &nodes[i];
            motion[i] = match parent(i) {
                Some(p) => {
                    let m = &motion[p];
                    node_motion(n, m.pose, m.sin_cos, m.vel, q[i], v[i])
                }
                // rotation invariance: the root joint's angle at zero
                None if self.rotation_invariant && n.kind == TreeJointKind::Revolute => {
                    node_motion_sc(
                        n,
                        [0.0; 3],
                        [0.0, 1.0],
                        [0.0; 3],
                        0.0,
                        v[i],
                        Some([0.0, 1.0]),
                    )
                }
                None => node_motion(n, [0.0; 3], [0.0, 1.0], [0.0; 3], q[i], v[i]),
            };
        }
        let mut body_force = [[0.0; 3]; N];
        if !self.forces.is_empty() {
            self.applied_forces(t, &motion, &mut body_force);
        }
        let mut f = [0.0; N];
        self.joint_force_pass(t, |i| q[i], |i| v[i], &mut f);
        // bias: RNEA with q'' = 0, a_i = a_p + c_i, f_i = I_i a_i + v ×* I v − f^ext
        let root = self.root_acceleration::<f64>();
        let mut acc: [Vec3<f64>; N] = [[0.0; 3]; N];
        let mut force: [Vec3<f64>; N] = [[0.0; 3]; N];
        let mut inertia: [Sym3<f64>; N] = [[0.0; 6]; N];
        for i in 0..N {
            let ap = parent(i).map_or(root, |p| acc[p]);
            acc[i] = add(ap, motion[i].c);
            inertia[i] = self.node_inertia_at(i, &motion[i]);
            force[i] = add(
                mul_sym(&inertia[i], acc[i]),
                self.body_bias_of(i, &motion[i], body_force[i]),
            );
        }
        // leaves to root: forces and composite inertias summed into parents
        for i in (0..N).rev() {
            f[i] -= dot3(motion[i].s, force[i]);
            if let Some(p) = parent(i) {
                force[p] = add(force[p], force[i]);
                let ic = inertia[i];
                add_sym(&mut inertia[p], &ic);
            }
        }
        // M (lower triangle): M_ik = S_kᵀ I^c_i S_i for each ancestor k of
        // i, zero for joints on other branches
        let mut m = [[0.0; N]; N];
        for i in 0..N {
            let s = motion[i].s;
            let fs = mul_sym(&inertia[i], s);
            m[i][i] = dot3(s, fs);
            let mut j = parent(i);
            while let Some(k) = j {
                m[i][k] = dot3(motion[k].s, fs);
                j = parent(k);
            }
        }
        // LᵀDL from the last coordinate (leaves come after their parents);
        // two coordinates by Cramer's rule
        let tol = |k: usize| 1e-12 * (inertia[k][0] + inertia[k][3] + inertia[k][5]);
        let singular = |k: usize, value: f64| JointSpaceError::ZeroArticulatedInertia {
            joint: nodes[k].label.clone(),
            value,
        };
        if N == 2 {
            let (m00, m10, m11) = (m[0][0], m[1][0], m[1][1]);
            if !(m11 > tol(1)) {
                return Err(singular(1, m11));
            }
            let det = m00 * m11 - m10 * m10;
            if !(det > tol(0) * m11) {
                return Err(singular(0, det / m11));
            }
            let id = 1.0 / det;
            a[0] = (f[0] * m11 - m10 * f[1]) * id;
            a[1] = (m00 * f[1] - m10 * f[0]) * id;
            return Ok(());
        }
        let mut inv_d = [0.0; N];
        for k in (0..N).rev() {
            let d = m[k][k];
            if !(d > tol(k)) {
                return Err(singular(k, d));
            }
            let id = 1.0 / d;
            inv_d[k] = id;
            for i in 0..k {
                let l = m[k][i] * id;
                for j in 0..=i {
                    m[i][j] -= l * m[k][j];
                }
                f[i] -= l * f[k];
            }
        }
        for k in 0..N {
            let mut r = f[k];
            for j in 0..k {
                r -= m[k][j] * a[j];
            }
            a[k] = r * inv_d[k];
        }
        Ok(())
    }
}
