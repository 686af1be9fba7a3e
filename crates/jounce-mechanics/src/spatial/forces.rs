//! Generalized forces of spatial bodies and force elements, in the
//! velocity coordinates v = (ṙ, ω') of each body (ω' in the body frame).
//!
//! By virtual power, a world force F at the body point s contributes
//! (F, s × Aᵀ F) and a torque τ (world) contributes (0, Aᵀ τ) (Haug 1989,
//! eq. 11.1.21; Nikravesh 1988, §6.6). Each body carries its weight m g
//! and the gyroscopic moment −ω' × J'ω' of the Newton–Euler equations in
//! body axes, J'ω̇' + ω' × J'ω' = n' (Haug eq. 11.1.27).
//!
//! Owns: the force laws and their potential energies, generic over the
//! scalar (their Jacobians are dual-number derivatives, in `system.rs`).

use jounce_model::SpatialFrame;

use super::body::{point_velocity, Pose};
use super::quaternion::{cross, dot, lift, mat_t_vec, mat_vec, scale, sub, Vec3};
use crate::kinematics::Scalar;

/// Adds (F, s × Aᵀ F) of the world force F at body point s to `out`
/// (the body's 6 entries).
pub fn add_point_load<D: Scalar>(pose: &Pose<D>, s: &Vec3<D>, f_world: &Vec3<D>, out: &mut [D]) {
    let f_body = mat_t_vec(&pose.a, f_world);
    let m = cross(s, &f_body);
    for k in 0..3 {
        out[k] += f_world[k];
        out[3 + k] += m[k];
    }
}

/// Weight and gyroscopic moment of a body: (m g, −ω' × J'ω').
pub fn body_forces<D: Scalar>(
    mass: f64,
    inertia: &[[f64; 3]; 3],
    gravity: &[f64; 3],
    omega: &Vec3<D>,
    out: &mut [D],
) {
    let jw = mat_vec(&inertia.map(|r| lift::<D>(&r)), omega);
    let gyro = cross(omega, &jw);
    for k in 0..3 {
        out[k] += D::from(mass * gravity[k]);
        out[3 + k] -= gyro[k];
    }
}

/// A constant force at a body point, in the world or the body frame.
pub fn point_force<D: Scalar>(
    pose: &Pose<D>,
    s: &[f64; 3],
    force: &[f64; 3],
    frame: SpatialFrame,
    out: &mut [D],
) {
    let f = match frame {
        SpatialFrame::World => lift(force),
        SpatialFrame::Body => mat_vec(&pose.a, &lift(force)),
    };
    add_point_load(pose, &lift(s), &f, out);
}

/// A constant torque, in the world or the body frame: (0, Aᵀτ) or (0, τ').
pub fn torque<D: Scalar>(pose: &Pose<D>, torque: &[f64; 3], frame: SpatialFrame, out: &mut [D]) {
    let t = match frame {
        SpatialFrame::World => mat_t_vec(&pose.a, &lift(torque)),
        SpatialFrame::Body => lift(torque),
    };
    for k in 0..3 {
        out[3 + k] += t[k];
    }
}

/// A body's end of a spring-damper: its pose, velocity (ṙ, ω') and point.
pub struct End<'a, D> {
    /// Pose of the body (ground: the world frame).
    pub pose: &'a Pose<D>,
    /// ṙ (world) and ω' (body frame); zero for ground.
    pub velocity: [D; 6],
    /// The body point \[m\].
    pub point: [f64; 3],
}

/// Tension T = k (ℓ − ℓ0) + c ℓ' of a translational spring-damper and the
/// unit vector u from a to b; the force on b is −T u, on a +T u.
pub fn spring_damper_tension<D: Scalar>(
    a: &End<'_, D>,
    b: &End<'_, D>,
    stiffness: f64,
    damping: f64,
    free_length: f64,
) -> (D, Vec3<D>) {
    let (sa, sb) = (lift(&a.point), lift(&b.point));
    let d = sub(&b.pose.point(&sb), &a.pose.point(&sa));
    let len = dot(&d, &d).sqrt();
    let u = scale(len.recip(), &d);
    let va = point_velocity(
        a.pose,
        &[a.velocity[0], a.velocity[1], a.velocity[2]],
        &[a.velocity[3], a.velocity[4], a.velocity[5]],
        &sa,
    );
    let vb = point_velocity(
        b.pose,
        &[b.velocity[0], b.velocity[1], b.velocity[2]],
        &[b.velocity[3], b.velocity[4], b.velocity[5]],
        &sb,
    );
    let rate = dot(&u, &sub(&vb, &va));
    ((len - free_length) * stiffness + rate * damping, u)
}

/// Potential ½ k (ℓ − ℓ0)² of a spring between two world points.
pub fn spring_energy(pa: &[f64; 3], pb: &[f64; 3], stiffness: f64, free_length: f64) -> f64 {
    let d = sub(pb, pa);
    let stretch = dot(&d, &d).sqrt() - free_length;
    0.5 * stiffness * stretch * stretch
}
