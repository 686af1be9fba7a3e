//! The Local Linearization Method: matrix exponential accuracy, order,
//! exactness on linear systems, the local error estimate (studies.md S7)
//! and EPS/EPUS step control.

use jounce_integrate::exponential::LocalLinearization;
use jounce_integrate::nalgebra::DMatrix;
use jounce_integrate::testkit::{empirical_order, max_abs_diff, Discard, InverseTimeRotation};
use jounce_integrate::*;

#[test]
fn matrix_exponential_is_accurate() {
    // rotation generator: exp([[0, −w], [w, 0]]) = [[cos w, −sin w], [sin w, cos w]]
    for w in [1e-3f64, 0.1, 1.0, 10.0, 100.0] {
        let e = DMatrix::from_row_slice(2, 2, &[0.0, -w, w, 0.0]).exp();
        let want = DMatrix::from_row_slice(2, 2, &[w.cos(), -w.sin(), w.sin(), w.cos()]);
        let err = (e - want).abs().max();
        assert!(err < 1e-13 * w.max(1.0), "w = {w}: {err}");
    }
    // a Jordan block: exp([[λ, 1], [0, λ]]) = e^λ [[1, 1], [0, 1]]
    for l in [-50.0f64, -1.0, 0.5] {
        let e = DMatrix::from_row_slice(2, 2, &[l, 1.0, 0.0, l]).exp();
        let el: f64 = l.exp();
        let want = DMatrix::from_row_slice(2, 2, &[el, el, 0.0, el]);
        let err = (e - want).abs().max() / el;
        assert!(err < 1e-13, "λ = {l}: relative error {err}");
    }
}

#[test]
fn llm_is_second_order_on_inverse_time_rotation() {
    let t0 = 1.0 / std::f64::consts::PI;
    let t1 = t0 + 0.5;
    let y0 = InverseTimeRotation::exact(t0);
    let ex = InverseTimeRotation::exact(t1);
    let (slope, errs) = empirical_order(
        "llm",
        &mut InverseTimeRotation,
        t0,
        &y0,
        t1,
        &ex,
        0.01,
        5,
        &SolverOptions::default(),
    )
    .unwrap();
    eprintln!("llm: slope {slope:.3}, errors {errs:?}");
    assert!((slope - 2.0).abs() < 0.2, "slope {slope}, errors {errs:?}");
    // non-autonomous (f_t by a difference in t), finite-difference Jacobian
    let y0 = testkit::ForcedDuffing::exact(0.0);
    let ex = testkit::ForcedDuffing::exact(3.0);
    let (slope, errs) = empirical_order(
        "llm",
        &mut testkit::forced_duffing(),
        0.0,
        &y0,
        3.0,
        &ex,
        0.05,
        5,
        &SolverOptions::default(),
    )
    .unwrap();
    eprintln!("llm on forced Duffing: slope {slope:.3}, errors {errs:?}");
    assert!((slope - 2.0).abs() < 0.2, "slope {slope}, errors {errs:?}");
}

/// y' = A y + b with A = diag([[−1, 100], [−100, −1]], −1000): stiff and
/// oscillatory, with the closed-form solution
/// y = e^{At} (y0 + A⁻¹ b) − A⁻¹ b.
struct StiffLinear;

const B: [f64; 3] = [1.0, 2.0, 3.0];

impl StiffLinear {
    fn a() -> DMatrix<f64> {
        DMatrix::from_row_slice(
            3,
            3,
            &[-1.0, 100.0, 0.0, -100.0, -1.0, 0.0, 0.0, 0.0, -1000.0],
        )
    }
    fn exact(t: f64, y0: &[f64]) -> Vec<f64> {
        // A⁻¹ b
        let z = Self::a()
            .lu()
            .solve(&DMatrix::from_column_slice(3, 1, &B))
            .unwrap();
        let w: Vec<f64> = (0..3).map(|i| y0[i] + z[i]).collect();
        let (c, s, d) = ((100.0 * t).cos(), (100.0 * t).sin(), (-t).exp());
        vec![
            d * (c * w[0] + s * w[1]) - z[0],
            d * (-s * w[0] + c * w[1]) - z[1],
            (-1000.0 * t).exp() * w[2] - z[2],
        ]
    }
}

impl OdeProblem for StiffLinear {
    fn dim(&self) -> usize {
        3
    }
    fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        let a = Self::a();
        for i in 0..3 {
            dy[i] = B[i] + (0..3).map(|j| a[(i, j)] * y[j]).sum::<f64>();
        }
        Ok(())
    }
    fn jacobian(&mut self, _t: f64, _y: &[f64], j: &mut DMatrix<f64>) -> Result<(), EvalError> {
        j.copy_from(&Self::a());
        Ok(())
    }
    fn has_exact_jacobian(&self) -> bool {
        true
    }
}

