//! A problem that projects its state after every step (StepFix::Corrected)
//! must not cost multistep methods their history: the harmonic oscillator
//! projected onto its invariant circle |y| = 1.

use jounce_integrate::*;

struct ProjectedOscillator {
    /// Report projections as Corrected (keep history) or Modified (restart).
    keep_history: bool,
}

impl OdeProblem for ProjectedOscillator {
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        dy[0] = y[1];
        dy[1] = -y[0];
        Ok(())
    }
    fn after_step(&mut self, _t: f64, y: &mut [f64]) -> Result<StepFix, EvalError> {
        let r = (y[0] * y[0] + y[1] * y[1]).sqrt();
        if (r - 1.0).abs() <= 1e-14 {
            return Ok(StepFix::Unchanged);
        }
        y[0] /= r;
        y[1] /= r;
        Ok(if self.keep_history {
            StepFix::Corrected
        } else {
            StepFix::Modified
        })
    }
}

const T1: f64 = 20.0;

fn attempt(name: &str, keep_history: bool) -> Result<Solved, SolveFailure> {
    let opts = SolverOptions {
        max_steps: 50_000,
        ..SolverOptions::default().with_tol(1e-8, 1e-10)
    };
    let mut st = method::build(name, &opts).unwrap();
    solve(
        &mut ProjectedOscillator { keep_history },
        st.as_mut(),
        0.0,
        &[1.0, 0.0],
        T1,
        &opts,
        &mut Discard,
    )
}

fn run(name: &str, keep_history: bool) -> (Solved, f64) {
    let r = attempt(name, keep_history).unwrap_or_else(|e| panic!("{name}: {e}"));
    let err = ((r.y[0] - T1.cos()).powi(2) + (r.y[1] + T1.sin()).powi(2)).sqrt();
    (r, err)
}

#[test]
fn projections_keep_the_multistep_history() {
    for name in ["bdf", "ndf", "adams_vo", "pece"] {
        let (kept, e_kept) = run(name, true);
        assert!(kept.stats.n_corrections > 10, "{name}: {:?}", kept.stats);
        assert_eq!(kept.stats.n_restart, 0);
        assert!(e_kept < 1e-5, "{name}: error {e_kept}");
        // a restart at order 1 after every projection costs many more steps,
        // or never finishes (bdf: 1e6 steps for t < 6.1 without the budget)
        let restarted = match attempt(name, false) {
            Ok(r) => r.stats.n_accept,
            Err(f) => {
                assert!(
                    matches!(f.error, IntegrateError::TooManySteps { .. }),
                    "{name}: {f}"
                );
                f.stats.n_accept
            }
        };
        println!(
            "{name}: keep history {} steps (error {e_kept:.1e}), restart {restarted} steps",
            kept.stats.n_accept
        );
        assert!(
            3 * kept.stats.n_accept < restarted,
            "{name}: {} vs {restarted}",
            kept.stats.n_accept
        );
    }
}

#[test]
fn one_step_methods_restart_on_a_correction_at_no_loss() {
    // the default `correct` restarts: fine for one-step methods
    let (r, e) = run("dopri5", true);
    assert!(r.stats.n_corrections > 0);
    assert!(e < 1e-6, "{e}");
}
