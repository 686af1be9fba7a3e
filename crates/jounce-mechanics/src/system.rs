//! The interface every mechanical system offers to the formulations.
//!
//! Formulations (and everything above them) see a system only through this
//! trait: positions q, velocities v, a mass matrix, applied forces,
//! constraints and their derivatives. Whether the system is planar (x, y, θ
//! per body) or spatial is not visible here.
//!
//! Positions and velocities may differ in number (n_q ≥ n_v): spatial
//! bodies carry a unit quaternion (4 numbers) for 3 angular velocities,
//! and q' = T(q) v ([`MechanicalSystem::position_derivative`]). Every
//! velocity-level quantity (M, Q, the rows of Φ_q) has n_v columns, the
//! convention of Chrono and Pinocchio: Φ_q is the Jacobian with respect to
//! the velocities, Φ' = Φ_q v + Φ_t.
//!
//! The state-dependent results of an evaluation live in a caller-owned
//! [`SystemData`] (the model/data split); [`MechanicalSystem::evaluate`]
//! fills several quantities in one pass over the elements. The single
//! quantity methods remain for one-off use (assembly, diagnostics, tests).

use nalgebra::DMatrix;

use crate::data::{Quantities, SystemData};
use crate::sparse::SparseMatrix;

/// A constrained mechanical system
///
/// M(q) q'' = Q(t, q, q') − Φ_qᵀ λ,   Φ(t, q) = 0
///
/// with n_q = [`MechanicalSystem::nq`] positions, n_v =
/// [`MechanicalSystem::nv`] velocities and m = [`MechanicalSystem::nc`]
/// constraint equations (joints and drivers).
///
/// Evaluations are pure functions of their arguments (`&self`); they write
/// into caller-provided buffers (one [`SystemData`] per user) and do not
/// allocate, unless a default method says otherwise.
pub trait MechanicalSystem {
    /// Number of position coordinates n_q = dim(q).
    fn nq(&self) -> usize;

    /// Number of velocity coordinates n_v = dim(v); n_q unless the
    /// positions carry redundant parameters (unit quaternions).
    fn nv(&self) -> usize {
        self.nq()
    }

    /// q' = T(q) v (len n_q), the kinematic map from velocities to the
    /// rate of the positions. Default (n_q = n_v): q' = v.
    fn position_derivative(&self, _q: &[f64], v: &[f64], qdot: &mut [f64]) {
        qdot.copy_from_slice(v);
    }

    /// Workspace sized for this system, for [`MechanicalSystem::evaluate`],
    /// with Φ_q stored in [`MechanicalSystem::constraint_jacobian_pattern`].
    fn data(&self) -> SystemData {
        let pattern = self.constraint_jacobian_pattern();
        SystemData::with_jacobian_pattern(self.nq(), self.nv(), self.nc(), pattern.as_deref())
    }

    /// Positions (row, column) where Φ_q (m × n_v) may be nonzero, fixed
    /// for the system (from its connectivity: a constraint row depends only
    /// on the coordinates of its element's bodies). Default `None`: every
    /// entry.
    fn constraint_jacobian_pattern(&self) -> Option<Vec<(usize, usize)>> {
        None
    }

    /// Entries (i, j), i, j < n_v, that can be nonzero in M, ∂(M a)/∂q,
    /// ∂Q/∂q, ∂Q/∂v and ∂(Φ_qᵀλ)/∂q: the coordinates each element couples,
    /// or `None` when unknown (dense). Set-up only; may allocate.
    fn tangent_pattern(&self) -> Option<Vec<(usize, usize)>> {
        None
    }

    /// Φ_q(t, q) written into `jac`, whose pattern is
    /// [`MechanicalSystem::constraint_jacobian_pattern`] (or dense).
    ///
    /// Default: [`MechanicalSystem::constraint_jacobian`] into a dense
    /// matrix, then the pattern's entries copied (allocates; systems with
    /// a sparse pattern override it with an O(nnz) fill).
    fn sparse_constraint_jacobian(&self, t: f64, q: &[f64], jac: &mut SparseMatrix) {
        let mut dense = DMatrix::zeros(jac.nrows(), jac.ncols());
        self.constraint_jacobian(t, q, &mut dense);
        jac.load_dense(&dense);
    }

    /// Whether M(q) is diagonal (planar body coordinates: diag(m, m, J)
    /// per body), so that M⁻¹ is elementwise and the Schur complement
    /// Φ_q M⁻¹ Φ_qᵀ keeps the sparsity of Φ_q. Default false.
    fn mass_matrix_is_diagonal(&self) -> bool {
        false
    }

