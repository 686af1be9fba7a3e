//! A constrained second-order problem as an implicit DAE F(t, y, y') = 0,
//! in one of two forms.
//!
//! **Index 3** (y = [q; v; λ], n + n + m):
//!
//! ```text
//! F = [ q' − v                       ]
//!     [ M(q) v' + Φ_qᵀλ − Q(t, q, v) ]
//!     [ Φ(t, q)                      ]
//! ```
//!
//! (Hairer & Wanner, *Solving ODEs II*, VII.1, eq. 1.46; Brenan, Campbell
//! & Petzold 6.2). q has index 1, v index 2, λ index 3.
//!
//! **Stabilised index 2** of Gear, Gupta & Leimkuhler (J. Comput. Appl.
//! Math. 12 (1985) 77–90), y = [q; v; λ; μ], n + n + 2m:
//!
//! ```text
//! F = [ q' − v + Φ_qᵀμ               ]
//!     [ M(q) v' + Φ_qᵀλ − Q(t, q, v) ]
//!     [ Φ(t, q)                      ]
//!     [ Φ_q v − ν(t, q)              ]     ν = −Φ_t
//! ```
//!
//! Both the position and the velocity constraints hold; the extra
//! multiplier μ is zero on the exact solution and O(h^k) numerically.
//! q, v have index 1, λ, μ index 2 (Hairer & Wanner VII.1, "GGL
//! formulation").
//!
//! The iteration matrix G = ∂F/∂y + c ∂F/∂y' is assembled from the
//! problem's exact blocks: K = ∂r/∂q and C = ∂r/∂v of the dynamic residual
//! ([`ConstrainedSecondOrderProblem::tangent`], evaluated at a = v'),
//! Φ_q, M, ∂(Φ_qᵀμ)/∂q and ∂(Φ_q v + Φ_t)/∂q:
//!
//! ```text
//! index 3:  [ cI   −I       0    ]      GGL:  [ cI + ∂(Φ_qᵀμ)/∂q  −I      0     Φ_qᵀ ]
//!           [ K    cM + C   Φ_qᵀ ]            [ K                 cM + C  Φ_qᵀ  0    ]
//!           [ Φ_q  0        0    ]            [ Φ_q               0       0     0    ]
//!                                             [ ∂(Φ_q v + Φ_t)/∂q  Φ_q     0     0    ]
//! ```
//!
//! **Sparse.** When the problem declares the sparsity of its blocks
//! ([`ConstrainedSecondOrderProblem::sparsity`]: one pattern for M, C, K,
//! one for Φ_q), so does the DAE ([`DaeProblem::sparsity`]): the entries
//! of the block matrices above, in a fixed order, with ∂(Φ_qᵀμ)/∂q taken
//! in K's pattern (it is the multiplier part of K) and (Φ_q v)_q + Φ_qt in
//! Φ_q's (a row of Φ depends only on the coordinates of its pattern). G is
//! then never formed densely, and the residual comes from the problem's
//! own O(nnz) evaluation ([`ConstrainedSecondOrderProblem::residual`])
//! when it has one.
//!
//! **Positions that are not velocities** (n_q > n_v: unit quaternions of
//! spatial bodies). The first rows become the kinematic map
//! ([`ConstrainedSecondOrderProblem::position_derivative`]),
//!
//! ```text
//! index 3:  q' − T(q) v = 0                (n_q rows)
//! GGL:      q' − T(q) (v − Φ_qᵀμ) = 0
//! ```
//!
//! with Φ_q the velocity Jacobian (Φ' = Φ_q v + Φ_t, so that
//! d/dt Φ = Φ_q (v − Φ_qᵀμ) + Φ_t and μ = 0 on the exact solution as
//! before), and y = [q (n_q); v (n_v); λ; (μ)]. The iteration matrix
//! is then formed by differences of the residual
//! ([`crate::dae::fd_iteration_matrix`]: the exact blocks above are
//! derivatives along velocity increments, not along the n_q entries of
//! q) and no sparsity is declared. q' = T(q) v keeps a unit quaternion
//! unit exactly, a method only to its error: after each accepted step
//! ([`DaeProblem::after_step`], called by radau5) q is put back on its
//! manifold, q ← q ⊕ 0 ([`ConstrainedSecondOrderProblem::integrate_positions`]
//! with a zero increment: the quaternions normalised).

use nalgebra::DMatrix;

use crate::constrained::{ConstrainedSecondOrderProblem, IterationSparsity};
use crate::dae::DaeProblem;
use crate::error::{EvalError, IntegrateError};

/// Which DAE the constrained problem is written as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DaeForm {
    /// The index-3 equations, y = [q; v; λ].
    Index3,
    /// The stabilised index-2 form of Gear, Gupta & Leimkuhler,
    /// y = [q; v; λ; μ].
    Ggl,
}

