//! The run's observer: turns integrator output into physical rows (q, v,
//! energies, constraint violations, multipliers), streams them to
//! a [`RowSink`] (`timeseries.csv`, memory), tracks invariant extremes and
//! tells the [`Progress`].

use std::time::Instant;

use jounce_analysis::{EnergyBalance, InvariantExtremes, InvariantMonitor};
use jounce_formulation::Formulation;
use jounce_integrate::{EvalError, Observer, Stats, StepRecord};
use jounce_mechanics::{MechanicalSystem, SystemQueries};

use crate::sink::{Progress, RowSink};

/// Column names of `timeseries.csv` for a system.
/// (Velocities named after the coordinates: `x` → `vx`, `theta` →
/// `omega`.)
pub fn timeseries_header(sys: &dyn MechanicalSystem) -> Vec<String> {
    let velocities: Vec<String> = (0..sys.nv())
        .map(|i| velocity_label(&sys.coordinate_label(i)))
        .collect();
    timeseries_header_with_velocities(sys, &velocities)
}

/// Column names of `timeseries.csv` with the velocities named by
/// `velocities` (len n_v): for systems whose velocities are not the rates
/// of their positions (spatial bodies: ω for a quaternion).
pub fn timeseries_header_with_velocities(
    sys: &dyn MechanicalSystem,
    velocities: &[String],
) -> Vec<String> {
    let mut h = vec!["t".to_string()];
    for i in 0..sys.nq() {
        h.push(sys.coordinate_label(i));
    }
    h.extend(velocities.iter().cloned());
    for s in [
        "kinetic_energy",
        "potential_energy",
        "total_energy",
        "position_violation",
        "velocity_violation",
    ] {
        h.push(s.to_string());
    }
    for r in 0..sys.nc() {
        h.push(format!("lambda[{}]", sys.constraint_label(r)));
    }
    for i in 0..sys.n_switching_functions() {
        let name = sys.switching_label(i);
        let [value, force] = sys.switching_quantities(i);
        h.push(format!("{name}.{value}"));
        h.push(format!("{name}.{force}"));
    }
    for i in 0..sys.n_friction_rows() {
        let name = sys.friction_label(i);
        h.push(format!("{name}.friction_force"));
        h.push(format!("{name}.sliding_velocity"));
    }
    for s in ENERGY_ACCOUNT_COLUMNS {
        h.push(s.to_string());
    }
    h
}

/// The energy account's columns ([`jounce_analysis::EnergyBalance`]), at
/// the end of each row: work of the applied loads and of the drivers,
/// energy dissipated, and the balance residual
/// E − E(0) − W_applied − W_drivers + D, all in J.
pub const ENERGY_ACCOUNT_COLUMNS: [&str; 4] = [
    "work_applied",
    "work_drivers",
    "energy_dissipated",
    "energy_balance_residual",
];

/// `crank.x` → `crank.vx`, `crank.theta` → `crank.omega`; otherwise `d(label)/dt`.
fn velocity_label(coord: &str) -> String {
    match coord.rsplit_once('.') {
        Some((body, "x")) => format!("{body}.vx"),
        Some((body, "y")) => format!("{body}.vy"),
        Some((body, "theta")) => format!("{body}.omega"),
        _ => format!("d({coord})/dt"),
    }
}

/// Columns of `steps.csv`, one row per accepted step: its end time and
/// size, the method's local error estimate in units of the tolerance (NaN
/// when it reports none), the Newton iterations, rejected attempts,
/// right-hand-side evaluations, Jacobians and LU factorisations it took
/// (its rejected attempts included), and the cumulative CPU time of the
/// integration.
pub const STEPS_HEADER: [&str; 9] = [
    "t",
    "h",
    "error_estimate",
    "newton_iterations",
    "rejected_attempts",
    "rhs_evaluations",
    "jacobian_evaluations",
    "lu_factorizations",
    "cpu_seconds",
];

/// What the steps ending after `t_from` cost: the part of a run a user
/// asks about (`jounce run --cost-from T`; studies.md S3 reports the
/// discontinuous part t in [2, 4]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SubintervalCost {
    /// Start of the sub-interval.
    pub t_from: f64,
    /// Steps accepted, attempts rejected and Newton iterations in it.
    pub steps: u64,
    /// Attempts rejected in it.
    pub rejected: u64,
    /// Newton iterations in it.
    pub newton_iterations: u64,
    /// Right-hand-side evaluations in it.
    pub rhs_evaluations: u64,
    /// Jacobian evaluations in it.
    pub jacobian_evaluations: u64,
    /// LU factorisations in it.
    pub lu_factorizations: u64,
    /// Integration CPU seconds in it.
    pub cpu_seconds: f64,
    cpu_at_start: Option<f64>,
    cpu_last: f64,
}

