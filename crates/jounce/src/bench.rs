//! `jounce bench`: work-precision diagrams. Each method runs the model
//! over a sweep of tolerances (rtol = atol) or of fixed steps, all runs in
//! parallel (rayon), and each run's error against one tight reference
//! (the reference of `jounce compare`) is set against the CPU time of its
//! integration: the diagram of Hairer & Wanner (*Solving Ordinary
//! Differential Equations II*, §IV.10) that says which method is cheapest
//! at the accuracy a user needs.
//!
//! **Error.** max over output rows and position coordinates of
//! |q_i − q_ref,i| (m, rad): an absolute figure, so that runs at different
//! tolerances are measured alike ([`crate::compare::error_against_reference`]).
//!
//! **At equal error.** For each decade of error that two or more methods
//! reach, the CPU time each needs for it, interpolated log-log between its
//! two runs that bracket it, and its ratio to the cheapest: the comparison
//! the developers' standards ask for (ratios at equal error, integration
//! CPU alone).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use jounce_model::Model;
use rayon::prelude::*;
use serde::Serialize;

use crate::compare::{
    auto_reference, dedup, dir_name, error_against_reference, file_reference, run_one, CompareRow,
    Reference, ReferenceInfo, RunStatus,
};
use crate::error::RunError;
use crate::plot::{log_log_chart, Chart, Curve, PlotFile, YScale};
use crate::run::{apply_overrides, Overrides};
use crate::series::Series;

/// Tolerances of the default sweep: 1e-3 … 1e-10, a run per decade.
pub const DEFAULT_TOLERANCES: [f64; 8] = [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10];

/// What `jounce bench` runs.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Integrators.
    pub methods: Vec<String>,
    /// Formulation of every run (default: the model's).
    pub formulation: Option<String>,
    /// Tolerances rtol = atol of the sweep (ignored when `steps` is given).
    pub tolerances: Vec<f64>,
    /// Fixed steps of the sweep, for fixed-step methods.
    pub steps: Vec<f64>,
    /// End time.
    pub t_end: Option<f64>,
    /// What the runs are compared to.
    pub reference: Reference,
    /// Output directory: table, CSV, JSON, SVG, one folder per run.
    pub out_dir: PathBuf,
}

/// One run of the sweep.
#[derive(Clone, Debug, Serialize)]
pub struct BenchPoint {
    /// The tolerance or the fixed step of the run.
    pub setting: f64,
    /// Its cost and accuracy (the row `jounce compare` prints).
    pub run: CompareRow,
}

/// CPU time of each method at one error, interpolated.
#[derive(Clone, Debug, Serialize)]
pub struct EqualError {
    /// The error [m or rad].
    pub error: f64,
    /// (method, CPU seconds), cheapest first.
    pub cpu: Vec<(String, f64)>,
}

/// A whole work-precision study.
#[derive(Clone, Debug, Serialize)]
pub struct Bench {
    /// Model name.
    pub model: String,
    /// Formulation of the runs.
    pub formulation: String,
    /// Whether the sweep is over fixed steps (else tolerances).
    pub by_step: bool,
    /// The reference, or why there is none.
    pub reference: Result<ReferenceInfo, String>,
    /// The runs, method by method in the order asked, setting by setting.
    pub points: Vec<BenchPoint>,
    /// Methods in the order asked.
    pub methods: Vec<String>,
    /// CPU at equal error, per decade two or more methods reach.
    pub equal_error: Vec<EqualError>,
    /// Wall-clock seconds of all runs.
    pub wall_seconds: f64,
    /// Worker threads.
    pub threads: usize,
}

impl Bench {
    /// The completed runs of `method` with a measured error, as
    /// (error, CPU seconds), in sweep order.
    pub fn curve(&self, method: &str) -> Vec<(f64, f64)> {
        self.points
            .iter()
            .filter(|p| p.run.method == method && p.run.status == RunStatus::Completed)
            .filter_map(|p| {
                let e = p.run.max_position_difference?;
                (e.is_finite() && e > 0.0).then_some((e, p.run.cpu_seconds))
            })
            .collect()
    }
}

