//! Explicit methods on stiff problems: they must give up quickly with a
//! structured error (stiffness detected, or the step budget exhausted),
//! never run on indefinitely.

use jounce_integrate::testkit::{Robertson, VanDerPol};
use jounce_integrate::*;

fn attempt(name: &str, p: &mut dyn OdeProblem, y0: &[f64], t1: f64) -> SolveFailure {
    attempt_with(name, p, y0, t1, false)
}

fn attempt_with(
    name: &str,
    p: &mut dyn OdeProblem,
    y0: &[f64],
    t1: f64,
    stop_when_stiff: bool,
) -> SolveFailure {
    let opts = SolverOptions {
        max_steps: 20_000,
        stop_when_stiff,
        ..SolverOptions::default().with_tol(1e-6, 1e-8)
    };
    let mut st = method::build(name, &opts).unwrap();
    match solve(p, st.as_mut(), 0.0, y0, t1, &opts, &mut testkit::Discard) {
        Ok(r) => panic!(
            "{name}: an explicit method integrated a stiff problem to t = {}",
            r.t
        ),
        Err(f) => f,
    }
}

#[test]
fn explicit_methods_give_up_on_stiff_problems() {
    for name in [
        "dopri5",
        "dop853",
        "rkf45",
        "cash_karp",
        "cash_karp_vo",
        "heun",
    ] {
        for (label, f) in [
            (
                "van der pol",
                attempt(name, &mut VanDerPol { mu: 1000.0 }, &[2.0, 0.0], 3000.0),
            ),
            (
                "robertson",
                attempt(name, &mut Robertson, &[1.0, 0.0, 0.0], 1e5),
            ),
        ] {
            println!(
                "{name} on {label}: {} after {} steps",
                f.error,
                f.stats.n_steps()
            );
            assert!(
                matches!(
                    f.error,
                    IntegrateError::ProbablyStiff { .. } | IntegrateError::TooManySteps { .. }
                ),
                "{name} on {label}: unexpected {}",
                f.error
            );
            assert!(
                f.stats.n_steps() <= 20_001,
                "{name}: the step budget was not enforced"
            );
        }
    }
}

#[test]
fn hairer_stiffness_test_fires_early_for_dopri5_and_dop853() {
    // with a step-size bound 3.25 (dopri5) or 6.1 (dop853) on h·ρ, the
    // test sees stiffness long before the step budget is spent
    for name in ["dopri5", "dop853"] {
        // asked to stop at the diagnosis: it comes long before the step budget
        let f = attempt_with(
            name,
            &mut VanDerPol { mu: 1000.0 },
            &[2.0, 0.0],
            3000.0,
            true,
        );
        assert!(
            matches!(f.error, IntegrateError::ProbablyStiff { .. }),
            "{name}: {}",
            f.error
        );
        assert!(
            f.stats.n_steps() < 2000,
            "{name}: {} steps",
            f.stats.n_steps()
        );
        // by default the diagnosis is recorded and the run goes on until its
        // pace since then shows the budget would run out (twice over), then
        // the error says stiffness was the reason, without spending the
        // budget first
        let f = attempt(name, &mut VanDerPol { mu: 1000.0 }, &[2.0, 0.0], 3000.0);
        assert!(
            matches!(f.error, IntegrateError::ProbablyStiff { .. }),
            "{name}: {}",
            f.error
        );
        let at = f.stats.stiffness_detected_at.expect("detection recorded");
        assert!(at < 1.0, "{name}: detected only at t = {at}");
        // measured: 1053 (dopri5) steps, where the whole budget of 20 000
        // was spent before the forecast
        assert!(
            f.error.to_string().contains("stopped early") && f.stats.n_steps() < 20_000,
            "{name}: {} after {} steps",
            f.error,
            f.stats.n_steps()
        );
    }
}
