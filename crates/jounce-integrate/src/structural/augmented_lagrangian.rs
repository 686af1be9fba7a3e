//! The index-3 augmented Lagrangian with mass-orthogonal projections
//! (ALI3-P) over the Newmark / generalized-α family.
//!
//! The equations M(q) q'' + Φ_qᵀλ = Q(t, q, q'), Φ(t, q) = 0 are solved at
//! the end of each step with the constraint forces of a penalty and an
//! iterated multiplier (Bayo, García de Jalón & Serna 1988, Comput.
//! Methods Appl. Mech. Eng. 71:183–195; Bayo & Ledesma 1996, Nonlinear
//! Dyn. 9:113–130; García de Jalón & Bayo 1994, *Kinematic and Dynamic
//! Simulation of Multibody Systems*, ch. 7; Cuadrado, Cardenal, Morer &
//! Bayo 2000, Multibody Syst. Dyn. 4:55–73, the "ALI3-P" method):
//!
//! ```text
//! M(q) q̈ + Φ_qᵀ (λ* + α Φ(q)) − Q(t, q, q̇) = 0,   λ* ← λ* + α Φ(q) after each iteration
//! ```
//!
//! The positions q_{n+1} are the unknowns; velocities and accelerations
//! follow from the Newmark relations with the algorithmic acceleration â
//! of generalized-α in the form of Arnold & Brüls (2007, Multibody Syst.
//! Dyn. 18:185–202, eqs. 9–10), so the equilibrium holds at t_{n+1}:
//!
//! ```text
//! q_{n+1} = q_n + h v_n + h² [(1/2 − β) â_n + β â_{n+1}]
//! v_{n+1} = v_n + h [(1 − γ) â_n + γ â_{n+1}]
//! (1 − α_m) â_{n+1} + α_m â_n = (1 − α_f) a_{n+1} + α_f a_n
//! ```
//!
//! **Positions that are not velocities** (n_q > n_v: unit quaternions of
//! spatial bodies). y = [q (n_q); v (n_v); λ] and the position update is
//! q_{n+1} = q_n ⊕ (h v_n + h² [(1/2 − β) â_n + β â_{n+1}])
//! ([`ConstrainedSecondOrderProblem::integrate_positions`]: the exponential
//! map of the rotation increment, normalised), the Lie-group form of the
//! scheme (Brüls & Cardona 2010, J. Comput. Nonlinear Dynam. 5:031002;
//! Arnold, Brüls & Cardona 2015, Multibody Syst. Dyn. 33:1–28) with the
//! tangent operator of the exponential map taken as the identity in the
//! Newton matrix (K, Φ_q along velocity increments); the dense output's
//! position slope is q' = T(q) v
//! ([`ConstrainedSecondOrderProblem::position_derivative`]).
//!
//! (α_m = α_f = 0: Newmark, the trapezoidal rule at β = 1/4, γ = 1/2;
//! α_m = 0: HHT; Chung–Hulbert's α_m, α_f: generalized-α.) With
//! c_a = ∂a/∂q = (1 − α_m)/((1 − α_f) β h²) and c_v = ∂v/∂q = γ/(βh),
//! Newton's matrix divided by c_a is
//!
//! ```text
//! T = M + (c_v/c_a) C + (1/c_a) K + s Φ_qᵀΦ_q,     α = s c_a,
//! ```
//!
//! K = ∂(M a + Φ_qᵀμ − Q)/∂q, C = −∂Q/∂v, s = p · max_i M_ii with the
//! dimensionless penalty p of the problem
//! ([`OdeProblem::augmented_lagrangian_penalty`]). Scaling α with c_a keeps
//! T, and so the contraction of the multiplier iteration (≈ 1/(1 + p) per
//! iteration in the constrained directions), independent of h. T is
//! positive definite whenever M is positive definite on the null space of
//! Φ_q: neither a regular M (point masses) nor a full-rank Φ_q (redundant
//! constraints, singular configurations) is needed, which is why the
//! method passes the singular poses of a chain of parallelograms where
//! the KKT matrix of every other formulation is singular.
//!
//! The Newton unknown is stored as â_{n+1} (q_{n+1} = q_n + h v_n +
//! h²(1/2 − β) â_n + βh² â_{n+1}), the same equations, so that a small h
//! loses no digits of the acceleration to the rounding of q.
//!
//! **Projections.** After convergence the velocities and accelerations are
//! projected onto Φ_q v + Φ_t = 0 and Φ_q a = γ, mass-orthogonally:
//! min ½ (v − v*)ᵀ M (v − v*) + ½ s ‖Φ_q v + Φ_t‖² (Bayo & Ledesma 1996;
//! Cuadrado et al. 2000, eqs. 24–25, there in the metric of the Newton
//! matrix), iterated with the multiplier update so that the violation
//! falls by 1/(1 + p) per pass, P = M + s Φ_qᵀΦ_q:
//!
//! ```text
//! v ← v − P⁻¹ s Φ_qᵀ (Φ_q v + Φ_t),     a ← a − P⁻¹ s Φ_qᵀ (Φ_q a − γ)
//! ```
//!
//! The Newton matrix's metric (with (c_v/c_a) C + (1/c_a) K) would save a
//! factorisation but is not mass-orthogonal: on the P-C chain it doubles
//! the crank-angle error at h = 10⁻³ (1.15e-4 against 5.9e-5, the error of
//! `index3` with the same trapezoidal rule, which P reproduces).
//!
//! Near a singular configuration a pass removes only 1/(1 + s σ²) of the
//! violation along a small singular value σ of Φ_q; the velocity
//! projection then raises s a hundredfold at a time, so that it converges
//! (its fixed point does not depend on s), and there gives back the
//! kinetic energy it removed by scaling the velocity's null-space part
//! (the removed part is amplified by 1/σ there and would carry a finite
//! energy away). The acceleration projection keeps the step's s: converged at a
//! singular pose it would produce forces of order 1/σ².
//!
//! The acceleration projection's fixed point is reached by conjugate
//! gradients, one solve with P per iteration as a pass of the iteration
//! above (`conjugate_projection.rs`; issue 32): on long chains the passes
//! remove only s σ²/(1 + s σ²) ≈ 2.5 % of the slowest mode each (1000
//! links) and ran all `MAX_PROJECTION_PASSES` (24) without converging. Where a
//! direction of the conjugate gradients meets a mode the passes leave in
//! place (a singular configuration), the passes make the projection as
//! before.
//!
//! â_{n+1} is re-derived from the projected a_{n+1}.
//!
//! **Initial accelerations.** a_0 and λ_0 come from the same iteration at
//! the acceleration level, (M + s Φ_qᵀΦ_q) a = Q − Φ_qᵀλ + s Φ_qᵀγ,
//! λ ← λ + s (Φ_q a − γ), which needs no regular KKT matrix either.
//!
//! **Modified Newton across steps** (issue 32; Hairer & Wanner 1996,
//! *Solving Ordinary Differential Equations II*, §IV.8): the tangent K, C
//! of an earlier step starts the next step's iteration while the
//! iteration contracts (rate θ = |Δâ_k|/|Δâ_{k−1}| ≤ 0.2) and the
//! tangent's part of T is small beside M; M and Φ_q are evaluated and T is
//! factorised at every step's predictor (s Φ_qᵀΦ_q turns with the
//! constraints: a T kept across steps contracts at about p times their
//! rotation, and diverged). Method parameter `keep_iteration_matrix = 0`:
//! a fresh tangent at every step. The projection metric at the step's
//! penalty is factorised apart from the raised one, so the acceleration
//! projection needs no second factorisation.
//!
//! **Factorisations.** T is symmetric positive definite wherever K and C
//! are symmetric (the projection metric always): in the problem's sparse
//! pattern T and both metrics are factorised by LDLᵀ with the ordering and
//! the symbolic analysis of the first factorisation kept
//! ([`jounce_sparse::LdltOrLu`]; the LU with partial pivoting redid
//! its Gilbert–Peierls reach at every factorisation), by the LU where a
//! matrix is not symmetric positive definite. M, C, K and Φ_qᵀΦ_q are kept
//! in the matrices' value order between evaluations, so that a
//! factorisation assembles T by one pass over its values (issue 32).
//!
//! **Step size.** Fixed, or adaptive with the local error estimate of
//! Zienkiewicz & Xie (1991, Earthquake Eng. Struct. Dyn. 20:871–887),
//! e = h² (β − 1/6)(a_{n+1} − a_n) on the positions.
//!
//! The state of the integrator is y = [q; v; λ] with λ the constraint
//! forces of the last iteration, λ* + αΦ.

use nalgebra::DMatrix;

use crate::constrained::ConstrainedSecondOrderProblem;
use crate::dense::hermite_cubic_linear_tail;
use crate::dense_lu::DenseLu;
use crate::error::{EvalError, IntegrateError};
use crate::problem::OdeProblem;
use crate::step_loop::{advance, fixed_grid_step, LoopState, StepAttempt, Trial};
use crate::stepper::StepContext;
use crate::structural::conjugate_projection::{ConjugateProjection, ProjectionMetric};
use crate::structural::scheme::StructuralScheme;
use jounce_sparse::{FixedPattern, LdltOrLu};

/// Newton iterations of one step before it counts as failed.
const MAX_ITER: usize = 40;
/// Passes of each projection.
const MAX_PROJECTION_PASSES: usize = 24;
/// Largest penalty factor of the projection metric relative to p: near a
/// singular configuration (σ_min of Φ_q ~ 1e-3) a pass contracts the
/// violation by 1/(1 + p σ²) only.
const MAX_PROJECTION_BOOST: f64 = 1e6;
/// Largest relative change |c − 1| of the null-space velocity by which
/// the velocity projection gives back the kinetic energy it removed
/// ([`AugmentedLagrangianStepper::restore_kinetic_energy`]).
const MAX_ENERGY_RESTORATION: f64 = 1e-2;
/// Convergence of the position constraints |Φ|∞ (units of Φ, absolute),
/// on top of the rounding floor 10 ε (1 + |q|∞).
const PHI_TOL: f64 = 1e-10;
/// Convergence of the velocities, |Δv|∞ = γ h |Δâ|∞ ≤ VEL_TOL (1 + |v|∞),
/// the remaining error of a linearly converging iteration included.
const VEL_TOL: f64 = 1e-11;
/// A linearly converging iteration (near a singular configuration) stops
/// once the estimated remaining change is within this multiple of the
/// tolerance.
const TO_GO_FACTOR: f64 = 10.0;
/// An iteration that stalls (rate ≥ 1/2: the rounding of the penalty
/// forces α ε |q|, the conditioning of the Newton matrix near a singular
/// configuration) has converged once its increments of â are at most
/// STALL_ACC · h · (1 + |â|∞) (h in the model's time unit): below the
/// method's own local error in â, which is O(h). Measured on the P-C
/// chain: a bound independent of h failed N = 40 at h = 1e-4 (at
/// 1e-5 (1 + |â|)); looser bounds (1e-4 (1 + |â|), or STALL_ACC = 4) let
/// stalled iterates, rounding noise amplified by 1/(β h²) along the
/// singular direction, into the solution (N = 10 at h = 1e-5: 2e-3 rad
/// off by t = 2.5 s, before the velocity projection converged).
const STALL_ACC: f64 = 1.0;
/// Relative tolerance of the velocity and acceleration projections.
const PROJECTION_TOL: f64 = 1e-11;
/// Convergence rate above which modified Newton refreshes its tangent.
const REFRESH_RATE: f64 = 0.2;
/// Largest share of the tangent in T, relative to M, at which the
/// tangent is kept across steps ([`AugmentedLagrangianStepper::newton_start`]).
const KEEP_TANGENT_SHARE: f64 = 0.5;
/// The method parameter that switches the tangent kept across steps off
/// (0: a fresh tangent at the first iteration of every step, the full
/// Newton start of each step; the stepper's module documentation).
pub const KEEP_ITERATION_MATRIX: &str = "keep_iteration_matrix";
/// The retries update the multipliers once Newton has converged for the
/// current ones, to increments of â below this fraction of 1 + |â|∞.
const INNER_TOL: f64 = 1e-6;
/// Increments growing by more than this factor from one iteration to the
/// next: Newton diverges, the attempt is given up.
const DIVERGING: f64 = 1e3;
/// The penalty factors of the attempts of one step, relative to p.
const PENALTY_RETRIES: [f64; 3] = [1.0, 1e-2, 1e-4];
/// Largest factor by which a step raises the penalty where the
/// multiplier iteration converges slowly.
const MAX_BOOST: f64 = 1e4;
/// Passes of the initial multiplier iteration.
const MAX_INITIAL_PASSES: usize = 200;

