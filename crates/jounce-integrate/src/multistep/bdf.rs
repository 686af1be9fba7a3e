//! Variable-step, variable-order BDF and NDF (orders 1..5) in the
//! quasi-constant-step backward-difference form of MATLAB's ode15s
//! (Shampine & Reichelt, "The MATLAB ODE Suite", SIAM J. Sci. Comput. 18
//! (1997) 1–22, Section 2, eqs. (2)–(6)).
//!
//! With backward differences ∇^j y_n of the last accepted values on a grid
//! of constant step h, the order-k method with parameter κ_k solves
//!
//! (1 − κ_k) γ_k (y_{n+1} − y^(0)_{n+1}) + Σ_{j=1}^{k} γ_j ∇^j y_n = h f(t_{n+1}, y_{n+1}),
//! γ_j = Σ_{i=1}^{j} 1/i, predictor y^(0)_{n+1} = Σ_{j=0}^{k} ∇^j y_n,
//!
//! which is the BDF of order k for κ = 0 and the NDF (Klopfenstein 1971,
//! Shampine–Reichelt 1997, Table 1) for κ = (−0.1850, −1/9, −0.0823,
//! −0.0415, 0). The local error is (κ_k γ_k + 1/(k+1)) ‖∇^{k+1} y_{n+1}‖.
//!
//! - Newton: modified Newton ([`newton_solve_with_rate`]) on the matrix
//!   I − h/((1−κ_k)γ_k) J, factorised ([`CachedLu`]) when h or k changes,
//!   to [`NEWTON_COEF`] of the error test's bound, the first iteration
//!   judged by the contraction rate of the last solve on the same
//!   factorisation (CVODE's convergence test); J is
//!   reused over steps and re-evaluated only after a convergence failure
//!   (then h is cut by 0.3 if J was already current).
//! - Step change: the differences are re-interpolated to the new step,
//!   D ← D (R(ρ) U), R_ij = Π_{l=1}^{i} (l − 1 − jρ)/l, U = R(1)
//!   (Shampine–Reichelt eq. (5)).
//! - Order and step selection as ode15s: after k + 2 steps at constant
//!   h and k, from the error estimates at orders k − 1, k, k + 1 with the
//!   safety factors 1.3, 1.2, 1.4; the step only grows when the best of
//!   the three allows it. Start at order 1.
//! - Stability limit ([`crate::multistep::stability_limit`]): BDF3–5 are
//!   not A-stable, and on a lightly damped oscillation (hω ≈ 0.3–1) the
//!   accuracy-based selection above settles at an order that sustains
//!   the oscillation instead of damping it, tens of thousands of steps
//!   after the solution has become smooth. The mode λ that dominates the
//!   error estimate ∇^{k+1} y_{n+1} is estimated from J (Rayleigh–Ritz on
//!   span{e, J e}); after an accepted step at order k ≥ 3 whose hλ the
//!   formula does not damp enough (ln ρ_k(hλ) > max(Re hλ/2, −0.05), unless
//!   the dissipation error ln ρ_k − Re hλ is below rtol), the order drops
//!   to the highest admissible one at the same step (the action of CVODE's
//!   stability limit detection, Hindmarsh 1995); and each candidate step
//!   of the order selection is limited to the largest admissible one.
//!   BDF1 and BDF2 are always admissible.
//! - Step loop: the shared one ([`crate::step_loop::advance`]: stop
//!   times, rejections, crossing of discontinuities, counters); this file
//!   supplies the trial step and the order/step selection above
//!   ([`StepAttempt`]). The selection after an accepted trial is computed
//!   before the differences are updated, from the same sums the update
//!   forms, and takes effect when the step is committed.
//! - Dense output: the interpolating polynomial
//!   y(t_{n+1} + s h) = y_{n+1} + Σ_{j=1}^{k} ∇^j y_{n+1} Π_{i=1}^{j} (s + i − 1)/i.
//! - Fixed step (`fixed_step`): order `max_order` throughout; the k starting
//!   values come from the L-stable extrapolated implicit Euler method
//!   ([`super::start::ImplicitEulerExtrapolation`], order 5), no error test.
//! - Overdetermined DAE ([`crate::OdeProblem::as_overdetermined`]: y' = f
//!   with invariants g(t, y) = 0, Führer & Leimkuhler 1991): the same
//!   formula, its n equations solved in the least-squares sense with the
//!   p invariants met exactly at t_{n+1}, by the modified Gauss–Newton
//!   iteration of [`crate::overdetermined`] (ODASSL's linear algebra) on
//!   the same factorised iteration matrix. G = g_y is evaluated at the
//!   predictor of every step (p extra solves with A and a p × p
//!   factorisation per step); the convergence test is that of the square
//!   case, on increments that include the corrections onto g = 0, so the
//!   invariants hold to the Newton tolerance at every step instead of
//!   drifting. The error estimate is unchanged: ∇^{k+1} y_{n+1} of values
//!   that all lie on the manifold still approximates h^{k+1} y^{(k+1)}.
//!   The starting values of fixed steps, which the extrapolated implicit
//!   Euler method computes without the invariants, are projected onto
//!   g = 0 (D⁻¹-weighted, the h → 0 limit of the corrector).

use nalgebra::{Complex, DMatrix};

