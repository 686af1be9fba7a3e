//! The integration tests of the formulations, one module per concern, in
//! one test binary. Each file of `tests/` used to be a binary of its own,
//! each linked against the whole workspace and run one after the other; one
//! binary is linked once and runs all its tests in one pool.

mod chain;
mod common;
mod counting_alloc;

mod agreement;
mod drift;
mod exact_jacobians;
mod factory_and_errors;
mod independent_rows;
mod joint;
mod llm_constrained;
mod no_alloc;
mod order;
mod penalty;
mod repartition;
mod second_order;
mod sparse_dae;
mod sparse_iteration;
mod sparse_kkt;
mod sparse_partitioning;
mod sparse_penalty;
mod state_space;