/// CPU time at error `e` on a work-precision curve, interpolated log-log
/// between two runs whose errors bracket `e` (the cheapest such pair);
/// `None` when no pair brackets it.
pub fn cpu_at_error(curve: &[(f64, f64)], e: f64) -> Option<f64> {
    let mut best: Option<f64> = None;
    for (i, a) in curve.iter().enumerate() {
        for b in &curve[i + 1..] {
            let (lo, hi) = if a.0 <= b.0 { (a, b) } else { (b, a) };
            if !(lo.0 <= e && e <= hi.0) || lo.1 <= 0.0 || hi.1 <= 0.0 {
                continue;
            }
            let cpu = if hi.0 == lo.0 {
                lo.1.min(hi.1)
            } else {
                let s = (e.ln() - lo.0.ln()) / (hi.0.ln() - lo.0.ln());
                (lo.1.ln() + s * (hi.1.ln() - lo.1.ln())).exp()
            };
            best = Some(best.map_or(cpu, |b: f64| b.min(cpu)));
        }
    }
    best
}

/// Run the sweep of `opts` on `model` (module docs).
///
/// # Errors
/// [`RunError::Setup`] for an empty method list, a non-positive tolerance
/// or step, or an invalid shared setting. Failed and refused runs are
/// points of the study, not errors.
pub fn bench(model: &Model, opts: &BenchOptions) -> Result<Bench, RunError> {
    let methods = dedup(&opts.methods);
    if methods.is_empty() {
        return Err(RunError::Setup(
            "--methods: give at least one integrator (see `jounce methods`)".into(),
        ));
    }
    let by_step = !opts.steps.is_empty();
    let settings: Vec<f64> = if by_step {
        opts.steps.clone()
    } else if opts.tolerances.is_empty() {
        DEFAULT_TOLERANCES.to_vec()
    } else {
        opts.tolerances.clone()
    };
    if let Some(x) = settings.iter().find(|x| !(x.is_finite() && **x > 0.0)) {
        let what = if by_step { "--steps" } else { "--tolerances" };
        return Err(RunError::Setup(format!(
            "{what}: every value must be finite and > 0, got {x}"
        )));
    }
    let formulation = opts.formulation.clone().unwrap_or_else(|| {
        crate::setup::formulation_name(model.settings.formulation.kind).to_string()
    });
    let shared = Overrides {
        t_end: opts.t_end,
        ..Overrides::default()
    };
    let mut base = model.clone();
    apply_overrides(&mut base, &shared)?;
    std::fs::create_dir_all(&opts.out_dir)
        .map_err(|e| RunError::Io(jounce_io::IoError::new(&opts.out_dir, e)))?;

    let shared_ref = &shared;
    let out_dir = &opts.out_dir;
    let jobs: Vec<(String, f64, Overrides, PathBuf)> = methods
        .iter()
        .flat_map(|m| {
            settings.iter().map(move |&x| {
                let o = if by_step {
                    Overrides {
                        step: Some(x),
                        ..shared_ref.clone()
                    }
                } else {
                    Overrides {
                        rtol: Some(x),
                        atol: Some(x),
                        ..shared_ref.clone()
                    }
                };
                let dir = out_dir.join(dir_name(&format!("{m}-{x:e}")));
                (m.clone(), x, o, dir)
            })
        })
        .collect();
    let wall = Instant::now();
    let (reference, runs) = rayon::join(
        || match &opts.reference {
            Reference::Auto => auto_reference(model, &shared, &opts.out_dir.join("reference")),
            Reference::File(p) => file_reference(p),
        },
        || {
            jobs.par_iter()
                .map(|(m, x, o, dir)| BenchPoint {
                    setting: *x,
                    run: run_one(model, m, &formulation, o, dir, wall),
                })
                .collect::<Vec<BenchPoint>>()
        },
    );
    let wall_seconds = wall.elapsed().as_secs_f64();
    let mut points = runs;
    let reference_series = reference
        .as_ref()
        .map_err(Clone::clone)
        .and_then(|r| Series::read(&r.file).map_err(|e| e.to_string()));
    for p in &mut points {
        if p.run.status == RunStatus::Refused {
            continue;
        }
        let (rtol, atol) = if by_step {
            (base.settings.integrator.rtol, base.settings.integrator.atol)
        } else {
            (p.setting, p.setting)
        };
        let measured = reference_series
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|rs| {
                let s =
                    Series::read(&p.run.dir.join("timeseries.csv")).map_err(|e| e.to_string())?;
                error_against_reference(&s, rs, rtol, atol)
            });
        match measured {
            Ok((e, d, n)) => {
                p.run.error = Some(e);
                p.run.max_position_difference = Some(d);
                p.run.rows_compared = n;
                p.run.flagged = !by_step && !(e <= crate::compare::FLAG_FACTOR);
            }
            Err(note) => p.run.error_note = Some(note),
        }
    }
    let mut out = Bench {
        model: model.name.clone(),
        formulation,
        by_step,
        reference,
        points,
        methods,
        equal_error: Vec::new(),
        wall_seconds,
        threads: rayon::current_num_threads(),
    };
    out.equal_error = equal_error(&out);
    Ok(out)
}

