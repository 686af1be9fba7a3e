//! Every derivative the mechanics layer hands out, checked against central
//! finite differences of the values, on a model with every element kind,
//! at a configuration that does not satisfy the constraints (the
//! derivatives hold everywhere).

use crate::common;

use common::*;
use jounce_mechanics::{MechanicalSystem, MechanicsError, PlanarSystem, SystemQueries};
use jounce_model::{DriverKind, ForceFrame, ForceKind, JointKind, Model, OneSided, TimeFunction};
use nalgebra::{DMatrix, DVector};

fn k(x: f64) -> TimeFunction {
    TimeFunction::Constant(x)
}

/// Four bodies, one of each joint, driver and force element.
fn kitchen_sink() -> Model {
    let bodies = vec![
        body("b0", 1.0, 0.1, 0.2, 0.1, 0.3),
        body("b1", 2.0, 0.2, 0.8, -0.2, -0.5),
        body("b2", 1.5, 0.15, 1.3, 0.4, 1.0),
        body("b3", 0.7, 0.05, -0.5, 0.7, 2.0),
    ];
    let joints = vec![
        revolute("j_rev", ground([0.1, 0.05]), on(0, [-0.3, 0.02])),
        translational("j_slide", on(0, [0.2, 0.1]), on(1, [-0.1, 0.3]), [0.6, 0.8]),
        jounce_model::Joint {
            name: "j_weld".into(),
            kind: JointKind::Rigid {
                body_a: jounce_model::BodyRef::Body(1),
                body_b: jounce_model::BodyRef::Body(2),
            },
            friction: None,
        },
        jounce_model::Joint {
            name: "j_dist".into(),
            kind: JointKind::Distance {
                a: on(2, [0.1, -0.2]),
                b: on(3, [0.3, 0.1]),
                length: 0.9,
            },
            friction: None,
        },
        revolute("j_rev2", on(2, [0.2, 0.2]), on(3, [-0.2, 0.05])),
        translational(
            "j_slide_ground",
            ground([0.3, 0.0]),
            on(3, [0.0, 0.0]),
            [1.0, 0.0],
        ),
    ];
    let drivers = vec![
        joint_driver("d_rev", 0, 0.3),
        joint_driver("d_slide", 1, 0.1),
        jounce_model::Driver {
            name: "d_dist".into(),
            kind: DriverKind::Distance {
                a: on(0, [0.0, 0.0]),
                b: on(3, [0.1, 0.1]),
            },
            function: k(1.2),
        },
    ];
    let forces = vec![
        force(
            "f_global",
            ForceKind::PointForce {
                at: on(1, [0.3, -0.1]),
                fx: k(2.0),
                fy: k(-1.0),
                frame: ForceFrame::Global,
            },
        ),
        force(
            "f_body",
            ForceKind::PointForce {
                at: on(2, [-0.2, 0.4]),
                fx: k(1.5),
                fy: k(0.7),
                frame: ForceFrame::Body,
            },
        ),
        force(
            "tau",
            ForceKind::Torque {
                body: 3,
                torque: k(0.8),
            },
        ),
        force(
            "spring",
            ForceKind::SpringDamper {
                a: on(0, [0.1, 0.1]),
                b: on(2, [-0.1, 0.2]),
                stiffness: 30.0,
                damping: 2.0,
                free_length: 0.5,
                actuator: Some(k(3.0)),
                one_sided: None,
            },
        ),
        force(
            "bumper",
            ForceKind::SpringDamper {
                a: on(1, [0.0, 0.0]),
                b: on(3, [0.0, 0.0]),
                stiffness: 100.0,
                damping: 5.0,
                free_length: 5.0,
                actuator: None,
                one_sided: Some(OneSided::Compression),
            },
        ),
        force(
            "rope",
            ForceKind::SpringDamper {
                a: ground([0.0, 1.0]),
                b: on(3, [0.2, 0.0]),
                stiffness: 40.0,
                damping: 1.0,
                free_length: 0.1,
                actuator: None,
                one_sided: Some(OneSided::Tension),
            },
        ),
        force(
            "elbow",
            ForceKind::RotationalSpring {
                joint: 4,
                stiffness: 7.0,
                damping: 0.4,
                zero_angle: 0.2,
                actuator: Some(k(0.5)),
                one_sided: None,
            },
        ),
        force(
            "stop",
            ForceKind::RotationalSpring {
                joint: 0,
                stiffness: 20.0,
                damping: 0.3,
                zero_angle: 1.0,
                actuator: None,
                one_sided: Some(OneSided::Compression),
            },
        ),
        force(
            "flex",
            ForceKind::Beam(jounce_model::Beam {
                a: on(0, [0.1, -0.1]),
                b: on(3, [0.2, 0.1]),
                youngs_modulus: 1e4,
                area: 1e-3,
                second_moment: 1e-5,
                length: Some(0.8),
                axis: Some([0.6, 0.8]),
                zero_angle: Some(0.3),
                damping: 0.05,
                axial_damping: Some(0.02),
            }),
        ),
    ];
    model("kitchen-sink", bodies, joints, drivers, forces)
}

