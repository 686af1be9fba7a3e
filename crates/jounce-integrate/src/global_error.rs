//! Global error estimation and control by reintegration.
//!
//! Step-size control bounds the *local* error of each step. What a user
//! usually wants is the *global* error at the end, which can be larger by
//! the problem's error amplification κ: 1e3 to 1e5 for Arenstorf's orbit or
//! the Pleiades. This service integrates the same problem at a sequence of
//! tolerances, estimates the global error of each run from the next,
//! tighter one, and tightens the tolerance until the estimated global error
//! meets the request.
//!
//! Two runs at tolerances τ and τ/ρ have global errors e(τ) ≈ C τ^q and
//! e(τ/ρ) ≈ ρ^(−q) e(τ) (tolerance proportionality), so
//!
//! y(τ) − y(τ/ρ) ≈ e(τ) − e(τ/ρ) = (1 − ρ^(−q)) e(τ),
//! e(τ/ρ) ≈ (y(τ) − y(τ/ρ)) · ρ^(−q) / (1 − ρ^(−q)).
//!
//! The exponent q is measured (ratio of successive differences), not
//! assumed: it depends on the method pair, on local extrapolation and on
//! the error norm. With ρ = 10 the estimate of the latest run is
//! ‖y(τ/10^(k−1)) − y(τ/10^k)‖ · r / (1 − r), r = 10^(−q).
//!
//! # References
//! - L. F. Shampine, "Global error estimation with one-step methods",
//!   Comput. Math. Appl. 12A (1986) 885–894 (reintegration with a reduced
//!   tolerance).
//! - Hairer, Nørsett, Wanner, *Solving ODEs I*, 2nd ed., Section II.4,
//!   "tolerance proportionality" and Fig. 4.4 (global error versus tol).

use crate::error::IntegrateError;
use crate::method;
use crate::options::SolverOptions;
use crate::problem::OdeProblem;
use crate::solve::{solve, Discard, SolveFailure};
use crate::stats::Stats;

/// One run of the sequence.
#[derive(Clone, Debug, PartialEq)]
pub struct Reintegration {
    /// Local tolerance factor of this run: rtol and atol were the requested
    /// ones times this factor.
    pub tol_factor: f64,
    /// Work counters of the run.
    pub stats: Stats,
    /// Estimated global error of this run's end value, in the weighted RMS
    /// norm (1 = the requested tolerance); `None` until a tighter run exists.
    pub estimated_error: Option<f64>,
}

/// The result of an integration to a requested global tolerance.
#[derive(Clone, Debug, PartialEq)]
pub struct GlobalSolution {
    /// y(t1) of the accepted run.
    pub y: Vec<f64>,
    /// Its estimated global error in the weighted RMS norm with weights
    /// atol + rtol·|y_i| (1 = the requested tolerance).
    pub estimated_error: f64,
    /// The measured tolerance-proportionality exponent q.
    pub exponent: f64,
    /// Every run, loosest first.
    pub runs: Vec<Reintegration>,
    /// Work of all runs together (what the answer cost).
    pub stats: Stats,
}

/// The global error of the looser of two runs, from their difference:
/// when the tighter run's error is `r` times the looser one's,
/// y_loose − y_tight ≈ (1 − r)·e_loose, so e_loose ≈ ‖y_loose − y_tight‖ / (1 − r).
///
/// - Reintegration at tolerances τ and τ/ρ (tolerance proportionality
///   with exponent q): r = ρ^(−q).
/// - Richardson, a fixed step h and h/2 of a method of order p:
///   r = 2^(−p).
///
/// The tighter run's error is then `r` times the returned value.
///
/// ```
/// use jounce_integrate::global_error::looser_run_error;
/// // rk4 at h and h/2: the difference is 15/16 of the error at h
/// assert!((looser_run_error(15.0, 2f64.powi(-4)) - 16.0).abs() < 1e-12);
/// ```
pub fn looser_run_error(diff: f64, r: f64) -> f64 {
    diff / (1.0 - r.clamp(0.0, 0.9))
}

/// Weighted RMS norm of a − b with weights atol + rtol·|b_i| (1 = the
/// tolerance): the norm of the step-size control, applied to the
/// difference of two solutions.
pub fn weighted_diff(a: &[f64], b: &[f64], rtol: f64, atol: f64) -> f64 {
    let n = a.len().max(1) as f64;
    let s: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| ((x - y) / (atol + rtol * y.abs())).powi(2))
        .sum();
    (s / n).sqrt()
}

