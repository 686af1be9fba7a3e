//! The integration tests of the run pipeline, the CLI, the examples and the
//! studies, one module per concern, in one test binary. Each file of
//! `tests/` used to be a binary of its own, each linked against the whole
//! workspace and run one after the other; one binary is linked once and
//! runs all its tests in one pool.

mod mutation;
mod support;

mod al_tangent_reuse;
mod animation;
mod arm_inverse_dynamics;
mod augmented_lagrangian;
mod bdf_tolerance;
mod beam;
mod bench;
mod branch_switch_chain;
mod breakpoints;
mod cli;
mod compare;
mod contacts;
mod conventions;
mod dae_convergence;
mod dae_formulations_agree;
mod double_wishbone;
mod energy_account;
mod error_estimate;
mod every_method;
mod examples;
mod formulation_names;
mod formulations_agree;
mod friction;
mod fuzz_parser_check;
mod joint_coordinates;
mod large_chain;
mod library_cli_agree;
mod modes;
mod mutation_campaign;
mod odae;
mod pinocchio_aba;
mod plot;
mod redundancy_capabilities;
mod redundancy_mutations;
mod redundant_constraints;
mod s1_index3;
mod s3;
mod scale;
mod singular_configurations;
mod spatial_animation;
mod spatial_chain;
mod spatial_contacts;
mod spatial_error_estimate;
mod spatial_examples;
mod spatial_forms;
mod spatial_formulations;
mod spatial_free_joint;
mod spatial_joint_coordinates;
mod spatial_modes;
mod spatial_penetration;
mod spatial_redundant;
mod spatial_singular;
mod spatial_static;
mod spatial_static_at_size;
mod spatial_stick_slip;
mod step_history;
mod structural_correctness;
mod studies_physics;
mod study_s2;
mod study_s5;
mod study_s6;
mod study_s7;
mod study_s8;
mod sweep;
mod trustworthy_output;
mod urdf;