/// A configuration off the constraint manifold, velocities and multipliers.
fn state(sys: &PlanarSystem) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut seed = 7;
    let q: Vec<f64> = sys
        .initial_q()
        .iter()
        .map(|x| x + 0.1 * noise(&mut seed))
        .collect();
    let v: Vec<f64> = (0..sys.nq()).map(|_| noise(&mut seed)).collect();
    let lambda: Vec<f64> = (0..sys.nc()).map(|_| 3.0 * noise(&mut seed)).collect();
    (q, v, lambda)
}

#[test]
fn constraint_jacobian_matches_finite_differences() {
    let sys = system(&kitchen_sink());
    let (q, _, _) = state(&sys);
    let (n, m) = (sys.nq(), sys.nc());
    assert_eq!((n, m), (12, 2 + 2 + 3 + 1 + 2 + 2 + 3));
    let mut jac = DMatrix::zeros(m, n);
    sys.constraint_jacobian(0.2, &q, &mut jac);
    let fd = fd_jacobian(|x, out| sys.constraints(0.2, x, out), &q, m);
    assert_matrix_close(&sys, &jac, &fd, 1e-7, "Φ_q");
}

#[test]
fn constraint_force_jacobian_matches_finite_differences() {
    let sys = system(&kitchen_sink());
    let (q, _, lambda) = state(&sys);
    let (n, m) = (sys.nq(), sys.nc());
    let mut h = DMatrix::zeros(n, n);
    sys.constraint_force_jacobian(0.2, &q, &lambda, &mut h);
    let l = DVector::from_column_slice(&lambda);
    let fd = fd_jacobian(
        |x, out| {
            let mut jac = DMatrix::zeros(m, n);
            sys.constraint_jacobian(0.2, x, &mut jac);
            out.copy_from_slice((jac.transpose() * &l).as_slice());
        },
        &q,
        n,
    );
    assert_matrix_close(&sys, &h, &fd, 1e-7, "∂(Φ_qᵀλ)/∂q");
    assert!(
        (&h - h.transpose()).amax() < 1e-12,
        "Hessian of λᵀΦ must be symmetric"
    );
}

#[test]
fn force_jacobians_match_finite_differences() {
    let sys = system(&kitchen_sink());
    let (q, v, _) = state(&sys);
    let n = sys.nq();
    let (mut dq, mut dv) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
    sys.force_jacobians(0.2, &q, &v, &mut dq, &mut dv);
    let fdq = fd_jacobian(|x, out| sys.generalized_forces(0.2, x, &v, out), &q, n);
    let fdv = fd_jacobian(|x, out| sys.generalized_forces(0.2, &q, x, out), &v, n);
    assert_matrix_close(&sys, &dq, &fdq, 1e-7, "∂Q/∂q");
    assert_matrix_close(&sys, &dv, &fdv, 1e-7, "∂Q/∂v");
    assert!(
        dq.amax() > 1.0 && dv.amax() > 0.1,
        "the test model must exercise stiffness and damping"
    );
}

