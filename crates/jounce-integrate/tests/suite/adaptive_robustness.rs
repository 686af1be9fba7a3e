//! Adaptive explicit methods recover from trial steps that leave the
//! domain of f (non-finite stage values) by rejecting them.

use jounce_integrate::testkit::Discard;
use jounce_integrate::*;

/// y' = −y, but f is NaN outside |y| ≤ 10 (as a formulation whose
/// kinematics fail far from the solution): y = e^(−t) stays inside.
struct Fenced;

impl OdeProblem for Fenced {
    fn dim(&self) -> usize {
        1
    }
    fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        dy[0] = -y[0] + 0.0 * (100.0 - y[0] * y[0]).sqrt();
        Ok(())
    }
}

#[test]
fn non_finite_trial_stages_are_rejected_not_fatal() {
    for name in [
        "dopri5",
        "dop853",
        "rkf45",
        "cash_karp",
        "cash_karp_vo",
        "heun",
    ] {
        let opts = SolverOptions {
            h0: Some(50.0),
            ..SolverOptions::default().with_tol(1e-8, 1e-10)
        };
        let mut st = method::build(name, &opts).unwrap();
        let r = solve(
            &mut Fenced,
            st.as_mut(),
            0.0,
            &[1.0],
            5.0,
            &opts,
            &mut Discard,
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(r.stats.n_reject > 0, "{name}: the first step should fail");
        let err = (r.y[0] - (-5.0f64).exp()).abs();
        assert!(err < 1e-7, "{name}: error {err}");
    }
    // with fixed steps there is nothing to retry: the error is reported
    let opts = SolverOptions::default().with_fixed_step(50.0);
    let mut st = method::build("rk4", &opts).unwrap();
    let r = solve(
        &mut Fenced,
        st.as_mut(),
        0.0,
        &[1.0],
        100.0,
        &opts,
        &mut Discard,
    );
    assert!(matches!(
        r,
        Err(SolveFailure {
            error: IntegrateError::Eval { .. },
            ..
        })
    ));
}
