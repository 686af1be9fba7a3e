//! Empirical convergence orders of every explicit method at fixed steps,
//! and the local order of the continuous extensions.

use jounce_integrate::testkit::{
    empirical_order, forced_duffing, loglog_slope, max_abs_diff, ForcedDuffing,
    InverseTimeRotation, LinearTest,
};
use jounce_integrate::*;

#[test]
fn every_explicit_method_reaches_its_order_on_a_nonlinear_problem() {
    // x(t) = [sin(1/t), cos(1/t), t] on [1/π, 1/π + 0.5]
    // (method, order, largest step, halvings): steps chosen in the
    // asymptotic range and, for dop853, above round-off (on a later,
    // smoother interval t ∈ [1, 4])
    let cases = [
        ("euler", 1.0, 2e-3, 5),
        ("midpoint", 2.0, 5e-3, 5),
        ("heun", 2.0, 5e-3, 5),
        ("ralston", 2.0, 5e-3, 5),
        ("rk4", 4.0, 0.02, 5),
        ("rkf45", 4.0, 0.02, 5),
        ("cash_karp", 5.0, 0.05, 5),
        ("cash_karp_vo", 5.0, 0.05, 5),
        ("dopri5", 5.0, 0.05, 5),
        ("dop853", 8.0, 0.5, 4),
    ];
    for (name, p, h0, levels) in cases {
        let t0 = if name == "dop853" {
            1.0
        } else {
            1.0 / std::f64::consts::PI
        };
        let t1 = if name == "dop853" { 4.0 } else { t0 + 0.5 };
        let y0 = InverseTimeRotation::exact(t0);
        let ex = InverseTimeRotation::exact(t1);
        let (slope, errs) = empirical_order(
            name,
            &mut InverseTimeRotation,
            t0,
            &y0,
            t1,
            &ex,
            h0,
            levels,
            &SolverOptions::default(),
        )
        .unwrap();
        println!("{name}: slope {slope:.3}, errors {errs:?}");
        assert!(
            (slope - p).abs() < 0.2,
            "{name}: slope {slope}, expected {p}; errors {errs:?}"
        );
    }
}

#[test]
fn orders_hold_on_the_forced_duffing_oscillator_too() {
    let t1 = 2.0;
    let ex = ForcedDuffing::exact(t1);
    for (name, p, h0) in [
        ("heun", 2.0, 0.02),
        ("rkf45", 4.0, 0.1),
        ("dopri5", 5.0, 0.1),
    ] {
        let (slope, errs) = empirical_order(
            name,
            &mut forced_duffing(),
            0.0,
            &ForcedDuffing::exact(0.0),
            t1,
            &ex,
            h0,
            4,
            &SolverOptions::default(),
        )
        .unwrap();
        assert!((slope - p).abs() < 0.2, "{name}: slope {slope}; {errs:?}");
    }
}

/// Error of the continuous extension at θ = 1/2 of one step of size h taken
/// from the exact solution at t0 (the problem given by `exact`).
fn dense_error_at_half_step(
    name: &str,
    p: &mut dyn OdeProblem,
    exact: &dyn Fn(f64) -> Vec<f64>,
    h: f64,
    t0: f64,
) -> f64 {
    let opts = SolverOptions {
        output: OutputGrid::Every(h / 2.0),
        ..SolverOptions::default().with_fixed_step(h)
    };
    let mut st = method::build(name, &opts).unwrap();
    let mut stats = Stats::default();
    let mut ctx = StepContext {
        opts: &opts,
        stats: &mut stats,
    };
    st.reset(p, t0, &exact(t0), &mut ctx).unwrap();
    st.step(p, t0 + h, &mut ctx).unwrap();
    // as the driver does before interpolating in a step (DOP853's extra
    // stages are formed here)
    st.prepare_dense_output(p).unwrap();
    let mut y = vec![0.0; p.dim()];
    st.interpolate(t0 + 0.5 * h, &mut y);
    max_abs_diff(&y, &exact(t0 + 0.5 * h))
}

