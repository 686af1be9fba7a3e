//! The mutable half of the model/data split: [`SystemData`], the
//! workspace one evaluation of a [`crate::MechanicalSystem`] writes into,
//! and [`Quantities`], the set of quantities that evaluation computes.
//!
//! A system (the model: bodies, elements, parameters) is immutable and
//! shared; everything that depends on the state (t, q, v) lives in a
//! `SystemData` the caller owns, as MuJoCo separates `mjModel` from
//! `mjData` and Pinocchio `Model` from `Data`. One call of
//! [`crate::MechanicalSystem::evaluate`] fills every requested quantity
//! in one pass over the elements, so that what they share (gathering an
//! element's coordinates, its time function f(t), f'(t), f''(t), its
//! rotations) is computed once, and a value and its derivative come from
//! the same evaluation (Φ with Φ_q, Φ' with γ, Q with ∂Q).
//!
//! Sizes: n_q positions, n_v velocities (equal in planar body coordinates;
//! spatial bodies with unit quaternions have n_q = n_v + 1 per body), m
//! constraint rows. Every matrix is stored once here and reused: the hot
//! path allocates nothing.
//!
//! This module owns the storage only; what the quantities mean is stated
//! on the fields and on [`crate::MechanicalSystem`].

use nalgebra::DMatrix;

use crate::sparse::SparseMatrix;

/// A set of quantities for [`crate::MechanicalSystem::evaluate`], combined
/// with `|`: e.g. `Quantities::MASS_MATRIX | Quantities::GAMMA`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Quantities(u8);

impl Quantities {
    /// Nothing.
    pub const NONE: Quantities = Quantities(0);
    /// Mass matrix M(q) (n_v × n_v).
    pub const MASS_MATRIX: Quantities = Quantities(1);
    /// Applied generalized forces Q(t, q, v) (len n_v).
    pub const FORCES: Quantities = Quantities(1 << 1);
    /// Constraint equations Φ(t, q) (len m).
    pub const CONSTRAINTS: Quantities = Quantities(1 << 2);
    /// Constraint Jacobian Φ_q (m × n_v).
    pub const CONSTRAINT_JACOBIAN: Quantities = Quantities(1 << 3);
    /// Φ_t and the velocity constraints Φ' = Φ_q v + Φ_t (len m each).
    pub const VELOCITY_CONSTRAINTS: Quantities = Quantities(1 << 4);
    /// Acceleration right-hand side γ (len m), Φ_q q'' = γ.
    pub const GAMMA: Quantities = Quantities(1 << 5);
    /// What the index-1 equations of motion need: M, Q, Φ_q and γ of
    /// `[M Φ_qᵀ; Φ_q 0][q''; λ] = [Q; γ]`.
    pub const EQUATIONS_OF_MOTION: Quantities = Quantities(1 | 1 << 1 | 1 << 3 | 1 << 5);
    /// Every quantity above.
    pub const ALL: Quantities = Quantities(0b11_1111);

    /// Whether every quantity of `other` is in `self`.
    #[must_use]
    pub const fn contains(self, other: Quantities) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether the set is empty.
    #[must_use]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl std::ops::BitOr for Quantities {
    type Output = Quantities;
    fn bitor(self, rhs: Quantities) -> Quantities {
        Quantities(self.0 | rhs.0)
    }
}

impl std::ops::BitOrAssign for Quantities {
    fn bitor_assign(&mut self, rhs: Quantities) {
        self.0 |= rhs.0;
    }
}

