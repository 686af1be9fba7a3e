//! The DAE formulations: the equations of motion integrated as the
//! differential-algebraic system they are,
//!
//! ```text
//! M(q) q'' + Φ_q(t, q)ᵀ λ = Q(t, q, q')
//!                Φ(t, q)   = 0
//! ```
//!
//! with positions, velocities and Lagrange multipliers as unknowns of the
//! integrator. Two registered formulations share this type:
//!
//! - **`index3`** ([`DaeFormulation::index3`]), y = [q; v; λ]: the index-3
//!   equations themselves (jalon-bayo 7.1.5; Arnold & Brüls 2007, Multibody
//!   Syst. Dyn. 18:185–202; the HHT-I3 method of Negrut, Rampalli,
//!   Ottarsson & Sajdak 2007, J. Comput. Nonlinear Dynam. 2:73–85). The
//!   structural driver of `jounce-integrate` solves for the accelerations
//!   and multipliers of each step together
//!   ([`OdeProblem::as_constrained_second_order`]); the DAE methods (bdf,
//!   radau5) integrate the first-order DAE F = [q' − v; M v' + Φ_qᵀλ − Q; Φ]
//!   ([`OdeProblem::as_dae`]). Φ = 0 holds to the Newton tolerance at
//!   every step and does not drift.
//! - **`ggl`** ([`DaeFormulation::ggl`]), y = [q; v; λ; μ]: the stabilised
//!   index-2 form of Gear, Gupta & Leimkuhler (1985), which adds the
//!   velocity constraints Φ_q v + Φ_t = 0 with a second multiplier μ in
//!   q' = v − Φ_qᵀμ, so that both constraint levels hold at every step;
//!   DAE methods only.
//!
//! λ has the sign of the other formulations, M q'' = Q − Φ_qᵀλ, so the
//! multipliers of a run compare directly with those of [`crate::Augmented`].
//!
//! **Methods.** Only methods that accept one of these forms can integrate
//! them (`MethodInfo::accepts`); [`OdeProblem::as_second_order`] returns
//! nothing. [`OdeProblem::rhs`], [v; q̈; 0] with q̈ from the KKT system
//! `[M Φ_qᵀ; Φ_q 0][q̈; λ] = [Q; γ]` (no Baumgarte terms), serves only for
//! initial-step estimates; an ODE method run on it would hold λ constant
//! and let Φ drift, which is why `jounce` refuses such pairings.
//!
//! **Positions that are not velocities** (n_q > n_v: the unit
//! quaternions of spatial bodies). y = [q (n_q); v (n_v); λ; (μ)]. The
//! DAE methods integrate q' − T(q) v = 0 (GGL: q' − T(q)(v − Φ_qᵀμ) = 0)
//! with T the kinematic map ([`MechanicalSystem::position_derivative`])
//! and Φ_q the velocity Jacobian, the iteration matrix by differences,
//! and put q back on its manifold after each accepted step (radau5;
//! [`jounce_integrate::dae::ConstrainedDae`]). The structural methods
//! update the positions on the manifold, q_{n+1} = q_n ⊕ Δq with the
//! exponential map of the rotation increment
//! ([`MechanicalSystem::integrate_position`]), the Lie-group form of
//! generalized-α (Brüls & Cardona 2010, J. Comput. Nonlinear Dynam.
//! 5:031002, "On the use of Lie group time integrators in multibody
//! dynamics"; Arnold, Brüls & Cardona 2015, Multibody Syst. Dyn.
//! 33:1–28), with the tangent operator of the exponential map taken as
//! the identity in the iteration matrix (K, Φ_q along velocity
//! increments): Newton converges to the same solution, only the
//! contraction rate is affected, by O(h |ω|). Whatever the method, the
//! reported positions are q ⊕ 0 (unit quaternions).
//!
//! **Derivatives.** Every block comes from the system's exact derivatives
//! ([`ConstrainedEquations`]): the tangent K = ∂(M a)/∂q − ∂Q/∂q +
//! ∂(Φ_qᵀλ)/∂q, C = −∂Q/∂v, the constraint-force stiffness ∂(Φ_qᵀμ)/∂q
//! and the velocity-constraint derivative (Φ_q v)_q + Φ_qt; they are
//! reported exact when the system's second derivatives are
//! ([`SystemQueries::has_exact_second_derivatives`]).

use jounce_integrate::constrained::{ConstrainedSecondOrderProblem, IterationSparsity};
use jounce_integrate::dae::{ConstrainedDae, DaeForm, DaeProblem};
use jounce_integrate::{EvalError, OdeProblem};
use jounce_mechanics::{MechanicalSystem, Quantities, SystemData, SystemQueries};
use nalgebra::DMatrix;

use crate::augmented::check_kkt;
use crate::error::FormulationError;
use crate::formulation::Formulation;
use crate::kkt::Kkt;
use crate::linear_solver::LinearSolver;

