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

use nalgebra::{Complex, DMatrix, DVector};
use serde::Serialize;

use jounce_formulation::{Formulation, StateSpace};
use jounce_mechanics::MechanicalSystem;

use crate::step_stability::{eigenvalues_of, linearised_jacobian, MAX_DIMENSION};

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
    /// Too many degrees of freedom for a dense eigen-decomposition.
    #[error("linearisation: {0} independent states, more than the {MAX_DIMENSION} a dense eigen-decomposition handles here (its Schur decomposition takes about 10 n³ flops and its matrices n² × 8 bytes each)")]
    TooLarge(usize),
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
        });
    }
    // refused before the partition and the state-space set-up, which cost
    // more than the refusal's budget themselves on a large model (a
    // 1000-link chain ran past 60 s there, issue 31): 2 (n_v − m) is at
    // most the 2p independent states, so it never refuses a model that
    // fits
    let lower_bound = 2 * (sys.nv() - sys.nc());
    if lower_bound > MAX_DIMENSION {
        return Err(ModesError::TooLarge(lower_bound));
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
        });
    }
    if y.len() > MAX_DIMENSION {
        return Err(ModesError::TooLarge(y.len()));
    }
    let jac = linearised_jacobian(&mut form, t, &y)
        .map_err(|e| ModesError::Eval(e.to_string()))?
        .ok_or(ModesError::NoEigenvalues)?;
    let ev = eigenvalues_of(jac.clone()).ok_or(ModesError::NoEigenvalues)?;

    // B = ∂q/∂q_i (n × p)
    let n = sys.nq();
    let mut phi_q = DMatrix::zeros(sys.nc(), sys.nv());
    sys.constraint_jacobian(t, q, &mut phi_q);
    let b = position_map(&phi_q, &independent, &dependent, n);

    let jnorm = jac
        .row_iter()
        .map(|r| r.iter().map(|x| x.abs()).sum::<f64>())
        .fold(0.0, f64::max);
    let rigid_tol = 100.0 * (f64::EPSILON * jnorm.max(1.0)).sqrt();
    let mut modes = Vec::new();
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
        let x = null_vector(&jac, lam);
        let dq_i: Vec<Complex<f64>> = x.iter().take(p).copied().collect();
        modes.push(Mode {
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
            shape: shape(sys, &b, &dq_i),
        });
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
                    shape: shape(sys, &b, &dq_i),
                });
            }
        }
    }
    let mags: Vec<f64> = modes
        .iter()
        .filter(|m| m.kind != ModeKind::RigidBody)
        .map(Mode::magnitude)
        .collect();
    let stiffness_ratio = (!mags.is_empty()).then(|| {
        let hi = mags.iter().copied().fold(0.0, f64::max);
        let lo = mags.iter().copied().fold(f64::INFINITY, f64::min);
        hi / lo
    });
    Ok(ModeAnalysis {
        t,
        degrees_of_freedom: p,
        independent_coordinates: labels,
        eigenvalues: ev.iter().map(|l| (l.re, l.im)).collect(),
        modes,
        stiffness_ratio,
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
    let n = b.nrows();
    let x = DVector::from_column_slice(dq_i);
    let bc = b.map(|v| Complex::new(v, 0.0));
    let dq = bc * x;
    let k = (0..n).max_by(|&a, &c| dq[a].norm().total_cmp(&dq[c].norm()));
    let Some(k) = k else { return vec![] };
    let ref_val = dq[k];
    let r2 = ref_val.norm_sqr();
    if r2 == 0.0 || !r2.is_finite() {
        return vec![];
    }
    let mut entries: Vec<ShapeEntry> = (0..n)
        .map(|j| ShapeEntry {
            coordinate: sys.coordinate_label(j),
            amplitude: (dq[j] * ref_val.conj()).re / r2,
        })
        .filter(|e| e.amplitude.abs() >= SHAPE_MIN_AMPLITUDE)
        .collect();
    entries.sort_by(|a, c| c.amplitude.abs().total_cmp(&a.amplitude.abs()));
    entries.truncate(SHAPE_MAX_ENTRIES);
    entries
}