use crate::discontinuity::resolution_floor;
use crate::error::{EvalError, IntegrateError};
use crate::initial_step::initial_step;
use crate::multistep::stability_limit::{admissible, largest_admissible_step, ModeEstimate};
use crate::multistep::start::ImplicitEulerExtrapolation;
use crate::newton::{newton_solve_with_rate, CachedLu, NewtonOutcome, NewtonSettings};
use crate::norm::wrms_norm;
use crate::overdetermined::{newton_solve_overdetermined, OdaeCorrector};
use crate::problem::OdeProblem;
use crate::step_loop::{self, LoopState, StepAttempt, Trial};
use crate::stepper::{StepContext, Stepper};

/// Largest order.
pub const MAX_ORDER: usize = 5;

/// The Newton iteration of a variable step stops when its estimated
/// remaining error η‖Δ‖ is at most this fraction of the largest
/// correction the error test accepts, 1/C_k with C_k = κ_k γ_k + 1/(k+1)
/// the error constant (‖y_{n+1} − y^(0)_{n+1}‖ C_k ≤ 1): CVODE's
/// convergence test R‖δ‖ ≤ 0.1 · (the error test's bound on the
/// correction), its coefficient `nlscoef` = 0.1 (Hindmarsh et al.,
/// "SUNDIALS", ACM TOMS 31 (2005) 363–396, §2.1; SUNDIALS CVODE user
/// guide, `CVodeSetNonlinConvCoef`), with the rate R kept from the last
/// solve on the same matrix ([`newton_solve_with_rate`]). The former
/// fixed 0.03 (radau5.f's FNEWT) with a rate measured afresh at every step
/// took two iterations at almost every step: on P-A (studies.md S1) over
/// [0, 1] at rtol 1e-9 in body coordinates 22 781 f-evaluations for
/// 10 992 steps, now 13 386 for 11 004, at the same error against
/// pa_ref.json (1.69e-5 and 1.64e-5); neither change alone removes the
/// second iteration (the coefficient alone: 22 404; the kept rate alone,
/// in joint coordinates: 24 171 instead of 24 179).
pub const NEWTON_COEF: f64 = 0.1;

/// The Newton tolerance of an overdetermined problem (ODAE), whose
/// invariants g(t, y) = 0 hold to it at every step: radau5.f's FNEWT
/// 0.03, with the kept rate as for ODEs. [`NEWTON_COEF`]'s 0.1/C_k (0.2
/// to 0.6) left the velocity constraints of a double pendulum 1.2 rtol
/// off at rtol 1e-6 (tests/suite/odae.rs in the root crate).
pub const NEWTON_TOL_INVARIANTS: f64 = 0.03;

/// The NDF parameters κ_1..κ_5 of ode15s (Shampine & Reichelt 1997, Table 1).
pub const NDF_KAPPA: [f64; 5] = [-0.1850, -1.0 / 9.0, -0.0823, -0.0415, 0.0];
/// κ = 0: the BDFs.
pub const BDF_KAPPA: [f64; 5] = [0.0; 5];

/// R(ρ) of Shampine–Reichelt 1997, eq. (5), its first k rows and
/// columns: R_ij = Π_{l=1}^{i} (l − 1 − j ρ)/l, i, j = 1..k (row i − 1,
/// column j − 1), each column as the running product over l.
fn r_matrix(rho: f64, k: usize) -> [[f64; MAX_ORDER]; MAX_ORDER] {
    let mut r = [[0.0; MAX_ORDER]; MAX_ORDER];
    for j in 1..=k {
        let mut p = 1.0;
        for l in 1..=k {
            p *= (l as f64 - 1.0 - j as f64 * rho) / l as f64;
            r[l - 1][j - 1] = p;
        }
    }
    r
}

/// Variable-step variable-order BDF/NDF stepper.
pub struct BdfNdf {
    name: &'static str,
    kappa: [f64; 5],
    max_order: usize,
    /// γ_k = Σ 1/j
    gamma: [f64; MAX_ORDER + 1],
    /// 1/((1 − κ_k) γ_k)
    inv_ga: [f64; MAX_ORDER + 1],
    /// U = R(1) of the step change ([`r_matrix`]), independent of h
    u: [[f64; MAX_ORDER]; MAX_ORDER],
    /// κ_k γ_k + 1/(k+1)
    erconst: [f64; MAX_ORDER + 2],
    t: f64,
    t_prev: f64,
    /// step the differences are scaled to (= last accepted step)
    h: f64,
    /// proposed next step
    h_next: f64,
    k: usize,
    /// order used by the last step (dense output)
    k_dense: usize,
    nconhk: usize,
    y: Vec<f64>,
    /// dif[j] = ∇^{j+1} y_n, j = 0..MAX_ORDER+1
    dif: Vec<Vec<f64>>,
    tmp_cols: Vec<Vec<f64>>,
    ypred: Vec<f64>,
    ynew: Vec<f64>,
    psi: Vec<f64>,
    difkp1: Vec<f64>,
    g: Vec<f64>,
    w: Vec<f64>,
    jac: DMatrix<f64>,
    miter: DMatrix<f64>,
    lu: CachedLu,
    lu_coef: f64,
    /// contraction rate of the last Newton solve on the current
    /// factorisation (None after a new one): the first iteration of the
    /// next step is judged by it ([`newton_solve_with_rate`])
    newton_rate: Option<f64>,
    jac_valid: bool,
    jac_current: bool,
    /// fixed-step start: points y_0 .. collected so far (newest first)
    start_pts: Vec<Vec<f64>>,
    n_start: usize,
    f0: Vec<f64>,
    starter: ImplicitEulerExtrapolation,
    /// invariants p of an overdetermined problem (0: an ODE)
    n_inv: usize,
    corr: OdaeCorrector,
    /// residual and invariants of the least-squares iteration (n + p)
    res: Vec<f64>,
    /// the shared step loop's state ([`step_loop::advance`])
    loop_state: LoopState,
    /// failed trials (Newton and error test) of the current step
    fails: u32,
    /// rtol, atol of the run (the order selection in
    /// [`StepAttempt::factor`] has no context)
    tol: (f64, f64),
    /// order chosen after an error-test failure, applied when the step
    /// is retried ([`StepAttempt::rejected`])
    order_after_reject: Option<usize>,
    /// (order, steps at constant h and order) chosen after an accepted
    /// trial, applied once the differences are updated
    /// ([`StepAttempt::commit`])
    order_after_accept: Option<(usize, usize)>,
    /// the trial is a fixed-step starting value, not the formula
    start_step: bool,
    /// Rayleigh–Ritz work space of the stability-limit control
    /// ([`crate::multistep::stability_limit`])
    mode: ModeEstimate,
    /// the last estimate of the mode that dominates the error (None: none
    /// reliable) and the accepted steps since it was made
    modes: Option<[Complex<f64>; 2]>,
    modes_age: usize,
}

