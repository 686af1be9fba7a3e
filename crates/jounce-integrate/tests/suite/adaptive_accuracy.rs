//! Adaptive explicit methods against reference solutions: Arenstorf's
//! orbit, the Kepler problem, the Pleiades.

use jounce_integrate::testkit::{
    kepler_exact, max_abs_diff, pleiades_y0, Arenstorf, Kepler, Pleiades, ARENSTORF_T,
    ARENSTORF_Y0, PLEIADES_REF,
};
use jounce_integrate::*;

const ADAPTIVE: [&str; 5] = ["dopri5", "rkf45", "cash_karp", "cash_karp_vo", "dop853"];

/// The two tolerances (rtol = atol) every problem is run at.
const TOLS: [f64; 2] = [1e-7, 1e-10];

/// Global errors at the two tolerances must be below 10·κ·tol, κ the
/// problem's error amplification (local errors of size tol grow by about
/// κ over the interval; κ = 1 for a well-conditioned problem), and must
/// fall by at least 100 when tol falls by 1000 (tolerance proportionality:
/// err ∝ tol^(p/(p+1)) at least).
fn check(problem: &str, name: &str, kappa: f64, errs: [f64; 2]) {
    for (tol, err) in TOLS.iter().zip(errs) {
        println!(
            "{problem} {name} tol {tol:e}: err {err:.3e} = {:.1} tol",
            err / tol
        );
        assert!(
            err <= 10.0 * kappa * tol,
            "{problem}, {name}: global error {err:e} above 10·{kappa:e}·tol at tol {tol:e}"
        );
    }
    assert!(
        errs[0] / errs[1] >= 100.0,
        "{problem}, {name}: error not proportional to the tolerance: {errs:?}"
    );
}

fn run(name: &str, p: &mut dyn OdeProblem, y0: &[f64], t1: f64, tol: f64) -> Solved {
    let opts = SolverOptions::default().with_tol(tol, tol);
    let mut st = method::build(name, &opts).unwrap();
    solve(p, st.as_mut(), 0.0, y0, t1, &opts, &mut testkit::Discard)
        .unwrap_or_else(|e| panic!("{name} at tol {tol}: {e}"))
}

#[test]
fn arenstorf_orbit_closes_after_one_period() {
    // the close approaches to the Earth amplify local errors strongly
    // over one period: κ = 5e4 (measured; compare HNW I, Section II.0)
    for name in ADAPTIVE {
        let errs = TOLS.map(|tol| {
            let r = run(name, &mut Arenstorf, &ARENSTORF_Y0, ARENSTORF_T, tol);
            max_abs_diff(&r.y, &ARENSTORF_Y0)
        });
        check("arenstorf", name, 5e4, errs);
    }
}

#[test]
fn kepler_problem_matches_keplers_equation() {
    let e = 0.5;
    let y0 = kepler_exact(e, 0.0);
    assert!((y0[0] - 0.5).abs() < 1e-15 && (y0[3] - 3f64.sqrt()).abs() < 1e-15);
    let t1 = 20.0;
    let ex = kepler_exact(e, t1);
    // over ~3 periods the phase error grows linearly: κ = 5e3
    for name in ADAPTIVE {
        let errs = TOLS.map(|tol| max_abs_diff(&run(name, &mut Kepler, &y0, t1, tol).y, &ex));
        check("kepler", name, 5e3, errs);
    }
}

#[test]
fn pleiades_match_the_test_set_reference() {
    let y0 = pleiades_y0();
    // dop853 at tol 1e-13 reproduces the published reference
    let tight = run("dop853", &mut Pleiades, &y0, 3.0, 1e-13);
    let e_tight = max_abs_diff(&tight.y, &PLEIADES_REF);
    println!("pleiades dop853 tol 1e-13: err {e_tight:.2e}");
    assert!(e_tight < 1e-9, "{e_tight}");
    // close encounters near t ≈ 1.23 and 1.44 amplify errors: κ = 1e4
    for name in ADAPTIVE {
        let errs =
            TOLS.map(|tol| max_abs_diff(&run(name, &mut Pleiades, &y0, 3.0, tol).y, &PLEIADES_REF));
        check("pleiades", name, 1e4, errs);
    }
}

#[test]
fn well_conditioned_problem_meets_ten_times_the_tolerance() {
    // x(t) = [sin(1/t), cos(1/t), t] on [1/π, 3]: errors do not grow (κ = 1)
    let t0 = 1.0 / std::f64::consts::PI;
    let ex = testkit::InverseTimeRotation::exact(3.0);
    for name in ADAPTIVE {
        let mut worst = 0.0f64;
        for tol in [1e-5, 1e-7, 1e-10] {
            let opts = SolverOptions::default().with_tol(tol, tol);
            let mut st = method::build(name, &opts).unwrap();
            let y0 = testkit::InverseTimeRotation::exact(t0);
            let r = solve(
                &mut testkit::InverseTimeRotation,
                st.as_mut(),
                t0,
                &y0,
                3.0,
                &opts,
                &mut testkit::Discard,
            )
            .unwrap();
            worst = worst.max(max_abs_diff(&r.y, &ex) / tol);
        }
        println!("inverse-time rotation {name}: worst err/tol {worst:.2}");
        // rkf45 propagates its 4th-order solution without local
        // extrapolation; its error per step is tol, and it accumulates
        let bound = if name == "rkf45" { 100.0 } else { 10.0 };
        assert!(worst <= bound, "{name}: global error {worst} tol");
    }
}
