//! The structural family (newmark, hht, generalized_alpha, midpoint_rule,
//! wilson, collocation): convergence orders, energy conservation, spectral
//! radius at infinity, period elongation and amplitude decay (studies.md S8).

use jounce_integrate::nalgebra::{DMatrix, Matrix3};
use jounce_integrate::structural::{StructuralScheme, StructuralStepper};
use jounce_integrate::testkit::{
    forced_duffing, loglog_slope, run_fixed, ForcedDuffing, InverseTimeRotation,
};
use jounce_integrate::*;

/// y'' + ω² y = 0 (unit mass) with its exact tangent K = ω², C = 0.
struct Oscillator {
    w2: f64,
}

impl SecondOrderProblem for Oscillator {
    fn ndof(&self) -> usize {
        1
    }
    fn mass_matrix(&mut self, _t: f64, _q: &[f64], m: &mut DMatrix<f64>) -> Result<(), EvalError> {
        m[(0, 0)] = 1.0;
        Ok(())
    }
    fn forces(&mut self, _t: f64, q: &[f64], _v: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        f[0] = -self.w2 * q[0];
        Ok(())
    }
    fn tangent(
        &mut self,
        _t: f64,
        _q: &[f64],
        _v: &[f64],
        _a: &[f64],
        k: &mut DMatrix<f64>,
        c: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        k[(0, 0)] = self.w2;
        c[(0, 0)] = 0.0;
        Ok(())
    }
    fn has_exact_tangent(&self) -> bool {
        true
    }
}

fn opts_with(params: &[(&str, f64)]) -> SolverOptions {
    let mut o = SolverOptions::default();
    for (k, v) in params {
        o = o.with_param(k, *v);
    }
    o
}

#[test]
fn orders_on_forced_duffing_in_positions_and_velocities() {
    let cases: &[(&str, &[(&str, f64)], f64)] = &[
        ("newmark", &[], 2.0),
        ("newmark", &[("beta", 0.5), ("gamma", 1.0)], 1.0),
        ("hht", &[("alpha", -0.1)], 2.0),
        ("hht", &[("alpha", -0.3)], 2.0),
        ("generalized_alpha", &[("rho_inf", 0.8)], 2.0),
        ("generalized_alpha", &[("rho_inf", 0.0)], 2.0),
        ("midpoint_rule", &[], 2.0),
        ("wilson", &[], 2.0),
        ("collocation", &[], 2.0),
    ];
    let t1 = 3.0;
    let y0 = ForcedDuffing::exact(0.0);
    let ex = ForcedDuffing::exact(t1);
    for (name, params, p) in cases {
        let opts = opts_with(params);
        let mut hs = Vec::new();
        let (mut eq, mut ev) = (Vec::new(), Vec::new());
        for l in 0..5 {
            let h = 0.05 / 2f64.powi(l);
            let y = run_fixed(name, &mut forced_duffing(), 0.0, &y0, t1, h, &opts).unwrap();
            hs.push(h);
            eq.push((y[0] - ex[0]).abs());
            ev.push((y[1] - ex[1]).abs());
        }
        let (sq, sv) = (loglog_slope(&hs, &eq), loglog_slope(&hs, &ev));
        eprintln!("{name} {params:?}: slopes q {sq:.3} v {sv:.3}; errors q {eq:?} v {ev:?}");
        assert!(
            (sq - p).abs() < 0.2,
            "{name} {params:?}: q slope {sq}, errors {eq:?}"
        );
        assert!(
            (sv - p).abs() < 0.2,
            "{name} {params:?}: v slope {sv}, errors {ev:?}"
        );
    }
}

fn energy(y: &[f64]) -> f64 {
    0.5 * (y[1] * y[1] + y[0] * y[0])
}

