//! The first-order form of a second-order problem.

use nalgebra::{DMatrix, DVector};

use crate::error::EvalError;
use crate::problem::{OdeProblem, SecondOrderProblem};

/// y = [q; v], y' = [v; M(q)⁻¹ f(t, q, v)]: lets every first-order method
/// integrate a [`SecondOrderProblem`], while structural methods still reach
/// the second-order form through [`OdeProblem::as_second_order`].
pub struct FirstOrderForm<P> {
    /// The second-order problem.
    pub inner: P,
    m: DMatrix<f64>,
    f: DVector<f64>,
}

impl<P: SecondOrderProblem> FirstOrderForm<P> {
    /// Wrap a second-order problem.
    pub fn new(inner: P) -> Self {
        let n = inner.ndof();
        Self {
            inner,
            m: DMatrix::zeros(n, n),
            f: DVector::zeros(n),
        }
    }
}

impl<P: SecondOrderProblem> OdeProblem for FirstOrderForm<P> {
    fn dim(&self) -> usize {
        2 * self.inner.ndof()
    }
    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        let n = self.inner.ndof();
        let (q, v) = y.split_at(n);
        self.inner.mass_matrix(t, q, &mut self.m)?;
        self.inner.forces(t, q, v, self.f.as_mut_slice())?;
        dy[..n].copy_from_slice(v);
        let chol = self
            .m
            .clone()
            .cholesky()
            .ok_or_else(|| EvalError::Singular {
                what: "mass matrix".into(),
                t,
                detail: String::new(),
            })?;
        let a = chol.solve(&self.f);
        dy[n..].copy_from_slice(a.as_slice());
        Ok(())
    }
    fn as_second_order(&mut self) -> Option<&mut dyn SecondOrderProblem> {
        Some(&mut self.inner)
    }
}
