//! The Local Linearization Method (LLM) with its local error estimate and
//! step-size control (Gil, Sanfelice & Nikravesh; Jimenez et al. 2002, 2005).
//!
//! One step from (t_n, y_n) with h (gil-sanfelice-nikravesh eqs. 1, 2, 6):
//!
//! ```text
//! y_{n+1} = y_n + φ,   φ = ∫₀ʰ e^{J (h−u)} (f_n + f_t u) du
//!
//!           ⎡ J  f_t  f_n ⎤         ⎡ F  g₁  φ  ⎤
//! exp(h C), C = ⎢ 0   0    1  ⎥,  e^{hC} = ⎢ 0  1   g₂ ⎥      (Van Loan 1978, Theorem 1)
//!           ⎣ 0   0    0  ⎦         ⎣ 0  0   1  ⎦
//! ```
//!
//! with J = ∂f/∂y(t_n, y_n) from [`OdeProblem::jacobian`] and
//! f_t = ∂f/∂t(t_n, y_n) by a forward difference in t (exactly zero for
//! autonomous problems). Second order; exact for y' = A y + b(t) with b
//! linear in t (up to the difference quotient f_t), hence exact for linear
//! autonomous systems and A-stable (the test equation is solved exactly).
//!
//! Local error estimate (eqs. 29–33): with the linearization
//! g(t, y) = f_n + J (y − y_n) + f_t (t − t_n), the residual
//! r = f(t_{n+1}, y_{n+1}) − g(t_{n+1}, y_{n+1}) = f_{n+1} − f_n − J φ − f_t h
//! gives v_n = r / h², and
//!
//! ```text
//! l_{n+1} = ∫₀ʰ e^{J (h−u)} v_n u² du = (1, 4) block of exp(h L),
//!     ⎡ J  2v_n  0  0 ⎤
//! L = ⎢ 0   0    1  0 ⎥
//!     ⎢ 0   0    0  1 ⎥
//!     ⎣ 0   0    0  0 ⎦
//! ```
//!
//! Control (eqs. 38, 39): h* = 0.9 (tol / r)^{1/k} h with r = ‖l‖ (EPS, k = 3)
//! or ‖l‖/h (EPUS, k = 2), through the shared [`StepController`] and the
//! weighted RMS norm. f_{n+1} is reused as f_n of the next step, so a step
//! costs two f evaluations (f_{n+1}, the t-difference) and one Jacobian.
//!
//! The matrix exponentials use [`Expm`] (scaling and squaring with Padé
//! approximants up to degree 13, Higham 2005), in workspaces sized at
//! the start, so that a step allocates nothing; its accuracy against
//! nalgebra's `Matrix::exp` is checked in its tests.

use nalgebra::DMatrix;

use crate::controller::StepController;
use crate::error::{EvalError, IntegrateError};
use crate::exponential::expm::Expm;
use crate::norm::wrms_norm;
use crate::one_step::OneStepState;
use crate::problem::OdeProblem;
use crate::step_loop::{self, LoopState, StepAttempt, Trial};
use crate::stepper::{StepContext, Stepper};

/// Order of the LLM (Jimenez & Carbonell 2005; gil-sanfelice-nikravesh eq. 34).
pub const LLM_ORDER: u32 = 2;

/// Power iterations for the estimate of ρ(J) (an even number: the mean
/// growth over pairs settles for a dominant complex pair).
const POWER_ITERATIONS: usize = 16;

/// Safety factor on h·ρ(J) in [`Stepper::dense_output_rotation`]: the
/// power iteration may underestimate ρ until it has converged.
const ROTATION_SAFETY: f64 = 2.0;

/// Local Linearization Method stepper.
pub struct LocalLinearization {
    /// The between-steps state ([`OneStepState`]).
    st: OneStepState,
    y1: Vec<f64>,
    f1: Vec<f64>,
    ftmp: Vec<f64>,
    ft: Vec<f64>,
    err: Vec<f64>,
    jac: DMatrix<f64>,
    /// J, f_t are those of the current point
    jac_valid: bool,
    /// ρ(J) estimated by power iteration at the last linearization
    spectral_radius: f64,
    /// power-iteration vectors
    pw: Vec<f64>,
    pw2: Vec<f64>,
    cm: DMatrix<f64>,
    lm: DMatrix<f64>,
    /// e^{hC}, e^{hL} and the workspaces that compute them
    ecm: DMatrix<f64>,
    elm: DMatrix<f64>,
    expm_c: Expm,
    expm_l: Expm,
    /// sC, e^{sC} and their workspace for the continuous solution
    dense: std::cell::RefCell<(DMatrix<f64>, DMatrix<f64>, Expm)>,
}

