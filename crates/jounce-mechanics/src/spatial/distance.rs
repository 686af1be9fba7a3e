//! Distance constraint: two body points at a constant distance L, one
//! equation (Nikravesh 1988, §7.2 "spherical–spherical joint"):
//!
//! Φ = d·d − L² = 0,  d = r_b + A_b s_b − r_a − A_a s_a.
//!
//! Owns: the residual.

use super::body::Pose;
use super::quaternion::{dot, lift, sub};
use crate::kinematics::Scalar;

/// Φ (1 row) of a distance constraint of length L.
pub fn residual<D: Scalar>(
    pa: &Pose<D>,
    pb: &Pose<D>,
    sa: &[f64; 3],
    sb: &[f64; 3],
    length: f64,
    out: &mut [D],
) {
    let d = sub(&pb.point(&lift(sb)), &pa.point(&lift(sa)));
    out[0] = dot(&d, &d) - length * length;
}
