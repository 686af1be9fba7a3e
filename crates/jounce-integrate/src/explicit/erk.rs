//! The one explicit Runge-Kutta driver: any [`ButcherTableau`], fixed step
//! or embedded error control, FSAL, dense output, stiffness detection.

use crate::controller::StepController;
use crate::dense::hermite_cubic;
use crate::error::{EvalError, IntegrateError};
use crate::explicit::tableau::{ButcherTableau, DenseOutput, ErrorEstimate};
use crate::norm::wrms_norm;
use crate::one_step::OneStepState;
use crate::options::SolverOptions;
use crate::problem::OdeProblem;
use crate::step_loop::{self, LoopState, StepAttempt, Trial};
use crate::stepper::{StepContext, Stepper};

/// Explicit Runge-Kutta stepper over a tableau.
///
/// One step: k_i = f(t + c_i h, y + h Σ_j a_ij k_j), y₁ = y + h Σ b_i k_i,
/// accepted when the tableau's error norm ([`ErrorEstimate`]) is ≤ 1.
///
/// Continuous output ([`Stepper::interpolate`]) is the tableau's
/// [`DenseOutput`]. For DOP853 its three extra stages cost three
/// evaluations per step, so they are formed only for a step that is
/// interpolated ([`Stepper::prepare_dense_output`], which the driver calls
/// for a step with an output point or an event inside, as scipy's DOP853
/// does), or at every step after [`ExplicitRk::with_dense_output`];
/// without them the cubic Hermite interpolant (third order) is used.
pub struct ExplicitRk {
    tab: &'static ButcherTableau,
    /// The between-steps state ([`OneStepState`]).
    st: OneStepState,
    /// stage derivatives k_i (s × n, plus the extra dense-output stages)
    k: Vec<Vec<f64>>,
    ytmp: Vec<f64>,
    err: Vec<f64>,
    /// second error estimate (e₃ of [`ErrorEstimate::Combined53`])
    err2: Vec<f64>,
    /// coefficients F₀..F₆ of the DOP853 continuous extension of the last step
    cont: Vec<Vec<f64>>,
    /// size of the last accepted step (the one `cont` would extend)
    h_accepted: f64,
    /// whether `cont` belongs to the last accepted step
    cont_valid: bool,
    /// form the continuous extension whatever the options
    force_dense: bool,
    f_cur_valid: bool,
    stiff_count: u32,
    nonstiff_count: u32,
}

impl ExplicitRk {
    /// A stepper for `tab`.
    pub fn new(tab: &'static ButcherTableau) -> Self {
        Self {
            tab,
            k: Vec::new(),
            ytmp: Vec::new(),
            err: Vec::new(),
            err2: Vec::new(),
            cont: Vec::new(),
            h_accepted: 0.0,
            cont_valid: false,
            force_dense: false,
            f_cur_valid: false,
            st: OneStepState::new(StepController::default()),
            stiff_count: 0,
            nonstiff_count: 0,
        }
    }

    /// Always form the tableau's own continuous extension, also when the
    /// run's options do not ask for dense output.
    pub fn with_dense_output(mut self) -> Self {
        self.force_dense = true;
        self
    }

