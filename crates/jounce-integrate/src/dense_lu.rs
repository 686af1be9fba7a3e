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
            let d = a[(k, k)];
            for i in k + 1..n {
                a[(i, k)] /= d;
            }
            for j in k + 1..n {
                let u = a[(k, j)];
                for i in k + 1..n {
                    let l = a[(i, k)];
                    a[(i, j)] -= l * u;
                }
            }
        }
        true
    }

    /// Solve A x = b in place with the factors.
    pub(crate) fn solve(&self, b: &mut [T]) {
        let (n, a) = (self.piv.len(), &self.lu);
        for k in 0..n {
            b.swap(k, self.piv[k]);
        }
        for j in 0..n {
            let bj = b[j];
            for i in j + 1..n {
                b[i] -= a[(i, j)] * bj;
            }
        }
        for j in (0..n).rev() {
            b[j] /= a[(j, j)];
            let bj = b[j];
            for i in 0..j {
                b[i] -= a[(i, j)] * bj;
            }
        }
    }
}
