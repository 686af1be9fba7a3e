//! [`SpatialSystem`]: rigid bodies in 3-D in reference-point coordinates
//! with Euler parameters, as a [`MechanicalSystem`].
//!
//! q = (r_1, p_1, r_2, p_2, …) (7 per body), v = (ṙ_1, ω'_1, …) (6 per
//! body, ω' in the body frame; see [`super::body`]). The equations
//!
//! ```text
//! M v̇ = Q(t, q, v) − Φ_qᵀ λ,   q̇ = T(q) v,   Φ(q) = 0
//! M = diag(m_i I₃, J'_i),   ṗ_i = ½ p_i ⊗ (0, ω'_i)
//! ```
//!
//! (Haug 1989, *Computer-Aided Kinematics and Dynamics of Mechanical
//! Systems*, eqs. 11.1.27 and 11.2.1, with ω' as velocity coordinates;
//! Nikravesh 1988, ch. 6–7).
//!
//! **The constraint Jacobian is the velocity Jacobian** Φ_q = ∂Φ/∂q · T
//! (n_c × n_v), so that the velocity constraint is Φ_q v + Φ_t = 0 and the
//! acceleration constraint Φ_q v̇ = γ — what every formulation uses. It is
//! computed exactly as the derivative of Φ along the retraction,
//! (Φ_q)_{·j} = d/dε Φ(q ⊕ ε e_j) at ε = 0, with dual numbers; γ is
//! −d²/dε² Φ(q ⊕ ε v) (along q ⊕ ε v the velocity v is constant, so this
//! is −Φ̇_q v), with second-order duals. All derivatives "with respect to
//! q" of this system (∂Q/∂q, ∂γ/∂q, ∂(Φ_q a)/∂q, ∂(Φ_qᵀλ)/∂q) are likewise
//! along q ⊕ δ, δ in velocity space, and so have n_v columns.
//!
//! Owns: the assembly of bodies, joints and forces into the contract and
//! the exact derivatives. Must not: know formulations.

use jounce_model::{
    BodyRef, Model, SpatialForceKind, SpatialJoint, SpatialJointKind, SpatialModel, TimeFunction,
};
use nalgebra::DMatrix;
use num_dual::{Dual, Dual2, Dual2_64, Dual64, DualSVec64};

use super::body::{
    coordinates, retract, Pose, NQ_BODY, NV_BODY, POSITION_LABELS, TANGENT_LABELS, VELOCITY_LABELS,
};
use super::contact::{self, SpatialContactParams};
use super::driver::Drive;
use super::forces::{self, End};
use super::quaternion::{dot, mat_vec, product, quaternion_rate, Vec3};
use super::stick_slip::ContactFriction;
use crate::capabilities::{
    AppliedLoads, FrictionRows, SecondDerivatives, Sparsity, SwitchingFunctions,
};
use crate::data::{Quantities, SystemData};
use crate::error::MechanicsError;
use crate::kinematics::Scalar;
use crate::sparse::SparseMatrix;
use crate::system::{MechanicalSystem, Structure};

/// A joint with its body indices and first constraint row.
#[derive(Clone, Debug)]
pub(crate) struct JointElement {
    pub(crate) name: String,
    pub(crate) kind: SpatialJointKind,
    /// Body indices of the two ends (`None`: ground).
    pub(crate) bodies: [Option<usize>; 2],
    /// For a revolute, cylindrical or prismatic joint: two body-a vectors
    /// ⊥ the axis.
    perpendiculars: [[f64; 3]; 2],
    /// For a prismatic joint: the second of them in body b's frame at the
    /// start.
    locked: [f64; 3],
    row: usize,
    /// For a driver (one row, after every joint's): what it drives, f(t),
    /// and the driven joint's index.
    drive: Option<(Drive, TimeFunction, usize)>,
}

impl JointElement {
    /// Number of rows: the joint's equations, or 1 for a driver.
    pub(crate) fn equations(&self) -> usize {
        if self.drive.is_some() {
            1
        } else {
            self.kind.equations()
        }
    }

    /// (f, f', f'') of a driver at t; zeros for a joint.
    fn time_value(&self, t: f64) -> (f64, f64, f64) {
        match &self.drive {
            Some((_, f, _)) => f.eval(t),
            None => (0.0, 0.0, 0.0),
        }
    }
}

/// Start-configuration data of a force element.
#[derive(Clone, Debug)]
enum ForceData {
    /// Nothing beyond the model's element.
    None,
    /// A rotational spring: the joint's bodies and (f_a, g_a, h_a, f_b⁰).
    Angle {
        bodies: [Option<usize>; 2],
        frame: [[f64; 3]; 4],
    },
    /// A bushing's parameters with its start offset and rotation.
    Bushing(forces::Bushing),
    /// A contact's parameters.
    Contact(SpatialContactParams),
}

/// The start pose of body `b` of `sm` (ground: the world frame).
fn start_pose(sm: &SpatialModel, b: Option<usize>) -> Pose<f64> {
    match b {
        Some(i) => Pose::new(sm.bodies[i].position, &sm.bodies[i].orientation),
        None => Pose::ground(),
    }
}

/// The angle frame (f_a, g_a, f_b⁰) of a revolute joint element: f_b⁰ is
/// f_a's image on body b at the start.
fn angle_frame(sm: &SpatialModel, j: &JointElement) -> [[f64; 3]; 3] {
    let (pa, pb) = (start_pose(sm, j.bodies[0]), start_pose(sm, j.bodies[1]));
    let [f_a, g_a] = j.perpendiculars;
    let f_b = super::quaternion::mat_t_vec(&pb.a, &pa.vector(&f_a));
    [f_a, g_a, f_b]
}

/// Which terms of Q [`SpatialSystem::forces_at`] evaluates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Loads {
    /// Every term.
    All,
    /// The applied loads only (point forces, torques, actuators).
    Applied,
    /// Body `b`'s own term (gravity, gyroscopic), added.
    Body(usize),
    /// Force element `e`, added.
    Element(usize),
}

/// A spatial multibody system built from a spatial [`Model`].
#[derive(Clone, Debug)]
pub struct SpatialSystem {
    names: Vec<String>,
    pub(crate) mass: Vec<f64>,
    pub(crate) inertia: Vec<[[f64; 3]; 3]>,
    pub(crate) gravity: [f64; 3],
    /// The joints, then the drivers (`joint_count` joints first).
    pub(crate) joints: Vec<JointElement>,
    pub(crate) joint_count: usize,
    pub(crate) forces: Vec<jounce_model::SpatialForce>,
    /// Per force element, what it needs from the start configuration.
    force_data: Vec<ForceData>,
    /// The contact elements (indices into `forces`), in order: the
    /// switching functions.
    contacts: Vec<usize>,
    /// The contacts with stick–slip friction ([`super::stick_slip`]).
    pub(super) frictions: Vec<ContactFriction>,
    /// (joint, row within it) of every constraint row.
    row_owner: Vec<(usize, usize)>,
    /// The positions of Φ_q that can be nonzero: each row of a joint (or
    /// driver) against the 6 velocities of each of its two bodies.
    jac_pattern: Vec<(usize, usize)>,
    /// Per constraint row i, at 12 i + 6 side + k: the slot in the values
    /// of a [`SparseMatrix`] built from `jac_pattern` of column k of end
    /// `side` (usize::MAX for ground).
    jac_slots: Vec<usize>,
    /// Number of stored entries of that matrix.
    jac_nnz: usize,
    q0: Vec<f64>,
    v0: Vec<f64>,
}

fn index(b: BodyRef) -> Option<usize> {
    match b {
        BodyRef::Ground => None,
        BodyRef::Body(i) => Some(i),
    }
}

/// Row names of each joint kind.
fn row_names(kind: &SpatialJointKind) -> &'static [&'static str] {
    match kind {
        SpatialJointKind::Spherical { .. } => &["x", "y", "z"],
        SpatialJointKind::Revolute { .. } => &["x", "y", "z", "axis 1", "axis 2"],
        SpatialJointKind::Universal { .. } => &["x", "y", "z", "cross"],
        SpatialJointKind::Cylindrical { .. } => &["axis 1", "axis 2", "offset 1", "offset 2"],
        SpatialJointKind::Prismatic { .. } => {
            &["axis 1", "axis 2", "offset 1", "offset 2", "rotation"]
        }
        SpatialJointKind::Fixed { .. } => {
            &["x", "y", "z", "rotation 1", "rotation 2", "rotation 3"]
        }
        SpatialJointKind::Distance { .. } => &["length"],
        SpatialJointKind::PointOnLine { .. } => &["offset 1", "offset 2"],
    }
}

/// The pose of body `b` at (q ⊕ inner) ⊕ outer (ground: the world frame).
pub(super) fn pose<D: Scalar>(
    q: &[f64],
    b: Option<usize>,
    inner: &[D; NV_BODY],
    outer: &[D; NV_BODY],
) -> Pose<D> {
    match b {
        None => Pose::ground(),
        Some(b) => {
            let (r, p) = coordinates::<D>(q, b);
            let (r, p) = retract(&r, &p, inner);
            let (r, p) = retract(&r, &p, outer);
            Pose::new(r, &p)
        }
    }
}

/// The pose of body `b` at q.
pub(super) fn pose_at(q: &[f64], b: Option<usize>) -> Pose<f64> {
    match b {
        None => Pose::ground(),
        Some(b) => {
            let (r, p) = coordinates::<f64>(q, b);
            Pose::new(r, &p)
        }
    }
}

