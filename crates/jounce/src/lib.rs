//! # jounce: planar multibody dynamics, end to end
//!
//! The pipeline model → system → formulation → integrator → results, as a
//! library for the `jounce` command and for tests:
//! - [`run::run_model`]: a whole run, writing `timeseries.csv` and `summary.json`;
//! - [`compare::compare`]: one model with several methods × formulations, in parallel;
//! - [`check::check_model`]: validation, assembly, DOF and redundancy;
//! - [`methods_table`]: the integrator registry as a table;
//! - [`study`]: the seed studies of studies.md as tables;
//! - [`static_cmd`]: the static equilibrium and its state file;
//! - [`modes`]: linearised modes and the integrator they call for.
//! - [`plot`]: SVG charts of runs ([`series`] reads their CSV files back).

pub mod animate;
pub mod bench;
pub mod check;
pub mod compare;
pub mod error;
pub mod methods_table;
pub mod modes;
pub mod observer;
pub mod plot;
pub mod redundancy;
pub mod run;
pub mod series;
pub mod setup;
pub mod static_cmd;
pub mod sweep;
pub mod trust;
pub mod validate;
pub mod warnings;

pub use error::RunError;
