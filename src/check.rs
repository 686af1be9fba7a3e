//! `jounce check`: validate, build and assemble a model, and describe it;
//! refuse run settings whose integrator cannot run the formulation.

use jounce_mechanics::MechanicalSystem;
use jounce_model::{BodyRef, JointKind, Model};

use crate::error::RunError;
use crate::setup::{assemble_model, build_system, check_pairing, formulation_name};

fn body_name(model: &Model, b: BodyRef) -> String {
    match b {
        BodyRef::Ground => "ground".into(),
        BodyRef::Body(i) => model.bodies[i].name.clone(),
    }
}

/// Validate and assemble `model`; return the report `jounce check` prints.
///
/// # Errors
/// [`RunError`] naming the file and element at fault.
pub fn check_model(model: &Model) -> Result<String, RunError> {
    // the run settings as `jounce run` would refuse them
    check_pairing(model)?;
    let sys = build_system(model)?;
    let asm = assemble_model(model, &sys)?;
    let mut s = String::new();
    s.push_str(&format!("model '{}' ({})\n", model.name, model.source));
    s.push_str(&format!("  bodies ({}):\n", model.bodies.len()));
    for b in &model.bodies {
        s.push_str(&format!(
            "    {:<16} m = {} kg, J = {} kg m^2\n",
            b.name, b.mass, b.inertia
        ));
    }
    s.push_str(&format!("  joints ({}):\n", model.joints.len()));
    for j in &model.joints {
        let (kind, a, b) = match &j.kind {
            JointKind::Revolute { a, b } => ("revolute", a.body, b.body),
            JointKind::Translational { a, b, .. } => ("translational", a.body, b.body),
            JointKind::Rigid { body_a, body_b } => ("rigid", *body_a, *body_b),
            JointKind::Distance { a, b, .. } => ("distance", a.body, b.body),
        };
        s.push_str(&format!(
            "    {:<16} {:<13} {} - {}\n",
            j.name,
            kind,
            body_name(model, a),
            body_name(model, b)
        ));
    }
    if !model.drivers.is_empty() {
        s.push_str(&format!("  drivers ({}):\n", model.drivers.len()));
        for d in &model.drivers {
            s.push_str(&format!("    {}\n", d.name));
        }
    }
    if !model.forces.is_empty() {
        s.push_str(&format!("  force elements ({}):\n", model.forces.len()));
        for f in &model.forces {
            s.push_str(&format!("    {}\n", f.name));
        }
    }
    s.push_str(&format!(
        "  {} coordinates, {} constraint equations (rank {}), degrees of freedom: {}\n",
        sys.nq(),
        sys.nc(),
        asm.rank,
        asm.dof
    ));
    if asm.redundant.is_empty() {
        s.push_str("  no redundant constraints\n");
    } else {
        s.push_str(&format!(
            "  redundant constraints: {}\n",
            asm.redundant.join(", ")
        ));
    }
    if !asm.singular.is_empty() {
        s.push_str(&format!(
            "  singular configuration at t = 0, involving: {}\n",
            asm.singular.join(", ")
        ));
    }
    s.push_str(&format!(
        "  assembled in {} iterations: |Phi| = {:.2e}, |Phi_q v + Phi_t| = {:.2e}, velocity change {:.2e}\n",
        asm.iterations, asm.position_residual, asm.velocity_residual, asm.velocity_change
    ));
    s.push_str(&format!(
        "  run settings: {} formulation, {} integrator, t_end = {} s\n",
        formulation_name(model.settings.formulation.kind),
        model.settings.integrator.method,
        model.settings.t_end
    ));
    Ok(s)
}
