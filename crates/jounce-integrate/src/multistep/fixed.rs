//! The one fixed-step driver of the fixed-order linear multistep methods
//! (Adams–Bashforth, Adams–Moulton, BDF as [`Lmm`] tables):
//!
//! Σ_{j=0}^{k} α_j y_{n+j} = h Σ_{j=0}^{k} β_j f_{n+j}.
//!
//! Explicit methods evaluate y_{n+k} directly. Implicit methods solve
//! G(y) = α_k y − h β_k f(t_{n+k}, y) + Σ_{j<k} (α_j y_{n+j} − h β_j f_{n+j}) = 0
//! by modified Newton ([`crate::newton::newton_solve`]) with the iteration
//! matrix α_k I − h β_k J factorised once ([`CachedLu`]) and kept over steps;
//! J is refreshed (and the matrix refactorised) only when Newton fails.
//!
//! Start and restart: after every [`Stepper::reset`] the history is dropped
//! and the k − 1 missing back values are made by one-step methods of order
//! ≥ 4 with the same step ([`super::start`]): RK4 for the explicit methods,
//! the L-stable extrapolated implicit Euler method (order 5) for the
//! implicit ones, so that a stiff start stays damped. A step cut short by
//! `t_stop` (a breakpoint or the end not on the grid) is also such a step,
//! after which the method restarts.
//! The step loop is the shared one ([`crate::step_loop::advance`], fixed
//! steps: no error test); this file supplies the step and its commit.
//! Dense output: cubic Hermite interpolation on the last step.

use nalgebra::DMatrix;

use crate::dense::hermite_cubic;
use crate::error::IntegrateError;
use crate::multistep::coeffs::Lmm;
use crate::multistep::start::{ImplicitEulerExtrapolation, Rk4Scratch};
use crate::newton::{newton_solve, CachedLu, NewtonOutcome, NewtonSettings};
use crate::problem::OdeProblem;
use crate::step_loop::{self, LoopState, StepAttempt, Trial};
use crate::stepper::{StepContext, Stepper};

/// Fixed-step linear multistep stepper over an [`Lmm`] table.
pub struct FixedLmm {
    lmm: &'static Lmm,
    t: f64,
    t_prev: f64,
    h: f64,
    /// back values y_{n+k−1}, y_{n+k−2}, ... (newest first)
    ys: Vec<Vec<f64>>,
    /// back derivatives, newest first
    fs: Vec<Vec<f64>>,
    /// how many back values are valid
    nhist: usize,
    y_prev: Vec<f64>,
    f_prev: Vec<f64>,
    y_new: Vec<f64>,
    pred: Vec<f64>,
    rest: Vec<f64>,
    g: Vec<f64>,
    w: Vec<f64>,
    jac: DMatrix<f64>,
    iter: DMatrix<f64>,
    lu: CachedLu,
    /// h of the factorised matrix
    lu_h: f64,
    rk4: Rk4Scratch,
    implicit_start: ImplicitEulerExtrapolation,
    /// the shared step loop's state ([`step_loop::advance`])
    loop_state: LoopState,
    /// the current trial has the full step h (keeps the history)
    on_grid: bool,
}

impl FixedLmm {
    /// A fixed-step stepper for `lmm`.
    pub fn new(lmm: &'static Lmm) -> Self {
        Self {
            lmm,
            t: 0.0,
            t_prev: 0.0,
            h: 0.0,
            ys: Vec::new(),
            fs: Vec::new(),
            nhist: 0,
            y_prev: Vec::new(),
            f_prev: Vec::new(),
            y_new: Vec::new(),
            pred: Vec::new(),
            rest: Vec::new(),
            g: Vec::new(),
            w: Vec::new(),
            jac: DMatrix::zeros(0, 0),
            iter: DMatrix::zeros(0, 0),
            lu: CachedLu::new(),
            lu_h: f64::NAN,
            rk4: Rk4Scratch::default(),
            implicit_start: ImplicitEulerExtrapolation::new(0),
            loop_state: LoopState::default(),
            on_grid: true,
        }
    }

