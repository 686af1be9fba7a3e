//! Issue 12, point 7: every run writes `steps.csv`, one row per accepted
//! step (t, h, error estimate, Newton iterations, rejected attempts,
//! cumulative CPU), whose sums are the run's own counters.

use crate::support;

use jounce::run::run_model;
use support::{repo, scratch, Series};

/// Run an example with `formulation` and `integrator` lines replacing its
/// own; the summary and steps.csv.
fn run(example: &str, formulation: &str, integrator: &str) -> (jounce_io::RunSummary, Series) {
    let text = std::fs::read_to_string(repo(example)).unwrap();
    let (head, _) = text.split_once("[settings.integrator]").unwrap();
    let text = format!(
        "{}[settings.integrator]\n{integrator}\n",
        head.replace(
            "[settings]\n",
            &format!("[settings]\nformulation = \"{formulation}\"\n")
        )
    );
    let model = jounce_model::from_str(&text, example).unwrap();
    let out = scratch("steps");
    let s = run_model(&model, &out, None).unwrap_or_else(|e| panic!("{example}: {e}"));
    let steps = Series::read(&out.join("steps.csv"));
    let _ = std::fs::remove_dir_all(&out);
    (s, steps)
}

#[test]
fn steps_csv_adds_up_to_the_runs_counters() {
    for (example, formulation, integrator, reports_error) in [
        (
            "examples/slider_crank.toml",
            "augmented",
            "method = \"dopri5\"\nrtol = 1e-9\natol = 1e-12",
            true,
        ),
        (
            "examples/slider_crank.toml",
            "augmented",
            "method = \"rk4\"\nstep = 1e-3",
            false,
        ),
        (
            "examples/double_pendulum.toml",
            "index3",
            "method = \"radau5\"\nrtol = 1e-6\natol = 1e-8",
            true,
        ),
        (
            "examples/four_bar.toml",
            "index3",
            "method = \"generalized_alpha\"\nrtol = 1e-5\natol = 1e-7",
            true,
        ),
    ] {
        let tag = format!("{example} {formulation} {integrator}");
        let (s, steps) = run(example, formulation, integrator);
        assert_eq!(s.status, "completed", "{tag}: {:?}", s.error);
        let (t, h) = (steps.col("t"), steps.col("h"));
        assert_eq!(
            t.len() as u64,
            s.work.steps_accepted,
            "{tag}: one row per step"
        );
        assert_eq!(
            *t.last().unwrap(),
            s.t_end,
            "{tag}: the last row ends the run"
        );
        // each step starts where the last ended
        for k in 1..t.len() {
            assert!(
                (t[k] - t[k - 1] - h[k]).abs() <= 1e-12 * t[k].abs().max(1.0),
                "{tag}: row {k}: t {} − {} ≠ h {}",
                t[k],
                t[k - 1],
                h[k]
            );
        }
        let sum = |c: &str| steps.col(c).iter().sum::<f64>();
        assert_eq!(
            sum("rejected_attempts") as u64,
            s.work.steps_rejected,
            "{tag}"
        );
        assert_eq!(
            sum("newton_iterations") as u64,
            s.work.newton_iterations,
            "{tag}"
        );
        // the per-step evaluations add up to the run's, but for the
        // start (f at t0, the first step size's trial evaluations)
        for (col, total) in [
            ("rhs_evaluations", s.work.rhs_evaluations),
            ("jacobian_evaluations", s.work.jacobian_evaluations),
            ("lu_factorizations", s.work.lu_factorizations),
        ] {
            let n = sum(col) as u64;
            assert!(
                n <= total && total - n <= 20,
                "{tag}: {col}: steps.csv sums to {n}, the run counted {total}"
            );
        }
        let cpu = steps.col("cpu_seconds");
        assert!(cpu.windows(2).all(|w| w[1] >= w[0]), "{tag}: CPU decreases");
        assert!(
            *cpu.last().unwrap() <= s.work.cpu_seconds + 1e-9,
            "{tag}: {} > {}",
            cpu.last().unwrap(),
            s.work.cpu_seconds
        );
        let err = steps.col("error_estimate");
        if reports_error {
            // accepted steps: estimates at or below the tolerance
            assert!(
                err.iter().all(|e| e.is_finite() && *e <= 1.0 + 1e-12),
                "{tag}: {:?}",
                err.iter().cloned().fold(0.0, f64::max)
            );
        } else {
            assert!(
                err.iter().all(|e| e.is_nan()),
                "{tag}: a fixed step has no error estimate"
            );
        }
    }
}

#[test]
fn step_history_false_writes_no_steps_csv() {
    let text = std::fs::read_to_string(repo("examples/simple_pendulum.toml")).unwrap();
    let text = text.replace("[settings]\n", "[settings]\nstep_history = false\n");
    let model = jounce_model::from_str(&text, "simple_pendulum.toml").unwrap();
    let out = scratch("no-steps");
    let s = run_model(&model, &out, None).unwrap();
    assert_eq!(s.status, "completed");
    assert!(out.join("timeseries.csv").exists());
    assert!(!out.join("steps.csv").exists());
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn cost_from_counts_the_steps_after_its_time() {
    let text = std::fs::read_to_string(repo("examples/double_pendulum.toml")).unwrap();
    let (head, _) = text.split_once("[settings.integrator]").unwrap();
    let t_end = 2.0;
    let text = format!(
        "{}[settings.integrator]\nmethod = \"radau5\"\nrtol = 1e-7\natol = 1e-9\n",
        head.replace(
            "[settings]\n",
            &format!(
                "[settings]\nformulation = \"index3\"\ncost_from = {:?}\n",
                t_end / 2.0
            )
        )
    );
    let mut model = jounce_model::from_str(&text, "double_pendulum.toml").unwrap();
    model.settings.t_end = t_end;
    let out = scratch("cost-from");
    let s = run_model(&model, &out, None).unwrap();
    let steps = Series::read(&out.join("steps.csv"));
    let _ = std::fs::remove_dir_all(&out);
    let after: Vec<usize> = (0..steps.col("t").len())
        .filter(|&k| steps.col("t")[k] > t_end / 2.0)
        .collect();
    let newton: f64 = after
        .iter()
        .map(|&k| steps.col("newton_iterations")[k])
        .sum();
    let line = s
        .diagnostics
        .iter()
        .find(|d| d.starts_with("cost from t = 1 s"))
        .unwrap_or_else(|| panic!("{:?}", s.diagnostics));
    assert!(
        line.contains(&format!("{} steps accepted", after.len())),
        "{line}: {} steps after t = 1",
        after.len()
    );
    assert!(
        line.contains(&format!("{newton} Newton iterations")),
        "{line}"
    );
    // the summary's cost_from block holds the same counts, and the
    // evaluations of the steps after t_from
    let block = s.cost_from.as_ref().expect("cost_from block");
    assert_eq!(block.steps_accepted, after.len() as u64);
    assert_eq!(block.newton_iterations, newton as u64);
    for (col, n) in [
        ("rhs_evaluations", block.rhs_evaluations),
        ("jacobian_evaluations", block.jacobian_evaluations),
        ("lu_factorizations", block.lu_factorizations),
    ] {
        let from_rows: f64 = after.iter().map(|&k| steps.col(col)[k]).sum();
        assert_eq!(n, from_rows as u64, "{col}");
    }
    assert!(block.rhs_evaluations > 0 && block.lu_factorizations > 0);
    assert!(!after.is_empty() && after.len() < steps.col("t").len());
}
