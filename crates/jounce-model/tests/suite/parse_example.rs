//! A complete slider-crank model parses into the expected validated model.

use jounce_model::{
    from_str, BodyRef, DriverKind, ForceFrame, ForceKind, FormulationKind, JointKind, OneSided,
    TimeFunction,
};

const TEXT: &str = include_str!("../data/slider_crank.toml");

#[test]
fn slider_crank_example_parses_completely() {
    let m = from_str(TEXT, "data/slider_crank.toml").expect("valid model");
    assert_eq!(m.name, "slider_crank");
    assert_eq!(m.source, "data/slider_crank.toml");
    assert_eq!(m.gravity, [0.0, -9.81]);

    assert_eq!(m.bodies.len(), 3);
    let crank = &m.bodies[0];
    assert_eq!(crank.name, "crank");
    assert_eq!((crank.mass, crank.inertia), (1.0, 0.001));
    assert_eq!(crank.position, [0.05, 0.0]);
    assert_eq!(
        crank.points,
        vec![
            ("O".to_string(), [-0.05, 0.0]),
            ("A".to_string(), [0.05, 0.0])
        ]
    );
    assert_eq!(m.bodies[2].velocity, [0.0, 0.0]);

    assert_eq!(m.joints.len(), 4);
    match &m.joints[0].kind {
        JointKind::Revolute { a, b } => {
            assert_eq!(a.body, BodyRef::Ground);
            assert_eq!(a.point, [0.0, 0.0]);
            assert_eq!(b.body, BodyRef::Body(0));
            assert_eq!(b.point, [-0.05, 0.0]);
        }
        k => panic!("crank_pivot parsed as {k:?}"),
    }
    match &m.joints[3].kind {
        JointKind::Translational { axis, b, .. } => {
            assert_eq!(*axis, [1.0, 0.0], "axis [2, 0] is normalised");
            assert_eq!(b.body, BodyRef::Body(2));
        }
        k => panic!("guide parsed as {k:?}"),
    }

    assert_eq!(m.drivers.len(), 1);
    assert_eq!(m.drivers[0].kind, DriverKind::Joint { joint: 0 });
    let (f, df, ddf) = m.drivers[0].function.eval(0.25);
    assert!((f - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
    assert!((df - 2.0 * std::f64::consts::PI).abs() < 1e-12);
    assert_eq!(ddf, 0.0);

    assert_eq!(m.forces.len(), 3);
    match &m.forces[0].kind {
        ForceKind::PointForce { at, fx, fy, frame } => {
            assert_eq!(at.body, BodyRef::Body(2));
            assert_eq!(*frame, ForceFrame::Global);
            assert_eq!(*fy, TimeFunction::Constant(0.0));
            // Named function gas_load = -100 (1 + sin 2πt): at t = 0.25, -200.
            assert!((fx.eval(0.25).0 + 200.0).abs() < 1e-9);
        }
        k => panic!("gas parsed as {k:?}"),
    }
    match &m.forces[1].kind {
        ForceKind::SpringDamper {
            stiffness,
            damping,
            free_length,
            actuator,
            one_sided,
            ..
        } => {
            assert_eq!((*stiffness, *damping, *free_length), (1000.0, 5.0, 0.3));
            assert_eq!(*actuator, None);
            assert_eq!(*one_sided, Some(OneSided::Compression));
        }
        k => panic!("return_spring parsed as {k:?}"),
    }
    match &m.forces[2].kind {
        ForceKind::RotationalSpring {
            joint, zero_angle, ..
        } => {
            assert_eq!(*joint, 1);
            assert_eq!(*zero_angle, 0.0);
        }
        k => panic!("pivot_friction parsed as {k:?}"),
    }

    let s = &m.settings;
    assert_eq!((s.t_end, s.output_interval), (2.0, 0.005));
    assert_eq!(s.assembly_tol, 1e-10, "default");
    assert_eq!(s.formulation.kind, FormulationKind::Augmented);
    assert_eq!(
        (s.formulation.baumgarte_alpha, s.formulation.baumgarte_beta),
        (10.0, 10.0)
    );
    assert_eq!(s.formulation.penalty_factor, 1e7, "default");
    assert_eq!(s.integrator.method, "hht");
    assert_eq!(s.integrator.controller, "pi");
    assert_eq!(s.integrator.error_per, "step");
    assert_eq!(s.integrator.params.get("alpha"), Some(&-0.1));
    assert_eq!(s.integrator.h_max, f64::INFINITY);
}

#[test]
fn empty_file_is_a_model_with_defaults() {
    let m = from_str("", "dir/empty.toml").unwrap();
    assert_eq!(m.name, "empty", "name defaults to the file stem");
    assert!(m.bodies.is_empty());
    assert_eq!(m.settings, jounce_model::Settings::default());
}

#[test]
fn all_function_kinds_parse() {
    let text = r#"
[functions]
c = 2.0
c2 = { type = "constant", value = 3 }
p = { type = "polynomial", coefficients = [1, 2, 3] }
h = { type = "harmonic", amplitude = 1, frequency = 2, phase = 0.5, offset = 1 }
s = { type = "step", time = 1, before = -1, after = 1 }
r = { type = "ramp", t0 = 0, t1 = 2, from = 1, to = 3 }
a = { type = "arctan", amplitude = 1, rate = 100, time = 0.5 }
y = { type = "cycloidal", time = 0.1, duration = 0.5, magnitude = 1e7 }
t = { type = "table", times = [0, 1, 2], values = [0, 1, 0], interpolation = "cubic" }
sum = { type = "sum", terms = ["c", "p", { type = "constant", value = 1 }] }
prod = { type = "product", factors = ["c", "h"] }
sh = { type = "shift", function = "s", delay = 0.5, scale = 2 }
alias = "sh"

[[bodies]]
name = "b"
mass = 1
inertia = 1

[[forces]]
name = "t"
type = "torque"
body = "b"
torque = "alias"
"#;
    let m = from_str(text, "f.toml").unwrap();
    match &m.forces[0].kind {
        ForceKind::Torque { body, torque } => {
            assert_eq!(*body, 0);
            assert_eq!(torque.eval(1.49).0, -2.0);
            assert_eq!(torque.eval(1.5).0, 2.0);
            assert_eq!(torque.breakpoints_sorted(), vec![1.5]);
        }
        k => panic!("{k:?}"),
    }
}

#[test]
fn error_accessors_report_line_and_element() {
    let text = "[[bodies]]\nname = \"crank\"\nmass = -1\ninertia = 0.1\n";
    let e = from_str(text, "examples/x.toml").unwrap_err();
    assert_eq!(
        e.to_string(),
        "examples/x.toml:3: body 'crank': mass must be positive, got -1"
    );
    assert_eq!(e.line(), Some(3));
    assert_eq!(e.element(), Some("body 'crank'"));
    assert_eq!(e.origin(), "examples/x.toml");
}

#[test]
fn model_breakpoints_collect_all_functions_within_the_run() {
    let text = r#"
[[bodies]]
name = "b"
mass = 1
inertia = 1

[[forces]]
name = "kick"
type = "torque"
body = "b"
torque = { type = "step", time = 0.5, after = 1 }

[[forces]]
name = "push"
type = "point_force"
body = "b"
point = [0, 0]
fy = { type = "ramp", t0 = 0.25, t1 = 3.0, to = 1 }

[settings]
t_end = 2.0
"#;
    let m = from_str(text, "b.toml").unwrap();
    assert_eq!(m.breakpoints(), vec![0.25, 0.5]);
}

#[test]
fn linear_solver_setting_is_parsed_and_validated() {
    use jounce_model::LinearSolverKind;
    assert_eq!(
        from_str("", "a.toml")
            .unwrap()
            .settings
            .formulation
            .linear_solver,
        LinearSolverKind::Auto
    );
    for (name, kind) in [
        ("auto", LinearSolverKind::Auto),
        ("dense", LinearSolverKind::Dense),
        ("sparse", LinearSolverKind::Sparse),
    ] {
        let m = from_str(
            &format!("[settings]\nlinear_solver = \"{name}\"\n"),
            "a.toml",
        )
        .unwrap();
        assert_eq!(m.settings.formulation.linear_solver, kind);
    }
    let e = from_str("[settings]\nlinear_solver = \"lu\"\n", "a.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("lu") && e.contains("auto") && e.contains("sparse"),
        "{e}"
    );
}