impl BdfNdf {
    /// A stepper with parameters κ (zero: BDF) and maximal order.
    pub fn new(name: &'static str, kappa: [f64; 5], max_order: usize) -> Self {
        let mut gamma = [0.0; MAX_ORDER + 1];
        let mut inv_ga = [0.0; MAX_ORDER + 1];
        let mut erconst = [0.0; MAX_ORDER + 2];
        for k in 1..=MAX_ORDER {
            gamma[k] = gamma[k - 1] + 1.0 / k as f64;
            inv_ga[k] = 1.0 / ((1.0 - kappa[k - 1]) * gamma[k]);
            erconst[k] = kappa[k - 1] * gamma[k] + 1.0 / (k as f64 + 1.0);
        }
        erconst[MAX_ORDER + 1] = 1.0 / (MAX_ORDER as f64 + 2.0);
        Self {
            name,
            kappa,
            max_order: max_order.clamp(1, MAX_ORDER),
            gamma,
            inv_ga,
            u: r_matrix(1.0, MAX_ORDER),
            erconst,
            t: 0.0,
            t_prev: 0.0,
            h: 0.0,
            h_next: 0.0,
            k: 1,
            k_dense: 1,
            nconhk: 0,
            y: Vec::new(),
            dif: Vec::new(),
            tmp_cols: Vec::new(),
            ypred: Vec::new(),
            ynew: Vec::new(),
            psi: Vec::new(),
            difkp1: Vec::new(),
            g: Vec::new(),
            w: Vec::new(),
            jac: DMatrix::zeros(0, 0),
            miter: DMatrix::zeros(0, 0),
            lu: CachedLu::new(),
            lu_coef: f64::NAN,
            newton_rate: None,
            jac_valid: false,
            jac_current: false,
            start_pts: Vec::new(),
            n_start: 0,
            f0: Vec::new(),
            starter: ImplicitEulerExtrapolation::new(0),
            n_inv: 0,
            corr: OdaeCorrector::new(),
            res: Vec::new(),
            loop_state: LoopState::default(),
            fails: 0,
            tol: (0.0, 0.0),
            order_after_reject: None,
            order_after_accept: None,
            start_step: false,
            mode: ModeEstimate::default(),
            modes: None,
            modes_age: usize::MAX,
        }
    }

    /// The κ parameters.
    pub fn kappa(&self) -> &[f64; 5] {
        &self.kappa
    }

    /// Re-interpolate the first k differences from step h to step h_new:
    /// D ← D (R(ρ) U) (Shampine–Reichelt 1997, eq. (5)).
    fn rescale(&mut self, h_new: f64) {
        if h_new == self.h || self.h == 0.0 {
            self.h = h_new;
            return;
        }
        let rho = h_new / self.h;
        let k = self.k;
        // R(ρ) by its running products, then R(ρ) U with U = R(1) made
        // once (the same products and sums as entry by entry, without
        // recomputing each R_im and U_mj k times: that was a tenth of the
        // step's own work on P-A)
        let r = r_matrix(rho, k);
        let u = &self.u;
        let mut ru = [[0.0; MAX_ORDER]; MAX_ORDER];
        for i in 0..k {
            for j in 0..k {
                let mut s = 0.0;
                for m in 0..k {
                    s += r[i][m] * u[m][j];
                }
                ru[i][j] = s;
            }
        }
        let n = self.y.len();
        for j in 0..k {
            for c in 0..n {
                let mut s = 0.0;
                for i in 0..k {
                    s += self.dif[i][c] * ru[i][j];
                }
                self.tmp_cols[j][c] = s;
            }
        }
        for j in 0..k {
            std::mem::swap(&mut self.dif[j], &mut self.tmp_cols[j]);
        }
        self.h = h_new;
        // a change at the level of rounding (the loop keeps h at least at
        // the resolution of t, which grows with t) is no change of step
        // for the order selection, which waits for k + 2 steps at
        // constant h: at h = 10 ε t it would otherwise wait forever
        if (rho - 1.0).abs() > 1e-12 {
            self.nconhk = 0;
        }
    }

