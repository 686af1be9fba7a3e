//! The one structural driver: every member of the Newmark / HHT-α /
//! generalized-α / midpoint / Wilson-θ / collocation family
//! ([`StructuralScheme`]) on M(q) q'' = f(t, q, q').
//!
//! As in jalon-bayo 7.1.5 the Newmark difference equations are introduced
//! into the equations of motion and the positions q_{n+1} are the unknowns:
//!
//! ```text
//! a_{n+1}(q_{n+1}) = (q_{n+1} − q_n − h v_n − h² (1/2 − β) a_n) / (β h²)      (jalon-bayo 7.30)
//! v_{n+1}(q_{n+1}) = v_n + h [(1 − γ) a_n + γ a_{n+1}]                         (7.28)
//! G(q_{n+1}) = β h² [M(q_b) a_b − f(t_b, q_b, v_b)] = 0
//! ```
//!
//! with the balance point (t_b, q_b, v_b, a_b) of the scheme (see
//! `scheme.rs`). G = 0 is solved by Newton–Raphson ([`crate::newton`]) with
//! the tangent matrix
//!
//! ```text
//! S = ∂G/∂q_{n+1} = m1 M + g1 h C + b1 h² K      (= M + γ h C + β h² K for Newmark)
//! ```
//!
//! where K = ∂r/∂q and C = ∂r/∂v of r = M(q) a − f come from
//! [`SecondOrderProblem::tangent`]. The tangent is kept over steps while
//! Newton converges fast and re-evaluated when it does not.
//!
//! Fixed step with `opts.fixed_step` (Newton then converges to 1e-10
//! relative, independent of the tolerances); otherwise the step is
//! controlled by the local error estimate of
//! [`StructuralScheme::error_coefficients`] (Zienkiewicz–Xie) in the
//! weighted RMS norm and the shared [`StepController`].
//!
//! The state is y = [q; v]; dense output is the cubic Hermite interpolant
//! with derivatives [v; a] at both ends. Force and mass evaluations are
//! counted in `stats.n_rhs` (one per M(q) a − f residual), tangents in
//! `stats.n_jac`.

use nalgebra::DMatrix;

use crate::controller::{record_rejection, step_towards, StepController};
use crate::dense::hermite_cubic;
use crate::error::{EvalError, IntegrateError};
use crate::initial_step::initial_step;
use crate::jacobian::fd_tangent;
use crate::newton::{newton_solve, CachedLu, NewtonOutcome, NewtonSettings};
use crate::norm::wrms_norm;
use crate::problem::{OdeProblem, SecondOrderProblem};
use crate::stepper::{StepContext, Stepper};
use crate::structural::scheme::{Balance, StructuralScheme};

/// Counts force evaluations (including those of a finite-difference tangent)
/// and rejects non-finite forces.
struct Counted<'a> {
    inner: &'a mut dyn SecondOrderProblem,
    n_forces: u64,
}

impl SecondOrderProblem for Counted<'_> {
    fn ndof(&self) -> usize {
        self.inner.ndof()
    }
    fn mass_matrix(&mut self, t: f64, q: &[f64], m: &mut DMatrix<f64>) -> Result<(), EvalError> {
        self.inner.mass_matrix(t, q, m)
    }
    fn forces(&mut self, t: f64, q: &[f64], v: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        self.n_forces += 1;
        self.inner.forces(t, q, v, f)?;
        if f.iter().any(|x| !x.is_finite()) {
            return Err(EvalError::NonFinite {
                what: "forces f(t, q, v)".into(),
                t,
            });
        }
        Ok(())
    }
    fn tangent(
        &mut self,
        t: f64,
        q: &[f64],
        v: &[f64],
        a: &[f64],
        k: &mut DMatrix<f64>,
        c: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        if self.inner.has_exact_tangent() {
            self.inner.tangent(t, q, v, a, k, c)
        } else {
            // the difference quotients go through this counter
            fd_tangent(self, t, q, v, a, k, c)
        }
    }
    fn has_exact_tangent(&self) -> bool {
        self.inner.has_exact_tangent()
    }
}

/// Scratch vectors of the residual.
struct Work {
    a1: Vec<f64>,
    qb: Vec<f64>,
    vb: Vec<f64>,
    ab: Vec<f64>,
    fb: Vec<f64>,
    mb: DMatrix<f64>,
}

