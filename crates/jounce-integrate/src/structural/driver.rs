//! The one structural driver: every member of the Newmark / HHT-α /
//! generalized-α / midpoint / Wilson-θ / collocation family
//! ([`StructuralScheme`]) on M(q) q'' = f(t, q, q') and, for the members
//! with θ = 1, on the index-3 DAE M(q) q'' + Φ_qᵀλ = Q, Φ(t, q) = 0
//! ([`ConstrainedSecondOrderProblem`]).
//!
//! **Unknowns.** The Newmark difference equations (jalon-bayo eqs. 7.28,
//! 7.29) make q_{n+1} and v_{n+1} affine functions of one acceleration-like
//! vector x:
//!
//! ```text
//! q_{n+1} = q_n ⊕ (p_q + k_q x),    v_{n+1} = p_v + k_v x
//! ```
//!
//! Newton iterates on x and λ, never on q: recovering an acceleration
//! from positions, a = (q_{n+1} − q_n − h v_n − …)/(β h²), cancels
//! catastrophically as h shrinks (a rounding of ε|q| in q becomes
//! ε|q|/(βh²) in a and, through M, a residual that no Newton iteration
//! can reduce), which is why a positions-as-unknowns iteration stalls
//! below h ≈ 1e-5 and fails outright on the penalty form, whose M carries
//! the factor α ≈ 1e7. The Newton stopping test measures the increment
//! through what it does to q and v (k_q δx and k_v δx in the error
//! weights of the run), so a converged iterate has positions *and*
//! velocities at the tolerance. On the index-3 equations the constraint
//! rows Φ/β' put their rounding ε|q|/β' into x, in the directions of the
//! constraint forces: a floor that no iteration lowers. Once the whole
//! increment is below it, only its part P_S δx tangent to the
//! constraints (through the iteration matrix S itself, which annihilates
//! exactly what the constraint rows contribute) is measured, and the
//! iteration goes on until that part reaches its own floor ε|x| or the
//! tolerance; stopping at the first floor left the tangential
//! accelerations 6e-8 off at h = 5e-5 (the floor was 6e-6).
//!
//! **Where equilibrium is enforced.** Three forms:
//! - *balance point* (unconstrained problems, every member): with x =
//!   a_{n+1}, the equation of motion at t_b = t_n + c h,
//!   M(q_b)(m0 a_n + m1 x) = f(t_b, q_b, v_b), q_b = q_n ⊕ (c h v_n +
//!   h²(b0 a_n + b1 x)), v_b = v_n + h(g0 a_n + g1 x) (see `scheme.rs`,
//!   Chung & Hulbert 1993). Iteration matrix S = m1 M + g1 h C + b1 h² K.
//! - *end point with averaged accelerations* (constrained problems,
//!   θ = 1 members: Arnold & Brüls 2007, Multibody Syst. Dyn. 18:185–202,
//!   eqs. 9–11; HHT-I3 of Negrut, Rampalli, Ottarsson & Sajdak 2007, J.
//!   Comput. Nonlinear Dynam. 2:73–85, is the α_m = 0 member): with x =
//!   q̈_{n+1}, the true acceleration, and the algorithmic acceleration
//!   (1 − α_m) a_{n+1} + α_m a_n = (1 − α_f) q̈_{n+1} + α_f q̈_n,
//!
//!   ```text
//!   M(q_{n+1}) q̈_{n+1} + Φ_q(q_{n+1})ᵀ λ_{n+1} = Q(t_{n+1}, q_{n+1}, v_{n+1})
//!   Φ(t_{n+1}, q_{n+1}) / β' = 0,        β' = β h² (1 − α_f)/(1 − α_m)
//!   ```
//!
//!   Iteration matrix, scaled so that its condition does not grow like
//!   1/h² (Bottasso, Bauchau & Cardona 2007, SIAM J. Sci. Comput.
//!   29:397–414: the constraint rows divided by β', the unknowns q̈ and
//!   λ instead of q and β'λ):
//!
//!   ```text
//!   S = [ M + γ' C + β' K   Φ_qᵀ ]      γ' = γ h (1 − α_f)/(1 − α_m)
//!       [ Φ_q               0    ]
//!   ```
//!
//!   with K, C the tangents of r = M a + Φ_qᵀλ − Q
//!   ([`ConstrainedSecondOrderProblem::tangent`]). As h → 0, S tends to the
//!   KKT matrix, regular whenever the system is. The positions meet
//!   Φ = 0 to the Newton tolerance at every step; at fixed steps the
//!   velocities are those of the method (v drifts off Φ_q v = ν by
//!   O(h²), as in HHT-I3), adaptive steps put them back on Φ_q v = ν
//!   ("Local error" below).
//!
//! - *averaged over the step* (newmark with `energy_conserving = 1`,
//!   [`StructuralScheme::energy_conserving`], fixed steps): with x = ā =
//!   (v_{n+1} − v_n)/h and λ = λ_{n+1/2}, M(q_{n+1/2}) ā = (Q_n +
//!   Q_{n+1})/2 − Gᵀλ with G a discrete gradient of Φ (Gonzalez 1999),
//!   Φ(t_{n+1}, q_{n+1}) = 0; the iteration matrix is S above with
//!   γ' = h/2, β' = h²/4 at the predicted midpoint, its constraint rows
//!   Φ_q at the predicted q_{n+1}. Predictor q_{n+1} = q_n + h v_n (ā =
//!   0): ā_n made the CPU of S1 rise 1.57× from (0, 0) to (1e8, 1e8)
//!   against 1.30×, as a stiff mode flips ā every step. After the
//!   step the velocities are projected onto Φ_q v = ν at the step's
//!   kinetic energy, and q̈, λ come from the KKT system at the end point
//!   (`conserving_end_point`).
//!
//! **Local error** (adaptive steps): in positions the Zienkiewicz–Xie
//! (1991) estimate e_q = (β − 1/6 + δ/2) h² Δa, Δa = a_{n+1} − a_n,
//! δ = α_m − α_f (a_n ≈ q''(t_n + δh)); in velocities the first-order
//! term (γ − 1/2 + δ) h Δa plus, for second-order members, the
//! third-order term c_v h³ q'''' with q'''' from the second difference of
//! the accelerations over the last two steps and c_v = 1/12 + δ(α_m −
//! 1/2 − δ) ([`StructuralScheme::velocity_error_coefficient`]; 1/12, the
//! trapezoidal rule's, for Newmark and the midpoint rule). Both are
//! tested in the weighted RMS norm of the run; λ is not (it is an
//! index-3 variable).
//!
//! On the index-3 equations (end-point form) three things differ, all
//! measured on the double pendulum of `tests/suite/dae_convergence.rs`:
//! - *tangential parts*: e_q and e_v are replaced by P e_q and P e_v,
//!   P = I − M⁻¹Φ_qᵀ(Φ_q M⁻¹Φ_qᵀ)⁻¹Φ_q at the end point (the part
//!   tangent to the constraints along the constraint forces' directions).
//!   The local error of positions that meet Φ = 0 at both ends of the step
//!   lies in the tangent space to first order, while the normal part of
//!   Δa is the multipliers' answer to the velocities' O(h²) drift off
//!   Φ_q v = ν: after a cut from h_old to h it is O(h_old²/h), so h² Δa
//!   keeps a part O(h h_old²) that no smaller step removes.
//! - *consistent accelerations* for q'''': the second difference is taken
//!   of q̈_c(q, v), the solution of [M Φ_qᵀ; Φ_q 0] [q̈; λ] = [Q; γ] at
//!   each accepted point (the projecting members' q̈ is that already), not
//!   of a or of the step's q̈, whose multipliers carry an alternating
//!   error component that grows like 1/h after step cuts (both were tried
//!   and drove the step to underflow). The second difference of P q̈
//!   (free of λ) was tried too: it underestimates the velocity error by
//!   about 5 (v 17 tol instead of 3.6 under error per unit step).
//! - *the velocity constraints*: the normal part of the velocity error is
//!   known exactly, the correction Δv that puts v_{n+1} on Φ_q v = ν
//!   ([M Φ_qᵀ; Φ_q 0] [Δv; μ] = [0; ν − Φ_q v]). It is added to e_v and
//!   tested against the tolerance itself, not against the control law's
//!   smaller local tolerance (σ Δv under `Control::Proportional`, h Δv
//!   under error per unit step). Without it a fully driven mechanism (the
//!   slider-crank with its crank driver, no degree of freedom left) has
//!   P = 0, no error at all, and hht took 14 steps to t = 1 with
//!   velocities 2779 tol off. newmark and the midpoint rule apply the
//!   correction at every step anyway (below); adaptive hht and
//!   generalized-α apply it too (velocities only; a, q̈ and λ stay the
//!   method's), because the drift they would otherwise keep is a global
//!   quantity that a smaller step does not remove: generalized-α at rtol
//!   1e-6, atol 1e-8 on the double pendulum held a drift of 6e-7 while h
//!   fell from 3e-4 to 1e-14 at t = 1.6, and on the slider-crank half its
//!   steps were rejected (1232 of 2473 at 1e-6; none with the
//!   correction, and 0.0 tol instead of 7.5 in v). Fixed steps keep
//!   HHT-I3 as published, without it (second order in λ,
//!   `tests/suite/dae_convergence.rs`).
//!
//! **Control law.** With error per step (EPS) the tolerance bounds each
//! step's local error, so a method of order p over N steps reaches a
//! global error of about N tol, and since h ∝ tol^{1/(p+1)} the global
//! error goes like tol^{p/(p+1)}: it is not proportional to the
//! tolerance (Stetter 1980, "Tolerance proportionality in ODE codes";
//! Hairer, Nørsett & Wanner I, Section II.4; Shampine, "Error estimation
//! and control for ODEs", J. Sci. Comput. 25, 2005). On the index-3 equations this
//! left hht and generalized-α 148–3065 tol off in q and 1220–36 596 tol in
//! v on the double pendulum at rtol = atol = 1e-4–1e-8 (48–804 steps).
//! There the driver therefore tests each step against the per-step
//! tolerance c·rtol^{(p+1)/p} instead (c = 0.1, `Control::Proportional`):
//! then h ∝ rtol^{1/p}, N h^{p+1} ∝ rtol, and the global error is
//! proportional to the tolerance. Measured at t = 1 on the double
//! pendulum at rtol = atol = 1e-4, 1e-6, 1e-8: hht 0.4–0.5 tol in q and
//! 3.1–3.5 in v (791, 7933, 79 365 steps), generalized-α 0.4–0.5 and
//! 3.3–3.5 (712, 7148, 71 522), newmark and the midpoint rule 0.3–0.4 and
//! 3.1–3.2 (696, 6983, 69 865); on the four-bar 1.4–2.6 and 4.7–8.9, on
//! the driven slider-crank 0.0 and 0.0 (130–13 214 steps). c = 1
//! (rtol^{3/2} itself) gave 2 and 15 on the double pendulum
//! and 12–30 and 40–105 on the four-bar (measured before adaptive hht and
//! generalized-α corrected their velocities, which moves the c = 0.1
//! figures by less than 10 %). Error per unit step (EPUS,
//! HNW I, II.4: ‖e‖ ≤ tol h, h in the model's time unit) is the other
//! tolerance-proportional law and is taken when
//! [`crate::SolverOptions::error_per`] asks for it; it is not the default
//! because it resolves a stiff transient to tol per unit of time: on the
//! S2 test 1a chain (a 714 Hz mode with 11 % damping, stretched at t = 0)
//! hht took 90 430 steps at rtol = atol = 1e-4 (errors 0.1 and 0.6 tol)
//! against 6281 (0.1, 0.4) with the proportional law, and at rtol 1e-6,
//! atol 1e-8 did not reach t = 0.012 in 1e6 steps against 115 337 steps to
//! t = 1. The Newton
//! tolerance is scaled with the law's local tolerance (the iteration error
//! of a step is a local error too). The unconstrained (balance) form keeps
//! [`crate::SolverOptions::error_per`] (error per step by default): there
//! the second differences of hht's and generalized-α's algorithmic
//! accelerations already reject a third to a half of the steps at tight
//! tolerances (generalized-α on the configuration-dependent double
//! pendulum of `structural_family.rs`: 998 of 3025 at 1e-8), a separate
//! matter.
//!
//! **Fixed steps** land on t_0 + k h computed from the step count (no
//! accumulated rounding, no sliver step at t_end), and Newton converges
//! to round-off (increments below 1e-13 relative), so that fixed-step
//! convergence continues to h = 1e-6 and below.
//!
//! State: y = [q; v] for unconstrained problems, y = [q; v; λ] for
//! constrained ones. Dense output: the cubic Hermite interpolant with
//! derivatives [v; q̈] (positions and velocities), linear in λ. Forces are
//! counted in `stats.n_rhs`, tangents in `stats.n_jac`.

use nalgebra::DMatrix;

