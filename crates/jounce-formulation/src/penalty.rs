//! Bayo's penalty formulation (augmented Lagrangian without iteration).
//!
//! The constraint forces are those of penalty springs and dampers acting on
//! the constraint dynamics, λ = α(Φ'' + 2ξωΦ' + ω²Φ) (Bayo, García de
//! Jalón & Serna 1988, Comput. Methods Appl. Mech. Eng. 71, 183–195;
//! García de Jalón & Bayo, *Kinematic and Dynamic Simulation of Multibody
//! Systems*, eq. 5.37; jalon-bayo ch. 7, problem 7/4). With
//! Φ'' = Φ_q q'' − γ and Φ' = Φ_q v + Φ_t:
//!
//! ```text
//! (M + α Φ_qᵀ Φ_q) q'' = Q − α Φ_qᵀ (−γ + 2ξω Φ' + ω² Φ)
//! λ ≈ α (Φ_q q'' − γ + 2ξω Φ' + ω² Φ)
//! ```
//!
//! State y = [q; v]. The solution approaches the constrained one as
//! O(1/α); Bayo recommends α ≈ 10⁷ (in the units of M), ω ≈ 10, ξ ≈ 1.
//!
//! The form is second order, M_p(t, q) q'' = f_p(t, q, v) with
//! M_p = M + αΦ_qᵀΦ_q and f_p the right-hand side above. It offers itself
//! to structural methods (Newmark, HHT, generalized-α; the combination
//! jalon-bayo ch. 7 recommends for real time) as a [`SecondOrderProblem`]
//! in acceleration form, q'' = a(t, q, v) = M_p⁻¹ f_p with an identity
//! mass matrix, not as M_p q'' = f_p: the residual M_p a − f_p is
//! hopeless for Newton's method, since M_p varies by O(α h |v| |Φ_qq|)
//! over one step and its pivot in the free directions is O(inertia/α)
//! of its largest entry, so a predictor error of 1e-3 m/s² already lies
//! outside the basin of convergence (measured on the four-bar at α = 1e7:
//! Newton fails at t = 0 for every h ≥ 1e-4). Each residual of the
//! acceleration form solves M_p exactly, as the first-order right-hand
//! side does.
//!
//! **Exact tangent and Jacobian.** For r = M_p(q) a − f_p(t, q, v), with
//! c = −γ + 2ξω(Φ_q v + Φ_t) + ω²Φ and w = Φ_q a + c,
//!
//! ```text
//! K = ∂r/∂q = ∂(M a)/∂q − Q_q + α [ ∂(Φ_qᵀw)/∂q + Φ_qᵀ (∂(Φ_q a)/∂q + c_q) ]
//!     c_q  = −γ_q + 2ξω (∂(Φ_q v)/∂q + Φ_qt) + ω² Φ_q
//! C = ∂r/∂v = −Q_v + α Φ_qᵀ c_v,   c_v = −γ_v + 2ξω Φ_q
//! ```
//!
//! (product rule on M_p a and Φ_qᵀ c, all system derivatives from
//! [`MechanicalSystem`]). The first-order Jacobian is
//! J = [[0, I], [−M_p⁻¹K, −M_p⁻¹C]] at a = M_p⁻¹ f_p, reusing the
//! factorisation of M_p. Both are reported exact when
//! [`SystemQueries::has_exact_second_derivatives`] holds.
//!
//! **Positions that are not velocities** (n_q > n_v: unit quaternions of
//! spatial bodies). y = [q (n_q); v (n_v)] and q' = T(q) v
//! ([`MechanicalSystem::position_derivative`]); every quantity above is
//! velocity-level (M, Q and Φ_q have n_v columns, Φ_q the velocity
//! Jacobian, so Φ' = Φ_q v + Φ_t and Φ'' = Φ_q v' − γ hold as written and
//! the penalty forces act on the same constraint dynamics). After every
//! accepted step q is put back on its manifold, q ← q ⊕ 0
//! ([`MechanicalSystem::integrate_position`]: the quaternions
//! normalised), as [`crate::Augmented`] does; the Jacobian is then by
//! differences (the exact one is that of q' = v) and the second-order
//! form is not offered (q'' is not v').
//!
//! **Singular mass matrices.** This form never inverts M alone: it factors
//! M + αΦ_qᵀΦ_q (LU with full pivoting), which is regular exactly when M is
//! positive definite on the null space of Φ_q, the same condition as for
//! the KKT matrix. It therefore runs models whose point masses have zero
//! rotational inertia (studies.md S1 in body coordinates). When even
//! M + αΦ_qᵀΦ_q is singular (a coordinate with neither inertia nor
//! constraint), [`Formulation::initial_state`] refuses with
//! [`FormulationError::SingularMass`] naming the coordinates.
//!
//! **Sparse.** M_p has the pattern of M plus the couplings of Φ_qᵀΦ_q
//! (coordinates that share a constraint row): O(N) entries for a chain.
//! With a sparse linear solver (`settings.linear_solver`; `auto` from
//! n + m = 40 on, when the system declares the patterns of M and Φ_q) M_p
//! is assembled into that fixed pattern, O(nnz(M) + Σ_k r_k²) with r_k the
//! entries of constraint row k, and factored by sparse LDLᵀ
//! ([`SparseLdlt`]: ordering and symbolic analysis once; M_p is symmetric
//! positive definite exactly when the full-pivot LU finds it regular),
//! a pivot at or below 1e-13 of its diagonal entry counting as singular;
//! Φ_qᵀc and Φ_q a are formed from the sparse Φ_q. The dense full-pivot
//! LU stays for small systems and `linear_solver = "dense"`.

