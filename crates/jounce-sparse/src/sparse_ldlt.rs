//! Sparse LDLᵀ factorisation of a symmetric matrix with a fixed pattern:
//! ordering and symbolic analysis once, numeric factorisation and solves
//! without allocation.
//!
//! P A Pᵀ = L D Lᵀ, L unit lower triangular, D diagonal. Both phases are
//! faer's (`faer::sparse::linalg`): P is the approximate minimum degree
//! ordering of the graph of A (Amestoy, Davis & Duff 1996, SIAM J. Matrix
//! Anal. Appl. 17(4):886–905; `amd::order`), which leaves a banded matrix
//! (a chain) without fill; the elimination tree, column counts and the
//! up-looking simplicial numeric factorisation are those of Davis's LDL
//! package (T. A. Davis, "Algorithm 849: A concise sparse Cholesky
//! factorization package", ACM TOMS 31(4), 2005; `cholesky::simplicial`):
//! row k of L is the reach of the pattern of column k of the upper
//! triangle in the elimination tree, and d_k = a_kk − Σ_{i<k} l_ki² d_i.
//! This module owns the pattern, the value slots a caller writes into, the
//! work memory (set up once: the numeric phase allocates nothing), the
//! pivot test, the inertia count and the solves.
//!
//! No pivoting: solves need A positive definite. A pivot d_k at or below
//! `tol · a_kk` is reported (the row of A it belongs to, the first in
//! elimination order), which for a Gram matrix J W Jᵀ means that row k of J
//! depends, to that relative tolerance, on the rows eliminated before it;
//! callers then fall back to a dense rank-revealing factorisation for the
//! diagnosis. For a symmetric indefinite A the signs of the pivots still
//! count its negative eigenvalues ([`SparseLdlt::negative_eigenvalues`]).

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::ldlt::factor::{LdltError, LdltRegularization};
use faer::sparse::linalg::amd;
use faer::sparse::linalg::cholesky::simplicial::{
    factorize_simplicial_numeric_ldlt, factorize_simplicial_numeric_ldlt_scratch,
    factorize_simplicial_symbolic_cholesky, factorize_simplicial_symbolic_cholesky_scratch,
    prefactorize_symbolic_cholesky, prefactorize_symbolic_cholesky_scratch, SimplicialLdltRef,
    SymbolicSimplicialCholesky,
};
use faer::sparse::SparseColMatRef;
use faer::{Conj, MatMut, Par};

use crate::pattern::ColumnPattern;

/// LDLᵀ of an n × n symmetric matrix with a fixed pattern. Fill the values
/// of the upper triangle of A through the slots returned by
/// [`SparseLdlt::slot`], then [`SparseLdlt::factor`] and
/// [`SparseLdlt::solve_in_place`].
pub struct SparseLdlt {
    /// `perm[k]`: original index eliminated k-th; `inv[i]`: position of i.
    perm: Vec<usize>,
    inv: Vec<usize>,
    /// Upper triangle of P A Pᵀ by columns (rows ≤ column, sorted).
    upper: ColumnPattern,
    /// Values of the upper triangle (what the caller fills).
    pub ax: Vec<f64>,
    /// Position of a_kk in `ax` (k in elimination order).
    diag: Vec<usize>,
    symbolic: SymbolicSimplicialCholesky<usize>,
    /// L (unit diagonal) with d_k in place of l_kk, by columns.
    lx: Vec<f64>,
    /// 1/d_k of the last numeric factorisation.
    d_inv: Vec<f64>,
    req: StackReq,
    mem: MemBuffer,
}

impl Clone for SparseLdlt {
    fn clone(&self) -> Self {
        SparseLdlt {
            perm: self.perm.clone(),
            inv: self.inv.clone(),
            upper: self.upper.clone(),
            ax: self.ax.clone(),
            diag: self.diag.clone(),
            symbolic: self.symbolic.clone(),
            lx: self.lx.clone(),
            d_inv: self.d_inv.clone(),
            req: self.req,
            mem: MemBuffer::new(self.req),
        }
    }
}

