//! Sparse LDLᵀ factorisation of a matrix with a fixed pattern that is
//! symmetric positive definite for most of its values, with the LU of the
//! same pattern where it is not: ordering and symbolic analysis once, every
//! refactorisation numeric only.
//!
//! P A Pᵀ = L D Lᵀ, L unit lower triangular, D diagonal, P the approximate
//! minimum degree ordering of the graph of A (Amestoy, Davis & Duff 1996,
//! SIAM J. Matrix Anal. Appl. 17(4):886–905; faer's `amd::order`), which
//! leaves a chain's block-tridiagonal matrix without fill. The elimination
//! tree and column counts are computed once; each factorisation is the
//! up-looking simplicial one of Davis's LDL (T. A. Davis, "Algorithm 849:
//! A concise sparse Cholesky factorization package", ACM TOMS 31(4), 2005;
//! faer's `cholesky::simplicial`): row k of L is the reach of column k of
//! the upper triangle in the elimination tree, d_k = a_kk − Σ_{i<k} l_ki²
//! d_i. Unlike the LU with partial pivoting ([`crate::sparse_lu`]), whose
//! pivot order depends on the values and whose every factorisation redoes
//! the Gilbert–Peierls depth-first search of the reach of each column,
//! nothing symbolic is redone here (the twin of `jounce-mechanics`'
//! `sparse_ldlt`, which factors the KKT systems' Gram matrices).
//!
//! No pivoting, so it is used only where A is symmetric positive definite,
//! which is tested at each factorisation: symmetry of the values (|a_ij −
//! a_ji| ≤ [`SYMMETRY_TOL`] √(|a_ii a_jj|); the mean of the two is
//! factorised) and every pivot d_k positive and finite (by Sylvester's law
//! of inertia A is then positive definite, and Cholesky's backward error
//! is small without pivoting: Higham 2002, *Accuracy and Stability of
//! Numerical Algorithms*, 2nd ed., Thm. 10.5). Otherwise the same values
//! go to the LU of the same pattern ([`SparseLu`], set up at the first
//! such matrix), which decides singularity as it always did.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::ldlt::factor::LdltRegularization;
use faer::sparse::linalg::amd;
use faer::sparse::linalg::cholesky::simplicial::{
    factorize_simplicial_numeric_ldlt, factorize_simplicial_numeric_ldlt_scratch,
    factorize_simplicial_symbolic_cholesky, factorize_simplicial_symbolic_cholesky_scratch,
    prefactorize_symbolic_cholesky, prefactorize_symbolic_cholesky_scratch,
    SymbolicSimplicialCholesky,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};

use crate::sparse_lu::SparseLu;

/// Largest asymmetry |a_ij − a_ji| / √(|a_ii a_jj|) taken as rounding of a
/// symmetric matrix (assembled in different orders on the two sides).
pub const SYMMETRY_TOL: f64 = 1e-12;

/// Which factorisation holds the current values.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Factors {
    None,
    Ldlt,
    Lu,
}

/// LDLᵀ of an n × n matrix with a fixed symmetric pattern, falling back to
/// the LU of the same pattern for values that are not symmetric positive
/// definite (module documentation). Write values of the whole matrix (both
/// triangles) through [`SparseLdlt::slot`] into [`SparseLdlt::values_mut`],
/// then [`SparseLdlt::factor`] and [`SparseLdlt::solve_in_place`]: the
/// interface of [`SparseLu`].
pub struct SparseLdlt {
    n: usize,
    /// Compressed sparse columns of the whole pattern (symmetric, the
    /// diagonal included), rows sorted within a column.
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    values: Vec<f64>,
    /// `perm[k]`: the index eliminated k-th.
    perm: Vec<usize>,
    /// Upper triangle of P A Pᵀ by columns, and for each of its entries
    /// the slots of a_ij and a_ji in `values`.
    ap: Vec<usize>,
    ai: Vec<usize>,
    ax: Vec<f64>,
    pair: Vec<(usize, usize)>,
    /// Slots of a_ii in `values` (i in the original order).
    diag: Vec<usize>,
    symbolic: SymbolicSimplicialCholesky<usize>,
    /// L (unit diagonal) with d_k in place of l_kk, by columns.
    lx: Vec<f64>,
    /// 1/d_k of the last LDLᵀ.
    d_inv: Vec<f64>,
    mem: MemBuffer,
    /// Permuted right-hand side of a solve.
    work: Vec<f64>,
    /// The LU of the same pattern, for values that are not symmetric
    /// positive definite (set up at the first such values).
    lu: Option<Box<SparseLu>>,
    factors: Factors,
    /// LDLᵀ and LU factorisations so far (the tests' count of the path
    /// taken).
    n_ldlt: u64,
    n_lu: u64,
}

