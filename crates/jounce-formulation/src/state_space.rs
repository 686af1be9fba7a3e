//! State-space formulation for implicit integrators: the independent
//! coordinates of a partitioned system, integrated with the exact
//! state-space Jacobian; the dependent ones recovered by Newton at every
//! stage.
//!
//! Haug, Negrut & Iancu 1997, "A state-space based implicit integration
//! algorithm for differential-algebraic equations of multibody dynamics",
//! Mech. Struct. Mach. 25:311–334; Negrut, Haug & Iancu 1997 (SDIRK on the
//! same state-space form). The state is y = [q_i; v_i] as in
//! [`crate::Partitioning`], whose machinery this formulation shares: the
//! dependent coordinates q_d solve Φ(t, q_d; q_i) = 0 (Newton), v_d solves
//! Φ_q,d v_d = −Φ_t − Φ_q,i v_i, the accelerations come from the KKT
//! system, and the Jacobian is exact, chained through the implicit-function
//! derivatives ∂q_d/∂q_i = −Φ_q,d⁻¹Φ_q,i and ∂v_d/∂q_i (see
//! `partitioning.rs`). Any method that integrates a first-order ODE runs
//! it; it is meant for the implicit ones (sdirk2, sdirk3, esdirk43, trbdf2,
//! trapezoidal, bdf, radau5) at steps far beyond the stability limit of
//! explicit methods.
//!
//! **Why a separate formulation.** On studies.md S5 (a double pendulum in
//! body coordinates with a torsional spring k = 1.7e5 N m/rad between the
//! links; its stiff mode has ω = 1535 rad/s, so rk4 is stable up to
//! h ≈ 1.8e-3) `partitioning` with sdirk2 at h = 0.04 (hω = 61) stops at
//! t = 0.36: the stage Newton iterations contract too slowly or diverge
//! even with a fresh Jacobian, and the output energy has changed by 2.2 J.
//! The cause is the chart, not the integrator. Full pivoting of Φ_q (both
//! links horizontal, x, y, θ per link) meets a tie — x₁, y₁, θ₁, x₂ and
//! x₁, y₁, x₂, y₂ as dependent coordinates both give κ₁(Φ_q,d) = 4 — and
//! picks (y₂, θ₂) as independent coordinates. In that chart
//! θ₁ = asin(y₂ − ½ sin θ₂): the map q_i → q_d is strongly nonlinear
//! and folds as link 1 turns towards the vertical, the stiff relative
//! angle θ₂ − θ₁ is a nonlinear function of y (so even the Hermite dense
//! output of y puts energy into the spring), and the stage equations are
//! far from the linear problem Newton solves in one iteration.
//! Re-partitioning switches to the angles only at t ≈ 0.5, when κ₁ has
//! doubled. Even solved by full Newton (the SDIRK driver's fallback at a
//! fixed step), partitioning at h = 0.04 ends with an energy error of
//! 1.4 J at the steps and 95 J at the outputs. With the joint angles
//! independent (x₁, y₁, x₂, y₂ dependent) the constraints are linear in
//! q_d, Φ_q,d is constant, the recovery is one linear solve, and sdirk2,
//! sdirk3, trapezoidal, esdirk43 and radau5 all complete S5 at h = 0.04
//! with a single Jacobian, changing the energy by 3e-4 to 3.5e-2 J. The
//! other suspects are minor on S5: the stage predictor of the SDIRK driver
//! (y_n plus hγ times the previous stage derivative) saves about 10 % of
//! the Newton iterations against starting from y_n, and the Jacobian
//! reuse of modified Newton is right once the chart is good (one Jacobian
//! for the whole run).
//!
//! What the formulation does differently from `partitioning`:
//! - **Partition.** Dependent coordinates are preferably those in which
//!   the constraints are linear (∂Φ_q/∂q_j = 0, found once at the start from
//!   the constraint Hessian, [`SystemQueries::constraint_hessian_product`]),
//!   by threshold pivoting: at each elimination step the column is the
//!   best-pivoted linear one whose pivot is at least
//!   [`StateSpace::PIVOT_THRESHOLD`] times the largest remaining entry,
//!   otherwise the full-pivoting choice. The recovery is then linear (or
//!   nearly so) and the stiff coordinates stay linear in y. This is not in
//!   Haug, Negrut & Iancu (they take the full-pivoting choice); it is what
//!   S5 shows is needed.
//! - **Warm start.** Every evaluation inside a step starts the Newton
//!   iteration for q_d from the last accepted step, moved to first order
//!   along the constraint manifold, q_d ≈ q_d,n + (∂q_d/∂q_i)_n (q_i − q_i,n),
//!   never from the last evaluation (which may be a diverging iterate of
//!   the integrator's Newton, from which a folded chart converges to
//!   another branch). f(t, y) is then a function of (t, y) alone within a
//!   step, as the integrator's Newton assumes; if the prediction fails,
//!   the accepted q itself is tried.
//! - **No re-partitioning inside a step.** The partition is checked only
//!   after an accepted step ([`OdeProblem::after_step`]), as in
//!   `partitioning` (κ₁(Φ_q,d) against `ratio` × that of the preferred
//!   block, or `cond_max`), and a change restarts the method.
//!
//! On S5 the preferred block is the same in every configuration, so the
//! partition never changes.

