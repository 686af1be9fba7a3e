//! The penalty formulation: convergence to the constrained solution as
//! the penalty factor grows, and its behaviour with singular mass matrices.

use crate::common;

use common::{max_diff, run};
use jounce_formulation::examples::models;
use jounce_formulation::{Augmented, Formulation, FormulationError, Penalty};
use jounce_integrate::testkit::loglog_slope;
use jounce_mechanics::MechanicalSystem;

#[test]
fn penalty_converges_to_augmented_solution_like_one_over_alpha() {
    let (sys, q0, v0) = models::slider_crank(0.3, 1.0, 0.5, 1.5, 2.0, 0.9, 4.0);
    let t1 = 1.0;
    let reference = run(
        &sys,
        &mut Augmented::new(&sys),
        &q0,
        &v0,
        t1,
        "dopri5",
        1e-11,
        1e-13,
    );
    let alphas = [1e3, 1e4, 1e5, 1e6];
    let mut errs = Vec::new();
    for a in alphas {
        let mut p = Penalty::new(&sys, a, 10.0, 1.0).unwrap();
        let r = run(&sys, &mut p, &q0, &v0, t1, "dopri5", 1e-11, 1e-13);
        errs.push(max_diff(&r.q, &reference.q));
    }
    let inv: Vec<f64> = alphas.iter().map(|a| 1.0 / a).collect();
    let slope = loglog_slope(&inv, &errs);
    eprintln!("errors {errs:?}, slope in 1/α: {slope}");
    assert!((slope - 1.0).abs() < 0.2, "slope {slope}, errors {errs:?}");
    assert!(errs[3] < 2e-3 * errs[0]);
}

#[test]
fn penalty_runs_zero_inertia_model_because_it_factors_m_plus_penalty() {
    // M is singular (point masses without rotational inertia), but
    // M + αΦ_qᵀΦ_q is regular: the penalty form runs and matches augmented
    let (sys, q0, v0) = models::double_pendulum(1.0, 1.0, 1.0, 1.0, 0.5, 0.3, 0.0, 0.0, 0.0, 0.0);
    let mut m = nalgebra::DMatrix::zeros(6, 6);
    sys.mass_matrix(&q0, &mut m);
    assert_eq!(m.clone().lu().determinant(), 0.0);
    let reference = run(
        &sys,
        &mut Augmented::new(&sys),
        &q0,
        &v0,
        1.0,
        "dopri5",
        1e-10,
        1e-12,
    );
    let mut p = Penalty::new(&sys, 1e7, 10.0, 1.0).unwrap();
    let r = run(&sys, &mut p, &q0, &v0, 1.0, "dopri5", 1e-10, 1e-12);
    let e = max_diff(&r.q, &reference.q);
    assert!(e < 1e-5, "error {e:e}");
}

#[test]
fn coordinate_without_inertia_or_constraint_is_refused_by_name() {
    // a bead with zero rotational inertia pinned at its centre: θ has no
    // inertia and no constraint; no formulation can run it
    let (sys, q0, v0) = models::spinning_point_mass();
    let mut p = Penalty::new(&sys, 1e7, 10.0, 1.0).unwrap();
    let e = p.initial_state(0.0, &q0, &v0).unwrap_err();
    let msg = e.to_string();
    eprintln!("{msg}");
    assert!(matches!(e, FormulationError::SingularMass { .. }));
    assert!(
        msg.contains("penalty") && msg.contains("bead.theta"),
        "{msg}"
    );
    for name in jounce_formulation::NAMES {
        if name == "joint" && sys.joint_coordinates().is_none() {
            continue; // hand-written systems have no joint form
        }
        let mut f = jounce_formulation::build(name, &Default::default(), &sys).unwrap();
        let e = f.initial_state(0.0, &q0, &v0).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("bead.theta"), "{name}: {msg}");
        // the hint on [settings.penalty] is penalty's alone (the augmented
        // Lagrangian runs the same check without it)
        assert_eq!(
            msg.contains("[settings.penalty]"),
            name == "penalty",
            "{name}: {msg}"
        );
    }
    // and the right-hand side reports it too, should it be called anyway
    let mut dy = [0.0; 6];
    let y: Vec<f64> = q0.iter().chain(&v0).copied().collect();
    let err = jounce_integrate::OdeProblem::rhs(&mut p, 0.0, &y, &mut dy).unwrap_err();
    assert!(err.to_string().contains("bead.theta"), "{err}");
}

#[test]
fn penalty_multipliers_approximate_the_constraint_forces() {
    let (sys, q0, v0) = models::pendulum(1.0, 2.0, -0.5, 1.0);
    let mut a = Augmented::new(&sys);
    let mut p = Penalty::new(&sys, 1e7, 10.0, 1.0).unwrap();
    let (mut q, mut v) = (vec![0.0; 3], vec![0.0; 3]);
    let (mut la, mut lp) = (vec![0.0; 2], vec![0.0; 2]);
    let y: Vec<f64> = q0.iter().chain(&v0).copied().collect();
    a.physical_state(0.0, &y, &mut q, &mut v, &mut la).unwrap();
    p.physical_state(0.0, &y, &mut q, &mut v, &mut lp).unwrap();
    let e = max_diff(&la, &lp) / la.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    assert!(e < 1e-5, "{la:?} vs {lp:?}");
    assert_eq!(sys.nc(), 2);
}