/// The coefficients and tolerances of one trial step to t1 = t + h,
/// fixed through its Newton iteration.
#[derive(Clone, Copy)]
struct StepCoeffs {
    /// End of the step.
    t1: f64,
    h: f64,
    /// The scheme's β, γ, α_m, α_f.
    beta: f64,
    gamma: f64,
    am: f64,
    af: f64,
    /// c_a = (1 − α_m) / ((1 − α_f) β h²): ∂a/∂q along the iteration.
    ca: f64,
    /// c_v = γ / (β h): ∂v/∂q along the iteration.
    cv: f64,
    /// Convergence of |Φ|∞: PHI_TOL above the rounding floor 10 ε (1 + |q|∞).
    phi_tol: f64,
    /// The rounding of q seen in â, 10 ε (1 + |q|∞) / (β h²).
    acc_floor: f64,
}

/// How a Newton solve starts: its iteration matrix at the first iterate.
///
/// Modified Newton across steps (Hairer & Wanner 1996, *Solving Ordinary
/// Differential Equations II*, §IV.8, the strategy of radau5.f; CVODE's
/// Jacobian reuse, Hindmarsh et al. 2005, ACM TOMS 31:363–396): the
/// tangent K, C of an earlier step is kept while the iteration contracts,
/// its rate θ_k = |Δâ_k| / |Δâ_{k−1}| watched; a fresh tangent is taken
/// when θ exceeds [`REFRESH_RATE`] (in the step, or in the last solve),
/// where the tangent's part of T is not small beside M (stiff springs:
/// [`AugmentedLagrangianStepper::newton_start`]), for the retries, and
/// after a failed iteration (then before any cut of the step); a kept
/// tangent's slow iteration is never accepted as stalled. The converged solution passes the same convergence test as
/// full Newton's, so results change within the Newton tolerance only.
///
/// The factorisation itself is not kept: T holds s Φ_qᵀΦ_q with
/// s = p · max M_ii, so a rotation δ of the constraint normals between
/// the point T was factorised at and the iterate changes T by about p δ
/// relative to M, and modified Newton with that T contracts at about
/// p δ. On the pendulum of the unit tests (p = 10⁴, h = 0.02 s, δ ≈ 0.05
/// rad per step) a kept factorisation made the first increment 16 to 170
/// times the full Newton one and the iteration diverged; on the 1000-link
/// chain (h ≈ 1e-3 s) δ ≈ 1e-3 still gives p δ ≈ 10. So M and Φ_q are
/// evaluated at the step's predictor and T refactorised with the kept K
/// and C, whose part of T, (1/c_a) K + (c_v/c_a) C, is of order (h ω)²
/// and h ω of M.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Start {
    /// A fresh tangent at the predictor, factorised.
    Fresh,
    /// The kept K and C with M and Φ_q at the predictor, factorised.
    KeptTangent,
}

/// The running state of one step's Newton iteration: the sizes of the
/// last two increments of â and the step's penalty.
struct NewtonState {
    /// |Δâ|∞ of the previous and of the last iteration.
    d_prev: f64,
    d_acc: f64,
    /// The penalty of this step relative to s: raised where the multiplier
    /// iteration is slow (near a singular configuration Φ_q has a small
    /// singular value σ and the iteration contracts by 1/(1 + p σ²) only).
    boost: f64,
    /// Whether the last iteration raised the penalty or updated the
    /// multipliers (â moves at once then: not divergence).
    boosted: bool,
    /// α = s · boost · c_a, the weight of Φ in the multipliers.
    alpha: f64,
    /// Iterations since the tangent was last evaluated.
    since_refresh: u32,
    /// |Φ|∞ of the last iteration.
    phi_last: f64,
    /// How the iteration matrix was set at the start.
    start: Start,
    /// The tangent comes from an earlier step (`start` not `Fresh`, no
    /// refresh since): the first increment is not a Newton step, its
    /// contraction rate is taken as the kept θ.
    stale: bool,
    /// The kept θ of the last converged solve.
    theta_kept: f64,
}

/// What the slow-convergence test asks of the next iteration.
struct Adapted {
    /// Evaluate a fresh tangent (and refactor).
    refresh: bool,
    /// Refactor the Newton matrix (the penalty was raised).
    refactor: bool,
}

impl NewtonState {
    /// The state before the first iteration, at the penalty `scale` · s.
    fn new(s: f64, scale: f64, ca: f64, start: Start, theta_kept: f64) -> Self {
        let boost = scale;
        Self {
            start,
            stale: start != Start::Fresh,
            theta_kept,
            d_prev: f64::INFINITY,
            d_acc: f64::INFINITY,
            boost,
            boosted: false,
            alpha: s * boost * ca,
            since_refresh: 0,
            phi_last: f64::INFINITY,
        }
    }

    /// Slow convergence: first a fresh tangent (modified Newton's own
    /// linear rate), then, if still slow with a fresh tangent, a larger
    /// penalty (the multiplier iteration's rate 1/(1 + pσ²)). The first
    /// iteration and the retries (`gated`) run full Newton.
    fn adapt(
        &mut self,
        it: u32,
        gated: bool,
        phi_max: f64,
        phi_prev: f64,
        c: &StepCoeffs,
        s: f64,
    ) -> Adapted {
        let rate = self.d_acc / self.d_prev;
        // the retries run full Newton; a kept matrix starts the others
        let mut refresh = (it == 0 && self.start == Start::Fresh) || gated;
        let mut refactor = it == 0 && self.start == Start::KeptTangent;
        // Φ stagnating above the tolerance while the increments still
        // fall: the multiplier iteration's slow mode, not nonlinearity
        let phi_stuck = phi_max > c.phi_tol && phi_max > 0.5 * phi_prev;
        if it >= 2 && rate > REFRESH_RATE {
            if self.since_refresh >= 2 {
                refresh = true;
            } else if self.boost < MAX_BOOST && rate < 1.0 && phi_stuck {
                self.boosted = true;
                self.boost = (self.boost * 10.0).min(MAX_BOOST);
                self.alpha = s * self.boost * c.ca;
                refactor = true;
            }
        }
        Adapted { refresh, refactor }
    }
}

/// The factorised Newton matrix T, dense or in the problem's sparse
/// pattern ([`ConstrainedSecondOrderProblem::sparsity`]): there by LDLᵀ
/// with the symbolic analysis kept where T is symmetric positive definite
/// (the projection metric always, T where K and C are symmetric), else by
/// the LU ([`LdltOrLu`]).
enum Matrix {
    Dense(DenseLu<f64>),
    Sparse(Box<LdltOrLu>),
}

/// M, C, K and Φ_qᵀΦ_q in the value order of T (the sparse pattern's, or
/// the dense matrix's columns; the same for T and both projection
/// metrics), scattered there once per evaluation, so that each
/// factorisation assembles T = M + c_c C + c_k K + s Φ_qᵀΦ_q by one pass
/// over the values: with the tangent kept across steps and the metric
/// factorised at two penalties, most factorisations follow no new
/// evaluation of C and K, and the raised metric none of Φ_q; Φ_qᵀΦ_q
/// skips the zero entries of a dense Φ_q.
struct OnPattern {
    /// Slot of each entry of `tangent_entries`.
    tangent_slot: Vec<usize>,
    /// Slot of each (row k, pair a, pair b) of Φ_qᵀΦ_q, in `pairs` order.
    pair_slot: Vec<usize>,
    m: Vec<f64>,
    c: Vec<f64>,
    k: Vec<f64>,
    gram: Vec<f64>,
    /// Which of them no longer hold the last evaluation.
    m_stale: bool,
    tangent_stale: bool,
    gram_stale: bool,
}

/// Stepper of ALI3-P over one structural scheme (module documentation).
pub struct AugmentedLagrangianStepper {
    scheme: StructuralScheme,
    penalty: f64,
    /// s = p · max M_ii (units of M).
    s: f64,
    /// n_q (≥ n_v = `n`).
    nq: usize,
    n: usize,
    m: usize,
    t: f64,
    t_prev: f64,
    h: f64,
    fixed: bool,
    t_fixed0: f64,
    k_fixed: u64,
    loop_state: LoopState,
    /// [q; v; λ] at t and t_prev; [q'; a] at t and t_prev (q' = v when
    /// n_q = n_v).
    y: Vec<f64>,
    y_prev: Vec<f64>,
    dy: Vec<f64>,
    dy_prev: Vec<f64>,
    /// â_n
    ah: Vec<f64>,
    // the trial step
    t_trial: f64,
    q_t: Vec<f64>,
    v_t: Vec<f64>,
    a_t: Vec<f64>,
    ah_t: Vec<f64>,
    lam_t: Vec<f64>,
    /// The null-space part of the trial velocities and the part the
    /// velocity projection removed (energy restoration).
    w_t: Vec<f64>,
    dv_t: Vec<f64>,
    // scratch
    qbase: Vec<f64>,
    /// n_q ≠ n_v: the known part h v_n + h²(1/2 − β) â_n of the position
    /// increment (len n_v), the increment of the iterate, and q' = T(q) v
    /// of the trial (len n_q).
    dbase: Vec<f64>,
    delta: Vec<f64>,
    qd_t: Vec<f64>,
    vbase: Vec<f64>,
    phi: Vec<f64>,
    mu: Vec<f64>,
    r: Vec<f64>,
    x: Vec<f64>,
    cm: Vec<f64>,
    /// Dense M, K, C (n × n) and Φ_q (m × n): sized on first use only,
    /// where the problem has no sparse evaluation of them (`m_vals`,
    /// `k_vals`, `jv`).
    mass: DMatrix<f64>,
    k: DMatrix<f64>,
    c: DMatrix<f64>,
    jac: DMatrix<f64>,
    /// M at `tangent_entries` from the problem's sparse evaluation
    /// ([`ConstrainedSecondOrderProblem::sparse_mass_matrix`]), when
    /// `mass_sparse`: no n × n matrix formed (issue 32).
    m_vals: Vec<f64>,
    mass_sparse: bool,
    /// Φ_q in compressed sparse rows: row k holds `jv[jrow[k]..jrow[k + 1]]`
    /// at the columns `jcol[..]` (every column when dense).
    jrow: Vec<usize>,
    jcol: Vec<usize>,
    jv: Vec<f64>,
    /// Whether `sparse_constraint_jacobian` fills `jv` (else it is
    /// gathered from the dense `jac`).
    jv_direct: bool,
    /// Entries of M, C and K (the tangent pattern), sorted.
    tangent_entries: Vec<(usize, usize)>,
    /// K and C on `tangent_entries` when the problem evaluates them sparse
    /// ([`ConstrainedSecondOrderProblem::sparse_tangent`]; `tangent_sparse`),
    /// else in the dense `k` and `c`.
    k_vals: Vec<f64>,
    c_vals: Vec<f64>,
    tangent_sparse: bool,
    /// The Newton matrix T.
    matrix: Matrix,
    /// The projection metric P = M + s Φ_qᵀΦ_q at the step's penalty,
    /// factorised apart from T, and the same with the penalty the
    /// velocity projection raised ([`Self::raise_projection_boost`]): the
    /// acceleration projection then finds its metric still factorised.
    projection: Matrix,
    projection_raised: Matrix,
    /// M, C, K, Φ_qᵀΦ_q in the value order of T.
    on_pattern: OnPattern,
    /// The penalty factor `projection` holds.
    projection_boost: f64,
    /// Modified Newton across steps (method parameter
    /// [`KEEP_ITERATION_MATRIX`], default on): the tangent K, C of an
    /// earlier step starts the next one while the iteration contracts
    /// ([`Start`]).
    keep_tangent: bool,
    /// Whether K and C hold the tangent of the last converged Newton
    /// solve (`false` after a failed one and at the start).
    kept: bool,
    /// The contraction rate θ = |Δâ_k| / |Δâ_{k−1}| of the last two
    /// increments of the last converged solve (0 when it took one).
    theta: f64,
    /// Whether the last Newton solve started from a kept tangent.
    started_stale: bool,
    /// κ_K = max_i Σ_j |K_ij| / M_ii and κ_C of the last tangent
    /// ([`Self::stiffness_ratios`]).
    kappa_k: f64,
    kappa_c: f64,
    /// Row sums of |K| and |C| and the diagonal of M (scratch of
    /// [`Self::stiffness_ratios`]).
    row_k: Vec<f64>,
    row_c: Vec<f64>,
    m_diag: Vec<f64>,
    /// Largest |Φ|∞ after convergence since the start (diagnostics).
    pub max_phi: f64,
    /// Scratch of the acceleration projection.
    conjugate: ConjugateProjection,
}

