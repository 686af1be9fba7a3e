//! A global error estimate for a run (`settings.checks.error_estimate`,
//! `jounce run --error-estimate`, [`crate::RunOptions::error_estimate`]).
//!
//! Step-size control bounds each step's local error; the global error can
//! be many times larger (or smaller). The run is therefore made a second
//! time, into memory (none of the user's files is written):
//!
//! - an adaptive run at rtol/ρ and atol/ρ, ρ = [`TOLERANCE_FACTOR`]
//!   (reintegration, Shampine 1986);
//! - a fixed-step run at h/2 (Richardson).
//!
//! The positions and velocities of the two runs are compared at their
//! common output times in the norm of the step-size control, the weighted
//! RMS norm with weights atol + rtol·|y| (1 = the tolerance,
//! [`jounce_integrate::global_error::weighted_diff`]), with |y| each
//! component's largest magnitude along the run (a velocity through zero
//! is judged against its size, not against atol alone), the largest over
//! the output times. Unit quaternions among the positions (spatial
//! bodies, [`StateLayout::quaternions`]) are compared with their signs
//! aligned: p and −p are the same rotation, and for unit p_a, p_b with
//! p_a·p_b = cos(θ/2) ≥ 0 the difference is |p_a − p_b| = 2 sin(θ/4), θ
//! the angle of the rotation from one orientation to the other (≈ θ/2 for
//! a small one), so the four components measure the rotation error in
//! the same weights as the step-size control gives them, whatever sign
//! each run's quaternion carries. When the second run's error is r times the first's,
//! the difference is (1 − r) times the first run's error
//! ([`jounce_integrate::global_error::looser_run_error`]): r = 2^(−p) for a
//! step halved with a method of order p (the registry's
//! [`jounce_integrate::method::MethodInfo::order`]) and r = ρ^(−p/(p+1))
//! for a tolerance divided by ρ (error per step makes the global error
//! proportional to tol^(p/(p+1))).
//!
//! The run's accuracy warning is decided from the estimate: it fires when,
//! and only when, the estimate exceeds [`ESTIMATE_WARNING`] times the
//! tolerance.

use std::time::Instant;

use jounce_integrate::global_error::looser_run_error;
use jounce_integrate::method::MethodInfo;
use jounce_io::ErrorEstimateSummary;
use jounce_model::Model;

use crate::error::RunError;
use crate::run::{integrate_model, Output};
use crate::sink::{Discard, RowSink, TimeSeries};

/// Tolerance divisor ρ of the second run of an adaptive run.
pub const TOLERANCE_FACTOR: f64 = 10.0;

/// Estimated global error, in units of the tolerance, above which a run
/// with an estimate warns.
pub const ESTIMATE_WARNING: f64 = 10.0;

/// How many times more steps than expected the second run may take before
/// it is judged to have left the method's asymptotic regime
/// ([`reference_breakdown`]).
pub const BREAKDOWN_FACTOR: f64 = 4.0;

/// The difference of two runs' positions and velocities
/// ([`state_difference`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StateDifference {
    /// The largest over the common output times of the weighted RMS norm
    /// of the difference (weights atol + rtol·max_t |reference|; 1 = the
    /// tolerance).
    pub scaled: f64,
    /// The largest absolute difference of a coordinate or velocity.
    pub absolute: f64,
    /// The output time of the largest scaled difference \[s\].
    pub at_time: f64,
    /// Output times the two runs have in common.
    pub rows: usize,
}

/// Where a run's time series holds its state: `t`, then the `nq`
/// positions, then the `nv` velocities ([`crate::observer::timeseries_header`]
/// order), with unit quaternions at some of the positions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StateLayout {
    /// Number of position coordinates n_q.
    pub nq: usize,
    /// Number of velocity coordinates n_v.
    pub nv: usize,
    /// The index in q of the first of each unit quaternion's 4 components
    /// (compared up to sign: module documentation).
    pub quaternions: Vec<usize>,
}

impl StateLayout {
    /// n_q = n_v coordinates without quaternions (planar body coordinates).
    pub fn plain(nq: usize) -> Self {
        Self {
            nq,
            nv: nq,
            quaternions: Vec::new(),
        }
    }

    /// Columns of the state after `t`: n_q + n_v.
    pub fn len(&self) -> usize {
        self.nq + self.nv
    }

