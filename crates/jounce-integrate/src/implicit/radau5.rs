//! Radau IIA of order 5 on the ODE y' = f(t, y), adaptive, after Hairer &
//! Wanner's radau5.f (Solving ODEs II, 2nd ed., Section IV.8): the ODE
//! form ([`OdeRadau`]) of the one Radau IIA core
//! ([`crate::implicit::radau_core`], which owns the coefficients, the
//! Newton iteration, the error estimate, the step control and the dense
//! output).
//!
//! For the ODE the stage residuals are G_i = Y'_i − f(Y_i), the
//! iteration matrices E1 = (γ/h) I − J and E2 = ((α + iβ)/h) I − J with
//! J = f_y, and the transformed Newton systems (HW II, IV.8, "Reducing the
//! computational cost")
//!
//! (γ/h I − J) ΔW1 = −(γ/h) W1 + (T⁻¹F)_1,
//! ((α + iβ)/h I − J)(ΔW2 + iΔW3) = −((α + iβ)/h)(W2 + iW3) + (T⁻¹F)_2 + i(T⁻¹F)_3.
//!
//! Error estimate (HW II, IV.8, "Error estimation"):
//! err = (γ/h I − J)⁻¹ [f(t_n, y_n) + (1/h) Σ d_i Z_i], d = (−(13 + 7√6)/3,
//! (−13 + 7√6)/3, −1/3); on a first or rejected step with err ≥ 1 it is
//! filtered once more through f (radau5.f, ESTRAD). The error weights are
//! SCAL = atol' + rtol' |y_n| with radau5.f's transformed tolerances.

use nalgebra::DMatrix;

use crate::dense_lu::DenseLu;
use crate::error::{EvalError, IntegrateError};
use crate::newton::CachedLu;
use crate::problem::OdeProblem;
use crate::stats::Stats;

pub use super::radau_core::RadauCoeffs;
use super::radau_core::{Eval, Radau, RadauCore, RadauForm, Res, C64};

/// The Radau IIA (order 5) stepper on y' = f(t, y).
pub type Radau5 = Radau<OdeRadau>;

/// The ODE form of Radau IIA (module documentation): J = f_y, its two
/// factorisations and the stage values of f.
pub struct OdeRadau {
    /// f(t_n, y_n).
    f0: Vec<f64>,
    /// f at the stages.
    fz: [Vec<f64>; 3],
    /// (1/h) Σ d_i Z_i of the error estimate.
    tmp2: Vec<f64>,
    jac: DMatrix<f64>,
    e1mat: DMatrix<f64>,
    e1: CachedLu,
    /// ((α + iβ)/h) I − J and its factors, in storage sized at reset
    e2: DenseLu<C64>,
    e2_ok: bool,
}

impl Default for OdeRadau {
    fn default() -> Self {
        let e = Vec::new;
        Self {
            f0: e(),
            fz: [e(), e(), e()],
            tmp2: e(),
            jac: DMatrix::zeros(0, 0),
            e1mat: DMatrix::zeros(0, 0),
            e1: CachedLu::new(),
            e2: DenseLu::new(),
            e2_ok: false,
        }
    }
}

impl RadauForm for OdeRadau {
    const EXACT_STOPS: bool = false;
    const TOLERATE_GROWTH_AT_FIXED_STEPS: bool = false;
    const ESTIMATE_AT_BREAKPOINTS: bool = true;
    const RESTART_BY_RESET: bool = false;

    fn weigh(v: f64, w: f64) -> f64 {
        v / w
    }

    fn prepare(&mut self, _p: &mut dyn OdeProblem, n: usize) -> Result<(), IntegrateError> {
        if self.f0.len() != n {
            let z = || vec![0.0; n];
            self.f0 = z();
            self.fz = [z(), z(), z()];
            self.tmp2 = z();
            self.e2.resize(n);
            self.jac = DMatrix::zeros(n, n);
            self.e1mat = DMatrix::zeros(n, n);
        }
        Ok(())
    }

    fn start(&mut self, core: &mut RadauCore, e: &mut Eval) -> Res<()> {
        core.sigma = 1.0;
        e.p.rhs(core.t, &core.y, &mut self.f0)?;
        Ok(())
    }

    fn derivative(&self) -> &[f64] {
        &self.f0
    }

    fn first_step_failed(e: EvalError) -> Result<f64, IntegrateError> {
        Err(e.into())
    }

    /// SCAL = atol' + rtol' |y_n|.
    fn weights(&mut self, core: &mut RadauCore, _e: &mut Eval) -> Res<()> {
        for (s, y) in core.wt.iter_mut().zip(&core.y) {
            *s = core.atol + core.rtol * y.abs();
        }
        Ok(())
    }

