//! Radau IIA of order 5, written once for both forms it integrates:
//! the ODE y' = f(t, y) ([`crate::implicit::Radau5`]) and the implicit DAE
//! F(t, y, y') = 0, M y' = f(t, y) among them, with index-aware error
//! scaling ([`crate::dae::DaeRadau5`]) (Hairer & Wanner, *Solving ODEs
//! II*, 2nd ed., Sections IV.8, VI.1 and VII.8; radau5.f, version of 1996).
//!
//! Three-stage collocation at c = ((4 − √6)/10, (4 + √6)/10, 1). With
//! stage increments Z_i = Y_i − y_n and the stage derivatives of the
//! collocation polynomial, Y'_i = (1/h) Σ_j (A⁻¹)_ij Z_j, the stage
//! equations are
//!
//! ```text
//! M Y'_i = f(t_n + c_i h, y_n + Z_i)            (ODE: M = I)
//! F(t_n + c_i h, y_n + Z_i, Y'_i) = 0            (DAE)
//! ```
//!
//! (HW II, IV.8 and VI.1, eq. (1.13)). Simplified Newton with the matrix
//! I ⊗ J + (1/h) A⁻¹ ⊗ M (J = ∂F/∂y, M = ∂F/∂y'; for the ODE J = −f_y,
//! M = I), transformed with A⁻¹ = T Λ T⁻¹, Λ = diag(γ, [[α, −β], [β, α]]),
//! W = (T⁻¹ ⊗ I) Z, decouples into one real and one complex n × n system
//! (HW II, IV.8, "Reducing the computational cost"):
//!
//! ```text
//! (J + (γ/h) M) ΔW1                   = −(T⁻¹G)_1
//! (J + ((α + iβ)/h) M) (ΔW2 + i ΔW3)  = −((T⁻¹G)_2 + i (T⁻¹G)_3)
//! ```
//!
//! with G_i the stage residuals.
//!
//! What is written here, once: the coefficients and their transformation
//! ([`RadauCoeffs`]), the simplified Newton iteration on the transformed
//! system with radau5.f's convergence test (contraction rate θ, at most
//! 7 iterations, FNEWT; eqs. (8.10)–(8.12)), the starting values
//! extrapolated from the last collocation polynomial, the filtered error
//! estimate of radau5.f's ESTRAD (a first or rejected step's estimate
//! ≥ 1 is filtered once more), radau5.f's step-size selection (the safety
//! factor of the Newton iterations and Gustafsson's predictive
//! controller, HW II, IV.8, eq. (8.25)), the decisions to reuse the
//! Jacobian (a new one only after a slowly converging iteration,
//! θ > 0.001) and the factorisations (kept while h is unchanged, h kept
//! when the change is within [1, 1.2]), the dense output (the
//! collocation polynomial, radau5.f's CONTR5) and the stepper's state,
//! reset and restart ([`Radau`]).
//!
//! What each form supplies ([`RadauForm`]): how its stage residuals are
//! evaluated and transformed, its iteration matrices and their
//! factorisation and solves, the right-hand side of the error estimate,
//! its error weights (the ODE's SCAL = atol' + rtol' |y|; the DAE's
//! index-scaled weights of radau5.f's NIND2/NIND3, HW II, VII.8), and
//! what it keeps at the step's end (f(t, y) or the collocation
//! derivative y').
//!
//! As in radau5.f the tolerances are transformed, rtol' = 0.1 rtol^(2/3),
//! atol' = rtol' · atol/rtol, because the embedded estimate is of order 3.

use nalgebra::{Complex, Matrix3};

use crate::error::{EvalError, IntegrateError};
use crate::initial_step::initial_step;
use crate::problem::OdeProblem;
use crate::stats::Stats;
use crate::step_loop::{self, LoopState, StepAttempt, Trial};
use crate::stepper::{StepContext, Stepper};

pub(crate) type C64 = Complex<f64>;

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

/// radau5.f defaults.
pub(crate) const NIT: u32 = 7;
pub(crate) const SAFE: f64 = 0.9;
pub(crate) const THET: f64 = 0.001;
/// radau5.f's THET for systems whose Jacobian costs more than a few Newton
/// iterations: radau5.f's comments on WORK(3) advise raising it to about
/// 0.1 when Jacobian evaluations are costly and keeping 0.001 for small
/// systems. Used from [`LARGE_SYSTEM`] unknowns: on the index-3 form of a
/// 1000-link chain (8000 unknowns, rtol 1e-6, atol 1e-8, t = 0 .. 0.2 s)
/// it takes 17 Jacobians and 38 factorisations for 76 steps instead of 66
/// and 70 for 72, 9.2 ms per step instead of 14.3 (10 instead of 14.5 at
/// rtol 1e-4).
pub(crate) const THET_LARGE: f64 = 0.1;
/// Unknowns from which a system counts as large for [`THET_LARGE`].
pub(crate) const LARGE_SYSTEM: usize = 1000;
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

