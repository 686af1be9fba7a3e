//! Variable-order, variable-step BDF (orders 1..5) on an implicit DAE
//! F(t, y, y') = 0, in the fixed-leading-coefficient form of DASSL
//! (Brenan, Campbell & Petzold, *Numerical Solution of Initial-Value
//! Problems in Differential-Algebraic Equations*, SIAM 1996, ch. 3 for
//! the convergence theory, ch. 5 for the algorithm; the routines DDASTP,
//! DDATRP of DASSL).
//!
//! **History.** The modified divided differences
//! φ_1 = y_n, φ_{i+1} = ψ_1⋯ψ_i · y[t_n, …, t_{n−i}], ψ_i = t_n − t_{n−i}
//! (BCP 5.2), valid for any spacing of the past points. At a new step h
//! the coefficients α_i, β_i, γ_i, σ_i follow from the ψ_i (BCP 5.2,
//! DDASTP); φ is turned into φ* (φ_i ← β_i φ_i) and
//!
//! ```text
//! y^(0)  = Σ_{i=1}^{k+1} φ_i*,         y'^(0) = Σ_{i=2}^{k+1} γ_i φ_i*,
//! y'     = y'^(0) + c (y − y^(0)),      c = −α_s/h,  α_s = −Σ_{j=1}^{k} 1/j.
//! ```
//!
//! With constant steps this is the order-k BDF exactly; with variable
//! steps the leading coefficient stays that of the constant-step formula
//! (the "fixed leading coefficient" form, BCP 5.2), which is what makes
//! the iteration matrix reusable over step changes.
//!
//! **Newton.** Modified Newton on G(y) = F(t, y, y'^(0) + c (y − y^(0)))
//! with the iteration matrix G = F_y + c F_y' ([`DaeProblem::iteration_matrix`],
//! or forward differences of the residual through the counters when the
//! problem's matrix is not exact), evaluated at the prediction and reused
//! over steps while c/c_old ∈ [0.6, 1/0.6]; the increments of a reused
//! matrix are scaled by 2/(1 + c/c_old) (DDASTP). A failure with an old
//! matrix re-evaluates it; a failure with a current one cuts h by 4.
//! Convergence in the weights of [`dae_weights`] *with* the algebraic
//! components and an index-k component scaled by h^(k−1) (the iterate of
//! an index-3 multiplier carries rounding O(ε/h²), which no iteration can
//! reduce): rate ρ = (‖δ_m‖/‖δ_0‖)^{1/m}, converged when ρ/(1−ρ)‖δ‖ ≤ 0.03
//! or ‖δ‖ ≤ 100 ε ‖y‖, failed when ρ > 0.9 or after 4 iterations. Two
//! departures from DASSL, both measured on the Cartesian pendulum
//! (`tests/suite/dae_bdf.rs`): the constant is 0.03 instead of 0.33 (the bound
//! of radau5.f's FNEWT and of the ODE `bdf` here), and the rate carried
//! over from earlier steps is not trusted below ρ = 1/6. With DASSL's
//! constant and an unbounded carried rate (ρ ~ 1e-6 after one
//! quadratically convergent iteration with a fresh matrix accepts a first
//! increment of 1e5 tolerances) the iteration error enters the differences
//! from which orders and steps are chosen: on the damped pendulum in GGL
//! form, 381 steps instead of 163 and a 6× larger velocity error at
//! rtol = atol = 1e-6, 809 steps instead of 295 at 1e-8.
//!
//! **Scaling of the linear system.** G of an index-k DAE has entries from
//! O(1) to O(h^{−k}) (index 3: the rows of q' − v are O(1/h), of
//! M v' + Φ_qᵀλ − Q O(1/h²) once λ is measured as h²λ, of Φ O(1)); its
//! condition grows like h^{−k}. The LU factors R G C instead, with
//! C = diag(h^{−(k_j−1)}) from the index of each unknown and R the row
//! equilibration of G C (each row divided by its largest entry), which is
//! O(1) and regular as h → 0 (Bottasso, Bauchau & Cardona, SIAM J. Sci.
//! Comput. 29 (2007) 397–414; BCP 6.2, "scaling" of the index-3
//! pendulum). The factorisation (partial pivoting, in place) allocates
//! nothing. When the problem declares the pattern of G
//! ([`DaeProblem::sparsity`], with an exact iteration matrix) the same
//! R G C is formed in that pattern and factored by the sparse LU
//! ([`crate::sparse_lu`], column ordering once per pattern) with the same
//! pivot floor: O(nnz) per factorisation for a chain instead of O(n³).
//!
//! **Error test and order selection.** DASSL's: the local error
//! C_k ‖y − y^(0)‖ (C_k = max(|α_{k+1} + α_s − α_0|, α_{k+1})), and the
//! estimates at orders k−2..k+1 from the differences, on the differential
//! components only ([`dae_weights`] with `exclude_algebraic`: the
//! multipliers λ, μ are not tested, positions and velocities are; an
//! index-2 velocity with its tolerance scaled by h as there). The order is
//! raised in the initial phase (order +1 and h doubled after each step,
//! until the first failure or a lower-order preference); afterwards it is
//! lowered when the lower-order estimates decrease and raised after k+1
//! steps of constant h when the order-(k+1) estimate is smaller. Step
//! factor r = (2 est + 1e-4)^{−1/(k+1)}: doubled when r ≥ 2, kept when
//! 1 < r < 2, reduced to max(0.5, min(0.9, r)) h otherwise; after an error
//! test failure 0.9 r ∈ [0.25, 0.9], then 1/4 (order 1 from the third).
//! Accepted steps add their error norm, in units of the tolerance, to
//! [`Stats::accumulated_error`].
//! First step: Hairer's algorithm ([`crate::initial_step::initial_step`],
//! order 1) through the problem's `rhs`, which a DAE problem offers for
//! initial-step estimates, with y'_0 from
//! [`DaeProblem::consistent_derivative`]; φ_2 = h y'_0 (DASSL).
//!
//! **Fixed step** (`fixed_step = Some(h)`): order `max_order` throughout.
//! The first k steps (to t0 + h, …, t0 + k h) come from an inner adaptive
//! run of this stepper (orders 1..5) at rtol = atol = 1e-12, so that the
//! order-k formula starts with k+1 values accurate far below its own error
//! (BCP Thm. 3.2.3 asks for O(h^{k+1})). The steps land on t0 + j h
//! computed from the count (no accumulated rounding); there is no error
//! test, and Newton is iterated to round-off (weights 1/(s + s|y|) with
//! s = ε, index-k components scaled by h^(k−1) as above, up to 12
//! iterations, a fresh matrix whenever ρ > 0.3). With s = 1e-14 the
//! iteration could stop while the velocities of an index-3 DAE (index 2,
//! weight × h) still carried 1e-14/h of iteration error and the
//! multipliers 1e-14/h², above their rounding, and what each step left
//! added up over long runs. On the free slider-crank of
//! `tests/suite/dae_convergence.rs` (index3, k = 2, to t = 2) the position
//! error at h = 3.125e-5 was 1.2e-5 instead of the 2.6e-6 of the formula;
//! on the double pendulum (index3, k = 5, to t = 1) 4.4e-10 instead of
//! 1.1e-10 at h = 6.25e-4, and the multipliers 3.1e-6 instead of 1.6e-6
//! at h = 1.25e-3 (order 4.47 instead of 4.97 over 5e-3 .. 1.25e-3). The
//! price is about one more iteration per step (4.6 instead of 3.3 on that
//! slider-crank run, 8.8 instead of 7.8 on the double pendulum at
//! h = 5e-3). The inner run's work is counted in the run's counters,
//! except `n_accept`/`n_reject`, which count the k start points as k
//! accepted steps.
//!
//! **Tolerance-proportional error per step.** DASSL's error per step lets
//! the global error grow with the number of steps: on the double pendulum
//! (t = 1, rtol = atol = 1e-4, 1e-6, 1e-8) ggl ended 0.6–3.1 tol off in q
//! but 2.1–98 in v, index3 6–22 in q and 183–308 in v (its velocities
//! are index-2 components whose tolerance is scaled by h). The error and
//! the Newton weights are therefore divided by σ = 0.1 rtol^(1/5)
//! ([`crate::controller::proportional_scale`] with the largest order): a
//! per-step tolerance 0.1 rtol^(6/5), which makes the global error of the
//! order-5 formulas proportional to rtol (Stetter 1980; HNW I, II.4).
//! Measured there: ggl 0.0 tol in q and 0.3–0.7 in v (155, 389, 891 steps
//! instead of 80, 171, 336), index3 0.1–0.8 and 1.4–6.4 (112, 277, 541
//! instead of 55, 117, 244), at nine tolerances from 1e-4 to 1e-8. The
//! inner run that starts a fixed-step run keeps σ = 1 (its tolerance is
//! the start values' own). [`crate::ErrorPer`] is not consulted: with
//! error per unit step the Newton error, which does not shrink with h,
//! drives the step to underflow.
//!
//! **Step loop:** the shared one ([`crate::step_loop::advance`]: stop
//! times, rejections, crossing of discontinuities, counters); this file
//! supplies the trial, DASSL's selection and the commit
//! ([`StepAttempt`]). A step that reaches t_stop ends exactly there, and
//! the next one follows from it (as in DASSL).
//!
//! **Dense output:** the predictor polynomial through the last k+1
//! points, evaluated as in DDATRP (BCP 5.2). Work: `n_rhs` counts every
//! residual evaluation (including those of difference quotients), `n_jac`
//! every iteration matrix, `n_lu`, `n_solve`, `n_newton_iter`,
//! `n_newton_fail`.
//!
//! See also Shampine & Reichelt, "The MATLAB ODE Suite", SIAM J. Sci.
//! Comput. 18 (1997) 1–22, for the quasi-constant-step form of the ODE
//! code ([`crate::multistep::BdfNdf`]) with the same order-selection
//! principles.

