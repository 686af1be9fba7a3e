//! Implicit differential-algebraic equations F(t, y, y') = 0 and the
//! methods that integrate them as such: variable-order BDF in the manner
//! of DASSL (Brenan, Campbell & Petzold, *Numerical Solution of
//! Initial-Value Problems in DAEs*, SIAM 1996, ch. 3 and 5) and the
//! three-stage Radau IIA method with index-aware error scaling
//! (Hairer & Wanner, *Solving ODEs II*, Sections VI.1 and VII.8; radau5.f).
//!
//! Owns the contract ([`DaeProblem`]) and the adapter that turns any
//! constrained second-order problem into one ([`ConstrainedDae`]: the
//! index-3 form and the stabilised index-2 form of Gear, Gupta &
//! Leimkuhler). Nothing here knows about bodies.
//!
//! **Index description.** Each component y_i has a differential index
//! (1 for differential and index-1 algebraic components, 2 or 3 for the
//! higher-index algebraic ones: for the index-3 equations of motion q has
//! index 1, v index 2 and λ index 3, Hairer & Wanner VII.1) and a flag
//! saying whether y_i' appears in F at all. Methods scale their error
//! weights with it: DASSL-style BDF leaves the algebraic components
//! (λ, μ) out of its error test; Radau IIA divides the tolerance of an
//! index-k component by h^(k−1), which loosens it for h < 1 (radau5.f,
//! NIND2/NIND3). Both then scale their tolerance so that the global error
//! is proportional to it ([`crate::controller::proportional_scale`]; bdf
//! always, radau5 when a differential component has index 2 or 3).

pub mod bdf;
pub mod constrained_dae;
pub(crate) use crate::dense_lu;
pub mod dispatch;
pub mod radau;
mod sparse_iteration;

use nalgebra::DMatrix;

use crate::error::EvalError;

pub use bdf::DaeBdf;
pub use constrained_dae::{ConstrainedDae, DaeForm};
pub use dispatch::OdeOrDae;
pub use radau::DaeRadau5;

/// F(t, y, y') = 0 with n equations in n unknowns (module documentation).
///
/// Evaluations take `&mut self` so that implementations keep their own
/// scratch space; `residual` must not allocate.
pub trait DaeProblem {
    /// Dimension n of y (and of F).
    fn dim(&self) -> usize;

    /// Residual F(t, y, y') into `r` (len n).
    fn residual(&mut self, t: f64, y: &[f64], yp: &[f64], r: &mut [f64]) -> Result<(), EvalError>;

    /// Iteration matrix G = ∂F/∂y + c ∂F/∂y' (n × n) at (t, y, y'), the
    /// matrix of Newton's method when y' = c y + (terms known before the
    /// step) (DASSL's "PD = dG/dY + CJ dG/dYPRIME", Brenan–Campbell–Petzold
    /// eq. 5.2.4).
    ///
    /// Default: forward differences of the residual along y with y'
    /// moved by c times the same increment ([`fd_iteration_matrix`];
    /// allocates). Problems on hot paths override it.
    fn iteration_matrix(
        &mut self,
        t: f64,
        y: &[f64],
        yp: &[f64],
        c: f64,
        g: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        fd_iteration_matrix(self, t, y, yp, c, g)
    }

    /// ∂F/∂y' alone (n × n): the "mass matrix" of a linearly implicit
    /// problem, used by error estimates of Radau IIA. Default: the
    /// difference of two iteration matrices (c = 1 and c = 0).
    fn derivative_jacobian(
        &mut self,
        t: f64,
        y: &[f64],
        yp: &[f64],
        out: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        let n = self.dim();
        let mut g0 = DMatrix::zeros(n, n);
        self.iteration_matrix(t, y, yp, 0.0, &mut g0)?;
        self.iteration_matrix(t, y, yp, 1.0, out)?;
        *out -= g0;
        Ok(())
    }

    /// Whether [`DaeProblem::iteration_matrix`] is exact.
    fn has_exact_jacobian(&self) -> bool {
        false
    }

