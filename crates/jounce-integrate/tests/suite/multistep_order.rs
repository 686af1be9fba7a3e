//! Empirical convergence orders of the multistep methods at fixed steps on
//! the nonlinear problem with known solution (testkit::InverseTimeRotation).

use jounce_integrate::testkit::{empirical_order, InverseTimeRotation};
use jounce_integrate::*;

fn check(name: &str, p: f64, h0: f64, levels: u32, opts: &SolverOptions) {
    let t0 = 1.0 / std::f64::consts::PI;
    let t1 = t0 + 0.5;
    let y0 = InverseTimeRotation::exact(t0);
    let ex = InverseTimeRotation::exact(t1);
    let (slope, errs) = empirical_order(
        name,
        &mut InverseTimeRotation,
        t0,
        &y0,
        t1,
        &ex,
        h0,
        levels,
        opts,
    )
    .unwrap();
    println!(
        "{name} {:?}: slope {slope:.3}, errors {errs:?}",
        opts.params
    );
    assert!(
        (slope - p).abs() < 0.2,
        "{name}: slope {slope} (theory {p}), errors {errs:?} {:?}",
        opts.params
    );
}

#[test]
fn adams_bashforth_1_to_5_reach_their_orders() {
    let o = SolverOptions::default();
    for (k, name) in ["ab1", "ab2", "ab3", "ab4", "ab5"].iter().enumerate() {
        check(name, k as f64 + 1.0, 0.005, 4, &o);
    }
}

#[test]
fn adams_moulton_1_to_5_reach_their_orders() {
    let o = SolverOptions::default();
    for (k, name) in ["am1", "am2", "am3", "am4", "am5"].iter().enumerate() {
        check(name, k as f64 + 1.0, 0.005, 4, &o);
    }
}

#[test]
fn pece_orders_1_to_5_reach_their_orders_at_fixed_step() {
    for k in 1..=5 {
        for m in [1, 2] {
            let o = SolverOptions::default()
                .with_param("order", k as f64)
                .with_param("m", m as f64);
            check("pece", k as f64, 0.005, 4, &o);
        }
    }
    let o = SolverOptions::default()
        .with_param("order", 3.0)
        .with_param("final_eval", 0.0);
    check("pece", 3.0, 0.005, 4, &o);
}

#[test]
fn bdf_and_ndf_with_fixed_order_reach_their_orders() {
    for name in ["bdf", "ndf"] {
        for k in 1..=5 {
            let o = SolverOptions::default().with_param("max_order", k as f64);
            check(name, k as f64, 0.005, 4, &o);
        }
    }
}