use crate::controller::proportional_scale;
use crate::dae::dense_lu::DenseLu;
use crate::dae::sparse_iteration::SparseIteration;
use crate::dae::{counted_residual, dae_weights, DaeProblem};
use crate::error::{EvalError, IntegrateError};
use crate::initial_step::initial_step;
use crate::options::SolverOptions;
use crate::problem::OdeProblem;
use crate::stats::Stats;
use crate::step_loop::{self, LoopState, StepAttempt, Trial};
use crate::stepper::{StepContext, Stepper};

/// Largest order.
pub const MAX_ORDER: usize = 5;

/// Coefficient arrays are indexed 1..=MAX_ORDER+1 as in DASSL (index 0 unused).
const NC: usize = MAX_ORDER + 2;
/// φ is indexed 1..=MAX_ORDER+2.
const NPHI: usize = MAX_ORDER + 3;

/// DASSL's window of c/c_old in which an iteration matrix is reused:
/// (1 − XRATE)/(1 + XRATE) with XRATE = 0.25.
const CJ_RATIO_MIN: f64 = 0.6;
/// Corrector iterations per attempt (DASSL's MAXIT).
const MAX_ITER_ADAPTIVE: u32 = 4;
/// Convergence constant: ρ/(1−ρ)‖δ‖ ≤ 0.03 in units of the tolerance
/// (DASSL has 0.33; module documentation).
const NEWTON_TOL_ADAPTIVE: f64 = 0.03;
/// Floor of the rate memory ρ/(1−ρ) carried into a new step (ρ = 1/6).
const CARRIED_RATE_MIN: f64 = 0.2;
/// Fixed step: weights 1/(s + s|y|), s = ε, ...
const FIXED_SCALE: f64 = f64::EPSILON;
/// ... with the convergence constant 1: an estimated remaining error
/// ρ/(1−ρ)‖δ‖ at the rounding level of the iterate, an increment within
/// 100 ε of it, or an iteration stalled within 100× of that (module
/// documentation).
const NEWTON_TOL_FIXED: f64 = 1.0;
const MAX_ITER_FIXED: u32 = 12;
/// Tolerance of the inner run that starts the fixed-step method.
const START_TOL: f64 = 1e-12;
/// Newton failures (with a current matrix) on one step before giving up.
const MAX_CONVERGENCE_FAILURES: u32 = 10;
/// Singular iteration matrices on one step before giving up.
const MAX_SINGULAR: u32 = 3;

/// LU with partial pivoting of R G C, in place (module documentation),
/// dense or in the sparse pattern the problem declares
/// ([`DaeProblem::sparsity`]).
struct ScaledLu {
    /// G on entry (`lu.lu`), then the factors of R G C (dense path; 0 × 0
    /// on the sparse path).
    lu: DenseLu<f64>,
    /// G in the problem's pattern: its values on entry, R G C scattered
    /// into the pattern and factored there.
    sparse: Option<SparseIteration>,
    rs: Vec<f64>,
    cs: Vec<f64>,
    factored: bool,
}

impl ScaledLu {
    fn new(n: usize) -> Self {
        Self {
            lu: DenseLu::new(),
            sparse: None,
            rs: vec![1.0; n],
            cs: vec![1.0; n],
            factored: false,
        }
    }

