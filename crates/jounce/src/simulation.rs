//! The library's front door: a [`Simulation`] built from a model file, a
//! TOML string or a [`Model`], run with typed [`RunOptions`] into a
//! [`RunResult`] in memory, or streamed to any [`RowSink`] (the CLI's
//! `timeseries.csv`). The analyses of the model (`check`, `static`,
//! `modes`, `compare`, `bench`) are methods returning data.
//!
//! Every front end (the `jounce` command, the studies, a test) runs the
//! same pipeline: [`Simulation::run`] in memory and
//! [`Simulation::run_to_dir`] to files differ only in where the rows go.

use std::path::{Path, PathBuf};
use std::time::Instant;

use jounce_io::{EnergyAccountSummary, RunSummary};
use jounce_model::{FormulationKind, Model, OnCheckFailure};

use crate::error::RunError;
use crate::run::{integrate_model, Output, Overrides};
use crate::sink::{Progress, RowSink, TimeSeries};

/// A model ready to run, with its analyses.
///
/// ```
/// use jounce::{RunOptions, Simulation};
/// let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/simple_pendulum.toml");
/// let text = std::fs::read_to_string(file)?;
/// let sim = Simulation::from_toml_str(&text, "simple_pendulum.toml")?;
/// let r = sim.run(&RunOptions { t_end: Some(0.5), ..RunOptions::default() })?;
/// assert_eq!(r.summary.model_file, "simple_pendulum.toml");
/// assert!((r.series.t()[r.series.len() - 1] - 0.5).abs() < 1e-12);
/// // a pendulum without damping keeps its energy
/// assert!(r.summary.accuracy.max_relative_energy_error < 1e-6);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Simulation {
    model: Model,
}

/// Where a run starts.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Start {
    /// The model's initial poses and velocities (assembled).
    #[default]
    Initial,
    /// The static equilibrium, velocities zero (`jounce run --from-static`).
    Static,
    /// The poses and velocities of a state file written by `jounce static`
    /// (`jounce run --initial-state FILE`).
    StateFile(PathBuf),
}

/// Settings of a run that override the model file's (`None`, `false`:
/// the model's). The typed form of `jounce run`'s options.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunOptions {
    /// Integrator name (see [`crate::methods_table`]).
    pub method: Option<String>,
    /// Formulation.
    pub formulation: Option<FormulationKind>,
    /// Relative tolerance (> 0).
    pub rtol: Option<f64>,
    /// Absolute tolerance (> 0).
    pub atol: Option<f64>,
    /// Fixed step size \[s\] (> 0).
    pub step: Option<f64>,
    /// Integrator parameters (name, value), each replacing the model's.
    pub params: Vec<(String, f64)>,
    /// End time \[s\] (> 0).
    pub t_end: Option<f64>,
    /// Step budget, accepted and rejected steps (≥ 1).
    pub max_steps: Option<u64>,
    /// Step across the breakpoints of the time functions instead of
    /// stopping and restarting the integrator there.
    pub no_breakpoints: bool,
    /// Ignore the row and byte budgets (`settings.checks.max_output_rows`,
    /// `settings.checks.max_output_bytes`).
    pub force: bool,
    /// Keep no per-step history (`settings.step_history = false`).
    pub no_step_history: bool,
    /// Report the cost of the steps ending after this time \[s\].
    pub cost_from: Option<f64>,
    /// What a failed check on the solution does (`settings.checks.on_failure`).
    pub on_check_failure: Option<OnCheckFailure>,
    /// Where the run starts.
    pub start: Start,
    /// Estimate the run's global error by a second run of the model at a
    /// tighter tolerance (a fixed step: half the step), into memory; the
    /// estimate is in `summary.accuracy` and decides the accuracy warning
    /// (`settings.checks.error_estimate`, see [`crate::error_estimate`]).
    pub error_estimate: bool,
}

impl RunOptions {
    /// The options of `jounce run`'s string form (the formulation by name).
    ///
    /// # Errors
    /// [`RunError::Setup`] for an unknown formulation name.
    pub fn from_overrides(o: &Overrides) -> Result<Self, RunError> {
        Ok(Self {
            method: o.method.clone(),
            formulation: o
                .formulation
                .as_deref()
                .map(crate::setup::formulation_kind)
                .transpose()?,
            rtol: o.rtol,
            atol: o.atol,
            step: o.step,
            params: o.params.clone(),
            t_end: o.t_end,
            max_steps: o.max_steps,
            no_breakpoints: o.no_breakpoints,
            force: o.force,
            no_step_history: o.no_step_history,
            cost_from: o.cost_from,
            on_check_failure: None,
            start: Start::Initial,
            error_estimate: o.error_estimate,
        })
    }

