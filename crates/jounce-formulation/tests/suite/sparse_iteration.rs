//! The structural driver's sparse iteration matrix on `index3`
//! (`ConstrainedSecondOrderProblem::sparsity`, `sparse_lu.rs`) against the
//! dense one: the same residual, the same trajectories with fixed and
//! adaptive steps, the choice made by `settings.linear_solver`, and no
//! allocation per step.

use crate::counting_alloc;

use counting_alloc::allocations;

use jounce_formulation::{build, DaeFormulation, FormulationSettings, LinearSolver};
use jounce_integrate::constrained::{dynamic_residual, ConstrainedSecondOrderProblem};
use jounce_integrate::{method, solve, Discard, OdeProblem, SolverOptions};
use jounce_mechanics::{assemble, MechanicalSystem, PlanarSystem};
use jounce_model::{Attachment, Body, BodyRef, Joint, JointKind, Model, Settings};
use nalgebra::DMatrix;

/// A chain of N parallelograms (`bench/pc_chain.py`, the peers' P-C):
/// N + 1 cranks pinned to the ground at x = 0..N and joined at their tips
/// by N couplers; slender rods of 1 kg and 1 m; cranks start vertical at
/// 1 rad/s. One degree of freedom, n = 3(2N + 1), m = 2(N + 1) + 4N.
fn parallelogram_chain(n: usize) -> PlanarSystem {
    let rod = |name: String, x: f64, y: f64, angle: f64, vx: f64, w: f64| Body {
        name,
        mass: 1.0,
        inertia: 1.0 / 12.0,
        position: [x, y],
        angle,
        velocity: [vx, 0.0],
        angular_velocity: w,
        points: vec![],
    };
    let half = std::f64::consts::FRAC_PI_2;
    let mut bodies: Vec<Body> = (0..=n)
        .map(|i| rod(format!("crank{i}"), i as f64, 0.5, half, -0.5, 1.0))
        .collect();
    bodies.extend((0..n).map(|i| rod(format!("coupler{i}"), i as f64 + 0.5, 1.0, 0.0, -1.0, 0.0)));
    let at = |body: BodyRef, point: [f64; 2]| Attachment { body, point };
    let pin = |name: String, a: Attachment, b: Attachment| Joint {
        name,
        kind: JointKind::Revolute { a, b },
        friction: None,
    };
    let mut joints: Vec<Joint> = (0..=n)
        .map(|i| {
            pin(
                format!("pivot{i}"),
                at(BodyRef::Ground, [i as f64, 0.0]),
                at(BodyRef::Body(i), [-0.5, 0.0]),
            )
        })
        .collect();
    for i in 0..n {
        let c = n + 1 + i;
        joints.push(pin(
            format!("coupler{i}_left"),
            at(BodyRef::Body(i), [0.5, 0.0]),
            at(BodyRef::Body(c), [-0.5, 0.0]),
        ));
        joints.push(pin(
            format!("coupler{i}_right"),
            at(BodyRef::Body(i + 1), [0.5, 0.0]),
            at(BodyRef::Body(c), [0.5, 0.0]),
        ));
    }
    let model = Model {
        name: format!("chain of {n} parallelograms"),
        source: "<test>".into(),
        gravity: [0.0, -9.81],
        bodies,
        joints,
        drivers: vec![],
        forces: vec![],
        settings: Settings::default(),
        spatial: None,
    };
    PlanarSystem::from_model(&model).expect("valid chain")
}

fn settings(solver: LinearSolver) -> FormulationSettings {
    FormulationSettings {
        linear_solver: solver,
        ..FormulationSettings::default()
    }
}

/// The final state of `method` on `index3` with `solver`, the allocations
/// made after set-up, and the accepted steps.
fn run(
    sys: &PlanarSystem,
    solver: LinearSolver,
    method_name: &str,
    opts: &SolverOptions,
    t_end: f64,
) -> (Vec<f64>, u64, u64) {
    run_in("index3", sys, solver, method_name, opts, t_end)
}