    /// Take the sparse form (or none: dense) and size the dense storage
    /// for it.
    fn set_sparse(&mut self, n: usize, sparse: Option<SparseIteration>) {
        self.sparse = sparse;
        let d = if self.sparse.is_some() { 0 } else { n };
        if self.lu.piv.len() != d || self.lu.lu.nrows() != d {
            self.lu.resize(d);
        }
        self.factored = false;
    }

    /// Scale the matrix (holding G) by C = diag(h^{−(index−1)}) and the row
    /// equilibration R, and factorise it; false when singular.
    fn factor(&mut self, h: f64, index: &[u8]) -> bool {
        let n = self.rs.len();
        self.factored = false;
        let hs = h.abs();
        for j in 0..n {
            self.cs[j] = hs.powi(1 - i32::from(index[j].max(1)));
        }
        self.rs.fill(0.0);
        // rows have largest entry 1: a pivot at rounding level is singular
        let floor = 16.0 * n as f64 * f64::EPSILON;
        if let Some(sp) = self.sparse.as_mut() {
            let a = sp.lu.values_mut();
            a.fill(0.0);
            for ((&(_, j), &s), &g) in sp.entries.iter().zip(&sp.slots).zip(&sp.values) {
                a[s] += g * self.cs[j];
            }
            for (v, &i) in a.iter().zip(&sp.slot_rows) {
                self.rs[i] = self.rs[i].max(v.abs());
            }
            if !invert_row_scales(&mut self.rs) {
                return false;
            }
            for (v, &i) in a.iter_mut().zip(&sp.slot_rows) {
                *v *= self.rs[i];
            }
            self.factored = sp.lu.factor_above(floor);
            return self.factored;
        }
        let a = &mut self.lu.lu;
        for j in 0..n {
            for i in 0..n {
                let v = a[(i, j)] * self.cs[j];
                a[(i, j)] = v;
                self.rs[i] = self.rs[i].max(v.abs());
            }
        }
        if !invert_row_scales(&mut self.rs) {
            return false;
        }
        for j in 0..n {
            for i in 0..n {
                a[(i, j)] *= self.rs[i];
            }
        }
        self.factored = self.lu.factor_above(floor);
        self.factored
    }

    /// b ← G⁻¹ b.
    fn solve(&mut self, b: &mut [f64]) {
        for (x, r) in b.iter_mut().zip(&self.rs) {
            *x *= r;
        }
        match self.sparse.as_mut() {
            Some(sp) => sp.lu.solve_in_place(b),
            None => self.lu.solve(b),
        }
        for (x, c) in b.iter_mut().zip(&self.cs) {
            *x *= c;
        }
    }
}

/// r_i ← 1/r_i for the row maxima r_i of the scaled G; false when a row is
/// zero or not finite (G is singular).
fn invert_row_scales(rs: &mut [f64]) -> bool {
    for r in rs.iter_mut() {
        if !(*r > 0.0 && r.is_finite()) {
            return false;
        }
        *r = 1.0 / *r;
    }
    true
}

/// Age of the iteration matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Matrix {
    /// Must be evaluated before the next iteration.
    Stale,
    /// Evaluated for the current attempt.
    Current,
    /// From an earlier step.
    Old,
}

/// Outcome of one corrector solve.
enum Corrector {
    Converged,
    /// Newton failed with a current matrix; `eval` holds a non-finite
    /// residual met on the way, if any.
    Failed {
        eval: Option<EvalError>,
    },
    /// The iteration matrix is singular.
    Singular,
}

/// The error estimates of one converged step at orders k−2..k (DDASTP).
#[derive(Clone, Copy, Debug, Default)]
struct Estimate {
    err: f64,
    est: f64,
    knew: usize,
    terk: f64,
    terkm1: f64,
    erkm1: f64,
}

/// Variable-order variable-step BDF on F(t, y, y') = 0 (module
/// documentation).
pub struct DaeBdf {
    max_order: usize,
    n: usize,
    index: Vec<u8>,
    t: f64,
    t_prev: f64,
    y: Vec<f64>,
    yp: Vec<f64>,
    /// Order of the next step, order of the last accepted step.
    k: usize,
    kold: usize,
    /// Next step size, size of the last accepted step.
    h: f64,
    hold: f64,
    /// Steps taken with constant h and k (DASSL's NS), and NS + 1 of the
    /// current attempt (which φ_i were multiplied by β_i).
    ns: usize,
    nsp1: usize,
    initial_phase: bool,
    psi: [f64; NC],
    alpha: [f64; NC],
    beta: [f64; NC],
    gamma: [f64; NC],
    sigma: [f64; NC],
    cj: f64,
    cjold: f64,
    cjlast: f64,
    ck: f64,
    /// ρ/(1 − ρ) of the last corrector (DASSL's S).
    s: f64,
    matrix: Matrix,
    phi: Vec<Vec<f64>>,
    ypred: Vec<f64>,
    yppred: Vec<f64>,
    ynew: Vec<f64>,
    ypnew: Vec<f64>,
    e: Vec<f64>,
    delta: Vec<f64>,
    res: Vec<f64>,
    wt_err: Vec<f64>,
    wt_newt: Vec<f64>,
    fd_y: Vec<f64>,
    fd_yp: Vec<f64>,
    fd_r: Vec<f64>,
    lu: ScaledLu,
    // ---- fixed step ----
    h_fixed: f64,
    t_fixed0: f64,
    n_fixed: u64,
    starting: bool,
    pts_t: [f64; MAX_ORDER + 1],
    pts_y: Vec<Vec<f64>>,
    n_pts: usize,
    starter: Option<Box<DaeBdf>>,
    start_opts: SolverOptions,
    start_stats: Stats,
    /// σ of the tolerance-proportional scaling (1 for the inner run that
    /// starts a fixed-step run at its own tolerance)
    tol_scale: f64,
    proportional: bool,
    // ---- the shared step loop ([`step_loop::advance`]) ----
    loop_state: LoopState,
    /// a fixed-step run
    fixed: bool,
    /// t_stop of the current step
    t_stop: f64,
    /// order and estimates of the current trial
    trial_k: usize,
    est: Estimate,
    /// error-test, convergence and singular-matrix failures of the step
    nef: u32,
    ncf: u32,
    nsf: u32,
    /// order chosen after an error-test failure, taken by the retry
    order_after_reject: Option<usize>,
}

