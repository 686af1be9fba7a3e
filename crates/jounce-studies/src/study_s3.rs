//! `jounce study s3` (studies.md S3; termeer 1996, tests 2a–2c): the cost
//! of a discontinuous force on a stiff oscillator (m = 1 kg, k = 1e8 N/m,
//! b ∈ {2e2, 2e3, 2e4} Ns/m, damping ratio ζ = b/(2√(km)) = 0.01, 0.1, 1)
//! for the implicit variable-step methods, from the shipped models
//! `examples/studies/s3_b*_*.toml`:
//!
//! - (a) a step of 1e7 N at t = 2 s;
//! - (b) F = 3.18e6 (atan(A (t − 2)) + π/2), A ∈ {1e3, 1e4};
//! - (c) the cycloidal ramp F = 1e7 (s/T − sin(2π s/T)/(2π)), s = t − 2,
//!   T ∈ {1, 5, 10, 20} ms.
//!
//! Each run reports the work of the steps that end after t = 2 s
//! (`settings.cost_from`): steps, rejections, f-evaluations, Jacobians, LU
//! factorisations, CPU. The step and the cycloidal ramp (which have
//! breakpoints) are run with the integrator told of them (it stops and
//! restarts there) and not (`breakpoints = false`). The seed's findings
//! are then marked from the measured numbers: more damping is cheaper; the
//! cycloidal ramp is cheaper than the step (24 % of it at T = 0.01 s, ζ =
//! 0.01; 44 % at ζ = 1), a ramp of 20 ms costs a little more than one of
//! 10 ms at ζ = 0.01; the arctan gives no gain (except A = 1e3 at ζ =
//! 0.01, 85 %). The cost compared is the number of f-evaluations after
//! t = 2, which unlike a CPU time of milliseconds does not vary from run
//! to run; the CPU ratios are printed beside it. A "cheaper" holds only
//! by more than [`MIN_MARGIN`] (10 %) of those counts
//! ([`crate::judge::less`]): deterministic as they are, a difference of a
//! few per cent (a ratio of 1.001) is no saving.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use jounce_io::RunSummary;

use jounce::error::RunError;
use jounce::run::run_model;

use crate::judge::{less, Verdict, MIN_MARGIN};

/// The implicit variable-step methods the study runs by default.
pub const S3_METHODS: [&str; 6] = ["radau5", "bdf", "ndf", "trbdf2", "sdirk2", "rodas4"];

/// Dampings b [Ns/m] with their model-file tags and damping ratios.
pub const S3_DAMPINGS: [(&str, f64); 3] = [("2e2", 0.01), ("2e3", 0.1), ("2e4", 1.0)];

/// The forcings: model-file tag and label. The first is the step, the
/// reference of the ratios.
pub const S3_FORCINGS: [(&str, &str); 7] = [
    ("step", "step"),
    ("arctan_a1e3", "arctan A=1e3"),
    ("arctan_a1e4", "arctan A=1e4"),
    ("cycloidal_1ms", "cycloid T=1ms"),
    ("cycloidal_5ms", "cycloid T=5ms"),
    ("cycloidal_10ms", "cycloid T=10ms"),
    ("cycloidal_20ms", "cycloid T=20ms"),
];

/// Start of the discontinuous part whose cost is reported \[s\].
pub const S3_COST_FROM: f64 = 2.0;

/// One run of the study.
#[derive(Clone, Debug, serde::Serialize)]
pub struct S3Run {
    /// Method.
    pub method: String,
    /// Damping tag ("2e2").
    pub damping: &'static str,
    /// Damping ratio ζ.
    pub zeta: f64,
    /// Forcing tag ("cycloidal_10ms").
    pub forcing: &'static str,
    /// Whether the integrator was told of the breakpoints.
    pub breakpoints: bool,
    /// The run's summary (also for a failed run).
    pub summary: RunSummary,
}

impl S3Run {
    /// Whether the run completed.
    pub fn completed(&self) -> bool {
        self.summary.status == "completed"
    }

    /// The cost after t = 2 (zeros when the run stopped before).
    pub fn cost(&self) -> jounce_io::CostFromSummary {
        self.summary.cost_from.clone().unwrap_or_default()
    }
}

/// What `jounce study s3` ran.
#[derive(Clone, Debug, serde::Serialize)]
pub struct S3Study {
    /// Every run, by method, then damping, forcing, breakpoints on/off.
    pub runs: Vec<S3Run>,
    /// The methods run.
    pub methods: Vec<String>,
    /// The table as CSV.
    pub csv: PathBuf,
}

