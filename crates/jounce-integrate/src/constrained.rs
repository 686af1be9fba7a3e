//! The constrained second-order problem: the equations of motion of a
//! mechanical system integrated as the index-3 DAE they are,
//!
//! ```text
//! M(q) q'' + Φ_q(t, q)ᵀ λ = Q(t, q, q')          (n_v equations)
//!                Φ(t, q)   = 0                   (m equations)
//! ```
//!
//! (jalon-bayo ch. 7, eq. 7.1; Arnold & Brüls 2007, Multibody Syst. Dyn.
//! 18:185–202, eq. 1). Drivers solve for the accelerations and the
//! multipliers λ together, so no KKT matrix is refactored at every
//! right-hand side and the position constraints hold to the Newton
//! tolerance at every step.
//!
//! Owns the contract only; nothing here knows about bodies. Positions and
//! velocities may differ in size (n_q ≥ n_v: unit quaternions in spatial
//! bodies): the position update goes through
//! [`ConstrainedSecondOrderProblem::integrate_positions`], the only place
//! where q and a velocity-sized increment meet. A problem with m = 0 is an
//! ordinary second-order system (see [`Unconstrained`]).

use nalgebra::DMatrix;

use crate::error::EvalError;
use crate::problem::SecondOrderProblem;

/// M(q) q'' + Φ_qᵀλ = Q(t, q, q'), Φ(t, q) = 0 (module documentation).
///
/// Evaluations take `&mut self` so that implementations keep their own
/// scratch space (the model/data split: immutable model data in the
/// system, mutable workspace in the problem); they must not allocate.
pub trait ConstrainedSecondOrderProblem {
    /// Number of position coordinates n_q = dim(q).
    fn n_positions(&self) -> usize;

    /// Number of velocity coordinates n_v = dim(v) = dim(q'') (n_v ≤ n_q).
    fn n_velocities(&self) -> usize;

    /// Number of constraint equations m = dim(Φ) = dim(λ).
    fn n_constraints(&self) -> usize;

    /// q ⊕ Δ: the position reached from q by the velocity-sized increment
    /// Δ (len n_v) into `out` (len n_q). Default: q + Δ (n_q = n_v).
    fn integrate_positions(&self, q: &[f64], delta: &[f64], out: &mut [f64]) {
        for i in 0..out.len() {
            out[i] = q[i] + delta[i];
        }
    }

    /// q' = T(q) v (len n_q): the kinematic map from velocities to the
    /// rate of the positions, for the DAE forms (`q' − T(q) v = 0`).
    /// Default: q' = v (n_q = n_v).
    fn position_derivative(&self, _q: &[f64], v: &[f64], qdot: &mut [f64]) {
        qdot.copy_from_slice(v);
    }

    /// Mass matrix M(t, q) (n_v × n_v), symmetric, positive definite on
    /// the null space of Φ_q (it may be singular: point masses).
    fn mass_matrix(&mut self, t: f64, q: &[f64], m: &mut DMatrix<f64>) -> Result<(), EvalError>;

    /// Whether M depends on neither t nor q (planar body coordinates): a
    /// method may then evaluate it once, and ∂(M a)/∂q = 0.
    fn mass_matrix_is_constant(&self) -> bool {
        false
    }

    /// Applied generalized forces Q(t, q, v) (len n_v), including
    /// velocity-dependent terms.
    fn forces(&mut self, t: f64, q: &[f64], v: &[f64], f: &mut [f64]) -> Result<(), EvalError>;

    /// Constraint equations Φ(t, q) (len m).
    fn constraints(&mut self, t: f64, q: &[f64], phi: &mut [f64]) -> Result<(), EvalError>;

    /// Constraint Jacobian Φ_q (m × n_v), with respect to the velocity
    /// coordinates (Φ' = Φ_q v + Φ_t).
    fn constraint_jacobian(
        &mut self,
        t: f64,
        q: &[f64],
        jac: &mut DMatrix<f64>,
    ) -> Result<(), EvalError>;

