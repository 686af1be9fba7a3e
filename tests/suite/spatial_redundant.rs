//! Redundant joints on spatial models (issue 33), as on planar ones
//! (`redundant_constraints.rs`, `redundancy_capabilities.rs`):
//!
//! - the spatial double pendulum with its shoulder declared twice runs
//!   under every formulation that runs a redundant planar model and moves
//!   as the model without the second shoulder; `joint` refuses it by name;
//! - the two shoulders' loads (`fx, fy, fz, mx, my, mz`, from the
//!   minimum-norm multipliers over all rows) add up to the single
//!   shoulder's, each carrying half: two identical rows share their load
//!   equally in the minimum-norm solution;
//! - a second shoulder 1 cm off the first, and a second motor that
//!   agrees with the first at t = 0 and parts from it later, are refused
//!   by name before integrating, by `run` and `check` alike;
//! - the product rule: a pendulum on a doubled revolute swinging into a
//!   sphere–plane contact (impact law, penalty law), and a ball on a
//!   doubled prismatic guide dropped on the floor (impact law), hit the
//!   plane and stay above it, under every formulation, as on a single
//!   joint (the planar twin of this bug was a ball through the floor with
//!   status "completed");
//! - `jounce check` lists the formulations that run the redundant model,
//!   and each of them runs it.

use crate::support;

use std::panic::{catch_unwind, AssertUnwindSafe};

use jounce::run::run_model;
use jounce::RunError;
use support::{repo, scratch, Series};

/// Every formulation that runs a redundant model, with a method that
/// fits it (formulation, method, fixed step).
const RUNS: [(&str, &str, Option<f64>); 9] = [
    ("augmented", "dop853", None),
    ("projection", "dop853", None),
    ("partitioning", "dop853", None),
    ("state_space", "radau5", None),
    ("penalty", "radau5", None),
    ("index3", "radau5", None),
    ("ggl", "radau5", None),
    ("odae", "bdf", None),
    ("augmented_lagrangian", "generalized_alpha", Some(1e-3)),
];

/// How far a penalty run of a doubled joint may be from the run of the
/// single joint: penalty runs all rows, so the doubled rows double the
/// joint's penalty stiffness and change its O(1/α) constraint error
/// (measured 5.2e-8 on the double pendulum at t = 1 s, 6.0e-7 on the
/// pendulum hitting the floor; every other formulation within 5e-12).
const PENALTY_BOUND: f64 = 2e-6;

/// A method that runs `formulation` ([`RUNS`]).
fn method_for(formulation: &str) -> (&'static str, Option<f64>) {
    RUNS.iter()
        .find(|(f, _, _)| *f == formulation)
        .map_or(("dop853", None), |&(_, m, h)| (m, h))
}

/// The shoulder of `examples/spatial_double_pendulum.toml` declared again
/// as `shoulder_again`, its ground point moved by `offset` (m) along x.
fn shoulder_again(offset: f64) -> String {
    format!(
        "[[joints]]\nname = \"shoulder_again\"\ntype = \"spherical\"\nbody1 = \"ground\"\n\
         point1 = [{offset:?}, 0.0, 0.0]\nbody2 = \"link1\"\npoint2 = \"O\"\n\n"
    )
}

/// The model text `base` with `extra` joints before its `[settings]`, run
/// with `formulation`, `method` (fixed `step` or rtol = 1e-10,
/// atol = 1e-12) to `t_end`.
fn with_settings(
    base: &str,
    extra: &str,
    formulation: &str,
    method: &str,
    step: Option<f64>,
    t_end: f64,
) -> String {
    let at = base.find("[settings]").expect("a [settings] table");
    let step_line = step.map_or_else(String::new, |h| format!("step = {h}\n"));
    format!(
        "{}{extra}[settings]\nt_end = {t_end}\noutput_interval = 0.01\nformulation = \
         \"{formulation}\"\n\n[settings.integrator]\nmethod = \"{method}\"\nrtol = 1e-10\n\
         atol = 1e-12\n{step_line}",
        &base[..at]
    )
}

