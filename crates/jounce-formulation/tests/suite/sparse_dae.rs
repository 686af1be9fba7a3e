//! The DAE methods' sparse iteration matrices on `index3` and `ggl`
//! (`DaeProblem::sparsity`, `dae/sparse_iteration.rs`) against the dense
//! ones: the same pattern as the dense G, the same step sequences and
//! results to rounding for bdf and radau5, the choice made by
//! `settings.linear_solver`, and no allocation per step.

use crate::chain;
use crate::counting_alloc;

use chain::pendulum_chain;
use counting_alloc::allocations;

use jounce_formulation::{build, DaeFormulation, Formulation, FormulationSettings, LinearSolver};
use jounce_integrate::{method, solve, Discard, OdeProblem, SolverOptions};
use jounce_mechanics::{assemble, MechanicalSystem, PlanarSystem};
use nalgebra::DMatrix;

fn settings(solver: LinearSolver) -> FormulationSettings {
    FormulationSettings {
        linear_solver: solver,
        ..FormulationSettings::default()
    }
}

/// One run: the final state, the allocations made after set-up, the
/// accepted and rejected steps and the factorisations.
struct Run {
    y: Vec<f64>,
    allocations: u64,
    accepted: u64,
    rejected: u64,
    lu: u64,
}

fn run(
    sys: &PlanarSystem,
    formulation: &str,
    solver: LinearSolver,
    method_name: &str,
    opts: &SolverOptions,
    t_end: f64,
) -> Run {
    let a = assemble(sys, 0.0, &sys.initial_q(), &sys.initial_v(), 1e-12).unwrap();
    let mut f = build(formulation, &settings(solver), sys).unwrap();
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
    .unwrap_or_else(|e| panic!("{method_name} on {formulation} with {solver}: {e}"));
    Run {
        y: solved.y,
        allocations: allocations() - before,
        accepted: solved.stats.n_accept,
        rejected: solved.stats.n_reject,
        lu: solved.stats.n_lu,
    }
}

/// max |a − b| / max |b| over the positions and velocities (the first
/// `k` entries).
fn rel_diff(a: &[f64], b: &[f64], k: usize) -> f64 {
    let scale = b[..k].iter().fold(0.0_f64, |s, x| s.max(x.abs()));
    a[..k]
        .iter()
        .zip(&b[..k])
        .fold(0.0_f64, |s, (x, y)| s.max((x - y).abs()))
        / scale
}

/// The sparse G and ∂F/∂y' equal the dense ones entry for entry, at an
/// arbitrary inconsistent point, in both forms: the pattern holds every
/// nonzero of the dense matrices (nothing is lost), and the values are
/// the same numbers (sums of the same blocks: equal to the last bit but
/// for repeated entries, which add in another order: 1e-14 relative).
#[test]
fn sparse_iteration_matrix_equals_the_dense_one() {
    let sys = pendulum_chain(7);
    for form in ["index3", "ggl"] {
        let (mut f, mut fd) = match form {
            "index3" => (DaeFormulation::index3(&sys), DaeFormulation::index3(&sys)),
            _ => (DaeFormulation::ggl(&sys), DaeFormulation::ggl(&sys)),
        };
        f = f.with_linear_solver(LinearSolver::Sparse);
        fd = fd.with_linear_solver(LinearSolver::Dense);
        let dae = f.as_dae().unwrap();
        let dense = fd.as_dae().unwrap();
        assert!(dense.sparsity().is_none(), "{form}: dense declares none");
        let entries = dae.sparsity().expect("sparse declares its pattern");
        let nd = dae.dim();
        let y: Vec<f64> = (0..nd).map(|i| 0.3 + 0.17 * (i % 7) as f64).collect();
        let yp: Vec<f64> = (0..nd).map(|i| -0.5 + 0.23 * (i % 5) as f64).collect();
        let c = 37.0;
        let (mut g, mut mj) = (DMatrix::zeros(nd, nd), DMatrix::zeros(nd, nd));
        dense.iteration_matrix(0.2, &y, &yp, c, &mut g).unwrap();
        dense.derivative_jacobian(0.2, &y, &yp, &mut mj).unwrap();
        let mut values = vec![0.0; entries.len()];
        let (mut gs, mut ms) = (DMatrix::zeros(nd, nd), DMatrix::zeros(nd, nd));
        dae.sparse_iteration_matrix(0.2, &y, &yp, c, &mut values)
            .unwrap();
        for (&(i, j), v) in entries.iter().zip(&values) {
            gs[(i, j)] += v;
        }
        dae.sparse_derivative_jacobian(0.2, &y, &yp, &mut values)
            .unwrap();
        for (&(i, j), v) in entries.iter().zip(&values) {
            ms[(i, j)] += v;
        }
        let scale = g.amax().max(1.0);
        let dg = (&gs - &g).amax() / scale;
        let dm = (&ms - &mj).amax();
        eprintln!(
            "{form}: {} entries for {nd} × {nd}; G differs by {dg:.1e}, ∂F/∂y' by {dm:.1e}",
            entries.len()
        );
        assert!(dg <= 1e-14, "{form}: sparse G differs by {dg:e}");
        assert_eq!(dm, 0.0, "{form}: sparse ∂F/∂y' differs");
        // O(N) entries: far fewer than the dense matrix has
        assert!(entries.len() < nd * nd / 4, "{form}: {}", entries.len());
        // and the sparse residual is the dense one
        let (mut r, mut rd) = (vec![0.0; nd], vec![0.0; nd]);
        dae.residual(0.2, &y, &yp, &mut r).unwrap();
        dense.residual(0.2, &y, &yp, &mut rd).unwrap();
        let dr = rel_diff(&r, &rd, nd);
        assert!(dr <= 1e-14, "{form}: sparse residual differs by {dr:e}");
    }
}