/// The equations of motion of a system as a constrained second-order
/// problem, with the system's exact derivatives and its own tangent
/// buffers (module documentation).
pub struct ConstrainedEquations<'a, S: MechanicalSystem + ?Sized> {
    sys: &'a S,
    /// n_q (≥ n_v = `n`).
    nq: usize,
    n: usize,
    m: usize,
    /// Tangent buffers (n × n): ∂Q/∂q, ∂Q/∂v, ∂(M a)/∂q; 0 × 0 while the
    /// iteration matrix is sparse ([`Self::size_dense_buffers`]).
    fq: DMatrix<f64>,
    fv: DMatrix<f64>,
    dm: DMatrix<f64>,
    /// Φ_qt (m × n); as the tangent buffers.
    phi_qt: DMatrix<f64>,
    /// Whether drivers assemble the iteration matrix sparse
    /// ([`ConstrainedSecondOrderProblem::sparsity`]).
    solver: LinearSolver,
    /// Workspace of the sparse residual: M, Q, Φ and the sparse Φ_q.
    data: SystemData,
    /// Entries (i, j) of M, ∂(M a)/∂q, ∂Q/∂q and ∂Q/∂v
    /// ([`SystemQueries::tangent_pattern`], or all of them; each once),
    /// for M a and the tangent sums in O(nnz).
    mass_entries: Vec<(usize, usize)>,
    /// Time functions are evaluated at min(t, t_cap): the left limit at a
    /// breakpoint a step ends on ([`OdeProblem::set_time_cap`]).
    t_cap: f64,
    /// The KKT system of consistent accelerations (initial derivatives of
    /// the DAE methods, the structural family's q̈ and λ) and of the
    /// formulation's λ0 and initial-step right-hand side: the sparse Schur
    /// complement for a diagonal M.
    kkt: Kkt,
}

/// Smallest n + m at which [`LinearSolver::Auto`] declares the sparsity of
/// the iteration matrix: below it the dense LU is as fast (the P-C chain
/// with N = 1, n + m = 17, runs faster dense; N = 10, n + m = 125, 4x
/// faster sparse).
const SPARSE_ITERATION_MIN_DIM: usize = 40;

impl<'a, S: MechanicalSystem + ?Sized> ConstrainedEquations<'a, S> {
    /// The equations of `sys`; every buffer is allocated here (the dense
    /// tangent's sized for the iteration matrix the solver declares).
    pub fn new(sys: &'a S) -> Self {
        let (nq, n, m) = (sys.nq(), sys.nv(), sys.nc());
        let mut eq = Self {
            sys,
            nq,
            n,
            m,
            fq: DMatrix::zeros(0, 0),
            fv: DMatrix::zeros(0, 0),
            dm: DMatrix::zeros(0, 0),
            phi_qt: DMatrix::zeros(0, 0),
            solver: LinearSolver::Auto,
            t_cap: f64::INFINITY,
            kkt: Kkt::new(sys),
            data: sys.data(),
            mass_entries: {
                let mut e = sys
                    .tangent_pattern()
                    .unwrap_or_else(|| (0..n).flat_map(|i| (0..n).map(move |j| (i, j))).collect());
                e.sort_unstable();
                e.dedup();
                e
            },
        };
        eq.size_dense_buffers();
        eq
    }

    /// The dense tangent's buffers (∂Q/∂q, ∂Q/∂v, ∂(M a)/∂q, Φ_qt) sized
    /// for the iteration matrix the solver declares: n × n (m × n) when it
    /// is dense, so that the dense tangent of a run allocates nothing;
    /// 0 × 0 when it is sparse (a 1000-body spatial chain would hold three
    /// 6000 × 6000 matrices it never fills; a dense tangent asked for
    /// anyway allocates them on first use).
    fn size_dense_buffers(&mut self) {
        let (n, m) = if self.sparsity().is_none() {
            (self.n, self.m)
        } else {
            (0, 0)
        };
        if self.fq.nrows() != n {
            self.fq = DMatrix::zeros(n, n);
            self.fv = DMatrix::zeros(n, n);
            self.dm = DMatrix::zeros(n, n);
        }
        if self.phi_qt.shape() != (m, n) {
            self.phi_qt = DMatrix::zeros(m, n);
        }
    }

    /// Declare the iteration matrix sparse or dense as `solver` says
    /// (default [`LinearSolver::Auto`]: sparse from n + m = 40 on); the
    /// DAE form follows ([`ConstrainedDae`] declares G's pattern when this
    /// problem declares its blocks').
    #[must_use]
    pub fn with_linear_solver(mut self, solver: LinearSolver) -> Self {
        self.solver = solver;
        self.kkt = Kkt::with_solver(self.sys, solver);
        self.size_dense_buffers();
        self
    }
}

/// The `index3` and `ggl` formulations (module documentation).
pub struct DaeFormulation<'a, S: MechanicalSystem + ?Sized> {
    sys: &'a S,
    /// n_q (≥ n_v = `n`).
    nq: usize,
    n: usize,
    m: usize,
    /// The DAE; its equations own the KKT system of the initial-step
    /// right-hand side and of λ0 (one workspace for the formulation and
    /// the consistent accelerations of the methods).
    dae: ConstrainedDae<ConstrainedEquations<'a, S>>,
    breakpoints: Vec<f64>,
    /// The zero increment (len n_v when n_q ≠ n_v), for q ⊕ 0.
    zero: Vec<f64>,
}

