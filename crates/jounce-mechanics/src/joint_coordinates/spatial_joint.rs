//! [`SpatialJointSystem`]: a [`SpatialSystem`] in joint coordinates, the
//! [`JointCoordinateSystem`] of spatial models, with Featherstone's O(N)
//! recursions in 6-D spatial vector algebra (*Rigid Body Dynamics
//! Algorithms*, Springer 2008; "RBDA" below).
//!
//! **Spatial vectors** (RBDA ch. 2) are all expressed in the world frame
//! at its origin O, so that no coordinate transform appears between
//! bodies and the time derivative of a vector fixed in a body moving with
//! spatial velocity v is v × m (RBDA eq. 2.38 with the fixed frame of
//! sec. 2.9). A motion vector is m = (ω, v_O), v_O the velocity of the
//! body point at O; a force vector is f = (n_O, f). Cross products
//! (RBDA eqs. 2.31–2.33):
//!
//! ```text
//! v × m  = (ω × m_ω,  ω × m_v + v_O × m_ω)
//! v ×* f = (ω × f_n + v_O × f_f,  ω × f_f)
//! ```
//!
//! and the spatial inertia of a body of mass m, centroidal inertia I_c
//! (world axes) and centre of mass c (RBDA eq. 2.63):
//! I = [I_c + m c× c×ᵀ, m c×; m c×ᵀ, m 1].
//!
//! **Joints** (RBDA ch. 4). Every tree node has one joint coordinate or
//! none, with the motion subspace S (RBDA Table 4.1 in the fixed frame):
//! revolute about the unit axis u through the point o, S = (u, o × u);
//! prismatic along u, S = (0, u); fixed, S = {}. A cylindrical joint is a
//! revolute and a prismatic node, a universal joint two revolute nodes,
//! joined by a massless frame, one coordinate per freedom. Each such S is
//! fixed in the parent frame of its node, so c = Ṡ q' = (v_parent × S) q'
//! (RBDA ch. 4; a motion vector fixed in a body moving with v changes at
//! the rate v × m, ch. 2).
//!
//! **Spherical joints** (RBDA sec. 4.5 and Table 4.1, "spherical", with
//! a unit quaternion): one node with the positions p, the unit quaternion
//! of the child frame relative to the frame A_P A₀ of the parent, A_C =
//! A_P A₀ R(p), and the rates ω', the relative angular velocity in the
//! child frame, ṗ = ½ p ⊗ (0, ω') (n_q = n_v + 1, as for the free joint
//! below): no orientation is singular, unlike three Cardan angles. Its
//! motion subspace in the child frame is S = [1 0]ᵀ at the joint point;
//! in the fixed frame the columns S_k = (A_C e_k, o × A_C e_k), o the
//! joint point. S is fixed in the child frame, so Ṡ = v_child × S and
//! c = Ṡ ω' = v_child × S ω' = v_parent × S ω' (v_child = v_parent + S ω'
//! and S ω' × S ω' = 0): the same c = (v_parent × S) q' as for the others.
//!
//! The zero of every joint coordinate is the model's initial
//! configuration (for a URDF, the URDF's zero configuration); of a
//! spherical joint's quaternion, p = (1, 0, 0, 0).
//!
//! **Algorithms**: forward dynamics by the articulated-body algorithm
//! (RBDA Table 7.1, in the fixed frame as RBDA sec. 7.3 suggests for
//! "absolute" coordinates), the mass matrix by the composite-rigid-body
//! algorithm (RBDA Table 6.2), inverse dynamics and the bias forces by
//! recursive Newton–Euler (RBDA Table 5.1). Gravity enters as the
//! fictitious acceleration a₀ = −a_g of ground (RBDA sec. 5.3).
//!
//! **Applied forces.** The gravity and the gyroscopic moment of the body
//! system are the recursions' own (a₀ and v ×* I v). Every other force
//! element (point forces, torques, spring-dampers, and any element the
//! body system gains) is evaluated by the body system itself,
//! [`MechanicalSystem::generalized_forces`] at the body state of forward
//! kinematics, minus its weight and gyroscopic part, and applied to each
//! body as a wrench at O — which is Q_joint = J(q)ᵀ Q_body, correct for
//! any force element.
//!
//! **The tree and closed loops.** The tree is the spanning tree from
//! ground that keeps the most joint equations (Kruskal over the joints by
//! their number of equations, so that the fewest rows are cut); the other
//! joints, and every distance joint, are cut joints whose equations are
//! closure constraints Φ(q) = Φ_body(x(q)): the body system's own joint
//! functions ([`MechanicalSystem::constraints`]) at the poses of forward
//! kinematics, Φ_q = Φ_x J(q) (J the body velocities per joint rate) and
//! γ = γ_body − Φ_x J̇ v. With cut joints q'' solves the dense KKT system
//! [M Φ_qᵀ; Φ_q 0][q''; λ] = [f; γ] (M by CRBA, f by RNEA), with optional
//! Baumgarte terms.
//!
//! **Free joints** (RBDA sec. 4.5, floating bases, and Table 4.1). A body
//! the tree from ground does not reach (a free body, or one held only by
//! cut joints) is the root of its own tree, joined to ground by a free
//! joint with the positions (r, p) — its reference point in the world and
//! its unit quaternion — and the rates ν = (ṙ, ω'), ω' in the body frame,
//! as in the body coordinates of [`SpatialSystem`]. Its motion subspace
//! in the fixed frame is S(q) ν = (A ω', ṙ + r × A ω') and c = Ṡ ν =
//! (0, −ω × ṙ); the articulated-body algorithm solves the root as a
//! floating base, I^A a + p^A = 0 (RBDA sec. 9.3). Then n_q = n_v + 1 per
//! free or spherical joint, q' = T(q) v
//! ([`JointCoordinateSystem::position_derivative`], ṗ = ½ p ⊗ (0, ω'))
//! and q ⊕ δ the exponential map
//! ([`JointCoordinateSystem::integrate_position`]), p normalised.
//!
//! **Jacobians** ([`JointCoordinateSystem::forward_dynamics_jacobians`],
//! [`JointCoordinateSystem::inverse_dynamics_jacobians`]) are by central
//! finite differences of the O(N) recursions (and of the KKT solve with
//! cut joints) — a documented stopgap (relative error about 1e-9, 2n
//! evaluations) until the recursions are made generic over the scalar as
//! the planar ones are. Φ_q and γ are exact (the body system's exact
//! derivatives composed with forward kinematics).

use nalgebra::{DMatrix, Matrix3, Matrix6, Matrix6x3, Vector3, Vector6};

use crate::spatial::body::{retract, NQ_BODY, NV_BODY};
use crate::spatial::quaternion::{product, quaternion_rate, rotation, turn};
use crate::spatial::SpatialSystem;
use crate::system::MechanicalSystem;
use jounce_model::SpatialJointKind;

use super::spatial_work::SpatialJointWork;
use super::system::{JointCoordinateSystem, JointData, JointSpaceError};
use super::work::PlanarJointWork;

/// The motion of one tree node relative to its parent.
#[derive(Clone, Copy, Debug, PartialEq)]
enum NodeKind {
    /// Rotation about the parent-frame axis h through s_P.
    Revolute,
    /// Translation along the parent-frame axis h.
    Prismatic,
    /// No motion.
    Fixed,
    /// Six freedoms relative to ground (a tree's root only): positions
    /// (r, p), r the body's reference point in the world and p its unit
    /// quaternion, rates ν = (ṙ, ω') with ω' in the body frame.
    Free,
    /// Rotation about the joint point s_P: positions p, the unit
    /// quaternion of the child frame relative to A_P A₀ (A_C = A_P A₀
    /// R(p)), rates ω', the relative angular velocity in the child frame
    /// (RBDA Table 4.1, spherical).
    Spherical,
}

/// A tree node: one rigid frame (a body's, or a massless frame between
/// the single-axis factors of a cylindrical or universal joint) and the
/// joint coordinates that move it relative to its parent:
///
/// ```text
/// A_C = A_P Rot(h, q) A₀  (revolute),   A_P A₀ R(p)  (spherical),
///       A_P A₀  (prismatic, fixed),
/// o   = r_P + A_P (s_P + h q [prismatic]),   r_C = o − A_C s_C.
/// ```
#[derive(Clone, Debug, PartialEq)]
struct Node {
    parent: Option<usize>,
    /// The body this node's frame is (`None`: a massless frame).
    body: Option<usize>,
    kind: NodeKind,
    /// Axis, parent frame, unit.
    h: [f64; 3],
    /// Joint point on the parent, parent frame (ground: world).
    s_p: [f64; 3],
    /// Joint point on the child, child frame.
    s_c: [f64; 3],
    /// A₀ as a quaternion.
    p0: [f64; 4],
    /// Index of the (first) joint rate (`None`: fixed).
    dof: Option<usize>,
    /// Index of the (first) joint position (`None`: fixed); differs from
    /// `dof` after a free (7 positions, 6 rates) or spherical (4
    /// positions, 3 rates) joint.
    qdof: Option<usize>,
    /// e.g. `joint 'elbow' (angle)`.
    label: String,
}

/// The kinds of tree joints.
#[derive(Clone, Copy, Debug, PartialEq)]
enum TreeKind {
    Revolute,
    Prismatic,
    Cylindrical,
    Universal,
    Spherical,
    Fixed,
    /// The implicit root joint of a body not joined to ground.
    Free,
}