use jounce_integrate::{EvalError, OdeProblem, SecondOrderProblem, StepFix};
use jounce_mechanics::{MechanicalSystem, Quantities, SystemData, SystemQueries};
use jounce_sparse::SparseLdlt;
use nalgebra::DMatrix;

use crate::error::FormulationError;
use crate::formulation::Formulation;
use crate::kkt::{diagnose, PIVOT_TOL};
use crate::linear_solver::LinearSolver;
use crate::lu::FullPivLu;

/// Smallest n + m at which [`LinearSolver::Auto`] factors M_p sparse (as
/// the iteration matrices of `dae_formulation.rs`).
const SPARSE_MIN_DIM: usize = 40;

/// M_p = M + αΦ_qᵀΦ_q in a fixed sparse pattern and its LDLᵀ factors
/// (module documentation, "Sparse").
struct SparsePenaltyMatrix {
    ldlt: SparseLdlt,
    /// (i, j, slot) of M_ij, i ≤ j.
    mass: Vec<(usize, usize, usize)>,
    /// (position of J_ki, position of J_kj in Φ_q's values, slot of
    /// (i, j)), each unordered pair of a row once.
    terms: Vec<(usize, usize, usize)>,
}

impl SparsePenaltyMatrix {
    /// The pattern of M (`mass_entries`) and of Φ_q (`data`'s sparse
    /// Φ_q), or `None` when Φ_q is stored dense.
    fn new(n: usize, mass_entries: &[(usize, usize)], data: &SystemData) -> Option<Self> {
        let jac = &data.constraint_jacobian;
        if jac.is_dense() {
            return None;
        }
        let mut entries: Vec<(usize, usize)> = mass_entries
            .iter()
            .map(|&(i, j)| (i.min(j), i.max(j)))
            .collect();
        let cols = jac.col_indices();
        for k in 0..jac.nrows() {
            let r = jac.row_range(k);
            for a in r.clone() {
                for b in a..r.end {
                    entries.push((cols[a].min(cols[b]), cols[a].max(cols[b])));
                }
            }
        }
        entries.sort_unstable();
        entries.dedup();
        let ldlt = SparseLdlt::new(n, &entries);
        let slot = |i, j| ldlt.slot(i, j).expect("every entry is in the pattern");
        let mut mass: Vec<(usize, usize, usize)> = mass_entries
            .iter()
            .map(|&(i, j)| (i.min(j), i.max(j)))
            .map(|(i, j)| (i, j, slot(i, j)))
            .collect();
        mass.sort_unstable();
        mass.dedup();
        let mut terms = Vec::new();
        for k in 0..jac.nrows() {
            let r = jac.row_range(k);
            for a in r.clone() {
                for b in a..r.end {
                    terms.push((a, b, slot(cols[a], cols[b])));
                }
            }
        }
        Some(Self { ldlt, mass, terms })
    }
}

