//! The KKT system of a diagonal, possibly singular mass matrix reduced to
//! the multipliers and the massless coordinates: the fast dense path for
//! small systems (studies.md S1: point masses without rotational inertia).
//!
//! With M = diag(d), the coordinates split into r (d_j > 0) and z
//! (d_j = 0). The KKT equations [M Φ_qᵀ; Φ_q 0][a; λ] = [r₁; r₂] read
//! d_r a_r + Φ_rᵀ λ = r₁,r,  Φ_zᵀ λ = r₁,z,  Φ_r a_r + Φ_z a_z = r₂; with
//! a_r = D_r⁻¹ (r₁,r − Φ_rᵀ λ) eliminated:
//!
//! ```text
//! [ −Φ_r D_r⁻¹ Φ_rᵀ   Φ_z ] [ λ   ]   [ r₂ − Φ_r D_r⁻¹ r₁,r ]
//! [  Φ_zᵀ             0   ] [ a_z ] = [ r₁,z                ]
//! ```
//!
//! a symmetric system of order m + n_z instead of n + m (the range-space
//! method of Nocedal & Wright, *Numerical Optimization*, 2nd ed., §16.2,
//! applied to the coordinates that have inertia), factored by LU with
//! partial (row) pivoting (Golub & Van Loan, *Matrix Computations*, 4th
//! ed., Algorithm 3.4.1). For S1 (n = 6, m = 4, n_z = 2) that is 6 × 6
//! instead of 10 × 10 with full pivoting. A pivot below 10⁻¹³ of the
//! largest entry fails the factorisation, and the caller takes the full
//! KKT LU (which also names the cause).

use jounce_mechanics::SparseMatrix;

/// Pivots below this fraction of the largest entry count as zero.
const PIVOT_TOL: f64 = 1e-13;

/// Storage and factors of the reduced KKT matrix (all buffers sized at
/// set-up for the largest order m + n).
#[derive(Clone, Debug)]
pub(crate) struct ReducedKkt {
    n: usize,
    m: usize,
    /// Order of the reduced system, m + n_z.
    p: usize,
    /// Massless coordinates z (first `nz` entries used).
    zidx: Vec<usize>,
    nz: usize,
    /// 1/d_j for coordinates with inertia, 0 for massless ones.
    dinv: Vec<f64>,
    /// Dense Φ_q (m × n, row-major) of the last factorisation.
    jac: Vec<f64>,
    /// Row-major p × p matrix, then its packed L\U factors.
    lu: Vec<f64>,
    /// Row permutation: `perm[k]` original row at position k.
    perm: Vec<usize>,
}

impl ReducedKkt {
    /// Buffers for n coordinates and m constraint rows.
    pub fn new(n: usize, m: usize) -> Self {
        Self {
            n,
            m,
            p: 0,
            zidx: vec![0; n],
            nz: 0,
            dinv: vec![0.0; n],
            jac: vec![0.0; m * n],
            lu: vec![0.0; (m + n) * (m + n)],
            perm: vec![0; m + n],
        }
    }

    /// Factor for M = diag(`d`) and Φ_q = `jac`; false when an entry of d
    /// is negative or not finite, or the reduced matrix is singular.
    pub fn factor(&mut self, d: &[f64], jac: &SparseMatrix) -> bool {
        let (n, m) = (self.n, self.m);
        self.nz = 0;
        for j in 0..n {
            if !(d[j].is_finite() && d[j] >= 0.0) {
                return false;
            }
            if d[j] == 0.0 {
                self.zidx[self.nz] = j;
                self.nz += 1;
                self.dinv[j] = 0.0;
            } else {
                self.dinv[j] = 1.0 / d[j];
            }
        }
        let p = m + self.nz;
        self.p = p;
        self.jac.iter_mut().for_each(|x| *x = 0.0);
        for i in 0..m {
            let (cols, vals) = jac.row(i);
            for (&j, &v) in cols.iter().zip(vals) {
                self.jac[i * n + j] = v;
            }
        }
        let (a, jd) = (&mut self.lu, &self.jac);
        for i in 0..m {
            for k in i..m {
                let mut s = 0.0;
                for j in 0..n {
                    s += jd[i * n + j] * self.dinv[j] * jd[k * n + j];
                }
                a[i * p + k] = -s;
                a[k * p + i] = -s;
            }
            for (c, &j) in self.zidx[..self.nz].iter().enumerate() {
                a[i * p + m + c] = jd[i * n + j];
                a[(m + c) * p + i] = jd[i * n + j];
            }
        }
        for r in m..p {
            for c in m..p {
                a[r * p + c] = 0.0;
            }
        }
        let scale = a[..p * p].iter().fold(0.0_f64, |s, x| s.max(x.abs()));
        if !(scale.is_finite() && scale > 0.0) {
            return p == 0;
        }
        for (k, v) in self.perm[..p].iter_mut().enumerate() {
            *v = k;
        }
        for k in 0..p {
            let mut piv = k;
            for i in k + 1..p {
                if a[i * p + k].abs() > a[piv * p + k].abs() {
                    piv = i;
                }
            }
            if !(a[piv * p + k].abs() > PIVOT_TOL * scale) {
                return false;
            }
            if piv != k {
                for c in 0..p {
                    a.swap(k * p + c, piv * p + c);
                }
                self.perm.swap(k, piv);
            }
            let pv = a[k * p + k];
            for i in k + 1..p {
                let l = a[i * p + k] / pv;
                a[i * p + k] = l;
                if l != 0.0 {
                    for c in k + 1..p {
                        a[i * p + c] -= l * a[k * p + c];
                    }
                }
            }
        }
        true
    }

    /// Solve the KKT system for [r₁; r₂] in `b` (len n + m), in place,
    /// giving [a; λ]; `work` has length ≥ 2 (n + m).
    pub fn solve(&self, b: &mut [f64], work: &mut [f64]) {
        let (n, m, p) = (self.n, self.m, self.p);
        let (rhs, z) = work.split_at_mut(n + m);
        let jd = &self.jac;
        // reduced right-hand side [r₂ − Φ_r D⁻¹ r₁; r₁,z]
        for i in 0..m {
            let mut s = b[n + i];
            for j in 0..n {
                s -= jd[i * n + j] * self.dinv[j] * b[j];
            }
            rhs[i] = s;
        }
        for (c, &j) in self.zidx[..self.nz].iter().enumerate() {
            rhs[m + c] = b[j];
        }
        // P, L, U
        let a = &self.lu;
        for k in 0..p {
            z[k] = rhs[self.perm[k]];
        }
        for i in 0..p {
            let mut s = z[i];
            for c in 0..i {
                s -= a[i * p + c] * z[c];
            }
            z[i] = s;
        }
        for i in (0..p).rev() {
            let mut s = z[i];
            for c in i + 1..p {
                s -= a[i * p + c] * z[c];
            }
            z[i] = s / a[i * p + i];
        }
        // λ, then a_r = D⁻¹ (r₁ − Φ_rᵀ λ), a_z
        for j in 0..n {
            if self.dinv[j] != 0.0 {
                let mut s = b[j];
                for i in 0..m {
                    s -= jd[i * n + j] * z[i];
                }
                b[j] = s * self.dinv[j];
            }
        }
        for (c, &j) in self.zidx[..self.nz].iter().enumerate() {
            b[j] = z[m + c];
        }
        b[n..n + m].copy_from_slice(&z[..m]);
    }
}