impl DaeBdf {
    /// A stepper of orders 1..=`max_order` (clamped to 1..=5); buffers are
    /// sized at [`Stepper::reset`].
    pub fn new(max_order: usize) -> Self {
        Self {
            max_order: max_order.clamp(1, MAX_ORDER),
            n: 0,
            index: Vec::new(),
            t: 0.0,
            t_prev: 0.0,
            y: Vec::new(),
            yp: Vec::new(),
            k: 1,
            kold: 0,
            h: 0.0,
            hold: 0.0,
            ns: 0,
            nsp1: 1,
            initial_phase: true,
            psi: [0.0; NC],
            alpha: [0.0; NC],
            beta: [0.0; NC],
            gamma: [0.0; NC],
            sigma: [0.0; NC],
            cj: 0.0,
            cjold: 0.0,
            cjlast: 0.0,
            ck: 0.0,
            s: 100.0,
            matrix: Matrix::Stale,
            phi: Vec::new(),
            ypred: Vec::new(),
            yppred: Vec::new(),
            ynew: Vec::new(),
            ypnew: Vec::new(),
            e: Vec::new(),
            delta: Vec::new(),
            res: Vec::new(),
            wt_err: Vec::new(),
            wt_newt: Vec::new(),
            fd_y: Vec::new(),
            fd_yp: Vec::new(),
            fd_r: Vec::new(),
            lu: ScaledLu::new(0),
            h_fixed: 0.0,
            t_fixed0: 0.0,
            n_fixed: 0,
            starting: false,
            pts_t: [0.0; MAX_ORDER + 1],
            pts_y: Vec::new(),
            n_pts: 0,
            starter: None,
            start_opts: SolverOptions::default(),
            start_stats: Stats::default(),
            tol_scale: 1.0,
            proportional: true,
            loop_state: LoopState::default(),
            fixed: false,
            t_stop: 0.0,
            trial_k: 1,
            est: Estimate::default(),
            nef: 0,
            ncf: 0,
            nsf: 0,
            order_after_reject: None,
        }
    }

    /// The largest order.
    pub fn max_order(&self) -> usize {
        self.max_order
    }

    /// Order of the last accepted step.
    pub fn order(&self) -> usize {
        self.kold
    }

    fn allocate(&mut self, n: usize) {
        if self.n == n && !self.phi.is_empty() {
            return;
        }
        self.n = n;
        let z = || vec![0.0; n];
        self.y = z();
        self.yp = z();
        self.phi = (0..NPHI)
            .map(|i| if i == 0 { Vec::new() } else { z() })
            .collect();
        self.ypred = z();
        self.yppred = z();
        self.ynew = z();
        self.ypnew = z();
        self.e = z();
        self.delta = z();
        self.res = z();
        self.wt_err = z();
        self.wt_newt = z();
        self.fd_y = z();
        self.fd_yp = z();
        self.fd_r = z();
        self.lu = ScaledLu::new(n);
        self.pts_y = vec![z(); MAX_ORDER + 1];
        self.index = vec![1; n];
    }

    /// DASSL's coefficients for a step of size h at order k (DDASTP,
    /// "compute coefficients"), then φ → φ*.
    fn coefficients(&mut self, h: f64) {
        let (k, kp1) = (self.k, self.k + 1);
        if h != self.hold || k != self.kold {
            self.ns = 0;
        }
        self.ns = (self.ns + 1).min(self.kold + 2);
        if kp1 >= self.ns {
            self.beta[1] = 1.0;
            self.alpha[1] = 1.0;
            self.gamma[1] = 0.0;
            self.sigma[1] = 1.0;
            let mut temp1 = h;
            for i in 2..=kp1 {
                let temp2 = self.psi[i - 1];
                self.psi[i - 1] = temp1;
                self.beta[i] = self.beta[i - 1] * self.psi[i - 1] / temp2;
                temp1 = temp2 + h;
                self.alpha[i] = h / temp1;
                self.sigma[i] = (i - 1) as f64 * self.sigma[i - 1] * self.alpha[i];
                self.gamma[i] = self.gamma[i - 1] + self.alpha[i - 1] / h;
            }
            self.psi[kp1] = temp1;
        }
        let mut alphas = 0.0;
        let mut alpha0 = 0.0;
        for i in 1..=k {
            alphas -= 1.0 / i as f64;
            alpha0 -= self.alpha[i];
        }
        self.cjlast = self.cj;
        self.cj = -alphas / h;
        self.ck = (self.alpha[kp1] + alphas - alpha0)
            .abs()
            .max(self.alpha[kp1]);
        self.nsp1 = self.ns + 1;
        for j in self.nsp1..=kp1 {
            let b = self.beta[j];
            for v in self.phi[j].iter_mut() {
                *v *= b;
            }
        }
    }

    /// Undo [`DaeBdf::coefficients`] after a failed attempt of size h.
    fn restore(&mut self, h: f64) {
        let kp1 = self.k + 1;
        for j in self.nsp1..=kp1 {
            let b = 1.0 / self.beta[j];
            for v in self.phi[j].iter_mut() {
                *v *= b;
            }
        }
        for i in 2..=kp1 {
            self.psi[i - 1] = self.psi[i] - h;
        }
    }

    /// y^(0), y'^(0) from φ*.
    fn predict(&mut self) {
        let kp1 = self.k + 1;
        for c in 0..self.n {
            let mut y0 = self.phi[1][c];
            let mut yp0 = 0.0;
            for j in 2..=kp1 {
                y0 += self.phi[j][c];
                yp0 += self.gamma[j] * self.phi[j][c];
            }
            self.ypred[c] = y0;
            self.yppred[c] = yp0;
        }
    }

    /// G = F_y + c F_y' at (t, y^(0), y'^(0)) into the LU's matrix.
    fn form_matrix(
        &mut self,
        dae: &mut dyn DaeProblem,
        t: f64,
        h: f64,
        stats: &mut Stats,
    ) -> Result<(), EvalError> {
        stats.n_jac += 1;
        let c = self.cj;
        if let Some(sp) = self.lu.sparse.as_mut() {
            return dae.sparse_iteration_matrix(t, &self.ypred, &self.yppred, c, &mut sp.values);
        }
        if dae.has_exact_jacobian() {
            return dae.iteration_matrix(t, &self.ypred, &self.yppred, c, &mut self.lu.lu.lu);
        }
        // forward differences through the counter; self.res holds F at the
        // prediction (DASSL's DDAJAC: δ = √ε max(|y|, |h y'|, 1))
        let sq = f64::EPSILON.sqrt();
        self.fd_y.copy_from_slice(&self.ypred);
        self.fd_yp.copy_from_slice(&self.yppred);
        for j in 0..self.n {
            let d = sq * self.ypred[j].abs().max((h * self.yppred[j]).abs()).max(1.0);
            self.fd_y[j] = self.ypred[j] + d;
            self.fd_yp[j] = self.yppred[j] + c * d;
            counted_residual(dae, t, &self.fd_y, &self.fd_yp, &mut self.fd_r, stats)?;
            self.fd_y[j] = self.ypred[j];
            self.fd_yp[j] = self.yppred[j];
            for i in 0..self.n {
                self.lu.lu.lu[(i, j)] = (self.fd_r[i] - self.res[i]) / d;
            }
        }
        Ok(())
    }