#[test]
fn gamma_matches_second_derivative_along_a_trajectory() {
    // along q(s) = q + v s + a s²/2:  d²Φ/ds² = Φ_q a − γ
    let sys = system(&kitchen_sink());
    let (q, v, _) = state(&sys);
    let (n, m) = (sys.nq(), sys.nc());
    let mut seed = 99;
    let a: Vec<f64> = (0..n).map(|_| 2.0 * noise(&mut seed)).collect();
    let t = 0.2;
    let path = |s: f64| -> Vec<f64> {
        (0..n)
            .map(|i| q[i] + v[i] * s + 0.5 * a[i] * s * s)
            .collect()
    };
    let h = 1e-4;
    let (mut p0, mut pp, mut pm) = (vec![0.0; m], vec![0.0; m], vec![0.0; m]);
    sys.constraints(t, &path(0.0), &mut p0);
    sys.constraints(t + h, &path(h), &mut pp);
    sys.constraints(t - h, &path(-h), &mut pm);
    let mut jac = DMatrix::zeros(m, n);
    sys.constraint_jacobian(t, &q, &mut jac);
    let mut gamma = vec![0.0; m];
    sys.gamma(t, &q, &v, &mut gamma);
    let ja = &jac * DVector::from_column_slice(&a);
    for i in 0..m {
        let d2 = (pp[i] - 2.0 * p0[i] + pm[i]) / (h * h);
        let expect = ja[i] - gamma[i];
        assert!(
            (d2 - expect).abs() < 1e-5 * (1.0 + d2.abs()),
            "{}: d²Φ/ds² = {d2}, Φ_q a − γ = {expect}",
            sys.constraint_label(i)
        );
    }
    assert!(gamma.iter().any(|g| g.abs() > 0.1), "γ must be exercised");
}

#[test]
fn constraint_time_derivative_matches_finite_differences() {
    // constant drivers here: Φ_t = 0; moving drivers are covered by the unit
    // test in planar.rs, which seeds non-constant f(t)
    let sys = system(&kitchen_sink());
    let (q, _, _) = state(&sys);
    let m = sys.nc();
    let mut phi_t = vec![0.0; m];
    sys.constraint_time_derivative(0.2, &q, &mut phi_t);
    let fd = fd_jacobian(|t, out| sys.constraints(t[0], &q, out), &[0.2], m);
    for i in 0..m {
        assert!(
            (phi_t[i] - fd[(i, 0)]).abs() < 1e-8,
            "{}",
            sys.constraint_label(i)
        );
    }
}

/// Gravity, springs and one-sided springs without damping or actuators.
fn conservative() -> Model {
    let mut m = kitchen_sink();
    m.forces.retain(|f| {
        !matches!(
            f.kind,
            ForceKind::PointForce { .. } | ForceKind::Torque { .. }
        )
    });
    for f in &mut m.forces {
        match &mut f.kind {
            ForceKind::SpringDamper {
                damping, actuator, ..
            }
            | ForceKind::RotationalSpring {
                damping, actuator, ..
            } => {
                *damping = 0.0;
                *actuator = None;
            }
            ForceKind::Beam(b) => b.damping = 0.0,
            _ => {}
        }
    }
    m
}

#[test]
fn conservative_forces_are_minus_the_gradient_of_the_potential() {
    let sys = system(&conservative());
    let (q, _, _) = state(&sys);
    let n = sys.nq();
    let zero = vec![0.0; n];
    let mut f = vec![0.0; n];
    sys.generalized_forces(0.0, &q, &zero, &mut f);
    let grad = fd_jacobian(|x, out| out[0] = sys.potential_energy(0.0, x), &q, 1);
    for i in 0..n {
        assert!(
            (f[i] + grad[(0, i)]).abs() < 1e-6 * (1.0 + f[i].abs()),
            "{}: Q = {}, −∂V/∂q = {}",
            sys.coordinate_label(i),
            f[i],
            -grad[(0, i)]
        );
    }
}

/// One-sided springs are switching functions after the contacts: their
/// deflection changes sign where they engage, and the output pair is the
/// deflection and the spring's force.
#[test]
fn one_sided_springs_are_switching_functions() {
    let sys = system(&kitchen_sink());
    let (q, v, _) = state(&sys);
    assert_eq!(sys.n_switching_functions(), 3);
    let labels: Vec<String> = (0..3).map(|i| sys.switching_label(i)).collect();
    assert_eq!(labels, ["bumper", "rope", "stop"]);
    assert_eq!(sys.switching_quantities(0), ["deflection", "tension"]);
    assert_eq!(sys.switching_quantities(2), ["deflection", "torque"]);
    let mut s = [0.0; 3];
    sys.switching_functions(0.0, &q, &v, &mut s);
    // the stop on j_rev (ground–b0), zero angle 1: φ − φ0 = θ_b0 − 1
    assert!((s[2] - (q[2] - 1.0)).abs() < 1e-15, "{s:?}");
    for (i, si) in s.iter().enumerate() {
        let (value, force) = sys.contact_state(0.0, &q, &v, i);
        assert_eq!(value, *si);
        // no force on the inactive side (compression-only: ≥ 0 deflection)
        let inactive = match i {
            1 => *si <= 0.0,
            _ => *si >= 0.0,
        };
        assert!(!inactive || force == 0.0, "{}: {force} at {si}", labels[i]);
    }
}

