//! Formulations on `IndependentRows` (a system without its redundant
//! rows): a chain of 30 pendulums with its fifth pin modelled twice keeps
//! augmented's sparse path, its right-hand sides and index3's DAE parts
//! allocate nothing, and the minimum-norm reactions allocate nothing at an
//! output row; the adapter's evaluation equals the kept rows of the full
//! system's.

use crate::chain;
use crate::counting_alloc;

use chain::chain_model;
use counting_alloc::allocations;

use jounce_formulation::{build, Augmented, Formulation, FormulationSettings};
use jounce_integrate::OdeProblem;
use jounce_mechanics::{
    assemble, IndependentRows, MechanicalSystem, MinimumNormReactions, PlanarSystem, Quantities,
};
use jounce_model::Model;
use nalgebra::DMatrix;

/// The chain of `n` links with pin `k` declared a second time (as
/// `pin{k}_again`): 2 redundant rows.
fn chain_with_double_pin(n: usize, k: usize) -> Model {
    let mut m = chain_model(n);
    let mut again = m.joints[k].clone();
    again.name = format!("pin{k}_again");
    m.joints.push(again);
    m
}

#[test]
fn redundant_chain_runs_sparse_and_allocates_nothing() {
    let model = chain_with_double_pin(30, 4);
    let sys = PlanarSystem::from_model(&model).unwrap();
    let a = assemble(&sys, 0.0, &sys.initial_q(), &sys.initial_v(), 1e-12).unwrap();
    assert_eq!(a.redundant_rows, vec![60, 61], "{:?}", a.redundant);
    let rows = IndependentRows::new(&sys, &a.redundant_rows);
    assert_eq!(rows.nc(), 60);
    assert_eq!(rows.kept_rows(), (0..60).collect::<Vec<_>>().as_slice());

    // the adapter's evaluation: the kept rows of the full system's
    let (mut full, mut kept) = (sys.data(), rows.data());
    let mut v = a.v.clone();
    v[7] = 0.3;
    sys.evaluate(&mut full, 0.1, &a.q, &v, Quantities::ALL);
    let before = allocations();
    rows.evaluate(&mut kept, 0.1, &a.q, &v, Quantities::ALL);
    rows.evaluate(&mut kept, 0.1, &a.q, &v, Quantities::ALL);
    assert_eq!(allocations(), before, "IndependentRows::evaluate allocated");
    assert_eq!(kept.mass_dense(), full.mass_dense());
    assert_eq!(kept.forces, full.forces);
    assert_eq!(kept.constraints[..], full.constraints[..60]);
    assert_eq!(kept.gamma[..], full.gamma[..60]);
    assert_eq!(
        kept.velocity_constraints[..],
        full.velocity_constraints[..60]
    );
    let (jf, jk) = (
        full.constraint_jacobian.to_dense(),
        kept.constraint_jacobian.to_dense(),
    );
    assert_eq!(jk, jf.rows(0, 60).into_owned());
    assert!(
        !kept.constraint_jacobian.is_dense(),
        "the kept pattern is sparse"
    );
    assert_eq!(
        kept.constraint_jacobian.nnz() + 2 * 6,
        full.constraint_jacobian.nnz()
    );

    // augmented on the adapter: sparse Schur complement, no allocation
    let mut aug = Augmented::new(&rows);
    let mut y = aug.initial_state(0.0, &a.q, &a.v).unwrap();
    assert!(
        aug.uses_sparse_solver(),
        "the redundant chain keeps the sparse path"
    );
    y[5] += 1e-3;
    let mut dy = vec![0.0; y.len()];
    let before = allocations();
    for k in 0..5 {
        aug.rhs(0.01 * k as f64, &y, &mut dy).unwrap();
    }
    assert_eq!(
        allocations(),
        before,
        "augmented on IndependentRows allocated"
    );

    // index3: DAE parts
    let mut f = build("index3", &FormulationSettings::default(), &rows).unwrap();
    let y3 = f.initial_state(0.0, &a.q, &a.v).unwrap();
    let dae = f.as_dae().unwrap();
    let nd = dae.dim();
    let (mut r, mut g) = (vec![0.0; nd], DMatrix::zeros(nd, nd));
    let yp = vec![0.1; nd];
    // the dense blocks of the DAE are sized on their first use (the
    // sparse path never forms them, issue 32): that call may allocate
    dae.iteration_matrix(0.05, &y3, &yp, 20.0, &mut g).unwrap();
    let before = allocations();
    dae.residual(0.05, &y3, &yp, &mut r).unwrap();
    dae.iteration_matrix(0.05, &y3, &yp, 20.0, &mut g).unwrap();
    assert_eq!(allocations(), before, "index3 on IndependentRows allocated");

    // minimum-norm reactions at an output row: no allocation, and the
    // duplicated pin shares the load equally with the original
    let (mut q, mut vv, mut lam_k) = (vec![0.0; 90], vec![0.0; 90], vec![0.0; 60]);
    aug.physical_state(0.0, &y, &mut q, &mut vv, &mut lam_k)
        .unwrap();
    let mut reactions = MinimumNormReactions::new(&sys, &a.redundant_rows, false);
    let mut lambda = vec![0.0; 62];
    reactions.input_mut().copy_from_slice(&lam_k);
    reactions.apply(&sys, 0.0, &q, &mut lambda);
    reactions.input_mut().copy_from_slice(&lam_k);
    let before = allocations();
    assert!(reactions.apply(&sys, 0.0, &q, &mut lambda));
    assert_eq!(
        allocations(),
        before,
        "MinimumNormReactions::apply allocated"
    );
    for c in 0..2 {
        let (orig, again) = (lambda[8 + c], lambda[60 + c]);
        assert!(
            (orig - again).abs() <= 1e-12 * orig.abs().max(1.0) && orig.abs() > 1e-3,
            "pin4 ({c}): {orig} vs pin4_again {again}"
        );
        assert!((2.0 * orig - lam_k[8 + c]).abs() <= 1e-10 * lam_k[8 + c].abs());
    }
}
