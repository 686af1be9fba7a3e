//! Stiff test problems (Hairer–Wanner II, IV.1 and IV.10; Mazzia & Magherini,
//! Test Set for IVP Solvers, release 2.4, problems ROBER and VDPOL): every
//! stiff method against radau5 at rtol 1e-12 and against published values.

use jounce_integrate::testkit::Discard;
use jounce_integrate::testkit::{Robertson, VanDerPolScaled};
use jounce_integrate::*;

fn run(name: &str, p: &mut dyn OdeProblem, y0: &[f64], t1: f64, rtol: f64, atol: f64) -> Solved {
    let opts = SolverOptions::default().with_tol(rtol, atol);
    let mut st = method::build(name, &opts).unwrap();
    solve(p, st.as_mut(), 0.0, y0, t1, &opts, &mut Discard)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn rel_err(y: &[f64], r: &[f64], atol: f64) -> f64 {
    y.iter()
        .zip(r)
        .map(|(a, b)| (a - b).abs() / (b.abs() + atol))
        .fold(0.0, f64::max)
}

#[test]
fn robertson_by_every_stiff_method() {
    let y0 = [1.0, 0.0, 0.0];
    let t1 = 1e5;
    let reference = run("radau5", &mut Robertson, &y0, t1, 1e-12, 1e-20);
    println!("radau5 reference {:?} {:?}", reference.y, reference.stats);
    // mass conservation is exact for every Runge-Kutta/Rosenbrock method (linear invariant)
    assert!((reference.y.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    for (name, rtol, tol) in [
        // bounds about 10-20x the measured errors (radau5 5.5e-8, rodas4
        // 2.3e-9, ode23s 1.4e-4, trbdf2 5.6e-5, esdirk43 7.1e-6, sdirk2_l
        // 3.7e-6, backward Euler 7.0e-4), so that a regression shows
        ("radau5", 1e-6, 1e-6),
        ("rodas4", 1e-6, 1e-7),
        ("ode23s", 1e-5, 2e-3),
        ("trbdf2", 1e-6, 1e-3),
        ("esdirk43", 1e-6, 1e-4),
        ("sdirk2_l", 1e-6, 1e-4),
        ("backward_euler", 1e-6, 1e-2),
        ("bdf", 1e-6, 1e-4), // measured 6.9e-6
        ("ndf", 1e-6, 1e-4), // measured 6.8e-6
    ] {
        let r = run(name, &mut Robertson, &y0, t1, rtol, rtol * 1e-6);
        let e = rel_err(&r.y, &reference.y, 1e-12);
        println!("{name}: rel err {e:.2e}, {:?}", r.stats);
        assert!(
            e < tol,
            "{name}: relative error {e} ({:?} vs {:?})",
            r.y,
            reference.y
        );
        if name == "trbdf2" || name == "esdirk43" {
            // modified Newton: the Jacobian is reused across stages and steps
            assert!(
                2 * r.stats.n_jac < r.stats.n_accept,
                "{name}: {:?}",
                r.stats
            );
        }
    }
}

#[test]
fn robertson_at_1e11_matches_the_test_set_reference() {
    // Mazzia & Magherini, Test Set for IVP Solvers, ROBER: y(1e11)
    let want = [
        0.2083340149701255e-7,
        0.8333360770334713e-13,
        0.999999979166505,
    ];
    let r = run(
        "radau5",
        &mut Robertson,
        &[1.0, 0.0, 0.0],
        1e11,
        1e-10,
        1e-20,
    );
    let e = rel_err(&r.y, &want, 1e-30);
    println!("radau5 rober 1e11: {:?} rel err {e:.2e} {:?}", r.y, r.stats);
    assert!(e < 1e-6, "{:?}", r.y);
    let r = run(
        "rodas4",
        &mut Robertson,
        &[1.0, 0.0, 0.0],
        1e11,
        1e-8,
        1e-20,
    );
    let e = rel_err(&r.y, &want, 1e-30);
    println!("rodas4 rober 1e11: {:?} rel err {e:.2e} {:?}", r.y, r.stats);
    assert!(e < 1e-4, "{:?}", r.y);
}

#[test]
fn van_der_pol_eps_1e6_by_every_stiff_method() {
    // Mazzia & Magherini, Test Set for IVP Solvers, VDPOL (ε = 1e-6), y(2)
    let want = [0.1706167732170483e1, -0.8928097010247975];
    let y0 = [2.0, 0.0];
    let reference = run(
        "radau5",
        &mut VanDerPolScaled { eps: 1e-6 },
        &y0,
        2.0,
        1e-12,
        1e-12,
    );
    let e = rel_err(&reference.y, &want, 1e-12);
    println!(
        "radau5 reference {:?} rel err {e:.2e} {:?}",
        reference.y, reference.stats
    );
    assert!(e < 1e-8, "radau5 at rtol 1e-12 vs the test set: {e}");
    for (name, rtol, tol) in [
        // bounds about 10-20x the measured errors (radau5 5.5e-7, rodas4
        // 2.5e-7, ode23s 1.9e-4, trbdf2 1.7e-4, esdirk43 1.7e-6, sdirk2_l
        // 3.4e-5, backward Euler 3.0e-3)
        ("radau5", 1e-6, 1e-5),
        ("rodas4", 1e-6, 5e-6),
        ("ode23s", 1e-5, 2e-3),
        ("trbdf2", 1e-6, 2e-3),
        ("esdirk43", 1e-6, 5e-5),
        ("sdirk2_l", 1e-6, 5e-4),
        ("backward_euler", 1e-6, 3e-2),
        ("bdf", 1e-6, 2e-4), // measured 1.3e-5
        ("ndf", 1e-6, 2e-4), // measured 1.5e-5
    ] {
        let r = run(
            name,
            &mut VanDerPolScaled { eps: 1e-6 },
            &y0,
            2.0,
            rtol,
            rtol,
        );
        let e = rel_err(&r.y, &reference.y, 1e-6);
        println!("{name}: rel err {e:.2e}, {:?}", r.stats);
        assert!(e < tol, "{name}: relative error {e} ({:?})", r.y);
    }
}
