//! `jounce sweep` (issue 12, point 5): one parameter over a list of
//! values, in parallel, with its table, CSV, JSON and charts.

use crate::support;

use support::{jounce, scratch, svg_curves};

fn sweep_rows(dir: &std::path::Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("sweep.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["rows"].as_array().unwrap().clone()
}

/// The S3 oscillator over its three dampings (termeer test 2a): every run
/// ends at the new equilibrium x = 0.6 m, and more damping is cheaper.
#[test]
fn a_damping_sweep_of_the_stiff_oscillator_tables_and_plots_its_figures() {
    let out = scratch("sweep_damping");
    let model = support::repo("examples/studies/s3_b2e2_step.toml");
    let (code, stdout, stderr) = jounce(&[
        "sweep",
        model.to_str().unwrap(),
        "--set",
        "forces.spring.damping=2e2,2e3,2e4",
        "--figure",
        "work.steps_accepted",
        "--figure",
        "final:mass.x",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let rows = sweep_rows(&out);
    assert_eq!(rows.len(), 3);
    let steps: Vec<f64> = rows
        .iter()
        .map(|r| r["figures"][0].as_f64().unwrap())
        .collect();
    for r in &rows {
        assert_eq!(r["status"], "completed");
        let x = r["figures"][1].as_f64().unwrap();
        assert!((x - 0.6).abs() < 1e-6, "final x {x}");
    }
    assert!(steps[0] > steps[1] && steps[1] > steps[2], "{steps:?}");
    assert_eq!(svg_curves(&out.join("sweep_work.steps_accepted.svg")), 1);
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    assert_eq!(csv.lines().count(), 4);
    assert!(stdout.contains("final:mass.x"), "{stdout}");
}

/// A string setting is swept too, and a value the model refuses is a row
/// with the element's error, not an abort.
#[test]
fn methods_can_be_swept_and_a_bad_value_is_a_refused_row() {
    let out = scratch("sweep_method");
    let model = support::repo("examples/simple_pendulum.toml");
    let (code, stdout, stderr) = jounce(&[
        "sweep",
        model.to_str().unwrap(),
        "--set",
        "settings.integrator.method=dopri5,radau5,nonsense",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let rows = sweep_rows(&out);
    assert_eq!(rows[0]["status"], "completed");
    assert_eq!(rows[1]["status"], "completed");
    assert_eq!(rows[2]["status"], "refused");
    assert!(rows[2]["reason"].as_str().unwrap().contains("nonsense"));

    let out = scratch("sweep_bad");
    let model = support::repo("examples/studies/s3_b2e2_step.toml");
    let (code, stdout, _) = jounce(&[
        "sweep",
        model.to_str().unwrap(),
        "--set",
        "forces.spring.damping=-1,2e4",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    let rows = sweep_rows(&out);
    assert_eq!(rows[0]["status"], "refused");
    let why = rows[0]["reason"].as_str().unwrap();
    assert!(why.contains("spring") && why.contains("damping"), "{why}");
    assert!(stdout.contains("refused"));
}

#[test]
fn a_path_the_model_lacks_is_an_error_before_any_run() {
    let model = support::repo("examples/simple_pendulum.toml");
    let (code, _, stderr) = jounce(&[
        "sweep",
        model.to_str().unwrap(),
        "--set",
        "forces.spring.stiffness=1,2",
        "-o",
        scratch("sweep_nopath").to_str().unwrap(),
    ]);
    assert_ne!(code, 0);
    assert!(stderr.contains("forces"), "{stderr}");
}

/// A misspelt summary figure or an unknown column is refused before any
/// run, with the nearest name (it was a column of NaN with exit 0).
#[test]
fn a_figure_that_names_nothing_is_refused_with_the_nearest_name() {
    let model = support::repo("examples/simple_pendulum.toml");
    for (figure, expect) in [
        ("work.cpu_secnds", "did you mean 'work.cpu_seconds'"),
        ("max:bob.yy", "did you mean 'bob.y'"),
        ("peak:bob.y", "summary.json has no 'peak:bob"),
    ] {
        let out = scratch("sweep_badfigure");
        let (code, stdout, stderr) = jounce(&[
            "sweep",
            model.to_str().unwrap(),
            "--set",
            "bodies.bob.mass=1,2",
            "--figure",
            figure,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_ne!(code, 0, "{figure}: {stdout}");
        assert!(
            stderr.contains(&format!("--figure '{figure}'")) && stderr.contains(expect),
            "{figure}: {stderr}"
        );
        assert!(!out.join("sweep.json").exists(), "{figure}: nothing is run");
    }
}

/// max: and min: of a column are its peak and trough over the run: the
/// pendulum released at rest swings between its start height and below.
#[test]
fn peak_and_trough_figures_of_a_column() {
    let model = support::repo("examples/simple_pendulum.toml");
    let out = scratch("sweep_peak");
    let (code, stdout, stderr) = jounce(&[
        "sweep",
        model.to_str().unwrap(),
        "--set",
        "settings.t_end=1,2",
        "--figure",
        "max:bob.y",
        "--figure",
        "min:bob.y",
        "--figure",
        "final:bob.y",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    for r in sweep_rows(&out) {
        let f: Vec<f64> = (0..3).map(|k| r["figures"][k].as_f64().unwrap()).collect();
        let dir = std::path::PathBuf::from(r["dir"].as_str().unwrap());
        let s = support::Series::read(&dir.join("timeseries.csv"));
        let y = s.col("bob.y");
        let max = y.iter().copied().fold(f64::NAN, f64::max);
        let min = y.iter().copied().fold(f64::NAN, f64::min);
        // the two CSV readers may round the printed decimals apart by an ulp
        let close = |a: f64, b: f64| (a - b).abs() <= 4.0 * f64::EPSILON * b.abs().max(1.0);
        assert!(close(f[0], max), "max:bob.y {} is the peak {max}", f[0]);
        assert!(close(f[1], min), "min:bob.y {} is the trough {min}", f[1]);
        assert!(
            close(f[2], *y.last().unwrap()),
            "final:bob.y is the last row"
        );
        assert!(f[0] > f[1], "the bob moves");
    }
}
