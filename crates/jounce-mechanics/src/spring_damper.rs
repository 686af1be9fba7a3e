//! Translational spring-damper-actuator between two points.
//!
//! With d = P_b − P_a, ℓ = |d|, e = d/ℓ and ℓ' = e·(Ṗ_b − Ṗ_a), the tension
//!
//! F = σ (k (ℓ − ℓ0) + c ℓ') + f_act(t)
//!
//! pulls the points together: force +F e on point a and −F e on point b,
//! whose generalized forces are (F, (A s) × F) on each body. σ ∈ {0, 1} is
//! the one-sided activity of the spring and damper: σ = 1 always when
//! two-sided, only when ℓ < ℓ0 for compression-only, only when ℓ > ℓ0 for
//! tension-only. The actuator is always active.
//!
//! Potential energy V = σ ½ k (ℓ − ℓ0)², continuous across the switch.
//!
//! # Restrictions
//! When the points (nearly) coincide, ℓ < [`MIN_LENGTH`], the line of action
//! is undefined: the element then exerts no force (and its Jacobian is zero).

use jounce_model::OneSided;

use crate::kinematics::{c, cross, dot, point, point_velocity, rotate, sub, Scalar};

/// Below this length \[m\] a spring-damper's direction is undefined and it exerts no force.
pub const MIN_LENGTH: f64 = 1e-12;

/// Constant parameters of a spring-damper.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpringDamperParams {
    /// Point on body a (body frame).
    pub sa: [f64; 2],
    /// Point on body b (body frame).
    pub sb: [f64; 2],
    /// Stiffness k \[N/m\].
    pub stiffness: f64,
    /// Damping c \[N·s/m\].
    pub damping: f64,
    /// Free length ℓ0 \[m\].
    pub free_length: f64,
    /// One-sided activity.
    pub one_sided: Option<OneSided>,
}

/// Whether a one-sided element is active at deflection `delta` = ℓ − ℓ0 (or φ − φ0).
#[inline]
pub fn is_active(one_sided: Option<OneSided>, delta: f64) -> bool {
    match one_sided {
        None => true,
        Some(OneSided::Compression) => delta < 0.0,
        Some(OneSided::Tension) => delta > 0.0,
    }
}

/// Adds the generalized forces of the spring-damper-actuator (actuator
/// force `f_act`) to `qa` and `qb` (3 each: fx, fy, moment about the CoM).
#[inline]
pub fn spring_damper<D: Scalar>(
    p: &SpringDamperParams,
    xa: &[D],
    va: &[D],
    xb: &[D],
    vb: &[D],
    f_act: f64,
    qa: &mut [D],
    qb: &mut [D],
) {
    let d = sub(point(xb, p.sb), point(xa, p.sa));
    let len = dot(d, d).sqrt();
    if len.re() < MIN_LENGTH {
        return;
    }
    let e = [d[0] / len, d[1] / len];
    let dlen = dot(
        e,
        sub(point_velocity(xb, vb, p.sb), point_velocity(xa, va, p.sa)),
    );
    let delta = len - c::<D>(p.free_length);
    let mut tension = c::<D>(f_act);
    if is_active(p.one_sided, delta.re()) {
        tension += delta * p.stiffness + dlen * p.damping;
    }
    let fa = [e[0] * tension, e[1] * tension];
    let arm_a = rotate(xa[2], p.sa);
    let arm_b = rotate(xb[2], p.sb);
    qa[0] += fa[0];
    qa[1] += fa[1];
    qa[2] += cross(arm_a, fa);
    qb[0] -= fa[0];
    qb[1] -= fa[1];
    qb[2] -= cross(arm_b, fa);
}

/// Potential energy σ ½ k (ℓ − ℓ0)² of the spring.
pub fn spring_damper_potential(p: &SpringDamperParams, xa: &[f64], xb: &[f64]) -> f64 {
    let d = sub(point(xb, p.sb), point(xa, p.sa));
    let delta = dot(d, d).sqrt() - p.free_length;
    if is_active(p.one_sided, delta) {
        0.5 * p.stiffness * delta * delta
    } else {
        0.0
    }
}

/// Switching function of a one-sided spring-damper: its deflection
/// ℓ − ℓ0, which changes sign where it engages or releases.
pub fn spring_damper_deflection(p: &SpringDamperParams, xa: &[f64], xb: &[f64]) -> f64 {
    let d = sub(point(xb, p.sb), point(xa, p.sa));
    dot(d, d).sqrt() - p.free_length
}

/// Tension σ (k (ℓ − ℓ0) + c ℓ') of the spring and damper (without the
/// actuator), for output.
pub fn spring_damper_tension(
    p: &SpringDamperParams,
    xa: &[f64],
    va: &[f64],
    xb: &[f64],
    vb: &[f64],
) -> f64 {
    let (mut qa, mut qb) = ([0.0; 3], [0.0; 3]);
    spring_damper(p, xa, va, xb, vb, 0.0, &mut qa, &mut qb);
    // the force on point a is +F e with e from a to b
    let d = sub(point(xb, p.sb), point(xa, p.sa));
    let len = dot(d, d).sqrt();
    if len < MIN_LENGTH {
        return 0.0;
    }
    (qa[0] * d[0] + qa[1] * d[1]) / len
}