use crate::constrained::{
    fd_constrained_tangent, ConstrainedSecondOrderProblem, IterationSparsity, Unconstrained,
};
use crate::controller::{proportional_scale, ErrorPer, StepController};
use crate::dense::hermite_cubic_linear_tail;
use crate::dense_lu::DenseLu;
use crate::error::{EvalError, IntegrateError};
use crate::initial_step::initial_step;
use crate::newton::CachedLu;
use crate::problem::OdeProblem;
use crate::step_loop::{advance, fixed_grid_step, LoopState, StepAttempt, Trial};
use crate::stepper::{StepContext, Stepper};
use crate::structural::augmented_lagrangian::AugmentedLagrangianStepper;
use crate::structural::scheme::{Balance, StructuralScheme};
use jounce_sparse::{FixedPattern, SparseLu};

/// g = M a − f: the inertia and applied-force part of a Newton residual.
fn inertia_minus_forces(me: &DMatrix<f64>, a: &[f64], f: &[f64], g: &mut [f64]) {
    for (i, gi) in g.iter_mut().enumerate() {
        let mut s = -f[i];
        for (j, aj) in a.iter().enumerate() {
            s += me[(i, j)] * aj;
        }
        *gi = s;
    }
}

/// Counts force evaluations (including those of a finite-difference
/// tangent) and rejects non-finite forces.
struct Counted<'a> {
    inner: &'a mut dyn ConstrainedSecondOrderProblem,
    n_forces: u64,
}

impl ConstrainedSecondOrderProblem for Counted<'_> {
    fn n_positions(&self) -> usize {
        self.inner.n_positions()
    }
    fn n_velocities(&self) -> usize {
        self.inner.n_velocities()
    }
    fn n_constraints(&self) -> usize {
        self.inner.n_constraints()
    }
    fn integrate_positions(&self, q: &[f64], delta: &[f64], out: &mut [f64]) {
        self.inner.integrate_positions(q, delta, out)
    }
    fn position_derivative(&self, q: &[f64], v: &[f64], qdot: &mut [f64]) {
        self.inner.position_derivative(q, v, qdot)
    }
    fn mass_matrix(&mut self, t: f64, q: &[f64], m: &mut DMatrix<f64>) -> Result<(), EvalError> {
        self.inner.mass_matrix(t, q, m)
    }
    fn mass_matrix_is_constant(&self) -> bool {
        self.inner.mass_matrix_is_constant()
    }
    fn forces(&mut self, t: f64, q: &[f64], v: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        self.n_forces += 1;
        self.inner.forces(t, q, v, f)?;
        if f.iter().any(|x| !x.is_finite()) {
            return Err(EvalError::NonFinite {
                what: "forces f(t, q, v)".into(),
                t,
            });
        }
        Ok(())
    }
    fn constraints(&mut self, t: f64, q: &[f64], phi: &mut [f64]) -> Result<(), EvalError> {
        self.inner.constraints(t, q, phi)
    }
    fn constraint_jacobian(
        &mut self,
        t: f64,
        q: &[f64],
        jac: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        self.inner.constraint_jacobian(t, q, jac)
    }
    fn velocity_rhs(&mut self, t: f64, q: &[f64], nu: &mut [f64]) -> Result<(), EvalError> {
        self.inner.velocity_rhs(t, q, nu)
    }
    fn gamma(&mut self, t: f64, q: &[f64], v: &[f64], g: &mut [f64]) -> Result<(), EvalError> {
        self.inner.gamma(t, q, v, g)
    }
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
        if self.inner.has_exact_tangent() {
            self.inner.tangent(t, q, v, a, lambda, k, c)
        } else {
            // the difference quotients go through this counter
            fd_constrained_tangent(self, t, q, v, a, lambda, k, c)
        }
    }
    fn sparse_tangent(
        &mut self,
        t: f64,
        q: &[f64],
        v: &[f64],
        a: &[f64],
        lambda: &[f64],
        entries: &[(usize, usize)],
        k: &mut [f64],
        c: &mut [f64],
    ) -> Result<bool, EvalError> {
        self.inner.sparse_tangent(t, q, v, a, lambda, entries, k, c)
    }
    fn has_exact_tangent(&self) -> bool {
        self.inner.has_exact_tangent()
    }
    fn sparse_mass_matrix(
        &mut self,
        t: f64,
        q: &[f64],
        entries: &[(usize, usize)],
        values: &mut [f64],
    ) -> Result<bool, EvalError> {
        self.inner.sparse_mass_matrix(t, q, entries, values)
    }
    fn sparse_constraint_jacobian(
        &mut self,
        t: f64,
        q: &[f64],
        values: &mut [f64],
    ) -> Result<bool, EvalError> {
        self.inner.sparse_constraint_jacobian(t, q, values)
    }
    fn consistent_acceleration(
        &mut self,
        t: f64,
        q: &[f64],
        v: &[f64],
        qdd: &mut [f64],
        lambda: &mut [f64],
    ) -> Result<bool, EvalError> {
        let own = self.inner.consistent_acceleration(t, q, v, qdd, lambda)?;
        if own {
            self.n_forces += 1;
            if qdd.iter().chain(lambda.iter()).any(|x| !x.is_finite()) {
                return Err(EvalError::NonFinite {
                    what: "consistent accelerations".into(),
                    t,
                });
            }
        }
        Ok(own)
    }
    fn sparsity(&self) -> Option<IterationSparsity> {
        self.inner.sparsity()
    }
    fn has_own_residual(&self) -> bool {
        self.inner.has_own_residual()
    }
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
        self.n_forces += 1;
        self.inner.residual(t, q, v, a, lambda, r, phi)
    }
}

/// Run `f` on the problem's constrained second-order form, or on its
/// plain second-order form seen as one with m = 0.
fn with_form<R>(
    p: &mut dyn OdeProblem,
    f: impl FnOnce(&mut dyn ConstrainedSecondOrderProblem) -> R,
) -> Option<R> {
    if p.as_constrained_second_order().is_some() {
        return p.as_constrained_second_order().map(f);
    }
    let inner = p.as_second_order()?;
    let mut u = Unconstrained { inner };
    Some(f(&mut u))
}

/// Which equilibrium the step enforces (module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    Balance,
    EndPoint,
    /// The energy-conserving trapezoidal rule ([`StructuralScheme::energy_conserving`]):
    /// x = ā, the average acceleration of the step; λ the multiplier
    /// λ_{n+1/2} of the step (module documentation).
    Conserving,
}

/// The affine maps of one step from the unknown x to the end point and
/// the evaluation point (vectors in `Work`, scalars here).
#[derive(Clone, Copy, Debug, Default)]
struct Affine {
    /// q_{n+1} = q_n ⊕ (p1 + k1 x)
    k1: f64,
    /// v_{n+1} = pv1 + kv1 x
    kv1: f64,
    /// q_e = q_n ⊕ (pqe + kqe x)
    kqe: f64,
    /// v_e = pve + kve x
    kve: f64,
    /// a_e = pae + kae x
    kae: f64,
    /// a_{n+1} = s x + â
    s: f64,
    /// t_e = t_n + ce h
    ce: f64,
}

/// Scratch vectors of one step (all len n_v unless noted).
struct Work {
    p1: Vec<f64>,
    pv1: Vec<f64>,
    pqe: Vec<f64>,
    pve: Vec<f64>,
    pae: Vec<f64>,
    ahat: Vec<f64>,
    delta: Vec<f64>,
    /// q_e (len n_q)
    qe: Vec<f64>,
    ve: Vec<f64>,
    ae: Vec<f64>,
    fe: Vec<f64>,
    /// Φ (len m)
    phi: Vec<f64>,
    me: DMatrix<f64>,
    je: DMatrix<f64>,
    /// residual / Newton increment (len n_v + m)
    g: Vec<f64>,
    /// tangential part of the increment (len n_v + m)
    gt: Vec<f64>,
    /// the KKT solves of projections, consistent accelerations and error
    /// estimates
    kkt: KktSolver,
    /// the multipliers of a consistent acceleration (len m)
    lam_c: Vec<f64>,
    /// copies of an error-estimate part (len n_v), of q1 (len n_q) and v1
    e: Vec<f64>,
    q1: Vec<f64>,
    v1: Vec<f64>,
    /// conserving form: Q(t_n, q_n, v_n), Φ(t_{n+1/2}, q_n) and
    /// Φ(t_{n+1/2}, q_{n+1}) (len m)
    f0: Vec<f64>,
    phi0: Vec<f64>,
    phim: Vec<f64>,
}

impl Work {
    /// `me` and `je` sized n × n and m × n (allocates once, on the dense
    /// paths only).
    fn dense(&mut self, n: usize, m: usize) {
        if self.me.shape() != (n, n) || self.je.shape() != (m, n) {
            self.me = DMatrix::zeros(n, n);
            self.je = DMatrix::zeros(m, n);
        }
    }

    fn new(nq: usize, n: usize, m: usize) -> Self {
        Self {
            p1: vec![0.0; n],
            pv1: vec![0.0; n],
            pqe: vec![0.0; n],
            pve: vec![0.0; n],
            pae: vec![0.0; n],
            ahat: vec![0.0; n],
            delta: vec![0.0; n],
            qe: vec![0.0; nq],
            ve: vec![0.0; n],
            ae: vec![0.0; n],
            fe: vec![0.0; n],
            phi: vec![0.0; m],
            // dense M and Φ_q on first use only (`Work::dense`)
            me: DMatrix::zeros(0, 0),
            je: DMatrix::zeros(0, 0),
            g: vec![0.0; n + m],
            gt: vec![0.0; n + m],
            kkt: KktSolver::new(n + m),
            lam_c: vec![0.0; m],
            e: vec![0.0; n],
            q1: vec![0.0; nq],
            v1: vec![0.0; n],
            f0: vec![0.0; n],
            phi0: vec![0.0; m],
            phim: vec![0.0; m],
        }
    }
}

/// The solves with [M Φ_qᵀ; Φ_q 0] (M alone when Φ_q has no rows) that a
/// step needs besides its Newton iteration, in storage sized once.
struct KktSolver {
    lu: DenseLu<f64>,
    /// right-hand side [f; g], then the solution [x; μ] (len n + m)
    x: Vec<f64>,
    /// the same matrix in the problem's sparse pattern, when it declares
    /// one (`StructuralStepper::sparse`)
    sparse: Option<SparseIteration>,
    /// whether the factors are those of the M and Φ_q last loaded (the
    /// velocity correction and the two tangential parts of an error
    /// estimate share one factorisation)
    factored: bool,
}

impl KktSolver {
    /// Storage for order `dim` = n + m (the dense LU is sized on its first
    /// use).
    fn new(dim: usize) -> Self {
        Self {
            lu: DenseLu::new(),
            x: vec![0.0; dim],
            sparse: None,
            factored: false,
        }
    }

    /// M and Φ_q at (t, q): into the sparse values when the problem
    /// evaluates them so (O(nnz)), else into the dense `mass` and `jac`
    /// (sized here).
    fn load(
        &mut self,
        sp: &mut Counted,
        t: f64,
        q: &[f64],
        mass: &mut DMatrix<f64>,
        jac: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        self.factored = false;
        if let Some(s) = self.sparse.as_mut() {
            if s.load_kkt(sp, t, q)? {
                return Ok(());
            }
        }
        let (n, m) = (sp.n_velocities(), sp.n_constraints());
        if mass.shape() != (n, n) || jac.shape() != (m, n) {
            *mass = DMatrix::zeros(n, n);
            *jac = DMatrix::zeros(m, n);
        }
        sp.mass_matrix(t, q, mass)?;
        sp.constraint_jacobian(t, q, jac)
    }

    /// The next solves read the dense `mass` and `jac` the caller filled.
    fn dense(&mut self) {
        self.factored = false;
        if let Some(s) = self.sparse.as_mut() {
            s.loaded = false;
        }
    }

    /// Φ_q v subtracted from `out` (len m), Φ_q of the last [`KktSolver::load`].
    fn sub_jacobian_times(&self, jac: &DMatrix<f64>, v: &[f64], out: &mut [f64]) {
        if let Some(s) = self.sparse.as_ref().filter(|s| s.loaded) {
            for (&(k, j), &x) in s.rows.iter().zip(&s.jv) {
                out[k] -= x * v[j];
            }
            return;
        }
        for k in 0..out.len() {
            for j in 0..v.len() {
                out[k] -= jac[(k, j)] * v[j];
            }
        }
    }

    /// Solve [M Φ_qᵀ; Φ_q 0] [x; μ] = [f; g] into `self.x`; `false` when
    /// the matrix is singular.
    fn solve(&mut self, mass: &DMatrix<f64>, jac: &DMatrix<f64>, f: &[f64], g: &[f64]) -> bool {
        let n = f.len();
        self.x[..n].copy_from_slice(f);
        self.x[n..].copy_from_slice(g);
        self.solve_in_place(mass, jac)
    }

