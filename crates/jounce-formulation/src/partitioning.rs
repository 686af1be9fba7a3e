//! Coordinate partitioning (embedding) with automatic re-partitioning.
//!
//! Wehage & Haug 1982 (J. Mech. Des. 104, 247–255); termeer 4.3;
//! chandramouli slides "Embedding Technique" / "Automatic Determination".
//! LU factorisation with full pivoting of Φ_q (m × n) splits q into m
//! dependent coordinates q_d (the pivot columns) and n − m independent ones
//! q_i (the rest). The integrator state is y = [q_i; v_i] (2(n − m)).
//! Each right-hand-side evaluation
//!
//! 1. solves Φ(t, q_d; q_i) = 0 for q_d by Newton's method,
//!    Φ_q,d Δq_d = −Φ, warm-started from the last solution (and once more
//!    from the last accepted step if that fails);
//! 2. solves Φ_q,d v_d = −Φ_t − Φ_q,i v_i;
//! 3. solves the KKT system `[M Φ_qᵀ; Φ_q 0][a; λ] = [Q; γ]` (regular
//!    also for zero-inertia coordinates) and returns y' = [v_i; a_i].
//!
//! The constraints hold to Newton precision at every evaluation, so there
//! is no drift. After every accepted step the 1-norm condition number
//! κ₁(Φ_q,d) of the current dependent block is compared with that of the
//! block full pivoting would choose now; the partition changes (and the
//! step returns [`StepFix::Modified`], restarting the method) when
//! κ₁(current) > `ratio` · κ₁(best) or κ₁(current) > `cond_max`. κ depends
//! on the units of the coordinates (lengths versus angles); the defaults
//! (ratio 2, cond_max 1e6) suit SI units.
//!
//! **Exact Jacobian.** With B = ∂q/∂q_i (n × p: identity on the
//! independent rows, −Φ_q,d⁻¹Φ_q,i on the dependent ones; dv/dv_i = B
//! too) and V = ∂v/∂q_i (zero on the independent rows,
//! −Φ_q,d⁻¹(∂(Φ_q v)/∂q + Φ_qt) B on the dependent ones, from
//! differentiating Φ_q v + Φ_t = 0), the chain rule through the KKT
//! accelerations gives
//!
//! ```text
//! J = [ 0                              I            ]
//!     [ (∂a/∂q B + ∂a/∂v V)_i          (∂a/∂v B)_i  ]
//! ```
//!
//! (rows of the independent coordinates), with ∂a/∂q, ∂a/∂v from the
//! differentiated KKT system (`acceleration_jacobian.rs`).
//!
//! Because the meaning of y changes at a re-partitioning, the partition in
//! force is recorded with its start time; [`Formulation::physical_state`]
//! reads y with the partition in force at t and warm-starts from its
//! previous call, so call it in time order. An output time that rounds to
//! a switch time (t = 0.52 against a switch at 0.5200000000000001) may
//! carry y in either meaning: there both partitions are tried and the one
//! whose q lies next to the configuration at the switch is kept.
//!
//! The building blocks (recovery from a chosen warm start, the
//! sensitivities ∂q/∂q_i, the chained Jacobian, the condition test that
//! re-partitions, `physical_state`) are shared with [`crate::StateSpace`],
//! the variant made for implicit integrators.

use jounce_integrate::{EvalError, OdeProblem, StepFix};
use jounce_mechanics::{MechanicalSystem, SparseMatrix, SystemQueries};
use nalgebra::DMatrix;

use crate::acceleration_jacobian::AccelerationJacobian;
use crate::augmented::check_kkt;
use crate::error::FormulationError;
use crate::formulation::Formulation;
use crate::kkt::{worst_row, Kkt, PIVOT_TOL};
use crate::lu::FullPivLu;
use crate::sparse_partition::{DependentBlock, Rule, SparseElimination};

/// From this many coordinates on (and for systems that declare the
/// sparsity of Φ_q) the sparse path is taken: Φ_q stored sparse, the
/// dependent block by sparse LU, the partition by sparse elimination
/// (`sparse_partition.rs`, issue 32). Below, the dense full-pivoting LU of
/// the small Φ_q is as fast.
pub const SPARSE_MIN_COORDINATES: usize = 120;

/// Candidate blocks kept on the sparse path.
const CAND_CACHE: usize = 4;

