//! The factory by name, parameter validation, breakpoints, and structured
//! errors for singular and inconsistent models.

use jounce_formulation::examples::models;
use jounce_formulation::{
    build, build_kind, forms, provides, Augmented, FormulationError, FormulationKind,
    FormulationSettings, NAMES,
};
use jounce_integrate::{EvalError, OdeProblem, ProblemForm};
use jounce_mechanics::MechanicalSystem as _;

#[test]
fn factory_builds_every_formulation_by_name_and_forwards_breakpoints() {
    let (mut sys, q0, v0) = models::slider_crank(0.3, 1.0, 0.5, 1.5, 2.0, 0.9, 4.0);
    sys.breakpoints = vec![0.25, 1.5];
    for name in NAMES {
        if name == "joint" && sys.joint_coordinates().is_none() {
            continue; // hand-written systems have no joint form
        }
        let mut f = build(name, &FormulationSettings::default(), &sys).unwrap();
        assert_eq!(f.name(), name);
        assert_eq!(f.breakpoints(), &[0.25, 1.5]);
        let y0 = f.initial_state(0.0, &q0, &v0).unwrap();
        // slider-crank: n = 9 coordinates, m = 8 constraints, 1 DOF
        let want = match name {
            "partitioning" | "state_space" => 2,
            "index3" | "augmented_lagrangian" => 26,
            "ggl" => 34,
            _ => 18,
        };
        assert_eq!((y0.len(), f.dim()), (want, want), "{name}");
        let mut dy = vec![0.0; want];
        f.rhs(0.0, &y0, &mut dy).unwrap();
        assert!(dy.iter().all(|x| x.is_finite()));
    }
    let e = build("lagrange", &FormulationSettings::default(), &sys)
        .err()
        .unwrap();
    assert_eq!(e, FormulationError::Unknown("lagrange".into()));
    assert!(e
        .to_string()
        .contains("augmented, partitioning, projection, penalty"));
    let e = build("ggI", &FormulationSettings::default(), &sys)
        .err()
        .unwrap();
    assert!(e.to_string().contains("(did you mean 'ggl'?)"), "{e}");
}

/// The typed factory and the one by name build the same formulation, and
/// `provides(name)` is `forms(kind)`: the names are FormulationKind's.
#[test]
fn the_factory_by_kind_and_by_name_agree() {
    let (sys, q0, v0) = models::slider_crank(0.3, 1.0, 0.5, 1.5, 2.0, 0.9, 4.0);
    assert_eq!(NAMES, FormulationKind::NAMES);
    for kind in FormulationKind::ALL {
        assert_eq!(provides(kind.name()), forms(kind), "{kind}");
        assert!(!forms(kind).is_empty(), "{kind}");
        if kind == FormulationKind::Joint {
            continue; // hand-written systems have no joint form
        }
        let s = FormulationSettings::default();
        let mut a = build_kind(kind, &s, &sys).unwrap();
        let mut b = build(kind.name(), &s, &sys).unwrap();
        assert_eq!((a.name(), a.dim()), (kind.name(), b.dim()));
        assert_eq!(
            a.initial_state(0.0, &q0, &v0).unwrap(),
            b.initial_state(0.0, &q0, &v0).unwrap()
        );
    }
    assert!(provides("lagrange").is_empty());
}

