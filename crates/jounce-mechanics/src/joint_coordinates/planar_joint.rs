//! [`PlanarJointSystem`]: a [`PlanarSystem`] in joint coordinates, the
//! [`JointCoordinateSystem`] of planar models.
//!
//! Built once from the body-coordinate system: its kinematic tree
//! ([`super::tree`]), one node per joint coordinate with the mass and
//! centroidal inertia of the body it carries (zero for the massless frames
//! of free joints), its force elements and its cut joints and drivers
//! re-addressed from bodies to nodes. Applied forces are the body system's
//! own force elements, evaluated element by element at the body poses and
//! velocities of forward kinematics and applied to the bodies as wrenches,
//! so every force element works unchanged (Q_joint = Jᵀ Q_body, done by the
//! recursions). Closure constraints are the body system's own constraint
//! elements evaluated at the forward-kinematics poses; their derivatives in
//! joint coordinates come from the same code in dual numbers.

use nalgebra::DMatrix;
use num_dual::{Dual2_64, Dual64};

use crate::constraints::ConstraintElement;
use crate::forces::ForceElement;
use crate::kinematics::Scalar;
use crate::planar::PlanarSystem;
use crate::system::MechanicalSystem;

use super::joint_forces::JointForce;
use super::kinematics::{node_coordinate, node_pose};
use super::small_tree::SMALL_TREE_MAX;
use super::system::{JointCoordinateSystem, JointData, JointSpaceError};
use super::tree::KinematicTree;
use super::work::{PlanarJointWork, TreeWork};

/// A planar system in joint coordinates (immutable after construction).
#[derive(Clone, Debug, PartialEq)]
pub struct PlanarJointSystem {
    pub(crate) tree: KinematicTree,
    /// Mass of each node's body (0 for a massless frame).
    pub(crate) mass: Vec<f64>,
    /// Centroidal inertia of each node's body.
    pub(crate) inertia: Vec<f64>,
    /// Gravity.
    pub(crate) gravity: [f64; 2],
    /// Force elements with bodies given as nodes, applied to the bodies.
    pub(crate) forces: Vec<ForceElement>,
    /// Force elements applied to one joint coordinate (rotational springs
    /// across revolute tree joints).
    pub(crate) joint_forces: Vec<JointForce>,
    /// Cut joints and drivers with bodies given as nodes, rows renumbered.
    pub(crate) cut: Vec<ConstraintElement>,
    /// Number of closure constraint rows.
    nc: usize,
    /// (element, row within it) of each closure row.
    row_owner: Vec<(usize, usize)>,
    /// Number of body coordinates.
    body_nq: usize,
    /// No gravity and no force element on the bodies (only forces on joint
    /// coordinates): nothing depends on the absolute orientation, so the
    /// joint-space dynamics are invariant under a rotation of the whole
    /// system about a root revolute joint's ground point, and q'' does not
    /// depend on that joint's angle (`small_tree` then evaluates the
    /// kinematics with it at zero, one sine and cosine fewer).
    pub(crate) rotation_invariant: bool,
    breakpoints: Vec<f64>,
}

impl PlanarJointSystem {
    /// The joint-coordinate form of `sys`.
    pub fn new(sys: &PlanarSystem) -> PlanarJointSystem {
        let elements = sys.constraint_elements();
        let tree = KinematicTree::build(sys.body_names(), elements);
        let n = tree.nodes.len();
        let (mut mass, mut inertia) = (vec![0.0; n], vec![0.0; n]);
        for (b, &k) in tree.body_node.iter().enumerate() {
            mass[k] = sys.masses()[b];
            inertia[k] = sys.inertias()[b];
        }
        let to_nodes = |bodies: [Option<usize>; 2]| bodies.map(|b| b.map(|b| tree.body_node[b]));
        let (mut forces, mut joint_forces) = (Vec::new(), Vec::new());
        for f in sys.force_elements() {
            let bodies = to_nodes(f.bodies);
            match JointForce::across_tree_joint(&tree, f, bodies) {
                Some(jf) => joint_forces.push(jf),
                None => forces.push(ForceElement {
                    bodies,
                    ..f.clone()
                }),
            }
        }
        let mut row = 0;
        let mut cut = Vec::new();
        let mut row_owner = Vec::new();
        for &e in &tree.cut {
            let el = &elements[e];
            for r in 0..el.rows() {
                row_owner.push((cut.len(), r));
            }
            cut.push(ConstraintElement {
                bodies: to_nodes(el.bodies),
                row,
                ..el.clone()
            });
            row += el.rows();
        }
        let rotation_invariant = sys.gravity() == [0.0, 0.0] && forces.is_empty();

        PlanarJointSystem {
            tree,
            mass,
            inertia,
            gravity: sys.gravity(),
            forces,
            joint_forces,
            cut,
            nc: row,
            row_owner,
            body_nq: sys.nq(),
            rotation_invariant,
            breakpoints: sys.breakpoints(),
        }
    }

