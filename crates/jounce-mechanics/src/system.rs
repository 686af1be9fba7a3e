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

    /// Whether the second-derivative methods below
    /// ([`MechanicalSystem::gamma_jacobians`],
    /// [`MechanicalSystem::constraint_hessian_product`],
    /// [`MechanicalSystem::constraint_time_jacobian`],
    /// [`MechanicalSystem::mass_matrix_derivative`]) are exact (analytic or
    /// automatic differentiation) rather than the finite-difference
    /// defaults. Formulations report exact Jacobians only when this holds.
    fn has_exact_second_derivatives(&self) -> bool {
        false
    }

    /// ∂γ/∂q and ∂γ/∂v (m × n each) of the acceleration right-hand side
    /// γ(t, q, v) = −(Φ_q v)_q v − 2 Φ_qt v − Φ_tt.
    ///
    /// Default: central differences of [`MechanicalSystem::gamma`] with
    /// steps ε^(1/3)·max(|x_j|, 1) (error ~1e-10 relative); it allocates
    /// scratch vectors, so systems used on hot paths override it.
    fn gamma_jacobians(
        &self,
        t: f64,
        q: &[f64],
        v: &[f64],
        dq: &mut DMatrix<f64>,
        dv: &mut DMatrix<f64>,
    ) {
        let m = self.nc();
        let (mut gp, mut gm) = (vec![0.0; m], vec![0.0; m]);
        let mut x = q.to_vec();
        for j in 0..q.len() {
            let h = central_step(q[j]);
            x[j] = q[j] + h;
            self.gamma(t, &x, v, &mut gp);
            x[j] = q[j] - h;
            self.gamma(t, &x, v, &mut gm);
            x[j] = q[j];
            for i in 0..m {
                dq[(i, j)] = (gp[i] - gm[i]) / (2.0 * h);
            }
        }
        let mut x = v.to_vec();
        for j in 0..v.len() {
            let h = central_step(v[j]);
            x[j] = v[j] + h;
            self.gamma(t, q, &x, &mut gp);
            x[j] = v[j] - h;
            self.gamma(t, q, &x, &mut gm);
            x[j] = v[j];
            for i in 0..m {
                dv[(i, j)] = (gp[i] - gm[i]) / (2.0 * h);
            }
        }
    }

    /// ∂(Φ_q a)/∂q (m × n) for a fixed vector `a` (len n): the constraint
    /// Hessian contracted with a, row i = Σ_j a_j ∂²Φ_i/∂q_j∂q. It is the
    /// term Φ_q(q) a contributes to the derivative of Φ_q q'' = γ.
    ///
    /// Default: central differences of [`MechanicalSystem::constraint_jacobian`]
    /// (allocates; override on hot paths).
    fn constraint_hessian_product(&self, t: f64, q: &[f64], a: &[f64], out: &mut DMatrix<f64>) {
        let (n, m) = (self.nq(), self.nc());
        let (mut jp, mut jm) = (DMatrix::zeros(m, n), DMatrix::zeros(m, n));
        let mut x = q.to_vec();
        for k in 0..n {
            let h = central_step(q[k]);
            x[k] = q[k] + h;
            self.constraint_jacobian(t, &x, &mut jp);
            x[k] = q[k] - h;
            self.constraint_jacobian(t, &x, &mut jm);
            x[k] = q[k];
            for i in 0..m {
                let mut s = 0.0;
                for j in 0..n {
                    s += (jp[(i, j)] - jm[(i, j)]) * a[j];
                }
                out[(i, k)] = s / (2.0 * h);
            }
        }
    }

    /// Φ_qt = ∂Φ_t/∂q (m × n), the mixed derivative entering γ and the
    /// Baumgarte term 2α(Φ_q v + Φ_t); zero unless a driver's equation
    /// couples f(t) with the coordinates.
    ///
    /// Default: central differences of
    /// [`MechanicalSystem::constraint_time_derivative`] (allocates).
    fn constraint_time_jacobian(&self, t: f64, q: &[f64], out: &mut DMatrix<f64>) {
        let m = self.nc();
        let (mut pp, mut pm) = (vec![0.0; m], vec![0.0; m]);
        let mut x = q.to_vec();
        for k in 0..q.len() {
            let h = central_step(q[k]);
            x[k] = q[k] + h;
            self.constraint_time_derivative(t, &x, &mut pp);
            x[k] = q[k] - h;
            self.constraint_time_derivative(t, &x, &mut pm);
            x[k] = q[k];
            for i in 0..m {
                out[(i, k)] = (pp[i] - pm[i]) / (2.0 * h);
            }
        }
    }

    /// ∂(M(q) a)/∂q (n × n) for a fixed vector `a`: the mass-matrix term of
    /// tangent matrices. Zero when [`MechanicalSystem::mass_matrix_is_constant`].
    ///
    /// Default: zero for a constant M, otherwise central differences of
    /// [`MechanicalSystem::mass_matrix`] (allocates).
    fn mass_matrix_derivative(&self, q: &[f64], a: &[f64], out: &mut DMatrix<f64>) {
        if self.mass_matrix_is_constant() {
            out.fill(0.0);
            return;
        }
        let n = self.nq();
        let (mut mp, mut mm) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
        let mut x = q.to_vec();
        for k in 0..n {
            let h = central_step(q[k]);
            x[k] = q[k] + h;
            self.mass_matrix(&x, &mut mp);
            x[k] = q[k] - h;
            self.mass_matrix(&x, &mut mm);
            x[k] = q[k];
            for i in 0..n {
                let mut s = 0.0;
                for j in 0..n {
                    s += (mp[(i, j)] - mm[(i, j)]) * a[j];
                }
                out[(i, k)] = s / (2.0 * h);
            }
        }
    }

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

/// Central-difference step for component x: ε^(1/3)·max(|x|, 1), which
/// balances truncation (O(h²)) and rounding (O(ε/h)) errors.
fn central_step(x: f64) -> f64 {
    f64::EPSILON.cbrt() * x.abs().max(1.0)
}
