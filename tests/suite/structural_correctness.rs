//! The structural family never returns a wrong answer marked "completed"
//! (issue 13): every adaptive member on every formulation that accepts it,
//! on the double pendulum, four-bar and slider-crank at rtol 1e-4 and 1e-7,
//! is either within 100 x rtol plus the formulation's own error of a tight
//! reference at t = 1, or says in its diagnostics that it is not (the
//! accuracy warning of its global error estimate, `--error-estimate`: the
//! heuristic of the summed local errors only notes, issue 31);
//! fixed-step sweeps converge with order 2 down to round-off; a fixed step
//! whose t_end / h is not exact in binary ends exactly at t_end without a
//! sliver step.

use crate::support;

use jounce::run::Overrides;
use support::{run_example, Series};

/// Body positions and angles at the last row.
fn final_pose(s: &Series) -> Vec<(String, f64)> {
    let mut v: Vec<(String, f64)> = s
        .columns
        .iter()
        .filter(|(k, _)| k.ends_with(".x") || k.ends_with(".y") || k.ends_with(".theta"))
        .map(|(k, c)| (k.clone(), *c.last().unwrap()))
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

fn max_diff(a: &[(String, f64)], b: &[(String, f64)]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|((ka, xa), (kb, xb))| {
            assert_eq!(ka, kb);
            (xa - xb).abs()
        })
        .fold(0.0, f64::max)
}

fn reference(model: &str, formulation: &str, t_end: f64) -> Vec<(String, f64)> {
    let (s, series) = run_example(
        model,
        Overrides {
            method: Some("dop853".into()),
            formulation: Some(formulation.into()),
            rtol: Some(1e-12),
            atol: Some(1e-12),
            t_end: Some(t_end),
            ..Default::default()
        },
        "ref",
    );
    assert_eq!(s.status, "completed", "{model} reference");
    final_pose(&series)
}

#[test]
fn adaptive_structural_runs_are_right_or_say_they_may_not_be() {
    let models = [
        "examples/double_pendulum.toml",
        "examples/four_bar.toml",
        "examples/slider_crank.toml",
    ];
    let methods = ["newmark", "hht", "generalized_alpha", "midpoint_rule"];
    let formulations = ["augmented", "projection", "penalty", "index3"];
    let (mut within, mut warned) = (0, 0);
    for model in models {
        let exact = reference(model, "augmented", 1.0);
        for f in formulations {
            // the formulation's own error (penalty: its 1/alpha term);
            // index3 has none (it is the constrained system itself) and no
            // first-order form for dop853
            let own = if f == "index3" {
                0.0
            } else {
                max_diff(&reference(model, f, 1.0), &exact)
            };
            for m in methods {
                for tol in [1e-4, 1e-7] {
                    let (s, series) = run_example(
                        model,
                        Overrides {
                            method: Some(m.into()),
                            formulation: Some(f.into()),
                            rtol: Some(tol),
                            atol: Some(tol),
                            t_end: Some(1.0),
                            error_estimate: true,
                            ..Default::default()
                        },
                        "adaptive",
                    );
                    let what = format!("{model} {f} {m} rtol {tol:e}");
                    assert_eq!(s.status, "completed", "{what}: {:?}", s.error);
                    let err = max_diff(&final_pose(&series), &exact);
                    let bound = 100.0 * tol + own;
                    let warning = s
                        .diagnostics
                        .iter()
                        .any(|d| d.starts_with("accuracy warning"));
                    eprintln!("{what}: error {err:.2e} (bound {bound:.1e}), warned {warning}");
                    assert!(
                        err <= bound || warning,
                        "{what}: error {err:e} > {bound:e} and no accuracy warning"
                    );
                    if err <= bound {
                        within += 1;
                    } else {
                        warned += 1;
                    }
                }
            }
        }
    }
    eprintln!("{within} runs within the bound, {warned} outside it with a warning");
    // measured: 67 of 96 within the bound (all 24 on index3, whose error
    // control is tolerance proportional), 29 outside it with a warning
    // (50 and 46 with error per step on index3); a guard against warning
    // instead of being accurate
    assert!(within >= 62, "only {within} runs meet the bound outright");
}

