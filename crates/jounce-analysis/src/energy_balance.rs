//! Energy accounting of a run: where the energy of a model with motors,
//! loads and dampers went, and whether the books balance.
//!
//! With E = T + V (kinetic energy plus the potential of gravity and the
//! conservative elements), the work–energy theorem of the equations of
//! motion M q'' + Φ_qᵀ λ = Q(t, q, v) reads
//!
//! ```text
//! E(t) − E(0) = W_applied + W_drivers − D,
//! W_applied = ∫ Q_aᵀ dq                (point forces, torques, actuators),
//! W_drivers = ∫ λᵀ Φ_t ds               (the power of rheonomic constraints),
//! D         = −∫ Q_dᵀ dq − ∫ F_t v_t ds (dampers, contact damping and
//!                                        friction: dissipation ≥ 0),
//! ```
//!
//! where Q_d = Q(t, q, v) − Q(t, q, 0) is the velocity-dependent part of
//! the generalized forces (in planar body coordinates Q has no
//! velocity-dependent inertial terms, so that part is exactly the dampers'
//! and the regularised friction's) and F_t v_t the power of the friction
//! forces a formulation solves for (stick–slip, joint friction). An
//! impact (a state change at one instant) loses E(t⁺) − E(t⁻), booked as
//! dissipation.
//!
//! The integrals are accumulated by the three-point Gauss–Legendre rule on
//! every interval between outputs, step ends and events, on the method's
//! own continuous solution (the driver's `Observer::quadrature` hook,
//! jounce_integrate), so their quadrature error is far below the
//! integration error: the residual
//! r(t) = E(t) − E(0) − W_applied − W_drivers + D measures how far the
//! integrated motion is from satisfying the work–energy theorem, and a
//! model with motors and dampers can be checked as a conservative one is
//! by its energy error.
//!
//! Owns: the accumulation. Must not: know how the state was integrated.

use jounce_mechanics::{MechanicalSystem, SystemQueries};

/// The account at one output row.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EnergyAccount {
    /// W_applied \[J\].
    pub work_applied: f64,
    /// W_drivers \[J\].
    pub work_drivers: f64,
    /// D ≥ 0 \[J\].
    pub dissipated: f64,
    /// r = E − E(0) − W_applied − W_drivers + D \[J\].
    pub residual: f64,
}

/// Accumulates the [`EnergyAccount`] of a run: the powers at the nodes of
/// a quadrature rule along the solution ([`EnergyBalance::add`]), the
/// energy at its output rows ([`EnergyBalance::update`]).
#[derive(Clone, Debug)]
pub struct EnergyBalance {
    qa: Vec<f64>,
    qd: Vec<f64>,
    q0v: Vec<f64>,
    zero: Vec<f64>,
    phi_t: Vec<f64>,
    e0: Option<f64>,
    /// (t, E) of the last row.
    last: Option<(f64, f64)>,
    account: EnergyAccount,
    max_residual: f64,
}

impl EnergyBalance {
    /// An empty account for `sys`.
    pub fn new<S: MechanicalSystem + ?Sized>(sys: &S) -> Self {
        let n = sys.nv();
        Self {
            qa: vec![0.0; n],
            qd: vec![0.0; n],
            q0v: vec![0.0; n],
            zero: vec![0.0; n],
            phi_t: vec![0.0; sys.nc()],
            e0: None,
            last: None,
            account: EnergyAccount::default(),
            max_residual: 0.0,
        }
    }

    /// Add `weight` × the powers at (t, q, v, λ) to the integrals: a node
    /// of a quadrature rule. `friction_power` = Σ F_t v_t of the friction
    /// forces the formulation solved for (0 when none).
    pub fn add<S: MechanicalSystem + ?Sized>(
        &mut self,
        sys: &S,
        t: f64,
        q: &[f64],
        v: &[f64],
        lambda: &[f64],
        friction_power: f64,
        weight: f64,
    ) {
        if !sys.applied_forces(t, q, v, &mut self.qa) {
            self.qa.fill(0.0);
        }
        sys.generalized_forces(t, q, v, &mut self.qd);
        sys.generalized_forces(t, q, &self.zero, &mut self.q0v);
        let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
        let velocity_part = dot(&self.qd, v) - dot(&self.q0v, v);
        sys.constraint_time_derivative(t, q, &mut self.phi_t);
        let drivers: f64 = lambda
            .iter()
            .zip(&self.phi_t)
            .map(|(l, f)| l * f)
            .filter(|p| p.is_finite())
            .sum();
        let a = &mut self.account;
        a.work_applied += weight * dot(&self.qa, v);
        a.work_drivers += weight * drivers;
        a.dissipated -= weight * (velocity_part + friction_power);
    }

    /// The account at an output row at `t` with total energy `energy`. A
    /// row at the time of the last with another energy is a state change
    /// at an instant (an impact): its energy change is booked as
    /// dissipation (no force acts over zero time).
    pub fn update(&mut self, t: f64, energy: f64) -> EnergyAccount {
        let e0 = *self.e0.get_or_insert(energy);
        if let Some((tp, ep)) = self.last {
            if t == tp {
                self.account.dissipated -= energy - ep;
            }
        }
        self.last = Some((t, energy));
        let a = &mut self.account;
        a.residual = energy - e0 - a.work_applied - a.work_drivers + a.dissipated;
        self.max_residual = if a.residual.is_finite() {
            self.max_residual.max(a.residual.abs())
        } else {
            f64::INFINITY
        };
        *a
    }

    /// The account at the last row.
    pub fn account(&self) -> EnergyAccount {
        self.account
    }

    /// max |r| over the rows so far \[J\].
    pub fn max_residual(&self) -> f64 {
        self.max_residual
    }
}
