//! The fixed sparsity pattern of an n × n matrix in compressed sparse
//! columns (CSC): column pointers p (length n + 1) and row indices r,
//! entries of column j at positions p_j..p_{j+1}, rows sorted and unique
//! within a column (Davis 2006, *Direct Methods for Sparse Linear Systems*,
//! §2.2). A position in r is a *slot*: where the value of that entry lives
//! in the values array of the factorisation that owns the pattern. This is
//! the `dim` / `nnz` / `slot` interface of [`crate::SparseLuOf`] and
//! [`crate::LdltOrLu`] ([`FixedPattern`]) and the pattern of the upper
//! triangle [`crate::SparseLdlt`] factors.

use faer::sparse::SymbolicSparseColMatRef;

/// Compressed-column pattern of an n × n matrix (module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnPattern {
    n: usize,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
}

impl ColumnPattern {
    /// The pattern of the entries (row, column), the diagonal always
    /// included; duplicates are merged.
    ///
    /// # Panics
    /// If an entry lies outside the matrix (a programming error of the
    /// caller, which builds the pattern from its own dimensions).
    #[must_use]
    pub fn new(n: usize, entries: &[(usize, usize)]) -> Self {
        Self::placed(n, entries, |cols, i, j| cols[j].push(i))
    }

    /// The symmetric pattern of the entries: (i, j) and (j, i) for each,
    /// the diagonal included; duplicates are merged.
    ///
    /// # Panics
    /// As [`ColumnPattern::new`].
    #[must_use]
    pub fn symmetric(n: usize, entries: &[(usize, usize)]) -> Self {
        Self::placed(n, entries, |cols, i, j| {
            cols[j].push(i);
            cols[i].push(j);
        })
    }

    /// The upper triangle (rows ≤ column) of the symmetric pattern of the
    /// entries, which may lie in either triangle: (min(i, j), max(i, j))
    /// for each, the diagonal included; duplicates are merged.
    ///
    /// # Panics
    /// As [`ColumnPattern::new`].
    #[must_use]
    pub fn upper(n: usize, entries: &[(usize, usize)]) -> Self {
        Self::placed(n, entries, |cols, i, j| cols[i.max(j)].push(i.min(j)))
    }

    /// The diagonal, and each entry (i, j) checked and placed into the
    /// columns by `place`.
    fn placed(
        n: usize,
        entries: &[(usize, usize)],
        place: impl Fn(&mut [Vec<usize>], usize, usize),
    ) -> Self {
        let mut cols: Vec<Vec<usize>> = (0..n).map(|j| vec![j]).collect();
        for &(i, j) in entries {
            check(n, i, j);
            place(&mut cols, i, j);
        }
        Self::from_columns(cols)
    }

    /// The pattern whose column j holds the rows `cols[j]` (sorted and
    /// deduplicated here); n = `cols.len()`.
    ///
    /// # Panics
    /// If a row index is not below n.
    #[must_use]
    pub fn from_columns(cols: Vec<Vec<usize>>) -> Self {
        let n = cols.len();
        let mut col_ptr = Vec::with_capacity(n + 1);
        let mut row_idx = Vec::new();
        col_ptr.push(0);
        for (j, mut c) in cols.into_iter().enumerate() {
            c.sort_unstable();
            c.dedup();
            if let Some(&i) = c.last() {
                check(n, i, j);
            }
            row_idx.extend_from_slice(&c);
            col_ptr.push(row_idx.len());
        }
        Self {
            n,
            col_ptr,
            row_idx,
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

    /// Column pointers p (length n + 1).
    #[must_use]
    pub fn col_ptr(&self) -> &[usize] {
        &self.col_ptr
    }

    /// Row indices r, sorted within each column.
    #[must_use]
    pub fn row_idx(&self) -> &[usize] {
        &self.row_idx
    }

    /// The rows of column j.
    #[must_use]
    pub fn rows_of(&self, j: usize) -> &[usize] {
        &self.row_idx[self.col_ptr[j]..self.col_ptr[j + 1]]
    }

    /// Position of entry (i, j) in the values, `None` when it is not in
    /// the pattern (binary search in column j: a set-up operation).
    #[must_use]
    pub fn slot(&self, i: usize, j: usize) -> Option<usize> {
        let (a, b) = (self.col_ptr[j], self.col_ptr[j + 1]);
        self.row_idx[a..b].binary_search(&i).ok().map(|k| a + k)
    }

    /// The entries (row, column) in slot order.
    pub fn entries(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.n).flat_map(move |j| self.rows_of(j).iter().map(move |&i| (i, j)))
    }

    /// The pattern as faer's symbolic matrix.
    #[must_use]
    pub fn as_faer(&self) -> SymbolicSparseColMatRef<'_, usize> {
        SymbolicSparseColMatRef::new_checked(self.n, self.n, &self.col_ptr, None, &self.row_idx)
    }
}

/// A matrix whose values live in the slots of a fixed [`ColumnPattern`]
/// ([`crate::SparseLuOf`], [`crate::LdltOrLu`]): its dimension, entry
/// count and slots are the pattern's.
pub trait FixedPattern {
    /// The pattern of the matrix.
    fn pattern(&self) -> &ColumnPattern;

    /// The dimension n.
    fn dim(&self) -> usize {
        self.pattern().dim()
    }

    /// Number of entries of the pattern.
    fn nnz(&self) -> usize {
        self.pattern().nnz()
    }

    /// Position of entry (i, j) in the values, `None` when it is not in
    /// the pattern.
    fn slot(&self, i: usize, j: usize) -> Option<usize> {
        self.pattern().slot(i, j)
    }
}

/// Entry (i, j) must lie in the n × n matrix.
fn check(n: usize, i: usize, j: usize) {
    assert!(
        i < n && j < n,
        "sparse pattern: entry ({i}, {j}) outside {n} × {n}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_sorted_unique_columns_with_the_diagonal() {
        let p = ColumnPattern::new(3, &[(2, 0), (0, 2), (2, 0), (1, 0)]);
        assert_eq!(p.col_ptr(), &[0, 3, 4, 6]);
        assert_eq!(p.row_idx(), &[0, 1, 2, 1, 0, 2]);
        assert_eq!(p.nnz(), 6);
        assert_eq!(p.slot(2, 0), Some(2));
        assert_eq!(p.slot(0, 1), None);
        let e: Vec<_> = p.entries().collect();
        assert_eq!(e, [(0, 0), (1, 0), (2, 0), (1, 1), (0, 2), (2, 2)]);
        let s = ColumnPattern::symmetric(3, &[(2, 0)]);
        assert_eq!(s.row_idx(), &[0, 2, 1, 0, 2]);
        let u = ColumnPattern::upper(3, &[(2, 0), (0, 2), (1, 2)]);
        assert_eq!(u.col_ptr(), &[0, 1, 2, 5]);
        assert_eq!(u.row_idx(), &[0, 1, 0, 1, 2]);
    }
}
