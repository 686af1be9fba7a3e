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
//!
//! **Second-order structure.** When the problem is y = [q; v] with
//! q' = v exactly ([`OdeProblem::as_second_order`] with as many positions
//! as velocities, d = n/2), J = [[0, I], [A_q, A_v]] and each n × n system
//! (c I − J) [x1; x2] = [b1; b2] (c = γ/h real, c = (α + iβ)/h complex)
//! reduces to one of order d:
//!
//! (c I − A_v − A_q/c) x2 = b2 + A_q b1 / c,   x1 = (b1 + x2)/c,
//!
//! the case M1 = M2 = n/2 of radau5.f's special structure
//! y'_i = y_{i+M2}, i ≤ M1 (IWORK(9), IWORK(10); the reduced
//! decompositions and solves of dc_decsol.f's DECOMR/DECOMC and
//! SLVRAR/SLVRAI): LU of d × d instead of n × n matrices, an eighth of
//! the elimination, the solutions the same to round-off.

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
    /// d = n/2 when y = [q; v] with q' = v (module documentation): the
    /// iteration matrices are then the reduced d × d ones.
    split: Option<usize>,
    /// γ/h and (α + iβ)/h of the factorised matrices.
    fac1: f64,
    fac2: C64,
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
            split: None,
            fac1: 0.0,
            fac2: C64::new(0.0, 0.0),
        }
    }
}

/// d = n/2 when the problem's state is y = [q; v] with q' = v
/// ([`OdeProblem::as_second_order`] with n_q = n_v = n/2).
fn second_order_split(p: &mut dyn OdeProblem, n: usize) -> Option<usize> {
    let so = p.as_second_order()?;
    let d = so.ndof();
    (d > 0 && so.n_positions() == d && 2 * d == n).then_some(d)
}

/// b2 ← b2 + A_q b1 / c over the lower-left block A_q of `jac` (d × d at
/// row d, column 0): the right-hand side of the reduced system.
fn add_position_coupling<T>(jac: &DMatrix<f64>, d: usize, b1: &[T], b2: &mut [T], c: T)
where
    T: Copy + std::ops::Div<Output = T> + std::ops::Mul<f64, Output = T> + std::ops::AddAssign,
{
    for (j, &b1j) in b1.iter().enumerate() {
        let s = b1j / c;
        for (b2i, &a) in b2.iter_mut().zip(&jac.column(j).as_slice()[d..]) {
            *b2i += s * a;
        }
    }
}

/// x1 = (b1 + x2)/c, the positions' part from the velocities' (the first
/// block row of c I − J).
fn positions_from_velocities<T>(x1: &mut [T], x2: &[T], c: T)
where
    T: Copy + std::ops::Add<Output = T> + std::ops::Div<Output = T>,
{
    for (a, &b) in x1.iter_mut().zip(x2) {
        *a = (*a + b) / c;
    }
}

