//! Radau IIA of order 5 (three-stage collocation at c = ((4 − √6)/10,
//! (4 + √6)/10, 1)), adaptive, after Hairer & Wanner's radau5.f
//! (Solving ODEs II, 2nd ed., Section IV.8).
//!
//! With stage increments Z_i = Y_i − y_n the collocation equations are
//! Z = h (A ⊗ I) F(Z). Simplified Newton, multiplied by (hA)⁻¹ ⊗ I and
//! transformed with A⁻¹ = T Λ T⁻¹, Λ = diag(γ, [[α, −β], [β, α]]),
//! W = (T⁻¹ ⊗ I) Z, decouples into one real and one complex system
//! (HW II, IV.8, "Reducing the computational cost"):
//!
//! (γ/h I − J) ΔW1 = −(γ/h) W1 + (T⁻¹F)_1,
//! ((α + iβ)/h I − J)(ΔW2 + iΔW3) = −((α + iβ)/h)(W2 + iW3) + (T⁻¹F)_2 + i(T⁻¹F)_3.
//!
//! Error estimate (HW II, IV.8, "Error estimation"):
//! err = (γ/h I − J)⁻¹ [f(t_n, y_n) + (1/h) Σ d_i Z_i], d = (−(13 + 7√6)/3,
//! (−13 + 7√6)/3, −1/3); on a first or rejected step with err ≥ 1 it is
//! filtered once more through f (radau5.f, ESTRAD).
//! Step control: radau5.f's safety factor depending on the Newton
//! iterations, and Gustafsson's predictive controller (HW II, IV.8, "Step size selection").
//! Dense output: the collocation polynomial (radau5.f, CONTR5).
//! As in radau5.f the tolerances are transformed, rtol' = 0.1 rtol^(2/3),
//! atol' = rtol' · atol/rtol, because the embedded estimate is of order 3.

use nalgebra::{Complex, DMatrix, Matrix3};

use crate::dense_lu::DenseLu;
use crate::error::{EvalError, IntegrateError};
use crate::initial_step::initial_step;
use crate::newton::CachedLu;
use crate::problem::OdeProblem;
use crate::step_loop::{self, LoopState, StepAttempt, Trial};
use crate::stepper::{StepContext, Stepper};

type C64 = Complex<f64>;

/// The Radau IIA (s = 3) coefficients and their eigen-decomposition.
#[derive(Clone, Debug, PartialEq)]
pub struct RadauCoeffs {
    /// Butcher matrix A (HW II, IV.5, Table 5.6).
    pub a: [[f64; 3]; 3],
    /// Nodes c.
    pub c: [f64; 3],
    /// Real eigenvalue γ of A⁻¹.
    pub gamma: f64,
    /// Complex eigenvalues α ± iβ of A⁻¹.
    pub alpha: f64,
    /// Imaginary part β.
    pub beta: f64,
    /// T with A⁻¹ T = T Λ.
    pub t: [[f64; 3]; 3],
    /// T⁻¹.
    pub ti: [[f64; 3]; 3],
    /// Error-estimate weights d_i = e_i/γ0 (radau5.f DD1..DD3).
    pub dd: [f64; 3],
}