    /// The entries (i, j) of ∂F/∂y and ∂F/∂y' that can be nonzero, or
    /// `None` (the default) to have the methods treat G as dense. A
    /// problem that declares a pattern (and has an exact iteration
    /// matrix) promises that every other entry of both is zero at every
    /// (t, y, y'), and provides [`DaeProblem::sparse_iteration_matrix`]
    /// and [`DaeProblem::sparse_derivative_jacobian`] in this order of
    /// entries; bdf and radau5 then assemble and factor G sparse
    /// ([`crate::sparse_lu`]: the pattern and its column ordering once,
    /// O(nnz) per refactorisation). Entries may repeat (their values are
    /// summed). Called at set-up (reset), never on the hot path; it may
    /// allocate.
    fn sparsity(&mut self) -> Option<Vec<(usize, usize)>> {
        None
    }

    /// The values of G = ∂F/∂y + c ∂F/∂y' at the entries of
    /// [`DaeProblem::sparsity`], in its order, into `values`.
    ///
    /// Default: the dense [`DaeProblem::iteration_matrix`] gathered
    /// (allocates; problems that declare a sparsity override it).
    fn sparse_iteration_matrix(
        &mut self,
        t: f64,
        y: &[f64],
        yp: &[f64],
        c: f64,
        values: &mut [f64],
    ) -> Result<(), EvalError> {
        let n = self.dim();
        let mut g = DMatrix::zeros(n, n);
        self.iteration_matrix(t, y, yp, c, &mut g)?;
        gather_once(&mut g, self.sparsity().unwrap_or_default(), values);
        Ok(())
    }

    /// The values of ∂F/∂y' at the entries of [`DaeProblem::sparsity`],
    /// in its order, into `values`.
    ///
    /// Default: the dense [`DaeProblem::derivative_jacobian`] gathered
    /// (allocates; problems that declare a sparsity override it).
    fn sparse_derivative_jacobian(
        &mut self,
        t: f64,
        y: &[f64],
        yp: &[f64],
        values: &mut [f64],
    ) -> Result<(), EvalError> {
        let n = self.dim();
        let mut g = DMatrix::zeros(n, n);
        self.derivative_jacobian(t, y, yp, &mut g)?;
        gather_once(&mut g, self.sparsity().unwrap_or_default(), values);
        Ok(())
    }

    /// Differential index of each component (len n): 1, 2 or 3.
    fn variable_index(&self) -> &[u8];

    /// Whether y_i' appears in F (len n); false marks an algebraic
    /// component (a multiplier), left out of BDF error tests.
    fn is_differential(&self) -> &[bool];

    /// A consistent y'(t0) for a consistent y(t0), into `yp`. The default
    /// leaves `yp` as given (the caller's guess).
    fn consistent_derivative(
        &mut self,
        _t: f64,
        _y: &[f64],
        _yp: &mut [f64],
    ) -> Result<(), EvalError> {
        Ok(())
    }

    /// Hook after every accepted step at (t, y): a problem may project y
    /// onto its invariants here (returns whether y changed). Default:
    /// nothing.
    fn after_step(&mut self, _t: f64, _y: &mut [f64]) -> Result<bool, EvalError> {
        Ok(false)
    }
}

/// values[k] = g[entries[k]], a repeated entry counted once (the
/// defaults of the sparse evaluations: their values are summed).
fn gather_once(g: &mut DMatrix<f64>, entries: Vec<(usize, usize)>, values: &mut [f64]) {
    for (v, &(i, j)) in values.iter_mut().zip(&entries) {
        *v = std::mem::take(&mut g[(i, j)]);
    }
}

/// Forward-difference G = ∂F/∂y + c ∂F/∂y': column j is
/// (F(t, y + δe_j, y' + cδe_j) − F(t, y, y'))/δ with δ = √ε·max(|y_j|, 1)
/// (Brenan–Campbell–Petzold 5.2.2). Allocates its two residual vectors.
pub fn fd_iteration_matrix<P: DaeProblem + ?Sized>(
    p: &mut P,
    t: f64,
    y: &[f64],
    yp: &[f64],
    c: f64,
    g: &mut DMatrix<f64>,
) -> Result<(), EvalError> {
    let n = p.dim();
    let (mut r0, mut r1) = (vec![0.0; n], vec![0.0; n]);
    p.residual(t, y, yp, &mut r0)?;
    let (mut ys, mut yps) = (y.to_vec(), yp.to_vec());
    let sq = f64::EPSILON.sqrt();
    for j in 0..n {
        let d = sq * y[j].abs().max(1.0);
        ys[j] = y[j] + d;
        yps[j] = yp[j] + c * d;
        p.residual(t, &ys, &yps, &mut r1)?;
        ys[j] = y[j];
        yps[j] = yp[j];
        for i in 0..n {
            g[(i, j)] = (r1[i] - r0[i]) / d;
        }
    }
    Ok(())
}

