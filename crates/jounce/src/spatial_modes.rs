//! `jounce modes` of a spatial model (`[model] space = "spatial"`): the
//! modes in the tangent space of its configurations at an equilibrium
//! ([`jounce_analysis::tangent_modes()`]), the mode shapes in each body's
//! translation (`body.x`, `.y`, `.z`, world frame) and rotation vector
//! (`body.rx`, `.ry`, `.rz`, body frame), and the integrator they call for,
//! as for a planar model.
//!
//! The linearisation holds at an equilibrium only (see
//! [`jounce_analysis::tangent_modes()`]): at the initial state when the
//! model starts there at rest, at the static equilibrium (`--static`);
//! a state of a run (`--at T`) is refused by name.
//!
//! Owns: the spatial modes path. Must not: change the planar one.

use jounce_analysis::{recommend, tangent_modes};
use jounce_mechanics::{assemble, MechanicalSystem, SpatialSystem};
use jounce_model::Model;

use crate::error::RunError;
use crate::modes::{LinearisationPoint, ModesReport};

/// What the coordinates of a spatial model's modes are, for the report.
pub(crate) const TANGENT_COORDINATES: &str =
    "the tangent space of the configurations: motions Δ of q ⊞ Δ with Φ_v Δ = 0; \
     shapes in each body's translation x, y, z (world) and rotation vector rx, ry, rz (body frame)";

/// [`crate::modes::modes_report`] of a spatial model.
///
/// # Errors
/// [`RunError::Setup`] naming the model file: the system, assembly, no
/// static equilibrium, `--at T`, a state that is not an equilibrium, or
/// a failed linearisation.
pub(crate) fn spatial_modes_report(
    model: &Model,
    at: LinearisationPoint,
) -> Result<ModesReport, RunError> {
    let src = &model.source;
    let sys =
        SpatialSystem::from_model(model).map_err(|e| RunError::Setup(format!("{src}: {e}")))?;
    let (q0, v0) = sys.initial_state();
    let asm = assemble(&sys, 0.0, &q0, &v0, model.settings.assembly_tol)
        .map_err(|e| RunError::Setup(format!("{src}: assembly failed: {e}")))?;
    // up front, before a static equilibrium: at least 2 (n_v − m) states
    let lower_bound = 2 * sys.nv().saturating_sub(sys.nc());
    if let Some(e) = jounce_analysis::modes_refusal(&sys, lower_bound) {
        return Err(RunError::Setup(format!("{src}: {e}")));
    }
    let (q, v, label) = match at {
        LinearisationPoint::Initial => (asm.q, asm.v, "initial state".to_string()),
        LinearisationPoint::Static => {
            let eq = jounce_analysis::static_equilibrium(&sys, 0.0, &asm.q)
                .map_err(|e| RunError::Setup(format!("{src}: {e}")))?;
            let label = format!("static equilibrium ({})", eq.stability());
            (eq.q, vec![0.0; sys.nv()], label)
        }
        LinearisationPoint::At(t_at) => {
            return Err(RunError::Setup(format!(
                "{src}: --at {t_at}: a spatial model's modes are linearised at an equilibrium \
                 only (in the tangent space of its rotations; a state of a run is not one): \
                 linearise at the static equilibrium (--static)"
            )))
        }
    };
    let analysis = tangent_modes(&sys, 0.0, &q, &v, &|i| sys.tangent_label(i))
        .map_err(|e| RunError::Setup(format!("{src}: {e}")))?;
    let recommendation = recommend(&analysis, model.settings.t_end, sys.nc() > 0);
    Ok(ModesReport {
        model: model.name.clone(),
        model_file: model.source.clone(),
        linearised_at: label,
        t_end: model.settings.t_end,
        analysis,
        recommendation,
        contacts: None,
        coordinates: Some(TANGENT_COORDINATES.to_string()),
    })
}
