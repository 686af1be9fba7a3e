//! bdf and ndf on an overdetermined DAE (Führer & Leimkuhler 1991): the
//! Cartesian pendulum as the ODE y = [q; v], y' = [v; a] whose
//! acceleration meets Φ_q a = γ, with the position and velocity
//! constraints as invariants ([`OdaePendulum`]). The invariants hold at
//! every step, the methods keep their order k, and the same ODE without
//! invariants drifts off the circle.

use crate::counting_alloc::allocations;

use jounce_integrate::method;
use jounce_integrate::nalgebra::DMatrix;
use jounce_integrate::newton::CachedLu;
use jounce_integrate::testkit::{loglog_slope, OdaePendulum};
use jounce_integrate::{
    solve, EvalError, IntegrateError, OdeProblem, OutputGrid, OverdeterminedProblem, ProblemForm,
    Recorder, SolverOptions, Stats, StepContext,
};

const TH0: f64 = 1.1;
const OM0: f64 = 0.4;

/// max |Φ| and max |Φ_q v| over the recorded outputs.
fn violations(p: &mut OdaePendulum, rec: &Recorder) -> (f64, f64) {
    let mut g = [0.0; 2];
    let (mut a, mut b) = (0.0f64, 0.0f64);
    for (t, y) in rec.t.iter().zip(&rec.y) {
        p.invariants(*t, y, &mut g).unwrap();
        a = a.max(g[0].abs());
        b = b.max(g[1].abs());
    }
    (a, b)
}

/// The test problem's exact Jacobians (of f and of g) agree with central
/// differences (relative 1e-8; measured ~1e-10): the orders below rely on
/// them.
#[test]
fn the_test_problem_has_exact_jacobians() {
    let mut p = OdaePendulum::new(0.3);
    let y: Vec<f64> = p
        .y0(TH0, OM0)
        .iter()
        .enumerate()
        .map(|(i, x)| x + 0.05 * i as f64 - 0.02)
        .collect();
    let (mut j, mut gy) = (DMatrix::zeros(4, 4), DMatrix::zeros(2, 4));
    p.jacobian(0.0, &y, &mut j).unwrap();
    p.invariant_jacobian(0.0, &y, &mut gy).unwrap();
    let h = 1e-6;
    let (mut worst_f, mut worst_g) = (0.0f64, 0.0f64);
    for c in 0..4 {
        let (mut yp, mut ym) = (y.clone(), y.clone());
        yp[c] += h;
        ym[c] -= h;
        let (mut fp, mut fm, mut gp, mut gm) = ([0.0; 4], [0.0; 4], [0.0; 2], [0.0; 2]);
        p.rhs(0.0, &yp, &mut fp).unwrap();
        p.rhs(0.0, &ym, &mut fm).unwrap();
        p.invariants(0.0, &yp, &mut gp).unwrap();
        p.invariants(0.0, &ym, &mut gm).unwrap();
        for r in 0..4 {
            worst_f = worst_f.max(((fp[r] - fm[r]) / (2.0 * h) - j[(r, c)]).abs());
        }
        for r in 0..2 {
            worst_g = worst_g.max(((gp[r] - gm[r]) / (2.0 * h) - gy[(r, c)]).abs());
        }
    }
    let scale = j.iter().fold(1.0f64, |m, x| m.max(x.abs()));
    eprintln!("J vs differences {:.1e}, G {worst_g:.1e}", worst_f / scale);
    assert!(worst_f / scale < 1e-8 && worst_g < 1e-8);
    assert_eq!(p.forms(), vec![ProblemForm::Overdetermined]);
    assert_eq!(
        OdaePendulum::plain(0.3).forms(),
        vec![ProblemForm::FirstOrder]
    );
}