    /// ν = −Φ_t (len m), the right-hand side of the velocity constraints
    /// Φ_q v = ν.
    fn velocity_rhs(&mut self, t: f64, q: &[f64], nu: &mut [f64]) -> Result<(), EvalError>;

    /// γ (len m), the right-hand side of the acceleration constraints
    /// Φ_q q'' = γ = −(Φ_q v)_q v − 2 Φ_qt v − Φ_tt.
    fn gamma(&mut self, t: f64, q: &[f64], v: &[f64], gamma: &mut [f64]) -> Result<(), EvalError>;

    /// The Newton residual of an index-3 step in one evaluation:
    /// r = M(q) a + Φ_q(q)ᵀλ − Q(t, q, v) (len n_v) and Φ(t, q) (len m).
    /// Drivers call it on the sparse path
    /// ([`ConstrainedSecondOrderProblem::sparsity`]), so that a residual
    /// costs O(nnz), not the O(n_v²) of forming M and Φ_q densely.
    ///
    /// Default: the dense evaluation in scratch it allocates (problems
    /// that declare a sparsity override it).
    #[allow(clippy::too_many_arguments)]
    fn residual(
        &mut self,
        t: f64,
        q: &[f64],
        v: &[f64],
        a: &[f64],
        lambda: &[f64],
        r: &mut [f64],
        phi: &mut [f64],
    ) -> Result<(), EvalError> {
        let (n, m) = (self.n_velocities(), self.n_constraints());
        let (mut mass, mut jac) = (DMatrix::zeros(n, n), DMatrix::zeros(m, n));
        dynamic_residual(self, t, q, v, a, lambda, &mut mass, &mut jac, r)?;
        self.constraints(t, q, phi)
    }

    /// Consistent accelerations and multipliers at (t, q, v) by the
    /// problem's own factorisation of the KKT system
    ///
    /// ```text
    /// [ M(q)   Φ_qᵀ ] [ q̈ ]   [ Q(t, q, v) ]
    /// [ Φ_q    0    ] [ λ  ] = [ γ(t, q, v) ]
    /// ```
    ///
    /// (the index-1 equations of motion without stabilisation,
    /// jalon-bayo ch. 7), into `qdd` (len n_v) and `lambda` (len m).
    /// `Ok(false)` where the problem has none (the default): the caller
    /// then forms the matrix densely. A problem whose M is block diagonal
    /// solves it in O(nnz) by the Schur complement Φ_q M⁻¹ Φ_qᵀ, where the
    /// dense LU of the (n_v + m)² matrix costs O((n_v + m)³): 50 s before
    /// the first step of a 1000-link chain (issue 32).
    ///
    /// # Errors
    /// [`EvalError::Singular`] when the KKT matrix is singular.
    fn consistent_acceleration(
        &mut self,
        _t: f64,
        _q: &[f64],
        _v: &[f64],
        _qdd: &mut [f64],
        _lambda: &mut [f64],
    ) -> Result<bool, EvalError> {
        Ok(false)
    }

    /// Whether [`ConstrainedSecondOrderProblem::residual`] is the
    /// problem's own allocation-free evaluation (drivers then use it on
    /// the dense path too: one pass over the elements instead of four).
    /// Default `false`: the default `residual` allocates.
    fn has_own_residual(&self) -> bool {
        false
    }

    /// Which entries of M, C, K (n_v × n_v) and Φ_q (m × n_v) can be
    /// nonzero, or `None` (the default) to have drivers treat them as
    /// dense. A problem that declares a pattern promises that every other
    /// entry is zero at every (t, q, v, q̈, λ); drivers then assemble and
    /// factor the iteration matrix [M + γ'C + β'K, Φ_qᵀ; Φ_q, 0] sparse
    /// ([`crate::sparse_lu::SparseLu`]), which makes a chain of N bodies
    /// cost O(N) per factorisation instead of O(N³). Called at set-up
    /// (reset), never on the hot path; it may allocate.
    fn sparsity(&self) -> Option<IterationSparsity> {
        None
    }

