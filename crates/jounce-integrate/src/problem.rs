//! Problem traits: what an integrator may ask of the system it integrates.
//!
//! Owns the integrator-facing contracts only. Nothing here (or anywhere in
//! this crate) knows about bodies, joints or constraints: formulations in
//! `jounce-formulation` implement these traits.

use nalgebra::DMatrix;

use crate::constrained::ConstrainedSecondOrderProblem;
use crate::dae::DaeProblem;
use crate::error::EvalError;

/// Direction of a zero crossing that an event function reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EventDirection {
    /// Any sign change.
    #[default]
    Both,
    /// g goes from negative to positive.
    Rising,
    /// g goes from positive to negative.
    Falling,
}

/// How one event function g_i(t, y) is to be treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct EventSpec {
    /// Which sign changes count.
    pub direction: EventDirection,
    /// Stop the integration at the located root.
    pub terminal: bool,
}

/// What [`OdeProblem::handle_event`] did at an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventAction {
    /// Nothing changed; the integration goes on from the event.
    Continue,
    /// The state was changed (an impact's velocity jump, a stick–slip
    /// switch, a mode change of the problem): the method restarts from the
    /// new state at the event time, its history dropped.
    StateChanged,
    /// Stop the integration at the event (as a terminal event).
    Stop,
}

/// What [`OdeProblem::after_step`] did to the state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepFix {
    /// y was left as it was.
    Unchanged,
    /// y was changed in meaning or by a jump (re-partitioning of the
    /// coordinates): methods must drop their history (FSAL stage,
    /// multistep back values) and restart.
    Modified,
    /// y was moved by a small correction that keeps it the same solution
    /// (a projection onto the constraint manifold, of the order of the
    /// integration error): methods may keep their history and only replace
    /// the current value ([`crate::Stepper::correct`]), as CVODE does with
    /// its projection (Hindmarsh et al., SUNDIALS CVODE guide, "projection").
    Corrected,
}

/// First-order system y' = f(t, y).
///
/// Every method of the library integrates this trait. Optional capabilities
/// have defaults: a finite-difference Jacobian, no events, no post-step
/// correction, no breakpoints, no second-order structure.
///
/// Implementations keep their own scratch space, which is why evaluation takes
/// `&mut self`; `rhs` must not allocate.
pub trait OdeProblem {
    /// Dimension n of y.
    fn dim(&self) -> usize;

    /// Right-hand side f(t, y) written into `dy` (len n).
    ///
    /// # Errors
    /// [`EvalError`] when f cannot be evaluated at (t, y): a singular
    /// matrix, a Newton failure inside the formulation, a non-finite value.
    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError>;

    /// Jacobian J = ∂f/∂y (n × n) at (t, y).
    ///
    /// The default uses forward differences ([`crate::jacobian::fd_jacobian`]);
    /// problems with an analytic or automatic-differentiation Jacobian
    /// override it and return `true` from [`OdeProblem::has_exact_jacobian`].
    fn jacobian(&mut self, t: f64, y: &[f64], jac: &mut DMatrix<f64>) -> Result<(), EvalError> {
        crate::jacobian::fd_jacobian(self, t, y, jac)
    }

    /// Whether [`OdeProblem::jacobian`] is exact (analytic or AD) rather than
    /// a finite-difference approximation.
    fn has_exact_jacobian(&self) -> bool {
        false
    }

    /// Number of event functions g_i(t, y).
    fn n_events(&self) -> usize {
        0
    }

    /// Event functions g(t, y) into `g` (len [`OdeProblem::n_events`]).
    fn events(&mut self, _t: f64, _y: &[f64], _g: &mut [f64]) -> Result<(), EvalError> {
        Ok(())
    }

    /// Direction filter and terminal flag of event `i`.
    fn event_spec(&self, _i: usize) -> EventSpec {
        EventSpec::default()
    }