/// Largest scaled Newton increment accepted from an iteration that has
/// stopped contracting: a tenth of the error test's unit.
pub(crate) const STALL_ACCEPT: f64 = 0.1;

/// Contraction rate up to which a stopped iteration counts as stalled at
/// its round-off level rather than diverging.
const STALL_THETA: f64 = 2.0;

/// Whether a Newton iteration that radau5.f's verdict rejects has in fact
/// stalled at the round-off of its residual, with an increment already far
/// inside the error test: θ < 2 (not diverging) and the scaled increment
/// ≤ [`STALL_ACCEPT`] = 0.1.
///
/// radau5.f's FNEWT (`3.2e-3` at rtol 1e-6) asks the increment to be a
/// few thousandths of the tolerance. On the index-3 form of a long chain
/// the multipliers' tolerance, relaxed by h² (HW II, VII.8), meets the
/// round-off of Φ(q) at coordinates of hundreds of metres: the increment
/// of λ then stays at the same scaled size at every h (measured 0.082 from
/// h = 1e-5 down to 8e-13 on a 300-link chain at rtol 1e-6, atol 1e-9),
/// the iteration never contracts, and every step size fails. Such an
/// iterate differs from the converged one by noise of a tenth of the
/// error test or less, tighter than the convergence test of IDA and
/// CVODE (an estimated error ≤ 0.33 of the error test; Hindmarsh et al.,
/// *SUNDIALS*, ACM TOMS 31 (2005), Section 2.1), and the error estimate
/// still judges the step.
pub(crate) fn stalled_at_round_off(theta: f64, dyno: f64) -> bool {
    theta < STALL_THETA && dyno <= STALL_ACCEPT
}

/// Newton iterations allowed at fixed steps, where h cannot be reduced.
pub(crate) const NIT_FIXED: u32 = 30;

/// At fixed steps, growth of the Newton increment over the first one
/// beyond which the iteration is taken to diverge (forms with
/// [`RadauForm::TOLERATE_GROWTH_AT_FIXED_STEPS`]).
const GROWTH_LIMIT: f64 = 1e3;

/// Newton failures in a row after which a step gives up (radau5.f).
const MAX_NEWTON_FAILURES: u32 = 30;

/// How a Newton iteration ended.
pub(crate) enum NewtonEnd {
    /// Converged after this many iterations.
    Converged(u32),
    /// Failed: retry with h reduced by this factor.
    Failed(f64),
}

/// The state both forms share: the step, the stage increments and their
/// transform, the dense output, the error weights and radau5.f's
/// controller and reuse flags.
pub struct RadauCore {
    pub(crate) co: RadauCoeffs,
    pub(crate) t: f64,
    pub(crate) t_prev: f64,
    /// Proposed step size (the fixed one at fixed steps).
    pub(crate) h: f64,
    /// Size of the last accepted step.
    pub(crate) h_old: f64,
    pub(crate) y: Vec<f64>,
    /// Stage increments Z_i and their transform W = (T⁻¹ ⊗ I) Z.
    pub(crate) z: [Vec<f64>; 3],
    pub(crate) w: [Vec<f64>; 3],
    /// Coefficients of the collocation polynomial (radau5.f, CONTR5).
    pub(crate) cont: [Vec<f64>; 4],
    /// Error weights of the form ([`RadauForm::weigh`]).
    pub(crate) wt: Vec<f64>,
    /// The real system's right-hand side and solution (also scratch).
    pub(crate) tmp: Vec<f64>,
    /// The complex system's right-hand side and solution.
    pub(crate) cvec: Vec<C64>,
    /// h of the factorisations (NaN: none).
    pub(crate) lu_h: f64,
    pub(crate) need_jac: bool,
    /// The Jacobian was computed at the current step.
    pub(crate) caljac: bool,
    pub(crate) first: bool,
    pub(crate) reject: bool,
    pub(crate) theta: f64,
    /// The contraction rate above which a new Jacobian is computed after a
    /// step, and at or below which the factorisations are kept when h
    /// changes little: [`THET`], or [`THET_LARGE`] for large systems.
    pub(crate) thet: f64,
    pub(crate) faccon: f64,
    pub(crate) h_acc: f64,
    pub(crate) err_acc: f64,
    pub(crate) n_acc: u64,
    /// Transformed tolerances and Newton stopping criterion.
    pub(crate) rtol: f64,
    pub(crate) atol: f64,
    pub(crate) fnewt: f64,
    /// σ of a tolerance-proportional scaling of the weights (1: none).
    pub(crate) sigma: f64,
    /// A fixed-step run (h is the fixed step).
    pub(crate) fixed: bool,
    /// Fixed steps: the grid origin and the index of the current grid point.
    pub(crate) grid_t0: f64,
    pub(crate) grid_k: u64,
    /// t_stop of the current step.
    pub(crate) t_stop: f64,
    /// Newton iterations and error norm of the current trial, and whether
    /// it passed the error test.
    pub(crate) newt: u32,
    pub(crate) err: f64,
    pub(crate) passed: bool,
    /// Failed trials in a row, and failed evaluations or factorisations of
    /// the current step.
    pub(crate) rejected_in_a_row: u32,
    pub(crate) retries: u32,
    pub(crate) loop_state: LoopState,
}

