//! The one SDIRK/ESDIRK driver: any [`DirkTableau`], fixed step or
//! embedded error control, modified Newton per stage, Hermite dense output.
//!
//! Stage i solves G(Y) = Y − B_i − hγ f(t_n + c_i h, Y) = 0 with
//! B_i = y_n + h Σ_{j<i} a_ij k_j by modified Newton with the iteration
//! matrix I − hγJ, factorised once ([`CachedLu`]) and reused across stages
//! and steps until hγ changes or Newton fails (Hairer–Wanner II, IV.8).
//! Then k_i = (Y_i − B_i)/(hγ), which equals f(t_i, Y_i) at convergence
//! without a further evaluation (HW II, IV.8, "Implementation of implicit Runge-Kutta methods").
//!
//! The local error estimate of an embedded pair, e = h Σ (b_i − b̂_i) k_i,
//! is filtered as (I − hγJ)⁻¹ e so that it stays bounded for stiff
//! components (Hosea & Shampine 1996, Section 3; the filter of radau5.f, HW II, IV.8, "Error estimation").
//! At a fixed step size, where h cannot be reduced, a stage whose modified
//! Newton iteration fails even with the Jacobian just evaluated at the
//! step's start is solved once more by full Newton, with the Jacobian
//! re-evaluated at every iterate (from the stage's predictor): in a step
//! across which J changes much (a four-bar linkage whose crank
//! acceleration falls from 130 to 0 rad/s² in 0.4 rad), the Jacobian at
//! y_n no longer contracts at the later stages. The structural driver
//! does the same.
//!
//! A tableau without an embedded pair is made adaptive by step doubling:
//! one step of h and two of h/2, e = (y_{h/2,h/2} − y_h)/(2^p − 1), the
//! two half steps being propagated (Richardson's estimate, HNW I, II.4,
//! "Richardson extrapolation") without extrapolation, so that the method keeps its
//! stability and conservation properties.

use nalgebra::DMatrix;

use crate::controller::StepController;
use crate::error::IntegrateError;
use crate::implicit::dirk_tableau::{DirkKind, DirkTableau};
use crate::newton::{newton_solve, CachedLu, NewtonOutcome, NewtonSettings};
use crate::norm::wrms_norm;
use crate::one_step::OneStepState;
use crate::problem::OdeProblem;
use crate::step_loop::{self, LoopState, StepAttempt, Trial};
use crate::stepper::{StepContext, Stepper};

/// Outcome of one attempted step.
enum Attempt {
    Done,
    NewtonFailed { iters: u32 },
}

/// SDIRK/ESDIRK stepper over a tableau.
pub struct Dirk {
    tab: DirkTableau,
    /// The between-steps state ([`OneStepState`]).
    st: OneStepState,
    k: Vec<Vec<f64>>,
    base: Vec<f64>,
    stage: Vec<f64>,
    g: Vec<f64>,
    ynew: Vec<f64>,
    err: Vec<f64>,
    w: Vec<f64>,
    /// step doubling: the single-step solution and the saved start point
    y_full: Vec<f64>,
    y_save: Vec<f64>,
    f_save: Vec<f64>,
    jac: DMatrix<f64>,
    /// Full Newton of a stage: its predictor and the Jacobian at an iterate.
    pred: Vec<f64>,
    stage_jac: DMatrix<f64>,
    iter_mat: DMatrix<f64>,
    lu: CachedLu,
    /// hγ of the current factorisation (NaN: none).
    lu_hg: f64,
    /// The Jacobian was evaluated at the current (t, y).
    jac_fresh: bool,
    /// A Jacobian is available at all.
    jac_valid: bool,
    /// Largest Newton contraction rate seen in the last step.
    max_rate: f64,
    /// rejections (error test and Newton) since the last accepted step
    rejected_in_a_row: u32,
}

impl Dirk {
    /// A stepper for the tableau.
    pub fn new(tab: DirkTableau) -> Self {
        Self {
            tab,
            k: Vec::new(),
            base: Vec::new(),
            stage: Vec::new(),
            g: Vec::new(),
            ynew: Vec::new(),
            err: Vec::new(),
            w: Vec::new(),
            y_full: Vec::new(),
            y_save: Vec::new(),
            f_save: Vec::new(),
            jac: DMatrix::zeros(0, 0),
            pred: Vec::new(),
            stage_jac: DMatrix::zeros(0, 0),
            iter_mat: DMatrix::zeros(0, 0),
            lu: CachedLu::new(),
            lu_hg: f64::NAN,
            jac_fresh: false,
            jac_valid: false,
            max_rate: 0.0,
            st: OneStepState::new(StepController::default()),
            rejected_in_a_row: 0,
        }
    }

