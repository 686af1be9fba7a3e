//! Rotational spring-damper-actuator on a revolute joint's relative angle
//! φ = θ_b − θ_a:
//!
//! τ = σ (−k (φ − φ0) − c φ') + τ_act(t)
//!
//! acts on body b, and −τ on body a. σ ∈ {0, 1} is the one-sided activity
//! (always 1 when two-sided; compression-only: φ < φ0; tension-only:
//! φ > φ0). The actuator is always active.
//!
//! Potential energy V = σ ½ k (φ − φ0)².

use jounce_model::OneSided;

use crate::kinematics::{c, Scalar};
use crate::spring_damper::is_active;

/// Constant parameters of a rotational spring-damper.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RotationalSpringParams {
    /// Stiffness k \[N·m/rad\].
    pub stiffness: f64,
    /// Damping c \[N·m·s/rad\].
    pub damping: f64,
    /// Zero angle φ0 \[rad\].
    pub zero_angle: f64,
    /// One-sided activity.
    pub one_sided: Option<OneSided>,
}

/// Adds the generalized forces of the rotational spring-damper (actuator
/// torque `tau_act`) to `qa` and `qb` (3 each).
#[inline]
pub fn rotational_spring<D: Scalar>(
    p: &RotationalSpringParams,
    xa: &[D],
    va: &[D],
    xb: &[D],
    vb: &[D],
    tau_act: f64,
    qa: &mut [D],
    qb: &mut [D],
) {
    let delta = xb[2] - xa[2] - c::<D>(p.zero_angle);
    let rate = vb[2] - va[2];
    let mut tau = c::<D>(tau_act);
    if is_active(p.one_sided, delta.re(), rate.re()) {
        tau -= delta * p.stiffness + rate * p.damping;
    }
    qb[2] += tau;
    qa[2] -= tau;
}

/// Potential energy σ ½ k (φ − φ0)².
pub fn rotational_spring_potential(p: &RotationalSpringParams, xa: &[f64], xb: &[f64]) -> f64 {
    let delta = xb[2] - xa[2] - p.zero_angle;
    // (zero at δ = 0 on either side)
    if is_active(p.one_sided, delta, 0.0) {
        0.5 * p.stiffness * delta * delta
    } else {
        0.0
    }
}

/// Switching function of a one-sided spring: its deflection φ − φ0, which
/// changes sign where the spring engages or releases.
pub fn rotational_spring_deflection(p: &RotationalSpringParams, xa: &[f64], xb: &[f64]) -> f64 {
    xb[2] - xa[2] - p.zero_angle
}

/// Torque −σ (k (φ − φ0) + c φ') of the spring and damper on body b
/// (without the actuator), for output.
pub fn rotational_spring_torque(
    p: &RotationalSpringParams,
    xa: &[f64],
    va: &[f64],
    xb: &[f64],
    vb: &[f64],
) -> f64 {
    let (mut qa, mut qb) = ([0.0; 3], [0.0; 3]);
    rotational_spring(p, xa, va, xb, vb, 0.0, &mut qa, &mut qb);
    qb[2]
}
