//! # jounce-model: the declarative model a user writes
//!
//! Owns the model file format (TOML, SI units; see `docs/model-format.md`),
//! its validation, and the validated [`Model`] handed to the mechanics
//! layer. Errors name the file, the line and the element. Must not evaluate
//! dynamics.
//!
//! Entry points: [`load_file`] and [`from_str`], both returning
//! `Result<Model, ModelError>`.

mod breakpoints;
mod connections;
pub mod error;
mod forces;
mod functions;
mod parse;
mod reader;
mod settings;
pub mod table;
pub mod time_function;
pub mod types;

pub use error::{Location, ModelError};
pub use parse::{from_str, load_file, GROUND};
pub use table::{Interpolation, Table, TableError};
pub use time_function::TimeFunction;
pub use types::*;
