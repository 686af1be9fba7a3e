//! Coordinate partitioning of systems whose positions are not velocities
//! (n_q > n_v: unit quaternions), for `partitioning` and `state_space`.
//!
//! The quaternions' own constraints c(q) = 0 (|p|² − 1 per body,
//! [`MechanicalSystem::manifold_constraints`]) join the joints', and the
//! positions are partitioned as Wehage & Haug partition Euler parameters
//! (Haug 1989, *Computer-Aided Kinematics and Dynamics of Mechanical
//! Systems*, §11.4: the normalisation constraints among Φ, generalized
//! coordinate partitioning of q = [r; p]): a quaternion component is as
//! good an independent coordinate as any other once |p|² = 1 is among the
//! equations that fix the dependent ones. Velocities are partitioned
//! separately among v (n_v, the angular velocities in the body frame),
//! so that no quaternion rate enters the state:
//!
//! ```text
//! positions:  F(t, q) = [Φ(t, q); c(q)] = 0,   K = ∂F/∂q = [Φ_v L; c_q]
//!             q = [q_i; q_d], K_d regular ((m + k) × (m + k))
//! velocities: Φ_v v = −Φ_t,   v = [v_i; v_d], Φ_v,d regular (m × m)
//! state:      y = [q_i; v_i] (2p, p = n_v − m = n_q − m − k)
//! y' = [(T(q) v)_i; a_i],     a from the KKT system
//! ```
//!
//! with Φ_v the velocity Jacobian (n_c × n_v), L = T⁺ the map from a
//! position change to its velocity-space increment
//! ([`MechanicalSystem::position_increment`]; ∂Φ/∂q = Φ_v L because no
//! quantity changes along p's radial direction) and T the kinematic map
//! ([`MechanicalSystem::position_derivative`]). Both are exact: no local
//! chart, no dexp⁻¹. In planar coordinates (L = T = I, k = 0) this is
//! [`crate::Partitioning`] with one partition for both; the planar systems
//! keep that type, this one runs only when n_q ≠ n_v.
//!
//! **Exact Jacobian.** With B = ∂q/∂q_i (n_q × p; I on the independent
//! rows, −K_d⁻¹K_i on the dependent ones), W = ∂v/∂v_i (n_v × p; I and
//! −Φ_v,d⁻¹Φ_v,i), V = ∂v/∂q_i (n_v × p; 0 and
//! −Φ_v,d⁻¹((Φ_v v)_v + Φ_vt) L B, from differentiating Φ_v v + Φ_t = 0),
//! and ∂a/∂q = (∂a/∂δ) L:
//!
//! ```text
//! J = [ (∂(Tv)/∂q B + T V)_i       (T W)_i     ]
//!     [ (a_δ L B + a_v V)_i         (a_v W)_i   ]
//! ```
//!
//! (∂(Tv)/∂q from [`MechanicalSystem::kinematic_map_derivative`], a_δ,
//! a_v from the differentiated KKT system, `acceleration_jacobian.rs`).
//!
//! **Partitions.** Each is the full-pivoting choice of its Jacobian; after
//! every accepted step κ₁ of each dependent block is compared with the
//! current full-pivoting choice's, and both partitions are renewed (the
//! step returns [`StepFix::Modified`], restarting the method) when either
//! exceeds `ratio` times the candidate's or `cond_max`, as in
//! [`crate::Partitioning`]. Warm starts of the Newton iteration for q_d:
//! `partitioning` starts from the last evaluation, then from the last
//! accepted step; `state_space` (for implicit methods) only from the
//! accepted step, so that f(t, y) is a function of (t, y) alone within a
//! step. [`Formulation::physical_state`] reads y with the partitions in
//! force at t (call it in time order); next to a switch time both are
//! tried and the q nearer the configuration at the switch is kept.

use jounce_integrate::{EvalError, OdeProblem, StepFix};
use jounce_mechanics::{MechanicalSystem, SystemQueries};
use nalgebra::DMatrix;

use crate::acceleration_jacobian::AccelerationJacobian;
use crate::augmented::check_kkt;
use crate::error::FormulationError;
use crate::formulation::Formulation;
use crate::kkt::{worst_row, Kkt, PIVOT_TOL};
use crate::lu::FullPivLu;
use crate::partitioning::Start;

/// Maximum Newton iterations for the dependent positions.
const MAX_NEWTON: usize = 25;