fn add(total: &mut Stats, s: &Stats) {
    total.n_accept += s.n_accept;
    total.n_reject += s.n_reject;
    total.n_rhs += s.n_rhs;
    total.n_jac += s.n_jac;
    total.n_lu += s.n_lu;
    total.n_solve += s.n_solve;
    total.n_newton_iter += s.n_newton_iter;
    total.n_newton_fail += s.n_newton_fail;
    total.n_newton_stalled += s.n_newton_stalled;
    total.n_events += s.n_events;
    total.n_restart += s.n_restart;
    total.cpu_seconds += s.cpu_seconds;
}

/// Integrate `p` from (t0, y0) to t1 with the adaptive method `name` so
/// that the *global* error of y(t1) is estimated to be within the
/// tolerances of `opts` (weighted RMS norm ≤ 1, weights atol + rtol·|y_i|).
///
/// Runs at local tolerances τ, τ/10, τ/100, … (τ = the requested ones)
/// until the estimated global error of the latest run meets the request or
/// `max_runs` runs were made (the last estimate is then returned: check
/// [`GlobalSolution::estimated_error`]). At least three runs are made, so
/// that the exponent is measured.
///
/// # Errors
/// The first failure of a run, or [`IntegrateError::Unsupported`] for a
/// method without error control.
pub fn solve_to_global_tolerance(
    p: &mut dyn OdeProblem,
    name: &str,
    t0: f64,
    y0: &[f64],
    t1: f64,
    opts: &SolverOptions,
    max_runs: usize,
) -> Result<GlobalSolution, IntegrateError> {
    let entry = method::find(name)?;
    if !entry.info.adaptive || opts.fixed_step.is_some() {
        return Err(IntegrateError::Unsupported {
            method: name.into(),
            detail: "global error control needs an adaptive method without a fixed step".into(),
        });
    }
    let (rtol, atol) = (opts.rtol, opts.atol);
    let mut run = |factor: f64| -> Result<(Vec<f64>, Stats), IntegrateError> {
        let mut o = opts.clone();
        o.rtol = rtol * factor;
        o.atol = atol * factor;
        let mut st = (entry.build)(&o)?;
        let r = solve(&mut *p, st.as_mut(), t0, y0, t1, &o, &mut Discard)
            .map_err(|f: SolveFailure| f.error)?;
        Ok((r.y, r.stats))
    };
    let max_runs = max_runs.max(3);
    let mut runs: Vec<Reintegration> = Vec::new();
    let mut ys: Vec<Vec<f64>> = Vec::new();
    let mut diffs: Vec<f64> = Vec::new();
    let mut total = Stats::default();
    let est = |d: f64, r: f64| r * looser_run_error(d, r);
    let mut err = f64::INFINITY;
    let mut r_used = 0.1;
    // runs a factor 10 apart; the ratio r = 10^(−q) of successive
    // differences is measured at every run, and the larger of the last two
    // is used, so that an exponent that drops at tight tolerances (the
    // pre-asymptotic or round-off regime) does not make the estimate
    // optimistic
    for k in 0..max_runs {
        let f = 10f64.powi(-(k as i32));
        let (y, s) = run(f)?;
        add(&mut total, &s);
        if let Some(prev) = ys.last() {
            diffs.push(weighted_diff(prev, &y, rtol, atol));
        }
        ys.push(y);
        runs.push(Reintegration {
            tol_factor: f,
            stats: s,
            estimated_error: None,
        });
        let m = diffs.len();
        if m >= 2 {
            let ratio = |i: usize| {
                if diffs[i - 1] > 0.0 {
                    (diffs[i] / diffs[i - 1]).clamp(1e-3, 0.7)
                } else {
                    0.7
                }
            };
            r_used = if m >= 3 {
                ratio(m - 1).max(ratio(m - 2))
            } else {
                ratio(m - 1)
            };
            err = est(diffs[m - 1], r_used);
            runs[k].estimated_error = Some(err);
            runs[k - 1].estimated_error = Some(looser_run_error(diffs[m - 1], r_used));
            if err <= 1.0 {
                break;
            }
        }
    }
    let q = -r_used.log10();
    Ok(GlobalSolution {
        y: ys.pop().unwrap_or_default(),
        estimated_error: err,
        exponent: q,
        runs,
        stats: total,
    })
}
