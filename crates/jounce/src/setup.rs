//! From a loaded model to the objects of a run: the mechanical system, its
//! assembled initial state and a formulation. Every error names the model
//! file and the element.

use jounce_formulation::{provides, Formulation, FormulationSettings, LinearSolver, NAMES};
use jounce_integrate::method::{self, MethodInfo};
use jounce_mechanics::{
    assemble, diagnose_inconsistent_redundancy, Assembly, MechanicalSystem, PlanarSystem,
};
use jounce_model::{ForceKind, FormulationKind, LinearSolverKind, Model};

use crate::error::RunError;

/// The registry name of a formulation kind ([`FormulationKind::name`]).
pub fn formulation_name(kind: FormulationKind) -> &'static str {
    kind.name()
}

/// The formulation kind registered as `name` ([`FormulationKind`]'s
/// `FromStr`, ignoring case).
///
/// # Errors
/// [`RunError::Setup`] listing the known names and suggesting the nearest.
pub fn formulation_kind(name: &str) -> Result<FormulationKind, RunError> {
    name.parse()
        .map_err(|e: jounce_model::UnknownFormulation| RunError::Setup(e.to_string()))
}

/// Why the method described by `info` cannot run `formulation`, or `None`
/// when it can: it can when one of the forms the formulation offers
/// ([`jounce_formulation::provides`]) is among those the method accepts
/// ([`MethodInfo::accepts`]). The message names the formulations the
/// method can run and the methods that can run the formulation.
pub fn incompatibility(info: &MethodInfo, formulation: &str) -> Option<String> {
    let fits = |accepts: &[jounce_integrate::ProblemForm], f: &str| {
        provides(f).iter().any(|p| accepts.contains(p))
    };
    if fits(info.accepts(), formulation) {
        return None;
    }
    let usable: Vec<&str> = NAMES
        .iter()
        .copied()
        .filter(|f| fits(info.accepts(), f))
        .collect();
    let needs = if usable.is_empty() {
        "it runs none of the formulations".to_string()
    } else {
        format!("it needs one of the formulations {}", usable.join(", "))
    };
    let methods: Vec<&str> = method::all()
        .iter()
        .filter(|m| fits(m.info.accepts(), formulation))
        .map(|m| m.info.name)
        .collect();
    let hint = match methods.len() {
        0 => String::new(),
        1..=6 => format!(
            " (formulation '{formulation}' runs with {})",
            methods.join(", ")
        ),
        _ => {
            let forms: Vec<&str> = provides(formulation).iter().map(|f| f.label()).collect();
            format!(
                " (formulation '{formulation}' offers the form {}; the forms column of \
                 `jounce methods` shows which integrators accept it)",
                forms.join(", ")
            )
        }
    };
    Some(format!(
        "integrator '{}' cannot run formulation '{formulation}': {needs}{hint}",
        info.name
    ))
}

/// Refuse, before any work, a model whose integrator cannot run its
/// formulation (see [`incompatibility`]).
///
/// # Errors
/// [`RunError::Setup`] naming the model file: an unknown integrator, or
/// the pairing and what would work instead.
pub fn check_pairing(model: &Model) -> Result<(), RunError> {
    let entry = crate::validate::method_entry(model)?;
    match incompatibility(
        &entry.info,
        formulation_name(model.settings.formulation.kind),
    ) {
        None => Ok(()),
        Some(msg) => Err(RunError::Setup(format!("{}: {msg}", model.source))),
    }
}

/// The runtime system of a model.
///
/// # Errors
/// [`RunError::Setup`] naming the model file and the element.
pub fn build_system(model: &Model) -> Result<PlanarSystem, RunError> {
    if model.spatial.is_some() {
        return Err(RunError::Setup(format!(
            "{}: the model is spatial ([model] space = \"spatial\"); this command takes planar \
             models only so far (run, check, static, modes, compare, bench and sweep take spatial \
             ones; issue 33)",
            model.source
        )));
    }
    PlanarSystem::from_model(model).map_err(|e| RunError::Setup(format!("{}: {e}", model.source)))
}

/// Consistent initial positions and velocities at t = 0 from the model's
/// approximate initial configuration.
///
/// # Errors
/// [`RunError::Setup`] naming the joints that cannot be closed; when rows
/// dependent on others cannot be closed with them, it names those rows as
/// inconsistent redundant constraints
/// ([`diagnose_inconsistent_redundancy`]); a contact with Newton's
/// impact law that starts penetrated
/// ([`crate::penetration::refuse_penetrated_impacts`]).
pub fn assemble_model(model: &Model, sys: &PlanarSystem) -> Result<Assembly, RunError> {
    assemble_from(model, sys, &sys.initial_q(), &sys.initial_v())
}

