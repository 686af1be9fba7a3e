//! One right-hand side of every formulation on the planar pendulum chain
//! of N links, N = 10 .. 10 000 (issue 32: every formulation's right-hand
//! side grows with exponent ≤ 1.2 from 10 to 10 000 bodies): f(t, y) of
//! the ODE forms (`augmented`, `projection`, `penalty`, `partitioning`,
//! `state_space`, `joint`) and the residual F(t, y, y′) of the DAE forms
//! (`index3`, `ggl`, `odae`), each with the formulation's default linear
//! solver (`auto`: sparse from 40 unknowns).
//!
//! `cargo bench -p jounce-formulation --bench every_formulation`; the
//! sizes from `JOUNCE_BENCH_SIZES` (comma-separated, default
//! `10,100,1000,10000`). `bench/rhs_at_size.py` runs it and fits the
//! exponents from criterion's estimates.

mod common;

use common::chain;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use jounce_formulation::{build, FormulationSettings};
use std::hint::black_box;
use std::time::Duration;

/// The ODE forms (timed by `rhs`) and the DAE forms (timed by `residual`).
const FORMULATIONS: [&str; 9] = [
    "augmented",
    "projection",
    "penalty",
    "partitioning",
    "state_space",
    "joint",
    "index3",
    "ggl",
    "odae",
];

fn sizes() -> Vec<usize> {
    std::env::var("JOUNCE_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![10, 100, 1000, 10_000])
}

fn every_formulation(c: &mut Criterion) {
    for name in FORMULATIONS {
        let mut g = c.benchmark_group(format!("rhs {name}"));
        g.sample_size(10);
        g.warm_up_time(Duration::from_millis(500));
        g.measurement_time(Duration::from_secs(2));
        for n in sizes() {
            let sys = chain(n);
            let q = sys.initial_q();
            let v = vec![0.0; q.len()];
            let mut f = build(name, &FormulationSettings::default(), &sys)
                .unwrap_or_else(|e| panic!("{name} on {n} links: {e}"));
            let y = f
                .initial_state(0.0, &q, &v)
                .unwrap_or_else(|e| panic!("{name} on {n} links: {e}"));
            let mut out = vec![0.0; y.len()];
            if let Some(dae) = f.as_dae() {
                let yp = vec![0.0; y.len()];
                g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
                    b.iter(|| dae.residual(0.1, black_box(&y), &yp, &mut out).unwrap())
                });
            } else {
                g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
                    b.iter(|| f.rhs(0.1, black_box(&y), &mut out).unwrap())
                });
            }
        }
        g.finish();
    }
}

criterion_group!(benches, every_formulation);
criterion_main!(benches);
