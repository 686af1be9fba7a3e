//! `[settings]`: run length, output, assembly tolerance, formulation
//! (`[settings.baumgarte]`, `[settings.penalty]`) and integrator
//! (`[settings.integrator]`, `[settings.integrator.params]`) and the checks
//! on the solution (`[settings.checks]`).

use crate::error::ModelError;
use crate::reader::{num_str, Elem, Src, Val};
use crate::types::{
    CheckSettings, FormulationKind, FormulationSettings, IntegratorSettings, LinearSolverKind,
    OnCheckFailure, Settings,
};

/// Shortest accepted `t_end` \[s\]: a run shorter than a nanosecond is no
/// mechanical simulation (and a subnormal one makes every step size
/// underflow).
pub const T_END_MIN: f64 = 1e-9;

/// What is wrong with a positive relative tolerance, if anything: it must be
/// below 1, since a relative error of 100 % accepts any answer.
pub fn rtol_problem(x: f64) -> Option<String> {
    (x >= 1.0).then(|| {
        format!(
            "must be below 1 (a relative error of 100 % accepts any answer), got {}",
            num_str(x)
        )
    })
}

/// What is wrong with a positive absolute tolerance, if anything: it must be
/// below 1, since an absolute error of a metre or a radian accepts any
/// answer.
pub fn atol_problem(x: f64) -> Option<String> {
    (x >= 1.0).then(|| {
        format!(
            "must be below 1 (an absolute error of a metre or a radian accepts any answer), got {}",
            num_str(x)
        )
    })
}

/// What is wrong with a positive end time, if anything: it must be at
/// least [`T_END_MIN`].
pub fn t_end_problem(x: f64) -> Option<String> {
    (x < T_END_MIN).then(|| {
        format!(
            "must be at least {T_END_MIN:e} s (a shorter run is no simulation), got {}",
            num_str(x)
        )
    })
}

/// Turns a `*_problem` answer into the error on `key`'s value.
fn limit(e: &Elem<'_, '_>, key: &str, problem: Option<String>) -> Result<(), ModelError> {
    match problem {
        Some(p) => Err(e.invalid(key, &e.value_span(key), p)),
        None => Ok(()),
    }
}

/// Parses `[settings]` (absent: defaults).
///
/// The keys are read in a fixed order (run length and output, then the
/// formulation and its sub-tables, the integrator, the checks), so that of
/// several faults the same one is always reported first.
pub(crate) fn parse<'a, 'i>(
    src: Src<'a>,
    section: Option<&'a Val<'i>>,
) -> Result<Settings, ModelError> {
    let mut s = Settings::default();
    let Some(v) = section else {
        return Ok(s);
    };
    let e = Elem::new(src, "[settings]", v, "settings")?;
    e.check_keys(&[
        "t_end",
        "output_interval",
        "step_history",
        "cost_from",
        "assembly_tol",
        "formulation",
        "linear_solver",
        "baumgarte",
        "penalty",
        "augmented_lagrangian",
        "integrator",
        "checks",
    ])?;
    parse_run(&e, &mut s)?;
    parse_formulation(&e, &mut s.formulation)?;
    if let Some(v) = e.get("integrator") {
        parse_integrator(&e, v, &mut s.integrator)?;
    }
    if let Some(v) = e.get("checks") {
        parse_checks(&e, v, &mut s.checks)?;
    }
    Ok(s)
}

/// The run's own keys of `[settings]`: end time, output interval, step
/// history, start of the cost account and the assembly tolerance.
fn parse_run(e: &Elem<'_, '_>, s: &mut Settings) -> Result<(), ModelError> {
    if let Some(x) = e.opt_num("t_end")? {
        s.t_end = e.positive("t_end", x)?;
        limit(e, "t_end", t_end_problem(x))?;
    }
    if let Some(x) = e.opt_num("output_interval")? {
        s.output_interval = e.positive("output_interval", x)?;
    }
    if let Some(b) = e.opt_bool("step_history")? {
        s.step_history = b;
    }
    if let Some(x) = e.opt_num("cost_from")? {
        s.cost_from = Some(e.non_negative("cost_from", x)?);
    }
    if let Some(x) = e.opt_num("assembly_tol")? {
        s.assembly_tol = e.positive("assembly_tol", x)?;
    }
    Ok(())
}

