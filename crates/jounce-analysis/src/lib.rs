//! # jounce-analysis: what a run cost and how accurate it was
//!
//! Owns diagnostics computed from a mechanical system's state: energy and
//! constraint-violation monitors ([`InvariantMonitor`],
//! [`InvariantExtremes`]) and the stability of a fixed step on the
//! linearisation at the start ([`step_stability`]). Must not integrate or
//! write files.

pub mod invariants;
pub mod step_stability;

pub use invariants::{InvariantExtremes, InvariantMonitor, Invariants};
pub use step_stability::{fixed_step_stability, linearised_eigenvalues, StepStability};
