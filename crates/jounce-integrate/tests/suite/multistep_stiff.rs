//! Stiff problems with the variable-step variable-order bdf and ndf codes:
//! Robertson's chemical kinetics and the Van der Pol oscillator, μ = 1000.
//!
//! References: no independent stiff solver lives in this module's branch,
//! so each reference is computed twice at rtol = 1e-11 (bdf and ndf, two
//! different formulas); the two must agree to ~1e-8 before they are used.

use jounce_integrate::testkit::{Discard, Robertson, VanDerPol};
use jounce_integrate::*;

fn run(name: &str, p: &mut dyn OdeProblem, y0: &[f64], t1: f64, rtol: f64, atol: f64) -> Solved {
    let opts = SolverOptions::default().with_tol(rtol, atol);
    let mut st = method::build(name, &opts).unwrap();
    solve(p, st.as_mut(), 0.0, y0, t1, &opts, &mut Discard)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn rel_err(a: &[f64], b: &[f64], atol: f64) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs() / (atol + y.abs()))
        .fold(0.0, f64::max)
}

fn check(
    label: &str,
    p: &mut dyn OdeProblem,
    y0: &[f64],
    t1: f64,
    atol_ref: f64,
    rtol: f64,
    atol: f64,
    max_steps: u64,
) {
    let r_bdf = run("bdf", p, y0, t1, 1e-11, atol_ref);
    let r_ndf = run("ndf", p, y0, t1, 1e-11, atol_ref);
    let agree = rel_err(&r_bdf.y, &r_ndf.y, atol);
    println!(
        "{label}: reference bdf {:?} ndf {:?}, agree {agree:e}",
        r_bdf.y, r_ndf.y
    );
    assert!(agree < 1e-8, "{label}: references disagree by {agree}");
    for name in ["bdf", "ndf"] {
        let r = run(name, p, y0, t1, rtol, atol);
        let e = rel_err(&r.y, &r_ndf.y, atol);
        println!(
            "{label} {name} rtol {rtol:e}: rel. error {e:e}, stats {:?}",
            r.stats
        );
        assert!(e < 30.0 * rtol, "{label} {name}: error {e} at rtol {rtol}");
        assert!(
            r.stats.n_accept < max_steps,
            "{label} {name}: {} steps",
            r.stats.n_accept
        );
        assert!(
            r.stats.n_lu < r.stats.n_accept + r.stats.n_reject + 2,
            "{label} {name}: LU per step?"
        );
        assert!(
            r.stats.n_jac < r.stats.n_accept / 2,
            "{label} {name}: no Jacobian reuse"
        );
    }
}

#[test]
fn robertson_to_t_40_and_1e5() {
    let y0 = [1.0, 0.0, 0.0];
    check(
        "robertson t=40",
        &mut Robertson,
        &y0,
        40.0,
        1e-16,
        1e-6,
        1e-10,
        300,
    );
    check(
        "robertson t=1e5",
        &mut Robertson,
        &y0,
        1e5,
        1e-16,
        1e-6,
        1e-10,
        600,
    );
}

#[test]
fn van_der_pol_mu_1000_on_0_2() {
    check(
        "vdp mu=1e3",
        &mut VanDerPol { mu: 1000.0 },
        &[2.0, 0.0],
        2.0,
        1e-14,
        1e-6,
        1e-8,
        1500,
    );
}

#[test]
fn bdf_and_ndf_errors_follow_the_tolerance_and_variable_order_pays() {
    use jounce_integrate::testkit::{max_abs_diff, InverseTimeRotation};
    let t0 = 1.0 / std::f64::consts::PI;
    let t1 = 2.0;
    let y0 = InverseTimeRotation::exact(t0);
    let ex = InverseTimeRotation::exact(t1);
    for name in ["bdf", "ndf"] {
        let mut errs = Vec::new();
        for tol in [1e-5, 1e-7, 1e-9] {
            let opts = SolverOptions::default().with_tol(tol, tol);
            let mut st = method::build(name, &opts).unwrap();
            let r = solve(
                &mut InverseTimeRotation,
                st.as_mut(),
                t0,
                &y0,
                t1,
                &opts,
                &mut Discard,
            )
            .unwrap();
            errs.push((max_abs_diff(&r.y, &ex), r.stats.n_accept));
        }
        println!("{name}: (error, steps) at tol 1e-5, 1e-7, 1e-9: {errs:?}");
        // two decades of tolerance buy at least one decade of error (p/(p+1) of two
        // decades with error per step: 1.67 at p = 5, 1 at p = 1)
        assert!(
            errs[1].0 < errs[0].0 / 10.0 && errs[2].0 < errs[1].0 / 10.0,
            "{name}: {errs:?}"
        );
        assert!(errs[2].0 < 1e-6, "{name}: {errs:?}");
        // orders up to 5 need far fewer steps than order 1 at tight tolerance
        let opts = SolverOptions::default()
            .with_tol(1e-9, 1e-9)
            .with_param("max_order", 1.0);
        let mut st = method::build(name, &opts).unwrap();
        let r1 = solve(
            &mut InverseTimeRotation,
            st.as_mut(),
            t0,
            &y0,
            t1,
            &opts,
            &mut Discard,
        )
        .unwrap();
        assert!(
            10 * errs[2].1 < r1.stats.n_accept,
            "{name}: {} vs {} steps",
            errs[2].1,
            r1.stats.n_accept
        );
    }
}
