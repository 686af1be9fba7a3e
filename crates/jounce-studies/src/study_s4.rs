//! `jounce study s4` (studies.md S4; termeer 1996, *A study to the
//! multibody package MECHANICA MOTION*, section 6.4, tests 3 and 4): the
//! flexible beam element (`type = "beam"`) and its damping value d.
//!
//! * Test 3 (`s4_test3_m{10,50,150}.toml`): a beam clamped to the ground
//!   with an end mass m. Its axial mode is a mass-spring-damper with
//!   k = EA/L and c = d k, critically damped at d = 2/ω_axial,
//!   ω_axial = √(EA/(L m)). Measured from the response: the axial run at
//!   d = 2/ω must not overshoot, its decay is set against the closed form
//!   (1 + ωt) e^{−ωt}, and bisection on d finds the smallest d whose
//!   response does not overshoot (below [`OVERSHOOT_LIMIT`] of the initial
//!   deflection; an underdamped response with ζ overshoots by
//!   exp(−πζ/√(1−ζ²)), so that limit places the bisection's d at ζ ≈ 0.986).
//! * Test 4a (`s4_test4a.toml`): the beam pinned to the ground through a
//!   small hub, falling onto a one-sided rotational stop; cost of the
//!   seed's implicit method, BDF ([`IMPLICIT`]), over the model's full
//!   second against d ∈ {1e-4, 2.5e-4, 5e-4, 1e-3, 2e-3, 4e-3}
//!   ([`S4_DAMPING`]), in two series ([`DampingSeries`]): d of every load
//!   (the seed's experiment) and the axial load's d_a alone with the
//!   bending loads at the default d; a third series runs the axial mode
//!   alone at the same ζ. Each cost point is the mean of the
//!   bdf f-evaluations at d (1 + δ), δ ∈ [`SCATTER_OFFSETS`]: a 1 % change
//!   of d leaves the motion as it is but changes bdf's step sequence and
//!   its cost by a few per cent, so the spread of those runs is the
//!   resolution at which two damping values can be told apart
//!   ([`S4DampingPoint::cheaper_than`]).
//!
//!   The seed explains its finding by the axial mode. On that mode alone
//!   (test 3's 50 kg beam kicked along its axis, at 4a's tolerances and
//!   ζ; series [`DampingSeries::IsolatedAxial`]) bdf is indeed cheapest at
//!   critical damping: 292 f-evaluations at ζ = 1.09 against 751 and 354
//!   below and 312–332 above. In 4a the mode is not left to decay: the
//!   swing drives it and each impact kicks it, and d of every load also
//!   damps the slower modes the impacts excite (C = d K gives each mode
//!   ζ_i = d ω_i / 2, so at d = 2/ω_axial every slower mode is
//!   underdamped, ζ_i = ω_i/ω_axial). There the cost still falls up to
//!   critical damping (1.2–1.5× from ζ = 0.22 with bdf's CVODE-style
//!   Newton test, one iteration a step; 1.45–2.0× with the earlier test,
//!   which took a second iteration below critical damping), but its least
//!   lies above it, at 2.2–4.4 ×
//!   2/ω (by 4–25 %; by 4–14 % with the axial value alone), with the hub
//!   inertia the seed does not give deciding where. The seed's own
//!   fastest value, 1e-3, is 2.18 × the 2/ω of its stated data
//!   (m = 20 kg, EA/L = 3.8e8 N/m), which it calls critical.
//! * Test 4b (`s4_test4b.toml`): the axial degree of freedom locked by a
//!   distance constraint: dopri5 against bdf.
//! * Test 4c (`s4_test4c.toml`): test 4a with dopri5 against bdf.
//!
//! The beam's pinned end is a hub body on the pin, which the stop acts on;
//! the seed gives no inertia for it. The models' J = 0.5 kg·m² puts the
//! hub's mode on the stop, √(1e6/J) = 1414 rad/s, well below the axial
//! mode (4359 rad/s). A light hub (J = 0.05: 4472 rad/s, on the axial mode)
//! chatters on the undamped 1e6 N·m/rad stop (66–270 located events in
//! 1 s), which then dominates the cost of every method: test 4 runs with
//! the models' hub inertia and with ten times it
//! ([`S4Options::hub_scales`]), and each finding is marked per hub.
//!
//! Every finding of the seed is marked from the measured numbers. CSV
//! files `test3.csv`, `test4.csv` and `findings.csv` go to the output
//! folder, every run into its own subfolder.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use jounce_io::RunSummary;
use jounce_model::{BodyRef, ForceKind, Model};

use jounce::error::RunError;
use jounce::plot::{line_chart, Chart, Curve, YScale};
use jounce::run::run_model;
use jounce::series::Series;

/// End masses of test 3 \[kg\] and the seed's d_crit for each (termeer's
/// unstated E).
pub const S4_TEST3: [(u32, f64); 3] = [(10, 3.04e-4), (50, 6.8e-4), (150, 1.18e-3)];

/// Damping values of test 4a: the seed's four (1e-4, 5e-4, 1e-3, 2e-3),
/// 2.5e-4 (ζ ≈ 0.54 on the axial mode) for the curve below critical, and
/// 4e-3 (ζ ≈ 8.7) for the seed's remark that damping beyond critical
/// raises the cost again (termeer 1996, test 2a: "over critical damping
/// leads to an increase in CPU-time again").
pub const S4_DAMPING: [f64; 6] = [1e-4, 2.5e-4, 5e-4, 1e-3, 2e-3, 4e-3];

/// Relative offsets δ of the runs at d (1 + δ) that make one cost point
/// of test 4a (see the module documentation).
pub const SCATTER_OFFSETS: [f64; 5] = [-0.02, -0.01, 0.0, 0.01, 0.02];

/// The least ratio of the underdamped cost (d = 1e-4, ζ = 0.22) to the
/// cost at the d nearest 2/ω for "the cost falls steeply to critical
/// damping".
pub const STEEP_RATIO: f64 = 1.3;

/// The implicit method of test 4: the seed's MOTION integrates implicitly
/// with DASSL's BDF (termeer 1996, section 3.2.4). BDF of orders 3 to 5 is
/// not A-stable: a lightly damped axial mode near the imaginary axis holds
/// it to low orders or small steps, which is how the damping value reaches
/// the cost (bdf on 4a, hub J = 0.5: 7362 f-evaluations at d = 1e-4,
/// 4493 at 5e-4). radau5, A-stable at order 5, damps the unresolved mode
/// whatever d is, and its cost hardly moves (7106 to 6483).
pub const IMPLICIT: &str = "bdf";

/// A response "overshoots" when its axial deflection goes below −this
/// fraction of the initial one (the integration error at rtol 1e-10 is
/// far below it; see the module documentation for the ζ it implies).
pub const OVERSHOOT_LIMIT: f64 = 1e-8;

/// Bisection tolerance on d, relative.
const BISECTION_TOL: f64 = 1e-4;

