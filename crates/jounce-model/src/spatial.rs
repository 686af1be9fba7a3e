//! The validated spatial model: bodies in 3-D with unit-quaternion
//! orientations and full inertia tensors, spatial joints and force
//! elements. Parsed by `spatial_parse.rs` when a file says
//! `[model] space = "spatial"`; held by [`crate::Model::spatial`].
//!
//! Owns: the spatial element types and their meaning (frames, units).
//! Must not: evaluate dynamics.
//!
//! Frames: every body-fixed vector (points, axes, inertia) is in the body's
//! principal-free body frame, whose origin is the centre of mass; the
//! orientation p = (w, x, y, z) maps body to world, r_world = r + A(p) s
//! (Nikravesh 1988, *Computer-Aided Analysis of Mechanical Systems*, §6.3).
//! Units SI: m, kg, kg·m², s, rad, N, N·m.

use crate::types::BodyRef;

/// The space a model lives in (`[model] space`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Space {
    /// x, y, θ per body (the default).
    #[default]
    Planar,
    /// x, y, z and a unit quaternion per body.
    Spatial,
}

/// The spatial part of a model: bodies, joints and forces in 3-D.
#[derive(Clone, Debug, PartialEq)]
pub struct SpatialModel {
    /// Gravitational acceleration g [m/s²], world frame.
    pub gravity: [f64; 3],
    /// Moving bodies.
    pub bodies: Vec<SpatialBody>,
    /// Joints.
    pub joints: Vec<SpatialJoint>,
    /// Force elements.
    pub forces: Vec<SpatialForce>,
    /// Drivers (rheonomic constraints on joints), after the joints' rows.
    pub drivers: Vec<SpatialDriver>,
}

/// A driver prescribing the coordinate of a revolute or prismatic joint as
/// a time function, one equation, measured from the initial
/// configuration:
///
/// * revolute: the angle θ of body b about the joint axis relative to body
///   a, right-handed about the axis as fixed in body a, zero at the start;
///   Φ = sin(θ − f(t)) = (A_b f_b⁰)·(A_a (cos f(t) g_a − sin f(t) f_a)),
///   f_a ⊥ h_a, g_a = h_a × f_a, f_b⁰ = A_b0ᵀ A_a0 f_a;
/// * prismatic: the slide of b's point along a's axis relative to its
///   start, Φ = (r_b + A_b s_b − r_a − A_a s_a)·(A_a h_a) − d₀ − f(t).
#[derive(Clone, Debug, PartialEq)]
pub struct SpatialDriver {
    /// Unique name (among joints and drivers).
    pub name: String,
    /// The driven joint (index into [`SpatialModel::joints`]).
    pub joint: usize,
    /// f(t) [rad or m].
    pub function: crate::TimeFunction,
}

/// A rigid body in 3-D; coordinates are its centre of mass and orientation.
#[derive(Clone, Debug, PartialEq)]
pub struct SpatialBody {
    /// Unique name.
    pub name: String,
    /// Mass m > 0 \[kg\].
    pub mass: f64,
    /// Inertia tensor J about the centre of mass, body frame [kg·m²]
    /// (symmetric, positive definite).
    pub inertia: [[f64; 3]; 3],
    /// Initial centre of mass r \[m\], world frame.
    pub position: [f64; 3],
    /// Initial orientation, the unit quaternion p = (w, x, y, z) (body to
    /// world), normalised at load.
    pub orientation: [f64; 4],
    /// Initial velocity of the centre of mass [m/s], world frame.
    pub velocity: [f64; 3],
    /// Initial angular velocity ω [rad/s], **body frame** (a file's world
    /// `angular_velocity` is converted at load).
    pub angular_velocity: [f64; 3],
    /// Named points in the body frame relative to the centre of mass \[m\].
    pub points: Vec<(String, [f64; 3])>,
}

/// A point on a body or on ground, in that body's frame (ground: world).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpatialAttachment {
    /// The body.
    pub body: BodyRef,
    /// Body-frame coordinates relative to the centre of mass \[m\].
    pub point: [f64; 3],
}

/// A spatial joint.
#[derive(Clone, Debug, PartialEq)]
pub struct SpatialJoint {
    /// Unique name (among joints).
    pub name: String,
    /// Kind and geometry.
    pub kind: SpatialJointKind,
}