/// A tree joint of the body system: its nodes and coordinates.
#[derive(Clone, Debug, PartialEq)]
struct TreeJoint {
    name: String,
    kind: TreeKind,
    /// Parent body (`None`: ground) and child body.
    parent: Option<usize>,
    child: usize,
    /// First node and number of nodes (the last carries the child body).
    first_node: usize,
    n_nodes: usize,
    /// First rate and number of rates, first position.
    first_dof: usize,
    n_dof: usize,
    first_q: usize,
    /// The axes (parent frame) of the single-axis factors.
    axes: [[f64; 3]; 3],
    /// A₀ = A_P₀ᵀ A_C₀ of the whole joint.
    a0: Matrix3<f64>,
    /// Joint point on the parent (with the start offset of a sliding
    /// joint), parent frame; on the child, child frame.
    s_p: [f64; 3],
    s_c: [f64; 3],
}

/// A spatial system in joint coordinates (immutable after construction).
#[derive(Clone, Debug)]
pub struct SpatialJointSystem {
    sys: SpatialSystem,
    nodes: Vec<Node>,
    joints: Vec<TreeJoint>,
    /// Node of each body.
    body_node: Vec<usize>,
    /// Mass and centroidal inertia (body frame) of each node (0 for
    /// massless frames).
    mass: Vec<f64>,
    inertia: Vec<Matrix3<f64>>,
    gravity: Vector3<f64>,
    /// Number of joint rates n_v.
    ndof: usize,
    /// Number of joint positions n_q (n_v + 1 per free joint).
    npos: usize,
    /// Force elements other than weight and gyroscopic moment exist.
    has_forces: bool,
    /// Why the system has no joint coordinates (a body the tree does not
    /// reach).
    unsupported: Option<JointSpaceError>,
    /// Body-system constraint rows of the cut joints, in order: the
    /// closure constraints.
    cut_rows: Vec<usize>,
}

fn v3(a: &[f64; 3]) -> Vector3<f64> {
    Vector3::new(a[0], a[1], a[2])
}

fn arr(a: &Vector3<f64>) -> [f64; 3] {
    [a[0], a[1], a[2]]
}

fn mat(a: &[[f64; 3]; 3]) -> Matrix3<f64> {
    Matrix3::from_fn(|i, j| a[i][j])
}

fn unit(a: &[f64; 3]) -> [f64; 3] {
    let n = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
    if n > 0.0 {
        a.map(|x| x / n)
    } else {
        *a
    }
}

/// Quaternion (w, x, y, z) of a rotation matrix (Shepperd's method).
fn quat_of(m: &Matrix3<f64>) -> [f64; 4] {
    let tr = m.trace();
    let q = if tr > 0.0 {
        let s = (tr + 1.0).sqrt() * 2.0;
        [
            0.25 * s,
            (m[(2, 1)] - m[(1, 2)]) / s,
            (m[(0, 2)] - m[(2, 0)]) / s,
            (m[(1, 0)] - m[(0, 1)]) / s,
        ]
    } else if m[(0, 0)] > m[(1, 1)] && m[(0, 0)] > m[(2, 2)] {
        let s = (1.0 + m[(0, 0)] - m[(1, 1)] - m[(2, 2)]).sqrt() * 2.0;
        [
            (m[(2, 1)] - m[(1, 2)]) / s,
            0.25 * s,
            (m[(0, 1)] + m[(1, 0)]) / s,
            (m[(0, 2)] + m[(2, 0)]) / s,
        ]
    } else if m[(1, 1)] > m[(2, 2)] {
        let s = (1.0 + m[(1, 1)] - m[(0, 0)] - m[(2, 2)]).sqrt() * 2.0;
        [
            (m[(0, 2)] - m[(2, 0)]) / s,
            (m[(0, 1)] + m[(1, 0)]) / s,
            0.25 * s,
            (m[(1, 2)] + m[(2, 1)]) / s,
        ]
    } else {
        let s = (1.0 + m[(2, 2)] - m[(0, 0)] - m[(1, 1)]).sqrt() * 2.0;
        [
            (m[(1, 0)] - m[(0, 1)]) / s,
            (m[(0, 2)] + m[(2, 0)]) / s,
            (m[(1, 2)] + m[(2, 1)]) / s,
            0.25 * s,
        ]
    };
    let n = q.iter().map(|x| x * x).sum::<f64>().sqrt();
    q.map(|x| x / n)
}

fn to_mat(a: &[[f64; 3]; 3]) -> Matrix3<f64> {
    mat(a)
}

/// Rotation matrix of a quaternion, nalgebra.
fn rot_of(p: &[f64; 4]) -> Matrix3<f64> {
    to_mat(&rotation(p))
}

/// Rotation about the unit axis h by θ as a quaternion.
fn axis_angle(h: &[f64; 3], theta: f64) -> [f64; 4] {
    let (s, c) = (0.5 * theta).sin_cos();
    [c, s * h[0], s * h[1], s * h[2]]
}

/// v × m (RBDA eq. 2.31).
#[inline]
pub(crate) fn cross_motion(v: &Vector6<f64>, m: &Vector6<f64>) -> Vector6<f64> {
    let (w, vo) = (v.fixed_rows::<3>(0), v.fixed_rows::<3>(3));
    let (mw, mv) = (m.fixed_rows::<3>(0), m.fixed_rows::<3>(3));
    let a = w.cross(&mw);
    let b = w.cross(&mv) + vo.cross(&mw);
    Vector6::new(a[0], a[1], a[2], b[0], b[1], b[2])
}

/// v ×* f (RBDA eq. 2.32).
#[inline]
pub(crate) fn cross_force(v: &Vector6<f64>, f: &Vector6<f64>) -> Vector6<f64> {
    let (w, vo) = (v.fixed_rows::<3>(0), v.fixed_rows::<3>(3));
    let (fnn, ff) = (f.fixed_rows::<3>(0), f.fixed_rows::<3>(3));
    let a = w.cross(&fnn) + vo.cross(&ff);
    let b = w.cross(&ff);
    Vector6::new(a[0], a[1], a[2], b[0], b[1], b[2])
}

fn six(a: &Vector3<f64>, b: &Vector3<f64>) -> Vector6<f64> {
    Vector6::new(a[0], a[1], a[2], b[0], b[1], b[2])
}

/// Spatial inertia at O of mass m, centroidal inertia `ic` (world axes),
/// centre of mass c (RBDA eq. 2.63).
pub(crate) fn inertia_at_origin(m: f64, ic: &Matrix3<f64>, c: &Vector3<f64>) -> Matrix6<f64> {
    let cx = c.cross_matrix();
    let mut out = Matrix6::zeros();
    out.fixed_view_mut::<3, 3>(0, 0)
        .copy_from(&(ic + cx * cx.transpose() * m));
    out.fixed_view_mut::<3, 3>(0, 3).copy_from(&(cx * m));
    out.fixed_view_mut::<3, 3>(3, 0)
        .copy_from(&(cx.transpose() * m));
    out.fixed_view_mut::<3, 3>(3, 3)
        .copy_from(&(Matrix3::identity() * m));
    out
}

/// The motion subspace of a free joint in the fixed frame: the columns
/// S_k with V = S ν for the rates ν = (ṙ, ω') of a body at r with
/// rotation A: V = (ω, ṙ + r × ω), ω = A ω' (RBDA Table 4.1, the free
/// joint, with the body-frame angular and world linear rates of the body
/// coordinates; V at the world origin, RBDA sec. 2.9), so that
/// S_k = (0, e_k) for ṙ_k and (A e_k, r × A e_k) for ω'_k.
fn free_subspace(a: &Matrix3<f64>, r: &Vector3<f64>) -> [Vector6<f64>; 6] {
    std::array::from_fn(|k| {
        if k < 3 {
            let mut e = Vector3::zeros();
            e[k] = 1.0;
            six(&Vector3::zeros(), &e)
        } else {
            let h = a.column(k - 3).into_owned();
            six(&h, &r.cross(&h))
        }
    })
}

/// The rates ν = (ṙ, ω') of a free joint with spatial velocity V = (ω,
/// v_O) (the inverse of [`free_subspace`]): ṙ = v_O + ω × r, ω' = Aᵀ ω.
fn free_rates(a: &Matrix3<f64>, r: &Vector3<f64>, v: &Vector6<f64>) -> [f64; 6] {
    let w = Vector3::new(v[0], v[1], v[2]);
    let rdot = Vector3::new(v[3], v[4], v[5]) + w.cross(r);
    let wb = a.transpose() * w;
    [rdot[0], rdot[1], rdot[2], wb[0], wb[1], wb[2]]
}

/// Sᵀ f of a free joint for the force f = (n_O, f) at the world origin:
/// (f, Aᵀ (n_O − r × f)), the force and the moment about r in the body
/// frame.
fn free_forces(a: &Matrix3<f64>, r: &Vector3<f64>, f: &Vector6<f64>) -> [f64; 6] {
    let ff = Vector3::new(f[3], f[4], f[5]);
    let n = a.transpose() * (Vector3::new(f[0], f[1], f[2]) - r.cross(&ff));
    [ff[0], ff[1], ff[2], n[0], n[1], n[2]]
}

/// Angle θ of a rotation W = Rot(h, θ) about the unit axis h.
fn angle_about(w: &Matrix3<f64>, h: &Vector3<f64>) -> f64 {
    let vee = Vector3::new(
        w[(2, 1)] - w[(1, 2)],
        w[(0, 2)] - w[(2, 0)],
        w[(1, 0)] - w[(0, 1)],
    );
    (0.5 * h.dot(&vee)).atan2(0.5 * (w.trace() - 1.0))
}

