//! Spatial models in joint coordinates (issue 33, point 2): the `joint`
//! formulation (Featherstone's articulated-body algorithm on the
//! kinematic tree, [`jounce_mechanics::SpatialJointSystem`]) against the
//! body-coordinate `augmented` formulation, both with dop853 at
//! rtol 1e-12, atol 1e-14, to t = 1 s.
//!
//! Compared: every body's position (x, y, z) and orientation (the
//! quaternion up to sign) at t = 1, within 1e-8. Models: the spatial
//! double pendulum (two spherical joints, a unit quaternion each), the
//! six-axis arm URDF (fixed and revolute joints) and the heavy top
//! (a fast-spinning spherical joint).
//!
//! And a closed loop (a cut spherical joint: closure constraints in the
//! joint-coordinate KKT system), and the double pendulum swinging
//! through the orientation where three Cardan angles of a spherical
//! joint were singular.

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

/// Every body's position and orientation (quaternion up to sign) in every
/// row: the largest difference (the runs on the same output grid).
fn run_difference(a: &Series, b: &Series, bodies: &[&str]) -> f64 {
    let (ta, tb) = (a.col("t"), b.col("t"));
    assert_eq!(ta.len(), tb.len());
    let mut worst = 0.0f64;
    for i in 0..ta.len() {
        assert!((ta[i] - tb[i]).abs() < 1e-12);
        for body in bodies {
            for c in ["x", "y", "z"] {
                let name = format!("{body}.{c}");
                worst = worst.max((a.col(&name)[i] - b.col(&name)[i]).abs());
            }
            let q = |s: &Series| ["qw", "qx", "qy", "qz"].map(|c| s.col(&format!("{body}.{c}"))[i]);
            let (p, r) = (q(a), q(b));
            let same: f64 = (0..4).map(|k| (p[k] - r[k]).abs()).fold(0.0, f64::max);
            let flip: f64 = (0..4).map(|k| (p[k] + r[k]).abs()).fold(0.0, f64::max);
            worst = worst.max(same.min(flip));
        }
    }
    worst
}