/// `provides` (what `jounce` checks before a run) says what the built
/// problems offer (`OdeProblem::forms`); only index3 is the index-3 DAE of
/// the structural family, index3 and ggl the implicit DAEs of bdf and
/// radau5, odae the overdetermined DAE of bdf and ndf.
#[test]
fn provides_lists_the_forms_each_formulation_offers() {
    let (sys, _, _) = models::slider_crank(0.3, 1.0, 0.5, 1.5, 2.0, 0.9, 4.0);
    for name in NAMES {
        if name == "joint" && sys.joint_coordinates().is_none() {
            continue; // hand-written systems have no joint form
        }
        let mut f = build(name, &FormulationSettings::default(), &sys).unwrap();
        assert_eq!(f.forms(), provides(name).to_vec(), "{name}");
        let dae = provides(name).contains(&ProblemForm::ConstrainedSecondOrder);
        assert_eq!(dae, name == "index3", "{name}");
        // augmented_lagrangian has the same equations, integrated its way
        // (ProblemForm::AugmentedLagrangian)
        let al = name == "augmented_lagrangian";
        assert_eq!(
            provides(name).contains(&ProblemForm::AugmentedLagrangian),
            al
        );
        assert_eq!(
            f.as_constrained_second_order().is_some(),
            dae || al,
            "{name}"
        );
        let implicit = provides(name).contains(&ProblemForm::Dae);
        assert_eq!(implicit, name == "index3" || name == "ggl", "{name}");
        assert_eq!(f.as_dae().is_some(), implicit, "{name}");
        let odae = provides(name).contains(&ProblemForm::Overdetermined);
        assert_eq!(odae, name == "odae", "{name}");
        assert_eq!(f.as_overdetermined().is_some(), odae, "{name}");
    }
    assert!(provides("lagrange").is_empty());
}

#[test]
fn bad_settings_are_rejected_with_the_parameter_named() {
    let (sys, _, _) = models::pendulum(1.0, 1.0, 0.0, 0.0);
    let cases = [
        (
            "augmented",
            FormulationSettings {
                baumgarte_alpha: -1.0,
                ..Default::default()
            },
            "[settings.baumgarte] alpha",
        ),
        (
            "penalty",
            FormulationSettings {
                penalty_factor: 0.0,
                ..Default::default()
            },
            "[settings.penalty] factor",
        ),
        (
            "penalty",
            FormulationSettings {
                penalty_xi: f64::NAN,
                ..Default::default()
            },
            "[settings.penalty] xi",
        ),
        (
            "partitioning",
            FormulationSettings {
                partition_ratio: 0.5,
                ..Default::default()
            },
            "partition_ratio",
        ),
        (
            "projection",
            FormulationSettings {
                projection_tol: 0.0,
                ..Default::default()
            },
            "projection_tol",
        ),
    ];
    for (name, s, param) in cases {
        let e = build(name, &s, &sys).err().expect(param);
        assert!(matches!(e, FormulationError::BadParameter { .. }));
        assert!(e.to_string().contains(param), "{e}");
    }
}

#[test]
fn redundant_constraints_are_named() {
    let (sys, q0, v0) = models::redundant_pendulum();
    for name in NAMES {
        if name == "joint" && sys.joint_coordinates().is_none() {
            continue; // hand-written systems have no joint form
        }
        let mut f = build(name, &FormulationSettings::default(), &sys).unwrap();
        let r = f.initial_state(0.0, &q0, &v0);
        if name == "penalty" || name == "augmented_lagrangian" {
            // M + αΦ_qᵀΦ_q stays regular with redundant rows: penalty and
            // the augmented Lagrangian run
            assert!(r.is_ok());
            continue;
        }
        let e = r.unwrap_err();
        let msg = e.to_string();
        assert!(
            matches!(e, FormulationError::SingularJacobian(_)),
            "{name}: {e:?}"
        );
        assert!(msg.contains("joint 'pivot"), "{name}: {msg}");
    }
    // the right-hand side reports the same as a structured evaluation error
    let mut f = Augmented::new(&sys);
    let y: Vec<f64> = q0.iter().chain(&v0).copied().collect();
    let mut dy = vec![0.0; 6];
    match f.rhs(0.0, &y, &mut dy) {
        Err(EvalError::Singular { what, detail, .. }) => {
            assert!(what.contains("KKT"));
            assert!(
                detail.contains("redundant") && detail.contains("joint 'pivot"),
                "{detail}"
            );
        }
        other => panic!("expected a singular KKT matrix, got {other:?}"),
    }
}

