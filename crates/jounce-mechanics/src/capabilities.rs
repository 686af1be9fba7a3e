//! The optional capabilities of a [`MechanicalSystem`], and the one place
//! where callers are told what an absent capability means.
//!
//! A capability is a small trait reached through one accessor of
//! [`MechanicalSystem`] that every implementation must write (no default):
//!
//! | accessor | trait | absent means |
//! |---|---|---|
//! | [`MechanicalSystem::second_derivatives`] | [`SecondDerivatives`] | central differences ([`crate::finite_differences`]) |
//! | [`MechanicalSystem::sparsity`] | [`Sparsity`] | dense Φ_q and tangents |
//! | [`MechanicalSystem::applied_loads`] | [`AppliedLoads`] | the energy balance is not checked |
//! | [`MechanicalSystem::switching`] | [`SwitchingFunctions`] | no events, no impacts |
//! | [`MechanicalSystem::friction`] | [`FrictionRows`] | no friction unknowns |
//! | [`MechanicalSystem::joint_coordinates`] | [`crate::JointCoordinateSystem`] | no `joint` formulation |
//!
//! [`SystemQueries`] is implemented once for every system; formulations
//! and the run pipeline call it (`sys.n_switching_functions()`,
//! `sys.gamma_jacobians(..)`, `sys.apply_impact(..)`) and so never decide
//! "none" themselves.
//!
//! Impacts are computed here, once, from the capability's impulse
//! direction and the *system's own* M and Φ_q ([`SystemQueries::apply_impact`]):
//! a system restricted to its independent rows ([`crate::IndependentRows`])
//! solves its impact on those rows, so redundant joints do not make the
//! impulse singular.
//!
//! Owns: the capability traits and their callers' view. Must not: know a
//! concrete system (planar, spatial, a wrapper).

use nalgebra::{DMatrix, DVector};

use crate::data::{Quantities, SystemData};
use crate::finite_differences;
use crate::sparse::SparseMatrix;
use crate::system::{FrictionRow, MechanicalSystem, Structure};

/// Exact second derivatives of the constraint and mass terms (analytic or
/// automatic differentiation), for exact Jacobians of implicit methods.
pub trait SecondDerivatives {
    /// ∂γ/∂q and ∂γ/∂v (m × n each) of the acceleration right-hand side
    /// γ(t, q, v) = −(Φ_q v)_q v − 2 Φ_qt v − Φ_tt.
    fn exact_gamma_jacobians(
        &self,
        t: f64,
        q: &[f64],
        v: &[f64],
        dq: &mut DMatrix<f64>,
        dv: &mut DMatrix<f64>,
    );

    /// ∂(Φ_q a)/∂q (m × n) for a fixed vector `a` (len n): row i =
    /// Σ_j a_j ∂²Φ_i/∂q_j∂q.
    fn exact_constraint_hessian_product(
        &self,
        t: f64,
        q: &[f64],
        a: &[f64],
        out: &mut DMatrix<f64>,
    );

    /// Φ_qt = ∂Φ_t/∂q (m × n).
    fn exact_constraint_time_jacobian(&self, t: f64, q: &[f64], out: &mut DMatrix<f64>);

    /// ∂(M(q) a)/∂q (n × n) for a fixed vector `a`.
    fn exact_mass_matrix_derivative(&self, q: &[f64], a: &[f64], out: &mut DMatrix<f64>);
}

/// Fixed sparsity patterns from the element connectivity, filled in
/// O(nnz).
pub trait Sparsity {
    /// Positions (row, column) where Φ_q (m × n_v) may be nonzero: a
    /// constraint row depends only on the coordinates of its element's
    /// bodies.
    fn jacobian_pattern(&self) -> Vec<(usize, usize)>;

    /// Entries (i, j), i, j < n_v, that can be nonzero in M, ∂(M a)/∂q,
    /// ∂Q/∂q, ∂Q/∂v and ∂(Φ_qᵀλ)/∂q. Set-up only; may allocate.
    fn tangent_entries(&self) -> Vec<(usize, usize)>;

