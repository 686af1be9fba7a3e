//! A sparse matrix with a fixed pattern in compressed sparse row (CSR)
//! form: the storage of the constraint Jacobian Φ_q in [`crate::SystemData`]
//! and of the matrices the formulations assemble from it.
//!
//! The pattern (which entries may be nonzero) is set once at set-up, from
//! the element connectivity: a constraint row of an element touches only
//! the coordinates of that element's bodies. Evaluations then overwrite the
//! values in place, so the hot path neither searches nor allocates; the
//! products Φ_q x and Φ_qᵀ y cost O(nnz) instead of O(m n) (Davis, *Direct
//! Methods for Sparse Linear Systems*, SIAM 2006, ch. 2, "compressed
//! sparse" formats).
//!
//! A pattern with every entry ([`SparseMatrix::dense`]) stores the values
//! row-major, which is what systems without a sparsity pattern get.

use nalgebra::DMatrix;

/// An r × c matrix whose nonzeros lie in a fixed set of positions, stored
/// by rows: the columns of row i are `col_idx[row_ptr[i]..row_ptr[i + 1]]`
/// (ascending), their values at the same positions of `values`.
#[derive(Clone, Debug, PartialEq)]
pub struct SparseMatrix {
    nrows: usize,
    ncols: usize,
    row_ptr: Vec<usize>,
    col_idx: Vec<usize>,
    /// Values of the stored entries, in pattern order.
    pub values: Vec<f64>,
}

impl SparseMatrix {
    /// The pattern made of the positions `entries` (any order, duplicates
    /// allowed), all values zero.
    ///
    /// # Panics
    /// When a position lies outside r × c (a programming error of the
    /// system that declares the pattern).
    #[must_use]
    pub fn from_pattern(nrows: usize, ncols: usize, entries: &[(usize, usize)]) -> SparseMatrix {
        let mut rows: Vec<Vec<usize>> = vec![Vec::new(); nrows];
        for &(i, j) in entries {
            assert!(
                i < nrows && j < ncols,
                "pattern entry ({i}, {j}) outside {nrows} × {ncols}"
            );
            rows[i].push(j);
        }
        let mut row_ptr = Vec::with_capacity(nrows + 1);
        let mut col_idx = Vec::with_capacity(entries.len());
        row_ptr.push(0);
        for mut r in rows {
            r.sort_unstable();
            r.dedup();
            col_idx.extend_from_slice(&r);
            row_ptr.push(col_idx.len());
        }
        let nnz = col_idx.len();
        SparseMatrix {
            nrows,
            ncols,
            row_ptr,
            col_idx,
            values: vec![0.0; nnz],
        }
    }

    /// The full pattern: every entry stored, row-major.
    #[must_use]
    pub fn dense(nrows: usize, ncols: usize) -> SparseMatrix {
        SparseMatrix {
            nrows,
            ncols,
            row_ptr: (0..=nrows).map(|i| i * ncols).collect(),
            col_idx: (0..nrows).flat_map(|_| 0..ncols).collect(),
            values: vec![0.0; nrows * ncols],
        }
    }

    /// Number of rows.
    #[must_use]
    pub fn nrows(&self) -> usize {
        self.nrows
    }

    /// Number of columns.
    #[must_use]
    pub fn ncols(&self) -> usize {
        self.ncols
    }

    /// (rows, columns).
    #[must_use]
    pub fn shape(&self) -> (usize, usize) {
        (self.nrows, self.ncols)
    }

    /// Number of stored entries.
    #[must_use]
    pub fn nnz(&self) -> usize {
        self.col_idx.len()
    }

    /// Whether every entry is stored.
    #[must_use]
    pub fn is_dense(&self) -> bool {
        self.nnz() == self.nrows * self.ncols
    }

    /// Range of row `i` in `col_idx` and `values`.
    #[inline]
    #[must_use]
    pub fn row_range(&self, i: usize) -> std::ops::Range<usize> {
        self.row_ptr[i]..self.row_ptr[i + 1]
    }

    /// Column indices of the stored entries (pattern order).
    #[inline]
    #[must_use]
    pub fn col_indices(&self) -> &[usize] {
        &self.col_idx
    }

    /// Columns and values of row `i`.
    #[inline]
    #[must_use]
    pub fn row(&self, i: usize) -> (&[usize], &[f64]) {
        let r = self.row_range(i);
        (&self.col_idx[r.clone()], &self.values[r])
    }

    /// Position of entry (i, j) in `values`, if it is in the pattern
    /// (binary search in the row: set-up use).
    #[must_use]
    pub fn index_of(&self, i: usize, j: usize) -> Option<usize> {
        let r = self.row_range(i);
        self.col_idx[r.clone()]
            .binary_search(&j)
            .ok()
            .map(|k| r.start + k)
    }

