//! Radau IIA of order 5 (three stages, c = ((4 − √6)/10, (4 + √6)/10, 1))
//! on an implicit DAE F(t, y, y') = 0, with radau5.f's index-aware error
//! scaling, step control and dense output (Hairer & Wanner, *Solving ODEs
//! II*, 2nd ed., Sections IV.8, VI.1 and VII.8; radau5.f, version of
//! 1996).
//!
//! **Stage equations.** With stage increments Z_i = Y_i − y_n, the
//! collocation polynomial u of degree 3 through (t_n, y_n) and the stages
//! has the derivatives Y'_i = u'(t_n + c_i h) = (1/h) Σ_j (A⁻¹)_ij Z_j, and
//! the method is
//!
//! ```text
//! F(t_n + c_i h, y_n + Z_i, (1/h) Σ_j (A⁻¹)_ij Z_j) = 0,   i = 1, 2, 3
//! ```
//!
//! (HW II, VI.1, eq. (1.13) for F(y, y') = 0; for M y' = f(y) this is
//! radau5.f's mass-matrix form).
//!
//! **Simplified Newton.** J = ∂F/∂y and M = ∂F/∂y' are frozen at the step
//! start (t_n, y_n, y'_n); the Newton matrix I ⊗ J + (1/h) A⁻¹ ⊗ M is
//! transformed with A⁻¹ = T Λ T⁻¹, Λ = diag(γ, [[α, −β], [β, α]]), and
//! W = (T⁻¹ ⊗ I) Z, into one real and one complex n × n system (HW II,
//! IV.8, "Reducing the computational cost"):
//!
//! ```text
//! (J + (γ/h) M) ΔW1                   = −(T⁻¹G)_1
//! (J + ((α + iβ)/h) M) (ΔW2 + i ΔW3)  = −((T⁻¹G)_2 + i (T⁻¹G)_3)
//! ```
//!
//! with G_i the stage residuals. Convergence is judged by the contraction
//! rate as in radau5.f (at most 7 iterations, FNEWT; the step is reduced
//! when the iteration diverges or will not converge in time), and J, M and
//! the factorisations are reused over steps as radau5.f does (a new
//! Jacobian only after a slowly converging iteration, θ > 0.001; the old
//! factorisations when h changes by a factor in [1, 1.2]). When the
//! problem declares the pattern of J and M ([`DaeProblem::sparsity`], with
//! an exact iteration matrix) both systems are formed in it and factored
//! by the sparse LU ([`crate::sparse_lu`]), the complex one over `c64`
//! with the real one's pattern and column ordering.
//!
//! **Index-aware scaling.** The error weights are [`dae_weights`] without
//! excluding the algebraic components: the tolerance of an index-k
//! component is divided by h^(k−1) (radau5.f, NIND2/NIND3; HW II, VII.8,
//! "Exploiting the index"), both in the error test and in the Newton
//! convergence test. As in radau5.f the tolerances are first transformed,
//! rtol' = 0.1 rtol^(2/3), atol' = rtol' · atol/rtol.
//!
//! **Tolerance-proportional scaling** on problems with differential
//! components of index 2 or 3 (the velocities of the index-3 form): the
//! relaxed tolerance tol/h of the velocities left them 12–5556 tol off on
//! the double pendulum (t = 1, rtol = atol = 1e-4, 1e-6, 1e-8; q 4.6–22),
//! so there the weights are further divided by σ = 0.1 rtol^(1/5)
//! ([`crate::controller::proportional_scale`], order 5), as bdf's: measured
//! 0.0–0.9 tol in q and 1.0–8.6 in v at nine tolerances from 1e-4 to 1e-8
//! (54, 135, 361 steps at 1e-4, 1e-6, 1e-8 instead of 32, 44, 91). Index-1
//! forms (ggl: 0.2–1.0 and 2.8–6.5 tol with radau5.f's transformation
//! alone) keep σ = 1. Treating the velocities as index 1 instead (their
//! tolerance not relaxed) was tried: 1.1–39 tol in v at the end and Newton
//! failures at t = 0 on the four-bar.
//!
//! **Error estimate** (radau5.f, ESTRAD, mass-matrix case). For
//! M y' = f(t, y) radau5.f computes err = (γ/h M − f_y)⁻¹ [f(t_n, y_n) +
//! M (1/h) Σ d_i Z_i] with d = (−(13 + 7√6)/3, (−13 + 7√6)/3, −1/3). With
//! F = M y' − f this is F_y + (γ/h) F_y' = E1, the real Newton matrix, and
//! f(t_n, y_n) + M w = −F(t_n, y_n, −w), so that
//!
//! ```text
//! err = −E1⁻¹ F(t_n, y_n, −(1/h) Σ d_i Z_i),
//! ```
//!
//! which is how it is evaluated here (one residual). On the first step and
//! after a rejection an estimate ≥ 1 is filtered once more,
//! err ← −E1⁻¹ F(t_n, y_n + err, −(1/h) Σ d_i Z_i) (ESTRAD's second solve).
//!
//! **Step control**: radau5.f's safety factor depending on the Newton
//! iterations and Gustafsson's predictive controller (HW II, IV.8, eq.
//! (8.25)); with [`crate::SolverOptions::fixed_step`] there is no error
//! test and the steps end on t0 + k h. The accept/reject loop is the
//! shared one ([`crate::step_loop::advance`]); this file supplies the
//! trial, the step factor and the commit ([`StepAttempt`]).
//! **Dense output**: the collocation polynomial (radau5.f, CONTR5).
//!
//! Work counters: every residual is one `n_rhs` (including the difference
//! quotients of an inexact iteration matrix), one J and M pair one
//! `n_jac`, one real and complex factorisation pair one `n_lu` (radau5.f's
//! NDEC), one pair of solves one `n_solve`. The weighted error estimates of
//! the accepted steps (1 = at the transformed tolerance, before σ) are
//! summed in `accumulated_error`. Stepping allocates nothing (the factorisations are
//! in place), except the difference quotients of problems without an
//! exact iteration matrix ([`fd_iteration_matrix`]).