impl SubintervalCost {
    /// The cost from `t_from` on, nothing counted yet.
    pub fn new(t_from: f64) -> Self {
        Self {
            t_from,
            ..Self::default()
        }
    }

    /// Count an accepted step if it ends after `t_from` (a step that
    /// straddles it counts whole).
    pub fn add(&mut self, r: &StepRecord) {
        if r.t > self.t_from {
            let start = *self.cpu_at_start.get_or_insert(self.cpu_last);
            self.steps += 1;
            self.rejected += r.rejected;
            self.newton_iterations += r.newton_iterations;
            self.rhs_evaluations += r.rhs_evaluations;
            self.jacobian_evaluations += r.jacobian_evaluations;
            self.lu_factorizations += r.lu_factorizations;
            self.cpu_seconds = r.cpu_seconds - start;
        }
        self.cpu_last = r.cpu_seconds;
    }

    /// One line for the summary's diagnostics.
    pub fn describe(&self) -> String {
        format!(
            "cost from t = {} s: {} steps accepted, {} rejected, {} Newton iterations, {} \
             f-evaluations, {} Jacobians, {} LU, {:.4} s CPU",
            self.t_from,
            self.steps,
            self.rejected,
            self.newton_iterations,
            self.rhs_evaluations,
            self.jacobian_evaluations,
            self.lu_factorizations,
            self.cpu_seconds
        )
    }

    /// The `cost_from` block of `summary.json`.
    pub fn summary(&self) -> jounce_io::CostFromSummary {
        jounce_io::CostFromSummary {
            t_from: self.t_from,
            steps_accepted: self.steps,
            steps_rejected: self.rejected,
            newton_iterations: self.newton_iterations,
            rhs_evaluations: self.rhs_evaluations,
            jacobian_evaluations: self.jacobian_evaluations,
            lu_factorizations: self.lu_factorizations,
            cpu_seconds: self.cpu_seconds,
        }
    }
}

/// Streams physical output rows of a run.
pub struct RunObserver<'a> {
    sys: &'a dyn MechanicalSystem,
    writer: &'a mut dyn RowSink,
    monitor: InvariantMonitor,
    /// Extremes of energy and constraint violation.
    pub extremes: InvariantExtremes,
    /// The energy account at the output rows.
    pub energy: EnergyBalance,
    /// Integrate the account's powers along the solution (models that do
    /// not conserve energy; for the others it is E − E(0) alone).
    pub energy_per_step: bool,
    q: Vec<f64>,
    v: Vec<f64>,
    lambda: Vec<f64>,
    /// Friction forces (nf) then a J_f row's scratch (n) at an output.
    friction: Vec<f64>,
    row: Vec<f64>,
    /// Last output time.
    pub t_last: f64,
    progress: Option<&'a mut dyn Progress>,
    /// Position (per mille of t_end) the progress bar shows.
    progress_at: u64,
    t_end: f64,
    started: Instant,
    /// The checks on the solution (blow-up, drift), if any.
    pub checks: Option<crate::trust::SolutionChecks>,
    /// Whether the run was stopped by [`crate::interrupt::request_stop`].
    pub interrupted: bool,
    /// With redundant constraints: the formulation's multipliers → the
    /// minimum-norm ones over all rows (see [`crate::redundancy`]).
    pub reactions: Option<jounce_mechanics::MinimumNormReactions>,
    /// The watch on singular configurations and branch switches, if any.
    pub singular: Option<jounce_analysis::SingularityMonitor>,
    /// A branch switch is recorded in `switch_warnings` rather than
    /// stopping the run (`settings.checks.on_failure = "warn"`).
    pub warn_on_switch: bool,
    /// Branch switches recorded under `warn_on_switch`.
    pub switch_warnings: Vec<String>,
    /// Whether the singularity monitor stopped the run (a branch switch,
    /// an unresolved singular passage, a stall at a singular pose): its
    /// error says so already.
    pub stopped_by_switch: bool,
    /// The per-step history `steps.csv`, if kept ([`STEPS_HEADER`]).
    pub steps: Option<&'a mut dyn RowSink>,
    /// The cost of the steps that end after this time, when asked
    /// (`--cost-from`).
    pub cost_from: Option<SubintervalCost>,
    step_row: [f64; 9],
    /// The watch on steps that cross a breakpoint the run was told not to
    /// stop at (`settings.integrator.breakpoints = false`).
    pub crossings: Option<crate::trust::BreakpointCrossings>,
    /// The watch on beams deformed beyond their small-strain range, if
    /// the model has beams (checked at the output rows).
    pub beams: Option<crate::beam_strain::BeamStrainWatch<'a>>,
    /// Physical state at the last accepted step (the monitor's input).
    q_step: Vec<f64>,
    v_step: Vec<f64>,
    lambda_step: Vec<f64>,
}

