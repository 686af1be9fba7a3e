//! # jounce-io: files in and out
//!
//! Owns result files: the streaming time-series CSV
//! ([`TimeseriesWriter`]) and the run summary ([`RunSummary`] →
//! `summary.json`). Model files are read by `jounce-model`. Must not
//! compute dynamics.

pub mod error;
pub mod summary;
pub mod timeseries;

pub use error::IoError;
pub use summary::{
    AccuracySummary, CostFromSummary, EnergyAccountSummary, ErrorEstimateSummary,
    FormulationSummary, IntegratorSummary, RunSummary, WorkSummary,
};
pub use timeseries::{header_line, row_line, TimeseriesWriter};
