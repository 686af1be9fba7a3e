//! Issue 9: output a user can trust. Each test reproduces one report of
//! the issue (a silent blow-up, a counter that lied, misleading advice,
//! stale results, a `check` that did not check the run, jargon) and
//! asserts the status, counter or message a user now gets.

use crate::support;

use std::path::Path;

use jounce::run::{apply_overrides, run_model, Overrides};
use jounce::RunError;
use jounce_model::{load_file, Model, OnCheckFailure};
use support::{repo, scratch};

fn model(rel: &str) -> Model {
    load_file(&repo(rel)).expect("shipped model loads")
}

fn with(m: &mut Model, o: Overrides) {
    apply_overrides(m, &o).expect("valid overrides");
}

fn method_step(method: &str, step: f64) -> Overrides {
    Overrides {
        method: Some(method.into()),
        step: Some(step),
        ..Overrides::default()
    }
}

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

fn failure(r: Result<jounce_io::RunSummary, RunError>) -> String {
    match r {
        Ok(s) => panic!("the run must fail, it reported {}", s.status),
        Err(e) => e.to_string(),
    }
}

/// rk4 at h = 0.05 on the damped quarter-car used to report "completed"
/// with body.y = -2e112 m. Its wheel-hop mode (|λ| = 73 1/s) puts hλ
/// outside rk4's stability region: refused before the run, naming the
/// mode, the amplification and a stable step.
#[test]
fn rk4_beyond_its_stability_limit_is_refused_with_the_mode_and_a_stable_step() {
    let dir = scratch("trust-rk4");
    let mut m = model("examples/quarter_car.toml");
    with(&mut m, method_step("rk4", 0.05));
    let err = failure(run_model(&m, &dir, None));
    assert!(err.contains("beyond the stability limit of rk4"), "{err}");
    assert!(err.contains("|λ| = 73.09"), "{err}");
    // rk4's limit on this mode: |R(hλ)| = 1 at h ≈ 0.0397 s
    assert!(err.contains("a step below about 3.9"), "{err}");
    let s = summary(&dir);
    assert_eq!(s["status"], "failed");
    assert!(!dir.join("timeseries.csv").exists());
    // the step it proposes does run, and the answer is the static
    // equilibrium the model documents (body at 0.63617 m)
    let mut m = model("examples/quarter_car.toml");
    with(&mut m, method_step("rk4", 0.039));
    let s = run_model(&m, &dir, None).expect("a stable step runs");
    assert_eq!(s.status, "completed");
    let csv = std::fs::read_to_string(dir.join("timeseries.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "body.y").unwrap();
    let last: Vec<f64> = csv
        .lines()
        .last()
        .unwrap()
        .split(',')
        .map(|x| x.parse().unwrap())
        .collect();
    assert!((last[col] - 0.63617).abs() < 2e-3, "body.y = {}", last[col]);
}

/// euler at h = 0.01 oscillated ±0.75 m around the static position and
/// reported "completed": forward Euler amplifies the lightly damped
/// wheel-hop mode by 1.07 per step, 1.6e9 times over the run.
#[test]
fn euler_that_would_oscillate_is_refused_and_with_warn_the_run_says_it_blew_up() {
    let dir = scratch("trust-euler");
    let mut m = model("examples/quarter_car.toml");
    with(&mut m, method_step("euler", 0.01));
    let err = failure(run_model(&m, &dir, None));
    assert!(err.contains("beyond the stability limit of euler"), "{err}");
    assert_eq!(summary(&dir)["status"], "failed");
    // a user who insists gets the run, completed, with two loud warnings:
    // the stability verdict and the energy balance that failed during it
    m.settings.checks.on_failure = OnCheckFailure::Warn;
    let s = run_model(&m, &dir, None).expect("warn runs to the end");
    assert_eq!(s.status, "completed");
    assert!(
        s.diagnostics
            .iter()
            .any(|d| d.starts_with("stability warning")),
        "{:?}",
        s.diagnostics
    );
    assert!(
        s.diagnostics
            .iter()
            .any(|d| d.contains("the energy grew by")),
        "{:?}",
        s.diagnostics
    );
}

/// A fixed multistep formula is checked before the run like a
/// Runge–Kutta method (the largest root of its characteristic equation):
/// ab2 at h = 0.05 s on the quarter-car is refused, at 0.005 s it runs.
#[test]
fn a_fixed_multistep_step_is_checked_too() {
    let dir = scratch("trust-ab2");
    let mut m = model("examples/quarter_car.toml");
    with(&mut m, method_step("ab2", 0.05));
    let err = failure(run_model(&m, &dir, None));
    assert!(err.contains("beyond the stability limit of ab2"), "{err}");
    let mut m = model("examples/quarter_car.toml");
    with(&mut m, method_step("ab2", 0.005));
    assert_eq!(run_model(&m, &dir, None).unwrap().status, "completed");
}

/// A blow-up the check at the start cannot see — the stiff contact the
/// dropped block lands on is slack at t = 0 — is caught while it happens
/// by the energy balance: the model is passive (gravity, a spring), so its
/// energy cannot grow; the rows up to that point are kept.
#[test]
fn a_blow_up_during_the_run_fails_it_by_the_energy_balance() {
    let dir = scratch("trust-contact");
    let m = model("tests/data/dropped_block.toml");
    let err = failure(run_model(&m, &dir, None));
    assert!(err.contains("solution diverged at t = "), "{err}");
    assert!(err.contains("the energy grew by"), "{err}");
    let s = summary(&dir);
    assert_eq!(s["status"], "failed");
    // it lands at t = sqrt(2 * 0.4 / 9.81) = 0.286 s and is stopped within
    // a few steps
    let t_reached = s["t_reached"].as_f64().unwrap();
    assert!(t_reached > 0.28 && t_reached < 0.30, "t = {t_reached}");
    let rows = std::fs::read_to_string(dir.join("timeseries.csv"))
        .unwrap()
        .lines()
        .count();
    assert!(rows > 280, "{rows} rows");
    // a step that resolves the contact runs, with the energy kept
    let mut m = model("tests/data/dropped_block.toml");
    with(
        &mut m,
        Overrides {
            step: Some(1e-4),
            ..Overrides::default()
        },
    );
    let s = run_model(&m, &dir, None).unwrap();
    assert_eq!(s.status, "completed");
    assert!(s.accuracy.max_relative_energy_error < 1e-2);
}

/// Accurate runs of models that do gain energy (a step force doing work,
/// a driver) are not mistaken for blow-ups: the bound includes the work
/// put in.
#[test]
fn accurate_runs_with_work_put_in_pass_the_energy_balance() {
    for (file, method) in [
        ("examples/studies/s3_b2e2_step.toml", "radau5"),
        ("examples/slider_crank.toml", "dopri5"),
        ("examples/quarter_car.toml", "dopri5"),
        ("examples/studies/s1_k1_1e2_k2_1e2.toml", "dop853"),
    ] {
        let dir = scratch("trust-ok");
        let mut m = model(file);
        with(
            &mut m,
            Overrides {
                method: Some(method.into()),
                ..Overrides::default()
            },
        );
        let s = run_model(&m, &dir, None).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(s.status, "completed", "{file}");
        assert!(
            !s.diagnostics.iter().any(|d| d.contains("check failed")),
            "{file}: {:?}",
            s.diagnostics
        );
    }
}

/// Constraint drift past 1 % of the model's size fails the run: the
/// augmented formulation without stabilisation at a loose tolerance lets
/// the four-bar's joints come apart.
#[test]
fn constraint_drift_past_the_threshold_fails_the_run() {
    let dir = scratch("trust-drift");
    let mut m = model("examples/four_bar.toml");
    m.settings.formulation.kind = jounce_model::FormulationKind::Augmented;
    m.settings.formulation.baumgarte_alpha = 0.0;
    m.settings.formulation.baumgarte_beta = 0.0;
    // a tiny threshold stands in for a long, loose run
    m.settings.checks.max_constraint_violation = Some(1e-12);
    let err = failure(run_model(&m, &dir, None));
    assert!(
        err.contains("the constraint violation ‖Φ‖∞ =") && err.contains("drifted off the joints"),
        "{err}"
    );
    assert_eq!(summary(&dir)["status"], "failed");
}

/// Fixed-step explicit methods count their steps and stop at the budget:
/// `rk4 --step 1e-5 --max-steps 100` ran 100 000 steps; with 50 the
/// message said 51 and "is the problem stiff?".
#[test]
fn fixed_steps_are_counted_and_the_user_budget_is_honoured_and_named() {
    let dir = scratch("trust-budget");
    let mut m = model("examples/simple_pendulum.toml");
    with(
        &mut m,
        Overrides {
            method: Some("rk4".into()),
            step: Some(1e-3),
            t_end: Some(0.5),
            ..Overrides::default()
        },
    );
    let s = run_model(&m, &dir, None).unwrap();
    assert_eq!(s.work.steps_accepted, 500);
    assert_eq!(s.work.rhs_evaluations, 4 * 500 + 1);

    let mut m = model("examples/simple_pendulum.toml");
    with(
        &mut m,
        Overrides {
            max_steps: Some(100),
            ..method_step("rk4", 1e-5)
        },
    );
    let err = failure(run_model(&m, &dir, None));
    let s = summary(&dir);
    assert_eq!(s["work"]["steps_accepted"], 100, "{err}");
    assert!(
        err.contains("step budget used up: 100 steps")
            && err.contains("the step budget you set (max_steps = 100)"),
        "{err}"
    );
    assert!(!err.contains("stiff"), "{err}");
}

/// backward_euler at rtol 1e-9 exhausted the budget with "try an implicit
/// method" — it is one. The cause is first order at a tight tolerance.
#[test]
fn low_order_at_a_tight_tolerance_is_named_as_the_cause() {
    let dir = scratch("trust-order");
    let mut m = model("examples/simple_pendulum.toml");
    with(
        &mut m,
        Overrides {
            method: Some("backward_euler".into()),
            rtol: Some(1e-9),
            atol: Some(1e-12),
            ..Overrides::default()
        },
    );
    // the default budget, scaled down so that the test is quick; not set
    // by the user
    m.settings.integrator.max_steps = 2000;
    assert!(!m.settings.integrator.max_steps_set);
    let err = failure(run_model(&m, &dir, None));
    assert!(
        err.contains("backward_euler is of order 1 and rtol = 1e-9 is tight for it")
            && err.contains("low order, not stiffness"),
        "{err}"
    );
    assert!(!err.contains("try an implicit method"), "{err}");
}

/// Stiffness found by Hairer's test is named as the cause when the
/// default budget runs out.
#[test]
fn stiffness_is_named_when_the_test_detected_it() {
    let dir = scratch("trust-stiff");
    let mut m = model("examples/studies/s3_b2e4_step.toml");
    with(
        &mut m,
        Overrides {
            method: Some("dopri5".into()),
            ..Overrides::default()
        },
    );
    m.settings.integrator.max_steps = 3000;
    let err = failure(run_model(&m, &dir, None));
    assert!(
        err.contains("the problem is stiff: Hairer's stiffness test of dopri5 fired"),
        "{err}"
    );
}

/// An explicit run whose stiffness test fired stops as soon as its pace
/// shows that the default budget would run out, with the advice, instead
/// of spending the whole budget first (issue 31: dopri5 on a spring of
/// 2e14 N/m ran its 10⁶ steps before saying "stiff").
#[test]
fn an_explicit_run_on_a_stiff_model_stops_early_with_the_advice() {
    let dir = scratch("trust-stiff-early");
    let text = std::fs::read_to_string(repo("examples/studies/s3_b2e4_step.toml"))
        .unwrap()
        .replace("stiffness = 1e8", "stiffness = 2e14");
    let mut m = jounce_model::from_str(&text, "stiff_spring.toml").unwrap();
    with(
        &mut m,
        Overrides {
            method: Some("dopri5".into()),
            ..Overrides::default()
        },
    );
    assert_eq!(m.settings.integrator.max_steps, 1_000_000);
    let err = failure(run_model(&m, &dir, None));
    assert!(
        err.contains("stopped early") && err.contains("an implicit method (radau5"),
        "{err}"
    );
    let s = summary(&dir);
    let steps = s["work"]["steps_accepted"].as_u64().unwrap()
        + s["work"]["steps_rejected"].as_u64().unwrap();
    // measured: 64 084 steps (10 000 after the test fired at t = 2.0009 s)
    assert!(steps < 100_000, "{steps} steps before stopping");
}

/// A run that fails before integrating used to leave the previous run's
/// "completed" summary behind.
#[test]
fn a_run_that_fails_before_integrating_leaves_no_stale_results() {
    let dir = scratch("trust-stale");
    let m = model("examples/simple_pendulum.toml");
    run_model(&m, &dir, None).expect("runs");
    assert_eq!(summary(&dir)["status"], "completed");
    assert!(dir.join("timeseries.csv").exists());
    for bad in [
        // an unknown method
        Overrides {
            method: Some("rk44".into()),
            ..Overrides::default()
        },
        // a method that needs a step
        Overrides {
            method: Some("rk4".into()),
            ..Overrides::default()
        },
    ] {
        let mut m = model("examples/simple_pendulum.toml");
        with(&mut m, bad);
        let err = failure(run_model(&m, &dir, None));
        let s = summary(&dir);
        assert_eq!(s["status"], "failed");
        assert_eq!(s["error"].as_str().unwrap(), err);
        assert!(
            !dir.join("timeseries.csv").exists(),
            "an older run's rows must not look current"
        );
    }
}

/// `check` validates what `run` uses: the output size is refused above
/// the row budget (1e12 rows filled the disk), `--force` lets it through.
#[test]
fn the_output_size_is_checked_before_the_run() {
    let dir = scratch("trust-rows");
    let mut m = model("examples/simple_pendulum.toml");
    m.settings.t_end = 1e6;
    m.settings.output_interval = 1e-6;
    let err = jounce::check::check_model(&m).unwrap_err().to_string();
    assert!(
        err.contains("1.000e12 output rows") && err.contains("--force"),
        "{err}"
    );
    let err = failure(run_model(&m, &dir, None));
    assert!(err.contains("output rows"), "{err}");
    with(
        &mut m,
        Overrides {
            force: true,
            ..Overrides::default()
        },
    );
    assert!(jounce::validate::validate_run_settings(&m).is_ok());
}

/// The output budget counts bytes too (issue 31: 5e6 rows of a wide model
/// wrote 1.3 GB within the row budget): the estimate rows × columns ×
/// bytes per value is refused above `max_output_bytes`, naming the
/// estimate, the budget and the settings to change; `--force` lets it
/// through, a raised budget too.
#[test]
fn the_output_size_in_bytes_is_checked_before_the_run() {
    let mut m = model("examples/parallelogram_chain.toml");
    m.settings.output_interval = 1e-4;
    m.settings.t_end = 500.0; // 5e6 rows, within the 1e7-row budget
    let columns = jounce::validate::output_columns(&m);
    assert!(columns >= 30, "a wide model: {columns} columns");
    let err = jounce::check::check_model(&m).unwrap_err().to_string();
    assert!(
        err.contains("bytes of timeseries.csv")
            && err.contains("budget of 1000000000 bytes")
            && err.contains("settings.checks.max_output_bytes")
            && err.contains("settings.output_interval")
            && err.contains("--force"),
        "{err}"
    );
    let mut raised = m.clone();
    raised.settings.checks.max_output_bytes = 100_000_000_000;
    assert!(jounce::validate::validate_run_settings(&raised).is_ok());
    with(
        &mut m,
        Overrides {
            force: true,
            ..Overrides::default()
        },
    );
    assert!(jounce::validate::validate_run_settings(&m).is_ok());
}

/// `check` refuses a fixed step beyond the stability limit, like `run`.
#[test]
fn check_refuses_an_unstable_fixed_step() {
    let mut m = model("examples/quarter_car.toml");
    with(&mut m, method_step("RK4", 0.05));
    let err = jounce::check::check_model(&m).unwrap_err().to_string();
    assert!(err.contains("beyond the stability limit of rk4"), "{err}");
    with(&mut m, method_step("rk4", 0.02));
    let report = jounce::check::check_model(&m).unwrap();
    assert!(
        report.contains("rk4 integrator with fixed step 0.02 s"),
        "{report}"
    );
}

/// hht with partitioning answered "OdeProblem::as_second_order returned
/// None; wrap a SecondOrderProblem in FirstOrderForm".
#[test]
fn an_unsupported_pairing_is_explained_in_the_users_words() {
    let mut m = model("examples/simple_pendulum.toml");
    with(
        &mut m,
        Overrides {
            method: Some("hht".into()),
            formulation: Some("partitioning".into()),
            ..Overrides::default()
        },
    );
    let err = jounce::check::check_model(&m).unwrap_err().to_string();
    assert!(
        err.contains("integrator 'hht' cannot run formulation 'partitioning'")
            && err.contains("index3"),
        "{err}"
    );
    assert!(
        !err.contains("OdeProblem") && !err.contains("FirstOrderForm"),
        "{err}"
    );
}

/// The formulation and fixed step a method needs to run the double
/// pendulum: the first-order ODE of `augmented` for most, the index-3
/// form for the structural family (wilson and collocation: the
/// second-order form of `augmented`), a step for the fixed-step ones.
fn setup_for(info: &jounce_integrate::method::MethodInfo) -> Overrides {
    use jounce_integrate::ProblemForm;
    let formulation = if info.accepts().contains(&ProblemForm::FirstOrder)
        || info.accepts().contains(&ProblemForm::SecondOrder)
            && !info
                .accepts()
                .contains(&ProblemForm::ConstrainedSecondOrder)
    {
        "augmented"
    } else {
        "index3"
    };
    Overrides {
        method: Some(info.name.into()),
        formulation: Some(formulation.into()),
        step: (!info.adaptive).then_some(1e-3),
        t_end: Some(0.5),
        rtol: Some(1e-6),
        atol: Some(1e-8),
        ..Overrides::default()
    }
}

/// Every method counts its steps and stops at the budget, never beyond.
#[test]
fn every_method_honours_the_step_budget() {
    for entry in jounce_integrate::method::all() {
        let dir = scratch("trust-every-budget");
        let mut m = model("examples/double_pendulum.toml");
        with(
            &mut m,
            Overrides {
                max_steps: Some(20),
                t_end: Some(10.0),
                ..setup_for(&entry.info)
            },
        );
        let err = match run_model(&m, &dir, None) {
            Ok(s) => panic!(
                "{}: completed in {} steps under a budget of 20",
                entry.info.name, s.work.steps_accepted
            ),
            Err(e) => e.to_string(),
        };
        let s = summary(&dir);
        let steps = s["work"]["steps_accepted"].as_u64().unwrap()
            + s["work"]["steps_rejected"].as_u64().unwrap();
        assert!(
            (1..=20).contains(&steps),
            "{}: {steps} steps under a budget of 20: {err}",
            entry.info.name
        );
        assert!(
            err.contains("the step budget you set (max_steps = 20)"),
            "{}: {err}",
            entry.info.name
        );
        assert!(
            s["work"]["rhs_evaluations"].as_u64().unwrap() > 0,
            "{}: no evaluations counted",
            entry.info.name
        );
    }
}

/// Identical input gives byte-identical output, timing aside, for every
/// method family.
#[test]
fn identical_input_gives_identical_output_for_every_family() {
    use jounce_integrate::method::Family;
    let mut seen = Vec::new();
    for entry in jounce_integrate::method::all() {
        // one or two members per family, and every index-3 driver
        let f = entry.info.family;
        let extra = matches!(entry.info.name, "bdf" | "radau5" | "newmark" | "rk4");
        if seen.contains(&f) && !extra {
            continue;
        }
        seen.push(f);
        let mut runs = Vec::new();
        for _ in 0..2 {
            let dir = scratch("trust-determinism");
            let mut m = model("examples/double_pendulum.toml");
            with(&mut m, setup_for(&entry.info));
            run_model(&m, &dir, None).unwrap_or_else(|e| panic!("{}: {e}", entry.info.name));
            let csv = std::fs::read(dir.join("timeseries.csv")).unwrap();
            let mut s = summary(&dir);
            s["work"]["cpu_seconds"] = 0.into();
            s["work"]["wall_seconds"] = 0.into();
            runs.push((csv, s.to_string()));
        }
        assert!(
            runs[0].0 == runs[1].0,
            "{}: timeseries.csv differs",
            entry.info.name
        );
        assert_eq!(runs[0].1, runs[1].1, "{}: summary differs", entry.info.name);
    }
    for f in [
        Family::ExplicitRk,
        Family::Multistep,
        Family::ImplicitRk,
        Family::Rosenbrock,
        Family::Structural,
        Family::Exponential,
    ] {
        assert!(seen.contains(&f), "{f:?} not covered");
    }
}
