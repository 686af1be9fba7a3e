//! `jounce run`: model → system → assembly → formulation → integrator →
//! timeseries.csv + summary.json.

use std::path::{Path, PathBuf};
use std::time::Instant;

use jounce_integrate::{
    ControllerKind, ErrorPer, EvalError, IntegrateError, OutputGrid, SolverOptions,
};
use jounce_io::{AccuracySummary, FormulationSummary, IntegratorSummary, RunSummary, WorkSummary};
use jounce_mechanics::{MechanicalSystem, PlanarSystem};
use jounce_model::{FormulationKind, Model, OnCheckFailure};

use crate::error::RunError;
use crate::observer::{timeseries_header, RunObserver};
use crate::setup::{assemble_model, build_system};
use crate::simulation::RunOptions;
use crate::sink::{CsvFile, Progress, RowSink};
use crate::trust::SolutionChecks;

/// Settings given on the command line that override the model file's.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// Integrator name.
    pub method: Option<String>,
    /// Formulation name.
    pub formulation: Option<String>,
    /// Relative tolerance.
    pub rtol: Option<f64>,
    /// Absolute tolerance.
    pub atol: Option<f64>,
    /// Fixed step size.
    pub step: Option<f64>,
    /// Integrator parameters (name, value), each replacing the model's.
    pub params: Vec<(String, f64)>,
    /// End time.
    pub t_end: Option<f64>,
    /// Step budget (accepted and rejected steps).
    pub max_steps: Option<u64>,
    /// Step across the breakpoints of the time functions instead of
    /// stopping and restarting there.
    pub no_breakpoints: bool,
    /// Write the output even above the row budget
    /// (`settings.checks.max_output_rows`) and the byte budget
    /// (`settings.checks.max_output_bytes`).
    pub force: bool,
    /// No `steps.csv` (`settings.step_history = false`).
    pub no_step_history: bool,
    /// Report the cost of the steps ending after this time.
    pub cost_from: Option<f64>,
    /// Estimate the global error by a second run
    /// (`settings.checks.error_estimate = true`).
    pub error_estimate: bool,
}

/// What `jounce run` needs.
#[derive(Clone, Debug)]
pub struct RunRequest {
    /// Model file.
    pub model_path: PathBuf,
    /// Output directory (created).
    pub out_dir: PathBuf,
    /// Show a progress bar.
    pub progress: bool,
    /// Command-line overrides.
    pub overrides: Overrides,
}

/// Apply command-line overrides to a loaded model's settings.
///
/// # Errors
/// [`RunError::Setup`] for an unknown formulation name or a non-positive value.
pub fn apply_overrides(model: &mut Model, o: &Overrides) -> Result<(), RunError> {
    apply_options(model, &RunOptions::from_overrides(o)?)
}

/// Apply a run's options to a model's settings (not its start state: see
/// [`RunOptions::apply`]).
///
/// # Errors
/// [`RunError::Setup`] for a non-positive value or a non-finite parameter.
pub fn apply_options(model: &mut Model, o: &RunOptions) -> Result<(), RunError> {
    let s = &mut model.settings;
    if let Some(m) = &o.method {
        s.integrator.method = m.clone();
    }
    if let Some(f) = o.formulation {
        s.formulation.kind = f;
    }
    for (name, val) in [
        ("rtol", o.rtol),
        ("atol", o.atol),
        ("step", o.step),
        ("t-end", o.t_end),
    ] {
        if let Some(v) = val {
            if !(v > 0.0 && v.is_finite()) {
                return Err(RunError::Setup(format!(
                    "--{name} must be a positive number, got {v}"
                )));
            }
            let problem = match name {
                "rtol" => jounce_model::rtol_problem(v),
                "atol" => jounce_model::atol_problem(v),
                "t-end" => jounce_model::t_end_problem(v),
                _ => None,
            };
            if let Some(p) = problem {
                return Err(RunError::Setup(format!("--{name} {p}")));
            }
        }
    }
    if let Some(v) = o.rtol {
        s.integrator.rtol = v;
    }
    if let Some(v) = o.atol {
        s.integrator.atol = v;
    }
    if o.step.is_some() {
        s.integrator.step = o.step;
    }
    for (name, value) in &o.params {
        if !value.is_finite() {
            return Err(RunError::Setup(format!(
                "--param {name}: the value must be a finite number, got {value}"
            )));
        }
        s.integrator.params.insert(name.clone(), *value);
    }
    if let Some(v) = o.t_end {
        s.t_end = v;
    }
    if o.no_breakpoints {
        s.integrator.stop_at_breakpoints = false;
    }
    if o.no_step_history {
        s.step_history = false;
    }
    if let Some(t) = o.cost_from {
        if !(t >= 0.0 && t.is_finite()) {
            return Err(RunError::Setup(format!(
                "--cost-from must be a time >= 0, not {t}"
            )));
        }
        s.cost_from = Some(t);
    }
    if let Some(n) = o.max_steps {
        if n == 0 {
            return Err(RunError::Setup("--max-steps must be at least 1".into()));
        }
        s.integrator.max_steps = n;
        s.integrator.max_steps_set = true;
    }
    if o.force {
        s.checks.max_output_rows = u64::MAX;
        s.checks.max_output_bytes = u64::MAX;
    }
    if let Some(f) = o.on_check_failure {
        s.checks.on_failure = f;
    }
    if o.error_estimate {
        s.checks.error_estimate = true;
    }
    Ok(())
}

