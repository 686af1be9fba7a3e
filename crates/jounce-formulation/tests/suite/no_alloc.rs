//! The right-hand sides, exact Jacobians and tangents of all formulations
//! (for index3 the parts of its DAE and its tangent, for odae its
//! invariants) do not allocate, on a hand-written system and on the planar
//! systems of the shipped examples, and neither does
//! `MechanicalSystem::evaluate` into a workspace; and the steps of every
//! method family, after the first, allocate nothing on those systems with
//! several formulations (counted by a global allocator, per thread, so
//! that tests running in parallel do not disturb each other's counts).

use crate::chain;
use crate::counting_alloc;

use chain::chain_model;
use counting_alloc::allocations;

use jounce_formulation::examples::models;
use jounce_formulation::{build, Augmented, Formulation, FormulationSettings, NAMES};
use jounce_integrate::{method, solve, Discard, OdeProblem, SolverOptions};
use jounce_mechanics::{assemble, MechanicalSystem, PlanarSystem, Quantities};
use nalgebra::DMatrix;

#[test]
fn rhs_and_after_step_do_not_allocate() {
    let (sys, q0, v0) = models::slider_crank(0.3, 1.0, 0.5, 1.5, 2.0, 0.9, 4.0);
    every_formulation(&sys, &q0, &v0, "toy slider-crank", 1);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    for file in ["slider_crank.toml", "four_bar.toml", "double_pendulum.toml"] {
        let model = jounce_model::load_file(&root.join(file)).unwrap();
        let sys = PlanarSystem::from_model(&model).unwrap();
        let a = assemble(&sys, 0.0, &sys.initial_q(), &sys.initial_v(), 1e-12).unwrap();
        let mut data = sys.data();
        let before = allocations();
        sys.evaluate(&mut data, 0.1, &a.q, &a.v, Quantities::ALL);
        let after = allocations();
        assert_eq!(after, before, "{file}: evaluate allocated");
        every_formulation(&sys, &a.q, &a.v, file, a.dof);
        joint_does_not_allocate(&sys, &a.q, &a.v, file);
    }
    // S1 and a chain of 50 links: trees, the articulated-body path
    let s1 = root.join("studies/s1_k1_1e2_k2_1e2.toml");
    let sys = PlanarSystem::from_model(&jounce_model::load_file(&s1).unwrap()).unwrap();
    joint_does_not_allocate(&sys, &sys.initial_q(), &sys.initial_v(), "S1");
    let chain = chain_model(50);
    let sys = PlanarSystem::from_model(&chain).unwrap();
    joint_does_not_allocate(&sys, &sys.initial_q(), &sys.initial_v(), "chain of 50");

    // a 30-link chain: augmented and the formulations built on it take
    // the sparse KKT path (Schur complement) and allocate nothing either
    let sys = PlanarSystem::from_model(&chain_model(30)).unwrap();
    let (q, v) = (sys.initial_q(), sys.initial_v());
    let mut aug = Augmented::new(&sys);
    let mut y = aug.initial_state(0.0, &q, &v).unwrap();
    y[5] += 1e-3;
    let mut dy = vec![0.0; y.len()];
    let before = allocations();
    for k in 0..5 {
        aug.rhs(0.01 * k as f64, &y, &mut dy).unwrap();
    }
    let after = allocations();
    assert!(aug.uses_sparse_solver(), "the chain takes the sparse path");
    assert_eq!(after, before, "sparse augmented rhs allocated");
    every_formulation(&sys, &q, &v, "chain of 30", 30);
}

