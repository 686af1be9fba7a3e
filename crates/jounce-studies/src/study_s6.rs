//! `jounce study s6` (studies.md S6; gil-sanfelice-nikravesh section 3):
//! two balls bouncing on penalty contacts, run by every adaptive method
//! the seed compares at the shipped tolerance. Each contact begins and
//! ends with a located event, so a method that steps over one shows it in
//! the event count against the impacts counted independently (contact
//! intervals of a tight dop853 run on a 0.1 ms grid); the penetration is
//! bounded by the whole initial energy in one spring, √(2 E₀ / k); the
//! undamped contacts conserve energy.
//!
//! The deepest penetration is taken from each run's own continuous
//! solution, not from its 0.01 s output rows (which miss the bottom of a
//! 10 ms contact by several per cent): the run is repeated with its dense
//! output sampled every [`SEARCH_INTERVAL`] (the output grid does not
//! change the steps: the repeat takes the same number of steps, which the
//! row checks) and each sampled minimum of a gap is refined to the vertex
//! of the parabola through it and its two neighbours ([`deepest_gap`]).

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use jounce::error::RunError;
use jounce::run::{apply_overrides, run_model, Overrides};
use jounce::series::Series;
use jounce::sink::{Discard, RowSink};
use jounce::{RunOptions, Simulation};

/// Spacing of the dense-output samples of the search for the deepest
/// penetration \[s\] (a contact lasts π √(m/k) ≈ 10 ms).
pub const SEARCH_INTERVAL: f64 = 1e-4;

/// Model file stem of the study.
pub const S6_MODEL: &str = "s6_two_balls";

/// The methods compared (the seed's explicit and implicit families and
/// the local linearization).
pub const S6_METHODS: [&str; 6] = ["dopri5", "dop853", "radau5", "rodas4", "bdf", "llm"];

/// The gap columns of the two contacts.
const GAPS: [&str; 2] = ["ball2_ground.gap", "ball1_ball2.gap"];

/// One method's run.
#[derive(Clone, Debug, Serialize)]
pub struct S6Row {
    /// Integrator.
    pub method: String,
    /// "completed" or the failure.
    pub status: String,
    /// Accepted steps.
    pub steps: u64,
    /// Right-hand-side evaluations.
    pub rhs_evaluations: u64,
    /// Events located.
    pub events: u64,
    /// Integration CPU \[s\].
    pub cpu_seconds: f64,
    /// max |E − E(0)| / |E(0)|.
    pub energy_drift: f64,
    /// Deepest gap of the run's continuous solution \[m\] (negative:
    /// penetration), by [`deepest_gap`] on its dense output every
    /// [`SEARCH_INTERVAL`].
    pub deepest_gap: f64,
    /// Deepest gap over the 0.01 s output rows \[m\] (what the table
    /// showed before issue 31).
    pub deepest_gap_on_output_rows: f64,
    /// Whether the search's repeat of the run took the same steps.
    pub search_same_steps: bool,
}

/// The study.
#[derive(Clone, Debug, Serialize)]
pub struct S6Study {
    /// Impacts of the reference (contact intervals on a 0.1 ms grid).
    pub impacts: usize,
    /// √(2 E₀ / k) \[m\].
    pub penetration_bound: f64,
    /// Deepest gap of the reference \[m\], by [`deepest_gap`] on its
    /// 0.1 ms rows.
    pub reference_deepest_gap: f64,
    /// One row per method.
    pub rows: Vec<S6Row>,
}

/// Number of separate intervals in which a sampled gap is negative.
pub fn contact_intervals(gap: &[f64]) -> usize {
    let mut n = 0;
    let mut inside = false;
    for &g in gap {
        if g < 0.0 && !inside {
            n += 1;
        }
        inside = g < 0.0;
    }
    n
}