    /// One corrector solve at t_new (DDASTP 300–380).
    fn corrector(
        &mut self,
        dae: &mut dyn DaeProblem,
        t_new: f64,
        h: f64,
        adaptive: bool,
        stats: &mut Stats,
    ) -> Result<Corrector, IntegrateError> {
        let (tol, max_iter) = if adaptive {
            (NEWTON_TOL_ADAPTIVE, MAX_ITER_ADAPTIVE)
        } else {
            (NEWTON_TOL_FIXED, MAX_ITER_FIXED)
        };
        loop {
            self.ynew.copy_from_slice(&self.ypred);
            self.ypnew.copy_from_slice(&self.yppred);
            self.e.fill(0.0);
            match counted_residual(dae, t_new, &self.ynew, &self.ypnew, &mut self.res, stats) {
                Ok(()) => {}
                Err(err @ EvalError::NonFinite { .. }) => {
                    stats.n_newton_fail += 1;
                    return Ok(Corrector::Failed { eval: Some(err) });
                }
                Err(err) => return Err(err.into()),
            }
            if self.matrix == Matrix::Stale {
                match self.form_matrix(dae, t_new, h, stats) {
                    Ok(()) => {}
                    Err(err @ EvalError::NonFinite { .. }) => {
                        stats.n_newton_fail += 1;
                        return Ok(Corrector::Failed { eval: Some(err) });
                    }
                    Err(err) => return Err(err.into()),
                }
                stats.n_lu += 1;
                self.cjold = self.cj;
                self.s = 100.0;
                self.matrix = Matrix::Current;
                if !self.lu.factor(h, &self.index) {
                    self.matrix = Matrix::Stale;
                    return Ok(Corrector::Singular);
                }
            }
            let pnorm = wrms(&self.ynew, &self.wt_newt);
            let mut oldnrm = 0.0;
            let mut rate = 0.0;
            let mut m = 0u32;
            let mut eval = None;
            let converged = loop {
                stats.n_newton_iter += 1;
                stats.n_solve += 1;
                self.delta.copy_from_slice(&self.res);
                self.lu.solve(&mut self.delta);
                let fac = if self.cj != self.cjold {
                    2.0 / (1.0 + self.cj / self.cjold)
                } else {
                    1.0
                };
                for i in 0..self.n {
                    let d = fac * self.delta[i];
                    self.delta[i] = d;
                    self.ynew[i] -= d;
                    self.e[i] -= d;
                    self.ypnew[i] -= self.cj * d;
                }
                let delnrm = wrms(&self.delta, &self.wt_newt);
                if !delnrm.is_finite() {
                    break false;
                }
                let round_off = 100.0 * f64::EPSILON * pnorm;
                if delnrm <= round_off {
                    break true;
                }
                if m > 0 {
                    rate = (delnrm / oldnrm).powf(1.0 / m as f64);
                    if rate > 0.9 {
                        // fixed step: an iteration stalled within a hundred
                        // times the round-off floor has converged
                        break !adaptive && delnrm <= 100.0 * round_off;
                    }
                    self.s = rate / (1.0 - rate);
                } else {
                    oldnrm = delnrm;
                }
                if self.s * delnrm <= tol {
                    break true;
                }
                m += 1;
                if m >= max_iter {
                    break false;
                }
                match counted_residual(dae, t_new, &self.ynew, &self.ypnew, &mut self.res, stats) {
                    Ok(()) => {}
                    Err(err @ EvalError::NonFinite { .. }) => {
                        eval = Some(err);
                        break false;
                    }
                    Err(err) => return Err(err.into()),
                }
            };
            if converged {
                // fixed step: slow contraction asks for a fresh matrix at
                // the next step (the step cannot shrink instead)
                self.matrix = if !adaptive && rate > 0.3 {
                    Matrix::Stale
                } else {
                    Matrix::Old
                };
                return Ok(Corrector::Converged);
            }
            stats.n_newton_fail += 1;
            if self.matrix == Matrix::Current {
                return Ok(Corrector::Failed { eval });
            }
            self.matrix = Matrix::Stale;
        }
    }

    /// Coefficients, prediction, weights and the corrector for a step of
    /// size h from the current point.
    fn attempt_corrector(
        &mut self,
        dae: &mut dyn DaeProblem,
        h: f64,
        adaptive: bool,
        ctx: &mut StepContext,
    ) -> Result<Corrector, IntegrateError> {
        if self.kold == 0 && self.psi[1] != h {
            // first step: φ_2 = h y'_0 follows h (DDASTP 690)
            let r = h / self.psi[1];
            for v in self.phi[2].iter_mut() {
                *v *= r;
            }
            self.psi[1] = h;
        }
        self.coefficients(h);
        self.predict();
        let opts = ctx.opts;
        let (rtol, atol) = if adaptive {
            (opts.rtol, opts.atol)
        } else {
            (FIXED_SCALE, FIXED_SCALE)
        };
        dae_weights(&*dae, &self.y, rtol, atol, h, false, &mut self.wt_newt);
        if adaptive {
            dae_weights(&*dae, &self.y, rtol, atol, h, true, &mut self.wt_err);
            // the tolerance-proportional scaling (module documentation)
            for w in self.wt_err.iter_mut().chain(self.wt_newt.iter_mut()) {
                *w /= self.tol_scale;
            }
        }
        if self.matrix == Matrix::Current {
            self.matrix = Matrix::Old;
        }
        if !self.lu.factored {
            self.matrix = Matrix::Stale;
        } else {
            let r = self.cj / self.cjold;
            if !(CJ_RATIO_MIN..=1.0 / CJ_RATIO_MIN).contains(&r) {
                self.matrix = Matrix::Stale;
            }
        }
        if self.cj != self.cjlast {
            self.s = 100.0;
        }
        // a rate measured at an earlier step vouches for one iteration only
        // as far as ρ = 1/6 (ρ/(1 − ρ) = 0.2)
        self.s = self.s.max(CARRIED_RATE_MIN);
        self.corrector(dae, self.t + h, h, adaptive, ctx.stats)
    }

