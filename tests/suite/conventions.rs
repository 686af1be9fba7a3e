//! Issue 9, deliverable 5: the documented conventions hold (sign, body and
//! units of each multiplier row, docs/conventions.md) and suspicious input
//! is reported (angles beyond 2π, coincident spring ends, a driver that
//! disagrees with the pose, how far assembly moved each body).

use crate::support;

use jounce::run::run_model;
use jounce_model::from_str;
use support::scratch;

/// First output row of a run of `text`, as (header, values).
fn first_row(text: &str) -> (Vec<String>, Vec<f64>) {
    let model = from_str(text, "conventions.toml").expect("valid");
    let dir = scratch("conventions");
    run_model(&model, &dir, None).expect("runs");
    let csv = std::fs::read_to_string(dir.join("timeseries.csv")).unwrap();
    let mut lines = csv.lines();
    let header = lines.next().unwrap().split(',').map(String::from).collect();
    let row = lines
        .next()
        .unwrap()
        .split(',')
        .map(|x| x.parse().unwrap())
        .collect();
    (header, row)
}

fn col(h: &[String], row: &[f64], name: &str) -> f64 {
    row[h
        .iter()
        .position(|c| c == name)
        .unwrap_or_else(|| panic!("no column {name} in {h:?}"))]
}

/// A bar (2 kg) pinned at its centre of mass, loaded by a 5 N·m torque and
/// held by a driver: the joint carries the weight, the driver the torque.
/// Revolute rows: the force on body b (the bar) is +λ, so λ_y = +m g;
/// driver row: its torque on body b is −λ, so λ = +5 N·m.
#[test]
fn revolute_and_driver_multipliers_have_the_documented_sign() {
    let (h, r) = first_row(
        r#"
[model]
name = "held bar"
gravity = [0.0, -9.81]
[[bodies]]
name = "bar"
mass = 2.0
inertia = 0.5
position = [0.0, 0.0]
[[joints]]
name = "pivot"
type = "revolute"
body1 = "ground"
point1 = [0.0, 0.0]
body2 = "bar"
point2 = [0.0, 0.0]
[[drivers]]
name = "hold"
type = "joint"
joint = "pivot"
function = 0.0
[[forces]]
name = "motor"
type = "torque"
body = "bar"
torque = 5.0
[settings]
t_end = 0.01
formulation = "augmented"
"#,
    );
    assert!((col(&h, &r, "lambda[joint 'pivot' (x)]")).abs() < 1e-9);
    assert!((col(&h, &r, "lambda[joint 'pivot' (y)]") - 2.0 * 9.81).abs() < 1e-9);
    assert!((col(&h, &r, "lambda[driver 'hold']") - 5.0).abs() < 1e-9);
}

/// A slider (3 kg) on a horizontal guide: the guide's normal is
/// n = Ω·axis = (0, 1) and its force on body b is −λ n, so carrying the
/// weight takes λ = −m g.
#[test]
fn translational_normal_multiplier_has_the_documented_sign() {
    let (h, r) = first_row(
        r#"
[model]
name = "slider"
gravity = [0.0, -9.81]
[[bodies]]
name = "block"
mass = 3.0
inertia = 0.1
position = [0.0, 0.0]
[[joints]]
name = "guide"
type = "translational"
body1 = "ground"
point1 = [0.0, 0.0]
body2 = "block"
point2 = [0.0, 0.0]
axis = [1.0, 0.0]
[settings]
t_end = 0.01
formulation = "augmented"
"#,
    );
    assert!((col(&h, &r, "lambda[joint 'guide' (normal)]") + 3.0 * 9.81).abs() < 1e-9);
    assert!(col(&h, &r, "lambda[joint 'guide' (angle)]").abs() < 1e-9);
}

/// `check` prints each multiplier row's unit and meaning.
#[test]
fn check_states_the_unit_and_load_of_every_multiplier_row() {
    let m = jounce_model::load_file(&support::repo("examples/slider_crank.toml")).unwrap();
    let report = jounce::check::check_model(&m).unwrap();
    assert!(
        report.contains("lambda[joint 'crank_pivot' (x)]: N; global x component"),
        "{report}"
    );
    assert!(
        report.contains("lambda[driver 'motor']: N·m; the driver's torque on body b is −λ"),
        "{report}"
    );
    assert!(
        report.contains("lambda[joint 'guide' (angle)]: N·m"),
        "{report}"
    );
}

const PENDULUM: &str = r#"
[model]
name = "pendulum"
gravity = [0.0, -9.81]
[[bodies]]
name = "bob"
mass = 1.0
inertia = 0.0
position = [0.0, -1.0]
angle = ANGLE
points = { pivot = [0.0, 1.0] }
[[joints]]
name = "pivot"
type = "revolute"
body1 = "ground"
point1 = [0.0, 0.0]
body2 = "bob"
point2 = "pivot"
EXTRA
[settings]
t_end = 0.1
"#;

fn check_report(angle: &str, extra: &str) -> String {
    let text = PENDULUM.replace("ANGLE", angle).replace("EXTRA", extra);
    let m = from_str(&text, "pendulum.toml").expect("valid");
    jounce::check::check_model(&m).expect("checks")
}

/// `angle = 100` (degrees meant) assembled to 102 rad without a word.
#[test]
fn an_angle_beyond_two_pi_is_reported_with_the_radian_value() {
    let report = check_report("100.0", "");
    assert!(
        report.contains("warning: body 'bob': angle = 100 rad is more than 2π")
            && report.contains("angle = 1.745329"),
        "{report}"
    );
    // and how far assembly moved it to close the joint
    assert!(
        report.contains("warning: assembly moved body 'bob' by"),
        "{report}"
    );
    assert!(!check_report("0.0", "").contains("warning"));
}

/// A spring with coincident ends silently exerted no force.
#[test]
fn coincident_spring_ends_are_reported() {
    let spring = r#"
[[forces]]
name = "coil"
type = "spring_damper"
body1 = "ground"
point1 = [0.0, 0.0]
body2 = "bob"
point2 = "pivot"
stiffness = 100.0
free_length = 0.5
"#;
    let report = check_report("0.0", spring);
    assert!(
        report.contains("warning: force 'coil': its two ends coincide in the initial pose"),
        "{report}"
    );
}

/// A driver whose f(0) disagrees with the file's pose: assembly moves the
/// body, and says so.
#[test]
fn a_driver_that_disagrees_with_the_pose_is_reported_with_the_move() {
    let driver = r#"
[[drivers]]
name = "swing"
type = "joint"
joint = "pivot"
function = 0.3
"#;
    let report = check_report("0.0", driver);
    assert!(
        report.contains("warning: driver 'swing' prescribes a value at t = 0 that the initial pose misses by 3.000e-1"),
        "{report}"
    );
    assert!(
        report.contains("warning: assembly moved body 'bob' by")
            && report.contains("3.0000e-1 rad"),
        "{report}"
    );
    // the run carries the same warnings into its diagnostics
    let text = PENDULUM.replace("ANGLE", "0.0").replace("EXTRA", driver);
    let m = from_str(&text, "pendulum.toml").unwrap();
    let s = run_model(&m, &scratch("conventions-run"), None).unwrap();
    assert!(
        s.diagnostics
            .iter()
            .any(|d| d.starts_with("input warning: driver 'swing'")),
        "{:?}",
        s.diagnostics
    );
}