impl RadauCoeffs {
    /// Compute the coefficients. The eigenvalues come in closed form
    /// (radau5.f: u1 = (6 + 81^(1/3) − 9^(1/3))/30 is the real eigenvalue of
    /// A, (12 − 81^(1/3) + 9^(1/3))/60 ± i(81^(1/3) + 9^(1/3))√3/60 the
    /// complex pair); T is built from eigenvectors of A⁻¹ normalised to a
    /// unit last component, so no transformation constant is copied.
    pub fn new() -> Self {
        let s6 = 6f64.sqrt();
        let a = [
            [
                (88.0 - 7.0 * s6) / 360.0,
                (296.0 - 169.0 * s6) / 1800.0,
                (-2.0 + 3.0 * s6) / 225.0,
            ],
            [
                (296.0 + 169.0 * s6) / 1800.0,
                (88.0 + 7.0 * s6) / 360.0,
                (-2.0 - 3.0 * s6) / 225.0,
            ],
            [(16.0 - s6) / 36.0, (16.0 + s6) / 36.0, 1.0 / 9.0],
        ];
        let c = [(4.0 - s6) / 10.0, (4.0 + s6) / 10.0, 1.0];
        let (c81, c9) = (81f64.cbrt(), 9f64.cbrt());
        let u1 = (6.0 + c81 - c9) / 30.0;
        let al = (12.0 - c81 + c9) / 60.0;
        let be = (c81 + c9) * 3f64.sqrt() / 60.0;
        let cno = al * al + be * be;
        let gamma = 1.0 / u1;
        let alpha = al / cno;
        let beta = be / cno;
        let am = Matrix3::from_fn(|i, j| a[i][j]);
        let ainv = am.try_inverse().expect("Radau IIA matrix is regular");
        // real eigenvector: rows 0, 1 of (A⁻¹ − γI) v = 0 with v2 = 1
        let (m00, m01, m10, m11) = (
            ainv[(0, 0)] - gamma,
            ainv[(0, 1)],
            ainv[(1, 0)],
            ainv[(1, 1)] - gamma,
        );
        let (r0, r1) = (-ainv[(0, 2)], -ainv[(1, 2)]);
        let det = m00 * m11 - m01 * m10;
        let v = [
            (r0 * m11 - m01 * r1) / det,
            (m00 * r1 - m10 * r0) / det,
            1.0,
        ];
        // complex eigenvector for α − iβ
        let lam = C64::new(alpha, -beta);
        let (n00, n01, n10, n11) = (
            C64::new(ainv[(0, 0)], 0.0) - lam,
            C64::new(ainv[(0, 1)], 0.0),
            C64::new(ainv[(1, 0)], 0.0),
            C64::new(ainv[(1, 1)], 0.0) - lam,
        );
        let (q0, q1) = (C64::new(-ainv[(0, 2)], 0.0), C64::new(-ainv[(1, 2)], 0.0));
        let cdet = n00 * n11 - n01 * n10;
        let w = [
            (q0 * n11 - n01 * q1) / cdet,
            (n00 * q1 - n10 * q0) / cdet,
            C64::new(1.0, 0.0),
        ];
        let tm = Matrix3::from_fn(|i, j| match j {
            0 => v[i],
            1 => w[i].re,
            _ => w[i].im,
        });
        let tim = tm.try_inverse().expect("eigenvector matrix is regular");
        let t = [
            [tm[(0, 0)], tm[(0, 1)], tm[(0, 2)]],
            [tm[(1, 0)], tm[(1, 1)], tm[(1, 2)]],
            [tm[(2, 0)], tm[(2, 1)], tm[(2, 2)]],
        ];
        let ti = [
            [tim[(0, 0)], tim[(0, 1)], tim[(0, 2)]],
            [tim[(1, 0)], tim[(1, 1)], tim[(1, 2)]],
            [tim[(2, 0)], tim[(2, 1)], tim[(2, 2)]],
        ];
        let dd = [
            -(13.0 + 7.0 * s6) / 3.0,
            (-13.0 + 7.0 * s6) / 3.0,
            -1.0 / 3.0,
        ];
        Self {
            a,
            c,
            gamma,
            alpha,
            beta,
            t,
            ti,
            dd,
        }
    }

    /// A as rows (for [`crate::implicit::stability::rk_stability`]).
    pub fn a_rows(&self) -> Vec<Vec<f64>> {
        self.a.iter().map(|r| r.to_vec()).collect()
    }
}

impl Default for RadauCoeffs {
    fn default() -> Self {
        Self::new()
    }
}

/// radau5.f defaults (shared with the DAE stepper, [`crate::dae::DaeRadau5`]).
pub(crate) const NIT: u32 = 7;
pub(crate) const SAFE: f64 = 0.9;
pub(crate) const THET: f64 = 0.001;
pub(crate) const FACL: f64 = 5.0;
pub(crate) const FACR: f64 = 0.125;
pub(crate) const QUOT1: f64 = 1.0;
pub(crate) const QUOT2: f64 = 1.2;