impl RadauCore {
    fn new() -> Self {
        let e = Vec::new;
        Self {
            co: RadauCoeffs::new(),
            t: 0.0,
            t_prev: 0.0,
            h: 0.0,
            h_old: 0.0,
            y: e(),
            z: [e(), e(), e()],
            w: [e(), e(), e()],
            cont: [e(), e(), e(), e()],
            wt: e(),
            tmp: e(),
            cvec: Vec::new(),
            lu_h: f64::NAN,
            need_jac: true,
            caljac: false,
            first: true,
            reject: false,
            theta: THET,
            thet: THET,
            faccon: 1.0,
            h_acc: 0.0,
            err_acc: 1e-2,
            n_acc: 0,
            rtol: 1e-6,
            atol: 1e-6,
            fnewt: 0.03,
            sigma: 1.0,
            fixed: false,
            grid_t0: 0.0,
            grid_k: 0,
            t_stop: 0.0,
            newt: 0,
            err: 0.0,
            passed: false,
            rejected_in_a_row: 0,
            retries: 0,
            loop_state: LoopState::default(),
        }
    }

    fn allocate(&mut self, n: usize) {
        let z = || vec![0.0; n];
        self.z = [z(), z(), z()];
        self.w = [z(), z(), z()];
        self.cont = [z(), z(), z(), z()];
        self.wt = z();
        self.tmp = z();
        self.cvec = vec![C64::new(0.0, 0.0); n];
    }

    /// Forget what was learnt before a restart (a reset, a crossed
    /// discontinuity): no extrapolated starting values, no predictive
    /// controller, a fresh Jacobian and factorisations.
    pub(crate) fn restart_controller(&mut self) {
        self.first = true;
        self.reject = false;
        self.need_jac = true;
        self.caljac = false;
        self.faccon = 1.0;
        self.theta = self.thet;
        self.n_acc = 0;
        self.err_acc = 1e-2;
        self.lu_h = f64::NAN;
    }

    /// The weighted RMS norm of `v`, at least 1e-10 (radau5.f).
    pub(crate) fn error_norm<F: RadauForm>(&self, v: &[f64]) -> f64 {
        let s: f64 = v
            .iter()
            .zip(&self.wt)
            .map(|(&a, &b)| F::weigh(a, b).powi(2))
            .sum();
        (s / v.len().max(1) as f64).sqrt().max(1e-10)
    }

    /// The weighted RMS norm of the Newton increment (real and complex
    /// systems together).
    fn increment_norm<F: RadauForm>(&self) -> f64 {
        let mut s = 0.0;
        for (m, &wm) in self.wt.iter().enumerate() {
            let c = self.cvec[m];
            s += F::weigh(self.tmp[m], wm).powi(2)
                + F::weigh(c.re, wm).powi(2)
                + F::weigh(c.im, wm).powi(2);
        }
        (s / (3 * self.wt.len().max(1)) as f64).sqrt()
    }