/// The formulation's keys of `[settings]` (`formulation`, `linear_solver`)
/// and its sub-tables: `[settings.baumgarte]` (α, β of the stabilised
/// constraint g'' + 2α g' + β² g = 0), `[settings.penalty]` (factor, ω, ξ)
/// and `[settings.augmented_lagrangian]` (penalty).
fn parse_formulation(e: &Elem<'_, '_>, f: &mut FormulationSettings) -> Result<(), ModelError> {
    if let Some(i) = e.choice("formulation", "formulation", &FormulationKind::NAMES)? {
        f.kind = FormulationKind::ALL[i];
    }
    if let Some(i) = e.choice(
        "linear_solver",
        "linear solver",
        &["auto", "dense", "sparse"],
    )? {
        f.linear_solver = [
            LinearSolverKind::Auto,
            LinearSolverKind::Dense,
            LinearSolverKind::Sparse,
        ][i];
    }
    if let Some(v) = e.get("baumgarte") {
        let b = labelled(e, "baumgarte", v, "[settings.baumgarte]")?;
        b.check_keys(&["alpha", "beta"])?;
        if let Some(x) = b.opt_num("alpha")? {
            f.baumgarte_alpha = b.non_negative("alpha", x)?;
        }
        if let Some(x) = b.opt_num("beta")? {
            f.baumgarte_beta = b.non_negative("beta", x)?;
        }
    }
    if let Some(v) = e.get("penalty") {
        let p = labelled(e, "penalty", v, "[settings.penalty]")?;
        p.check_keys(&["factor", "omega", "xi"])?;
        if let Some(x) = p.opt_num("factor")? {
            f.penalty_factor = p.positive("factor", x)?;
        }
        if let Some(x) = p.opt_num("omega")? {
            f.penalty_omega = p.positive("omega", x)?;
        }
        if let Some(x) = p.opt_num("xi")? {
            f.penalty_xi = p.non_negative("xi", x)?;
        }
    }
    if let Some(v) = e.get("augmented_lagrangian") {
        let p = labelled(
            e,
            "augmented_lagrangian",
            v,
            "[settings.augmented_lagrangian]",
        )?;
        p.check_keys(&["penalty"])?;
        if let Some(x) = p.opt_num("penalty")? {
            f.al_penalty = p.positive("penalty", x)?;
        }
    }
    Ok(())
}

/// `[settings.integrator]`: the method, its tolerances, step sizes, step
/// budget, controller, error norm and `[settings.integrator.params]`.
fn parse_integrator<'a, 'i>(
    parent: &Elem<'a, 'i>,
    v: &'a Val<'i>,
    it: &mut IntegratorSettings,
) -> Result<(), ModelError> {
    let g = labelled(parent, "integrator", v, "[settings.integrator]")?;
    g.check_keys(&[
        "method",
        "rtol",
        "atol",
        "step",
        "h0",
        "h_min",
        "h_max",
        "max_steps",
        "controller",
        "error_per",
        "params",
        "breakpoints",
        "stop_at_breakpoints",
    ])?;
    if let Some(m) = g.opt_str("method")? {
        if m.trim().is_empty() {
            return Err(g.invalid("method", &g.value_span("method"), "must not be empty"));
        }
        it.method = m.to_string();
    }
    if let Some(x) = g.opt_num("rtol")? {
        it.rtol = g.positive("rtol", x)?;
        limit(&g, "rtol", rtol_problem(x))?;
    }
    if let Some(x) = g.opt_num("atol")? {
        it.atol = g.positive("atol", x)?;
        limit(&g, "atol", atol_problem(x))?;
    }
    if let Some(x) = g.opt_num("step")? {
        it.step = Some(g.positive("step", x)?);
    }
    if let Some(x) = g.opt_num("h0")? {
        it.h0 = Some(g.positive("h0", x)?);
    }
    parse_breakpoints(&g, it)?;
    parse_step_limits(&g, it)?;
    if let Some(v) = g.get("max_steps") {
        it.max_steps = positive_integer(&g, "max_steps", v)?;
        it.max_steps_set = true;
    }
    if let Some(i) = g.choice("controller", "step-size controller", &["elementary", "pi"])? {
        it.controller = ["elementary", "pi"][i].to_string();
    }
    if let Some(i) = g.choice("error_per", "error_per mode", &["step", "unit_step"])? {
        it.error_per = ["step", "unit_step"][i].to_string();
    }
    if let Some(v) = g.get("params") {
        let p = labelled(&g, "params", v, "[settings.integrator.params]")?;
        for (k, pv) in p.table.iter() {
            let name: &str = k.get_ref();
            let x = p.num(name, pv)?;
            it.params.insert(name.to_string(), x);
        }
    }
    Ok(())
}