/// The penalty formulation with factor α, natural frequency ω and damping
/// ratio ξ of the constraint dynamics.
pub struct Penalty<'a, S: MechanicalSystem + ?Sized> {
    sys: &'a S,
    alpha: f64,
    omega: f64,
    xi: f64,
    /// n_q (≥ n_v = `n`).
    nq: usize,
    n: usize,
    m: usize,
    /// The zero increment (len n_v when n_q ≠ n_v) and q ⊕ 0 (len n_q).
    zero: Vec<f64>,
    projected: Vec<f64>,
    /// M, Q, Φ, Φ_q, Φ', γ at the last evaluated state.
    data: SystemData,
    /// Dense copy of Φ_q (m × n) for the dense penalty algebra, taken at
    /// each factorisation.
    jac: DMatrix<f64>,
    /// −γ + 2ξωΦ' + ω²Φ
    c: Vec<f64>,
    lu: FullPivLu,
    /// M_p sparse (module documentation), `None` on the dense path.
    sparse: Option<SparsePenaltyMatrix>,
    acc: Vec<f64>,
    work: Vec<f64>,
    breakpoints: Vec<f64>,
    /// Tangent buffers: K, C (n × n) and the system derivatives.
    kt: DMatrix<f64>,
    ct: DMatrix<f64>,
    fq: DMatrix<f64>,
    fv: DMatrix<f64>,
    cfj: DMatrix<f64>,
    dm: DMatrix<f64>,
    /// ∂γ/∂q then c_q (m × n).
    gq: DMatrix<f64>,
    /// ∂γ/∂v then c_v (m × n).
    gv: DMatrix<f64>,
    ha: DMatrix<f64>,
    hv: DMatrix<f64>,
    pqt: DMatrix<f64>,
    /// w = Φ_q a + c (len m).
    w: Vec<f64>,
    col: Vec<f64>,
}