impl<'a, S: MechanicalSystem + ?Sized> DaeFormulation<'a, S> {
    fn with_form(sys: &'a S, form: DaeForm) -> Self {
        let (nq, n, m) = (sys.nq(), sys.nv(), sys.nc());
        Self {
            sys,
            nq,
            n,
            m,
            dae: ConstrainedDae::new(ConstrainedEquations::new(sys), form)
                .expect("mechanical systems have at least as many positions as velocities"),
            breakpoints: sys.breakpoints(),
            zero: vec![0.0; if nq == n { 0 } else { n }],
        }
    }

    /// Solve the KKT system with `solver` (default [`LinearSolver::Auto`]).
    #[must_use]
    pub fn with_linear_solver(mut self, solver: LinearSolver) -> Self {
        self.dae.problem.solver = solver;
        self.dae.problem.kkt = Kkt::with_solver(self.sys, solver);
        self.dae.problem.size_dense_buffers();
        // the declared sparsity depends on the solver
        self.dae.prime_pattern();
        self
    }

    /// The index-3 formulation of `sys`, y = [q; v; λ]; every buffer is
    /// allocated here.
    pub fn index3(sys: &'a S) -> Self {
        Self::with_form(sys, DaeForm::Index3)
    }

    /// The stabilised index-2 (GGL) formulation of `sys`, y = [q; v; λ; μ].
    pub fn ggl(sys: &'a S) -> Self {
        Self::with_form(sys, DaeForm::Ggl)
    }

    /// The system formulated.
    pub fn system(&self) -> &'a S {
        self.sys
    }

    /// The constrained second-order equations (for the structural driver).
    pub fn equations(&mut self) -> &mut ConstrainedEquations<'a, S> {
        &mut self.dae.problem
    }
}

