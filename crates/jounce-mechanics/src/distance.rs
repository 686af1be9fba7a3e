//! Distance joint: constant distance L between two points (one equation).
//!
//! Φ = |P_b − P_a|² − L² = 0.
//!
//! The squared form is chosen because it stays differentiable when the
//! points coincide (the form |d| − L has an undefined gradient at d = 0)
//! and its γ is a polynomial in v. Its row scale is 2L times that of the
//! length form, which matters only for tolerances on Φ (in m²).

use crate::kinematics::{c, dot, point, sub, Scalar};

/// Φ (1 row) of a distance joint of length `length`.
#[inline]
pub fn distance<D: Scalar>(
    xa: &[D],
    sa: [f64; 2],
    xb: &[D],
    sb: [f64; 2],
    length: f64,
    out: &mut [D],
) {
    let d = sub(point(xb, sb), point(xa, sa));
    out[0] = dot(d, d) - c::<D>(length * length);
}
