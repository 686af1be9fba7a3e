//! Dense LU factorisation with full (complete) pivoting on preallocated
//! storage.
//!
//! P A Q = L U (Golub & Van Loan, *Matrix Computations*, 4th ed.,
//! Algorithm 3.4.3 "Gaussian elimination with complete pivoting"): at step
//! k the entry of largest magnitude in the trailing block becomes the pivot.
//! Full pivoting is rank revealing in practice, which the formulations use
//! three ways: to factor the symmetric indefinite KKT matrix (also with a
//! singular mass matrix), to choose independent coordinates (the non-pivot
//! columns of Φ_q, Wehage & Haug 1982) and to name the rows and columns
//! left over when a matrix is singular.
//!
//! Factorisation and solution do not allocate.

/// LU factorisation with full pivoting of an r × c matrix (r, c fixed at
/// construction). Fill with [`FullPivLu::set`] / [`FullPivLu::load`], then
/// [`FullPivLu::factor`].
#[derive(Clone, Debug)]
pub struct FullPivLu {
    rows: usize,
    cols: usize,
    /// Row-major r × c storage; after factoring, L (unit, below the
    /// diagonal) and U (on and above it) of P A Q.
    a: Vec<f64>,
    /// `row[k]`: original row placed at position k (the permutation P).
    row: Vec<usize>,
    /// `col[k]`: original column placed at position k (the permutation Q).
    col: Vec<usize>,
    rank: usize,
}

impl FullPivLu {
    /// Storage for an r × c matrix.
    pub fn new(rows: usize, cols: usize) -> Self {
        Self {
            rows,
            cols,
            a: vec![0.0; rows * cols],
            row: (0..rows).collect(),
            col: (0..cols).collect(),
            rank: 0,
        }
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Set every entry to zero (before filling blocks).
    pub fn clear(&mut self) {
        self.a.iter_mut().for_each(|x| *x = 0.0);
    }

    /// Entry (i, j) of the matrix to factor.
    #[inline]
    pub fn set(&mut self, i: usize, j: usize, v: f64) {
        self.a[i * self.cols + j] = v;
    }

    /// Entry (i, j) (before factoring: of A; after: of the packed L\U).
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.a[i * self.cols + j]
    }

    /// Copy a matrix of the same shape.
    pub fn load(&mut self, m: &nalgebra::DMatrix<f64>) {
        debug_assert_eq!((m.nrows(), m.ncols()), (self.rows, self.cols));
        for i in 0..self.rows {
            for j in 0..self.cols {
                self.a[i * self.cols + j] = m[(i, j)];
            }
        }
    }

    /// Factor in place. Elimination stops when the largest remaining entry
    /// is at most `tol_rel` times the first (largest) pivot; returns the
    /// numerical rank found.
    pub fn factor(&mut self, tol_rel: f64) -> usize {
        let (r, c) = (self.rows, self.cols);
        for (k, v) in self.row.iter_mut().enumerate() {
            *v = k;
        }
        for (k, v) in self.col.iter_mut().enumerate() {
            *v = k;
        }
        let kmax = r.min(c);
        let mut first = 0.0;
        self.rank = kmax;
        for k in 0..kmax {
            // pivot search over the trailing block
            let (mut pi, mut pj, mut best) = (k, k, -1.0);
            for i in k..r {
                for j in k..c {
                    let v = self.a[i * c + j].abs();
                    if v > best {
                        best = v;
                        pi = i;
                        pj = j;
                    }
                }
            }
            if k == 0 {
                first = best;
            }
            if !(best > tol_rel * first) || best == 0.0 {
                self.rank = k;
                break;
            }
            if pi != k {
                for j in 0..c {
                    self.a.swap(k * c + j, pi * c + j);
                }
                self.row.swap(k, pi);
            }
            if pj != k {
                for i in 0..r {
                    self.a.swap(i * c + k, i * c + pj);
                }
                self.col.swap(k, pj);
            }
            let p = self.a[k * c + k];
            for i in k + 1..r {
                let l = self.a[i * c + k] / p;
                self.a[i * c + k] = l;
                if l != 0.0 {
                    for j in k + 1..c {
                        self.a[i * c + j] -= l * self.a[k * c + j];
                    }
                }
            }
        }
        self.rank
    }

    /// Numerical rank found by the last [`FullPivLu::factor`].
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Whether the last factorisation found a square matrix regular.
    pub fn is_regular(&self) -> bool {
        self.rows == self.cols && self.rank == self.rows
    }

    /// Original row index at pivot position k (k < rank: a pivot row;
    /// k ≥ rank: a row left over, i.e. dependent on the others).
    pub fn row_at(&self, k: usize) -> usize {
        self.row[k]
    }

