//! Assembly: consistent initial positions and velocities, with a report of
//! degrees of freedom, redundant and singular constraints.
//!
//! # Positions
//! Gauss–Newton with minimum-norm steps on Φ(t, q) = 0:
//!
//! Δq = −Φ_q⁺ Φ,   q ← q + α Δq,
//!
//! Φ_q⁺ the SVD pseudo-inverse (singular values below 10⁻¹⁰ σ_max dropped),
//! so redundant (m > rank) and underdetermined (n > m) systems work and the
//! step changes q as little as possible. α is halved from 1 until the
//! Armijo condition ‖Φ(q + αΔq)‖₂ ≤ (1 − 10⁻⁴ α) ‖Φ(q)‖₂ holds. Converged
//! when max|Φᵢ| ≤ tol. Stalling above tol means the constraints cannot be
//! satisfied near the guess: the error names the worst rows.
//!
//! # Velocities
//! The least change of the user's velocities v₀ satisfying Φ_q v = −Φ_t:
//! v = v₀ + Φ_q⁺ (−Φ_t − Φ_q v₀).
//!
//! # Rank, redundancy, singularity
//! The rank of Φ_q is found by Gram–Schmidt over its rows in model order
//! (twice-orthogonalised), a row being dependent when its component
//! orthogonal to the previously kept rows is below 10⁻⁸ of its norm. Rows
//! are thus reported as dependent on *earlier* rows, so the element
//! declared last (the duplicate, the extra link) is the one named.
//!
//! The generic rank is the largest rank found at the assembled
//! configuration and at a few nearby configurations on the constraint
//! manifold (random perturbations projected back by the same Newton
//! method). Rows dependent there are *redundant*; rows that are dependent
//! only at the assembled configuration mark a *singular configuration*
//! (e.g. a four-bar at its change point). An isolated assembled point (no
//! nearby configurations) has its rank deficiency reported as redundancy.
//!
//! # Large systems
//! With at least [`SPARSE_MIN_ROWS`] constraint rows and a sparse Φ_q
//! pattern ([`SystemQueries::constraint_jacobian_pattern`]), the
//! minimum-norm steps use Φ_q⁺ = Φ_qᵀ (Φ_q Φ_qᵀ)⁻¹ with Φ_q Φ_qᵀ factored by
//! sparse LDLᵀ ([`GramFactor`]), O(N) for a chain instead of the O(N³)
//! SVD. Its pivots d_k are the squared norms of the components of the rows
//! orthogonal to the rows eliminated before them, so all pivots above
//! (10⁻⁸)² of their diagonal mean full row rank by the same criterion as
//! the Gram–Schmidt test; then there is nothing redundant or singular to
//! name. Only when a pivot falls below it does the dense analysis above
//! run, to name the rows in model order.

use nalgebra::{DMatrix, DVector};
use thiserror::Error;

use crate::capabilities::SystemQueries;
use crate::gram::GramFactor;
use crate::sparse::SparseMatrix;
use crate::system::MechanicalSystem;

/// Constraint rows from which assembly uses sparse Φ_q Φ_qᵀ factors
/// (when the system declares a sparse pattern).
pub const SPARSE_MIN_ROWS: usize = 60;

/// Relative singular-value cut-off of the pseudo-inverse.
const PINV_RTOL: f64 = 1e-10;
/// Relative threshold of the row-rank test.
const RANK_RTOL: f64 = 1e-8;
/// Maximum Newton iterations.
const MAX_ITER: usize = 100;
/// Number of nearby manifold samples used to estimate the generic rank.
const GENERIC_SAMPLES: usize = 3;

