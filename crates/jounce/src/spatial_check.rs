//! `jounce check` of a spatial model: the system built and assembled, its
//! bodies, joints and force elements, coordinates and degrees of freedom,
//! its redundant rows (their consistency, the rows they depend on, who
//! runs them: [`crate::redundancy`], as in a planar check), and the run's
//! start (settings, formulation; an inconsistent redundant row or
//! redundancy under `joint` refused as a run refuses it) — the planar
//! report's content without its planar-only parts (bodies' moves in x, y,
//! θ, fixed-step stability); contacts that start penetrated are refused or
//! warned as in a planar check ([`crate::penetration`]).
//!
//! Owns: the spatial check report. Must not: change a planar check.

use jounce_mechanics::spatial::body::NQ_BODY;
use jounce_mechanics::{MechanicalSystem, SpatialSystem};
use jounce_model::{BodyRef, Model, SpatialForceKind, SpatialJointKind, SpatialModel};

use crate::check::CheckReport;
use crate::error::RunError;
use crate::redundancy::RunSystem;
use crate::setup::formulation_name;
use crate::validate::validate_run_settings;
use jounce_model::FormulationKind;

/// Largest model (in bodies) whose formulations `check` builds and starts
/// to list those that run it; beyond, the factory's rules decide.
const CHECK_BUILD_BODIES: usize = 100;

fn body_name(sm: &SpatialModel, b: BodyRef) -> &str {
    match b {
        BodyRef::Ground => "ground",
        BodyRef::Body(i) => &sm.bodies[i].name,
    }
}

/// What `jounce check` finds in a spatial model.
///
/// # Errors
/// [`RunError`] naming the file and element at fault;
/// [`RunError::Check`] with the report so far when the run would fail.
pub(crate) fn spatial_check_report(
    model: &Model,
    sm: &SpatialModel,
) -> Result<CheckReport, RunError> {
    let (entry, _, _) = validate_run_settings(model)?;
    let sys = SpatialSystem::from_model(model)
        .map_err(|e| RunError::Setup(format!("{}: {e}", model.source)))?;
    let (q0, v0) = sys.initial_state();
    // assembled as a planar model is: rows that cannot be closed named
    // as inconsistent redundant constraints where they are, an impact
    // contact that starts penetrated refused (its gap never closes)
    let asm = crate::setup::assemble_from(model, &sys, &q0, &v0)?;
    let warnings = crate::penetration::penalty_penetration_warnings(model, &sys, &asm.q);
    let mut s = String::new();
    s.push_str(&format!(
        "model '{}' ({}), spatial\n",
        model.name, model.source
    ));
    s.push_str(&format!("  bodies ({}):\n", sm.bodies.len()));
    for b in &sm.bodies {
        let j = b.inertia;
        s.push_str(&format!(
            "    {:<16} m = {} kg, J = diag({}, {}, {}) kg m^2\n",
            b.name, b.mass, j[0][0], j[1][1], j[2][2]
        ));
    }
    s.push_str(&format!("  joints ({}):\n", sm.joints.len()));
    for j in &sm.joints {
        let kind = match j.kind {
            SpatialJointKind::Spherical { .. } => "spherical",
            SpatialJointKind::Revolute { .. } => "revolute",
            SpatialJointKind::Universal { .. } => "universal",
            SpatialJointKind::Cylindrical { .. } => "cylindrical",
            SpatialJointKind::Prismatic { .. } => "prismatic",
            SpatialJointKind::Fixed { .. } => "fixed",
            SpatialJointKind::Distance { .. } => "distance",
            SpatialJointKind::PointOnLine { .. } => "point_on_line",
        };
        let (a, b) = j.kind.attachments();
        s.push_str(&format!(
            "    {:<16} {:<13} {} - {}\n",
            j.name,
            kind,
            body_name(sm, a.body),
            body_name(sm, b.body)
        ));
    }
    if !sm.drivers.is_empty() {
        s.push_str(&format!("  drivers ({}):\n", sm.drivers.len()));
        for d in &sm.drivers {
            s.push_str(&format!(
                "    {:<16} joint '{}'\n",
                d.name, sm.joints[d.joint].name
            ));
        }
    }
    if !sm.forces.is_empty() {
        s.push_str(&format!("  force elements ({}):\n", sm.forces.len()));
        for f in &sm.forces {
            let kind = match f.kind {
                SpatialForceKind::PointForce { .. } => "point_force",
                SpatialForceKind::Torque { .. } => "torque",
                SpatialForceKind::SpringDamper { .. } => "spring_damper",
                SpatialForceKind::RotationalSpring { .. } => "rotational_spring",
                SpatialForceKind::Bushing { .. } => "bushing",
                SpatialForceKind::Contact { .. } => "contact",
            };
            s.push_str(&format!("    {:<16} {kind}\n", f.name));
        }
    }
    s.push_str(&format!(
        "  {} coordinates ({} velocities), {} constraint equations (rank {}), degrees of freedom: {}\n",
        sys.nq(),
        sys.nv(),
        sys.nc(),
        asm.rank,
        asm.dof
    ));
    // redundant rows analysed as in a planar check: their consistency,
    // the rows they depend on, who runs them
    let run_sys = RunSystem::new(model, &sys, &asm);
    if run_sys.redundancy.is_empty() {
        s.push_str("  no redundant constraints\n");
    } else {
        s.push_str(&format!(
            "  redundant constraints: {}\n",
            asm.redundant.join(", ")
        ));
        s.push_str(&run_sys.redundancy.report());
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
        "  run settings: {} formulation, {} integrator, t_end = {} s, about {:.0} output rows\n",
        formulation_name(model.settings.formulation.kind),
        entry.info.name,
        model.settings.t_end,
        crate::validate::output_rows(model)
    ));
    // the formulations that take this system: the factory's rules
    // (positions that are not velocities, friction), partitioning and
    // state_space only with degrees of freedom, with redundant rows those
    // that run them (all but joint); the others' build and start (on the
    // independent rows where a run builds them there) are tried where
    // that is cheap (a model of up to CHECK_BUILD_BODIES bodies:
    // partitioning of the 1000-body chain factors a dense 6000 × 7000
    // Jacobian)
    let small = sys.nq() / NQ_BODY <= CHECK_BUILD_BODIES;
    let can: Vec<FormulationKind> = FormulationKind::ALL
        .into_iter()
        .filter(|&k| {
            jounce_formulation::admits(k, &sys).is_ok()
                && !(asm.dof == 0
                    && matches!(
                        k,
                        FormulationKind::Partitioning | FormulationKind::StateSpace
                    ))
                && (run_sys.redundancy.is_empty() || k.runs_redundant())
                && (!small || run_sys.starts(model, k, &asm))
        })
        .collect();
    s.push_str(&crate::check::formulations_of(&can, &entry.info));
    for w in &warnings {
        s.push_str(&format!("  warning: {w}\n"));
    }
    // the run's own start: refused (inconsistent redundant rows, joint),
    // or built and started as the run does it
    if let Err(e) = run_sys.start(model, &asm) {
        return Err(RunError::Check {
            report: s,
            reason: e.to_string(),
        });
    }
    Ok(CheckReport {
        coordinates: sys.nq(),
        constraints: sys.nc(),
        rank: asm.rank,
        degrees_of_freedom: asm.dof,
        redundant: asm.redundant.clone(),
        singular: asm.singular.clone(),
        warnings,
        text: s,
    })
}