    /// Original column index at pivot position k (k < rank: a pivot
    /// column; k ≥ rank: a column left over).
    pub fn col_at(&self, k: usize) -> usize {
        self.col[k]
    }

    /// Ratio of the largest to the smallest pivot, |u₀₀| / |u_{r−1,r−1}|:
    /// a cheap lower bound of the 2-norm condition number (∞ when rank
    /// deficient).
    pub fn pivot_ratio(&self) -> f64 {
        let k = self.rows.min(self.cols);
        if self.rank < k || k == 0 {
            return if k == 0 { 1.0 } else { f64::INFINITY };
        }
        let c = self.cols;
        let mut lo = f64::INFINITY;
        let mut hi: f64 = 0.0;
        for i in 0..k {
            let v = self.a[i * c + i].abs();
            lo = lo.min(v);
            hi = hi.max(v);
        }
        hi / lo
    }

    /// Solve A x = b for a square regular A, in place (`b` becomes x);
    /// `work` has length n.
    pub fn solve_in_place(&self, b: &mut [f64], work: &mut [f64]) {
        let n = self.rows;
        debug_assert!(self.is_regular());
        // z = P b
        for k in 0..n {
            work[k] = b[self.row[k]];
        }
        // L z' = z (unit lower)
        for i in 0..n {
            let mut s = work[i];
            for j in 0..i {
                s -= self.a[i * n + j] * work[j];
            }
            work[i] = s;
        }
        // U w = z'
        for i in (0..n).rev() {
            let mut s = work[i];
            for j in i + 1..n {
                s -= self.a[i * n + j] * work[j];
            }
            work[i] = s / self.a[i * n + i];
        }
        // x = Q w
        for k in 0..n {
            b[self.col[k]] = work[k];
        }
    }

    /// 1-norm condition number κ₁ = ‖A‖₁ ‖A⁻¹‖₁ of a square regular A
    /// whose 1-norm `norm1` the caller computed before factoring; ‖A⁻¹‖₁
    /// by solving for the n unit vectors (exact, O(n³); for the small
    /// blocks of coordinate partitioning). `e` and `work` have length n.
    pub fn cond1(&self, norm1: f64, e: &mut [f64], work: &mut [f64]) -> f64 {
        if !self.is_regular() {
            return f64::INFINITY;
        }
        let n = self.rows;
        let mut inv_norm: f64 = 0.0;
        for j in 0..n {
            e.iter_mut().for_each(|x| *x = 0.0);
            e[j] = 1.0;
            self.solve_in_place(e, work);
            inv_norm = inv_norm.max(e.iter().map(|x| x.abs()).sum());
        }
        norm1 * inv_norm
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_indefinite_system_and_reveals_rank() {
        // symmetric indefinite KKT matrix with a singular (1,1) block
        let a = [
            [1.0, 0.0, 0.0, 1.0],
            [0.0, 0.0, 0.0, 2.0],
            [0.0, 0.0, 3.0, 0.0],
            [1.0, 2.0, 0.0, 0.0],
        ];
        let mut lu = FullPivLu::new(4, 4);
        for i in 0..4 {
            for j in 0..4 {
                lu.set(i, j, a[i][j]);
            }
        }
        assert_eq!(lu.factor(1e-13), 4);
        let x = [1.0, -2.0, 0.5, 3.0];
        let mut b = [0.0; 4];
        for i in 0..4 {
            b[i] = (0..4).map(|j| a[i][j] * x[j]).sum();
        }
        let mut w = [0.0; 4];
        lu.solve_in_place(&mut b, &mut w);
        for i in 0..4 {
            assert!((b[i] - x[i]).abs() < 1e-14, "{b:?}");
        }
        // rank-deficient: third row = first + second
        let mut lu = FullPivLu::new(3, 3);
        let s = [[1.0, 2.0, 3.0], [0.0, 1.0, 4.0], [1.0, 3.0, 7.0]];
        for i in 0..3 {
            for j in 0..3 {
                lu.set(i, j, s[i][j]);
            }
        }
        assert_eq!(lu.factor(1e-13), 2);
        assert!(!lu.is_regular());
        assert_eq!(lu.pivot_ratio(), f64::INFINITY);
    }

    #[test]
    fn condition_number_of_diagonal() {
        let mut lu = FullPivLu::new(2, 2);
        lu.set(0, 0, 1e-3);
        lu.set(1, 1, 2.0);
        lu.factor(1e-13);
        let (mut e, mut w) = ([0.0; 2], [0.0; 2]);
        let k = lu.cond1(2.0, &mut e, &mut w);
        assert!((k - 2000.0).abs() < 1e-9);
        assert!((lu.pivot_ratio() - 2000.0).abs() < 1e-9);
    }
}