/// A constrained second-order problem as a [`DaeProblem`] (module
/// documentation). Owns the problem and every buffer; evaluations do not
/// allocate.
pub struct ConstrainedDae<P: ConstrainedSecondOrderProblem> {
    /// The wrapped problem.
    pub problem: P,
    form: DaeForm,
    /// n_q (≥ n_v = `n`).
    nq: usize,
    n: usize,
    m: usize,
    index: Vec<u8>,
    differential: Vec<bool>,
    mass: DMatrix<f64>,
    jac: DMatrix<f64>,
    k: DMatrix<f64>,
    c: DMatrix<f64>,
    cfj: DMatrix<f64>,
    vjac: DMatrix<f64>,
    f: Vec<f64>,
    phi: Vec<f64>,
    nu: Vec<f64>,
    /// n_q ≠ n_v: v − Φ_qᵀμ and the zero increment (len n_v), T(q)(·)
    /// and q ⊕ 0 (len n_q).
    w: Vec<f64>,
    zero: Vec<f64>,
    qdot: Vec<f64>,
    projected: Vec<f64>,
    /// The problem's block sparsity, once [`DaeProblem::sparsity`] has
    /// declared a pattern.
    pattern: Option<IterationSparsity>,
    /// The index-3 blocks on that pattern, while the problem evaluates
    /// them so (`None`: the dense blocks above).
    sparse: Option<SparseBlocks>,
    /// GGL: Φ_q sparse for the residual's Φ_qᵀμ and Φ_q v (its iteration
    /// matrix keeps dense blocks); `None` without a declared pattern or
    /// once the problem has no sparse Φ_q.
    ggl_jac: Option<SparseConstraintJacobian>,
}

/// K, C, M on the tangent pattern and Φ_q on its own, as the problem
/// evaluates them ([`ConstrainedSecondOrderProblem::sparse_tangent`],
/// [`ConstrainedSecondOrderProblem::sparse_mass_matrix`],
/// [`ConstrainedSecondOrderProblem::sparse_constraint_jacobian`]): the
/// index-3 iteration matrix without any n × n block (issue 32).
struct SparseBlocks {
    /// The tangent entries sorted, once each, with the diagonal.
    entries: Vec<(usize, usize)>,
    /// Position in `entries` of each entry of the declared tangent pattern.
    tangent_at: Vec<usize>,
    /// K, C, M at `entries`.
    k: Vec<f64>,
    c: Vec<f64>,
    mass: Vec<f64>,
    /// Φ_q.
    jac: SparseConstraintJacobian,
    /// Whether the values are those of the last evaluation.
    current: bool,
}

/// Φ_q as the problem evaluates it sparse
/// ([`ConstrainedSecondOrderProblem::sparse_constraint_jacobian`]: rows
/// in turn, columns ascending, each entry once) and where each entry of
/// the declared pattern sits in those values.
struct SparseConstraintJacobian {
    /// Position in `values` of each entry of the declared Φ_q pattern.
    at: Vec<usize>,
    values: Vec<f64>,
}

impl SparseConstraintJacobian {
    fn new(pattern: &IterationSparsity) -> Self {
        let mut rows: Vec<(usize, usize)> = pattern.constraint_jacobian.clone();
        rows.sort_unstable();
        rows.dedup();
        let at = pattern
            .constraint_jacobian
            .iter()
            .map(|e| rows.binary_search(e).unwrap_or(0))
            .collect();
        Self {
            at,
            values: vec![0.0; rows.len()],
        }
    }
}

impl SparseBlocks {
    fn new(pattern: &IterationSparsity, n: usize) -> Self {
        let mut entries: Vec<(usize, usize)> = pattern.tangent.clone();
        entries.extend((0..n).map(|i| (i, i)));
        entries.sort_unstable();
        entries.dedup();
        let tangent_at = pattern
            .tangent
            .iter()
            .map(|e| entries.binary_search(e).unwrap_or(0))
            .collect();
        let len = entries.len();
        Self {
            entries,
            tangent_at,
            k: vec![0.0; len],
            c: vec![0.0; len],
            mass: vec![0.0; len],
            jac: SparseConstraintJacobian::new(pattern),
            current: false,
        }
    }
}