/// As [`run`] on `formulation`.
fn run_in(
    formulation: &str,
    sys: &PlanarSystem,
    solver: LinearSolver,
    method_name: &str,
    opts: &SolverOptions,
    t_end: f64,
) -> (Vec<f64>, u64, u64) {
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
    .unwrap_or_else(|e| panic!("{method_name} with {solver}: {e}"));
    (solved.y, allocations() - before, solved.stats.n_accept)
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

#[test]
fn the_linear_solver_setting_chooses_the_iteration_matrix() {
    let small = parallelogram_chain(1); // n + m = 17
    let large = parallelogram_chain(6); // n + m = 77
    let declared = |sys: &PlanarSystem, s: LinearSolver| {
        DaeFormulation::index3(sys)
            .with_linear_solver(s)
            .equations()
            .sparsity()
            .is_some()
    };
    assert!(!declared(&small, LinearSolver::Auto));
    assert!(declared(&large, LinearSolver::Auto));
    assert!(declared(&small, LinearSolver::Sparse));
    assert!(!declared(&large, LinearSolver::Dense));
    let p = DaeFormulation::index3(&large)
        .equations()
        .sparsity()
        .unwrap();
    // O(N) entries: each body's 3 × 3 block and each pin's 6 × 6 coupling
    let n = large.nq();
    assert!(p.tangent.len() < 30 * n, "{} entries", p.tangent.len());
    assert!(p.tangent.iter().all(|&(i, j)| i < n && j < n));
    assert!(p
        .constraint_jacobian
        .iter()
        .all(|&(k, j)| k < large.nc() && j < n));
}

#[test]
fn the_sparse_residual_equals_the_dense_one() {
    let sys = parallelogram_chain(4);
    let (n, m) = (sys.nq(), sys.nc());
    let mut f = DaeFormulation::index3(&sys);
    let eq = f.equations();
    let x = |k: usize, s: f64| -> Vec<f64> {
        (0..k).map(|i| s * ((i * 7 % 11) as f64 - 5.0)).collect()
    };
    let q: Vec<f64> = sys
        .initial_q()
        .iter()
        .zip(x(n, 1e-2))
        .map(|(a, b)| a + b)
        .collect();
    let (v, a, lambda) = (x(n, 0.3), x(n, 2.0), x(m, 5.0));
    let (mut r, mut phi) = (vec![0.0; n], vec![0.0; m]);
    eq.residual(0.2, &q, &v, &a, &lambda, &mut r, &mut phi)
        .unwrap();
    let (mut mass, mut jac) = (DMatrix::zeros(n, n), DMatrix::zeros(m, n));
    let (mut r0, mut phi0) = (vec![0.0; n], vec![0.0; m]);
    dynamic_residual(eq, 0.2, &q, &v, &a, &lambda, &mut mass, &mut jac, &mut r0).unwrap();
    eq.constraints(0.2, &q, &mut phi0).unwrap();
    let scale = r0.iter().fold(1.0_f64, |s, x| s.max(x.abs()));
    for i in 0..n {
        assert!(
            (r[i] - r0[i]).abs() <= 1e-14 * scale,
            "r[{i}]: {} vs {}",
            r[i],
            r0[i]
        );
    }
    for k in 0..m {
        assert!(
            (phi[k] - phi0[k]).abs() <= 1e-15,
            "Φ[{k}]: {} vs {}",
            phi[k],
            phi0[k]
        );
    }
}

/// Fixed steps: the same Newton iterates up to rounding, so the same
/// trajectory through the chain's singular (collinear) pose near t = 0.71
/// s; adaptive steps (up to that pose, where the adaptive structural
/// methods stop with a step-size underflow, dense and sparse alike): the
/// same step sequence up to the rounding of the error test.
#[test]
fn sparse_and_dense_iteration_matrices_give_the_same_motion() {
    let sys = parallelogram_chain(6);
    let k = 2 * sys.nq();
    let fixed = SolverOptions::default().with_fixed_step(5e-3);
    // past the first singular pose (cranks horizontal near t = 0.71 s)
    let (dense, _, _) = run(&sys, LinearSolver::Dense, "generalized_alpha", &fixed, 2.0);
    let (sparse, _, steps) = run(&sys, LinearSolver::Sparse, "generalized_alpha", &fixed, 2.0);
    assert_eq!(steps, 400);
    let e = rel_diff(&sparse, &dense, k);
    eprintln!("generalized_alpha, h = 5e-3: sparse vs dense {e:.1e}");
    assert!(e <= 1e-9, "fixed steps: sparse vs dense differ by {e:e}");
    let adaptive = SolverOptions::default().with_tol(1e-6, 1e-8);
    for name in ["hht", "generalized_alpha", "newmark"] {
        let (dense, _, nd) = run(&sys, LinearSolver::Dense, name, &adaptive, 0.6);
        let (sparse, _, ns) = run(&sys, LinearSolver::Sparse, name, &adaptive, 0.6);
        let e = rel_diff(&sparse, &dense, k);
        eprintln!("{name} adaptive: {ns} vs {nd} steps, sparse vs dense {e:.1e}");
        assert!(nd.abs_diff(ns) <= 2, "{name}: {ns} vs {nd} steps");
        assert!(e <= 1e-9, "{name}: sparse vs dense differ by {e:e}");
    }
}

/// The augmented Lagrangian with M, K, C and Φ_q on the sparse pattern
/// (issue 32: no dense n × n block) moves the chain as with the dense
/// ones: fixed steps to 1e-9 (the same iterates up to rounding), adaptive
/// steps within two steps and 1e-9 (measured: 100 and 84 steps alike,
/// 7.6e-14 and 5.6e-14 apart).
#[test]
fn sparse_and_dense_augmented_lagrangian_give_the_same_motion() {
    let sys = parallelogram_chain(6);
    let k = 2 * sys.nq();
    let fixed = SolverOptions::default().with_fixed_step(5e-3);
    let adaptive = SolverOptions::default().with_tol(1e-6, 1e-8);
    for (what, opts, t_end) in [("fixed", &fixed, 0.5), ("adaptive", &adaptive, 0.5)] {
        let al = "augmented_lagrangian";
        let (dense, _, nd) = run_in(
            al,
            &sys,
            LinearSolver::Dense,
            "generalized_alpha",
            opts,
            t_end,
        );
        let (sparse, _, ns) = run_in(
            al,
            &sys,
            LinearSolver::Sparse,
            "generalized_alpha",
            opts,
            t_end,
        );
        let e = rel_diff(&sparse, &dense, k);
        eprintln!("augmented Lagrangian, {what}: {ns} vs {nd} steps, sparse vs dense {e:.1e}");
        assert!(nd.abs_diff(ns) <= 2, "{what}: {ns} vs {nd} steps");
        assert!(e <= 1e-9, "{what}: sparse vs dense differ by {e:e}");
    }
}

/// After set-up, a run twice as long allocates nothing more.
#[test]
fn sparse_iteration_steps_do_not_allocate() {
    let sys = parallelogram_chain(6);
    let cases = [
        (
            "generalized_alpha",
            SolverOptions::default().with_fixed_step(5e-3),
        ),
        (
            "generalized_alpha",
            SolverOptions::default().with_tol(1e-6, 1e-8),
        ),
        ("hht", SolverOptions::default().with_tol(1e-6, 1e-8)),
    ];
    for (name, opts) in &cases {
        let (_, short, n_short) = run(&sys, LinearSolver::Sparse, name, opts, 0.3);
        let (_, long, n_long) = run(&sys, LinearSolver::Sparse, name, opts, 0.6);
        eprintln!("{name}: {short} allocations for {n_short} steps, {long} for {n_long}");
        assert!(n_long > n_short + 10);
        assert_eq!(
            long, short,
            "{name}: allocations per step on the sparse path"
        );
    }
}
