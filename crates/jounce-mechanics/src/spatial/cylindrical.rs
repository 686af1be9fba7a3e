//! Cylindrical joint: body b slides along and turns about an axis of body
//! a, four equations (Nikravesh 1988, §7.2 "cylindrical joint"; Haug
//! 1989, eq. 9.4.25): the axes parallel and the point of b on a's axis,
//!
//! Φ = [(A_a f_a)·(A_b h_b);  (A_a g_a)·(A_b h_b);  (A_a f_a)·d;  (A_a g_a)·d] = 0,
//! d = r_b + A_b s_b − r_a − A_a s_a,
//!
//! f_a, g_a two body-a vectors perpendicular to the axis h_a.
//!
//! Owns: the residual (the prismatic joint adds one row to it).

use super::body::Pose;
use super::quaternion::{dot, lift, sub};
use crate::kinematics::Scalar;

/// Φ (4 rows) of a cylindrical joint; `f_a`, `g_a` ⊥ the axis on body a,
/// `h_b` the axis on body b.
pub fn residual<D: Scalar>(
    pa: &Pose<D>,
    pb: &Pose<D>,
    sa: &[f64; 3],
    sb: &[f64; 3],
    f_a: &[f64; 3],
    g_a: &[f64; 3],
    h_b: &[f64; 3],
    out: &mut [D],
) {
    let (f, g) = (pa.vector(&lift(f_a)), pa.vector(&lift(g_a)));
    let h = pb.vector(&lift(h_b));
    let d = sub(&pb.point(&lift(sb)), &pa.point(&lift(sa)));
    out[0] = dot(&f, &h);
    out[1] = dot(&g, &h);
    out[2] = dot(&f, &d);
    out[3] = dot(&g, &d);
}
