//! Is a fixed step stable for this model? The linearisation y' ≈ J y at the
//! start of the run (J = ∂f/∂y of the formulation's ODE) and the method's
//! linear stability function R(z) decide it before the run.
//!
//! One step of size h multiplies the component of the solution along an
//! eigenvector of J (eigenvalue λ) by R(hλ) (Hairer & Wanner, *Solving
//! ODEs II*, Section IV.2); the exact flow multiplies it by e^{hλ}. Over
//! the N = ⌈T/h⌉ steps of a run the method amplifies the mode, beyond what
//! the model itself does, by
//!
//! G(h) = max over λ of (|R(hλ)| / max(1, |e^{hλ}|))^N,
//!
//! which is 1 for a mode the method damps and grows geometrically with N
//! for one outside its stability region. The check refuses a step with
//! G > [`GROWTH_LIMIT`] and names the mode, |R(hλ)| and the largest step
//! with G ≤ [`GROWTH_LIMIT`] (bisection on h). Measuring growth over the
//! run rather than |R| ≤ 1 per step admits methods that amplify an
//! undamped mode slowly (forward Euler on a pendulum at a small step: its
//! energy error is an accuracy matter, reported after the run) and refuses
//! the same method where the amplification ruins the answer.

use nalgebra::{Complex, DMatrix};

use jounce_integrate::{EvalError, OdeProblem};

/// Growth factor over the run above which a fixed step is refused.
pub const GROWTH_LIMIT: f64 = 10.0;

/// Largest state dimension for which the check computes all eigenvalues
/// (O(n³)); beyond it the check is skipped.
pub const MAX_DIMENSION: usize = 600;

/// Iterations of the Schur decomposition before the eigenvalues are given
/// up (a well-scaled matrix needs a few per eigenvalue).
pub const MAX_SCHUR_ITERATIONS: usize = 10_000;

/// The worst mode under a fixed step.
#[derive(Clone, Debug, PartialEq)]
pub struct StepStability {
    /// Eigenvalue λ of J [1/s] of the worst mode.
    pub eigenvalue: Complex<f64>,
    /// |R(hλ)| per step.
    pub amplification: f64,
    /// ln G over the run (see the module documentation).
    pub log_growth: f64,
    /// Largest step h' ≤ h with G(h') ≤ [`GROWTH_LIMIT`]; `None` when even
    /// tiny steps grow (not expected for a consistent method).
    pub largest_stable_step: Option<f64>,
    /// Largest |λ| of J [1/s]: the model's fastest mode at the start.
    pub fastest: f64,
}

impl StepStability {
    /// Whether the step is refused (G > [`GROWTH_LIMIT`]).
    pub fn unstable(&self) -> bool {
        self.log_growth > GROWTH_LIMIT.ln()
    }
}

/// Eigenvalues of J = ∂f/∂y at (t, y), from the problem's exact Jacobian
/// or central differences of its right-hand side
/// ([`linearised_jacobian`]); `None` above [`MAX_DIMENSION`].
///
/// # Errors
/// The evaluation error of the right-hand side.
pub fn linearised_eigenvalues<P: OdeProblem + ?Sized>(
    p: &mut P,
    t: f64,
    y: &[f64],
) -> Result<Option<Vec<Complex<f64>>>, EvalError> {
    let Some(jac) = linearised_jacobian(p, t, y)? else {
        return Ok(None);
    };
    Ok(eigenvalues_of(jac))
}

