//! One right-hand side of studies.md S1 in joint coordinates (`joint`) and
//! in body coordinates (`augmented`), timed as the minimum over many short
//! batches: a batch of ~50 µs mostly runs without being preempted, so the
//! minimum stays close to the idle-machine cost even when other processes
//! share the cores (criterion's means do not). A companion of
//! `benches/joint.rs` and `benches/rhs.rs` (same states), not a replacement.
//!
//! `cargo run --release -p jounce-formulation --example s1_rhs_min`

use jounce_formulation::{build, FormulationSettings};
use jounce_mechanics::PlanarSystem;
use std::hint::black_box;
use std::time::Instant;

fn s1() -> PlanarSystem {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/studies/s1_k1_1e2_k2_1e2.toml");
    PlanarSystem::from_model(&jounce_model::load_file(&file).expect("S1 model")).expect("valid")
}

/// Minimum and 10th percentile of the per-call time (ns) of `f` over
/// 3 `batches` batches of `per` calls.
fn time(mut f: impl FnMut(), batches: usize, per: usize) -> (f64, f64) {
    let mut t: Vec<f64> = (0..3 * batches)
        .map(|_| {
            let s = Instant::now();
            for _ in 0..per {
                f();
            }
            s.elapsed().as_nanos() as f64 / per as f64
        })
        .collect();
    t.sort_by(f64::total_cmp);
    (t[0], t[3 * batches / 10])
}

fn main() {
    // `joint` or `augmented` runs only that one (for a profiler)
    let only = std::env::args().nth(1);
    let run = |name: &str| only.as_deref().is_none_or(|o| o == name);
    let sys = s1();
    let settings = FormulationSettings::default();
    if run("joint") {
        joint(&sys, &settings);
    }
    if run("augmented") {
        augmented(&sys, &settings);
    }
}

/// As `benches/joint.rs`.
fn joint(sys: &PlanarSystem, settings: &FormulationSettings) {
    let mut f = build("joint", settings, sys).expect("joint");
    let mut y = f
        .initial_state(0.0, &sys.initial_q(), &sys.initial_v())
        .expect("consistent");
    let n = y.len() / 2;
    for i in 0..n {
        y[i] += 0.01 * (i as f64 + 1.0).sin();
        y[n + i] += 0.1 * (i as f64).cos();
    }
    let mut dy = vec![0.0; y.len()];
    let (lo, p10) = time(|| f.rhs(0.1, black_box(&y), &mut dy).unwrap(), 4000, 400);
    println!("joint rhs S1:     min {lo:6.1} ns  p10 {p10:6.1} ns");
}

/// As `benches/rhs.rs`.
fn augmented(sys: &PlanarSystem, settings: &FormulationSettings) {
    let mut f = build("augmented", settings, sys).expect("augmented");
    let y = f
        .initial_state(0.0, &sys.initial_q(), &sys.initial_v())
        .expect("consistent");
    let mut dy = vec![0.0; y.len()];
    let (lo, p10) = time(|| f.rhs(0.1, black_box(&y), &mut dy).unwrap(), 2000, 100);
    println!("augmented rhs S1: min {lo:6.1} ns  p10 {p10:6.1} ns");
}