use nalgebra::{Complex, ComplexField, DMatrix, Matrix3};

use crate::controller::proportional_scale;
use crate::dae::dense_lu::DenseLu;
use crate::dae::sparse_iteration::SparseIteration;
use crate::dae::{counted_residual, dae_weights, fd_iteration_matrix, DaeProblem};
use crate::discontinuity::resolution_floor;
use crate::error::{EvalError, IntegrateError};
use crate::implicit::radau5::{
    collocation_coefficients, collocation_value, newton_verdict, proposed_step,
    transformed_tolerances, RadauCoeffs, NIT, QUOT1, QUOT2, THET,
};
use crate::initial_step::initial_step;
use crate::problem::OdeProblem;
use crate::stats::Stats;
use crate::step_loop::{self, LoopState, StepAttempt, Trial};
use crate::stepper::{StepContext, Stepper};

type C64 = Complex<f64>;

const NAME: &str = "radau5";

/// Newton iterations allowed at fixed steps, where h cannot be reduced.
const NIT_FIXED: u32 = 30;

/// At fixed steps, growth of the Newton increment over the first one
/// beyond which the iteration is taken to diverge.
const GROWTH_LIMIT: f64 = 1e3;

/// Evaluation failures (and singular matrices) in a row after which an
/// adaptive step gives up instead of halving h again.
const MAX_EVAL_RETRIES: u32 = 10;

/// The DAE with its residuals counted (for difference-quotient Jacobians).
struct Counted<'a> {
    inner: &'a mut dyn DaeProblem,
    n: u64,
}

impl DaeProblem for Counted<'_> {
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn residual(&mut self, t: f64, y: &[f64], yp: &[f64], r: &mut [f64]) -> Result<(), EvalError> {
        self.n += 1;
        self.inner.residual(t, y, yp, r)
    }
    fn variable_index(&self) -> &[u8] {
        self.inner.variable_index()
    }
    fn is_differential(&self) -> &[bool] {
        self.inner.is_differential()
    }
}

fn not_a_dae() -> IntegrateError {
    IntegrateError::Unsupported {
        method: NAME.into(),
        detail: "the DAE stepper needs an implicit DAE F(t, y, y') = 0 \
                 (OdeProblem::as_dae); this problem offers none"
            .into(),
    }
}

/// Weighted RMS norm ‖v‖ = sqrt((1/n) Σ (w_i v_i)²), at least 1e-10 (radau5.f).
fn weighted_norm(v: &[f64], w: &[f64]) -> f64 {
    let s: f64 = v.iter().zip(w).map(|(a, b)| (a * b).powi(2)).sum();
    (s / v.len().max(1) as f64).sqrt().max(1e-10)
}

/// A singular E1 or E2 at t with step h.
fn singular(t: f64, h: f64) -> EvalError {
    EvalError::Singular {
        what: "radau5 iteration matrix ∂F/∂y + (γ/h) ∂F/∂y' (or its complex twin)".into(),
        t,
        detail: format!("h = {h:e}"),
    }
}

/// How a Newton iteration ended.
enum NewtonEnd {
    /// Converged after this many iterations.
    Converged(u32),
    /// Failed: retry with h reduced by this factor.
    Failed(f64),
}