    /// As [`KktSolver::solve`] with [f; g] already in `self.x`.
    fn solve_in_place(&mut self, mass: &DMatrix<f64>, jac: &DMatrix<f64>) -> bool {
        if let Some(sp) = &mut self.sparse {
            if self.factored && sp.lu.is_factored() {
                sp.lu.solve_in_place(&mut self.x);
                return true;
            }
            let vals = sp.lu.values_mut();
            if sp.loaded {
                for (&(_, _, slot), &e) in sp.a_slots.iter().zip(&sp.a_at) {
                    vals[slot] = sp.mv[e];
                }
                for (&(_, _, lower, upper), &e) in sp.j_slots.iter().zip(&sp.j_at) {
                    vals[lower] = sp.jv[e];
                    vals[upper] = sp.jv[e];
                }
            } else {
                for &(i, j, slot) in &sp.a_slots {
                    vals[slot] = mass[(i, j)];
                }
                for &(k, j, lower, upper) in &sp.j_slots {
                    vals[lower] = jac[(k, j)];
                    vals[upper] = jac[(k, j)];
                }
            }
            if !sp.lu.factor() {
                return false;
            }
            self.factored = true;
            sp.lu.solve_in_place(&mut self.x);
            return true;
        }
        let (n, m) = (mass.nrows(), jac.nrows());
        if self.factored && self.lu.piv.len() == n + m {
            self.lu.solve(&mut self.x);
            return true;
        }
        if self.lu.piv.len() != n + m {
            self.lu.resize(n + m);
        }
        let kkt = &mut self.lu.lu;
        kkt.view_mut((0, 0), (n, n)).copy_from(mass);
        for k in 0..m {
            for j in 0..n {
                kkt[(n + k, j)] = jac[(k, j)];
                kkt[(j, n + k)] = jac[(k, j)];
            }
            for l in 0..m {
                kkt[(n + k, n + l)] = 0.0;
            }
        }
        if !self.lu.factor() {
            return false;
        }
        self.factored = true;
        self.lu.solve(&mut self.x);
        true
    }

    /// P v into `out`, P = I − M⁻¹Φ_qᵀ(Φ_q M⁻¹Φ_qᵀ)⁻¹Φ_q: the component of
    /// v tangent to the constraints (Φ_q P v = 0) along the constraint
    /// forces' directions M⁻¹Φ_qᵀ, from [M Φ_qᵀ; Φ_q 0] [P v; μ] = [M v; 0];
    /// `false` when the matrix is singular.
    fn tangential(
        &mut self,
        mass: &DMatrix<f64>,
        jac: &DMatrix<f64>,
        v: &[f64],
        out: &mut [f64],
    ) -> bool {
        let n = v.len();
        if let Some(sp) = &self.sparse {
            self.x.fill(0.0);
            if sp.loaded {
                for (&(i, j, _), &e) in sp.a_slots.iter().zip(&sp.a_at) {
                    self.x[i] += sp.mv[e] * v[j];
                }
            } else {
                for &(i, j, _) in &sp.a_slots {
                    self.x[i] += mass[(i, j)] * v[j];
                }
            }
        } else {
            for i in 0..n {
                self.x[i] = (0..n).map(|j| mass[(i, j)] * v[j]).sum();
            }
            self.x[n..].fill(0.0);
        }
        if !self.solve_in_place(mass, jac) {
            return false;
        }
        out.copy_from_slice(&self.x[..n]);
        true
    }
}

/// The iteration matrix S = [kae M + kve C + kqe K, Φ_qᵀ; Φ_q, 0] in the
/// sparse form a problem declared
/// ([`ConstrainedSecondOrderProblem::sparsity`]): the pattern and its
/// column ordering are set up once per pattern, the values gathered from
/// the tangent blocks at every factorisation, O(nnz).
struct SparseIteration {
    /// The declared pattern (to rebuild only when a reset brings another).
    sparsity: IterationSparsity,
    lu: SparseLu,
    /// (i, j, slot of S_ij) of the dynamic block.
    a_slots: Vec<(usize, usize, usize)>,
    /// (k, j, slot of S_{n+k, j}, slot of S_{j, n+k}) of Φ_q and Φ_qᵀ.
    j_slots: Vec<(usize, usize, usize, usize)>,
    /// The tangent entries sorted, each once, with the diagonal (the
    /// order of the problem's sparse K, C, M) and the Φ_q entries by rows
    /// (the order of its sparse Φ_q).
    entries: Vec<(usize, usize)>,
    rows: Vec<(usize, usize)>,
    /// Index in `entries` of each `a_slots` entry, in `rows` of each
    /// `j_slots` entry.
    a_at: Vec<usize>,
    j_at: Vec<usize>,
    /// M, K, C at `entries` and Φ_q at `rows` from the problem's sparse
    /// evaluations (no n × n block formed, issue 32).
    mv: Vec<f64>,
    kv: Vec<f64>,
    cv: Vec<f64>,
    jv: Vec<f64>,
    /// Whether the problem's sparse evaluations are tried (`false` once
    /// one is missing: the dense blocks are read then).
    sparse_evals: bool,
    /// Whether the values above are the last evaluation's.
    loaded: bool,
}

impl SparseIteration {
    fn new(n: usize, m: usize, sparsity: IterationSparsity) -> Self {
        let mut entries: Vec<(usize, usize)> = sparsity.tangent.clone();
        for &(k, j) in &sparsity.constraint_jacobian {
            entries.push((n + k, j));
            entries.push((j, n + k));
        }
        let lu = SparseLu::new(n + m, &entries);
        let slot = |i, j| {
            lu.slot(i, j)
                .expect("every declared entry is in the pattern")
        };
        let mut a_slots: Vec<(usize, usize, usize)> = sparsity
            .tangent
            .iter()
            .map(|&(i, j)| (i, j, slot(i, j)))
            .collect();
        // the diagonal is always in the pattern (M may be singular where
        // Φ_q makes S regular; the entry must be written, zero or not)
        a_slots.extend((0..n).map(|i| (i, i, slot(i, i))));
        a_slots.sort_unstable_by_key(|e| e.2);
        a_slots.dedup_by_key(|e| e.2);
        let mut j_slots: Vec<(usize, usize, usize, usize)> = sparsity
            .constraint_jacobian
            .iter()
            .map(|&(k, j)| (k, j, slot(n + k, j), slot(j, n + k)))
            .collect();
        j_slots.sort_unstable_by_key(|e| e.2);
        j_slots.dedup_by_key(|e| e.2);
        let mut entries = sparsity.tangent.clone();
        entries.extend((0..n).map(|i| (i, i)));
        entries.sort_unstable();
        entries.dedup();
        let mut rows = sparsity.constraint_jacobian.clone();
        rows.sort_unstable();
        rows.dedup();
        let at = |list: &[(usize, usize)], e: (usize, usize)| list.binary_search(&e).unwrap_or(0);
        let a_at = a_slots
            .iter()
            .map(|&(i, j, _)| at(&entries, (i, j)))
            .collect();
        let j_at = j_slots
            .iter()
            .map(|&(k, j, _, _)| at(&rows, (k, j)))
            .collect();
        let (ne, nr) = (entries.len(), rows.len());
        Self {
            sparsity,
            lu,
            a_slots,
            j_slots,
            entries,
            rows,
            a_at,
            j_at,
            mv: vec![0.0; ne],
            kv: vec![0.0; ne],
            cv: vec![0.0; ne],
            jv: vec![0.0; nr],
            sparse_evals: true,
            loaded: false,
        }
    }

    /// M and Φ_q at (t, q) into `mv`, `jv` by the problem's sparse
    /// evaluations; `Ok(false)` (and not tried again) where it has none.
    fn load_kkt(&mut self, sp: &mut Counted, t: f64, q: &[f64]) -> Result<bool, EvalError> {
        self.loaded = false;
        if !self.sparse_evals {
            return Ok(false);
        }
        let ok = sp.sparse_mass_matrix(t, q, &self.entries, &mut self.mv)?
            && (self.rows.is_empty() || sp.sparse_constraint_jacobian(t, q, &mut self.jv)?);
        self.sparse_evals = ok;
        self.loaded = ok;
        Ok(ok)
    }

    /// K, C, M and Φ_q at the evaluation point by the problem's sparse
    /// evaluations (exact tangents only); `Ok(false)` (and not tried
    /// again) where it has none.
    #[allow(clippy::too_many_arguments)]
    fn load_tangent(
        &mut self,
        sp: &mut Counted,
        t: f64,
        q: &[f64],
        v: &[f64],
        a: &[f64],
        lambda: &[f64],
    ) -> Result<bool, EvalError> {
        self.loaded = false;
        if !self.sparse_evals || !sp.has_exact_tangent() {
            self.sparse_evals = false;
            return Ok(false);
        }
        let ok = sp.sparse_tangent(
            t,
            q,
            v,
            a,
            lambda,
            &self.entries,
            &mut self.kv,
            &mut self.cv,
        )? && self.load_kkt(sp, t, q)?;
        self.sparse_evals = ok;
        self.loaded = ok;
        Ok(ok)
    }
}

/// The error control law of an adaptive run (module documentation,
/// "Control law").
#[derive(Clone, Copy, Debug, PartialEq)]
enum Control {
    /// ‖e‖ ≤ 1 in the weights of the run (error per step).
    Step,
    /// ‖e‖ ≤ h (error per unit step, h in the model's unit of time).
    UnitStep,
    /// ‖e‖ ≤ σ = c rtol^{1/p} ([`proportional_scale`]): a per-step
    /// tolerance c rtol^{(p+1)/p} that makes the global error proportional
    /// to rtol.
    Proportional(f64),
}

/// Stepper of the structural family over one [`StructuralScheme`].
pub struct StructuralStepper {
    /// The augmented-Lagrangian stepper, when the problem asks for it
    /// ([`OdeProblem::augmented_lagrangian_penalty`]); every call goes to
    /// it then.
    al: Option<Box<AugmentedLagrangianStepper>>,
    scheme: StructuralScheme,
    bal: Balance,
    form: Form,
    nq: usize,
    n: usize,
    m: usize,
    t: f64,
    t_prev: f64,
    h: f64,
    /// start and step count of a fixed-step run since the last reset
    t_fixed0: f64,
    k_fixed: u64,
    /// [q; v] or [q; v; λ] at t
    y: Vec<f64>,
    y_prev: Vec<f64>,
    /// [v; q̈] at t and t_prev (dense output)
    dy: Vec<f64>,
    dy_prev: Vec<f64>,
    /// algorithmic acceleration a_n
    a: Vec<f64>,
    /// true acceleration q̈_n (end-point form)
    qdd: Vec<f64>,
    /// Δa (balance form) or Δq̈_c (end-point form) and h of the last
    /// accepted step (velocity error estimate)
    da_prev: Vec<f64>,
    /// end-point form: the consistent accelerations q̈_c(q, v) at t and
    /// at the candidate end point (velocity error estimate)
    qddc: Vec<f64>,
    qddc1: Vec<f64>,
    /// q' = T(q_{n+1}) v_{n+1} of the candidate end point (len n_q), the
    /// position slope of the dense output when positions are not
    /// velocities (unit quaternions)
    dq1: Vec<f64>,
    /// end-point form: the velocity correction onto Φ_q v = ν at the
    /// candidate end point (applied by the projecting members)
    dv: Vec<f64>,
    /// conserving form: the multiplier λ_{n-1/2} of the last accepted step
    /// (λ_0 after a reset); λ_{n+1/2} of the trial step is `lam`
    mu_prev: Vec<f64>,

    /// the error control law (module documentation)
    control: Control,
    h_prev: f64,
    /// Newton unknowns x (len n) and λ (len m)
    x: Vec<f64>,
    lam: Vec<f64>,
    a1: Vec<f64>,
    y1: Vec<f64>,
    err: Vec<f64>,
    work: Work,
    m_t: DMatrix<f64>,
    k_t: DMatrix<f64>,
    c_t: DMatrix<f64>,
    j_t: DMatrix<f64>,
    /// conserving form: Φ_q at the predicted q_{n+1}, the derivative of
    /// the constraint rows Φ(q_{n+1}) (the dynamic rows' Gᵀ is near
    /// Φ_q(q_{n+1/2}), `j_t`); the two differ by O(ωh), 30 % at S1's 0.3 rad
    /// per step, enough to stall modified and full Newton alike
    j_t1: DMatrix<f64>,
    s: DMatrix<f64>,
    lu: CachedLu,
    /// the sparse iteration matrix, when the problem declares its pattern
    /// ([`ConstrainedSecondOrderProblem::sparsity`]); `lu` and `s` are
    /// unused then
    sparse: Option<SparseIteration>,
    /// the Newton residual from the problem's own evaluation
    /// ([`ConstrainedSecondOrderProblem::residual`]; constrained problems
    /// that provide it, or declare a sparsity), which forms neither M nor
    /// Φ_q in `work`
    own_residual: bool,
    tangent_valid: bool,
    tangent_fresh: bool,
    s_h: f64,
    /// steps still to take with full Newton (tangent at every iterate)
    full_newton: u32,
    /// fixed steps (the run's `fixed_step`)
    fixed: bool,
    /// what the trials of the current step have tried
    trial: TrialState,
    /// error norm of the last trial in the weights of the run
    last_err: f64,
    loop_state: LoopState,
    controller: StepController,
}

/// The retries of one step after Newton failures (`attempt_inner`).
#[derive(Clone, Copy, Debug, Default)]
struct TrialState {
    /// tangent refreshes after a failure with a tangent from an earlier step
    newton_retries: u32,
    /// adaptive: step reductions after Newton failures with a fresh tangent
    newton_rejections: u32,
    /// fixed: the retry from q_{n+1} = q_n was made
    hold_positions: bool,
}

/// Multiple of the unit round-off below which the local error test does
/// not go ([`StructuralStepper::error_norm`]).
const ROUNDOFF_FLOOR: f64 = 10.0;