impl OdeRadau {
    /// x ← E1⁻¹ x, through the reduced system with the second-order
    /// structure (module documentation).
    fn solve_e1(&mut self, x: &mut [f64], stats: &mut Stats) {
        match self.split {
            None => self.e1.solve_in_place(x, stats),
            Some(d) => {
                let c = self.fac1;
                let (x1, x2) = x.split_at_mut(d);
                add_position_coupling(&self.jac, d, x1, x2, c);
                self.e1.solve_in_place(x2, stats);
                positions_from_velocities(x1, x2, c);
            }
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

    fn prepare(&mut self, p: &mut dyn OdeProblem, n: usize) -> Result<(), IntegrateError> {
        if self.f0.len() != n {
            let z = || vec![0.0; n];
            self.f0 = z();
            self.fz = [z(), z(), z()];
            self.tmp2 = z();
            self.jac = DMatrix::zeros(n, n);
        }
        self.split = second_order_split(p, n);
        let m = self.split.unwrap_or(n);
        if self.e1mat.nrows() != m {
            self.e2.resize(m);
            self.e1mat = DMatrix::zeros(m, m);
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

    /// E1 = (γ/h) I − J and E2 = ((α + iβ)/h) I − J; with the
    /// second-order structure the reduced γ/h I − A_v − (h/γ) A_q and
    /// c I − A_v − A_q/c, c = (α + iβ)/h (module documentation).
    fn decompose(&mut self, core: &RadauCore, h: f64, stats: &mut Stats) -> Result<(), EvalError> {
        let fac1 = core.co.gamma / h;
        let fac2 = C64::new(core.co.alpha / h, core.co.beta / h);
        (self.fac1, self.fac2) = (fac1, fac2);
        let e2 = &mut self.e2.lu;
        if let Some(d) = self.split {
            let inv2 = C64::new(1.0, 0.0) / fac2;
            for j in 0..d {
                for i in 0..d {
                    let (aq, av) = (self.jac[(d + i, j)], self.jac[(d + i, d + j)]);
                    self.e1mat[(i, j)] = -av - aq / fac1;
                    e2[(i, j)] = C64::new(-av, 0.0) - inv2 * aq;
                }
                self.e1mat[(j, j)] += fac1;
                e2[(j, j)] += fac2;
            }
        } else {
            let n = core.y.len();
            for j in 0..n {
                for i in 0..n {
                    self.e1mat[(i, j)] = -self.jac[(i, j)];
                    e2[(i, j)] = C64::new(-self.jac[(i, j)], 0.0);
                }
                self.e1mat[(j, j)] += fac1;
                e2[(j, j)] += fac2;
            }
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
        self.solve_e1(&mut core.tmp, stats);
        if !self.e2_ok {
            return;
        }
        match self.split {
            None => self.e2.solve(&mut core.cvec),
            Some(d) => {
                let c = self.fac2;
                let (x1, x2) = core.cvec.split_at_mut(d);
                add_position_coupling(&self.jac, d, x1, x2, c);
                self.e2.solve(x2);
                positions_from_velocities(x1, x2, c);
            }
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
        self.solve_e1(&mut core.tmp, e.ctx.stats);
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
        self.solve_e1(&mut core.tmp, e.ctx.stats);
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

#[cfg(test)]
mod tests {
    use nalgebra::{DMatrix, DVector};

    use super::*;
    use crate::problem::SecondOrderProblem;
    use crate::solve::{solve, Discard};
    use crate::{SolverOptions, Stepper};

    /// Two masses joined by a stiff damped spring, the first on a
    /// pendulum's restoring force, the second on a cubic one:
    /// a1 = −sin x1 − k(x1 − x2) − c(v1 − v2),
    /// a2 = −x2³ − k(x2 − x1) − c(v2 − v1) + sin 3t,
    /// y = [x1, x2, v1, v2], with its exact Jacobian.
    struct StiffPair {
        k: f64,
        c: f64,
    }

    impl StiffPair {
        fn acc(&self, t: f64, q: &[f64], v: &[f64], a: &mut [f64]) {
            let (s, d) = (q[0] - q[1], v[0] - v[1]);
            a[0] = -q[0].sin() - self.k * s - self.c * d;
            a[1] = -q[1].powi(3) + self.k * s + self.c * d + (3.0 * t).sin();
        }
    }

    impl OdeProblem for StiffPair {
        fn dim(&self) -> usize {
            4
        }
        fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
            dy[..2].copy_from_slice(&y[2..]);
            let (q, v) = y.split_at(2);
            let (_, a) = dy.split_at_mut(2);
            self.acc(t, q, v, a);
            Ok(())
        }
        fn jacobian(&mut self, _t: f64, y: &[f64], j: &mut DMatrix<f64>) -> Result<(), EvalError> {
            let (k, c) = (self.k, self.c);
            j.fill(0.0);
            j[(0, 2)] = 1.0;
            j[(1, 3)] = 1.0;
            j[(2, 0)] = -y[0].cos() - k;
            j[(2, 1)] = k;
            j[(2, 2)] = -c;
            j[(2, 3)] = c;
            j[(3, 0)] = k;
            j[(3, 1)] = -3.0 * y[1] * y[1] - k;
            j[(3, 2)] = c;
            j[(3, 3)] = -c;
            Ok(())
        }
        fn has_exact_jacobian(&self) -> bool {
            true
        }
        fn as_second_order(&mut self) -> Option<&mut dyn SecondOrderProblem> {
            Some(self)
        }
    }

    impl SecondOrderProblem for StiffPair {
        fn ndof(&self) -> usize {
            2
        }
        fn mass_matrix(
            &mut self,
            _t: f64,
            _q: &[f64],
            m: &mut DMatrix<f64>,
        ) -> Result<(), EvalError> {
            m.fill_with_identity();
            Ok(())
        }
        fn forces(&mut self, t: f64, q: &[f64], v: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
            self.acc(t, q, v, f);
            Ok(())
        }
    }

    /// The same problem with its second-order structure hidden: radau5
    /// then factorises the full n × n matrices.
    struct Hidden(StiffPair);

    impl OdeProblem for Hidden {
        fn dim(&self) -> usize {
            4
        }
        fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
            self.0.rhs(t, y, dy)
        }
        fn jacobian(&mut self, t: f64, y: &[f64], j: &mut DMatrix<f64>) -> Result<(), EvalError> {
            self.0.jacobian(t, y, j)
        }
        fn has_exact_jacobian(&self) -> bool {
            true
        }
    }

    fn pair() -> StiffPair {
        StiffPair { k: 1e6, c: 2e3 }
    }

    /// The reduced solves equal the dense solutions of (γ/h I − J) x = b
    /// and ((α + iβ)/h I − J) x = b of the full matrices (nalgebra's LU)
    /// to round-off.
    #[test]
    fn reduced_solves_equal_full_solves() {
        let mut p = pair();
        let y = [0.3, -0.2, 1.5, -0.7];
        let mut st = Radau5::new();
        st.form.prepare(&mut p, 4).unwrap();
        assert_eq!(st.form.split, Some(2));
        st.core.y = y.to_vec();
        p.jacobian(0.0, &y, &mut st.form.jac).unwrap();
        let h = 3e-3;
        let mut stats = Stats::default();
        st.form.decompose(&st.core, h, &mut stats).unwrap();
        let b = [0.7, -1.1, 2.3, 0.4];
        let bc = [
            C64::new(0.2, -0.5),
            C64::new(-1.3, 0.8),
            C64::new(0.9, 0.1),
            C64::new(-0.6, 1.7),
        ];
        st.core.tmp = b.to_vec();
        st.core.cvec = bc.to_vec();
        st.form.solve_pair(&mut st.core, &mut stats);

        let co = RadauCoeffs::new();
        let jac = st.form.jac.clone();
        let e1 = DMatrix::from_diagonal_element(4, 4, co.gamma / h) - &jac;
        let x1 = e1.lu().solve(&DVector::from_row_slice(&b)).unwrap();
        let c = C64::new(co.alpha / h, co.beta / h);
        let e2 = DMatrix::from_diagonal_element(4, 4, c) - jac.map(|v| C64::new(v, 0.0));
        let x2 = e2.lu().solve(&DVector::from_row_slice(&bc)).unwrap();
        for m in 0..4 {
            let scale = x1.amax();
            assert!(
                (st.core.tmp[m] - x1[m]).abs() <= 1e-12 * scale,
                "real system, component {m}: {} against {}",
                st.core.tmp[m],
                x1[m]
            );
            let scale = x2.iter().map(|z| z.norm()).fold(0.0, f64::max);
            assert!(
                (st.core.cvec[m] - x2[m]).norm() <= 1e-12 * scale,
                "complex system, component {m}: {} against {}",
                st.core.cvec[m],
                x2[m]
            );
        }
    }

    /// A run on the reduced systems and one on the full ones take the same
    /// steps with the same work and end on the same state to round-off.
    #[test]
    fn reduced_run_agrees_with_full_run() {
        let opts = SolverOptions {
            rtol: 1e-6,
            atol: 1e-9,
            ..SolverOptions::default()
        };
        let y0 = [1.0, 0.5, 0.0, 0.0];
        let mut reduced = Radau5::new();
        let a = solve(
            &mut pair(),
            &mut reduced,
            0.0,
            &y0,
            2.0,
            &opts,
            &mut Discard,
        )
        .unwrap();
        assert_eq!(reduced.form.split, Some(2), "the reduced path was taken");
        let mut full = Radau5::new();
        let b = solve(
            &mut Hidden(pair()),
            &mut full,
            0.0,
            &y0,
            2.0,
            &opts,
            &mut Discard,
        )
        .unwrap();
        assert_eq!(full.form.split, None);
        assert!(
            a.stats.n_accept > 100,
            "a stiff run: {} steps",
            a.stats.n_accept
        );
        assert_eq!(a.stats.n_accept, b.stats.n_accept);
        assert_eq!(a.stats.n_reject, b.stats.n_reject);
        assert_eq!(a.stats.n_rhs, b.stats.n_rhs);
        assert_eq!(a.stats.n_lu, b.stats.n_lu);
        assert_eq!(a.stats.n_jac, b.stats.n_jac);
        for m in 0..4 {
            let d = (a.y[m] - b.y[m]).abs();
            assert!(
                d <= 1e-10 * (1.0 + b.y[m].abs()),
                "y[{m}]: {} against {}",
                a.y[m],
                b.y[m]
            );
        }
        assert_eq!(reduced.name(), "radau5");
    }
}
