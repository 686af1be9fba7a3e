//! URDF robot descriptions as spatial models (issue 33): a `.urdf` file
//! given to `jounce run`/`check` ([`crate::load_file`]), or included by a
//! TOML file's `[model] urdf = "arm.urdf"`.
//!
//! Owns: the conversion of a URDF tree of links and joints (parsed by the
//! `urdf-rs` crate) into a [`SpatialModel`] at zero joint positions, at
//! rest; the merging of massless links; the errors of a URDF file, which
//! name the file, the line of the element and the element. Must not:
//! evaluate dynamics.
//!
//! Conventions (URDF specification, <http://wiki.ros.org/urdf/XML/joint>
//! and <http://wiki.ros.org/urdf/XML/link>):
//! - a joint's `<origin>` is the pose of the joint frame in the **parent
//!   link's frame**; the child link's frame **is** the joint frame at zero
//!   joint position;
//! - a joint's `<axis>` (default `1 0 0`) is in the joint frame;
//! - a link's `<inertial><origin>` is the pose of the centre of mass and of
//!   the inertia frame in the link frame, and `ixx .. izz` are the tensor
//!   about the centre of mass in that frame;
//! - `rpy` are fixed-axis roll, pitch, yaw: R = Rz(yaw) Ry(pitch) Rx(roll).
//!
//! Forward kinematics at zero joint positions gives each link frame's world
//! pose. A link with mass becomes a body named after the link: centre of
//! mass at the inertial origin, body frame the link frame turned by the
//! inertial rpy, its tensor and mass. The root link is fixed to the ground
//! (as Pinocchio's `buildModelFromUrdf` without a root joint): a massless
//! root *is* the ground, a root with mass is a body on a fixed joint to the
//! ground named `<root>_on_ground`. Joints: `revolute` and `continuous` →
//! spatial revolute about the axis, `prismatic` → spatial prismatic,
//! `fixed` → spatial fixed, the non-standard `spherical` → spherical;
//! `floating` and `planar` are refused. Limits, `<dynamics>`, `<mimic>`,
//! `<calibration>`, `<safety_controller>`, visuals and collisions are
//! ignored.
//!
//! A link without `<inertial>` (or with mass 0 and a zero tensor) is
//! massless. On a fixed joint it is merged into its parent's body (up the
//! chain of fixed joints; the ground for the root's), and on a moving joint
//! into the first link with mass fixed below it; a massless link that has
//! neither would leave its joint's freedom without inertia (a singular mass
//! matrix) and is an error. A merged link's frame origin is a named point
//! of the body it joined; every joint has a point named after it on both of
//! its bodies, and every body a point named after each of its links.
//! Gravity is 9.81 m/s² along −z (a TOML file's `[model] gravity` may
//! change it).

use std::collections::HashMap;
use std::path::Path;

use crate::error::{Location, ModelError};
use crate::parse::GROUND;
use crate::spatial::{
    rotation_matrix, SpatialAttachment, SpatialBody, SpatialJoint, SpatialJointKind, SpatialModel,
};
use crate::types::{BodyRef, Model, Settings};

type Mat = [[f64; 3]; 3];
type Vec3 = [f64; 3];

/// Gravity of a URDF model unless a TOML file says otherwise [m/s²].
pub const URDF_GRAVITY: Vec3 = [0.0, 0.0, -9.81];

/// Reads a `.urdf` file as a spatial model with the default settings
/// (what the command line does not give).
pub fn load_urdf_file(path: &Path) -> Result<Model, ModelError> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ModelError::Io {
        origin: origin.clone(),
        message: e.to_string(),
    })?;
    let (name, spatial) = spatial_from_urdf(&text, &origin, URDF_GRAVITY)?;
    let name = name.unwrap_or_else(|| stem(&origin));
    Ok(spatial_model(name, origin, spatial, Settings::default()))
}