impl<'a> RunObserver<'a> {
    /// An observer writing through `writer` (its header already given);
    /// telling `progress`, if any.
    pub fn new(
        sys: &'a dyn MechanicalSystem,
        writer: &'a mut dyn RowSink,
        t_end: f64,
        progress: Option<&'a mut dyn Progress>,
    ) -> Self {
        let (n, m) = (sys.nq(), sys.nc());
        Self {
            sys,
            writer,
            monitor: InvariantMonitor::new(sys),
            extremes: InvariantExtremes::default(),
            energy: EnergyBalance::new(sys),
            energy_per_step: false,
            q: vec![0.0; n],
            v: vec![0.0; sys.nv()],
            lambda: vec![0.0; m],
            friction: vec![0.0; sys.n_friction_rows() + n],
            row: Vec::with_capacity(
                1 + n
                    + sys.nv()
                    + 5
                    + m
                    + 2 * sys.n_switching_functions()
                    + 2 * sys.n_friction_rows()
                    + ENERGY_ACCOUNT_COLUMNS.len(),
            ),
            t_last: f64::NAN,
            progress,
            progress_at: u64::MAX,
            t_end,
            started: Instant::now(),
            checks: None,
            interrupted: false,
            reactions: None,
            singular: None,
            steps: None,
            cost_from: None,
            step_row: [0.0; 9],
            crossings: None,
            warn_on_switch: false,
            switch_warnings: Vec::new(),
            stopped_by_switch: false,
            beams: None,
            q_step: vec![0.0; n],
            v_step: vec![0.0; sys.nv()],
            lambda_step: vec![0.0; m],
        }
    }

    /// Rows written.
    pub fn rows(&self) -> u64 {
        self.writer.rows()
    }

    /// Flush the sinks and end the progress.
    ///
    /// # Errors
    /// A sink's write failure.
    pub fn finish(&mut self) -> Result<(), crate::RunError> {
        if let Some(p) = &mut self.progress {
            p.finish();
        }
        if let Some(w) = &mut self.steps {
            w.finish()?;
        }
        self.writer.finish()
    }
}

