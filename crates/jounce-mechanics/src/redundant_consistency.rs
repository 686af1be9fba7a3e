//! Whether the redundant constraint rows of a system are consistent.
//!
//! A redundant row r (dependent on the kept rows K, j_r = Σ_k c_k j_k,
//! see [`crate::MinimumNormReactions::dependencies`]) is *consistent*
//! when it holds wherever the kept rows hold:
//!
//! - positions: Φ_r(t, q) = 0 for q on the manifold Φ_K(t, q) = 0. Tested
//!   at the assembled configuration and at nearby configurations obtained
//!   by assembling the kept rows alone ([`crate::IndependentRows`]) from
//!   random perturbations (the samples assembly uses for the generic
//!   rank);
//! - velocities: Φ_r,q v + Φ_r,t = 0 for every v with Φ_K,q v + Φ_K,t = 0,
//!   i.e. Φ_r,t = Σ_k c_k Φ_k,t: a driver on a redundant row must move it
//!   the way the others imply. Tested with the velocities of the same
//!   samples (perturbed as well).
//!
//! Drivers make Φ depend on t, and two drivers may agree at t = 0 and part
//! later (f₁ = t, f₂ = t + t²): callers pass later times, at which the
//! kept rows are assembled by continuation from the previous time and the
//! redundant rows measured again.
//!
//! Dropping a consistent row leaves the motion unchanged; dropping an
//! inconsistent one would silently ignore a constraint, so a model with
//! one is refused (García de Jalón & Bayo 1994, §3.4: redundant
//! constraints must be compatible).

use crate::assembly::{assemble, dependent_rows};
use crate::independent_rows::IndependentRows;
use crate::minimum_norm_reactions::MinimumNormReactions;
use crate::system::MechanicalSystem;
use nalgebra::DMatrix;

/// Nearby configurations sampled besides the assembled one.
const SAMPLES: usize = 3;
/// A redundant row is consistent when its residuals stay below this
/// multiple of the assembly tolerance (scaled by 1 + Σ|c_k|).
const CONSISTENCY_FACTOR: f64 = 100.0;

/// What was found about one redundant row.
#[derive(Clone, Debug, PartialEq)]
pub struct RedundantRow {
    /// Row index in the system.
    pub row: usize,
    /// Its label, e.g. `joint 'mid_top' (y)`.
    pub label: String,
    /// Labels of the kept rows it is a combination of, with the
    /// coefficients c_k (at the assembled configuration); empty when they
    /// could not be found (singular configuration).
    pub depends_on: Vec<(String, f64)>,
    /// max |Φ_r| over the samples where the kept rows hold.
    pub position_residual: f64,
    /// max |Φ_r,q v + Φ_r,t| over the samples where the kept rows' velocity
    /// constraints hold.
    pub velocity_residual: f64,
    /// Both residuals within tolerance.
    pub consistent: bool,
}

impl RedundantRow {
    /// "consistent" or "inconsistent (residual ...)", for reports.
    #[must_use]
    pub fn verdict(&self) -> String {
        if self.consistent {
            "consistent".into()
        } else {
            format!(
                "inconsistent (residual {:.3e} in position, {:.3e} in velocity where the rows it depends on hold)",
                self.position_residual, self.velocity_residual
            )
        }
    }
}

fn lcg(seed: &mut u64) -> f64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
}