    /// Φ_q(t, q) at the entries of [`ConstrainedSecondOrderProblem::sparsity`]'s
    /// `constraint_jacobian`, row by row with the columns of each row
    /// ascending (compressed sparse rows of that pattern), into `values`;
    /// `Ok(false)` when the problem has no such evaluation (the default;
    /// drivers then gather from [`ConstrainedSecondOrderProblem::constraint_jacobian`]).
    /// O(nnz) where the dense evaluation costs O(m n_v).
    fn sparse_constraint_jacobian(
        &mut self,
        _t: f64,
        _q: &[f64],
        _values: &mut [f64],
    ) -> Result<bool, EvalError> {
        Ok(false)
    }

    /// M(t, q) at the entries `entries` (sorted, the tangent pattern of
    /// [`ConstrainedSecondOrderProblem::sparsity`] with the diagonal):
    /// entry e of `values` is M at `entries[e]`, with no n × n fill.
    /// `Ok(false)` where the problem has no such evaluation (the default;
    /// the caller then uses [`ConstrainedSecondOrderProblem::mass_matrix`]).
    fn sparse_mass_matrix(
        &mut self,
        _t: f64,
        _q: &[f64],
        _entries: &[(usize, usize)],
        _values: &mut [f64],
    ) -> Result<bool, EvalError> {
        Ok(false)
    }

    /// Tangent matrices of the dynamic residual
    /// r(q, v, a, λ) = M(q) a + Φ_q(q)ᵀ λ − Q(t, q, v):
    /// K = ∂r/∂q (n_v × n_v, the mass-matrix and constraint-force
    /// derivatives included) and C = ∂r/∂v.
    ///
    /// Default: forward differences of the residual (allocates; problems on
    /// hot paths override it).
    fn tangent(
        &mut self,
        t: f64,
        q: &[f64],
        v: &[f64],
        a: &[f64],
        lambda: &[f64],
        k: &mut DMatrix<f64>,
        c: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        fd_constrained_tangent(self, t, q, v, a, lambda, k, c)
    }

    /// K and C of [`ConstrainedSecondOrderProblem::tangent`] on the sparse
    /// pattern `entries` (sorted, the tangent pattern of
    /// [`ConstrainedSecondOrderProblem::sparsity`] with the diagonal):
    /// entry e of `k` and `c` is (i, j) = `entries[e]`, with no n × n fill.
    /// `Ok(false)` where the problem has no such evaluation (the caller
    /// then uses `tangent`). Default: `Ok(false)`.
    #[allow(clippy::too_many_arguments)]
    fn sparse_tangent(
        &mut self,
        _t: f64,
        _q: &[f64],
        _v: &[f64],
        _a: &[f64],
        _lambda: &[f64],
        _entries: &[(usize, usize)],
        _k: &mut [f64],
        _c: &mut [f64],
    ) -> Result<bool, EvalError> {
        Ok(false)
    }

    /// Whether [`ConstrainedSecondOrderProblem::tangent`] (and the two
    /// derivatives below) are exact.
    fn has_exact_tangent(&self) -> bool {
        false
    }

    /// ∂(Φ_qᵀ μ)/∂q (n_v × n_v) for a fixed μ (len m): the constraint-force
    /// stiffness, needed on its own by the stabilised index-2 (GGL) form.
    ///
    /// Default: the difference of two tangents at μ and at 0 (the only
    /// term of K that depends on the multipliers; allocates).
    fn constraint_force_jacobian(
        &mut self,
        t: f64,
        q: &[f64],
        mu: &[f64],
        out: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        let (n, m) = (self.n_velocities(), self.n_constraints());
        let (z, zm) = (vec![0.0; n], vec![0.0; m]);
        let (mut k0, mut c) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
        self.tangent(t, q, &z, &z, &zm, &mut k0, &mut c)?;
        self.tangent(t, q, &z, &z, mu, out, &mut c)?;
        *out -= k0;
        Ok(())
    }