/// CPU at equal error for each decade 1e-1 … 1e-14 that two or more
/// methods reach.
fn equal_error(b: &Bench) -> Vec<EqualError> {
    let curves: Vec<(String, Vec<(f64, f64)>)> =
        b.methods.iter().map(|m| (m.clone(), b.curve(m))).collect();
    let mut out = Vec::new();
    for k in 1..=14 {
        let e = 10f64.powi(-k);
        let mut cpu: Vec<(String, f64)> = curves
            .iter()
            .filter_map(|(m, c)| Some((m.clone(), cpu_at_error(c, e)?)))
            .collect();
        if cpu.len() >= 2 {
            cpu.sort_by(|a, b| a.1.total_cmp(&b.1));
            out.push(EqualError { error: e, cpu });
        }
    }
    out
}

/// The study as text: one row per run, then CPU at equal error.
pub fn bench_table(b: &Bench) -> String {
    let mut s = String::new();
    let what = if b.by_step { "step [s]" } else { "rtol=atol" };
    let _ = writeln!(
        s,
        "work-precision: {} on {} ({} runs in {:.2} s wall on {} threads)",
        b.model,
        b.formulation,
        b.points.len(),
        b.wall_seconds,
        b.threads
    );
    match &b.reference {
        Ok(r) => {
            let _ = writeln!(
                s,
                "reference: {} (CPU {:.3} s)",
                r.description, r.cpu_seconds
            );
        }
        Err(e) => {
            let _ = writeln!(s, "reference: none ({e})");
        }
    }
    let _ = writeln!(
        s,
        "{:<18} {:>10} {:>10} {:>8} {:>8} {:>10} {:>11} {:>11} {:>11}",
        "method",
        what,
        "status",
        "steps",
        "rejected",
        "f-evals",
        "CPU [s]",
        "max |Δq|",
        "error/tol"
    );
    for p in &b.points {
        let r = &p.run;
        let opt = |x: Option<f64>| x.map_or_else(|| "-".to_string(), |v| format!("{v:.3e}"));
        let _ = writeln!(
            s,
            "{:<18} {:>10.1e} {:>10} {:>8} {:>8} {:>10} {:>11.3e} {:>11} {:>11}{}",
            r.method,
            p.setting,
            r.status.label(),
            r.steps_accepted,
            r.steps_rejected,
            r.rhs_evaluations,
            r.cpu_seconds,
            opt(r.max_position_difference),
            if b.by_step {
                "-".to_string()
            } else {
                opt(r.error)
            },
            if r.flagged {
                "  FLAGGED (> 10x tol)"
            } else {
                ""
            }
        );
    }
    if b.equal_error.is_empty() {
        let _ = writeln!(
            s,
            "\nno error level reached by two methods: no equal-error comparison"
        );
    } else {
        let _ = writeln!(
            s,
            "\nCPU at equal error (log-log interpolation between runs):"
        );
        for e in &b.equal_error {
            let best = e.cpu[0].1;
            let parts: Vec<String> = e
                .cpu
                .iter()
                .map(|(m, c)| format!("{m} {c:.3e} s ({:.2}x)", c / best))
                .collect();
            let _ = writeln!(s, "  max |Δq| = {:.0e}: {}", e.error, parts.join(", "));
        }
    }
    for p in b
        .points
        .iter()
        .filter(|p| p.run.status != RunStatus::Completed)
    {
        let _ = writeln!(
            s,
            "{} at {:e} {}: {}",
            p.run.method,
            p.setting,
            p.run.status.label(),
            p.run.reason.as_deref().unwrap_or("")
        );
    }
    s
}

