//! `jounce study s2` (studies.md S2; termeer tests 1a–1d): the modes of
//! four two-mass chains, the recommendation `jounce modes` makes for each,
//! and the measured cost of explicit RK45 (`dopri5`) against an implicit
//! variable-step method (`radau5`) from `jounce compare`, so that the
//! recommendation is checked against what the runs cost.
//!
//! For each model (`examples/studies/s2_test_1{a,b,c,d}.toml`): the modes
//! linearised at the initial state (frequency in Hz, damping ratio) next
//! to the seed's, the advised class, and both runs at the model's
//! tolerance with their steps, f-evaluations, Jacobians, LU
//! factorisations, integration CPU and error against the tight reference
//! run of `compare`. Explicit against implicit is judged by integration
//! CPU (their f-evaluations buy different work) at equal error: both
//! methods are also run at [`WP_FACTORS`] × the model's tolerances (a
//! work-precision curve each), and the cost of the less accurate method
//! is read at the error of the more accurate one's run at the model's
//! tolerance ([`crate::judge::cost_at_error`], log–log interpolation).
//! A class is cheaper only by more than the margin
//! ([`crate::judge::margin`]: 10 %, or the measured scatter of the least
//! CPU of the repeats when larger); a tie favours neither. The step-size and
//! cumulative-CPU charts of both runs (the termeer appendix's plots) are
//! written per model by `compare`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use jounce::compare::{compare, write_outputs, CompareOptions, CompareRow, Reference, RunStatus};
use jounce::error::RunError;
use jounce::modes::{modes_report, LinearisationPoint, ModesReport};

use crate::judge::{cost_at_error, less, margin, Verdict};

/// Tolerance factors of the work-precision runs (rtol and atol both
/// scaled), besides the model's own (factor 1).
pub const WP_FACTORS: [f64; 3] = [10.0, 0.1, 0.01];

/// One work-precision point of a method: tolerance factor, error in
/// units of the model's tolerance (compare's error/tol × factor), least
/// integration CPU \[s\].
#[derive(Clone, Debug, Serialize)]
pub struct WpPoint {
    /// rtol, atol = factor × the model's.
    pub factor: f64,
    /// Error against the reference, in units of the model's tolerance.
    pub error: f64,
    /// Integration CPU \[s\] (least of the repeats for a short run).
    pub cpu_seconds: f64,
}

/// Explicit against implicit at equal error.
#[derive(Clone, Debug, Serialize)]
pub struct EqualError {
    /// The common error, in units of the model's tolerance.
    pub error: f64,
    /// dopri5's CPU at it \[s\].
    pub explicit_cpu: f64,
    /// radau5's CPU at it \[s\].
    pub implicit_cpu: f64,
    /// The relative margin a class must beat the other by.
    pub margin: f64,
    /// "explicit cheaper" marked at equal error.
    pub explicit_cheaper: Verdict,
}

/// The explicit and the implicit method compared.
pub const S2_METHODS: [&str; 2] = ["dopri5", "radau5"];

/// The four tests: (model file stem, seed's modes (Hz, ζ), seed's class).
pub const S2_TESTS: [(&str, [(f64, f64); 2], &str); 4] = [
    ("s2_test_1a", [(714.0, 0.112), (5.02, 0.058)], "implicit"),
    ("s2_test_1b", [(714.0, 0.0), (5.02, 0.0)], "explicit"),
    ("s2_test_1c", [(8.38, 0.288), (0.41, 0.13)], "explicit"),
    (
        "s2_test_1d",
        [(1315.0, 0.0026), (545.0, 0.0011)],
        "explicit",
    ),
];

/// One test of the study.
#[derive(Clone, Debug, Serialize)]
pub struct S2Case {
    /// Model file stem.
    pub test: String,
    /// Modes and recommendation.
    pub modes: ModesReport,
    /// The seed's modes (Hz, ζ), fastest first.
    pub seed_modes: [(f64, f64); 2],
    /// The class the seed found cheaper.
    pub seed_class: String,
    /// The dopri5 and radau5 runs.
    pub runs: Vec<CompareRow>,
    /// Where compare wrote its tables and charts.
    pub dir: PathBuf,
    /// Per method, its work-precision points (factor 1 included).
    pub work_precision: Vec<(String, Vec<WpPoint>)>,
    /// Relative scatter of each method's least CPU at the model's
    /// tolerance: (second least − least) / least of the repeats (0 when
    /// timed once).
    pub cpu_scatter: f64,
}