/// The spatial model of URDF text (`origin` names it in errors) and the
/// robot's name (None if empty).
pub fn spatial_from_urdf(
    text: &str,
    origin: &str,
    gravity: Vec3,
) -> Result<(Option<String>, SpatialModel), ModelError> {
    // ModelError::Syntax would call it a TOML syntax error
    let robot = urdf_rs::read_from_string(text).map_err(|e| ModelError::Invalid {
        at: Location {
            origin: origin.to_string(),
            line: 1,
            element: "<robot>".into(),
        },
        message: format!("not a valid URDF robot description: {e}"),
    })?;
    let cx = Cx { text, origin };
    let model = cx.convert(&robot, gravity)?;
    let name = Some(robot.name.trim().to_string()).filter(|s| !s.is_empty());
    Ok((name, model))
}

/// The model wrapper of a spatial model (planar lists empty).
pub(crate) fn spatial_model(
    name: String,
    source: String,
    spatial: SpatialModel,
    settings: Settings,
) -> Model {
    Model {
        name,
        source,
        gravity: [0.0, 0.0],
        bodies: Vec::new(),
        joints: Vec::new(),
        drivers: Vec::new(),
        forces: Vec::new(),
        settings,
        spatial: Some(spatial),
    }
}

fn stem(origin: &str) -> String {
    Path::new(origin)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".into())
}

// --- small 3-D algebra -------------------------------------------------

fn mul(a: &Mat, b: &Mat) -> Mat {
    std::array::from_fn(|i| std::array::from_fn(|j| (0..3).map(|k| a[i][k] * b[k][j]).sum()))
}

fn mat_vec(a: &Mat, x: Vec3) -> Vec3 {
    std::array::from_fn(|i| a[i][0] * x[0] + a[i][1] * x[1] + a[i][2] * x[2])
}

fn mat_t_vec(a: &Mat, x: Vec3) -> Vec3 {
    std::array::from_fn(|i| a[0][i] * x[0] + a[1][i] * x[1] + a[2][i] * x[2])
}

fn add(a: Vec3, b: Vec3) -> Vec3 {
    std::array::from_fn(|k| a[k] + b[k])
}

fn sub(a: Vec3, b: Vec3) -> Vec3 {
    std::array::from_fn(|k| a[k] - b[k])
}

/// R = Rz(yaw) Ry(pitch) Rx(roll), the URDF's fixed-axis roll-pitch-yaw.
pub fn rpy_matrix([r, p, y]: Vec3) -> Mat {
    let (sr, cr) = r.sin_cos();
    let (sp, cp) = p.sin_cos();
    let (sy, cy) = y.sin_cos();
    [
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ]
}

/// The unit quaternion (w, x, y, z) of a rotation matrix (Shepperd's
/// method: the largest of the four squares first), w ≥ 0.
fn quaternion_of(m: &Mat) -> [f64; 4] {
    let tr = m[0][0] + m[1][1] + m[2][2];
    let q = if tr >= m[0][0].max(m[1][1]).max(m[2][2]) {
        let s = 2.0 * (1.0 + tr).sqrt();
        [
            0.25 * s,
            (m[2][1] - m[1][2]) / s,
            (m[0][2] - m[2][0]) / s,
            (m[1][0] - m[0][1]) / s,
        ]
    } else if m[0][0] >= m[1][1] && m[0][0] >= m[2][2] {
        let s = 2.0 * (1.0 + m[0][0] - m[1][1] - m[2][2]).sqrt();
        [
            (m[2][1] - m[1][2]) / s,
            0.25 * s,
            (m[0][1] + m[1][0]) / s,
            (m[0][2] + m[2][0]) / s,
        ]
    } else if m[1][1] >= m[2][2] {
        let s = 2.0 * (1.0 + m[1][1] - m[0][0] - m[2][2]).sqrt();
        [
            (m[0][2] - m[2][0]) / s,
            (m[0][1] + m[1][0]) / s,
            0.25 * s,
            (m[1][2] + m[2][1]) / s,
        ]
    } else {
        let s = 2.0 * (1.0 + m[2][2] - m[0][0] - m[1][1]).sqrt();
        [
            (m[1][0] - m[0][1]) / s,
            (m[0][2] + m[2][0]) / s,
            (m[1][2] + m[2][1]) / s,
            0.25 * s,
        ]
    };
    let n = q.iter().map(|x| x * x).sum::<f64>().sqrt();
    let sign = if q[0] < 0.0 { -1.0 } else { 1.0 };
    q.map(|x| sign * x / n)
}