/// The consistent initial derivative y0' of the DAE methods by the sparse
/// factorisation (the Schur complement Φ_q M⁻¹ Φ_qᵀ of the formulation's
/// KKT solver, issue 32) equals the one of the dense LU of the whole KKT
/// matrix to 1e-10 relative, on a 20-link chain in both forms, and zeroes
/// the residual: F(t0, y0, y0') = 0 to rounding (1e-9 of |Q|, as the
/// dense start).
#[test]
fn sparse_and_dense_consistent_derivatives_agree() {
    let sys = pendulum_chain(20);
    let a = assemble(&sys, 0.0, &sys.initial_q(), &sys.initial_v(), 1e-12).unwrap();
    // a moving start on Φ_q v = 0, so that γ and the velocity terms are
    // exercised: the chain turning rigidly about the ground pin
    let mut v_ok = a.v.clone();
    for (i, q) in a.q.chunks(3).enumerate() {
        v_ok[3 * i] = -0.7 * q[1];
        v_ok[3 * i + 1] = 0.7 * q[0];
        v_ok[3 * i + 2] = 0.7;
    }
    for form in ["index3", "ggl"] {
        let mk = |solver| {
            let f = match form {
                "index3" => DaeFormulation::index3(&sys),
                _ => DaeFormulation::ggl(&sys),
            };
            f.with_linear_solver(solver)
        };
        let (mut fs, mut fd) = (mk(LinearSolver::Sparse), mk(LinearSolver::Dense));
        let y0 = fs.initial_state(0.0, &a.q, &v_ok).unwrap();
        let yd0 = fd.initial_state(0.0, &a.q, &v_ok).unwrap();
        let nd = y0.len();
        let lam = rel_diff(&y0[2 * sys.nq()..], &yd0[2 * sys.nq()..], nd - 2 * sys.nq());
        let (mut yps, mut ypd) = (vec![0.0; nd], vec![0.0; nd]);
        fs.as_dae()
            .unwrap()
            .consistent_derivative(0.0, &y0, &mut yps)
            .unwrap();
        fd.as_dae()
            .unwrap()
            .consistent_derivative(0.0, &y0, &mut ypd)
            .unwrap();
        let d = rel_diff(&yps, &ypd, nd);
        let mut r = vec![0.0; nd];
        fs.as_dae()
            .unwrap()
            .residual(0.0, &y0, &yps, &mut r)
            .unwrap();
        let worst = r.iter().fold(0.0f64, |s, x| s.max(x.abs()));
        eprintln!("{form}: y0' sparse vs dense {d:.1e}, λ0 {lam:.1e}, |F| {worst:.1e}");
        assert!(d <= 1e-10, "{form}: sparse y0' differs by {d:e}");
        assert!(lam <= 1e-10, "{form}: sparse λ0 differs by {lam:e}");
        assert!(worst <= 1e-9, "{form}: |F(t0, y0, y0')| = {worst:e}");
        assert!(yps[sys.nq()..2 * sys.nq()].iter().any(|x| x.abs() > 1.0));
    }
}

