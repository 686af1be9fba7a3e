//! # jounce-integrate: time integrators, verified
//!
//! A library of integration methods for first-order systems y' = f(t, y) and
//! second-order systems M(q) q'' = f(t, q, q'), independent of multibody
//! dynamics: nothing here knows about bodies, joints or constraints.
//!
//! The principal types:
//! - [`OdeProblem`], [`SecondOrderProblem`]: what a method may ask of a problem.
//! - [`Stepper`]: one method; takes one accepted step at a time.
//! - [`solve()`]: the shared driver (output by dense output, events and
//!   their state changes, breakpoints, post-step corrections, counting,
//!   CPU timing).
//! - [`step_loop`]: the accept/reject loop of one step, shared by the
//!   methods that supply only their trial step ([`step_loop::StepAttempt`]),
//!   with the crossing of unannounced discontinuities ([`discontinuity`]).
//! - [`StepController`]: step-size control, shared by all adaptive methods.
//! - [`method`]: the registry of every method by name, with its facts.
//! - [`ButcherTableau`] and the other coefficient sets: methods as data.
//!
//! ```text
//!  problem ──► Stepper::step ──► solve() ──► Observer (output, events, steps)
//!                 ▲                  │
//!                 └─ StepController, wrms_norm, newton, dense output
//! ```

pub mod autodiff;
pub mod constrained;
pub mod controller;
pub mod cputime;
pub mod dae;
pub mod dense;
pub(crate) mod dense_lu;
pub mod discontinuity;
pub mod error;
pub mod explicit;
pub mod exponential;
pub mod first_order_form;
pub mod global_error;
pub mod implicit;
pub mod initial_step;
pub mod jacobian;
pub(crate) mod matmul;
pub mod method;
pub mod multistep;
pub mod newton;
pub mod norm;
pub(crate) mod one_step;
pub mod options;
pub mod overdetermined;
pub mod problem;
pub mod reference_problems;
pub mod solve;
// the sparse LU lives in jounce-sparse; its old path is kept
pub use jounce_sparse::sparse_lu;
pub mod stats;
pub mod step_loop;
pub mod stepper;
pub mod structural;
/// Test fixtures (reference problems, convergence-order helpers): compiled
/// for this crate's tests and, with the `testkit` feature, for the other
/// crates' tests; not part of the library's API.
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;

pub use nalgebra;

pub use autodiff::{AdScalar, AutoDiff, AutoDiffRhs};
pub use constrained::{ConstrainedSecondOrderProblem, Unconstrained};
pub use controller::{ControllerKind, ErrorPer, StepController};
pub use dae::{ConstrainedDae, DaeForm, DaeProblem};
pub use error::{EvalError, IntegrateError};
pub use explicit::ButcherTableau;
pub use first_order_form::FirstOrderForm;
pub use options::{MethodParams, OutputGrid, SolverOptions};
pub use problem::{
    EventAction, EventDirection, EventSpec, OdeProblem, OverdeterminedProblem, ProblemForm,
    SecondOrderProblem, StepFix,
};
pub use solve::{solve, Discard, Observer, Recorder, SolveFailure, Solved, StepRecord};
pub use stats::Stats;
pub use stepper::{StepContext, Stepper};