/// The sparse path's storage.
#[derive(Debug)]
pub(crate) struct SparsePath {
    /// Φ_q at the last recovered q.
    pub jac: SparseMatrix,
    /// Whether the partition is chosen by the sparse elimination (else
    /// by the dense LU of Φ_q, for tests against the dense path).
    pub sparse_choice: bool,
    pub elim: SparseElimination,
    /// Φ_q,d of the current partition, and of the last few candidates
    /// (the full-pivoting choice may alternate between near-ties from
    /// step to step; each pattern is set up once).
    pub block: DependentBlock,
    cand_blocks: Vec<DependentBlock>,
}

/// Maximum Newton iterations for the dependent coordinates.
const MAX_NEWTON: usize = 25;

/// Where the Newton iteration for the dependent coordinates starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Start {
    /// The q of the last recovery.
    Last,
    /// The q of the last accepted step.
    Accepted,
    /// The q of the last `physical_state`.
    Phys,
    /// The guess the caller has put into `qtmp`.
    Prepared,
}

/// Coordinate-partitioning formulation.
pub struct Partitioning<'a, S: MechanicalSystem + ?Sized> {
    pub(crate) sys: &'a S,
    pub(crate) n: usize,
    pub(crate) m: usize,
    ratio: f64,
    cond_max: f64,
    /// Dependent coordinates (sorted), len m.
    pub(crate) dep: Vec<usize>,
    /// Independent coordinates (sorted), len n − m.
    pub(crate) ind: Vec<usize>,
    /// Candidate dependent coordinates (sorted), len m.
    pub(crate) cand: Vec<usize>,
    /// Full q, v of the last recovery (warm start).
    pub(crate) q: Vec<f64>,
    v: Vec<f64>,
    /// Full q at the last accepted step (fallback warm start).
    pub(crate) q_acc: Vec<f64>,
    /// Warm start of `physical_state`.
    q_phys: Vec<f64>,
    /// Newton iterate of the recovery.
    pub(crate) qtmp: Vec<f64>,
    phi: Vec<f64>,
    phi_t: Vec<f64>,
    /// Φ_q at the last recovered q.
    pub(crate) jac: DMatrix<f64>,
    lu_q: FullPivLu,
    /// Factored Φ_q,d at the last recovered q.
    lu_d: FullPivLu,
    rm: Vec<f64>,
    wm: Vec<f64>,
    em: Vec<f64>,
    kkt: Kkt,
    dacc: AccelerationJacobian,
    /// ∂q/∂q_i (n × p), ∂v/∂q_i (n × p).
    pub(crate) bmat: DMatrix<f64>,
    vmat: DMatrix<f64>,
    /// ∂(Φ_q v)/∂q + Φ_qt (m × n) and Φ_qt scratch.
    hv: DMatrix<f64>,
    pqt: DMatrix<f64>,
    mark: Vec<bool>,
    history: Vec<(f64, Vec<usize>)>,
    /// q at the start of each partition of `history`.
    switch_q: Vec<Vec<f64>>,
    breakpoints: Vec<f64>,
    /// The sparse path, when taken.
    pub(crate) sp: Option<Box<SparsePath>>,
}

impl<'a, S: MechanicalSystem + ?Sized> Partitioning<'a, S> {
    /// Re-partition when κ₁(Φ_q,d) exceeds `ratio` × that of the best
    /// block or exceeds `cond_max`.
    ///
    /// # Errors
    /// [`FormulationError::BadParameter`] unless ratio ≥ 1 and cond_max > 1.
    pub fn new(sys: &'a S, ratio: f64, cond_max: f64) -> Result<Self, FormulationError> {
        let sparse = sys.sparsity().is_some() && sys.nq() >= SPARSE_MIN_COORDINATES;
        Self::with_paths(sys, ratio, cond_max, sparse, sparse)
    }

