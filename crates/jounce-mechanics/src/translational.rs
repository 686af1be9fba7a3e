//! Translational (prismatic) joint (two equations).
//!
//! With d = P_b − P_a and the guide direction u = A(θ_a) e (e the unit axis
//! in body a's frame), n = Ω u its normal (Ω the 90° rotation):
//!
//! Φ₁ = n · d = 0             (point b stays on the guide line),
//! Φ₂ = θ_b − θ_a − Δθ₀ = 0    (relative rotation locked at its initial value Δθ₀).
//!
//! Joint coordinate: s = d · u (the slide displacement along the guide).

use crate::kinematics::{c, dot, point, rotate, sub, Scalar};

/// Φ (2 rows) of a translational joint.
#[inline]
pub fn translational<D: Scalar>(
    xa: &[D],
    sa: [f64; 2],
    xb: &[D],
    sb: [f64; 2],
    axis: [f64; 2],
    dtheta0: f64,
    out: &mut [D],
) {
    let d = sub(point(xb, sb), point(xa, sa));
    let n = rotate(xa[2], [-axis[1], axis[0]]);
    out[0] = dot(n, d);
    out[1] = xb[2] - xa[2] - c::<D>(dtheta0);
}

/// Joint coordinate s = (P_b − P_a) · (A(θ_a) e) of a translational joint.
#[inline]
pub fn translational_coordinate<D: Scalar>(
    xa: &[D],
    sa: [f64; 2],
    xb: &[D],
    sb: [f64; 2],
    axis: [f64; 2],
) -> D {
    let d = sub(point(xb, sb), point(xa, sa));
    dot(rotate(xa[2], axis), d)
}
