//! Exact Jacobians by forward-mode automatic differentiation (num-dual).
//!
//! A problem writes its right-hand side once, generic over the scalar
//! ([`AutoDiffRhs::eval`]); [`AutoDiff`] turns it into an [`OdeProblem`]
//! whose `rhs` runs the `f64` instance and whose `jacobian` runs the dual
//! instance, giving
//!
//! ```text
//!   J_ij = ∂f_i/∂y_j (t, y)
//! ```
//!
//! exact to round-off, column by column: with y_k = y_k + δ_kj ε (ε² = 0),
//! f(t, y + e_j ε) = f(t, y) + J[:, j] ε. One Jacobian costs n dual
//! evaluations of f (each about 2-3 real evaluations) and no real
//! evaluation of f, where forward differences cost n + 1 real evaluations
//! and lose half the digits.
//!
//! Dual numbers: Rehner & Bauer, "Application of generalized (hyper-) dual
//! numbers in equation of state modeling", Front. Chem. Eng. 3 (2021) 758090
//! (the num-dual crate, <https://docs.rs/num-dual/0.15>); forward mode:
//! Griewank & Walther, Evaluating Derivatives, 2nd ed., SIAM 2008, ch. 3.
//!
//! ```
//! use jounce_integrate::autodiff::{AdScalar, AutoDiff, AutoDiffRhs};
//! use jounce_integrate::{EvalError, OdeProblem};
//!
//! /// Van der Pol: y0' = y1, y1' = μ (1 − y0²) y1 − y0.
//! struct Vdp { mu: f64 }
//! impl AutoDiffRhs for Vdp {
//!     fn dim(&self) -> usize { 2 }
//!     fn eval<D: AdScalar>(&self, _t: f64, y: &[D], dy: &mut [D]) -> Result<(), EvalError> {
//!         dy[0] = y[1];
//!         dy[1] = (-(y[0] * y[0]) + 1.0) * y[1] * self.mu - y[0];
//!         Ok(())
//!     }
//! }
//! let mut p = AutoDiff::new(Vdp { mu: 2.0 });
//! let mut j = jounce_integrate::nalgebra::DMatrix::zeros(2, 2);
//! p.jacobian(0.0, &[2.0, 0.0], &mut j).unwrap();
//! assert_eq!(j[(1, 0)], -1.0); // −2 μ y0 y1 − 1 at y1 = 0
//! assert_eq!(j[(1, 1)], -6.0); // μ (1 − y0²)
//! assert!(p.has_exact_jacobian());
//! ```

use nalgebra::DMatrix;
pub use num_dual::{Dual64, DualNum};

use crate::error::EvalError;
use crate::problem::OdeProblem;

/// The scalars a right-hand side is written for: `f64` and the dual
/// numbers of num-dual over `f64` (e.g. [`Dual64`]). Arithmetic with plain
/// `f64` operands (`y[0] * 2.0`, `y[1] + t`) and the elementary functions
/// of [`DualNum`] (`sin`, `exp`, `powi`, `sqrt`, ...) are available.
pub trait AdScalar: DualNum<Primitive = f64> + Copy {}

impl<T: DualNum<Primitive = f64> + Copy> AdScalar for T {}

/// A right-hand side y' = f(t, y) written once, generic over the scalar.
pub trait AutoDiffRhs {
    /// Dimension n of y.
    fn dim(&self) -> usize;

    /// f(t, y) into `dy` (len n), in the scalar `D`.
    ///
    /// # Errors
    /// [`EvalError`] when f cannot be evaluated at (t, y).
    fn eval<D: AdScalar>(&self, t: f64, y: &[D], dy: &mut [D]) -> Result<(), EvalError>;
}

/// An [`OdeProblem`] with the exact Jacobian J_ij = ∂f_i/∂y_j of an
/// [`AutoDiffRhs`] by forward-mode dual numbers ([`Dual64`]), one column
/// per dual evaluation. Buffers are allocated once in [`AutoDiff::new`]:
/// neither `rhs` nor `jacobian` allocates.
pub struct AutoDiff<F: AutoDiffRhs> {
    /// The right-hand side.
    pub inner: F,
    yd: Vec<Dual64>,
    fd: Vec<Dual64>,
}

impl<F: AutoDiffRhs> AutoDiff<F> {
    /// Wrap a generic right-hand side.
    pub fn new(inner: F) -> Self {
        let n = inner.dim();
        Self {
            inner,
            yd: vec![Dual64::from_re(0.0); n],
            fd: vec![Dual64::from_re(0.0); n],
        }
    }
}

impl<F: AutoDiffRhs> OdeProblem for AutoDiff<F> {
    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        self.inner.eval::<f64>(t, y, dy)
    }

    /// J[:, j] = ε-part of f(t, y + e_j ε), j = 1..n.
    fn jacobian(&mut self, t: f64, y: &[f64], jac: &mut DMatrix<f64>) -> Result<(), EvalError> {
        let n = y.len();
        if self.yd.len() != n {
            // dimension changed since construction (not expected): resize once
            self.yd.resize(n, Dual64::from_re(0.0));
            self.fd.resize(n, Dual64::from_re(0.0));
        }
        for (d, &v) in self.yd.iter_mut().zip(y) {
            *d = Dual64::from_re(v);
        }
        for j in 0..n {
            self.yd[j].eps = 1.0;
            let r = self.inner.eval(t, &self.yd, &mut self.fd);
            self.yd[j].eps = 0.0;
            r?;
            for (i, f) in self.fd.iter().enumerate() {
                jac[(i, j)] = f.eps;
            }
        }
        Ok(())
    }

    fn has_exact_jacobian(&self) -> bool {
        true
    }
}
