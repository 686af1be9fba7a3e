//! Cost of one evaluation on a planar pendulum chain of N links, body
//! coordinates: the system's quantities into a workspace
//! (`MechanicalSystem::evaluate`), one right-hand side of `augmented` (the
//! dense KKT matrix assembled and factored) and of `penalty`, and one
//! exact Jacobian of `augmented`.
//!
//! `cargo bench -p jounce-formulation --bench rhs`; the dense KKT path is
//! O(N³), which is what issue 8 replaces, so its larger sizes are left out.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use jounce_formulation::{build, FormulationSettings};
use jounce_mechanics::{MechanicalSystem, PlanarSystem, Quantities};
use jounce_model::{Attachment, Body, BodyRef, Joint, JointKind, Model, Settings};
use nalgebra::DMatrix;
use std::hint::black_box;

/// N uniform links of 1 kg and 1 m in a horizontal line, pinned to each
/// other and the first to the ground at the origin.
fn chain(n: usize) -> PlanarSystem {
    let bodies = (0..n)
        .map(|i| Body {
            name: format!("link{i}"),
            mass: 1.0,
            inertia: 1.0 / 12.0,
            position: [i as f64 + 0.5, 0.0],
            angle: 0.0,
            velocity: [0.0, 0.0],
            angular_velocity: 0.0,
            points: vec![],
        })
        .collect();
    let joints = (0..n)
        .map(|i| Joint {
            name: format!("pin{i}"),
            kind: JointKind::Revolute {
                a: if i == 0 {
                    Attachment {
                        body: BodyRef::Ground,
                        point: [0.0, 0.0],
                    }
                } else {
                    Attachment {
                        body: BodyRef::Body(i - 1),
                        point: [0.5, 0.0],
                    }
                },
                b: Attachment {
                    body: BodyRef::Body(i),
                    point: [-0.5, 0.0],
                },
            },
        })
        .collect();
    let model = Model {
        name: format!("chain of {n}"),
        source: "<bench>".into(),
        gravity: [0.0, -9.81],
        bodies,
        joints,
        drivers: vec![],
        forces: vec![],
        settings: Settings::default(),
    };
    PlanarSystem::from_model(&model).expect("the chain is a valid model")
}

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

fn rhs(c: &mut Criterion) {
    for name in ["augmented", "penalty"] {
        let mut g = c.benchmark_group(format!("{name} right-hand side"));
        g.sample_size(20);
        for n in [10, 20, 40] {
            let sys = chain(n);
            let (q, v) = state(&sys);
            let mut f = build(name, &FormulationSettings::default(), &sys).unwrap();
            let y = f.initial_state(0.0, &q, &v).unwrap();
            let mut dy = vec![0.0; y.len()];
            g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
                b.iter(|| f.rhs(0.1, black_box(&y), &mut dy).unwrap())
            });
        }
        g.finish();
    }
}

fn jacobian(c: &mut Criterion) {
    let mut g = c.benchmark_group("augmented exact Jacobian");
    g.sample_size(10);
    for n in [10, 20] {
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

criterion_group!(benches, evaluate, rhs, jacobian);
criterion_main!(benches);
