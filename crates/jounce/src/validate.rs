//! The run settings checked before any work, the same way by `jounce run`
//! and `jounce check`: the integrator (its name, ignoring case, with a
//! suggestion for a near miss; its parameters and their ranges; a fixed
//! step where it has no error estimator), its pairing with the
//! formulation, the output size, and, for a fixed step, its stability on
//! the model's linearisation at the start ([`fixed_step_verdict`]).

use jounce_analysis::{fixed_step_stability, linearised_eigenvalues};
use jounce_formulation::Formulation;
use jounce_integrate::method::{self, MethodEntry};
use jounce_integrate::multistep::coeffs::fixed_table;
use jounce_integrate::nalgebra::Complex;
use jounce_integrate::{explicit, SolverOptions, Stepper};
use jounce_model::Model;

use crate::error::RunError;
use crate::run::solver_options;
use crate::setup::check_pairing;

/// The candidate closest to `given` (Jaro–Winkler similarity ≥ 0.75 on
/// lower case), as " (did you mean 'x'?)", or nothing.
pub fn did_you_mean<'a>(given: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let g = given.trim().to_ascii_lowercase();
    let best = candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(&g, &c.to_ascii_lowercase()), c))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match best {
        Some((score, c)) if score >= 0.75 => format!(" (did you mean '{c}'?)"),
        _ => String::new(),
    }
}

/// The registered integrator of the model's settings.
///
/// # Errors
/// [`RunError::Setup`] naming the file, the unknown name and the nearest
/// known one.
pub fn method_entry(model: &Model) -> Result<&'static MethodEntry, RunError> {
    let name = &model.settings.integrator.method;
    method::find(name).map_err(|_| {
        let names: Vec<&str> = method::all().iter().map(|m| m.info.name).collect();
        RunError::Setup(format!(
            "{}: settings.integrator.method: unknown integrator '{name}'{}; `jounce methods` \
             lists the {} integrators",
            model.source,
            did_you_mean(name, names.iter().copied()),
            names.len()
        ))
    })
}

/// Rows a run of `model` writes on its output grid (t0, every
/// output_interval, t_end), events aside.
pub fn output_rows(model: &Model) -> f64 {
    let s = &model.settings;
    (s.t_end / s.output_interval).floor() + 2.0
}

/// Everything about the run settings that can be checked without the
/// system: returns the method, the solver options and its stepper.
///
/// # Errors
/// [`RunError::Setup`] naming the file and the setting at fault.
pub fn validate_run_settings(
    model: &Model,
) -> Result<(&'static MethodEntry, SolverOptions, Box<dyn Stepper>), RunError> {
    let entry = method_entry(model)?;
    let name = entry.info.name;
    let opts = solver_options(model)?;
    let stepper = (entry.build)(&opts).map_err(|e| {
        RunError::Setup(format!("{}: settings.integrator.params: {e}", model.source))
    })?;
    check_pairing(model)?;
    if !entry.info.adaptive && opts.fixed_step.is_none() {
        return Err(RunError::Setup(format!(
            "{}: integrator '{name}' has no error estimator and needs a fixed step: set \
             settings.integrator.step or pass --step (or choose an adaptive method such as \
             dopri5 or radau5)",
            model.source
        )));
    }
    let rows = output_rows(model);
    let budget = model.settings.checks.max_output_rows;
    if rows > budget as f64 {
        return Err(RunError::Setup(format!(
            "{}: the run would write about {rows:.3e} output rows (t_end = {} s every \
             output_interval = {} s), more than the budget of {budget} rows: raise \
             settings.output_interval, or settings.checks.max_output_rows, or pass --force",
            model.source, model.settings.t_end, model.settings.output_interval
        )));
    }
    let bytes = output_bytes(model);
    let byte_budget = model.settings.checks.max_output_bytes;
    if bytes > byte_budget as f64 {
        return Err(RunError::Setup(format!(
            "{}: the run would write about {:.3e} bytes of timeseries.csv ({rows:.3e} rows of \
             at least {} columns at about {BYTES_PER_VALUE} bytes a value), more than the \
             budget of {byte_budget} bytes: raise settings.output_interval (now {} s), or \
             settings.checks.max_output_bytes, or pass --force",
            model.source,
            bytes,
            output_columns(model),
            model.settings.output_interval
        )));
    }
    Ok((entry, opts, stepper))
}