    /// The tableau.
    pub fn tableau(&self) -> &DirkTableau {
        &self.tab
    }

    /// The order q of the controlled error: the lower order of an embedded
    /// pair, or the method's order under step doubling.
    fn error_order(&self) -> u32 {
        match self.tab.embedded_order {
            Some(e) if self.tab.b_hat.is_some() => self.tab.order.min(e),
            _ => self.tab.order,
        }
    }

    fn refresh_jacobian(&mut self, p: &mut dyn OdeProblem) -> Result<(), IntegrateError> {
        p.jacobian(self.st.t, &self.st.y, &mut self.jac)?;
        self.jac_fresh = true;
        self.jac_valid = true;
        self.lu_hg = f64::NAN;
        Ok(())
    }

    /// Factorise I − hγJ unless the current factors already have this hγ.
    fn ensure_lu(&mut self, hg: f64, ctx: &mut StepContext) -> Result<(), IntegrateError> {
        if self.lu_hg == hg && self.lu.is_factored() {
            return Ok(());
        }
        let n = self.st.y.len();
        for i in 0..n {
            for j in 0..n {
                self.iter_mat[(i, j)] = -hg * self.jac[(i, j)];
            }
            self.iter_mat[(i, i)] += 1.0;
        }
        self.lu.factor(&self.iter_mat, self.st.t, ctx.stats)?;
        self.lu_hg = hg;
        Ok(())
    }

