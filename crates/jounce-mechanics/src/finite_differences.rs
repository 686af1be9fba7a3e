//! Central differences of a system's first derivatives: what callers use
//! where a system has no exact second derivatives
//! ([`crate::MechanicalSystem::second_derivatives`] is `None`), and the
//! force Jacobians of systems that have no exact ones.
//!
//! Each difference uses the step h = ε^(1/3)·max(|x_j|, 1), which balances
//! truncation (O(h²)) and rounding (O(ε/h)) errors (error ~1e-10
//! relative). They allocate scratch vectors: systems used on hot paths
//! provide the exact forms.
//!
//! Owns: the difference formulas. Must not: be used where a system offers
//! the exact derivative.

use nalgebra::DMatrix;

use crate::system::MechanicalSystem;

/// Central-difference step for component x: ε^(1/3)·max(|x|, 1).
fn central_step(x: f64) -> f64 {
    f64::EPSILON.cbrt() * x.abs().max(1.0)
}

/// ∂γ/∂q and ∂γ/∂v (m × n each) by central differences of
/// [`MechanicalSystem::gamma`].
pub fn gamma_jacobians<S: MechanicalSystem + ?Sized>(
    sys: &S,
    t: f64,
    q: &[f64],
    v: &[f64],
    dq: &mut DMatrix<f64>,
    dv: &mut DMatrix<f64>,
) {
    let m = sys.nc();
    let (mut gp, mut gm) = (vec![0.0; m], vec![0.0; m]);
    let mut x = q.to_vec();
    for j in 0..q.len() {
        let h = central_step(q[j]);
        x[j] = q[j] + h;
        sys.gamma(t, &x, v, &mut gp);
        x[j] = q[j] - h;
        sys.gamma(t, &x, v, &mut gm);
        x[j] = q[j];
        for i in 0..m {
            dq[(i, j)] = (gp[i] - gm[i]) / (2.0 * h);
        }
    }
    let mut x = v.to_vec();
    for j in 0..v.len() {
        let h = central_step(v[j]);
        x[j] = v[j] + h;
        sys.gamma(t, q, &x, &mut gp);
        x[j] = v[j] - h;
        sys.gamma(t, q, &x, &mut gm);
        x[j] = v[j];
        for i in 0..m {
            dv[(i, j)] = (gp[i] - gm[i]) / (2.0 * h);
        }
    }
}

/// ∂(Φ_q a)/∂q (m × n) by central differences of
/// [`MechanicalSystem::constraint_jacobian`].
pub fn constraint_hessian_product<S: MechanicalSystem + ?Sized>(
    sys: &S,
    t: f64,
    q: &[f64],
    a: &[f64],
    out: &mut DMatrix<f64>,
) {
    let (n, m) = (sys.nq(), sys.nc());
    let (mut jp, mut jm) = (DMatrix::zeros(m, n), DMatrix::zeros(m, n));
    let mut x = q.to_vec();
    for k in 0..n {
        let h = central_step(q[k]);
        x[k] = q[k] + h;
        sys.constraint_jacobian(t, &x, &mut jp);
        x[k] = q[k] - h;
        sys.constraint_jacobian(t, &x, &mut jm);
        x[k] = q[k];
        for i in 0..m {
            let mut s = 0.0;
            for j in 0..n {
                s += (jp[(i, j)] - jm[(i, j)]) * a[j];
            }
            out[(i, k)] = s / (2.0 * h);
        }
    }
}

/// Φ_qt = ∂Φ_t/∂q (m × n) by central differences of
/// [`MechanicalSystem::constraint_time_derivative`].
pub fn constraint_time_jacobian<S: MechanicalSystem + ?Sized>(
    sys: &S,
    t: f64,
    q: &[f64],
    out: &mut DMatrix<f64>,
) {
    let m = sys.nc();
    let (mut pp, mut pm) = (vec![0.0; m], vec![0.0; m]);
    let mut x = q.to_vec();
    for k in 0..q.len() {
        let h = central_step(q[k]);
        x[k] = q[k] + h;
        sys.constraint_time_derivative(t, &x, &mut pp);
        x[k] = q[k] - h;
        sys.constraint_time_derivative(t, &x, &mut pm);
        x[k] = q[k];
        for i in 0..m {
            out[(i, k)] = (pp[i] - pm[i]) / (2.0 * h);
        }
    }
}

/// ∂(M(q) a)/∂q (n × n) by central differences of
/// [`MechanicalSystem::mass_matrix`].
pub fn mass_matrix_derivative<S: MechanicalSystem + ?Sized>(
    sys: &S,
    q: &[f64],
    a: &[f64],
    out: &mut DMatrix<f64>,
) {
    let n = sys.nq();
    let (mut mp, mut mm) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
    let mut x = q.to_vec();
    for k in 0..n {
        let h = central_step(q[k]);
        x[k] = q[k] + h;
        sys.mass_matrix(&x, &mut mp);
        x[k] = q[k] - h;
        sys.mass_matrix(&x, &mut mm);
        x[k] = q[k];
        for i in 0..n {
            let mut s = 0.0;
            for j in 0..n {
                s += (mp[(i, j)] - mm[(i, j)]) * a[j];
            }
            out[(i, k)] = s / (2.0 * h);
        }
    }
}
