//! `[[contacts]]`: unilateral contact pairs (circle-line, circle-circle,
//! point-line) with a penalty force law (linear, Hertz, Hunt–Crossley) or
//! Newton's impact law. Each becomes a [`ForceKind::Contact`] force element
//! whose gap is a switching function of the run.

use toml::de::DeTable;

use crate::error::ModelError;
use crate::friction::{parse_friction, FRICTION_KEYS};
use crate::parse::{named_elements, Ctx, Named};
use crate::reader::Elem;
use crate::types::{ContactGeometry, ContactLaw, Force, ForceKind};

const CONTACT_TYPES: &[&str] = &["circle_line", "circle_circle", "point_line"];
const CONTACT_LAWS: &[&str] = &["linear", "hertz", "hunt_crossley", "impact"];

/// Parses the contact pairs; `forces` are the force elements already read
/// (names are unique among forces and contacts together).
pub(crate) fn parse<'a, 'i>(
    ctx: &mut Ctx<'a, 'i>,
    root: &'a DeTable<'i>,
    forces: &[Force],
) -> Result<Vec<Force>, ModelError> {
    let elems = named_elements(ctx.src, root, "contacts", "contact")?;
    let mut out: Vec<Force> = Vec::with_capacity(elems.len());
    for n in &elems {
        if forces.iter().chain(out.iter()).any(|f| f.name == n.name) {
            return Err(n.elem.invalid(
                "name",
                &n.name_span,
                format!(
                    "'{}' is already the name of a force element or contact (names must be unique among [[forces]] and [[contacts]])",
                    n.name
                ),
            ));
        }
        out.push(contact(ctx, n)?);
    }
    Ok(out)
}

/// A unit normal from `key`: normalised, or an error for a zero vector.
fn unit_normal(e: &Elem<'_, '_>, key: &str) -> Result<[f64; 2], ModelError> {
    let v = e.req(key)?;
    let n = e.vec2(key, v)?;
    let len = n[0].hypot(n[1]);
    if !(len > 1e-12) || !len.is_finite() {
        return Err(e.invalid(
            key,
            &v.span(),
            "must be a nonzero vector [nx, ny] (the line's normal, pointing to the free side)",
        ));
    }
    Ok([n[0] / len, n[1] / len])
}

fn contact<'a, 'i>(ctx: &mut Ctx<'a, 'i>, n: &Named<'a, 'i>) -> Result<Force, ModelError> {
    let e = &n.elem;
    let t = e.req_choice("type", "contact type", CONTACT_TYPES)?;
    let keys = [
        "name",
        "type",
        "body1",
        "point1",
        "normal1",
        "radius1",
        "body2",
        "point2",
        "radius2",
        "law",
        "stiffness",
        "exponent",
        "damping",
        "restitution",
    ];
    e.check_keys(&[&keys[..], &FRICTION_KEYS[..]].concat())?;
    let a = ctx.attachment(e, "body1", "point1")?;
    let b = ctx.attachment(e, "body2", "point2")?;
    ctx.distinct(e, "body2", a.body, b.body)?;
    let radius = |key: &str| -> Result<f64, ModelError> {
        let r = e.req_num(key)?;
        e.positive(key, r)
    };
    let refuse = |key: &str, why: &str| -> Result<(), ModelError> {
        match e.get(key) {
            Some(v) => Err(e.invalid(key, &v.span(), why)),
            None => Ok(()),
        }
    };
    let geometry = match CONTACT_TYPES[t] {
        "circle_line" => {
            refuse(
                "radius1",
                "a circle_line contact has its circle on body2 (radius2)",
            )?;
            ContactGeometry::CircleLine {
                radius: radius("radius2")?,
                normal: unit_normal(e, "normal1")?,
            }
        }
        "circle_circle" => {
            refuse("normal1", "a circle_circle contact has no line normal")?;
            ContactGeometry::CircleCircle {
                radius_a: radius("radius1")?,
                radius_b: radius("radius2")?,
            }
        }
        _ => {
            refuse("radius1", "a point_line contact has no radius")?;
            refuse("radius2", "a point_line contact has no radius")?;
            ContactGeometry::PointLine {
                normal: unit_normal(e, "normal1")?,
            }
        }
    };
    let (law, stiffness, damping) = contact_law(e)?;
    let friction = parse_friction(e)?;
    Ok(Force {
        name: n.name.clone(),
        kind: ForceKind::Contact {
            a,
            b,
            geometry,
            law,
            stiffness,
            damping,
            friction,
        },
    })
}

/// Keys of a contact's law, shared by planar and spatial `[[contacts]]`.
pub(crate) const LAW_KEYS: [&str; 5] = ["law", "stiffness", "exponent", "damping", "restitution"];

/// The law of contact element `e` with its stiffness and damping (0, 0 for
/// the impact law): `law` (default linear), `stiffness`, `damping`,
/// `exponent` (Hertz, Hunt–Crossley) or `restitution` (impact, which
/// refuses friction keys). Shared by planar and spatial contacts.
pub(crate) fn contact_law(e: &Elem<'_, '_>) -> Result<(ContactLaw, f64, f64), ModelError> {
    let refuse = |key: &str, why: &str| -> Result<(), ModelError> {
        match e.get(key) {
            Some(v) => Err(e.invalid(key, &v.span(), why)),
            None => Ok(()),
        }
    };
    let law_index = e.choice("law", "contact law", CONTACT_LAWS)?.unwrap_or(0);
    let exponent = |default: f64| -> Result<f64, ModelError> {
        let x = e.num_or("exponent", default)?;
        e.positive("exponent", x)
    };
    let (law, stiffness, damping) = match CONTACT_LAWS[law_index] {
        "impact" => {
            for key in ["stiffness", "exponent", "damping"] {
                refuse(
                    key,
                    "the impact law is rigid (Newton's restitution at the event): it has no stiffness, exponent or damping",
                )?;
            }
            let r = e.req_num("restitution")?;
            if !(0.0..=1.0).contains(&r) {
                return Err(e.invalid(
                    "restitution",
                    &e.value_span("restitution"),
                    format!("must be in [0, 1], got {r}"),
                ));
            }
            for key in FRICTION_KEYS {
                refuse(
                    key,
                    "needs a normal force, which the impact law does not give (use a penalty law: linear, hertz or hunt_crossley)",
                )?;
            }
            (ContactLaw::Impact { restitution: r }, 0.0, 0.0)
        }
        law => {
            refuse(
                "restitution",
                "belongs to law = \"impact\"; a penalty law dissipates through its damping",
            )?;
            let k = e.req_num("stiffness")?;
            let k = e.positive("stiffness", k)?;
            let c = e.num_or("damping", 0.0)?;
            let c = e.non_negative("damping", c)?;
            let law = match law {
                "linear" => {
                    refuse(
                        "exponent",
                        "the linear law has no exponent (use law = \"hertz\")",
                    )?;
                    ContactLaw::Linear
                }
                "hertz" => ContactLaw::Hertz {
                    exponent: exponent(1.5)?,
                },
                _ => ContactLaw::HuntCrossley {
                    exponent: exponent(1.5)?,
                },
            };
            (law, k, c)
        }
    };
    Ok((law, stiffness, damping))
}