/// The partitions in force from a time on: (start, dependent positions,
/// dependent velocities).
type Partition = (f64, Vec<usize>, Vec<usize>);

/// Partitioning of a system with n_q > n_v (module documentation).
pub struct ManifoldPartitioning<'a, S: MechanicalSystem + ?Sized> {
    sys: &'a S,
    name: &'static str,
    /// Warm start from the accepted step only (`state_space`).
    implicit: bool,
    nq: usize,
    n: usize,
    m: usize,
    k: usize,
    ratio: f64,
    cond_max: f64,
    /// Dependent / independent positions (sorted), m + k and p.
    dep_q: Vec<usize>,
    ind_q: Vec<usize>,
    /// Dependent / independent velocities (sorted), m and p.
    dep_v: Vec<usize>,
    ind_v: Vec<usize>,
    cand_q: Vec<usize>,
    cand_v: Vec<usize>,
    /// The partitions in force, kept while `physical_state` reads the
    /// history.
    save_q: Vec<usize>,
    save_v: Vec<usize>,
    /// q, v of the last recovery; q at the last accepted step; q of the
    /// last `physical_state`; the Newton iterate.
    q: Vec<f64>,
    v: Vec<f64>,
    q_acc: Vec<f64>,
    q_phys: Vec<f64>,
    qtmp: Vec<f64>,
    /// F = [Φ; c] (m + k), Φ_t (m).
    f: Vec<f64>,
    phi_t: Vec<f64>,
    /// Φ_v (m × n), L (n × n_q), c_q (k × n_q), K (m + k × n_q).
    jac: DMatrix<f64>,
    l: DMatrix<f64>,
    c_q: DMatrix<f64>,
    kq: DMatrix<f64>,
    unit: Vec<f64>,
    delta: Vec<f64>,
    /// Full-pivoting LUs of K and Φ_v (the choice) and of their
    /// dependent blocks.
    lu_k: FullPivLu,
    lu_kd: FullPivLu,
    lu_v: FullPivLu,
    lu_vd: FullPivLu,
    /// Scratch of length m + k (r1, w1, e1) and m (rm, wm, em).
    r1: Vec<f64>,
    w1: Vec<f64>,
    e1: Vec<f64>,
    rm: Vec<f64>,
    wm: Vec<f64>,
    em: Vec<f64>,
    kkt: Kkt,
    dacc: AccelerationJacobian,
    /// B (n_q × p), W, V (n × p), (Φ_v v)_v + Φ_vt (m × n), Φ_vt
    /// scratch, and the columns T b, ∂(Tv)/∂q b (n_q).
    bq: DMatrix<f64>,
    wv: DMatrix<f64>,
    vq: DMatrix<f64>,
    hv: DMatrix<f64>,
    pqt: DMatrix<f64>,
    col_n: Vec<f64>,
    col_q: Vec<f64>,
    col_q2: Vec<f64>,
    mark: Vec<bool>,
    history: Vec<Partition>,
    switch_q: Vec<Vec<f64>>,
    breakpoints: Vec<f64>,
}

