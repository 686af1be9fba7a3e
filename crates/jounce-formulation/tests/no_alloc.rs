//! The right-hand sides, exact Jacobians and tangents of all formulations
//! (for index3 the parts of its DAE and its tangent, for odae its
//! invariants) do not allocate, on a hand-written system and on the planar
//! systems of the shipped examples, and neither does
//! `MechanicalSystem::evaluate` into a workspace (counted by a global
//! allocator; this binary has a single test so nothing else runs).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use jounce_formulation::examples::models;
use jounce_formulation::{build, Augmented, Formulation, FormulationSettings, NAMES};
use jounce_integrate::OdeProblem;
use jounce_mechanics::{assemble, MechanicalSystem, PlanarSystem, Quantities};
use nalgebra::DMatrix;

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

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
        let before = ALLOCS.load(Ordering::Relaxed);
        sys.evaluate(&mut data, 0.1, &a.q, &a.v, Quantities::ALL);
        let after = ALLOCS.load(Ordering::Relaxed);
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
    let before = ALLOCS.load(Ordering::Relaxed);
    for k in 0..5 {
        aug.rhs(0.01 * k as f64, &y, &mut dy).unwrap();
    }
    let after = ALLOCS.load(Ordering::Relaxed);
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
    let before = ALLOCS.load(Ordering::Relaxed);
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
    let after = ALLOCS.load(Ordering::Relaxed);
    assert_eq!(
        after,
        before,
        "{model}, joint allocated {} times",
        after - before
    );
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
        let before = ALLOCS.load(Ordering::Relaxed);
        for k in 0..5 {
            f.rhs(0.01 * k as f64, &y, &mut dy).unwrap();
        }
        f.after_step(0.05, &mut y).unwrap();
        f.rhs(0.05, &y, &mut dy).unwrap();
        let after_rhs = ALLOCS.load(Ordering::Relaxed);
        assert_eq!(after_rhs, before, "{name}: rhs or after_step allocated");
        if let Some(od) = f.as_overdetermined() {
            // odae: the BDF evaluates the invariants and their Jacobian at
            // every step
            assert_eq!(np, 2 * sys.nc(), "{name}");
            let before = ALLOCS.load(Ordering::Relaxed);
            od.invariants(0.05, &y, &mut g).unwrap();
            od.invariant_jacobian(0.05, &y, &mut gy).unwrap();
            let after = ALLOCS.load(Ordering::Relaxed);
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
            let before = ALLOCS.load(Ordering::Relaxed);
            dae.residual(0.05, &yd, &ypd, &mut r).unwrap();
            dae.iteration_matrix(0.05, &yd, &ypd, 20.0, &mut g).unwrap();
            let after = ALLOCS.load(Ordering::Relaxed);
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
            let before = ALLOCS.load(Ordering::Relaxed);
            cp.mass_matrix(0.05, q, &mut mass).unwrap();
            cp.forces(0.05, q, v, &mut fv).unwrap();
            cp.constraints(0.05, q, &mut cv).unwrap();
            cp.constraint_jacobian(0.05, q, &mut pq).unwrap();
            cp.velocity_rhs(0.05, q, &mut cv).unwrap();
            cp.gamma(0.05, q, v, &mut cv).unwrap();
            cp.tangent(0.05, q, v, &acc, &lambda, &mut kt, &mut ct)
                .unwrap();
            let after = ALLOCS.load(Ordering::Relaxed);
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
        let after = ALLOCS.load(Ordering::Relaxed);
        assert_eq!(after, before, "{name} allocated {} times", after - before);
    }
}

/// A horizontal chain of `n` uniform 1 m links pinned end to end, the
/// first to ground at the origin.
fn chain_model(n: usize) -> jounce_model::Model {
    use jounce_model::{Attachment, Body, BodyRef, Joint, JointKind, Model, Settings};
    let bodies = (0..n)
        .map(|i| Body {
            name: format!("link{i}"),
            mass: 1.0,
            inertia: 1.0 / 12.0,
            position: [i as f64 + 0.5, 0.0],
            angle: 0.0,
            velocity: [0.0; 2],
            angular_velocity: 0.0,
            points: vec![],
        })
        .collect();
    let joints = (0..n)
        .map(|i| Joint {
            name: format!("pin{i}"),
            kind: JointKind::Revolute {
                a: Attachment {
                    body: if i == 0 {
                        BodyRef::Ground
                    } else {
                        BodyRef::Body(i - 1)
                    },
                    point: if i == 0 { [0.0, 0.0] } else { [0.5, 0.0] },
                },
                b: Attachment {
                    body: BodyRef::Body(i),
                    point: [-0.5, 0.0],
                },
            },
        })
        .collect();
    Model {
        name: format!("chain of {n}"),
        source: "<test>".into(),
        gravity: [0.0, -9.81],
        bodies,
        joints,
        drivers: vec![],
        forces: vec![],
        settings: Settings::default(),
    }
}