/// The spatial double pendulum (its shoulder doubled when `doubled`, the
/// second one `offset` m off the first) to t = 1 s.
fn double_pendulum(doubled: bool, offset: f64, formulation: &str) -> String {
    let base = std::fs::read_to_string(repo("examples/spatial_double_pendulum.toml")).unwrap();
    let (method, step) = method_for(formulation);
    let extra = if doubled {
        shoulder_again(offset)
    } else {
        String::new()
    };
    with_settings(&base, &extra, formulation, method, step, 1.0)
}

/// How one run ended.
enum Outcome {
    Completed {
        series: Series,
        events: u64,
        summary: Box<jounce_io::RunSummary>,
    },
    /// Refused before integrating (model, set-up or check).
    Refused(String),
    /// Failed while integrating.
    Failed(String),
}

/// Run the model text; a panic fails the test, naming the run.
fn run(text: &str, tag: &str) -> Outcome {
    let model = match jounce_model::from_str(text, &format!("{tag}.toml")) {
        Ok(m) => m,
        Err(e) => return Outcome::Refused(e.to_string()),
    };
    let out = scratch(tag);
    let result = catch_unwind(AssertUnwindSafe(|| run_model(&model, &out, None)))
        .unwrap_or_else(|_| panic!("{tag}: the run panicked"));
    let outcome = match result {
        Ok(s) => Outcome::Completed {
            series: Series::read(&out.join("timeseries.csv")),
            events: s.work.events,
            summary: Box::new(s),
        },
        Err(e @ RunError::Integration { .. }) => Outcome::Failed(e.to_string()),
        Err(e) => {
            // refused before integrating: no row written
            assert!(
                !out.join("timeseries.csv").exists()
                    || std::fs::read_to_string(out.join("timeseries.csv"))
                        .unwrap()
                        .lines()
                        .count()
                        <= 1,
                "{tag}: refused after writing rows: {e}"
            );
            Outcome::Refused(e.to_string())
        }
    };
    let _ = std::fs::remove_dir_all(&out);
    outcome
}

/// The completed run's series and summary, or a panic naming the run.
fn completed(o: Outcome, tag: &str) -> (Series, u64, Box<jounce_io::RunSummary>) {
    match o {
        Outcome::Completed {
            series,
            events,
            summary,
        } => (series, events, summary),
        Outcome::Refused(why) => panic!("{tag}: refused: {why}"),
        Outcome::Failed(why) => panic!("{tag}: failed: {why}"),
    }
}

/// The position columns of the double pendulum.
fn pendulum_positions() -> Vec<String> {
    ["link1", "link2"]
        .iter()
        .flat_map(|b| {
            ["x", "y", "z", "qw", "qx", "qy", "qz"]
                .iter()
                .map(move |c| format!("{b}.{c}"))
        })
        .collect()
}

/// max |a − b| over the columns `cols` in the last row (t = t_end).
fn last_row_difference(a: &Series, b: &Series, cols: &[String]) -> f64 {
    assert_eq!(a.col("t").len(), b.col("t").len(), "the same output rows");
    cols.iter()
        .map(|c| {
            let (x, y) = (a.col(c), b.col(c));
            (x[x.len() - 1] - y[y.len() - 1]).abs()
        })
        .fold(0.0, f64::max)
}