impl<'a, S: MechanicalSystem + ?Sized> ManifoldPartitioning<'a, S> {
    /// Re-partition when κ₁ of a dependent block exceeds `ratio` × that
    /// of the full-pivoting choice or exceeds `cond_max`; `name` is the
    /// formulation the user chose (`partitioning` or `state_space`, the
    /// latter warm-starting from the accepted step only).
    ///
    /// # Errors
    /// [`FormulationError::BadParameter`] unless ratio ≥ 1 and cond_max > 1.
    pub fn new(
        sys: &'a S,
        name: &'static str,
        ratio: f64,
        cond_max: f64,
    ) -> Result<Self, FormulationError> {
        if !(ratio.is_finite() && ratio >= 1.0 && cond_max > 1.0) {
            return Err(FormulationError::BadParameter {
                formulation: name.into(),
                detail: format!(
                    "partition_ratio must be finite and ≥ 1 (got {ratio}) and \
                     partition_condition_max > 1 (got {cond_max})"
                ),
            });
        }
        let (nq, n, m) = (sys.nq(), sys.nv(), sys.nc());
        let k = nq - n;
        let mk = m + k;
        let p = n - m.min(n);
        Ok(Self {
            sys,
            name,
            implicit: name == "state_space",
            nq,
            n,
            m,
            k,
            ratio,
            cond_max,
            dep_q: vec![0; mk.min(nq)],
            ind_q: vec![0; p],
            dep_v: vec![0; m.min(n)],
            ind_v: vec![0; p],
            cand_q: vec![0; mk.min(nq)],
            cand_v: vec![0; m.min(n)],
            save_q: vec![0; mk.min(nq)],
            save_v: vec![0; m.min(n)],
            q: vec![0.0; nq],
            v: vec![0.0; n],
            q_acc: vec![0.0; nq],
            q_phys: vec![0.0; nq],
            qtmp: vec![0.0; nq],
            f: vec![0.0; mk],
            phi_t: vec![0.0; m],
            jac: DMatrix::zeros(m, n),
            l: DMatrix::zeros(n, nq),
            c_q: DMatrix::zeros(k, nq),
            kq: DMatrix::zeros(mk, nq),
            unit: vec![0.0; nq],
            delta: vec![0.0; n],
            lu_k: FullPivLu::new(mk, nq),
            lu_kd: FullPivLu::new(mk, mk),
            lu_v: FullPivLu::new(m, n),
            lu_vd: FullPivLu::new(m, m),
            r1: vec![0.0; mk],
            w1: vec![0.0; mk],
            e1: vec![0.0; mk],
            rm: vec![0.0; m],
            wm: vec![0.0; m],
            em: vec![0.0; m],
            kkt: Kkt::new(sys),
            dacc: AccelerationJacobian::new(n, m),
            bq: DMatrix::zeros(nq, p),
            wv: DMatrix::zeros(n, p),
            vq: DMatrix::zeros(n, p),
            hv: DMatrix::zeros(m, n),
            pqt: DMatrix::zeros(m, n),
            col_n: vec![0.0; n],
            col_q: vec![0.0; nq],
            col_q2: vec![0.0; nq],
            mark: vec![false; nq],
            history: Vec::new(),
            switch_q: Vec::new(),
            breakpoints: sys.breakpoints(),
        })
    }

    /// Current independent positions (indices into q).
    pub fn independent_positions(&self) -> &[usize] {
        &self.ind_q
    }

    /// Current independent velocities (indices into v).
    pub fn independent_velocities(&self) -> &[usize] {
        &self.ind_v
    }

    /// Number of re-partitionings so far.
    pub fn n_repartitions(&self) -> usize {
        self.history.len().saturating_sub(1)
    }

    /// Φ_v into `jac`, L into `l`, c and c_q, K = [Φ_v L; c_q] into `kq`
    /// at (t, q = `qtmp`), and F = [Φ; c] into `f`.
    fn load(&mut self, t: f64) {
        let (nq, n, m) = (self.nq, self.n, self.m);
        let sys = self.sys;
        let q = &self.qtmp;
        sys.constraints(t, q, &mut self.f[..m]);
        sys.manifold_constraints(q, &mut self.f[m..], &mut self.c_q);
        sys.constraint_jacobian(t, q, &mut self.jac);
        for j in 0..nq {
            self.unit[j] = 1.0;
            sys.position_increment(q, &self.unit, &mut self.delta);
            self.unit[j] = 0.0;
            for r in 0..n {
                self.l[(r, j)] = self.delta[r];
            }
        }
        self.kq.fill(0.0);
        for j in 0..nq {
            for r in 0..n {
                let l = self.l[(r, j)];
                if l != 0.0 {
                    for i in 0..m {
                        self.kq[(i, j)] += self.jac[(i, r)] * l;
                    }
                }
            }
            for i in 0..self.k {
                self.kq[(m + i, j)] = self.c_q[(i, j)];
            }
        }
    }

    /// Load the columns `dep` of `a` into `lu` and factor; the block's
    /// 1-norm.
    fn factor_block(lu: &mut FullPivLu, a: &DMatrix<f64>, dep: &[usize]) -> f64 {
        let mut norm1: f64 = 0.0;
        for (k, &c) in dep.iter().enumerate() {
            let mut s = 0.0;
            for i in 0..a.nrows() {
                lu.set(i, k, a[(i, c)]);
                s += a[(i, c)].abs();
            }
            norm1 = norm1.max(s);
        }
        lu.factor(PIVOT_TOL);
        norm1
    }

