//! Unilateral spatial contact: gap, normal, contact point, penalty force
//! with regularised Coulomb friction, and the gap's gradient (the
//! direction of an impact's impulse), written once for any scalar, the
//! spatial counterpart of [`crate::contact`].
//!
//! Body a carries the plane (or sphere a), body b the sphere; points and
//! the normal are given in the bodies' frames, A_a, A_b are the rotation
//! matrices and r_a, r_b the centres of mass:
//!
//! - sphere-plane: n = A_a n_a, C_b = r_b + A_b s_b,
//!   g = n·(C_b − P_a) − r_b (P_a = r_a + A_a s_a a point of the plane),
//!   contact point X = C_b − r_b n;
//! - sphere-sphere: d = C_b − C_a, n = d/|d|, g = |d| − r_a − r_b, contact
//!   point X = C_a + r_a n (n = e_x, no force, when the centres coincide:
//!   [`crate::contact::MIN_DISTANCE`]).
//!
//! With the relative velocity w = Ẋ_b − Ẋ_a of the material points of b
//! and a at X (Ẋ = ṙ + A (ω' × Aᵀ(X − r)), ω' in the body frame), the
//! penetration δ = −g and its rate δ' = −n·w, the normal force F_n ≥ 0 is
//! the planar contact's law ([`crate::contact::penalty_force`]: linear
//! k δ + c δ', Hertz k δ^e + c δ' (Hertz 1882), Hunt–Crossley
//! k δ^e (1 + c δ') (Hunt & Crossley 1975, J. Appl. Mech. 42:440–445)).
//!
//! Friction (penalty laws only) is Coulomb's law with the sign function
//! regularised by tanh along the 3-D sliding velocity
//! v_t = w − (n·w) n:
//!
//! ```text
//! F_t = −μ F_n tanh(|v_t|/v_ε) v_t/|v_t| = −μ F_n φ(|v_t|/v_ε) v_t/v_ε,
//! φ(x) = tanh(x)/x
//! ```
//!
//! (the isotropic form of the planar law, Andersson, Söderberg &
//! Björklund 2007; Pfeiffer & Glocker 1996, §4.3, for the spatial
//! Coulomb cone). φ is even and smooth in x with φ(0) = 1, so F_t is
//! well-defined and differentiable at v_t = 0: φ is taken from the series
//! 1 − x²/3 + 2x⁴/15 for x² < 10⁻⁶ (error below 10⁻¹⁹), from x² = |v_t|²/v_ε²
//! so that no square root of zero is differentiated.
//!
//! The force F = F_n n + F_t acts on body b and −F on body a at the
//! contact point X; its generalized forces (F, s × AᵀF) with
//! s = Aᵀ(X − r) per body are those of any world point load
//! ([`super::forces::add_world_point_load`]). The potential energy of the
//! elastic part is k δ²/2 or k δ^{e+1}/(e+1)
//! ([`crate::contact::penalty_potential`]), zero and continuous at g = 0.
//!
//! The impact law exerts no force: at the event g = 0 the run applies the
//! impulse along w_g = ∂g/∂q (velocity space, g' = w_gᵀ v), here the
//! dual-number derivative of g along the retraction q ⊕ ε e_j, with
//! Newton's restitution g'⁺ = −e g'⁻
//! ([`crate::SystemQueries::apply_impact`]; Pfeiffer & Glocker 1996,
//! ch. 7; Haug 1989, §11.7 for the impulse–momentum equations).

use jounce_model::{ContactLaw, Friction, SpatialContactGeometry};

use super::body::{point_velocity, Pose};
use super::forces::End;
use super::quaternion::{dot, lift, mat_t_vec, scale, sub, Vec3};
use crate::contact::{penalty_force, penalty_potential, MIN_DISTANCE};
use crate::kinematics::{tanh, Scalar};

/// Constant parameters of a spatial contact pair.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpatialContactParams {
    /// Plane point or sphere centre on body a (body frame).
    pub sa: [f64; 3],
    /// Sphere centre on body b (body frame).
    pub sb: [f64; 3],
    /// Shape.
    pub geometry: SpatialContactGeometry,
    /// Force law.
    pub law: ContactLaw,
    /// Stiffness k.
    pub stiffness: f64,
    /// Damping c.
    pub damping: f64,
    /// Regularised Coulomb friction (μ, v_ε), if any.
    pub friction: Option<Friction>,
}