/// Φ_q in compressed rows and a factorised metric P = M + s Φ_qᵀΦ_q: the
/// products and solves of the acceleration projection
/// ([`ConjugateProjection`]), each solve counted.
struct StepMetric<'a> {
    jrow: &'a [usize],
    jcol: &'a [usize],
    jv: &'a [f64],
    matrix: &'a mut Matrix,
    stats: &'a mut crate::Stats,
}

impl ProjectionMetric for StepMetric<'_> {
    fn jac_mul(&self, x: &[f64], out: &mut [f64]) {
        for (k, o) in out.iter_mut().enumerate() {
            let r = self.jrow[k]..self.jrow[k + 1];
            *o = self.jv[r.clone()]
                .iter()
                .zip(&self.jcol[r])
                .map(|(v, &j)| v * x[j])
                .sum();
        }
    }

    fn jac_tr_mul(&self, c: f64, w: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        for (k, &wk) in w.iter().enumerate() {
            let wk = c * wk;
            for a in self.jrow[k]..self.jrow[k + 1] {
                out[self.jcol[a]] += self.jv[a] * wk;
            }
        }
    }

    fn solve(&mut self, b: &mut [f64]) {
        AugmentedLagrangianStepper::solve(self.matrix, b, self.stats);
    }
}

impl AugmentedLagrangianStepper {
    /// A stepper of `scheme` for the problem `p` (only the sizes and the
    /// sparsity of `p` are read here; [`AugmentedLagrangianStepper::reset`]
    /// starts it). `penalty` is p of the module documentation.
    pub fn new(
        scheme: StructuralScheme,
        penalty: f64,
        p: &dyn ConstrainedSecondOrderProblem,
    ) -> Self {
        let (nq, n, m) = (p.n_positions(), p.n_velocities(), p.n_constraints());
        // the rows of Φ_q, the tangent pattern and, when sparse, the
        // pattern of T (M, C, K, the diagonal and Φ_qᵀΦ_q)
        let (rows, tangent_entries, pattern) = match p.sparsity() {
            Some(sp) => {
                let mut rows = vec![Vec::new(); m];
                for &(k, j) in &sp.constraint_jacobian {
                    rows[k].push(j);
                }
                for r in &mut rows {
                    r.sort_unstable();
                    r.dedup();
                }
                let mut entries = sp.tangent.clone();
                entries.extend((0..n).map(|i| (i, i)));
                for r in &rows {
                    for &a in r {
                        for &b in r {
                            entries.push((a, b));
                        }
                    }
                }
                entries.sort_unstable();
                entries.dedup();
                let mut tangent: Vec<(usize, usize)> = sp.tangent.clone();
                tangent.extend((0..n).map(|i| (i, i)));
                tangent.sort_unstable();
                tangent.dedup();
                (rows, tangent, Some(entries))
            }
            None => {
                let rows = vec![(0..n).collect::<Vec<_>>(); m];
                let tangent = (0..n).flat_map(|i| (0..n).map(move |j| (i, j))).collect();
                (rows, tangent, None)
            }
        };
        let mut jrow = vec![0];
        let mut jcol = Vec::new();
        for r in &rows {
            jcol.extend_from_slice(r);
            jrow.push(jcol.len());
        }
        let mut pairs = Vec::new();
        for k in 0..m {
            for a in jrow[k]..jrow[k + 1] {
                for b in jrow[k]..jrow[k + 1] {
                    pairs.push((a, b));
                }
            }
        }
        let build = || match &pattern {
            Some(entries) => Matrix::Sparse(Box::new(LdltOrLu::new(n, entries))),
            None => {
                let mut lu = DenseLu::new();
                lu.resize(n);
                Matrix::Dense(lu)
            }
        };
        let (matrix, projection, projection_raised) = (build(), build(), build());
        let sparse = pattern.is_some();
        let on_pattern = {
            let slot = |i: usize, j: usize| match &matrix {
                Matrix::Sparse(lu) => lu.slot(i, j).expect("in the pattern"),
                // column-major
                Matrix::Dense(_) => i + j * n,
            };
            let nnz = match &matrix {
                Matrix::Sparse(lu) => lu.nnz(),
                Matrix::Dense(_) => n * n,
            };
            OnPattern {
                tangent_slot: tangent_entries.iter().map(|&(i, j)| slot(i, j)).collect(),
                pair_slot: pairs.iter().map(|&(a, b)| slot(jcol[a], jcol[b])).collect(),
                m: vec![0.0; nnz],
                c: vec![0.0; nnz],
                k: vec![0.0; nnz],
                gram: vec![0.0; nnz],
                m_stale: true,
                tangent_stale: true,
                gram_stale: true,
            }
        };
        let nnz = jcol.len();
        let z = || vec![0.0; n];
        Self {
            scheme,
            penalty,
            s: penalty,
            nq,
            n,
            m,
            t: 0.0,
            t_prev: 0.0,
            h: 0.0,
            fixed: true,
            t_fixed0: 0.0,
            k_fixed: 0,
            loop_state: LoopState::default(),
            y: vec![0.0; nq + n + m],
            y_prev: vec![0.0; nq + n + m],
            dy: vec![0.0; nq + n],
            dy_prev: vec![0.0; nq + n],
            ah: z(),
            t_trial: 0.0,
            q_t: vec![0.0; nq],
            v_t: z(),
            a_t: z(),
            ah_t: z(),
            lam_t: vec![0.0; m],
            w_t: z(),
            dv_t: z(),
            qbase: vec![0.0; nq],
            dbase: vec![0.0; if nq == n { 0 } else { n }],
            delta: vec![0.0; if nq == n { 0 } else { n }],
            qd_t: vec![0.0; nq],
            vbase: z(),
            phi: vec![0.0; m],
            mu: vec![0.0; m],
            r: z(),
            x: z(),
            cm: vec![0.0; m],
            mass: DMatrix::zeros(0, 0),
            k: DMatrix::zeros(0, 0),
            c: DMatrix::zeros(0, 0),
            jac: DMatrix::zeros(0, 0),
            m_vals: vec![0.0; if sparse { tangent_entries.len() } else { 0 }],
            mass_sparse: false,
            jrow,
            jcol,
            jv: vec![0.0; nnz],
            jv_direct: true,
            // only the sparse matrix takes K and C on the pattern
            k_vals: vec![0.0; if sparse { tangent_entries.len() } else { 0 }],
            c_vals: vec![0.0; if sparse { tangent_entries.len() } else { 0 }],
            tangent_sparse: false,
            tangent_entries,
            matrix,
            projection,
            projection_raised,
            on_pattern,
            projection_boost: 1.0,
            keep_tangent: true,
            kept: false,
            theta: 0.0,
            started_stale: false,
            kappa_k: f64::INFINITY,
            kappa_c: f64::INFINITY,
            row_k: z(),
            row_c: z(),
            m_diag: z(),
            max_phi: 0.0,
            conjugate: ConjugateProjection::new(n, m),
        }
    }

    /// Modified Newton across steps on (the default) or off
    /// ([`KEEP_ITERATION_MATRIX`]): off, every step starts from a fresh
    /// tangent and factorisation, as before issue 32.
    pub fn set_keep_iteration_matrix(&mut self, keep: bool) {
        self.keep_tangent = keep;
        self.kept &= keep;
    }

    /// Whether this stepper was set up for a problem of these sizes and
    /// sparsity (a reset of the same run reuses it).
    pub fn fits(&self, p: &dyn ConstrainedSecondOrderProblem, penalty: f64) -> bool {
        self.n == p.n_velocities()
            && self.nq == p.n_positions()
            && self.m == p.n_constraints()
            && self.penalty == penalty
            && matches!(self.matrix, Matrix::Sparse(_)) == p.sparsity().is_some()
    }

    /// M at (t, q): on the tangent pattern by the problem's sparse
    /// evaluation where it has one (sparse matrix only), else densely.
    fn eval_mass(
        &mut self,
        p: &mut dyn ConstrainedSecondOrderProblem,
        t: f64,
        q: &[f64],
    ) -> Result<(), EvalError> {
        let n = self.n;
        self.on_pattern.m_stale = true;
        self.mass_sparse = !self.m_vals.is_empty()
            && p.sparse_mass_matrix(t, q, &self.tangent_entries, &mut self.m_vals)?;
        if !self.mass_sparse {
            if self.mass.shape() != (n, n) {
                self.mass = DMatrix::zeros(n, n);
            }
            p.mass_matrix(t, q, &mut self.mass)?;
        }
        Ok(())
    }

    /// M at entry e = (i, j) of `tangent_entries`.
    fn mass_at(&self, e: usize, i: usize, j: usize) -> f64 {
        if self.mass_sparse {
            self.m_vals[e]
        } else {
            self.mass[(i, j)]
        }
    }

    /// The dense K and C sized (first use only).
    fn dense_tangent(&mut self) {
        let n = self.n;
        if self.k.shape() != (n, n) {
            self.k = DMatrix::zeros(n, n);
            self.c = DMatrix::zeros(n, n);
        }
    }

