//! The sparse saddle-point (KKT) matrix of a large system and a plain
//! Arnoldi iteration on an operator given as a closure: what the static
//! equilibrium ([`crate::static_equilibrium()`]) and the modes
//! ([`crate::modes`]) of a model of thousands of coordinates use in place
//! of dense n × n matrices (issue 31).
//!
//! The matrix
//!
//! ```text
//! [ A     Φ_qᵀ ]      A = any combination of K, C, M on the system's
//! [ Φ_q   −δ I ]          tangent pattern (Sparsity::tangent_entries)
//! ```
//!
//! is assembled straight into the fixed pattern of a sparse LU
//! ([`jounce_sparse::sparse_lu`], faer's simplicial LU with a COLAMD
//! ordering computed once); δ = 0 unless the factorisation fails
//! (redundant rows), when a tiny δ regularises it. Everything here is
//! O(nnz) in storage; nothing is n × n.

use nalgebra::{Complex, DMatrix, DVector};

use jounce_mechanics::{MechanicalSystem, Quantities, SparseMatrix, SystemQueries};
use jounce_sparse::{FixedPattern, SparseLuOf};

use crate::step_stability::eigenvalues_of;

/// The sparse tangent quantities of a system at one state, and the LU of
/// its KKT matrix.
pub(crate) struct SparseKkt {
    /// Coordinates n_v.
    pub n: usize,
    /// Constraint rows m.
    pub m: usize,
    /// Tangent pattern (sorted, diagonal included).
    pub pattern: Vec<(usize, usize)>,
    /// M on `pattern` (constant).
    pub mass: Vec<f64>,
    /// K = ∂(Φ_qᵀλ)/∂q − ∂Q/∂q on `pattern`.
    pub k: Vec<f64>,
    /// C = −∂Q/∂v on `pattern`.
    pub c: Vec<f64>,
    /// Φ_q (m × n_v) in the system's pattern.
    pub jac: SparseMatrix,
    lu: SparseLuOf<f64>,
    /// LU slot of each `pattern` entry.
    a_slots: Vec<usize>,
    /// LU slots of (n + r, j) and (j, n + r) for each entry of `jac`, in
    /// the order of its rows.
    j_slots: Vec<(usize, usize)>,
}

impl SparseKkt {
    /// The sparse structure of `sys` at q (len n_q), or `None` when the
    /// system has no sparsity pattern or a configuration-dependent M (the
    /// dense path is then the only one). Every matrix here lives in
    /// velocity space (n_v columns), also where n_q ≠ n_v (unit
    /// quaternions): Φ_q is then the Jacobian along q ⊞ δ, as the
    /// system's [`jounce_mechanics::Sparsity`] fills it.
    pub fn new<S: MechanicalSystem + ?Sized>(sys: &S, t: f64, q: &[f64]) -> Option<SparseKkt> {
        if !sys.mass_matrix_is_constant() {
            return None;
        }
        let (n, m) = (sys.nv(), sys.nc());
        let jpat = sys.constraint_jacobian_pattern()?;
        let mut pattern = sys.tangent_pattern()?;
        pattern.extend((0..n).map(|i| (i, i)));
        pattern.sort_unstable();
        pattern.dedup();
        if pattern.iter().any(|&(i, j)| i >= n || j >= n)
            || jpat.iter().any(|&(r, j)| r >= m || j >= n)
        {
            return None;
        }
        let jac = SparseMatrix::from_pattern(m, n, &jpat);
        let mut entries = pattern.clone();
        for r in 0..m {
            let (cols, _) = jac.row(r);
            for &j in cols {
                entries.push((n + r, j));
                entries.push((j, n + r));
            }
        }
        let lu = SparseLuOf::<f64>::new(n + m, &entries);
        let a_slots = pattern
            .iter()
            .map(|&(i, j)| lu.slot(i, j))
            .collect::<Option<Vec<_>>>()?;
        let mut j_slots = Vec::with_capacity(jac.nnz());
        for r in 0..m {
            let (cols, _) = jac.row(r);
            for &j in cols {
                j_slots.push((lu.slot(n + r, j)?, lu.slot(j, n + r)?));
            }
        }
        let mut data = sys.data();
        sys.evaluate(&mut data, t, q, &vec![0.0; n], Quantities::MASS_MATRIX);
        let mass: Vec<f64> = pattern.iter().map(|&(i, j)| data.mass(i, j)).collect();
        let len = pattern.len();
        Some(SparseKkt {
            n,
            m,
            pattern,
            mass,
            k: vec![0.0; len],
            c: vec![0.0; len],
            jac,
            lu,
            a_slots,
            j_slots,
        })
    }

