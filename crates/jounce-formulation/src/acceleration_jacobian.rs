//! Exact derivatives of the KKT accelerations a(t, q, v) with respect to
//! q and v, by differentiating the KKT system itself (implicit function
//! theorem) and reusing its factorisation.
//!
//! With K = [M Φ_qᵀ; Φ_q 0] and K [a; λ] = [Q; r₂],
//! r₂ = γ − 2α(Φ_q v + Φ_t) − β²Φ (Baumgarte; α = β = 0 for none),
//! differentiating with respect to x = q or v gives
//!
//! ```text
//! K [∂a/∂q; ∂λ/∂q] = [ Q_q − ∂(Φ_qᵀλ)/∂q − ∂(M a)/∂q                     ]
//!                    [ γ_q − 2α(∂(Φ_q v)/∂q + Φ_qt) − β²Φ_q − ∂(Φ_q a)/∂q ]
//! K [∂a/∂v; ∂λ/∂v] = [ Q_v                ]
//!                    [ γ_v − 2αΦ_q         ]
//! ```
//!
//! (the implicit function theorem applied to the KKT system of
//! [`crate::kkt`], index-1 form with Baumgarte terms as in jalon-bayo
//! ch. 7, eq. 7.46). ∂λ/∂x is solved for but not kept. Every system
//! derivative comes from [`MechanicalSystem`]: exact (automatic
//! differentiation) for [`jounce_mechanics::PlanarSystem`], the
//! finite-difference trait defaults otherwise. 2n solves with the KKT
//! factors, no allocation.

use jounce_integrate::EvalError;
use jounce_mechanics::{MechanicalSystem, SystemQueries};
use nalgebra::DMatrix;

use crate::kkt::Kkt;

/// ∂a/∂q and ∂a/∂v of the KKT accelerations, with preallocated buffers.
#[derive(Clone, Debug)]
pub(crate) struct AccelerationJacobian {
    /// ∂a/∂q (n × n).
    pub da_dq: DMatrix<f64>,
    /// ∂a/∂v (n × n).
    pub da_dv: DMatrix<f64>,
    fq: DMatrix<f64>,
    fv: DMatrix<f64>,
    cfj: DMatrix<f64>,
    dm: DMatrix<f64>,
    gq: DMatrix<f64>,
    gv: DMatrix<f64>,
    ha: DMatrix<f64>,
    hv: DMatrix<f64>,
    pqt: DMatrix<f64>,
    /// a (len n) and λ (len m) at the point of evaluation.
    pub a: Vec<f64>,
    lambda: Vec<f64>,
    col: Vec<f64>,
    work: Vec<f64>,
}

impl AccelerationJacobian {
    /// Buffers for n coordinates and m constraint rows. The eleven n × n
    /// and m × n matrices (88 n² bytes, 1.8 GB for a 5000-link chain) are
    /// sized on the first [`AccelerationJacobian::compute`], so that
    /// explicit methods, which never ask for the Jacobian, do not pay
    /// for them (issue 31).
    pub fn new(n: usize, m: usize) -> Self {
        let empty = || DMatrix::zeros(0, 0);
        Self {
            da_dq: empty(),
            da_dv: empty(),
            fq: empty(),
            fv: empty(),
            cfj: empty(),
            dm: empty(),
            gq: empty(),
            gv: empty(),
            ha: empty(),
            hv: empty(),
            pqt: empty(),
            a: vec![0.0; n],
            lambda: vec![0.0; m],
            col: vec![0.0; n + m],
            work: vec![0.0; 2 * (n + m)],
        }
    }

    /// Sizes the matrices on first use (cold: once per formulation).
    fn ensure_sized(&mut self, n: usize, m: usize) {
        if self.da_dq.shape() == (n, n) && self.gq.shape() == (m, n) {
            return;
        }
        for x in [
            &mut self.da_dq,
            &mut self.da_dv,
            &mut self.fq,
            &mut self.fv,
            &mut self.cfj,
            &mut self.dm,
        ] {
            *x = DMatrix::zeros(n, n);
        }
        for x in [
            &mut self.gq,
            &mut self.gv,
            &mut self.ha,
            &mut self.hv,
            &mut self.pqt,
        ] {
            *x = DMatrix::zeros(m, n);
        }
    }

    /// a, ∂a/∂q and ∂a/∂v at (t, q, v) with Baumgarte parameters (α, β).
    /// Leaves `kkt` factored at (t, q) with `kkt.sol` = [a; λ] overwritten.
    ///
    /// # Errors
    /// [`EvalError::Singular`] when the KKT matrix is singular.
    pub fn compute<S: MechanicalSystem + ?Sized>(
        &mut self,
        sys: &S,
        kkt: &mut Kkt,
        t: f64,
        q: &[f64],
        v: &[f64],
        alpha: f64,
        beta: f64,
    ) -> Result<(), EvalError> {
        let (n, m) = (kkt.n, kkt.m);
        self.ensure_sized(n, m);
        kkt.accelerations(sys, t, q, v, alpha, beta)?;
        self.a.copy_from_slice(&kkt.sol[..n]);
        self.lambda.copy_from_slice(&kkt.sol[n..]);
        sys.force_jacobians(t, q, v, &mut self.fq, &mut self.fv);
        sys.constraint_force_jacobian(t, q, &self.lambda, &mut self.cfj);
        sys.mass_matrix_derivative(q, &self.a, &mut self.dm);
        sys.gamma_jacobians(t, q, v, &mut self.gq, &mut self.gv);
        sys.constraint_hessian_product(t, q, &self.a, &mut self.ha);
        let stabilised = alpha != 0.0 || beta != 0.0;
        if stabilised {
            sys.constraint_hessian_product(t, q, v, &mut self.hv);
            sys.constraint_time_jacobian(t, q, &mut self.pqt);
        }
        let (a2, b2) = (2.0 * alpha, beta * beta);
        for k in 0..n {
            for i in 0..n {
                self.col[i] = self.fq[(i, k)] - self.cfj[(i, k)] - self.dm[(i, k)];
            }
            for i in 0..m {
                let mut r = self.gq[(i, k)] - self.ha[(i, k)];
                if stabilised {
                    r -= a2 * (self.hv[(i, k)] + self.pqt[(i, k)])
                        + b2 * kkt.data.constraint_jacobian.get(i, k);
                }
                self.col[n + i] = r;
            }
            kkt.solve_other(&mut self.col, &mut self.work);
            for i in 0..n {
                self.da_dq[(i, k)] = self.col[i];
            }
            for i in 0..n {
                self.col[i] = self.fv[(i, k)];
            }
            for i in 0..m {
                self.col[n + i] = self.gv[(i, k)] - a2 * kkt.data.constraint_jacobian.get(i, k);
            }
            kkt.solve_other(&mut self.col, &mut self.work);
            for i in 0..n {
                self.da_dv[(i, k)] = self.col[i];
            }
        }
        Ok(())
    }

    /// The first-order Jacobian of y' = [v; a(t, q, v)], y = [q; v]:
    /// J = [[0, I], [∂a/∂q, ∂a/∂v]] (2n × 2n), from the last `compute`.
    pub fn first_order(&self, jac: &mut DMatrix<f64>) {
        let n = self.a.len();
        jac.fill(0.0);
        for i in 0..n {
            jac[(i, n + i)] = 1.0;
            for j in 0..n {
                jac[(n + i, j)] = self.da_dq[(i, j)];
                jac[(n + i, n + j)] = self.da_dv[(i, j)];
            }
        }
    }
}
