//! Variable-step Adams predictor–corrector codes in variable-coefficient
//! form: `pece` (fixed order, Milne's error estimate) and `adams_vo`
//! (variable order in the manner of Shampine & Gordon's DE).
//!
//! On the grid t_n, t_{n−1}, ... with back derivatives f_i, one step
//! h = t_{n+1} − t_n is
//!
//! - P: y^P = y_n + h Σ_i w_i f_i, the integral over [t_n, t_{n+1}] of the
//!   polynomial through the last k_P back values (Adams–Bashforth of order
//!   k_P on the actual, unequal grid; HNW I, Section III.5, eq. (5.3));
//! - (E C)^m: f^(l) = f(t_{n+1}, y^(l)), y^(l+1) = y_n + h (w*_0 f^(l) +
//!   Σ_i w*_i f_i) (Adams–Moulton through t_{n+1} and k_C − 1 back values);
//! - E: f_{n+1} = f(t_{n+1}, y_{n+1}) (omitted with `final_eval` = 0).
//!
//! The weights w_i are integrals of the Lagrange basis on the actual nodes
//! ([`super::lagrange`]), recomputed each step: this is the
//! variable-coefficient form, mathematically the divided-difference form of
//! Shampine & Gordon (1975), ch. 4 (the φ, g recurrences), written with the
//! Lagrange basis; no interpolation of back values is needed when h changes.
//!
//! **pece** (order p, P(EC)^m E): AB order p predictor, AM order p
//! corrector; local error by Milne's device (jalon-bayo 7.1.3, eq. 7.27),
//! est = C*/(C − C*) (y^C − y^P) with the constant-step error constants
//! (an approximation on variable grids). Start: order 1 with a small step,
//! the order rising by one per step up to p as back values accrue (the
//! error control keeps the ramp accurate). With a fixed step size, the
//! p − 1 starting values come from RK4 ([`super::start`]) instead.
//!
//! **adams_vo** (orders 1..12): predictor of order k, corrector of order
//! k + 1 (local extrapolation, as in DE). Error estimates at neighbouring
//! orders from correctors of consecutive orders sharing f^P:
//! E_q = ‖y^C_{q+1} − y^C_q‖ for q = k − 2, k − 1, k, and E_{k+1} after the
//! final evaluation. Order selection as DE (Shampine & Gordon 1975, ch. 5;
//! HNW I, III.7): lower the order when max(E_{k−1}, E_{k−2}) ≤ E_k; raise it
//! after k + 1 steps at order k when E_{k+1} < E_k; in the start phase
//! (until the first rejection or lowering) raise the order every step.
//! The step then follows h_new = h · clamp(0.9 E_q^(−1/(q+1)), 0.2, 2)
//! (with [`ErrorPer::UnitStep`]: E_q/h and exponent 1/q).
//! After three rejections in a row the order drops to 1.
//!
//! Both run in the shared step loop ([`crate::step_loop::advance`]),
//! supplying the trial step, the order selection and the step factor
//! ([`StepAttempt`]); adams_vo's E_{k+1}, which needs f at the new point,
//! is computed in the trial once E_k passes.
//!
//! Dense output: y(t) = y_{n+1} + ∫_{t_{n+1}}^{t} P(s) ds, P the corrector's
//! interpolation polynomial through the final derivative values.

use crate::controller::{ErrorPer, StepController};
use crate::discontinuity::resolution_floor;
use crate::error::{EvalError, IntegrateError};
use crate::initial_step::initial_step;
use crate::multistep::coeffs::milne_factor;
use crate::multistep::lagrange::{Gauss8, MAX_NODES};
use crate::multistep::start::Rk4Scratch;
use crate::norm::wrms_norm;
use crate::problem::OdeProblem;
use crate::step_loop::{self, LoopState, StepAttempt, Trial};
use crate::stepper::{StepContext, Stepper};

