//! # jounce-model: the declarative model a user writes
//!
//! Owns the model file format (TOML, SI units), its validation, and the
//! validated [`Model`] handed to the mechanics layer. Errors name the file,
//! the line and the element. Must not evaluate dynamics.

pub mod time_function;
pub mod types;

pub use time_function::TimeFunction;
pub use types::*;