#[test]
fn one_sided_springs_act_only_on_their_side() {
    // a mass on a compression-only spring from ground, free length 1
    let spring = |one_sided| {
        model(
            "bumper",
            vec![body("m", 2.0, 0.1, 0.0, 0.0, 0.0)],
            vec![],
            vec![],
            vec![force(
                "s",
                ForceKind::SpringDamper {
                    a: ground([0.0, -1.0]),
                    b: on(0, [0.0, 0.0]),
                    stiffness: 100.0,
                    damping: 3.0,
                    free_length: 1.0,
                    actuator: None,
                    one_sided,
                },
            )],
        )
    };
    let v = [0.0, -0.5, 0.0];
    let mut f = [0.0; 3];
    for (one_sided, y, active) in [
        (Some(OneSided::Compression), -0.1, true),
        (Some(OneSided::Compression), 0.1, false),
        (Some(OneSided::Tension), -0.1, false),
        (Some(OneSided::Tension), 0.1, true),
        (None, 0.1, true),
    ] {
        let sys = system(&spring(one_sided));
        sys.generalized_forces(0.0, &[0.0, y, 0.0], &v, &mut f);
        let gravity = -2.0 * 9.81;
        let expect = if active { -100.0 * y - 3.0 * v[1] } else { 0.0 };
        assert!(
            (f[1] - gravity - expect).abs() < 1e-9,
            "{one_sided:?} at y = {y}: {}",
            f[1] - gravity
        );
        let pot = sys.potential_energy(0.0, &[0.0, y, 0.0]) + gravity * y;
        let expect_pot = if active { 50.0 * y * y } else { 0.0 };
        assert!((pot - expect_pot).abs() < 1e-12, "{one_sided:?}: V = {pot}");
    }
    // coincident points: no direction, no force, finite Jacobians
    let sys = system(&spring(None));
    sys.generalized_forces(0.0, &[0.0, -1.0, 0.0], &v, &mut f);
    assert!((f[1] + 2.0 * 9.81).abs() < 1e-12 && f[0] == 0.0);
    let (mut dq, mut dv) = (DMatrix::zeros(3, 3), DMatrix::zeros(3, 3));
    sys.force_jacobians(0.0, &[0.0, -1.0, 0.0], &v, &mut dq, &mut dv);
    assert!(dq.iter().chain(dv.iter()).all(|x| x.is_finite()));
}

#[test]
fn mass_matrix_energy_and_labels() {
    let sys = system(&kitchen_sink());
    let n = sys.nq();
    let mut mm = DMatrix::zeros(n, n);
    sys.mass_matrix(&sys.initial_q(), &mut mm);
    assert!(sys.mass_matrix_is_constant());
    assert_eq!(
        (mm[(3, 3)], mm[(4, 4)], mm[(5, 5)], mm[(3, 4)]),
        (2.0, 2.0, 0.2, 0.0)
    );
    let (_, v, _) = state(&sys);
    let t_direct = 0.5
        * (DVector::from_column_slice(&v).transpose() * &mm * DVector::from_column_slice(&v))[0];
    assert!((sys.kinetic_energy(&sys.initial_q(), &v) - t_direct).abs() < 1e-12);
    assert_eq!(sys.body_count(), 4);
    assert_eq!(sys.coordinate_label(5), "b1.theta");
    assert_eq!(sys.coordinate_label(9), "b3.x");
    assert_eq!(sys.constraint_label(0), "joint 'j_rev' (x)");
    assert_eq!(sys.constraint_label(3), "joint 'j_slide' (angle)");
    assert_eq!(sys.constraint_label(6), "joint 'j_weld' (theta)");
    assert_eq!(sys.constraint_label(7), "joint 'j_dist' (length)");
    assert_eq!(sys.constraint_label(12), "driver 'd_rev'");
    assert_eq!(sys.constraint_label(14), "driver 'd_dist'");
    assert!(
        sys.breakpoints().is_empty(),
        "constant functions have no breakpoints"
    );
}