    /// Φ_q(t, q) written into `jac`, whose pattern is
    /// [`Sparsity::jacobian_pattern`] (a dense `jac` is filled too).
    fn fill_constraint_jacobian(&self, t: f64, q: &[f64], jac: &mut SparseMatrix);

    /// K = ∂(Φ_qᵀλ)/∂q − ∂Q/∂q into `k` and C = −∂Q/∂v into `c`, entry e
    /// of each being (i, j) = `pattern[e]` (sorted, holding
    /// [`Sparsity::tangent_entries`]), for a constant mass matrix. Returns
    /// false (`k`, `c` undefined) where an entry falls outside `pattern` or
    /// M is not constant: the caller then uses the dense Jacobians.
    fn fill_tangent(
        &self,
        t: f64,
        q: &[f64],
        v: &[f64],
        lambda: &[f64],
        pattern: &[(usize, usize)],
        k: &mut [f64],
        c: &mut [f64],
    ) -> bool;
}

/// The applied loads apart from Q: the forces that are neither potential
/// (gravity, springs: in V) nor dissipative (dampers), i.e. point forces,
/// torques and actuators. With the drivers' power λᵀΦ_t their work bounds
/// the energy a correct solution can gain:
/// E(t) − E(0) ≤ ∫ Q_aᵀ dq + ∫ λᵀΦ_t dt.
pub trait AppliedLoads {
    /// Q_a(t, q, v) (len n_v) into `qa`.
    fn applied_load_forces(&self, t: f64, q: &[f64], v: &[f64], qa: &mut [f64]);
}

/// Switching functions s_i(t, q, v): where one changes sign a force law
/// switches or an impact happens, so an integrator must stop there
/// (located as events). Contact gaps, then the deflections of one-sided
/// springs.
pub trait SwitchingFunctions {
    /// Number of switching functions.
    fn switching_count(&self) -> usize;

    /// s(t, q, v) into `s` (len [`SwitchingFunctions::switching_count`]); a
    /// contact's is its gap g(q), negative in penetration; a one-sided
    /// spring's its deflection (ℓ − ℓ0 or φ − φ0).
    fn switching_values(&self, t: f64, q: &[f64], v: &[f64], s: &mut [f64]);

    /// Name of the element of switching function `i`.
    fn switching_name(&self, i: usize) -> String;

    /// Names of the two quantities [`SwitchingFunctions::switching_state`]
    /// reports (output column suffixes): `["gap", "normal_force"]` for a
    /// contact, deflection and tension (torque) for a one-sided spring.
    fn switching_columns(&self, i: usize) -> [&'static str; 2];

    /// Gap and normal force of the contact of switching function `i` (a
    /// one-sided spring: deflection and force), for output.
    fn switching_state(&self, t: f64, q: &[f64], v: &[f64], i: usize) -> (f64, f64);

    /// Coefficient of restitution e when switching function `i` is a rigid
    /// contact with Newton's impact law.
    fn impact_restitution(&self, i: usize) -> Option<f64>;

    /// The impulse direction w = ∂g/∂q (len n_v, velocity space) of the
    /// impact contact `i` at (t, q) into `w`; false (w undefined) when `i`
    /// is not an impact contact.
    fn impulse_direction(&self, t: f64, q: &[f64], i: usize, w: &mut [f64]) -> bool;
}

/// Friction elements whose tangential force F_t is solved for together
/// with the accelerations (stick–slip friction of contacts, any friction
/// of translational joints, whose normal force is a multiplier).
/// Regularised contact friction is an applied force and is not counted.
pub trait FrictionRows {
    /// Number of friction elements.
    fn friction_count(&self) -> usize;

    /// Friction element `i` at (t, q, v): its sliding velocity
    /// v_t = J_f v, the row J_f = ∂v_t/∂v into `jf` (len n_v; the friction
    /// force enters the equations of motion as J_fᵀ F_t), γ_f =
    /// −(∂v_t/∂q) q', its normal force and its law.
    fn friction_element(
        &self,
        t: f64,
        q: &[f64],
        v: &[f64],
        i: usize,
        jf: &mut [f64],
    ) -> FrictionRow;

    /// Name of the element of friction row `i`.
    fn friction_name(&self, i: usize) -> String;

