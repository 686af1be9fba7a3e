//! The mass-orthogonal projection of accelerations onto Φ_q a = γ by
//! preconditioned conjugate gradients in the augmented-Lagrangian metric.
//!
//! The projection of ALI3-P (Cuadrado, Cardenal, Morer & Bayo 2000,
//! Multibody Syst. Dyn. 4:55–73, eqs. 24–25; Bayo & Ledesma 1996, Nonlinear
//! Dyn. 9:113–130) is the fixed point of the augmented-Lagrangian
//! (Uzawa) iteration with P = M + s Φ_qᵀΦ_q:
//!
//! ```text
//! P a_k = Q − Φ_qᵀλ_k + s Φ_qᵀγ,     λ_{k+1} = λ_k + s (Φ_q a_k − γ)
//! ```
//!
//! In the accelerations this is Richardson's iteration
//! a_{k+1} = a_k + P⁻¹Φ_qᵀ s (γ − Φ_q a_k) on the normal equations
//! Φ_qᵀΦ_q a = Φ_qᵀγ preconditioned by P/s. Its fixed point is the
//! M-orthogonal projection of a_0 onto the least-squares solutions of
//! Φ_q a = γ (a − a_0 ∈ P⁻¹ range Φ_qᵀ, so M (a − a_0) ∈ range Φ_qᵀ); each
//! pass removes the share s σ²/(1 + s σ²) of the violation along a
//! singular value σ of Φ_q M^{-1/2}, 2.5 % per pass along the slowest mode
//! of a 1000-link chain (`bench/implicit-at-size-2026-11-29-c.md`).
//!
//! Here the same fixed point is reached by the preconditioned conjugate
//! gradient method (Hestenes & Stiefel 1952, J. Res. Nat. Bur. Stand.
//! 49:409–436; Golub & Van Loan 2013, *Matrix Computations*, 4th ed.,
//! Alg. 11.5.1) on A x = b with A = Φ_qᵀΦ_q, b = Φ_qᵀ(γ − Φ_q a_0),
//! preconditioner P, one solve with the factorised P per iteration as the
//! Uzawa pass; with ρ = γ − Φ_q a the violation:
//!
//! ```text
//! z = P⁻¹Φ_qᵀρ,   β = ρᵀΦ_q z / (ρ_oldᵀΦ_q z_old),   d = z + β d,
//! α = ρᵀΦ_q z / |Φ_q d|²,   a ← a + α d,   ρ ← ρ − α Φ_q d
//! ```
//!
//! It converges in O(√κ) iterations instead of O(κ), κ the ratio of the
//! largest to the smallest nonzero s σ²/(1 + s σ²), and in one
//! iteration per isolated slow mode. A is only positive semi-definite where
//! Φ_q loses rank (redundant constraints, singular configurations), but b
//! lies in range A and the iterates of x = a − a_0 stay in P⁻¹ range A, so
//! the iteration converges there to the same fixed point as the Uzawa
//! iteration (Kaasschieter 1988, J. Comput. Appl. Math. 24:265–275), also
//! where γ is not in range Φ_q (then the violation keeps its part in the
//! null space of Φ_qᵀ, as the Uzawa iteration's does).
//!
//! Only at a singular configuration is the exact projection not wanted:
//! along a near-null mode (s σ² ≪ 1) it puts forces of order 1/σ² on the
//! constraints, where the Uzawa passes, which barely move that mode, act as
//! a regularisation. A direction whose Rayleigh quotient falls below
//! [`SLOW_MODE`] marks such a mode, and the Uzawa passes then make the
//! projection from the start as before.
//!
//! The multipliers follow the accelerations: every direction is
//! d = P⁻¹Φ_qᵀδ with δ = ρ + β δ in the constraint space, so
//! λ ← λ − α δ keeps P a = Q − Φ_qᵀλ + s Φ_qᵀγ exactly (up to rounding) at
//! every iterate; at the end λ ← λ + s (Φ_q a − γ), the multipliers of
//! M a + Φ_qᵀλ = Q, consistent with the projected a.