impl std::fmt::Debug for SparseLdlt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SparseLdlt")
            .field("n", &self.n)
            .field("nnz", &self.row_idx.len())
            .field("factor_nnz", &self.lx.len())
            .field("factors", &self.factors)
            .finish()
    }
}

impl SparseLdlt {
    /// Ordering and symbolic analysis of the pattern made of `entries`
    /// (row, column), symmetrised, the diagonal included; duplicates are
    /// merged.
    ///
    /// # Panics
    /// If an entry lies outside the matrix (a programming error of the
    /// caller, which builds the pattern from its own dimensions).
    #[must_use]
    pub fn new(n: usize, entries: &[(usize, usize)]) -> Self {
        let mut cols: Vec<Vec<usize>> = (0..n).map(|j| vec![j]).collect();
        for &(i, j) in entries {
            assert!(
                i < n && j < n,
                "SparseLdlt: entry ({i}, {j}) outside {n} × {n}"
            );
            cols[j].push(i);
            cols[i].push(j);
        }
        let (col_ptr, row_idx) = compress(cols);
        let slot_of = |i: usize, j: usize| {
            let (a, b) = (col_ptr[j], col_ptr[j + 1]);
            a + row_idx[a..b].binary_search(&i).expect("symmetric pattern")
        };
        // AMD on the upper triangle
        let mut upper: Vec<Vec<usize>> = vec![Vec::new(); n];
        for j in 0..n {
            for &i in &row_idx[col_ptr[j]..col_ptr[j + 1]] {
                if i <= j {
                    upper[j].push(i);
                }
            }
        }
        let (up, ui) = compress(upper);
        let (mut perm, mut inv) = (vec![0usize; n], vec![0usize; n]);
        {
            let a = SymbolicSparseColMatRef::new_checked(n, n, &up, None, &ui);
            let mut mem = MemBuffer::new(amd::order_scratch::<usize>(n, ui.len()));
            amd::order(
                &mut perm,
                &mut inv,
                a,
                amd::Control::default(),
                MemStack::new(&mut mem),
            )
            .expect("AMD on a valid pattern cannot fail but for memory");
        }
        // upper triangle of P A Pᵀ by columns, with the slots it comes from
        let mut cols: Vec<Vec<(usize, usize, usize)>> = vec![Vec::new(); n];
        for j in 0..n {
            for &i in &ui[up[j]..up[j + 1]] {
                let (pi, pj) = (inv[i], inv[j]);
                let (r, c) = (pi.min(pj), pi.max(pj));
                cols[c].push((r, slot_of(i, j), slot_of(j, i)));
            }
        }
        let mut ap = Vec::with_capacity(n + 1);
        let (mut ai, mut pair) = (Vec::new(), Vec::new());
        ap.push(0);
        for mut c in cols {
            c.sort_unstable_by_key(|e| e.0);
            for (r, s1, s2) in c {
                ai.push(r);
                pair.push((s1, s2));
            }
            ap.push(ai.len());
        }
        let symbolic = {
            let a = SymbolicSparseColMatRef::new_checked(n, n, &ap, None, &ai);
            let (mut etree, mut counts) = (vec![0isize; n], vec![0usize; n]);
            let mut mem = MemBuffer::new(faer::dyn_stack::StackReq::any_of(&[
                prefactorize_symbolic_cholesky_scratch::<usize>(n, ai.len()),
                factorize_simplicial_symbolic_cholesky_scratch::<usize>(n),
            ]));
            let tree =
                prefactorize_symbolic_cholesky(&mut etree, &mut counts, a, MemStack::new(&mut mem));
            factorize_simplicial_symbolic_cholesky(a, tree, &counts, MemStack::new(&mut mem))
                .expect("symbolic Cholesky cannot fail but for memory")
        };
        let diag = (0..n).map(|i| slot_of(i, i)).collect();
        let nnz = row_idx.len();
        let nu = ai.len();
        Self {
            n,
            col_ptr,
            row_idx,
            values: vec![0.0; nnz],
            perm,
            ap,
            ai,
            ax: vec![0.0; nu],
            pair,
            diag,
            lx: vec![0.0; symbolic.len_val()],
            symbolic,
            mem: MemBuffer::new(factorize_simplicial_numeric_ldlt_scratch::<usize, f64>(n)),
            work: vec![0.0; n],
            d_inv: vec![0.0; n],
            lu: None,
            factors: Factors::None,
            n_ldlt: 0,
            n_lu: 0,
        }
    }