impl S2Case {
    /// The run of `method`.
    pub fn run(&self, method: &str) -> Option<&CompareRow> {
        self.runs.iter().find(|r| r.method == method)
    }

    /// The comparison at equal error: the error of the more accurate run
    /// at the model's tolerance, each method's CPU there (the other's read
    /// from its work-precision curve); `None` when a run did not complete
    /// or the curve does not reach that error.
    pub fn equal_error(&self) -> Option<EqualError> {
        let (e, i) = (self.run(S2_METHODS[0])?, self.run(S2_METHODS[1])?);
        if e.status != RunStatus::Completed || i.status != RunStatus::Completed {
            return None;
        }
        let points = |m: &str| {
            self.work_precision
                .iter()
                .find(|(x, _)| x == m)
                .map(|(_, p)| p)
        };
        let (we, wi) = (points(S2_METHODS[0])?, points(S2_METHODS[1])?);
        let at_one = |w: &[WpPoint]| w.iter().find(|p| p.factor == 1.0).map(|p| p.error);
        let (pe, pi) = (at_one(we)?, at_one(wi)?);
        let curve = |w: &[WpPoint]| -> Vec<(f64, f64)> {
            w.iter().map(|p| (p.error, p.cpu_seconds)).collect()
        };
        let (ce, ci) = (curve(we), curve(wi));
        let error = pe.min(pi);
        let explicit_cpu = cost_at_error(&ce, error)?;
        let implicit_cpu = cost_at_error(&ci, error)?;
        let margin = margin(self.cpu_scatter);
        Some(EqualError {
            error,
            explicit_cpu,
            implicit_cpu,
            margin,
            explicit_cheaper: less(explicit_cpu, implicit_cpu, margin),
        })
    }

    /// The class cheaper in integration CPU at equal error beyond the
    /// margin ("explicit" or "implicit"), "neither (a tie)" within it,
    /// `None` when not measured.
    pub fn cheaper_class(&self) -> Option<&'static str> {
        match self.equal_error()?.explicit_cheaper {
            Verdict::Holds => Some("explicit"),
            Verdict::DoesNotHold => Some("implicit"),
            Verdict::Tie => Some("neither (a tie)"),
            Verdict::NotMeasured => None,
        }
    }

    /// The measured modes (Hz, ζ), fastest first.
    pub fn measured_modes(&self) -> Vec<(f64, f64)> {
        let mut m: Vec<(f64, f64)> = self
            .modes
            .analysis
            .modes
            .iter()
            .map(|m| (m.natural_frequency_hz, m.damping_ratio))
            .collect();
        m.sort_by(|a, b| b.0.total_cmp(&a.0));
        m
    }
}

/// Whether `x` equals `seed` to the seed's 3 significant digits (the
/// seed's own rounding: half a unit of its third digit, and ζ = 0 exactly
/// for an undamped mode).
pub fn three_digits(x: f64, seed: f64) -> bool {
    if seed == 0.0 {
        return x.abs() < 5e-4;
    }
    let e = seed.abs().log10().floor();
    (x - seed).abs() <= 0.5 * 10f64.powf(e - 2.0) * (1.0 + 1e-9)
}

/// A test with a run shorter than this in integration CPU is timed
/// [`REPEATS`] times.
const SHORT_RUN_CPU: f64 = 0.05;

/// How many times the runs of a short test are timed in all.
const REPEATS: usize = 7;