    /// Starting values of the Newton iteration: zero on a first step,
    /// otherwise the previous collocation polynomial extrapolated
    /// (radau5.f).
    fn starting_values(&mut self, h: f64) {
        let ti = &self.co.ti;
        let ratio = h / self.h_old;
        for m in 0..self.y.len() {
            let zm: [f64; 3] = if self.first {
                [0.0; 3]
            } else {
                let k = [0.0, self.cont[1][m], self.cont[2][m], self.cont[3][m]];
                std::array::from_fn(|i| collocation_value(&self.co.c, k, self.co.c[i] * ratio))
            };
            for i in 0..3 {
                self.z[i][m] = zm[i];
                self.w[i][m] = ti[i][0] * zm[0] + ti[i][1] * zm[1] + ti[i][2] * zm[2];
            }
        }
    }

    /// W ← W + ΔW (ΔW in `tmp` and `cvec`), Z = (T ⊗ I) W.
    fn update_stages(&mut self) {
        let t = &self.co.t;
        for m in 0..self.y.len() {
            self.w[0][m] += self.tmp[m];
            self.w[1][m] += self.cvec[m].re;
            self.w[2][m] += self.cvec[m].im;
            let wm = [self.w[0][m], self.w[1][m], self.w[2][m]];
            for i in 0..3 {
                self.z[i][m] = t[i][0] * wm[0] + t[i][1] * wm[1] + t[i][2] * wm[2];
            }
        }
    }

    /// The end of the step, y_{n+1} = y_n + Z_3, and the collocation
    /// polynomial's coefficients (radau5.f, CONTR5).
    fn advance_to(&mut self, h: f64, t_new: f64) {
        self.t_prev = self.t;
        self.h_old = h;
        self.t = t_new;
        for m in 0..self.y.len() {
            self.y[m] += self.z[2][m];
            let z = [self.z[0][m], self.z[1][m], self.z[2][m]];
            let k = collocation_coefficients(&self.co.c, self.y[m], z);
            for (c, kj) in self.cont.iter_mut().zip(k) {
                c[m] = kj;
            }
        }
    }
}

/// What differs between the forms Radau IIA integrates (module
/// documentation): a form owns its iteration matrices and its own
/// scratch, and reads and writes the shared state through `core`.
pub trait RadauForm: Sized {
    /// Whether steps end exactly on `t_stop` and fixed steps on the grid
    /// t0 + k h ([`step_loop::fixed_grid_step`]); otherwise t += h.
    const EXACT_STOPS: bool;

    /// At fixed steps, go on with a Newton iteration whose apparent rate
    /// is ≥ 1 while its increment stays below `GROWTH_LIMIT` times the
    /// first one (an index-1 correction followed by the index-2
    /// components catching up, not divergence).
    const TOLERATE_GROWTH_AT_FIXED_STEPS: bool;

    /// After a breakpoint, start with the smaller of the kept step size
    /// and the first-step estimate at the new point
    /// (`stepper::restart_keeping_step`); otherwise a reset that
    /// keeps the step size.
    const ESTIMATE_AT_BREAKPOINTS: bool;

    /// After a crossed discontinuity, restart by a full reset (a new
    /// consistent derivative, `stepper::restart_by_reset`);
    /// otherwise only the controller restarts, from the derivative kept
    /// at the step's end, and the crossing step's dense output stays
    /// valid.
    const RESTART_BY_RESET: bool;

    /// One component of a vector in units of its tolerance, from its
    /// error weight: v/SCAL (ODE) or v·(1/SCAL) (DAE).
    fn weigh(v: f64, w: f64) -> f64;

    /// A problem the form cannot integrate.
    ///
    /// # Errors
    /// [`IntegrateError::Unsupported`].
    fn check_problem(_p: &mut dyn OdeProblem) -> Res<()> {
        Ok(())
    }

    /// Size the form's storage for n components (the core's is sized).
    ///
    /// # Errors
    /// A problem of the wrong kind or size.
    fn prepare(&mut self, p: &mut dyn OdeProblem, n: usize) -> Res<()>;

    /// At a (re)start at the core's (t, y): the derivative there (f or a
    /// consistent y') and the form's σ into `core.sigma`.
    ///
    /// # Errors
    /// Evaluation errors.
    fn start(&mut self, core: &mut RadauCore, e: &mut Eval) -> Res<()>;

    /// The derivative at the current point (for the first-step estimate).
    fn derivative(&self) -> &[f64];

    /// The first step when the estimate failed with `e`.
    ///
    /// # Errors
    /// `e`, for a form that has no fallback.
    fn first_step_failed(e: EvalError) -> Res<f64>;