/// Radau IIA (order 5) on F(t, y, y') = 0 (module documentation).
pub struct DaeRadau5 {
    co: RadauCoeffs,
    /// A⁻¹ (stage derivatives from stage increments).
    ainv: [[f64; 3]; 3],
    t: f64,
    t_prev: f64,
    /// Proposed step size.
    h: f64,
    /// Size of the last accepted step.
    h_old: f64,
    y: Vec<f64>,
    /// y'(t): consistent at the start, the collocation derivative Y'_3 after a step.
    yp: Vec<f64>,
    z: [Vec<f64>; 3],
    w: [Vec<f64>; 3],
    res: [Vec<f64>; 3],
    cont: [Vec<f64>; 4],
    /// Error weights 1/SCAL (index-scaled).
    wt: Vec<f64>,
    ys: Vec<f64>,
    yps: Vec<f64>,
    tmp: Vec<f64>,
    cvec: Vec<C64>,
    jac: DMatrix<f64>,
    mass: DMatrix<f64>,
    e1: DenseLu<f64>,
    e2: DenseLu<C64>,
    /// J and M in the pattern the problem declares
    /// ([`DaeProblem::sparsity`]), E1 factored in its `lu`, E2 in its
    /// `complex`; `jac`, `mass`, `e1`, `e2` are 0 × 0 then.
    sparse: Option<SparseIteration>,
    /// h of the factorisations (NaN: none).
    lu_h: f64,
    need_jac: bool,
    caljac: bool,
    first: bool,
    reject: bool,
    theta: f64,
    faccon: f64,
    h_acc: f64,
    err_acc: f64,
    n_acc: u64,
    rtol: f64,
    atol: f64,
    fnewt: f64,
    /// Fixed steps: the grid origin and the index of the current grid point.
    grid_t0: f64,
    grid_k: u64,
    /// σ of the tolerance-proportional scaling (module documentation).
    sigma: f64,
    // ---- the shared step loop ([`step_loop::advance`]) ----
    loop_state: LoopState,
    /// a fixed-step run (self.h is the fixed step)
    fixed: bool,
    /// t_stop of the current step
    t_stop: f64,
    /// Newton iterations and error norm of the current trial
    newt: u32,
    err: f64,
    /// failed trials in a row, failed evaluations or factorisations of
    /// the current step
    rejected_in_a_row: u32,
    retries: u32,
}

impl Default for DaeRadau5 {
    fn default() -> Self {
        Self::new()
    }
}

impl DaeRadau5 {
    /// A Radau IIA stepper for implicit DAEs; buffers are sized at
    /// [`Stepper::reset`].
    pub fn new() -> Self {
        let co = RadauCoeffs::new();
        let a = Matrix3::from_fn(|i, j| co.a[i][j]);
        // A is regular (its eigenvalues γ⁻¹, (α ± iβ)⁻¹ are nonzero); the
        // fallback is never taken
        let ai = a.try_inverse().unwrap_or_else(Matrix3::zeros);
        let ainv = std::array::from_fn(|i| std::array::from_fn(|j| ai[(i, j)]));
        let e = Vec::new;
        Self {
            co,
            ainv,
            t: 0.0,
            t_prev: 0.0,
            h: 0.0,
            h_old: 0.0,
            y: e(),
            yp: e(),
            z: [e(), e(), e()],
            w: [e(), e(), e()],
            res: [e(), e(), e()],
            cont: [e(), e(), e(), e()],
            wt: e(),
            ys: e(),
            yps: e(),
            tmp: e(),
            cvec: Vec::new(),
            jac: DMatrix::zeros(0, 0),
            mass: DMatrix::zeros(0, 0),
            e1: DenseLu::new(),
            e2: DenseLu::new(),
            sparse: None,
            lu_h: f64::NAN,
            need_jac: true,
            caljac: false,
            first: true,
            reject: false,
            theta: THET,
            faccon: 1.0,
            h_acc: 0.0,
            err_acc: 1e-2,
            n_acc: 0,
            rtol: 1e-6,
            atol: 1e-6,
            fnewt: 0.03,
            grid_t0: 0.0,
            grid_k: 0,
            sigma: 1.0,
            loop_state: LoopState::default(),
            fixed: false,
            t_stop: 0.0,
            newt: 0,
            err: 0.0,
            rejected_in_a_row: 0,
            retries: 0,
        }
    }

    fn allocate(&mut self, n: usize) {
        let z = || vec![0.0; n];
        self.y = z();
        self.yp = z();
        self.z = [z(), z(), z()];
        self.w = [z(), z(), z()];
        self.res = [z(), z(), z()];
        self.cont = [z(), z(), z(), z()];
        self.wt = z();
        self.ys = z();
        self.yps = z();
        self.tmp = z();
        self.cvec = vec![C64::new(0.0, 0.0); n];
    }

    /// The sparse form of the Jacobians when the problem declares their
    /// pattern (set up once per pattern), the dense storage otherwise.
    fn set_up_matrices(
        &mut self,
        dae: &mut dyn DaeProblem,
        n: usize,
    ) -> Result<(), IntegrateError> {
        self.sparse = SparseIteration::set_up(dae, self.sparse.take(), true, NAME)?;
        let d = if self.sparse.is_some() { 0 } else { n };
        if self.e1.piv.len() != d || self.jac.nrows() != d {
            self.jac = DMatrix::zeros(d, d);
            self.mass = DMatrix::zeros(d, d);
            self.e1.resize(d);
            self.e2.resize(d);
        }
        Ok(())
    }

