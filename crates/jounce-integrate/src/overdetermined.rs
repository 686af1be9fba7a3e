//! The corrector of an implicit method on an overdetermined DAE
//! ([`crate::OverdeterminedProblem`]): y' = f(t, y) with invariants
//! g(t, y) = 0 (Führer & Leimkuhler, Numer. Math. 59 (1991) 55–69;
//! Eich-Soellner & Führer, *Numerical Methods in Multibody Dynamics*,
//! Teubner 1998, ch. 5; termeer 1996, sec. 4.6).
//!
//! A BDF step gives n equations r(y) = 0 for the n unknowns of y_{n+1}
//! (`multistep/bdf.rs`: r = ψ + (y − y^(0)) − h/((1−κ)γ_k) f(t, y)); the
//! invariants add p more, g(t, y) = 0. The overdetermined system is
//! solved with the invariants met exactly and the discretised ODE in the
//! least-squares sense, by a modified Gauss–Newton iteration. With the
//! method's factorised iteration matrix A ≈ ∂r/∂y (I − h/((1−κ)γ_k) J),
//! the frozen invariant Jacobian G ≈ ∂g/∂y and a diagonal scaling D, one
//! iteration y ← y − Δ solves the linearised problem
//!
//! ```text
//! G Δ = g,     r − A Δ ∈ range(D Gᵀ):
//! Δ = A⁻¹ r − Z μ,   Z = A⁻¹ D Gᵀ (n × p),   (G Z) μ = G A⁻¹ r − g.
//! ```
//!
//! This is the linear algebra of Führer's ODASSL corrector (subroutines
//! ODAJAC and ODACOR, DLR 1990: Q = A₂ A₁⁻¹ A₂ᵀ factorised with the
//! Jacobian, Δ = A₁⁻¹(δ₁ + A₂ᵀ Q⁻¹(δ₂ − A₂ A₁⁻¹ δ₁))), here with the
//! constraint normals scaled by D = diag(1/w_i²)/max, w_i the method's
//! error weights 1/(atol + rtol |y_i|), so that the result does not depend
//! on the units of the components. The linearised invariants hold exactly
//! and the linearised BDF residual r − A Δ is normal to the invariant
//! manifold in the D⁻¹ inner product: the discretised ODE holds exactly in
//! every direction tangent to the manifold. For A = I (h → 0) this is the
//! D⁻¹-weighted least-squares solution min ‖D^(−1/2)(r − Δ)‖ subject to
//! G Δ = g, i.e. the projection of the Newton step onto the linearised
//! manifold; for A ≠ I it needs only forward solves with A's factors (the
//! Euclidean least-squares solution min ‖r − AΔ‖ would need solves with Aᵀ).
//!
//! Cost: p solves with A and a p × p factorisation per
//! [`OdaeCorrector::prepare`], one n × p and one p × n product per
//! iteration; nothing is allocated after [`OdaeCorrector::resize`].

use nalgebra::{DMatrix, DVectorView, DVectorViewMut};

use crate::dae::dense_lu::DenseLu;
use crate::error::EvalError;
use crate::newton::{newton_iterate, CachedLu, NewtonOutcome, NewtonSettings};
use crate::stats::Stats;

/// The frozen invariant Jacobian G, Z = A⁻¹ D Gᵀ and the factorised
/// Q = G Z of one Gauss–Newton solve (module documentation).
pub struct OdaeCorrector {
    n: usize,
    p: usize,
    gy: DMatrix<f64>,
    z: DMatrix<f64>,
    q: DenseLu<f64>,
    d: Vec<f64>,
    mu: Vec<f64>,
}

impl Default for OdaeCorrector {
    fn default() -> Self {
        Self::new()
    }
}

impl OdaeCorrector {
    /// An empty corrector (no invariants).
    pub fn new() -> Self {
        Self {
            n: 0,
            p: 0,
            gy: DMatrix::zeros(0, 0),
            z: DMatrix::zeros(0, 0),
            q: DenseLu::new(),
            d: Vec::new(),
            mu: Vec::new(),
        }
    }

    /// Size the buffers for n unknowns and p invariants (allocates).
    pub fn resize(&mut self, n: usize, p: usize) {
        self.n = n;
        self.p = p;
        self.gy = DMatrix::zeros(p, n);
        self.z = DMatrix::zeros(n, p);
        self.q.resize(p);
        self.d = vec![0.0; n];
        self.mu = vec![0.0; p];
    }

    /// Number of invariants p.
    pub fn n_invariants(&self) -> usize {
        self.p
    }

    /// G (p × n), to be filled by the caller before [`OdaeCorrector::prepare`].
    pub fn jacobian_mut(&mut self) -> &mut DMatrix<f64> {
        &mut self.gy
    }