/// bdf and radau5, adaptive, on both forms of a 20-link chain. The
/// sparse LU factors the same matrices as the dense one in another pivot
/// order. On the index-2 form (ggl) that changes only rounding: the runs
/// take the same steps (accepted, rejected, factorisations) and end
/// within 1e-10 of each other (measured 4e-13 bdf, 2e-13 radau5). On the
/// index-3 form the iteration matrices have condition O(h⁻³) (radau5;
/// bdf's scaled one less, but λ still carries O(ε/h²)), so rounding of
/// relative size 1e-9 in λ moves the error estimates and, over 150 steps,
/// some step-size decisions (measured 149 vs 152 steps, final states
/// 3e-7 apart at rtol = 1e-6): there the two must take nearly the same
/// steps (within 15 %) and be equally accurate against a run at
/// rtol = 1e-10 (measured 5.7e-7 vs 5.2e-7 bdf, 1.1e-7 vs 1.4e-7 radau5).
/// The rounding of the start alone moves bdf's steps by that much: with
/// y0' from the sparse Schur complement instead of a dense LU (issue 32)
/// bdf took 162 steps against the dense run's 145 (errors 3.2e-7 and
/// 6.6e-7), and the dense run itself 145 with a full-pivot LU of the KKT
/// matrix against 152 with a partial-pivot one. With fixed steps
/// (h = 1e-2, no step decisions, Newton to round-off) both forms agree
/// within 1e-10 (measured ggl 5e-14 bdf, 7e-16 radau5; index3 5e-11,
/// 1.5e-13).
#[test]
fn sparse_and_dense_dae_runs_agree() {
    let sys = pendulum_chain(20);
    let k = 2 * sys.nq();
    let opts = SolverOptions::default().with_tol(1e-6, 1e-6);
    let tight = SolverOptions::default().with_tol(1e-10, 1e-10);
    let t_end = 0.5;
    for form in ["ggl", "index3"] {
        for name in ["bdf", "radau5"] {
            let dense = run(&sys, form, LinearSolver::Dense, name, &opts, t_end);
            let sparse = run(&sys, form, LinearSolver::Sparse, name, &opts, t_end);
            let e = rel_diff(&sparse.y, &dense.y, k);
            eprintln!(
                "{name} on {form}: sparse {} / {} steps, {} LU; dense {} / {}, {} LU; \
                 sparse vs dense {e:.1e}",
                sparse.accepted,
                sparse.rejected,
                sparse.lu,
                dense.accepted,
                dense.rejected,
                dense.lu
            );
            if form == "ggl" {
                assert_eq!(
                    (sparse.accepted, sparse.rejected, sparse.lu),
                    (dense.accepted, dense.rejected, dense.lu),
                    "{name} on {form}: steps differ"
                );
                assert!(
                    e <= 1e-10,
                    "{name} on {form}: sparse vs dense differ by {e:e}"
                );
            } else {
                let reference = run(&sys, form, LinearSolver::Sparse, name, &tight, t_end);
                let (es, ed) = (
                    rel_diff(&sparse.y, &reference.y, k),
                    rel_diff(&dense.y, &reference.y, k),
                );
                eprintln!("  error against rtol = 1e-10: sparse {es:.1e}, dense {ed:.1e}");
                assert!(
                    sparse.accepted.abs_diff(dense.accepted) * 100 <= 15 * dense.accepted,
                    "{name} on {form}: {} vs {} steps",
                    sparse.accepted,
                    dense.accepted
                );
                assert!(
                    es <= 2.0 * ed + 1e-9,
                    "{name} on {form}: error {es:e} vs {ed:e}"
                );
            }
        }
    }
    // fixed steps: no step decision, Newton to round-off (bdf of order 5
    // after an inner adaptive start; radau5)
    let fixed = SolverOptions::default().with_fixed_step(1e-2);
    for form in ["ggl", "index3"] {
        for name in ["bdf", "radau5"] {
            let dense = run(&sys, form, LinearSolver::Dense, name, &fixed, t_end);
            let sparse = run(&sys, form, LinearSolver::Sparse, name, &fixed, t_end);
            let e = rel_diff(&sparse.y, &dense.y, k);
            eprintln!("{name} on {form}, h = 1e-2: sparse vs dense {e:.1e}");
            assert!(
                e <= 1e-10,
                "{name} on {form} fixed: sparse vs dense differ by {e:e}"
            );
        }
    }
}