impl<S: MechanicalSystem + ?Sized> ConstrainedSecondOrderProblem for ConstrainedEquations<'_, S> {
    fn n_positions(&self) -> usize {
        self.nq
    }

    fn n_velocities(&self) -> usize {
        self.n
    }

    /// q ⊕ Δ on the manifold ([`MechanicalSystem::integrate_position`]:
    /// q + Δ in planar body coordinates).
    fn integrate_positions(&self, q: &[f64], delta: &[f64], out: &mut [f64]) {
        if self.nq == self.n {
            for i in 0..out.len() {
                out[i] = q[i] + delta[i];
            }
        } else {
            self.sys.integrate_position(q, delta, out);
        }
    }

    /// q' = T(q) v ([`MechanicalSystem::position_derivative`]).
    fn position_derivative(&self, q: &[f64], v: &[f64], qdot: &mut [f64]) {
        if self.nq == self.n {
            qdot.copy_from_slice(v);
        } else {
            self.sys.position_derivative(q, v, qdot);
        }
    }

    fn n_constraints(&self) -> usize {
        self.m
    }

    fn mass_matrix(&mut self, _t: f64, q: &[f64], m: &mut DMatrix<f64>) -> Result<(), EvalError> {
        self.sys.mass_matrix(q, m);
        Ok(())
    }

    fn mass_matrix_is_constant(&self) -> bool {
        self.sys.mass_matrix_is_constant()
    }

    fn forces(&mut self, t: f64, q: &[f64], v: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        let t = t.min(self.t_cap);
        self.sys.generalized_forces(t, q, v, f);
        Ok(())
    }

    fn constraints(&mut self, t: f64, q: &[f64], phi: &mut [f64]) -> Result<(), EvalError> {
        let t = t.min(self.t_cap);
        self.sys.constraints(t, q, phi);
        Ok(())
    }

    fn constraint_jacobian(
        &mut self,
        t: f64,
        q: &[f64],
        jac: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        let t = t.min(self.t_cap);
        self.sys.constraint_jacobian(t, q, jac);
        Ok(())
    }

    /// ν = −Φ_t.
    fn velocity_rhs(&mut self, t: f64, q: &[f64], nu: &mut [f64]) -> Result<(), EvalError> {
        let t = t.min(self.t_cap);
        self.sys.constraint_time_derivative(t, q, nu);
        for x in nu.iter_mut() {
            *x = -*x;
        }
        Ok(())
    }

    fn gamma(&mut self, t: f64, q: &[f64], v: &[f64], gamma: &mut [f64]) -> Result<(), EvalError> {
        let t = t.min(self.t_cap);
        self.sys.gamma(t, q, v, gamma);
        Ok(())
    }

    /// K = ∂(M a)/∂q − ∂Q/∂q + ∂(Φ_qᵀλ)/∂q, C = −∂Q/∂v.
    fn tangent(
        &mut self,
        t: f64,
        q: &[f64],
        v: &[f64],
        a: &[f64],
        lambda: &[f64],
        k: &mut DMatrix<f64>,
        c: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        let t = t.min(self.t_cap);
        let sys = self.sys;
        let n = self.n;
        if self.fq.nrows() != n {
            // first dense tangent (cold): the buffers, `dm` zero
            self.fq = DMatrix::zeros(n, n);
            self.fv = DMatrix::zeros(n, n);
            self.dm = DMatrix::zeros(n, n);
        }
        sys.force_jacobians(t, q, v, &mut self.fq, &mut self.fv);
        // ∂(M a)/∂q = 0 for a constant M (`dm` stays zero from its
        // allocation)
        if !sys.mass_matrix_is_constant() {
            sys.mass_matrix_derivative(q, a, &mut self.dm);
        }
        // K starts as ∂(Φ_qᵀλ)/∂q; the other terms are zero off the
        // tangent pattern (the system's promise)
        sys.constraint_force_jacobian(t, q, lambda, k);
        c.fill(0.0);
        for &(i, j) in &self.mass_entries {
            k[(i, j)] += self.dm[(i, j)] - self.fq[(i, j)];
            c[(i, j)] = -self.fv[(i, j)];
        }
        Ok(())
    }

    /// The system's [`SystemQueries::sparse_tangent`], for a constant
    /// mass matrix (∂(M a)/∂q = 0); otherwise `Ok(false)`.
    fn sparse_tangent(
        &mut self,
        t: f64,
        q: &[f64],
        v: &[f64],
        _a: &[f64],
        lambda: &[f64],
        entries: &[(usize, usize)],
        k: &mut [f64],
        c: &mut [f64],
    ) -> Result<bool, EvalError> {
        if !self.sys.mass_matrix_is_constant() {
            return Ok(false);
        }
        let t = t.min(self.t_cap);
        Ok(self.sys.sparse_tangent(t, q, v, lambda, entries, k, c))
    }

    fn has_exact_tangent(&self) -> bool {
        self.sys.has_exact_second_derivatives()
    }

    /// M from one evaluation of the system ([`MechanicalSystem::evaluate`],
    /// block diagonal in body coordinates) at the entries: O(nnz).
    fn sparse_mass_matrix(
        &mut self,
        t: f64,
        q: &[f64],
        entries: &[(usize, usize)],
        values: &mut [f64],
    ) -> Result<bool, EvalError> {
        let t = t.min(self.t_cap);
        self.sys
            .evaluate(&mut self.data, t, q, &[], Quantities::MASS_MATRIX);
        for (x, &(i, j)) in values.iter_mut().zip(entries) {
            *x = self.data.mass(i, j);
        }
        Ok(true)
    }

    /// q̈ and λ from the formulation's KKT solver (the sparse Schur
    /// complement Φ_q M⁻¹ Φ_qᵀ for a diagonal M, O(nnz) on a chain; the
    /// dense path of `kkt.rs` otherwise), the same solve that gives λ0.
    fn consistent_acceleration(
        &mut self,
        t: f64,
        q: &[f64],
        v: &[f64],
        qdd: &mut [f64],
        lambda: &mut [f64],
    ) -> Result<bool, EvalError> {
        let t = t.min(self.t_cap);
        self.kkt.accelerations(self.sys, t, q, v, 0.0, 0.0)?;
        let n = self.n;
        qdd.copy_from_slice(&self.kkt.sol[..n]);
        lambda.copy_from_slice(&self.kkt.sol[n..]);
        Ok(true)
    }

    fn has_own_residual(&self) -> bool {
        true
    }

    /// r = M a + Φ_qᵀλ − Q and Φ from one pass over the elements
    /// ([`MechanicalSystem::evaluate`]), Φ_q sparse: O(nnz).
    fn residual(
        &mut self,
        t: f64,
        q: &[f64],
        v: &[f64],
        a: &[f64],
        lambda: &[f64],
        r: &mut [f64],
        phi: &mut [f64],
    ) -> Result<(), EvalError> {
        let t = t.min(self.t_cap);
        let what = Quantities::MASS_MATRIX
            | Quantities::FORCES
            | Quantities::CONSTRAINTS
            | Quantities::CONSTRAINT_JACOBIAN;
        self.sys.evaluate(&mut self.data, t, q, v, what);
        let d = &self.data;
        for (ri, fi) in r.iter_mut().zip(&d.forces) {
            *ri = -fi;
        }
        for &(i, j) in &self.mass_entries {
            r[i] += d.mass(i, j) * a[j];
        }
        d.constraint_jacobian.tr_mul_add(lambda, r);
        phi.copy_from_slice(&d.constraints);
        Ok(())
    }

    /// The system's element couplings ([`SystemQueries::tangent_pattern`])
    /// and Φ_q pattern, unless the linear solver is dense (or `auto` on a
    /// system with n + m below `SPARSE_ITERATION_MIN_DIM`).
    fn sparsity(&self) -> Option<IterationSparsity> {
        let sparse = match self.solver {
            LinearSolver::Dense => false,
            LinearSolver::Sparse => true,
            LinearSolver::Auto => self.n + self.m >= SPARSE_ITERATION_MIN_DIM,
        };
        if !sparse {
            return None;
        }
        Some(IterationSparsity {
            tangent: self.sys.tangent_pattern()?,
            constraint_jacobian: self.sys.constraint_jacobian_pattern()?,
        })
    }

    fn constraint_force_jacobian(
        &mut self,
        t: f64,
        q: &[f64],
        mu: &[f64],
        out: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        let t = t.min(self.t_cap);
        self.sys.constraint_force_jacobian(t, q, mu, out);
        Ok(())
    }

    /// The system's sparse Φ_q (its pattern is the one
    /// [`ConstrainedSecondOrderProblem::sparsity`] declares, stored by rows
    /// with ascending columns), O(nnz).
    fn sparse_constraint_jacobian(
        &mut self,
        t: f64,
        q: &[f64],
        values: &mut [f64],
    ) -> Result<bool, EvalError> {
        let t = t.min(self.t_cap);
        let jac = &mut self.data.constraint_jacobian;
        if jac.is_dense() || jac.nnz() != values.len() {
            return Ok(false);
        }
        self.sys.sparse_constraint_jacobian(t, q, jac);
        let mut at = 0;
        for k in 0..jac.nrows() {
            let (_, v) = jac.row(k);
            values[at..at + v.len()].copy_from_slice(v);
            at += v.len();
        }
        Ok(true)
    }

    /// (Φ_q v)_q + Φ_qt.
    fn velocity_constraint_jacobian(
        &mut self,
        t: f64,
        q: &[f64],
        v: &[f64],
        out: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        let t = t.min(self.t_cap);
        self.sys.constraint_hessian_product(t, q, v, out);
        if self.phi_qt.shape() != (self.m, self.n) {
            self.phi_qt = DMatrix::zeros(self.m, self.n);
        }
        self.sys.constraint_time_jacobian(t, q, &mut self.phi_qt);
        *out += &self.phi_qt;
        Ok(())
    }
}