    /// All stages and the new solution (into `ynew`) for step size h, and the
    /// filtered error estimate (into `err`) when the tableau has one.
    fn stages(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<Attempt, IntegrateError> {
        let n = self.st.y.len();
        let s = self.tab.stages();
        let gamma = self.tab.kind.gamma();
        let hg = h * gamma;
        self.ensure_lu(hg, ctx)?;
        let rtol = ctx.opts.rtol;
        let settings = NewtonSettings {
            // radau5.f's NIT = 7 when h can be reduced; at fixed steps the
            // iteration must converge, so it may take longer
            max_iter: if ctx.opts.fixed_step.is_some() { 30 } else { 7 },
            // radau5.f: FNEWT = max(10 ε/rtol, min(0.03, sqrt(rtol)))
            tol: (10.0 * f64::EPSILON / rtol).max(0.03f64.min(rtol.sqrt())),
        };
        for i in 0..n {
            self.w[i] = 1.0 / (ctx.opts.atol + rtol * self.st.y[i].abs());
        }
        self.max_rate = 0.0;
        let explicit_first = matches!(self.tab.kind, DirkKind::Esdirk { .. });
        for st in 0..s {
            if st == 0 && explicit_first {
                self.k[0].copy_from_slice(&self.st.f_cur);
                continue;
            }
            for m in 0..n {
                let mut acc = 0.0;
                for j in 0..st {
                    acc += self.tab.a[st][j] * self.k[j][m];
                }
                self.base[m] = self.st.y[m] + h * acc;
            }
            // predictor: the previous stage derivative
            let kprev = if st == 0 {
                &self.st.f_cur
            } else {
                &self.k[st - 1]
            };
            for m in 0..n {
                self.stage[m] = self.base[m] + hg * kprev[m];
            }
            self.pred.copy_from_slice(&self.stage);
            let ti = self.st.t + self.tab.c[st] * h;
            let base = &self.base;
            let kbuf = &mut self.ynew;
            let out = newton_solve(
                |x, g| {
                    p.rhs(ti, x, kbuf)?;
                    for m in 0..x.len() {
                        g[m] = x[m] - base[m] - hg * kbuf[m];
                    }
                    Ok(())
                },
                &mut self.stage,
                &mut self.lu,
                &self.w,
                &settings,
                &mut self.g,
                ctx.stats,
            );
            // h is fixed: before giving up, full Newton on this stage (also
            // when f failed at a diverging iterate)
            let last_resort = ctx.opts.fixed_step.is_some() && self.jac_fresh;
            let (iters, eval_error) = match out {
                Ok(NewtonOutcome::Converged { rate, .. }) => {
                    self.max_rate = self.max_rate.max(rate);
                    (None, None)
                }
                Ok(NewtonOutcome::Failed { iters, .. }) if last_resort => (Some(iters), None),
                Ok(NewtonOutcome::Failed { iters, .. }) => {
                    return Ok(Attempt::NewtonFailed { iters })
                }
                Err(e) if last_resort => (Some(0), Some(e)),
                Err(e) => return Err(e.into()),
            };
            if let Some(iters) = iters {
                match (self.full_newton_stage(p, ti, hg, ctx), eval_error) {
                    (Ok(true), _) => {}
                    (Ok(false), None) => return Ok(Attempt::NewtonFailed { iters }),
                    (Ok(false), Some(e)) => return Err(e.into()),
                    (Err(e), first) => return Err(first.map_or(e, IntegrateError::from)),
                }
            }
            for m in 0..n {
                self.k[st][m] = (self.stage[m] - self.base[m]) / hg;
            }
        }
        for m in 0..n {
            let mut acc = 0.0;
            for i in 0..s {
                acc += self.tab.b[i] * self.k[i][m];
            }
            self.ynew[m] = self.st.y[m] + h * acc;
        }
        if let Some(bh) = &self.tab.b_hat {
            for m in 0..n {
                let mut acc = 0.0;
                for i in 0..s {
                    acc += (self.tab.b[i] - bh[i]) * self.k[i][m];
                }
                self.err[m] = h * acc;
            }
            self.lu.solve_in_place(&mut self.err, ctx.stats);
        }
        Ok(Attempt::Done)
    }

    /// Solve the current stage, G(Y) = Y − `base` − hγ f(ti, Y) = 0, by full
    /// Newton from its predictor `pred`: the Jacobian is evaluated and
    /// I − hγJ factorised at every iterate. Returns whether it converged
    /// (Y in `stage`); the factors are then kept for the later stages, and
    /// the next step evaluates a new Jacobian.
    fn full_newton_stage(
        &mut self,
        p: &mut dyn OdeProblem,
        ti: f64,
        hg: f64,
        ctx: &mut StepContext,
    ) -> Result<bool, IntegrateError> {
        /// Iterations of the full Newton fallback.
        const MAX_FULL: u32 = 12;
        let n = self.st.y.len();
        let tol = (10.0 * f64::EPSILON / ctx.opts.rtol).max(0.03f64.min(ctx.opts.rtol.sqrt()));
        self.stage.copy_from_slice(&self.pred);
        self.lu_hg = f64::NAN;
        let mut prev = f64::NAN;
        for _ in 0..MAX_FULL {
            ctx.stats.n_newton_iter += 1;
            p.rhs(ti, &self.stage, &mut self.ynew)?;
            p.jacobian(ti, &self.stage, &mut self.stage_jac)?;
            for i in 0..n {
                self.g[i] = self.stage[i] - self.base[i] - hg * self.ynew[i];
                for j in 0..n {
                    self.iter_mat[(i, j)] = -hg * self.stage_jac[(i, j)];
                }
                self.iter_mat[(i, i)] += 1.0;
            }
            self.lu.factor(&self.iter_mat, ti, ctx.stats)?;
            self.lu.solve_in_place(&mut self.g, ctx.stats);
            let mut s = 0.0;
            for i in 0..n {
                self.stage[i] -= self.g[i];
                s += (self.g[i] * self.w[i]).powi(2);
            }
            let dnorm = (s / n.max(1) as f64).sqrt();
            if !dnorm.is_finite() {
                break;
            }
            // quadratic convergence: the next increment is far below this one
            let rate = dnorm / prev;
            if dnorm <= tol || (rate < 0.5 && rate / (1.0 - rate) * dnorm <= tol) {
                self.lu_hg = hg;
                self.max_rate = 1.0;
                return Ok(true);
            }
            prev = dnorm;
        }
        ctx.stats.n_newton_fail += 1;
        self.lu.invalidate();
        Ok(false)
    }

    /// Step doubling: one step of h, then two of h/2 from the same point;
    /// the two half steps go to `ynew` (stages of the second in `k`), the
    /// Richardson estimate (y_{h/2,h/2} − y_h)/(2^p − 1) to `err`. The
    /// current point is left unchanged.
    fn attempt_doubled(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<Attempt, IntegrateError> {
        if let a @ Attempt::NewtonFailed { .. } = self.stages(p, h, ctx)? {
            return Ok(a);
        }
        self.y_full.copy_from_slice(&self.ynew);
        let half = 0.5 * h;
        if let a @ Attempt::NewtonFailed { .. } = self.stages(p, half, ctx)? {
            return Ok(a);
        }
        // advance to the midpoint temporarily
        let t_save = self.st.t;
        self.y_save.copy_from_slice(&self.st.y);
        self.f_save.copy_from_slice(&self.st.f_cur);
        self.st.y.copy_from_slice(&self.ynew);
        self.st.t += half;
        let second = if self.tab.stiffly_accurate {
            let s = self.tab.stages();
            self.st.f_cur.copy_from_slice(&self.k[s - 1]);
            self.stages(p, half, ctx)
        } else {
            match p.rhs(self.st.t, &self.st.y, &mut self.st.f_cur) {
                Ok(()) => self.stages(p, half, ctx),
                Err(e) => Err(e.into()),
            }
        };
        self.st.t = t_save;
        self.st.y.copy_from_slice(&self.y_save);
        self.st.f_cur.copy_from_slice(&self.f_save);
        let second = second?;
        let den = 2f64.powi(self.tab.order as i32) - 1.0;
        for m in 0..self.st.y.len() {
            self.err[m] = (self.ynew[m] - self.y_full[m]) / den;
        }
        Ok(second)
    }

    fn accept(&mut self, p: &mut dyn OdeProblem, h: f64) -> Result<(), IntegrateError> {
        // a stiffly accurate method's last stage is f at the new point
        let last = &self.k[self.tab.stages() - 1][..];
        let fsal = self.tab.stiffly_accurate.then_some(last);
        self.st.accept(p, h, &self.ynew, fsal)?;
        self.jac_fresh = false;
        Ok(())
    }
}

impl Stepper for Dirk {
    fn name(&self) -> &'static str {
        self.tab.name
    }

    crate::one_step::one_step_accessors!(restart_keeping_step);

    fn reset(
        &mut self,
        p: &mut dyn OdeProblem,
        t0: f64,
        y0: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let n = y0.len();
        let s = self.tab.stages();
        if self.ynew.len() != n || self.k.len() != s {
            self.k = vec![vec![0.0; n]; s];
            for v in [
                &mut self.base,
                &mut self.stage,
                &mut self.g,
                &mut self.ynew,
                &mut self.err,
                &mut self.w,
                &mut self.y_full,
                &mut self.y_save,
                &mut self.f_save,
                &mut self.pred,
            ] {
                *v = vec![0.0; n];
            }
            self.jac = DMatrix::zeros(n, n);
            self.stage_jac = DMatrix::zeros(n, n);
            self.iter_mat = DMatrix::zeros(n, n);
        }
        self.jac_fresh = false;
        self.jac_valid = false;
        self.lu.invalidate();
        self.lu_hg = f64::NAN;
        self.st.restart_at(p, t0, y0, ctx)?;
        self.st.loop_state = LoopState::default();
        let q = self.error_order();
        self.st.choose_step(self.tab.name, p, q, ctx.opts)
    }

    /// One accepted step by the shared loop ([`step_loop::advance`]).
    fn step(
        &mut self,
        p: &mut dyn OdeProblem,
        t_stop: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.rejected_in_a_row = 0;
        step_loop::advance(self, p, t_stop, ctx)
    }

    crate::one_step::one_step_accessors!(hermite);
}

impl StepAttempt for Dirk {
    crate::step_loop::step_state_accessors!(st);