    /// J = ∂F/∂y and M = ∂F/∂y' at (t_n, y_n, y'_n): the problem's own when
    /// exact, otherwise difference quotients through the residual counter.
    fn jacobians(&mut self, dae: &mut dyn DaeProblem, stats: &mut Stats) -> Result<(), EvalError> {
        stats.n_jac += 1;
        let (t, y, yp) = (self.t, &self.y, &self.yp);
        if let Some(sp) = self.sparse.as_mut() {
            dae.sparse_iteration_matrix(t, y, yp, 0.0, &mut sp.values)?;
            dae.sparse_derivative_jacobian(t, y, yp, &mut sp.derivative)?;
            if sp
                .values
                .iter()
                .chain(&sp.derivative)
                .any(|v| !v.is_finite())
            {
                return Err(EvalError::NonFinite {
                    what: "DAE Jacobians ∂F/∂y, ∂F/∂y'".into(),
                    t,
                });
            }
            return Ok(());
        }
        if dae.has_exact_jacobian() {
            dae.iteration_matrix(t, y, yp, 0.0, &mut self.jac)?;
            dae.derivative_jacobian(t, y, yp, &mut self.mass)?;
        } else {
            let mut c = Counted { inner: dae, n: 0 };
            let r = fd_iteration_matrix(&mut c, t, y, yp, 0.0, &mut self.jac)
                .and_then(|()| fd_iteration_matrix(&mut c, t, y, yp, 1.0, &mut self.mass));
            stats.n_rhs += c.n;
            r?;
            self.mass -= &self.jac;
        }
        if self
            .jac
            .iter()
            .chain(self.mass.iter())
            .any(|v| !v.is_finite())
        {
            return Err(EvalError::NonFinite {
                what: "DAE Jacobians ∂F/∂y, ∂F/∂y'".into(),
                t,
            });
        }
        Ok(())
    }

    /// Factorise E1 = J + (γ/h) M and E2 = J + ((α + iβ)/h) M.
    fn decompose(&mut self, h: f64, stats: &mut Stats) -> Result<(), EvalError> {
        let n = self.y.len();
        let fac1 = self.co.gamma / h;
        let (alphn, betan) = (self.co.alpha / h, self.co.beta / h);
        if let Some(sp) = self.sparse.as_mut() {
            let e2 = sp.complex.as_mut().expect("set up with the complex twin");
            let (a1, a2) = (sp.lu.values_mut(), e2.values_mut());
            a1.fill(0.0);
            a2.fill(C64::new(0.0, 0.0));
            for ((&s, &jv), &mv) in sp.slots.iter().zip(&sp.values).zip(&sp.derivative) {
                a1[s] += jv + fac1 * mv;
                a2[s] += C64::new(jv + alphn * mv, betan * mv);
            }
            stats.n_lu += 1;
            self.lu_h = f64::NAN;
            if !sp.lu.factor() || !e2.factor() {
                return Err(singular(self.t, h));
            }
            self.lu_h = h;
            return Ok(());
        }
        for j in 0..n {
            for i in 0..n {
                let (jv, mv) = (self.jac[(i, j)], self.mass[(i, j)]);
                self.e1.lu[(i, j)] = jv + fac1 * mv;
                self.e2.lu[(i, j)] = C64::new(jv + alphn * mv, betan * mv);
            }
        }
        // counted once per pair, as radau5.f's NDEC
        stats.n_lu += 1;
        self.lu_h = f64::NAN;
        if !self.e1.factor() || !self.e2.factor() {
            return Err(singular(self.t, h));
        }
        self.lu_h = h;
        Ok(())
    }

    /// tmp ← E1⁻¹ tmp.
    fn solve_e1(&mut self) {
        match self.sparse.as_mut() {
            Some(sp) => sp.lu.solve_in_place(&mut self.tmp),
            None => self.e1.solve(&mut self.tmp),
        }
    }

    /// cvec ← E2⁻¹ cvec.
    fn solve_e2(&mut self) {
        match self.sparse.as_mut().and_then(|s| s.complex.as_mut()) {
            Some(e2) => e2.solve_in_place(&mut self.cvec),
            None => self.e2.solve(&mut self.cvec),
        }
    }

    /// Starting stage increments: zero on a first step, otherwise the
    /// previous collocation polynomial extrapolated (radau5.f).
    fn starting_values(&mut self, h: f64) {
        let n = self.y.len();
        let ti = &self.co.ti;
        let ratio = h / self.h_old;
        for m in 0..n {
            let zm: [f64; 3] = if self.first {
                [0.0; 3]
            } else {
                let k = [0.0, self.cont[1][m], self.cont[2][m], self.cont[3][m]];
                std::array::from_fn(|i| collocation_value(&self.co.c, k, self.co.c[i] * ratio))
            };
            for i in 0..3 {
                self.z[i][m] = zm[i];
                self.w[i][m] = ti[i][0] * zm[0] + ti[i][1] * zm[1] + ti[i][2] * zm[2];
            }
        }
    }