    /// Error estimates at orders k, k−1, k−2 and the order DASSL would
    /// lower to (DDASTP 400–430).
    fn estimate(&mut self) -> Estimate {
        let k = self.k;
        let enorm = wrms_tested(&self.e, &self.wt_err);
        let erk = self.sigma[k + 1] * enorm;
        let terk = (k + 1) as f64 * erk;
        let mut out = Estimate {
            err: self.ck * enorm,
            est: erk,
            knew: k,
            terk,
            terkm1: 0.0,
            erkm1: 0.0,
        };
        if k > 1 {
            for i in 0..self.n {
                self.delta[i] = self.phi[k + 1][i] + self.e[i];
            }
            let erkm1 = self.sigma[k] * wrms_tested(&self.delta, &self.wt_err);
            let terkm1 = k as f64 * erkm1;
            out.erkm1 = erkm1;
            out.terkm1 = terkm1;
            let lower = if k == 2 {
                terkm1 <= 0.5 * terk
            } else {
                for i in 0..self.n {
                    self.delta[i] += self.phi[k][i];
                }
                let erkm2 = self.sigma[k - 1] * wrms_tested(&self.delta, &self.wt_err);
                let terkm2 = (k - 1) as f64 * erkm2;
                terkm1.max(terkm2) <= terk
            };
            if lower {
                out.knew = k - 1;
                out.est = erkm1;
            }
        }
        out
    }

    /// Make the corrected values the current point at `t_new` and update
    /// φ (DDASTP 575–595) after a step at order `k_step`.
    fn accept(&mut self, t_new: f64, k_step: usize) {
        let (kp1, kp2) = (k_step + 1, k_step + 2);
        if k_step < self.max_order {
            self.phi[kp2].copy_from_slice(&self.e);
        }
        for i in 0..self.n {
            self.phi[kp1][i] += self.e[i];
        }
        for j in (1..=k_step).rev() {
            let (lo, hi) = self.phi.split_at_mut(j + 1);
            for (a, b) in lo[j].iter_mut().zip(hi[0].iter()) {
                *a += *b;
            }
        }
        self.t_prev = self.t;
        self.t = t_new;
        self.y.copy_from_slice(&self.ynew);
        self.yp.copy_from_slice(&self.ypnew);
    }

    /// Order and step size after an accepted adaptive step (DDASTP
    /// 500–560); returns the next step size.
    fn select(&mut self, est: &Estimate, h: f64) -> f64 {
        let k = self.k;
        let kdiff = k as isize - self.kold as isize;
        self.kold = k;
        self.hold = h;
        if est.knew + 1 == k || k == self.max_order {
            self.initial_phase = false;
        }
        if self.initial_phase {
            self.k = k + 1;
            return 2.0 * h;
        }
        let mut e_sel = est.est;
        if est.knew + 1 == k {
            self.k = k - 1;
            e_sel = est.erkm1;
        } else if k < self.max_order && k + 1 < self.ns && kdiff != 1 {
            for i in 0..self.n {
                self.delta[i] = self.e[i] - self.phi[k + 2][i];
            }
            let erkp1 = wrms_tested(&self.delta, &self.wt_err) / (k + 2) as f64;
            let terkp1 = (k + 2) as f64 * erkp1;
            let raise = if k > 1 {
                if est.terkm1 <= est.terk.min(terkp1) {
                    self.k = k - 1;
                    e_sel = est.erkm1;
                    false
                } else {
                    terkp1 < est.terk
                }
            } else {
                terkp1 < 0.5 * est.terk
            };
            if raise {
                self.k = k + 1;
                e_sel = erkp1;
            }
        }
        let r = (2.0 * e_sel + 1e-4).powf(-1.0 / (self.k as f64 + 1.0));
        if r >= 2.0 {
            2.0 * h
        } else if r <= 1.0 {
            h * r.clamp(0.5, 0.9)
        } else {
            h
        }
    }

    /// The end of a step of size h from t: t_stop when the loop trimmed
    /// the step to it (exactly), t0 + j h from the count at fixed steps
    /// (no accumulated rounding), else t + h.
    fn t_new(&self, h: f64) -> f64 {
        if h == self.t_stop - self.t {
            self.t_stop
        } else if self.fixed {
            self.t_fixed0 + (self.n_fixed + 1) as f64 * self.h_fixed
        } else {
            self.t + h
        }
    }

    /// The inner run of a fixed-step start to `target` (t0 + j h or
    /// t_stop); its work is counted in the run's counters.
    fn run_start(
        &mut self,
        p: &mut dyn OdeProblem,
        target: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let starter = self
            .starter
            .as_mut()
            .expect("the fixed-step start has an inner stepper after reset");
        let mut result = Ok(());
        while starter.t() < target {
            let mut sctx = StepContext {
                opts: &self.start_opts,
                stats: &mut self.start_stats,
            };
            result = starter.step(p, target, &mut sctx);
            if result.is_err() {
                break;
            }
            if self.start_stats.n_steps() >= ctx.opts.max_steps {
                result = Err(IntegrateError::TooManySteps {
                    t: starter.t(),
                    n: self.start_stats.n_steps(),
                });
                break;
            }
        }
        merge_work(ctx.stats, &mut self.start_stats);
        result
    }

    /// The inner run's value at `target` becomes the current point and a
    /// start point; the history from the points so far.
    fn accept_start(&mut self, target: f64) {
        let starter = self
            .starter
            .as_ref()
            .expect("the fixed-step start has an inner stepper after reset");
        let j = self.n_pts;
        self.pts_t[j] = target;
        self.pts_y[j].copy_from_slice(starter.y());
        self.yp.copy_from_slice(&starter.yp);
        self.n_pts += 1;
        self.t_prev = self.t;
        self.t = target;
        self.y.copy_from_slice(starter.y());
        self.n_fixed += 1;
        self.history_from_points();
        if self.n_pts == self.max_order + 1 {
            // the order-k method takes over with k + 1 values
            self.starting = false;
            self.k = self.max_order;
            self.hold = self.pts_t[j] - self.pts_t[j - 1];
            self.ns = 0;
            self.matrix = Matrix::Stale;
            self.initial_phase = false;
        }
    }

    /// φ and ψ from the start points (modified divided differences at the
    /// newest point, BCP 5.2); the order of the history is the
    /// number of points less one.
    fn history_from_points(&mut self) {
        let np = self.n_pts;
        let tau = |i: usize| self.pts_t[np - 1 - i];
        let mut prod = [1.0; MAX_ORDER + 1];
        for i in 1..np {
            self.psi[i] = tau(0) - tau(i);
            prod[i] = prod[i - 1] * self.psi[i];
        }
        let mut v = [0.0; MAX_ORDER + 1];
        for c in 0..self.n {
            for (i, vi) in v.iter_mut().enumerate().take(np) {
                *vi = self.pts_y[np - 1 - i][c];
            }
            self.phi[1][c] = v[0];
            for l in 1..np {
                for i in 0..np - l {
                    v[i] = (v[i] - v[i + 1]) / (tau(i) - tau(i + l));
                }
                self.phi[l + 1][c] = prod[l] * v[0];
            }
            for j in np + 1..NPHI {
                self.phi[j][c] = 0.0;
            }
        }
        self.kold = np - 1;
    }
}

