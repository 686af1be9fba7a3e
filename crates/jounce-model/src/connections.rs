//! `[[joints]]` and `[[drivers]]` (one namespace): types, geometry, and the
//! checks that a joint connects two different bodies and that a driver
//! drives a revolute or translational joint.

use toml::de::DeTable;

use crate::error::ModelError;
use crate::friction::{parse_friction, FRICTION_KEYS};
use crate::parse::{check_unique, named_elements, Ctx, Named};
use crate::types::{Driver, DriverKind, Joint, JointKind};

const JOINT_TYPES: &[&str] = &["revolute", "translational", "rigid", "distance"];
const DRIVER_TYPES: &[&str] = &["joint", "distance"];

/// Parses joints and drivers.
pub(crate) fn parse<'a, 'i>(
    ctx: &mut Ctx<'a, 'i>,
    root: &'a DeTable<'i>,
) -> Result<(Vec<Joint>, Vec<Driver>), ModelError> {
    let joint_elems = named_elements(ctx.src, root, "joints", "joint")?;
    let driver_elems = named_elements(ctx.src, root, "drivers", "driver")?;
    let all: Vec<&Named> = joint_elems.iter().chain(driver_elems.iter()).collect();
    check_unique(ctx.src, "joint/driver", &all)?;

    let mut joints = Vec::with_capacity(joint_elems.len());
    for n in &joint_elems {
        joints.push(joint(ctx, n)?);
    }
    let mut drivers = Vec::with_capacity(driver_elems.len());
    for n in &driver_elems {
        drivers.push(driver(ctx, n, &joints)?);
    }
    Ok((joints, drivers))
}

fn joint<'a, 'i>(ctx: &mut Ctx<'a, 'i>, n: &Named<'a, 'i>) -> Result<Joint, ModelError> {
    let e = &n.elem;
    let t = e.req_choice("type", "joint type", JOINT_TYPES)?;
    let kind = match JOINT_TYPES[t] {
        "revolute" => {
            e.check_keys(&["name", "type", "body1", "point1", "body2", "point2"])?;
            let a = ctx.attachment(e, "body1", "point1")?;
            let b = ctx.attachment(e, "body2", "point2")?;
            ctx.distinct(e, "body2", a.body, b.body)?;
            JointKind::Revolute { a, b }
        }
        "translational" => {
            let keys = ["name", "type", "body1", "point1", "body2", "point2", "axis"];
            e.check_keys(&[&keys[..], &FRICTION_KEYS[..]].concat())?;
            let a = ctx.attachment(e, "body1", "point1")?;
            let b = ctx.attachment(e, "body2", "point2")?;
            ctx.distinct(e, "body2", a.body, b.body)?;
            let axis = e.vec2("axis", e.req("axis")?)?;
            // Scale first so that huge components cannot overflow.
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
            let axis = [u[0] / len, u[1] / len];
            JointKind::Translational { a, b, axis }
        }
        "rigid" => {
            e.check_keys(&["name", "type", "body1", "body2"])?;
            let body_a = ctx.body_ref(e, "body1")?;
            let body_b = ctx.body_ref(e, "body2")?;
            ctx.distinct(e, "body2", body_a, body_b)?;
            JointKind::Rigid { body_a, body_b }
        }
        _ => {
            e.check_keys(&[
                "name", "type", "body1", "point1", "body2", "point2", "length",
            ])?;
            let a = ctx.attachment(e, "body1", "point1")?;
            let b = ctx.attachment(e, "body2", "point2")?;
            ctx.distinct(e, "body2", a.body, b.body)?;
            let length = e.req_num("length")?;
            JointKind::Distance {
                a,
                b,
                length: e.positive("length", length)?,
            }
        }
    };
    let friction = match kind {
        JointKind::Translational { .. } => parse_friction(e)?,
        _ => None,
    };
    Ok(Joint {
        name: n.name.clone(),
        kind,
        friction,
    })
}

fn driver<'a, 'i>(
    ctx: &mut Ctx<'a, 'i>,
    n: &Named<'a, 'i>,
    joints: &[Joint],
) -> Result<Driver, ModelError> {
    let e = &n.elem;
    let t = e.req_choice("type", "driver type", DRIVER_TYPES)?;
    let kind = match DRIVER_TYPES[t] {
        "joint" => {
            e.check_keys(&["name", "type", "joint", "function"])?;
            let (j, v, jname) =
                e.reference("joint", "joint", joints.iter().map(|j| j.name.as_str()))?;
            match joints[j].kind {
                JointKind::Revolute { .. } | JointKind::Translational { .. } => {}
                ref other => {
                    return Err(ModelError::Invalid {
                        at: e.at(&v.span()),
                        message: format!(
                            "joint '{jname}' is a {} joint and cannot be driven (only revolute and translational joints can)",
                            kind_name(other)
                        ),
                    })
                }
            }
            DriverKind::Joint { joint: j }
        }
        _ => {
            e.check_keys(&[
                "name", "type", "body1", "point1", "body2", "point2", "function",
            ])?;
            let a = ctx.attachment(e, "body1", "point1")?;
            let b = ctx.attachment(e, "body2", "point2")?;
            ctx.distinct(e, "body2", a.body, b.body)?;
            DriverKind::Distance { a, b }
        }
    };
    let function = ctx.function(e, "function")?;
    Ok(Driver {
        name: n.name.clone(),
        kind,
        function,
    })
}

/// The file-format name of a joint kind.
pub(crate) fn kind_name(k: &JointKind) -> &'static str {
    match k {
        JointKind::Revolute { .. } => "revolute",
        JointKind::Translational { .. } => "translational",
        JointKind::Rigid { .. } => "rigid",
        JointKind::Distance { .. } => "distance",
    }
}
