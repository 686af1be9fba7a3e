//! # jounce-studies: the seed studies of studies.md
//!
//! S1..S8 as tables, run on the `jounce` library's API. What every study
//! shares: [`judge`] decides a seed's "cheaper" findings with a margin
//! beyond the measured scatter, [`style`] gives every curve of a chart its
//! own colour and dash pattern. [`registry::run_study`] runs one by its
//! name, for the command line and for Python alike.

pub mod judge;
pub mod registry;
pub mod study;
pub mod study_s2;
pub mod study_s3;
pub mod study_s4;
pub mod study_s5;
pub mod study_s6;
pub mod study_s7;
pub mod study_s8;
pub mod style;