    /// Z = A⁻¹ D Gᵀ with A factorised in `lu` (p solves) and the factors
    /// of Q = G Z, D from the error weights `w` (len n). False when Q is
    /// singular to rounding (pivot ≤ p ε max|Q_ij|) or a weight is not
    /// positive: the method treats it as a convergence failure.
    ///
    /// # Panics
    /// If `lu` holds no factorisation (a programming error in a method).
    pub fn prepare(&mut self, lu: &mut CachedLu, w: &[f64], stats: &mut Stats) -> bool {
        self.prepare_with(Some((lu, stats)), w)
    }

    /// [`OdaeCorrector::prepare`] for A = I: Z = D Gᵀ, Q = G D Gᵀ, so that
    /// [`OdaeCorrector::correct`] on dx = 0 gives the step of the
    /// D⁻¹-weighted orthogonal projection onto the linearised g = 0
    /// (used on starting values that come from another method).
    pub fn prepare_projection(&mut self, w: &[f64]) -> bool {
        self.prepare_with(None, w)
    }

    fn prepare_with(&mut self, mut lu: Option<(&mut CachedLu, &mut Stats)>, w: &[f64]) -> bool {
        let (n, p) = (self.n, self.p);
        let mut smax = 0.0f64;
        for (d, wi) in self.d.iter_mut().zip(w) {
            *d = 1.0 / wi;
            smax = smax.max(*d);
        }
        if !(smax > 0.0 && smax.is_finite()) {
            return false;
        }
        for d in self.d.iter_mut() {
            *d = (*d / smax).powi(2);
        }
        for j in 0..p {
            for i in 0..n {
                self.z[(i, j)] = self.d[i] * self.gy[(j, i)];
            }
        }
        if let Some((lu, stats)) = lu.as_mut() {
            lu.solve_columns_in_place(&mut self.z, stats);
        }
        crate::matmul::matmul(&mut self.q.lu, &self.gy, &self.z);
        let qmax = self.q.lu.amax();
        qmax.is_finite() && self.q.factor_above(p as f64 * f64::EPSILON * qmax)
    }

    /// Turn the Newton increment `dx` = A⁻¹ r into the Gauss–Newton
    /// increment Δ = A⁻¹ r − Z μ, (G Z) μ = G A⁻¹ r − g, so that G Δ = g
    /// for the invariants `g` (len p) at the current iterate.
    pub fn correct(&mut self, dx: &mut [f64], g: &[f64]) {
        let (n, p) = (self.n, self.p);
        for (m, gi) in self.mu.iter_mut().zip(g) {
            *m = -gi;
        }
        DVectorViewMut::from_slice(&mut self.mu, p).gemv(
            1.0,
            &self.gy,
            &DVectorView::from_slice(dx, n),
            1.0,
        );
        self.q.solve(&mut self.mu);
        DVectorViewMut::from_slice(dx, n).gemv(
            -1.0,
            &self.z,
            &DVectorView::from_slice(&self.mu, p),
            1.0,
        );
    }
}