/// State-dependent quantities of one system at one (t, q, v), written by
/// [`crate::MechanicalSystem::evaluate`] and read by the formulations.
///
/// Create it with [`crate::MechanicalSystem::data`] (sized for that
/// system); evaluate into it as often as needed without allocating. A
/// field is meaningful only when its quantity is in
/// [`SystemData::evaluated`]; the others keep whatever an earlier call
/// left.
#[derive(Clone, Debug, PartialEq)]
pub struct SystemData {
    /// Number of position coordinates n_q = dim(q).
    pub nq: usize,
    /// Number of velocity coordinates n_v = dim(v).
    pub nv: usize,
    /// Number of constraint rows m = dim(Φ).
    pub nc: usize,
    /// Time of the last evaluation.
    pub t: f64,
    /// What the last evaluation computed.
    pub evaluated: Quantities,
    /// M(q), n_v × n_v; 0 × 0 when M is stored as its diagonal in
    /// [`SystemData::mass_diagonal`] (read either through
    /// [`SystemData::mass`]).
    pub mass_matrix: DMatrix<f64>,
    /// The diagonal of M (len n_v) when the system's M is diagonal and
    /// stored so ([`SystemData::with_diagonal_mass`]); empty otherwise.
    /// A dense n_v × n_v M of a 5000-body chain would take 1.8 GB
    /// (issue 31); its diagonal takes 120 kB.
    pub mass_diagonal: Vec<f64>,
    /// Whether `mass_matrix` holds the (constant) M already, so that
    /// systems with a configuration-independent M fill it only once.
    pub mass_matrix_filled: bool,
    /// Q(t, q, v), len n_v.
    pub forces: Vec<f64>,
    /// Φ(t, q), len m.
    pub constraints: Vec<f64>,
    /// Φ_q, m × n_v: the constraint Jacobian with respect to the
    /// velocities, so that Φ' = Φ_q v + Φ_t. Sparse with the system's
    /// fixed pattern ([`crate::SystemQueries::constraint_jacobian_pattern`];
    /// every entry when the system declares none);
    /// [`SparseMatrix::to_dense`] gives the dense view.
    pub constraint_jacobian: SparseMatrix,
    /// Φ_t = ∂Φ/∂t, len m.
    pub constraint_time_derivative: Vec<f64>,
    /// Φ' = Φ_q v + Φ_t, len m.
    pub velocity_constraints: Vec<f64>,
    /// γ, len m, with Φ_q q'' = γ: γ = −(Φ_q v)_q v − 2 Φ_qt v − Φ_tt.
    pub gamma: Vec<f64>,
    /// Scratch owned by the system's own evaluation (its layout is the
    /// system's business); empty unless the system asks for it.
    pub scratch: Vec<f64>,
    /// Dense m × n_v scratch of the default
    /// [`crate::MechanicalSystem::evaluate`], which computes Φ_q densely
    /// and copies the pattern's entries (0 × 0 for a sparse pattern).
    pub dense_jacobian: DMatrix<f64>,
}

impl SystemData {
    /// Zeroed storage for n_q positions, n_v velocities and m constraint
    /// rows, with a dense Φ_q.
    #[must_use]
    pub fn new(nq: usize, nv: usize, nc: usize) -> SystemData {
        SystemData::with_jacobian_pattern(nq, nv, nc, None)
    }

    /// Zeroed storage with Φ_q restricted to the positions `pattern`
    /// (`None`: every entry).
    #[must_use]
    pub fn with_jacobian_pattern(
        nq: usize,
        nv: usize,
        nc: usize,
        pattern: Option<&[(usize, usize)]>,
    ) -> SystemData {
        SystemData::with_storage(nq, nv, nc, pattern, false)
    }

    /// Zeroed storage; M dense (n_v × n_v) or as its diagonal.
    fn with_storage(
        nq: usize,
        nv: usize,
        nc: usize,
        pattern: Option<&[(usize, usize)]>,
        diagonal_mass: bool,
    ) -> SystemData {
        let (mass_matrix, mass_diagonal) = if diagonal_mass {
            (DMatrix::zeros(0, 0), vec![0.0; nv])
        } else {
            (DMatrix::zeros(nv, nv), Vec::new())
        };
        let (constraint_jacobian, dense_jacobian) = match pattern {
            Some(p) => (SparseMatrix::from_pattern(nc, nv, p), DMatrix::zeros(0, 0)),
            None => (SparseMatrix::dense(nc, nv), DMatrix::zeros(nc, nv)),
        };
        SystemData {
            nq,
            nv,
            nc,
            t: f64::NAN,
            evaluated: Quantities::NONE,
            mass_matrix,
            mass_diagonal,
            mass_matrix_filled: false,
            forces: vec![0.0; nv],
            constraints: vec![0.0; nc],
            constraint_jacobian,
            constraint_time_derivative: vec![0.0; nc],
            velocity_constraints: vec![0.0; nc],
            gamma: vec![0.0; nc],
            scratch: Vec::new(),
            dense_jacobian,
        }
    }