    /// Evaluate every quantity in `what` at (t, q, v) into `data`, and set
    /// `data.evaluated = what`, `data.t = t`. `v` is read only for forces,
    /// velocity constraints and γ.
    ///
    /// Default: the single-quantity methods one after another (what they
    /// share is recomputed), Φ_q through the dense scratch
    /// `data.dense_jacobian` (resized once if the system declared a sparse
    /// pattern without overriding this method); systems override it to
    /// evaluate each element once ([`crate::PlanarSystem`] does).
    fn evaluate(&self, data: &mut SystemData, t: f64, q: &[f64], v: &[f64], what: Quantities) {
        if what.contains(Quantities::MASS_MATRIX)
            && !(data.mass_matrix_filled && self.mass_matrix_is_constant())
        {
            self.mass_matrix(q, &mut data.mass_matrix);
            data.mass_matrix_filled = true;
        }
        if what.contains(Quantities::FORCES) {
            self.generalized_forces(t, q, v, &mut data.forces);
        }
        if what.contains(Quantities::CONSTRAINTS) {
            self.constraints(t, q, &mut data.constraints);
        }
        if what.contains(Quantities::CONSTRAINT_JACOBIAN)
            || what.contains(Quantities::VELOCITY_CONSTRAINTS)
        {
            if data.dense_jacobian.shape() != data.constraint_jacobian.shape() {
                data.dense_jacobian = DMatrix::zeros(data.nc, data.nv);
            }
            self.constraint_jacobian(t, q, &mut data.dense_jacobian);
            data.constraint_jacobian.load_dense(&data.dense_jacobian);
        }
        if what.contains(Quantities::VELOCITY_CONSTRAINTS) {
            self.constraint_time_derivative(t, q, &mut data.constraint_time_derivative);
            data.velocity_constraints
                .copy_from_slice(&data.constraint_time_derivative);
            data.constraint_jacobian
                .mul_add(v, &mut data.velocity_constraints);
        }
        if what.contains(Quantities::GAMMA) {
            self.gamma(t, q, v, &mut data.gamma);
        }
        data.t = t;
        data.evaluated = what;
    }

    /// Number of constraint equations m = dim(Φ) (joints and drivers).
    fn nc(&self) -> usize;

    /// Mass matrix M(q) (n_v × n_v), symmetric, positive semi-definite.
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

    /// Constraint Jacobian Φ_q (m × n_v), with respect to the velocities:
    /// Φ' = Φ_q v + Φ_t.
    fn constraint_jacobian(&self, t: f64, q: &[f64], jac: &mut DMatrix<f64>);

    /// Φ_t = ∂Φ/∂t (len m); nonzero only for drivers.
    fn constraint_time_derivative(&self, t: f64, q: &[f64], phi_t: &mut [f64]);

    /// Acceleration right-hand side γ (len m), so that Φ_q q'' = γ:
    /// γ = −(Φ_q q')_q q' − 2 Φ_qt q' − Φ_tt.
    fn gamma(&self, t: f64, q: &[f64], v: &[f64], gamma: &mut [f64]);

    /// ∂(Φ_qᵀ λ)/∂q (n × n): the constraint-force stiffness used by
    /// implicit integration of the augmented equations.
    fn constraint_force_jacobian(&self, t: f64, q: &[f64], lambda: &[f64], out: &mut DMatrix<f64>);

    /// The tangent of the constrained equations on a sparse pattern:
    /// K = ∂(Φ_qᵀλ)/∂q − ∂Q/∂q into `k` and C = −∂Q/∂v into `c`, entry e
    /// of each being (i, j) = `pattern[e]`; `pattern` is sorted and holds
    /// [`MechanicalSystem::tangent_pattern`]. For systems with a constant
    /// mass matrix (∂(M a)/∂q = 0). O(elements), no n × n fill.
    ///
    /// Returns false (and leaves `k`, `c` undefined) where the system has
    /// no sparse evaluation or an entry falls outside `pattern`: the caller
    /// then uses the dense [`MechanicalSystem::force_jacobians`] and
    /// [`MechanicalSystem::constraint_force_jacobian`]. Default: false.
    #[allow(clippy::too_many_arguments)]
    fn sparse_tangent(
        &self,
        _t: f64,
        _q: &[f64],
        _v: &[f64],
        _lambda: &[f64],
        _pattern: &[(usize, usize)],
        _k: &mut [f64],
        _c: &mut [f64],
    ) -> bool {
        false
    }

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

    /// Generalized forces Q_a (len n) of the applied loads at (t, q, v):
    /// the forces that are neither potential (gravity, springs: in V) nor
    /// dissipative (dampers), i.e. point forces, torques and actuators.
    /// With the drivers' power λᵀΦ_t their work bounds the energy a
    /// correct solution can gain: E(t) − E(0) ≤ ∫ Q_aᵀ dq + ∫ λᵀΦ_t dt.
    /// Returns false (and leaves `qa` unspecified) when the system cannot
    /// tell; the energy-balance check is then skipped for models with
    /// applied loads.
    fn applied_forces(&self, _t: f64, _q: &[f64], _v: &[f64], _qa: &mut [f64]) -> bool {
        false
    }

    /// Human-readable name of constraint row `row`, naming its element,
    /// e.g. `joint 'crank_pin' (y)`.
    /// Unit of the multiplier of constraint row `row` and the load it
    /// stands for (sign, body and point), in words; empty when the system
    /// does not say.
    fn constraint_row_meaning(&self, _row: usize) -> String {
        String::new()
    }

