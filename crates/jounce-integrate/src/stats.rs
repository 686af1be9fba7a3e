//! Work counters of one integration, named as in the Fortran codes
//! (dopri5.f / radau5.f) so that results can be compared directly.

use serde::Serialize;

/// Work counters. Methods increment the ones they use; the driver
/// ([`crate::solve()`]) adds the first-order `n_rhs` and `n_jac` counted by its wrapper
/// and measures `cpu_seconds`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Stats {
    /// Accepted steps.
    pub n_accept: u64,
    /// Rejected steps (error test or Newton failure).
    pub n_reject: u64,
    /// Right-hand-side (f) evaluations, including those for finite-difference Jacobians.
    pub n_rhs: u64,
    /// Jacobian evaluations.
    pub n_jac: u64,
    /// Factorisations of iteration matrices: LU, or LDLᵀ where the
    /// augmented Lagrangian's sparse matrices are symmetric positive
    /// definite ([`jounce_sparse::LdltOrLu`]).
    pub n_lu: u64,
    /// Linear solves with an existing factorisation.
    pub n_solve: u64,
    /// Newton iterations.
    pub n_newton_iter: u64,
    /// Newton convergence failures.
    pub n_newton_fail: u64,
    /// Newton iterations accepted after they stalled at round-off with an
    /// increment far inside the error test
    /// ([`crate::implicit::radau_core`]'s `stalled_at_round_off`): a sign
    /// that the tolerance is close to what double precision resolves.
    pub n_newton_stalled: u64,
    /// Events located.
    pub n_events: u64,
    /// Restarts (after events, breakpoints, re-partitioning).
    pub n_restart: u64,
    /// Small corrections of the state by the problem that kept the
    /// method's history (projections onto the constraints).
    pub n_corrections: u64,
    /// First time at which an explicit method's stiffness test fired
    /// (Hairer's h·ρ test in dopri5.f / dop853.f): a sign that an implicit
    /// method would be cheaper.
    pub stiffness_detected_at: Option<f64>,
    /// Steps (accepted and rejected) taken when the stiffness test first
    /// fired, with [`Stats::stiffness_detected_at`]: the pace of the run
    /// after it is what [`crate::step_loop::stiff_budget_forecast`] judges.
    pub steps_at_stiffness_detection: u64,
    /// Sum over the accepted steps of the local error estimate's norm in
    /// units of the tolerance (1 = at the tolerance), from adaptive methods
    /// that report it (the structural family): with per-step error
    /// control the global error grows with the number of steps, and this
    /// sum is what it reaches, in units of the tolerance, when errors
    /// neither grow nor decay along the solution (an a-posteriori check
    /// that a run can compare with its request).
    pub accumulated_error: f64,
    /// CPU seconds spent in the integration alone (not in output).
    pub cpu_seconds: f64,
}

impl Stats {
    /// Total steps attempted.
    pub fn n_steps(&self) -> u64 {
        self.n_accept + self.n_reject
    }
}