    /// Whether the state is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The difference between the positions and velocities of two runs of the
/// same model (their time series: `t`, then the `nq` coordinates, then the
/// `nq` velocities, as [`crate::observer::timeseries_header`] orders
/// them), at the output times they share (equal to 1e-9 relative), in the
/// error norm of the step-size control, weighted RMS over the components
/// with weights atol + rtol·|y|, |y| the component's largest magnitude
/// along `reference`; the largest over the output times. `None` when they
/// share no output time. [`state_difference_in`] for any [`StateLayout`].
///
/// ```
/// use jounce::error_estimate::state_difference;
/// use jounce::sink::{RowSink, TimeSeries};
/// let series = |x: f64| {
///     let mut s = TimeSeries::default();
///     s.begin(&["t".into(), "x".into(), "x_dot".into()]).unwrap();
///     s.row(&[0.0, 1.0, 0.0]).unwrap();
///     s.row(&[1.0, x, 0.0]).unwrap();
///     s
/// };
/// let d = state_difference(&series(1.0 + 2e-6), &series(1.0), 1, 1e-6, 1e-6).unwrap();
/// assert_eq!(d.rows, 2);
/// // 2e-6 against a weight of 1e-6 + 1e-6·1 in one of two components
/// // (the other, zero all along, weighs atol): RMS 1/sqrt(2)
/// assert!((d.scaled - 0.5f64.sqrt()).abs() < 1e-6);
/// assert!((d.absolute - 2e-6).abs() < 1e-12);
/// ```
pub fn state_difference(
    run: &TimeSeries,
    reference: &TimeSeries,
    nq: usize,
    rtol: f64,
    atol: f64,
) -> Option<StateDifference> {
    state_difference_in(run, reference, &StateLayout::plain(nq), rtol, atol)
}

/// [`state_difference`] of states laid out as `layout` says: the n_q + n_v
/// columns after `t`, each weighted by atol + rtol·max_t |y_ref|, the
/// quaternions' components with their signs aligned first (p_run → −p_run
/// where p_run·p_ref < 0; module documentation: |Δp| = 2 sin(θ/4)).
///
/// ```
/// use jounce::error_estimate::{state_difference_in, StateLayout};
/// use jounce::sink::{RowSink, TimeSeries};
/// let series = |p: [f64; 4]| {
///     let mut s = TimeSeries::default();
///     let cols = ["t", "qw", "qx", "qy", "qz", "wx", "wy", "wz"];
///     s.begin(&cols.map(String::from)).unwrap();
///     s.row(&[0.0, p[0], p[1], p[2], p[3], 0.0, 0.0, 0.0]).unwrap();
///     s
/// };
/// let layout = StateLayout { nq: 4, nv: 3, quaternions: vec![0] };
/// let (c, s) = (0.3f64.cos(), 0.3f64.sin());
/// // −p is the same rotation as p: no difference
/// let d = state_difference_in(&series([-c, -s, 0.0, 0.0]), &series([c, s, 0.0, 0.0]), &layout, 1e-6, 1e-6);
/// assert!(d.unwrap().absolute < 1e-15);
/// ```
pub fn state_difference_in(
    run: &TimeSeries,
    reference: &TimeSeries,
    layout: &StateLayout,
    rtol: f64,
    atol: f64,
) -> Option<StateDifference> {
    let n = layout.len();
    let (ca, cb) = (run.columns(), reference.columns());
    if ca.len() < n + 1 || cb.len() < n + 1 {
        return None;
    }
    let (ta, tb) = (run.t(), reference.t());
    // each component's size: its largest magnitude along the reference,
    // so that a velocity passing through zero is not judged by atol alone
    let weight: Vec<f64> = (0..n)
        .map(|k| {
            let scale = cb[k + 1].iter().fold(0.0f64, |m, x| m.max(x.abs()));
            atol + rtol * scale
        })
        .collect();
    // the sign of each component of the run in this row: −1 on the
    // components of a quaternion opposite to the reference's
    let mut sign = vec![1.0; n];
    let mut out = StateDifference {
        scaled: 0.0,
        absolute: 0.0,
        at_time: 0.0,
        rows: 0,
    };
    let mut j = 0;
    for (i, &t) in ta.iter().enumerate() {
        let near = |s: f64| (s - t).abs() <= 1e-9 * t.abs().max(1.0);
        while j < tb.len() && tb[j] < t && !near(tb[j]) {
            j += 1;
        }
        if j >= tb.len() {
            break;
        }
        if !near(tb[j]) {
            continue;
        }
        for &o in &layout.quaternions {
            let Some(cols) = ca.get(o + 1..o + 5).zip(cb.get(o + 1..o + 5)) else {
                continue;
            };
            let dot: f64 = cols.0.iter().zip(cols.1).map(|(a, b)| a[i] * b[j]).sum();
            let s = if dot < 0.0 { -1.0 } else { 1.0 };
            sign[o..o + 4].fill(s);
        }
        let mut sum = 0.0;
        for k in 0..n {
            let x = (sign[k] * ca[k + 1][i] - cb[k + 1][j]).abs();
            let x = if x.is_nan() { f64::INFINITY } else { x };
            sum += (x / weight[k]).powi(2);
            out.absolute = out.absolute.max(x);
        }
        let d = (sum / n.max(1) as f64).sqrt();
        if d > out.scaled || out.rows == 0 {
            out.scaled = d;
            out.at_time = t;
        }
        out.rows += 1;
        j += 1;
    }
    (out.rows > 0).then_some(out)
}

/// A row sink that passes every row on and keeps the time, positions and
/// velocities (the first `keep` columns) for the error estimate.
pub(crate) struct StateRecorder<'a> {
    inner: &'a mut dyn RowSink,
    keep: usize,
    /// The kept columns.
    pub(crate) kept: TimeSeries,
}