/// Solver options from the model's integrator settings.
///
/// # Errors
/// [`RunError::Setup`] naming the setting when a value is not recognised.
pub fn solver_options(model: &Model) -> Result<SolverOptions, RunError> {
    let i = &model.settings.integrator;
    let controller = match i.controller.as_str() {
        "elementary" | "i" => ControllerKind::Elementary,
        "pi" => ControllerKind::PI,
        other => {
            return Err(RunError::Setup(format!(
                "{}: settings.integrator.controller: unknown controller '{other}' (elementary, pi)",
                model.source
            )))
        }
    };
    let error_per = match i.error_per.as_str() {
        "step" | "eps" => ErrorPer::Step,
        "unit_step" | "epus" => ErrorPer::UnitStep,
        other => {
            return Err(RunError::Setup(format!(
                "{}: settings.integrator.error_per: unknown value '{other}' (step, unit_step)",
                model.source
            )))
        }
    };
    Ok(SolverOptions {
        rtol: i.rtol,
        atol: i.atol,
        fixed_step: i.step,
        h0: i.h0,
        h_min: i.h_min,
        h_max: i.h_max,
        max_steps: i.max_steps,
        controller,
        error_per,
        output: OutputGrid::Every(model.settings.output_interval),
        params: i.params.clone(),
        // the formulations that know the system's breakpoints report them
        // too; the model's reach the driver whatever the formulation
        breakpoints: model.breakpoints(),
        stop_at_breakpoints: i.stop_at_breakpoints,
        stop_when_stiff: false,
    })
}

/// The files a run writes into its output directory; a new run removes
/// them first, so that a failure never leaves an older run's results
/// looking current.
pub const OUTPUT_FILES: &[&str] = &["timeseries.csv", "summary.json"];

/// Where a run streams its output: the time series, the per-step history
/// (given rows only when `settings.step_history` is on) and the progress.
pub struct Output<'a> {
    /// The time series ([`timeseries_header`] columns).
    pub timeseries: &'a mut dyn RowSink,
    /// The per-step history ([`crate::observer::STEPS_HEADER`] columns).
    pub steps: &'a mut dyn RowSink,
    /// Told how far the run is, if anyone asks.
    pub progress: Option<&'a mut dyn Progress>,
}

/// Run a loaded model, writing into `out_dir`. Returns the summary.
///
/// Every run writes `summary.json`, with `"status": "failed"` and the
/// error for a run that fails, before integrating (bad settings, assembly)
/// or during it (then with the rows computed so far in `timeseries.csv`).
/// Files of an earlier run in `out_dir` are removed first.
///
/// # Errors
/// [`RunError`] saying what failed, where and when.
pub fn run_model(
    model: &Model,
    out_dir: &Path,
    progress: Option<&mut dyn Progress>,
) -> Result<RunSummary, RunError> {
    let wall = Instant::now();
    std::fs::create_dir_all(out_dir)
        .map_err(|e| RunError::Io(jounce_io::IoError::new(out_dir, e)))?;
    for f in OUTPUT_FILES {
        let path = out_dir.join(f);
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(RunError::Io(jounce_io::IoError::new(&path, e))),
        }
    }
    let mut timeseries = CsvFile::new(&out_dir.join("timeseries.csv"));
    let mut steps = CsvFile::new(&out_dir.join("steps.csv"));
    let output = Output {
        timeseries: &mut timeseries,
        steps: &mut steps,
        progress: progress.map(|p| p as &mut dyn Progress),
    };
    let summary_path = out_dir.join("summary.json");
    let result = match integrate_model(model, output, wall) {
        Ok(summary) => match summary.write_json(&summary_path) {
            Ok(()) => Ok(summary),
            Err(io) => Err(io.into()),
        },
        Err(e) => {
            let written = match &e {
                RunError::Integration { summary, .. } => summary.write_json(&summary_path),
                _ => Ok(()),
            };
            match written {
                Ok(()) => Err(e),
                Err(io) => Err(io.into()),
            }
        }
    };
    match result {
        Err(e) if !matches!(e, RunError::Integration { .. }) => {
            // failed before integrating: say so in summary.json too
            failure_summary(model, &e, wall).write_json(&summary_path)?;
            Err(e)
        }
        other => other,
    }
}

/// The summary of a run that failed before integrating (bad settings,
/// assembly): `"status": "failed"` and the error.
pub fn failure_summary(model: &Model, error: &RunError, wall: Instant) -> RunSummary {
    RunSummary {
        jounce_version: env!("CARGO_PKG_VERSION").to_string(),
        model: model.name.clone(),
        model_file: model.source.clone(),
        formulation: formulation_summary(
            model,
            crate::setup::formulation_name(model.settings.formulation.kind),
        ),
        integrator: integrator_summary(model),
        t_end: model.settings.t_end,
        status: "failed".into(),
        error: Some(error.to_string()),
        work: WorkSummary {
            wall_seconds: wall.elapsed().as_secs_f64(),
            ..WorkSummary::default()
        },
        ..RunSummary::default()
    }
}

