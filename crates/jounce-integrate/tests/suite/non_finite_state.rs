//! A step that leaves a non-finite state stops the run with the typed
//! EvalError::StateNotFinite (callers choose their advice by the variant,
//! not by the wording of the message), whose message keeps its text.

use jounce_integrate::{
    method, solve, Discard, EvalError, IntegrateError, OdeProblem, SolverOptions,
};

/// y' = −10³⁰⁰·sign(y): the right-hand side stays finite for any y, ±∞
/// included, so a step too large makes the state itself non-finite.
struct Saturated;

impl OdeProblem for Saturated {
    fn dim(&self) -> usize {
        1
    }
    fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        dy[0] = -1e300 * y[0].signum();
        Ok(())
    }
}

#[test]
fn explicit_euler_far_beyond_its_stability_limit_ends_with_state_not_finite() {
    // h·f = −10³¹⁰ overflows: y becomes −∞ in the first step
    let mut p = Saturated;
    let opts = SolverOptions {
        fixed_step: Some(1e10),
        ..SolverOptions::default()
    };
    let mut st = method::build("euler", &opts).unwrap();
    let f = solve(&mut p, st.as_mut(), 0.0, &[1.0], 1e12, &opts, &mut Discard).unwrap_err();
    match &f.error {
        IntegrateError::Eval {
            source:
                EvalError::StateNotFinite {
                    t,
                    component,
                    value,
                    t_prev,
                    h,
                },
        } => {
            assert_eq!(*component, 0);
            assert!(value.is_infinite(), "{value}");
            assert_eq!(*h, 1e10);
            assert_eq!(*t - *t_prev, 1e10);
            let msg = f.error.to_string();
            assert!(
                msg.contains(&format!(
                    "solution diverged at t = {t}: component 0 of the state became {value} in \
                     the step from t = {t_prev} (h = 1e10)"
                )),
                "{msg}"
            );
        }
        other => panic!("expected StateNotFinite, got {other:?}"),
    }
}
