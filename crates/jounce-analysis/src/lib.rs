//! # jounce-analysis: what a run cost and how accurate it was
//!
//! Owns diagnostics computed from a mechanical system's state: energy and
//! constraint-violation monitors ([`InvariantMonitor`],
//! [`InvariantExtremes`]) and the stability of a fixed step on the
//! linearisation at the start ([`step_stability`]), singular
//! configurations, branch switches and lock-up during a run
//! ([`SingularityMonitor`]), static equilibrium ([`static_equilibrium()`]),
//! linearised modes in independent coordinates ([`linearised_modes`];
//! for large models the lowest and the fastest by sparse shift-invert
//! Arnoldi, [`sparse_modes`]; for positions in unit quaternions in the
//! tangent space of the configurations, [`tangent_modes()`]) and
//! the integrator they call for ([`recommend`]), and the period elongation
//! and amplitude decay of structural integrators ([`period_error`]). Must not integrate or
//! write files.

pub mod body_turn;
pub mod energy_balance;
pub mod invariants;
pub mod modes;
pub mod period_error;
pub mod recommendation;
pub mod singular_configuration;
mod sparse_kkt;
pub mod static_equilibrium;
pub mod step_stability;
pub mod tangent_modes;

pub use body_turn::BodyTurn;
pub use energy_balance::{EnergyAccount, EnergyBalance};
pub use invariants::{InvariantExtremes, InvariantMonitor, Invariants};
pub use modes::{
    linearised_modes, modes_refusal, sparse_modes, sparse_modes_labelled, Mode, ModeAnalysis,
    ModeKind, ModesError,
};
pub use period_error::PeriodError;
pub use recommendation::{recommend, ExplicitLimit, Recommendation};
pub use singular_configuration::{BranchSwitch, Passage, SingularityMonitor, Stall};
pub use static_equilibrium::{
    static_equilibrium, static_equilibrium_using, StaticEquilibrium, StaticError, MAX_DENSE_ORDER,
    SPARSE_FROM_ORDER,
};
pub use step_stability::{
    eigenvalues_of, fixed_step_stability, linearised_eigenvalues, linearised_jacobian,
    StepStability, MAX_DIMENSION,
};
pub use tangent_modes::tangent_modes;
