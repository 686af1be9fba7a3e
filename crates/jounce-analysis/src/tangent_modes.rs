//! Linearised vibration modes of a constrained system whose positions are
//! not a vector space (n_q ≠ n_v: unit quaternions of spatial bodies),
//! in the tangent space of its configuration manifold at an equilibrium.
//!
//! The positions are moved by the system's retraction q ⊞ Δ, Δ ∈ R^{n_v}
//! ([`MechanicalSystem::integrate_position`]: per body the translation
//! and the body-frame rotation vector, p ⊗ exp(Δ_ω)). In the chart
//! q = q* ⊞ Δ about an equilibrium (q*, v = 0, λ*), v = T(Δ) Δ' with
//! T(0) = I, and the equations of motion M v' = Q(t, q, v) − Φ_vᵀλ,
//! Φ(t, q) = 0 linearise, the terms of the force residual
//! F = Q − Φ_vᵀλ* times derivatives of T dropping out because F(q*) = 0,
//! to the descriptor pencil
//!
//! ```text
//! M Δ'' + C Δ' + K Δ + Φ_vᵀ μ = 0,   Φ_v Δ = 0,
//! K = ∂(Φ_vᵀλ*)/∂Δ − ∂Q/∂Δ,   C = −∂Q/∂v,
//! ```
//!
//! K including the geometric stiffness of the constraint forces with the
//! equilibrium multipliers, as the planar modes do (Géradin & Rixen,
//! *Mechanical Vibrations*, 2015, Section 2.6; Géradin & Cardona,
//! *Flexible Multibody Dynamics*, 2001, Section 11.2). Its derivatives
//! along Δ are the system's exact ones: [`MechanicalSystem::force_jacobians`]
//! and [`MechanicalSystem::constraint_force_jacobian`] differentiate
//! along q ⊞ δ by dual numbers for the spatial system, so no difference
//! step enters. With N an orthonormal basis of the null space of Φ_v
//! (Δ = N x, x ∈ R^p), the pencil reduces to
//!
//! ```text
//! M_r x'' + C_r x' + K_r x = 0,   M_r = NᵀMN, C_r = NᵀCN, K_r = NᵀKN,
//! ```
//!
//! whose 2p eigenvalues are those of J = [0 I; −M_r⁻¹K_r −M_r⁻¹C_r],
//! classified as in [`crate::modes`]. They do not depend on the basis N
//! (a change x = R x̃ is a congruence of the pencil), so at an equilibrium
//! they equal those of the planar independent-coordinate Jacobian of the
//! same mechanism. The mode shape is Δ = N x: per body the translation and
//! the rotation-vector components, named by the caller's labels.
//!
//! Only an equilibrium is taken: elsewhere (velocities, or accelerations
//! M a = Q − Φ_vᵀλ ≠ 0) the Jacobian of a vector field at a point that is
//! not a fixed point changes with the chart (J̃ = S J S⁻¹ + (DS) f with
//! f ≠ 0), so the frozen pencil would list modes of no coordinate-free
//! meaning; the error names `--static`.

use nalgebra::{Complex, DMatrix, DVector};

use jounce_mechanics::MechanicalSystem;

use crate::modes::{modes_of_jacobian, shape_labelled, stiffness_ratio, ModeAnalysis, ModesError};
use crate::step_stability::MAX_DIMENSION;

/// ‖M a‖∞ = ‖Q − Φ_vᵀλ‖∞ accepted at an equilibrium, relative to the
/// scale max(‖Q‖∞, ‖Φ_vᵀλ‖∞, ‖K‖∞ · 1 m): the loads balance to this
/// fraction of the largest, or the state lies within about this many
/// metres (radians) of the equilibrium under the stiffness K. The static
/// equilibrium's force tolerance
/// ([`crate::static_equilibrium::FORCE_TOL`], 1e-11) passes with room for
/// the rounding of the multipliers; a body released away from its
/// equilibrium (a residual of the order of its loads) does not.
pub const TANGENT_EQUILIBRIUM_TOL: f64 = 1e-8;

/// Singular values of Φ_v below this fraction of the largest span its
/// null space (redundant rows give about 1e-16).
const RANK_TOL: f64 = 1e-9;