    /// [`Partitioning::new`] with the path chosen: `sparse` for the
    /// sparse solves (ignored unless the system declares its sparsity),
    /// `sparse_choice` for the sparse choice of the partition too. For
    /// tests of the sparse path against the dense one.
    ///
    /// # Errors
    /// As [`Partitioning::new`].
    #[doc(hidden)]
    pub fn with_paths(
        sys: &'a S,
        ratio: f64,
        cond_max: f64,
        sparse: bool,
        sparse_choice: bool,
    ) -> Result<Self, FormulationError> {
        if !(ratio.is_finite() && ratio >= 1.0 && cond_max > 1.0) {
            return Err(FormulationError::BadParameter {
                formulation: "partitioning".into(),
                detail: format!(
                    "partition_ratio must be finite and ≥ 1 (got {ratio}) and \
                     partition_condition_max > 1 (got {cond_max})"
                ),
            });
        }
        let (n, m) = (sys.nq(), sys.nc());
        let sp = sys
            .sparsity()
            .filter(|_| sparse && m > 0 && m < n)
            .map(|sp| {
                let jac = SparseMatrix::from_pattern(m, n, &sp.jacobian_pattern());
                let dep: Vec<usize> = (0..m).collect();
                Box::new(SparsePath {
                    elim: SparseElimination::new(&jac),
                    block: DependentBlock::new(&jac, &dep),
                    jac,
                    sparse_choice,
                    cand_blocks: Vec::with_capacity(CAND_CACHE + 1),
                })
            });
        // the dense m × n and n × p buffers: on the sparse path sized on
        // the first exact Jacobian (dense by the ODE interface), the dense
        // Φ_q and its LU only for a dense choice of the partition
        let (dm, dn, dp) = if sp.is_some() {
            (0, 0, 0)
        } else {
            (m, n, n - m.min(n))
        };
        let dense_choice = sp.as_ref().is_none_or(|s| !s.sparse_choice);
        let (qm, qn) = if dense_choice { (m, n) } else { (0, 0) };
        Ok(Self {
            sp,
            sys,
            n,
            m,
            ratio,
            cond_max,
            dep: (0..m.min(n)).collect(),
            ind: (m.min(n)..n).collect(),
            cand: vec![0; m.min(n)],
            q: vec![0.0; n],
            v: vec![0.0; n],
            q_acc: vec![0.0; n],
            q_phys: vec![0.0; n],
            qtmp: vec![0.0; n],
            phi: vec![0.0; m],
            phi_t: vec![0.0; m],
            jac: DMatrix::zeros(qm, qn),
            lu_q: FullPivLu::new(qm, qn),
            lu_d: FullPivLu::new(dm, dm),
            rm: vec![0.0; m],
            wm: vec![0.0; m],
            em: vec![0.0; m],
            kkt: Kkt::new(sys),
            dacc: AccelerationJacobian::new(n, m),
            bmat: DMatrix::zeros(dn, dp),
            vmat: DMatrix::zeros(dn, dp),
            hv: DMatrix::zeros(dm, dn),
            pqt: DMatrix::zeros(dm, dn),
            mark: vec![false; n],
            history: Vec::new(),
            switch_q: Vec::new(),
            breakpoints: sys.breakpoints(),
        })
    }

    /// Current independent coordinates (indices into q).
    pub fn independent(&self) -> &[usize] {
        &self.ind
    }

    /// Current dependent coordinates (indices into q).
    pub fn dependent(&self) -> &[usize] {
        &self.dep
    }

    /// Partitions used so far: (start time, dependent coordinates).
    pub fn history(&self) -> &[(f64, Vec<usize>)] {
        &self.history
    }

    /// Number of re-partitionings so far.
    pub fn n_repartitions(&self) -> usize {
        self.history.len().saturating_sub(1)
    }

    /// Full-pivoting choice of dependent coordinates for the Φ_q in `jac`,
    /// sorted, into `cand`. Returns the numerical rank of Φ_q.
    fn best_partition(&mut self) -> usize {
        if let Some(sp) = self.sp.as_mut() {
            if sp.sparse_choice {
                let r = sp.elim.factor(&sp.jac, Rule::Complete, PIVOT_TOL);
                if r == self.m {
                    self.cand.copy_from_slice(sp.elim.pivots());
                    self.cand.sort_unstable();
                }
                return r;
            }
            sp.jac.to_dense_into(&mut self.jac);
        }
        self.lu_q.load(&self.jac);
        let r = self.lu_q.factor(PIVOT_TOL);
        if r == self.m {
            for k in 0..self.m {
                self.cand[k] = self.lu_q.col_at(k);
            }
            self.cand.sort_unstable();
        }
        r
    }

    /// Load Φ_q,d (columns `dep` of `jac`) into `lu_d`, factor; return its
    /// 1-norm.
    fn factor_block(lu: &mut FullPivLu, jac: &DMatrix<f64>, dep: &[usize]) -> f64 {
        let mut norm1: f64 = 0.0;
        for (k, &c) in dep.iter().enumerate() {
            let mut s = 0.0;
            for i in 0..jac.nrows() {
                lu.set(i, k, jac[(i, c)]);
                s += jac[(i, c)].abs();
            }
            norm1 = norm1.max(s);
        }
        lu.factor(PIVOT_TOL);
        norm1
    }