    /// Called by the driver at a located non-terminal event `i` at (t, y),
    /// on the state just before the event: the problem may change `y`
    /// (impacts, friction, switches: y⁺ = h(y⁻)) and its own mode, and says
    /// what it did. The driver then reports y⁻ and y⁺ at t and restarts the
    /// method from y⁺. The default changes nothing.
    ///
    /// # Errors
    /// [`EvalError`] when the event cannot be handled.
    fn handle_event(
        &mut self,
        _i: usize,
        _t: f64,
        _y: &mut [f64],
    ) -> Result<EventAction, EvalError> {
        Ok(EventAction::Continue)
    }

    /// Hook called after every accepted step, at the step's end (t, y).
    /// Projection and re-partitioning formulations correct y here.
    fn after_step(&mut self, _t: f64, _y: &mut [f64]) -> Result<StepFix, EvalError> {
        Ok(StepFix::Unchanged)
    }

    /// Known times at which f is not smooth (steps in forcing, switching
    /// times). The driver ends a step exactly at each and restarts the
    /// method there. Must be sorted ascending.
    fn breakpoints(&self) -> &[f64] {
        &[]
    }

    /// Evaluate the time functions of the forms the driver does not wrap
    /// (the constrained second-order and DAE forms) at min(t, t_cap) from
    /// now on: the driver sets the floating-point number just below a
    /// breakpoint while a step ends there, so that the step's last stage
    /// sees the left limit, and ∞ after it. Default: nothing (a problem
    /// without those forms, or without breakpoints).
    fn set_time_cap(&mut self, _t_cap: f64) {}

    /// The second-order structure M(q) q'' = f(t, q, q'), if the problem has
    /// one; structural methods (Newmark, HHT, generalized-α) need it.
    fn as_second_order(&mut self) -> Option<&mut dyn SecondOrderProblem> {
        None
    }

    /// The constrained second-order structure M(q) q'' + Φ_qᵀλ = Q,
    /// Φ(t, q) = 0, if the problem is an index-3 DAE; its state is then
    /// y = [q; v; λ] and only methods that accept
    /// [`ProblemForm::ConstrainedSecondOrder`] can integrate it (the
    /// structural family). `rhs` of such a problem serves only for
    /// initial-step estimates.
    fn as_constrained_second_order(&mut self) -> Option<&mut dyn ConstrainedSecondOrderProblem> {
        None
    }

    /// The penalty factor of the index-3 augmented Lagrangian, if this
    /// problem's constrained second-order form
    /// ([`OdeProblem::as_constrained_second_order`]) is to be integrated
    /// that way ([`crate::structural::augmented_lagrangian`]): a multiple of
    /// the largest diagonal entry of M (dimensionless, > 0). The problem
    /// then offers only [`ProblemForm::AugmentedLagrangian`].
    fn augmented_lagrangian_penalty(&self) -> Option<f64> {
        None
    }

    /// The implicit DAE F(t, y, y') = 0 this problem is, if it is one; its
    /// state is the integrator's y and `rhs` then serves only for
    /// initial-step estimates. DAE methods (bdf, radau5) integrate it
    /// ([`ProblemForm::Dae`]).
    fn as_dae(&mut self) -> Option<&mut dyn DaeProblem> {
        None
    }

    /// The invariants g(t, y) = 0 this ODE keeps, if it is integrated as an
    /// overdetermined DAE ([`OverdeterminedProblem`], [`ProblemForm::Overdetermined`]):
    /// the ODE methods that accept that form (bdf, ndf) then meet the
    /// invariants at every step, solving the discretised equations in the
    /// least-squares sense; `rhs` stays the right-hand side.
    fn as_overdetermined(&mut self) -> Option<&mut dyn OverdeterminedProblem> {
        None
    }