/// y → (q, v, λ) through the formulation being integrated: only it knows
/// its current coordinate partition.
impl<'a> Observer<dyn Formulation + 'a> for RunObserver<'_> {
    fn output(
        &mut self,
        form: &mut (dyn Formulation + 'a),
        t: f64,
        y: &[f64],
    ) -> Result<(), EvalError> {
        if crate::interrupt::stop_requested() {
            self.interrupted = true;
            return Err(EvalError::Other(crate::interrupt::INTERRUPTED.into()));
        }
        match &mut self.reactions {
            Some(r) => {
                form.physical_state(t, y, &mut self.q, &mut self.v, r.input_mut())?;
                r.apply(self.sys, t, &self.q, &mut self.lambda);
            }
            None => form.physical_state(t, y, &mut self.q, &mut self.v, &mut self.lambda)?,
        }
        let inv = self.monitor.evaluate(self.sys, t, &self.q, &self.v);
        self.extremes.update(&inv);
        if let Some(b) = &mut self.beams {
            b.observe(t, &self.q);
        }
        self.row.clear();
        self.row.push(t);
        self.row.extend_from_slice(&self.q);
        self.row.extend_from_slice(&self.v);
        self.row.extend_from_slice(&[
            inv.kinetic,
            inv.potential,
            inv.total,
            inv.position_violation,
            inv.velocity_violation,
        ]);
        self.row.extend_from_slice(&self.lambda);
        for i in 0..self.sys.n_switching_functions() {
            let (gap, force) = self.sys.contact_state(t, &self.q, &self.v, i);
            self.row.push(gap);
            self.row.push(force);
        }
        let nf = self.sys.n_friction_rows();
        if nf > 0 {
            let (forces, jf) = self.friction.split_at_mut(nf);
            if !form.friction_forces(t, y, forces)? {
                forces.fill(f64::NAN);
            }
            for (i, f) in forces.iter().enumerate() {
                let r = self.sys.friction_row(t, &self.q, &self.v, i, jf);
                self.row.push(*f);
                self.row.push(r.sliding_velocity);
            }
        }
        let a = self.energy.update(t, inv.total);
        self.row
            .extend_from_slice(&[a.work_applied, a.work_drivers, a.dissipated, a.residual]);
        self.writer
            .row(&self.row)
            .map_err(|e| EvalError::Other(e.to_string()))?;
        self.t_last = t;
        // after the row is written: the rows up to the failure are kept
        if let Some(c) = &mut self.checks {
            c.check(self.sys, t, &self.q, &self.v, &self.lambda, &inv)?;
        }
        Ok(())
    }

    fn accepted_step(
        &mut self,
        form: &mut (dyn Formulation + 'a),
        t: f64,
        y: &[f64],
    ) -> Result<(), EvalError> {
        if crate::interrupt::stop_requested() {
            self.interrupted = true;
            return Err(EvalError::Other(crate::interrupt::INTERRUPTED.into()));
        }
        let Some(mon) = &mut self.singular else {
            return Ok(());
        };
        let lambda = match &mut self.reactions {
            Some(r) => r.input_mut(),
            None => &mut self.lambda_step,
        };
        form.physical_motion(t, y, &mut self.q_step, &mut self.v_step, lambda)?;
        match mon.observe(self.sys, t, &self.q_step, &self.v_step) {
            // a run creeping through a singular pose stops whatever
            // `on_failure` says: like a spent step budget, it is no check
            Ok(()) => match mon.stall(t) {
                Some(stall) => {
                    self.stopped_by_switch = true;
                    Err(EvalError::Other(stall.to_string()))
                }
                None => Ok(()),
            },
            Err(switch) if self.warn_on_switch => {
                self.switch_warnings
                    .push(format!("check failed (run continued): {switch}"));
                Ok(())
            }
            Err(switch) => {
                self.stopped_by_switch = true;
                Err(EvalError::Other(switch.to_string()))
            }
        }
    }

    fn wants_quadrature(&self) -> bool {
        self.energy_per_step
    }

    /// The energy account's integrals: the powers of loads, drivers,
    /// dampers and friction at a Gauss node of the solution.
    fn quadrature(
        &mut self,
        form: &mut (dyn Formulation + 'a),
        t: f64,
        y: &[f64],
        weight: f64,
    ) -> Result<(), EvalError> {
        // λ as the formulation has it (the kept rows of a redundant
        // model), then over all rows, as the energy account's driver power
        // λᵀΦ_t needs it
        match &mut self.reactions {
            Some(r) => {
                form.physical_state(t, y, &mut self.q_step, &mut self.v_step, r.input_mut())?;
                r.apply(self.sys, t, &self.q_step, &mut self.lambda_step);
            }
            None => form.physical_state(
                t,
                y,
                &mut self.q_step,
                &mut self.v_step,
                &mut self.lambda_step,
            )?,
        }
        let (q, v) = (&self.q_step, &self.v_step);
        let nf = self.sys.n_friction_rows();
        let mut friction_power = 0.0;
        if nf > 0 {
            let (forces, jf) = self.friction.split_at_mut(nf);
            if form.friction_forces(t, y, forces)? {
                for (i, f) in forces.iter().enumerate() {
                    friction_power += f * self.sys.friction_row(t, q, v, i, jf).sliding_velocity;
                }
            }
        }
        self.energy
            .add(self.sys, t, q, v, &self.lambda_step, friction_power, weight);
        Ok(())
    }

    fn wants_step_history(&self) -> bool {
        self.steps.is_some() || self.cost_from.is_some()
    }

    fn step_history(&mut self, r: &StepRecord) -> Result<(), EvalError> {
        if let Some(c) = &mut self.cost_from {
            c.add(r);
        }
        if let Some(w) = &mut self.steps {
            self.step_row = [
                r.t,
                r.h,
                r.error_estimate,
                r.newton_iterations as f64,
                r.rejected as f64,
                r.rhs_evaluations as f64,
                r.jacobian_evaluations as f64,
                r.lu_factorizations as f64,
                r.cpu_seconds,
            ];
            w.row(&self.step_row)
                .map_err(|e| EvalError::Other(e.to_string()))?;
        }
        Ok(())
    }

    fn event(&mut self, _t: f64, _index: usize, _y: &[f64]) {
        // a state change at an event (an impact) may turn the velocity:
        // no passage spans it
        if let Some(mon) = &mut self.singular {
            mon.restart();
        }
    }

    fn step(&mut self, t: f64, _h: f64, _stats: &Stats) {
        if let Some(c) = &mut self.crossings {
            c.step(t);
        }
        if let Some(pb) = &mut self.progress {
            // redrawn when it moves (at most 1000 times): this hook runs at
            // every step, inside the integration's CPU time
            let at = (1000.0 * t / self.t_end).clamp(0.0, 1000.0) as u64;
            if at == self.progress_at {
                return;
            }
            self.progress_at = at;
            let wall = self.started.elapsed().as_secs_f64();
            let rtf = if wall > 0.0 { t / wall } else { 0.0 };
            pb.update(t, self.t_end, rtf);
        }
    }
}
