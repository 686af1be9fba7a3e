//! Index-1 augmented formulation with optional Baumgarte stabilisation.
//!
//! State y = [q; v] (n_q + n_v). Right-hand side q' = T(q) v
//! ([`MechanicalSystem::position_derivative`]; q' = v in planar body
//! coordinates), v' = a with
//!
//! ```text
//! [ M    Φ_qᵀ ] [ a ]   [ Q(t, q, v)                          ]
//! [ Φ_q  0    ] [ λ ] = [ γ − 2α(Φ_q v + Φ_t) − β² Φ(t, q)     ]
//! ```
//!
//! (chandramouli slides, "Stabilization Scheme"; Baumgarte 1972, Comput.
//! Methods Appl. Mech. Eng. 1, 1–16; jalon-bayo ch. 7, eq. 7.46). With
//! α = β = 0 the constraints are satisfied only at acceleration level and
//! Φ drifts (at worst quadratically in t); α, β > 0 make Φ obey the damped
//! equation Φ'' + 2αΦ' + β²Φ = 0, so drift stays bounded. The KKT matrix is
//! factored by LU with full pivoting, so a singular M is allowed as long as
//! the KKT matrix is regular.
//!
//! As a [`SecondOrderProblem`] (for structural methods) the form is
//! I·q'' = a(t, q, v), the KKT acceleration: multipliers are eliminated
//! at every evaluation, so the identity is the mass matrix.
//!
//! **Exact Jacobian.** [`OdeProblem::jacobian`] is
//! J = [[0, I], [∂a/∂q, ∂a/∂v]] with ∂a/∂q, ∂a/∂v from the differentiated
//! KKT system (see `acceleration_jacobian.rs`): one KKT factorisation and
//! 2n solves instead of 2n + 1 evaluations of the right-hand side. The
//! structural tangent of r = a_in − a(t, q, v) is K = −∂a/∂q, C = −∂a/∂v.
//! Both are reported exact when the system's second derivatives are
//! ([`SystemQueries::has_exact_second_derivatives`]).
//!
//! **Positions that are not velocities** (n_q > n_v: unit quaternions of
//! spatial bodies). q' = T(q) v keeps |p| = 1 exactly, an integrator only
//! to its error; after every accepted step q is projected back onto the
//! manifold, q ← q ⊕ 0 ([`MechanicalSystem::integrate_position`], the
//! quaternions normalised), reported as a correction
//! ([`StepFix::Corrected`]) so methods keep their history. The Jacobian is
//! then by differences (the exact one above is that of q' = v), the
//! physical state reports q ⊕ 0 (so interpolated output rows are on the
//! manifold too) and the
//! second-order form (I q'' = a) is not offered, since q'' is not v'.

use jounce_integrate::{EvalError, OdeProblem, SecondOrderProblem, StepFix};
use jounce_mechanics::{MechanicalSystem, SystemQueries};
use nalgebra::DMatrix;

use crate::acceleration_jacobian::AccelerationJacobian;
use crate::error::FormulationError;
use crate::formulation::Formulation;
use crate::kkt::{singularity, Kkt, Singularity};
use crate::linear_solver::LinearSolver;

/// The index-1 augmented (Lagrange multiplier) formulation.
pub struct Augmented<'a, S: MechanicalSystem + ?Sized> {
    pub(crate) sys: &'a S,
    alpha: f64,
    beta: f64,
    /// KKT matrix and its factorisation (shared with [`crate::Projection`]).
    pub(crate) kkt: Kkt,
    dacc: AccelerationJacobian,
    breakpoints: Vec<f64>,
    /// n_q (≥ n_v = `kkt.n`).
    pub(crate) nq: usize,
    /// Scratch for q ⊕ δ (len n_q) and the zero increment (len n_v).
    pub(crate) projected: Vec<f64>,
    pub(crate) zero: Vec<f64>,
}

impl<'a, S: MechanicalSystem + ?Sized> Augmented<'a, S> {
    /// Without stabilisation (α = β = 0).
    pub fn new(sys: &'a S) -> Self {
        Self::with_solver(sys, LinearSolver::Auto)
    }

    /// Without stabilisation, the KKT system solved with `solver`
    /// (one workspace built, not a default one then a second).
    pub fn with_solver(sys: &'a S, solver: LinearSolver) -> Self {
        Self {
            sys,
            alpha: 0.0,
            beta: 0.0,
            kkt: Kkt::with_solver(sys, solver),
            dacc: AccelerationJacobian::new(sys.nv(), sys.nc()),
            breakpoints: sys.breakpoints(),
            nq: sys.nq(),
            projected: vec![0.0; sys.nq()],
            zero: vec![0.0; sys.nv()],
        }
    }

