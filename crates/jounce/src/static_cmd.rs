//! `jounce static`: the static equilibrium of a model
//! ([`jounce_analysis::static_equilibrium()`]: Newton on Φ_qᵀλ − Q = 0,
//! Φ = 0 with load stepping), printed and written as a state file a run
//! can start from (`jounce run --initial-state FILE`, or
//! `--from-static` to compute it on the fly).

use std::path::{Path, PathBuf};

use jounce_analysis::{static_equilibrium, StaticEquilibrium};
use jounce_mechanics::{MechanicalSystem, PlanarSystem, SpatialSystem};
use jounce_model::Model;
use serde::{Deserialize, Serialize};

use crate::error::RunError;
use crate::setup::{assemble_model, build_system};

/// Name of the state file `jounce static` writes.
pub const STATE_FILE: &str = "static_state.json";

/// Pose and velocity of one body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BodyState {
    /// Body name.
    pub name: String,
    /// Centre of mass x \[m\].
    pub x: f64,
    /// Centre of mass y \[m\].
    pub y: f64,
    /// Angle θ \[rad\].
    pub theta: f64,
    /// Velocity x [m/s].
    #[serde(default)]
    pub vx: f64,
    /// Velocity y [m/s].
    #[serde(default)]
    pub vy: f64,
    /// Angular velocity [rad/s].
    #[serde(default)]
    pub omega: f64,
}

/// A body's displacement from its initial (assembled) pose.
/// A spatial body at the equilibrium: centre of mass in the world frame,
/// the unit quaternion (w, x, y, z) of its orientation, and (zero at an
/// equilibrium; read back by `--initial-state`) the world velocity and the
/// body-frame angular velocity.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpatialBodyState {
    pub name: String,
    pub position: [f64; 3],
    pub orientation: [f64; 4],
    #[serde(default)]
    pub velocity: [f64; 3],
    #[serde(default)]
    pub angular_velocity: [f64; 3],
    /// Displacement of the centre of mass from the initial pose \[m\].
    #[serde(default)]
    pub displacement: [f64; 3],
    /// Angle of the rotation from the initial orientation to this one,
    /// 2 acos|p₀ᵀp| \[rad\].
    #[serde(default)]
    pub rotation: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Deflection {
    /// Body name.
    pub name: String,
    /// Δx \[m\].
    pub dx: f64,
    /// Δy \[m\].
    pub dy: f64,
    /// Δθ \[rad\].
    pub dtheta: f64,
}

/// The multiplier of one constraint row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reaction {
    /// Row label, e.g. `joint 'pin' (y)`.
    pub constraint: String,
    /// λ (N or N·m; sign convention of docs/conventions.md).
    pub lambda: f64,
}

/// The state file: the static equilibrium of a model, velocities zero.
/// Only `bodies` (`spatial_bodies`) is read back by `jounce run
/// --initial-state`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StateFile {
    /// jounce version that wrote it.
    #[serde(default)]
    pub jounce_version: String,
    /// What the state is ("static_equilibrium").
    #[serde(default)]
    pub kind: String,
    /// Model name.
    #[serde(default)]
    pub model: String,
    /// Model file.
    #[serde(default)]
    pub model_file: String,
    /// Time at which the equilibrium holds (drivers at their value then) \[s\].
    #[serde(default)]
    pub t: f64,
    /// Every planar body's pose (velocities zero; empty for a spatial
    /// model).
    #[serde(default)]
    pub bodies: Vec<BodyState>,
    /// Every spatial body's pose (absent for a planar model).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spatial_bodies: Vec<SpatialBodyState>,
    /// Displacement from the initial pose.
    #[serde(default)]
    pub deflection: Vec<Deflection>,
    /// Constraint reactions λ.
    #[serde(default)]
    pub reactions: Vec<Reaction>,
    /// "stable", "neutral" or "unstable".
    #[serde(default)]
    pub stability: String,
    /// Newton iterations.
    #[serde(default)]
    pub newton_iterations: usize,
    /// Load steps (0: plain Newton converged).
    #[serde(default)]
    pub load_steps: usize,
    /// ‖Φ_qᵀλ − Q‖∞ \[N\].
    #[serde(default)]
    pub force_residual: f64,
    /// ‖Φ‖∞.
    #[serde(default)]
    pub constraint_residual: f64,
    /// What makes the equilibrium doubtful (beams beyond their
    /// small-strain range, [`crate::beam_strain`]); absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The static equilibrium of `model` at t = 0, from its assembled initial