#[test]
fn llm_is_exact_on_a_linear_constant_coefficient_system() {
    let y0 = [1.0, 0.0, 2.0];
    for h in [0.001, 0.05, 0.5] {
        let opts = SolverOptions::default().with_fixed_step(h);
        let mut st = method::build("llm", &opts).unwrap();
        let r = solve(
            &mut StiffLinear,
            st.as_mut(),
            0.0,
            &y0,
            5.0,
            &opts,
            &mut Discard,
        )
        .unwrap();
        let err = max_abs_diff(&r.y, &StiffLinear::exact(5.0, &y0));
        eprintln!(
            "llm h = {h}: error {err:.2e} (ωh = {}, λh = {})",
            100.0 * h,
            -1000.0 * h
        );
        assert!(err < 1e-11, "h = {h}: error {err}");
        // per step: f(t_{n+1}, y_{n+1}) and the t-difference, plus f(t0)
        assert_eq!(r.stats.n_rhs, 2 * r.stats.n_accept + 1);
    }
}

/// studies.md S7: one LLM step of size h from t = 1/π on the inverse-time
/// rotation; the estimated local error (eqs. 31–33) tracks the true local
/// error within a factor 2 for small h.
#[test]
fn local_error_estimate_tracks_the_true_local_error() {
    let t0 = 1.0 / std::f64::consts::PI;
    let y0 = InverseTimeRotation::exact(t0);
    let mut llm = LocalLinearization::new();
    for h in [1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1] {
        let mut y1 = [0.0; 3];
        let mut est = [0.0; 3];
        llm.one_step(&mut InverseTimeRotation, t0, &y0, h, &mut y1, &mut est)
            .unwrap();
        let ex = InverseTimeRotation::exact(t0 + h);
        let tru: Vec<f64> = (0..3).map(|i| ex[i] - y1[i]).collect();
        let n = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
        let ratio = n(&est) / n(&tru);
        eprintln!(
            "h = {h:.0e}: true local error {:.3e}, estimate {:.3e}, ratio {ratio:.3}",
            n(&tru),
            n(&est)
        );
        if h <= 1e-2 {
            assert!((0.5..=2.0).contains(&ratio), "h = {h}: ratio {ratio}");
            // componentwise, where the component is not negligible
            for i in 0..3 {
                if tru[i].abs() > 1e-3 * n(&tru) {
                    let r = est[i] / tru[i];
                    assert!((0.5..=2.0).contains(&r), "h = {h}, component {i}: {r}");
                }
            }
        }
    }
}

#[test]
fn step_control_per_step_and_per_unit_step() {
    let t0 = 1.0 / std::f64::consts::PI;
    let t1 = 2.0;
    let y0 = InverseTimeRotation::exact(t0);
    for per in [ErrorPer::Step, ErrorPer::UnitStep] {
        let mut errs = Vec::new();
        let mut steps = Vec::new();
        for tol in [1e-4, 1e-6, 1e-8] {
            let opts = SolverOptions {
                error_per: per,
                ..SolverOptions::default().with_tol(tol, tol)
            };
            let mut st = method::build("llm", &opts).unwrap();
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
            let e = max_abs_diff(&r.y, &InverseTimeRotation::exact(t1));
            eprintln!(
                "llm {per:?} tol {tol:e}: error {e:.2e}, {} steps, {} rejected",
                r.stats.n_accept, r.stats.n_reject
            );
            errs.push(e);
            steps.push(r.stats.n_accept);
            // the step size follows the solution: small where 1/t² is large
            let (first_h, last_h) = (rec.steps[1].1, rec.steps[rec.steps.len() - 2].1);
            assert!(last_h > 3.0 * first_h, "{per:?}: {first_h} .. {last_h}");
        }
        assert!(errs[2] < errs[1] && errs[1] < errs[0], "{per:?}: {errs:?}");
        assert!(
            steps[2] > steps[1] && steps[1] > steps[0],
            "{per:?}: {steps:?}"
        );
        // EPUS (k = 2) keeps the global error about proportional to tol,
        // EPS (k = 3) to tol^(2/3)
        let slope = testkit::loglog_slope(&[1e-4, 1e-6, 1e-8], &errs);
        let want = match per {
            ErrorPer::Step => 2.0 / 3.0,
            ErrorPer::UnitStep => 1.0,
        };
        assert!(
            (slope - want).abs() < 0.2,
            "{per:?}: slope {slope}, {errs:?}"
        );
    }
}

