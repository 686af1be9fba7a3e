//! The run stops at the breakpoints of the model's time functions unless
//! `settings.integrator.stop_at_breakpoints = false` (or `--no-breakpoints`),
//! and both modes of studies.md S3 / peers P-B (step force at t = 2) complete
//! with radau5 and bdf.

use std::path::Path;

use jounce::run::{apply_overrides, run_model, solver_options, Overrides};

fn s3_model(extra: &str) -> jounce_model::Model {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/studies/s3_b2e2_step.toml");
    let text = std::fs::read_to_string(&path).unwrap() + extra;
    jounce_model::from_str(&text, "s3_b2e2_step.toml").unwrap()
}

#[test]
fn breakpoints_are_stop_times_unless_switched_off() {
    let m = s3_model("");
    assert!(m.settings.integrator.stop_at_breakpoints);
    let o = solver_options(&m).unwrap();
    assert_eq!(o.breakpoints, vec![2.0]);
    assert!(o.stop_at_breakpoints);

    let m = s3_model("stop_at_breakpoints = false\n");
    assert!(!m.settings.integrator.stop_at_breakpoints);
    assert!(!solver_options(&m).unwrap().stop_at_breakpoints);

    let mut m = s3_model("");
    apply_overrides(
        &mut m,
        &Overrides {
            no_breakpoints: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(!solver_options(&m).unwrap().stop_at_breakpoints);
}

#[test]
fn a_setting_that_is_not_a_boolean_is_refused() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/studies/s3_b2e2_step.toml");
    let text = std::fs::read_to_string(&path).unwrap() + "stop_at_breakpoints = 1\n";
    let e = jounce_model::from_str(&text, "s3.toml").unwrap_err();
    assert!(
        e.to_string().contains("stop_at_breakpoints"),
        "{}",
        e.to_string()
    );
}

#[test]
fn the_step_force_completes_in_both_modes() {
    let out = std::env::temp_dir().join(format!("jounce-breakpoints-{}", std::process::id()));
    for method in ["radau5", "bdf"] {
        let mut steps = Vec::new();
        for no_breakpoints in [false, true] {
            let mut m = s3_model("");
            apply_overrides(
                &mut m,
                &Overrides {
                    method: Some(method.into()),
                    no_breakpoints,
                    ..Default::default()
                },
            )
            .unwrap();
            let s = run_model(&m, &out, None)
                .unwrap_or_else(|e| panic!("{method} no_breakpoints={no_breakpoints}: {e}"));
            assert_eq!(s.status, "completed");
            // the new equilibrium x = 0.6 m is reached
            let series = std::fs::read_to_string(out.join("timeseries.csv")).unwrap();
            let last = series.lines().last().unwrap();
            let x: f64 = last.split(',').nth(1).unwrap().parse().unwrap();
            assert!((x - 0.6).abs() < 1e-6, "{method}: x(4) = {x}");
            steps.push(s.work.steps_accepted);
        }
        // the setting takes effect: the formulation's own breakpoints are
        // ignored as well, and the naive run finds the jump by itself
        assert_ne!(steps[0], steps[1], "{method}: {steps:?}");
    }
    let _ = std::fs::remove_dir_all(&out);
}
