//! Constraint drift: unbounded growth without stabilisation, bounded with
//! Baumgarte, removed by projection and absent in partitioning.

use crate::common;

use common::{max_drift, run};
use jounce_formulation::examples::models;
use jounce_formulation::{Augmented, Partitioning, Projection};

#[test]
fn drift_is_bounded_by_baumgarte_and_removed_by_projection_and_partitioning() {
    // loose tolerance so that drift is visible within 10 s
    let (sys, q0, v0) = models::double_pendulum(1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.0, 0.0, 0.0, 0.0);
    let (t1, rtol, atol) = (10.0, 1e-5, 1e-7);
    let plain = run(
        &sys,
        &mut Augmented::new(&sys),
        &q0,
        &v0,
        t1,
        "dopri5",
        rtol,
        atol,
    );
    let mut stab = Augmented::new(&sys).with_baumgarte(10.0, 10.0).unwrap();
    let baum = run(&sys, &mut stab, &q0, &v0, t1, "dopri5", rtol, atol);
    let mut pr = Projection::new(&sys, 1e-10).unwrap();
    let proj = run(&sys, &mut pr, &q0, &v0, t1, "dopri5", rtol, atol);
    let n_proj = pr.n_projections();
    let mut pa = Partitioning::new(&sys, 10.0, 1e6).unwrap();
    let part = run(&sys, &mut pa, &q0, &v0, t1, "dopri5", rtol, atol);
    let d = |r: &common::Run, a: f64, b: f64| max_drift(&r.drift, a, b);
    eprintln!(
        "plain: first half {:.2e}, second half {:.2e}",
        d(&plain, 0.0, 5.0),
        d(&plain, 5.0, 10.0)
    );
    eprintln!(
        "baumgarte: first half {:.2e}, second half {:.2e}",
        d(&baum, 0.0, 5.0),
        d(&baum, 5.0, 10.0)
    );
    eprintln!(
        "projection: {:.2e} ({n_proj} projections, {} corrections)",
        d(&proj, 0.0, 10.0),
        proj.stats.n_corrections
    );
    eprintln!("partitioning: {:.2e}", d(&part, 0.0, 10.0));
    // unstabilised drift grows
    assert!(d(&plain, 5.0, 10.0) > 2.0 * d(&plain, 0.0, 5.0));
    // Baumgarte: bounded, no growth, well below the unstabilised drift
    assert!(d(&baum, 5.0, 10.0) < 2.0 * d(&baum, 0.0, 5.0));
    assert!(d(&baum, 0.0, 10.0) < 0.1 * d(&plain, 0.0, 10.0));
    // projection keeps |Φ| at its tolerance after every step
    assert!(d(&proj, 0.0, 10.0) <= 1e-10);
    // each projection reaches the integrator as a correction, not a restart
    assert!(n_proj > 0 && proj.stats.n_corrections >= n_proj);
    assert_eq!(proj.stats.n_restart, 0);
    // partitioning satisfies Φ = 0 to Newton precision
    assert!(d(&part, 0.0, 10.0) < 1e-11);
}

#[test]
fn energy_is_conserved_by_the_exact_constraint_formulations() {
    use jounce_mechanics::MechanicalSystem;
    let (sys, q0, v0) = models::double_pendulum(1.0, 0.8, 1.0, 2.0, 1.2, -0.4, 0.5, 1.0, 20.0, 5.0);
    let e0 = sys.kinetic_energy(&q0, &v0) + sys.potential_energy(0.0, &q0);
    for (name, r) in [
        (
            "partitioning",
            run(
                &sys,
                &mut Partitioning::new(&sys, 10.0, 1e6).unwrap(),
                &q0,
                &v0,
                5.0,
                "dopri5",
                1e-10,
                1e-12,
            ),
        ),
        (
            "projection",
            run(
                &sys,
                &mut Projection::new(&sys, 1e-10).unwrap(),
                &q0,
                &v0,
                5.0,
                "dopri5",
                1e-10,
                1e-12,
            ),
        ),
    ] {
        let e = sys.kinetic_energy(&r.q, &r.v) + sys.potential_energy(5.0, &r.q);
        let rel = (e - e0).abs() / e0.abs();
        eprintln!("{name}: relative energy error {rel:.2e}");
        assert!(rel < 1e-7, "{name}: {rel:e}");
    }
}
