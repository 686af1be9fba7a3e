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
//! (jounce-integrate's `dense_lu`): a zero or non-finite pivot.
//!
//! Used for the iteration matrices of the structural driver when a problem
//! declares their sparsity (jounce-integrate's
//! `ConstrainedSecondOrderProblem::sparsity`): S = [M + γ'C + β'K, Φ_qᵀ;
//! Φ_q, 0] of a chain of N bodies has O(N) entries and factors without
//! fill beyond a band, where the dense LU costs O(N³). The DAE drivers
//! factor their iteration matrices G = ∂F/∂y + c ∂F/∂y' with it when a
//! problem declares their pattern (`DaeProblem::sparsity`); radau5's
//! complex matrix J + ((α + iβ)/h) M is factored as such ([`SparseLuOf`]
//! over `c64`): the same pattern and column ordering as the real one, a
//! quarter of the index work of the equivalent real 2n × 2n system.
//!
//! # Refactorisation on the kept pivot sequence
//!
//! The Gilbert–Peierls factorisation finds the pattern of every column of
//! L and U by a depth-first search (its symbolic part, redone at every
//! call) interleaved with the numeric elimination. Once a factorisation
//! has succeeded, its row permutation P and the patterns of L and U are
//! kept; a later factorisation of new values in the same pattern first
//! runs the numeric elimination alone on them (the "refactor" of KLU:
//! Davis & Palamadai Natarajan 2010, ACM TOMS 37(3):36): with P fixed,
//! the reach of every column, hence the patterns of L and U, is the same
//! (it depends on the patterns of A and L only). Partial pivoting is kept
//! exact: at column j the kept pivot must still be the largest of the
//! column's candidates, |x_j| ≥ |x_i| for every row i of L's column j (the
//! rows not yet pivotal, the candidates of partial pivoting), and be
//! finite and above the singularity floor. At the first column where it
//! is not, the refactorisation is abandoned and the full Gilbert–Peierls
//! factorisation decides the pivots (and the singularity) as before, its
//! new sequence being kept in turn. So every accepted factorisation is an
//! LU with partial pivoting of A (up to ties), and a matrix is reported
//! singular by the full factorisation only, as before.

use faer::c64;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::perm::PermRef;
use faer::sparse::linalg::colamd;
use faer::sparse::linalg::lu::simplicial::{
    factorize_simplicial_numeric_lu, factorize_simplicial_numeric_lu_scratch, SimplicialLu,
};
use faer::sparse::SparseColMatRef;
use faer::traits::ComplexField;

use crate::pattern::{ColumnPattern, FixedPattern};

/// The entries a [`SparseLuOf`] factors: `f64` and `c64` (faer's and
/// nalgebra's `Complex<f64>`, the same type).
pub trait LuScalar:
    ComplexField + Copy + std::ops::AddAssign + std::ops::SubAssign + std::ops::Mul<Output = Self>
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
/// [`FixedPattern::slot`] into [`SparseLuOf::values_mut`], then
/// [`SparseLuOf::factor`] and [`SparseLuOf::solve_in_place`].
pub struct SparseLuOf<T: LuScalar> {
    n: usize,
    /// Compressed sparse columns of A, rows sorted within a column.
    pattern: ColumnPattern,
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
    /// The kept factors, rows in pivot order: column j of L below its
    /// unit diagonal (`l_*`), column j of U above its diagonal in the
    /// topological order of the elimination (`u_*`), and the reciprocals of U's diagonal.
    l_ptr: Vec<usize>,
    l_idx: Vec<usize>,
    l_val: Vec<T>,
    u_ptr: Vec<usize>,
    u_idx: Vec<usize>,
    u_val: Vec<T>,
    u_inv: Vec<T>,
    /// Whether P and the patterns of L and U above are those of a
    /// successful factorisation of this pattern (the refactorisation's
    /// precondition).
    kept: bool,
    /// Dense work column of the refactorisation (zero between calls) and
    /// of the solve.
    work: Vec<T>,
    solve_work: Vec<T>,
    /// Full (Gilbert–Peierls) factorisations run and refactorisations on
    /// the kept pivot sequence accepted.
    n_full: usize,
    n_refactor: usize,
}

impl<T: LuScalar> std::fmt::Debug for SparseLuOf<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SparseLu")
            .field("n", &self.n)
            .field("nnz", &self.pattern.nnz())
            .field("factored", &self.factored)
            .finish()
    }
}

