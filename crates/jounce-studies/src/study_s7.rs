//! `jounce study s7` (studies.md S7; gil-sanfelice-nikravesh section 4):
//! the LLM's local error estimate against its true local error.
//!
//! x₁' = −x₂/x₃², x₂' = x₁/x₃², x₃' = 1 with x(1/π) = (0, −1, 1/π) has the
//! exact solution x = (sin(1/t), cos(1/t), t). One LLM step of size h from
//! t₀ = 1/π ([`LocalLinearization::one_step`]) gives the estimate l
//! (eqs. 30–33) and the true local error x(t₀ + h) − y₁, for h from 1e-4 to
//! 1e-1. The study prints both norms and their ratio and draws them against
//! h on log-log axes; the estimate must track the truth within a factor 2
//! where h is small (h ≤ 1e-2 here), and its slope is the method's local
//! order 3.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use jounce_integrate::exponential::LocalLinearization;
use jounce_integrate::reference_problems::InverseTimeRotation;

use jounce::error::RunError;
use jounce::plot::{styled_line_chart, Chart, Curve, YScale};

/// One step size of the study.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct S7Row {
    /// Step size h.
    pub h: f64,
    /// ‖x(t₀ + h) − y₁‖₂.
    pub true_error: f64,
    /// ‖l‖₂.
    pub estimate: f64,
}

impl S7Row {
    /// estimate / true error.
    pub fn ratio(&self) -> f64 {
        self.estimate / self.true_error
    }
}

/// What `jounce study s7` computed and wrote.
#[derive(Clone, Debug, serde::Serialize)]
pub struct S7Study {
    /// One row per step size, ascending.
    pub rows: Vec<S7Row>,
    /// The log-log plot.
    pub plot: PathBuf,
}

/// Largest h at which the estimate is required to track the truth.
pub const S7_SMALL_H: f64 = 1e-2;

/// Run S7 for 25 step sizes log-spaced over [1e-4, 1e-1] and plot into
/// `out/local_error.svg`.
///
/// # Errors
/// An evaluation error of the step or an unwritable plot.
pub fn s7(out: &Path) -> Result<S7Study, RunError> {
    let t0 = 1.0 / std::f64::consts::PI;
    let y0 = InverseTimeRotation::exact(t0);
    let mut llm = LocalLinearization::new();
    let n = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    let mut rows = Vec::new();
    for k in 0..=24 {
        let h = 10f64.powf(-4.0 + 3.0 * f64::from(k) / 24.0);
        let (mut y1, mut est) = ([0.0; 3], [0.0; 3]);
        llm.one_step(&mut InverseTimeRotation, t0, &y0, h, &mut y1, &mut est)
            .map_err(|e| RunError::Setup(format!("S7: the LLM step of size {h:e} failed: {e}")))?;
        let ex = InverseTimeRotation::exact(t0 + h);
        let tru: Vec<f64> = (0..3).map(|i| ex[i] - y1[i]).collect();
        rows.push(S7Row {
            h,
            true_error: n(&tru),
            estimate: n(&est),
        });
    }
    std::fs::create_dir_all(out).map_err(|e| RunError::Io(jounce_io::IoError::new(out, e)))?;
    let curve = |label: &str, f: fn(&S7Row) -> f64| Curve {
        label: label.into(),
        points: rows.iter().map(|r| (r.h.log10(), f(r))).collect(),
    };
    let plot = styled_line_chart(
        &out.join("local_error.svg"),
        &Chart {
            title: S7_CHART_TITLE,
            x_label: "log10 h",
            y_label: "local error (2-norm)",
            y_scale: YScale::Log,
        },
        &[
            curve("true local error", |r| r.true_error),
            curve("LLM estimate (eqs. 30-33)", |r| r.estimate),
        ],
        &crate::style::distinct(2),
    )?
    .path;
    Ok(S7Study { rows, plot })
}

/// The title of the study's chart: the plotted quantity (the 2-norm of
/// the local error of one step against log10 h) and its two curves.
pub const S7_CHART_TITLE: &str =
    "S7: local error (2-norm) of one LLM step from t = 1/π against the step size h: true error and LLM estimate";

/// Least-squares slope of log(error) against log(h) over rows with
/// h ≤ `h_max`.
pub fn s7_slope(rows: &[S7Row], h_max: f64, f: fn(&S7Row) -> f64) -> f64 {
    let pts: Vec<(f64, f64)> = rows
        .iter()
        .filter(|r| r.h <= h_max * (1.0 + 1e-12))
        .map(|r| (r.h.ln(), f(r).ln()))
        .collect();
    let m = pts.len() as f64;
    let (sx, sy) = pts.iter().fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
    let (mx, my) = (sx / m, sy / m);
    let (mut num, mut den) = (0.0, 0.0);
    for (x, y) in &pts {
        num += (x - mx) * (y - my);
        den += (x - mx) * (x - mx);
    }
    num / den
}

/// The study's table.
pub fn s7_table(study: &S7Study) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "S7: one LLM step from t = 1/π on x = (sin 1/t, cos 1/t, t): estimated vs true local error"
    );
    let _ = writeln!(
        s,
        "{:>10} {:>14} {:>14} {:>8}",
        "h", "true error", "estimate", "ratio"
    );
    for r in &study.rows {
        let _ = writeln!(
            s,
            "{:>10.3e} {:>14.4e} {:>14.4e} {:>8.3}",
            r.h,
            r.true_error,
            r.estimate,
            r.ratio()
        );
    }
    let worst = study
        .rows
        .iter()
        .filter(|r| r.h <= S7_SMALL_H * (1.0 + 1e-12))
        .map(|r| r.ratio().max(1.0 / r.ratio()))
        .fold(1.0, f64::max);
    let _ = writeln!(
        s,
        "h <= {S7_SMALL_H:e}: estimate within a factor {worst:.3} of the true error (seed: tracks it, criterion: factor 2); slopes {:.2} (true) and {:.2} (estimate), local order 3",
        s7_slope(&study.rows, S7_SMALL_H, |r| r.true_error),
        s7_slope(&study.rows, S7_SMALL_H, |r| r.estimate),
    );
    let _ = writeln!(s, "plot: {}", study.plot.display());
    s
}
