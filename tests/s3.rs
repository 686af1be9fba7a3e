//! studies.md S3 (termeer 1996, tests 2a–2c): a stiff oscillator (m = 1,
//! k = 1e8, b ∈ {2e2, 2e3, 2e4}) under a force switched on at t = 2 s, as
//! a step, an arctan and a cycloidal ramp; with the integrator told of the
//! jump (breakpoints) and not.

mod support;

use std::path::Path;

use jounce::run::solver_options;

fn s3_text(b: &str, shape: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("examples/studies/s3_b{b}_{shape}.toml"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn breakpoints_false_and_its_alias_reach_the_integrator() {
    let text = s3_text("2e2", "step");
    for (extra, on) in [
        ("", true),
        ("breakpoints = false\n", false),
        ("breakpoints = true\n", true),
        ("stop_at_breakpoints = false\n", false),
        ("breakpoints = false\nstop_at_breakpoints = false\n", false),
    ] {
        let m = jounce_model::from_str(&(text.clone() + extra), "s3.toml").unwrap();
        assert_eq!(m.settings.integrator.stop_at_breakpoints, on, "{extra}");
        let o = solver_options(&m).unwrap();
        assert_eq!(o.stop_at_breakpoints, on, "{extra}");
        assert_eq!(o.breakpoints, vec![2.0]);
    }
    // two names that disagree are refused, naming both
    let e = jounce_model::from_str(
        &(text + "breakpoints = false\nstop_at_breakpoints = true\n"),
        "s3.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("stop_at_breakpoints") && e.contains("breakpoints = false"),
        "{e}"
    );
}
