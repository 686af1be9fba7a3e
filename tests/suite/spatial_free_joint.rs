//! Free bodies in spatial joint coordinates (issue 33, point 2): a body
//! not joined to ground is the root of its tree through a free joint
//! (Featherstone, *Rigid Body Dynamics Algorithms*, 2008, sec. 4.5 and
//! Table 4.1: positions r and the unit quaternion p, rates ṙ and ω'), the
//! `joint` formulation integrating q' = T(q) v with the quaternions
//! normalised after every step.
//!
//! Checked against the body-coordinate `augmented` formulation (both
//! dop853, rtol 1e-12, atol 1e-14) and against closed forms: the torque-free
//! tumbling body (energy and world angular momentum, quaternion norm), a
//! body falling under gravity (½ g t²), the spatial bouncing ball (impacts
//! as events of the joint system's body motion) and a free-floating
//! two-body system (a free root and a revolute child: momentum and
//! angular momentum conserved).

use crate::support;

use jounce::run::Overrides;
use support::{run_example, scratch, Series};

/// The run of `path` to `t_end` with `formulation`, dop853 at rtol 1e-12,
/// atol 1e-14.
fn run(path: &str, formulation: &str, t_end: f64) -> Series {
    let (s, ts) = run_example(
        path,
        Overrides {
            t_end: Some(t_end),
            formulation: Some(formulation.into()),
            method: Some("dop853".into()),
            rtol: Some(1e-12),
            atol: Some(1e-14),
            ..Overrides::default()
        },
        &format!("spatial_free_{formulation}"),
    );
    assert_eq!(s.status, "completed", "{path} {formulation}");
    ts
}

