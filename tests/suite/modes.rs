//! `jounce static` and `jounce modes` (issue 12, points 1 and 2): static
//! equilibria against m g / k, linearised modes against studies.md S2 and
//! the analytic double pendulum, the recommendation, and the state file a
//! run starts from.

use crate::support;

use std::path::Path;

use jounce::modes::{modes_report, LinearisationPoint};
use jounce_analysis::ModeKind;
use support::{jounce, repo, scratch};

fn load(rel: &str) -> jounce_model::Model {
    jounce_model::load_file(&repo(rel)).expect("valid model")
}

/// `x` rounded to `d` significant digits.
fn round_sig(x: f64, d: i32) -> f64 {
    if x == 0.0 {
        return 0.0;
    }
    let e = x.abs().log10().floor() as i32;
    let s = 10f64.powi(d - 1 - e);
    (x * s).round() / s
}

/// Whether `computed` equals studies.md's `table` value to 3 significant
/// digits and to the digits the table prints (`decimals` after the point).
fn matches_table(computed: f64, table: f64, decimals: i32) -> bool {
    (table == 0.0 || round_sig(computed, 3) == round_sig(table, 3))
        && (computed - table).abs() <= 0.5 * 10f64.powi(-decimals)
}

/// studies.md S2: (test, [(Hz, decimals), (ζ, decimals)] per mode, implicit?)
const S2: [(&str, [(f64, i32, f64, i32); 2], Option<bool>); 4] = [
    (
        "1a",
        [(714.0, 0, 0.112, 3), (5.02, 2, 0.058, 3)],
        Some(true),
    ),
    ("1b", [(714.0, 0, 0.0, 3), (5.02, 2, 0.0, 3)], Some(false)),
    ("1c", [(8.38, 2, 0.288, 3), (0.41, 2, 0.13, 2)], Some(false)),
    (
        "1d",
        [(1315.0, 0, 0.0026, 4), (545.0, 0, 0.0011, 4)],
        Some(false),
    ),
];

#[test]
fn s2_modes_match_the_studies_table_and_the_recommendation_follows_termeer() {
    for (test, table, implicit) in S2 {
        let model = load(&format!("examples/studies/s2_test_{test}.toml"));
        let r = modes_report(&model, LinearisationPoint::Initial).expect("modes");
        let a = &r.analysis;
        assert_eq!(a.degrees_of_freedom, 2, "{test}");
        assert_eq!(a.modes.len(), 2, "{test}: {:?}", a.modes);
        for (m, &(f, fd, z, zd)) in a.modes.iter().zip(table.iter()) {
            assert_eq!(m.kind, ModeKind::Oscillatory, "{test}");
            assert!(
                matches_table(m.natural_frequency_hz, f, fd),
                "{test}: {} Hz against {f}",
                m.natural_frequency_hz
            );
            assert!(
                matches_table(m.damping_ratio, z, zd),
                "{test}: ζ = {} against {z}",
                m.damping_ratio
            );
            eprintln!(
                "S2 {test}: {:.6} Hz (table {f}), ζ = {:.6} (table {z})",
                m.natural_frequency_hz, m.damping_ratio
            );
        }
        if let Some(imp) = implicit {
            assert_eq!(
                r.recommendation.implicit(),
                imp,
                "{test}: {:?}",
                r.recommendation
            );
        }
        eprintln!(
            "S2 {test}: {} ({}), run stiffness {:.2}",
            r.recommendation.class, r.recommendation.method, r.recommendation.run_stiffness
        );
    }
}

