//! `jounce study s8` (studies.md S8; jalon-bayo problem 7/1): period
//! elongation and amplitude decay of three structural integrators on the
//! undamped oscillator y'' + y = 0, y(0) = 1, y'(0) = 0, t ∈ [0, 10],
//! h = 0.1, from the shipped model `examples/studies/s8_oscillator.toml`.
//!
//! Each run's samples y_n are measured by Prony's method and set next to
//! the closed forms of the method's amplification matrix
//! ([`jounce_analysis::period_error`]); the displacement of every method
//! and the exact cos t are plotted into one SVG.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use jounce_analysis::period_error::{closed_form, measured};
use jounce_analysis::PeriodError;
use jounce_integrate::structural::StructuralScheme;

use jounce::error::RunError;
use jounce::plot::{styled_line_chart, Chart, Curve, YScale};
use jounce::run::run_model;
use jounce::series::Series;

/// Model file stem of the study.
pub const S8_MODEL: &str = "s8_oscillator";

/// Fixed step of the study \[s\] (ω = 1, so Ω = ωh = 0.1).
pub const S8_STEP: f64 = 0.1;

/// The spring's free length in the model: y = x − 10.
const FREE_LENGTH: f64 = 10.0;

/// Steps left out of the measurement while a spurious root (HHT-α's third
/// eigenvalue, |z| ≈ 0.1 at Ω = 0.1) still shows: 0.1^20 is far below
/// rounding.
const SKIP_STEPS: usize = 20;

/// One method of the study: label, registry name, parameters and scheme.
pub struct S8Method {
    /// Label in the table (as the seed names it).
    pub label: &'static str,
    /// Registry name.
    pub method: &'static str,
    /// `settings.integrator.params`.
    pub params: &'static [(&'static str, f64)],
}

/// The three methods of jalon-bayo problem 7/1.
pub const S8_METHODS: [S8Method; 3] = [
    S8Method {
        label: "trapezoidal (newmark β=1/4, γ=1/2)",
        method: "newmark",
        params: &[("beta", 0.25), ("gamma", 0.5)],
    },
    S8Method {
        label: "HHT α = −0.1",
        method: "hht",
        params: &[("alpha", -0.1)],
    },
    S8Method {
        label: "newmark γ=1, β=1/2 (BDF1-like)",
        method: "newmark",
        params: &[("beta", 0.5), ("gamma", 1.0)],
    },
];

impl S8Method {
    /// The scheme with this method's parameters.
    pub fn scheme(&self) -> Result<StructuralScheme, RunError> {
        let p = |k: &str| self.params.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
        let s = match self.method {
            "hht" => StructuralScheme::hht(p("alpha").unwrap_or(-0.1)),
            _ => StructuralScheme::newmark(p("beta").unwrap_or(0.25), p("gamma").unwrap_or(0.5)),
        };
        s.map_err(|e| RunError::Setup(e.to_string()))
    }
}

/// One row of the study.
#[derive(Clone, Debug, serde::Serialize)]
pub struct S8Row {
    /// Method label.
    pub label: &'static str,
    /// Measured from the run's samples.
    pub measured: PeriodError,
    /// Closed form of the amplification matrix at Ω = 0.1.
    pub closed_form: PeriodError,
    /// The run's (t, y) samples.
    pub samples: Vec<(f64, f64)>,
    /// Accepted steps.
    pub steps: u64,
}

/// What `jounce study s8` wrote.
#[derive(Clone, Debug, serde::Serialize)]
pub struct S8Study {
    /// One row per method.
    pub rows: Vec<S8Row>,
    /// The displacement plot (exact and the three methods).
    pub plot: PathBuf,
}