    fn jacobian(&mut self, core: &RadauCore, e: &mut Eval) -> Res<()> {
        e.p.jacobian(core.t, &core.y, &mut self.jac)?;
        Ok(())
    }

    /// E1 = (γ/h) I − J and E2 = ((α + iβ)/h) I − J.
    fn decompose(&mut self, core: &RadauCore, h: f64, stats: &mut Stats) -> Result<(), EvalError> {
        let n = core.y.len();
        let fac1 = core.co.gamma / h;
        let (alphn, betan) = (core.co.alpha / h, core.co.beta / h);
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
        self.e1.factor(&self.e1mat, core.t, stats)?;
        self.e2_ok = self.e2.factor();
        if !self.e2_ok {
            return Err(EvalError::Singular {
                what: "complex iteration matrix of radau5".into(),
                t: core.t,
                detail: String::new(),
            });
        }
        Ok(())
    }

    /// (T⁻¹F)_1 − (γ/h) W1 and (T⁻¹F)_{2,3} − ((α + iβ)/h)(W2 + iW3).
    fn newton_rhs(&mut self, core: &mut RadauCore, e: &mut Eval) -> Res<()> {
        let (n, h, p) = (core.y.len(), e.h, &mut *e.p);
        let co = &core.co;
        let fac1 = co.gamma / h;
        let (alphn, betan) = (co.alpha / h, co.beta / h);
        for i in 0..3 {
            for m in 0..n {
                core.tmp[m] = core.y[m] + core.z[i][m];
            }
            p.rhs(core.t + co.c[i] * h, &core.tmp, &mut self.fz[i])?;
        }
        for m in 0..n {
            let f = [self.fz[0][m], self.fz[1][m], self.fz[2][m]];
            let g: [f64; 3] = std::array::from_fn(|k| {
                co.ti[k][0] * f[0] + co.ti[k][1] * f[1] + co.ti[k][2] * f[2]
            });
            core.tmp[m] = g[0] - fac1 * core.w[0][m];
            core.cvec[m] = C64::new(
                g[1] - (alphn * core.w[1][m] - betan * core.w[2][m]),
                g[2] - (betan * core.w[1][m] + alphn * core.w[2][m]),
            );
        }
        Ok(())
    }

    fn solve_pair(&mut self, core: &mut RadauCore, stats: &mut Stats) {
        // counted once per pair, as radau5.f's NSOL
        self.e1.solve_in_place(&mut core.tmp, stats);
        if self.e2_ok {
            self.e2.solve(&mut core.cvec);
        }
    }

    /// E1⁻¹ [f(t_n, y_n) + (1/h) Σ d_i Z_i].
    fn estimate(&mut self, core: &mut RadauCore, e: &mut Eval) -> Res<f64> {
        let dd = core.co.dd;
        let hee = [dd[0] / e.h, dd[1] / e.h, dd[2] / e.h];
        for m in 0..core.y.len() {
            self.tmp2[m] = hee[0] * core.z[0][m] + hee[1] * core.z[1][m] + hee[2] * core.z[2][m];
            core.tmp[m] = self.tmp2[m] + self.f0[m];
        }
        self.e1.solve_in_place(&mut core.tmp, e.ctx.stats);
        Ok(core.error_norm::<Self>(&core.tmp))
    }

    /// E1⁻¹ [f(t_n, y_n + err) + (1/h) Σ d_i Z_i].
    fn filtered_estimate(&mut self, core: &mut RadauCore, e: &mut Eval) -> Res<f64> {
        for (v, y) in core.tmp.iter_mut().zip(&core.y) {
            *v += y;
        }
        // f(t, y + err) into fz[0] (scratch; recomputed by the next Newton)
        e.p.rhs(core.t, &core.tmp, &mut self.fz[0])?;
        for m in 0..core.y.len() {
            core.tmp[m] = self.fz[0][m] + self.tmp2[m];
        }
        self.e1.solve_in_place(&mut core.tmp, e.ctx.stats);
        Ok(core.error_norm::<Self>(&core.tmp))
    }

    /// f(t_{n+1}, y_{n+1}) for the next estimate.
    fn accepted(&mut self, core: &mut RadauCore, e: &mut Eval) -> Res<()> {
        e.p.rhs(core.t, &core.y, &mut self.f0)?;
        Ok(())
    }

    /// Five singular factorisations per step at most.
    fn retry_singular(core: &RadauCore) -> bool {
        core.retries <= 5
    }

    /// While fewer than 10 trials in a row failed.
    fn retry_failed_evaluation(core: &mut RadauCore, _stats: &mut Stats) -> bool {
        core.rejected_in_a_row < 10
    }
}
