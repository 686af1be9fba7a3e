//! Radau IIA (order 5) on the implicit DAE F(t, y, y') = 0
//! ([`DaeRadau5`]), on the Cartesian pendulum in the index-3 form
//! y = [q; v; λ] and the stabilised index-2 (GGL) form y = [q; v; λ; μ],
//! against the exact motion from the angle ODE.
//!
//! Orders at constant steps (Hairer & Wanner, *Solving ODEs II*, Section
//! VII.4, after Hairer, Lubich & Roche, LNM 1409, 1989): for the s-stage
//! Radau IIA method on index-2 problems y' = f(y, z), 0 = g(y), the global
//! error is O(h^(2s−1)) in y and O(h^s) in z; on index-3 problems
//! y' = f(y, z), z' = k(y, z, u), 0 = g(y) it is O(h^(2s−1)) in y, O(h^s)
//! in z and O(h^(s−1)) in u (Hairer, Lubich & Roche 1989; Jay, Appl.
//! Numer. Math. 17, 1995). For s = 3: GGL (index 2, y = (q, v),
//! z = (λ, μ)) q, v 5 and λ, μ 3; index 3 (y = q, z = v, u = λ) q 5, v 3,
//! λ 2 — all measured below.

use crate::counting_alloc::allocations;

use jounce_integrate::dae::{ConstrainedDae, DaeForm, DaeProblem, DaeRadau5};
use jounce_integrate::nalgebra::DMatrix;
use jounce_integrate::testkit::{loglog_slope, max_abs_diff, CartesianPendulum, DaePendulum};
use jounce_integrate::{
    solve, Discard, EvalError, IntegrateError, OdeProblem, OutputGrid, Recorder, SolverOptions,
    Stats, StepContext, Stepper,
};

const THETA0: f64 = 1.0;
const OMEGA0: f64 = 0.5;
const L2: f64 = 0.81; // L² of CartesianPendulum::damped

/// |Φ| = |x² + y² − L²|/2 and, for GGL, |Φ_q v| = |q·v|.
fn constraints(y: &[f64]) -> (f64, f64) {
    (
        0.5 * (y[0] * y[0] + y[1] * y[1] - L2).abs(),
        (y[0] * y[2] + y[1] * y[3]).abs(),
    )
}

/// Errors [q, v, λ, μ] of a run to `t_end` against the reference, and the stats.
fn run(form: DaeForm, damping: f64, opts: &SolverOptions, t_end: f64) -> ([f64; 4], Stats) {
    let mut p = DaePendulum::new(damping, form);
    let y0 = p.y0(THETA0, OMEGA0);
    let mut st = DaeRadau5::new();
    let r = solve(&mut p, &mut st, 0.0, &y0, t_end, opts, &mut Discard)
        .unwrap_or_else(|e| panic!("{form:?} d = {damping}: {e}"));
    let re = p.dae.problem.reference(THETA0, OMEGA0, t_end);
    let mu = if form == DaeForm::Ggl {
        r.y[5].abs()
    } else {
        0.0
    };
    let e = [
        max_abs_diff(&r.y[..2], &re[..2]),
        max_abs_diff(&r.y[2..4], &re[2..4]),
        (r.y[4] - re[4]).abs(),
        mu,
    ];
    (e, r.stats)
}