fn integrator_summary(model: &Model) -> IntegratorSummary {
    let i = &model.settings.integrator;
    IntegratorSummary {
        method: jounce_integrate::method::find(&i.method)
            .map_or_else(|_| i.method.clone(), |m| m.info.name.to_string()),
        rtol: i.rtol,
        atol: i.atol,
        step: i.step,
        h0: i.h0,
        h_min: i.h_min,
        h_max: i.h_max.is_finite().then_some(i.h_max),
        max_steps: i.max_steps,
        controller: i.controller.clone(),
        error_per: i.error_per.clone(),
        params: i.params.clone(),
    }
}

/// What a user is told when an explicit method's stiffness test fired
/// at `ts`.
fn stiffness_advice(info: &jounce_integrate::method::MethodInfo, ts: f64) -> String {
    format!(
        "the problem is stiff: Hairer's stiffness test of {} fired at t = {ts} s, so its step \
         is bounded by stability, not accuracy; an implicit method (radau5, bdf, trbdf2, \
         rodas4) takes far fewer steps",
        info.name
    )
}

/// Why a run used up its step budget, in the user's terms: a budget the
/// user set, stiffness (Hairer's test fired), a low-order method at a
/// tight tolerance, or, failing those, what is left to suspect.
pub fn budget_diagnosis(
    model: &Model,
    info: &jounce_integrate::method::MethodInfo,
    stats: &jounce_integrate::Stats,
    t: f64,
) -> String {
    let it = &model.settings.integrator;
    let n = stats.n_steps();
    if it.max_steps_set {
        return format!(
            "the step budget you set (max_steps = {}) was used up at t = {t} s; raise it \
             (--max-steps or settings.integrator.max_steps) to go on",
            it.max_steps
        );
    }
    if let Some(ts) = stats.stiffness_detected_at {
        return stiffness_advice(info, ts);
    }
    let p = f64::from(info.order.max(1));
    let per_unit = it.rtol.powf(-1.0 / p);
    let mean = if n > 0 { t / n as f64 } else { 0.0 };
    // low order explains steps of about rtol^(1/p) (per unit of time), not
    // steps a thousand times smaller than that
    if it.step.is_none() && per_unit > 1e4 && mean * per_unit > 1e-3 {
        return format!(
            "{} is of order {} and rtol = {:e} is tight for it: its step shrinks like \
             rtol^(1/{}), about {per_unit:.1e} steps per unit of smooth solution, so the budget \
             of {n} steps runs out from low order, not stiffness; use a higher-order method \
             (radau5 or bdf, order 5; dop853, order 8, if the problem is not stiff) or loosen rtol",
            info.name, info.order, it.rtol, info.order
        );
    }
    if let Some(h) = it.step {
        return format!(
            "the fixed step h = {h} s needs {:.3e} steps to t_end = {} s, more than the budget \
             of {}; raise max_steps or the step",
            model.settings.t_end / h,
            model.settings.t_end,
            it.max_steps
        );
    }
    if info.implicit {
        format!(
            "the mean step was {mean:.3e} s: the solution varies fast or is not smooth (an \
             impact, a discontinuous force: give its time as a breakpoint), or the tolerance is \
             very tight; raise max_steps if the run is right"
        )
    } else {
        format!(
            "the mean step was {mean:.3e} s and no stiffness was detected: the solution varies \
             fast, or a fast mode bounds the step of {}: try an implicit method (radau5, bdf) or \
             raise max_steps",
            info.name
        )
    }
}

