//! The singular-configuration monitor on spatial runs: the spatial
//! slider-crank driven at its slider past the end of its stroke locks up,
//! and the run says so, naming the joints, as a planar run does
//! (`singular_configurations.rs`).

use crate::support;

use support::{jounce, repo, scratch};

/// The shipped spatial slider-crank with its crank free and its slider
/// pushed at 1 cm/s: the slider's largest reach is
/// x_max = sqrt(L² − (R − sqrt(d² + h²))²) = 0.296426 m (crank towards
/// the slider's line, R = 0.1, L = 0.3, d = 0.05, h = 0.02), 1.30 mm
/// beyond its start x0 = sqrt(L² − (R − d)² − h²) = 0.295127 m, reached
/// at t = 0.1299 s; there is no position beyond it.
fn pushed_slider_crank() -> std::path::PathBuf {
    let base = std::fs::read_to_string(repo("examples/spatial_slider_crank.toml")).unwrap();
    let text = base
        .replace(
            "crank_angle = { type = \"polynomial\", coefficients = [0.0, 6.283185307179586] }",
            "push = { type = \"polynomial\", coefficients = [0.0, 0.01] }",
        )
        .replace(
            "name = \"crank_drive\"\ntype = \"joint\"\njoint = \"hinge\"\nfunction = \"crank_angle\"",
            "name = \"slider_drive\"\ntype = \"joint\"\njoint = \"guide\"\nfunction = \"push\"",
        );
    assert!(text.contains("slider_drive") && text.contains("push ="));
    let path = scratch("spatial_lock_up").join("slider_crank_pushed.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_slider_pushed_past_its_stroke_fails_naming_lock_up() {
    let path = pushed_slider_crank();
    let (r, d) = (0.1f64, (0.05f64 * 0.05 + 0.02 * 0.02).sqrt());
    let x_max = (0.09 - (r - d) * (r - d)).sqrt();
    let x0 = (0.09f64 - 0.05 * 0.05 - 0.02 * 0.02).sqrt();
    let t_lock = (x_max - x0) / 0.01;
    for (formulation, method) in [("index3", "radau5"), ("joint", "dop853")] {
        let out = scratch(&format!("spatial_lock_up_{formulation}"));
        let (code, stdout, stderr) = jounce(&[
            "run",
            path.to_str().unwrap(),
            "--formulation",
            formulation,
            "--method",
            method,
            "-q",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_ne!(code, 0, "{formulation}: {stdout}");
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        let what = format!("{formulation} + {method}");
        assert_eq!(
            s["status"], "failed",
            "{what}: ran past the end of the stroke"
        );
        let e = s["error"].as_str().unwrap_or_default();
        assert!(stderr.contains("lock-up"), "{what}: {stderr}");
        assert!(e.contains("lock-up"), "{what}: {e}");
        for joint in ["big_end", "small_end", "slider_drive"] {
            assert!(e.contains(joint), "{what}: {joint} not named: {e}");
        }
        let t_reached = s["t_reached"].as_f64().unwrap();
        assert!(
            (t_reached - t_lock).abs() < 1e-3,
            "{what}: stopped at {t_reached} s, the stroke ends at {t_lock} s"
        );
    }
}
