//! URDF robot descriptions (issue 33, deliverable 4): the shipped
//! six-axis arm runs and keeps its invariants; a URDF with turned joint
//! frames and offset inertial frames moves as the spatial TOML model of the
//! same mechanism written by hand; a TOML file that includes a URDF runs
//! as the URDF; every error names the file and the element, never panics.

use crate::support;

use std::path::Path;

use jounce::run::{apply_overrides, run_model, Overrides};
use jounce_io::RunSummary;
use support::{repo, scratch, Series};

fn tight(t_end: f64) -> Overrides {
    Overrides {
        method: Some("dop853".into()),
        rtol: Some(1e-12),
        atol: Some(1e-14),
        t_end: Some(t_end),
        ..Overrides::default()
    }
}

fn run_file(path: &Path, overrides: Overrides, tag: &str) -> (RunSummary, Series) {
    let mut model = jounce_model::load_file(path).unwrap_or_else(|e| panic!("{e}"));
    apply_overrides(&mut model, &overrides).unwrap();
    let out = scratch(tag);
    let summary = run_model(&model, &out, None).unwrap_or_else(|e| panic!("{e}"));
    let series = Series::read(&out.join("timeseries.csv"));
    let _ = std::fs::remove_dir_all(&out);
    (summary, series)
}

/// The largest |‖p‖ − 1| of a body's quaternion over the run.
fn norm_drift(ts: &Series, body: &str) -> f64 {
    (0..ts.col("t").len())
        .map(|i| {
            let n = ["qw", "qx", "qy", "qz"]
                .iter()
                .map(|c| ts.col(&format!("{body}.{c}"))[i].powi(2))
                .sum::<f64>()
                .sqrt();
            (n - 1.0).abs()
        })
        .fold(0.0, f64::max)
}

const ARM_BODIES: [&str; 7] = [
    "base_link",
    "link1",
    "link2",
    "link3",
    "link4",
    "link5",
    "link6",
];

#[test]
fn the_six_axis_arm_loads_with_its_flange_merged_and_six_degrees_of_freedom() {
    let model = jounce_model::load_file(&repo("examples/six_axis_arm.urdf")).unwrap();
    assert_eq!(model.name, "six_axis_arm");
    let s = model.spatial.as_ref().unwrap();
    let names: Vec<&str> = s.bodies.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ARM_BODIES);
    // tool0 (massless, fixed) is a point of link6: 0.03 along link6's z
    // (= world x) from its frame origin, 0.015 from its centre of mass
    let link6 = &s.bodies[6];
    let tool0 = link6.points.iter().find(|(n, _)| n == "tool0").unwrap().1;
    for (x, y) in tool0.iter().zip([0.0, 0.0, 0.015]) {
        assert!((x - y).abs() < 1e-15, "{tool0:?}");
    }
    assert!(!s.joints.iter().any(|j| j.name == "flange"));
    let r = jounce::check::check_report(&model).unwrap();
    assert_eq!((r.degrees_of_freedom, r.coordinates), (6, 49));
    assert!(r.redundant.is_empty(), "{}", r.text);
}

#[test]
fn the_six_axis_arm_falls_for_one_second_keeping_energy_and_unit_quaternions() {
    let overrides = Overrides {
        rtol: Some(1e-10),
        atol: Some(1e-12),
        ..tight(1.0)
    };
    let (s, ts) = run_file(&repo("examples/six_axis_arm.urdf"), overrides, "arm");
    assert_eq!(s.status, "completed");
    assert_eq!(s.degrees_of_freedom, 6);
    let e = ts.col("total_energy");
    let e0 = e[0];
    let worst_e = e.iter().map(|x| ((x - e0) / e0).abs()).fold(0.0, f64::max);
    let drift = ARM_BODIES
        .iter()
        .map(|b| norm_drift(&ts, b))
        .fold(0.0, f64::max);
    // the arm moves: the forearm's centre of mass swings down and back
    let z3 = ts.col("link3.z");
    let drop = z3[0] - z3.iter().cloned().fold(f64::MAX, f64::min);
    println!(
        "six-axis arm, 1 s, dop853 rtol 1e-10: {} steps, energy error {worst_e:.2e} of \
         {e0:.4} J, quaternion norm drift {drift:.2e}, link3 dropped {drop:.3} m, position \
         violation {:.2e}",
        s.work.steps_accepted, s.accuracy.max_position_violation
    );
    assert!(drop > 0.1, "the arm fell by only {drop} m");
    assert!(worst_e < 1e-8, "energy error {worst_e:e}");
    assert!(drift <= 1e-12, "quaternion norm drift {drift:e}");
}