impl S3Study {
    /// The run of `method` at damping `b` with `forcing`, breakpoints on or off.
    pub fn find(&self, method: &str, b: &str, forcing: &str, breakpoints: bool) -> Option<&S3Run> {
        self.runs.iter().find(|r| {
            r.method == method
                && r.damping == b
                && r.forcing == forcing
                && r.breakpoints == breakpoints
        })
    }

    /// Cost after t = 2 in f-evaluations of a completed run with the
    /// integrator told of the breakpoints.
    fn fevals(&self, method: &str, b: &str, forcing: &str) -> Option<f64> {
        self.find(method, b, forcing, true)
            .filter(|r| r.completed())
            .map(|r| r.cost().rhs_evaluations as f64)
    }

    /// cost(forcing) / cost(step) at damping b, in f-evaluations after t = 2.
    pub fn ratio_to_step(&self, method: &str, b: &str, forcing: &str) -> Option<f64> {
        Some(self.fevals(method, b, forcing)? / self.fevals(method, b, "step")?)
    }

    /// (f-evaluations after t = 2, f-evaluations of the whole run) with
    /// breakpoints off over on, for `forcing` at damping b; None when
    /// either run failed.
    pub fn off_over_on(&self, method: &str, b: &str, forcing: &str) -> Option<(f64, f64)> {
        let on = self
            .find(method, b, forcing, true)
            .filter(|r| r.completed())?;
        let off = self
            .find(method, b, forcing, false)
            .filter(|r| r.completed())?;
        Some((
            off.cost().rhs_evaluations as f64 / on.cost().rhs_evaluations as f64,
            off.summary.work.rhs_evaluations as f64 / on.summary.work.rhs_evaluations as f64,
        ))
    }
}

/// Run S3 from the models in `examples` with `methods` (default
/// [`S3_METHODS`]), writing each run under `out` and the table to
/// `out/s3_cost.csv`.
///
/// # Errors
/// A model cannot be loaded, a run fails before integrating (an unknown
/// method), or the CSV cannot be written. A failed integration is a row
/// with its status.
pub fn s3(examples: &Path, out: &Path, methods: &[String]) -> Result<S3Study, RunError> {
    let methods: Vec<String> = if methods.is_empty() {
        S3_METHODS.iter().map(|m| (*m).to_string()).collect()
    } else {
        methods.to_vec()
    };
    let mut runs = Vec::new();
    for method in &methods {
        for &(b, zeta) in &S3_DAMPINGS {
            for &(forcing, _) in &S3_FORCINGS {
                let file = examples.join(format!("s3_b{b}_{forcing}.toml"));
                let base = jounce_model::load_file(&file)?;
                let has_breakpoints = !base.breakpoints().is_empty();
                for breakpoints in [true, false] {
                    if !breakpoints && !has_breakpoints {
                        continue; // the same run twice
                    }
                    let mut model = base.clone();
                    model.settings.integrator.method = method.clone();
                    model.settings.integrator.stop_at_breakpoints = breakpoints;
                    model.settings.cost_from = Some(S3_COST_FROM);
                    let dir = out.join(format!(
                        "{method}-b{b}-{forcing}-{}",
                        if breakpoints { "bp" } else { "nobp" }
                    ));
                    let summary = match run_model(&model, &dir, None) {
                        Ok(s) => s,
                        // a failed integration is a row of the table
                        Err(RunError::Integration { summary, .. }) => *summary,
                        Err(e) => return Err(e),
                    };
                    runs.push(S3Run {
                        method: method.clone(),
                        damping: b,
                        zeta,
                        forcing,
                        breakpoints,
                        summary,
                    });
                }
            }
        }
    }
    let csv = out.join("s3_cost.csv");
    let mut text = String::from(
        "method,b,zeta,forcing,breakpoints,status,steps,rejected,f_evaluations,jacobians,lu,\
         newton_iterations,cpu_seconds,total_steps,total_f_evaluations,total_cpu_seconds\n",
    );
    for r in &runs {
        let c = r.cost();
        let w = &r.summary.work;
        let _ = writeln!(
            text,
            "{},{},{},{},{},{},{},{},{},{},{},{},{:e},{},{},{:e}",
            r.method,
            r.damping,
            r.zeta,
            r.forcing,
            r.breakpoints,
            r.summary.status,
            c.steps_accepted,
            c.steps_rejected,
            c.rhs_evaluations,
            c.jacobian_evaluations,
            c.lu_factorizations,
            c.newton_iterations,
            c.cpu_seconds,
            w.steps_accepted,
            w.rhs_evaluations,
            w.cpu_seconds
        );
    }
    std::fs::create_dir_all(out).map_err(|e| RunError::Io(jounce_io::IoError::new(out, e)))?;
    std::fs::write(&csv, text).map_err(|e| RunError::Io(jounce_io::IoError::new(&csv, e)))?;
    // the step-force runs told of the jump, against t: one colour per
    // method, one dash per damping
    jounce::plot::styled_run_charts(
        out,
        &|name| name.ends_with("-step-bp"),
        "S3 step force, told of the jump (colour: method; dash: b)",
        &|labels| crate::style::grouped(labels, &|l| l.split('-').next().unwrap_or(l).to_string()),
    )?;
    Ok(S3Study { runs, methods, csv })
}

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "failed".into(), |x| format!("{:.0} %", 100.0 * x))
}

