//! Linear stability: one step of each implicit method on y' = λy equals the
//! stability function R(z) computed from its tableau in complex arithmetic,
//! and R has the registered stability class (HW II, IV.3).

use jounce_integrate::implicit::radau5::RadauCoeffs;
use jounce_integrate::implicit::stability::{rk_stability, C64};
use jounce_integrate::implicit::{DirkTableau, RosenbrockTableau};
use jounce_integrate::method::Stability;
use jounce_integrate::testkit::{run_fixed, LinearTest};
use jounce_integrate::*;

/// R(z) of a registered implicit method, from its coefficients.
fn stability_function(name: &str) -> Box<dyn Fn(C64) -> C64> {
    let dirk = |t: DirkTableau| -> Box<dyn Fn(C64) -> C64> { Box::new(move |z| t.stability(z)) };
    match name {
        "backward_euler" => dirk(DirkTableau::backward_euler()),
        "trapezoidal" => dirk(DirkTableau::trapezoidal()),
        "implicit_midpoint" => dirk(DirkTableau::implicit_midpoint()),
        "sdirk2" | "sdirk2_l" => {
            dirk(DirkTableau::norsett_sdirk2("sdirk2", DirkTableau::sdirk2_l_alpha()).unwrap())
        }
        "sdirk3" => {
            dirk(DirkTableau::norsett_sdirk2("sdirk3", DirkTableau::sdirk3_alpha()).unwrap())
        }
        "trbdf2" => dirk(DirkTableau::trbdf2()),
        "esdirk43" => dirk(DirkTableau::esdirk43()),
        "radau5" => {
            let co = RadauCoeffs::new();
            let a = co.a_rows();
            let b = a[2].clone();
            Box::new(move |z| rk_stability(&a, &b, z))
        }
        "ode23s" => {
            let t = RosenbrockTableau::ode23s();
            Box::new(move |z| t.stability(z))
        }
        "rodas4" => {
            let t = RosenbrockTableau::rodas4();
            Box::new(move |z| t.stability(z))
        }
        other => panic!("no stability function for {other}"),
    }
}

const IMPLICIT: [&str; 11] = [
    "backward_euler",
    "trapezoidal",
    "implicit_midpoint",
    "sdirk2",
    "sdirk2_l",
    "sdirk3",
    "trbdf2",
    "esdirk43",
    "radau5",
    "ode23s",
    "rodas4",
];

#[test]
fn one_step_on_the_linear_test_equation_equals_r_of_z() {
    let opts = SolverOptions::default().with_tol(1e-14, 1e-14);
    let h = 0.5;
    for name in IMPLICIT {
        let r = stability_function(name);
        for (a, b) in [
            (-0.6, 0.4),
            (-4.0, 2.0),
            (-30.0, 0.0),
            (0.3, 1.5),
            (0.0, 3.0),
        ] {
            let mut p = LinearTest { a, b };
            let y = run_fixed(name, &mut p, 0.0, &[1.0, 0.0], h, h, &opts).unwrap();
            let want = r(C64::new(a * h, b * h));
            let got = C64::new(y[0], y[1]);
            assert!(
                (got - want).norm() <= 1e-10 * want.norm().max(1.0),
                "{name}: z = {} : one step gave {got}, R(z) = {want}",
                C64::new(a * h, b * h)
            );
        }
    }
}

#[test]
fn stability_functions_have_the_registered_class() {
    for name in IMPLICIT {
        let info = method::find(name).unwrap().info;
        let r = stability_function(name);
        assert!(
            matches!(info.stability, Stability::AStable | Stability::LStable),
            "{name}"
        );
        // imaginary axis
        for k in 0..=400 {
            let y = 10f64.powf(-3.0 + 9.0 * k as f64 / 400.0);
            let v = r(C64::new(0.0, y)).norm();
            assert!(v <= 1.0 + 1e-12, "{name}: |R(i·{y})| = {v}");
        }
        // left half plane
        for i in 0..=60 {
            let rad = 10f64.powf(-3.0 + 9.0 * i as f64 / 60.0);
            for j in 0..=36 {
                let th = std::f64::consts::FRAC_PI_2 + std::f64::consts::PI * j as f64 / 36.0;
                let z = C64::from_polar(rad, th);
                let v = r(z).norm();
                assert!(v <= 1.0 + 1e-12, "{name}: |R({z})| = {v}");
            }
        }
        let at_inf = r(C64::new(-1e8, 0.0)).norm();
        match info.stability {
            Stability::LStable => assert!(at_inf < 1e-6, "{name}: |R(-1e8)| = {at_inf}"),
            _ => assert!(
                at_inf > 0.1,
                "{name}: A-stable only but |R(-1e8)| = {at_inf}"
            ),
        }
    }
    // the values of R(∞) the literature gives
    let r3 = stability_function("sdirk3")(C64::new(-1e7, 0.0)).re;
    assert!(
        (r3 - (1.0 - 3f64.sqrt())).abs() < 1e-5,
        "sdirk3 R(∞) = {r3}"
    );
    let rt = stability_function("trapezoidal")(C64::new(-1e7, 0.0)).re;
    assert!((rt + 1.0).abs() < 1e-5, "trapezoidal R(∞) = {rt}");
}
