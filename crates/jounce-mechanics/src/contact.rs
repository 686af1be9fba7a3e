//! Unilateral planar contact: gap, normal force law and impulse direction,
//! written once for any scalar.
//!
//! Body a carries the line (or circle a), body b the circle (or point):
//!
//! - circle-line: n = A_a n_a, g = n·(C_b − P_a) − r_b, contact point
//!   C_b − r_b n;
//! - circle-circle: d = C_b − C_a, n = d/|d|, g = |d| − r_a − r_b, contact
//!   point C_a + r_a n;
//! - point-line: n = A_a n_a, g = n·(P_b − P_a), contact point P_b.
//!
//! With the penetration δ = −g and its rate δ' = −g' = −n·(Ṗ_b − Ṗ_a) at
//! the contact point, the normal force (none for δ < 0, and never pulling:
//! F = max(F, 0); at δ = 0 the limit on the side the contact moves to) is
//!
//! - linear: F = k δ + c δ',
//! - Hertz: F = k δ^e + c δ' (Hertz 1882; e = 3/2 for spheres),
//! - Hunt–Crossley: F = k δ^e (1 + c δ') (Hunt & Crossley 1975, J. Appl.
//!   Mech. 42:440–445; the damping vanishes with the penetration, so the
//!   force is continuous at the contact's start),
//!
//! acting as +F n on body b and −F n on body a at the contact point. The
//! potential energy of the elastic part is k δ²/2 (linear) or
//! k δ^{e+1}/(e+1); it is zero and continuous at g = 0.
//!
//! With friction (a penalty law only), the regularised Coulomb force
//! F_t = −μ F tanh(v_t / v_ε) τ acts on body b (and its reaction on a) at
//! the contact point, with the tangent τ = (−n_y, n_x) and the sliding
//! velocity v_t = τ·(Ṗ_b − Ṗ_a) of the material points there (Coulomb's
//! law with the sign function regularised by tanh, as in Andersson,
//! Söderberg & Björklund 2007 and Adams' STEP-regularised friction).
//!
//! The impact law (Newton's restitution) exerts no force: the run applies
//! an impulse at the event g = 0 ([`crate::PlanarSystem`]'s
//! `apply_impact`).

use jounce_model::{ContactGeometry, ContactLaw, Friction};

use crate::kinematics::{c, cross, dot, point, rotate, sub, tanh, Scalar};

/// Below this centre distance \[m\] two circles have no defined normal
/// (concentric): the pair exerts no force and its gap is taken along x.
pub const MIN_DISTANCE: f64 = 1e-12;

/// Constant parameters of a contact pair.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactParams {
    /// Line point or circle centre on body a (body frame).
    pub sa: [f64; 2],
    /// Circle centre or point on body b (body frame).
    pub sb: [f64; 2],
    /// Shape.
    pub geometry: ContactGeometry,
    /// Force law.
    pub law: ContactLaw,
    /// Stiffness k.
    pub stiffness: f64,
    /// Damping c.
    pub damping: f64,
    /// Regularised Coulomb friction (μ, v_ε), if any.
    pub friction: Option<Friction>,
}

/// Gap g, unit normal n (from a to b) and global contact point of the
/// pair at body poses `xa`, `xb`.
#[inline]
pub fn contact_frame<D: Scalar>(p: &ContactParams, xa: &[D], xb: &[D]) -> (D, [D; 2], [D; 2]) {
    match p.geometry {
        ContactGeometry::CircleLine { radius, normal } => {
            let n = rotate(xa[2], normal);
            let cb = point(xb, p.sb);
            let g = dot(n, sub(cb, point(xa, p.sa))) - c::<D>(radius);
            let at = [cb[0] - n[0] * radius, cb[1] - n[1] * radius];
            (g, n, at)
        }
        ContactGeometry::PointLine { normal } => {
            let n = rotate(xa[2], normal);
            let pb = point(xb, p.sb);
            (dot(n, sub(pb, point(xa, p.sa))), n, pb)
        }
        ContactGeometry::CircleCircle { radius_a, radius_b } => {
            let ca = point(xa, p.sa);
            let d = sub(point(xb, p.sb), ca);
            let len = dot(d, d).sqrt();
            let n = if len.re() < MIN_DISTANCE {
                [c::<D>(1.0), c::<D>(0.0)]
            } else {
                [d[0] / len, d[1] / len]
            };
            let g = len - c::<D>(radius_a + radius_b);
            let at = [ca[0] + n[0] * radius_a, ca[1] + n[1] * radius_a];
            (g, n, at)
        }
    }
}