/// The double pendulum with a doubled shoulder runs under every
/// formulation of [`RUNS`] and is where the model with one shoulder is
/// at t = 1 s: within 1e-8 for the formulations on the independent rows
/// and the augmented Lagrangian (whose iteration converges the doubled
/// rows as the single ones); penalty within [`PENALTY_BOUND`].
/// Every run says that the shoulders' reactions are not unique.
#[test]
fn doubled_shoulder_moves_as_one_shoulder_under_every_formulation() {
    let cols = pendulum_positions();
    for (f, method, _) in RUNS {
        let tag = format!("spatial-dp-{f}");
        let (a, _, _) = completed(
            run(&double_pendulum(false, 0.0, f), &format!("{tag}-one")),
            &tag,
        );
        let (b, _, s) = completed(
            run(&double_pendulum(true, 0.0, f), &format!("{tag}-two")),
            &tag,
        );
        let d = last_row_difference(&a, &b, &cols);
        let bound = if f == "penalty" { PENALTY_BOUND } else { 1e-8 };
        println!("{f} ({method}): positions at t = 1 s differ by {d:.2e} (bound {bound:e})");
        assert!(d <= bound, "{f}: positions differ by {d:e} > {bound:e}");
        assert_eq!(
            s.non_unique_reactions,
            [
                "joint 'shoulder_again' (x)",
                "joint 'shoulder_again' (y)",
                "joint 'shoulder_again' (z)"
            ],
            "{f}"
        );
        assert!(
            s.diagnostics.iter().any(|d| d
                .contains("redundant constraints: joint 'shoulder_again' (x)")
                && d.contains("not unique")),
            "{f}: {:?}",
            s.diagnostics
        );
    }
}

/// `joint` refuses the doubled shoulder before integrating, naming the
/// rows and the formulations that run it, as for a planar model.
#[test]
fn joint_refuses_a_doubled_shoulder_by_name() {
    let text = double_pendulum(true, 0.0, "augmented")
        .replace("formulation = \"augmented\"", "formulation = \"joint\"");
    match run(&text, "spatial-dp-joint") {
        Outcome::Refused(why) => assert!(
            why.contains("formulation 'joint' cannot run a model with redundant constraints")
                && why.contains("joint 'shoulder_again' (x)")
                && why.contains("augmented_lagrangian"),
            "{why}"
        ),
        Outcome::Completed { .. } => panic!("joint ran the doubled shoulder"),
        Outcome::Failed(why) => panic!("joint failed while integrating: {why}"),
    }
}

/// The loads of the two shoulders add up to the single shoulder's at
/// every output row (within 1e-8 N), and each is half of it: two
/// identical spherical joints have identical rows, the left null space
/// of Φ_q is spanned by (e_r − e_k)/√2 for each pair, and the
/// minimum-norm multipliers have λ_r = λ_k. Their moments about the
/// joint point are zero (a spherical joint transmits none). Checked
/// under a formulation on the independent rows (augmented) and two on
/// all rows (augmented Lagrangian; penalty, whose doubled rows are
/// doubled springs, within 1e-5 N).
#[test]
fn doubled_shoulders_share_the_single_shoulders_load_equally() {
    for f in ["augmented", "augmented_lagrangian", "penalty"] {
        let tag = format!("spatial-dp-loads-{f}");
        let (one, _, _) = completed(
            run(&double_pendulum(false, 0.0, f), &format!("{tag}-one")),
            &tag,
        );
        let (two, _, _) = completed(
            run(&double_pendulum(true, 0.0, f), &format!("{tag}-two")),
            &tag,
        );
        let (mut sum_err, mut half_err, mut peak) = (0.0_f64, 0.0_f64, 0.0_f64);
        for c in ["fx", "fy", "fz", "mx", "my", "mz"] {
            let single = one.col(&format!("shoulder.{c}"));
            let a = two.col(&format!("shoulder.{c}"));
            let b = two.col(&format!("shoulder_again.{c}"));
            assert_eq!(single.len(), a.len(), "{f}: the same output rows");
            for i in 0..single.len() {
                peak = peak.max(single[i].abs());
                sum_err = sum_err.max((a[i] + b[i] - single[i]).abs());
                half_err = half_err
                    .max((a[i] - 0.5 * single[i]).abs())
                    .max((b[i] - 0.5 * single[i]).abs());
                if c.starts_with('m') {
                    assert!(
                        a[i].abs() < 1e-9 && b[i].abs() < 1e-9,
                        "{f}: {c} = {}",
                        a[i]
                    );
                }
            }
        }
        println!(
            "{f}: peak shoulder load {peak:.3} N; |sum − single| ≤ {sum_err:.2e} N, \
             |each − half| ≤ {half_err:.2e} N"
        );
        // the pendulum released horizontally pulls on its shoulder with
        // tens of newtons: the comparison is not vacuous
        assert!(peak > 10.0, "{f}: peak load {peak}");
        // penalty runs the doubled rows as doubled springs: its loads are
        // those of a slightly other motion (measured 2.2e-6 N off)
        let bound = if f == "penalty" { 1e-5 } else { 1e-8 };
        assert!(sum_err <= bound, "{f}: the sum is {sum_err:e} N off");
        assert!(half_err <= bound, "{f}: a share is {half_err:e} N off half");
    }
}