    /// T = M + c_c C + c_k K + s Φ_qᵀΦ_q from the current `mass`, `c`, `k`
    /// and `jac`, factorised into the Newton matrix (`newton`) or the
    /// projection metric; `false` when singular.
    fn factor(
        &mut self,
        newton: bool,
        raised: bool,
        c_c: f64,
        c_k: f64,
        boost: f64,
        stats: &mut crate::Stats,
    ) -> bool {
        stats.n_lu += 1;
        let s = self.s * boost;
        // K and C not evaluated yet (the start, c_c = c_k = 0): zero
        let no_tangent = !self.tangent_sparse && self.k.nrows() != self.n;
        if no_tangent && (c_c != 0.0 || c_k != 0.0) {
            self.dense_tangent();
        }
        let no_tangent = !self.tangent_sparse && self.k.nrows() != self.n;
        self.scatter_to_pattern(no_tangent);
        let matrix = if newton {
            &mut self.matrix
        } else if raised {
            &mut self.projection_raised
        } else {
            &mut self.projection
        };
        let on = &self.on_pattern;
        let vals = match matrix {
            Matrix::Dense(lu) => lu.lu.as_mut_slice(),
            Matrix::Sparse(lu) => lu.values_mut(),
        };
        if c_c == 0.0 && c_k == 0.0 {
            for ((v, m), g) in vals.iter_mut().zip(&on.m).zip(&on.gram) {
                *v = m + s * g;
            }
        } else {
            for ((((v, m), c), k), g) in vals
                .iter_mut()
                .zip(&on.m)
                .zip(&on.c)
                .zip(&on.k)
                .zip(&on.gram)
            {
                *v = m + c_c * c + c_k * k + s * g;
            }
        }
        match matrix {
            Matrix::Dense(lu) => lu.factor(),
            Matrix::Sparse(lu) => lu.factor(),
        }
    }

    /// The stale parts of [`OnPattern`] from the last evaluations: M, C, K
    /// from the tangent entries (zero C and K when `no_tangent`), Φ_qᵀΦ_q
    /// from `jv` (Σ_k over the rows of Φ_q of the products of their entries).
    fn scatter_to_pattern(&mut self, no_tangent: bool) {
        let on = &mut self.on_pattern;
        if on.m_stale {
            on.m_stale = false;
            on.m.fill(0.0);
            for (e, (&(i, j), &slot)) in self
                .tangent_entries
                .iter()
                .zip(&on.tangent_slot)
                .enumerate()
            {
                on.m[slot] = if self.mass_sparse {
                    self.m_vals[e]
                } else {
                    self.mass[(i, j)]
                };
            }
        }
        if on.tangent_stale {
            on.tangent_stale = false;
            on.c.fill(0.0);
            on.k.fill(0.0);
            if !no_tangent {
                for (e, (&(i, j), &slot)) in self
                    .tangent_entries
                    .iter()
                    .zip(&on.tangent_slot)
                    .enumerate()
                {
                    (on.c[slot], on.k[slot]) = if self.tangent_sparse {
                        (self.c_vals[e], self.k_vals[e])
                    } else {
                        (self.c[(i, j)], self.k[(i, j)])
                    };
                }
            }
        }
        if on.gram_stale {
            on.gram_stale = false;
            on.gram.fill(0.0);
            let mut e = 0;
            for k in 0..self.m {
                let row = self.jrow[k]..self.jrow[k + 1];
                for a in row.clone() {
                    let ja = self.jv[a];
                    if ja == 0.0 {
                        e += row.len();
                        continue;
                    }
                    for b in row.clone() {
                        on.gram[on.pair_slot[e]] += ja * self.jv[b];
                        e += 1;
                    }
                }
            }
        }
    }

    /// Whether M and the tangent K, C (the entries the Newton matrix is
    /// assembled from) are finite.
    fn tangent_is_finite(&self) -> bool {
        let dense = |m: &DMatrix<f64>| m.iter().all(|x| x.is_finite());
        (if self.mass_sparse {
            self.m_vals.iter().all(|x| x.is_finite())
        } else {
            dense(&self.mass)
        }) && if self.tangent_sparse || self.k.nrows() != self.n {
            self.c_vals
                .iter()
                .chain(&self.k_vals)
                .all(|x| x.is_finite())
        } else {
            dense(&self.c) && dense(&self.k)
        }
    }

    fn solve(matrix: &mut Matrix, b: &mut [f64], stats: &mut crate::Stats) {
        stats.n_solve += 1;
        match matrix {
            Matrix::Dense(lu) => lu.solve(b),
            Matrix::Sparse(lu) => lu.solve_in_place(b),
        }
    }

    /// Φ_q at (t, q) into `jv`: the problem's sparse evaluation where it
    /// has one, else gathered from the dense Φ_q.
    fn eval_jacobian(
        &mut self,
        p: &mut dyn ConstrainedSecondOrderProblem,
        t: f64,
        q: &[f64],
    ) -> Result<(), EvalError> {
        if self.m == 0 {
            return Ok(());
        }
        self.on_pattern.gram_stale = true;
        if self.jv_direct && p.sparse_constraint_jacobian(t, q, &mut self.jv)? {
            return Ok(());
        }
        self.jv_direct = false;
        if self.jac.shape() != (self.m, self.n) {
            self.jac = DMatrix::zeros(self.m, self.n);
        }
        p.constraint_jacobian(t, q, &mut self.jac)?;
        for k in 0..self.m {
            for a in self.jrow[k]..self.jrow[k + 1] {
                self.jv[a] = self.jac[(k, self.jcol[a])];
            }
        }
        Ok(())
    }

    /// out = Φ_q x (len m).
    fn jac_mul(&self, x: &[f64], out: &mut [f64]) {
        for k in 0..self.m {
            let r = self.jrow[k]..self.jrow[k + 1];
            out[k] = self.jv[r.clone()]
                .iter()
                .zip(&self.jcol[r])
                .map(|(v, &j)| v * x[j])
                .sum();
        }
    }

    /// out = s Φ_qᵀ w (len n).
    fn jac_tr_mul(&self, s: f64, w: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        for k in 0..self.m {
            let wk = s * w[k];
            for a in self.jrow[k]..self.jrow[k + 1] {
                out[self.jcol[a]] += self.jv[a] * wk;
            }
        }
    }

    /// Reset at (t0, y0 = [q0; v0; λ0]): the initial accelerations and
    /// multipliers by the acceleration-level iteration (module
    /// documentation).
    ///
    /// # Errors
    /// A singular M + sΦ_qᵀΦ_q (a coordinate with neither inertia nor
    /// constraint), an iteration that does not converge, evaluation errors.
    pub fn reset(
        &mut self,
        p: &mut dyn ConstrainedSecondOrderProblem,
        t0: f64,
        y0: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let (nq, n, m) = (self.nq, self.n, self.m);
        if y0.len() != nq + n + m {
            return Err(IntegrateError::BadMethod(format!(
                "{}: the augmented Lagrangian integrates y = [q; v; λ] of length {}, got {}",
                self.scheme.name,
                nq + n + m,
                y0.len()
            )));
        }
        self.fixed = ctx.opts.fixed_step.is_some();
        self.loop_state = LoopState::default();
        self.t = t0;
        self.t_prev = t0;
        self.t_fixed0 = t0;
        self.k_fixed = 0;
        self.y.copy_from_slice(y0);
        let (q, rest) = self.y.split_at(nq);
        let v = &rest[..n];
        let q = q.to_vec();
        let v = v.to_vec();
        self.eval_mass(p, t0, &q)?;
        let m_max = self
            .tangent_entries
            .iter()
            .enumerate()
            .filter(|(_, &(i, j))| i == j)
            .fold(0.0f64, |s, (e, &(i, j))| s.max(self.mass_at(e, i, j).abs()));
        self.s = self.penalty * if m_max > 0.0 { m_max } else { 1.0 };
        self.eval_jacobian(p, t0, &q)?;
        p.forces(t0, &q, &v, &mut self.r)?;
        p.gamma(t0, &q, &v, &mut self.phi)?;
        self.lam_t.copy_from_slice(&self.y[nq + n..]);
        self.kept = false;
        self.theta = 0.0;
        self.projection_boost = 1.0;
        if !self.factor(false, false, 0.0, 0.0, 1.0, ctx.stats) {
            return Err(EvalError::Singular {
                what: "augmented-Lagrangian matrix M + s Φ_qᵀΦ_q".into(),
                t: t0,
                detail: "a coordinate has neither inertia nor a constraint".into(),
            }
            .into());
        }
        let scale = self.phi.iter().fold(1.0f64, |s, g| s.max(g.abs()));
        let mut converged = m == 0;
        let mut last = 0.0f64;
        for _ in 0..MAX_INITIAL_PASSES {
            // a = T⁻¹ (Q − Φ_qᵀλ + s Φ_qᵀγ)
            for k in 0..m {
                self.mu[k] = self.phi[k] - self.lam_t[k] / self.s;
            }
            let mut x = std::mem::take(&mut self.x);
            self.jac_tr_mul(self.s, &self.mu, &mut x);
            for i in 0..n {
                x[i] += self.r[i];
            }
            Self::solve(&mut self.projection, &mut x, ctx.stats);
            let mut cm = std::mem::take(&mut self.cm);
            self.jac_mul(&x, &mut cm);
            self.x = x;
            self.cm = cm;
            last = 0.0;
            for k in 0..m {
                let e = self.cm[k] - self.phi[k];
                last = last.max(e.abs());
                self.lam_t[k] += self.s * e;
            }
            let a_max = self.x.iter().fold(0.0f64, |s, a| s.max(a.abs()));
            if last <= PROJECTION_TOL * (scale + a_max) {
                converged = true;
                break;
            }
        }
        if !converged || self.x.iter().any(|x| !x.is_finite()) {
            return Err(EvalError::NoConvergence {
                what: "initial accelerations of the augmented Lagrangian".into(),
                t: t0,
                detail: format!("|Φ_q a − γ|∞ = {last:e} after {MAX_INITIAL_PASSES} passes"),
            }
            .into());
        }
        p.position_derivative(&q, &v, &mut self.dy[..nq]);
        self.dy[nq..].copy_from_slice(&self.x);
        self.ah.copy_from_slice(&self.x);
        self.y[nq + n..].copy_from_slice(&self.lam_t);
        self.y_prev.copy_from_slice(&self.y);
        self.dy_prev.copy_from_slice(&self.dy);
        match ctx.opts.fixed_step {
            Some(h) => {
                if !(h > 0.0) || !h.is_finite() {
                    return Err(IntegrateError::BadMethod(format!(
                        "{}: fixed step size must be positive, got {h}",
                        self.scheme.name
                    )));
                }
                self.h = h;
            }
            None => {
                if self.h == 0.0 {
                    // an O(rtol^(1/3)) guess of a second-order method; the
                    // controller corrects it within a few steps
                    let span = ctx.opts.h_max.min(1.0);
                    self.h = ctx
                        .opts
                        .h0
                        .unwrap_or(0.01 * span * ctx.opts.rtol.cbrt().min(1.0));
                }
            }
        }
        Ok(())
    }