#[test]
fn trapezoidal_and_midpoint_keep_the_energy_of_a_linear_oscillator() {
    for name in ["newmark", "midpoint_rule"] {
        let opts = SolverOptions::default().with_fixed_step(0.1);
        let mut st = method::build(name, &opts).unwrap();
        let mut p = FirstOrderForm::new(Oscillator { w2: 1.0 });
        let y0 = [1.0, 0.0];
        let r = solve(
            &mut p,
            st.as_mut(),
            0.0,
            &y0,
            1e4,
            &opts,
            &mut testkit::Discard,
        )
        .unwrap();
        assert_eq!(r.stats.n_accept, 100_000);
        let drift = (energy(&r.y) - energy(&y0)).abs() / energy(&y0);
        eprintln!("{name}: relative energy drift after 1e5 steps {drift:.2e}");
        assert!(drift < 1e-11, "{name}: energy drift {drift}");
        // forces are counted by the method (at least one per Newton iteration)
        assert!(r.stats.n_rhs >= r.stats.n_newton_iter, "{:?}", r.stats);
    }
    // a damped member loses energy
    let opts = SolverOptions::default()
        .with_fixed_step(0.1)
        .with_param("alpha", -0.3);
    let mut st = method::build("hht", &opts).unwrap();
    // ωh = 1: the high-frequency damping of HHT shows
    let mut p = FirstOrderForm::new(Oscillator { w2: 100.0 });
    let r = solve(
        &mut p,
        st.as_mut(),
        0.0,
        &[1.0, 0.0],
        10.0,
        &opts,
        &mut testkit::Discard,
    )
    .unwrap();
    let e = 0.5 * (r.y[1] * r.y[1] + 100.0 * r.y[0] * r.y[0]);
    assert!(e < 0.5 * 50.0, "hht alpha -0.3 kept energy {e}");
}

/// Amplification matrix of one step of `scheme` on y'' + ω² y = 0 in the
/// scaled state x = (q, h v, h² a), built by stepping the three unit states
/// through the driver.
fn stepped_amplification(scheme: StructuralScheme, omega_h: f64, h: f64) -> Matrix3<f64> {
    let w = omega_h / h;
    let opts = SolverOptions::default().with_fixed_step(h);
    let mut p = FirstOrderForm::new(Oscillator { w2: w * w });
    let mut stats = Stats::default();
    let mut a = Matrix3::zeros();
    for j in 0..3 {
        let mut x = [0.0; 3];
        x[j] = 1.0;
        let mut st = StructuralStepper::new(scheme);
        let mut ctx = StepContext {
            opts: &opts,
            stats: &mut stats,
        };
        st.reset(&mut p, 0.0, &[x[0], x[1] / h], &mut ctx).unwrap();
        st.set_acceleration(&[x[2] / (h * h)]).unwrap();
        st.step(&mut p, h, &mut ctx).unwrap();
        let y = st.y();
        a[(0, j)] = y[0];
        a[(1, j)] = y[1] * h;
        a[(2, j)] = st.acceleration()[0] * h * h;
    }
    a
}

/// The same matrix in closed form (Chung & Hulbert 1993, eqs. 5–7),
/// [`StructuralScheme::amplification_matrix`].
fn closed_form_amplification(s: &StructuralScheme, om: f64) -> Matrix3<f64> {
    s.amplification_matrix(om).expect("an α-family scheme")
}

fn spectral_radius(m: &Matrix3<f64>) -> f64 {
    m.complex_eigenvalues()
        .iter()
        .map(|z| z.norm())
        .fold(0.0, f64::max)
}

#[test]
fn spectral_radius_at_infinity() {
    let h = 0.01;
    let om = 1e6;
    for alpha in [0.0, -0.05, -0.1, -0.2, -1.0 / 3.0] {
        let s = StructuralScheme::hht(alpha).unwrap();
        let a = stepped_amplification(s, om, h);
        let rho = spectral_radius(&a);
        let want = (1.0 + alpha) / (1.0 - alpha);
        eprintln!("hht alpha {alpha:.3}: rho {rho:.6} want {want:.6}");
        assert!((rho - want).abs() < 2e-3, "hht {alpha}: {rho} vs {want}");
        let c = closed_form_amplification(&s, om);
        assert!(
            (a - c).abs().max() < 1e-6 * c.abs().max(),
            "hht {alpha}:\n{a}\n{c}"
        );
    }
    for rho_inf in [0.0, 0.3, 0.6, 0.9, 1.0] {
        let s = StructuralScheme::generalized_alpha(rho_inf).unwrap();
        let a = stepped_amplification(s, om, h);
        let rho = spectral_radius(&a);
        eprintln!("generalized_alpha rho_inf {rho_inf}: rho {rho:.6}");
        assert!((rho - rho_inf).abs() < 2e-3, "rho_inf {rho_inf}: {rho}");
    }
    // the midpoint rule and the trapezoidal rule do not damp at all
    for s in [
        StructuralScheme::midpoint(),
        StructuralScheme::newmark(0.25, 0.5).unwrap(),
    ] {
        let rho = spectral_radius(&stepped_amplification(s, om, h));
        // (a triple root at −1: the numerical eigenvalues scatter by ~(1/Ω²)^(1/3))
        assert!((rho - 1.0).abs() < 1e-4, "{}: {rho}", s.name);
    }
    // Wilson-θ is unconditionally stable: ρ ≤ 1 over all ωh
    for om in [0.1, 1.0, 10.0, 1e3, 1e6] {
        let rho = spectral_radius(&stepped_amplification(
            StructuralScheme::wilson(1.4).unwrap(),
            om,
            h,
        ));
        assert!(rho <= 1.0 + 1e-9, "wilson at ωh = {om}: {rho}");
    }
}

