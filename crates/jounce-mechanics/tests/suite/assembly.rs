//! Assembly: rough guesses converge, degrees of freedom, redundant,
//! inconsistent and singular constraints are found and named.

use crate::common;

use common::*;
use jounce_mechanics::{assemble, AssemblyError, MechanicalSystem};
use nalgebra::{DMatrix, DVector};

const TOL: f64 = 1e-10;

/// Initial q of the model disturbed by `size` (m and rad).
fn rough(q: &[f64], size: f64) -> Vec<f64> {
    let mut seed = 3;
    q.iter().map(|x| x + size * noise(&mut seed)).collect()
}

fn velocity_residual(sys: &impl MechanicalSystem, q: &[f64], v: &[f64]) -> f64 {
    let (n, m) = (sys.nq(), sys.nc());
    let mut jac = DMatrix::zeros(m, n);
    sys.constraint_jacobian(0.0, q, &mut jac);
    let mut phi_t = vec![0.0; m];
    sys.constraint_time_derivative(0.0, q, &mut phi_t);
    (jac * DVector::from_column_slice(v) + DVector::from_column_slice(&phi_t)).amax()
}

#[test]
fn slider_crank_assembles_from_a_rough_guess() {
    let (r, l, phi) = (0.2, 0.6, 0.7);
    for driven in [true, false] {
        let sys = system(&slider_crank(r, l, phi, driven));
        let mut guess = rough(&sys.initial_q(), 0.05);
        // the crank itself is off by 0.25 rad
        guess[2] += 0.25;
        let v_guess: Vec<f64> = rough(&vec![0.0; sys.nq()], 0.5);
        let a = assemble(&sys, 0.0, &guess, &v_guess, TOL).expect("slider-crank assembles");
        assert!(a.position_residual <= TOL);
        assert!(a.velocity_residual < 1e-12);
        assert!(velocity_residual(&sys, &a.q, &a.v) < 1e-12);
        assert!(a.redundant.is_empty() && a.singular.is_empty(), "{a:?}");
        if driven {
            // DOF 0: the crank angle is prescribed, the slider follows exactly
            assert_eq!((a.dof, a.rank), (0, 9));
            assert!((a.q[2] - phi).abs() < 1e-10);
            let xs = r * phi.cos() + (l * l - (r * phi.sin()).powi(2)).sqrt();
            assert!(
                (a.q[6] - xs).abs() < 1e-9,
                "slider at {} instead of {xs}",
                a.q[6]
            );
            assert!(
                a.v.iter().all(|v| v.abs() < 1e-12),
                "a constant driver leaves no motion: {:?}",
                a.v
            );
        } else {
            assert_eq!((a.dof, a.rank), (1, 8));
            // the crank pin is at distance r from the pivot, slider on the axis
            let (c, s) = (a.q[2].cos(), a.q[2].sin());
            let pin = [a.q[0] + c * r / 2.0, a.q[1] + s * r / 2.0];
            assert!(((pin[0].powi(2) + pin[1].powi(2)).sqrt() - r).abs() < 1e-9);
            assert!(a.q[7].abs() < 1e-10 && a.q[8].abs() < 1e-10);
        }
    }
}

#[test]
fn four_bar_assembles_with_one_degree_of_freedom() {
    let m = four_bar(1.0, [0.4 * 1.0_f64.cos(), 0.4 * 1.0_f64.sin()], [1.3, 0.75]);
    let sys = system(&m);
    let guess = rough(&sys.initial_q(), 0.1);
    let a = assemble(&sys, 0.0, &guess, &[0.3; 9], TOL).expect("four-bar assembles");
    assert_eq!((a.dof, a.rank, a.generic_rank), (1, 8, 8));
    assert!(a.redundant.is_empty() && a.singular.is_empty());
    assert!(a.position_residual <= TOL && velocity_residual(&sys, &a.q, &a.v) < 1e-12);
    assert!(a.iterations >= 2, "a rough guess needs Newton iterations");
}

#[test]
fn least_velocity_change_for_a_pendulum() {
    // pendulum of length 1 hinged at the origin, horizontal: the pin
    // velocity (vx, vy − ω) must vanish; the closest point to (1, 2, 0)
    // is (0, 1, 1)
    let m = model(
        "pendulum",
        vec![body("bob", 1.0, 1.0, 1.0, 0.0, 0.0)],
        vec![revolute("pin", ground([0.0, 0.0]), on(0, [-1.0, 0.0]))],
        vec![],
        vec![],
    );
    let sys = system(&m);
    let a = assemble(&sys, 0.0, &sys.initial_q(), &[1.0, 2.0, 0.0], TOL).unwrap();
    assert_eq!(a.iterations, 0);
    for (got, want) in a.v.iter().zip([0.0, 1.0, 1.0]) {
        assert!((got - want).abs() < 1e-12, "{:?}", a.v);
    }
    assert!((a.velocity_change - 1.0).abs() < 1e-12);
}

#[test]
fn duplicated_revolute_is_reported_redundant_by_name() {
    let mut m = four_bar(1.0, [0.0, 0.4], [1.2, 0.7]);
    let dup = m.joints[0].clone();
    m.joints.push(jounce_model::Joint {
        name: "pivot_copy".into(),
        ..dup
    });
    let sys = system(&m);
    let a = assemble(&sys, 0.0, &rough(&sys.initial_q(), 0.05), &[0.0; 9], TOL)
        .expect("redundant but consistent");
    assert_eq!(
        a.redundant,
        vec![
            "joint 'pivot_copy' (x)".to_string(),
            "joint 'pivot_copy' (y)".to_string()
        ]
    );
    assert_eq!((a.dof, a.rank), (1, 8));
    assert!(a.position_residual <= TOL);
}