    /// Stages 2..s and the new solution for step size h from (t, y) with
    /// k[0] = f(t, y) already set; the solution goes to `ytmp`, the error
    /// estimate (if the tableau has one) to `err`.
    fn stages(&mut self, p: &mut dyn OdeProblem, h: f64) -> Result<(), IntegrateError> {
        let tab = self.tab;
        let s = tab.stages();
        // Each combination Σ_j c_j k_j is summed over j in ascending order
        // for every component, stage by stage into an accumulator (a pass
        // over contiguous k_j per nonzero coefficient), the same sums in
        // the same order as component by component.
        for i in 1..s {
            combine(&mut self.ytmp, tab.a[i].iter().copied(), &self.k, true);
            for (yt, y) in self.ytmp.iter_mut().zip(&self.st.y) {
                *yt = y + h * *yt;
            }
            let (_, rest) = self.k.split_at_mut(i);
            p.rhs(self.st.t + tab.c[i] * h, &self.ytmp, &mut rest[0])?;
        }
        // propagated solution
        combine(&mut self.ytmp, tab.b.iter().copied(), &self.k, false);
        for (yt, y) in self.ytmp.iter_mut().zip(&self.st.y) {
            *yt = y + h * *yt;
        }
        match tab.error {
            ErrorEstimate::None => {}
            ErrorEstimate::Embedded { b_hat, .. } => {
                let e = tab.b.iter().zip(b_hat).map(|(b, bh)| b - bh);
                combine(&mut self.err, e.take(s), &self.k, false);
                self.err.iter_mut().for_each(|e| *e *= h);
            }
            ErrorEstimate::Combined53 { e5, b_hat3 } => {
                combine(&mut self.err, e5.iter().copied().take(s), &self.k, false);
                let e3 = tab.b.iter().zip(b_hat3).map(|(b, bh)| b - bh);
                combine(&mut self.err2, e3.take(s), &self.k, false);
                self.err.iter_mut().for_each(|e| *e *= h);
                self.err2.iter_mut().for_each(|e| *e *= h);
            }
        }
        Ok(())
    }

    /// Error norm of the attempted step (≤ 1: accept), see [`ErrorEstimate`].
    fn error_norm(&self, opts: &SolverOptions) -> f64 {
        let e5 = wrms_norm(&self.err, &self.st.y, &self.ytmp, opts.rtol, opts.atol);
        match self.tab.error {
            ErrorEstimate::Combined53 { .. } => {
                let e3 = wrms_norm(&self.err2, &self.st.y, &self.ytmp, opts.rtol, opts.atol);
                let e5s = e5 * e5;
                let den = e5s + 0.01 * e3 * e3;
                if den > 0.0 {
                    e5s / den.sqrt()
                } else {
                    0.0
                }
            }
            _ => e5,
        }
    }

    /// Hairer's stiffness test on the last two stages at c = 1 (dopri5.f):
    /// h ρ ≈ h ‖k_s − k_{s−1}‖ / ‖y_s − y_{s−1}‖ above the tableau's bound
    /// for 15 accepted steps in a row means stiff.
    fn stiffness_test(&mut self, h: f64) -> bool {
        let Some(bound) = self.tab.stiffness_bound else {
            return false;
        };
        let s = self.tab.stages();
        if !self.tab.fsal || s < 2 {
            return false;
        }
        // y_s = ytmp (the new solution); y_{s-1} is recomputed from row s-1
        let n = self.st.y.len();
        let (mut num, mut den) = (0.0, 0.0);
        for m in 0..n {
            let mut acc = 0.0;
            for (j, aij) in self.tab.a[s - 2].iter().enumerate() {
                acc += aij * self.k[j][m];
            }
            let ysm1 = self.st.y[m] + h * acc;
            num += (self.k[s - 1][m] - self.k[s - 2][m]).powi(2);
            den += (self.ytmp[m] - ysm1).powi(2);
        }
        if den > 0.0 && h * (num / den).sqrt() > bound {
            self.nonstiff_count = 0;
            self.stiff_count += 1;
            self.stiff_count >= 15
        } else {
            self.nonstiff_count += 1;
            if self.nonstiff_count >= 6 {
                self.stiff_count = 0;
            }
            false
        }
    }
}

