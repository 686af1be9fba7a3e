//! The friction keys shared by `[[contacts]]` and translational joints:
//! `friction = μ`, `friction_law = "regularised" | "stick_slip"`,
//! `friction_velocity = v_ε` (regularised law) and `static_friction = μ_s`
//! (stick–slip law).

use crate::error::ModelError;
use crate::reader::Elem;
use crate::types::{Friction, FrictionLaw};

/// Keys of an element that can carry friction.
pub(crate) const FRICTION_KEYS: [&str; 4] = [
    "friction",
    "friction_law",
    "friction_velocity",
    "static_friction",
];

const FRICTION_LAWS: &[&str] = &["regularised", "stick_slip"];

/// Default regularisation velocity v_ε of the regularised law [m/s]: a
/// sliding error 2 e^{−2|v|/v_ε} below 1e-15 from 2 cm/s on, a creep of
/// at most v_ε artanh(F/(μ F_n)) while sticking.
pub const DEFAULT_FRICTION_VELOCITY: f64 = 1e-3;

/// The friction of element `e`, `None` without a `friction` key; the keys
/// that only refine a friction law are refused without it, and each law
/// refuses the other's parameter.
pub(crate) fn parse_friction(e: &Elem<'_, '_>) -> Result<Option<Friction>, ModelError> {
    let refuse = |key: &str, why: &str| -> Result<(), ModelError> {
        match e.get(key) {
            Some(v) => Err(e.invalid(key, &v.span(), why)),
            None => Ok(()),
        }
    };
    if e.get("friction").is_none() {
        for key in &FRICTION_KEYS[1..] {
            refuse(
                key,
                "refines a friction law: give the friction coefficient too (friction = μ)",
            )?;
        }
        return Ok(None);
    }
    let mu = e.req_num("friction")?;
    let coefficient = e.non_negative("friction", mu)?;
    let law = match e.choice("friction_law", "friction law", FRICTION_LAWS)? {
        Some(1) => {
            refuse(
                "friction_velocity",
                "regularises the friction law; the stick_slip law sticks exactly (use friction_law = \"regularised\")",
            )?;
            let mu_s = e.num_or("static_friction", coefficient)?;
            if !(mu_s.is_finite() && mu_s >= coefficient) {
                return Err(e.invalid(
                    "static_friction",
                    &e.value_span("static_friction"),
                    format!("must be at least the kinetic coefficient friction = {coefficient}, got {mu_s}"),
                ));
            }
            FrictionLaw::StickSlip {
                static_coefficient: mu_s,
            }
        }
        _ => {
            refuse(
                "static_friction",
                "belongs to friction_law = \"stick_slip\"; the regularised law has one coefficient",
            )?;
            let v = e.num_or("friction_velocity", DEFAULT_FRICTION_VELOCITY)?;
            FrictionLaw::Regularised {
                velocity: e.positive("friction_velocity", v)?,
            }
        }
    };
    Ok(Some(Friction { coefficient, law }))
}
