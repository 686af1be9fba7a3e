//! The explicit Runge-Kutta driver: orders, tolerance, dense output, events.

use jounce_integrate::testkit::{empirical_order, max_abs_diff, InverseTimeRotation};
use jounce_integrate::*;

#[test]
fn rk4_and_dopri5_reach_their_orders() {
    let t0 = 1.0 / std::f64::consts::PI;
    let t1 = t0 + 0.5;
    let y0 = InverseTimeRotation::exact(t0);
    let ex = InverseTimeRotation::exact(t1);
    for (name, p, h0) in [("rk4", 4.0, 0.02), ("dopri5", 5.0, 0.05)] {
        let (slope, errs) = empirical_order(
            name,
            &mut InverseTimeRotation,
            t0,
            &y0,
            t1,
            &ex,
            h0,
            5,
            &SolverOptions::default(),
        )
        .unwrap();
        assert!(
            (slope - p).abs() < 0.2,
            "{name}: slope {slope}, errors {errs:?}"
        );
    }
}

#[test]
fn dopri5_meets_tolerance_and_dense_output_is_accurate() {
    let t0 = 1.0 / std::f64::consts::PI;
    let t1 = 2.0;
    let y0 = InverseTimeRotation::exact(t0);
    let opts = SolverOptions {
        output: OutputGrid::Every(0.01),
        ..SolverOptions::default().with_tol(1e-9, 1e-12)
    };
    let mut st = method::build("dopri5", &opts).unwrap();
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
    .unwrap();
    assert_eq!(*rec.t.last().unwrap(), t1);
    let mut worst = 0.0f64;
    for (t, y) in rec.t.iter().zip(&rec.y) {
        worst = worst.max(max_abs_diff(y, &InverseTimeRotation::exact(*t)));
    }
    assert!(worst < 1e-7, "dense-output error {worst}");
    assert!(r.stats.n_accept > 10 && r.stats.n_rhs > 6 * r.stats.n_accept);
}

/// A ball falling from 1 m under g = 9.81: the event y = 0 at t = sqrt(2/g).
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
fn terminal_event_is_located_on_the_dense_output() {
    let opts = SolverOptions::default().with_tol(1e-8, 1e-10);
    let mut st = method::build("dopri5", &opts).unwrap();
    let mut rec = Recorder::default();
    let r = solve(
        &mut Falling,
        st.as_mut(),
        0.0,
        &[1.0, 0.0],
        5.0,
        &opts,
        &mut rec,
    )
    .unwrap();
    let (te, idx) = r.terminal_event.expect("the ball must hit the ground");
    assert_eq!(idx, 0);
    assert!((te - (2.0f64 / 9.81).sqrt()).abs() < 1e-12, "{te}");
}