impl SpatialJointSystem {
    /// The joint-coordinate form of `sys`: its kinematic tree (nodes
    /// breadth first from ground) and cut joints. A body the tree does not
    /// reach gives a system whose [`JointCoordinateSystem::joint_state`]
    /// fails naming it (see the module documentation).
    pub fn new(sys: &SpatialSystem) -> SpatialJointSystem {
        let nb = sys.body_count();
        let mut out = SpatialJointSystem {
            sys: sys.clone(),
            nodes: Vec::new(),
            joints: Vec::new(),
            body_node: vec![0; nb],
            mass: Vec::new(),
            inertia: Vec::new(),
            gravity: v3(&sys.gravity),
            ndof: 0,
            npos: 0,
            has_forces: !sys.forces.is_empty(),
            unsupported: None,
            cut_rows: Vec::new(),
        };
        if let Err(e) = out.build() {
            out.nodes.clear();
            out.joints.clear();
            out.mass.clear();
            out.inertia.clear();
            out.ndof = 0;
            out.npos = 0;
            out.cut_rows.clear();
            out.unsupported = Some(e);
        }
        out
    }

    fn build(&mut self) -> Result<(), JointSpaceError> {
        let sys = &self.sys.clone();
        let nb = sys.body_count();
        let (q0, _) = sys.initial_state();
        let pose0 = |b: Option<usize>| -> (Matrix3<f64>, Vector3<f64>) {
            match b {
                None => (Matrix3::identity(), Vector3::zeros()),
                Some(b) => {
                    let x = &q0[NQ_BODY * b..NQ_BODY * (b + 1)];
                    (
                        rot_of(&[x[3], x[4], x[5], x[6]]),
                        Vector3::new(x[0], x[1], x[2]),
                    )
                }
            }
        };
        let unsupported = |joint: &str, problem: String| JointSpaceError::Unsupported {
            joint: format!("joint '{joint}'"),
            problem,
        };
        // the spanning tree that keeps the most constraint equations in
        // the tree (Kruskal over the joints by equations, descending; in
        // model order among equals), so that the fewest closure rows are
        // cut; a distance joint is always cut
        let ground = nb;
        let mut comp: Vec<usize> = (0..=nb).collect();
        fn find(c: &mut [usize], mut x: usize) -> usize {
            while c[x] != x {
                c[x] = c[c[x]];
                x = c[x];
            }
            x
        }
        let end = |b: Option<usize>| b.unwrap_or(ground);
        // joints only: the drivers (after them) are always cut, one row each
        let mut order: Vec<usize> = (0..sys.joint_count).collect();
        order.sort_by_key(|&j| std::cmp::Reverse(sys.joints[j].kind.equations()));
        let mut in_tree = vec![false; sys.joints.len()];
        let mut cut: Vec<usize> = (sys.joint_count..sys.joints.len()).collect();
        for j in order {
            let el = &sys.joints[j];
            let (a, b) = (end(el.bodies[0]), end(el.bodies[1]));
            if a == b {
                return Err(unsupported(
                    &el.name,
                    "joins a body (or ground) to itself; nothing to move".into(),
                ));
            }
            let (ra, rb) = (find(&mut comp, a), find(&mut comp, b));
            if ra == rb
                || matches!(
                    el.kind,
                    SpatialJointKind::Distance { .. } | SpatialJointKind::PointOnLine { .. }
                )
            {
                cut.push(j);
            } else {
                comp[ra] = rb;
                in_tree[j] = true;
            }
        }
        // first body-system row of each joint
        let mut first_row = Vec::with_capacity(sys.joints.len());
        let mut rows = 0;
        for el in &sys.joints {
            first_row.push(rows);
            rows += el.equations();
        }
        // the tree's nodes, breadth first from ground; then each body the
        // ground's tree does not reach is the root of its own tree, joined
        // to ground by a free joint (RBDA sec. 4.5, floating bases), in
        // model order
        let mut visited = vec![false; nb];
        let mut queue: std::collections::VecDeque<Option<usize>> = [None].into();
        loop {
            let Some(x) = queue.pop_front() else {
                let Some(root) = visited.iter().position(|v| !v) else {
                    break;
                };
                visited[root] = true;
                self.add_free_joint(root, &pose0);
                queue.push_back(Some(root));
                continue;
            };
            for (j, el) in sys.joints.iter().enumerate() {
                if !in_tree[j] {
                    continue;
                }
                let (a, b) = (el.bodies[0], el.bodies[1]);
                let (parent_side, child) = if a == x {
                    (0, b)
                } else if b == x {
                    (1, a)
                } else {
                    continue;
                };
                let Some(child) = child else { continue };
                if visited[child] {
                    continue;
                }
                visited[child] = true;
                self.add_joint(j, parent_side, x, child, &pose0)?;
                queue.push_back(Some(child));
            }
        }
        cut.sort_unstable();
        // every body is in a tree now (from ground or a free root)
        for j in cut {
            self.cut_rows
                .extend(first_row[j]..first_row[j] + sys.joints[j].equations());
        }
        Ok(())
    }

    /// Appends the free joint of the tree root `child` (RBDA sec. 4.5 and
    /// Table 4.1, the 6-DoF joint, here with the positions (r, p) and rates
    /// (ṙ, ω') of the body coordinates of [`SpatialSystem`]).
    fn add_free_joint(
        &mut self,
        child: usize,
        pose0: &dyn Fn(Option<usize>) -> (Matrix3<f64>, Vector3<f64>),
    ) {
        let name = format!("free joint of body '{}'", self.sys.body_name(child));
        let (first_node, first_dof, first_q) = (self.nodes.len(), self.ndof, self.npos);
        self.nodes.push(Node {
            parent: None,
            body: Some(child),
            kind: NodeKind::Free,
            h: [0.0; 3],
            s_p: [0.0; 3],
            s_c: [0.0; 3],
            p0: [1.0, 0.0, 0.0, 0.0],
            dof: Some(first_dof),
            qdof: Some(first_q),
            label: name.clone(),
        });
        self.ndof += 6;
        self.npos += 7;
        self.mass.push(self.sys.mass[child]);
        self.inertia.push(mat(&self.sys.inertia[child]));
        self.body_node[child] = first_node;
        self.joints.push(TreeJoint {
            name,
            kind: TreeKind::Free,
            parent: None,
            child,
            first_node,
            n_nodes: 1,
            first_dof,
            n_dof: 6,
            first_q,
            axes: [[0.0; 3]; 3],
            a0: pose0(Some(child)).0,
            s_p: [0.0; 3],
            s_c: [0.0; 3],
        });
    }

    /// Appends the nodes of joint `j` with its end `parent_side` on the
    /// parent `parent` and the other on `child`.
    fn add_joint(
        &mut self,
        j: usize,
        parent_side: usize,
        parent: Option<usize>,
        child: usize,
        pose0: &dyn Fn(Option<usize>) -> (Matrix3<f64>, Vector3<f64>),
    ) -> Result<(), JointSpaceError> {
        let el = &self.sys.joints[j];
        let name = el.name.clone();
        let (att_a, att_b) = el.kind.attachments();
        let (ap, ac) = if parent_side == 0 {
            (att_a, att_b)
        } else {
            (att_b, att_a)
        };
        let (s_p, s_c) = (ap.point, ac.point);
        let swap = |a: [f64; 3], b: [f64; 3]| {
            if parent_side == 0 {
                (unit(&a), unit(&b))
            } else {
                (unit(&b), unit(&a))
            }
        };
        let (kind, hp, hc) = match &el.kind {
            SpatialJointKind::Revolute { axis_a, axis_b, .. } => {
                let (p, c) = swap(*axis_a, *axis_b);
                (TreeKind::Revolute, p, c)
            }
            SpatialJointKind::Prismatic { axis_a, axis_b, .. } => {
                let (p, c) = swap(*axis_a, *axis_b);
                (TreeKind::Prismatic, p, c)
            }
            SpatialJointKind::Cylindrical { axis_a, axis_b, .. } => {
                let (p, c) = swap(*axis_a, *axis_b);
                (TreeKind::Cylindrical, p, c)
            }
            SpatialJointKind::Universal { axis_a, axis_b, .. } => {
                let (p, c) = swap(*axis_a, *axis_b);
                (TreeKind::Universal, p, c)
            }
            SpatialJointKind::Spherical { .. } => (TreeKind::Spherical, [0.0; 3], [0.0; 3]),
            SpatialJointKind::Fixed { .. } => (TreeKind::Fixed, [0.0; 3], [0.0; 3]),
            SpatialJointKind::Distance { .. } | SpatialJointKind::PointOnLine { .. } => {
                return Err(JointSpaceError::Unsupported {
                    joint: format!("joint '{name}'"),
                    problem: "a distance or point-on-line joint in the kinematic tree needs more coordinates \
                              than it has; not supported in spatial joint coordinates yet"
                        .into(),
                })
            }
        };
        let (ap0, rp0) = pose0(parent);
        let (ac0, rc0) = pose0(Some(child));
        let a0 = ap0.transpose() * ac0;
        let p0 = quat_of(&a0);
        // the start offset along the axis of a sliding joint, parent frame
        let offset = ap0.transpose() * (rc0 + ac0 * v3(&s_c) - rp0) - v3(&s_p);
        let s_p_slide = match kind {
            TreeKind::Prismatic | TreeKind::Cylindrical => arr(&(v3(&s_p) + offset)),
            _ => s_p,
        };
        let axes = match kind {
            TreeKind::Universal => [hp, arr(&(a0 * v3(&hc))), [0.0; 3]],
            TreeKind::Spherical => [[0.0; 3]; 3],
            _ => [hp, [0.0; 3], [0.0; 3]],
        };
        let identity = [1.0, 0.0, 0.0, 0.0];
        // (kind, axis, s_p, coordinate name) of each single-axis factor
        let factors: Vec<(NodeKind, [f64; 3], [f64; 3], &str)> = match kind {
            TreeKind::Revolute => vec![(NodeKind::Revolute, axes[0], s_p, "angle")],
            TreeKind::Prismatic => vec![(NodeKind::Prismatic, axes[0], s_p_slide, "slide")],
            TreeKind::Cylindrical => vec![
                (NodeKind::Revolute, axes[0], s_p_slide, "angle"),
                (NodeKind::Prismatic, axes[0], [0.0; 3], "slide"),
            ],
            TreeKind::Universal => vec![
                (NodeKind::Revolute, axes[0], s_p, "angle 1"),
                (NodeKind::Revolute, axes[1], [0.0; 3], "angle 2"),
            ],
            TreeKind::Spherical => vec![(NodeKind::Spherical, [0.0; 3], s_p, "")],
            TreeKind::Fixed => vec![(NodeKind::Fixed, [0.0; 3], s_p, "")],
            TreeKind::Free => unreachable!("free joints are added by add_free_joint"),
        };
        let parent_node = parent.map(|b| self.body_node[b]);
        let (first_node, first_dof, first_q) = (self.nodes.len(), self.ndof, self.npos);
        let n_f = factors.len();
        for (k, (nk, h, sp, cname)) in factors.into_iter().enumerate() {
            let last = k + 1 == n_f;
            // rates and positions of the node: a spherical joint's
            // quaternion p has 4 positions and 3 rates ω'
            let (n_v, n_q) = match nk {
                NodeKind::Fixed => (0, 0),
                NodeKind::Spherical => (3, 4),
                _ => (1, 1),
            };
            let (dof, qdof) = if n_v == 0 {
                (None, None)
            } else {
                (Some(self.ndof), Some(self.npos))
            };
            self.ndof += n_v;
            self.npos += n_q;
            self.nodes.push(Node {
                parent: if k == 0 {
                    parent_node
                } else {
                    Some(self.nodes.len() - 1)
                },
                body: last.then_some(child),
                kind: nk,
                h,
                s_p: sp,
                s_c: if last { s_c } else { [0.0; 3] },
                p0: if last { p0 } else { identity },
                dof,
                qdof,
                label: if cname.is_empty() {
                    format!("joint '{name}'")
                } else {
                    format!("joint '{name}' ({cname})")
                },
            });
            if last {
                self.mass.push(self.sys.mass[child]);
                self.inertia.push(mat(&self.sys.inertia[child]));
            } else {
                self.mass.push(0.0);
                self.inertia.push(Matrix3::zeros());
            }
        }
        self.body_node[child] = self.nodes.len() - 1;
        self.joints.push(TreeJoint {
            name,
            kind,
            parent,
            child,
            first_node,
            n_nodes: n_f,
            first_dof,
            n_dof: self.ndof - first_dof,
            first_q,
            axes,
            a0,
            s_p: s_p_slide,
            s_c,
        });
        Ok(())
    }

