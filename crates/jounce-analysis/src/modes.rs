//! Linearised vibration modes of a constrained system, in the independent
//! coordinates of the constrained system.
//!
//! The `state_space` formulation ([`jounce_formulation::StateSpace`]) is an
//! ODE y' = f(t, y) in y = [q_i; v_i], the independent coordinates of a
//! partition of q and their velocities (Haug, Negrut & Iancu 1997; Wehage
//! & Haug 1982). Its Jacobian J = ∂f/∂y at a state (exact, chained through
//! the implicit-function derivatives of the dependent coordinates;
//! otherwise central differences, [`linearised_jacobian`]) is the
//! linearisation y' ≈ J y of the constrained system: 2p eigenvalues for p
//! degrees of freedom, the constraints already eliminated (a pendulum of
//! two bodies has 2 modes, not 2 × 3 minus the constraints). At an
//! equilibrium these are the roots of det(λ² M_r + λ C_r + K_r) = 0 with
//! M_r, C_r, K_r the mass, damping and stiffness reduced to the
//! independent coordinates (Géradin & Rixen, *Mechanical Vibrations*,
//! 2015, Section 2.6); elsewhere (a state of a run) they are the frozen
//! linearisation that bounds an integrator's step.
//!
//! Each complex pair λ = −ζω_n ± iω_n√(1 − ζ²) is one mode with
//! **natural frequency** f_n = |λ|/2π (Hz, the undamped one) and **damping
//! ratio** ζ = −Re λ/|λ| (studies.md S2 prints "714 Hz / 0.112" in these
//! terms); the damped frequency |Im λ|/2π is given too. A real eigenvalue
//! is an overdamped (or, positive, unstable) mode of its own. Eigenvalues
//! with |λ| below the round-off of a Jordan block, 100 √(ε ‖J‖∞), are
//! rigid-body modes (λ = 0: a free coordinate without stiffness), one per
//! independent null vector of J.
//!
//! The mode shape is the eigenvector's position part mapped back to body
//! coordinates, δq = B δq_i with B = ∂q/∂q_i (identity on the independent
//! coordinates, −Φ_q,d⁻¹Φ_q,i on the dependent ones), scaled so that its
//! largest component is +1 (the other entries in phase with it, signed).
//!
//! **Large models** (more than [`MAX_DIMENSION`] independent states, a
//! system with a sparsity pattern and a constant mass matrix): no dense
//! 2p × 2p Jacobian is formed. The linearisation is taken in the
//! descriptor form of all n coordinates and the m multipliers,
//!
//! ```text
//! λ² M x + λ C x + K x + Φ_qᵀ μ = 0,   Φ_q x = 0,
//! K = ∂(Φ_qᵀλ)/∂q − ∂Q/∂q,   C = −∂Q/∂v,
//! ```
//!
//! λ the multipliers of the state (from [M Φ_qᵀ; Φ_q 0][q''; λ] = [Q; γ]),
//! whose eigenvalues are those of the independent-coordinate Jacobian at
//! an equilibrium (the reduction x = B x_i, Bᵀ(λ²M + λC + K)B, Géradin &
//! Rixen Section 2.6). Elsewhere (a state that is not an equilibrium, as
//! the initial state of a chain released horizontally) it would be the
//! frozen tangent pencil, which leaves out the partition-dependent
//! curvature term −M ∂B/∂q_i q_i'' and, with velocities, the derivatives
//! of γ: there the sparse path refuses, naming `--static`, rather than
//! list wrong modes. In first-order form y = [x; λx], the
//! [`SPARSE_LOWEST_MODES`] modes of least |λ| come from Arnoldi's method
//! on the shift-invert operator (J − σ)⁻¹ (Ericsson & Ruhe, *The spectral
//! transformation Lanczos method*, Math. Comp. 35, 1980; Saad, *Numerical
//! Methods for Large Eigenvalue Problems*, 2011, Sections 6.2 and 7.3),
//! each application one solve with the sparse LU of
//!
//! ```text
//! [ K + σC + σ²M   Φ_qᵀ ] [ x ]   [ −M (w + σ z) − C z ]
//! [ Φ_q            0    ] [ μ ] = [ 0                  ],   (J − σ)⁻¹ [z; w] = [x; z + σx],
//! ```
//!
//! σ = 0 unless that matrix is singular; the fastest mode from Arnoldi's
//! method on J itself (one solve with [M Φ_qᵀ; Φ_q 0] per step). Only
//! those modes are listed, and [`ModeAnalysis::partial_spectrum`] says so.

use nalgebra::{Complex, DMatrix, DVector};
use serde::Serialize;

use jounce_formulation::{Formulation, StateSpace};
use jounce_mechanics::MechanicalSystem;

use crate::sparse_kkt::{arnoldi, Ritz, SparseKkt};
use crate::step_stability::{eigenvalues_of, linearised_jacobian, MAX_DIMENSION};

/// Modes of least |λ| the sparse path (large models) computes.
pub const SPARSE_LOWEST_MODES: usize = 20;
/// Largest Krylov basis of the sparse path's Arnoldi iterations.
pub const MAX_KRYLOV: usize = 300;
/// Most coordinates the sparse path takes: its Krylov basis holds
/// [`MAX_KRYLOV`] vectors of 2 n_v entries, 1 GB at this limit.
pub const MAX_SPARSE_COORDINATES: usize = 200_000;
/// Relative residual ‖(T − θ)x‖/|θ| at which a Ritz pair is accepted.
pub const RITZ_TOL: f64 = 1e-11;