/// The pose of body `b` at q ⊕ δ to first order in δ, δ = (δr, δω') the
/// body's 6 velocities seeded as components `first..first + 6` of a
/// 12-component dual: r + δr and A + A [δω']× (the derivative of
/// A(p ⊗ exp(δω')) at δ = 0), so that Φ_q of a joint comes from one
/// evaluation without the exponential map in duals. Ground: the world
/// frame.
fn seeded_pose(q: &[f64], b: Option<usize>, first: usize) -> Pose<DualSVec64<12>> {
    type D = DualSVec64<12>;
    let Some(b) = b else {
        return Pose::ground();
    };
    let p = pose_at(q, Some(b));
    let unit = |i: usize| D::from_re(0.0).derivative(first + i);
    let r = std::array::from_fn(|i| D::from_re(p.r[i]) + unit(i));
    // ∂(A [ω]×)_ij/∂ω_k = (A (e_k × e_j))_i
    let a = std::array::from_fn(|i| {
        std::array::from_fn(|j| {
            let mut x = D::from_re(p.a[i][j]);
            for k in 0..3 {
                let mut ek = [0.0; 3];
                ek[k] = 1.0;
                let mut ej = [0.0; 3];
                ej[j] = 1.0;
                let c = super::quaternion::cross(&ek, &ej);
                let g: f64 = (0..3).map(|m| p.a[i][m] * c[m]).sum();
                if g != 0.0 {
                    x += unit(3 + k) * g;
                }
            }
            x
        })
    });
    Pose { r, a }
}

/// e_k ε in the scalar type whose unit derivative part is `unit`.
fn direction<D: Scalar>(k: usize, unit: D) -> [D; NV_BODY] {
    std::array::from_fn(|i| if i == k { unit } else { D::zero() })
}

/// The Φ_q pattern of `joints` (`rows` × `cols`), the slot of each
/// (row, end, velocity) in the [`SparseMatrix`] of that pattern, and its
/// number of entries.
fn jacobian_layout(
    joints: &[JointElement],
    rows: usize,
    cols: usize,
) -> (Vec<(usize, usize)>, Vec<usize>, usize) {
    let mut pattern = Vec::new();
    for el in joints {
        for r in el.row..el.row + el.equations() {
            for b in el.bodies.iter().flatten() {
                pattern.extend((0..NV_BODY).map(|k| (r, NV_BODY * b + k)));
            }
        }
    }
    let probe = SparseMatrix::from_pattern(rows, cols, &pattern);
    let mut slots = vec![usize::MAX; 2 * NV_BODY * rows];
    for el in joints {
        for r in el.row..el.row + el.equations() {
            for (side, b) in el.bodies.iter().enumerate() {
                let Some(b) = b else { continue };
                for k in 0..NV_BODY {
                    slots[2 * NV_BODY * r + NV_BODY * side + k] =
                        probe.index_of(r, NV_BODY * b + k).expect("in the pattern");
                }
            }
        }
    }
    (pattern, slots, probe.nnz())
}

impl SpatialSystem {
    /// Builds the runtime system of a spatial model.
    ///
    /// # Errors
    /// [`MechanicsError`] naming the element: a planar model, no bodies, a
    /// non-finite initial state.
    pub fn from_model(model: &Model) -> Result<SpatialSystem, MechanicsError> {
        let Some(sm) = model.spatial.as_ref() else {
            return Err(MechanicsError::InvalidParameter {
                element: "[model] space".into(),
                problem: "the model is planar; a spatial system needs `space = \"spatial\"`".into(),
            });
        };
        Self::from_spatial(sm)
    }

    /// Builds the runtime system of the spatial part of a model.
    ///
    /// # Errors
    /// As [`SpatialSystem::from_model`].
    pub fn from_spatial(sm: &SpatialModel) -> Result<SpatialSystem, MechanicsError> {
        if sm.bodies.is_empty() {
            return Err(MechanicsError::NoBodies);
        }
        let mut q0 = Vec::with_capacity(NQ_BODY * sm.bodies.len());
        let mut v0 = Vec::with_capacity(NV_BODY * sm.bodies.len());
        for b in &sm.bodies {
            let state = b
                .position
                .iter()
                .chain(&b.orientation)
                .chain(&b.velocity)
                .chain(&b.angular_velocity);
            if state.clone().any(|x| !x.is_finite()) {
                return Err(MechanicsError::InvalidBody {
                    body: b.name.clone(),
                    problem: "the initial state is not finite".into(),
                });
            }
            q0.extend(b.position.iter().chain(&b.orientation));
            v0.extend(b.velocity.iter().chain(&b.angular_velocity));
        }
        let mut joints = Vec::with_capacity(sm.joints.len());
        let mut row_owner = Vec::new();
        for (e, SpatialJoint { name, kind }) in sm.joints.iter().enumerate() {
            let (a, b) = kind.attachments();
            let perpendiculars = match kind {
                SpatialJointKind::Revolute { axis_a, .. }
                | SpatialJointKind::Cylindrical { axis_a, .. }
                | SpatialJointKind::Prismatic { axis_a, .. }
                | SpatialJointKind::PointOnLine { axis_a, .. } => {
                    let (f, g) = super::revolute::perpendiculars(axis_a);
                    [f, g]
                }
                _ => [[0.0; 3]; 2],
            };
            // g_b = A_bᵀ A_a g_a at the start
            let start = |b: BodyRef| match index(b) {
                Some(i) => jounce_model::rotation_matrix(sm.bodies[i].orientation),
                None => jounce_model::rotation_matrix([1.0, 0.0, 0.0, 0.0]),
            };
            let g_world = mat_vec(&start(a.body), &perpendiculars[1]);
            let locked = super::quaternion::mat_t_vec(&start(b.body), &g_world);
            joints.push(JointElement {
                name: name.clone(),
                kind: kind.clone(),
                bodies: [index(a.body), index(b.body)],
                perpendiculars,
                locked,
                row: row_owner.len(),
                drive: None,
            });
            row_owner.extend((0..kind.equations()).map(|r| (e, r)));
        }
        let joint_count = joints.len();
        for d in &sm.drivers {
            let Some(j) = joints[..joint_count].get(d.joint).cloned() else {
                return Err(MechanicsError::InvalidParameter {
                    element: format!("driver '{}'", d.name),
                    problem: format!("drives joint #{} of {joint_count}", d.joint + 1),
                });
            };
            let (pa, pb) = (start_pose(sm, j.bodies[0]), start_pose(sm, j.bodies[1]));
            let drive = match &j.kind {
                SpatialJointKind::Revolute { .. } => {
                    let [f_a, g_a, f_b] = angle_frame(sm, &j);
                    Drive::Angle { f_a, g_a, f_b }
                }
                SpatialJointKind::Prismatic { a, b, axis_a, .. } => {
                    let mut drive = Drive::Slide {
                        s_a: a.point,
                        s_b: b.point,
                        h_a: *axis_a,
                        d0: 0.0,
                    };
                    let d0 = super::driver::residual(&drive, &pa, &pb, 0.0);
                    if let Drive::Slide { d0: slot, .. } = &mut drive {
                        *slot = d0;
                    }
                    drive
                }
                _ => {
                    return Err(MechanicsError::InvalidParameter {
                        element: format!("driver '{}'", d.name),
                        problem: format!(
                            "joint '{}' is neither revolute nor prismatic and cannot be driven",
                            j.name
                        ),
                    })
                }
            };
            let e = joints.len();
            joints.push(JointElement {
                name: d.name.clone(),
                row: row_owner.len(),
                drive: Some((drive, d.function.clone(), d.joint)),
                ..j
            });
            row_owner.push((e, 0));
        }
        let (jac_pattern, jac_slots, jac_nnz) =
            jacobian_layout(&joints, row_owner.len(), NV_BODY * sm.bodies.len());
        let force_data = Self::force_data(sm, &joints)?;
        let contacts: Vec<usize> = (sm.forces.iter().enumerate())
            .filter(|(_, f)| matches!(f.kind, SpatialForceKind::Contact { .. }))
            .map(|(i, _)| i)
            .collect();
        let frictions = (contacts.iter().enumerate())
            .filter_map(|(k, &e)| match (&sm.forces[e].kind, &force_data[e]) {
                (SpatialForceKind::Contact { a, b, .. }, ForceData::Contact(p)) => {
                    let (pa, pb) = (start_pose(sm, index(a.body)), start_pose(sm, index(b.body)));
                    ContactFriction::new(k, p, &pa, &pb)
                }
                _ => None,
            })
            .collect();
        Ok(SpatialSystem {
            jac_pattern,
            jac_slots,
            jac_nnz,
            names: sm.bodies.iter().map(|b| b.name.clone()).collect(),
            mass: sm.bodies.iter().map(|b| b.mass).collect(),
            inertia: sm.bodies.iter().map(|b| b.inertia).collect(),
            gravity: sm.gravity,
            force_data,
            contacts,
            frictions,
            joints,
            joint_count,
            forces: sm.forces.clone(),
            row_owner,
            q0,
            v0,
        })
    }

