//! Sparse LDLᵀ factorisation of a symmetric positive definite matrix with
//! a fixed pattern: ordering and symbolic analysis once, numeric
//! factorisation and solves without allocation.
//!
//! P A Pᵀ = L D Lᵀ, L unit lower triangular, D diagonal. The fill-reducing
//! permutation P is a minimum-degree ordering of the graph of A (Tinney &
//! Walker 1967, "scheme 2"; George & Liu 1989, *Computer Solution of Large
//! Sparse Positive Definite Systems*, ch. 5), ties broken by the lower
//! index, so a banded matrix (a chain) keeps its natural order and its
//! factor no fill. The elimination tree, column counts and the up-looking
//! numeric factorisation are those of Davis's LDL package (T. A. Davis,
//! "Algorithm 849: A concise sparse Cholesky factorization package", ACM
//! TOMS 31(4), 2005): row k of L is the reach of the pattern of column k
//! of the upper triangle in the elimination tree, and
//! d_k = a_kk − Σ_{i<k} l_ki² d_i.
//!
//! No pivoting: the matrix must be positive definite. A pivot d_k at or
//! below `tol · a_kk` is reported (the row of A it belongs to), which for
//! a Gram matrix J W Jᵀ means that row k of J depends, to that relative
//! tolerance, on the rows eliminated before it; callers then fall back
//! to a dense rank-revealing factorisation for the diagnosis.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

/// LDLᵀ of an n × n symmetric positive definite matrix with a fixed
/// pattern. Fill the values of the upper triangle of A through the slots
/// returned by [`SparseLdlt::slot`], then [`SparseLdlt::factor`] and
/// [`SparseLdlt::solve_in_place`].
#[derive(Clone, Debug)]
pub struct SparseLdlt {
    n: usize,
    /// `perm[k]`: original index eliminated k-th; `inv[i]`: position of i.
    perm: Vec<usize>,
    inv: Vec<usize>,
    /// Upper triangle of P A Pᵀ by columns (rows ≤ column).
    ap: Vec<usize>,
    ai: Vec<usize>,
    /// Values of the upper triangle (what the caller fills).
    pub ax: Vec<f64>,
    /// Elimination tree (usize::MAX at roots), L's column pointers.
    parent: Vec<usize>,
    lp: Vec<usize>,
    lnz: Vec<usize>,
    li: Vec<usize>,
    lx: Vec<f64>,
    d: Vec<f64>,
    y: Vec<f64>,
    pattern: Vec<usize>,
    flag: Vec<usize>,
}

impl SparseLdlt {
    /// Ordering and symbolic analysis for the symmetric pattern made of
    /// `entries` (positions (i, j) of nonzeros, either triangle or both;
    /// the diagonal is always included).
    ///
    /// # Panics
    /// When an entry lies outside n × n (a programming error).
    #[must_use]
    pub fn new(n: usize, entries: &[(usize, usize)]) -> SparseLdlt {
        // adjacency of the graph of A
        let mut adj: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
        for &(i, j) in entries {
            assert!(i < n && j < n, "entry ({i}, {j}) outside {n} × {n}");
            if i != j {
                adj[i].insert(j);
                adj[j].insert(i);
            }
        }
        let perm = minimum_degree(adj.clone());
        let mut inv = vec![0; n];
        for (k, &i) in perm.iter().enumerate() {
            inv[i] = k;
        }
        // upper triangle of P A Pᵀ by columns
        let mut cols: Vec<Vec<usize>> = (0..n).map(|k| vec![k]).collect();
        for (i, nb) in adj.iter().enumerate() {
            for &j in nb {
                let (pi, pj) = (inv[i], inv[j]);
                if pi < pj {
                    cols[pj].push(pi);
                }
            }
        }
        let mut ap = Vec::with_capacity(n + 1);
        let mut ai = Vec::new();
        ap.push(0);
        for mut c in cols {
            c.sort_unstable();
            c.dedup();
            ai.extend_from_slice(&c);
            ap.push(ai.len());
        }
        // elimination tree and column counts (ldl_symbolic)
        let none = usize::MAX;
        let mut parent = vec![none; n];
        let mut flag = vec![none; n];
        let mut lnz = vec![0; n];
        for k in 0..n {
            flag[k] = k;
            for p in ap[k]..ap[k + 1] {
                let mut i = ai[p];
                while i < k && flag[i] != k {
                    if parent[i] == none {
                        parent[i] = k;
                    }
                    lnz[i] += 1;
                    flag[i] = k;
                    i = parent[i];
                }
            }
        }
        let mut lp = vec![0; n + 1];
        for k in 0..n {
            lp[k + 1] = lp[k] + lnz[k];
        }
        let nnz_l = lp[n];
        let nnz_a = ai.len();
        SparseLdlt {
            n,
            perm,
            inv,
            ap,
            ai,
            ax: vec![0.0; nnz_a],
            parent,
            lp,
            lnz,
            li: vec![0; nnz_l],
            lx: vec![0.0; nnz_l],
            d: vec![0.0; n],
            y: vec![0.0; n],
            pattern: vec![0; n],
            flag,
        }
    }

