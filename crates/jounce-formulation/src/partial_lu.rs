//! Dense LU factorisation with partial (row) pivoting on preallocated
//! storage, for the matrices a formulation factors at every evaluation.
//!
//! P A = L U (Golub & Van Loan, *Matrix Computations*, 4th ed.,
//! Algorithm 3.4.1, "Gaussian elimination with partial pivoting"; LAPACK's
//! `dgetf2`): at step k the entry of largest magnitude in column k, on or
//! below the diagonal, becomes the pivot. Its pivot search costs O(n) per
//! column instead of the O(n²) of full pivoting, which is what matters for
//! a KKT matrix factored six times per DOPRI5 step. Rank decisions (which
//! constraints are redundant, which coordinates are independent) stay with
//! [`crate::lu::FullPivLu`].
//!
//! nalgebra's `LU` allocates its permutation at every factorisation; this
//! one factors and solves without allocating.

/// LU factorisation with partial pivoting of a square n × n matrix.
/// Fill with [`PartialPivLu::set`], then [`PartialPivLu::factor`].
#[derive(Clone, Debug)]
pub struct PartialPivLu {
    n: usize,
    /// Row-major n × n storage; after factoring, L (unit, below the
    /// diagonal) and U (on and above it) of P A.
    a: Vec<f64>,
    /// `row[k]`: original row placed at position k (the permutation P).
    row: Vec<usize>,
    regular: bool,
}

impl PartialPivLu {
    /// Storage for an n × n matrix.
    pub fn new(n: usize) -> Self {
        Self {
            n,
            a: vec![0.0; n * n],
            row: (0..n).collect(),
            regular: false,
        }
    }

    /// Dimension n.
    pub fn dim(&self) -> usize {
        self.n
    }

    /// Set every entry to zero (before filling blocks).
    pub fn clear(&mut self) {
        self.a.iter_mut().for_each(|x| *x = 0.0);
    }

    /// Entry (i, j) of the matrix to factor.
    #[inline]
    pub fn set(&mut self, i: usize, j: usize, v: f64) {
        self.a[i * self.n + j] = v;
    }

    /// Factor in place. The matrix is taken as singular when a pivot is at
    /// most `tol_rel` times the largest entry of A (the threshold full
    /// pivoting applies to its first pivot); returns whether it is regular.
    pub fn factor(&mut self, tol_rel: f64) -> bool {
        let n = self.n;
        for (k, v) in self.row.iter_mut().enumerate() {
            *v = k;
        }
        let scale = self.a.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let tiny = tol_rel * scale;
        self.regular = scale > 0.0 || n == 0;
        for k in 0..n {
            let (mut pi, mut best) = (k, -1.0);
            for i in k..n {
                let v = self.a[i * n + k].abs();
                if v > best {
                    best = v;
                    pi = i;
                }
            }
            if !(best > tiny) {
                self.regular = false;
                return false;
            }
            if pi != k {
                let (upper, lower) = self.a.split_at_mut(pi * n);
                upper[k * n..k * n + n].swap_with_slice(&mut lower[..n]);
                self.row.swap(k, pi);
            }
            let p = self.a[k * n + k];
            let (top, rest) = self.a.split_at_mut((k + 1) * n);
            let pivot_row = &top[k * n..];
            for r in rest.chunks_exact_mut(n) {
                let l = r[k] / p;
                r[k] = l;
                if l != 0.0 {
                    for (x, u) in r[k + 1..].iter_mut().zip(&pivot_row[k + 1..]) {
                        *x -= l * u;
                    }
                }
            }
        }
        self.regular
    }

    /// Whether the last [`PartialPivLu::factor`] found A regular.
    pub fn is_regular(&self) -> bool {
        self.regular
    }