/// [`assemble_model`] for any mechanical system from its file's
/// positions and velocities `q0`, `v0` (the spatial run and check assemble
/// through it too).
///
/// # Errors
/// As [`assemble_model`].
pub fn assemble_from<S: MechanicalSystem + ?Sized>(
    model: &Model,
    sys: &S,
    q0: &[f64],
    v0: &[f64],
) -> Result<Assembly, RunError> {
    let tol = model.settings.assembly_tol;
    let asm = assemble(sys, 0.0, q0, v0, tol).map_err(|e| {
        let redundancy = diagnose_inconsistent_redundancy(sys, 0.0, q0, v0, tol)
            .map(|rows| {
                let bad: Vec<String> = rows
                    .iter()
                    .filter(|r| !r.consistent)
                    .map(|r| format!("{}: {}", r.label, r.verdict()))
                    .collect();
                if bad.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; inconsistent redundant constraint(s): {} (a redundant row must hold \
                         wherever the rows it depends on hold: check the dimensions of the \
                         elements that close the loop twice)",
                        bad.join("; ")
                    )
                }
            })
            .unwrap_or_default();
        RunError::Setup(format!(
            "{}: assembly failed: {e}{redundancy}",
            model.source
        ))
    })?;
    crate::penetration::refuse_penetrated_impacts(model, sys, &asm.q)?;
    Ok(asm)
}

/// The formulation chosen in the model's settings.
///
/// # Errors
/// [`RunError::Setup`] when the formulation's parameters are invalid.
pub fn build_formulation<'a, S: MechanicalSystem + ?Sized>(
    model: &Model,
    sys: &'a S,
) -> Result<Box<dyn Formulation + 'a>, RunError> {
    jounce_formulation::build_kind(
        model.settings.formulation.kind,
        &formulation_settings(model),
        sys,
    )
    .map_err(|e| RunError::Setup(format!("{}: {e}", model.source)))
}

/// The formulation parameters of the model's settings (Baumgarte, penalty,
/// augmented-Lagrangian factors, linear solver).
pub fn formulation_settings(model: &Model) -> FormulationSettings {
    let f = &model.settings.formulation;
    FormulationSettings {
        baumgarte_alpha: f.baumgarte_alpha,
        baumgarte_beta: f.baumgarte_beta,
        penalty_factor: f.penalty_factor,
        penalty_omega: f.penalty_omega,
        penalty_xi: f.penalty_xi,
        al_penalty: f.al_penalty,
        linear_solver: match f.linear_solver {
            LinearSolverKind::Auto => LinearSolver::Auto,
            LinearSolverKind::Dense => LinearSolver::Dense,
            LinearSolverKind::Sparse => LinearSolver::Sparse,
        },
        ..FormulationSettings::default()
    }
}

/// Whether total energy is an invariant of the model: no dampers, drivers,
/// actuators, applied forces, torques or friction.
pub fn is_conservative(model: &Model) -> bool {
    if let Some(sm) = &model.spatial {
        // gravity and undamped springs are; loads, dampers, drivers and
        // bushings (whose rotational law is not exactly the gradient of
        // their potential) are not; contacts as planar ones
        return sm.drivers.is_empty()
            && sm.forces.iter().all(|f| match &f.kind {
                jounce_model::SpatialForceKind::SpringDamper {
                    damping,
                    actuator: None,
                    ..
                }
                | jounce_model::SpatialForceKind::RotationalSpring {
                    damping,
                    actuator: None,
                    ..
                } => *damping == 0.0,
                jounce_model::SpatialForceKind::Contact {
                    law,
                    damping,
                    friction,
                    ..
                } => match law {
                    jounce_model::ContactLaw::Impact { restitution } => *restitution == 1.0,
                    _ => *damping == 0.0 && friction.is_none_or(|f| f.coefficient == 0.0),
                },
                _ => false,
            });
    }
    model.drivers.is_empty()
        && model
            .joints
            .iter()
            .all(|j| j.friction.is_none_or(|f| f.coefficient == 0.0))
        && model.forces.iter().all(|f| match &f.kind {
            ForceKind::PointForce { .. } | ForceKind::Torque { .. } => false,
            ForceKind::SpringDamper {
                damping, actuator, ..
            }
            | ForceKind::RotationalSpring {
                damping, actuator, ..
            } => *damping == 0.0 && actuator.is_none(),
            // a penalty contact without damping stores and returns its
            // work; an impact conserves energy only at e = 1
            // and friction dissipates
            ForceKind::Contact {
                law,
                damping,
                friction,
                ..
            } => match law {
                jounce_model::ContactLaw::Impact { restitution } => *restitution == 1.0,
                _ => *damping == 0.0 && friction.is_none_or(|f| f.coefficient == 0.0),
            },
            ForceKind::Beam(beam) => beam.damping == 0.0,
        })
}
