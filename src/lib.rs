//! # jounce: planar multibody dynamics, end to end
//!
//! The pipeline model → system → formulation → integrator → results, as a
//! library for the `jounce` command and for tests.

pub mod methods_table;
