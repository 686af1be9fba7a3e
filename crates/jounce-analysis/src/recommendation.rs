//! Which integrator suits a model, from its linearised modes
//! ([`crate::modes`]).
//!
//! The argument is termeer's (studies.md S2): an explicit method's step is
//! bounded for the whole run by its stability region and the fastest
//! eigenvalue, h ≤ h_s(λ_max) ([`crate::fixed_step_stability`], the
//! largest step whose growth over the run stays below
//! [`crate::step_stability::GROWTH_LIMIT`]); an L-stable implicit method's
//! step is bounded only by the accuracy of the modes still present in the
//! solution. A mode of damping ratio ζ and natural frequency ω_n decays as
//! e^{−ζω_n t}: over a run of length T it **persists** when
//! ζω_n T < [`DECAY_EFOLDS`] and **dies** otherwise. The run's stiffness is
//!
//! S_run = |λ|_max / max(|λ| of the persisting modes, 2π/T),
//!
//! the factor by which the explicit stability step is smaller than the
//! step the surviving solution needs. An implicit step costs several
//! explicit ones (Jacobian, LU, Newton iterations; about 5–10 right-hand
//! sides on these models), so implicit integration pays when
//! S_run ≥ [`STIFF_RUN_RATIO`]: a damped fast mode (S2 test 1a,
//! S_run ≈ 142) makes implicit pay; an undamped fast mode persists and
//! must be resolved by any method (1b), and a small spread of frequencies
//! is not stiff (1c, 1d).
//!
//! **Tolerance.** An undamped mode of N = f_n T cycles accumulates a phase
//! error of about N·rtol under local error control; keeping it below 1e-3
//! needs rtol ≤ 1e-3/N (rounded down to a power of ten, between 1e-10 and
//! 1e-6): an undamped fast mode with an explicit method needs a tight
//! tolerance. Otherwise 1e-6.

use nalgebra::Complex;
use serde::Serialize;

use jounce_integrate::explicit;
use jounce_integrate::method;
use jounce_integrate::multistep::coeffs::fixed_table;

use crate::modes::{ModeAnalysis, ModeKind};
use crate::step_stability::fixed_step_stability;

/// e-folds of decay over the run beyond which a mode has died
/// (e^{−10} ≈ 4.5e-5 of its initial amplitude).
pub const DECAY_EFOLDS: f64 = 10.0;

/// S_run (module documentation) from which implicit integration pays.
pub const STIFF_RUN_RATIO: f64 = 50.0;

/// Damping ratio below which a mode counts as undamped.
pub const UNDAMPED_ZETA: f64 = 1e-3;

/// A mode is a fast one when its |λ| is at least this fraction of the
/// fastest |λ|.
pub const FAST_FRACTION: f64 = 0.1;

/// The stability limit of one explicit method on the model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExplicitLimit {
    /// Registry name.
    pub method: String,
    /// Stages (right-hand sides per step) of a Runge–Kutta method, 1 for
    /// a multistep formula.
    pub stages: usize,
    /// Largest stable step \[s\] over the run (`None`: not stable at any
    /// step, e.g. an undamped mode outside a region without imaginary
    /// axis).
    pub largest_stable_step: Option<f64>,
    /// Steps to t_end at that step.
    pub steps_to_end: Option<f64>,
    /// Right-hand sides to t_end at that step (stages × steps).
    pub rhs_evaluations: Option<f64>,
}

/// The advice: explicit or implicit, which method, formulation and
/// tolerance, and why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Recommendation {
    /// "explicit" or "implicit".
    pub class: String,
    /// Suggested integrator.
    pub method: String,
    /// Suggested formulation.
    pub formulation: String,
    /// Suggested relative tolerance.
    pub rtol: f64,
    /// S_run (module documentation).
    pub run_stiffness: f64,
    /// The reasons, in words.
    pub reasons: Vec<String>,
    /// Natural frequencies \[Hz\] of the undamped modes among the fast
    /// ones (|λ| ≥ [`FAST_FRACTION`] × the fastest |λ|).
    pub undamped_fast_modes_hz: Vec<f64>,
    /// Every explicit method's stability limit on the model.
    pub explicit_limits: Vec<ExplicitLimit>,
}

impl Recommendation {
    /// Whether implicit integration is advised.
    pub fn implicit(&self) -> bool {
        self.class == "implicit"
    }
}