    /// The start data of each force element.
    fn force_data(
        sm: &SpatialModel,
        joints: &[JointElement],
    ) -> Result<Vec<ForceData>, MechanicsError> {
        sm.forces
            .iter()
            .map(|f| match &f.kind {
                SpatialForceKind::RotationalSpring { joint, .. } => {
                    let j = joints
                        .get(*joint)
                        .filter(|j| matches!(j.kind, SpatialJointKind::Revolute { .. }))
                        .ok_or_else(|| MechanicsError::InvalidParameter {
                            element: format!("force '{}'", f.name),
                            problem: "needs a revolute joint".into(),
                        })?;
                    let [f_a, g_a, f_b] = angle_frame(sm, j);
                    let SpatialJointKind::Revolute { axis_a, .. } = j.kind else {
                        unreachable!("filtered above")
                    };
                    Ok(ForceData::Angle {
                        bodies: j.bodies,
                        frame: [f_a, g_a, axis_a, f_b],
                    })
                }
                SpatialForceKind::Bushing {
                    a,
                    b,
                    stiffness,
                    damping,
                    rotational_stiffness,
                    rotational_damping,
                } => {
                    let (pa, pb) = (start_pose(sm, index(a.body)), start_pose(sm, index(b.body)));
                    let d = super::quaternion::sub(&pb.point(&b.point), &pa.point(&a.point));
                    let d0 = super::quaternion::mat_t_vec(&pa.a, &d);
                    // R0 = A_aᵀ A_b
                    let r0 = std::array::from_fn(|i| {
                        std::array::from_fn(|j| (0..3).map(|k| pa.a[k][i] * pb.a[k][j]).sum())
                    });
                    Ok(ForceData::Bushing(forces::Bushing {
                        stiffness: *stiffness,
                        damping: *damping,
                        rotational_stiffness: *rotational_stiffness,
                        rotational_damping: *rotational_damping,
                        d0,
                        r0,
                    }))
                }
                SpatialForceKind::Contact {
                    a,
                    b,
                    geometry,
                    law,
                    stiffness,
                    damping,
                    friction,
                } => Ok(ForceData::Contact(SpatialContactParams {
                    sa: a.point,
                    sb: b.point,
                    geometry: *geometry,
                    law: *law,
                    stiffness: *stiffness,
                    damping: *damping,
                    friction: *friction,
                })),
                _ => Ok(ForceData::None),
            })
            .collect()
    }

    /// The model's initial positions q0 (len n_q) and velocities v0
    /// (len n_v).
    #[must_use]
    pub fn initial_state(&self) -> (Vec<f64>, Vec<f64>) {
        (self.q0.clone(), self.v0.clone())
    }

    /// Number of bodies.
    #[must_use]
    pub fn body_count(&self) -> usize {
        self.names.len()
    }

    /// Name of body `b`.
    #[must_use]
    pub fn body_name(&self, b: usize) -> &str {
        &self.names[b]
    }

    /// Name of position increment `i` of q ⊞ Δ (of n_v), e.g. `top.rz`
    /// (the z component of the body-frame rotation vector) or `top.x`
    /// (the centre of mass's translation along world x).
    #[must_use]
    pub fn tangent_label(&self, i: usize) -> String {
        match self.names.get(i / NV_BODY) {
            Some(name) => format!("{name}.{}", TANGENT_LABELS[i % NV_BODY]),
            None => format!("tangent[{i}]"),
        }
    }

    /// World angular momentum about the origin, H = Σ (r × m ṙ + A J' ω').
    #[must_use]
    pub fn angular_momentum(&self, q: &[f64], v: &[f64]) -> [f64; 3] {
        let mut h = [0.0; 3];
        for b in 0..self.names.len() {
            let p = pose_at(q, Some(b));
            let vb = &v[NV_BODY * b..NV_BODY * (b + 1)];
            let rdot = [vb[0], vb[1], vb[2]];
            let jw = mat_vec(&self.inertia[b], &[vb[3], vb[4], vb[5]]);
            let spin = mat_vec(&p.a, &jw);
            let orbit = super::quaternion::cross(&p.r, &rdot);
            for k in 0..3 {
                h[k] += self.mass[b] * orbit[k] + spin[k];
            }
        }
        h
    }

    /// Number of joints.
    #[must_use]
    pub fn joint_count(&self) -> usize {
        self.joint_count
    }

    /// Number of drivers (their rows follow the joints').
    #[must_use]
    pub fn driver_count(&self) -> usize {
        self.joints.len() - self.joint_count
    }

    /// The driven coordinate of driver `d` at q: a revolute driver's angle
    /// θ ∈ (−π, π] \[rad\], a prismatic driver's slide from the start \[m\].
    #[must_use]
    pub fn driven_coordinate(&self, d: usize, q: &[f64]) -> f64 {
        let el = &self.joints[self.joint_count + d];
        let (pa, pb) = (pose_at(q, el.bodies[0]), pose_at(q, el.bodies[1]));
        match &el.drive {
            Some((drive, _, _)) => super::driver::angle(drive, &pa, &pb),
            None => 0.0,
        }
    }

    /// Name of joint `j`.
    #[must_use]
    pub fn joint_name(&self, j: usize) -> &str {
        &self.joints[j].name
    }

    /// The load each joint applies, through its multipliers λ, to its second
    /// body at that body's joint point, in the world frame: for joint j,
    /// `out[6j..6j + 6]` = (F, M_P). The constraint forces are −Φ_qᵀλ
    /// (M v̇ = Q − Φ_qᵀλ); on body b with velocities (ṙ, ω') they are a world
    /// force F and a body-frame moment n' about the centre of mass, so that
    /// M_P = A n' − (A s_b) × F about the point P = r + A s_b (Haug 1989,
    /// §11.6, reaction forces from Lagrange multipliers). A joint whose
    /// second end is ground reports minus the load on its first body, at
    /// that body's point (Newton's third law). A driven joint's load
    /// includes its drivers' (the driving torque or force).
    ///
    /// # Panics
    /// If `lambda` is shorter than n_c or `out` than 6 per joint.
    pub fn joint_reactions(&self, t: f64, q: &[f64], lambda: &[f64], out: &mut [f64]) {
        let zero = [Dual64::from(0.0); NV_BODY];
        let mut phi = [Dual64::from(0.0); 6];
        for (j, el) in self.joints[..self.joint_count].iter().enumerate() {
            let (side, sign) = if el.bodies[1].is_some() {
                (1, 1.0)
            } else {
                (0, -1.0)
            };
            let o = &mut out[6 * j..6 * j + 6];
            o.fill(0.0);
            let Some(b) = el.bodies[side] else {
                continue;
            };
            // the joint's rows and those of the drivers of this joint
            let drivers = self.joints[self.joint_count..]
                .iter()
                .filter(|d| matches!(d.drive, Some((_, _, dj)) if dj == j));
            let mut g = [0.0; NV_BODY];
            for part in std::iter::once(el).chain(drivers) {
                let n = part.equations();
                let f = Dual64::from(part.time_value(t).0);
                for (k, gk) in g.iter_mut().enumerate() {
                    let mut inner = [zero; 2];
                    inner[side] = direction(k, Dual64::new(0.0, 1.0));
                    Self::joint_at(part, q, inner, [zero; 2], f, &mut phi[..n]);
                    *gk -= (0..n)
                        .map(|i| phi[i].eps * lambda[part.row + i])
                        .sum::<f64>();
                }
            }
            let (end_a, end_b) = el.kind.attachments();
            let point = if side == 1 { end_b.point } else { end_a.point };
            let pose = pose_at(q, Some(b));
            let arm = mat_vec(&pose.a, &point);
            let force = [g[0], g[1], g[2]];
            let moment = mat_vec(&pose.a, &[g[3], g[4], g[5]]);
            let shift = super::quaternion::cross(&arm, &force);
            for k in 0..3 {
                o[k] = sign * force[k];
                o[3 + k] = sign * (moment[k] - shift[k]);
            }
        }
    }

    /// Visit the 12 × 12 blocks of ∂(Φ_qᵀλ)/∂q along q ⊕ δ, one per joint
    /// or driver: `add(j, k, ∂²(λᵀΦ)/∂δ_k∂ε_j)` for each pair of the
    /// velocities of its bodies, of λᵀΦ((q ⊕ δ) ⊕ ε) by nested duals;
    /// repeated entries are summed by the caller. Stops, returning false,
    /// as soon as `add` does.
    fn constraint_force_blocks(
        &self,
        t: f64,
        q: &[f64],
        lambda: &[f64],
        mut add: impl FnMut(usize, usize, f64) -> bool,
    ) -> bool {
        type D = Dual<Dual64>;
        let zero = [D::from(0.0); NV_BODY];
        let inner_unit = D::from_re(Dual64::new(0.0, 1.0));
        let outer_unit = D::new(Dual64::from(0.0), Dual64::from(1.0));
        let mut res = [D::from(0.0); 6];
        for el in &self.joints {
            let n = el.equations();
            let f = D::from(el.time_value(t).0);
            for side_k in 0..2 {
                let Some(ck) = Self::end_columns(el, side_k) else {
                    continue;
                };
                for k in 0..NV_BODY {
                    for side_j in 0..2 {
                        let Some(cj) = Self::end_columns(el, side_j) else {
                            continue;
                        };
                        for j in 0..NV_BODY {
                            let mut inner = [zero; 2];
                            inner[side_k] = direction(k, inner_unit);
                            let mut outer = [zero; 2];
                            outer[side_j] = direction(j, outer_unit);
                            Self::joint_at(el, q, inner, outer, f, &mut res[..n]);
                            let s: f64 = (0..n).map(|i| lambda[el.row + i] * res[i].eps.eps).sum();
                            if !add(cj + j, ck + k, s) {
                                return false;
                            }
                        }
                    }
                }
            }
        }
        true
    }

