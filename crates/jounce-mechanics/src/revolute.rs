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

/// Φ, Φ_q, Φ' and γ of a revolute joint in closed form, for the hot path
/// (the dual-number evaluation of [`revolute`] gives the same values).
///
/// With u_a = A(θ_a) s_a, u_b = A(θ_b) s_b and u⊥ = (−u_y, u_x):
///
/// ```text
/// Φ   = r_a + u_a − r_b − u_b
/// Φ_q = [ I  u_a⊥ | −I  −u_b⊥ ]          (2 × 6: body a, body b)
/// Φ'  = ṙ_a + θ̇_a u_a⊥ − ṙ_b − θ̇_b u_b⊥
/// γ   = θ̇_a² u_a − θ̇_b² u_b              (Φ_q q'' = γ; Φ_t = 0)
/// ```
///
/// (Nikravesh, *Computer-Aided Analysis of Mechanical Systems*, 1988,
/// §4.4 and Table 4.2; Haug 1989, §3.3.) `x`, `v`: the local poses and
/// velocities of both bodies (zeros for ground).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RevoluteKinematics {
    /// Φ (2).
    pub phi: [f64; 2],
    /// Φ_q (2 × 6).
    pub jac: [[f64; 6]; 2],
    /// Φ' (2).
    pub phi_dot: [f64; 2],
    /// γ (2).
    pub gamma: [f64; 2],
}

/// [`RevoluteKinematics`] at local poses `x` and velocities `v`.
#[inline]
#[must_use]
pub fn revolute_kinematics(
    x: &[f64; 6],
    v: &[f64; 6],
    sa: [f64; 2],
    sb: [f64; 2],
) -> RevoluteKinematics {
    revolute_kinematics_sc(x, v, sa, sb, x[2].sin_cos(), x[5].sin_cos())
}

/// [`revolute_kinematics`] given (sin θ_a, cos θ_a) `sc_a` and
/// (sin θ_b, cos θ_b) `sc_b` (computed once per body when several joints
/// share it).
#[inline]
#[must_use]
pub fn revolute_kinematics_sc(
    x: &[f64; 6],
    v: &[f64; 6],
    sa: [f64; 2],
    sb: [f64; 2],
    sc_a: (f64, f64),
    sc_b: (f64, f64),
) -> RevoluteKinematics {
    let (sn_a, cs_a) = sc_a;
    let (sn_b, cs_b) = sc_b;
    let ua = [cs_a * sa[0] - sn_a * sa[1], sn_a * sa[0] + cs_a * sa[1]];
    let ub = [cs_b * sb[0] - sn_b * sb[1], sn_b * sb[0] + cs_b * sb[1]];
    let (wa, wb) = (v[2], v[5]);
    RevoluteKinematics {
        phi: [x[0] + ua[0] - x[3] - ub[0], x[1] + ua[1] - x[4] - ub[1]],
        jac: [
            [1.0, 0.0, -ua[1], -1.0, 0.0, ub[1]],
            [0.0, 1.0, ua[0], 0.0, -1.0, -ub[0]],
        ],
        phi_dot: [
            v[0] - wa * ua[1] - v[3] + wb * ub[1],
            v[1] + wa * ua[0] - v[4] - wb * ub[0],
        ],
        gamma: [
            wa * wa * ua[0] - wb * wb * ub[0],
            wa * wa * ua[1] - wb * wb * ub[1],
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_dual::{Dual2_64, DualSVec64};

    /// The closed form against dual numbers through [`revolute`]: Φ_q by
    /// vector duals, Φ' and γ = −d²Φ/ds² along q + v s by second-order
    /// duals.
    #[test]
    fn closed_form_matches_dual_numbers() {
        let x = [0.3, -0.2, 0.7, 1.1, 0.4, -1.3];
        let v = [0.5, -1.0, 2.0, -0.3, 0.8, -1.5];
        let (sa, sb) = ([0.4, -0.1], [-0.25, 0.3]);
        let k = revolute_kinematics(&x, &v, sa, sb);
        let xd: [DualSVec64<6>; 6] =
            std::array::from_fn(|i| DualSVec64::from_re(x[i]).derivative(i));
        let mut out = [DualSVec64::<6>::from_re(0.0); 2];
        revolute(&xd[..3], sa, &xd[3..], sb, &mut out);
        let x2: [Dual2_64; 6] = std::array::from_fn(|i| Dual2_64::new(x[i], v[i], 0.0));
        let mut o2 = [Dual2_64::from_re(0.0); 2];
        revolute(&x2[..3], sa, &x2[3..], sb, &mut o2);
        for r in 0..2 {
            assert!((out[r].re - k.phi[r]).abs() < 1e-15);
            let g = out[r].eps.0.expect("gradient");
            for c in 0..6 {
                assert!((g[c] - k.jac[r][c]).abs() < 1e-15, "Φ_q[{r}][{c}]");
            }
            assert!((o2[r].v1 - k.phi_dot[r]).abs() < 1e-14, "Φ'");
            assert!((-o2[r].v2 - k.gamma[r]).abs() < 1e-14, "γ");
        }
    }
}