    /// The stages (or the doubled step without an embedded pair); a
    /// Newton failure with a Jacobian from an earlier step refreshes it and
    /// repeats the step, with a fresh one shrinks h by 4.
    fn attempt(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<Trial, IntegrateError> {
        let adaptive = ctx.opts.fixed_step.is_none();
        let doubling = adaptive && self.tab.b_hat.is_none();
        if !self.jac_valid {
            self.refresh_jacobian(p)?;
        }
        // a failed evaluation inside the iteration (a non-finite f at a
        // diverging iterate) counts as a Newton failure
        let attempt = if doubling {
            self.attempt_doubled(p, h, ctx)
        } else {
            self.stages(p, h, ctx)
        };
        // at a fixed step, with a Jacobian from an earlier step: refresh
        // it and retry
        let attempt = match attempt {
            Err(IntegrateError::Eval { .. })
                if (adaptive && self.rejected_in_a_row < 10) || (!adaptive && !self.jac_fresh) =>
            {
                Attempt::NewtonFailed { iters: 0 }
            }
            other => other?,
        };
        if let Attempt::NewtonFailed { iters } = attempt {
            if !self.jac_fresh {
                // stale Jacobian: refresh it and retry the same step
                self.refresh_jacobian(p)?;
                return Ok(Trial::Repeat);
            }
            if !adaptive || self.rejected_in_a_row > 20 {
                return Err(IntegrateError::NewtonFailed {
                    t: self.st.t,
                    h,
                    iters,
                });
            }
            self.rejected_in_a_row += 1;
            return Ok(Trial::Failed { factor: 0.25 });
        }
        if !adaptive {
            return Ok(Trial::Unchecked);
        }
        let o = ctx.opts;
        Ok(Trial::Estimated(wrms_norm(
            &self.err, &self.st.y, &self.ynew, o.rtol, o.atol,
        )))
    }

    /// The controller's factor; kept at 1 for increases up to 1.2 (the
    /// factorisation stays valid: radau5.f QUOT1/QUOT2), at most 0.9 after
    /// a rejection.
    fn factor(&mut self, err: f64, h: f64, accepted: bool) -> f64 {
        let fac = self.st.controller.factor(err, h, self.error_order());
        if accepted {
            self.st.controller.accepted(err, h);
            if (1.0..=1.2).contains(&fac) {
                1.0
            } else {
                fac
            }
        } else {
            fac.min(0.9)
        }
    }

    fn passes(&self, err: f64, h: f64) -> bool {
        self.st.controller.accept(err, h)
    }

    fn rejected(
        &mut self,
        p: &mut dyn OdeProblem,
        _h: f64,
        _ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        if !self.jac_fresh {
            self.refresh_jacobian(p)?;
        }
        self.rejected_in_a_row += 1;
        Ok(())
    }

    fn commit(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        _ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.accept(p, h)?;
        if self.max_rate > 0.3 {
            self.jac_valid = false;
        }
        Ok(())
    }

    fn restart_here(
        &mut self,
        p: &mut dyn OdeProblem,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.jac_valid = false;
        let q = self.error_order();
        self.st.restart_here(p, q, ctx.opts)
    }
}

#[cfg(test)]
mod tests {
    use nalgebra::DMatrix;