/// Smallest relative amplitude listed in a mode shape.
pub const SHAPE_MIN_AMPLITUDE: f64 = 0.05;
/// Most coordinates listed in a mode shape.
pub const SHAPE_MAX_ENTRIES: usize = 4;

/// What kind of mode an eigenvalue is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ModeKind {
    /// A complex pair: a vibration.
    Oscillatory,
    /// A real eigenvalue: an overdamped (λ < 0) or diverging (λ > 0) motion.
    Real,
    /// λ = 0: a coordinate free to move without stiffness.
    RigidBody,
}

/// One coordinate of a mode shape.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShapeEntry {
    /// Coordinate label, e.g. `mass1.x`.
    pub coordinate: String,
    /// Amplitude relative to the largest component (signed: in phase +,
    /// opposite −).
    pub amplitude: f64,
}

/// One mode of the linearisation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Mode {
    /// Kind of mode.
    pub kind: ModeKind,
    /// Re λ [1/s] (of the member with Im λ ≥ 0 for a pair).
    pub eigenvalue_re: f64,
    /// Im λ [1/s] (≥ 0).
    pub eigenvalue_im: f64,
    /// Natural frequency |λ|/2π \[Hz\].
    pub natural_frequency_hz: f64,
    /// Damped frequency |Im λ|/2π \[Hz\].
    pub damped_frequency_hz: f64,
    /// Damping ratio ζ = −Re λ/|λ| (0 undamped, 1 critical or
    /// overdamped, negative unstable; 0 for a rigid-body mode).
    pub damping_ratio: f64,
    /// The coordinates that move most, largest first.
    pub shape: Vec<ShapeEntry>,
}

impl Mode {
    /// The mode of eigenvalue λ (the member with Im λ ≥ 0 of a pair;
    /// `real`: a real eigenvalue, Im λ rounding) and shape `shape`:
    /// natural frequency |λ|/2π, damped frequency |Im λ|/2π, damping ratio
    /// ζ = −Re λ/|λ|.
    fn of_eigenvalue(lam: Complex<f64>, real: bool, shape: Vec<ShapeEntry>) -> Self {
        let mag = lam.norm();
        Mode {
            kind: if real {
                ModeKind::Real
            } else {
                ModeKind::Oscillatory
            },
            eigenvalue_re: lam.re,
            eigenvalue_im: lam.im,
            natural_frequency_hz: mag / std::f64::consts::TAU,
            damped_frequency_hz: lam.im.abs() / std::f64::consts::TAU,
            damping_ratio: -lam.re / mag,
            shape,
        }
    }

    /// |λ| [1/s].
    pub fn magnitude(&self) -> f64 {
        self.eigenvalue_re.hypot(self.eigenvalue_im)
    }

    /// λ as a complex number.
    pub fn eigenvalue(&self) -> Complex<f64> {
        Complex::new(self.eigenvalue_re, self.eigenvalue_im)
    }