/// A double pendulum whose URDF turns both joint frames (roll and yaw at
/// once, then a yaw), offsets the first link's centre of mass out of the
/// link's axis and turns its inertial frame by a roll. Worked out by hand in
/// the world frame (R = Rz(yaw) Ry(pitch) Rx(roll)):
/// - hinge1 at (0, 0, 1), rpy (π/2, 0, π/2): joint x, y, z = world y, z, x;
///   the axis z = world x.
/// - arm1's centre of mass 0.5 along joint x and 0.05 along joint y:
///   (0, 0.5, 1.05); its inertial frame rolled by θ = 0.6 about the link's
///   x: inertial x = world y, y = cos θ z + sin θ x, z = cos θ x − sin θ z,
///   so diag(a, b, c) is, in world axes, Jxx = b sin²θ + c cos²θ, Jyy = a,
///   Jzz = b cos²θ + c sin²θ, Jxz = (b − c) sin θ cos θ ([`arm1_tensor`]).
/// - hinge2 1 along arm1's x: (0, 1, 1), yawed by −π/2: x, y, z = world
///   −z, y, x; the axis z = world x.
/// - arm2's centre of mass 0.5 along its y: (0, 1.5, 1); diag(0.01, 0.06,
///   0.07) along world (−z, y, x) is diag(0.07, 0.06, 0.01) in world axes.
///
/// Another order of the rpy angles, their signs, or an inertial rpy left
/// out would put the axis, the centre of mass or the moment about the axis
/// elsewhere.
const PENDULUM_URDF: &str = r#"<?xml version="1.0"?>
<robot name="turned_pendulum">
  <link name="world"/>
  <joint name="hinge1" type="continuous">
    <parent link="world"/>
    <child link="arm1"/>
    <origin xyz="0 0 1" rpy="1.5707963267948966 0 1.5707963267948966"/>
    <axis xyz="0 0 1"/>
  </joint>
  <link name="arm1">
    <inertial>
      <origin xyz="0.5 0.05 0" rpy="0.6 0 0"/>
      <mass value="2.0"/>
      <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.08" iyz="0" izz="0.05"/>
    </inertial>
  </link>
  <joint name="hinge2" type="revolute">
    <parent link="arm1"/>
    <child link="arm2"/>
    <origin xyz="1 0 0" rpy="0 0 -1.5707963267948966"/>
    <axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/>
  </joint>
  <link name="arm2">
    <inertial>
      <origin xyz="0 0.5 0"/>
      <mass value="1.5"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.06" iyz="0" izz="0.07"/>
    </inertial>
  </link>
</robot>
"#;

const PENDULUM_TOML: &str = r#"
[model]
name = "turned_pendulum"
space = "spatial"

[[bodies]]
name = "arm1"
mass = 2.0
inertia = ARM1_INERTIA
products = ARM1_PRODUCTS
position = [0.0, 0.5, 1.05]

[[bodies]]
name = "arm2"
mass = 1.5
inertia = [0.07, 0.06, 0.01]
position = [0.0, 1.5, 1.0]

[[joints]]
name = "hinge1"
type = "revolute"
body1 = "ground"
point1 = [0.0, 0.0, 1.0]
body2 = "arm1"
point2 = [0.0, -0.5, -0.05]
axis = [1.0, 0.0, 0.0]

[[joints]]
name = "hinge2"
type = "revolute"
body1 = "arm1"
point1 = [0.0, 0.5, -0.05]
body2 = "arm2"
point2 = [0.0, -0.5, 0.0]
axis = [1.0, 0.0, 0.0]
"#;