/// A pose: origin and rotation (frame to world).
#[derive(Clone, Copy)]
struct Pose {
    p: Vec3,
    r: Mat,
}

impl Pose {
    fn compose(&self, xyz: Vec3, rpy: Vec3) -> Pose {
        Pose {
            p: add(self.p, mat_vec(&self.r, xyz)),
            r: mul(&self.r, &rpy_matrix(rpy)),
        }
    }
}

const IDENTITY: Pose = Pose {
    p: [0.0; 3],
    r: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
};

// --- the conversion ----------------------------------------------------

struct Cx<'a> {
    text: &'a str,
    origin: &'a str,
}

/// Where a link's mass went: its own body, another body, or the ground.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Host {
    Ground,
    Body(usize),
}

impl Cx<'_> {
    /// The 1-based line of the `<tag ... name="name"` element (1 if not
    /// found: the message still names the element).
    fn line_of(&self, tag: &str, name: &str) -> usize {
        let open = format!("<{tag}");
        let mut from = 0;
        while let Some(i) = self.text[from..].find(&open) {
            let start = from + i;
            let after = start + open.len();
            let end = self.text[after..]
                .find('>')
                .map_or(self.text.len(), |j| after + j);
            let head = &self.text[after..end];
            let boundary = self.text[after..]
                .chars()
                .next()
                .is_some_and(char::is_whitespace);
            if boundary
                && (head.contains(&format!("name=\"{name}\""))
                    || head.contains(&format!("name='{name}'")))
            {
                return self.text[..start].matches('\n').count() + 1;
            }
            from = after;
        }
        1
    }

    fn err(&self, tag: &str, name: &str, message: impl Into<String>) -> ModelError {
        ModelError::Invalid {
            at: Location {
                origin: self.origin.to_string(),
                line: self.line_of(tag, name),
                element: format!("{tag} '{name}'"),
            },
            message: message.into(),
        }
    }

    fn robot_err(&self, message: impl Into<String>) -> ModelError {
        ModelError::Invalid {
            at: Location {
                origin: self.origin.to_string(),
                line: self
                    .text
                    .find("<robot")
                    .map_or(1, |i| self.text[..i].matches('\n').count() + 1),
                element: "<robot>".into(),
            },
            message: message.into(),
        }
    }

    fn finite(&self, tag: &str, name: &str, what: &str, v: &[f64]) -> Result<(), ModelError> {
        if v.iter().all(|x| x.is_finite()) {
            Ok(())
        } else {
            Err(self.err(
                tag,
                name,
                format!("{what} must be finite numbers, got {v:?}"),
            ))
        }
    }

    fn convert(&self, robot: &urdf_rs::Robot, gravity: Vec3) -> Result<SpatialModel, ModelError> {
        let links = &robot.links;
        if links.is_empty() {
            return Err(self.robot_err("has no <link>"));
        }
        // names: unique links and joints
        let mut link_index: HashMap<&str, usize> = HashMap::new();
        for (i, l) in links.iter().enumerate() {
            if link_index.insert(l.name.as_str(), i).is_some() {
                return Err(self.err("link", &l.name, "is defined twice"));
            }
        }
        let mut joint_names: HashMap<&str, ()> = HashMap::new();
        for j in &robot.joints {
            if joint_names.insert(j.name.as_str(), ()).is_some() {
                return Err(self.err("joint", &j.name, "is defined twice"));
            }
        }
        // the tree: each joint's links exist, each link has one parent joint
        let mut parent_joint: Vec<Option<usize>> = vec![None; links.len()];
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); links.len()];
        let names: Vec<String> = links.iter().map(|l| l.name.clone()).collect();
        for (k, j) in robot.joints.iter().enumerate() {
            let find = |which: &str, link: &str| {
                link_index.get(link).copied().ok_or_else(|| {
                    self.err(
                        "joint",
                        &j.name,
                        format!(
                            "unknown {which} link '{link}' (links: {}){}",
                            names.join(", "),
                            crate::did_you_mean(link, &names)
                        ),
                    )
                })
            };
            let p = find("parent", &j.parent.link)?;
            let c = find("child", &j.child.link)?;
            if p == c {
                return Err(self.err("joint", &j.name, "connects a link to itself"));
            }
            if let Some(other) = parent_joint[c] {
                return Err(self.err(
                    "joint",
                    &j.name,
                    format!(
                        "link '{}' is already the child of joint '{}' (a URDF is a tree: \
                         closed loops are not expressible)",
                        j.child.link, robot.joints[other].name
                    ),
                ));
            }
            parent_joint[c] = Some(k);
            children[p].push(k);
            use urdf_rs::JointType as T;
            match j.joint_type {
                T::Floating | T::Planar => {
                    let t = if j.joint_type == T::Floating {
                        "floating"
                    } else {
                        "planar"
                    };
                    return Err(self.err(
                        "joint",
                        &j.name,
                        format!(
                            "type '{t}' is not supported (jounce maps revolute, continuous, \
                             prismatic, fixed and spherical joints; a {t} joint has no spatial \
                             counterpart yet)"
                        ),
                    ));
                }
                _ => {}
            }
            self.finite("joint", &j.name, "origin xyz", &j.origin.xyz.0)?;
            self.finite("joint", &j.name, "origin rpy", &j.origin.rpy.0)?;
            self.finite("joint", &j.name, "axis", &j.axis.xyz.0)?;
        }
        let roots: Vec<usize> = (0..links.len())
            .filter(|&i| parent_joint[i].is_none())
            .collect();
        let root = match roots.as_slice() {
            [r] => *r,
            [] => return Err(self.robot_err("has no root link: its joints form a closed loop")),
            many => {
                return Err(self.robot_err(format!(
                    "has {} root links ({}): a URDF is one tree of links, every link but the \
                     root the child of one joint",
                    many.len(),
                    many.iter()
                        .map(|&i| links[i].name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )))
            }
        };
        // forward kinematics at zero joint positions, parents first
        let mut order = vec![root];
        let mut pose = vec![IDENTITY; links.len()];
        let mut k = 0;
        while k < order.len() {
            let l = order[k];
            for &j in &children[l] {
                let jt = &robot.joints[j];
                let c = link_index[jt.child.link.as_str()];
                pose[c] = pose[l].compose(jt.origin.xyz.0, jt.origin.rpy.0);
                order.push(c);
            }
            k += 1;
        }
        if order.len() != links.len() {
            let lost: Vec<&str> = (0..links.len())
                .filter(|i| !order.contains(i))
                .map(|i| links[i].name.as_str())
                .collect();
            return Err(self.robot_err(format!(
                "links {} are not connected to the root link '{}' (their joints form a loop)",
                lost.join(", "),
                links[root].name
            )));
        }

        // bodies: every link with mass, parents first
        let mut host: Vec<Option<Host>> = vec![None; links.len()];
        let mut bodies: Vec<SpatialBody> = Vec::new();
        for &l in &order {
            if let Some(b) = self.body(&links[l], &pose[l])? {
                host[l] = Some(Host::Body(bodies.len()));
                bodies.push(b);
            }
        }
        // massless links: into the parent's host over a fixed joint, the
        // ground at the root, else into the first link with mass fixed below
        for &l in &order {
            if host[l].is_some() {
                continue;
            }
            let h = match parent_joint[l] {
                None => Host::Ground,
                Some(j) if robot.joints[j].joint_type == urdf_rs::JointType::Fixed => {
                    let p = link_index[robot.joints[j].parent.link.as_str()];
                    host[p].expect("parents first")
                }
                Some(j) => {
                    match self.fixed_descendant_with_mass(robot, &link_index, &children, &host, l) {
                        Some(h) => h,
                        None => {
                            let jt = &robot.joints[j];
                            return Err(self.err(
                                "link",
                                &links[l].name,
                                format!(
                                    "has no mass (no <inertial>, or mass 0) and no link with mass \
                                 is fixed to it, so the motion of its {} joint '{}' has no \
                                 inertia (a singular mass matrix); give it an <inertial> or \
                                 attach it with a fixed joint",
                                    type_name(&jt.joint_type),
                                    jt.name
                                ),
                            ));
                        }
                    }
                }
            };
            host[l] = Some(h);
        }
        let host: Vec<Host> = host.into_iter().map(|h| h.expect("every link")).collect();

        // frames of the hosts: world pose of the body frame (ground: world)
        let frame = |h: Host, bodies: &[SpatialBody]| -> Pose {
            match h {
                Host::Ground => IDENTITY,
                Host::Body(i) => Pose {
                    p: bodies[i].position,
                    r: rotation_matrix(bodies[i].orientation),
                },
            }
        };
        let local = |h: Host, w: Vec3, bodies: &[SpatialBody]| -> Vec3 {
            let f = frame(h, bodies);
            mat_t_vec(&f.r, sub(w, f.p))
        };
        let body_ref = |h: Host| match h {
            Host::Ground => BodyRef::Ground,
            Host::Body(i) => BodyRef::Body(i),
        };
        let add_point = |bodies: &mut Vec<SpatialBody>, h: Host, name: &str, w: Vec3| {
            if let Host::Body(i) = h {
                let s = local(h, w, bodies);
                let pts = &mut bodies[i].points;
                if !pts.iter().any(|(n, _)| n == name) {
                    pts.push((name.to_string(), s));
                }
            }
        };

        let mut joints: Vec<SpatialJoint> = Vec::new();
        if let Host::Body(_) = host[root] {
            let name = unique_name(
                format!("{}_on_ground", links[root].name),
                robot.joints.iter().map(|j| j.name.as_str()),
            );
            add_point(&mut bodies, host[root], &name, pose[root].p);
            joints.push(SpatialJoint {
                name,
                kind: fixed(
                    SpatialAttachment {
                        body: BodyRef::Ground,
                        point: pose[root].p,
                    },
                    IDENTITY,
                    SpatialAttachment {
                        body: body_ref(host[root]),
                        point: local(host[root], pose[root].p, &bodies),
                    },
                    frame(host[root], &bodies),
                ),
            });
        }
        // a point at every link frame's origin on its host
        for &l in &order {
            add_point(&mut bodies, host[l], &links[l].name, pose[l].p);
        }
        for &l in &order[1..] {
            let j = parent_joint[l].expect("not the root");
            let jt = &robot.joints[j];
            let p = link_index[jt.parent.link.as_str()];
            let (hp, hc) = (host[p], host[l]);
            if hp == hc {
                // a fixed joint inside one body (a merged link)
                continue;
            }
            let w = pose[l].p;
            add_point(&mut bodies, hp, &jt.name, w);
            add_point(&mut bodies, hc, &jt.name, w);
            let (fa, fb) = (frame(hp, &bodies), frame(hc, &bodies));
            let a = SpatialAttachment {
                body: body_ref(hp),
                point: local(hp, w, &bodies),
            };
            let b = SpatialAttachment {
                body: body_ref(hc),
                point: local(hc, w, &bodies),
            };
            use urdf_rs::JointType as T;
            let axis = || -> Result<(Vec3, Vec3), ModelError> {
                let h = jt.axis.xyz.0;
                let n = h.iter().map(|x| x * x).sum::<f64>().sqrt();
                if !(n > 0.0) {
                    return Err(self.err("joint", &jt.name, "axis must not be zero"));
                }
                let world = mat_vec(&pose[l].r, h.map(|x| x / n));
                Ok((mat_t_vec(&fa.r, world), mat_t_vec(&fb.r, world)))
            };
            let kind = match jt.joint_type {
                T::Revolute | T::Continuous => {
                    let (axis_a, axis_b) = axis()?;
                    SpatialJointKind::Revolute {
                        a,
                        b,
                        axis_a,
                        axis_b,
                    }
                }
                T::Prismatic => {
                    let (axis_a, axis_b) = axis()?;
                    SpatialJointKind::Prismatic {
                        a,
                        b,
                        axis_a,
                        axis_b,
                    }
                }
                T::Spherical => SpatialJointKind::Spherical { a, b },
                T::Fixed => fixed(a, fa, b, fb),
                T::Floating | T::Planar => unreachable!("refused above"),
            };
            joints.push(SpatialJoint {
                name: jt.name.clone(),
                kind,
            });
        }
        if let Some(b) = bodies.iter().find(|b| b.name == GROUND) {
            return Err(self.err(
                "link",
                &b.name,
                "the name 'ground' is reserved for the fixed frame in jounce; rename the link",
            ));
        }
        Ok(SpatialModel {
            gravity,
            bodies,
            joints,
            forces: Vec::new(),
            drivers: Vec::new(),
        })
    }

    /// The host of the first link with mass below `l` over fixed joints
    /// (depth first, in file order).
    fn fixed_descendant_with_mass(
        &self,
        robot: &urdf_rs::Robot,
        link_index: &HashMap<&str, usize>,
        children: &[Vec<usize>],
        host: &[Option<Host>],
        l: usize,
    ) -> Option<Host> {
        for &j in &children[l] {
            let jt = &robot.joints[j];
            if jt.joint_type != urdf_rs::JointType::Fixed {
                continue;
            }
            let c = link_index[jt.child.link.as_str()];
            if let Some(h @ Host::Body(_)) = host[c] {
                return Some(h);
            }
            if let Some(h) = self.fixed_descendant_with_mass(robot, link_index, children, host, c) {
                return Some(h);
            }
        }
        None
    }

    /// The body of a link with mass (None: massless), checked.
    fn body(&self, link: &urdf_rs::Link, pose: &Pose) -> Result<Option<SpatialBody>, ModelError> {
        let inertial = &link.inertial;
        let m = inertial.mass.value;
        let i = &inertial.inertia;
        let tensor = [
            [i.ixx, i.ixy, i.ixz],
            [i.ixy, i.iyy, i.iyz],
            [i.ixz, i.iyz, i.izz],
        ];
        let name = &link.name;
        self.finite("link", name, "inertial origin xyz", &inertial.origin.xyz.0)?;
        self.finite("link", name, "inertial origin rpy", &inertial.origin.rpy.0)?;
        self.finite("link", name, "mass", &[m])?;
        self.finite("link", name, "inertia", tensor.as_flattened())?;
        if m == 0.0 && tensor.as_flattened().iter().all(|&x| x == 0.0) {
            return Ok(None);
        }
        if !(m > 0.0) {
            return Err(self.err(
                "link",
                name,
                format!("<inertial> mass must be positive, got {m}"),
            ));
        }
        let t = &tensor;
        let m2 = t[0][0] * t[1][1] - t[0][1] * t[1][0];
        let m3 = t[0][0] * (t[1][1] * t[2][2] - t[1][2] * t[2][1])
            - t[0][1] * (t[1][0] * t[2][2] - t[1][2] * t[2][0])
            + t[0][2] * (t[1][0] * t[2][1] - t[1][1] * t[2][0]);
        if !(t[0][0] > 0.0 && m2 > 0.0 && m3 > 0.0) {
            return Err(self.err(
                "link",
                name,
                format!(
                    "<inertia> must be positive definite (a rigid body with volume); got \
                     ixx={} ixy={} ixz={} iyy={} iyz={} izz={}",
                    i.ixx, i.ixy, i.ixz, i.iyy, i.iyz, i.izz
                ),
            ));
        }
        let frame = pose.compose(inertial.origin.xyz.0, inertial.origin.rpy.0);
        Ok(Some(SpatialBody {
            name: name.clone(),
            mass: m,
            inertia: tensor,
            position: frame.p,
            orientation: quaternion_of(&frame.r),
            velocity: [0.0; 3],
            angular_velocity: [0.0; 3],
            points: Vec::new(),
        }))
    }
}

