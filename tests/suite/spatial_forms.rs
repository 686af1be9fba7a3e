//! Spatial models under `odae`, `partitioning` and `state_space` (issue
//! 33, point 3): the heavy top, the spatial double pendulum and (odae
//! only: it is kinematic, nothing is independent) the driven spatial
//! slider-crank to t = 1 s against `augmented` + dop853 at rtol 1e-10,
//! atol 1e-12.
//!
//! Compared: every position (x, y, z, qw, qx, qy, qz) and velocity (vx,
//! vy, vz, wx, wy, wz) column of every output row (0.01 s apart), the
//! largest absolute difference; the quaternion norm of every row within
//! 1e-12 of 1, the joints at their tolerance, and the energy error no
//! larger than a small multiple of augmented's.

use crate::support;

use jounce::run::Overrides;
use support::{run_example, Series};

/// The models and their bodies.
const EXAMPLES: [(&str, &[&str]); 3] = [
    ("examples/heavy_top.toml", &["top"]),
    ("examples/spatial_double_pendulum.toml", &["link1", "link2"]),
    (
        "examples/spatial_slider_crank.toml",
        &["crank", "rod", "slider"],
    ),
];

const COLUMNS: [&str; 13] = [
    "x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz",
];

/// The run of `path` to t = 1 s at rtol 1e-10, atol 1e-12 with
/// `formulation` and `method` (the model's when `None`).
fn run(
    path: &str,
    formulation: Option<&str>,
    method: Option<&str>,
) -> (jounce_io::RunSummary, Series) {
    let tag = format!(
        "spatial_forms_{}_{}",
        formulation.unwrap_or("model"),
        method.unwrap_or("model")
    );
    let (s, ts) = run_example(
        path,
        Overrides {
            t_end: Some(1.0),
            formulation: formulation.map(Into::into),
            method: method.map(Into::into),
            rtol: Some(1e-10),
            atol: Some(1e-12),
            ..Overrides::default()
        },
        &tag,
    );
    assert_eq!(s.status, "completed", "{path} {formulation:?} {method:?}");
    (s, ts)
}

/// (max |a − b| over the state columns of `bodies` and every row, the
/// same in the last row, t = 1).
fn differences(a: &Series, b: &Series, bodies: &[&str]) -> (f64, f64) {
    let rows = a.col("t").len();
    assert_eq!(rows, b.col("t").len(), "the same output rows");
    assert!((a.col("t")[rows - 1] - 1.0).abs() < 1e-12);
    let (mut worst, mut last) = (0.0f64, 0.0f64);
    for body in bodies {
        for c in COLUMNS {
            let name = format!("{body}.{c}");
            for (i, (x, y)) in a.col(&name).iter().zip(b.col(&name)).enumerate() {
                worst = worst.max((x - y).abs());
                if i + 1 == rows {
                    last = last.max((x - y).abs());
                }
            }
        }
    }
    (worst, last)
}

/// The largest |‖p‖ − 1| over the rows and `bodies`.
fn norm_drift(ts: &Series, bodies: &[&str]) -> f64 {
    let mut worst = 0.0f64;
    for body in bodies {
        let p = ["qw", "qx", "qy", "qz"].map(|c| ts.col(&format!("{body}.{c}")));
        for i in 0..p[0].len() {
            let n = p.iter().map(|c| c[i] * c[i]).sum::<f64>().sqrt();
            worst = worst.max((n - 1.0).abs());
        }
    }
    worst
}

/// Each formulation (with its method) on each model against augmented +
/// dop853 at the same tolerances. Bounds: the largest difference over
/// every row below 5e-7 (the issue asks 1e-6; measured 3.4e-10 to 1.95e-7,
/// odae + bdf on the heavy top the largest); the quaternion norm within
/// 1e-12; Φ below 1e-9; the relative energy error within 1e-6 of
/// augmented's, the bound of the DAE forms in `spatial_formulations.rs`
/// (a tolerance-proportional error: augmented + dop853 has 1.3e-10 on the
/// heavy top and 3.4e-9 on the double pendulum, the others 2.0e-11 to
/// 1.4e-7, state_space + radau5 on the double pendulum the largest; the
/// driven slider-crank's energy changes by the driver's work, 1.32 under
/// both, odae within 2.3e-13 of augmented's).
#[test]
fn odae_partitioning_and_state_space_agree_with_augmented_on_the_spatial_examples() {
    for (path, bodies) in EXAMPLES {
        let (rs, reference) = run(path, Some("augmented"), Some("dop853"));
        let e_ref = rs.accuracy.max_relative_energy_error;
        println!(
            "{path} augmented + dop853: relative energy error {e_ref:.1e}, Φ {:.1e}, {} steps",
            rs.accuracy.max_position_violation, rs.work.steps_accepted
        );
        // the slider-crank is kinematic: nothing independent to partition
        // (refused by name, `every_formulation_takes_spatial_models_from_the_command_line`)
        let runs: &[(&str, &str)] = if path.contains("slider_crank") {
            &[("odae", "bdf")]
        } else {
            &[
                ("odae", "bdf"),
                ("partitioning", "dop853"),
                ("state_space", "radau5"),
            ]
        };
        for &(formulation, method) in runs {
            let (s, ts) = run(path, Some(formulation), Some(method));
            let (diff, last) = differences(&reference, &ts, bodies);
            let drift = norm_drift(&ts, bodies);
            let energy = s.accuracy.max_relative_energy_error;
            let phi = s.accuracy.max_position_violation;
            println!(
                "{path} {formulation} + {method}: max difference {diff:.2e} (at t = 1 {last:.2e}), \
                 quaternion norm {drift:.1e}, relative energy error {energy:.1e}, Φ {phi:.1e}, \
                 {} steps",
                s.work.steps_accepted
            );
            let what = format!("{path} {formulation} + {method}");
            assert!(diff < 5e-7, "{what}: {diff:e}");
            assert!(drift <= 1e-12, "{what}: {drift:e}");
            assert!(phi < 1e-9, "{what}: Φ {phi:e}");
            assert!(
                (energy - e_ref).abs() < 1e-6,
                "{what}: energy {energy:e} against augmented's {e_ref:e}"
            );
        }
    }
}
