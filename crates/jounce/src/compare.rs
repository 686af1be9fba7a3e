//! `jounce compare`: one model run with several methods × formulations in
//! parallel (rayon, all cores), and one table of what each run cost and
//! how accurate it was against a tight reference run.
//!
//! **Error measure.** For each run, over every output row whose time the
//! reference also has (`timeseries.csv` rows; a failed run's rows up to
//! its failure), and over every position coordinate `q_i` (`<body>.x`,
//! `.y`, `.theta`):
//!
//! ```text
//! error = max_rows max_i |q_i − q_ref,i| / (atol + rtol · max_rows |q_ref,i|)
//! ```
//!
//! the difference in units of the tolerance, as the integrators scale
//! their local error, except that each coordinate is scaled by its largest
//! magnitude over the reference run rather than its current value (so a
//! coordinate passing through zero does not blow the measure up). A run
//! whose error exceeds [`FLAG_FACTOR`] (misses the tolerance by more than
//! 10×) is flagged. Fixed-step runs are measured against the same rtol and
//! atol.
//!
//! **Reference.** `auto`: `dop853` on `augmented` at rtol = atol = 1e-12
//! (no fixed step, no method parameters, no `steps.csv`); dop853 because it
//! is the most accurate explicit method, augmented because it accepts every
//! model whose KKT matrix is regular and its drift at 1e-12 is far below
//! any tolerance compared. If that run fails or is refused (a stiff model
//! that exhausts the step budget, a singular mass matrix), `radau5` on
//! `ggl` at 1e-12 is run instead. A file: the `timeseries.csv` of an
//! earlier run (or its directory), compared at the output times both have.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use jounce_integrate::cputime::thread_cpu_seconds;
use jounce_io::RunSummary;
use jounce_model::Model;
use rayon::prelude::*;
use serde::Serialize;

use crate::error::RunError;
use crate::run::{apply_overrides, run_model, Overrides};
use crate::series::Series;

/// A run whose error exceeds this many tolerances is flagged.
pub const FLAG_FACTOR: f64 = 10.0;

/// Tolerance (rtol = atol) of the automatic reference run.
pub const REFERENCE_TOL: f64 = 1e-12;

/// The automatic reference runs, tried in order: (method, formulation).
pub const REFERENCE_RUNS: [(&str, &str); 2] = [("dop853", "augmented"), ("radau5", "ggl")];

/// What the runs are compared to.
#[derive(Clone, Debug, PartialEq)]
pub enum Reference {
    /// A tight run of the model ([`REFERENCE_RUNS`] at [`REFERENCE_TOL`]).
    Auto,
    /// The `timeseries.csv` of an earlier run, or the directory holding it.
    File(PathBuf),
}

impl Reference {
    /// `auto` or a path.
    pub fn parse(s: &str) -> Self {
        if s.eq_ignore_ascii_case("auto") {
            Self::Auto
        } else {
            Self::File(PathBuf::from(s))
        }
    }
}

/// What `jounce compare` runs.
#[derive(Clone, Debug)]
pub struct CompareOptions {
    /// Integrators, each run with every formulation.
    pub methods: Vec<String>,
    /// Formulations; empty: the model's own.
    pub formulations: Vec<String>,
    /// Relative tolerance of every run (default: the model's).
    pub rtol: Option<f64>,
    /// Absolute tolerance of every run (default: the model's).
    pub atol: Option<f64>,
    /// Fixed step of every run.
    pub step: Option<f64>,
    /// End time.
    pub t_end: Option<f64>,
    /// What the runs are compared to.
    pub reference: Reference,
    /// Output directory: the tables, the plots, one subfolder per run.
    pub out_dir: PathBuf,
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Integrated to the end time.
    Completed,
    /// Started and failed during the integration (its rows up to the
    /// failure are compared).
    Failed,
    /// Refused before integrating (a method that cannot run the
    /// formulation, an unknown name, a model the formulation cannot
    /// represent).
    Refused,
}

impl RunStatus {
    /// "completed", "failed" or "refused".
    pub fn label(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Refused => "refused",
        }
    }
}

