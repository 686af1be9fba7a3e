//! The starting procedures of the fixed-step multistep methods, which
//! supply the k − 1 back values a k-step method needs:
//!
//! - explicit methods: the classic fourth-order Runge-Kutta method (Kutta
//!   1901; Hairer–Nørsett–Wanner I, Table II.1.2);
//! - implicit methods: the extrapolated implicit Euler method (order 5,
//!   R(∞) = 0), so that stiff components are damped from the first step.
//!
//! Local errors O(h⁵) or smaller keep the global order of every method up
//! to order 5 (HNW I, Section III.2, Theorem 2.10: starting values need
//! errors O(h^p)).

use crate::error::IntegrateError;
use crate::problem::OdeProblem;

/// Scratch space of one RK4 step (preallocated).
#[derive(Default)]
pub struct Rk4Scratch {
    k: [Vec<f64>; 4],
    tmp: Vec<f64>,
}

impl Rk4Scratch {
    /// Scratch for dimension n.
    pub fn new(n: usize) -> Self {
        Self {
            k: std::array::from_fn(|_| vec![0.0; n]),
            tmp: vec![0.0; n],
        }
    }

    /// One RK4 step y1 = y0 + h/6 (k1 + 2 k2 + 2 k3 + k4) with k1 = f0 = f(t0, y0).
    pub fn step(
        &mut self,
        p: &mut dyn OdeProblem,
        t0: f64,
        y0: &[f64],
        f0: &[f64],
        h: f64,
        y1: &mut [f64],
    ) -> Result<(), IntegrateError> {
        let n = y0.len();
        self.k[0].copy_from_slice(f0);
        for (s, c) in [(1usize, 0.5), (2, 0.5), (3, 1.0)] {
            for i in 0..n {
                self.tmp[i] = y0[i] + c * h * self.k[s - 1][i];
            }
            let (_, rest) = self.k.split_at_mut(s);
            p.rhs(t0 + c * h, &self.tmp, &mut rest[0])?;
        }
        for i in 0..n {
            y1[i] = y0[i]
                + h / 6.0 * (self.k[0][i] + 2.0 * self.k[1][i] + 2.0 * self.k[2][i] + self.k[3][i]);
        }
        Ok(())
    }
}

/// Starting values for the implicit methods: implicit Euler with 1, 2, ...,
/// 5 substeps, extrapolated by the Aitken–Neville scheme in h (the
/// extrapolated implicit Euler method, Hairer–Wanner II, Section IV.9,
/// eq. (9.5)): T_{j,l+1} = T_{j,l} + (T_{j,l} − T_{j−1,l})/(n_j/n_{j−l} − 1).
///
/// T_{5,5} has order 5 and, as every T_{j,1} vanishes at z = −∞, it damps
/// stiff components (R(∞) = 0), so that a stiff problem at fixed step is
/// not spoiled by its start. Each substep is solved by modified Newton with
/// J(t0, y0) and the matrix I − (h/n_j) J.
pub struct ImplicitEulerExtrapolation {
    table: Vec<Vec<f64>>,
    ysub: Vec<f64>,
    pred: Vec<f64>,
    g: Vec<f64>,
    w: Vec<f64>,
    jac: nalgebra::DMatrix<f64>,
    mat: nalgebra::DMatrix<f64>,
    lu: crate::newton::CachedLu,
}

/// Substep numbers n_j of the extrapolation (harmonic sequence).
const SUBSTEPS: [usize; 5] = [1, 2, 3, 4, 5];

impl ImplicitEulerExtrapolation {
    /// Scratch for dimension n.
    pub fn new(n: usize) -> Self {
        Self {
            table: vec![vec![0.0; n]; SUBSTEPS.len()],
            ysub: vec![0.0; n],
            pred: vec![0.0; n],
            g: vec![0.0; n],
            w: vec![0.0; n],
            jac: nalgebra::DMatrix::zeros(n, n),
            mat: nalgebra::DMatrix::zeros(n, n),
            lu: crate::newton::CachedLu::new(),
        }
    }

    /// One step of size h from (t0, y0) with f0 = f(t0, y0) into `y1`.
    pub fn step(
        &mut self,
        p: &mut dyn OdeProblem,
        t0: f64,
        y0: &[f64],
        f0: &[f64],
        h: f64,
        y1: &mut [f64],
        ctx: &mut crate::stepper::StepContext,
    ) -> Result<(), IntegrateError> {
        use crate::newton::{newton_solve, NewtonOutcome, NewtonSettings};
        let n = y0.len();
        p.jacobian(t0, y0, &mut self.jac)?;
        for (i, wi) in self.w.iter_mut().enumerate() {
            *wi = 1.0 / (ctx.opts.atol + ctx.opts.rtol * y0[i].abs());
        }
        let settings = NewtonSettings {
            max_iter: 20,
            // floor at round-off (radau5.f: FNEWT ≥ 10 ε/rtol)
            tol: (10.0 * f64::EPSILON / ctx.opts.rtol).max(1e-10),
        };
        for (j, &nj) in SUBSTEPS.iter().enumerate() {
            let hs = h / nj as f64;
            for r in 0..n {
                for c in 0..n {
                    self.mat[(r, c)] = -hs * self.jac[(r, c)];
                }
                self.mat[(r, r)] += 1.0;
            }
            self.lu.factor(&self.mat, t0, ctx.stats)?;
            self.ysub.copy_from_slice(y0);
            for s in 0..nj {
                let ts = t0 + (s + 1) as f64 * hs;
                self.pred.copy_from_slice(&self.ysub);
                if s == 0 {
                    for i in 0..n {
                        self.ysub[i] += hs * f0[i];
                    }
                }
                let prev = &self.pred;
                let out = newton_solve(
                    |x, g| {
                        p.rhs(ts, x, g)?;
                        for i in 0..x.len() {
                            g[i] = x[i] - prev[i] - hs * g[i];
                        }
                        Ok(())
                    },
                    &mut self.ysub,
                    &mut self.lu,
                    &self.w,
                    &settings,
                    &mut self.g,
                    ctx.stats,
                )?;
                if let NewtonOutcome::Failed { iters, .. } = out {
                    return Err(IntegrateError::NewtonFailed { t: t0, h, iters });
                }
            }
            self.table[j].copy_from_slice(&self.ysub);
        }
        // Aitken–Neville in place: after pass l, table[j] = T_{j, l+1}
        let m = SUBSTEPS.len();
        for l in 1..m {
            for j in (l..m).rev() {
                let r = SUBSTEPS[j] as f64 / SUBSTEPS[j - l] as f64 - 1.0;
                for i in 0..n {
                    let d = (self.table[j][i] - self.table[j - 1][i]) / r;
                    self.table[j][i] += d;
                }
            }
        }
        y1.copy_from_slice(&self.table[m - 1]);
        Ok(())
    }
}
