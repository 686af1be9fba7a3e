//! Event location on the continuous solutions of the explicit methods:
//! a bouncing ball (impacts against the closed form) and direction filters.

use jounce_integrate::*;

const G: f64 = 9.81;
/// Coefficient of restitution.
const E: f64 = 0.8;

/// Free flight y = (height, velocity), y' = (v, −g), with two event
/// functions: the height (impact, terminal, direction `impact_dir`) and
/// the velocity (apex, non-terminal, direction `apex_dir`).
struct Ball {
    impact_dir: EventDirection,
    apex_dir: EventDirection,
}

impl OdeProblem for Ball {
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        dy[0] = y[1];
        dy[1] = -G;
        Ok(())
    }
    fn n_events(&self) -> usize {
        2
    }
    fn events(&mut self, _t: f64, y: &[f64], g: &mut [f64]) -> Result<(), EvalError> {
        g[0] = y[0];
        g[1] = y[1];
        Ok(())
    }
    fn event_spec(&self, i: usize) -> EventSpec {
        if i == 0 {
            EventSpec {
                direction: self.impact_dir,
                terminal: true,
            }
        } else {
            EventSpec {
                direction: self.apex_dir,
                terminal: false,
            }
        }
    }
}

/// Closed form from a drop at rest from height 1 m: first impact at
/// t₁ = sqrt(2/g) with speed v₁ = g t₁; flight k (k ≥ 1) after impact k
/// lasts 2 eᵏ v₁ / g, its apex is at half of it.
fn impacts_and_apexes(n: usize) -> (Vec<f64>, Vec<f64>) {
    let t1 = (2.0 / G).sqrt();
    let v1 = G * t1;
    let (mut imp, mut apex) = (vec![t1], Vec::new());
    for k in 1..n {
        let v = E.powi(k as i32) * v1;
        let last = imp[k - 1];
        apex.push(last + v / G);
        imp.push(last + 2.0 * v / G);
    }
    (imp, apex)
}

/// Bounce `n` times: integrate to the terminal impact event, reverse and
/// damp the velocity, restart there. Returns impact times and apex times.
fn bounce(name: &str, n: usize, apex_dir: EventDirection) -> (Vec<f64>, Vec<f64>) {
    // the flight is a quadratic in t: every method of order ≥ 2 is exact on
    // it up to round-off, so the low-order pair runs at a loose tolerance
    let tol = if name == "heun" { 1e-5 } else { 1e-10 };
    let opts = SolverOptions::default().with_tol(tol, 1e-2 * tol);
    let mut ball = Ball {
        impact_dir: EventDirection::Falling,
        apex_dir,
    };
    let (mut t, mut y) = (0.0, vec![1.0, 0.0]);
    let (mut imp, mut apex) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let mut st = method::build(name, &opts).unwrap();
        let mut rec = Recorder::default();
        let r = solve(&mut ball, st.as_mut(), t, &y, t + 10.0, &opts, &mut rec)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let (te, idx) = r.terminal_event.expect("the ball must land");
        assert_eq!(idx, 0);
        apex.extend(rec.events.iter().filter(|e| e.1 == 1).map(|e| e.0));
        imp.push(te);
        t = te;
        // the run ends at the located root, where the height is zero
        assert_eq!(r.t, te);
        assert_eq!(rec.t.last(), Some(&te));
        assert_eq!(rec.y.last(), Some(&r.y));
        assert!(r.y[0].abs() < 1e-9, "{name}: height {} at impact", r.y[0]);
        y = vec![0.0, -E * r.y[1]];
    }
    (imp, apex)
}

#[test]
fn bouncing_ball_impacts_match_the_closed_form() {
    let n = 6;
    let (imp_exact, apex_exact) = impacts_and_apexes(n);
    for name in [
        "dopri5",
        "dop853",
        "cash_karp",
        "rkf45",
        "heun",
        "cash_karp_vo",
    ] {
        let (imp, apex) = bounce(name, n, EventDirection::Falling);
        for (k, (a, b)) in imp.iter().zip(&imp_exact).enumerate() {
            assert!(
                (a - b).abs() < 1e-10,
                "{name}: impact {k} at {a}, exact {b}"
            );
        }
        // apexes: v crosses zero from + to − once per flight after the first
        assert_eq!(apex.len(), n - 1, "{name}: apexes {apex:?}");
        for (a, b) in apex.iter().zip(&apex_exact) {
            assert!((a - b).abs() < 1e-10, "{name}: apex at {a}, exact {b}");
        }
    }
}

#[test]
fn direction_filters_are_respected() {
    let n = 3;
    // v only decreases in flight: a Rising filter on v never fires
    let (_, apex) = bounce("dopri5", n, EventDirection::Rising);
    assert!(apex.is_empty(), "rising velocity events {apex:?}");
    // Both behaves like Falling here
    let (_, apex) = bounce("dop853", n, EventDirection::Both);
    assert_eq!(apex.len(), n - 1);
    // a Rising impact filter ignores the landing: the ball falls through
    // the floor and is stopped by t_end instead
    let opts = SolverOptions::default().with_tol(1e-10, 1e-12);
    let mut ball = Ball {
        impact_dir: EventDirection::Rising,
        apex_dir: EventDirection::Rising,
    };
    let mut st = method::build("dopri5", &opts).unwrap();
    let r = solve(
        &mut ball,
        st.as_mut(),
        0.0,
        &[1.0, 0.0],
        1.0,
        &opts,
        &mut Recorder::default(),
    )
    .unwrap();
    assert!(r.terminal_event.is_none());
    assert!((r.y[0] - (1.0 - 0.5 * G)).abs() < 1e-9);
}