    /// Storage like [`SystemData::with_jacobian_pattern`] for a system
    /// whose M is diagonal: M kept as its n_v diagonal entries in
    /// [`SystemData::mass_diagonal`], no dense n_v × n_v matrix.
    #[must_use]
    pub fn with_diagonal_mass(
        nq: usize,
        nv: usize,
        nc: usize,
        pattern: Option<&[(usize, usize)]>,
    ) -> SystemData {
        SystemData::with_storage(nq, nv, nc, pattern, true)
    }

    /// Whether M is stored as its diagonal ([`SystemData::mass_diagonal`]).
    #[must_use]
    pub fn mass_is_stored_diagonal(&self) -> bool {
        self.mass_matrix.nrows() != self.nv
    }

    /// The entry M_ij of the last evaluated M, whichever its storage.
    #[must_use]
    pub fn mass(&self, i: usize, j: usize) -> f64 {
        if self.mass_is_stored_diagonal() {
            if i == j {
                self.mass_diagonal[i]
            } else {
                0.0
            }
        } else {
            self.mass_matrix[(i, j)]
        }
    }

    /// Copies the last evaluated M into the dense `out` (n_v × n_v), for
    /// the dense fallbacks (cold paths).
    pub fn mass_into(&self, out: &mut DMatrix<f64>) {
        if self.mass_is_stored_diagonal() {
            out.fill(0.0);
            for (i, &d) in self.mass_diagonal.iter().enumerate() {
                out[(i, i)] = d;
            }
        } else {
            out.copy_from(&self.mass_matrix);
        }
    }

    /// The last evaluated M as a dense n_v × n_v matrix (allocates: cold
    /// paths only).
    #[must_use]
    pub fn mass_dense(&self) -> DMatrix<f64> {
        let mut m = DMatrix::zeros(self.nv, self.nv);
        self.mass_into(&mut m);
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_combine_and_test_membership() {
        let q = Quantities::MASS_MATRIX | Quantities::GAMMA;
        assert!(q.contains(Quantities::GAMMA));
        assert!(!q.contains(Quantities::FORCES));
        assert!(Quantities::EQUATIONS_OF_MOTION.contains(q));
        assert!(Quantities::ALL.contains(Quantities::EQUATIONS_OF_MOTION));
        assert!(!Quantities::EQUATIONS_OF_MOTION.contains(Quantities::CONSTRAINTS));
        assert!(Quantities::NONE.is_empty() && !q.is_empty());
        let mut r = Quantities::NONE;
        r |= Quantities::CONSTRAINTS;
        assert_eq!(r, Quantities::CONSTRAINTS);
    }

    #[test]
    fn storage_is_sized_by_positions_velocities_and_rows() {
        let d = SystemData::new(7, 6, 5);
        assert_eq!(d.mass_matrix.shape(), (6, 6));
        assert_eq!(d.constraint_jacobian.shape(), (5, 6));
        assert!(d.constraint_jacobian.is_dense());
        let s = SystemData::with_jacobian_pattern(6, 6, 2, Some(&[(0, 1), (1, 4)]));
        assert_eq!(s.constraint_jacobian.nnz(), 2);
        assert_eq!((d.forces.len(), d.gamma.len()), (6, 5));
        assert!(d.evaluated.is_empty());
    }

    #[test]
    fn a_diagonal_mass_is_stored_without_the_dense_matrix() {
        let mut d = SystemData::with_diagonal_mass(3, 3, 1, Some(&[(0, 1)]));
        assert_eq!(d.mass_matrix.shape(), (0, 0));
        assert!(d.mass_is_stored_diagonal());
        d.mass_diagonal.copy_from_slice(&[2.0, 3.0, 4.0]);
        assert_eq!((d.mass(1, 1), d.mass(0, 2)), (3.0, 0.0));
        assert_eq!(
            d.mass_dense(),
            DMatrix::from_diagonal(&nalgebra::DVector::from_vec(vec![2.0, 3.0, 4.0]))
        );
        assert!(!SystemData::new(3, 3, 1).mass_is_stored_diagonal());
    }
}