#[test]
fn dop853_dense_output_on_request_without_grid_output() {
    // with_dense_output forms the 7th-order extension even for OutputGrid::Steps
    use jounce_integrate::explicit::{tableau, ExplicitRk};
    let h = 0.2;
    let opts = SolverOptions::default().with_fixed_step(h);
    let mut p = InverseTimeRotation;
    let t0 = 1.5;
    let mut errs = Vec::new();
    for mut st in [
        ExplicitRk::new(&tableau::DOP853).with_dense_output(),
        ExplicitRk::new(&tableau::DOP853),
    ] {
        let mut stats = Stats::default();
        let mut ctx = StepContext {
            opts: &opts,
            stats: &mut stats,
        };
        st.reset(&mut p, t0, &InverseTimeRotation::exact(t0), &mut ctx)
            .unwrap();
        st.step(&mut p, t0 + h, &mut ctx).unwrap();
        let mut y = [0.0; 3];
        st.interpolate(t0 + 0.5 * h, &mut y);
        errs.push(max_abs_diff(&y, &InverseTimeRotation::exact(t0 + 0.5 * h)));
    }
    // the Hermite fallback is third order: far less accurate at this step
    assert!(errs[0] < 1e-9 && errs[1] > 100.0 * errs[0], "{errs:?}");
}

#[test]
fn dense_output_has_the_local_order_of_its_continuous_extension() {
    // a continuous extension of order q has local error O(h^(q+1)) inside the step
    let rot = |t: f64| InverseTimeRotation::exact(t).to_vec();
    // z' = λz with λ = −0.5 + 2i as a real 2-vector
    let (lr, li) = (-0.5, 2.0);
    let lin = move |t: f64| {
        let m = (lr * t).exp();
        vec![m * (li * t).cos(), m * (li * t).sin()]
    };
    let cases: [(&str, f64, f64, i32, bool); 4] = [
        ("dopri5", 4.0, 0.04, 5, false),
        ("rk4", 3.0, 0.02, 5, false),
        ("dop853", 7.0, 0.4, 4, true),
        ("dopri5", 4.0, 0.2, 4, true),
    ];
    for (name, q, h0, levels, linear) in cases {
        let hs: Vec<f64> = (0..levels).map(|l| h0 / 2f64.powi(l)).collect();
        let errs: Vec<f64> = hs
            .iter()
            .map(|&h| {
                if linear {
                    dense_error_at_half_step(name, &mut LinearTest { a: lr, b: li }, &lin, h, 0.3)
                } else {
                    dense_error_at_half_step(name, &mut InverseTimeRotation, &rot, h, 0.5)
                }
            })
            .collect();
        let slope = loglog_slope(&hs, &errs);
        println!("{name}: dense slope {slope:.3}, errors {errs:?}");
        assert!(
            (slope - (q + 1.0)).abs() < 0.2,
            "{name}: dense-output local slope {slope}, expected {}; {errs:?}",
            q + 1.0
        );
    }
}

/// Output on a grid between the steps is DOP853's seventh-order
/// extension, whose extra stages the driver forms only for steps that
/// hold an output point: on a smooth problem with steps far longer than
/// the output spacing, every output is as accurate as the steps
/// themselves (the cubic Hermite fallback is orders of magnitude off).
#[test]
fn dop853_grid_output_is_its_continuous_extension() {
    let opts = SolverOptions {
        output: OutputGrid::Every(0.01),
        ..SolverOptions::default().with_tol(1e-11, 1e-11)
    };
    let mut st = method::build("dop853", &opts).unwrap();
    let mut rec = Recorder::default();
    let t0 = 1.5;
    let solved = solve(
        &mut InverseTimeRotation,
        st.as_mut(),
        t0,
        &InverseTimeRotation::exact(t0),
        6.0,
        &opts,
        &mut rec,
    )
    .unwrap();
    let steps = solved.stats.n_accept;
    assert!(steps < 100, "{steps} steps: longer than the output spacing");
    let err = rec
        .t
        .iter()
        .zip(&rec.y)
        .map(|(&t, y)| max_abs_diff(y, &InverseTimeRotation::exact(t)))
        .fold(0.0, f64::max);
    assert!(
        rec.t.len() > 400 && err < 1e-9,
        "{} outputs, error {err:e}",
        rec.t.len()
    );
}