/// configuration, with the system it was computed on.
///
/// # Errors
/// [`RunError::Setup`] naming the model file: assembly failures and
/// "no static equilibrium: ..." (a body without support, or no
/// convergence).
pub fn static_equilibrium_of(
    model: &Model,
) -> Result<(PlanarSystem, Vec<f64>, StaticEquilibrium), RunError> {
    let sys = build_system(model)?;
    let asm = assemble_model(model, &sys)?;
    let eq = static_equilibrium(&sys, 0.0, &asm.q)
        .map_err(|e| RunError::Setup(format!("{}: {e}", model.source)))?;
    Ok((sys, asm.q, eq))
}

/// The state file of the static equilibrium of `model`.
///
/// # Errors
/// As [`static_equilibrium_of`].
pub fn static_state(model: &Model) -> Result<StateFile, RunError> {
    if model.spatial.is_some() {
        return spatial_static_state(model);
    }
    let (sys, q0, eq) = static_equilibrium_of(model)?;
    let names = sys.body_names();
    let bodies = names
        .iter()
        .enumerate()
        .map(|(i, name)| BodyState {
            name: name.clone(),
            x: eq.q[3 * i],
            y: eq.q[3 * i + 1],
            theta: eq.q[3 * i + 2],
            vx: 0.0,
            vy: 0.0,
            omega: 0.0,
        })
        .collect();
    let deflection = names
        .iter()
        .enumerate()
        .map(|(i, name)| Deflection {
            name: name.clone(),
            dx: eq.q[3 * i] - q0[3 * i],
            dy: eq.q[3 * i + 1] - q0[3 * i + 1],
            dtheta: eq.q[3 * i + 2] - q0[3 * i + 2],
        })
        .collect();
    let reactions = reactions(&sys, &eq.lambda);
    Ok(StateFile {
        jounce_version: env!("CARGO_PKG_VERSION").to_string(),
        kind: "static_equilibrium".into(),
        model: model.name.clone(),
        model_file: model.source.clone(),
        t: 0.0,
        bodies,
        spatial_bodies: Vec::new(),
        deflection,
        reactions,
        stability: eq.stability().to_string(),
        newton_iterations: eq.iterations,
        load_steps: eq.load_steps,
        force_residual: eq.force_residual,
        constraint_residual: eq.constraint_residual,
        warnings: crate::beam_strain::beam_strain_warnings(
            model,
            &sys,
            &eq.q,
            "at the static equilibrium",
        ),
    })
}

/// Each constraint row's λ with the row's label.
fn reactions(sys: &dyn MechanicalSystem, lambda: &[f64]) -> Vec<Reaction> {
    lambda
        .iter()
        .enumerate()
        .map(|(r, &l)| Reaction {
            constraint: sys.constraint_label(r),
            lambda: l,
        })
        .collect()
}

