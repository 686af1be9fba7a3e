//! The `jounce` command: malformed models give their specific error and
//! never a panic; `check`, `run` and `methods` work end to end.

mod support;

use std::process::Command;

use support::{repo, scratch};

fn jounce(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_jounce"))
        .args(args)
        .output()
        .expect("jounce runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every `*.toml` in `dir` with its `# expect:` line.
fn cases(dir: &str) -> Vec<(std::path::PathBuf, String)> {
    let mut files: Vec<_> = std::fs::read_dir(repo(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(&f).unwrap();
            let expect = text
                .lines()
                .find_map(|l| l.strip_prefix("# expect: "))
                .unwrap_or_else(|| panic!("{} has no '# expect:' line", f.display()))
                .trim()
                .to_string();
            (f, expect)
        })
        .collect()
}

/// `jounce <cmd> file` fails with exit code 1 (not a panic), and the
/// message names the file and contains the expected text.
fn assert_clean_failure(cmd: &str, f: &std::path::Path, expect: &str) {
    let out_dir = scratch("failing-model");
    let path = f.to_str().unwrap();
    let args: Vec<&str> = if cmd == "check" {
        vec![cmd, path]
    } else {
        vec![cmd, path, "-o", out_dir.to_str().unwrap()]
    };
    let (code, _, err) = jounce(&args);
    assert_ne!(code, 101, "{} panicked:\n{err}", f.display());
    assert_eq!(code, 1, "{} must fail cleanly:\n{err}", f.display());
    assert!(
        err.contains(expect),
        "{}: expected '{expect}' in:\n{err}",
        f.display()
    );
    let name = f.file_name().unwrap().to_str().unwrap();
    assert!(
        err.contains(name),
        "{}: error must name the file:\n{err}",
        f.display()
    );
    let _ = std::fs::remove_dir_all(&out_dir);
}

#[test]
fn malformed_models_give_their_specific_error_without_panicking() {
    let cases = cases("tests/malformed");
    assert!(cases.len() >= 15, "only {} malformed models", cases.len());
    for (f, expect) in &cases {
        for cmd in ["check", "run"] {
            assert_clean_failure(cmd, f, expect);
        }
    }
}

/// Valid files that cannot be run: impossible geometry, redundant joints,
/// a formulation or integrator that cannot take the model, bad method
/// parameters.
#[test]
fn unsolvable_models_are_explained_without_panicking() {
    let cases = cases("tests/unsolvable");
    assert!(cases.len() >= 8);
    for (f, expect) in &cases {
        assert_clean_failure("run", f, expect);
    }
}

#[test]
fn check_reports_dof_and_joints() {
    let (code, out, err) = jounce(&["check", repo("examples/four_bar.toml").to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("degrees of freedom: 1"), "{out}");
    assert!(
        out.contains("crank_pivot") && out.contains("no redundant constraints"),
        "{out}"
    );
}

#[test]
fn run_writes_timeseries_and_summary() {
    let dir = scratch("cli-run");
    let (code, out, err) = jounce(&[
        "run",
        repo("examples/slider_crank.toml").to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
        "--t-end",
        "0.5",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("CPU"), "{out}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["status"], "completed");
    assert_eq!(summary["integrator"]["method"], "dopri5");
    assert!(summary["work"]["steps_accepted"].as_u64().unwrap() > 0);
    assert!(summary["work"]["cpu_seconds"].as_f64().unwrap() >= 0.0);
    let csv = std::fs::read_to_string(dir.join("timeseries.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    for col in [
        "t",
        "crank.theta",
        "slider.vx",
        "total_energy",
        "position_violation",
    ] {
        assert!(
            header.split(',').any(|h| h == col),
            "missing {col} in {header}"
        );
    }
    assert_eq!(csv.lines().count(), 1 + 101, "t = 0, 0.005, ..., 0.5");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failing_run_keeps_the_rows_it_computed_and_says_when() {
    // rk4 with a step far too large for the stiff S5 pendulum diverges: the
    // error must say when, and the rows before it must be on disk
    let dir = scratch("cli-fail");
    let (code, _, err) = jounce(&[
        "run",
        repo("examples/studies/s5_stiff_double_pendulum.toml")
            .to_str()
            .unwrap(),
        "-o",
        dir.to_str().unwrap(),
        "--method",
        "rk4",
        "--step",
        "0.01",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("t = "), "{err}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["status"], "failed");
    let rows = std::fs::read_to_string(dir.join("timeseries.csv"))
        .unwrap()
        .lines()
        .count();
    assert!(rows > 2, "rows before the failure must be written");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unknown_integrator_is_named() {
    let (code, _, err) = jounce(&[
        "run",
        repo("examples/double_pendulum.toml").to_str().unwrap(),
        "--method",
        "rk99",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("unknown integrator 'rk99'") && err.contains("dopri5"),
        "{err}"
    );
}

#[test]
fn methods_lists_the_registry() {
    let (code, out, _) = jounce(&["methods"]);
    assert_eq!(code, 0);
    for m in ["rk4", "dopri5"] {
        assert!(out.lines().any(|l| l.starts_with(m)), "{out}");
    }
}

#[test]
fn step_budget_stops_the_run_with_the_time_and_keeps_the_rows() {
    let dir = scratch("cli-budget");
    let (code, _, err) = jounce(&[
        "run",
        repo("examples/double_pendulum.toml").to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
        "--max-steps",
        "50",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("too many steps") && err.contains("50") && err.contains("t = "),
        "{err}"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["status"], "failed");
    let reached = summary["t_reached"].as_f64().unwrap();
    assert!(reached > 0.0 && reached < 5.0, "{reached}");
    let _ = std::fs::remove_dir_all(&dir);
    // a zero budget is refused before anything runs
    let (code, _, err) = jounce(&[
        "run",
        repo("examples/double_pendulum.toml").to_str().unwrap(),
        "--max-steps",
        "0",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("max-steps"), "{err}");
}
