//! Suspicious input that is valid but probably not what the user meant,
//! and what assembly did to the file's pose. `jounce check` prints these;
//! `jounce run` puts them in the summary's diagnostics.
//!
//! - an initial angle beyond 2π (degrees written where radians are meant:
//!   `angle = 100` is 100 rad, not 100°);
//! - a spring-damper whose two ends coincide in the initial pose (its line
//!   of action is undefined: it exerts no force until the ends separate);
//! - a joint or driver that the file's pose does not satisfy within the
//!   assembly tolerance (for a driver: f(0) disagrees with the pose), and
//!   how far assembly then moved each body;
//! - a penalty contact that starts penetrated deeper than an elastic
//!   indentation ([`crate::penetration`]).

use jounce_mechanics::{Assembly, MechanicalSystem, PlanarSystem};
use jounce_model::{Attachment, BodyRef, ForceKind, Model};

/// Global position of an attachment in the file's initial pose.
fn global_point(model: &Model, a: &Attachment) -> [f64; 2] {
    match a.body {
        BodyRef::Ground => a.point,
        BodyRef::Body(i) => {
            let b = &model.bodies[i];
            let (s, c) = b.angle.sin_cos();
            [
                b.position[0] + c * a.point[0] - s * a.point[1],
                b.position[1] + s * a.point[0] + c * a.point[1],
            ]
        }
    }
}

/// Warnings about the model as written (module documentation).
pub fn input_warnings(model: &Model) -> Vec<String> {
    let mut w = Vec::new();
    for b in &model.bodies {
        if b.angle.abs() > std::f64::consts::TAU {
            w.push(format!(
                "body '{}': angle = {} rad is more than 2π; angles are in radians ({} degrees \
                 would be angle = {:.6})",
                b.name,
                b.angle,
                b.angle,
                b.angle.to_radians()
            ));
        }
    }
    for f in &model.forces {
        if let ForceKind::SpringDamper {
            a, b, free_length, ..
        } = &f.kind
        {
            let (pa, pb) = (global_point(model, a), global_point(model, b));
            let len = ((pb[0] - pa[0]).powi(2) + (pb[1] - pa[1]).powi(2)).sqrt();
            if len < 1e-9 {
                w.push(format!(
                    "force '{}': its two ends coincide in the initial pose (length {len:.1e} m, \
                     free length {free_length} m): its line of action is undefined and it \
                     exerts no force until the ends separate",
                    f.name
                ));
            }
        }
    }
    w
}

/// Joints and drivers the file's pose does not satisfy, and how far
/// assembly moved each body to satisfy them; penalty contacts that start
/// deeply penetrated.
pub fn assembly_warnings(model: &Model, sys: &PlanarSystem, asm: &Assembly) -> Vec<String> {
    let mut w = Vec::new();
    let q0 = sys.initial_q();
    let mut phi = vec![0.0; sys.nc()];
    sys.constraints(0.0, &q0, &mut phi);
    let tol = model.settings.assembly_tol;
    for (r, p) in phi.iter().enumerate() {
        if p.abs() > tol {
            let label = sys.constraint_label(r);
            let what = if label.starts_with("driver") {
                "prescribes a value at t = 0 that the initial pose misses"
            } else {
                "is not closed in the initial pose"
            };
            w.push(format!(
                "{label} {what} by {:.3e} (|Φ| in m or rad; tolerance {tol:e}): assembly moved the \
                 bodies to satisfy it",
                p.abs()
            ));
        }
    }
    let moved = body_moves(model, &q0, &asm.q);
    if !w.is_empty() {
        for (name, dr, dth) in moved {
            if dr > tol || dth > tol {
                w.push(format!(
                    "assembly moved body '{name}' by {dr:.4e} m and turned it by {dth:.4e} rad"
                ));
            }
        }
    }
    w.extend(crate::penetration::penalty_penetration_warnings(
        model, sys, &asm.q,
    ));
    w
}

/// (name, |Δr| \[m\], |Δθ| \[rad\]) of every body between two configurations
/// in body coordinates (x, y, θ per body).
pub fn body_moves(model: &Model, q0: &[f64], q: &[f64]) -> Vec<(String, f64, f64)> {
    model
        .bodies
        .iter()
        .enumerate()
        .filter(|(i, _)| 3 * i + 2 < q.len() && 3 * i + 2 < q0.len())
        .map(|(i, b)| {
            let dx = q[3 * i] - q0[3 * i];
            let dy = q[3 * i + 1] - q0[3 * i + 1];
            (
                b.name.clone(),
                (dx * dx + dy * dy).sqrt(),
                (q[3 * i + 2] - q0[3 * i + 2]).abs(),
            )
        })
        .collect()
}
