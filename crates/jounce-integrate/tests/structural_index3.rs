//! The structural family on the index-3 DAE M q'' + Φ_qᵀλ = Q, Φ = 0
//! (Arnold & Brüls 2007; HHT-I3 of Negrut et al. 2007), on a pendulum in
//! Cartesian coordinates whose exact motion comes from the angle ODE:
//! second order in positions, velocities and multipliers at fixed steps,
//! positions on the constraint to the Newton tolerance at every step,
//! adaptive runs within their tolerance.

use jounce_integrate::{
    method, solve, ConstrainedSecondOrderProblem, EvalError, OdeProblem, Recorder, SolverOptions,
};
use nalgebra::DMatrix;

const G: f64 = 9.81;
const L: f64 = 1.3;
const MASS: f64 = 0.7;

/// A point mass on a rigid massless rod of length L pinned at the origin:
/// q = (x, y), Φ = (x² + y² − L²)/2, Φ_q = (x, y), γ = −(vx² + vy²);
/// M q'' = (0, −m g) − Φ_qᵀλ, so λ = tension / L.
struct Pendulum;

impl ConstrainedSecondOrderProblem for Pendulum {
    fn n_positions(&self) -> usize {
        2
    }
    fn n_velocities(&self) -> usize {
        2
    }
    fn n_constraints(&self) -> usize {
        1
    }
    fn mass_matrix(&mut self, _: f64, _: &[f64], m: &mut DMatrix<f64>) -> Result<(), EvalError> {
        m.fill_with_identity();
        *m *= MASS;
        Ok(())
    }
    fn forces(&mut self, _: f64, _: &[f64], _: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        f[0] = 0.0;
        f[1] = -MASS * G;
        Ok(())
    }
    fn constraints(&mut self, _: f64, q: &[f64], phi: &mut [f64]) -> Result<(), EvalError> {
        phi[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] - L * L);
        Ok(())
    }
    fn constraint_jacobian(
        &mut self,
        _: f64,
        q: &[f64],
        j: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        j[(0, 0)] = q[0];
        j[(0, 1)] = q[1];
        Ok(())
    }
    fn velocity_rhs(&mut self, _: f64, _: &[f64], nu: &mut [f64]) -> Result<(), EvalError> {
        nu[0] = 0.0;
        Ok(())
    }
    fn gamma(&mut self, _: f64, _: &[f64], v: &[f64], g: &mut [f64]) -> Result<(), EvalError> {
        g[0] = -(v[0] * v[0] + v[1] * v[1]);
        Ok(())
    }
    /// K = ∂(Φ_qᵀλ)/∂q = λ I, C = 0.
    fn tangent(
        &mut self,
        _: f64,
        _: &[f64],
        _: &[f64],
        _: &[f64],
        lambda: &[f64],
        k: &mut DMatrix<f64>,
        c: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        k.fill_with_identity();
        *k *= lambda[0];
        c.fill(0.0);
        Ok(())
    }
    fn has_exact_tangent(&self) -> bool {
        true
    }
}

impl OdeProblem for Pendulum {
    fn dim(&self) -> usize {
        5
    }
    /// [v; q''; 0] with q'' from the KKT system (initial-step estimates only).
    fn rhs(&mut self, _: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        let (x, yy, vx, vy) = (y[0], y[1], y[2], y[3]);
        // m a = Q − q λ, q·a = −|v|² → λ = m (q·g_vec + |v|²)/|q|²
        let lam = MASS * (-G * yy + vx * vx + vy * vy) / (x * x + yy * yy);
        dy[0] = vx;
        dy[1] = vy;
        dy[2] = -x * lam / MASS;
        dy[3] = -G - yy * lam / MASS;
        dy[4] = 0.0;
        Ok(())
    }
    fn as_constrained_second_order(&mut self) -> Option<&mut dyn ConstrainedSecondOrderProblem> {
        Some(self)
    }
}

/// θ'' = −(g/L) sin θ with θ from the downward vertical.
struct Angle;

impl OdeProblem for Angle {
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&mut self, _: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        dy[0] = y[1];
        dy[1] = -(G / L) * y[0].sin();
        Ok(())
    }
}

const THETA0: f64 = 1.1;
const OMEGA0: f64 = 0.4;

/// Exact (q, v, λ) at t from a dop853 run of the angle ODE at 1e-13.
fn exact(t: f64) -> [f64; 5] {
    if t == 0.0 {
        return state(THETA0, OMEGA0);
    }
    let opts = SolverOptions::default().with_tol(1e-13, 1e-13);
    let mut st = method::build("dop853", &opts).unwrap();
    let r = solve(
        &mut Angle,
        st.as_mut(),
        0.0,
        &[THETA0, OMEGA0],
        t,
        &opts,
        &mut jounce_integrate::Discard,
    )
    .unwrap();
    state(r.y[0], r.y[1])
}