/// The run itself, streaming to `output`: set up, integrate, explain.
/// Returns the summary; an integration failure carries it.
pub(crate) fn integrate_model(
    model: &Model,
    output: Output<'_>,
    wall: Instant,
) -> Result<RunSummary, RunError> {
    if model.spatial.is_some() {
        return crate::spatial_run::integrate_spatial_model(model, output, wall);
    }
    // the integrator first: a bad name or setting fails before any work
    let (entry, opts, mut stepper) = crate::validate::validate_run_settings(model)?;

    let sys = build_system(model)?;
    let asm = assemble_model(model, &sys)?;
    let t_end = model.settings.t_end;

    // redundant rows: refused when inconsistent or under `joint`; else the
    // formulation runs on the independent rows when it needs them
    let run_sys = crate::redundancy::RunSystem::new(model, &sys, &asm);
    let (mut form, y0) = run_sys.start(model, &asm)?;
    let mut diagnostics: Vec<String> = crate::warnings::input_warnings(model)
        .into_iter()
        .chain(crate::warnings::assembly_warnings(model, &sys, &asm))
        .map(|w| format!("input warning: {w}"))
        .collect();
    diagnostics.extend(run_sys.redundancy.reactions_note());
    if let Some(msg) = crate::validate::fixed_step_verdict(model, entry, &opts, form.as_mut(), &y0)
    {
        match model.settings.checks.on_failure {
            OnCheckFailure::Fail => {
                return Err(RunError::Setup(format!(
                    "{}: {msg} (settings.checks.on_failure = \"warn\" runs it anyway)",
                    model.source
                )))
            }
            OnCheckFailure::Warn => diagnostics.push(format!("stability warning: {msg}")),
        }
    }

    let Output {
        timeseries,
        steps,
        progress,
    } = output;
    // an error estimate keeps the run's positions and velocities to compare
    // them with the second run's
    let mut recorder = None;
    let timeseries: &mut dyn RowSink = if model.settings.checks.error_estimate {
        recorder.insert(crate::error_estimate::StateRecorder::new(
            timeseries,
            1 + 2 * sys.nq(),
        ))
    } else {
        timeseries
    };
    timeseries.begin(&timeseries_header(&sys))?;
    if model.settings.step_history {
        steps.begin(&crate::observer::STEPS_HEADER.map(String::from))?;
    }
    let steps = model
        .settings
        .step_history
        .then_some(steps as &mut dyn RowSink);
    let progress = progress.map(|p| p as &mut dyn Progress);
    let adaptive_rtol = opts.fixed_step.is_none().then_some(opts.rtol);
    let mut obs = run_observer(
        model,
        &sys,
        &asm.q,
        &run_sys,
        adaptive_rtol,
        (timeseries, steps, progress),
    );
    let result = jounce_integrate::solve(
        form.as_mut(),
        stepper.as_mut(),
        0.0,
        &y0,
        t_end,
        &opts,
        &mut obs,
    );
    obs.finish()?;

    let (stats, t_reached) = match &result {
        Ok(s) => (s.stats, s.t),
        Err(f) => (f.stats, f.t),
    };
    let explained = explain_failure(model, entry, &opts, &result, &mut obs, &sys, t_reached);
    diagnostics.extend(run_diagnostics(entry, &stats, &obs));
    let mut accuracy = accuracy_summary(model, &obs);
    let output_rows = obs.rows();
    let cost_from = obs.cost_from.as_ref().map(|c| c.summary());
    let extremes = obs.extremes;
    let interrupted = obs.interrupted;
    drop(obs);
    // the estimate: the model run again into memory, its own work apart
    // from this run's (`work` stays this run's integration alone)
    let estimate = match (&result, recorder) {
        (Ok(_), Some(r)) => Some(crate::error_estimate::estimate(
            model,
            &entry.info,
            &r.kept,
            &crate::error_estimate::StateLayout::plain(sys.nq()),
            stats.n_accept,
        )),
        _ => None,
    };
    diagnostics.extend(accuracy_diagnostics(
        model,
        &opts,
        &stats,
        &extremes,
        estimate.as_ref(),
    ));
    accuracy.estimated_global_error = estimate.as_ref().and_then(|e| e.estimated_global_error);
    accuracy.error_estimate = estimate;
    let summary = RunSummary {
        formulation: formulation_summary(model, form.name()),
        degrees_of_freedom: asm.dof,
        coordinates: sys.nq(),
        constraints: sys.nc(),
        t_reached,
        status: run_status(result.is_ok(), interrupted).to_string(),
        error: explained.error,
        output_rows,
        work: work_summary(&stats, wall),
        cost_from,
        diagnostics,
        non_unique_reactions: run_sys.non_unique_reactions(),
        accuracy,
        ..completed_summary_base(model)
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

/// The run's observer with every trust check of the model's settings: the
/// solution checks, the sub-interval cost, the reactions of redundant rows,
/// the singularity monitor (from the initial positions `q0`), breakpoint
/// crossings, beam strains and the energy account.
fn run_observer<'a>(
    model: &Model,
    sys: &'a PlanarSystem,
    q0: &[f64],
    run_sys: &crate::redundancy::RunSystem<'_, PlanarSystem>,
    adaptive_rtol: Option<f64>,
    (timeseries, steps, progress): (
        &'a mut dyn RowSink,
        Option<&'a mut dyn RowSink>,
        Option<&'a mut dyn Progress>,
    ),
) -> RunObserver<'a> {
    let mut obs = RunObserver::new(sys, timeseries, model.settings.t_end, progress);
    obs.checks = Some(SolutionChecks::new(model, sys.nc()));
    obs.cost_from = model
        .settings
        .cost_from
        .map(crate::observer::SubintervalCost::new);
    obs.steps = steps;
    obs.reactions = run_sys.reactions(model);
    let mut mon =
        jounce_analysis::SingularityMonitor::new(sys, 0.0, q0, run_sys.redundancy.rows.len());
    mon.set_conservative(crate::setup::is_conservative(model));
    mon.set_energy_bound(adaptive_rtol);
    mon.set_horizon(model.settings.t_end, model.settings.integrator.max_steps);
    obs.singular = Some(mon);
    obs.crossings = crate::trust::BreakpointCrossings::new(model);
    obs.beams = crate::beam_strain::BeamStrainWatch::new(model, sys);
    obs.warn_on_switch = model.settings.checks.on_failure == OnCheckFailure::Warn;
    obs.energy_per_step = !crate::setup::is_conservative(model);
    obs
}

/// What a failed run says: the error as the summary gives it, what the
/// mechanism did (a singular configuration) and what to do.
pub(crate) struct Explained {
    pub(crate) error: Option<String>,
    pub(crate) cause: Option<String>,
    pub(crate) advice: Option<String>,
}