    /// Number of rows of the friction element that row `i` belongs to: 1
    /// for a sliding direction (planar contacts, translational joints), 2
    /// for the tangent plane of a spatial contact, whose rows are
    /// consecutive and share one isotropic Coulomb cone
    /// |F| ≤ μ_s F_n, F = (F₁, F₂) (Pfeiffer & Glocker 1996, §4.3). Every
    /// row of an element answers the same number. Default: 1.
    fn friction_dimension(&self, _i: usize) -> usize {
        1
    }
}

/// What callers ask of any [`MechanicalSystem`], with the meaning of an
/// absent capability decided here once (see the module documentation).
/// Implemented for every system; not to be implemented by hand.
pub trait SystemQueries: MechanicalSystem {
    /// Whether M does not depend on q.
    fn mass_matrix_is_constant(&self) -> bool {
        self.structure().mass_matrix_is_constant
    }

    /// Whether M is diagonal.
    fn mass_matrix_is_diagonal(&self) -> bool {
        self.structure().mass_matrix_is_diagonal
    }

    /// Whether the second derivatives are exact; formulations report exact
    /// Jacobians only when this holds.
    fn has_exact_second_derivatives(&self) -> bool {
        self.second_derivatives().is_some()
    }

    /// ∂γ/∂q and ∂γ/∂v: exact, or central differences of γ.
    fn gamma_jacobians(
        &self,
        t: f64,
        q: &[f64],
        v: &[f64],
        dq: &mut DMatrix<f64>,
        dv: &mut DMatrix<f64>,
    ) {
        match self.second_derivatives() {
            Some(d) => d.exact_gamma_jacobians(t, q, v, dq, dv),
            None => finite_differences::gamma_jacobians(self, t, q, v, dq, dv),
        }
    }

    /// ∂(Φ_q a)/∂q: exact, or central differences of Φ_q.
    fn constraint_hessian_product(&self, t: f64, q: &[f64], a: &[f64], out: &mut DMatrix<f64>) {
        match self.second_derivatives() {
            Some(d) => d.exact_constraint_hessian_product(t, q, a, out),
            None => finite_differences::constraint_hessian_product(self, t, q, a, out),
        }
    }

    /// Φ_qt: exact, or central differences of Φ_t.
    fn constraint_time_jacobian(&self, t: f64, q: &[f64], out: &mut DMatrix<f64>) {
        match self.second_derivatives() {
            Some(d) => d.exact_constraint_time_jacobian(t, q, out),
            None => finite_differences::constraint_time_jacobian(self, t, q, out),
        }
    }

    /// ∂(M a)/∂q: zero for a constant M, exact, or central differences.
    fn mass_matrix_derivative(&self, q: &[f64], a: &[f64], out: &mut DMatrix<f64>) {
        if self.mass_matrix_is_constant() {
            out.fill(0.0);
            return;
        }
        match self.second_derivatives() {
            Some(d) => d.exact_mass_matrix_derivative(q, a, out),
            None => finite_differences::mass_matrix_derivative(self, q, a, out),
        }
    }

    /// The Φ_q pattern, or `None` (dense).
    fn constraint_jacobian_pattern(&self) -> Option<Vec<(usize, usize)>> {
        self.sparsity().map(Sparsity::jacobian_pattern)
    }

    /// The tangent pattern, or `None` (dense).
    fn tangent_pattern(&self) -> Option<Vec<(usize, usize)>> {
        self.sparsity().map(Sparsity::tangent_entries)
    }

    /// Φ_q into `jac`: in O(nnz), or through a dense matrix (allocates)
    /// when the system has no sparsity.
    fn sparse_constraint_jacobian(&self, t: f64, q: &[f64], jac: &mut SparseMatrix) {
        match self.sparsity() {
            Some(s) => s.fill_constraint_jacobian(t, q, jac),
            None => {
                let mut dense = DMatrix::zeros(jac.nrows(), jac.ncols());
                self.constraint_jacobian(t, q, &mut dense);
                jac.load_dense(&dense);
            }
        }
    }

