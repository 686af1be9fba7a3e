//! Minimum-norm Lagrange multipliers of a system with redundant
//! constraint rows.
//!
//! With redundant rows, Φ_q (m × n) has rank r < m and the multipliers
//! that produce a given constraint force f_c = −Φ_qᵀλ are not unique:
//! any λ + N μ with N a basis of the left null space of Φ_q
//! (Φ_qᵀ N = 0, p = m − r columns) gives the same force and the same
//! motion (García de Jalón & Bayo 1994, §5.1.3; Wojtyra & Frączek,
//! *Comparison of selected methods of handling redundant constraints in
//! multibody systems simulations*, J. Comput. Nonlinear Dynam. 8, 2013).
//! The reactions are determined only up to that null space; what jounce
//! reports, for every formulation alike, is the unique minimum-norm one
//!
//! λ_mn = argmin ‖λ‖₂ subject to Φ_qᵀλ = Φ_qᵀλ_f = λ_f − N (Nᵀ λ_f)
//!
//! (N orthonormal), λ_f the multipliers the formulation computed: those of
//! the kept rows, zero in the dropped rows, for a formulation run on
//! [`crate::IndependentRows`]; all rows for one that runs them all
//! (penalty). λ_mn ⟂ N, and it shares the load of a redundant pair of
//! joints between them (e.g. equally between two identical cranks).
//!
//! N from the dependencies of the dropped rows: a dropped row j_r of Φ_q
//! is a combination j_r = Σ_k c_k j_k of the kept rows K, with
//! c = (J_K J_Kᵀ)⁻¹ J_K j_rᵀ (least squares; J_K J_Kᵀ factored by sparse
//! LDLᵀ, [`GramFactor`]), so n_r = e_r − Σ_k c_k e_k satisfies
//! Φ_qᵀ n_r = 0; the p vectors n_r (one 1 each in a distinct dropped row)
//! are independent and are orthonormalised by Gram–Schmidt (twice). Done
//! at output rows only; everything is allocated at set-up.

use crate::capabilities::SystemQueries;
use crate::gram::GramFactor;
use crate::sparse::SparseMatrix;
use crate::system::MechanicalSystem;

/// Relative pivot threshold of the kept rows' Gram matrix, (10⁻⁸)²: the
/// row-rank criterion of [`crate::assemble`].
const GRAM_RTOL: f64 = 1e-16;

/// Turns the multipliers of a formulation into the minimum-norm ones over
/// all rows (see the module documentation).
#[derive(Clone, Debug)]
pub struct MinimumNormReactions {
    m: usize,
    kept: Vec<usize>,
    dropped: Vec<usize>,
    /// The formulation's multipliers: len |K| (kept rows) or m (all rows).
    input: Vec<f64>,
    /// Φ_q of all rows, in the system's pattern.
    jac: SparseMatrix,
    /// Φ_q of the kept rows.
    jac_kept: SparseMatrix,
    gram: GramFactor,
    ones: Vec<f64>,
    /// A row of Φ_q, dense (len n).
    row: Vec<f64>,
    /// J_K x, then c (len |K|).
    coef: Vec<f64>,
    work: Vec<f64>,
    /// p × m, row-major: n_r, then orthonormalised.
    null: Vec<f64>,
}

impl MinimumNormReactions {
    /// For `sys` with its rows `dropped` redundant (e.g.
    /// [`crate::Assembly::redundant_rows`]); the formulation's multipliers
    /// are over all rows when `input_all_rows`, over the kept rows
    /// otherwise. Set-up: allocates.
    #[must_use]
    pub fn new<S: MechanicalSystem + ?Sized>(
        sys: &S,
        dropped: &[usize],
        input_all_rows: bool,
    ) -> MinimumNormReactions {
        let (m, n) = (sys.nc(), sys.nv());
        let mut is_dropped = vec![false; m];
        for &r in dropped {
            if r < m {
                is_dropped[r] = true;
            }
        }
        let kept: Vec<usize> = (0..m).filter(|&r| !is_dropped[r]).collect();
        let dropped: Vec<usize> = (0..m).filter(|&r| is_dropped[r]).collect();
        let mut new_index = vec![usize::MAX; m];
        for (k, &r) in kept.iter().enumerate() {
            new_index[r] = k;
        }
        let pattern = sys
            .constraint_jacobian_pattern()
            .unwrap_or_else(|| (0..m).flat_map(|i| (0..n).map(move |j| (i, j))).collect());
        let jac = SparseMatrix::from_pattern(m, n, &pattern);
        let kept_pattern: Vec<(usize, usize)> = pattern
            .iter()
            .filter(|&&(i, _)| !is_dropped[i])
            .map(|&(i, j)| (new_index[i], j))
            .collect();
        let jac_kept = SparseMatrix::from_pattern(kept.len(), n, &kept_pattern);
        let gram = GramFactor::new(&jac_kept);
        let k = kept.len();
        MinimumNormReactions {
            m,
            input: vec![0.0; if input_all_rows { m } else { k }],
            null: vec![0.0; dropped.len() * m],
            kept,
            dropped,
            jac,
            jac_kept,
            gram,
            ones: vec![1.0; n],
            row: vec![0.0; n],
            coef: vec![0.0; k],
            work: vec![0.0; k],
        }
    }