impl<P: ConstrainedSecondOrderProblem> ConstrainedDae<P> {
    /// The DAE of `problem` in `form`; every buffer is allocated here.
    ///
    /// # Errors
    /// [`IntegrateError::Unsupported`] when there are fewer positions
    /// than velocities.
    pub fn new(problem: P, form: DaeForm) -> Result<Self, IntegrateError> {
        let (nq, n, m) = (
            problem.n_positions(),
            problem.n_velocities(),
            problem.n_constraints(),
        );
        if nq < n {
            return Err(IntegrateError::Unsupported {
                method: "dae".into(),
                detail: format!(
                    "the DAE form needs at least as many positions as velocities; \
                     this problem has {nq} positions and {n} velocities"
                ),
            });
        }
        let (index, differential): (Vec<u8>, Vec<bool>) = match form {
            DaeForm::Index3 => (
                [vec![1; nq], vec![2; n], vec![3; m]].concat(),
                [vec![true; nq + n], vec![false; m]].concat(),
            ),
            DaeForm::Ggl => (
                [vec![1; nq + n], vec![2; 2 * m]].concat(),
                [vec![true; nq + n], vec![false; 2 * m]].concat(),
            ),
        };
        let other = if nq == n { 0 } else { n };
        let mut dae = Self {
            problem,
            form,
            nq,
            n,
            m,
            index,
            differential,
            // the dense blocks on first use only (`dense_blocks`): the
            // sparse path never forms them
            mass: DMatrix::zeros(0, 0),
            jac: DMatrix::zeros(0, 0),
            k: DMatrix::zeros(0, 0),
            c: DMatrix::zeros(0, 0),
            cfj: DMatrix::zeros(0, 0),
            vjac: DMatrix::zeros(0, 0),
            f: vec![0.0; n],
            phi: vec![0.0; m],
            nu: vec![0.0; m],
            w: vec![0.0; other],
            zero: vec![0.0; other],
            qdot: vec![0.0; if nq == n { 0 } else { nq }],
            projected: vec![0.0; if nq == n { 0 } else { nq }],
            pattern: None,
            sparse: None,
            ggl_jac: None,
        };
        // the pattern primed here, not when an integrator first asks for
        // it: every user of the residual (a bench, an analysis, a method
        // with a dense linear solver) takes the problem's O(nnz) residual
        dae.prime_pattern();
        Ok(dae)
    }

    /// The problem's declared block pattern and, for index 3, the sparse
    /// blocks on it (none when positions are not velocities: G by
    /// differences, module documentation). Allocates no dense block.
    /// Called by [`ConstrainedDae::new`]; call it again after a change
    /// of the problem that changes its [`ConstrainedSecondOrderProblem::sparsity`]
    /// (a linear solver chosen after the build).
    pub fn prime_pattern(&mut self) {
        if self.nq != self.n {
            return;
        }
        self.pattern = self.problem.sparsity();
        self.sparse = match (&self.pattern, self.form) {
            (Some(pattern), DaeForm::Index3) => Some(SparseBlocks::new(pattern, self.n)),
            _ => None,
        };
        self.ggl_jac = match (&self.pattern, self.form) {
            (Some(pattern), DaeForm::Ggl) if self.m > 0 => {
                Some(SparseConstraintJacobian::new(pattern))
            }
            _ => None,
        };
    }

    /// The dense blocks sized (allocates on first use: the dense path,
    /// or a problem without sparse evaluations).
    fn dense_blocks(&mut self) {
        let (n, m) = (self.n, self.m);
        if self.mass.nrows() != n || self.jac.nrows() != m || self.mass.ncols() != n {
            self.mass = DMatrix::zeros(n, n);
            self.jac = DMatrix::zeros(m, n);
            self.k = DMatrix::zeros(n, n);
            self.c = DMatrix::zeros(n, n);
            self.cfj = DMatrix::zeros(n, n);
            self.vjac = DMatrix::zeros(m, n);
        }
    }

    /// K, C, M and Φ_q at (t, y, y') into the sparse blocks; `Ok(false)`
    /// (and the sparse blocks dropped for good) where the problem lacks
    /// one of the sparse evaluations.
    fn sparse_blocks(&mut self, t: f64, y: &[f64], yp: &[f64]) -> Result<bool, EvalError> {
        let (n, m) = (self.n, self.m);
        let Some(sb) = self.sparse.as_mut() else {
            return Ok(false);
        };
        let q = &y[..n];
        let v = &y[n..2 * n];
        let lambda = &y[2 * n..2 * n + m];
        let a = &yp[n..2 * n];
        let p = &mut self.problem;
        sb.current = false;
        let ok = p.sparse_tangent(t, q, v, a, lambda, &sb.entries, &mut sb.k, &mut sb.c)?
            && p.sparse_mass_matrix(t, q, &sb.entries, &mut sb.mass)?
            && (m == 0 || p.sparse_constraint_jacobian(t, q, &mut sb.jac.values)?);
        if !ok {
            self.sparse = None;
            return Ok(false);
        }
        sb.current = true;
        Ok(true)
    }