#[test]
fn bad_models_are_rejected_naming_the_element() {
    let mut m = kitchen_sink();
    m.drivers.push(joint_driver("d_bad", 3, 1.0));
    let err = PlanarSystem::from_model(&m).unwrap_err();
    assert!(
        matches!(err, MechanicsError::WrongJointKind { .. }),
        "{err}"
    );
    assert!(
        err.to_string().contains("driver 'd_bad'") && err.to_string().contains("j_dist"),
        "{err}"
    );

    let mut m = kitchen_sink();
    m.joints
        .push(revolute("j_far", on(9, [0.0, 0.0]), ground([0.0, 0.0])));
    let err = PlanarSystem::from_model(&m).unwrap_err();
    assert!(err.to_string().contains("joint 'j_far'"), "{err}");

    let mut m = kitchen_sink();
    m.joints
        .push(revolute("j_self", on(1, [0.0, 0.0]), on(1, [0.1, 0.0])));
    let err = PlanarSystem::from_model(&m).unwrap_err();
    assert!(
        matches!(err, MechanicsError::SelfConnection { .. }) && err.to_string().contains("j_self"),
        "{err}"
    );

    let mut m = kitchen_sink();
    if let ForceKind::RotationalSpring { joint, .. } = &mut m.forces[6].kind {
        *joint = 1;
    }
    let err = PlanarSystem::from_model(&m).unwrap_err();
    assert!(
        err.to_string().contains("force 'elbow'") && err.to_string().contains("j_slide"),
        "{err}"
    );

    let mut m = kitchen_sink();
    m.bodies[2].mass = 0.0;
    let err = PlanarSystem::from_model(&m).unwrap_err();
    assert!(err.to_string().contains("body 'b2'"), "{err}");

    let mut m = kitchen_sink();
    if let JointKind::Translational { axis, .. } = &mut m.joints[1].kind {
        *axis = [0.0, 0.0];
    }
    let err = PlanarSystem::from_model(&m).unwrap_err();
    assert!(err.to_string().contains("joint 'j_slide'"), "{err}");
}

#[test]
fn point_forces_do_the_virtual_work_of_the_force_at_the_point() {
    // Q = (∂P/∂q)ᵀ F for a force F at point P(q) = r + A(θ) s; in the body
    // frame F = A(θ) F_body
    let (s, fb, theta) = ([0.3, -0.2], [2.0, -1.5], 0.7);
    for frame in [ForceFrame::Global, ForceFrame::Body] {
        let mut m = model(
            "pushed",
            vec![body("b", 1.0, 0.1, 0.4, -0.1, theta)],
            vec![],
            vec![],
            vec![
                force(
                    "push",
                    ForceKind::PointForce {
                        at: on(0, s),
                        fx: k(fb[0]),
                        fy: k(fb[1]),
                        frame,
                    },
                ),
                force(
                    "twist",
                    ForceKind::Torque {
                        body: 0,
                        torque: k(0.25),
                    },
                ),
            ],
        );
        m.gravity = [0.0, 0.0];
        let sys = system(&m);
        let q = sys.initial_q();
        let mut qf = [0.0; 3];
        sys.generalized_forces(0.0, &q, &[0.0; 3], &mut qf);
        let f = match frame {
            ForceFrame::Global => fb,
            ForceFrame::Body => [
                theta.cos() * fb[0] - theta.sin() * fb[1],
                theta.sin() * fb[0] + theta.cos() * fb[1],
            ],
        };
        let jp = fd_jacobian(
            |x, out| {
                out[0] = x[0] + x[2].cos() * s[0] - x[2].sin() * s[1];
                out[1] = x[1] + x[2].sin() * s[0] + x[2].cos() * s[1];
            },
            &q,
            2,
        );
        for i in 0..3 {
            let work = jp[(0, i)] * f[0] + jp[(1, i)] * f[1] + if i == 2 { 0.25 } else { 0.0 };
            assert!(
                (qf[i] - work).abs() < 1e-8,
                "{frame:?}, {}: Q = {}, virtual work {work}",
                sys.coordinate_label(i),
                qf[i]
            );
        }
    }
}