/// Which Adams code.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AdamsMode {
    /// P(EC)^m E with AB/AM of order `order`, Milne's device.
    Pece {
        /// Order p (1..5).
        order: usize,
        /// Corrections per step m ≥ 1.
        m: usize,
        /// Evaluate f at the corrected value (PECE) or not (PEC).
        final_eval: bool,
    },
    /// Variable order 1..`max_order` (≤ 12).
    VariableOrder {
        /// Largest order.
        max_order: usize,
    },
}

/// Variable-step Adams predictor–corrector stepper.
pub struct VarAdams {
    name: &'static str,
    mode: AdamsMode,
    gauss: Gauss8,
    t: f64,
    t_prev: f64,
    h: f64,
    k: usize,
    y: Vec<f64>,
    y_prev: Vec<f64>,
    /// back times / derivatives, newest first
    ht: Vec<f64>,
    hf: Vec<Vec<f64>>,
    nhist: usize,
    /// nodes used by the dense output (corrector of the last step)
    dense_nodes: usize,
    yp: Vec<f64>,
    yc: Vec<f64>,
    ya: Vec<f64>,
    yb: Vec<f64>,
    fnew: Vec<f64>,
    diff: Vec<f64>,
    controller: StepController,
    start_phase: bool,
    steps_at_order: usize,
    rk4: Rk4Scratch,
    rtol: f64,
    atol: f64,
    /// the shared step loop's state ([`step_loop::advance`])
    loop_state: LoopState,
    /// failed trials of the current step
    rejected_in_a_row: u32,
    /// what the current trial left for the loop
    trial: AdamsTrial,
}

impl VarAdams {
    /// A stepper in `mode`, registered as `name`.
    pub fn new(name: &'static str, mode: AdamsMode) -> Self {
        Self {
            name,
            mode,
            gauss: Gauss8::new(),
            t: 0.0,
            t_prev: 0.0,
            h: 0.0,
            k: 1,
            y: Vec::new(),
            y_prev: Vec::new(),
            ht: Vec::new(),
            hf: Vec::new(),
            nhist: 0,
            dense_nodes: 1,
            yp: Vec::new(),
            yc: Vec::new(),
            ya: Vec::new(),
            yb: Vec::new(),
            fnew: Vec::new(),
            diff: Vec::new(),
            controller: StepController::default(),
            start_phase: true,
            steps_at_order: 0,
            rk4: Rk4Scratch::default(),
            rtol: 1e-6,
            atol: 1e-8,
            loop_state: LoopState::default(),
            rejected_in_a_row: 0,
            trial: AdamsTrial::default(),
        }
    }

    fn max_order(&self) -> usize {
        match self.mode {
            AdamsMode::Pece { order, .. } => order,
            AdamsMode::VariableOrder { max_order } => max_order,
        }
    }

    /// out = y_n + h Σ w_i g_i over `nb` back values with the new point
    /// (derivative `fnew`) first when `with_new`.
    fn adams_sum(&self, h: f64, with_new: bool, nb: usize, fnew: &[f64], out: &mut [f64]) {
        let mut nodes = [0.0; MAX_NODES];
        let mut w = [0.0; MAX_NODES];
        let off = usize::from(with_new);
        if with_new {
            nodes[0] = 1.0;
        }
        for i in 0..nb {
            nodes[off + i] = (self.ht[i] - self.t) / h;
        }
        let m = off + nb;
        self.gauss.lagrange_integrals(&nodes[..m], 1.0, &mut w);
        for (j, o) in out.iter_mut().enumerate() {
            let mut s = if with_new { w[0] * fnew[j] } else { 0.0 };
            for i in 0..nb {
                s += w[off + i] * self.hf[i][j];
            }
            *o = self.y[j] + h * s;
        }
    }

    /// Push (t + h, y_new = yc, f_new) into the history.
    fn push(&mut self, h: f64) {
        self.t_prev = self.t;
        self.y_prev.copy_from_slice(&self.y);
        self.t += h;
        self.y.copy_from_slice(&self.yc);
        self.ht.rotate_right(1);
        self.hf.rotate_right(1);
        self.ht[0] = self.t;
        self.hf[0].copy_from_slice(&self.fnew);
        self.nhist = (self.nhist + 1).min(self.ht.len());
    }

