//! Sparse LDLᵀ factorisation of a matrix with a fixed pattern that is
//! symmetric positive definite for most of its values, with the LU of the
//! same pattern where it is not: ordering and symbolic analysis once, every
//! refactorisation numeric only.
//!
//! The LDLᵀ is [`SparseLdlt`] (P A Pᵀ = L D Lᵀ, P the approximate minimum
//! degree ordering, Davis's up-looking simplicial LDL: its module
//! documentation). Unlike the LU with partial pivoting ([`SparseLu`]),
//! whose pivot order depends on the values and whose every full
//! factorisation redoes the Gilbert–Peierls depth-first search of the
//! reach of each column, nothing symbolic is redone.
//!
//! No pivoting, so it is used only where A is symmetric positive definite,
//! which is tested at each factorisation: symmetry of the values (|a_ij −
//! a_ji| ≤ [`SYMMETRY_TOL`] √(|a_ii a_jj|); the mean of the two is
//! factorised) and every pivot d_k positive and finite (by Sylvester's law
//! of inertia A is then positive definite, and Cholesky's backward error
//! is small without pivoting: Higham 2002, *Accuracy and Stability of
//! Numerical Algorithms*, 2nd ed., Thm. 10.5). Otherwise the same values
//! go to the LU of the same pattern ([`SparseLu`], set up at the first
//! such matrix), which decides singularity as it always did.

use crate::pattern::{ColumnPattern, FixedPattern};
use crate::sparse_ldlt::SparseLdlt;
use crate::sparse_lu::SparseLu;

/// Largest asymmetry |a_ij − a_ji| / √(|a_ii a_jj|) taken as rounding of a
/// symmetric matrix (assembled in different orders on the two sides).
pub const SYMMETRY_TOL: f64 = 1e-12;

/// Which factorisation holds the current values.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Factors {
    None,
    Ldlt,
    Lu,
}

/// LDLᵀ of an n × n matrix with a fixed symmetric pattern, falling back to
/// the LU of the same pattern for values that are not symmetric positive
/// definite (module documentation). Write values of the whole matrix (both
/// triangles) through [`FixedPattern::slot`] into [`LdltOrLu::values_mut`],
/// then [`LdltOrLu::factor`] and [`LdltOrLu::solve_in_place`]: the
/// interface of [`SparseLu`].
pub struct LdltOrLu {
    /// The whole pattern (symmetric, the diagonal included).
    pattern: ColumnPattern,
    values: Vec<f64>,
    /// The LDLᵀ of the upper triangle, and for each of its values (in its
    /// `ax` order) the slots of a_ij and a_ji in `values`.
    ldlt: SparseLdlt,
    pair: Vec<(usize, usize)>,
    /// Slots of a_ii in `values` (i in the original order).
    diag: Vec<usize>,
    /// Permuted right-hand side of a solve.
    work: Vec<f64>,
    /// The LU of the same pattern, for values that are not symmetric
    /// positive definite (set up at the first such values).
    lu: Option<Box<SparseLu>>,
    factors: Factors,
    /// LDLᵀ and LU factorisations so far (the tests' count of the path
    /// taken).
    n_ldlt: u64,
    n_lu: u64,
}

impl std::fmt::Debug for LdltOrLu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LdltOrLu")
            .field("n", &self.dim())
            .field("nnz", &self.nnz())
            .field("factor_nnz", &self.ldlt.factor_nnz())
            .field("factors", &self.factors)
            .finish()
    }
}

/// The symmetrised pattern; slots index [`LdltOrLu::values_mut`].
impl FixedPattern for LdltOrLu {
    fn pattern(&self) -> &ColumnPattern {
        &self.pattern
    }
}

impl LdltOrLu {
    /// Ordering and symbolic analysis of the pattern made of `entries`
    /// (row, column), symmetrised, the diagonal included; duplicates are
    /// merged.
    ///
    /// # Panics
    /// If an entry lies outside the matrix (a programming error of the
    /// caller, which builds the pattern from its own dimensions).
    #[must_use]
    pub fn new(n: usize, entries: &[(usize, usize)]) -> Self {
        let pattern = ColumnPattern::symmetric(n, entries);
        let whole: Vec<(usize, usize)> = pattern.entries().collect();
        let ldlt = SparseLdlt::new(n, &whole);
        let slot_of = |i: usize, j: usize| pattern.slot(i, j).expect("symmetric pattern");
        let mut pair = vec![(0, 0); ldlt.nnz()];
        for &(i, j) in whole.iter().filter(|&&(i, j)| i <= j) {
            let k = ldlt.slot(i, j).expect("the LDLᵀ holds the upper triangle");
            pair[k] = (slot_of(i, j), slot_of(j, i));
        }
        let diag = (0..n).map(|i| slot_of(i, i)).collect();
        Self {
            values: vec![0.0; pattern.nnz()],
            pattern,
            ldlt,
            pair,
            diag,
            work: vec![0.0; n],
            lu: None,
            factors: Factors::None,
            n_ldlt: 0,
            n_lu: 0,
        }
    }

