//! The structural family on the index-3 DAE M q'' + Φ_qᵀλ = Q, Φ = 0
//! (Arnold & Brüls 2007; HHT-I3 of Negrut et al. 2007), on a pendulum in
//! Cartesian coordinates whose exact motion comes from the angle ODE:
//! second order in positions, velocities and multipliers at fixed steps,
//! positions on the constraint to the Newton tolerance at every step,
//! adaptive runs within their tolerance.

use jounce_integrate::testkit::CartesianPendulum;
use jounce_integrate::{method, solve, Recorder, SolverOptions};

const G: f64 = 9.81;
const L: f64 = 1.3;
const MASS: f64 = 0.7;

/// A point mass on a rigid massless rod of length L pinned at the origin
/// (the testkit's Cartesian pendulum, undamped): q = (x, y),
/// Φ = (x² + y² − L²)/2, M q'' = (0, −m g) − Φ_qᵀλ, so λ = tension / L.
fn pendulum() -> CartesianPendulum {
    CartesianPendulum {
        mass: MASS,
        length: L,
        gravity: G,
        damping: 0.0,
    }
}

const THETA0: f64 = 1.1;
const OMEGA0: f64 = 0.4;

/// Exact (q, v, λ) at t from a dop853 run of the angle ODE at 1e-13.
fn exact(t: f64) -> [f64; 5] {
    pendulum().reference(THETA0, OMEGA0, t)
}

fn y0() -> Vec<f64> {
    let e = exact(0.0);
    e.to_vec()
}