/// A consistent initial state and what was learnt about the constraints.
#[derive(Clone, Debug, PartialEq)]
pub struct Assembly {
    /// Assembled configuration (len nq), max|Φ| ≤ tol.
    pub q: Vec<f64>,
    /// Consistent velocities (len nv), Φ_q v + Φ_t = 0.
    pub v: Vec<f64>,
    /// Degrees of freedom of the mechanism, n − generic rank.
    pub dof: usize,
    /// Rank of Φ_q at the assembled configuration.
    pub rank: usize,
    /// Rank of Φ_q at nearby configurations on the manifold (≥ `rank`).
    pub generic_rank: usize,
    /// Labels of redundant constraint rows (linearly dependent on earlier
    /// rows at generic configurations), e.g. `joint 'extra' (x)`.
    pub redundant: Vec<String>,
    /// Indices of the rows in `redundant` (ascending): the rows
    /// [`crate::IndependentRows`] leaves out.
    pub redundant_rows: Vec<usize>,
    /// Labels of rows that lose independence only at this configuration
    /// (singular configuration); empty when the configuration is regular.
    pub singular: Vec<String>,
    /// max |Φᵢ| at `q`.
    pub position_residual: f64,
    /// max |(Φ_q v + Φ_t)ᵢ| at `q`, `v`.
    pub velocity_residual: f64,
    /// max |vᵢ − v_guessᵢ|: how much the user's velocities were changed.
    pub velocity_change: f64,
    /// Newton iterations used for the positions.
    pub iterations: usize,
}

/// Why assembly failed.
#[derive(Clone, Debug, PartialEq, Error)]
#[non_exhaustive]
pub enum AssemblyError {
    /// An input vector has the wrong length.
    #[error("assembly: {what} has length {got}, expected {expected}")]
    DimensionMismatch {
        /// Which input.
        what: &'static str,
        /// Expected length.
        expected: usize,
        /// Actual length.
        got: usize,
    },
    /// A non-finite value appeared (input, Φ or Φ_q).
    #[error("assembly: non-finite {what}")]
    NonFinite {
        /// What was not finite.
        what: String,
    },
    /// Newton could not reduce the constraint violation below tolerance.
    #[error(
        "constraints cannot be satisfied near the initial guess: max |Φ| = {residual:.3e} after {iterations} iterations; worst: {}",
        list(worst)
    )]
    Inconsistent {
        /// max |Φᵢ| reached.
        residual: f64,
        /// Newton iterations done.
        iterations: usize,
        /// The largest residual rows, (label, Φᵢ), largest first.
        worst: Vec<(String, f64)>,
    },
    /// The velocity constraints Φ_q v = −Φ_t have no solution (conflicting
    /// drivers on redundant constraints).
    #[error(
        "velocity constraints cannot be satisfied: max |Φ_q v + Φ_t| = {residual:.3e}; worst: {}",
        list(worst)
    )]
    InconsistentVelocity {
        /// max residual reached.
        residual: f64,
        /// The largest residual rows, (label, value), largest first.
        worst: Vec<(String, f64)>,
    },
}

