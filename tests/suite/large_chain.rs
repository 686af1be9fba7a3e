//! The 1000-link chain of `examples/benchmarks` (issue 8): `jounce check`
//! assembles and analyses it through the sparse path, and a short run
//! completes with the constraints kept.

use crate::support;

use std::process::Command;

use jounce::run::Overrides;
use support::{repo, run_example, scratch};

#[test]
fn check_of_the_1000_link_chain_reports_its_degrees_of_freedom() {
    let out = Command::new(env!("CARGO_BIN_EXE_jounce"))
        .args([
            "check",
            repo("examples/benchmarks/chain_1000.toml")
                .to_str()
                .unwrap(),
        ])
        .output()
        .expect("jounce runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(
            "3000 coordinates, 2000 constraint equations (rank 2000), degrees of freedom: 1000"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("no redundant constraints"), "{stdout}");
}

#[test]
fn a_redundant_pin_in_a_long_chain_is_named_by_check() {
    let text = std::fs::read_to_string(repo("examples/benchmarks/chain_1000.toml")).unwrap();
    // a second pin at the last joint: redundant, found by the dense
    // diagnosis the sparse path falls back to (on 100 links, to stay fast)
    let mut model = String::new();
    let (mut bodies, mut joints) = (0, 0);
    for l in text.lines() {
        if l.trim_start().starts_with("{ name = \"link") {
            bodies += 1;
            if bodies > 100 {
                continue;
            }
        }
        if l.trim_start().starts_with("{ name = \"pin") {
            joints += 1;
            if joints > 100 {
                continue;
            }
            if joints == 100 {
                model.push_str(&l.replace("\"pin99\"", "\"extra\""));
                model.push('\n');
            }
        }
        model.push_str(l);
        model.push('\n');
    }
    let path = scratch("chain_100_redundant").join("model.toml");
    std::fs::write(&path, model).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_jounce"))
        .args(["check", path.to_str().unwrap()])
        .output()
        .expect("jounce runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("300 coordinates, 202 constraint equations (rank 200)"),
        "{stdout}"
    );
    assert!(stdout.contains("extra"), "{stdout}");
}

#[test]
fn a_short_run_of_the_1000_link_chain_keeps_its_constraints() {
    let (s, ts) = run_example(
        "examples/benchmarks/chain_1000.toml",
        Overrides::default(),
        "chain1000",
    );
    assert_eq!(s.status, "completed");
    assert_eq!(s.degrees_of_freedom, 1000);
    assert!(
        s.accuracy.max_position_violation < 1e-6,
        "{}",
        s.accuracy.max_position_violation
    );
    // released from rest, horizontal: at first the far end of a long
    // chain falls freely (the pin forces on it are of order the link's
    // weight times the small angles), the first link is held by the pin
    let free = 0.5 * 9.81 * 0.01 * 0.01;
    let fall = |name: &str| {
        let y = ts.col(name);
        y[0] - y[y.len() - 1]
    };
    let (tip, root) = (fall("link999.y"), fall("link0.y"));
    assert!(
        (tip - free).abs() < 1e-3 * free,
        "tip fell {tip}, ½ g t² = {free}"
    );
    assert!(root > 0.0 && root < 0.9 * free, "first link fell {root}");
}

/// radau5 on the index-3 form of the 1000-link chain at the file's
/// tolerances (rtol 1e-6, atol 1e-9). Released horizontally, the outer
/// links fall nearly freely and their multipliers are nearly zero
/// (2e-5 N beside 1.5e4 N at the pin); with componentwise weights on the
/// multipliers the Newton iteration stalled at round-off and the run
/// failed at t = 1e-4 s down to h = 5e-13 s from 500 links on
/// (`bench/implicit-at-size-2026-11-29.md`). The multipliers' weights are
/// normwise now (`jounce_integrate::dae::normwise_multiplier_weights`):
/// the run completes and every link's position agrees with dop853 on
/// `augmented` at rtol 1e-10 to the tolerance.
#[test]
fn radau5_on_index3_completes_the_1000_link_chain_to_its_tolerance() {
    let overrides = |method: &str, formulation: &str, rtol: f64| Overrides {
        method: Some(method.into()),
        formulation: Some(formulation.into()),
        rtol: Some(rtol),
        atol: Some(rtol * 1e-3),
        ..Overrides::default()
    };
    let path = "examples/benchmarks/chain_1000.toml";
    let (s, ts) = run_example(
        path,
        overrides("radau5", "index3", 1e-6),
        "chain1000_radau5",
    );
    assert_eq!(s.status, "completed");
    let (r, reference) = run_example(
        path,
        overrides("dop853", "augmented", 1e-10),
        "chain1000_ref",
    );
    assert_eq!(r.status, "completed");
    let last = |ts: &support::Series, c: &str| *ts.col(c).last().unwrap();
    assert_eq!(last(&ts, "t"), last(&reference, "t"));
    let mut worst = (0.0f64, String::new());
    for i in 0..1000 {
        for c in ["x", "y"] {
            let name = format!("link{i}.{c}");
            let d = (last(&ts, &name) - last(&reference, &name)).abs();
            if d > worst.0 {
                worst = (d, name);
            }
        }
    }
    println!("radau5/index3 against dop853/augmented at t = 0.01: {worst:?}");
    assert!(worst.0 < 1e-7, "{worst:?}");
}
