//! Jacobians by finite differences, shared by every implicit method.
//!
//! Exact Jacobians come from the problem itself (analytic, or automatic
//! differentiation with num-dual in the formulation layer); this module is
//! the fallback.

use nalgebra::DMatrix;

use crate::error::EvalError;
use crate::problem::{OdeProblem, SecondOrderProblem};

/// Forward-difference increment for component y_j:
/// δ_j = sqrt(ε) · max(|y_j|, 1e-5), the textbook relative increment
/// (Dennis & Schnabel, *Numerical Methods for Unconstrained Optimization*,
/// Section 5.4) with a floor. radau5.f uses sqrt(ε · max(1e-5, |y_j|))
/// instead, which is larger where a component vanishes: better for nearly
/// linear components (Van der Pol at y = (2, 0): 1.7e-6 against 4.7e-4
/// relative), worse for strongly curved ones (Robertson at (1, 0, 0),
/// ∂²f₂/∂y₂² = −6e7: 3.5e-2 against 1.1e-4); see tests/suite/autodiff.rs.
/// Exact Jacobians ([`crate::autodiff`]) avoid the choice.
pub fn fd_increment(yj: f64) -> f64 {
    f64::EPSILON.sqrt() * yj.abs().max(1e-5)
}

/// J ≈ ∂f/∂y by forward differences: J[:, j] = (f(t, y + δ_j e_j) − f(t, y)) / δ_j.
/// Costs n + 1 evaluations of f.
pub fn fd_jacobian<P: OdeProblem + ?Sized>(
    p: &mut P,
    t: f64,
    y: &[f64],
    jac: &mut DMatrix<f64>,
) -> Result<(), EvalError> {
    let n = y.len();
    let mut f0 = vec![0.0; n];
    let mut f1 = vec![0.0; n];
    let mut yp = y.to_vec();
    p.rhs(t, y, &mut f0)?;
    for j in 0..n {
        let d = fd_increment(y[j]);
        yp[j] = y[j] + d;
        p.rhs(t, &yp, &mut f1)?;
        yp[j] = y[j];
        for i in 0..n {
            jac[(i, j)] = (f1[i] - f0[i]) / d;
        }
    }
    Ok(())
}

/// Residual r = M(q) a − f(t, q, v) of a second-order problem.
fn residual<P: SecondOrderProblem + ?Sized>(
    p: &mut P,
    t: f64,
    q: &[f64],
    v: &[f64],
    a: &[f64],
    m: &mut DMatrix<f64>,
    f: &mut [f64],
    r: &mut [f64],
) -> Result<(), EvalError> {
    p.mass_matrix(t, q, m)?;
    p.forces(t, q, v, f)?;
    let n = v.len();
    for i in 0..n {
        let mut s = -f[i];
        for j in 0..n {
            s += m[(i, j)] * a[j];
        }
        r[i] = s;
    }
    Ok(())
}

/// K = ∂r/∂q and C = ∂r/∂v of r = M(q) a − f(t, q, v) by forward differences;
/// K along the increments Δ of q ⊕ Δ ([`SecondOrderProblem::integrate_positions`])
/// when the positions are not rates.
pub fn fd_tangent<P: SecondOrderProblem + ?Sized>(
    p: &mut P,
    t: f64,
    q: &[f64],
    v: &[f64],
    a: &[f64],
    k: &mut DMatrix<f64>,
    c: &mut DMatrix<f64>,
) -> Result<(), EvalError> {
    let n = v.len();
    let mut m = DMatrix::zeros(n, n);
    let mut f = vec![0.0; n];
    let mut r0 = vec![0.0; n];
    let mut r1 = vec![0.0; n];
    residual(p, t, q, v, a, &mut m, &mut f, &mut r0)?;
    let mut qp = q.to_vec();
    let mut vp = v.to_vec();
    let mut delta = vec![0.0; n];
    for j in 0..n {
        let d = fd_increment(q.get(j).copied().unwrap_or(0.0));
        delta[j] = d;
        p.integrate_positions(q, &delta, &mut qp);
        delta[j] = 0.0;
        residual(p, t, &qp, v, a, &mut m, &mut f, &mut r1)?;
        for i in 0..n {
            k[(i, j)] = (r1[i] - r0[i]) / d;
        }
        let d = fd_increment(v[j]);
        vp[j] = v[j] + d;
        residual(p, t, q, &vp, a, &mut m, &mut f, &mut r1)?;
        vp[j] = v[j];
        for i in 0..n {
            c[(i, j)] = (r1[i] - r0[i]) / d;
        }
    }
    Ok(())
}