/// Write `bench.csv`, `bench.json`, the diagram `work_precision.svg`
/// (CPU against error, log-log, one curve per method) and the charts of
/// every run against simulated time ([`crate::plot::run_charts`]) into
/// `dir`.
///
/// # Errors
/// [`RunError::Io`] naming a file that cannot be written.
pub fn write_bench(b: &Bench, dir: &Path) -> Result<PlotFile, RunError> {
    let io = |p: &Path, e: std::io::Error| RunError::Io(jounce_io::IoError::new(p, e));
    let mut csv = String::from(
        "method,setting,status,steps_accepted,steps_rejected,rhs_evaluations,jacobian_evaluations,lu_factorizations,cpu_seconds,max_position_difference,error_in_tolerances\n",
    );
    for p in &b.points {
        let r = &p.run;
        let opt = |x: Option<f64>| x.map_or_else(String::new, |v| format!("{v:e}"));
        let _ = writeln!(
            csv,
            "{},{:e},{},{},{},{},{},{},{:e},{},{}",
            r.method,
            p.setting,
            r.status.label(),
            r.steps_accepted,
            r.steps_rejected,
            r.rhs_evaluations,
            r.jacobian_evaluations,
            r.lu_factorizations,
            r.cpu_seconds,
            opt(r.max_position_difference),
            opt(r.error)
        );
    }
    let path = dir.join("bench.csv");
    std::fs::write(&path, csv).map_err(|e| io(&path, e))?;
    let path = dir.join("bench.json");
    let json = serde_json::to_string_pretty(b).map_err(|e| RunError::Setup(e.to_string()))?;
    std::fs::write(&path, json).map_err(|e| io(&path, e))?;
    let curves: Vec<Curve> = b
        .methods
        .iter()
        .map(|m| {
            let mut points = b.curve(m);
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Curve {
                label: m.clone(),
                points,
            }
        })
        .collect();
    crate::plot::run_charts(dir, &|name| name != "reference")?;
    let title = format!("work-precision: {}", b.model);
    log_log_chart(
        &dir.join("work_precision.svg"),
        &Chart {
            title: &title,
            x_label: "max |q - q_ref| (m, rad)",
            y_label: "integration CPU [s]",
            y_scale: YScale::Log,
        },
        &curves,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Interpolation is exact on a power law cpu = c e^(−p) and refuses
    /// errors outside the runs.
    #[test]
    fn cpu_at_error_interpolates_a_power_law_and_refuses_extrapolation() {
        let law = |e: f64| 2.0 * e.powf(-0.25);
        let curve: Vec<(f64, f64)> = [1e-3, 1e-5, 1e-8].iter().map(|&e| (e, law(e))).collect();
        for e in [1e-3, 3e-4, 1e-6, 2e-8] {
            let c = cpu_at_error(&curve, e).unwrap();
            assert!((c / law(e) - 1.0).abs() < 1e-12, "{e}: {c} vs {}", law(e));
        }
        assert!(cpu_at_error(&curve, 1e-2).is_none());
        assert!(cpu_at_error(&curve, 1e-9).is_none());
    }
}