    /// Evaluate Φ_q at (t, q) into `jac` (dense path) or the sparse Φ_q.
    pub(crate) fn load_jacobian(&mut self, t: f64, q: &[f64]) {
        match self.sp.as_mut() {
            Some(sp) => {
                let s = self
                    .sys
                    .sparsity()
                    .expect("the sparse path needs a sparsity");
                s.fill_constraint_jacobian(t, q, &mut sp.jac);
            }
            None => self.sys.constraint_jacobian(t, q, &mut self.jac),
        }
    }

    /// Factor Φ_q,d of the partition `dep` from the Φ_q in the buffers;
    /// whether it is regular.
    fn factor_dependent(&mut self) -> bool {
        match self.sp.as_mut() {
            Some(sp) => {
                if sp.block.dep != self.dep {
                    // a partition of the history (physical_state) or a
                    // new one: cold, allocates
                    sp.block = DependentBlock::new(&sp.jac, &self.dep);
                }
                sp.block.factor(&sp.jac, PIVOT_TOL)
            }
            None => {
                Self::factor_block(&mut self.lu_d, &self.jac, &self.dep);
                self.lu_d.is_regular()
            }
        }
    }

    /// Φ_q,d x = `rm` in place with the factors of
    /// [`Partitioning::factor_dependent`].
    fn solve_dependent(&mut self) {
        match self.sp.as_mut() {
            Some(sp) => sp.block.solve(&mut self.rm),
            None => self.lu_d.solve_in_place(&mut self.rm, &mut self.wm),
        }
    }

    /// A hint on the conditioning of Φ_q,d for messages (cold).
    fn block_hint(&mut self) -> String {
        match self.sp.as_mut() {
            Some(sp) => format!(
                "κ₁ of Φ_q,d {:.1e}",
                sp.block.cond1(&sp.jac, &mut self.em, &mut self.wm)
            ),
            None => format!("pivot ratio of Φ_q,d {:.1e}", self.lu_d.pivot_ratio()),
        }
    }

    /// Size the dense buffers of the exact Jacobian on the sparse path
    /// and load Φ_q and the factored Φ_q,d into them (cold on first use:
    /// the Jacobian of the ODE in the independent coordinates is a dense
    /// 2p × 2p matrix by the integrators' interface).
    fn dense_for_jacobian(&mut self) {
        let Some(sp) = self.sp.as_ref() else {
            return;
        };
        let (n, m) = (self.n, self.m);
        let p = n - m;
        if self.hv.nrows() != m || self.hv.ncols() != n {
            self.jac = DMatrix::zeros(m, n);
            self.lu_d = FullPivLu::new(m, m);
            self.bmat = DMatrix::zeros(n, p);
            self.vmat = DMatrix::zeros(n, p);
            self.hv = DMatrix::zeros(m, n);
            self.pqt = DMatrix::zeros(m, n);
        }
        sp.jac.to_dense_into(&mut self.jac);
        Self::factor_block(&mut self.lu_d, &self.jac, &self.dep);
    }

    /// Set `ind` to the complement of `dep`.
    fn complement(&mut self) {
        self.mark.iter_mut().for_each(|x| *x = false);
        for &d in &self.dep {
            self.mark[d] = true;
        }
        let mut k = 0;
        for i in 0..self.n {
            if !self.mark[i] {
                self.ind[k] = i;
                k += 1;
            }
        }
    }

    fn dep_labels(&self) -> String {
        let v: Vec<String> = self
            .dep
            .iter()
            .map(|&i| self.sys.coordinate_label(i))
            .collect();
        v.join(", ")
    }

