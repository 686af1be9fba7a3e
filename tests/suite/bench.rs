//! `jounce bench` (issue 12, point 4): a work-precision study of a model,
//! its table, CSV, JSON and diagram, with errors that fall as the
//! tolerance or step does at the rate of each method's order.

use crate::support;

use support::{jounce, scratch, svg_curves};

/// Read `bench.json` of a study.
fn points(dir: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("bench.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The (setting, max |Δq|) of `method`'s completed runs.
fn errors(json: &serde_json::Value, method: &str) -> Vec<(f64, f64)> {
    json["points"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["run"]["method"] == method && p["run"]["status"] == "completed")
        .map(|p| {
            (
                p["setting"].as_f64().unwrap(),
                p["run"]["max_position_difference"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_tolerance_sweep_gives_errors_that_fall_with_the_tolerance_and_a_diagram() {
    let out = scratch("bench_tol");
    let model = support::repo("examples/simple_pendulum.toml");
    let (code, stdout, stderr) = jounce(&[
        "bench",
        model.to_str().unwrap(),
        "--methods",
        "dopri5,dop853,radau5",
        "--tolerances",
        "1e-4,1e-6,1e-8",
        "--t-end",
        "2",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("CPU at equal error"), "{stdout}");
    let json = points(&out);
    for m in ["dopri5", "dop853", "radau5"] {
        let e = errors(&json, m);
        assert_eq!(e.len(), 3, "{m}: {e:?}");
        // tighter tolerance, smaller error: two decades of tolerance buy at
        // least one decade of error
        for w in e.windows(2) {
            assert!(w[1].1 < 0.1 * w[0].1, "{m}: {e:?}");
        }
    }
    // every equal-error row is sorted cheapest first
    for row in json["equal_error"].as_array().unwrap() {
        let cpu: Vec<f64> = row["cpu"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c[1].as_f64().unwrap())
            .collect();
        assert!(cpu.windows(2).all(|w| w[0] <= w[1]), "{row}");
    }
    assert!(!json["equal_error"].as_array().unwrap().is_empty());
    let csv = std::fs::read_to_string(out.join("bench.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 9);
    assert_eq!(svg_curves(&out.join("work_precision.svg")), 3);
    // every run against simulated time (the reference excluded)
    assert_eq!(svg_curves(&out.join("step_size.svg")), 9);
    assert_eq!(svg_curves(&out.join("cpu_time.svg")), 9);
}

/// A step sweep of rk4 and heun: the error falls by 2^p per halving of h
/// (p = 4 and 2, slope within 0.2).
#[test]
fn a_step_sweep_shows_each_fixed_step_method_order() {
    let out = scratch("bench_step");
    let model = support::repo("examples/simple_pendulum.toml");
    let (code, stdout, stderr) = jounce(&[
        "bench",
        model.to_str().unwrap(),
        "--methods",
        "rk4,heun",
        "--steps",
        "4e-2,2e-2,1e-2",
        "--t-end",
        "1",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let json = points(&out);
    for (m, p) in [("rk4", 4.0), ("heun", 2.0)] {
        let e = errors(&json, m);
        assert_eq!(e.len(), 3, "{m}");
        let slope = (e[0].1 / e[2].1).ln() / (e[0].0 / e[2].0).ln();
        println!("{m}: errors {e:?}, slope {slope:.3}");
        assert!((slope - p).abs() < 0.2, "{m}: slope {slope}, order {p}");
    }
}

#[test]
fn bench_refuses_bad_sweeps_in_words() {
    let model = support::repo("examples/simple_pendulum.toml");
    let (code, _, stderr) = jounce(&[
        "bench",
        model.to_str().unwrap(),
        "--methods",
        "dopri5",
        "--tolerances",
        "1e-4,-1",
        "-o",
        scratch("bench_bad").to_str().unwrap(),
    ]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("--tolerances") && stderr.contains("-1"),
        "{stderr}"
    );
}