impl Stepper for ExplicitRk {
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
        let n = y0.len();
        let extra = match self.tab.dense {
            DenseOutput::Dop853 { c, .. } => c.len(),
            _ => 0,
        };
        let s = self.tab.stages() + extra;
        if self.ytmp.len() != n || self.k.len() != s {
            self.k = vec![vec![0.0; n]; s];
            self.ytmp = vec![0.0; n];
            self.err = vec![0.0; n];
            self.err2 = vec![0.0; n];
            self.cont = if extra > 0 {
                vec![vec![0.0; n]; 7]
            } else {
                Vec::new()
            };
        }
        self.st.restart_at(p, t0, y0, ctx)?;
        self.f_cur_valid = true;
        self.cont_valid = false;
        self.h_accepted = 0.0;
        if ctx.opts.fixed_step.is_none() && !self.tab.adaptive() {
            return Err(IntegrateError::Unsupported {
                method: self.tab.name.into(),
                detail: "has no error estimator: give a fixed step size".into(),
            });
        }
        self.st.loop_state = LoopState::default();
        self.st
            .choose_step(self.tab.name, p, self.error_order(), ctx.opts)
    }

    /// One accepted step by the shared loop ([`step_loop::advance`]).
    fn step(
        &mut self,
        p: &mut dyn OdeProblem,
        t_stop: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        step_loop::advance(self, p, t_stop, ctx)
    }

    crate::one_step::one_step_accessors!();

    /// DOP853's three extra stages for the last accepted step, unless
    /// formed already (or the stepper was just reset: nothing to extend).
    fn prepare_dense_output(&mut self, p: &mut dyn OdeProblem) -> Result<(), IntegrateError> {
        if let DenseOutput::Dop853 { c, a, d } = self.tab.dense {
            if !self.cont_valid && self.h_accepted != 0.0 && self.st.t > self.st.t_prev {
                self.dop853_dense(p, self.h_accepted, c, a, d)?;
            }
        }
        Ok(())
    }

    fn interpolate(&self, t: f64, out: &mut [f64]) {
        let h = self.st.t - self.st.t_prev;
        if h == 0.0 {
            out.copy_from_slice(&self.st.y);
            return;
        }
        let theta = (t - self.st.t_prev) / h;
        match self.tab.dense {
            DenseOutput::Polynomial(pm) => {
                // y0 + h Σ_i k_i Σ_j P_ij θ^(j+1); k holds the last step's stages
                for (m, o) in out.iter_mut().enumerate() {
                    let mut acc = 0.0;
                    for (i, row) in pm.iter().enumerate() {
                        let mut bi = 0.0;
                        let mut th = theta;
                        for pij in row.iter() {
                            bi += pij * th;
                            th *= theta;
                        }
                        acc += bi * self.k[i][m];
                    }
                    *o = self.st.y_prev[m] + h * acc;
                }
            }
            DenseOutput::Dop853 { .. } if self.cont_valid => {
                // y0 + θ(F0 + (1−θ)(F1 + θ(F2 + (1−θ)(F3 + θ(F4 + (1−θ)(F5 + θ F6))))))
                let th1 = 1.0 - theta;
                for (m, o) in out.iter_mut().enumerate() {
                    let mut acc = 0.0;
                    for (r, f) in self.cont.iter().enumerate().rev() {
                        acc += f[m];
                        acc *= if r % 2 == 0 { theta } else { th1 };
                    }
                    *o = self.st.y_prev[m] + acc;
                }
            }
            _ => hermite_cubic(
                self.st.t_prev,
                &self.st.y_prev,
                &self.st.f_prev,
                self.st.t,
                &self.st.y,
                &self.st.f_cur,
                t,
                out,
            ),
        }
    }
}

impl StepAttempt for ExplicitRk {
    crate::step_loop::step_state_accessors!(st);