/// One method × formulation run: its cost and its accuracy.
#[derive(Clone, Debug, Serialize)]
pub struct CompareRow {
    /// Integrator.
    pub method: String,
    /// Formulation.
    pub formulation: String,
    /// How the run ended.
    pub status: RunStatus,
    /// Why it failed or was refused.
    pub reason: Option<String>,
    /// Its output directory.
    pub dir: PathBuf,
    /// Time reached \[s\].
    pub t_reached: f64,
    /// Accepted steps.
    pub steps_accepted: u64,
    /// Rejected steps.
    pub steps_rejected: u64,
    /// Right-hand-side evaluations.
    pub rhs_evaluations: u64,
    /// Jacobian evaluations.
    pub jacobian_evaluations: u64,
    /// LU factorisations.
    pub lu_factorizations: u64,
    /// Newton iterations.
    pub newton_iterations: u64,
    /// CPU seconds of the integration alone.
    pub cpu_seconds: f64,
    /// CPU seconds of the whole run on its thread: setup, assembly,
    /// integration and output (`timeseries.csv`, `steps.csv`, the
    /// per-step monitors).
    pub run_cpu_seconds: f64,
    /// Wall-clock time from the start of the comparison at which the run
    /// started and finished \[s\] (runs overlap when they run in parallel).
    pub started_seconds: f64,
    /// See `started_seconds`.
    pub finished_seconds: f64,
    /// The rayon worker thread that ran it.
    pub worker: Option<usize>,
    /// Max energy error: relative to |E(0)| when the model conserves
    /// energy, else the energy balance residual
    /// max |E − E(0) − W_applied − W_drivers + D| in J (the change of E
    /// itself is the work put in, not an error, in a driven or damped
    /// model).
    pub energy_error: f64,
    /// Whether `energy_error` is relative.
    pub energy_error_relative: bool,
    /// Max ‖Φ‖∞.
    pub max_position_violation: f64,
    /// Max ‖Φ_q v + Φ_t‖∞.
    pub max_velocity_violation: f64,
    /// Error against the reference in units of the tolerance (module
    /// docs); `None` when it could not be measured.
    pub error: Option<f64>,
    /// Max |q_i − q_ref,i| over the rows compared, in the coordinates'
    /// units (m, rad).
    pub max_position_difference: Option<f64>,
    /// Output rows compared with the reference.
    pub rows_compared: usize,
    /// Why the error could not be measured.
    pub error_note: Option<String>,
    /// Error above [`FLAG_FACTOR`] tolerances.
    pub flagged: bool,
}

/// The reference the runs were compared to.
#[derive(Clone, Debug, Serialize)]
pub struct ReferenceInfo {
    /// What it is: "dop853 on augmented at rtol = atol = 1e-12" or the file.
    pub description: String,
    /// Its `timeseries.csv`.
    pub file: PathBuf,
    /// CPU seconds of the reference run (0 for a file).
    pub cpu_seconds: f64,
    /// Automatic reference runs that failed before the one used.
    pub failed_attempts: Vec<String>,
}

/// A whole comparison.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// Model name.
    pub model: String,
    /// Model file.
    pub model_file: String,
    /// Relative tolerance of the runs.
    pub rtol: f64,
    /// Absolute tolerance of the runs.
    pub atol: f64,
    /// Fixed step of the runs, if any.
    pub step: Option<f64>,
    /// End time.
    pub t_end: f64,
    /// The reference, or why there is none.
    pub reference: Result<ReferenceInfo, String>,
    /// One row per method × formulation, in the order asked.
    pub rows: Vec<CompareRow>,
    /// Wall-clock seconds of all runs (reference included), run in parallel.
    pub wall_seconds: f64,
    /// Worker threads used.
    pub threads: usize,
}

