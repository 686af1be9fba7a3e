//! Checks that a run's solution is not garbage, applied at every output
//! row: a wrong answer must never be reported as "completed".
//!
//! - **Non-finite values** in q, v or λ.
//! - **Energy balance.** Gravity and springs are in the potential V,
//!   dampers only dissipate, so E = T + V of a correct solution obeys
//!   E(t) − E(0) ≤ ∫₀ᵗ (P_applied + λᵀΦ_t) ds, where P_applied is the power
//!   of point forces, torques and actuators (generalized forces Q_a,
//!   [`jounce_mechanics::SystemQueries::applied_forces`]) and λᵀΦ_t that
//!   of the drivers. The check sums W(t) = Σ |½ (Q_a,k + Q_a,k+1)ᵀ Δq_k|
//!   plus ∫ |λᵀΦ_t| ds over the output rows (the first exact for constant
//!   loads however coarse the output, the second by the trapezoidal rule)
//!   and fails when
//!   E(t) − E(0) > g·E_ref + 2 W(t), with E_ref = max(|E(0)|, T(0), |V(0)|,
//!   m (|g| L + (L/t_end)²)) (m the total mass, L the model's size) and g =
//!   `settings.checks.energy_growth` (default 1). A numerical blow-up
//!   gains energy geometrically and crosses that bound within a few
//!   periods of the unstable mode; an accurate run never comes near it.
//! - **Constraint drift.** ‖Φ‖∞ above `settings.checks.max_constraint_violation`
//!   (default 1 % of L): the positions no longer describe the mechanism.
//! - **An impact contact passed through.** A contact with Newton's impact
//!   law acts only at the event of its gap closing, so a gap below
//!   −[`crate::penetration::PENETRATION_TOLERANCE`] (L ≥ 1 m: times L) at an
//!   output row means the bodies have passed through each other: a contact
//!   that rests at a zero gap and is pressed in (an impact law cannot hold
//!   a resting contact; a ball at rest on the ground fell 4.65 m in 1 s
//!   "completed", issue 31), or a closing event missed.
//! - **A penalty contact pressed beyond its radius.** A penalty law models
//!   the small indentation of two solids (Hertz's theory: depths far below
//!   the radii); at an output row where a contact's depth −g exceeds the
//!   smaller radius of its circles (spheres), the circle's centre is past
//!   the line (plane) or inside the other circle, and two circles whose
//!   centres cross are pushed apart the other way: the bodies are passing
//!   through each other (a stiffness too low for the impact, measured: a
//!   1 kg ball of radius 0.25 m dropped from 1.75 m on k = 100 N/m sank
//!   0.69 m and "completed", planar and spatial alike, issue 33). A point
//!   against a line has no radius and is not checked.
//!
//! A failed check stops the run with [`EvalError::Diverged`] (status
//! "failed"), or with `on_failure = "warn"` records one warning per kind
//! and lets the run go on.

use jounce_analysis::Invariants;
use jounce_integrate::EvalError;
use jounce_mechanics::{MechanicalSystem, SystemQueries};
use jounce_model::{ForceKind, JointKind, Model, OnCheckFailure};

