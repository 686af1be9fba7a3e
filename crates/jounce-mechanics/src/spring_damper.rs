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
//! tension-only (at ℓ = ℓ0, when ℓ' heads into that side: [`is_active`]).
//! The actuator is always active.
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

/// Whether a one-sided element is active at deflection `delta` = ℓ − ℓ0
/// (or φ − φ0) moving at `rate` = δ'.
///
/// At δ = 0 it is active when it moves into its active side (δ' < 0 in
/// compression, δ' > 0 in tension): the damper's c δ' switches on there,
/// and a run restarts at the located switch with δ within rounding of
/// zero on either side; the element then acts as on the side it is
/// entering, as a contact does ([`crate::contact::penalty_force`]).
#[inline]
pub fn is_active(one_sided: Option<OneSided>, delta: f64, rate: f64) -> bool {
    match one_sided {
        None => true,
        Some(OneSided::Compression) => delta < 0.0 || (delta == 0.0 && rate < 0.0),
        Some(OneSided::Tension) => delta > 0.0 || (delta == 0.0 && rate > 0.0),
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
    if is_active(p.one_sided, delta.re(), dlen.re()) {
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
    // (zero at δ = 0 on either side)
    if is_active(p.one_sided, delta, 0.0) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A compression-only spring-damper of free length 1 m along x, body b
    /// at x = ℓ moving at ẋ: the tension on body b's x.
    fn push_on_b(len: f64, rate: f64, one_sided: OneSided) -> f64 {
        let p = SpringDamperParams {
            sa: [0.0, 0.0],
            sb: [0.0, 0.0],
            stiffness: 1e5,
            damping: 20.0,
            free_length: 1.0,
            one_sided: Some(one_sided),
        };
        let (mut qa, mut qb) = ([0.0f64; 3], [0.0f64; 3]);
        spring_damper(
            &p,
            &[0.0; 3],
            &[0.0; 3],
            &[len, 0.0, 0.0],
            &[rate, 0.0, 0.0],
            0.0,
            &mut qa,
            &mut qb,
        );
        qb[0]
    }

    /// At ℓ = ℓ0 a one-sided element acts as on the side it moves into:
    /// the damper's c ℓ' (26 N at 1.3 m/s) entering, as 1e-16 m inside;
    /// nothing leaving, as 1e-16 m outside.
    #[test]
    fn at_the_free_length_a_one_sided_element_acts_as_on_the_side_it_enters() {
        // compression: entering at ℓ' < 0 (pushes b out, +x)
        let entering = push_on_b(1.0, -1.3, OneSided::Compression);
        let inside = push_on_b(1.0 - 1e-16, -1.3, OneSided::Compression);
        assert!((entering - 26.0).abs() < 1e-9, "{entering}");
        assert!((entering - inside).abs() < 1e-9, "{entering} {inside}");
        assert_eq!(push_on_b(1.0, 1.3, OneSided::Compression), 0.0);
        assert_eq!(push_on_b(1.0 + 1e-15, 1.3, OneSided::Compression), 0.0);
        // tension: entering at ℓ' > 0 (pulls b back, −x)
        let entering = push_on_b(1.0, 1.3, OneSided::Tension);
        let inside = push_on_b(1.0 + 2e-16, 1.3, OneSided::Tension);
        assert!((entering + 26.0).abs() < 1e-9, "{entering}");
        assert!((entering - inside).abs() < 1e-9, "{entering} {inside}");
        assert_eq!(push_on_b(1.0, -1.3, OneSided::Tension), 0.0);
    }
}
