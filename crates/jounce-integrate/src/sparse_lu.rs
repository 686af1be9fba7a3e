//! Sparse LU factorisation with partial pivoting of a square matrix with a
//! fixed pattern: the pattern, its fill-reducing column ordering and all
//! storage are set up once, then every refactorisation and solve runs in
//! that storage.
//!
//! P A Q = L U with Q the column approximate-minimum-degree ordering of A
//! (COLAMD: Davis, Gilbert, Larimore & Ng 2004, ACM TOMS 30(3):353–376)
//! and P the row permutation of threshold-free partial pivoting, column by
//! column in the left-looking order of Gilbert & Peierls (1988, SIAM J.
//! Sci. Stat. Comput. 9(5):862–874). Both are faer's
//! (`faer::sparse::linalg::colamd`, `lu::simplicial`); this module owns
//! the fixed pattern, the value slots a caller writes into, the work
//! memory, and the singularity test, which is the dense LU's
//! (`dense_lu`): a zero or non-finite pivot.
//!
//! Used for the iteration matrices of the structural driver when a problem
//! declares their sparsity
//! ([`crate::constrained::ConstrainedSecondOrderProblem::sparsity`]):
//! S = [M + γ'C + β'K, Φ_qᵀ; Φ_q, 0] of a chain of N bodies has O(N)
//! entries and factors without fill beyond a band, where the dense LU
//! costs O(N³). The DAE drivers ([`crate::dae`]) factor their iteration
//! matrices G = ∂F/∂y + c ∂F/∂y' with it when a problem declares their
//! pattern ([`crate::dae::DaeProblem::sparsity`]); radau5's complex matrix
//! J + ((α + iβ)/h) M is factored as such ([`SparseLuOf`] over `c64`):
//! the same pattern and column ordering as the real one, a quarter of the
//! index work of the equivalent real 2n × 2n system.

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::perm::PermRef;
use faer::sparse::linalg::colamd;
use faer::sparse::linalg::lu::simplicial::{
    factorize_simplicial_numeric_lu, factorize_simplicial_numeric_lu_scratch,
    solve_in_place_scratch, SimplicialLu,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::traits::ComplexField;
use faer::{c64, Conj, MatMut, Par};

/// The entries a [`SparseLuOf`] factors: `f64` and `c64` (faer's and
/// nalgebra's `Complex<f64>`, the same type).
pub trait LuScalar:
    ComplexField + Copy + std::ops::AddAssign + std::ops::Mul<Output = Self>
{
    /// |x| (the modulus), for the pivot test.
    fn modulus(self) -> f64;
    /// Whether every part is finite.
    fn finite(self) -> bool;
    /// Zero.
    fn zero_value() -> Self;
}

impl LuScalar for f64 {
    fn modulus(self) -> f64 {
        self.abs()
    }
    fn finite(self) -> bool {
        self.is_finite()
    }
    fn zero_value() -> Self {
        0.0
    }
}

impl LuScalar for c64 {
    fn modulus(self) -> f64 {
        self.re.hypot(self.im)
    }
    fn finite(self) -> bool {
        self.re.is_finite() && self.im.is_finite()
    }
    fn zero_value() -> Self {
        c64::new(0.0, 0.0)
    }
}

/// The real sparse LU (the structural driver's, bdf's, radau5's E1).
pub type SparseLu = SparseLuOf<f64>;

/// LU with partial pivoting of an n × n matrix with a fixed sparsity
/// pattern (module documentation), real or complex. Write values through
/// [`SparseLuOf::slot`] into [`SparseLuOf::values_mut`], then
/// [`SparseLuOf::factor`] and [`SparseLuOf::solve_in_place`].
pub struct SparseLuOf<T: LuScalar> {
    n: usize,
    /// Compressed sparse columns of A, rows sorted within a column.
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    values: Vec<T>,
    /// Fill-reducing column ordering Q (forward and inverse).
    col_fwd: Vec<usize>,
    col_inv: Vec<usize>,
    /// Row permutation P of the last factorisation.
    row_fwd: Vec<usize>,
    row_inv: Vec<usize>,
    lu: SimplicialLu<usize, T>,
    mem: MemBuffer,
    factored: bool,
}

impl<T: LuScalar> std::fmt::Debug for SparseLuOf<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SparseLu")
            .field("n", &self.n)
            .field("nnz", &self.row_idx.len())
            .field("factored", &self.factored)
            .finish()
    }
}