    /// Rebuild ∇^j y_n, j = 1..npts−1, from equally spaced points (newest first).
    fn dif_from_points(&mut self, npts: usize) {
        let n = self.y.len();
        for c in 0..n {
            let mut v = [0.0; MAX_ORDER + 2];
            for (i, vi) in v.iter_mut().enumerate().take(npts) {
                *vi = self.start_pts[i][c];
            }
            // successive backward differences at the newest point
            for j in 1..npts {
                for i in 0..npts - j {
                    v[i] -= v[i + 1];
                }
                self.dif[j - 1][c] = v[0];
            }
            for j in npts..self.dif.len() + 1 {
                self.dif[j - 1][c] = 0.0;
            }
        }
    }

    /// One attempt of the order-k formula with step self.h from (t, y):
    /// returns Ok(Some(err)) with the error norm, Ok(None) on Newton failure.
    fn try_formula(
        &mut self,
        p: &mut dyn OdeProblem,
        ctx: &mut StepContext,
    ) -> Result<Option<f64>, IntegrateError> {
        let k = self.k;
        let h = self.h;
        let n = self.y.len();
        let t_new = self.t + h;
        let coef = h * self.inv_ga[k];
        for c in 0..n {
            let mut yp = self.y[c];
            let mut ps = 0.0;
            for j in 0..k {
                yp += self.dif[j][c];
                ps += self.gamma[j + 1] * self.dif[j][c];
            }
            self.ypred[c] = yp;
            self.psi[c] = ps * self.inv_ga[k];
            self.w[c] = 1.0 / (ctx.opts.atol + ctx.opts.rtol * self.y[c].abs());
        }
        if !self.jac_valid {
            p.jacobian(self.t, &self.y, &mut self.jac)?;
            self.jac_valid = true;
            self.jac_current = true;
            self.lu.invalidate();
        }
        if !self.lu.is_factored() || self.lu_coef != coef {
            for r in 0..n {
                for c in 0..n {
                    self.miter[(r, c)] = -coef * self.jac[(r, c)];
                }
                self.miter[(r, r)] += 1.0;
            }
            if self.lu.factor(&self.miter, self.t, ctx.stats).is_err() {
                // singular iteration matrix: handled as a convergence failure
                // (fresh Jacobian, then a smaller step)
                return Ok(None);
            }
            self.lu_coef = coef;
            self.newton_rate = None;
        }
        if self.n_inv > 0 {
            // G at the predictor, Z = A⁻¹ D Gᵀ, Q = G Z
            let od = p
                .as_overdetermined()
                .ok_or_else(|| not_overdetermined(self.name))?;
            match od.invariant_jacobian(t_new, &self.ypred, self.corr.jacobian_mut()) {
                Ok(()) => {}
                Err(EvalError::NonFinite { .. }) => return Ok(None),
                Err(e) => return Err(e.into()),
            }
            if !self.corr.prepare(&mut self.lu, &self.w, ctx.stats) {
                // singular G A⁻¹ D Gᵀ: as a singular iteration matrix
                return Ok(None);
            }
        }
        self.ynew.copy_from_slice(&self.ypred);
        let fixed = ctx.opts.fixed_step.is_some();
        let settings = if fixed {
            NewtonSettings {
                max_iter: 12,
                // floor at round-off (radau5.f: FNEWT ≥ 10 ε/rtol)
                tol: (10.0 * f64::EPSILON / ctx.opts.rtol).max(1e-10),
            }
        } else {
            NewtonSettings {
                max_iter: 5,
                // an overdetermined problem meets its invariants to the
                // Newton tolerance: there the former FNEWT 0.03 stays
                tol: if self.n_inv > 0 {
                    NEWTON_TOL_INVARIANTS
                } else {
                    NEWTON_COEF / self.erconst[k]
                },
            }
        };
        // the rate of the last solve on this factorisation (variable
        // steps; fixed steps iterate to round-off from scratch)
        let prior = if fixed { None } else { self.newton_rate };
        let (ypred, psi) = (&self.ypred, &self.psi);
        let out = if self.n_inv == 0 {
            newton_solve_with_rate(
                |x, g| {
                    p.rhs(t_new, x, g)?;
                    for i in 0..x.len() {
                        g[i] = psi[i] + (x[i] - ypred[i]) - coef * g[i];
                    }
                    Ok(())
                },
                &mut self.ynew,
                &mut self.lu,
                &self.w,
                &settings,
                prior,
                &mut self.g,
                ctx.stats,
            )
        } else {
            let name = self.name;
            newton_solve_overdetermined(
                |x, r, g| {
                    p.rhs(t_new, x, r)?;
                    for i in 0..x.len() {
                        r[i] = psi[i] + (x[i] - ypred[i]) - coef * r[i];
                    }
                    p.as_overdetermined()
                        .ok_or_else(|| EvalError::Other(not_overdetermined(name).to_string()))?
                        .invariants(t_new, x, g)?;
                    if g.iter().all(|v| v.is_finite()) {
                        Ok(())
                    } else {
                        Err(EvalError::NonFinite {
                            what: "invariants g(t, y)".into(),
                            t: t_new,
                        })
                    }
                },
                &mut self.ynew,
                &mut self.lu,
                &mut self.corr,
                &self.w,
                &settings,
                prior,
                &mut self.res,
                ctx.stats,
            )
        };
        match out {
            Ok(NewtonOutcome::Converged { iters, rate }) => {
                if iters > 1 {
                    self.newton_rate = Some(rate);
                }
            }
            Ok(NewtonOutcome::Failed { .. }) => {
                self.newton_rate = None;
                return Ok(None);
            }
            // f not finite at an iterate: the step was too large
            Err(EvalError::NonFinite { .. }) => return Ok(None),
            Err(e) => return Err(e.into()),
        }
        for c in 0..n {
            self.difkp1[c] = self.ynew[c] - self.ypred[c];
        }
        let e = wrms_norm(
            &self.difkp1,
            &self.y,
            &self.ynew,
            ctx.opts.rtol,
            ctx.opts.atol,
        );
        Ok(Some(e * self.erconst[k]))
    }