/// A file or directory name made of the characters of `s` that are safe
/// in one (others become `_`).
pub(crate) fn dir_name(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The model with a run's settings: method, formulation and the shared
/// overrides. Method parameters (`[settings.integrator.params]`) belong to
/// the model's own method and are dropped for another.
fn configured(
    model: &Model,
    method: &str,
    formulation: &str,
    o: &Overrides,
) -> Result<Model, RunError> {
    let mut m = model.clone();
    if !m.settings.integrator.method.eq_ignore_ascii_case(method) {
        m.settings.integrator.params.clear();
    }
    let o = Overrides {
        method: Some(method.to_string()),
        formulation: Some(formulation.to_string()),
        ..o.clone()
    };
    apply_overrides(&mut m, &o)?;
    Ok(m)
}

/// Run one combination; a refusal or a failure is a row, not an error.
pub(crate) fn run_one(
    model: &Model,
    method: &str,
    formulation: &str,
    o: &Overrides,
    dir: &Path,
    start: Instant,
) -> CompareRow {
    let mut row = CompareRow {
        method: method.to_string(),
        formulation: formulation.to_string(),
        status: RunStatus::Refused,
        reason: None,
        dir: dir.to_path_buf(),
        t_reached: 0.0,
        steps_accepted: 0,
        steps_rejected: 0,
        rhs_evaluations: 0,
        jacobian_evaluations: 0,
        lu_factorizations: 0,
        newton_iterations: 0,
        cpu_seconds: 0.0,
        run_cpu_seconds: 0.0,
        started_seconds: start.elapsed().as_secs_f64(),
        finished_seconds: 0.0,
        worker: rayon::current_thread_index(),
        energy_error: f64::NAN,
        energy_error_relative: false,
        max_position_violation: f64::NAN,
        max_velocity_violation: f64::NAN,
        error: None,
        max_position_difference: None,
        rows_compared: 0,
        error_note: None,
        flagged: false,
    };
    let cpu = thread_cpu_seconds();
    let result = configured(model, method, formulation, o).and_then(|m| run_model(&m, dir, None));
    row.run_cpu_seconds = thread_cpu_seconds() - cpu;
    row.finished_seconds = start.elapsed().as_secs_f64();
    let summary: RunSummary = match result {
        Ok(s) => {
            row.status = RunStatus::Completed;
            s
        }
        Err(RunError::Integration { summary, .. }) => {
            row.status = RunStatus::Failed;
            *summary
        }
        Err(e) => {
            row.reason = Some(e.to_string());
            return row;
        }
    };
    let w = &summary.work;
    let a = &summary.accuracy;
    row.reason = summary.error.clone();
    row.t_reached = summary.t_reached;
    row.steps_accepted = w.steps_accepted;
    row.steps_rejected = w.steps_rejected;
    row.rhs_evaluations = w.rhs_evaluations;
    row.jacobian_evaluations = w.jacobian_evaluations;
    row.lu_factorizations = w.lu_factorizations;
    row.newton_iterations = w.newton_iterations;
    row.cpu_seconds = w.cpu_seconds;
    row.energy_error_relative = a.energy_conserved_by_model;
    row.energy_error = if a.energy_conserved_by_model {
        a.max_relative_energy_error
    } else {
        a.max_energy_balance_residual
    };
    row.max_position_violation = a.max_position_violation;
    row.max_velocity_violation = a.max_velocity_violation;
    row
}

/// The error of a run's `timeseries.csv` against the reference's (module
/// docs): (error in tolerances, max |Δq|, rows compared).
///
/// # Errors
/// A message when the files share no position column or no output time.
pub fn error_against_reference(
    run: &Series,
    reference: &Series,
    rtol: f64,
    atol: f64,
) -> Result<(f64, f64, usize), String> {
    let columns: Vec<(usize, usize)> = run
        .position_columns()
        .iter()
        .filter_map(|c| Some((run.column_index(c)?, reference.column_index(c)?)))
        .collect();
    if columns.is_empty() {
        return Err("no position coordinate in common with the reference".into());
    }
    let (Some(tr), Some(tref)) = (run.column_index("t"), reference.column_index("t")) else {
        return Err("no column 't'".into());
    };
    let scale: Vec<f64> = columns
        .iter()
        .map(|&(_, j)| {
            let m = reference
                .rows
                .iter()
                .map(|r| r[j].abs())
                .filter(|x| x.is_finite())
                .fold(0.0, f64::max);
            atol + rtol * m
        })
        .collect();
    let mut err = 0.0_f64;
    let mut diff = 0.0_f64;
    let mut rows = 0;
    for r in &run.rows {
        let t = r[tr];
        let eps = 1e-9 * t.abs().max(1.0);
        let k = reference.rows.partition_point(|x| x[tref] < t - eps);
        let Some(rr) = reference.rows.get(k).filter(|x| (x[tref] - t).abs() <= eps) else {
            continue;
        };
        rows += 1;
        for (&(i, j), s) in columns.iter().zip(&scale) {
            let d = (r[i] - rr[j]).abs();
            // a non-finite value in the run is an infinite error
            let d = if d.is_finite() { d } else { f64::INFINITY };
            diff = diff.max(d);
            err = err.max(d / s);
        }
    }
    if rows == 0 {
        return Err("no output time in common with the reference".into());
    }
    Ok((err, diff, rows))
}

/// Run the automatic reference into `dir`: the runs of [`REFERENCE_RUNS`]
/// in turn until one completes.
pub(crate) fn auto_reference(
    model: &Model,
    o: &Overrides,
    dir: &Path,
) -> Result<ReferenceInfo, String> {
    let mut failed = Vec::new();
    for (method, formulation) in REFERENCE_RUNS {
        let tight = Overrides {
            rtol: Some(REFERENCE_TOL),
            atol: Some(REFERENCE_TOL),
            step: None,
            no_step_history: true,
            ..o.clone()
        };
        let result = configured(model, method, formulation, &tight).and_then(|mut m| {
            m.settings.integrator.step = None;
            run_model(&m, dir, None)
        });
        match result {
            Ok(s) => {
                return Ok(ReferenceInfo {
                    description: format!(
                        "{method} on {formulation} at rtol = atol = {REFERENCE_TOL:e}"
                    ),
                    file: dir.join("timeseries.csv"),
                    cpu_seconds: s.work.cpu_seconds,
                    failed_attempts: failed,
                })
            }
            Err(e) => failed.push(format!("{method} on {formulation}: {e}")),
        }
    }
    Err(format!("no reference run completed: {}", failed.join("; ")))
}

/// The reference file given by the user: a `timeseries.csv` or a directory
/// holding one.
pub(crate) fn file_reference(path: &Path) -> Result<ReferenceInfo, String> {
    let file = if path.is_dir() {
        path.join("timeseries.csv")
    } else {
        path.to_path_buf()
    };
    if !file.is_file() {
        return Err(format!(
            "{}: no such reference file (give a timeseries.csv or the directory of a run)",
            file.display()
        ));
    }
    Ok(ReferenceInfo {
        description: format!("{}", file.display()),
        file,
        cpu_seconds: 0.0,
        failed_attempts: Vec::new(),
    })
}

/// Run every method × formulation of `opts` on `model` in parallel (one
/// rayon task per run, the automatic reference among them), then measure
/// each run against the reference and flag those that miss the tolerance
/// by more than [`FLAG_FACTOR`]. Each run writes into
/// `opts.out_dir/<method>-<formulation>`, the reference into
/// `opts.out_dir/reference`.
///
/// # Errors
/// [`RunError::Setup`] for an empty method list, an unknown method or an invalid shared
/// setting (a non-positive tolerance, step or end time); failed and
/// refused runs, and a reference that cannot be had, are reported in the
/// [`Comparison`], not as errors.
pub fn compare(model: &Model, opts: &CompareOptions) -> Result<Comparison, RunError> {
    let methods = dedup(&opts.methods);
    if methods.is_empty() {
        return Err(RunError::Setup(
            "--methods: give at least one integrator (see `jounce methods`)".into(),
        ));
    }
    // an unknown name is a typo to fix, not a row of the table
    for m in &methods {
        if jounce_integrate::method::find(m).is_err() {
            let names = jounce_integrate::method::names();
            return Err(RunError::Setup(format!(
                "--methods: unknown integrator '{m}'{}; `jounce methods` lists the {} integrators",
                crate::validate::did_you_mean(m, names.iter().copied()),
                names.len()
            )));
        }
    }
    let formulations = if opts.formulations.is_empty() {
        vec![crate::setup::formulation_name(model.settings.formulation.kind).to_string()]
    } else {
        dedup(&opts.formulations)
    };
    let shared = Overrides {
        rtol: opts.rtol,
        atol: opts.atol,
        step: opts.step,
        t_end: opts.t_end,
        ..Overrides::default()
    };
    // the settings every run shares are checked once, before any work
    let mut base = model.clone();
    apply_overrides(&mut base, &shared)?;
    std::fs::create_dir_all(&opts.out_dir)
        .map_err(|e| RunError::Io(jounce_io::IoError::new(&opts.out_dir, e)))?;

    let jobs: Vec<(String, String, PathBuf)> = methods
        .iter()
        .flat_map(|m| {
            formulations.iter().map(move |f| {
                let dir = opts.out_dir.join(dir_name(&format!("{m}-{f}")));
                (m.clone(), f.clone(), dir)
            })
        })
        .collect();
    let wall = Instant::now();
    let (reference, mut rows) = rayon::join(
        || match &opts.reference {
            Reference::Auto => auto_reference(model, &shared, &opts.out_dir.join("reference")),
            Reference::File(p) => file_reference(p),
        },
        || {
            jobs.par_iter()
                .map(|(m, f, dir)| run_one(model, m, f, &shared, dir, wall))
                .collect::<Vec<CompareRow>>()
        },
    );
    let wall_seconds = wall.elapsed().as_secs_f64();

    let (rtol, atol) = (base.settings.integrator.rtol, base.settings.integrator.atol);
    let reference_series = reference
        .as_ref()
        .map_err(Clone::clone)
        .and_then(|r| Series::read(&r.file).map_err(|e| e.to_string()));
    for row in &mut rows {
        if row.status == RunStatus::Refused {
            continue;
        }
        let measured = reference_series
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|rs| {
                let s = Series::read(&row.dir.join("timeseries.csv")).map_err(|e| e.to_string())?;
                error_against_reference(&s, rs, rtol, atol)
            });
        match measured {
            Ok((e, d, n)) => {
                row.error = Some(e);
                row.max_position_difference = Some(d);
                row.rows_compared = n;
                row.flagged = !(e <= FLAG_FACTOR);
            }
            Err(note) => row.error_note = Some(note),
        }
    }
    Ok(Comparison {
        model: model.name.clone(),
        model_file: model.source.clone(),
        rtol,
        atol,
        step: base.settings.integrator.step,
        t_end: base.settings.t_end,
        reference,
        rows,
        wall_seconds,
        threads: rayon::current_num_threads(),
    })
}

