//! # jounce-analysis: what a run cost and how accurate it was
//!
//! Owns diagnostics computed from a mechanical system's state: energy and
//! constraint-violation monitors ([`InvariantMonitor`],
//! [`InvariantExtremes`]) and the stability of a fixed step on the
//! linearisation at the start ([`step_stability`]), singular
//! configurations, branch switches and lock-up during a run
//! ([`SingularityMonitor`]). Must not integrate or
//! write files.

pub mod invariants;
pub mod singular_configuration;
pub mod step_stability;

pub use invariants::{InvariantExtremes, InvariantMonitor, Invariants};
pub use singular_configuration::{BranchSwitch, Passage, SingularityMonitor};
pub use step_stability::{fixed_step_stability, linearised_eigenvalues, StepStability};
