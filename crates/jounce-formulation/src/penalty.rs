//! Bayo's penalty formulation (augmented Lagrangian without iteration).
//!
//! The constraint forces are those of penalty springs and dampers acting on
//! the constraint dynamics, λ = α(Φ'' + 2ξωΦ' + ω²Φ) (Bayo, García de
//! Jalón & Serna 1988, Comput. Methods Appl. Mech. Eng. 71, 183–195;
//! García de Jalón & Bayo, *Kinematic and Dynamic Simulation of Multibody
//! Systems*, eq. 5.37; jalon-bayo ch. 7, problem 7/4). With
//! Φ'' = Φ_q q'' − γ and Φ' = Φ_q v + Φ_t:
//!
//! ```text
//! (M + α Φ_qᵀ Φ_q) q'' = Q − α Φ_qᵀ (−γ + 2ξω Φ' + ω² Φ)
//! λ ≈ α (Φ_q q'' − γ + 2ξω Φ' + ω² Φ)
//! ```
//!
//! State y = [q; v]. The solution approaches the constrained one as
//! O(1/α); Bayo recommends α ≈ 10⁷ (in the units of M), ω ≈ 10, ξ ≈ 1.
//!
//! The form is second order, M_p(t, q) q'' = f_p(t, q, v) with
//! M_p = M + αΦ_qᵀΦ_q and f_p the right-hand side above, and offers itself
//! as a [`SecondOrderProblem`] to structural methods (Newmark, HHT,
//! generalized-α): the combination jalon-bayo ch. 7 recommends for real
//! time (trapezoidal rule with the penalty formulation).
//!
//! **Singular mass matrices.** This form never inverts M alone: it factors
//! M + αΦ_qᵀΦ_q (LU with full pivoting), which is regular exactly when M is
//! positive definite on the null space of Φ_q, the same condition as for
//! the KKT matrix. It therefore runs models whose point masses have zero
//! rotational inertia (studies.md S1 in body coordinates). When even
//! M + αΦ_qᵀΦ_q is singular (a coordinate with neither inertia nor
//! constraint), [`Formulation::initial_state`] refuses with
//! [`FormulationError::SingularMass`] naming the coordinates.

use jounce_integrate::{EvalError, OdeProblem, SecondOrderProblem};
use jounce_mechanics::MechanicalSystem;
use nalgebra::DMatrix;

use crate::error::FormulationError;
use crate::formulation::Formulation;
use crate::kkt::{diagnose, PIVOT_TOL};
use crate::lu::FullPivLu;

/// The penalty formulation with factor α, natural frequency ω and damping
/// ratio ξ of the constraint dynamics.
pub struct Penalty<'a, S: MechanicalSystem + ?Sized> {
    sys: &'a S,
    alpha: f64,
    omega: f64,
    xi: f64,
    n: usize,
    m: usize,
    mass: DMatrix<f64>,
    jac: DMatrix<f64>,
    phi: Vec<f64>,
    phi_t: Vec<f64>,
    gamma: Vec<f64>,
    force: Vec<f64>,
    /// −γ + 2ξωΦ' + ω²Φ
    c: Vec<f64>,
    lu: FullPivLu,
    acc: Vec<f64>,
    work: Vec<f64>,
    breakpoints: Vec<f64>,
}

impl<'a, S: MechanicalSystem + ?Sized> Penalty<'a, S> {
    /// Penalty factor α > 0, ω ≥ 0, ξ ≥ 0.
    ///
    /// # Errors
    /// [`FormulationError::BadParameter`] for out-of-range values.
    pub fn new(sys: &'a S, alpha: f64, omega: f64, xi: f64) -> Result<Self, FormulationError> {
        let bad = |detail: String| FormulationError::BadParameter {
            formulation: "penalty".into(),
            detail,
        };
        if !(alpha.is_finite() && alpha > 0.0) {
            return Err(bad(format!(
                "penalty_factor must be finite and > 0, got {alpha}"
            )));
        }
        for (name, v) in [("penalty_omega", omega), ("penalty_xi", xi)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(bad(format!("{name} must be finite and ≥ 0, got {v}")));
            }
        }
        let (n, m) = (sys.nq(), sys.nc());
        Ok(Self {
            sys,
            alpha,
            omega,
            xi,
            n,
            m,
            mass: DMatrix::zeros(n, n),
            jac: DMatrix::zeros(m, n),
            phi: vec![0.0; m],
            phi_t: vec![0.0; m],
            gamma: vec![0.0; m],
            force: vec![0.0; n],
            c: vec![0.0; m],
            lu: FullPivLu::new(n, n),
            acc: vec![0.0; n],
            work: vec![0.0; n],
            breakpoints: sys.breakpoints(),
        })
    }

    /// (α, ω, ξ).
    pub fn parameters(&self) -> (f64, f64, f64) {
        (self.alpha, self.omega, self.xi)
    }

    /// Factor M + αΦ_qᵀΦ_q at (t, q); M and Φ_q stay in the buffers.
    fn factor(&mut self, t: f64, q: &[f64]) -> bool {
        let (n, m, a) = (self.n, self.m, self.alpha);
        self.sys.mass_matrix(q, &mut self.mass);
        self.sys.constraint_jacobian(t, q, &mut self.jac);
        for i in 0..n {
            for j in 0..n {
                let mut s = 0.0;
                for k in 0..m {
                    s += self.jac[(k, i)] * self.jac[(k, j)];
                }
                self.lu.set(i, j, self.mass[(i, j)] + a * s);
            }
        }
        self.lu.factor(PIVOT_TOL);
        self.lu.is_regular()
    }

    /// f_p = Q − αΦ_qᵀ(−γ + 2ξωΦ' + ω²Φ) into `acc` (M, Φ_q in the
    /// buffers must be current) and −γ + 2ξωΦ' + ω²Φ into `c`.
    fn penalty_forces(&mut self, t: f64, q: &[f64], v: &[f64]) {
        let (n, m) = (self.n, self.m);
        let sys = self.sys;
        sys.generalized_forces(t, q, v, &mut self.force);
        sys.gamma(t, q, v, &mut self.gamma);
        sys.constraints(t, q, &mut self.phi);
        sys.constraint_time_derivative(t, q, &mut self.phi_t);
        let (w, z) = (self.omega, self.xi);
        for i in 0..m {
            let mut dphi = self.phi_t[i];
            for j in 0..n {
                dphi += self.jac[(i, j)] * v[j];
            }
            self.c[i] = -self.gamma[i] + 2.0 * z * w * dphi + w * w * self.phi[i];
        }
        for j in 0..n {
            let mut s = 0.0;
            for i in 0..m {
                s += self.jac[(i, j)] * self.c[i];
            }
            self.acc[j] = self.force[j] - self.alpha * s;
        }
    }

    /// Accelerations into `acc` and −γ + 2ξωΦ' + ω²Φ into `c`.
    fn accelerations(&mut self, t: f64, q: &[f64], v: &[f64]) -> Result<(), EvalError> {
        if !self.factor(t, q) {
            return Err(EvalError::Singular {
                what: "penalty matrix M + αΦ_qᵀΦ_q".into(),
                t,
                detail: diagnose(self.sys, &self.mass, &self.jac, self.alpha),
            });
        }
        self.penalty_forces(t, q, v);
        self.lu.solve_in_place(&mut self.acc, &mut self.work);
        Ok(())
    }
}

