//! The integration tests of the model reader, one module per concern, in
//! one test binary. Each file of `tests/` used to be a binary of its own,
//! each linked against the whole workspace and run one after the other; one
//! binary is linked once and runs all its tests in one pool.

mod docs_example;
mod formulation_kind;
mod malformed;
mod no_panic;
mod parse_example;
mod time_function_props;
mod time_functions;
mod time_functions_at_size;