/// Fixed steps at fixed order k = 1..5: the largest error in q and v over
/// the step points t = 0.1, …, 1 falls like h^k, as for the BDF on the
/// ODE (Führer & Leimkuhler 1991 prove order k for the BDF solution of
/// the overdetermined system), for bdf and ndf, damped and undamped.
/// Slopes within 0.2 of k; measured values printed.
#[test]
fn fixed_steps_keep_order_k() {
    for name in ["bdf", "ndf"] {
        for d in [0.3, 0.0] {
            let p0 = OdaePendulum::new(d);
            let refs: Vec<[f64; 4]> = (1..=10)
                .map(|i| p0.reference(TH0, OM0, i as f64 / 10.0))
                .collect();
            for k in 1..=5 {
                let h0 = match k {
                    1 => 6.25e-3,
                    2 | 3 => 1.25e-2,
                    _ => 2.5e-2,
                };
                let hs: Vec<f64> = (0..4).map(|j| h0 / 2f64.powi(j)).collect();
                let mut errs = Vec::new();
                let mut phi_max = 0.0f64;
                for &h in &hs {
                    let mut p = OdaePendulum::new(d);
                    let y0 = p.y0(TH0, OM0);
                    let mut opts = SolverOptions::default()
                        .with_tol(1e-12, 1e-12)
                        .with_fixed_step(h)
                        .with_param("max_order", k as f64);
                    opts.output = OutputGrid::Every(0.1);
                    let mut st = method::build(name, &opts).unwrap();
                    let mut rec = Recorder::default();
                    let r = solve(&mut p, st.as_mut(), 0.0, &y0, 1.0, &opts, &mut rec)
                        .unwrap_or_else(|e| panic!("{name} d {d} k {k} h {h}: {e}"));
                    assert_eq!(r.stats.n_accept, (1.0 / h).round() as u64);
                    let mut e = 0.0f64;
                    for (y, r) in rec.y.iter().skip(1).zip(&refs) {
                        for c in 0..4 {
                            e = e.max((y[c] - r[c]).abs());
                        }
                    }
                    errs.push(e);
                    let (a, b) = violations(&mut p, &rec);
                    phi_max = phi_max.max(a.max(b));
                }
                let slope = loglog_slope(&hs, &errs);
                eprintln!(
                    "{name} d {d} k {k}: slope {slope:.2}, errors {:.1e} .. {:.1e}, max |g| {phi_max:.1e}",
                    errs[0], errs[3]
                );
                assert!(
                    (slope - k as f64).abs() <= 0.2,
                    "{name} d {d} k {k}: slope {slope} ({errs:?})"
                );
                assert!(phi_max < 1e-12, "{name} d {d} k {k}: |g| = {phi_max:e}");
            }
        }
    }
}

/// No drift: 1e5 fixed steps (h = 1e-3, t = 100 s) keep |Φ| and |Φ_q v|
/// at the Newton tolerance, ≤ 1e-9 at every output (measured ≤ 8e-15 at
/// k = 2 and 5), while the same ODE without invariants, integrated by the
/// same bdf, leaves the circle by far more (|Φ| 3.1e-4 at k = 2, 2.0e-10
/// at k = 5) and keeps leaving it (its second half drifts further than its
/// first). The cost: two more solves per step (p = 2) and 6 % more
/// right-hand sides at k = 2 (measured 341 279 against 323 192).
#[test]
fn invariants_do_not_drift_over_1e5_steps() {
    for k in [2, 5] {
        let mut out = Vec::new();
        for keep in [true, false] {
            let mut p = if keep {
                OdaePendulum::new(0.0)
            } else {
                OdaePendulum::plain(0.0)
            };
            let y0 = p.y0(TH0, OM0);
            let mut opts = SolverOptions::default()
                .with_fixed_step(1e-3)
                .with_param("max_order", k as f64);
            opts.output = OutputGrid::Every(1.0);
            let mut st = method::build("bdf", &opts).unwrap();
            let mut rec = Recorder::default();
            let r = solve(&mut p, st.as_mut(), 0.0, &y0, 100.0, &opts, &mut rec).unwrap();
            assert_eq!(r.stats.n_accept, 100_000);
            let mut check = OdaePendulum::new(0.0);
            let half = rec.t.len() / 2;
            let first = Recorder {
                t: rec.t[..half].to_vec(),
                y: rec.y[..half].to_vec(),
                ..Default::default()
            };
            let second = Recorder {
                t: rec.t[half..].to_vec(),
                y: rec.y[half..].to_vec(),
                ..Default::default()
            };
            let (a1, b1) = violations(&mut check, &first);
            let (a2, b2) = violations(&mut check, &second);
            eprintln!(
                "bdf k {k}, invariants {keep}: |Phi| {a1:.1e} then {a2:.1e}, |Phi_q v| {b1:.1e} \
                 then {b2:.1e}; {} rhs, {} LU, {} solves",
                r.stats.n_rhs, r.stats.n_lu, r.stats.n_solve
            );
            out.push((a1.max(a2), b1.max(b2), a2 > a1));
        }
        let (odae, plain) = (out[0], out[1]);
        assert!(odae.0 <= 1e-9 && odae.1 <= 1e-9, "k {k}: {odae:?}");
        assert!(plain.0 > 1e3 * odae.0.max(1e-16), "k {k}: {plain:?}");
        assert!(plain.2, "k {k}: the plain ODE's drift must grow");
    }
}