    /// The bodies force element `e` acts on (`None`: ground or none).
    fn force_bodies(&self, e: usize) -> [Option<usize>; 2] {
        match (&self.forces[e].kind, &self.force_data[e]) {
            (SpatialForceKind::PointForce { at, .. }, _) => [index(at.body), None],
            (SpatialForceKind::Torque { body, .. }, _) => [Some(*body), None],
            (
                SpatialForceKind::SpringDamper { a, b, .. }
                | SpatialForceKind::Bushing { a, b, .. }
                | SpatialForceKind::Contact { a, b, .. },
                _,
            ) => [index(a.body), index(b.body)],
            (SpatialForceKind::RotationalSpring { .. }, ForceData::Angle { bodies, .. }) => *bodies,
            (SpatialForceKind::RotationalSpring { .. }, _) => [None, None],
        }
    }

    /// Visit ∂Q/∂q (along q ⊕ δ) and ∂Q/∂v term by term — each body's own
    /// (gravity, gyroscopic), then each force element's — over the
    /// velocities of the term's bodies only (first-order duals, one
    /// direction at a time): `add(row, col, ∂Q/∂q, ∂Q/∂v)`, repeated
    /// entries summed by the caller. O(bodies + elements). Stops,
    /// returning false, as soon as `add` does.
    fn force_blocks(
        &self,
        t: f64,
        q: &[f64],
        v: &[f64],
        mut add: impl FnMut(usize, usize, f64, f64) -> bool,
    ) -> bool {
        let mut out = vec![Dual64::from(0.0); self.nv()];
        let unit = Dual64::new(0.0, 1.0);
        let none = |_| [Dual64::from(0.0); NV_BODY];
        let terms = (0..self.names.len())
            .map(|b| (Loads::Body(b), [Some(b), None]))
            .chain((0..self.forces.len()).map(|e| (Loads::Element(e), self.force_bodies(e))));
        for (loads, ends) in terms {
            let mut bodies: Vec<usize> = ends.iter().flatten().copied().collect();
            bodies.dedup();
            let mut gq = [0.0; 2 * NV_BODY];
            for &bc in &bodies {
                for kc in 0..NV_BODY {
                    let bump = |b: usize| {
                        if b == bc {
                            direction(kc, unit)
                        } else {
                            [Dual64::from(0.0); NV_BODY]
                        }
                    };
                    // ∂Q/∂q of the term's rows, then ∂Q/∂v; the rows
                    // zeroed after each (the term adds into `out`)
                    self.forces_at(t, q, v, bump, none, loads, &mut out);
                    for (s, &br) in bodies.iter().enumerate() {
                        for i in 0..NV_BODY {
                            gq[NV_BODY * s + i] = out[NV_BODY * br + i].eps;
                            out[NV_BODY * br + i] = Dual64::from(0.0);
                        }
                    }
                    self.forces_at(t, q, v, none, bump, loads, &mut out);
                    for (s, &br) in bodies.iter().enumerate() {
                        for i in 0..NV_BODY {
                            let gv = out[NV_BODY * br + i].eps;
                            out[NV_BODY * br + i] = Dual64::from(0.0);
                            if !add(NV_BODY * br + i, NV_BODY * bc + kc, gq[NV_BODY * s + i], gv) {
                                return false;
                            }
                        }
                    }
                }
            }
        }
        true
    }

    /// Normalise every body's quaternion in q to unit length (the
    /// projection onto the configuration manifold |p| = 1).
    pub fn normalize(&self, q: &mut [f64]) {
        for b in 0..self.names.len() {
            let p = &mut q[NQ_BODY * b + 3..NQ_BODY * (b + 1)];
            let n = p.iter().map(|x| x * x).sum::<f64>().sqrt();
            if n > 0.0 {
                p.iter_mut().for_each(|x| *x /= n);
            }
        }
    }

    /// Φ of joint `el` at the given poses into `out` (its rows).
    fn joint_residual<D: Scalar>(
        el: &JointElement,
        pa: &Pose<D>,
        pb: &Pose<D>,
        f: D,
        out: &mut [D],
    ) {
        if let Some((drive, _, _)) = &el.drive {
            out[0] = super::driver::residual(drive, pa, pb, f);
            return;
        }
        match &el.kind {
            SpatialJointKind::Spherical { a, b } => {
                super::spherical::residual(pa, pb, &a.point, &b.point, out);
            }
            SpatialJointKind::Revolute { a, b, axis_b, .. } => super::revolute::residual(
                pa,
                pb,
                &a.point,
                &b.point,
                &el.perpendiculars[0],
                &el.perpendiculars[1],
                axis_b,
                out,
            ),
            SpatialJointKind::Universal {
                a,
                b,
                axis_a,
                axis_b,
            } => super::universal::residual(pa, pb, &a.point, &b.point, axis_a, axis_b, out),
            SpatialJointKind::Cylindrical { a, b, axis_b, .. } => super::cylindrical::residual(
                pa,
                pb,
                &a.point,
                &b.point,
                &el.perpendiculars[0],
                &el.perpendiculars[1],
                axis_b,
                out,
            ),
            SpatialJointKind::Prismatic { a, b, axis_b, .. } => super::prismatic::residual(
                pa,
                pb,
                &a.point,
                &b.point,
                &el.perpendiculars[0],
                &el.perpendiculars[1],
                axis_b,
                &el.locked,
                out,
            ),
            SpatialJointKind::Fixed {
                a,
                b,
                frame_a,
                frame_b,
            } => super::fixed::residual(pa, pb, &a.point, &b.point, frame_a, frame_b, out),
            SpatialJointKind::PointOnLine { a, b, .. } => super::point_on_line::residual(
                pa,
                pb,
                &a.point,
                &b.point,
                &el.perpendiculars[0],
                &el.perpendiculars[1],
                out,
            ),
            SpatialJointKind::Distance { a, b, length } => {
                super::distance::residual(pa, pb, &a.point, &b.point, *length, out);
            }
        }
    }

    /// Φ of joint `el` at (q ⊕ inner) ⊕ outer, the increments per end,
    /// with a driver's f(t) given as `f` (seeded in time by the caller).
    fn joint_at<D: Scalar>(
        el: &JointElement,
        q: &[f64],
        inner: [[D; NV_BODY]; 2],
        outer: [[D; NV_BODY]; 2],
        f: D,
        out: &mut [D],
    ) {
        let pa = pose(q, el.bodies[0], &inner[0], &outer[0]);
        let pb = pose(q, el.bodies[1], &inner[1], &outer[1]);
        Self::joint_residual(el, &pa, &pb, f, out);
    }

    /// The columns of end `side` of joint `el`: the 6 velocities of its
    /// body, or none for ground.
    fn end_columns(el: &JointElement, side: usize) -> Option<usize> {
        el.bodies[side].map(|b| NV_BODY * b)
    }

    /// v of the ends of `el`, lifted by `f`.
    fn end_velocities<D: Scalar>(
        el: &JointElement,
        v: &[f64],
        f: impl Fn(usize, f64) -> D,
    ) -> [[D; NV_BODY]; 2] {
        std::array::from_fn(|side| match el.bodies[side] {
            Some(b) => std::array::from_fn(|k| f(k, v[NV_BODY * b + k])),
            None => [D::zero(); NV_BODY],
        })
    }