/// Normal force F ≥ 0 of the law at penetration `delta` and rate `rate`
/// (zero for δ < 0 and for the impact law; at δ = 0 the limit on the side
/// the contact moves to, [`penalty_force`]).
#[inline]
pub fn normal_force<D: Scalar>(p: &ContactParams, delta: D, rate: D) -> D {
    penalty_force(p.law, p.stiffness, p.damping, delta, rate)
}

/// Normal force F ≥ 0 of `law` with stiffness k and damping c at
/// penetration `delta` and rate `rate` (zero for δ < 0 and for the impact
/// law); shared by planar and spatial contacts.
///
/// At δ = 0 the force is its limit on the side the contact is moving to:
/// c δ' entering (δ' > 0; the linear and Hertz laws' damping jumps on at
/// the contact's start), zero leaving (c δ' < 0, cut by F ≥ 0). A run
/// restarts at the located start of a contact with its gap within
/// rounding of zero, on either side of it (−1.5e-16 in one run, exactly 0
/// in another); with the force off at δ = 0 the two restarts would see
/// accelerations c δ'/m apart (26 m/s² for a 1 kg ball entering at
/// 1.3 m/s with c = 20 N·s/m) and their next steps would part by h² of it.
#[inline]
pub fn penalty_force<D: Scalar>(
    law: ContactLaw,
    stiffness: f64,
    damping: f64,
    delta: D,
    rate: D,
) -> D {
    if delta.re() < 0.0 {
        return c(0.0);
    }
    // δ^e, zero with a zero derivative at δ = 0 (where e δ^{e−1} is
    // infinite for e < 1)
    let power = |e: f64| {
        if delta.re() > 0.0 {
            delta.powf(e)
        } else {
            c(0.0)
        }
    };
    let f = match law {
        ContactLaw::Linear => delta * stiffness + rate * damping,
        ContactLaw::Hertz { exponent } => power(exponent) * stiffness + rate * damping,
        ContactLaw::HuntCrossley { exponent } => {
            power(exponent) * stiffness * (rate * damping + 1.0)
        }
        ContactLaw::Impact { .. } => return c(0.0),
    };
    if f.re() > 0.0 {
        f
    } else {
        c(0.0)
    }
}

/// Potential energy of the elastic part of `law` at penetration `d`
/// (zero for d ≤ 0): k d²/2 (linear) or k d^{e+1}/(e+1).
pub fn penalty_potential(law: ContactLaw, stiffness: f64, d: f64) -> f64 {
    if d <= 0.0 {
        return 0.0;
    }
    match law {
        ContactLaw::Linear => 0.5 * stiffness * d * d,
        ContactLaw::Hertz { exponent } | ContactLaw::HuntCrossley { exponent } => {
            stiffness * d.powf(exponent + 1.0) / (exponent + 1.0)
        }
        ContactLaw::Impact { .. } => 0.0,
    }
}

/// Relative velocity Ṗ_b − Ṗ_a of the material points of b and a at the
/// global point `at`.
#[inline]
fn relative_velocity<D: Scalar>(xa: &[D], va: &[D], xb: &[D], vb: &[D], at: [D; 2]) -> [D; 2] {
    let vel = |x: &[D], v: &[D]| {
        let r = sub(at, [x[0], x[1]]);
        [v[0] - v[2] * r[1], v[1] + v[2] * r[0]]
    };
    sub(vel(xb, vb), vel(xa, va))
}