/// Fixed steps h = 0.1 · 2^−k, k = 0..6, to t = 1 (rtol = atol = 1e-12 so
/// that the Newton tolerance is far below the errors). Measured slopes of
/// least squares over the ranges used (both dampings alike):
///
/// | form   | q    | v    | λ    | μ    |
/// |--------|------|------|------|------|
/// | GGL    | 4.99 | 4.98 | 3.10 | 2.98 |
/// | index 3| 4.97 | 2.98 | 2.03 | —    |
///
/// (local slopes GGL λ: 3.44, 3.28, 3.17, 3.09, 3.05 from h = 0.1 down,
/// pre-asymptotic at large h, so λ is fitted on h ≤ 0.025; index-3 q
/// reaches round-off, ~3e-11 amplified by the h⁻³ conditioning, below
/// h = 0.0125, so it is fitted on h ≥ 0.0125). Errors at h = 0.0125, d =
/// 0.3: GGL q 4.6e-10, v 5.2e-10, λ 1.1e-5, μ 5.2e-6; index 3 q 6.1e-10,
/// v 3.6e-6, λ 3.3e-3.
#[test]
fn fixed_step_orders_match_the_index_2_and_index_3_theory() {
    let hs: Vec<f64> = (0..7).map(|k| 0.1 / f64::powi(2.0, k)).collect();
    // (form, component, expected order, range of k)
    let checks: [(DaeForm, usize, f64, std::ops::Range<usize>); 7] = [
        (DaeForm::Ggl, 0, 5.0, 0..5),
        (DaeForm::Ggl, 1, 5.0, 0..5),
        (DaeForm::Ggl, 2, 3.0, 2..6),
        (DaeForm::Ggl, 3, 3.0, 0..6),
        (DaeForm::Index3, 0, 5.0, 0..4),
        (DaeForm::Index3, 1, 3.0, 0..6),
        (DaeForm::Index3, 2, 2.0, 1..6),
    ];
    for d in [0.3, 0.0] {
        for form in [DaeForm::Ggl, DaeForm::Index3] {
            let mut errs = Vec::new();
            for &h in &hs[..6] {
                let o = SolverOptions::default()
                    .with_tol(1e-12, 1e-12)
                    .with_fixed_step(h);
                let (e, s) = run(form, d, &o, 1.0);
                assert_eq!(s.n_accept, (1.0 / h).round() as u64, "{form:?} h = {h}");
                assert_eq!(s.n_reject, 0);
                errs.push(e);
            }
            for (f, c, order, range) in checks.iter().filter(|c| c.0 == form) {
                let h = &hs[range.clone()];
                let e: Vec<f64> = errs[range.clone()].iter().map(|e| e[*c]).collect();
                let slope = loglog_slope(h, &e);
                let shown: Vec<String> = e.iter().map(|v| format!("{v:.2e}")).collect();
                println!("{f:?} d = {d}, component {c}: slope {slope:.3}, errors {shown:?}");
                assert!(
                    (slope - order).abs() < 0.2,
                    "{f:?} d = {d}, component {c}: slope {slope:.3}, expected {order}"
                );
            }
        }
    }
}

/// Fixed steps end exactly on t0 + k h (no accumulation of t += h), and
/// the last step is cut to t_end.
#[test]
fn fixed_steps_land_on_the_grid() {
    let (t0, h) = (0.3, 0.07);
    let mut p = DaePendulum::new(0.3, DaeForm::Ggl);
    let y0 = p.y0(THETA0, OMEGA0);
    let mut rec = Recorder::default();
    let o = SolverOptions::default().with_fixed_step(h);
    solve(&mut p, &mut DaeRadau5::new(), t0, &y0, 1.0, &o, &mut rec).unwrap();
    let n = rec.steps.len();
    // (1.0 − 0.3)/0.07 = 10 steps up to rounding: the slack of step_towards
    assert_eq!(n, 10);
    for (k, &(t, _)) in rec.steps[..n - 1].iter().enumerate() {
        assert_eq!(t, t0 + (k + 1) as f64 * h, "step {k}");
    }
    assert_eq!(rec.steps[n - 1].0, 1.0);
}