    /// Accept ynew: update the differences (ode15s: dif(:,k+2) = difkp1 − dif(:,k+1), ...).
    fn accept(&mut self) {
        let k = self.k;
        let n = self.y.len();
        for c in 0..n {
            self.dif[k + 1][c] = self.difkp1[c] - self.dif[k][c];
            self.dif[k][c] = self.difkp1[c];
        }
        for j in (0..k).rev() {
            for c in 0..n {
                self.dif[j][c] += self.dif[j + 1][c];
            }
        }
        self.t_prev = self.t;
        self.t += self.h;
        self.y.copy_from_slice(&self.ynew);
        self.k_dense = k;
        self.jac_current = false;
    }

    /// The step h_cand proposed for order kk, limited to the largest step
    /// at which order kk damps the estimated mode
    /// ([`crate::multistep::stability_limit`]); unchanged when no mode is
    /// known or kk ≤ 2 (A-stable).
    fn stability_capped(
        &self,
        kk: usize,
        h: f64,
        h_cand: f64,
        modes: &Option<[Complex<f64>; 2]>,
        eta: f64,
    ) -> f64 {
        let Some(m) = modes else {
            return h_cand;
        };
        if kk <= 2 {
            return h_cand;
        }
        let kappa = self.kappa[kk - 1];
        let lo = if h < h_cand && admissible(kk, kappa, h, m, eta) {
            h
        } else {
            0.0
        };
        largest_admissible_step(kk, kappa, lo, h_cand, m, eta)
    }

    fn norm_col(&self, v: &[f64], rtol: f64, atol: f64) -> f64 {
        wrms_norm(v, &self.y, &self.y, rtol, atol)
    }

    /// Move a starting value `ynew` (from the extrapolated implicit Euler
    /// method, which knows nothing of the invariants) onto g(t, y) = 0 by
    /// the D⁻¹-weighted orthogonal projection
    /// ([`OdaeCorrector::prepare_projection`]), iterated with G frozen to
    /// the fixed-step Newton tolerance. The projection changes the value by
    /// its distance from the manifold, of the order of the starter's error.
    fn project_start(
        &mut self,
        p: &mut dyn OdeProblem,
        t: f64,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let n = self.y.len();
        let (rtol, atol) = (ctx.opts.rtol, ctx.opts.atol);
        for c in 0..n {
            self.w[c] = 1.0 / (atol + rtol * self.y[c].abs());
        }
        let max_iter = 12;
        let tol = (10.0 * f64::EPSILON / rtol).max(1e-10);
        let failed = |iters| IntegrateError::NewtonFailed {
            t: self.t,
            h,
            iters,
        };
        let od = p
            .as_overdetermined()
            .ok_or_else(|| not_overdetermined(self.name))?;
        od.invariant_jacobian(t, &self.ynew, self.corr.jacobian_mut())?;
        if !self.corr.prepare_projection(&self.w) {
            return Err(failed(0));
        }
        for it in 1..=max_iter {
            let (dx, g) = self.res.split_at_mut(n);
            od.invariants(t, &self.ynew, g)?;
            dx.fill(0.0);
            self.corr.correct(dx, g);
            let mut s = 0.0;
            for c in 0..n {
                self.ynew[c] -= dx[c];
                s += (dx[c] * self.w[c]).powi(2);
            }
            let norm = (s / n as f64).sqrt();
            if !norm.is_finite() {
                return Err(failed(it));
            }
            if norm <= tol {
                return Ok(());
            }
        }
        Err(failed(max_iter))
    }

    /// Order and step after a trial of size h rejected by the error test
    /// (ode15s): at the first failure of the step,
    /// h_new = h · clamp(1/(1.2 err^{1/(k+1)}), 0.1, 0.9), or order k − 1
    /// when its estimate ‖∇^k y_{n+1}‖ allows a larger step (not above h);
    /// at later failures h/2, and order 1 from the third. Returns
    /// h_new / h; the order takes effect when the step is retried.
    fn select_after_rejection(&mut self, err: f64, h: f64) -> f64 {
        self.fails += 1;
        let k = self.k;
        let (rtol, atol) = self.tol;
        if self.fails > 1 {
            if self.fails >= 3 {
                self.order_after_reject = Some(1);
            }
            return 0.5;
        }
        let mut hopt = h * (1.0 / (1.2 * err.powf(1.0 / (k as f64 + 1.0)))).clamp(0.1, 0.9);
        if k > 1 {
            // ∇^k y_{n+1} = ∇^k y_n + ∇^{k+1} y_{n+1}
            for c in 0..self.y.len() {
                self.g[c] = self.dif[k - 1][c] + self.difkp1[c];
            }
            let errkm1 = self.norm_col(&self.g, rtol, atol) * self.erconst[k - 1];
            let hkm1 = h * (1.0 / (1.3 * errkm1.powf(1.0 / k as f64))).clamp(0.1, 0.9);
            if hkm1 > hopt {
                hopt = hkm1.min(h);
                self.order_after_reject = Some(k - 1);
            }
        }
        hopt / h
    }