/// Gap g, unit normal n (from a to b) and world contact point X at the
/// poses `pa`, `pb`.
pub fn contact_frame<D: Scalar>(
    p: &SpatialContactParams,
    pa: &Pose<D>,
    pb: &Pose<D>,
) -> (D, Vec3<D>, Vec3<D>) {
    match p.geometry {
        SpatialContactGeometry::SpherePlane { radius, normal } => {
            let n = pa.vector(&lift(&normal));
            let cb = pb.point(&lift(&p.sb));
            let g = dot(&n, &sub(&cb, &pa.point(&lift(&p.sa)))) - radius;
            let at = sub(&cb, &scale(D::from(radius), &n));
            (g, n, at)
        }
        SpatialContactGeometry::SphereSphere { radius_a, radius_b } => {
            let ca = pa.point(&lift(&p.sa));
            let d = sub(&pb.point(&lift(&p.sb)), &ca);
            let len = dot(&d, &d).sqrt();
            let n = if len.re() < MIN_DISTANCE {
                lift(&[1.0, 0.0, 0.0])
            } else {
                scale(len.recip(), &d)
            };
            let g = len - (radius_a + radius_b);
            let at: Vec3<D> = std::array::from_fn(|k| ca[k] + n[k] * radius_a);
            (g, n, at)
        }
    }
}

/// World velocity of the material point of end `e` at the world point X.
fn material_velocity<D: Scalar>(e: &End<'_, D>, at: &Vec3<D>) -> Vec3<D> {
    let s = mat_t_vec(&e.pose.a, &sub(at, &e.pose.r));
    let v = e.velocity;
    point_velocity(e.pose, &[v[0], v[1], v[2]], &[v[3], v[4], v[5]], &s)
}

/// Relative velocity w = Ẋ_b − Ẋ_a of the material points at X.
pub fn relative_velocity<D: Scalar>(a: &End<'_, D>, b: &End<'_, D>, at: &Vec3<D>) -> Vec3<D> {
    sub(&material_velocity(b, at), &material_velocity(a, at))
}

/// φ(x) = tanh(x)/x from x² (smooth at 0; see the module documentation).
fn tanh_over_x<D: Scalar>(x2: D) -> D {
    if x2.re() < 1e-6 {
        D::one() - x2 * (1.0 / 3.0) + x2 * x2 * (2.0 / 15.0)
    } else {
        let x = x2.sqrt();
        tanh(x) / x
    }
}

/// The regularised Coulomb force on body b, −μ F_n tanh(|v_t|/v_ε)
/// v_t/|v_t|, for normal force `normal` and sliding velocity `slide`
/// (zero without friction or with a stick–slip law, which the model
/// refuses on spatial contacts).
pub fn friction_force<D: Scalar>(p: &SpatialContactParams, normal: D, slide: &Vec3<D>) -> Vec3<D> {
    match p
        .friction
        .and_then(|fr| Some((fr.coefficient, fr.regularisation()?)))
    {
        Some((mu, v_eps)) if mu > 0.0 => {
            let x2 = dot(slide, slide) * (1.0 / (v_eps * v_eps));
            let k = -(normal * mu) * tanh_over_x(x2) * (1.0 / v_eps);
            scale(k, slide)
        }
        _ => [D::zero(); 3],
    }
}

/// The world force F on body b (−F on body a) and the contact point X, or
/// `None` when the pair is apart, the law is the impact law or F = 0.
pub fn contact_load<D: Scalar>(
    p: &SpatialContactParams,
    a: &End<'_, D>,
    b: &End<'_, D>,
) -> Option<(Vec3<D>, Vec3<D>)> {
    if matches!(p.law, ContactLaw::Impact { .. }) {
        return None;
    }
    let (g, n, at) = contact_frame(p, a.pose, b.pose);
    // at g = 0 the force of the side the contact moves to ([`penalty_force`])
    if g.re() > 0.0 {
        return None;
    }
    let w = relative_velocity(a, b, &at);
    let rate = dot(&n, &w);
    let f = penalty_force(p.law, p.stiffness, p.damping, -g, -rate);
    if f.re() <= 0.0 {
        return None;
    }
    let mut force = scale(f, &n);
    if p.friction.is_some() {
        let slide = sub(&w, &scale(rate, &n));
        let ft = friction_force(p, f, &slide);
        force = std::array::from_fn(|k| force[k] + ft[k]);
    }
    Some((force, at))
}

/// Gap and normal force magnitude (for output).
pub fn contact_state(p: &SpatialContactParams, a: &End<'_, f64>, b: &End<'_, f64>) -> (f64, f64) {
    let (g, n, at) = contact_frame(p, a.pose, b.pose);
    if g > 0.0 || matches!(p.law, ContactLaw::Impact { .. }) {
        return (g, 0.0);
    }
    let rate = dot(&n, &relative_velocity(a, b, &at));
    (g, penalty_force(p.law, p.stiffness, p.damping, -g, -rate))
}