use jounce_integrate::{EvalError, OdeProblem, StepFix};
use jounce_mechanics::{MechanicalSystem, SparseMatrix, SystemQueries};
use nalgebra::DMatrix;

use crate::error::FormulationError;
use crate::formulation::Formulation;
use crate::kkt::PIVOT_TOL;
use crate::partitioning::{Partitioning, Start, SPARSE_MIN_COORDINATES};
use crate::sparse_partition::{DependentBlock, Rule};

/// The sparse path's warm start: Φ_q and the factored Φ_q,d at the last
/// accepted step, so that (∂q_d/∂q_i)_n Δq_i = −Φ_q,d⁻¹ (Φ_q,i Δq_i) costs
/// two sparse products and a solve instead of the dense n × p matrix.
#[derive(Debug)]
struct AcceptedBlock {
    jac: SparseMatrix,
    block: DependentBlock,
    /// Δq (len n, zero on the dependent coordinates) and Φ_q,i Δq_i (len m).
    dq: Vec<f64>,
    rhs: Vec<f64>,
}

/// State-space formulation for implicit integrators (see the module
/// documentation).
pub struct StateSpace<'a, S: MechanicalSystem + ?Sized> {
    core: Partitioning<'a, S>,
    /// ∂q/∂q_i (n × p) at the last accepted step.
    b_acc: DMatrix<f64>,
    /// Whether the constraints are linear in coordinate j.
    linear: Vec<bool>,
    /// Elimination copy of Φ_q (m × n), a Hessian product (m × n).
    work: DMatrix<f64>,
    hess: DMatrix<f64>,
    unit: Vec<f64>,
    row_used: Vec<bool>,
    col_used: Vec<bool>,
    col_max: Vec<f64>,
    /// The sparse path's warm start (instead of `b_acc`).
    acc: Option<AcceptedBlock>,
}

impl<'a, S: MechanicalSystem + ?Sized> StateSpace<'a, S> {
    /// Smallest pivot, relative to the largest remaining entry of Φ_q, at
    /// which a coordinate the constraints are linear in is preferred as a
    /// dependent one.
    pub const PIVOT_THRESHOLD: f64 = 0.1;

    /// Re-partition when κ₁(Φ_q,d) exceeds `ratio` × that of the preferred
    /// block or exceeds `cond_max` (as [`Partitioning::new`]).
    ///
    /// # Errors
    /// [`FormulationError::BadParameter`] unless ratio ≥ 1 and cond_max > 1.
    pub fn new(sys: &'a S, ratio: f64, cond_max: f64) -> Result<Self, FormulationError> {
        let sparse = sys.sparsity().is_some() && sys.nq() >= SPARSE_MIN_COORDINATES;
        Self::with_paths(sys, ratio, cond_max, sparse, sparse)
    }

