//! A spatial rigid body in reference-point coordinates with Euler
//! parameters: its coordinates, its pose, and the position update.
//!
//! Per body (Nikravesh 1988, ch. 6; Haug 1989, ch. 9):
//! q_b = (r, p) = (x, y, z, w, e1, e2, e3) — 7 positions, the centre of
//! mass in the world frame and the unit quaternion body → world;
//! v_b = (ṙ, ω) — 6 velocities, the centre-of-mass velocity in the world
//! frame and the angular velocity **in the body frame** ω' (Haug's
//! notation), so that the mass matrix diag(m I₃, J') is constant and the
//! gyroscopic moment −ω' × J'ω' appears among the forces (the
//! Newton–Euler equations in body axes, Haug eq. 11.1.27).
//!
//! Owns: the layout of q and v per body, the pose (r, A(p)) of a body, a
//! point's world position and velocity, and the retraction
//! q ⊕ δ = (r + δr, p ⊗ exp(δω)). Must not: know joints or forces.

use super::quaternion::{add, cross, mat_vec, rotation, turn, Mat3, Quat, Vec3};
use crate::kinematics::Scalar;

/// Positions per body: x, y, z, w, e1, e2, e3.
pub const NQ_BODY: usize = 7;
/// Velocities per body: ẋ, ẏ, ż, ω'1, ω'2, ω'3.
pub const NV_BODY: usize = 6;

/// Labels of a body's positions, after `body.`.
pub const POSITION_LABELS: [&str; NQ_BODY] = ["x", "y", "z", "qw", "qx", "qy", "qz"];
/// Labels of a body's velocities, after `body.`.
pub const VELOCITY_LABELS: [&str; NV_BODY] = ["vx", "vy", "vz", "wx", "wy", "wz"];
/// Labels of a body's position increments Δ of q ⊞ Δ, after `body.`: the
/// translation of the centre of mass (world frame) and the components of
/// the rotation vector of p ⊗ exp(Δ_ω) (body frame).
pub const TANGENT_LABELS: [&str; NV_BODY] = ["x", "y", "z", "rx", "ry", "rz"];

/// The pose of a body (or of ground: r = 0, A = I) in the scalar type.
#[derive(Clone, Copy, Debug)]
pub struct Pose<D> {
    /// Centre of mass, world frame.
    pub r: Vec3<D>,
    /// Rotation matrix A(p), body to world.
    pub a: Mat3<D>,
}

impl<D: Scalar> Pose<D> {
    /// The fixed world frame.
    pub fn ground() -> Self {
        let (o, l) = (D::zero(), D::one());
        Pose {
            r: [o; 3],
            a: [[l, o, o], [o, l, o], [o, o, l]],
        }
    }

    /// The pose of coordinates (r, p).
    pub fn new(r: Vec3<D>, p: &Quat<D>) -> Self {
        Pose { r, a: rotation(p) }
    }

    /// World position r + A s of the body point s.
    pub fn point(&self, s: &Vec3<D>) -> Vec3<D> {
        add(&self.r, &mat_vec(&self.a, s))
    }

    /// World vector A h of the body vector h.
    pub fn vector(&self, h: &Vec3<D>) -> Vec3<D> {
        mat_vec(&self.a, h)
    }
}

/// (r, p) of body `b` read from q, lifted into the scalar type.
pub fn coordinates<D: Scalar>(q: &[f64], b: usize) -> (Vec3<D>, Quat<D>) {
    let x = &q[NQ_BODY * b..NQ_BODY * (b + 1)];
    (
        [D::from(x[0]), D::from(x[1]), D::from(x[2])],
        [D::from(x[3]), D::from(x[4]), D::from(x[5]), D::from(x[6])],
    )
}

/// (r, p) ⊕ δ = (r + δ[0..3], p ⊗ exp(δ[3..6])), δ a velocity-space
/// increment of the body (translation in world, rotation in body frame).
pub fn retract<D: Scalar>(r: &Vec3<D>, p: &Quat<D>, delta: &[D; NV_BODY]) -> (Vec3<D>, Quat<D>) {
    (
        add(r, &[delta[0], delta[1], delta[2]]),
        turn(p, &[delta[3], delta[4], delta[5]]),
    )
}

/// World velocity ṙ + A (ω' × s) of the body point s.
pub fn point_velocity<D: Scalar>(
    pose: &Pose<D>,
    rdot: &Vec3<D>,
    omega: &Vec3<D>,
    s: &Vec3<D>,
) -> Vec3<D> {
    add(rdot, &mat_vec(&pose.a, &cross(omega, s)))
}