    /// M at (t, q) into the sparse blocks; `Ok(false)` as for
    /// [`ConstrainedDae::sparse_blocks`].
    fn sparse_mass(&mut self, t: f64, y: &[f64]) -> Result<bool, EvalError> {
        let Some(sb) = self.sparse.as_mut() else {
            return Ok(false);
        };
        sb.current = false;
        if !self
            .problem
            .sparse_mass_matrix(t, &y[..self.n], &sb.entries, &mut sb.mass)?
        {
            self.sparse = None;
            return Ok(false);
        }
        sb.current = true;
        Ok(true)
    }

    /// Every entry of G in the order of [`DaeProblem::sparsity`] with its
    /// value from the blocks in the buffers: of G = ∂F/∂y + c ∂F/∂y', or
    /// of ∂F/∂y' when `derivative` (module documentation; the two share
    /// one pattern and one order).
    fn visit_entries(
        &self,
        pattern: &IterationSparsity,
        c: f64,
        derivative: bool,
        mut emit: impl FnMut(usize, usize, f64),
    ) {
        let (n, m) = (self.n, self.m);
        // ∂F/∂y' has entries in the q' and M v' blocks only
        let d = |x: f64| if derivative { 0.0 } else { x };
        for i in 0..n {
            emit(i, i, if derivative { 1.0 } else { c });
            emit(i, n + i, d(-1.0));
        }
        if let Some(sb) = self.sparse.as_ref().filter(|sb| sb.current) {
            for (&(i, j), &e) in pattern.tangent.iter().zip(&sb.tangent_at) {
                emit(n + i, j, d(sb.k[e]));
                let mc = if derivative {
                    sb.mass[e]
                } else {
                    c * sb.mass[e] + sb.c[e]
                };
                emit(n + i, n + j, mc);
            }
            for (&(k, j), &e) in pattern.constraint_jacobian.iter().zip(&sb.jac.at) {
                let a = d(sb.jac.values[e]);
                emit(n + j, 2 * n + k, a);
                emit(2 * n + k, j, a);
            }
            return;
        }
        for &(i, j) in &pattern.tangent {
            emit(n + i, j, d(self.k[(i, j)]));
            let mc = if derivative {
                self.mass[(i, j)]
            } else {
                c * self.mass[(i, j)] + self.c[(i, j)]
            };
            emit(n + i, n + j, mc);
        }
        for &(k, j) in &pattern.constraint_jacobian {
            let a = d(self.jac[(k, j)]);
            emit(n + j, 2 * n + k, a);
            emit(2 * n + k, j, a);
        }
        if self.form == DaeForm::Ggl && m > 0 {
            for &(i, j) in &pattern.tangent {
                emit(i, j, d(self.cfj[(i, j)]));
            }
            for &(k, j) in &pattern.constraint_jacobian {
                let a = d(self.jac[(k, j)]);
                emit(j, 2 * n + m + k, a);
                emit(2 * n + m + k, j, d(self.vjac[(k, j)]));
                emit(2 * n + m + k, n + j, a);
            }
        }
    }

    /// The blocks M, K, C, Φ_q (and for GGL ∂(Φ_qᵀμ)/∂q, (Φ_q v)_q + Φ_qt)
    /// at (t, y, y') into the buffers.
    fn blocks(&mut self, t: f64, y: &[f64], yp: &[f64]) -> Result<(), EvalError> {
        if self.sparse_blocks(t, y, yp)? {
            return Ok(());
        }
        self.dense_blocks();
        let (n, m) = (self.n, self.m);
        let q = &y[..n];
        let v = &y[n..2 * n];
        let lambda = &y[2 * n..2 * n + m];
        let a = &yp[n..2 * n];
        let p = &mut self.problem;
        p.mass_matrix(t, q, &mut self.mass)?;
        p.tangent(t, q, v, a, lambda, &mut self.k, &mut self.c)?;
        if m > 0 {
            p.constraint_jacobian(t, q, &mut self.jac)?;
        }
        if self.form == DaeForm::Ggl && m > 0 {
            let mu = &y[2 * n + m..];
            p.constraint_force_jacobian(t, q, mu, &mut self.cfj)?;
            p.velocity_constraint_jacobian(t, q, v, &mut self.vjac)?;
        }
        Ok(())
    }

    /// The declared pattern, set up on first use.
    fn declared(&mut self) -> Result<IterationSparsity, EvalError> {
        if self.pattern.is_none() {
            self.sparsity();
        }
        self.pattern.take().ok_or_else(|| {
            EvalError::Other(
                "sparse iteration matrix of a constrained problem that declares no sparsity".into(),
            )
        })
    }

    /// The form.
    pub fn form(&self) -> DaeForm {
        self.form
    }

    /// Number of velocity coordinates n.
    pub fn n_velocities(&self) -> usize {
        self.n
    }