    /// Number of tree nodes (bodies and the massless frames of
    /// multi-axis joints).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    fn work(data: &mut JointData) -> &mut SpatialJointWork {
        data.spatial
            .as_deref_mut()
            .expect("JointData of a SpatialJointSystem (made by its data())")
    }

    /// Forward kinematics (RBDA Table 5.1, pass 1, in the fixed
    /// frame): pose, spatial velocity, S and c of every node.
    fn kinematics(&self, w: &mut SpatialJointWork, q: &[f64], v: &[f64]) {
        for (i, n) in self.nodes.iter().enumerate() {
            let (pp, ap, rp, vp) = match n.parent {
                Some(p) => (w.quat[p], w.rot[p], w.pos[p], w.vel[p]),
                None => (
                    [1.0, 0.0, 0.0, 0.0],
                    Matrix3::identity(),
                    Vector3::zeros(),
                    Vector6::zeros(),
                ),
            };
            if n.kind == NodeKind::Free {
                self.free_kinematics(w, i, q, v);
                continue;
            }
            if n.kind == NodeKind::Spherical {
                self.spherical_kinematics(w, i, (&pp, &ap, &rp, &vp), q, v);
                continue;
            }
            let qi = n.qdof.map_or(0.0, |k| q[k]);
            let vi = n.dof.map_or(0.0, |k| v[k]);
            let h = ap * v3(&n.h);
            let (quat, o, s) = match n.kind {
                NodeKind::Revolute => {
                    let quat = product(&product(&pp, &axis_angle(&n.h, qi)), &n.p0);
                    let o = rp + ap * v3(&n.s_p);
                    (quat, o, six(&h, &o.cross(&h)))
                }
                NodeKind::Prismatic => {
                    let quat = product(&pp, &n.p0);
                    let o = rp + ap * (v3(&n.s_p) + v3(&n.h) * qi);
                    (quat, o, six(&Vector3::zeros(), &h))
                }
                NodeKind::Fixed | NodeKind::Free | NodeKind::Spherical => {
                    let quat = product(&pp, &n.p0);
                    (quat, rp + ap * v3(&n.s_p), Vector6::zeros())
                }
            };
            let a = rot_of(&quat);
            let r = o - a * v3(&n.s_c);
            w.quat[i] = quat;
            w.rot[i] = a;
            w.pos[i] = r;
            w.s[i] = s;
            w.vel[i] = vp + s * vi;
            w.c[i] = cross_motion(&vp, &s) * vi;
        }
    }

    /// Pose, velocity and c of the free root node `i`: r = q[0..3],
    /// p = q[3..7]/|q[3..7]| (the dynamics independent of the integration
    /// error in |p|), V = S ν (see [`free_subspace`]) and, ground being
    /// at rest, c = Ṡ ν = (0, −ω × ṙ): ω = A ω' gives ω̇ = A ω̇' (Ȧ ω' =
    /// A (ω' × ω') = 0) and v_O = ṙ − ω × r gives v̇_O = r̈ − ω̇ × r −
    /// ω × ṙ (RBDA sec. 4.5; the fixed-frame form of its eq. 4.44).
    fn free_kinematics(&self, w: &mut SpatialJointWork, i: usize, q: &[f64], v: &[f64]) {
        let n = &self.nodes[i];
        let (Some(kq), Some(kv)) = (n.qdof, n.dof) else {
            return;
        };
        let x = &q[kq..kq + 7];
        let norm = (x[3] * x[3] + x[4] * x[4] + x[5] * x[5] + x[6] * x[6]).sqrt();
        let quat = [x[3] / norm, x[4] / norm, x[5] / norm, x[6] / norm];
        let a = rot_of(&quat);
        let r = Vector3::new(x[0], x[1], x[2]);
        let rdot = Vector3::new(v[kv], v[kv + 1], v[kv + 2]);
        let omega = a * Vector3::new(v[kv + 3], v[kv + 4], v[kv + 5]);
        w.quat[i] = quat;
        w.rot[i] = a;
        w.pos[i] = r;
        w.s[i] = Vector6::zeros();
        w.vel[i] = six(&omega, &(rdot + r.cross(&omega)));
        w.c[i] = six(&Vector3::zeros(), &(-omega.cross(&rdot)));
    }

    /// Pose, motion subspace, velocity and c of the spherical node `i`
    /// with the parent's quaternion, rotation, origin and velocity
    /// `parent` (module documentation; RBDA Table 4.1, spherical):
    /// p = q/|q| (the dynamics independent of the integration error in
    /// |p|), A_C = A_P A₀ R(p), o = r_P + A_P s_P, r_C = o − A_C s_C, the
    /// columns S_k = (A_C e_k, o × A_C e_k), v = v_P + S ω' and
    /// c = v_P × S ω'.
    fn spherical_kinematics(
        &self,
        w: &mut SpatialJointWork,
        i: usize,
        parent: (&[f64; 4], &Matrix3<f64>, &Vector3<f64>, &Vector6<f64>),
        q: &[f64],
        v: &[f64],
    ) {
        let (pp, ap, rp, vp) = parent;
        let n = &self.nodes[i];
        let (Some(kq), Some(kv)) = (n.qdof, n.dof) else {
            return;
        };
        let x = &q[kq..kq + 4];
        let norm = (x[0] * x[0] + x[1] * x[1] + x[2] * x[2] + x[3] * x[3]).sqrt();
        let p = [x[0] / norm, x[1] / norm, x[2] / norm, x[3] / norm];
        let quat = product(&product(pp, &n.p0), &p);
        let a = rot_of(&quat);
        let o = rp + ap * v3(&n.s_p);
        let mut s3 = Matrix6x3::zeros();
        for k in 0..3 {
            let h = a.column(k).into_owned();
            s3.set_column(k, &six(&h, &o.cross(&h)));
        }
        let vj = s3 * Vector3::new(v[kv], v[kv + 1], v[kv + 2]);
        w.quat[i] = quat;
        w.rot[i] = a;
        w.pos[i] = o - a * v3(&n.s_c);
        w.s[i] = Vector6::zeros();
        w.s3[i] = s3;
        w.vel[i] = vp + vj;
        w.c[i] = cross_motion(vp, &vj);
    }

    /// Spatial inertias at O of the bodies after [`Self::kinematics`].
    fn inertias(&self, w: &mut SpatialJointWork) {
        for i in 0..self.nodes.len() {
            let m = self.mass[i];
            if m == 0.0 && self.inertia[i] == Matrix3::zeros() {
                w.inertia[i] = Matrix6::zeros();
                continue;
            }
            let a = w.rot[i];
            let ic = a * self.inertia[i] * a.transpose();
            w.inertia[i] = inertia_at_origin(m, &ic, &w.pos[i]);
        }
    }

    /// Body positions and velocities (7 and 6 per body) of the nodes after
    /// [`Self::kinematics`].
    fn write_bodies(&self, w: &SpatialJointWork, body_q: &mut [f64], body_v: &mut [f64]) {
        for (b, &i) in self.body_node.iter().enumerate() {
            let (r, a, vel) = (w.pos[i], w.rot[i], w.vel[i]);
            let omega = Vector3::new(vel[0], vel[1], vel[2]);
            let vo = Vector3::new(vel[3], vel[4], vel[5]);
            let rdot = vo + omega.cross(&r);
            let wb = a.transpose() * omega;
            let bq = &mut body_q[NQ_BODY * b..NQ_BODY * (b + 1)];
            bq[..3].copy_from_slice(r.as_slice());
            bq[3..].copy_from_slice(&w.quat[i]);
            let bv = &mut body_v[NV_BODY * b..NV_BODY * (b + 1)];
            bv[..3].copy_from_slice(rdot.as_slice());
            bv[3..].copy_from_slice(wb.as_slice());
        }
    }

    /// The applied wrenches at O (other than gravity) of the body
    /// system's force elements at time `t`, after [`Self::kinematics`]:
    /// its generalized forces at the body state minus the weight and the
    /// gyroscopic moment (which the recursions apply themselves).
    fn applied(&self, w: &mut SpatialJointWork, t: f64) {
        if !self.has_forces {
            w.fext.iter_mut().for_each(|f| *f = Vector6::zeros());
            return;
        }
        let (mut bq, mut bv) = (std::mem::take(&mut w.body_q), std::mem::take(&mut w.body_v));
        self.write_bodies(w, &mut bq, &mut bv);
        self.sys.generalized_forces(t, &bq, &bv, &mut w.body_f);
        w.body_f0.iter_mut().for_each(|x| *x = 0.0);
        for b in 0..self.sys.body_count() {
            let om = [
                bv[NV_BODY * b + 3],
                bv[NV_BODY * b + 4],
                bv[NV_BODY * b + 5],
            ];
            crate::spatial::forces::body_forces(
                self.sys.mass[b],
                &self.sys.inertia[b],
                &self.sys.gravity,
                &om,
                &mut w.body_f0[NV_BODY * b..NV_BODY * (b + 1)],
            );
        }
        w.body_q = bq;
        w.body_v = bv;
        w.fext.iter_mut().for_each(|f| *f = Vector6::zeros());
        for (b, &i) in self.body_node.iter().enumerate() {
            let q = |k| w.body_f[NV_BODY * b + k] - w.body_f0[NV_BODY * b + k];
            let f = Vector3::new(q(0), q(1), q(2));
            let n = w.rot[i] * Vector3::new(q(3), q(4), q(5));
            w.fext[i] = six(&(n + w.pos[i].cross(&f)), &f);
        }
    }

    /// a₀ = −a_g (RBDA sec. 5.3).
    fn root_acceleration(&self) -> Vector6<f64> {
        six(&Vector3::zeros(), &(-self.gravity))
    }

    /// The articulated-body algorithm (RBDA Table 7.1 in the fixed frame):
    ///
    /// ```text
    /// pass 1: v_i = v_p + S_i q'_i,  c_i = (v_p × S_i) q'_i,
    ///         I^A_i = I_i,  p^A_i = v_i ×* I_i v_i − f^ext_i
    /// pass 2: U_i = I^A_i S_i,  D_i = S_iᵀ U_i,  u_i = τ_i − S_iᵀ p^A_i,
    ///         I^a = I^A_i − U_i U_iᵀ / D_i,  p^a = p^A_i + I^a c_i + U_i u_i / D_i,
    ///         I^A_p += I^a,  p^A_p += p^a            (RBDA eqs. 7.41–7.44)
    /// pass 3: a'_i = a_p + c_i,  q''_i = (u_i − U_iᵀ a'_i) / D_i,
    ///         a_i = a'_i + S_i q''_i                 (RBDA eqs. 7.45–7.46)
    /// ```
    ///
    /// A fixed node (no S) passes I^A and p^A on unchanged; a spherical
    /// node has three columns in S, D a 3 × 3 matrix and D⁻¹ for 1/D
    /// (RBDA Table 7.1 for multi-DoF joints).
    fn aba(
        &self,
        w: &mut SpatialJointWork,
        t: f64,
        q: &[f64],
        v: &[f64],
        a: &mut [f64],
    ) -> Result<(), JointSpaceError> {
        self.kinematics(w, q, v);
        self.inertias(w);
        self.applied(w, t);
        let n = self.nodes.len();
        for i in 0..n {
            w.ia[i] = w.inertia[i];
            let iv = w.inertia[i] * w.vel[i];
            w.pa[i] = cross_force(&w.vel[i], &iv) - w.fext[i];
        }
        for i in (0..n).rev() {
            let node = &self.nodes[i];
            if node.kind == NodeKind::Free {
                // a root: its articulated inertia and bias are complete
                continue;
            }
            let (mut ia, mut pa) = (w.ia[i], w.pa[i]);
            if node.kind == NodeKind::Spherical {
                // three rates: D = Sᵀ U a 3 × 3 matrix (RBDA eqs. 7.41–7.44
                // with multi-column S)
                let s3 = w.s3[i];
                let u = ia * s3;
                let d = s3.transpose() * u;
                let scale = ia.trace().abs();
                let d_inv = match d.cholesky() {
                    Some(ch) if ch.l().diagonal().min().powi(2) > 1e-12 * scale => ch.inverse(),
                    _ => {
                        // its smallest eigenvalue (the eigen-solver only on
                        // finite entries: a NaN state must not stall it)
                        let value = if d.iter().all(|x| x.is_finite()) {
                            d.symmetric_eigenvalues().min()
                        } else {
                            f64::NAN
                        };
                        return Err(JointSpaceError::ZeroArticulatedInertia {
                            joint: node.label.clone(),
                            value,
                        });
                    }
                };
                let tau = -(s3.transpose() * pa);
                w.u3[i] = u;
                w.d3_inv[i] = d_inv;
                w.tau3[i] = tau;
                ia -= u * d_inv * u.transpose();
                pa += ia * w.c[i] + u * (d_inv * tau);
            } else if node.dof.is_some() {
                let s = w.s[i];
                let u = ia * s;
                let d = s.dot(&u);
                let scale = ia.trace().abs();
                if !(d > 1e-12 * scale) {
                    return Err(JointSpaceError::ZeroArticulatedInertia {
                        joint: node.label.clone(),
                        value: d,
                    });
                }
                let d_inv = 1.0 / d;
                let tau = -s.dot(&pa);
                w.u[i] = u;
                w.d_inv[i] = d_inv;
                w.tau[i] = tau;
                ia -= u * u.transpose() * d_inv;
                pa += ia * w.c[i] + u * (tau * d_inv);
            } else {
                pa += ia * w.c[i];
            }
            if let Some(p) = node.parent {
                w.ia[p] += ia;
                w.pa[p] += pa;
            }
        }
        let root = self.root_acceleration();
        for i in 0..n {
            let node = &self.nodes[i];
            if node.kind == NodeKind::Free {
                // floating base (RBDA sec. 9.3, eq. 9.24 in the fixed
                // frame): I^A a + p^A = 0 for the root's acceleration a
                // (a₀ = −a_g included), then S ν' = a − a₀ − c
                let Some(chol) = w.ia[i].cholesky() else {
                    return Err(JointSpaceError::ZeroArticulatedInertia {
                        joint: node.label.clone(),
                        value: w.ia[i].determinant(),
                    });
                };
                let acc = -chol.solve(&w.pa[i]);
                let rates = free_rates(&w.rot[i], &w.pos[i], &(acc - root - w.c[i]));
                if let Some(k) = node.dof {
                    a[k..k + 6].copy_from_slice(&rates);
                }
                w.acc[i] = acc;
                continue;
            }
            let ap = node.parent.map_or(root, |p| w.acc[p]) + w.c[i];
            w.acc[i] = match node.dof {
                Some(k) if node.kind == NodeKind::Spherical => {
                    let qdd = w.d3_inv[i] * (w.tau3[i] - w.u3[i].transpose() * ap);
                    a[k..k + 3].copy_from_slice(qdd.as_slice());
                    ap + w.s3[i] * qdd
                }
                Some(k) => {
                    let qdd = (w.tau[i] - w.u[i].dot(&ap)) * w.d_inv[i];
                    a[k] = qdd;
                    ap + w.s[i] * qdd
                }
                None => ap,
            };
        }
        Ok(())
    }

    /// Recursive Newton–Euler (RBDA Table 5.1 in the fixed frame):
    /// a_i = a_p + S_i q''_i + c_i, f_i = I_i a_i + v_i ×* I_i v_i −
    /// f^ext_i, τ_i = S_iᵀ f_i, f_p += f_i; a₀ = −a_g. Into `tau`.
    fn rnea(
        &self,
        w: &mut SpatialJointWork,
        t: f64,
        q: &[f64],
        v: &[f64],
        qdd: &[f64],
        tau: &mut [f64],
    ) {
        self.kinematics(w, q, v);
        self.inertias(w);
        self.applied(w, t);
        let root = self.root_acceleration();
        let n = self.nodes.len();
        for i in 0..n {
            let node = &self.nodes[i];
            let mut acc = node.parent.map_or(root, |p| w.acc[p]) + w.c[i];
            acc += self.motion(w, i, qdd);
            w.acc[i] = acc;
            let iv = w.inertia[i] * w.vel[i];
            w.pa[i] = w.inertia[i] * acc + cross_force(&w.vel[i], &iv) - w.fext[i];
        }
        for i in (0..n).rev() {
            let node = &self.nodes[i];
            match (node.kind, node.dof) {
                (NodeKind::Free, Some(k)) => {
                    let t = free_forces(&w.rot[i], &w.pos[i], &w.pa[i]);
                    tau[k..k + 6].copy_from_slice(&t);
                }
                (NodeKind::Spherical, Some(k)) => {
                    let t = w.s3[i].transpose() * w.pa[i];
                    tau[k..k + 3].copy_from_slice(t.as_slice());
                }
                (_, Some(k)) => tau[k] = w.s[i].dot(&w.pa[i]),
                _ => {}
            }
            if let Some(p) = node.parent {
                let f = w.pa[i];
                w.pa[p] += f;
            }
        }
    }

    /// Composite-rigid-body algorithm (RBDA Table 6.2 in the fixed frame):
    /// I^c_i = I_i + Σ_children I^c_j, F = I^c_i S_i, M_ii = S_iᵀ F,
    /// M_ij = M_ji = S_jᵀ F for every ancestor j of i. O(N·depth).
    fn crba(&self, w: &mut SpatialJointWork, q: &[f64], m: &mut DMatrix<f64>) {
        let zero = std::mem::take(&mut w.zero);
        self.kinematics(w, q, &zero);
        w.zero = zero;
        self.inertias(w);
        let n = self.nodes.len();
        for i in 0..n {
            w.ia[i] = w.inertia[i];
        }
        for i in (0..n).rev() {
            if let Some(p) = self.nodes[i].parent {
                let ic = w.ia[i];
                w.ia[p] += ic;
            }
        }
        m.fill(0.0);
        for i in 0..n {
            let Some(k) = self.nodes[i].dof else { continue };
            let (si, ni) = self.subspace(w, i);
            for (a, sa) in si.iter().enumerate().take(ni) {
                let f = w.ia[i] * sa;
                for (b, sb) in si.iter().enumerate().take(ni) {
                    m[(k + a, k + b)] = sb.dot(&f);
                }
                let mut j = self.nodes[i].parent;
                while let Some(p) = j {
                    if let Some(l) = self.nodes[p].dof {
                        let (sp, np) = self.subspace(w, p);
                        for (b, sb) in sp.iter().enumerate().take(np) {
                            let x = sb.dot(&f);
                            m[(k + a, l + b)] = x;
                            m[(l + b, k + a)] = x;
                        }
                    }
                    j = self.nodes[p].parent;
                }
            }
        }
    }

    /// The motion subspace of node `i` after [`Self::kinematics`]: its
    /// columns and their number (6 for a free joint, 3 for a spherical
    /// one, 1 for a single-axis node, 0 for a fixed one).
    fn subspace(&self, w: &SpatialJointWork, i: usize) -> ([Vector6<f64>; 6], usize) {
        match (self.nodes[i].kind, self.nodes[i].dof) {
            (NodeKind::Free, _) => (free_subspace(&w.rot[i], &w.pos[i]), 6),
            (NodeKind::Spherical, _) => {
                let mut s = [Vector6::zeros(); 6];
                for (k, col) in s.iter_mut().enumerate().take(3) {
                    *col = w.s3[i].column(k).into_owned();
                }
                (s, 3)
            }
            (_, Some(_)) => {
                let mut s = [Vector6::zeros(); 6];
                s[0] = w.s[i];
                (s, 1)
            }
            _ => ([Vector6::zeros(); 6], 0),
        }
    }

    /// S_i x_i: the velocity (or acceleration) across node `i` of the
    /// joint rates (accelerations) x, after [`Self::kinematics`].
    fn motion(&self, w: &SpatialJointWork, i: usize, x: &[f64]) -> Vector6<f64> {
        let node = &self.nodes[i];
        match (node.kind, node.dof) {
            (NodeKind::Free, Some(k)) => {
                let a = w.rot[i] * Vector3::new(x[k + 3], x[k + 4], x[k + 5]);
                let l = Vector3::new(x[k], x[k + 1], x[k + 2]);
                six(&a, &(l + w.pos[i].cross(&a)))
            }
            (NodeKind::Spherical, Some(k)) => w.s3[i] * Vector3::new(x[k], x[k + 1], x[k + 2]),
            (_, Some(k)) => w.s[i] * x[k],
            _ => Vector6::zeros(),
        }
    }

    /// Spatial accelerations (true, a₀ = 0) of a joint state with joint
    /// accelerations `qdd`, after [`Self::kinematics`].
    fn accelerations(&self, w: &mut SpatialJointWork, qdd: &[f64]) {
        for (i, node) in self.nodes.iter().enumerate() {
            let acc = node.parent.map_or(Vector6::zeros(), |p| w.acc[p]) + w.c[i];
            w.acc[i] = acc + self.motion(w, i, qdd);
        }
    }

    /// q'' of (t, q, v): the articulated-body algorithm for a tree; with
    /// cut joints the KKT system (jalon-bayo ch. 3–4 in relative
    /// coordinates)
    ///
    /// ```text
    /// [ M(q)  Φ_qᵀ ] [ q'' ]   [ f(t, q, v)              ]
    /// [ Φ_q   0    ] [ λ   ] = [ γ − 2αΦ_q v − β²Φ       ]
    /// ```
    ///
    /// with M by CRBA, f by RNEA and the closure terms of
    /// [`Self::closure_jacobian`], [`Self::closure_gamma`], solved densely
    /// (LU with full pivoting).
    fn dynamics(
        &self,
        w: &mut SpatialJointWork,
        baumgarte: [f64; 2],
        t: f64,
        q: &[f64],
        v: &[f64],
        a: &mut [f64],
    ) -> Result<(), JointSpaceError> {
        if self.cut_rows.is_empty() {
            return self.aba(w, t, q, v, a);
        }
        let (n, m) = (self.ndof, self.cut_rows.len());
        let mut mass = std::mem::replace(&mut w.mass, DMatrix::zeros(0, 0));
        self.crba(w, q, &mut mass);
        let mut f = std::mem::take(&mut w.bias);
        let z = std::mem::take(&mut w.zero);
        self.rnea(w, t, q, v, &z, &mut f);
        w.zero = z;
        self.closure_jacobian(w, t, q);
        self.closure_gamma(w, t, q, v);
        let [alpha, beta] = baumgarte;
        if alpha != 0.0 || beta != 0.0 {
            self.closure_phi(w, t, q);
        }
        w.kkt.fill(0.0);
        w.kkt.view_mut((0, 0), (n, n)).copy_from(&mass);
        for r in 0..m {
            let mut dphi = 0.0;
            for j in 0..n {
                let x = w.phi_q[(r, j)];
                w.kkt[(n + r, j)] = x;
                w.kkt[(j, n + r)] = x;
                dphi += x * v[j];
            }
            let mut g = w.gamma[r];
            if alpha != 0.0 || beta != 0.0 {
                g -= 2.0 * alpha * dphi + beta * beta * w.phi[r];
            }
            w.rhs[n + r] = g;
        }
        for i in 0..n {
            w.rhs[i] = -f[i];
        }
        w.mass = mass;
        w.bias = f;
        let lu = w.kkt.clone().full_piv_lu();
        let scale = w.kkt.amax().max(f64::MIN_POSITIVE);
        let pivots = lu.u().diagonal();
        let singular = pivots.iter().any(|p| !(p.abs() > 1e-13 * scale));
        let sol = if singular { None } else { lu.solve(&w.rhs) };
        let Some(sol) = sol else {
            let rows: Vec<String> = (0..m).map(|r| self.constraint_label(r)).collect();
            return Err(JointSpaceError::SingularClosure(rows.join(", ")));
        };
        a.copy_from_slice(&sol.as_slice()[..n]);
        Ok(())
    }

    /// Body state x(q), ẋ(q, v) of forward kinematics into `w.body_q`,
    /// `w.body_v`.
    fn bodies_of(&self, w: &mut SpatialJointWork, q: &[f64], v: &[f64]) {
        self.kinematics(w, q, v);
        let (mut bq, mut bv) = (std::mem::take(&mut w.body_q), std::mem::take(&mut w.body_v));
        self.write_bodies(w, &mut bq, &mut bv);
        w.body_q = bq;
        w.body_v = bv;
    }

    /// Φ(t, q) = Φ_body(t, x(q)) of the cut joints into `w.phi`: the body
    /// system's own constraint functions at the forward-kinematics poses.
    fn closure_phi(&self, w: &mut SpatialJointWork, t: f64, q: &[f64]) {
        let zero = std::mem::take(&mut w.unit);
        let mut z = zero;
        z.iter_mut().for_each(|x| *x = 0.0);
        self.bodies_of(w, q, &z);
        w.unit = z;
        self.sys.constraints(t, &w.body_q, &mut w.body_phi);
        for (r, &row) in self.cut_rows.iter().enumerate() {
            w.phi[r] = w.body_phi[row];
        }
    }

    /// Φ_q = Φ_x(x(q)) J(q) into `w.phi_q`, Φ_x the body system's velocity
    /// Jacobian and J(q) the body velocities per joint rate (column j:
    /// forward kinematics with v = e_j), and `w.body_jac` = Φ_x.
    fn closure_jacobian(&self, w: &mut SpatialJointWork, t: f64, q: &[f64]) {
        let n = self.ndof;
        let mut unit = std::mem::take(&mut w.unit);
        for j in 0..n {
            unit.iter_mut().for_each(|x| *x = 0.0);
            unit[j] = 1.0;
            self.bodies_of(w, q, &unit);
            for (i, x) in w.body_v.iter().enumerate() {
                w.jac_q[(i, j)] = *x;
            }
        }
        w.unit = unit;
        self.sys.constraint_jacobian(t, &w.body_q, &mut w.body_jac);
        for (r, &row) in self.cut_rows.iter().enumerate() {
            for j in 0..n {
                let mut s = 0.0;
                for k in 0..w.jac_q.nrows() {
                    s += w.body_jac[(row, k)] * w.jac_q[(k, j)];
                }
                w.phi_q[(r, j)] = s;
            }
        }
    }

    /// γ with Φ_q q'' = γ into `w.gamma`: the body system's
    /// Φ_x ẍ = γ_body with ẍ = J q'' + J̇ v gives γ = γ_body − Φ_x J̇ v
    /// (J̇ v the body accelerations at q'' = 0). Needs
    /// [`Self::closure_jacobian`] at the same q (for `w.body_jac`).
    fn closure_gamma(&self, w: &mut SpatialJointWork, t: f64, q: &[f64], v: &[f64]) {
        self.bodies_of(w, q, v);
        self.sys.gamma(t, &w.body_q, &w.body_v, &mut w.body_gamma);
        let mut zero = std::mem::take(&mut w.unit);
        zero.iter_mut().for_each(|x| *x = 0.0);
        self.accelerations(w, &zero);
        w.unit = zero;
        let mut ba = std::mem::take(&mut w.body_a);
        self.write_accelerations(w, &mut ba);
        for (r, &row) in self.cut_rows.iter().enumerate() {
            let mut s = w.body_gamma[row];
            for (k, x) in ba.iter().enumerate() {
                s -= w.body_jac[(row, k)] * x;
            }
            w.gamma[r] = s;
        }
        w.body_a = ba;
    }

    /// ẍ (6 per body) of the spatial accelerations after
    /// [`Self::accelerations`]: r̈ = a_O + ω̇ × r + ω × ṙ (the centre of
    /// mass of the spatial acceleration, RBDA sec. 2.11), ω̇' = Aᵀ ω̇.
    fn write_accelerations(&self, w: &SpatialJointWork, body_a: &mut [f64]) {
        for (b, &i) in self.body_node.iter().enumerate() {
            let (r, rot, vel, acc) = (w.pos[i], w.rot[i], w.vel[i], w.acc[i]);
            let omega = Vector3::new(vel[0], vel[1], vel[2]);
            let rdot = Vector3::new(vel[3], vel[4], vel[5]) + omega.cross(&r);
            let wdot = Vector3::new(acc[0], acc[1], acc[2]);
            let rdd = Vector3::new(acc[3], acc[4], acc[5]) + wdot.cross(&r) + omega.cross(&rdot);
            let wdb = rot.transpose() * wdot;
            let out = &mut body_a[NV_BODY * b..NV_BODY * (b + 1)];
            out[..3].copy_from_slice(rdd.as_slice());
            out[3..].copy_from_slice(wdb.as_slice());
        }
    }

    /// The finite-difference step of coordinate x.
    fn fd_step(x: f64) -> f64 {
        1e-6 * (1.0 + x.abs())
    }

    fn body_pose(body_q: &[f64], b: Option<usize>) -> (Matrix3<f64>, Vector3<f64>) {
        match b {
            None => (Matrix3::identity(), Vector3::zeros()),
            Some(b) => {
                let x = &body_q[NQ_BODY * b..NQ_BODY * (b + 1)];
                (
                    rot_of(&[x[3], x[4], x[5], x[6]]),
                    Vector3::new(x[0], x[1], x[2]),
                )
            }
        }
    }

    /// Spatial velocity at O of body `b` of a body state.
    fn body_twist(body_q: &[f64], body_v: &[f64], b: Option<usize>) -> Vector6<f64> {
        let Some(b) = b else { return Vector6::zeros() };
        let (a, r) = Self::body_pose(body_q, Some(b));
        let x = &body_v[NV_BODY * b..NV_BODY * (b + 1)];
        let omega = a * Vector3::new(x[3], x[4], x[5]);
        let rdot = Vector3::new(x[0], x[1], x[2]);
        six(&omega, &(rdot - omega.cross(&r)))
    }
}

