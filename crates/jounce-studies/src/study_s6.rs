//! `jounce study s6` (studies.md S6; gil-sanfelice-nikravesh section 3):
//! two balls bouncing on penalty contacts, run by every adaptive method
//! the seed compares at the shipped tolerance. Each contact begins and
//! ends with a located event, so a method that steps over one shows it in
//! the event count against the impacts counted independently (contact
//! intervals of a tight dop853 run on a 0.1 ms grid); the penetration is
//! bounded by the whole initial energy in one spring, √(2 E₀ / k); the
//! undamped contacts conserve energy.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use jounce::error::RunError;
use jounce::run::{apply_overrides, run_model, Overrides};
use jounce::series::Series;

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
    /// Deepest gap over the output rows \[m\] (negative: penetration).
    pub deepest_gap: f64,
}

/// The study.
#[derive(Clone, Debug, Serialize)]
pub struct S6Study {
    /// Impacts of the reference (contact intervals on a 0.1 ms grid).
    pub impacts: usize,
    /// √(2 E₀ / k) \[m\].
    pub penetration_bound: f64,
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
    for g in GAPS {
        impacts += contact_intervals(&ts.column(g)?);
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
        let mut deepest = f64::INFINITY;
        for g in GAPS {
            deepest = ts.column(g)?.iter().fold(deepest, |a, &b| a.min(b));
        }
        rows.push(S6Row {
            method: method.to_string(),
            status,
            steps: s.work.steps_accepted,
            rhs_evaluations: s.work.rhs_evaluations,
            events: s.work.events,
            cpu_seconds: s.work.cpu_seconds,
            energy_drift: s.accuracy.max_relative_energy_error,
            deepest_gap: deepest,
        });
    }
    jounce::plot::run_charts(out, &|name| name != "reference")?;
    Ok(S6Study {
        impacts,
        penetration_bound,
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
        "{:<8} {:>8} {:>9} {:>7} {:>10} {:>12} {:>12}  criteria (2x impacts events, penetration, drift < 1e-4)",
        "method",
        "steps",
        "f-evals",
        "events",
        "CPU [s]",
        "energy drift",
        "deepest gap",
    );
    for r in &st.rows {
        let events_ok = r.events == 2 * st.impacts as u64;
        let depth_ok = r.deepest_gap > -st.penetration_bound;
        let drift_ok = r.energy_drift < 1e-4;
        let _ = writeln!(
            s,
            "{:<8} {:>8} {:>9} {:>7} {:>10.3e} {:>12.2e} {:>12.4e}  {}",
            r.method,
            r.steps,
            r.rhs_evaluations,
            r.events,
            r.cpu_seconds,
            r.energy_drift,
            r.deepest_gap,
            if r.status != "completed" {
                r.status.clone()
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