    /// Newton on Φ(t, q_d; q_i) = 0 starting from `qtmp` (whose
    /// independent entries are set); on success `qtmp` holds q and `jac`,
    /// `lu_d` hold Φ_q and the factored Φ_q,d at it.
    fn newton(&mut self, t: f64) -> Result<(), EvalError> {
        let sys = self.sys;
        let mut last = f64::INFINITY;
        for _ in 0..MAX_NEWTON {
            sys.constraints(t, &self.qtmp, &mut self.phi);
            let q = std::mem::take(&mut self.qtmp);
            self.load_jacobian(t, &q);
            self.qtmp = q;
            if !self.factor_dependent() {
                return Err(EvalError::Singular {
                    what: "dependent block Φ_q,d of the constraint Jacobian".into(),
                    t,
                    detail: format!(
                        "dependent coordinates {}; lower partition_ratio / \
                         partition_condition_max to re-partition earlier",
                        self.dep_labels()
                    ),
                });
            }
            for i in 0..self.m {
                self.rm[i] = -self.phi[i];
            }
            self.solve_dependent();
            let mut dn: f64 = 0.0;
            let mut qn: f64 = 0.0;
            for (k, &d) in self.dep.iter().enumerate() {
                self.qtmp[d] += self.rm[k];
                dn = dn.max(self.rm[k].abs());
                qn = qn.max(self.qtmp[d].abs());
            }
            if !dn.is_finite() {
                break;
            }
            if dn <= 1e-12 * (1.0 + qn) {
                let q = std::mem::take(&mut self.qtmp);
                self.load_jacobian(t, &q);
                self.qtmp = q;
                if self.factor_dependent() {
                    return Ok(());
                }
                break;
            }
            // diverging
            if dn > 1e3 * last && last < 1e-3 {
                break;
            }
            last = dn;
        }
        sys.constraints(t, &self.qtmp, &mut self.phi);
        let (r, label) = worst_row(sys, &self.phi);
        let hint = self.block_hint();
        Err(EvalError::NoConvergence {
            what: "dependent coordinates (Newton on Φ(q) = 0)".into(),
            t,
            detail: format!(
                "|Φ| = {r:e} in {label}; dependent coordinates {} \
                 ({hint}: if large, the partition degenerated; \
                 lower partition_ratio / partition_condition_max)",
                self.dep_labels(),
            ),
        })
    }

    /// Recover full q, v (into `q`, `v`; `q_phys`, `v` when `from_phys`)
    /// from y = [q_i; v_i], warm-starting from the last evaluation (the
    /// last `physical_state` when `from_phys`), then from the last
    /// accepted q.
    fn recover(&mut self, t: f64, y: &[f64], from_phys: bool) -> Result<(), EvalError> {
        let first = if from_phys { Start::Phys } else { Start::Last };
        self.recover_from(t, y, &[first, Start::Accepted], from_phys)
    }

    /// [`Partitioning::recover`] trying the warm starts `starts` in order
    /// until Newton converges. On success `jac` and `lu_d` hold Φ_q and
    /// the factored Φ_q,d at q.
    pub(crate) fn recover_from(
        &mut self,
        t: f64,
        y: &[f64],
        starts: &[Start],
        from_phys: bool,
    ) -> Result<(), EvalError> {
        let p = self.ind.len();
        let mut result = Ok(());
        for &start in starts {
            match start {
                Start::Last => self.qtmp.copy_from_slice(&self.q),
                Start::Accepted => self.qtmp.copy_from_slice(&self.q_acc),
                Start::Phys => self.qtmp.copy_from_slice(&self.q_phys),
                Start::Prepared => {}
            }
            for k in 0..p {
                self.qtmp[self.ind[k]] = y[k];
            }
            result = self.newton(t);
            if result.is_ok() {
                break;
            }
        }
        result?;
        // velocities: Φ_q,d v_d = −Φ_t − Φ_q,i v_i
        let sys = self.sys;
        sys.constraint_time_derivative(t, &self.qtmp, &mut self.phi_t);
        for k in 0..p {
            self.v[self.ind[k]] = y[p + k];
        }
        if let Some(sp) = self.sp.as_ref() {
            // the same sums in the same (ascending column) order
            for &d in &self.dep {
                self.mark[d] = true;
            }
            for i in 0..self.m {
                let mut s = -self.phi_t[i];
                let (cols, vals) = sp.jac.row(i);
                for (&j, &a) in cols.iter().zip(vals) {
                    if !self.mark[j] {
                        s -= a * self.v[j];
                    }
                }
                self.rm[i] = s;
            }
            for &d in &self.dep {
                self.mark[d] = false;
            }
        } else {
            for i in 0..self.m {
                let mut s = -self.phi_t[i];
                for k in 0..p {
                    s -= self.jac[(i, self.ind[k])] * y[p + k];
                }
                self.rm[i] = s;
            }
        }
        self.solve_dependent();
        for (k, &d) in self.dep.iter().enumerate() {
            self.v[d] = self.rm[k];
        }
        if from_phys {
            self.q_phys.copy_from_slice(&self.qtmp);
        } else {
            self.q.copy_from_slice(&self.qtmp);
        }
        Ok(())
    }

    /// y' = [v_i; a_i] at the last recovery (its q, v at time t).
    pub(crate) fn derivative(
        &mut self,
        t: f64,
        y: &[f64],
        dy: &mut [f64],
    ) -> Result<(), EvalError> {
        let p = self.ind.len();
        self.kkt
            .accelerations(self.sys, t, &self.q, &self.v, 0.0, 0.0)?;
        dy[..p].copy_from_slice(&y[p..]);
        for k in 0..p {
            dy[p + k] = self.kkt.sol[self.ind[k]];
        }
        Ok(())
    }