impl JointCoordinateSystem for SpatialJointSystem {
    fn nq(&self) -> usize {
        self.npos
    }

    fn nv(&self) -> usize {
        self.ndof
    }

    /// q' = v but for a free joint: ṙ = v[0..3] and ṗ = ½ p ⊗ (0, ω'),
    /// and for a spherical joint ṗ = ½ p ⊗ (0, ω') (Haug eq. 9.3.29; RBDA
    /// sec. 4.5).
    fn position_derivative(&self, q: &[f64], v: &[f64], qdot: &mut [f64]) {
        for n in &self.nodes {
            let (Some(kq), Some(kv)) = (n.qdof, n.dof) else {
                continue;
            };
            match n.kind {
                NodeKind::Free => {
                    qdot[kq..kq + 3].copy_from_slice(&v[kv..kv + 3]);
                    let p = [q[kq + 3], q[kq + 4], q[kq + 5], q[kq + 6]];
                    let rate = quaternion_rate(&p, &[v[kv + 3], v[kv + 4], v[kv + 5]]);
                    qdot[kq + 3..kq + 7].copy_from_slice(&rate);
                }
                NodeKind::Spherical => {
                    let p = [q[kq], q[kq + 1], q[kq + 2], q[kq + 3]];
                    let rate = quaternion_rate(&p, &[v[kv], v[kv + 1], v[kv + 2]]);
                    qdot[kq..kq + 4].copy_from_slice(&rate);
                }
                _ => qdot[kq] = v[kv],
            }
        }
    }