    /// Q (len n_v) at (q ⊕ dq, v + dv), dq and dv per body, of the terms
    /// `loads` selects: all, only the applied loads (point forces and
    /// torques, actuators), or one body's own term or one force element
    /// (then added to `out`, not zeroed first, for the sparse tangent).
    #[allow(clippy::too_many_arguments)]
    fn forces_at<D: Scalar>(
        &self,
        t: f64,
        q: &[f64],
        v: &[f64],
        dq: impl Fn(usize) -> [D; NV_BODY],
        dv: impl Fn(usize) -> [D; NV_BODY],
        loads: Loads,
        out: &mut [D],
    ) {
        let applied_only = loads == Loads::Applied;
        if matches!(loads, Loads::All | Loads::Applied) {
            out.iter_mut().for_each(|x| *x = D::zero());
        }
        let zero = [D::zero(); NV_BODY];
        let pose_of = |b: Option<usize>| match b {
            Some(b) => pose(q, Some(b), &dq(b), &zero),
            None => Pose::ground(),
        };
        let vel_of = |b: Option<usize>| -> [D; NV_BODY] {
            match b {
                Some(b) => {
                    let d = dv(b);
                    std::array::from_fn(|k| d[k] + v[NV_BODY * b + k])
                }
                None => zero,
            }
        };
        let bodies = match loads {
            Loads::All => 0..self.names.len(),
            Loads::Body(b) => b..b + 1,
            Loads::Applied | Loads::Element(_) => 0..0,
        };
        for b in bodies {
            let w = vel_of(Some(b));
            forces::body_forces(
                self.mass[b],
                &self.inertia[b],
                &self.gravity,
                &[w[3], w[4], w[5]],
                &mut out[NV_BODY * b..NV_BODY * (b + 1)],
            );
        }
        let elements = match loads {
            Loads::All | Loads::Applied => 0..self.forces.len(),
            Loads::Element(e) => e..e + 1,
            Loads::Body(_) => 0..0,
        };
        for (f, data) in self.forces[elements.clone()]
            .iter()
            .zip(&self.force_data[elements])
        {
            match &f.kind {
                SpatialForceKind::PointForce { at, force, frame } => {
                    if let Some(b) = index(at.body) {
                        let p = pose_of(Some(b));
                        forces::point_force(
                            &p,
                            &at.point,
                            force,
                            *frame,
                            &mut out[NV_BODY * b..NV_BODY * (b + 1)],
                        );
                    }
                }
                SpatialForceKind::Torque {
                    body,
                    torque,
                    frame,
                } => {
                    let p = pose_of(Some(*body));
                    forces::torque(
                        &p,
                        torque,
                        *frame,
                        &mut out[NV_BODY * body..NV_BODY * (body + 1)],
                    );
                }
                SpatialForceKind::SpringDamper {
                    a,
                    b,
                    stiffness,
                    damping,
                    free_length,
                    actuator,
                } => {
                    // only the actuator's tension among the applied loads
                    let (k, c) = if applied_only {
                        (0.0, 0.0)
                    } else {
                        (*stiffness, *damping)
                    };
                    let act = actuator.as_ref().map_or(0.0, |f| f.eval(t).0);
                    if applied_only && act == 0.0 {
                        continue;
                    }
                    let (ia, ib) = (index(a.body), index(b.body));
                    let (pa, pb) = (pose_of(ia), pose_of(ib));
                    let ea = End {
                        pose: &pa,
                        velocity: vel_of(ia),
                        point: a.point,
                    };
                    let eb = End {
                        pose: &pb,
                        velocity: vel_of(ib),
                        point: b.point,
                    };
                    let (tension, u) = forces::spring_damper_tension(&ea, &eb, k, c, *free_length);
                    let tension = tension + act;
                    let f_on_a: Vec3<D> = u.map(|x| x * tension);
                    let f_on_b: Vec3<D> = u.map(|x| -(x * tension));
                    if let Some(i) = ia {
                        forces::add_point_load(
                            &pa,
                            &super::quaternion::lift(&a.point),
                            &f_on_a,
                            &mut out[NV_BODY * i..NV_BODY * (i + 1)],
                        );
                    }
                    if let Some(i) = ib {
                        forces::add_point_load(
                            &pb,
                            &super::quaternion::lift(&b.point),
                            &f_on_b,
                            &mut out[NV_BODY * i..NV_BODY * (i + 1)],
                        );
                    }
                }
                SpatialForceKind::RotationalSpring {
                    stiffness,
                    damping,
                    zero_angle,
                    actuator,
                    ..
                } => {
                    let ForceData::Angle { bodies, frame } = data else {
                        continue;
                    };
                    let (k, c) = if applied_only {
                        (0.0, 0.0)
                    } else {
                        (*stiffness, *damping)
                    };
                    let act = actuator.as_ref().map_or(0.0, |f| f.eval(t).0);
                    if applied_only && act == 0.0 {
                        continue;
                    }
                    let (ia, ib) = (bodies[0], bodies[1]);
                    let (pa, pb) = (pose_of(ia), pose_of(ib));
                    let ea = End {
                        pose: &pa,
                        velocity: vel_of(ia),
                        point: [0.0; 3],
                    };
                    let eb = End {
                        pose: &pb,
                        velocity: vel_of(ib),
                        point: [0.0; 3],
                    };
                    let [f_a, g_a, h_a, f_b] = frame;
                    let tau = forces::rotational_spring_torque(
                        &ea,
                        &eb,
                        [f_a, g_a, h_a, f_b],
                        k,
                        c,
                        *zero_angle,
                        act,
                    );
                    if let Some(i) = ib {
                        forces::add_torque(&pb, &tau, &mut out[NV_BODY * i..NV_BODY * (i + 1)]);
                    }
                    if let Some(i) = ia {
                        let minus = tau.map(|x| -x);
                        forces::add_torque(&pa, &minus, &mut out[NV_BODY * i..NV_BODY * (i + 1)]);
                    }
                }
                SpatialForceKind::Bushing { a, b, .. } if !applied_only => {
                    let ForceData::Bushing(params) = data else {
                        continue;
                    };
                    let (ia, ib) = (index(a.body), index(b.body));
                    let (pa, pb) = (pose_of(ia), pose_of(ib));
                    let ea = End {
                        pose: &pa,
                        velocity: vel_of(ia),
                        point: a.point,
                    };
                    let eb = End {
                        pose: &pb,
                        velocity: vel_of(ib),
                        point: b.point,
                    };
                    let (force, torque) = forces::bushing_load(&ea, &eb, params);
                    if let Some(i) = ib {
                        let o = &mut out[NV_BODY * i..NV_BODY * (i + 1)];
                        forces::add_point_load(&pb, &super::quaternion::lift(&b.point), &force, o);
                        forces::add_torque(&pb, &torque, o);
                    }
                    if let Some(i) = ia {
                        // −F at b's point (in a's frame: A_aᵀ (P_b − r_a)), −T
                        let pw = pb.point(&super::quaternion::lift(&b.point));
                        let s = super::quaternion::mat_t_vec(
                            &pa.a,
                            &super::quaternion::sub(&pw, &pa.r),
                        );
                        let o = &mut out[NV_BODY * i..NV_BODY * (i + 1)];
                        forces::add_point_load(&pa, &s, &force.map(|x| -x), o);
                        forces::add_torque(&pa, &torque.map(|x| -x), o);
                    }
                }
                SpatialForceKind::Bushing { .. } => {}
                SpatialForceKind::Contact { a, b, .. } if !applied_only => {
                    let ForceData::Contact(params) = data else {
                        continue;
                    };
                    let (ia, ib) = (index(a.body), index(b.body));
                    let (pa, pb) = (pose_of(ia), pose_of(ib));
                    let end = |pose, b| End {
                        pose,
                        velocity: vel_of(b),
                        point: [0.0; 3],
                    };
                    let Some((force, at)) =
                        contact::contact_load(params, &end(&pa, ia), &end(&pb, ib))
                    else {
                        continue;
                    };
                    if let Some(i) = ib {
                        let o = &mut out[NV_BODY * i..NV_BODY * (i + 1)];
                        forces::add_world_point_load(&pb, &at, &force, o);
                    }
                    if let Some(i) = ia {
                        let o = &mut out[NV_BODY * i..NV_BODY * (i + 1)];
                        forces::add_world_point_load(&pa, &at, &force.map(|x| -x), o);
                    }
                }
                SpatialForceKind::Contact { .. } => {}
            }
        }
    }
}

impl MechanicalSystem for SpatialSystem {
    fn nq(&self) -> usize {
        NQ_BODY * self.names.len()
    }

    fn nv(&self) -> usize {
        NV_BODY * self.names.len()
    }

    fn nc(&self) -> usize {
        self.row_owner.len()
    }

    /// ṙ = v_r, ṗ = ½ p ⊗ (0, ω') per body.
    fn position_derivative(&self, q: &[f64], v: &[f64], qdot: &mut [f64]) {
        for b in 0..self.names.len() {
            let (qb, vb) = (&q[NQ_BODY * b..], &v[NV_BODY * b..]);
            let out = &mut qdot[NQ_BODY * b..NQ_BODY * (b + 1)];
            out[..3].copy_from_slice(&vb[..3]);
            let rate = quaternion_rate(&[qb[3], qb[4], qb[5], qb[6]], &[vb[3], vb[4], vb[5]]);
            out[3..].copy_from_slice(&rate);
        }
    }

    /// (r + δr, p ⊗ exp(δω') / |p ⊗ exp(δω')|) per body: the exponential
    /// map of the body-frame rotation increment (Haug 1989, §9.3;
    /// Pinocchio's `integrate` on SO(3)), then the projection onto
    /// |p| = 1, so that δ = 0 normalises q.
    fn integrate_position(&self, q: &[f64], delta: &[f64], out: &mut [f64]) {
        for b in 0..self.names.len() {
            let (r, p) = coordinates::<f64>(q, b);
            let d: [f64; NV_BODY] = std::array::from_fn(|k| delta[NV_BODY * b + k]);
            let (r, p) = retract(&r, &p, &d);
            let norm = p.iter().map(|x| x * x).sum::<f64>().sqrt();
            out[NQ_BODY * b..NQ_BODY * b + 3].copy_from_slice(&r);
            for k in 0..4 {
                out[NQ_BODY * b + 3 + k] = p[k] / norm;
            }
        }
    }

    /// δr = dr, δω' = 2 vec(p* ⊗ dp) / |p|² per body: the left inverse
    /// of ṗ = ½ p ⊗ (0, ω') (p* ⊗ (p ⊗ x) = |p|² x), zero along p, the
    /// one direction in which nothing of the system changes (A(p/|p|)).
    fn position_increment(&self, q: &[f64], dq: &[f64], delta: &mut [f64]) {
        for b in 0..self.names.len() {
            let (qb, db) = (&q[NQ_BODY * b..], &dq[NQ_BODY * b..]);
            let out = &mut delta[NV_BODY * b..NV_BODY * (b + 1)];
            out[..3].copy_from_slice(&db[..3]);
            let conj = [qb[3], -qb[4], -qb[5], -qb[6]];
            let x = product(&conj, &[db[3], db[4], db[5], db[6]]);
            let n2 = qb[3] * qb[3] + qb[4] * qb[4] + qb[5] * qb[5] + qb[6] * qb[6];
            for k in 0..3 {
                out[3 + k] = 2.0 * x[k + 1] / n2;
            }
        }
    }

