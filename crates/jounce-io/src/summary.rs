//! `summary.json`: what a run was, what it cost and how accurate it was.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::IoError;

/// Work counters of the integration (copied from the integrator's stats).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct WorkSummary {
    /// Accepted steps.
    pub steps_accepted: u64,
    /// Rejected steps.
    pub steps_rejected: u64,
    /// Right-hand-side evaluations.
    pub rhs_evaluations: u64,
    /// Jacobian evaluations.
    pub jacobian_evaluations: u64,
    /// LU factorisations.
    pub lu_factorizations: u64,
    /// Newton iterations.
    pub newton_iterations: u64,
    /// Newton convergence failures.
    pub newton_failures: u64,
    /// Events located.
    pub events: u64,
    /// Restarts of the method (events, breakpoints, re-partitioning).
    pub restarts: u64,
    /// Projections onto the constraints that kept the method's history.
    pub corrections: u64,
    /// CPU seconds of the integration alone (no output, no I/O); with
    /// `jounce run --repeat N`, the median over the N runs.
    pub cpu_seconds: f64,
    /// The integration CPU seconds of each of the N runs of `jounce run
    /// --repeat N` in one process (absent for a single run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_seconds_repeats: Vec<f64>,
    /// Wall-clock seconds of the whole run (assembly, integration, output,
    /// and an error estimate's second run when asked for).
    pub wall_seconds: f64,
}

/// The cost of the part of a run after a time t_from (`jounce run
/// --cost-from`, `settings.cost_from`): the steps that end after it, a
/// step that straddles it counted whole.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CostFromSummary {
    /// Start of the part, s.
    pub t_from: f64,
    /// Accepted steps.
    pub steps_accepted: u64,
    /// Rejected attempts.
    pub steps_rejected: u64,
    /// Newton iterations.
    pub newton_iterations: u64,
    /// Right-hand-side evaluations.
    pub rhs_evaluations: u64,
    /// Jacobian evaluations.
    pub jacobian_evaluations: u64,
    /// LU factorisations.
    pub lu_factorizations: u64,
    /// Integration CPU seconds.
    pub cpu_seconds: f64,
}

/// Accuracy figures of a run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct AccuracySummary {
    /// Whether the model conserves energy (no dampers, drivers or
    /// time-dependent forces), i.e. whether the energy error is a measure
    /// of integration error.
    pub energy_conserved_by_model: bool,
    /// max |E(t) − E(0)| / |E(0)| over the output points.
    pub max_relative_energy_error: f64,
    /// max |E(t) − E(0)| \[J\].
    pub max_energy_error: f64,
    /// max ‖Φ‖∞ over the output points.
    pub max_position_violation: f64,
    /// max ‖Φ_q v + Φ_t‖∞ over the output points.
    pub max_velocity_violation: f64,
    /// The energy account at the end (columns `work_applied`,
    /// `work_drivers`, `energy_dissipated` of `timeseries.csv`).
    #[serde(default)]
    pub energy_account: EnergyAccountSummary,
    /// max |E − E(0) − W_applied − W_drivers + D| over the output points
    /// \[J\]: integration error plus the O(Δt²) quadrature error of the
    /// output interval.
    #[serde(default)]
    pub max_energy_balance_residual: f64,
    /// The estimated global error of the run's positions and velocities,
    /// in units of the tolerance (weighted RMS norm over the coordinates
    /// and velocities with weights atol + rtol·|y|, the largest over the
    /// output times; 1 = the tolerance), when the run asked for an estimate
    /// (`settings.checks.error_estimate`, `jounce run --error-estimate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_global_error: Option<f64>,
    /// How that estimate was obtained and what it cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_estimate: Option<ErrorEstimateSummary>,
}

