//! Reading a spatial model file (`[model] space = "spatial"`): `[ground]`
//! points, `[[bodies]]` with orientation and inertia tensor,
//! `[[joints]]`, `[[forces]]` and `[[contacts]]` (sphere-plane,
//! sphere-sphere; the planar contacts' law and friction keys) in 3-D. Errors name the file, the line and
//! the element, as the planar reader's do.
//!
//! Owns: the spatial keys, their defaults and validation (unit quaternion,
//! symmetric positive-definite inertia, unit and perpendicular axes), and
//! the conversion of world-frame inputs (axes, a world angular velocity)
//! to body frames. Must not: evaluate dynamics.

use toml::de::{DeTable, DeValue};

use crate::contacts::{contact_law, LAW_KEYS};
use crate::error::ModelError;
use crate::friction::{parse_friction, FRICTION_KEYS};
use crate::functions::Functions;
use crate::parse::{body_ref_among, check_unique, named_elements, named_point, Named, GROUND};
use crate::reader::{num_str, Elem, Src, Val};
use crate::spatial::{
    rotation_matrix, SpatialAttachment, SpatialBody, SpatialContactGeometry, SpatialDriver,
    SpatialForce, SpatialForceKind, SpatialFrame, SpatialJoint, SpatialJointKind, SpatialModel,
};
use crate::types::BodyRef;

/// Top-level tables a spatial file may have.
pub(crate) const SPATIAL_TOP_KEYS: &[&str] = &[
    "model",
    "ground",
    "functions",
    "bodies",
    "joints",
    "drivers",
    "forces",
    "contacts",
    "settings",
];

const JOINT_TYPES: &[&str] = &[
    "spherical",
    "revolute",
    "universal",
    "fixed",
    "distance",
    "cylindrical",
    "prismatic",
    "point_on_line",
];
const FORCE_TYPES: &[&str] = &[
    "point_force",
    "torque",
    "spring_damper",
    "rotational_spring",
    "bushing",
];
const FRAMES: &[&str] = &["world", "body"];
const CONTACT_TYPES: &[&str] = &["sphere_plane", "sphere_sphere"];

/// Tolerance on |p| − 1 of a given orientation and on the unit length and
/// perpendicularity of given axes.
const UNIT_TOL: f64 = 1e-6;

struct SpatialCtx {
    ground_points: Vec<(String, [f64; 3])>,
    bodies: Vec<SpatialBody>,
}

/// Parses the spatial elements of `root` (the `[model]` table already read,
/// with gravity `gravity`).
pub(crate) fn parse<'a, 'i>(
    src: Src<'a>,
    root: &'a DeTable<'i>,
    gravity: [f64; 3],
) -> Result<SpatialModel, ModelError> {
    // [functions]: the planar parser and evaluator, shared
    let mut functions = Functions::new(src, root.get("functions"))?;
    functions.compile_all()?;
    let ground_points = match root.get(GROUND) {
        Some(v) => {
            let e = Elem::new(src, "ground", v, GROUND)?;
            e.check_keys(&["points"])?;
            points(&e)?
        }
        None => Vec::new(),
    };
    let body_elems = named_elements(src, root, "bodies", "body")?;
    check_unique(src, "body", &body_elems.iter().collect::<Vec<_>>())?;
    let mut bodies = Vec::with_capacity(body_elems.len());
    for b in &body_elems {
        bodies.push(body(b)?);
    }
    let ctx = SpatialCtx {
        ground_points,
        bodies,
    };
    let joint_elems = named_elements(src, root, "joints", "joint")?;
    let driver_elems = named_elements(src, root, "drivers", "driver")?;
    let all: Vec<&Named> = joint_elems.iter().chain(driver_elems.iter()).collect();
    check_unique(src, "joint/driver", &all)?;
    let joints = joint_elems
        .iter()
        .map(|n| ctx.joint(n))
        .collect::<Result<Vec<_>, _>>()?;
    let drivers = driver_elems
        .iter()
        .map(|n| driver(n, &joints, &mut functions))
        .collect::<Result<Vec<_>, _>>()?;
    let force_elems = named_elements(src, root, "forces", "force")?;
    check_unique(src, "force", &force_elems.iter().collect::<Vec<_>>())?;
    let mut forces = force_elems
        .iter()
        .map(|n| ctx.force(n, &joints, &mut functions))
        .collect::<Result<Vec<_>, _>>()?;
    // contacts are force elements; names unique among both, as planar
    for n in &named_elements(src, root, "contacts", "contact")? {
        if forces.iter().any(|f| f.name == n.name) {
            return Err(n.elem.invalid(
                "name",
                &n.name_span,
                format!(
                    "'{}' is already the name of a force element or contact (names must be unique among [[forces]] and [[contacts]])",
                    n.name
                ),
            ));
        }
        forces.push(ctx.contact(n)?);
    }
    Ok(SpatialModel {
        gravity,
        bodies: ctx.bodies,
        joints,
        forces,
        drivers,
    })
}

/// A `[[drivers]]` entry: `type = "joint"`, the driven revolute or
/// prismatic `joint`, and `function`, a time function (number, name in
/// `[functions]` or inline table).
fn driver<'a, 'i>(
    n: &Named<'a, 'i>,
    joints: &[SpatialJoint],
    functions: &mut Functions<'a, 'i>,
) -> Result<SpatialDriver, ModelError> {
    let e = &n.elem;
    e.req_choice("type", "spatial driver type", &["joint"])?;
    e.check_keys(&["name", "type", "joint", "function"])?;
    let (j, v, jname) = e.reference("joint", "joint", joints.iter().map(|j| j.name.as_str()))?;
    if !matches!(
        joints[j].kind,
        SpatialJointKind::Revolute { .. } | SpatialJointKind::Prismatic { .. }
    ) {
        return Err(ModelError::Invalid {
            at: e.at(&v.span()),
            message: format!(
                "joint '{jname}' is a {} joint and cannot be driven (only revolute and prismatic joints can)",
                JOINT_TYPES[joint_type_index(&joints[j].kind)]
            ),
        });
    }
    let fv = e.req("function")?;
    let function = functions.parse(&e.label, &e.path("function"), fv)?;
    Ok(SpatialDriver {
        name: n.name.clone(),
        joint: j,
        function,
    })
}