/// Adaptive runs over [0, 2] s at rtol = atol = 1e-3 … 1e-8: the largest
/// error in q and v over the accepted steps is that of the same method on
/// the ODE alone to within a factor 3 (the error of the pendulum is mostly
/// phase, along the manifold, which meeting the invariants does not
/// change), and below 200 tol for both (per-step control; measured up to
/// 136 tol at 1e-8, for both). The invariants stay at the Newton
/// tolerance at every step — 0.03 in units of atol + rtol |y|, so |g| ≤
/// 0.1 tol is asserted (measured 5.7e-3 tol at 1e-3, falling to 1e-8 tol
/// at 1e-8, as the iteration contracts further than it must) — where the
/// ODE alone drifts to 5 … 50 tol.
#[test]
fn adaptive_runs_meet_the_tolerance_on_the_manifold() {
    for name in ["bdf", "ndf"] {
        for tol in [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8] {
            let mut res = Vec::new();
            for keep in [true, false] {
                let mut p = if keep {
                    OdaePendulum::new(0.3)
                } else {
                    OdaePendulum::plain(0.3)
                };
                let y0 = p.y0(TH0, OM0);
                let mut opts = SolverOptions::default().with_tol(tol, tol);
                opts.output = OutputGrid::Steps;
                let mut st = method::build(name, &opts).unwrap();
                let mut rec = Recorder::default();
                let r = solve(&mut p, st.as_mut(), 0.0, &y0, 2.0, &opts, &mut rec).unwrap();
                let mut e = 0.0f64;
                for (t, y) in rec.t.iter().zip(&rec.y) {
                    let refy = p.reference(TH0, OM0, *t);
                    e = (0..4).fold(e, |m, c| m.max((y[c] - refy[c]).abs()));
                }
                let (a, b) = violations(&mut OdaePendulum::new(0.3), &rec);
                eprintln!(
                    "{name} tol {tol:.0e} invariants {keep}: error {e:.1e} ({:.0} tol), |Phi| {a:.1e}, \
                     |Phi_q v| {b:.1e}; {} steps, {} rejected, {} rhs, {} LU, {} solves",
                    e / tol,
                    r.stats.n_accept,
                    r.stats.n_reject,
                    r.stats.n_rhs,
                    r.stats.n_lu,
                    r.stats.n_solve
                );
                res.push((e, a.max(b)));
            }
            let ((e, g), (e_plain, g_plain)) = (res[0], res[1]);
            assert!(e < 200.0 * tol, "{name} tol {tol}: error {e:e}");
            assert!(e < 3.0 * e_plain, "{name} tol {tol}: {e:e} vs {e_plain:e}");
            assert!(g <= 0.1 * tol, "{name} tol {tol}: |g| {g:e}");
            assert!(g_plain > 10.0 * g, "{name} tol {tol}: {g_plain:e} vs {g:e}");
        }
    }
}

