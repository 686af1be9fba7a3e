//! Contacts that start penetrated: the gaps of the contact pairs at t = 0,
//! evaluated after assembly on the system's switching functions
//! ([`SystemQueries::switching_functions`]), the one check shared by every
//! command that sets a model up ([`crate::setup::assemble_model`]: `run`,
//! `check`, `static`, `modes`, `compare`, `sweep`), and of a spatial run
//! (`spatial_run.rs`: sphere-plane and sphere-sphere pairs, the
//! sphere's radius in place of the circle's, the plane in place of the
//! line).
//!
//! - A contact with Newton's impact law acts only at the event of its gap
//!   closing: one that starts with its gap below −[`PENETRATION_TOLERANCE`]
//!   never sees that event, and its bodies pass through each other. It is
//!   refused ([`refuse_penetrated_impacts`]), naming the contact and the
//!   depth, and saying when the body lies on the other side of the line
//!   (the normal points into it: `normal1` may be flipped).
//! - A penalty contact that starts penetrated is an overlap its spring
//!   pushes apart. A small one is the contact's elastic indentation (a
//!   body resting on it, a state written by `jounce static`); one is
//!   warned ([`penalty_penetration_warnings`]) when it is deeper than
//!   [`PENETRATION_TOLERANCE`] and deeper than a plausible elastic
//!   indentation, that is when either
//!   - its elastic force k δ^e at the initial depth δ exceeds
//!     [`FORCE_FACTOR`] times the weight of all the bodies, Σ m |g| (the
//!     most a contact carries at rest when it alone holds the whole
//!     model, with a wide margin for preloads; without gravity any
//!     overlap with a force warns), or
//!   - the depth exceeds [`DEPTH_FRACTION`] of the smaller radius of a
//!     circle in the pair (beyond the small indentations of Hertz's
//!     theory; a point against a line has no radius).
//!
//!   `jounce check` prints the warning and a run puts it in its
//!   diagnostics (`input warning: ...`).

use jounce_mechanics::{MechanicalSystem, SystemQueries};
use jounce_model::{ContactGeometry, ForceKind, Model, SpatialContactGeometry};

use crate::error::RunError;

/// Depth \[m\] below which a contact's initial overlap is taken as
/// touching: a micrometre, far above the rounding of the gap and the
/// assembly tolerance (1e-10 by default), far below a real input error.
pub const PENETRATION_TOLERANCE: f64 = 1e-6;

/// A penalty contact's elastic force at t = 0 above this many times the
/// weight of all the bodies is not an indentation at rest (module
/// documentation).
pub const FORCE_FACTOR: f64 = 10.0;

/// A penalty contact's initial depth above this fraction of the smaller
/// radius of its circles is not a small elastic indentation.
pub const DEPTH_FRACTION: f64 = 0.1;

/// A contact pair's state at t = 0.
#[derive(Clone, Debug, PartialEq)]
pub struct StartGap {
    /// Name of the contact.
    pub name: String,
    /// Gap g at t = 0 \[m\], negative in penetration.
    pub gap: f64,
    /// Elastic normal force at that gap (velocities zero) \[N\]; 0 for the
    /// impact law.
    pub elastic_force: f64,
    /// Whether the contact has Newton's impact law.
    pub impact: bool,
}

impl StartGap {
    /// Penetration depth δ = −g \[m\] (≤ 0 when open).
    pub fn depth(&self) -> f64 {
        -self.gap
    }
}

/// The gaps of the contact pairs of `sys` at configuration `q` and
/// t = 0 (one-sided springs, the other switching functions, left out).
pub fn start_gaps<S: MechanicalSystem + ?Sized>(sys: &S, q: &[f64]) -> Vec<StartGap> {
    let n = sys.n_switching_functions();
    let mut s = vec![0.0; n];
    let zero = vec![0.0; sys.nv()];
    sys.switching_functions(0.0, q, &zero, &mut s);
    (0..n)
        .filter(|&i| sys.switching_quantities(i)[0] == "gap")
        .map(|i| StartGap {
            name: sys.switching_label(i),
            gap: s[i],
            elastic_force: sys.contact_state(0.0, q, &zero, i).1,
            impact: sys.restitution(i).is_some(),
        })
        .collect()
}