    /// Order n.
    #[must_use]
    pub fn dim(&self) -> usize {
        self.n
    }

    /// Nonzeros of L below the diagonal (fill included).
    #[must_use]
    pub fn factor_nnz(&self) -> usize {
        self.lp[self.n]
    }

    /// Position in `ax` of entry (i, j) = (j, i) of A, if in the pattern
    /// (set-up use: binary search).
    #[must_use]
    pub fn slot(&self, i: usize, j: usize) -> Option<usize> {
        let (a, b) = (self.inv[i], self.inv[j]);
        let (r, c) = if a <= b { (a, b) } else { (b, a) };
        let range = self.ap[c]..self.ap[c + 1];
        self.ai[range.clone()]
            .binary_search(&r)
            .ok()
            .map(|k| range.start + k)
    }

    /// Every value of A set to zero.
    pub fn clear(&mut self) {
        self.ax.iter_mut().for_each(|x| *x = 0.0);
    }

    /// Numeric factorisation of the values in `ax` (ldl_numeric). Fails
    /// with the original index of the first row whose pivot d_k is not
    /// above `tol_rel · a_kk` (or not finite).
    ///
    /// # Errors
    /// The original row index of the failing pivot.
    pub fn factor(&mut self, tol_rel: f64) -> Result<(), usize> {
        let n = self.n;
        for k in 0..n {
            self.y[k] = 0.0;
            let mut top = n;
            self.flag[k] = k;
            self.lnz[k] = 0;
            let mut diag = 0.0;
            for p in self.ap[k]..self.ap[k + 1] {
                let mut i = self.ai[p];
                self.y[i] += self.ax[p];
                if i == k {
                    diag += self.ax[p];
                    continue;
                }
                let mut len = 0;
                while self.flag[i] != k {
                    self.pattern[len] = i;
                    len += 1;
                    self.flag[i] = k;
                    i = self.parent[i];
                }
                while len > 0 {
                    top -= 1;
                    len -= 1;
                    self.pattern[top] = self.pattern[len];
                }
            }
            let mut dk = self.y[k];
            self.y[k] = 0.0;
            for t in top..n {
                let i = self.pattern[t];
                let yi = self.y[i];
                self.y[i] = 0.0;
                let p2 = self.lp[i] + self.lnz[i];
                for p in self.lp[i]..p2 {
                    self.y[self.li[p]] -= self.lx[p] * yi;
                }
                let l_ki = yi / self.d[i];
                dk -= l_ki * yi;
                self.li[p2] = k;
                self.lx[p2] = l_ki;
                self.lnz[i] += 1;
            }
            self.d[k] = dk;
            if !(dk.is_finite() && dk > tol_rel * diag.abs()) || dk <= 0.0 {
                // leave y clean for the next factorisation
                self.y.iter_mut().for_each(|x| *x = 0.0);
                return Err(self.perm[k]);
            }
        }
        Ok(())
    }