/// Newton iterations per solve: adaptive (as radau5.f) and fixed steps.
const MAX_ITER_ADAPTIVE: u32 = 7;
const MAX_ITER_FIXED: u32 = 25;
/// Stopping test η‖δ‖ ≤ tol in the error weights of the run (adaptive).
const NEWTON_TOL_ADAPTIVE: f64 = 0.01;
/// Fixed steps: weights 1/(1e-10 (1 + |y|)) and η‖δ‖ ≤ 1e-3, i.e. the
/// remaining error below 1e-13 relative; increments below 1e-5 in these
/// weights (1e-15 relative) are round-off and end the iteration.
const FIXED_SCALE: f64 = 1e-10;
const NEWTON_TOL_FIXED: f64 = 1e-3;
const ROUND_OFF_FIXED: f64 = 1e-5;
/// Multiple of ε (1 + |q|∞) below which a defect c_k of the midpoint
/// Jacobian in the discrete gradient is rounding (`residual_conserving`).
const DG_ROUNDING: f64 = 100.0;
/// Steps taken with full Newton after modified Newton failed with a
/// fresh tangent, before modified Newton is tried again.
const FULL_NEWTON_STEPS: u32 = 20;

impl StructuralStepper {
    /// A stepper for `scheme`.
    pub fn new(scheme: StructuralScheme) -> Self {
        Self {
            al: None,
            scheme,
            bal: scheme.balance(),
            form: Form::Balance,
            nq: usize::MAX,
            n: usize::MAX,
            m: usize::MAX,
            t: 0.0,
            t_prev: 0.0,
            h: 0.0,
            t_fixed0: 0.0,
            k_fixed: 0,
            y: Vec::new(),
            y_prev: Vec::new(),
            dy: Vec::new(),
            dy_prev: Vec::new(),
            a: Vec::new(),
            qdd: Vec::new(),
            da_prev: Vec::new(),
            qddc: Vec::new(),
            qddc1: Vec::new(),
            dq1: Vec::new(),
            dv: Vec::new(),
            mu_prev: Vec::new(),
            control: Control::Step,
            h_prev: 0.0,
            x: Vec::new(),
            lam: Vec::new(),
            a1: Vec::new(),
            y1: Vec::new(),
            err: Vec::new(),
            work: Work::new(0, 0, 0),
            m_t: DMatrix::zeros(0, 0),
            k_t: DMatrix::zeros(0, 0),
            c_t: DMatrix::zeros(0, 0),
            j_t: DMatrix::zeros(0, 0),
            j_t1: DMatrix::zeros(0, 0),
            s: DMatrix::zeros(0, 0),
            lu: CachedLu::new(),
            sparse: None,
            own_residual: false,
            tangent_valid: false,
            tangent_fresh: false,
            s_h: 0.0,
            full_newton: 0,
            fixed: false,
            trial: TrialState::default(),
            last_err: 0.0,
            loop_state: LoopState::default(),
            controller: StepController::default(),
        }
    }

    /// The scheme this stepper integrates with.
    pub fn scheme(&self) -> &StructuralScheme {
        &self.scheme
    }

    /// The algorithmic acceleration a_n at the current point.
    pub fn acceleration(&self) -> &[f64] {
        &self.a
    }

    /// Replace the algorithmic acceleration a_n at the current point, after
    /// [`Stepper::reset`] (which sets the consistent M(q0)⁻¹ f): to continue
    /// a generalized-α run from saved (q, v, a), or to build the
    /// amplification matrix from unit states (q, v, a).
    ///
    /// # Errors
    /// [`IntegrateError::Unsupported`] when `a` does not have one entry per
    /// degree of freedom of the last reset.
    pub fn set_acceleration(&mut self, a: &[f64]) -> Result<(), IntegrateError> {
        if a.len() != self.a.len() {
            return Err(IntegrateError::Unsupported {
                method: self.scheme.name.into(),
                detail: format!(
                    "set_acceleration: {} values for {} degrees of freedom (call reset first)",
                    a.len(),
                    self.a.len()
                ),
            });
        }
        let n = self.n;
        self.a.copy_from_slice(a);
        if self.form == Form::Balance {
            self.qdd.copy_from_slice(a);
            self.dy[n..2 * n].copy_from_slice(a);
        }
        self.tangent_valid = false;
        Ok(())
    }

    /// The local error estimate [e_q; e_v] of the last attempted step,
    /// also in fixed-step runs (on the index-3 form there only its
    /// Zienkiewicz–Xie and first-order terms, see `estimate`).
    pub fn error_estimate(&self) -> &[f64] {
        &self.err
    }

    fn allocate(&mut self, nq: usize, n: usize, m: usize) {
        if (self.nq, self.n, self.m) == (nq, n, m) {
            return;
        }
        (self.nq, self.n, self.m) = (nq, n, m);
        let ny = nq + n + m;
        self.y = vec![0.0; ny];
        self.y_prev = vec![0.0; ny];
        self.dy = vec![0.0; nq + n];
        self.dy_prev = vec![0.0; nq + n];
        self.a = vec![0.0; n];
        self.qdd = vec![0.0; n];
        self.da_prev = vec![0.0; n];
        self.qddc = vec![0.0; n];
        self.qddc1 = vec![0.0; n];
        self.dq1 = vec![0.0; nq];
        self.dv = vec![0.0; n];
        self.mu_prev = vec![0.0; m];
        self.x = vec![0.0; n];
        self.lam = vec![0.0; m];
        self.a1 = vec![0.0; n];
        self.y1 = vec![0.0; ny];
        self.err = vec![0.0; 2 * n];
        self.work = Work::new(nq, n, m);
        self.sparse = None;
        // the dense tangent blocks and iteration matrix on first use only
        // (`dense_tangent`, `factor`): the sparse path forms none
        self.m_t = DMatrix::zeros(0, 0);
        self.k_t = DMatrix::zeros(0, 0);
        self.c_t = DMatrix::zeros(0, 0);
        self.j_t = DMatrix::zeros(0, 0);
        self.j_t1 = DMatrix::zeros(0, 0);
        self.s = DMatrix::zeros(0, 0);
        self.lu = CachedLu::new();
    }

    fn unsupported(&self) -> IntegrateError {
        IntegrateError::Unsupported {
            method: self.scheme.name.into(),
            detail: "integrates second-order equations of motion; use it with one of the \
                     formulations index3, augmented, projection or penalty, or use a \
                     first-order method"
                .into(),
        }
    }

    /// The affine maps of a step of size h from the current point.
    fn affine(&mut self, h: f64) -> Affine {
        let n = self.n;
        let sch = self.scheme;
        let b = self.bal;
        let v = &self.y[self.nq..self.nq + n];
        let w = &mut self.work;
        match self.form {
            Form::Balance => {
                for i in 0..n {
                    let a = self.a[i];
                    w.ahat[i] = 0.0;
                    w.p1[i] = h * v[i] + h * h * (0.5 - sch.beta) * a;
                    w.pv1[i] = v[i] + h * (1.0 - sch.gamma) * a;
                    w.pqe[i] = b.c * h * v[i] + h * h * b.b0 * a;
                    w.pve[i] = v[i] + h * b.g0 * a;
                    w.pae[i] = b.m0 * a;
                }
                Affine {
                    k1: sch.beta * h * h,
                    kv1: sch.gamma * h,
                    kqe: b.b1 * h * h,
                    kve: b.g1 * h,
                    kae: b.m1,
                    s: 1.0,
                    ce: b.c,
                }
            }
            Form::EndPoint => {
                let (am, af) = (sch.alpha_m, sch.alpha_f);
                let s = (1.0 - af) / (1.0 - am);
                for i in 0..n {
                    let a = self.a[i];
                    let ah = (af * self.qdd[i] - am * a) / (1.0 - am);
                    w.ahat[i] = ah;
                    w.p1[i] = h * v[i] + h * h * ((0.5 - sch.beta) * a + sch.beta * ah);
                    w.pv1[i] = v[i] + h * ((1.0 - sch.gamma) * a + sch.gamma * ah);
                    w.pqe[i] = w.p1[i];
                    w.pve[i] = w.pv1[i];
                    w.pae[i] = 0.0;
                }
                let k1 = sch.beta * h * h * s;
                let kv1 = sch.gamma * h * s;
                Affine {
                    k1,
                    kv1,
                    kqe: k1,
                    kve: kv1,
                    kae: 1.0,
                    s,
                    ce: 1.0,
                }
            }
            Form::Conserving => {
                // x = ā: q_{n+1} = q_n ⊕ (h v_n + h²/2 ā), v_{n+1} = v_n + h ā;
                // the tangent at the midpoint q_n ⊕ (h v_n + h²/2 ā)/2,
                // v_{n+1/2} = v_n + h/2 ā, so that S = M + (h/2) C + (h²/4) K,
                // the derivative of the averaged residual (module documentation)
                for i in 0..n {
                    w.ahat[i] = 0.0;
                    w.p1[i] = h * v[i];
                    w.pv1[i] = v[i];
                    w.pqe[i] = 0.5 * h * v[i];
                    w.pve[i] = v[i];
                    w.pae[i] = 0.0;
                }
                Affine {
                    k1: 0.5 * h * h,
                    kv1: h,
                    kqe: 0.25 * h * h,
                    kve: 0.5 * h,
                    kae: 1.0,
                    s: 1.0,
                    ce: 0.5,
                }
            }
        }
    }

    /// Residual [r; Φ/k1] at the unknowns (x, λ) into `work.g`.
    fn residual(&mut self, sp: &mut Counted, af: &Affine, h: f64) -> Result<(), EvalError> {
        if self.form == Form::Conserving {
            return self.residual_conserving(sp, af, h);
        }
        let (n, m) = (self.n, self.m);
        let q = &self.y[..self.nq];
        let te = self.t + af.ce * h;
        let w = &mut self.work;
        for i in 0..n {
            w.delta[i] = w.pqe[i] + af.kqe * self.x[i];
            w.ve[i] = w.pve[i] + af.kve * self.x[i];
            w.ae[i] = w.pae[i] + af.kae * self.x[i];
        }
        sp.integrate_positions(q, &w.delta, &mut w.qe);
        if self.own_residual {
            // the problem's own residual, O(nnz) on the sparse path
            sp.residual(
                te,
                &w.qe,
                &w.ve,
                &w.ae,
                &self.lam,
                &mut w.g[..n],
                &mut w.phi,
            )?;
            for k in 0..m {
                w.g[n + k] = w.phi[k] / af.k1;
            }
            return Self::finite_residual(&w.g, self.scheme.name, te);
        }
        w.dense(n, m);
        sp.mass_matrix(te, &w.qe, &mut w.me)?;
        sp.forces(te, &w.qe, &w.ve, &mut w.fe)?;
        inertia_minus_forces(&w.me, &w.ae, &w.fe, &mut w.g[..n]);
        if m > 0 {
            // end-point form: q_e = q_{n+1}, t_e = t_{n+1}
            sp.constraint_jacobian(te, &w.qe, &mut w.je)?;
            sp.constraints(te, &w.qe, &mut w.phi)?;
            for i in 0..n {
                let mut s = 0.0;
                for k in 0..m {
                    s += w.je[(k, i)] * self.lam[k];
                }
                w.g[i] += s;
            }
            for k in 0..m {
                w.g[n + k] = w.phi[k] / af.k1;
            }
        }
        Self::finite_residual(&w.g, self.scheme.name, te)
    }

    /// A non-finite Newton residual is an evaluation error at t.
    fn finite_residual(g: &[f64], name: &str, t: f64) -> Result<(), EvalError> {
        if g.iter().any(|x| !x.is_finite()) {
            return Err(EvalError::NonFinite {
                what: format!("{name} residual"),
                t,
            });
        }
        Ok(())
    }