/// `auto` declares the pattern from n + m = 40 on (the structural
/// driver's threshold), `dense` never, `sparse` always.
#[test]
fn the_linear_solver_setting_chooses_the_dae_iteration_matrix() {
    let small = pendulum_chain(3); // n + m = 15
    let large = pendulum_chain(8); // n + m = 40
    let declared = |sys: &PlanarSystem, s: LinearSolver| {
        DaeFormulation::index3(sys)
            .with_linear_solver(s)
            .as_dae()
            .unwrap()
            .sparsity()
            .is_some()
    };
    assert!(!declared(&small, LinearSolver::Auto));
    assert!(declared(&large, LinearSolver::Auto));
    assert!(declared(&small, LinearSolver::Sparse));
    assert!(!declared(&large, LinearSolver::Dense));
}

/// After set-up, a run twice as long allocates nothing more, for both
/// methods and both forms on the sparse path.
#[test]
fn sparse_dae_steps_do_not_allocate() {
    let sys = pendulum_chain(20);
    let opts = SolverOptions::default().with_tol(1e-6, 1e-6);
    for form in ["index3", "ggl"] {
        for name in ["bdf", "radau5"] {
            let short = run(&sys, form, LinearSolver::Sparse, name, &opts, 0.4);
            let long = run(&sys, form, LinearSolver::Sparse, name, &opts, 0.8);
            eprintln!(
                "{name} on {form}: {} allocations for {} steps, {} for {}",
                short.allocations, short.accepted, long.allocations, long.accepted
            );
            assert!(long.accepted > short.accepted + 10, "{name} on {form}");
            assert_eq!(
                long.allocations, short.allocations,
                "{name} on {form}: allocations per step on the sparse path"
            );
        }
    }
}

/// The residual takes the problem's O(nnz) evaluation from the build on,
/// before any integrator has asked for the pattern (the criterion bench
/// of the residual, an analysis, a method with a dense linear solver):
/// its first call allocates nothing, where the dense branch sizes six
/// n × n and m × n blocks, and both give the same F to rounding; in both
/// forms (GGL's Φ_qᵀμ and Φ_q v from the sparse Φ_q: with the dense one
/// its residual grew as N² and needed 22 GB at 10 000 links).
#[test]
fn the_residual_is_sparse_from_the_build_on() {
    let sys = pendulum_chain(20);
    let a = assemble(&sys, 0.0, &sys.initial_q(), &sys.initial_v(), 1e-12).unwrap();
    for form in ["index3", "ggl"] {
        let first_call = |solver: LinearSolver| {
            let f = match form {
                "index3" => DaeFormulation::index3(&sys),
                _ => DaeFormulation::ggl(&sys),
            };
            let mut f = f.with_linear_solver(solver);
            let y = f.initial_state(0.0, &a.q, &a.v).unwrap();
            let dae = f.as_dae().unwrap();
            let nd = dae.dim();
            let yp: Vec<f64> = (0..nd).map(|i| 0.1 + 0.01 * i as f64).collect();
            let mut r = vec![0.0; nd];
            let before = allocations();
            dae.residual(0.1, &y, &yp, &mut r).unwrap();
            (allocations() - before, r)
        };
        let (sparse_allocs, rs) = first_call(LinearSolver::Sparse);
        let (dense_allocs, rd) = first_call(LinearSolver::Dense);
        assert_eq!(
            sparse_allocs, 0,
            "{form}: the first residual took the dense branch"
        );
        assert!(
            dense_allocs > 0,
            "{form}: the dense branch no longer sizes its blocks"
        );
        let scale = rd.iter().fold(1.0_f64, |s, x| s.max(x.abs()));
        let diff = rs
            .iter()
            .zip(&rd)
            .fold(0.0_f64, |s, (x, y)| s.max((x - y).abs()));
        assert!(
            diff <= 1e-13 * scale,
            "{form}: sparse and dense F differ by {diff:e}"
        );
    }
}