    /// The full-pivoting choices of K and Φ_v (loaded) into `cand_q`,
    /// `cand_v`; whether both have full row rank.
    fn best_partition(&mut self) -> bool {
        let mk = self.m + self.k;
        self.lu_k.load(&self.kq);
        let rk = self.lu_k.factor(PIVOT_TOL);
        self.lu_v.load(&self.jac);
        let rv = self.lu_v.factor(PIVOT_TOL);
        if rk < mk || rv < self.m {
            return false;
        }
        for i in 0..mk {
            self.cand_q[i] = self.lu_k.col_at(i);
        }
        self.cand_q.sort_unstable();
        for i in 0..self.m {
            self.cand_v[i] = self.lu_v.col_at(i);
        }
        self.cand_v.sort_unstable();
        true
    }

    /// `ind` ← the complement of `dep` in 0..len.
    fn complement(mark: &mut [bool], dep: &[usize], ind: &mut [usize]) {
        mark.iter_mut().for_each(|x| *x = false);
        for &d in dep {
            mark[d] = true;
        }
        let mut k = 0;
        for (i, &m) in mark.iter().enumerate() {
            if !m {
                ind[k] = i;
                k += 1;
            }
        }
    }

    /// The candidate partitions become the ones in force.
    fn adopt(&mut self) {
        self.dep_q.copy_from_slice(&self.cand_q);
        self.dep_v.copy_from_slice(&self.cand_v);
        let (nq, n) = (self.nq, self.n);
        Self::complement(&mut self.mark[..nq], &self.dep_q, &mut self.ind_q);
        Self::complement(&mut self.mark[..n], &self.dep_v, &mut self.ind_v);
    }

    fn labels(&self) -> String {
        let v: Vec<String> = self
            .dep_q
            .iter()
            .map(|&i| self.sys.coordinate_label(i))
            .collect();
        v.join(", ")
    }

    /// Newton on F(t, q_d; q_i) = 0 from `qtmp` (independent entries
    /// set); on success `qtmp` is q and `jac`, `kq`, `lu_kd` are at it.
    fn newton(&mut self, t: f64) -> Result<(), EvalError> {
        let mk = self.m + self.k;
        let mut last = f64::INFINITY;
        for _ in 0..MAX_NEWTON {
            self.load(t);
            Self::factor_block(&mut self.lu_kd, &self.kq, &self.dep_q);
            if !self.lu_kd.is_regular() {
                return Err(EvalError::Singular {
                    what: "dependent block K_d of [Φ_v L; c_q]".into(),
                    t,
                    detail: format!(
                        "dependent positions {}; lower partition_ratio / \
                         partition_condition_max to re-partition earlier",
                        self.labels()
                    ),
                });
            }
            for i in 0..mk {
                self.r1[i] = -self.f[i];
            }
            self.lu_kd.solve_in_place(&mut self.r1, &mut self.w1);
            let (mut dn, mut qn) = (0.0f64, 0.0f64);
            for (kk, &d) in self.dep_q.iter().enumerate() {
                self.qtmp[d] += self.r1[kk];
                dn = dn.max(self.r1[kk].abs());
                qn = qn.max(self.qtmp[d].abs());
            }
            if !dn.is_finite() {
                break;
            }
            if dn <= 1e-12 * (1.0 + qn) {
                self.load(t);
                Self::factor_block(&mut self.lu_kd, &self.kq, &self.dep_q);
                if self.lu_kd.is_regular() {
                    return Ok(());
                }
                break;
            }
            if dn > 1e3 * last && last < 1e-3 {
                break;
            }
            last = dn;
        }
        self.sys.constraints(t, &self.qtmp, &mut self.f[..self.m]);
        let (r, label) = worst_row(self.sys, &self.f[..self.m]);
        Err(EvalError::NoConvergence {
            what: "dependent positions (Newton on Φ(q) = 0, |p| = 1)".into(),
            t,
            detail: format!(
                "|Φ| = {r:e} in {label}; dependent positions {} (if the partition \
                 degenerated, lower partition_ratio / partition_condition_max)",
                self.labels()
            ),
        })
    }

