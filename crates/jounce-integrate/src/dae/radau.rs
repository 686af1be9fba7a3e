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
//! rtol' = 0.1 rtol^(2/3), atol' = rtol' · atol/rtol. Unlike radau5.f, the
//! algebraic components of index 3 (the multipliers of the index-3 form)
//! are weighted normwise, by atol' + rtol'·‖λ‖∞
//! ([`crate::dae::normwise_multiplier_weights`]): with componentwise
//! weights a nearly zero multiplier asked for a resolution below the
//! round-off of the solve, and the Newton iteration stalled at every step
//! size on pendulum chains from 500 links (now 1000 links complete at
//! rtol 1e-6, atol 1e-9, 2e-9 m from dop853 at rtol 1e-10).
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
//! test and the steps end on t0 + k h.
//! **Dense output**: the collocation polynomial (radau5.f, CONTR5).
//!
//! **One core.** The coefficients, the Newton iteration on the transformed
//! system, the error estimate's filtering, the step control, the reuse of
//! Jacobians and factorisations, the dense output and the stepper's state
//! are the ODE's ([`crate::implicit::radau_core`]); this file supplies the
//! DAE form ([`DaeRadau`]: residuals, J and M and their factorisations,
//! the index-scaled weights, the residual form of the estimate).
//!
//! Work counters: every residual is one `n_rhs` (including the difference
//! quotients of an inexact iteration matrix), one J and M pair one
//! `n_jac`, one real and complex factorisation pair one `n_lu` (radau5.f's
//! NDEC), one pair of solves one `n_solve`. The weighted error estimates of
//! the accepted steps (1 = at the transformed tolerance, before σ) are
//! summed in `accumulated_error`. Stepping allocates nothing (the factorisations are
//! in place), except the difference quotients of problems without an
//! exact iteration matrix ([`fd_iteration_matrix`]).

use nalgebra::{ComplexField, DMatrix, Matrix3};

use crate::controller::proportional_scale;
use crate::dae::dense_lu::DenseLu;
use crate::dae::sparse_iteration::SparseIteration;
use crate::dae::{
    counted_residual, dae_weights, fd_iteration_matrix, normwise_multiplier_weights, DaeProblem,
};
use crate::error::{EvalError, IntegrateError};
use crate::implicit::radau_core::{Eval, Radau, RadauCore, RadauForm, Res, C64};
use crate::problem::OdeProblem;
use crate::stats::Stats;

const NAME: &str = "radau5";

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

/// A singular E1 or E2 at t with step h.
fn singular(t: f64, h: f64) -> EvalError {
    EvalError::Singular {
        what: "radau5 iteration matrix ∂F/∂y + (γ/h) ∂F/∂y' (or its complex twin)".into(),
        t,
        detail: format!("h = {h:e}"),
    }
}

/// Radau IIA (order 5) on F(t, y, y') = 0 (module documentation).
pub type DaeRadau5 = Radau<DaeRadau>;

/// The DAE form of Radau IIA (module documentation): J = ∂F/∂y and
/// M = ∂F/∂y', dense or in the problem's pattern, their factorisations,
/// and the residual scratch.
pub struct DaeRadau {
    /// A⁻¹ (stage derivatives from stage increments).
    pub(crate) ainv: [[f64; 3]; 3],
    /// y'(t): consistent at the start, the collocation derivative Y'_3 after a step.
    yp: Vec<f64>,
    res: [Vec<f64>; 3],
    ys: Vec<f64>,
    yps: Vec<f64>,
    jac: DMatrix<f64>,
    mass: DMatrix<f64>,
    e1: DenseLu<f64>,
    e2: DenseLu<C64>,
    /// J and M in the pattern the problem declares
    /// ([`DaeProblem::sparsity`]), E1 factored in its `lu`, E2 in its
    /// `complex`; `jac`, `mass`, `e1`, `e2` are 0 × 0 then.
    sparse: Option<SparseIteration>,
}

impl Default for DaeRadau {
    fn default() -> Self {
        let co = crate::implicit::radau5::RadauCoeffs::new();
        let a = Matrix3::from_fn(|i, j| co.a[i][j]);
        // A is regular (its eigenvalues γ⁻¹, (α ± iβ)⁻¹ are nonzero); the
        // fallback is never taken
        let ai = a.try_inverse().unwrap_or_else(Matrix3::zeros);
        let ainv = std::array::from_fn(|i| std::array::from_fn(|j| ai[(i, j)]));
        let e = Vec::new;
        Self {
            ainv,
            yp: e(),
            res: [e(), e(), e()],
            ys: e(),
            yps: e(),
            jac: DMatrix::zeros(0, 0),
            mass: DMatrix::zeros(0, 0),
            e1: DenseLu::new(),
            e2: DenseLu::new(),
            sparse: None,
        }
    }
}

