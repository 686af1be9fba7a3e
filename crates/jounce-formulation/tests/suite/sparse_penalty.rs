//! The penalty formulation with M + αΦ_qᵀΦ_q assembled sparse and factored
//! by sparse LDLᵀ (`penalty.rs`, "Sparse") against the dense full-pivot
//! LU: the same right-hand side, Jacobian and multipliers to rounding, the
//! same run, the choice made by `settings.linear_solver`, and no
//! allocation per step.

use crate::chain;
use crate::counting_alloc;

use chain::pendulum_chain;
use counting_alloc::allocations;

use jounce_formulation::{build, Formulation, FormulationSettings, LinearSolver, Penalty};
use jounce_integrate::{method, solve, Discard, OdeProblem, SolverOptions};
use jounce_mechanics::{assemble, MechanicalSystem, PlanarSystem};
use nalgebra::DMatrix;

/// A state off the motion: positions moved, velocities set.
fn state(sys: &PlanarSystem) -> Vec<f64> {
    let n = sys.nq();
    let mut y: Vec<f64> = sys.initial_q();
    for (i, q) in y.iter_mut().enumerate() {
        *q += 1e-3 * ((i * 7 % 11) as f64 - 5.0);
    }
    y.extend((0..n).map(|i| 0.3 * ((i * 5 % 7) as f64 - 3.0)));
    y
}

fn penalty(sys: &PlanarSystem, solver: LinearSolver) -> Penalty<'_, PlanarSystem> {
    penalty_with(sys, solver, 1e7)
}

fn penalty_with(sys: &PlanarSystem, solver: LinearSolver, alpha: f64) -> Penalty<'_, PlanarSystem> {
    Penalty::new(sys, alpha, 10.0, 1.0)
        .unwrap()
        .with_linear_solver(solver)
}

/// max |a − b| / max |b|.
fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(0.0_f64, |s, x| s.max(x.abs()));
    a.iter()
        .zip(b)
        .fold(0.0_f64, |s, (x, y)| s.max((x - y).abs()))
        / scale
}

/// Right-hand side, first-order Jacobian and multipliers of a 20-link
/// chain at a state off the motion, sparse LDLᵀ against dense full-pivot
/// LU of M_p. Both are backward stable, so they agree to the condition of
/// M_p (≈ α |Φ_q|²/m) times ε: within 1e-11 at α = 1e3 and 1e-7 at
/// Bayo's α = 1e7 (measured 1e-13 to 1.4e-12 and 4e-9 to 1.3e-8; a wrong
/// term of M_p or of Φ_qᵀc gives O(1)).
#[test]
fn sparse_penalty_equals_the_dense_one() {
    let sys = pendulum_chain(20);
    let (n, m) = (sys.nq(), sys.nc());
    for (alpha, tol) in [(1e3, 1e-11), (1e7, 1e-7)] {
        let (mut sp, mut de) = (
            penalty_with(&sys, LinearSolver::Sparse, alpha),
            penalty_with(&sys, LinearSolver::Dense, alpha),
        );
        assert!(sp.uses_sparse_solver() && !de.uses_sparse_solver());
        let y = state(&sys);
        let (mut a, mut b) = (vec![0.0; 2 * n], vec![0.0; 2 * n]);
        sp.rhs(0.1, &y, &mut a).unwrap();
        de.rhs(0.1, &y, &mut b).unwrap();
        let e_rhs = rel_diff(&a[n..], &b[n..]);
        let (mut ja, mut jb) = (DMatrix::zeros(2 * n, 2 * n), DMatrix::zeros(2 * n, 2 * n));
        sp.jacobian(0.1, &y, &mut ja).unwrap();
        de.jacobian(0.1, &y, &mut jb).unwrap();
        let e_jac = (&ja - &jb).amax() / jb.amax();
        let (mut q, mut v) = (vec![0.0; n], vec![0.0; n]);
        let (mut la, mut lb) = (vec![0.0; m], vec![0.0; m]);
        sp.physical_state(0.1, &y, &mut q, &mut v, &mut la).unwrap();
        de.physical_state(0.1, &y, &mut q, &mut v, &mut lb).unwrap();
        let e_lambda = rel_diff(&la, &lb);
        eprintln!(
            "α = {alpha:e}: sparse vs dense q'' {e_rhs:.1e}, Jacobian {e_jac:.1e}, λ {e_lambda:.1e}"
        );
        assert!(e_rhs <= tol, "α = {alpha:e}: q'' differs by {e_rhs:e}");
        assert!(e_jac <= tol, "α = {alpha:e}: Jacobian differs by {e_jac:e}");
        assert!(e_lambda <= tol, "α = {alpha:e}: λ differs by {e_lambda:e}");
    }
}