/// Whether the integrator stops at breakpoints: `breakpoints` is the name,
/// `stop_at_breakpoints` its older alias. Both given and disagreeing is
/// refused rather than one winning.
fn parse_breakpoints(g: &Elem<'_, '_>, it: &mut IntegratorSettings) -> Result<(), ModelError> {
    match (
        g.opt_bool("breakpoints")?,
        g.opt_bool("stop_at_breakpoints")?,
    ) {
        (Some(a), Some(b)) if a != b => {
            return Err(g.invalid(
                "stop_at_breakpoints",
                &g.value_span("stop_at_breakpoints"),
                format!(
                    "contradicts breakpoints = {a} (stop_at_breakpoints is an alias of \
                     breakpoints: give one)"
                ),
            ))
        }
        (Some(b), _) | (None, Some(b)) => it.stop_at_breakpoints = b,
        (None, None) => {}
    }
    Ok(())
}

/// The step-size limits `h_min` and `h_max` (which may be `inf`: no limit),
/// and their consistency with each other and with `h0` (read before):
/// h_min ≤ h0 ≤ h_max.
fn parse_step_limits(g: &Elem<'_, '_>, it: &mut IntegratorSettings) -> Result<(), ModelError> {
    if let Some(x) = g.opt_num("h_min")? {
        it.h_min = g.non_negative("h_min", x)?;
    }
    if let Some(v) = g.get("h_max") {
        // h_max may be `inf` (no limit).
        let x = g.num_any("h_max", v)?;
        if x.is_nan() || x <= 0.0 {
            return Err(g.invalid(
                "h_max",
                &v.span(),
                format!("must be positive (or inf), got {}", num_str(x)),
            ));
        }
        it.h_max = x;
    }
    if it.h_min > it.h_max {
        return Err(g.invalid(
            "h_min",
            &g.value_span("h_min"),
            format!(
                "must not exceed h_max = {}, got {}",
                num_str(it.h_max),
                num_str(it.h_min)
            ),
        ));
    }
    if let Some(h0) = it.h0 {
        if h0 < it.h_min || h0 > it.h_max {
            return Err(g.invalid(
                "h0",
                &g.value_span("h0"),
                format!(
                    "must lie in [h_min, h_max] = [{}, {}], got {}",
                    num_str(it.h_min),
                    num_str(it.h_max),
                    num_str(h0)
                ),
            ));
        }
    }
    Ok(())
}

/// `[settings.checks]`: what a failed check does and the limits checked
/// (constraint violation, energy growth, output rows) and whether
/// the global error is estimated.
fn parse_checks<'a, 'i>(
    parent: &Elem<'a, 'i>,
    v: &'a Val<'i>,
    ch: &mut CheckSettings,
) -> Result<(), ModelError> {
    let c = labelled(parent, "checks", v, "[settings.checks]")?;
    c.check_keys(&[
        "on_failure",
        "max_constraint_violation",
        "energy_growth",
        "max_output_rows",
        "max_output_bytes",
        "error_estimate",
    ])?;
    if let Some(i) = c.choice("on_failure", "on_failure mode", &["fail", "warn"])? {
        ch.on_failure = [OnCheckFailure::Fail, OnCheckFailure::Warn][i];
    }
    if let Some(x) = c.opt_num("max_constraint_violation")? {
        ch.max_constraint_violation = Some(c.positive("max_constraint_violation", x)?);
    }
    if let Some(b) = c.opt_bool("error_estimate")? {
        ch.error_estimate = b;
    }
    if let Some(x) = c.opt_num("energy_growth")? {
        ch.energy_growth = c.positive("energy_growth", x)?;
    }
    if let Some(v) = c.get("max_output_rows") {
        ch.max_output_rows = positive_integer(&c, "max_output_rows", v)?;
    }
    if let Some(v) = c.get("max_output_bytes") {
        ch.max_output_bytes = positive_integer(&c, "max_output_bytes", v)?;
    }
    Ok(())
}

/// A positive TOML integer (a float, even a whole one, is the wrong type).
fn positive_integer(e: &Elem<'_, '_>, key: &str, v: &Val<'_>) -> Result<u64, ModelError> {
    let n = match v.get_ref() {
        toml::de::DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix()).ok(),
        _ => return Err(e.wrong_type(key, v, "a positive integer")),
    };
    match n {
        Some(n) if n > 0 => Ok(n as u64),
        _ => Err(e.invalid(key, &v.span(), "must be a positive integer")),
    }
}

/// A sub-table with its own label.
fn labelled<'a, 'i>(
    parent: &Elem<'a, 'i>,
    key: &str,
    v: &'a Val<'i>,
    label: &str,
) -> Result<Elem<'a, 'i>, ModelError> {
    let mut e = parent.nested(key, v)?;
    e.label = label.to_string();
    e.prefix = String::new();
    Ok(e)
}