/// Relative normal velocity g' = n·(Ṗ_b − Ṗ_a) at the contact point (the
/// material points of a and b there).
#[inline]
pub fn gap_rate<D: Scalar>(xa: &[D], va: &[D], xb: &[D], vb: &[D], n: [D; 2], at: [D; 2]) -> D {
    dot(n, relative_velocity(xa, va, xb, vb, at))
}

/// Sliding velocity v_t = τ·(Ṗ_b − Ṗ_a), τ = (−n_y, n_x), at the contact
/// point.
#[inline]
pub fn sliding_velocity<D: Scalar>(
    xa: &[D],
    va: &[D],
    xb: &[D],
    vb: &[D],
    n: [D; 2],
    at: [D; 2],
) -> D {
    let w = relative_velocity(xa, va, xb, vb, at);
    w[1] * n[0] - w[0] * n[1]
}

/// Tangential force component on body b along τ = (−n_y, n_x) of the
/// regularised Coulomb law, −μ F_n tanh(v_t / v_ε), for normal force
/// `normal` and sliding velocity `slide` (zero without friction, and for
/// the stick–slip law, whose force the formulation solves for with the
/// accelerations: [`crate::SystemQueries::friction_row`]).
#[inline]
pub fn friction_force<D: Scalar>(p: &ContactParams, normal: D, slide: D) -> D {
    match p
        .friction
        .and_then(|fr| Some((fr.coefficient, fr.regularisation()?)))
    {
        Some((mu, v_eps)) if mu > 0.0 => -(normal * mu) * tanh(slide / v_eps),
        _ => c(0.0),
    }
}

/// Adds the generalized contact forces to `qa`, `qb` (fx, fy, moment about
/// the centre of mass, 3 each).
#[inline]
pub fn contact_force<D: Scalar>(
    p: &ContactParams,
    xa: &[D],
    va: &[D],
    xb: &[D],
    vb: &[D],
    qa: &mut [D],
    qb: &mut [D],
) {
    if matches!(p.law, ContactLaw::Impact { .. }) {
        return;
    }
    let (g, n, at) = contact_frame(p, xa, xb);
    // at g = 0 the force of the side the contact moves to ([`penalty_force`])
    if g.re() > 0.0 {
        return;
    }
    let rate = gap_rate(xa, va, xb, vb, n, at);
    let f = normal_force(p, -g, -rate);
    let mut fb = [n[0] * f, n[1] * f];
    if p.friction.is_some_and(|fr| fr.regularisation().is_some()) && f.re() > 0.0 {
        let ft = friction_force(p, f, sliding_velocity(xa, va, xb, vb, n, at));
        fb[0] -= n[1] * ft;
        fb[1] += n[0] * ft;
    }
    let arm_a = sub(at, [xa[0], xa[1]]);
    let arm_b = sub(at, [xb[0], xb[1]]);
    qb[0] += fb[0];
    qb[1] += fb[1];
    qb[2] += cross(arm_b, fb);
    qa[0] -= fb[0];
    qa[1] -= fb[1];
    qa[2] -= cross(arm_a, fb);
}

/// Potential energy of the elastic part at local poses `xa`, `xb`.
pub fn contact_potential(p: &ContactParams, xa: &[f64], xb: &[f64]) -> f64 {
    let (g, _, _) = contact_frame(p, xa, xb);
    penalty_potential(p.law, p.stiffness, -g)
}

/// Gap and the normal force magnitude (for output) at local poses and
/// velocities.
pub fn contact_state(
    p: &ContactParams,
    xa: &[f64],
    va: &[f64],
    xb: &[f64],
    vb: &[f64],
) -> (f64, f64) {
    let (g, n, at) = contact_frame(p, xa, xb);
    if g > 0.0 || matches!(p.law, ContactLaw::Impact { .. }) {
        return (g, 0.0);
    }
    let rate = gap_rate(xa, va, xb, vb, n, at);
    (g, normal_force(p, -g, -rate))
}

