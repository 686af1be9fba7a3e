//! LU factorisation with partial pivoting in preallocated storage, real
//! or complex, shared by every implicit method ([`crate::newton::CachedLu`]) and the DAE steppers (Golub & Van Loan, *Matrix
//! Computations*, 4th ed., Algorithm 3.4.1).

use nalgebra::{ComplexField, DMatrix};

/// An LU factorisation with partial pivoting in preallocated storage:
/// refactorising allocates nothing (unlike [`nalgebra::LU::new`], which
/// takes its matrix by value).
pub(crate) struct DenseLu<T> {
    /// The matrix to factorise, then its factors (unit L below the diagonal).
    pub(crate) lu: DMatrix<T>,
    pub(crate) piv: Vec<usize>,
}

impl<T: ComplexField<RealField = f64> + Copy> DenseLu<T> {
    pub(crate) fn new() -> Self {
        Self {
            lu: DMatrix::from_element(0, 0, T::zero()),
            piv: Vec::new(),
        }
    }

    pub(crate) fn resize(&mut self, n: usize) {
        self.lu = DMatrix::from_element(n, n, T::zero());
        self.piv = vec![0; n];
    }

    /// Factorise `lu` in place; false when a pivot is zero or not finite.
    pub(crate) fn factor(&mut self) -> bool {
        self.factor_above(0.0)
    }

    /// Factorise `lu` in place; false when a pivot's modulus is at most
    /// `floor` (a matrix equilibrated to unit rows is singular to rounding
    /// when a pivot falls to n·ε) or not finite.
    ///
    /// The pivot is the entry of largest modulus in its column. Hairer's
    /// DECC (decsol.f) and LAPACK's IZAMAX take the largest |Re| + |Im|
    /// instead (no square root per entry); tried here, it changed which
    /// of two close candidates pivots often enough that radau5 on the
    /// index-3 form of a spatial pendulum on a doubled hinge at rtol 1e-10
    /// (`spatial_redundant::a_doubled_hinge_does_not_take_the_ball_through_a_penalty_floor`)
    /// failed Newton down to h = 4e-15 at t = 1.39 s, a run on the edge of
    /// what double precision resolves that the modulus passes.
    pub(crate) fn factor_above(&mut self, floor: f64) -> bool {
        let n = self.piv.len();
        let a = &mut self.lu;
        for k in 0..n {
            let (mut p, mut best) = (k, a[(k, k)].modulus());
            for i in k + 1..n {
                let v = a[(i, k)].modulus();
                if v > best {
                    (p, best) = (i, v);
                }
            }
            if !(best > floor && best.is_finite()) {
                return false;
            }
            self.piv[k] = p;
            if p != k {
                a.swap_rows(k, p);
            }
            // column-major storage: column k below the pivot scaled, then
            // each later column updated by it (slices, no index checks)
            let s = a.as_mut_slice();
            let d = s[k * n + k];
            for l in &mut s[k * n + k + 1..(k + 1) * n] {
                *l /= d;
            }
            let (left, right) = s.split_at_mut((k + 1) * n);
            let lk = &left[k * n + k + 1..(k + 1) * n];
            for col in right.chunks_exact_mut(n) {
                let u = col[k];
                if u == T::zero() {
                    continue;
                }
                for (x, l) in col[k + 1..].iter_mut().zip(lk) {
                    *x -= *l * u;
                }
            }
        }
        true
    }

    /// Solve A x = b in place with the factors (column-oriented forward
    /// and back substitution over the column-major storage, one slice per
    /// column so that the inner loops carry no index checks).
    pub(crate) fn solve(&self, b: &mut [T]) {
        let n = self.piv.len();
        let a = self.lu.as_slice();
        let b = &mut b[..n];
        for k in 0..n {
            b.swap(k, self.piv[k]);
        }
        for j in 0..n {
            let bj = b[j];
            let col = &a[j * n + j + 1..(j + 1) * n];
            for (bi, l) in b[j + 1..].iter_mut().zip(col) {
                *bi -= *l * bj;
            }
        }
        for j in (0..n).rev() {
            b[j] /= a[j * n + j];
            let bj = b[j];
            let col = &a[j * n..j * n + j];
            for (bi, u) in b[..j].iter_mut().zip(col) {
                *bi -= *u * bj;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use nalgebra::{Complex, DMatrix};

    use super::DenseLu;

    type C = Complex<f64>;

    /// A x = b with x chosen and b = A x computed: the factors give x back
    /// to round-off, with row exchanges (a zero leading entry) needed.
    #[test]
    fn complex_solve_returns_the_chosen_solution() {
        let c = C::new;
        let a = DMatrix::from_row_slice(
            3,
            3,
            &[
                c(0.0, 0.0),
                c(2.0, -1.0),
                c(0.5, 0.3),
                c(1e-3, 4.0),
                c(-1.0, 0.2),
                c(3.0, 0.0),
                c(2.5, 2.5),
                c(0.1, -0.7),
                c(-1.2, 1.1),
            ],
        );
        let x = [c(1.0, -2.0), c(-0.5, 0.25), c(3.0, 1.5)];
        let mut b: Vec<C> = (0..3)
            .map(|i| (0..3).map(|j| a[(i, j)] * x[j]).sum())
            .collect();
        let mut lu = DenseLu::<C>::new();
        lu.resize(3);
        lu.lu.copy_from(&a);
        assert!(lu.factor());
        assert_ne!(lu.piv[0], 0, "the zero leading entry is exchanged");
        lu.solve(&mut b);
        for (bi, xi) in b.iter().zip(&x) {
            assert!((bi - xi).norm() < 1e-14, "{bi} against {xi}");
        }
    }

    /// A singular matrix (two equal rows) is reported, not factorised.
    #[test]
    fn singular_complex_matrix_is_refused() {
        let c = C::new;
        let a =
            DMatrix::from_row_slice(2, 2, &[c(1.0, 1.0), c(2.0, 0.0), c(1.0, 1.0), c(2.0, 0.0)]);
        let mut lu = DenseLu::<C>::new();
        lu.resize(2);
        lu.lu.copy_from(&a);
        assert!(!lu.factor());
    }
}
