//! All formulations integrate the same mechanism to the same motion.

use crate::common;

use common::{max_diff, run, run_with};
use jounce_formulation::examples::models;
use jounce_formulation::{build, FormulationSettings, NAMES};
use jounce_integrate::SolverOptions;
use jounce_mechanics::MechanicalSystem;

/// Run every formulation with dopri5 at rtol 1e-10 (index3: generalized-α
/// at h = 2e-4; ggl: radau5 at rtol 1e-10; odae: bdf at rtol 1e-10) to
/// t = 2 s and compare final positions (within 1e-6;
/// index3 2e-5) and multipliers (relative 1e-4) with the augmented
/// solution.
fn agree(sys: &dyn MechanicalSystem, q0: &[f64], v0: &[f64], what: &str) {
    // penalty positions are exact only to O(1/α): α = 1e8, ω = 30 keeps
    // them within 1e-6 (measured 3e-9 to 5e-7); at α = 1e9 rounding in
    // M + αΦ_qᵀΦ_q (κ ≈ 1e9) takes over
    let settings = FormulationSettings {
        penalty_factor: 1e8,
        penalty_omega: 30.0,
        ..FormulationSettings::default()
    };
    let mut reference = None;
    for name in NAMES {
        if name == "joint" && sys.joint_coordinates().is_none() {
            continue; // hand-written systems have no joint form
        }
        let mut f = build(name, &settings, sys).unwrap();
        // the augmented Lagrangian integrates the same index-3 DAE with the
        // same structural methods (its own Newton iteration)
        let index3 = name == "index3" || name == "augmented_lagrangian";
        let r = if name == "odae" {
            // the overdetermined DAE runs with the BDFs: bdf at rtol 1e-10
            // (measured |Δq| 1.3e-9 to 8.9e-8, |Δλ|/|λ| 2.7e-9 to 5.3e-8)
            let opts = SolverOptions::default().with_tol(1e-10, 1e-12);
            run_with(sys, f.as_mut(), q0, v0, 2.0, "bdf", opts)
        } else if name == "ggl" {
            // the stabilised index-2 DAE runs with the DAE methods: Radau
            // IIA (order 5 in q, v) at rtol 1e-10
            let opts = SolverOptions::default().with_tol(1e-10, 1e-12);
            run_with(sys, f.as_mut(), q0, v0, 2.0, "radau5", opts)
        } else if index3 {
            // the index-3 DAE runs only with the structural methods, of
            // order 2: generalized-α at a fixed h = 2e-4 (10 000 steps)
            // converges at order 2 in q and λ (errors 4x smaller at
            // h = 1e-4 on the models that run it); adaptive steps at rtol
            // 1e-10 leave a global error floor of ~2e-6 in q and up to
            // 2e-3 in λ, and from rest on the zero-inertia pendulum the
            // structural driver's Newton fails at t = 0 for h <= 1e-4
            let opts = SolverOptions {
                fixed_step: Some(2e-4),
                ..SolverOptions::default()
            };
            run_with(sys, f.as_mut(), q0, v0, 2.0, "generalized_alpha", opts)
        } else {
            run(sys, f.as_mut(), q0, v0, 2.0, "dopri5", 1e-10, 1e-12)
        };
        let (q_ref, l_ref): &(Vec<f64>, Vec<f64>) =
            reference.get_or_insert_with(|| (r.q.clone(), r.lambda.clone()));
        let dq = max_diff(&r.q, q_ref);
        let lscale = l_ref.iter().fold(1.0f64, |a, b| a.max(b.abs()));
        let dl = max_diff(&r.lambda, l_ref) / lscale;
        eprintln!(
            "{what}: {name}: |Δq| = {dq:.2e}, |Δλ|/|λ| = {dl:.2e}, {:?}",
            r.stats.n_accept
        );
        // index3 + generalized-α at h = 2e-4: measured |Δq| 6e-7 to 7.1e-6,
        // |Δλ|/|λ| 4e-7 to 3.5e-5 (second-order truncation error)
        let (q_tol, l_tol) = if index3 { (2e-5, 1e-4) } else { (1e-6, 1e-4) };
        assert!(dq < q_tol, "{what}: {name} differs by {dq:e}");
        // penalty multipliers are O(1/α) approximations
        assert!(dl < l_tol, "{what}: {name} multipliers differ by {dl:e}");
    }
}

#[test]
fn formulations_agree_on_zero_inertia_double_pendulum() {
    let (sys, q0, v0) = models::double_pendulum(1.0, 1.0, 1.0, 1.0, 0.5, 0.3, 0.0, 0.0, 0.0, 0.0);
    let mut m = nalgebra::DMatrix::zeros(6, 6);
    sys.mass_matrix(&q0, &mut m);
    assert_eq!(m[(2, 2)], 0.0, "the model must have a singular mass matrix");
    agree(&sys, &q0, &v0, "double pendulum");
}

#[test]
fn formulations_agree_on_double_pendulum_with_springs() {
    let (sys, q0, v0) =
        models::double_pendulum(1.0, 0.7, 1.0, 0.5, -0.4, 0.8, 1.0, -2.0, 30.0, 10.0);
    agree(&sys, &q0, &v0, "sprung double pendulum");
}

#[test]
fn formulations_agree_on_slider_crank() {
    let (sys, q0, v0) = models::slider_crank(0.3, 1.0, 0.5, 1.5, 2.0, 0.9, 4.0);
    agree(&sys, &q0, &v0, "slider-crank");
}

#[test]
fn formulations_agree_on_driven_double_pendulum() {
    let (sys, q0, v0) = models::driven_double_pendulum(1.0, 1.0, 1.0, 1.0, -0.3, 0.5, 0.4, 3.0);
    agree(&sys, &q0, &v0, "driven double pendulum");
}

#[test]
fn baumgarte_terms_vanish_on_the_exact_motion_of_a_driven_system() {
    // Φ_t ≠ 0 here: a wrong sign in 2α(Φ_q v + Φ_t) would pull the motion
    // away from the constraint manifold instead of towards it
    let (sys, q0, v0) = models::driven_double_pendulum(1.0, 1.0, 1.0, 1.0, -0.3, 0.5, 0.4, 3.0);
    let plain = run(
        &sys,
        &mut jounce_formulation::Augmented::new(&sys),
        &q0,
        &v0,
        2.0,
        "dopri5",
        1e-10,
        1e-12,
    );
    let mut stab = jounce_formulation::Augmented::new(&sys)
        .with_baumgarte(20.0, 20.0)
        .unwrap();
    let b = run(&sys, &mut stab, &q0, &v0, 2.0, "dopri5", 1e-10, 1e-12);
    let dq = max_diff(&b.q, &plain.q);
    assert!(dq < 1e-7, "{dq:e}");
    assert!(common::max_drift(&b.drift, 0.0, 2.0) < 1e-9);
}
