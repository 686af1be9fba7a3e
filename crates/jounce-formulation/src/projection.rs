//! Index-1 augmented formulation with projection onto the constraint
//! manifold after every accepted step.
//!
//! Between steps y = [q; v] obeys the index-1 equations of
//! [`crate::Augmented`] (no Baumgarte terms). After each accepted step
//! (`after_step`), when ‖Φ‖∞ or ‖Φ_q v + Φ_t‖∞ exceeds the tolerance:
//!
//! 1. positions: Gauss–Newton steps of minimum **mass-weighted** norm,
//!    min ΔqᵀMΔq subject to Φ_q Δq = −Φ, i.e.
//!    `[M Φ_qᵀ; Φ_q 0][Δq; μ] = [0; −Φ]`, q ← q + Δq, repeated until
//!    ‖Φ‖∞ ≤ tol/100 (at most 10 iterations);
//! 2. velocities: the M-orthogonal projection onto Φ_q v = −Φ_t,
//!    `[M Φ_qᵀ; Φ_q 0][v*; μ] = [M v; −Φ_t]`.
//!
//! The mass metric (Hairer, Lubich & Wanner, *Geometric Numerical
//! Integration*, IV.4 and VII.2; Eich 1993, SIAM J. Numer. Anal. 30) removes
//! kinetic energy only along constrained directions, and because it uses
//! the KKT matrix rather than M⁻¹ it works with zero-inertia coordinates as
//! long as the KKT matrix is regular.
//!
//! The Jacobian of the right-hand side is that of [`crate::Augmented`]
//! without Baumgarte terms, exact from the differentiated KKT system.
//!
//! Positions that are not velocities (n_q > n_v, unit quaternions): q is
//! first put back on its manifold, q ← q ⊕ 0, and the Gauss–Newton step Δq
//! (in velocity space, len n_v) is applied as q ← q ⊕ Δq
//! ([`MechanicalSystem::integrate_position`], the exponential map of a
//! rotation increment), as [`crate::Augmented`] does.

use jounce_integrate::{EvalError, OdeProblem, SecondOrderProblem, StepFix};
use jounce_mechanics::{MechanicalSystem, Quantities};
use nalgebra::DMatrix;

use crate::augmented::Augmented;
use crate::error::FormulationError;
use crate::formulation::Formulation;
use crate::kkt::worst_row;
use crate::linear_solver::LinearSolver;

/// Maximum Gauss–Newton iterations of one position projection.
const MAX_ITER: usize = 10;

/// Augmented index-1 formulation with mass-weighted projection of
/// positions and velocities after each accepted step: an [`Augmented`]
/// (without Baumgarte terms) plus the projection in `after_step`.
pub struct Projection<'a, S: MechanicalSystem + ?Sized> {
    aug: Augmented<'a, S>,
    tol: f64,
    mv: Vec<f64>,
    n_projections: u64,
}

impl<'a, S: MechanicalSystem + ?Sized> Projection<'a, S> {
    /// Project when ‖Φ‖∞ or ‖Φ_q v + Φ_t‖∞ exceeds `tol` (in the units of
    /// the constraint equations; e.g. 1e-10).
    ///
    /// # Errors
    /// [`FormulationError::BadParameter`] unless tol is finite and > 0.
    pub fn new(sys: &'a S, tol: f64) -> Result<Self, FormulationError> {
        if !(tol.is_finite() && tol > 0.0) {
            return Err(FormulationError::BadParameter {
                formulation: "projection".into(),
                detail: format!("projection_tol must be finite and > 0, got {tol}"),
            });
        }
        Ok(Self {
            aug: Augmented::new(sys),
            tol,
            mv: vec![0.0; sys.nv()],
            n_projections: 0,
        })
    }

    /// Solve the KKT system with `solver` (default [`LinearSolver::Auto`]).
    #[must_use]
    pub fn with_linear_solver(mut self, solver: LinearSolver) -> Self {
        self.aug = self.aug.with_linear_solver(solver);
        self
    }

    /// Number of accepted steps whose state was corrected so far.
    pub fn n_projections(&self) -> u64 {
        self.n_projections
    }