    fn constraint_label(&self, row: usize) -> String;

    /// Human-readable name of coordinate `i`, e.g. `crank.theta`.
    fn coordinate_label(&self, i: usize) -> String;

    /// The same system in joint (relative) coordinates, if it has that
    /// form: a kinematic tree with cut joints, integrated by the `joint`
    /// formulation. Default: none.
    fn joint_coordinates(&self) -> Option<Box<dyn crate::JointCoordinateSystem>> {
        None
    }

    /// Number of switching functions s_i(t, q, v) (contact gaps, then the
    /// deflections of one-sided springs): where
    /// one changes sign a force law switches or an impact happens, so an
    /// integrator must stop there (located as events).
    fn n_switching_functions(&self) -> usize {
        0
    }

    /// The switching functions s(t, q, v) into `s` (len
    /// [`MechanicalSystem::n_switching_functions`]); a contact's is its
    /// gap g(q), negative in penetration; a one-sided spring's its
    /// deflection (ℓ − ℓ0 or φ − φ0).
    fn switching_functions(&self, _t: f64, _q: &[f64], _v: &[f64], _s: &mut [f64]) {}

    /// Name of the element of switching function `i`.
    fn switching_label(&self, i: usize) -> String {
        format!("switching function {i}")
    }

    /// Names of the two quantities [`MechanicalSystem::contact_state`]
    /// reports for switching function `i` (output column suffixes):
    /// a contact's gap and normal force by default.
    fn switching_quantities(&self, _i: usize) -> [&'static str; 2] {
        ["gap", "normal_force"]
    }

    /// Gap and normal force of the contact of switching function `i` (a
    /// one-sided spring: deflection and force), for output.
    fn contact_state(&self, _t: f64, _q: &[f64], _v: &[f64], _i: usize) -> (f64, f64) {
        (f64::NAN, f64::NAN)
    }

    /// Coefficient of restitution when switching function `i` is a rigid
    /// contact with Newton's impact law.
    fn restitution(&self, _i: usize) -> Option<f64> {
        None
    }

    /// Velocities just after the impact of switching function `i` at
    /// (t, q, v) into `v_out`: Newton's law g'⁺ = −e g'⁻ with the
    /// impulse consistent with the joints,
    ///
    /// ```text
    /// [M Φ_qᵀ; Φ_q 0] [u; μ] = [w; 0],   v⁺ = v + P u,   P = −(1 + e) (w·v)/(w·u)
    /// ```
    ///
    /// (w = ∂g/∂q the impulse direction; Pfeiffer & Glocker 1996,
    /// *Multibody Dynamics with Unilateral Contacts*, ch. 7). Ok(false)
    /// when the contact is not closing (v unchanged).
    ///
    /// # Errors
    /// A message when no unique impulse exists.
    fn apply_impact(
        &self,
        _t: f64,
        _q: &[f64],
        v: &[f64],
        _i: usize,
        v_out: &mut [f64],
    ) -> Result<bool, String> {
        v_out.copy_from_slice(v);
        Ok(false)
    }

    /// Number of friction elements whose tangential force F_t is solved
    /// for together with the accelerations (stick–slip friction of
    /// contacts, any friction of translational joints, whose normal force
    /// is a multiplier). Regularised contact friction is an applied force
    /// instead and is not counted.
    fn n_friction_rows(&self) -> usize {
        0
    }

    /// Friction element `i` at (t, q, v): its sliding velocity
    /// v_t = J_f v, the row J_f = ∂v_t/∂v into `jf` (len nv; the friction
    /// force enters the equations of motion as J_fᵀ F_t), the
    /// acceleration term γ_f = −(∂v_t/∂q) q' (so that v_t' = J_f v' − γ_f
    /// is written J_f v' = v_t' + γ_f), its normal force and its law.
    fn friction_row(
        &self,
        _t: f64,
        _q: &[f64],
        _v: &[f64],
        _i: usize,
        _jf: &mut [f64],
    ) -> FrictionRow {
        unreachable!("friction_row called on a system without friction rows")
    }

    /// Name of the element of friction row `i`.
    fn friction_label(&self, i: usize) -> String {
        format!("friction {i}")
    }

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

/// A friction element evaluated at (t, q, v) ([`MechanicalSystem::friction_row`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrictionRow {
    /// Sliding velocity v_t of body b relative to body a along the tangent.
    pub sliding_velocity: f64,
    /// γ_f = −(∂v_t/∂q) q'.
    pub gamma: f64,
    /// The normal force F_n ≥ 0.
    pub normal: NormalForce,
    /// Friction coefficient and law.
    pub friction: jounce_model::Friction,
}

/// Where the normal force of a friction element comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NormalForce {
    /// Known from the state (a penalty contact's force).
    Known(f64),
    /// |λ_r|, the magnitude of the multiplier of constraint row `r` (the
    /// reaction of a translational joint normal to its guide).
    Multiplier(usize),
}