    /// ∂ṙ/∂q = 0, ∂ṗ/∂p dp = ½ dp ⊗ (0, ω') per body.
    fn kinematic_map_derivative(&self, _q: &[f64], v: &[f64], dq: &[f64], out: &mut [f64]) {
        for b in 0..self.names.len() {
            let (db, vb) = (&dq[NQ_BODY * b..], &v[NV_BODY * b..]);
            let o = &mut out[NQ_BODY * b..NQ_BODY * (b + 1)];
            o[..3].fill(0.0);
            let rate = quaternion_rate(&[db[3], db[4], db[5], db[6]], &[vb[3], vb[4], vb[5]]);
            o[3..].copy_from_slice(&rate);
        }
    }

    /// c_b = |p_b|² − 1 per body, ∂c_b/∂p_b = 2 p_bᵀ.
    fn manifold_constraints(&self, q: &[f64], c: &mut [f64], grad: &mut DMatrix<f64>) {
        grad.fill(0.0);
        for b in 0..self.names.len() {
            let p = &q[NQ_BODY * b + 3..NQ_BODY * (b + 1)];
            c[b] = p.iter().map(|x| x * x).sum::<f64>() - 1.0;
            for k in 0..4 {
                grad[(b, NQ_BODY * b + 3 + k)] = 2.0 * p[k];
            }
        }
    }

    /// Φ_q in its sparse pattern; M as its diagonal when every J' is
    /// diagonal (no n_v × n_v matrix), dense otherwise.
    fn data(&self) -> SystemData {
        let (nq, nv, nc) = (self.nq(), self.nv(), self.nc());
        if self.structure().mass_matrix_is_diagonal {
            SystemData::with_diagonal_mass(nq, nv, nc, Some(&self.jac_pattern))
        } else {
            SystemData::with_jacobian_pattern(nq, nv, nc, Some(&self.jac_pattern))
        }
    }

    /// Each quantity by its own method, Φ_q straight into its sparse
    /// pattern ([`Sparsity::fill_constraint_jacobian`], O(n_c)), the
    /// constant M written once per [`SystemData`] (its diagonal when so
    /// stored): nothing of size n_v × n_v or n_c × n_v per call.
    fn evaluate(&self, data: &mut SystemData, t: f64, q: &[f64], v: &[f64], what: Quantities) {
        if what.contains(Quantities::MASS_MATRIX) && !data.mass_matrix_filled {
            if data.mass_is_stored_diagonal() {
                for b in 0..self.names.len() {
                    for k in 0..3 {
                        data.mass_diagonal[NV_BODY * b + k] = self.mass[b];
                        data.mass_diagonal[NV_BODY * b + 3 + k] = self.inertia[b][k][k];
                    }
                }
            } else {
                self.mass_matrix(q, &mut data.mass_matrix);
            }
            data.mass_matrix_filled = true;
        }
        if what.contains(Quantities::FORCES) {
            self.generalized_forces(t, q, v, &mut data.forces);
        }
        if what.contains(Quantities::CONSTRAINTS) {
            self.constraints(t, q, &mut data.constraints);
        }
        if what.contains(Quantities::CONSTRAINT_JACOBIAN)
            || what.contains(Quantities::VELOCITY_CONSTRAINTS)
        {
            self.fill_constraint_jacobian(t, q, &mut data.constraint_jacobian);
        }
        if what.contains(Quantities::VELOCITY_CONSTRAINTS) {
            self.constraint_time_derivative(t, q, &mut data.constraint_time_derivative);
            data.velocity_constraints
                .copy_from_slice(&data.constraint_time_derivative);
            data.constraint_jacobian
                .mul_add(v, &mut data.velocity_constraints);
        }
        if what.contains(Quantities::GAMMA) {
            self.gamma(t, q, v, &mut data.gamma);
        }
        data.t = t;
        data.evaluated = what;
    }

    /// M = diag(m I₃, J') is constant; diagonal when every J' is.
    fn structure(&self) -> Structure {
        let diagonal = self
            .inertia
            .iter()
            .all(|j| j[0][1] == 0.0 && j[0][2] == 0.0 && j[1][2] == 0.0);
        Structure {
            mass_matrix_is_constant: true,
            mass_matrix_is_diagonal: diagonal,
        }
    }

    fn mass_matrix(&self, _q: &[f64], m: &mut DMatrix<f64>) {
        m.fill(0.0);
        for b in 0..self.names.len() {
            let o = NV_BODY * b;
            for k in 0..3 {
                m[(o + k, o + k)] = self.mass[b];
                for l in 0..3 {
                    m[(o + 3 + k, o + 3 + l)] = self.inertia[b][k][l];
                }
            }
        }
    }

    fn generalized_forces(&self, t: f64, q: &[f64], v: &[f64], f: &mut [f64]) {
        let zero = |_| [0.0; NV_BODY];
        self.forces_at::<f64>(t, q, v, zero, zero, Loads::All, f);
    }

    /// ∂Q/∂q along q ⊕ δ and ∂Q/∂v (n_v × n_v each), by dual numbers.
    fn force_jacobians(
        &self,
        t: f64,
        q: &[f64],
        v: &[f64],
        dq: &mut DMatrix<f64>,
        dv: &mut DMatrix<f64>,
    ) {
        let n = self.nv();
        let mut out = vec![Dual64::from(0.0); n];
        let unit = Dual64::new(0.0, 1.0);
        for col in 0..n {
            let (bc, k) = (col / NV_BODY, col % NV_BODY);
            let bump = |b: usize| {
                if b == bc {
                    direction(k, unit)
                } else {
                    [Dual64::from(0.0); NV_BODY]
                }
            };
            let none = |_| [Dual64::from(0.0); NV_BODY];
            self.forces_at(t, q, v, bump, none, Loads::All, &mut out);
            for i in 0..n {
                dq[(i, col)] = out[i].eps;
            }
            self.forces_at(t, q, v, none, bump, Loads::All, &mut out);
            for i in 0..n {
                dv[(i, col)] = out[i].eps;
            }
        }
    }

    fn constraints(&self, t: f64, q: &[f64], phi: &mut [f64]) {
        for el in &self.joints {
            let pa = pose_at(q, el.bodies[0]);
            let pb = pose_at(q, el.bodies[1]);
            let n = el.equations();
            let f = el.time_value(t).0;
            Self::joint_residual(el, &pa, &pb, f, &mut phi[el.row..el.row + n]);
        }
    }

    /// Φ_q (n_c × n_v), the velocity Jacobian: column j = d/dε Φ(q ⊕ ε e_j).
    fn constraint_jacobian(&self, t: f64, q: &[f64], jac: &mut DMatrix<f64>) {
        jac.fill(0.0);
        let mut out = [Dual64::from(0.0); 6];
        let zero = [Dual64::from(0.0); NV_BODY];
        for el in &self.joints {
            let n = el.equations();
            let f = Dual64::from(el.time_value(t).0);
            for side in 0..2 {
                let Some(c0) = Self::end_columns(el, side) else {
                    continue;
                };
                for k in 0..NV_BODY {
                    let mut inner = [zero; 2];
                    inner[side] = direction(k, Dual64::new(0.0, 1.0));
                    Self::joint_at(el, q, inner, [zero; 2], f, &mut out[..n]);
                    for i in 0..n {
                        jac[(el.row + i, c0 + k)] = out[i].eps;
                    }
                }
            }
        }
    }

    /// Φ_t = d/dε Φ(t + ε, q): zero for joints, the drivers' from f'(t).
    fn constraint_time_derivative(&self, t: f64, q: &[f64], phi_t: &mut [f64]) {
        phi_t.fill(0.0);
        let zero = [Dual64::from(0.0); NV_BODY];
        let mut out = [Dual64::from(0.0); 1];
        for el in &self.joints[self.joint_count..] {
            let (f, f1, _) = el.time_value(t);
            Self::joint_at(el, q, [zero; 2], [zero; 2], Dual64::new(f, f1), &mut out);
            phi_t[el.row] = out[0].eps;
        }
    }

    /// γ = −d²/dε² Φ(q ⊕ ε v) at ε = 0 (v constant along that curve, so
    /// Φ_q v̇ = γ on every motion that keeps Φ = 0).
    fn gamma(&self, t: f64, q: &[f64], v: &[f64], gamma: &mut [f64]) {
        let mut out = [Dual2_64::from(0.0); 6];
        let zero = [Dual2_64::from(0.0); NV_BODY];
        for el in &self.joints {
            let n = el.equations();
            let (f, f1, f2) = el.time_value(t);
            let outer = Self::end_velocities(el, v, |_, x| Dual2_64::new(0.0, x, 0.0));
            let f = Dual2_64::new(f, f1, f2);
            Self::joint_at(el, q, [zero; 2], outer, f, &mut out[..n]);
            for i in 0..n {
                gamma[el.row + i] = -out[i].v2;
            }
        }
    }

    /// ∂(Φ_qᵀλ)/∂q along q ⊕ δ: entry (j, k) = ∂²(λᵀΦ)/∂δ_k∂ε_j of
    /// λᵀΦ((q ⊕ δ) ⊕ ε), by nested duals.
    fn constraint_force_jacobian(&self, t: f64, q: &[f64], lambda: &[f64], out: &mut DMatrix<f64>) {
        out.fill(0.0);
        self.constraint_force_blocks(t, q, lambda, |row, col, h| {
            out[(row, col)] += h;
            true
        });
    }