/// Potential energy of the elastic part at the poses `pa`, `pb`.
pub fn contact_potential(p: &SpatialContactParams, pa: &Pose<f64>, pb: &Pose<f64>) -> f64 {
    let (g, _, _) = contact_frame(p, pa, pb);
    penalty_potential(p.law, p.stiffness, -g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spatial::body::retract;
    use jounce_model::FrictionLaw;
    use num_dual::Dual64;

    fn ball_on_ground(law: ContactLaw) -> SpatialContactParams {
        SpatialContactParams {
            sa: [0.0; 3],
            sb: [0.0; 3],
            geometry: SpatialContactGeometry::SpherePlane {
                radius: 0.5,
                normal: [0.0, 0.0, 1.0],
            },
            law,
            stiffness: 1e5,
            damping: 10.0,
            friction: None,
        }
    }

    fn end<'a>(pose: &'a Pose<f64>, velocity: [f64; 6]) -> End<'a, f64> {
        End {
            pose,
            velocity,
            point: [0.0; 3],
        }
    }

    /// A tilted ball 1 cm deep, falling at 2 m/s: g = −0.01, X under the
    /// centre, F = k δ + c δ' = 1000 + 20 along +z; the damper never pulls.
    #[test]
    fn gap_point_and_normal_force_of_a_ball_on_the_ground() {
        let p = ball_on_ground(ContactLaw::Linear);
        let ground = Pose::ground();
        let s = 0.3f64.sin();
        let ball = Pose::new([0.3, -0.2, 0.49], &[0.3f64.cos(), s, 0.0, 0.0]);
        let (g, n, at) = contact_frame(&p, &ground, &ball);
        assert!((g + 0.01).abs() < 1e-15 && n == [0.0, 0.0, 1.0]);
        assert!((at[0] - 0.3).abs() < 1e-15 && (at[2] + 0.01).abs() < 1e-15);
        let (f, _) = contact_load(
            &p,
            &end(&ground, [0.0; 6]),
            &end(&ball, [0.0, 0.0, -2.0, 0.0, 0.0, 0.0]),
        )
        .unwrap();
        assert!((f[2] - 1020.0).abs() < 1e-9 && f[0] == 0.0 && f[1] == 0.0);
        let leaving = [0.0, 0.0, 200.0, 0.0, 0.0, 0.0];
        assert!(contact_load(&p, &end(&ground, [0.0; 6]), &end(&ball, leaving)).is_none());
    }

    /// The sliding velocity is that of the contact point, v + ω × (X − r)
    /// (here ω about y in the body frame of an untilted ball), and the
    /// friction force opposes it with μ F_n tanh(|v_t|/v_ε) in 3-D; a
    /// rolling ball feels none, and at v_t = 0 the force and its
    /// derivative are finite (the slope μ F_n/v_ε).
    #[test]
    fn friction_opposes_the_3d_sliding_of_the_contact_point() {
        let mut p = ball_on_ground(ContactLaw::Linear);
        p.damping = 0.0;
        p.friction = Some(Friction {
            coefficient: 0.3,
            law: FrictionLaw::Regularised { velocity: 1e-3 },
        });
        let ground = Pose::ground();
        let ball = Pose::new([0.0, 0.0, 0.49], &[1.0, 0.0, 0.0, 0.0]);
        // v = (1, 0.5, 0), ω = (0, 1, 0): X − r = (0, 0, −0.5),
        // ω × (X − r) = (−0.5, 0, 0): v_t = (0.5, 0.5, 0)
        let v = [1.0, 0.5, 0.0, 0.0, 1.0, 0.0];
        let (f, _) = contact_load(&p, &end(&ground, [0.0; 6]), &end(&ball, v)).unwrap();
        let fn_ = 1e5 * 0.01;
        let s = 0.5f64.hypot(0.5);
        let ft = -0.3 * fn_ * (s / 1e-3).tanh() / s * 0.5;
        assert!(
            (f[0] - ft).abs() < 1e-9 && (f[1] - ft).abs() < 1e-9,
            "{f:?}"
        );
        assert!((f[2] - fn_).abs() < 1e-9, "{f:?}");
        // rolling: v_x = ω_y r
        let rolling = [0.5, 0.0, 0.0, 0.0, 1.0, 0.0];
        let (f, _) = contact_load(&p, &end(&ground, [0.0; 6]), &end(&ball, rolling)).unwrap();
        assert!(f[0].abs() < 1e-12 && f[1].abs() < 1e-12, "{f:?}");
        // d F_x / d v_x at v_t = 0 by a dual number: −μ F_n / v_ε
        let dball = Pose::new(
            lift::<Dual64>(&[0.0, 0.0, 0.49]),
            &lift4(&[1.0, 0.0, 0.0, 0.0]),
        );
        let dground = Pose::<Dual64>::ground();
        let mut vel = rolling.map(Dual64::from);
        vel[0] = Dual64::new(0.5, 1.0);
        let ea = End {
            pose: &dground,
            velocity: [Dual64::from(0.0); 6],
            point: [0.0; 3],
        };
        let eb = End {
            pose: &dball,
            velocity: vel,
            point: [0.0; 3],
        };
        let (f, _) = contact_load(&p, &ea, &eb).unwrap();
        assert!(f[0].re.abs() < 1e-12);
        assert!((f[0].eps + 0.3 * fn_ / 1e-3).abs() < 1e-6, "{}", f[0].eps);
    }

    fn lift4(p: &[f64; 4]) -> [Dual64; 4] {
        p.map(Dual64::from)
    }

    /// −dV/dδ along the normal is the elastic force, for every law.
    #[test]
    fn potential_is_the_integral_of_the_elastic_force() {
        for law in [
            ContactLaw::Linear,
            ContactLaw::Hertz { exponent: 1.5 },
            ContactLaw::HuntCrossley { exponent: 1.5 },
        ] {
            let mut p = ball_on_ground(law);
            p.damping = 0.0;
            let ground = Pose::ground();
            let at = |z: f64| Pose::new([0.1, 0.2, z], &[1.0, 0.0, 0.0, 0.0]);
            let (z, h) = (0.47, 1e-7);
            let dv = (contact_potential(&p, &ground, &at(z - h))
                - contact_potential(&p, &ground, &at(z + h)))
                / (2.0 * h);
            let (_, f) = contact_state(&p, &end(&ground, [0.0; 6]), &end(&at(z), [0.0; 6]));
            assert!((dv - f).abs() < 1e-5 * f, "{law:?}: -dV/dz {dv} vs F {f}");
        }
    }

    /// Two spheres on a tilted plane of centres push apart along the
    /// centre line with no moment; the gap's derivative along a turn of
    /// body b (in its frame) about its off-centre sphere is the moment
    /// arm's, as the retraction gives it.
    #[test]
    fn two_spheres_push_apart_along_the_centre_line() {
        let p = SpatialContactParams {
            sa: [0.0; 3],
            sb: [0.0; 3],
            geometry: SpatialContactGeometry::SphereSphere {
                radius_a: 0.5,
                radius_b: 0.5,
            },
            law: ContactLaw::Hertz { exponent: 1.5 },
            stiffness: 1e6,
            damping: 0.0,
            friction: None,
        };
        let pa = Pose::<f64>::new([0.0; 3], &[1.0, 0.0, 0.0, 0.0]);
        let pb = Pose::new([0.54, 0.0, 0.72], &[1.0, 0.0, 0.0, 0.0]); // |d| = 0.9
        let (g, n, _) = contact_frame(&p, &pa, &pb);
        assert!((g + 0.1).abs() < 1e-15 && (n[0] - 0.6).abs() < 1e-15);
        let (f, _) = contact_load(&p, &end(&pa, [0.0; 6]), &end(&pb, [0.0; 6])).unwrap();
        let mag = 1e6 * 0.1f64.powf(1.5);
        assert!((f[0] - 0.6 * mag).abs() < 1e-6 * mag && (f[2] - 0.8 * mag).abs() < 1e-6 * mag);
        // sphere b off its centre of mass: s_b = (0, 0.2, 0); a turn ε about
        // body z moves the centre by ε e_z × s_b = (−0.2 ε, 0, 0): dg = −0.2·0.6 ε
        let p = SpatialContactParams {
            sb: [0.0, 0.2, 0.0],
            ..p
        };
        let (r, q) = ([0.54, -0.2, 0.72], [1.0, 0.0, 0.0, 0.0]);
        let eps = Dual64::new(0.0, 1.0);
        let z = Dual64::from(0.0);
        let (r, q) = retract(&lift::<Dual64>(&r), &lift4(&q), &[z, z, z, z, z, eps]);
        let (g, _, _) = contact_frame(&p, &Pose::<Dual64>::ground(), &Pose::new(r, &q));
        assert!(
            (g.re + 0.1).abs() < 1e-12 && (g.eps + 0.12).abs() < 1e-12,
            "{g:?}"
        );
    }
}