/// The stability limits of every explicit method of the registry with a
/// fixed stability region (Runge–Kutta tableaus, fixed multistep
/// formulas) for the eigenvalues `lambdas` over a run of `span` seconds.
pub fn explicit_limits(lambdas: &[Complex<f64>], span: f64) -> Vec<ExplicitLimit> {
    let mut out = Vec::new();
    for entry in method::all() {
        if entry.info.implicit {
            continue;
        }
        let name = entry.info.name;
        let (stages, r): (usize, Box<dyn Fn(Complex<f64>) -> f64>) =
            match (explicit::tableau(name), fixed_table(name)) {
                (Some(tab), _) => (
                    tab.stages(),
                    Box::new(move |z| tab.stability_function(z).norm()),
                ),
                (None, Some(lmm)) => (1, Box::new(move |z| lmm.amplification(z))),
                _ => continue,
            };
        let s = fixed_step_stability(lambdas, span, span, &*r);
        let h = s.largest_stable_step;
        let steps = h.map(|h| (span / h).ceil());
        out.push(ExplicitLimit {
            method: name.to_string(),
            stages,
            largest_stable_step: h,
            steps_to_end: steps,
            rhs_evaluations: steps.map(|n| n * stages as f64),
        });
    }
    out
}

/// The recommendation for a run of `t_end` seconds from the modes `a`;
/// `constrained` says whether the model has constraints (which decides
/// the formulation suggested for implicit methods).
pub fn recommend(a: &ModeAnalysis, t_end: f64, constrained: bool) -> Recommendation {
    let span = if t_end.is_finite() && t_end > 0.0 {
        t_end
    } else {
        1.0
    };
    let lambdas = a.complex_eigenvalues();
    let limits = explicit_limits(&lambdas, span);
    let vib: Vec<_> = a.vibration_modes().collect();
    let mut reasons = Vec::new();
    let floor = std::f64::consts::TAU / span;
    let Some(fast) = vib.first() else {
        reasons.push(
            "the model has no vibration modes (only rigid-body motion or no degrees of \
             freedom): nothing bounds an explicit method's step but accuracy"
                .to_string(),
        );
        return Recommendation {
            class: "explicit".into(),
            method: "dopri5".into(),
            formulation: formulation_for(false, constrained),
            rtol: 1e-6,
            run_stiffness: 1.0,
            reasons,
            undamped_fast_modes_hz: vec![],
            explicit_limits: limits,
        };
    };
    let decay = |m: &crate::modes::Mode| -m.eigenvalue_re * span;
    let persisting: Vec<_> = vib.iter().filter(|m| decay(m) < DECAY_EFOLDS).collect();
    let resolve = persisting
        .iter()
        .map(|m| m.magnitude())
        .fold(floor, f64::max);
    let run_stiffness = fast.magnitude() / resolve;
    let implicit = run_stiffness >= STIFF_RUN_RATIO;
    let undamped_fast: Vec<f64> = vib
        .iter()
        .filter(|m| {
            m.kind == ModeKind::Oscillatory
                && m.damping_ratio.abs() < UNDAMPED_ZETA
                && m.magnitude() >= FAST_FRACTION * fast.magnitude()
        })
        .map(|m| m.natural_frequency_hz)
        .collect();
    let dopri = limits.iter().find(|l| l.method == "dopri5");
    let dopri_text = match dopri.and_then(|l| l.largest_stable_step.zip(l.steps_to_end)) {
        Some((h, n)) => {
            format!("dopri5 is stable only for h ≤ {h:.3e} s, {n:.0} steps over the run")
        }
        None => "dopri5 has no stable step for it".to_string(),
    };
    let describe = |m: &crate::modes::Mode| {
        format!(
            "{:.4} Hz, ζ = {:.3}",
            m.natural_frequency_hz, m.damping_ratio
        )
    };
    if implicit {
        let ef = decay(fast);
        reasons.push(format!(
            "the fastest mode ({}) decays by e^-{ef:.0} over the {span} s run (time constant \
             {:.2e} s): it dies early, and the solution then moves at the rate of the \
             persisting modes (|λ| ≤ {resolve:.4} 1/s), {run_stiffness:.0} times slower \
             (stiff: ≥ {STIFF_RUN_RATIO})",
            describe(fast),
            1.0 / (-fast.eigenvalue_re).max(f64::MIN_POSITIVE)
        ));
        reasons.push(format!(
            "an explicit method's step stays bounded by the fast mode after it has died \
             ({dopri_text}); an L-stable implicit method (radau5) damps it and steps at the \
             accuracy of the slow motion, so implicit integration pays"
        ));
    } else {
        if fast.kind == ModeKind::Oscillatory && decay(fast) < DECAY_EFOLDS {
            let undamped = fast.damping_ratio.abs() < UNDAMPED_ZETA;
            reasons.push(format!(
                "the fastest mode ({}) {} over the {span} s run (ζω_n T = {:.2} < {DECAY_EFOLDS}): \
                 every method must resolve it for accuracy, so an implicit method's larger \
                 stable step buys nothing and explicit steps (no Jacobian, LU or Newton) are \
                 cheaper",
                describe(fast),
                if undamped {
                    "is undamped and persists"
                } else {
                    "persists"
                },
                decay(fast)
            ));
        } else {
            reasons.push(format!(
                "the fastest mode ({}) is only {run_stiffness:.1} times faster than the motion \
                 that must be resolved (not stiff: < {STIFF_RUN_RATIO}); the explicit stability \
                 limit is close to the accuracy limit",
                describe(fast)
            ));
        }
        reasons.push(format!("explicit integration: {dopri_text}"));
    }
    // tolerance
    let mut rtol = 1e-6;
    if let Some(f_max) = undamped_fast.iter().copied().reduce(f64::max) {
        let cycles = f_max * span;
        let needed = 1e-3 / cycles.max(1.0);
        let rounded = 10f64.powf(needed.log10().floor()).clamp(1e-10, 1e-6);
        rtol = rounded;
        reasons.push(format!(
            "undamped fast mode(s) at {} Hz: nothing damps their error, which grows by about \
             rtol per cycle over {cycles:.0} cycles{}; use rtol ≤ {rounded:.0e}",
            undamped_fast
                .iter()
                .map(|f| format!("{f:.4}"))
                .collect::<Vec<_>>()
                .join(", "),
            if implicit {
                ""
            } else {
                " with an explicit method"
            }
        ));
    }
    let method = if implicit {
        "radau5"
    } else if rtol < 1e-8 {
        "dop853"
    } else {
        "dopri5"
    };
    Recommendation {
        class: if implicit { "implicit" } else { "explicit" }.into(),
        method: method.into(),
        formulation: formulation_for(implicit, constrained),
        rtol,
        run_stiffness,
        reasons,
        undamped_fast_modes_hz: undamped_fast,
        explicit_limits: limits,
    }
}