/// `auto` factors sparse from n + m = 40 on, `dense` never, `sparse`
/// always (the factory passes the setting on).
#[test]
fn the_linear_solver_setting_chooses_the_penalty_factorisation() {
    let (small, large) = (pendulum_chain(3), pendulum_chain(8));
    assert!(!penalty(&small, LinearSolver::Auto).uses_sparse_solver());
    assert!(penalty(&large, LinearSolver::Auto).uses_sparse_solver());
    assert!(penalty(&small, LinearSolver::Sparse).uses_sparse_solver());
    assert!(!penalty(&large, LinearSolver::Dense).uses_sparse_solver());
}

/// The final state, allocations after set-up and accepted steps of a run
/// of `method_name` on penalty with `solver`.
fn run(
    sys: &PlanarSystem,
    solver: LinearSolver,
    method_name: &str,
    opts: &SolverOptions,
    t_end: f64,
) -> (Vec<f64>, u64, u64) {
    let a = assemble(sys, 0.0, &sys.initial_q(), &sys.initial_v(), 1e-12).unwrap();
    let s = FormulationSettings {
        linear_solver: solver,
        ..FormulationSettings::default()
    };
    let mut f = build("penalty", &s, sys).unwrap();
    let y0 = f.initial_state(0.0, &a.q, &a.v).unwrap();
    let mut stepper = method::build(method_name, opts).unwrap();
    let problem: &mut dyn OdeProblem = f.as_mut();
    let before = allocations();
    let solved = solve(
        problem,
        stepper.as_mut(),
        0.0,
        &y0,
        t_end,
        opts,
        &mut Discard,
    )
    .unwrap_or_else(|e| panic!("{method_name} on penalty with {solver}: {e}"));
    (solved.y, allocations() - before, solved.stats.n_accept)
}

/// An implicit run (the penalty problem is stiff: α = 1e7) sparse and
/// dense: the same steps and states within 1e-8 (measured 16 steps,
/// 5.6e-10); the sparse run twice as long allocates nothing more.
#[test]
fn sparse_penalty_runs_agree_and_do_not_allocate() {
    let sys = pendulum_chain(20);
    let opts = SolverOptions::default().with_tol(1e-6, 1e-6);
    let (yd, _, nd) = run(&sys, LinearSolver::Dense, "radau5", &opts, 0.3);
    let (ys, short, ns) = run(&sys, LinearSolver::Sparse, "radau5", &opts, 0.3);
    let e = rel_diff(&ys, &yd);
    eprintln!("radau5 on penalty: {ns} vs {nd} steps, sparse vs dense {e:.1e}");
    assert_eq!(ns, nd, "steps differ");
    assert!(e <= 1e-8, "sparse vs dense differ by {e:e}");
    let (_, long, nl) = run(&sys, LinearSolver::Sparse, "radau5", &opts, 0.6);
    eprintln!("{short} allocations for {ns} steps, {long} for {nl}");
    assert!(nl > ns + 5);
    assert_eq!(long, short, "allocations per step on the sparse path");
}
