//! The sparse path of `partitioning` and `state_space` (issue 32) against
//! the dense one: the same partition (the sparse elimination replays the
//! dense pivot rules bit for bit), the same Newton recovery and the same
//! ODE, so runs of the shipped planar examples agree to round-off; and on
//! chains the sparse path is taken and chooses the dense path's
//! partition.

use crate::chain;
use crate::common;

use chain::chain_model;
use common::{max_diff, run};
use jounce_formulation::partitioning::SPARSE_MIN_COORDINATES;
use jounce_formulation::{Formulation, Partitioning, StateSpace};
use jounce_integrate::OdeProblem;
use jounce_mechanics::{assemble, PlanarSystem};

fn example(file: &str) -> (PlanarSystem, Vec<f64>, Vec<f64>) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let model = jounce_model::load_file(&root.join(file)).unwrap();
    let sys = PlanarSystem::from_model(&model).unwrap();
    let a = assemble(&sys, 0.0, &sys.initial_q(), &sys.initial_v(), 1e-12).unwrap();
    (sys, a.q, a.v)
}

fn build<'a>(
    sys: &'a PlanarSystem,
    kind: &str,
    sparse: bool,
    sparse_choice: bool,
) -> Box<dyn Formulation + 'a> {
    match kind {
        "partitioning" => {
            Box::new(Partitioning::with_paths(sys, 2.0, 1e6, sparse, sparse_choice).unwrap())
        }
        _ => Box::new(StateSpace::with_paths(sys, 2.0, 1e6, sparse, sparse_choice).unwrap()),
    }
}

/// Largest |x| of the final q, v (for the relative difference).
fn scale(a: &[f64], b: &[f64]) -> f64 {
    a.iter().chain(b).fold(1.0f64, |m, x| m.max(x.abs()))
}

#[test]
fn sparse_path_agrees_with_dense_on_the_examples_to_round_off() {
    for file in [
        "four_bar.toml",
        "double_pendulum.toml",
        "parallelogram_chain.toml",
        "simple_pendulum.toml",
    ] {
        let (sys, q0, v0) = example(file);
        for kind in ["partitioning", "state_space"] {
            let mut dense = build(&sys, kind, false, false);
            let rd = run(&sys, dense.as_mut(), &q0, &v0, 0.5, "dopri5", 1e-8, 1e-10);
            for choice in [false, true] {
                let mut sparse = build(&sys, kind, true, choice);
                let rs = run(&sys, sparse.as_mut(), &q0, &v0, 0.5, "dopri5", 1e-8, 1e-10);
                let s = scale(&rd.q, &rd.v);
                let (dq, dv) = (max_diff(&rd.q, &rs.q) / s, max_diff(&rd.v, &rs.v) / s);
                eprintln!(
                    "{file} {kind} sparse choice {choice}: |Δq| {dq:.1e}, |Δv| {dv:.1e}, steps {} / {}",
                    rd.stats.n_accept, rs.stats.n_accept
                );
                assert_eq!(rd.stats.n_accept, rs.stats.n_accept, "{file} {kind}");
                assert_eq!(rd.stats.n_restart, rs.stats.n_restart, "{file} {kind}");
                assert!(dq < 1e-12 && dv < 1e-12, "{file} {kind}: {dq:e} {dv:e}");
            }
        }
    }
}

#[test]
fn chains_take_the_sparse_path_with_the_dense_partition() {
    // 40 links (n = 120): the sparse path by default
    let sys = PlanarSystem::from_model(&chain_model(40)).unwrap();
    assert!(sys.initial_q().len() >= SPARSE_MIN_COORDINATES);
    let (q0, v0) = (sys.initial_q(), sys.initial_v());
    let mut dense = Partitioning::with_paths(&sys, 2.0, 1e6, false, false).unwrap();
    let mut sparse = Partitioning::new(&sys, 2.0, 1e6).unwrap();
    let yd = dense.initial_state(0.0, &q0, &v0).unwrap();
    let ys = sparse.initial_state(0.0, &q0, &v0).unwrap();
    assert_eq!(dense.dependent(), sparse.dependent(), "partitioning");
    assert_eq!(yd, ys);
    let (mut dd, mut ds) = (vec![0.0; yd.len()], vec![0.0; ys.len()]);
    dense.rhs(0.0, &yd, &mut dd).unwrap();
    sparse.rhs(0.0, &ys, &mut ds).unwrap();
    let d = max_diff(&dd, &ds);
    assert!(d < 1e-10, "rhs differs by {d:e}");

    let mut dense = StateSpace::with_paths(&sys, 2.0, 1e6, false, false).unwrap();
    let mut sparse = StateSpace::new(&sys, 2.0, 1e6).unwrap();
    dense.initial_state(0.0, &q0, &v0).unwrap();
    sparse.initial_state(0.0, &q0, &v0).unwrap();
    assert_eq!(dense.dependent(), sparse.dependent(), "state_space");

    // a run through the first steps: the same steps, the same state
    for kind in ["partitioning", "state_space"] {
        let mut fd = build(&sys, kind, false, false);
        let mut fs = build(&sys, kind, true, true);
        let rd = run(&sys, fd.as_mut(), &q0, &v0, 0.05, "dopri5", 1e-7, 1e-9);
        let rs = run(&sys, fs.as_mut(), &q0, &v0, 0.05, "dopri5", 1e-7, 1e-9);
        let s = scale(&rd.q, &rd.v);
        let dq = max_diff(&rd.q, &rs.q).max(max_diff(&rd.v, &rs.v)) / s;
        eprintln!("chain of 40, {kind}: {dq:.1e}");
        assert_eq!(rd.stats.n_accept, rs.stats.n_accept, "{kind}");
        assert!(dq < 1e-10, "{kind}: {dq:e}");
    }
}