/// A second shoulder 1 cm off the first cannot hold with it: `run` (under
/// every formulation) and `check` refuse the model before integrating
/// (at assembly: the two cannot be closed together), naming the
/// inconsistent row and its residual, the 1 cm, where the first holds.
#[test]
fn an_inconsistent_second_shoulder_is_refused_by_name_before_integrating() {
    for (f, _, _) in RUNS {
        let text = double_pendulum(true, 0.01, f);
        match run(&text, &format!("spatial-dp-off-{f}")) {
            // the row's residual where the first shoulder holds is the
            // 1 cm between the two ground points
            Outcome::Refused(why) => assert!(
                why.contains("inconsistent redundant constraint")
                    && why.contains(
                        "joint 'shoulder_again' (x): inconsistent (residual 1.000e-2 in position"
                    ),
                "{f}: {why}"
            ),
            Outcome::Completed { .. } => panic!("{f}: ran an inconsistent shoulder"),
            Outcome::Failed(why) => panic!("{f}: refused only while integrating: {why}"),
        }
    }
    let model =
        jounce_model::from_str(&double_pendulum(true, 0.01, "augmented"), "off.toml").unwrap();
    let why = jounce::check::check_report(&model)
        .expect_err("check refuses")
        .to_string();
    assert!(
        why.contains("inconsistent redundant constraint") && why.contains("joint 'shoulder_again'"),
        "{why}"
    );
}

/// A pendulum (a 1 kg ball of radius 0.1 m on an arm of 0.8 m) on a
/// revolute about x at (0, 0, 0.85), declared twice when `doubled`,
/// released with the arm horizontal: it swings down into the ground plane
/// z = 0 (the ball touches it 20.4° before the bottom, where its centre
/// would be at z = 0.05) with the contact `law`.
fn pendulum_on_the_floor(doubled: bool, law: &str, formulation: &str) -> String {
    let hinge = |name: &str| {
        format!(
            "[[joints]]\nname = \"{name}\"\ntype = \"revolute\"\nbody1 = \"ground\"\n\
             point1 = [0.0, 0.0, 0.85]\nbody2 = \"ball\"\npoint2 = [0.0, -0.8, 0.0]\n\
             axis = [1.0, 0.0, 0.0]\n\n"
        )
    };
    let mut s = String::from(
        "[model]\nname = \"pendulum on the floor\"\nspace = \"spatial\"\n\
         gravity = [0.0, 0.0, -9.81]\n\n[[bodies]]\nname = \"ball\"\nmass = 1.0\n\
         inertia = [0.004, 0.004, 0.004]\nposition = [0.0, 0.8, 0.85]\n\n",
    );
    s += &hinge("hinge");
    if doubled {
        s += &hinge("hinge_again");
    }
    s += &format!(
        "[[contacts]]\nname = \"floor\"\ntype = \"sphere_plane\"\nbody1 = \"ground\"\n\
         point1 = [0.0, 0.0, 0.0]\nnormal1 = [0.0, 0.0, 1.0]\nbody2 = \"ball\"\n\
         radius2 = 0.1\n{law}\n\n[settings]\n"
    );
    let (method, step) = method_for(formulation);
    with_settings(&s, "", formulation, method, step, 1.5)
}