/// The least of a sampled gap g(t) (t increasing), each sampled local
/// minimum refined to the vertex of the parabola through it and its two
/// neighbours (when that parabola opens upward and its vertex lies
/// between them); +∞ for no samples.
pub fn deepest_gap(t: &[f64], g: &[f64]) -> f64 {
    let mut min = g.iter().copied().fold(f64::INFINITY, f64::min);
    for i in 1..g.len().min(t.len()).saturating_sub(1) {
        let (t0, t1, t2) = (t[i - 1], t[i], t[i + 1]);
        let (g0, g1, g2) = (g[i - 1], g[i], g[i + 1]);
        if !(g1 <= g0 && g1 <= g2 && t0 < t1 && t1 < t2) {
            continue;
        }
        let d01 = (g1 - g0) / (t1 - t0);
        let d12 = (g2 - g1) / (t2 - t1);
        let a = (d12 - d01) / (t2 - t0);
        if a <= 0.0 {
            continue;
        }
        // g(t) = g0 + d01 (t − t0) + a (t − t0)(t − t1)
        let ts = 0.5 * (t0 + t1) - d01 / (2.0 * a);
        if (t0..=t2).contains(&ts) {
            min = min.min(g0 + d01 * (ts - t0) + a * (ts - t0) * (ts - t1));
        }
    }
    min
}

/// Collects t and the gap columns of a run's rows.
#[derive(Default)]
struct GapRows {
    index: Vec<usize>,
    t: Vec<f64>,
    gaps: Vec<Vec<f64>>,
}

impl RowSink for GapRows {
    fn begin(&mut self, columns: &[String]) -> Result<(), RunError> {
        self.index = GAPS
            .iter()
            .map(|g| {
                columns
                    .iter()
                    .position(|c| c == g)
                    .ok_or_else(|| RunError::Setup(format!("S6: no column {g}")))
            })
            .collect::<Result<_, _>>()?;
        self.gaps = vec![Vec::new(); GAPS.len()];
        Ok(())
    }

    fn row(&mut self, values: &[f64]) -> Result<(), RunError> {
        self.t.push(values[0]);
        for (g, &i) in self.gaps.iter_mut().zip(&self.index) {
            g.push(values[i]);
        }
        Ok(())
    }

    fn rows(&self) -> u64 {
        self.t.len() as u64
    }
}

/// The deepest gap of `model`'s run on its dense output every
/// [`SEARCH_INTERVAL`], and the steps that run took.
fn searched_deepest_gap(model: &jounce_model::Model) -> Result<(f64, u64), RunError> {
    let mut m = model.clone();
    m.settings.output_interval = SEARCH_INTERVAL;
    let mut rows = GapRows::default();
    let summary = match Simulation::from_model(m).run_streaming(
        &RunOptions::default(),
        &mut rows,
        &mut Discard::default(),
        None,
    ) {
        Ok(s) => s,
        Err(RunError::Integration { summary, .. }) => *summary,
        Err(e) => return Err(e),
    };
    let deepest = rows
        .gaps
        .iter()
        .map(|g| deepest_gap(&rows.t, g))
        .fold(f64::INFINITY, f64::min);
    Ok((deepest, summary.work.steps_accepted))
}

/// Run the study from the model in `examples` into `out`.
///
/// # Errors
/// A model that cannot be read or a reference run that fails.
pub fn s6(examples: &Path, out: &Path) -> Result<S6Study, RunError> {
    let model = jounce_model::load_file(&examples.join(format!("{S6_MODEL}.toml")))?;
    // the reference: dop853 at 1e-11 on a 0.1 ms grid
    let mut fine = model.clone();
    fine.settings.output_interval = 1e-4;
    apply_overrides(
        &mut fine,
        &Overrides {
            method: Some("dop853".into()),
            rtol: Some(1e-11),
            atol: Some(1e-11),
            no_step_history: true,
            ..Overrides::default()
        },
    )?;
    let dir = out.join("reference");
    run_model(&fine, &dir, None)?;
    let ts = Series::read(&dir.join("timeseries.csv"))?;
    let mut impacts = 0;
    let mut reference_deepest_gap = f64::INFINITY;
    let t_ref = ts.column("t")?;
    for g in GAPS {
        let gap = ts.column(g)?;
        impacts += contact_intervals(&gap);
        reference_deepest_gap = reference_deepest_gap.min(deepest_gap(&t_ref, &gap));
    }
    // the whole initial energy in the softest contact spring
    let e0 = ts.column("total_energy")?[0];
    let k = model
        .forces
        .iter()
        .filter_map(|f| match &f.kind {
            jounce_model::ForceKind::Contact { stiffness, .. } => Some(*stiffness),
            _ => None,
        })
        .fold(f64::INFINITY, f64::min);
    let penetration_bound = (2.0 * e0 / k).sqrt();
    let mut rows = Vec::new();
    for method in S6_METHODS {
        let mut m = model.clone();
        apply_overrides(
            &mut m,
            &Overrides {
                method: Some(method.into()),
                ..Overrides::default()
            },
        )?;
        let dir = out.join(method);
        let (status, s) = match run_model(&m, &dir, None) {
            Ok(s) => ("completed".to_string(), s),
            Err(RunError::Integration { summary, .. }) => (
                format!("failed: {}", summary.error.clone().unwrap_or_default()),
                *summary,
            ),
            Err(e) => return Err(e),
        };
        let ts = Series::read(&dir.join("timeseries.csv"))?;
        let mut on_rows = f64::INFINITY;
        for g in GAPS {
            on_rows = ts.column(g)?.iter().fold(on_rows, |a, &b| a.min(b));
        }
        let (deepest, search_steps) = searched_deepest_gap(&m)?;
        rows.push(S6Row {
            method: method.to_string(),
            status,
            steps: s.work.steps_accepted,
            rhs_evaluations: s.work.rhs_evaluations,
            events: s.work.events,
            cpu_seconds: s.work.cpu_seconds,
            energy_drift: s.accuracy.max_relative_energy_error,
            deepest_gap: deepest,
            deepest_gap_on_output_rows: on_rows,
            search_same_steps: search_steps == s.work.steps_accepted,
        });
    }
    jounce::plot::styled_run_charts(
        out,
        &|name| name != "reference",
        "S6 two bouncing balls",
        &crate::style::by_index,
    )?;
    Ok(S6Study {
        impacts,
        penetration_bound,
        reference_deepest_gap,
        rows,
    })
}

