//! The run of a spatial model (`[model] space = "spatial"`): the same
//! pipeline as a planar run — settings validated, the system built and
//! assembled, the formulation built, the integration streamed through the
//! run's observer, the summary — with the planar run's trust watches:
//!
//! - the solution checks (non-finite values, energy growth beyond the
//!   work put in, constraint drift, an impact contact passed through, a
//!   penalty contact pressed beyond its sphere's radius;
//!   [`crate::trust::SolutionChecks`]) and the breakpoints stepped across;
//! - contacts that start penetrated: an impact contact refused, a penalty
//!   contact deeper than an elastic indentation warned
//!   ([`crate::penetration`]);
//! - a fixed explicit step beyond the stability limit of the
//!   linearisation at t = 0 ([`crate::validate::fixed_step_verdict`]);
//! - the global error estimate (`settings.checks.error_estimate`,
//!   [`crate::error_estimate`]) and its accuracy warning, the run's
//!   positions and velocities compared with a second run's, each body's
//!   unit quaternion up to sign (p and −p are one rotation; with signs
//!   aligned |Δp| = 2 sin(θ/4), θ the angle between the two
//!   orientations); calibrated on the heavy top, the tumbling body and
//!   the spatial double pendulum (`tests/suite/spatial_error_estimate.rs`:
//!   estimate / true error 0.98 to 1.29 over 27 runs).
//!
//! - the singular-configuration monitor (singular configurations, branch
//!   switches, lock-up; [`jounce_analysis::SingularityMonitor`]) on Φ_v
//!   and the velocities, grouped into bodies by their labels
//!   ([`jounce_mechanics::MechanicalSystem::velocity_label`]);
//! - redundant joints, as in a planar run and through the same code
//!   ([`crate::redundancy::RunSystem`]): an inconsistent redundant row is
//!   refused by name before integrating (at assembly when the rows cannot
//!   be closed together); the formulations that need Φ_q of full row rank
//!   run on the independent rows, penalty and augmented_lagrangian on all
//!   rows, `joint` refuses the model naming the rows; the multipliers
//!   written, and the joints' loads computed from them, are the
//!   minimum-norm ones over all rows (a pair of identical joints shares
//!   its load equally), with the note that they are not unique
//!   (`tests/suite/spatial_redundant.rs`).
//!
//! Not yet: beam strains (no spatial beams). Contacts themselves run
//! as in a planar run: their gaps are the system's switching functions,
//! located as events and followed by the impact law's impulse by
//! whichever formulation runs the model, with `gap` and `normal_force`
//! columns. The model's size is from the spatial bodies.
//!
//! Formulations: `augmented`, `projection` and `penalty` (the ODE in
//! y = [q; v] with q' = T(q) v), `index3` and `ggl` (the DAE with
//! q' − T(q) v = 0 for radau5 and bdf; index3 also for the structural
//! methods, which update rotations by the exponential map) and
//! `augmented_lagrangian` (the same exponential-map update), `odae` (the
//! quaternions' norms among its invariants), `partitioning` and
//! `state_space` (the quaternions among the constrained coordinates),
//! `joint` (joint coordinates of the kinematic tree, a free joint with a
//! unit quaternion at the root of each body not joined to ground,
//! q' = T(q) v, [`jounce_mechanics::SpatialJointSystem`]).
//! The positions reported are always on |p| = 1.
//!
//! Output columns: `t`, each body's `x, y, z` (centre of mass, world) and
//! quaternion `qw, qx, qy, qz`, then its velocities `vx, vy, vz` (world)
//! and angular velocity `wx, wy, wz` (**body frame**), energies,
//! constraint violations and multipliers, as a planar run's; then, for
//! each body, its orientation as Tait–Bryan angles `yaw_zyx, pitch_zyx,
//! roll_zyx` (A = R_z(yaw) R_y(pitch) R_x(roll), URDF's roll-pitch-yaw;
//! [`jounce_mechanics::spatial::quaternion::euler_zyx`]) and its angular
//! velocity in the world frame `wx_world, wy_world, wz_world` (A ω');
//! then, for each joint, the load it applies to its second body at that
//! body's joint point, world frame: `fx, fy, fz, mx, my, mz`, a driven
//! joint's including its drivers' ([`SpatialSystem::joint_reactions`]
//! with the multipliers of the row: the minimum-norm ones over all rows
//! for a model with redundant joints).
//!
//! Owns: the spatial run path. Must not: change a planar run.