fn singular(t: f64) -> EvalError {
    EvalError::Singular {
        what: "DAE iteration matrix dF/dy + c dF/dy'".into(),
        t,
        detail: "the DAE is singular or of higher index than its description".into(),
    }
}

/// RMS of v_i w_i over all components.
fn wrms(v: &[f64], w: &[f64]) -> f64 {
    let s: f64 = v.iter().zip(w).map(|(a, b)| (a * b) * (a * b)).sum();
    (s / v.len().max(1) as f64).sqrt()
}

/// RMS of v_i w_i over the components with w_i > 0 (the tested ones).
fn wrms_tested(v: &[f64], w: &[f64]) -> f64 {
    let (mut s, mut n) = (0.0, 0usize);
    for (a, b) in v.iter().zip(w) {
        if *b > 0.0 {
            s += (a * b) * (a * b);
            n += 1;
        }
    }
    (s / n.max(1) as f64).sqrt()
}

/// Add the inner run's work to `dst` (all but accepted/rejected steps)
/// and clear `src`.
fn merge_work(dst: &mut Stats, src: &mut Stats) {
    dst.n_rhs += src.n_rhs;
    dst.n_jac += src.n_jac;
    dst.n_lu += src.n_lu;
    dst.n_solve += src.n_solve;
    dst.n_newton_iter += src.n_newton_iter;
    dst.n_newton_fail += src.n_newton_fail;
    dst.n_newton_stalled += src.n_newton_stalled;
    *src = Stats::default();
}

fn unsupported() -> IntegrateError {
    IntegrateError::Unsupported {
        method: "bdf".into(),
        detail: "the DAE BDF integrates implicit DAEs F(t, y, y') = 0 only \
                 (the problem offers no DaeProblem)"
            .into(),
    }
}

impl StepAttempt for DaeBdf {
    crate::step_loop::loop_state_accessor!();

    fn sums_accepted_error(&self) -> bool {
        true
    }
    fn current_t(&self) -> f64 {
        self.t
    }

    /// Adaptive: the selected h. Fixed: the step to t0 + (j + 1) h.
    fn proposed_h(&self) -> f64 {
        if self.fixed {
            step_loop::fixed_grid_step(self.t_fixed0, self.n_fixed, self.h_fixed, self.t)
        } else {
            self.h
        }
    }

    fn set_h(&mut self, h: f64) {
        if !self.fixed {
            self.h = h;
        }
    }

    /// Coefficients, prediction and corrector of order k (module doc),
    /// and DASSL's estimates. A Newton failure with a current matrix or a
    /// singular matrix retries at h/4 (10 and 3 times per step at most).
    /// Fixed steps: the inner run during the start, then the corrector to
    /// round-off; a failure is an error.
    fn attempt(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<Trial, IntegrateError> {
        if self.fixed && self.starting {
            let target = self.t_new(h);
            self.run_start(p, target, ctx)?;
            return Ok(Trial::Unchecked);
        }
        let dae = p.as_dae().ok_or_else(unsupported)?;
        let adaptive = !self.fixed;
        self.trial_k = self.k;
        let out = self.attempt_corrector(dae, h, adaptive, ctx)?;
        if !matches!(out, Corrector::Converged) {
            self.restore(h);
            self.initial_phase = false;
        }
        let max_iter = if adaptive {
            MAX_ITER_ADAPTIVE
        } else {
            MAX_ITER_FIXED
        };
        match out {
            Corrector::Converged if adaptive => {
                self.est = self.estimate();
                Ok(Trial::Estimated(self.est.err))
            }
            Corrector::Converged => Ok(Trial::Unchecked),
            Corrector::Failed { eval } => {
                self.ncf += 1;
                if !adaptive || self.ncf >= MAX_CONVERGENCE_FAILURES || 0.25 * h < ctx.opts.h_min {
                    return Err(match eval {
                        Some(err) => err.into(),
                        None => IntegrateError::NewtonFailed {
                            t: self.t,
                            h,
                            iters: max_iter,
                        },
                    });
                }
                Ok(Trial::Failed { factor: 0.25 })
            }
            Corrector::Singular => {
                self.nsf += 1;
                if !adaptive || self.nsf >= MAX_SINGULAR {
                    return Err(singular(self.t + h).into());
                }
                Ok(Trial::Failed { factor: 0.25 })
            }
        }
    }

    /// The step after one trimmed to t_stop follows from the trimmed one
    /// (the selection bounds the ratio of successive steps).
    fn resumes_after_trim(&self) -> bool {
        false
    }

    /// Start again at the current point: consistent derivative, order 1,
    /// a first step chosen anew (the loop's state is kept).
    fn restart_here(
        &mut self,
        p: &mut dyn OdeProblem,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        // φ_2 = h y'_0 follows h in the first trial
        crate::stepper::restart_by_reset(self, |s| &mut s.h, false, p, ctx)
    }

    /// Accepted: DASSL's order and step selection (DDASTP 500–560).
    /// Rejected (DDASTP): at the first failure of the step the order of
    /// the estimates and h · clamp(0.9 (2 est + 1e-4)^{−1/(k+1)}, 0.25,
    /// 0.9), at the second h/4, then h/4 at order 1.
    fn factor(&mut self, _err: f64, h: f64, accepted: bool) -> f64 {
        let est = self.est;
        if accepted {
            return self.select(&est, h) / h;
        }
        self.nef += 1;
        let knew = if self.nef <= 2 { est.knew } else { 1 };
        self.order_after_reject = Some(knew);
        if self.nef == 1 {
            (0.9 * (2.0 * est.est + 1e-4).powf(-1.0 / (knew as f64 + 1.0))).clamp(0.25, 0.9)
        } else {
            0.25
        }
    }

    /// Undo the coefficients of the rejected trial, leave the initial
    /// phase, take the order chosen for the retry.
    fn rejected(
        &mut self,
        _p: &mut dyn OdeProblem,
        h: f64,
        _ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.restore(h);
        self.initial_phase = false;
        crate::multistep::take_pending_order(&mut self.k, &mut self.order_after_reject);
        Ok(())
    }

    fn commit(
        &mut self,
        _p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let t_new = self.t_new(h);
        self.order_after_reject = None;
        if self.fixed {
            if self.starting {
                self.accept_start(t_new);
                return Ok(());
            }
            self.kold = self.trial_k;
            self.hold = h;
            self.accept(t_new, self.trial_k);
            self.n_fixed += 1;
            return Ok(());
        }
        ctx.stats.accumulated_error += self.est.err * self.tol_scale;
        self.accept(t_new, self.trial_k);
        Ok(())
    }
}

impl Stepper for DaeBdf {
    fn name(&self) -> &'static str {
        "bdf"
    }

