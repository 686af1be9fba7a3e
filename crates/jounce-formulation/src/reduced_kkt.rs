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
    /// Coordinates with inertia r (first `nr` used) and massless ones z
    /// (first `nz` used).
    ridx: Vec<usize>,
    nr: usize,
    zidx: Vec<usize>,
    nz: usize,
    /// 1/d_j of the coordinates r, in the order of `ridx`.
    dinv: Vec<f64>,
    /// Position of every coordinate in r (< n) or z (n + position).
    pos: Vec<usize>,
    /// Whether the last [`ReducedKkt::set_mass`] accepted its M.
    mass_ok: bool,
    /// Φ_r (m × n_r), Φ_r D_r⁻¹ (m × n_r) and Φ_z (m × n_z), row-major,
    /// compact, of the last factorisation.
    jr: Vec<f64>,
    jrw: Vec<f64>,
    jz: Vec<f64>,
    /// Row-major p × p matrix, then its packed L\U factors.
    lu: Vec<f64>,
    /// Row permutation: `perm[k]` original row at position k.
    perm: Vec<usize>,
    /// Reciprocals of U's diagonal.
    udinv: Vec<f64>,
}

impl ReducedKkt {
    /// Buffers for n coordinates and m constraint rows.
    pub fn new(n: usize, m: usize) -> Self {
        Self {
            n,
            m,
            p: 0,
            ridx: vec![0; n],
            nr: 0,
            zidx: vec![0; n],
            nz: 0,
            dinv: vec![0.0; n],
            pos: vec![0; n],
            mass_ok: false,
            jr: vec![0.0; m * n],
            jrw: vec![0.0; m * n],
            jz: vec![0.0; m * n],
            lu: vec![0.0; (m + n) * (m + n)],
            perm: vec![0; m + n],
            udinv: vec![0.0; m + n],
        }
    }

    /// Split the coordinates by M = diag(`d`) into those with inertia and
    /// the massless ones (once for a constant M); false when an entry of d
    /// is negative or not finite.
    pub fn set_mass(&mut self, d: &[f64]) -> bool {
        let n = self.n;
        let (mut nr, mut nz) = (0, 0);
        self.mass_ok = false;
        for j in 0..n {
            if !(d[j].is_finite() && d[j] >= 0.0) {
                return false;
            }
            if d[j] == 0.0 {
                self.zidx[nz] = j;
                self.pos[j] = n + nz;
                nz += 1;
            } else {
                self.ridx[nr] = j;
                self.dinv[nr] = 1.0 / d[j];
                self.pos[j] = nr;
                nr += 1;
            }
        }
        self.nr = nr;
        self.nz = nz;
        self.mass_ok = true;
        true
    }

    /// Factor for the M of [`ReducedKkt::set_mass`] and Φ_q = `jac`; false
    /// when that M was invalid or the reduced matrix is singular.
    pub fn factor(&mut self, jac: &SparseMatrix) -> bool {
        if !self.mass_ok {
            return false;
        }
        let (n, m, nr, nz) = (self.n, self.m, self.nr, self.nz);
        let pos = &self.pos;
        let p = m + nz;
        self.p = p;
        self.jr[..m * nr].iter_mut().for_each(|x| *x = 0.0);
        self.jrw[..m * nr].iter_mut().for_each(|x| *x = 0.0);
        self.jz[..m * nz].iter_mut().for_each(|x| *x = 0.0);
        for i in 0..m {
            let (cols, vals) = jac.row(i);
            for (&j, &v) in cols.iter().zip(vals) {
                let c = pos[j];
                if c < n {
                    self.jr[i * nr + c] = v;
                    self.jrw[i * nr + c] = v * self.dinv[c];
                } else {
                    self.jz[i * nz + c - n] = v;
                }
            }
        }
        let a = &mut self.lu;
        let mut scale: f64 = 0.0;
        for i in 0..m {
            let wi = &self.jrw[i * nr..(i + 1) * nr];
            for k in i..m {
                let jk = &self.jr[k * nr..(k + 1) * nr];
                let s: f64 = wi.iter().zip(jk).map(|(x, y)| x * y).sum();
                a[i * p + k] = -s;
                a[k * p + i] = -s;
                scale = scale.max(s.abs());
            }
            for c in 0..nz {
                let v = self.jz[i * nz + c];
                a[i * p + m + c] = v;
                a[(m + c) * p + i] = v;
                scale = scale.max(v.abs());
            }
        }
        for r in m..p {
            a[r * p + m..r * p + p].iter_mut().for_each(|x| *x = 0.0);
        }
        if !(scale.is_finite() && scale > 0.0) {
            return p == 0;
        }
        for (k, v) in self.perm[..p].iter_mut().enumerate() {
            *v = k;
        }
        let a = &mut a[..p * p];
        for k in 0..p {
            let mut piv = k;
            let mut best = a[k * p + k].abs();
            for i in k + 1..p {
                let v = a[i * p + k].abs();
                if v > best {
                    best = v;
                    piv = i;
                }
            }
            if !(best > PIVOT_TOL * scale) {
                return false;
            }
            if piv != k {
                let (top, bottom) = a.split_at_mut(piv * p);
                top[k * p..(k + 1) * p].swap_with_slice(&mut bottom[..p]);
                self.perm.swap(k, piv);
            }
            let inv = 1.0 / a[k * p + k];
            self.udinv[k] = inv;
            let (upper, lower) = a.split_at_mut((k + 1) * p);
            let prow = &upper[k * p + k + 1..(k + 1) * p];
            for row in lower.chunks_exact_mut(p) {
                let l = row[k] * inv;
                row[k] = l;
                if l != 0.0 {
                    for (x, y) in row[k + 1..].iter_mut().zip(prow) {
                        *x -= l * y;
                    }
                }
            }
        }
        true
    }

    /// Solve the KKT system for [r₁; r₂] in `b` (len n + m), in place,
    /// giving [a; λ]; `work` has length ≥ 2 (n + m).
    pub fn solve(&self, b: &mut [f64], work: &mut [f64]) {
        let (n, m, p, nr, nz) = (self.n, self.m, self.p, self.nr, self.nz);
        let (rhs, z) = work.split_at_mut(n + m);
        // r₁ of the coordinates r, compact
        let r1 = &mut z[p..p + nr];
        for (c, &j) in self.ridx[..nr].iter().enumerate() {
            r1[c] = b[j];
        }
        // reduced right-hand side [r₂ − Φ_r D⁻¹ r₁; r₁,z]
        for i in 0..m {
            let wi = &self.jrw[i * nr..(i + 1) * nr];
            let s: f64 = wi.iter().zip(r1.iter()).map(|(x, y)| x * y).sum();
            rhs[i] = b[n + i] - s;
        }
        for (c, &j) in self.zidx[..nz].iter().enumerate() {
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
            z[i] = s * self.udinv[i];
        }
        // a_r = D⁻¹ (r₁ − Φ_rᵀ λ), a_z, λ
        for (c, &j) in self.ridx[..nr].iter().enumerate() {
            let mut s = b[j];
            for i in 0..m {
                s -= self.jr[i * nr + c] * z[i];
            }
            b[j] = s * self.dinv[c];
        }
        for (c, &j) in self.zidx[..nz].iter().enumerate() {
            b[j] = z[m + c];
        }
        b[n..n + m].copy_from_slice(&z[..m]);
    }
}