    /// Φ_q at q into `self.jac`.
    pub fn fill_jacobian<S: MechanicalSystem + ?Sized>(&mut self, sys: &S, t: f64, q: &[f64]) {
        sys.sparse_constraint_jacobian(t, q, &mut self.jac);
    }

    /// Φ_q, K and C at (t, q, v, λ); false when the system cannot fill
    /// its sparse tangent there.
    pub fn fill_tangent<S: MechanicalSystem + ?Sized>(
        &mut self,
        sys: &S,
        t: f64,
        q: &[f64],
        v: &[f64],
        lambda: &[f64],
    ) -> bool {
        self.fill_jacobian(sys, t, q);
        sys.sparse_tangent(t, q, v, lambda, &self.pattern, &mut self.k, &mut self.c)
            && self.k.iter().chain(&self.c).all(|x| x.is_finite())
    }

    /// Factor [A Φ_qᵀ; Φ_q 0] with A = `a` (values on `pattern`); on a
    /// singular matrix (redundant rows) once more with −δ I in the lower
    /// block, δ = 1e-12 of the largest entry. False when both fail.
    pub fn factor(&mut self, a: &[f64]) -> bool {
        self.factor_with(|e, _, _| a[e])
    }

    /// [`SparseKkt::factor`] with A_e = `entry(e, M_e, δ_ij)` for entry e
    /// = (i, j) of `pattern` (δ_ij = 1 on the diagonal): no allocation.
    pub fn factor_with(&mut self, entry: impl Fn(usize, f64, f64) -> f64) -> bool {
        let mut scale = self.jac_values().fold(0.0_f64, |s, x| s.max(x.abs()));
        for (e, &(i, j)) in self.pattern.iter().enumerate() {
            let d = if i == j { 1.0 } else { 0.0 };
            scale = scale.max(entry(e, self.mass[e], d).abs());
        }
        if !scale.is_finite() {
            return false;
        }
        for delta in [0.0, 1e-12 * scale.max(f64::MIN_POSITIVE)] {
            self.load(&entry, delta);
            if self.lu.factor() {
                return true;
            }
        }
        false
    }

    fn jac_values(&self) -> impl Iterator<Item = &f64> {
        (0..self.m).flat_map(|r| self.jac.row(r).1.iter())
    }

    fn load(&mut self, entry: &impl Fn(usize, f64, f64) -> f64, delta: f64) {
        let n = self.n;
        let vals = self.lu.values_mut();
        vals.fill(0.0);
        for (e, (&s, &(i, j))) in self.a_slots.iter().zip(&self.pattern).enumerate() {
            vals[s] += entry(e, self.mass[e], if i == j { 1.0 } else { 0.0 });
        }
        let mut e = 0;
        for r in 0..self.m {
            let (_, jv) = self.jac.row(r);
            for &x in jv {
                let (s1, s2) = self.j_slots[e];
                vals[s1] += x;
                vals[s2] += x;
                e += 1;
            }
        }
        if delta > 0.0 {
            for r in 0..self.m {
                if let Some(s) = self.lu.slot(n + r, n + r) {
                    self.lu.values_mut()[s] -= delta;
                }
            }
        }
    }

    /// Solve with the last factorisation in place (len n + m).
    pub fn solve(&mut self, b: &mut [f64]) {
        self.lu.solve_in_place(b);
    }