    /// Number of tree nodes (= joint coordinates).
    pub fn node_count(&self) -> usize {
        self.tree.nodes.len()
    }

    /// Number of closure constraint rows.
    pub(crate) fn closure_rows(&self) -> usize {
        self.nc
    }

    /// Name of closure row `r`.
    pub(crate) fn closure_label(&self, r: usize) -> String {
        JointCoordinateSystem::constraint_label(self, r)
    }

    /// Node poses from joint positions `q` (positions only, O(N)).
    pub(crate) fn pose_pass<D: Scalar>(&self, q: impl Fn(usize) -> D, poses: &mut [[D; 3]]) {
        let z = D::from(0.0);
        for (i, n) in self.tree.nodes.iter().enumerate() {
            let pp = n.parent.map_or([z; 3], |p| poses[p]);
            poses[i] = node_pose(n, pp, q(i));
        }
    }

    /// Φ of every cut element at node poses `poses` and time `t`, the
    /// driver values from `f` ((f, f', f'') → scalar).
    pub(crate) fn closure_pass<D: Scalar>(
        &self,
        t: f64,
        poses: &[[D; 3]],
        f: impl Fn((f64, f64, f64)) -> D,
        mut put: impl FnMut(usize, D),
    ) {
        let z = D::from(0.0);
        for el in &self.cut {
            let mut x = [z; 6];
            for (side, node) in el.bodies.iter().enumerate() {
                if let Some(k) = node {
                    x[3 * side..3 * side + 3].copy_from_slice(&poses[*k]);
                }
            }
            let mut out = [z; 3];
            el.eval(&x, f(el.driver_value(t)), &mut out);
            for r in 0..el.rows() {
                put(el.row + r, out[r]);
            }
        }
    }

    fn load(w: &mut TreeWork<f64>, q: &[f64], v: &[f64]) {
        w.q.copy_from_slice(q);
        w.v.copy_from_slice(v);
    }
}

impl JointCoordinateSystem for PlanarJointSystem {
    fn nq(&self) -> usize {
        self.tree.nodes.len()
    }

    fn nc(&self) -> usize {
        self.nc
    }

    fn body_nq(&self) -> usize {
        self.body_nq
    }

    fn data(&self) -> JointData {
        JointData {
            planar: PlanarJointWork::new(self.tree.nodes.len(), self.nc),
            spatial: None,
            baumgarte: [0.0, 0.0],
        }
    }

    fn coordinate_label(&self, i: usize) -> String {
        match self.tree.nodes.get(i) {
            Some(n) => format!("{} ({})", n.label, n.coordinate),
            None => format!("joint coordinate {i} (out of range)"),
        }
    }

    fn constraint_label(&self, r: usize) -> String {
        match self.row_owner.get(r) {
            Some(&(e, k)) => self.cut[e].row_label(k),
            None => format!("closure constraint {r} (out of range)"),
        }
    }

    fn breakpoints(&self) -> Vec<f64> {
        self.breakpoints.clone()
    }