/// The product rule: a redundant joint with a contact. Under every
/// formulation the pendulum on a doubled revolute hits the floor (events
/// under the impact law; a compressed contact under the penalty law) and
/// never passes through it: its gap stays above −`depth` at every output
/// row, the ball swings back up (its y turns back), and it moves as the
/// pendulum on one revolute (the same events; positions within 1e-8,
/// penalty's within [`PENALTY_BOUND`]).
fn pendulum_hits_the_floor_and_stays_above_it(law: &str, depth: f64, tag: &str) {
    let impact = law.contains("impact");
    let cols: Vec<String> = ["x", "y", "z", "qw", "qx", "qy", "qz"]
        .iter()
        .map(|c| format!("ball.{c}"))
        .collect();
    for (f, _, _) in RUNS {
        let name = format!("{tag}-{f}");
        let (a, ea, _) = completed(
            run(
                &pendulum_on_the_floor(false, law, f),
                &format!("{name}-one"),
            ),
            &name,
        );
        let (b, eb, s) = completed(
            run(&pendulum_on_the_floor(true, law, f), &format!("{name}-two")),
            &name,
        );
        assert_eq!(s.status, "completed", "{name}");
        let gap = b.col("floor.gap");
        let min_gap = gap.iter().copied().fold(f64::INFINITY, f64::min);
        let force = b.col("floor.normal_force");
        let peak_force = force.iter().copied().fold(0.0, f64::max);
        let y = b.col("ball.y");
        let y_min = y.iter().copied().fold(f64::INFINITY, f64::min);
        let d = last_row_difference(&a, &b, &cols);
        println!(
            "{name}: {eb} events ({ea} with one hinge), min gap {min_gap:.3e} m, peak normal \
             force {peak_force:.1} N, min y {y_min:.4} m, y at the end {:.4} m, positions differ \
             by {d:.2e}",
            y[y.len() - 1]
        );
        assert!(
            min_gap >= -depth,
            "{name}: through the floor: gap {min_gap}"
        );
        // the ball reached the floor (the arm stops 20.4° before the
        // bottom, y = 0.8 sin 20.4° = 0.279 m) and swung back
        assert!(y_min > 0.2 && y_min < 0.32, "{name}: min y {y_min}");
        assert!(y[y.len() - 1] > y_min + 0.05, "{name}: no rebound");
        if impact {
            assert!(eb >= 1, "{name}: no impact");
            assert!(min_gap < 1e-6, "{name}: never touched: {min_gap}");
        } else {
            assert!(peak_force > 10.0, "{name}: no contact force");
            assert!(min_gap < 0.0, "{name}: never pressed: {min_gap}");
        }
        assert_eq!(ea, eb, "{name}: other events than with one hinge");
        let bound = if f == "penalty" { PENALTY_BOUND } else { 1e-8 };
        assert!(d <= bound, "{name}: positions differ by {d:e} > {bound:e}");
    }
}

#[test]
fn a_doubled_hinge_does_not_take_the_ball_through_an_impact_floor() {
    pendulum_hits_the_floor_and_stays_above_it(
        "law = \"impact\"\nrestitution = 0.8",
        1e-6,
        "spatial-floor-impact",
    );
}

#[test]
fn a_doubled_hinge_does_not_take_the_ball_through_a_penalty_floor() {
    // k = 1e5 N/m: the ball meets the floor at about 3.8 m/s, 20.4° from
    // horizontal (normal speed v_n ≈ 1.3 m/s); the hinge leaves it an
    // effective mass m / sin²20.4° ≈ 8 kg along the normal, so it presses
    // in by about v_n √(m_eff / k) ≈ 1.2 cm (measured 1.12 cm), well
    // within its radius of 10 cm
    pendulum_hits_the_floor_and_stays_above_it(
        "law = \"linear\"\nstiffness = 1e5\ndamping = 20.0",
        0.02,
        "spatial-floor-penalty",
    );
}