    /// Y'_i = (1/h) Σ_j (A⁻¹)_ij Z_j into `yps`.
    fn stage_derivative(&mut self, i: usize, h: f64) {
        let a = &self.ainv[i];
        for m in 0..self.y.len() {
            self.yps[m] = (a[0] * self.z[0][m] + a[1] * self.z[1][m] + a[2] * self.z[2][m]) / h;
        }
    }

    /// Simplified Newton iteration for the stage increments (radau5.f, loop 40).
    fn newton(
        &mut self,
        dae: &mut dyn DaeProblem,
        h: f64,
        nit: u32,
        stats: &mut Stats,
    ) -> Result<NewtonEnd, IntegrateError> {
        let n = self.y.len();
        self.faccon = self.faccon.max(f64::EPSILON).powf(0.8);
        self.theta = THET;
        let fixed = nit == NIT_FIXED;
        let (mut dynold, mut thqold, mut dyn1) = (0.0f64, 0.0f64, 0.0f64);
        let mut newt = 0u32;
        loop {
            if newt >= nit {
                stats.n_newton_fail += 1;
                return Ok(NewtonEnd::Failed(0.5));
            }
            for i in 0..3 {
                for m in 0..n {
                    self.ys[m] = self.y[m] + self.z[i][m];
                }
                self.stage_derivative(i, h);
                let ti = self.t + self.co.c[i] * h;
                counted_residual(dae, ti, &self.ys, &self.yps, &mut self.res[i], stats)?;
            }
            stats.n_newton_iter += 1;
            let tinv = &self.co.ti;
            for m in 0..n {
                let g = [self.res[0][m], self.res[1][m], self.res[2][m]];
                let tg: [f64; 3] = std::array::from_fn(|k| {
                    tinv[k][0] * g[0] + tinv[k][1] * g[1] + tinv[k][2] * g[2]
                });
                self.tmp[m] = -tg[0];
                self.cvec[m] = C64::new(-tg[1], -tg[2]);
            }
            // counted once per pair, as radau5.f's NSOL
            stats.n_solve += 1;
            self.solve_e1();
            self.solve_e2();
            newt += 1;
            let mut s = 0.0;
            for m in 0..n {
                let wm = self.wt[m];
                let c = self.cvec[m];
                s += (self.tmp[m] * wm).powi(2) + (c.re * wm).powi(2) + (c.im * wm).powi(2);
            }
            let dyno = (s / (3 * n.max(1)) as f64).sqrt();
            if !dyno.is_finite() {
                stats.n_newton_fail += 1;
                return Ok(NewtonEnd::Failed(0.5));
            }
            if newt > 1 && newt < nit {
                let thq = dyno / dynold;
                self.theta = if newt == 2 {
                    thq
                } else {
                    (thq * thqold).sqrt()
                };
                thqold = thq;
                match newton_verdict(self.theta, dyno, newt, nit, self.fnewt) {
                    Ok(faccon) => self.faccon = faccon,
                    // at fixed steps h cannot be reduced: go on while the
                    // iteration does not blow up (an apparent rate ≥ 1 after
                    // a large first correction of the index-1 components is
                    // the index-2 components catching up, not divergence)
                    Err(_) if fixed && dyno < GROWTH_LIMIT * dyn1 => {
                        // no rate to trust: converged only when tiny
                        self.faccon = GROWTH_LIMIT;
                    }
                    Err(hhfac) => {
                        stats.n_newton_fail += 1;
                        return Ok(NewtonEnd::Failed(hhfac));
                    }
                }
            }
            if newt == 1 {
                dyn1 = dyno;
            }
            dynold = dyno.max(f64::EPSILON);
            let t = &self.co.t;
            for m in 0..n {
                self.w[0][m] += self.tmp[m];
                self.w[1][m] += self.cvec[m].re;
                self.w[2][m] += self.cvec[m].im;
                let wm = [self.w[0][m], self.w[1][m], self.w[2][m]];
                for i in 0..3 {
                    self.z[i][m] = t[i][0] * wm[0] + t[i][1] * wm[1] + t[i][2] * wm[2];
                }
            }
            if self.faccon * dyno <= self.fnewt {
                return Ok(NewtonEnd::Converged(newt));
            }
        }
    }