impl<S: MechanicalSystem + ?Sized> OdeProblem for Penalty<'_, S> {
    fn dim(&self) -> usize {
        2 * self.n
    }

    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        let n = self.n;
        let (q, v) = y.split_at(n);
        self.accelerations(t, q, v)?;
        dy[..n].copy_from_slice(v);
        dy[n..].copy_from_slice(&self.acc);
        Ok(())
    }

    fn breakpoints(&self) -> &[f64] {
        &self.breakpoints
    }

    fn as_second_order(&mut self) -> Option<&mut dyn SecondOrderProblem> {
        Some(self)
    }
}

impl<S: MechanicalSystem + ?Sized> SecondOrderProblem for Penalty<'_, S> {
    fn ndof(&self) -> usize {
        self.n
    }

    /// M_p = M(q) + αΦ_q(t, q)ᵀΦ_q(t, q).
    fn mass_matrix(&mut self, t: f64, q: &[f64], m: &mut DMatrix<f64>) -> Result<(), EvalError> {
        let (n, nc, a) = (self.n, self.m, self.alpha);
        self.sys.mass_matrix(q, &mut self.mass);
        self.sys.constraint_jacobian(t, q, &mut self.jac);
        for i in 0..n {
            for j in 0..n {
                let mut s = 0.0;
                for k in 0..nc {
                    s += self.jac[(k, i)] * self.jac[(k, j)];
                }
                m[(i, j)] = self.mass[(i, j)] + a * s;
            }
        }
        Ok(())
    }

    /// f_p = Q − αΦ_qᵀ(−γ + 2ξωΦ' + ω²Φ).
    fn forces(&mut self, t: f64, q: &[f64], v: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        self.sys.constraint_jacobian(t, q, &mut self.jac);
        self.penalty_forces(t, q, v);
        f.copy_from_slice(&self.acc);
        Ok(())
    }
}

impl<S: MechanicalSystem + ?Sized> Formulation for Penalty<'_, S> {
    fn name(&self) -> &'static str {
        "penalty"
    }

    fn initial_state(
        &mut self,
        t0: f64,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<Vec<f64>, FormulationError> {
        let n = self.n;
        if q0.len() != n || v0.len() != n {
            return Err(FormulationError::BadParameter {
                formulation: "penalty".into(),
                detail: format!(
                    "initial state has {} coordinates and {} velocities, the system {n}",
                    q0.len(),
                    v0.len()
                ),
            });
        }
        if !self.factor(t0, q0) {
            return Err(FormulationError::SingularMass {
                formulation: "penalty".into(),
                detail: format!(
                    "even M + αΦ_qᵀΦ_q (α = {:e}) is singular at t = {t0}: {} \
                     (if the masses are below 1e-13·α, lower penalty_factor)",
                    self.alpha,
                    diagnose(self.sys, &self.mass, &self.jac, self.alpha)
                ),
            });
        }
        let mut y = q0.to_vec();
        y.extend_from_slice(v0);
        Ok(y)
    }

    fn physical_state(
        &mut self,
        t: f64,
        y: &[f64],
        q: &mut [f64],
        v: &mut [f64],
        lambda: &mut [f64],
    ) -> Result<(), EvalError> {
        let (n, m) = (self.n, self.m);
        q.copy_from_slice(&y[..n]);
        v.copy_from_slice(&y[n..]);
        self.accelerations(t, q, v)?;
        // λ = α(Φ_q a − γ + 2ξωΦ' + ω²Φ)
        for i in 0..m {
            let mut s = self.c[i];
            for j in 0..n {
                s += self.jac[(i, j)] * self.acc[j];
            }
            lambda[i] = self.alpha * s;
        }
        Ok(())
    }
}
