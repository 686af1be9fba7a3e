//! Point force and torque.
//!
//! A force F at body-fixed point s (components given in the global frame,
//! or in the body frame and rotated, F = A(θ) F_body) has generalized force
//! (Fₓ, Fᵧ, (A(θ) s) × F): the force at the centre of mass plus its moment
//! about the centre of mass. A torque τ has generalized force (0, 0, τ).

use jounce_model::ForceFrame;

use crate::kinematics::{c, cross, rotate, rotate_d, Scalar};

/// Adds the generalized force of force `f` (components in `frame`) at
/// point `s` of the body at pose `x` to `q` (3 entries).
#[inline]
pub fn point_force<D: Scalar>(x: &[D], s: [f64; 2], f: [f64; 2], frame: ForceFrame, q: &mut [D]) {
    let fg = match frame {
        ForceFrame::Global => [c::<D>(f[0]), c::<D>(f[1])],
        ForceFrame::Body => rotate_d(x[2], [c::<D>(f[0]), c::<D>(f[1])]),
    };
    let arm = rotate(x[2], s);
    q[0] += fg[0];
    q[1] += fg[1];
    q[2] += cross(arm, fg);
}

/// Adds the generalized force of torque `tau` to `q` (3 entries).
#[inline]
pub fn torque<D: Scalar>(tau: f64, q: &mut [D]) {
    q[2] += c::<D>(tau);
}