/// Error at t = 0.1 of fixed-step `method` on the double pendulum with
/// step h, against dop853 at 1e-13.
fn fixed_step_error(method: &str, h: f64, exact: &[(String, f64)]) -> f64 {
    let (s, series) = run_example(
        "examples/double_pendulum.toml",
        Overrides {
            method: Some(method.into()),
            step: Some(h),
            t_end: Some(0.1),
            ..Default::default()
        },
        "fixed",
    );
    assert_eq!(s.status, "completed", "{method} h = {h}: {:?}", s.error);
    max_diff(&final_pose(&series), exact)
}

#[test]
fn fixed_step_structural_methods_converge_with_order_two_down_to_round_off() {
    let (s, series) = run_example(
        "examples/double_pendulum.toml",
        Overrides {
            method: Some("dop853".into()),
            rtol: Some(1e-13),
            atol: Some(1e-13),
            t_end: Some(0.1),
            ..Default::default()
        },
        "ref",
    );
    assert_eq!(s.status, "completed");
    let exact = final_pose(&series);
    for m in ["newmark", "hht", "generalized_alpha"] {
        let hs = [1e-2, 1e-3, 1e-4, 1e-5, 1e-6];
        let errs: Vec<f64> = hs.iter().map(|&h| fixed_step_error(m, h, &exact)).collect();
        eprintln!("{m}: {errs:?}");
        for k in 1..hs.len() {
            // no growth as h shrinks, and order 2 while above round-off
            assert!(errs[k] < errs[k - 1], "{m}: error grew at h = {}", hs[k]);
            if errs[k] > 1e-11 {
                let slope = (errs[k - 1] / errs[k]).log10();
                assert!(
                    (slope - 2.0).abs() < 0.2,
                    "{m}: slope {slope} at h = {}",
                    hs[k]
                );
            }
        }
        assert!(errs[4] < 1e-10, "{m}: floor {:e} at h = 1e-6", errs[4]);
    }
}

#[test]
fn fixed_steps_end_exactly_at_t_end_without_a_sliver() {
    // 0.03 / 1e-7 is not exact in binary: 300 000 steps, not 300 001
    for m in ["newmark", "hht", "generalized_alpha"] {
        let (s, series) = run_example(
            "examples/double_pendulum.toml",
            Overrides {
                method: Some(m.into()),
                step: Some(1e-7),
                t_end: Some(0.03),
                ..Default::default()
            },
            "sliver",
        );
        assert_eq!(s.status, "completed");
        assert_eq!(s.work.steps_accepted, 300_000, "{m}");
        let t = series.col("t");
        assert_eq!(*t.last().unwrap(), 0.03, "{m}");
    }
    // the last point as accurate as the others: 0.1 / 3e-3 is 33.33 steps,
    // so the last step is a third of h; it must not spoil the result
    let (_, exact) = run_example(
        "examples/double_pendulum.toml",
        Overrides {
            method: Some("dop853".into()),
            rtol: Some(1e-13),
            atol: Some(1e-13),
            t_end: Some(0.1),
            ..Default::default()
        },
        "ref",
    );
    let exact = final_pose(&exact);
    let e_round = fixed_step_error("newmark", 1e-3, &exact);
    let (s, series) = run_example(
        "examples/double_pendulum.toml",
        Overrides {
            method: Some("newmark".into()),
            step: Some(3e-3),
            t_end: Some(0.1),
            ..Default::default()
        },
        "partial",
    );
    assert_eq!(s.work.steps_accepted, 34);
    let e_partial = max_diff(&final_pose(&series), &exact);
    // error ~ h²: 9x the h = 1e-3 error, not more
    assert!(e_partial < 12.0 * e_round, "{e_partial:e} vs {e_round:e}");
}

#[test]
fn index3_keeps_the_four_bar_on_its_constraints_over_1e5_steps() {
    for m in ["generalized_alpha", "newmark"] {
        let (s, _) = run_example(
            "examples/four_bar.toml",
            Overrides {
                method: Some(m.into()),
                formulation: Some("index3".into()),
                step: Some(3e-5),
                ..Default::default()
            },
            "drift",
        );
        assert_eq!(s.status, "completed", "{m}: {:?}", s.error);
        assert_eq!(s.work.steps_accepted, 100_000, "{m}");
        let phi = s.accuracy.max_position_violation;
        eprintln!("{m}: max |Phi| over 1e5 steps {phi:e}");
        assert!(phi <= 1e-9, "{m}: |Phi| = {phi:e}");
    }
}