    fn joint_state(
        &self,
        data: &mut JointData,
        body_q: &[f64],
        body_v: &[f64],
        tol: f64,
        q: &mut [f64],
        v: &mut [f64],
    ) -> Result<(), JointSpaceError> {
        let nodes = &self.tree.nodes;
        let z = Dual64::from(0.0);
        // body poses with their velocities as derivatives
        let body = |k: usize| -> [Dual64; 3] {
            let b = nodes[k].body.expect("a node with a body");
            std::array::from_fn(|j| Dual64::new(body_q[3 * b + j], body_v[3 * b + j]))
        };
        let poses = &mut data.planar.pose_dual;
        for (i, n) in nodes.iter().enumerate() {
            let pp = n.parent.map_or([z; 3], |p| poses[p]);
            let pc = match (n.body, n.coordinate) {
                (Some(_), _) => body(i),
                // the massless frames of a free joint: (x, 0, 0), (x, y, 0)
                (None, "x") => {
                    let b = body(i + 2);
                    [b[0], z, z]
                }
                (None, _) => {
                    let b = body(i + 1);
                    [b[0], b[1], z]
                }
            };
            poses[i] = pc;
            let c = node_coordinate(n, pp, pc);
            q[i] = c.re;
            v[i] = c.eps;
        }
        // forward kinematics must give the bodies back
        let max_abs = |x: &[f64]| x.iter().fold(1.0_f64, |m, x| m.max(x.abs()));
        let (q_scale, v_scale) = (max_abs(body_q), max_abs(body_v));
        let w = &mut data.planar.re;
        Self::load(w, q, v);
        self.kinematics_pass(w);
        for (i, n) in nodes.iter().enumerate() {
            let Some(b) = n.body else { continue };
            let m = &w.motion[i];
            let mut res: f64 = 0.0;
            for j in 0..3 {
                res = res.max((m.pose[j] - body_q[3 * b + j]).abs() / q_scale);
                res = res.max((m.vel[j] - body_v[3 * b + j]).abs() / v_scale);
            }
            if !(res <= tol) {
                return Err(JointSpaceError::Inconsistent {
                    joint: n.label.clone(),
                    residual: res,
                });
            }
        }
        Ok(())
    }

    fn body_state(
        &self,
        data: &mut JointData,
        q: &[f64],
        v: &[f64],
        body_q: &mut [f64],
        body_v: &mut [f64],
    ) {
        let w = &mut data.planar.re;
        Self::load(w, q, v);
        self.kinematics_pass(w);
        for (b, &k) in self.tree.body_node.iter().enumerate() {
            body_q[3 * b..3 * b + 3].copy_from_slice(&w.motion[k].pose);
            body_v[3 * b..3 * b + 3].copy_from_slice(&w.motion[k].vel);
        }
    }

    /// The kinematics pass in first-order duals along the motion,
    /// q(s) = q + v s, v(s) = v + a s: the derivative of each body's
    /// velocity is its acceleration.
    fn body_acceleration(
        &self,
        data: &mut JointData,
        q: &[f64],
        v: &[f64],
        a: &[f64],
        body_a: &mut [f64],
    ) {
        let w = &mut data.planar.dual;
        for i in 0..q.len() {
            w.q[i] = Dual64::new(q[i], v[i]);
            w.v[i] = Dual64::new(v[i], a[i]);
        }
        self.kinematics_pass(w);
        for (b, &k) in self.tree.body_node.iter().enumerate() {
            for j in 0..3 {
                body_a[3 * b + j] = w.motion[k].vel[j].eps;
            }
        }
    }

    fn forward_dynamics(
        &self,
        data: &mut JointData,
        t: f64,
        q: &[f64],
        v: &[f64],
        a: &mut [f64],
    ) -> Result<(), JointSpaceError> {
        if self.nc > 0 {
            let baumgarte = data.baumgarte;
            let w = &mut data.planar.kkt;
            Self::load(&mut w.tree, q, v);
            self.kkt_dynamics(t, w, baumgarte)?;
            a.copy_from_slice(&w.sol[..q.len()]);
            return Ok(());
        }
        // straight from the caller's slices to theirs: no copies
        let w = &mut data.planar.re;
        if q.len() <= SMALL_TREE_MAX {
            return self.small_tree_dynamics(t, q, v, a);
        }
        self.kinematics_pass_from(|i| q[i], |i| v[i], &mut w.motion);
        self.force_pass(t, w);
        self.joint_force_pass(t, |i| q[i], |i| v[i], &mut w.joint_force);
        self.aba_passes(w, |_, i, qdd| a[i] = qdd)
    }