/// arm1's tensor in world axes: ([Jxx, Jyy, Jzz], [Jxy, Jxz, Jyz]).
fn arm1_tensor() -> ([f64; 3], [f64; 3]) {
    let (a, b, c, th) = (0.02f64, 0.08f64, 0.05f64, 0.6f64);
    let (s, co) = th.sin_cos();
    (
        [b * s * s + c * co * co, a, b * co * co + c * s * s],
        [0.0, (b - c) * s * co, 0.0],
    )
}

/// The hand-written spatial TOML of [`PENDULUM_URDF`].
fn pendulum_toml() -> String {
    let (d, p) = arm1_tensor();
    PENDULUM_TOML
        .replace(
            "ARM1_INERTIA",
            &format!("[{:?}, {:?}, {:?}]", d[0], d[1], d[2]),
        )
        .replace(
            "ARM1_PRODUCTS",
            &format!("[{:?}, {:?}, {:?}]", p[0], p[1], p[2]),
        )
}

#[test]
fn a_urdf_with_turned_frames_moves_as_the_spatial_toml_model_written_by_hand() {
    let dir = scratch("urdf-pendulum");
    let (urdf, toml) = (dir.join("pendulum.urdf"), dir.join("pendulum.toml"));
    std::fs::write(&urdf, PENDULUM_URDF).unwrap();
    std::fs::write(&toml, pendulum_toml()).unwrap();
    let (su, tu) = run_file(&urdf, tight(1.0), "pu");
    let (st, tt) = run_file(&toml, tight(1.0), "pt");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        (su.status.as_str(), st.status.as_str()),
        ("completed", "completed")
    );
    assert_eq!(su.degrees_of_freedom, 2);
    assert_eq!(tu.col("t"), tt.col("t"));
    let mut worst = 0.0f64;
    for body in ["arm1", "arm2"] {
        for c in ["x", "y", "z", "vx", "vy", "vz"] {
            let col = format!("{body}.{c}");
            for (a, b) in tu.col(&col).iter().zip(tt.col(&col)) {
                worst = worst.max((a - b).abs());
            }
        }
    }
    // the motion is large and stays in the y-z plane (axes along x)
    let swing = tu.col("arm2.z")[0] - tu.col("arm2.z").iter().cloned().fold(f64::MAX, f64::min);
    let off_plane = tu.col("arm2.x").iter().fold(0.0f64, |m, x| m.max(x.abs()));
    println!(
        "URDF vs spatial TOML pendulum, 1 s: max difference {worst:.2e} (m, m/s), arm2 fell \
         {swing:.3} m, max |x| {off_plane:.1e} m"
    );
    assert!(swing > 0.5, "{swing}");
    assert!(off_plane < 1e-12, "{off_plane}");
    assert!(worst < 1e-10, "URDF and TOML differ by {worst:e}");
}

