//! Adaptive explicit methods against reference solutions: Arenstorf's
//! orbit, the Kepler problem, the Pleiades.

use jounce_integrate::testkit::max_abs_diff;
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

/// Arenstorf's restricted three-body orbit (HNW I, eq. II.0.1): a periodic
/// orbit of a satellite in the Earth–Moon system, μ = 0.012277471.
struct Arenstorf;
const MU: f64 = 0.012277471;
/// Period and initial value as published (HNW I, eq. II.0.2), all digits.
#[allow(clippy::excessive_precision)]
const ARENSTORF_T: f64 = 17.0652165601579625588917206249;
#[allow(clippy::excessive_precision)]
const ARENSTORF_Y0: [f64; 4] = [0.994, 0.0, 0.0, -2.00158510637908252240537862224];

impl OdeProblem for Arenstorf {
    fn dim(&self) -> usize {
        4
    }
    fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        let mup = 1.0 - MU;
        let d1 = ((y[0] + MU).powi(2) + y[1] * y[1]).powf(1.5);
        let d2 = ((y[0] - mup).powi(2) + y[1] * y[1]).powf(1.5);
        dy[0] = y[2];
        dy[1] = y[3];
        dy[2] = y[0] + 2.0 * y[3] - mup * (y[0] + MU) / d1 - MU * (y[0] - mup) / d2;
        dy[3] = y[1] - 2.0 * y[2] - mup * y[1] / d1 - MU * y[1] / d2;
        Ok(())
    }
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

/// Kepler two-body problem q'' = −q/|q|³ (HNW I, eq. I.14.10) with
/// eccentricity e: q(0) = (1 − e, 0), p(0) = (0, sqrt((1+e)/(1−e))).
struct Kepler;

impl OdeProblem for Kepler {
    fn dim(&self) -> usize {
        4
    }
    fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        let r3 = (y[0] * y[0] + y[1] * y[1]).powf(1.5);
        dy[0] = y[2];
        dy[1] = y[3];
        dy[2] = -y[0] / r3;
        dy[3] = -y[1] / r3;
        Ok(())
    }
}

/// Exact Kepler solution at t: solve E − e sin E = t by Newton, then
/// q = (cos E − e, sqrt(1−e²) sin E), p = q' (period 2π).
fn kepler_exact(e: f64, t: f64) -> [f64; 4] {
    let mut ea = t;
    for _ in 0..50 {
        let d = (ea - e * ea.sin() - t) / (1.0 - e * ea.cos());
        ea -= d;
        if d.abs() < 1e-16 {
            break;
        }
    }
    let (s, c) = ea.sin_cos();
    let w = (1.0 - e * e).sqrt();
    let den = 1.0 - e * c;
    [c - e, w * s, -s / den, w * c / den]
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

/// The Pleiades: seven bodies of masses m_i = i in the plane (HNW I,
/// Section II.10, eq. (10.3)), y = (x₁..x₇, y₁..y₇, x'₁..x'₇, y'₁..y'₇).
struct Pleiades;

impl OdeProblem for Pleiades {
    fn dim(&self) -> usize {
        28
    }
    fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        dy[..14].copy_from_slice(&y[14..]);
        for i in 0..7 {
            let (mut ax, mut ay) = (0.0, 0.0);
            for j in 0..7 {
                if j != i {
                    let (dx, dyy) = (y[j] - y[i], y[7 + j] - y[7 + i]);
                    let r3 = (dx * dx + dyy * dyy).powf(1.5);
                    ax += (j + 1) as f64 * dx / r3;
                    ay += (j + 1) as f64 * dyy / r3;
                }
            }
            dy[14 + i] = ax;
            dy[21 + i] = ay;
        }
        Ok(())
    }
}

fn pleiades_y0() -> Vec<f64> {
    let mut y = vec![3.0, 3.0, -1.0, -3.0, 2.0, -2.0, 2.0];
    y.extend([3.0, -3.0, 2.0, 0.0, 0.0, -4.0, 4.0]);
    y.extend([0.0, 0.0, 0.0, 0.0, 0.0, 1.75, -1.5]);
    y.extend([0.0, 0.0, 0.0, -1.25, 1.0, 0.0, 0.0]);
    y
}

/// The reference solution at t = 3 of the Test Set for IVP Solvers
/// (Mazzia & Magherini, problem PLEI, report plei.pdf, Section 3.4), in
/// the same component order.
#[allow(clippy::excessive_precision)]
const PLEIADES_REF: [f64; 28] = [
    0.3706139143970502,
    0.3237284092057233e1,
    -0.3222559032418324e1,
    0.6597091455775310,
    0.3425581707156584,
    0.1562172101400631e1,
    -0.7003092922212495,
    -0.3943437585517392e1,
    -0.3271380973972550e1,
    0.5225081843456543e1,
    -0.2590612434977470e1,
    0.1198213693392275e1,
    -0.2429682344935824,
    0.1091449240428980e1,
    0.3417003806314313e1,
    0.1354584501625501e1,
    -0.2590065597810775e1,
    0.2025053734714242e1,
    -0.1155815100160448e1,
    -0.8072988170223021,
    0.5952396354208710,
    -0.3741244961234010e1,
    0.3773459685750630,
    0.9386858869551073,
    0.3667922227200571,
    -0.3474046353808490,
    0.2344915448180937e1,
    -0.1947020434263292e1,
];

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