/// The spatial double pendulum with gravity along −z, released along x
/// with a slow turn about the vertical (ω = 1e-7 rad/s, both links): the
/// links swing down almost in the x-z plane, link1 turning from x to
/// within about 1e-7 rad of −z at t ≈ 0.72. Three Cardan angles about the
/// joint frame of the former model (e₃ = x towards link1's centre of
/// mass, e₁ = z, e₂ = −y) had their second angle at −90° there: the
/// former `joint` (main at 257238e) stopped at t = 0.7238613 with
/// "singular articulated inertia … joint 'shoulder' (angle 1) (or its
/// Cardan angles at their singularity …) sees D = 3.75e-12" (with
/// ω = 1e-5 it crept on for 47 000 steps and was stopped after 300 s at
/// t = 0.72386; exactly in the plane, ω = 0, the crossing is harmless
/// for Cardan angles, the angular velocity staying along e₂). The unit
/// quaternion of the spherical joint has no such orientation: `joint`
/// passes (link1's x changes sign below the shoulder, checked) and agrees
/// with `augmented` (dop853, rtol 1e-10, atol 1e-12) to 1e-8 in every
/// output row up to t = 1, and the quaternions of both spherical joints
/// in the joint state stay unit to 1e-12 in every step.
#[test]
fn spatial_double_pendulum_through_the_former_cardan_singularity() {
    let dir = support::scratch("spatial_joint_cardan");
    let w = 1e-7;
    let text = std::fs::read_to_string(support::repo("examples/spatial_double_pendulum.toml"))
        .unwrap()
        .replace("gravity = [0.0, -9.81, 0.0]", "gravity = [0.0, 0.0, -9.81]")
        // ω about the vertical through the shoulder: v = ω × r
        .replace(
            "position = [0.5, 0.0, 0.0]\n",
            &format!(
                "position = [0.5, 0.0, 0.0]\nangular_velocity = [0.0, 0.0, {w:e}]\n\
                 velocity = [0.0, {:e}, 0.0]\n",
                0.5 * w
            ),
        )
        .replace(
            "position = [1.5, 0.0, 0.0]\n",
            &format!(
                "position = [1.5, 0.0, 0.0]\nangular_velocity = [0.0, 0.0, {w:e}]\n\
                 velocity = [0.0, {:e}, 0.0]\n",
                1.5 * w
            ),
        );
    assert!(text.contains("gravity = [0.0, 0.0, -9.81]"));
    assert_eq!(
        text.matches("angular_velocity = [0.0, 0.0, 1e-7]").count(),
        2
    );
    let path = dir.join("pendulum.toml");
    std::fs::write(&path, &text).unwrap();
    let path = path.to_str().unwrap().to_string();
    let run = |formulation: &str| {
        let (s, ts) = run_example(
            &path,
            Overrides {
                t_end: Some(1.0),
                formulation: Some(formulation.into()),
                method: Some("dop853".into()),
                rtol: Some(1e-10),
                atol: Some(1e-12),
                ..Overrides::default()
            },
            &format!("spatial_joint_cardan_{formulation}"),
        );
        assert_eq!(s.status, "completed", "{formulation}");
        ts
    };
    let (body, joint) = (run("augmented"), run("joint"));
    // link1 passes −z: its centre of mass crosses x = 0 below the
    // shoulder, within 1e-6 of the plane y = 0
    let (x, y, z) = (
        joint.col("link1.x"),
        joint.col("link1.y"),
        joint.col("link1.z"),
    );
    let crossing = (1..x.len())
        .find(|&i| x[i - 1] > 0.0 && x[i] <= 0.0)
        .expect("link1 passes the vertical before t = 1");
    assert!(z[crossing] < -0.49, "z = {}", z[crossing]);
    assert!(y.iter().all(|y| y.abs() < 1e-6));
    let at_end = final_difference(&body, &joint, &["link1", "link2"]);
    let over_run = run_difference(&body, &joint, &["link1", "link2"]);
    // the joint state itself: unit quaternions in every step
    let model = jounce_model::from_str(&text, "pendulum").unwrap();
    let sys = jounce_mechanics::SpatialSystem::from_model(&model).unwrap();
    let mut f = jounce_formulation::Joint::new(&sys).unwrap();
    let (q0, v0) = sys.initial_state();
    let y0 = jounce_formulation::Formulation::initial_state(&mut f, 0.0, &q0, &v0).unwrap();
    // two spherical joints: q = (p_shoulder, p_elbow), v = (ω'_s, ω'_e)
    assert_eq!(y0.len(), 8 + 6);
    let opts = jounce_integrate::SolverOptions {
        rtol: 1e-10,
        atol: 1e-12,
        output: jounce_integrate::OutputGrid::Steps,
        ..jounce_integrate::SolverOptions::default()
    };
    let mut stepper = jounce_integrate::method::build("dop853", &opts).unwrap();
    let mut rec = jounce_integrate::Recorder::default();
    jounce_integrate::solve(&mut f, stepper.as_mut(), 0.0, &y0, 1.0, &opts, &mut rec).unwrap();
    let norm = |p: &[f64]| p.iter().map(|x| x * x).sum::<f64>().sqrt();
    let drift = rec
        .y
        .iter()
        .flat_map(|y| [norm(&y[0..4]), norm(&y[4..8])])
        .map(|n| (n - 1.0).abs())
        .fold(0.0, f64::max);
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "double pendulum through the former Cardan singularity (t = {:.2}): joint vs augmented \
         at t = 1 {at_end:e}, over the run {over_run:e}; quaternion norm over {} steps {drift:e}",
        joint.col("t")[crossing],
        rec.y.len()
    );
    assert!(at_end < 1e-8, "{at_end:e}");
    assert!(over_run < 1e-8, "{over_run:e}");
    assert!(rec.y.len() > 10);
    assert!(drift <= 1e-12, "{drift:e}");
}