impl DaeRadau {
    fn allocate(&mut self, n: usize) {
        let z = || vec![0.0; n];
        self.yp = z();
        self.res = [z(), z(), z()];
        self.ys = z();
        self.yps = z();
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
    fn jacobians(
        &mut self,
        dae: &mut dyn DaeProblem,
        t: f64,
        y: &[f64],
        stats: &mut Stats,
    ) -> Result<(), EvalError> {
        stats.n_jac += 1;
        let yp = &self.yp;
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

    /// v ← E1⁻¹ v.
    fn solve_e1(&mut self, v: &mut [f64]) {
        match self.sparse.as_mut() {
            Some(sp) => sp.lu.solve_in_place(v),
            None => self.e1.solve(v),
        }
    }

    /// v ← E2⁻¹ v.
    fn solve_e2(&mut self, v: &mut [C64]) {
        match self.sparse.as_mut().and_then(|s| s.complex.as_mut()) {
            Some(e2) => e2.solve_in_place(v),
            None => self.e2.solve(v),
        }
    }

    /// Y'_i = (1/h) Σ_j (A⁻¹)_ij Z_j into `yps`.
    fn stage_derivative(&mut self, core: &RadauCore, i: usize, h: f64) {
        let a = &self.ainv[i];
        for m in 0..core.y.len() {
            self.yps[m] = (a[0] * core.z[0][m] + a[1] * core.z[1][m] + a[2] * core.z[2][m]) / h;
        }
    }
}

impl DaeRadau {
    /// −E1⁻¹ F(t_n, y_n (+ the previous estimate in `core.tmp` when
    /// `shifted`), `yps`) into `core.tmp`; returns its weighted norm.
    fn estimate_at(&mut self, core: &mut RadauCore, e: &mut Eval, shifted: bool) -> Res<f64> {
        let dae = e.p.as_dae().ok_or_else(not_a_dae)?;
        for m in 0..core.y.len() {
            self.ys[m] = core.y[m] + if shifted { core.tmp[m] } else { 0.0 };
        }
        let stats = &mut *e.ctx.stats;
        counted_residual(dae, core.t, &self.ys, &self.yps, &mut core.tmp, stats)?;
        core.tmp.iter_mut().for_each(|v| *v = -*v);
        stats.n_solve += 1;
        self.solve_e1(&mut core.tmp);
        Ok(core.error_norm::<DaeRadau>(&core.tmp))
    }
}

impl RadauForm for DaeRadau {
    const EXACT_STOPS: bool = true;
    const TOLERATE_GROWTH_AT_FIXED_STEPS: bool = true;
    const ESTIMATE_AT_BREAKPOINTS: bool = false;
    const RESTART_BY_RESET: bool = true;

    fn weigh(v: f64, w: f64) -> f64 {
        v * w
    }

    fn check_problem(p: &mut dyn OdeProblem) -> Result<(), IntegrateError> {
        p.as_dae().ok_or_else(not_a_dae)?;
        Ok(())
    }

    fn prepare(&mut self, p: &mut dyn OdeProblem, n: usize) -> Result<(), IntegrateError> {
        let dae = p.as_dae().ok_or_else(not_a_dae)?;
        let nd = dae.dim();
        if nd != n {
            return Err(IntegrateError::Unsupported {
                method: NAME.into(),
                detail: format!("the state has {n} components, the DAE {nd}"),
            });
        }
        if self.yp.len() != n {
            self.allocate(n);
        }
        self.set_up_matrices(dae, n)
    }

    /// y'(t0): the problem's rhs as a guess, made consistent by the DAE;
    /// σ of the tolerance-proportional scaling (module documentation).
    fn start(&mut self, core: &mut RadauCore, e: &mut Eval) -> Res<()> {
        let (t0, y0, p, opts) = (core.t, &core.y, &mut *e.p, e.ctx.opts);
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
        core.sigma = if high && opts.fixed_step.is_none() {
            proportional_scale(opts.rtol, 5)
        } else {
            1.0
        };
        Ok(())
    }

    fn derivative(&self) -> &[f64] {
        &self.yp
    }

    /// radau5.f's default first step when the estimate fails.
    fn first_step_failed(_e: EvalError) -> Result<f64, IntegrateError> {
        Ok(1e-6)
    }

    /// The index-scaled weights, divided by σ (module documentation).
    fn weights(&mut self, core: &mut RadauCore, e: &mut Eval) -> Res<()> {
        let dae = e.p.as_dae().ok_or_else(not_a_dae)?;
        dae_weights(
            &*dae,
            &core.y,
            core.rtol,
            core.atol,
            e.h,
            false,
            &mut core.wt,
        );
        normwise_multiplier_weights(&*dae, &core.y, core.rtol, core.atol, e.h, &mut core.wt);
        for w in core.wt.iter_mut() {
            *w /= core.sigma;
        }
        Ok(())
    }

    fn jacobian(&mut self, core: &RadauCore, e: &mut Eval) -> Res<()> {
        let dae = e.p.as_dae().ok_or_else(not_a_dae)?;
        self.jacobians(dae, core.t, &core.y, e.ctx.stats)?;
        Ok(())
    }

    /// E1 = J + (γ/h) M and E2 = J + ((α + iβ)/h) M, dense or sparse.
    fn decompose(&mut self, core: &RadauCore, h: f64, stats: &mut Stats) -> Result<(), EvalError> {
        let n = core.y.len();
        let fac1 = core.co.gamma / h;
        let (alphn, betan) = (core.co.alpha / h, core.co.beta / h);
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
            if !sp.lu.factor() || !e2.factor() {
                return Err(singular(core.t, h));
            }
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
        if !self.e1.factor() || !self.e2.factor() {
            return Err(singular(core.t, h));
        }
        Ok(())
    }

    /// G_i = F(t_n + c_i h, y_n + Z_i, Y'_i), then −T⁻¹G.
    fn newton_rhs(&mut self, core: &mut RadauCore, e: &mut Eval) -> Res<()> {
        let (n, h, stats) = (core.y.len(), e.h, &mut *e.ctx.stats);
        let dae = e.p.as_dae().ok_or_else(not_a_dae)?;
        for i in 0..3 {
            for m in 0..n {
                self.ys[m] = core.y[m] + core.z[i][m];
            }
            self.stage_derivative(core, i, h);
            let ti = core.t + core.co.c[i] * h;
            counted_residual(dae, ti, &self.ys, &self.yps, &mut self.res[i], stats)?;
        }
        let tinv = &core.co.ti;
        for m in 0..n {
            let g = [self.res[0][m], self.res[1][m], self.res[2][m]];
            let tg: [f64; 3] =
                std::array::from_fn(|k| tinv[k][0] * g[0] + tinv[k][1] * g[1] + tinv[k][2] * g[2]);
            core.tmp[m] = -tg[0];
            core.cvec[m] = C64::new(-tg[1], -tg[2]);
        }
        Ok(())
    }

    fn solve_pair(&mut self, core: &mut RadauCore, stats: &mut Stats) {
        // counted once per pair, as radau5.f's NSOL
        stats.n_solve += 1;
        self.solve_e1(&mut core.tmp);
        self.solve_e2(&mut core.cvec);
    }

    /// −E1⁻¹ F(t_n, y_n, −(1/h) Σ d_i Z_i) (module documentation).
    fn estimate(&mut self, core: &mut RadauCore, e: &mut Eval) -> Res<f64> {
        let dd = core.co.dd;
        for m in 0..core.y.len() {
            let d = dd[0] * core.z[0][m] + dd[1] * core.z[1][m] + dd[2] * core.z[2][m];
            self.yps[m] = -d / e.h;
        }
        self.estimate_at(core, e, false)
    }

    /// −E1⁻¹ F(t_n, y_n + err, −(1/h) Σ d_i Z_i).
    fn filtered_estimate(&mut self, core: &mut RadauCore, e: &mut Eval) -> Res<f64> {
        self.estimate_at(core, e, true)
    }

    /// y' = Y'_3, a finite step, and the problem's post-step hook.
    fn accepted(&mut self, core: &mut RadauCore, e: &mut Eval) -> Res<()> {
        self.stage_derivative(core, 2, e.h);
        self.yp.copy_from_slice(&self.yps);
        if core.y.iter().any(|v| !v.is_finite()) {
            return Err(EvalError::NonFinite {
                what: "radau5 step".into(),
                t: core.t,
            }
            .into());
        }
        let dae = e.p.as_dae().ok_or_else(not_a_dae)?;
        if dae.after_step(core.t, &mut core.y)? {
            core.cont[0].copy_from_slice(&core.y);
        }
        Ok(())
    }

    fn retry_singular(core: &RadauCore) -> bool {
        core.retries <= MAX_EVAL_RETRIES
    }

    fn retry_failed_evaluation(core: &mut RadauCore, stats: &mut Stats) -> bool {
        if core.retries >= MAX_EVAL_RETRIES {
            return false;
        }
        core.retries += 1;
        stats.n_newton_fail += 1;
        true
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
        let co = &r.core.co;
        let t = Matrix3::from_fn(|i, j| co.t[i][j]);
        let ti = Matrix3::from_fn(|i, j| co.ti[i][j]);
        let lam = Matrix3::new(
            co.gamma, 0.0, 0.0, 0.0, co.alpha, -co.beta, 0.0, co.beta, co.alpha,
        );
        let ainv = Matrix3::from_fn(|i, j| r.form.ainv[i][j]);
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