/// J = ∂f/∂y at (t, y): the problem's exact Jacobian, or central
/// differences of its right-hand side; `None` when the dimension is 0 or
/// above [`MAX_DIMENSION`], or J is not finite.
///
/// # Errors
/// The evaluation error of the right-hand side.
pub fn linearised_jacobian<P: OdeProblem + ?Sized>(
    p: &mut P,
    t: f64,
    y: &[f64],
) -> Result<Option<DMatrix<f64>>, EvalError> {
    let n = y.len();
    if n == 0 || n > MAX_DIMENSION {
        return Ok(None);
    }
    let mut jac = DMatrix::zeros(n, n);
    if p.has_exact_jacobian() {
        p.jacobian(t, y, &mut jac)?;
    } else {
        // central differences with δ = ε^(1/3) max(|y_j|, 1): error
        // O(δ²) + O(ε/δ), about 1e-10 relative, where the integrators'
        // forward differences (δ down to √ε · 1e-5 at a zero component,
        // a state at rest) are good only for Newton
        let mut yp = y.to_vec();
        let (mut fp, mut fm) = (vec![0.0; n], vec![0.0; n]);
        for j in 0..n {
            let d = f64::EPSILON.cbrt() * y[j].abs().max(1.0);
            yp[j] = y[j] + d;
            p.rhs(t, &yp, &mut fp)?;
            yp[j] = y[j] - d;
            p.rhs(t, &yp, &mut fm)?;
            yp[j] = y[j];
            for i in 0..n {
                jac[(i, j)] = (fp[i] - fm[i]) / (2.0 * d);
            }
        }
    }
    if jac.iter().any(|x| !x.is_finite()) {
        return Ok(None);
    }
    Ok(Some(jac))
}

/// All eigenvalues of a square matrix by a bounded Schur iteration;
/// `None` when it does not converge or gives non-finite values.
pub fn eigenvalues_of(jac: DMatrix<f64>) -> Option<Vec<Complex<f64>>> {
    // a bounded Schur iteration: nalgebra's `complex_eigenvalues` iterates
    // until convergence, which a matrix of extreme entries (1e300) never
    // reaches; such a model gets no verdict rather than a hang
    let schur = nalgebra::linalg::Schur::try_new(jac, f64::EPSILON, MAX_SCHUR_ITERATIONS)?;
    let ev: Vec<Complex<f64>> = schur.complex_eigenvalues().iter().copied().collect();
    ev.iter()
        .all(|l| l.re.is_finite() && l.im.is_finite())
        .then_some(ev)
}

/// ln G(h) over `span` seconds for the eigenvalues `lambdas` and the
/// stability function `r`, with the worst eigenvalue and its |R(hλ)|.
fn log_growth(
    lambdas: &[Complex<f64>],
    h: f64,
    span: f64,
    r: &dyn Fn(Complex<f64>) -> f64,
) -> (f64, Complex<f64>, f64) {
    let n_steps = (span / h).ceil().max(1.0);
    let mut worst = (f64::NEG_INFINITY, Complex::new(0.0, 0.0), 1.0);
    for &l in lambdas {
        let z = l * h;
        let amp = r(z);
        let excess = n_steps * (amp.ln() - z.re.max(0.0));
        if excess > worst.0 || !excess.is_finite() {
            worst = (excess, l, amp);
            if !excess.is_finite() {
                worst.0 = f64::INFINITY;
                break;
            }
        }
    }
    worst
}