impl<'a> StateRecorder<'a> {
    pub(crate) fn new(inner: &'a mut dyn RowSink, keep: usize) -> Self {
        Self {
            inner,
            keep,
            kept: TimeSeries::default(),
        }
    }
}

impl RowSink for StateRecorder<'_> {
    fn begin(&mut self, columns: &[String]) -> Result<(), RunError> {
        self.keep = self.keep.min(columns.len());
        self.kept.begin(&columns[..self.keep])?;
        self.inner.begin(columns)
    }

    fn row(&mut self, values: &[f64]) -> Result<(), RunError> {
        self.inner.row(values)?;
        self.kept.row(&values[..self.keep.min(values.len())])
    }

    fn finish(&mut self) -> Result<(), RunError> {
        self.inner.finish()
    }

    fn rows(&self) -> u64 {
        self.inner.rows()
    }
}

/// The error ratio r of the second run to the first (see the module
/// documentation): 2^(−p) for a fixed step halved, ρ^(−p/(p+1)) for the
/// tolerance divided by ρ.
pub fn error_ratio(info: &MethodInfo, fixed_step: bool) -> f64 {
    let p = f64::from(info.order.max(1));
    if fixed_step {
        2f64.powf(-p)
    } else {
        TOLERANCE_FACTOR.powf(-p / (p + 1.0))
    }
}

/// Expected ratio of the second run's accepted steps to the first's: 2 for
/// a halved fixed step, ρ^(1/(p+1)) for a tolerance divided by ρ (a
/// method of order p takes steps h ∝ tol^(1/(p+1))).
pub fn expected_step_ratio(info: &MethodInfo, fixed_step: bool) -> f64 {
    let p = f64::from(info.order.max(1));
    if fixed_step {
        2.0
    } else {
        TOLERANCE_FACTOR.powf(1.0 / (p + 1.0))
    }
}

/// Why a second run cannot serve as the reference, when it took more than
/// [`BREAKDOWN_FACTOR`] times the steps expected of it
/// ([`expected_step_ratio`]): its tolerance lies beyond what the method
/// reaches on the model. The index-3 form is the common case: its
/// iteration matrix's condition grows as 1/h², so that below some
/// tolerance round-off in the Newton corrections drives the step size
/// down and the error up together (bdf on a 7-body chain of
/// parallelograms: 956 steps and 0.09 tol at rtol = 1e-10, 32 552 steps
/// and 8000 tol at 1e-11). The difference of the two runs is then the
/// second run's error, not the first's.
pub fn reference_breakdown(
    info: &MethodInfo,
    fixed_step: bool,
    run_steps: u64,
    reference_steps: u64,
) -> Option<String> {
    let expected = expected_step_ratio(info, fixed_step);
    let ratio = reference_steps as f64 / run_steps.max(1) as f64;
    (ratio > BREAKDOWN_FACTOR * expected).then(|| {
        format!(
            "the second run took {ratio:.1} times the steps of the run ({expected:.1} expected of \
             a method of order {}): its tolerance lies beyond what the method reaches on this \
             model (round-off or order reduction), so the two runs' difference is not this \
             run's error",
            info.order
        )
    })
}