/// Adaptive runs to t = 2. Measured end errors (d = 0.3 / d = 0):
///
/// | form, tol     | q               | v               |
/// |---------------|-----------------|-----------------|
/// | GGL 1e-4      | 1.4e-5 / 1.9e-5 | 4.2e-5 / 7.0e-5 |
/// | GGL 1e-6      | 1.5e-7 / 1.6e-7 | 1.6e-6 / 2.6e-6 |
/// | GGL 1e-8      | 2.4e-9 / 2.1e-9 | 2.2e-8 / 3.4e-8 |
/// | index 3 1e-4  | 4.8e-6 / 1.0e-5 | 2.3e-5 / 3.2e-5 |
/// | index 3 1e-6  | 4.3e-8 / 1.1e-7 | 5.1e-7 / 4.1e-7 |
/// | index 3 1e-8  | 2.4e-10 / 7.2e-10 | 2.0e-8 / 1.8e-8 |
///
/// Both forms are within 10 tol. On the index-3 form radau5.f's design
/// divides the tolerance of v (index 2) by h and that of λ (index 3) by
/// h², so v alone would be controlled only to about tol/h̄; there the
/// stepper runs at the tolerance-proportional σ · tol, σ = 0.1 rtol^(1/5)
/// (module documentation of `dae/radau.rs`: 67–493 steps instead of
/// 30–120, and before it q 3.8e-5 / 1.1e-4, 4.1e-7 / 3.7e-6, 4.5e-7 /
/// 4.4e-7 and v 8.0e-4 / 3.1e-4, 1.2e-5 / 5.4e-6, 1.0e-6 / 1.7e-6).
///
/// Φ (and Φ_q v for GGL) are equations of every stage, so they hold to the
/// Newton tolerance at the step ends: measured max |Φ| over the steps
/// 8.6e-6, 7.2e-8, 4.5e-10 at 1e-4, 1e-6, 1e-8 (both forms alike), GGL
/// |Φ_q v| 6.0e-5, 3.6e-7, 3.2e-9 (index 3 leaves it free: 5e-3 at 1e-4).
/// Between the steps the collocation polynomial (dense output every 0.05)
/// stays within the bound of the end point: max q error on the grid 1.9e-5,
/// 9.7e-7, 3.2e-8 (GGL), 1.0e-5, 1.6e-7, 5.2e-9 (index 3).
#[test]
fn adaptive_runs_meet_their_tolerance() {
    for form in [DaeForm::Ggl, DaeForm::Index3] {
        for d in [0.3, 0.0] {
            let cp = CartesianPendulum::damped(d);
            for tol in [1e-4, 1e-6, 1e-8] {
                let mut o = SolverOptions::default().with_tol(tol, tol);
                let mut p = DaePendulum::new(d, form);
                let y0 = p.y0(THETA0, OMEGA0);
                let mut rec = Recorder::default();
                let r = solve(&mut p, &mut DaeRadau5::new(), 0.0, &y0, 2.0, &o, &mut rec)
                    .unwrap_or_else(|e| panic!("{form:?} {tol:e}: {e}"));
                let s = r.stats;
                let re = cp.reference(THETA0, OMEGA0, 2.0);
                let (eq, ev) = (
                    max_abs_diff(&r.y[..2], &re[..2]),
                    max_abs_diff(&r.y[2..4], &re[2..4]),
                );
                let (mut phi, mut dphi) = (0.0f64, 0.0f64);
                for y in &rec.y {
                    let (a, b) = constraints(y);
                    (phi, dphi) = (phi.max(a), dphi.max(b));
                }
                // dense output (collocation polynomial) on a grid
                o.output = OutputGrid::Every(0.05);
                let mut p = DaePendulum::new(d, form);
                let mut grid = Recorder::default();
                solve(&mut p, &mut DaeRadau5::new(), 0.0, &y0, 2.0, &o, &mut grid).unwrap();
                assert_eq!(grid.t.len(), 41);
                let mut dense_q = 0.0f64;
                for (t, y) in grid.t.iter().zip(&grid.y) {
                    let rt = cp.reference(THETA0, OMEGA0, *t);
                    dense_q = dense_q.max(max_abs_diff(&y[..2], &rt[..2]));
                }
                let hbar = 2.0 / s.n_accept as f64;
                println!(
                    "{form:?} d = {d} tol {tol:e}: q {eq:.1e} v {ev:.1e} dense q {dense_q:.1e} \
                     |Φ| {phi:.1e} |Φ_q v| {dphi:.1e} h̄ {hbar:.3} {s:?}"
                );
                let (bq, bv) = (10.0 * tol, 10.0 * tol);
                assert!(
                    eq < bq,
                    "{form:?} d = {d} tol {tol:e}: q error {eq:e} > {bq:e}"
                );
                assert!(
                    ev < bv,
                    "{form:?} d = {d} tol {tol:e}: v error {ev:e} > {bv:e}"
                );
                assert!(dense_q < bq, "{form:?} {tol:e}: dense q error {dense_q:e}");
                assert!(phi < tol, "{form:?} {tol:e}: |Φ| = {phi:e}");
                if form == DaeForm::Ggl {
                    assert!(dphi < tol, "GGL {tol:e}: |Φ_q v| = {dphi:e}");
                }
                assert!(s.n_accept > 0 && s.n_rhs > 0 && s.n_jac > 0 && s.n_lu > 0);
                assert!(s.n_newton_iter >= s.n_accept);
                assert!(s.accumulated_error > 0.0 && s.accumulated_error <= s.n_accept as f64);
            }
        }
    }
}

