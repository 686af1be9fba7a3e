//! The state every one-step method keeps between its steps, with the
//! reset, restart and advance they all do alike, written once
//! ([`OneStepState`]): explicit Runge–Kutta ([`crate::explicit::erk`]),
//! Cash–Karp variable order ([`crate::explicit::cash_karp_vo`]),
//! SDIRK/ESDIRK ([`crate::implicit::dirk`]), Rosenbrock/W
//! ([`crate::implicit::rosenbrock`]) and the local linearization
//! ([`crate::exponential::llm`]). Each method keeps its own stages,
//! matrices and flags; Radau IIA keeps its state in its core
//! ([`crate::implicit::radau_core`]).
//!
//! Between steps a one-step method holds the current point (t_n, y_n,
//! f(t_n, y_n)), the start of the last step (t_{n−1}, y_{n−1}, f_{n−1}) for
//! the cubic Hermite interpolant (Hairer, Nørsett & Wanner I, eq.
//! II.6.7), the proposed step size, the step-size controller and the
//! shared loop's memory ([`LoopState`]).

use crate::controller::StepController;
use crate::dense::hermite_cubic;
use crate::error::IntegrateError;
use crate::initial_step::initial_step;
use crate::options::SolverOptions;
use crate::problem::OdeProblem;
use crate::step_loop::LoopState;
use crate::stepper::{starting_step, StepContext};

/// The between-steps state of a one-step method (module documentation).
pub(crate) struct OneStepState {
    /// Current time (end of the last accepted step).
    pub(crate) t: f64,
    /// Start of the last accepted step.
    pub(crate) t_prev: f64,
    /// Proposed size of the next step (the fixed one at fixed steps).
    pub(crate) h: f64,
    /// Current state.
    pub(crate) y: Vec<f64>,
    /// State at the start of the last accepted step.
    pub(crate) y_prev: Vec<f64>,
    /// f at the start of the last accepted step.
    pub(crate) f_prev: Vec<f64>,
    /// f(t, y) at the current point.
    pub(crate) f_cur: Vec<f64>,
    /// Step-size controller.
    pub(crate) controller: StepController,
    /// The shared loop's memory ([`crate::step_loop::advance`]).
    pub(crate) loop_state: LoopState,
}

impl OneStepState {
    /// Empty state; sized at the first [`OneStepState::restart_at`].
    pub(crate) fn new(controller: StepController) -> Self {
        Self {
            t: 0.0,
            t_prev: 0.0,
            h: 0.0,
            y: Vec::new(),
            y_prev: Vec::new(),
            f_prev: Vec::new(),
            f_cur: Vec::new(),
            controller,
            loop_state: LoopState::default(),
        }
    }

    /// Size the storage for n components (allocates only when the size
    /// changes).
    pub(crate) fn size_for(&mut self, n: usize) {
        if self.y.len() != n || self.f_cur.len() != n {
            for v in [
                &mut self.y,
                &mut self.y_prev,
                &mut self.f_prev,
                &mut self.f_cur,
            ] {
                *v = vec![0.0; n];
            }
        }
    }

    /// (Re)start at (t0, y0): both ends of the "last step" at the new
    /// point, f(t0, y0) evaluated, a fresh controller. Into the existing
    /// storage: a reset after every projection allocates nothing once
    /// sized. The step size is chosen by [`OneStepState::choose_step`].
    ///
    /// # Errors
    /// The evaluation of f(t0, y0).
    pub(crate) fn restart_at(
        &mut self,
        p: &mut dyn OdeProblem,
        t0: f64,
        y0: &[f64],
        ctx: &StepContext,
    ) -> Result<(), IntegrateError> {
        self.size_for(y0.len());
        self.y.copy_from_slice(y0);
        self.t = t0;
        self.t_prev = t0;
        self.y_prev.copy_from_slice(y0);
        self.new_controller(ctx.opts);
        p.rhs(t0, y0, &mut self.f_cur)?;
        self.f_prev.copy_from_slice(&self.f_cur);
        Ok(())
    }

    /// Forget the controller's memory (a restart).
    pub(crate) fn new_controller(&mut self, opts: &SolverOptions) {
        self.controller = StepController::new(opts.controller, opts.error_per);
    }

    /// The step size to start with ([`starting_step`]: the fixed step,
    /// the kept h, the user's h0, or the first-step estimate of order
    /// `order`, [`OneStepState::first_step`]).
    ///
    /// # Errors
    /// A fixed step that is not positive and finite; evaluation errors.
    pub(crate) fn choose_step(
        &mut self,
        name: &str,
        p: &mut dyn OdeProblem,
        order: u32,
        opts: &SolverOptions,
    ) -> Result<(), IntegrateError> {
        self.h = starting_step(name, opts, self.h, || self.first_step(p, order, opts))?;
        Ok(())
    }