    /// y += A x for A given by its values on `pattern` (len n each).
    pub fn mul_add(&self, a: &[f64], x: &[f64], y: &mut [f64]) {
        for (&(i, j), &v) in self.pattern.iter().zip(a) {
            y[i] += v * x[j];
        }
    }

    /// Largest |M_ij|.
    pub fn mass_max(&self) -> f64 {
        self.mass.iter().fold(0.0_f64, |s, x| s.max(x.abs()))
    }
}

/// A Ritz pair of [`arnoldi`].
pub(crate) struct Ritz {
    /// The Ritz value θ.
    pub value: Complex<f64>,
    /// The Ritz vector (unit 2-norm).
    pub vector: Vec<Complex<f64>>,
    /// Its residual estimate ‖T x − θ x‖ = h_{j+1,j} |e_jᵀ y|.
    pub residual: f64,
}

/// The `nev` Ritz pairs of largest |θ| of the operator `op` (y = T x; false
/// on failure) on R^dim, from `start` mapped `warmup` times by T first
/// (into T's range: the constrained subspace, so that no spurious θ = 0
/// of the unconstrained directions enters the basis), by the Arnoldi process with full (twice
/// repeated) Gram–Schmidt, the Krylov basis grown until those pairs have
/// residual ≤ tol |θ| or `max_steps` is reached (Saad, *Numerical Methods
/// for Large Eigenvalue Problems*, 2nd ed., 2011, Algorithm 6.2 and
/// Section 6.2 for the residual estimate). `None` when the operator
/// fails or the small eigenproblem does not converge. Storage:
/// `max_steps` vectors of length `dim` and a `max_steps`² Hessenberg
/// matrix.
pub(crate) fn arnoldi(
    dim: usize,
    start: &[f64],
    warmup: usize,
    op: &mut dyn FnMut(&[f64], &mut [f64]) -> bool,
    nev: usize,
    max_steps: usize,
    tol: f64,
) -> Option<Vec<Ritz>> {
    let max_steps = max_steps.min(dim).max(1);
    let mut basis: Vec<Vec<f64>> = Vec::with_capacity(max_steps + 1);
    let mut start = start.to_vec();
    let mut w = vec![0.0; dim];
    for _ in 0..warmup {
        if !op(&start, &mut w) {
            return None;
        }
        let nrm = w.iter().map(|x| x * x).sum::<f64>().sqrt();
        if !nrm.is_finite() {
            return None;
        }
        if nrm == 0.0 {
            // T annihilates the start (a nilpotent linearisation, all
            // eigenvalues zero): the basis starts where it is
            break;
        }
        for (s, x) in start.iter_mut().zip(&w) {
            *s = x / nrm;
        }
    }
    let norm0 = start.iter().map(|x| x * x).sum::<f64>().sqrt();
    if !(norm0 > 0.0 && norm0.is_finite()) {
        return None;
    }
    basis.push(start.iter().map(|x| x / norm0).collect());
    let mut h = DMatrix::<f64>::zeros(max_steps + 1, max_steps);
    let mut steps = 0;
    // the convergence test costs O(j³) per wanted pair: it is made at
    // steps growing geometrically, so that its total stays a fraction of
    // the last one's
    let mut next_check = (nev + 2).max(10);
    loop {
        let j = steps;
        if !op(&basis[j], &mut w) || w.iter().any(|x| !x.is_finite()) {
            return None;
        }
        for _ in 0..2 {
            for (i, v) in basis.iter().enumerate() {
                let d: f64 = v.iter().zip(&w).map(|(a, b)| a * b).sum();
                h[(i, j)] += d;
                for (wk, vk) in w.iter_mut().zip(v) {
                    *wk -= d * vk;
                }
            }
        }
        let beta = w.iter().map(|x| x * x).sum::<f64>().sqrt();
        h[(j + 1, j)] = beta;
        steps += 1;
        let hnorm = h.view((0, 0), (steps, steps)).amax();
        let breakdown = beta <= 1e-14 * hnorm.max(f64::MIN_POSITIVE);
        let last = breakdown || steps == max_steps;
        if last || steps >= next_check {
            next_check = (steps + 10).max(steps * 5 / 4);
            let ritz = ritz_pairs(&h, &basis, steps, nev, if breakdown { 0.0 } else { beta })?;
            let done = ritz.len() >= nev.min(steps)
                && ritz.iter().all(|r| r.residual <= tol * r.value.norm());
            if done || last {
                return Some(ritz);
            }
        }
        basis.push(w.iter().map(|x| x / beta).collect());
    }
}

