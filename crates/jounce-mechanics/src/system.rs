//! The interface every mechanical system offers to the formulations.
//!
//! Formulations (and everything above them) see a system only through this
//! trait: generalized coordinates q, velocities v = q', a mass matrix,
//! applied forces, constraints and their derivatives. Whether the system is
//! planar (x, y, θ per body) or spatial is not visible here.

use nalgebra::DMatrix;

/// A constrained mechanical system
///
/// M(q) q'' = Q(t, q, q') − Φ_qᵀ λ,   Φ(t, q) = 0
///
/// with n = [`MechanicalSystem::nq`] coordinates and m =
/// [`MechanicalSystem::nc`] constraint equations (joints and drivers).
///
/// Evaluations are pure functions of their arguments (`&self`); they write
/// into caller-provided buffers and do not allocate.
pub trait MechanicalSystem {
    /// Number of generalized coordinates n = dim(q) = dim(v).
    fn nq(&self) -> usize;

    /// Number of constraint equations m = dim(Φ) (joints and drivers).
    fn nc(&self) -> usize;

    /// Mass matrix M(q) (n × n), symmetric, positive semi-definite.
    fn mass_matrix(&self, q: &[f64], m: &mut DMatrix<f64>);

    /// Whether M does not depend on q (true in planar body coordinates,
    /// where ∂(M a)/∂q = 0 in tangent matrices).
    fn mass_matrix_is_constant(&self) -> bool {
        false
    }

    /// Applied generalized forces Q(t, q, v) (len n), including
    /// velocity-dependent terms (dampers, quadratic velocity terms).
    fn generalized_forces(&self, t: f64, q: &[f64], v: &[f64], f: &mut [f64]);

    /// ∂Q/∂q and ∂Q/∂v (n × n each), exact (automatic differentiation).
    fn force_jacobians(
        &self,
        t: f64,
        q: &[f64],
        v: &[f64],
        dq: &mut DMatrix<f64>,
        dv: &mut DMatrix<f64>,
    );

    /// Constraint equations Φ(t, q) (len m).
    fn constraints(&self, t: f64, q: &[f64], phi: &mut [f64]);

    /// Constraint Jacobian Φ_q (m × n).
    fn constraint_jacobian(&self, t: f64, q: &[f64], jac: &mut DMatrix<f64>);

    /// Φ_t = ∂Φ/∂t (len m); nonzero only for drivers.
    fn constraint_time_derivative(&self, t: f64, q: &[f64], phi_t: &mut [f64]);

    /// Acceleration right-hand side γ (len m), so that Φ_q q'' = γ:
    /// γ = −(Φ_q q')_q q' − 2 Φ_qt q' − Φ_tt.
    fn gamma(&self, t: f64, q: &[f64], v: &[f64], gamma: &mut [f64]);

    /// ∂(Φ_qᵀ λ)/∂q (n × n): the constraint-force stiffness used by
    /// implicit integration of the augmented equations.
    fn constraint_force_jacobian(&self, t: f64, q: &[f64], lambda: &[f64], out: &mut DMatrix<f64>);

    /// Kinetic energy T = ½ vᵀ M(q) v.
    fn kinetic_energy(&self, q: &[f64], v: &[f64]) -> f64;

    /// Potential energy V(t, q) of gravity and conservative force elements
    /// (springs, one-sided springs), so that T + V is conserved when no
    /// damping, driver or time-dependent force does work.
    fn potential_energy(&self, t: f64, q: &[f64]) -> f64;

    /// Human-readable name of constraint row `row`, naming its element,
    /// e.g. `joint 'crank_pin' (y)`.
    fn constraint_label(&self, row: usize) -> String;

    /// Human-readable name of coordinate `i`, e.g. `crank.theta`.
    fn coordinate_label(&self, i: usize) -> String;

    /// Times at which the applied forces or drivers are not smooth (steps,
    /// table knots, ends of ramps), sorted ascending.
    fn breakpoints(&self) -> Vec<f64> {
        Vec::new()
    }
}