    /// [`StateSpace::new`] with the path chosen (as
    /// [`Partitioning::with_paths`]). For tests of the sparse path
    /// against the dense one.
    ///
    /// # Errors
    /// As [`StateSpace::new`].
    #[doc(hidden)]
    pub fn with_paths(
        sys: &'a S,
        ratio: f64,
        cond_max: f64,
        sparse: bool,
        sparse_choice: bool,
    ) -> Result<Self, FormulationError> {
        let core =
            Partitioning::with_paths(sys, ratio, cond_max, sparse, sparse_choice).map_err(|e| {
                match e {
                    FormulationError::BadParameter { detail, .. } => {
                        FormulationError::BadParameter {
                            formulation: "state_space".into(),
                            detail,
                        }
                    }
                    other => other,
                }
            })?;
        let (n, m) = (sys.nq(), sys.nc());
        let p = n - m.min(n);
        let acc = core.sp.as_ref().map(|sp| AcceptedBlock {
            jac: sp.jac.clone(),
            block: DependentBlock::new(&sp.jac, &core.dep),
            dq: vec![0.0; n],
            rhs: vec![0.0; m],
        });
        // no dense n × p or m × n matrix on the sparse path (the dense
        // Φ_q for a dense choice of the partition only)
        let (bn, bp) = if acc.is_some() { (0, 0) } else { (n, p) };
        let dense_choice = core.sp.as_ref().is_none_or(|sp| !sp.sparse_choice);
        let (wm, wn) = if dense_choice { (m, n) } else { (0, 0) };
        let (hm, hn) = if acc.is_some() { (0, 0) } else { (m, n) };
        Ok(Self {
            acc,
            core,
            b_acc: DMatrix::zeros(bn, bp),
            linear: vec![false; n],
            work: DMatrix::zeros(wm, wn),
            hess: DMatrix::zeros(hm, hn),
            unit: vec![0.0; n],
            row_used: vec![false; m],
            col_used: vec![false; n],
            col_max: vec![0.0; n],
        })
    }

    /// Current independent coordinates (indices into q).
    pub fn independent(&self) -> &[usize] {
        self.core.independent()
    }

    /// Current dependent coordinates (indices into q).
    pub fn dependent(&self) -> &[usize] {
        self.core.dependent()
    }

    /// Partitions used so far: (start time, dependent coordinates).
    pub fn history(&self) -> &[(f64, Vec<usize>)] {
        self.core.history()
    }

    /// Number of re-partitionings so far.
    pub fn n_repartitions(&self) -> usize {
        self.core.n_repartitions()
    }

    /// Which coordinates the constraints are linear in, at (t, q):
    /// ∂Φ_q/∂q_j = 0 (relative to the largest second derivative).
    fn find_linear(&mut self, t: f64, q: &[f64]) {
        if self.core.sp.is_some() {
            self.find_linear_sparse(t, q);
            return;
        }
        let sys = self.core.sys;
        let n = self.core.n;
        for j in 0..n {
            self.unit.fill(0.0);
            self.unit[j] = 1.0;
            sys.constraint_hessian_product(t, q, &self.unit, &mut self.hess);
            self.col_max[j] = self.hess.amax();
        }
        let largest = self.col_max.iter().fold(0.0f64, |a, &b| a.max(b));
        for j in 0..n {
            self.linear[j] = self.col_max[j] <= 1e-12 * largest;
        }
    }

    /// [`StateSpace::find_linear`] on the sparse path (set-up; allocates):
    /// ∂Φ_q/∂q_j by finite differences of the sparse Φ_q, O(nnz) per
    /// group of coordinates that share no constraint row (a greedy
    /// colouring: a handful of groups on a chain), instead of n dense
    /// m × n Hessian products. The constraints of body coordinates are
    /// linear in the translations, whose differences vanish exactly.
    fn find_linear_sparse(&mut self, t: f64, q: &[f64]) {
        let sys = self.core.sys;
        let n = self.core.n;
        let sp = self.core.sp.as_ref().expect("sparse");
        let pattern = sp.jac.clone();
        let m = pattern.nrows();
        let mut rows_of: Vec<Vec<usize>> = vec![Vec::new(); n];
        for i in 0..m {
            for &j in pattern.row(i).0 {
                rows_of[j].push(i);
            }
        }
        // greedy colouring of the coordinates sharing a row
        let mut colour = vec![usize::MAX; n];
        let mut seen = Vec::new();
        let mut ncol = 0;
        for j in 0..n {
            seen.clear();
            for &i in &rows_of[j] {
                for &k in pattern.row(i).0 {
                    if colour[k] != usize::MAX {
                        seen.push(colour[k]);
                    }
                }
            }
            let c = (0..).find(|c| !seen.contains(c)).expect("a free colour");
            colour[j] = c;
            ncol = ncol.max(c + 1);
        }
        let fill = sys.sparsity().expect("sparse");
        let mut j0 = pattern.clone();
        let mut j1 = pattern.clone();
        fill.fill_constraint_jacobian(t, q, &mut j0);
        let mut qp = q.to_vec();
        let delta: Vec<f64> = q.iter().map(|x| 1e-7 * x.abs().max(1.0)).collect();
        // the coordinate of the group in each row
        let mut owner = vec![usize::MAX; m];
        self.col_max.fill(0.0);
        for c in 0..ncol {
            qp.copy_from_slice(q);
            owner.fill(usize::MAX);
            for j in (0..n).filter(|&j| colour[j] == c) {
                qp[j] += delta[j];
                for &i in &rows_of[j] {
                    owner[i] = j;
                }
            }
            fill.fill_constraint_jacobian(t, &qp, &mut j1);
            for i in 0..m {
                let j = owner[i];
                if j == usize::MAX {
                    continue;
                }
                for e in pattern.row_range(i) {
                    let d = ((j1.values[e] - j0.values[e]) / delta[j]).abs();
                    self.col_max[j] = self.col_max[j].max(d);
                }
            }
        }
        let largest = self.col_max.iter().fold(0.0f64, |a, &b| a.max(b));
        for j in 0..n {
            self.linear[j] = self.col_max[j] <= 1e-12 * largest;
        }
    }

