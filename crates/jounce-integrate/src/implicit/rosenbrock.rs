//! The one Rosenbrock driver over a [`RosenbrockTableau`] (W-form of
//! rodas.f, see that type for the stage equations): one Jacobian and one
//! LU of (1/(hγ) I − J) per step, no Newton iteration; ∂f/∂t by a
//! one-sided second-order difference in t; embedded error control; Hermite
//! dense output.

use nalgebra::DMatrix;

use crate::controller::StepController;
use crate::error::IntegrateError;
use crate::implicit::rosenbrock_tableau::RosenbrockTableau;
use crate::newton::CachedLu;
use crate::norm::wrms_norm;
use crate::one_step::OneStepState;
use crate::problem::OdeProblem;
use crate::step_loop::{self, LoopState, StepAttempt, Trial};
use crate::stepper::{StepContext, Stepper};

/// Rosenbrock stepper over a tableau.
pub struct Rosenbrock {
    tab: RosenbrockTableau,
    fsal: bool,
    /// The between-steps state ([`OneStepState`]).
    st: OneStepState,
    /// ∂f/∂t at (t, y)
    ft: Vec<f64>,
    u: Vec<Vec<f64>>,
    ytmp: Vec<f64>,
    fstage: Vec<f64>,
    ynew: Vec<f64>,
    fnew: Vec<f64>,
    err: Vec<f64>,
    jac: DMatrix<f64>,
    iter_mat: DMatrix<f64>,
    lu: CachedLu,
    /// rejections since the last accepted step (evaluation failures are
    /// rejections only for the first 10)
    rejected_in_a_row: u32,
    /// t + 2δ − t of the last ∂f/∂t: how far past t its differences looked.
    ft_reach: f64,
}

impl Rosenbrock {
    /// A stepper for the tableau.
    pub fn new(tab: RosenbrockTableau) -> Self {
        let fsal = tab.fsal();
        Self {
            tab,
            fsal,
            ft: Vec::new(),
            u: Vec::new(),
            ytmp: Vec::new(),
            fstage: Vec::new(),
            ynew: Vec::new(),
            fnew: Vec::new(),
            err: Vec::new(),
            jac: DMatrix::zeros(0, 0),
            iter_mat: DMatrix::zeros(0, 0),
            lu: CachedLu::new(),
            st: OneStepState::new(StepController::default()),
            rejected_in_a_row: 0,
            ft_reach: 0.0,
        }
    }

    /// Stages, new solution (ynew) and error estimate (err) for step h.
    fn stages(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let (n, s) = (self.st.y.len(), self.tab.stages());
        let fac = 1.0 / (h * self.tab.gamma);
        for i in 0..n {
            for j in 0..n {
                self.iter_mat[(i, j)] = -self.jac[(i, j)];
            }
            self.iter_mat[(i, i)] += fac;
        }
        self.lu.factor(&self.iter_mat, self.st.t, ctx.stats)?;
        for st in 0..s {
            if st == 0 {
                self.fstage.copy_from_slice(&self.st.f_cur);
            } else {
                for m in 0..n {
                    let mut acc = self.st.y[m];
                    for j in 0..st {
                        acc += self.tab.a[st][j] * self.u[j][m];
                    }
                    self.ytmp[m] = acc;
                }
                p.rhs(self.st.t + self.tab.c[st] * h, &self.ytmp, &mut self.fstage)?;
                if self.fsal && st == s - 1 {
                    self.fnew.copy_from_slice(&self.fstage);
                }
            }
            let (done, rest) = self.u.split_at_mut(st);
            let ui = &mut rest[0];
            for m in 0..n {
                let mut acc = self.fstage[m] + h * self.tab.d[st] * self.ft[m];
                for (j, uj) in done.iter().enumerate() {
                    acc += self.tab.cm[st][j] / h * uj[m];
                }
                ui[m] = acc;
            }
            self.lu.solve_in_place(ui, ctx.stats);
        }
        for m in 0..n {
            let (mut acc, mut e) = (self.st.y[m], 0.0);
            for i in 0..s {
                acc += self.tab.m[i] * self.u[i][m];
                e += (self.tab.m[i] - self.tab.m_hat[i]) * self.u[i][m];
            }
            self.ynew[m] = acc;
            self.err[m] = e;
        }
        Ok(())
    }

    /// J and ∂f/∂t at the current point. ∂f/∂t by the second-order
    /// one-sided difference (−3f(t) + 4f(t + δ) − f(t + 2δ))/(2δ), which
    /// stays inside [t, t + h] (f need not exist before t0), with
    /// δ = min(ε^(1/3) · max(|t|, |t + h|), h/2), the scale-free increment
    /// of MATLAB's ode23s (Shampine & Reichelt 1997, Section 3) with the
    /// exponent of a second-order formula. Two f evaluations.
    fn derivatives(&mut self, p: &mut dyn OdeProblem, h: f64) -> Result<(), IntegrateError> {
        p.jacobian(self.st.t, &self.st.y, &mut self.jac)?;
        self.time_derivative(p, h)
    }