    /// The sparse tangent ([`Sparsity::fill_tangent`]); false without
    /// sparsity (the caller uses the dense Jacobians).
    #[allow(clippy::too_many_arguments)]
    fn sparse_tangent(
        &self,
        t: f64,
        q: &[f64],
        v: &[f64],
        lambda: &[f64],
        pattern: &[(usize, usize)],
        k: &mut [f64],
        c: &mut [f64],
    ) -> bool {
        self.sparsity()
            .is_some_and(|s| s.fill_tangent(t, q, v, lambda, pattern, k, c))
    }

    /// Q_a into `qa`; false (`qa` unspecified) when the system cannot tell
    /// its applied loads apart: the energy-balance check is then skipped
    /// for models with applied loads.
    fn applied_forces(&self, t: f64, q: &[f64], v: &[f64], qa: &mut [f64]) -> bool {
        match self.applied_loads() {
            Some(a) => {
                a.applied_load_forces(t, q, v, qa);
                true
            }
            None => false,
        }
    }

    /// Number of switching functions (0 without the capability).
    fn n_switching_functions(&self) -> usize {
        self.switching()
            .map_or(0, SwitchingFunctions::switching_count)
    }

    /// The switching functions into `s`.
    fn switching_functions(&self, t: f64, q: &[f64], v: &[f64], s: &mut [f64]) {
        if let Some(sw) = self.switching() {
            sw.switching_values(t, q, v, s);
        }
    }

    /// Name of switching function `i`.
    fn switching_label(&self, i: usize) -> String {
        self.switching().map_or_else(
            || format!("switching function {i}"),
            |s| s.switching_name(i),
        )
    }

    /// Output column suffixes of switching function `i`.
    fn switching_quantities(&self, i: usize) -> [&'static str; 2] {
        self.switching()
            .map_or(["gap", "normal_force"], |s| s.switching_columns(i))
    }

    /// Gap and normal force of switching function `i` (NaN without one).
    fn contact_state(&self, t: f64, q: &[f64], v: &[f64], i: usize) -> (f64, f64) {
        self.switching()
            .map_or((f64::NAN, f64::NAN), |s| s.switching_state(t, q, v, i))
    }

    /// Coefficient of restitution of switching function `i`, if an impact
    /// contact.
    fn restitution(&self, i: usize) -> Option<f64> {
        self.switching().and_then(|s| s.impact_restitution(i))
    }

    /// Velocities just after the impact of switching function `i` at
    /// (t, q, v) into `v_out`: Newton's law g'⁺ = −e g'⁻ with the impulse
    /// consistent with this system's joints,
    ///
    /// ```text
    /// [M Φ_qᵀ; Φ_q 0] [u; μ] = [w; 0],   v⁺ = v + P u,   P = −(1 + e) (w·v)/(w·u)
    /// ```
    ///
    /// (w = ∂g/∂q the impulse direction; Pfeiffer & Glocker 1996,
    /// *Multibody Dynamics with Unilateral Contacts*, ch. 7). M and Φ_q are
    /// this system's: on [`crate::IndependentRows`] the independent rows.
    /// With dependent rows (a system run on all its rows, as penalty and
    /// the augmented Lagrangian do) the KKT matrix is singular but u is
    /// still unique (μ is not): it is then the least-squares solution by
    /// SVD, accepted where it solves the system. Ok(false) when `i` is not an impact contact or is not closing (v
    /// unchanged). Allocates (events are rare).
    ///
    /// # Errors
    /// A message naming the contact when no unique impulse exists.
    fn apply_impact(
        &self,
        t: f64,
        q: &[f64],
        v: &[f64],
        i: usize,
        v_out: &mut [f64],
    ) -> Result<bool, String> {
        v_out.copy_from_slice(v);
        let Some(sw) = self.switching() else {
            return Ok(false);
        };
        let Some(restitution) = sw.impact_restitution(i) else {
            return Ok(false);
        };
        let n = self.nv();
        let mut w = vec![0.0; n];
        if !sw.impulse_direction(t, q, i, &mut w) {
            return Ok(false);
        }
        let closing: f64 = w.iter().zip(v).map(|(a, b)| a * b).sum();
        if closing >= 0.0 {
            return Ok(false);
        }
        // [M Φ_qᵀ; Φ_q 0] [u; μ] = [w; 0]: the velocity change of a unit
        // normal impulse that keeps the joints (Φ_q u = 0)
        let m = self.nc();
        let mut data = SystemData::new(self.nq(), n, m);
        self.mass_matrix(q, &mut data.mass_matrix);
        self.constraint_jacobian(t, q, &mut data.dense_jacobian);
        let mut kkt = DMatrix::zeros(n + m, n + m);
        kkt.view_mut((0, 0), (n, n)).copy_from(&data.mass_matrix);
        kkt.view_mut((n, 0), (m, n)).copy_from(&data.dense_jacobian);
        kkt.view_mut((0, n), (n, m))
            .copy_from(&data.dense_jacobian.transpose());
        let mut rhs = DVector::zeros(n + m);
        rhs.rows_mut(0, n).copy_from_slice(&w);
        let u = kkt
            .clone()
            .full_piv_lu()
            .solve(&rhs)
            .or_else(|| consistent_least_squares(kkt, &rhs))
            .filter(|u| u.iter().all(|x| x.is_finite()))
            .ok_or_else(|| {
                format!(
                    "the impact of contact '{}' has no unique impulse: the matrix [M Φ_qᵀ; Φ_q 0] is singular",
                    sw.switching_name(i)
                )
            })?;
        let wu: f64 = (0..n).map(|k| w[k] * u[k]).sum();
        if !(wu > 0.0) {
            return Err(format!(
                "the impact of contact '{}' cannot change the gap's rate: the contact normal is blocked by the joints",
                sw.switching_name(i)
            ));
        }
        // Newton's law: g'⁺ = −e g'⁻
        let p = -(1.0 + restitution) * closing / wu;
        for k in 0..n {
            v_out[k] += p * u[k];
        }
        Ok(true)
    }