    use crate::error::EvalError;
    use crate::problem::OdeProblem;
    use crate::testkit::run_fixed;
    use crate::SolverOptions;

    /// y' = 10 − y³: at y = 0 the Jacobian vanishes, at the root of a step
    /// of h = 1 it is −11, so modified Newton with J(y_n) diverges.
    struct Cubic;

    impl OdeProblem for Cubic {
        fn dim(&self) -> usize {
            1
        }
        fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
            dy[0] = 10.0 - y[0].powi(3);
            Ok(())
        }
        fn jacobian(&mut self, _t: f64, y: &[f64], j: &mut DMatrix<f64>) -> Result<(), EvalError> {
            j[(0, 0)] = -3.0 * y[0] * y[0];
            Ok(())
        }
        fn has_exact_jacobian(&self) -> bool {
            true
        }
    }

    #[test]
    fn a_fixed_step_falls_back_to_full_newton_when_modified_newton_diverges() {
        let opts = SolverOptions::default().with_tol(1e-8, 1e-10);
        // one backward-Euler step: Y + Y³ = 10
        let y = run_fixed("backward_euler", &mut Cubic, 0.0, &[0.0], 1.0, 1.0, &opts).unwrap();
        assert!((y[0] + y[0].powi(3) - 10.0).abs() < 1e-7, "{y:?}");
        // L-stable methods approach the equilibrium 10^(1/3)
        for name in ["backward_euler", "sdirk2", "esdirk43"] {
            let y = run_fixed(name, &mut Cubic, 0.0, &[0.0], 5.0, 1.0, &opts).unwrap();
            assert!((y[0] - 10f64.cbrt()).abs() < 1e-2, "{name}: {y:?}");
        }
    }
}