    fn forward_dynamics_jacobians(
        &self,
        data: &mut JointData,
        t: f64,
        q: &[f64],
        v: &[f64],
        da_dq: &mut DMatrix<f64>,
        da_dv: &mut DMatrix<f64>,
    ) -> Result<(), JointSpaceError> {
        let n = q.len();
        let baumgarte = data.baumgarte;
        for (seed_q, out) in [(true, da_dq), (false, da_dv)] {
            for j in 0..n {
                let seed = |i: usize, x: &[f64], on: bool| {
                    Dual64::new(x[i], if on && i == j { 1.0 } else { 0.0 })
                };
                if self.nc > 0 {
                    let w = &mut data.planar.kkt_dual;
                    for i in 0..n {
                        w.tree.q[i] = seed(i, q, seed_q);
                        w.tree.v[i] = seed(i, v, !seed_q);
                    }
                    self.kkt_dynamics(t, w, baumgarte)?;
                    for i in 0..n {
                        out[(i, j)] = w.sol[i].eps;
                    }
                } else {
                    let w = &mut data.planar.dual;
                    for i in 0..n {
                        w.q[i] = seed(i, q, seed_q);
                        w.v[i] = seed(i, v, !seed_q);
                    }
                    self.aba(t, w)?;
                    for i in 0..n {
                        out[(i, j)] = w.a[i].eps;
                    }
                }
            }
        }
        Ok(())
    }

    fn mass_matrix(&self, data: &mut JointData, q: &[f64], m: &mut DMatrix<f64>) {
        let w = &mut data.planar.re;
        w.q.copy_from_slice(q);
        w.v.iter_mut().for_each(|x| *x = 0.0);
        self.kinematics_pass(w);
        // M is symmetric: its row-major and column-major storage agree
        self.crba(w, m.as_mut_slice());
    }

    fn bias_forces(&self, data: &mut JointData, t: f64, q: &[f64], v: &[f64], f: &mut [f64]) {
        let w = &mut data.planar.re;
        Self::load(w, q, v);
        w.a.iter_mut().for_each(|x| *x = 0.0);
        self.rnea(t, w);
        for (fi, ti) in f.iter_mut().zip(&w.a) {
            *fi = -ti;
        }
    }

    fn inverse_dynamics(
        &self,
        data: &mut JointData,
        t: f64,
        q: &[f64],
        v: &[f64],
        a: &[f64],
        tau: &mut [f64],
    ) {
        let w = &mut data.planar.re;
        Self::load(w, q, v);
        w.a.copy_from_slice(a);
        self.rnea(t, w);
        tau.copy_from_slice(&w.a);
    }

    fn inverse_dynamics_jacobians(
        &self,
        data: &mut JointData,
        t: f64,
        q: &[f64],
        v: &[f64],
        a: &[f64],
        k: &mut DMatrix<f64>,
        c: &mut DMatrix<f64>,
    ) {
        let n = q.len();
        let w = &mut data.planar.dual;
        for (seed_q, out) in [(true, k), (false, c)] {
            for j in 0..n {
                for i in 0..n {
                    let e = if i == j { 1.0 } else { 0.0 };
                    w.q[i] = Dual64::new(q[i], if seed_q { e } else { 0.0 });
                    w.v[i] = Dual64::new(v[i], if seed_q { 0.0 } else { e });
                    w.a[i] = Dual64::from(a[i]);
                }
                self.rnea(t, w);
                for i in 0..n {
                    out[(i, j)] = w.a[i].eps;
                }
            }
        }
    }

    fn constraints(&self, data: &mut JointData, t: f64, q: &[f64], phi: &mut [f64]) {
        let poses = &mut data.planar.re;
        let mut buf = std::mem::take(&mut poses.body_force);
        self.pose_pass(|i| q[i], &mut buf);
        self.closure_pass(t, &buf, |f| f.0, |r, x| phi[r] = x);
        data.planar.re.body_force = buf;
    }

    fn constraint_jacobian(&self, data: &mut JointData, t: f64, q: &[f64], jac: &mut DMatrix<f64>) {
        let poses = &mut data.planar.pose_dual;
        for j in 0..q.len() {
            self.pose_pass(|i| Dual64::new(q[i], if i == j { 1.0 } else { 0.0 }), poses);
            self.closure_pass(t, poses, |f| Dual64::from(f.0), |r, x| jac[(r, j)] = x.eps);
        }
    }

    fn gamma(&self, data: &mut JointData, t: f64, q: &[f64], v: &[f64], gamma: &mut [f64]) {
        let poses = &mut data.planar.pose_dual2;
        self.pose_pass(|i| Dual2_64::new(q[i], v[i], 0.0), poses);
        self.closure_pass(
            t,
            poses,
            |f| Dual2_64::new(f.0, f.1, f.2),
            |r, x| gamma[r] = -x.v2,
        );
    }
}