    /// The dimension n.
    #[must_use]
    pub fn dim(&self) -> usize {
        self.n
    }

    /// Number of entries of the (symmetrised) pattern.
    #[must_use]
    pub fn nnz(&self) -> usize {
        self.row_idx.len()
    }

    /// Position of entry (i, j) in [`SparseLdlt::values_mut`], `None` when
    /// it is not in the pattern.
    #[must_use]
    pub fn slot(&self, i: usize, j: usize) -> Option<usize> {
        let (a, b) = (self.col_ptr[j], self.col_ptr[j + 1]);
        self.row_idx[a..b].binary_search(&i).ok().map(|k| a + k)
    }

    /// The values of A in pattern order (column by column); writing them
    /// forgets the factorisation.
    pub fn values_mut(&mut self) -> &mut [f64] {
        self.factors = Factors::None;
        &mut self.values
    }

    /// The values of A in pattern order.
    #[must_use]
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// LDLᵀ factorisations so far.
    #[must_use]
    pub fn ldlt_count(&self) -> u64 {
        self.n_ldlt
    }

    /// LU factorisations so far (values not symmetric positive definite).
    #[must_use]
    pub fn lu_count(&self) -> u64 {
        self.n_lu
    }

    /// Factorise the current values: LDLᵀ where they are symmetric
    /// positive definite, else the LU with partial pivoting. `false` when
    /// the LU finds A singular (a zero or non-finite pivot); the
    /// factorisation is then unusable.
    pub fn factor(&mut self) -> bool {
        self.factors = Factors::None;
        if self.factor_ldlt() {
            self.n_ldlt += 1;
            self.factors = Factors::Ldlt;
            return true;
        }
        let n = self.n;
        let lu = self.lu.get_or_insert_with(|| {
            let mut entries = Vec::with_capacity(self.row_idx.len());
            for j in 0..n {
                for &i in &self.row_idx[self.col_ptr[j]..self.col_ptr[j + 1]] {
                    entries.push((i, j));
                }
            }
            Box::new(SparseLu::new(n, &entries))
        });
        // the same pattern, so the same slots
        lu.values_mut().copy_from_slice(&self.values);
        self.n_lu += 1;
        if lu.factor() {
            self.factors = Factors::Lu;
            true
        } else {
            false
        }
    }

    /// The symmetry test, the upper triangle gathered, the numeric LDLᵀ and
    /// the pivot test (module documentation); `false` when A is not
    /// symmetric positive definite.
    fn factor_ldlt(&mut self) -> bool {
        let n = self.n;
        for (x, &(s1, s2)) in self.ax.iter_mut().zip(&self.pair) {
            let (a, b) = (self.values[s1], self.values[s2]);
            if a != b {
                // the scale √(|a_ii a_jj|) of the two diagonal entries
                let (i, j) = (self.row_idx[s1], self.row_idx[s2]);
                let scale = (self.values[self.diag[i]] * self.values[self.diag[j]])
                    .abs()
                    .sqrt();
                if !((a - b).abs() <= SYMMETRY_TOL * scale) {
                    return false;
                }
            }
            *x = 0.5 * (a + b);
        }
        let a = SparseColMatRef::new(
            SymbolicSparseColMatRef::new_checked(n, n, &self.ap, None, &self.ai),
            &self.ax,
        );
        if factorize_simplicial_numeric_ldlt(
            &mut self.lx,
            a,
            LdltRegularization::default(),
            &self.symbolic,
            MemStack::new(&mut self.mem),
        )
        .is_err()
        {
            return false;
        }
        let cp = self.symbolic.col_ptr();
        for (k, di) in self.d_inv.iter_mut().enumerate() {
            let d = self.lx[cp[k]];
            if !(d > 0.0 && d.is_finite()) {
                return false;
            }
            *di = 1.0 / d;
        }
        true
    }