    /// −E1⁻¹ F(t_n, y_n + shift, −(1/h) Σ d_i Z_i) into `tmp` (with `yps`
    /// holding the derivative argument); returns its weighted norm.
    fn estimate_from(
        &mut self,
        dae: &mut dyn DaeProblem,
        shifted: bool,
        stats: &mut Stats,
    ) -> Result<f64, IntegrateError> {
        for m in 0..self.y.len() {
            self.ys[m] = self.y[m] + if shifted { self.tmp[m] } else { 0.0 };
        }
        counted_residual(dae, self.t, &self.ys, &self.yps, &mut self.tmp, stats)?;
        self.tmp.iter_mut().for_each(|v| *v = -*v);
        stats.n_solve += 1;
        self.solve_e1();
        Ok(weighted_norm(&self.tmp, &self.wt))
    }

    /// Error estimate (radau5.f, ESTRAD, in residual form: module
    /// documentation); returns the weighted norm.
    fn error_estimate(
        &mut self,
        dae: &mut dyn DaeProblem,
        h: f64,
        stats: &mut Stats,
    ) -> Result<f64, IntegrateError> {
        let dd = self.co.dd;
        for m in 0..self.y.len() {
            let d = dd[0] * self.z[0][m] + dd[1] * self.z[1][m] + dd[2] * self.z[2][m];
            self.yps[m] = -d / h;
        }
        let err = self.estimate_from(dae, false, stats)?;
        if err >= 1.0 && (self.first || self.reject) {
            return self.estimate_from(dae, true, stats);
        }
        Ok(err)
    }

    /// Make the attempted step the current point: y, y' = Y'_3, the dense
    /// output, and the problem's post-step hook.
    fn accept(
        &mut self,
        dae: &mut dyn DaeProblem,
        h: f64,
        t_new: f64,
    ) -> Result<(), IntegrateError> {
        self.stage_derivative(2, h);
        self.t_prev = self.t;
        self.h_old = h;
        self.t = t_new;
        for m in 0..self.y.len() {
            self.y[m] += self.z[2][m];
            self.yp[m] = self.yps[m];
            let z = [self.z[0][m], self.z[1][m], self.z[2][m]];
            let k = collocation_coefficients(&self.co.c, self.y[m], z);
            for (c, kj) in self.cont.iter_mut().zip(k) {
                c[m] = kj;
            }
        }
        if self.y.iter().any(|v| !v.is_finite()) {
            return Err(EvalError::NonFinite {
                what: "radau5 step".into(),
                t: t_new,
            }
            .into());
        }
        self.first = false;
        if dae.after_step(self.t, &mut self.y)? {
            self.cont[0].copy_from_slice(&self.y);
        }
        Ok(())
    }
}

impl StepAttempt for DaeRadau5 {
    fn sums_accepted_error(&self) -> bool {
        true
    }
    fn current_t(&self) -> f64 {
        self.t
    }

