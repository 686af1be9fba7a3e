//! The `augmented_lagrangian` formulation: the index-3 equations of
//! motion,
//!
//! ```text
//! M(q) q'' + Φ_q(t, q)ᵀ λ = Q(t, q, q'),    Φ(t, q) = 0,
//! ```
//!
//! solved at every step by the augmented Lagrangian with mass-orthogonal
//! projections of velocities and accelerations (Bayo, García de Jalón &
//! Serna 1988; Bayo & Ledesma 1996, Nonlinear Dyn. 9:113–130; the ALI3-P
//! method of Cuadrado, Cardenal, Morer & Bayo 2000, Multibody Syst. Dyn.
//! 4:55–73; jalon-bayo ch. 7). The constraint forces are those of a
//! penalty α Φ plus a multiplier λ* iterated to convergence, so Φ = 0
//! holds to the Newton tolerance while the Newton matrix
//! M + (c_v/c_a) C + (1/c_a) K + s Φ_qᵀΦ_q stays positive definite where
//! the KKT matrix of the other formulations is singular: point masses
//! (singular M), redundant constraints (rank-deficient Φ_q) and singular
//! configurations (Φ_q losing rank for an instant, as a chain of
//! parallelograms with its cranks horizontal).
//!
//! The state is that of `index3`, y = [q; v; λ]; the equations are the
//! same [`crate::dae_formulation::ConstrainedEquations`] with the system's exact derivatives. The
//! stepping is the structural family's
//! ([`jounce_integrate::structural::augmented_lagrangian`]): newmark (the
//! trapezoidal rule of the original method), hht, generalized_alpha,
//! midpoint_rule, at a fixed step or adaptive.
//!
//! Spatial systems (n_q > n_v, unit quaternions): y = [q (n_q); v; λ], the
//! rotations updated by the exponential map (the stepper's module
//! documentation, Brüls & Cardona 2010), the reported q on |p| = 1.
//!
//! The penalty p is dimensionless: s = p · max_i M_ii, and α = s c_a with
//! c_a = ∂q̈/∂q of the scheme (4/h² for the trapezoidal rule), so the
//! iteration contracts by about 1/(1 + p) per pass at every h. Larger p
//! converges in fewer passes but rounds the constraint forces more
//! (α ε |q|); the default 1e4 keeps both small.

use jounce_integrate::constrained::ConstrainedSecondOrderProblem;
use jounce_integrate::{EvalError, OdeProblem};
use jounce_mechanics::{MechanicalSystem, Quantities};

use crate::dae_formulation::DaeFormulation;
use crate::error::FormulationError;
use crate::formulation::Formulation;
use crate::linear_solver::LinearSolver;
use crate::penalty::Penalty;

/// The `augmented_lagrangian` formulation (module documentation).
pub struct AugmentedLagrangian<'a, S: MechanicalSystem + ?Sized> {
    sys: &'a S,
    solver: LinearSolver,
    inner: DaeFormulation<'a, S>,
    penalty: f64,
    /// n_q (≥ n_v = `n`).
    nq: usize,
    n: usize,
    m: usize,
}

impl<'a, S: MechanicalSystem + ?Sized> AugmentedLagrangian<'a, S> {
    /// The formulation of `sys` with penalty p = `penalty`.
    ///
    /// # Errors
    /// [`FormulationError::BadParameter`] unless p is positive and finite.
    pub fn new(sys: &'a S, penalty: f64) -> Result<Self, FormulationError> {
        if !(penalty > 0.0 && penalty.is_finite()) {
            return Err(FormulationError::BadParameter {
                formulation: "augmented_lagrangian".into(),
                detail: format!("penalty must be positive and finite, got {penalty}"),
            });
        }
        Ok(Self {
            sys,
            solver: LinearSolver::Auto,
            inner: DaeFormulation::index3(sys),
            penalty,
            nq: sys.nq(),
            n: sys.nv(),
            m: sys.nc(),
        })
    }

    /// Assemble the Newton matrix sparse or dense as `solver` says
    /// (default [`LinearSolver::Auto`]: sparse from n + m = 40 on).
    #[must_use]
    pub fn with_linear_solver(mut self, solver: LinearSolver) -> Self {
        self.inner = self.inner.with_linear_solver(solver);
        self.solver = solver;
        self
    }
}

