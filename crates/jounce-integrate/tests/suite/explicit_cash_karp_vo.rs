//! The variable-order Cash–Karp stepper on rapidly varying right-hand
//! sides: early quits save work at sharp transients, accuracy is kept.

use jounce_integrate::explicit::CashKarpVo;
use jounce_integrate::testkit::Discard;
use jounce_integrate::*;

/// y' = ε / (ε² + (t − 1)²): a spike of width ε at t = 1, with
/// y(t) = arctan((t − 1)/ε) − arctan(−1/ε) from y(0) = 0; a second,
/// smooth component z' = −z, z = e^(−t).
struct Spike {
    eps: f64,
}

impl Spike {
    fn exact(&self, t: f64) -> [f64; 2] {
        [
            ((t - 1.0) / self.eps).atan() - (-1.0 / self.eps).atan(),
            (-t).exp(),
        ]
    }
}

impl OdeProblem for Spike {
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        let d = t - 1.0;
        dy[0] = self.eps / (self.eps * self.eps + d * d);
        dy[1] = -y[1];
        Ok(())
    }
}

fn run_both(
    p: &mut dyn FnMut() -> Box<dyn OdeProblem>,
    y0: &[f64],
    tol: f64,
) -> (Solved, CashKarpVo, Solved) {
    let opts = SolverOptions::default().with_tol(tol, tol);
    let mut vo = CashKarpVo::new();
    let r_vo = solve(p().as_mut(), &mut vo, 0.0, y0, 2.0, &opts, &mut Discard).unwrap();
    let mut ck = method::build("cash_karp", &opts).unwrap();
    let r_ck = solve(p().as_mut(), ck.as_mut(), 0.0, y0, 2.0, &opts, &mut Discard).unwrap();
    (r_vo, vo, r_ck)
}

#[test]
fn early_quits_at_a_spike_save_work_and_keep_accuracy() {
    let (mut rhs_vo, mut rhs_ck) = (0, 0);
    for eps in [1e-2, 1e-3] {
        let ex = Spike { eps }.exact(2.0);
        for tol in [1e-4, 1e-6, 1e-8] {
            let (r_vo, vo, r_ck) = run_both(&mut || Box::new(Spike { eps }), &[0.0, 1.0], tol);
            let e_vo = testkit::max_abs_diff(&r_vo.y, &ex);
            let e_ck = testkit::max_abs_diff(&r_ck.y, &ex);
            println!(
                "spike eps {eps:e} tol {tol:e}: vo err {e_vo:.2e} rhs {} quits {:?} | cash_karp err {e_ck:.2e} rhs {}",
                r_vo.stats.n_rhs,
                vo.quits(),
                r_ck.stats.n_rhs
            );
            assert!(
                vo.quits().iter().sum::<u64>() > 0,
                "no early quit at the spike"
            );
            assert!(e_vo <= 20.0 * tol, "eps {eps}, tol {tol}: error {e_vo}");
            rhs_vo += r_vo.stats.n_rhs;
            rhs_ck += r_ck.stats.n_rhs;
        }
    }
    assert!(
        rhs_vo < rhs_ck,
        "variable order cost {rhs_vo} evaluations, cash_karp {rhs_ck}"
    );
}

/// y' = H(t − 1) + sin 10t: a jump in f at t = 1, y(2) = 1 + (1 − cos 20)/10.
struct Jump;

impl OdeProblem for Jump {
    fn dim(&self) -> usize {
        1
    }
    fn rhs(&mut self, t: f64, _y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        dy[0] = if t < 1.0 { 0.0 } else { 1.0 } + (10.0 * t).sin();
        Ok(())
    }
}

#[test]
fn lower_order_solutions_carry_the_step_across_a_jump() {
    let ex = 1.0 + (1.0 - 20f64.cos()) / 10.0;
    for tol in [1e-4, 1e-6, 1e-8] {
        let (r_vo, vo, r_ck) = run_both(&mut || Box::new(Jump), &[0.0], tol);
        let (e_vo, e_ck) = ((r_vo.y[0] - ex).abs(), (r_ck.y[0] - ex).abs());
        println!(
            "jump tol {tol:e}: vo err {e_vo:.2e} rhs {} quits {:?} low-order steps {} | cash_karp err {e_ck:.2e} rhs {}",
            r_vo.stats.n_rhs,
            vo.quits(),
            vo.low_order_steps(),
            r_ck.stats.n_rhs
        );
        assert!(
            vo.low_order_steps() > 0,
            "tol {tol}: no lower-order step at the jump"
        );
        assert!(e_vo <= 20.0 * tol, "tol {tol}: error {e_vo}");
    }
}

#[test]
fn fixed_steps_are_the_fifth_order_cash_karp_steps() {
    let opts = SolverOptions::default();
    let t0 = 1.0 / std::f64::consts::PI;
    let y0 = testkit::InverseTimeRotation::exact(t0);
    let a = testkit::run_fixed(
        "cash_karp_vo",
        &mut testkit::InverseTimeRotation,
        t0,
        &y0,
        1.0,
        0.01,
        &opts,
    )
    .unwrap();
    let b = testkit::run_fixed(
        "cash_karp",
        &mut testkit::InverseTimeRotation,
        t0,
        &y0,
        1.0,
        0.01,
        &opts,
    )
    .unwrap();
    assert!(testkit::max_abs_diff(&a, &b) < 1e-14, "{a:?} vs {b:?}");
}