    fn kinetic_energy(&self, _q: &[f64], v: &[f64]) -> f64 {
        (0..self.names.len())
            .map(|b| {
                let vb = &v[NV_BODY * b..NV_BODY * (b + 1)];
                let w = [vb[3], vb[4], vb[5]];
                let rdot = [vb[0], vb[1], vb[2]];
                0.5 * self.mass[b] * dot(&rdot, &rdot)
                    + 0.5 * dot(&w, &mat_vec(&self.inertia[b], &w))
            })
            .sum()
    }

    /// V = −Σ m g·r + Σ ½ k (ℓ − ℓ0)² + Σ ½ k (θ − θ0)² + Σ (½ dᵀK d +
    /// ½ θᵀK_r θ) (the bushing's rotational term is the potential of its
    /// law only to O(θ³): see [`forces::small_rotation`]) + the contacts'
    /// elastic energy ([`contact::contact_potential`]).
    fn potential_energy(&self, _t: f64, q: &[f64]) -> f64 {
        let mut e = 0.0;
        for b in 0..self.names.len() {
            let r = [q[NQ_BODY * b], q[NQ_BODY * b + 1], q[NQ_BODY * b + 2]];
            e -= self.mass[b] * dot(&self.gravity, &r);
        }
        for (f, data) in self.forces.iter().zip(&self.force_data) {
            match (&f.kind, data) {
                (
                    SpatialForceKind::SpringDamper {
                        a,
                        b,
                        stiffness,
                        free_length,
                        ..
                    },
                    _,
                ) => {
                    let pa = pose_at(q, index(a.body)).point(&a.point);
                    let pb = pose_at(q, index(b.body)).point(&b.point);
                    e += forces::spring_energy(&pa, &pb, *stiffness, *free_length);
                }
                (
                    SpatialForceKind::RotationalSpring {
                        stiffness,
                        zero_angle,
                        ..
                    },
                    ForceData::Angle { bodies, frame },
                ) => {
                    let (pa, pb) = (pose_at(q, bodies[0]), pose_at(q, bodies[1]));
                    let theta = forces::joint_angle(&pa, &pb, &frame[0], &frame[1], &frame[3]);
                    e += 0.5 * stiffness * (theta - zero_angle).powi(2);
                }
                (SpatialForceKind::Bushing { a, b, .. }, ForceData::Bushing(params)) => {
                    let (pa, pb) = (pose_at(q, index(a.body)), pose_at(q, index(b.body)));
                    let end = |pose, point| End {
                        pose,
                        velocity: [0.0; 6],
                        point,
                    };
                    let (d, theta) =
                        forces::bushing_deflection(&end(&pa, a.point), &end(&pb, b.point), params);
                    for k in 0..3 {
                        e += 0.5 * params.stiffness[k] * d[k] * d[k]
                            + 0.5 * params.rotational_stiffness[k] * theta[k] * theta[k];
                    }
                }
                (SpatialForceKind::Contact { a, b, .. }, ForceData::Contact(params)) => {
                    let (pa, pb) = (pose_at(q, index(a.body)), pose_at(q, index(b.body)));
                    e += contact::contact_potential(params, &pa, &pb);
                }
                _ => {}
            }
        }
        e
    }

    fn constraint_label(&self, row: usize) -> String {
        let (e, r) = self.row_owner[row];
        let el = &self.joints[e];
        if el.drive.is_some() {
            return format!("driver '{}'", el.name);
        }
        format!("joint '{}' ({})", el.name, row_names(&el.kind)[r])
    }

    fn constraint_row_meaning(&self, _row: usize) -> String {
        String::new()
    }

    /// Name of velocity `i`, e.g. `top.wz` (ω' in the body frame).
    fn velocity_label(&self, i: usize) -> String {
        match self.names.get(i / NV_BODY) {
            Some(name) => format!("{name}.{}", VELOCITY_LABELS[i % NV_BODY]),
            None => format!("v[{i}]"),
        }
    }

    /// Name of position `i` (of q, len n_q), e.g. `top.z`, `top.qw`.
    fn tangent_coordinate_label(&self, i: usize) -> String {
        self.tangent_label(i)
    }

    fn coordinate_label(&self, i: usize) -> String {
        match self.names.get(i / NQ_BODY) {
            Some(name) => format!("{name}.{}", POSITION_LABELS[i % NQ_BODY]),
            None => format!("q[{i}]"),
        }
    }

    /// The breakpoints of the drivers' time functions, sorted.
    fn breakpoints(&self) -> Vec<f64> {
        let mut out = Vec::new();
        for el in &self.joints[self.joint_count..] {
            if let Some((_, f, _)) = &el.drive {
                f.breakpoints(&mut out);
            }
        }
        for f in &self.forces {
            if let SpatialForceKind::SpringDamper {
                actuator: Some(a), ..
            }
            | SpatialForceKind::RotationalSpring {
                actuator: Some(a), ..
            } = &f.kind
            {
                a.breakpoints(&mut out);
            }
        }
        out.retain(|t| t.is_finite());
        out.sort_by(f64::total_cmp);
        out.dedup();
        out
    }

    fn second_derivatives(&self) -> Option<&dyn SecondDerivatives> {
        Some(self)
    }

    fn applied_loads(&self) -> Option<&dyn AppliedLoads> {
        Some(self)
    }

    fn switching(&self) -> Option<&dyn SwitchingFunctions> {
        Some(self)
    }

    fn sparsity(&self) -> Option<&dyn Sparsity> {
        Some(self)
    }

    fn friction(&self) -> Option<&dyn FrictionRows> {
        (!self.frictions.is_empty()).then_some(self as &dyn FrictionRows)
    }

    fn joint_coordinates(&self) -> Option<Box<dyn crate::JointCoordinateSystem>> {
        Some(Box::new(crate::SpatialJointSystem::new(self)))
    }
}

impl SpatialSystem {
    /// Parameters and body indices (a, b) of the contact of switching
    /// function `i`.
    pub(super) fn contact(&self, i: usize) -> Option<(&SpatialContactParams, [Option<usize>; 2])> {
        let &e = self.contacts.get(i)?;
        match (&self.forces[e].kind, &self.force_data[e]) {
            (SpatialForceKind::Contact { a, b, .. }, ForceData::Contact(p)) => {
                Some((p, [index(a.body), index(b.body)]))
            }
            _ => None,
        }
    }
}

/// The contacts' gaps, in force-element order (see [`super::contact`]).
impl SwitchingFunctions for SpatialSystem {
    fn switching_count(&self) -> usize {
        self.contacts.len()
    }

    fn switching_values(&self, _t: f64, q: &[f64], _v: &[f64], s: &mut [f64]) {
        for (k, sk) in s.iter_mut().enumerate().take(self.contacts.len()) {
            *sk = match self.contact(k) {
                Some((p, [a, b])) => contact::contact_frame(p, &pose_at(q, a), &pose_at(q, b)).0,
                None => f64::NAN,
            };
        }
    }

    fn switching_name(&self, i: usize) -> String {
        self.contacts.get(i).map_or_else(
            || format!("switching function {i}"),
            |&e| self.forces[e].name.clone(),
        )
    }

    fn switching_columns(&self, _i: usize) -> [&'static str; 2] {
        ["gap", "normal_force"]
    }

    fn switching_state(&self, _t: f64, q: &[f64], v: &[f64], i: usize) -> (f64, f64) {
        let Some((p, bodies)) = self.contact(i) else {
            return (f64::NAN, f64::NAN);
        };
        let poses = bodies.map(|b| pose_at(q, b));
        let ends: [End<'_, f64>; 2] = std::array::from_fn(|side| End {
            pose: &poses[side],
            velocity: match bodies[side] {
                Some(b) => std::array::from_fn(|k| v[NV_BODY * b + k]),
                None => [0.0; NV_BODY],
            },
            point: [0.0; 3],
        });
        contact::contact_state(p, &ends[0], &ends[1])
    }

    fn impact_restitution(&self, i: usize) -> Option<f64> {
        match self.contact(i)?.0.law {
            jounce_model::ContactLaw::Impact { restitution } => Some(restitution),
            _ => None,
        }
    }

    /// w = ∂g/∂q in velocity space: column j = d/dε g(q ⊕ ε e_j), by dual
    /// numbers (so that g' = wᵀv exactly).
    fn impulse_direction(&self, _t: f64, q: &[f64], i: usize, w: &mut [f64]) -> bool {
        let Some((p, bodies)) = self.contact(i) else {
            return false;
        };
        if !matches!(p.law, jounce_model::ContactLaw::Impact { .. }) {
            return false;
        }
        w.fill(0.0);
        let zero = [Dual64::from(0.0); NV_BODY];
        for side in 0..2 {
            let Some(b) = bodies[side] else {
                continue;
            };
            for k in 0..NV_BODY {
                let bump = direction(k, Dual64::new(0.0, 1.0));
                let pa = pose(q, bodies[0], if side == 0 { &bump } else { &zero }, &zero);
                let pb = pose(q, bodies[1], if side == 1 { &bump } else { &zero }, &zero);
                w[NV_BODY * b + k] += contact::contact_frame(p, &pa, &pb).0.eps;
            }
        }
        true
    }
}