    /// q + δ but for a free joint: (r + δ_r, p ⊗ exp(δ_ω)/|p ⊗ exp(δ_ω)|),
    /// the exponential map of the body-frame rotation increment as in the
    /// body coordinates ([`crate::spatial::body::retract`]), and for a
    /// spherical joint p ⊗ exp(δ)/|p ⊗ exp(δ)| of its child-frame
    /// increment.
    fn integrate_position(&self, q: &[f64], delta: &[f64], out: &mut [f64]) {
        for n in &self.nodes {
            let (Some(kq), Some(kv)) = (n.qdof, n.dof) else {
                continue;
            };
            match n.kind {
                NodeKind::Free => {
                    let r = [q[kq], q[kq + 1], q[kq + 2]];
                    let p = [q[kq + 3], q[kq + 4], q[kq + 5], q[kq + 6]];
                    let d: [f64; NV_BODY] = std::array::from_fn(|k| delta[kv + k]);
                    let (r, p) = retract(&r, &p, &d);
                    let norm = p.iter().map(|x| x * x).sum::<f64>().sqrt();
                    out[kq..kq + 3].copy_from_slice(&r);
                    for k in 0..4 {
                        out[kq + 3 + k] = p[k] / norm;
                    }
                }
                NodeKind::Spherical => {
                    let p = [q[kq], q[kq + 1], q[kq + 2], q[kq + 3]];
                    let p = turn(&p, &[delta[kv], delta[kv + 1], delta[kv + 2]]);
                    let norm = p.iter().map(|x| x * x).sum::<f64>().sqrt();
                    for k in 0..4 {
                        out[kq + k] = p[k] / norm;
                    }
                }
                _ => out[kq] = q[kq] + delta[kv],
            }
        }
    }