    /// Number of position coordinates n_q (≥ n).
    pub fn n_positions(&self) -> usize {
        self.nq
    }

    /// F of the positions that are not velocities (module documentation):
    /// r[..n_q] = q' − T(q)(v − Φ_qᵀμ) with Φ_q in `jac` (GGL) and the
    /// rest of r as for q' = v.
    fn kinematic_rows(&mut self, y: &[f64], yp: &[f64], r: &mut [f64]) {
        let (nq, n, m) = (self.nq, self.n, self.m);
        let v = &y[nq..nq + n];
        self.w.copy_from_slice(v);
        if self.form == DaeForm::Ggl && m > 0 {
            let mu = &y[nq + n + m..];
            for i in 0..n {
                let mut s = 0.0;
                for k in 0..m {
                    s += self.jac[(k, i)] * mu[k];
                }
                self.w[i] -= s;
            }
        }
        self.problem
            .position_derivative(&y[..nq], &self.w, &mut self.qdot);
        for i in 0..nq {
            r[i] = yp[i] - self.qdot[i];
        }
    }

    /// Number of constraints m.
    pub fn n_constraints(&self) -> usize {
        self.m
    }
}

impl<P: ConstrainedSecondOrderProblem> DaeProblem for ConstrainedDae<P> {
    fn dim(&self) -> usize {
        match self.form {
            DaeForm::Index3 => self.nq + self.n + self.m,
            DaeForm::Ggl => self.nq + self.n + 2 * self.m,
        }
    }

    fn residual(&mut self, t: f64, y: &[f64], yp: &[f64], r: &mut [f64]) -> Result<(), EvalError> {
        if self.nq != self.n {
            return self.manifold_residual(t, y, yp, r);
        }
        let (n, m) = (self.n, self.m);
        let q = &y[..n];
        let v = &y[n..2 * n];
        let lambda = &y[2 * n..2 * n + m];
        let (qp, vp) = (&yp[..n], &yp[n..2 * n]);
        // GGL's Φ_qᵀμ and Φ_q v from the sparse Φ_q where the problem
        // evaluates one (else from the dense Φ_q: O(m n))
        let ggl_sparse = match self.ggl_jac.as_mut() {
            Some(gj) if self.pattern.is_some() && self.problem.has_own_residual() => {
                self.problem
                    .sparse_constraint_jacobian(t, q, &mut gj.values)?
            }
            _ => false,
        };
        if !ggl_sparse && self.ggl_jac.is_some() {
            self.ggl_jac = None;
        }
        let dense_ggl = self.form == DaeForm::Ggl && !ggl_sparse;
        if dense_ggl || self.pattern.is_none() || !self.problem.has_own_residual() {
            self.dense_blocks();
        }
        let p = &mut self.problem;
        if self.pattern.is_some() && p.has_own_residual() {
            // O(nnz): M v' + Φ_qᵀλ − Q and Φ in one pass
            for i in 0..n {
                r[i] = qp[i] - v[i];
            }
            let (rv, rest) = r[n..].split_at_mut(n);
            p.residual(t, q, v, vp, lambda, rv, &mut rest[..m])?;
            if self.form == DaeForm::Ggl && m > 0 {
                let mu = &y[2 * n + m..];
                let pattern = self
                    .pattern
                    .as_ref()
                    .map_or(&[][..], |s| &s.constraint_jacobian);
                if !ggl_sparse {
                    p.constraint_jacobian(t, q, &mut self.jac)?;
                }
                p.velocity_rhs(t, q, &mut self.nu)?;
                for k in 0..m {
                    r[2 * n + m + k] = -self.nu[k];
                }
                for (e, &(k, j)) in pattern.iter().enumerate() {
                    let a = match self.ggl_jac.as_ref() {
                        Some(gj) => gj.values[gj.at[e]],
                        None => self.jac[(k, j)],
                    };
                    r[j] += a * mu[k];
                    r[2 * n + m + k] += a * v[j];
                }
            }
            if r.iter().any(|x| !x.is_finite()) {
                return Err(EvalError::NonFinite {
                    what: "DAE residual F(t, y, y')".into(),
                    t,
                });
            }
            return Ok(());
        }
        p.mass_matrix(t, q, &mut self.mass)?;
        p.forces(t, q, v, &mut self.f)?;
        if m > 0 {
            p.constraint_jacobian(t, q, &mut self.jac)?;
            p.constraints(t, q, &mut self.phi)?;
        }
        for i in 0..n {
            r[i] = qp[i] - v[i];
            let mut s = -self.f[i];
            for j in 0..n {
                s += self.mass[(i, j)] * vp[j];
            }
            for k in 0..m {
                s += self.jac[(k, i)] * lambda[k];
            }
            r[n + i] = s;
        }
        r[2 * n..2 * n + m].copy_from_slice(&self.phi);
        if self.form == DaeForm::Ggl && m > 0 {
            let mu = &y[2 * n + m..];
            p.velocity_rhs(t, q, &mut self.nu)?;
            for i in 0..n {
                let mut s = 0.0;
                for k in 0..m {
                    s += self.jac[(k, i)] * mu[k];
                }
                r[i] += s;
            }
            for k in 0..m {
                let mut s = -self.nu[k];
                for j in 0..n {
                    s += self.jac[(k, j)] * v[j];
                }
                r[2 * n + m + k] = s;
            }
        }
        if r.iter().any(|x| !x.is_finite()) {
            return Err(EvalError::NonFinite {
                what: "DAE residual F(t, y, y')".into(),
                t,
            });
        }
        Ok(())
    }

