//! # jounce-analysis: what a run cost and how accurate it was
//!
//! Owns diagnostics computed from a mechanical system's state: energy and
//! constraint-violation monitors ([`InvariantMonitor`],
//! [`InvariantExtremes`]). Must not integrate or write files.

pub mod invariants;

pub use invariants::{InvariantExtremes, InvariantMonitor, Invariants};