impl<T: LuScalar> SparseLuOf<T> {
    /// Set up the pattern of an n × n matrix with (at most) the nonzero
    /// entries `entries` (row, column); duplicates are merged and the
    /// diagonal is always included. The column ordering is computed here,
    /// once.
    ///
    /// # Panics
    /// If an entry lies outside the matrix (a programming error of the
    /// caller, which builds the pattern from its own dimensions).
    #[must_use]
    pub fn new(n: usize, entries: &[(usize, usize)]) -> Self {
        let mut cols: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &(i, j) in entries {
            assert!(
                i < n && j < n,
                "SparseLu: entry ({i}, {j}) outside {n} × {n}"
            );
            cols[j].push(i);
        }
        let mut col_ptr = Vec::with_capacity(n + 1);
        let mut row_idx = Vec::new();
        col_ptr.push(0);
        for (j, c) in cols.iter_mut().enumerate() {
            c.push(j);
            c.sort_unstable();
            c.dedup();
            row_idx.extend_from_slice(c);
            col_ptr.push(row_idx.len());
        }
        let nnz = row_idx.len();
        let (mut col_fwd, mut col_inv) = (vec![0usize; n], vec![0usize; n]);
        {
            let a = SymbolicSparseColMatRef::new_checked(n, n, &col_ptr, None, &row_idx);
            let mut mem = MemBuffer::new(colamd::order_scratch::<usize>(n, n, nnz));
            colamd::order(
                &mut col_fwd,
                &mut col_inv,
                a,
                colamd::Control::default(),
                MemStack::new(&mut mem),
            )
            .expect("COLAMD on a valid pattern cannot fail but for memory");
        }
        let req = StackReq::any_of(&[
            factorize_simplicial_numeric_lu_scratch::<usize, T>(n, n),
            solve_in_place_scratch::<usize, T>(n, 1, Par::Seq),
        ]);
        Self {
            n,
            col_ptr,
            row_idx,
            values: vec![T::zero_value(); nnz],
            col_fwd,
            col_inv,
            row_fwd: vec![0; n],
            row_inv: vec![0; n],
            lu: SimplicialLu::new(),
            mem: MemBuffer::new(req),
            factored: false,
        }
    }

    /// The dimension n.
    #[must_use]
    pub fn dim(&self) -> usize {
        self.n
    }

    /// Number of entries of the pattern.
    #[must_use]
    pub fn nnz(&self) -> usize {
        self.row_idx.len()
    }

    /// Position of entry (i, j) in [`SparseLu::values_mut`], `None` when it
    /// is not in the pattern.
    #[must_use]
    pub fn slot(&self, i: usize, j: usize) -> Option<usize> {
        let (a, b) = (self.col_ptr[j], self.col_ptr[j + 1]);
        self.row_idx[a..b].binary_search(&i).ok().map(|k| a + k)
    }

    /// The values of A in pattern order (column by column); writing them
    /// forgets the factorisation.
    pub fn values_mut(&mut self) -> &mut [T] {
        self.factored = false;
        &mut self.values
    }

    /// The values of A in pattern order.
    #[must_use]
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// y ← y + A x with the current values (not the factors).
    pub fn mul_add(&self, x: &[T], y: &mut [T]) {
        for j in 0..self.n {
            let xj = x[j];
            for k in self.col_ptr[j]..self.col_ptr[j + 1] {
                y[self.row_idx[k]] += self.values[k] * xj;
            }
        }
    }