    /// q, v from y = [q_i; v_i] warm-started from each of `starts` in
    /// turn (into `q_phys` when `phys`, else `q`); on success `jac`,
    /// `kq`, `lu_kd` and `lu_vd` are at q.
    fn recover(
        &mut self,
        t: f64,
        y: &[f64],
        starts: &[Start],
        phys: bool,
    ) -> Result<(), EvalError> {
        let p = self.ind_q.len();
        let mut result = Ok(());
        for &s in starts {
            match s {
                Start::Last => self.qtmp.copy_from_slice(&self.q),
                Start::Accepted => self.qtmp.copy_from_slice(&self.q_acc),
                Start::Phys => self.qtmp.copy_from_slice(&self.q_phys),
                Start::Prepared => {}
            }
            for k in 0..p {
                self.qtmp[self.ind_q[k]] = y[k];
            }
            result = self.newton(t);
            if result.is_ok() {
                break;
            }
        }
        result?;
        // Φ_v,d v_d = −Φ_t − Φ_v,i v_i
        self.sys
            .constraint_time_derivative(t, &self.qtmp, &mut self.phi_t);
        Self::factor_block(&mut self.lu_vd, &self.jac, &self.dep_v);
        if !self.lu_vd.is_regular() {
            return Err(EvalError::Singular {
                what: "dependent block Φ_v,d of the velocity Jacobian".into(),
                t,
                detail: "lower partition_ratio / partition_condition_max".into(),
            });
        }
        for k in 0..p {
            self.v[self.ind_v[k]] = y[p + k];
        }
        for i in 0..self.m {
            let mut s = -self.phi_t[i];
            for k in 0..p {
                s -= self.jac[(i, self.ind_v[k])] * y[p + k];
            }
            self.rm[i] = s;
        }
        self.lu_vd.solve_in_place(&mut self.rm, &mut self.wm);
        for (kk, &d) in self.dep_v.iter().enumerate() {
            self.v[d] = self.rm[kk];
        }
        if phys {
            self.q_phys.copy_from_slice(&self.qtmp);
        } else {
            self.q.copy_from_slice(&self.qtmp);
        }
        Ok(())
    }

