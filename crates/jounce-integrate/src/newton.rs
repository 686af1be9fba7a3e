//! Modified Newton iteration with cached LU factors, shared by every
//! implicit method (SDIRK, Radau, BDF/NDF, structural family).
//!
//! The iteration matrix (e.g. I − hγJ, or M + βh²K + γhC) is formed by the
//! method, factorised once here and reused over iterations and steps until
//! the method asks for a new one. Convergence is judged by the contraction
//! rate, as in radau5.f (Hairer–Wanner II, Section IV.8, eqs. (8.10)–(8.12)).

use nalgebra::DMatrix;

use crate::dense_lu::DenseLu;
use crate::error::EvalError;
use crate::stats::Stats;

/// An LU factorisation kept between Newton iterations and steps, in
/// storage sized once: refactorising and solving allocate nothing.
#[derive(Default)]
pub struct CachedLu {
    lu: Option<DenseLu<f64>>,
    factored: bool,
}

impl CachedLu {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Factorise `a` (counted in `stats.n_lu`): PA = LU with partial
    /// pivoting (`DenseLu`), into the cache's own storage.
    ///
    /// # Errors
    /// [`EvalError::Singular`] when `a` is singular (a zero or non-finite pivot).
    pub fn factor(&mut self, a: &DMatrix<f64>, t: f64, stats: &mut Stats) -> Result<(), EvalError> {
        stats.n_lu += 1;
        let n = a.nrows();
        let lu = self.lu.get_or_insert_with(DenseLu::new);
        if lu.piv.len() != n || lu.lu.ncols() != a.ncols() {
            lu.resize(n);
        }
        lu.lu.copy_from(a);
        self.factored = lu.factor();
        if !self.factored {
            return Err(EvalError::Singular {
                what: "iteration matrix".into(),
                t,
                detail: String::new(),
            });
        }
        Ok(())
    }

    /// Whether a factorisation is available.
    pub fn is_factored(&self) -> bool {
        self.factored
    }

    /// Forget the factorisation (forces a new one).
    pub fn invalidate(&mut self) {
        self.factored = false;
    }

    fn factors(&self, what: &str) -> &DenseLu<f64> {
        match (&self.lu, self.factored) {
            (Some(lu), true) => lu,
            _ => panic!("CachedLu::{what} before factor"),
        }
    }

    /// Solve A X = B in place for the columns of `b` (`b` becomes X),
    /// counted as one solve per column in `stats.n_solve`.
    ///
    /// # Panics
    /// If no factorisation is available (a programming error in a method).
    pub fn solve_columns_in_place(&mut self, b: &mut DMatrix<f64>, stats: &mut Stats) {
        stats.n_solve += b.ncols() as u64;
        let lu = self.factors("solve_columns_in_place");
        let n = b.nrows();
        // column-major storage: column j is the slice [j n, (j + 1) n)
        for col in b.as_mut_slice().chunks_exact_mut(n.max(1)) {
            lu.solve(col);
        }
    }

    /// Solve A x = b in place (`b` becomes x), counted in `stats.n_solve`.
    ///
    /// # Panics
    /// If no factorisation is available (a programming error in a method).
    pub fn solve_in_place(&mut self, b: &mut [f64], stats: &mut Stats) {
        stats.n_solve += 1;
        self.factors("solve_in_place").solve(b);
    }
}

/// Settings of the modified Newton iteration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NewtonSettings {
    /// Maximum iterations per solve.
    pub max_iter: u32,
    /// Stop when the estimated remaining error η‖Δx‖ ≤ tol (in the
    /// weighted norm where 1 means "at the integration tolerance").
    pub tol: f64,
}

impl Default for NewtonSettings {
    fn default() -> Self {
        // radau5.f: NIT = 7, FNEWT = max(10 ε/rtol, min(0.03, sqrt(rtol)))
        Self {
            max_iter: 7,
            tol: 0.03,
        }
    }
}

/// Result of a Newton solve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NewtonOutcome {
    /// Converged after `iters` iterations with contraction rate `rate`.
    Converged {
        /// Iterations used.
        iters: u32,
        /// Last observed contraction rate θ (0 if one iteration).
        rate: f64,
    },
    /// Diverged or too slow: the method should reduce h or refresh the Jacobian.
    Failed {
        /// Iterations used.
        iters: u32,
        /// Last observed contraction rate.
        rate: f64,
    },
}