    /// ∂(Φ_q v − ν)/∂q (m × n_v) for a fixed v: the derivative of the
    /// velocity constraints with respect to the positions,
    /// (Φ_q v)_q + Φ_qt, needed by the GGL form.
    ///
    /// Default: forward differences along
    /// [`ConstrainedSecondOrderProblem::integrate_positions`] (allocates).
    fn velocity_constraint_jacobian(
        &mut self,
        t: f64,
        q: &[f64],
        v: &[f64],
        out: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        let (nq, n, m) = (
            self.n_positions(),
            self.n_velocities(),
            self.n_constraints(),
        );
        let mut jac = DMatrix::zeros(m, n);
        let (mut nu, mut g0, mut g1) = (vec![0.0; m], vec![0.0; m], vec![0.0; m]);
        let mut eval = |p: &mut Self, x: &[f64], g: &mut [f64]| -> Result<(), EvalError> {
            p.constraint_jacobian(t, x, &mut jac)?;
            p.velocity_rhs(t, x, &mut nu)?;
            for k in 0..m {
                g[k] = (0..n).map(|j| jac[(k, j)] * v[j]).sum::<f64>() - nu[k];
            }
            Ok(())
        };
        eval(self, q, &mut g0)?;
        let (mut delta, mut qp) = (vec![0.0; n], vec![0.0; nq]);
        for j in 0..n {
            let h = f64::EPSILON.sqrt() * q.get(j).map_or(1.0, |x| x.abs().max(1.0));
            delta[j] = h;
            self.integrate_positions(q, &delta, &mut qp);
            delta[j] = 0.0;
            eval(self, &qp, &mut g1)?;
            for k in 0..m {
                out[(k, j)] = (g1[k] - g0[k]) / h;
            }
        }
        Ok(())
    }
}

/// The sparsity of the blocks of a constrained problem's iteration
/// matrix ([`ConstrainedSecondOrderProblem::sparsity`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IterationSparsity {
    /// Entries (i, j), i, j < n_v, of M, C and K that can be nonzero (one
    /// pattern for the three).
    pub tangent: Vec<(usize, usize)>,
    /// Entries (k, j), k < m, j < n_v, of Φ_q that can be nonzero.
    pub constraint_jacobian: Vec<(usize, usize)>,
}

/// r = M(q) a + Φ_q(q)ᵀ λ − Q(t, q, v) into `r`, with caller scratch.
#[allow(clippy::too_many_arguments)]
pub fn dynamic_residual<P: ConstrainedSecondOrderProblem + ?Sized>(
    p: &mut P,
    t: f64,
    q: &[f64],
    v: &[f64],
    a: &[f64],
    lambda: &[f64],
    mass: &mut DMatrix<f64>,
    jac: &mut DMatrix<f64>,
    r: &mut [f64],
) -> Result<(), EvalError> {
    let n = p.n_velocities();
    let m = p.n_constraints();
    p.mass_matrix(t, q, mass)?;
    p.forces(t, q, v, r)?;
    for i in 0..n {
        let mut s = -r[i];
        for j in 0..n {
            s += mass[(i, j)] * a[j];
        }
        r[i] = s;
    }
    if m > 0 {
        p.constraint_jacobian(t, q, jac)?;
        for i in 0..n {
            let mut s = 0.0;
            for k in 0..m {
                s += jac[(k, i)] * lambda[k];
            }
            r[i] += s;
        }
    }
    Ok(())
}

