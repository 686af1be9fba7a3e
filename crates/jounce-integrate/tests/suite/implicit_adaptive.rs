//! Adaptive implicit methods: tolerance proportionality, dense output,
//! non-autonomous problems, events, and the refusal of fixed-step-only
//! methods to run without a step size.

use jounce_integrate::testkit::{max_abs_diff, InverseTimeRotation};
use jounce_integrate::*;

fn run_dense(name: &str, rtol: f64, dt: f64) -> (f64, Solved) {
    let t0 = 1.0 / std::f64::consts::PI;
    let t1 = 2.0;
    let y0 = InverseTimeRotation::exact(t0);
    let opts = SolverOptions {
        output: OutputGrid::Every(dt),
        ..SolverOptions::default().with_tol(rtol, rtol)
    };
    let mut st = method::build(name, &opts).unwrap();
    let mut rec = Recorder::default();
    let r = solve(
        &mut InverseTimeRotation,
        st.as_mut(),
        t0,
        &y0,
        t1,
        &opts,
        &mut rec,
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(*rec.t.last().unwrap(), t1);
    let mut worst = 0.0f64;
    for (t, y) in rec.t.iter().zip(&rec.y) {
        worst = worst.max(max_abs_diff(y, &InverseTimeRotation::exact(*t)));
    }
    (worst, r)
}

#[test]
fn radau5_works_at_rtol_1e_12_and_its_error_follows_the_tolerance() {
    let mut prev = f64::INFINITY;
    for rtol in [1e-6, 1e-9, 1e-12] {
        let (worst, r) = run_dense("radau5", rtol, 0.01);
        let e_end = max_abs_diff(&r.y, &InverseTimeRotation::exact(2.0));
        println!(
            "radau5 rtol {rtol:e}: dense error {worst:.2e}, end error {e_end:.2e}, {:?}",
            r.stats
        );
        // the step values are within a small multiple of the tolerance; the
        // dense output (collocation polynomial, stage order 3: local error
        // O(h^4)) is less accurate than the order-5 step values
        assert!(e_end < 10.0 * rtol, "rtol {rtol}: end error {e_end}");
        assert!(worst < 1000.0 * rtol, "rtol {rtol}: dense error {worst}");
        assert!(worst < prev);
        prev = worst;
    }
}

#[test]
fn adaptive_methods_meet_tolerance_on_their_dense_output() {
    for (name, rtol, factor) in [
        ("rodas4", 1e-7, 100.0),
        ("ode23s", 1e-5, 300.0),
        ("trbdf2", 1e-6, 300.0),
        ("esdirk43", 1e-7, 100.0),
    ] {
        let (worst, r) = run_dense(name, rtol, 0.013);
        println!(
            "{name} rtol {rtol:e}: dense error {worst:.2e}, {:?}",
            r.stats
        );
        assert!(worst < factor * rtol, "{name}: dense-output error {worst}");
        assert!(r.stats.n_accept > 5);
    }
}

/// y' = λ(y − sin t) + cos t, y(0) = 0, has y = sin t for every λ: stiff
/// and non-autonomous, so Rosenbrock methods need ∂f/∂t.
struct StiffForced {
    lambda: f64,
}
impl OdeProblem for StiffForced {
    fn dim(&self) -> usize {
        1
    }
    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        dy[0] = self.lambda * (y[0] - t.sin()) + t.cos();
        Ok(())
    }
    fn jacobian(
        &mut self,
        _t: f64,
        _y: &[f64],
        j: &mut nalgebra::DMatrix<f64>,
    ) -> Result<(), EvalError> {
        j[(0, 0)] = self.lambda;
        Ok(())
    }
    fn has_exact_jacobian(&self) -> bool {
        true
    }
}