    /// Nonzeros of the LDLᵀ's L below the diagonal (fill included).
    #[must_use]
    pub fn factor_nnz(&self) -> usize {
        self.ldlt.factor_nnz()
    }

    /// The values of A in pattern order (column by column); writing them
    /// forgets the factorisation.
    pub fn values_mut(&mut self) -> &mut [f64] {
        self.factors = Factors::None;
        &mut self.values
    }

    /// The values of A in pattern order.
    #[must_use]
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// LDLᵀ factorisations so far.
    #[must_use]
    pub fn ldlt_count(&self) -> u64 {
        self.n_ldlt
    }

    /// LU factorisations so far (values not symmetric positive definite).
    #[must_use]
    pub fn lu_count(&self) -> u64 {
        self.n_lu
    }

    /// Factorise the current values: LDLᵀ where they are symmetric
    /// positive definite, else the LU with partial pivoting. `false` when
    /// the LU finds A singular (a zero or non-finite pivot); the
    /// factorisation is then unusable.
    pub fn factor(&mut self) -> bool {
        self.factors = Factors::None;
        if self.factor_ldlt() {
            self.n_ldlt += 1;
            self.factors = Factors::Ldlt;
            return true;
        }
        let pattern = &self.pattern;
        let lu = self
            .lu
            .get_or_insert_with(|| Box::new(SparseLu::with_pattern(pattern.clone())));
        // the same pattern, so the same slots
        lu.values_mut().copy_from_slice(&self.values);
        self.n_lu += 1;
        if lu.factor() {
            self.factors = Factors::Lu;
            true
        } else {
            false
        }
    }

    /// The symmetry test, the upper triangle gathered, the numeric LDLᵀ and
    /// the pivot test, every d_k positive and finite (module
    /// documentation); `false` when A is not symmetric positive definite.
    fn factor_ldlt(&mut self) -> bool {
        let row_idx = self.pattern.row_idx();
        for (x, &(s1, s2)) in self.ldlt.ax.iter_mut().zip(&self.pair) {
            let (a, b) = (self.values[s1], self.values[s2]);
            if a != b {
                // the scale √(|a_ii a_jj|) of the two diagonal entries
                let (i, j) = (row_idx[s1], row_idx[s2]);
                let scale = (self.values[self.diag[i]] * self.values[self.diag[j]])
                    .abs()
                    .sqrt();
                if !((a - b).abs() <= SYMMETRY_TOL * scale) {
                    return false;
                }
            }
            *x = 0.5 * (a + b);
        }
        // d_k > 0 · |a_kk|: positive and finite
        self.ldlt.factor(0.0).is_ok()
    }

    /// Whether a factorisation of the current values is available.
    #[must_use]
    pub fn is_factored(&self) -> bool {
        self.factors != Factors::None
    }

    /// Forget the factorisation.
    pub fn invalidate(&mut self) {
        self.factors = Factors::None;
    }