    /// Project (q, v) in place; returns whether anything changed.
    fn project(&mut self, t: f64, q: &mut [f64], v: &mut [f64]) -> Result<bool, EvalError> {
        let (n, m) = (self.aug.kkt.n, self.aug.kkt.m);
        let sys = self.aug.sys;
        let mut changed = false;
        sys.constraints(t, q, &mut self.aug.kkt.data.constraints);
        let mut res = inf_norm(&self.aug.kkt.data.constraints);
        if res > self.tol {
            changed = true;
            let mut it = 0;
            while res > 0.01 * self.tol {
                if it == MAX_ITER {
                    let (r, label) = worst_row(sys, &self.aug.kkt.data.constraints);
                    return Err(EvalError::NoConvergence {
                        what: "position projection onto Φ(q) = 0".into(),
                        t,
                        detail: format!(
                            "|Φ| = {r:e} in {label} after {MAX_ITER} Gauss–Newton iterations"
                        ),
                    });
                }
                self.aug.kkt.factor(sys, t, q)?;
                self.aug.kkt.sol[..n].iter_mut().for_each(|x| *x = 0.0);
                for i in 0..m {
                    self.aug.kkt.sol[n + i] = -self.aug.kkt.data.constraints[i];
                }
                self.aug.kkt.solve();
                if self.aug.nq == n {
                    for j in 0..n {
                        q[j] += self.aug.kkt.sol[j];
                    }
                } else {
                    // q ← q ⊕ Δq on the manifold
                    sys.integrate_position(q, &self.aug.kkt.sol[..n], &mut self.aug.projected);
                    q.copy_from_slice(&self.aug.projected);
                }
                sys.constraints(t, q, &mut self.aug.kkt.data.constraints);
                let new = inf_norm(&self.aug.kkt.data.constraints);
                it += 1;
                if new >= res && new <= self.tol {
                    // stagnation at rounding level: good enough
                    break;
                }
                res = new;
            }
        }
        // velocities: M, Φ_q, Φ_t and Φ' = Φ_q v + Φ_t in one evaluation
        sys.evaluate(
            &mut self.aug.kkt.data,
            t,
            q,
            v,
            Quantities::MASS_MATRIX
                | Quantities::CONSTRAINT_JACOBIAN
                | Quantities::VELOCITY_CONSTRAINTS,
        );
        let vres = inf_norm(&self.aug.kkt.data.velocity_constraints);
        if changed || vres > self.tol {
            changed = true;
            self.aug.kkt.factor_loaded(sys, t)?;
            let data = &self.aug.kkt.data;
            if data.mass_is_stored_diagonal() {
                // M v of a diagonal M in O(n), not the n² dense product
                for i in 0..n {
                    self.mv[i] = data.mass_diagonal[i] * v[i];
                }
            } else {
                for i in 0..n {
                    let mut s = 0.0;
                    for j in 0..n {
                        s += data.mass_matrix[(i, j)] * v[j];
                    }
                    self.mv[i] = s;
                }
            }
            self.aug.kkt.sol[..n].copy_from_slice(&self.mv);
            for i in 0..m {
                self.aug.kkt.sol[n + i] = -self.aug.kkt.data.constraint_time_derivative[i];
            }
            self.aug.kkt.solve();
            v.copy_from_slice(&self.aug.kkt.sol[..n]);
        }
        Ok(changed)
    }
}

fn inf_norm(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |a, b| a.max(b.abs()))
}

impl<S: MechanicalSystem + ?Sized> OdeProblem for Projection<'_, S> {
    fn dim(&self) -> usize {
        self.aug.dim()
    }

    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        self.aug.rhs(t, y, dy)
    }

    /// J = [[0, I], [∂a/∂q, ∂a/∂v]] from the differentiated KKT system.
    fn jacobian(&mut self, t: f64, y: &[f64], jac: &mut DMatrix<f64>) -> Result<(), EvalError> {
        self.aug.jacobian(t, y, jac)
    }

    fn has_exact_jacobian(&self) -> bool {
        self.aug.has_exact_jacobian()
    }

    fn after_step(&mut self, t: f64, y: &mut [f64]) -> Result<StepFix, EvalError> {
        let nq = self.aug.nq;
        let (q, v) = y.split_at_mut(nq);
        let mut normalised = false;
        if nq != self.aug.kkt.n {
            // back onto the manifold (unit quaternions) first
            self.aug
                .sys
                .integrate_position(q, &self.aug.zero, &mut self.aug.projected);
            normalised = self.aug.projected[..] != q[..];
            q.copy_from_slice(&self.aug.projected);
        }
        if self.project(t, q, v)? {
            self.n_projections += 1;
            Ok(StepFix::Corrected)
        } else if normalised {
            Ok(StepFix::Corrected)
        } else {
            Ok(StepFix::Unchanged)
        }
    }

    fn breakpoints(&self) -> &[f64] {
        self.aug.breakpoints()
    }

    /// The structural methods integrate the augmented second-order form;
    /// the projection still follows every accepted step.
    fn as_second_order(&mut self) -> Option<&mut dyn SecondOrderProblem> {
        self.aug.as_second_order()
    }
}

impl<S: MechanicalSystem + ?Sized> Formulation for Projection<'_, S> {
    fn name(&self) -> &'static str {
        "projection"
    }

    fn initial_state(
        &mut self,
        t0: f64,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<Vec<f64>, FormulationError> {
        self.aug.initial_state_as("projection", t0, q0, v0)
    }

    fn physical_state(
        &mut self,
        t: f64,
        y: &[f64],
        q: &mut [f64],
        v: &mut [f64],
        lambda: &mut [f64],
    ) -> Result<(), EvalError> {
        self.aug.physical_state(t, y, q, v, lambda)
    }

    fn physical_motion(
        &mut self,
        t: f64,
        y: &[f64],
        q: &mut [f64],
        v: &mut [f64],
        lambda: &mut [f64],
    ) -> Result<(), EvalError> {
        self.aug.physical_motion(t, y, q, v, lambda)
    }
}
