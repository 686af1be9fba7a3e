//! Forward kinematics with forces, and the articulated-body algorithm
//! (Featherstone, *Rigid Body Dynamics Algorithms*, 2008, Table 7.1), in
//! planar spatial vectors at the world origin (no coordinate transforms
//! between bodies), generic over the scalar.
//!
//! ```text
//! pass 1 (root → leaves): v_i = v_p + S_i q'_i,  c_i = Ṡ_i q'_i,
//!                         I^A_i = I_i,  p^A_i = v_i ×* I_i v_i − f^ext_i
//! pass 2 (leaves → root): U_i = I^A_i S_i,  D_i = S_iᵀ U_i,  u_i = τ_i − S_iᵀ p^A_i,
//!                         I^A_p += I^A_i − U_i U_iᵀ / D_i,
//!                         p^A_p += p^A_i + I^a_i c_i + U_i u_i / D_i
//! pass 3 (root → leaves): a'_i = a_p + c_i,  q''_i = (u_i − U_iᵀ a'_i) / D_i,
//!                         a_i = a'_i + S_i q''_i,        a_0 = −a_g = (0, −g)
//! ```
//!
//! Individual bodies may have singular inertia (point masses, massless
//! frames): only D_i, the inertia the joint sees through everything beyond
//! it, must be positive. D_i ≤ 1e-12 of the articulated inertia's scale is
//! reported naming the joint.

use crate::kinematics::Scalar;

use super::kinematics::node_motion;
use super::planar_joint::PlanarJointSystem;
use super::spatial::{add, add_sym, body_inertia, dot3, mul_sym, scale, sub_outer, Vec3};
use super::system::JointSpaceError;
use super::work::TreeWork;

impl PlanarJointSystem {
    /// Pass 1: poses, velocities, S, c of every node from `w.q`, `w.v`.
    pub(crate) fn kinematics_pass<D: Scalar>(&self, w: &mut TreeWork<D>) {
        let (z, one) = (D::from(0.0), D::from(1.0));
        for (i, n) in self.tree.nodes.iter().enumerate() {
            let (pp, psc, pv) = match n.parent {
                Some(p) => {
                    let m = &w.motion[p];
                    (m.pose, m.sin_cos, m.vel)
                }
                None => ([z; 3], [z, one], [z; 3]),
            };
            w.motion[i] = node_motion(n, pp, psc, pv, w.q[i], w.v[i]);
        }
    }

    /// Generalized forces (f_x, f_y, n about the centre of mass) of every
    /// force element at time `t` on each node's body, element by element
    /// from the poses and velocities of pass 1.
    pub(crate) fn force_pass<D: Scalar>(&self, t: f64, w: &mut TreeWork<D>) {
        let z = D::from(0.0);
        for f in w.body_force.iter_mut() {
            *f = [z; 3];
        }
        for el in &self.forces {
            let mut x = [z; 6];
            let mut xv = [z; 6];
            for (side, node) in el.bodies.iter().enumerate() {
                if let Some(k) = node {
                    x[3 * side..3 * side + 3].copy_from_slice(&w.motion[*k].pose);
                    xv[3 * side..3 * side + 3].copy_from_slice(&w.motion[*k].vel);
                }
            }
            let mut out = [z; 6];
            el.eval(t, &x, &xv, &mut out);
            for (side, node) in el.bodies.iter().enumerate() {
                if let Some(k) = node {
                    for j in 0..3 {
                        w.body_force[*k][j] += out[3 * side + j];
                    }
                }
            }
        }
    }

    /// v ×* I v − f^ext of node `i`'s body: with a zero spatial
    /// acceleration its centre of mass accelerates by ω × ṙ, so the
    /// velocity-product force is f = m ω × ṙ through the centre of mass
    /// (equal to Featherstone's v ×* I v at O, eq. 2.67, with fewer
    /// operations); minus the applied force (f_x, f_y, n).
    #[inline]
    pub(crate) fn body_bias<D: Scalar>(&self, w: &TreeWork<D>, i: usize) -> Vec3<D> {
        let m = &w.motion[i];
        let (r, rd, omega) = ([m.pose[0], m.pose[1]], [m.vel[0], m.vel[1]], m.vel[2]);
        let mw = omega * self.mass[i];
        let e = w.body_force[i];
        let f = [-(mw * rd[1]) - e[0], mw * rd[0] - e[1]];
        [r[0] * f[1] - r[1] * f[0] - e[2], f[0], f[1]]
    }

    /// Spatial inertia at O of node `i`'s body.
    #[inline]
    pub(crate) fn node_inertia<D: Scalar>(&self, w: &TreeWork<D>, i: usize) -> [D; 6] {
        let r = [w.motion[i].pose[0], w.motion[i].pose[1]];
        body_inertia(self.mass[i], self.inertia[i], r)
    }

    /// a_0 = −a_g: gravity as a fictitious upward acceleration of ground.
    #[inline]
    pub(crate) fn root_acceleration<D: Scalar>(&self) -> Vec3<D> {
        [
            D::from(0.0),
            D::from(-self.gravity[0]),
            D::from(-self.gravity[1]),
        ]
    }