    /// Solve A x = b in place with the factors (the LDLᵀ's by
    /// [`SparseLdlt::solve_in_place_by_reciprocals`]).
    ///
    /// # Panics
    /// If no factorisation is available (a programming error of the caller).
    pub fn solve_in_place(&mut self, b: &mut [f64]) {
        match self.factors {
            Factors::None => panic!("LdltOrLu::solve_in_place before factor"),
            Factors::Lu => self
                .lu
                .as_mut()
                .expect("the LU holds the factors")
                .solve_in_place(b),
            Factors::Ldlt => self.ldlt.solve_in_place_by_reciprocals(b, &mut self.work),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::nonzeros;
    use nalgebra::{DMatrix, DVector};

    /// The matrix M + s JᵀJ of a chain of `bodies` planar links (3
    /// coordinates each, pin joints of 2 rows coupling neighbours),
    /// M diagonal: the projection metric of the augmented Lagrangian.
    fn chain_metric(bodies: usize, s: f64) -> DMatrix<f64> {
        let n = 3 * bodies;
        let mut j = DMatrix::zeros(2 * bodies, n);
        for b in 0..bodies {
            let th = 0.3 + 0.17 * b as f64;
            for r in 0..2 {
                let row = 2 * b + r;
                j[(row, 3 * b + r)] = 1.0;
                j[(row, 3 * b + 2)] = if r == 0 {
                    0.5 * th.sin()
                } else {
                    -0.5 * th.cos()
                };
                if b > 0 {
                    j[(row, 3 * (b - 1) + r)] = -1.0;
                    j[(row, 3 * (b - 1) + 2)] = if r == 0 {
                        0.5 * (th - 0.1).sin()
                    } else {
                        -0.5 * (th - 0.1).cos()
                    };
                }
            }
        }
        let m = DMatrix::from_fn(n, n, |r, c| {
            if r != c {
                0.0
            } else if r % 3 == 2 {
                1.0 / 12.0
            } else {
                1.0
            }
        });
        m + j.transpose() * j * s
    }

    fn filled(a: &DMatrix<f64>) -> LdltOrLu {
        let n = a.nrows();
        let pattern = nonzeros(a);
        let mut f = LdltOrLu::new(n, &pattern);
        for &(i, j) in &pattern {
            let s = f.slot(i, j).expect("in the pattern");
            f.values_mut()[s] = a[(i, j)];
        }
        f
    }

    /// The LU of the same pattern and values as `f`.
    fn lu_of(f: &LdltOrLu) -> SparseLu {
        let mut lu = SparseLu::with_pattern(f.pattern().clone());
        lu.values_mut().copy_from_slice(f.values());
        lu
    }

    /// The chain's projection metric (p = 1e4, condition ~1e5) factors by
    /// LDLᵀ, without fill beyond its band, and solves as the LU does, to
    /// round-off, at every refactorisation with new values.
    #[test]
    fn the_chain_metric_factors_by_ldlt_as_the_lu_solves() {
        let a = chain_metric(40, 1e4);
        let n = a.nrows();
        let mut f = filled(&a);
        // block tridiagonal of 3 × 3 blocks: L within the band of 5
        let lx = f.factor_nnz() + n;
        assert!(lx <= 6 * n, "factor nnz {lx}");
        let mut lu = lu_of(&f);
        for round in 0..3 {
            let scale = 1.0 + round as f64;
            if round > 0 {
                for v in f.values_mut() {
                    *v *= scale / (scale - 1.0);
                }
                for v in lu.values_mut() {
                    *v *= scale / (scale - 1.0);
                }
            }
            assert!(f.factor() && lu.factor());
            let x = DVector::from_fn(n, |i, _| (0.37 * i as f64).sin());
            let b = &a * &x * scale;
            let mut y = b.as_slice().to_vec();
            f.solve_in_place(&mut y);
            let mut z = b.as_slice().to_vec();
            lu.solve_in_place(&mut z);
            let err = (DVector::from_vec(y.clone()) - &x).amax();
            let diff = (DVector::from_vec(y) - DVector::from_vec(z)).amax();
            assert!(err < 1e-9, "round {round}: error {err}");
            assert!(diff < 1e-9, "round {round}: LDLᵀ − LU {diff}");
        }
        assert_eq!((f.ldlt_count(), f.lu_count()), (3, 0));
    }

    /// Values that are not symmetric, or symmetric but indefinite, go to
    /// the LU of the same pattern, which solves them; a singular matrix is
    /// reported by the LU.
    #[test]
    fn falls_back_to_the_lu_off_symmetric_positive_definite() {
        let a = chain_metric(6, 10.0);
        let n = a.nrows();
        // a follower-force-like asymmetric term
        let mut b = a.clone();
        b[(0, 3)] += 0.25;
        b[(3, 0)] += 0.25;
        b[(4, 1)] += 0.3;
        b[(1, 4)] -= 0.3;
        // indefinite: a negative pivot
        let mut c = a.clone();
        c[(5, 5)] = -40.0;
        for (mat, ldlt) in [(&a, 1), (&b, 0), (&c, 0)] {
            let mut f = filled(mat);
            assert!(f.factor());
            assert_eq!(f.ldlt_count(), ldlt);
            assert_eq!(f.lu_count(), 1 - ldlt);
            let x = DVector::from_fn(n, |i, _| 1.0 + (i as f64).cos());
            let rhs = mat * &x;
            let mut y = rhs.as_slice().to_vec();
            f.solve_in_place(&mut y);
            let err = (DVector::from_vec(y) - &x).amax();
            assert!(err < 1e-10, "error {err}");
        }
        // rounding-level asymmetry stays on LDLᵀ
        let mut d = a.clone();
        d[(0, 3)] *= 1.0 + 1e-15;
        let mut f = filled(&d);
        assert!(f.factor());
        assert_eq!((f.ldlt_count(), f.lu_count()), (1, 0));
        // a zero row and column: singular for both
        let mut e = a.clone();
        for k in 0..n {
            e[(2, k)] = 0.0;
            e[(k, 2)] = 0.0;
        }
        e[(2, 2)] = 0.0;
        let pattern = nonzeros(&a);
        let mut f = LdltOrLu::new(n, &pattern);
        for &(i, j) in &pattern {
            let s = f.slot(i, j).expect("in the pattern");
            f.values_mut()[s] = e[(i, j)];
        }
        assert!(!f.factor());
        assert!(!f.is_factored());
    }
}
