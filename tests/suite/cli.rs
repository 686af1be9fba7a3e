//! The `jounce` command: malformed models give their specific error and
//! never a panic; `check`, `run` and `methods` work end to end.

use crate::support;

use support::{jounce, repo, scratch};

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
        // `check` refuses what `run` would refuse, with the same message
        for cmd in ["check", "run"] {
            assert_clean_failure(cmd, f, expect);
        }
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

/// `run --repeat 3`: three integrations in one process, the same motion
/// and work each time, summary.json's CPU the median of the three.
#[test]
fn run_repeat_reports_the_median_cpu_of_its_runs() {
    let dir = scratch("cli-run-repeat");
    let once = scratch("cli-run-once");
    let model = repo("examples/slider_crank.toml");
    let run = |out: &std::path::Path, extra: &[&str]| {
        let mut args = vec![
            "run",
            model.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--t-end",
            "0.5",
            "-q",
        ];
        args.extend_from_slice(extra);
        let (code, _, err) = jounce(&args);
        assert_eq!(code, 0, "{err}");
        let text = std::fs::read_to_string(out.join("summary.json")).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap()
    };
    let s = run(&dir, &["--repeat", "3"]);
    let single = run(&once, &[]);
    let cpus: Vec<f64> = s["work"]["cpu_seconds_repeats"]
        .as_array()
        .expect("each run's CPU")
        .iter()
        .map(|c| c.as_f64().unwrap())
        .collect();
    assert_eq!(cpus.len(), 3, "{s}");
    let mut sorted = cpus.clone();
    sorted.sort_by(f64::total_cmp);
    assert_eq!(
        s["work"]["cpu_seconds"].as_f64().unwrap(),
        sorted[1],
        "{cpus:?}"
    );
    // the same work as a single run, whose summary has no repeats
    assert_eq!(
        s["work"]["steps_accepted"],
        single["work"]["steps_accepted"]
    );
    assert_eq!(
        s["work"]["rhs_evaluations"],
        single["work"]["rhs_evaluations"]
    );
    assert!(
        single["work"].get("cpu_seconds_repeats").is_none(),
        "{single}"
    );
    let (a, b) = (
        std::fs::read_to_string(dir.join("timeseries.csv")).unwrap(),
        std::fs::read_to_string(once.join("timeseries.csv")).unwrap(),
    );
    assert_eq!(a, b, "the motion differs between runs");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&once);
}

