//! The integration tests of the mechanics, one module per concern, in one
//! test binary. Each file of `tests/` used to be a binary of its own, each
//! linked against the whole workspace and run one after the other; one
//! binary is linked once and runs all its tests in one pool.

mod common;

mod assembly;
mod assembly_props;
mod energy;
mod jacobians;
mod joint_coordinates;
mod redundant_rows;
