//! `jounce static` on spatial models (issue 33 deliverable 3): the
//! equilibrium on unit quaternions, its state file and a run started from
//! it.

use crate::support;

use jounce::run::{run_model, Overrides};
use jounce::static_cmd::{apply_state, static_state, static_text};
use support::{scratch, Series};

/// A spatial double pendulum on spherical joints (unit links of 1 kg,
/// gravity −y) started along the tilted unit vector (0.6, −0.48, 0.64).
const TILTED: &str = r#"
[model]
name = "tilted spatial double pendulum"
space = "spatial"
gravity = [0.0, -9.81, 0.0]

[[bodies]]
name = "link1"
mass = 1.0
inertia = [0.001, 0.08333333333333333, 0.08333333333333333]
position = [0.3, -0.24, 0.32]
orientation_axis_angle = [0.0, -0.8, -0.6, 0.9272952180016122]
points = { O = [-0.5, 0.0, 0.0], A = [0.5, 0.0, 0.0] }

[[bodies]]
name = "link2"
mass = 1.0
inertia = [0.001, 0.08333333333333333, 0.08333333333333333]
position = [0.9, -0.72, 0.96]
orientation_axis_angle = [0.0, -0.8, -0.6, 0.9272952180016122]
points = { A = [-0.5, 0.0, 0.0], B = [0.5, 0.0, 0.0] }

[[joints]]
name = "shoulder"
type = "spherical"
body1 = "ground"
point1 = [0.0, 0.0, 0.0]
body2 = "link1"
point2 = "O"

[[joints]]
name = "elbow"
type = "spherical"
body1 = "link1"
point1 = "A"
body2 = "link2"
point2 = "A"

[settings]
t_end = 1.0
output_interval = 0.1
"#;

#[test]
fn a_tilted_spatial_chain_hangs_straight_down_and_a_run_from_there_stays_at_rest() {
    let mut model = jounce_model::from_str(TILTED, "tilted.toml").unwrap();
    let state = static_state(&model).unwrap();
    assert!(state.bodies.is_empty());
    let want = [("link1", -0.5), ("link2", -1.5)];
    for (b, (name, y)) in state.spatial_bodies.iter().zip(want) {
        assert_eq!(b.name, name);
        let err = (b.position[0].abs())
            .max((b.position[1] - y).abs())
            .max(b.position[2].abs());
        assert!(err < 1e-9, "{name}: {:?}", b.position);
        let norm: f64 = b.orientation.iter().map(|x| x * x).sum();
        assert!((norm.sqrt() - 1.0).abs() < 1e-14);
        // the link's axis (body x) turned from u onto −y
        let a = jounce_model::rotation_matrix(b.orientation);
        let axis = [a[0][0], a[1][0], a[2][0]];
        assert!(
            (axis[1] + 1.0).abs() < 1e-9,
            "{name}: body x along {axis:?}"
        );
        // at least the angle between u and −y, cos = 0.48
        assert!(b.rotation >= 0.48f64.acos() - 1e-9, "{}", b.rotation);
    }
    // the shoulder carries both weights, the elbow one (y rows)
    let lambda = |label: &str| {
        state
            .reactions
            .iter()
            .find(|r| r.constraint == label)
            .unwrap_or_else(|| panic!("no reaction '{label}'"))
            .lambda
    };
    assert!((lambda("joint 'shoulder' (y)") - 2.0 * 9.81).abs() < 1e-8);
    assert!((lambda("joint 'elbow' (y)") - 9.81).abs() < 1e-8);
    let text = static_text(&state);
    assert!(
        text.contains("body (spatial)") && text.contains("link2"),
        "{text}"
    );
    assert!(!text.contains("theta [rad]"), "{text}");

    // started from the equilibrium the chain stays there
    apply_state(&mut model, &state, "the static state").unwrap();
    let out = scratch("spatial-static-run");
    jounce::run::apply_overrides(&mut model, &Overrides::default()).unwrap();
    let summary = run_model(&model, &out, None).unwrap();
    assert_eq!(summary.status, "completed");
    let ts = Series::read(&out.join("timeseries.csv"));
    let mut worst = 0.0f64;
    for c in [
        "link1.vx", "link1.vy", "link1.vz", "link2.vx", "link2.vy", "link2.vz",
    ] {
        worst = ts.col(c).iter().fold(worst, |a, v| a.max(v.abs()));
    }
    assert!(
        worst < 1e-9,
        "the chain moved from its equilibrium: |v| up to {worst:e}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_planar_state_does_not_start_a_spatial_model() {
    let planar = jounce_model::load_file(&support::repo("examples/double_pendulum.toml")).unwrap();
    let state = static_state(&planar).unwrap();
    let mut spatial = jounce_model::from_str(TILTED, "tilted.toml").unwrap();
    let err = apply_state(&mut spatial, &state, "planar.json")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("planar.json: a planar state cannot start the spatial model tilted.toml"),
        "{err}"
    );
}
