//! Fixed joint (weld): a spherical joint plus the relative orientation
//! locked, six equations (Nikravesh 1988, §7.2, the three dot-1
//! constraints of a locked orientation):
//!
//! Φ = [r_a + A_a s_a − r_b − A_b s_b;  (A_a e_1)·(A_b e'_2);  (A_a e_2)·(A_b e'_3);  (A_a e_3)·(A_b e'_1)] = 0,
//!
//! e_i, e'_i the world axes at the start in the frames of a and b (so
//! A_a e_i = A_b e'_i initially and the dot products of distinct axes
//! vanish; their Jacobian is regular there).
//!
//! Owns: the residual.

use super::body::Pose;
use super::quaternion::{dot, lift};
use crate::kinematics::Scalar;

/// Φ (6 rows) of a weld; `frame_a[i]`, `frame_b[i]` the start's world
/// axis i in each body's frame.
pub fn residual<D: Scalar>(
    pa: &Pose<D>,
    pb: &Pose<D>,
    sa: &[f64; 3],
    sb: &[f64; 3],
    frame_a: &[[f64; 3]; 3],
    frame_b: &[[f64; 3]; 3],
    out: &mut [D],
) {
    super::spherical::residual(pa, pb, sa, sb, out);
    for (row, (i, j)) in [(0, 1), (1, 2), (2, 0)].into_iter().enumerate() {
        out[3 + row] = dot(
            &pa.vector(&lift(&frame_a[i])),
            &pb.vector(&lift(&frame_b[j])),
        );
    }
}
