//! Cash–Karp variable-order Runge–Kutta with the early-quit strategy.
//!
//! The [`CASH_KARP`] tableau carries embedded solutions of orders 1..5
//! ([`CASH_KARP_LOW_ORDER`], b̂, b), spread so that stages 2, 4 and 6 each
//! complete a pair. With the weighted RMS norm ‖·‖ of the tolerances
//! ([`wrms_norm`]) the step h is judged in three checkpoints:
//!
//! 1. after k₁, k₂: E₁ = ‖y⁽²⁾ − y⁽¹⁾‖, ERR₁ = E₁^(1/2);
//! 2. after k₃, k₄: E₂ = ‖y⁽³⁾ − y⁽²⁾‖, ERR₂ = E₂^(1/3);
//! 3. after k₅, k₆: E₄ = ‖y⁽⁵⁾ − y⁽⁴⁾‖, ERR₄ = E₄^(1/5).
//!
//! ERR_q is the factor by which h would have to shrink for pair q to pass.
//! On a smooth solution the ratios QUIT_q = ERR_q / ERR₄ are stable; they
//! are remembered from the last fifth-order step. At checkpoint q ∈ {1, 2}
//! the attempt *quits* (saving the remaining stages) when ERR_q > 1 and the
//! predicted ERR₄ ≈ ERR_q / QUIT_q exceeds the twiddle factor TWIDDLE_q
//! (1.5, 1.1). A quit or a failed checkpoint 3 does not always waste the
//! step: when a lower-order pair passed, a lower-order solution at a
//! shorter step is accepted instead —
//! - ERR₂ ≤ 1: the second-order stage value y₀ + h Σ a₄ⱼ kⱼ at t₀ + 3h/5
//!   (its error ≈ (3/5)³ E₂ ≤ tolerance);
//! - else ERR₁ ≤ 1: the Euler stage value y₀ + (h/5) k₁ at t₀ + h/5
//!   (its error ≈ E₁/25);
//!
//! otherwise the step is rejected. This is how the method gets through
//! sharp transients and rapidly varying right-hand sides cheaply.
//!
//! Source: J. R. Cash and A. H. Karp, "A variable order Runge–Kutta method
//! for initial value problems with rapidly varying right-hand sides", ACM
//! TOMS 16 (1990) 201–222, Sections 3–4 (the embedded formulas, the
//! checkpoints, twiddle and quit factors). The decision rules and the
//! constants above are this crate's reconstruction of the paper's strategy
//! (the paper's text was not at hand to check them line by line), stated
//! exactly so they can be checked; fixed-step runs use the fifth-order
//! solution. Dense output is the cubic Hermite interpolant.

use crate::controller::StepController;
use crate::error::{EvalError, IntegrateError};
use crate::explicit::tableau::{ErrorEstimate, CASH_KARP, CASH_KARP_LOW_ORDER};
use crate::norm::wrms_norm;
use crate::one_step::OneStepState;
use crate::problem::OdeProblem;
use crate::step_loop::{advance, StepAttempt, Trial};
use crate::stepper::{StepContext, Stepper};

/// Twiddle factors of checkpoints 1 and 2: the margin by which the
/// predicted fifth-order error may exceed the tolerance before the attempt
/// is abandoned (values of the paper's kind, chosen here; see module doc).
const TWIDDLE: [f64; 2] = [1.5, 1.1];
/// Bounds of the learnt quit factors (QUIT_q starts at the upper bound,
/// i.e. no early quit before a fifth-order step has been accepted).
const QUIT_RANGE: (f64, f64) = (1.0, 1.0e4);

/// Which solution an attempt produced.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Outcome {
    /// Accept the solution in `ytmp` at t + `frac`·h.
    Accept { frac: f64, order: u32 },
    /// Reject; retry with h · factor.
    Reject { factor: f64 },
}

/// The Cash–Karp variable-order stepper (registry name `cash_karp_vo`).
pub struct CashKarpVo {
    /// The between-steps state ([`OneStepState`]).
    st: OneStepState,
    k: Vec<Vec<f64>>,
    ytmp: Vec<f64>,
    ya: Vec<f64>,
    yb: Vec<f64>,
    diff: Vec<f64>,
    quit: [f64; 2],
    /// Order of the solution accepted last (1, 2 or 5).
    last_order: u32,
    /// Attempts abandoned at checkpoints 1 and 2.
    n_quit: [u64; 2],
    /// Steps accepted with a solution of order 1 or 2.
    n_low_order: u64,
    /// What the last trial produced, and its fourth-order error norm.
    pending: Outcome,
    e4: f64,
}

impl Default for CashKarpVo {
    fn default() -> Self {
        Self::new()
    }
}

impl CashKarpVo {
    /// A new stepper.
    pub fn new() -> Self {
        Self {
            k: Vec::new(),
            ytmp: Vec::new(),
            ya: Vec::new(),
            yb: Vec::new(),
            diff: Vec::new(),
            quit: [QUIT_RANGE.1; 2],
            pending: Outcome::Reject { factor: 1.0 },
            e4: 0.0,
            st: OneStepState::new(StepController::default()),
            last_order: 5,
            n_quit: [0; 2],
            n_low_order: 0,
        }
    }