/// The joint formulation: right-hand side, exact Jacobian, second-order
/// parts and tangent, and the map back to body coordinates.
fn joint_does_not_allocate(sys: &PlanarSystem, q0: &[f64], v0: &[f64], model: &str) {
    let mut f = build("joint", &FormulationSettings::default(), sys).unwrap();
    let mut y = f.initial_state(0.0, q0, v0).unwrap();
    y[0] += 1e-6;
    let n = y.len() / 2;
    let mut dy = vec![0.0; y.len()];
    let mut jac = DMatrix::zeros(y.len(), y.len());
    let (mut kt, mut ct, mut mass) = (
        DMatrix::zeros(n, n),
        DMatrix::zeros(n, n),
        DMatrix::zeros(n, n),
    );
    let (acc, mut fv) = (vec![0.1; n], vec![0.0; n]);
    let (mut q, mut v, mut lambda) = (
        vec![0.0; sys.nq()],
        vec![0.0; sys.nq()],
        vec![0.0; sys.nc()],
    );
    assert!(f.has_exact_jacobian(), "{model}: joint");
    // the exact Jacobian's n × n blocks are sized on its first call (an
    // explicit method never pays for them); every later call allocates
    // nothing
    f.jacobian(0.05, &y, &mut jac).unwrap();
    let before = allocations();
    for k in 0..5 {
        f.rhs(0.01 * k as f64, &y, &mut dy).unwrap();
    }
    f.jacobian(0.05, &y, &mut jac).unwrap();
    f.physical_state(0.05, &y, &mut q, &mut v, &mut lambda)
        .unwrap();
    let so = f.as_second_order().unwrap();
    assert!(so.has_exact_tangent(), "{model}: joint");
    so.mass_matrix(0.05, &y[..n], &mut mass).unwrap();
    so.forces(0.05, &y[..n], &y[n..], &mut fv).unwrap();
    so.tangent(0.05, &y[..n], &y[n..], &acc, &mut kt, &mut ct)
        .unwrap();
    let after = allocations();
    assert_eq!(
        after,
        before,
        "{model}, joint allocated {} times",
        after - before
    );
}

/// The joint formulation of spatial models with free or spherical joints
/// (n_q ≠ n_v: q' = T(q) v, the quaternions normalised after each step):
/// right-hand side, Jacobian, the step's projection, the map back to
/// body coordinates and the second-order form of the structural methods
/// (M, f, the tangent along q ⊕ Δ, the retraction and T(q) v) allocate
/// nothing.
#[test]
fn joint_with_free_joints_does_not_allocate() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    // free joints: 7 positions and 6 rates; spherical joints: 4 and 3
    for (file, len) in [
        ("tumbling_body.toml", 13),
        ("spatial_bouncing_ball.toml", 13),
        ("spatial_double_pendulum.toml", 14),
        ("heavy_top.toml", 7),
    ] {
        let model = jounce_model::load_file(&root.join(file)).unwrap();
        let sys = jounce_mechanics::SpatialSystem::from_model(&model).unwrap();
        let mut f = build("joint", &FormulationSettings::default(), &sys).unwrap();
        let (q0, v0) = sys.initial_state();
        let mut y = f.initial_state(0.0, &q0, &v0).unwrap();
        assert_eq!(y.len(), len, "{file}");
        y[3] += 1e-3;
        let mut dy = vec![0.0; y.len()];
        let mut jac = DMatrix::zeros(y.len(), y.len());
        let (mut q, mut v, mut lambda) = (
            vec![0.0; sys.nq()],
            vec![0.0; sys.nv()],
            vec![0.0; sys.nc()],
        );
        let (nq, n) = {
            let so = f.as_second_order().expect("second-order form");
            (so.n_positions(), so.ndof())
        };
        assert_eq!(nq + n, len, "{file}");
        let (mut kt, mut ct, mut mass) = (
            DMatrix::zeros(n, n),
            DMatrix::zeros(n, n),
            DMatrix::zeros(n, n),
        );
        let (acc, mut fv, delta) = (vec![0.1; n], vec![0.0; n], vec![0.01; n]);
        let (mut moved, mut rate) = (vec![0.0; nq], vec![0.0; nq]);
        // the Jacobian's n × n blocks and the tangent's n × n_q block are
        // sized on their first calls
        f.jacobian(0.05, &y, &mut jac).unwrap();
        let (yq, yv) = y.split_at(nq);
        f.as_second_order()
            .unwrap()
            .tangent(0.05, yq, yv, &acc, &mut kt, &mut ct)
            .unwrap();
        let before = allocations();
        for k in 0..5 {
            f.rhs(0.01 * k as f64, &y, &mut dy).unwrap();
        }
        f.jacobian(0.05, &y, &mut jac).unwrap();
        {
            let (yq, yv) = y.split_at(nq);
            let so = f.as_second_order().unwrap();
            so.mass_matrix(0.05, yq, &mut mass).unwrap();
            so.forces(0.05, yq, yv, &mut fv).unwrap();
            so.tangent(0.05, yq, yv, &acc, &mut kt, &mut ct).unwrap();
            so.integrate_positions(yq, &delta, &mut moved);
            so.position_derivative(yq, yv, &mut rate);
        }
        f.after_step(0.05, &mut y).unwrap();
        f.physical_state(0.05, &y, &mut q, &mut v, &mut lambda)
            .unwrap();
        let after = allocations();
        assert_eq!(
            after,
            before,
            "{file}: joint allocated {} times",
            after - before
        );
    }
}