    /// The preferred dependent coordinates for the Φ_q in `core.jac`,
    /// sorted, into `core.cand` (threshold pivoting that prefers the
    /// coordinates the constraints are linear in). Returns the numerical
    /// rank of Φ_q.
    fn preferred_partition(&mut self) -> usize {
        let (n, m) = (self.core.n, self.core.m);
        if let Some(sp) = self.core.sp.as_mut() {
            if sp.sparse_choice {
                let rule = Rule::Preferred {
                    linear: &self.linear,
                    threshold: Self::PIVOT_THRESHOLD,
                };
                let r = sp.elim.factor(&sp.jac, rule, PIVOT_TOL);
                if r == m {
                    self.core.cand.copy_from_slice(sp.elim.pivots());
                    self.core.cand.sort_unstable();
                }
                return r;
            }
            sp.jac.to_dense_into(&mut self.core.jac);
        }
        self.work.copy_from(&self.core.jac);
        self.row_used.fill(false);
        self.col_used.fill(false);
        let mut first = 0.0;
        for k in 0..m {
            let mut gmax = 0.0f64;
            for j in (0..n).filter(|&j| !self.col_used[j]) {
                let mut c = 0.0f64;
                for i in (0..m).filter(|&i| !self.row_used[i]) {
                    c = c.max(self.work[(i, j)].abs());
                }
                self.col_max[j] = c;
                gmax = gmax.max(c);
            }
            if k == 0 {
                first = gmax;
            }
            if gmax == 0.0 || gmax <= PIVOT_TOL * first {
                return k;
            }
            // the best-pivoted linear column above the threshold, else the
            // full-pivoting column
            let pick = |lin: bool| {
                (0..n)
                    .filter(|&j| !self.col_used[j] && (!lin || self.linear[j]))
                    .filter(|&j| self.col_max[j] >= Self::PIVOT_THRESHOLD * gmax)
                    .fold(None, |b: Option<usize>, j| match b {
                        Some(i) if self.col_max[i] >= self.col_max[j] => Some(i),
                        _ => Some(j),
                    })
            };
            let Some(col) = pick(true).or_else(|| pick(false)) else {
                return k;
            };
            let mut row = 0;
            let mut best = -1.0;
            for i in (0..m).filter(|&i| !self.row_used[i]) {
                if self.work[(i, col)].abs() > best {
                    best = self.work[(i, col)].abs();
                    row = i;
                }
            }
            self.row_used[row] = true;
            self.col_used[col] = true;
            self.core.cand[k] = col;
            let piv = self.work[(row, col)];
            for i in (0..m).filter(|&i| !self.row_used[i]) {
                let f = self.work[(i, col)] / piv;
                if f != 0.0 {
                    for j in (0..n).filter(|&j| !self.col_used[j]) {
                        let r = self.work[(row, j)];
                        self.work[(i, j)] -= f * r;
                    }
                }
            }
        }
        self.core.cand.sort_unstable();
        m
    }