    /// Whether a factorisation of the current values is available.
    #[must_use]
    pub fn is_factored(&self) -> bool {
        self.factors != Factors::None
    }

    /// Forget the factorisation.
    pub fn invalidate(&mut self) {
        self.factors = Factors::None;
    }

    /// Solve A x = b in place with the factors.
    ///
    /// # Panics
    /// If no factorisation is available (a programming error of the caller).
    pub fn solve_in_place(&mut self, b: &mut [f64]) {
        match self.factors {
            Factors::None => panic!("SparseLdlt::solve_in_place before factor"),
            Factors::Lu => self
                .lu
                .as_mut()
                .expect("the LU holds the factors")
                .solve_in_place(b),
            Factors::Ldlt => self.ldlt_solve(b),
        }
    }
}

impl SparseLdlt {
    /// x = Pᵀ L⁻ᵀ D⁻¹ L⁻¹ P b in place: y = P b; L z = y by columns
    /// (z_i −= l_ij z_j below the diagonal); z_j /= d_j; Lᵀ x = z by
    /// columns (x_j −= Σ_i l_ij x_i); b = Pᵀ x. Column j of L holds d_j
    /// first, then l_ij, i > j (faer's simplicial layout); 1/d_j is kept
    /// from the factorisation and the sums of the transposed solve run in
    /// two halves (the dependency chain of the sum halved).
    fn ldlt_solve(&mut self, b: &mut [f64]) {
        let n = self.n;
        let (cp, ri) = (self.symbolic.col_ptr(), self.symbolic.row_idx());
        let (lx, y) = (&self.lx[..], &mut self.work[..n]);
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

/// Compressed columns of `cols` (each sorted and deduplicated here).
fn compress(cols: Vec<Vec<usize>>) -> (Vec<usize>, Vec<usize>) {
    let mut cp = Vec::with_capacity(cols.len() + 1);
    let mut ci = Vec::new();
    cp.push(0);
    for mut c in cols {
        c.sort_unstable();
        c.dedup();
        ci.extend_from_slice(&c);
        cp.push(ci.len());
    }
    (cp, ci)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{DMatrix, DVector};

    /// The matrix M + s JᵀJ of a chain of `bodies` planar links (3
    /// coordinates each, pin joints of 2 rows coupling neighbours),
    /// M diagonal: the projection metric of the augmented Lagrangian.
    fn chain_metric(bodies: usize, s: f64) -> DMatrix<f64> {
        let n = 3 * bodies;
        let mut j = DMatrix::zeros(2 * bodies, n);
        for b in 0..bodies {
            let th = 0.3 + 0.17 * b as f64;
            for r in 0..2 {
                let row = 2 * b + r;
                j[(row, 3 * b + r)] = 1.0;
                j[(row, 3 * b + 2)] = if r == 0 {
                    0.5 * th.sin()
                } else {
                    -0.5 * th.cos()
                };
                if b > 0 {
                    j[(row, 3 * (b - 1) + r)] = -1.0;
                    j[(row, 3 * (b - 1) + 2)] = if r == 0 {
                        0.5 * (th - 0.1).sin()
                    } else {
                        -0.5 * (th - 0.1).cos()
                    };
                }
            }
        }
        let m = DMatrix::from_fn(n, n, |r, c| {
            if r != c {
                0.0
            } else if r % 3 == 2 {
                1.0 / 12.0
            } else {
                1.0
            }
        });
        m + j.transpose() * j * s
    }

    fn filled(a: &DMatrix<f64>) -> SparseLdlt {
        let n = a.nrows();
        let pattern: Vec<(usize, usize)> = (0..n)
            .flat_map(|i| (0..n).map(move |j| (i, j)))
            .filter(|&(i, j)| a[(i, j)] != 0.0)
            .collect();
        let mut f = SparseLdlt::new(n, &pattern);
        for &(i, j) in &pattern {
            let s = f.slot(i, j).expect("in the pattern");
            f.values_mut()[s] = a[(i, j)];
        }
        f
    }

    fn lu_of(a: &DMatrix<f64>) -> SparseLu {
        let n = a.nrows();
        let pattern: Vec<(usize, usize)> = (0..n)
            .flat_map(|i| (0..n).map(move |j| (i, j)))
            .filter(|&(i, j)| a[(i, j)] != 0.0)
            .collect();
        let mut lu = SparseLu::new(n, &pattern);
        for &(i, j) in &pattern {
            let s = lu.slot(i, j).expect("in the pattern");
            lu.values_mut()[s] = a[(i, j)];
        }
        lu
    }

    /// The chain's projection metric (p = 1e4, condition ~1e5) factors by
    /// LDLᵀ, without fill beyond its band, and solves as the LU does, to
    /// round-off, at every refactorisation with new values.
    #[test]
    fn the_chain_metric_factors_by_ldlt_as_the_lu_solves() {
        let a = chain_metric(40, 1e4);
        let n = a.nrows();
        let mut f = filled(&a);
        // block tridiagonal of 3 × 3 blocks: L within the band of 5
        assert!(f.lx.len() <= 6 * n, "factor nnz {}", f.lx.len());
        let mut lu = lu_of(&a);
        for round in 0..3 {
            let scale = 1.0 + round as f64;
            if round > 0 {
                for v in f.values_mut() {
                    *v *= scale / (scale - 1.0);
                }
                for v in lu.values_mut() {
                    *v *= scale / (scale - 1.0);
                }
            }
            assert!(f.factor() && lu.factor());
            let x = DVector::from_fn(n, |i, _| (0.37 * i as f64).sin());
            let b = &a * &x * scale;
            let mut y = b.as_slice().to_vec();
            f.solve_in_place(&mut y);
            let mut z = b.as_slice().to_vec();
            lu.solve_in_place(&mut z);
            let err = (DVector::from_vec(y.clone()) - &x).amax();
            let diff = (DVector::from_vec(y) - DVector::from_vec(z)).amax();
            assert!(err < 1e-9, "round {round}: error {err}");
            assert!(diff < 1e-9, "round {round}: LDLᵀ − LU {diff}");
        }
        assert_eq!((f.ldlt_count(), f.lu_count()), (3, 0));
    }

    /// Values that are not symmetric, or symmetric but indefinite, go to
    /// the LU of the same pattern, which solves them; a singular matrix is
    /// reported by the LU.
    #[test]
    fn falls_back_to_the_lu_off_symmetric_positive_definite() {
        let a = chain_metric(6, 10.0);
        let n = a.nrows();
        // a follower-force-like asymmetric term
        let mut b = a.clone();
        b[(0, 3)] += 0.25;
        b[(3, 0)] += 0.25;
        b[(4, 1)] += 0.3;
        b[(1, 4)] -= 0.3;
        // indefinite: a negative pivot
        let mut c = a.clone();
        c[(5, 5)] = -40.0;
        for (mat, ldlt) in [(&a, 1), (&b, 0), (&c, 0)] {
            let mut f = filled(mat);
            assert!(f.factor());
            assert_eq!(f.ldlt_count(), ldlt);
            assert_eq!(f.lu_count(), 1 - ldlt);
            let x = DVector::from_fn(n, |i, _| 1.0 + (i as f64).cos());
            let rhs = mat * &x;
            let mut y = rhs.as_slice().to_vec();
            f.solve_in_place(&mut y);
            let err = (DVector::from_vec(y) - &x).amax();
            assert!(err < 1e-10, "error {err}");
        }
        // rounding-level asymmetry stays on LDLᵀ
        let mut d = a.clone();
        d[(0, 3)] *= 1.0 + 1e-15;
        let mut f = filled(&d);
        assert!(f.factor());
        assert_eq!((f.ldlt_count(), f.lu_count()), (1, 0));
        // a zero row and column: singular for both
        let mut e = a.clone();
        for k in 0..n {
            e[(2, k)] = 0.0;
            e[(k, 2)] = 0.0;
        }
        e[(2, 2)] = 0.0;
        let pattern: Vec<(usize, usize)> = (0..n)
            .flat_map(|i| (0..n).map(move |j| (i, j)))
            .filter(|&(i, j)| a[(i, j)] != 0.0)
            .collect();
        let mut f = SparseLdlt::new(n, &pattern);
        for &(i, j) in &pattern {
            let s = f.slot(i, j).expect("in the pattern");
            f.values_mut()[s] = e[(i, j)];
        }
        assert!(!f.factor());
        assert!(!f.is_factored());
    }
}