    /// Factorise the current values: P A Q = L U. `false` when A is
    /// singular (a zero or non-finite pivot, the test of the dense LU);
    /// the factorisation is then unusable.
    pub fn factor(&mut self) -> bool {
        self.factor_above(0.0)
    }

    /// [`SparseLuOf::factor`] with pivots of modulus ≤ `tol` taken as
    /// singular (the dense LU's `factor_above`, for matrices whose rows
    /// are equilibrated to a largest entry of 1).
    pub fn factor_above(&mut self, tol: f64) -> bool {
        self.factored = false;
        let n = self.n;
        let a = SparseColMatRef::new(
            SymbolicSparseColMatRef::new_checked(n, n, &self.col_ptr, None, &self.row_idx),
            &self.values,
        );
        let q = PermRef::new_checked(&self.col_fwd, &self.col_inv, n);
        let r = factorize_simplicial_numeric_lu(
            &mut self.row_fwd,
            &mut self.row_inv,
            &mut self.lu,
            a,
            q,
            MemStack::new(&mut self.mem),
        );
        if r.is_err() {
            return false;
        }
        // the pivot u_jj is the last entry stored in column j of U
        let u = self.lu.u_factor_unsorted();
        for j in 0..n {
            match u.val_of_col(j).last() {
                Some(p) if p.modulus() > tol && p.finite() => {}
                _ => return false,
            }
        }
        self.factored = true;
        true
    }

    /// Whether a factorisation of the current values is available.
    #[must_use]
    pub fn is_factored(&self) -> bool {
        self.factored
    }

    /// Forget the factorisation.
    pub fn invalidate(&mut self) {
        self.factored = false;
    }