impl<S: MechanicalSystem + ?Sized> AugmentedLagrangian<'_, S> {
    /// [v; q̈; 0] with q̈ the least-squares solution of
    /// [M Φ_qᵀ; Φ_q 0][q̈; λ] = [Q; γ] by SVD, accepted where it solves
    /// the system (consistent dependent rows); allocates (rare).
    fn least_squares_rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        let (nq, n, m) = (self.nq, self.n, self.m);
        let (q, v) = (&y[..nq], &y[nq..nq + n]);
        let mut kkt = nalgebra::DMatrix::zeros(n + m, n + m);
        let mut mass = nalgebra::DMatrix::zeros(n, n);
        self.sys.mass_matrix(q, &mut mass);
        let mut jac = nalgebra::DMatrix::zeros(m, n);
        self.sys.constraint_jacobian(t, q, &mut jac);
        kkt.view_mut((0, 0), (n, n)).copy_from(&mass);
        kkt.view_mut((n, 0), (m, n)).copy_from(&jac);
        kkt.view_mut((0, n), (n, m)).copy_from(&jac.transpose());
        let mut rhs = nalgebra::DVector::zeros(n + m);
        self.sys
            .generalized_forces(t, q, v, rhs.rows_mut(0, n).as_mut_slice());
        self.sys.gamma(t, q, v, rhs.rows_mut(n, m).as_mut_slice());
        let svd = kkt.clone().svd(true, true);
        let eps = 1e-12 * svd.singular_values.max();
        let x = svd
            .solve(&rhs, eps)
            .ok()
            .filter(|x| (&kkt * x - &rhs).norm() <= 1e-9 * rhs.norm().max(1.0))
            .ok_or_else(|| EvalError::Singular {
                what: "augmented (KKT) matrix [M Φ_qᵀ; Φ_q 0]".into(),
                t,
                detail: "the constraints are inconsistent: no acceleration satisfies them".into(),
            })?;
        if nq == n {
            dy[..n].copy_from_slice(v);
        } else {
            self.sys.position_derivative(q, v, &mut dy[..nq]);
        }
        dy[nq..nq + n].copy_from_slice(&x.as_slice()[..n]);
        dy[nq + n..].fill(0.0);
        Ok(())
    }
}

impl<S: MechanicalSystem + ?Sized> OdeProblem for AugmentedLagrangian<'_, S> {
    fn dim(&self) -> usize {
        self.inner.dim()
    }

    /// [v; q̈; 0] from the KKT system, for analyses and the driver's
    /// start-up (the stepper itself never calls it). The augmented
    /// Lagrangian runs redundant rows as they are, where the KKT matrix is
    /// singular but q̈ is still unique: it is then the least-squares
    /// solution of the KKT system by SVD.
    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        match self.inner.rhs(t, y, dy) {
            Err(EvalError::Singular { .. }) => self.least_squares_rhs(t, y, dy),
            other => other,
        }
    }

    fn breakpoints(&self) -> &[f64] {
        self.inner.breakpoints()
    }

    fn set_time_cap(&mut self, t_cap: f64) {
        self.inner.set_time_cap(t_cap);
    }

    fn as_constrained_second_order(&mut self) -> Option<&mut dyn ConstrainedSecondOrderProblem> {
        self.inner.as_constrained_second_order()
    }

    fn augmented_lagrangian_penalty(&self) -> Option<f64> {
        Some(self.penalty)
    }
}

impl<S: MechanicalSystem + ?Sized> Formulation for AugmentedLagrangian<'_, S> {
    fn name(&self) -> &'static str {
        "augmented_lagrangian"
    }

    /// y0 = [q0; v0; 0]: the stepper finds λ0 (and q̈0) by the
    /// augmented-Lagrangian iteration at the acceleration level, which
    /// needs no regular KKT matrix, but M + s Φ_qᵀΦ_q must be regular: a
    /// coordinate with neither inertia nor constraint (a point mass pinned
    /// at its centre) is refused here by name, as `penalty` refuses it.
    fn initial_state(
        &mut self,
        t0: f64,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<Vec<f64>, FormulationError> {
        let (nq, n) = (self.nq, self.n);
        crate::formulation::check_state_dimensions("augmented_lagrangian", nq, n, q0, v0)?;
        // the largest diagonal entry of M from one evaluation of the
        // system (block-diagonal storage: no n × n matrix, issue 32)
        let mut data = self.sys.data();
        self.sys
            .evaluate(&mut data, t0, q0, v0, Quantities::MASS_MATRIX);
        let m_max = (0..n).fold(0.0f64, |s, i| s.max(data.mass(i, i).abs()));
        let s = self.penalty * if m_max > 0.0 { m_max } else { 1.0 };
        let mut check = Penalty::new(self.sys, s, 10.0, 1.0)?.with_linear_solver(self.solver);
        // the penalty's own hint on [settings.penalty] does not apply here
        if let Some(detail) = check.singular_start(t0, q0) {
            return Err(FormulationError::SingularMass {
                formulation: "augmented_lagrangian".into(),
                detail,
            });
        }
        let mut y = Vec::with_capacity(nq + n + self.m);
        y.extend_from_slice(q0);
        y.extend_from_slice(v0);
        y.resize(nq + n + self.m, 0.0);
        Ok(y)
    }

    /// The state of `index3`: q, v and λ are components of y.
    fn physical_state(
        &mut self,
        t: f64,
        y: &[f64],
        q: &mut [f64],
        v: &mut [f64],
        lambda: &mut [f64],
    ) -> Result<(), EvalError> {
        self.inner.physical_state(t, y, q, v, lambda)
    }

    fn physical_motion(
        &mut self,
        t: f64,
        y: &[f64],
        q: &mut [f64],
        v: &mut [f64],
        lambda: &mut [f64],
    ) -> Result<(), EvalError> {
        self.inner.physical_motion(t, y, q, v, lambda)
    }
}