    /// Hairer's starting step size at the current point (f known), for a
    /// method whose error estimate has order `order` (Hairer, Nørsett &
    /// Wanner I, II.4).
    ///
    /// # Errors
    /// Evaluation errors.
    pub(crate) fn first_step(
        &self,
        p: &mut dyn OdeProblem,
        order: u32,
        opts: &SolverOptions,
    ) -> Result<f64, IntegrateError> {
        Ok(initial_step(
            p,
            self.t,
            &self.y,
            &self.f_cur,
            order,
            opts.rtol,
            opts.atol,
            opts.h_max,
            1.0,
        )?)
    }

    /// After a crossed discontinuity: a fresh controller and a first step
    /// chosen anew at the current point (f there is known).
    ///
    /// # Errors
    /// Evaluation errors.
    pub(crate) fn restart_here(
        &mut self,
        p: &mut dyn OdeProblem,
        order: u32,
        opts: &SolverOptions,
    ) -> Result<(), IntegrateError> {
        self.new_controller(opts);
        self.h = self.first_step(p, order, opts)?;
        Ok(())
    }

    /// Accept a step of size h to `y_new`: the current point becomes the
    /// start of the last step. f at the new point is the caller's to set
    /// (an FSAL stage or an evaluation) in `f_cur`.
    pub(crate) fn advance(&mut self, h: f64, y_new: &[f64]) {
        self.t_prev = self.t;
        self.y_prev.copy_from_slice(&self.y);
        self.f_prev.copy_from_slice(&self.f_cur);
        self.t += h;
        self.y.copy_from_slice(y_new);
    }

    /// Accept a step of size h to `y_new` ([`OneStepState::advance`])
    /// with f at the new point from the method's last stage when it is
    /// that value (`fsal`: first same as last, a stiffly accurate
    /// method), evaluated otherwise.
    ///
    /// # Errors
    /// The evaluation of f at the new point.
    pub(crate) fn accept(
        &mut self,
        p: &mut dyn OdeProblem,
        h: f64,
        y_new: &[f64],
        fsal: Option<&[f64]>,
    ) -> Result<(), IntegrateError> {
        self.advance(h, y_new);
        match fsal {
            Some(f) => self.f_cur.copy_from_slice(f),
            None => p.rhs(self.t, &self.y, &mut self.f_cur)?,
        }
        Ok(())
    }

    /// The cubic Hermite interpolant of the last step at t into `out`
    /// (third order; HNW I, eq. II.6.7).
    pub(crate) fn hermite(&self, t: f64, out: &mut [f64]) {
        hermite_cubic(
            self.t_prev,
            &self.y_prev,
            &self.f_prev,
            self.t,
            &self.y,
            &self.f_cur,
            t,
            out,
        );
    }
}

/// The [`crate::Stepper`] accessors of a method whose between-steps state
/// is a [`OneStepState`] in the field `st`: write
/// `one_step_accessors!();` inside the `impl Stepper` block;
/// `one_step_accessors!(restart_keeping_step);` adds the
/// [`crate::Stepper::restart_at_breakpoint`] of a method whose reset
/// keeps its step size: the smaller of the kept size and the first-step
/// estimate at the new point ([`crate::stepper::restart_keeping_step`]);
/// `one_step_accessors!(hermite);` adds the cubic Hermite
/// [`crate::Stepper::interpolate`] ([`OneStepState::hermite`]);
/// `one_step_accessors!(fields);` reads them from the stepper's own
/// fields `t`, `y`, `t_prev` (the multistep methods, whose history is
/// their own); `one_step_accessors!(in core);` from the fields of
/// `self.core` (Radau IIA's [`crate::implicit::radau_core::RadauCore`]).
macro_rules! one_step_accessors {
    (restart_keeping_step) => {
        fn restart_at_breakpoint(
            &mut self,
            p: &mut dyn $crate::problem::OdeProblem,
            t0: f64,
            y0: &[f64],
            ctx: &mut $crate::stepper::StepContext,
        ) -> Result<(), $crate::error::IntegrateError> {
            $crate::stepper::restart_keeping_step(self, |s| &mut s.st.h, p, t0, y0, ctx)
        }
    };
    (hermite) => {
        $crate::one_step::one_step_accessors!();

        /// The cubic Hermite interpolant of the last step (third order;
        /// HNW I, eq. II.6.7).
        fn interpolate(&self, t: f64, out: &mut [f64]) {
            self.st.hermite(t, out);
        }
    };
    (fields) => {
        fn t(&self) -> f64 {
            self.t
        }

        fn y(&self) -> &[f64] {
            &self.y
        }

        fn t_prev(&self) -> f64 {
            self.t_prev
        }
    };
    () => {
        $crate::one_step::one_step_accessors!(in st);
    };
    (in $state:ident) => {
        fn t(&self) -> f64 {
            self.$state.t
        }

        fn y(&self) -> &[f64] {
            &self.$state.y
        }

        fn t_prev(&self) -> f64 {
            self.$state.t_prev
        }
    };
}
pub(crate) use one_step_accessors;