    /// Attempts abandoned early at checkpoints 1 and 2 since construction.
    pub fn quits(&self) -> [u64; 2] {
        self.n_quit
    }

    /// Steps accepted with a lower-order (1 or 2) solution since construction.
    pub fn low_order_steps(&self) -> u64 {
        self.n_low_order
    }

    /// Order of the solution accepted in the last step (1, 2 or 5).
    pub fn last_order(&self) -> u32 {
        self.last_order
    }

    /// Stage i (1-based i ≥ 2) of the tableau at step h.
    fn stage(&mut self, p: &mut dyn OdeProblem, i: usize, h: f64) -> Result<(), IntegrateError> {
        let row = CASH_KARP.a[i];
        for m in 0..self.st.y.len() {
            let mut acc = 0.0;
            for (j, aij) in row.iter().enumerate() {
                acc += aij * self.k[j][m];
            }
            self.ytmp[m] = self.st.y[m] + h * acc;
        }
        let (_, rest) = self.k.split_at_mut(i);
        p.rhs(self.st.t + CASH_KARP.c[i] * h, &self.ytmp, &mut rest[0])?;
        Ok(())
    }

    /// out = y + h Σ w_j k_j.
    fn combine(y: &[f64], k: &[Vec<f64>], w: &[f64], h: f64, out: &mut [f64]) {
        for (m, o) in out.iter_mut().enumerate() {
            let mut acc = 0.0;
            for (j, wj) in w.iter().enumerate() {
                acc += wj * k[j][m];
            }
            *o = y[m] + h * acc;
        }
    }

    /// ‖yb − ya‖ in the tolerance-weighted RMS norm.
    /// A non-finite distance counts as infinite (the attempt fails).
    fn dist(&mut self, rtol: f64, atol: f64) -> f64 {
        for m in 0..self.st.y.len() {
            self.diff[m] = self.yb[m] - self.ya[m];
        }
        let d = wrms_norm(&self.diff, &self.st.y, &self.yb, rtol, atol);
        if d.is_nan() {
            f64::INFINITY
        } else {
            d
        }
    }

    /// One attempt with step h: the checkpoints of the module doc.
    fn attempt(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        rtol: f64,
        atol: f64,
        fixed: bool,
    ) -> Result<Outcome, IntegrateError> {
        let ErrorEstimate::Embedded { b_hat: b4, .. } = CASH_KARP.error else {
            return Err(IntegrateError::BadMethod(
                "cash_karp_vo: the Cash-Karp tableau lost its embedded solution".into(),
            ));
        };
        self.k[0].copy_from_slice(&self.st.f_cur);
        // checkpoint 1: orders 1 and 2
        self.stage(p, 1, h)?;
        let mut err = [f64::INFINITY; 2];
        if !fixed {
            Self::combine(&self.st.y, &self.k, CASH_KARP_LOW_ORDER[0], h, &mut self.ya);
            Self::combine(&self.st.y, &self.k, CASH_KARP_LOW_ORDER[1], h, &mut self.yb);
            err[0] = self.dist(rtol, atol).sqrt();
            if err[0] > 1.0 && err[0] / self.quit[0] > TWIDDLE[0] {
                self.n_quit[0] += 1;
                let pred = err[0] / self.quit[0];
                return Ok(Outcome::Reject {
                    factor: (0.9 / pred).clamp(0.2, 0.9),
                });
            }
        }
        // checkpoint 2: orders 2 and 3
        self.stage(p, 2, h)?;
        self.stage(p, 3, h)?;
        if !fixed {
            // y⁽²⁾ is still in yb
            self.ya.copy_from_slice(&self.yb);
            Self::combine(&self.st.y, &self.k, CASH_KARP_LOW_ORDER[2], h, &mut self.yb);
            err[1] = self.dist(rtol, atol).cbrt();
            if err[1] > 1.0 && err[1] / self.quit[1] > TWIDDLE[1] {
                self.n_quit[1] += 1;
                return Ok(self.fall_back(h, &err, err[1] / self.quit[1]));
            }
        }
        // checkpoint 3: orders 4 and 5
        self.stage(p, 4, h)?;
        self.stage(p, 5, h)?;
        Self::combine(&self.st.y, &self.k, CASH_KARP.b, h, &mut self.yb);
        if fixed {
            self.ytmp.copy_from_slice(&self.yb);
            return Ok(Outcome::Accept {
                frac: 1.0,
                order: 5,
            });
        }
        Self::combine(&self.st.y, &self.k, b4, h, &mut self.ya);
        let e4 = self.dist(rtol, atol);
        let err4 = e4.powf(0.2);
        if e4 <= 1.0 {
            for q in 0..2 {
                self.quit[q] = (err[q] / err4.max(1e-300)).clamp(QUIT_RANGE.0, QUIT_RANGE.1);
            }
            self.ytmp.copy_from_slice(&self.yb);
            return Ok(Outcome::Accept {
                frac: 1.0,
                order: 5,
            });
        }
        Ok(self.fall_back(h, &err, err4))
    }