    /// One Newton solve of the step to t + h and the projections; the
    /// trial is left in `q_t`, `v_t`, `a_t`, `ah_t`, `lam_t`. `Ok(Ok(it))`
    /// after `it` converged iterations, `Ok(Err(it))` when Newton did not
    /// converge (diverged, non-finite, or out of iterations).
    ///
    /// Each iteration: the trial from â ([`Self::trial_from_acceleration`]),
    /// Φ(q), the multiplier update λ* ← λ* + αΦ, the convergence test
    /// ([`Self::newton_converged`]), the choice of a fresh tangent or a
    /// larger penalty ([`NewtonState::adapt`]), the residual, the Newton
    /// matrix and the increment of â ([`Self::newton_increment`]).
    fn solve_step(
        &mut self,
        p: &mut dyn ConstrainedSecondOrderProblem,
        h: f64,
        scale: f64,
        gated: bool,
        ctx: &mut StepContext,
    ) -> Result<Result<u32, u32>, EvalError> {
        let c = self.predict(h);
        let start = self.newton_start(&c, gated);
        self.started_stale = start != Start::Fresh;
        let mut st = NewtonState::new(self.s, scale, c.ca, start, self.theta);
        let r = self.newton_iterations(p, &c, &mut st, gated, ctx);
        match r {
            Ok(Ok(it)) => {
                self.kept = true;
                if it >= 2 && st.d_prev.is_finite() {
                    self.theta = st.d_acc / st.d_prev;
                } else if !st.stale {
                    self.theta = 0.0;
                }
            }
            // a failed iteration leaves no matrix to keep
            _ => self.kept = false,
        }
        r
    }

    /// How the step's Newton iteration starts ([`Start`]): from the kept
    /// tangent while the last solve contracted (θ ≤ [`REFRESH_RATE`]);
    /// fresh for the retries (`gated`), when switched off, or with none
    /// kept.
    /// Only where the tangent's part of T is small beside the inertia,
    /// κ_K/c_a + κ_C c_v/c_a ≤ [`KEEP_TANGENT_SHARE`] (κ of
    /// [`Self::stiffness_ratios`], taken with the kept tangent): the kept
    /// T then differs from the fresh one by that share times the relative
    /// change of K and C. S1 with springs of 1e8 N/m at h = 1e-3 s
    /// (share ≈ 25) failed with the kept tangent at t = 6.38 s under
    /// newmark where full Newton runs.
    fn newton_start(&self, c: &StepCoeffs, gated: bool) -> Start {
        let share = self.kappa_k / c.ca + self.kappa_c * c.cv / c.ca;
        if self.keep_tangent
            && self.kept
            && !gated
            && self.theta <= REFRESH_RATE
            && share <= KEEP_TANGENT_SHARE
        {
            Start::KeptTangent
        } else {
            Start::Fresh
        }
    }

    /// The Newton iterations of [`Self::solve_step`] from the state `st`.
    fn newton_iterations(
        &mut self,
        p: &mut dyn ConstrainedSecondOrderProblem,
        c: &StepCoeffs,
        st: &mut NewtonState,
        gated: bool,
        ctx: &mut StepContext,
    ) -> Result<Result<u32, u32>, EvalError> {
        let c = *c;
        for it in 0..MAX_ITER as u32 {
            ctx.stats.n_newton_iter += 1;
            self.trial_from_acceleration(&*p, &c);
            p.constraints(c.t1, &self.q_t, &mut self.phi)?;
            let phi_max = self.phi.iter().fold(0.0f64, |s, x| s.max(x.abs()));
            // the multiplier update λ* ← λ* + αΦ only while Φ is above the
            // tolerance: along a direction in which Φ_q is singular, Φ is
            // quadratic in q and cannot be driven to zero, so the update
            // would let λ* grow without bound and move â by the same amount
            // at every iteration; with λ* fixed, Newton converges
            // gated (the retries): the method of multipliers proper, λ*
            // updated only once Newton has solved the penalised equations
            // for the current λ*; an update from the linearisation error of
            // a far iterate (α Φ, α ∝ 1/h²) can throw λ* off by orders of
            // magnitude when a step turns the bodies far (S1: 17° per step)
            if !phi_max.is_finite() {
                return Ok(Err(it));
            }
            // (a raised penalty or a gated multiplier update in the last
            // iteration moves â at once: not divergence)
            if it >= 2 && st.d_acc / st.d_prev > DIVERGING && !st.boosted {
                return Ok(Err(it));
            }
            st.boosted = false;
            let ah_max = self.ah_t.iter().fold(0.0f64, |s, x| s.max(x.abs()));
            let inner_done = !gated || st.d_acc <= INNER_TOL * (1.0 + ah_max);
            if it > 0 && phi_max > c.phi_tol && inner_done {
                for k in 0..self.m {
                    self.lam_t[k] += st.alpha * self.phi[k];
                }
                st.boosted = gated;
            }
            let phi_prev = std::mem::replace(&mut st.phi_last, phi_max);
            if it > 0 && phi_max <= c.phi_tol && self.newton_converged(&c, st, it, ah_max) {
                if phi_max > self.max_phi {
                    self.max_phi = phi_max;
                }
                // the constraint forces the converged residual balances
                for k in 0..self.m {
                    self.lam_t[k] += st.alpha * self.phi[k];
                }
                self.project(p, c.t1, st.boost, ctx)?;
                return Ok(Ok(it));
            }
            let Adapted { refresh, refactor } = st.adapt(it, gated, phi_max, phi_prev, &c, self.s);
            self.newton_residual(p, &c, st.alpha, ctx)?;
            // modified Newton: the tangent of the step's first iterate,
            // refreshed when the iteration slows down
            if refresh {
                self.refresh_tangent(p, c.t1, ctx)?;
                st.since_refresh = 0;
                st.stale = false;
            } else if it == 0 {
                // the kept tangent: M and Φ_q at the predictor
                self.refresh_metric(p, c.t1)?;
            }
            st.since_refresh += 1;
            if refresh || refactor {
                self.factor_newton(&c, st.boost, ctx)?;
            }
            if !self.newton_increment(&c, st, ctx) {
                return Ok(Err(it));
            }
        }
        Ok(Err(MAX_ITER as u32))
    }

    /// The Newmark predictors of the step to t + h from the state at t:
    /// q̃ = q + h v + h² (1/2 − β) â_n, ṽ = v + h (1 − γ) â_n, and the
    /// first iterate â_{n+1} from a_{n+1} = a_n, with λ* = λ_n. Returns the
    /// step's coefficients and tolerances.
    fn predict(&mut self, h: f64) -> StepCoeffs {
        let (nq, n) = (self.nq, self.n);
        let sc = self.scheme;
        let (beta, gamma, am, af) = (sc.beta, sc.gamma, sc.alpha_m, sc.alpha_f);
        let t1 = self.t + h;
        self.t_trial = t1;
        let ca = (1.0 - am) / ((1.0 - af) * beta * h * h);
        let cv = gamma / (beta * h);
        let (q, rest) = self.y.split_at(nq);
        let (v, lam) = rest.split_at(n);
        let a_n = &self.dy[nq..];
        for i in 0..n {
            let d = h * v[i] + h * h * (0.5 - beta) * self.ah[i];
            if nq == n {
                self.qbase[i] = q[i] + d;
            } else {
                self.dbase[i] = d;
            }
            self.vbase[i] = v[i] + h * (1.0 - gamma) * self.ah[i];
            // predictor: a_{n+1} = a_n
            self.ah_t[i] = (a_n[i] - am * self.ah[i]) / (1.0 - am);
        }
        self.lam_t.copy_from_slice(lam);
        let q_max = q.iter().fold(0.0f64, |s, x| s.max(x.abs()));
        StepCoeffs {
            t1,
            h,
            beta,
            gamma,
            am,
            af,
            ca,
            cv,
            phi_tol: PHI_TOL + 10.0 * f64::EPSILON * (1.0 + q_max),
            // the rounding of q seen in â
            acc_floor: 10.0 * f64::EPSILON * (1.0 + q_max) / (beta * h * h),
        }
    }

    /// The trial state of the current iterate â_{n+1}:
    /// q = q̃ + β h² â, v = ṽ + γ h â and
    /// a = ((1 − α_m) â + α_m â_n − α_f a_n) / (1 − α_f); q = q_n ⊕ (the
    /// increment) when positions are not velocities.
    fn trial_from_acceleration(&mut self, p: &dyn ConstrainedSecondOrderProblem, c: &StepCoeffs) {
        let (nq, n) = (self.nq, self.n);
        let (beta, gamma, am, af, h) = (c.beta, c.gamma, c.am, c.af, c.h);
        for i in 0..n {
            if nq == n {
                self.q_t[i] = self.qbase[i] + beta * h * h * self.ah_t[i];
            } else {
                self.delta[i] = self.dbase[i] + beta * h * h * self.ah_t[i];
            }
            self.v_t[i] = self.vbase[i] + gamma * h * self.ah_t[i];
            self.a_t[i] =
                ((1.0 - am) * self.ah_t[i] + am * self.ah[i] - af * self.dy[nq + i]) / (1.0 - af);
        }
        if nq != n {
            p.integrate_positions(&self.y[..nq], &self.delta, &mut self.q_t);
        }
    }

    /// Whether the iteration has converged, Φ being within its tolerance:
    /// the increments of â small in the velocities, Δv = γ h Δâ, the
    /// remaining change of a linearly converging iteration included; or
    /// stalled below the method's own error in â; or at the rounding of q.
    fn newton_converged(&self, c: &StepCoeffs, st: &NewtonState, it: u32, ah_max: f64) -> bool {
        let d_acc = st.d_acc;
        // linear convergence at rate ρ leaves about ρ/(1 − ρ) of the
        // last increment to go; the first increment of a kept matrix is
        // taken to contract at the kept θ (radau5.f's first iteration)
        let rate = if it == 1 && st.stale {
            st.theta_kept
        } else {
            d_acc / st.d_prev
        };
        let to_go = if rate < 0.9 {
            d_acc * rate.max(0.0) / (1.0 - rate)
        } else {
            f64::INFINITY
        };
        // convergence measured in the velocities, Δv = γ h Δâ
        let v_max = self.v_t.iter().fold(0.0f64, |s, x| s.max(x.abs()));
        let tol = VEL_TOL * (1.0 + v_max) / (c.gamma * c.h);
        let small = d_acc <= tol && ((it == 1 && !st.stale) || to_go <= TO_GO_FACTOR * tol);
        // (a stall is the rounding floor of a fresh tangent; a kept one
        // converging slowly is refreshed by `adapt` instead: accepted as
        // stalled, it failed S1 with k = 1e8 under newmark at t = 6.38 s)
        let stalled = !st.stale && rate >= 0.5 && d_acc <= STALL_ACC * c.h * (1.0 + ah_max);
        small || stalled || d_acc <= c.acc_floor
    }

    /// The multipliers of the iterate, μ = λ* + αΦ, and the residual
    /// r = M a − Q + Φ_qᵀ μ at the trial state (Φ re-evaluated with it).
    fn newton_residual(
        &mut self,
        p: &mut dyn ConstrainedSecondOrderProblem,
        c: &StepCoeffs,
        alpha: f64,
        ctx: &mut StepContext,
    ) -> Result<(), EvalError> {
        for k in 0..self.m {
            self.mu[k] = self.lam_t[k] + alpha * self.phi[k];
        }
        p.residual(
            c.t1,
            &self.q_t,
            &self.v_t,
            &self.a_t,
            &self.mu,
            &mut self.r,
            &mut self.phi,
        )?;
        ctx.stats.n_rhs += 1;
        Ok(())
    }