    /// With Baumgarte parameters α (damping, 1/s) and β (frequency, 1/s);
    /// 0 switches a term off.
    ///
    /// # Errors
    /// [`FormulationError::BadParameter`] for negative or non-finite values.
    pub fn with_baumgarte(mut self, alpha: f64, beta: f64) -> Result<Self, FormulationError> {
        for (name, v) in [
            ("[settings.baumgarte] alpha", alpha),
            ("[settings.baumgarte] beta", beta),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(FormulationError::BadParameter {
                    formulation: "augmented".into(),
                    detail: format!("{name} must be finite and ≥ 0, got {v}"),
                });
            }
        }
        self.alpha = alpha;
        self.beta = beta;
        Ok(self)
    }

    /// Solve the KKT system with `solver` (default [`LinearSolver::Auto`]).
    #[must_use]
    pub fn with_linear_solver(mut self, solver: LinearSolver) -> Self {
        self.kkt = Kkt::with_solver(self.sys, solver);
        self
    }

    /// Whether the last KKT factorisation took the sparse path (the
    /// Schur complement Φ_q M⁻¹ Φ_qᵀ) rather than the dense LU.
    pub fn uses_sparse_solver(&self) -> bool {
        self.kkt.is_sparse()
    }

    /// Baumgarte parameters (α, β).
    pub fn baumgarte(&self) -> (f64, f64) {
        (self.alpha, self.beta)
    }

    /// The system formulated.
    pub fn system(&self) -> &'a S {
        self.sys
    }

    /// y0 = [q0; v0] after checking the KKT matrix; errors name `name`
    /// (the formulation the user chose, which may wrap this one).
    pub(crate) fn initial_state_as(
        &mut self,
        name: &str,
        t0: f64,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<Vec<f64>, FormulationError> {
        check_kkt(self.sys, &mut self.kkt, t0, q0, v0, name)?;
        let mut y = q0.to_vec();
        y.extend_from_slice(v0);
        Ok(y)
    }
}

impl<S: MechanicalSystem + ?Sized> OdeProblem for Augmented<'_, S> {
    fn dim(&self) -> usize {
        self.nq + self.kkt.n
    }

    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        let n = self.kkt.n;
        let (q, v) = y.split_at(self.nq);
        self.kkt
            .accelerations(self.sys, t, q, v, self.alpha, self.beta)?;
        if self.nq == n {
            dy[..n].copy_from_slice(v);
        } else {
            self.sys.position_derivative(q, v, &mut dy[..self.nq]);
        }
        dy[self.nq..].copy_from_slice(&self.kkt.sol[..n]);
        Ok(())
    }

    /// J = [[0, I], [∂a/∂q, ∂a/∂v]] from the differentiated KKT system
    /// (differences of the right-hand side when n_q ≠ n_v).
    fn jacobian(&mut self, t: f64, y: &[f64], jac: &mut DMatrix<f64>) -> Result<(), EvalError> {
        if self.nq != self.kkt.n {
            return jounce_integrate::jacobian::fd_jacobian(self, t, y, jac);
        }
        let n = self.kkt.n;
        let (q, v) = y.split_at(n);
        self.dacc
            .compute(self.sys, &mut self.kkt, t, q, v, self.alpha, self.beta)?;
        self.dacc.first_order(jac);
        Ok(())
    }

    fn has_exact_jacobian(&self) -> bool {
        self.nq == self.kkt.n && self.sys.has_exact_second_derivatives()
    }

    fn breakpoints(&self) -> &[f64] {
        &self.breakpoints
    }

    /// q ← q ⊕ 0 when positions are not velocities (unit quaternions
    /// normalised); nothing otherwise.
    fn after_step(&mut self, _t: f64, y: &mut [f64]) -> Result<StepFix, EvalError> {
        if self.nq == self.kkt.n {
            return Ok(StepFix::Unchanged);
        }
        Ok(crate::formulation::retract_positions(
            self.sys,
            &mut y[..self.nq],
            &self.zero,
            &mut self.projected,
        ))
    }

    /// I q'' = a(t, q, v), only when q' = v (n_q = n_v).
    fn as_second_order(&mut self) -> Option<&mut dyn SecondOrderProblem> {
        if self.nq == self.kkt.n {
            Some(self)
        } else {
            None
        }
    }
}