/// Forward-difference K = ∂r/∂q, C = ∂r/∂v of the dynamic residual, with
/// increments √ε · max(|x|, 1) along the velocity-sized directions
/// (positions moved through [`ConstrainedSecondOrderProblem::integrate_positions`]).
#[allow(clippy::too_many_arguments)]
pub fn fd_constrained_tangent<P: ConstrainedSecondOrderProblem + ?Sized>(
    p: &mut P,
    t: f64,
    q: &[f64],
    v: &[f64],
    a: &[f64],
    lambda: &[f64],
    k: &mut DMatrix<f64>,
    c: &mut DMatrix<f64>,
) -> Result<(), EvalError> {
    let (nq, n, m) = (p.n_positions(), p.n_velocities(), p.n_constraints());
    let mut mass = DMatrix::zeros(n, n);
    let mut jac = DMatrix::zeros(m, n);
    let (mut r0, mut r1) = (vec![0.0; n], vec![0.0; n]);
    dynamic_residual(p, t, q, v, a, lambda, &mut mass, &mut jac, &mut r0)?;
    let mut delta = vec![0.0; n];
    let mut qp = vec![0.0; nq];
    let sq = f64::EPSILON.sqrt();
    for j in 0..n {
        let h = sq * q.get(j).map_or(1.0, |x| x.abs().max(1.0));
        delta[j] = h;
        p.integrate_positions(q, &delta, &mut qp);
        delta[j] = 0.0;
        dynamic_residual(p, t, &qp, v, a, lambda, &mut mass, &mut jac, &mut r1)?;
        for i in 0..n {
            k[(i, j)] = (r1[i] - r0[i]) / h;
        }
    }
    let mut vp = v.to_vec();
    for j in 0..n {
        let h = sq * v[j].abs().max(1.0);
        vp[j] = v[j] + h;
        dynamic_residual(p, t, q, &vp, a, lambda, &mut mass, &mut jac, &mut r1)?;
        vp[j] = v[j];
        for i in 0..n {
            c[(i, j)] = (r1[i] - r0[i]) / h;
        }
    }
    Ok(())
}

/// An ordinary second-order problem M(q) q'' = f(t, q, q') seen as a
/// constrained one with m = 0, so that one structural driver serves both.
pub struct Unconstrained<'a> {
    /// The wrapped problem.
    pub inner: &'a mut dyn SecondOrderProblem,
}

impl ConstrainedSecondOrderProblem for Unconstrained<'_> {
    fn n_positions(&self) -> usize {
        self.inner.n_positions()
    }
    fn integrate_positions(&self, q: &[f64], delta: &[f64], out: &mut [f64]) {
        self.inner.integrate_positions(q, delta, out)
    }
    fn position_derivative(&self, q: &[f64], v: &[f64], qdot: &mut [f64]) {
        self.inner.position_derivative(q, v, qdot)
    }
    fn n_velocities(&self) -> usize {
        self.inner.ndof()
    }
    fn n_constraints(&self) -> usize {
        0
    }
    fn mass_matrix(&mut self, t: f64, q: &[f64], m: &mut DMatrix<f64>) -> Result<(), EvalError> {
        self.inner.mass_matrix(t, q, m)
    }
    fn forces(&mut self, t: f64, q: &[f64], v: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        self.inner.forces(t, q, v, f)
    }
    fn constraints(&mut self, _: f64, _: &[f64], _: &mut [f64]) -> Result<(), EvalError> {
        Ok(())
    }
    fn constraint_jacobian(
        &mut self,
        _: f64,
        _: &[f64],
        _: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        Ok(())
    }
    fn velocity_rhs(&mut self, _: f64, _: &[f64], _: &mut [f64]) -> Result<(), EvalError> {
        Ok(())
    }
    fn gamma(&mut self, _: f64, _: &[f64], _: &[f64], _: &mut [f64]) -> Result<(), EvalError> {
        Ok(())
    }
    fn tangent(
        &mut self,
        t: f64,
        q: &[f64],
        v: &[f64],
        a: &[f64],
        _lambda: &[f64],
        k: &mut DMatrix<f64>,
        c: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        self.inner.tangent(t, q, v, a, k, c)
    }
    fn has_exact_tangent(&self) -> bool {
        self.inner.has_exact_tangent()
    }
}