    /// A fresh tangent at the trial state: K and C (on the sparse pattern
    /// where the problem offers them, else dense), M where it is not
    /// constant, and Φ_q.
    ///
    /// The geometric stiffness ∂(Φ_qᵀμ)/∂q of K is taken at the multiplier
    /// estimate λ*, not at the iterate's μ = λ* + αΦ: at a far iterate αΦ
    /// (α ∝ 1/h²) is a penalty force of the predictor's violation, which
    /// vanishes at the solution; a tangent built on it is far from the one
    /// at the solution, and modified Newton kept it. S1 at the seed's
    /// h = 1e-3 (17° per step, |Φ| of the predictor ~ h²|q̈| ~ 0.04): with
    /// μ the iteration diverged every few steps and a retry landed on a
    /// spurious root (a massless link turned by many revolutions), so that
    /// newmark blew up at t = 0.12 s, hht at 0.31 s, generalized-α at
    /// 0.24 s, with every penalty from 1e4 to 1e10; with λ* all nine cases
    /// run with all three methods. λ* → λ at convergence, so the tangent
    /// of the converged iterate is the same.
    fn refresh_tangent(
        &mut self,
        p: &mut dyn ConstrainedSecondOrderProblem,
        t1: f64,
        ctx: &mut StepContext,
    ) -> Result<(), EvalError> {
        ctx.stats.n_jac += 1;
        self.on_pattern.tangent_stale = true;
        // K and C on the sparse pattern where the problem offers
        // them (no n × n fill), else dense
        self.tangent_sparse = !self.k_vals.is_empty()
            && p.sparse_tangent(
                t1,
                &self.q_t,
                &self.v_t,
                &self.a_t,
                &self.lam_t,
                &self.tangent_entries,
                &mut self.k_vals,
                &mut self.c_vals,
            )?;
        if !self.tangent_sparse {
            self.dense_tangent();
            p.tangent(
                t1,
                &self.q_t,
                &self.v_t,
                &self.a_t,
                &self.lam_t,
                &mut self.k,
                &mut self.c,
            )?;
        }
        self.refresh_metric(p, t1)?;
        (self.kappa_k, self.kappa_c) = self.stiffness_ratios();
        Ok(())
    }

    /// κ_K = max_i Σ_j |K_ij| / M_ii and κ_C likewise of C: the sizes of
    /// K and C beside the inertia ([`Self::newton_start`]); infinite
    /// where a row of K or C has no inertia on its diagonal.
    fn stiffness_ratios(&mut self) -> (f64, f64) {
        let n = self.n;
        let dense_tangent = !self.tangent_sparse && self.k.nrows() == n;
        self.row_k.fill(0.0);
        self.row_c.fill(0.0);
        for (e, &(i, j)) in self.tangent_entries.iter().enumerate() {
            let (ke, ce) = if self.tangent_sparse {
                (self.k_vals[e], self.c_vals[e])
            } else if dense_tangent {
                (self.k[(i, j)], self.c[(i, j)])
            } else {
                (0.0, 0.0)
            };
            self.row_k[i] += ke.abs();
            self.row_c[i] += ce.abs();
            if i == j {
                self.m_diag[i] = self.mass_at(e, i, j).abs();
            }
        }
        let ratio = |row: &[f64], m: &[f64]| {
            row.iter().zip(m).fold(0.0f64, |r, (&a, &d)| {
                if a == 0.0 {
                    r
                } else if d > 0.0 {
                    r.max(a / d)
                } else {
                    f64::INFINITY
                }
            })
        };
        (
            ratio(&self.row_k, &self.m_diag),
            ratio(&self.row_c, &self.m_diag),
        )
    }

    /// M (where it is not constant) and Φ_q at the trial state.
    fn refresh_metric(
        &mut self,
        p: &mut dyn ConstrainedSecondOrderProblem,
        t1: f64,
    ) -> Result<(), EvalError> {
        let q = std::mem::take(&mut self.q_t);
        if !p.mass_matrix_is_constant() {
            if let Err(e) = self.eval_mass(p, t1, &q) {
                self.q_t = q;
                return Err(e);
            }
        }
        let r = self.eval_jacobian(p, t1, &q);
        self.q_t = q;
        r
    }

    /// Factorise the Newton matrix T = M + (c_v/c_a) C + (1/c_a) K +
    /// s·`boost` Φ_qᵀΦ_q; a singular one is an error that names its likely
    /// cause.
    fn factor_newton(
        &mut self,
        c: &StepCoeffs,
        boost: f64,
        ctx: &mut StepContext,
    ) -> Result<(), EvalError> {
        if self.factor(true, false, c.cv / c.ca, 1.0 / c.ca, boost, ctx.stats) {
            return Ok(());
        }
        Err(EvalError::Singular {
            what: "augmented-Lagrangian Newton matrix".into(),
            t: c.t1,
            detail: if self.tangent_is_finite() {
                "M is not positive definite on the constraints' null space \
                 (a coordinate without inertia or constraint)"
            } else {
                "the tangent K = ∂(M a − Q)/∂q or C = −∂Q/∂v holds a non-finite \
                 entry: a force law whose derivative overflows or is undefined \
                 at this state"
            }
            .into(),
        })
    }

    /// The Newton increment Δâ = −T⁻¹ r / (c_a β h²) added to â; its
    /// size |Δâ|∞ moves into `st` (`d_acc`, the previous one to `d_prev`).
    /// `false` when it is not finite.
    fn newton_increment(
        &mut self,
        c: &StepCoeffs,
        st: &mut NewtonState,
        ctx: &mut StepContext,
    ) -> bool {
        let n = self.n;
        let (beta, h) = (c.beta, c.h);
        for i in 0..n {
            self.x[i] = -self.r[i] / c.ca;
        }
        Self::solve(&mut self.matrix, &mut self.x, ctx.stats);
        st.d_prev = st.d_acc;
        st.d_acc = 0.0;
        for i in 0..n {
            let d = self.x[i] / (beta * h * h);
            self.ah_t[i] += d;
            st.d_acc = st.d_acc.max(d.abs());
        }
        st.d_acc.is_finite()
    }

    /// Factorise the projection metric P = M + s·`pboost` Φ_qᵀΦ_q, into
    /// `projection` at the step's penalty factor `boost`, else into
    /// `projection_raised`.
    fn factor_projection(
        &mut self,
        t1: f64,
        pboost: f64,
        boost: f64,
        ctx: &mut StepContext,
    ) -> Result<(), EvalError> {
        let raised = pboost != boost;
        if !raised {
            self.projection_boost = boost;
        }
        if self.factor(false, raised, 0.0, 0.0, pboost, ctx.stats) {
            Ok(())
        } else {
            Err(EvalError::Singular {
                what: "projection matrix M + s Φ_qᵀΦ_q".into(),
                t: t1,
                detail: "a coordinate has neither inertia nor a constraint".into(),
            })
        }
    }

    /// A projection pass that removed less than half of the violation is
    /// the slow mode 1/(1 + s σ²) of a small singular value σ of Φ_q (a
    /// singular configuration near): the penalty of the metric is raised
    /// a hundredfold, up to [`MAX_PROJECTION_BOOST`] times the step's; the
    /// fixed point, the M-orthogonal projection, does not depend on it.
    /// Whether the metric must be factorised again.
    fn raise_projection_boost(e: f64, e_prev: f64, pboost: &mut f64) -> bool {
        if e > 0.5 * e_prev && *pboost < MAX_PROJECTION_BOOST {
            *pboost = (*pboost * 100.0).min(MAX_PROJECTION_BOOST);
            true
        } else {
            false
        }
    }

    /// aᵀ M b over the entries of M (the tangent pattern).
    fn mass_product(&self, a: &[f64], b: &[f64]) -> f64 {
        let mut s = 0.0;
        for (e, &(i, j)) in self.tangent_entries.iter().enumerate() {
            s += a[i] * self.mass_at(e, i, j) * b[j];
        }
        s
    }

    /// Project `v` onto Φ_q v = ν (ν in `mu`; ν = 0 when `homogeneous`)
    /// in the metric M + s Φ_qᵀΦ_q, raising its penalty where a pass is
    /// slow ([`Self::raise_projection_boost`]); the metric is factorised
    /// with `pboost`.
    fn project_velocities(
        &mut self,
        v: &mut [f64],
        homogeneous: bool,
        pboost: &mut f64,
        t1: f64,
        ctx: &mut StepContext,
    ) -> Result<(), EvalError> {
        let m = self.m;
        let v_max = v.iter().fold(0.0f64, |s, x| s.max(x.abs()));
        let mut e_prev = f64::INFINITY;
        for _ in 0..MAX_PROJECTION_PASSES {
            let mut cm = std::mem::take(&mut self.cm);
            self.jac_mul(v, &mut cm);
            self.cm = cm;
            let mut e = 0.0f64;
            for k in 0..m {
                if !homogeneous {
                    self.cm[k] -= self.mu[k];
                }
                e = e.max(self.cm[k].abs());
            }
            if e <= PROJECTION_TOL * (1.0 + v_max) {
                break;
            }
            if Self::raise_projection_boost(e, e_prev, pboost) {
                self.factor_projection(t1, *pboost, self.projection_boost, ctx)?;
            }
            e_prev = e;
            let mut x = std::mem::take(&mut self.x);
            self.jac_tr_mul(self.s * *pboost, &self.cm, &mut x);
            let metric = if *pboost == self.projection_boost {
                &mut self.projection
            } else {
                &mut self.projection_raised
            };
            Self::solve(metric, &mut x, ctx.stats);
            for (vi, xi) in v.iter_mut().zip(&x) {
                *vi -= xi;
            }
            self.x = x;
        }
        Ok(())
    }