    /// The forms of this problem that methods can integrate
    /// ([`crate::method::MethodInfo::accepts`]). A DAE (index-3 or GGL)
    /// offers no first-order ODE: an ODE method would hold its multipliers
    /// constant. An overdetermined DAE offers none either: a method that
    /// ignores its invariants would let them drift.
    fn forms(&mut self) -> Vec<ProblemForm> {
        let mut dae = Vec::new();
        if self.augmented_lagrangian_penalty().is_some()
            && self.as_constrained_second_order().is_some()
        {
            return vec![ProblemForm::AugmentedLagrangian];
        }
        if self.as_constrained_second_order().is_some() {
            dae.push(ProblemForm::ConstrainedSecondOrder);
        }
        if self.as_dae().is_some() {
            dae.push(ProblemForm::Dae);
        }
        if self.as_overdetermined().is_some() {
            dae.push(ProblemForm::Overdetermined);
        }
        if !dae.is_empty() {
            return dae;
        }
        let mut f = vec![ProblemForm::FirstOrder];
        if self.as_second_order().is_some() {
            f.push(ProblemForm::SecondOrder);
        }
        f
    }
}

/// A problem form a method can integrate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProblemForm {
    /// y' = f(t, y) ([`OdeProblem`]).
    FirstOrder,
    /// M(q) q'' = f(t, q, q') ([`SecondOrderProblem`]).
    SecondOrder,
    /// M(q) q'' + Φ_qᵀλ = Q, Φ = 0, the index-3 DAE
    /// ([`ConstrainedSecondOrderProblem`]).
    ConstrainedSecondOrder,
    /// The same index-3 DAE solved by the augmented Lagrangian with
    /// mass-orthogonal projections (Bayo & Ledesma 1996), which needs
    /// neither a regular M nor a full-rank Φ_q
    /// ([`OdeProblem::augmented_lagrangian_penalty`]).
    AugmentedLagrangian,
    /// F(t, y, y') = 0 with an index description ([`DaeProblem`]).
    Dae,
    /// y' = f(t, y) together with invariants g(t, y) = 0, the
    /// overdetermined DAE of Führer & Leimkuhler ([`OverdeterminedProblem`]).
    Overdetermined,
}

impl ProblemForm {
    /// Short name used in `jounce methods`.
    pub fn label(&self) -> &'static str {
        match self {
            Self::FirstOrder => "ode",
            Self::SecondOrder => "second-order",
            Self::ConstrainedSecondOrder => "index-3",
            Self::AugmentedLagrangian => "index-3 AL",
            Self::Dae => "dae",
            Self::Overdetermined => "odae",
        }
    }
}

/// An ODE y' = f(t, y) (the [`OdeProblem`] itself) whose solutions keep p
/// invariants g(t, y) = 0: taken together,
///
/// ```text
/// y' = f(t, y),   0 = g(t, y)
/// ```
///
/// is an overdetermined DAE (ODAE), n + p equations for n unknowns.
///
/// For a constrained mechanical system in the index-1 form (accelerations
/// from the KKT system, so that Φ_q q'' = γ holds in f), g collects the
/// position and velocity constraints Φ = 0, Φ_q v + Φ_t = 0: position,
/// velocity and acceleration constraints together with the equations of
/// motion (Führer & Leimkuhler, "Numerical solution of
/// differential-algebraic equations for constrained mechanical motion",
/// Numer. Math. 59 (1991) 55–69; Eich-Soellner & Führer, *Numerical
/// Methods in Multibody Dynamics*, Teubner 1998, ch. 5). A BDF
/// discretisation of it has no exact solution in general; it is solved in
/// the least-squares sense with the invariants met exactly (termeer 1996,
/// "Overdetermined DAE", sec. 4.6: the implicit integrator of
/// Pro/MECHANICA MOTION), see [`crate::overdetermined`].
pub trait OverdeterminedProblem {
    /// Number p of invariants (rows of g).
    fn n_invariants(&self) -> usize;

    /// g(t, y) into `g` (len p); must not allocate.
    ///
    /// # Errors
    /// [`EvalError`] when g cannot be evaluated at (t, y).
    fn invariants(&mut self, t: f64, y: &[f64], g: &mut [f64]) -> Result<(), EvalError>;

