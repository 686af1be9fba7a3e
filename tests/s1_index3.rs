//! studies.md S1 in body coordinates with the book's scheme on the index-3
//! equations: newmark (β = 1/4, γ = 1/2) on `index3` at h = 1e-3 over the
//! full 20 s completes every spring case with the positions on the
//! constraints at every output, and a run whose energy changes by more
//! than 1 % (this model is conservative) says so in its diagnostics
//! instead of passing as a clean "completed".
//!
//! What it does not meet yet (issue 7): the book's energy errors (<= 5e-3
//! outside the chaotic case) — in body coordinates the trapezoidal rule
//! with the velocity projection that keeps its multipliers bounded loses
//! 2.9e-2 of the energy at k2 <= 1e8 with k1 = 0 and up to 96 % in the
//! stiff (k1 = k2) cases; see the closing note of issue 7.

mod support;

use jounce::run::Overrides;
use jounce::study::S1_CASES;
use support::run_example;

#[test]
fn s1_newmark_on_index3_completes_every_case_on_the_constraints_and_flags_energy_loss() {
    for (k1, k2) in S1_CASES {
        let model = format!("examples/studies/s1_k1_{k1}_k2_{k2}.toml");
        let (s, series) = run_example(
            &model,
            Overrides {
                method: Some("newmark".into()),
                formulation: Some("index3".into()),
                step: Some(1e-3),
                ..Default::default()
            },
            "s1",
        );
        let de = s.accuracy.max_relative_energy_error;
        eprintln!(
            "S1 ({k1}, {k2}): {} steps, {} Newton iterations, energy {de:.2e}, |Phi| {:.1e}",
            s.work.steps_accepted, s.work.newton_iterations, s.accuracy.max_position_violation
        );
        assert_eq!(s.status, "completed", "({k1}, {k2}): {:?}", s.error);
        assert_eq!(s.work.steps_accepted, 20_000);
        assert_eq!(*series.col("t").last().unwrap(), 20.0);
        assert!(
            s.accuracy.max_position_violation < 1e-10,
            "({k1}, {k2}): |Phi| = {:e}",
            s.accuracy.max_position_violation
        );
        let flagged = s
            .diagnostics
            .iter()
            .any(|d| d.contains("the model conserves energy"));
        assert_eq!(
            flagged,
            de > 1e-2,
            "({k1}, {k2}): energy {de:e}, {:?}",
            s.diagnostics
        );
    }
}