    fn err_norm(&mut self, a_is_ya: bool, opts_rtol: f64, opts_atol: f64, scale: f64) -> f64 {
        let other = if a_is_ya { &self.ya } else { &self.yp };
        for j in 0..self.diff.len() {
            self.diff[j] = scale * (self.yc[j] - other[j]);
        }
        wrms_norm(&self.diff, &self.y, &self.yc, opts_rtol, opts_atol)
    }

    /// Corrector y^C of order q (q nodes: the new point + q − 1 back values) into `ya` or `yb`.
    fn corrector_into(&mut self, h: f64, q: usize, into_a: bool) {
        let mut out = std::mem::take(if into_a { &mut self.ya } else { &mut self.yb });
        let fnew = std::mem::take(&mut self.fnew);
        self.adams_sum(h, true, q - 1, &fnew, &mut out);
        self.fnew = fnew;
        if into_a {
            self.ya = out;
        } else {
            self.yb = out;
        }
    }

    fn wrms_ab(&self, rtol: f64, atol: f64, diff: &mut [f64]) -> f64 {
        for j in 0..diff.len() {
            diff[j] = self.ya[j] - self.yb[j];
        }
        wrms_norm(diff, &self.y, &self.yc, rtol, atol)
    }

    /// P(EC)^m with predictor of order kp (kp back values) and corrector
    /// of order kc (new point + kc − 1 back values). Leaves y^P in `yp`,
    /// y^C in `yc`, the derivative used by the last correction in `fnew`;
    /// the final E (f(y^C)) is done by the caller once the step is accepted.
    fn pec(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        kp: usize,
        kc: usize,
        m: usize,
    ) -> Result<(), IntegrateError> {
        let t_new = self.t + h;
        let mut yp = std::mem::take(&mut self.yp);
        self.adams_sum(h, false, kp, &[], &mut yp);
        self.yp = yp;
        self.yc.copy_from_slice(&self.yp);
        for _ in 0..m {
            p.rhs(t_new, &self.yc, &mut self.fnew)?;
            let mut yc = std::mem::take(&mut self.yc);
            let fnew = std::mem::take(&mut self.fnew);
            self.adams_sum(h, true, kc - 1, &fnew, &mut yc);
            self.fnew = fnew;
            self.yc = yc;
        }
        Ok(())
    }
}

impl Stepper for VarAdams {
    fn name(&self) -> &'static str {
        self.name
    }

    /// A projection moves y_n; the newest derivative in the history is
    /// re-evaluated there and the older ones are kept (one f-evaluation
    /// instead of a restart at order 1).
    fn correct(
        &mut self,
        p: &mut dyn OdeProblem,
        y: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        if y.len() != self.y.len() || self.hf.is_empty() {
            let t = self.t;
            return self.reset(p, t, y, ctx);
        }
        self.y.copy_from_slice(y);
        p.rhs(self.t, y, &mut self.hf[0])?;
        Ok(())
    }

    fn reset(
        &mut self,
        p: &mut dyn OdeProblem,
        t0: f64,
        y0: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.loop_state = LoopState::default();
        self.start_at(p, t0, y0, ctx)
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

    crate::one_step::one_step_accessors!(fields);

    fn interpolate(&self, t: f64, out: &mut [f64]) {
        let h = self.t - self.t_prev;
        if h == 0.0 {
            out.copy_from_slice(&self.y);
            return;
        }
        let m = self.dense_nodes.min(self.nhist).max(1);
        let mut nodes = [0.0; MAX_NODES];
        let mut w = [0.0; MAX_NODES];
        for i in 0..m {
            nodes[i] = (self.ht[i] - self.t) / h;
        }
        self.gauss
            .lagrange_integrals(&nodes[..m], (t - self.t) / h, &mut w);
        for (j, o) in out.iter_mut().enumerate() {
            let mut s = 0.0;
            for i in 0..m {
                s += w[i] * self.hf[i][j];
            }
            *o = self.y[j] + h * s;
        }
    }
}