    /// Solve A x = b with the current factors, in place (`b` becomes x);
    /// `work` has length n.
    pub fn solve_in_place(&self, b: &mut [f64], work: &mut [f64]) {
        let n = self.n;
        for k in 0..n {
            work[k] = b[self.perm[k]];
        }
        for j in 0..n {
            let xj = work[j];
            for p in self.lp[j]..self.lp[j + 1] {
                work[self.li[p]] -= self.lx[p] * xj;
            }
        }
        for j in 0..n {
            work[j] /= self.d[j];
        }
        for j in (0..n).rev() {
            let mut s = work[j];
            for p in self.lp[j]..self.lp[j + 1] {
                s -= self.lx[p] * work[self.li[p]];
            }
            work[j] = s;
        }
        for k in 0..n {
            b[self.perm[k]] = work[k];
        }
    }
}

/// Minimum-degree elimination order of the graph `adj` (explicit
/// elimination graph: the neighbours of an eliminated node become a
/// clique). Ties go to the lower index.
fn minimum_degree(mut adj: Vec<BTreeSet<usize>>) -> Vec<usize> {
    let n = adj.len();
    let mut heap: BinaryHeap<Reverse<(usize, usize)>> =
        (0..n).map(|i| Reverse((adj[i].len(), i))).collect();
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse((deg, v))) = heap.pop() {
        if done[v] || deg != adj[v].len() {
            continue;
        }
        done[v] = true;
        order.push(v);
        let nb: Vec<usize> = std::mem::take(&mut adj[v]).into_iter().collect();
        for &a in &nb {
            adj[a].remove(&v);
        }
        for (x, &a) in nb.iter().enumerate() {
            for &b in &nb[x + 1..] {
                adj[a].insert(b);
                adj[b].insert(a);
            }
        }
        for &a in &nb {
            heap.push(Reverse((adj[a].len(), a)));
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{DMatrix, DVector};

    /// A random sparse SPD matrix B Bᵀ + I solved against nalgebra's
    /// Cholesky, and a rank-deficient one reported.
    #[test]
    fn solves_sparse_spd_and_reports_dependent_rows() {
        let n = 30;
        let mut seed: u64 = 7;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let mut b = DMatrix::zeros(n, n);
        for i in 0..n {
            b[(i, i)] = 1.0 + rnd();
            b[(i, (i * 7 + 3) % n)] = rnd();
            b[(i, (i * 3 + 1) % n)] = rnd();
        }
        let a = &b * b.transpose() + DMatrix::identity(n, n);
        let entries: Vec<(usize, usize)> = (0..n)
            .flat_map(|i| (0..n).map(move |j| (i, j)))
            .filter(|&(i, j)| a[(i, j)] != 0.0)
            .collect();
        let mut f = SparseLdlt::new(n, &entries);
        for &(i, j) in &entries {
            if i <= j {
                let s = f.slot(i, j).expect("in pattern");
                f.ax[s] = a[(i, j)];
            }
        }
        f.factor(1e-12).expect("SPD");
        let x: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
        let mut rhs: Vec<f64> = (&a * DVector::from_column_slice(&x))
            .iter()
            .copied()
            .collect();
        let mut work = vec![0.0; n];
        f.solve_in_place(&mut rhs, &mut work);
        for i in 0..n {
            assert!((rhs[i] - x[i]).abs() < 1e-12, "{i}: {} vs {}", rhs[i], x[i]);
        }
        // J Jᵀ with row 2 = row 0 + row 1: a zero pivot at one of them
        let j = DMatrix::from_row_slice(3, 3, &[1.0, 0.0, 2.0, 0.0, 1.0, 1.0, 1.0, 1.0, 3.0]);
        let g = &j * j.transpose();
        let all: Vec<(usize, usize)> = (0..3).flat_map(|i| (0..3).map(move |k| (i, k))).collect();
        let mut f = SparseLdlt::new(3, &all);
        for i in 0..3 {
            for k in i..3 {
                let s = f.slot(i, k).expect("in pattern");
                f.ax[s] = g[(i, k)];
            }
        }
        assert!(f.factor(1e-12).is_err());
    }

    #[test]
    fn a_tridiagonal_matrix_keeps_its_order_and_has_no_fill() {
        let n = 50;
        let entries: Vec<(usize, usize)> = (0..n - 1).map(|i| (i, i + 1)).collect();
        let f = SparseLdlt::new(n, &entries);
        assert_eq!(f.factor_nnz(), n - 1);
    }
}