/// Solve G(x) = 0 by modified Newton, x_{k+1} = x_k − A⁻¹ G(x_k), with the
/// factorised iteration matrix A ≈ ∂G/∂x in `lu`.
///
/// `residual(x, g)` writes G(x). `weights` are the error weights
/// w_i = 1/(atol + rtol |y_i|), so that ‖Δx‖ = RMS(w_i Δx_i).
/// Convergence: with θ = ‖Δx_k‖ / ‖Δx_{k−1}‖ and η = θ/(1 − θ), stop when
/// η ‖Δx_k‖ ≤ tol; fail when θ ≥ 1 or when the predicted error after the
/// remaining iterations, θ^(kmax−k)/(1 − θ) ‖Δx_k‖, exceeds tol
/// (Hairer–Wanner II, IV.8, eqs. (8.11), (8.12)).
///
/// # Errors
/// Propagates evaluation errors of `residual`.
pub fn newton_solve(
    residual: impl FnMut(&[f64], &mut [f64]) -> Result<(), EvalError>,
    x: &mut [f64],
    lu: &mut CachedLu,
    weights: &[f64],
    settings: &NewtonSettings,
    g: &mut [f64],
    stats: &mut Stats,
) -> Result<NewtonOutcome, EvalError> {
    newton_iterate(
        residual,
        |b, stats| lu.solve_in_place(b, stats),
        x,
        weights,
        settings,
        None,
        g,
        stats,
    )
}

/// [`newton_solve`] with the contraction rate θ₀ of an earlier solve with
/// the same factorised matrix (the previous step's, while the matrix is
/// kept): the first iteration may then stop when η₀ ‖Δx₁‖ ≤ tol with
/// η₀ = θ₀/(1 − θ₀), instead of needing a second iteration to measure a
/// rate. This is the rate kept across steps of CVODE (Hindmarsh et al.,
/// "SUNDIALS", ACM TOMS 31 (2005) 363–396, §2.1: the convergence test
/// R ‖δ_m‖ ≤ 0.1 ε with the rate constant R carried over from the last
/// step until the matrix is updated) and of ode15s (Shampine & Reichelt
/// 1997, §2: `havrate`). The first iteration's test uses θ₀ at least 0.1,
/// so that a rate measured on an easy step does not let a harder one
/// stop before its increment is small. Later iterations measure θ as
/// [`newton_solve`] does.
///
/// # Errors
/// Propagates evaluation errors of `residual`.
pub fn newton_solve_with_rate(
    residual: impl FnMut(&[f64], &mut [f64]) -> Result<(), EvalError>,
    x: &mut [f64],
    lu: &mut CachedLu,
    weights: &[f64],
    settings: &NewtonSettings,
    prior_rate: Option<f64>,
    g: &mut [f64],
    stats: &mut Stats,
) -> Result<NewtonOutcome, EvalError> {
    newton_iterate(
        residual,
        |b, stats| lu.solve_in_place(b, stats),
        x,
        weights,
        settings,
        prior_rate,
        g,
        stats,
    )
}

