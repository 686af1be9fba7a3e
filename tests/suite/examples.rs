//! Every shipped example runs, and its physics is checked.

use crate::support;

use jounce::run::Overrides;
use support::{repo, run_example};

/// Rising zero crossings of a sampled signal, by linear interpolation.
fn rising_crossings(t: &[f64], x: &[f64]) -> Vec<f64> {
    let mut out = Vec::new();
    for i in 1..x.len() {
        if x[i - 1] < 0.0 && x[i] >= 0.0 {
            let s = x[i - 1] / (x[i - 1] - x[i]);
            out.push(t[i - 1] + s * (t[i] - t[i - 1]));
        }
    }
    out
}

#[test]
fn simple_pendulum_has_the_small_angle_period() {
    let (s, ts) = run_example(
        "examples/simple_pendulum.toml",
        Overrides::default(),
        "pendulum",
    );
    assert_eq!(s.status, "completed");
    let c = rising_crossings(ts.col("t"), ts.col("bob.x"));
    assert!(c.len() >= 4, "crossings {c:?}");
    let period = (c[c.len() - 1] - c[0]) / (c.len() - 1) as f64;
    let exact = 2.0 * std::f64::consts::PI * (1.0f64 / 9.81).sqrt();
    assert!(
        ((period - exact) / exact).abs() < 1e-3,
        "period {period} vs 2 pi sqrt(L/g) = {exact}"
    );
    assert!(s.accuracy.max_relative_energy_error < 1e-6);
}

#[test]
fn double_pendulum_conserves_energy() {
    let (s, _) = run_example("examples/double_pendulum.toml", Overrides::default(), "dp");
    assert!(s.accuracy.energy_conserved_by_model);
    assert!(
        s.accuracy.max_relative_energy_error < 1e-6,
        "{}",
        s.accuracy.max_relative_energy_error
    );
    assert!(s.accuracy.max_position_violation < 1e-6);
}

#[test]
fn slider_crank_follows_closed_form_kinematics() {
    let (s, ts) = run_example("examples/slider_crank.toml", Overrides::default(), "sc");
    assert_eq!(s.degrees_of_freedom, 0);
    let (r, l) = (0.1f64, 0.3f64);
    let mut worst = 0.0f64;
    for (t, x) in ts.col("t").iter().zip(ts.col("slider.x")) {
        let th = 2.0 * std::f64::consts::PI * t;
        let exact = r * th.cos() + (l * l - r * r * th.sin().powi(2)).sqrt();
        worst = worst.max((x - exact).abs());
    }
    assert!(worst < 1e-6, "slider position error {worst}");
    // the motor's multiplier (driving torque) is reported and not identically zero
    let lam = ts
        .columns
        .iter()
        .find(|(k, _)| k.starts_with("lambda[") && k.contains("motor"))
        .expect("driver multiplier column");
    assert!(lam.1.iter().any(|v| v.abs() > 1e-3));
}

#[test]
fn four_bar_crank_rotates_fully() {
    let (s, ts) = run_example("examples/four_bar.toml", Overrides::default(), "fourbar");
    assert_eq!(s.degrees_of_freedom, 1);
    let th = ts.col("crank.theta");
    let turned = th.last().unwrap() - th[0];
    assert!(
        turned > 2.0 * std::f64::consts::PI,
        "crank turned only {turned} rad"
    );
    assert!(s.accuracy.max_relative_energy_error < 1e-6);
}

/// The chain of parallelograms passes its singular poses on the right
/// branch: crank angle at t = 10 s within 1e-4 rad of the exact 1-DOF
/// solution 31.621729822777 (pc_model.reference(10), DOP853 at 1e-13).
#[test]
fn parallelogram_chain_keeps_its_branch_through_the_singular_poses() {
    let (s, ts) = run_example(
        "examples/parallelogram_chain.toml",
        Overrides::default(),
        "pchain",
    );
    assert_eq!(s.status, "completed", "{:?}", s.error);
    let theta = *ts.col("crank0.theta").last().unwrap();
    assert!(
        (theta - 31.621_729_822_777).abs() <= 1e-4,
        "crank angle {theta}"
    );
    // generalized-α at ρ∞ = 0.9 dissipates little: measured 2.1e-5
    assert!(s.accuracy.energy_conserved_by_model);
    let e = s.accuracy.max_relative_energy_error;
    assert!(e < 1e-4, "energy error {e:e}");
}

/// Every example model under `examples/` and `examples/studies/` (TOML
/// files and URDF robot descriptions), as paths relative to the repository.
fn example_files() -> Vec<String> {
    let mut files = Vec::new();
    for dir in ["examples", "examples/studies"] {
        for e in std::fs::read_dir(repo(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "toml" || x == "urdf") {
                let rel = p.strip_prefix(repo("")).unwrap().to_str().unwrap();
                files.push(rel.to_string());
            }
        }
    }
    files.sort();
    assert!(files.len() >= 18, "{files:?}");
    files
}

#[test]
fn every_example_runs_as_shipped() {
    for rel in example_files() {
        // the 20 s S1 and 5 s S5 runs are the studies' business; here the
        // first second shows the file runs with its own settings
        let t_end = (rel.contains("s1_") || rel.contains("s5_")).then_some(1.0);
        let (s, ts) = run_example(
            &rel,
            Overrides {
                t_end,
                ..Overrides::default()
            },
            "shipped",
        );
        assert_eq!(s.status, "completed", "{rel}");
        assert!(ts.col("t").len() > 10, "{rel}");
    }
}