/// The `nev` Ritz pairs of largest |θ| of the j-step factorisation.
fn ritz_pairs(
    h: &DMatrix<f64>,
    basis: &[Vec<f64>],
    j: usize,
    nev: usize,
    beta: f64,
) -> Option<Vec<Ritz>> {
    let hj = h.view((0, 0), (j, j)).into_owned();
    let mut ev = eigenvalues_of(hj.clone())?;
    ev.sort_by(|a, b| b.norm().total_cmp(&a.norm()));
    ev.truncate(nev);
    let scale = hj.amax().max(f64::MIN_POSITIVE);
    let dim = basis[0].len();
    let mut out = Vec::with_capacity(ev.len());
    let mut a = DMatrix::<Complex<f64>>::zeros(j, j);
    for theta in ev {
        // inverse iteration on H − θI for the small eigenvector y, each
        // solve O(j²) on the Hessenberg form
        let shift = theta + Complex::new(1e-13 * scale, 1e-13 * scale);
        let mut y = DVector::from_element(j, Complex::new(1.0, 0.0));
        for _ in 0..3 {
            let mut x = y.clone();
            if !hessenberg_solve(&hj, shift, &mut a, &mut x) {
                break;
            }
            let nrm = x.norm();
            if !(nrm > 0.0 && nrm.is_finite()) {
                break;
            }
            y = x / Complex::new(nrm, 0.0);
        }
        let residual = beta * y[j - 1].norm();
        let mut vector = vec![Complex::new(0.0, 0.0); dim];
        for (k, v) in basis.iter().take(j).enumerate() {
            let c = y[k];
            for (x, &b) in vector.iter_mut().zip(v) {
                *x += c * b;
            }
        }
        out.push(Ritz {
            value: theta,
            vector,
            residual,
        });
    }
    Some(out)
}

/// Solve (H − s I) x = b in place for an upper Hessenberg H (j × j) by
/// Gaussian elimination with pivoting between adjacent rows, O(j²);
/// `a` is j × j scratch. False on a zero pivot.
fn hessenberg_solve(
    h: &DMatrix<f64>,
    s: Complex<f64>,
    a: &mut DMatrix<Complex<f64>>,
    b: &mut DVector<Complex<f64>>,
) -> bool {
    let j = h.nrows();
    for c in 0..j {
        for r in 0..j {
            a[(r, c)] =
                Complex::new(h[(r, c)], 0.0) - if r == c { s } else { Complex::new(0.0, 0.0) };
        }
    }
    for k in 0..j.saturating_sub(1) {
        if a[(k + 1, k)].norm() > a[(k, k)].norm() {
            for c in k..j {
                let t = a[(k, c)];
                a[(k, c)] = a[(k + 1, c)];
                a[(k + 1, c)] = t;
            }
            b.swap_rows(k, k + 1);
        }
        let p = a[(k, k)];
        if p.norm() == 0.0 {
            return false;
        }
        let l = a[(k + 1, k)] / p;
        if l.norm() != 0.0 {
            for c in k..j {
                let t = a[(k, c)];
                a[(k + 1, c)] -= l * t;
            }
            let t = b[k];
            b[k + 1] -= l * t;
        }
    }
    for k in (0..j).rev() {
        let mut acc = b[k];
        for c in k + 1..j {
            acc -= a[(k, c)] * b[c];
        }
        let p = a[(k, k)];
        if p.norm() == 0.0 {
            return false;
        }
        b[k] = acc / p;
    }
    b.iter().all(|x| x.re.is_finite() && x.im.is_finite())
}