/// The pattern of A; slots index [`SparseLuOf::values_mut`].
impl<T: LuScalar> FixedPattern for SparseLuOf<T> {
    fn pattern(&self) -> &ColumnPattern {
        &self.pattern
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
        Self::with_pattern(ColumnPattern::new(n, entries))
    }

    /// Set up the factorisation of a matrix with the given pattern (which
    /// must hold the diagonal, as every constructor of [`ColumnPattern`]
    /// makes it); the column ordering is computed here, once.
    #[must_use]
    pub fn with_pattern(pattern: ColumnPattern) -> Self {
        let (n, nnz) = (pattern.dim(), pattern.nnz());
        let (mut col_fwd, mut col_inv) = (vec![0usize; n], vec![0usize; n]);
        {
            let mut mem = MemBuffer::new(colamd::order_scratch::<usize>(n, n, nnz));
            colamd::order(
                &mut col_fwd,
                &mut col_inv,
                pattern.as_faer(),
                colamd::Control::default(),
                MemStack::new(&mut mem),
            )
            .expect("COLAMD on a valid pattern cannot fail but for memory");
        }
        let req = factorize_simplicial_numeric_lu_scratch::<usize, T>(n, n);
        Self {
            n,
            pattern,
            values: vec![T::zero_value(); nnz],
            col_fwd,
            col_inv,
            row_fwd: vec![0; n],
            row_inv: vec![0; n],
            lu: SimplicialLu::new(),
            mem: MemBuffer::new(req),
            factored: false,
            l_ptr: vec![0; n + 1],
            l_idx: Vec::new(),
            l_val: Vec::new(),
            u_ptr: vec![0; n + 1],
            u_idx: Vec::new(),
            u_val: Vec::new(),
            u_inv: vec![T::zero_value(); n],
            kept: false,
            work: vec![T::zero_value(); n],
            solve_work: vec![T::zero_value(); n],
            n_full: 0,
            n_refactor: 0,
        }
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
        let (col_ptr, row_idx) = (self.pattern.col_ptr(), self.pattern.row_idx());
        for j in 0..self.n {
            let xj = x[j];
            for k in col_ptr[j]..col_ptr[j + 1] {
                y[row_idx[k]] += self.values[k] * xj;
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
    /// are equilibrated to a largest entry of 1). Tries the refactorisation
    /// on the kept pivot sequence first (module documentation).
    pub fn factor_above(&mut self, tol: f64) -> bool {
        self.factored = false;
        if self.kept && self.refactor(tol) {
            self.n_refactor += 1;
            self.factored = true;
            return true;
        }
        self.factor_full(tol)
    }

    /// Full factorisations (Gilbert–Peierls: pivots and patterns found
    /// anew) run so far, accepted or not.
    #[must_use]
    pub fn full_factorisations(&self) -> usize {
        self.n_full
    }

    /// Refactorisations on the kept pivot sequence accepted so far.
    #[must_use]
    pub fn refactorisations(&self) -> usize {
        self.n_refactor
    }

    /// The full factorisation: P A Q = L U by faer's Gilbert–Peierls LU
    /// with partial pivoting; on success its pivots and factors are kept
    /// (copied, rows in pivot order) for the solves and refactorisations.
    fn factor_full(&mut self, tol: f64) -> bool {
        self.kept = false;
        self.n_full += 1;
        let n = self.n;
        let a = SparseColMatRef::new(self.pattern.as_faer(), &self.values);
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
        // keep the factors: faer stores column j of L as its unit diagonal
        // (row j) then the rows below, and column j of U as the rows above
        // in topological order then the diagonal
        let l = self.lu.l_factor_unsorted();
        self.l_idx.clear();
        self.l_val.clear();
        self.u_idx.clear();
        self.u_val.clear();
        for j in 0..n {
            let (ri, rv) = (l.row_idx_of_col_raw(j), l.val_of_col(j));
            debug_assert_eq!(ri[0], j);
            self.l_idx.extend_from_slice(&ri[1..]);
            self.l_val.extend_from_slice(&rv[1..]);
            self.l_ptr[j + 1] = self.l_idx.len();
            let (ri, rv) = (u.row_idx_of_col_raw(j), u.val_of_col(j));
            let d = ri.len() - 1;
            debug_assert_eq!(ri[d], j);
            self.u_idx.extend_from_slice(&ri[..d]);
            self.u_val.extend_from_slice(&rv[..d]);
            // faer's reciprocal, as its solve and elimination use
            self.u_inv[j] = T::recip_impl(&rv[d]);
            self.u_ptr[j + 1] = self.u_idx.len();
        }
        self.kept = true;
        self.factored = true;
        true
    }

    /// Left-looking numeric elimination on the kept P and patterns of L
    /// and U (Gilbert & Peierls 1988 without the depth-first search): for
    /// column j, x = P A Q e_j scattered, then in U's topological order
    /// u_ij = x_i, x ← x − u_ij L_{:,i}; the pivot u_jj = x_j and
    /// L_{:,j} = x_{below} / u_jj. `false` (nothing usable, the work column
    /// cleared, the kept sequence dropped) at the first column whose kept
    /// pivot is not the largest candidate, |x_j| < max_i |x_i| over L's
    /// rows, is not finite or not above `tol`, or has a non-finite
    /// candidate.
    fn refactor(&mut self, tol: f64) -> bool {
        let x = &mut self.work;
        let (col_ptr, row_idx) = (self.pattern.col_ptr(), self.pattern.row_idx());
        for j in 0..self.n {
            let c = self.col_fwd[j];
            for k in col_ptr[c]..col_ptr[c + 1] {
                x[self.row_inv[row_idx[k]]] = self.values[k];
            }
            for k in self.u_ptr[j]..self.u_ptr[j + 1] {
                let i = self.u_idx[k];
                let xi = x[i];
                x[i] = T::zero_value();
                self.u_val[k] = xi;
                for l in self.l_ptr[i]..self.l_ptr[i + 1] {
                    x[self.l_idx[l]] -= self.l_val[l] * xi;
                }
            }
            let piv = x[j];
            x[j] = T::zero_value();
            let below = self.l_ptr[j]..self.l_ptr[j + 1];
            let (mut largest, mut finite) = (0.0f64, true);
            for &i in &self.l_idx[below.clone()] {
                largest = largest.max(x[i].modulus());
                finite &= x[i].finite();
            }
            let p = piv.modulus();
            if !(finite && piv.finite() && p > tol && p >= largest) {
                for &i in &self.l_idx[below] {
                    x[i] = T::zero_value();
                }
                self.kept = false;
                return false;
            }
            let inv = T::recip_impl(&piv);
            for l in below {
                let i = self.l_idx[l];
                self.l_val[l] = x[i] * inv;
                x[i] = T::zero_value();
            }
            self.u_inv[j] = inv;
        }
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

    /// Solve A x = b in place with the factors: y = P b, L z = y, U w = z,
    /// x = Q w (the permutations fused into the triangular solves' first
    /// and last passes).
    ///
    /// # Panics
    /// If no factorisation is available (a programming error of the caller).
    pub fn solve_in_place(&mut self, b: &mut [T]) {
        assert!(self.factored, "SparseLu::solve_in_place before factor");
        let y = &mut self.solve_work;
        for (yj, &r) in y.iter_mut().zip(&self.row_fwd) {
            *yj = b[r];
        }
        for j in 0..self.n {
            let yj = y[j];
            for l in self.l_ptr[j]..self.l_ptr[j + 1] {
                y[self.l_idx[l]] -= self.l_val[l] * yj;
            }
        }
        for j in (0..self.n).rev() {
            let yj = y[j] * self.u_inv[j];
            y[j] = yj;
            for k in self.u_ptr[j]..self.u_ptr[j + 1] {
                y[self.u_idx[k]] -= self.u_val[k] * yj;
            }
        }
        for (&yj, &c) in y.iter().zip(&self.col_fwd) {
            b[c] = yj;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::nonzeros;
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
        let pattern = nonzeros(a);
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

    fn set_values(lu: &mut SparseLu, a: &DMatrix<f64>) {
        let n = a.nrows();
        for j in 0..n {
            for i in 0..n {
                if let Some(s) = lu.slot(i, j) {
                    lu.values_mut()[s] = a[(i, j)];
                }
            }
        }
    }

    fn solve(lu: &mut SparseLu, b: &DVector<f64>) -> DVector<f64> {
        let mut y = b.as_slice().to_vec();
        lu.solve_in_place(&mut y);
        DVector::from_vec(y)
    }

    /// Refactorisations of changed values on the kept pivot sequence solve
    /// as a fresh factorisation (a new `SparseLu`, full Gilbert–Peierls)
    /// and as nalgebra's dense LU; the counters show that one full
    /// factorisation ran and the rest were refactorisations, so the test
    /// fails if the kept path is switched off or wrong.
    #[test]
    fn refactors_on_the_kept_pivots_as_a_fresh_factorisation_solves() {
        let base = kkt(40, 30);
        let n = base.nrows();
        let mut lu = sparse_of(&base);
        let x: DVector<f64> = DVector::from_fn(n, |i, _| (i as f64 * 0.37).sin() + 0.2);
        for round in 0..6 {
            // the iteration matrix of a later step: the mass-like block
            // rescaled (another step size), the constraint rows moved
            let s = 1.0 + 0.15 * round as f64;
            let a = DMatrix::from_fn(n, n, |i, j| {
                let v = base[(i, j)];
                if i < 40 && j < 40 {
                    v * s
                } else {
                    v * (1.0 + 0.01 * round as f64 * ((i + 2 * j) as f64).sin())
                }
            });
            set_values(&mut lu, &a);
            assert!(lu.factor(), "round {round}");
            let b = &a * &x;
            let kept = solve(&mut lu, &b);
            let mut fresh = sparse_of(&a);
            assert!(fresh.factor());
            assert_eq!(fresh.full_factorisations(), 1);
            let other = solve(&mut fresh, &b);
            let dense = a.clone().lu().solve(&b).unwrap();
            assert!((&kept - &other).amax() < 1e-12, "round {round}");
            assert!((&kept - &dense).amax() < 1e-12, "round {round}");
            assert!((&kept - &x).amax() < 1e-12, "round {round}");
        }
        assert_eq!(lu.full_factorisations(), 1);
        assert_eq!(lu.refactorisations(), 5);
    }

    /// When the kept pivot is no longer the largest candidate of its
    /// column, the refactorisation gives way to the full factorisation,
    /// which pivots anew (partial pivoting, not a static pivot).
    #[test]
    fn pivots_anew_when_the_kept_pivot_is_no_longer_largest() {
        let a1 = DMatrix::from_row_slice(3, 3, &[4.0, 1.0, 1.0, 1.0, 4.0, 1.0, 1.0, 1.0, 4.0]);
        let mut lu = sparse_of(&a1);
        assert!(lu.factor());
        // the same pattern with the first two rows swapped: every kept
        // diagonal pivot of the first column is now 1 against a 4
        let a2 = DMatrix::from_row_slice(3, 3, &[1.0, 4.0, 1.0, 4.0, 1.0, 1.0, 1.0, 1.0, 4.0]);
        set_values(&mut lu, &a2);
        assert!(lu.factor());
        assert_eq!((lu.full_factorisations(), lu.refactorisations()), (2, 0));
        let x = DVector::from_vec(vec![1.0, -2.0, 0.5]);
        assert!((solve(&mut lu, &(&a2 * &x)) - &x).amax() < 1e-14);
        // unchanged values refactor on the new sequence
        assert!(lu.factor());
        assert_eq!((lu.full_factorisations(), lu.refactorisations()), (2, 1));
        assert!((solve(&mut lu, &(&a2 * &x)) - &x).amax() < 1e-14);
    }

    /// A matrix made singular after factorisations of regular values is
    /// reported singular (by the full factorisation, as before); regular
    /// values afterwards factor and solve again.
    #[test]
    fn reports_a_singular_matrix_after_refactorisations() {
        let a = kkt(6, 3);
        let mut lu = sparse_of(&a);
        // the pattern of both constraint rows covers the other's entries
        let mut sing = a.clone();
        for j in 0..6 {
            sing[(7, j)] = a[(6, j)];
            sing[(j, 7)] = a[(j, 6)];
        }
        let pattern: Vec<(usize, usize)> = (0..9)
            .flat_map(|i| (0..9).map(move |j| (i, j)))
            .filter(|&(i, j)| a[(i, j)] != 0.0 || sing[(i, j)] != 0.0)
            .collect();
        let mut lu2 = SparseLu::new(9, &pattern);
        std::mem::swap(&mut lu, &mut lu2);
        set_values(&mut lu, &a);
        assert!(lu.factor());
        assert!(lu.factor());
        assert_eq!((lu.full_factorisations(), lu.refactorisations()), (1, 1));
        set_values(&mut lu, &sing);
        assert!(!lu.factor());
        assert!(!lu.is_factored());
        assert_eq!(lu.full_factorisations(), 2);
        // and refused above a floor on the kept sequence too
        set_values(&mut lu, &a);
        assert!(lu.factor());
        assert!(!lu.factor_above(1e30));
        set_values(&mut lu, &a);
        assert!(lu.factor());
        let x = DVector::from_fn(9, |i, _| i as f64 - 3.0);
        assert!((solve(&mut lu, &(&a * &x)) - &x).amax() < 1e-12);
    }
}
