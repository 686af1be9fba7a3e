//! Universal (Hooke) joint: a spherical joint plus one axis on each body
//! kept perpendicular, four equations (Nikravesh 1988, §7.2 "universal
//! joint"; Haug 1989, eq. 9.4.22):
//!
//! Φ = [r_a + A_a s_a − r_b − A_b s_b;  (A_a h_a)·(A_b h_b)] = 0.
//!
//! Owns: the residual.

use super::body::Pose;
use super::quaternion::{dot, lift};
use crate::kinematics::Scalar;

/// Φ (4 rows) of a universal joint with cross axes h_a, h_b.
pub fn residual<D: Scalar>(
    pa: &Pose<D>,
    pb: &Pose<D>,
    sa: &[f64; 3],
    sb: &[f64; 3],
    h_a: &[f64; 3],
    h_b: &[f64; 3],
    out: &mut [D],
) {
    super::spherical::residual(pa, pb, sa, sb, out);
    out[3] = dot(&pa.vector(&lift(h_a)), &pb.vector(&lift(h_b)));
}