    /// The shape as text: `mass1.x +1.00, mass2.x -0.02`.
    pub fn shape_text(&self) -> String {
        self.shape
            .iter()
            .map(|e| format!("{} {:+.2}", e.coordinate, e.amplitude))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The modes of a system at one state.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModeAnalysis {
    /// Time of the state \[s\].
    pub t: f64,
    /// Degrees of freedom p (independent coordinates).
    pub degrees_of_freedom: usize,
    /// Labels of the independent coordinates of the partition.
    pub independent_coordinates: Vec<String>,
    /// All 2p eigenvalues as (Re, Im) [1/s].
    pub eigenvalues: Vec<(f64, f64)>,
    /// Modes, fastest first, rigid-body modes last.
    pub modes: Vec<Mode>,
    /// Fastest over slowest |λ| of the modes that are not rigid-body ones
    /// (`None` without such modes).
    pub stiffness_ratio: Option<f64>,
    /// For a large model, which modes are listed (only some of the p are
    /// computed, see the module documentation); `None` when all are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial_spectrum: Option<String>,
}

impl ModeAnalysis {
    /// All eigenvalues as complex numbers.
    pub fn complex_eigenvalues(&self) -> Vec<Complex<f64>> {
        self.eigenvalues
            .iter()
            .map(|&(re, im)| Complex::new(re, im))
            .collect()
    }

    /// The modes that are not rigid-body ones.
    pub fn vibration_modes(&self) -> impl Iterator<Item = &Mode> {
        self.modes.iter().filter(|m| m.kind != ModeKind::RigidBody)
    }
}

/// Why the modes could not be computed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ModesError {
    /// The state-space formulation refused the system or the state.
    #[error("linearisation: {0}")]
    Formulation(String),
    /// An evaluation failed at the state.
    #[error("linearisation: evaluation failed: {0}")]
    Eval(String),
    /// Too many coordinates even for the sparse path.
    #[error("linearisation: {0} coordinates, more than the {MAX_SPARSE_COORDINATES} the sparse Arnoldi iteration takes (its Krylov basis of {MAX_KRYLOV} vectors of 2 n entries would pass 1 GB)")]
    TooLargeForSparse(usize),
    /// Too many degrees of freedom for a dense eigen-decomposition.
    #[error("linearisation: {0} independent states, more than the {MAX_DIMENSION} a dense eigen-decomposition handles here (its Schur decomposition takes about 10 n³ flops and its matrices n² × 8 bytes each)")]
    TooLarge(usize),
    /// The sparse path at a state that is not an equilibrium: its frozen
    /// tangent pencil leaves out the curvature term of independent
    /// coordinates, so its modes would be wrong.
    #[error("linearisation: the state is not an equilibrium (|q''| up to {accel:.3e}, |v| up to {speed:.3e}) and the model has {states} independent states, more than the {MAX_DIMENSION} of the dense path: the sparse path linearises only at an equilibrium (its tangent pencil in all coordinates leaves out the curvature term of independent coordinates elsewhere); linearise at the static equilibrium (modes --static)")]
    NotAnEquilibrium {
        /// max |q''| at the state.
        accel: f64,
        /// max |v| at the state.
        speed: f64,
        /// Independent states 2 (n − m).
        states: usize,
    },
    /// A model whose positions carry unit quaternions (n_q ≠ n_v) at a
    /// state that is not an equilibrium: its tangent-space linearisation
    /// holds only there ([`crate::tangent_modes()`]).
    #[error("linearisation: the state is not an equilibrium (unbalanced forces |Q − Φ_vᵀλ| up to {unbalanced:.3e}, more than 1e-8 of {scale:.3e}, the largest load or the stiffness over 1 m; |v| up to {speed:.3e}): the modes of a model with rotations in unit quaternions are taken in the tangent space of its configurations at an equilibrium only (elsewhere the frozen Jacobian depends on the chart of the rotations); linearise at the static equilibrium (modes --static)")]
    TangentNotAnEquilibrium {
        /// ‖Q − Φ_vᵀλ‖∞ (= ‖M a‖∞) at the state.
        unbalanced: f64,
        /// max(‖Q‖∞, ‖Φ_vᵀλ‖∞, ‖K‖∞ · 1 m).
        scale: f64,
        /// max |v|.
        speed: f64,
    },
    /// The eigenvalue iteration did not converge or gave non-finite values.
    #[error("linearisation: the eigenvalues of the Jacobian did not converge (non-finite or extreme entries)")]
    NoEigenvalues,
}

/// The modes of `sys` linearised at (t, q, v) in independent coordinates
/// (module documentation). `q`, `v` must satisfy the constraints (an
/// assembled state or a state of a run).
///
/// # Errors
/// [`ModesError`] naming what failed.
pub fn linearised_modes<S: MechanicalSystem + ?Sized>(
    sys: &S,
    t: f64,
    q: &[f64],
    v: &[f64],
) -> Result<ModeAnalysis, ModesError> {
    if sys.nc() >= sys.nv() {
        // fully driven or locked (Φ_q of full row rank, as the caller
        // passes independent rows): no free motion to linearise
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
    if sys.nq() != sys.nv() {
        // unit quaternions: no partition of q, the tangent space instead
        return crate::tangent_modes::tangent_modes(sys, t, q, v, &|i| format!("tangent[{i}]"));
    }
    // refused before the partition and the state-space set-up, which cost
    // more than the refusal's budget themselves on a large model (a
    // 1000-link chain ran past 60 s there, issue 31): 2 (n_v − m) is at
    // most the 2p independent states, so it never refuses a model that
    // fits
    let lower_bound = 2 * (sys.nv() - sys.nc());
    if lower_bound > MAX_DIMENSION {
        return sparse_modes(sys, t, q, v, SPARSE_LOWEST_MODES);
    }
    let mut form =
        StateSpace::new(sys, 2.0, 1e6).map_err(|e| ModesError::Formulation(e.to_string()))?;
    let y = form
        .initial_state(t, q, v)
        .map_err(|e| ModesError::Formulation(e.to_string()))?;
    let p = y.len() / 2;
    let independent: Vec<usize> = form.independent().to_vec();
    let dependent: Vec<usize> = form.dependent().to_vec();
    let labels: Vec<String> = independent
        .iter()
        .map(|&i| sys.coordinate_label(i))
        .collect();
    if p == 0 {
        return Ok(ModeAnalysis {
            t,
            degrees_of_freedom: 0,
            independent_coordinates: labels,
            eigenvalues: vec![],
            modes: vec![],
            stiffness_ratio: None,
            partial_spectrum: None,
        });
    }
    if y.len() > MAX_DIMENSION {
        return Err(ModesError::TooLarge(y.len()));
    }
    let jac = linearised_jacobian(&mut form, t, &y)
        .map_err(|e| ModesError::Eval(e.to_string()))?
        .ok_or(ModesError::NoEigenvalues)?;
    // B = ∂q/∂q_i (n × p)
    let n = sys.nq();
    let mut phi_q = DMatrix::zeros(sys.nc(), sys.nv());
    sys.constraint_jacobian(t, q, &mut phi_q);
    let b = position_map(&phi_q, &independent, &dependent, n);
    let (ev, modes) = modes_of_jacobian(&jac, p, |dq_i| shape(sys, &b, dq_i))?;
    let stiffness_ratio = stiffness_ratio(&modes);
    Ok(ModeAnalysis {
        t,
        degrees_of_freedom: p,
        independent_coordinates: labels,
        eigenvalues: ev.iter().map(|l| (l.re, l.im)).collect(),
        modes,
        stiffness_ratio,
        partial_spectrum: None,
    })
}

/// The eigenvalues of the first-order Jacobian `jac` (2p × 2p, y =
/// [x; x'] with x ∈ R^p) and its modes: one per complex pair or real
/// eigenvalue with |λ| above the round-off of a Jordan block,
/// 100 √(ε ‖J‖∞), fastest first; then the rigid-body modes, one per
/// independent null vector of J with a position part. `shape` maps the
/// position part x of an eigenvector to the listed coordinates.
///
/// # Errors
/// [`ModesError::NoEigenvalues`] when the Schur iteration fails.
pub(crate) fn modes_of_jacobian(
    jac: &DMatrix<f64>,
    p: usize,
    shape: impl Fn(&[Complex<f64>]) -> Vec<ShapeEntry>,
) -> Result<(Vec<Complex<f64>>, Vec<Mode>), ModesError> {
    let ev = eigenvalues_of(jac.clone()).ok_or(ModesError::NoEigenvalues)?;
    let jnorm = jac
        .row_iter()
        .map(|r| r.iter().map(|x| x.abs()).sum::<f64>())
        .fold(0.0, f64::max);
    let rigid_tol = 100.0 * (f64::EPSILON * jnorm.max(1.0)).sqrt();
    let mut modes = Vec::new();
    let mut listed: Vec<Complex<f64>> = Vec::new();
    for l in &ev {
        let mag = l.norm();
        if mag <= rigid_tol {
            continue;
        }
        let real = l.im.abs() <= 1e-10 * mag;
        if !real && l.im < 0.0 {
            continue; // one member of each pair
        }
        let lam = if real { Complex::new(l.re, 0.0) } else { *l };
        // a repeated eigenvalue (the two swings of a spherical pendulum):
        // the k-th listed takes the k-th real shape of its eigenspace
        let same = |o: &Complex<f64>| (o - lam).norm() <= REPEATED_EIGENVALUE * mag;
        let repeat = listed.iter().filter(|o| same(o)).count();
        // one basis per eigenspace: that of its first member
        let first = listed.iter().copied().find(|o| same(o)).unwrap_or(lam);
        listed.push(lam);
        let multiplicity = ev.iter().filter(|o| same(o)).count();
        let dq_i: Vec<Complex<f64>> = match (multiplicity > 1)
            .then(|| eigenspace_shapes(jac, first, p, rigid_tol))
            .and_then(|shapes| shapes.into_iter().nth(repeat))
        {
            Some(x) => x,
            None => null_vector(jac, lam).into_iter().take(p).collect(),
        };
        modes.push(Mode::of_eigenvalue(lam, real, shape(&dq_i)));
    }
    modes.sort_by(|a, b| b.magnitude().total_cmp(&a.magnitude()));
    // rigid-body modes: the null space of J, position parts
    let n_zero = ev.iter().filter(|l| l.norm() <= rigid_tol).count();
    if n_zero > 0 {
        let svd = jac.clone().svd(false, true);
        if let Some(vt) = svd.v_t {
            let mut idx: Vec<usize> = (0..svd.singular_values.len()).collect();
            idx.sort_by(|&a, &b| svd.singular_values[a].total_cmp(&svd.singular_values[b]));
            let smax = svd.singular_values.max();
            let count = idx
                .iter()
                .filter(|&&k| svd.singular_values[k] <= 1e-10 * smax.max(1.0))
                .count()
                .clamp(n_zero.div_ceil(2), n_zero);
            for &k in idx.iter().take(count) {
                let dq_i: Vec<Complex<f64>> =
                    (0..p).map(|j| Complex::new(vt[(k, j)], 0.0)).collect();
                if dq_i.iter().all(|c| c.norm() < 1e-12) {
                    continue; // a pure velocity null vector
                }
                modes.push(Mode {
                    kind: ModeKind::RigidBody,
                    eigenvalue_re: 0.0,
                    eigenvalue_im: 0.0,
                    natural_frequency_hz: 0.0,
                    damped_frequency_hz: 0.0,
                    damping_ratio: 0.0,
                    shape: shape(&dq_i),
                });
            }
        }
    }
    Ok((ev, modes))
}

/// Why the modes of `sys` with `states` independent states would be
/// refused before any evaluation, if they would: above [`MAX_DIMENSION`]
/// without the sparse path's structure (a sparsity pattern and a
/// constant mass matrix), or above [`MAX_SPARSE_COORDINATES`].
pub fn modes_refusal<S: MechanicalSystem + ?Sized>(sys: &S, states: usize) -> Option<ModesError> {
    use jounce_mechanics::SystemQueries;
    if states <= MAX_DIMENSION {
        return None;
    }
    if sys.sparsity().is_none() || !sys.mass_matrix_is_constant() {
        return Some(ModesError::TooLarge(states));
    }
    (sys.nv() > MAX_SPARSE_COORDINATES).then(|| ModesError::TooLargeForSparse(sys.nv()))
}

/// max |λ| / min |λ| over the modes that are not rigid-body ones (None
/// without any).
pub(crate) fn stiffness_ratio(modes: &[Mode]) -> Option<f64> {
    let mags = || {
        modes
            .iter()
            .filter(|m| m.kind != ModeKind::RigidBody)
            .map(Mode::magnitude)
    };
    mags().next()?;
    let hi = mags().fold(0.0, f64::max);
    let lo = mags().fold(f64::INFINITY, f64::min);
    Some(hi / lo)
}

/// |q''| (in the model's units) below which the sparse path takes a state
/// at rest for an equilibrium, scaled by 1 + √n.
const EQUILIBRIUM_ACCEL: f64 = 1e-8;

/// The `k` modes of least |λ| and the fastest mode of `sys` at
/// (t, q, v) by shift-invert Arnoldi on the sparse descriptor
/// linearisation (module documentation), whatever the model's size.
///
/// # Errors
/// [`ModesError::TooLarge`] for a system without a sparsity pattern or
/// with a configuration-dependent mass matrix,
/// [`ModesError::TooLargeForSparse`] above [`MAX_SPARSE_COORDINATES`],
/// [`ModesError::NotAnEquilibrium`] at a state with velocities or
/// accelerations (the frozen pencil would give wrong modes there),
/// [`ModesError::NoEigenvalues`] when a factorisation or the iteration
/// fails.
pub fn sparse_modes<S: MechanicalSystem + ?Sized>(
    sys: &S,
    t: f64,
    q: &[f64],
    v: &[f64],
    k: usize,
) -> Result<ModeAnalysis, ModesError> {
    sparse_modes_labelled(sys, t, q, v, k, &|j| sys.coordinate_label(j))
}

/// [`sparse_modes`] with velocity-space coordinate j named `label(j)` in
/// the mode shapes. Where n_q ≠ n_v (unit quaternions) the pencil is the
/// tangent-space one of [`crate::tangent_modes()`], M Δ'' + C Δ' + K Δ +
/// Φ_vᵀ μ = 0, Φ_v Δ = 0, in the n_v increments Δ of q ⊞ Δ: the same
/// matrices in the same sparse patterns (the system fills K and Φ_v
/// along q ⊞ δ), so the shift-invert Arnoldi iteration is unchanged and
/// only the labels of the shapes differ (`tangent_label`, e.g. `rod.rz`).
///
/// # Errors
/// As [`sparse_modes`].
pub fn sparse_modes_labelled<S: MechanicalSystem + ?Sized>(
    sys: &S,
    t: f64,
    q: &[f64],
    v: &[f64],
    k: usize,
    label: &dyn Fn(usize) -> String,
) -> Result<ModeAnalysis, ModesError> {
    let (n, m) = (sys.nv(), sys.nc());
    let states = 2 * n.saturating_sub(m);
    if let Some(e) = modes_refusal(sys, states.max(MAX_DIMENSION + 1)) {
        return Err(e);
    }
    if q.len() != sys.nq() || v.len() != n || q.iter().chain(v).any(|x| !x.is_finite()) {
        return Err(ModesError::Eval(
            "the state is not finite or has the wrong length".into(),
        ));
    }
    let mut sp = SparseKkt::new(sys, t, q).ok_or(ModesError::TooLarge(states))?;
    let p = n.saturating_sub(m);
    // the multipliers of the state: [M Φ_qᵀ; Φ_q 0][q''; λ] = [Q; γ]
    sp.fill_jacobian(sys, t, q);
    let mass = sp.mass.clone();
    if !sp.factor(&mass) {
        return Err(ModesError::NoEigenvalues);
    }
    let mut b = vec![0.0; n + m];
    sys.generalized_forces(t, q, v, &mut b[..n]);
    sys.gamma(t, q, v, &mut b[n..]);
    sp.solve(&mut b);
    let lambda = b[n..].to_vec();
    let accel = b[..n].iter().fold(0.0_f64, |a, x| a.max(x.abs()));
    let speed = v.iter().fold(0.0_f64, |a, x| a.max(x.abs()));
    // a state of rest up to rounding: the static equilibrium's residual
    // (forces to 1e-12 relative) passes, a chain released horizontally
    // (|q''| = g) does not
    if !(accel <= EQUILIBRIUM_ACCEL * (1.0 + (n as f64).sqrt()) && speed == 0.0) {
        return Err(ModesError::NotAnEquilibrium {
            accel,
            speed,
            states,
        });
    }
    if !sp.fill_tangent(sys, t, q, v, &lambda) || lambda.iter().any(|x| !x.is_finite()) {
        return Err(ModesError::Eval(
            "the sparse tangent is not available at the state".into(),
        ));
    }
    let (kk, cc) = (sp.k.clone(), sp.c.clone());
    let dim = 2 * n;
    let start: Vec<f64> = (0..dim)
        .map(|i| 1.0 + 0.5 * (((i * 7919 + 13) % 101) as f64 / 101.0))
        .collect();
    let steps = MAX_KRYLOV.min(2 * p).max(1);

    // lowest modes: shift-invert at σ (0, or a small negative shift when
    // K + σC + σ²M is singular, rigid-body modes)
    let kmax = kk.iter().fold(0.0_f64, |a, x| a.max(x.abs()));
    let mmax = sp.mass_max().max(f64::MIN_POSITIVE);
    let mut sigma = 0.0;
    // on unit quaternions a free turn (a hinge about the vertical) leaves
    // K singular in exact arithmetic while its LU succeeds on rounding:
    // 1/θ of ~1e16 then ends the Krylov basis after one pair (a 20-rod
    // spatial chain listed only its fastest mode), so the shift is taken
    // there always (λ = σ + 1/θ is exact for any σ)
    if sys.nq() != sys.nv() || !sp.factor(&kk) {
        sigma = -1e-3 * (kmax / mmax).sqrt().max(1e-3);
        if !sp.factor_with(|e, mv, _| kk[e] + sigma * cc[e] + sigma * sigma * mv) {
            return Err(ModesError::NoEigenvalues);
        }
    }
    let mut rhs = vec![0.0; n + m];
    let mut tmp = vec![0.0; n];
    let lowest = {
        let mut op = |y: &[f64], out: &mut [f64]| {
            let (z, w) = y.split_at(n);
            for i in 0..n {
                tmp[i] = -(w[i] + sigma * z[i]);
            }
            rhs.fill(0.0);
            sp.mul_add(&mass, &tmp, &mut rhs[..n]);
            for x in tmp.iter_mut() {
                *x = 0.0;
            }
            sp.mul_add(&cc, z, &mut tmp);
            for i in 0..n {
                rhs[i] -= tmp[i];
            }
            sp.solve(&mut rhs);
            for i in 0..n {
                out[i] = rhs[i];
                out[n + i] = z[i] + sigma * rhs[i];
            }
            true
        };
        arnoldi(dim, &start, 2, &mut op, (2 * k).min(2 * p), steps, RITZ_TOL)
            .ok_or(ModesError::NoEigenvalues)?
    };
    // the fastest mode: Arnoldi on J, [M Φ_qᵀ; Φ_q 0][w'; μ] = [−Kz − Cw; 0]
    if !sp.factor(&mass) {
        return Err(ModesError::NoEigenvalues);
    }
    let fastest = {
        let mut op = |y: &[f64], out: &mut [f64]| {
            let (z, w) = y.split_at(n);
            rhs.fill(0.0);
            sp.mul_add(&kk, z, &mut rhs[..n]);
            sp.mul_add(&cc, w, &mut rhs[..n]);
            for x in rhs[..n].iter_mut() {
                *x = -*x;
            }
            sp.solve(&mut rhs);
            out[..n].copy_from_slice(w);
            out[n..].copy_from_slice(&rhs[..n]);
            true
        };
        arnoldi(dim, &start, 2, &mut op, 2, steps, RITZ_TOL).ok_or(ModesError::NoEigenvalues)?
    };

    let mut eigen: Vec<(Complex<f64>, &Ritz)> = lowest
        .iter()
        .map(|r| {
            (
                Complex::new(sigma, 0.0) + Complex::new(1.0, 0.0) / r.value,
                r,
            )
        })
        .chain(fastest.iter().take(1).map(|r| (r.value, r)))
        .collect();
    eigen.retain(|(l, _)| l.re.is_finite() && l.im.is_finite());
    let top = eigen.iter().map(|(l, _)| l.norm()).fold(0.0, f64::max);
    // rigid-body modes below the round-off of a Jordan block, as on the
    // dense path (|J| taken as the fastest |λ|, at least 1)
    let rigid_tol = 100.0 * (f64::EPSILON * top.max(1.0)).sqrt();
    let mut modes: Vec<Mode> = Vec::new();
    let mut eigenvalues = Vec::new();
    for (l, r) in &eigen {
        let mag = l.norm();
        let real = l.im.abs() <= 1e-8 * mag;
        if eigenvalues
            .iter()
            .any(|e: &Complex<f64>| (e - l).norm() <= 1e-8 * mag.max(f64::MIN_POSITIVE))
        {
            continue; // the fastest mode among the lowest (a small model)
        }
        eigenvalues.push(*l);
        if !real {
            eigenvalues.push(l.conj());
        }
        // the member with Im λ ≥ 0 of a pair (its vector conjugated)
        let flip = !real && l.im < 0.0;
        let lam = if real {
            Complex::new(l.re, 0.0)
        } else if flip {
            l.conj()
        } else {
            *l
        };
        let dq: Vec<Complex<f64>> = r.vector[..n]
            .iter()
            .map(|c| if flip { c.conj() } else { *c })
            .collect();
        if mag <= rigid_tol {
            modes.push(Mode {
                kind: ModeKind::RigidBody,
                eigenvalue_re: 0.0,
                eigenvalue_im: 0.0,
                natural_frequency_hz: 0.0,
                damped_frequency_hz: 0.0,
                damping_ratio: 0.0,
                shape: shape_labelled(label, &dq),
            });
            continue;
        }
        modes.push(Mode::of_eigenvalue(lam, real, shape_labelled(label, &dq)));
    }
    // pairs whose conjugate was computed too appear once
    eigenvalues.sort_by(|a, b| b.norm().total_cmp(&a.norm()).then(b.im.total_cmp(&a.im)));
    eigenvalues.dedup_by(|a, b| (*a - *b).norm() <= 1e-8 * a.norm().max(f64::MIN_POSITIVE));
    modes.sort_by(|a, b| b.magnitude().total_cmp(&a.magnitude()));
    modes.sort_by_key(|m| m.kind == ModeKind::RigidBody);
    let stiffness_ratio = stiffness_ratio(&modes);
    let listed = modes.len();
    Ok(ModeAnalysis {
        t,
        degrees_of_freedom: p,
        independent_coordinates: vec![],
        eigenvalues: eigenvalues.iter().map(|l| (l.re, l.im)).collect(),
        modes,
        stiffness_ratio,
        partial_spectrum: Some(format!(
            "{listed} of {p} modes listed: the {k} of least |λ| and the fastest, by shift-invert \
             Arnoldi on the sparse linearisation in all coordinates (a model of more than {} \
             independent states)",
            MAX_DIMENSION
        )),
    })
}

/// B = ∂q/∂q_i: identity on the independent rows, −Φ_q,d⁺ Φ_q,i on the
/// dependent ones (pseudo-inverse: redundant rows are harmless).
fn position_map(phi_q: &DMatrix<f64>, ind: &[usize], dep: &[usize], n: usize) -> DMatrix<f64> {
    let p = ind.len();
    let mut b = DMatrix::zeros(n, p);
    for (k, &i) in ind.iter().enumerate() {
        b[(i, k)] = 1.0;
    }
    if dep.is_empty() || phi_q.nrows() == 0 {
        return b;
    }
    let m = phi_q.nrows();
    let pd = DMatrix::from_fn(m, dep.len(), |r, c| phi_q[(r, dep[c])]);
    let pi = DMatrix::from_fn(m, p, |r, c| phi_q[(r, ind[c])]);
    let svd = pd.svd(true, true);
    let eps = 1e-12 * svd.singular_values.max().max(f64::MIN_POSITIVE);
    if let Ok(x) = svd.solve(&(-pi), eps) {
        for (k, &d) in dep.iter().enumerate() {
            for c in 0..p {
                b[(d, c)] = x[(k, c)];
            }
        }
    }
    b
}

/// Eigenvalues closer than this fraction of |λ| are one repeated
/// eigenvalue (a semisimple double root computed by the Schur iteration
/// splits by rounding).
const REPEATED_EIGENVALUE: f64 = 1e-6;

/// The position parts (first `p` entries) of the eigenspace of a
/// repeated eigenvalue λ of `jac` as real orthonormal shapes: the right
/// singular vectors of J − λI of singular values below `tol` span the
/// eigenspace; the real and imaginary parts of their position parts span
/// its real motions (for an undamped system, x real in [x; λx]), and the
/// left singular vectors of that real p × 2r matrix, largest first, are
/// the shapes. So the two swings of a spherical pendulum are listed as
/// two perpendicular planar swings, not one twice or two circular motions.
fn eigenspace_shapes(
    jac: &DMatrix<f64>,
    lam: Complex<f64>,
    p: usize,
    tol: f64,
) -> Vec<Vec<Complex<f64>>> {
    let n = jac.nrows();
    let a = DMatrix::from_fn(n, n, |i, j| {
        Complex::new(jac[(i, j)], 0.0) - if i == j { lam } else { Complex::new(0.0, 0.0) }
    });
    let svd = a.svd(false, true);
    let Some(vt) = svd.v_t else {
        return vec![];
    };
    let null: Vec<usize> = (0..svd.singular_values.len())
        .filter(|&k| svd.singular_values[k] <= tol)
        .collect();
    if null.len() < 2 {
        return vec![];
    }
    let r = null.len();
    let real = DMatrix::from_fn(p, 2 * r, |i, c| {
        let z = vt[(null[c % r], i)].conj();
        if c < r {
            z.re
        } else {
            z.im
        }
    });
    let svd = real.svd(true, false);
    let Some(u) = svd.u else {
        return vec![];
    };
    let mut order: Vec<usize> = (0..svd.singular_values.len()).collect();
    order.sort_by(|&a, &b| svd.singular_values[b].total_cmp(&svd.singular_values[a]));
    order
        .into_iter()
        .take(r)
        .map(|k| (0..p).map(|i| Complex::new(u[(i, k)], 0.0)).collect())
        .collect()
}

/// A unit vector x with (J − λI) x ≈ 0: the right singular vector of the
/// smallest singular value.
fn null_vector(jac: &DMatrix<f64>, lam: Complex<f64>) -> Vec<Complex<f64>> {
    let n = jac.nrows();
    let a = DMatrix::from_fn(n, n, |i, j| {
        Complex::new(jac[(i, j)], 0.0) - if i == j { lam } else { Complex::new(0.0, 0.0) }
    });
    let svd = a.svd(false, true);
    let Some(vt) = svd.v_t else {
        return vec![Complex::new(0.0, 0.0); n];
    };
    let k = svd.singular_values.imin();
    (0..n).map(|j| vt[(k, j)].conj()).collect()
}

/// δq = B δq_i, scaled so its largest component is +1; the components of
/// at least [`SHAPE_MIN_AMPLITUDE`], largest first.
fn shape<S: MechanicalSystem + ?Sized>(
    sys: &S,
    b: &DMatrix<f64>,
    dq_i: &[Complex<f64>],
) -> Vec<ShapeEntry> {
    let x = DVector::from_column_slice(dq_i);
    let bc = b.map(|v| Complex::new(v, 0.0));
    let dq = bc * x;
    shape_of(sys, dq.as_slice())
}

/// The shape of the motion δq (all coordinates): scaled so that its
/// largest component is +1; the components of at least
/// [`SHAPE_MIN_AMPLITUDE`], largest first.
fn shape_of<S: MechanicalSystem + ?Sized>(sys: &S, dq: &[Complex<f64>]) -> Vec<ShapeEntry> {
    shape_labelled(&|j| sys.coordinate_label(j), dq)
}

/// The shape of the motion δ (coordinate j named `label(j)`): scaled so
/// that its largest component is +1; the components of at least
/// [`SHAPE_MIN_AMPLITUDE`], largest first.
pub(crate) fn shape_labelled(
    label: &dyn Fn(usize) -> String,
    dq: &[Complex<f64>],
) -> Vec<ShapeEntry> {
    let n = dq.len();
    let k = (0..n).max_by(|&a, &c| dq[a].norm().total_cmp(&dq[c].norm()));
    let Some(k) = k else { return vec![] };
    let ref_val = dq[k];
    let r2 = ref_val.norm_sqr();
    if r2 == 0.0 || !r2.is_finite() {
        return vec![];
    }
    let mut entries: Vec<ShapeEntry> = (0..n)
        .map(|j| ShapeEntry {
            coordinate: label(j),
            amplitude: (dq[j] * ref_val.conj()).re / r2,
        })
        .filter(|e| e.amplitude.abs() >= SHAPE_MIN_AMPLITUDE)
        .collect();
    entries.sort_by(|a, c| c.amplitude.abs().total_cmp(&a.amplitude.abs()));
    entries.truncate(SHAPE_MAX_ENTRIES);
    entries
}

#[cfg(test)]
mod tests {
    use super::*;
    use jounce_mechanics::PlanarSystem;

    fn chain_system(n: usize) -> PlanarSystem {
        let text = crate::static_equilibrium::tests::chain(n);
        let model = jounce_model::from_str(&text, "chain.toml").expect("valid model");
        PlanarSystem::from_model(&model).expect("valid system")
    }

    /// The hanging pose of the chain: link i centred at (0, −(i + ½)),
    /// θ = −π/2.
    fn hanging(n: usize) -> Vec<f64> {
        (0..n)
            .flat_map(|i| [0.0, -(i as f64 + 0.5), -std::f64::consts::FRAC_PI_2])
            .collect()
    }

    #[test]
    fn the_sparse_modes_of_a_hanging_chain_agree_with_the_dense_ones() {
        // 100 links (200 independent states, within the dense budget):
        // the 20 lowest and the highest frequency by shift-invert Arnoldi
        // on the sparse descriptor linearisation against the dense
        // Schur decomposition of the independent-coordinate Jacobian
        let n = 100;
        let sys = chain_system(n);
        let q = hanging(n);
        let v = vec![0.0; 3 * n];
        let dense = linearised_modes(&sys, 0.0, &q, &v).unwrap();
        let sparse = sparse_modes(&sys, 0.0, &q, &v, 20).unwrap();
        assert_eq!(dense.degrees_of_freedom, n);
        assert_eq!(sparse.degrees_of_freedom, n);
        let freqs = |a: &ModeAnalysis| -> Vec<f64> {
            let mut f: Vec<f64> = a
                .vibration_modes()
                .map(|m| m.natural_frequency_hz)
                .collect();
            f.sort_by(f64::total_cmp);
            f
        };
        let (fd, fs) = (freqs(&dense), freqs(&sparse));
        assert_eq!(fd.len(), n, "{fd:?}");
        assert_eq!(fs.len(), 21, "{fs:?}");
        for i in 0..20 {
            let rel = (fd[i] - fs[i]).abs() / fd[i];
            assert!(
                rel < 1e-8,
                "mode {i}: dense {} sparse {} ({rel:.1e})",
                fd[i],
                fs[i]
            );
        }
        let worst = (0..20)
            .map(|i| (fd[i] - fs[i]).abs() / fd[i])
            .fold(0.0, f64::max);
        let (hd, hs) = (fd[n - 1], fs[20]);
        eprintln!(
            "100 links: lowest {} Hz (dense {}), highest {hs} Hz (dense {hd}); worst relative \
             difference of the 20 lowest {worst:.1e}, of the highest {:.1e}",
            fs[0],
            fd[0],
            (hd - hs).abs() / hd
        );
        assert!(
            (hd - hs).abs() / hd < 1e-8,
            "highest: dense {hd} sparse {hs}"
        );
        for m in sparse.vibration_modes() {
            assert_eq!(m.kind, ModeKind::Oscillatory);
            assert!(m.damping_ratio.abs() < 1e-8, "{m:?}");
        }
        // the slowest mode swings the chain's free end most
        let slowest = sparse.modes.last().unwrap();
        assert_eq!(
            slowest.shape[0].coordinate,
            format!("link{}.x", n - 1),
            "{slowest:?}"
        );
        assert!(sparse
            .partial_spectrum
            .as_deref()
            .unwrap()
            .starts_with("21 of 100 modes listed"));
        assert!(dense.partial_spectrum.is_none());
    }

    #[test]
    fn the_sparse_path_refuses_bad_input_without_panicking() {
        let n = 10;
        let sys = chain_system(n);
        let mut q = hanging(n);
        let v = vec![0.0; 3 * n];
        assert!(matches!(
            sparse_modes(&sys, 0.0, &q[..5], &v, 4),
            Err(ModesError::Eval(_))
        ));
        q[4] = f64::NAN;
        assert!(matches!(
            sparse_modes(&sys, 0.0, &q, &v, 4),
            Err(ModesError::Eval(_))
        ));
        let e = crate::static_equilibrium::static_equilibrium_using(&sys, 0.0, &q, Some(true))
            .unwrap_err();
        assert!(e.to_string().contains("not finite"), "{e}");
        // a model the sparse path takes is not refused up front; the
        // budget of the sparse path is named when passed
        assert!(modes_refusal(&sys, 10 * MAX_DIMENSION).is_none());
        let msg = ModesError::TooLargeForSparse(MAX_SPARSE_COORDINATES + 1).to_string();
        assert!(
            msg.contains("200001 coordinates, more than the 200000"),
            "{msg}"
        );
    }
}