    /// The warm starts of an evaluation: the accepted step only
    /// (`state_space`), or the last evaluation then the accepted step.
    fn eval_starts(&self) -> &'static [Start] {
        if self.implicit {
            &[Start::Accepted]
        } else {
            &[Start::Last, Start::Accepted]
        }
    }

    /// The exact Jacobian at the last recovery (module documentation).
    fn chain_jacobian(&mut self, t: f64, jac: &mut DMatrix<f64>) -> Result<(), EvalError> {
        let (nq, n, m) = (self.nq, self.n, self.m);
        let p = self.ind_q.len();
        let mk = m + self.k;
        let sys = self.sys;
        // B = ∂q/∂q_i
        self.bq.fill(0.0);
        for kk in 0..p {
            let c = self.ind_q[kk];
            for i in 0..mk {
                self.r1[i] = -self.kq[(i, c)];
            }
            self.lu_kd.solve_in_place(&mut self.r1, &mut self.w1);
            self.bq[(c, kk)] = 1.0;
            for (r, &d) in self.dep_q.iter().enumerate() {
                self.bq[(d, kk)] = self.r1[r];
            }
        }
        // W = ∂v/∂v_i
        self.wv.fill(0.0);
        for kk in 0..p {
            let c = self.ind_v[kk];
            for i in 0..m {
                self.rm[i] = -self.jac[(i, c)];
            }
            self.lu_vd.solve_in_place(&mut self.rm, &mut self.wm);
            self.wv[(c, kk)] = 1.0;
            for (r, &d) in self.dep_v.iter().enumerate() {
                self.wv[(d, kk)] = self.rm[r];
            }
        }
        // V = ∂v/∂q_i: Φ_v,d V_d = −(H + Φ_vt) L B
        sys.constraint_hessian_product(t, &self.q, &self.v, &mut self.hv);
        sys.constraint_time_jacobian(t, &self.q, &mut self.pqt);
        self.hv += &self.pqt;
        self.vq.fill(0.0);
        for kk in 0..p {
            // δ = L b
            for r in 0..n {
                let mut s = 0.0;
                for j in 0..nq {
                    s += self.l[(r, j)] * self.bq[(j, kk)];
                }
                self.col_n[r] = s;
            }
            for i in 0..m {
                let mut s = 0.0;
                for r in 0..n {
                    s += self.hv[(i, r)] * self.col_n[r];
                }
                self.rm[i] = -s;
            }
            self.lu_vd.solve_in_place(&mut self.rm, &mut self.wm);
            for (r, &d) in self.dep_v.iter().enumerate() {
                self.vq[(d, kk)] = self.rm[r];
            }
        }
        self.dacc
            .compute(sys, &mut self.kkt, t, &self.q, &self.v, 0.0, 0.0)?;
        jac.fill(0.0);
        for kk in 0..p {
            // position rows: ∂(Tv)/∂q b + T (V e_k), and T (W e_k)
            for j in 0..nq {
                self.unit[j] = self.bq[(j, kk)];
            }
            sys.kinematic_map_derivative(&self.q, &self.v, &self.unit, &mut self.col_q);
            for r in 0..n {
                self.col_n[r] = self.vq[(r, kk)];
            }
            sys.position_derivative(&self.q, &self.col_n, &mut self.col_q2);
            for (row, &iq) in self.ind_q.iter().enumerate() {
                jac[(row, kk)] = self.col_q[iq] + self.col_q2[iq];
            }
            for r in 0..n {
                self.col_n[r] = self.wv[(r, kk)];
            }
            sys.position_derivative(&self.q, &self.col_n, &mut self.col_q2);
            for (row, &iq) in self.ind_q.iter().enumerate() {
                jac[(row, p + kk)] = self.col_q2[iq];
            }
            // velocity rows: a_δ L B + a_v V, a_v W; δ = L b
            for r in 0..n {
                let mut s = 0.0;
                for j in 0..nq {
                    s += self.l[(r, j)] * self.bq[(j, kk)];
                }
                self.col_n[r] = s;
            }
            for (row, &iv) in self.ind_v.iter().enumerate() {
                let (mut dq, mut dv) = (0.0, 0.0);
                for r in 0..n {
                    let (aq, av) = (self.dacc.da_dq[(iv, r)], self.dacc.da_dv[(iv, r)]);
                    dq += aq * self.col_n[r] + av * self.vq[(r, kk)];
                    dv += av * self.wv[(r, kk)];
                }
                jac[(p + row, kk)] = dq;
                jac[(p + row, p + kk)] = dv;
            }
        }
        self.unit.fill(0.0);
        Ok(())
    }

    /// κ₁ of the current blocks K_d and Φ_v,d (at the last recovery)
    /// against the full-pivoting candidates'; adopt the candidates and
    /// rewrite y when either block degenerated.
    fn switch_if_degenerate(&mut self, t: f64, y: &mut [f64]) -> StepFix {
        let nk = Self::factor_block(&mut self.lu_kd, &self.kq, &self.dep_q);
        let kq_cur = self.lu_kd.cond1(nk, &mut self.e1, &mut self.w1);
        let nv = Self::factor_block(&mut self.lu_vd, &self.jac, &self.dep_v);
        let kv_cur = self.lu_vd.cond1(nv, &mut self.em, &mut self.wm);
        if !self.best_partition() {
            return StepFix::Unchanged;
        }
        let nk = Self::factor_block(&mut self.lu_kd, &self.kq, &self.cand_q);
        let kq_best = self.lu_kd.cond1(nk, &mut self.e1, &mut self.w1);
        let nv = Self::factor_block(&mut self.lu_vd, &self.jac, &self.cand_v);
        let kv_best = self.lu_vd.cond1(nv, &mut self.em, &mut self.wm);
        let degenerate = |cur: f64, best: f64, ratio: f64, max: f64| {
            best < cur && (cur > ratio * best || cur > max)
        };
        let switch = (self.cand_q != self.dep_q
            && degenerate(kq_cur, kq_best, self.ratio, self.cond_max))
            || (self.cand_v != self.dep_v
                && degenerate(kv_cur, kv_best, self.ratio, self.cond_max));
        if !switch {
            return StepFix::Unchanged;
        }
        self.adopt();
        self.history
            .push((t, self.cand_q.clone(), self.cand_v.clone()));
        self.switch_q.push(self.q.clone());
        self.write_state(y);
        StepFix::Modified
    }

    /// y = [q_i; v_i] from the recovered q, v.
    fn write_state(&self, y: &mut [f64]) {
        let p = self.ind_q.len();
        for k in 0..p {
            y[k] = self.q[self.ind_q[k]];
            y[p + k] = self.v[self.ind_v[k]];
        }
    }

    /// Index of the partitions in force at t.
    fn partition_index(&self, t: f64) -> usize {
        self.history
            .iter()
            .rposition(|(ts, _, _)| *ts <= t)
            .unwrap_or(0)
    }

    fn use_partition(&mut self, i: usize) {
        self.cand_q.copy_from_slice(&self.history[i].1);
        self.cand_v.copy_from_slice(&self.history[i].2);
        self.adopt();
    }

    /// Recover into `q_phys`, `v` with the partitions in force at t; next
    /// to a switch both are tried from the q at the switch and the nearer
    /// result kept.
    fn recover_in_history(&mut self, t: f64, y: &[f64]) -> Result<(), EvalError> {
        let i = self.partition_index(t);
        let near = |ts: f64| (t - ts).abs() <= 1e-9 * ts.abs().max(1.0);
        let len = self.history.len();
        let other = if i + 1 < len && near(self.history[i + 1].0) {
            Some((i + 1, i + 1))
        } else if i >= 1 && near(self.history[i].0) {
            Some((i - 1, i))
        } else {
            None
        };
        let Some((j, sw)) = other else {
            self.use_partition(i);
            return self.recover(t, y, &[Start::Phys, Start::Accepted], true);
        };
        let mut best = (f64::INFINITY, i);
        for c in [i, j] {
            self.use_partition(c);
            self.q_phys.copy_from_slice(&self.switch_q[sw]);
            if self.recover(t, y, &[Start::Phys], true).is_ok() {
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
        self.recover(t, y, &[Start::Phys], true)
    }
}

impl<S: MechanicalSystem + ?Sized> OdeProblem for ManifoldPartitioning<'_, S> {
    fn dim(&self) -> usize {
        2 * self.ind_q.len()
    }

    /// y' = [(T(q) v)_i; a_i].
    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        let starts = self.eval_starts();
        self.recover(t, y, starts, false)?;
        let p = self.ind_q.len();
        self.kkt
            .accelerations(self.sys, t, &self.q, &self.v, 0.0, 0.0)?;
        self.sys
            .position_derivative(&self.q, &self.v, &mut self.col_q);
        for k in 0..p {
            dy[k] = self.col_q[self.ind_q[k]];
            dy[p + k] = self.kkt.sol[self.ind_v[k]];
        }
        Ok(())
    }

    /// The chain rule through q_d(q_i), v_d(q_i, v_i) (module
    /// documentation).
    fn jacobian(&mut self, t: f64, y: &[f64], jac: &mut DMatrix<f64>) -> Result<(), EvalError> {
        let starts = self.eval_starts();
        self.recover(t, y, starts, false)?;
        self.chain_jacobian(t, jac)
    }

    fn has_exact_jacobian(&self) -> bool {
        self.sys.has_exact_second_derivatives()
    }

    fn after_step(&mut self, t: f64, y: &mut [f64]) -> Result<StepFix, EvalError> {
        let starts = self.eval_starts();
        self.recover(t, y, starts, false)?;
        self.q_acc.copy_from_slice(&self.q);
        Ok(self.switch_if_degenerate(t, y))
    }

    fn breakpoints(&self) -> &[f64] {
        &self.breakpoints
    }
}