/// The advice for a failed integration: why the step budget ran out, a
/// blow-up, a breakpoint stepped across; and the cause at a singular
/// configuration. Nothing for a run that completed.
pub(crate) fn explain_failure(
    model: &Model,
    entry: &jounce_integrate::method::MethodEntry,
    opts: &SolverOptions,
    result: &Result<jounce_integrate::Solved, jounce_integrate::SolveFailure>,
    obs: &mut RunObserver<'_>,
    sys: &dyn MechanicalSystem,
    t_reached: f64,
) -> Explained {
    let error = result.as_ref().err().map(|f| f.to_string());
    let advice = match result {
        Err(f) => match &f.error {
            IntegrateError::ProbablyStiff { t, .. } if f.stats.n_steps() < opts.max_steps => {
                // stopped early by the stiffness test, its budget not spent
                Some(stiffness_advice(
                    &entry.info,
                    f.stats.stiffness_detected_at.unwrap_or(*t),
                ))
            }
            IntegrateError::TooManySteps { t, .. } | IntegrateError::ProbablyStiff { t, .. } => {
                Some(budget_diagnosis(model, &entry.info, &f.stats, *t))
            }
            IntegrateError::NewtonFailed { h, .. }
                if model.settings.formulation.kind == FormulationKind::Index3
                    && *h < 1e-8 * model.settings.t_end.abs() =>
            {
                Some(index3_newton_advice(model, sys, opts, *h))
            }
            IntegrateError::Eval {
                source: EvalError::StateNotFinite { .. },
            } => Some(match opts.fixed_step {
                Some(h) => format!(
                    "the fixed step h = {h} s is likely beyond the stability limit of {} for the \
                     model's fastest mode: use a smaller step, an adaptive or an implicit method",
                    entry.info.name
                ),
                None => "the model or the method is unstable here: check the model's stiffness \
                 and damping, tighten the tolerance or use an implicit method"
                    .to_string(),
            }),
            _ => None,
        },
        Ok(_) => None,
    };
    // a failure inside the last accepted step (a check on its interpolated
    // output) comes before the driver reports the step: it is seen here
    if let Some(c) = &mut obs.crossings {
        c.step(t_reached);
    }
    let crossing_note = match (result, &obs.crossings) {
        (Err(_), Some(c)) => c.crossed().last().map(|(b, t0, t1)| {
            format!(
                "the step [{t0}, {t1}] s crossed the breakpoint t = {b} s, which \
                 settings.integrator.breakpoints = false keeps from the integrator (see the \
                 breakpoint warning)"
            )
        }),
        _ => None,
    };
    let advice = match (advice, crossing_note) {
        (Some(a), Some(c)) => Some(format!("{a}; {c}")),
        (None, c) => c,
        (a, None) => a,
    };
    let error = match (error, &advice) {
        (Some(e), Some(a)) => Some(format!("{e}: {a}")),
        (e, _) => e,
    };
    // a failure at a singular configuration says so first (lock-up, or
    // the joints that lost rank), then what the integrator saw
    let cause = match (&error, &mut obs.singular) {
        (Some(_), Some(mon)) if !obs.stopped_by_switch => mon.failure_note(sys),
        _ => None,
    };
    let error = match (error, &cause) {
        (Some(e), Some(c)) => Some(format!("{c}; the integrator stopped with: {e}")),
        (e, _) => e,
    };
    Explained {
        error,
        cause,
        advice,
    }
}

/// Why the index-3 form's Newton iteration can fail at every step size:
/// the multipliers' increments answer the round-off of Φ(q) magnified by
/// 1/h², and their tolerance is relaxed by h² (radau5.f's index scaling),
/// so the scaled increment stays at the same size at every h. When that
/// size is above a tenth of the error test (where radau5 accepts a stalled
/// iteration, `stalled_at_round_off` in jounce-integrate) no step size
/// helps: the absolute tolerance asks the multipliers for more than double
/// precision resolves at the model's size. Measured on the pendulum chain
/// released horizontally at rtol 1e-6: the increment stalled at 0.08 of
/// the error test with atol = 1e-9 at 300 links (h = 1e-5 .. 8e-13).
fn index3_newton_advice(
    model: &Model,
    sys: &dyn MechanicalSystem,
    opts: &SolverOptions,
    h: f64,
) -> String {
    format!(
        "the Newton iteration of {} on the index-3 form failed at every step size down to \
         h = {h:.1e} s: the round-off of the {} constraints, magnified as 1/h² in their \
         multipliers, keeps the Newton increments above their tolerance (rtol = {:e}, \
         atol = {:e}); use a larger atol, the ggl formulation (index 2), augmented or \
         projection",
        model.settings.integrator.method,
        sys.nc(),
        opts.rtol,
        opts.atol
    )
}