impl<'a, S: MechanicalSystem + ?Sized> Penalty<'a, S> {
    /// Penalty factor α > 0, ω ≥ 0, ξ ≥ 0.
    ///
    /// # Errors
    /// [`FormulationError::BadParameter`] for out-of-range values.
    pub fn new(sys: &'a S, alpha: f64, omega: f64, xi: f64) -> Result<Self, FormulationError> {
        let bad = |detail: String| FormulationError::BadParameter {
            formulation: "penalty".into(),
            detail,
        };
        if !(alpha.is_finite() && alpha > 0.0) {
            return Err(bad(format!(
                "[settings.penalty] factor must be finite and > 0, got {alpha}"
            )));
        }
        for (name, v) in [
            ("[settings.penalty] omega", omega),
            ("[settings.penalty] xi", xi),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(bad(format!("{name} must be finite and ≥ 0, got {v}")));
            }
        }
        let (nq, n, m) = (sys.nq(), sys.nv(), sys.nc());
        let other = if nq == n { 0 } else { n };
        Ok(Self {
            sys,
            alpha,
            omega,
            xi,
            nq,
            n,
            m,
            zero: vec![0.0; other],
            projected: vec![0.0; if other == 0 { 0 } else { nq }],
            data: sys.data(),
            // sized on the dense path's first factorisation (or the first
            // tangent): the sparse path keeps Φ_q sparse
            jac: DMatrix::zeros(0, 0),
            c: vec![0.0; m],
            lu: FullPivLu::new(0, 0),
            sparse: None,
            acc: vec![0.0; n],
            work: vec![0.0; n],
            breakpoints: sys.breakpoints(),
            // the dense tangent blocks on first use only
            // (`size_tangent_buffers`): explicit methods never form them
            kt: DMatrix::zeros(0, 0),
            ct: DMatrix::zeros(0, 0),
            fq: DMatrix::zeros(0, 0),
            fv: DMatrix::zeros(0, 0),
            cfj: DMatrix::zeros(0, 0),
            dm: DMatrix::zeros(0, 0),
            gq: DMatrix::zeros(0, 0),
            gv: DMatrix::zeros(0, 0),
            ha: DMatrix::zeros(0, 0),
            hv: DMatrix::zeros(0, 0),
            pqt: DMatrix::zeros(0, 0),
            w: vec![0.0; m],
            col: vec![0.0; n],
        }
        .with_linear_solver(LinearSolver::Auto))
    }

    /// Factor M_p sparse or dense as `solver` says (default
    /// [`LinearSolver::Auto`]: sparse from n + m = 40 on when the system
    /// declares the patterns of M and Φ_q).
    #[must_use]
    pub fn with_linear_solver(mut self, solver: LinearSolver) -> Self {
        let (n, m) = (self.n, self.m);
        let want = match solver {
            LinearSolver::Dense => false,
            LinearSolver::Sparse => true,
            LinearSolver::Auto => n + m >= SPARSE_MIN_DIM,
        };
        self.sparse = if want {
            self.sys
                .tangent_pattern()
                .and_then(|mass| SparsePenaltyMatrix::new(n, &mass, &self.data))
        } else {
            None
        };
        if self.sparse.is_none() && self.lu.rows() != n {
            self.lu = FullPivLu::new(n, n);
        }
        self
    }

    /// Whether M_p is factored sparse.
    #[must_use]
    pub fn uses_sparse_solver(&self) -> bool {
        self.sparse.is_some()
    }

    /// b ← M_p⁻¹ b with the current factors (`work` len n).
    fn solve_mp(
        sparse: &Option<SparsePenaltyMatrix>,
        lu: &FullPivLu,
        b: &mut [f64],
        work: &mut [f64],
    ) {
        match sparse {
            Some(sp) => sp.ldlt.solve_in_place(b, work),
            None => lu.solve_in_place(b, work),
        }
    }

    /// (α, ω, ξ).
    pub fn parameters(&self) -> (f64, f64, f64) {
        (self.alpha, self.omega, self.xi)
    }

    /// Why M + αΦ_qᵀΦ_q is singular at (t0, q0), naming elements, or
    /// `None` when it is regular (and factored). Cold path.
    pub(crate) fn singular_start(&mut self, t0: f64, q0: &[f64]) -> Option<String> {
        if self.factor(t0, q0) {
            return None;
        }
        Some(format!(
            "even M + αΦ_qᵀΦ_q (α = {:e}) is singular at t = {t0}: {}",
            self.alpha,
            diagnose(
                self.sys,
                &self.data.mass_dense(),
                &self.data.constraint_jacobian,
                self.alpha,
            )
        ))
    }

    /// Factor M + αΦ_qᵀΦ_q at (t, q); M and Φ_q stay in the buffers.
    fn factor(&mut self, t: f64, q: &[f64]) -> bool {
        self.sys.evaluate(
            &mut self.data,
            t,
            q,
            &[],
            Quantities::MASS_MATRIX | Quantities::CONSTRAINT_JACOBIAN,
        );
        self.factor_loaded()
    }

    /// Factor M + αΦ_qᵀΦ_q of the M and Φ_q in `data`.
    fn factor_loaded(&mut self) -> bool {
        let (n, m, a) = (self.n, self.m, self.alpha);
        if let Some(sp) = self.sparse.as_mut() {
            let d = &self.data;
            let v = &d.constraint_jacobian.values;
            sp.ldlt.clear();
            for &(i, j, s) in &sp.mass {
                sp.ldlt.ax[s] += d.mass(i, j);
            }
            for &(p, q, s) in &sp.terms {
                sp.ldlt.ax[s] += a * v[p] * v[q];
            }
            return sp.ldlt.factor(PIVOT_TOL).is_ok();
        }
        if self.jac.shape() != (m, n) {
            self.jac = DMatrix::zeros(m, n);
        }
        self.data.constraint_jacobian.to_dense_into(&mut self.jac);
        let (data, jac) = (&self.data, &self.jac);
        for i in 0..n {
            for j in 0..n {
                let mut s = 0.0;
                for k in 0..m {
                    s += jac[(k, i)] * jac[(k, j)];
                }
                self.lu.set(i, j, data.mass(i, j) + a * s);
            }
        }
        self.lu.factor(PIVOT_TOL);
        self.lu.is_regular()
    }

    /// f_p = Q − αΦ_qᵀ(−γ + 2ξωΦ' + ω²Φ) into `acc` and
    /// −γ + 2ξωΦ' + ω²Φ into `c`, from the quantities in `data` (all of
    /// [`Quantities::ALL`] current).
    fn penalty_forces_loaded(&mut self) {
        let (n, m) = (self.n, self.m);
        let d = &self.data;
        let (w, z) = (self.omega, self.xi);
        for i in 0..m {
            self.c[i] =
                -d.gamma[i] + 2.0 * z * w * d.velocity_constraints[i] + w * w * d.constraints[i];
        }
        if self.sparse.is_some() {
            self.acc.copy_from_slice(&d.forces);
            for (wi, ci) in self.w.iter_mut().zip(&self.c) {
                *wi = -self.alpha * ci;
            }
            d.constraint_jacobian.tr_mul_add(&self.w, &mut self.acc);
            return;
        }
        for j in 0..n {
            let mut s = 0.0;
            for i in 0..m {
                s += self.jac[(i, j)] * self.c[i];
            }
            self.acc[j] = d.forces[j] - self.alpha * s;
        }
    }

    /// The dense tangent blocks sized (allocates on the first tangent:
    /// the implicit methods' Jacobian, dense n × n by nature on this ODE
    /// form; explicit methods never form them).
    fn size_tangent_buffers(&mut self) {
        let (n, m) = (self.n, self.m);
        if self.jac.shape() != (m, n) {
            self.jac = DMatrix::zeros(m, n);
        }
        if self.kt.nrows() == n && self.gq.nrows() == m && self.kt.ncols() == n {
            return;
        }
        for b in [
            &mut self.kt,
            &mut self.ct,
            &mut self.fq,
            &mut self.fv,
            &mut self.cfj,
            &mut self.dm,
        ] {
            *b = DMatrix::zeros(n, n);
        }
        for b in [
            &mut self.gq,
            &mut self.gv,
            &mut self.ha,
            &mut self.hv,
            &mut self.pqt,
        ] {
            *b = DMatrix::zeros(m, n);
        }
    }

    /// K = ∂r/∂q and C = ∂r/∂v of r = M_p a − f_p into `kt`, `ct` (see the
    /// module documentation); Φ_q in `jac` and c in `c` must be current
    /// at (t, q, v).
    fn tangent_loaded(&mut self, t: f64, q: &[f64], v: &[f64], a: &[f64]) {
        let (n, m) = (self.n, self.m);
        self.size_tangent_buffers();
        let sys = self.sys;
        if self.sparse.is_some() {
            // the sparse path keeps Φ_q sparse; the tangent is dense
            self.data.constraint_jacobian.to_dense_into(&mut self.jac);
        }
        let (al, zw, w2) = (
            self.alpha,
            2.0 * self.xi * self.omega,
            self.omega * self.omega,
        );
        sys.force_jacobians(t, q, v, &mut self.fq, &mut self.fv);
        sys.mass_matrix_derivative(q, a, &mut self.dm);
        sys.gamma_jacobians(t, q, v, &mut self.gq, &mut self.gv);
        sys.constraint_hessian_product(t, q, a, &mut self.ha);
        sys.constraint_hessian_product(t, q, v, &mut self.hv);
        sys.constraint_time_jacobian(t, q, &mut self.pqt);
        // w = Φ_q a + c; c_q into gq, c_v into gv
        for i in 0..m {
            let mut s = self.c[i];
            for j in 0..n {
                s += self.jac[(i, j)] * a[j];
                let pq = self.jac[(i, j)];
                self.gq[(i, j)] =
                    -self.gq[(i, j)] + zw * (self.hv[(i, j)] + self.pqt[(i, j)]) + w2 * pq;
                self.gv[(i, j)] = -self.gv[(i, j)] + zw * pq;
                // ∂(Φ_q a)/∂q + c_q
                self.ha[(i, j)] += self.gq[(i, j)];
            }
            self.w[i] = s;
        }
        sys.constraint_force_jacobian(t, q, &self.w, &mut self.cfj);
        for r in 0..n {
            for k in 0..n {
                let (mut sk, mut sc) = (0.0, 0.0);
                for i in 0..m {
                    sk += self.jac[(i, r)] * self.ha[(i, k)];
                    sc += self.jac[(i, r)] * self.gv[(i, k)];
                }
                self.kt[(r, k)] = self.dm[(r, k)] - self.fq[(r, k)] + al * (self.cfj[(r, k)] + sk);
                self.ct[(r, k)] = -self.fv[(r, k)] + al * sc;
            }
        }
    }

    /// Accelerations into `acc` and −γ + 2ξωΦ' + ω²Φ into `c`.
    fn accelerations(&mut self, t: f64, q: &[f64], v: &[f64]) -> Result<(), EvalError> {
        self.sys.evaluate(&mut self.data, t, q, v, Quantities::ALL);
        if !self.factor_loaded() {
            return Err(EvalError::Singular {
                what: "penalty matrix M + αΦ_qᵀΦ_q".into(),
                t,
                detail: diagnose(
                    self.sys,
                    &self.data.mass_dense(),
                    &self.data.constraint_jacobian,
                    self.alpha,
                ),
            });
        }
        self.penalty_forces_loaded();
        Self::solve_mp(&self.sparse, &self.lu, &mut self.acc, &mut self.work);
        Ok(())
    }
}