    fn nc(&self) -> usize {
        self.cut_rows.len()
    }

    fn body_nq(&self) -> usize {
        NQ_BODY * self.sys.body_count()
    }

    fn body_nv(&self) -> usize {
        NV_BODY * self.sys.body_count()
    }

    fn data(&self) -> JointData {
        JointData {
            planar: PlanarJointWork::new(0, 0),
            spatial: Some(Box::new(SpatialJointWork::new(
                self.nodes.len(),
                self.sys.body_count(),
                self.npos,
                self.ndof,
                self.cut_rows.len(),
                self.sys.nc(),
            ))),
            baumgarte: [0.0, 0.0],
        }
    }

    fn coordinate_label(&self, i: usize) -> String {
        const FREE: [&str; 6] = ["ẋ", "ẏ", "ż", "ωx'", "ωy'", "ωz'"];
        for n in &self.nodes {
            match (n.kind, n.dof) {
                (NodeKind::Free, Some(k)) if (k..k + 6).contains(&i) => {
                    return format!("{} ({})", n.label, FREE[i - k]);
                }
                (NodeKind::Spherical, Some(k)) if (k..k + 3).contains(&i) => {
                    return format!("{} ({})", n.label, FREE[3 + i - k]);
                }
                (_, Some(k)) if k == i => return n.label.clone(),
                _ => {}
            }
        }
        format!("joint coordinate {i} (out of range)")
    }

    fn constraint_label(&self, r: usize) -> String {
        match self.cut_rows.get(r) {
            Some(&row) => self.sys.constraint_label(row),
            None => format!("closure constraint {r} (out of range)"),
        }
    }