impl Default for LocalLinearization {
    fn default() -> Self {
        Self::new()
    }
}

impl LocalLinearization {
    /// A new stepper.
    pub fn new() -> Self {
        Self {
            y1: Vec::new(),
            f1: Vec::new(),
            ftmp: Vec::new(),
            ft: Vec::new(),
            err: Vec::new(),
            jac: DMatrix::zeros(0, 0),
            jac_valid: false,
            spectral_radius: 0.0,
            pw: Vec::new(),
            pw2: Vec::new(),
            cm: DMatrix::zeros(0, 0),
            lm: DMatrix::zeros(0, 0),
            ecm: DMatrix::zeros(0, 0),
            elm: DMatrix::zeros(0, 0),
            expm_c: Expm::new(0),
            expm_l: Expm::new(0),
            dense: std::cell::RefCell::new((
                DMatrix::zeros(0, 0),
                DMatrix::zeros(0, 0),
                Expm::new(0),
            )),
            st: OneStepState::new(StepController::default()),
        }
    }

    fn allocate(&mut self, m: usize) {
        if self.y1.len() == m && self.cm.nrows() == m + 2 {
            return;
        }
        for v in [
            &mut self.y1,
            &mut self.f1,
            &mut self.ftmp,
            &mut self.ft,
            &mut self.err,
            &mut self.pw,
            &mut self.pw2,
        ] {
            *v = vec![0.0; m];
        }
        self.jac = DMatrix::zeros(m, m);
        self.cm = DMatrix::zeros(m + 2, m + 2);
        self.lm = DMatrix::zeros(m + 3, m + 3);
        self.ecm = DMatrix::zeros(m + 2, m + 2);
        self.elm = DMatrix::zeros(m + 3, m + 3);
        self.expm_c = Expm::new(m + 2);
        self.expm_l = Expm::new(m + 3);
        self.dense = std::cell::RefCell::new((
            DMatrix::zeros(m + 2, m + 2),
            DMatrix::zeros(m + 2, m + 2),
            Expm::new(m + 2),
        ));
    }

    /// J and f_t at the current point (t, y), with f_cur = f(t, y) known.
    fn linearize(&mut self, p: &mut dyn OdeProblem) -> Result<(), EvalError> {
        p.jacobian(self.st.t, &self.st.y, &mut self.jac)?;
        let dt = f64::EPSILON.sqrt() * self.st.t.abs().max(1.0);
        let t2 = self.st.t + dt;
        let dt = t2 - self.st.t;
        p.rhs(t2, &self.st.y, &mut self.ftmp)?;
        for i in 0..self.st.y.len() {
            self.ft[i] = (self.ftmp[i] - self.st.f_cur[i]) / dt;
        }
        self.jac_valid = true;
        self.spectral_radius = self.estimate_spectral_radius();
        Ok(())
    }

