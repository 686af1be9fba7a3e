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

use super::kinematics::{node_motion, NodeMotion};
use super::planar_joint::PlanarJointSystem;
use super::spatial::{add, add_sym, body_inertia, dot3, mul_sym, scale, sub_outer, Sym3, Vec3};
use super::system::JointSpaceError;
use super::work::TreeWork;

impl PlanarJointSystem {
    /// Pass 1: poses, velocities, S, c of every node from `w.q`, `w.v`.
    pub(crate) fn kinematics_pass<D: Scalar>(&self, w: &mut TreeWork<D>) {
        self.kinematics_pass_from(|i| w.q[i], |i| w.v[i], &mut w.motion);
    }

    /// Pass 1 from joint positions `q(i)` and rates `v(i)` into `motion`.
    /// A node whose parent is the node just computed (every node of a
    /// chain) takes the parent's motion from a register, not from memory.
    #[inline]
    pub(crate) fn kinematics_pass_from<D: Scalar>(
        &self,
        q: impl Fn(usize) -> D,
        v: impl Fn(usize) -> D,
        motion: &mut [NodeMotion<D>],
    ) {
        let (z, one) = (D::from(0.0), D::from(1.0));
        let mut last: Option<NodeMotion<D>> = None;
        for (i, n) in self.tree.nodes.iter().enumerate() {
            let (pp, psc, pv) = match (n.parent, &last) {
                (None, _) => ([z; 3], [z, one], [z; 3]),
                (Some(p), Some(m)) if p + 1 == i => (m.pose, m.sin_cos, m.vel),
                (Some(p), _) => {
                    let m = &motion[p];
                    (m.pose, m.sin_cos, m.vel)
                }
            };
            let m = node_motion(n, pp, psc, pv, q(i), v(i));
            motion[i] = m;
            last = Some(m);
        }
    }

    /// Generalized forces (f_x, f_y, n about the centre of mass) of every
    /// force element at time `t` on each node's body, element by element
    /// from the poses and velocities of pass 1.
    pub(crate) fn force_pass<D: Scalar>(&self, t: f64, w: &mut TreeWork<D>) {
        self.applied_forces(t, &w.motion, &mut w.body_force);
    }

    /// [`Self::force_pass`] from node motions `motion` into `body_force`.
    #[inline]
    pub(crate) fn applied_forces<D: Scalar>(
        &self,
        t: f64,
        motion: &[NodeMotion<D>],
        body_force: &mut [[D; 3]],
    ) {
        let z = D::from(0.0);
        body_force.fill([z; 3]);
        for el in &self.forces {
            let mut x = [z; 6];
            let mut xv = [z; 6];
            for (side, node) in el.bodies.iter().enumerate() {
                if let Some(k) = node {
                    x[3 * side..3 * side + 3].copy_from_slice(&motion[*k].pose);
                    xv[3 * side..3 * side + 3].copy_from_slice(&motion[*k].vel);
                }
            }
            let mut out = [z; 6];
            el.eval(t, &x, &xv, &mut out);
            for (side, node) in el.bodies.iter().enumerate() {
                if let Some(k) = node {
                    for j in 0..3 {
                        body_force[*k][j] += out[3 * side + j];
                    }
                }
            }
        }
    }

    /// Generalized forces Q of the force elements applied to joint
    /// coordinates at time `t`, joint positions `q(i)` and rates `v(i)`,
    /// into `out` (len n; zero where none acts).
    #[inline]
    pub(crate) fn joint_force_pass<D: Scalar>(
        &self,
        t: f64,
        q: impl Fn(usize) -> D,
        v: impl Fn(usize) -> D,
        out: &mut [D],
    ) {
        out.fill(D::from(0.0));
        for jf in &self.joint_forces {
            jf.add_to(t, q(jf.node), v(jf.node), out);
        }
    }

    /// v ×* I v − f^ext of node `i`'s body: with a zero spatial
    /// acceleration its centre of mass accelerates by ω × ṙ, so the
    /// velocity-product force is f = m ω × ṙ through the centre of mass
    /// (equal to Featherstone's v ×* I v at O, eq. 2.67, with fewer
    /// operations); minus the applied force (f_x, f_y, n).
    #[inline]
    pub(crate) fn body_bias<D: Scalar>(&self, w: &TreeWork<D>, i: usize) -> Vec3<D> {
        self.body_bias_of(i, &w.motion[i], w.body_force[i])
    }

    /// [`Self::body_bias`] from node `i`'s motion `m` and applied force `e`.
    #[inline]
    pub(crate) fn body_bias_of<D: Scalar>(
        &self,
        i: usize,
        m: &NodeMotion<D>,
        e: [D; 3],
    ) -> Vec3<D> {
        let (r, rd, omega) = ([m.pose[0], m.pose[1]], [m.vel[0], m.vel[1]], m.vel[2]);
        let mw = omega * self.mass[i];
        let f = [-(mw * rd[1]) - e[0], mw * rd[0] - e[1]];
        [r[0] * f[1] - r[1] * f[0] - e[2], f[0], f[1]]
    }

