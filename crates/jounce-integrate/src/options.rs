//! Options of one integration run, shared by every method.

use std::collections::BTreeMap;

use crate::controller::{ControllerKind, ErrorPer};

/// Named numeric parameters of a method (Newmark `beta`/`gamma`, HHT
/// `alpha`, generalized-α `rho_inf`, Wilson `theta`, SDIRK `alpha`,
/// fixed `order` of a multistep method, ...). Unknown names are rejected
/// by the method's builder.
pub type MethodParams = BTreeMap<String, f64>;

/// When the driver reports the solution to the observer.
#[derive(Clone, Debug, PartialEq)]
pub enum OutputGrid {
    /// At every accepted step.
    Steps,
    /// At t0, t0 + dt, t0 + 2 dt, ... and t_end, by dense output.
    Every(f64),
}

/// Options of one integration.
#[derive(Clone, Debug, PartialEq)]
pub struct SolverOptions {
    /// Relative tolerance.
    pub rtol: f64,
    /// Absolute tolerance.
    pub atol: f64,
    /// Fixed step size (fixed-step methods, or adaptive methods with control switched off).
    pub fixed_step: Option<f64>,
    /// Initial step size; chosen automatically when `None` (Hairer's algorithm).
    pub h0: Option<f64>,
    /// Smallest step size before a step-size underflow is reported; 0
    /// (the default, as CVODE's hmin): the smallest step the arithmetic
    /// resolves at t, where a step that still fails the error test is
    /// taken across a discontinuity ([`crate::discontinuity`]).
    pub h_min: f64,
    /// Largest step size.
    pub h_max: f64,
    /// Maximum number of attempted steps.
    pub max_steps: u64,
    /// Step-size control law.
    pub controller: ControllerKind,
    /// Error per step or per unit step.
    pub error_per: ErrorPer,
    /// When to report output.
    pub output: OutputGrid,
    /// Method parameters.
    pub params: MethodParams,
    /// Times at which the driver ends a step exactly and restarts the
    /// method (as CVODE's `CVodeSetStopTime` followed by `CVodeReInit`),
    /// in addition to the problem's own [`crate::OdeProblem::breakpoints`]:
    /// the jumps of the forcing of a model. Any order; empty by default.
    pub breakpoints: Vec<f64>,
    /// Stop and restart at the breakpoints (those of the problem and
    /// [`SolverOptions::breakpoints`]); `false` steps across them, leaving
    /// the jumps to the error test ("naive" use, to compare). Default `true`.
    pub stop_at_breakpoints: bool,
    /// Stop with [`crate::IntegrateError::ProbablyStiff`] as soon as an
    /// explicit method's stiffness test fires. Off by default: detection is
    /// then recorded in [`crate::Stats::stiffness_detected_at`] and the run
    /// goes on (as dopri5.f does), failing only when `max_steps` runs out.
    pub stop_when_stiff: bool,
}

impl Default for SolverOptions {
    fn default() -> Self {
        Self {
            rtol: 1e-6,
            atol: 1e-8,
            fixed_step: None,
            h0: None,
            h_min: 0.0,
            h_max: f64::INFINITY,
            max_steps: 1_000_000,
            controller: ControllerKind::Elementary,
            error_per: ErrorPer::Step,
            output: OutputGrid::Steps,
            params: MethodParams::new(),
            breakpoints: Vec::new(),
            stop_at_breakpoints: true,
            stop_when_stiff: false,
        }
    }
}

impl SolverOptions {
    /// Tolerances rtol, atol.
    pub fn with_tol(mut self, rtol: f64, atol: f64) -> Self {
        self.rtol = rtol;
        self.atol = atol;
        self
    }
    /// A fixed step size.
    pub fn with_fixed_step(mut self, h: f64) -> Self {
        self.fixed_step = Some(h);
        self
    }
    /// A method parameter.
    pub fn with_param(mut self, name: &str, value: f64) -> Self {
        self.params.insert(name.to_string(), value);
        self
    }
    /// Parameter `name`, or `default` when absent.
    pub fn param(&self, name: &str, default: f64) -> f64 {
        self.params.get(name).copied().unwrap_or(default)
    }
}