/// The diagnostics a run adds after integrating: singular configurations,
/// branch switches, the cost asked for, breakpoints crossed, the checks
/// on the solution, beams beyond small strain, stiffness.
pub(crate) fn run_diagnostics(
    entry: &jounce_integrate::method::MethodEntry,
    stats: &jounce_integrate::Stats,
    obs: &RunObserver<'_>,
) -> Vec<String> {
    let mut diagnostics = Vec::new();
    if let Some(mon) = &obs.singular {
        diagnostics.extend(mon.diagnostics());
    }
    diagnostics.extend(obs.switch_warnings.iter().cloned());
    if let Some(c) = &obs.cost_from {
        diagnostics.push(c.describe());
    }
    if let Some(c) = &obs.crossings {
        diagnostics.extend(c.warnings());
    }
    if let Some(c) = &obs.checks {
        diagnostics.extend(c.warnings.iter().cloned());
    }
    if let Some(b) = &obs.beams {
        diagnostics.extend(
            b.warnings()
                .into_iter()
                .map(|w| format!("small-strain warning: {w}")),
        );
    }
    if stats.n_newton_stalled > 0 {
        diagnostics.push(format!(
            "{} of {}'s Newton iterations stopped contracting at round-off, with \
             increments under a tenth of the tolerance, and were accepted: the tolerance is \
             close to what double precision resolves on this model (a larger atol, or the \
             ggl formulation, avoids it)",
            stats.n_newton_stalled, entry.info.name
        ));
    }
    if let Some(ts) = stats.stiffness_detected_at {
        diagnostics.push(format!(
            "{} detected stiffness at t = {ts:.6} s: its step is bounded by stability, not accuracy; an implicit method (radau5, bdf, trbdf2, rodas4) should be cheaper",
            entry.info.name
        ));
    }
    diagnostics
}

/// The accuracy diagnostics: with a global error estimate, its warning
/// (when it exceeds 10 times the tolerance) or its note; without one, the
/// heuristic of the accumulated local error. Then energy drift of a
/// conservative model (an accuracy warning only when no estimate says the
/// run is within 10 times the tolerance).
pub(crate) fn accuracy_diagnostics(
    model: &Model,
    opts: &SolverOptions,
    stats: &jounce_integrate::Stats,
    extremes: &jounce_analysis::InvariantExtremes,
    estimate: Option<&jounce_io::ErrorEstimateSummary>,
) -> Vec<String> {
    let mut diagnostics = Vec::new();
    let estimated = estimate.and_then(|e| e.estimated_global_error);
    if let Some(e) = estimate {
        diagnostics.push(crate::error_estimate::estimate_diagnostic(model, e));
    }
    // no estimate (not asked for, or no usable second run): the heuristic
    if estimated.is_none() {
        diagnostics.extend(accumulated_error_warning(opts, stats));
    }
    if let Some(w) = index3_tolerance_floor_warning(model, opts, estimated) {
        diagnostics.push(w);
    }
    let conservative = crate::setup::is_conservative(model);
    let de = extremes.max_relative_energy_error;
    let within = estimated.is_some_and(|x| x <= crate::error_estimate::ESTIMATE_WARNING);
    // without an estimate, a change the tolerance may allow is a note
    let allowed = estimated.is_none() && de <= ENERGY_WARNING_PER_RTOL * opts.rtol;
    if conservative && de > ENERGY_WARNING {
        diagnostics.push(if within {
            format!(
                "energy note: the model conserves energy, but the run changed it by up to \
                 {:.1} % of E(0), which the tolerance allows (the error estimate is within 10 \
                 times it); a tighter tolerance or an energy-conserving method keeps it better",
                100.0 * de
            )
        } else if allowed {
            format!(
                "energy note: the model conserves energy, but the run changed it by up to \
                 {:.1} % of E(0), which rtol = {:e} may allow; --error-estimate \
                 (settings.checks.error_estimate = true) tells whether the solution is within \
                 the tolerance",
                100.0 * de,
                opts.rtol
            )
        } else {
            format!(
                "accuracy warning: the model conserves energy, but the run changed it by up to \
                 {:.1} % of E(0): the solution is not to be trusted at this step or tolerance \
                 (numerical damping of the method, projections, or too large a step for the \
                 fastest mode); try a smaller step or tolerance, or an energy-conserving method",
                100.0 * de
            )
        });
    }
    diagnostics
}

/// The smallest rtol the index-3 form reaches with an adaptive bdf or
/// radau5 (see `index3_tolerance_floor_warning`, private).
pub const INDEX3_RTOL_FLOOR: f64 = 1e-10;

/// An accuracy warning for an adaptive bdf or radau5 run on `index3` asked
/// for rtol below [`INDEX3_RTOL_FLOOR`], unless an error estimate puts the
/// run within 10 times its tolerance. The index-3 iteration matrix's
/// condition grows as 1/h² (Hairer & Wanner, *Solving ODEs II*, VII.3
/// and VII.8: round-off in the Newton corrections of the velocities and
/// multipliers grows like eps/h and eps/h²), so that below some tolerance
/// the step-size control chases round-off: measured on a chain of three
/// parallelograms, bdf is 0.4 tol off at rtol = 1e-10, 8.7 tol at 3e-11
/// and 8000 tol at 1e-11 (34 times the steps); on the double pendulum
/// 8 tol at 1e-10 and 8000 tol at 1e-11; radau5's Newton iteration fails
/// at 1e-12 on both. `ggl` (index 2) and the ODE forms go further.
fn index3_tolerance_floor_warning(
    model: &Model,
    opts: &SolverOptions,
    estimated: Option<f64>,
) -> Option<String> {
    let it = &model.settings.integrator;
    let dae_method = matches!(it.method.as_str(), "bdf" | "radau5");
    let within = estimated.is_some_and(|x| x <= crate::error_estimate::ESTIMATE_WARNING);
    (model.settings.formulation.kind == jounce_model::FormulationKind::Index3
        && dae_method
        && opts.fixed_step.is_none()
        && opts.rtol < INDEX3_RTOL_FLOOR
        && !within)
        .then(|| {
            format!(
                "accuracy warning: rtol = {:e} is below what {} reaches on the index-3 form \
                 (about {INDEX3_RTOL_FLOOR:e}): its iteration matrix's condition grows as 1/h², \
                 so that round-off, not the tolerance, sets the error (thousands of times the \
                 tolerance were measured at 1e-11); use the ggl or augmented formulation for \
                 tighter tolerances, or --error-estimate to measure this run's error",
                opts.rtol, it.method
            )
        })
}

