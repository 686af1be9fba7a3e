//! Empirical orders of every implicit method at fixed steps on a smooth
//! nonlinear non-autonomous-free problem with known solution
//! (testkit::InverseTimeRotation, gil-sanfelice-nikravesh section 4).

use jounce_integrate::testkit::{empirical_order, InverseTimeRotation};
use jounce_integrate::*;

#[test]
fn every_implicit_method_reaches_its_order_at_fixed_steps() {
    let t0 = 1.0 / std::f64::consts::PI;
    let t1 = t0 + 0.5;
    let y0 = InverseTimeRotation::exact(t0);
    let ex = InverseTimeRotation::exact(t1);
    // tight tolerances only set the Newton stopping criterion here
    let opts = SolverOptions::default().with_tol(1e-13, 1e-13);
    for (name, h0, levels) in [
        ("backward_euler", 0.01, 5),
        ("trapezoidal", 0.02, 5),
        ("implicit_midpoint", 0.02, 5),
        ("sdirk2", 0.02, 5),
        ("sdirk2_l", 0.02, 5),
        ("sdirk3", 0.02, 5),
        ("trbdf2", 0.02, 5),
        ("esdirk43", 0.02, 5),
        ("radau5", 0.05, 4),
        ("ode23s", 0.02, 5),
        ("rodas4", 0.005, 4),
    ] {
        let p = method::find(name).unwrap().info.order as f64;
        let (slope, errs) = empirical_order(
            name,
            &mut InverseTimeRotation,
            t0,
            &y0,
            t1,
            &ex,
            h0,
            levels,
            &opts,
        )
        .unwrap();
        println!("{name}: slope {slope:.3} errors {errs:?}");
        assert!(
            (slope - p).abs() < 0.2,
            "{name}: slope {slope}, order {p}, errors {errs:?}"
        );
    }
}

#[test]
fn sdirk2_parameter_alpha_selects_the_family_member() {
    let t0 = 1.0 / std::f64::consts::PI;
    let t1 = t0 + 0.5;
    let y0 = InverseTimeRotation::exact(t0);
    let ex = InverseTimeRotation::exact(t1);
    let alpha3 = (3.0 + 3f64.sqrt()) / 6.0;
    let opts = SolverOptions::default()
        .with_tol(1e-13, 1e-13)
        .with_param("alpha", alpha3);
    let (slope, errs) = empirical_order(
        "sdirk2",
        &mut InverseTimeRotation,
        t0,
        &y0,
        t1,
        &ex,
        0.02,
        5,
        &opts,
    )
    .unwrap();
    assert!((slope - 3.0).abs() < 0.2, "slope {slope}, {errs:?}");
    // unknown parameters are rejected by name
    let bad = SolverOptions::default().with_param("beta", 1.0);
    let e = method::build("sdirk2", &bad).err().unwrap().to_string();
    assert!(e.contains("beta") && e.contains("alpha"), "{e}");
    assert!(method::build("radau5", &bad).is_err());
}