/// Whether a step attempt failed only because f was not finite at a
/// predicted or corrected value (then the step is retried smaller).
fn nonfinite(r: &Result<(), IntegrateError>) -> Result<bool, IntegrateError> {
    match r {
        Ok(()) => Ok(false),
        Err(IntegrateError::Eval {
            source: EvalError::NonFinite { .. },
        }) => Ok(true),
        Err(e) => Err(e.clone()),
    }
}

/// What a trial step of [`VarAdams`] leaves for the step loop's
/// [`StepAttempt::factor`] and [`StepAttempt::commit`].
#[derive(Clone, Copy, Debug)]
struct AdamsTrial {
    /// order of the trial (predictor order)
    k: usize,
    /// a fixed step, complete (final evaluation done)
    fixed: bool,
    /// corrector nodes of the dense output of a fixed step
    dense_nodes: usize,
    /// fnew = f(t + h, y^C) already evaluated
    f_final: bool,
    /// adams_vo: E_{k−1}, E_{k−2}, E_{k+1} (∞: not available)
    e_km1: f64,
    e_km2: f64,
    e_kp1: f64,
    /// adams_vo: (order, steps at that order, start phase) chosen for
    /// the next trial
    order_next: Option<(usize, usize, bool)>,
}

impl Default for AdamsTrial {
    fn default() -> Self {
        Self {
            k: 1,
            fixed: false,
            dense_nodes: 1,
            f_final: false,
            e_km1: f64::INFINITY,
            e_km2: f64::INFINITY,
            e_kp1: f64::INFINITY,
            order_next: None,
        }
    }
}

impl VarAdams {
    /// (Re)start at (t0, y0) at order 1 with a first step chosen anew
    /// (the loop state is the caller's).
    fn start_at(
        &mut self,
        p: &mut dyn OdeProblem,
        t0: f64,
        y0: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let n = y0.len();
        let cap = self.max_order() + 2;
        if self.y.len() != n || self.ht.len() != cap {
            self.y = vec![0.0; n];
            self.y_prev = vec![0.0; n];
            self.ht = vec![0.0; cap];
            self.hf = vec![vec![0.0; n]; cap];
            self.yp = vec![0.0; n];
            self.yc = vec![0.0; n];
            self.ya = vec![0.0; n];
            self.yb = vec![0.0; n];
            self.fnew = vec![0.0; n];
            self.diff = vec![0.0; n];
            self.rk4 = Rk4Scratch::new(n);
        }
        self.t = t0;
        self.t_prev = t0;
        self.y.copy_from_slice(y0);
        self.y_prev.copy_from_slice(y0);
        self.ht[0] = t0;
        p.rhs(t0, y0, &mut self.hf[0])?;
        self.nhist = 1;
        self.dense_nodes = 1;
        self.k = 1;
        self.start_phase = true;
        self.steps_at_order = 0;
        self.rtol = ctx.opts.rtol;
        self.atol = ctx.opts.atol;
        self.controller = StepController::new(ctx.opts.controller, ctx.opts.error_per);
        // multistep formulas: at most doubling per step (as DE), so that the
        // variable-coefficient formulas and Milne's constants stay valid
        self.controller.fac_max = 2.0;
        if let Some(h) = ctx.opts.fixed_step {
            if !(h > 0.0 && h.is_finite()) {
                return Err(IntegrateError::BadMethod(format!(
                    "{}: fixed step size must be positive and finite, got {h}",
                    self.name
                )));
            }
            if let AdamsMode::VariableOrder { .. } = self.mode {
                return Err(IntegrateError::Unsupported {
                    method: self.name.into(),
                    detail: "variable-order code needs error control: give no fixed step size (use pece for fixed steps)".into(),
                });
            }
            self.h = h;
        } else {
            // order-1 start with a quarter of Hairer's first-step guess
            let h0 = match ctx.opts.h0 {
                Some(h0) => h0,
                None => {
                    let f0 = self.hf[0].clone();
                    0.25 * initial_step(
                        p,
                        t0,
                        y0,
                        &f0,
                        1,
                        ctx.opts.rtol,
                        ctx.opts.atol,
                        ctx.opts.h_max,
                        1.0,
                    )?
                }
            };
            self.h = h0;
        }
        Ok(())
    }