#[test]
fn actuators_pull_the_points_together() {
    // spring and damper off: a positive actuator force is a tension
    let m = model(
        "actuated",
        vec![
            body("a", 1.0, 0.1, 0.0, 0.0, 0.0),
            body("b", 1.0, 0.1, 2.0, 0.0, 0.0),
        ],
        vec![revolute("hinge", on(0, [1.0, 0.0]), on(1, [-1.0, 0.0]))],
        vec![],
        vec![
            force(
                "cylinder",
                ForceKind::SpringDamper {
                    a: on(0, [0.0, 0.0]),
                    b: on(1, [0.0, 0.0]),
                    stiffness: 0.0,
                    damping: 0.0,
                    free_length: 1.0,
                    actuator: Some(k(5.0)),
                    one_sided: Some(OneSided::Tension),
                },
            ),
            force(
                "motor",
                ForceKind::RotationalSpring {
                    joint: 0,
                    stiffness: 0.0,
                    damping: 0.0,
                    zero_angle: 0.0,
                    actuator: Some(k(1.5)),
                    one_sided: None,
                },
            ),
        ],
    );
    let mut m = m;
    m.gravity = [0.0, 0.0];
    let sys = system(&m);
    let mut f = [0.0; 6];
    sys.generalized_forces(0.0, &sys.initial_q(), &[0.0; 6], &mut f);
    assert_eq!(f, [5.0, 0.0, -1.5, -5.0, 0.0, 1.5]);
}

/// The kitchen sink with moving (harmonic) drivers, so that Φ_t, Φ_tt and
/// the time terms of γ are exercised.
fn moving_sink() -> Model {
    let mut m = kitchen_sink();
    for (i, d) in m.drivers.iter_mut().enumerate() {
        let offset = match d.function {
            TimeFunction::Constant(c) => c,
            _ => 0.0,
        };
        d.function = TimeFunction::Harmonic {
            amplitude: 0.2 + 0.1 * i as f64,
            frequency: 2.0 + i as f64,
            phase: 0.3,
            offset,
        };
    }
    m
}

#[test]
fn gamma_jacobians_match_finite_differences() {
    for model in [kitchen_sink(), moving_sink()] {
        let sys = system(&model);
        let (q, v, _) = state(&sys);
        let (n, m) = (sys.nq(), sys.nc());
        let t = 0.37;
        let (mut dq, mut dv) = (DMatrix::zeros(m, n), DMatrix::zeros(m, n));
        sys.gamma_jacobians(t, &q, &v, &mut dq, &mut dv);
        let fdq = fd_jacobian(|x, out| sys.gamma(t, x, &v, out), &q, m);
        let fdv = fd_jacobian(|x, out| sys.gamma(t, &q, x, out), &v, m);
        assert_matrix_close(&sys, &dq, &fdq, 1e-7, "∂γ/∂q");
        assert_matrix_close(&sys, &dv, &fdv, 1e-7, "∂γ/∂v");
        assert!(
            dq.amax() > 0.1 && dv.amax() > 0.1,
            "γ must depend on q and v"
        );
        // γ is quadratic in v for these elements: ∂γ/∂v = −2 ∂(Φ_q v)/∂q − 2 Φ_qt
        let (mut hv, mut pqt) = (DMatrix::zeros(m, n), DMatrix::zeros(m, n));
        sys.constraint_hessian_product(t, &q, &v, &mut hv);
        sys.constraint_time_jacobian(t, &q, &mut pqt);
        assert_matrix_close(&sys, &dv, &(-2.0 * (hv + pqt)), 1e-12, "∂γ/∂v identity");
    }
}

#[test]
fn constraint_hessian_product_matches_finite_differences() {
    let sys = system(&kitchen_sink());
    let (q, _, _) = state(&sys);
    let (n, m) = (sys.nq(), sys.nc());
    let mut seed = 5;
    let a: Vec<f64> = (0..n).map(|_| 2.0 * noise(&mut seed)).collect();
    let mut h = DMatrix::zeros(m, n);
    sys.constraint_hessian_product(0.2, &q, &a, &mut h);
    let av = DVector::from_column_slice(&a);
    let fd = fd_jacobian(
        |x, out| {
            let mut jac = DMatrix::zeros(m, n);
            sys.constraint_jacobian(0.2, x, &mut jac);
            out.copy_from_slice((jac * &av).as_slice());
        },
        &q,
        m,
    );
    assert_matrix_close(&sys, &h, &fd, 1e-7, "∂(Φ_q a)/∂q");
    assert!(h.amax() > 0.1, "the Hessian must be exercised");
    // consistency with the constraint-force Jacobian: λᵀ ∂(Φ_q a)/∂q = aᵀ ∂(Φ_qᵀλ)/∂q
    let (_, _, lambda) = state(&sys);
    let mut hl = DMatrix::zeros(n, n);
    sys.constraint_force_jacobian(0.2, &q, &lambda, &mut hl);
    let l = DVector::from_column_slice(&lambda);
    let left = h.transpose() * &l;
    let right = hl.transpose() * &av;
    assert!((left - right).amax() < 1e-10);
}