/// One end mass of test 3.
#[derive(Clone, Debug, serde::Serialize)]
pub struct S4Test3Row {
    /// End mass \[kg\].
    pub mass: f64,
    /// ω_axial = √(EA/(L m)) [rad/s].
    pub omega: f64,
    /// 2/ω_axial \[s\].
    pub d_theory: f64,
    /// The seed's value \[s\].
    pub d_seed: f64,
    /// Young's modulus for which 2/ω equals the seed's value \[Pa\]
    /// (termeer does not state his).
    pub e_seed: f64,
    /// Overshoot of the axial-only run at d = 2/ω, relative to the initial deflection.
    pub overshoot_at_theory: f64,
    /// ω t at which that run's deflection first falls below 1 % of the initial one.
    pub decay_time: f64,
    /// The same for the closed form (1 + ωt) e^{−ωt} (ω t = 6.64).
    pub decay_time_exact: f64,
    /// Overshoot of the run of the shipped model (all beam DOF deflected) at d = 2/ω.
    pub overshoot_all_dof: f64,
    /// Smallest d without overshoot, by bisection \[s\].
    pub d_bisection: f64,
    /// Runs of the bisection.
    pub bisection_runs: usize,
}

impl S4Test3Row {
    /// (d_bisection − 2/ω) / (2/ω).
    pub fn deviation(&self) -> f64 {
        (self.d_bisection - self.d_theory) / self.d_theory
    }
}

/// One run of test 4.
#[derive(Clone, Debug, serde::Serialize)]
pub struct S4CostRow {
    /// Test (4a, 4b, 4c).
    pub test: &'static str,
    /// Method.
    pub method: String,
    /// Damping value d.
    pub d: f64,
    /// Inertia of the hub (the beam's pinned end) [kg·m²].
    pub hub_inertia: f64,
    /// Its summary (CPU: the least of the repetitions).
    pub summary: RunSummary,
}

/// Which damping values test 4a varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum DampingSeries {
    /// d of every load: the seed's experiment (MOTION has one value).
    AllLoads,
    /// d_a of the axial load alone (`axial_damping`), the bending loads at
    /// the default d = 1e-3.
    AxialOnly,
    /// The axial mode alone: test 3's beam clamped to the ground with its
    /// 50 kg end mass, kicked along the axis (an impact's impulse), no
    /// other mode excited, at 4a's tolerances; the seed's explanation of
    /// 4a in isolation.
    IsolatedAxial,
}

impl DampingSeries {
    /// Name in tables and CSV files.
    pub fn label(self) -> &'static str {
        match self {
            Self::AllLoads => "all loads",
            Self::AxialOnly => "axial only",
            Self::IsolatedAxial => "isolated",
        }
    }
}

/// One cost point of test 4a: bdf's f-evaluations at d (1 + δ) for each
/// δ of [`SCATTER_OFFSETS`].
#[derive(Clone, Debug, serde::Serialize)]
pub struct S4DampingPoint {
    /// What d is the damping value of.
    pub series: DampingSeries,
    /// Nominal damping value d \[s\].
    pub d: f64,
    /// Damping ratio of the axial mode at d: ζ = d ω_axial / 2.
    pub zeta: f64,
    /// Inertia of the hub [kg·m²] (0 for the isolated axial mode).
    pub hub_inertia: f64,
    /// f-evaluations of the runs, in the order of [`SCATTER_OFFSETS`].
    pub f_evals: Vec<u64>,
    /// Whether every run completed.
    pub completed: bool,
}

impl S4DampingPoint {
    /// Mean f-evaluations.
    pub fn mean(&self) -> f64 {
        self.f_evals.iter().map(|&x| x as f64).sum::<f64>() / self.f_evals.len().max(1) as f64
    }

    /// Fewest f-evaluations of the runs.
    pub fn min(&self) -> f64 {
        self.f_evals
            .iter()
            .map(|&x| x as f64)
            .fold(f64::INFINITY, f64::min)
    }

    /// Most f-evaluations of the runs.
    pub fn max(&self) -> f64 {
        self.f_evals.iter().map(|&x| x as f64).fold(0.0, f64::max)
    }

    /// Half the spread of the runs relative to their mean.
    pub fn scatter(&self) -> f64 {
        0.5 * (self.max() - self.min()) / self.mean()
    }

    /// Cheaper than `other` beyond the scatter: every run of this point
    /// took fewer f-evaluations than every run of the other.
    pub fn cheaper_than(&self, other: &Self) -> bool {
        crate::judge::less_beyond_scatter(&self.costs(), &other.costs()).holds()
    }

    /// The f-evaluations of the runs, as numbers.
    pub fn costs(&self) -> Vec<f64> {
        self.f_evals.iter().map(|&x| x as f64).collect()
    }
}

/// A seed finding and whether it holds here.
#[derive(Clone, Debug, serde::Serialize)]
pub struct S4Finding {
    /// Test.
    pub test: &'static str,
    /// What the seed says.
    pub claim: String,
    /// What was measured.
    pub measured: String,
    /// Whether the measurement agrees.
    pub holds: bool,
}

/// What `jounce study s4` ran and wrote.
#[derive(Clone, Debug, serde::Serialize)]
pub struct S4Study {
    /// Test 3, per end mass.
    pub test3: Vec<S4Test3Row>,
    /// Test 4 runs.
    pub test4: Vec<S4CostRow>,
    /// Test 4a cost points, both series, every hub.
    pub test4a: Vec<S4DampingPoint>,
    /// 2/ω_axial of test 4a \[s\].
    pub d_crit_4: f64,
    /// The seed's findings.
    pub findings: Vec<S4Finding>,
    /// CSV files written.
    pub files: Vec<PathBuf>,
    /// The axial response of the 50 kg case against d (the seed's
    /// appendix C), `test3_axial.svg`.
    pub plot: PathBuf,
    /// Test 4a's cost against ζ of the axial mode, `test4a_cost.svg`.
    pub cost_plot: PathBuf,
}

/// Options of the study.
#[derive(Clone, Debug, serde::Serialize)]
pub struct S4Options {
    /// Repetitions of each test-4 run (CPU: the least).
    pub repeat: usize,
    /// End time of the test-4 runs (default: the models').
    pub t_end: Option<f64>,
    /// Hub inertias of test 4, as multiples of the models' (the light hub
    /// chatters on the stiff stop: its inertia decides which method is
    /// cheapest).
    pub hub_scales: Vec<f64>,
}

impl Default for S4Options {
    fn default() -> Self {
        Self {
            repeat: 3,
            t_end: None,
            hub_scales: vec![1.0, 10.0],
        }
    }
}

fn setup(m: String) -> RunError {
    RunError::Setup(format!("S4: {m}"))
}

fn io(path: &Path, e: std::io::Error) -> RunError {
    RunError::Io(jounce_io::IoError::new(path, e))
}

/// A run whose failure is a row of the table, not an error of the study.
fn run(model: &Model, dir: &Path) -> Result<RunSummary, RunError> {
    match run_model(model, dir, None) {
        Ok(s) => Ok(s),
        Err(RunError::Integration { .. }) => {
            let text = std::fs::read_to_string(dir.join("summary.json"))
                .map_err(|e| io(&dir.join("summary.json"), e))?;
            serde_json::from_str(&text).map_err(|e| setup(e.to_string()))
        }
        Err(e) => Err(e),
    }
}

/// The clamped beam of a test-3 model: (end body index, ground point,
/// L, E A) with node 2 at the end body's centre.
struct Test3Beam {
    body: usize,
    ground: [f64; 2],
    length: f64,
    ea: f64,
    area: f64,
}