impl Work {
    fn new(n: usize) -> Self {
        Self {
            a1: vec![0.0; n],
            qb: vec![0.0; n],
            vb: vec![0.0; n],
            ab: vec![0.0; n],
            fb: vec![0.0; n],
            mb: DMatrix::zeros(n, n),
        }
    }
}

/// G(q1) = β h² [M(q_b) a_b − f(t_b, q_b, v_b)] at the candidate q1.
fn residual(
    sp: &mut Counted,
    sch: &StructuralScheme,
    bal: &Balance,
    t: f64,
    h: f64,
    y: &[f64],
    a: &[f64],
    q1: &[f64],
    w: &mut Work,
    g: &mut [f64],
) -> Result<(), EvalError> {
    let n = a.len();
    let (q, v) = y.split_at(n);
    let bh2 = sch.beta * h * h;
    for i in 0..n {
        let a1 = (q1[i] - q[i] - h * v[i] - h * h * (0.5 - sch.beta) * a[i]) / bh2;
        w.a1[i] = a1;
        w.qb[i] = q[i] + bal.c * h * v[i] + h * h * (bal.b0 * a[i] + bal.b1 * a1);
        w.vb[i] = v[i] + h * (bal.g0 * a[i] + bal.g1 * a1);
        w.ab[i] = bal.m0 * a[i] + bal.m1 * a1;
    }
    let tb = t + bal.c * h;
    sp.mass_matrix(tb, &w.qb, &mut w.mb)?;
    sp.forces(tb, &w.qb, &w.vb, &mut w.fb)?;
    for i in 0..n {
        let mut s = -w.fb[i];
        for j in 0..n {
            s += w.mb[(i, j)] * w.ab[j];
        }
        g[i] = bh2 * s;
    }
    Ok(())
}

/// Stepper of the structural family over one [`StructuralScheme`].
pub struct StructuralStepper {
    scheme: StructuralScheme,
    bal: Balance,
    n: usize,
    t: f64,
    t_prev: f64,
    h: f64,
    /// [q; v] at t
    y: Vec<f64>,
    y_prev: Vec<f64>,
    /// [v; a] at t and t_prev (for dense output)
    dy: Vec<f64>,
    dy_prev: Vec<f64>,
    /// algorithmic acceleration at t
    a: Vec<f64>,
    q1: Vec<f64>,
    y1: Vec<f64>,
    g: Vec<f64>,
    weights: Vec<f64>,
    err: Vec<f64>,
    work: Work,
    m_t: DMatrix<f64>,
    k_t: DMatrix<f64>,
    c_t: DMatrix<f64>,
    s: DMatrix<f64>,
    lu: CachedLu,
    /// K, C, M of `*_t` may be used
    tangent_valid: bool,
    /// the tangent was evaluated at the current point
    tangent_fresh: bool,
    /// step size of the factorised iteration matrix
    s_h: f64,
    controller: StepController,
}

impl StructuralStepper {
    /// A stepper for `scheme`.
    pub fn new(scheme: StructuralScheme) -> Self {
        Self {
            scheme,
            bal: scheme.balance(),
            n: usize::MAX,
            t: 0.0,
            t_prev: 0.0,
            h: 0.0,
            y: Vec::new(),
            y_prev: Vec::new(),
            dy: Vec::new(),
            dy_prev: Vec::new(),
            a: Vec::new(),
            q1: Vec::new(),
            y1: Vec::new(),
            g: Vec::new(),
            weights: Vec::new(),
            err: Vec::new(),
            work: Work::new(0),
            m_t: DMatrix::zeros(0, 0),
            k_t: DMatrix::zeros(0, 0),
            c_t: DMatrix::zeros(0, 0),
            s: DMatrix::zeros(0, 0),
            lu: CachedLu::new(),
            tangent_valid: false,
            tangent_fresh: false,
            s_h: 0.0,
            controller: StepController::default(),
        }
    }

    /// The scheme this stepper integrates with.
    pub fn scheme(&self) -> &StructuralScheme {
        &self.scheme
    }

    /// The algorithmic acceleration a_n at the current point.
    pub fn acceleration(&self) -> &[f64] {
        &self.a
    }