    /// Order and step after an accepted trial of size h with error norm
    /// `err` (module doc: the stability limit first, then, after k + 2
    /// steps at constant h and k, the ode15s selection among k − 1, k,
    /// k + 1). Computed before the differences are updated, from
    /// ∇^k y_{n+1} = ∇^k y_n + ∇^{k+1} y_{n+1} and
    /// ∇^{k+2} y_{n+1} = ∇^{k+1} y_{n+1} − ∇^{k+1} y_n weighted by y_{n+1}
    /// (the same sums the update forms). Returns h_new / h; the order
    /// takes effect in [`StepAttempt::commit`].
    fn select_after_acceptance(&mut self, err: f64, h: f64) -> f64 {
        let k = self.k;
        let (rtol, atol) = self.tol;
        let n = self.y.len();
        let nconhk = (self.nconhk + 1).min(MAX_ORDER + 2);
        let decide = nconhk >= k + 2;
        // stability limit (stability_limit.rs): the mode that dominates
        // the error estimate ∇^{k+1} y_{n+1}, when an order ≥ 3 is in play
        // (re-estimated at each order/step decision and at least every
        // k + 2 steps, as J changes rarely: two products with J)
        let wanted = k >= 3 || (decide && k + 1 >= 3 && k < self.max_order);
        if wanted && (decide || self.modes_age >= k + 2) {
            self.modes = self.mode.estimate(&self.jac, &self.difkp1, &self.w);
            self.modes_age = 0;
        } else {
            self.modes_age = self.modes_age.saturating_add(1);
        }
        let modes = if wanted { self.modes } else { None };
        if let Some(m) = &modes {
            if k >= 3 && !admissible(k, self.kappa[k - 1], h, m, rtol) {
                // the formula does not damp the mode: the highest order
                // that does (BDF1/2 always do), same step
                let mut kn = k - 1;
                while kn > 1 && !admissible(kn, self.kappa[kn - 1], h, m, rtol) {
                    kn -= 1;
                }
                self.order_after_accept = Some((kn, 0));
                return 1.0;
            }
        }
        let mut next = (k, nconhk);
        let mut fac = 1.0;
        if decide {
            let norm_new = |v: &[f64]| wrms_norm(v, &self.ynew, &self.ynew, rtol, atol);
            let mut hopt = h / (1.2 * err.powf(1.0 / (k as f64 + 1.0))).max(0.1);
            hopt = self.stability_capped(k, h, hopt, &modes, rtol);
            let mut kopt = k;
            if k > 1 {
                for c in 0..n {
                    self.g[c] = self.dif[k - 1][c] + self.difkp1[c];
                }
                let errkm1 = norm_new(&self.g) * self.erconst[k - 1];
                let hkm1 = h / (1.3 * errkm1.powf(1.0 / k as f64)).max(0.1);
                let hkm1 = self.stability_capped(k - 1, h, hkm1, &modes, rtol);
                if hkm1 > hopt {
                    hopt = hkm1;
                    kopt = k - 1;
                }
            }
            if k < self.max_order {
                for c in 0..n {
                    self.tmp_cols[0][c] = self.difkp1[c] - self.dif[k][c];
                }
                let errkp1 = norm_new(&self.tmp_cols[0]) * self.erconst[k + 1];
                let hkp1 = h / (1.4 * errkp1.powf(1.0 / (k as f64 + 2.0))).max(0.1);
                let hkp1 = self.stability_capped(k + 1, h, hkp1, &modes, rtol);
                if hkp1 > hopt {
                    hopt = hkp1;
                    kopt = k + 1;
                }
            }
            if hopt > h {
                fac = hopt / h;
                if kopt != k {
                    next = (kopt, 0);
                }
            }
        }
        self.order_after_accept = Some(next);
        fac
    }

    /// A fixed step of the start (`fixed_step`, fewer than k + 1 points):
    /// the next starting value by extrapolated implicit Euler into ynew,
    /// projected onto the invariants of an overdetermined problem.
    fn start_value(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        p.rhs(self.t, &self.y, &mut self.f0)?;
        self.starter
            .step(p, self.t, &self.y, &self.f0, h, &mut self.ynew, ctx)?;
        if self.n_inv > 0 {
            self.project_start(p, self.t + h, h, ctx)?;
        }
        Ok(())
    }

    /// Make the starting value ynew of a step of size h the current point
    /// and rebuild the differences from the equally spaced points.
    fn accept_start_value(&mut self, h: f64) {
        let kfix = self.max_order;
        self.lu.invalidate();
        self.start_pts.rotate_right(1);
        self.start_pts[0].copy_from_slice(&self.ynew);
        self.n_start += 1;
        self.t_prev = self.t;
        self.t += h;
        self.y.copy_from_slice(&self.ynew);
        self.h = h;
        let npts = self.n_start.min(kfix + 1);
        self.k = (npts - 1).max(1);
        self.dif_from_points(npts);
        self.k_dense = npts - 1;
        if self.n_start > kfix {
            self.k = kfix;
        }
    }
}

impl StepAttempt for BdfNdf {
    fn current_t(&self) -> f64 {
        self.t
    }

    fn proposed_h(&self) -> f64 {
        self.h_next
    }

    /// The differences stay scaled to the last step until the next trial
    /// (re-interpolated in [`StepAttempt::attempt`]).
    fn set_h(&mut self, h: f64) {
        self.h_next = h;
    }

    crate::step_loop::loop_state_accessor!();

