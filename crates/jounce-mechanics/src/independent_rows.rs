//! A system restricted to its independent constraint rows: the adapter
//! through which every formulation that needs a Φ_q of full row rank runs
//! a model with redundant constraints.
//!
//! A mechanism modelled with redundant joints (a parallelogram with a
//! third crank, a doubled guide) has m constraint rows of generic rank
//! r < m: some rows are linear combinations of others wherever the
//! constraints hold. The augmented (KKT) matrix [M Φ_qᵀ; Φ_q 0] is then
//! singular and the multipliers λ are not unique. Removing the dependent
//! rows leaves the same constraint manifold when the removed rows are
//! consistent (they hold wherever the kept rows hold) and a Φ_q of full
//! row rank r, the standard treatment of redundancy (García de Jalón &
//! Bayo, *Kinematic and Dynamic Simulation of Multibody Systems*, 1994,
//! §3.4 and §5.1; Wehage & Haug 1982 for the row selection by a
//! rank-revealing factorisation). [`crate::assemble`] finds the rows to
//! drop ([`crate::Assembly::redundant_rows`]: Gram–Schmidt over the rows
//! in model order at the assembled and nearby configurations, so the
//! element declared last is dropped).
//!
//! [`IndependentRows`] presents the kept rows K of an inner system as a
//! system of its own, Φ_K(t, q) = 0 with Φ_K,q, Φ_K,t, γ_K the rows K of
//! the inner quantities, and forwards everything else (M, Q, energies,
//! second derivatives, patterns, labels). The hot path allocates nothing:
//! the inner system is evaluated into full-size scratch held by the
//! adapter (a [`RefCell`], created at set-up; the dense m × n scratch of
//! the dense single-quantity methods too, up to 2 MB, else on first use), and the
//! kept rows are copied out. Its sparse Φ_q pattern is the rows K of the
//! inner pattern, so formulations keep their sparse path.
//!
//! The multipliers a formulation computes on the adapter are those of the
//! kept rows; [`crate::MinimumNormReactions`] turns them into the
//! minimum-norm multipliers over all rows.

use std::cell::RefCell;

use nalgebra::DMatrix;

use crate::capabilities::{
    AppliedLoads, FrictionRows, SecondDerivatives, Sparsity, SwitchingFunctions, SystemQueries,
};
use crate::data::{Quantities, SystemData};
use crate::sparse::SparseMatrix;
use crate::system::{FrictionRow, MechanicalSystem, NormalForce, Structure};

/// Largest m × n_v for which the dense scratch is allocated at set-up
/// (2 MB each); larger systems allocate it at the first call of a dense
/// method (those run sparse and rarely call one).
const DENSE_AT_SETUP: usize = 1 << 18;

/// Full-size scratch of the inner system's evaluations.
#[derive(Debug)]
struct Scratch {
    /// Workspace of the inner system (all m rows).
    data: SystemData,
    /// Φ, Φ_t or γ of all rows (len m).
    rows: Vec<f64>,
    /// λ embedded in all rows, zeros in the dropped rows (len m).
    lambda: Vec<f64>,
    /// Dense m × n_v scratch for the dense single-quantity methods (0 × 0
    /// until first used when larger than [`DENSE_AT_SETUP`]).
    dense_a: DMatrix<f64>,
    /// Second dense m × n_v scratch (∂γ/∂v).
    dense_b: DMatrix<f64>,
    /// Sparse Φ_q of all rows in the inner pattern.
    jac: SparseMatrix,
}

/// The rows `kept` of an inner [`MechanicalSystem`] as a system with
/// nc = |kept| constraint rows (see the module documentation).
#[derive(Debug)]
pub struct IndependentRows<'a, S: MechanicalSystem + ?Sized> {
    inner: &'a S,
    /// Inner row of each kept row, ascending.
    kept: Vec<usize>,
    /// Inner rows left out.
    dropped: Vec<usize>,
    /// Row here of each inner row (`usize::MAX` for a dropped one).
    new_index: Vec<usize>,
    /// Sparse Φ_q pattern of the kept rows (renumbered), or `None` (dense).
    pattern: Option<Vec<(usize, usize)>>,
    scratch: RefCell<Scratch>,
}

