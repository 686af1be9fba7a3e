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

/// Adds the world force F acting at the world point X: the body point
/// s = Aᵀ(X − r) of [`add_point_load`] (a contact's load, whose point
/// moves over the body).
pub fn add_world_point_load<D: Scalar>(
    pose: &Pose<D>,
    at_world: &Vec3<D>,
    f_world: &Vec3<D>,
    out: &mut [D],
) {
    let s = mat_t_vec(&pose.a, &sub(at_world, &pose.r));
    add_point_load(pose, &s, f_world, out);
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

/// Adds the world torque τ to a body's 6 entries: (0, Aᵀτ).
pub fn add_torque<D: Scalar>(pose: &Pose<D>, tau_world: &Vec3<D>, out: &mut [D]) {
    let t = mat_t_vec(&pose.a, tau_world);
    for k in 0..3 {
        out[3 + k] += t[k];
    }
}

/// World angular velocity A ω' of an end.
fn omega_world<D: Scalar>(e: &End<'_, D>) -> Vec3<D> {
    mat_vec(&e.pose.a, &[e.velocity[3], e.velocity[4], e.velocity[5]])
}

/// World velocity of an end's point.
fn velocity_of_point<D: Scalar>(e: &End<'_, D>, s: &Vec3<D>) -> Vec3<D> {
    point_velocity(
        e.pose,
        &[e.velocity[0], e.velocity[1], e.velocity[2]],
        &[e.velocity[3], e.velocity[4], e.velocity[5]],
        s,
    )
}

/// The joint angle θ ∈ (−π, π] of a revolute joint from its body-a frame
/// (f_a, g_a = h_a × f_a) and f_a's image f_b⁰ on body b at the start:
/// θ = atan2((A_a g_a)·(A_b f_b⁰), (A_a f_a)·(A_b f_b⁰)), right-handed
/// about A_a h_a (as the revolute driver, [`super::driver`]).
pub fn joint_angle<D: Scalar>(
    pa: &Pose<D>,
    pb: &Pose<D>,
    f_a: &[f64; 3],
    g_a: &[f64; 3],
    f_b: &[f64; 3],
) -> D {
    let fb = pb.vector(&lift(f_b));
    dot(&pa.vector(&lift(g_a)), &fb).atan2(dot(&pa.vector(&lift(f_a)), &fb))
}

/// Rotational spring-damper on a revolute joint: the world torque on body
/// b, τ h with τ = −k (θ − θ0) − c θ' + τ_act(t), h = A_a h_a and
/// θ' = h·(ω_b − ω_a) (world angular velocities); body a gets −τ h.
/// Conservative with V = ½ k (θ − θ0)² when c = 0 while the joint holds
/// (then A_b f_b⁰ ⊥ h and ∂θ/∂ψ = h: the torque is −∂V/∂ψ).
#[allow(clippy::too_many_arguments)]
pub fn rotational_spring_torque<D: Scalar>(
    a: &End<'_, D>,
    b: &End<'_, D>,
    frame: [&[f64; 3]; 4],
    stiffness: f64,
    damping: f64,
    zero_angle: f64,
    actuator: f64,
) -> Vec3<D> {
    let [f_a, g_a, h_a, f_b] = frame;
    let theta = joint_angle(a.pose, b.pose, f_a, g_a, f_b);
    let h = a.pose.vector(&lift(h_a));
    let rate = dot(&h, &sub(&omega_world(b), &omega_world(a)));
    let tau = (theta - zero_angle) * (-stiffness) - rate * damping + actuator;
    scale(tau, &h)
}

/// The small-angle rotation vector of the relative rotation
/// R = A_aᵀ A_b R0ᵀ (R0 = A_a0ᵀ A_b0, the start's; R = I there), in body
/// a's axes: θ = ½ (R₃₂ − R₂₃, R₁₃ − R₃₁, R₂₁ − R₁₂) = sin φ · n for a turn
/// φ about the unit axis n, so θ = φ n + O(φ³) (the skew part of R;
/// ADAMS/Solver BUSHING takes small rotations about the marker axes the
/// same way, its documentation warning that the rotational law is only
/// valid for small angles).
pub fn small_rotation<D: Scalar>(pa: &Pose<D>, pb: &Pose<D>, r0: &[[f64; 3]; 3]) -> Vec3<D> {
    // R = A_aᵀ A_b R0ᵀ
    let r: [[D; 3]; 3] = std::array::from_fn(|i| {
        std::array::from_fn(|j| {
            let mut x = D::zero();
            for k in 0..3 {
                for l in 0..3 {
                    x += pa.a[k][i] * pb.a[k][l] * r0[j][l];
                }
            }
            x
        })
    });
    [
        (r[2][1] - r[1][2]) * 0.5,
        (r[0][2] - r[2][0]) * 0.5,
        (r[1][0] - r[0][1]) * 0.5,
    ]
}

/// Parameters of a bushing (diagonals in body a's axes).
#[derive(Clone, Copy, Debug)]
pub struct Bushing {
    /// Translational stiffness K \[N/m\].
    pub stiffness: [f64; 3],
    /// Translational damping C \[N·s/m\].
    pub damping: [f64; 3],
    /// Rotational stiffness K_r [N·m/rad].
    pub rotational_stiffness: [f64; 3],
    /// Rotational damping C_r [N·m·s/rad].
    pub rotational_damping: [f64; 3],
    /// The offset d at the start, body a's axes \[m\].
    pub d0: [f64; 3],
    /// The relative rotation A_aᵀ A_b at the start.
    pub r0: [[f64; 3]; 3],
}

/// The bushing's offset d = A_aᵀ (P_b − P_a) − d₀ and rotation θ (body
/// a's axes).
pub fn bushing_deflection<D: Scalar>(
    a: &End<'_, D>,
    b: &End<'_, D>,
    p: &Bushing,
) -> (Vec3<D>, Vec3<D>) {
    let d = sub(
        &b.pose.point(&lift(&b.point)),
        &a.pose.point(&lift(&a.point)),
    );
    let d = sub(&mat_t_vec(&a.pose.a, &d), &lift(&p.d0));
    (d, small_rotation(a.pose, b.pose, &p.r0))
}

/// The bushing's world force F on body b at its point and world torque T
/// on body b (body a: −F at the same world point, −T):
/// F = A_a (−K d − C ḋ), T = A_a (−K_r θ − C_r ω), ḋ = A_aᵀ (v_Pb − v_Pa)
/// and ω = A_aᵀ (ω_b − ω_a) the relative velocities in body a's axes
/// (ADAMS/Solver BUSHING: a linear 6-component force between two markers,
/// diagonal stiffness and damping, in the first marker's axes).
pub fn bushing_load<D: Scalar>(a: &End<'_, D>, b: &End<'_, D>, p: &Bushing) -> (Vec3<D>, Vec3<D>) {
    let (d, theta) = bushing_deflection(a, b, p);
    let (sa, sb) = (lift(&a.point), lift(&b.point));
    let ddot = mat_t_vec(
        &a.pose.a,
        &sub(&velocity_of_point(b, &sb), &velocity_of_point(a, &sa)),
    );
    let w = mat_t_vec(&a.pose.a, &sub(&omega_world(b), &omega_world(a)));
    let f: Vec3<D> = std::array::from_fn(|k| -(d[k] * p.stiffness[k] + ddot[k] * p.damping[k]));
    let t: Vec3<D> = std::array::from_fn(|k| {
        -(theta[k] * p.rotational_stiffness[k] + w[k] * p.rotational_damping[k])
    });
    (mat_vec(&a.pose.a, &f), mat_vec(&a.pose.a, &t))
}