    /// Solve A x = b in place (`b` becomes x) with the factors of a regular
    /// A; `work` has length n.
    pub fn solve_in_place(&self, b: &mut [f64], work: &mut [f64]) {
        let n = self.n;
        debug_assert!(self.regular);
        // z = P b, then L z' = z (unit lower)
        for i in 0..n {
            let mut s = b[self.row[i]];
            let li = &self.a[i * n..i * n + i];
            for (l, w) in li.iter().zip(&work[..i]) {
                s -= l * w;
            }
            work[i] = s;
        }
        // U x = z'
        for i in (0..n).rev() {
            let ui = &self.a[i * n..(i + 1) * n];
            let mut s = work[i];
            for (u, x) in ui[i + 1..].iter().zip(&b[i + 1..n]) {
                s -= u * x;
            }
            b[i] = s / ui[i];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(a: &[Vec<f64>]) -> PartialPivLu {
        let n = a.len();
        let mut lu = PartialPivLu::new(n);
        for (i, row) in a.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                lu.set(i, j, *v);
            }
        }
        lu
    }

    fn residual(a: &[Vec<f64>], x: &[f64], b: &[f64]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(row, bi)| (row.iter().zip(x).map(|(r, xj)| r * xj).sum::<f64>() - bi).abs())
            .fold(0.0, f64::max)
    }

    #[test]
    fn solves_a_kkt_matrix_with_a_singular_mass_block() {
        // [M Φ_qᵀ; Φ_q 0] with a zero inertia (M singular), as in S1
        let a = vec![
            vec![1.0, 0.0, 0.0, 1.0, 0.0],
            vec![0.0, 1.0, 0.0, 0.0, 1.0],
            vec![0.0, 0.0, 0.0, 0.5, -1.0],
            vec![1.0, 0.0, 0.5, 0.0, 0.0],
            vec![0.0, 1.0, -1.0, 0.0, 0.0],
        ];
        let mut lu = load(&a);
        assert!(lu.factor(1e-13));
        let b = [1.0, -2.0, 0.5, 3.0, 0.25];
        let mut x = b;
        let mut w = [0.0; 5];
        lu.solve_in_place(&mut x, &mut w);
        assert!(residual(&a, &x, &b) < 1e-14, "{x:?}");
    }

    #[test]
    fn agrees_with_full_pivoting_on_random_matrices() {
        // a fixed linear congruential sequence: reproducible, no dependency
        let mut s: u64 = 12345;
        let mut next = || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        };
        for n in [1, 2, 5, 12, 30] {
            let a: Vec<Vec<f64>> = (0..n).map(|_| (0..n).map(|_| next()).collect()).collect();
            let b: Vec<f64> = (0..n).map(|_| next()).collect();
            let mut lu = load(&a);
            assert!(lu.factor(1e-13));
            let (mut x, mut w) = (b.clone(), vec![0.0; n]);
            lu.solve_in_place(&mut x, &mut w);
            let mut full = crate::lu::FullPivLu::new(n, n);
            for i in 0..n {
                for j in 0..n {
                    full.set(i, j, a[i][j]);
                }
            }
            full.factor(1e-13);
            let mut y = b.clone();
            full.solve_in_place(&mut y, &mut w);
            let diff = x.iter().zip(&y).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
            let size = y.iter().map(|v| v.abs()).fold(0.0, f64::max);
            assert!(diff < 1e-10 * size.max(1.0), "n = {n}: {diff:e}");
            assert!(residual(&a, &x, &b) < 1e-11, "n = {n}");
        }
    }

    #[test]
    fn reports_a_singular_matrix() {
        // two equal constraint rows: a redundant joint
        let a = vec![
            vec![1.0, 0.0, 1.0, 1.0],
            vec![0.0, 1.0, 0.0, 0.0],
            vec![1.0, 0.0, 0.0, 0.0],
            vec![1.0, 0.0, 0.0, 0.0],
        ];
        assert!(!load(&a).factor(1e-13));
        let zero = vec![vec![0.0; 3]; 3];
        assert!(!load(&zero).factor(1e-13));
    }
}