#[test]
fn parallelogram_with_extra_link_is_redundant() {
    // cranks of length 0.5 at x = 0 and x = 1, a third equal crank at x = 0.5,
    // all vertical, coupler of length 1 on top
    let bodies = vec![
        bar("left", 0.5, 0.0, 0.25, std::f64::consts::FRAC_PI_2),
        bar("right", 0.5, 1.0, 0.25, std::f64::consts::FRAC_PI_2),
        bar("coupler", 1.0, 0.5, 0.5, 0.0),
        bar("middle", 0.5, 0.5, 0.25, std::f64::consts::FRAC_PI_2),
    ];
    let (lo, hi) = ([-0.25, 0.0], [0.25, 0.0]);
    let joints = vec![
        revolute("left_pivot", ground([0.0, 0.0]), on(0, lo)),
        revolute("left_top", on(0, hi), on(2, [-0.5, 0.0])),
        revolute("right_pivot", ground([1.0, 0.0]), on(1, lo)),
        revolute("right_top", on(1, hi), on(2, [0.5, 0.0])),
        revolute("middle_pivot", ground([0.5, 0.0]), on(3, lo)),
        revolute("middle_top", on(3, hi), on(2, [0.0, 0.0])),
    ];
    let sys = system(&model("parallelogram", bodies, joints, vec![], vec![]));
    let a =
        assemble(&sys, 0.0, &rough(&sys.initial_q(), 0.02), &[0.0; 12], TOL).expect("consistent");
    assert_eq!((a.dof, a.rank, a.generic_rank), (1, 11, 11), "{a:?}");
    assert_eq!(a.redundant.len(), 1);
    assert!(
        a.redundant[0].starts_with("joint 'middle_top'"),
        "{:?}",
        a.redundant
    );
    assert!(a.singular.is_empty(), "{:?}", a.singular);
}

#[test]
fn four_bar_at_its_change_point_is_singular() {
    // a = c = 1, b = d = 2, all links on the x axis: the two assembly
    // branches cross here and Φ_q loses one rank
    let m = four_bar(2.0, [1.0, 0.0], [3.0, 0.0]);
    let sys = system(&m);
    let a = assemble(&sys, 0.0, &sys.initial_q(), &[0.0; 9], TOL).unwrap();
    assert_eq!((a.rank, a.generic_rank, a.dof), (7, 8, 1), "{a:?}");
    assert!(a.redundant.is_empty(), "{:?}", a.redundant);
    assert_eq!(a.singular.len(), 1, "{:?}", a.singular);
    assert!(a.singular[0].starts_with("joint '"), "{:?}", a.singular);
}

#[test]
fn link_too_short_is_an_error_naming_joints() {
    // crank 0.4 + coupler 0.5 + rocker 0.4 cannot span pivots 2 m apart
    let mut m = four_bar(2.0, [0.0, 0.4], [2.0, 0.4]);
    for (j, x) in [(1, -0.25), (2, 0.25)] {
        if let jounce_model::JointKind::Revolute { a, b } = &mut m.joints[j].kind {
            let coupler = if j == 1 { b } else { a };
            coupler.point = [x, 0.0];
        }
    }
    let sys = system(&m);
    let err = assemble(&sys, 0.0, &sys.initial_q(), &[0.0; 9], TOL).unwrap_err();
    match &err {
        AssemblyError::Inconsistent {
            residual, worst, ..
        } => {
            assert!(*residual > 0.1, "{err}");
            assert!(
                !worst.is_empty() && worst.iter().all(|(l, _)| l.starts_with("joint '")),
                "{err}"
            );
        }
        other => panic!("expected Inconsistent, got {other}"),
    }
    assert!(err.to_string().contains("joint '"), "{err}");
}

#[test]
fn bad_inputs_are_errors() {
    let sys = system(&slider_crank(0.2, 0.6, 0.3, true));
    let err = assemble(&sys, 0.0, &[0.0; 3], &[0.0; 9], TOL).unwrap_err();
    assert!(
        matches!(
            err,
            AssemblyError::DimensionMismatch {
                what: "q_guess",
                ..
            }
        ),
        "{err}"
    );
    let mut q = sys.initial_q();
    q[0] = f64::NAN;
    assert!(matches!(
        assemble(&sys, 0.0, &q, &[0.0; 9], TOL),
        Err(AssemblyError::NonFinite { .. })
    ));
}

#[test]
fn distance_driver_through_zero_length_is_an_error_naming_it() {
    // a distance driver prescribing 0 between a body point and ground:
    // |d| has no gradient there
    let m = model(
        "collapse",
        vec![body("slider", 1.0, 0.1, 0.0, 0.0, 0.0)],
        vec![],
        vec![jounce_model::Driver {
            name: "squeeze".into(),
            kind: jounce_model::DriverKind::Distance {
                a: ground([0.0, 0.0]),
                b: on(0, [0.0, 0.0]),
            },
            function: jounce_model::TimeFunction::Constant(0.5),
        }],
        vec![],
    );
    let sys = system(&m);
    let err = assemble(&sys, 0.0, &[0.0, 0.0, 0.0], &[0.0; 3], TOL).unwrap_err();
    assert!(
        matches!(err, AssemblyError::NonFinite { .. })
            && err.to_string().contains("driver 'squeeze'"),
        "{err}"
    );
    // from a generic guess it assembles onto the circle of radius 0.5
    let a = assemble(&sys, 0.0, &[0.3, 0.1, 0.0], &[0.0; 3], TOL).unwrap();
    assert!(((a.q[0].powi(2) + a.q[1].powi(2)).sqrt() - 0.5).abs() < 1e-10);
    assert_eq!(a.dof, 2);
}