impl<'a, S: MechanicalSystem + ?Sized> IndependentRows<'a, S> {
    /// The inner system without its rows `dropped` (e.g.
    /// [`crate::Assembly::redundant_rows`]); rows out of range or repeated
    /// are ignored. Set-up: allocates the scratch.
    #[must_use]
    pub fn new(inner: &'a S, dropped: &[usize]) -> IndependentRows<'a, S> {
        let m = inner.nc();
        let mut is_dropped = vec![false; m];
        for &r in dropped {
            if r < m {
                is_dropped[r] = true;
            }
        }
        let kept: Vec<usize> = (0..m).filter(|&r| !is_dropped[r]).collect();
        let dropped: Vec<usize> = (0..m).filter(|&r| is_dropped[r]).collect();
        let mut new_index = vec![usize::MAX; m];
        for (k, &r) in kept.iter().enumerate() {
            new_index[r] = k;
        }
        let inner_pattern = inner.constraint_jacobian_pattern();
        let pattern = inner_pattern.as_ref().map(|p| {
            p.iter()
                .filter(|&&(i, _)| i < m && !is_dropped[i])
                .map(|&(i, j)| (new_index[i], j))
                .collect()
        });
        let jac = match &inner_pattern {
            Some(p) => SparseMatrix::from_pattern(m, inner.nv(), p),
            None => SparseMatrix::dense(m, inner.nv()),
        };
        let (dr, dc) = if m * inner.nv() <= DENSE_AT_SETUP {
            (m, inner.nv())
        } else {
            (0, 0)
        };
        let scratch = Scratch {
            data: inner.data(),
            rows: vec![0.0; m],
            lambda: vec![0.0; m],
            dense_a: DMatrix::zeros(dr, dc),
            dense_b: DMatrix::zeros(dr, dc),
            jac,
        };
        IndependentRows {
            inner,
            kept,
            dropped,
            new_index,
            pattern,
            scratch: RefCell::new(scratch),
        }
    }

    /// The inner system.
    #[must_use]
    pub fn inner(&self) -> &'a S {
        self.inner
    }

    /// Inner row of each of this system's rows, ascending.
    #[must_use]
    pub fn kept_rows(&self) -> &[usize] {
        &self.kept
    }

    /// Inner rows left out.
    #[must_use]
    pub fn dropped_rows(&self) -> &[usize] {
        &self.dropped
    }

    /// y_K = x[K]: the kept entries of an inner row vector.
    fn select(&self, full: &[f64], out: &mut [f64]) {
        for (o, &r) in out.iter_mut().zip(&self.kept) {
            *o = full[r];
        }
    }

    /// The kept rows of a dense m × c matrix into a |K| × c one.
    fn select_dense(&self, full: &DMatrix<f64>, out: &mut DMatrix<f64>) {
        for (k, &r) in self.kept.iter().enumerate() {
            for j in 0..full.ncols() {
                out[(k, j)] = full[(r, j)];
            }
        }
    }
}

/// Copy the rows `kept` of `full` (inner pattern) into `out` (the kept
/// pattern: the same columns per row, renumbered rows).
fn select_sparse(kept: &[usize], full: &SparseMatrix, out: &mut SparseMatrix) {
    for (k, &r) in kept.iter().enumerate() {
        let src = full.row_range(r);
        let dst = out.row_range(k);
        out.values[dst].copy_from_slice(&full.values[src]);
    }
}

/// A dense scratch of shape (r, c), resized only when its shape differs
/// (set-up, or the first call of a dense method).
fn sized(m: &mut DMatrix<f64>, r: usize, c: usize) {
    if m.shape() != (r, c) {
        *m = DMatrix::zeros(r, c);
    }
}