#[test]
fn a_toml_file_that_includes_a_urdf_runs_it_with_its_own_settings() {
    let dir = scratch("urdf-include");
    std::fs::create_dir_all(dir.join("robots")).unwrap();
    std::fs::write(dir.join("robots/pendulum.urdf"), PENDULUM_URDF).unwrap();
    let toml = dir.join("pendulum_run.toml");
    std::fs::write(
        &toml,
        "[model]\nurdf = \"robots/pendulum.urdf\"\n\n[settings]\nt_end = 0.2\n\n\
         [settings.integrator]\nmethod = \"dop853\"\nrtol = 1e-12\natol = 1e-14\n",
    )
    .unwrap();
    let model = jounce_model::load_file(&toml).unwrap();
    assert_eq!(model.name, "turned_pendulum");
    assert_eq!(model.settings.t_end, 0.2);
    assert_eq!(model.source, toml.display().to_string());
    let (_, included) = run_file(&toml, Overrides::default(), "inc");
    let (_, direct) = run_file(&dir.join("robots/pendulum.urdf"), tight(0.2), "dir");
    for c in ["t", "arm2.x", "arm2.y", "arm2.z", "arm1.qw", "arm2.wx"] {
        assert_eq!(included.col(c), direct.col(c), "{c}");
    }
    // gravity from the TOML file
    std::fs::write(
        &toml,
        "[model]\nurdf = \"robots/pendulum.urdf\"\ngravity = [0.0, 0.0, -1.62]\n",
    )
    .unwrap();
    let moon = jounce_model::load_file(&toml).unwrap();
    assert_eq!(moon.spatial.unwrap().gravity, [0.0, 0.0, -1.62]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The message of loading `text` as `name` in a fresh directory.
fn load_error(name: &str, text: &str) -> String {
    let dir = scratch("urdf-error");
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    let err = jounce_model::load_file(&path).unwrap_err().to_string();
    let _ = std::fs::remove_dir_all(&dir);
    err
}

#[test]
fn urdf_errors_name_the_file_and_the_element() {
    // a missing file
    let err = jounce_model::load_file(Path::new("no/such/arm.urdf"))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("no/such/arm.urdf: cannot read model file"),
        "{err}"
    );
    // not XML, not a robot
    let err = load_error("bad.urdf", "<robot name=\"r\"><link name=\"a\">");
    assert!(
        err.contains("bad.urdf:1: <robot>: not a valid URDF robot description")
            && !err.contains("TOML"),
        "{err}"
    );
    // an unknown parent link, with the line of the joint
    let bad = PENDULUM_URDF.replace("<parent link=\"arm1\"/>", "<parent link=\"arm_1\"/>");
    let err = load_error("p.urdf", &bad);
    assert!(
        err.contains("p.urdf:17: joint 'hinge2': unknown parent link 'arm_1'")
            && err.contains("did you mean 'arm1'"),
        "{err}"
    );
    // floating and planar joints
    for t in ["floating", "planar"] {
        let bad = PENDULUM_URDF.replace("type=\"revolute\"", &format!("type=\"{t}\""));
        let err = load_error("p.urdf", &bad);
        assert!(
            err.contains("p.urdf:17: joint 'hinge2': type '") && err.contains(t),
            "{err}"
        );
    }
    // a massless link on a moving joint with nothing fixed to it
    let bad = PENDULUM_URDF.replace(
        "<link name=\"arm2\">\n    <inertial>\n      <origin xyz=\"0 0.5 0\"/>\n      <mass value=\"1.5\"/>\n      <inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.06\" iyz=\"0\" izz=\"0.07\"/>\n    </inertial>\n  </link>",
        "<link name=\"arm2\"/>",
    );
    assert_ne!(bad, PENDULUM_URDF);
    let err = load_error("p.urdf", &bad);
    assert!(
        err.contains("p.urdf:24: link 'arm2': has no mass")
            && err.contains("revolute joint 'hinge2'")
            && err.contains("singular"),
        "{err}"
    );
    // an inertia that is not positive definite, and a negative mass
    let bad = PENDULUM_URDF.replace("iyy=\"0.08\"", "iyy=\"-0.08\"");
    let err = load_error("p.urdf", &bad);
    assert!(
        err.contains("p.urdf:10: link 'arm1': <inertia> must be positive definite"),
        "{err}"
    );
    let bad = PENDULUM_URDF.replace("<mass value=\"2.0\"/>", "<mass value=\"-2.0\"/>");
    let err = load_error("p.urdf", &bad);
    assert!(
        err.contains("link 'arm1': <inertial> mass must be positive"),
        "{err}"
    );
    // a loop: a link that is the child of two joints
    let bad = PENDULUM_URDF.replace(
        "</robot>",
        "  <joint name=\"loop\" type=\"fixed\"><parent link=\"world\"/><child link=\"arm2\"/></joint>\n</robot>",
    );
    let err = load_error("p.urdf", &bad);
    assert!(
        err.contains("joint 'loop'") && err.contains("already the child of joint 'hinge2'"),
        "{err}"
    );
    // from a TOML file: the URDF it names is missing; a key beside it
    let err = load_error("run.toml", "[model]\nurdf = \"missing.urdf\"\n");
    assert!(
        err.contains("run.toml:2: [model]: urdf cannot read URDF file")
            && err.contains("missing.urdf"),
        "{err}"
    );
    let err = load_error(
        "run.toml",
        "[model]\nurdf = \"missing.urdf\"\n\n[[bodies]]\nname = \"b\"\n",
    );
    assert!(err.contains("unknown key 'bodies'"), "{err}");
}

#[test]
fn the_command_runs_and_checks_a_urdf_and_reports_its_errors() {
    let out = scratch("urdf-cli");
    let arm = repo("examples/six_axis_arm.urdf");
    let (code, stdout, stderr) = support::jounce(&[
        "run",
        arm.to_str().unwrap(),
        "--method",
        "dop853",
        "--t-end",
        "0.05",
        "-q",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(out.join("timeseries.csv").exists());
    let (code, stdout, _) = support::jounce(&["check", arm.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(stdout.contains("degrees of freedom: 6"), "{stdout}");
    let bad = out.join("floating.urdf");
    std::fs::write(
        &bad,
        PENDULUM_URDF.replace("type=\"continuous\"", "type=\"floating\""),
    )
    .unwrap();
    let (code, _, stderr) = support::jounce(&["run", bad.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("floating.urdf:4: joint 'hinge1': type 'floating' is not supported")
            && !stderr.contains("panicked"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

/// `[[drivers]]` in a TOML file that includes a URDF name the URDF's
/// joints; an unknown joint, a fixed joint, a joint driven twice and a
/// driver named like a joint are refused naming the file, the line, the
/// driver and the problem.
#[test]
fn a_toml_file_that_includes_a_urdf_drives_its_joints_by_name() {
    let arm = support::repo("examples/six_axis_arm.urdf");
    let head = format!(
        "[model]\nurdf = \"{}\"\n\n[functions]\nswing = {{ type = \"polynomial\", coefficients = [0.0, 0.0, 1.0] }}\n",
        arm.display()
    );
    let driver = |name: &str, joint: &str| {
        format!("\n[[drivers]]\nname = \"{name}\"\ntype = \"joint\"\njoint = \"{joint}\"\nfunction = \"swing\"\n")
    };
    let dir = scratch("urdf-drivers");
    let path = dir.join("driven.toml");
    std::fs::write(
        &path,
        format!("{head}{}{}", driver("d2", "joint2"), driver("d6", "joint6")),
    )
    .unwrap();
    let model = jounce_model::load_file(&path).unwrap_or_else(|e| panic!("{e}"));
    let m = model.spatial.as_ref().unwrap();
    let driven: Vec<(&str, &str)> = m
        .drivers
        .iter()
        .map(|d| (d.name.as_str(), m.joints[d.joint].name.as_str()))
        .collect();
    assert_eq!(driven, [("d2", "joint2"), ("d6", "joint6")]);
    assert_eq!(m.drivers[0].function.eval(2.0).0, 4.0);
    let _ = std::fs::remove_dir_all(&dir);

    // an unknown joint: the file, the line of `joint`, the driver, the name
    let err = load_error("run.toml", &format!("{head}{}", driver("d", "joint7")));
    assert!(
        err.contains("run.toml:10:") && err.contains("driver 'd'") && err.contains("joint7"),
        "{err}"
    );
    // a fixed joint (merged away in the spatial model, still a URDF joint)
    let err = load_error("run.toml", &format!("{head}{}", driver("d", "flange")));
    assert!(
        err.contains("run.toml:10:")
            && err.contains("driver 'd'")
            && err.contains("joint 'flange' is a fixed joint in the URDF and cannot be driven"),
        "{err}"
    );
    // a joint driven twice
    let err = load_error(
        "run.toml",
        &format!("{head}{}{}", driver("a", "joint3"), driver("b", "joint3")),
    );
    assert!(
        err.contains("run.toml:16:")
            && err.contains("driver 'b'")
            && err.contains("joint 'joint3' is already driven by driver 'a'"),
        "{err}"
    );
    // a driver named like a joint, an unknown function
    let err = load_error("run.toml", &format!("{head}{}", driver("joint1", "joint1")));
    assert!(
        err.contains("'joint1' is the name of a URDF joint"),
        "{err}"
    );
    let err = load_error(
        "run.toml",
        &format!("{head}{}", driver("d", "joint1")).replace("\"swing\"\n", "\"swung\"\n"),
    );
    assert!(err.contains("driver 'd'") && err.contains("swung"), "{err}");
    // other spatial tables are still refused beside `urdf`
    let err = load_error("run.toml", &format!("{head}\n[[joints]]\nname = \"j\"\n"));
    assert!(err.contains("unknown key 'joints'"), "{err}");
}
