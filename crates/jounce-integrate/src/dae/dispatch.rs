//! One registered method, two implementations: the ODE stepper for
//! first-order problems and the DAE stepper for problems that are an
//! implicit DAE ([`crate::OdeProblem::as_dae`]). The choice is made at
//! every [`Stepper::reset`], from the problem itself. An overdetermined
//! DAE ([`crate::OdeProblem::as_overdetermined`]) is an ODE with
//! invariants: the ODE stepper takes it.

use crate::error::IntegrateError;
use crate::problem::OdeProblem;
use crate::stepper::{StepContext, Stepper};

/// An ODE stepper and a DAE stepper under one name (module documentation).
pub struct OdeOrDae {
    ode: Box<dyn Stepper>,
    dae: Box<dyn Stepper>,
    use_dae: bool,
}

impl OdeOrDae {
    /// Both implementations of one method.
    pub fn new(ode: Box<dyn Stepper>, dae: Box<dyn Stepper>) -> Self {
        Self {
            ode,
            dae,
            use_dae: false,
        }
    }

    fn active(&self) -> &dyn Stepper {
        if self.use_dae {
            self.dae.as_ref()
        } else {
            self.ode.as_ref()
        }
    }

    fn active_mut(&mut self) -> &mut dyn Stepper {
        if self.use_dae {
            self.dae.as_mut()
        } else {
            self.ode.as_mut()
        }
    }
}

impl Stepper for OdeOrDae {
    fn name(&self) -> &'static str {
        self.ode.name()
    }

    fn reset(
        &mut self,
        p: &mut dyn OdeProblem,
        t0: f64,
        y0: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.use_dae = p.as_dae().is_some();
        self.active_mut().reset(p, t0, y0, ctx)
    }

    fn restart_at_breakpoint(
        &mut self,
        p: &mut dyn OdeProblem,
        t0: f64,
        y0: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.use_dae = p.as_dae().is_some();
        self.active_mut().restart_at_breakpoint(p, t0, y0, ctx)
    }

    fn correct(
        &mut self,
        p: &mut dyn OdeProblem,
        y: &[f64],
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.active_mut().correct(p, y, ctx)
    }

    fn step(
        &mut self,
        p: &mut dyn OdeProblem,
        t_stop: f64,
        ctx: &mut StepContext,
    ) -> Result<(), IntegrateError> {
        self.active_mut().step(p, t_stop, ctx)
    }

    fn t(&self) -> f64 {
        self.active().t()
    }

    fn y(&self) -> &[f64] {
        self.active().y()
    }

    fn t_prev(&self) -> f64 {
        self.active().t_prev()
    }

    fn h_last(&self) -> f64 {
        self.active().h_last()
    }

    fn prepare_dense_output(&mut self, p: &mut dyn OdeProblem) -> Result<(), IntegrateError> {
        self.active_mut().prepare_dense_output(p)
    }

    fn interpolate(&self, t: f64, out: &mut [f64]) {
        self.active().interpolate(t, out)
    }
}