pub(crate) fn dedup(names: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        if !out.iter().any(|o| o == n) {
            out.push(n.to_string());
        }
    }
    out
}

fn opt_e(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.2e}"))
}

/// The comparison as a plain-text table, then the flagged runs and the
/// failed or refused ones with their reasons.
pub fn table_text(c: &Comparison) -> String {
    let mut s = String::new();
    let step = c
        .step
        .map_or_else(String::new, |h| format!(", fixed step {h} s"));
    let _ = writeln!(
        s,
        "{} ({}): t = 0 .. {} s, rtol = {:e}, atol = {:e}{step}",
        c.model, c.model_file, c.t_end, c.rtol, c.atol
    );
    match &c.reference {
        Ok(r) => {
            let _ = writeln!(s, "reference: {}", r.description);
            for f in &r.failed_attempts {
                let _ = writeln!(s, "  (reference attempt failed: {f})");
            }
        }
        Err(e) => {
            let _ = writeln!(s, "reference: none ({e}); errors not measured");
        }
    }
    let _ = writeln!(
        s,
        "{:<18} {:<20} {:<9} {:>9} {:>8} {:>9} {:>7} {:>7} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>4}",
        "method",
        "formulation",
        "status",
        "accepted",
        "rejected",
        "rhs",
        "jac",
        "LU",
        "Newton",
        "CPU [s]",
        "energy",
        "|Phi|",
        "|Phi'|",
        "err/tol",
        ""
    );
    for r in &c.rows {
        let refused = r.status == RunStatus::Refused;
        let num = |x: u64| {
            if refused {
                "-".to_string()
            } else {
                x.to_string()
            }
        };
        let e = |x: f64| {
            if refused {
                "-".to_string()
            } else {
                format!("{x:.2e}")
            }
        };
        let _ = writeln!(
            s,
            "{:<18} {:<20} {:<9} {:>9} {:>8} {:>9} {:>7} {:>7} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>4}",
            r.method,
            r.formulation,
            r.status.label(),
            num(r.steps_accepted),
            num(r.steps_rejected),
            num(r.rhs_evaluations),
            num(r.jacobian_evaluations),
            num(r.lu_factorizations),
            num(r.newton_iterations),
            if refused { "-".to_string() } else { format!("{:.4}", r.cpu_seconds) },
            e(r.energy_error),
            e(r.max_position_violation),
            e(r.max_velocity_violation),
            opt_e(r.error),
            if r.flagged { "!" } else { "" }
        );
    }
    let energy_relative = c.rows.iter().any(|r| r.energy_error_relative);
    let _ = writeln!(
        s,
        "energy: max {}; err/tol: max over output rows and position coordinates of |q - q_ref| / (atol + rtol max|q_ref|)",
        if energy_relative {
            "|E - E0| / |E0|"
        } else {
            "|E - E0 - W_applied - W_drivers + D| [J], the energy balance residual (the model does not conserve energy)"
        }
    );
    let flagged: Vec<&CompareRow> = c.rows.iter().filter(|r| r.flagged).collect();
    if !flagged.is_empty() {
        let _ = writeln!(s, "flagged (error more than {FLAG_FACTOR}x the tolerance):");
        for r in flagged {
            let _ = writeln!(
                s,
                "  ! {} on {}: error {} tolerances, max |q - q_ref| = {}",
                r.method,
                r.formulation,
                opt_e(r.error),
                opt_e(r.max_position_difference)
            );
        }
    }
    let bad: Vec<&CompareRow> = c
        .rows
        .iter()
        .filter(|r| r.status != RunStatus::Completed || r.error_note.is_some())
        .collect();
    if !bad.is_empty() {
        let _ = writeln!(s, "failed, refused or not measured:");
        for r in bad {
            let why = r
                .reason
                .as_deref()
                .or(r.error_note.as_deref())
                .unwrap_or("");
            let _ = writeln!(
                s,
                "  {} on {} ({}{}): {why}",
                r.method,
                r.formulation,
                r.status.label(),
                if r.status == RunStatus::Failed {
                    format!(" at t = {} s, error {}", r.t_reached, opt_e(r.error))
                } else {
                    String::new()
                }
            );
        }
    }
    s
}