    /// Entry (i, j) (zero outside the pattern).
    #[must_use]
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.index_of(i, j).map_or(0.0, |k| self.values[k])
    }

    /// Every stored value set to zero (the pattern stays).
    pub fn fill_zero(&mut self) {
        self.values.iter_mut().for_each(|x| *x = 0.0);
    }

    /// The values at the pattern's positions copied from `a` (r × c);
    /// entries of `a` outside the pattern are ignored.
    pub fn load_dense(&mut self, a: &DMatrix<f64>) {
        debug_assert_eq!(a.shape(), self.shape());
        for i in 0..self.nrows {
            for k in self.row_range(i) {
                self.values[k] = a[(i, self.col_idx[k])];
            }
        }
    }

    /// The dense view written into `out` (r × c): zeros outside the
    /// pattern.
    pub fn to_dense_into(&self, out: &mut DMatrix<f64>) {
        debug_assert_eq!(out.shape(), self.shape());
        out.fill(0.0);
        for i in 0..self.nrows {
            for k in self.row_range(i) {
                out[(i, self.col_idx[k])] = self.values[k];
            }
        }
    }

    /// The dense view as a new matrix (allocates: diagnostics, tests).
    #[must_use]
    pub fn to_dense(&self) -> DMatrix<f64> {
        let mut out = DMatrix::zeros(self.nrows, self.ncols);
        self.to_dense_into(&mut out);
        out
    }

    /// y ← y + A x (x len c, y len r).
    pub fn mul_add(&self, x: &[f64], y: &mut [f64]) {
        for i in 0..self.nrows {
            let mut s = 0.0;
            for k in self.row_range(i) {
                s += self.values[k] * x[self.col_idx[k]];
            }
            y[i] += s;
        }
    }

    /// y ← y + Aᵀ x (x len r, y len c).
    pub fn tr_mul_add(&self, x: &[f64], y: &mut [f64]) {
        for i in 0..self.nrows {
            let xi = x[i];
            if xi != 0.0 {
                for k in self.row_range(i) {
                    y[self.col_idx[k]] += self.values[k] * xi;
                }
            }
        }
    }

    /// Largest |entry| (0 for an empty matrix).
    #[must_use]
    pub fn max_abs(&self) -> f64 {
        self.values.iter().fold(0.0, |m, v| m.max(v.abs()))
    }
}

/// The slot of entry (row, col) in a sorted coordinate pattern, for
/// adding an element's blocks into a tangent stored on that pattern
/// (`fill_tangent`). An element's entries come along a row in ascending
/// columns, mostly one after the other in the pattern: the entry after
/// the last one found is tried first, the binary search only when it does
/// not match (the search was 85 % of the planar `fill_tangent` and 15 % of
/// bdf's CPU on the index-3 form of a 1000-link chain, issue 32).
pub(crate) struct PatternSlots<'p> {
    pattern: &'p [(usize, usize)],
    next: std::cell::Cell<usize>,
}

impl<'p> PatternSlots<'p> {
    pub(crate) fn new(pattern: &'p [(usize, usize)]) -> Self {
        Self {
            pattern,
            next: std::cell::Cell::new(0),
        }
    }

    /// The index of (row, col) in the pattern, `None` when it is not there.
    pub(crate) fn find(&self, row: usize, col: usize) -> Option<usize> {
        let at = self.next.get();
        let found = if self.pattern.get(at) == Some(&(row, col)) {
            Some(at)
        } else {
            self.pattern.binary_search(&(row, col)).ok()
        };
        if let Some(e) = found {
            self.next.set(e + 1);
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_products_and_dense_view_agree_with_dense_algebra() {
        let mut a = SparseMatrix::from_pattern(3, 4, &[(0, 3), (0, 1), (2, 0), (0, 1), (2, 2)]);
        assert_eq!(a.nnz(), 4);
        assert_eq!(a.row(0).0, &[1, 3]);
        assert_eq!(a.index_of(1, 0), None);
        for (k, v) in a.values.iter_mut().enumerate() {
            *v = (k + 1) as f64;
        }
        let d = a.to_dense();
        assert_eq!(d[(0, 1)], 1.0);
        assert_eq!(d[(2, 2)], 4.0);
        assert_eq!(a.get(1, 1), 0.0);
        let x = [1.0, -2.0, 0.5, 3.0];
        let mut y = [1.0; 3];
        a.mul_add(&x, &mut y);
        let yd = &d * nalgebra::DVector::from_column_slice(&x);
        for i in 0..3 {
            assert!((y[i] - 1.0 - yd[i]).abs() < 1e-15);
        }
        let z = [2.0, 0.0, -1.0];
        let mut w = [0.0; 4];
        a.tr_mul_add(&z, &mut w);
        let wd = d.transpose() * nalgebra::DVector::from_column_slice(&z);
        for j in 0..4 {
            assert!((w[j] - wd[j]).abs() < 1e-15);
        }
        let mut b = SparseMatrix::dense(3, 4);
        assert!(b.is_dense() && !a.is_dense());
        b.load_dense(&d);
        assert_eq!(b.to_dense(), d);
        a.fill_zero();
        assert_eq!(a.max_abs(), 0.0);
    }
}