    /// Spatial inertia at O of node `i`'s body.
    #[inline]
    pub(crate) fn node_inertia<D: Scalar>(&self, w: &TreeWork<D>, i: usize) -> [D; 6] {
        self.node_inertia_at(i, &w.motion[i])
    }

    /// [`Self::node_inertia`] from node `i`'s motion `m`.
    #[inline]
    pub(crate) fn node_inertia_at<D: Scalar>(&self, i: usize, m: &NodeMotion<D>) -> [D; 6] {
        body_inertia(self.mass[i], self.inertia[i], [m.pose[0], m.pose[1]])
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
        self.joint_force_pass(t, |i| w.q[i], |i| w.v[i], &mut w.joint_force);
        self.aba_passes(w, |a, i, qdd| a[i] = qdd)
    }

    /// Passes 2 and 3 of the articulated-body algorithm after the
    /// kinematics and force passes; q''_i goes to `put(&mut w.a, i, q''_i)`.
    /// I^A_i and p^A_i stay in registers: only the parent's sums go through
    /// `w.inertia`, `w.force`.
    ///
    /// # Errors
    /// [`JointSpaceError::ZeroArticulatedInertia`] naming the joint.
    #[inline]
    pub(crate) fn aba_passes<D: Scalar>(
        &self,
        w: &mut TreeWork<D>,
        mut put: impl FnMut(&mut [D], usize, D),
    ) -> Result<(), JointSpaceError> {
        let nodes = &self.tree.nodes;
        let n = nodes.len();
        let z = D::from(0.0);
        w.inertia.fill([z; 6]);
        w.force.fill([z; 3]);
        // pass 2, each node's own inertia and bias force added to what its
        // children (later in the order) have passed up
        // the contribution of the node just done to its parent when that is
        // the next node (a chain), kept in registers
        let mut carry: Option<(Sym3<D>, Vec3<D>)> = None;
        for i in (0..n).rev() {
            let mut ia = w.inertia[i];
            let mut pa = w.force[i];
            if let Some((ci, cp)) = carry.take() {
                add_sym(&mut ia, &ci);
                pa = add(pa, cp);
            }
            add_sym(&mut ia, &self.node_inertia(w, i));
            let pa = add(pa, self.body_bias(w, i));
            let m = &w.motion[i];
            let s = m.s;
            let u = mul_sym(&ia, s);
            let d = dot3(s, u);
            // I^A is positive semi-definite: its trace bounds its entries
            if !(d.re() > 1e-12 * (ia[0] + ia[3] + ia[5]).re()) {
                return Err(JointSpaceError::ZeroArticulatedInertia {
                    joint: nodes[i].label.clone(),
                    value: d.re(),
                });
            }
            let inv_d = D::from(1.0) / d;
            let tau = w.joint_force[i] - dot3(s, pa);
            // pass 3 needs only U/D and (u − Uᵀc)/D: q'' = (u − Uᵀc)/D − (U/D)ᵀ a_p
            let u_d = scale(inv_d, u);
            w.u[i] = u_d;
            w.tau[i] = (tau - dot3(u, m.c)) * inv_d;
            if let Some(p) = nodes[i].parent {
                let ia = sub_outer(&ia, u, inv_d);
                let pa = add(add(pa, mul_sym(&ia, m.c)), scale(tau, u_d));
                if p + 1 == i {
                    carry = Some((ia, pa));
                } else {
                    add_sym(&mut w.inertia[p], &ia);
                    w.force[p] = add(w.force[p], pa);
                }
            }
        }
        // pass 3; a chain's parent acceleration stays in a register
        let root = self.root_acceleration::<D>();
        let mut last = root;
        for i in 0..n {
            let ap = match nodes[i].parent {
                Some(p) if p + 1 == i => last,
                Some(p) => w.acc[p],
                None => root,
            };
            let m = &w.motion[i];
            let qdd = w.tau[i] - dot3(w.u[i], ap);
            put(&mut w.a, i, qdd);
            let acc = add(add(ap, m.c), scale(qdd, m.s));
            w.acc[i] = acc;
            last = acc;
        }
        Ok(())
    }

    /// Recursive Newton–Euler inverse dynamics: `w.a` (in: q'') becomes
    /// τ = M q'' + C − Q at (t, `w.q`, `w.v`) (Featherstone Table 5.1 in
    /// the fixed frame: a_i = a_p + S_i q''_i + c_i,
    /// f_i = I_i a_i + v_i ×* I_i v_i − f^ext_i, τ_i = S_iᵀ f_i − Q_i
    /// with Q_i the joint forces (`joint_forces`),
    /// f_p += f_i).
    pub(crate) fn rnea<D: Scalar>(&self, t: f64, w: &mut TreeWork<D>) {
        self.kinematics_pass(w);
        self.force_pass(t, w);
        self.joint_force_pass(t, |i| w.q[i], |i| w.v[i], &mut w.joint_force);
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
            w.a[i] = dot3(w.motion[i].s, w.force[i]) - w.joint_force[i];
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