/// radau5.f's transformed tolerances and Newton stopping criterion:
/// rtol' = 0.1 rtol^(2/3), atol' = rtol' · atol/rtol (the embedded
/// estimate is of order 3), FNEWT = max(10 ε/rtol', min(0.03, √rtol')).
/// Returns (rtol', atol', FNEWT).
pub(crate) fn transformed_tolerances(rtol: f64, atol: f64) -> (f64, f64, f64) {
    let quot = atol / rtol;
    let rtol_t = 0.1 * rtol.powf(2.0 / 3.0);
    let fnewt = (10.0 * f64::EPSILON / rtol_t).max(0.03f64.min(rtol_t.sqrt()));
    (rtol_t, rtol_t * quot, fnewt)
}

/// Coefficients [κ0, κ1, κ2, κ3] of one component of the collocation
/// polynomial of a step with stage increments `z` ending at `y_new`
/// (radau5.f, CONTR5), evaluated by [`collocation_value`].
pub(crate) fn collocation_coefficients(c: &[f64; 3], y_new: f64, z: [f64; 3]) -> [f64; 4] {
    let (c1, c2) = (c[0], c[1]);
    let (c1m1, c2m1, c1mc2) = (c1 - 1.0, c2 - 1.0, c1 - c2);
    let [z1, z2, z3] = z;
    let k1 = (z2 - z3) / c2m1;
    let ak = (z1 - z2) / c1mc2;
    let acont3 = (ak - z1 / c1) / c2;
    let k2 = (ak - k1) / c1m1;
    [y_new, k1, k2, k2 - acont3]
}

/// The collocation polynomial u(s) = κ0 + s(κ1 + (s − c2 + 1)(κ2 +
/// (s − c1 + 1)κ3)) at s = (t − t_{n+1})/h (radau5.f, CONTR5). With
/// κ0 = 0 and s = c_i h_new/h it gives the extrapolated starting stage
/// increments of the next step.
pub(crate) fn collocation_value(c: &[f64; 3], k: [f64; 4], s: f64) -> f64 {
    let (c1m1, c2m1) = (c[0] - 1.0, c[1] - 1.0);
    k[0] + s * (k[1] + (s - c2m1) * (k[2] + (s - c1m1) * k[3]))
}

/// radau5.f's next step size after a step of size `h` with error norm
/// `err` and `newt` Newton iterations: h/quot with the safety factor
/// fac = min(SAFE, SAFE (1 + 2 NIT)/(newt + 2 NIT)), and, for an accepted
/// step that follows an accepted one (`prev` = its (h, err)),
/// Gustafsson's predictive controller (HW II, IV.8, eq. (8.25)).
pub(crate) fn proposed_step(err: f64, h: f64, newt: u32, prev: Option<(f64, f64)>) -> f64 {
    let fac = SAFE.min(SAFE * (1 + 2 * NIT) as f64 / (newt + 2 * NIT) as f64);
    let mut quot = FACR.max(FACL.min(err.powf(0.25) / fac));
    if let Some((h_acc, err_acc)) = prev {
        let facgus = (h_acc / h) * (err * err / err_acc).powf(0.25) / SAFE;
        quot = quot.max(FACR.max(FACL.min(facgus)));
    }
    h / quot
}

/// radau5.f's verdict after Newton iteration `newt` (1 < newt < nit) with
/// contraction rate θ and scaled increment norm `dyno`: `Ok(FACCON)` with
/// FACCON = θ/(1 − θ) to go on, or `Err(factor)` by which to reduce h when
/// θ ≥ 0.99 or the error predicted after the remaining iterations,
/// θ^(nit−1−newt)/(1 − θ) · dyno, exceeds FNEWT (HW II, IV.8, eqs.
/// (8.10)–(8.12)).
pub(crate) fn newton_verdict(
    theta: f64,
    dyno: f64,
    newt: u32,
    nit: u32,
    fnewt: f64,
) -> Result<f64, f64> {
    if theta >= 0.99 {
        return Err(0.5);
    }
    let faccon = theta / (1.0 - theta);
    let dyth = faccon * dyno * theta.powi((nit - 1 - newt) as i32) / fnewt;
    if dyth >= 1.0 {
        let qnewt = dyth.clamp(1e-4, 20.0);
        return Err(0.8 * qnewt.powf(-1.0 / (4.0 + (nit - 1 - newt) as f64)));
    }
    Ok(faccon)
}