#[test]
fn constraint_time_jacobian_matches_finite_differences() {
    let sys = system(&moving_sink());
    let (q, _, _) = state(&sys);
    let (n, m) = (sys.nq(), sys.nc());
    let t = 0.37;
    let mut out = DMatrix::from_element(m, n, f64::NAN);
    sys.constraint_time_jacobian(t, &q, &mut out);
    let fd = fd_jacobian(|x, o| sys.constraint_time_derivative(t, x, o), &q, m);
    assert_matrix_close(&sys, &out, &fd, 1e-7, "Φ_qt");
    // and Φ_t itself moves with the drivers here
    let mut pt = vec![0.0; m];
    sys.constraint_time_derivative(t, &q, &mut pt);
    assert!(pt.iter().any(|x| x.abs() > 0.1));
}

/// The planar system seen only through the required trait methods, so
/// that the finite-difference defaults of the second derivatives run.
struct RequiredOnly<'a>(&'a PlanarSystem);

impl MechanicalSystem for RequiredOnly<'_> {
    jounce_mechanics::test_system_core! {
        forward(0): nq, nc, mass_matrix, generalized_forces, force_jacobians, constraints,
            constraint_jacobian, constraint_time_derivative, gamma, constraint_force_jacobian,
            kinetic_energy, potential_energy, constraint_label, coordinate_label;
        core: nv, position_derivative, integrate_position, position_increment,
            kinematic_map_derivative, manifold_constraints, data, evaluate, constraint_row_meaning, breakpoints;
        structure: jounce_mechanics::Structure::GENERAL;
        absent: second_derivatives, sparsity, applied_loads, switching, friction, joint_coordinates;
    }
}

#[test]
fn finite_difference_defaults_agree_with_automatic_differentiation() {
    let planar = system(&moving_sink());
    let fdsys = RequiredOnly(&planar);
    assert!(planar.has_exact_second_derivatives() && !fdsys.has_exact_second_derivatives());
    let (q, v, _) = state(&planar);
    let (n, m) = (planar.nq(), planar.nc());
    let t = 0.37;
    let mut seed = 11;
    let a: Vec<f64> = (0..n).map(|_| noise(&mut seed)).collect();
    let pair = || (DMatrix::zeros(m, n), DMatrix::zeros(m, n));
    let ((mut e1, mut e2), (mut f1, mut f2)) = (pair(), pair());
    planar.gamma_jacobians(t, &q, &v, &mut e1, &mut e2);
    fdsys.gamma_jacobians(t, &q, &v, &mut f1, &mut f2);
    assert_matrix_close(&planar, &f1, &e1, 1e-8, "default ∂γ/∂q");
    assert_matrix_close(&planar, &f2, &e2, 1e-8, "default ∂γ/∂v");
    planar.constraint_hessian_product(t, &q, &a, &mut e1);
    fdsys.constraint_hessian_product(t, &q, &a, &mut f1);
    assert_matrix_close(&planar, &f1, &e1, 1e-8, "default ∂(Φ_q a)/∂q");
    planar.constraint_time_jacobian(t, &q, &mut e1);
    fdsys.constraint_time_jacobian(t, &q, &mut f1);
    assert_matrix_close(&planar, &f1, &e1, 1e-8, "default Φ_qt");
    // a constant mass matrix has no derivative, by either route
    let mut dm = DMatrix::from_element(n, n, 1.0);
    fdsys.mass_matrix_derivative(&q, &a, &mut dm);
    assert_eq!(dm.amax(), 0.0);
}