    /// Adaptive: the controller's h. Fixed: the step to the next grid
    /// point t0 + (k + 1) h.
    fn proposed_h(&self) -> f64 {
        if self.fixed {
            step_loop::fixed_grid_step(self.grid_t0, self.grid_k, self.h, self.t)
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

    /// Index-scaled weights, the iteration matrices when asked for, the
    /// factorisations when h changed, the simplified Newton iteration and
    /// the error estimate. A singular matrix or a failed evaluation
    /// halves h (10 times per step at most), a Newton failure shrinks it
    /// by radau5.f's factor (30 failures in a row at most); at fixed steps
    /// a Newton failure with an old Jacobian repeats the step with a new
    /// one.
    fn attempt(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<Trial, IntegrateError> {
        let dae = p.as_dae().ok_or_else(not_a_dae)?;
        let adaptive = !self.fixed;
        let nit = if adaptive { NIT } else { NIT_FIXED };
        dae_weights(&*dae, &self.y, self.rtol, self.atol, h, false, &mut self.wt);
        // the tolerance-proportional scaling (module documentation)
        for w in self.wt.iter_mut() {
            *w /= self.sigma;
        }
        if self.need_jac {
            self.jacobians(dae, ctx.stats)?;
            self.need_jac = false;
            self.caljac = true;
            self.lu_h = f64::NAN;
        }
        if self.lu_h != h {
            if let Err(e) = self.decompose(h, ctx.stats) {
                self.retries += 1;
                if !adaptive || self.retries > MAX_EVAL_RETRIES {
                    return Err(e.into());
                }
                self.reject = true;
                return Ok(Trial::Failed { factor: 0.5 });
            }
        }
        self.starting_values(h);
        // a failed evaluation at a diverging iterate counts as a Newton failure
        let outcome = match self.newton(dae, h, nit, ctx.stats) {
            Err(IntegrateError::Eval { .. }) if adaptive && self.retries < MAX_EVAL_RETRIES => {
                self.retries += 1;
                ctx.stats.n_newton_fail += 1;
                NewtonEnd::Failed(0.5)
            }
            other => other?,
        };
        match outcome {
            NewtonEnd::Converged(k) => self.newt = k,
            NewtonEnd::Failed(hhfac) => {
                if !adaptive {
                    if self.caljac {
                        return Err(IntegrateError::NewtonFailed {
                            t: self.t,
                            h,
                            iters: nit,
                        });
                    }
                    self.need_jac = true;
                    return Ok(Trial::Repeat);
                }
                self.rejected_in_a_row += 1;
                if self.rejected_in_a_row > 30 {
                    return Err(IntegrateError::NewtonFailed {
                        t: self.t,
                        h,
                        iters: nit,
                    });
                }
                self.reject = true;
                if !self.caljac {
                    self.need_jac = true;
                }
                return Ok(Trial::Failed { factor: hhfac });
            }
        }
        if !adaptive {
            return Ok(Trial::Unchecked);
        }
        self.err = self.error_estimate(dae, h, ctx.stats)?;
        Ok(Trial::Estimated(self.err))
    }

    /// radau5.f accepts err < 1.
    fn passes(&self, err: f64, _h: f64) -> bool {
        err < 1.0
    }

    /// radau5.f's step size: Gustafsson's predictive controller after an
    /// accepted step, h kept when the change is within [QUOT1, QUOT2] and
    /// the Jacobian is good, no growth after a rejection; after a
    /// rejected first step h/10.
    fn factor(&mut self, err: f64, h: f64, accepted: bool) -> f64 {
        let prev = (accepted && self.n_acc > 0).then_some((self.h_acc, self.err_acc));
        let hnew = proposed_step(err, h, self.newt, prev);
        if !accepted {
            return if self.first { 0.1 } else { hnew / h };
        }
        self.n_acc += 1;
        self.h_acc = h;
        self.err_acc = err.max(1e-2);
        let mut hnew = hnew;
        if self.reject {
            hnew = hnew.min(h);
        }
        let qt = hnew / h;
        if self.theta <= THET && (QUOT1..=QUOT2).contains(&qt) {
            1.0
        } else {
            qt
        }
    }

    fn rejected(
        &mut self,
        _p: &mut dyn OdeProblem,
        _h: f64,
        _ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.rejected_in_a_row += 1;
        self.reject = true;
        if !self.caljac {
            self.need_jac = true;
        }
        Ok(())
    }

    /// The step becomes the current point, ending exactly on t_stop when
    /// trimmed to it, on the grid at fixed steps (a step cut short to
    /// t_stop restarts the grid there).
    fn commit(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let dae = p.as_dae().ok_or_else(not_a_dae)?;
        let trimmed = h == self.t_stop - self.t;
        let t_new = if trimmed {
            self.t_stop
        } else if self.fixed {
            self.grid_t0 + (self.grid_k + 1) as f64 * self.h
        } else {
            self.t + h
        };
        self.accept(dae, h, t_new)?;
        if self.fixed {
            self.grid_k += 1;
            if trimmed {
                (self.grid_t0, self.grid_k) = (t_new, 0);
            }
        } else {
            ctx.stats.accumulated_error += self.err * self.sigma;
        }
        self.caljac = false;
        self.reject = false;
        self.need_jac = self.theta > THET;
        Ok(())
    }

    /// Start again at the current point (consistent derivative, fresh
    /// Jacobians, a first step chosen anew); the loop's state is kept.
    fn restart_here(
        &mut self,
        p: &mut dyn OdeProblem,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let loop_state = self.loop_state;
        let (t, y) = (self.t, self.y.clone());
        self.h = 0.0;
        Stepper::reset(self, p, t, &y, ctx)?;
        self.loop_state = loop_state;
        // not below the resolution at t (the crossing step had that size)
        self.h = self.h.max(resolution_floor(t));
        Ok(())
    }
}

impl Stepper for DaeRadau5 {
    fn name(&self) -> &'static str {
        NAME
    }

    fn reset(
        &mut self,
        p: &mut dyn OdeProblem,
        t0: f64,
        y0: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let n = y0.len();
        let nd = p.as_dae().ok_or_else(not_a_dae)?.dim();
        if nd != n {
            return Err(IntegrateError::Unsupported {
                method: NAME.into(),
                detail: format!("the state has {n} components, the DAE {nd}"),
            });
        }
        if self.y.len() != n {
            self.allocate(n);
        }
        self.set_up_matrices(p.as_dae().ok_or_else(not_a_dae)?, n)?;
        let opts = ctx.opts;
        if !(opts.rtol > 0.0) || !(opts.atol >= 0.0) {
            return Err(IntegrateError::BadMethod(format!(
                "{NAME}: tolerances must be positive (rtol = {}, atol = {})",
                opts.rtol, opts.atol
            )));
        }
        (self.rtol, self.atol, self.fnewt) = transformed_tolerances(opts.rtol, opts.atol);
        self.y.copy_from_slice(y0);
        self.t = t0;
        self.t_prev = t0;
        self.h_old = 0.0;
        self.grid_t0 = t0;
        self.grid_k = 0;
        self.loop_state = LoopState::default();
        self.fixed = opts.fixed_step.is_some();
        for c in self.cont.iter_mut() {
            c.fill(0.0);
        }
        self.cont[0].copy_from_slice(y0);
        self.need_jac = true;
        self.caljac = false;
        self.first = true;
        self.reject = false;
        self.faccon = 1.0;
        self.theta = THET;
        self.n_acc = 0;
        self.err_acc = 1e-2;
        self.lu_h = f64::NAN;
        // y'(t0): the problem's rhs as a guess, made consistent by the DAE
        if p.rhs(t0, y0, &mut self.yp).is_err() || self.yp.iter().any(|v| !v.is_finite()) {
            self.yp.fill(0.0);
        }
        let dae = p.as_dae().ok_or_else(not_a_dae)?;
        dae.consistent_derivative(t0, y0, &mut self.yp)?;
        // differential components of index 2 or 3 (velocities of the
        // index-3 form): the tolerance-proportional scaling
        let high = dae
            .variable_index()
            .iter()
            .zip(dae.is_differential())
            .any(|(&k, &d)| d && k >= 2);
        self.sigma = if high && opts.fixed_step.is_none() {
            proportional_scale(opts.rtol, 5)
        } else {
            1.0
        };
        if let Some(h) = opts.fixed_step {
            if !(h > 0.0 && h.is_finite()) {
                return Err(IntegrateError::BadMethod(format!(
                    "{NAME}: fixed step size must be positive, got {h}"
                )));
            }
            self.h = h;
        } else if self.h == 0.0 {
            self.h = match opts.h0 {
                Some(h0) => h0,
                // radau5.f's default first step when the estimate fails
                None => initial_step(
                    p, t0, y0, &self.yp, 3, opts.rtol, opts.atol, opts.h_max, 1.0,
                )
                .unwrap_or(1e-6),
            };
        }
        Ok(())
    }

    /// One accepted step by the shared loop ([`step_loop::advance`]).
    fn step(
        &mut self,
        p: &mut dyn OdeProblem,
        t_stop: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        p.as_dae().ok_or_else(not_a_dae)?;
        self.t_stop = t_stop;
        self.rejected_in_a_row = 0;
        self.retries = 0;
        step_loop::advance(self, p, t_stop, ctx)
    }

    fn t(&self) -> f64 {
        self.t
    }

    fn y(&self) -> &[f64] {
        &self.y
    }

    fn t_prev(&self) -> f64 {
        self.t_prev
    }

    /// The collocation polynomial of the last step (radau5.f, CONTR5).
    fn interpolate(&self, t: f64, out: &mut [f64]) {
        let h = self.t - self.t_prev;
        if h == 0.0 {
            out.copy_from_slice(&self.y);
            return;
        }
        let s = (t - self.t) / h;
        for (m, o) in out.iter_mut().enumerate() {
            let k = [
                self.cont[0][m],
                self.cont[1][m],
                self.cont[2][m],
                self.cont[3][m],
            ];
            *o = collocation_value(&self.co.c, k, s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// T Λ T⁻¹ = A⁻¹ with Λ = diag(γ, [[α, −β], [β, α]]): the transformation
    /// the Newton systems rely on.
    #[test]
    fn transformation_diagonalises_a_inverse() {
        let r = DaeRadau5::new();
        let co = &r.co;
        let t = Matrix3::from_fn(|i, j| co.t[i][j]);
        let ti = Matrix3::from_fn(|i, j| co.ti[i][j]);
        let lam = Matrix3::new(
            co.gamma, 0.0, 0.0, 0.0, co.alpha, -co.beta, 0.0, co.beta, co.alpha,
        );
        let ainv = Matrix3::from_fn(|i, j| r.ainv[i][j]);
        assert!((t * lam * ti - ainv).abs().max() < 1e-12);
    }

    /// The in-place LU solves real and complex systems like nalgebra's.
    #[test]
    fn dense_lu_solves() {
        let a = DMatrix::from_fn(4, 4, |i, j| {
            C64::new(
                ((i * 7 + j * 3) % 5) as f64 - 1.5,
                (i as f64) - (j as f64) * 0.5,
            )
        });
        let b: Vec<C64> = (0..4).map(|i| C64::new(i as f64, 1.0)).collect();
        let mut lu = DenseLu::<C64>::new();
        lu.resize(4);
        lu.lu.copy_from(&a);
        assert!(lu.factor());
        let mut x = b.clone();
        lu.solve(&mut x);
        let xv = nalgebra::DVector::from_vec(x);
        let r = &a * &xv - nalgebra::DVector::from_vec(b);
        assert!(r.iter().all(|v| v.norm() < 1e-12), "{r}");
        let mut s = DenseLu::<f64>::new();
        s.resize(2);
        s.lu.copy_from(&DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 4.0]));
        assert!(!s.factor(), "a singular matrix is reported");
    }
}
