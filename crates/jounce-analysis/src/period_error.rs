//! Period elongation and amplitude decay of a structural integrator on the
//! undamped oscillator q'' + ω² q = 0 (jalon-bayo problem 7/1; Hughes,
//! *The Finite Element Method*, 1987, section 9.3; studies.md S8).
//!
//! One step of a member of the generalized-α family (Newmark, HHT-α,
//! generalized-α) maps the scaled state x = (q, h v, h² a) linearly,
//! x_{n+1} = A(Ω) x_n with Ω = ωh ([`amplification_matrix`]). Its principal
//! eigenvalues ρ e^{±iΩ̄} give the numerical frequency Ω̄/h and the
//! per-step amplitude factor ρ; from them
//!
//! ```text
//! period elongation      (T̄ − T)/T = Ω/Ω̄ − 1
//! algorithmic damping    ξ̄ = −ln ρ / Ω̄
//! amplitude decay        AD = 1 − ρ^{2π/Ω̄}      (per numerical cycle)
//! ```
//!
//! ([`closed_form`]). The same three numbers are measured from a computed
//! sequence q_0, q_1, … by Prony's method ([`measured`]): after its
//! spurious root has died out, the sequence obeys the two-term recurrence
//! q_{n+1} = 2ρ cos Ω̄ q_n − ρ² q_{n−1} of the principal pair, whose two
//! coefficients a least-squares fit over the samples recovers.
//!
//! Owns: these formulas. Must not: integrate (the samples come from a run).

use nalgebra::{Complex, Matrix2, Matrix3, Vector2};

use jounce_integrate::structural::StructuralScheme;

/// Period elongation, algorithmic damping and amplitude decay of one
/// method at one Ω = ωh.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct PeriodError {
    /// (T̄ − T)/T.
    pub period_elongation: f64,
    /// ξ̄ = −ln ρ / Ω̄.
    pub damping_ratio: f64,
    /// 1 − ρ^{2π/Ω̄}: the fraction of the amplitude lost per cycle.
    pub amplitude_decay: f64,
    /// ρ, the modulus of the principal eigenvalues.
    pub spectral_radius: f64,
    /// Ω̄, their argument (numerical phase per step).
    pub phase_per_step: f64,
}

impl PeriodError {
    /// The three figures from the principal eigenvalue ρ e^{iΩ̄} at Ω = ωh.
    pub fn from_eigenvalue(omega_h: f64, rho: f64, phase: f64) -> Self {
        Self {
            period_elongation: omega_h / phase - 1.0,
            damping_ratio: -rho.ln() / phase,
            amplitude_decay: 1.0 - rho.powf(2.0 * std::f64::consts::PI / phase),
            spectral_radius: rho,
            phase_per_step: phase,
        }
    }
}

/// The amplification matrix A(Ω) of one step of `scheme` on
/// q'' + ω² q = 0 ([`StructuralScheme::amplification_matrix`]); `None` for
/// a collocation scheme (θ ≠ 1).
pub fn amplification_matrix(scheme: &StructuralScheme, omega_h: f64) -> Option<Matrix3<f64>> {
    scheme.amplification_matrix(omega_h)
}

/// The closed form: the principal (complex, largest-modulus) eigenvalue
/// pair of [`amplification_matrix`]. `None` for a collocation scheme or
/// when Ω is so large that the pair has become real (no oscillation left).
pub fn closed_form(scheme: &StructuralScheme, omega_h: f64) -> Option<PeriodError> {
    let a = amplification_matrix(scheme, omega_h)?;
    let estimate = a
        .complex_eigenvalues()
        .iter()
        .copied()
        .filter(|z: &Complex<f64>| z.im > 0.0)
        .max_by(|x, y| x.norm().total_cmp(&y.norm()))?;
    // polish on the characteristic polynomial z³ − I₁ z² + I₂ z − I₃ (the
    // invariants of A) by Newton's method: the Schur form's eigenvalues
    // carry errors of ~1e-13 near z = 1 that would show in Ω/Ω̄ − 1 ~ Ω²
    let i1 = a.trace();
    let i2 = a[(0, 0)] * a[(1, 1)] - a[(0, 1)] * a[(1, 0)] + a[(0, 0)] * a[(2, 2)]
        - a[(0, 2)] * a[(2, 0)]
        + a[(1, 1)] * a[(2, 2)]
        - a[(1, 2)] * a[(2, 1)];
    let i3 = a.determinant();
    let mut principal = estimate;
    for _ in 0..4 {
        let p = ((principal - i1) * principal + i2) * principal - i3;
        let dp = (principal * 3.0 - i1 * 2.0) * principal + i2;
        if dp.norm() == 0.0 {
            break;
        }
        principal -= p / dp;
    }
    Some(PeriodError::from_eigenvalue(
        omega_h,
        principal.norm(),
        principal.arg(),
    ))
}