/// Spatial joint kinds, with their number of equations. Axes given in the
/// file in the world frame at the initial configuration are stored in each
/// body's frame.
#[derive(Clone, Debug, PartialEq)]
pub enum SpatialJointKind {
    /// Points coincide (3): r_a + A_a s_a − r_b − A_b s_b = 0.
    Spherical {
        /// First point.
        a: SpatialAttachment,
        /// Second point.
        b: SpatialAttachment,
    },
    /// Spherical plus the axis of b kept along the axis of a (5):
    /// (A_b h_b)·(A_a f_a) = (A_b h_b)·(A_a g_a) = 0, f_a, g_a ⊥ h_a.
    Revolute {
        /// First point (on the axis).
        a: SpatialAttachment,
        /// Second point (on the axis).
        b: SpatialAttachment,
        /// Unit axis in body a's frame.
        axis_a: [f64; 3],
        /// Unit axis in body b's frame.
        axis_b: [f64; 3],
    },
    /// Body b slides along and turns about the axis of body a (4): the
    /// axes parallel, (A_a f_a)·(A_b h_b) = (A_a g_a)·(A_b h_b) = 0, and
    /// b's point on a's axis, (A_a f_a)·d = (A_a g_a)·d = 0.
    Cylindrical {
        /// Point on the axis, body a.
        a: SpatialAttachment,
        /// Point on the axis, body b.
        b: SpatialAttachment,
        /// Unit axis in body a's frame.
        axis_a: [f64; 3],
        /// Unit axis in body b's frame.
        axis_b: [f64; 3],
    },
    /// Cylindrical with the turn about the axis locked at its initial
    /// value (5): body b slides along the axis of body a.
    Prismatic {
        /// Point on the axis, body a.
        a: SpatialAttachment,
        /// Point on the axis, body b.
        b: SpatialAttachment,
        /// Unit axis in body a's frame.
        axis_a: [f64; 3],
        /// Unit axis in body b's frame.
        axis_b: [f64; 3],
    },
    /// Spherical plus two perpendicular axes, one on each body, kept
    /// perpendicular (4): (A_a h_a)·(A_b h_b) = 0.
    Universal {
        /// First point (the cross centre).
        a: SpatialAttachment,
        /// Second point.
        b: SpatialAttachment,
        /// Unit axis on body a, its frame.
        axis_a: [f64; 3],
        /// Unit axis on body b, its frame.
        axis_b: [f64; 3],
    },
    /// Weld (6): spherical plus the relative orientation locked at its
    /// initial value, (A_a e_i)·(A_b e'_j) = 0 for (i, j) = (1, 2), (2, 3),
    /// (3, 1), e_i and e'_i the world axes at the start in each frame.
    Fixed {
        /// First point (any: the bodies' points that coincide at the start).
        a: SpatialAttachment,
        /// Second point.
        b: SpatialAttachment,
        /// World axes (rows) at the start in body a's frame.
        frame_a: [[f64; 3]; 3],
        /// World axes (rows) at the start in body b's frame.
        frame_b: [[f64; 3]; 3],
    },
    /// Point on a line (2): body b's point stays on the line through body
    /// a's point along a's axis, (A_a f_a)·d = (A_a g_a)·d = 0,
    /// d = P_b − P_a, f_a, g_a ⊥ h_a; b slides along and turns freely.
    PointOnLine {
        /// Point on the line, body a.
        a: SpatialAttachment,
        /// The point of body b.
        b: SpatialAttachment,
        /// Unit line direction in body a's frame.
        axis_a: [f64; 3],
    },
    /// Constant distance (1): |P_b − P_a|² − L² = 0.
    Distance {
        /// First point.
        a: SpatialAttachment,
        /// Second point.
        b: SpatialAttachment,
        /// Length L > 0 \[m\].
        length: f64,
    },
}

impl SpatialJointKind {
    /// Number of constraint equations.
    #[must_use]
    pub fn equations(&self) -> usize {
        match self {
            Self::Spherical { .. } => 3,
            Self::Revolute { .. } => 5,
            Self::Universal { .. } | Self::Cylindrical { .. } => 4,
            Self::Prismatic { .. } => 5,
            Self::Fixed { .. } => 6,
            Self::Distance { .. } => 1,
            Self::PointOnLine { .. } => 2,
        }
    }

    /// The two attachments.
    #[must_use]
    pub fn attachments(&self) -> (SpatialAttachment, SpatialAttachment) {
        match self {
            Self::Spherical { a, b }
            | Self::Revolute { a, b, .. }
            | Self::Universal { a, b, .. }
            | Self::Cylindrical { a, b, .. }
            | Self::Prismatic { a, b, .. }
            | Self::Fixed { a, b, .. }
            | Self::Distance { a, b, .. }
            | Self::PointOnLine { a, b, .. } => (*a, *b),
        }
    }
}

/// The frame a load vector is given in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpatialFrame {
    /// The world frame.
    World,
    /// The body's frame (the load turns with the body).
    Body,
}

/// A spatial force element.
#[derive(Clone, Debug, PartialEq)]
pub struct SpatialForce {
    /// Unique name.
    pub name: String,
    /// Kind and parameters.
    pub kind: SpatialForceKind,
}