/// Harmonic oscillator q'' = −q with q = cos t: roots of q at π/2 + kπ,
/// falling at π/2 + 2kπ; located on a non-polynomial continuous solution.
struct Oscillator;

impl OdeProblem for Oscillator {
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        dy[0] = y[1];
        dy[1] = -y[0];
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
            terminal: false,
        }
    }
}

#[test]
fn non_terminal_events_on_dense_output_of_a_smooth_solution() {
    use std::f64::consts::PI;
    for (name, tol, acc) in [("dop853", 1e-12, 1e-10), ("dopri5", 1e-11, 1e-9)] {
        let opts = SolverOptions::default().with_tol(tol, tol);
        let mut st = method::build(name, &opts).unwrap();
        let mut rec = Recorder::default();
        solve(
            &mut Oscillator,
            st.as_mut(),
            0.0,
            &[1.0, 0.0],
            20.0,
            &opts,
            &mut rec,
        )
        .unwrap();
        let times: Vec<f64> = rec.events.iter().map(|e| e.0).collect();
        // falling zeros in (0, 20]: π/2, 5π/2, 9π/2
        assert_eq!(times.len(), 3, "{name}: {times:?}");
        for (k, t) in times.iter().enumerate() {
            let exact = PI / 2.0 + 2.0 * PI * k as f64;
            assert!(
                (t - exact).abs() < acc,
                "{name}: event {k} at {t}, exact {exact}"
            );
        }
    }
}

/// The ball with its impact law inside the problem: the impact event is
/// not terminal, [`OdeProblem::handle_event`] reverses and damps the
/// velocity (v⁺ = −e v⁻), and one run of the driver bounces on.
struct BouncingBall {
    impact_dir: EventDirection,
}

impl OdeProblem for BouncingBall {
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        dy[0] = y[1];
        dy[1] = -G;
        Ok(())
    }
    fn n_events(&self) -> usize {
        2
    }
    fn events(&mut self, _t: f64, y: &[f64], g: &mut [f64]) -> Result<(), EvalError> {
        g[0] = y[0];
        g[1] = y[1];
        Ok(())
    }
    fn event_spec(&self, i: usize) -> EventSpec {
        EventSpec {
            direction: if i == 0 {
                self.impact_dir
            } else {
                EventDirection::Falling
            },
            terminal: false,
        }
    }
    fn handle_event(&mut self, i: usize, _t: f64, y: &mut [f64]) -> Result<EventAction, EvalError> {
        if i != 0 {
            return Ok(EventAction::Continue);
        }
        y[0] = 0.0;
        y[1] *= -E;
        Ok(EventAction::StateChanged)
    }
}

#[test]
fn impacts_change_the_state_inside_one_run() {
    let n = 6;
    let (imp_exact, apex_exact) = impacts_and_apexes(n);
    // both direction filters: the impact that just fired must not be found
    // again when the ball leaves the ground
    for impact_dir in [EventDirection::Falling, EventDirection::Both] {
        for name in ["dopri5", "dop853", "radau5", "bdf", "rodas4"] {
            let tol = 1e-10;
            let opts = SolverOptions::default().with_tol(tol, 1e-2 * tol);
            let mut ball = BouncingBall { impact_dir };
            let mut st = method::build(name, &opts).unwrap();
            let mut rec = Recorder::default();
            // until just after impact n (flights shrink by e each bounce)
            let t_end = imp_exact[n - 1] + 0.01;
            let r = solve(
                &mut ball,
                st.as_mut(),
                0.0,
                &[1.0, 0.0],
                t_end,
                &opts,
                &mut rec,
            )
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            let imp: Vec<f64> = rec
                .events
                .iter()
                .filter(|e| e.1 == 0)
                .map(|e| e.0)
                .collect();
            let apex: Vec<f64> = rec
                .events
                .iter()
                .filter(|e| e.1 == 1)
                .map(|e| e.0)
                .collect();
            assert_eq!(imp.len(), n, "{name} {impact_dir:?}: impacts {imp:?}");
            assert_eq!(r.stats.n_events as usize, imp.len() + apex.len());
            // the flight is quadratic: the low-order methods are exact up
            // to round-off and the location error; bdf and radau5 control
            // an error per step that grows with the bounces
            let bound = if matches!(name, "dopri5" | "dop853") {
                1e-10
            } else {
                1e-6
            };
            for (k, (a, b)) in imp.iter().zip(&imp_exact).enumerate() {
                assert!(
                    (a - b).abs() < bound,
                    "{name}: impact {k} at {a}, exact {b}"
                );
            }
            assert_eq!(apex.len(), n - 1, "{name}: apexes {apex:?}");
            for (a, b) in apex.iter().zip(&apex_exact) {
                assert!((a - b).abs() < bound, "{name}: apex at {a}, exact {b}");
            }
            // y⁻ and y⁺ are both reported at an impact: the output times
            // repeat the impact time, with the velocity reversed
            let k = rec.t.iter().position(|t| *t == imp[0]).unwrap();
            assert_eq!(rec.t[k + 1], imp[0]);
            assert!((rec.y[k + 1][1] + E * rec.y[k][1]).abs() < 1e-12);
        }
    }
}