    /// After a failed checkpoint: accept a lower-order solution at a
    /// shorter step if its pair passed, else reject (module doc).
    fn fall_back(&mut self, h: f64, err: &[f64; 2], err4_pred: f64) -> Outcome {
        if err[1] <= 1.0 {
            // stage-4 input: second order at t + 3h/5
            Self::combine(&self.st.y, &self.k, CASH_KARP.a[3], h, &mut self.ytmp);
            Outcome::Accept {
                frac: CASH_KARP.c[3],
                order: 2,
            }
        } else if err[0] <= 1.0 {
            // stage-2 input: Euler at t + h/5
            Self::combine(&self.st.y, &self.k, CASH_KARP.a[1], h, &mut self.ytmp);
            Outcome::Accept {
                frac: CASH_KARP.c[1],
                order: 1,
            }
        } else {
            Outcome::Reject {
                factor: (0.9 / err4_pred).clamp(0.2, 0.9),
            }
        }
    }
}

impl StepAttempt for CashKarpVo {
    crate::step_loop::step_state_accessors!(st);

    /// The early-quit attempt; its outcome is kept for `factor` and
    /// `commit` (an accepted solution may cover only a fraction of h). A
    /// trial whose stages overflow is rejected (h / 5), not fatal.
    fn attempt(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<Trial, IntegrateError> {
        let opts = ctx.opts;
        let fixed = opts.fixed_step.is_some();
        let outcome = match CashKarpVo::attempt(self, p, h, opts.rtol, opts.atol, fixed) {
            Err(IntegrateError::Eval {
                source: EvalError::NonFinite { .. },
            }) if !fixed => return Ok(Trial::Failed { factor: 0.2 }),
            r => r?,
        };
        self.pending = outcome;
        Ok(match outcome {
            Outcome::Accept { .. } if fixed => Trial::Unchecked,
            Outcome::Accept { order, .. } => {
                // the fourth-order estimate of a fifth-order step drives
                // the controller; a lower-order solution passed its own test
                self.e4 = if order == 5 {
                    wrms_norm(&self.diff, &self.st.y, &self.ytmp, opts.rtol, opts.atol)
                } else {
                    0.0
                };
                Trial::Estimated(0.0)
            }
            Outcome::Reject { .. } => Trial::Estimated(f64::INFINITY),
        })
    }

    /// Fifth order: the controller on e4; a lower order (a transient):
    /// the step that passed, frac · h; a rejection: the method's factor.
    fn factor(&mut self, _err: f64, h: f64, accepted: bool) -> f64 {
        match self.pending {
            Outcome::Accept { order: 5, .. } if accepted => {
                self.st.controller.accepted(self.e4, h);
                self.st.controller.factor(self.e4, h, 4)
            }
            Outcome::Accept { frac, .. } => frac,
            Outcome::Reject { factor } => factor,
        }
    }

    fn commit(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        _ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let Outcome::Accept { frac, order } = self.pending else {
            unreachable!("commit follows an accepted attempt");
        };
        self.last_order = order;
        if order < 5 {
            self.n_low_order += 1;
        }
        let taken = if frac == 1.0 { h } else { frac * h };
        self.st.accept(p, taken, &self.ytmp, None)
    }

    /// Start again at the current point: learnt quit factors and the
    /// controller's memory dropped, a first step chosen anew (not below
    /// what the arithmetic resolves at t); the loop's memory of the
    /// crossing kept.
    fn restart_here(
        &mut self,
        p: &mut dyn OdeProblem,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        crate::stepper::restart_by_reset(self, |s| &mut s.st.h, true, p, ctx)
    }
}

impl Stepper for CashKarpVo {
    fn name(&self) -> &'static str {
        "cash_karp_vo"
    }

    fn reset(
        &mut self,
        p: &mut dyn OdeProblem,
        t0: f64,
        y0: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let n = y0.len();
        if self.ytmp.len() != n || self.k.is_empty() {
            self.k = vec![vec![0.0; n]; CASH_KARP.stages()];
            for v in [&mut self.ytmp, &mut self.ya, &mut self.yb, &mut self.diff] {
                *v = vec![0.0; n];
            }
        }
        self.quit = [QUIT_RANGE.1; 2];
        self.last_order = 5;
        self.st.restart_at(p, t0, y0, ctx)?;
        // Hairer's estimate for the order-4 error estimate of the pair
        self.st.choose_step("cash_karp_vo", p, 4, ctx.opts)
    }

    fn step(
        &mut self,
        p: &mut dyn OdeProblem,
        t_stop: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        advance(self, p, t_stop, ctx)
    }

    crate::one_step::one_step_accessors!(hermite);
}