/// The pendulum DAE without its exact iteration matrix (difference
/// quotients through the counted residual), optionally with a residual
/// that turns NaN (without reporting it) from `nan_from` on.
struct Plain {
    dae: ConstrainedDae<CartesianPendulum>,
    nan_from: f64,
}

impl DaeProblem for Plain {
    fn dim(&self) -> usize {
        self.dae.dim()
    }
    fn residual(&mut self, t: f64, y: &[f64], yp: &[f64], r: &mut [f64]) -> Result<(), EvalError> {
        self.dae.residual(t, y, yp, r)?;
        if t >= self.nan_from {
            r[0] = f64::NAN;
        }
        Ok(())
    }
    fn variable_index(&self) -> &[u8] {
        self.dae.variable_index()
    }
    fn is_differential(&self) -> &[bool] {
        self.dae.is_differential()
    }
    fn consistent_derivative(
        &mut self,
        t: f64,
        y: &[f64],
        yp: &mut [f64],
    ) -> Result<(), EvalError> {
        self.dae.consistent_derivative(t, y, yp)
    }
}

impl OdeProblem for Plain {
    fn dim(&self) -> usize {
        self.dae.dim()
    }
    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        self.dae.consistent_derivative(t, y, dy)
    }
    fn as_dae(&mut self) -> Option<&mut dyn DaeProblem> {
        Some(self)
    }
}

fn plain(form: DaeForm, nan_from: f64) -> (Plain, Vec<f64>) {
    let p = DaePendulum::new(0.3, form);
    let y0 = p.y0(THETA0, OMEGA0);
    (
        Plain {
            dae: p.dae,
            nan_from,
        },
        y0,
    )
}

/// Difference-quotient Jacobians give the accuracy of the exact ones, and
/// their residuals are counted: measured GGL at 1e-6, q error 1.5e-7 both
/// ways, n_rhs 539 exact against 1295 with differences
/// (54 Jacobians of 14 residuals each).
#[test]
fn difference_quotient_jacobians_are_counted_and_as_accurate() {
    let o = SolverOptions::default().with_tol(1e-6, 1e-6);
    let (e_exact, s_exact) = run(DaeForm::Ggl, 0.3, &o, 2.0);
    let (mut p, y0) = plain(DaeForm::Ggl, f64::INFINITY);
    let r = solve(
        &mut p,
        &mut DaeRadau5::new(),
        0.0,
        &y0,
        2.0,
        &o,
        &mut Discard,
    )
    .unwrap();
    let re = CartesianPendulum::damped(0.3).reference(THETA0, OMEGA0, 2.0);
    let eq = max_abs_diff(&r.y[..2], &re[..2]);
    println!(
        "exact: q {:.2e} {s_exact:?}\nfd: q {eq:.2e} {:?}",
        e_exact[0], r.stats
    );
    assert!(eq < 10.0 * 1e-6, "q error {eq:e}");
    // the same steps and iterations; each Jacobian costs two difference
    // quotients of n + 1 = 7 residuals
    assert_eq!(r.stats.n_accept, s_exact.n_accept);
    assert_eq!(r.stats.n_newton_iter, s_exact.n_newton_iter);
    assert_eq!(r.stats.n_rhs, s_exact.n_rhs + 14 * r.stats.n_jac);
}

/// A residual that turns NaN is an error, not a panic: at fixed steps the
/// first NaN stops the run; adaptive runs shrink the step against it and
/// stop at the NaN boundary; NaN from the start is caught in the Jacobian.
#[test]
fn nan_residual_is_an_error() {
    for form in [DaeForm::Index3, DaeForm::Ggl] {
        let fixed = SolverOptions::default().with_fixed_step(0.01);
        let (mut p, y0) = plain(form, 0.3);
        let e = solve(
            &mut p,
            &mut DaeRadau5::new(),
            0.0,
            &y0,
            1.0,
            &fixed,
            &mut Discard,
        )
        .unwrap_err();
        println!("{form:?} fixed: {e}");
        assert!(
            matches!(e.error, IntegrateError::Eval { .. }),
            "{form:?}: {e}"
        );
        assert!(e.t <= 0.3 && e.t > 0.25, "{form:?}: stopped at {}", e.t);

        let adaptive = SolverOptions::default().with_tol(1e-6, 1e-6);
        let (mut p, y0) = plain(form, 0.3);
        let e = solve(
            &mut p,
            &mut DaeRadau5::new(),
            0.0,
            &y0,
            1.0,
            &adaptive,
            &mut Discard,
        )
        .unwrap_err();
        println!("{form:?} adaptive: {e}");
        assert!(
            matches!(
                e.error,
                IntegrateError::Eval { .. }
                    | IntegrateError::StepSizeTooSmall { .. }
                    | IntegrateError::NewtonFailed { .. }
            ),
            "{form:?}: {e}"
        );
        assert!(e.t <= 0.3 && e.t > 0.2, "{form:?}: stopped at {}", e.t);

        let (mut p, y0) = plain(form, 0.0);
        let e = solve(
            &mut p,
            &mut DaeRadau5::new(),
            0.0,
            &y0,
            1.0,
            &adaptive,
            &mut Discard,
        )
        .unwrap_err();
        println!("{form:?} NaN from t0: {e}");
        assert!(matches!(e.error, IntegrateError::Eval { .. }), "{e}");
        assert_eq!(e.t, 0.0);
    }
}