fn test3_beam(model: &Model) -> Result<Test3Beam, RunError> {
    for f in &model.forces {
        if let ForceKind::Beam(b) = &f.kind {
            let (BodyRef::Ground, BodyRef::Body(body)) = (b.a.body, b.b.body) else {
                continue;
            };
            if b.b.point != [0.0, 0.0] || b.axis != Some([1.0, 0.0]) {
                return Err(setup(format!(
                    "{}: test 3 needs the beam along x from the ground to the end mass's centre",
                    model.source
                )));
            }
            return Ok(Test3Beam {
                body,
                ground: b.a.point,
                length: beam_length(model, b),
                ea: b.youngs_modulus * b.area,
                area: b.area,
            });
        }
    }
    Err(setup(format!(
        "{}: no beam from the ground to a body",
        model.source
    )))
}

/// L of a beam: given, or the initial distance of its points.
fn beam_length(model: &Model, b: &jounce_model::Beam) -> f64 {
    let at = |a: &jounce_model::Attachment| match a.body {
        BodyRef::Ground => a.point,
        BodyRef::Body(i) => {
            let body = &model.bodies[i];
            let (sn, cs) = body.angle.sin_cos();
            [
                body.position[0] + cs * a.point[0] - sn * a.point[1],
                body.position[1] + sn * a.point[0] + cs * a.point[1],
            ]
        }
    };
    b.length.unwrap_or_else(|| {
        let (p, q) = (at(&b.a), at(&b.b));
        (q[0] - p[0]).hypot(q[1] - p[1])
    })
}

fn set_damping(model: &mut Model, d: f64) {
    set_series_damping(model, d, DampingSeries::AllLoads);
}

fn set_series_damping(model: &mut Model, d: f64, series: DampingSeries) {
    for f in &mut model.forces {
        if let ForceKind::Beam(b) = &mut f.kind {
            match series {
                DampingSeries::AllLoads | DampingSeries::IsolatedAxial => {
                    b.damping = d;
                    b.axial_damping = None;
                }
                DampingSeries::AxialOnly => {
                    b.damping = jounce_model::DEFAULT_BEAM_DAMPING;
                    b.axial_damping = Some(d);
                }
            }
        }
    }
}

/// Axial deflection u(t) = |P − P_ground| − L of a test-3 run: (ω t, u).
fn axial_response(
    dir: &Path,
    beam: &Test3Beam,
    name: &str,
    omega: f64,
) -> Result<Vec<(f64, f64)>, RunError> {
    let s = Series::read(&dir.join("timeseries.csv"))?;
    let t = s.column("t")?;
    let x = s.column(&format!("{name}.x"))?;
    let y = s.column(&format!("{name}.y"))?;
    Ok(t.iter()
        .zip(x.iter().zip(&y))
        .map(|(t, (x, y))| {
            let u = (x - beam.ground[0]).hypot(y - beam.ground[1]) - beam.length;
            (omega * t, u)
        })
        .collect())
}

/// Overshoot −min u / u(0) (0 when u stays positive).
fn overshoot(u: &[(f64, f64)]) -> f64 {
    let u0 = u[0].1;
    let min = u.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    (-min / u0).max(0.0)
}

/// First ω t at which |u| falls below 1 % of u(0).
fn decay_time(u: &[(f64, f64)]) -> f64 {
    let u0 = u[0].1.abs();
    u.iter()
        .find(|p| p.1.abs() < 0.01 * u0)
        .map_or(f64::NAN, |p| p.0)
}

/// The s > 0 with (1 + s) e^{−s} = 0.01, by Newton.
fn exact_decay_time() -> f64 {
    let mut s: f64 = 5.0;
    for _ in 0..50 {
        let f = (1.0 + s) * (-s).exp() - 0.01;
        let df = -s * (-s).exp();
        s -= f / df;
    }
    s
}

/// Overshoot of the axial response of the test-3 model `file` at damping
/// value `d`, run into `dir` with the end mass displaced along the axis
/// only: (overshoot relative to the initial deflection, ω_axial).
///
/// # Errors
/// The model is not a test-3 model, or its run fails.
pub fn axial_overshoot(file: &Path, d: f64, dir: &Path) -> Result<(f64, f64), RunError> {
    let (u, omega) = axial_run(file, d, dir, true)?;
    Ok((overshoot(&u), omega))
}

/// One run of a test-3 model at damping value `d`, returning its axial
/// response (ω t, u) and ω_axial. `axial_only`: the end mass displaced
/// along the axis only, so the bending modes stay at rest (they would
/// couple in at second order through the chord length).
fn axial_run(
    file: &Path,
    d: f64,
    dir: &Path,
    axial_only: bool,
) -> Result<(Vec<(f64, f64)>, f64), RunError> {
    let mut model = jounce_model::load_file(file)?;
    let beam = test3_beam(&model)?;
    let body = &mut model.bodies[beam.body];
    let omega = (beam.ea / (beam.length * body.mass)).sqrt();
    if axial_only {
        body.position[1] = beam.ground[1];
        body.angle = 0.0;
        body.velocity = [0.0, 0.0];
        body.angular_velocity = 0.0;
    }
    let name = body.name.clone();
    set_damping(&mut model, d);
    let st = &mut model.settings;
    st.t_end = 60.0 / omega;
    st.output_interval = 0.02 / omega;
    st.step_history = false;
    st.integrator.method = "radau5".into();
    st.integrator.rtol = 1e-10;
    st.integrator.atol = 1e-15;
    let s = run(&model, dir)?;
    if s.status != "completed" {
        return Err(setup(format!(
            "{}: the run at d = {d:e} failed: {}",
            file.display(),
            s.error.unwrap_or_default()
        )));
    }
    Ok((axial_response(dir, &beam, &name, omega)?, omega))
}