    /// B = ∂q/∂q_i (n × p) into `bmat` from `jac` and `lu_d` (Φ_q and the
    /// factored Φ_q,d at a recovered q): the identity on the independent
    /// rows, −Φ_q,d⁻¹Φ_q,i on the dependent ones.
    pub(crate) fn sensitivities(&mut self) {
        let m = self.m;
        self.bmat.fill(0.0);
        for k in 0..self.ind.len() {
            let c = self.ind[k];
            for i in 0..m {
                self.rm[i] = -self.jac[(i, c)];
            }
            self.lu_d.solve_in_place(&mut self.rm, &mut self.wm);
            self.bmat[(c, k)] = 1.0;
            for (kk, &d) in self.dep.iter().enumerate() {
                self.bmat[(d, k)] = self.rm[kk];
            }
        }
    }

    /// The state-space Jacobian at the last recovery (its q, v, `jac` and
    /// `lu_d`, at time t) into `jac`.
    pub(crate) fn chain_jacobian(
        &mut self,
        t: f64,
        jac: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        self.dense_for_jacobian();
        let p = self.ind.len();
        let (n, m) = (self.n, self.m);
        let sys = self.sys;
        self.sensitivities();
        sys.constraint_hessian_product(t, &self.q, &self.v, &mut self.hv);
        sys.constraint_time_jacobian(t, &self.q, &mut self.pqt);
        self.hv += &self.pqt;
        self.vmat.fill(0.0);
        for k in 0..p {
            for i in 0..m {
                let mut s = 0.0;
                for j in 0..n {
                    s += self.hv[(i, j)] * self.bmat[(j, k)];
                }
                self.rm[i] = -s;
            }
            self.lu_d.solve_in_place(&mut self.rm, &mut self.wm);
            for (kk, &d) in self.dep.iter().enumerate() {
                self.vmat[(d, k)] = self.rm[kk];
            }
        }
        self.dacc
            .compute(sys, &mut self.kkt, t, &self.q, &self.v, 0.0, 0.0)?;
        jac.fill(0.0);
        for r in 0..p {
            jac[(r, p + r)] = 1.0;
            let ir = self.ind[r];
            for k in 0..p {
                let (mut dq, mut dv) = (0.0, 0.0);
                for j in 0..n {
                    let (aq, av) = (self.dacc.da_dq[(ir, j)], self.dacc.da_dv[(ir, j)]);
                    dq += aq * self.bmat[(j, k)] + av * self.vmat[(j, k)];
                    dv += av * self.bmat[(j, k)];
                }
                jac[(p + r, k)] = dq;
                jac[(p + r, p + k)] = dv;
            }
        }
        Ok(())
    }

    /// Index into the history of the partition in force at time t (at a
    /// switch time, the new one).
    fn partition_index(&self, t: f64) -> Option<usize> {
        if self.history.is_empty() {
            return None;
        }
        Some(
            self.history
                .iter()
                .rposition(|(ts, _)| *ts <= t)
                .unwrap_or(0),
        )
    }

    /// κ₁ of the current Φ_q,d at the last recovery (from `jac`); leaves
    /// `lu_d` factored at it.
    pub(crate) fn condition(&mut self) -> f64 {
        if self.sp.is_some() {
            self.factor_dependent();
            let sp = self.sp.as_mut().expect("sparse");
            return sp.block.cond1(&sp.jac, &mut self.em, &mut self.wm);
        }
        let norm = Self::factor_block(&mut self.lu_d, &self.jac, &self.dep);
        self.lu_d.cond1(norm, &mut self.em, &mut self.wm)
    }