impl std::fmt::Debug for SparseLdlt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SparseLdlt")
            .field("n", &self.dim())
            .field("nnz", &self.nnz())
            .field("factor_nnz", &self.factor_nnz())
            .finish()
    }
}

impl SparseLdlt {
    /// Ordering and symbolic analysis for the symmetric pattern made of
    /// `entries` (positions (i, j) of nonzeros, either triangle or both;
    /// the diagonal is always included).
    ///
    /// # Panics
    /// When an entry lies outside n × n (a programming error).
    #[must_use]
    pub fn new(n: usize, entries: &[(usize, usize)]) -> SparseLdlt {
        // upper triangle of A by columns, the diagonal included
        let a = ColumnPattern::upper(n, entries);
        let (mut perm, mut inv) = (vec![0usize; n], vec![0usize; n]);
        {
            let mut mem = MemBuffer::new(amd::order_scratch::<usize>(n, a.nnz()));
            amd::order(
                &mut perm,
                &mut inv,
                a.as_faer(),
                amd::Control::default(),
                MemStack::new(&mut mem),
            )
            .expect("AMD on a valid pattern cannot fail but for memory");
        }
        // upper triangle of P A Pᵀ by columns
        let mut cols: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, j) in a.entries() {
            let (pi, pj) = (inv[i], inv[j]);
            cols[pi.max(pj)].push(pi.min(pj));
        }
        let upper = ColumnPattern::from_columns(cols);
        let diag = (0..n)
            .map(|k| upper.slot(k, k).expect("the diagonal is in the pattern"))
            .collect();
        let symbolic = {
            let a = upper.as_faer();
            let (mut etree, mut counts) = (vec![0isize; n], vec![0usize; n]);
            let mut mem = MemBuffer::new(StackReq::any_of(&[
                prefactorize_symbolic_cholesky_scratch::<usize>(n, upper.nnz()),
                factorize_simplicial_symbolic_cholesky_scratch::<usize>(n),
            ]));
            let stack = MemStack::new(&mut mem);
            let tree = prefactorize_symbolic_cholesky(&mut etree, &mut counts, a, stack);
            factorize_simplicial_symbolic_cholesky(a, tree, &counts, MemStack::new(&mut mem))
                .expect("symbolic Cholesky cannot fail but for memory")
        };
        let req = factorize_simplicial_numeric_ldlt_scratch::<usize, f64>(n);
        SparseLdlt {
            perm,
            inv,
            ax: vec![0.0; upper.nnz()],
            upper,
            diag,
            lx: vec![0.0; symbolic.len_val()],
            d_inv: vec![0.0; n],
            symbolic,
            req,
            mem: MemBuffer::new(req),
        }
    }

    /// Dimension n.
    #[must_use]
    pub fn dim(&self) -> usize {
        self.upper.dim()
    }

    /// Number of entries of the upper triangle of A (the length of `ax`).
    #[must_use]
    pub fn nnz(&self) -> usize {
        self.upper.nnz()
    }

    /// Nonzeros of L below the diagonal (fill included).
    #[must_use]
    pub fn factor_nnz(&self) -> usize {
        self.symbolic.len_val() - self.dim()
    }

    /// Position in `ax` of entry (i, j) = (j, i) of A, if in the pattern
    /// (set-up use: binary search).
    #[must_use]
    pub fn slot(&self, i: usize, j: usize) -> Option<usize> {
        let (a, b) = (self.inv[i], self.inv[j]);
        let (r, c) = if a <= b { (a, b) } else { (b, a) };
        self.upper.slot(r, c)
    }

    /// A + δI: `shift` added to every diagonal value.
    pub fn add_to_diagonal(&mut self, shift: f64) {
        for &d in &self.diag {
            self.ax[d] += shift;
        }
    }

    /// Every value of A set to zero.
    pub fn clear(&mut self) {
        self.ax.iter_mut().for_each(|x| *x = 0.0);
    }

    /// faer's numeric LDLᵀ of the values in `ax` into `lx`, and the
    /// reciprocals 1/d_k of its pivots.
    fn numeric(&mut self) -> Result<(), LdltError> {
        let a = SparseColMatRef::new(self.upper.as_faer(), &self.ax);
        let r = factorize_simplicial_numeric_ldlt(
            &mut self.lx,
            a,
            LdltRegularization::default(),
            &self.symbolic,
            MemStack::new(&mut self.mem),
        );
        let cp = self.symbolic.col_ptr();
        for (k, di) in self.d_inv.iter_mut().enumerate() {
            *di = 1.0 / self.lx[cp[k]];
        }
        r.map(|_| ())
    }

    /// Numeric factorisation of the values in `ax`. Fails with the
    /// original index of the first row (in elimination order) whose pivot
    /// d_k is not above `tol_rel · a_kk` (or not finite).
    ///
    /// # Errors
    /// The original row index of the failing pivot.
    pub fn factor(&mut self, tol_rel: f64) -> Result<(), usize> {
        let n = self.dim();
        let r = self.numeric();
        let cp = self.symbolic.col_ptr();
        let first_bad = (0..n).find(|&k| {
            let dk = self.lx[cp[k]];
            let akk = self.ax[self.diag[k]];
            !(dk.is_finite() && dk > tol_rel * akk.abs()) || dk <= 0.0
        });
        match (r, first_bad) {
            (_, Some(k)) => Err(self.perm[k]),
            (Err(LdltError::ZeroPivot { index }), None) => Err(self.perm[index.min(n - 1)]),
            (Ok(()), None) => Ok(()),
        }
    }

    /// The number of negative eigenvalues of a symmetric (possibly
    /// indefinite) A from the values in `ax`: by Sylvester's law of inertia
    /// P A Pᵀ = L D Lᵀ is a congruence, so A has as many negative
    /// eigenvalues as D has negative pivots (Golub & Van Loan, *Matrix
    /// Computations*, 4th ed., Thm. 8.1.17). Without pivoting the
    /// factorisation may meet a pivot that is zero to round-off, where the
    /// count is not reliable: `None` then (|d_k| ≤ `tol_rel` · max|a_kk|,
    /// or not finite). The factors are overwritten (solves afterwards are
    /// only meaningful when A was positive definite).
    pub fn negative_eigenvalues(&mut self, tol_rel: f64) -> Option<usize> {
        self.numeric().ok()?;
        let scale = self
            .diag
            .iter()
            .map(|&d| self.ax[d].abs())
            .fold(0.0_f64, f64::max);
        let cp = self.symbolic.col_ptr();
        let mut negative = 0;
        for k in 0..self.dim() {
            let dk = self.lx[cp[k]];
            if !dk.is_finite() || dk.abs() <= tol_rel * scale {
                return None;
            }
            negative += usize::from(dk < 0.0);
        }
        Some(negative)
    }

    /// Solve A x = b with the current factors, in place (`b` becomes x);
    /// `work` has length n. faer's simplicial solve: y = P b, L z = y,
    /// z_k / d_k, Lᵀ w = z, x = Pᵀ w (Davis's `ldl_lsolve`, `ldl_dsolve`,
    /// `ldl_ltsolve`).
    pub fn solve_in_place(&self, b: &mut [f64], work: &mut [f64]) {
        let n = self.dim();
        for k in 0..n {
            work[k] = b[self.perm[k]];
        }
        let ldlt = SimplicialLdltRef::new(&self.symbolic, &self.lx);
        // the simplicial solve uses no work memory
        ldlt.solve_in_place_with_conj(
            Conj::No,
            MatMut::from_column_major_slice_mut(&mut work[..n], n, 1),
            Par::Seq,
            MemStack::new(&mut []),
        );
        for k in 0..n {
            b[self.perm[k]] = work[k];
        }
    }

    /// The same solve, x = Pᵀ L⁻ᵀ D⁻¹ L⁻¹ P b in place, with the kept
    /// reciprocals of the pivots: y = P b; L z = y by columns (z_i −= l_ij
    /// z_j below the diagonal); z_j · (1/d_j); Lᵀ x = z by columns (x_j −=
    /// Σ_i l_ij x_i); b = Pᵀ x. Column j of L holds d_j first, then l_ij,
    /// i > j (faer's simplicial layout); the sums of the transposed solve
    /// run in two halves (the dependency chain of the sum halved). Equal
    /// to [`SparseLdlt::solve_in_place`] to rounding, not bit for bit (a
    /// product by 1/d_j for a quotient, and the sums' order); `work` has
    /// length n.
    pub fn solve_in_place_by_reciprocals(&self, b: &mut [f64], work: &mut [f64]) {
        let n = self.dim();
        let (cp, ri) = (self.symbolic.col_ptr(), self.symbolic.row_idx());
        let (lx, y) = (&self.lx[..], &mut work[..n]);
        for (yk, &pk) in y.iter_mut().zip(&self.perm) {
            *yk = b[pk];
        }
        for j in 0..n {
            let yj = y[j];
            let (a, e) = (cp[j], cp[j + 1]);
            for (&i, &l) in ri[a + 1..e].iter().zip(&lx[a + 1..e]) {
                y[i] -= l * yj;
            }
            y[j] = yj * self.d_inv[j];
        }
        for j in (0..n).rev() {
            let (a, e) = (cp[j] + 1, cp[j + 1]);
            let (rows, ls) = (&ri[a..e], &lx[a..e]);
            let (mut s0, mut s1) = (0.0, 0.0);
            let mut pairs = rows.chunks_exact(2).zip(ls.chunks_exact(2));
            for (r, l) in pairs.by_ref() {
                s0 += l[0] * y[r[0]];
                s1 += l[1] * y[r[1]];
            }
            if let (Some(&r), Some(&l)) = (
                rows.chunks_exact(2).remainder().first(),
                ls.chunks_exact(2).remainder().first(),
            ) {
                s0 += l * y[r];
            }
            y[j] -= s0 + s1;
        }
        for (&yk, &pk) in y.iter().zip(&self.perm) {
            b[pk] = yk;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::nonzeros;
    use nalgebra::{DMatrix, DVector};

    /// The inertia of the shifted second-difference matrix tridiag(−1, 2,
    /// −1) − σI, whose eigenvalues are 2 − 2 cos(kπ/(n + 1)): the count of
    /// those below σ, at shifts between them.
    #[test]
    fn counts_the_negative_eigenvalues_of_an_indefinite_matrix() {
        let n = 50;
        let entries: Vec<(usize, usize)> = (0..n - 1).map(|i| (i, i + 1)).collect();
        let mut f = SparseLdlt::new(n, &entries);
        let eig: Vec<f64> = (1..=n)
            .map(|k| 2.0 - 2.0 * (k as f64 * std::f64::consts::PI / (n + 1) as f64).cos())
            .collect();
        for (expected, sigma) in [
            (0, -0.5),
            (1, 0.5 * (eig[0] + eig[1])),
            (17, 0.5 * (eig[16] + eig[17])),
            (n, 4.5),
        ] {
            f.clear();
            for i in 0..n {
                let d = f.slot(i, i).expect("diagonal");
                f.ax[d] = 2.0 - sigma;
                if i + 1 < n {
                    let e = f.slot(i, i + 1).expect("in pattern");
                    f.ax[e] = -1.0;
                }
            }
            assert_eq!(f.negative_eigenvalues(1e-14), Some(expected), "σ = {sigma}");
        }
        // a shift onto an eigenvalue leaves a zero pivot only by accident;
        // an exactly singular diagonal one is reported as not countable
        let mut g = SparseLdlt::new(2, &[]);
        let d = g.slot(0, 0).expect("diagonal");
        g.ax[d] = 1.0;
        assert_eq!(g.negative_eigenvalues(1e-14), None);
    }

    /// A random sparse SPD matrix B Bᵀ + I solved against nalgebra's
    /// Cholesky, and a rank-deficient one reported.
    #[test]
    fn solves_sparse_spd_and_reports_dependent_rows() {
        let n = 30;
        let mut seed: u64 = 7;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let mut b = DMatrix::zeros(n, n);
        for i in 0..n {
            b[(i, i)] = 1.0 + rnd();
            b[(i, (i * 7 + 3) % n)] = rnd();
            b[(i, (i * 3 + 1) % n)] = rnd();
        }
        let a = &b * b.transpose() + DMatrix::identity(n, n);
        let entries = nonzeros(&a);
        let mut f = SparseLdlt::new(n, &entries);
        for &(i, j) in &entries {
            if i <= j {
                let s = f.slot(i, j).expect("in pattern");
                f.ax[s] = a[(i, j)];
            }
        }
        f.factor(1e-12).expect("SPD");
        let x: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
        let mut rhs: Vec<f64> = (&a * DVector::from_column_slice(&x))
            .iter()
            .copied()
            .collect();
        let mut work = vec![0.0; n];
        f.solve_in_place(&mut rhs, &mut work);
        for i in 0..n {
            assert!((rhs[i] - x[i]).abs() < 1e-12, "{i}: {} vs {}", rhs[i], x[i]);
        }
        // J Jᵀ with row 2 = row 0 + row 1: a zero pivot at one of them
        let j = DMatrix::from_row_slice(3, 3, &[1.0, 0.0, 2.0, 0.0, 1.0, 1.0, 1.0, 1.0, 3.0]);
        let g = &j * j.transpose();
        let all: Vec<(usize, usize)> = (0..3).flat_map(|i| (0..3).map(move |k| (i, k))).collect();
        let mut f = SparseLdlt::new(3, &all);
        for i in 0..3 {
            for k in i..3 {
                let s = f.slot(i, k).expect("in pattern");
                f.ax[s] = g[(i, k)];
            }
        }
        assert!(f.factor(1e-12).is_err());
    }

    /// The Gram matrix J Jᵀ of a 200-link chain's constraint Jacobian
    /// pattern (block bidiagonal J, random values): the faer factorisation
    /// solves as nalgebra's dense Cholesky does, to rounding, with O(N)
    /// fill, by either solve, and refactors new values in the same
    /// pattern.
    #[test]
    fn agrees_with_a_dense_cholesky_on_a_chain_gram_matrix() {
        let links = 200;
        let (m, n) = (2 * links, 3 * links);
        let mut j = DMatrix::zeros(m, n);
        for k in 0..links {
            for r in 0..2 {
                let row = 2 * k + r;
                for c in 0..3 {
                    j[(row, 3 * k + c)] = 1.0 + 0.1 * ((row * 7 + c * 3) % 11) as f64;
                    if k > 0 {
                        j[(row, 3 * (k - 1) + c)] = -0.5 - 0.05 * ((row + c) % 5) as f64;
                    }
                }
            }
        }
        let g = &j * j.transpose();
        let entries = nonzeros(&g);
        let mut f = SparseLdlt::new(m, &entries);
        assert!(f.factor_nnz() < 10 * m, "fill {}", f.factor_nnz());
        for scale in [1.0, 3.0] {
            f.clear();
            for &(i, k) in &entries {
                if i <= k {
                    let s = f.slot(i, k).unwrap();
                    f.ax[s] = scale * g[(i, k)];
                }
            }
            f.factor(1e-12).expect("full row rank");
            let b = DVector::from_fn(m, |i, _| (i as f64 * 0.37).cos());
            let want = (&g * scale).cholesky().expect("SPD").solve(&b);
            let (mut x, mut work) = (b.as_slice().to_vec(), vec![0.0; m]);
            f.solve_in_place(&mut x, &mut work);
            let err = (DVector::from_vec(x) - &want).amax() / want.amax();
            assert!(err < 1e-11, "scale {scale}: {err:e}");
            // the solve by the kept reciprocals of the pivots, likewise
            let mut y = b.as_slice().to_vec();
            f.solve_in_place_by_reciprocals(&mut y, &mut work);
            let err = (DVector::from_vec(y) - &want).amax() / want.amax();
            assert!(err < 1e-11, "scale {scale}, by reciprocals: {err:e}");
        }
    }

    #[test]
    fn a_tridiagonal_matrix_has_no_fill() {
        let n = 50;
        let entries: Vec<(usize, usize)> = (0..n - 1).map(|i| (i, i + 1)).collect();
        let f = SparseLdlt::new(n, &entries);
        assert_eq!(f.factor_nnz(), n - 1);
    }
}