    /// Replace the algorithmic acceleration a_n at the current point, after
    /// [`Stepper::reset`] (which sets the consistent M(q0)⁻¹ f): to continue
    /// a generalized-α run from saved (q, v, a), or to build the
    /// amplification matrix from unit states (q, v, a).
    ///
    /// # Errors
    /// [`IntegrateError::Unsupported`] when `a` does not have one entry per
    /// degree of freedom of the last reset.
    pub fn set_acceleration(&mut self, a: &[f64]) -> Result<(), IntegrateError> {
        if a.len() != self.a.len() {
            return Err(IntegrateError::Unsupported {
                method: self.scheme.name.into(),
                detail: format!(
                    "set_acceleration: {} values for {} degrees of freedom (call reset first)",
                    a.len(),
                    self.a.len()
                ),
            });
        }
        let n = self.a.len();
        self.a.copy_from_slice(a);
        self.dy[n..].copy_from_slice(a);
        self.tangent_valid = false;
        Ok(())
    }

    /// The local error estimate [e_q; e_v] of the last attempted step
    /// ([`StructuralScheme::error_coefficients`]), also in fixed-step runs.
    pub fn error_estimate(&self) -> &[f64] {
        &self.err
    }

    fn allocate(&mut self, n: usize) {
        if self.n == n {
            return;
        }
        self.n = n;
        self.y = vec![0.0; 2 * n];
        self.y_prev = vec![0.0; 2 * n];
        self.dy = vec![0.0; 2 * n];
        self.dy_prev = vec![0.0; 2 * n];
        self.a = vec![0.0; n];
        self.q1 = vec![0.0; n];
        self.y1 = vec![0.0; 2 * n];
        self.g = vec![0.0; n];
        self.weights = vec![0.0; n];
        self.err = vec![0.0; 2 * n];
        self.work = Work::new(n);
        self.m_t = DMatrix::zeros(n, n);
        self.k_t = DMatrix::zeros(n, n);
        self.c_t = DMatrix::zeros(n, n);
        self.s = DMatrix::zeros(n, n);
        self.lu = CachedLu::new();
    }

    fn unsupported(&self) -> IntegrateError {
        IntegrateError::Unsupported {
            method: self.scheme.name.into(),
            detail: "needs the second-order form M(q) q'' = f(t, q, q') \
                     (OdeProblem::as_second_order returned None); wrap a \
                     SecondOrderProblem in FirstOrderForm, or use a first-order method"
                .into(),
        }
    }

    /// K, C and M at the current point.
    fn eval_tangent(&mut self, sp: &mut Counted, ctx: &mut StepContext) -> Result<(), EvalError> {
        let n = self.n;
        let (q, v) = self.y.split_at(n);
        ctx.stats.n_jac += 1;
        sp.tangent(self.t, q, v, &self.a, &mut self.k_t, &mut self.c_t)?;
        sp.mass_matrix(self.t, q, &mut self.m_t)?;
        self.tangent_valid = true;
        self.tangent_fresh = true;
        self.lu.invalidate();
        Ok(())
    }

    /// S = m1 M + g1 h C + b1 h² K, factorised.
    fn factor(&mut self, h: f64, ctx: &mut StepContext) -> Result<(), EvalError> {
        let b = &self.bal;
        let (cm, cc, ck) = (b.m1, b.g1 * h, b.b1 * h * h);
        for j in 0..self.n {
            for i in 0..self.n {
                self.s[(i, j)] =
                    cm * self.m_t[(i, j)] + cc * self.c_t[(i, j)] + ck * self.k_t[(i, j)];
            }
        }
        self.lu.factor(&self.s, self.t, ctx.stats)?;
        self.s_h = h;
        Ok(())
    }