fn test3(models: &Path, out: &Path) -> Result<Vec<S4Test3Row>, RunError> {
    let mut rows = Vec::new();
    for (m, d_seed) in S4_TEST3 {
        let file = models.join(format!("s4_test3_m{m}.toml"));
        let model = jounce_model::load_file(&file)?;
        let beam = test3_beam(&model)?;
        let mass = model.bodies[beam.body].mass;
        let omega = (beam.ea / (beam.length * mass)).sqrt();
        let d_theory = 2.0 / omega;
        let dir = out.join(format!("test3_m{m}"));
        let (u, _) = axial_run(&file, d_theory, &dir.join("axial_at_2_over_omega"), true)?;
        let (all, _) = axial_run(&file, d_theory, &dir.join("all_dof_at_2_over_omega"), false)?;
        // bisection: lo overshoots, hi does not
        let probe = dir.join("bisection");
        let over = |d: f64| -> Result<bool, RunError> {
            Ok(overshoot(&axial_run(&file, d, &probe, true)?.0) > OVERSHOOT_LIMIT)
        };
        let (mut lo, mut hi) = (0.8 * d_theory, 1.2 * d_theory);
        let mut runs = 2;
        if !over(lo)? || over(hi)? {
            return Err(setup(format!(
                "{}: no overshoot threshold between 0.8 and 1.2 times 2/ω",
                file.display()
            )));
        }
        while (hi - lo) / d_theory > BISECTION_TOL {
            let mid = 0.5 * (lo + hi);
            runs += 1;
            if over(mid)? {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        rows.push(S4Test3Row {
            mass,
            omega,
            d_theory,
            d_seed,
            // 2/d = √(E A/(L m))
            e_seed: (2.0 / d_seed).powi(2) * beam.length * mass / beam.area,
            overshoot_at_theory: overshoot(&u),
            decay_time: decay_time(&u),
            decay_time_exact: exact_decay_time(),
            overshoot_all_dof: overshoot(&all),
            d_bisection: hi,
            bisection_runs: runs,
        });
    }
    Ok(rows)
}

/// Damping values of the seed's plots of test 3 (appendix C).
const PLOT_DAMPING: [f64; 3] = [1e-4, 5e-4, 1e-3];

/// The axial response u/u(0) against ω t of the 50 kg model for the
/// seed's damping values and for 2/ω, into `out/test3_axial.svg`.
fn test3_plot(models: &Path, out: &Path) -> Result<PathBuf, RunError> {
    let file = models.join("s4_test3_m50.toml");
    let model = jounce_model::load_file(&file)?;
    let beam = test3_beam(&model)?;
    let omega = (beam.ea / (beam.length * model.bodies[beam.body].mass)).sqrt();
    let mut curves = Vec::new();
    for d in PLOT_DAMPING.into_iter().chain([2.0 / omega]) {
        let dir = out.join("test3_m50").join(format!("axial_d{d:.3e}"));
        let (u, _) = axial_run(&file, d, &dir, true)?;
        let u0 = u[0].1;
        curves.push(Curve {
            label: format!("d = {d:.2e}"),
            points: u
                .iter()
                .take_while(|p| p.0 <= 30.0)
                .map(|p| (p.0, p.1 / u0))
                .collect(),
        });
    }
    Ok(line_chart(
        &out.join("test3_axial.svg"),
        &Chart {
            title: "S4 test 3: axial deflection of the beam, 50 kg end mass",
            x_label: "ω_axial t",
            y_label: "u / u(0)",
            y_scale: YScale::Linear,
        },
        &curves,
    )?
    .path)
}

/// The body at the beam's first node (the hub of test 4).
fn hub(model: &Model) -> Result<usize, RunError> {
    model
        .forces
        .iter()
        .find_map(|f| match &f.kind {
            ForceKind::Beam(b) => match b.a.body {
                BodyRef::Body(i) => Some(i),
                BodyRef::Ground => None,
            },
            _ => None,
        })
        .ok_or_else(|| setup(format!("{}: no beam from a hub body", model.source)))
}

/// A test-4 model from `file` with its hub's inertia scaled by
/// `hub_scale`, run by `method` to the study's end time without a step
/// history: (model, hub inertia).
fn test4_model(
    file: &Path,
    method: &str,
    hub_scale: f64,
    opts: &S4Options,
) -> Result<(Model, f64), RunError> {
    let mut model = jounce_model::load_file(file)?;
    let h = hub(&model)?;
    model.bodies[h].inertia *= hub_scale;
    let hub_inertia = model.bodies[h].inertia;
    model.settings.integrator.method = method.into();
    model.settings.step_history = false;
    if let Some(t) = opts.t_end {
        model.settings.t_end = t;
    }
    Ok((model, hub_inertia))
}

/// bdf's f-evaluations of `model` at d (1 + δ) for each δ of
/// [`SCATTER_OFFSETS`] (`set` puts a damping value into the model), every
/// run into `dir`: (f-evaluations, whether every run completed).
fn scatter_runs(
    model: &mut Model,
    d: f64,
    set: &dyn Fn(&mut Model, f64),
    dir: &Path,
) -> Result<(Vec<u64>, bool), RunError> {
    let mut f_evals = Vec::with_capacity(SCATTER_OFFSETS.len());
    let mut completed = true;
    for delta in SCATTER_OFFSETS {
        set(model, d * (1.0 + delta));
        let s = run(model, dir)?;
        completed &= s.status == "completed";
        f_evals.push(s.work.rhs_evaluations);
    }
    Ok((f_evals, completed))
}

fn cost_run(
    file: &Path,
    test: &'static str,
    method: &str,
    d: f64,
    hub_scale: f64,
    out: &Path,
    opts: &S4Options,
) -> Result<S4CostRow, RunError> {
    let (mut model, hub_inertia) = test4_model(file, method, hub_scale, opts)?;
    set_damping(&mut model, d);
    let dir = out.join(format!("test{test}_{method}_d{d:e}_hub{hub_inertia}"));
    let mut best: Option<RunSummary> = None;
    for _ in 0..opts.repeat.max(1) {
        let s = run(&model, &dir)?;
        best = Some(match best {
            Some(b) if b.work.cpu_seconds <= s.work.cpu_seconds => b,
            _ => s,
        });
    }
    Ok(S4CostRow {
        test,
        method: method.into(),
        d,
        hub_inertia,
        summary: best.expect("one run at least"),
    })
}

/// One cost point of test 4a ([`S4DampingPoint`]): bdf on the 4a model
/// at d (1 + δ) for each δ of [`SCATTER_OFFSETS`], every run into the
/// same scratch folder `out/scatter`.
fn damping_point(
    file: &Path,
    series: DampingSeries,
    d: f64,
    d_crit: f64,
    hub_scale: f64,
    out: &Path,
    opts: &S4Options,
) -> Result<S4DampingPoint, RunError> {
    let (mut model, hub_inertia) = test4_model(file, IMPLICIT, hub_scale, opts)?;
    let (f_evals, completed) = scatter_runs(
        &mut model,
        d,
        &|m, d| set_series_damping(m, d, series),
        &out.join("scatter"),
    )?;
    Ok(S4DampingPoint {
        series,
        d,
        zeta: zeta(d, d_crit),
        hub_inertia,
        f_evals,
        completed,
    })
}

/// One cost point of the isolated axial mode at damping ratio ζ: test 3's
/// 50 kg model (`test3_file`) at d = ζ · 2/ω, unstressed, the end mass
/// kicked along the axis with v0 = ω u0 (u0 the model's initial axial
/// deflection), bdf at `tolerances` (4a's rtol, atol) to t = 300/ω, by
/// which the slowest root of the grid, ω (ζ − √(ζ² − 1)) at ζ = 8.7, has
/// taken the response below atol; d (1 + δ) for each δ of
/// [`SCATTER_OFFSETS`].
fn isolated_axial_point(
    test3_file: &Path,
    z: f64,
    tolerances: (f64, f64),
    out: &Path,
) -> Result<S4DampingPoint, RunError> {
    let mut model = jounce_model::load_file(test3_file)?;
    let beam = test3_beam(&model)?;
    let body = &mut model.bodies[beam.body];
    let omega = (beam.ea / (beam.length * body.mass)).sqrt();
    let u0 = body.position[0] - beam.ground[0] - beam.length;
    body.position = [beam.ground[0] + beam.length, beam.ground[1]];
    body.angle = 0.0;
    body.velocity = [omega * u0.abs().max(1e-6), 0.0];
    body.angular_velocity = 0.0;
    let st = &mut model.settings;
    st.t_end = 300.0 / omega;
    st.output_interval = st.t_end / 100.0;
    st.step_history = false;
    st.integrator.method = IMPLICIT.into();
    (st.integrator.rtol, st.integrator.atol) = tolerances;
    let d_crit = 2.0 / omega;
    let (f_evals, completed) =
        scatter_runs(&mut model, z * d_crit, &set_damping, &out.join("scatter"))?;
    Ok(S4DampingPoint {
        series: DampingSeries::IsolatedAxial,
        d: z * d_crit,
        zeta: z,
        hub_inertia: 0.0,
        f_evals,
        completed,
    })
}

fn verdict(holds: bool) -> &'static str {
    if holds {
        "holds"
    } else {
        "does not hold"
    }
}

fn findings(
    test3: &[S4Test3Row],
    test4: &[S4CostRow],
    test4a: &[S4DampingPoint],
    d_crit_4: f64,
) -> Vec<S4Finding> {
    let mut f = test3_findings(test3);
    // the seed's own d_crit of test 4a against 2/ω of its stated data
    // (test 3 measures the 2/ω law; the seed allows 5 %: "5 % more or
    // less damping than critical damping is hardly found in the CPU-curve")
    let d0 = jounce_model::DEFAULT_BEAM_DAMPING;
    f.push(S4Finding {
        test: "4a",
        claim: "for this system the axial motion is critically damped at d = 1e-3 (the seed, from its plots)".into(),
        measured: format!(
            "2/ω_axial = {d_crit_4:.3e} from the seed's m = 20 kg, E = 1.9e11 Pa, A = 1e-3 m², L = 0.5 m: d = 1e-3 is {:.2} × 2/ω (ζ = {:.2}, overdamped)",
            d0 / d_crit_4,
            d0 / d_crit_4
        ),
        holds: (d0 / d_crit_4 - 1.0).abs() <= 0.05,
    });
    // the seed's explanation on the axial mode alone
    let all: Vec<&S4DampingPoint> = test4a.iter().collect();
    let (isolated, failed) = series_points(&all, DampingSeries::IsolatedAxial);
    if let Some(mut x) = lowest_at_critical(
        &isolated,
        "the seed's explanation, on the axial mode alone (test 3's beam, 50 kg, kicked along its axis; 4a's tolerances): bdf is cheapest at the d nearest critical damping (bdf f-evals)".into(),
        failed,
    ) {
        x.measured = format!("axial mode alone: {}", x.measured);
        f.push(x);
    }
    let mut hubs: Vec<f64> = test4.iter().map(|r| r.hub_inertia).collect();
    hubs.dedup();
    for j in hubs {
        let rows: Vec<S4CostRow> = test4
            .iter()
            .filter(|r| r.hub_inertia == j)
            .cloned()
            .collect();
        let points: Vec<&S4DampingPoint> = test4a.iter().filter(|p| p.hub_inertia == j).collect();
        for mut x in test4a_findings(&points)
            .into_iter()
            .chain(test4_findings(&rows))
        {
            x.measured = format!("hub J = {j} kg m²: {}", x.measured);
            f.push(x);
        }
    }
    f
}

/// ζ of the axial mode at damping value d: d ω / 2 = d / (2/ω).
fn zeta(d: f64, d_crit: f64) -> f64 {
    d / d_crit
}

/// A damping value with at most four significant digits ("5e-4",
/// "7.52e-4").
fn fmt_d(d: f64) -> String {
    let t = format!("{d:.3e}");
    match t.split_once('e') {
        Some((m, e)) => {
            let m = m.trim_end_matches('0').trim_end_matches('.');
            format!("{m}e{e}")
        }
        None => t,
    }
}

/// "mean (min–max)" of a cost point.
fn cost_text(p: &S4DampingPoint) -> String {
    format!("{:.0} ({:.0}–{:.0})", p.mean(), p.min(), p.max())
}

/// The completed points of `series` among `points`, and how many of
/// that series had a run that failed.
fn series_points<'a>(
    points: &[&'a S4DampingPoint],
    series: DampingSeries,
) -> (Vec<&'a S4DampingPoint>, usize) {
    let of: Vec<&S4DampingPoint> = points
        .iter()
        .copied()
        .filter(|p| p.series == series)
        .collect();
    let failed = of.iter().filter(|p| !p.completed).count();
    (of.into_iter().filter(|p| p.completed).collect(), failed)
}

/// The point of `ps` nearest critical damping, ζ = 1 (on a log scale).
fn nearest_critical(ps: &[&S4DampingPoint]) -> Option<S4DampingPoint> {
    ps.iter()
        .min_by(|x, y| x.zeta.ln().abs().total_cmp(&y.zeta.ln().abs()))
        .map(|p| (*p).clone())
}

/// The point of `ps` with the least mean cost.
fn least_cost(ps: &[&S4DampingPoint]) -> Option<S4DampingPoint> {
    ps.iter()
        .min_by(|x, y| x.mean().total_cmp(&y.mean()))
        .map(|p| (*p).clone())
}

/// The d of the points of `ps` cheaper than `p` beyond the scatter.
fn cheaper_list(ps: &[&S4DampingPoint], p: &S4DampingPoint) -> String {
    let v: Vec<String> = ps
        .iter()
        .filter(|q| q.cheaper_than(p))
        .map(|q| fmt_d(q.d))
        .collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

/// The d of the points of `ps` other than `p` that `p` is not cheaper
/// than beyond the scatter (the ties and the cheaper ones).
fn not_beaten_list(ps: &[&S4DampingPoint], p: &S4DampingPoint) -> String {
    let v: Vec<String> = ps
        .iter()
        .filter(|q| q.d != p.d && !p.cheaper_than(q))
        .map(|q| fmt_d(q.d))
        .collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

/// "Lowest at the d nearest 2/ω" as the seed words it: that point is
/// cheaper than every other point of the series beyond the scatter (a tie
/// within the scatter does not hold, issue 31).
fn lowest_at_critical(ps: &[&S4DampingPoint], claim: String, failed: usize) -> Option<S4Finding> {
    let (near, low) = (nearest_critical(ps)?, least_cost(ps)?);
    let beaten = cheaper_list(ps, &near);
    let tied = not_beaten_list(ps, &near);
    Some(S4Finding {
        test: "4a",
        claim,
        measured: format!(
            "d = {} (ζ = {:.2}) costs {}; least mean at d = {} (ζ = {:.2}), {}; cheaper than d = {} beyond the scatter: {beaten}; not dearer than it beyond the scatter: {tied}",
            fmt_d(near.d),
            near.zeta,
            cost_text(&near),
            fmt_d(low.d),
            low.zeta,
            cost_text(&low),
            fmt_d(near.d),
        ),
        holds: tied == "none" && failed == 0,
    })
}

/// The curve as measured: the cost falls steeply as d rises to 2/ω (the
/// smallest d costs ≥ [`STEEP_RATIO`] × the d nearest 2/ω, and every d
/// below 2/ω costs more than that one beyond the scatter) and is least at
/// or above 2/ω.
fn falls_to_critical(ps: &[&S4DampingPoint], what: &str, failed: usize) -> Vec<S4Finding> {
    let (Some(near), Some(low), Some(under)) = (
        nearest_critical(ps),
        least_cost(ps),
        ps.iter().min_by(|x, y| x.d.total_cmp(&y.d)),
    ) else {
        return Vec::new();
    };
    let steep = under.mean() / near.mean();
    let below: Vec<&&S4DampingPoint> = ps.iter().filter(|p| p.zeta < 1.0).collect();
    let below_dearer = below.iter().all(|p| near.cheaper_than(p));
    // the accepted criterion of 4a (the amendment): the least cost at or
    // above 2/ω
    let criterion = S4Finding {
        test: "4a",
        claim: format!(
            "the accepted criterion: as {what} rises from {:e}, the cost is least at or above 2/ω (bdf f-evals)",
            under.d
        ),
        measured: format!(
            "{what} = {:e} costs {steep:.2} × {what} = {:e} (dearer beyond the scatter: {}); least at {what} = {:e} = {:.2} × 2/ω",
            under.d,
            near.d,
            near.cheaper_than(under),
            low.d,
            low.zeta
        ),
        holds: low.zeta >= 1.0 && failed == 0,
    };
    let steeply = S4Finding {
        test: "4a",
        claim: format!(
            "the cost falls steeply as {what} rises to critical damping ({what} = {:e} costs ≥ {STEEP_RATIO} × the {what} nearest 2/ω, every {what} below 2/ω more beyond the scatter) and is least at or above 2/ω (bdf f-evals)",
            under.d
        ),
        measured: format!(
            "{what} = {:e} costs {steep:.2} × {what} = {:e}; the {} below 2/ω dearer beyond the scatter: {below_dearer}; least at {what} = {:e} = {:.2} × 2/ω",
            under.d,
            near.d,
            below.len(),
            low.d,
            low.zeta
        ),
        holds: steep >= STEEP_RATIO && below_dearer && low.zeta >= 1.0 && failed == 0,
    };
    vec![criterion, steeply]
}

/// The findings of test 4a for one hub, from the cost points of both
/// series (by bdf's f-evaluations, each point the mean of its runs; "A
/// cheaper than B" only beyond the scatter, [`S4DampingPoint::cheaper_than`]).
fn test4a_findings(points: &[&S4DampingPoint]) -> Vec<S4Finding> {
    let (all, failed_all) = series_points(points, DampingSeries::AllLoads);
    let (axial, failed_axial) = series_points(points, DampingSeries::AxialOnly);
    let failed = failed_all + failed_axial;
    // the seed's words, on its experiment
    let mut f: Vec<S4Finding> = lowest_at_critical(
        &all,
        "the seed's words: implicit integration is cheapest near critical damping of the axial mode, at the d nearest 2/ω (d of every load; bdf f-evals)".into(),
        failed,
    )
    .into_iter()
    .collect();
    // the curve as measured (the amendment), on both series
    f.extend(falls_to_critical(&all, "d", failed));
    f.extend(falls_to_critical(&axial, "d_a", failed));
    // the seed's explanation with the bending damping held: the axial
    // value alone cheapest at critical
    f.extend(lowest_at_critical(
        &axial,
        "by the axial load's damping d_a alone (bending at d = 1e-3), the cost is least at the d_a nearest 2/ω (bdf f-evals)".into(),
        failed,
    ));
    // the seed's own measurement: fastest at its default d among its
    // four values
    let d0 = jounce_model::DEFAULT_BEAM_DAMPING;
    let seed_four: Vec<&S4DampingPoint> = all
        .iter()
        .copied()
        .filter(|p| [1e-4, 5e-4, 1e-3, 2e-3].contains(&p.d))
        .collect();
    if let Some(p0) = all.iter().find(|p| p.d == d0) {
        let beaten = cheaper_list(&seed_four, p0);
        let tied = not_beaten_list(&seed_four, p0);
        f.push(S4Finding {
            test: "4a",
            claim: "the seed's measurement: fastest with the default d = 1e-3 of its four values 1e-4, 5e-4, 1e-3, 2e-3, cheaper than each beyond the scatter (bdf f-evals)".into(),
            measured: format!(
                "d = 1e-3 costs {}; of the four, cheaper beyond the scatter: {beaten}; not dearer beyond the scatter (ties and cheaper): {tied}",
                cost_text(p0)
            ),
            holds: tied == "none" && p0.completed,
        });
    }
    // the seed's remark (test 2a): overdamping raises the cost again
    if let (Some(over), Some(low)) = (
        all.iter().max_by(|x, y| x.d.total_cmp(&y.d)),
        least_cost(&all),
    ) {
        f.push(S4Finding {
            test: "4a",
            claim: "damping far beyond critical raises the cost again (seed, test 2a; bdf f-evals)"
                .into(),
            measured: format!(
                "d = {:e} (ζ = {:.1}) costs {}, the least {} at d = {:e}",
                over.d,
                over.zeta,
                cost_text(over),
                cost_text(&low),
                low.d
            ),
            holds: low.cheaper_than(over),
        });
    }
    f
}

fn test3_findings(test3: &[S4Test3Row]) -> Vec<S4Finding> {
    let mut f = Vec::new();
    // test 3: critical damping at 2/ω, scaling with √m
    let worst = test3
        .iter()
        .map(|r| r.deviation().abs())
        .fold(0.0, f64::max);
    let none_at_theory = test3
        .iter()
        .all(|r| r.overshoot_at_theory <= OVERSHOOT_LIMIT);
    f.push(S4Finding {
        test: "3",
        claim: "the axial mode is critically damped at d = 2/ω_axial (a mass-spring-damper with c = d EA/L)".into(),
        measured: format!(
            "no overshoot at 2/ω for every mass: {}; bisection within {:.2} % of 2/ω",
            none_at_theory,
            100.0 * worst
        ),
        holds: none_at_theory && worst <= 0.02,
    });
    if let (Some(first), true) = (test3.first(), test3.len() > 1) {
        let worst_scale = test3
            .iter()
            .map(|r| {
                let expected = (r.mass / first.mass).sqrt();
                (r.d_bisection / first.d_bisection / expected - 1.0).abs()
            })
            .fold(0.0, f64::max);
        f.push(S4Finding {
            test: "3",
            claim: "d_crit grows with √m (seed: 3.04e-4, 6.8e-4, 1.18e-3 for 10, 50, 150 kg)"
                .into(),
            measured: format!(
                "measured d_crit ratios within {:.2} % of √(m/m₁)",
                100.0 * worst_scale
            ),
            holds: worst_scale <= 0.02,
        });
    }
    f
}

/// The findings of tests 4b and 4c for one hub.
fn test4_findings(test4: &[S4CostRow]) -> Vec<S4Finding> {
    let mut f = Vec::new();
    let cpu = |r: &S4CostRow| r.summary.work.cpu_seconds;
    let completed = |r: &S4CostRow| r.summary.status == "completed";
    let find = |test: &str, method: &str, d: f64| {
        test4
            .iter()
            .find(|r| r.test == test && r.method == method && r.d == d)
    };
    let d0 = jounce_model::DEFAULT_BEAM_DAMPING;
    // 4b: explicit cheapest with the axial DOF locked
    if let (Some(bx), Some(bi), Some(ai)) = (
        find("4b", "dopri5", d0),
        find("4b", IMPLICIT, d0),
        find("4a", IMPLICIT, d0),
    ) {
        // explicit against implicit: by CPU, the seed's measure, beyond
        // the margin (each CPU the least of the repetitions)
        let holds = completed(bx)
            && crate::judge::Verdict::all([
                crate::judge::less(cpu(bx), cpu(bi), crate::judge::MIN_MARGIN),
                crate::judge::less(cpu(bx), cpu(ai), crate::judge::MIN_MARGIN),
            ])
            .holds();
        f.push(S4Finding {
            test: "4b",
            claim: "with the axial DOF locked, explicit integration becomes the cheapest, by more than 10 % of CPU (seed: 90 s vs 150 s implicit, 160 s for 4a)".into(),
            measured: format!(
                "dopri5 {:.4e} s ({} steps) vs bdf locked {:.4e} s ({} steps), bdf on 4a {:.4e} s",
                cpu(bx),
                bx.summary.work.steps_accepted,
                cpu(bi),
                bi.summary.work.steps_accepted,
                cpu(ai)
            ),
            holds,
        });
        // implicit against implicit: by bdf's f-evals (deterministic)
        let (eb, ea) = (
            bi.summary.work.rhs_evaluations,
            ai.summary.work.rhs_evaluations,
        );
        f.push(S4Finding {
            test: "4b",
            claim: "locking the axial DOF makes implicit integration a bit cheaper than in 4a (by bdf's f-evals)".into(),
            measured: format!(
                "bdf {eb} f-evals locked vs {ea} free ({:.3} s vs {:.3} s)",
                cpu(bi),
                cpu(ai),
            ),
            holds: completed(bi) && eb < ea,
        });
    }
    // 4c: explicit on 4a far more expensive
    if let (Some(cx), Some(ai)) = (find("4c", "dopri5", d0), find("4a", IMPLICIT, d0)) {
        let ratio = cpu(cx) / cpu(ai);
        let steps = cx.summary.work.steps_accepted as f64 / ai.summary.work.steps_accepted as f64;
        f.push(S4Finding {
            test: "4c",
            claim: "explicit integration of 4a is far more expensive than implicit (seed: 1200 s vs 160 s)".into(),
            measured: format!("dopri5/bdf: CPU {ratio:.2}×, steps {steps:.1}×"),
            // "far": at least twice the CPU
            holds: !completed(cx) || ratio >= 2.0,
        });
    }
    f
}

/// Run S4 from the models in `models` (the `examples/studies` folder),
/// writing every run and the CSV files under `out`.
///
/// # Errors
/// A model cannot be loaded, a test-3 run fails, or a file cannot be written.
pub fn s4(models: &Path, out: &Path, opts: &S4Options) -> Result<S4Study, RunError> {
    std::fs::create_dir_all(out).map_err(|e| io(out, e))?;
    let test3 = test3(models, out)?;
    let mut test4 = Vec::new();
    let file = |t: &str| models.join(format!("s4_test{t}.toml"));
    let d0 = jounce_model::DEFAULT_BEAM_DAMPING;
    for &k in &opts.hub_scales {
        for d in S4_DAMPING {
            test4.push(cost_run(&file("4a"), "4a", IMPLICIT, d, k, out, opts)?);
        }
        for method in ["dopri5", IMPLICIT] {
            test4.push(cost_run(&file("4b"), "4b", method, d0, k, out, opts)?);
        }
        test4.push(cost_run(&file("4c"), "4c", "dopri5", d0, k, out, opts)?);
    }
    // 2/ω_axial of test 4
    let m4 = jounce_model::load_file(&file("4a"))?;
    let d_crit_4 = m4
        .forces
        .iter()
        .find_map(|f| match &f.kind {
            ForceKind::Beam(b) => {
                let BodyRef::Body(i) = b.b.body else {
                    return None;
                };
                let l = beam_length(&m4, b);
                Some(2.0 / (b.youngs_modulus * b.area / (l * m4.bodies[i].mass)).sqrt())
            }
            _ => None,
        })
        .ok_or_else(|| setup("test 4a has no beam to a body".into()))?;
    // the cost points of 4a after the timed runs (f-evaluations only),
    // and the axial mode alone at the same ζ and tolerances
    let mut test4a = Vec::new();
    let tolerances = (m4.settings.integrator.rtol, m4.settings.integrator.atol);
    for d in S4_DAMPING {
        test4a.push(isolated_axial_point(
            &models.join("s4_test3_m50.toml"),
            zeta(d, d_crit_4),
            tolerances,
            out,
        )?);
    }
    for &k in &opts.hub_scales {
        for series in [DampingSeries::AllLoads, DampingSeries::AxialOnly] {
            for d in S4_DAMPING {
                test4a.push(damping_point(
                    &file("4a"),
                    series,
                    d,
                    d_crit_4,
                    k,
                    out,
                    opts,
                )?);
            }
        }
    }
    let _ = std::fs::remove_dir_all(out.join("scatter"));
    let findings = findings(&test3, &test4, &test4a, d_crit_4);
    let files = write_csv(out, &test3, &test4, &test4a, &findings)?;
    let plot = test3_plot(models, out)?;
    let cost_plot = test4a_plot(out, &test4a)?;
    // the test-4 runs against t (test 3's are in test3_axial.svg)
    jounce::plot::styled_run_charts(
        out,
        &|name| name.starts_with("test4"),
        "S4 test 4 runs",
        &crate::style::by_index,
    )?;
    Ok(S4Study {
        test3,
        test4,
        test4a,
        d_crit_4,
        findings,
        files,
        plot,
        cost_plot,
    })
}

/// The least mean cost of the points of `p`'s series and hub.
fn series_least(points: &[S4DampingPoint], p: &S4DampingPoint) -> f64 {
    points
        .iter()
        .filter(|q| q.series == p.series && q.hub_inertia == p.hub_inertia)
        .map(S4DampingPoint::mean)
        .fold(f64::INFINITY, f64::min)
}

/// bdf's f-evaluations (the mean of each point's runs, over the least of
/// its series) against ζ of the axial mode, one curve per series and hub,
/// into `out/test4a_cost.svg`.
fn test4a_plot(out: &Path, points: &[S4DampingPoint]) -> Result<PathBuf, RunError> {
    let mut curves: Vec<Curve> = Vec::new();
    for p in points {
        let label = match p.series {
            DampingSeries::IsolatedAxial => "axial mode alone (test 3, 50 kg, kicked)".to_string(),
            s => format!("4a, {}, hub J = {}", s.label(), p.hub_inertia),
        };
        let xy = (p.zeta, p.mean() / series_least(points, p));
        match curves.iter_mut().find(|c| c.label == label) {
            Some(c) => c.points.push(xy),
            None => curves.push(Curve {
                label,
                points: vec![xy],
            }),
        }
    }
    Ok(line_chart(
        &out.join("test4a_cost.svg"),
        &Chart {
            title: "S4 test 4a: bdf f-evaluations against the axial mode's damping ratio",
            x_label: "ζ_axial = d ω_axial / 2",
            y_label: "f-evaluations / least of the series (mean of d (1 + δ), δ = 0, ±1 %, ±2 %)",
            y_scale: YScale::Linear,
        },
        &curves,
    )?
    .path)
}

fn write_csv(
    out: &Path,
    test3: &[S4Test3Row],
    test4: &[S4CostRow],
    test4a: &[S4DampingPoint],
    findings: &[S4Finding],
) -> Result<Vec<PathBuf>, RunError> {
    let mut a = String::from(
        "mass_kg,omega_axial,d_2_over_omega,d_seed,e_for_seed,overshoot_at_2_over_omega,decay_omega_t_1pct,decay_exact,overshoot_all_dof,d_bisection,deviation,bisection_runs\n",
    );
    for r in test3 {
        let _ = writeln!(
            a,
            "{},{},{},{},{},{},{},{},{},{},{},{}",
            r.mass,
            r.omega,
            r.d_theory,
            r.d_seed,
            r.e_seed,
            r.overshoot_at_theory,
            r.decay_time,
            r.decay_time_exact,
            r.overshoot_all_dof,
            r.d_bisection,
            r.deviation(),
            r.bisection_runs
        );
    }
    let mut b = String::from(
        "test,method,d,hub_inertia,status,t_reached,steps_accepted,steps_rejected,rhs_evaluations,jacobian_evaluations,lu_factorizations,newton_iterations,events,cpu_seconds\n",
    );
    for r in test4 {
        let w = &r.summary.work;
        let _ = writeln!(
            b,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            r.test,
            r.method,
            r.d,
            r.hub_inertia,
            r.summary.status,
            r.summary.t_reached,
            w.steps_accepted,
            w.steps_rejected,
            w.rhs_evaluations,
            w.jacobian_evaluations,
            w.lu_factorizations,
            w.newton_iterations,
            w.events,
            w.cpu_seconds
        );
    }
    let mut e = String::from(
        "series,hub_inertia,d,zeta_axial,completed,f_evals_mean,f_evals_min,f_evals_max",
    );
    for delta in SCATTER_OFFSETS {
        let _ = write!(e, ",f_evals_at_{delta:+}");
    }
    e.push('\n');
    for p in test4a {
        let _ = write!(
            e,
            "{},{},{},{},{},{},{},{}",
            p.series.label(),
            p.hub_inertia,
            p.d,
            p.zeta,
            p.completed,
            p.mean(),
            p.min(),
            p.max()
        );
        for x in &p.f_evals {
            let _ = write!(e, ",{x}");
        }
        e.push('\n');
    }
    let mut c = String::from("test,claim,measured,verdict\n");
    for f in findings {
        let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
        let _ = writeln!(
            c,
            "{},{},{},{}",
            f.test,
            q(&f.claim),
            q(&f.measured),
            verdict(f.holds)
        );
    }
    let mut files = Vec::new();
    for (name, text) in [
        ("test3.csv", a),
        ("test4.csv", b),
        ("test4a_cost.csv", e),
        ("findings.csv", c),
    ] {
        let p = out.join(name);
        std::fs::write(&p, text).map_err(|e| io(&p, e))?;
        files.push(p);
    }
    Ok(files)
}

/// The study's tables and the seed's findings beside them.
pub fn s4_table(study: &S4Study) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "S4 test 3: critical damping of the beam's axial mode (L = 0.5 m, A = 1e-3 m², E = 2.1e11 Pa)"
    );
    let _ = writeln!(
        s,
        "{:>8} {:>10} {:>11} {:>10} {:>10} {:>12} {:>10} {:>12} {:>11} {:>9}",
        "m [kg]",
        "ω [rad/s]",
        "2/ω [s]",
        "seed [s]",
        "E(seed)",
        "overshoot",
        "ωt(1 %)",
        "all-DOF ovs",
        "bisect [s]",
        "dev"
    );
    for r in &study.test3 {
        let _ = writeln!(
            s,
            "{:>8} {:>10.1} {:>11.4e} {:>10.3e} {:>10.3e} {:>12.2e} {:>10.3} {:>12.2e} {:>11.4e} {:>8.2}%",
            r.mass,
            r.omega,
            r.d_theory,
            r.d_seed,
            r.e_seed,
            r.overshoot_at_theory,
            r.decay_time,
            r.overshoot_all_dof,
            r.d_bisection,
            100.0 * r.deviation()
        );
    }
    if let Some(r) = study.test3.first() {
        let _ = writeln!(
            s,
            "(overshoot: −min u / u(0) of the axial deflection; no overshoot below {OVERSHOOT_LIMIT:e}; closed-form decay to 1 % at ωt = {:.3}; E(seed): the E for which 2/ω is the seed's value)",
            r.decay_time_exact
        );
    }
    let _ = writeln!(
        s,
        "S4 test 4: pinned beam (m = 20 kg, L = 0.5 m, I = 1e-9 m⁴, A = 1e-3 m², E = 1.9e11 Pa) on a one-sided stop"
    );
    let _ = writeln!(
        s,
        "{:<5} {:<8} {:>8} {:>6} {:<10} {:>8} {:>6} {:>9} {:>7} {:>7} {:>8} {:>6} {:>9}",
        "test",
        "method",
        "d",
        "hub J",
        "status",
        "steps",
        "rej",
        "f-evals",
        "jac",
        "LU",
        "newton",
        "events",
        "CPU [s]"
    );
    for r in &study.test4 {
        let w = &r.summary.work;
        let _ = writeln!(
            s,
            "{:<5} {:<8} {:>8.0e} {:>6} {:<10} {:>8} {:>6} {:>9} {:>7} {:>7} {:>8} {:>6} {:>9.4}",
            r.test,
            r.method,
            r.d,
            r.hub_inertia,
            r.summary.status,
            w.steps_accepted,
            w.steps_rejected,
            w.rhs_evaluations,
            w.jacobian_evaluations,
            w.lu_factorizations,
            w.newton_iterations,
            w.events,
            w.cpu_seconds
        );
    }
    let _ = writeln!(
        s,
        "S4 test 4a: bdf f-evaluations against d, each the mean of d (1 + δ), δ = 0, ±1 %, ±2 % (min–max); 2/ω_axial = {:.4e}",
        study.d_crit_4
    );
    let _ = writeln!(
        s,
        "{:<11} {:>6} {:>8} {:>7} {:>9} {:>15} {:>9} {:>10}",
        "series", "hub J", "d", "ζ_axial", "f-evals", "min–max", "scatter", "vs least"
    );
    for p in &study.test4a {
        let least = series_least(&study.test4a, p);
        let _ = writeln!(
            s,
            "{:<11} {:>6} {:>8.1e} {:>7.2} {:>9.0} {:>15} {:>8.1}% {:>9.3}×{}",
            p.series.label(),
            if p.series == DampingSeries::IsolatedAxial {
                "—".to_string()
            } else {
                p.hub_inertia.to_string()
            },
            p.d,
            p.zeta,
            p.mean(),
            format!("{:.0}–{:.0}", p.min(), p.max()),
            100.0 * p.scatter(),
            p.mean() / least,
            if p.completed { "" } else { " (a run failed)" }
        );
    }
    let _ = writeln!(s, "Seed findings:");
    for f in &study.findings {
        let _ = writeln!(
            s,
            "  test {}: {} — {} ({})",
            f.test,
            f.claim,
            verdict(f.holds),
            f.measured
        );
    }
    for p in &study.files {
        let _ = writeln!(s, "csv: {}", p.display());
    }
    let _ = writeln!(s, "plot: {}", study.plot.display());
    let _ = writeln!(s, "plot: {}", study.cost_plot.display());
    s
}
