//! Prismatic (translational) joint: a cylindrical joint with the rotation
//! about the axis locked, five equations (Nikravesh 1988, §7.2
//! "translational joint"; Haug 1989, eq. 9.4.28):
//!
//! Φ = [cylindrical (4);  (A_a f_a)·(A_b g_b)] = 0,
//!
//! g_b the body-b image of g_a at the start (A_a g_a = A_b g_b then), so
//! the last row is zero and regular there.
//!
//! Owns: the residual.

use super::body::Pose;
use super::quaternion::{dot, lift};
use crate::kinematics::Scalar;

/// Φ (5 rows) of a prismatic joint; `f_a`, `g_a` ⊥ the axis on body a,
/// `h_b` the axis and `g_b` the start's g_a on body b.
pub fn residual<D: Scalar>(
    pa: &Pose<D>,
    pb: &Pose<D>,
    sa: &[f64; 3],
    sb: &[f64; 3],
    f_a: &[f64; 3],
    g_a: &[f64; 3],
    h_b: &[f64; 3],
    g_b: &[f64; 3],
    out: &mut [D],
) {
    super::cylindrical::residual(pa, pb, sa, sb, f_a, g_a, h_b, out);
    out[4] = dot(&pa.vector(&lift(f_a)), &pb.vector(&lift(g_b)));
}