    /// One fixed step of size h (pece only): RK4 while fewer than p back
    /// values exist, then P(EC)^m (E).
    fn attempt_fixed(&mut self, p: &mut dyn OdeProblem, h: f64) -> Result<(), IntegrateError> {
        let AdamsMode::Pece {
            order,
            m,
            final_eval,
        } = self.mode
        else {
            return Err(IntegrateError::Unsupported {
                method: self.name.into(),
                detail: "variable-order code needs error control (no fixed step size)".into(),
            });
        };
        if self.nhist < order {
            let (y0, f0) = (&self.y, &self.hf[0]);
            self.rk4.step(p, self.t, y0, f0, h, &mut self.yc)?;
            p.rhs(self.t + h, &self.yc, &mut self.fnew)?;
            self.trial.dense_nodes = self.nhist.min(order - 1) + 1;
        } else {
            self.pec(p, h, order, order, m)?;
            if final_eval {
                p.rhs(self.t + h, &self.yc, &mut self.fnew)?;
            }
            self.trial.dense_nodes = order;
        }
        self.trial.fixed = true;
        Ok(())
    }

    /// adams_vo after an accepted trial of order k with E_k = `e_k`
    /// (Shampine & Gordon 1975, ch. 5): lower the order when
    /// max(E_{k−1}, E_{k−2}) ≤ E_k; raise it in the start phase, or after
    /// k + 1 steps at order k when E_{k+1} < E_k; then
    /// h_new / h = clamp(0.9 E_q^(−1/(q+1)), 0.2, 2) at the new order q
    /// (exponent 1/q per unit step). The order takes effect in commit.
    fn select_after_acceptance(&mut self, e_k: f64, max_order: usize) -> f64 {
        let k = self.trial.k;
        let (e_km1, e_km2, e_kp1) = (self.trial.e_km1, self.trial.e_km2, self.trial.e_kp1);
        let eps_shift = self.eps_shift();
        let mut steps = self.steps_at_order + 1;
        let mut start = self.start_phase;
        let lower = k > 1 && e_km1.max(if k >= 3 { e_km2 } else { 0.0 }) <= e_k;
        let mut knew = k;
        if lower {
            knew = k - 1;
            start = false;
        } else if k < max_order && (start || (steps > k && e_kp1 < e_k)) {
            knew = k + 1;
        }
        let e_new = match knew.cmp(&k) {
            std::cmp::Ordering::Less => e_km1,
            std::cmp::Ordering::Equal => e_k,
            std::cmp::Ordering::Greater => {
                if e_kp1.is_finite() {
                    e_kp1
                } else {
                    e_k
                }
            }
        };
        if knew != k {
            steps = 0;
        }
        self.trial.order_next = Some((knew, steps, start));
        (0.9 * e_new.max(1e-10).powf(-1.0 / (knew as f64 + eps_shift))).clamp(0.2, 2.0)
    }

    /// adams_vo after a trial of order k rejected with E_k = `e_k`:
    /// h_new / h = clamp(0.9 E_k^(−1/(k+1)), 0.2, 0.9); the next trial at
    /// order k − 1 when E_{k−1} ≤ E_k, at order 1 after three failures in
    /// a row; the start phase ends.
    fn select_after_rejection(&mut self, e_k: f64) -> f64 {
        let k = self.trial.k;
        let mut next = (self.k, self.steps_at_order, false);
        if self.rejected_in_a_row >= 2 {
            next = (1, 0, false);
        } else if k > 1 && self.trial.e_km1 <= e_k {
            next = (k - 1, 0, false);
        }
        self.trial.order_next = Some(next);
        (0.9 * e_k.powf(-1.0 / (k as f64 + self.eps_shift()))).clamp(0.2, 0.9)
    }