/// The products of Φ_q and the solves with the factorised metric
/// P = M + s Φ_qᵀΦ_q the projection needs.
pub(crate) trait ProjectionMetric {
    /// out = Φ_q x (len m).
    fn jac_mul(&self, x: &[f64], out: &mut [f64]);
    /// out = c Φ_qᵀ w (len n).
    fn jac_tr_mul(&self, c: f64, w: &[f64], out: &mut [f64]);
    /// b ← P⁻¹ b.
    fn solve(&mut self, b: &mut [f64]);
}

/// Scratch of [`ConjugateProjection::project`], sized once.
pub(crate) struct ConjugateProjection {
    /// z = P⁻¹Φ_qᵀρ and the direction d (len n).
    z: Vec<f64>,
    d: Vec<f64>,
    /// The violation ρ = γ − Φ_q a, the direction δ of the multipliers,
    /// Φ_q d and Φ_q z (len m).
    rho: Vec<f64>,
    delta: Vec<f64>,
    jd: Vec<f64>,
    jz: Vec<f64>,
    /// The starting multipliers, for the Uzawa passes at a slow mode.
    lambda0: Vec<f64>,
}

/// The share s σ²/(1 + s σ²) of the violation along a singular value σ of
/// Φ_q M^{-1/2} that one Uzawa pass removes, below which a mode counts as
/// the near-null mode of a singular configuration: 24 passes remove less
/// than a fifth of it, so the Uzawa passes leave most of its violation in
/// place (their regularisation), where its exact projection would produce
/// forces of order 1/σ². At 1e-3 the P-C chain of 40 parallelograms passed
/// its singular poses with a crank error of 8.8e-5 instead of 9.6e-5, and
/// the redundant third crank of `tests/suite/augmented_lagrangian.rs`
/// moved 5.3e-7 off the plain parallelogram (bound 1e-7); exact
/// projections at its singular poses failed P-C N = 40 at t = 1.244 s.
/// The slowest mode of the 1000-link benchmark chain removes 2.5 % per
/// pass, above this bound.
pub(crate) const SLOW_MODE: f64 = 1e-2;

/// How a projection ended.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) struct ProjectionOutcome {
    /// Solves with P (the first, a_0, included).
    pub passes: usize,
    /// |Φ_q a − γ|∞ at the end.
    pub violation: f64,
    /// Whether the tolerance was met (by the violation, or by its part
    /// the constraints can remove where γ is outside range Φ_q).
    pub converged: bool,
    /// Whether a direction of the conjugate gradients met a mode slower
    /// than [`SLOW_MODE`] and the Uzawa passes made the projection.
    pub uzawa: bool,
}

impl ConjugateProjection {
    /// Scratch for n velocities and m constraints.
    pub(crate) fn new(n: usize, m: usize) -> Self {
        Self {
            z: vec![0.0; n],
            d: vec![0.0; n],
            rho: vec![0.0; m],
            delta: vec![0.0; m],
            jd: vec![0.0; m],
            jz: vec![0.0; m],
            lambda0: vec![0.0; m],
        }
    }