/// The parts of a run's summary known from the model alone.
pub(crate) fn completed_summary_base(model: &Model) -> RunSummary {
    RunSummary {
        jounce_version: env!("CARGO_PKG_VERSION").to_string(),
        model: model.name.clone(),
        model_file: model.source.clone(),
        integrator: integrator_summary(model),
        t_end: model.settings.t_end,
        ..RunSummary::default()
    }
}

/// The summary's status: "completed", "interrupted" (Ctrl-C or SIGTERM)
/// or "failed".
pub(crate) fn run_status(completed: bool, interrupted: bool) -> &'static str {
    match (completed, interrupted) {
        (true, _) => "completed",
        (false, true) => "interrupted",
        (false, false) => "failed",
    }
}

/// The integrator's counters and the run's wall time.
pub(crate) fn work_summary(stats: &jounce_integrate::Stats, wall: Instant) -> WorkSummary {
    WorkSummary {
        steps_accepted: stats.n_accept,
        steps_rejected: stats.n_reject,
        rhs_evaluations: stats.n_rhs,
        jacobian_evaluations: stats.n_jac,
        lu_factorizations: stats.n_lu,
        newton_iterations: stats.n_newton_iter,
        newton_failures: stats.n_newton_fail,
        events: stats.n_events,
        restarts: stats.n_restart,
        corrections: stats.n_corrections,
        cpu_seconds: stats.cpu_seconds,
        cpu_seconds_repeats: Vec::new(),
        wall_seconds: wall.elapsed().as_secs_f64(),
    }
}

/// Energy and constraint drift as the observer saw them, and the energy
/// account at the end.
pub(crate) fn accuracy_summary(model: &Model, obs: &RunObserver<'_>) -> AccuracySummary {
    let ex = obs.extremes;
    let account = obs.energy.account();
    AccuracySummary {
        energy_conserved_by_model: crate::setup::is_conservative(model),
        max_relative_energy_error: ex.max_relative_energy_error,
        max_energy_error: ex.max_energy_error,
        max_position_violation: ex.max_position_violation,
        max_velocity_violation: ex.max_velocity_violation,
        energy_account: jounce_io::EnergyAccountSummary {
            work_applied: account.work_applied,
            work_drivers: account.work_drivers,
            dissipated: account.dissipated,
        },
        max_energy_balance_residual: obs.energy.max_residual(),
        estimated_global_error: None,
        error_estimate: None,
    }
}

/// The formulation's name and the parameters that apply to it.
pub(crate) fn formulation_summary(model: &Model, name: &str) -> FormulationSummary {
    let f = &model.settings.formulation;
    let params: Vec<(&str, f64)> = match f.kind {
        FormulationKind::Augmented | FormulationKind::Projection | FormulationKind::Joint => vec![
            ("baumgarte_alpha", f.baumgarte_alpha),
            ("baumgarte_beta", f.baumgarte_beta),
        ],
        FormulationKind::Penalty => vec![
            ("penalty_factor", f.penalty_factor),
            ("penalty_omega", f.penalty_omega),
            ("penalty_xi", f.penalty_xi),
        ],
        FormulationKind::AugmentedLagrangian => vec![("al_penalty", f.al_penalty)],
        FormulationKind::Partitioning
        | FormulationKind::StateSpace
        | FormulationKind::Index3
        | FormulationKind::Ggl
        | FormulationKind::Odae => vec![],
    };
    FormulationSummary {
        name: name.to_string(),
        params: params
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    }
}