use std::time::Instant;

use jounce_io::RunSummary;
use jounce_mechanics::spatial::body::{NQ_BODY, NV_BODY};
use jounce_mechanics::spatial::quaternion::{euler_zyx, mat_vec, rotation};
use jounce_mechanics::{MechanicalSystem, SpatialSystem};
use jounce_model::Model;

use crate::error::RunError;
use crate::observer::{timeseries_header_with_velocities, RunObserver};
use crate::redundancy::RunSystem;
use crate::run::Output;
use crate::sink::RowSink;

/// The columns each body adds after a run's own: orientation angles, then
/// the world-frame angular velocity.
const DERIVED: [&str; 6] = [
    "yaw_zyx",
    "pitch_zyx",
    "roll_zyx",
    "wx_world",
    "wy_world",
    "wz_world",
];

/// The columns each joint adds after the bodies': its load on its second
/// body (force, moment about the joint point; world frame).
const REACTION: [&str; 6] = ["fx", "fy", "fz", "mx", "my", "mz"];

/// Columns of a run's own before the multipliers, after t, q and v:
/// energies and violations ([`timeseries_header_with_velocities`]).
const BEFORE_MULTIPLIERS: usize = 5;

/// The time series of a spatial run with each body's Tait–Bryan angles and
/// world angular velocity appended to every row (into one buffer: nothing
/// is allocated per row after the first).
struct SpatialColumns<'s> {
    inner: &'s mut dyn RowSink,
    sys: &'s SpatialSystem,
    /// The joints' loads of the current row (6 per joint).
    reactions: Vec<f64>,
    /// Body names, in body order.
    bodies: Vec<String>,
    /// n_q: where the velocities start, after `t` and the positions.
    nq: usize,
    row: Vec<f64>,
}

impl RowSink for SpatialColumns<'_> {
    fn begin(&mut self, columns: &[String]) -> Result<(), RunError> {
        let mut all = columns.to_vec();
        for name in &self.bodies {
            all.extend(DERIVED.iter().map(|c| format!("{name}.{c}")));
        }
        for j in 0..self.sys.joint_count() {
            let name = self.sys.joint_name(j);
            all.extend(REACTION.iter().map(|c| format!("{name}.{c}")));
        }
        self.inner.begin(&all)
    }

    fn row(&mut self, values: &[f64]) -> Result<(), RunError> {
        self.row.clear();
        self.row.extend_from_slice(values);
        for b in 0..self.bodies.len() {
            let q = 1 + NQ_BODY * b;
            let w = 1 + self.nq + NV_BODY * b + 3;
            let (Some(p), Some(omega)) = (values.get(q + 3..q + 7), values.get(w..w + 3)) else {
                return Err(RunError::Setup(format!(
                    "a spatial output row of {} values has no body {b}",
                    values.len()
                )));
            };
            let p = [p[0], p[1], p[2], p[3]];
            self.row.extend(euler_zyx(&p));
            self.row
                .extend(mat_vec(&rotation(&p), &[omega[0], omega[1], omega[2]]));
        }
        let nv = NV_BODY * self.bodies.len();
        let lambda0 = 1 + self.nq + nv + BEFORE_MULTIPLIERS;
        let (Some(q), Some(lambda)) = (
            values.get(1..1 + self.nq),
            values.get(lambda0..lambda0 + self.sys.nc()),
        ) else {
            return Err(RunError::Setup(format!(
                "a spatial output row of {} values has no multipliers",
                values.len()
            )));
        };
        self.reactions.resize(6 * self.sys.joint_count(), 0.0);
        self.sys
            .joint_reactions(values[0], q, lambda, &mut self.reactions);
        self.row.extend_from_slice(&self.reactions);
        self.inner.row(&self.row)
    }

    fn finish(&mut self) -> Result<(), RunError> {
        self.inner.finish()
    }

    fn rows(&self) -> u64 {
        self.inner.rows()
    }
}