    /// ρ(J) by power iteration (Golub & Van Loan, *Matrix Computations*,
    /// 7.3.1) from a fixed start vector with all components non-zero: the
    /// geometric mean of the growth ‖J x_k‖/‖x_k‖ over the last
    /// [`POWER_ITERATIONS`]/2 iterations. The mean over pairs of
    /// iterations also converges for a dominant complex pair ±iω (the
    /// oscillating modes that the estimate is for), where x_k rotates and
    /// single ratios do not settle. Zero for a nilpotent J (free flight).
    fn estimate_spectral_radius(&mut self) -> f64 {
        let m = self.st.y.len();
        if m == 0 {
            return 0.0;
        }
        for (i, x) in self.pw.iter_mut().enumerate() {
            // a fixed, irregular start vector (golden-ratio sequence)
            *x = 1.0 + (i as f64 * 0.618_033_988_749_895).fract();
        }
        let mut log_sum = 0.0;
        let mut counted = 0u32;
        for k in 0..POWER_ITERATIONS {
            let nx = self.pw.iter().map(|v| v * v).sum::<f64>().sqrt();
            if !(nx > 0.0) || !nx.is_finite() {
                return 0.0;
            }
            for i in 0..m {
                let mut acc = 0.0;
                for j in 0..m {
                    acc += self.jac[(i, j)] * self.pw[j];
                }
                self.pw2[i] = acc / nx;
            }
            let ny = self.pw2.iter().map(|v| v * v).sum::<f64>().sqrt();
            if !(ny > 0.0) || !ny.is_finite() {
                return 0.0;
            }
            if k >= POWER_ITERATIONS / 2 {
                log_sum += ny.ln();
                counted += 1;
            }
            std::mem::swap(&mut self.pw, &mut self.pw2);
        }
        (log_sum / f64::from(counted)).exp()
    }

    /// The LLM step of size h from the current point into `y1` and
    /// f(t + h, y1) into `f1`; with `estimate`, the local error estimate
    /// l_{n+1} (eqs. 30–33) into `err`.
    fn stages(&mut self, p: &mut dyn OdeProblem, h: f64, estimate: bool) -> Result<(), EvalError> {
        let m = self.st.y.len();
        self.cm.fill(0.0);
        for j in 0..m {
            for i in 0..m {
                self.cm[(i, j)] = h * self.jac[(i, j)];
            }
        }
        for i in 0..m {
            self.cm[(i, m)] = h * self.ft[i];
            self.cm[(i, m + 1)] = h * self.st.f_cur[i];
        }
        self.cm[(m, m + 1)] = h;
        let ok = self.expm_c.exp(&self.cm, &mut self.ecm);
        for i in 0..m {
            self.y1[i] = self.st.y[i] + self.ecm[(i, m + 1)];
        }
        if !ok || self.y1.iter().any(|v| !v.is_finite()) {
            return Err(EvalError::NonFinite {
                what: "llm: exp(hC) step".into(),
                t: self.st.t,
            });
        }
        p.rhs(self.st.t + h, &self.y1, &mut self.f1)?;
        if !estimate {
            return Ok(());
        }
        // v_n = [f_{n+1} − (f_n + J φ + f_t h)] / h², φ = y1 − y
        let h2 = h * h;
        self.lm.fill(0.0);
        for i in 0..m {
            let mut jphi = 0.0;
            for j in 0..m {
                jphi += self.jac[(i, j)] * (self.y1[j] - self.st.y[j]);
            }
            let r = self.f1[i] - self.st.f_cur[i] - jphi - self.ft[i] * h;
            self.lm[(i, m)] = h * 2.0 * r / h2;
            for j in 0..m {
                self.lm[(i, j)] = h * self.jac[(i, j)];
            }
        }
        self.lm[(m, m + 1)] = h;
        self.lm[(m + 1, m + 2)] = h;
        if !self.expm_l.exp(&self.lm, &mut self.elm) {
            return Err(EvalError::NonFinite {
                what: "llm: exp(hL) error estimate".into(),
                t: self.st.t,
            });
        }
        for i in 0..m {
            self.err[i] = self.elm[(i, m + 2)];
        }
        Ok(())
    }

    /// One LLM step of size h from (t, y), outside any driver: the new
    /// state into `y1` and the local error estimate l (eqs. 31–33) into
    /// `estimate` (studies.md S7).
    ///
    /// # Errors
    /// Evaluation errors of the problem.
    pub fn one_step(
        &mut self,
        p: &mut dyn OdeProblem,
        t: f64,
        y: &[f64],
        h: f64,
        y1: &mut [f64],
        estimate: &mut [f64],
    ) -> Result<(), EvalError> {
        self.allocate(y.len());
        self.st.size_for(y.len());
        self.st.t = t;
        self.st.y.copy_from_slice(y);
        p.rhs(t, y, &mut self.st.f_cur)?;
        self.linearize(p)?;
        self.stages(p, h, true)?;
        y1.copy_from_slice(&self.y1);
        estimate.copy_from_slice(&self.err);
        Ok(())
    }