/// studies.md S5 in joint coordinates: two uniform slender links (m = 1 kg,
/// L = 1 m) pinned to ground and to each other, absolute angles θ1, θ2 from
/// the horizontal, gravity 9.81 in −y, torsional spring k = 3000 Nm/deg
/// between the links; both links horizontal and at rest at t = 0.
/// M = [[4/3, ½ cos(θ1 − θ2)], [½ cos(θ1 − θ2), 1/3]],
/// f = [−½ s θ2'² − 1.5 g cos θ1 + k (θ2 − θ1), ½ s θ1'² − 0.5 g cos θ2 − k (θ2 − θ1)],
/// s = sin(θ1 − θ2) (Lagrange's equations).
struct StiffDoublePendulum;

const G: f64 = 9.81;
const K_SPRING: f64 = 3000.0 * 180.0 / std::f64::consts::PI;

impl SecondOrderProblem for StiffDoublePendulum {
    fn ndof(&self) -> usize {
        2
    }
    fn mass_matrix(&mut self, _t: f64, q: &[f64], m: &mut DMatrix<f64>) -> Result<(), EvalError> {
        let c = 0.5 * (q[0] - q[1]).cos();
        m[(0, 0)] = 4.0 / 3.0;
        m[(0, 1)] = c;
        m[(1, 0)] = c;
        m[(1, 1)] = 1.0 / 3.0;
        Ok(())
    }
    fn forces(&mut self, _t: f64, q: &[f64], v: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        let s = (q[0] - q[1]).sin();
        let ks = K_SPRING * (q[1] - q[0]);
        f[0] = -0.5 * s * v[1] * v[1] - 1.5 * G * q[0].cos() + ks;
        f[1] = 0.5 * s * v[0] * v[0] - 0.5 * G * q[1].cos() - ks;
        Ok(())
    }
}

fn pendulum_energy(y: &[f64]) -> f64 {
    let (q, v) = y.split_at(2);
    let c = 0.5 * (q[0] - q[1]).cos();
    let t = 0.5 * (4.0 / 3.0 * v[0] * v[0] + 2.0 * c * v[0] * v[1] + v[1] * v[1] / 3.0);
    t + G * (1.5 * q[0].sin() + 0.5 * q[1].sin()) + 0.5 * K_SPRING * (q[1] - q[0]).powi(2)
}

#[test]
fn llm_takes_large_steps_on_a_stiff_double_pendulum() {
    let y0 = [0.0, 0.0, 0.0, 0.0];
    let t1 = 5.0;
    let h = 0.02;
    let e0 = pendulum_energy(&y0);
    let opts = SolverOptions::default().with_fixed_step(h);
    let mut rec = Recorder::default();
    let mut st = method::build("llm", &opts).unwrap();
    let mut p = FirstOrderForm::new(StiffDoublePendulum);
    let r = solve(&mut p, st.as_mut(), 0.0, &y0, t1, &opts, &mut rec).unwrap();
    let drift = rec
        .y
        .iter()
        .map(|y| (pendulum_energy(y) - e0).abs())
        .fold(0.0, f64::max);
    // reference for the slow motion: dopri5 at tight tolerance
    let ropts = SolverOptions::default().with_tol(1e-10, 1e-12);
    let mut rst = method::build("dopri5", &ropts).unwrap();
    let reference = solve(&mut p, rst.as_mut(), 0.0, &y0, t1, &ropts, &mut Discard).unwrap();
    let dq = (r.y[0] - reference.y[0]).abs();
    eprintln!(
        "S5: llm h = {h}: {} steps, max energy variation {drift:.3e} J, θ1(5) error {dq:.3e} rad; \
         dopri5 needed {} steps",
        r.stats.n_accept, reference.stats.n_accept
    );
    assert!(drift < 0.05, "energy variation {drift}");
    assert!(dq < 0.01, "slow angle error {dq}");
    // the structural family takes the same step on the second-order form
    // (Newton with the finite-difference tangent M + γhC + βh²K)
    for (name, param) in [
        ("generalized_alpha", ("rho_inf", 0.8)),
        ("hht", ("alpha", -0.1)),
        ("newmark", ("gamma", 0.5)),
    ] {
        let o = opts.clone().with_param(param.0, param.1);
        let mut st = method::build(name, &o).unwrap();
        let s = solve(&mut p, st.as_mut(), 0.0, &y0, t1, &o, &mut Discard).unwrap();
        let dq = (s.y[0] - reference.y[0]).abs();
        eprintln!(
            "S5: {name} h = {h}: θ1(5) error {dq:.3e}, {} Newton iterations, {} tangents, {} force evaluations",
            s.stats.n_newton_iter, s.stats.n_jac, s.stats.n_rhs
        );
        assert!(dq < 0.01, "{name}: slow angle error {dq}");
    }
    // explicit RK4 with the same step is unstable (ωh ≈ 16 for the spring mode)
    let mut rk = method::build("rk4", &opts).unwrap();
    let out = solve(&mut p, rk.as_mut(), 0.0, &y0, t1, &opts, &mut Discard);
    let blew_up = match out {
        Err(_) => true,
        Ok(s) => {
            !(pendulum_energy(&s.y) - e0).abs().is_finite()
                || (pendulum_energy(&s.y) - e0).abs() > 1e3
        }
    };
    assert!(blew_up, "rk4 at h = {h} should be unstable");
    // S5, second part: EPUS control (k = 2, safety 0.9) at tol = 0.1 and 0.05
    // (absolute, RMS norm): a tighter tolerance takes more steps
    let mut n_steps = Vec::new();
    for tol in [0.1, 0.05] {
        let o = SolverOptions {
            error_per: ErrorPer::UnitStep,
            ..SolverOptions::default().with_tol(0.0, tol)
        };
        let mut st = method::build("llm", &o).unwrap();
        let r = solve(&mut p, st.as_mut(), 0.0, &y0, t1, &o, &mut Discard).unwrap();
        let dq = (r.y[0] - reference.y[0]).abs();
        eprintln!(
            "S5: llm EPUS tol {tol}: {} steps, {} rejected, θ1(5) error {dq:.3e}",
            r.stats.n_accept, r.stats.n_reject
        );
        n_steps.push(r.stats.n_accept);
    }
    assert!(n_steps[1] > n_steps[0], "{n_steps:?}");
}