/// Cubic Lagrange interpolant through (t_k, y_k), k = i-1..i+2, at t.
fn cubic(ts: &[f64], ys: &[f64], i: usize, t: f64) -> f64 {
    let mut s = 0.0;
    for a in i - 1..=i + 2 {
        let mut l = 1.0;
        for b in i - 1..=i + 2 {
            if a != b {
                l *= (t - ts[b]) / (ts[a] - ts[b]);
            }
        }
        s += l * ys[a];
    }
    s
}

/// Zero crossings (by bisection on the cubic interpolant) and extrema (by
/// golden-section search on it) of the sampled signal.
fn crossings_and_peaks(ts: &[f64], ys: &[f64]) -> (Vec<f64>, Vec<(f64, f64)>) {
    let mut zc = Vec::new();
    let mut pk = Vec::new();
    for i in 1..ys.len() - 2 {
        if ys[i] * ys[i + 1] < 0.0 {
            let (mut a, mut b) = (ts[i], ts[i + 1]);
            for _ in 0..100 {
                let m = 0.5 * (a + b);
                if cubic(ts, ys, i, a) * cubic(ts, ys, i, m) <= 0.0 {
                    b = m;
                } else {
                    a = m;
                }
            }
            zc.push(0.5 * (a + b));
        }
        if (ys[i].abs() >= ys[i - 1].abs()) && (ys[i].abs() > ys[i + 1].abs()) {
            // extremum within (t_{i-1}, t_{i+1})
            let sgn = ys[i].signum();
            let f = |t: f64| -sgn * cubic(ts, ys, i.max(2) - 1 + usize::from(i < 2), t);
            let (mut a, mut b) = (ts[i - 1], ts[i + 1]);
            let gr = (5f64.sqrt() - 1.0) / 2.0;
            for _ in 0..200 {
                let c = b - gr * (b - a);
                let d = a + gr * (b - a);
                if f(c) < f(d) {
                    b = d;
                } else {
                    a = c;
                }
            }
            let tp = 0.5 * (a + b);
            pk.push((tp, -f(tp) * sgn));
        }
    }
    (zc, pk)
}

/// studies.md S8 / jalon-bayo problem 7/1: y'' + y = 0, y(0) = 1, h = 0.1,
/// t ∈ [0, 10]. The period elongation and amplitude decay per cycle measured
/// on the simulated response match the principal eigenvalues ρ e^{±iφ} of
/// the closed-form amplification matrix: T̄ = 2π h / φ, decay = 1 − ρ^{T̄/h}.
#[test]
fn period_elongation_and_amplitude_decay_match_the_amplification_matrix() {
    let h = 0.1;
    let cases: &[(&str, &[(&str, f64)], StructuralScheme)] = &[
        (
            "newmark",
            &[],
            StructuralScheme::newmark(0.25, 0.5).unwrap(),
        ),
        (
            "hht",
            &[("alpha", -0.1)],
            StructuralScheme::hht(-0.1).unwrap(),
        ),
        (
            "newmark",
            &[("beta", 0.5), ("gamma", 1.0)],
            StructuralScheme::newmark(0.5, 1.0).unwrap(),
        ),
    ];
    for (name, params, scheme) in cases {
        let opts = opts_with(params).with_fixed_step(h);
        let mut st = method::build(name, &opts).unwrap();
        let mut p = FirstOrderForm::new(Oscillator { w2: 1.0 });
        let mut rec = Recorder::default();
        solve(&mut p, st.as_mut(), 0.0, &[1.0, 0.0], 10.0, &opts, &mut rec).unwrap();
        let ys: Vec<f64> = rec.y.iter().map(|y| y[0]).collect();
        let (zc, pk) = crossings_and_peaks(&rec.t, &ys);
        assert!(zc.len() >= 3 && pk.len() >= 3, "{name}: {zc:?} {pk:?}");
        // measured: one period between crossings 1 and 3, one cycle between peaks 1 and 3
        let t_meas = zc[2] - zc[0];
        let decay_meas = 1.0 - pk[2].1.abs() / pk[0].1.abs();
        let elong_meas = t_meas / (2.0 * std::f64::consts::PI) - 1.0;
        // predicted by the principal eigenvalue pair of the amplification matrix
        let m = closed_form_amplification(scheme, h);
        let lam = m
            .complex_eigenvalues()
            .iter()
            .copied()
            .max_by(|a, b| a.im.abs().partial_cmp(&b.im.abs()).unwrap())
            .unwrap();
        let (rho, phi) = (lam.norm(), lam.im.abs().atan2(lam.re));
        let t_pred = 2.0 * std::f64::consts::PI * h / phi;
        let elong_pred = t_pred / (2.0 * std::f64::consts::PI) - 1.0;
        let decay_pred = 1.0 - rho.powf(t_pred / h);
        eprintln!(
            "{name} {params:?}: period elongation measured {elong_meas:.5e} predicted {elong_pred:.5e}; \
             amplitude decay/cycle measured {decay_meas:.5e} predicted {decay_pred:.5e}"
        );
        assert!(
            (elong_meas - elong_pred).abs() < 0.02 * elong_pred.abs(),
            "{name}: elongation {elong_meas} vs {elong_pred}"
        );
        assert!(
            (decay_meas - decay_pred).abs() < 0.02 * decay_pred.abs() + 1e-6,
            "{name}: decay {decay_meas} vs {decay_pred}"
        );
    }
}