    fn attempt(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<Trial, IntegrateError> {
        self.k[0].copy_from_slice(&self.st.f_cur);
        let attempt = self.stages(p, h);
        if ctx.opts.fixed_step.is_some() {
            attempt?;
            return Ok(Trial::Unchecked);
        }
        match attempt {
            Ok(()) => Ok(Trial::Estimated(self.error_norm(ctx.opts))),
            // a trial stage that overflows rejects the step. An inner
            // iteration that fails (NoConvergence, Singular) stays fatal:
            // shrinking h there can converge onto a false state at a
            // singular configuration of the formulation.
            Err(IntegrateError::Eval {
                source: EvalError::NonFinite { .. },
            }) => Ok(Trial::Estimated(f64::INFINITY)),
            Err(e) => Err(e),
        }
    }

    fn factor(&mut self, err: f64, h: f64, accepted: bool) -> f64 {
        let fac = self
            .st
            .controller
            .factor(err, h, self.tab.controller_order());
        if accepted {
            self.st.controller.accepted(err, h);
        }
        fac
    }

    fn passes(&self, err: f64, h: f64) -> bool {
        self.st.controller.accept(err, h)
    }

    fn commit(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        if ctx.opts.fixed_step.is_none() && self.stiffness_test(h) {
            // a diagnosis, as in dopri5.f: the run goes on unless asked to stop
            if ctx.opts.stop_when_stiff {
                return Err(IntegrateError::ProbablyStiff {
                    t: self.st.t,
                    detail: format!(
                        "{}: h·ρ exceeded {} for 15 steps",
                        self.tab.name,
                        self.tab.stiffness_bound.unwrap_or(0.0)
                    ),
                });
            }
            if ctx.stats.stiffness_detected_at.is_none() {
                ctx.stats.stiffness_detected_at = Some(self.st.t);
                ctx.stats.steps_at_stiffness_detection = ctx.stats.n_steps();
            }
        }
        self.accept(p, h)
    }

    fn restart_here(
        &mut self,
        p: &mut dyn OdeProblem,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        // f at the new point is known (FSAL stage or evaluated by accept)
        self.stiff_count = 0;
        self.nonstiff_count = 0;
        self.st.restart_here(p, self.error_order(), ctx.opts)
    }
}

impl ExplicitRk {
    /// The order of Hairer's starting step size at the current point.
    fn error_order(&self) -> u32 {
        match self.tab.error {
            ErrorEstimate::Combined53 { .. } => self.tab.order,
            _ => self.tab.controller_order(),
        }
    }

    /// Make the attempted step (in `ytmp`, stages in `k`) the current point.
    fn accept(&mut self, p: &mut dyn OdeProblem, h: f64) -> Result<(), IntegrateError> {
        let fsal = self.tab.fsal.then_some(&self.k[self.tab.stages() - 1][..]);
        self.st.accept(p, h, &self.ytmp, fsal)?;
        self.cont_valid = false;
        self.h_accepted = h;
        if let DenseOutput::Dop853 { c, a, d } = self.tab.dense {
            if self.force_dense {
                self.dop853_dense(p, h, c, a, d)?;
            }
        }
        Ok(())
    }

    /// The extra stages and coefficients F₀..F₆ of the DOP853 continuous
    /// extension ([`DenseOutput::Dop853`]) of the step just accepted.
    fn dop853_dense(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        c: &[f64],
        a: &[&[f64]],
        d: &[&[f64]],
    ) -> Result<(), IntegrateError> {
        let n = self.st.y.len();
        let s = self.tab.stages();
        // k_s = f(t1, y1) is the FSAL stage; extra stages s+1.. follow
        for (r, row) in a.iter().enumerate() {
            for m in 0..n {
                let mut acc = 0.0;
                for (j, aij) in row.iter().enumerate() {
                    if *aij != 0.0 {
                        acc += aij * self.k[j][m];
                    }
                }
                self.ytmp[m] = self.st.y_prev[m] + h * acc;
            }
            let (_, rest) = self.k.split_at_mut(s + r);
            p.rhs(self.st.t_prev + c[r] * h, &self.ytmp, &mut rest[0])?;
        }
        for m in 0..n {
            let dy = self.st.y[m] - self.st.y_prev[m];
            let bspl = h * self.k[0][m] - dy;
            self.cont[0][m] = dy;
            self.cont[1][m] = bspl;
            self.cont[2][m] = dy - h * self.k[s - 1][m] - bspl;
            for (r, drow) in d.iter().enumerate() {
                let mut acc = 0.0;
                for (j, dj) in drow.iter().enumerate() {
                    acc += dj * self.k[j][m];
                }
                self.cont[3 + r][m] = h * acc;
            }
        }
        self.cont_valid = true;
        Ok(())
    }
}

/// out = Σ_j c_j k_j, summed over j in ascending order for each component
/// (the first term assigned, the rest added); with `skip_zeros`, terms
/// with c_j = 0 are left out (0 · k_j would turn an infinite stage into
/// NaN).
#[inline]
fn combine(out: &mut [f64], c: impl Iterator<Item = f64>, k: &[Vec<f64>], skip_zeros: bool) {
    out.fill(0.0);
    for (cj, kj) in c.zip(k) {
        if skip_zeros && cj == 0.0 {
            continue;
        }
        for (o, x) in out.iter_mut().zip(kj) {
            *o += cj * x;
        }
    }
}