    /// The model these options make of `model`: its start state, then its
    /// settings.
    ///
    /// # Errors
    /// [`RunError::Setup`] for a non-positive tolerance, step, end time or
    /// budget, a non-finite parameter; the static equilibrium's or the state
    /// file's errors.
    pub fn apply(&self, model: &Model) -> Result<Model, RunError> {
        let mut m = model.clone();
        let start = match &self.start {
            Start::Initial => None,
            Start::Static => Some((
                crate::static_cmd::static_state(&m)?,
                "--from-static".to_string(),
            )),
            Start::StateFile(path) => Some((
                crate::static_cmd::read_state(path)?,
                path.display().to_string(),
            )),
        };
        if let Some((state, origin)) = start {
            crate::static_cmd::apply_state(&mut m, &state, &origin)?;
        }
        crate::run::apply_options(&mut m, self)?;
        Ok(m)
    }
}

/// A completed run in memory.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunResult {
    /// The time series: the columns of `timeseries.csv`, one row per
    /// output time (t, coordinates, velocities, energies, constraint
    /// violations, multipliers, contact and friction quantities, the
    /// energy account).
    pub series: TimeSeries,
    /// The per-step history (the columns of `steps.csv`), when kept
    /// (`settings.step_history`, the default).
    pub steps: Option<TimeSeries>,
    /// The summary, as `summary.json` holds it.
    pub summary: RunSummary,
}

impl RunResult {
    /// The run's diagnostics and warnings (input, stability, accuracy,
    /// singular configurations...), as in the summary.
    pub fn diagnostics(&self) -> &[String] {
        &self.summary.diagnostics
    }

    /// The energy account at the end: work of the applied loads, of the
    /// drivers, and the energy dissipated, J (per row: the `work_applied`,
    /// `work_drivers`, `energy_dissipated` and `energy_balance_residual`
    /// columns of [`series`](Self::series)).
    pub fn energy_account(&self) -> &EnergyAccountSummary {
        &self.summary.accuracy.energy_account
    }

    /// The largest |E − E(0) − W_applied − W_drivers + D| along the run, J.
    pub fn max_energy_balance_residual(&self) -> f64 {
        self.summary.accuracy.max_energy_balance_residual
    }

    /// The run reached its end time.
    pub fn completed(&self) -> bool {
        self.summary.status == "completed"
    }
}

/// A run that failed: why, and what it computed up to then (the rows up
/// to the failure and the summary with `status = "failed"`; no rows when
/// it failed before integrating).
#[derive(Debug)]
pub struct RunFailure {
    /// What failed, where and when.
    pub error: RunError,
    /// The partial result.
    pub partial: Box<RunResult>,
}

impl std::fmt::Display for RunFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for RunFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