/// What the checks need of a contact pair's shape, planar or spatial.
struct PairShape {
    /// For a circle (sphere) or point against a line (plane), the radius
    /// r of the circle (0 for a point); `None` for two circles (spheres).
    line_radius: Option<f64>,
    /// The smaller radius of the pair's circles (spheres); `None` for a
    /// point against a line.
    smallest_radius: Option<f64>,
    /// "line" in a planar model, "plane" in a spatial one.
    surface: &'static str,
    /// Name of body b (the circle's or sphere's).
    body: String,
}

/// The shape of the model's contact element named `name` (a planar
/// `[[forces]]` contact or a spatial `[[contacts]]` one).
fn pair_shape(model: &Model, name: &str) -> Option<PairShape> {
    use jounce_model::BodyRef;
    if let Some(sm) = &model.spatial {
        return sm.forces.iter().find_map(|f| match &f.kind {
            jounce_model::SpatialForceKind::Contact { geometry, b, .. } if f.name == name => {
                let body = match b.body {
                    BodyRef::Ground => "ground".to_string(),
                    BodyRef::Body(i) => sm.bodies[i].name.clone(),
                };
                let (line_radius, smallest_radius) = match *geometry {
                    SpatialContactGeometry::SpherePlane { radius, .. } => {
                        (Some(radius), Some(radius))
                    }
                    SpatialContactGeometry::SphereSphere { radius_a, radius_b } => {
                        (None, Some(radius_a.min(radius_b)))
                    }
                };
                Some(PairShape {
                    line_radius,
                    smallest_radius,
                    surface: "plane",
                    body,
                })
            }
            _ => None,
        });
    }
    model.forces.iter().find_map(|f| match &f.kind {
        ForceKind::Contact { geometry, b, .. } if f.name == name => {
            let body = match b.body {
                BodyRef::Ground => "ground".to_string(),
                BodyRef::Body(i) => model.bodies[i].name.clone(),
            };
            let (line_radius, smallest_radius) = match *geometry {
                ContactGeometry::CircleLine { radius, .. } => (Some(radius), Some(radius)),
                ContactGeometry::PointLine { .. } => (Some(0.0), None),
                ContactGeometry::CircleCircle { radius_a, radius_b } => {
                    (None, Some(radius_a.min(radius_b)))
                }
            };
            Some(PairShape {
                line_radius,
                smallest_radius,
                surface: "line",
                body,
            })
        }
        _ => None,
    })
}

/// The smaller radius of the circles (spheres) of the model's contact
/// element named `name`; `None` for a point against a line or an unknown
/// name.
pub(crate) fn smallest_radius(model: &Model, name: &str) -> Option<f64> {
    pair_shape(model, name).and_then(|p| p.smallest_radius)
}

/// The weight of all the model's bodies, Σ m |g| \[N\].
fn total_weight(model: &Model) -> f64 {
    match &model.spatial {
        Some(sm) => {
            let g = sm.gravity.iter().map(|x| x * x).sum::<f64>().sqrt();
            sm.bodies.iter().map(|b| b.mass * g).sum()
        }
        None => {
            let g = model.gravity[0].hypot(model.gravity[1]);
            model.bodies.iter().map(|b| b.mass * g).sum()
        }
    }
}

