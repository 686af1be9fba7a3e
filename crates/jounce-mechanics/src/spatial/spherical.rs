//! Spherical joint (ball): two body points coincide, three equations
//! (Nikravesh 1988, §7.2 "spherical joint"; Haug 1989, eq. 9.4.9):
//!
//! Φ = r_a + A_a s_a − r_b − A_b s_b = 0.
//!
//! Owns: the residual, generic over the scalar (Φ_q and γ are its
//! derivatives along the kinematic map, in `system.rs`).

use super::body::Pose;
use super::quaternion::{lift, sub};
use crate::kinematics::Scalar;

/// Φ (3 rows) of a spherical joint between points s_a, s_b.
pub fn residual<D: Scalar>(
    pa: &Pose<D>,
    pb: &Pose<D>,
    sa: &[f64; 3],
    sb: &[f64; 3],
    out: &mut [D],
) {
    let d = sub(&pa.point(&lift(sa)), &pb.point(&lift(sb)));
    out[..3].copy_from_slice(&d);
}