/// Spatial force kinds (constant loads; time functions come later).
#[derive(Clone, Debug, PartialEq)]
pub enum SpatialForceKind {
    /// A constant force F at a body point.
    PointForce {
        /// Where it acts.
        at: SpatialAttachment,
        /// F \[N\].
        force: [f64; 3],
        /// Frame of F.
        frame: SpatialFrame,
    },
    /// A constant torque τ on a body.
    Torque {
        /// The body (index into [`SpatialModel::bodies`]).
        body: usize,
        /// τ [N·m].
        torque: [f64; 3],
        /// Frame of τ.
        frame: SpatialFrame,
    },
    /// Translational spring-damper between two points along their line:
    /// tension F = k (ℓ − ℓ0) + c ℓ' + f_act(t).
    SpringDamper {
        /// First point.
        a: SpatialAttachment,
        /// Second point.
        b: SpatialAttachment,
        /// Stiffness k \[N/m\].
        stiffness: f64,
        /// Damping c \[N·s/m\].
        damping: f64,
        /// Free length ℓ0 \[m\].
        free_length: f64,
        /// Actuator tension f_act(t) \[N\] added to F (a constant is a
        /// preload).
        actuator: Option<crate::TimeFunction>,
    },
    /// Rotational spring-damper about a revolute joint's axis: the torque
    /// τ = −k (θ − θ0) − c θ' about the axis on body b (−τ on body a), θ
    /// the joint angle as a revolute driver measures it (right-handed
    /// about the axis on body a, zero at the start).
    RotationalSpring {
        /// The revolute joint (index into [`SpatialModel::joints`]).
        joint: usize,
        /// Stiffness k [N·m/rad].
        stiffness: f64,
        /// Damping c [N·m·s/rad].
        damping: f64,
        /// Zero angle θ0 \[rad\].
        zero_angle: f64,
        /// Actuator torque τ_act(t) [N·m] added to τ.
        actuator: Option<crate::TimeFunction>,
    },
    /// Unilateral contact of a sphere on body b with a plane or a sphere
    /// on body a (`[[contacts]]`; see `jounce_mechanics::spatial::contact`):
    /// a penalty law (linear, Hertz, Hunt–Crossley) with optional
    /// regularised Coulomb friction, or Newton's impact law. Its gap is a
    /// switching function of the run.
    Contact {
        /// Plane point or sphere centre on body a.
        a: SpatialAttachment,
        /// Sphere centre on body b.
        b: SpatialAttachment,
        /// Shape.
        geometry: SpatialContactGeometry,
        /// Force or impact law.
        law: crate::ContactLaw,
        /// Stiffness k [N/m^e] (0 for the impact law).
        stiffness: f64,
        /// Damping c [N·s/m] (Hunt–Crossley: [s/m]).
        damping: f64,
        /// Regularised Coulomb friction (penalty laws only).
        friction: Option<crate::Friction>,
    },
    /// Six-component bushing between body a's point (the marker, with body
    /// a's axes) and body b's point: in body a's axes, the force
    /// f = −K d − C ḋ on body b at its point and the torque
    /// τ = −K_r θ − C_r ω on body b (minus both on body a), with d the
    /// offset of b's point from a's relative to the start, θ the
    /// small-angle rotation vector of b relative to a from the start and
    /// ω the relative angular velocity (see `jounce_mechanics::spatial::forces`).
    Bushing {
        /// The marker (point and axes of body a).
        a: SpatialAttachment,
        /// The point on body b.
        b: SpatialAttachment,
        /// Diagonal translational stiffness K \[N/m\].
        stiffness: [f64; 3],
        /// Diagonal translational damping C \[N·s/m\].
        damping: [f64; 3],
        /// Diagonal rotational stiffness K_r [N·m/rad].
        rotational_stiffness: [f64; 3],
        /// Diagonal rotational damping C_r [N·m·s/rad].
        rotational_damping: [f64; 3],
    },
}

/// Shape of a spatial contact pair: body a carries the plane or the first
/// sphere, body b a sphere.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SpatialContactGeometry {
    /// A sphere of radius r centred at point b of body b against the plane
    /// through point a of body a with unit normal n (body a's frame,
    /// pointing to the free side): gap g = n·(C_b − P_a) − r.
    SpherePlane {
        /// Radius of the sphere on body b \[m\].
        radius: f64,
        /// Unit normal of the plane in body a's frame.
        normal: [f64; 3],
    },
    /// Two spheres: g = |C_b − C_a| − r_a − r_b.
    SphereSphere {
        /// Radius of the sphere on body a \[m\].
        radius_a: f64,
        /// Radius of the sphere on body b \[m\].
        radius_b: f64,
    },
}

/// The rotation matrix A(p) of a unit quaternion p = (w, x, y, z), body to
/// world (Nikravesh 1988, eq. 6.19).
#[must_use]
pub fn rotation_matrix(p: [f64; 4]) -> [[f64; 3]; 3] {
    let [w, x, y, z] = p;
    [
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y - w * z),
            2.0 * (x * z + w * y),
        ],
        [
            2.0 * (x * y + w * z),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z - w * x),
        ],
        [
            2.0 * (x * z - w * y),
            2.0 * (y * z + w * x),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ]
}