    /// One accepted step by the shared loop ([`step_loop::advance`]).
    fn step(
        &mut self,
        p: &mut dyn OdeProblem,
        t_stop: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        if self.phi.is_empty() {
            return Err(IntegrateError::Unsupported {
                method: "bdf".into(),
                detail: "step before reset".into(),
            });
        }
        self.t_stop = t_stop;
        (self.nef, self.ncf, self.nsf) = (0, 0, 0);
        step_loop::advance(self, p, t_stop, ctx)
    }

    fn reset(
        &mut self,
        p: &mut dyn OdeProblem,
        t0: f64,
        y0: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let opts = ctx.opts;
        if let Some(h) = opts.fixed_step {
            if !(h > 0.0 && h.is_finite()) {
                return Err(IntegrateError::BadMethod(format!(
                    "bdf: fixed step size must be positive and finite, got {h}"
                )));
            }
        }
        self.loop_state = LoopState::default();
        self.fixed = opts.fixed_step.is_some();
        self.order_after_reject = None;
        {
            let dae = p.as_dae().ok_or_else(unsupported)?;
            let n = y0.len();
            if dae.dim() != n || dae.variable_index().len() != n || dae.is_differential().len() != n
            {
                return Err(IntegrateError::Unsupported {
                    method: "bdf".into(),
                    detail: format!(
                        "the DAE has dimension {} and an index description of {}, the state {n}",
                        dae.dim(),
                        dae.variable_index().len()
                    ),
                });
            }
            self.allocate(n);
            // sparse when the problem declares its pattern (set up once per
            // pattern; dense storage only on the dense path)
            let sparse = SparseIteration::set_up(dae, self.lu.sparse.take(), false, "bdf")?;
            self.lu.set_sparse(n, sparse);
            self.index.copy_from_slice(dae.variable_index());
            self.t = t0;
            self.t_prev = t0;
            self.y.copy_from_slice(y0);
            // the previous derivative is the guess of problems that keep it
            dae.consistent_derivative(t0, y0, &mut self.yp)?;
            counted_residual(dae, t0, y0, &self.yp, &mut self.res, ctx.stats)?;
            for ph in self.phi.iter_mut().skip(1) {
                ph.fill(0.0);
            }
            self.phi[1].copy_from_slice(y0);
            self.k = 1;
            self.kold = 0;
            self.hold = 0.0;
            self.ns = 0;
            self.initial_phase = true;
            self.cj = 0.0;
            self.cjlast = 0.0;
            self.cjold = 0.0;
            self.s = 100.0;
            self.matrix = Matrix::Stale;
            self.lu.factored = false;
            self.psi = [0.0; NC];
            self.starting = opts.fixed_step.is_some();
            self.tol_scale = if self.proportional {
                proportional_scale(opts.rtol, self.max_order as u32)
            } else {
                1.0
            };
        }
        if !self.starting {
            // first step by Hairer's algorithm (HNW I, II.4) through the
            // problem's rhs, which a DAE problem offers for this purpose
            // (y' from the consistent derivative)
            let h = match opts.h0 {
                Some(h0) => h0.min(opts.h_max),
                None => initial_step(
                    p, t0, y0, &self.yp, 1, opts.rtol, opts.atol, opts.h_max, 1.0,
                )?,
            };
            if !(h > 0.0 && h.is_finite()) {
                return Err(IntegrateError::StepSizeTooSmall { t: t0, h });
            }
            self.h = h;
            self.psi[1] = h;
            for (ph, yp) in self.phi[2].iter_mut().zip(&self.yp) {
                *ph = h * yp;
            }
            return Ok(());
        }
        // fixed step: the inner run provides t0 + h, ..., t0 + k h
        let hf = opts.fixed_step.unwrap_or(0.0);
        self.h_fixed = hf;
        self.h = hf;
        self.t_fixed0 = t0;
        self.n_fixed = 0;
        self.starting = true;
        self.pts_t[0] = t0;
        self.pts_y[0].copy_from_slice(y0);
        self.n_pts = 1;
        self.kold = 0;
        let mut so = opts.clone();
        so.fixed_step = None;
        so.rtol = START_TOL;
        so.atol = START_TOL;
        so.h0 = None;
        so.h_max = opts.h_max.min(hf);
        self.start_opts = so;
        self.start_stats = Stats::default();
        let starter = self.starter.get_or_insert_with(|| {
            let mut s = Box::new(DaeBdf::new(MAX_ORDER));
            // the start values at START_TOL itself
            s.proportional = false;
            s
        });
        let mut sctx = StepContext {
            opts: &self.start_opts,
            stats: &mut self.start_stats,
        };
        let r = starter.reset(p, t0, y0, &mut sctx);
        merge_work(ctx.stats, &mut self.start_stats);
        r
    }

    /// A small correction of y_n (a projection) replaces φ_1 and keeps the
    /// differences, as the ODE BDF does; the fixed-step method restarts.
    fn correct(
        &mut self,
        p: &mut dyn OdeProblem,
        y: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        if ctx.opts.fixed_step.is_some() || y.len() != self.n || self.kold == 0 {
            let t = self.t;
            return self.reset(p, t, y, ctx);
        }
        self.y.copy_from_slice(y);
        self.phi[1].copy_from_slice(y);
        Ok(())
    }

    crate::one_step::one_step_accessors!(fields);

    /// The polynomial through the last kold + 1 points (DDATRP).
    fn interpolate(&self, t: f64, out: &mut [f64]) {
        out.copy_from_slice(&self.phi[1]);
        let temp1 = t - self.t;
        let kold = self.kold;
        if kold == 0 || temp1 == 0.0 {
            if temp1 == 0.0 {
                out.copy_from_slice(&self.y);
            }
            return;
        }
        let mut c = 1.0;
        let mut gamma = temp1 / self.psi[1];
        for j in 2..=kold + 1 {
            c *= gamma;
            if j <= kold {
                gamma = (temp1 + self.psi[j - 1]) / self.psi[j];
            }
            for (o, ph) in out.iter_mut().zip(&self.phi[j]) {
                *o += c * ph;
            }
        }
    }
}