/// `evaluate` (one pass over the elements into a `SystemData`) gives what
/// the single-quantity methods give, for the planar override and for the
/// trait's default, on every element kind with moving drivers; subsets
/// fill exactly what they ask for and the constant M is written once.
#[test]
fn evaluate_matches_the_single_quantity_methods() {
    use jounce_mechanics::{Quantities, SystemData};
    for (sys, moving) in [
        (system(&kitchen_sink()), false),
        (system(&moving_sink()), true),
    ] {
        let (q, v, _) = state(&sys);
        let (n, m, t) = (sys.nq(), sys.nc(), 0.41);
        assert_eq!(sys.nv(), n);
        let mut mass = DMatrix::zeros(n, n);
        let mut jac = DMatrix::zeros(m, n);
        let (mut f, mut phi, mut pt, mut g) =
            (vec![0.0; n], vec![0.0; m], vec![0.0; m], vec![0.0; m]);
        sys.mass_matrix(&q, &mut mass);
        sys.generalized_forces(t, &q, &v, &mut f);
        sys.constraints(t, &q, &mut phi);
        sys.constraint_jacobian(t, &q, &mut jac);
        sys.constraint_time_derivative(t, &q, &mut pt);
        sys.gamma(t, &q, &v, &mut g);
        let dphi: Vec<f64> = (0..m)
            .map(|i| pt[i] + (0..n).map(|j| jac[(i, j)] * v[j]).sum::<f64>())
            .collect();
        let close = |a: &[f64], b: &[f64], what: &str| {
            let scale = b.iter().fold(1.0_f64, |s, x| s.max(x.abs()));
            let err = a
                .iter()
                .zip(b)
                .fold(0.0_f64, |s, (x, y)| s.max((x - y).abs()));
            assert!(err <= 1e-13 * scale, "{what}: differs by {err:e}");
        };
        let default = RequiredOnly(&sys);
        for (label, planar) in [("planar", true), ("trait default", false)] {
            let mut d: SystemData = sys.data();
            assert_eq!((d.nq, d.nv, d.nc), (n, n, m));
            let eval = |d: &mut SystemData, what| {
                if planar {
                    sys.evaluate(d, t, &q, &v, what)
                } else {
                    default.evaluate(d, t, &q, &v, what)
                }
            };
            eval(&mut d, Quantities::ALL);
            assert_eq!((d.evaluated, d.t), (Quantities::ALL, t));
            close(d.mass_dense().as_slice(), mass.as_slice(), label);
            close(&d.forces, &f, label);
            close(&d.constraints, &phi, label);
            close(
                d.constraint_jacobian.to_dense().as_slice(),
                jac.as_slice(),
                label,
            );
            assert!(
                d.constraint_jacobian.nnz() < n * m || n * m <= 18,
                "{label}: Φ_q is stored in the sparse pattern"
            );
            let mut sj = d.constraint_jacobian.clone();
            sj.fill_zero();
            sys.sparse_constraint_jacobian(t, &q, &mut sj);
            close(sj.to_dense().as_slice(), jac.as_slice(), label);
            close(&d.constraint_time_derivative, &pt, label);
            close(&d.velocity_constraints, &dphi, label);
            close(&d.gamma, &g, label);
            assert_eq!(pt.iter().any(|x| x.abs() > 0.1), moving, "Φ_t exercised");
            // a subset leaves the rest untouched
            let mut d2 = sys.data();
            d2.gamma.fill(f64::NAN);
            eval(&mut d2, Quantities::CONSTRAINTS);
            close(&d2.constraints, &phi, label);
            assert!(
                d2.gamma.iter().all(|x| x.is_nan()),
                "{label}: γ was not asked for"
            );
            // M is written once per workspace when the system says it is
            // constant (the planar one does; the wrapper does not, so it refills)
            eval(&mut d2, Quantities::MASS_MATRIX);
            // (the planar workspace keeps M as its diagonal)
            if d2.mass_is_stored_diagonal() {
                d2.mass_diagonal[0] = -1.0;
            } else {
                d2.mass_matrix[(0, 0)] = -1.0;
            }
            eval(&mut d2, Quantities::EQUATIONS_OF_MOTION);
            let kept = d2.mass(0, 0) == -1.0;
            assert_eq!(
                kept, planar,
                "{label}: constant M written once, a varying one each call"
            );
            close(&d2.gamma, &g, label);
        }
    }
}