/// Bytes a value of `timeseries.csv` takes: Rust's shortest round-trip
/// f64 is up to 17 significant digits, a sign, a point or an exponent and
/// the separator; 18 is typical of the values of a run (small integers
/// such as 0 are shorter, so this rather under- than over-estimates).
pub const BYTES_PER_VALUE: u64 = 18;

/// A lower bound on the columns of `timeseries.csv`, from the model alone
/// (before the system is built): t, the three coordinates and velocities
/// of each body, the five energy and violation columns, one multiplier per
/// joint and driver (at least; a revolute joint has two) and the four
/// energy-account columns.
pub fn output_columns(model: &Model) -> u64 {
    let bodies = model.bodies.len() as u64;
    1 + 6 * bodies + 5 + (model.joints.len() + model.drivers.len()) as u64 + 4
}

/// The estimated size of `timeseries.csv`: [`output_rows`] ×
/// [`output_columns`] × [`BYTES_PER_VALUE`].
pub fn output_bytes(model: &Model) -> f64 {
    output_rows(model) * (output_columns(model) * BYTES_PER_VALUE) as f64
}

/// For a fixed-step explicit Runge–Kutta or multistep (Adams) run:
/// whether the step is stable
/// on the linearisation of the formulation at (0, y0)
/// ([`jounce_analysis::step_stability`]). Returns a message when it is
/// not, `None` when it is or when the check does not apply (adaptive
/// steps, implicit methods, systems too large for a full eigenvalue
/// decomposition).
pub fn fixed_step_verdict(
    model: &Model,
    entry: &MethodEntry,
    opts: &SolverOptions,
    form: &mut dyn Formulation,
    y0: &[f64],
) -> Option<String> {
    let h = opts.fixed_step?;
    let name = entry.info.name;
    let amplification: Box<dyn Fn(Complex<f64>) -> f64> =
        match (explicit::tableau(name), fixed_table(name)) {
            (Some(tab), _) => Box::new(move |z| tab.stability_function(z).norm()),
            // the conditionally stable fixed multistep formulas (AB, AM3-5);
            // AM1 and AM2 are A-stable and pass anyway
            (None, Some(lmm)) => Box::new(move |z| lmm.amplification(z)),
            _ => return None,
        };
    let lambdas = linearised_eigenvalues(form, 0.0, y0).ok()??;
    let span = model.settings.t_end;
    let v = fixed_step_stability(&lambdas, h, span, &*amplification);
    if !v.unstable() {
        return None;
    }
    let l = v.eigenvalue;
    let growth = if v.log_growth.is_finite() && v.log_growth < 700.0 {
        format!("{:.1e}", v.log_growth.exp())
    } else {
        format!("e^{:.0}", v.log_growth)
    };
    let advice = match v.largest_stable_step {
        Some(hs) => format!("a step below about {hs:.3e} s"),
        None => "a much smaller step".to_string(),
    };
    let adaptive = if entry.info.adaptive {
        format!(
            "{} without a fixed step (it controls its own)",
            entry.info.name
        )
    } else {
        "an adaptive method (dopri5, dop853)".to_string()
    };
    Some(format!(
        "the fixed step h = {h} s is beyond the stability limit of {} for this model: its mode \
         λ = {:.4} {:+.4}i 1/s (|λ| = {:.4} 1/s; the fastest mode at t = 0 has |λ| = {:.4} 1/s) \
         is multiplied by |R(hλ)| = {:.4e} per step, {growth} times over the {:.0} steps to \
         t_end, while the model itself does not grow it; the run would blow up. Use {advice}, \
         {adaptive}, or an implicit method (trapezoidal, radau5, bdf)",
        entry.info.name,
        l.re,
        l.im,
        l.norm(),
        v.fastest,
        v.amplification,
        (span / h).ceil()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_misses_are_suggested_and_strangers_are_not() {
        let names = ["rk4", "radau5", "dopri5", "generalized_alpha"];
        assert_eq!(did_you_mean("radau", names), " (did you mean 'radau5'?)");
        assert_eq!(did_you_mean("DOPRI-5", names), " (did you mean 'dopri5'?)");
        assert_eq!(
            did_you_mean("generalised_alpha", names),
            " (did you mean 'generalized_alpha'?)"
        );
        assert_eq!(did_you_mean("xyzzy", names), "");
    }
}