/// Steps allocate nothing once the stepper is sized, factorisations of
/// the iteration matrix included (`CachedLu` factors into storage sized
/// at its first factorisation): 200 steps, adaptive and fixed, with dense
/// output.
#[test]
fn steps_do_not_allocate() {
    let per_lu = {
        let a = DMatrix::<f64>::identity(4, 4);
        let mut lu = CachedLu::new();
        let mut s = Stats::default();
        lu.factor(&a, 0.0, &mut s).unwrap();
        let before = allocations();
        lu.factor(&a, 0.0, &mut s).unwrap();
        allocations() - before
    };
    assert_eq!(per_lu, 0, "a refactorisation allocated");
    for fixed in [None, Some(1e-3)] {
        let mut o = SolverOptions::default().with_tol(1e-7, 1e-7);
        o.fixed_step = fixed;
        let mut p = OdaePendulum::new(0.3);
        let y0 = p.y0(TH0, OM0);
        let mut st = method::build("bdf", &o).unwrap();
        let mut stats = Stats::default();
        let mut ctx = StepContext {
            opts: &o,
            stats: &mut stats,
        };
        let mut out = [0.0; 4];
        st.reset(&mut p, 0.0, &y0, &mut ctx).unwrap();
        for _ in 0..10 {
            st.step(&mut p, 10.0, &mut ctx).unwrap();
        }
        let lu0 = ctx.stats.n_lu;
        let before = allocations();
        for _ in 0..200 {
            st.step(&mut p, 10.0, &mut ctx).unwrap();
            st.interpolate(0.5 * (st.t_prev() + st.t()), &mut out);
        }
        let n = allocations() - before;
        let by_lu = (ctx.stats.n_lu - lu0) * per_lu;
        eprintln!(
            "fixed {fixed:?}: {n} allocations in 200 steps, {} factorisations x {per_lu}",
            ctx.stats.n_lu - lu0
        );
        assert_eq!(n, by_lu, "fixed {fixed:?}");
    }
}

/// Bad input is an error, never a panic: more invariants than unknowns is
/// refused at the start; invariants that turn NaN stop the run with an
/// error naming the time.
#[test]
fn bad_invariants_are_errors() {
    struct Over(OdaePendulum, usize, bool);
    impl OdeProblem for Over {
        fn dim(&self) -> usize {
            4
        }
        fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
            self.0.rhs(t, y, dy)
        }
        fn as_overdetermined(&mut self) -> Option<&mut dyn OverdeterminedProblem> {
            Some(self)
        }
    }
    impl OverdeterminedProblem for Over {
        fn n_invariants(&self) -> usize {
            self.1
        }
        fn invariants(&mut self, t: f64, y: &[f64], g: &mut [f64]) -> Result<(), EvalError> {
            g.fill(0.0);
            self.0.invariants(t, y, &mut g[..2])?;
            if self.2 && t > 0.5 {
                g[0] = f64::NAN;
            }
            Ok(())
        }
        fn invariant_jacobian(
            &mut self,
            t: f64,
            y: &[f64],
            gy: &mut DMatrix<f64>,
        ) -> Result<(), EvalError> {
            gy.fill(0.0);
            let mut g2 = DMatrix::zeros(2, 4);
            self.0.invariant_jacobian(t, y, &mut g2)?;
            gy.view_mut((0, 0), (2, 4)).copy_from(&g2);
            Ok(())
        }
    }
    let y0 = OdaePendulum::new(0.0).y0(TH0, OM0);
    for fixed in [None, Some(0.01)] {
        let o = SolverOptions {
            fixed_step: fixed,
            ..Default::default()
        };
        let mut st = method::build("bdf", &o).unwrap();
        let e = solve(
            &mut Over(OdaePendulum::new(0.0), 5, false),
            st.as_mut(),
            0.0,
            &y0,
            1.0,
            &o,
            &mut jounce_integrate::Discard,
        )
        .unwrap_err();
        assert!(matches!(e.error, IntegrateError::Unsupported { .. }), "{e}");
        assert!(e.to_string().contains("5 invariants for 4 unknowns"), "{e}");
        let e = solve(
            &mut Over(OdaePendulum::new(0.0), 2, true),
            st.as_mut(),
            0.0,
            &y0,
            1.0,
            &o,
            &mut jounce_integrate::Discard,
        )
        .unwrap_err();
        eprintln!("fixed {fixed:?}: {e}");
        assert!(e.t > 0.4 && e.t <= 0.5 + 1e-12, "{e}");
    }
}