    /// The error weights of a trial of size `e.h` into `core.wt`.
    ///
    /// # Errors
    /// A problem of the wrong kind.
    fn weights(&mut self, core: &mut RadauCore, e: &mut Eval) -> Res<()>;

    /// The Jacobians at (t_n, y_n).
    ///
    /// # Errors
    /// Evaluation errors.
    fn jacobian(&mut self, core: &RadauCore, e: &mut Eval) -> Res<()>;

    /// Factorise E1 = J + (γ/h) M and E2 = J + ((α + iβ)/h) M (counted
    /// once per pair, as radau5.f's NDEC).
    ///
    /// # Errors
    /// [`EvalError::Singular`].
    fn decompose(&mut self, core: &RadauCore, h: f64, stats: &mut Stats) -> Result<(), EvalError>;

    /// The stage residuals at Z, transformed: −(T⁻¹G)_1 into `core.tmp`,
    /// −((T⁻¹G)_2 + i (T⁻¹G)_3) into `core.cvec`.
    ///
    /// # Errors
    /// Evaluation errors.
    fn newton_rhs(&mut self, core: &mut RadauCore, e: &mut Eval) -> Res<()>;

    /// `core.tmp` ← E1⁻¹ `core.tmp`, `core.cvec` ← E2⁻¹ `core.cvec`
    /// (counted once per pair, as radau5.f's NSOL).
    fn solve_pair(&mut self, core: &mut RadauCore, stats: &mut Stats);

    /// radau5.f's ESTRAD: the error estimate E1⁻¹ (…) into `core.tmp`;
    /// returns its weighted norm.
    ///
    /// # Errors
    /// Evaluation errors.
    fn estimate(&mut self, core: &mut RadauCore, e: &mut Eval) -> Res<f64>;

    /// ESTRAD's second solve: the estimate once more through the residual
    /// at y_n + the previous estimate (still in `core.tmp`).
    ///
    /// # Errors
    /// Evaluation errors.
    fn filtered_estimate(&mut self, core: &mut RadauCore, e: &mut Eval) -> Res<f64>;

    /// After the core moved to the end of a step of size `e.h`: what the
    /// form keeps there.
    ///
    /// # Errors
    /// Evaluation errors, a non-finite step.
    fn accepted(&mut self, core: &mut RadauCore, e: &mut Eval) -> Res<()>;

    /// After a singular factorisation (`core.retries` counted): whether to
    /// retry with a smaller step.
    fn retry_singular(core: &RadauCore) -> bool;

    /// After an evaluation failed in the Newton iteration: whether to
    /// count it as a Newton failure and retry with a smaller step.
    fn retry_failed_evaluation(core: &mut RadauCore, stats: &mut Stats) -> bool;
}

/// What a form's hooks evaluate with: the problem, the run's options and
/// counters, and the size h of the trial.
pub struct Eval<'a, 'b> {
    pub(crate) p: &'a mut dyn OdeProblem,
    pub(crate) ctx: &'a mut StepContext<'b>,
    pub(crate) h: f64,
}

/// The result of the forms' hooks.
pub(crate) type Res<T> = Result<T, IntegrateError>;

/// The Radau IIA (order 5) stepper of one form ([`RadauForm`]).
pub struct Radau<F> {
    pub(crate) core: RadauCore,
    pub(crate) form: F,
}

impl<F: RadauForm + Default> Default for Radau<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: RadauForm + Default> Radau<F> {
    /// A Radau IIA stepper; buffers are sized at [`Stepper::reset`].
    pub fn new() -> Self {
        Self {
            core: RadauCore::new(),
            form: F::default(),
        }
    }
}

