//! The weighted Gram matrix S = J W Jᵀ of a sparse J (m × n) and a
//! positive diagonal W, assembled into a fixed pattern and factored by
//! sparse LDLᵀ ([`SparseLdlt`]).
//!
//! Two uses: with W = M⁻¹ it is the Schur complement Φ_q M⁻¹ Φ_qᵀ of the
//! augmented (KKT) matrix [M Φ_qᵀ; Φ_q 0] when M is diagonal and regular,
//! so that
//!
//! ```text
//! S λ = Φ_q M⁻¹ Q − c,    a = M⁻¹ (Q − Φ_qᵀ λ)
//! ```
//!
//! solves [M Φ_qᵀ; Φ_q 0][a; λ] = [Q; c] (the range-space method, Nocedal &
//! Wright, *Numerical Optimization*, 2nd ed., §16.2; García de Jalón &
//! Bayo 1994, ch. 7); with W = I it gives the minimum-norm solution
//! x = Jᵀ (J Jᵀ)⁻¹ b of J x = b (Newton steps of assembly). Both need J of
//! full row rank: a pivot that vanishes names a row dependent on the rows
//! eliminated before it, and callers fall back to a dense rank-revealing
//! factorisation to diagnose it.
//!
//! Pattern: S_ik may be nonzero when rows i and k of J share a column.
//! Set-up lists, for every column j, the pairs (i ≤ k) of rows with an
//! entry in j together with their positions in J's values and in the
//! factor, so that each assembly is one flat loop of O(Σ_j r_j²)
//! multiply-adds (r_j rows in column j: a few for a mechanism).

use crate::sparse::SparseMatrix;
use jounce_sparse::SparseLdlt;

/// One product term J_ij w_j J_kj of S_ik.
#[derive(Clone, Copy, Debug)]
struct Term {
    /// Positions of J_ij and J_kj in J's values.
    a: usize,
    b: usize,
    /// Column j (the weight).
    col: usize,
    /// Position of S_ik in the factor's values.
    slot: usize,
}

/// S = J W Jᵀ for a fixed pattern of J, and its LDLᵀ factors.
#[derive(Clone, Debug)]
pub struct GramFactor {
    terms: Vec<Term>,
    ldlt: SparseLdlt,
}

impl GramFactor {
    /// Set-up for the pattern of `j` (values ignored).
    #[must_use]
    pub fn new(j: &SparseMatrix) -> GramFactor {
        let (m, n) = j.shape();
        // column → (row, position in values)
        let mut by_col: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
        for i in 0..m {
            for p in j.row_range(i) {
                by_col[j.col_indices()[p]].push((i, p));
            }
        }
        let mut entries: Vec<(usize, usize)> = (0..m).map(|i| (i, i)).collect();
        for rows in &by_col {
            for (x, &(i, _)) in rows.iter().enumerate() {
                for &(k, _) in &rows[x + 1..] {
                    entries.push((i, k));
                }
            }
        }
        let ldlt = SparseLdlt::new(m, &entries);
        let mut terms = Vec::new();
        for (col, rows) in by_col.iter().enumerate() {
            for (x, &(i, a)) in rows.iter().enumerate() {
                for &(k, b) in &rows[x..] {
                    let slot = ldlt.slot(i, k).expect("S_ik is in the pattern");
                    terms.push(Term { a, b, col, slot });
                }
            }
        }
        GramFactor { terms, ldlt }
    }

    /// Number of rows of J (order of S).
    #[must_use]
    pub fn dim(&self) -> usize {
        self.ldlt.dim()
    }

    /// Assemble S = J W Jᵀ (`w` the diagonal of W, len n) and factor it.
    ///
    /// # Errors
    /// The row of J whose pivot fell below `tol_rel` times its diagonal
    /// entry of S: J is (numerically) rank deficient there.
    pub fn factor(&mut self, j: &SparseMatrix, w: &[f64], tol_rel: f64) -> Result<(), usize> {
        self.factor_shifted(j, w, 0.0, tol_rel)
    }

    /// Assemble S + δI (S = J W Jᵀ) and factor it: with δ > 0 the factors
    /// exist where J loses rank (inverse iteration for the smallest
    /// singular value of J, which sees λ_min(S) + δ).
    ///
    /// # Errors
    /// As [`GramFactor::factor`].
    pub fn factor_shifted(
        &mut self,
        j: &SparseMatrix,
        w: &[f64],
        shift: f64,
        tol_rel: f64,
    ) -> Result<(), usize> {
        self.ldlt.clear();
        let v = &j.values;
        for t in &self.terms {
            self.ldlt.ax[t.slot] += v[t.a] * w[t.col] * v[t.b];
        }
        if shift != 0.0 {
            self.ldlt.add_to_diagonal(shift);
        }
        self.ldlt.factor(tol_rel)
    }

    /// Solve S x = b with the current factors, in place; `work` len m.
    pub fn solve_in_place(&self, b: &mut [f64], work: &mut [f64]) {
        self.ldlt.solve_in_place(b, work);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{DMatrix, DVector};

    #[test]
    fn gram_solve_matches_dense_normal_equations() {
        let entries = [(0, 0), (0, 2), (1, 1), (1, 2), (1, 4), (2, 3), (2, 4)];
        let mut j = SparseMatrix::from_pattern(3, 5, &entries);
        for (k, v) in j.values.iter_mut().enumerate() {
            *v = 1.0 + 0.3 * k as f64 - 0.1 * (k * k) as f64;
        }
        let w = [2.0, 0.5, 1.0, 3.0, 0.25];
        let mut g = GramFactor::new(&j);
        g.factor(&j, &w, 1e-12).expect("full row rank");
        let jd = j.to_dense();
        let s = &jd * DMatrix::from_diagonal(&DVector::from_column_slice(&w)) * jd.transpose();
        let x = [0.3, -1.0, 2.0];
        let mut b: Vec<f64> = (&s * DVector::from_column_slice(&x))
            .iter()
            .copied()
            .collect();
        let mut work = [0.0; 3];
        g.solve_in_place(&mut b, &mut work);
        for i in 0..3 {
            assert!((b[i] - x[i]).abs() < 1e-12);
        }
    }
}