/// The `[[drivers]]` of a TOML file that includes a URDF (`[model] urdf`):
/// `type = "joint"` on a revolute, continuous or prismatic joint of the
/// URDF (`urdf_joints`: every URDF joint with its type, in file order;
/// `joints`: the spatial model's joints, the moving URDF joints among them
/// by name), `function` a time function (`[functions]` shared with the
/// spatial reader). Refused by name: an unknown joint, a fixed (or
/// spherical) joint, a joint driven twice, a driver named like a joint.
pub(crate) fn urdf_drivers<'a, 'i>(
    src: Src<'a>,
    root: &'a DeTable<'i>,
    joints: &[SpatialJoint],
    urdf_joints: &[(String, &'static str)],
) -> Result<Vec<SpatialDriver>, ModelError> {
    let mut functions = Functions::new(src, root.get("functions"))?;
    functions.compile_all()?;
    let driver_elems = named_elements(src, root, "drivers", "driver")?;
    check_unique(src, "driver", &driver_elems.iter().collect::<Vec<_>>())?;
    let mut drivers: Vec<SpatialDriver> = Vec::with_capacity(driver_elems.len());
    for n in &driver_elems {
        let e = &n.elem;
        if urdf_joints.iter().any(|(j, _)| *j == n.name) {
            return Err(e.invalid(
                "name",
                &n.name_span,
                format!(
                    "'{}' is the name of a URDF joint (a driver needs a name of its own)",
                    n.name
                ),
            ));
        }
        e.req_choice("type", "spatial driver type", &["joint"])?;
        e.check_keys(&["name", "type", "joint", "function"])?;
        let (u, v, jname) = e.reference(
            "joint",
            "joint",
            urdf_joints.iter().map(|(j, _)| j.as_str()),
        )?;
        let kind = urdf_joints[u].1;
        if !matches!(kind, "revolute" | "continuous" | "prismatic") {
            return Err(ModelError::Invalid {
                at: e.at(&v.span()),
                message: format!(
                    "joint '{jname}' is a {kind} joint in the URDF and cannot be driven (only \
                     revolute, continuous and prismatic joints can)"
                ),
            });
        }
        let j = joints
            .iter()
            .position(|s| s.name == jname)
            .expect("a moving URDF joint is a spatial joint of its name");
        if let Some(other) = drivers.iter().find(|d| d.joint == j) {
            return Err(ModelError::Invalid {
                at: e.at(&v.span()),
                message: format!(
                    "joint '{jname}' is already driven by driver '{}' (a joint takes one driver)",
                    other.name
                ),
            });
        }
        let fv = e.req("function")?;
        let function = functions.parse(&e.label, &e.path("function"), fv)?;
        drivers.push(SpatialDriver {
            name: n.name.clone(),
            joint: j,
            function,
        });
    }
    Ok(drivers)
}

/// The index in [`JOINT_TYPES`] of a joint kind's file name.
fn joint_type_index(k: &SpatialJointKind) -> usize {
    match k {
        SpatialJointKind::Spherical { .. } => 0,
        SpatialJointKind::Revolute { .. } => 1,
        SpatialJointKind::Universal { .. } => 2,
        SpatialJointKind::Fixed { .. } => 3,
        SpatialJointKind::Distance { .. } => 4,
        SpatialJointKind::Cylindrical { .. } => 5,
        SpatialJointKind::Prismatic { .. } => 6,
        SpatialJointKind::PointOnLine { .. } => 7,
    }
}

/// `points = { name = [x, y, z], ... }` in file order.
fn points(e: &Elem<'_, '_>) -> Result<Vec<(String, [f64; 3])>, ModelError> {
    let Some(v) = e.get("points") else {
        return Ok(Vec::new());
    };
    let pe = e.nested("points", v)?;
    let mut entries: Vec<_> = pe.table.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    let mut out = Vec::with_capacity(entries.len());
    for (k, pv) in entries {
        let name: &str = k.get_ref();
        if name.trim().is_empty() {
            return Err(pe.invalid("points", &k.span(), "point names must not be empty"));
        }
        out.push((name.to_string(), pe.vecn(name, pv, "[x, y, z]")?));
    }
    Ok(out)
}

fn mat_vec(a: &[[f64; 3]; 3], x: [f64; 3]) -> [f64; 3] {
    std::array::from_fn(|i| a[i][0] * x[0] + a[i][1] * x[1] + a[i][2] * x[2])
}

fn mat_t_vec(a: &[[f64; 3]; 3], x: [f64; 3]) -> [f64; 3] {
    std::array::from_fn(|i| a[0][i] * x[0] + a[1][i] * x[1] + a[2][i] * x[2])
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// The inertia tensor from `inertia` (3×3 rows, or the diagonal
/// [Ixx, Iyy, Izz] with optional `products` = [Ixy, Ixz, Iyz], the tensor's
/// off-diagonal entries), checked symmetric and positive definite.
fn inertia(e: &Elem<'_, '_>) -> Result<[[f64; 3]; 3], ModelError> {
    let v = e.req("inertia")?;
    let span = v.span();
    let rows = e.array("inertia", v)?;
    let is_matrix = rows
        .iter()
        .all(|r| matches!(r.get_ref(), DeValue::Array(_)));
    let j = if is_matrix && rows.len() == 3 {
        if e.get("products").is_some() {
            return Err(e.invalid(
                "products",
                &e.value_span("products"),
                "is only for a diagonal `inertia = [Ixx, Iyy, Izz]`; the 3×3 tensor has its products",
            ));
        }
        let mut j = [[0.0; 3]; 3];
        for (i, r) in rows.iter().enumerate() {
            j[i] = e.vecn(&format!("inertia[{i}]"), r, "[Ji1, Ji2, Ji3]")?;
        }
        let scale = j.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()));
        for (a, b) in [(0, 1), (0, 2), (1, 2)] {
            if (j[a][b] - j[b][a]).abs() > 1e-12 * scale {
                return Err(e.invalid(
                    "inertia",
                    &span,
                    format!(
                        "must be symmetric, got J[{a}][{b}] = {} and J[{b}][{a}] = {}",
                        num_str(j[a][b]),
                        num_str(j[b][a])
                    ),
                ));
            }
        }
        j
    } else {
        let d: [f64; 3] = e.vecn("inertia", v, "[Ixx, Iyy, Izz] or a 3×3 array")?;
        let p = match e.get("products") {
            Some(pv) => e.vecn("products", pv, "[Ixy, Ixz, Iyz]")?,
            None => [0.0; 3],
        };
        [[d[0], p[0], p[1]], [p[0], d[1], p[2]], [p[1], p[2], d[2]]]
    };
    // Sylvester's criterion: the leading minors positive
    let m1 = j[0][0];
    let m2 = j[0][0] * j[1][1] - j[0][1] * j[1][0];
    let m3 = j[0][0] * (j[1][1] * j[2][2] - j[1][2] * j[2][1])
        - j[0][1] * (j[1][0] * j[2][2] - j[1][2] * j[2][0])
        + j[0][2] * (j[1][0] * j[2][1] - j[1][1] * j[2][0]);
    if !(m1 > 0.0 && m2 > 0.0 && m3 > 0.0) {
        return Err(e.invalid(
            "inertia",
            &span,
            "must be positive definite (a rigid body with volume); got leading minors \
             that are not all positive",
        ));
    }
    Ok(j)
}

/// The keys that give a body's initial orientation, at most one per body.
const ORIENTATION_KEYS: [&str; 4] = [
    "orientation",
    "orientation_euler_zyx",
    "orientation_euler_zxz",
    "orientation_axis_angle",
];

/// Hamilton product p ⊗ q of quaternions (w, x, y, z): the rotation q
/// followed by p.
fn quat_mul(p: [f64; 4], q: [f64; 4]) -> [f64; 4] {
    let [pw, px, py, pz] = p;
    let [qw, qx, qy, qz] = q;
    [
        pw * qw - px * qx - py * qy - pz * qz,
        pw * qx + px * qw + py * qz - pz * qy,
        pw * qy - px * qz + py * qw + pz * qx,
        pw * qz + px * qy - py * qx + pz * qw,
    ]
}

/// The quaternion (cos(a/2), sin(a/2) k) of a turn by `angle` about the
/// unit axis k.
fn axis_quat(k: [f64; 3], angle: f64) -> [f64; 4] {
    let (s, c) = (0.5 * angle).sin_cos();
    [c, s * k[0], s * k[1], s * k[2]]
}

const X: [f64; 3] = [1.0, 0.0, 0.0];
const Z: [f64; 3] = [0.0, 0.0, 1.0];

/// A body's initial orientation, the unit quaternion p rotating body
/// vectors into the world, from the one key of [`ORIENTATION_KEYS`] given:
///
/// - `orientation = [w, x, y, z]`: p itself (norm 1 within [`UNIT_TOL`],
///   then normalised);
/// - `orientation_euler_zyx = [yaw, pitch, roll]` (rad): Tait–Bryan angles,
///   intrinsic z, y′, x″, A = Rz(yaw) Ry(pitch) Rx(roll) — the convention of
///   the output columns `yaw_zyx`, `pitch_zyx`, `roll_zyx` and of URDF's
///   `rpy` (there as fixed axes x, y, z);
/// - `orientation_euler_zxz = [phi, theta, psi]` (rad): proper Euler
///   angles, intrinsic z, x′, z″, A = Rz(φ) Rx(θ) Rz(ψ) (precession,
///   nutation, spin; Goldstein, *Classical Mechanics*, §4.4, the
///   x-convention);
/// - `orientation_axis_angle = [kx, ky, kz, angle]`: a turn by `angle` (rad,
///   right hand) about the world axis k (normalised; not zero).
fn orientation<'a, 'i>(e: &Elem<'a, 'i>) -> Result<[f64; 4], ModelError> {
    let given: Vec<(&str, &'a Val<'i>)> = ORIENTATION_KEYS
        .iter()
        .filter_map(|k| e.get(k).map(|v| (*k, v)))
        .collect();
    let (key, v) = match given.as_slice() {
        [] => return Ok([1.0, 0.0, 0.0, 0.0]),
        [one] => *one,
        [(first, _), (second, v), ..] => {
            return Err(e.invalid(
                second,
                &v.span(),
                format!(
                    "repeats the orientation already given by {first}: give only one of {}",
                    ORIENTATION_KEYS.join(", ")
                ),
            ));
        }
    };
    let p = match key {
        "orientation" => {
            let p: [f64; 4] = e.vecn(key, v, "[w, x, y, z] (a unit quaternion)")?;
            let norm = p.iter().map(|x| x * x).sum::<f64>().sqrt();
            if (norm - 1.0).abs() > UNIT_TOL {
                return Err(e.invalid(
                    key,
                    &v.span(),
                    format!(
                        "must be a unit quaternion [w, x, y, z] (norm 1 within {UNIT_TOL}), got norm {}",
                        num_str(norm)
                    ),
                ));
            }
            p
        }
        "orientation_euler_zyx" => {
            let [yaw, pitch, roll]: [f64; 3] = e.vecn(key, v, "[yaw, pitch, roll] (rad)")?;
            let y = [0.0, 1.0, 0.0];
            quat_mul(
                quat_mul(axis_quat(Z, yaw), axis_quat(y, pitch)),
                axis_quat(X, roll),
            )
        }
        "orientation_euler_zxz" => {
            let [phi, theta, psi]: [f64; 3] = e.vecn(key, v, "[phi, theta, psi] (rad)")?;
            quat_mul(
                quat_mul(axis_quat(Z, phi), axis_quat(X, theta)),
                axis_quat(Z, psi),
            )
        }
        _ => {
            let [kx, ky, kz, angle]: [f64; 4] =
                e.vecn(key, v, "[kx, ky, kz, angle] (axis, rad)")?;
            let norm = (kx * kx + ky * ky + kz * kz).sqrt();
            if norm < 1e-12 {
                return Err(e.invalid(
                    key,
                    &v.span(),
                    "has a zero axis [kx, ky, kz]: give a nonzero axis",
                ));
            }
            axis_quat([kx / norm, ky / norm, kz / norm], angle)
        }
    };
    let norm = p.iter().map(|x| x * x).sum::<f64>().sqrt();
    Ok(p.map(|x| x / norm))
}

fn body(n: &Named<'_, '_>) -> Result<SpatialBody, ModelError> {
    let e = &n.elem;
    e.check_keys(&[
        "name",
        "mass",
        "inertia",
        "products",
        "position",
        "orientation",
        "orientation_euler_zyx",
        "orientation_euler_zxz",
        "orientation_axis_angle",
        "velocity",
        "angular_velocity",
        "angular_velocity_frame",
        "points",
    ])?;
    if n.name == GROUND {
        return Err(e.invalid(
            "name",
            &n.name_span,
            "'ground' is reserved for the fixed frame; use a [ground] table for its points",
        ));
    }
    let mass = e.req_num("mass")?;
    let orientation = orientation(e)?;
    let omega = e.vec3_or("angular_velocity", [0.0; 3])?;
    let frame = e
        .choice("angular_velocity_frame", "angular velocity frame", FRAMES)?
        .unwrap_or(0);
    let angular_velocity = if FRAMES[frame] == "world" {
        mat_t_vec(&rotation_matrix(orientation), omega)
    } else {
        omega
    };
    Ok(SpatialBody {
        name: n.name.clone(),
        mass: e.positive("mass", mass)?,
        inertia: inertia(e)?,
        position: e.vec3_or("position", [0.0; 3])?,
        orientation,
        velocity: e.vec3_or("velocity", [0.0; 3])?,
        angular_velocity,
        points: points(e)?,
    })
}

impl SpatialCtx {
    fn body_name(&self, b: BodyRef) -> &str {
        match b {
            BodyRef::Ground => GROUND,
            BodyRef::Body(i) => &self.bodies[i].name,
        }
    }

    fn body_ref(&self, e: &Elem<'_, '_>, key: &str) -> Result<BodyRef, ModelError> {
        body_ref_among(e, key, self.bodies.iter().map(|b| b.name.as_str()))
    }

    /// Body `body_key` and point `point_key` (a named point, an inline
    /// [x, y, z] in the body frame, or the centre of mass when absent and
    /// `optional`).
    fn attachment(
        &self,
        e: &Elem<'_, '_>,
        body_key: &str,
        point_key: &str,
        optional: bool,
    ) -> Result<SpatialAttachment, ModelError> {
        let body = self.body_ref(e, body_key)?;
        let v = match e.get(point_key) {
            Some(v) => v,
            None if optional => {
                return Ok(SpatialAttachment {
                    body,
                    point: [0.0; 3],
                })
            }
            None => return Err(e.req(point_key).unwrap_err()),
        };
        let point = match v.get_ref() {
            DeValue::String(name) => {
                let list = match body {
                    BodyRef::Ground => &self.ground_points,
                    BodyRef::Body(i) => &self.bodies[i].points,
                };
                named_point(e, &v.span(), name, list, self.body_name(body))?
            }
            DeValue::Array(_) => e.vecn(point_key, v, "[x, y, z]")?,
            _ => return Err(e.wrong_type(point_key, v, "a point name or an array [x, y, z]")),
        };
        Ok(SpatialAttachment { body, point })
    }

    /// Pose (r, A) of a body at the start (ground: the identity).
    fn pose(&self, b: BodyRef) -> ([f64; 3], [[f64; 3]; 3]) {
        match b {
            BodyRef::Ground => ([0.0; 3], rotation_matrix([1.0, 0.0, 0.0, 0.0])),
            BodyRef::Body(i) => (
                self.bodies[i].position,
                rotation_matrix(self.bodies[i].orientation),
            ),
        }
    }

    /// World position of an attachment at the start.
    fn world_point(&self, a: SpatialAttachment) -> [f64; 3] {
        let (r, m) = self.pose(a.body);
        let s = mat_vec(&m, a.point);
        std::array::from_fn(|k| r[k] + s[k])
    }

    /// A unit axis at `key` (world frame), checked.
    fn axis(&self, e: &Elem<'_, '_>, key: &str) -> Result<[f64; 3], ModelError> {
        let v = e.req(key)?;
        let h: [f64; 3] = e.vecn(key, v, "[x, y, z]")?;
        let norm = dot(h, h).sqrt();
        if (norm - 1.0).abs() > UNIT_TOL {
            return Err(e.invalid(
                key,
                &v.span(),
                format!("must be a unit vector, got length {}", num_str(norm)),
            ));
        }
        Ok(h.map(|x| x / norm))
    }

    fn distinct(&self, e: &Elem<'_, '_>, a: BodyRef, b: BodyRef) -> Result<(), ModelError> {
        if a == b {
            return Err(ModelError::Invalid {
                at: e.at(&e.value_span("body2")),
                message: format!("connects body '{}' to itself", self.body_name(a)),
            });
        }
        Ok(())
    }

    fn joint(&self, n: &Named<'_, '_>) -> Result<SpatialJoint, ModelError> {
        let e = &n.elem;
        let t = e.req_choice("type", "spatial joint type", JOINT_TYPES)?;
        let kind = match JOINT_TYPES[t] {
            "spherical" => {
                e.check_keys(&["name", "type", "body1", "point1", "body2", "point2"])?;
                let a = self.attachment(e, "body1", "point1", false)?;
                let b = self.attachment(e, "body2", "point2", false)?;
                self.distinct(e, a.body, b.body)?;
                SpatialJointKind::Spherical { a, b }
            }
            "revolute" => {
                e.check_keys(&["name", "type", "body1", "point1", "body2", "point2", "axis"])?;
                let a = self.attachment(e, "body1", "point1", false)?;
                let b = self.attachment(e, "body2", "point2", false)?;
                self.distinct(e, a.body, b.body)?;
                let h = self.axis(e, "axis")?;
                SpatialJointKind::Revolute {
                    a,
                    b,
                    axis_a: mat_t_vec(&self.pose(a.body).1, h),
                    axis_b: mat_t_vec(&self.pose(b.body).1, h),
                }
            }
            "cylindrical" | "prismatic" => {
                e.check_keys(&["name", "type", "body1", "point1", "body2", "point2", "axis"])?;
                let a = self.attachment(e, "body1", "point1", false)?;
                let b = self.attachment(e, "body2", "point2", false)?;
                self.distinct(e, a.body, b.body)?;
                let h = self.axis(e, "axis")?;
                let (axis_a, axis_b) = (
                    mat_t_vec(&self.pose(a.body).1, h),
                    mat_t_vec(&self.pose(b.body).1, h),
                );
                if JOINT_TYPES[t] == "cylindrical" {
                    SpatialJointKind::Cylindrical {
                        a,
                        b,
                        axis_a,
                        axis_b,
                    }
                } else {
                    SpatialJointKind::Prismatic {
                        a,
                        b,
                        axis_a,
                        axis_b,
                    }
                }
            }
            "point_on_line" => {
                e.check_keys(&["name", "type", "body1", "point1", "body2", "point2", "axis"])?;
                let a = self.attachment(e, "body1", "point1", false)?;
                let b = self.attachment(e, "body2", "point2", false)?;
                self.distinct(e, a.body, b.body)?;
                let h = self.axis(e, "axis")?;
                SpatialJointKind::PointOnLine {
                    a,
                    b,
                    axis_a: mat_t_vec(&self.pose(a.body).1, h),
                }
            }
            "universal" => {
                e.check_keys(&[
                    "name", "type", "body1", "point1", "body2", "point2", "axis1", "axis2",
                ])?;
                let a = self.attachment(e, "body1", "point1", false)?;
                let b = self.attachment(e, "body2", "point2", false)?;
                self.distinct(e, a.body, b.body)?;
                let h1 = self.axis(e, "axis1")?;
                let h2 = self.axis(e, "axis2")?;
                if dot(h1, h2).abs() > UNIT_TOL {
                    return Err(e.invalid(
                        "axis2",
                        &e.value_span("axis2"),
                        format!(
                            "must be perpendicular to axis1 (the cross of a universal joint), \
                             got axis1·axis2 = {}",
                            num_str(dot(h1, h2))
                        ),
                    ));
                }
                SpatialJointKind::Universal {
                    a,
                    b,
                    axis_a: mat_t_vec(&self.pose(a.body).1, h1),
                    axis_b: mat_t_vec(&self.pose(b.body).1, h2),
                }
            }
            "fixed" => {
                e.check_keys(&["name", "type", "body1", "body2"])?;
                let body_a = self.body_ref(e, "body1")?;
                let body_b = self.body_ref(e, "body2")?;
                self.distinct(e, body_a, body_b)?;
                let (ra, ma) = self.pose(body_a);
                let (rb, mb) = self.pose(body_b);
                // the weld point: body a's centre of mass, in both frames
                let d: [f64; 3] = std::array::from_fn(|k| ra[k] - rb[k]);
                let unit = |i: usize| -> [f64; 3] { std::array::from_fn(|k| f64::from(k == i)) };
                SpatialJointKind::Fixed {
                    a: SpatialAttachment {
                        body: body_a,
                        point: [0.0; 3],
                    },
                    b: SpatialAttachment {
                        body: body_b,
                        point: mat_t_vec(&mb, d),
                    },
                    frame_a: std::array::from_fn(|i| mat_t_vec(&ma, unit(i))),
                    frame_b: std::array::from_fn(|i| mat_t_vec(&mb, unit(i))),
                }
            }
            _ => {
                e.check_keys(&[
                    "name", "type", "body1", "point1", "body2", "point2", "length",
                ])?;
                let a = self.attachment(e, "body1", "point1", false)?;
                let b = self.attachment(e, "body2", "point2", false)?;
                self.distinct(e, a.body, b.body)?;
                let length = match e.opt_num("length")? {
                    Some(l) => e.positive("length", l)?,
                    None => {
                        let (pa, pb) = (self.world_point(a), self.world_point(b));
                        let d: [f64; 3] = std::array::from_fn(|k| pb[k] - pa[k]);
                        let l = dot(d, d).sqrt();
                        if !(l > 0.0) {
                            return Err(ModelError::Invalid {
                                at: e.here(),
                                message: "the two points coincide at the start; give `length` \
                                          (a distance joint needs a positive length)"
                                    .into(),
                            });
                        }
                        l
                    }
                };
                SpatialJointKind::Distance { a, b, length }
            }
        };
        Ok(SpatialJoint {
            name: n.name.clone(),
            kind,
        })
    }

    fn frame(&self, e: &Elem<'_, '_>) -> Result<SpatialFrame, ModelError> {
        Ok(match e.choice("frame", "load frame", FRAMES)? {
            Some(1) => SpatialFrame::Body,
            _ => SpatialFrame::World,
        })
    }

    fn moving_body(&self, e: &Elem<'_, '_>, key: &str) -> Result<usize, ModelError> {
        match self.body_ref(e, key)? {
            BodyRef::Body(i) => Ok(i),
            BodyRef::Ground => Err(e.invalid(
                key,
                &e.value_span(key),
                "must be a moving body, not 'ground' (a load on ground has no effect)",
            )),
        }
    }

    /// A `[[contacts]]` entry: `sphere_plane` (the plane through `point1`
    /// of `body1` with normal `normal1`, the sphere of `radius2` centred
    /// at `point2` of `body2`) or `sphere_sphere` (`radius1`, `radius2`),
    /// with the planar contacts' law and friction keys; the points default
    /// to the centres of mass. Stick–slip friction is refused (the
    /// spatial system has no friction rows yet).
    fn contact(&self, n: &Named<'_, '_>) -> Result<SpatialForce, ModelError> {
        let e = &n.elem;
        let t = e.req_choice("type", "spatial contact type", CONTACT_TYPES)?;
        let keys = [
            "name", "type", "body1", "point1", "normal1", "radius1", "body2", "point2", "radius2",
        ];
        e.check_keys(&[&keys[..], &LAW_KEYS[..], &FRICTION_KEYS[..]].concat())?;
        let a = self.attachment(e, "body1", "point1", true)?;
        let b = self.attachment(e, "body2", "point2", true)?;
        self.distinct(e, a.body, b.body)?;
        let refuse = |key: &str, why: &str| -> Result<(), ModelError> {
            match e.get(key) {
                Some(v) => Err(e.invalid(key, &v.span(), why)),
                None => Ok(()),
            }
        };
        let radius = |key: &str| -> Result<f64, ModelError> {
            let r = e.req_num(key)?;
            e.positive(key, r)
        };
        let geometry = match CONTACT_TYPES[t] {
            "sphere_plane" => {
                refuse(
                    "radius1",
                    "a sphere_plane contact has its plane on body1 and its sphere on body2 (radius2)",
                )?;
                let v = e.req("normal1")?;
                let h: [f64; 3] = e.vecn("normal1", v, "[nx, ny, nz]")?;
                let len = dot(h, h).sqrt();
                if !(len > 1e-12) || !len.is_finite() {
                    return Err(e.invalid(
                        "normal1",
                        &v.span(),
                        "must be a nonzero vector [nx, ny, nz] (the plane's normal in body1's frame, pointing to the free side)",
                    ));
                }
                SpatialContactGeometry::SpherePlane {
                    radius: radius("radius2")?,
                    normal: h.map(|x| x / len),
                }
            }
            _ => {
                refuse("normal1", "a sphere_sphere contact has no plane normal")?;
                SpatialContactGeometry::SphereSphere {
                    radius_a: radius("radius1")?,
                    radius_b: radius("radius2")?,
                }
            }
        };
        let (law, stiffness, damping) = contact_law(e)?;
        let friction = parse_friction(e)?;
        Ok(SpatialForce {
            name: n.name.clone(),
            kind: SpatialForceKind::Contact {
                a,
                b,
                geometry,
                law,
                stiffness,
                damping,
                friction,
            },
        })
    }

    fn force<'a, 'i>(
        &self,
        n: &Named<'a, 'i>,
        joints: &[SpatialJoint],
        functions: &mut Functions<'a, 'i>,
    ) -> Result<SpatialForce, ModelError> {
        let mut actuator = |e: &Elem<'a, 'i>| -> Result<Option<crate::TimeFunction>, ModelError> {
            match e.get("actuator") {
                Some(v) => functions.parse(&e.label, &e.path("actuator"), v).map(Some),
                None => Ok(None),
            }
        };
        let e = &n.elem;
        let t = e.req_choice("type", "spatial force type", FORCE_TYPES)?;
        let kind = match FORCE_TYPES[t] {
            "point_force" => {
                e.check_keys(&["name", "type", "body", "point", "force", "frame"])?;
                let body = self.moving_body(e, "body")?;
                let at = self.attachment(e, "body", "point", true)?;
                debug_assert_eq!(at.body, BodyRef::Body(body));
                let v = e.req("force")?;
                SpatialForceKind::PointForce {
                    at,
                    force: e.vecn("force", v, "[Fx, Fy, Fz]")?,
                    frame: self.frame(e)?,
                }
            }
            "torque" => {
                e.check_keys(&["name", "type", "body", "torque", "frame"])?;
                let body = self.moving_body(e, "body")?;
                let v = e.req("torque")?;
                SpatialForceKind::Torque {
                    body,
                    torque: e.vecn("torque", v, "[Tx, Ty, Tz]")?,
                    frame: self.frame(e)?,
                }
            }
            "rotational_spring" => {
                e.check_keys(&[
                    "name",
                    "type",
                    "joint",
                    "stiffness",
                    "damping",
                    "zero_angle",
                    "actuator",
                ])?;
                let (j, v, jname) =
                    e.reference("joint", "joint", joints.iter().map(|j| j.name.as_str()))?;
                if !matches!(joints[j].kind, SpatialJointKind::Revolute { .. }) {
                    return Err(ModelError::Invalid {
                        at: e.at(&v.span()),
                        message: format!(
                            "a rotational spring needs a revolute joint, but joint '{jname}' is {}",
                            JOINT_TYPES[joint_type_index(&joints[j].kind)]
                        ),
                    });
                }
                let stiffness = e.req_num("stiffness")?;
                let damping = e.num_or("damping", 0.0)?;
                SpatialForceKind::RotationalSpring {
                    joint: j,
                    stiffness: e.non_negative("stiffness", stiffness)?,
                    damping: e.non_negative("damping", damping)?,
                    zero_angle: e.num_or("zero_angle", 0.0)?,
                    actuator: actuator(e)?,
                }
            }
            "bushing" => {
                e.check_keys(&[
                    "name",
                    "type",
                    "body1",
                    "point1",
                    "body2",
                    "point2",
                    "stiffness",
                    "damping",
                    "rotational_stiffness",
                    "rotational_damping",
                ])?;
                let a = self.attachment(e, "body1", "point1", true)?;
                let b = self.attachment(e, "body2", "point2", true)?;
                self.distinct(e, a.body, b.body)?;
                let diagonal = |key: &str| -> Result<[f64; 3], ModelError> {
                    let d = e.vec3_or(key, [0.0; 3])?;
                    for x in d {
                        e.non_negative(key, x)?;
                    }
                    Ok(d)
                };
                SpatialForceKind::Bushing {
                    a,
                    b,
                    stiffness: diagonal("stiffness")?,
                    damping: diagonal("damping")?,
                    rotational_stiffness: diagonal("rotational_stiffness")?,
                    rotational_damping: diagonal("rotational_damping")?,
                }
            }
            _ => {
                e.check_keys(&[
                    "name",
                    "type",
                    "body1",
                    "point1",
                    "body2",
                    "point2",
                    "stiffness",
                    "damping",
                    "free_length",
                    "actuator",
                ])?;
                let a = self.attachment(e, "body1", "point1", false)?;
                let b = self.attachment(e, "body2", "point2", false)?;
                self.distinct(e, a.body, b.body)?;
                let stiffness = e.num_or("stiffness", 0.0)?;
                let damping = e.num_or("damping", 0.0)?;
                let free_length = match e.opt_num("free_length")? {
                    Some(l) => e.non_negative("free_length", l)?,
                    None => {
                        let (pa, pb) = (self.world_point(a), self.world_point(b));
                        let d: [f64; 3] = std::array::from_fn(|k| pb[k] - pa[k]);
                        dot(d, d).sqrt()
                    }
                };
                SpatialForceKind::SpringDamper {
                    a,
                    b,
                    stiffness: e.non_negative("stiffness", stiffness)?,
                    damping: e.non_negative("damping", damping)?,
                    free_length,
                    actuator: actuator(e)?,
                }
            }
        };
        Ok(SpatialForce {
            name: n.name.clone(),
            kind,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::{from_str, rotation_matrix, BodyRef, Space, SpatialJointKind};

    const TOP: &str = r#"
[model]
space = "spatial"

[[bodies]]
name = "top"
mass = 2.0
inertia = [0.5, 0.5, 0.2]
position = [0.0, 0.0, 0.3]
orientation = [0.9238795325112867, 0.3826834323650898, 0.0, 0.0]
angular_velocity = [0.0, 0.0, 50.0]
angular_velocity_frame = "body"
points = { tip = [0.0, 0.0, -0.3] }

[[joints]]
name = "pivot"
type = "spherical"
body1 = "ground"
point1 = [0.0, 0.0, 0.0]
body2 = "top"
point2 = "tip"
"#;

    #[test]
    fn a_spatial_file_reads_bodies_joints_and_default_gravity() {
        let m = from_str(TOP, "top.toml").unwrap();
        assert_eq!(m.space(), Space::Spatial);
        let s = m.spatial.as_ref().unwrap();
        assert_eq!(s.gravity, [0.0, 0.0, -9.81]);
        assert_eq!(s.bodies[0].inertia[2][2], 0.2);
        assert_eq!(s.bodies[0].angular_velocity, [0.0, 0.0, 50.0]);
        match &s.joints[0].kind {
            SpatialJointKind::Spherical { a, b } => {
                assert_eq!(a.body, BodyRef::Ground);
                assert_eq!(b.point, [0.0, 0.0, -0.3]);
            }
            k => panic!("expected a spherical joint, got {k:?}"),
        }
        assert!(m.bodies.is_empty() && m.joints.is_empty());
    }

    #[test]
    fn a_world_angular_velocity_is_stored_in_the_body_frame() {
        let text = TOP.replace("angular_velocity_frame = \"body\"", "");
        let m = from_str(&text, "top.toml").unwrap();
        let b = &m.spatial.as_ref().unwrap().bodies[0];
        // A ω_body = ω_world
        let a = rotation_matrix(b.orientation);
        let w: Vec<f64> = (0..3)
            .map(|i| (0..3).map(|k| a[i][k] * b.angular_velocity[k]).sum())
            .collect();
        for (x, y) in w.iter().zip([0.0, 0.0, 50.0]) {
            assert!((x - y).abs() < 1e-12, "{w:?}");
        }
    }

    /// A = Rz(a) Ry(b) Rx(c) etc. from the elementary matrices, independent
    /// of the quaternion products of the parser.
    fn elementary(axis: usize, a: f64) -> [[f64; 3]; 3] {
        let (s, c) = a.sin_cos();
        match axis {
            0 => [[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]],
            1 => [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]],
            _ => [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]],
        }
    }

    fn mat_mul(a: [[f64; 3]; 3], b: [[f64; 3]; 3]) -> [[f64; 3]; 3] {
        std::array::from_fn(|i| std::array::from_fn(|j| (0..3).map(|k| a[i][k] * b[k][j]).sum()))
    }

    fn orientation_of(key_value: &str) -> Result<[f64; 4], String> {
        let text = TOP.replace(
            "orientation = [0.9238795325112867, 0.3826834323650898, 0.0, 0.0]",
            key_value,
        );
        from_str(&text, "top.toml")
            .map(|m| m.spatial.unwrap().bodies[0].orientation)
            .map_err(|e| e.to_string())
    }

    fn assert_same_rotation(p: [f64; 4], a: [[f64; 3]; 3]) {
        let r = rotation_matrix(p);
        for i in 0..3 {
            for j in 0..3 {
                assert!((r[i][j] - a[i][j]).abs() < 1e-14, "{r:?} vs {a:?}");
            }
        }
        assert!((p.iter().map(|x| x * x).sum::<f64>() - 1.0).abs() < 1e-15);
    }

    #[test]
    fn euler_angles_and_axis_angle_give_the_rotation_their_convention_names() {
        let (yaw, pitch, roll) = (0.7, -0.4, 2.1);
        let p = orientation_of("orientation_euler_zyx = [0.7, -0.4, 2.1]").unwrap();
        let a = mat_mul(
            mat_mul(elementary(2, yaw), elementary(1, pitch)),
            elementary(0, roll),
        );
        assert_same_rotation(p, a);

        let (phi, theta, psi) = (0.3, 1.2, -2.5);
        let p = orientation_of("orientation_euler_zxz = [0.3, 1.2, -2.5]").unwrap();
        let a = mat_mul(
            mat_mul(elementary(2, phi), elementary(0, theta)),
            elementary(2, psi),
        );
        assert_same_rotation(p, a);

        // Rodrigues: A = I + sin a K + (1 − cos a) K², k = (1, 2, 2)/3
        let p = orientation_of("orientation_axis_angle = [1.0, 2.0, 2.0, 0.9]").unwrap();
        let (k, ang) = ([1.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0], 0.9f64);
        let kk = [[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]];
        let k2 = mat_mul(kk, kk);
        let a = std::array::from_fn(|i| {
            std::array::from_fn(|j| {
                f64::from(u8::from(i == j)) + ang.sin() * kk[i][j] + (1.0 - ang.cos()) * k2[i][j]
            })
        });
        assert_same_rotation(p, a);

        // the heavy top's quaternion is 45° about x
        let q =
            orientation_of("orientation_axis_angle = [1.0, 0.0, 0.0, 0.7853981633974483]").unwrap();
        let given = [0.9238795325112867, 0.3826834323650898, 0.0, 0.0];
        assert!(
            q.iter().zip(given).all(|(a, b)| (a - b).abs() < 1e-15),
            "{q:?}"
        );
    }

    #[test]
    fn an_orientation_given_twice_or_by_a_zero_axis_is_refused_by_name() {
        let err = orientation_of(
            "orientation = [1.0, 0.0, 0.0, 0.0]\norientation_euler_zyx = [0.0, 0.0, 0.1]",
        )
        .unwrap_err();
        assert_eq!(
            err,
            "top.toml:11: body 'top': orientation_euler_zyx repeats the orientation already \
             given by orientation: give only one of orientation, orientation_euler_zyx, \
             orientation_euler_zxz, orientation_axis_angle"
        );
        let err = orientation_of("orientation_axis_angle = [0.0, 0.0, 0.0, 1.0]").unwrap_err();
        assert_eq!(
            err,
            "top.toml:10: body 'top': orientation_axis_angle has a zero axis [kx, ky, kz]: \
             give a nonzero axis"
        );
        let err = orientation_of("orientation_euler_zxz = [0.0, 1.0]").unwrap_err();
        assert!(
            err.contains("orientation_euler_zxz") && err.contains("3 numbers"),
            "{err}"
        );
    }

    #[test]
    fn planar_files_say_planar() {
        let text =
            "[model]\nspace = \"planar\"\n[[bodies]]\nname = \"b\"\nmass = 1.0\ninertia = 0.1\n";
        let m = from_str(text, "p.toml").unwrap();
        assert_eq!(m.space(), Space::Planar);
        assert_eq!(m.bodies.len(), 1);
    }

    #[test]
    fn errors_name_file_line_element_and_problem() {
        let bad = TOP.replace("0.9238795325112867", "0.5");
        let err = from_str(&bad, "top.toml").unwrap_err().to_string();
        assert!(
            err.starts_with("top.toml:10: body 'top': orientation must be a unit quaternion"),
            "{err}"
        );
        let bad = TOP.replace("[0.5, 0.5, 0.2]", "[0.5, -0.5, 0.2]");
        let err = from_str(&bad, "top.toml").unwrap_err().to_string();
        assert!(
            err.starts_with("top.toml:8: body 'top': inertia must be positive definite"),
            "{err}"
        );
        let bad = TOP.replace("\"spherical\"", "\"sphercal\"");
        let err = from_str(&bad, "top.toml").unwrap_err().to_string();
        assert!(
            err.contains("joint 'pivot'") && err.contains("spherical"),
            "{err}"
        );
        let bad = TOP.replace("point2 = \"tip\"", "point2 = \"toe\"");
        let err = from_str(&bad, "top.toml").unwrap_err().to_string();
        assert!(err.contains("unknown point 'toe' on body 'top'"), "{err}");
    }

    #[test]
    fn drivers_name_their_joint_and_share_the_planar_functions() {
        let hinge = TOP.replace("\"spherical\"", "\"revolute\"\naxis = [0.0, 0.0, 1.0]");
        let ok = format!(
            "[functions]\nspin = {{ type = \"polynomial\", coefficients = [0.0, 2.0] }}\n{hinge}\n\
             [[drivers]]\nname = \"d\"\ntype = \"joint\"\njoint = \"pivot\"\nfunction = \"spin\"\n"
        );
        let m = from_str(&ok, "top.toml").unwrap();
        let d = &m.spatial.as_ref().unwrap().drivers[0];
        assert_eq!((d.name.as_str(), d.joint), ("d", 0));
        assert_eq!(d.function.eval(0.5).0, 1.0);
        // a spherical joint cannot be driven
        let bad = format!(
            "{TOP}\n[[drivers]]\nname = \"d\"\ntype = \"joint\"\njoint = \"pivot\"\nfunction = 1.0\n"
        );
        let err = from_str(&bad, "top.toml").unwrap_err().to_string();
        assert!(
            err.starts_with("top.toml:")
                && err.contains("driver 'd'")
                && err.contains("joint 'pivot' is a spherical joint and cannot be driven"),
            "{err}"
        );
        // unknown joint, unknown function, a name shared with a joint
        let bad = ok.replace("joint = \"pivot\"\nfunction", "joint = \"pivto\"\nfunction");
        let err = from_str(&bad, "top.toml").unwrap_err().to_string();
        assert!(err.contains("driver 'd'") && err.contains("pivto"), "{err}");
        let bad = ok.replace("function = \"spin\"", "function = \"spun\"");
        let err = from_str(&bad, "top.toml").unwrap_err().to_string();
        assert!(err.contains("driver 'd'") && err.contains("spun"), "{err}");
        let bad = ok.replace("name = \"d\"", "name = \"pivot\"");
        let err = from_str(&bad, "top.toml").unwrap_err().to_string();
        assert!(err.contains("pivot"), "{err}");
    }

    #[test]
    fn rotational_springs_need_a_revolute_joint_and_bushings_non_negative_rates() {
        let spring = format!(
            "{TOP}\n[[forces]]\nname = \"coil\"\ntype = \"rotational_spring\"\njoint = \"pivot\"\nstiffness = 1.0\n"
        );
        let err = from_str(&spring, "top.toml").unwrap_err().to_string();
        assert!(
            err.contains("force 'coil'")
                && err.contains("needs a revolute joint, but joint 'pivot' is spherical"),
            "{err}"
        );
        let hinge = spring.replace("\"spherical\"", "\"revolute\"\naxis = [0.0, 0.0, 1.0]");
        let m = from_str(&hinge, "top.toml").unwrap();
        assert!(matches!(
            m.spatial.unwrap().forces[0].kind,
            crate::SpatialForceKind::RotationalSpring { joint: 0, stiffness, .. } if stiffness == 1.0
        ));
        let bushing = format!(
            "{TOP}\n[[forces]]\nname = \"mount\"\ntype = \"bushing\"\nbody1 = \"ground\"\nbody2 = \"top\"\nstiffness = [1.0, -2.0, 3.0]\n"
        );
        let err = from_str(&bushing, "top.toml").unwrap_err().to_string();
        assert!(
            err.starts_with("top.toml:")
                && err.contains("force 'mount'")
                && err.contains("stiffness must not be negative"),
            "{err}"
        );
    }

    const BALL: &str = r#"
[model]
space = "spatial"

[[bodies]]
name = "ball"
mass = 1.0
inertia = [0.1, 0.1, 0.1]
position = [0.0, 0.0, 1.0]

[[bodies]]
name = "other"
mass = 1.0
inertia = [0.1, 0.1, 0.1]
position = [1.0, 0.0, 1.0]

[[contacts]]
name = "floor"
type = "sphere_plane"
body1 = "ground"
normal1 = [0.0, 0.0, 2.0]
body2 = "ball"
radius2 = 0.25
law = "hertz"
stiffness = 1e6
friction = 0.4
"#;

    #[test]
    fn spatial_contacts_read_sphere_plane_and_sphere_sphere() {
        let m = from_str(BALL, "ball.toml").unwrap();
        let f = &m.spatial.unwrap().forces[0];
        assert_eq!(f.name, "floor");
        match &f.kind {
            crate::SpatialForceKind::Contact {
                a,
                b,
                geometry,
                law,
                stiffness,
                friction,
                ..
            } => {
                assert_eq!((a.body, b.body), (BodyRef::Ground, BodyRef::Body(0)));
                assert_eq!(
                    *geometry,
                    crate::SpatialContactGeometry::SpherePlane {
                        radius: 0.25,
                        normal: [0.0, 0.0, 1.0]
                    }
                );
                assert_eq!(*law, crate::ContactLaw::Hertz { exponent: 1.5 });
                assert_eq!(*stiffness, 1e6);
                assert_eq!(
                    friction.unwrap().law,
                    crate::FrictionLaw::Regularised {
                        velocity: crate::DEFAULT_FRICTION_VELOCITY
                    }
                );
            }
            k => panic!("expected a contact, got {k:?}"),
        }
        // the stick–slip law, read as on planar contacts
        let sticky = BALL.replace(
            "friction = 0.4",
            "friction = 0.4\nfriction_law = \"stick_slip\"\nstatic_friction = 0.5",
        );
        let m = from_str(&sticky, "ball.toml").unwrap();
        assert!(matches!(
            m.spatial.unwrap().forces[0].kind,
            crate::SpatialForceKind::Contact {
                friction: Some(crate::Friction {
                    coefficient,
                    law: crate::FrictionLaw::StickSlip { static_coefficient },
                }),
                ..
            } if coefficient == 0.4 && static_coefficient == 0.5
        ));
        let pair = BALL
            .replace("\"sphere_plane\"", "\"sphere_sphere\"")
            .replace(
                "body1 = \"ground\"\nnormal1 = [0.0, 0.0, 2.0]",
                "body1 = \"other\"\nradius1 = 0.5",
            );
        let m = from_str(&pair, "ball.toml").unwrap();
        assert!(matches!(
            m.spatial.unwrap().forces[0].kind,
            crate::SpatialForceKind::Contact {
                geometry: crate::SpatialContactGeometry::SphereSphere { radius_a, radius_b },
                ..
            } if radius_a == 0.5 && radius_b == 0.25
        ));
    }

    /// Each validation error names the file, the contact and the problem.
    #[test]
    fn bad_spatial_contacts_are_refused_by_name() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "[0.0, 0.0, 2.0]",
                "[0.0, 0.0, 0.0]",
                "normal1 must be a nonzero vector [nx, ny, nz]",
            ),
            (
                "radius2 = 0.25",
                "radius2 = -0.25",
                "radius2 must be positive",
            ),
            ("body2 = \"ball\"", "body2 = \"bal\"", "bal"),
            (
                "body2 = \"ball\"",
                "body2 = \"ground\"",
                "connects body 'ground' to itself",
            ),
            (
                "radius2 = 0.25",
                "radius2 = 0.25\nradius1 = 0.1",
                "a sphere_plane contact has its plane on body1",
            ),
            ("\"sphere_plane\"", "\"sphere_cube\"", "sphere_plane"),
            (
                "friction = 0.4",
                "friction = 0.4\nfriction_law = \"stick_slip\"\nstatic_friction = 0.3",
                "must be at least the kinetic coefficient friction = 0.4, got 0.3",
            ),
            (
                "friction = 0.4",
                "friction = 0.4\nfriction_law = \"stick_slip\"\nfriction_velocity = 1e-3",
                "the stick_slip law sticks exactly",
            ),
            (
                "law = \"hertz\"\nstiffness = 1e6\nfriction = 0.4",
                "law = \"impact\"\nrestitution = 1.5",
                "restitution must be in [0, 1], got 1.5",
            ),
            (
                "law = \"hertz\"\nstiffness = 1e6",
                "law = \"impact\"\nrestitution = 0.5",
                "needs a normal force, which the impact law does not give",
            ),
            (
                "stiffness = 1e6",
                "stiffness = -1.0",
                "stiffness must be positive",
            ),
            ("stiffness = 1e6", "stiffness = 1e6\ncolour = 1", "colour"),
        ];
        for (from, to, want) in cases {
            assert!(BALL.contains(from), "{from}");
            let bad = BALL.replacen(from, to, 1);
            let err = from_str(&bad, "ball.toml").unwrap_err().to_string();
            assert!(
                err.starts_with("ball.toml:")
                    && err.contains("contact 'floor'")
                    && err.contains(want),
                "{to}: {err}"
            );
        }
        // a sphere_sphere contact has no normal
        let bad = BALL.replace("\"sphere_plane\"", "\"sphere_sphere\"");
        let err = from_str(&bad, "ball.toml").unwrap_err().to_string();
        assert!(
            err.contains("a sphere_sphere contact has no plane normal"),
            "{err}"
        );
        // names are unique among forces and contacts
        let dup = format!(
            "{BALL}\n[[forces]]\nname = \"floor\"\ntype = \"torque\"\nbody = \"ball\"\ntorque = [0.0, 0.0, 1.0]\n"
        );
        let err = from_str(&dup, "ball.toml").unwrap_err().to_string();
        assert!(
            err.contains("'floor' is already the name of a force element"),
            "{err}"
        );
    }

    #[test]
    fn an_asymmetric_inertia_matrix_is_refused() {
        let bad = TOP.replace(
            "inertia = [0.5, 0.5, 0.2]",
            "inertia = [[0.5, 0.1, 0.0], [0.0, 0.5, 0.0], [0.0, 0.0, 0.2]]",
        );
        let err = from_str(&bad, "top.toml").unwrap_err().to_string();
        assert!(err.contains("inertia must be symmetric"), "{err}");
    }
}