impl<S: MechanicalSystem + ?Sized> SecondOrderProblem for Augmented<'_, S> {
    fn ndof(&self) -> usize {
        self.kkt.n
    }

    /// The identity (accelerations are solved for in `forces`).
    fn mass_matrix(&mut self, _t: f64, _q: &[f64], m: &mut DMatrix<f64>) -> Result<(), EvalError> {
        m.fill_with_identity();
        Ok(())
    }

    /// The KKT acceleration a(t, q, v), with the Baumgarte terms.
    fn forces(&mut self, t: f64, q: &[f64], v: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        self.kkt
            .accelerations(self.sys, t, q, v, self.alpha, self.beta)?;
        f.copy_from_slice(&self.kkt.sol[..self.kkt.n]);
        Ok(())
    }

    /// K = −∂a/∂q, C = −∂a/∂v of r = a_in − a(t, q, v) (independent of a_in).
    fn tangent(
        &mut self,
        t: f64,
        q: &[f64],
        v: &[f64],
        _a: &[f64],
        k: &mut DMatrix<f64>,
        c: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        self.dacc
            .compute(self.sys, &mut self.kkt, t, q, v, self.alpha, self.beta)?;
        let n = self.kkt.n;
        for i in 0..n {
            for j in 0..n {
                k[(i, j)] = -self.dacc.da_dq[(i, j)];
                c[(i, j)] = -self.dacc.da_dv[(i, j)];
            }
        }
        Ok(())
    }

    fn has_exact_tangent(&self) -> bool {
        self.sys.has_exact_second_derivatives()
    }
}

impl<S: MechanicalSystem + ?Sized> Formulation for Augmented<'_, S> {
    fn name(&self) -> &'static str {
        "augmented"
    }

    fn initial_state(
        &mut self,
        t0: f64,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<Vec<f64>, FormulationError> {
        self.initial_state_as("augmented", t0, q0, v0)
    }

    fn physical_state(
        &mut self,
        t: f64,
        y: &[f64],
        q: &mut [f64],
        v: &mut [f64],
        lambda: &mut [f64],
    ) -> Result<(), EvalError> {
        let n = self.kkt.n;
        self.positions(y, q);
        v.copy_from_slice(&y[self.nq..]);
        self.kkt
            .accelerations(self.sys, t, q, v, self.alpha, self.beta)?;
        lambda.copy_from_slice(&self.kkt.sol[n..]);
        Ok(())
    }

    fn physical_motion(
        &mut self,
        _t: f64,
        y: &[f64],
        q: &mut [f64],
        v: &mut [f64],
        _lambda: &mut [f64],
    ) -> Result<(), EvalError> {
        self.positions(y, q);
        v.copy_from_slice(&y[self.nq..]);
        Ok(())
    }
}

impl<S: MechanicalSystem + ?Sized> Augmented<'_, S> {
    /// q of the state y, on the manifold: q ⊕ 0 when positions are not
    /// velocities (the interpolated output between steps is normalised
    /// too), y's q otherwise.
    fn positions(&self, y: &[f64], q: &mut [f64]) {
        if self.nq == self.kkt.n {
            q.copy_from_slice(&y[..self.nq]);
        } else {
            self.sys.integrate_position(&y[..self.nq], &self.zero, q);
        }
    }
}

/// Refuse a start where the dimensions are wrong or the KKT matrix is
/// singular, naming the cause (shared by the KKT-based formulations).
pub(crate) fn check_kkt<S: MechanicalSystem + ?Sized>(
    sys: &S,
    kkt: &mut Kkt,
    t0: f64,
    q0: &[f64],
    v0: &[f64],
    name: &str,
) -> Result<(), FormulationError> {
    let n = kkt.n;
    crate::formulation::check_state_dimensions(name, sys.nq(), n, q0, v0)?;
    if let Some(i) = (0..n).find(|&i| !q0[i].is_finite() || !v0[i].is_finite()) {
        return Err(FormulationError::BadParameter {
            formulation: name.into(),
            detail: format!(
                "initial state of coordinate {} is not finite",
                sys.coordinate_label(i)
            ),
        });
    }
    let factored = kkt.factor(sys, t0, q0);
    if kkt.choice() == LinearSolver::Sparse {
        if let Some(why) = kkt.sparse_unavailable(sys) {
            return Err(FormulationError::BadParameter {
                formulation: name.into(),
                detail: format!(
                    "linear_solver = \"sparse\" cannot be used: {why}; use \"auto\" or \"dense\""
                ),
            });
        }
    }
    if factored.is_err() {
        let Singularity {
            jacobian_rank,
            detail,
        } = singularity(
            sys,
            &kkt.data.mass_dense(),
            &kkt.data.constraint_jacobian,
            0.0,
        );
        return Err(if jacobian_rank.is_some() {
            FormulationError::SingularJacobian(format!("at t = {t0}: {detail}"))
        } else {
            FormulationError::SingularMass {
                formulation: name.into(),
                detail: format!("the KKT matrix is singular at t = {t0}: {detail}"),
            }
        });
    }
    Ok(())
}