impl<S: MechanicalSystem + ?Sized> MechanicalSystem for IndependentRows<'_, S> {
    fn nq(&self) -> usize {
        self.inner.nq()
    }

    fn nv(&self) -> usize {
        self.inner.nv()
    }

    fn nc(&self) -> usize {
        self.kept.len()
    }

    fn position_derivative(&self, q: &[f64], v: &[f64], qdot: &mut [f64]) {
        self.inner.position_derivative(q, v, qdot);
    }

    fn integrate_position(&self, q: &[f64], delta: &[f64], out: &mut [f64]) {
        self.inner.integrate_position(q, delta, out);
    }

    fn position_increment(&self, q: &[f64], dq: &[f64], delta: &mut [f64]) {
        self.inner.position_increment(q, dq, delta);
    }

    fn kinematic_map_derivative(&self, q: &[f64], v: &[f64], dq: &[f64], out: &mut [f64]) {
        self.inner.kinematic_map_derivative(q, v, dq, out);
    }
    fn manifold_constraints(&self, q: &[f64], c: &mut [f64], grad: &mut DMatrix<f64>) {
        self.inner.manifold_constraints(q, c, grad);
    }

    /// The workspace of the kept rows, in their (renumbered) pattern.
    fn data(&self) -> SystemData {
        SystemData::for_system(self)
    }

    /// The inner system's one-pass evaluation into the adapter's full
    /// scratch, then the kept rows (and M, Q) copied into `data`.
    fn evaluate(&self, data: &mut SystemData, t: f64, q: &[f64], v: &[f64], what: Quantities) {
        let mut guard = self.scratch.borrow_mut();
        let s = &mut *guard;
        let constant_m = self.inner.structure().mass_matrix_is_constant;
        let mut inner_what = what;
        if what.contains(Quantities::MASS_MATRIX) && constant_m && data.mass_matrix_filled {
            // M is already in `data`: ask the inner system for the rest
            inner_what = Quantities::NONE;
            for x in [
                Quantities::FORCES,
                Quantities::CONSTRAINTS,
                Quantities::CONSTRAINT_JACOBIAN,
                Quantities::VELOCITY_CONSTRAINTS,
                Quantities::GAMMA,
            ] {
                if what.contains(x) {
                    inner_what |= x;
                }
            }
        }
        self.inner.evaluate(&mut s.data, t, q, v, inner_what);
        if inner_what.contains(Quantities::MASS_MATRIX) {
            s.data.mass_into(&mut data.mass_matrix);
            data.mass_matrix_filled = true;
        }
        if what.contains(Quantities::FORCES) {
            data.forces.copy_from_slice(&s.data.forces);
        }
        if what.contains(Quantities::CONSTRAINTS) {
            self.select(&s.data.constraints, &mut data.constraints);
        }
        if what.contains(Quantities::CONSTRAINT_JACOBIAN) {
            select_sparse(
                &self.kept,
                &s.data.constraint_jacobian,
                &mut data.constraint_jacobian,
            );
        }
        if what.contains(Quantities::VELOCITY_CONSTRAINTS) {
            self.select(
                &s.data.constraint_time_derivative,
                &mut data.constraint_time_derivative,
            );
            self.select(&s.data.velocity_constraints, &mut data.velocity_constraints);
        }
        if what.contains(Quantities::GAMMA) {
            self.select(&s.data.gamma, &mut data.gamma);
        }
        data.t = t;
        data.evaluated = what;
    }

    fn structure(&self) -> Structure {
        self.inner.structure()
    }

    fn mass_matrix(&self, q: &[f64], m: &mut DMatrix<f64>) {
        self.inner.mass_matrix(q, m);
    }

    fn generalized_forces(&self, t: f64, q: &[f64], v: &[f64], f: &mut [f64]) {
        self.inner.generalized_forces(t, q, v, f);
    }

    fn force_jacobians(
        &self,
        t: f64,
        q: &[f64],
        v: &[f64],
        dq: &mut DMatrix<f64>,
        dv: &mut DMatrix<f64>,
    ) {
        self.inner.force_jacobians(t, q, v, dq, dv);
    }

    fn constraints(&self, t: f64, q: &[f64], phi: &mut [f64]) {
        let mut s = self.scratch.borrow_mut();
        self.inner.constraints(t, q, &mut s.rows);
        self.select(&s.rows, phi);
    }

    fn constraint_jacobian(&self, t: f64, q: &[f64], jac: &mut DMatrix<f64>) {
        let mut s = self.scratch.borrow_mut();
        sized(&mut s.dense_a, self.inner.nc(), self.inner.nv());
        self.inner.constraint_jacobian(t, q, &mut s.dense_a);
        self.select_dense(&s.dense_a, jac);
    }

    fn constraint_time_derivative(&self, t: f64, q: &[f64], phi_t: &mut [f64]) {
        let mut s = self.scratch.borrow_mut();
        self.inner.constraint_time_derivative(t, q, &mut s.rows);
        self.select(&s.rows, phi_t);
    }

    fn gamma(&self, t: f64, q: &[f64], v: &[f64], gamma: &mut [f64]) {
        let mut s = self.scratch.borrow_mut();
        self.inner.gamma(t, q, v, &mut s.rows);
        self.select(&s.rows, gamma);
    }

    /// ∂(Φ_Kᵀ λ_K)/∂q = ∂(Φ_qᵀ λ)/∂q of the inner system with λ zero in
    /// the dropped rows.
    fn constraint_force_jacobian(&self, t: f64, q: &[f64], lambda: &[f64], out: &mut DMatrix<f64>) {
        let mut s = self.scratch.borrow_mut();
        s.lambda.fill(0.0);
        for (&r, &l) in self.kept.iter().zip(lambda) {
            s.lambda[r] = l;
        }
        self.inner.constraint_force_jacobian(t, q, &s.lambda, out);
    }

    fn kinetic_energy(&self, q: &[f64], v: &[f64]) -> f64 {
        self.inner.kinetic_energy(q, v)
    }

    fn potential_energy(&self, t: f64, q: &[f64]) -> f64 {
        self.inner.potential_energy(t, q)
    }

    fn constraint_label(&self, row: usize) -> String {
        self.inner.constraint_label(self.kept[row])
    }

    fn constraint_row_meaning(&self, row: usize) -> String {
        self.inner.constraint_row_meaning(self.kept[row])
    }

    fn coordinate_label(&self, i: usize) -> String {
        self.inner.coordinate_label(i)
    }

    fn velocity_label(&self, i: usize) -> String {
        self.inner.velocity_label(i)
    }

    fn tangent_coordinate_label(&self, i: usize) -> String {
        self.inner.tangent_coordinate_label(i)
    }

    fn breakpoints(&self) -> Vec<f64> {
        self.inner.breakpoints()
    }

    /// The inner system's, restricted to the kept rows (this adapter).
    fn second_derivatives(&self) -> Option<&dyn SecondDerivatives> {
        self.inner
            .second_derivatives()
            .map(|_| self as &dyn SecondDerivatives)
    }

    /// The kept rows of the inner patterns (this adapter).
    fn sparsity(&self) -> Option<&dyn Sparsity> {
        self.inner.sparsity().map(|_| self as &dyn Sparsity)
    }

    /// The inner system's: applied loads do not involve constraint rows.
    fn applied_loads(&self) -> Option<&dyn AppliedLoads> {
        self.inner.applied_loads()
    }

    /// The inner system's switching functions and impulse directions; the
    /// impact itself is solved on this system's M and kept rows
    /// ([`crate::SystemQueries::apply_impact`]), so redundant joints do not
    /// make it singular.
    fn switching(&self) -> Option<&dyn SwitchingFunctions> {
        self.inner.switching()
    }

    /// The inner system's friction elements with their normal-force rows
    /// renumbered to the kept rows (this adapter).
    fn friction(&self) -> Option<&dyn FrictionRows> {
        self.inner.friction().map(|_| self as &dyn FrictionRows)
    }

    /// None: the joint-coordinate form of the inner system has its own
    /// closure rows, which this selection does not describe.
    fn joint_coordinates(&self) -> Option<Box<dyn crate::JointCoordinateSystem>> {
        None
    }
}