/// Why a Newton iteration ended.
enum NewtonEnd {
    Converged(u32),
    /// Failed: reduce h by this factor.
    Failed(f64),
}

/// The Radau IIA (order 5) stepper.
pub struct Radau5 {
    co: RadauCoeffs,
    t: f64,
    t_prev: f64,
    h: f64,
    h_old: f64,
    y: Vec<f64>,
    f0: Vec<f64>,
    z: [Vec<f64>; 3],
    w: [Vec<f64>; 3],
    fz: [Vec<f64>; 3],
    cont: [Vec<f64>; 4],
    scal: Vec<f64>,
    tmp: Vec<f64>,
    tmp2: Vec<f64>,
    cvec: Vec<C64>,
    jac: DMatrix<f64>,
    e1mat: DMatrix<f64>,
    e1: CachedLu,
    /// ((α + iβ)/h) I − J and its factors, in storage sized at reset
    e2: DenseLu<C64>,
    e2_ok: bool,
    /// h of the factorisations (NaN: none)
    lu_h: f64,
    need_jac: bool,
    caljac: bool,
    first: bool,
    reject: bool,
    theta: f64,
    faccon: f64,
    h_acc: f64,
    err_acc: f64,
    n_acc: u64,
    /// Newton failures and rejections since the last accepted step, and
    /// singular decompositions
    rejected_in_a_row: u32,
    singular: u32,
    /// Newton iterations of the last trial (radau5.f's safety factor)
    newt: u32,
    loop_state: LoopState,
    rtol: f64,
    atol: f64,
    fnewt: f64,
}

impl Default for Radau5 {
    fn default() -> Self {
        Self::new()
    }
}

impl Radau5 {
    /// A Radau IIA stepper.
    pub fn new() -> Self {
        let e = || Vec::new();
        Self {
            co: RadauCoeffs::new(),
            t: 0.0,
            t_prev: 0.0,
            h: 0.0,
            h_old: 0.0,
            y: e(),
            f0: e(),
            z: [e(), e(), e()],
            w: [e(), e(), e()],
            fz: [e(), e(), e()],
            cont: [e(), e(), e(), e()],
            scal: e(),
            tmp: e(),
            tmp2: e(),
            cvec: Vec::new(),
            jac: DMatrix::zeros(0, 0),
            e1mat: DMatrix::zeros(0, 0),
            e1: CachedLu::new(),
            e2: DenseLu::new(),
            e2_ok: false,
            lu_h: f64::NAN,
            need_jac: true,
            caljac: false,
            first: true,
            reject: false,
            theta: THET,
            faccon: 1.0,
            h_acc: 0.0,
            err_acc: 1e-2,
            n_acc: 0,
            rejected_in_a_row: 0,
            singular: 0,
            newt: 0,
            loop_state: LoopState::default(),
            rtol: 1e-6,
            atol: 1e-6,
            fnewt: 0.03,
        }
    }

    fn set_scal(&mut self) {
        for i in 0..self.y.len() {
            self.scal[i] = self.atol + self.rtol * self.y[i].abs();
        }
    }

    /// Factorise E1 = (γ/h) I − J and E2 = ((α + iβ)/h) I − J.
    fn decompose(&mut self, h: f64, ctx: &mut StepContext) -> Result<(), EvalError> {
        let n = self.y.len();
        let fac1 = self.co.gamma / h;
        let (alphn, betan) = (self.co.alpha / h, self.co.beta / h);
        let e2 = &mut self.e2.lu;
        for i in 0..n {
            for j in 0..n {
                self.e1mat[(i, j)] = -self.jac[(i, j)];
                e2[(i, j)] = C64::new(-self.jac[(i, j)], 0.0);
            }
            self.e1mat[(i, i)] += fac1;
            e2[(i, i)] += C64::new(alphn, betan);
        }
        // counted once per pair, as radau5.f's NDEC
        self.e1.factor(&self.e1mat, self.t, ctx.stats)?;
        self.e2_ok = self.e2.factor();
        if !self.e2_ok {
            return Err(EvalError::Singular {
                what: "complex iteration matrix of radau5".into(),
                t: self.t,
                detail: String::new(),
            });
        }
        self.lu_h = h;
        Ok(())
    }