    /// The accelerations a and multipliers λ of the projection (module
    /// documentation) from the forces `q_force` = Q, γ and the starting
    /// multipliers `lambda`, in the metric P = M + s Φ_qᵀΦ_q that `metric`
    /// solves with: first a_0 = P⁻¹(Q − Φ_qᵀλ + s Φ_qᵀγ) (the Uzawa
    /// iteration's first pass), then conjugate gradients until
    /// |Φ_q a − γ|∞ ≤ `tol` (1 + |a|∞) or `max_passes` solves in all.
    /// `a` (len n) receives the accelerations, `lambda` (len m) the
    /// multipliers of the constraint forces consistent with them,
    /// M a + Φ_qᵀλ = Q (as the Uzawa iteration's last update leaves them).
    ///
    /// Where the violation left is the part of γ outside range Φ_q (a
    /// singular configuration whose γ the constraints cannot meet), the
    /// iteration stops once the removable part,
    /// √(s ρᵀΦ_q P⁻¹Φ_qᵀρ), is at the tolerance. A direction slower than
    /// [`SLOW_MODE`] (a singular configuration) hands the projection, from
    /// the starting λ, to the Uzawa passes ([`Self::uzawa`]), which then
    /// have `max_passes` of their own.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn project(
        &mut self,
        metric: &mut impl ProjectionMetric,
        s: f64,
        q_force: &[f64],
        gamma: &[f64],
        a: &mut [f64],
        lambda: &mut [f64],
        tol: f64,
        max_passes: usize,
    ) -> ProjectionOutcome {
        let m = gamma.len();
        self.lambda0.copy_from_slice(lambda);
        self.pass(metric, s, q_force, gamma, a, lambda);
        let mut passes = 1;
        for k in 0..m {
            self.rho[k] = gamma[k] - self.jd[k];
        }
        let mut rz_prev = 0.0;
        loop {
            let violation = max_abs(&self.rho);
            let bound = tol * (1.0 + max_abs(a));
            if violation <= bound || passes >= max_passes {
                return self.finish(s, lambda, passes, violation, violation <= bound);
            }
            // z = P⁻¹Φ_qᵀρ, ρᵀΦ_q z = gᵀ P⁻¹ g with g = Φ_qᵀρ
            metric.jac_tr_mul(1.0, &self.rho, &mut self.z);
            metric.solve(&mut self.z);
            passes += 1;
            metric.jac_mul(&self.z, &mut self.jz);
            let rz = dot(&self.rho, &self.jz);
            if !(rz > 0.0) || !rz.is_finite() || (s * rz).sqrt() <= bound {
                // nothing left that the constraints can remove
                let converged = rz.is_finite() && rz >= 0.0;
                return self.finish(s, lambda, passes, violation, converged);
            }
            let beta = if rz_prev > 0.0 { rz / rz_prev } else { 0.0 };
            rz_prev = rz;
            for (di, zi) in self.d.iter_mut().zip(&self.z) {
                *di = zi + beta * *di;
            }
            for k in 0..m {
                self.delta[k] = self.rho[k] + beta * self.delta[k];
                // Φ_q d = Φ_q z + β Φ_q d
                self.jd[k] = self.jz[k] + beta * self.jd[k];
            }
            let dad = dot(&self.jd, &self.jd);
            if !(dad > 0.0) || !dad.is_finite() {
                return self.finish(s, lambda, passes, violation, false);
            }
            // the Rayleigh quotient of s Φ_q P⁻¹Φ_qᵀ at the direction,
            // s |Φ_q d|² / dᵀP d with dᵀP d = δᵀΦ_q d, bounds its smallest
            // eigenvalue from above: a mode the Uzawa passes leave in place
            if s * dad < SLOW_MODE * dot(&self.delta, &self.jd) {
                lambda.copy_from_slice(&self.lambda0);
                let mut out = self.uzawa(metric, s, q_force, gamma, a, lambda, tol, max_passes);
                out.passes += passes;
                return out;
            }
            let alpha = rz / dad;
            for (ai, di) in a.iter_mut().zip(&self.d) {
                *ai += alpha * di;
            }
            for k in 0..m {
                lambda[k] -= alpha * self.delta[k];
                self.rho[k] -= alpha * self.jd[k];
            }
        }
    }
}