impl<F: RadauForm> Radau<F> {
    /// Simplified Newton iteration for the stage increments (radau5.f,
    /// loop 40).
    fn newton(&mut self, e: &mut Eval, nit: u32) -> Res<NewtonEnd> {
        let c = &mut self.core;
        c.faccon = c.faccon.max(f64::EPSILON).powf(0.8);
        c.theta = c.thet;
        let tolerate_growth = F::TOLERATE_GROWTH_AT_FIXED_STEPS && c.fixed;
        let (mut dynold, mut thqold, mut dyn1) = (0.0f64, 0.0f64, 0.0f64);
        let mut newt = 0u32;
        loop {
            if newt >= nit {
                e.ctx.stats.n_newton_fail += 1;
                return Ok(NewtonEnd::Failed(0.5));
            }
            self.form.newton_rhs(c, e)?;
            e.ctx.stats.n_newton_iter += 1;
            self.form.solve_pair(c, e.ctx.stats);
            newt += 1;
            let dyno = c.increment_norm::<F>();
            if !dyno.is_finite() {
                e.ctx.stats.n_newton_fail += 1;
                return Ok(NewtonEnd::Failed(0.5));
            }
            if newt > 1 && newt < nit {
                let thq = dyno / dynold;
                c.theta = if newt == 2 {
                    thq
                } else {
                    (thq * thqold).sqrt()
                };
                thqold = thq;
                match newton_verdict(c.theta, dyno, newt, nit, c.fnewt) {
                    Ok(faccon) => c.faccon = faccon,
                    // no rate to trust: converged only when tiny
                    Err(_) if tolerate_growth && dyno < GROWTH_LIMIT * dyn1 => {
                        c.faccon = GROWTH_LIMIT;
                    }
                    // round-off stops the contraction, the iterate
                    // already well inside the error test: accept it
                    Err(_) if stalled_at_round_off(c.theta, dyno) => {
                        c.update_stages();
                        e.ctx.stats.n_newton_stalled += 1;
                        return Ok(NewtonEnd::Converged(newt));
                    }
                    Err(hhfac) => {
                        e.ctx.stats.n_newton_fail += 1;
                        return Ok(NewtonEnd::Failed(hhfac));
                    }
                }
            }
            if newt == 1 {
                dyn1 = dyno;
            }
            dynold = dyno.max(f64::EPSILON);
            c.update_stages();
            if c.faccon * dyno <= c.fnewt {
                return Ok(NewtonEnd::Converged(newt));
            }
        }
    }

    /// The Jacobian when asked for and the factorisations when h changed;
    /// a singular matrix asks for a smaller step (`Some`).
    fn matrices(&mut self, e: &mut Eval) -> Res<Option<Trial>> {
        let (c, h) = (&mut self.core, e.h);
        if c.need_jac {
            self.form.jacobian(c, e)?;
            c.need_jac = false;
            c.caljac = true;
            c.lu_h = f64::NAN;
        }
        if c.lu_h != h {
            c.lu_h = f64::NAN;
            match self.form.decompose(c, h, e.ctx.stats) {
                Ok(()) => c.lu_h = h,
                Err(err @ EvalError::Singular { .. }) => {
                    c.retries += 1;
                    if c.fixed || !F::retry_singular(c) {
                        return Err(err.into());
                    }
                    c.reject = true;
                    return Ok(Some(Trial::Failed { factor: 0.5 }));
                }
                Err(err) => return Err(err.into()),
            }
        }
        Ok(None)
    }

    /// A failed Newton iteration: at fixed steps a repeat with a fresh
    /// Jacobian (an error with a fresh one), otherwise h reduced by
    /// radau5.f's factor (30 failures in a row at most).
    fn newton_failed(&mut self, h: f64, hhfac: f64, nit: u32) -> Result<Trial, IntegrateError> {
        let c = &mut self.core;
        let failed = IntegrateError::NewtonFailed {
            t: c.t,
            h,
            iters: nit,
        };
        if c.fixed {
            if c.caljac {
                return Err(failed);
            }
            c.need_jac = true;
            return Ok(Trial::Repeat);
        }
        c.rejected_in_a_row += 1;
        if c.rejected_in_a_row > MAX_NEWTON_FAILURES {
            return Err(failed);
        }
        c.reject = true;
        if !c.caljac {
            c.need_jac = true;
        }
        Ok(Trial::Failed { factor: hhfac })
    }

    /// radau5.f's ESTRAD, filtered once more on a first or rejected step
    /// whose estimate is ≥ 1.
    fn error_estimate(&mut self, e: &mut Eval) -> Res<f64> {
        let err = self.form.estimate(&mut self.core, e)?;
        if err >= 1.0 && (self.core.first || self.core.reject) {
            return self.form.filtered_estimate(&mut self.core, e);
        }
        Ok(err)
    }
}