    /// Starting values of the Newton iteration: zero, or extrapolated from
    /// the previous step's collocation polynomial (radau5.f).
    fn starting_values(&mut self, h: f64) {
        let n = self.y.len();
        if self.first {
            for i in 0..3 {
                self.z[i].iter_mut().for_each(|v| *v = 0.0);
                self.w[i].iter_mut().for_each(|v| *v = 0.0);
            }
            return;
        }
        let c3q = h / self.h_old;
        for m in 0..n {
            let k = [0.0, self.cont[1][m], self.cont[2][m], self.cont[3][m]];
            for i in 0..3 {
                self.z[i][m] = collocation_value(&self.co.c, k, self.co.c[i] * c3q);
            }
            let ti = &self.co.ti;
            for k in 0..3 {
                self.w[k][m] =
                    ti[k][0] * self.z[0][m] + ti[k][1] * self.z[1][m] + ti[k][2] * self.z[2][m];
            }
        }
    }

    /// Simplified Newton iteration for the stage increments (radau5.f, loop 40).
    fn newton(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<NewtonEnd, IntegrateError> {
        let n = self.y.len();
        let co = &self.co;
        let fac1 = co.gamma / h;
        let (alphn, betan) = (co.alpha / h, co.beta / h);
        self.faccon = self.faccon.max(f64::EPSILON).powf(0.8);
        self.theta = THET;
        // radau5.f's NIT when h can be reduced; at fixed steps the iteration must converge
        let nit = if ctx.opts.fixed_step.is_some() {
            30
        } else {
            NIT
        };
        let mut newt = 0u32;
        let mut dynold = 0.0f64;
        let mut thqold = 0.0f64;
        loop {
            if newt >= nit {
                return Ok(NewtonEnd::Failed(0.5));
            }
            for i in 0..3 {
                for m in 0..n {
                    self.tmp[m] = self.y[m] + self.z[i][m];
                }
                p.rhs(self.t + co.c[i] * h, &self.tmp, &mut self.fz[i])?;
            }
            ctx.stats.n_newton_iter += 1;
            // transformed right-hand sides, then the two linear systems
            for m in 0..n {
                let f = [self.fz[0][m], self.fz[1][m], self.fz[2][m]];
                let g: [f64; 3] = std::array::from_fn(|k| {
                    co.ti[k][0] * f[0] + co.ti[k][1] * f[1] + co.ti[k][2] * f[2]
                });
                self.tmp[m] = g[0] - fac1 * self.w[0][m];
                self.cvec[m] = C64::new(
                    g[1] - (alphn * self.w[1][m] - betan * self.w[2][m]),
                    g[2] - (betan * self.w[1][m] + alphn * self.w[2][m]),
                );
            }
            // counted once per pair, as radau5.f's NSOL
            self.e1.solve_in_place(&mut self.tmp, ctx.stats);
            if self.e2_ok {
                self.e2.solve(&mut self.cvec);
            }
            newt += 1;
            let mut dyno = 0.0;
            for m in 0..n {
                let s = self.scal[m];
                dyno += (self.tmp[m] / s).powi(2)
                    + (self.cvec[m].re / s).powi(2)
                    + (self.cvec[m].im / s).powi(2);
            }
            let dyno = (dyno / (3 * n.max(1)) as f64).sqrt();
            if !dyno.is_finite() {
                ctx.stats.n_newton_fail += 1;
                return Ok(NewtonEnd::Failed(0.5));
            }
            if newt > 1 && newt < nit {
                let thq = dyno / dynold;
                self.theta = if newt == 2 {
                    thq
                } else {
                    (thq * thqold).sqrt()
                };
                thqold = thq;
                match newton_verdict(self.theta, dyno, newt, nit, self.fnewt) {
                    Ok(faccon) => self.faccon = faccon,
                    Err(hhfac) => {
                        ctx.stats.n_newton_fail += 1;
                        return Ok(NewtonEnd::Failed(hhfac));
                    }
                }
            }
            dynold = dyno.max(f64::EPSILON);
            for m in 0..n {
                self.w[0][m] += self.tmp[m];
                self.w[1][m] += self.cvec[m].re;
                self.w[2][m] += self.cvec[m].im;
                let wm = [self.w[0][m], self.w[1][m], self.w[2][m]];
                for i in 0..3 {
                    self.z[i][m] = co.t[i][0] * wm[0] + co.t[i][1] * wm[1] + co.t[i][2] * wm[2];
                }
            }
            if self.faccon * dyno <= self.fnewt {
                return Ok(NewtonEnd::Converged(newt));
            }
        }
    }

    /// Error estimate (radau5.f, ESTRAD); returns the scaled norm.
    fn error_estimate(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<f64, IntegrateError> {
        let n = self.y.len();
        let hee = [self.co.dd[0] / h, self.co.dd[1] / h, self.co.dd[2] / h];
        for m in 0..n {
            self.tmp2[m] = hee[0] * self.z[0][m] + hee[1] * self.z[1][m] + hee[2] * self.z[2][m];
            self.tmp[m] = self.tmp2[m] + self.f0[m];
        }
        self.e1.solve_in_place(&mut self.tmp, ctx.stats);
        let norm = |v: &[f64], scal: &[f64]| {
            let s: f64 = v.iter().zip(scal).map(|(a, b)| (a / b).powi(2)).sum();
            (s / n.max(1) as f64).sqrt().max(1e-10)
        };
        let mut err = norm(&self.tmp, &self.scal);
        if err >= 1.0 && (self.first || self.reject) {
            for m in 0..n {
                self.tmp[m] += self.y[m];
            }
            // f(t, y + err) into fz[0] (scratch; recomputed by the next Newton)
            p.rhs(self.t, &self.tmp, &mut self.fz[0])?;
            for m in 0..n {
                self.tmp[m] = self.fz[0][m] + self.tmp2[m];
            }
            self.e1.solve_in_place(&mut self.tmp, ctx.stats);
            err = norm(&self.tmp, &self.scal);
        }
        Ok(err)
    }

    /// Make the attempted step the current point and build the dense output.
    fn accept(&mut self, p: &mut dyn OdeProblem, h: f64) -> Result<(), IntegrateError> {
        let n = self.y.len();
        self.t_prev = self.t;
        self.h_old = h;
        self.t += h;
        for m in 0..n {
            self.y[m] += self.z[2][m];
            let z = [self.z[0][m], self.z[1][m], self.z[2][m]];
            let k = collocation_coefficients(&self.co.c, self.y[m], z);
            for (c, kj) in self.cont.iter_mut().zip(k) {
                c[m] = kj;
            }
        }
        p.rhs(self.t, &self.y, &mut self.f0)?;
        self.first = false;
        Ok(())
    }

    /// Restart at the current point after crossing a discontinuity
    /// ([`crate::discontinuity`]): no extrapolated starting values, no
    /// predictive controller, a fresh Jacobian and a first step chosen
    /// anew (as [`Stepper::reset`], without copying y; the dense output
    /// of the crossing step stays valid).
    fn restart_at_crossing(
        &mut self,
        p: &mut dyn OdeProblem,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.first = true;
        self.reject = false;
        self.need_jac = true;
        self.caljac = false;
        self.faccon = 1.0;
        self.theta = THET;
        self.n_acc = 0;
        self.err_acc = 1e-2;
        self.lu_h = f64::NAN;
        let opts = ctx.opts;
        self.h = initial_step(
            p, self.t, &self.y, &self.f0, 3, opts.rtol, opts.atol, opts.h_max, 1.0,
        )?;
        Ok(())
    }
}

impl Stepper for Radau5 {
    fn name(&self) -> &'static str {
        "radau5"
    }

    /// After a breakpoint: the smaller of the kept step size and the
    /// first-step estimate at the new point ([`Stepper::restart_at_breakpoint`]).
    fn restart_at_breakpoint(
        &mut self,
        p: &mut dyn OdeProblem,
        t0: f64,
        y0: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        crate::stepper::restart_keeping_step(self, |s| &mut s.h, p, t0, y0, ctx)
    }

    fn reset(
        &mut self,
        p: &mut dyn OdeProblem,
        t0: f64,
        y0: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let n = y0.len();
        if self.y.len() != n || self.scal.len() != n {
            let z = || vec![0.0; n];
            self.f0 = z();
            self.z = [z(), z(), z()];
            self.w = [z(), z(), z()];
            self.fz = [z(), z(), z()];
            self.cont = [z(), z(), z(), z()];
            self.scal = z();
            self.tmp = z();
            self.tmp2 = z();
            self.cvec = vec![C64::new(0.0, 0.0); n];
            self.e2.resize(n);
            self.jac = DMatrix::zeros(n, n);
            self.e1mat = DMatrix::zeros(n, n);
        }
        let opts = ctx.opts;
        if !(opts.rtol > 0.0) || !(opts.atol >= 0.0) {
            return Err(IntegrateError::BadMethod(format!(
                "radau5: tolerances must be positive (rtol = {}, atol = {})",
                opts.rtol, opts.atol
            )));
        }
        // radau5.f: transformed tolerances and Newton stopping criterion
        (self.rtol, self.atol, self.fnewt) = transformed_tolerances(opts.rtol, opts.atol);
        // into the existing storage: a reset after every projection allocates nothing
        self.y.clear();
        self.y.extend_from_slice(y0);
        self.t = t0;
        self.t_prev = t0;
        self.h_old = 0.0;
        for c in self.cont.iter_mut() {
            c.iter_mut().for_each(|v| *v = 0.0);
        }
        self.cont[0].copy_from_slice(y0);
        self.need_jac = true;
        self.caljac = false;
        self.first = true;
        self.reject = false;
        self.faccon = 1.0;
        self.theta = THET;
        self.n_acc = 0;
        self.loop_state = LoopState::default();
        self.err_acc = 1e-2;
        self.lu_h = f64::NAN;
        p.rhs(t0, y0, &mut self.f0)?;
        if let Some(h) = opts.fixed_step {
            if !(h > 0.0) {
                return Err(IntegrateError::BadMethod(format!(
                    "radau5: fixed step size must be positive, got {h}"
                )));
            }
            self.h = h;
        } else if self.h == 0.0 {
            self.h = match opts.h0 {
                Some(h0) => h0,
                None => initial_step(
                    p, t0, y0, &self.f0, 3, opts.rtol, opts.atol, opts.h_max, 1.0,
                )?,
            };
        }
        Ok(())
    }

    /// One accepted step by the shared loop ([`step_loop::advance`]).
    fn step(
        &mut self,
        p: &mut dyn OdeProblem,
        t_stop: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.rejected_in_a_row = 0;
        self.singular = 0;
        self.set_scal();
        step_loop::advance(self, p, t_stop, ctx)
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

    /// The collocation polynomial of the last step (radau5.f, CONTR5):
    /// u(s) = y_{n+1} + s(κ1 + (s − c2 + 1)(κ2 + (s − c1 + 1)κ3)),
    /// s = (t − t_{n+1})/h.
    fn interpolate(&self, t: f64, out: &mut [f64]) {
        let h = self.t - self.t_prev;
        if h == 0.0 {
            out.copy_from_slice(&self.y);
            return;
        }
        let s = (t - self.t) / h;
        for (m, o) in out.iter_mut().enumerate() {
            let k = [
                self.cont[0][m],
                self.cont[1][m],
                self.cont[2][m],
                self.cont[3][m],
            ];
            *o = collocation_value(&self.co.c, k, s);
        }
    }
}

impl StepAttempt for Radau5 {
    crate::step_loop::step_state_accessors!();

    /// Jacobian when asked for, the two factorisations when h changed,
    /// the simplified Newton iteration and radau5.f's error estimate. A
    /// singular matrix halves h (5 times at most), a Newton failure shrinks
    /// it by radau5.f's factor (30 times in a row at most); at fixed steps
    /// a Newton failure with an old Jacobian repeats the step with a new one.
    fn attempt(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<Trial, IntegrateError> {
        let adaptive = ctx.opts.fixed_step.is_none();
        if self.need_jac {
            p.jacobian(self.t, &self.y, &mut self.jac)?;
            self.need_jac = false;
            self.caljac = true;
            self.lu_h = f64::NAN;
        }
        if self.lu_h != h {
            match self.decompose(h, ctx) {
                Ok(()) => {}
                Err(e @ EvalError::Singular { .. }) => {
                    self.singular += 1;
                    if !adaptive || self.singular > 5 {
                        return Err(e.into());
                    }
                    self.reject = true;
                    return Ok(Trial::Failed { factor: 0.5 });
                }
                Err(e) => return Err(e.into()),
            }
        }
        self.starting_values(h);
        // a failed evaluation at a diverging iterate counts as a Newton failure
        let outcome = match self.newton(p, h, ctx) {
            Err(IntegrateError::Eval { .. }) if adaptive && self.rejected_in_a_row < 10 => {
                NewtonEnd::Failed(0.5)
            }
            other => other?,
        };
        match outcome {
            NewtonEnd::Converged(k) => self.newt = k,
            NewtonEnd::Failed(hhfac) => {
                if !adaptive {
                    if self.caljac {
                        return Err(IntegrateError::NewtonFailed {
                            t: self.t,
                            h,
                            iters: NIT,
                        });
                    }
                    self.need_jac = true;
                    return Ok(Trial::Repeat);
                }
                self.rejected_in_a_row += 1;
                if self.rejected_in_a_row > 30 {
                    return Err(IntegrateError::NewtonFailed {
                        t: self.t,
                        h,
                        iters: NIT,
                    });
                }
                self.reject = true;
                if !self.caljac {
                    self.need_jac = true;
                }
                return Ok(Trial::Failed { factor: hhfac });
            }
        }
        if !adaptive {
            return Ok(Trial::Unchecked);
        }
        Ok(Trial::Estimated(self.error_estimate(p, h, ctx)?))
    }

    /// radau5.f's step size: the safety factor of the Newton iterations,
    /// Gustafsson's predictive controller after an accepted step, h kept
    /// when the change is within [QUOT1, QUOT2] and the Jacobian is good,
    /// no growth after a rejection; after a rejected first step h/10.
    fn factor(&mut self, err: f64, h: f64, accepted: bool) -> f64 {
        let prev = (accepted && self.n_acc > 0).then_some((self.h_acc, self.err_acc));
        let hnew = proposed_step(err, h, self.newt, prev);
        if !accepted {
            return if self.first { 0.1 } else { hnew / h };
        }
        self.n_acc += 1;
        self.h_acc = h;
        self.err_acc = err.max(1e-2);
        let mut hnew = hnew;
        if self.reject {
            hnew = hnew.min(h);
        }
        let qt = hnew / h;
        if self.theta <= THET && (QUOT1..=QUOT2).contains(&qt) {
            1.0
        } else {
            qt
        }
    }

    /// radau5.f accepts err < 1.
    fn passes(&self, err: f64, _h: f64) -> bool {
        err < 1.0
    }

    fn rejected(
        &mut self,
        _p: &mut dyn OdeProblem,
        _h: f64,
        _ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.rejected_in_a_row += 1;
        self.reject = true;
        if !self.caljac {
            self.need_jac = true;
        }
        Ok(())
    }

    fn commit(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        _ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.accept(p, h)?;
        self.caljac = false;
        self.reject = false;
        self.need_jac = self.theta > THET;
        Ok(())
    }

    fn restart_here(
        &mut self,
        p: &mut dyn OdeProblem,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.restart_at_crossing(p, ctx)
    }
}
