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
    /// Per row, the largest |a_ij| over the trailing columns and the first
    /// column holding it (scratch of [`FullPivLu::factor`]).
    row_max: Vec<f64>,
    row_arg: Vec<usize>,
}

/// The largest |x_j| of a row (−1 when it has none but NaN) and the first
/// position holding it, offset by `offset`.
fn row_max(x: &[f64], offset: usize) -> (f64, usize) {
    let (mut m, mut arg) = (-1.0, offset);
    for (j, v) in x.iter().enumerate() {
        let v = v.abs();
        if v > m {
            m = v;
            arg = offset + j;
        }
    }
    (m, arg)
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
            row_max: vec![0.0; rows],
            row_arg: vec![0; rows],
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
    ///
    /// The pivot is the entry of largest magnitude in the trailing block,
    /// the first in row-major order among equals. Rather than searching
    /// the whole block at every step (O(n³) comparisons besides the
    /// elimination's O(n³) operations), each trailing row keeps its largest
    /// entry and that entry's first column: a row the step updates finds
    /// them again while it is updated; a row it leaves alone keeps them
    /// unless they sat in one of the two columns the step swapped and
    /// removed (then it is searched again). On a sparse matrix (the KKT
    /// matrix of a chain, whose rows mostly have l = 0 at each step) the
    /// factorisation then costs what its fill costs. The pivots are those
    /// of the plain search, equals included (tests).
    pub fn factor(&mut self, tol_rel: f64) -> usize {
        let (r, c) = (self.rows, self.cols);
        for (k, v) in self.row.iter_mut().enumerate() {
            *v = k;
        }
        for (k, v) in self.col.iter_mut().enumerate() {
            *v = k;
        }
        let kmax = r.min(c);
        self.rank = kmax;
        for i in 0..r {
            let (m, j) = row_max(&self.a[i * c..(i + 1) * c], 0);
            self.row_max[i] = m;
            self.row_arg[i] = j;
        }
        let mut first = 0.0;
        for k in 0..kmax {
            // the pivot: the first row whose largest entry is the largest
            let (mut pi, mut best) = (k, -1.0);
            for i in k..r {
                if self.row_max[i] > best {
                    best = self.row_max[i];
                    pi = i;
                }
            }
            let pj = if best >= 0.0 { self.row_arg[pi] } else { k };
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
                self.row_max.swap(k, pi);
                self.row_arg.swap(k, pi);
            }
            if pj != k {
                for i in 0..r {
                    self.a.swap(i * c + k, i * c + pj);
                }
                self.col.swap(k, pj);
            }
            let (top, rest) = self.a.split_at_mut((k + 1) * c);
            let prow = &top[k * c + k + 1..(k + 1) * c];
            let p = top[k * c + k];
            for i in k + 1..r {
                let row = &mut rest[(i - k - 1) * c..(i - k) * c];
                let l = row[k] / p;
                row[k] = l;
                if l != 0.0 {
                    let (mut m, mut arg) = (-1.0, k + 1);
                    for (jj, (x, &u)) in row[k + 1..].iter_mut().zip(prow).enumerate() {
                        *x -= l * u;
                        let v = x.abs();
                        if v > m {
                            m = v;
                            arg = k + 1 + jj;
                        }
                    }
                    self.row_max[i] = m;
                    self.row_arg[i] = arg;
                } else if self.row_arg[i] == k || self.row_arg[i] == pj {
                    // its largest entry moved out of the block (column k)
                    // or to column pj, after columns that may equal it
                    let (m, j) = row_max(&row[k + 1..], k + 1);
                    self.row_max[i] = m;
                    self.row_arg[i] = j;
                }
                // else: the entry that came to column pj was smaller than
                // the row's largest (or it would have been the first), and
                // the one that left with column k was not the first of them
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

    /// The plain complete-pivoting elimination (Golub & Van Loan, Alg.
    /// 3.4.3): the whole trailing block searched at every step.
    fn reference(a: &mut [f64], r: usize, c: usize, tol: f64) -> (usize, Vec<usize>, Vec<usize>) {
        let (mut row, mut col): (Vec<usize>, Vec<usize>) = ((0..r).collect(), (0..c).collect());
        let mut first = 0.0;
        for k in 0..r.min(c) {
            let (mut pi, mut pj, mut best) = (k, k, -1.0);
            for i in k..r {
                for j in k..c {
                    if a[i * c + j].abs() > best {
                        (best, pi, pj) = (a[i * c + j].abs(), i, j);
                    }
                }
            }
            if k == 0 {
                first = best;
            }
            if !(best > tol * first) || best == 0.0 {
                return (k, row, col);
            }
            for j in 0..c {
                a.swap(k * c + j, pi * c + j);
            }
            row.swap(k, pi);
            for i in 0..r {
                a.swap(i * c + k, i * c + pj);
            }
            col.swap(k, pj);
            for i in k + 1..r {
                let l = a[i * c + k] / a[k * c + k];
                a[i * c + k] = l;
                if l != 0.0 {
                    for j in k + 1..c {
                        a[i * c + j] -= l * a[k * c + j];
                    }
                }
            }
        }
        (r.min(c), row, col)
    }

    #[test]
    fn the_kept_row_maxima_choose_the_pivots_of_the_plain_search() {
        // small integers, many zeros and many equal magnitudes (as in a
        // KKT matrix of unit masses and ±1 Jacobian entries), some rank
        // deficient, square and not: permutations, rank and factors equal
        // bit for bit
        let mut seed = 12345u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        for case in 0..400 {
            let (r, c) = (1 + next() % 9, 1 + next() % 9);
            let zeros = next() % 4;
            let mut a: Vec<f64> = (0..r * c)
                .map(|_| {
                    if next() % 4 < zeros {
                        0.0
                    } else {
                        (next() % 5) as f64 - 2.0
                    }
                })
                .collect();
            if case % 3 == 0 && r > 1 {
                // a repeated row: rank deficient
                let (src, dst) = (next() % r, next() % r);
                for j in 0..c {
                    a[dst * c + j] = a[src * c + j];
                }
            }
            let mut lu = FullPivLu::new(r, c);
            for i in 0..r {
                for j in 0..c {
                    lu.set(i, j, a[i * c + j]);
                }
            }
            let rank = lu.factor(1e-13);
            let (rank_ref, row, col) = reference(&mut a, r, c, 1e-13);
            assert_eq!(rank, rank_ref, "case {case}");
            assert_eq!(lu.row, row, "case {case}");
            assert_eq!(lu.col, col, "case {case}");
            for i in 0..r {
                for j in 0..c {
                    assert_eq!(
                        lu.get(i, j).to_bits(),
                        a[i * c + j].to_bits(),
                        "case {case}"
                    );
                }
            }
        }
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