/// Every `<joint>` of URDF text with its type name, in file order (empty
/// if the text is not a URDF: [`spatial_from_urdf`] reports that). A
/// TOML file that includes the URDF names these joints in its drivers.
pub(crate) fn joint_types(text: &str) -> Vec<(String, &'static str)> {
    urdf_rs::read_from_string(text)
        .map(|r| {
            r.joints
                .iter()
                .map(|j| (j.name.clone(), type_name(&j.joint_type)))
                .collect()
        })
        .unwrap_or_default()
}

fn type_name(t: &urdf_rs::JointType) -> &'static str {
    use urdf_rs::JointType as T;
    match t {
        T::Revolute => "revolute",
        T::Continuous => "continuous",
        T::Prismatic => "prismatic",
        T::Fixed => "fixed",
        T::Floating => "floating",
        T::Planar => "planar",
        T::Spherical => "spherical",
    }
}

/// `name`, or with `_` appended until no joint has it.
fn unique_name<'n>(mut name: String, taken: impl Iterator<Item = &'n str> + Clone) -> String {
    while taken.clone().any(|t| t == name) {
        name.push('_');
    }
    name
}

/// A weld of `a` (frame `fa`) and `b` (frame `fb`) at their present
/// relative pose: the world axes in each body frame.
fn fixed(a: SpatialAttachment, fa: Pose, b: SpatialAttachment, fb: Pose) -> SpatialJointKind {
    let unit = |i: usize| -> Vec3 { std::array::from_fn(|k| f64::from(k == i)) };
    SpatialJointKind::Fixed {
        a,
        b,
        frame_a: std::array::from_fn(|i| mat_t_vec(&fa.r, unit(i))),
        frame_b: std::array::from_fn(|i| mat_t_vec(&fb.r, unit(i))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rpy_is_fixed_axis_roll_pitch_yaw() {
        // Rz(y) Ry(p) Rx(r) applied to e_x: roll leaves it, pitch tips it
        // down (−z), yaw turns it about z
        let (r, p, y) = (0.3, -0.4, 1.1);
        let m = rpy_matrix([r, p, y]);
        let ex = mat_vec(&m, [1.0, 0.0, 0.0]);
        let want = [y.cos() * p.cos(), y.sin() * p.cos(), -p.sin()];
        for k in 0..3 {
            assert!((ex[k] - want[k]).abs() < 1e-15);
        }
        // the quaternion round trip
        let q = quaternion_of(&m);
        let back = rotation_matrix(q);
        for i in 0..3 {
            for j in 0..3 {
                assert!((back[i][j] - m[i][j]).abs() < 1e-15);
            }
        }
        for rpy in [[3.0, 0.1, 0.0], [0.0, 3.1, 0.2], [0.1, 0.0, 3.1]] {
            let m = rpy_matrix(rpy);
            let back = rotation_matrix(quaternion_of(&m));
            for i in 0..3 {
                for j in 0..3 {
                    assert!((back[i][j] - m[i][j]).abs() < 1e-14, "{rpy:?}");
                }
            }
        }
    }

    /// World position of an attachment and a body-frame vector in world.
    fn world(m: &SpatialModel, a: &SpatialAttachment, v: Vec3) -> (Vec3, Vec3) {
        match a.body {
            BodyRef::Ground => (a.point, v),
            BodyRef::Body(i) => {
                let r = rotation_matrix(m.bodies[i].orientation);
                (
                    add(m.bodies[i].position, mat_vec(&r, a.point)),
                    mat_vec(&r, v),
                )
            }
        }
    }

    /// Every joint holds at the start: points coincide, axes and welded
    /// frames agree in world axes.
    fn assert_assembled(m: &SpatialModel) {
        let close = |x: Vec3, y: Vec3, what: &str| {
            for k in 0..3 {
                assert!((x[k] - y[k]).abs() < 1e-14, "{what}: {x:?} vs {y:?}");
            }
        };
        for j in &m.joints {
            let (a, b) = j.kind.attachments();
            let (pa, _) = world(m, &a, [0.0; 3]);
            let (pb, _) = world(m, &b, [0.0; 3]);
            close(pa, pb, &j.name);
            match &j.kind {
                SpatialJointKind::Revolute { axis_a, axis_b, .. }
                | SpatialJointKind::Prismatic { axis_a, axis_b, .. } => {
                    close(world(m, &a, *axis_a).1, world(m, &b, *axis_b).1, &j.name);
                }
                SpatialJointKind::Fixed {
                    frame_a, frame_b, ..
                } => {
                    for i in 0..3 {
                        close(
                            world(m, &a, frame_a[i]).1,
                            world(m, &b, frame_b[i]).1,
                            &j.name,
                        );
                    }
                }
                _ => {}
            }
        }
    }

    const INERTIAL: &str = r#"<inertial><origin xyz="0.1 0.02 -0.03" rpy="0.2 -0.3 0.4"/>
        <mass value="1.5"/><inertia ixx="0.03" ixy="0.001" ixz="0" iyy="0.04" iyz="-0.002" izz="0.05"/></inertial>"#;

    /// A root with mass (fixed to the ground), a fixed joint between two
    /// links with mass (a spatial fixed joint), a massless link on a
    /// moving joint merged into the link with mass fixed below it, and a
    /// prismatic joint.
    #[test]
    fn roots_with_mass_fixed_joints_and_massless_links_on_moving_joints() {
        let text = format!(
            r#"<robot name="edge">
  <link name="base">{INERTIAL}</link>
  <joint name="weld" type="fixed"><parent link="base"/><child link="plate"/>
    <origin xyz="0 0 0.2" rpy="0.1 0.2 0.3"/></joint>
  <link name="plate">{INERTIAL}</link>
  <joint name="pivot" type="revolute"><parent link="plate"/><child link="hub"/>
    <origin xyz="0.3 0 0" rpy="0 0.5 0"/><axis xyz="0 1 1"/></joint>
  <link name="hub"/>
  <joint name="hub_mount" type="fixed"><parent link="hub"/><child link="arm"/>
    <origin xyz="0.1 0 0" rpy="0.7 0 0"/></joint>
  <link name="arm">{INERTIAL}</link>
  <joint name="slide" type="prismatic"><parent link="arm"/><child link="slider"/>
    <origin xyz="0.2 0 0" rpy="0 0 1"/><axis xyz="1 0 0"/></joint>
  <link name="slider">{INERTIAL}</link>
</robot>"#
        );
        let (name, m) = spatial_from_urdf(&text, "edge.urdf", URDF_GRAVITY).unwrap();
        assert_eq!(name.as_deref(), Some("edge"));
        let bodies: Vec<&str> = m.bodies.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(bodies, ["base", "plate", "arm", "slider"]);
        let joints: Vec<(&str, usize)> = m
            .joints
            .iter()
            .map(|j| (j.name.as_str(), j.kind.equations()))
            .collect();
        // 22 equations on 4 bodies (24 velocities): 2 degrees of freedom
        assert_eq!(
            joints,
            [
                ("base_on_ground", 6),
                ("weld", 6),
                ("pivot", 5),
                ("slide", 5)
            ]
        );
        // the pivot joins the plate to the arm, the hub's host
        let (a, b) = m.joints[2].kind.attachments();
        assert_eq!((a.body, b.body), (BodyRef::Body(1), BodyRef::Body(2)));
        assert!(m.bodies[2].points.iter().any(|(n, _)| n == "hub"));
        assert_assembled(&m);
        // the inertial frame is the link frame turned by its rpy: the
        // centre of mass of the base is its inertial xyz
        assert_eq!(m.bodies[0].position, [0.1, 0.02, -0.03]);
        let q = quaternion_of(&rpy_matrix([0.2, -0.3, 0.4]));
        for k in 0..4 {
            assert!((m.bodies[0].orientation[k] - q[k]).abs() < 1e-15);
        }
    }

    #[test]
    fn the_shipped_arm_is_assembled_at_zero_joint_angles() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/six_axis_arm.urdf"
        );
        let model = load_urdf_file(Path::new(path)).unwrap();
        let m = model.spatial.as_ref().unwrap();
        assert_assembled(m);
        assert_eq!(m.gravity, [0.0, 0.0, -9.81]);
        assert_eq!(model.settings, Settings::default());
    }

    #[test]
    fn lines_name_the_element() {
        let text =
            "<robot name=\"r\">\n  <link name=\"a\"/>\n  <joint name=\"j\" type=\"fixed\">\n";
        let cx = Cx {
            text,
            origin: "r.urdf",
        };
        assert_eq!(cx.line_of("link", "a"), 2);
        assert_eq!(cx.line_of("joint", "j"), 3);
        assert_eq!(cx.line_of("link", "zz"), 1);
    }
}
