//! The variable-step multistep codes (pece, adams_vo, bdf, ndf) cross a
//! jump of f that nobody announced ([`jounce_integrate::discontinuity`])
//! in the shared step loop: y' = F(t), F = 0 before t* = 2 and 1e7
//! after, y(0) = 0, exact y(4) = 2e7. Every step across t* fails the
//! error test (local error ≈ h_after · 1e7) until the step is the
//! smallest the arithmetic resolves at t* (10 ε t* = 4.4e-15); that step
//! is accepted and the method restarts after it. The error it commits is
//! at most h_floor · 1e7 = 4.4e-8; the restarted method integrates the
//! constant exactly up to the rounding of y ≈ 1e7 (ε y = 2e-9 per step).
//!
//! Two traps this guards: the first step after the restart, Hairer's
//! 0.01 ‖y‖/‖f‖ from y ≈ 4e-8 and f = 1e7 (× 1/4 for the Adams codes), is
//! below the resolution and was reported as an underflow (pece, adams_vo);
//! and bdf/ndf, restarted at the resolution 10 ε t, which the loop raises
//! with t by a rounding amount every step, never saw k + 2 steps of
//! constant h and stayed there (10⁶ steps for 4e-9 s).

use jounce_integrate::*;

const T_JUMP: f64 = 2.0;
const F_AFTER: f64 = 1e7;

struct Jump;

impl OdeProblem for Jump {
    fn dim(&self) -> usize {
        1
    }
    fn rhs(&mut self, t: f64, _y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        dy[0] = if t < T_JUMP { 0.0 } else { F_AFTER };
        Ok(())
    }
}

#[test]
fn multistep_codes_cross_an_unannounced_jump_of_f() {
    for name in ["pece", "adams_vo", "bdf", "ndf"] {
        for rtol in [1e-4, 1e-8] {
            let opts = SolverOptions::default().with_tol(rtol, 1e-9);
            let mut st = method::build(name, &opts).unwrap();
            let r = solve(
                &mut Jump,
                st.as_mut(),
                0.0,
                &[0.0],
                4.0,
                &opts,
                &mut Discard,
            )
            .unwrap_or_else(|e| panic!("{name} rtol {rtol}: {e}"));
            let err = (r.y[0] - 2.0 * F_AFTER).abs();
            println!(
                "{name} rtol {rtol:e}: error {err:.3e}, {} steps, {} rejected, {} restarts",
                r.stats.n_accept, r.stats.n_reject, r.stats.n_restart
            );
            assert_eq!(r.stats.n_restart, 1, "{name}: one crossing");
            assert!(err < 1e-6, "{name} rtol {rtol}: error {err}");
        }
    }
}