/// The global error estimate of a completed run of `model` whose
/// positions and velocities are `run` (laid out as `layout`) after
/// `run_steps` accepted steps: the same model run again into memory at
/// rtol/ρ, atol/ρ (a fixed step: h/2), compared in the run's norm. A second
/// run that fails, or that breaks down ([`reference_breakdown`]), gives no
/// estimate and says why.
pub(crate) fn estimate(
    model: &Model,
    info: &MethodInfo,
    run: &TimeSeries,
    layout: &StateLayout,
    run_steps: u64,
) -> ErrorEstimateSummary {
    let it = &model.settings.integrator;
    let fixed = it.step.is_some();
    let mut m = model.clone();
    {
        let s = &mut m.settings;
        s.checks.error_estimate = false;
        s.step_history = false;
        s.cost_from = None;
        // the second run is longer: its budget grows with it (a budget the
        // user set stays a bound on each run's own cost, scaled alike)
        let steps = if fixed {
            2.0
        } else {
            TOLERANCE_FACTOR.powf(1.0 / f64::from(info.order.max(1)))
        };
        s.integrator.max_steps = s
            .integrator
            .max_steps
            .saturating_mul((steps.ceil() as u64).max(2));
        match it.step {
            Some(h) => {
                s.integrator.step = Some(0.5 * h);
                s.integrator.h0 = None;
            }
            None => {
                s.integrator.rtol = it.rtol / TOLERANCE_FACTOR;
                s.integrator.atol = it.atol / TOLERANCE_FACTOR;
                s.integrator.h0 = it.h0.map(|h| 0.5 * h);
            }
        }
    }
    let r = error_ratio(info, fixed);
    let mut out = ErrorEstimateSummary {
        method: if fixed { "richardson" } else { "reintegration" }.into(),
        error_ratio: r,
        tolerance_factor: if fixed { 1.0 } else { TOLERANCE_FACTOR },
        reference_rtol: m.settings.integrator.rtol,
        reference_atol: m.settings.integrator.atol,
        reference_step: m.settings.integrator.step,
        ..ErrorEstimateSummary::default()
    };
    let mut series = TimeSeries::default();
    let mut steps = Discard::default();
    let result = integrate_model(
        &m,
        Output {
            timeseries: &mut series,
            steps: &mut steps,
            progress: None,
        },
        Instant::now(),
    );
    let summary = match &result {
        Ok(s) => s,
        Err(RunError::Integration { summary, .. }) => summary,
        Err(_) => {
            out.error = result.err().map(|e| e.to_string());
            return out;
        }
    };
    out.reference_steps_accepted = summary.work.steps_accepted;
    out.reference_rhs_evaluations = summary.work.rhs_evaluations;
    out.reference_cpu_seconds = summary.work.cpu_seconds;
    if let Err(e) = &result {
        out.error = Some(e.to_string());
        return out;
    }
    if let Some(why) = reference_breakdown(info, fixed, run_steps, summary.work.steps_accepted) {
        out.error = Some(why);
        return out;
    }
    match state_difference_in(run, &series, layout, it.rtol, it.atol) {
        Some(d) => {
            let e = looser_run_error(d.scaled, r);
            out.estimated_global_error = Some(e);
            out.estimated_absolute_error = Some(looser_run_error(d.absolute, r));
            out.at_time = Some(d.at_time);
            out.rows_compared = d.rows as u64;
        }
        None => out.error = Some("the two runs share no output time".into()),
    }
    out
}

/// The diagnostic of an estimate: the accuracy warning when it exceeds
/// [`ESTIMATE_WARNING`] times the tolerance, else a note with the estimate;
/// how the estimate was obtained either way.
pub fn estimate_diagnostic(model: &Model, e: &ErrorEstimateSummary) -> String {
    let it = &model.settings.integrator;
    let how = match e.reference_step {
        Some(h) => format!(
            "from a second run at half the step (h = {h:e} s) with Richardson's formula for \
             order {:.0}",
            -e.error_ratio.log2()
        ),
        None => format!(
            "from a second run at rtol = {}, atol = {}",
            short(e.reference_rtol),
            short(e.reference_atol)
        ),
    };
    let (Some(x), Some(abs)) = (e.estimated_global_error, e.estimated_absolute_error) else {
        return format!(
            "error estimate: none, no usable second run ({how}): {}",
            e.error.as_deref().unwrap_or("no result")
        );
    };
    let at = e.at_time.unwrap_or(0.0);
    let tol = format!("rtol = {}, atol = {}", short(it.rtol), short(it.atol));
    if x > ESTIMATE_WARNING {
        let advice = match e.reference_step {
            Some(h) => {
                // the run's step was 2h; its error falls like step^p
                let p = -e.error_ratio.log2();
                format!(
                    "reduce the step (the error of a method of order {p:.0} falls like h^{p:.0}: \
                     about h = {:.1e} s for the tolerance) or use an adaptive method",
                    2.0 * h * x.powf(-1.0 / p)
                )
            }
            None => format!(
                "lower rtol and atol by a factor of about {:.0}, or use a higher-order method",
                x.min(1e12)
            ),
        };
        format!(
            "accuracy warning: the estimated global error is {x:.1} times the tolerance \
             ({tol}; up to about {abs:.1e} in a coordinate or velocity, largest at t = {at} s), \
             {how}: {advice}"
        )
    } else {
        format!(
            "error estimate: the global error is estimated at {x:.2} times the tolerance \
             ({tol}; up to about {abs:.1e} in a coordinate or velocity), {how}"
        )
    }
}

/// A number in short scientific notation (1e-11, not 1.0000000000000001e-11).
fn short(x: f64) -> String {
    let s = format!("{x:.6e}");
    match s.split_once('e') {
        Some((m, e)) => {
            let m = m.trim_end_matches('0').trim_end_matches('.');
            format!("{m}e{e}")
        }
        None => s,
    }
}