    fn iteration_matrix(
        &mut self,
        t: f64,
        y: &[f64],
        yp: &[f64],
        c: f64,
        g: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        if self.nq != self.n {
            return crate::dae::fd_iteration_matrix(self, t, y, yp, c, g);
        }
        let (n, m) = (self.n, self.m);
        let q = &y[..n];
        let v = &y[n..2 * n];
        let lambda = &y[2 * n..2 * n + m];
        let a = &yp[n..2 * n];
        self.dense_blocks();
        let p = &mut self.problem;
        p.mass_matrix(t, q, &mut self.mass)?;
        p.tangent(t, q, v, a, lambda, &mut self.k, &mut self.c)?;
        if m > 0 {
            p.constraint_jacobian(t, q, &mut self.jac)?;
        }
        g.fill(0.0);
        for i in 0..n {
            g[(i, i)] = c;
            g[(i, n + i)] = -1.0;
            for j in 0..n {
                g[(n + i, j)] = self.k[(i, j)];
                g[(n + i, n + j)] = c * self.mass[(i, j)] + self.c[(i, j)];
            }
            for k in 0..m {
                g[(n + i, 2 * n + k)] = self.jac[(k, i)];
                g[(2 * n + k, i)] = self.jac[(k, i)];
            }
        }
        if self.form == DaeForm::Ggl && m > 0 {
            let mu = &y[2 * n + m..];
            p.constraint_force_jacobian(t, q, mu, &mut self.cfj)?;
            p.velocity_constraint_jacobian(t, q, v, &mut self.vjac)?;
            for i in 0..n {
                for j in 0..n {
                    g[(i, j)] += self.cfj[(i, j)];
                }
                for k in 0..m {
                    g[(i, 2 * n + m + k)] = self.jac[(k, i)];
                    g[(2 * n + m + k, i)] = self.vjac[(k, i)];
                    g[(2 * n + m + k, n + i)] = self.jac[(k, i)];
                }
            }
        }
        Ok(())
    }

    fn derivative_jacobian(
        &mut self,
        t: f64,
        y: &[f64],
        _yp: &[f64],
        out: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        let (nq, n) = (self.nq, self.n);
        self.dense_blocks();
        self.problem.mass_matrix(t, &y[..nq], &mut self.mass)?;
        out.fill(0.0);
        for i in 0..nq {
            out[(i, i)] = 1.0;
        }
        for i in 0..n {
            for j in 0..n {
                out[(nq + i, nq + j)] = self.mass[(i, j)];
            }
        }
        Ok(())
    }

    /// Exact when the problem's tangent is and q' = v (n_q ≠ n_v: by
    /// differences, module documentation).
    fn has_exact_jacobian(&self) -> bool {
        self.nq == self.n && self.problem.has_exact_tangent()
    }

    /// q ← q ⊕ 0 when positions are not velocities (module
    /// documentation); nothing otherwise.
    fn after_step(&mut self, _t: f64, y: &mut [f64]) -> Result<bool, EvalError> {
        if self.nq == self.n {
            return Ok(false);
        }
        let q = &mut y[..self.nq];
        self.problem
            .integrate_positions(q, &self.zero, &mut self.projected);
        if self.projected[..] == q[..] {
            return Ok(false);
        }
        q.copy_from_slice(&self.projected);
        Ok(true)
    }

    /// The block pattern (module documentation) when the problem declares
    /// one.
    fn sparsity(&mut self) -> Option<Vec<(usize, usize)>> {
        if self.nq != self.n {
            // G by differences, dense (module documentation)
            return None;
        }
        // the index-3 blocks sparse (GGL's ∂(Φ_qᵀμ)/∂q and (Φ_q v)_q stay
        // dense)
        self.prime_pattern();
        self.pattern.as_ref()?;
        // the walk over the pattern reads values it does not use: the
        // sparse blocks' zeros, or the dense blocks (GGL)
        match self.sparse.as_mut() {
            Some(sb) => sb.current = true,
            None => self.dense_blocks(),
        }
        let pattern = self.pattern.as_ref()?;
        let mut entries = Vec::new();
        self.visit_entries(pattern, 0.0, false, |i, j, _| entries.push((i, j)));
        if let Some(sb) = self.sparse.as_mut() {
            sb.current = false;
        }
        Some(entries)
    }