    /// The rows whose multipliers are not unique: the dropped rows.
    #[must_use]
    pub fn dropped_rows(&self) -> &[usize] {
        &self.dropped
    }

    /// Buffer for the formulation's multipliers (len |K| or m, as set up),
    /// read by [`MinimumNormReactions::apply`].
    pub fn input_mut(&mut self) -> &mut [f64] {
        &mut self.input
    }

    /// Fill `null` with the dependency vectors n_r = e_r − Σ c_k e_k of
    /// the dropped rows at (t, q); false when the kept rows are dependent
    /// there (a singular configuration) or Φ_q is not finite.
    fn dependency_vectors<S: MechanicalSystem + ?Sized>(
        &mut self,
        sys: &S,
        t: f64,
        q: &[f64],
    ) -> bool {
        sys.sparse_constraint_jacobian(t, q, &mut self.jac);
        if !self.jac.values.iter().all(|x| x.is_finite()) {
            return false;
        }
        for (k, &r) in self.kept.iter().enumerate() {
            let src = self.jac.row_range(r);
            let dst = self.jac_kept.row_range(k);
            self.jac_kept.values[dst].copy_from_slice(&self.jac.values[src]);
        }
        if self
            .gram
            .factor(&self.jac_kept, &self.ones, GRAM_RTOL)
            .is_err()
        {
            return false;
        }
        let m = self.m;
        for (p, &r) in self.dropped.iter().enumerate() {
            self.row.fill(0.0);
            let (cols, vals) = self.jac.row(r);
            for (&j, &x) in cols.iter().zip(vals) {
                self.row[j] = x;
            }
            self.coef.fill(0.0);
            self.jac_kept.mul_add(&self.row, &mut self.coef);
            self.gram.solve_in_place(&mut self.coef, &mut self.work);
            let nr = &mut self.null[p * m..(p + 1) * m];
            nr.fill(0.0);
            nr[r] = 1.0;
            for (&kr, &c) in self.kept.iter().zip(&self.coef) {
                nr[kr] = -c;
            }
        }
        true
    }

    /// λ_mn over all rows at (t, q) into `lambda` (len m) from the
    /// multipliers in [`MinimumNormReactions::input_mut`]. Returns false
    /// when the null space could not be formed here (singular
    /// configuration): `lambda` then holds the formulation's multipliers
    /// as they are (zero in dropped rows it did not compute). Allocates
    /// nothing.
    pub fn apply<S: MechanicalSystem + ?Sized>(
        &mut self,
        sys: &S,
        t: f64,
        q: &[f64],
        lambda: &mut [f64],
    ) -> bool {
        if self.input.len() == self.m {
            lambda.copy_from_slice(&self.input);
        } else {
            lambda.fill(0.0);
            for (&r, &l) in self.kept.iter().zip(&self.input) {
                lambda[r] = l;
            }
        }
        if self.dropped.is_empty() || !self.dependency_vectors(sys, t, q) {
            return self.dropped.is_empty();
        }
        let m = self.m;
        let p = self.dropped.len();
        // Gram–Schmidt, twice, on the rows of `null`
        for a in 0..p {
            for _ in 0..2 {
                for b in 0..a {
                    let (head, tail) = self.null.split_at_mut(a * m);
                    let nb = &head[b * m..(b + 1) * m];
                    let na = &mut tail[..m];
                    let d: f64 = na.iter().zip(nb).map(|(x, y)| x * y).sum();
                    for (x, y) in na.iter_mut().zip(nb) {
                        *x -= d * y;
                    }
                }
            }
            let na = &mut self.null[a * m..(a + 1) * m];
            let norm = na.iter().map(|x| x * x).sum::<f64>().sqrt();
            for x in na.iter_mut() {
                *x /= norm;
            }
        }
        for a in 0..p {
            let na = &self.null[a * m..(a + 1) * m];
            let d: f64 = na.iter().zip(lambda.iter()).map(|(x, y)| x * y).sum();
            for (l, x) in lambda.iter_mut().zip(na) {
                *l -= d * x;
            }
        }
        true
    }

    /// The orthonormal basis N of the left null space of Φ_q formed by the
    /// last successful [`MinimumNormReactions::apply`], p × m row-major.
    #[must_use]
    pub fn null_basis(&self) -> &[f64] {
        &self.null
    }

    /// For each dropped row r, the kept rows it depends on at (t, q) with
    /// their coefficients, j_r = Σ_k c_k j_k (|c_k| > 10⁻¹⁰ max|c|), or
    /// `None` at a singular configuration. Set-up and diagnostics
    /// (allocates).
    pub fn dependencies<S: MechanicalSystem + ?Sized>(
        &mut self,
        sys: &S,
        t: f64,
        q: &[f64],
    ) -> Option<Vec<Vec<(usize, f64)>>> {
        if !self.dependency_vectors(sys, t, q) {
            return None;
        }
        let m = self.m;
        Some(
            (0..self.dropped.len())
                .map(|p| {
                    let nr = &self.null[p * m..(p + 1) * m];
                    let cmax = self.kept.iter().fold(0.0_f64, |a, &k| a.max(nr[k].abs()));
                    self.kept
                        .iter()
                        .filter(|&&k| nr[k] != 0.0 && nr[k].abs() > 1e-10 * cmax)
                        .map(|&k| (k, -nr[k]))
                        .collect()
                })
                .collect(),
        )
    }
}