impl<S: MechanicalSystem + ?Sized> OdeProblem for DaeFormulation<'_, S> {
    fn dim(&self) -> usize {
        self.dae.dim()
    }

    /// [v; q̈; 0] with q̈ from the KKT system (no Baumgarte terms): for
    /// initial-step estimates only (module documentation).
    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        let (nq, n) = (self.nq, self.n);
        let (q, rest) = y.split_at(nq);
        let v = &rest[..n];
        let kkt = &mut self.dae.problem.kkt;
        kkt.accelerations(self.sys, t, q, v, 0.0, 0.0)?;
        if nq == n {
            dy[..n].copy_from_slice(v);
        } else {
            self.sys.position_derivative(q, v, &mut dy[..nq]);
        }
        dy[nq..nq + n].copy_from_slice(&kkt.sol[..n]);
        dy[nq + n..].fill(0.0);
        Ok(())
    }

    fn breakpoints(&self) -> &[f64] {
        &self.breakpoints
    }

    fn set_time_cap(&mut self, t_cap: f64) {
        self.dae.problem.t_cap = t_cap;
    }

    /// The structural family runs the index-3 form only.
    fn as_constrained_second_order(&mut self) -> Option<&mut dyn ConstrainedSecondOrderProblem> {
        match self.dae.form() {
            DaeForm::Index3 => Some(&mut self.dae.problem),
            DaeForm::Ggl => None,
        }
    }

    fn as_dae(&mut self) -> Option<&mut dyn DaeProblem> {
        Some(&mut self.dae)
    }
}