/// Stick–slip friction of a spatial contact (the augmented KKT system
/// extended by the 2-D friction force, n_q ≠ n_v): right-hand side while
/// slipping and while sticking, the mode and contact events, the friction
/// forces, the step's retraction and the physical state allocate nothing.
#[test]
fn spatial_stick_slip_does_not_allocate() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let model = jounce_model::load_file(&root.join("spatial_sphere_on_table.toml")).unwrap();
    let sys = jounce_mechanics::SpatialSystem::from_model(&model).unwrap();
    let mut f = build("augmented", &FormulationSettings::default(), &sys).unwrap();
    let (q0, v0) = sys.initial_state();
    for rolling in [false, true] {
        let mut v = v0.clone();
        if rolling {
            // rolling without slip: ω' = (−v_y, v_x, 0)/r, the element sticks
            v[3] = -v0[1] / 0.1;
            v[4] = v0[0] / 0.1;
        }
        let mut y = f.initial_state(0.0, &q0, &v).unwrap();
        assert_eq!(y.len(), 13);
        let mut dy = vec![0.0; y.len()];
        let mut g = vec![0.0; f.n_events()];
        let mut forces = vec![0.0; jounce_mechanics::SystemQueries::n_friction_rows(&sys)];
        let (mut q, mut vv, mut lambda) = (vec![0.0; 7], vec![0.0; 6], vec![0.0; 0]);
        let before = allocations();
        for k in 0..5 {
            f.rhs(0.01 * k as f64, &y, &mut dy).unwrap();
        }
        f.events(0.05, &y, &mut g).unwrap();
        f.friction_forces(0.05, &y, &mut forces).unwrap();
        f.after_step(0.05, &mut y).unwrap();
        f.physical_state(0.05, &y, &mut q, &mut vv, &mut lambda)
            .unwrap();
        let after = allocations();
        assert_eq!(
            after,
            before,
            "stick–slip (rolling: {rolling}) allocated {} times",
            after - before
        );
        // sticking: the friction force of rolling is zero, sliding μ m g
        let fmag = forces[0].hypot(forces[1]);
        let want = if rolling { 0.0 } else { 0.2 * 9.81 };
        assert!(
            (fmag - want).abs() < 1e-9,
            "rolling {rolling}: |F| = {fmag}"
        );
    }
}

