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
    /// Column of every coordinate in the permuted Φ_q: its position in r,
    /// or n_r + its position in z.
    pos: Vec<usize>,
    /// Whether the last [`ReducedKkt::set_mass`] accepted its M.
    mass_ok: bool,
    /// Φ_q of the last factorisation with its columns permuted to
    /// [Φ_r Φ_z] (m × n, row-major); entries outside the pattern of
    /// `pattern` stay zero.
    jc: Vec<f64>,
    /// Column indices of the Φ_q pattern `slot` was made for (capacity
    /// m n, so that a new pattern allocates nothing).
    pattern: Vec<usize>,
    /// Position in `jc` of every stored entry of that pattern.
    slot: Vec<usize>,
    /// Whether `slot` holds the map of `pattern` for the current split.
    slot_ok: bool,
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
            jc: vec![0.0; m * n],
            pattern: Vec::with_capacity(m * n),
            slot: vec![0; m * n],
            slot_ok: false,
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
        self.slot_ok = false;
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
        // z columns after the r columns in the permuted Φ_q
        for &j in &self.zidx[..nz] {
            self.pos[j] -= n - nr;
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
        // the number of coordinates as a constant for small systems (up
        // to four planar bodies): the loops unroll, the scratch is cleared
        // without a call (same operations, same results)
        match self.n {
            1 => self.factor_sized(jac, 1),
            2 => self.factor_sized(jac, 2),
            3 => self.factor_sized(jac, 3),
            4 => self.factor_sized(jac, 4),
            5 => self.factor_sized(jac, 5),
            6 => self.factor_sized(jac, 6),
            7 => self.factor_sized(jac, 7),
            8 => self.factor_sized(jac, 8),
            9 => self.factor_sized(jac, 9),
            10 => self.factor_sized(jac, 10),
            11 => self.factor_sized(jac, 11),
            12 => self.factor_sized(jac, 12),
            n => self.factor_sized(jac, n),
        }
    }

    /// [`ReducedKkt::factor`] with `n` = `self.n`, always inlined so that
    /// a constant `n` specialises it.
    #[inline(always)]
    fn factor_sized(&mut self, jac: &SparseMatrix, n: usize) -> bool {
        let (m, nr, nz) = (self.m, self.nr, self.nz);
        let p = m + nz;
        self.p = p;
        // Φ_q with its columns permuted to [r z], dense, row-major: each
        // stored entry to its place (`slot`, made once per pattern and
        // split, the entries outside the pattern cleared then)
        let cols = jac.col_indices();
        if !(self.slot_ok && cols == self.pattern.as_slice()) {
            self.pattern.clear();
            self.pattern.extend_from_slice(cols);
            for i in 0..m {
                for t in jac.row_range(i) {
                    self.slot[t] = i * n + self.pos[cols[t]];
                }
            }
            self.jc[..m * n].fill(0.0);
            self.slot_ok = true;
        }
        let jc = &mut self.jc[..m * n];
        for (&t, &v) in self.slot[..cols.len()].iter().zip(&jac.values) {
            jc[t] = v;
        }
        let dinv = &self.dinv[..nr];
        let a = &mut self.lu;
        let mut scale: f64 = 0.0;
        for i in 0..m {
            let (ri, zi) = jc[i * n..(i + 1) * n].split_at(nr);
            for k in i..m {
                let rk = &jc[k * n..k * n + nr];
                let mut s = 0.0;
                for c in 0..nr {
                    s += ri[c] * dinv[c] * rk[c];
                }
                a[i * p + k] = -s;
                a[k * p + i] = -s;
                scale = scale.max(s.abs());
            }
            for (c, &v) in zi[..nz].iter().enumerate() {
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
        lu_factor_small(
            &mut a[..p * p],
            p,
            &mut self.perm[..p],
            &mut self.udinv[..p],
            scale,
        )
    }

    /// Solve the KKT system for [r₁; r₂] in `b` (len n + m), in place,
    /// giving [a; λ]; `work` has length ≥ 2 (n + m).
    pub fn solve(&self, b: &mut [f64], work: &mut [f64]) {
        // as in `factor`
        match self.n {
            1 => self.solve_sized(b, work, 1),
            2 => self.solve_sized(b, work, 2),
            3 => self.solve_sized(b, work, 3),
            4 => self.solve_sized(b, work, 4),
            5 => self.solve_sized(b, work, 5),
            6 => self.solve_sized(b, work, 6),
            7 => self.solve_sized(b, work, 7),
            8 => self.solve_sized(b, work, 8),
            9 => self.solve_sized(b, work, 9),
            10 => self.solve_sized(b, work, 10),
            11 => self.solve_sized(b, work, 11),
            12 => self.solve_sized(b, work, 12),
            n => self.solve_sized(b, work, n),
        }
    }

    /// [`ReducedKkt::solve`] with `n` = `self.n`, always inlined so that a
    /// constant `n` specialises it.
    #[inline(always)]
    fn solve_sized(&self, b: &mut [f64], work: &mut [f64], n: usize) {
        let (m, p, nr, nz) = (self.m, self.p, self.nr, self.nz);
        let (rhs, z) = work.split_at_mut(n + m);
        // r₁ of the coordinates r, compact
        let r1 = &mut z[p..p + nr];
        for (c, &j) in self.ridx[..nr].iter().enumerate() {
            r1[c] = b[j];
        }
        // reduced right-hand side [r₂ − Φ_r D⁻¹ r₁; r₁,z]
        for i in 0..m {
            let ri = &self.jc[i * n..i * n + nr];
            let mut s = 0.0;
            for c in 0..nr {
                s += ri[c] * self.dinv[c] * r1[c];
            }
            rhs[i] = b[n + i] - s;
        }
        for (c, &j) in self.zidx[..nz].iter().enumerate() {
            rhs[m + c] = b[j];
        }
        // P, L, U
        let (a, perm, udinv) = (&self.lu[..p * p], &self.perm[..p], &self.udinv[..p]);
        lu_solve_small(a, p, perm, udinv, &rhs[..p], &mut z[..p]);
        // a_r = D⁻¹ (r₁ − Φ_rᵀ λ), a_z, λ
        for (c, &j) in self.ridx[..nr].iter().enumerate() {
            let mut s = b[j];
            for i in 0..m {
                s -= self.jc[i * n + c] * z[i];
            }
            b[j] = s * self.dinv[c];
        }
        for (c, &j) in self.zidx[..nz].iter().enumerate() {
            b[j] = z[m + c];
        }
        b[n..n + m].copy_from_slice(&z[..m]);
    }
}

/// [`lu_factor`] with the order as a constant for p ≤ 8 (the loops unroll;
/// same operations, same results).
#[inline(never)]
fn lu_factor_small(
    a: &mut [f64],
    p: usize,
    perm: &mut [usize],
    udinv: &mut [f64],
    scale: f64,
) -> bool {
    match p {
        1 => lu_factor(a, 1, perm, udinv, scale),
        2 => lu_factor(a, 2, perm, udinv, scale),
        3 => lu_factor(a, 3, perm, udinv, scale),
        4 => lu_factor(a, 4, perm, udinv, scale),
        5 => lu_factor(a, 5, perm, udinv, scale),
        6 => lu_factor(a, 6, perm, udinv, scale),
        7 => lu_factor(a, 7, perm, udinv, scale),
        8 => lu_factor(a, 8, perm, udinv, scale),
        _ => lu_factor(a, p, perm, udinv, scale),
    }
}

/// [`lu_solve`] with the order as a constant for p ≤ 8.
#[inline(never)]
fn lu_solve_small(a: &[f64], p: usize, perm: &[usize], udinv: &[f64], rhs: &[f64], z: &mut [f64]) {
    match p {
        1 => lu_solve(a, 1, perm, udinv, rhs, z),
        2 => lu_solve(a, 2, perm, udinv, rhs, z),
        3 => lu_solve(a, 3, perm, udinv, rhs, z),
        4 => lu_solve(a, 4, perm, udinv, rhs, z),
        5 => lu_solve(a, 5, perm, udinv, rhs, z),
        6 => lu_solve(a, 6, perm, udinv, rhs, z),
        7 => lu_solve(a, 7, perm, udinv, rhs, z),
        8 => lu_solve(a, 8, perm, udinv, rhs, z),
        _ => lu_solve(a, p, perm, udinv, rhs, z),
    }
}

/// LU with partial (row) pivoting of the row-major p × p matrix `a` in
/// place (Golub & Van Loan, Algorithm 3.4.1): P A = L U, L unit lower
/// triangular below the diagonal, U on and above it; `perm[k]` is the
/// original row at position k, `udinv` the reciprocals of U's diagonal.
/// False when a pivot is not above [`PIVOT_TOL`] × `scale`. Always inlined,
/// so that a constant `p` unrolls the loops.
#[inline(always)]
fn lu_factor(a: &mut [f64], p: usize, perm: &mut [usize], udinv: &mut [f64], scale: f64) -> bool {
    let (a, perm, udinv) = (&mut a[..p * p], &mut perm[..p], &mut udinv[..p]);
    for (k, v) in perm.iter_mut().enumerate() {
        *v = k;
    }
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
            perm.swap(k, piv);
        }
        let inv = 1.0 / a[k * p + k];
        udinv[k] = inv;
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

/// z = U⁻¹ L⁻¹ P `rhs` with the factors of [`lu_factor`] (len p each).
/// Always inlined, so that a constant `p` unrolls the loops.
#[inline(always)]
fn lu_solve(a: &[f64], p: usize, perm: &[usize], udinv: &[f64], rhs: &[f64], z: &mut [f64]) {
    let (a, perm, udinv, rhs, z) = (&a[..p * p], &perm[..p], &udinv[..p], &rhs[..p], &mut z[..p]);
    for k in 0..p {
        z[k] = rhs[perm[k]];
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
        z[i] = s * udinv[i];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lu::FullPivLu;

    /// A deterministic value in [−1, 1).
    fn noise(seed: &mut u64) -> f64 {
        *seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    /// Φ_q (m × n) of a chain of planar bodies pinned to each other, the
    /// first to ground, the last also to ground when `closed` (a closed
    /// loop): each revolute row couples the (x, y, θ) of its two bodies.
    fn jacobian(nb: usize, closed: bool, seed: &mut u64) -> SparseMatrix {
        let joints = nb + usize::from(closed);
        let mut entries = Vec::new();
        for k in 0..joints {
            let bodies = [k.checked_sub(1), (k < nb).then_some(k)];
            for r in 0..2 {
                for b in bodies.into_iter().flatten() {
                    entries.extend([(2 * k + r, 3 * b + r), (2 * k + r, 3 * b + 2)]);
                }
            }
        }
        let mut jac = SparseMatrix::from_pattern(2 * joints, 3 * nb, &entries);
        for x in &mut jac.values {
            *x = noise(seed);
        }
        jac
    }

    /// [a; λ] of the KKT system by the full-pivot LU of the whole matrix.
    fn dense_solution(d: &[f64], jac: &SparseMatrix, b: &[f64]) -> Vec<f64> {
        let (n, m) = (d.len(), jac.nrows());
        let mut lu = FullPivLu::new(n + m, n + m);
        for (j, &dj) in d.iter().enumerate() {
            lu.set(j, j, dj);
        }
        for i in 0..m {
            let (cols, vals) = jac.row(i);
            for (&j, &v) in cols.iter().zip(vals) {
                lu.set(n + i, j, v);
                lu.set(j, n + i, v);
            }
        }
        lu.factor(1e-13);
        assert!(lu.is_regular());
        let mut x = b.to_vec();
        let mut work = vec![0.0; n + m];
        lu.solve_in_place(&mut x, &mut work);
        x
    }

    /// The reduced path (orders with the size as a constant and the
    /// general one, the cached scatter of Φ_q reused with new values and
    /// rebuilt for a new pattern) agrees with the full KKT LU to 1e-12:
    /// S1's shape (two point masses without rotational inertia, n = 6,
    /// m = 4), a closed loop of point masses (four-bar: n = 9, m = 8) and
    /// larger chains past the constant sizes.
    #[test]
    fn reduced_path_agrees_with_the_full_kkt_lu() {
        let mut seed = 7;
        for (nb, closed) in [(2, false), (3, true), (4, true), (5, false), (6, true)] {
            let n = 3 * nb;
            // masses > 0 on x, y; rotational inertia 0 on every other body
            // (on both of S1's)
            let d: Vec<f64> = (0..n)
                .map(|j| match (j % 3, j / 3) {
                    (2, b) if b % 2 == 0 || nb == 2 => 0.0,
                    (2, _) => 0.5 + noise(&mut seed).abs(),
                    _ => 1.0 + noise(&mut seed).abs(),
                })
                .collect();
            let mut red = ReducedKkt::new(n, jacobian(nb, closed, &mut seed).nrows());
            assert!(red.set_mass(&d));
            for round in 0..3 {
                // new values in the same pattern, then another pattern
                // (every entry stored)
                let mut jac = jacobian(nb, closed, &mut seed);
                if round == 2 {
                    let full = jac.to_dense();
                    jac = SparseMatrix::dense(full.nrows(), full.ncols());
                    jac.load_dense(&full);
                }
                let m = jac.nrows();
                let b: Vec<f64> = (0..n + m).map(|_| noise(&mut seed)).collect();
                assert!(red.factor(&jac), "{nb} bodies, round {round}");
                let mut x = b.clone();
                let mut work = vec![0.0; 2 * (n + m)];
                red.solve(&mut x, &mut work);
                let want = dense_solution(&d, &jac, &b);
                let scale = want.iter().fold(0.0_f64, |s, v| s.max(v.abs()));
                let err = x
                    .iter()
                    .zip(&want)
                    .fold(0.0_f64, |s, (u, v)| s.max((u - v).abs()));
                assert!(
                    err <= 1e-12 * scale,
                    "{nb} bodies, round {round}: {err:e} (scale {scale:e})"
                );
            }
        }
    }

    /// A Φ_q with a column of zeros on a massless coordinate leaves the
    /// reduced matrix singular: `factor` says so (the caller then takes the
    /// full KKT LU, which names the coordinate).
    #[test]
    fn singular_reduced_matrix_is_refused() {
        let jac = SparseMatrix::from_pattern(1, 3, &[(0, 0)]);
        let mut jac = jac;
        jac.values[0] = 1.0;
        let mut red = ReducedKkt::new(3, 1);
        assert!(red.set_mass(&[1.0, 1.0, 0.0]));
        assert!(!red.factor(&jac));
    }
}