/// x'' = −ω² x, ω = 20, x(0) = 1, with the event g = x: the LLM is exact
/// on it and its error estimate is zero, so its steps grow over many
/// half-periods; the event scan samples its exponential flow in order
/// (at most π/4 of turn apart, from the power-iteration estimate of
/// ρ(J) = ω) and finds every zero crossing, first to last, at
/// t_k = (k + ½) π/ω.
struct EventOscillator {
    omega: f64,
}

impl OdeProblem for EventOscillator {
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        dy[0] = y[1];
        dy[1] = -self.omega * self.omega * y[0];
        Ok(())
    }
    fn jacobian(&mut self, _t: f64, _y: &[f64], jac: &mut DMatrix<f64>) -> Result<(), EvalError> {
        jac.fill(0.0);
        jac[(0, 1)] = 1.0;
        jac[(1, 0)] = -self.omega * self.omega;
        Ok(())
    }
    fn has_exact_jacobian(&self) -> bool {
        true
    }
    fn n_events(&self) -> usize {
        1
    }
    fn events(&mut self, _t: f64, y: &[f64], g: &mut [f64]) -> Result<(), EvalError> {
        g[0] = y[0];
        Ok(())
    }
}

struct EventTimes(Vec<f64>);

impl<P: OdeProblem + ?Sized> Observer<P> for EventTimes {
    fn output(&mut self, _p: &mut P, _t: f64, _y: &[f64]) -> Result<(), EvalError> {
        Ok(())
    }
    fn event(&mut self, t: f64, _index: usize, _y: &[f64]) {
        self.0.push(t);
    }
}

#[test]
fn llm_events_are_found_in_order_across_long_exact_steps() {
    let omega = 20.0;
    let opts = SolverOptions {
        rtol: 1e-6,
        atol: 1e-6,
        ..SolverOptions::default()
    };
    let mut st = method::build("llm", &opts).unwrap();
    let mut times = EventTimes(Vec::new());
    let r = solve(
        &mut EventOscillator { omega },
        st.as_mut(),
        0.0,
        &[1.0, 0.0],
        3.0,
        &opts,
        &mut times,
    )
    .unwrap();
    let period = std::f64::consts::PI / omega;
    let want: Vec<f64> = (0..)
        .map(|k| (k as f64 + 0.5) * period)
        .take_while(|&t| t < 3.0)
        .collect();
    eprintln!(
        "llm: {} steps, {} events (want {})",
        r.stats.n_accept,
        times.0.len(),
        want.len()
    );
    assert_eq!(times.0.len(), want.len(), "{:?}", times.0);
    for (got, want) in times.0.iter().zip(&want) {
        assert!((got - want).abs() < 1e-9, "event at {got}, want {want}");
    }
}
