//! Issue 32: modified Newton across steps for the augmented Lagrangian.
//! The tangent K, C of an earlier step starts the next step's Newton
//! iteration while it contracts (`jounce_integrate::structural::
//! augmented_lagrangian`, the `Start` of a solve); with the method
//! parameter `keep_iteration_matrix = 0` every step starts from a fresh
//! tangent, the full Newton start. Both pass the same convergence test, so
//! they must give the same motion to the Newton tolerance, the kept one
//! with fewer tangent evaluations per step (these tests fail if the reuse
//! is switched off or lost).

use crate::support;

use jounce::run::{apply_overrides, run_model, Overrides};
use jounce_io::RunSummary;
use support::chain::chain;
use support::pc_chain::{exact_angle, pc_chain_model};
use support::{scratch, Series};

/// Run a model text under the augmented Lagrangian with generalized-α,
/// the tangent kept across steps or not (`keep`).
fn run(text: &str, keep: bool, step: Option<f64>, tag: &str) -> (RunSummary, Series) {
    let mut model = jounce_model::from_str(text, tag).unwrap();
    apply_overrides(
        &mut model,
        &Overrides {
            method: Some("generalized_alpha".into()),
            formulation: Some("augmented_lagrangian".into()),
            step,
            params: vec![("keep_iteration_matrix".into(), if keep { 1.0 } else { 0.0 })],
            ..Overrides::default()
        },
    )
    .unwrap();
    let out = scratch(tag);
    let s = run_model(&model, &out, None).unwrap_or_else(|e| panic!("{tag}: {e}"));
    let series = Series::read(&out.join("timeseries.csv"));
    let _ = std::fs::remove_dir_all(&out);
    assert_eq!(s.status, "completed", "{tag}: {:?}", s.error);
    (s, series)
}

/// Tangent evaluations per attempted step.
fn tangents_per_step(s: &RunSummary) -> f64 {
    s.work.jacobian_evaluations as f64 / (s.work.steps_accepted + s.work.steps_rejected) as f64
}

/// The P-C chain N = 10 at h = 1e-3 through its first singular pose
/// (all bars collinear at t ≈ 1.1 s): the crank angle of the kept tangent
/// equals full Newton's along the whole run to far below the method's
/// error, both are within the issue-10 bound of the exact solution, and
/// the kept tangent takes fewer tangents per step.
#[test]
fn the_kept_tangent_moves_the_pc_chain_as_full_newton_does() {
    let text = pc_chain_model(10, "augmented_lagrangian", "", 2.0, false);
    let (sk, kept) = run(&text, true, Some(1e-3), "al-keep-pc");
    let (sf, fresh) = run(&text, false, Some(1e-3), "al-fresh-pc");
    let (a, b) = (kept.col("crank0.theta"), fresh.col("crank0.theta"));
    assert_eq!(a.len(), b.len());
    let diff = a
        .iter()
        .zip(b)
        .fold(0.0f64, |d, (x, y)| d.max((x - y).abs()));
    let exact = exact_angle(10, 2.0);
    let (ek, ef) = (
        (a.last().unwrap() - exact).abs(),
        (b.last().unwrap() - exact).abs(),
    );
    let (tk, tf) = (tangents_per_step(&sk), tangents_per_step(&sf));
    eprintln!(
        "P-C N = 10, h = 1e-3, t = 0..2: kept − full Newton {diff:.2e} rad; errors {ek:.2e}, \
         {ef:.2e}; tangents per step {tk:.3} against {tf:.3}; LU {} against {}; \
         Newton iterations {} against {}",
        sk.work.lu_factorizations,
        sf.work.lu_factorizations,
        sk.work.newton_iterations,
        sf.work.newton_iterations
    );
    assert!(diff <= 1e-7, "kept tangent off full Newton by {diff:e} rad");
    assert!(ek <= 1e-4 && ef <= 1e-4, "errors {ek:e}, {ef:e}");
    assert!(tk <= 0.5 * tf, "tangents per step {tk} against {tf}");
    assert!(sk.accuracy.max_position_violation <= 1e-9);
}

/// The 100-link chain of `make_chain.py`, adaptive (rtol 1e-6, atol
/// 1e-9) to t = 0.05 s: every link where full Newton puts it, to far below
/// the tolerance, with fewer tangents per step.
#[test]
fn the_kept_tangent_moves_the_100_link_chain_as_full_newton_does() {
    let text = chain(100, 0.05);
    let (sk, kept) = run(&text, true, None, "al-keep-chain");
    let (sf, fresh) = run(&text, false, None, "al-fresh-chain");
    let last = |ts: &Series, c: &str| *ts.col(c).last().unwrap();
    assert_eq!(last(&kept, "t"), last(&fresh, "t"));
    let mut worst = (0.0f64, String::new());
    for i in 0..100 {
        for c in ["x", "y", "theta"] {
            let name = format!("link{i}.{c}");
            let d = (last(&kept, &name) - last(&fresh, &name)).abs();
            if d > worst.0 {
                worst = (d, name);
            }
        }
    }
    let (tk, tf) = (tangents_per_step(&sk), tangents_per_step(&sf));
    eprintln!(
        "100-link chain to 0.05 s: kept − full Newton {worst:?}; steps {}+{} against {}+{}; \
         tangents per step {tk:.3} against {tf:.3}; LU {} against {}; Newton iterations {} \
         against {}",
        sk.work.steps_accepted,
        sk.work.steps_rejected,
        sf.work.steps_accepted,
        sf.work.steps_rejected,
        sk.work.lu_factorizations,
        sf.work.lu_factorizations,
        sk.work.newton_iterations,
        sf.work.newton_iterations
    );
    assert!(worst.0 <= 1e-8, "{worst:?}");
    assert!(tk <= 0.5 * tf, "tangents per step {tk} against {tf}");
}