    /// The velocity projection does no work. It moves the step's
    /// velocities v* to v = v* − Δv; split v = v_ν + w into the part that
    /// moves rheonomic constraints (Φ_q v_ν = ν, M-orthogonal to the null
    /// space of Φ_q; zero for scleronomic ones) and the part w in the null
    /// space. Of T(v*) = T(v) + T(Δv) + Δvᵀ M v the term Δvᵀ M v_ν is the
    /// constraint's own correction of the driven motion; the rest is
    /// given back to w: v = v_ν + c w with
    /// c² T(w) = T(v*) − Δvᵀ M v_ν − T(v_ν), the M-orthogonal projection
    /// onto {Φ_q v = ν, T(v) = T*} (an energy-keeping projection in the
    /// manner of Hairer, Lubich & Wanner 2006, *Geometric Numerical
    /// Integration*, IV.4); for scleronomic constraints T(v) = T(v*).
    /// `dv_t` holds v* on entry.
    ///
    /// Away from singular configurations the energy removed is negligible
    /// (Δv is the step's O(h³) violation); near one Δv is amplified by
    /// 1/σ_min of Φ_q and carries a finite energy away: on the P-C chain
    /// N = 10 at h = 1e-5, 4.4e-5 J at the first pose and 1.7e-4 J by
    /// t = 3 s, which the crank angle, near the separatrix, turns into
    /// 4.4e-5 rad of error (9.7e-9 rad with the energy given back). The
    /// scaling is skipped where it would change w by more than
    /// [`MAX_ENERGY_RESTORATION`]: a projection that removes that much
    /// takes out a real part of the motion (an impact, a lock-up), not an
    /// error of the step.
    ///
    /// [`Self::project`] calls it only where the velocity projection had to
    /// raise its penalty, the mark of a small σ_min. Elsewhere the step's
    /// own velocities are no better than the projected ones: on a pendulum
    /// hitting a stiff stop at h = 1e-4 (the stop's mode unresolved) the
    /// projection removes up to 2.9e-5 of T per step, and giving it back
    /// doubled the error (2.7e-4 against 1.2e-4 m).
    fn restore_kinetic_energy(
        &mut self,
        homogeneous: bool,
        pboost: &mut f64,
        t1: f64,
        ctx: &mut StepContext,
    ) -> Result<(), EvalError> {
        let t_star = 0.5 * self.mass_product(&self.dv_t, &self.dv_t);
        let mut w = std::mem::take(&mut self.w_t);
        w.copy_from_slice(&self.v_t);
        let r = if homogeneous {
            Ok(())
        } else {
            self.project_velocities(&mut w, true, pboost, t1, ctx)
        };
        if r.is_ok() {
            // Δv into dv_t; v_ν = v − w (zero when homogeneous) into v_t
            let mut dv = std::mem::take(&mut self.dv_t);
            for (d, v) in dv.iter_mut().zip(&self.v_t) {
                *d -= v;
            }
            for (v, wi) in self.v_t.iter_mut().zip(&w) {
                *v -= wi;
            }
            let (cross, t_nu) = if homogeneous {
                (0.0, 0.0)
            } else {
                (
                    self.mass_product(&dv, &self.v_t),
                    0.5 * self.mass_product(&self.v_t, &self.v_t),
                )
            };
            self.dv_t = dv;
            let t_w = 0.5 * self.mass_product(&w, &w);
            let c2 = if t_w > 0.0 {
                (t_star - cross - t_nu) / t_w
            } else {
                1.0
            };
            let c = if c2 > 0.0 && (c2.sqrt() - 1.0).abs() <= MAX_ENERGY_RESTORATION {
                c2.sqrt()
            } else {
                1.0
            };
            for (v, wi) in self.v_t.iter_mut().zip(&w) {
                *v += c * wi;
            }
        }
        self.w_t = w;
        r
    }

    /// The mass-orthogonal projections of v and a at the converged
    /// positions (module documentation), in the metric M + s Φ_qᵀΦ_q
    /// factorised there; the velocity projection does no work
    /// ([`Self::restore_kinetic_energy`]).
    fn project(
        &mut self,
        p: &mut dyn ConstrainedSecondOrderProblem,
        t1: f64,
        boost: f64,
        ctx: &mut StepContext,
    ) -> Result<(), EvalError> {
        let (n, m) = (self.n, self.m);
        let sc = self.scheme;
        let (am, af) = (sc.alpha_m, sc.alpha_f);
        if m > 0 {
            let q = std::mem::take(&mut self.q_t);
            let r = self.eval_jacobian(p, t1, &q);
            self.q_t = q;
            r?;
            // the metric M + s Φ_qᵀΦ_q at the converged positions (M from
            // the start when constant)
            if !p.mass_matrix_is_constant() {
                let q = std::mem::take(&mut self.q_t);
                let r = self.eval_mass(p, t1, &q);
                self.q_t = q;
                r?;
            }
            let mut pboost = boost;
            self.factor_projection(t1, pboost, boost, ctx)?;
            // velocities: Φ_q v = ν (ν = −Φ_t)
            p.velocity_rhs(t1, &self.q_t, &mut self.mu)?;
            let homogeneous = self.mu.iter().all(|&x| x == 0.0);
            self.dv_t.copy_from_slice(&self.v_t);
            let mut v = std::mem::take(&mut self.v_t);
            let r = self.project_velocities(&mut v, false, &mut pboost, t1, ctx);
            self.v_t = v;
            r?;
            if pboost > boost {
                self.restore_kinetic_energy(homogeneous, &mut pboost, t1, ctx)?;
            }
            // the acceleration projection in the step's metric: a penalty
            // raised for it would converge to accelerations and forces
            // of order 1/σ_min² at a singular configuration (3e8 N on the
            // P-C chain), which the next step then starts from; that
            // metric is still factorised in `projection` (the raised one
            // went to `projection_raised`)
            pboost = boost;
            // accelerations and multipliers: the index-1 augmented
            // Lagrangian at (t1, q, v), P a = Q − Φ_qᵀλ + s Φ_qᵀγ,
            // λ ← λ + s (Φ_q a − γ), from the Newton iteration's λ. With
            // M a* + Φ_qᵀλ* = Q at the Newton solution this is the
            // M-orthogonal projection of a* onto Φ_q a = γ, and it leaves λ
            // consistent with the projected a.
            p.gamma(t1, &self.q_t, &self.v_t, &mut self.mu)?;
            p.forces(t1, &self.q_t, &self.v_t, &mut self.r)?;
            ctx.stats.n_rhs += 1;
            // by conjugate gradients: the Uzawa passes' fixed point in far
            // fewer passes on long chains ([`ConjugateProjection`])
            let s = self.s * pboost;
            let mut metric = StepMetric {
                jrow: &self.jrow,
                jcol: &self.jcol,
                jv: &self.jv,
                matrix: &mut self.projection,
                stats: &mut *ctx.stats,
            };
            self.conjugate.project(
                &mut metric,
                s,
                &self.r,
                &self.mu,
                &mut self.a_t,
                &mut self.lam_t,
                PROJECTION_TOL,
                MAX_PROJECTION_PASSES,
            );
        }
        let a_n = &self.dy[self.nq..];
        for i in 0..n {
            self.ah_t[i] = ((1.0 - af) * self.a_t[i] + af * a_n[i] - am * self.ah[i]) / (1.0 - am);
        }
        Ok(())
    }

    /// Local error estimate of Zienkiewicz & Xie, weighted RMS norm.
    fn error_norm(&self, h: f64, rtol: f64, atol: f64) -> f64 {
        let n = self.n;
        let c = h * h * (self.scheme.beta - 1.0 / 6.0);
        let mut s = 0.0;
        for i in 0..n {
            let e = c * (self.a_t[i] - self.dy[self.nq + i]);
            let w = atol + rtol * self.y[i].abs().max(self.q_t[i].abs());
            s += (e / w).powi(2);
        }
        (s / n.max(1) as f64).sqrt()
    }

    /// Advance by one accepted step (the shared step loop).
    ///
    /// # Errors
    /// Newton failures at a fixed step, step-size underflow, evaluation
    /// errors.
    pub fn step(
        &mut self,
        p: &mut dyn OdeProblem,
        t_stop: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        advance(self, p, t_stop, ctx)
    }

    /// Current time.
    pub fn t(&self) -> f64 {
        self.t
    }

    /// Current state [q; v; λ].
    pub fn y(&self) -> &[f64] {
        &self.y
    }

    /// Start of the last accepted step.
    pub fn t_prev(&self) -> f64 {
        self.t_prev
    }