    /// Residual of the energy-conserving trapezoidal rule at (x = ā, λ =
    /// λ_{n+1/2}) into `work.g` ([`StructuralScheme::energy_conserving`]):
    ///
    /// ```text
    /// r = M(q_{n+1/2}) ā − (Q_n + Q_{n+1})/2 + Gᵀλ,   Φ(t_{n+1}, q_{n+1}) / (h²/2)
    /// G_k = Φ_{k,q}(q_{n+1/2}) + c_k Δqᵀ/|Δq|²,   c_k = Φ_k(q_{n+1}) − Φ_k(q_n) − Φ_{k,q}(q_{n+1/2}) Δq
    /// ```
    ///
    /// (Φ at t_{n+1/2} in c_k, so that a driver's motion does not enter the
    /// difference), q_{n+1/2} = q_n ⊕ Δq/2. A c_k at the rounding of Φ is
    /// taken as 0: divided by |Δq|² it would turn rounding into a force
    /// as the motion stops (Gonzalez's gradient is singular there), and
    /// its work is at the rounding anyway. Q_n and Φ(t_{n+1/2}, q_n) are in
    /// `work.f0`, `work.phi0` (`attempt_inner`).
    fn residual_conserving(
        &mut self,
        sp: &mut Counted,
        af: &Affine,
        h: f64,
    ) -> Result<(), EvalError> {
        let (nq, n, m) = (self.nq, self.n, self.m);
        let q = &self.y[..nq];
        let (t1, tm) = (self.t + h, self.t + 0.5 * h);
        let w = &mut self.work;
        for i in 0..n {
            w.delta[i] = w.p1[i] + af.k1 * self.x[i];
            w.e[i] = 0.5 * w.delta[i];
            w.v1[i] = w.pv1[i] + af.kv1 * self.x[i];
        }
        sp.integrate_positions(q, &w.delta, &mut w.q1);
        sp.integrate_positions(q, &w.e, &mut w.qe);
        w.dense(n, m);
        sp.mass_matrix(tm, &w.qe, &mut w.me)?;
        sp.forces(t1, &w.q1, &w.v1, &mut w.fe)?;
        // (Q_n + Q_{n+1})/2
        for (fe, f0) in w.fe.iter_mut().zip(&w.f0) {
            *fe = 0.5 * (f0 + *fe);
        }
        inertia_minus_forces(&w.me, &self.x, &w.fe, &mut w.g[..n]);
        if m > 0 {
            sp.constraint_jacobian(tm, &w.qe, &mut w.je)?;
            sp.constraints(tm, &w.q1, &mut w.phim)?;
            let dd: f64 = w.delta.iter().map(|d| d * d).sum();
            let q_max = q.iter().fold(0.0f64, |s, x| s.max(x.abs()));
            let rounding = DG_ROUNDING * f64::EPSILON * (1.0 + q_max);
            let mut work = 0.0;
            for k in 0..m {
                let mut jd = 0.0;
                for j in 0..n {
                    jd += w.je[(k, j)] * w.delta[j];
                }
                let c = w.phim[k] - w.phi0[k] - jd;
                if c.abs() > rounding {
                    work += self.lam[k] * c;
                }
            }
            let scale = if dd > 0.0 { work / dd } else { 0.0 };
            for i in 0..n {
                let mut s = scale * w.delta[i];
                for k in 0..m {
                    s += w.je[(k, i)] * self.lam[k];
                }
                w.g[i] += s;
            }
            sp.constraints(t1, &w.q1, &mut w.phi)?;
            for k in 0..m {
                w.g[n + k] = w.phi[k] / af.k1;
            }
        }
        Self::finite_residual(&w.g, self.scheme.name, t1)
    }