    fn step_inner(
        &mut self,
        sp: &mut Counted,
        t_stop: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let opts = ctx.opts;
        let adaptive = opts.fixed_step.is_none();
        let n = self.n;
        let sch = self.scheme;
        let bal = self.bal;
        let (settings, rtol_n, atol_n) = if adaptive {
            (NewtonSettings::default(), opts.rtol, opts.atol)
        } else {
            (
                NewtonSettings {
                    max_iter: 10,
                    tol: 0.03,
                },
                1e-10,
                1e-10,
            )
        };
        let mut rejected = 0u32;
        loop {
            let h_ctrl = self.h.min(opts.h_max);
            let (h, trimmed) = step_towards(h_ctrl, self.t, t_stop, adaptive);
            if adaptive && h < opts.h_min {
                return Err(IntegrateError::StepSizeTooSmall { t: self.t, h });
            }
            if !self.tangent_valid {
                self.eval_tangent(sp, ctx)?;
            }
            if !self.lu.is_factored() || self.s_h != h {
                self.factor(h, ctx)?;
            }
            // predictor a_{n+1} = a_n
            {
                let (q, v) = self.y.split_at(n);
                for i in 0..n {
                    self.q1[i] = q[i] + h * v[i] + 0.5 * h * h * self.a[i];
                    self.weights[i] = 1.0 / (atol_n + rtol_n * q[i].abs());
                }
            }
            let (t, y, a, work) = (self.t, &self.y, &self.a, &mut self.work);
            let outcome = newton_solve(
                |x, g| residual(sp, &sch, &bal, t, h, y, a, x, work, g),
                &mut self.q1,
                &mut self.lu,
                &self.weights,
                &settings,
                &mut self.g,
                ctx.stats,
            )?;
            match outcome {
                NewtonOutcome::Converged { iters, rate } => {
                    if rate > 0.2 || iters >= 5 {
                        // slow: refresh the tangent at the next step
                        self.tangent_valid = false;
                    }
                }
                NewtonOutcome::Failed { iters, .. } => {
                    if !self.tangent_fresh {
                        self.tangent_valid = false;
                        continue;
                    }
                    if adaptive && rejected < 20 {
                        ctx.stats.n_reject += 1;
                        rejected += 1;
                        self.h = 0.25 * h;
                        continue;
                    }
                    return Err(IntegrateError::NewtonFailed {
                        t: self.t,
                        h,
                        iters,
                    });
                }
            }
            // the end point from the converged positions
            let bh2 = sch.beta * h * h;
            let da_max;
            {
                let (q, v) = self.y.split_at(n);
                let (q1, v1) = self.y1.split_at_mut(n);
                let mut dm = 0.0f64;
                for i in 0..n {
                    q1[i] = self.q1[i];
                    let a1 =
                        (self.q1[i] - q[i] - h * v[i] - h * h * (0.5 - sch.beta) * self.a[i]) / bh2;
                    self.work.a1[i] = a1;
                    v1[i] = v[i] + h * ((1.0 - sch.gamma) * self.a[i] + sch.gamma * a1);
                    dm = dm.max((a1 - self.a[i]).abs());
                }
                da_max = dm;
            }
            if !da_max.is_finite() {
                return Err(EvalError::NonFinite {
                    what: format!("{} acceleration update", sch.name),
                    t: self.t + h,
                }
                .into());
            }
            let (eq, ev) = sch.error_coefficients();
            for i in 0..n {
                let da = self.work.a1[i] - self.a[i];
                self.err[i] = eq * h * h * da;
                self.err[n + i] = ev * h * da;
            }
            if !adaptive {
                self.accept(h);
                ctx.stats.n_accept += 1;
                return Ok(());
            }
            let err = wrms_norm(&self.err, &self.y, &self.y1, opts.rtol, opts.atol);
            let fac = self.controller.factor(err, h, sch.order());
            if self.controller.accept(err, h) {
                self.controller.accepted(err, h);
                ctx.stats.n_accept += 1;
                self.accept(h);
                let fac = if rejected > 0 { fac.min(1.0) } else { fac };
                self.h = if trimmed && fac >= 1.0 {
                    h_ctrl.max(h * fac)
                } else {
                    h * fac
                };
                return Ok(());
            }
            self.h = h * fac.min(1.0);
            record_rejection(ctx.stats, &mut rejected, self.t)?;
        }
    }

    /// Make the candidate (y1, a1) the current point.
    fn accept(&mut self, h: f64) {
        let n = self.n;
        self.t_prev = self.t;
        self.t += h;
        std::mem::swap(&mut self.y_prev, &mut self.y);
        std::mem::swap(&mut self.dy_prev, &mut self.dy);
        self.y.copy_from_slice(&self.y1);
        self.a.copy_from_slice(&self.work.a1);
        self.dy[..n].copy_from_slice(&self.y[n..]);
        self.dy[n..].copy_from_slice(&self.a);
        self.tangent_fresh = false;
    }
}