    /// G = ∂g/∂y (p × n) at (t, y); must not allocate.
    ///
    /// # Errors
    /// [`EvalError`] when G cannot be evaluated at (t, y).
    fn invariant_jacobian(
        &mut self,
        t: f64,
        y: &[f64],
        gy: &mut DMatrix<f64>,
    ) -> Result<(), EvalError>;
}

/// Second-order system M(q) q'' = f(t, q, q') with n degrees of freedom,
/// the form of the structural-dynamics family (jalon-bayo 7.1.5).
///
/// The first-order form used by the other methods is y = [q; v], with
/// q' = v and v' = M⁻¹ f (see [`crate::FirstOrderForm`]).
///
/// **Positions that are not rates.** The positions may live on a manifold
/// of larger dimension n_q ≥ n (unit quaternions of spatial rotations):
/// then q' = T(q) v ([`SecondOrderProblem::position_derivative`]) and the
/// structural methods move q by a velocity-sized increment Δ through the
/// problem's retraction q ⊕ Δ ([`SecondOrderProblem::integrate_positions`]),
/// the Lie-group form of the Newmark and generalized-α updates
/// q_{n+1} = q_n ⊕ (h v_n + h²(½ − β) a_n + h² β a_{n+1}) (Brüls & Cardona,
/// "On the use of Lie group time integrators in multibody dynamics",
/// J. Comput. Nonlinear Dynam. 5 (2010) 031002, eqs. 20–23; the same map
/// the index-3 form uses, [`crate::ConstrainedSecondOrderProblem::integrate_positions`]).
/// The state is then y = [q; v] with n_q + n entries; the defaults are the
/// vector space, n_q = n and q ⊕ Δ = q + Δ.
pub trait SecondOrderProblem {
    /// Number of degrees of freedom n = dim(v) = dim(q'').
    fn ndof(&self) -> usize;

    /// Number of position coordinates n_q = dim(q) ≥ n. Default: n.
    fn n_positions(&self) -> usize {
        self.ndof()
    }

    /// q ⊕ Δ: the position reached from q (len n_q) by the velocity-sized
    /// increment Δ (len n) into `out` (len n_q). Default: q + Δ (n_q = n).
    /// Must not allocate.
    fn integrate_positions(&self, q: &[f64], delta: &[f64], out: &mut [f64]) {
        for ((o, &qi), &di) in out.iter_mut().zip(q).zip(delta) {
            *o = qi + di;
        }
    }

    /// q' = T(q) v (len n_q), the rate of the positions. Default: q' = v.
    /// Must not allocate.
    fn position_derivative(&self, _q: &[f64], v: &[f64], qdot: &mut [f64]) {
        qdot.copy_from_slice(v);
    }

    /// Mass matrix M(t, q) (n × n).
    fn mass_matrix(&mut self, t: f64, q: &[f64], m: &mut DMatrix<f64>) -> Result<(), EvalError>;

    /// Generalized forces f(t, q, v) (len n), including velocity-dependent terms.
    fn forces(&mut self, t: f64, q: &[f64], v: &[f64], f: &mut [f64]) -> Result<(), EvalError>;

    /// Tangent matrices of the residual r = M(q) a − f(t, q, v):
    /// K = ∂r/∂q (stiffness, including the mass-matrix derivative term;
    /// n × n, along the increments Δ of q ⊕ Δ when n_q > n) and
    /// C = ∂r/∂v (damping). Default: forward differences.
    fn tangent(
        &mut self,
        t: f64,
        q: &[f64],
        v: &[f64],
        a: &[f64],
        k: &mut DMatrix<f64>,
        c: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        crate::jacobian::fd_tangent(self, t, q, v, a, k, c)
    }

    /// Whether [`SecondOrderProblem::tangent`] is exact (analytic or AD)
    /// rather than the finite-difference default; methods route the
    /// difference quotients through their own force counter when it is not.
    fn has_exact_tangent(&self) -> bool {
        false
    }
}