/// (q, v, λ) of the angle θ and rate ω.
fn state(th: f64, om: f64) -> [f64; 5] {
    let lam = MASS * (G * th.cos() + L * om * om) / L;
    [
        L * th.sin(),
        -L * th.cos(),
        L * th.cos() * om,
        L * th.sin() * om,
        lam,
    ]
}

fn y0() -> Vec<f64> {
    let e = exact(0.0);
    e.to_vec()
}

/// Run `name` on the pendulum to t_end; the recorder keeps every step.
fn run(name: &str, opts: &SolverOptions, t_end: f64) -> (Vec<f64>, Recorder, u64) {
    let mut st = method::build(name, opts).unwrap();
    let mut rec = Recorder::default();
    let r = solve(
        &mut Pendulum,
        st.as_mut(),
        0.0,
        &y0(),
        t_end,
        opts,
        &mut rec,
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    (r.y, rec, r.stats.n_accept)
}

/// Errors (q, v, λ) at t = 1 against the exact solution.
fn errors(y: &[f64], e: &[f64; 5]) -> [f64; 3] {
    [
        (y[0] - e[0]).abs().max((y[1] - e[1]).abs()),
        (y[2] - e[2]).abs().max((y[3] - e[3]).abs()),
        (y[4] - e[4]).abs(),
    ]
}

#[test]
fn fixed_step_index3_is_second_order_in_positions_velocities_and_multipliers() {
    let e = exact(1.0);
    for name in ["newmark", "hht", "generalized_alpha"] {
        let hs = [1e-2, 5e-3, 2.5e-3, 1.25e-3, 6.25e-4];
        let errs: Vec<[f64; 3]> = hs
            .iter()
            .map(|&h| {
                let (y, _, n) = run(name, &SolverOptions::default().with_fixed_step(h), 1.0);
                assert_eq!(n, (1.0 / h).round() as u64, "{name}");
                errors(&y, &e)
            })
            .collect();
        for (c, what) in ["q", "v", "lambda"].iter().enumerate() {
            let slope = (errs[0][c] / errs[hs.len() - 1][c]).log2() / (hs.len() - 1) as f64;
            eprintln!(
                "{name}: {what} errors {:?}, slope {slope:.3}",
                errs.iter().map(|e| e[c]).collect::<Vec<_>>()
            );
            assert!((slope - 2.0).abs() < 0.2, "{name} {what}: slope {slope}");
        }
    }
}

#[test]
fn index3_positions_stay_on_the_constraint_at_every_step() {
    for name in ["hht", "generalized_alpha", "newmark", "midpoint_rule"] {
        let opts = SolverOptions::default().with_fixed_step(1e-2);
        let (_, rec, _) = run(name, &opts, 20.0);
        let worst = rec
            .y
            .iter()
            .map(|y| (0.5 * (y[0] * y[0] + y[1] * y[1] - L * L)).abs())
            .fold(0.0, f64::max);
        eprintln!("{name}: max |Φ| over 2000 steps {worst:e}");
        assert!(worst < 1e-12, "{name}: |Φ| = {worst:e}");
    }
}

/// Adaptive runs: per-step error control (positions only on the index-3
/// equations, as HHT-I3) lets the global error grow with the number of
/// steps; the run's accumulated local error (`Stats::accumulated_error`,
/// the a-posteriori check behind `jounce run`'s accuracy warning) must
/// bound it honestly, and tighter tolerances must give smaller errors.
#[test]
fn adaptive_index3_errors_are_bounded_by_the_accumulated_estimate() {
    let e = exact(1.0);
    for name in ["hht", "generalized_alpha", "newmark"] {
        let mut last = f64::INFINITY;
        for tol in [1e-3, 1e-5, 1e-7] {
            let opts = SolverOptions::default().with_tol(tol, tol);
            let mut st = method::build(name, &opts).unwrap();
            let r = solve(
                &mut Pendulum,
                st.as_mut(),
                0.0,
                &y0(),
                1.0,
                &opts,
                &mut jounce_integrate::Discard,
            )
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            let err = errors(&r.y, &e);
            let acc = r.stats.accumulated_error;
            eprintln!(
                "{name} tol {tol:e}: {} steps, errors q {:.2e} v {:.2e} ({:.0} and {:.0} x tol), \
                 accumulated estimate {acc:.0} x tol",
                r.stats.n_accept,
                err[0],
                err[1],
                err[0] / tol,
                err[1] / tol
            );
            assert!(
                err[0] <= 5.0 * acc * tol,
                "{name} {tol}: q {err:?}, estimate {acc}"
            );
            assert!(err[0] < 0.5 * last, "{name} {tol}: no convergence in tol");
            last = err[0];
        }
    }
}

#[test]
fn wilson_is_refused_on_the_index3_form() {
    let opts = SolverOptions::default().with_fixed_step(1e-2);
    let mut st = method::build("wilson", &opts).unwrap();
    let err = solve(
        &mut Pendulum,
        st.as_mut(),
        0.0,
        &y0(),
        1.0,
        &opts,
        &mut jounce_integrate::Discard,
    )
    .unwrap_err();
    assert!(err.to_string().contains("index-3"), "{err}");
}