/// Run S8 from the model in `examples` (the `examples/studies` folder),
/// writing each run under `out`, and plot y(t) of every method and of the
/// exact solution into `out/displacement.svg`.
///
/// # Errors
/// The model cannot be loaded, a run fails, or its samples do not
/// oscillate (no period to measure).
pub fn s8(examples: &Path, out: &Path) -> Result<S8Study, RunError> {
    let file = examples.join(format!("{S8_MODEL}.toml"));
    let mut rows = Vec::new();
    for m in &S8_METHODS {
        let mut model = jounce_model::load_file(&file)?;
        let it = &mut model.settings.integrator;
        it.method = m.method.into();
        it.step = Some(S8_STEP);
        it.params.clear();
        for (k, v) in m.params {
            it.params.insert((*k).into(), *v);
        }
        model.settings.output_interval = S8_STEP;
        let dir = out.join(format!(
            "{}-{}",
            m.method,
            m.params
                .iter()
                .map(|(k, v)| format!("{k}{v}"))
                .collect::<Vec<_>>()
                .join("-")
        ));
        let summary = run_model(&model, &dir, None)?;
        let series = Series::read(&dir.join("timeseries.csv"))?;
        let t = series.column("t")?;
        let x = series.column("mass.x")?;
        let y: Vec<f64> = x.iter().map(|x| x - FREE_LENGTH).collect();
        let omega_h = S8_STEP;
        let measured = measured(&y, omega_h, SKIP_STEPS).ok_or_else(|| {
            RunError::Setup(format!(
                "S8 {}: the samples do not oscillate; no period to measure",
                m.label
            ))
        })?;
        let closed = closed_form(&m.scheme()?, omega_h).ok_or_else(|| {
            RunError::Setup(format!("S8 {}: no complex eigenvalue pair", m.label))
        })?;
        rows.push(S8Row {
            label: m.label,
            measured,
            closed_form: closed,
            samples: t.into_iter().zip(y).collect(),
            steps: summary.work.steps_accepted,
        });
    }
    let mut curves: Vec<Curve> = vec![Curve {
        label: "exact cos t".into(),
        points: (0..=1000)
            .map(|k| {
                let t = k as f64 * 0.01;
                (t, t.cos())
            })
            .collect(),
    }];
    curves.extend(rows.iter().map(|r| Curve {
        label: r.label.into(),
        points: r.samples.clone(),
    }));
    let styles = crate::style::distinct(curves.len());
    let plot = styled_line_chart(
        &out.join("displacement.svg"),
        &Chart {
            title: S8_CHART_TITLE,
            x_label: "t [s]",
            y_label: "displacement y",
            y_scale: YScale::Linear,
        },
        &curves,
        &styles,
    )?
    .path;
    Ok(S8Study { rows, plot })
}

/// The title of the study's chart: the plotted quantity (the
/// displacement y(t) of each method's run) and the problem.
pub const S8_CHART_TITLE: &str =
    "S8: displacement y(t) of each method on y'' + y = 0 (y(0) = 1, h = 0.1), and the exact cos t";

/// The study's table: measured and closed-form period elongation and
/// amplitude decay per cycle, and their differences.
pub fn s8_table(study: &S8Study) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "S8: y'' + y = 0, y(0) = 1, h = 0.1 (Ω = ωh = 0.1), t in [0, 10]: measured from the run's samples (Prony) vs the closed form of the amplification matrix"
    );
    let _ = writeln!(
        s,
        "{:<36} {:>14} {:>14} {:>9} {:>14} {:>14} {:>9}",
        "method", "PE measured", "PE closed", "|diff|", "AD measured", "AD closed", "|diff|"
    );
    for r in &study.rows {
        let (m, c) = (&r.measured, &r.closed_form);
        let _ = writeln!(
            s,
            "{:<36} {:>14.6e} {:>14.6e} {:>9.1e} {:>14.6e} {:>14.6e} {:>9.1e}",
            r.label,
            m.period_elongation,
            c.period_elongation,
            (m.period_elongation - c.period_elongation).abs(),
            m.amplitude_decay,
            c.amplitude_decay,
            (m.amplitude_decay - c.amplitude_decay).abs(),
        );
    }
    let _ = writeln!(
        s,
        "PE = (T_numerical − T)/T; AD = 1 − ρ^(2π/Ω̄), the fraction of the amplitude lost per cycle (Hughes 1987, 9.3)."
    );
    let _ = writeln!(
        s,
        "Seed (jalon-bayo 7/1): the trapezoidal rule keeps the amplitude and elongates the period by ≈ Ω²/12 = {:.3e}; HHT damps a little; newmark γ = 1 damps strongly.",
        0.01 / 12.0
    );
    let _ = writeln!(s, "plot: {}", study.plot.display());
    s
}