/// The fixed-step verdict for a run of `span` seconds at step `h` on the
/// linearisation with eigenvalues `lambdas`, for a method whose
/// amplification per step at z = hλ is `r(z)` (|R(z)| of a Runge–Kutta
/// method, the largest root modulus of a multistep method's
/// characteristic equation; module documentation).
pub fn fixed_step_stability(
    lambdas: &[Complex<f64>],
    h: f64,
    span: f64,
    r: &dyn Fn(Complex<f64>) -> f64,
) -> StepStability {
    let (lg, l, amp) = log_growth(lambdas, h, span, r);
    let fastest = lambdas.iter().map(|l| l.norm()).fold(0.0, f64::max);
    let limit = GROWTH_LIMIT.ln();
    let largest_stable_step = if lg <= limit {
        Some(h)
    } else {
        // bisection on a log scale between a step that passes and h
        let mut lo = h;
        let mut found = false;
        for _ in 0..60 {
            lo *= 0.5;
            if log_growth(lambdas, lo, span, r).0 <= limit {
                found = true;
                break;
            }
        }
        found.then(|| {
            let mut hi = 2.0 * lo;
            for _ in 0..50 {
                let mid = (lo * hi).sqrt();
                if log_growth(lambdas, mid, span, r).0 <= limit {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            lo
        })
    };
    StepStability {
        eigenvalue: l,
        amplification: amp,
        log_growth: lg,
        largest_stable_step,
        fastest,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn euler(z: Complex<f64>) -> f64 {
        (Complex::new(1.0, 0.0) + z).norm()
    }

    fn rk4(z: Complex<f64>) -> f64 {
        let one = Complex::new(1.0, 0.0);
        (one + z + z * z / 2.0 + z * z * z / 6.0 + z * z * z * z / 24.0).norm()
    }

    #[test]
    fn a_decaying_mode_inside_the_region_passes_and_outside_fails() {
        // y' = −100 y: forward Euler is stable for h ≤ 0.02
        let l = [Complex::new(-100.0, 0.0)];
        let s = fixed_step_stability(&l, 0.019, 1.0, &euler);
        assert!(!s.unstable(), "{s:?}");
        let s = fixed_step_stability(&l, 0.021, 1.0, &euler);
        assert!(s.unstable(), "{s:?}");
        // |1 − 2.1| = 1.1 per step, 48 steps
        assert!((s.amplification - 1.1).abs() < 1e-12);
        let h = s.largest_stable_step.unwrap();
        assert!(h > 0.0195 && h < 0.021, "h' = {h}");
    }

    #[test]
    fn rk4_on_an_undamped_mode_has_its_imaginary_axis_limit() {
        // rk4's stability interval on the imaginary axis is |hω| ≤ 2√2
        let w = 74.0;
        let l = [Complex::new(0.0, w), Complex::new(0.0, -w)];
        let ok = fixed_step_stability(&l, 2.7 / w, 3.0, &rk4);
        assert!(!ok.unstable(), "{ok:?}");
        let bad = fixed_step_stability(&l, 0.05, 3.0, &rk4);
        assert!(bad.unstable(), "{bad:?}");
        let h = bad.largest_stable_step.unwrap();
        assert!(
            h > 2.0 * 2f64.sqrt() / w * 0.99 && h < 0.05,
            "h' = {h}, 2√2/ω = {}",
            2.0 * 2f64.sqrt() / w
        );
    }

    #[test]
    fn a_physically_growing_mode_is_not_held_against_the_method() {
        // y' = +5 y grows by e^5 over 1 s; Euler at h = 1e-3 follows it
        let l = [Complex::new(5.0, 0.0)];
        let s = fixed_step_stability(&l, 1e-3, 1.0, &euler);
        assert!(!s.unstable(), "{s:?}");
    }

    #[test]
    fn euler_on_an_undamped_mode_is_refused_only_when_the_growth_matters() {
        let w = 3.13;
        let l = [Complex::new(0.0, w), Complex::new(0.0, -w)];
        // |1 + ihω| = sqrt(1 + h²ω²): over 10 s at h = 1e-4 it grows 1.005 times
        assert!(!fixed_step_stability(&l, 1e-4, 10.0, &euler).unstable());
        // at h = 0.05 by e^{(1/2) ln(1 + 0.0245) · 200} ≈ 11
        assert!(fixed_step_stability(&l, 0.05, 10.0, &euler).unstable());
    }

    #[test]
    fn eigenvalues_of_a_linear_oscillator() {
        struct Osc;
        impl OdeProblem for Osc {
            fn dim(&self) -> usize {
                2
            }
            fn rhs(&mut self, _t: f64, y: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
                f[0] = y[1];
                f[1] = -400.0 * y[0] - 2.0 * y[1];
                Ok(())
            }
        }
        let ev = linearised_eigenvalues(&mut Osc, 0.0, &[0.1, 0.0])
            .unwrap()
            .unwrap();
        // λ = −1 ± i sqrt(399)
        for l in ev {
            assert!((l.re + 1.0).abs() < 1e-5, "{l}");
            assert!((l.im.abs() - 399f64.sqrt()).abs() < 1e-5, "{l}");
        }
    }
}