/// Each run's CPU as the least over [`REPEATS`] timings when a run of the
/// test is short: CPU times of a few milliseconds scatter by 10 % and
/// more between runs (other threads, caches), enough to flip a verdict
/// between two methods within a few percent of each other (test 1c:
/// dopri5 3.2 ms against radau5 3.1 ms in one run, the reverse in
/// another). The least of several timings is the usual estimate of a
/// run's own cost. The repeats write into a scratch folder; the tables
/// and charts are those of the first run.
fn least_cpu_of_repeats(
    model: &jounce_model::Model,
    opts: &CompareOptions,
    rows: &mut [CompareRow],
) -> Result<f64, RunError> {
    // short unless every run is long: one run slowed by a hiccup past the
    // threshold must not turn the repeats off
    if !rows.iter().any(|r| r.cpu_seconds < SHORT_RUN_CPU) {
        return Ok(0.0);
    }
    let scratch = opts.out_dir.join("repeats");
    let again = CompareOptions {
        out_dir: scratch.clone(),
        ..opts.clone()
    };
    let mut times: Vec<Vec<f64>> = rows.iter().map(|r| vec![r.cpu_seconds]).collect();
    for _ in 1..REPEATS {
        let c = compare(model, &again)?;
        for (r, t) in rows.iter_mut().zip(&mut times) {
            if let Some(x) = c.rows.iter().find(|x| x.method == r.method) {
                if x.status == RunStatus::Completed {
                    t.push(x.cpu_seconds);
                    if x.cpu_seconds < r.cpu_seconds {
                        r.cpu_seconds = x.cpu_seconds;
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    // how well the least is pinned down: the second least against it
    Ok(times
        .iter_mut()
        .map(|t| {
            t.sort_by(f64::total_cmp);
            if t.len() > 1 && t[0] > 0.0 {
                (t[1] - t[0]) / t[0]
            } else {
                0.0
            }
        })
        .fold(0.0, f64::max))
}

/// Run the study from the models in `examples` into `out`.
///
/// # Errors
/// A model that cannot be read, linearised or compared.
pub fn s2(examples: &Path, out: &Path) -> Result<Vec<S2Case>, RunError> {
    let mut cases = Vec::new();
    for (test, seed_modes, seed_class) in S2_TESTS {
        let file = examples.join(format!("{test}.toml"));
        let model = jounce_model::load_file(&file)?;
        let modes = modes_report(&model, LinearisationPoint::Initial)?;
        let dir = out.join(test);
        let opts = CompareOptions {
            methods: S2_METHODS.iter().map(|s| s.to_string()).collect(),
            formulations: Vec::new(),
            rtol: None,
            atol: None,
            step: None,
            t_end: None,
            reference: Reference::Auto,
            out_dir: dir.clone(),
        };
        let mut c = compare(&model, &opts)?;
        write_outputs(&c, &dir)?;
        let cpu_scatter = least_cpu_of_repeats(&model, &opts, &mut c.rows)?;
        // the work-precision curves, against the same reference
        let mut work_precision: Vec<(String, Vec<WpPoint>)> = c
            .rows
            .iter()
            .map(|r| {
                let first = r
                    .error
                    .filter(|_| r.status == RunStatus::Completed)
                    .map(|e| WpPoint {
                        factor: 1.0,
                        error: e,
                        cpu_seconds: r.cpu_seconds,
                    });
                (r.method.clone(), first.into_iter().collect())
            })
            .collect();
        let reference = dir.join("reference");
        for f in WP_FACTORS {
            let wp = CompareOptions {
                rtol: Some(c.rtol * f),
                atol: Some(c.atol * f),
                reference: if reference.join("timeseries.csv").is_file() {
                    Reference::File(reference.clone())
                } else {
                    Reference::Auto
                },
                out_dir: dir.join(format!("wp_{f:e}")),
                ..opts.clone()
            };
            let mut w = compare(&model, &wp)?;
            least_cpu_of_repeats(&model, &wp, &mut w.rows)?;
            for r in &w.rows {
                if let (Some(e), RunStatus::Completed) = (r.error, r.status) {
                    if let Some((_, pts)) = work_precision.iter_mut().find(|(m, _)| *m == r.method)
                    {
                        pts.push(WpPoint {
                            factor: f,
                            error: e * f,
                            cpu_seconds: r.cpu_seconds,
                        });
                    }
                }
            }
            let _ = std::fs::remove_dir_all(&wp.out_dir);
        }
        cases.push(S2Case {
            test: test.to_string(),
            modes,
            seed_modes,
            seed_class: seed_class.to_string(),
            runs: c.rows,
            dir,
            work_precision,
            cpu_scatter,
        });
    }
    Ok(cases)
}

/// The study's tables and its findings, each marked from the numbers.
pub fn s2_table(cases: &[S2Case]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "S2 (termeer tests 1a-1d): modes, recommendation, and the cost of dopri5 (explicit RK45) against radau5 (implicit)\n"
    );
    for c in cases {
        let r = &c.modes.recommendation;
        let _ = writeln!(s, "test {} ({}):", &c.test[8..], c.modes.model);
        let _ = writeln!(
            s,
            "  {:<6} {:>12} {:>10} {:>12} {:>10}  3 digits",
            "mode", "f [Hz]", "zeta", "seed f", "seed zeta"
        );
        for (k, (m, sd)) in c.measured_modes().iter().zip(&c.seed_modes).enumerate() {
            let ok = three_digits(m.0, sd.0) && three_digits(m.1, sd.1);
            let _ = writeln!(
                s,
                "  {:<6} {:>12.4} {:>10.4} {:>12} {:>10}  {}",
                k + 1,
                m.0,
                m.1,
                sd.0,
                sd.1,
                if ok { "yes" } else { "NO" }
            );
        }
        let _ = writeln!(
            s,
            "  recommended: {} ({} on {}, rtol {:e}); stiffness ratio {}",
            r.class,
            r.method,
            r.formulation,
            r.rtol,
            c.modes
                .analysis
                .stiffness_ratio
                .map_or_else(|| "-".to_string(), |x| format!("{x:.3e}"))
        );
        let _ = writeln!(
            s,
            "  {:<8} {:>10} {:>8} {:>9} {:>6} {:>6} {:>11} {:>10}",
            "method", "status", "steps", "f-evals", "Jac", "LU", "CPU [s]", "error/tol"
        );
        for run in &c.runs {
            let _ = writeln!(
                s,
                "  {:<8} {:>10} {:>8} {:>9} {:>6} {:>6} {:>11.3e} {:>10}",
                run.method,
                run.status.label(),
                run.steps_accepted,
                run.rhs_evaluations,
                run.jacobian_evaluations,
                run.lu_factorizations,
                run.cpu_seconds,
                run.error
                    .map_or_else(|| "-".to_string(), |e| format!("{e:.2}"))
            );
        }
        for (m, pts) in &c.work_precision {
            let cells: Vec<String> = pts
                .iter()
                .map(|p| {
                    format!(
                        "x{:e}: err {:.2e}, {:.3e} s",
                        p.factor, p.error, p.cpu_seconds
                    )
                })
                .collect();
            let _ = writeln!(s, "  work-precision {m:<8} {}", cells.join("; "));
        }
        let cheaper = c.cheaper_class();
        let eq = c.equal_error();
        let measured = match &eq {
            Some(q) => format!(
                "at equal error {:.2e} tol: CPU dopri5 {:.3e} s, radau5 {:.3e} s, dopri5/radau5 = {:.2}; margin {:.0} %",
                q.error,
                q.explicit_cpu,
                q.implicit_cpu,
                q.explicit_cpu / q.implicit_cpu,
                100.0 * q.margin
            ),
            None => "not measured at equal error".into(),
        };
        let _ = writeln!(
            s,
            "  cheaper: {} ({measured}); recommendation {}; seed finding ({} cheaper) {}",
            cheaper.unwrap_or("not measured"),
            if cheaper == Some(r.class.as_str()) {
                "agrees with the measured cost"
            } else {
                "DOES NOT agree with the measured cost"
            },
            c.seed_class,
            if cheaper == Some(c.seed_class.as_str()) {
                "holds"
            } else if cheaper == Some("neither (a tie)") {
                "does not hold (a tie within the margin)"
            } else {
                "does not hold"
            }
        );
        let _ = writeln!(s, "  charts and tables: {}\n", c.dir.display());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_digits_is_the_seeds_rounding() {
        assert!(three_digits(714.04, 714.0));
        assert!(three_digits(713.6, 714.0));
        assert!(!three_digits(713.4, 714.0));
        assert!(three_digits(0.11249, 0.112));
        assert!(!three_digits(0.1126, 0.112));
        assert!(three_digits(0.0, 0.0));
        assert!(!three_digits(0.01, 0.0));
    }
}