impl Simulation {
    /// A simulation of the model file at `path` (TOML).
    ///
    /// # Errors
    /// [`RunError::Model`] when the file cannot be read or is not a valid
    /// model.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, RunError> {
        Ok(Self::from_model(jounce_model::load_file(path.as_ref())?))
    }

    /// A simulation of a model given as TOML text; `origin` names it in
    /// messages and in the summary (`model_file`).
    ///
    /// # Errors
    /// [`RunError::Model`] when the text is not a valid model.
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Self, RunError> {
        Ok(Self::from_model(jounce_model::from_str(text, origin)?))
    }

    /// A simulation of a model built in code.
    pub fn from_model(model: Model) -> Self {
        Self { model }
    }

    /// The model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Run with `options`, everything in memory.
    ///
    /// # Errors
    /// [`RunFailure`]: the error and the partial result (the rows up to the
    /// failure and the failed summary).
    pub fn run(&self, options: &RunOptions) -> Result<RunResult, RunFailure> {
        self.run_with_progress(options, None)
    }

    /// [`Self::run`], telling `progress` how far the run has come (at most
    /// once per thousandth of t_end), as the command's progress bar is
    /// told.
    ///
    /// # Errors
    /// As [`Self::run`].
    pub fn run_with_progress(
        &self,
        options: &RunOptions,
        progress: Option<&mut dyn Progress>,
    ) -> Result<RunResult, RunFailure> {
        let wall = Instant::now();
        let model = match options.apply(&self.model) {
            Ok(m) => m,
            Err(error) => {
                return Err(RunFailure {
                    partial: Box::new(RunResult {
                        summary: crate::run::failure_summary(&self.model, &error, wall),
                        ..RunResult::default()
                    }),
                    error,
                })
            }
        };
        let mut series = TimeSeries::default();
        let mut steps = TimeSeries::default();
        let output = Output {
            timeseries: &mut series,
            steps: &mut steps,
            progress: progress.map(|p| p as &mut dyn Progress),
        };
        let result = integrate_model(&model, output, wall);
        let steps = model.settings.step_history.then_some(steps);
        match result {
            Ok(summary) => Ok(RunResult {
                series,
                steps,
                summary,
            }),
            Err(error) => {
                let summary = match &error {
                    RunError::Integration { summary, .. } => (**summary).clone(),
                    e => crate::run::failure_summary(&model, e, wall),
                };
                Err(RunFailure {
                    error,
                    partial: Box::new(RunResult {
                        series,
                        steps,
                        summary,
                    }),
                })
            }
        }
    }

    /// Run with `options`, streaming the rows to `timeseries` and the
    /// per-step history to `steps` (when kept) as they are computed, and
    /// telling `progress`. Returns the summary.
    ///
    /// ```
    /// use jounce::sink::{CsvSink, Discard};
    /// use jounce::{RunOptions, Simulation};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/simple_pendulum.toml");
    /// let sim = Simulation::from_file(path)?;
    /// let options = RunOptions { t_end: Some(0.1), ..RunOptions::default() };
    /// let mut csv = CsvSink::new(Vec::new());
    /// let summary = sim.run_streaming(&options, &mut csv, &mut Discard::default(), None)?;
    /// let text = String::from_utf8(csv.into_inner())?;
    /// assert!(text.starts_with("t,"));
    /// assert_eq!(text.lines().count() as u64, summary.output_rows + 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`RunError`]; [`RunError::Integration`] carries the summary.
    pub fn run_streaming(
        &self,
        options: &RunOptions,
        timeseries: &mut dyn RowSink,
        steps: &mut dyn RowSink,
        progress: Option<&mut dyn Progress>,
    ) -> Result<RunSummary, RunError> {
        let wall = Instant::now();
        let model = options.apply(&self.model)?;
        let output = Output {
            timeseries,
            steps,
            progress: progress.map(|p| p as &mut dyn Progress),
        };
        integrate_model(&model, output, wall)
    }

    /// Run with `options` into `out_dir`, as `jounce run` does:
    /// `timeseries.csv`, `steps.csv` (when kept) and `summary.json` (also
    /// for a run that fails once its options are applied). Returns the
    /// summary.
    ///
    /// # Errors
    /// [`RunError`]: the options' errors (nothing written), then those of
    /// [`crate::run::run_model`].
    pub fn run_to_dir(
        &self,
        options: &RunOptions,
        out_dir: &Path,
        progress: Option<&mut dyn Progress>,
    ) -> Result<RunSummary, RunError> {
        let model = options.apply(&self.model)?;
        crate::run::run_model(&model, out_dir, progress)
    }

    /// Validate and assemble the model: bodies, joints, degrees of
    /// freedom, redundancy, the integrator and formulation settings
    /// (`jounce check`). Returns what it found and the report.
    ///
    /// # Errors
    /// [`RunError::Check`] with the report up to what would make the run
    /// fail, or the setup's errors.
    pub fn check(&self) -> Result<crate::check::CheckReport, RunError> {
        crate::check::check_report(&self.model)
    }

    /// The static equilibrium at t = 0: poses, deflections, reactions
    /// (`jounce static`).
    ///
    /// # Errors
    /// As [`crate::static_cmd::static_state`].
    pub fn static_state(&self) -> Result<crate::static_cmd::StateFile, RunError> {
        crate::static_cmd::static_state(&self.model)
    }

    /// Linearised modes at `at`, with the stiffness ratio, explicit
    /// stability limits and a recommended integrator (`jounce modes`).
    ///
    /// # Errors
    /// As [`crate::modes::modes_report`].
    pub fn modes(
        &self,
        at: crate::modes::LinearisationPoint,
    ) -> Result<crate::modes::ModesReport, RunError> {
        crate::modes::modes_report(&self.model, at)
    }

    /// The model with several methods × formulations against a reference
    /// (`jounce compare`).
    ///
    /// # Errors
    /// As [`crate::compare::compare`].
    pub fn compare(
        &self,
        options: &crate::compare::CompareOptions,
    ) -> Result<crate::compare::Comparison, RunError> {
        crate::compare::compare(&self.model, options)
    }

    /// A work-precision sweep of methods (`jounce bench`).
    ///
    /// # Errors
    /// As [`crate::bench::bench`].
    pub fn bench(
        &self,
        options: &crate::bench::BenchOptions,
    ) -> Result<crate::bench::Bench, RunError> {
        crate::bench::bench(&self.model, options)
    }
}