/// Conservative examples whose energy DOPRI5 cannot keep within 1e-6 at
/// rtol 1e-9 over the whole run.
///
/// Each has a fast undamped oscillation kept for thousands of periods, and
/// an explicit method's energy error is its numerical dissipation
/// 1 − |R(iωh)|² summed over the steps (proved on S2 test 1b in
/// `crates/jounce-integrate/tests/suite/explicit_energy_dissipation.rs`, where
/// the drift equals that sum to 1e-3). scipy's RK45, the same method, loses
/// the same 7.8e-6 on S2 test 1b and 1.5e-6 on S1 (0, 1e6) in joint
/// coordinates at rtol 1e-9.
///
/// Each entry: (file, t: the error passes 1e-6 at rtol 1e-9 before this
/// time, tol: the tolerance at which the full run keeps it within 1e-6,
/// where a test can afford that run). The test checks both, so the list
/// cannot grow stale.
const DOPRI5_ENERGY_EXCEPTIONS: &[(&str, f64, Option<f64>)] = &[
    // elbow at ~1000 rad/s, ~3200 periods: 3.8e-6 at 1e-9; 4.0e-7 at 1e-10
    ("examples/studies/s1_k1_0_k2_1e6.toml", 20.0, Some(1e-10)),
    // 1.4e-6 at 1e-9; 1.4e-7 at 1e-10
    ("examples/studies/s1_k1_1e6_k2_1e6.toml", 20.0, Some(1e-10)),
    // elbow at ~2e4 rad/s for 20 s (the study's point: an explicit method
    // is the wrong tool here; its Adams code fails). Full run, measured
    // with `jounce run --max-steps`: 4.3e-5 at 1e-9 (4.9 million steps,
    // 58 s), 4.6e-6 at 1e-10 (7.7 million, 93 s): too long for a test.
    // Here: 1e-6 is passed before t = 4 s at 1e-9.
    ("examples/studies/s1_k1_0_k2_1e8.toml", 4.0, None),
    // full run: 1.5e-5 at 1e-9 (5.3 million steps), 1.5e-6 at 1e-10 (8.4
    // million, 90 s)
    ("examples/studies/s1_k1_1e8_k2_1e8.toml", 4.0, None),
    // 714 Hz for 714 periods: 1.3e-5 at 1e-9, 1.3e-6 at 1e-10, 1.5e-7 at 1e-11
    ("examples/studies/s2_test_1b.toml", 1.0, Some(1e-11)),
];

/// Run with Dormand-Prince 5(4) at rtol = atol = `tol` to `t_end` (the
/// model's own when `None`): (conserved by the model?, max relative energy
/// error).
fn dopri5_energy(rel: &str, tol: f64, t_end: Option<f64>) -> (bool, f64) {
    let (s, ts) = run_example(
        rel,
        Overrides {
            method: Some("dopri5".into()),
            rtol: Some(tol),
            atol: Some(tol),
            t_end,
            max_steps: Some(20_000_000),
            ..Overrides::default()
        },
        "energy",
    );
    assert_eq!(s.status, "completed", "{rel}");
    assert!(ts.col("t").len() > 10, "{rel}");
    let e = s.accuracy.max_relative_energy_error;
    println!(
        "{rel}: dopri5 at rtol = atol = {tol:e} to t = {}: max relative energy error {e:.3e}, {} steps",
        s.t_reached, s.work.steps_accepted
    );
    (s.accuracy.energy_conserved_by_model, e)
}

/// The foundation criterion: conservative examples keep relative energy
/// error below 1e-6 with Dormand-Prince at rtol 1e-9, over their full
/// time span; the exceptions above are checked instead for what they
/// claim.
#[test]
fn conservative_examples_keep_energy_with_dopri5() {
    let mut conservative = 0;
    for rel in example_files() {
        // its singular poses break every ODE formulation (issue 10): it is
        // run with its own method, energy included, by
        // parallelogram_chain_keeps_its_branch_through_the_singular_poses
        if rel == "examples/parallelogram_chain.toml" {
            continue;
        }
        if DOPRI5_ENERGY_EXCEPTIONS.iter().any(|(f, ..)| *f == rel) {
            conservative += 1;
            continue;
        }
        let (conserved, e) = dopri5_energy(&rel, 1e-9, None);
        if conserved {
            conservative += 1;
            assert!(e < 1e-6, "{rel}: energy error {e:e} at rtol 1e-9");
        }
    }
    assert!(
        conservative >= 14,
        "only {conservative} conservative examples"
    );
}

fn check_exception(index: usize) {
    let (rel, t_fail, tol) = DOPRI5_ENERGY_EXCEPTIONS[index];
    let (conserved, e) = dopri5_energy(rel, 1e-9, Some(t_fail));
    assert!(conserved, "{rel}");
    assert!(
        e >= 1e-6,
        "{rel} keeps 1e-6 at rtol 1e-9 up to t = {t_fail} ({e:e}): update the exceptions"
    );
    if let Some(tol) = tol {
        let (_, tight) = dopri5_energy(rel, tol, None);
        assert!(
            tight < 1e-6,
            "{rel}: energy error {tight:e} at rtol {tol:e}"
        );
    }
}

#[test]
fn dopri5_energy_exceptions_s1_elbow_1e6() {
    check_exception(0);
    check_exception(1);
}

#[test]
fn dopri5_energy_exception_s1_0_1e8() {
    check_exception(2);
}

#[test]
fn dopri5_energy_exception_s1_1e8_1e8() {
    check_exception(3);
}

#[test]
fn dopri5_energy_exception_s2_test_1b() {
    check_exception(4);
}
