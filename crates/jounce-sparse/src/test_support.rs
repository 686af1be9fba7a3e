//! Fixtures of this crate's unit tests.

use nalgebra::DMatrix;

/// The positions (i, j) of the nonzeros of a dense matrix, row by row.
pub(crate) fn nonzeros(a: &DMatrix<f64>) -> Vec<(usize, usize)> {
    (0..a.nrows())
        .flat_map(|i| (0..a.ncols()).map(move |j| (i, j)))
        .filter(|&(i, j)| a[(i, j)] != 0.0)
        .collect()
}