/// A problem that is no DAE is refused by name.
#[test]
fn a_problem_without_a_dae_is_unsupported() {
    let mut ode = CartesianPendulum::damped(0.3).angle_ode();
    let o = SolverOptions::default();
    let e = solve(
        &mut ode,
        &mut DaeRadau5::new(),
        0.0,
        &[1.0, 0.0],
        1.0,
        &o,
        &mut Discard,
    )
    .unwrap_err();
    match e.error {
        IntegrateError::Unsupported { method, .. } => assert_eq!(method, "radau5"),
        other => panic!("expected Unsupported, got {other}"),
    }
}

/// Steps allocate nothing once the stepper is sized: 50 steps after the
/// first, with Jacobian evaluations, factorisations, rejections and dense
/// output, adaptive and at fixed steps. The only allocations are the
/// problem's own: the GGL blocks ∂(Φ_qᵀμ)/∂q and ∂(Φ_q v)/∂q of the
/// testkit pendulum are the allocating difference-quotient defaults of
/// `ConstrainedSecondOrderProblem` (measured per Jacobian evaluation and
/// subtracted; 0 for index 3).
#[test]
fn steps_do_not_allocate() {
    for form in [DaeForm::Index3, DaeForm::Ggl] {
        for fixed in [None, Some(0.01)] {
            let mut o = SolverOptions::default().with_tol(1e-6, 1e-6);
            o.fixed_step = fixed;
            let mut p = DaePendulum::new(0.3, form);
            let y0 = p.y0(THETA0, OMEGA0);
            let nd = y0.len();
            // what one evaluation of J and M costs the problem itself
            let (mut j, mut m) = (DMatrix::zeros(nd, nd), DMatrix::zeros(nd, nd));
            let yp = vec![0.0; nd];
            // the DAE sizes its dense blocks on their first use (issue 32:
            // the sparse path forms none): not a cost per Jacobian
            p.dae.iteration_matrix(0.0, &y0, &yp, 0.0, &mut j).unwrap();
            let before = allocations();
            p.dae.iteration_matrix(0.0, &y0, &yp, 0.0, &mut j).unwrap();
            p.dae.derivative_jacobian(0.0, &y0, &yp, &mut m).unwrap();
            let per_jac = allocations() - before;
            let mut out = vec![0.0; nd];
            let mut st = DaeRadau5::new();
            let mut stats = Stats::default();
            let mut ctx = StepContext {
                opts: &o,
                stats: &mut stats,
            };
            st.reset(&mut p, 0.0, &y0, &mut ctx).unwrap();
            st.step(&mut p, 10.0, &mut ctx).unwrap();
            let jac0 = ctx.stats.n_jac;
            let before = allocations();
            for _ in 0..50 {
                st.step(&mut p, 10.0, &mut ctx).unwrap();
                st.interpolate(0.5 * (st.t_prev() + st.t()), &mut out);
            }
            let n = allocations() - before;
            let s = *ctx.stats;
            assert!(s.n_jac > 10 && s.n_lu > 10, "{s:?}");
            let by_problem = (s.n_jac - jac0) * per_jac;
            println!("{form:?} fixed {fixed:?}: {n} allocations, {per_jac} per Jacobian");
            assert_eq!(
                n, by_problem,
                "{form:?} fixed {fixed:?}: {n} allocations in 50 steps, {by_problem} by the problem"
            );
        }
    }
}