    /// K, C, M and Φ_q at the predicted evaluation point of this step
    /// (x and λ as set by the predictor). Evaluating them at q_n instead
    /// is not good enough where M varies fast: the penalty form's
    /// M + αΦ_qᵀΦ_q changes by O(α h |v| |Φ_qq|) over a step (tens at
    /// α = 1e7, h = 1e-5) while its pivot in the free directions is
    /// O(inertia) (1e-2), so a tangent from q_n makes the free-direction
    /// solve meaningless.
    fn eval_tangent(
        &mut self,
        sp: &mut Counted,
        af: &Affine,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<(), EvalError> {
        let (nq, n, m) = (self.nq, self.n, self.m);
        let q = &self.y[..nq];
        let te = self.t + af.ce * h;
        let w = &mut self.work;
        for i in 0..n {
            w.delta[i] = w.pqe[i] + af.kqe * self.x[i];
            w.ve[i] = w.pve[i] + af.kve * self.x[i];
            w.ae[i] = w.pae[i] + af.kae * self.x[i];
        }
        sp.integrate_positions(q, &w.delta, &mut w.qe);
        ctx.stats.n_jac += 1;
        if let Some(sv) = self.sparse.as_mut().filter(|_| self.form == Form::EndPoint) {
            // K, C, M, Φ_q on the pattern: no n × n block (issue 32)
            if sv.load_tangent(sp, te, &w.qe, &w.ve, &w.ae, &self.lam)? {
                self.tangent_valid = true;
                self.tangent_fresh = true;
                self.invalidate_iteration();
                return Ok(());
            }
        }
        if self.k_t.shape() != (n, n) || self.j_t.shape() != (m, n) {
            self.m_t = DMatrix::zeros(n, n);
            self.k_t = DMatrix::zeros(n, n);
            self.c_t = DMatrix::zeros(n, n);
            self.j_t = DMatrix::zeros(m, n);
            self.j_t1 = DMatrix::zeros(m, n);
        }
        sp.tangent(
            te,
            &w.qe,
            &w.ve,
            &w.ae,
            &self.lam,
            &mut self.k_t,
            &mut self.c_t,
        )?;
        sp.mass_matrix(te, &w.qe, &mut self.m_t)?;
        if m > 0 {
            sp.constraint_jacobian(te, &w.qe, &mut self.j_t)?;
            if self.form == Form::Conserving {
                for i in 0..n {
                    w.delta[i] = w.p1[i] + af.k1 * self.x[i];
                }
                sp.integrate_positions(q, &w.delta, &mut w.q1);
                sp.constraint_jacobian(self.t + h, &w.q1, &mut self.j_t1)?;
            } else {
                self.j_t1.copy_from(&self.j_t);
            }
        }
        self.tangent_valid = true;
        self.tangent_fresh = true;
        self.invalidate_iteration();
        Ok(())
    }

    /// S = [kae M + kve C + kqe K, Φ_qᵀ; Φ_q, 0], factorised.
    fn factor(&mut self, af: &Affine, h: f64, ctx: &mut StepContext) -> Result<(), EvalError> {
        let (n, m) = (self.n, self.m);
        if let Some(sp) = &mut self.sparse {
            ctx.stats.n_lu += 1;
            let vals = sp.lu.values_mut();
            if sp.loaded {
                for (&(_, _, slot), &e) in sp.a_slots.iter().zip(&sp.a_at) {
                    vals[slot] = af.kae * sp.mv[e] + af.kve * sp.cv[e] + af.kqe * sp.kv[e];
                }
                for (&(_, _, lower, upper), &e) in sp.j_slots.iter().zip(&sp.j_at) {
                    vals[lower] = sp.jv[e];
                    vals[upper] = sp.jv[e];
                }
            } else {
                for &(i, j, slot) in &sp.a_slots {
                    vals[slot] = af.kae * self.m_t[(i, j)]
                        + af.kve * self.c_t[(i, j)]
                        + af.kqe * self.k_t[(i, j)];
                }
                for &(k, j, lower, upper) in &sp.j_slots {
                    vals[lower] = self.j_t1[(k, j)];
                    vals[upper] = self.j_t[(k, j)];
                }
            }
            if !sp.lu.factor() {
                return Err(Self::singular_iteration_matrix(m, self.t));
            }
            self.s_h = h;
            return Ok(());
        }
        if self.s.shape() != (n + m, n + m) {
            self.s = DMatrix::zeros(n + m, n + m);
        }
        for j in 0..n {
            for i in 0..n {
                self.s[(i, j)] = af.kae * self.m_t[(i, j)]
                    + af.kve * self.c_t[(i, j)]
                    + af.kqe * self.k_t[(i, j)];
            }
        }
        for k in 0..m {
            for j in 0..n {
                self.s[(n + k, j)] = self.j_t1[(k, j)];
                self.s[(j, n + k)] = self.j_t[(k, j)];
            }
            for l in 0..m {
                self.s[(n + k, n + l)] = 0.0;
            }
        }
        let t = self.t;
        self.lu
            .factor(&self.s, t, ctx.stats)
            .map_err(|_| Self::singular_iteration_matrix(m, t))?;
        self.s_h = h;
        Ok(())
    }

    fn singular_iteration_matrix(m: usize, t: f64) -> EvalError {
        EvalError::Singular {
            what: if m > 0 {
                "iteration matrix [M + γ'C + β'K, Φ_qᵀ; Φ_q, 0]".into()
            } else {
                "iteration matrix M + γhC + βh²K".into()
            },
            t,
            detail: if m > 0 {
                "the constraints are redundant or the configuration is singular \
                 (Φ_q loses rank), or M is singular on the null space of Φ_q"
                    .into()
            } else {
                "the mass matrix is singular".into()
            },
        }
    }

    /// Solve S x = b in place with the factors of the iteration matrix
    /// (dense or sparse).
    fn solve_iteration(
        lu: &mut CachedLu,
        sparse: &mut Option<SparseIteration>,
        b: &mut [f64],
        ctx: &mut StepContext,
    ) {
        match sparse {
            Some(sp) => {
                ctx.stats.n_solve += 1;
                sp.lu.solve_in_place(b);
            }
            None => lu.solve_in_place(b, ctx.stats),
        }
    }

    fn iteration_factored(&self) -> bool {
        match &self.sparse {
            Some(sp) => sp.lu.is_factored(),
            None => self.lu.is_factored(),
        }
    }

    fn invalidate_iteration(&mut self) {
        self.lu.invalidate();
        if let Some(sp) = &mut self.sparse {
            sp.lu.invalidate();
        }
    }

    /// Newton on (x, λ); Ok(true) when converged.
    fn newton(
        &mut self,
        sp: &mut Counted,
        af: &Affine,
        h: f64,
        adaptive: bool,
        ctx: &mut StepContext,
    ) -> Result<bool, IntegrateError> {
        let (nq, n, m) = (self.nq, self.n, self.m);
        let opts = ctx.opts;
        let ls = self.local_scale(h);
        let (rtol, atol, tol, max_iter) = if adaptive {
            (
                opts.rtol * ls,
                opts.atol * ls,
                NEWTON_TOL_ADAPTIVE,
                MAX_ITER_ADAPTIVE,
            )
        } else {
            (FIXED_SCALE, FIXED_SCALE, NEWTON_TOL_FIXED, MAX_ITER_FIXED)
        };
        let mut prev = f64::NAN;
        let mut eta = 1.0f64;
        // round-off floors of the increments in x. The constraint rows are
        // Φ/k1 (k1 = β'), so the rounding ε|q| of Φ becomes ε|q|/k1 in x,
        // which grows like 1/h² and no iteration can reduce (`floor`); it
        // lies in the directions of the constraint forces, which move q by
        // ε|q| only but v by (γ/β) ε|q|/h. Once the whole increment is below
        // it, the part P_S δx tangent to the constraints is measured instead
        // (module documentation), down to its own floor, the rounding of the
        // dynamic rows (`floor_t`).
        let q_max = self.y[..nq].iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let x_max = self.x.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let lam_max = self.lam.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let floor_t = 10.0 * f64::EPSILON * (x_max + lam_max);
        let floor = floor_t
            + if m > 0 {
                10.0 * f64::EPSILON * q_max / af.k1
            } else {
                0.0
            };
        for k in 1..=max_iter {
            ctx.stats.n_newton_iter += 1;
            if self.full_newton > 0 && k > 1 {
                self.eval_tangent(sp, af, h, ctx)?;
                self.factor(af, h, ctx)?;
            }
            self.residual(sp, af, h)?;
            Self::solve_iteration(&mut self.lu, &mut self.sparse, &mut self.work.g, ctx);
            let dx_max = self.work.g[..n].iter().fold(0.0f64, |s, d| s.max(d.abs()));
            // the tangential part is only looked at near the floor (the
            // stall and round-off tests below): one solve less per
            // iteration elsewhere
            let near_floor = dx_max <= 100.0 * floor;
            if near_floor {
                self.tangential_increment(ctx);
            }
            let (mut sq, mut sv, mut sqt, mut svt) = (0.0, 0.0, 0.0, 0.0);
            let mut dt_max = 0.0f64;
            for i in 0..n {
                let d = self.work.g[i];
                let dt = if near_floor { self.work.gt[i] } else { d };
                dt_max = dt_max.max(dt.abs());
                self.x[i] -= d;
                let (qi, vi) = (self.y[i.min(nq - 1)], self.y[nq + i]);
                let (wq, wv) = (atol + rtol * qi.abs(), atol + rtol * vi.abs());
                sq += (af.k1 * d / wq).powi(2);
                sv += (af.kv1 * d / wv).powi(2);
                sqt += (af.k1 * dt / wq).powi(2);
                svt += (af.kv1 * dt / wv).powi(2);
            }
            for l in 0..m {
                self.lam[l] -= self.work.g[n + l];
            }
            // once the whole increment is at the constraint rows' floor,
            // only its tangential part can still converge: measure that
            let at_floor = dx_max <= floor;
            let (sq, sv) = if at_floor { (sqt, svt) } else { (sq, sv) };
            let dn = (sq.max(sv) / n.max(1) as f64).sqrt();
            if !dn.is_finite() {
                ctx.stats.n_newton_fail += 1;
                return Ok(false);
            }
            let round_off = at_floor && (dt_max <= floor_t || (!adaptive && dn <= ROUND_OFF_FIXED));
            if k > 1 && prev > 0.0 && !round_off {
                let rate = dn / prev;
                if rate >= 0.5 && dx_max <= 100.0 * floor && dt_max <= 100.0 * floor_t {
                    // stalled within a hundred times the round-off floor
                    return Ok(true);
                }
                // adaptive: give up early (a smaller step is cheap); fixed
                // step: the step cannot shrink, so let full Newton work
                // through a large first correction (a stiff spring loading
                // within the step) as long as it does not diverge
                let diverging = if adaptive {
                    rate >= 1.0
                } else {
                    rate >= 2.0 || (rate >= 1.0 && k >= 4)
                };
                if diverging {
                    ctx.stats.n_newton_fail += 1;
                    return Ok(false);
                }
                if adaptive && rate.powi((max_iter - k) as i32) / (1.0 - rate) * dn > tol {
                    ctx.stats.n_newton_fail += 1;
                    return Ok(false);
                }
                eta = rate.min(0.99) / (1.0 - rate.min(0.99));
                if rate > 0.2 || k >= 5 {
                    self.tangent_valid = false;
                }
            }
            if round_off || eta * dn <= tol || dn <= 1e-3 * tol {
                return Ok(true);
            }
            prev = dn;
        }
        ctx.stats.n_newton_fail += 1;
        Ok(false)
    }

    /// One trial step of size h from the current point (the method side of
    /// [`crate::step_loop::advance`]): the Newton iteration on (x, λ), the
    /// end point, and its local error in units of the tolerance. A Newton
    /// failure with a tangent from an earlier step refreshes it and
    /// repeats (twice at most); one with a fresh tangent switches to full
    /// Newton for the next steps and repeats; then, adaptive: h / 4;
    /// fixed: once more from q_{n+1} = q_n, then the failure is reported.
    fn attempt_inner(
        &mut self,
        sp: &mut Counted,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<Trial, IntegrateError> {
        let opts = ctx.opts;
        let adaptive = opts.fixed_step.is_none();
        let (nq, n, m) = (self.nq, self.n, self.m);
        let sch = self.scheme;
        let af = self.affine(h);
        // predictor: the current acceleration (x = a_n or q̈_n), λ_n;
        // after a failure at a fixed step, q_{n+1} = q_n instead (a
        // stiff undamped mode far beyond the step, ωh ≫ 1, flips the
        // acceleration at every step, so a_n is the worst guess)
        if self.trial.hold_positions {
            for i in 0..n {
                self.x[i] = -self.work.p1[i] / af.k1;
            }
        } else {
            match self.form {
                Form::Balance => self.x.copy_from_slice(&self.a),
                Form::EndPoint => self.x.copy_from_slice(&self.qdd),
                Form::Conserving => self.x.fill(0.0),
            }
        }
        if self.form == Form::Conserving {
            // λ_{n-1/2} predicts λ_{n+1/2}; Q_n and Φ(t_{n+1/2}, q_n) for
            // the residual
            self.lam.copy_from_slice(&self.mu_prev);
            let t = self.t;
            let w = &mut self.work;
            w.ve.copy_from_slice(&self.y[nq..nq + n]);
            sp.forces(t, &self.y[..nq], &w.ve, &mut w.f0)?;
            if m > 0 {
                sp.constraints(t + 0.5 * h, &self.y[..nq], &mut w.phi0)?;
            }
        } else {
            self.lam.copy_from_slice(&self.y[nq + n..nq + n + m]);
        }
        if !self.tangent_valid {
            self.eval_tangent(sp, &af, h, ctx)?;
        }
        if !self.iteration_factored() || self.s_h != h {
            self.factor(&af, h, ctx)?;
        }
        if !self.newton(sp, &af, h, adaptive, ctx)? {
            self.tangent_valid = false;
            if !self.tangent_fresh && self.trial.newton_retries < 2 {
                self.trial.newton_retries += 1;
                return Ok(Trial::Repeat);
            }
            if self.full_newton == 0 {
                // modified Newton does not contract with a fresh
                // tangent: the iteration matrix varies too fast over
                // the iterates (ill-conditioned forms such as penalty,
                // whose free-direction pivot is 1e-9 of its largest);
                // full Newton for the next steps
                self.full_newton = FULL_NEWTON_STEPS;
                return Ok(Trial::Repeat);
            }
            if adaptive && self.trial.newton_rejections < 20 {
                self.trial.newton_rejections += 1;
                return Ok(Trial::Failed { factor: 0.25 });
            }
            if !adaptive && !self.trial.hold_positions {
                self.trial.hold_positions = true;
                return Ok(Trial::Repeat);
            }
            return Err(IntegrateError::NewtonFailed {
                t: self.t,
                h,
                iters: MAX_ITER_FIXED,
            });
        }
        // the end point from the converged unknowns
        {
            let w = &mut self.work;
            for i in 0..n {
                self.a1[i] = af.s * self.x[i] + w.ahat[i];
                w.delta[i] = w.p1[i] + af.k1 * self.x[i];
            }
            let q = &self.y[..nq];
            let (q1, rest1) = self.y1.split_at_mut(nq);
            sp.integrate_positions(q, &w.delta, q1);
            for i in 0..n {
                rest1[i] = w.pv1[i] + af.kv1 * self.x[i];
            }
            rest1[n..n + m].copy_from_slice(&self.lam);
        }
        if self.form == Form::EndPoint && sch.alpha_m == sch.alpha_f {
            self.project_end_point(sp, self.t + h)?;
        }
        if self.form == Form::Conserving {
            self.conserving_end_point(sp, h)?;
        }
        self.estimate(sp, h, adaptive)?;
        if nq != n {
            let (q1, v1) = self.y1.split_at(nq);
            sp.position_derivative(q1, &v1[..n], &mut self.dq1);
        }
        self.full_newton = self.full_newton.saturating_sub(1);
        if !adaptive {
            return Ok(Trial::Unchecked);
        }
        // the local error in units of the tolerance; the controller sees
        // it against the local tolerance of the law
        self.last_err = self.error_norm(opts.rtol, opts.atol, h);
        Ok(Trial::Estimated(match self.control {
            Control::Proportional(sigma) => self.last_err / sigma,
            Control::Step | Control::UnitStep => self.last_err,
        }))
    }

    /// The end point of a conserving step ([`StructuralScheme::energy_conserving`]):
    /// the velocities put on the velocity constraints with the kinetic
    /// energy the step left them, then q̈_{n+1} and λ_{n+1} consistent at
    /// (q_{n+1}, v_{n+1}) ([`Self::consistent_acceleration`]; λ_{n+1/2} of
    /// the step is first order only, it answers the O(h²) normal velocity
    /// that each projection removes: λ slope 1.09 on the double pendulum,
    /// also when extrapolated from λ_{n±1/2}):
    ///
    /// ```text
    /// v_p = v_{n+1} + Δv,   [M Φ_qᵀ; Φ_q 0] [Δv; μ] = [0; ν − Φ_q v_{n+1}]
    /// v_p = v_ν + w,        w = P v_p (Φ_q w = 0),  v_νᵀ M w = 0
    /// v ← v_ν + s w,        s² = (T* − T(v_ν)) / T(w),  T* = ½ v_{n+1}ᵀ M v_{n+1}
    /// ```
    ///
    /// at (t_{n+1}, q_{n+1}): the M-orthogonal projection onto the
    /// invariant set {Φ_q v = ν, T(v) = T*} (Hairer, Lubich & Wanner,
    /// *Geometric Numerical Integration*, 2nd ed., Section IV.4, standard
    /// projection), which keeps the step's discrete energy balance — exact
    /// for conservative forces, the trapezoidal work of the others.
    /// Without it the trapezoidal velocities 2Δq/h − v_n meet the velocity
    /// constraints only on average over a step (G (v_n + v_{n+1}) = 0), and
    /// the alternating violation grows: on S1's (1e2, 1e2) case to 98 m/s
    /// against speeds of 300 m/s by t = 5.6 s, where Newton failed. The
    /// mass-orthogonal projection alone (the end-point form's) removes the
    /// violation's kinetic energy: 24 % of E lost on that case in 6 s.
    fn conserving_end_point(&mut self, sp: &mut Counted, h: f64) -> Result<(), IntegrateError> {
        let (nq, n) = (self.nq, self.n);
        let t1 = self.t + h;
        let mut q1 = std::mem::take(&mut self.work.q1);
        let mut v1 = std::mem::take(&mut self.work.v1);
        q1.copy_from_slice(&self.y1[..nq]);
        v1.copy_from_slice(&self.y1[nq..nq + n]);
        // no constraints: nothing to project (q̈ and λ below only)
        let project = self.m > 0;
        let r = if project {
            self.velocity_correction(sp, t1, &q1, &v1)
        } else {
            Ok(())
        };
        let singular = || -> IntegrateError {
            EvalError::Singular {
                what: "KKT matrix [M Φ_qᵀ; Φ_q 0]".into(),
                t: t1,
                detail: "newmark (energy_conserving): velocity projection".into(),
            }
            .into()
        };
        let out = r.and_then(|()| {
            if !project {
                return Ok(());
            }
            // M and Φ_q at q1 are in `work` (velocity_correction)
            let w = &mut self.work;
            let kinetic = |me: &DMatrix<f64>, v: &[f64]| -> f64 {
                let mut s = 0.0;
                for i in 0..n {
                    for j in 0..n {
                        s += v[i] * me[(i, j)] * v[j];
                    }
                }
                0.5 * s
            };
            let t_star = kinetic(&w.me, &v1);
            for j in 0..n {
                v1[j] += self.dv[j];
            }
            // w = P v_p into `e`, v_ν = v_p − w into `ve`
            if !w.kkt.tangential(&w.me, &w.je, &v1, &mut w.e) {
                return Err(singular());
            }
            for j in 0..n {
                w.ve[j] = v1[j] - w.e[j];
            }
            let (t_nu, t_w) = (kinetic(&w.me, &w.ve), kinetic(&w.me, &w.e));
            if t_w > 0.0 && t_star >= t_nu {
                let scale = ((t_star - t_nu) / t_w).sqrt();
                for j in 0..n {
                    v1[j] = w.ve[j] + scale * w.e[j];
                }
            }
            self.y1[nq..nq + n].copy_from_slice(&v1);
            Ok(())
        });
        // q̈_{n+1} (into x, for the dense output; a1 keeps ā) and λ_{n+1}
        let mut lam = std::mem::take(&mut self.work.phim);
        let mut qdd = std::mem::take(&mut self.x);
        let out =
            out.and_then(|()| self.consistent_acceleration(sp, t1, &q1, &v1, &mut qdd, &mut lam));
        if out.is_ok() {
            self.y1[nq + n..].copy_from_slice(&lam);
        }
        self.x = qdd;
        self.work.phim = lam;
        self.work.q1 = q1;
        self.work.v1 = v1;
        out
    }

    /// Run `f` on the problem's constrained (or plain) second-order form
    /// through the force counter.
    fn on_form<R>(
        &mut self,
        p: &mut dyn OdeProblem,
        ctx: &mut StepContext,
        f: impl FnOnce(&mut Self, &mut Counted, &mut StepContext) -> Result<R, IntegrateError>,
    ) -> Result<R, IntegrateError> {
        let r = with_form(p, |inner| {
            let mut sp = Counted { inner, n_forces: 0 };
            let r = f(self, &mut sp, ctx);
            ctx.stats.n_rhs += sp.n_forces;
            r
        });
        // the error message only when needed: building it allocates
        r.unwrap_or_else(|| Err(self.unsupported()))
    }

    /// Velocity and acceleration projection at the end of a step of the
    /// undamped members (ρ∞ = 1: newmark, midpoint_rule) on the index-3
    /// equations: v_{n+1} mass-orthogonally onto Φ_q v = ν,
    ///
    /// ```text
    /// [M Φ_qᵀ; Φ_q 0] [Δv; μ] = [0; ν − Φ_q v],
    /// ```
    ///
    /// then q̈_{n+1} and λ_{n+1} from the KKT system at (q_{n+1}, v_{n+1})
    /// (Bayo & Ledesma 1996, Nonlinear Dyn. 9:113–130; jalon-bayo 7.4).
    /// Without it the trapezoidal rule's multipliers drift and grow
    /// linearly (Cardona & Géradin 1989; on a Cartesian pendulum at
    /// h = 1e-2, λ = −1260 against 4.6 at t = 4, and Newton fails at
    /// t = 4.11); the damped members (hht, generalized_alpha) need none.
    fn project_end_point(&mut self, sp: &mut Counted, t1: f64) -> Result<(), IntegrateError> {
        let (nq, n) = (self.nq, self.n);
        // reuse the step's scratch (no allocation per step): q1 in qe,
        // v1 in ve, q̈ in ae, λ in lam
        let mut q1 = std::mem::take(&mut self.work.qe);
        let mut v1 = std::mem::take(&mut self.work.ve);
        let mut qdd = std::mem::take(&mut self.work.ae);
        let mut lam = std::mem::take(&mut self.lam);
        q1.copy_from_slice(&self.y1[..nq]);
        v1.copy_from_slice(&self.y1[nq..nq + n]);
        let r = self
            .project_velocity(sp, t1, &q1, &mut v1)
            .and_then(|_| self.consistent_acceleration(sp, t1, &q1, &v1, &mut qdd, &mut lam));
        if r.is_ok() {
            self.y1[nq..nq + n].copy_from_slice(&v1);
            self.y1[nq + n..].copy_from_slice(&lam);
            self.x.copy_from_slice(&qdd);
            self.a1.copy_from_slice(&qdd);
        }
        self.work.qe = q1;
        self.work.ve = v1;
        self.work.ae = qdd;
        self.lam = lam;
        r
    }

    /// v ← v + Δv with [M Φ_qᵀ; Φ_q 0] [Δv; μ] = [0; ν − Φ_q v] at (t1, q1);
    /// Δv is kept in `dv`.
    fn project_velocity(
        &mut self,
        sp: &mut Counted,
        t1: f64,
        q1: &[f64],
        v1: &mut [f64],
    ) -> Result<(), IntegrateError> {
        self.velocity_correction(sp, t1, q1, v1)?;
        for j in 0..self.n {
            v1[j] += self.dv[j];
        }
        Ok(())
    }

    /// `dv` ← Δv of [M Φ_qᵀ; Φ_q 0] [Δv; μ] = [0; ν − Φ_q v] at (t1, q1):
    /// the smallest correction in the kinetic metric that puts v on the
    /// velocity constraints. Leaves M and Φ_q at q1 in `work`.
    fn velocity_correction(
        &mut self,
        sp: &mut Counted,
        t1: f64,
        q1: &[f64],
        v1: &[f64],
    ) -> Result<(), IntegrateError> {
        let n = self.n;
        let w = &mut self.work;
        w.kkt.load(sp, t1, q1, &mut w.me, &mut w.je)?;
        sp.velocity_rhs(t1, q1, &mut w.phi)?;
        w.kkt.sub_jacobian_times(&w.je, v1, &mut w.phi);
        w.fe.fill(0.0);
        if !w.kkt.solve(&w.me, &w.je, &w.fe, &w.phi) {
            return Err(EvalError::Singular {
                what: "KKT matrix [M Φ_qᵀ; Φ_q 0]".into(),
                t: t1,
                detail: format!("{}: velocity projection", self.scheme.name),
            }
            .into());
        }
        self.dv.copy_from_slice(&w.kkt.x[..n]);
        Ok(())
    }

    /// `work.gt` ← P_S δx, δx = `work.g[..n]`: the part of a Newton
    /// increment tangent to the constraints along the iteration matrix's
    /// own constraint-force directions, S [P_S δx; μ] = [A δx; 0] with A the
    /// dynamic block of S (P_S annihilates exactly what the constraint rows
    /// put into δx, their rounding included). Unconstrained: δx.
    fn tangential_increment(&mut self, ctx: &mut StepContext) {
        let (n, m) = (self.n, self.m);
        let w = &mut self.work;
        if m == 0 {
            w.gt[..n].copy_from_slice(&w.g[..n]);
            return;
        }
        if let Some(sp) = &self.sparse {
            w.gt.fill(0.0);
            let vals = sp.lu.values();
            for &(i, j, slot) in &sp.a_slots {
                w.gt[i] += vals[slot] * w.g[j];
            }
        } else {
            for i in 0..n {
                let mut s = 0.0;
                for j in 0..n {
                    s += self.s[(i, j)] * w.g[j];
                }
                w.gt[i] = s;
            }
            w.gt[n..].fill(0.0);
        }
        Self::solve_iteration(&mut self.lu, &mut self.sparse, &mut w.gt, ctx);
    }

    /// Scale of the tolerance of one step of size h: h (in units of time)
    /// with error per unit step, 1 with error per step.
    fn local_scale(&self, h: f64) -> f64 {
        match self.control {
            Control::Step => 1.0,
            Control::UnitStep => h.abs(),
            Control::Proportional(sigma) => sigma,
        }
    }

    /// The local error estimate [e_q; e_v] of the step just solved, into
    /// `err` (module documentation, "Local error"). At fixed steps on the
    /// index-3 form only the Zienkiewicz–Xie and first-order terms (no
    /// control uses it there, and the refinements cost KKT solves).
    fn estimate(&mut self, sp: &mut Counted, h: f64, adaptive: bool) -> Result<(), IntegrateError> {
        let (nq, n, m) = (self.nq, self.n, self.m);
        let sch = self.scheme;
        let t1 = self.t + h;
        let singular = |what: &str| -> IntegrateError {
            EvalError::Singular {
                what: "KKT matrix [M Φ_qᵀ; Φ_q 0]".into(),
                t: t1,
                detail: format!("{}: {what}", sch.name),
            }
            .into()
        };
        let projected = sch.alpha_m == sch.alpha_f;
        // fixed steps on the index-3 form: the plain estimate (nothing
        // controls with it; the refinements cost KKT solves every step)
        let refined = self.form == Form::EndPoint && adaptive;
        if refined {
            if projected {
                // project_end_point left q̈ consistent at (q1, v1)
                self.qddc1.copy_from_slice(&self.x);
            } else {
                // q̈_c from M, Φ_q, Q of the last Newton residual, at the
                // converged end point to the Newton tolerance (the sparse
                // residual forms none of them: evaluated here)
                let w = &mut self.work;
                let own = self.own_residual && {
                    let (qe, ve) = (std::mem::take(&mut w.qe), std::mem::take(&mut w.ve));
                    let (mut qddc1, mut lam_c) = (
                        std::mem::take(&mut self.qddc1),
                        std::mem::take(&mut w.lam_c),
                    );
                    let r = sp.consistent_acceleration(t1, &qe, &ve, &mut qddc1, &mut lam_c);
                    (w.qe, w.ve, self.qddc1, w.lam_c) = (qe, ve, qddc1, lam_c);
                    r?
                };
                let w = &mut self.work;
                if !own {
                    if self.own_residual {
                        w.dense(n, m);
                        sp.mass_matrix(t1, &w.qe, &mut w.me)?;
                        sp.forces(t1, &w.qe, &w.ve, &mut w.fe)?;
                        sp.constraint_jacobian(t1, &w.qe, &mut w.je)?;
                    }
                    sp.gamma(t1, &w.qe, &w.ve, &mut w.phi)?;
                    w.kkt.dense();
                    if !w.kkt.solve(&w.me, &w.je, &w.fe, &w.phi) {
                        return Err(singular("consistent acceleration of the error estimate"));
                    }
                    self.qddc1.copy_from_slice(&w.kkt.x[..n]);
                }
                // what v1 misses of Φ_q v = ν (newmark, midpoint_rule: the
                // correction project_end_point applied); q1, v1 copied
                // into the workspace's own buffers (taken, not allocated)
                let mut q1 = std::mem::take(&mut w.q1);
                let mut v1 = std::mem::take(&mut w.v1);
                q1.copy_from_slice(&self.y1[..nq]);
                v1.copy_from_slice(&self.y1[nq..nq + n]);
                let corrected = self.velocity_correction(sp, t1, &q1, &v1);
                self.work.q1 = q1;
                self.work.v1 = v1;
                corrected?;
                if adaptive {
                    // adaptive steps keep v on the velocity constraints
                    // (module documentation, "the velocity constraints")
                    for j in 0..n {
                        self.y1[nq + j] += self.dv[j];
                    }
                }
            }
        }
        let (eq, ev) = sch.error_coefficients();
        let cv = sch.velocity_error_coefficient();
        let second =
            self.h_prev > 0.0 && sch.order() == 2 && (self.form == Form::Balance || refined);
        let mut finite = true;
        for i in 0..n {
            let da = self.a1[i] - self.a[i];
            finite &= da.is_finite();
            self.err[i] = eq * h * h * da;
            let mut e_v = ev * h * da;
            if second {
                // c_v h³ q with q from the second difference of
                // the accelerations over the last two steps
                let d = match self.form {
                    Form::Balance | Form::Conserving => da,
                    Form::EndPoint => self.qddc1[i] - self.qddc[i],
                };
                let a2 = 2.0 * (d / h - self.da_prev[i] / self.h_prev) / (h + self.h_prev);
                e_v += cv * h * h * h * a2;
            }
            self.err[n + i] = e_v;
        }
        if !finite || self.y1.iter().any(|x| !x.is_finite()) {
            return Err(EvalError::NonFinite {
                what: format!("{} step", sch.name),
                t: t1,
            }
            .into());
        }
        if refined && m > 0 {
            // the parts tangent to the constraints, then the velocity
            // constraint residual, against the tolerance itself (× the
            // law's local scale, which the error test divides out)
            let Work { me, je, kkt, e, .. } = &mut self.work;
            for part in 0..2 {
                e.copy_from_slice(&self.err[part * n..(part + 1) * n]);
                if !kkt.tangential(me, je, e, &mut self.err[part * n..(part + 1) * n]) {
                    return Err(singular("error estimate"));
                }
            }
            let ls = self.local_scale(h);
            for i in 0..n {
                self.err[n + i] += ls * self.dv[i];
            }
        }
        Ok(())
    }

    /// Weighted RMS of [e_q; e_v] against max(|y|, |y1|) of q and v.
    ///
    /// The weights have a round-off floor: the law's local tolerance
    /// (scale `local_scale(h)` times atol + rtol |y|) is never taken below
    /// [`ROUNDOFF_FLOOR`] ε ‖q‖∞ for a position and the same factor times
    /// ε max(‖v‖∞, ‖q‖∞) (in the model's units) for a velocity: the
    /// rounding of the state's largest components. (A floor of
    /// ε ‖q‖∞/h for v, the velocity that a position rounding ε|q| implies,
    /// is too coarse: it left hht's velocities 18 tolerances off at rtol
    /// 1e-8 in `tests/suite/dae_convergence.rs`.) Without it a component near
    /// zero under a tight atol asks for less than the arithmetic resolves:
    /// at rtol 1e-9, atol 1e-12 the proportional law's local tolerance of
    /// an angle at 0 is 3e-18, and every structural method on the double
    /// pendulum cut its step to 1e-19 s within 1e-4 s (LSODE's "too much
    /// accuracy requested" case, handled here by asking for what can be
    /// had).
    fn error_norm(&self, rtol: f64, atol: f64, h: f64) -> f64 {
        let (nq, n) = (self.nq, self.n);
        let ls = self.local_scale(h);
        let big = |a: &[f64], b: &[f64]| {
            a.iter().chain(b).fold(
                0.0f64,
                |m, x| if x.is_finite() { m.max(x.abs()) } else { m },
            )
        };
        let q_max = big(&self.y[..nq], &self.y1[..nq]);
        let v_max = big(&self.y[nq..nq + n], &self.y1[nq..nq + n]);
        let floor_q = ROUNDOFF_FLOOR * f64::EPSILON * q_max / ls;
        let floor_v = ROUNDOFF_FLOOR * f64::EPSILON * v_max.max(q_max) / ls;
        let mut s = 0.0;
        for i in 0..n {
            let qi = i.min(nq - 1);
            let sq = (atol + rtol * self.y[qi].abs().max(self.y1[qi].abs())).max(floor_q);
            let sv = (atol + rtol * self.y[nq + i].abs().max(self.y1[nq + i].abs())).max(floor_v);
            s += (self.err[i] / sq).powi(2) + (self.err[n + i] / sv).powi(2);
        }
        (s / (2 * n).max(1) as f64).sqrt()
    }

    /// Make the candidate (y1, a1, x) the current point.
    fn accept(&mut self, h: f64) {
        let (nq, n) = (self.nq, self.n);
        for i in 0..n {
            self.da_prev[i] = match self.form {
                Form::Balance | Form::Conserving => self.a1[i] - self.a[i],
                Form::EndPoint => self.qddc1[i] - self.qddc[i],
            };
        }
        if self.form == Form::Conserving {
            self.mu_prev.copy_from_slice(&self.lam);
        }
        if self.form == Form::EndPoint {
            self.qddc.copy_from_slice(&self.qddc1);
        }
        self.h_prev = h;
        self.t_prev = self.t;
        self.t += h;
        std::mem::swap(&mut self.y_prev, &mut self.y);
        std::mem::swap(&mut self.dy_prev, &mut self.dy);
        self.y.copy_from_slice(&self.y1);
        self.a.copy_from_slice(&self.a1);
        match self.form {
            Form::Balance => self.qdd.copy_from_slice(&self.a1),
            Form::EndPoint | Form::Conserving => self.qdd.copy_from_slice(&self.x),
        }
        if nq == n {
            self.dy[..n].copy_from_slice(&self.y[nq..nq + n]);
        } else {
            // q' = T(q) v: the Hermite slope of the positions
            self.dy[..nq].copy_from_slice(&self.dq1);
        }
        self.dy[nq..nq + n].copy_from_slice(&self.qdd);
        self.tangent_fresh = false;
    }

    /// Consistent q̈_0 (and λ_0) at (t, q, v): M q̈ = Q (m = 0) or the KKT
    /// system [M Φ_qᵀ; Φ_q 0] [q̈; λ] = [Q; γ], by the problem's own
    /// factorisation where it has one
    /// ([`ConstrainedSecondOrderProblem::consistent_acceleration`]), else
    /// by the dense LU in `work.kkt`.
    fn consistent_acceleration(
        &mut self,
        sp: &mut Counted,
        t: f64,
        q: &[f64],
        v: &[f64],
        qdd: &mut [f64],
        lam: &mut [f64],
    ) -> Result<(), IntegrateError> {
        let (n, m) = (self.n, self.m);
        // the problem's own (sparse) factorisation where it has one
        if sp.consistent_acceleration(t, q, v, qdd, lam)? {
            return Ok(());
        }
        let w = &mut self.work;
        w.dense(n, m);
        w.kkt.dense();
        sp.mass_matrix(t, q, &mut w.me)?;
        sp.forces(t, q, v, &mut w.fe)?;
        if m > 0 {
            sp.constraint_jacobian(t, q, &mut w.je)?;
            sp.gamma(t, q, v, &mut w.phi)?;
        }
        if !w.kkt.solve(&w.me, &w.je, &w.fe, &w.phi) {
            return Err(EvalError::Singular {
                what: if m > 0 {
                    "KKT matrix [M Φ_qᵀ; Φ_q 0]".into()
                } else {
                    "mass matrix".into()
                },
                t,
                detail: format!(
                    "{}: consistent acceleration (redundant constraints, a singular \
                 configuration, or a coordinate with neither inertia nor constraint)",
                    self.scheme.name
                ),
            }
            .into());
        }
        qdd.copy_from_slice(&w.kkt.x[..n]);
        lam.copy_from_slice(&w.kkt.x[n..]);
        Ok(())
    }

    fn reset_inner(
        &mut self,
        sp: &mut Counted,
        t0: f64,
        y0: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let name = self.scheme.name;
        let (nq, n, m) = (sp.n_positions(), sp.n_velocities(), sp.n_constraints());
        if y0.len() != nq + n + m {
            return Err(IntegrateError::Unsupported {
                method: name.into(),
                detail: format!(
                    "state must have {nq} positions, {n} velocities and {m} multipliers \
                     ({} values), got {}",
                    nq + n + m,
                    y0.len()
                ),
            });
        }
        self.form = if self.scheme.discrete_gradient {
            Form::Conserving
        } else if m > 0 {
            if self.scheme.theta != 1.0 {
                return Err(IntegrateError::Unsupported {
                    method: name.into(),
                    detail: format!(
                        "theta = {} > 1 enforces equilibrium beyond the step's end and is not \
                         defined for the index-3 equations; use newmark, hht or \
                         generalized_alpha with index3",
                        self.scheme.theta
                    ),
                });
            }
            Form::EndPoint
        } else {
            Form::Balance
        };
        self.allocate(nq, n, m);
        // the sparse iteration matrix where the problem declares its
        // pattern (also for the consistent accelerations below); rebuilt
        // only when the pattern changes
        match sp.sparsity() {
            Some(pattern) if m > 0 => {
                if self.sparse.as_ref().is_none_or(|s| s.sparsity != pattern) {
                    self.work.kkt.sparse = Some(SparseIteration::new(n, m, pattern.clone()));
                    self.sparse = Some(SparseIteration::new(n, m, pattern));
                }
            }
            _ => {
                self.sparse = None;
                self.work.kkt.sparse = None;
            }
        }
        // the sparse evaluations of M, Φ_q and the tangent: the end-point
        // form (the conserving form reads the dense M of `work`)
        let sparse_evals = self.form == Form::EndPoint;
        for s in [self.sparse.as_mut(), self.work.kkt.sparse.as_mut()]
            .into_iter()
            .flatten()
        {
            s.sparse_evals = sparse_evals;
            s.loaded = false;
        }
        self.work.kkt.factored = false;
        self.own_residual = m > 0
            && self.form != Form::Conserving
            && (self.sparse.is_some() || sp.has_own_residual());
        self.t = t0;
        self.t_prev = t0;
        self.t_fixed0 = t0;
        self.k_fixed = 0;
        self.h_prev = 0.0;
        self.y.copy_from_slice(y0);
        let (q0, v0) = (y0[..nq].to_vec(), y0[nq..nq + n].to_vec());
        let (mut qdd, mut lam) = (vec![0.0; n], vec![0.0; m]);
        self.consistent_acceleration(sp, t0, &q0, &v0, &mut qdd, &mut lam)?;
        self.qdd.copy_from_slice(&qdd);
        self.qddc.copy_from_slice(&qdd);
        self.y[nq + n..].copy_from_slice(&lam);
        self.a.copy_from_slice(&qdd);
        if self.form == Form::Conserving {
            self.mu_prev.copy_from_slice(&lam);
        }
        let shift = self.scheme.alpha_m - self.scheme.alpha_f;
        let h_start = ctx.opts.fixed_step.or(ctx.opts.h0).unwrap_or(self.h);
        if self.form == Form::EndPoint && shift != 0.0 && h_start > 0.0 {
            // Arnold & Brüls (2007), Section 4: a_0 = q̈(t_0 + Δ h),
            // Δ = α_m − α_f, keeps second order in λ; q⃛_0 by a central
            // difference of the consistent accelerations along the flow
            let eps = f64::EPSILON.cbrt() * (1.0 + t0.abs());
            let (mut qp, mut vp) = (vec![0.0; nq], vec![0.0; n]);
            let (mut ap, mut am) = (vec![0.0; n], vec![0.0; n]);
            let mut d = vec![0.0; n];
            for (sgn, out) in [(1.0, &mut ap), (-1.0, &mut am)] {
                let e = sgn * eps;
                for i in 0..n {
                    d[i] = e * v0[i] + 0.5 * e * e * qdd[i];
                    vp[i] = v0[i] + e * qdd[i];
                }
                sp.integrate_positions(&q0, &d, &mut qp);
                self.consistent_acceleration(sp, t0 + e, &qp, &vp, out, &mut lam)?;
            }
            for i in 0..n {
                self.a[i] = qdd[i] + shift * h_start * (ap[i] - am[i]) / (2.0 * eps);
            }
        }
        sp.position_derivative(&q0, &v0, &mut self.dy[..nq]);
        self.dy[nq..nq + n].copy_from_slice(&self.qdd);
        self.y_prev.copy_from_slice(&self.y);
        self.dy_prev.copy_from_slice(&self.dy);
        self.tangent_valid = false;
        self.tangent_fresh = false;
        self.full_newton = 0;
        self.invalidate_iteration();
        // the index-3 form: tolerance-proportional unless error per unit
        // step is asked for (module documentation, "Control law")
        self.control = match (self.form, ctx.opts.error_per) {
            (_, ErrorPer::UnitStep) => Control::UnitStep,
            (Form::Balance, ErrorPer::Step) => Control::Step,
            (Form::EndPoint | Form::Conserving, ErrorPer::Step) => {
                Control::Proportional(proportional_scale(ctx.opts.rtol, self.scheme.order()))
            }
        };
        let per = match self.control {
            Control::UnitStep => ErrorPer::UnitStep,
            Control::Step | Control::Proportional(_) => ErrorPer::Step,
        };
        self.controller = StepController::new(ctx.opts.controller, per);
        Ok(())
    }
}

impl StepAttempt for StructuralStepper {
    fn sums_accepted_error(&self) -> bool {
        true
    }
    fn current_t(&self) -> f64 {
        self.t
    }

    /// Adaptive: the controller's h. Fixed: the step to t_0 + (k + 1) h,
    /// counted from the last reset, so that t carries no accumulated
    /// rounding and the last step lands on the stop time.
    fn proposed_h(&self) -> f64 {
        if self.fixed {
            fixed_grid_step(self.t_fixed0, self.k_fixed, self.h, self.t)
        } else {
            self.h
        }
    }

    fn set_h(&mut self, h: f64) {
        if !self.fixed {
            self.h = h;
        }
    }

    fn loop_state(&mut self) -> &mut LoopState {
        &mut self.loop_state
    }

    fn attempt(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<Trial, IntegrateError> {
        self.on_form(p, ctx, |s, sp, ctx| s.attempt_inner(sp, h, ctx))
    }

    fn passes(&self, err: f64, h: f64) -> bool {
        self.controller.accept(err, h)
    }

    fn factor(&mut self, err: f64, h: f64, accepted: bool) -> f64 {
        let fac = self.controller.factor(err, h, self.scheme.order());
        if accepted {
            self.controller.accepted(err, h);
        }
        fac
    }

    fn commit(
        &mut self,
        _p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        if self.fixed {
            self.k_fixed += 1;
        } else {
            ctx.stats.accumulated_error += self.last_err;
        }
        self.accept(h);
        self.trial = TrialState::default();
        Ok(())
    }

    /// The method starts again at the current point: consistent
    /// accelerations and multipliers, the starting acceleration of
    /// generalized-α, and a first step chosen anew.
    fn restart_here(
        &mut self,
        p: &mut dyn OdeProblem,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let (t, y) = (self.t, self.y.clone());
        if !self.fixed {
            self.h = 0.0;
        }
        // the loop's memory of the crossing survives the reset (a second
        // crossing within a few steps is a blow-up, not a jump)
        let crossing = self.loop_state;
        Stepper::reset(self, p, t, &y, ctx)?;
        self.loop_state = crossing;
        // a first step the arithmetic resolves at t
        self.h = self.h.max(crate::discontinuity::resolution_floor(t));
        Ok(())
    }
}

impl Stepper for StructuralStepper {
    fn name(&self) -> &'static str {
        self.scheme.name
    }

    /// A projection moves q and v; the algorithmic acceleration `a` and
    /// the tangent are kept. Re-initialising `a` from the equations of
    /// motion would break generalized-α, whose `a` is not q'' but a
    /// shifted average (Chung & Hulbert 1993), and cost its second order.
    fn correct(
        &mut self,
        p: &mut dyn OdeProblem,
        y: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        if self.al.is_some() {
            let t = self.t();
            return self.reset(p, t, y, ctx);
        }
        if y.len() != self.y.len() {
            let t = self.t;
            return self.reset(p, t, y, ctx);
        }
        self.y.copy_from_slice(y);
        if self.nq == self.n {
            let n = self.n;
            self.dy[..n].copy_from_slice(&y[n..2 * n]);
        }
        // (n_q ≠ n_v: the slope T(q) v of the step is kept; a projection
        // moves q by far less than the step did)
        Ok(())
    }

    fn reset(
        &mut self,
        p: &mut dyn OdeProblem,
        t0: f64,
        y0: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        if let Some(penalty) = p.augmented_lagrangian_penalty() {
            let scheme = self.scheme;
            let al = p.as_constrained_second_order().map(|cp| {
                let keep = self.al.take().filter(|al| al.fits(cp, penalty));
                let mut al = keep.unwrap_or_else(|| {
                    Box::new(AugmentedLagrangianStepper::new(scheme, penalty, cp))
                });
                al.set_keep_iteration_matrix(
                    ctx.opts
                        .param(super::augmented_lagrangian::KEEP_ITERATION_MATRIX, 1.0)
                        != 0.0,
                );
                al.reset(cp, t0, y0, ctx).map(|()| al)
            });
            return match al {
                Some(r) => {
                    self.al = Some(r?);
                    Ok(())
                }
                None => Err(self.unsupported()),
            };
        }
        self.al = None;
        let name = self.scheme.name;
        self.fixed = ctx.opts.fixed_step.is_some();
        self.trial = TrialState::default();
        self.loop_state = LoopState::default();
        if let Some(h) = ctx.opts.fixed_step {
            if !(h > 0.0) || !h.is_finite() {
                return Err(IntegrateError::BadMethod(format!(
                    "{name}: fixed step size must be positive, got {h}"
                )));
            }
            self.h = h;
        } else if self.scheme.discrete_gradient {
            return Err(IntegrateError::Unsupported {
                method: name.into(),
                detail: "energy_conserving = 1 runs at a fixed step size (its local error \
                         estimate is not validated yet): give a step, or use energy_conserving = 0 \
                         for adaptive steps"
                    .into(),
            });
        } else if self.scheme.theta != 1.0 {
            // the Zienkiewicz-Xie estimate is derived for balance points
            // inside the step (theta = 1); for Wilson/collocation with
            // theta > 1 it is not valid (for Wilson, beta = 1/6 makes it
            // vanish and the step would grow without bound)
            return Err(IntegrateError::Unsupported {
                method: name.into(),
                detail: format!(
                    "theta = {} > 1 has no validated local error estimate: give a fixed step size",
                    self.scheme.theta
                ),
            });
        }
        let unsupported = self.unsupported();
        let r = with_form(p, |inner| {
            let mut sp = Counted { inner, n_forces: 0 };
            let r = self.reset_inner(&mut sp, t0, y0, ctx);
            ctx.stats.n_rhs += sp.n_forces;
            r
        });
        r.unwrap_or(Err(unsupported))?;
        if ctx.opts.fixed_step.is_none() && self.h == 0.0 {
            let mut f0 = self.dy.clone();
            f0.resize(y0.len(), 0.0);
            self.h = match ctx.opts.h0 {
                Some(h0) => h0,
                None => initial_step(
                    p,
                    t0,
                    y0,
                    &f0,
                    self.scheme.order(),
                    ctx.opts.rtol,
                    ctx.opts.atol,
                    ctx.opts.h_max,
                    1.0,
                )?,
            };
        }
        Ok(())
    }

    fn step(
        &mut self,
        p: &mut dyn OdeProblem,
        t_stop: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        if let Some(al) = &mut self.al {
            return al.step(p, t_stop, ctx);
        }
        advance(self, p, t_stop, ctx)
    }

    fn t(&self) -> f64 {
        match &self.al {
            Some(al) => al.t(),
            None => self.t,
        }
    }

    fn y(&self) -> &[f64] {
        match &self.al {
            Some(al) => al.y(),
            None => &self.y,
        }
    }

    fn t_prev(&self) -> f64 {
        match &self.al {
            Some(al) => al.t_prev(),
            None => self.t_prev,
        }
    }

    fn interpolate(&self, t: f64, out: &mut [f64]) {
        if let Some(al) = &self.al {
            al.interpolate(t, out);
            return;
        }
        hermite_cubic_linear_tail(
            self.t_prev,
            &self.y_prev,
            &self.dy_prev,
            self.t,
            &self.y,
            &self.dy,
            self.nq + self.n,
            t,
            out,
        );
    }
}