/// The consistency of the rows `redundant` of `sys` at time `t`, starting
/// from a configuration `q0` (and velocities `v0`) near the constraint
/// manifold: the kept rows are assembled from `q0` and from nearby
/// perturbations with tolerance `tol`, and the redundant rows' residuals
/// measured there; then at the times `later` (ascending, for drivers),
/// each assembled from the configuration of the time before (a time at
/// which that fails ends the sampling). Returns `None` when the kept rows
/// alone cannot be assembled from `q0`. Set-up only (allocates).
pub fn redundant_consistency<S: MechanicalSystem + ?Sized>(
    sys: &S,
    t: f64,
    q0: &[f64],
    v0: &[f64],
    redundant: &[usize],
    tol: f64,
    later: &[f64],
) -> Option<Vec<RedundantRow>> {
    let (m, n) = (sys.nc(), sys.nv());
    let kept = IndependentRows::new(sys, redundant);
    let base = assemble(&kept, t, q0, v0, tol).ok()?;
    let mut reactions = MinimumNormReactions::new(sys, redundant, true);
    let deps = reactions.dependencies(sys, t, &base.q);
    let dropped = reactions.dropped_rows().to_vec();
    let mut rows: Vec<RedundantRow> = dropped
        .iter()
        .enumerate()
        .map(|(p, &r)| RedundantRow {
            row: r,
            label: sys.constraint_label(r),
            depends_on: deps.as_ref().map_or_else(Vec::new, |d| {
                d[p].iter()
                    .map(|&(k, c)| (sys.constraint_label(k), c))
                    .collect()
            }),
            position_residual: 0.0,
            velocity_residual: 0.0,
            consistent: true,
        })
        .collect();
    let mut phi = vec![0.0; m];
    let mut phi_t = vec![0.0; m];
    let mut jac = DMatrix::zeros(m, n);
    let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
    let mut measure = |t: f64, q: &[f64], v: &[f64], rows: &mut [RedundantRow]| {
        sys.constraints(t, q, &mut phi);
        sys.constraint_time_derivative(t, q, &mut phi_t);
        sys.constraint_jacobian(t, q, &mut jac);
        for row in rows.iter_mut() {
            let r = row.row;
            let vel: f64 = phi_t[r] + (0..n).map(|j| jac[(r, j)] * v[j]).sum::<f64>();
            row.position_residual = row.position_residual.max(phi[r].abs());
            row.velocity_residual = row.velocity_residual.max(vel.abs());
        }
    };
    measure(t, &base.q, &base.v, &mut rows);
    for _ in 0..SAMPLES {
        let qp: Vec<f64> = base
            .q
            .iter()
            .map(|x| x + 2e-3 * lcg(&mut seed) * (1.0 + x.abs()))
            .collect();
        let vp: Vec<f64> = base
            .v
            .iter()
            .map(|x| x + lcg(&mut seed) * (1.0 + x.abs()))
            .collect();
        if let Ok(s) = assemble(&kept, t, &qp, &vp, tol) {
            measure(t, &s.q, &s.v, &mut rows);
        }
    }
    let (mut q, mut v) = (base.q.clone(), base.v.clone());
    for &tk in later {
        match assemble(&kept, tk, &q, &v, tol) {
            Ok(s) => {
                measure(tk, &s.q, &s.v, &mut rows);
                (q, v) = (s.q, s.v);
            }
            Err(_) => break,
        }
    }
    for row in &mut rows {
        let csum: f64 = 1.0 + row.depends_on.iter().map(|(_, c)| c.abs()).sum::<f64>();
        let bound = CONSISTENCY_FACTOR * tol.max(1e-12) * csum;
        let vscale = 1.0 + base.v.iter().fold(0.0_f64, |a, x| a.max(x.abs()));
        row.consistent = row.position_residual <= bound && row.velocity_residual <= bound * vscale;
    }
    Some(rows)
}

/// When assembling all rows failed: the rows of Φ_q(t, q_guess) that
/// depend on earlier rows (model order), and their consistency measured
/// by assembling the others alone (see [`redundant_consistency`]).
/// `None` when no row is dependent at the guess, or the others cannot be
/// assembled either: then the failure is not about redundancy.
pub fn diagnose_inconsistent_redundancy<S: MechanicalSystem + ?Sized>(
    sys: &S,
    t: f64,
    q_guess: &[f64],
    v_guess: &[f64],
    tol: f64,
) -> Option<Vec<RedundantRow>> {
    let (m, n) = (sys.nc(), sys.nv());
    let mut jac = DMatrix::zeros(m, n);
    sys.constraint_jacobian(t, q_guess, &mut jac);
    if !jac.iter().all(|x| x.is_finite()) {
        return None;
    }
    let order: Vec<usize> = (0..m).collect();
    let (_, dependent) = dependent_rows(&jac, &order);
    if dependent.is_empty() {
        return None;
    }
    redundant_consistency(sys, t, q_guess, v_guess, &dependent, tol, &[])
}