    /// ∂q/∂q_i at the last recovery (whose Φ_q,d for the current partition
    /// must be factored in `core.lu_d`) into `b_acc`.
    fn keep_sensitivities(&mut self) {
        if let (Some(acc), Some(sp)) = (self.acc.as_mut(), self.core.sp.as_ref()) {
            acc.jac.values.copy_from_slice(&sp.jac.values);
            if acc.block.dep != self.core.dep {
                // a new partition (cold: allocates)
                acc.block = DependentBlock::new(&acc.jac, &self.core.dep);
            }
            acc.block.factor(&acc.jac, PIVOT_TOL);
            return;
        }
        self.core.sensitivities();
        self.b_acc.copy_from(&self.core.bmat);
    }

    /// Recover q, v from y, warm-starting from the last accepted step moved
    /// along the manifold to first order (then from the accepted q).
    fn recover(&mut self, t: f64, y: &[f64]) -> Result<(), EvalError> {
        let c = &mut self.core;
        c.qtmp.copy_from_slice(&c.q_acc);
        if let Some(acc) = self.acc.as_mut() {
            // q_d ≈ q_d,n − Φ_q,d⁻¹ Φ_q,i (q_i − q_i,n), at the accepted step
            acc.dq.fill(0.0);
            for k in 0..c.ind.len() {
                acc.dq[c.ind[k]] = y[k] - c.q_acc[c.ind[k]];
            }
            acc.rhs.fill(0.0);
            acc.jac.mul_add(&acc.dq, &mut acc.rhs);
            if acc.block.is_regular() {
                acc.block.solve(&mut acc.rhs);
                for (kk, &d) in c.dep.iter().enumerate() {
                    c.qtmp[d] -= acc.rhs[kk];
                }
            }
            return c.recover_from(t, y, &[Start::Prepared, Start::Accepted], false);
        }
        for k in 0..c.ind.len() {
            let dq = y[k] - c.q_acc[c.ind[k]];
            for &d in &c.dep {
                c.qtmp[d] += self.b_acc[(d, k)] * dq;
            }
        }
        c.recover_from(t, y, &[Start::Prepared, Start::Accepted], false)
    }
}

impl<S: MechanicalSystem + ?Sized> OdeProblem for StateSpace<'_, S> {
    fn dim(&self) -> usize {
        2 * self.core.ind.len()
    }

    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        self.recover(t, y)?;
        self.core.derivative(t, y, dy)
    }

    /// The exact state-space Jacobian (see `partitioning.rs`).
    fn jacobian(&mut self, t: f64, y: &[f64], jac: &mut DMatrix<f64>) -> Result<(), EvalError> {
        self.recover(t, y)?;
        self.core.chain_jacobian(t, jac)
    }

    fn has_exact_jacobian(&self) -> bool {
        self.core.sys.has_exact_second_derivatives()
    }

    /// The accepted point becomes the warm start of the next step; the
    /// partition changes (and the method restarts) only here.
    fn after_step(&mut self, t: f64, y: &mut [f64]) -> Result<StepFix, EvalError> {
        self.recover(t, y)?;
        self.core.q_acc.copy_from_slice(&self.core.q);
        // factors the current Φ_q,d at q into lu_d
        let k_cur = self.core.condition();
        self.keep_sensitivities();
        if self.preferred_partition() < self.core.m {
            return Ok(StepFix::Unchanged);
        }
        let fix = self.core.switch_if_degenerate(t, y, k_cur);
        if fix == StepFix::Modified {
            // lu_d holds the new block; the sensitivities change meaning
            self.keep_sensitivities();
        }
        Ok(fix)
    }

    fn breakpoints(&self) -> &[f64] {
        self.core.breakpoints()
    }
}

impl<S: MechanicalSystem + ?Sized> Formulation for StateSpace<'_, S> {
    fn name(&self) -> &'static str {
        "state_space"
    }

    fn initial_state(
        &mut self,
        t0: f64,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<Vec<f64>, FormulationError> {
        self.core.check_initial(t0, q0, v0, self.name())?;
        self.find_linear(t0, q0);
        let rank = self.preferred_partition();
        let y0 = self.core.start(t0, q0, v0, rank)?;
        // Φ_q,d of the chosen partition at q0 for the first warm start
        self.core.condition();
        self.keep_sensitivities();
        Ok(y0)
    }

    fn physical_state(
        &mut self,
        t: f64,
        y: &[f64],
        q: &mut [f64],
        v: &mut [f64],
        lambda: &mut [f64],
    ) -> Result<(), EvalError> {
        self.core.physical(t, y, q, v, lambda)
    }
}