    /// The differences re-interpolated to h, then the order-k formula.
    /// A Newton failure (or a singular iteration matrix) with a Jacobian
    /// from an earlier step repeats the step with a fresh one, and with a
    /// current Jacobian shrinks h by 0.3 (ode15s); 20 failures within one
    /// step give up. Fixed steps: the start by extrapolated implicit
    /// Euler, no error test, and a Newton failure with a current Jacobian
    /// is an error.
    fn attempt(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<Trial, IntegrateError> {
        self.tol = (ctx.opts.rtol, ctx.opts.atol);
        let fixed = ctx.opts.fixed_step.is_some();
        self.start_step = false;
        if fixed && self.n_start <= self.max_order {
            if (h - self.h_next).abs() <= 1e-12 * self.h_next {
                self.start_value(p, h, ctx)?;
                self.start_step = true;
                return Ok(Trial::Unchecked);
            }
            // end reached before the start finished: the order of the
            // points that exist
            self.k = (self.n_start.min(self.max_order + 1) - 1).max(1);
        }
        self.rescale(h);
        if let Some(err) = self.try_formula(p, ctx)? {
            return Ok(if fixed {
                Trial::Unchecked
            } else {
                Trial::Estimated(err)
            });
        }
        self.fails += 1;
        if !fixed && self.fails > 20 {
            return Err(IntegrateError::NewtonFailed {
                t: self.t,
                h,
                iters: 5,
            });
        }
        if !self.jac_current {
            self.jac_valid = false;
            return Ok(Trial::Repeat);
        }
        if fixed {
            return Err(IntegrateError::NewtonFailed {
                t: self.t,
                h,
                iters: 12,
            });
        }
        Ok(Trial::Failed { factor: 0.3 })
    }

    /// The step after one trimmed to t_stop follows from the trimmed one
    /// (the selection bounds the ratio of successive steps).
    fn resumes_after_trim(&self) -> bool {
        false
    }

    fn factor(&mut self, err: f64, h: f64, accepted: bool) -> f64 {
        if accepted {
            self.select_after_acceptance(err, h)
        } else {
            self.select_after_rejection(err, h)
        }
    }

    /// Update the differences with the new value (or, during the
    /// fixed-step start, rebuild them from the points), then take the
    /// order chosen for the next step.
    fn commit(
        &mut self,
        _p: &mut dyn OdeProblem,
        h: f64,
        _ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.order_after_reject = None;
        if std::mem::take(&mut self.start_step) {
            self.accept_start_value(h);
            return Ok(());
        }
        self.accept();
        if let Some((k, nconhk)) = self.order_after_accept.take() {
            self.k = k;
            self.nconhk = nconhk;
        }
        Ok(())
    }

    /// Restart at the current point after crossing a discontinuity
    /// ([`crate::discontinuity`]): the differences span the jump and are
    /// dropped; order 1, ∇y ≈ h y' with a fresh f and first step, a fresh
    /// Jacobian. The dense output of the crossing step (shorter than the
    /// floating-point resolution allows to matter) becomes its end value.
    fn restart_here(
        &mut self,
        p: &mut dyn OdeProblem,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        p.rhs(self.t, &self.y, &mut self.f0)?;
        let opts = ctx.opts;
        // not below the resolution at t (the crossing step had that size;
        // 0.01 ‖y‖/‖f‖ from a tiny y and a large f can be smaller)
        let h = initial_step(
            p, self.t, &self.y, &self.f0, 1, opts.rtol, opts.atol, opts.h_max, 1.0,
        )?
        .max(resolution_floor(self.t));
        self.k = 1;
        self.k_dense = 0;
        self.nconhk = 0;
        self.jac_valid = false;
        self.jac_current = false;
        self.modes = None;
        self.modes_age = usize::MAX;
        self.lu.invalidate();
        for d in self.dif.iter_mut() {
            d.fill(0.0);
        }
        for (d, f) in self.dif[0].iter_mut().zip(&self.f0) {
            *d = h * f;
        }
        self.h = h;
        self.h_next = h;
        Ok(())
    }

    /// The order chosen after the rejection takes effect.
    fn rejected(
        &mut self,
        _p: &mut dyn OdeProblem,
        _h: f64,
        _ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        super::take_pending_order(&mut self.k, &mut self.order_after_reject);
        Ok(())
    }
}

/// A problem that stopped offering its invariants between steps.
fn not_overdetermined(name: &str) -> IntegrateError {
    IntegrateError::Unsupported {
        method: name.into(),
        detail: "the problem offered invariants at the start and none now".into(),
    }
}

impl Stepper for BdfNdf {
    fn name(&self) -> &'static str {
        self.name
    }

    /// A projection moves y_n only; the backward differences ∇^j y_n are
    /// kept, as CVODE keeps the Nordsieck columns beyond z_0 (the
    /// correction is of the order of the local error). The fixed-step
    /// start phase restarts instead.
    fn correct(
        &mut self,
        p: &mut dyn OdeProblem,
        y: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        if ctx.opts.fixed_step.is_some() || y.len() != self.y.len() {
            let t = self.t;
            return self.reset(p, t, y, ctx);
        }
        self.y.copy_from_slice(y);
        Ok(())
    }