    /// Solve A x = b in place with the factors.
    ///
    /// # Panics
    /// If no factorisation is available (a programming error of the caller).
    pub fn solve_in_place(&mut self, b: &mut [T]) {
        assert!(self.factored, "SparseLu::solve_in_place before factor");
        let n = self.n;
        let p = PermRef::new_checked(&self.row_fwd, &self.row_inv, n);
        let q = PermRef::new_checked(&self.col_fwd, &self.col_inv, n);
        let rhs = MatMut::from_column_major_slice_mut(b, n, 1);
        self.lu.solve_in_place_with_conj(
            p,
            q,
            Conj::No,
            rhs,
            Par::Seq,
            MemStack::new(&mut self.mem),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{DMatrix, DVector};

    /// A KKT matrix [A Bᵀ; B 0] of a chain: A tridiagonal, B bidiagonal,
    /// zero diagonal block (needs pivoting).
    fn kkt(n: usize, m: usize) -> DMatrix<f64> {
        let mut s = DMatrix::zeros(n + m, n + m);
        for i in 0..n {
            s[(i, i)] = 2.0 + 0.1 * i as f64;
            if i + 1 < n {
                s[(i, i + 1)] = -0.5;
                s[(i + 1, i)] = -0.7;
            }
        }
        for k in 0..m {
            let (a, b) = (k, (k + 1).min(n - 1));
            s[(n + k, a)] = 1.0;
            s[(a, n + k)] = 1.0;
            s[(n + k, b)] += -1.0 - 0.01 * k as f64;
            s[(b, n + k)] += -1.0 - 0.01 * k as f64;
        }
        s
    }

    fn sparse_of(a: &DMatrix<f64>) -> SparseLu {
        let n = a.nrows();
        let pattern: Vec<(usize, usize)> = (0..n)
            .flat_map(|i| (0..n).map(move |j| (i, j)))
            .filter(|&(i, j)| a[(i, j)] != 0.0)
            .collect();
        let mut lu = SparseLu::new(n, &pattern);
        for &(i, j) in &pattern {
            let s = lu.slot(i, j).unwrap();
            lu.values_mut()[s] = a[(i, j)];
        }
        lu
    }

    #[test]
    fn solves_an_indefinite_kkt_system_to_rounding() {
        let a = kkt(30, 20);
        let mut lu = sparse_of(&a);
        assert!(lu.nnz() < 200, "nnz {}", lu.nnz());
        assert!(lu.factor());
        let x: DVector<f64> = DVector::from_fn(50, |i, _| (i as f64 * 0.37).sin());
        let b = &a * &x;
        let mut y = b.as_slice().to_vec();
        lu.solve_in_place(&mut y);
        let err = (DVector::from_vec(y) - &x).amax();
        assert!(err < 1e-12, "error {err}");
        // refactorisation with new values in the same pattern
        let a2 = &a * 2.0;
        for j in 0..50 {
            for i in 0..50 {
                if let Some(s) = lu.slot(i, j) {
                    lu.values_mut()[s] = a2[(i, j)];
                }
            }
        }
        assert!(lu.factor());
        let mut y = b.as_slice().to_vec();
        lu.solve_in_place(&mut y);
        assert!((DVector::from_vec(y) - &x * 0.5).amax() < 1e-12);
    }

    /// The complex twin (radau5's E2 = J + ((α + iβ)/h) M) in the pattern
    /// of the real matrix solves to rounding, against nalgebra's dense LU.
    #[test]
    fn solves_a_complex_system_in_the_same_pattern() {
        use nalgebra::Complex;
        let j = kkt(12, 8);
        let mut mass = DMatrix::zeros(20, 20);
        for i in 0..12 {
            mass[(i, i)] = 1.0 + 0.05 * i as f64;
        }
        let a = DMatrix::from_fn(20, 20, |r, c| {
            Complex::new(j[(r, c)] + 3.0 * mass[(r, c)], 2.0 * mass[(r, c)])
        });
        let pattern: Vec<(usize, usize)> = (0..20)
            .flat_map(|i| (0..20).map(move |k| (i, k)))
            .filter(|&(i, k)| j[(i, k)] != 0.0)
            .collect();
        let mut lu = SparseLuOf::<c64>::new(20, &pattern);
        for &(i, k) in &pattern {
            let s = lu.slot(i, k).unwrap();
            lu.values_mut()[s] = a[(i, k)];
        }
        assert!(lu.factor());
        let x = DVector::from_fn(20, |i, _| {
            Complex::new((i as f64).sin(), (i as f64 * 0.3).cos())
        });
        let b = &a * &x;
        let mut y = b.as_slice().to_vec();
        lu.solve_in_place(&mut y);
        let err = (DVector::from_vec(y) - &x)
            .iter()
            .fold(0.0f64, |e, z| e.max(z.norm()));
        assert!(err < 1e-12, "error {err}");
        // a near-zero pivot of an equilibrated matrix is refused above a floor
        assert!(!lu.factor_above(1e30));
    }

    #[test]
    fn mul_add_is_the_matrix_product() {
        let a = kkt(5, 3);
        let lu = sparse_of(&a);
        let x: Vec<f64> = (0..8).map(|i| i as f64 - 2.5).collect();
        let mut y = vec![1.0; 8];
        lu.mul_add(&x, &mut y);
        let want = &a * DVector::from_vec(x) + DVector::from_element(8, 1.0);
        assert!((DVector::from_vec(y) - want).amax() < 1e-14);
    }

    #[test]
    fn reports_a_singular_matrix() {
        // two equal constraint rows: [A Bᵀ; B 0] with rank-deficient B
        let mut a = kkt(4, 2);
        for j in 0..4 {
            a[(5, j)] = a[(4, j)];
            a[(j, 5)] = a[(j, 4)];
        }
        let mut lu = sparse_of(&a);
        assert!(!lu.factor());
        assert!(!lu.is_factored());
    }
}