/// The table, each criterion of S6 marked from the numbers.
pub fn s6_table(st: &S6Study) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "S6 (two balls, penalty contact, 10 s): {} impacts in the reference (dop853 at 1e-11, contact intervals on a 0.1 ms grid), so {} events; penetration bound sqrt(2 E0/k) = {:.4} m",
        st.impacts,
        2 * st.impacts,
        st.penetration_bound
    );
    let _ = writeln!(
        s,
        "deepest gap: of each run's continuous solution (dense output every {SEARCH_INTERVAL:e} s, minima refined by a parabola; the reference's {:.4e} m), beside it the 0.01 s output rows'",
        st.reference_deepest_gap
    );
    let _ = writeln!(
        s,
        "{:<8} {:>8} {:>9} {:>7} {:>10} {:>12} {:>12} {:>12}  criteria (2x impacts events, penetration, drift < 1e-4)",
        "method",
        "steps",
        "f-evals",
        "events",
        "CPU [s]",
        "energy drift",
        "deepest gap",
        "on rows",
    );
    for r in &st.rows {
        let events_ok = r.events == 2 * st.impacts as u64;
        let depth_ok = r.deepest_gap > -st.penetration_bound;
        let drift_ok = r.energy_drift < 1e-4;
        let _ = writeln!(
            s,
            "{:<8} {:>8} {:>9} {:>7} {:>10.3e} {:>12.2e} {:>12.4e} {:>12.4e}  {}",
            r.method,
            r.steps,
            r.rhs_evaluations,
            r.events,
            r.cpu_seconds,
            r.energy_drift,
            r.deepest_gap,
            r.deepest_gap_on_output_rows,
            if r.status != "completed" {
                r.status.clone()
            } else if !r.search_same_steps {
                "the search's repeat took other steps: penetration not measured".to_string()
            } else if events_ok && depth_ok && drift_ok {
                "all hold".to_string()
            } else {
                format!(
                    "events {}, penetration {}, drift {}",
                    if events_ok { "hold" } else { "DO NOT hold" },
                    if depth_ok { "holds" } else { "DOES NOT hold" },
                    if drift_ok { "holds" } else { "DOES NOT hold" }
                )
            }
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 31: the deepest point of a contact lies between samples; the
    /// parabola through the least sample and its neighbours finds it.
    #[test]
    fn the_deepest_gap_is_refined_between_samples() {
        let t: Vec<f64> = (0..=20).map(|i| i as f64 * 1e-3).collect();
        let g: Vec<f64> = t
            .iter()
            .map(|&t| -0.03 * (t / 0.0105 * std::f64::consts::PI).sin())
            .collect();
        let sampled = g.iter().copied().fold(f64::INFINITY, f64::min);
        let deepest = deepest_gap(&t, &g);
        assert!(sampled > -0.03 + 1e-6, "{sampled}");
        assert!((deepest + 0.03).abs() < 1e-5, "{deepest}");
        assert!(deepest <= sampled);
    }
}