    fn sparse_iteration_matrix(
        &mut self,
        t: f64,
        y: &[f64],
        yp: &[f64],
        c: f64,
        values: &mut [f64],
    ) -> Result<(), EvalError> {
        let pattern = self.declared()?;
        let r = self.blocks(t, y, yp);
        if r.is_ok() {
            let mut k = 0;
            self.visit_entries(&pattern, c, false, |_, _, v| {
                values[k] = v;
                k += 1;
            });
        }
        self.pattern = Some(pattern);
        r
    }

    fn sparse_derivative_jacobian(
        &mut self,
        t: f64,
        y: &[f64],
        _yp: &[f64],
        values: &mut [f64],
    ) -> Result<(), EvalError> {
        let pattern = self.declared()?;
        let r = match self.sparse_mass(t, y) {
            Ok(true) => Ok(()),
            Ok(false) => {
                self.dense_blocks();
                self.problem.mass_matrix(t, &y[..self.n], &mut self.mass)
            }
            Err(e) => Err(e),
        };
        if r.is_ok() {
            let mut k = 0;
            self.visit_entries(&pattern, 0.0, true, |_, _, v| {
                values[k] = v;
                k += 1;
            });
        }
        self.pattern = Some(pattern);
        r
    }

    fn variable_index(&self) -> &[u8] {
        &self.index
    }

    fn is_differential(&self) -> &[bool] {
        &self.differential
    }

    /// y' = [v; a; 0 (; 0)] with a from the KKT system
    /// `[M Φ_qᵀ; Φ_q 0][a; λ] = [Q; γ]`: by the problem's own
    /// factorisation ([`ConstrainedSecondOrderProblem::consistent_acceleration`],
    /// sparse for a block-diagonal M), else by a dense LU (allocates:
    /// called once per start).
    fn consistent_derivative(
        &mut self,
        t: f64,
        y: &[f64],
        yp: &mut [f64],
    ) -> Result<(), EvalError> {
        let (nq, n, m) = (self.nq, self.n, self.m);
        let (q, v) = (&y[..nq], &y[nq..nq + n]);
        let p = &mut self.problem;
        // a into f, λ (unused: y' of λ is 0) into phi
        if p.consistent_acceleration(t, q, v, &mut self.f, &mut self.phi)? {
            yp.fill(0.0);
            p.position_derivative(q, v, &mut yp[..nq]);
            yp[nq..nq + n].copy_from_slice(&self.f);
            return Ok(());
        }
        self.dense_blocks();
        let p = &mut self.problem;
        p.mass_matrix(t, q, &mut self.mass)?;
        p.forces(t, q, v, &mut self.f)?;
        let mut a = DMatrix::zeros(n + m, n + m);
        let mut b = nalgebra::DVector::zeros(n + m);
        for i in 0..n {
            for j in 0..n {
                a[(i, j)] = self.mass[(i, j)];
            }
            b[i] = self.f[i];
        }
        if m > 0 {
            p.constraint_jacobian(t, q, &mut self.jac)?;
            p.gamma(t, q, v, &mut self.phi)?;
            for k in 0..m {
                for j in 0..n {
                    a[(n + k, j)] = self.jac[(k, j)];
                    a[(j, n + k)] = self.jac[(k, j)];
                }
                b[n + k] = self.phi[k];
            }
        }
        let sol = a.lu().solve(&b).ok_or_else(|| EvalError::Singular {
            what: "KKT matrix [M Φ_qᵀ; Φ_q 0] of the consistent initial derivative".into(),
            t,
            detail: String::new(),
        })?;
        yp.fill(0.0);
        self.problem.position_derivative(q, v, &mut yp[..nq]);
        for i in 0..n {
            yp[nq + i] = sol[i];
        }
        Ok(())
    }
}