#[test]
fn adaptive_newmark_follows_the_tolerance() {
    let y0 = ForcedDuffing::exact(0.0);
    let t1 = 5.0;
    let mut errs = Vec::new();
    for tol in [1e-4, 1e-6, 1e-8] {
        for name in ["newmark", "generalized_alpha"] {
            let opts = SolverOptions::default().with_tol(tol, tol);
            let mut st = method::build(name, &opts).unwrap();
            let r = solve(
                &mut forced_duffing(),
                st.as_mut(),
                0.0,
                &y0,
                t1,
                &opts,
                &mut testkit::Discard,
            )
            .unwrap();
            let e = testkit::max_abs_diff(&r.y, &ForcedDuffing::exact(t1));
            eprintln!(
                "{name} tol {tol:e}: error {e:.2e}, {} steps, {} rejected",
                r.stats.n_accept, r.stats.n_reject
            );
            errs.push(e);
        }
    }
    // the tolerance bounds the local error per step (EPS), O(h³): the global
    // error, O(h²), then scales as tol^(2/3)
    for k in 0..2 {
        let e: Vec<f64> = (0..3).map(|i| errs[2 * i + k]).collect();
        let slope = loglog_slope(&[1e-4, 1e-6, 1e-8], &e);
        assert!(
            (slope - 2.0 / 3.0).abs() < 0.15,
            "errors {e:?}: slope {slope}"
        );
        assert!(e[0] < 0.05, "{e:?}");
    }
}

#[test]
fn first_order_problems_are_rejected_with_a_clear_message() {
    let opts = SolverOptions::default().with_fixed_step(0.1);
    let mut st = method::build("hht", &opts).unwrap();
    let y0 = InverseTimeRotation::exact(1.0);
    let err = solve(
        &mut InverseTimeRotation,
        st.as_mut(),
        1.0,
        &y0,
        2.0,
        &opts,
        &mut testkit::Discard,
    )
    .unwrap_err();
    assert!(
        matches!(err.error, IntegrateError::Unsupported { .. }),
        "{err}"
    );
    // in the user's words, not the trait's (no "as_second_order")
    let msg = err.to_string();
    assert!(msg.contains("second-order equations of motion"), "{msg}");
    assert!(
        msg.contains("index3") && !msg.contains("as_second_order"),
        "{msg}"
    );
    // unknown and out-of-range parameters
    assert!(method::build(
        "newmark",
        &SolverOptions::default().with_param("alpha", 0.1)
    )
    .is_err());
    assert!(method::build(
        "generalized_alpha",
        &SolverOptions::default().with_param("rho_inf", -1.0)
    )
    .is_err());
}

/// jalon-bayo Example 7.2: double pendulum in relative joint angles with
/// rotational springs k, a configuration-dependent mass matrix and
/// velocity-dependent forces (Lagrange's equations of the seed's T and V):
/// M(φ) = [[3 + 2 cos φ2, 1 + cos φ2], [1 + cos φ2, 1]],
/// f = [−k φ1 + sin φ2 (2 φ1' φ2' + φ2'²), −k φ2 − sin φ2 φ1'²].
struct SpringDoublePendulum {
    k: f64,
}