/// Loosen the weights of the algebraic components of index 3 (the
/// multipliers λ of the index-3 form) from componentwise to normwise:
/// w_i = h² / (atol + rtol·‖λ‖∞), with ‖λ‖∞ the largest |y_j| over those
/// components, instead of h² / (atol + rtol·|λ_i|).
///
/// Why: λ comes out of the linear solves of the iteration with an error of
/// the order of ε‖λ‖ times the conditioning of the constraint Jacobian
/// (normwise backward stability of LU; Higham, *Accuracy and Stability of
/// Numerical Algorithms*, 2nd ed., Thm. 9.3 and §7.1), and index-3
/// multipliers magnify the round-off of Φ by 1/h² on top. A componentwise
/// tolerance asks a multiplier that is nearly zero (the outer links of a
/// long chain in free fall: |λ_i| = 2e-5 N beside ‖λ‖∞ = 1.5e4 N) for a
/// resolution no double-precision solve gives; the Newton iteration of
/// radau5 then stalls at every step size (`bench/implicit-at-size-2026-11-29.md`:
/// 500 to 1000 links failed at t = 1e-4 s down to h = 5e-13 s). The
/// velocities and positions keep their componentwise weights, and so do
/// the index-2 multipliers of the GGL form (there the normwise weight let
/// Φ_q v drift to 1.4 tol on the pendulum of `dae_radau.rs`: their
/// round-off is not magnified by 1/h²). A problem without index-3
/// algebraic components is unchanged.
pub fn normwise_multiplier_weights<P: DaeProblem + ?Sized>(
    p: &P,
    y: &[f64],
    rtol: f64,
    atol: f64,
    h: f64,
    w: &mut [f64],
) {
    let (idx, diff) = (p.variable_index(), p.is_differential());
    let is_multiplier = |i: usize| !diff[i] && idx[i] == 3;
    let norm = (0..w.len())
        .filter(|&i| is_multiplier(i))
        .map(|i| y[i].abs())
        .fold(0.0, f64::max);
    let hs = h.abs();
    for i in (0..w.len()).filter(|&i| is_multiplier(i)) {
        w[i] = hs * hs / (atol + rtol * norm);
    }
}

/// F(t, y, y') into `r`, counted in `stats.n_rhs`; a non-finite value is
/// an [`EvalError::NonFinite`] (the steppers' one way to evaluate F).
pub(crate) fn counted_residual(
    dae: &mut dyn DaeProblem,
    t: f64,
    y: &[f64],
    yp: &[f64],
    r: &mut [f64],
    stats: &mut crate::stats::Stats,
) -> Result<(), EvalError> {
    stats.n_rhs += 1;
    dae.residual(t, y, yp, r)?;
    if r.iter().any(|x| !x.is_finite()) {
        return Err(EvalError::NonFinite {
            what: "DAE residual F(t, y, y')".into(),
            t,
        });
    }
    Ok(())
}

/// Error weights of a DAE method: w_i = 1/(atol + rtol·|y_i|) scaled by
/// the component's index (module documentation). With `exclude_algebraic`
/// (BDF) an algebraic component gets weight 0; otherwise an index-k
/// component's weight is multiplied by h^(k−1) (radau5.f: SCAL divided by
/// h^(k−1), h < 1 loosens it). Writes `w` (len n).
pub fn dae_weights<P: DaeProblem + ?Sized>(
    p: &P,
    y: &[f64],
    rtol: f64,
    atol: f64,
    h: f64,
    exclude_algebraic: bool,
    w: &mut [f64],
) {
    let (idx, diff) = (p.variable_index(), p.is_differential());
    let hs = h.abs();
    for i in 0..w.len() {
        let base = 1.0 / (atol + rtol * y[i].abs());
        w[i] = if exclude_algebraic && !diff[i] {
            0.0
        } else {
            base * hs.powi(i32::from(idx[i].max(1)) - 1)
        };
    }
}