/// A global error estimate by a second run of the same model
/// (`accuracy.error_estimate` of `summary.json`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ErrorEstimateSummary {
    /// How: `"reintegration"` (adaptive: rtol and atol divided by
    /// `tolerance_factor`) or `"richardson"` (fixed step: h/2).
    pub method: String,
    /// The estimated global error in units of the tolerance (as
    /// `accuracy.estimated_global_error`); `None` when the second run
    /// failed or broke down (its `error` says why).
    pub estimated_global_error: Option<f64>,
    /// The estimated largest absolute error of a coordinate or velocity
    /// \[m, rad, m/s, rad/s\] over the output times.
    pub estimated_absolute_error: Option<f64>,
    /// The output time of the largest scaled error \[s\].
    pub at_time: Option<f64>,
    /// The ratio r of the second run's error to the run's, assumed:
    /// ρ^(−p/(p+1)) for reintegration, 2^(−p) for Richardson (p = the
    /// method's order); the estimate is the difference / (1 − r).
    pub error_ratio: f64,
    /// Tolerance divisor ρ of the second run (1 for a fixed step).
    pub tolerance_factor: f64,
    /// The second run's rtol, atol and fixed step.
    pub reference_rtol: f64,
    /// The second run's atol.
    pub reference_atol: f64,
    /// The second run's fixed step \[s\], if any.
    pub reference_step: Option<f64>,
    /// Output times compared.
    pub rows_compared: u64,
    /// The second run's accepted steps.
    pub reference_steps_accepted: u64,
    /// The second run's right-hand-side evaluations.
    pub reference_rhs_evaluations: u64,
    /// The second run's integration CPU seconds (not in `work.cpu_seconds`).
    pub reference_cpu_seconds: f64,
    /// Why there is no estimate: the second run's error.
    pub error: Option<String>,
}

/// Where the energy went, at the end of a run \[J\].
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct EnergyAccountSummary {
    /// Work of point forces, torques and actuators.
    pub work_applied: f64,
    /// Work of the drivers (λᵀΦ_t).
    pub work_drivers: f64,
    /// Energy dissipated by dampers, contact damping, friction and impacts.
    pub dissipated: f64,
}

/// The integrator as configured.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct IntegratorSummary {
    /// Method name.
    pub method: String,
    /// Relative tolerance.
    pub rtol: f64,
    /// Absolute tolerance.
    pub atol: f64,
    /// Fixed step, if any.
    pub step: Option<f64>,
    /// Initial step, if given.
    pub h0: Option<f64>,
    /// Smallest allowed step.
    pub h_min: f64,
    /// Largest allowed step (`null` when unbounded).
    pub h_max: Option<f64>,
    /// Step budget.
    pub max_steps: u64,
    /// Step-size controller ("elementary", "pi").
    pub controller: String,
    /// Error per "step" or per "unit_step".
    pub error_per: String,
    /// Method parameters.
    pub params: BTreeMap<String, f64>,
}

/// The formulation as configured.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FormulationSummary {
    /// Formulation name.
    pub name: String,
    /// Parameters that apply to it (Baumgarte α, β; penalty factor, ω, ξ).
    pub params: BTreeMap<String, f64>,
}

/// Everything `summary.json` holds.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RunSummary {
    /// jounce version.
    pub jounce_version: String,
    /// Model name.
    pub model: String,
    /// Model file.
    pub model_file: String,
    /// Formulation.
    pub formulation: FormulationSummary,
    /// Integrator.
    pub integrator: IntegratorSummary,
    /// Degrees of freedom found by assembly.
    pub degrees_of_freedom: usize,
    /// Coordinates.
    pub coordinates: usize,
    /// Constraint equations.
    pub constraints: usize,
    /// Requested end time \[s\].
    pub t_end: f64,
    /// Time reached \[s\].
    pub t_reached: f64,
    /// "completed" or "failed".
    pub status: String,
    /// The error, if the run failed.
    pub error: Option<String>,
    /// Output rows written.
    pub output_rows: u64,
    /// Work.
    pub work: WorkSummary,
    /// Work after `settings.cost_from`, when asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_from: Option<CostFromSummary>,
    /// Explanations of what made the run slow or inaccurate (e.g. stiffness
    /// detected by an explicit method).
    pub diagnostics: Vec<String>,
    /// Labels of the redundant constraint rows, whose multipliers are not
    /// unique (the `lambda` columns hold the minimum-norm ones over all
    /// rows); empty when the model has none.
    #[serde(default)]
    pub non_unique_reactions: Vec<String>,
    /// Accuracy.
    pub accuracy: AccuracySummary,
}

impl RunSummary {
    /// Write as pretty JSON.
    ///
    /// # Errors
    /// [`IoError`] naming the file.
    pub fn write_json(&self, path: &Path) -> Result<(), IoError> {
        let text =
            serde_json::to_string_pretty(self).map_err(|e| IoError::msg(path, e.to_string()))?;
        std::fs::write(path, text + "\n").map_err(|e| IoError::new(path, e))
    }
}