impl Stepper for StructuralStepper {
    fn name(&self) -> &'static str {
        self.scheme.name
    }

    /// A projection moves q and v; the algorithmic acceleration `a` and
    /// the tangent are kept. Re-initialising `a` from the equations of
    /// motion would break generalized-α, whose `a` is not q'' but a
    /// shifted average (Chung & Hulbert 1993), and cost its second order.
    fn correct(
        &mut self,
        p: &mut dyn OdeProblem,
        y: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        if y.len() != self.y.len() || y.len() != 2 * self.n {
            let t = self.t;
            return self.reset(p, t, y, ctx);
        }
        self.y.copy_from_slice(y);
        self.dy[..self.n].copy_from_slice(&y[self.n..]);
        Ok(())
    }

    fn reset(
        &mut self,
        p: &mut dyn OdeProblem,
        t0: f64,
        y0: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let name = self.scheme.name;
        let Some(inner) = p.as_second_order() else {
            return Err(self.unsupported());
        };
        let n = inner.ndof();
        if y0.len() != 2 * n {
            return Err(IntegrateError::Unsupported {
                method: name.into(),
                detail: format!(
                    "state y = [q; v] must have 2 × {n} components for {n} degrees of freedom, got {}",
                    y0.len()
                ),
            });
        }
        self.allocate(n);
        let mut sp = Counted { inner, n_forces: 0 };
        self.t = t0;
        self.t_prev = t0;
        self.y.copy_from_slice(y0);
        // consistent initial acceleration: M(q0) a0 = f(t0, q0, v0)
        let init = {
            let (q, v) = self.y.split_at(n);
            sp.mass_matrix(t0, q, &mut self.work.mb)
                .and_then(|_| sp.forces(t0, q, v, &mut self.work.fb))
        };
        ctx.stats.n_rhs += sp.n_forces;
        init?;
        let lu = self.work.mb.clone().lu();
        let mut a0 = nalgebra::DVector::from_column_slice(&self.work.fb);
        if !lu.solve_mut(&mut a0) {
            return Err(EvalError::Singular {
                what: "mass matrix".into(),
                t: t0,
                detail: format!("{name}: initial acceleration M(q0) a0 = f"),
            }
            .into());
        }
        self.a.copy_from_slice(a0.as_slice());
        self.dy[..n].copy_from_slice(&y0[n..]);
        self.dy[n..].copy_from_slice(&self.a);
        self.y_prev.copy_from_slice(y0);
        self.dy_prev.copy_from_slice(&self.dy);
        self.tangent_valid = false;
        self.tangent_fresh = false;
        self.lu.invalidate();
        self.controller = StepController::new(ctx.opts.controller, ctx.opts.error_per);
        if let Some(h) = ctx.opts.fixed_step {
            if !(h > 0.0) || !h.is_finite() {
                return Err(IntegrateError::BadMethod(format!(
                    "{name}: fixed step size must be positive, got {h}"
                )));
            }
            self.h = h;
        } else if self.scheme.theta != 1.0 {
            // the Zienkiewicz-Xie estimate is derived for balance points
            // inside the step (theta = 1); for Wilson/collocation with
            // theta > 1 it is not valid (for Wilson, beta = 1/6 makes it
            // vanish and the step would grow without bound)
            return Err(IntegrateError::Unsupported {
                method: name.into(),
                detail: format!(
                    "theta = {} > 1 has no validated local error estimate: give a fixed step size",
                    self.scheme.theta
                ),
            });
        } else if self.h == 0.0 {
            self.h = match ctx.opts.h0 {
                Some(h0) => h0,
                None => initial_step(
                    p,
                    t0,
                    y0,
                    &self.dy,
                    self.scheme.order(),
                    ctx.opts.rtol,
                    ctx.opts.atol,
                    ctx.opts.h_max,
                    1.0,
                )?,
            };
        }
        Ok(())
    }

    fn step(
        &mut self,
        p: &mut dyn OdeProblem,
        t_stop: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let Some(inner) = p.as_second_order() else {
            return Err(self.unsupported());
        };
        let mut sp = Counted { inner, n_forces: 0 };
        let r = self.step_inner(&mut sp, t_stop, ctx);
        ctx.stats.n_rhs += sp.n_forces;
        r
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

    fn interpolate(&self, t: f64, out: &mut [f64]) {
        hermite_cubic(
            self.t_prev,
            &self.y_prev,
            &self.dy_prev,
            self.t,
            &self.y,
            &self.dy,
            t,
            out,
        );
    }
}
