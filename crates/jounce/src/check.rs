//! `jounce check`: validate, build and assemble a model, and describe it;
//! refuse every run setting `jounce run` would refuse (the same checks,
//! [`crate::validate`]), including a fixed step beyond the method's
//! stability limit on the model's linearisation at the start.

use jounce_integrate::method::MethodInfo;
use jounce_mechanics::MechanicalSystem;
use jounce_model::{BodyRef, FormulationKind, JointKind, Model};

use crate::error::RunError;
use crate::redundancy::Redundancy;
use crate::setup::{assemble_model, build_system, formulation_name};
use crate::validate::{fixed_step_verdict, validate_run_settings};

fn body_name(model: &Model, b: BodyRef) -> String {
    match b {
        BodyRef::Ground => "ground".into(),
        BodyRef::Body(i) => model.bodies[i].name.clone(),
    }
}

/// What `jounce check` finds in a model, as data, with the report it
/// prints.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CheckReport {
    /// Coordinates (3 per body).
    pub coordinates: usize,
    /// Constraint equations.
    pub constraints: usize,
    /// Rank of the constraint Jacobian at the assembled configuration.
    pub rank: usize,
    /// Degrees of freedom.
    pub degrees_of_freedom: usize,
    /// The redundant constraint rows, by label.
    pub redundant: Vec<String>,
    /// The joints of a singular configuration at t = 0, if any.
    pub singular: Vec<String>,
    /// Warnings on the input, the assembly and the run's start.
    pub warnings: Vec<String>,
    /// The report `jounce check` prints.
    pub text: String,
}

/// The formulations that can run the model, in the order of
/// [`FormulationKind::ALL`]: all of them but those its redundant
/// constraints rule out ([`FormulationKind::runs_redundant`]); then those
/// of them its integrator runs ([`crate::setup::incompatibility`]).
pub fn formulations_line(redundancy: &Redundancy, info: &MethodInfo) -> String {
    let can: Vec<FormulationKind> = FormulationKind::ALL
        .into_iter()
        .filter(|k| redundancy.is_empty() || k.runs_redundant())
        .collect();
    formulations_of(&can, info)
}

/// The line naming the formulations `can` and those of them the
/// integrator `info` runs.
pub(crate) fn formulations_of(can: &[FormulationKind], info: &MethodInfo) -> String {
    let names = |ks: &[FormulationKind]| ks.iter().map(|k| k.name()).collect::<Vec<_>>().join(", ");
    let with: Vec<FormulationKind> = can
        .iter()
        .copied()
        .filter(|k| crate::setup::incompatibility(info, k.name()).is_none())
        .collect();
    format!(
        "  formulations that can run this model: {}\n    of those, integrator '{}' runs: {}\n",
        names(can),
        info.name,
        names(&with)
    )
}

/// Validate and assemble `model`; return the report `jounce check` prints.
///
/// # Errors
/// [`RunError`] naming the file and element at fault.
pub fn check_model(model: &Model) -> Result<String, RunError> {
    check_report(model).map(|r| r.text)
}

/// Validate and assemble `model`: what it is (coordinates, constraints,
/// degrees of freedom, redundancy) and what a run of it would meet.
///
/// ```
/// let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/four_bar.toml");
/// let model = jounce_model::load_file(std::path::Path::new(file))?;
/// let report = jounce::check::check_report(&model)?;
/// assert_eq!(report.degrees_of_freedom, 1);
/// assert!(report.text.contains("degrees of freedom: 1"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`RunError`] naming the file and element at fault;
/// [`RunError::Check`] with the report so far when the run would fail.
pub fn check_report(model: &Model) -> Result<CheckReport, RunError> {
    if let Some(sm) = &model.spatial {
        return crate::spatial_check::spatial_check_report(model, sm);
    }
    // the run settings as `jounce run` would refuse them
    let (entry, opts, _) = validate_run_settings(model)?;
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
    let run_sys = crate::redundancy::RunSystem::new(model, &sys, &asm);
    let redundancy = &run_sys.redundancy;
    if redundancy.is_empty() {
        s.push_str("  no redundant constraints\n");
    } else {
        s.push_str(&format!(
            "  redundant constraints: {}\n",
            asm.redundant.join(", ")
        ));
        s.push_str(&redundancy.report());
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
    s.push_str("  assembly moved the bodies from the file's pose by:\n");
    for (name, dr, dth) in crate::warnings::body_moves(model, &sys.initial_q(), &asm.q) {
        s.push_str(&format!("    {name:<16} {dr:.3e} m, {dth:.3e} rad\n"));
    }
    s.push_str(
        "  constraint rows (multiplier λ: units, and the load it applies; see docs/conventions.md):\n",
    );
    for r in 0..sys.nc() {
        s.push_str(&format!(
            "    lambda[{}]: {}\n",
            sys.constraint_label(r),
            sys.constraint_row_meaning(r)
        ));
    }
    s.push_str(&format!(
        "  run settings: {} formulation, {} integrator{}, t_end = {} s, about {:.0} output rows\n",
        formulation_name(model.settings.formulation.kind),
        entry.info.name,
        opts.fixed_step
            .map_or_else(String::new, |h| format!(" with fixed step {h} s")),
        model.settings.t_end,
        crate::validate::output_rows(model)
    ));
    s.push_str(&formulations_line(redundancy, &entry.info));
    let mut warnings: Vec<String> = crate::warnings::input_warnings(model)
        .into_iter()
        .chain(crate::warnings::assembly_warnings(model, &sys, &asm))
        .collect();
    for w in &warnings {
        s.push_str(&format!("  warning: {w}\n"));
    }
    // the run's own start: the formulation at the assembled state, and a
    // fixed step's stability on its linearisation; the report so far is
    // kept for the user when it fails
    let start = run_sys
        .start(model, &asm)
        .map(|(mut form, y0)| fixed_step_verdict(model, entry, &opts, form.as_mut(), &y0));
    let text = match start {
        Err(e) => Err(RunError::Check {
            report: s,
            reason: e.to_string(),
        }),
        Ok(Some(msg)) => match model.settings.checks.on_failure {
            jounce_model::OnCheckFailure::Fail => Err(RunError::Check {
                report: s,
                reason: format!("{}: {msg}", model.source),
            }),
            jounce_model::OnCheckFailure::Warn => {
                s.push_str(&format!("  warning: {msg}\n"));
                warnings.push(msg);
                Ok(s)
            }
        },
        Ok(None) => Ok(s),
    }?;
    Ok(CheckReport {
        coordinates: sys.nq(),
        constraints: sys.nc(),
        rank: asm.rank,
        degrees_of_freedom: asm.dof,
        redundant: asm.redundant.clone(),
        singular: asm.singular.clone(),
        warnings,
        text,
    })
}