impl<F: RadauForm> Stepper for Radau<F> {
    fn name(&self) -> &'static str {
        "radau5"
    }

    /// One accepted step by the shared loop ([`step_loop::advance`]).
    fn step(
        &mut self,
        p: &mut dyn OdeProblem,
        t_stop: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        F::check_problem(p)?;
        self.core.t_stop = t_stop;
        self.core.rejected_in_a_row = 0;
        self.core.retries = 0;
        step_loop::advance(self, p, t_stop, ctx)
    }

    fn restart_at_breakpoint(
        &mut self,
        p: &mut dyn OdeProblem,
        t0: f64,
        y0: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        if F::ESTIMATE_AT_BREAKPOINTS {
            crate::stepper::restart_keeping_step(self, |s| &mut s.core.h, p, t0, y0, ctx)
        } else {
            self.reset(p, t0, y0, ctx)
        }
    }

    fn reset(
        &mut self,
        p: &mut dyn OdeProblem,
        t0: f64,
        y0: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let n = y0.len();
        self.form.prepare(p, n)?;
        let c = &mut self.core;
        if c.wt.len() != n {
            c.allocate(n);
        }
        let opts = ctx.opts;
        if !(opts.rtol > 0.0) || !(opts.atol >= 0.0) {
            return Err(IntegrateError::BadMethod(format!(
                "radau5: tolerances must be positive (rtol = {}, atol = {})",
                opts.rtol, opts.atol
            )));
        }
        // radau5.f: transformed tolerances and Newton stopping criterion
        (c.rtol, c.atol, c.fnewt) = transformed_tolerances(opts.rtol, opts.atol);
        c.thet = if n >= LARGE_SYSTEM { THET_LARGE } else { THET };
        // into the existing storage: a reset after every projection allocates nothing
        c.y.clear();
        c.y.extend_from_slice(y0);
        c.t = t0;
        c.t_prev = t0;
        c.h_old = 0.0;
        c.grid_t0 = t0;
        c.grid_k = 0;
        c.loop_state = LoopState::default();
        c.fixed = opts.fixed_step.is_some();
        for v in c.cont.iter_mut() {
            v.fill(0.0);
        }
        c.cont[0].copy_from_slice(y0);
        c.restart_controller();
        let h = c.h;
        self.form.start(
            c,
            &mut Eval {
                p: &mut *p,
                ctx: &mut *ctx,
                h,
            },
        )?;
        let form = &self.form;
        c.h = crate::stepper::starting_step("radau5", opts, c.h, || {
            initial_step(
                p,
                t0,
                y0,
                form.derivative(),
                3,
                opts.rtol,
                opts.atol,
                opts.h_max,
                1.0,
            )
            .or_else(F::first_step_failed)
        })?;
        Ok(())
    }

    crate::one_step::one_step_accessors!(in core);

    /// The collocation polynomial of the last step (radau5.f, CONTR5):
    /// u(s) = y_{n+1} + s(κ1 + (s − c2 + 1)(κ2 + (s − c1 + 1)κ3)),
    /// s = (t − t_{n+1})/h.
    fn interpolate(&self, t: f64, out: &mut [f64]) {
        let c = &self.core;
        let h = c.t - c.t_prev;
        if h == 0.0 {
            out.copy_from_slice(&c.y);
            return;
        }
        let s = (t - c.t) / h;
        for (m, o) in out.iter_mut().enumerate() {
            let k = [c.cont[0][m], c.cont[1][m], c.cont[2][m], c.cont[3][m]];
            *o = collocation_value(&c.co.c, k, s);
        }
    }
}

impl<F: RadauForm> StepAttempt for Radau<F> {
    /// The core adds the accepted step's error times σ (the form's
    /// tolerance-proportional scaling) in `commit`.
    fn sums_accepted_error(&self) -> bool {
        true
    }

    fn current_t(&self) -> f64 {
        self.core.t
    }

    /// Adaptive: the controller's h. Fixed: h, or with exact stops the
    /// step to the next grid point t0 + (k + 1) h.
    fn proposed_h(&self) -> f64 {
        let c = &self.core;
        if c.fixed && F::EXACT_STOPS {
            step_loop::fixed_grid_step(c.grid_t0, c.grid_k, c.h, c.t)
        } else {
            c.h
        }
    }

    fn set_h(&mut self, h: f64) {
        if !(self.core.fixed && F::EXACT_STOPS) {
            self.core.h = h;
        }
    }

    fn loop_state(&mut self) -> &mut LoopState {
        &mut self.core.loop_state
    }