/// What would be true with the line's (plane's) normal reversed: for a
/// line contact whose body lies on the other side of the line (the gap
/// with −n is not negative), a hint that the normal may be flipped.
fn flipped_normal_hint(model: &Model, c: &StartGap) -> String {
    let Some(shape) = pair_shape(model, &c.name) else {
        return String::new();
    };
    let surface = shape.surface;
    // n·(P_b − P_a) = g + r; with −n the gap is −(g + r) − r
    let Some(radius) = shape.line_radius else {
        return format!(
            "; one {} starts inside the other: move the bodies apart",
            if surface == "plane" {
                "sphere"
            } else {
                "circle"
            }
        );
    };
    let flipped = -c.gap - 2.0 * radius;
    if flipped >= -PENETRATION_TOLERANCE {
        format!(
            "; body '{}' lies on the other side of the {surface}, {:.4e} m clear of it: if that \
             is its free side, the normal normal1 is flipped (it must point to the free side)",
            shape.body,
            flipped.max(0.0)
        )
    } else {
        "; move the bodies apart".to_string()
    }
}

/// Refuse a contact with Newton's impact law that starts penetrated
/// deeper than [`PENETRATION_TOLERANCE`] at configuration `q` (t = 0,
/// after assembly): its closing event never comes, and the bodies would
/// pass through each other.
///
/// # Errors
/// [`RunError::Setup`] naming the model file, the contact and the depth,
/// with a hint when the normal looks flipped.
pub fn refuse_penetrated_impacts<S: MechanicalSystem + ?Sized>(
    model: &Model,
    sys: &S,
    q: &[f64],
) -> Result<(), RunError> {
    let bad: Vec<String> = start_gaps(sys, q)
        .iter()
        .filter(|c| c.impact && c.depth() > PENETRATION_TOLERANCE)
        .map(|c| {
            format!(
                "contact '{}' starts penetrated by {:.4e} m (gap {:.4e} m at t = 0, after \
                 assembly; tolerance {PENETRATION_TOLERANCE:e} m): its impact law acts only \
                 when the gap closes, so the bodies would pass through each other{}",
                c.name,
                c.depth(),
                c.gap,
                flipped_normal_hint(model, c)
            )
        })
        .collect();
    if bad.is_empty() {
        return Ok(());
    }
    Err(RunError::Setup(format!(
        "{}: {}",
        model.source,
        bad.join("; ")
    )))
}

/// Warnings for the penalty contacts that start penetrated deeper than a
/// plausible elastic indentation at configuration `q` (module
/// documentation: depth above [`PENETRATION_TOLERANCE`], and a force
/// above [`FORCE_FACTOR`] times the weight or a depth above
/// [`DEPTH_FRACTION`] of the smaller radius).
pub fn penalty_penetration_warnings<S: MechanicalSystem + ?Sized>(
    model: &Model,
    sys: &S,
    q: &[f64],
) -> Vec<String> {
    let weight = total_weight(model);
    let mut w = Vec::new();
    for c in start_gaps(sys, q) {
        let depth = c.depth();
        if c.impact || !(depth > PENETRATION_TOLERANCE) {
            continue;
        }
        let radius = pair_shape(model, &c.name).and_then(|p| p.smallest_radius);
        let too_strong = c.elastic_force > FORCE_FACTOR * weight;
        let too_deep = radius.is_some_and(|r| depth > DEPTH_FRACTION * r);
        if !(too_strong || too_deep) {
            continue;
        }
        let why = if too_strong {
            format!(
                "its elastic force there, {:.4e} N, is {} times the weight of all the bodies \
                 ({weight:.4e} N)",
                c.elastic_force,
                if weight > 0.0 {
                    format!("{:.3e}", c.elastic_force / weight)
                } else {
                    "infinitely many".to_string()
                }
            )
        } else {
            format!(
                "the depth is {:.1} % of the {}'s radius {} m",
                100.0 * depth / radius.unwrap_or(f64::NAN),
                if model.spatial.is_some() {
                    "sphere"
                } else {
                    "circle"
                },
                radius.unwrap_or(f64::NAN)
            )
        };
        w.push(format!(
            "contact '{}' starts penetrated by {depth:.4e} m (gap {:.4e} m at t = 0, after \
             assembly), deeper than an elastic indentation at rest: {why}; the penalty force \
             will push the bodies apart at the start (check the initial positions, and the \
             normal normal1, which points to the free side)",
            c.name, c.gap
        ));
    }
    w
}