impl<S: MechanicalSystem + ?Sized> Formulation for DaeFormulation<'_, S> {
    fn name(&self) -> &'static str {
        match self.dae.form() {
            DaeForm::Index3 => "index3",
            DaeForm::Ggl => "ggl",
        }
    }

    /// y0 = [q0; v0; λ0] (GGL: [q0; v0; λ0; 0]), λ0 from the KKT system at
    /// (t0, q0, v0).
    fn initial_state(
        &mut self,
        t0: f64,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<Vec<f64>, FormulationError> {
        let name = self.name();
        let kkt = &mut self.dae.problem.kkt;
        check_kkt(self.sys, kkt, t0, q0, v0, name)?;
        kkt.accelerations(self.sys, t0, q0, v0, 0.0, 0.0)
            .map_err(|e| FormulationError::SingularMass {
                formulation: name.into(),
                detail: e.to_string(),
            })?;
        let (n, dim) = (self.n, self.dae.dim());
        let kkt = &self.dae.problem.kkt;
        debug_assert_eq!(kkt.sol.len(), n + self.m);
        let mut y = Vec::with_capacity(dim);
        y.extend_from_slice(q0);
        y.extend_from_slice(v0);
        y.extend_from_slice(&kkt.sol[n..]);
        // μ = 0 on the exact solution (GGL)
        y.resize(dim, 0.0);
        Ok(y)
    }

    /// q, v and λ are components of y (μ of GGL is not reported); q ⊕ 0
    /// when positions are not velocities (unit quaternions, also between
    /// steps).
    fn physical_state(
        &mut self,
        _t: f64,
        y: &[f64],
        q: &mut [f64],
        v: &mut [f64],
        lambda: &mut [f64],
    ) -> Result<(), EvalError> {
        let (nq, n) = (self.nq, self.n);
        if nq == n {
            q.copy_from_slice(&y[..n]);
        } else {
            self.sys.integrate_position(&y[..nq], &self.zero, q);
        }
        v.copy_from_slice(&y[nq..nq + n]);
        lambda.copy_from_slice(&y[nq + n..nq + n + self.m]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use jounce_integrate::constrained::dynamic_residual;

    use super::*;
    use crate::examples::{models, ToySystem};
    use crate::Augmented;

    /// The example mechanisms, one with damped springs so that C ≠ 0.
    fn cases() -> Vec<(&'static str, models::Model)> {
        let mut damped =
            models::double_pendulum(1.0, 0.7, 1.0, 0.5, -0.4, 0.8, 1.0, -2.0, 30.0, 10.0);
        damped.0.springs[0].c = 0.8;
        damped.0.springs[1].c = 1.3;
        vec![
            ("pendulum", models::pendulum(2.0, 1.5, 0.4, 0.7)),
            ("damped double pendulum", damped),
            (
                "slider-crank",
                models::slider_crank(0.3, 1.0, 0.5, 1.5, 2.0, 0.9, 4.0),
            ),
            (
                "driven double pendulum",
                models::driven_double_pendulum(1.0, 1.0, 1.0, 1.0, 0.2, 0.3, 0.4, 3.0),
            ),
        ]
    }

    /// r(q, v) = M a + Φ_qᵀλ − Q at fixed a, λ.
    fn residual(
        p: &mut DaeFormulation<'_, ToySystem>,
        t: f64,
        q: &[f64],
        v: &[f64],
        a: &[f64],
        lambda: &[f64],
    ) -> Vec<f64> {
        let (n, m) = (p.n, p.m);
        let (mut mass, mut jac) = (DMatrix::zeros(n, n), DMatrix::zeros(m, n));
        let mut r = vec![0.0; n];
        dynamic_residual(
            p.equations(),
            t,
            q,
            v,
            a,
            lambda,
            &mut mass,
            &mut jac,
            &mut r,
        )
        .unwrap();
        r
    }

    /// K and C agree with central differences of the residual r at an
    /// arbitrary (not consistent) point: a and λ are not the motion's, so
    /// every term of K is exercised. The largest difference, relative to
    /// max(1, |K|, |C|), must stay below 1e-9 (measured 6e-12 to 3.3e-11;
    /// central differences with h = 1e-5 have truncation error ~h² ≈ 1e-10
    /// times the third derivative and rounding ~ε/h ≈ 1e-11; a sign error
    /// in any term gives 0.1 to 2). The examples have a constant M, so the
    /// ∂(M a)/∂q term is zero here.
    #[test]
    fn exact_tangent_matches_central_differences_of_the_residual() {
        for (what, (sys, q0, v0)) in cases() {
            let mut p = DaeFormulation::index3(&sys);
            assert!(p.equations().has_exact_tangent(), "{what}");
            let (n, m) = (p.n, p.m);
            let t = 0.37;
            let q: Vec<f64> = q0
                .iter()
                .enumerate()
                .map(|(i, x)| x + 0.01 * i as f64)
                .collect();
            let v: Vec<f64> = v0
                .iter()
                .enumerate()
                .map(|(i, x)| x - 0.3 + 0.2 * i as f64)
                .collect();
            let a: Vec<f64> = (0..n).map(|i| 1.5 - 0.4 * i as f64).collect();
            let lambda: Vec<f64> = (0..m).map(|i| 2.0 + 3.0 * i as f64).collect();
            let (mut k, mut c) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
            p.equations()
                .tangent(t, &q, &v, &a, &lambda, &mut k, &mut c)
                .unwrap();
            let h = 1e-5;
            let mut worst: f64 = 0.0;
            let scale = k.iter().chain(c.iter()).fold(1.0f64, |s, x| s.max(x.abs()));
            for j in 0..n {
                let (mut qp, mut qm) = (q.clone(), q.clone());
                qp[j] += h;
                qm[j] -= h;
                let (rp, rm) = (
                    residual(&mut p, t, &qp, &v, &a, &lambda),
                    residual(&mut p, t, &qm, &v, &a, &lambda),
                );
                let (mut vp, mut vm) = (v.clone(), v.clone());
                vp[j] += h;
                vm[j] -= h;
                let (sp, sm) = (
                    residual(&mut p, t, &q, &vp, &a, &lambda),
                    residual(&mut p, t, &q, &vm, &a, &lambda),
                );
                for i in 0..n {
                    let dk = ((rp[i] - rm[i]) / (2.0 * h) - k[(i, j)]).abs();
                    let dc = ((sp[i] - sm[i]) / (2.0 * h) - c[(i, j)]).abs();
                    worst = worst.max(dk.max(dc) / scale);
                }
            }
            eprintln!("{what}: tangent vs central differences {worst:.1e}");
            assert!(worst < 1e-9, "{what}: tangent differs by {worst:e}");
            if what == "damped double pendulum" {
                assert!(c.iter().any(|x| *x != 0.0), "C must be exercised");
            }
        }
    }

    /// y0 = [q0; v0; λ0] with λ0 the multipliers the augmented formulation
    /// reports for the same state (the same KKT solve: equal to rounding);
    /// physical_state reads them back unchanged, and rhs is [v; q̈; 0] with
    /// q̈ the augmented accelerations.
    #[test]
    fn initial_multipliers_match_augmented() {
        for (what, (sys, q0, v0)) in cases() {
            let (n, m) = (sys.nq(), sys.nc());
            let mut p = DaeFormulation::index3(&sys);
            let y0 = p.initial_state(0.0, &q0, &v0).unwrap();
            assert_eq!((y0.len(), p.dim()), (2 * n + m, 2 * n + m), "{what}");
            assert_eq!(&y0[..n], &q0[..], "{what}");
            assert_eq!(&y0[n..2 * n], &v0[..], "{what}");
            let mut aug = Augmented::new(&sys);
            let ya = aug.initial_state(0.0, &q0, &v0).unwrap();
            let (mut q, mut v, mut la) = (vec![0.0; n], vec![0.0; n], vec![0.0; m]);
            aug.physical_state(0.0, &ya, &mut q, &mut v, &mut la)
                .unwrap();
            let scale = la.iter().fold(1.0f64, |s, x| s.max(x.abs()));
            let dl = la
                .iter()
                .zip(&y0[2 * n..])
                .fold(0.0f64, |d, (a, b)| d.max((a - b).abs()))
                / scale;
            eprintln!("{what}: λ0 vs augmented {dl:.1e}");
            assert!(dl < 1e-12, "{what}: λ0 differs by {dl:e}");
            assert!(la.iter().any(|x| x.abs() > 0.1), "{what}: λ0 is trivial");
            let mut l3 = vec![0.0; m];
            p.physical_state(0.0, &y0, &mut q, &mut v, &mut l3).unwrap();
            assert_eq!((&q[..], &v[..], &l3[..]), (&q0[..], &v0[..], &y0[2 * n..]));
            let (mut dy, mut dya) = (vec![1.0; 2 * n + m], vec![0.0; 2 * n]);
            p.rhs(0.0, &y0, &mut dy).unwrap();
            aug.rhs(0.0, &ya, &mut dya).unwrap();
            assert_eq!(&dy[..2 * n], &dya[..], "{what}");
            assert!(dy[2 * n..].iter().all(|x| *x == 0.0), "{what}");
        }
    }

    /// index3 offers its DAE to the structural family and to the DAE
    /// methods, ggl to the DAE methods only, neither an ODE; a singular KKT
    /// matrix is refused at the start naming the element, as by augmented.
    #[test]
    fn offers_the_dae_forms_only_and_names_singular_starts() {
        use jounce_integrate::ProblemForm;
        let (sys, q0, v0) = models::pendulum(1.0, 1.0, 0.2, 0.0);
        let mut p = DaeFormulation::index3(&sys);
        assert_eq!(
            p.forms(),
            vec![ProblemForm::ConstrainedSecondOrder, ProblemForm::Dae]
        );
        assert!(p.as_second_order().is_none());
        assert_eq!(p.as_constrained_second_order().unwrap().n_constraints(), 2);
        assert!(p.initial_state(0.0, &q0, &v0).is_ok());
        let mut g = DaeFormulation::ggl(&sys);
        assert_eq!(g.forms(), vec![ProblemForm::Dae]);
        assert!(g.as_constrained_second_order().is_none());
        assert_eq!(g.name(), "ggl");
        // ν = −Φ_t, nonzero for a driver
        let (sys, q0, _) = models::driven_double_pendulum(1.0, 1.0, 1.0, 1.0, 0.2, 0.3, 0.4, 3.0);
        let mut p = DaeFormulation::index3(&sys);
        let (mut nu, mut phi_t) = (vec![0.0; sys.nc()], vec![0.0; sys.nc()]);
        p.equations().velocity_rhs(0.3, &q0, &mut nu).unwrap();
        sys.constraint_time_derivative(0.3, &q0, &mut phi_t);
        assert!(phi_t.iter().any(|x| *x != 0.0));
        assert!(nu.iter().zip(&phi_t).all(|(a, b)| *a == -*b));

        let (sys, q0, v0) = models::redundant_pendulum();
        let e = DaeFormulation::index3(&sys)
            .initial_state(0.0, &q0, &v0)
            .unwrap_err();
        assert!(matches!(e, FormulationError::SingularJacobian(_)), "{e:?}");
        assert!(e.to_string().contains("joint 'pivot"), "{e}");

        let (sys, q0, v0) = models::spinning_point_mass();
        let e = DaeFormulation::index3(&sys)
            .initial_state(0.0, &q0, &v0)
            .unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("index3") && msg.contains("bead.theta"),
            "{msg}"
        );
    }

    /// A spatial system (n_q = 7 > n_v = 6: the heavy top): in both forms
    /// y has n_q + n_v + m (+ m) entries, the consistent y0' zeroes the
    /// residual (its first rows q' − T(q) v), the iteration matrix (by
    /// differences) has ∂F/∂y' = [I; M; 0] as its c-part, a quaternion
    /// pushed off |p| = 1 is put back by `after_step` and reported unit
    /// by `physical_state`.
    #[test]
    fn spatial_systems_integrate_the_kinematic_map_and_stay_unit() {
        use jounce_mechanics::{assemble, SpatialSystem};
        let model = jounce_model::from_str(
            include_str!("../../../examples/heavy_top.toml"),
            "heavy_top.toml",
        )
        .unwrap();
        let sys = SpatialSystem::from_model(&model).unwrap();
        let (q0, v0) = sys.initial_state();
        let asm = assemble(&sys, 0.0, &q0, &v0, 1e-12).unwrap();
        let (nq, n, m) = (sys.nq(), sys.nv(), sys.nc());
        assert_eq!((nq, n, m), (7, 6, 3));
        for ggl in [false, true] {
            let mut p = if ggl {
                DaeFormulation::ggl(&sys)
            } else {
                DaeFormulation::index3(&sys)
            };
            let mut y = p.initial_state(0.0, &asm.q, &asm.v).unwrap();
            let nd = nq + n + m * if ggl { 2 } else { 1 };
            assert_eq!((y.len(), p.dim()), (nd, nd));
            let dae = p.as_dae().unwrap();
            assert!(!dae.has_exact_jacobian());
            let mut yp = vec![0.0; nd];
            dae.consistent_derivative(0.0, &y, &mut yp).unwrap();
            let mut qdot = vec![0.0; nq];
            sys.position_derivative(&asm.q, &asm.v, &mut qdot);
            assert_eq!(&yp[..nq], &qdot[..]);
            let mut r = vec![0.0; nd];
            dae.residual(0.0, &y, &yp, &mut r).unwrap();
            let worst = r.iter().fold(0.0f64, |s, x| s.max(x.abs()));
            assert!(worst < 1e-12, "ggl {ggl}: |F(y0)| = {worst:e}");
            let (mut g1, mut g0, mut d) = (
                DMatrix::zeros(nd, nd),
                DMatrix::zeros(nd, nd),
                DMatrix::zeros(nd, nd),
            );
            dae.iteration_matrix(0.0, &y, &yp, 1.0, &mut g1).unwrap();
            dae.iteration_matrix(0.0, &y, &yp, 0.0, &mut g0).unwrap();
            dae.derivative_jacobian(0.0, &y, &yp, &mut d).unwrap();
            let diff = (&g1 - &g0 - &d).abs().max();
            assert!(diff < 1e-6, "ggl {ggl}: ∂F/∂y' differs by {diff:e}");
            // off the manifold and back
            y[3..7].iter_mut().for_each(|x| *x *= 1.001);
            let (mut q, mut v, mut l) = (vec![0.0; nq], vec![0.0; n], vec![0.0; m]);
            p.physical_state(0.0, &y, &mut q, &mut v, &mut l).unwrap();
            let norm = q[3..7].iter().map(|x| x * x).sum::<f64>().sqrt();
            assert!((norm - 1.0).abs() < 1e-15, "{norm}");
            assert!(p.as_dae().unwrap().after_step(0.0, &mut y).unwrap());
            let norm = y[3..7].iter().map(|x| x * x).sum::<f64>().sqrt();
            assert!((norm - 1.0).abs() < 1e-15, "{norm}");
            assert!(!p.as_dae().unwrap().after_step(0.0, &mut y).unwrap());
        }
        // the structural family sees n_q positions and n_v velocities
        let mut p = DaeFormulation::index3(&sys);
        let eq = p.as_constrained_second_order().unwrap();
        assert_eq!((eq.n_positions(), eq.n_velocities()), (7, 6));
    }

    /// On every example mechanism and in both forms: y0 has μ = 0 (GGL),
    /// F(t0, y0, y0') = 0 with the consistent y0', and the assembled
    /// iteration matrix (K, C, M, Φ_q, ∂(Φ_qᵀμ)/∂q, (Φ_q v)_q + Φ_qt from
    /// the system's exact derivatives) agrees with central differences of
    /// the residual at an inconsistent point, to 1e-7 relative (measured
    /// 2e-10 to 4e-9; a wrong block gives O(1)).
    #[test]
    fn dae_residual_and_iteration_matrix_are_exact() {
        for (what, (sys, q0, v0)) in cases() {
            for ggl in [false, true] {
                let mut p = if ggl {
                    DaeFormulation::ggl(&sys)
                } else {
                    DaeFormulation::index3(&sys)
                };
                let y0 = p.initial_state(0.0, &q0, &v0).unwrap();
                let nd = y0.len();
                let dae = p.as_dae().unwrap();
                assert_eq!(dae.dim(), nd);
                let mut yp = vec![0.0; nd];
                dae.consistent_derivative(0.0, &y0, &mut yp).unwrap();
                let mut r = vec![0.0; nd];
                dae.residual(0.0, &y0, &yp, &mut r).unwrap();
                let worst = r.iter().fold(0.0f64, |s, x| s.max(x.abs()));
                assert!(worst < 1e-9, "{what} (ggl {ggl}): |F(y0)| = {worst:e}");
                let y: Vec<f64> = y0
                    .iter()
                    .enumerate()
                    .map(|(i, x)| x + 0.02 * (i % 5) as f64 + 0.1)
                    .collect();
                let ypp: Vec<f64> = yp
                    .iter()
                    .enumerate()
                    .map(|(i, x)| x - 0.3 + 0.1 * (i % 4) as f64)
                    .collect();
                let c = 13.0;
                let mut g = DMatrix::zeros(nd, nd);
                dae.iteration_matrix(0.4, &y, &ypp, c, &mut g).unwrap();
                let h = 1e-6;
                let (mut rp, mut rm) = (vec![0.0; nd], vec![0.0; nd]);
                let scale = g.iter().fold(1.0f64, |s, x| s.max(x.abs()));
                let mut diff: f64 = 0.0;
                for j in 0..nd {
                    let (mut yq, mut ypq) = (y.clone(), ypp.clone());
                    yq[j] += h;
                    ypq[j] += c * h;
                    dae.residual(0.4, &yq, &ypq, &mut rp).unwrap();
                    yq[j] -= 2.0 * h;
                    ypq[j] -= 2.0 * c * h;
                    dae.residual(0.4, &yq, &ypq, &mut rm).unwrap();
                    for i in 0..nd {
                        diff = diff.max(((rp[i] - rm[i]) / (2.0 * h) - g[(i, j)]).abs() / scale);
                    }
                }
                eprintln!("{what} (ggl {ggl}): iteration matrix vs differences {diff:.1e}");
                assert!(diff < 1e-7, "{what} (ggl {ggl}): G differs by {diff:e}");
            }
        }
    }
}