    /// 1 for error per step (exponent 1/(q+1)), 0 per unit step (1/q).
    fn eps_shift(&self) -> f64 {
        match self.controller.per {
            ErrorPer::Step => 1.0,
            ErrorPer::UnitStep => 0.0,
        }
    }

    /// ‖y^C_{q+1} − y^C_q‖ for the trial step of size h, as if its new
    /// point (t + h, y^C, f(y^C) in `fnew`) were the newest history point:
    /// the error estimate at order q after the step (E_{k+1} of DE), before
    /// the step is committed.
    fn estimate_with_new(&mut self, h: f64, q: usize) -> f64 {
        let mut nodes = [0.0; MAX_NODES];
        let mut wa = [0.0; MAX_NODES];
        let mut wb = [0.0; MAX_NODES];
        // nodes relative to t_n: t_{n+1} (the new point), then the history
        nodes[0] = ((self.t + h) - self.t) / h;
        for i in 1..=q {
            nodes[i] = (self.ht[i - 1] - self.t) / h;
        }
        self.gauss.lagrange_integrals(&nodes[..=q], 1.0, &mut wa);
        self.gauss.lagrange_integrals(&nodes[..q], 1.0, &mut wb);
        for j in 0..self.diff.len() {
            let mut s = 0.0;
            for i in 0..=q {
                let b = if i < q { wb[i] } else { 0.0 };
                let f = if i == 0 {
                    self.fnew[j]
                } else {
                    self.hf[i - 1][j]
                };
                s += (wa[i] - b) * f;
            }
            self.diff[j] = h * s;
        }
        wrms_norm(&self.diff, &self.y, &self.yc, self.rtol, self.atol)
    }
}

impl StepAttempt for VarAdams {
    crate::step_loop::step_state_accessors!();

