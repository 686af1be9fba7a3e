//! Friction elements whose tangential force is solved for with the
//! accelerations: stick–slip friction of a contact (normal force from the
//! contact's penalty law) and friction along a translational joint
//! (normal force = the joint's reaction normal to the guide, a multiplier).
//!
//! Each element is its sliding velocity v_t(x_a, v_a, x_b, v_b), written
//! generically so that dual numbers give its row J_f = ∂v_t/∂v (v_t is
//! linear in v) and γ_f = −(∂v_t/∂q) q' exactly. The friction force F_t
//! on body b along the tangent enters the equations of motion as J_fᵀ F_t
//! (virtual power F_t v_t).
//!
//! Owns: the kinematics of sliding. Must not: decide stick or slip (the
//! formulation does, from the multipliers).

use jounce_model::Friction;
use num_dual::Dual64;

use crate::contact::{contact_frame, contact_state, sliding_velocity, ContactParams};
use crate::kinematics::{dot, point, point_velocity, rotate, sub, Scalar};

/// Where a friction element acts.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum FrictionSite {
    /// A contact (its parameters; the normal force is the penalty law's).
    Contact(ContactParams),
    /// A translational joint: points on a and b, the unit axis in a's
    /// frame, and the Φ row whose multiplier is the normal reaction.
    Joint {
        sa: [f64; 2],
        sb: [f64; 2],
        axis: [f64; 2],
        normal_row: usize,
    },
}

/// A friction element of the system.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct FrictionElement {
    /// Element name (the contact's or the joint's).
    pub name: String,
    /// Bodies a and b (None = ground).
    pub bodies: [Option<usize>; 2],
    /// Where it acts.
    pub site: FrictionSite,
    /// Coefficient and law.
    pub friction: Friction,
}

/// Slide rate s' of a translational joint, s = (P_b − P_a)·u(θ_a) with
/// u = A(θ_a) e: s' = (Ṗ_b − Ṗ_a)·u + (P_b − P_a)·θ_a' Ω u.
#[inline]
pub fn slide_rate<D: Scalar>(
    xa: &[D],
    va: &[D],
    xb: &[D],
    vb: &[D],
    sa: [f64; 2],
    sb: [f64; 2],
    axis: [f64; 2],
) -> D {
    let d = sub(point(xb, sb), point(xa, sa));
    let dd = sub(point_velocity(xb, vb, sb), point_velocity(xa, va, sa));
    let u = rotate(xa[2], axis);
    let u_dot = [-u[1] * va[2], u[0] * va[2]];
    dot(dd, u) + dot(d, u_dot)
}

impl FrictionElement {
    /// v_t at local poses `x` and velocities `w` (len 6: a then b).
    #[inline]
    pub fn sliding_velocity<D: Scalar>(&self, x: &[D], w: &[D]) -> D {
        let (xa, xb, va, vb) = (&x[0..3], &x[3..6], &w[0..3], &w[3..6]);
        match &self.site {
            FrictionSite::Contact(p) => {
                let (_, n, at) = contact_frame(p, xa, xb);
                sliding_velocity(xa, va, xb, vb, n, at)
            }
            FrictionSite::Joint { sa, sb, axis, .. } => slide_rate(xa, va, xb, vb, *sa, *sb, *axis),
        }
    }

    /// (v_t, local row J_f (6), γ_f) at local poses `x`, velocities `w`.
    pub fn row(&self, x: &[f64; 6], w: &[f64; 6]) -> (f64, [f64; 6], f64) {
        let vt = self.sliding_velocity(x, w);
        // v_t is linear in the velocities: J_f e_k = v_t(x, e_k)
        let jf = std::array::from_fn(|k| {
            let mut e = [0.0; 6];
            e[k] = 1.0;
            self.sliding_velocity(x, &e)
        });
        // (∂v_t/∂q) q' as the derivative along q' (q' = v here)
        let xd: [Dual64; 6] = std::array::from_fn(|k| Dual64::new(x[k], w[k]));
        let wd: [Dual64; 6] = std::array::from_fn(|k| Dual64::from_re(w[k]));
        let gamma = -self.sliding_velocity(&xd, &wd).eps;
        (vt, jf, gamma)
    }

    /// Normal force of a contact site at (x, w); `None` for a joint (a
    /// multiplier).
    pub fn known_normal(&self, x: &[f64; 6], w: &[f64; 6]) -> Option<f64> {
        match &self.site {
            FrictionSite::Contact(p) => {
                Some(contact_state(p, &x[0..3], &w[0..3], &x[3..6], &w[3..6]).1)
            }
            FrictionSite::Joint { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jounce_model::FrictionLaw;

    fn joint() -> FrictionElement {
        FrictionElement {
            name: "guide".into(),
            bodies: [Some(0), Some(1)],
            site: FrictionSite::Joint {
                sa: [0.1, -0.2],
                sb: [0.3, 0.05],
                axis: [0.6, 0.8],
                normal_row: 0,
            },
            friction: Friction {
                coefficient: 0.2,
                law: FrictionLaw::StickSlip {
                    static_coefficient: 0.3,
                },
            },
        }
    }

    /// The slide rate is the time derivative of the slide coordinate, and
    /// γ_f = −(d/dt J_f) v: both checked by central differences along a
    /// motion q(t) = q0 + t v (so q'' = 0 and v_t' = −γ_f).
    #[test]
    fn slide_rate_and_gamma_are_derivatives_along_the_motion() {
        let f = joint();
        let x = [0.2, -0.1, 0.3, 1.1, 0.4, 0.7];
        let w = [0.5, -0.3, 0.9, -0.2, 0.6, -1.3];
        let s = |t: f64| {
            let q: [f64; 6] = std::array::from_fn(|k| x[k] + t * w[k]);
            let d = sub(point(&q[3..6], [0.3, 0.05]), point(&q[0..3], [0.1, -0.2]));
            dot(d, rotate(q[2], [0.6, 0.8]))
        };
        let h = 1e-5;
        let (vt, jf, gamma) = f.row(&x, &w);
        assert!((vt - (s(h) - s(-h)) / (2.0 * h)).abs() < 1e-9);
        let jv: f64 = jf.iter().zip(&w).map(|(a, b)| a * b).sum();
        assert!((jv - vt).abs() < 1e-14);
        let vt_at = |t: f64| {
            let q: [f64; 6] = std::array::from_fn(|k| x[k] + t * w[k]);
            f.sliding_velocity(&q, &w)
        };
        let dvt = (vt_at(h) - vt_at(-h)) / (2.0 * h);
        assert!((dvt + gamma).abs() < 1e-8, "{dvt} vs {}", -gamma);
    }
}