    /// After an accepted step whose recovery is in `q`, `v`, `jac`: adopt
    /// the candidate partition in `cand` when κ₁ of the current block,
    /// `k_cur`, exceeds `ratio` times the candidate's or `cond_max` (and
    /// the candidate's is lower); y is then rewritten in the new
    /// coordinates. On a switch `lu_d` holds the new Φ_q,d factored.
    pub(crate) fn switch_if_degenerate(&mut self, t: f64, y: &mut [f64], k_cur: f64) -> StepFix {
        if self.cand == self.dep {
            return StepFix::Unchanged;
        }
        let k_best = match self.sp.as_mut() {
            Some(sp) if sp.sparse_choice => {
                // the LU the choice left behind: no new pattern per candidate
                sp.elim.cond1(&sp.jac, &mut self.em, &mut self.wm)
            }
            Some(sp) => {
                let k = match sp.cand_blocks.iter().position(|b| b.dep == self.cand) {
                    Some(k) => k,
                    None => {
                        // a new candidate partition (cold: allocates)
                        if sp.cand_blocks.len() == CAND_CACHE {
                            sp.cand_blocks.remove(0);
                        }
                        sp.cand_blocks
                            .push(DependentBlock::new(&sp.jac, &self.cand));
                        sp.cand_blocks.len() - 1
                    }
                };
                // the candidate just used goes last (least recently used first)
                let last = sp.cand_blocks.len() - 1;
                sp.cand_blocks.swap(k, last);
                let b = &mut sp.cand_blocks[last];
                b.factor(&sp.jac, PIVOT_TOL);
                b.cond1(&sp.jac, &mut self.em, &mut self.wm)
            }
            None => {
                let norm = Self::factor_block(&mut self.lu_d, &self.jac, &self.cand);
                self.lu_d.cond1(norm, &mut self.em, &mut self.wm)
            }
        };
        if !(k_best < k_cur && (k_cur > self.ratio * k_best || k_cur > self.cond_max)) {
            return StepFix::Unchanged;
        }
        if let Some(sp) = self.sp.as_mut() {
            // the candidate's block becomes the current one (a restart:
            // a new pattern may allocate)
            if sp.sparse_choice {
                sp.block = DependentBlock::new(&sp.jac, &self.cand);
                sp.block.factor(&sp.jac, PIVOT_TOL);
            } else {
                let last = sp.cand_blocks.len() - 1;
                std::mem::swap(&mut sp.block, &mut sp.cand_blocks[last]);
            }
        }
        self.dep.copy_from_slice(&self.cand);
        self.complement();
        self.history.push((t, self.dep.clone()));
        self.switch_q.push(self.q.clone());
        let p = self.ind.len();
        for k in 0..p {
            y[k] = self.q[self.ind[k]];
            y[p + k] = self.v[self.ind[k]];
        }
        StepFix::Modified
    }

    /// Refuse an initial state the formulation cannot integrate (see
    /// `check_kkt`; no independent coordinates); on success `jac` holds
    /// Φ_q at (t0, q0).
    pub(crate) fn check_initial(
        &mut self,
        t0: f64,
        q0: &[f64],
        v0: &[f64],
        name: &str,
    ) -> Result<(), FormulationError> {
        let (n, m) = (self.n, self.m);
        check_kkt(self.sys, &mut self.kkt, t0, q0, v0, name)?;
        if m >= n {
            return Err(FormulationError::BadParameter {
                formulation: name.into(),
                detail: format!(
                    "the system has {n} coordinates and {m} constraint equations: \
                     no independent coordinates to integrate (use 'augmented')"
                ),
            });
        }
        self.load_jacobian(t0, q0);
        Ok(())
    }

    /// Start at (t0, q0, v0) with the partition in `cand` (found with
    /// numerical rank `rank` of Φ_q): y0 = [q_i; v_i].
    pub(crate) fn start(
        &mut self,
        t0: f64,
        q0: &[f64],
        v0: &[f64],
        rank: usize,
    ) -> Result<Vec<f64>, FormulationError> {
        if rank < self.m {
            // check_kkt has already refused a rank-deficient Φ_q; be safe
            return Err(FormulationError::SingularJacobian(format!(
                "at t = {t0}: constraint Jacobian is rank deficient"
            )));
        }
        self.dep.copy_from_slice(&self.cand);
        self.complement();
        self.history.clear();
        self.history.push((t0, self.dep.clone()));
        self.switch_q.clear();
        self.switch_q.push(q0.to_vec());
        self.q.copy_from_slice(q0);
        self.v.copy_from_slice(v0);
        self.q_acc.copy_from_slice(q0);
        self.q_phys.copy_from_slice(q0);
        let p = self.ind.len();
        let mut y = vec![0.0; 2 * p];
        for k in 0..p {
            y[k] = q0[self.ind[k]];
            y[p + k] = v0[self.ind[k]];
        }
        Ok(y)
    }

    /// Make partition k of the history the current one.
    fn use_partition(&mut self, k: usize) {
        let (dep, hist) = (&mut self.dep, &self.history);
        dep.copy_from_slice(&hist[k].1);
        self.complement();
    }