    fn accept(&mut self, h: f64) {
        self.st.advance(h, &self.y1);
        self.st.f_cur.copy_from_slice(&self.f1);
        self.jac_valid = false;
    }
}

impl Stepper for LocalLinearization {
    fn name(&self) -> &'static str {
        "llm"
    }

    fn reset(
        &mut self,
        p: &mut dyn OdeProblem,
        t0: f64,
        y0: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.allocate(y0.len());
        self.st.restart_at(p, t0, y0, ctx)?;
        self.jac_valid = false;
        self.st.loop_state = LoopState::default();
        self.st.choose_step("llm", p, LLM_ORDER, ctx.opts)
    }

    /// One accepted step by the shared loop ([`step_loop::advance`]),
    /// linearised once at its start.
    fn step(
        &mut self,
        p: &mut dyn OdeProblem,
        t_stop: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        if !self.jac_valid {
            self.linearize(p)?;
        }
        step_loop::advance(self, p, t_stop, ctx)
    }

    crate::one_step::one_step_accessors!();

    /// h·ρ(J) of the last step (times `ROTATION_SAFETY`): the flow
    /// e^{sJ} of its linearization turns a mode of frequency ω by ω s, and
    /// one LLM step may span several periods of a linear phase (a penalty
    /// contact) over which it is exact.
    fn dense_output_rotation(&self) -> f64 {
        ROTATION_SAFETY * (self.st.t - self.st.t_prev) * self.spectral_radius
    }

    /// The method's own continuous solution: the local linearization's
    /// flow from the start of the last step, y(t_n + s) = y_n + φ(s) with
    /// φ(s) from e^{sC} (the step formula at s instead of h; exact for
    /// linear problems, as the step is), so that events and outputs see
    /// what the method integrates: a cubic Hermite interpolant between
    /// steps that span several periods of a linear oscillation (the LLM
    /// steps over a penalty contact's whole period) is meaningless. Falls
    /// back to that interpolant where J is not the step's (just after a
    /// restart) or the exponential fails.
    fn interpolate(&self, t: f64, out: &mut [f64]) {
        let m = self.st.y.len();
        let s = t - self.st.t_prev;
        if !self.jac_valid && s > 0.0 && t < self.st.t && self.jac.nrows() == m {
            if let Ok(mut d) = self.dense.try_borrow_mut() {
                let (cm, ecm, expm) = &mut *d;
                cm.fill(0.0);
                for j in 0..m {
                    for i in 0..m {
                        cm[(i, j)] = s * self.jac[(i, j)];
                    }
                }
                for i in 0..m {
                    cm[(i, m)] = s * self.ft[i];
                    cm[(i, m + 1)] = s * self.st.f_prev[i];
                }
                cm[(m, m + 1)] = s;
                if expm.exp(cm, ecm) {
                    for i in 0..m {
                        out[i] = self.st.y_prev[i] + ecm[(i, m + 1)];
                    }
                    if out.iter().all(|v| v.is_finite()) {
                        return;
                    }
                }
            }
        }
        if t >= self.st.t {
            out.copy_from_slice(&self.st.y);
            return;
        }
        self.st.hermite(t, out);
    }
}

impl StepAttempt for LocalLinearization {
    crate::step_loop::step_state_accessors!(st);

    fn attempt(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<Trial, IntegrateError> {
        let o = ctx.opts;
        let adaptive = o.fixed_step.is_none();
        self.stages(p, h, adaptive)?;
        if !adaptive {
            return Ok(Trial::Unchecked);
        }
        Ok(Trial::Estimated(wrms_norm(
            &self.err, &self.st.y, &self.y1, o.rtol, o.atol,
        )))
    }

    fn factor(&mut self, err: f64, h: f64, accepted: bool) -> f64 {
        let fac = self.st.controller.factor(err, h, LLM_ORDER);
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
        _p: &mut dyn OdeProblem,
        h: f64,
        _ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.accept(h);
        Ok(())
    }

    fn restart_here(
        &mut self,
        p: &mut dyn OdeProblem,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.st.restart_here(p, LLM_ORDER, ctx.opts)
    }
}
