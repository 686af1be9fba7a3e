//! Revolute joint (hinge): a spherical joint plus the axis of body b kept
//! along the axis of body a, five equations (Nikravesh 1988, §7.2
//! "revolute joint", the dot-1 constraints; Haug 1989, eq. 9.4.18):
//!
//! Φ = [r_a + A_a s_a − r_b − A_b s_b;  (A_a f_a)·(A_b h_b);  (A_a g_a)·(A_b h_b)] = 0,
//!
//! f_a, g_a two body-a vectors perpendicular to the axis h_a.
//!
//! Owns: the residual and the choice of f_a, g_a.

use super::body::Pose;
use super::quaternion::{cross, dot, lift};
use crate::kinematics::Scalar;

/// Two unit vectors perpendicular to the unit vector h and to each other.
pub fn perpendiculars(h: &[f64; 3]) -> ([f64; 3], [f64; 3]) {
    // the coordinate axis least aligned with h, made perpendicular
    let i = (0..3)
        .min_by(|&i, &j| h[i].abs().total_cmp(&h[j].abs()))
        .unwrap_or(0);
    let mut e = [0.0; 3];
    e[i] = 1.0;
    let f = cross(h, &e);
    let n = dot(&f, &f).sqrt();
    let f = f.map(|x| x / n);
    (f, cross(h, &f))
}

/// Φ (5 rows) of a revolute joint; `f_a`, `g_a` ⊥ the axis on body a,
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
    super::spherical::residual(pa, pb, sa, sb, out);
    let hb = pb.vector(&lift(h_b));
    out[3] = dot(&pa.vector(&lift(f_a)), &hb);
    out[4] = dot(&pa.vector(&lift(g_a)), &hb);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perpendiculars_form_a_right_handed_frame_with_the_axis() {
        for h in [[0.0, 0.0, 1.0], [0.6, 0.8, 0.0], [0.48, -0.6, 0.64]] {
            let (f, g) = perpendiculars(&h);
            assert!(dot(&f, &h).abs() < 1e-15 && dot(&g, &h).abs() < 1e-15);
            assert!(dot(&f, &g).abs() < 1e-15);
            let fxg = cross(&f, &g);
            for k in 0..3 {
                assert!((fxg[k] - h[k]).abs() < 1e-15);
            }
        }
    }
}