/// Run `name` on the pendulum to t_end; the recorder keeps every step.
fn run(name: &str, opts: &SolverOptions, t_end: f64) -> (Vec<f64>, Recorder, u64) {
    let mut st = method::build(name, opts).unwrap();
    let mut rec = Recorder::default();
    let r = solve(
        &mut pendulum(),
        st.as_mut(),
        0.0,
        &y0(),
        t_end,
        opts,
        &mut rec,
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    (r.y, rec, r.stats.n_accept)
}

/// Errors (q, v, λ) at t = 1 against the exact solution.
fn errors(y: &[f64], e: &[f64; 5]) -> [f64; 3] {
    [
        (y[0] - e[0]).abs().max((y[1] - e[1]).abs()),
        (y[2] - e[2]).abs().max((y[3] - e[3]).abs()),
        (y[4] - e[4]).abs(),
    ]
}

#[test]
fn fixed_step_index3_is_second_order_in_positions_velocities_and_multipliers() {
    let e = exact(1.0);
    for name in ["newmark", "hht", "generalized_alpha"] {
        let hs = [1e-2, 5e-3, 2.5e-3, 1.25e-3, 6.25e-4];
        let errs: Vec<[f64; 3]> = hs
            .iter()
            .map(|&h| {
                let (y, _, n) = run(name, &SolverOptions::default().with_fixed_step(h), 1.0);
                assert_eq!(n, (1.0 / h).round() as u64, "{name}");
                errors(&y, &e)
            })
            .collect();
        for (c, what) in ["q", "v", "lambda"].iter().enumerate() {
            let slope = (errs[0][c] / errs[hs.len() - 1][c]).log2() / (hs.len() - 1) as f64;
            eprintln!(
                "{name}: {what} errors {:?}, slope {slope:.3}",
                errs.iter().map(|e| e[c]).collect::<Vec<_>>()
            );
            assert!((slope - 2.0).abs() < 0.2, "{name} {what}: slope {slope}");
        }
    }
}

#[test]
fn index3_positions_stay_on_the_constraint_at_every_step() {
    for name in ["hht", "generalized_alpha", "newmark", "midpoint_rule"] {
        let opts = SolverOptions::default().with_fixed_step(1e-2);
        let (_, rec, _) = run(name, &opts, 20.0);
        let worst = rec
            .y
            .iter()
            .map(|y| (0.5 * (y[0] * y[0] + y[1] * y[1] - L * L)).abs())
            .fold(0.0, f64::max);
        eprintln!("{name}: max |Φ| over 2000 steps {worst:e}");
        assert!(worst < 1e-12, "{name}: |Φ| = {worst:e}");
    }
}

/// Adaptive runs: the run's accumulated local error
/// (`Stats::accumulated_error`, the a-posteriori check behind `jounce
/// run`'s accuracy warning) must bound the global error honestly, and
/// tighter tolerances must give smaller errors. On the index-3 equations
/// the control is tolerance proportional (`structural/driver.rs`):
/// measured 0.2–0.3 tol in q and 1.0–1.2 in v at 1e-3, 1e-5, 1e-7 for
/// hht, generalized-α and newmark (101–11 385 steps).
#[test]
fn adaptive_index3_errors_are_bounded_by_the_accumulated_estimate() {
    let e = exact(1.0);
    for name in ["hht", "generalized_alpha", "newmark"] {
        let mut last = f64::INFINITY;
        for tol in [1e-3, 1e-5, 1e-7] {
            let opts = SolverOptions::default().with_tol(tol, tol);
            let mut st = method::build(name, &opts).unwrap();
            let r = solve(
                &mut pendulum(),
                st.as_mut(),
                0.0,
                &y0(),
                1.0,
                &opts,
                &mut jounce_integrate::Discard,
            )
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            let err = errors(&r.y, &e);
            let acc = r.stats.accumulated_error;
            eprintln!(
                "{name} tol {tol:e}: {} steps, errors q {:.2e} v {:.2e} ({:.0} and {:.0} x tol), \
                 accumulated estimate {acc:.0} x tol",
                r.stats.n_accept,
                err[0],
                err[1],
                err[0] / tol,
                err[1] / tol
            );
            assert!(
                err[0] <= 5.0 * acc * tol,
                "{name} {tol}: q {err:?}, estimate {acc}"
            );
            assert!(err[0] < 0.5 * last, "{name} {tol}: no convergence in tol");
            last = err[0];
        }
    }
}

#[test]
fn wilson_is_refused_on_the_index3_form() {
    let opts = SolverOptions::default().with_fixed_step(1e-2);
    let mut st = method::build("wilson", &opts).unwrap();
    let err = solve(
        &mut pendulum(),
        st.as_mut(),
        0.0,
        &y0(),
        1.0,
        &opts,
        &mut jounce_integrate::Discard,
    )
    .unwrap_err();
    assert!(err.to_string().contains("index-3"), "{err}");
}

/// newmark with energy_conserving = 1 (discrete-gradient constraint
/// forces, velocities projected at the step's kinetic energy): on the
/// undamped pendulum at a step of a tenth of its period (ωh ≈ 0.3) the
/// energy stays at its initial value to 1e-10 relative over 200 periods
/// (measured 2.9e-12: the Newton tolerance of 2000 steps),
/// positions and velocities on their constraints at every step, while the
/// end-point form (whose velocity projection dissipates) loses energy
/// (118 % at this step); and
/// the method stays second order in q, v and λ.
#[test]
fn energy_conserving_newmark_keeps_the_energy_and_both_constraints() {
    let energy = |y: &[f64]| 0.5 * MASS * (y[2] * y[2] + y[3] * y[3]) + MASS * G * y[1];
    let e0 = energy(&y0());
    let h = 0.2;
    let conserving = SolverOptions::default()
        .with_fixed_step(h)
        .with_param("energy_conserving", 1.0);
    let end_point = SolverOptions::default().with_fixed_step(h);
    let drift = |rec: &Recorder| {
        rec.y
            .iter()
            .map(|y| ((energy(y) - e0) / e0).abs())
            .fold(0.0, f64::max)
    };
    let (_, rec, n) = run("newmark", &conserving, 400.0);
    assert_eq!(n, 2000);
    let de = drift(&rec);
    let (mut phi, mut dphi) = (0.0f64, 0.0f64);
    for y in &rec.y {
        phi = phi.max((0.5 * (y[0] * y[0] + y[1] * y[1] - L * L)).abs());
        dphi = dphi.max((y[0] * y[2] + y[1] * y[3]).abs());
    }
    let (_, rec_ep, _) = run("newmark", &end_point, 400.0);
    let de_ep = drift(&rec_ep);
    eprintln!(
        "energy_conserving: energy {de:e}, |Φ| {phi:e}, |Φ_q v| {dphi:e}; end-point form: energy {de_ep:e}"
    );
    assert!(de < 1e-10, "energy drift {de:e}");
    assert!(phi < 1e-12 && dphi < 1e-12, "|Φ| {phi:e}, |Φ_q v| {dphi:e}");
    assert!(de_ep > 1e3 * de.max(1e-16), "end-point form: {de_ep:e}");

    let e = exact(1.0);
    let hs = [1e-2, 5e-3, 2.5e-3, 1.25e-3, 6.25e-4];
    let errs: Vec<[f64; 3]> = hs
        .iter()
        .map(|&h| {
            let o = SolverOptions::default()
                .with_fixed_step(h)
                .with_param("energy_conserving", 1.0);
            errors(&run("newmark", &o, 1.0).0, &e)
        })
        .collect();
    for (c, what) in ["q", "v", "lambda"].iter().enumerate() {
        let slope = (errs[0][c] / errs[hs.len() - 1][c]).log2() / (hs.len() - 1) as f64;
        eprintln!("energy_conserving: {what} slope {slope:.3}");
        assert!((slope - 2.0).abs() < 0.2, "{what}: slope {slope}");
    }
}

/// energy_conserving is the trapezoidal rule at fixed steps: other β, γ,
/// other values, and adaptive steps are refused in words.
#[test]
fn energy_conserving_newmark_refuses_what_it_is_not() {
    let bad = SolverOptions::default()
        .with_fixed_step(1e-2)
        .with_param("energy_conserving", 1.0)
        .with_param("gamma", 0.6);
    let e = method::build("newmark", &bad)
        .err()
        .expect("gamma 0.6")
        .to_string();
    assert!(e.contains("beta = 1/4, gamma = 1/2"), "{e}");
    let two = SolverOptions::default().with_param("energy_conserving", 2.0);
    let e = method::build("newmark", &two).err().expect("2").to_string();
    assert!(e.contains("must be 0") && e.contains("got 2"), "{e}");
    let adaptive = SolverOptions::default().with_param("energy_conserving", 1.0);
    let mut st = method::build("newmark", &adaptive).unwrap();
    let e = match solve(
        &mut pendulum(),
        st.as_mut(),
        0.0,
        &y0(),
        1.0,
        &adaptive,
        &mut Recorder::default(),
    ) {
        Ok(_) => panic!("an adaptive energy_conserving run must be refused"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("fixed step"), "{e}");
}