    /// The form's weights, the Jacobian when asked for, the
    /// factorisations when h changed, the simplified Newton iteration and
    /// the error estimate. A singular matrix or a failed evaluation halves
    /// h (as often as the form allows), a Newton failure shrinks it by
    /// radau5.f's factor (30 failures in a row at most); at fixed steps a
    /// Newton failure with an old Jacobian repeats the step with a new one.
    fn attempt(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<Trial, IntegrateError> {
        let adaptive = !self.core.fixed;
        let nit = if adaptive { NIT } else { NIT_FIXED };
        self.core.passed = false;
        let e = &mut Eval { p, ctx, h };
        self.form.weights(&mut self.core, e)?;
        if let Some(trial) = self.matrices(e)? {
            return Ok(trial);
        }
        self.core.starting_values(h);
        // a failed evaluation at a diverging iterate counts as a Newton failure
        let outcome = match self.newton(e, nit) {
            Err(IntegrateError::Eval { .. })
                if adaptive && F::retry_failed_evaluation(&mut self.core, e.ctx.stats) =>
            {
                NewtonEnd::Failed(0.5)
            }
            other => other?,
        };
        match outcome {
            NewtonEnd::Converged(k) => self.core.newt = k,
            NewtonEnd::Failed(hhfac) => return self.newton_failed(h, hhfac, nit),
        }
        if !adaptive {
            return Ok(Trial::Unchecked);
        }
        self.core.err = self.error_estimate(e)?;
        Ok(Trial::Estimated(self.core.err))
    }

    /// radau5.f accepts err < 1.
    fn passes(&self, err: f64, _h: f64) -> bool {
        err < 1.0
    }

    /// radau5.f's step size: the safety factor of the Newton iterations,
    /// Gustafsson's predictive controller after an accepted step, h kept
    /// when the change is within [QUOT1, QUOT2] and the Jacobian is good,
    /// no growth after a rejection; after a rejected first step h/10.
    fn factor(&mut self, err: f64, h: f64, accepted: bool) -> f64 {
        let c = &mut self.core;
        c.passed = accepted;
        let prev = (accepted && c.n_acc > 0).then_some((c.h_acc, c.err_acc));
        let hnew = proposed_step(err, h, c.newt, prev);
        if !accepted {
            return if c.first { 0.1 } else { hnew / h };
        }
        c.n_acc += 1;
        c.h_acc = h;
        c.err_acc = err.max(1e-2);
        let mut hnew = hnew;
        if c.reject {
            hnew = hnew.min(h);
        }
        let qt = hnew / h;
        if c.theta <= c.thet && (QUOT1..=QUOT2).contains(&qt) {
            1.0
        } else {
            qt
        }
    }

    fn rejected(
        &mut self,
        _p: &mut dyn OdeProblem,
        _h: f64,
        _ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let c = &mut self.core;
        c.rejected_in_a_row += 1;
        c.reject = true;
        if !c.caljac {
            c.need_jac = true;
        }
        Ok(())
    }

    /// The step becomes the current point (with exact stops ending on
    /// t_stop when trimmed to it, on the grid at fixed steps: a step cut
    /// short to t_stop restarts the grid there); the accepted error
    /// estimate times σ is summed; a new Jacobian is asked for after a
    /// slowly converging iteration (θ > 0.001).
    fn commit(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        let c = &mut self.core;
        let trimmed = F::EXACT_STOPS && h == c.t_stop - c.t;
        let t_new = if trimmed {
            c.t_stop
        } else if c.fixed && F::EXACT_STOPS {
            c.grid_t0 + (c.grid_k + 1) as f64 * c.h
        } else {
            c.t + h
        };
        c.advance_to(h, t_new);
        self.form.accepted(
            c,
            &mut Eval {
                p: &mut *p,
                ctx: &mut *ctx,
                h,
            },
        )?;
        c.first = false;
        if c.fixed {
            c.grid_k += 1;
            if trimmed {
                (c.grid_t0, c.grid_k) = (t_new, 0);
            }
        } else if c.passed {
            ctx.stats.accumulated_error += c.err * c.sigma;
        }
        c.caljac = false;
        c.reject = false;
        c.need_jac = c.theta > c.thet;
        Ok(())
    }

    fn restart_here(
        &mut self,
        p: &mut dyn OdeProblem,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        if F::RESTART_BY_RESET {
            return crate::stepper::restart_by_reset(self, |s| &mut s.core.h, true, p, ctx);
        }
        let c = &mut self.core;
        c.restart_controller();
        let opts = ctx.opts;
        c.h = initial_step(
            p,
            c.t,
            &c.y,
            self.form.derivative(),
            3,
            opts.rtol,
            opts.atol,
            opts.h_max,
            1.0,
        )?;
        Ok(())
    }
}