/// The Jacobian of `joint` with spherical joints (q' = T(q) v on the
/// quaternions: the blocks T(q) and ∂(T(q) v)/∂q, and the acceleration
/// Jacobians) equals central differences of its right-hand side to 1e-6
/// relative, on the spatial double pendulum at a moved state (its
/// quaternions normalised by the step's projection); and radau5 (rtol
/// 1e-10) under `joint` agrees with dop853 under `augmented` at t = 1 to
/// 1e-7.
#[test]
fn spherical_joints_under_implicit_methods() {
    let model =
        jounce_model::load_file(&support::repo("examples/spatial_double_pendulum.toml")).unwrap();
    let sys = jounce_mechanics::SpatialSystem::from_model(&model).unwrap();
    let mut f = jounce_formulation::build(
        "joint",
        &jounce_formulation::FormulationSettings::default(),
        &sys,
    )
    .unwrap();
    let (q0, v0) = sys.initial_state();
    let mut y = f.initial_state(0.0, &q0, &v0).unwrap();
    assert_eq!(y.len(), 8 + 6);
    for (k, x) in y.iter_mut().enumerate() {
        *x += 0.3 * ((k as f64) * 0.7).sin();
    }
    assert!(matches!(
        f.after_step(0.0, &mut y).unwrap(),
        jounce_integrate::StepFix::Corrected
    ));
    let n = y.len();
    let mut jac = nalgebra::DMatrix::zeros(n, n);
    f.jacobian(0.3, &y, &mut jac).unwrap();
    let (mut fp, mut fm) = (vec![0.0; n], vec![0.0; n]);
    let mut worst = 0.0f64;
    let scale = jac.amax().max(1.0);
    for j in 0..n {
        let h = 1e-6;
        let mut yp = y.clone();
        yp[j] += h;
        f.rhs(0.3, &yp, &mut fp).unwrap();
        yp[j] -= 2.0 * h;
        f.rhs(0.3, &yp, &mut fm).unwrap();
        for i in 0..n {
            worst = worst.max(((fp[i] - fm[i]) / (2.0 * h) - jac[(i, j)]).abs() / scale);
        }
    }
    let path = "examples/spatial_double_pendulum.toml";
    let reference = run(path, "augmented");
    let (s, ts) = run_example(
        path,
        Overrides {
            t_end: Some(1.0),
            formulation: Some("joint".into()),
            method: Some("radau5".into()),
            rtol: Some(1e-10),
            atol: Some(1e-12),
            ..Overrides::default()
        },
        "spatial_joint_radau5",
    );
    assert_eq!(s.status, "completed");
    let d = final_difference(&reference, &ts, &["link1", "link2"]);
    eprintln!(
        "spherical joints: joint Jacobian vs central differences {worst:e}; joint + radau5 vs \
         augmented + dop853 at t = 1: {d:e}"
    );
    assert!(worst < 1e-6, "{worst:e}");
    assert!(d < 1e-7, "{d:e}");
}

/// The run of `path` to t = 1 s under `joint` with the structural method
/// `method` at the fixed step `h`.
fn run_structural(path: &str, method: &str, h: f64) -> Series {
    let (s, ts) = run_example(
        path,
        Overrides {
            t_end: Some(1.0),
            formulation: Some("joint".into()),
            method: Some(method.into()),
            step: Some(h),
            ..Overrides::default()
        },
        &format!("spatial_joint_{method}"),
    );
    assert_eq!(s.status, "completed", "{path} joint {method} h = {h}");
    ts
}

/// Structural methods on spherical joints (n_q = 8 quaternion entries,
/// n_v = 6 rates): `joint` + newmark, generalized_alpha and hht at fixed steps
/// h = 1e-3 and 5e-4 agree at t = 1 with `augmented` + dop853 (rtol
/// 1e-12) to their second order, the error ratio between h and h/2 giving
/// an observed order within 0.2 of 2, and keep every quaternion unit to
/// 1e-12 in every row (positions moved by q ⊕ Δ, the exponential map).
#[test]
fn spherical_joints_under_structural_methods_converge_at_second_order() {
    let path = "examples/spatial_double_pendulum.toml";
    let bodies = ["link1", "link2"];
    let reference = run(path, "augmented");
    for method in ["generalized_alpha", "newmark", "hht"] {
        let mut errors = [0.0f64; 2];
        for (k, h) in [1e-3, 5e-4].into_iter().enumerate() {
            let ts = run_structural(path, method, h);
            errors[k] = final_difference(&reference, &ts, &bodies);
            for body in bodies {
                for i in 0..ts.col("t").len() {
                    let p = ["qw", "qx", "qy", "qz"].map(|c| ts.col(&format!("{body}.{c}"))[i]);
                    let norm = p.iter().map(|x| x * x).sum::<f64>().sqrt();
                    assert!(
                        (norm - 1.0).abs() <= 1e-12,
                        "{method} h = {h}: |p| = {norm}"
                    );
                }
            }
        }
        let order = (errors[0] / errors[1]).log2();
        eprintln!(
            "joint + {method} vs augmented + dop853 at t = 1: h = 1e-3 {:e}, h = 5e-4 {:e}, \
             observed order {order:.3}",
            errors[0], errors[1]
        );
        assert!((order - 2.0).abs() < 0.2, "{method}: order {order}");
        assert!(errors[0] < 2e-5, "{method}: {:e}", errors[0]);
    }
}
