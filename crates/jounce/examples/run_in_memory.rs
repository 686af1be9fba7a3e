//! The cost of one in-memory run through the Rust library, for
//! bench/python_overhead.py: the model parsed once ([`Simulation`]), then
//! `REPS` calls of [`Simulation::run`] with the options `jounce.run(model,
//! t_end=T)` passes (the CLI's defaults but for the end time). Prints the
//! median and the minimum wall time per call, in microseconds, as JSON.
//!
//! ```text
//! cargo run --release -p jounce --example run_in_memory -- MODEL T_END REPS
//! ```

use std::time::Instant;

use jounce::run::Overrides;
use jounce::{RunOptions, Simulation};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let model = args
        .get(1)
        .map_or("examples/simple_pendulum.toml", String::as_str);
    let t_end: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1e-3);
    let reps: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(2000);
    let sim = Simulation::from_file(model).expect("model");
    let options = RunOptions::from_overrides(&Overrides {
        t_end: Some(t_end),
        ..Default::default()
    })
    .expect("options");
    let mut times = Vec::with_capacity(reps);
    let mut rows = 0;
    for _ in 0..reps {
        let start = Instant::now();
        let r = sim.run(&options).expect("run");
        times.push(start.elapsed().as_secs_f64() * 1e6);
        rows = r.series.len();
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{{\"median_us\": {:.3}, \"min_us\": {:.3}, \"reps\": {reps}, \"rows\": {rows}}}",
        times[reps / 2],
        times[0]
    );
}