/// state_space for implicit methods on constrained models (independent
/// coordinates, exact Jacobian, no drift); augmented otherwise.
fn formulation_for(implicit: bool, constrained: bool) -> String {
    if implicit && constrained {
        "state_space".into()
    } else {
        "augmented".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::Mode;

    /// A model with one pair λ = −ζω ± iω√(1−ζ²) per (ω, ζ).
    fn analysis(modes: &[(f64, f64)]) -> ModeAnalysis {
        let mut ev = Vec::new();
        let ms = modes
            .iter()
            .map(|&(w, z)| {
                let (re, im) = (-z * w, w * (1.0 - z * z).sqrt());
                ev.push((re, im));
                ev.push((re, -im));
                Mode {
                    kind: ModeKind::Oscillatory,
                    eigenvalue_re: re,
                    eigenvalue_im: im,
                    natural_frequency_hz: w / std::f64::consts::TAU,
                    damped_frequency_hz: im / std::f64::consts::TAU,
                    damping_ratio: z,
                    shape: vec![],
                }
            })
            .collect();
        ModeAnalysis {
            t: 0.0,
            degrees_of_freedom: modes.len(),
            independent_coordinates: vec![],
            eigenvalues: ev,
            modes: ms,
            stiffness_ratio: None,
            partial_spectrum: None,
        }
    }

    #[test]
    fn a_damped_fast_mode_calls_for_implicit_and_an_undamped_one_for_explicit() {
        // S2 1a-like: ω 4486 (ζ 0.112) over ω 31.5 (ζ 0.058), 1 s
        let r = recommend(&analysis(&[(4486.0, 0.112), (31.5, 0.058)]), 1.0, true);
        assert!(r.implicit(), "{r:?}");
        assert_eq!(
            (r.method.as_str(), r.formulation.as_str()),
            ("radau5", "state_space")
        );
        // the same frequencies undamped: the fast mode persists
        let r = recommend(&analysis(&[(4486.0, 0.0), (31.5, 0.0)]), 1.0, true);
        assert!(!r.implicit(), "{r:?}");
        assert_eq!(r.undamped_fast_modes_hz.len(), 1);
        // 714 cycles: rtol ≤ 1e-3/714 → 1e-6
        assert_eq!(r.rtol, 1e-6);
    }

    #[test]
    fn rk4_limit_on_an_undamped_mode_is_its_imaginary_axis_interval() {
        let w = 100.0;
        let l = [Complex::new(0.0, w), Complex::new(0.0, -w)];
        let lim = explicit_limits(&l, 1.0);
        let rk4 = lim.iter().find(|l| l.method == "rk4").unwrap();
        let h = rk4.largest_stable_step.unwrap();
        // |R(ihω)| ≤ 1 for hω ≤ 2√2; the growth allowance over the run
        // admits a little more
        assert!(h >= 2.0 * 2f64.sqrt() / w * 0.999 && h < 3.0 / w, "h = {h}");
        assert_eq!(rk4.stages, 4);
    }
}