/// Φ_q and the tangent in the fixed patterns of the joints' and force
/// elements' bodies: a joint row depends only on the 6 velocities
/// (ṙ, ω') of each of its two bodies, so a chain's Φ_q has 12 entries a
/// row and its right-hand side costs O(N).
impl Sparsity for SpatialSystem {
    fn jacobian_pattern(&self) -> Vec<(usize, usize)> {
        self.jac_pattern.clone()
    }

    /// Each body's own 6 × 6 block (M, the gyroscopic ∂Q/∂v), and every
    /// pair of velocities of the bodies of one joint, driver or force
    /// element (its constraint-force and force derivatives).
    fn tangent_entries(&self) -> Vec<(usize, usize)> {
        let mut p = Vec::new();
        let mut couple = |ends: [Option<usize>; 2]| {
            for a in ends.iter().flatten() {
                for b in ends.iter().flatten() {
                    for i in 0..NV_BODY {
                        for j in 0..NV_BODY {
                            p.push((NV_BODY * a + i, NV_BODY * b + j));
                        }
                    }
                }
            }
        };
        for b in 0..self.names.len() {
            couple([Some(b), None]);
        }
        for el in &self.joints {
            couple(el.bodies);
        }
        for e in 0..self.forces.len() {
            couple(self.force_bodies(e));
        }
        p.sort_unstable();
        p.dedup();
        p
    }

    /// O(n_c): per joint or driver one evaluation of Φ in 12-component
    /// vector duals (the 6 velocities of each end, along q ⊕ δ, the poses
    /// seeded to first order by `seeded_pose`), its
    /// entries written into their slots (found by search when `jac` does
    /// not have this system's pattern, e.g. a dense one).
    fn fill_constraint_jacobian(&self, t: f64, q: &[f64], jac: &mut SparseMatrix) {
        type D = DualSVec64<{ 2 * NV_BODY }>;
        let own = jac.nnz() == self.jac_nnz && jac.shape() == (self.nc(), self.nv());
        if !own {
            jac.fill_zero();
        }
        let mut out = [D::from_re(0.0); 6];
        for el in &self.joints {
            let n = el.equations();
            let f = D::from_re(el.time_value(t).0);
            let pa = seeded_pose(q, el.bodies[0], 0);
            let pb = seeded_pose(q, el.bodies[1], NV_BODY);
            Self::joint_residual(el, &pa, &pb, f, &mut out[..n]);
            for (i, phi) in out[..n].iter().enumerate() {
                let row = el.row + i;
                let g = phi.eps.0.as_ref();
                for (side, b) in el.bodies.iter().enumerate() {
                    let Some(b) = b else { continue };
                    for k in 0..NV_BODY {
                        let value = g.map_or(0.0, |g| g[NV_BODY * side + k]);
                        let slot = if own {
                            Some(self.jac_slots[2 * NV_BODY * row + NV_BODY * side + k])
                        } else {
                            jac.index_of(row, NV_BODY * b + k)
                        };
                        if let Some(slot) = slot {
                            jac.values[slot] = value;
                        }
                    }
                }
            }
        }
    }

    /// The blocks of [`MechanicalSystem::constraint_force_jacobian`] and
    /// [`MechanicalSystem::force_jacobians`] (derivatives along q ⊕ δ, so
    /// n_v columns), element by element, added at their entries of
    /// `pattern` (binary search) instead of into n_v × n_v matrices. M is
    /// constant (body-frame ω'), so K and C are exact; returns false only
    /// when `pattern` lacks an entry of an element's block (never for
    /// [`Sparsity::tangent_entries`]).
    fn fill_tangent(
        &self,
        t: f64,
        q: &[f64],
        v: &[f64],
        lambda: &[f64],
        pattern: &[(usize, usize)],
        k: &mut [f64],
        c: &mut [f64],
    ) -> bool {
        k.fill(0.0);
        c.fill(0.0);
        let slots = crate::sparse::PatternSlots::new(pattern);
        let slot = |row: usize, col: usize| slots.find(row, col);
        self.constraint_force_blocks(t, q, lambda, |row, col, h| match slot(row, col) {
            Some(e) => {
                k[e] += h;
                true
            }
            None => false,
        }) && self.force_blocks(t, q, v, |row, col, gq, gv| match slot(row, col) {
            Some(e) => {
                k[e] -= gq;
                c[e] -= gv;
                true
            }
            None => false,
        })
    }
}

impl AppliedLoads for SpatialSystem {
    /// The point forces and torques (len n_v).
    fn applied_load_forces(&self, t: f64, q: &[f64], v: &[f64], qa: &mut [f64]) {
        let zero = |_| [0.0; NV_BODY];
        self.forces_at::<f64>(t, q, v, zero, zero, Loads::Applied, qa);
    }
}

impl SecondDerivatives for SpatialSystem {
    /// ∂γ/∂q (along q ⊕ δ) and ∂γ/∂v of γ = −d²/dε² Φ((q ⊕ δ) ⊕ ε v), by
    /// second-order duals over first-order duals.
    fn exact_gamma_jacobians(
        &self,
        t: f64,
        q: &[f64],
        v: &[f64],
        dq: &mut DMatrix<f64>,
        dv: &mut DMatrix<f64>,
    ) {
        type D = Dual2<Dual64>;
        dq.fill(0.0);
        dv.fill(0.0);
        let zero = [D::from(0.0); NV_BODY];
        let inner_unit = D::from_re(Dual64::new(0.0, 1.0));
        let mut out = [D::from(0.0); 6];
        for el in &self.joints {
            let n = el.equations();
            let (f, f1, f2) = el.time_value(t);
            let f = D::new(Dual64::from(f), Dual64::from(f1), Dual64::from(f2));
            let along = Self::end_velocities(el, v, |_, x| {
                D::new(Dual64::from(0.0), Dual64::from(x), Dual64::from(0.0))
            });
            for side in 0..2 {
                let Some(c0) = Self::end_columns(el, side) else {
                    continue;
                };
                for k in 0..NV_BODY {
                    let mut inner = [zero; 2];
                    inner[side] = direction(k, inner_unit);
                    Self::joint_at(el, q, inner, along, f, &mut out[..n]);
                    for i in 0..n {
                        dq[(el.row + i, c0 + k)] = -out[i].v2.eps;
                    }
                    let mut bumped = along;
                    bumped[side][k] = D::new(
                        Dual64::from(0.0),
                        Dual64::new(v[c0 + k], 1.0),
                        Dual64::from(0.0),
                    );
                    Self::joint_at(el, q, [zero; 2], bumped, f, &mut out[..n]);
                    for i in 0..n {
                        dv[(el.row + i, c0 + k)] = -out[i].v2.eps;
                    }
                }
            }
        }
    }

    /// ∂(Φ_q a)/∂q along q ⊕ δ: d/dδ d/dε Φ((q ⊕ δ) ⊕ ε a).
    fn exact_constraint_hessian_product(
        &self,
        t: f64,
        q: &[f64],
        a: &[f64],
        out: &mut DMatrix<f64>,
    ) {
        type D = Dual<Dual64>;
        out.fill(0.0);
        let zero = [D::from(0.0); NV_BODY];
        let inner_unit = D::from_re(Dual64::new(0.0, 1.0));
        let mut res = [D::from(0.0); 6];
        for el in &self.joints {
            let n = el.equations();
            let f = D::from(el.time_value(t).0);
            let along =
                Self::end_velocities(el, a, |_, x| D::new(Dual64::from(0.0), Dual64::from(x)));
            for side in 0..2 {
                let Some(c0) = Self::end_columns(el, side) else {
                    continue;
                };
                for k in 0..NV_BODY {
                    let mut inner = [zero; 2];
                    inner[side] = direction(k, inner_unit);
                    Self::joint_at(el, q, inner, along, f, &mut res[..n]);
                    for i in 0..n {
                        out[(el.row + i, c0 + k)] = res[i].eps.eps;
                    }
                }
            }
        }
    }

    /// Φ_qt = d/dδ d/dε Φ(t + δ, q ⊕ ε e_j): zero for joints, the
    /// drivers' rows by nested duals (time inner, direction outer).
    fn exact_constraint_time_jacobian(&self, t: f64, q: &[f64], out: &mut DMatrix<f64>) {
        type D = Dual<Dual64>;
        out.fill(0.0);
        let zero = [D::from(0.0); NV_BODY];
        let outer_unit = D::new(Dual64::from(0.0), Dual64::from(1.0));
        let mut res = [D::from(0.0); 1];
        for el in &self.joints[self.joint_count..] {
            let (f, f1, _) = el.time_value(t);
            let f = D::from_re(Dual64::new(f, f1));
            for side in 0..2 {
                let Some(c0) = Self::end_columns(el, side) else {
                    continue;
                };
                for k in 0..NV_BODY {
                    let mut outer = [zero; 2];
                    outer[side] = direction(k, outer_unit);
                    Self::joint_at(el, q, [zero; 2], outer, f, &mut res);
                    out[(el.row, c0 + k)] = res[0].eps.eps;
                }
            }
        }
    }

    /// ∂(M a)/∂q = 0: M is constant in body-frame angular velocities.
    fn exact_mass_matrix_derivative(&self, _q: &[f64], _a: &[f64], out: &mut DMatrix<f64>) {
        out.fill(0.0);
    }
}