/// `jounce check` of the doubled shoulder names the redundant rows as
/// consistent, lists the formulations that run the model (all but joint)
/// and those its integrator runs; each listed formulation runs it.
#[test]
fn check_lists_the_formulations_that_run_the_doubled_shoulder() {
    let model =
        jounce_model::from_str(&double_pendulum(true, 0.0, "augmented"), "two.toml").unwrap();
    let report = jounce::check::check_report(&model).expect("check passes");
    let text = &report.text;
    println!("{text}");
    assert!(
        text.contains("joint 'shoulder_again' (x): consistent")
            && text.contains("depends on: +1.0000 joint 'shoulder' (x)"),
        "{text}"
    );
    let line = text
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("formulations that can run this model: ")
        })
        .expect("the formulations line");
    let listed: Vec<&str> = line.split(", ").collect();
    let expected: Vec<&str> = jounce_model::FormulationKind::ALL
        .into_iter()
        .filter(|k| k.runs_redundant())
        .map(|k| k.name())
        .collect();
    assert_eq!(listed, expected, "{text}");
    let by_dop853 = text
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("of those, integrator 'dop853' runs: ")
        })
        .expect("the integrator's line");
    assert_eq!(
        by_dop853, "augmented, partitioning, projection, penalty, state_space",
        "{text}"
    );
    for f in listed {
        let tag = format!("spatial-dp-listed-{f}");
        let (_, _, s) = completed(run(&double_pendulum(true, 0.0, f), &tag), &tag);
        assert_eq!(s.status, "completed", "{f}");
    }
}

/// The spatial twin of the planar bug itself (`redundancy_capabilities.rs`):
/// a ball of radius 0.25 m dropped from z = 2 m on a vertical prismatic
/// guide declared twice onto the ground plane, Newton's impact law with
/// e = 0.8. Under every formulation it bounces (at least three impacts,
/// as many as on one guide), never goes below the plane, rises after the
/// first impact to e² = 0.64 of its first drop (apex above the contact
/// z − r + v_z²/(2g), to 1e-6), and moves as on one guide.
#[test]
fn a_ball_on_a_doubled_guide_bounces_on_the_floor_and_stays_above_it() {
    let guide = |name: &str| {
        format!(
            "[[joints]]\nname = \"{name}\"\ntype = \"prismatic\"\nbody1 = \"ground\"\n\
             point1 = [0.0, 0.0, 0.0]\nbody2 = \"ball\"\npoint2 = [0.0, 0.0, 0.0]\n\
             axis = [0.0, 0.0, 1.0]\n\n"
        )
    };
    let ball = |doubled: bool, f: &str| {
        let mut s = String::from(
            "[model]\nname = \"ball on a guide\"\nspace = \"spatial\"\n\
             gravity = [0.0, 0.0, -9.81]\n\n[[bodies]]\nname = \"ball\"\nmass = 1.0\n\
             inertia = [0.025, 0.025, 0.025]\nposition = [0.0, 0.0, 2.0]\n\n",
        );
        s += &guide("guide");
        if doubled {
            s += &guide("guide_again");
        }
        s += "[[contacts]]\nname = \"floor\"\ntype = \"sphere_plane\"\nbody1 = \"ground\"\n\
              point1 = [0.0, 0.0, 0.0]\nnormal1 = [0.0, 0.0, 1.0]\nbody2 = \"ball\"\n\
              radius2 = 0.25\nlaw = \"impact\"\nrestitution = 0.8\n\n[settings]\n";
        let (method, step) = method_for(f);
        with_settings(&s, "", f, method, step, 3.0)
    };
    let cols: Vec<String> = ["x", "y", "z", "qw", "qx", "qy", "qz"]
        .iter()
        .map(|c| format!("ball.{c}"))
        .collect();
    for (f, _, _) in RUNS {
        let name = format!("spatial-guide-{f}");
        let (a, ea, _) = completed(run(&ball(false, f), &format!("{name}-one")), &name);
        let (b, eb, _) = completed(run(&ball(true, f), &format!("{name}-two")), &name);
        let min_gap = b
            .col("floor.gap")
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        let (z, vz) = (b.col("ball.z"), b.col("ball.vz"));
        let rebound = (1..z.len())
            .find(|&i| vz[i - 1] < 0.0 && vz[i] > 0.0)
            .map(|i| z[i] - 0.25 + vz[i] * vz[i] / (2.0 * 9.81));
        let d = last_row_difference(&a, &b, &cols);
        println!(
            "{name}: {eb} impacts ({ea} on one guide), min gap {min_gap:.2e} m, first rebound \
             apex {rebound:?} m (0.64 × 1.75 = 1.12), positions differ by {d:.2e}"
        );
        assert!(eb >= 3, "{name}: {eb} impacts");
        assert_eq!(ea, eb, "{name}: other impacts than on one guide");
        assert!(min_gap >= -1e-6, "{name}: through the floor: gap {min_gap}");
        let apex = rebound.unwrap_or_else(|| panic!("{name}: never bounced"));
        assert!((apex - 0.64 * 1.75).abs() < 1e-6, "{name}: apex {apex}");
        let bound = if f == "penalty" { PENALTY_BOUND } else { 1e-8 };
        assert!(d <= bound, "{name}: positions differ by {d:e} > {bound:e}");
    }
}