    /// Make y_new (at t + h) the current point: shift the history.
    fn push(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        keep_history: bool,
    ) -> Result<(), IntegrateError> {
        self.t_prev = self.t;
        self.y_prev.copy_from_slice(&self.ys[0]);
        self.f_prev.copy_from_slice(&self.fs[0]);
        self.t += h;
        self.ys.rotate_right(1);
        self.fs.rotate_right(1);
        self.ys[0].copy_from_slice(&self.y_new);
        p.rhs(self.t, &self.ys[0], &mut self.fs[0])?;
        self.nhist = if keep_history {
            (self.nhist + 1).min(self.ys.len())
        } else {
            1
        };
        Ok(())
    }

    /// Solve the implicit relation for y_new (predictor already in y_new).
    fn solve_implicit(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let k = self.lmm.steps();
        let ak = self.lmm.alpha[k];
        let bk = self.lmm.beta[k];
        let t_new = self.t + h;
        let settings = NewtonSettings {
            max_iter: 12,
            // floor at round-off (radau5.f: FNEWT ≥ 10 ε/rtol): 1e-10 alone
            // cannot be met when rtol ≲ 1e-12
            tol: (10.0 * f64::EPSILON / ctx.opts.rtol).max(1e-10),
        };
        let n = self.y_new.len();
        for (i, wi) in self.w.iter_mut().enumerate() {
            *wi = 1.0 / (ctx.opts.atol + ctx.opts.rtol * self.ys[0][i].abs());
        }
        self.pred.copy_from_slice(&self.y_new);
        for attempt in 0..2 {
            if attempt == 1 || !self.lu.is_factored() || self.lu_h != h {
                if attempt == 1 || !self.lu.is_factored() {
                    p.jacobian(self.t, &self.ys[0], &mut self.jac)?;
                }
                for r in 0..n {
                    for c in 0..n {
                        self.iter[(r, c)] = -h * bk * self.jac[(r, c)];
                    }
                    self.iter[(r, r)] += ak;
                }
                self.lu.factor(&self.iter, self.t, ctx.stats)?;
                self.lu_h = h;
                self.y_new.copy_from_slice(&self.pred);
            }
            let rest = &self.rest;
            let out = newton_solve(
                |x, g| {
                    p.rhs(t_new, x, g)?;
                    for i in 0..x.len() {
                        g[i] = ak * x[i] - h * bk * g[i] + rest[i];
                    }
                    Ok(())
                },
                &mut self.y_new,
                &mut self.lu,
                &self.w,
                &settings,
                &mut self.g,
                ctx.stats,
            )?;
            if let NewtonOutcome::Converged { .. } = out {
                return Ok(());
            }
            if attempt == 1 {
                let iters = match out {
                    NewtonOutcome::Failed { iters, .. }
                    | NewtonOutcome::Converged { iters, .. } => iters,
                };
                return Err(IntegrateError::NewtonFailed {
                    t: self.t,
                    h,
                    iters,
                });
            }
        }
        Ok(())
    }
}