/// Human-readable summary of a run.
pub fn summary_text(s: &RunSummary) -> String {
    let w = &s.work;
    let a = &s.accuracy;
    let mut out = String::new();
    out.push_str(&format!(
        "{} ({}): {} with {}, t = 0 .. {} s, {} DOF, {} coordinates, {} constraints\n",
        s.model,
        s.model_file,
        s.formulation.name,
        s.integrator.method,
        s.t_reached,
        s.degrees_of_freedom,
        s.coordinates,
        s.constraints
    ));
    out.push_str(&format!(
        "  steps {} accepted / {} rejected, {} f-evaluations, {} Jacobians, {} LU, {} Newton iterations\n",
        w.steps_accepted, w.steps_rejected, w.rhs_evaluations, w.jacobian_evaluations, w.lu_factorizations, w.newton_iterations
    ));
    out.push_str(&format!(
        "  CPU {:.4} s (integration alone), wall {:.4} s\n",
        w.cpu_seconds, w.wall_seconds
    ));
    if let Some(e) = &a.error_estimate {
        out.push_str(&format!(
            "  error estimate by {}: {} (second run: {} steps, {} f-evaluations, CPU {:.4} s, \
             not in the CPU above)\n",
            e.method,
            e.estimated_global_error.map_or_else(
                || "none".to_string(),
                |x| format!("{x:.2} times the tolerance")
            ),
            e.reference_steps_accepted,
            e.reference_rhs_evaluations,
            e.reference_cpu_seconds
        ));
    }
    let energy = if a.energy_conserved_by_model {
        format!(
            "max relative energy error {:.3e}",
            a.max_relative_energy_error
        )
    } else {
        let e = &a.energy_account;
        format!(
            "energy not conserved by the model (dampers, drivers or time-dependent forces): max change {:.3e} J; \
             account: work of loads {:.4e} J, of drivers {:.4e} J, dissipated {:.4e} J, \
             balance residual max {:.3e} J",
            a.max_energy_error,
            e.work_applied,
            e.work_drivers,
            e.dissipated,
            a.max_energy_balance_residual
        )
    };
    for d in &s.diagnostics {
        out.push_str(&format!("  note: {d}\n"));
    }
    out.push_str(&format!(
        "  {energy}; max constraint violation {:.3e} (position), {:.3e} (velocity)\n",
        a.max_position_violation, a.max_velocity_violation
    ));
    out
}

/// Relative energy change of a conservative model above which a run warns
/// (without an error estimate: above the larger of this and
/// [`ENERGY_WARNING_PER_RTOL`] · rtol; with one, when the estimate exceeds
/// 10 times the tolerance; else it notes the change).
pub const ENERGY_WARNING: f64 = 1e-2;

/// Relative energy change, per unit of rtol, that a run without an error
/// estimate may make without a warning: an error of a few tolerances in
/// each coordinate changes E by many rtol relative to E(0) when E(0) is a
/// small difference of larger kinetic and potential energies (the double
/// pendulum within 3 tol at rtol 1e-4 changes it by 1.5 to 2.9 %:
/// `tests/suite/error_estimate.rs`).
pub const ENERGY_WARNING_PER_RTOL: f64 = 500.0;

/// Accumulated local error, in units of the tolerance, above which a run
/// without an error estimate says that its global error may exceed the
/// tolerance and suggests `--error-estimate` (a note, not a warning).
pub const ACCUMULATED_ERROR_NOTE: f64 = 25.0;

/// Accumulated local error, in units of the tolerance, above which a run
/// without an error estimate warns. The sum is a poor predictor of the
/// global error: on the calibration matrix (`tests/suite/error_estimate.rs`,
/// 5 models x 10 methods x 3 tolerances) runs within the tolerance reach
/// sums of 387 (rodas4 at 1e-8: its local estimates are pessimistic)
/// while runs 50 times beyond it have sums of 8 (rkf45 on the four-bar:
/// errors grow along the solution). Only a sum this large, well above any
/// run within 10 times the tolerance there, warns; below it the run
/// notes the sum and suggests the estimate, which decides.
pub const ACCUMULATED_ERROR_WARNING: f64 = 1000.0;

/// The a-posteriori check of an adaptive run without an error estimate:
/// per-step error control bounds each step's local error by the
/// tolerance, so the global error can grow with the number of steps, or
/// the local errors can cancel. When the sum of the local error estimates
/// (`Stats::accumulated_error`) exceeds [`ACCUMULATED_ERROR_WARNING`] times
/// the tolerance, an accuracy warning; above [`ACCUMULATED_ERROR_NOTE`], an
/// accuracy note that suggests `--error-estimate`
/// (`settings.checks.error_estimate`), whose estimate decides the warning
/// ([`crate::error_estimate`]). Nothing for a fixed step (no local error
/// estimate: only the error estimate covers it).
pub fn accumulated_error_warning(
    opts: &SolverOptions,
    stats: &jounce_integrate::Stats,
) -> Option<String> {
    let x = stats.accumulated_error;
    if opts.fixed_step.is_some() || !(x > ACCUMULATED_ERROR_NOTE) {
        return None;
    }
    if x > ACCUMULATED_ERROR_WARNING {
        return Some(format!(
            "accuracy warning: the local error estimates of the {} accepted steps add up to \
             {x:.0} times the tolerance, so the global error is likely well above rtol = {:e} \
             (local error control lets it grow with the number of steps); --error-estimate \
             (settings.checks.error_estimate = true) estimates it; for the accuracy asked, lower \
             rtol and atol, or use a higher-order method (dop853, radau5)",
            stats.n_accept, opts.rtol,
        ));
    }
    Some(format!(
        "accuracy note: the local error estimates of the {} accepted steps add up to {x:.0} \
         times the tolerance; the global error may exceed rtol = {:e} or not (local errors grow or \
         cancel along the solution): --error-estimate (settings.checks.error_estimate = true) \
         estimates it by a second run",
        stats.n_accept, opts.rtol,
    ))
}