impl<S: MechanicalSystem + ?Sized> OdeProblem for Penalty<'_, S> {
    fn dim(&self) -> usize {
        self.nq + self.n
    }

    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        let nq = self.nq;
        let (q, v) = y.split_at(nq);
        self.accelerations(t, q, v)?;
        if nq == self.n {
            dy[..nq].copy_from_slice(v);
        } else {
            self.sys.position_derivative(q, v, &mut dy[..nq]);
        }
        dy[nq..].copy_from_slice(&self.acc);
        Ok(())
    }

    /// J = [[0, I], [−M_p⁻¹K, −M_p⁻¹C]] at a = M_p⁻¹ f_p (differences of
    /// the right-hand side when n_q ≠ n_v).
    fn jacobian(&mut self, t: f64, y: &[f64], jac: &mut DMatrix<f64>) -> Result<(), EvalError> {
        if self.nq != self.n {
            return jounce_integrate::jacobian::fd_jacobian(self, t, y, jac);
        }
        let n = self.n;
        let (q, v) = y.split_at(n);
        self.accelerations(t, q, v)?;
        // `acc` is overwritten by nothing below; borrow it by swapping out
        let acc = std::mem::take(&mut self.acc);
        self.tangent_loaded(t, q, v, &acc);
        self.acc = acc;
        jac.fill(0.0);
        for k in 0..n {
            jac[(k, n + k)] = 1.0;
            for (from, off) in [(0, 0), (1, n)] {
                let src = if from == 0 { &self.kt } else { &self.ct };
                for i in 0..n {
                    self.col[i] = -src[(i, k)];
                }
                Self::solve_mp(&self.sparse, &self.lu, &mut self.col, &mut self.work);
                for i in 0..n {
                    jac[(n + i, off + k)] = self.col[i];
                }
            }
        }
        Ok(())
    }

    fn has_exact_jacobian(&self) -> bool {
        self.nq == self.n && self.sys.has_exact_second_derivatives()
    }

    fn breakpoints(&self) -> &[f64] {
        &self.breakpoints
    }

    /// q ← q ⊕ 0 when positions are not velocities (unit quaternions
    /// normalised); nothing otherwise.
    fn after_step(&mut self, _t: f64, y: &mut [f64]) -> Result<StepFix, EvalError> {
        if self.nq == self.n {
            return Ok(StepFix::Unchanged);
        }
        Ok(crate::formulation::retract_positions(
            self.sys,
            &mut y[..self.nq],
            &self.zero,
            &mut self.projected,
        ))
    }

    /// M_p q'' = f_p, only when q' = v (n_q = n_v).
    fn as_second_order(&mut self) -> Option<&mut dyn SecondOrderProblem> {
        if self.nq == self.n {
            Some(self)
        } else {
            None
        }
    }
}

