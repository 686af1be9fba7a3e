//! The integration tests of the integrators, one module per concern, in one
//! test binary. Each file of `tests/` used to be a binary of its own, each
//! linked against the whole workspace and run one after the other; one
//! binary is linked once and runs all its tests in one pool.

mod counting_alloc;

mod adaptive_accuracy;
mod adaptive_robustness;
mod autodiff;
mod bdf_stability_limit;
mod dae_bdf;
mod dae_radau;
mod events_bouncing_ball;
mod explicit_cash_karp_vo;
mod explicit_energy_dissipation;
mod explicit_order;
mod explicit_rk;
mod explicit_tableaux;
mod exponential_llm;
mod global_error;
mod implicit_adaptive;
mod implicit_energy;
mod implicit_order;
mod implicit_stability;
mod implicit_tableaux;
mod multistep_adaptive;
mod multistep_coeffs;
mod multistep_discontinuity;
mod multistep_order;
mod multistep_stiff;
mod non_finite_state;
mod odae_bdf;
mod projection_hook;
mod registry_order;
mod registry_stability;
mod stability_explicit;
mod step_force_oscillator;
mod stiff_problems;
mod structural_family;
mod structural_index3;
