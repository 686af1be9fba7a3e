//! Switching functions of the mechanical system (contact gaps) as events
//! of any formulation, and the state change of an impact.
//!
//! [`Switched`] wraps a formulation: every [`OdeProblem`] call goes to it,
//! and the system's switching functions s(t, q, v)
//! ([`SystemQueries::switching_functions`]) become the problem's event
//! functions, evaluated on the physical motion (q, v) of the integrator
//! state. The shared driver locates their roots on each method's own
//! continuous solution, ends the step there and restarts the method with
//! its history dropped (a penalty law switches on or off there). At the
//! closing root of a rigid contact (impact law) the velocities jump by
//! [`SystemQueries::apply_impact`] and the state is rebuilt from (q, v⁺)
//! by [`Formulation::initial_state`], so that every formulation's extra
//! unknowns (multipliers, independent coordinates) are consistent again.
//!
//! The formulation's own mode events (friction elements that stick or
//! slip, [`Formulation::mode_events`]) follow the system's switching
//! functions in the event list; after a contact closes or opens the
//! formulation re-decides its modes ([`Formulation::after_system_event`]).
//!
//! Owns: the map from switching functions to events. Must not: know how a
//! formulation stores its state (it goes through [`Formulation`]).

use nalgebra::DMatrix;

use jounce_integrate::{
    ConstrainedSecondOrderProblem, DaeProblem, EvalError, EventAction, EventDirection, EventSpec,
    OdeProblem, OverdeterminedProblem, ProblemForm, SecondOrderProblem, StepFix,
};
use jounce_mechanics::{MechanicalSystem, SystemQueries};

use crate::error::FormulationError;
use crate::formulation::Formulation;

/// A formulation whose events are the system's switching functions.
pub struct Switched<'a, S: MechanicalSystem + ?Sized> {
    inner: Box<dyn Formulation + 'a>,
    sys: &'a S,
    q: Vec<f64>,
    v: Vec<f64>,
    v_plus: Vec<f64>,
    lambda: Vec<f64>,
}

impl<'a, S: MechanicalSystem + ?Sized> Switched<'a, S> {
    /// Wraps `inner`, a formulation of `sys`.
    pub fn new(inner: Box<dyn Formulation + 'a>, sys: &'a S) -> Self {
        Self {
            inner,
            sys,
            q: vec![0.0; sys.nq()],
            v: vec![0.0; sys.nv()],
            v_plus: vec![0.0; sys.nv()],
            lambda: vec![0.0; sys.nc()],
        }
    }
}

impl<S: MechanicalSystem + ?Sized> OdeProblem for Switched<'_, S> {
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        self.inner.rhs(t, y, dy)
    }
    fn jacobian(&mut self, t: f64, y: &[f64], jac: &mut DMatrix<f64>) -> Result<(), EvalError> {
        self.inner.jacobian(t, y, jac)
    }
    fn has_exact_jacobian(&self) -> bool {
        self.inner.has_exact_jacobian()
    }
    fn n_events(&self) -> usize {
        self.sys.n_switching_functions() + self.inner.n_mode_events()
    }
    fn events(&mut self, t: f64, y: &[f64], g: &mut [f64]) -> Result<(), EvalError> {
        self.inner
            .physical_motion(t, y, &mut self.q, &mut self.v, &mut self.lambda)?;
        let ns = self.sys.n_switching_functions();
        self.sys
            .switching_functions(t, &self.q, &self.v, &mut g[..ns]);
        self.inner.mode_events(t, y, &mut g[ns..])
    }
    fn event_spec(&self, _i: usize) -> EventSpec {
        EventSpec {
            direction: EventDirection::Both,
            terminal: false,
        }
    }
    fn handle_event(&mut self, i: usize, t: f64, y: &mut [f64]) -> Result<EventAction, EvalError> {
        let ns = self.sys.n_switching_functions();
        if i >= ns {
            // a friction element sticks or slips
            return self.inner.handle_mode_event(i - ns, t, y);
        }
        let action = self.switch(i, t, y)?;
        // a contact that closed or opened may let a friction element stick
        if self.inner.after_system_event(t, y)? {
            return Ok(EventAction::StateChanged);
        }
        Ok(action)
    }
    fn after_step(&mut self, t: f64, y: &mut [f64]) -> Result<StepFix, EvalError> {
        self.inner.after_step(t, y)
    }
    fn breakpoints(&self) -> &[f64] {
        self.inner.breakpoints()
    }
    fn set_time_cap(&mut self, t_cap: f64) {
        self.inner.set_time_cap(t_cap);
    }
    fn as_second_order(&mut self) -> Option<&mut dyn SecondOrderProblem> {
        self.inner.as_second_order()
    }
    fn as_constrained_second_order(&mut self) -> Option<&mut dyn ConstrainedSecondOrderProblem> {
        self.inner.as_constrained_second_order()
    }
    fn augmented_lagrangian_penalty(&self) -> Option<f64> {
        self.inner.augmented_lagrangian_penalty()
    }
    fn as_dae(&mut self) -> Option<&mut dyn DaeProblem> {
        self.inner.as_dae()
    }
    fn as_overdetermined(&mut self) -> Option<&mut dyn OverdeterminedProblem> {
        self.inner.as_overdetermined()
    }
    fn forms(&mut self) -> Vec<ProblemForm> {
        self.inner.forms()
    }
}

impl<S: MechanicalSystem + ?Sized> Switched<'_, S> {
    /// The response to switching function `i` at its root: a penalty law
    /// switches (the driver restarts the method), an impact law changes
    /// the velocities.
    fn switch(&mut self, i: usize, t: f64, y: &mut [f64]) -> Result<EventAction, EvalError> {
        if self.sys.restitution(i).is_none() {
            // a penalty law switches: the driver restarts the method here
            return Ok(EventAction::Continue);
        }
        self.inner
            .physical_motion(t, y, &mut self.q, &mut self.v, &mut self.lambda)?;
        let changed = self
            .sys
            .apply_impact(t, &self.q, &self.v, i, &mut self.v_plus)
            .map_err(|detail| EvalError::Singular {
                what: format!("impact of contact '{}'", self.sys.switching_label(i)),
                t,
                detail,
            })?;
        if !changed {
            return Ok(EventAction::Continue);
        }
        let y_plus = self
            .inner
            .initial_state(t, &self.q, &self.v_plus)
            .map_err(|e| {
                EvalError::Other(format!(
                    "state after the impact of contact '{}' at t = {t}: {e}",
                    self.sys.switching_label(i)
                ))
            })?;
        y.copy_from_slice(&y_plus);
        Ok(EventAction::StateChanged)
    }
}

impl<S: MechanicalSystem + ?Sized> Formulation for Switched<'_, S> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn initial_state(
        &mut self,
        t0: f64,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<Vec<f64>, FormulationError> {
        self.inner.initial_state(t0, q0, v0)
    }
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
    fn friction_forces(&mut self, t: f64, y: &[f64], out: &mut [f64]) -> Result<bool, EvalError> {
        self.inner.friction_forces(t, y, out)
    }
}