impl<S: MechanicalSystem + ?Sized> SecondOrderProblem for Penalty<'_, S> {
    fn ndof(&self) -> usize {
        self.n
    }

    /// The identity: the structural methods see the acceleration form
    /// q'' = a(t, q, v) = M_p⁻¹ f_p (module documentation).
    fn mass_matrix(&mut self, _t: f64, _q: &[f64], m: &mut DMatrix<f64>) -> Result<(), EvalError> {
        m.fill_with_identity();
        Ok(())
    }

    /// a(t, q, v) = (M + αΦ_qᵀΦ_q)⁻¹ (Q − αΦ_qᵀ(−γ + 2ξωΦ' + ω²Φ)).
    fn forces(&mut self, t: f64, q: &[f64], v: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        self.accelerations(t, q, v)?;
        f.copy_from_slice(&self.acc);
        Ok(())
    }

    /// K = −∂a/∂q = M_p⁻¹ K_r, C = −∂a/∂v = M_p⁻¹ C_r with K_r, C_r the
    /// tangents of r = M_p a − f_p at a = a(t, q, v) (independent of the
    /// argument `a`).
    fn tangent(
        &mut self,
        t: f64,
        q: &[f64],
        v: &[f64],
        _a: &[f64],
        k: &mut DMatrix<f64>,
        c: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        let n = self.n;
        self.accelerations(t, q, v)?;
        let acc = std::mem::take(&mut self.acc);
        self.tangent_loaded(t, q, v, &acc);
        self.acc = acc;
        for j in 0..n {
            for (src, dst) in [(&self.kt, &mut *k), (&self.ct, &mut *c)] {
                for i in 0..n {
                    self.col[i] = src[(i, j)];
                }
                Self::solve_mp(&self.sparse, &self.lu, &mut self.col, &mut self.work);
                for i in 0..n {
                    dst[(i, j)] = self.col[i];
                }
            }
        }
        Ok(())
    }

    fn has_exact_tangent(&self) -> bool {
        self.sys.has_exact_second_derivatives()
    }
}