/// Integrate a spatial model, streaming to `output`; as
/// [`crate::run::integrate_model`] for planar ones.
pub(crate) fn integrate_spatial_model(
    model: &Model,
    output: Output<'_>,
    wall: Instant,
) -> Result<RunSummary, RunError> {
    let (entry, opts, mut stepper) = crate::validate::validate_run_settings(model)?;
    let sys = SpatialSystem::from_model(model)
        .map_err(|e| RunError::Setup(format!("{}: {e}", model.source)))?;
    let (q0, v0) = sys.initial_state();
    // assembled as a planar model is: rows that cannot be closed named
    // as inconsistent redundant constraints where they are, an impact
    // contact that starts penetrated refused (its gap never closes)
    let asm = crate::setup::assemble_from(model, &sys, &q0, &v0)?;
    // redundant rows: refused when inconsistent or under `joint`; else the
    // formulation runs on the independent rows when it needs them, as in
    // a planar run
    let run_sys = RunSystem::new(model, &sys, &asm);
    let (mut form, y0) = run_sys.start(model, &asm)?;
    let mut diagnostics: Vec<String> =
        crate::penetration::penalty_penetration_warnings(model, &sys, &asm.q)
            .into_iter()
            .map(|w| format!("input warning: {w}"))
            .collect();
    diagnostics.extend(run_sys.redundancy.reactions_note());
    // a fixed explicit step beyond the stability limit of the
    // linearisation at t = 0, as in a planar run
    if let Some(msg) = crate::validate::fixed_step_verdict(model, entry, &opts, form.as_mut(), &y0)
    {
        match model.settings.checks.on_failure {
            jounce_model::OnCheckFailure::Fail => {
                return Err(RunError::Setup(format!(
                    "{}: {msg} (settings.checks.on_failure = \"warn\" runs it anyway)",
                    model.source
                )))
            }
            jounce_model::OnCheckFailure::Warn => {
                diagnostics.push(format!("stability warning: {msg}"))
            }
        }
    }
    let Output {
        timeseries,
        steps,
        progress,
    } = output;
    // an error estimate keeps the run's positions and velocities to compare
    // them with the second run's, the quaternions up to sign
    let layout = crate::error_estimate::StateLayout {
        nq: sys.nq(),
        nv: sys.nv(),
        quaternions: (0..sys.nq() / NQ_BODY).map(|b| NQ_BODY * b + 3).collect(),
    };
    let mut recorder = None;
    let timeseries: &mut dyn RowSink = if model.settings.checks.error_estimate {
        recorder.insert(crate::error_estimate::StateRecorder::new(
            timeseries,
            1 + layout.len(),
        ))
    } else {
        timeseries
    };
    let velocities: Vec<String> = (0..sys.nv()).map(|i| sys.velocity_label(i)).collect();
    let mut timeseries = SpatialColumns {
        inner: timeseries,
        sys: &sys,
        reactions: Vec::new(),
        bodies: (0..sys.nq() / NQ_BODY)
            .map(|b| {
                let label = sys.coordinate_label(NQ_BODY * b);
                label.strip_suffix(".x").unwrap_or(&label).to_string()
            })
            .collect(),
        nq: sys.nq(),
        row: Vec::new(),
    };
    let timeseries = &mut timeseries;
    timeseries.begin(&timeseries_header_with_velocities(&sys, &velocities))?;
    if model.settings.step_history {
        steps.begin(&crate::observer::STEPS_HEADER.map(String::from))?;
    }
    let steps = model
        .settings
        .step_history
        .then_some(steps as &mut dyn crate::sink::RowSink);
    let progress = progress.map(|p| p as &mut dyn crate::sink::Progress);
    let mut obs = RunObserver::new(&sys, timeseries, model.settings.t_end, progress);
    obs.steps = steps;
    // the multipliers written (and the joints' loads from them) are the
    // minimum-norm ones over all rows when the model has redundant rows
    obs.reactions = run_sys.reactions(model);
    obs.cost_from = model
        .settings
        .cost_from
        .map(crate::observer::SubintervalCost::new);
    obs.energy_per_step = !crate::setup::is_conservative(model);
    // the solution checks (non-finite values, energy growth beyond the
    // work put in, constraint violation beyond 1 % of the model's size)
    // and the breakpoints stepped across, as in a planar run
    obs.checks = Some(crate::trust::SolutionChecks::new(model, sys.nc()));
    obs.crossings = crate::trust::BreakpointCrossings::new(model);
    obs.warn_on_switch = model.settings.checks.on_failure == jounce_model::OnCheckFailure::Warn;
    // singular configurations, branch switches and lock-up at every
    // accepted step, as in a planar run (in velocity space: Φ_v, diag(M)
    // of the 6 velocities of each body)
    let mut mon =
        jounce_analysis::SingularityMonitor::new(&sys, 0.0, &asm.q, run_sys.redundancy.rows.len());
    mon.set_conservative(crate::setup::is_conservative(model));
    mon.set_energy_bound(opts.fixed_step.is_none().then_some(opts.rtol));
    mon.set_horizon(model.settings.t_end, opts.max_steps);
    obs.singular = Some(mon);
    let result = jounce_integrate::solve(
        form.as_mut(),
        stepper.as_mut(),
        0.0,
        &y0,
        model.settings.t_end,
        &opts,
        &mut obs,
    );
    obs.finish()?;
    let (stats, t_reached) = match &result {
        Ok(s) => (s.stats, s.t),
        Err(f) => (f.stats, f.t),
    };
    let explained =
        crate::run::explain_failure(model, entry, &opts, &result, &mut obs, &sys, t_reached);
    diagnostics.extend(crate::run::run_diagnostics(entry, &stats, &obs));
    let accuracy = crate::run::accuracy_summary(model, &obs);
    let output_rows = obs.rows();
    let cost_from = obs.cost_from.as_ref().map(|c| c.summary());
    let extremes = obs.extremes;
    let interrupted = obs.interrupted;
    drop(obs);
    // the estimate: the model run again into memory (`work` stays this
    // run's integration alone)
    let estimate = match (&result, recorder) {
        (Ok(_), Some(r)) => Some(crate::error_estimate::estimate(
            model,
            &entry.info,
            &r.kept,
            &layout,
            stats.n_accept,
        )),
        _ => None,
    };
    diagnostics.extend(crate::run::accuracy_diagnostics(
        model,
        &opts,
        &stats,
        &extremes,
        estimate.as_ref(),
    ));
    let mut accuracy = accuracy;
    accuracy.estimated_global_error = estimate.as_ref().and_then(|e| e.estimated_global_error);
    accuracy.error_estimate = estimate;
    let summary = RunSummary {
        formulation: crate::run::formulation_summary(model, form.name()),
        degrees_of_freedom: asm.dof,
        coordinates: sys.nq(),
        constraints: sys.nc(),
        t_reached,
        status: crate::run::run_status(result.is_ok(), interrupted).to_string(),
        error: explained.error,
        output_rows,
        work: crate::run::work_summary(&stats, wall),
        cost_from,
        diagnostics,
        non_unique_reactions: run_sys.non_unique_reactions(),
        accuracy,
        ..crate::run::completed_summary_base(model)
    };
    match result {
        Ok(_) => Ok(summary),
        Err(f) => Err(RunError::Integration {
            model: model.source.clone(),
            cause: explained.cause,
            failure: f,
            advice: explained.advice,
            summary: Box::new(summary),
        }),
    }
}