/// Every formulation on `sys`; those integrating independent coordinates
/// only where there are some (`dof` > 0; the driven slider-crank has none).
fn every_formulation<S: MechanicalSystem>(
    sys: &S,
    q0: &[f64],
    v0: &[f64],
    model: &str,
    dof: usize,
) {
    for name in NAMES {
        if dof == 0 && matches!(name, "partitioning" | "state_space") {
            continue;
        }
        if name == "joint" {
            continue; // joint coordinates: `joint_does_not_allocate`
        }
        let name = format!("{model}, {name}");
        let name = name.as_str();
        let kind = name.rsplit(", ").next().unwrap();
        let mut f = build(kind, &FormulationSettings::default(), sys).unwrap();
        let mut y = f.initial_state(0.0, q0, v0).unwrap();
        let mut dy = vec![0.0; y.len()];
        let mut jac = DMatrix::zeros(y.len(), y.len());
        let nq = q0.len();
        let (mut kt, mut ct) = (DMatrix::zeros(nq, nq), DMatrix::zeros(nq, nq));
        let acc = vec![0.1; nq];
        // perturb so that projection and Newton have work to do
        y[0] += 1e-6;
        let np = f.as_overdetermined().map_or(0, |o| o.n_invariants());
        let (mut g, mut gy) = (vec![0.0; np], DMatrix::zeros(np, y.len()));
        if f.as_dae().is_none() && f.has_exact_jacobian() {
            // the exact Jacobian's n × n buffers are sized on its first
            // call, so that explicit methods never pay for them (issue 31);
            // every later call allocates nothing
            f.jacobian(0.05, &y, &mut jac).unwrap();
        }
        let before = allocations();
        for k in 0..5 {
            f.rhs(0.01 * k as f64, &y, &mut dy).unwrap();
        }
        f.after_step(0.05, &mut y).unwrap();
        f.rhs(0.05, &y, &mut dy).unwrap();
        let after_rhs = allocations();
        assert_eq!(after_rhs, before, "{name}: rhs or after_step allocated");
        if let Some(od) = f.as_overdetermined() {
            // odae: the BDF evaluates the invariants and their Jacobian at
            // every step
            assert_eq!(np, 2 * sys.nc(), "{name}");
            let before = allocations();
            od.invariants(0.05, &y, &mut g).unwrap();
            od.invariant_jacobian(0.05, &y, &mut gy).unwrap();
            let after = allocations();
            assert_eq!(
                after,
                before,
                "{name}: the invariants allocated {} times",
                after - before
            );
        }
        if let Some(dae) = f.as_dae() {
            // index3, ggl: the DAE methods evaluate the residual and the
            // iteration matrix, both from the formulation's own buffers
            let nd = dae.dim();
            let (yd, ypd) = (vec![0.3; nd], vec![0.1; nd]);
            let (mut r, mut g) = (vec![0.0; nd], DMatrix::zeros(nd, nd));
            assert!(dae.has_exact_jacobian(), "{name}");
            // the dense blocks are sized on their first use (the sparse
            // path never forms them, issue 32): that call may allocate
            dae.iteration_matrix(0.05, &yd, &ypd, 20.0, &mut g).unwrap();
            let before = allocations();
            dae.residual(0.05, &yd, &ypd, &mut r).unwrap();
            dae.iteration_matrix(0.05, &yd, &ypd, 20.0, &mut g).unwrap();
            let after = allocations();
            assert_eq!(
                after,
                before,
                "{name}: the DAE allocated {} times",
                after - before
            );
        }
        if let Some(cp) = f.as_constrained_second_order() {
            // index3: the integrator evaluates the DAE's parts, never its
            // Jacobian (rhs serves only for initial-step estimates)
            let m = cp.n_constraints();
            let (q, v) = (&y[..nq], &y[nq..2 * nq]);
            let (mut mass, mut pq) = (DMatrix::zeros(nq, nq), DMatrix::zeros(m, nq));
            let (mut fv, mut cv) = (vec![0.0; nq], vec![0.0; m]);
            let lambda = vec![0.5; m];
            assert!(cp.has_exact_tangent(), "{name}");
            if cp.sparsity().is_some() {
                // a run of a problem with a sparse iteration matrix never
                // asks for the dense tangent: its n × n buffers are
                // allocated on first use, not at build
                cp.tangent(0.05, q, v, &acc, &lambda, &mut kt, &mut ct)
                    .unwrap();
            }
            let before = allocations();
            cp.mass_matrix(0.05, q, &mut mass).unwrap();
            cp.forces(0.05, q, v, &mut fv).unwrap();
            cp.constraints(0.05, q, &mut cv).unwrap();
            cp.constraint_jacobian(0.05, q, &mut pq).unwrap();
            cp.velocity_rhs(0.05, q, &mut cv).unwrap();
            cp.gamma(0.05, q, v, &mut cv).unwrap();
            cp.tangent(0.05, q, v, &acc, &lambda, &mut kt, &mut ct)
                .unwrap();
            let after = allocations();
            assert_eq!(after, before, "{name} allocated {} times", after - before);
            continue;
        }
        if f.as_dae().is_some() {
            continue;
        }
        assert!(f.has_exact_jacobian(), "{name}");
        f.jacobian(0.05, &y, &mut jac).unwrap();
        if let Some(so) = f.as_second_order() {
            assert!(so.has_exact_tangent(), "{name}");
            so.tangent(0.05, &y[..nq], &y[nq..], &acc, &mut kt, &mut ct)
                .unwrap();
        }
        let after = allocations();
        assert_eq!(after, before, "{name} allocated {} times", after - before);
    }
}

/// Allocations made by one run of `method` on `formulation` from t = 0 to
/// `t_end` (the stepper and the formulation are built before counting),
/// the work done: accepted steps plus right-hand sides (fixed-step
/// explicit methods count only the latter), and the restarts (a
/// re-partitioning of the coordinates restarts the method).
fn run_counted(
    sys: &PlanarSystem,
    q0: &[f64],
    v0: &[f64],
    formulation: &str,
    method_name: &str,
    opts: &SolverOptions,
    t_end: f64,
) -> (u64, u64, u64) {
    let mut f = build(formulation, &FormulationSettings::default(), sys).unwrap();
    let y0 = f.initial_state(0.0, q0, v0).unwrap();
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
    .unwrap_or_else(|e| panic!("{method_name} on {formulation}: {e}"));
    (
        allocations() - before,
        solved.stats.n_accept + solved.stats.n_rhs,
        solved.stats.n_restart,
    )
}