    fn breakpoints(&self) -> Vec<f64> {
        self.sys.breakpoints()
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
        if let Some(e) = &self.unsupported {
            return Err(e.clone());
        }
        // positions joint by joint from the relative pose of its bodies
        for j in &self.joints {
            let (ap, rp) = Self::body_pose(body_q, j.parent);
            let (ac, rc) = Self::body_pose(body_q, Some(j.child));
            let wrel = ap.transpose() * ac * j.a0.transpose();
            let slide = |h: &[f64; 3]| {
                v3(h).dot(&(ap.transpose() * (rc + ac * v3(&j.s_c) - rp) - v3(&j.s_p)))
            };
            let k = j.first_q;
            match j.kind {
                TreeKind::Revolute => q[k] = angle_about(&wrel, &v3(&j.axes[0])),
                TreeKind::Prismatic => q[k] = slide(&j.axes[0]),
                TreeKind::Cylindrical => {
                    q[k] = angle_about(&wrel, &v3(&j.axes[0]));
                    q[k + 1] = slide(&j.axes[0]);
                }
                TreeKind::Universal => {
                    // E = [e2 × e3, e2, e3], Eᵀ W E = R_z(θ1) R_y(θ2)
                    let (e3, e2) = (v3(&j.axes[0]), v3(&j.axes[1]));
                    let e = Matrix3::from_columns(&[e2.cross(&e3), e2, e3]);
                    let m = e.transpose() * wrel * e;
                    q[k] = (-m[(0, 1)]).atan2(m[(1, 1)]);
                    q[k + 1] = (-m[(2, 0)]).atan2(m[(2, 2)]);
                }
                TreeKind::Spherical => {
                    // R(p) = (A_P A₀)ᵀ A_C
                    let p = quat_of(&(j.a0.transpose() * ap.transpose() * ac));
                    q[k..k + 4].copy_from_slice(&p);
                }
                TreeKind::Fixed => {}
                TreeKind::Free => {
                    let x = &body_q[NQ_BODY * j.child..NQ_BODY * (j.child + 1)];
                    q[k..k + 7].copy_from_slice(x);
                }
            }
        }
        // rates: S q' = v_child − v_parent, least squares over the joint's
        // motion subspaces (exact when the body velocities fit the joint)
        let w = Self::work(data);
        let zero = vec![0.0; self.ndof];
        self.kinematics(w, q, &zero);
        for j in &self.joints {
            let dv = Self::body_twist(body_q, body_v, Some(j.child))
                - Self::body_twist(body_q, body_v, j.parent);
            let nd = j.n_dof;
            if nd == 0 {
                continue;
            }
            if j.kind == TreeKind::Free {
                let x = &body_v[NV_BODY * j.child..NV_BODY * (j.child + 1)];
                v[j.first_dof..j.first_dof + 6].copy_from_slice(x);
                continue;
            }
            let cols: Vec<Vector6<f64>> = (j.first_node..j.first_node + j.n_nodes)
                .flat_map(|i| {
                    let (s, k) = self.subspace(w, i);
                    s.into_iter().take(k)
                })
                .collect();
            let g = DMatrix::from_fn(nd, nd, |r, c| cols[r].dot(&cols[c]));
            let rhs = nalgebra::DVector::from_fn(nd, |r, _| cols[r].dot(&dv));
            let sol = g
                .lu()
                .solve(&rhs)
                .unwrap_or_else(|| nalgebra::DVector::zeros(nd));
            v[j.first_dof..j.first_dof + nd].copy_from_slice(sol.as_slice());
        }
        // forward kinematics must give the bodies back
        self.kinematics(w, q, v);
        let max_abs = |x: &[f64]| x.iter().fold(1.0_f64, |m, x| m.max(x.abs()));
        let (q_scale, v_scale) = (max_abs(body_q), max_abs(body_v));
        for j in &self.joints {
            let i = self.body_node[j.child];
            let b = j.child;
            let (ac, rc) = Self::body_pose(body_q, Some(b));
            let mut res: f64 = (w.pos[i] - rc).amax() / q_scale;
            res = res.max((w.rot[i] - ac).amax());
            let twist = Self::body_twist(body_q, body_v, Some(b));
            res = res.max((w.vel[i] - twist).amax() / v_scale);
            if !(res <= tol) {
                return Err(JointSpaceError::Inconsistent {
                    joint: format!("joint '{}'", j.name),
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
        let w = Self::work(data);
        self.kinematics(w, q, v);
        self.write_bodies(w, body_q, body_v);
    }

    /// ẍ from the spatial accelerations a (RBDA ch. 2: the centre of
    /// mass accelerates by r̈ = a_O + ω̇ × r + ω × ṙ) and ω̇' = Aᵀ ω̇.
    fn body_acceleration(
        &self,
        data: &mut JointData,
        q: &[f64],
        v: &[f64],
        a: &[f64],
        body_a: &mut [f64],
    ) {
        let w = Self::work(data);
        self.kinematics(w, q, v);
        self.accelerations(w, a);
        self.write_accelerations(w, body_a);
    }

    fn forward_dynamics(
        &self,
        data: &mut JointData,
        t: f64,
        q: &[f64],
        v: &[f64],
        a: &mut [f64],
    ) -> Result<(), JointSpaceError> {
        let baumgarte = data.baumgarte;
        self.dynamics(Self::work(data), baumgarte, t, q, v, a)
    }

    /// Central differences of the recursions (module documentation).
    fn jacobians_are_exact(&self) -> bool {
        false
    }

    /// Central finite differences of the articulated-body algorithm (a
    /// stopgap: see the module documentation).
    fn forward_dynamics_jacobians(
        &self,
        data: &mut JointData,
        t: f64,
        q: &[f64],
        v: &[f64],
        da_dq: &mut DMatrix<f64>,
        da_dv: &mut DMatrix<f64>,
    ) -> Result<(), JointSpaceError> {
        let baumgarte = data.baumgarte;
        let w = Self::work(data);
        let (n, nq) = (self.ndof, self.npos);
        let (mut x, mut y, mut a1, mut a2) = (
            std::mem::take(&mut w.q1),
            std::mem::take(&mut w.q2),
            std::mem::take(&mut w.a1),
            std::mem::take(&mut w.a2),
        );
        let mut result = Ok(());
        'outer: for (seed_q, out) in [(true, da_dq), (false, da_dv)] {
            for j in 0..if seed_q { nq } else { n } {
                x.copy_from_slice(q);
                y.copy_from_slice(v);
                let target = if seed_q { &mut x } else { &mut y };
                let h = Self::fd_step(target[j]);
                let x0 = target[j];
                target[j] = x0 + h;
                if let Err(e) = self.dynamics(w, baumgarte, t, &x, &y, &mut a1) {
                    result = Err(e);
                    break 'outer;
                }
                let target = if seed_q { &mut x } else { &mut y };
                target[j] = x0 - h;
                if let Err(e) = self.dynamics(w, baumgarte, t, &x, &y, &mut a2) {
                    result = Err(e);
                    break 'outer;
                }
                for i in 0..n {
                    out[(i, j)] = (a1[i] - a2[i]) / (2.0 * h);
                }
            }
        }
        (w.q1, w.q2, w.a1, w.a2) = (x, y, a1, a2);
        result
    }

    fn mass_matrix(&self, data: &mut JointData, q: &[f64], m: &mut DMatrix<f64>) {
        self.crba(Self::work(data), q, m);
    }

    fn bias_forces(&self, data: &mut JointData, t: f64, q: &[f64], v: &[f64], f: &mut [f64]) {
        let w = Self::work(data);
        let z = std::mem::take(&mut w.zero);
        self.rnea(w, t, q, v, &z, f);
        f.iter_mut().for_each(|x| *x = -*x);
        w.zero = z;
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
        self.rnea(Self::work(data), t, q, v, a, tau);
    }

    /// Central finite differences of recursive Newton–Euler (a stopgap:
    /// see the module documentation).
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
        let w = Self::work(data);
        let (n, nq) = (self.ndof, self.npos);
        let (mut x, mut y, mut t1, mut t2) = (
            std::mem::take(&mut w.q1),
            std::mem::take(&mut w.q2),
            std::mem::take(&mut w.a1),
            std::mem::take(&mut w.a2),
        );
        for (seed_q, out) in [(true, k), (false, c)] {
            for j in 0..if seed_q { nq } else { n } {
                x.copy_from_slice(q);
                y.copy_from_slice(v);
                let target = if seed_q { &mut x } else { &mut y };
                let x0 = target[j];
                let h = Self::fd_step(x0);
                target[j] = x0 + h;
                self.rnea(w, t, &x, &y, a, &mut t1);
                let target = if seed_q { &mut x } else { &mut y };
                target[j] = x0 - h;
                self.rnea(w, t, &x, &y, a, &mut t2);
                for i in 0..n {
                    out[(i, j)] = (t1[i] - t2[i]) / (2.0 * h);
                }
            }
        }
        (w.q1, w.q2, w.a1, w.a2) = (x, y, t1, t2);
    }

    fn constraints(&self, data: &mut JointData, t: f64, q: &[f64], phi: &mut [f64]) {
        if self.cut_rows.is_empty() {
            return;
        }
        let w = Self::work(data);
        self.closure_phi(w, t, q);
        phi.copy_from_slice(&w.phi);
    }

    fn constraint_jacobian(&self, data: &mut JointData, t: f64, q: &[f64], jac: &mut DMatrix<f64>) {
        if self.cut_rows.is_empty() {
            return;
        }
        let w = Self::work(data);
        self.closure_jacobian(w, t, q);
        jac.copy_from(&w.phi_q);
    }

    fn gamma(&self, data: &mut JointData, t: f64, q: &[f64], v: &[f64], gamma: &mut [f64]) {
        if self.cut_rows.is_empty() {
            return;
        }
        let w = Self::work(data);
        self.closure_jacobian(w, t, q);
        self.closure_gamma(w, t, q, v);
        gamma.copy_from_slice(&w.gamma);
    }
}

#[cfg(test)]
#[path = "spatial_joint_tests.rs"]
mod tests;