/// [`static_state`] of a spatial model: the equilibrium on its unit
/// quaternions ([`static_equilibrium()`] moves them by the exponential
/// map), from the model's initial pose.
fn spatial_static_state(model: &Model) -> Result<StateFile, RunError> {
    let sys = SpatialSystem::from_model(model)
        .map_err(|e| RunError::Setup(format!("{}: {e}", model.source)))?;
    let (q0, _) = sys.initial_state();
    let eq = static_equilibrium(&sys, 0.0, &q0)
        .map_err(|e| RunError::Setup(format!("{}: {e}", model.source)))?;
    let spatial_bodies = (0..sys.body_count())
        .map(|b| {
            let at = |q: &[f64]| -> ([f64; 3], [f64; 4]) {
                let o = 7 * b;
                (
                    [q[o], q[o + 1], q[o + 2]],
                    [q[o + 3], q[o + 4], q[o + 5], q[o + 6]],
                )
            };
            let ((r, p), (r0, p0)) = (at(&eq.q), at(&q0));
            let cos_half = (0..4).map(|k| p[k] * p0[k]).sum::<f64>().abs().min(1.0);
            SpatialBodyState {
                name: sys.body_name(b).to_string(),
                position: r,
                orientation: p,
                velocity: [0.0; 3],
                angular_velocity: [0.0; 3],
                displacement: std::array::from_fn(|k| r[k] - r0[k]),
                rotation: 2.0 * cos_half.acos(),
            }
        })
        .collect();
    let reactions = reactions(&sys, &eq.lambda);
    Ok(StateFile {
        jounce_version: env!("CARGO_PKG_VERSION").to_string(),
        kind: "static_equilibrium".into(),
        model: model.name.clone(),
        model_file: model.source.clone(),
        t: 0.0,
        bodies: Vec::new(),
        spatial_bodies,
        deflection: Vec::new(),
        reactions,
        stability: eq.stability().to_string(),
        newton_iterations: eq.iterations,
        load_steps: eq.load_steps,
        force_residual: eq.force_residual,
        constraint_residual: eq.constraint_residual,
        warnings: Vec::new(),
    })
}

/// The printed report of a static equilibrium.
pub fn static_text(s: &StateFile) -> String {
    let mut out = format!(
        "{} ({}): static equilibrium at t = {} s ({}), {} Newton iterations, {} load steps; \
         residuals {:.2e} (forces), {:.2e} (constraints)\n",
        s.model,
        s.model_file,
        s.t,
        s.stability,
        s.newton_iterations,
        s.load_steps,
        s.force_residual,
        s.constraint_residual
    );
    for w in &s.warnings {
        out.push_str(&format!("  warning: {w}\n"));
    }
    if !s.bodies.is_empty() {
        out.push_str(&format!(
            "  {:<20} {:>14} {:>14} {:>12} {:>14} {:>14} {:>12}\n",
            "body", "x [m]", "y [m]", "theta [rad]", "dx [m]", "dy [m]", "dtheta [rad]"
        ));
    }
    for (b, d) in s.bodies.iter().zip(&s.deflection) {
        out.push_str(&format!(
            "  {:<20} {:>14.9} {:>14.9} {:>12.8} {:>14.6e} {:>14.6e} {:>12.4e}\n",
            b.name, b.x, b.y, b.theta, d.dx, d.dy, d.dtheta
        ));
    }
    if !s.spatial_bodies.is_empty() {
        out.push_str(&format!(
            "  {:<20} {:>13} {:>13} {:>13} {:>40} {:>11} {:>14}\n",
            "body (spatial)",
            "x [m]",
            "y [m]",
            "z [m]",
            "orientation (w, x, y, z)",
            "|d| [m]",
            "rotation [rad]"
        ));
    }
    for b in &s.spatial_bodies {
        let [x, y, z] = b.position;
        let [w, i, j, k] = b.orientation;
        let d = b.displacement.iter().map(|v| v * v).sum::<f64>().sqrt();
        out.push_str(&format!(
            "  {:<20} {x:>13.9} {y:>13.9} {z:>13.9} {:>40} {d:>11.4e} {:>14.6e}\n",
            b.name,
            format!("({w:.7}, {i:.7}, {j:.7}, {k:.7})"),
            b.rotation
        ));
    }
    if !s.reactions.is_empty() {
        out.push_str("  constraint reactions (lambda; M q'' + Phi_q^T lambda = Q):\n");
        for r in &s.reactions {
            out.push_str(&format!("    {:<40} {:>16.8e}\n", r.constraint, r.lambda));
        }
    }
    out
}

/// Write the state file into `dir` (created if needed); returns its path.
///
/// # Errors
/// [`RunError::Io`] naming the file.
pub fn write_state(s: &StateFile, dir: &Path) -> Result<PathBuf, RunError> {
    std::fs::create_dir_all(dir).map_err(|e| RunError::Io(jounce_io::IoError::new(dir, e)))?;
    let path = dir.join(STATE_FILE);
    let text = serde_json::to_string_pretty(s)
        .map_err(|e| RunError::Setup(format!("cannot encode the state file: {e}")))?;
    std::fs::write(&path, text + "\n")
        .map_err(|e| RunError::Io(jounce_io::IoError::new(&path, e)))?;
    Ok(path)
}