/// (family, method, formulations, options): every method family with the
/// formulations it runs.
type FamilyCase = (&'static str, &'static str, Vec<&'static str>, SolverOptions);

fn family_cases() -> Vec<FamilyCase> {
    let adaptive = SolverOptions::default().with_tol(1e-7, 1e-9);
    let fixed = |h: f64| SolverOptions::default().with_fixed_step(h);
    vec![
        (
            "explicit RK",
            "dopri5",
            vec![
                "augmented",
                "projection",
                "state_space",
                "penalty",
                "partitioning",
            ],
            adaptive.clone(),
        ),
        (
            "explicit RK",
            "dop853",
            vec!["augmented", "projection"],
            adaptive.clone(),
        ),
        ("explicit RK, fixed", "rk4", vec!["augmented"], fixed(1e-3)),
        (
            "Cash-Karp VO",
            "cash_karp_vo",
            vec!["augmented", "projection"],
            adaptive.clone(),
        ),
        (
            "DIRK",
            "esdirk43",
            vec!["augmented", "projection"],
            adaptive.clone(),
        ),
        ("SDIRK", "trbdf2", vec!["augmented"], adaptive.clone()),
        ("SDIRK", "sdirk2_l", vec!["augmented"], adaptive.clone()),
        (
            "Rosenbrock",
            "rodas4",
            vec!["augmented", "projection"],
            adaptive.clone(),
        ),
        ("Rosenbrock", "ode23s", vec!["augmented"], adaptive.clone()),
        (
            "Radau",
            "radau5",
            vec!["augmented", "projection", "partitioning", "index3", "ggl"],
            adaptive.clone(),
        ),
        ("LLM", "llm", vec!["augmented"], adaptive.clone()),
        (
            "structural",
            "newmark",
            vec!["index3", "augmented"],
            adaptive.clone(),
        ),
        ("structural", "hht", vec!["index3"], adaptive.clone()),
        (
            "structural",
            "generalized_alpha",
            vec!["index3"],
            adaptive.clone(),
        ),
        (
            "structural, fixed",
            "generalized_alpha",
            vec!["index3", "augmented_lagrangian"],
            fixed(1e-3),
        ),
        (
            "structural, augmented Lagrangian",
            "generalized_alpha",
            vec!["augmented_lagrangian"],
            adaptive.clone(),
        ),
        (
            "structural, augmented Lagrangian",
            "newmark",
            vec!["augmented_lagrangian"],
            adaptive.clone(),
        ),
        (
            "Adams",
            "adams_vo",
            vec!["augmented", "projection"],
            adaptive.clone(),
        ),
        (
            "BDF (ODE)",
            "bdf",
            vec!["augmented", "projection"],
            adaptive.clone(),
        ),
        ("NDF", "ndf", vec!["augmented"], adaptive.clone()),
        ("BDF (DAE)", "bdf", vec!["index3", "ggl"], adaptive.clone()),
        (
            "BDF (overdetermined)",
            "bdf",
            vec!["odae"],
            adaptive.clone(),
        ),
        ("BDF, fixed", "bdf", vec!["augmented"], fixed(1e-3)),
        (
            "fixed-step multistep",
            "ab4",
            vec!["augmented"],
            fixed(1e-3),
        ),
        (
            "fixed-step multistep",
            "am4",
            vec!["augmented"],
            fixed(1e-3),
        ),
        (
            "fixed-step multistep",
            "pece",
            vec!["augmented"],
            fixed(1e-3),
        ),
    ]
}

/// Runs every case of [`family_cases`] on `sys` from (q0, v0) to `t_end`
/// and to 2 `t_end`; the failures (allocations that grew with the work
/// done without a restart) as lines naming `label`.
fn allocations_that_grow(
    label: &str,
    sys: &PlanarSystem,
    q0: &[f64],
    v0: &[f64],
    t_end: f64,
    min_extra_work: u64,
    skip: &[&str],
) -> Vec<String> {
    let mut failures = Vec::new();
    for (family, name, forms, opts) in &family_cases() {
        if skip.contains(name) {
            continue;
        }
        for form in forms {
            let (short, n_short, r_short) = run_counted(sys, q0, v0, form, name, opts, t_end);
            let (long, n_long, r_long) = run_counted(sys, q0, v0, form, name, opts, 2.0 * t_end);
            eprintln!(
                "{label}: {family:22} {name:18} {form:12}: {short} allocations for {n_short} work, {long} for {n_long} ({r_short}, {r_long} restarts)"
            );
            assert!(
                n_long > n_short + min_extra_work,
                "{label} {name} {form}: {n_short} {n_long}"
            );
            if long != short && r_long == r_short {
                failures.push(format!(
                    "{label}: {family} {name} on {form}: {} allocations for {} more work",
                    long as i64 - short as i64,
                    n_long - n_short
                ));
            }
        }
    }
    failures
}

/// Every method family on the planar systems of the shipped examples, with
/// the formulations it runs: a run twice as long must allocate exactly as
/// much as the short one (only set-up allocates; 0 per step after the
/// first), and must take more steps. Only a restart (partitioning choosing
/// new independent coordinates, a rare event that rebuilds its partition)
/// may allocate.
#[test]
fn steps_of_every_method_family_do_not_allocate() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut failures = Vec::new();
    for file in ["double_pendulum.toml", "four_bar.toml"] {
        let model = jounce_model::load_file(&root.join(file)).unwrap();
        let sys = PlanarSystem::from_model(&model).unwrap();
        let a = assemble(&sys, 0.0, &sys.initial_q(), &sys.initial_v(), 1e-12).unwrap();
        failures.extend(allocations_that_grow(file, &sys, &a.q, &a.v, 0.3, 10, &[]));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The same on a 100-link chain (issue 32: the sparse paths of every
/// family and formulation at size, 0 allocations per step after the
/// first). Not llm: its local linearisation takes the exponential of the
/// dense 600 × 600 Jacobian at every step (minutes here; proven on the
/// examples above).
#[test]
fn steps_of_every_method_family_on_a_100_link_chain_do_not_allocate() {
    let sys = PlanarSystem::from_model(&chain_model(100)).unwrap();
    let (q, v) = (sys.initial_q(), sys.initial_v());
    let failures = allocations_that_grow("chain of 100", &sys, &q, &v, 0.05, 5, &["llm"]);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The spatial formulations of issue 33, point 3, on the heavy top and the
/// spatial double pendulum (n_q ≠ n_v): odae's right-hand side, invariants
/// (with |p|² − 1) and their Jacobian (chained through T⁺), and
/// partitioning's and state_space's right-hand side and after_step
/// (`ManifoldPartitioning`) allocate nothing. Their exact Jacobian
/// allocates once per call, in `SpatialSystem::force_jacobians` (its
/// dual-number scratch `vec![…; n_v]`, mechanics), not in the
/// formulation: at most 1 is allowed until that scratch moves into a
/// workspace.
#[test]
fn spatial_odae_partitioning_and_state_space_do_not_allocate() {
    use jounce_mechanics::SpatialSystem;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    for file in ["heavy_top.toml", "spatial_double_pendulum.toml"] {
        let model = jounce_model::load_file(&root.join(file)).unwrap();
        let sys = SpatialSystem::from_model(&model).unwrap();
        let (q0, v0) = sys.initial_state();
        let a = assemble(&sys, 0.0, &q0, &v0, 1e-12).unwrap();
        for kind in ["odae", "partitioning", "state_space"] {
            let what = format!("{file}, {kind}");
            let mut f = build(kind, &FormulationSettings::default(), &sys).unwrap();
            let mut y = f.initial_state(0.0, &a.q, &a.v).unwrap();
            y[0] += 1e-6;
            let nd = y.len();
            let mut dy = vec![0.0; nd];
            let mut jac = DMatrix::zeros(nd, nd);
            let exact = f.has_exact_jacobian();
            assert_eq!(exact, kind != "odae", "{what}");
            if exact {
                f.jacobian(0.05, &y, &mut jac).unwrap();
            }
            let np = f.as_overdetermined().map_or(0, |o| o.n_invariants());
            let (mut g, mut gy) = (vec![0.0; np], DMatrix::zeros(np, nd));
            let before = allocations();
            for k in 0..5 {
                f.rhs(0.01 * k as f64, &y, &mut dy).unwrap();
            }
            f.after_step(0.05, &mut y).unwrap();
            if let Some(od) = f.as_overdetermined() {
                assert_eq!(np, 2 * sys.nc() + sys.body_count(), "{what}");
                od.invariants(0.05, &y, &mut g).unwrap();
                od.invariant_jacobian(0.05, &y, &mut gy).unwrap();
            }
            let after = allocations();
            assert_eq!(after, before, "{what} allocated {} times", after - before);
            if exact {
                f.jacobian(0.05, &y, &mut jac).unwrap();
                let n = allocations() - after;
                assert!(n <= 1, "{what}: the Jacobian allocated {n} times");
            }
        }
    }
}