#[test]
fn non_autonomous_stiff_problem_keeps_the_order_of_rosenbrock_and_radau() {
    for (name, p, h0) in [
        ("rodas4", 4.0, 0.2),
        ("ode23s", 2.0, 0.05),
        ("radau5", 5.0, 0.2),
    ] {
        let (slope, errs) = testkit::empirical_order(
            name,
            &mut StiffForced { lambda: -2.0 },
            0.0,
            &[0.0],
            2.0,
            &[2f64.sin()],
            h0,
            4,
            &SolverOptions::default().with_tol(1e-13, 1e-13),
        )
        .unwrap();
        println!("{name}: slope {slope}, {errs:?}");
        assert!((slope - p).abs() < 0.2, "{name}: slope {slope}, {errs:?}");
    }
    // very stiff: the adaptive methods follow y = sin t with few steps
    for name in ["rodas4", "ode23s", "radau5", "trbdf2", "esdirk43"] {
        let opts = SolverOptions::default().with_tol(1e-5, 1e-7);
        let mut st = method::build(name, &opts).unwrap();
        let r = solve(
            &mut StiffForced { lambda: -1e6 },
            st.as_mut(),
            0.0,
            &[0.0],
            10.0,
            &opts,
            &mut testkit::Discard,
        )
        .unwrap();
        let e = (r.y[0] - 10f64.sin()).abs();
        println!("{name}: error {e:.2e} {:?}", r.stats);
        assert!(e < 1e-5, "{name}: error {e}");
        assert!(r.stats.n_accept < 3000, "{name}: {:?}", r.stats);
    }
}

/// A ball falling from 1 m: the terminal event y = 0 at sqrt(2/g),
/// located on each method's continuous solution.
struct Falling;
impl OdeProblem for Falling {
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        dy[0] = y[1];
        dy[1] = -9.81;
        Ok(())
    }
    fn n_events(&self) -> usize {
        1
    }
    fn events(&mut self, _t: f64, y: &[f64], g: &mut [f64]) -> Result<(), EvalError> {
        g[0] = y[0];
        Ok(())
    }
    fn event_spec(&self, _i: usize) -> EventSpec {
        EventSpec {
            direction: EventDirection::Falling,
            terminal: true,
        }
    }
}

#[test]
fn events_are_located_on_the_dense_output() {
    // quadratic solution: reproduced exactly by the degree-3 collocation
    // polynomial and by cubic Hermite interpolation of exact end values
    for name in ["radau5", "rodas4", "trbdf2", "ode23s", "esdirk43"] {
        let opts = SolverOptions::default().with_tol(1e-8, 1e-10);
        let mut st = method::build(name, &opts).unwrap();
        let r = solve(
            &mut Falling,
            st.as_mut(),
            0.0,
            &[1.0, 0.0],
            5.0,
            &opts,
            &mut Recorder::default(),
        )
        .unwrap();
        let (te, _) = r.terminal_event.expect("the ball must hit the ground");
        assert!((te - (2.0f64 / 9.81).sqrt()).abs() < 1e-9, "{name}: {te}");
    }
}

/// With the error per step controlled to rtol, the global error of an
/// order-p method scales as rtol^(p/(p+1)) (HNW I, II.4, "tolerance
/// proportionality"): a 100 times tighter tolerance must reduce it by
/// about 100^(p/(p+1)). This holds only if the error estimate is right.
#[test]
fn step_doubling_makes_the_tableaux_without_a_pair_adaptive() {
    for (name, rtol) in [
        ("backward_euler", 1e-4),
        ("trapezoidal", 1e-5),
        ("implicit_midpoint", 1e-5),
        ("sdirk2", 1e-5),
        ("sdirk3", 1e-5),
    ] {
        let p = method::find(name).unwrap().info.order as f64;
        let mut errs = Vec::new();
        for r in [rtol, rtol / 100.0] {
            let (worst, sol) = run_dense(name, r, 0.013);
            let e_end = max_abs_diff(&sol.y, &InverseTimeRotation::exact(2.0));
            println!(
                "{name} rtol {r:e}: end error {e_end:.2e}, dense {worst:.2e}, {:?}",
                sol.stats
            );
            errs.push(e_end);
        }
        let ratio = errs[0] / errs[1];
        let want = 100f64.powf(p / (p + 1.0));
        println!("{name}: ratio {ratio:.1}, expected {want:.1}");
        assert!(
            ratio > want / 1.5 && ratio < want * 1.5,
            "{name}: error ratio {ratio} for a 100x tighter tolerance, expected about {want}"
        );
        assert!(errs[0] < 0.05, "{name}: error {}", errs[0]);
    }
}