/// "holds" / "does not hold", with the methods that disagree.
fn verdict(name: &str, results: &[(String, Option<bool>)]) -> String {
    let no: Vec<&str> = results
        .iter()
        .filter(|(_, v)| *v == Some(false))
        .map(|(m, _)| m.as_str())
        .collect();
    let unknown: Vec<&str> = results
        .iter()
        .filter(|(_, v)| v.is_none())
        .map(|(m, _)| m.as_str())
        .collect();
    let yes = results.iter().filter(|(_, v)| *v == Some(true)).count();
    let mut s = if yes == 0 {
        format!("{name}: DOES NOT HOLD")
    } else if no.is_empty() {
        format!("{name}: HOLDS ({yes} of {} methods)", results.len())
    } else {
        format!(
            "{name}: DOES NOT HOLD for {} (holds for {yes} of {} methods)",
            no.join(", "),
            results.len()
        )
    };
    if !unknown.is_empty() {
        let _ = write!(s, "; not measured (a run failed): {}", unknown.join(", "));
    }
    s
}

/// A [`Verdict`] as [`verdict`] takes it: `None` when not measured, a tie
/// does not hold.
fn yes_no(v: Verdict) -> Option<bool> {
    match v {
        Verdict::NotMeasured => None,
        v => Some(v.holds()),
    }
}

/// "a cheaper than b" beyond [`MIN_MARGIN`], for [`verdict`].
fn cheaper(a: Option<f64>, b: Option<f64>) -> Option<bool> {
    yes_no(less(a?, b?, MIN_MARGIN))
}

/// The seed's findings marked from the measured numbers, one line each.
pub fn s3_findings(study: &S3Study) -> Vec<String> {
    let ms = &study.methods;
    let per = |f: &dyn Fn(&str) -> Option<bool>| -> Vec<(String, Option<bool>)> {
        ms.iter().map(|m| (m.clone(), f(m))).collect()
    };
    let mut out = Vec::new();
    // 2a: more damping is cheaper
    let pct_margin = 100.0 * MIN_MARGIN;
    out.push(verdict(
        &format!("2a more damping -> cheaper (step, cost after t = 2 falls by more than {pct_margin:.0} % from b = 2e2 to 2e3 to 2e4)"),
        &per(&|m| {
            let c: Option<Vec<f64>> = S3_DAMPINGS
                .iter()
                .map(|(b, _)| study.fevals(m, b, "step"))
                .collect();
            c.and_then(|c| {
                yes_no(Verdict::all(
                    c.windows(2).map(|w| less(w[1], w[0], MIN_MARGIN)),
                ))
            })
        }),
    ));
    // 2c: the cycloidal ramp is cheaper than the step
    for (b, seed) in [("2e2", "24 %"), ("2e4", "44 %")] {
        out.push(verdict(
            &format!("2c cycloid T = 10 ms cheaper than the step at b = {b} by more than {pct_margin:.0} % (seed {seed})"),
            &per(&|m| cheaper(study.ratio_to_step(m, b, "cycloidal_10ms"), Some(1.0))),
        ));
    }
    out.push(verdict(
        "2c cycloid T = 20 ms costs more than T = 10 ms at b = 2e2 (seed: a small increase)",
        &per(&|m| {
            Some(
                study.fevals(m, "2e2", "cycloidal_20ms")?
                    > study.fevals(m, "2e2", "cycloidal_10ms")?,
            )
        }),
    ));
    // 2b: the arctan gives no gain (less than 10 % saved), but for A = 1e3
    // at ζ = 0.01
    for b in ["2e3", "2e4"] {
        out.push(verdict(
            &format!("2b arctan gives no gain at b = {b} (both A cost >= 90 % of the step)"),
            &per(&|m| {
                let a3 = study.ratio_to_step(m, b, "arctan_a1e3")?;
                let a4 = study.ratio_to_step(m, b, "arctan_a1e4")?;
                Some(a3 >= 0.9 && a4 >= 0.9)
            }),
        ));
    }
    out.push(verdict(
        &format!("2b arctan A = 1e3 cheaper than the step at b = 2e2 by more than {pct_margin:.0} % (seed 85 %)"),
        &per(&|m| cheaper(study.ratio_to_step(m, "2e2", "arctan_a1e3"), Some(1.0))),
    ));
    out.push(verdict(
        &format!("telling the integrator of the jump is cheaper by more than {pct_margin:.0} % (step, f-evaluations of the whole run, every b: off/on >= {:.2})", 1.0 + MIN_MARGIN),
        &per(&|m| {
            let r: Option<Vec<f64>> = S3_DAMPINGS
                .iter()
                .map(|(b, _)| study.off_over_on(m, b, "step").map(|r| r.1))
                .collect();
            r.and_then(|r| yes_no(Verdict::all(r.iter().map(|x| less(1.0, *x, MIN_MARGIN)))))
        }),
    ));
    out
}

