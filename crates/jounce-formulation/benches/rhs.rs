//! Cost of one evaluation on a planar pendulum chain of N links, body
//! coordinates: the system's quantities into a workspace
//! (`MechanicalSystem::evaluate`), one right-hand side of `augmented` with
//! the sparse KKT solver (Schur complement, O(N)) and with the dense one
//! (full-pivot LU, O(N³): small sizes only), of `penalty` (dense), one
//! right-hand side of studies.md S1, and one exact Jacobian of `augmented`.
//!
//! `cargo bench -p jounce-formulation --bench rhs`.

mod common;

use common::chain;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use jounce_formulation::{build, FormulationSettings, LinearSolver};
use jounce_mechanics::{MechanicalSystem, PlanarSystem, Quantities};
use nalgebra::DMatrix;
use std::hint::black_box;

fn state(sys: &PlanarSystem) -> (Vec<f64>, Vec<f64>) {
    let q = sys.initial_q();
    let v: Vec<f64> = (0..q.len()).map(|i| 0.1 * ((i % 7) as f64 - 3.0)).collect();
    (q, v)
}

fn evaluate(c: &mut Criterion) {
    let mut g = c.benchmark_group("evaluate (M, Q, Φ, Φ_q, Φ', γ)");
    for n in [10, 100, 1000] {
        let sys = chain(n);
        let (q, v) = state(&sys);
        let mut data = sys.data();
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| sys.evaluate(&mut data, 0.1, black_box(&q), &v, Quantities::ALL))
        });
    }
    g.finish();
}

/// One right-hand side of `augmented` with `solver` on chains of `sizes`.
fn augmented_rhs(c: &mut Criterion, solver: LinearSolver, sizes: &[usize]) {
    let mut g = c.benchmark_group(format!("augmented right-hand side ({solver})"));
    g.sample_size(20);
    let settings = FormulationSettings {
        linear_solver: solver,
        ..FormulationSettings::default()
    };
    for &n in sizes {
        let sys = chain(n);
        let (q, v) = state(&sys);
        let mut f = build("augmented", &settings, &sys).unwrap();
        let y = f.initial_state(0.0, &q, &v).unwrap();
        let mut dy = vec![0.0; y.len()];
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| f.rhs(0.1, black_box(&y), &mut dy).unwrap())
        });
    }
    g.finish();
}

fn rhs(c: &mut Criterion) {
    augmented_rhs(c, LinearSolver::Sparse, &[10, 100, 1000]);
    // the dense KKT path is O(N³): small sizes only
    augmented_rhs(c, LinearSolver::Dense, &[10, 20, 40]);
    let mut g = c.benchmark_group("penalty right-hand side");
    g.sample_size(20);
    for n in [10, 20, 40] {
        let sys = chain(n);
        let (q, v) = state(&sys);
        let mut f = build("penalty", &FormulationSettings::default(), &sys).unwrap();
        let y = f.initial_state(0.0, &q, &v).unwrap();
        let mut dy = vec![0.0; y.len()];
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| f.rhs(0.1, black_box(&y), &mut dy).unwrap())
        });
    }
    g.finish();
}

/// One right-hand side of studies.md S1 (springy double pendulum, point
/// masses: singular M, so the dense KKT path) in body coordinates.
fn s1(c: &mut Criterion) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/studies/s1_k1_1e2_k2_1e2.toml");
    let model = jounce_model::load_file(&path).expect("S1 model");
    let sys = PlanarSystem::from_model(&model).expect("S1 system");
    let mut f = build("augmented", &FormulationSettings::default(), &sys).unwrap();
    let y = f
        .initial_state(0.0, &sys.initial_q(), &sys.initial_v())
        .unwrap();
    let mut dy = vec![0.0; y.len()];
    c.bench_function("S1 augmented right-hand side", |b| {
        b.iter(|| f.rhs(0.1, black_box(&y), &mut dy).unwrap())
    });
}

fn jacobian(c: &mut Criterion) {
    let mut g = c.benchmark_group("augmented exact Jacobian");
    g.sample_size(10);
    for n in [10, 20, 100] {
        let sys = chain(n);
        let (q, v) = state(&sys);
        let mut f = build("augmented", &FormulationSettings::default(), &sys).unwrap();
        let y = f.initial_state(0.0, &q, &v).unwrap();
        let mut jac = DMatrix::zeros(y.len(), y.len());
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| f.jacobian(0.1, black_box(&y), &mut jac).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, evaluate, rhs, s1, jacobian);
criterion_main!(benches);
