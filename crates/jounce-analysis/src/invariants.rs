//! Invariant monitors: energy and constraint violation at one instant, and
//! their extremes over a run.

use jounce_mechanics::{MechanicalSystem, Quantities, SystemData};

/// Energy and constraint violation at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Invariants {
    /// Kinetic energy T = ½ vᵀ M v \[J\].
    pub kinetic: f64,
    /// Potential energy V \[J\] (gravity and conservative force elements).
    pub potential: f64,
    /// Total energy E = T + V \[J\].
    pub total: f64,
    /// Position constraint violation ‖Φ(t, q)‖∞ [m or rad].
    pub position_violation: f64,
    /// Velocity constraint violation ‖Φ_q v + Φ_t‖∞ [m/s or rad/s].
    pub velocity_violation: f64,
}

/// Evaluates [`Invariants`] with preallocated scratch space: Φ_q in the
/// system's own (sparse) storage, so that a sample costs O(nnz(Φ_q)),
/// not O(m n) (a dense m × n Φ_q of a 5000-link chain is 1.2 GB, issue 31).
pub struct InvariantMonitor {
    phi: Vec<f64>,
    phi_t: Vec<f64>,
    data: SystemData,
}

impl InvariantMonitor {
    /// Scratch sized for `sys`.
    pub fn new(sys: &dyn MechanicalSystem) -> Self {
        let m = sys.nc();
        Self {
            phi: vec![0.0; m],
            phi_t: vec![0.0; m],
            data: sys.data(),
        }
    }

    /// Invariants of `sys` at (t, q, v).
    pub fn evaluate(
        &mut self,
        sys: &dyn MechanicalSystem,
        t: f64,
        q: &[f64],
        v: &[f64],
    ) -> Invariants {
        let kinetic = sys.kinetic_energy(q, v);
        let potential = sys.potential_energy(t, q);
        let mut pos = 0.0f64;
        let mut vel = 0.0f64;
        if sys.nc() > 0 {
            sys.constraints(t, q, &mut self.phi);
            sys.evaluate(&mut self.data, t, q, v, Quantities::CONSTRAINT_JACOBIAN);
            sys.constraint_time_derivative(t, q, &mut self.phi_t);
            let jac = &self.data.constraint_jacobian;
            for i in 0..sys.nc() {
                pos = pos.max(self.phi[i].abs());
                // Φ_q v + Φ_t over the row's stored entries, in column order
                let mut r = self.phi_t[i];
                let (cols, vals) = jac.row(i);
                for (&j, &x) in cols.iter().zip(vals) {
                    r += x * v[j];
                }
                vel = vel.max(r.abs());
            }
        }
        Invariants {
            kinetic,
            potential,
            total: kinetic + potential,
            position_violation: pos,
            velocity_violation: vel,
        }
    }
}

/// Extremes of the invariants over a run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct InvariantExtremes {
    /// Energy at the first sample.
    pub initial_energy: Option<f64>,
    /// Energy scale of the relative error (see [`InvariantExtremes::update`]).
    pub scale: Option<f64>,
    /// max |E(t) − E(0)| / scale.
    pub max_relative_energy_error: f64,
    /// max |E(t) − E(0)| \[J\].
    pub max_energy_error: f64,
    /// max ‖Φ‖∞.
    pub max_position_violation: f64,
    /// max ‖Φ_q v + Φ_t‖∞.
    pub max_velocity_violation: f64,
}

impl InvariantExtremes {
    /// Take one sample into account. The relative energy error divides by
    /// max(|E(0)|, T(0)) — the initial energy, or the initial kinetic energy
    /// when the potential's datum makes E(0) vanish — and by 1 J when both
    /// vanish.
    pub fn update(&mut self, inv: &Invariants) {
        let e0 = *self.initial_energy.get_or_insert(inv.total);
        let scale = self
            .scale
            .get_or_insert(e0.abs().max(inv.kinetic).max(1e-300));
        let de = (inv.total - e0).abs();
        self.max_energy_error = self.max_energy_error.max(de);
        let scale = if *scale > 1e-12 { *scale } else { 1.0 };
        self.max_relative_energy_error = self.max_relative_energy_error.max(de / scale);
        self.max_position_violation = self.max_position_violation.max(inv.position_violation);
        self.max_velocity_violation = self.max_velocity_violation.max(inv.velocity_violation);
    }
}
