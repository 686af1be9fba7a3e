//! The stability-limit control of bdf and ndf
//! (`multistep/stability_limit.rs`) on the linear test equation
//! y' = λ y with a lightly damped λ = ω(−ζ + i√(1 − ζ²)), ω = 1e4,
//! ζ = 0.01 (testkit::LinearTest): from y(0) = 1 the mode decays by e^{−100 t}
//! and the solution is zero to the tolerance after t ≈ 0.2 of [0, 2].
//! BDF3–5 amplify this mode at hω ≈ 0.35–1; without the control the
//! order selection settles there once the mode has decayed and sustains
//! it at the tolerance for the rest of the run.

use jounce_integrate::testkit::LinearTest;
use jounce_integrate::*;

const OMEGA: f64 = 1e4;
const ZETA: f64 = 0.01;
const T_END: f64 = 2.0;
/// Accepted steps after this time are counted: the mode is at e^{−50}.
const T_LATE: f64 = 0.5;

struct Late {
    n: u64,
    max_abs: f64,
}

impl<P: ?Sized> Observer<P> for Late {
    fn output(&mut self, _p: &mut P, t: f64, y: &[f64]) -> Result<(), EvalError> {
        if t > T_LATE {
            self.n += 1;
            self.max_abs = self.max_abs.max(y[0].abs()).max(y[1].abs());
        }
        Ok(())
    }
}

fn run(name: &str, rtol: f64) -> (Stats, Late) {
    run_mode(name, rtol, ZETA, OMEGA, T_END, None)
}

fn run_mode(
    name: &str,
    rtol: f64,
    zeta: f64,
    omega: f64,
    t_end: f64,
    max_order: Option<usize>,
) -> (Stats, Late) {
    let mut opts = SolverOptions::default().with_tol(rtol, rtol * 1e-3);
    if let Some(k) = max_order {
        opts = opts.with_param("max_order", k as f64);
    }
    let mut st = method::build(name, &opts).unwrap();
    let mut p = LinearTest {
        a: -zeta * omega,
        b: omega * (1.0 - zeta * zeta).sqrt(),
    };
    let mut late = Late { n: 0, max_abs: 0.0 };
    let r = solve(
        &mut p,
        st.as_mut(),
        0.0,
        &[1.0, 0.0],
        t_end,
        &opts,
        &mut late,
    )
    .unwrap_or_else(|f| panic!("{name} rtol {rtol}: {f}"));
    println!(
        "{name} rtol {rtol:.0e}: {} steps ({} rejected), {} after t = {T_LATE}, max |y| there {:.1e}",
        r.stats.n_accept, r.stats.n_reject, late.n, late.max_abs
    );
    (r.stats, late)
}

#[test]
fn a_decayed_lightly_damped_mode_is_not_sustained() {
    for name in ["bdf", "ndf"] {
        for rtol in [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8] {
            let (_, late) = run(name, rtol);
            // measured 5 – 8 steps, |y| ≤ 3e-13 (exact: 2e-22); before the
            // control at rtol 1e-3 bdf took 19 349 steps there and kept the
            // mode at |y| = 1.2e-5, ten times atol
            assert!(late.n <= 20, "{name} rtol {rtol}: {} late steps", late.n);
            assert!(
                late.max_abs < rtol * 1e-3,
                "{name} rtol {rtol}: |y| = {} late",
                late.max_abs
            );
        }
    }
}

/// An undamped oscillation resolved for accuracy is not a stability
/// problem: BDF3 and BDF4 amplify y' = iωy at every step size, by about
/// 0.2 (hω)⁴ and less per step, which is truncation error within the
/// tolerance (the η term of the rule). The high orders stay in use:
/// variable order needs far fewer steps than orders 1–2 over 20 periods
/// (bdf: 1 227 against 14 569 at rtol 1e-6, 3 511 against 143 930 at
/// 1e-9), the same counts as before the control.
#[test]
fn an_undamped_oscillation_keeps_the_high_orders() {
    for name in ["bdf", "ndf"] {
        for rtol in [1e-6, 1e-9] {
            let t_end = 40.0 * std::f64::consts::PI;
            let (vo, _) = run_mode(name, rtol, 0.0, 1.0, t_end, None);
            let (o2, _) = run_mode(name, rtol, 0.0, 1.0, t_end, Some(2));
            println!(
                "{name} rtol {rtol:.0e}: {} steps vs {} at max_order 2",
                vo.n_accept, o2.n_accept
            );
            assert!(
                3 * vo.n_accept < o2.n_accept,
                "{name} rtol {rtol}: {} vs {} steps",
                vo.n_accept,
                o2.n_accept
            );
        }
    }
}