impl<S: MechanicalSystem + ?Sized> Formulation for Penalty<'_, S> {
    fn name(&self) -> &'static str {
        "penalty"
    }

    fn initial_state(
        &mut self,
        t0: f64,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<Vec<f64>, FormulationError> {
        crate::formulation::check_state_dimensions("penalty", self.nq, self.n, q0, v0)?;
        if let Some(why) = self.singular_start(t0, q0) {
            return Err(FormulationError::SingularMass {
                formulation: "penalty".into(),
                detail: format!(
                    "{why} (if the masses are below 1e-13·α, lower factor in [settings.penalty])"
                ),
            });
        }
        let mut y = q0.to_vec();
        y.extend_from_slice(v0);
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
        let (n, m) = (self.n, self.m);
        self.positions(y, q);
        v.copy_from_slice(&y[self.nq..]);
        self.accelerations(t, q, v)?;
        // λ = α(Φ_q a − γ + 2ξωΦ' + ω²Φ)
        if self.sparse.is_some() {
            lambda.copy_from_slice(&self.c);
            self.data.constraint_jacobian.mul_add(&self.acc, lambda);
            for l in lambda.iter_mut() {
                *l *= self.alpha;
            }
            return Ok(());
        }
        for i in 0..m {
            let mut s = self.c[i];
            for j in 0..n {
                s += self.jac[(i, j)] * self.acc[j];
            }
            lambda[i] = self.alpha * s;
        }
        Ok(())
    }

    fn physical_motion(
        &mut self,
        _t: f64,
        y: &[f64],
        q: &mut [f64],
        v: &mut [f64],
        _lambda: &mut [f64],
    ) -> Result<(), EvalError> {
        self.positions(y, q);
        v.copy_from_slice(&y[self.nq..]);
        Ok(())
    }
}