#[test]
fn partitioning_refuses_a_system_without_degrees_of_freedom() {
    // a driven pendulum has n = m = 3
    let (mut sys, q0, v0) = models::pendulum(1.0, 1.0, 0.2, 0.0);
    sys = jounce_formulation::examples::ToySystem::new(
        sys.bodies,
        {
            let mut j = sys.joints;
            j.push(jounce_formulation::examples::ToyJoint::AngleDriver {
                name: "motor".into(),
                i: 0,
                theta0: 0.2,
                omega: 0.0,
                amp: 0.0,
                freq: 0.0,
            });
            j
        },
        vec![],
        [0.0, -9.81],
    );
    let mut f = build("partitioning", &FormulationSettings::default(), &sys).unwrap();
    let e = f.initial_state(0.0, &q0, &v0).unwrap_err();
    assert!(e.to_string().contains("no independent coordinates"), "{e}");
    // augmented runs it (kinematically driven)
    let mut a = build("augmented", &FormulationSettings::default(), &sys).unwrap();
    assert!(a.initial_state(0.0, &q0, &v0).is_ok());
}

#[test]
fn wrong_initial_state_length_is_refused() {
    let (sys, q0, v0) = models::pendulum(1.0, 1.0, 0.2, 0.0);
    for name in NAMES {
        if name == "joint" && sys.joint_coordinates().is_none() {
            continue; // hand-written systems have no joint form
        }
        let mut f = build(name, &FormulationSettings::default(), &sys).unwrap();
        let e = f.initial_state(0.0, &q0[..2], &v0).unwrap_err();
        assert!(
            matches!(e, FormulationError::BadParameter { .. }),
            "{name}: {e:?}"
        );
    }
}

/// A system whose positions outnumber its velocities (as unit quaternions
/// do): every formulation but `joint` integrates q' = T(q) v (partitioning
/// and state_space partition [Φ; c] and v); `joint` needs joint
/// coordinates with n_q = n_v, which this system has not, so the factory
/// refuses it by name before anything is evaluated.
#[test]
fn positions_that_are_not_velocities_are_refused_only_by_joint() {
    use jounce_mechanics::MechanicalSystem;
    struct ExtraPosition<S>(S);
    impl<S: MechanicalSystem> MechanicalSystem for ExtraPosition<S> {
        fn nq(&self) -> usize {
            self.0.nq() + 1
        }
        fn nv(&self) -> usize {
            self.0.nq()
        }
        jounce_mechanics::test_system_core! {
            forward(0): nc, mass_matrix, generalized_forces, force_jacobians, constraints,
                constraint_jacobian, constraint_time_derivative, gamma, constraint_force_jacobian,
                kinetic_energy, potential_energy, constraint_label, coordinate_label;
            core: position_derivative, integrate_position, position_increment,
            kinematic_map_derivative, manifold_constraints, data, evaluate, constraint_row_meaning, breakpoints;
            structure: jounce_mechanics::Structure::GENERAL;
            absent: second_derivatives, sparsity, applied_loads, switching, friction,
                joint_coordinates;
        }
    }
    let (sys, _, _) = models::slider_crank(0.3, 1.0, 0.5, 1.5, 2.0, 0.9, 4.0);
    let sys = ExtraPosition(sys);
    let data = sys.data();
    assert_eq!(
        (data.nq, data.nv),
        (10, 9),
        "the workspace is sized by both"
    );
    assert_eq!(data.mass_matrix.shape(), (9, 9));
    // these integrate q' = T(q) v; every other formulation refuses
    let manifold = [
        "augmented",
        "projection",
        "penalty",
        "index3",
        "ggl",
        "odae",
        "augmented_lagrangian",
        "partitioning",
        "state_space",
    ];
    for name in manifold {
        assert!(
            build(name, &FormulationSettings::default(), &sys).is_ok(),
            "{name}"
        );
    }
    for name in NAMES.iter().filter(|n| !manifold.contains(*n)) {
        let e = build(name, &FormulationSettings::default(), &sys)
            .err()
            .unwrap_or_else(|| panic!("{name} accepted n_q ≠ n_v"));
        assert_eq!(
            e,
            FormulationError::PositionsNotVelocities {
                formulation: (*name).into(),
                nq: 10,
                nv: 9
            }
        );
        assert!(e.to_string().contains("n_q = 10 positions and n_v = 9"));
    }
}