#[test]
fn a_failing_run_keeps_the_rows_it_computed_and_says_when() {
    // rk4 at a step too large for the contact spring the block lands on
    // (absent from the linearisation at the start, when it hangs free)
    // blows up at the landing: the error must say when and why, and the
    // rows before it must be on disk
    let dir = scratch("cli-fail");
    let (code, _, err) = jounce(&[
        "run",
        repo("tests/data/dropped_block.toml").to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("solution diverged at t = "), "{err}");
    assert!(err.contains("the energy grew by"), "{err}");
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
        err.contains("unknown integrator 'rk99' (did you mean 'rk4'?)")
            && err.contains("jounce methods"),
        "{err}"
    );
    // names are found whatever their case
    let dir = scratch("cli-case");
    let (code, _, err) = jounce(&[
        "run",
        repo("examples/double_pendulum.toml").to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
        "--method",
        "DOP853",
        "--formulation",
        "Augmented",
        "-q",
    ]);
    assert_eq!(code, 0, "{err}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["integrator"]["method"], "dop853");
    let _ = std::fs::remove_dir_all(&dir);
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
        err.contains("step budget used up: 50 steps")
            && err.contains("the step budget you set (max_steps = 50)")
            && err.contains("t = "),
        "{err}"
    );
    assert!(
        !err.contains("stiff"),
        "a budget the user set is not stiffness:\n{err}"
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

/// The index-3 formulation runs with a structural method: Φ = 0 holds to
/// the Newton tolerance at every step (newmark at h = 1e-3 on the double
/// pendulum: max |Φ| over the output measured 2.2e-16).
#[test]
fn index3_runs_with_newmark_and_keeps_the_constraints() {
    let dir = scratch("cli-index3");
    let (code, out, err) = jounce(&[
        "run",
        repo("examples/double_pendulum.toml").to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
        "--formulation",
        "index3",
        "--method",
        "newmark",
        "--step",
        "1e-3",
        "--t-end",
        "0.5",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("index3 with newmark"), "{out}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["status"], "completed");
    assert_eq!(summary["formulation"]["name"], "index3");
    assert_eq!(summary["t_reached"].as_f64().unwrap(), 0.5);
    assert_eq!(summary["work"]["steps_accepted"].as_u64().unwrap(), 500);
    let v = summary["accuracy"]["max_position_violation"]
        .as_f64()
        .unwrap();
    assert!(v < 1e-8, "max position violation {v:e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An integrator that cannot run the formulation is refused before any
/// work, by `run` and by `check`, naming what would work.
#[test]
fn incompatible_integrator_and_formulation_are_refused_before_integrating() {
    let dir = scratch("cli-index3-dopri5");
    let (code, _, err) = jounce(&[
        "run",
        repo("examples/double_pendulum.toml").to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
        "--formulation",
        "index3",
        "--method",
        "dopri5",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(
            "integrator 'dopri5' cannot run formulation 'index3': it needs one of the \
             formulations augmented, partitioning, projection, penalty"
        ),
        "{err}"
    );
    assert!(
        err.contains("newmark, hht, generalized_alpha, midpoint_rule"),
        "{err}"
    );
    assert!(err.contains("double_pendulum.toml"), "{err}");
    // refused before integrating: no rows, and a summary that says so
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["status"], "failed");
    assert!(summary["error"]
        .as_str()
        .unwrap()
        .contains("cannot run formulation 'index3'"));
    assert!(!dir.join("timeseries.csv").exists());

    // wilson takes the second-order form, not the index-3 one
    let (code, _, err) = jounce(&[
        "run",
        repo("examples/double_pendulum.toml").to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
        "--formulation",
        "index3",
        "--method",
        "wilson",
        "--step",
        "1e-3",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(
            "integrator 'wilson' cannot run formulation 'index3': it needs one of the \
             formulations augmented, projection, penalty"
        ),
        "{err}"
    );

    // the same pairing in a model's settings: `check` refuses it too
    let text = std::fs::read_to_string(repo("examples/double_pendulum.toml")).unwrap();
    let text = text
        .replace("[settings]\n", "[settings]\nformulation = \"index3\"\n")
        .replace("method = \"dopri5\"", "method = \"rk4\"");
    assert!(text.contains("formulation = \"index3\"") && text.contains("method = \"rk4\""));
    let model = dir.join("index3_rk4.toml");
    std::fs::write(&model, text).unwrap();
    let (code, out, err) = jounce(&["check", model.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(
            "integrator 'rk4' cannot run formulation 'index3': it needs one of the \
             formulations augmented, partitioning, projection, penalty"
        ) && err.contains("index3_rk4.toml"),
        "{err}"
    );
    // and with a structural method the same model checks out
    let text = std::fs::read_to_string(&model)
        .unwrap()
        .replace("method = \"rk4\"", "method = \"generalized_alpha\"");
    std::fs::write(&model, text).unwrap();
    let (code, out, err) = jounce(&["check", model.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("index3 formulation, generalized_alpha integrator"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `jounce methods` says which problem forms each integrator accepts.
#[test]
fn methods_lists_the_forms_each_integrator_accepts() {
    let (code, out, _) = jounce(&["methods"]);
    assert_eq!(code, 0);
    let header = out.lines().next().unwrap();
    assert!(header.split_whitespace().any(|h| h == "forms"), "{header}");
    let row = |m: &str| {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(m))
            .unwrap_or_else(|| panic!("no row for {m}:\n{out}"))
            .to_string()
    };
    assert!(row("dopri5").contains(" ode "), "{}", row("dopri5"));
    for m in ["newmark", "hht", "generalized_alpha", "midpoint_rule"] {
        assert!(
            row(m).contains(" second-order, index-3, index-3 AL "),
            "{}",
            row(m)
        );
    }
    for m in ["wilson", "collocation"] {
        let r = row(m);
        assert!(
            r.contains(" second-order ") && !r.contains("index-3"),
            "{r}"
        );
    }
    let (code, json, _) = jounce(&["methods", "--json"]);
    assert_eq!(code, 0);
    let rows: Vec<serde_json::Value> = serde_json::from_str(&json).unwrap();
    let forms = |m: &str| {
        rows.iter()
            .find(|r| r["name"] == m)
            .unwrap_or_else(|| panic!("no {m} in --json"))["forms"]
            .clone()
    };
    assert_eq!(forms("dopri5"), serde_json::json!(["ode"]));
    assert_eq!(
        forms("newmark"),
        serde_json::json!(["second-order", "index-3", "index-3 AL"])
    );
    assert!(rows.iter().all(|r| r["forms"].is_array()));
}

/// A negative number after a numeric option is its value, not an unknown
/// flag: the user gets jounce's own message naming the option (clap read
/// `--t-end -1` as the flag `-1` before). The limits of the model file
/// hold for the options too (an atol of 1e300 or a subnormal t_end).
#[test]
fn negative_and_absurd_numeric_options_get_jounce_messages() {
    let dir = scratch("cli-negative-options");
    let model = repo("examples/bouncing_ball.toml");
    for (opt, value, expect) in [
        ("--t-end", "-1", "--t-end must be a positive number, got -1"),
        (
            "--rtol",
            "-1e-6",
            "--rtol must be a positive number, got -0.000001",
        ),
        ("--atol", "-1", "--atol must be a positive number, got -1"),
        (
            "--step",
            "-0.01",
            "--step must be a positive number, got -0.01",
        ),
        ("--atol", "1e300", "--atol must be below 1"),
        ("--rtol", "1", "--rtol must be below 1"),
        ("--t-end", "5e-324", "--t-end must be at least 1e-9 s"),
    ] {
        let (code, _, err) = jounce(&[
            "run",
            model.to_str().unwrap(),
            "-o",
            dir.to_str().unwrap(),
            opt,
            value,
        ]);
        assert_eq!(code, 1, "{opt} {value}: {err}");
        assert!(
            !err.contains("unexpected argument"),
            "{opt} {value}: clap took the value for a flag:\n{err}"
        );
        assert!(
            err.contains(expect),
            "{opt} {value}: expected '{expect}' in:\n{err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A beam whose length (here the initial distance of its points, 1e-300 m)
/// makes its stiffness infinite is refused by `check` and `run` naming the
/// beam, instead of a NaN at t = 0 that names nothing.
#[test]
fn beam_too_short_for_a_finite_stiffness_is_refused_by_name() {
    let dir = scratch("cli-beam-too-short");
    std::fs::create_dir_all(&dir).unwrap();
    let model = dir.join("tiny_beam.toml");
    std::fs::write(
        &model,
        r#"
[[bodies]]
name = "tip"
mass = 1.0
inertia = 0.01
position = [0.5, 0.0]

[[forces]]
name = "flex"
type = "beam"
body1 = "ground"
point1 = [0.0, 0.0]
body2 = "tip"
point2 = [-0.5, 1e-300]
E = 2.1e11
A = 1e-3
I = 1e-9

[settings]
t_end = 0.01
"#,
    )
    .unwrap();
    let out = dir.join("out");
    for args in [
        vec!["check", model.to_str().unwrap()],
        vec!["run", model.to_str().unwrap(), "-o", out.to_str().unwrap()],
    ] {
        let (code, _, err) = jounce(&args);
        assert_eq!(code, 1, "{args:?}: {err}");
        for part in [
            "tiny_beam.toml",
            "force 'flex'",
            "the initial distance of the points",
            "EA/L = inf N/m",
            "L = 1e-300 m",
        ] {
            assert!(err.contains(part), "{args:?}: expected '{part}' in:\n{err}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `jounce compare` refuses an unknown method up front with a suggestion,
/// and exits non-zero, saying so, when no run completed (it exited 0
/// with a table of refusals before).
#[test]
fn compare_refuses_unknown_methods_and_fails_when_no_run_completed() {
    let dir = scratch("cli-compare-nothing");
    let model = repo("examples/double_pendulum.toml");
    let (code, _, err) = jounce(&[
        "compare",
        model.to_str().unwrap(),
        "--methods",
        "dopri",
        "--t-end",
        "0.1",
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("unknown integrator 'dopri'"), "{err}");
    assert!(err.contains("did you mean"), "{err}");
    let (code, out, err) = jounce(&[
        "compare",
        model.to_str().unwrap(),
        "--methods",
        "hht",
        "--formulations",
        "ggl",
        "--t-end",
        "0.1",
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(out.contains("refused"), "{out}");
    assert!(err.contains("double_pendulum.toml"), "{err}");
    assert!(err.contains("no run completed"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 31: `sweep` and `bench` exit non-zero, saying so, when no run
/// completed (every value or method refused); both exited 0 before.
#[test]
fn sweep_and_bench_fail_when_no_run_completed() {
    let dir = scratch("cli-sweep-bench-nothing");
    let model = repo("examples/double_pendulum.toml");
    let (code, out, err) = jounce(&[
        "sweep",
        model.to_str().unwrap(),
        "--set",
        "settings.formulation=ggl,index3",
        "-o",
        dir.join("sweep").to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(err.contains("no run completed: all 2"), "{err}");
    let (code, out, err) = jounce(&[
        "bench",
        model.to_str().unwrap(),
        "--methods",
        "hht",
        "--formulation",
        "ggl",
        "--tolerances",
        "1e-4",
        "--t-end",
        "0.1",
        "-o",
        dir.join("bench").to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(err.contains("no run completed"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 31: a run stopped by SIGTERM (or Ctrl-C) writes its rows and a
/// summary with the status "interrupted", and exits with 130, as a shell
/// reports an interrupted command.
#[test]
fn a_run_stopped_by_a_signal_writes_its_rows_and_summary() {
    let dir = scratch("cli-interrupt");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_jounce"))
        .args([
            "run",
            repo("examples/double_pendulum.toml").to_str().unwrap(),
            "-o",
            dir.to_str().unwrap(),
            "--t-end",
            "5000",
            "-q",
        ])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // wait until the run is writing rows
    let series = dir.join("timeseries.csv");
    let started = std::time::Instant::now();
    while std::fs::read_to_string(&series).map_or(0, |s| s.lines().count()) < 3 {
        assert!(started.elapsed().as_secs() < 60, "no rows after 60 s");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["status"], "interrupted", "{summary}");
    let t = summary["t_reached"].as_f64().unwrap();
    assert!(t > 0.0 && t < 50000.0, "{t}");
    let rows = std::fs::read_to_string(&series).unwrap().lines().count();
    assert!(rows >= 3, "{rows} lines kept");
}

/// A command that does not integrate ends on SIGTERM as any process does:
/// `jounce static` of the released 1000-body spatial chain (minutes of
/// Newton iterations) caught the signal for a run's orderly stop that it
/// never looks at, and went on until SIGKILL.
#[test]
fn a_static_solve_ends_on_sigterm() {
    use std::os::unix::process::ExitStatusExt;
    let dir = scratch("cli-static-sigterm");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_jounce"))
        .args([
            "static",
            repo("examples/spatial_chain_1000.toml").to_str().unwrap(),
            "-o",
            dir.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed().as_secs() >= 10 {
            let _ = child.kill();
            panic!("jounce static still running 10 s after SIGTERM");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
}