    /// ∂f/∂t for a step of size h (see [`Rosenbrock::derivatives`]). δ is
    /// not raised above h/2 (only to a few units of rounding of t,
    /// [`crate::discontinuity::resolution_floor`] being the smallest h): a difference
    /// that looked beyond the step would see a jump of f that the step
    /// itself does not reach (an unannounced step force ahead), and the
    /// huge ∂f/∂t it then measures kept rodas4 at an error norm of 0.66
    /// with constant 3e-12 s steps for 13 000 steps before S3's jump at
    /// t = 2 (δ was raised to √ε |t| = 3e-8 s).
    fn time_derivative(&mut self, p: &mut dyn OdeProblem, h: f64) -> Result<(), IntegrateError> {
        let t = self.st.t;
        let scale = t.abs().max((t + h).abs());
        let d = (f64::EPSILON.cbrt() * scale).min(0.5 * h);
        // make t + δ exactly representable; at least a few units of
        // rounding of t (2δ then stays within a step of the resolution
        // floor, 10 ε |t|, the smallest step the loop takes)
        let d = ((t + d) - t).max((4.0 * f64::EPSILON * t.abs()).max(f64::MIN_POSITIVE));
        p.rhs(t + d, &self.st.y, &mut self.ft)?;
        p.rhs(t + 2.0 * d, &self.st.y, &mut self.fnew)?;
        for i in 0..self.st.y.len() {
            self.ft[i] = (4.0 * self.ft[i] - 3.0 * self.st.f_cur[i] - self.fnew[i]) / (2.0 * d);
        }
        self.ft_reach = 2.0 * d;
        Ok(())
    }

    /// The order of the error estimate (of the first-step estimate).
    fn error_order(&self) -> u32 {
        self.tab.order.min(self.tab.embedded_order)
    }

    fn accept(&mut self, p: &mut dyn OdeProblem, h: f64) -> Result<(), IntegrateError> {
        let fsal = self.fsal.then_some(&self.fnew[..]);
        self.st.accept(p, h, &self.ynew, fsal)
    }
}

impl Stepper for Rosenbrock {
    fn name(&self) -> &'static str {
        self.tab.name
    }

    fn reset(
        &mut self,
        p: &mut dyn OdeProblem,
        t0: f64,
        y0: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        // f(t0, y0) first: the stage storage is sized after it
        self.st.restart_at(p, t0, y0, ctx)?;
        let (n, s) = (y0.len(), self.tab.stages());
        if self.ynew.len() != n || self.u.len() != s {
            self.u = vec![vec![0.0; n]; s];
            let z = || vec![0.0; n];
            (self.ft, self.ytmp, self.fstage) = (z(), z(), z());
            (self.ynew, self.fnew, self.err) = (z(), z(), z());
            self.jac = DMatrix::zeros(n, n);
            self.iter_mat = DMatrix::zeros(n, n);
        }
        self.st.loop_state = LoopState::default();
        self.st
            .choose_step(self.tab.name, p, self.error_order(), ctx.opts)
    }

    crate::one_step::one_step_accessors!(restart_keeping_step);

    /// One accepted step by the shared loop ([`step_loop::advance`]),
    /// with J and f_t evaluated once at its start.
    fn step(
        &mut self,
        p: &mut dyn OdeProblem,
        t_stop: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.derivatives(p, self.st.h.min(ctx.opts.h_max).min(t_stop - self.st.t))?;
        self.rejected_in_a_row = 0;
        step_loop::advance(self, p, t_stop, ctx)
    }

    crate::one_step::one_step_accessors!(hermite);
}

impl StepAttempt for Rosenbrock {
    fn attempt(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<Trial, IntegrateError> {
        let attempt = self.stages(p, h, ctx);
        let opts = ctx.opts;
        if opts.fixed_step.is_some() {
            attempt?;
            return Ok(Trial::Unchecked);
        }
        // a failed evaluation (e.g. a non-finite f from a too large step)
        // or a singular matrix is treated as a rejected step
        match attempt {
            Ok(()) => Ok(Trial::Estimated(wrms_norm(
                &self.err, &self.st.y, &self.ynew, opts.rtol, opts.atol,
            ))),
            Err(IntegrateError::Eval { .. }) if self.rejected_in_a_row < 10 => {
                Ok(Trial::Estimated(f64::INFINITY))
            }
            Err(e) => Err(e),
        }
    }

    crate::step_loop::step_state_accessors!(st);

    fn factor(&mut self, err: f64, h: f64, accepted: bool) -> f64 {
        let q = self.tab.order.min(self.tab.embedded_order);
        if accepted {
            let fac = self.st.controller.factor(err, h, q);
            self.st.controller.accepted(err, h);
            fac
        } else if err.is_finite() {
            self.st.controller.factor(err, h, q).min(0.9)
        } else {
            0.25
        }
    }

    fn passes(&self, err: f64, h: f64) -> bool {
        err.is_finite() && self.st.controller.accept(err, h)
    }

    fn restart_here(
        &mut self,
        p: &mut dyn OdeProblem,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.st.restart_here(p, self.error_order(), ctx.opts)
    }

    fn commit(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        _ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.accept(p, h)
    }

    fn rejected(
        &mut self,
        p: &mut dyn OdeProblem,
        _h: f64,
        _ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.rejected_in_a_row += 1;
        // the next trial is shorter than the reach of ∂f/∂t: difference it
        // again inside the new step (a jump of f between the two ends is
        // what shortens it)
        if self.ft_reach > self.st.h {
            self.time_derivative(p, self.st.h)?;
        }
        Ok(())
    }
}