impl ConjugateProjection {
    /// The Uzawa passes from λ (module documentation), each one
    /// P a = Q − Φ_qᵀλ + s Φ_qᵀγ, λ ← λ + s (Φ_q a − γ), until
    /// |Φ_q a − γ|∞ ≤ `tol` (1 + |a|∞) or `max_passes`: the projection
    /// before issue 32, kept where a slow mode marks a singular
    /// configuration ([`SLOW_MODE`]).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn uzawa(
        &mut self,
        metric: &mut impl ProjectionMetric,
        s: f64,
        q_force: &[f64],
        gamma: &[f64],
        a: &mut [f64],
        lambda: &mut [f64],
        tol: f64,
        max_passes: usize,
    ) -> ProjectionOutcome {
        let m = gamma.len();
        let mut violation = f64::INFINITY;
        for pass in 1..=max_passes {
            self.pass(metric, s, q_force, gamma, a, lambda);
            violation = 0.0;
            for k in 0..m {
                let ek = self.jd[k] - gamma[k];
                lambda[k] += s * ek;
                violation = violation.max(ek.abs());
            }
            if violation <= tol * (1.0 + max_abs(a)) {
                return ProjectionOutcome {
                    passes: pass,
                    violation,
                    converged: true,
                    uzawa: true,
                };
            }
        }
        ProjectionOutcome {
            passes: max_passes,
            violation,
            converged: false,
            uzawa: true,
        }
    }

    /// One pass of the Uzawa iteration's first half, shared by both
    /// projections: a = P⁻¹ (Q + Φ_qᵀ (s γ − λ)), and Φ_q a into `jd`.
    fn pass(
        &mut self,
        metric: &mut impl ProjectionMetric,
        s: f64,
        q_force: &[f64],
        gamma: &[f64],
        a: &mut [f64],
        lambda: &[f64],
    ) {
        for k in 0..gamma.len() {
            self.rho[k] = gamma[k] - lambda[k] / s;
        }
        metric.jac_tr_mul(s, &self.rho, a);
        for (ai, qi) in a.iter_mut().zip(q_force) {
            *ai += qi;
        }
        metric.solve(a);
        metric.jac_mul(a, &mut self.jd);
    }

    /// The multipliers of the constraint forces, λ̃ = λ + s (Φ_q a − γ) =
    /// λ − s ρ: with P a = Q − Φ_qᵀλ + s Φ_qᵀγ, M a + Φ_qᵀλ̃ = Q (the
    /// Uzawa iteration's last multiplier update).
    fn finish(
        &self,
        s: f64,
        lambda: &mut [f64],
        passes: usize,
        violation: f64,
        converged: bool,
    ) -> ProjectionOutcome {
        for (l, r) in lambda.iter_mut().zip(&self.rho) {
            *l -= s * r;
        }
        ProjectionOutcome {
            passes,
            violation,
            converged,
            uzawa: false,
        }
    }
}

