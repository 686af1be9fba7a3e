//! The energy drift of an explicit Runge-Kutta method on an undamped
//! oscillation is its numerical dissipation, 1 − |R(iωh)|² per step, and
//! nothing else.
//!
//! On a linear system y' = Ay one step is exactly y₁ = R(hA) y₀, so each
//! undamped mode's energy is multiplied by |R(iω_j h)|² at every step and
//! the energy after the run follows from the step sizes alone. The problem
//! here is the S2 two-mass chain, test 1b, of `shared/studies.md`
//! (k1 = 2.0125e7 N/m, k2 = 994.92 N/m, unit masses, undamped; modes 714 Hz
//! and 5.02 Hz) written as a plain ODE, with no multibody code involved.
//!
//! DOPRI5's R(z) − e^z = z⁶/3600 + O(z⁷), so 1 − |R(iy)|² ≈ y⁶/1800, and
//! a run of N equal steps over T loses ≈ ωT y⁵/1800 of the mode's energy
//! (y = ωh). Keeping 714 periods of the fast mode within 1e-6 takes at
//! least 120 equal steps per period; the error estimate at rtol 1e-9 asks
//! for 96 (unequal) ones and the run loses 7.8e-6 of the energy, exactly
//! what R predicts and exactly what scipy's RK45 (the same method) loses in
//! the same 68215 steps. That is why DOPRI5 cannot keep S2 test 1b's energy
//! within 1e-6 at rtol 1e-9 in any formulation, and the foundation test
//! runs it at 1e-11.

use jounce_integrate::explicit;
use jounce_integrate::nalgebra::Complex;
use jounce_integrate::*;

const K1: f64 = 2.0125e7;
const K2: f64 = 994.92;
const L1: f64 = 0.10;
const L2: f64 = 0.30;
const Y0: [f64; 4] = [0.15, 0.40, 0.0, 0.0];

/// S2 test 1b: x₁'' = −k₁(x₁ − l₁) + k₂(x₂ − x₁ − l₂), x₂'' = −k₂(x₂ − x₁ − l₂).
struct TwoMassChain;

impl OdeProblem for TwoMassChain {
    fn dim(&self) -> usize {
        4
    }
    fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        let s2 = y[1] - y[0] - L2;
        dy[0] = y[2];
        dy[1] = y[3];
        dy[2] = -K1 * (y[0] - L1) + K2 * s2;
        dy[3] = -K2 * s2;
        Ok(())
    }
}

/// Modes of K = [[k1 + k2, −k2], [−k2, k2]] (unit masses): (ω_j, unit
/// mode shape φ_j).
fn modes() -> [(f64, [f64; 2]); 2] {
    let (a, b, d) = (K1 + K2, -K2, K2);
    let mean = 0.5 * (a + d);
    let rad = (0.25 * (a - d) * (a - d) + b * b).sqrt();
    [mean + rad, mean - rad].map(|lam| {
        // (K − λI) φ = 0  =>  φ ∝ (−b, a − λ)
        let (p, q) = (-b, a - lam);
        let n = p.hypot(q);
        (lam.sqrt(), [p / n, q / n])
    })
}

/// Energy of each mode: ½(η'² + ω² η²), η = φᵀ(x − x_eq).
fn modal_energies(y: &[f64]) -> [f64; 2] {
    let u = [y[0] - L1, y[1] - L1 - L2];
    modes().map(|(w, phi)| {
        let eta = phi[0] * u[0] + phi[1] * u[1];
        let deta = phi[0] * y[2] + phi[1] * y[3];
        0.5 * (deta * deta + w * w * eta * eta)
    })
}

fn energy(y: &[f64]) -> f64 {
    let s2 = y[1] - y[0] - L2;
    0.5 * (y[2] * y[2] + y[3] * y[3] + K1 * (y[0] - L1).powi(2) + K2 * s2 * s2)
}

/// 1 − |R(iωh)|², the share of a mode's energy one DOPRI5 step removes.
fn dissipation(omega_h: f64) -> f64 {
    let r = explicit::tableau("dopri5")
        .unwrap()
        .stability_function(Complex::new(0.0, omega_h));
    1.0 - r.norm_sqr()
}