/// A second motor on the spatial slider-crank's hinge that agrees with
/// the first at t = 0 in angle and speed, θ = 2π t + 0.5 t² against 2π t,
/// parts from it later: its row is consistent at the start and
/// inconsistent within t_end. `run` and `check` refuse it before
/// integrating, naming the driver, as for a planar model (its drivers
/// sampled over the run's interval); the same motor declared twice runs
/// and moves as one.
#[test]
fn a_second_motor_that_parts_from_the_first_later_is_refused_before_integrating() {
    let base = std::fs::read_to_string(repo("examples/spatial_slider_crank.toml")).unwrap();
    let motor = |c2: f64| {
        format!(
            "[[drivers]]\nname = \"crank_drive_again\"\ntype = \"joint\"\njoint = \"hinge\"\n\
             function = {{ type = \"polynomial\", coefficients = [0.0, 6.283185307179586, {c2:?}] }}\n\n"
        )
    };
    let text = |c2: f64| with_settings(&base, &motor(c2), "augmented", "dop853", None, 1.0);
    match run(&text(0.5), "spatial-sc-motor-late") {
        Outcome::Refused(why) => assert!(
            why.contains("inconsistent redundant constraint")
                && why.contains("driver 'crank_drive_again': inconsistent"),
            "{why}"
        ),
        Outcome::Completed { .. } => panic!("a motor parting from the first ran"),
        Outcome::Failed(why) => panic!("refused only while integrating: {why}"),
    }
    let model = jounce_model::from_str(&text(0.5), "late.toml").unwrap();
    let why = jounce::check::check_report(&model)
        .expect_err("check refuses")
        .to_string();
    assert!(
        why.contains("driver 'crank_drive_again': inconsistent"),
        "{why}"
    );
    // the same motor twice: consistent, and the slider where one motor
    // puts it
    let one = with_settings(&base, "", "augmented", "dop853", None, 1.0);
    let (a, _, _) = completed(run(&one, "spatial-sc-motor-one"), "one motor");
    let (b, _, _) = completed(run(&text(0.0), "spatial-sc-motor-two"), "two motors");
    let cols: Vec<String> = ["crank", "rod", "slider"]
        .iter()
        .flat_map(|b| ["x", "y", "z"].map(|c| format!("{b}.{c}")))
        .collect();
    let d = last_row_difference(&a, &b, &cols);
    println!("the same motor twice: positions at t = 1 s differ by {d:.2e}");
    assert!(d <= 1e-8, "positions differ by {d:e}");
}