fn list(rows: &[(String, f64)]) -> String {
    rows.iter()
        .map(|(l, r)| format!("{l} = {r:.3e}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn max_abs(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |m, v| m.max(v.abs()))
}

fn norm2(x: &[f64]) -> f64 {
    x.iter().map(|v| v * v).sum::<f64>().sqrt()
}

/// The `count` largest |rᵢ| with their row labels.
fn worst_rows<S: MechanicalSystem + ?Sized>(
    sys: &S,
    r: &[f64],
    count: usize,
) -> Vec<(String, f64)> {
    let mut idx: Vec<usize> = (0..r.len()).collect();
    idx.sort_by(|&a, &b| r[b].abs().total_cmp(&r[a].abs()));
    idx.into_iter()
        .take(count)
        .filter(|&i| r[i] != 0.0)
        .map(|i| (sys.constraint_label(i), r[i]))
        .collect()
}

/// Minimum-norm least-squares solution x = A⁺ b.
fn pinv_solve(a: &DMatrix<f64>, b: &[f64]) -> Option<DVector<f64>> {
    let svd = a.clone().svd(true, true);
    let smax = svd.singular_values.iter().fold(0.0_f64, |m, s| m.max(*s));
    if smax == 0.0 {
        return Some(DVector::zeros(a.ncols()));
    }
    svd.solve(&DVector::from_column_slice(b), PINV_RTOL * smax)
        .ok()
}

/// Sparse Φ_q and the factors of Φ_q Φ_qᵀ for minimum-norm solves.
struct SparseNormal {
    jac: SparseMatrix,
    gram: GramFactor,
    ones: Vec<f64>,
    work: Vec<f64>,
    rhs: Vec<f64>,
}

impl SparseNormal {
    /// For `sys` when it is large and its Φ_q pattern sparse (Φ_q and the
    /// steps in velocity space, n_v columns, also where n_q ≠ n_v).
    fn for_system<S: MechanicalSystem + ?Sized>(sys: &S) -> Option<SparseNormal> {
        let (n, m) = (sys.nv(), sys.nc());
        if m < SPARSE_MIN_ROWS {
            return None;
        }
        let jac = SparseMatrix::from_pattern(m, n, &sys.constraint_jacobian_pattern()?);
        let gram = GramFactor::new(&jac);
        Some(SparseNormal {
            jac,
            gram,
            ones: vec![1.0; n],
            work: vec![0.0; m],
            rhs: vec![0.0; m],
        })
    }

    /// Evaluate Φ_q at (t, q) and factor Φ_q Φ_qᵀ; false when a pivot
    /// falls below `tol_rel` of its diagonal (rank deficient) or Φ_q is
    /// not finite.
    fn factor<S: MechanicalSystem + ?Sized>(
        &mut self,
        sys: &S,
        t: f64,
        q: &[f64],
        tol_rel: f64,
    ) -> bool {
        sys.sparse_constraint_jacobian(t, q, &mut self.jac);
        self.jac.values.iter().all(|x| x.is_finite())
            && self.gram.factor(&self.jac, &self.ones, tol_rel).is_ok()
    }

    /// x = Φ_qᵀ (Φ_q Φ_qᵀ)⁻¹ b, the minimum-norm solution of Φ_q x = b.
    fn min_norm(&mut self, b: &[f64]) -> Vec<f64> {
        self.rhs.copy_from_slice(b);
        self.gram.solve_in_place(&mut self.rhs, &mut self.work);
        let mut x = vec![0.0; self.jac.ncols()];
        self.jac.tr_mul_add(&self.rhs, &mut x);
        x
    }
}

/// Rows of `jac` visited in `order`, split into independent rows and rows
/// dependent on the rows kept before them (Gram–Schmidt, twice).
pub fn dependent_rows(jac: &DMatrix<f64>, order: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let n = jac.ncols();
    let mut basis: Vec<DVector<f64>> = Vec::new();
    let (mut kept, mut dependent) = (Vec::new(), Vec::new());
    for &i in order {
        let row = DVector::from_iterator(n, jac.row(i).iter().copied());
        let norm = row.norm();
        let mut w = row;
        for _ in 0..2 {
            for b in &basis {
                let p = b.dot(&w);
                w.axpy(-p, b, 1.0);
            }
        }
        let wn = w.norm();
        if norm > 0.0 && wn > RANK_RTOL * norm {
            basis.push(w / wn);
            kept.push(i);
        } else {
            dependent.push(i);
        }
    }
    (kept, dependent)
}

/// Position Newton; Ok((q, iterations)) or Err((q, iterations, Φ)).
fn solve_positions<S: MechanicalSystem + ?Sized>(
    sys: &S,
    t: f64,
    q_guess: &[f64],
    tol: f64,
) -> Result<(Vec<f64>, usize), AssemblyError> {
    // Φ_q and the Newton step are in velocity space (n_v); q moves by
    // q ⊕ δ, starting from the guess projected onto the manifold (unit
    // quaternions; q itself in planar body coordinates)
    let (n, m) = (sys.nv(), sys.nc());
    let mut q = q_guess.to_vec();
    sys.integrate_position(q_guess, &vec![0.0; n], &mut q);
    let mut phi = vec![0.0; m];
    let mut trial_phi = vec![0.0; m];
    let mut trial = vec![0.0; sys.nq()];
    let mut step = vec![0.0; n];
    let mut sparse = SparseNormal::for_system(sys);
    let mut jac = if sparse.is_some() {
        DMatrix::zeros(0, 0)
    } else {
        DMatrix::zeros(m, n)
    };
    sys.constraints(t, &q, &mut phi);
    let inconsistent = |phi: &[f64], iterations| AssemblyError::Inconsistent {
        residual: max_abs(phi),
        iterations,
        worst: worst_rows(sys, phi, 3),
    };
    for it in 0..MAX_ITER {
        if !phi.iter().all(|x| x.is_finite()) {
            let bad = phi.iter().position(|x| !x.is_finite()).unwrap_or(0);
            return Err(AssemblyError::NonFinite {
                what: format!(
                    "constraint residual of {} at iteration {it}",
                    sys.constraint_label(bad)
                ),
            });
        }
        if max_abs(&phi) <= tol {
            return Ok((q, it));
        }
        let neg: Vec<f64> = phi.iter().map(|x| -x).collect();
        let sparse_step = match sparse.as_mut() {
            Some(sp) => sp.factor(sys, t, &q, PINV_RTOL).then(|| sp.min_norm(&neg)),
            None => None,
        };
        if sparse_step.is_none() {
            if jac.shape() != (m, n) {
                jac = DMatrix::zeros(m, n);
            }
            sys.constraint_jacobian(t, &q, &mut jac);
        }
        if sparse_step.is_none() && !jac.iter().all(|x| x.is_finite()) {
            let bad = (0..m)
                .find(|&i| !jac.row(i).iter().all(|x| x.is_finite()))
                .unwrap_or(0);
            return Err(AssemblyError::NonFinite {
                what: format!(
                    "constraint Jacobian row of {} at iteration {it} (singular point of the element, e.g. coincident points of a distance driver)",
                    sys.constraint_label(bad)
                ),
            });
        }
        let dq = match sparse_step {
            Some(dq) => DVector::from_vec(dq),
            None => {
                let Some(dq) = pinv_solve(&jac, &neg) else {
                    return Err(inconsistent(&phi, it));
                };
                dq
            }
        };
        // backtracking line search on ‖Φ‖₂
        let f0 = norm2(&phi);
        let mut alpha = 1.0;
        let mut accepted = false;
        while alpha > 1e-6 {
            for i in 0..n {
                step[i] = alpha * dq[i];
            }
            sys.integrate_position(&q, &step, &mut trial);
            sys.constraints(t, &trial, &mut trial_phi);
            let f1 = norm2(&trial_phi);
            if f1.is_finite() && f1 <= (1.0 - 1e-4 * alpha) * f0 {
                accepted = true;
                break;
            }
            alpha *= 0.5;
        }
        if !accepted {
            return Err(inconsistent(&phi, it));
        }
        q.copy_from_slice(&trial);
        phi.copy_from_slice(&trial_phi);
    }
    if max_abs(&phi) <= tol {
        Ok((q, MAX_ITER))
    } else {
        Err(inconsistent(&phi, MAX_ITER))
    }
}

/// Assembles a consistent initial state at time `t`.
///
/// Finds q near `q_guess` with max|Φ(t, q)| ≤ `tol` (minimum-norm Newton),
/// then the velocities closest to `v_guess` with Φ_q v + Φ_t = 0, and
/// reports degrees of freedom, redundant and singular constraint rows (see
/// the module documentation).
///
/// # Errors
/// [`AssemblyError::Inconsistent`] naming the worst rows when Newton stalls
/// (e.g. a link too short to close a loop); [`AssemblyError::InconsistentVelocity`]
/// when the velocity constraints conflict; dimension and non-finite errors.
pub fn assemble<S: MechanicalSystem + ?Sized>(
    sys: &S,
    t: f64,
    q_guess: &[f64],
    v_guess: &[f64],
    tol: f64,
) -> Result<Assembly, AssemblyError> {
    check_inputs(sys, q_guess, v_guess, tol)?;
    let (n, m) = (sys.nv(), sys.nc());

    // positions
    let (q, iterations) = solve_positions(sys, t, q_guess, tol)?;
    let mut phi = vec![0.0; m];
    sys.constraints(t, &q, &mut phi);
    let mut phi_t = vec![0.0; m];
    sys.constraint_time_derivative(t, &q, &mut phi_t);

    // large and of full row rank: sparse factors, nothing to name
    if let Some((v, vres)) = sparse_velocities(sys, t, &q, &phi_t, v_guess) {
        return finish(
            sys,
            Findings {
                q,
                v,
                phi,
                phi_t,
                vres,
                v_guess,
                tol,
                iterations,
                ranks: ConstraintRanks::full(m),
            },
        );
    }
    let mut jac = DMatrix::zeros(m, n);
    sys.constraint_jacobian(t, &q, &mut jac);
    let ranks = constraint_ranks(sys, t, &q, &jac, tol);
    let (v, vres) = dense_velocities(&jac, &phi_t, v_guess)?;
    finish(
        sys,
        Findings {
            q,
            v,
            phi,
            phi_t,
            vres,
            v_guess,
            tol,
            iterations,
            ranks,
        },
    )
}

/// The inputs of [`assemble`]: guesses of the system's length, finite, and
/// a finite positive tolerance.
fn check_inputs<S: MechanicalSystem + ?Sized>(
    sys: &S,
    q_guess: &[f64],
    v_guess: &[f64],
    tol: f64,
) -> Result<(), AssemblyError> {
    let n = sys.nq();
    if q_guess.len() != n {
        return Err(AssemblyError::DimensionMismatch {
            what: "q_guess",
            expected: n,
            got: q_guess.len(),
        });
    }
    if v_guess.len() != sys.nv() {
        return Err(AssemblyError::DimensionMismatch {
            what: "v_guess",
            expected: sys.nv(),
            got: v_guess.len(),
        });
    }
    if !q_guess.iter().chain(v_guess).all(|x| x.is_finite()) {
        return Err(AssemblyError::NonFinite {
            what: "initial guess (q_guess or v_guess)".into(),
        });
    }
    if !(tol.is_finite() && tol > 0.0) {
        return Err(AssemblyError::NonFinite {
            what: format!("tolerance (must be finite and > 0, got {tol})"),
        });
    }
    Ok(())
}

/// The velocities of a large system of full row rank by sparse factors:
/// v = v₀ + Φ_qᵀ (Φ_q Φ_qᵀ)⁻¹ (−Φ_t − Φ_q v₀), and the residual
/// Φ_q v + Φ_t. `None` when the system is not large and sparse, or the
/// factorisation finds a pivot below the rank test's (then the dense
/// analysis names the dependent rows).
fn sparse_velocities<S: MechanicalSystem + ?Sized>(
    sys: &S,
    t: f64,
    q: &[f64],
    phi_t: &[f64],
    v_guess: &[f64],
) -> Option<(Vec<f64>, Vec<f64>)> {
    let (n, m) = (sys.nv(), sys.nc());
    let mut sp = SparseNormal::for_system(sys)?;
    if !sp.factor(sys, t, q, RANK_RTOL * RANK_RTOL) {
        return None;
    }
    let mut rhs: Vec<f64> = phi_t.iter().map(|x| -x).collect();
    let mut jv = vec![0.0; m];
    sp.jac.mul_add(v_guess, &mut jv);
    for i in 0..m {
        rhs[i] -= jv[i];
    }
    let dv = sp.min_norm(&rhs);
    let v: Vec<f64> = (0..n).map(|i| v_guess[i] + dv[i]).collect();
    let mut vres = phi_t.to_vec();
    sp.jac.mul_add(&v, &mut vres);
    Some((v, vres))
}

/// The rank of Φ_q at the assembled configuration and at nearby ones, and
/// the rows it names: redundant (dependent on earlier rows generically)
/// and singular (dependent only here).
struct ConstraintRanks {
    /// Rank of Φ_q here.
    rank: usize,
    /// Largest rank found here and nearby.
    generic_rank: usize,
    /// Labels of the redundant rows.
    redundant: Vec<String>,
    /// Their indices.
    redundant_rows: Vec<usize>,
    /// Labels of the rows dependent only here.
    singular: Vec<String>,
}

impl ConstraintRanks {
    /// All `m` rows independent: nothing to name.
    fn full(m: usize) -> Self {
        Self {
            rank: m,
            generic_rank: m,
            redundant: Vec::new(),
            redundant_rows: Vec::new(),
            singular: Vec::new(),
        }
    }
}

/// Rank, redundancy and singularity of Φ_q (`jac`, at the assembled `q`)
/// by Gram–Schmidt over its rows in model order (module documentation).
fn constraint_ranks<S: MechanicalSystem + ?Sized>(
    sys: &S,
    t: f64,
    q: &[f64],
    jac: &DMatrix<f64>,
    tol: f64,
) -> ConstraintRanks {
    let m = sys.nc();
    let model_order: Vec<usize> = (0..m).collect();
    let (kept_here, dep_here) = dependent_rows(jac, &model_order);
    let rank = kept_here.len();
    let (generic_rank, generic_dep) = generic_dependence(sys, t, q, tol, rank, dep_here);
    let redundant: Vec<String> = generic_dep
        .iter()
        .map(|&i| sys.constraint_label(i))
        .collect();
    let singular: Vec<String> = if rank < generic_rank {
        singular_rows(sys, jac, &generic_dep)
    } else {
        Vec::new()
    };
    ConstraintRanks {
        rank,
        generic_rank,
        redundant,
        redundant_rows: generic_dep,
        singular,
    }
}

/// The generic rank of Φ_q and its dependent rows: the largest rank found
/// at the assembled configuration (`rank_here`, `dep_here`) and at up to
/// [`GENERIC_SAMPLES`] nearby configurations on the manifold (q perturbed
/// by a fixed pseudo-random sequence, 2·10⁻³ (1 + |qᵢ|) at most, and
/// projected back by Newton).
fn generic_dependence<S: MechanicalSystem + ?Sized>(
    sys: &S,
    t: f64,
    q: &[f64],
    tol: f64,
    rank_here: usize,
    dep_here: Vec<usize>,
) -> (usize, Vec<usize>) {
    let (n, m) = (sys.nv(), sys.nc());
    let model_order: Vec<usize> = (0..m).collect();
    let mut generic_dep = dep_here;
    let mut generic_rank = rank_here;
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut sample_jac = DMatrix::zeros(m, n);
    for _ in 0..GENERIC_SAMPLES {
        if generic_rank == m.min(n) {
            break;
        }
        let perturbed: Vec<f64> = q
            .iter()
            .map(|x| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let u = (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
                x + 2e-3 * u * (1.0 + x.abs())
            })
            .collect();
        if let Ok((qs, _)) = solve_positions(sys, t, &perturbed, tol) {
            sys.constraint_jacobian(t, &qs, &mut sample_jac);
            let (kept, dep) = dependent_rows(&sample_jac, &model_order);
            if kept.len() > generic_rank {
                generic_rank = kept.len();
                generic_dep = dep;
            }
        }
    }
    (generic_rank, generic_dep)
}

/// The labels of the rows that are independent generically but dependent
/// at this configuration: Gram–Schmidt with the generically independent
/// rows visited first, those then found dependent are singular.
fn singular_rows<S: MechanicalSystem + ?Sized>(
    sys: &S,
    jac: &DMatrix<f64>,
    generic_dep: &[usize],
) -> Vec<String> {
    let m = sys.nc();
    let mut order: Vec<usize> = (0..m).filter(|i| !generic_dep.contains(i)).collect();
    order.extend(generic_dep.iter().copied());
    let (_, dep) = dependent_rows(jac, &order);
    dep.into_iter()
        .filter(|i| !generic_dep.contains(i))
        .map(|i| sys.constraint_label(i))
        .collect()
}

/// The velocities: the least change of v₀ with Φ_q v = −Φ_t,
/// v = v₀ + Φ_q⁺ (−Φ_t − Φ_q v₀), and the residual Φ_q v + Φ_t.
fn dense_velocities(
    jac: &DMatrix<f64>,
    phi_t: &[f64],
    v_guess: &[f64],
) -> Result<(Vec<f64>, Vec<f64>), AssemblyError> {
    let (m, n) = jac.shape();
    let jv = jac * DVector::from_column_slice(v_guess);
    let rhs: Vec<f64> = (0..m).map(|i| -phi_t[i] - jv[i]).collect();
    let mut v = v_guess.to_vec();
    if m > 0 {
        let dv = pinv_solve(jac, &rhs).ok_or(AssemblyError::NonFinite {
            what: "velocity correction".into(),
        })?;
        for i in 0..n {
            v[i] += dv[i];
        }
    }
    let jv = jac * DVector::from_column_slice(&v);
    let vres: Vec<f64> = (0..m).map(|i| jv[i] + phi_t[i]).collect();
    Ok((v, vres))
}

/// What [`finish`] turns into an [`Assembly`].
struct Findings<'a> {
    q: Vec<f64>,
    v: Vec<f64>,
    phi: Vec<f64>,
    phi_t: Vec<f64>,
    vres: Vec<f64>,
    v_guess: &'a [f64],
    tol: f64,
    iterations: usize,
    ranks: ConstraintRanks,
}

/// Check the velocity residual and report.
fn finish<S: MechanicalSystem + ?Sized>(
    sys: &S,
    r: Findings<'_>,
) -> Result<Assembly, AssemblyError> {
    let Findings {
        q,
        v,
        phi,
        phi_t,
        vres,
        v_guess,
        tol,
        iterations,
        ranks:
            ConstraintRanks {
                rank,
                generic_rank,
                redundant,
                redundant_rows,
                singular,
            },
    } = r;
    let n = v.len();
    // finite inputs can overflow here (a velocity of 1e308 plus its
    // correction): name the coordinate rather than report |Φ_q v| = inf
    if let Some(i) = (0..n).find(|&i| !v[i].is_finite()) {
        return Err(AssemblyError::NonFinite {
            what: format!(
                "consistent velocity of {} (initial velocity {:e}: too large to correct)",
                sys.coordinate_label(i),
                v_guess[i]
            ),
        });
    }
    let velocity_residual = max_abs(&vres);
    if !velocity_residual.is_finite() {
        return Err(AssemblyError::NonFinite {
            what: format!(
                "velocity constraint residual |Φ_q v + Φ_t| (worst: {}; initial velocities up to {:e})",
                list(&worst_rows(sys, &vres, 3)),
                max_abs(v_guess)
            ),
        });
    }
    let scale = 1.0 + max_abs(&v) + max_abs(&phi_t);
    if !(velocity_residual <= tol.max(1e-12) * scale) {
        return Err(AssemblyError::InconsistentVelocity {
            residual: velocity_residual,
            worst: worst_rows(sys, &vres, 3),
        });
    }
    let velocity_change = v
        .iter()
        .zip(v_guess)
        .fold(0.0_f64, |acc, (a, b)| acc.max((a - b).abs()));

    Ok(Assembly {
        position_residual: max_abs(&phi),
        q,
        v,
        dof: n - generic_rank,
        rank,
        generic_rank,
        redundant,
        redundant_rows,
        singular,
        velocity_residual,
        velocity_change,
        iterations,
    })
}
