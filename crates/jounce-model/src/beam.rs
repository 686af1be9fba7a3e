//! `type = "beam"` in `[[forces]]`: a massless planar beam element between
//! two body points, three generalized loads (axial force, transverse force,
//! bending moment) from the relative displacement and rotation of its end
//! nodes, with stiffness-proportional damping c_i = d k_i.
//!
//! The element is MECHANICA MOTION's "beam load" reduced to the plane
//! (termeer 1996, *A study to the multibody package MECHANICA MOTION*,
//! section 6.4: six loads, each a function of the six relative degrees of
//! freedom, the damping value d multiplying the stiffnesses, default
//! 1e-3). The mechanics are in `jounce_mechanics::beam`.

use crate::error::ModelError;
use crate::parse::{Ctx, Named};
use crate::types::Attachment;

/// Default damping value d of a beam \[s\] (termeer 1996, section 6.4:
/// MOTION's default).
pub const DEFAULT_BEAM_DAMPING: f64 = 1e-3;

/// A planar Euler–Bernoulli beam element between point a (node 1, on
/// body1) and point b (node 2, on body2).
#[derive(Clone, Debug, PartialEq)]
pub struct Beam {
    /// Node 1: the point on body1.
    pub a: Attachment,
    /// Node 2: the point on body2.
    pub b: Attachment,
    /// Young's modulus E > 0 \[Pa\].
    pub youngs_modulus: f64,
    /// Cross-section area A > 0 \[m²\].
    pub area: f64,
    /// Second moment of area I > 0 \[m⁴\] (bending in the plane).
    pub second_moment: f64,
    /// Unstressed length L > 0 \[m\]; `None`: the initial distance of the
    /// two points.
    pub length: Option<f64>,
    /// Beam axis (unit vector) in body1's frame; `None`: the direction from
    /// node 1 to node 2 in the initial configuration.
    pub axis: Option<[f64; 2]>,
    /// Unstressed relative rotation θ2 − θ1 \[rad\]; `None`: the initial one.
    pub zero_angle: Option<f64>,
    /// Damping value d ≥ 0 \[s\]: damping c_i = d k_i of every stiffness.
    pub damping: f64,
    /// Damping value of the axial load alone, d_a ≥ 0 \[s\]: c_x = d_a EA/L;
    /// `None`: d. MOTION has one value for all loads (termeer 1996, sec.
    /// 6.4); a separate one damps the fast axial mode critically
    /// (d_a = 2/ω_axial) without changing the damping of the bending modes.
    pub axial_damping: Option<f64>,
}

impl Beam {
    /// The damping value of the axial load: d_a when given, else d.
    pub fn axial_damping_value(&self) -> f64 {
        self.axial_damping.unwrap_or(self.damping)
    }
}

/// What is wrong with a beam's stiffness terms EA/L, 12EI/L³, 6EI/L² and
/// 4EI/L (the entries of its element stiffness matrix), if anything: each
/// must be finite and positive, or the loads are infinite or NaN from the
/// first evaluation (a length of 1e-300 m makes 12EI/L³ infinite).
pub fn beam_stiffness_problem(e: f64, a: f64, i: f64, l: f64) -> Option<String> {
    let ei = e * i;
    let terms = [
        ("EA/L", e * a / l, "N/m"),
        ("12EI/L³", 12.0 * ei / (l * l * l), "N/m"),
        ("6EI/L²", 6.0 * ei / (l * l), "N"),
        ("4EI/L", 4.0 * ei / l, "N m"),
    ];
    let (name, k, unit) = terms
        .into_iter()
        .find(|(_, k, _)| !(k.is_finite() && *k > 0.0))?;
    Some(format!(
        "gives the stiffness {name} = {k:e} {unit} (E = {e:e} Pa, A = {a:e} m², I = {i:e} m⁴, \
         L = {l:e} m): every stiffness term (EA/L, 12EI/L³, 6EI/L², 4EI/L) must be finite and \
         positive"
    ))
}

/// Keys of a beam element.
const KEYS: &[&str] = &[
    "name",
    "type",
    "body1",
    "point1",
    "body2",
    "point2",
    "E",
    "A",
    "I",
    "L",
    "axis",
    "zero_angle",
    "damping",
    "axial_damping",
];

