//! `[[forces]]`: point forces, torques, translational spring-damper-actuators,
//! rotational springs on revolute joints and beams (`crate::beam`).

use toml::de::DeTable;

use crate::connections::kind_name;
use crate::error::ModelError;
use crate::parse::{check_unique, named_elements, Ctx, Named};
use crate::types::{Force, ForceFrame, ForceKind, Joint, JointKind, OneSided};

const FORCE_TYPES: &[&str] = &[
    "point_force",
    "torque",
    "spring_damper",
    "rotational_spring",
    "beam",
];

/// Parses the force elements.
pub(crate) fn parse<'a, 'i>(
    ctx: &mut Ctx<'a, 'i>,
    root: &'a DeTable<'i>,
    joints: &[Joint],
) -> Result<Vec<Force>, ModelError> {
    let elems = named_elements(ctx.src, root, "forces", "force")?;
    check_unique(ctx.src, "force", &elems.iter().collect::<Vec<_>>())?;
    let mut out = Vec::with_capacity(elems.len());
    for n in &elems {
        out.push(force(ctx, n, joints)?);
    }
    Ok(out)
}

fn one_sided(n: &Named<'_, '_>) -> Result<Option<OneSided>, ModelError> {
    Ok(n.elem
        .choice(
            "one_sided",
            "one_sided mode",
            &["compression", "tension", "below", "above"],
        )?
        .map(|i| {
            // "below"/"above" name the same modes by the angle or length
            // against its zero: below = compression, above = tension
            if i % 2 == 0 {
                OneSided::Compression
            } else {
                OneSided::Tension
            }
        }))
}

fn force<'a, 'i>(
    ctx: &mut Ctx<'a, 'i>,
    n: &Named<'a, 'i>,
    joints: &[Joint],
) -> Result<Force, ModelError> {
    let e = &n.elem;
    let t = e.req_choice("type", "force type", FORCE_TYPES)?;
    let kind = match FORCE_TYPES[t] {
        "point_force" => {
            e.check_keys(&["name", "type", "body", "point", "fx", "fy", "frame"])?;
            // A load on ground has no effect: require a moving body.
            ctx.moving_body(e, "body")?;
            let at = ctx.attachment(e, "body", "point")?;
            if e.get("fx").is_none() && e.get("fy").is_none() {
                return Err(ModelError::MissingKey {
                    at: e.here(),
                    key: "fx or fy".into(),
                });
            }
            let fx = ctx
                .opt_function(e, "fx")?
                .unwrap_or(crate::TimeFunction::Constant(0.0));
            let fy = ctx
                .opt_function(e, "fy")?
                .unwrap_or(crate::TimeFunction::Constant(0.0));
            let frame = match e.choice("frame", "force frame", &["global", "body"])? {
                Some(1) => ForceFrame::Body,
                _ => ForceFrame::Global,
            };
            ForceKind::PointForce { at, fx, fy, frame }
        }
        "torque" => {
            e.check_keys(&["name", "type", "body", "torque"])?;
            let body = ctx.moving_body(e, "body")?;
            let torque = ctx.function(e, "torque")?;
            ForceKind::Torque { body, torque }
        }
        "spring_damper" => {
            e.check_keys(&[
                "name",
                "type",
                "body1",
                "point1",
                "body2",
                "point2",
                "stiffness",
                "damping",
                "free_length",
                "actuator",
                "one_sided",
            ])?;
            let a = ctx.attachment(e, "body1", "point1")?;
            let b = ctx.attachment(e, "body2", "point2")?;
            ctx.distinct(e, "body2", a.body, b.body)?;
            let stiffness = e.req_num("stiffness")?;
            let damping = e.num_or("damping", 0.0)?;
            let free_length = e.req_num("free_length")?;
            ForceKind::SpringDamper {
                a,
                b,
                stiffness: e.non_negative("stiffness", stiffness)?,
                damping: e.non_negative("damping", damping)?,
                free_length: e.non_negative("free_length", free_length)?,
                actuator: ctx.opt_function(e, "actuator")?,
                one_sided: one_sided(n)?,
            }
        }
        "beam" => ForceKind::Beam(crate::beam::parse(ctx, n)?),
        _ => {
            e.check_keys(&[
                "name",
                "type",
                "joint",
                "stiffness",
                "damping",
                "zero_angle",
                "actuator",
                "one_sided",
            ])?;
            let (j, v, jname) =
                e.reference("joint", "joint", joints.iter().map(|j| j.name.as_str()))?;
            if !matches!(joints[j].kind, JointKind::Revolute { .. }) {
                return Err(ModelError::Invalid {
                    at: e.at(&v.span()),
                    message: format!(
                        "a rotational spring needs a revolute joint, but joint '{jname}' is {}",
                        kind_name(&joints[j].kind)
                    ),
                });
            }
            let stiffness = e.req_num("stiffness")?;
            let damping = e.num_or("damping", 0.0)?;
            ForceKind::RotationalSpring {
                joint: j,
                stiffness: e.non_negative("stiffness", stiffness)?,
                damping: e.non_negative("damping", damping)?,
                zero_angle: e.num_or("zero_angle", 0.0)?,
                actuator: ctx.opt_function(e, "actuator")?,
                one_sided: one_sided(n)?,
            }
        }
    };
    Ok(Force {
        name: n.name.clone(),
        kind,
    })
}