    /// Articulated-body algorithm: `w.a` = q'' at (t, `w.q`, `w.v`).
    ///
    /// # Errors
    /// [`JointSpaceError::ZeroArticulatedInertia`] naming the joint.
    pub(crate) fn aba<D: Scalar>(
        &self,
        t: f64,
        w: &mut TreeWork<D>,
    ) -> Result<(), JointSpaceError> {
        self.kinematics_pass(w);
        self.force_pass(t, w);
        let n = self.tree.nodes.len();
        let z = D::from(0.0);
        for i in 0..n {
            w.inertia[i] = [z; 6];
            w.force[i] = [z; 3];
        }
        // pass 2, each node's own inertia and bias force added to what its
        // children (later in the order) have passed up
        for i in (0..n).rev() {
            let ii = self.node_inertia(w, i);
            add_sym(&mut w.inertia[i], &ii);
            let pa = self.body_bias(w, i);
            w.force[i] = add(w.force[i], pa);
            let s = w.motion[i].s;
            let u = mul_sym(&w.inertia[i], s);
            let d = dot3(s, u);
            // I^A is positive semi-definite: its trace bounds its entries
            let ia = &w.inertia[i];
            if !(d.re() > 1e-12 * (ia[0] + ia[3] + ia[5]).re()) {
                return Err(JointSpaceError::ZeroArticulatedInertia {
                    joint: self.tree.nodes[i].label.clone(),
                    value: d.re(),
                });
            }
            let inv_d = D::from(1.0) / d;
            let tau = -dot3(s, w.force[i]);
            w.u[i] = u;
            w.d[i] = inv_d;
            w.tau[i] = tau;
            if let Some(p) = self.tree.nodes[i].parent {
                let ia = sub_outer(&w.inertia[i], u, inv_d);
                let pa = add(
                    add(w.force[i], mul_sym(&ia, w.motion[i].c)),
                    scale(tau * inv_d, u),
                );
                add_sym(&mut w.inertia[p], &ia);
                w.force[p] = add(w.force[p], pa);
            }
        }
        let root = self.root_acceleration::<D>();
        for i in 0..n {
            let ap = match self.tree.nodes[i].parent {
                Some(p) => w.acc[p],
                None => root,
            };
            let a1 = add(ap, w.motion[i].c);
            let qdd = (w.tau[i] - dot3(w.u[i], a1)) * w.d[i];
            w.a[i] = qdd;
            w.acc[i] = add(a1, scale(qdd, w.motion[i].s));
        }
        Ok(())
    }

    /// Recursive Newton–Euler inverse dynamics: `w.a` (in: q'') becomes
    /// τ = M q'' + C − Q at (t, `w.q`, `w.v`) (Featherstone Table 5.1 in
    /// the fixed frame: a_i = a_p + S_i q''_i + c_i,
    /// f_i = I_i a_i + v_i ×* I_i v_i − f^ext_i, τ_i = S_iᵀ f_i,
    /// f_p += f_i).
    pub(crate) fn rnea<D: Scalar>(&self, t: f64, w: &mut TreeWork<D>) {
        self.kinematics_pass(w);
        self.force_pass(t, w);
        let n = self.tree.nodes.len();
        let root = self.root_acceleration::<D>();
        for i in 0..n {
            let ap = match self.tree.nodes[i].parent {
                Some(p) => w.acc[p],
                None => root,
            };
            let m = &w.motion[i];
            let acc = add(add(ap, m.c), scale(w.a[i], m.s));
            w.acc[i] = acc;
            let ii = self.node_inertia(w, i);
            w.force[i] = add(mul_sym(&ii, acc), self.body_bias(w, i));
        }
        for i in (0..n).rev() {
            w.a[i] = dot3(w.motion[i].s, w.force[i]);
            if let Some(p) = self.tree.nodes[i].parent {
                w.force[p] = add(w.force[p], w.force[i]);
            }
        }
    }

    /// Composite-rigid-body algorithm (Featherstone Table 6.2 in the fixed
    /// frame): I^c_i = I_i + Σ_children I^c_j; M_ii = S_iᵀ I^c_i S_i and
    /// M_ij = M_ji = S_jᵀ I^c_i S_i for every ancestor j of i, into `m`
    /// (row-major n × n). Needs the kinematics pass done. O(N·depth).
    pub(crate) fn crba<D: Scalar>(&self, w: &mut TreeWork<D>, m: &mut [D]) {
        let n = self.tree.nodes.len();
        for i in 0..n {
            w.inertia[i] = self.node_inertia(w, i);
        }
        for i in (0..n).rev() {
            if let Some(p) = self.tree.nodes[i].parent {
                let ic = w.inertia[i];
                add_sym(&mut w.inertia[p], &ic);
            }
        }
        m.iter_mut().for_each(|x| *x = D::from(0.0));
        for i in 0..n {
            let f = mul_sym(&w.inertia[i], w.motion[i].s);
            m[i * n + i] = dot3(w.motion[i].s, f);
            let mut j = self.tree.nodes[i].parent;
            while let Some(k) = j {
                let mij = dot3(w.motion[k].s, f);
                m[i * n + k] = mij;
                m[k * n + i] = mij;
                j = self.tree.nodes[k].parent;
            }
        }
    }
}
