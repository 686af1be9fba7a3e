//! Matrix products into preallocated storage, allocation-free.

use nalgebra::DMatrix;

/// C = A B (C of size rows(A) × cols(B), overwritten) by the plain
/// column-oriented triple loop: nalgebra's `gemm` hands larger products to `matrixmultiply`, which allocates packing
/// buffers at every call; the matrices of the hot path are small (the
/// LLM's n + 3 for n states, G Z with p invariants), where the plain loop
/// is as fast.
pub(crate) fn matmul(c: &mut DMatrix<f64>, a: &DMatrix<f64>, b: &DMatrix<f64>) {
    let (n, k) = (a.nrows(), a.ncols());
    for j in 0..b.ncols() {
        let cj = &mut c.as_mut_slice()[j * n..(j + 1) * n];
        cj.fill(0.0);
        for l in 0..k {
            let blj = b[(l, j)];
            let al = &a.as_slice()[l * n..(l + 1) * n];
            for (ci, ai) in cj.iter_mut().zip(al) {
                *ci += ai * blj;
            }
        }
    }
}