/// CSV header of [`csv_text`].
pub const CSV_HEADER: [&str; 22] = [
    "method",
    "formulation",
    "status",
    "t_reached",
    "steps_accepted",
    "steps_rejected",
    "rhs_evaluations",
    "jacobian_evaluations",
    "lu_factorizations",
    "newton_iterations",
    "cpu_seconds",
    "run_cpu_seconds",
    "energy_error",
    "energy_error_relative",
    "max_position_violation",
    "max_velocity_violation",
    "error",
    "max_position_difference",
    "rows_compared",
    "flagged",
    "reason",
    "dir",
];

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The table as CSV text (columns [`CSV_HEADER`]; an empty field where a
/// figure is absent).
pub fn csv_text(c: &Comparison) -> String {
    let mut s = CSV_HEADER.join(",");
    s.push('\n');
    let o = |x: Option<f64>| x.map_or_else(String::new, |v| v.to_string());
    for r in &c.rows {
        let reason = r
            .reason
            .as_deref()
            .or(r.error_note.as_deref())
            .unwrap_or("");
        let fields = [
            r.method.clone(),
            r.formulation.clone(),
            r.status.label().to_string(),
            r.t_reached.to_string(),
            r.steps_accepted.to_string(),
            r.steps_rejected.to_string(),
            r.rhs_evaluations.to_string(),
            r.jacobian_evaluations.to_string(),
            r.lu_factorizations.to_string(),
            r.newton_iterations.to_string(),
            r.cpu_seconds.to_string(),
            r.run_cpu_seconds.to_string(),
            r.energy_error.to_string(),
            r.energy_error_relative.to_string(),
            r.max_position_violation.to_string(),
            r.max_velocity_violation.to_string(),
            o(r.error),
            o(r.max_position_difference),
            r.rows_compared.to_string(),
            r.flagged.to_string(),
            reason.to_string(),
            r.dir.display().to_string(),
        ];
        let line: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
        s.push_str(&line.join(","));
        s.push('\n');
    }
    s
}

/// The comparison as JSON (non-finite numbers as `null`).
pub fn json_text(c: &Comparison) -> String {
    let reference = match &c.reference {
        Ok(r) => serde_json::json!({ "ok": r }),
        Err(e) => serde_json::json!({ "error": e }),
    };
    let mut v = serde_json::to_value(c).unwrap_or(serde_json::Value::Null);
    if let Some(obj) = v.as_object_mut() {
        obj.insert("reference".into(), reference);
    }
    serde_json::to_string_pretty(&v).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// Write `compare.csv`, `compare.json` and the plots
/// ([`crate::plot::compare_plots`]) into `out_dir`; returns the files
/// written.
///
/// # Errors
/// [`RunError::Io`] naming a file that cannot be written or read.
pub fn write_outputs(c: &Comparison, out_dir: &Path) -> Result<Vec<PathBuf>, RunError> {
    let mut files = Vec::new();
    for (name, text) in [("compare.csv", csv_text(c)), ("compare.json", json_text(c))] {
        let p = out_dir.join(name);
        std::fs::write(&p, text).map_err(|e| RunError::Io(jounce_io::IoError::new(&p, e)))?;
        files.push(p);
    }
    let runs: Vec<(String, PathBuf)> = c
        .rows
        .iter()
        .filter(|r| r.status != RunStatus::Refused)
        .map(|r| (format!("{} / {}", r.method, r.formulation), r.dir.clone()))
        .collect();
    for p in crate::plot::compare_plots(out_dir, &runs)? {
        files.push(p.path);
    }
    Ok(files)
}