impl Stepper for FixedLmm {
    fn name(&self) -> &'static str {
        self.lmm.name
    }

    fn reset(
        &mut self,
        p: &mut dyn OdeProblem,
        t0: f64,
        y0: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let h = ctx.opts.fixed_step.ok_or_else(|| IntegrateError::Unsupported {
            method: self.lmm.name.into(),
            detail: "fixed-step multistep method: give a fixed step size (or use pece, adams_vo, bdf, ndf)".into(),
        })?;
        if !(h > 0.0 && h.is_finite()) {
            return Err(IntegrateError::BadMethod(format!(
                "{}: fixed step size must be positive and finite, got {h}",
                self.lmm.name
            )));
        }
        let n = y0.len();
        let k = self.lmm.steps();
        if self.y_prev.len() != n || self.ys.len() != k {
            self.ys = vec![vec![0.0; n]; k];
            self.fs = vec![vec![0.0; n]; k];
            self.y_prev = vec![0.0; n];
            self.f_prev = vec![0.0; n];
            self.y_new = vec![0.0; n];
            self.pred = vec![0.0; n];
            self.rest = vec![0.0; n];
            self.g = vec![0.0; n];
            self.w = vec![0.0; n];
            self.jac = DMatrix::zeros(n, n);
            self.iter = DMatrix::zeros(n, n);
            self.rk4 = Rk4Scratch::new(n);
            self.implicit_start = ImplicitEulerExtrapolation::new(n);
        }
        self.lu.invalidate();
        self.h = h;
        self.t = t0;
        self.t_prev = t0;
        self.ys[0].copy_from_slice(y0);
        p.rhs(t0, y0, &mut self.fs[0])?;
        self.y_prev.copy_from_slice(y0);
        self.f_prev.copy_from_slice(&self.fs[0]);
        self.nhist = 1;
        self.loop_state = LoopState::default();
        Ok(())
    }

    /// One step by the shared loop ([`step_loop::advance`]).
    fn step(
        &mut self,
        p: &mut dyn OdeProblem,
        t_stop: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        step_loop::advance(self, p, t_stop, ctx)
    }

    fn t(&self) -> f64 {
        self.t
    }

    fn y(&self) -> &[f64] {
        self.ys.first().map_or(&[], |v| v.as_slice())
    }

    fn t_prev(&self) -> f64 {
        self.t_prev
    }

    fn interpolate(&self, t: f64, out: &mut [f64]) {
        hermite_cubic(
            self.t_prev,
            &self.y_prev,
            &self.f_prev,
            self.t,
            &self.ys[0],
            &self.fs[0],
            t,
            out,
        );
    }
}

impl StepAttempt for FixedLmm {
    fn current_t(&self) -> f64 {
        self.t
    }

    fn proposed_h(&self) -> f64 {
        self.h
    }

    /// Fixed steps: the loop never changes h.
    fn set_h(&mut self, _h: f64) {}

    crate::step_loop::loop_state_accessor!();

    /// y_{n+k} into y_new: the k-step formula when the step is the full h
    /// and k back values exist; otherwise (the start, or a step cut short
    /// or stretched to t_stop by the loop) the one-step starter, after
    /// which the history restarts unless the step was the full h.
    fn attempt(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<Trial, IntegrateError> {
        let k = self.lmm.steps();
        self.on_grid = (h - self.h).abs() <= 1e-9 * self.h;
        if !self.on_grid || self.nhist < k {
            let (y0, f0) = (&self.ys[0], &self.fs[0]);
            if self.lmm.implicit() {
                self.implicit_start
                    .step(p, self.t, y0, f0, h, &mut self.y_new, ctx)?;
                self.lu.invalidate();
            } else {
                self.rk4.step(p, self.t, y0, f0, h, &mut self.y_new)?;
            }
            return Ok(Trial::Unchecked);
        }
        // rest = Σ_{j<k} α_j y_{n+j} − h β_j f_{n+j}; history index i ↔ j = k − 1 − i
        let n = self.rest.len();
        for m in 0..n {
            let mut s = 0.0;
            for i in 0..k {
                let j = k - 1 - i;
                s += self.lmm.alpha[j] * self.ys[i][m] - h * self.lmm.beta[j] * self.fs[i][m];
            }
            self.rest[m] = s;
        }
        let ak = self.lmm.alpha[k];
        if self.lmm.implicit() {
            for m in 0..n {
                self.y_new[m] = self.ys[0][m] + h * self.fs[0][m];
            }
            self.solve_implicit(p, h, ctx)?;
        } else {
            for m in 0..n {
                self.y_new[m] = -self.rest[m] / ak;
            }
        }
        Ok(Trial::Unchecked)
    }

    /// Fixed steps: there is no error norm to turn into a factor.
    fn factor(&mut self, _err: f64, _h: f64, _accepted: bool) -> f64 {
        1.0
    }

    fn commit(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        _ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.push(p, h, self.on_grid)
    }

    /// Fixed steps never cross (no error test); a restart is a reset.
    fn restart_here(
        &mut self,
        p: &mut dyn OdeProblem,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let (t, y) = (self.t, self.ys[0].clone());
        Stepper::reset(self, p, t, &y, ctx)
    }
}
