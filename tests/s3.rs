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

/// The step model at damping `b` with `extra` appended to its
/// `[settings.integrator]` and `method`; run into a scratch directory.
fn run_s3(
    b: &str,
    shape: &str,
    method: &str,
    extra: &str,
) -> (jounce_io::RunSummary, support::Series) {
    let text =
        s3_text(b, shape).replace("method = \"radau5\"", &format!("method = \"{method}\"")) + extra;
    let model = jounce_model::from_str(&text, &format!("s3_b{b}_{shape}.toml")).unwrap();
    let out = support::scratch(&format!("s3-{b}-{shape}-{method}"));
    let s = match jounce::run::run_model(&model, &out, false) {
        Ok(s) => s,
        Err(jounce::error::RunError::Integration { summary, .. }) => *summary,
        Err(e) => panic!("{b} {shape} {method}: {e}"),
    };
    let series = support::Series::read(&out.join("timeseries.csv"));
    let _ = std::fs::remove_dir_all(&out);
    (s, series)
}

#[test]
fn a_step_across_a_breakpoint_the_run_may_not_stop_at_is_reported() {
    // told of the jump: no step crosses it, no warning
    let (s, _) = run_s3("2e4", "step", "radau5", "");
    assert_eq!(s.status, "completed");
    assert!(
        !s.diagnostics
            .iter()
            .any(|d| d.contains("breakpoint warning")),
        "{:?}",
        s.diagnostics
    );
    // not told: the step that crosses t = 2 is named, with the element
    for method in ["radau5", "bdf", "sdirk2"] {
        let (s, _) = run_s3("2e4", "step", method, "breakpoints = false\n");
        let w = s
            .diagnostics
            .iter()
            .find(|d| d.starts_with("breakpoint warning"))
            .unwrap_or_else(|| panic!("{method}: {:?}", s.diagnostics));
        assert!(
            w.contains("breakpoint t = 2 s of force 'load' (fx)") && w.contains("accepted step ["),
            "{method}: {w}"
        );
        // the step named contains t = 2
        let inside = w.split_once("accepted step [").unwrap().1;
        let (t0, rest) = inside.split_once(", ").unwrap();
        let t1 = rest.split_once(']').unwrap().0;
        let (t0, t1): (f64, f64) = (t0.parse().unwrap(), t1.parse().unwrap());
        assert!(t0 < 2.0 && 2.0 < t1, "{method}: [{t0}, {t1}]");
        // a failed run says so in its error too
        if s.status == "failed" {
            assert!(
                s.error
                    .as_deref()
                    .unwrap_or("")
                    .contains("crossed the breakpoint t = 2 s"),
                "{method}: {:?}",
                s.error
            );
        }
    }
}