/// The model's size L \[m\]: the diagonal of the box around its initial
/// body positions, body points and the ground points of its joints, at
/// least 1 mm.
pub fn model_size(model: &Model) -> f64 {
    if let Some(sm) = &model.spatial {
        return spatial_model_size(sm);
    }
    let mut pts: Vec<[f64; 2]> = Vec::new();
    for b in &model.bodies {
        pts.push(b.position);
        let (s, c) = b.angle.sin_cos();
        for (_, p) in &b.points {
            pts.push([
                b.position[0] + c * p[0] - s * p[1],
                b.position[1] + s * p[0] + c * p[1],
            ]);
        }
    }
    for j in &model.joints {
        let ends = match &j.kind {
            JointKind::Revolute { a, b }
            | JointKind::Translational { a, b, .. }
            | JointKind::Distance { a, b, .. } => [Some(*a), Some(*b)],
            JointKind::Rigid { .. } => [None, None],
        };
        for e in ends.into_iter().flatten() {
            if e.body == jounce_model::BodyRef::Ground {
                pts.push(e.point);
            }
        }
    }
    let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    for p in pts.iter().filter(|p| p[0].is_finite() && p[1].is_finite()) {
        for k in 0..2 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    let d = ((hi[0] - lo[0]).powi(2) + (hi[1] - lo[1]).powi(2)).sqrt();
    if d.is_finite() {
        d.max(1e-3)
    } else {
        1e-3
    }
}

/// [`model_size`] of a spatial model: the diagonal of the box around the
/// bodies' centres of mass, each widened by the distance to its farthest
/// point (any orientation), and the joints' ground points; at least 1 mm.
fn spatial_model_size(sm: &jounce_model::SpatialModel) -> f64 {
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    let mut add = |p: [f64; 3], r: f64| {
        if p.iter().all(|x| x.is_finite()) && r.is_finite() {
            for k in 0..3 {
                lo[k] = lo[k].min(p[k] - r);
                hi[k] = hi[k].max(p[k] + r);
            }
        }
    };
    for b in &sm.bodies {
        let r = b
            .points
            .iter()
            .map(|(_, p)| (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt())
            .fold(0.0, f64::max);
        add(b.position, r);
    }
    for j in &sm.joints {
        let (a, b) = j.kind.attachments();
        for e in [a, b] {
            if e.body == jounce_model::BodyRef::Ground {
                add(e.point, 0.0);
            }
        }
    }
    let d = (0..3).map(|k| (hi[k] - lo[k]).powi(2)).sum::<f64>().sqrt();
    if d.is_finite() {
        d.max(1e-3)
    } else {
        1e-3
    }
}

/// The checks of one run (module documentation).
pub struct SolutionChecks {
    on_failure: OnCheckFailure,
    energy_growth: f64,
    max_violation: f64,
    /// m (|g| L + (L / t_end)²) [J].
    gravity_scale: f64,
    size: f64,
    /// Whether the energy balance can be evaluated (the system reports
    /// its applied power, or the model has no applied loads).
    e0: Option<f64>,
    e_ref: f64,
    work: f64,
    /// The previous row: t, driver power, q (v where n_q ≠ n_v) and Q_a.
    prev: Option<(f64, f64, Vec<f64>, Vec<f64>)>,
    qa: Vec<f64>,
    phi_t: Vec<f64>,
    /// Warnings recorded under `on_failure = "warn"` (one per kind).
    pub warnings: Vec<String>,
    warned: [bool; 5],
    /// The switching functions that are the gaps of impact-law contacts,
    /// found at the first row.
    impact_gaps: Option<Vec<usize>>,
    /// The model's penalty contacts with a radius: (name, smaller radius).
    penalty_radii: Vec<(String, f64)>,
    /// The switching functions that are the gaps of those contacts, with
    /// the radius, found at the first row.
    penalty_gaps: Option<Vec<(usize, f64)>>,
    /// "circle" (planar model) or "sphere" (spatial).
    shape: &'static str,
}

impl SolutionChecks {
    /// Checks for `model` as configured in `[settings.checks]`.
    pub fn new(model: &Model, nc: usize) -> Self {
        let c = &model.settings.checks;
        let size = model_size(model);
        let (mass, g): (f64, f64) = match &model.spatial {
            Some(sm) => (
                sm.bodies.iter().map(|b| b.mass).sum(),
                sm.gravity.iter().map(|x| x * x).sum::<f64>().sqrt(),
            ),
            None => (
                model.bodies.iter().map(|b| b.mass).sum(),
                (model.gravity[0].powi(2) + model.gravity[1].powi(2)).sqrt(),
            ),
        };
        Self {
            on_failure: c.on_failure,
            energy_growth: c.energy_growth,
            max_violation: c.max_constraint_violation.unwrap_or(0.01 * size),
            // m |g| L, and m (L / t_end)², the kinetic energy of moving
            // the model's size once over the run: energy scales that do not
            // vanish for a model at rest without gravity
            gravity_scale: mass * (g * size + (size / model.settings.t_end).powi(2)),
            size,
            e0: None,
            e_ref: 0.0,
            work: 0.0,
            prev: None,
            qa: Vec::new(),
            phi_t: vec![0.0; nc],
            warnings: Vec::new(),
            warned: [false; 5],
            impact_gaps: None,
            penalty_radii: penalty_contact_radii(model),
            penalty_gaps: None,
            shape: if model.spatial.is_some() {
                "sphere"
            } else {
                "circle"
            },
        }
    }

    fn fail(&mut self, kind: usize, t: f64, cause: String) -> Result<(), EvalError> {
        match self.on_failure {
            OnCheckFailure::Fail => Err(EvalError::Diverged { t, cause }),
            OnCheckFailure::Warn => {
                if !self.warned[kind] {
                    self.warned[kind] = true;
                    self.warnings
                        .push(format!("check failed at t = {t} (run continued): {cause}"));
                }
                Ok(())
            }
        }
    }

    /// Check one output row at t: positions q, velocities v, multipliers
    /// λ and their invariants.
    ///
    /// # Errors
    /// [`EvalError::Diverged`] naming what failed, the numbers and a
    /// remedy, unless the checks only warn.
    pub fn check(
        &mut self,
        sys: &dyn MechanicalSystem,
        t: f64,
        q: &[f64],
        v: &[f64],
        lambda: &[f64],
        inv: &Invariants,
    ) -> Result<(), EvalError> {
        let finite = q.iter().chain(v).all(|x| x.is_finite())
            && inv.total.is_finite()
            && inv.position_violation.is_finite();
        if !finite {
            return self.fail(
                0,
                t,
                "the positions, velocities or energy became non-finite (NaN or ∞); the \
                 integration is unstable: use a smaller step or tolerance, or an implicit method"
                    .into(),
            );
        }
        // energy balance: the work of the applied loads in displacement
        // form, ½ (Q_a(k) + Q_a(k+1))ᵀ (q(k+1) − q(k)) per output interval
        // (exact for a constant force however coarse the output), and the
        // drivers' power λᵀΦ_t by the trapezoidal rule
        // Q_a has n_v entries; where n_q ≠ n_v (rotations by quaternions)
        // the work is ∫ Q_aᵀ v dt by the trapezoidal rule on the rows
        // instead, and `prev` keeps v in place of q
        let n = v.len();
        let by_displacement = q.len() == n;
        let x = if by_displacement { q } else { v };
        if self.qa.len() != n {
            self.qa = vec![0.0; n];
            self.prev = None;
        }
        if sys.applied_forces(t, q, v, &mut self.qa) {
            let mut pd = 0.0;
            if !self.phi_t.is_empty() && lambda.len() == self.phi_t.len() {
                sys.constraint_time_derivative(t, q, &mut self.phi_t);
                for (l, ft) in lambda.iter().zip(&self.phi_t) {
                    if l.is_finite() {
                        pd += l * ft;
                    }
                }
            }
            // each term by its magnitude: the bound holds whatever the
            // sign convention of λ
            if let Some((tp, pdp, qp, qap)) = &self.prev {
                if t > *tp {
                    let mut dw = 0.0;
                    if by_displacement {
                        for i in 0..n {
                            dw += 0.5 * (qap[i] + self.qa[i]) * (q[i] - qp[i]);
                        }
                    } else {
                        for i in 0..n {
                            dw += 0.5 * (qap[i] * qp[i] + self.qa[i] * v[i]) * (t - *tp);
                        }
                    }
                    self.work += dw.abs() + 0.5 * (pdp.abs() + pd.abs()) * (t - tp);
                }
            }
            match &mut self.prev {
                Some((tp, pdp, qp, qap)) => {
                    *tp = t;
                    *pdp = pd;
                    qp.copy_from_slice(x);
                    qap.copy_from_slice(&self.qa);
                }
                None => self.prev = Some((t, pd, x.to_vec(), self.qa.clone())),
            }
            match self.e0 {
                None => {
                    self.e0 = Some(inv.total);
                    self.e_ref = inv
                        .total
                        .abs()
                        .max(inv.kinetic)
                        .max(inv.potential.abs())
                        .max(self.gravity_scale);
                }
                Some(e0) => {
                    let gain = inv.total - e0;
                    let bound = self.energy_growth * self.e_ref + 2.0 * self.work;
                    if gain > bound && bound.is_finite() {
                        let cause = format!(
                            "the energy grew by {gain:.4e} J from E(0) = {e0:.4e} J, more than \
                             the work the loads and drivers put in (at most {:.4e} J) plus \
                             {:.4e} J (settings.checks.energy_growth = {} times the model's \
                             energy scale): the solution is blowing up. Usually the step is \
                             beyond the method's stability limit for the model's fastest mode \
                             (a fixed step) or the tolerance is too loose for it: use a smaller \
                             step or tolerance, or an implicit method (radau5, bdf, trbdf2)",
                            self.work,
                            self.energy_growth * self.e_ref,
                            self.energy_growth
                        );
                        return self.fail(1, t, cause);
                    }
                }
            }
        }
        if inv.position_violation > self.max_violation {
            let cause = format!(
                "the constraint violation ‖Φ‖∞ = {:.4e} exceeds {:.4e} ({} of the model's size \
                 {:.4} m): the positions have drifted off the joints. Use a formulation that \
                 keeps the constraints (projection, index3, partitioning, joint), Baumgarte \
                 stabilisation, or a tighter tolerance; settings.checks.max_constraint_violation \
                 sets the threshold",
                inv.position_violation,
                self.max_violation,
                if self.max_violation == 0.01 * self.size {
                    "1 %".to_string()
                } else {
                    format!("{:.3} %", 100.0 * self.max_violation / self.size)
                },
                self.size
            );
            return self.fail(2, t, cause);
        }
        self.check_impact_gaps(sys, t, q, v)?;
        self.check_penalty_depths(sys, t, q, v)
    }

    /// The depths of the penalty contacts at t against their radii
    /// (module documentation).
    fn check_penalty_depths(
        &mut self,
        sys: &dyn MechanicalSystem,
        t: f64,
        q: &[f64],
        v: &[f64],
    ) -> Result<(), EvalError> {
        let radii = &self.penalty_radii;
        let gaps = self.penalty_gaps.get_or_insert_with(|| {
            (0..sys.n_switching_functions())
                .filter(|&i| {
                    sys.restitution(i).is_none() && sys.switching_quantities(i)[0] == "gap"
                })
                .filter_map(|i| {
                    let name = sys.switching_label(i);
                    radii.iter().find(|(n, _)| *n == name).map(|&(_, r)| (i, r))
                })
                .collect()
        });
        // the deepest relative to its radius
        let deepest = gaps
            .iter()
            .map(|&(i, r)| (i, r, -sys.contact_state(t, q, v, i).0))
            .filter(|&(_, r, depth)| depth > r)
            .max_by(|a, b| (a.2 / a.1).total_cmp(&(b.2 / b.1)));
        match deepest {
            Some((i, r, depth)) => {
                let cause = format!(
                    "contact '{}' is penetrated by {depth:.4e} m, more than the radius {r} m \
                     of its {}: its penalty law models a small indentation, and at this depth \
                     the bodies are passing through each other (a sphere's or circle's centre \
                     past the plane or line, or inside the other one). Raise the contact's \
                     stiffness (the depth of an impact at speed v is about v sqrt(m/k)), or \
                     use the impact law",
                    sys.switching_label(i),
                    self.shape
                );
                self.fail(4, t, cause)
            }
            None => Ok(()),
        }
    }

    /// The gaps of the impact-law contacts at t (module documentation).
    fn check_impact_gaps(
        &mut self,
        sys: &dyn MechanicalSystem,
        t: f64,
        q: &[f64],
        v: &[f64],
    ) -> Result<(), EvalError> {
        let gaps = self.impact_gaps.get_or_insert_with(|| {
            (0..sys.n_switching_functions())
                .filter(|&i| {
                    sys.restitution(i).is_some() && sys.switching_quantities(i)[0] == "gap"
                })
                .collect()
        });
        let tol = crate::penetration::PENETRATION_TOLERANCE * self.size.max(1.0);
        let deepest = gaps
            .iter()
            .map(|&i| (i, sys.contact_state(t, q, v, i).0))
            .filter(|&(_, g)| g < -tol)
            .min_by(|a, b| a.1.total_cmp(&b.1));
        match deepest {
            Some((i, gap)) => {
                let cause = format!(
                    "contact '{}' is penetrated by {:.4e} m (tolerance {tol:.1e} m): its impact law acts \
                     only when the gap closes, so the bodies have passed through each other. A \
                     contact that rests at a zero gap and is pressed in cannot be held by an \
                     impact law: use a penalty contact (stiffness, damping) for resting or \
                     sustained contact",
                    sys.switching_label(i),
                    -gap
                );
                self.fail(3, t, cause)
            }
            None => Ok(()),
        }
    }
}

/// The model's penalty contacts that have a radius (not a point against
/// a line): (name, smaller radius of the pair).
fn penalty_contact_radii(model: &Model) -> Vec<(String, f64)> {
    let penalty: Vec<&str> = match &model.spatial {
        Some(sm) => sm
            .forces
            .iter()
            .filter(|f| {
                matches!(&f.kind, jounce_model::SpatialForceKind::Contact { law, .. }
                    if !matches!(law, jounce_model::ContactLaw::Impact { .. }))
            })
            .map(|f| f.name.as_str())
            .collect(),
        None => model
            .forces
            .iter()
            .filter(|f| {
                matches!(&f.kind, ForceKind::Contact { law, .. }
                    if !matches!(law, jounce_model::ContactLaw::Impact { .. }))
            })
            .map(|f| f.name.as_str())
            .collect(),
    };
    penalty
        .into_iter()
        .filter_map(|name| {
            crate::penetration::smallest_radius(model, name).map(|r| (name.to_string(), r))
        })
        .collect()
}

/// Where a time function of the model is used: "force 'load' (fx)",
/// "driver 'crank'".
fn time_function_uses(model: &Model) -> Vec<(String, &jounce_model::TimeFunction)> {
    let mut out = Vec::new();
    for d in &model.drivers {
        out.push((format!("driver '{}'", d.name), &d.function));
    }
    for f in &model.forces {
        let name = &f.name;
        match &f.kind {
            ForceKind::PointForce { fx, fy, .. } => {
                out.push((format!("force '{name}' (fx)"), fx));
                out.push((format!("force '{name}' (fy)"), fy));
            }
            ForceKind::Torque { torque, .. } => out.push((format!("force '{name}'"), torque)),
            ForceKind::SpringDamper { actuator, .. }
            | ForceKind::RotationalSpring { actuator, .. } => {
                if let Some(a) = actuator {
                    out.push((format!("force '{name}' (actuator)"), a));
                }
            }
            ForceKind::Contact { .. } | ForceKind::Beam(_) => {}
        }
    }
    if let Some(sm) = &model.spatial {
        for d in &sm.drivers {
            out.push((format!("driver '{}'", d.name), &d.function));
        }
        for f in &sm.forces {
            use jounce_model::SpatialForceKind as K;
            if let K::SpringDamper {
                actuator: Some(a), ..
            }
            | K::RotationalSpring {
                actuator: Some(a), ..
            } = &f.kind
            {
                out.push((format!("force '{}' (actuator)", f.name), a));
            }
        }
    }
    out
}

/// The steps that crossed a breakpoint of the model's time functions in a
/// run told not to stop there (`settings.integrator.breakpoints = false`).
///
/// Such a step has stages on one side of a jump of f (or of a derivative)
/// and is accepted by an error estimate that assumed f smooth: the jump
/// is placed somewhere within the step, a step whose stages all lie
/// before it can even pass the error test without having seen the jump
/// at all, and the transient after it is then shifted by up to the step
/// (S3: sdirk and midpoint_rule put the step force's response 3.2 ms
/// late). Gear & Østerby (ACM TOMS 10, 1984, 23–44) name this as the
/// reason to tell the integrator where the discontinuities are; the run
/// does not silently do so (the study needs the cost of not telling it),
/// but says which steps crossed which breakpoint.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BreakpointCrossings {
    /// (breakpoint, the time-function uses that have it), ascending.
    breakpoints: Vec<(f64, Vec<String>)>,
    /// The first crossing of each breakpoint: (breakpoint index, t0, t1).
    crossed: Vec<(usize, f64, f64)>,
    next: usize,
    /// End of the last step seen: the start of the next, exactly.
    t_last: f64,
}

impl BreakpointCrossings {
    /// The watch for `model`, or `None` when the run stops at breakpoints
    /// (its steps never cross one) or has none.
    pub fn new(model: &Model) -> Option<Self> {
        if model.settings.integrator.stop_at_breakpoints {
            return None;
        }
        let mut bps: Vec<(f64, Vec<String>)> = Vec::new();
        for (use_, f) in time_function_uses(model) {
            for b in f.breakpoints_sorted() {
                if !(b > 0.0 && b < model.settings.t_end) {
                    continue;
                }
                match bps.iter_mut().find(|(t, _)| *t == b) {
                    Some((_, names)) if !names.contains(&use_) => names.push(use_.clone()),
                    Some(_) => {}
                    None => bps.push((b, vec![use_.clone()])),
                }
            }
        }
        if bps.is_empty() {
            return None;
        }
        bps.sort_by(|a, b| a.0.total_cmp(&b.0));
        Some(Self {
            breakpoints: bps,
            ..Self::default()
        })
    }

    /// An accepted step that ends at t1 (steps come in increasing time,
    /// from t = 0; each starts where the last ended, exactly, which `t1 −
    /// h` is not): records the breakpoints strictly inside it (a step that
    /// starts or ends on one has not crossed it). No allocation but for a
    /// crossing.
    pub fn step(&mut self, t1: f64) {
        let t0 = self.t_last;
        if !(t1 > t0) {
            return;
        }
        while let Some(&(b, _)) = self.breakpoints.get(self.next) {
            if b >= t1 {
                break;
            }
            if b > t0 {
                self.crossed.push((self.next, t0, t1));
            }
            self.next += 1;
        }
        self.t_last = t1;
    }

    /// The breakpoints crossed: (breakpoint, t0, t1).
    pub fn crossed(&self) -> impl Iterator<Item = (f64, f64, f64)> + '_ {
        self.crossed
            .iter()
            .map(|&(i, t0, t1)| (self.breakpoints[i].0, t0, t1))
    }

    /// One warning per crossed breakpoint, for the summary.
    pub fn warnings(&self) -> Vec<String> {
        self.crossed
            .iter()
            .map(|&(i, t0, t1)| {
                let (b, uses) = &self.breakpoints[i];
                format!(
                    "breakpoint warning: the accepted step [{t0}, {t1}] s (h = {:.3e} s) crossed \
                     the breakpoint t = {b} s of {} with settings.integrator.breakpoints = false: \
                     the integrator was not told of the jump, so the solution after it may be \
                     shifted by up to the step (a step whose stages all lie before the jump \
                     passes its error test without seeing it); set breakpoints = true (the \
                     default) to stop and restart there",
                    t1 - t0,
                    uses.join(", ")
                )
            })
            .collect()
    }
}
