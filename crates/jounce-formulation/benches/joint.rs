//! Cost of one right-hand side of the `joint` formulation (joint
//! coordinates, articulated-body algorithm): S1 of studies.md (the
//! springy double pendulum of point masses, issue 8's target ≤ 100 ns, 2x a
//! hand-written C right-hand side), and a planar pendulum chain of N links,
//! N = 10, 100, 1000 (target: cost growing with exponent ≤ 1.1, N = 1000
//! ≤ 0.2 ms); plus one exact Jacobian of the chain at N = 10, 100.
//!
//! Spatial chains (issue 33, point 2): forward dynamics of a chain of N
//! spatial bodies on revolute joints (axes alternating x, y) in joint
//! coordinates ([`jounce_mechanics::SpatialJointSystem`], the 6-D
//! articulated-body algorithm), N = 10, 100, 500, 1000.
//!
//! `cargo bench -p jounce-formulation --bench joint`

mod common;

use common::chain;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use jounce_formulation::{build, FormulationSettings};
use jounce_mechanics::PlanarSystem;
use nalgebra::DMatrix;
use std::hint::black_box;

fn s1() -> PlanarSystem {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/studies/s1_k1_1e2_k2_1e2.toml");
    PlanarSystem::from_model(&jounce_model::load_file(&file).expect("S1 model")).expect("valid")
}

/// y0 of `joint` for `sys`, its dimension, and the formulation.
fn setup(sys: &PlanarSystem) -> (Box<dyn jounce_formulation::Formulation + '_>, Vec<f64>) {
    let mut f = build("joint", &FormulationSettings::default(), sys).expect("joint");
    let mut y = f
        .initial_state(0.0, &sys.initial_q(), &sys.initial_v())
        .expect("consistent");
    // away from the straight configuration, moving
    let n = y.len() / 2;
    for i in 0..n {
        y[i] += 0.01 * (i as f64 + 1.0).sin();
        y[n + i] += 0.1 * (i as f64).cos();
    }
    (f, y)
}

fn bench_s1(c: &mut Criterion) {
    let sys = s1();
    let (mut f, y) = setup(&sys);
    let mut dy = vec![0.0; y.len()];
    c.bench_function("joint rhs S1", |b| {
        b.iter(|| f.rhs(0.1, black_box(&y), &mut dy).unwrap())
    });
}

fn bench_chain(c: &mut Criterion) {
    let mut g = c.benchmark_group("joint rhs chain");
    for n in [10, 100, 1000] {
        let sys = chain(n);
        let (mut f, y) = setup(&sys);
        let mut dy = vec![0.0; y.len()];
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| f.rhs(0.1, black_box(&y), &mut dy).unwrap())
        });
    }
    g.finish();
    let mut g = c.benchmark_group("joint jacobian chain");
    for n in [10, 100] {
        let sys = chain(n);
        let (mut f, y) = setup(&sys);
        let mut jac = DMatrix::zeros(y.len(), y.len());
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| f.jacobian(0.1, black_box(&y), &mut jac).unwrap())
        });
    }
    g.finish();
}

/// A hanging chain of `n` rods (length 0.2 m, 1 kg) on revolute joints
/// whose axes alternate between x and y, built as a spatial model.
fn spatial_chain(n: usize) -> jounce_mechanics::SpatialSystem {
    use jounce_model::{
        BodyRef, SpatialAttachment, SpatialBody, SpatialJoint, SpatialJointKind, SpatialModel,
    };
    let l = 0.2;
    let bodies = (0..n)
        .map(|i| SpatialBody {
            name: format!("rod{i}"),
            mass: 1.0,
            inertia: [[0.004, 0.0, 0.0], [0.0, 0.004, 0.0], [0.0, 0.0, 0.0005]],
            position: [0.0, 0.0, -(i as f64 + 0.5) * l],
            orientation: [1.0, 0.0, 0.0, 0.0],
            velocity: [0.0; 3],
            angular_velocity: [0.0; 3],
            points: Vec::new(),
        })
        .collect();
    let joints = (0..n)
        .map(|i| {
            let axis = if i % 2 == 0 {
                [1.0, 0.0, 0.0]
            } else {
                [0.0, 1.0, 0.0]
            };
            let a = match i {
                0 => SpatialAttachment {
                    body: BodyRef::Ground,
                    point: [0.0; 3],
                },
                _ => SpatialAttachment {
                    body: BodyRef::Body(i - 1),
                    point: [0.0, 0.0, -0.5 * l],
                },
            };
            SpatialJoint {
                name: format!("hinge{i}"),
                kind: SpatialJointKind::Revolute {
                    a,
                    b: SpatialAttachment {
                        body: BodyRef::Body(i),
                        point: [0.0, 0.0, 0.5 * l],
                    },
                    axis_a: axis,
                    axis_b: axis,
                },
            }
        })
        .collect();
    jounce_mechanics::SpatialSystem::from_spatial(&SpatialModel {
        gravity: [0.0, 0.0, -9.81],
        bodies,
        joints,
        forces: Vec::new(),
        drivers: Vec::new(),
    })
    .expect("a valid chain")
}

fn bench_spatial_chain(c: &mut Criterion) {
    use jounce_mechanics::{JointCoordinateSystem, SpatialJointSystem};
    let mut g = c.benchmark_group("spatial joint forward dynamics chain");
    for n in [10, 100, 500, 1000, 10_000] {
        let js = SpatialJointSystem::new(&spatial_chain(n));
        let mut data = js.data();
        let q: Vec<f64> = (0..n).map(|i| 0.3 * (i as f64).sin()).collect();
        let v: Vec<f64> = (0..n).map(|i| 0.5 * (i as f64).cos()).collect();
        let mut a = vec![0.0; n];
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                js.forward_dynamics(&mut data, 0.0, black_box(&q), black_box(&v), &mut a)
                    .unwrap()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_s1, bench_chain, bench_spatial_chain);
criterion_main!(benches);