impl<S: MechanicalSystem + ?Sized> SecondDerivatives for IndependentRows<'_, S> {
    fn exact_gamma_jacobians(
        &self,
        t: f64,
        q: &[f64],
        v: &[f64],
        dq: &mut DMatrix<f64>,
        dv: &mut DMatrix<f64>,
    ) {
        let mut guard = self.scratch.borrow_mut();
        let s = &mut *guard;
        let (m, n) = (self.inner.nc(), self.inner.nv());
        sized(&mut s.dense_a, m, dq.ncols());
        sized(&mut s.dense_b, m, n);
        self.inner
            .gamma_jacobians(t, q, v, &mut s.dense_a, &mut s.dense_b);
        self.select_dense(&s.dense_a, dq);
        self.select_dense(&s.dense_b, dv);
    }

    fn exact_constraint_hessian_product(
        &self,
        t: f64,
        q: &[f64],
        a: &[f64],
        out: &mut DMatrix<f64>,
    ) {
        let mut s = self.scratch.borrow_mut();
        sized(&mut s.dense_a, self.inner.nc(), out.ncols());
        self.inner
            .constraint_hessian_product(t, q, a, &mut s.dense_a);
        self.select_dense(&s.dense_a, out);
    }

    fn exact_constraint_time_jacobian(&self, t: f64, q: &[f64], out: &mut DMatrix<f64>) {
        let mut s = self.scratch.borrow_mut();
        sized(&mut s.dense_a, self.inner.nc(), out.ncols());
        self.inner.constraint_time_jacobian(t, q, &mut s.dense_a);
        self.select_dense(&s.dense_a, out);
    }

    fn exact_mass_matrix_derivative(&self, q: &[f64], a: &[f64], out: &mut DMatrix<f64>) {
        self.inner.mass_matrix_derivative(q, a, out);
    }
}