/// The study's tables: the cost after t = 2 of every run, the ratios the
/// seed reports, and its findings marked from them.
pub fn s3_table(study: &S3Study) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "S3 (termeer tests 2a-2c): m = 1 kg, k = 1e8 N/m, force of 1e7 N from t = 2 s; cost of t in [2, 4] (steps ending after t = 2)"
    );
    let _ = writeln!(
        s,
        "{:<8} {:>4} {:<15} {:>3} {:>9} {:>7} {:>9} {:>7} {:>8} {:>9} {:>11}",
        "method", "b", "forcing", "bp", "steps", "rej", "f-evals", "jac", "LU", "CPU ms", "status"
    );
    for r in &study.runs {
        let c = r.cost();
        let label = S3_FORCINGS
            .iter()
            .find(|(t, _)| *t == r.forcing)
            .map_or(r.forcing, |(_, l)| l);
        let _ = writeln!(
            s,
            "{:<8} {:>4} {:<15} {:>3} {:>9} {:>7} {:>9} {:>7} {:>8} {:>9.3} {:>11}",
            r.method,
            r.damping,
            label,
            if r.breakpoints { "on" } else { "off" },
            c.steps_accepted,
            c.steps_rejected,
            c.rhs_evaluations,
            c.jacobian_evaluations,
            c.lu_factorizations,
            1e3 * c.cpu_seconds,
            r.summary.status
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "Cost vs damping (step, breakpoints on): f-evaluations after t = 2 relative to b = 2e2"
    );
    for m in &study.methods {
        let base = study.fevals(m, "2e2", "step");
        let cells: Vec<String> = S3_DAMPINGS
            .iter()
            .map(|(b, z)| {
                let r = base.and_then(|x| Some(study.fevals(m, b, "step")? / x));
                format!("b={b} (zeta={z}): {}", pct(r))
            })
            .collect();
        let _ = writeln!(s, "  {m:<8} {}", cells.join("  "));
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "Forcing relative to the step at the same damping (breakpoints on), f-evaluations after t = 2 [CPU]"
    );
    for m in &study.methods {
        for (b, z) in &S3_DAMPINGS {
            let cells: Vec<String> = S3_FORCINGS[1..]
                .iter()
                .map(|(f, label)| {
                    let cpu = study
                        .find(m, b, f, true)
                        .zip(study.find(m, b, "step", true))
                        .filter(|(a, c)| a.completed() && c.completed())
                        .map(|(a, c)| a.cost().cpu_seconds / c.cost().cpu_seconds);
                    format!(
                        "{label}: {} [{}]",
                        pct(study.ratio_to_step(m, b, f)),
                        pct(cpu)
                    )
                })
                .collect();
            let _ = writeln!(s, "  {m:<8} b={b:<4} zeta={z:<5} {}", cells.join("  "));
        }
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "Breakpoints off relative to on, f-evaluations after t = 2 / over the whole run 0-4 s"
    );
    for m in &study.methods {
        for (b, _) in &S3_DAMPINGS {
            let cells: Vec<String> = S3_FORCINGS
                .iter()
                .filter(|(f, _)| *f == "step" || f.starts_with("cycloidal"))
                .map(|(f, label)| {
                    let r = study.off_over_on(m, b, f);
                    format!("{label}: {} / {}", pct(r.map(|r| r.0)), pct(r.map(|r| r.1)))
                })
                .collect();
            let _ = writeln!(s, "  {m:<8} b={b:<4} {}", cells.join("  "));
        }
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "Seed findings, from the measured f-evaluations:");
    for f in s3_findings(study) {
        let _ = writeln!(s, "  {f}");
    }
    let _ = writeln!(s, "table: {}", study.csv.display());
    s
}