/// Modified Gauss–Newton for r(x) = 0 (n rows, in the least-squares sense)
/// with g(x) = 0 (p rows, exactly), as [`crate::newton::newton_solve`] for
/// square systems: `residual(x, r, g)` writes r (len n) and g (len p);
/// `lu` holds the factorised A, `corr` the prepared G, Z, Q
/// ([`OdaeCorrector::prepare`]); `buf` has len n + p. Convergence is
/// judged on the increments Δ (which include the corrections onto g = 0)
/// in the weighted norm, as for square systems, from the contraction rate
/// `prior_rate` of an earlier solve when given
/// ([`crate::newton::newton_solve_with_rate`]).
///
/// # Errors
/// Propagates evaluation errors of `residual`.
pub fn newton_solve_overdetermined(
    mut residual: impl FnMut(&[f64], &mut [f64], &mut [f64]) -> Result<(), EvalError>,
    x: &mut [f64],
    lu: &mut CachedLu,
    corr: &mut OdaeCorrector,
    weights: &[f64],
    settings: &NewtonSettings,
    prior_rate: Option<f64>,
    buf: &mut [f64],
    stats: &mut Stats,
) -> Result<NewtonOutcome, EvalError> {
    let n = x.len();
    newton_iterate(
        |x, b| {
            let (r, g) = b.split_at_mut(n);
            residual(x, r, g)
        },
        |b, stats| {
            let (d, g) = b.split_at_mut(n);
            lu.solve_in_place(d, stats);
            corr.correct(d, g);
        },
        x,
        weights,
        settings,
        prior_rate,
        buf,
        stats,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A well-conditioned non-symmetric 4 × 4 A, a 2 × 4 G, weights over
    /// two orders of magnitude.
    fn data() -> (DMatrix<f64>, DMatrix<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
        let a = DMatrix::from_row_slice(
            4,
            4,
            &[
                1.3, 0.2, -0.4, 0.1, //
                0.5, 0.9, 0.3, -0.2, //
                -0.1, 0.6, 1.7, 0.4, //
                0.3, -0.5, 0.2, 1.1,
            ],
        );
        let g = DMatrix::from_row_slice(2, 4, &[0.7, -1.2, 0.4, 2.0, 1.5, 0.3, -0.8, 0.6]);
        let r = vec![0.31, -0.72, 0.45, 0.18];
        let inv = vec![0.09, -0.05];
        let w = vec![1.0, 10.0, 100.0, 3.0];
        (a, g, r, inv, w)
    }

    fn step(a: &DMatrix<f64>, g: &DMatrix<f64>, r: &[f64], inv: &[f64], w: &[f64]) -> Vec<f64> {
        let mut stats = Stats::default();
        let mut lu = CachedLu::new();
        lu.factor(a, 0.0, &mut stats).unwrap();
        let mut c = OdaeCorrector::new();
        c.resize(4, 2);
        c.jacobian_mut().copy_from(g);
        assert!(c.prepare(&mut lu, w, &mut stats));
        let mut dx = r.to_vec();
        lu.solve_in_place(&mut dx, &mut stats);
        c.correct(&mut dx, inv);
        assert_eq!(stats.n_solve, 3, "p = 2 solves in prepare, one for A⁻¹ r");
        dx
    }

    /// The linearised invariants hold exactly (G Δ = g to rounding) and the
    /// linearised residual u = r − A Δ is D⁻¹-orthogonal to the tangent
    /// space: wᵀ D⁻¹ u = 0 for the basis w of null(G). Both are measured
    /// relative to the size of their terms: measured 7e-17 and 7e-13 (u_i
    /// is proportional to D_i, down to 1e-4 here, and computed as a
    /// difference of O(1) numbers, so the test itself loses four digits);
    /// a sign error in Z or μ gives O(1).
    #[test]
    fn the_step_meets_the_invariants_and_leaves_a_residual_normal_to_them() {
        let (a, g, r, inv, w) = data();
        let dx = step(&a, &g, &r, &inv, &w);
        let dxv = nalgebra::DVector::from_vec(dx.clone());
        let gd = &g * &dxv;
        let c_err = (0..2).fold(0.0f64, |m, i| m.max((gd[i] - inv[i]).abs()))
            / (g.norm() * dxv.norm() + inv[0].abs() + inv[1].abs());
        let u = nalgebra::DVector::from_vec(r.clone()) - &a * &dxv;
        assert!(u.norm() > 0.1, "the test must leave a residual");
        // null(G): the right singular vectors of [G; 0] that G maps to 0
        let full = nalgebra::SVD::new(
            DMatrix::from_fn(4, 4, |i, j| if i < 2 { g[(i, j)] } else { 0.0 }),
            false,
            true,
        );
        let vt4 = full.v_t.unwrap();
        let smax = w.iter().fold(0.0f64, |m, x| m.max(1.0 / x));
        let (mut o_err, mut tried) = (0.0f64, 0);
        for k in 0..4 {
            let v = vt4.row(k).transpose();
            if (&g * &v).norm() > 1e-12 {
                continue;
            }
            tried += 1;
            // wᵀ D⁻¹ u with D_i = (1/w_i / smax)², relative to the sum of
            // the magnitudes of its terms (D⁻¹ reaches 1e4 here)
            let terms = (0..4).map(|i| v[i] * u[i] / (1.0 / w[i] / smax).powi(2));
            let (s, mag) = terms.fold((0.0, 0.0), |(s, m), x| (s + x, m + x.abs()));
            o_err = o_err.max(f64::abs(s) / mag);
        }
        assert_eq!(tried, 2, "null(G) has dimension 2");
        eprintln!("G Δ − g: {c_err:.1e}, tangential residual: {o_err:.1e}");
        assert!(c_err < 1e-14, "{c_err:e}");
        assert!(o_err < 1e-10, "{o_err:e}");
    }

    /// With A = I the step is the weighted least-squares solution
    /// min ‖D^(−1/2)(r − Δ)‖ subject to G Δ = g: it equals the closed form
    /// r − D Gᵀ (G D Gᵀ)⁻¹ (G r − g), and moving along null(G) only
    /// increases the cost.
    #[test]
    fn with_the_identity_the_step_is_the_weighted_least_squares_solution() {
        let (_, g, r, inv, w) = data();
        let dx = step(&DMatrix::identity(4, 4), &g, &r, &inv, &w);
        let smax = w.iter().fold(0.0f64, |m, x| m.max(1.0 / x));
        let d = DMatrix::from_fn(4, 4, |i, j| {
            if i == j {
                (1.0 / w[i] / smax).powi(2)
            } else {
                0.0
            }
        });
        let rv = nalgebra::DVector::from_vec(r.clone());
        let gdg = &g * &d * g.transpose();
        let rhs = &g * &rv - nalgebra::DVector::from_vec(inv.clone());
        let closed = &rv - &d * g.transpose() * gdg.lu().solve(&rhs).unwrap();
        let diff = (0..4).fold(0.0f64, |m, i| m.max((dx[i] - closed[i]).abs()));
        assert!(diff < 1e-14, "{diff:e}");
        let cost = |x: &[f64]| -> f64 { (0..4).map(|i| (r[i] - x[i]).powi(2) / d[(i, i)]).sum() };
        let full = nalgebra::SVD::new(
            DMatrix::from_fn(4, 4, |i, j| if i < 2 { g[(i, j)] } else { 0.0 }),
            false,
            true,
        );
        let vt = full.v_t.unwrap();
        let c0 = cost(&dx);
        let mut tried = 0;
        for k in 0..4 {
            let v = vt.row(k).transpose();
            if (&g * &v).norm() > 1e-12 {
                continue;
            }
            for t in [-1e-3, 1e-3] {
                let x: Vec<f64> = (0..4).map(|i| dx[i] + t * v[i]).collect();
                assert!(cost(&x) > c0, "moving along null(G) lowers the cost");
                tried += 1;
            }
        }
        assert_eq!(tried, 4);
    }

    /// The nonlinear iteration meets g(x) = 0 to its tolerance: x on the
    /// unit circle with x − c along the normal G was frozen at, r = x − c.
    /// With G frozen at x0 the iteration contracts linearly (measured rate
    /// 0.24, 20 iterations to 1e-13), so |g| ends at the tolerance times
    /// |G| (measured 1.1e-13), not at rounding.
    #[test]
    fn gauss_newton_meets_a_nonlinear_invariant() {
        let c = [1.3, 0.4];
        let mut x = [1.2, 0.5];
        let mut stats = Stats::default();
        let mut lu = CachedLu::new();
        lu.factor(&DMatrix::identity(2, 2), 0.0, &mut stats)
            .unwrap();
        let mut corr = OdaeCorrector::new();
        corr.resize(2, 1);
        corr.jacobian_mut()[(0, 0)] = 2.0 * x[0];
        corr.jacobian_mut()[(0, 1)] = 2.0 * x[1];
        assert!(corr.prepare(&mut lu, &[1.0, 1.0], &mut stats));
        let mut buf = [0.0; 3];
        let out = newton_solve_overdetermined(
            |x, r, g| {
                r[0] = x[0] - c[0];
                r[1] = x[1] - c[1];
                g[0] = x[0] * x[0] + x[1] * x[1] - 1.0;
                Ok(())
            },
            &mut x,
            &mut lu,
            &mut corr,
            &[1.0, 1.0],
            &NewtonSettings {
                max_iter: 30,
                tol: 1e-13,
            },
            None,
            &mut buf,
            &mut stats,
        )
        .unwrap();
        assert!(matches!(out, NewtonOutcome::Converged { .. }), "{out:?}");
        let g = x[0] * x[0] + x[1] * x[1] - 1.0;
        // the residual x − c is along the frozen normal (1.2, 0.5)
        let cross = (x[0] - c[0]) * 0.5 - (x[1] - c[1]) * 1.2;
        eprintln!("g = {g:.1e}, cross = {cross:.1e}, {out:?}");
        assert!(g.abs() < 1e-12 && cross.abs() < 1e-13, "{g:e} {cross:e}");
    }

    /// A singular Q (an invariant that does not depend on y) is reported,
    /// not divided by.
    #[test]
    fn a_degenerate_invariant_is_refused() {
        let mut stats = Stats::default();
        let mut lu = CachedLu::new();
        lu.factor(&DMatrix::identity(3, 3), 0.0, &mut stats)
            .unwrap();
        let mut corr = OdaeCorrector::new();
        corr.resize(3, 2);
        corr.jacobian_mut()[(0, 1)] = 1.0;
        assert!(!corr.prepare(&mut lu, &[1.0; 3], &mut stats));
        corr.jacobian_mut()[(1, 2)] = 1.0;
        assert!(corr.prepare(&mut lu, &[1.0; 3], &mut stats));
        assert!(!corr.prepare(&mut lu, &[1.0, f64::INFINITY, 0.0], &mut stats));
    }
}