impl SecondOrderProblem for SpringDoublePendulum {
    fn ndof(&self) -> usize {
        2
    }
    fn mass_matrix(&mut self, _t: f64, q: &[f64], m: &mut DMatrix<f64>) -> Result<(), EvalError> {
        let c = q[1].cos();
        m[(0, 0)] = 3.0 + 2.0 * c;
        m[(0, 1)] = 1.0 + c;
        m[(1, 0)] = 1.0 + c;
        m[(1, 1)] = 1.0;
        Ok(())
    }
    fn forces(&mut self, _t: f64, q: &[f64], v: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        let s = q[1].sin();
        f[0] = -self.k * q[0] + s * (2.0 * v[0] * v[1] + v[1] * v[1]);
        f[1] = -self.k * q[1] - s * v[0] * v[0];
        Ok(())
    }
}

#[test]
fn second_order_on_a_double_pendulum_with_configuration_dependent_mass() {
    let y0 = [0.0, 0.0, 1.0, 1.0];
    let t1 = 2.0;
    let mut p = FirstOrderForm::new(SpringDoublePendulum { k: 10.0 });
    // reference: dopri5 at tight tolerance on the first-order form
    let opts = SolverOptions::default().with_tol(1e-12, 1e-14);
    let mut st = method::build("dopri5", &opts).unwrap();
    let reference = solve(
        &mut p,
        st.as_mut(),
        0.0,
        &y0,
        t1,
        &opts,
        &mut testkit::Discard,
    )
    .unwrap()
    .y;
    for name in [
        "newmark",
        "hht",
        "generalized_alpha",
        "midpoint_rule",
        "wilson",
    ] {
        let (slope, errs) = testkit::empirical_order(
            name,
            &mut p,
            0.0,
            &y0,
            t1,
            &reference,
            0.02,
            4,
            &SolverOptions::default(),
        )
        .unwrap();
        eprintln!("{name}: slope {slope:.3}, errors {errs:?}");
        assert!((slope - 2.0).abs() < 0.2, "{name}: slope {slope}, {errs:?}");
    }
}

#[test]
fn dense_output_between_steps_is_second_order_accurate() {
    let y0 = ForcedDuffing::exact(0.0);
    let mut worst = Vec::new();
    for h in [0.02, 0.01] {
        let opts = SolverOptions {
            output: OutputGrid::Every(0.0037),
            ..SolverOptions::default().with_fixed_step(h)
        };
        let mut st = method::build("generalized_alpha", &opts).unwrap();
        let mut rec = Recorder::default();
        solve(
            &mut forced_duffing(),
            st.as_mut(),
            0.0,
            &y0,
            2.0,
            &opts,
            &mut rec,
        )
        .unwrap();
        let w = rec
            .t
            .iter()
            .zip(&rec.y)
            .map(|(t, y)| testkit::max_abs_diff(y, &ForcedDuffing::exact(*t)))
            .fold(0.0, f64::max);
        worst.push(w);
    }
    eprintln!("dense output errors {worst:?}");
    assert!(worst[0] < 1e-3, "{worst:?}");
    let ratio = worst[0] / worst[1];
    assert!(
        ratio > 3.0,
        "halving h must divide the error by ~4: {worst:?}"
    );
}

/// The Zienkiewicz–Xie estimate of one step from the exact state tracks the
/// true local error (positions for the trapezoidal rule, velocities for the
/// first-order Newmark γ = 1, β = 1/2) within a factor 2 for small h.
#[test]
fn zienkiewicz_xie_estimate_tracks_the_true_local_error() {
    let cases = [
        (StructuralScheme::newmark(0.25, 0.5).unwrap(), 0usize),
        (StructuralScheme::newmark(0.5, 1.0).unwrap(), 1usize),
    ];
    let t0 = 0.7;
    let y0 = ForcedDuffing::exact(t0);
    for (scheme, comp) in cases {
        for h in [1e-3, 1e-2, 3e-2] {
            let opts = SolverOptions::default().with_fixed_step(h);
            let mut stats = Stats::default();
            let mut ctx = StepContext {
                opts: &opts,
                stats: &mut stats,
            };
            let mut p = forced_duffing();
            let mut st = StructuralStepper::new(scheme);
            st.reset(&mut p, t0, &y0, &mut ctx).unwrap();
            st.step(&mut p, t0 + h, &mut ctx).unwrap();
            let ex = ForcedDuffing::exact(t0 + h);
            let tru = st.y()[comp] - ex[comp];
            let est = st.error_estimate()[comp];
            let ratio = est / tru;
            eprintln!(
                "newmark beta {} gamma {} h {h:e}: component {comp} true {tru:.3e} estimate {est:.3e}",
                scheme.beta, scheme.gamma
            );
            assert!((0.5..=2.0).contains(&ratio), "h = {h}: ratio {ratio}");
        }
    }
}