impl<S: MechanicalSystem + ?Sized> Sparsity for IndependentRows<'_, S> {
    fn jacobian_pattern(&self) -> Vec<(usize, usize)> {
        self.pattern.clone().unwrap_or_default()
    }

    fn tangent_entries(&self) -> Vec<(usize, usize)> {
        self.inner.tangent_pattern().unwrap_or_default()
    }

    /// The kept rows of the inner sparse Φ_q (O(nnz)).
    fn fill_constraint_jacobian(&self, t: f64, q: &[f64], jac: &mut SparseMatrix) {
        let mut s = self.scratch.borrow_mut();
        self.inner.sparse_constraint_jacobian(t, q, &mut s.jac);
        select_sparse(&self.kept, &s.jac, jac);
    }

    /// The inner tangent with λ zero in the dropped rows.
    fn fill_tangent(
        &self,
        t: f64,
        q: &[f64],
        v: &[f64],
        lambda: &[f64],
        pattern: &[(usize, usize)],
        k: &mut [f64],
        c: &mut [f64],
    ) -> bool {
        let mut s = self.scratch.borrow_mut();
        s.lambda.fill(0.0);
        for (&r, &l) in self.kept.iter().zip(lambda) {
            s.lambda[r] = l;
        }
        self.inner.sparse_tangent(t, q, v, &s.lambda, pattern, k, c)
    }
}

impl<S: MechanicalSystem + ?Sized> FrictionRows for IndependentRows<'_, S> {
    fn friction_count(&self) -> usize {
        self.inner.n_friction_rows()
    }

    /// The inner element, its normal force renumbered: the multiplier of a
    /// kept row is that row here; that of a dropped row is not unique (the
    /// load is shared with the rows it depends on), so it is NaN and the
    /// run fails where it would be used. Runs refuse such models before
    /// integrating.
    fn friction_element(
        &self,
        t: f64,
        q: &[f64],
        v: &[f64],
        i: usize,
        jf: &mut [f64],
    ) -> FrictionRow {
        let mut row = self.inner.friction_row(t, q, v, i, jf);
        if let NormalForce::Multiplier(r) = row.normal {
            row.normal = match self.new_index.get(r) {
                Some(&k) if k != usize::MAX => NormalForce::Multiplier(k),
                _ => NormalForce::Known(f64::NAN),
            };
        }
        row
    }

    fn friction_name(&self, i: usize) -> String {
        self.inner.friction_label(i)
    }

    fn friction_dimension(&self, i: usize) -> usize {
        self.inner.friction_element_rows(i)
    }
}
