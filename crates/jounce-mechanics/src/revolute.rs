//! Revolute joint: two body-fixed points coincide (two equations).
//!
//! Φ = r_a + A(θ_a) s_a − r_b − A(θ_b) s_b = 0.
//! Joint coordinate (for drivers and rotational springs): φ = θ_b − θ_a.

use crate::kinematics::{point, Scalar};

/// Φ (2 rows) of a revolute joint between point `sa` on the body at pose
/// `xa` and point `sb` on the body at pose `xb`.
#[inline]
pub fn revolute<D: Scalar>(xa: &[D], sa: [f64; 2], xb: &[D], sb: [f64; 2], out: &mut [D]) {
    let pa = point(xa, sa);
    let pb = point(xb, sb);
    out[0] = pa[0] - pb[0];
    out[1] = pa[1] - pb[1];
}

/// Joint coordinate of a revolute joint: the relative angle φ = θ_b − θ_a.
#[inline]
pub fn revolute_angle<D: Scalar>(xa: &[D], xb: &[D]) -> D {
    xb[2] - xa[2]
}