fn max_abs(x: &[f64]) -> f64 {
    x.iter().fold(0.0f64, |s, v| s.max(v.abs()))
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Cholesky, DMatrix, DVector, Dyn};

    /// A dense Φ_q and the Cholesky factor of P = M + s Φ_qᵀΦ_q.
    struct Dense {
        jac: DMatrix<f64>,
        p: Cholesky<f64, Dyn>,
        solves: usize,
    }

    impl ProjectionMetric for Dense {
        fn jac_mul(&self, x: &[f64], out: &mut [f64]) {
            let y = &self.jac * DVector::from_column_slice(x);
            out.copy_from_slice(y.as_slice());
        }
        fn jac_tr_mul(&self, c: f64, w: &[f64], out: &mut [f64]) {
            let y = self.jac.transpose() * DVector::from_column_slice(w) * c;
            out.copy_from_slice(y.as_slice());
        }
        fn solve(&mut self, b: &mut [f64]) {
            self.solves += 1;
            let mut v = DVector::from_column_slice(b);
            self.p.solve_mut(&mut v);
            b.copy_from_slice(v.as_slice());
        }
    }

    /// A deterministic pseudo-random number in [−1, 1) (a linear
    /// congruential generator, Knuth's MMIX constants).
    fn next(state: &mut u64) -> f64 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    /// A planar chain of `links` point masses hung from the origin by
    /// rods of length `len`, every rod at a random angle below the
    /// horizontal: Φ_k = |p_k − p_{k−1}|² − len² (p_0 = 0), rows
    /// 2 (p_k − p_{k−1})ᵀ [… −I I …]. Returns Φ_q and the masses.
    fn chain(links: usize, len: f64, spread: f64, seed: &mut u64) -> (DMatrix<f64>, Vec<f64>) {
        let n = 2 * links;
        let mut jac = DMatrix::zeros(links, n);
        let mut masses = Vec::with_capacity(n);
        for k in 0..links {
            let th = -std::f64::consts::FRAC_PI_2 + spread * next(seed);
            let (dx, dy) = (len * th.cos(), len * th.sin());
            jac[(k, 2 * k)] = 2.0 * dx;
            jac[(k, 2 * k + 1)] = 2.0 * dy;
            if k > 0 {
                jac[(k, 2 * k - 2)] = -2.0 * dx;
                jac[(k, 2 * k - 1)] = -2.0 * dy;
            }
            let mass = 1.0 + 0.5 * next(seed);
            masses.extend([mass, mass]);
        }
        (jac, masses)
    }

    /// The metric at penalty s = p · max M_ii.
    fn metric(jac: &DMatrix<f64>, masses: &[f64], p: f64) -> (Dense, f64) {
        let s = p * masses.iter().fold(0.0f64, |a, &b| a.max(b));
        let pm =
            DMatrix::from_diagonal(&DVector::from_column_slice(masses)) + jac.transpose() * jac * s;
        let p = Cholesky::new(pm).expect("M + s Φ_qᵀΦ_q is positive definite");
        (
            Dense {
                jac: jac.clone(),
                p,
                solves: 0,
            },
            s,
        )
    }

    /// The KKT solution of M a + Φ_qᵀλ = Q, Φ_q a = γ (dense LU).
    fn kkt(jac: &DMatrix<f64>, masses: &[f64], q: &[f64], gamma: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let (m, n) = jac.shape();
        let mut k = DMatrix::zeros(n + m, n + m);
        for i in 0..n {
            k[(i, i)] = masses[i];
        }
        k.view_mut((0, n), (n, m)).copy_from(&jac.transpose());
        k.view_mut((n, 0), (m, n)).copy_from(jac);
        let mut b = DVector::zeros(n + m);
        b.rows_mut(0, n).copy_from_slice(q);
        b.rows_mut(n, m).copy_from_slice(gamma);
        let x = k.lu().solve(&b).expect("the KKT matrix is regular");
        (
            x.rows(0, n).iter().copied().collect(),
            x.rows(n, m).iter().copied().collect(),
        )
    }

    fn rel_err(x: &[f64], r: &[f64]) -> f64 {
        let scale = max_abs(r).max(1.0);
        x.iter()
            .zip(r)
            .fold(0.0f64, |e, (a, b)| e.max((a - b).abs()))
            / scale
    }

    /// A 100-link chain with the slowest mode of the 1000-link benchmark
    /// chain, s σ²_min ≈ 0.04 (5-cm rods hanging nearly straight, p =
    /// 10⁴): the Uzawa passes do not meet the tolerance in 24 passes, the
    /// conjugate gradients reach the dense KKT solution in at most 14.
    #[test]
    fn reaches_the_kkt_projection_of_a_long_chain_in_few_passes() {
        let mut seed = 7;
        let links = 100;
        let (jac, masses) = chain(links, 0.05, 0.05, &mut seed);
        let n = 2 * links;
        let q: Vec<f64> = (0..n).map(|_| 10.0 * next(&mut seed)).collect();
        let gamma: Vec<f64> = (0..links).map(|_| 0.1 * next(&mut seed)).collect();
        let lam0: Vec<f64> = (0..links).map(|_| 100.0 * next(&mut seed)).collect();
        let (a_ref, lam_ref) = kkt(&jac, &masses, &q, &gamma);
        let (mut d, s) = metric(&jac, &masses, 1e4);

        let mut cg = ConjugateProjection::new(n, links);
        let (mut a, mut lam) = (vec![0.0; n], lam0.clone());
        let out = cg.project(&mut d, s, &q, &gamma, &mut a, &mut lam, 1e-11, 24);
        // measured: 12 passes, a within 1.6e-11, λ within 3.2e-10
        assert!(out.converged && !out.uzawa && out.passes <= 14, "{out:?}");
        assert_eq!(d.solves, out.passes);
        let (ea, el) = (rel_err(&a, &a_ref), rel_err(&lam, &lam_ref));
        assert!(ea <= 1e-10 && el <= 1e-9, "a {ea:e}, λ {el:e}");
        let cg_passes = out.passes;
        // to the rounding of the dense solve with a tolerance at it
        // (measured: 14 passes, a within 1.5e-14, λ within 2.8e-13)
        let (mut a, mut lam) = (vec![0.0; n], lam0.clone());
        let out = cg.project(&mut d, s, &q, &gamma, &mut a, &mut lam, 1e-14, 40);
        assert!(out.converged && out.passes <= 16, "{out:?}");
        let (ea, el) = (rel_err(&a, &a_ref), rel_err(&lam, &lam_ref));
        assert!(ea <= 1e-13 && el <= 1e-12, "a {ea:e}, λ {el:e}");

        // the Uzawa passes at the same tolerance: 24 leave a 4.3e-4 off,
        // and they meet it after 67 passes
        let (mut a, mut lam) = (vec![0.0; n], lam0.clone());
        let taken = cg
            .uzawa(&mut d, s, &q, &gamma, &mut a, &mut lam, 1e-11, 24)
            .passes;
        let ea = rel_err(&a, &a_ref);
        assert!(taken == 24 && ea > 1e-4, "Uzawa: {taken} passes, a {ea:e}");
        let (mut a, mut lam) = (vec![0.0; n], lam0.clone());
        let taken = cg
            .uzawa(&mut d, s, &q, &gamma, &mut a, &mut lam, 1e-11, 200)
            .passes;
        assert!(taken > 4 * cg_passes, "Uzawa: {taken} passes");
        // the same fixed point
        assert!(rel_err(&a, &a_ref) <= 1e-8, "a {:e}", rel_err(&a, &a_ref));
    }

    /// Redundant constraints (every rod's row twice, Φ_q of rank m/2): with
    /// a consistent γ the projection is the KKT solution of the rods
    /// counted once, the forces Φ_qᵀλ those of the single rows; with γ
    /// outside range Φ_q (the two copies of a row disagree) the
    /// least-squares projection (each rod at the mean of its copies), the
    /// Uzawa iteration's fixed point, with finite multipliers.
    #[test]
    fn projects_with_redundant_and_inconsistent_constraints() {
        let mut seed = 11;
        let links = 30;
        let (jac1, masses) = chain(links, 0.2, 0.8, &mut seed);
        let n = 2 * links;
        let mut jac = DMatrix::zeros(2 * links, n);
        jac.rows_mut(0, links).copy_from(&jac1);
        jac.rows_mut(links, links).copy_from(&jac1);
        let q: Vec<f64> = (0..n).map(|_| 10.0 * next(&mut seed)).collect();
        let gamma1: Vec<f64> = (0..links).map(|_| 0.1 * next(&mut seed)).collect();
        let (mut d, s) = metric(&jac, &masses, 1e4);
        let mut cg = ConjugateProjection::new(n, 2 * links);
        for split in [0.0, 1e-3] {
            // the copies at γ ∓ split, the mean γ
            let gamma: Vec<f64> = (0..2 * links)
                .map(|k| gamma1[k % links] + if k < links { -split } else { split })
                .collect();
            let (a_ref, lam_ref) = kkt(&jac1, &masses, &q, &gamma1);
            let (mut a, mut lam) = (vec![0.0; n], vec![0.0; 2 * links]);
            let out = cg.project(&mut d, s, &q, &gamma, &mut a, &mut lam, 1e-11, 24);
            assert!(out.converged, "{out:?}");
            assert!(out.passes <= 24, "{out:?}");
            if split > 0.0 {
                // the violation left is the disagreement of the copies
                assert!((out.violation - split).abs() <= 1e-9, "{out:?}");
            }
            assert!(rel_err(&a, &a_ref) <= 1e-9, "a {:e}", rel_err(&a, &a_ref));
            // the forces Φ_qᵀλ of M a + Φ_qᵀλ = Q
            let mut f = vec![0.0; n];
            d.jac_tr_mul(1.0, &lam, &mut f);
            let mut f_ref = vec![0.0; n];
            let jr = Dense {
                jac: jac1.clone(),
                p: d.p.clone(),
                solves: 0,
            };
            jr.jac_tr_mul(1.0, &lam_ref, &mut f_ref);
            assert!(
                rel_err(&f, &f_ref) <= 1e-9,
                "forces {:e}",
                rel_err(&f, &f_ref)
            );
            assert!(lam.iter().all(|x| x.is_finite()));
        }
    }

    /// A near-singular configuration: every rod's row twice, the copy
    /// turned by 1e-5 (σ_min ~ 1e-5, s σ² ~ 1e-6), the copies' γ 1e-3
    /// apart. The exact projection would put forces of order 1/σ² on
    /// that mode; a direction of the conjugate gradients meets it and the
    /// Uzawa passes make the projection, to the bit as they do alone.
    #[test]
    fn keeps_the_uzawa_passes_at_a_near_singular_configuration() {
        let mut seed = 5;
        let links = 30;
        let (jac1, masses) = chain(links, 0.2, 0.8, &mut seed);
        let n = 2 * links;
        let mut jac = DMatrix::zeros(2 * links, n);
        jac.rows_mut(0, links).copy_from(&jac1);
        jac.rows_mut(links, links).copy_from(&jac1);
        for k in 0..links {
            for j in 0..n {
                jac[(links + k, j)] += 1e-5 * next(&mut seed) * jac1[(k, j)].abs();
            }
        }
        let q: Vec<f64> = (0..n).map(|_| 10.0 * next(&mut seed)).collect();
        let gamma: Vec<f64> = (0..2 * links)
            .map(|k| 0.1 * ((k % links) as f64).sin() + if k < links { 0.0 } else { 1e-3 })
            .collect();
        let lam0: Vec<f64> = (0..2 * links).map(|_| 100.0 * next(&mut seed)).collect();
        let (mut d, s) = metric(&jac, &masses, 1e4);
        let mut cg = ConjugateProjection::new(n, 2 * links);
        let (mut a, mut lam) = (vec![0.0; n], lam0.clone());
        let out = cg.project(&mut d, s, &q, &gamma, &mut a, &mut lam, 1e-11, 24);
        assert!(out.uzawa, "{out:?}");
        let (mut a_u, mut lam_u) = (vec![0.0; n], lam0.clone());
        let out_u = cg.uzawa(&mut d, s, &q, &gamma, &mut a_u, &mut lam_u, 1e-11, 24);
        assert!(out.passes > out_u.passes, "{out:?} {out_u:?}");
        assert_eq!(a, a_u);
        assert_eq!(lam, lam_u);
        // the exact projection (the KKT solution) has multipliers orders
        // of magnitude above the Uzawa passes'
        let (a_ref, lam_ref) = kkt(&jac, &masses, &q, &gamma);
        let (big, small) = (max_abs(&lam_ref), max_abs(&lam_u));
        assert!(big > 1e3 * small, "KKT λ {big:e}, Uzawa λ {small:e}");
        assert!(a_ref.iter().all(|x| x.is_finite()));
    }
}