/// Measured from samples q_n = q(n h) of a run (Prony's method): the
/// least-squares fit of q_{n+1} = c₁ q_n + c₂ q_{n−1} over n ≥ `skip`
/// (skip the steps in which a spurious root still shows), then
/// ρ = √(−c₂), cos Ω̄ = c₁ / (2ρ). `None` when the fit is singular or the
/// fitted roots are real (the samples do not oscillate).
pub fn measured(samples: &[f64], omega_h: f64, skip: usize) -> Option<PeriodError> {
    let skip = skip.max(1);
    if samples.len() < skip + 4 {
        return None;
    }
    // normal equations of the 2-parameter least-squares fit, scaled by the
    // amplitude so that decaying sequences stay well conditioned
    let mut ata = Matrix2::zeros();
    let mut atb = Vector2::zeros();
    for n in skip..samples.len() - 1 {
        let row = Vector2::new(samples[n], samples[n - 1]);
        ata += row * row.transpose();
        atb += row * samples[n + 1];
    }
    let c = ata.lu().solve(&atb)?;
    let (c1, c2) = (c[0], c[1]);
    let rho2 = -c2;
    if !(rho2 > 0.0) {
        return None;
    }
    let rho = rho2.sqrt();
    let cos = c1 / (2.0 * rho);
    if !(cos.abs() < 1.0) {
        return None;
    }
    Some(PeriodError::from_eigenvalue(omega_h, rho, cos.acos()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The trapezoidal rule (Newmark β = 1/4, γ = 1/2) has ρ = 1 and
    /// Ω̄ = 2 atan(Ω/2) (Hughes 1987, 9.3): no decay, period elongation
    /// Ω/(2 atan(Ω/2)) − 1 ≈ Ω²/12.
    #[test]
    fn trapezoidal_rule_conserves_amplitude_and_elongates_by_omega_squared_over_12() {
        let s = StructuralScheme::newmark(0.25, 0.5).unwrap();
        for om in [0.01, 0.1, 0.5, 1.0] {
            let e = closed_form(&s, om).unwrap();
            let want = om / (2.0 * (om / 2.0).atan()) - 1.0;
            assert!((e.period_elongation - want).abs() < 1e-12, "{om}: {e:?}");
            assert!((e.spectral_radius - 1.0).abs() < 1e-12, "{om}: {e:?}");
            assert!(e.amplitude_decay.abs() < 1e-10, "{om}: {e:?}");
        }
        let small = closed_form(&s, 0.01).unwrap();
        assert!((small.period_elongation / (1e-4 / 12.0) - 1.0).abs() < 1e-3);
    }

    /// HHT-α damps (ρ < 1) and Newmark γ = 1, β = 1/2 damps far more; both
    /// elongate the period.
    #[test]
    fn dissipative_members_decay() {
        let hht = closed_form(&StructuralScheme::hht(-0.1).unwrap(), 0.1).unwrap();
        let be = closed_form(&StructuralScheme::newmark(0.5, 1.0).unwrap(), 0.1).unwrap();
        assert!(hht.spectral_radius < 1.0 && hht.amplitude_decay > 0.0);
        assert!(
            be.amplitude_decay > 10.0 * hht.amplitude_decay,
            "{be:?} {hht:?}"
        );
        assert!(hht.period_elongation > 0.0 && be.period_elongation > 0.0);
        // first-order Newmark γ = 1: ξ̄ ≈ (γ − 1/2) Ω / 2 for small Ω
        // (Hughes 1987, eq. 9.3.27)
        let be_small = closed_form(&StructuralScheme::newmark(0.5, 1.0).unwrap(), 1e-3).unwrap();
        assert!((be_small.damping_ratio / (0.25 * 1e-3) - 1.0).abs() < 1e-2);
    }

    /// Prony's fit recovers ρ and Ω̄ of a sequence built from them, also
    /// with a decaying spurious component that `skip` leaves out.
    #[test]
    fn measurement_recovers_a_known_sequence() {
        let (rho, phase, om) = (0.999f64, 0.0998, 0.1);
        let q: Vec<f64> = (0..200)
            .map(|n| {
                let n = n as f64;
                rho.powf(n) * (phase * n + 0.3).cos() + 0.2 * (-0.4f64).powf(n)
            })
            .collect();
        let e = measured(&q, om, 60).unwrap();
        let want = PeriodError::from_eigenvalue(om, rho, phase);
        // the normal equations square the fit's condition number
        assert!((e.period_elongation - want.period_elongation).abs() < 1e-10);
        assert!((e.amplitude_decay - want.amplitude_decay).abs() < 1e-10);
        // not oscillating: refused
        let mono: Vec<f64> = (0..50).map(|n| 0.9f64.powi(n)).collect();
        assert!(measured(&mono, om, 1).is_none());
    }
}
