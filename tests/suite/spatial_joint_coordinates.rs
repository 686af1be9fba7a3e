//! Spatial models in joint coordinates (issue 33, point 2): the `joint`
//! formulation (Featherstone's articulated-body algorithm on the
//! kinematic tree, [`jounce_mechanics::SpatialJointSystem`]) against the
//! body-coordinate `augmented` formulation, both with dop853 at
//! rtol 1e-12, atol 1e-14, to t = 1 s.
//!
//! Compared: every body's position (x, y, z) and orientation (the
//! quaternion up to sign) at t = 1, within 1e-8. Models: the spatial
//! double pendulum (two spherical joints, three Cardan angles each), the
//! six-axis arm URDF (fixed and revolute joints) and the heavy top
//! (a fast-spinning spherical joint).
//!
//! And a closed loop (a cut spherical joint: closure constraints in the
//! joint-coordinate KKT system).

use crate::support;

use jounce::run::Overrides;
use support::{run_example, Series};

/// The run of `path` to t = 1 s with the formulation `formulation`.
fn run(path: &str, formulation: &str) -> Series {
    let (s, ts) = run_example(
        path,
        Overrides {
            t_end: Some(1.0),
            formulation: Some(formulation.into()),
            method: Some("dop853".into()),
            rtol: Some(1e-12),
            atol: Some(1e-14),
            ..Overrides::default()
        },
        &format!("spatial_joint_{formulation}"),
    );
    assert_eq!(s.status, "completed", "{path} {formulation}");
    ts
}

/// The largest difference of the body positions and orientations at the
/// last row (t = 1).
fn final_difference(a: &Series, b: &Series, bodies: &[&str]) -> f64 {
    let last = |s: &Series, c: &str| *s.col(c).last().expect("rows");
    assert!((last(a, "t") - 1.0).abs() < 1e-12 && (last(b, "t") - 1.0).abs() < 1e-12);
    let mut worst = 0.0f64;
    for body in bodies {
        for c in ["x", "y", "z"] {
            let name = format!("{body}.{c}");
            worst = worst.max((last(a, &name) - last(b, &name)).abs());
        }
        let q = |s: &Series| ["qw", "qx", "qy", "qz"].map(|c| last(s, &format!("{body}.{c}")));
        let (p, r) = (q(a), q(b));
        let same: f64 = (0..4).map(|k| (p[k] - r[k]).abs()).fold(0.0, f64::max);
        let flip: f64 = (0..4).map(|k| (p[k] + r[k]).abs()).fold(0.0, f64::max);
        worst = worst.max(same.min(flip));
    }
    worst
}

fn check(path: &str, bodies: &[&str]) {
    let body = run(path, "augmented");
    let joint = run(path, "joint");
    let d = final_difference(&body, &joint, bodies);
    eprintln!("{path}: joint vs augmented at t = 1: max difference {d:e}");
    assert!(d < 1e-8, "{path}: {d:e}");
}

#[test]
fn spatial_double_pendulum_in_joint_coordinates_matches_body_coordinates() {
    check("examples/spatial_double_pendulum.toml", &["link1", "link2"]);
}

#[test]
fn six_axis_arm_in_joint_coordinates_matches_body_coordinates() {
    check(
        "examples/six_axis_arm.urdf",
        &[
            "base_link",
            "link1",
            "link2",
            "link3",
            "link4",
            "link5",
            "link6",
        ],
    );
}

#[test]
fn heavy_top_in_joint_coordinates_matches_body_coordinates() {
    check("examples/heavy_top.toml", &["top"]);
}

/// The double pendulum closed by a distance joint (a rod of length 1)
/// from ground to link2's centre of mass (5 degrees of freedom left),
/// always a cut joint: its
/// closure constraints in the joint-coordinate KKT system, against the
/// body coordinates; within 1e-8 at t = 1 as the trees.
#[test]
fn a_closed_loop_in_joint_coordinates_matches_body_coordinates() {
    let dir = std::env::temp_dir().join(format!("jounce-sjoint-loop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = std::fs::read_to_string(support::repo("examples/spatial_double_pendulum.toml"))
        .unwrap()
        + r#"
[[joints]]
name = "closing_rod"
type = "distance"
body1 = "ground"
point1 = [1.5, 1.0, 0.0]
body2 = "link2"
point2 = [0.0, 0.0, 0.0]
"#;
    let path = dir.join("loop.toml");
    std::fs::write(&path, src).unwrap();
    let path = path.to_str().unwrap().to_string();
    check(&path, &["link1", "link2"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The spatial slider-crank: a driven crank (the driver a cut row with
/// its time derivatives), a loop closed by cutting (spherical, universal
/// and prismatic joints), 0 degrees of freedom.
#[test]
fn driven_slider_crank_in_joint_coordinates_matches_body_coordinates() {
    check(
        "examples/spatial_slider_crank.toml",
        &["crank", "rod", "slider"],
    );
}