#[test]
fn s2_modes_are_printed_as_tables_with_the_recommendation_and_as_json() {
    let (code, out, err) = jounce(&[
        "modes",
        repo("examples/studies/s2_test_1a.toml").to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("714.0") && out.contains("0.112"), "{out}");
    assert!(out.contains("5.020") && out.contains("0.0580"), "{out}");
    assert!(out.contains("recommendation: implicit"), "{out}");
    assert!(out.contains("dopri5"), "{out}");
    let (code, out, err) = jounce(&[
        "modes",
        repo("examples/studies/s2_test_1c.toml").to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["recommendation"]["class"], "explicit");
    let f = v["analysis"]["modes"][0]["natural_frequency_hz"]
        .as_f64()
        .unwrap();
    assert!((f - 8.38).abs() < 0.005, "{f}");
}

/// Two point masses m on massless links of length L hanging from a pin:
/// each link is a body whose centre of mass is its point mass (inertia 0)
/// with the pivot at [−L, 0] in its frame.
fn double_pendulum(dir: &Path, l: f64, m: f64) -> std::path::PathBuf {
    let text = format!(
        r#"
[model]
name = "point-mass double pendulum"
gravity = [0.0, -9.81]

[[bodies]]
name = "bob1"
mass = {m}
inertia = 0.0
position = [0.0, {y1}]
angle = -1.5707963267948966
points = {{ pivot = [{ml}, 0.0] }}

[[bodies]]
name = "bob2"
mass = {m}
inertia = 0.0
position = [0.0, {y2}]
angle = -1.5707963267948966
points = {{ pivot = [{ml}, 0.0] }}

[[joints]]
name = "top"
type = "revolute"
body1 = "ground"
point1 = [0.0, 0.0]
body2 = "bob1"
point2 = "pivot"

[[joints]]
name = "elbow"
type = "revolute"
body1 = "bob1"
point1 = [0.0, 0.0]
body2 = "bob2"
point2 = "pivot"

[settings]
t_end = 2.0
"#,
        y1 = -l,
        y2 = -2.0 * l,
        ml = -l
    );
    let path = dir.join("double_pendulum_point_masses.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn double_pendulum_modes_match_the_small_oscillation_frequencies() {
    // ω² = (g/L)(2 ∓ √2) for equal point masses on equal massless links
    let (l, g) = (0.7, 9.81);
    let dir = scratch("modes-double-pendulum");
    let model = jounce_model::load_file(&double_pendulum(&dir, l, 1.3)).unwrap();
    for point in [LinearisationPoint::Initial, LinearisationPoint::Static] {
        let r = modes_report(&model, point).expect("modes");
        let a = &r.analysis;
        assert_eq!(a.degrees_of_freedom, 2, "{:?}", a.independent_coordinates);
        assert_eq!(a.modes.len(), 2, "{:?}", a.modes);
        let exact = [
            ((g / l) * (2.0 + 2f64.sqrt())).sqrt(),
            ((g / l) * (2.0 - 2f64.sqrt())).sqrt(),
        ];
        for (m, w) in a.modes.iter().zip(exact) {
            let rel = (m.magnitude() - w).abs() / w;
            eprintln!(
                "double pendulum ({point:?}): ω = {:.10} rad/s, exact {w:.10}, relative error {rel:.2e}, ζ = {:.2e}",
                m.magnitude(),
                m.damping_ratio
            );
            assert!(rel < 1e-6, "ω = {} against {w}", m.magnitude());
            assert!(m.damping_ratio.abs() < 1e-9, "{m:?}");
        }
        // the fast mode moves the bobs in opposite directions
        let fast = &a.modes[0];
        let x1 = fast.shape.iter().find(|e| e.coordinate == "bob1.x");
        let x2 = fast.shape.iter().find(|e| e.coordinate == "bob2.x");
        if let (Some(x1), Some(x2)) = (x1, x2) {
            assert!(x1.amplitude * x2.amplitude < 0.0, "{:?}", fast.shape);
        }
    }
}

#[test]
fn quarter_car_static_deflections_are_m_g_over_k() {
    // examples/quarter_car.toml: wheel 40 kg on the tyre (2e5 N/m), body
    // 300 kg on the suspension (2e4 N/m), released at the free lengths
    let g = 9.81;
    let wheel = -(340.0 * g) / 2e5;
    let body = wheel - (300.0 * g) / 2e4;
    let model = load("examples/quarter_car.toml");
    let s = jounce::static_cmd::static_state(&model).expect("equilibrium");
    let d = |name: &str| s.deflection.iter().find(|d| d.name == name).unwrap();
    eprintln!(
        "quarter car: wheel dy = {:.12} (m g / k: {wheel:.12}), body dy = {:.12} ({body:.12})",
        d("wheel").dy,
        d("body").dy
    );
    assert!((d("wheel").dy - wheel).abs() < 1e-9, "{:?}", d("wheel"));
    assert!((d("body").dy - body).abs() < 1e-9, "{:?}", d("body"));
    for name in ["wheel", "body"] {
        assert!(d(name).dx.abs() < 1e-9 && d(name).dtheta.abs() < 1e-9);
    }
    assert_eq!(s.stability, "stable");
}

#[test]
fn static_writes_a_state_file_a_run_starts_from_at_rest() {
    let dir = scratch("static-state");
    let model = repo("examples/quarter_car.toml");
    let (code, out, err) = jounce(&[
        "static",
        model.to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("static equilibrium") && out.contains("wheel_guide"),
        "{out}"
    );
    let state = dir.join("static_state.json");
    assert!(state.exists());
    for (tag, args) in [
        (
            "file",
            vec![
                "--initial-state",
                state.to_str().unwrap().to_string().leak(),
            ],
        ),
        ("static", vec!["--from-static"]),
    ] {
        let run_dir = dir.join(tag);
        let mut a = vec![
            "run",
            model.to_str().unwrap(),
            "-o",
            run_dir.to_str().unwrap(),
            "-q",
            "--t-end",
            "0.5",
        ];
        a.extend(args);
        let (code, _, err) = jounce(&a);
        assert_eq!(code, 0, "{tag}: {err}");
        let ts = support::Series::read(&run_dir.join("timeseries.csv"));
        let y = ts.col("body.y");
        let drift = y.iter().map(|v| (v - 0.636173).abs()).fold(0.0, f64::max);
        eprintln!("run from the static state ({tag}): max |body.y − 0.636173| = {drift:.2e}");
        assert!(drift < 1e-6, "{tag}: the body moved by {drift}");
    }
}

#[test]
fn static_names_a_body_without_support_and_bad_state_files_are_refused() {
    let dir = scratch("static-free-fall");
    let path = dir.join("free_fall.toml");
    std::fs::write(
        &path,
        "[model]\nname = \"free fall\"\n[[bodies]]\nname = \"ball\"\nmass = 1\ninertia = 0.1\n\
         [settings]\nt_end = 1.0\n",
    )
    .unwrap();
    let (code, _, err) = jounce(&[
        "static",
        path.to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert_ne!(code, 0);
    assert!(
        err.contains("no static equilibrium: body 'ball' has no support in y"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    // a state file of another model
    let bad = dir.join("bad_state.json");
    std::fs::write(
        &bad,
        r#"{"bodies": [{"name": "nobody", "x": 0, "y": 0, "theta": 0}]}"#,
    )
    .unwrap();
    let (code, _, err) = jounce(&[
        "run",
        repo("examples/quarter_car.toml").to_str().unwrap(),
        "--initial-state",
        bad.to_str().unwrap(),
        "-o",
        dir.join("run").to_str().unwrap(),
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("body 'nobody' is not in the model"), "{err}");
    std::fs::write(&bad, "not json").unwrap();
    let (code, _, err) = jounce(&[
        "run",
        repo("examples/quarter_car.toml").to_str().unwrap(),
        "--initial-state",
        bad.to_str().unwrap(),
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("not a jounce state file"), "{err}");
}

#[test]
fn modes_at_a_time_of_a_run_and_of_a_rigid_body() {
    // a free body in zero gravity: three rigid-body modes, no vibration
    let dir = scratch("modes-rigid");
    let path = dir.join("free.toml");
    std::fs::write(
        &path,
        "[model]\nname = \"free\"\ngravity = [0.0, 0.0]\n[[bodies]]\nname = \"puck\"\nmass = 1\n\
         inertia = 0.1\n[settings]\nt_end = 1.0\n",
    )
    .unwrap();
    let model = jounce_model::load_file(&path).unwrap();
    let r = modes_report(&model, LinearisationPoint::Initial).expect("modes");
    assert_eq!(r.analysis.modes.len(), 3, "{:?}", r.analysis.modes);
    assert!(r
        .analysis
        .modes
        .iter()
        .all(|m| m.kind == ModeKind::RigidBody));
    assert!(!r.recommendation.implicit());
    // the quarter car at t = 0.2 s of its run: still 2 modes
    let model = load("examples/quarter_car.toml");
    let r = modes_report(&model, LinearisationPoint::At(0.2)).expect("modes");
    assert_eq!(r.analysis.t, 0.2);
    assert_eq!(r.analysis.modes.len(), 2);
    let (code, out, err) = jounce(&[
        "modes",
        repo("examples/quarter_car.toml").to_str().unwrap(),
        "--at=-1",
    ]);
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("must be finite and not negative"), "{err}");
}

/// A fully driven model (the slider-crank, 0 DOF) has no modes to
/// linearise: `modes` says so instead of refusing with a message about
/// formulation 'state_space', an option `modes` does not have.
#[test]
fn a_fully_driven_model_has_no_modes_and_modes_says_so() {
    let model = support::repo("examples/slider_crank.toml");
    let (code, out, err) = jounce(&["modes", model.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("0 DOF") && out.contains("no degrees of freedom: no modes"),
        "{out}"
    );
    assert!(
        !err.contains("state_space") && !out.contains("state_space"),
        "{out}\n{err}"
    );
    let (code, json, err) = jounce(&["modes", model.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["analysis"]["degrees_of_freedom"], 0, "{json}");
}

/// A penalty contact touching at gap 0 at t = 0 exerts no force there, so
/// linearised at the initial state its stiffness was not in the modes: on
/// the block on the incline (k = 1e6 N/m, m = 1 kg) `modes` found no
/// vibration mode and recommended dopri5, explicit (issue 31; `--at 0.1`
/// saw the 159 Hz contact mode). Now a short run finds the contact closed
/// and the modes are linearised there, and the report says so.
#[test]
fn modes_sees_a_penalty_contact_that_closes_in_a_short_run() {
    let m = load("examples/block_on_incline.toml");
    let r = modes_report(&m, LinearisationPoint::Initial).unwrap();
    let note = r.contacts.clone().expect("a note on the contacts");
    assert!(
        note.contains("contact 'incline' closes first") && note.contains("--at"),
        "{note}"
    );
    assert!(
        r.linearised_at
            .contains("where contact 'incline' is closed"),
        "{}",
        r.linearised_at
    );
    let fastest = r
        .analysis
        .vibration_modes()
        .map(|m| m.magnitude())
        .fold(0.0, f64::max);
    // √(k/m) = 1000 1/s
    assert!(fastest > 500.0, "fastest |λ| = {fastest}");
    assert_ne!(r.recommendation.method, "dopri5", "{:?}", r.recommendation);
    assert!(jounce::modes::modes_text(&r).contains("contacts: "));
}
