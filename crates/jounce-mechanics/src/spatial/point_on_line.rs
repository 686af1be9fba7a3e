//! Point-on-line joint: a point of body b stays on a line of body a, two
//! equations (the "offset" rows of the cylindrical joint without its axis
//! rows; Haug 1989, §9.4, the dot-2 constraints; ADAMS/Solver's
//! INPLANE/INLINE joint primitive "inline"):
//!
//! Φ = [(A_a f_a)·d;  (A_a g_a)·d] = 0,   d = r_b + A_b s_b − r_a − A_a s_a,
//!
//! f_a, g_a two body-a vectors perpendicular to the line direction h_a.
//! Body b slides along the line and turns freely (4 degrees of freedom).
//!
//! Owns: the residual.

use super::body::Pose;
use super::quaternion::{dot, lift, sub};
use crate::kinematics::Scalar;

/// Φ (2 rows) of a point-on-line joint; `f_a`, `g_a` ⊥ the line on body a.
pub fn residual<D: Scalar>(
    pa: &Pose<D>,
    pb: &Pose<D>,
    sa: &[f64; 3],
    sb: &[f64; 3],
    f_a: &[f64; 3],
    g_a: &[f64; 3],
    out: &mut [D],
) {
    let d = sub(&pb.point(&lift(sb)), &pa.point(&lift(sa)));
    out[0] = dot(&pa.vector(&lift(f_a)), &d);
    out[1] = dot(&pa.vector(&lift(g_a)), &d);
}