    /// Number of friction rows (0 without the capability).
    fn n_friction_rows(&self) -> usize {
        self.friction().map_or(0, FrictionRows::friction_count)
    }

    /// Friction element `i` ([`FrictionRows::friction_element`]).
    ///
    /// # Panics
    /// On a system without friction rows (there is no row `i` to ask for).
    fn friction_row(&self, t: f64, q: &[f64], v: &[f64], i: usize, jf: &mut [f64]) -> FrictionRow {
        match self.friction() {
            Some(f) => f.friction_element(t, q, v, i, jf),
            None => panic!("friction row {i} asked of a system without friction rows"),
        }
    }

    /// Name of friction row `i`.
    fn friction_label(&self, i: usize) -> String {
        self.friction()
            .map_or_else(|| format!("friction {i}"), |f| f.friction_name(i))
    }

    /// Rows of the friction element of row `i`
    /// ([`FrictionRows::friction_dimension`]; 1 without the capability).
    fn friction_element_rows(&self, i: usize) -> usize {
        self.friction().map_or(1, |f| f.friction_dimension(i))
    }
}

impl<S: MechanicalSystem + ?Sized> SystemQueries for S {}

/// The minimum-norm least-squares solution x of the singular system
/// A x = b by SVD, or `None` when b is not in the range of A (the residual
/// exceeds 1e-9 of |b|): for a KKT matrix with dependent constraint rows,
/// whose accelerations or velocity changes are unique and whose
/// multipliers are not.
fn consistent_least_squares(a: DMatrix<f64>, b: &DVector<f64>) -> Option<DVector<f64>> {
    let svd = a.clone().svd(true, true);
    let eps = 1e-12 * svd.singular_values.max();
    let x = svd.solve(b, eps).ok()?;
    let residual = (&a * &x - b).norm();
    (residual <= 1e-9 * b.norm().max(f64::MIN_POSITIVE)).then_some(x)
}

impl SystemData {
    /// The workspace of `sys` with Φ_q in its sparsity pattern (dense
    /// without one): what [`MechanicalSystem::data`] returns for a system
    /// that needs no scratch of its own.
    #[must_use]
    pub fn for_system<S: MechanicalSystem + ?Sized>(sys: &S) -> SystemData {
        let pattern = sys.constraint_jacobian_pattern();
        SystemData::with_jacobian_pattern(sys.nq(), sys.nv(), sys.nc(), pattern.as_deref())
    }
}

/// [`MechanicalSystem::evaluate`] by the single-quantity methods one after
/// another (what they share is recomputed), Φ_q through the dense scratch
/// `data.dense_jacobian` (resized once if the system declared a sparse
/// pattern): for systems without a one-pass evaluation of their own.
pub fn evaluate_each<S: MechanicalSystem + ?Sized>(
    sys: &S,
    data: &mut SystemData,
    t: f64,
    q: &[f64],
    v: &[f64],
    what: Quantities,
) {
    if what.contains(Quantities::MASS_MATRIX)
        && !(data.mass_matrix_filled && sys.mass_matrix_is_constant())
    {
        if data.mass_is_stored_diagonal() {
            // a diagonal-storage workspace (none of the shipped systems
            // evaluates one here): the dense M once, its diagonal kept
            let mut dense = DMatrix::zeros(data.nv, data.nv);
            sys.mass_matrix(q, &mut dense);
            for (i, d) in data.mass_diagonal.iter_mut().enumerate() {
                *d = dense[(i, i)];
            }
        } else {
            sys.mass_matrix(q, &mut data.mass_matrix);
        }
        data.mass_matrix_filled = true;
    }
    if what.contains(Quantities::FORCES) {
        sys.generalized_forces(t, q, v, &mut data.forces);
    }
    if what.contains(Quantities::CONSTRAINTS) {
        sys.constraints(t, q, &mut data.constraints);
    }
    if what.contains(Quantities::CONSTRAINT_JACOBIAN)
        || what.contains(Quantities::VELOCITY_CONSTRAINTS)
    {
        if data.dense_jacobian.shape() != data.constraint_jacobian.shape() {
            data.dense_jacobian = DMatrix::zeros(data.nc, data.nv);
        }
        sys.constraint_jacobian(t, q, &mut data.dense_jacobian);
        data.constraint_jacobian.load_dense(&data.dense_jacobian);
    }
    if what.contains(Quantities::VELOCITY_CONSTRAINTS) {
        sys.constraint_time_derivative(t, q, &mut data.constraint_time_derivative);
        data.velocity_constraints
            .copy_from_slice(&data.constraint_time_derivative);
        data.constraint_jacobian
            .mul_add(v, &mut data.velocity_constraints);
    }
    if what.contains(Quantities::GAMMA) {
        sys.gamma(t, q, v, &mut data.gamma);
    }
    data.t = t;
    data.evaluated = what;
}

/// The structure of a system that tells nothing of its mass matrix.
impl Structure {
    /// Neither constant nor diagonal.
    pub const GENERAL: Structure = Structure {
        mass_matrix_is_constant: false,
        mass_matrix_is_diagonal: false,
    };
}

/// The accessors of capabilities a system does not have, each named:
/// `absent_capabilities!(sparsity, switching);` in an
/// `impl MechanicalSystem` writes `fn sparsity(&self) -> Option<&dyn
/// Sparsity> { None }` and the same for `switching`. Names:
/// `second_derivatives`, `sparsity`, `applied_loads`, `switching`,
/// `friction`, `joint_coordinates`. A capability left out of both the list
/// and the impl is still a compile error.
#[macro_export]
macro_rules! absent_capabilities {
    ($($cap:ident),+ $(,)?) => {
        $($crate::absent_capabilities!(@one $cap);)+
    };
    (@one second_derivatives) => {
        fn second_derivatives(&self) -> Option<&dyn $crate::SecondDerivatives> {
            None
        }
    };
    (@one sparsity) => {
        fn sparsity(&self) -> Option<&dyn $crate::Sparsity> {
            None
        }
    };
    (@one applied_loads) => {
        fn applied_loads(&self) -> Option<&dyn $crate::AppliedLoads> {
            None
        }
    };
    (@one switching) => {
        fn switching(&self) -> Option<&dyn $crate::SwitchingFunctions> {
            None
        }
    };
    (@one friction) => {
        fn friction(&self) -> Option<&dyn $crate::FrictionRows> {
            None
        }
    };
    (@one joint_coordinates) => {
        fn joint_coordinates(&self) -> Option<Box<dyn $crate::JointCoordinateSystem>> {
            None
        }
    };
}