    /// [`Formulation::physical_state`]: q, v, λ at (t, y), y read with the
    /// partition in force at t. Next to a switch time (within rounding
    /// of the output times), y may be in either meaning: both partitions
    /// are tried, warm-started from the q at the switch, and the one whose
    /// q lies nearer to it is kept.
    pub(crate) fn physical(
        &mut self,
        t: f64,
        y: &[f64],
        q: &mut [f64],
        v: &mut [f64],
        lambda: &mut [f64],
    ) -> Result<(), EvalError> {
        // the partition in force for the integration, restored below
        self.cand.copy_from_slice(&self.dep);
        let r = self.recover_in_history(t, y).and_then(|_| {
            self.kkt
                .accelerations(self.sys, t, &self.q_phys, &self.v, 0.0, 0.0)
        });
        self.dep.copy_from_slice(&self.cand);
        self.complement();
        r?;
        q.copy_from_slice(&self.q_phys);
        v.copy_from_slice(&self.v);
        lambda.copy_from_slice(&self.kkt.sol[self.n..]);
        Ok(())
    }

    /// Recover into `q_phys`, `v` with the partition of the history in
    /// force at t (see [`Partitioning::physical`]).
    fn recover_in_history(&mut self, t: f64, y: &[f64]) -> Result<(), EvalError> {
        let Some(k) = self.partition_index(t) else {
            return self.recover(t, y, true);
        };
        let near = |ts: f64| (t - ts).abs() <= 1e-9 * ts.abs().max(1.0);
        let len = self.history.len();
        // (the other partition, the switch between the two)
        let other = if k + 1 < len && near(self.history[k + 1].0) {
            Some((k + 1, k + 1))
        } else if k >= 1 && near(self.history[k].0) {
            Some((k - 1, k))
        } else {
            None
        };
        let Some((j, sw)) = other else {
            self.use_partition(k);
            return self.recover(t, y, true);
        };
        let mut best = (f64::INFINITY, k);
        for c in [k, j] {
            self.use_partition(c);
            self.q_phys.copy_from_slice(&self.switch_q[sw]);
            if self.recover(t, y, true).is_ok() {
                let d = self
                    .q_phys
                    .iter()
                    .zip(&self.switch_q[sw])
                    .fold(0.0f64, |a, (x, z)| a.max((x - z).abs()));
                if d < best.0 {
                    best = (d, c);
                }
            }
        }
        self.use_partition(best.1);
        self.q_phys.copy_from_slice(&self.switch_q[sw]);
        self.recover(t, y, true)
    }
}

impl<S: MechanicalSystem + ?Sized> OdeProblem for Partitioning<'_, S> {
    fn dim(&self) -> usize {
        2 * self.ind.len()
    }

    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        self.recover(t, y, false)?;
        self.derivative(t, y, dy)
    }

    /// J of y' = [v_i; a_i] by the chain rule through q_d(q_i) and
    /// v_d(q_i, v_i) (see the module documentation).
    fn jacobian(&mut self, t: f64, y: &[f64], jac: &mut DMatrix<f64>) -> Result<(), EvalError> {
        // q, v; `jac` and `lu_d` hold Φ_q and the factored Φ_q,d at q
        self.recover(t, y, false)?;
        self.chain_jacobian(t, jac)
    }

    fn has_exact_jacobian(&self) -> bool {
        self.sys.has_exact_second_derivatives()
    }

    fn after_step(&mut self, t: f64, y: &mut [f64]) -> Result<StepFix, EvalError> {
        self.recover(t, y, false)?;
        self.q_acc.copy_from_slice(&self.q);
        let k_cur = self.condition();
        if self.best_partition() < self.m {
            return Ok(StepFix::Unchanged);
        }
        Ok(self.switch_if_degenerate(t, y, k_cur))
    }

    fn breakpoints(&self) -> &[f64] {
        &self.breakpoints
    }
}

impl<S: MechanicalSystem + ?Sized> Formulation for Partitioning<'_, S> {
    fn name(&self) -> &'static str {
        "partitioning"
    }

    fn initial_state(
        &mut self,
        t0: f64,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<Vec<f64>, FormulationError> {
        self.check_initial(t0, q0, v0, self.name())?;
        let rank = self.best_partition();
        self.start(t0, q0, v0, rank)
    }

    fn physical_state(
        &mut self,
        t: f64,
        y: &[f64],
        q: &mut [f64],
        v: &mut [f64],
        lambda: &mut [f64],
    ) -> Result<(), EvalError> {
        self.physical(t, y, q, v, lambda)
    }
}