/// The gap's gradient with respect to the local velocities (fx, fy,
/// moment directions of a then b): w = (−n, −(P − r_a) × n, n, (P − r_b) × n),
/// so that g' = w·v; the direction of a normal impulse.
pub fn gap_gradient(p: &ContactParams, xa: &[f64], xb: &[f64]) -> [f64; 6] {
    let (_, n, at) = contact_frame(p, xa, xb);
    let arm_a = sub(at, [xa[0], xa[1]]);
    let arm_b = sub(at, [xb[0], xb[1]]);
    [-n[0], -n[1], -cross(arm_a, n), n[0], n[1], cross(arm_b, n)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ball_on_ground(law: ContactLaw) -> ContactParams {
        ContactParams {
            sa: [0.0, 0.0],
            sb: [0.0, 0.0],
            geometry: ContactGeometry::CircleLine {
                radius: 0.5,
                normal: [0.0, 1.0],
            },
            law,
            stiffness: 1e5,
            damping: 10.0,
            friction: None,
        }
    }

    /// At the contact's start (g = 0) the force is its limit on the side
    /// the ball moves to: the damping's c δ' entering (as at g = −1e-16),
    /// nothing leaving (as at g = +1e-16), so a restart located on either
    /// side of g = 0 within rounding sees the same force.
    /// The force's derivatives at δ = 0 (the Jacobians' dual numbers) are
    /// finite for every law, also for a Hertz exponent below 1, whose
    /// elastic term e δ^{e−1} k is unbounded there.
    #[test]
    fn at_zero_gap_the_force_has_finite_derivatives() {
        use num_dual::Dual64;
        for law in [
            ContactLaw::Linear,
            ContactLaw::Hertz { exponent: 0.5 },
            ContactLaw::Hertz { exponent: 1.5 },
            ContactLaw::HuntCrossley { exponent: 0.5 },
        ] {
            let delta = Dual64::new(0.0, 1.0);
            let rate = Dual64::new(1.3, 0.0);
            let f = penalty_force(law, 1e5, 10.0, delta, rate);
            assert!(f.re.is_finite() && f.eps.is_finite(), "{law:?}: {f:?}");
            let f = penalty_force(law, 1e5, 10.0, Dual64::new(0.0, 0.0), Dual64::new(1.3, 1.0));
            assert!(f.re.is_finite() && f.eps.is_finite(), "{law:?}: {f:?}");
        }
    }

    #[test]
    fn at_zero_gap_the_force_is_that_of_the_side_the_ball_moves_to() {
        let ground = [0.0f64; 3];
        for law in [
            ContactLaw::Linear,
            ContactLaw::Hertz { exponent: 1.5 },
            ContactLaw::Hertz { exponent: 0.5 },
            ContactLaw::HuntCrossley { exponent: 1.5 },
        ] {
            let p = ball_on_ground(law);
            let force = |y: f64, vy: f64| {
                let (mut qa, mut qb) = ([0.0f64; 3], [0.0f64; 3]);
                contact_force(
                    &p,
                    &ground,
                    &[0.0; 3],
                    &[0.3, y, 0.0],
                    &[0.0, vy, 0.0],
                    &mut qa,
                    &mut qb,
                );
                let (_, f) = contact_state(&p, &ground, &[0.0; 3], &[0.3, y, 0.0], &[0.0, vy, 0.0]);
                assert_eq!(qb[1], f, "{law:?}: the force and its output");
                f
            };
            // falling in at 1.3 m/s: c δ' = 13 N for the linear and Hertz laws
            let entering = force(0.5, -1.3);
            let just_in = force(0.5 - 1e-16, -1.3);
            // they differ by the elastic part k δ^e at δ ≈ 1.1e-16 (1e-3 N
            // for e = 1/2)
            let e = match law {
                ContactLaw::Hertz { exponent } | ContactLaw::HuntCrossley { exponent } => exponent,
                _ => 1.0,
            };
            let elastic = 1e5 * 1.2e-16f64.powf(e);
            assert!(
                (entering - just_in).abs() <= elastic * (1.0 + 10.0 * 1.3) + 1e-9,
                "{law:?}: {entering} {just_in}"
            );
            if !matches!(law, ContactLaw::HuntCrossley { .. }) {
                assert!((entering - 13.0).abs() < 1e-9, "{law:?}: {entering}");
            }
            // lifting off at 1.3 m/s: no force, as just outside
            assert_eq!(force(0.5, 1.3), 0.0, "{law:?}");
            assert_eq!(force(0.5 + 1e-16, 1.3), 0.0, "{law:?}");
        }
    }

    #[test]
    fn gap_and_force_of_a_ball_on_the_ground() {
        let p = ball_on_ground(ContactLaw::Linear);
        let ground = [0.0f64; 3];
        let (g, n, at) = contact_frame(&p, &ground, &[0.3, 0.49, 0.7]);
        assert!((g + 0.01).abs() < 1e-15);
        assert_eq!(n, [0.0, 1.0]);
        assert!((at[0] - 0.3).abs() < 1e-15 && (at[1] + 0.01).abs() < 1e-15);
        let (mut qa, mut qb) = ([0.0f64; 3], [0.0f64; 3]);
        // falling at 2 m/s: δ' = 2, F = k δ + c δ' = 1000 + 20
        contact_force(
            &p,
            &ground,
            &[0.0; 3],
            &[0.3, 0.49, 0.7],
            &[0.0, -2.0, 0.0],
            &mut qa,
            &mut qb,
        );
        assert!((qb[1] - 1020.0).abs() < 1e-9, "{qb:?}");
        assert!(qb[0].abs() < 1e-12 && qb[2].abs() < 1e-9);
        // leaving fast: the damper would pull; the force is clamped at 0
        let (mut qa, mut qb) = ([0.0f64; 3], [0.0f64; 3]);
        contact_force(
            &p,
            &ground,
            &[0.0; 3],
            &[0.3, 0.49, 0.7],
            &[0.0, 200.0, 0.0],
            &mut qa,
            &mut qb,
        );
        assert_eq!(qb, [0.0; 3]);
    }

    /// A rolling-and-sliding ball: the sliding velocity is that of the
    /// contact point (centre velocity + ω × arm), the friction force
    /// opposes it with μ F_n tanh(v_t/v_ε), and its moment about the centre
    /// is the arm times the force; a rolling ball (v_t = 0) feels none.
    #[test]
    fn friction_opposes_the_sliding_of_the_contact_point() {
        let mut p = ball_on_ground(ContactLaw::Linear);
        p.damping = 0.0;
        p.friction = Some(Friction {
            coefficient: 0.3,
            law: jounce_model::FrictionLaw::Regularised { velocity: 1e-3 },
        });
        let ground = [0.0f64; 3];
        let x = [0.0, 0.49, 0.0];
        // centre moving at +1 m/s and spinning at ω = 1 rad/s: the contact
        // point at the arm (0, −0.5) moves at v_x − ω·(−0.5) = 1.5 m/s in x;
        // with n = (0, 1) the tangent is τ = (−1, 0), so v_t = −1.5
        let v = [1.0, 0.0, 1.0];
        let (g, n, at) = contact_frame(&p, &ground, &x);
        let vt = sliding_velocity(&ground, &[0.0; 3], &x, &v, n, at);
        assert!((vt + 1.5).abs() < 1e-12, "{vt} (gap {g})");
        let (mut qa, mut qb) = ([0.0f64; 3], [0.0f64; 3]);
        contact_force(&p, &ground, &[0.0; 3], &x, &v, &mut qa, &mut qb);
        let fn_ = 1e5 * 0.01;
        // opposing the sliding (+x): −μ F_n tanh(1.5/v_ε) in x
        let fx = -0.3 * fn_ * (1.5f64 / 1e-3).tanh();
        assert!((qb[0] - fx).abs() < 1e-9, "{qb:?}");
        assert!((qb[1] - fn_).abs() < 1e-9, "{qb:?}");
        // moment about the centre of fx at the arm (0, −0.5): 0.5 fx
        assert!((qb[2] - 0.5 * fx).abs() < 1e-9, "{qb:?}");
        assert!((qa[0] + qb[0]).abs() < 1e-12 && (qa[1] + qb[1]).abs() < 1e-12);
        // rolling without sliding: v_x = −ω·0.5 … v_x + 0.5 ω = 0
        let (mut qa, mut qb) = ([0.0f64; 3], [0.0f64; 3]);
        contact_force(
            &p,
            &ground,
            &[0.0; 3],
            &x,
            &[0.5, 0.0, -1.0],
            &mut qa,
            &mut qb,
        );
        assert!(qb[0].abs() < 1e-12, "{qb:?}");
    }

    #[test]
    fn potential_is_the_integral_of_the_elastic_force() {
        for law in [
            ContactLaw::Linear,
            ContactLaw::Hertz { exponent: 1.5 },
            ContactLaw::Hertz { exponent: 0.5 },
            ContactLaw::HuntCrossley { exponent: 1.5 },
        ] {
            let mut p = ball_on_ground(law);
            p.damping = 0.0;
            let ground = [0.0f64; 3];
            let y = 0.47;
            let d = 1e-7;
            let dv = (contact_potential(&p, &ground, &[0.0, y - d, 0.0])
                - contact_potential(&p, &ground, &[0.0, y + d, 0.0]))
                / (2.0 * d);
            let (_, f) = contact_state(&p, &ground, &[0.0; 3], &[0.0, y, 0.0], &[0.0; 3]);
            assert!((dv - f).abs() < 1e-5 * f, "{law:?}: -dV/dy {dv} vs F {f}");
        }
    }

    #[test]
    fn two_circles_push_apart_along_the_centre_line() {
        let p = ContactParams {
            sa: [0.0, 0.0],
            sb: [0.0, 0.0],
            geometry: ContactGeometry::CircleCircle {
                radius_a: 0.5,
                radius_b: 0.5,
            },
            law: ContactLaw::Hertz { exponent: 1.5 },
            stiffness: 1e6,
            damping: 0.0,
            friction: None,
        };
        let xa = [0.0f64, 0.0, 0.3];
        let xb = [0.6, 0.8, -1.0]; // |d| = 1, touching
        let (g, _, _) = contact_frame(&p, &xa, &xb);
        assert!(g.abs() < 1e-15);
        let xb = [0.54, 0.72, -1.0]; // |d| = 0.9, δ = 0.1
        let (mut qa, mut qb) = ([0.0f64; 3], [0.0f64; 3]);
        contact_force(&p, &xa, &[0.0; 3], &xb, &[0.0; 3], &mut qa, &mut qb);
        let f = 1e6 * 0.1f64.powf(1.5);
        assert!((qb[0] - 0.6 * f).abs() < 1e-6 * f && (qb[1] - 0.8 * f).abs() < 1e-6 * f);
        assert!((qa[0] + qb[0]).abs() < 1e-9 && (qa[1] + qb[1]).abs() < 1e-9);
        // through both centres: no moment on either circle
        assert!(qa[2].abs() < 1e-6 && qb[2].abs() < 1e-6);
        let w = gap_gradient(&p, &xa, &xb);
        assert!((w[3] - 0.6).abs() < 1e-12 && (w[4] - 0.8).abs() < 1e-12);
    }
}
