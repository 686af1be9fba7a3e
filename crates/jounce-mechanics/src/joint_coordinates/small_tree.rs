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
//! Eliminating from the leaves, D_k is the inertia joint k sees with the
//! joints beyond it free: the articulated-body algorithm's D_k, so a zero
//! pivot names the same joint. For the smallest trees this takes fewer
//! operations than the articulated-body algorithm (no 3 × 3 articulated
//! inertias and their rank-one updates; S1, the double pendulum of
//! studies.md, is a tree of two joints); larger trees use the
//! articulated-body algorithm (O(N)).
//! Values only (f64): exact derivatives keep to the articulated-body
//! algorithm in dual numbers.

use super::kinematics::{node_motion, NodeMotion};
use super::planar_joint::PlanarJointSystem;
use super::spatial::{add, add_sym, dot3, mul_sym, Sym3, Vec3};
use super::system::JointSpaceError;

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
        match q.len() {
            // no coordinates (a model without bodies): nothing moves
            0 => Ok(()),
            1 => self.small_tree::<1>(t, q, v, a),
            2 => self.small_tree::<2>(t, q, v, a),
            3 => self.small_tree::<3>(t, q, v, a),
            _ => self.small_tree::<4>(t, q, v, a),
        }
    }

    /// [`Self::small_tree_dynamics`] for exactly N nodes, every buffer on
    /// the stack (a fixed size lets the loops unroll and the values stay
    /// in registers).
    #[inline]
    fn small_tree<const N: usize>(
        &self,
        t: f64,
        q: &[f64],
        v: &[f64],
        a: &mut [f64],
    ) -> Result<(), JointSpaceError> {
        let nodes = &self.tree.nodes[..N];
        let (q, v, a) = (&q[..N], &v[..N], &mut a[..N]);
        // pass 1: kinematics
        let mut motion = [NodeMotion::<f64>::zero(); N];
        for i in 0..N {
            let (pp, psc, pv) = match nodes[i].parent {
                Some(p) => (motion[p].pose, motion[p].sin_cos, motion[p].vel),
                None => ([0.0; 3], [0.0, 1.0], [0.0; 3]),
            };
            motion[i] = node_motion(&nodes[i], pp, psc, pv, q[i], v[i]);
        }
        let mut body_force = [[0.0; 3]; N];
        self.applied_forces(t, &motion, &mut body_force);
        let mut f = [0.0; N];
        self.joint_force_pass(t, |i| q[i], |i| v[i], &mut f);
        // bias: RNEA with q'' = 0, a_i = a_p + c_i, f_i = I_i a_i + v ×* I v − f^ext
        let root = self.root_acceleration::<f64>();
        let mut acc: [Vec3<f64>; N] = [[0.0; 3]; N];
        let mut force: [Vec3<f64>; N] = [[0.0; 3]; N];
        let mut inertia: [Sym3<f64>; N] = [[0.0; 6]; N];
        for i in 0..N {
            let ap = nodes[i].parent.map_or(root, |p| acc[p]);
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
            if let Some(p) = nodes[i].parent {
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
            let mut j = nodes[i].parent;
            while let Some(k) = j {
                m[i][k] = dot3(motion[k].s, fs);
                j = nodes[k].parent;
            }
        }
        // LᵀDL from the last coordinate (leaves come after their parents)
        let mut inv_d = [0.0; N];
        for k in (0..N).rev() {
            let d = m[k][k];
            let ic = &inertia[k];
            if !(d > 1e-12 * (ic[0] + ic[3] + ic[5])) {
                return Err(JointSpaceError::ZeroArticulatedInertia {
                    joint: nodes[k].label.clone(),
                    value: d,
                });
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