struct Run {
    drift: f64,
    predicted: f64,
    steps: usize,
}

fn run(tol: f64) -> Run {
    let opts = SolverOptions::default().with_tol(tol, tol);
    let mut st = method::build("dopri5", &opts).unwrap();
    let mut rec = Recorder::default();
    let r = solve(
        &mut TwoMassChain,
        st.as_mut(),
        0.0,
        &Y0,
        1.0,
        &opts,
        &mut rec,
    )
    .unwrap();
    let e0 = energy(&Y0);
    // each mode keeps Π_k |R(iω h_k)|² of its energy
    let left: f64 = modes()
        .iter()
        .zip(modal_energies(&Y0))
        .map(|((w, _), e)| {
            e * rec
                .steps
                .iter()
                .map(|&(_, h)| 1.0 - dissipation(w * h))
                .product::<f64>()
        })
        .sum();
    Run {
        drift: (e0 - energy(&r.y)) / e0,
        predicted: (e0 - left) / e0,
        steps: rec.steps.len(),
    }
}

#[test]
fn modal_energies_add_up_to_the_energy() {
    let e = modal_energies(&Y0);
    assert!(((e[0] + e[1]) - energy(&Y0)).abs() < 1e-9 * energy(&Y0));
    let f = modes().map(|(w, _)| w / (2.0 * std::f64::consts::PI));
    // studies.md S2: 714 Hz and 5.02 Hz
    assert!(
        (f[0] - 714.0).abs() < 0.5 && (f[1] - 5.02).abs() < 0.005,
        "{f:?}"
    );
}

#[test]
fn dopri5_dissipation_per_step_is_y6_over_1800() {
    for y in [0.02, 0.05, 0.1] {
        let d = dissipation(y);
        let lead = y.powi(6) / 1800.0;
        assert!(
            (d / lead - 1.0).abs() < 0.1 * y / 0.05,
            "y = {y}: 1 − |R(iy)|² = {d:e}, y⁶/1800 = {lead:e}"
        );
    }
}

#[test]
fn dopri5_energy_drift_is_exactly_its_numerical_dissipation() {
    for tol in [1e-9, 1e-10, 1e-11] {
        let r = run(tol);
        println!(
            "rtol = atol = {tol:e}: {} steps, energy drift {:.4e}, predicted from R(iωh) {:.4e}",
            r.steps, r.drift, r.predicted
        );
        assert!(r.drift > 0.0, "an explicit RK method loses energy");
        assert!(
            (r.drift / r.predicted - 1.0).abs() < 1e-3,
            "tol {tol:e}: drift {:e} is not the dissipation {:e}",
            r.drift,
            r.predicted
        );
    }
}

#[test]
fn dopri5_at_rtol_1e9_cannot_keep_s2_test_1b_within_1e6() {
    let (w_fast, _) = modes()[0];
    let share = modal_energies(&Y0)[0] / energy(&Y0);
    // fewest equal steps over [0, 1] s that keep the drift within 1e-6
    // (|·|: beyond the stability bound |R| > 1 and the energy grows)
    let n_min = (1usize..)
        .map(|k| k * 1000)
        .find(|&n| share * n as f64 * dissipation(w_fast / n as f64).abs() <= 1e-6)
        .unwrap();
    let per_period = |n: usize| n as f64 * 2.0 * std::f64::consts::PI / w_fast;
    let at_1e9 = run(1e-9);
    let at_1e11 = run(1e-11);
    println!(
        "1e-6 needs >= {n_min} steps ({:.0} per period of the 714 Hz mode); \
         rtol 1e-9 takes {} ({:.0} per period, drift {:.3e}), 1e-11 takes {} (drift {:.3e})",
        per_period(n_min),
        at_1e9.steps,
        per_period(at_1e9.steps),
        at_1e9.drift,
        at_1e11.steps,
        at_1e11.drift
    );
    assert!(at_1e9.steps < n_min && at_1e9.drift > 1e-6);
    assert!(at_1e11.steps >= n_min && at_1e11.drift < 1e-6);
}