/// Parses and validates a `type = "beam"` force element: E, A, I (and L
/// when given) positive, d not negative, the axis a non-zero vector; the
/// errors name the element and the key.
pub(crate) fn parse<'a, 'i>(ctx: &mut Ctx<'a, 'i>, n: &Named<'a, 'i>) -> Result<Beam, ModelError> {
    let e = &n.elem;
    e.check_keys(KEYS)?;
    let a = ctx.attachment(e, "body1", "point1")?;
    let b = ctx.attachment(e, "body2", "point2")?;
    ctx.distinct(e, "body2", a.body, b.body)?;
    let youngs_modulus = e.positive("E", e.req_num("E")?)?;
    let area = e.positive("A", e.req_num("A")?)?;
    let second_moment = e.positive("I", e.req_num("I")?)?;
    let length = match e.opt_num("L")? {
        Some(l) => {
            let l = e.positive("L", l)?;
            if let Some(p) = beam_stiffness_problem(youngs_modulus, area, second_moment, l) {
                return Err(e.invalid("L", &e.value_span("L"), p));
            }
            Some(l)
        }
        None => None,
    };
    let axis = match e.get("axis") {
        Some(v) => {
            let axis = e.vec2("axis", v)?;
            // scale first so that huge components cannot overflow
            let s = axis[0].abs().max(axis[1].abs());
            if s == 0.0 {
                return Err(e.invalid(
                    "axis",
                    &e.value_span("axis"),
                    "must be a non-zero vector, got [0, 0]",
                ));
            }
            let u = [axis[0] / s, axis[1] / s];
            let len = u[0].hypot(u[1]);
            Some([u[0] / len, u[1] / len])
        }
        None => None,
    };
    let zero_angle = e.opt_num("zero_angle")?;
    let damping = e.non_negative("damping", e.num_or("damping", DEFAULT_BEAM_DAMPING)?)?;
    let axial_damping = match e.opt_num("axial_damping")? {
        Some(d) => Some(e.non_negative("axial_damping", d)?),
        None => None,
    };
    Ok(Beam {
        a,
        b,
        youngs_modulus,
        area,
        second_moment,
        length,
        axis,
        zero_angle,
        damping,
        axial_damping,
    })
}

#[cfg(test)]
mod tests {
    use crate::types::{BodyRef, ForceKind};

    const BEAM: &str = r#"
[[bodies]]
name = "tip"
mass = 1.0
inertia = 0.01
position = [0.5, 0.0]

[[forces]]
name = "flex"
type = "beam"
body1 = "ground"
point1 = [0.0, 0.0]
body2 = "tip"
point2 = [0.0, 0.0]
E = 2.1e11
A = 1e-3
I = 1e-9
"#;

    #[test]
    fn omitted_geometry_is_left_to_the_initial_configuration() {
        let m = crate::from_str(BEAM, "beam.toml").unwrap();
        let ForceKind::Beam(b) = &m.forces[0].kind else {
            panic!("not a beam: {:?}", m.forces[0].kind);
        };
        assert_eq!((b.a.body, b.b.body), (BodyRef::Ground, BodyRef::Body(0)));
        assert_eq!((b.length, b.axis, b.zero_angle), (None, None, None));
        assert_eq!(b.damping, super::DEFAULT_BEAM_DAMPING);
        assert_eq!(b.axial_damping, None);
        assert_eq!(b.axial_damping_value(), super::DEFAULT_BEAM_DAMPING);
        assert_eq!(
            (b.youngs_modulus, b.area, b.second_moment),
            (2.1e11, 1e-3, 1e-9)
        );
    }

    #[test]
    fn axis_is_normalised_and_bad_values_name_the_element() {
        let text = BEAM.replace("I = 1e-9", "I = 1e-9\naxis = [3.0, 4.0]\nL = 0.4");
        let m = crate::from_str(&text, "beam.toml").unwrap();
        let ForceKind::Beam(b) = &m.forces[0].kind else {
            panic!()
        };
        assert_eq!((b.axis, b.length), (Some([0.6, 0.8]), Some(0.4)));
        let text = BEAM.replace(
            "I = 1e-9",
            "I = 1e-9\ndamping = 2e-3\naxial_damping = 4.6e-4",
        );
        let m = crate::from_str(&text, "beam.toml").unwrap();
        let ForceKind::Beam(b) = &m.forces[0].kind else {
            panic!()
        };
        assert_eq!((b.damping, b.axial_damping_value()), (2e-3, 4.6e-4));
        for (from, to, msg) in [
            (
                "A = 1e-3",
                "A = 0",
                "force 'flex': A must be positive, got 0",
            ),
            ("I = 1e-9", "I = -1e-9", "force 'flex': I must be positive"),
            (
                "I = 1e-9",
                "I = 1e-9\nL = 0",
                "force 'flex': L must be positive",
            ),
            (
                "I = 1e-9",
                "I = 1e-9\naxis = [0, 0]",
                "force 'flex': axis must be a non-zero vector",
            ),
            (
                "I = 1e-9",
                "I = 1e-9\ndamping = -1e-3",
                "force 'flex': damping must not be negative",
            ),
            (
                "I = 1e-9",
                "I = 1e-9\naxial_damping = -1e-4",
                "force 'flex': axial_damping must not be negative",
            ),
            ("E = 2.1e11", "", "E"),
            (
                "body1 = \"ground\"",
                "body1 = \"tip\"",
                "connects body 'tip' to itself",
            ),
        ] {
            let err = crate::from_str(&BEAM.replace(from, to), "beam.toml").unwrap_err();
            assert!(err.to_string().contains(msg), "{from} -> {to}: {err}");
        }
    }
}