/// The iteration of [`newton_solve`] with the linear solve left to the
/// caller: `residual(x, buf)` fills `buf` (at least len(x); a caller may
/// keep more rows there, e.g. the invariants of
/// [`crate::overdetermined::newton_solve_overdetermined`]), `solve(buf)`
/// turns its first len(x) entries into the increment Δ, and
/// x ← x − Δ; convergence as [`newton_solve`], from the rate `prior_rate`
/// as [`newton_solve_with_rate`] when given.
pub(crate) fn newton_iterate(
    mut residual: impl FnMut(&[f64], &mut [f64]) -> Result<(), EvalError>,
    mut solve: impl FnMut(&mut [f64], &mut Stats),
    x: &mut [f64],
    weights: &[f64],
    settings: &NewtonSettings,
    prior_rate: Option<f64>,
    buf: &mut [f64],
    stats: &mut Stats,
) -> Result<NewtonOutcome, EvalError> {
    let n = x.len().max(1) as f64;
    let mut prev_norm = f64::NAN;
    // before a rate is known the first increment must itself be small;
    // with the rate of an earlier solve on the same matrix (at least 0.1,
    // below 1) it is judged by that rate
    let mut rate = match prior_rate {
        Some(r) if (0.0..1.0).contains(&r) => r.max(0.1),
        _ => 0.0,
    };
    let mut eta = if rate > 0.0 {
        rate / (1.0 - rate)
    } else {
        1.0f64
    };
    for k in 1..=settings.max_iter {
        stats.n_newton_iter += 1;
        residual(x, buf)?;
        solve(buf, stats);
        let mut s = 0.0;
        for i in 0..x.len() {
            x[i] -= buf[i];
            s += (buf[i] * weights[i]).powi(2);
        }
        let dnorm = (s / n).sqrt();
        if !dnorm.is_finite() {
            stats.n_newton_fail += 1;
            return Ok(NewtonOutcome::Failed {
                iters: k,
                rate: f64::INFINITY,
            });
        }
        if k > 1 && prev_norm > 0.0 {
            rate = dnorm / prev_norm;
            if rate >= 1.0 {
                stats.n_newton_fail += 1;
                return Ok(NewtonOutcome::Failed { iters: k, rate });
            }
            let remaining = (settings.max_iter - k) as i32;
            if rate.powi(remaining) / (1.0 - rate) * dnorm > settings.tol {
                stats.n_newton_fail += 1;
                return Ok(NewtonOutcome::Failed { iters: k, rate });
            }
            eta = rate / (1.0 - rate);
        }
        if eta * dnorm <= settings.tol || dnorm <= 1e-3 * settings.tol {
            return Ok(NewtonOutcome::Converged { iters: k, rate });
        }
        prev_norm = dnorm;
    }
    stats.n_newton_fail += 1;
    Ok(NewtonOutcome::Failed {
        iters: settings.max_iter,
        rate,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// G(x) = 2x − 2 (root 1) with the iteration matrix 2.2: the error
    /// contracts by θ = 1 − 2/2.2 = 1/11 per iteration. From x = 1.5 the
    /// first increment is 0.4545: above tol = 0.1, so without a rate a
    /// second iteration is needed; with the earlier rate 1/11 (used as
    /// 0.1, η = 1/9) the first stops, and its remaining error 0.04545 is
    /// within tol as the test promised. A rate that is no contraction
    /// (≥ 1, NaN) is ignored.
    #[test]
    fn a_kept_rate_stops_the_first_iteration_within_the_tolerance() {
        let solve = |prior: Option<f64>| {
            let mut x = [1.5];
            let mut lu = CachedLu::new();
            let mut stats = Stats::default();
            lu.factor(&DMatrix::from_element(1, 1, 2.2), 0.0, &mut stats)
                .unwrap();
            let settings = NewtonSettings {
                max_iter: 5,
                tol: 0.1,
            };
            let out = newton_solve_with_rate(
                |x, g| {
                    g[0] = 2.0 * x[0] - 2.0;
                    Ok(())
                },
                &mut x,
                &mut lu,
                &[1.0],
                &settings,
                prior,
                &mut [0.0],
                &mut stats,
            )
            .unwrap();
            (out, x[0])
        };
        let (out, x) = solve(None);
        assert!(
            matches!(out, NewtonOutcome::Converged { iters: 2, .. }),
            "{out:?}"
        );
        assert!((x - 1.0).abs() < 0.005, "{x}");
        let (out, x) = solve(Some(1.0 / 11.0));
        assert!(
            matches!(out, NewtonOutcome::Converged { iters: 1, .. }),
            "{out:?}"
        );
        assert!((x - 1.0).abs() <= 0.1 && (x - 1.0).abs() > 0.04, "{x}");
        for bad in [1.5, f64::NAN, -0.5] {
            let (out, _) = solve(Some(bad));
            assert!(
                matches!(out, NewtonOutcome::Converged { iters: 2, .. }),
                "{bad}: {out:?}"
            );
        }
    }

    #[test]
    fn newton_solves_a_nonlinear_system_with_a_frozen_matrix() {
        // G(x) = [x0^2 + x1 - 3, x0 - x1^3 + 7]; root (1, 2)
        let mut x = [1.1, 1.9];
        let a = DMatrix::from_row_slice(2, 2, &[2.2, 1.0, 1.0, -3.0 * 1.9 * 1.9]);
        let mut lu = CachedLu::new();
        let mut stats = Stats::default();
        lu.factor(&a, 0.0, &mut stats).unwrap();
        let mut g = [0.0; 2];
        let settings = NewtonSettings {
            max_iter: 30,
            tol: 1e-10,
        };
        let out = newton_solve(
            |x, g| {
                g[0] = x[0] * x[0] + x[1] - 3.0;
                g[1] = x[0] - x[1].powi(3) + 7.0;
                Ok(())
            },
            &mut x,
            &mut lu,
            &[1.0, 1.0],
            &settings,
            &mut g,
            &mut stats,
        )
        .unwrap();
        assert!(matches!(out, NewtonOutcome::Converged { .. }), "{out:?}");
        assert!(
            (x[0] - 1.0).abs() < 1e-9 && (x[1] - 2.0).abs() < 1e-9,
            "{x:?}"
        );
        assert_eq!(stats.n_lu, 1);
        assert!(stats.n_solve >= 2);
    }

    #[test]
    fn singular_matrix_is_reported() {
        let a = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 4.0]);
        let mut lu = CachedLu::new();
        let mut stats = Stats::default();
        assert!(lu.factor(&a, 3.5, &mut stats).is_err());
    }
}