/// The modes of `sys` linearised at the equilibrium (t, q, v = 0) in the
/// tangent space of its configuration manifold (module documentation);
/// tangent coordinate i (of n_v) is named `label(i)` in the mode shapes.
///
/// # Errors
/// [`ModesError::Eval`] for a state of the wrong length or not finite, or
/// a motion the constraints allow that has no inertia (NᵀMN singular);
/// [`ModesError::TangentNotAnEquilibrium`] at a state with velocities or
/// unbalanced forces; [`ModesError::NoEigenvalues`] when the eigenvalues
/// fail. Above [`MAX_DIMENSION`] states (2 (n_v − m)) the same pencil is
/// solved on the sparse path ([`crate::modes::sparse_modes_labelled`]:
/// the lowest modes and the fastest), with its errors.
pub fn tangent_modes<S: MechanicalSystem + ?Sized>(
    sys: &S,
    t: f64,
    q: &[f64],
    v: &[f64],
    label: &dyn Fn(usize) -> String,
) -> Result<ModeAnalysis, ModesError> {
    let (n, m) = (sys.nv(), sys.nc());
    if q.len() != sys.nq() || v.len() != n || q.iter().chain(v).any(|x| !x.is_finite()) {
        return Err(ModesError::Eval(
            "the state is not finite or has the wrong length".into(),
        ));
    }
    // a large model: at least 2 (n_v − m) states, above the dense
    // budget; the same pencil on the sparse path (shift-invert Arnoldi for
    // the lowest modes and the fastest)
    if 2 * n.saturating_sub(m) > MAX_DIMENSION {
        return crate::modes::sparse_modes_labelled(
            sys,
            t,
            q,
            v,
            crate::modes::SPARSE_LOWEST_MODES,
            label,
        );
    }
    let mut mass = DMatrix::zeros(n, n);
    sys.mass_matrix(q, &mut mass);
    let mut phi_v = DMatrix::zeros(m, n);
    sys.constraint_jacobian(t, q, &mut phi_v);
    let mut f = vec![0.0; n];
    sys.generalized_forces(t, q, v, &mut f);
    let mut gamma = vec![0.0; m];
    sys.gamma(t, q, v, &mut gamma);

    // [M Φ_vᵀ; Φ_v 0][a; λ] = [Q; γ], least squares: the minimum-norm λ
    // of redundant rows (as the static equilibrium reports)
    let kkt = DMatrix::from_fn(n + m, n + m, |i, j| match (i < n, j < n) {
        (true, true) => mass[(i, j)],
        (true, false) => phi_v[(j - n, i)],
        (false, true) => phi_v[(i - n, j)],
        (false, false) => 0.0,
    });
    let rhs = DVector::from_iterator(n + m, f.iter().chain(&gamma).copied());
    let svd = kkt.svd(true, true);
    let eps = 1e-13 * svd.singular_values.max().max(f64::MIN_POSITIVE);
    let sol = svd
        .solve(&rhs, eps)
        .map_err(|e| ModesError::Eval(e.into()))?;
    let (a, lambda) = (sol.rows(0, n).into_owned(), sol.rows(n, m).into_owned());
    if sol.iter().any(|x| !x.is_finite()) {
        return Err(ModesError::NoEigenvalues);
    }
    // K = ∂(Φ_vᵀλ)/∂Δ − ∂Q/∂Δ, C = −∂Q/∂v (exact tangents of the system)
    let (mut dq, mut dv) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
    sys.force_jacobians(t, q, v, &mut dq, &mut dv);
    let mut kc = DMatrix::zeros(n, n);
    if m > 0 {
        sys.constraint_force_jacobian(t, q, lambda.as_slice(), &mut kc);
    }
    let stiffness = kc - dq;
    let unbalanced = (&mass * &a).amax();
    let reactions = phi_v.tr_mul(&lambda);
    // the larger of the loads and of the force the stiffness makes over
    // 1 m (or 1 rad): balanced to TANGENT_EQUILIBRIUM_TOL of the loads
    // (Q itself may nearly vanish at an equilibrium: gravity held by
    // springs), or within about TANGENT_EQUILIBRIUM_TOL m (rad) of the
    // equilibrium under K
    let scale = reactions
        .amax()
        .max(f.iter().fold(0.0_f64, |s, x| s.max(x.abs())))
        .max(stiffness.amax())
        .max(f64::MIN_POSITIVE);
    let speed = v.iter().fold(0.0_f64, |s, x| s.max(x.abs()));
    if speed != 0.0 || unbalanced > TANGENT_EQUILIBRIUM_TOL * scale {
        return Err(ModesError::TangentNotAnEquilibrium {
            unbalanced,
            scale,
            speed,
        });
    }

    // N: the right singular vectors of [Φ_v; 0] (square, so that all n
    // come out) of singular values below RANK_TOL σ_max
    let rows = m.max(n);
    let padded = DMatrix::from_fn(rows, n, |i, j| if i < m { phi_v[(i, j)] } else { 0.0 });
    let svd = padded.svd(false, true);
    let vt = svd.v_t.ok_or(ModesError::NoEigenvalues)?;
    let smax = svd.singular_values.max();
    let free: Vec<usize> = (0..svd.singular_values.len())
        .filter(|&k| svd.singular_values[k] <= RANK_TOL * smax)
        .collect();
    let p = free.len();
    let basis = DMatrix::from_fn(n, p, |i, c| vt[(free[c], i)]);
    if p == 0 {
        return Ok(ModeAnalysis {
            t,
            degrees_of_freedom: 0,
            independent_coordinates: vec![],
            eigenvalues: vec![],
            modes: vec![],
            stiffness_ratio: None,
            partial_spectrum: None,
        });
    }
    if 2 * p > MAX_DIMENSION {
        return Err(ModesError::TooLarge(2 * p));
    }

    let reduce = |x: &DMatrix<f64>| basis.tr_mul(x) * &basis;
    let (m_r, c_r, k_r) = (reduce(&mass), reduce(&(-dv)), reduce(&stiffness));
    let m_inv = m_r.clone().try_inverse().filter(|inv| {
        let cond = inv.amax() * m_r.amax();
        inv.iter().all(|x| x.is_finite()) && cond < 1e14
    });
    let Some(m_inv) = m_inv else {
        return Err(ModesError::Eval(
            "the reduced mass matrix NᵀMN is singular: a motion the constraints allow has no \
             inertia (a body's mass or a principal moment of inertia is zero)"
                .into(),
        ));
    };
    let (mk, mc) = (&m_inv * k_r, &m_inv * c_r);
    let jac = DMatrix::from_fn(2 * p, 2 * p, |i, j| match (i < p, j < p) {
        (true, true) => 0.0,
        (true, false) => f64::from(u8::from(i == j - p)),
        (false, true) => -mk[(i - p, j)],
        (false, false) => -mc[(i - p, j - p)],
    });
    let shape = |x: &[Complex<f64>]| {
        let xv = DVector::from_column_slice(x);
        let delta = basis.map(|b| Complex::new(b, 0.0)) * xv;
        shape_labelled(label, delta.as_slice())
    };
    let (ev, modes) = modes_of_jacobian(&jac, p, shape)?;
    let stiffness_ratio = stiffness_ratio(&modes);
    Ok(ModeAnalysis {
        t,
        degrees_of_freedom: p,
        independent_coordinates: vec![],
        eigenvalues: ev.iter().map(|l| (l.re, l.im)).collect(),
        modes,
        stiffness_ratio,
        partial_spectrum: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::static_equilibrium::{static_equilibrium, tests::SPATIAL_DOUBLE_PENDULUM};
    use jounce_mechanics::SpatialSystem;

    fn hanging() -> (SpatialSystem, Vec<f64>) {
        let model = jounce_model::from_str(SPATIAL_DOUBLE_PENDULUM, "sdp.toml").unwrap();
        let sys = SpatialSystem::from_model(&model).unwrap();
        let (q0, _) = sys.initial_state();
        let q = static_equilibrium(&sys, 0.0, &q0).unwrap().q;
        (sys, q)
    }

    fn sorted_eigenvalues(a: &ModeAnalysis) -> Vec<(f64, f64)> {
        let mut ev = a.eigenvalues.clone();
        ev.sort_by(|x, y| x.1.total_cmp(&y.1).then(x.0.total_cmp(&y.0)));
        ev
    }

    #[test]
    fn the_modes_do_not_depend_on_the_sign_of_the_quaternions() {
        // p and −p are one rotation: the chart q ⊞ Δ about either gives
        // the same pencil up to rounding, hence the same eigenvalues
        let (sys, q) = hanging();
        let v = vec![0.0; sys.nv()];
        let label = |i: usize| sys.tangent_label(i);
        let a = tangent_modes(&sys, 0.0, &q, &v, &label).unwrap();
        let mut flipped = q.clone();
        for b in 0..2 {
            for k in 3..7 {
                flipped[7 * b + k] = -flipped[7 * b + k];
            }
        }
        let b = tangent_modes(&sys, 0.0, &flipped, &v, &label).unwrap();
        assert_eq!(a.degrees_of_freedom, 6);
        let (ea, eb) = (sorted_eigenvalues(&a), sorted_eigenvalues(&b));
        assert_eq!(ea.len(), 12);
        for (x, y) in ea.iter().zip(&eb) {
            assert!(
                (x.1 - y.1).abs() < 1e-10 * (1.0 + x.1.abs()),
                "{ea:?} {eb:?}"
            );
        }
        // linearised_modes takes the tangent path for n_q ≠ n_v, with
        // generic labels
        let c = crate::modes::linearised_modes(&sys, 0.0, &q, &v).unwrap();
        assert_eq!(sorted_eigenvalues(&c), ea);
        assert!(c.modes[0].shape[0].coordinate.starts_with("tangent["));
        assert!(a.modes[0].shape[0].coordinate.starts_with("link"));
    }

    #[test]
    fn bad_states_are_refused_by_name_without_panicking() {
        let (sys, q) = hanging();
        let v = vec![0.0; sys.nv()];
        let label = |i: usize| format!("d{i}");
        let short = tangent_modes(&sys, 0.0, &q[..7], &v, &label).unwrap_err();
        assert!(matches!(short, ModesError::Eval(_)), "{short}");
        let mut nan = q.clone();
        nan[2] = f64::NAN;
        let e = tangent_modes(&sys, 0.0, &nan, &v, &label).unwrap_err();
        assert!(e.to_string().contains("not finite"), "{e}");
        let mut moving = v.clone();
        moving[5] = 0.3;
        let e = tangent_modes(&sys, 0.0, &q, &moving, &label).unwrap_err();
        assert!(
            matches!(e, ModesError::TangentNotAnEquilibrium { speed, .. } if speed == 0.3),
            "{e}"
        );
        // the start, both links along a tilted line: not an equilibrium
        let (q0, _) = sys.initial_state();
        let e = tangent_modes(&sys, 0.0, &q0, &v, &label).unwrap_err();
        assert!(e.to_string().contains("--static"), "{e}");
    }
}
