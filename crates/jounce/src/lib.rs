//! # jounce: planar multibody dynamics, end to end
//!
//! The pipeline model → system → formulation → integrator → results, as a
//! library. The `jounce` command, the studies (`jounce-studies`) and the
//! tests are front ends on it: they call the same [`Simulation::run`] and
//! differ only in what they do with its result.
//!
//! - [`Simulation`]: a model from a file, a TOML string or a
//!   [`jounce_model::Model`]; [`Simulation::run`] with typed [`RunOptions`]
//!   returns a [`RunResult`] in memory (the time series, the summary, the
//!   diagnostics, the energy account, the step history) or a [`RunFailure`]
//!   with the partial result; [`Simulation::run_streaming`] streams the rows
//!   to any [`RowSink`] ([`sink::CsvSink`] for any [`std::io::Write`]) and
//!   [`Simulation::run_to_dir`] writes `timeseries.csv` and `summary.json`
//!   as `jounce run` does;
//! - the analyses, each returning data: [`Simulation::check`]
//!   ([`check::check_model`]), [`Simulation::static_state`]
//!   ([`static_cmd`]), [`Simulation::modes`] ([`modes`]),
//!   [`Simulation::compare`] ([`compare::compare`]), [`Simulation::bench`]
//!   ([`bench::bench`]) and [`sweep::sweep`] (a parameter of a model file);
//! - [`methods_table`]: the integrator registry as a table;
//! - [`plot`], [`animate`] ([`animate_spatial`] in 3-D): SVG charts and
//!   HTML animations of runs
//!   ([`series`] reads their CSV files back).
//!
//! The library never prints: text for people is returned as strings
//! ([`run::summary_text`], [`compare::table_text`], ...).
//!
//! # Example
//!
//! The shipped slider-crank, its crank driven at one revolution per
//! second: after two seconds the slider is back at x = r + l = 0.4 m.
//!
//! ```
//! use jounce::{RunOptions, Simulation};
//!
//! let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/slider_crank.toml");
//! let sim = Simulation::from_file(file)?;
//! let result = sim.run(&RunOptions::default())?;
//!
//! assert!(result.completed());
//! assert_eq!(result.summary.t_reached, 2.0);
//! assert_eq!(result.series.len() as u64, result.summary.output_rows);
//! let x = result.series.column("slider.x").expect("a slider.x column");
//! assert!((x[x.len() - 1] - 0.4).abs() < 1e-6, "slider at {}", x[x.len() - 1]);
//! assert!(result.summary.accuracy.max_position_violation < 1e-8);
//! // the drive torque's work is all the energy the mechanism gains
//! assert!(result.max_energy_balance_residual() < 1e-6);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Options are typed; a failed run keeps what it computed:
//!
//! ```
//! use jounce::{RunOptions, Simulation};
//! use jounce_model::FormulationKind;
//!
//! let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/slider_crank.toml");
//! let sim = Simulation::from_file(file)?;
//! let options = RunOptions {
//!     method: Some("radau5".into()),
//!     formulation: Some(FormulationKind::Index3),
//!     max_steps: Some(5),
//!     ..RunOptions::default()
//! };
//! let failure = sim.run(&options).unwrap_err();
//! assert_eq!(failure.partial.summary.status, "failed");
//! assert!(failure.partial.summary.t_reached < 2.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod animate;
pub mod animate_spatial;
pub mod beam_strain;
pub mod bench;
pub mod check;
pub mod compare;
pub mod error;
pub mod error_estimate;
pub mod interrupt;
pub mod methods_table;
pub mod modes;
pub mod observer;
pub mod penetration;
pub mod plot;
pub mod redundancy;
pub mod run;
pub mod series;
pub mod setup;
pub mod simulation;
pub mod sink;
mod spatial_check;
mod spatial_modes;
mod spatial_run;
pub mod static_cmd;
pub mod sweep;
pub mod trust;
pub mod validate;
pub mod warnings;

pub use error::RunError;
/// The summary of a run (summary.json), as the front ends report it.
pub use jounce_io::RunSummary;
pub use simulation::{RunFailure, RunOptions, RunResult, Simulation, Start};
pub use sink::{RowSink, TimeSeries};

/// The formulations, one line each (name and description), from
/// [`jounce_model::FormulationKind::ALL`]: the help of `--formulation`.
pub use jounce_formulation::help as formulation_help;
/// The integrators, from the method registry: the help of `--method`.
pub use jounce_integrate::method::help as method_help;
