//! Cost of one step of each integrator family on a planar pendulum chain of
//! N links (body coordinates), released at rest: explicit Runge-Kutta
//! (dopri5, dop853), SDIRK (trbdf2), Rosenbrock (rodas4), Radau IIA
//! (radau5), multistep (pece: Adams predictor-corrector, bdf on the ODE), the local linearization
//! (llm), and the structural family and DAE BDF on the index-3 DAE
//! (newmark, generalized_alpha, bdf on `index3`).
//!
//! Every iteration integrates [0, 4h] with the fixed step h = 1e-3 from the
//! same initial state, so the time reported is that of four steps,
//! start-up included (the first step of a multistep method is its
//! start-up; the Jacobian of the implicit methods is formed on the first
//! step and reused).
//!
//! `cargo bench -p jounce-formulation --bench step`

mod common;

use common::chain;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use jounce_formulation::{build, FormulationSettings};
use jounce_integrate::{method, solve, Discard, SolverOptions};
use jounce_mechanics::MechanicalSystem;
use std::hint::black_box;

/// (method, formulation) pairs, one or more per family.
const PAIRS: &[(&str, &str)] = &[
    ("dopri5", "augmented"),
    ("dop853", "augmented"),
    ("trbdf2", "augmented"),
    ("rodas4", "augmented"),
    ("radau5", "augmented"),
    ("pece", "augmented"),
    ("bdf", "augmented"),
    ("llm", "augmented"),
    ("newmark", "index3"),
    ("generalized_alpha", "index3"),
    ("bdf", "index3"),
];

const H: f64 = 1e-3;

fn steps(c: &mut Criterion) {
    let sizes: Vec<usize> = std::env::var("JOUNCE_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![10, 100]);
    for &(m, f) in PAIRS {
        let mut g = c.benchmark_group(format!("4 steps {m} on {f}"));
        g.sample_size(10);
        for &n in &sizes {
            let sys = chain(n);
            let q0 = sys.initial_q();
            let v0 = vec![0.0; sys.nv()];
            let mut form = build(f, &FormulationSettings::default(), &sys).unwrap();
            let y0 = form.initial_state(0.0, &q0, &v0).unwrap();
            let opts = SolverOptions {
                fixed_step: Some(H),
                ..SolverOptions::default()
            };
            let mut stepper = method::build(m, &opts).unwrap();
            g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
                b.iter(|| {
                    let r = solve(
                        form.as_mut(),
                        stepper.as_mut(),
                        0.0,
                        black_box(&y0),
                        4.0 * H,
                        &opts,
                        &mut Discard,
                    );
                    assert!(r.is_ok(), "{m} on {f}, N = {n}: {:?}", r.err());
                })
            });
        }
        g.finish();
    }
}

criterion_group!(benches, steps);
criterion_main!(benches);