    /// P(EC)^m at the order the history allows. pece: Milne's estimate;
    /// adams_vo: E_k, E_{k−1}, E_{k−2} from correctors of consecutive
    /// orders and, when E_k passes, the final evaluation and E_{k+1}
    /// (module doc). f not finite at a predicted or corrected value: the
    /// step is retried at h/4. Fixed steps (pece): RK4 for the starting
    /// values, then P(EC)^m E without an estimate.
    fn attempt(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<Trial, IntegrateError> {
        self.trial = AdamsTrial::default();
        if ctx.opts.fixed_step.is_some() {
            return self.attempt_fixed(p, h).map(|()| Trial::Unchecked);
        }
        let k = self.k.min(self.nhist).max(1);
        self.trial.k = k;
        let (rtol, atol) = (self.rtol, self.atol);
        match self.mode {
            AdamsMode::Pece { m, .. } => {
                if nonfinite(&self.pec(p, h, k, k, m))? {
                    self.rejected_in_a_row += 1;
                    return Ok(Trial::Failed { factor: 0.25 });
                }
                Ok(Trial::Estimated(self.err_norm(
                    false,
                    rtol,
                    atol,
                    milne_factor(k),
                )))
            }
            AdamsMode::VariableOrder { max_order } => {
                // error per step, or per unit step (E/h)
                let per = match self.controller.per {
                    ErrorPer::Step => 1.0,
                    ErrorPer::UnitStep => 1.0 / h,
                };
                // predictor order k, corrector order k + 1
                if nonfinite(&self.pec(p, h, k, k + 1, 1))? {
                    self.rejected_in_a_row += 1;
                    return Ok(Trial::Failed { factor: 0.25 });
                }
                // E_k = ‖y^C_{k+1} − y^C_k‖ with the same f^P
                self.corrector_into(h, k, true);
                let e_k = self.err_norm(true, rtol, atol, 1.0) * per;
                let mut diff = std::mem::take(&mut self.diff);
                if k >= 2 {
                    self.corrector_into(h, k - 1, false);
                    self.trial.e_km1 = self.wrms_ab(rtol, atol, &mut diff) * per;
                    if k >= 3 {
                        std::mem::swap(&mut self.ya, &mut self.yb);
                        self.corrector_into(h, k - 2, false);
                        self.trial.e_km2 = self.wrms_ab(rtol, atol, &mut diff) * per;
                    }
                }
                self.diff = diff;
                if e_k <= 1.0 {
                    // the step passes: the final evaluation, and E_{k+1}
                    // from the history that includes the new point
                    p.rhs(self.t + h, &self.yc, &mut self.fnew)?;
                    self.trial.f_final = true;
                    let nhist_new = (self.nhist + 1).min(self.ht.len());
                    if k < max_order && nhist_new >= k + 2 {
                        self.trial.e_kp1 = self.estimate_with_new(h, k + 1) * per;
                    }
                }
                Ok(Trial::Estimated(e_k))
            }
        }
    }

    /// The step after one trimmed to t_stop follows from the trimmed one
    /// (the selection bounds the ratio of successive steps).
    fn resumes_after_trim(&self) -> bool {
        false
    }

    fn passes(&self, err: f64, h: f64) -> bool {
        match self.mode {
            AdamsMode::Pece { .. } => self.controller.accept(err, h),
            AdamsMode::VariableOrder { .. } => err <= 1.0,
        }
    }

    fn factor(&mut self, err: f64, h: f64, accepted: bool) -> f64 {
        let k = self.trial.k;
        match self.mode {
            AdamsMode::Pece { .. } => {
                let fac = self.controller.factor(err, h, k as u32);
                if accepted {
                    self.controller.accepted(err, h);
                }
                fac
            }
            AdamsMode::VariableOrder { max_order } => {
                if accepted {
                    self.select_after_acceptance(err, max_order)
                } else {
                    self.select_after_rejection(err)
                }
            }
        }
    }

    fn rejected(
        &mut self,
        _p: &mut dyn OdeProblem,
        _h: f64,
        _ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.rejected_in_a_row += 1;
        if let Some((k, steps, start)) = self.trial.order_next.take() {
            (self.k, self.steps_at_order, self.start_phase) = (k, steps, start);
        }
        Ok(())
    }

    /// The final evaluation (when not yet done), the new point into the
    /// history, and the order for the next step.
    fn commit(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        _ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let trial = std::mem::take(&mut self.trial);
        if trial.fixed {
            // fixed steps: everything was done by the trial
            self.dense_nodes = trial.dense_nodes;
            self.push(h);
            return Ok(());
        }
        let (final_eval, dense_nodes) = match self.mode {
            AdamsMode::Pece { final_eval, .. } => (final_eval, trial.k),
            AdamsMode::VariableOrder { .. } => (true, trial.k + 1),
        };
        if final_eval && !trial.f_final {
            p.rhs(self.t + h, &self.yc, &mut self.fnew)?;
        }
        self.dense_nodes = dense_nodes;
        self.push(h);
        match self.mode {
            AdamsMode::Pece { .. } => {
                if self.k < self.max_order() {
                    self.k += 1;
                }
            }
            AdamsMode::VariableOrder { .. } => {
                if let Some((k, steps, start)) = trial.order_next {
                    (self.k, self.steps_at_order, self.start_phase) = (k, steps, start);
                }
            }
        }
        Ok(())
    }

    /// Start again at order 1 from the current point (the history spans
    /// the jump), with a first step chosen anew.
    /// Not below the smallest step the arithmetic resolves at t
    /// ([`resolution_floor`]): the crossing step itself had that size,
    /// and a first-step estimate from a tiny y and a large f (Hairer's,
    /// 0.01 ‖y‖/‖f‖) can fall below it, which the loop reports as an
    /// underflow.
    fn restart_here(
        &mut self,
        p: &mut dyn OdeProblem,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let (t, y) = (self.t, self.y.clone());
        self.start_at(p, t, &y, ctx)?;
        self.h = self.h.max(resolution_floor(t));
        Ok(())
    }
}