    /// Cubic Hermite interpolation of q and v (from v and a at both ends),
    /// linear in λ.
    pub fn interpolate(&self, t: f64, out: &mut [f64]) {
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

fn with_al<R>(
    p: &mut dyn OdeProblem,
    f: impl FnOnce(&mut dyn ConstrainedSecondOrderProblem) -> R,
) -> Option<R> {
    p.as_constrained_second_order().map(f)
}

impl StepAttempt for AugmentedLagrangianStepper {
    crate::step_loop::step_state_accessors!();

    fn attempt(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<Trial, IntegrateError> {
        let h = if self.fixed {
            fixed_grid_step(self.t_fixed0, self.k_fixed, self.h, self.t).min(h)
        } else {
            h
        };
        // a penalty too large for the nonlinearity of the step makes Newton
        // diverge (S1 at h = 1e-3: 17° per step); the same step is tried
        // again with a penalty a hundred and then ten thousand times
        // smaller, updating the multipliers only after Newton converged
        // (a failed iteration from a kept matrix is first retried with a
        // fresh one at the same penalty: `kept` is dropped by the failure)
        let mut r = Err(0);
        for (k, scale) in PENALTY_RETRIES.into_iter().enumerate() {
            for _ in 0..2 {
                r = with_al(p, |cp| self.solve_step(cp, h, scale, k > 0, ctx)).ok_or_else(
                    || {
                        IntegrateError::BadMethod(
                            "the augmented Lagrangian needs an index-3 problem".into(),
                        )
                    },
                )??;
                if r.is_ok() || !self.started_stale {
                    break;
                }
            }
            if r.is_ok() {
                break;
            }
        }
        match r {
            Ok(_) if self.fixed => Ok(Trial::Unchecked),
            Ok(_) => Ok(Trial::Estimated(self.error_norm(
                h,
                ctx.opts.rtol,
                ctx.opts.atol,
            ))),
            Err(iters) => {
                ctx.stats.n_newton_fail += 1;
                if self.fixed {
                    Err(IntegrateError::NewtonFailed {
                        t: self.t,
                        h,
                        iters,
                    })
                } else {
                    Ok(Trial::Failed { factor: 0.25 })
                }
            }
        }
    }

    /// h_new/h = 0.9 err^(−1/3) within [0.2, 5] (the estimate is O(h³)).
    fn factor(&mut self, err: f64, _h: f64, _accepted: bool) -> f64 {
        if err == 0.0 {
            return 5.0;
        }
        (0.9 * err.powf(-1.0 / 3.0)).clamp(0.2, 5.0)
    }

    fn commit(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        _ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let (nq, n) = (self.nq, self.n);
        self.y_prev.copy_from_slice(&self.y);
        self.dy_prev.copy_from_slice(&self.dy);
        self.y[..nq].copy_from_slice(&self.q_t);
        self.y[nq..nq + n].copy_from_slice(&self.v_t);
        self.y[nq + n..].copy_from_slice(&self.lam_t);
        if nq == n {
            self.dy[..n].copy_from_slice(&self.v_t);
        } else {
            let (q_t, v_t, qd_t) = (&self.q_t, &self.v_t, &mut self.qd_t);
            with_al(p, |cp| cp.position_derivative(q_t, v_t, qd_t));
            self.dy[..nq].copy_from_slice(&self.qd_t);
        }
        self.dy[nq..].copy_from_slice(&self.a_t);
        self.ah.copy_from_slice(&self.ah_t);
        self.t_prev = self.t;
        self.t = if self.fixed {
            self.k_fixed += 1;
            self.t_trial
        } else {
            self.t + h
        };
        Ok(())
    }

    fn restart_here(
        &mut self,
        _p: &mut dyn OdeProblem,
        _ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::SolverOptions;
    use crate::solve::{solve, Discard};
    use crate::testkit::{empirical_order, max_abs_diff, CartesianPendulum};
    use crate::{method, ProblemForm};

    /// The Cartesian pendulum of the testkit, integrated by the augmented
    /// Lagrangian; `twice` states its constraint two times (a redundant
    /// row, Φ_q of rank 1 with m = 2), the state is then [q; v; λ1; λ2].
    struct AlPendulum {
        p: CartesianPendulum,
        twice: bool,
        /// The tangent's C holds NaN (a force law whose derivative overflows).
        nan_tangent: bool,
        /// Declares the sparsity of M, C, K (diagonal) and Φ_q: the
        /// stepper's sparse matrices.
        sparse: bool,
    }

    impl ConstrainedSecondOrderProblem for AlPendulum {
        fn n_positions(&self) -> usize {
            2
        }
        fn n_velocities(&self) -> usize {
            2
        }
        fn n_constraints(&self) -> usize {
            1 + usize::from(self.twice)
        }
        fn mass_matrix(
            &mut self,
            t: f64,
            q: &[f64],
            m: &mut DMatrix<f64>,
        ) -> Result<(), EvalError> {
            self.p.mass_matrix(t, q, m)
        }
        fn forces(&mut self, t: f64, q: &[f64], v: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
            self.p.forces(t, q, v, f)
        }
        fn constraints(&mut self, t: f64, q: &[f64], phi: &mut [f64]) -> Result<(), EvalError> {
            self.p.constraints(t, q, &mut phi[..1])?;
            if self.twice {
                phi[1] = phi[0];
            }
            Ok(())
        }
        fn constraint_jacobian(
            &mut self,
            _: f64,
            q: &[f64],
            jac: &mut DMatrix<f64>,
        ) -> Result<(), EvalError> {
            for k in 0..jac.nrows() {
                jac[(k, 0)] = q[0];
                jac[(k, 1)] = q[1];
            }
            Ok(())
        }
        fn velocity_rhs(&mut self, _: f64, _: &[f64], nu: &mut [f64]) -> Result<(), EvalError> {
            nu.fill(0.0);
            Ok(())
        }
        fn gamma(&mut self, _: f64, _: &[f64], v: &[f64], g: &mut [f64]) -> Result<(), EvalError> {
            g.fill(-(v[0] * v[0] + v[1] * v[1]));
            Ok(())
        }
        /// K = (Σλ) I, C = d I.
        fn tangent(
            &mut self,
            _: f64,
            _: &[f64],
            _: &[f64],
            _: &[f64],
            lambda: &[f64],
            k: &mut DMatrix<f64>,
            c: &mut DMatrix<f64>,
        ) -> Result<(), EvalError> {
            k.fill(0.0);
            c.fill(0.0);
            let l: f64 = lambda.iter().sum();
            for i in 0..2 {
                k[(i, i)] = l;
                c[(i, i)] = if self.nan_tangent {
                    f64::NAN
                } else {
                    self.p.damping
                };
            }
            Ok(())
        }
        fn has_exact_tangent(&self) -> bool {
            true
        }
        fn sparsity(&self) -> Option<crate::constrained::IterationSparsity> {
            self.sparse.then(|| crate::constrained::IterationSparsity {
                tangent: vec![(0, 0), (1, 1)],
                constraint_jacobian: (0..self.n_constraints())
                    .flat_map(|k| [(k, 0), (k, 1)])
                    .collect(),
            })
        }
    }

    impl OdeProblem for AlPendulum {
        fn dim(&self) -> usize {
            4 + self.n_constraints()
        }
        fn rhs(&mut self, _: f64, _: &[f64], _: &mut [f64]) -> Result<(), EvalError> {
            Err(EvalError::Other(
                "not used by the augmented Lagrangian".into(),
            ))
        }
        fn as_constrained_second_order(
            &mut self,
        ) -> Option<&mut dyn ConstrainedSecondOrderProblem> {
            Some(self)
        }
        fn augmented_lagrangian_penalty(&self) -> Option<f64> {
            Some(1e4)
        }
    }

    fn pendulum(damping: f64, twice: bool) -> AlPendulum {
        AlPendulum {
            p: CartesianPendulum::damped(damping),
            twice,
            nan_tangent: false,
            sparse: false,
        }
    }

    /// y0 = [q; v; 0] from the angle (the stepper finds λ0 itself).
    fn y0(p: &AlPendulum, theta: f64, omega: f64) -> Vec<f64> {
        let s = p.p.state_from_angle(theta, omega);
        let mut y = s[..4].to_vec();
        y.resize(p.dim(), 0.0);
        y
    }

    #[test]
    fn the_problem_offers_only_the_augmented_lagrangian_form() {
        assert_eq!(
            pendulum(0.0, false).forms(),
            vec![ProblemForm::AugmentedLagrangian]
        );
    }

    /// Second order for the trapezoidal rule, HHT and generalized-α
    /// (slope within 0.2 of 2) on the damped pendulum released at 1.2 rad
    /// with 0.5 rad/s, positions and velocities against dop853 on the
    /// angle ODE; the multiplier of the last step is the constraint force
    /// of the reference within the same order.
    #[test]
    fn second_order_for_the_structural_family() {
        let (t1, theta0, omega0) = (1.0, 1.2, 0.5);
        for name in ["newmark", "hht", "generalized_alpha", "midpoint_rule"] {
            let mut p = pendulum(0.3, false);
            let y = y0(&p, theta0, omega0);
            let exact = p.p.reference(theta0, omega0, t1);
            let (slope, errs) = empirical_order(
                name,
                &mut p,
                0.0,
                &y,
                t1,
                &exact[..4],
                0.02,
                4,
                &SolverOptions::default(),
            )
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(
                (slope - 2.0).abs() <= 0.2,
                "{name}: slope {slope}, errors {errs:?}"
            );
            assert!(errs[3] < 5e-4, "{name}: {errs:?}");
        }
    }

    /// The run ends on the constraint to the Newton tolerance, with the
    /// velocity constraint met by the projection.
    #[test]
    fn positions_and_velocities_stay_on_the_constraints() {
        let mut p = pendulum(0.0, false);
        let y = y0(&p, 2.5, 0.0);
        let opts = SolverOptions {
            fixed_step: Some(0.01),
            ..SolverOptions::default()
        };
        let mut st = method::build("generalized_alpha", &opts).unwrap();
        let r = solve(&mut p, st.as_mut(), 0.0, &y, 5.0, &opts, &mut Discard).unwrap();
        let (q, v) = (&r.y[..2], &r.y[2..4]);
        let l = p.p.length;
        let phi = 0.5 * (q[0] * q[0] + q[1] * q[1] - l * l);
        assert!(phi.abs() <= 1e-10, "Φ = {phi:e}");
        let phid = q[0] * v[0] + q[1] * v[1];
        assert!(phid.abs() <= 1e-9, "Φ' = {phid:e}");
    }

    /// A non-finite tangent is named as such, not blamed on M.
    #[test]
    fn a_non_finite_tangent_is_named() {
        let mut p = pendulum(0.0, false);
        p.nan_tangent = true;
        let y = y0(&p, 1.0, 0.0);
        let opts = SolverOptions {
            fixed_step: Some(0.01),
            ..Default::default()
        };
        let mut st = method::build("generalized_alpha", &opts).unwrap();
        let err = solve(&mut p, st.as_mut(), 0.0, &y, 1.0, &opts, &mut Discard)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("non-finite entry") && !err.contains("positive definite"),
            "{err}"
        );
    }

    /// The constraint stated twice (Φ_q of rank 1 < m = 2, where the KKT
    /// matrix of index3 is singular) gives the motion of the single
    /// constraint to rounding, and the two multipliers share the force
    /// equally (the minimum-norm split: λ1 = λ2 = λ/2).
    #[test]
    fn a_redundant_constraint_changes_nothing() {
        let opts = SolverOptions {
            fixed_step: Some(0.005),
            ..SolverOptions::default()
        };
        let run = |twice: bool| {
            let mut p = pendulum(0.2, twice);
            let y = y0(&p, 1.0, 0.0);
            let mut st = method::build("newmark", &opts).unwrap();
            solve(&mut p, st.as_mut(), 0.0, &y, 2.0, &opts, &mut Discard)
                .unwrap()
                .y
        };
        let (one, two) = (run(false), run(true));
        let d = max_abs_diff(&one[..4], &two[..4]);
        assert!(d < 1e-9, "motion differs by {d:e}");
        assert!((two[4] - two[5]).abs() <= 1e-9 * two[4].abs(), "{two:?}");
        assert!(
            (two[4] + two[5] - one[4]).abs() <= 1e-6 * one[4].abs(),
            "{one:?} {two:?}"
        );
    }

    /// The sparse path (the problem's pattern declared) factorises T and
    /// both projection metrics by LDLᵀ on the symbolic analysis of its
    /// set-up, every one of them (symmetric positive definite here: M = m I,
    /// K = λ I, C = d I), none by the LU, and moves the pendulum as the
    /// dense LU does, to rounding: fails if the LDLᵀ path is switched off or
    /// its kept symbolic analysis, or the values kept in T's order, go
    /// stale.
    #[test]
    fn the_sparse_path_factors_by_ldlt_and_moves_as_the_dense_lu() {
        let opts = SolverOptions {
            fixed_step: Some(0.01),
            ..SolverOptions::default()
        };
        let run = |sparse: bool| {
            let mut p = pendulum(0.3, false);
            p.sparse = sparse;
            let y = y0(&p, 1.2, 0.5);
            let scheme = StructuralScheme::generalized_alpha(0.9).expect("valid ρ∞");
            let mut st = AugmentedLagrangianStepper::new(scheme, 1e4, &p);
            let mut stats = crate::Stats::default();
            let mut ctx = StepContext {
                opts: &opts,
                stats: &mut stats,
            };
            st.reset(&mut p, 0.0, &y, &mut ctx).expect("reset");
            for _ in 0..150 {
                st.step(&mut p, 2.0, &mut ctx).expect("step");
            }
            let counts: Vec<(u64, u64)> = [&st.matrix, &st.projection, &st.projection_raised]
                .iter()
                .map(|m| match m {
                    Matrix::Sparse(f) => (f.ldlt_count(), f.lu_count()),
                    Matrix::Dense(_) => (0, 0),
                })
                .collect();
            (st.y().to_vec(), counts, stats.n_lu)
        };
        let (dense, dense_counts, _) = run(false);
        let (sparse, counts, n_factor) = run(true);
        assert_eq!(dense_counts, vec![(0, 0); 3]);
        let d = max_abs_diff(&dense[..4], &sparse[..4]);
        assert!(d < 1e-12, "sparse − dense {d:e}");
        assert!(counts.iter().all(|c| c.1 == 0), "LU used: {counts:?}");
        let ldlt: u64 = counts.iter().map(|c| c.0).sum();
        assert_eq!(ldlt, n_factor, "{counts:?}");
        // T at every step's predictor, the metric at every step's end
        assert!(counts[0].0 >= 150 && counts[1].0 >= 150, "{counts:?}");
    }

    /// Adaptive steps: the Zienkiewicz–Xie estimate keeps the error
    /// proportional to the tolerance.
    #[test]
    fn adaptive_steps_follow_the_tolerance() {
        let (t1, theta0) = (2.0, 1.0);
        let mut errs = Vec::new();
        for rtol in [1e-4, 1e-6] {
            let mut p = pendulum(0.1, false);
            let y = y0(&p, theta0, 0.0);
            let exact = p.p.reference(theta0, 0.0, t1);
            let opts = SolverOptions::default().with_tol(rtol, rtol);
            let mut st = method::build("generalized_alpha", &opts).unwrap();
            let r = solve(&mut p, st.as_mut(), 0.0, &y, t1, &opts, &mut Discard).unwrap();
            errs.push(max_abs_diff(&r.y[..4], &exact[..4]));
        }
        // error per step of a second-order method: the global error falls
        // like rtol^(2/3) (measured 1.8e-2 and 9.7e-4: a factor 18 for
        // 100 in rtol, 21.5 expected)
        assert!(errs[0] < 3e-2 && errs[1] < 2e-3, "{errs:?}");
        assert!(errs[1] < errs[0] / 12.0, "{errs:?}");
    }
}