    fn reset(
        &mut self,
        p: &mut dyn OdeProblem,
        t0: f64,
        y0: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let n = y0.len();
        if self.y.len() != n || self.dif.is_empty() {
            self.y = vec![0.0; n];
            self.dif = vec![vec![0.0; n]; MAX_ORDER + 2];
            self.tmp_cols = vec![vec![0.0; n]; MAX_ORDER];
            self.ypred = vec![0.0; n];
            self.ynew = vec![0.0; n];
            self.psi = vec![0.0; n];
            self.difkp1 = vec![0.0; n];
            self.g = vec![0.0; n];
            self.w = vec![0.0; n];
            self.f0 = vec![0.0; n];
            self.jac = DMatrix::zeros(n, n);
            self.miter = DMatrix::zeros(n, n);
            self.start_pts = vec![vec![0.0; n]; MAX_ORDER + 2];
            self.starter = ImplicitEulerExtrapolation::new(n);
            self.mode = ModeEstimate::new(n);
        }
        let n_inv = p.as_overdetermined().map_or(0, |o| o.n_invariants());
        if n_inv > n {
            return Err(IntegrateError::Unsupported {
                method: self.name.into(),
                detail: format!(
                    "the overdetermined problem has {n_inv} invariants for {n} unknowns; \
                     they cannot all be met"
                ),
            });
        }
        if n_inv != self.corr.n_invariants() || self.res.len() != n + n_inv {
            self.corr.resize(n, n_inv);
            self.res = vec![0.0; n + n_inv];
        }
        self.n_inv = n_inv;
        self.t = t0;
        self.t_prev = t0;
        self.y.copy_from_slice(y0);
        self.k = 1;
        self.k_dense = 0;
        self.nconhk = 0;
        self.jac_valid = false;
        self.jac_current = false;
        self.loop_state = LoopState::default();
        self.order_after_reject = None;
        self.order_after_accept = None;
        self.start_step = false;
        self.modes = None;
        self.modes_age = usize::MAX;
        self.lu.invalidate();
        for d in self.dif.iter_mut() {
            d.fill(0.0);
        }
        p.rhs(t0, y0, &mut self.f0)?;
        let h = if let Some(h) = ctx.opts.fixed_step {
            if !(h > 0.0 && h.is_finite()) {
                return Err(IntegrateError::BadMethod(format!(
                    "{}: fixed step size must be positive and finite, got {h}",
                    self.name
                )));
            }
            self.start_pts[0].copy_from_slice(y0);
            self.n_start = 1;
            h
        } else {
            match ctx.opts.h0 {
                Some(h0) => h0,
                None => initial_step(
                    p,
                    t0,
                    y0,
                    &self.f0.clone(),
                    1,
                    ctx.opts.rtol,
                    ctx.opts.atol,
                    ctx.opts.h_max,
                    1.0,
                )?,
            }
        };
        // ∇y_0 ≈ h y'_0 (ode15s)
        for c in 0..n {
            self.dif[0][c] = h * self.f0[c];
        }
        self.h = h;
        self.h_next = h;
        Ok(())
    }

    /// One accepted step by the shared loop ([`step_loop::advance`]).
    fn step(
        &mut self,
        p: &mut dyn OdeProblem,
        t_stop: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.fails = 0;
        step_loop::advance(self, p, t_stop, ctx)
    }

    crate::one_step::one_step_accessors!(fields);

    fn interpolate(&self, t: f64, out: &mut [f64]) {
        out.copy_from_slice(&self.y);
        if self.h == 0.0 {
            return;
        }
        let s = (t - self.t) / self.h;
        let mut c = 1.0;
        for j in 1..=self.k_dense {
            c *= (s + j as f64 - 1.0) / j as f64;
            for (o, d) in out.iter_mut().zip(&self.dif[j - 1]) {
                *o += c * d;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ∇^j p(0), j = 1..k, on the grid t_i = −i h.
    fn backward_differences(p: impl Fn(f64) -> f64, h: f64, k: usize) -> Vec<f64> {
        let mut v: Vec<f64> = (0..=k).map(|i| p(-(i as f64) * h)).collect();
        let mut d = Vec::new();
        for j in 1..=k {
            for i in 0..=k - j {
                v[i] -= v[i + 1];
            }
            d.push(v[0]);
        }
        d
    }

    /// For a polynomial of degree k the backward differences on the grid
    /// of step h, re-interpolated to step ρh by D ← D (R(ρ) U)
    /// (Shampine–Reichelt 1997, eq. (5)), are those on the grid of step
    /// ρh: the interpolating polynomial of the k + 1 points is the
    /// polynomial itself, so the change of step is exact up to rounding
    /// (|p| ≈ 1: 1e-12 absolute).
    /// A wrong R, U or product fails it.
    #[test]
    fn rescaled_differences_are_those_of_the_new_grid() {
        let coef = [0.7, -1.3, 2.1, 0.4, -0.9, 1.6];
        let h = 0.1;
        for k in 1..=MAX_ORDER {
            let p = |t: f64| coef[..=k].iter().rev().fold(0.0, |s, c| s * t + c);
            for rho in [0.25, 0.5, 0.9, 1.3, 2.0] {
                let mut s = BdfNdf::new("bdf", BDF_KAPPA, MAX_ORDER);
                s.y = vec![p(0.0)];
                s.dif = vec![vec![0.0]; MAX_ORDER + 2];
                s.tmp_cols = vec![vec![0.0]; MAX_ORDER + 2];
                s.k = k;
                s.h = h;
                for (j, d) in backward_differences(p, h, k).into_iter().enumerate() {
                    s.dif[j][0] = d;
                }
                s.rescale(rho * h);
                assert_eq!(s.h, rho * h);
                let want = backward_differences(p, rho * h, k);
                for j in 0..k {
                    let got = s.dif[j][0];
                    assert!(
                        // rounding of values of order 1; ∇^j is ≥ 1e-3 here
                        (got - want[j]).abs() <= 1e-12,
                        "k = {k}, ρ = {rho}: ∇^{} = {got:e}, new grid {:e}",
                        j + 1,
                        want[j]
                    );
                }
            }
        }
    }
}