/// Writes `text` as a model file in a scratch directory; its path.
fn model_file(text: &str, tag: &str) -> String {
    let dir = scratch(tag);
    let path = dir.join("model.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// Removes the scratch directory of a [`model_file`].
fn remove_model(path: &str) {
    if let Some(dir) = std::path::Path::new(path).parent() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

fn quaternion(ts: &Series, body: &str, i: usize) -> [f64; 4] {
    ["qw", "qx", "qy", "qz"].map(|c| ts.col(&format!("{body}.{c}"))[i])
}

fn vec3(ts: &Series, body: &str, names: [&str; 3], i: usize) -> [f64; 3] {
    names.map(|c| ts.col(&format!("{body}.{c}"))[i])
}

fn rotate(p: [f64; 4], s: [f64; 3]) -> [f64; 3] {
    let a = jounce_model::rotation_matrix(p);
    std::array::from_fn(|i| a[i][0] * s[0] + a[i][1] * s[1] + a[i][2] * s[2])
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// Largest |‖p‖ − 1| of `body` over every output row.
fn norm_drift(ts: &Series, body: &str) -> f64 {
    (0..ts.col("t").len())
        .map(|i| {
            let p = quaternion(ts, body, i);
            (p.iter().map(|x| x * x).sum::<f64>().sqrt() - 1.0).abs()
        })
        .fold(0.0, f64::max)
}

/// Largest difference of the positions, quaternions (up to sign),
/// velocities and body angular velocities of `bodies` at the last rows.
fn final_difference(a: &Series, b: &Series, bodies: &[&str], t_end: f64) -> f64 {
    let last = |s: &Series, c: &str| *s.col(c).last().expect("rows");
    assert!((last(a, "t") - t_end).abs() < 1e-12 && (last(b, "t") - t_end).abs() < 1e-12);
    let mut worst = 0.0f64;
    for body in bodies {
        for c in ["x", "y", "z", "vx", "vy", "vz", "wx", "wy", "wz"] {
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

/// The torque-free tumbling body (intermediate-axis flip): `joint`
/// agrees with `augmented` at t = 1 to 1e-9 and keeps the energy and the
/// world angular momentum to 1e-10, the quaternion unit to 1e-12 in every
/// row.
#[test]
fn tumbling_body_in_joint_coordinates_matches_body_coordinates() {
    let path = "examples/tumbling_body.toml";
    let body = run(path, "augmented", 1.0);
    let joint = run(path, "joint", 1.0);
    let d = final_difference(&body, &joint, &["body"], 1.0);
    let inertia = [1.0f64, 2.0, 3.0];
    let w = |i: usize| vec3(&joint, "body", ["wx", "wy", "wz"], i);
    let momentum = |i: usize| {
        let w = w(i);
        rotate(
            quaternion(&joint, "body", i),
            std::array::from_fn(|k| inertia[k] * w[k]),
        )
    };
    let kinetic = |i: usize| 0.5 * (0..3).map(|k| inertia[k] * w(i)[k].powi(2)).sum::<f64>();
    let (h0, e0) = (momentum(0), kinetic(0));
    let h0n = h0.iter().map(|x| x * x).sum::<f64>().sqrt();
    let (mut dh, mut de) = (0.0f64, 0.0f64);
    for i in 0..joint.col("t").len() {
        let h = momentum(i);
        dh = dh.max((0..3).map(|k| (h[k] - h0[k]).powi(2)).sum::<f64>().sqrt() / h0n);
        de = de.max(((kinetic(i) - e0) / e0).abs());
    }
    let drift = norm_drift(&joint, "body");
    eprintln!(
        "tumbling body, joint vs augmented at t = 1: {d:e}; energy {de:e}, angular momentum \
         {dh:e}, quaternion norm {drift:e}"
    );
    assert!(d < 1e-9, "{d:e}");
    assert!(de < 1e-10, "energy error {de:e}");
    assert!(dh < 1e-10, "angular momentum error {dh:e}");
    assert!(drift <= 1e-12, "quaternion norm drift {drift:e}");
}

/// A spinning body thrown under gravity: its centre of mass follows
/// r0 + v0 t + ½ g t² in every output row to 1e-12.
#[test]
fn free_fall_follows_the_parabola() {
    let path = model_file(
        r#"
[model]
name = "thrown body"
space = "spatial"
gravity = [0.0, 0.0, -9.81]

[[bodies]]
name = "body"
mass = 2.0
inertia = [0.1, 0.2, 0.3]
position = [0.5, -1.0, 3.0]
orientation = [0.5, 0.5, -0.5, 0.5]
velocity = [1.0, 0.5, 4.0]
angular_velocity = [1.0, -2.0, 3.0]

[settings]
t_end = 1.0
output_interval = 0.01
"#,
        "free_fall",
    );
    let ts = run(&path, "joint", 1.0);
    remove_model(&path);
    let (r0, v0, g) = ([0.5, -1.0, 3.0], [1.0, 0.5, 4.0], [0.0, 0.0, -9.81]);
    let mut worst = 0.0f64;
    for (i, &t) in ts.col("t").iter().enumerate() {
        let r = vec3(&ts, "body", ["x", "y", "z"], i);
        let v = vec3(&ts, "body", ["vx", "vy", "vz"], i);
        for k in 0..3 {
            worst = worst.max((r[k] - (r0[k] + v0[k] * t + 0.5 * g[k] * t * t)).abs());
            worst = worst.max((v[k] - (v0[k] + g[k] * t)).abs());
        }
    }
    let drift = norm_drift(&ts, "body");
    eprintln!("free fall in joint coordinates: largest error {worst:e}, quaternion norm {drift:e}");
    assert!(worst < 1e-12, "{worst:e}");
    assert!(drift <= 1e-12, "{drift:e}");
}

/// The spatial bouncing ball (impacts located as events on the body
/// motion of the joint state, the state rebuilt after each impact):
/// `joint` reproduces `augmented` at t = 3 (four impacts).
#[test]
fn spatial_bouncing_ball_in_joint_coordinates_matches_body_coordinates() {
    let path = "examples/spatial_bouncing_ball.toml";
    let body = run(path, "augmented", 3.0);
    let joint = run(path, "joint", 3.0);
    let d = final_difference(&body, &joint, &["ball"], 3.0);
    eprintln!("spatial bouncing ball, joint vs augmented at t = 3: {d:e}");
    assert!(d < 1e-8, "{d:e}");
}

/// A free-floating two-body system without gravity: a free root and an
/// arm on a revolute joint, spinning. `joint` agrees with `augmented` at
/// t = 1 to 1e-8; momentum and angular momentum about the origin are
/// conserved to 1e-10 in every row.
#[test]
fn free_floating_two_bodies_conserve_momentum() {
    let path = model_file(
        r#"
[model]
name = "free-floating base and arm"
space = "spatial"
gravity = [0.0, 0.0, 0.0]

[[bodies]]
name = "base"
mass = 3.0
inertia = [0.3, 0.4, 0.5]
position = [0.0, 0.0, 0.0]
velocity = [0.1, 0.0, 0.0]
angular_velocity = [0.3, 0.0, 2.0]

[[bodies]]
name = "arm"
mass = 1.0
inertia = [0.01, 0.08, 0.08]
position = [1.0, 0.0, 0.0]
velocity = [0.1, 2.0, -1.5]
angular_velocity = [0.3, 3.0, 2.0]

[[joints]]
name = "shoulder"
type = "revolute"
body1 = "base"
point1 = [0.5, 0.0, 0.0]
body2 = "arm"
point2 = [-0.5, 0.0, 0.0]
axis = [0.0, 1.0, 0.0]

[settings]
t_end = 1.0
output_interval = 0.01
"#,
        "free_floating",
    );
    let body = run(&path, "augmented", 1.0);
    let joint = run(&path, "joint", 1.0);
    remove_model(&path);
    let d = final_difference(&body, &joint, &["base", "arm"], 1.0);
    let parts = [
        ("base", 3.0, [0.3, 0.4, 0.5]),
        ("arm", 1.0, [0.01, 0.08, 0.08]),
    ];
    let totals = |i: usize| {
        let (mut p, mut l) = ([0.0f64; 3], [0.0f64; 3]);
        for (b, m, inertia) in parts {
            let r = vec3(&joint, b, ["x", "y", "z"], i);
            let v = vec3(&joint, b, ["vx", "vy", "vz"], i);
            let w = vec3(&joint, b, ["wx", "wy", "wz"], i);
            let spin = rotate(
                quaternion(&joint, b, i),
                std::array::from_fn(|k| inertia[k] * w[k]),
            );
            let orbit = cross(r, v.map(|x| m * x));
            for k in 0..3 {
                p[k] += m * v[k];
                l[k] += orbit[k] + spin[k];
            }
        }
        (p, l)
    };
    let (p0, l0) = totals(0);
    let (mut dp, mut dl) = (0.0f64, 0.0f64);
    for i in 0..joint.col("t").len() {
        let (p, l) = totals(i);
        for k in 0..3 {
            dp = dp.max((p[k] - p0[k]).abs());
            dl = dl.max((l[k] - l0[k]).abs());
        }
    }
    let drift = norm_drift(&joint, "base").max(norm_drift(&joint, "arm"));
    eprintln!(
        "free-floating base and arm: joint vs augmented at t = 1: {d:e}; momentum {dp:e}, \
         angular momentum {dl:e}, quaternion norm {drift:e}"
    );
    assert!(d < 1e-8, "{d:e}");
    assert!(dp < 1e-10, "momentum drift {dp:e}");
    assert!(dl < 1e-10, "angular momentum drift {dl:e}");
    assert!(drift <= 1e-12, "{drift:e}");
}

/// An implicit method on a free body under `joint` (the Jacobian by
/// differences of the right-hand side, the quaternion normalised after
/// every step): radau5 at rtol 1e-10 agrees with the dop853 run of
/// `augmented` at t = 1 to 1e-7, quaternion unit to 1e-12 in every row.
#[test]
fn tumbling_body_under_joint_with_radau5() {
    let path = "examples/tumbling_body.toml";
    let reference = run(path, "augmented", 1.0);
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
        "spatial_free_radau5",
    );
    assert_eq!(s.status, "completed");
    let d = final_difference(&reference, &ts, &["body"], 1.0);
    let drift = norm_drift(&ts, "body");
    eprintln!(
        "tumbling body, joint + radau5 vs augmented + dop853: {d:e}, quaternion norm {drift:e}"
    );
    assert!(d < 1e-7, "{d:e}");
    assert!(drift <= 1e-12, "{drift:e}");
}

/// The Jacobian of `joint` with free joints (q' = T(q) v: the blocks T(q)
/// and ∂(T(q) v)/∂q, and the acceleration Jacobians) equals central
/// differences of its right-hand side, to 1e-6 relative, on the
/// free-floating base and arm under gravity at a moved state (its
/// quaternion normalised by the step's projection).
#[test]
fn jacobian_with_free_joints_matches_differences() {
    let text = r#"
[model]
name = "free-floating base and arm under gravity"
space = "spatial"
gravity = [0.0, 0.5, -9.81]

[[bodies]]
name = "base"
mass = 3.0
inertia = [0.3, 0.4, 0.5]
velocity = [0.1, 0.0, 0.0]

[[bodies]]
name = "arm"
mass = 1.0
inertia = [0.01, 0.08, 0.08]
position = [0.0, 0.0, 1.0]
velocity = [0.1, 0.0, 0.0]

[[joints]]
name = "shoulder"
type = "revolute"
body1 = "base"
point1 = [0.0, 0.0, 0.0]
body2 = "arm"
point2 = [0.0, 0.0, -1.0]
axis = [0.0, 1.0, 0.0]
"#;
    let model = jounce_model::from_str(text, "free-floating base and arm").unwrap();
    let sys = jounce_mechanics::SpatialSystem::from_model(&model).unwrap();
    let mut f = jounce_formulation::build(
        "joint",
        &jounce_formulation::FormulationSettings::default(),
        &sys,
    )
    .unwrap();
    let (q0, v0) = sys.initial_state();
    let mut y = f.initial_state(0.0, &q0, &v0).unwrap();
    // n_q = 7 + 1, n_v = 6 + 1
    assert_eq!(y.len(), 15);
    for (k, x) in y.iter_mut().enumerate() {
        *x += 0.1 * ((k as f64) * 0.7).sin();
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
    eprintln!("joint Jacobian with free joints vs central differences: {worst:e}");
    assert!(worst < 1e-6, "{worst:e}");
}

/// The torque-free tumbling body (a free joint: 7 positions, 6 rates)
/// under `joint` + generalized_alpha (ρ∞ = 0.8) at fixed steps h = 1e-3
/// and 5e-4 to t = 2: energy and world angular momentum kept to the
/// method's accuracy, their largest relative errors falling by a factor
/// 4 ± 25 % (second order) when h halves, the final state within the
/// same order of `augmented` + dop853, and the quaternion unit to 1e-12
/// in every row.
#[test]
fn tumbling_body_under_joint_with_generalized_alpha() {
    let path = "examples/tumbling_body.toml";
    let t_end = 2.0;
    let reference = run(path, "augmented", t_end);
    let inertia = [1.0f64, 2.0, 3.0];
    let mut figures = Vec::new();
    for h in [1e-3, 5e-4] {
        let (s, ts) = run_example(
            path,
            Overrides {
                t_end: Some(t_end),
                formulation: Some("joint".into()),
                method: Some("generalized_alpha".into()),
                step: Some(h),
                ..Overrides::default()
            },
            "spatial_free_joint_generalized_alpha",
        );
        assert_eq!(s.status, "completed", "h = {h}");
        let w = |i: usize| vec3(&ts, "body", ["wx", "wy", "wz"], i);
        let momentum = |i: usize| {
            let w = w(i);
            rotate(
                quaternion(&ts, "body", i),
                std::array::from_fn(|k| inertia[k] * w[k]),
            )
        };
        let kinetic = |i: usize| 0.5 * (0..3).map(|k| inertia[k] * w(i)[k].powi(2)).sum::<f64>();
        let (h0, e0) = (momentum(0), kinetic(0));
        let h0n = h0.iter().map(|x| x * x).sum::<f64>().sqrt();
        let (mut dh, mut de) = (0.0f64, 0.0f64);
        for i in 0..ts.col("t").len() {
            let l = momentum(i);
            dh = dh.max((0..3).map(|k| (l[k] - h0[k]).powi(2)).sum::<f64>().sqrt() / h0n);
            de = de.max(((kinetic(i) - e0) / e0).abs());
        }
        let drift = norm_drift(&ts, "body");
        let d = final_difference(&reference, &ts, &["body"], t_end);
        eprintln!(
            "tumbling body, joint + generalized_alpha h = {h}: vs augmented at t = {t_end}: \
             {d:e}; energy {de:e}, angular momentum {dh:e}, quaternion norm {drift:e}"
        );
        assert!(drift <= 1e-12, "h = {h}: quaternion norm drift {drift:e}");
        figures.push((de, dh, d));
    }
    let ratio = |f: fn(&(f64, f64, f64)) -> f64| f(&figures[0]) / f(&figures[1]);
    let (re, rh, rd) = (ratio(|x| x.0), ratio(|x| x.1), ratio(|x| x.2));
    eprintln!("ratios h/(h/2): energy {re:.3}, angular momentum {rh:.3}, state {rd:.3}");
    for (what, r) in [("energy", re), ("angular momentum", rh), ("state", rd)] {
        assert!((3.0..5.0).contains(&r), "{what}: ratio {r}");
    }
    assert!(
        figures[0].0 < 2e-9 && figures[0].1 < 1e-7,
        "{:?}",
        figures[0]
    );
}