impl<P: ConstrainedSecondOrderProblem> ConstrainedDae<P> {
    /// F when positions are not velocities (module documentation), y =
    /// [q (n_q); v; λ; (μ)], from the dense blocks.
    fn manifold_residual(
        &mut self,
        t: f64,
        y: &[f64],
        yp: &[f64],
        r: &mut [f64],
    ) -> Result<(), EvalError> {
        let (nq, n, m) = (self.nq, self.n, self.m);
        self.dense_blocks();
        let q = &y[..nq];
        let v = &y[nq..nq + n];
        let lambda = &y[nq + n..nq + n + m];
        let vp = &yp[nq..nq + n];
        let p = &mut self.problem;
        p.mass_matrix(t, q, &mut self.mass)?;
        p.forces(t, q, v, &mut self.f)?;
        if m > 0 {
            p.constraint_jacobian(t, q, &mut self.jac)?;
            p.constraints(t, q, &mut self.phi)?;
        }
        for i in 0..n {
            let mut s = -self.f[i];
            for j in 0..n {
                s += self.mass[(i, j)] * vp[j];
            }
            for k in 0..m {
                s += self.jac[(k, i)] * lambda[k];
            }
            r[nq + i] = s;
        }
        r[nq + n..nq + n + m].copy_from_slice(&self.phi);
        if self.form == DaeForm::Ggl && m > 0 {
            p.velocity_rhs(t, q, &mut self.nu)?;
            for k in 0..m {
                let mut s = -self.nu[k];
                for j in 0..n {
                    s += self.jac[(k, j)] * v[j];
                }
                r[nq + n + m + k] = s;
            }
        }
        self.kinematic_rows(y, yp, r);
        if r.iter().any(|x| !x.is_finite()) {
            return Err(EvalError::NonFinite {
                what: "DAE residual F(t, y, y')".into(),
                t,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dae::fd_iteration_matrix;
    use crate::testkit::CartesianPendulum;

    fn pendulum() -> CartesianPendulum {
        CartesianPendulum::damped(0.4)
    }

    /// The assembled iteration matrix equals forward differences of the
    /// residual, in both forms, at an arbitrary (inconsistent) point:
    /// every block (K, C, M, Φ_q, ∂(Φ_qᵀμ)/∂q, ∂(Φ_q v)/∂q) is exercised.
    /// Forward differences with δ = √ε have error ~1e-8 relative; a
    /// wrong block gives O(1).
    #[test]
    fn iteration_matrix_matches_finite_differences() {
        for form in [DaeForm::Index3, DaeForm::Ggl] {
            let mut dae = ConstrainedDae::new(pendulum(), form).unwrap();
            let nd = dae.dim();
            let y: Vec<f64> = (0..nd).map(|i| 0.3 + 0.17 * i as f64).collect();
            let yp: Vec<f64> = (0..nd).map(|i| -0.5 + 0.23 * i as f64).collect();
            let c = 37.0;
            let (mut g, mut gfd) = (DMatrix::zeros(nd, nd), DMatrix::zeros(nd, nd));
            dae.iteration_matrix(0.2, &y, &yp, c, &mut g).unwrap();
            fd_iteration_matrix(&mut dae, 0.2, &y, &yp, c, &mut gfd).unwrap();
            let scale = g.iter().fold(1.0f64, |s, x| s.max(x.abs()));
            let diff = (&g - &gfd).abs().max() / scale;
            assert!(diff < 1e-6, "{form:?}: G differs from FD by {diff:e}");
            // ∂F/∂y' is the difference of G at c = 1 and c = 0
            let mut mj = DMatrix::zeros(nd, nd);
            dae.derivative_jacobian(0.2, &y, &yp, &mut mj).unwrap();
            let (mut g1, mut g0) = (DMatrix::zeros(nd, nd), DMatrix::zeros(nd, nd));
            dae.iteration_matrix(0.2, &y, &yp, 1.0, &mut g1).unwrap();
            dae.iteration_matrix(0.2, &y, &yp, 0.0, &mut g0).unwrap();
            assert!((&g1 - &g0 - &mj).abs().max() < 1e-14, "{form:?}");
        }
    }

    /// A consistent start has F(t0, y0, y0') = 0 in both forms.
    #[test]
    fn consistent_derivative_zeroes_the_residual() {
        for form in [DaeForm::Index3, DaeForm::Ggl] {
            let mut dae = ConstrainedDae::new(pendulum(), form).unwrap();
            let nd = dae.dim();
            let mut y = pendulum().state_from_angle(0.7, 1.1).to_vec();
            if form == DaeForm::Ggl {
                y.push(0.0);
            }
            let mut yp = vec![0.0; nd];
            dae.consistent_derivative(0.0, &y, &mut yp).unwrap();
            let mut r = vec![0.0; nd];
            dae.residual(0.0, &y, &yp, &mut r).unwrap();
            let worst = r.iter().fold(0.0f64, |s, x| s.max(x.abs()));
            assert!(worst < 1e-13, "{form:?}: |F| = {worst:e}");
            assert_eq!(dae.variable_index().len(), nd);
            assert_eq!(
                dae.is_differential().iter().filter(|d| !**d).count(),
                nd - 4,
                "{form:?}: multipliers are the algebraic components"
            );
        }
    }
}