/// Read a state file written by `jounce static`.
///
/// # Errors
/// [`RunError::Io`] or [`RunError::Setup`] naming the file and what is
/// wrong with it.
pub fn read_state(path: &Path) -> Result<StateFile, RunError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| RunError::Io(jounce_io::IoError::new(path, e)))?;
    let s: StateFile = serde_json::from_str(&text).map_err(|e| {
        RunError::Setup(format!(
            "{}: not a jounce state file (as `jounce static` writes): {e}",
            path.display()
        ))
    })?;
    Ok(s)
}

/// Set every body's initial pose and velocity in `model` from `state`.
///
/// # Errors
/// [`RunError::Setup`] when a body of the model is missing from the state,
/// the state names a body the model does not have, or a value is not
/// finite.
pub fn apply_state(model: &mut Model, state: &StateFile, origin: &str) -> Result<(), RunError> {
    if let Some(sm) = model.spatial.as_mut() {
        return apply_spatial_state(sm, &model.source, state, origin);
    }
    if !state.spatial_bodies.is_empty() {
        return Err(RunError::Setup(format!(
            "{origin}: a spatial state cannot start the planar model {}",
            model.source
        )));
    }
    for b in &state.bodies {
        if !model.bodies.iter().any(|mb| mb.name == b.name) {
            return Err(RunError::Setup(format!(
                "{origin}: body '{}' is not in the model {}",
                b.name, model.source
            )));
        }
        let v = [b.x, b.y, b.theta, b.vx, b.vy, b.omega];
        if v.iter().any(|x| !x.is_finite()) {
            return Err(RunError::Setup(format!(
                "{origin}: body '{}': non-finite pose or velocity",
                b.name
            )));
        }
    }
    for mb in &mut model.bodies {
        let Some(b) = state.bodies.iter().find(|b| b.name == mb.name) else {
            return Err(RunError::Setup(format!(
                "{origin}: no state for body '{}' of {}",
                mb.name, model.source
            )));
        };
        mb.position = [b.x, b.y];
        mb.angle = b.theta;
        mb.velocity = [b.vx, b.vy];
        mb.angular_velocity = b.omega;
    }
    Ok(())
}

/// [`apply_state`] for a spatial model: position, orientation (normalised)
/// and velocities of every body.
fn apply_spatial_state(
    sm: &mut jounce_model::SpatialModel,
    source: &str,
    state: &StateFile,
    origin: &str,
) -> Result<(), RunError> {
    if state.spatial_bodies.is_empty() {
        return Err(RunError::Setup(format!(
            "{origin}: a planar state cannot start the spatial model {source}"
        )));
    }
    for b in &state.spatial_bodies {
        if !sm.bodies.iter().any(|mb| mb.name == b.name) {
            return Err(RunError::Setup(format!(
                "{origin}: body '{}' is not in the model {source}",
                b.name
            )));
        }
        let norm = b.orientation.iter().map(|x| x * x).sum::<f64>().sqrt();
        let finite = b
            .position
            .iter()
            .chain(&b.orientation)
            .chain(&b.velocity)
            .chain(&b.angular_velocity)
            .all(|x| x.is_finite());
        if !finite || !(norm > 0.5) {
            return Err(RunError::Setup(format!(
                "{origin}: body '{}': non-finite pose or velocity, or no orientation",
                b.name
            )));
        }
    }
    for mb in &mut sm.bodies {
        let Some(b) = state.spatial_bodies.iter().find(|b| b.name == mb.name) else {
            return Err(RunError::Setup(format!(
                "{origin}: no state for body '{}' of {source}",
                mb.name
            )));
        };
        let norm = b.orientation.iter().map(|x| x * x).sum::<f64>().sqrt();
        mb.position = b.position;
        mb.orientation = b.orientation.map(|x| x / norm);
        mb.velocity = b.velocity;
        mb.angular_velocity = b.angular_velocity;
    }
    Ok(())
}