impl<S: MechanicalSystem + ?Sized> Formulation for ManifoldPartitioning<'_, S> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn initial_state(
        &mut self,
        t0: f64,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<Vec<f64>, FormulationError> {
        check_kkt(self.sys, &mut self.kkt, t0, q0, v0, self.name)?;
        let (n, m) = (self.n, self.m);
        if m >= n {
            return Err(FormulationError::BadParameter {
                formulation: self.name.into(),
                detail: format!(
                    "the system has {n} velocities and {m} constraint equations: \
                     no independent coordinates to integrate (use 'augmented')"
                ),
            });
        }
        // q0 on its manifold (|p| = 1)
        self.sys
            .integrate_position(q0, &vec![0.0; n], &mut self.qtmp);
        self.load(t0);
        if !self.best_partition() {
            return Err(FormulationError::SingularJacobian(format!(
                "at t = {t0}: the constraint Jacobian is rank deficient"
            )));
        }
        self.adopt();
        self.history.clear();
        self.history
            .push((t0, self.cand_q.clone(), self.cand_v.clone()));
        self.q.copy_from_slice(&self.qtmp);
        self.v.copy_from_slice(v0);
        self.q_acc.copy_from_slice(&self.qtmp);
        self.q_phys.copy_from_slice(&self.qtmp);
        self.switch_q.clear();
        self.switch_q.push(self.qtmp.clone());
        let mut y = vec![0.0; 2 * self.ind_q.len()];
        self.write_state(&mut y);
        Ok(y)
    }

    fn physical_state(
        &mut self,
        t: f64,
        y: &[f64],
        q: &mut [f64],
        v: &mut [f64],
        lambda: &mut [f64],
    ) -> Result<(), EvalError> {
        self.save_q.copy_from_slice(&self.dep_q);
        self.save_v.copy_from_slice(&self.dep_v);
        let r = self.recover_in_history(t, y).and_then(|_| {
            self.kkt
                .accelerations(self.sys, t, &self.q_phys, &self.v, 0.0, 0.0)
        });
        self.cand_q.copy_from_slice(&self.save_q);
        self.cand_v.copy_from_slice(&self.save_v);
        self.adopt();
        r?;
        q.copy_from_slice(&self.q_phys);
        v.copy_from_slice(&self.v);
        lambda.copy_from_slice(&self.kkt.sol[self.n..]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jounce_mechanics::{assemble, SpatialSystem};

    /// The spatial examples: the heavy top and the spatial double
    /// pendulum (the driven spatial slider-crank has no degree of freedom
    /// left, see below).
    fn cases() -> Vec<(&'static str, SpatialSystem)> {
        [
            (
                "heavy top",
                include_str!("../../../examples/heavy_top.toml"),
            ),
            (
                "spatial double pendulum",
                include_str!("../../../examples/spatial_double_pendulum.toml"),
            ),
        ]
        .into_iter()
        .map(|(what, text)| {
            let model = jounce_model::from_str(text, what).unwrap();
            (what, SpatialSystem::from_model(&model).unwrap())
        })
        .collect()
    }

    /// The driven spatial slider-crank is kinematic (18 constraint rows,
    /// 18 velocities): nothing is independent, and both formulations
    /// refuse it by name, as they refuse a planar kinematic mechanism.
    #[test]
    fn a_kinematic_spatial_model_is_refused_by_name() {
        let text = include_str!("../../../examples/spatial_slider_crank.toml");
        let model = jounce_model::from_str(text, "slider-crank").unwrap();
        let sys = SpatialSystem::from_model(&model).unwrap();
        let (q0, v0) = sys.initial_state();
        let asm = assemble(&sys, 0.0, &q0, &v0, 1e-12).unwrap();
        assert_eq!((sys.nv(), sys.nc()), (18, 18));
        for name in ["partitioning", "state_space"] {
            let mut f = ManifoldPartitioning::new(&sys, name, 2.0, 1e6).unwrap();
            let e = f.initial_state(0.0, &asm.q, &asm.v).unwrap_err();
            let msg = e.to_string();
            assert!(
                msg.contains(name) && msg.contains("no independent coordinates"),
                "{msg}"
            );
        }
    }

    /// The Jacobian of y' = f(t, y) agrees with central differences of f
    /// at a state moved off the initial one (both warm starts: the
    /// accepted-step start of state_space with f a function of (t, y)
    /// alone), relative to max(1, |J|): below 1e-6 (central differences
    /// with h = 1e-6 through a Newton recovery converged to 1e-12; a
    /// missing term such as ∂(Tv)/∂q or V gives O(1e-2) or more). The
    /// recovered state satisfies Φ = 0, |p| = 1 and Φ_v v + Φ_t = 0.
    #[test]
    fn the_state_space_jacobian_matches_central_differences_on_spatial_models() {
        for (what, sys) in cases() {
            let (q0, v0) = sys.initial_state();
            let asm = assemble(&sys, 0.0, &q0, &v0, 1e-12).unwrap();
            let mut f = ManifoldPartitioning::new(&sys, "state_space", 2.0, 1e6).unwrap();
            let y0 = f.initial_state(0.0, &asm.q, &asm.v).unwrap();
            let nd = y0.len();
            assert_eq!(nd, 2 * (sys.nv() - sys.nc()), "{what}");
            let t = 0.05;
            let y: Vec<f64> = y0
                .iter()
                .enumerate()
                .map(|(i, x)| x + 1e-3 * ((i % 3) as f64 - 1.0) + 5e-4)
                .collect();
            let mut jac = DMatrix::from_element(nd, nd, f64::NAN);
            f.jacobian(t, &y, &mut jac).unwrap();
            let mut phi = vec![0.0; sys.nc()];
            sys.constraints(t, &f.q, &mut phi);
            let res = phi.iter().fold(0.0f64, |s, x| s.max(x.abs()));
            assert!(res < 1e-10, "{what}: Φ {res:e}");
            let scale = jac.iter().fold(1.0f64, |s, x| s.max(x.abs()));
            let worst = jounce_integrate::testkit::jacobian_difference_error(
                |y, dy| f.rhs(t, y, dy).unwrap(),
                &y,
                &jac,
                1e-6,
            );
            eprintln!("{what}: J vs differences {worst:.1e}, |J| {scale:.1e}");
            assert!(worst < 1e-6, "{what}: J differs by {worst:e}");
        }
    }
}