impl<S: MechanicalSystem + ?Sized> Penalty<'_, S> {
    /// q of the state y, on the manifold: q ⊕ 0 when positions are not
    /// velocities, y's q otherwise.
    fn positions(&self, y: &[f64], q: &mut [f64]) {
        if self.nq == self.n {
            q.copy_from_slice(&y[..self.nq]);
        } else {
            self.sys.integrate_position(&y[..self.nq], &self.zero, q);
        }
    }
}

#[cfg(test)]
mod tests {
    use jounce_integrate::{OdeProblem, StepFix};
    use jounce_mechanics::{assemble, MechanicalSystem, SpatialSystem};

    use super::Penalty;
    use crate::formulation::Formulation;
    use crate::Augmented;

    /// A spatial system (the heavy top, n_q = 7, n_v = 6): y = [q; v] of
    /// 13 entries, q' = T(q) v as the first rows of the right-hand side,
    /// v' equal to augmented's accelerations to O(1/α) at a consistent
    /// state (bound 1e-6 relative; measured 5e-8 at α = 1e7), no
    /// second-order form, and a
    /// quaternion pushed off |p| = 1 put back after the step.
    #[test]
    fn spatial_systems_integrate_the_kinematic_map_and_stay_unit() {
        let model = jounce_model::from_str(
            include_str!("../../../examples/heavy_top.toml"),
            "heavy_top.toml",
        )
        .unwrap();
        let sys = SpatialSystem::from_model(&model).unwrap();
        let (q0, v0) = sys.initial_state();
        let asm = assemble(&sys, 0.0, &q0, &v0, 1e-12).unwrap();
        let mut p = Penalty::new(&sys, 1e7, 10.0, 1.0).unwrap();
        let mut y = p.initial_state(0.0, &asm.q, &asm.v).unwrap();
        assert_eq!((y.len(), p.dim()), (13, 13));
        assert!(p.as_second_order().is_none());
        assert!(!p.has_exact_jacobian());
        let mut dy = vec![0.0; 13];
        p.rhs(0.0, &y, &mut dy).unwrap();
        let mut qdot = vec![0.0; 7];
        sys.position_derivative(&asm.q, &asm.v, &mut qdot);
        assert_eq!(&dy[..7], &qdot[..]);
        let mut aug = Augmented::new(&sys);
        let ya = aug.initial_state(0.0, &asm.q, &asm.v).unwrap();
        let mut da = vec![0.0; 13];
        aug.rhs(0.0, &ya, &mut da).unwrap();
        let scale = da[7..].iter().fold(1.0f64, |s, x| s.max(x.abs()));
        let diff = dy[7..]
            .iter()
            .zip(&da[7..])
            .fold(0.0f64, |s, (a, b)| s.max((a - b).abs()))
            / scale;
        eprintln!("penalty vs augmented accelerations: {diff:.1e}");
        assert!(diff < 1e-6, "accelerations differ by {diff:e}");
        y[3..7].iter_mut().for_each(|x| *x *= 1.001);
        assert_eq!(p.after_step(0.0, &mut y).unwrap(), StepFix::Corrected);
        let norm = y[3..7].iter().map(|x| x * x).sum::<f64>().sqrt();
        assert!((norm - 1.0).abs() < 1e-15, "{norm}");
        assert_eq!(p.after_step(0.0, &mut y).unwrap(), StepFix::Unchanged);
    }
}
