//! `jounce modes`: the linearised modes of a model in the independent
//! coordinates of the constrained system ([`jounce_analysis::modes`]) at
//! its initial state, at a state of a run, or at its static equilibrium,
//! and the integrator they call for ([`jounce_analysis::recommendation`]).

use jounce_analysis::{linearised_modes, recommend, ModeAnalysis, ModeKind, Recommendation};
use jounce_formulation::Formulation;
use jounce_integrate::{EvalError, Observer};
use jounce_mechanics::{MechanicalSystem, SystemQueries};
use jounce_model::{ContactLaw, ForceKind, Model};
use serde::Serialize;

use crate::error::RunError;
use crate::setup::{assemble_model, build_formulation, build_system};

/// Where the model is linearised.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LinearisationPoint {
    /// The assembled initial state (t = 0).
    Initial,
    /// The state of a run of the model at time T \[s\].
    At(f64),
    /// The static equilibrium (velocities zero, t = 0).
    Static,
}

/// What `jounce modes` prints.
#[derive(Clone, Debug, Serialize)]
pub struct ModesReport {
    /// Model name.
    pub model: String,
    /// Model file.
    pub model_file: String,
    /// "initial state", "state of a run at t = T s" or "static equilibrium".
    pub linearised_at: String,
    /// End time of the model's run, the span of the stability limits \[s\].
    pub t_end: f64,
    /// The modes.
    pub analysis: ModeAnalysis,
    /// The advice.
    pub recommendation: Recommendation,
    /// For a model with penalty contacts linearised at its initial state:
    /// what the short run that looked for a closed contact found.
    pub contacts: Option<String>,
    /// What the modes' coordinates are when they are not independent
    /// coordinates of a partition (a spatial model: the tangent space of
    /// its configurations); `None` for a planar model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coordinates: Option<String>,
}

/// The fraction of t_end a short run looks for a closed penalty contact.
pub const CONTACT_PROBE_FRACTION: f64 = 0.1;

/// An observer that keeps the first output state where one of the given
/// switching functions (penalty contacts) is negative (penetration).
struct ContactProbe<'s> {
    sys: &'s jounce_mechanics::PlanarSystem,
    /// Switching functions to watch, with their contact names.
    watch: Vec<(usize, String)>,
    q: Vec<f64>,
    v: Vec<f64>,
    lam: Vec<f64>,
    s: Vec<f64>,
    /// (t, q, v, contact) of the first closed contact.
    found: Option<(f64, Vec<f64>, Vec<f64>, String)>,
}

impl<'s, 'f> Observer<dyn Formulation + 'f> for ContactProbe<'s> {
    fn output(
        &mut self,
        p: &mut (dyn Formulation + 'f),
        t: f64,
        y: &[f64],
    ) -> Result<(), EvalError> {
        if self.found.is_some() {
            return Ok(());
        }
        p.physical_state(t, y, &mut self.q, &mut self.v, &mut self.lam)?;
        self.sys
            .switching_functions(t, &self.q, &self.v, &mut self.s);
        if let Some((_, name)) = self.watch.iter().find(|(i, _)| self.s[*i] < 0.0) {
            self.found = Some((t, self.q.clone(), self.v.clone(), name.clone()));
        }
        Ok(())
    }
}

/// The names of the model's penalty contacts (an impact contact exerts no
/// force while closed, so it has no stiffness to show in the modes).
fn penalty_contacts(model: &Model) -> Vec<&str> {
    model
        .forces
        .iter()
        .filter(|f| {
            matches!(&f.kind, ForceKind::Contact { law, stiffness, .. }
                if !matches!(law, ContactLaw::Impact { .. }) && *stiffness > 0.0)
        })
        .map(|f| f.name.as_str())
        .collect()
}

/// An observer that keeps nothing.
struct Discard;

impl<P: ?Sized> Observer<P> for Discard {
    fn output(&mut self, _p: &mut P, _t: f64, _y: &[f64]) -> Result<(), EvalError> {
        Ok(())
    }
}

/// The modes and recommendation of `model` linearised at `at`.
///
/// # Errors
/// [`RunError`] naming the model file: bad settings, assembly, no static
/// equilibrium, a failed run to T, or a failed linearisation.
pub fn modes_report(model: &Model, at: LinearisationPoint) -> Result<ModesReport, RunError> {
    if model.spatial.is_some() {
        return crate::spatial_modes::spatial_modes_report(model, at);
    }
    let sys = build_system(model)?;
    let asm = assemble_model(model, &sys)?;
    let src = &model.source;
    // up front, before a static equilibrium or a run to T that the
    // eigen-decomposition would then refuse: above the dense budget only
    // a system without the sparse path's structure, or above its budget
    // (issue 31)
    if let Some(e) = jounce_analysis::modes_refusal(&sys, 2 * asm.dof) {
        return Err(RunError::Setup(format!("{src}: {e}")));
    }
    let (t, q, v, label) = match at {
        LinearisationPoint::Initial => (0.0, asm.q.clone(), asm.v.clone(), "initial state".into()),
        LinearisationPoint::Static => {
            let eq = jounce_analysis::static_equilibrium(&sys, 0.0, &asm.q)
                .map_err(|e| RunError::Setup(format!("{src}: {e}")))?;
            let label = format!("static equilibrium ({})", eq.stability());
            (0.0, eq.q, vec![0.0; sys.nv()], label)
        }
        LinearisationPoint::At(t_at) => {
            if !(t_at.is_finite() && t_at >= 0.0) {
                return Err(RunError::Setup(format!(
                    "{src}: --at {t_at}: the time must be finite and not negative"
                )));
            }
            let (q, v) = state_of_run(model, &sys, &asm.q, &asm.v, t_at)?;
            (t_at, q, v, format!("state of a run at t = {t_at} s"))
        }
    };
    let (t, q, v, label, contacts) = if at == LinearisationPoint::Initial {
        contact_probe(model, &sys, &asm, (t, q, v, label))?
    } else {
        (t, q, v, label, None)
    };
    let redundancy = crate::redundancy::Redundancy::analyse(model, &sys, &asm);
    let analysis = match redundancy.independent_rows(&sys, "state_space") {
        Some(rows) => linearised_modes(&rows, t, &q, &v),
        None => linearised_modes(&sys, t, &q, &v),
    }
    .map_err(|e| RunError::Setup(format!("{src}: {e}")))?;
    let recommendation = recommend(&analysis, model.settings.t_end, sys.nc() > 0);
    Ok(ModesReport {
        model: model.name.clone(),
        model_file: model.source.clone(),
        linearised_at: label,
        t_end: model.settings.t_end,
        analysis,
        recommendation,
        contacts,
        coordinates: None,
    })
}

/// A linearisation state: (t, q, v, label).
type State = (f64, Vec<f64>, Vec<f64>, String);

/// For a model with penalty contacts, linearised at its initial state:
/// a contact open or just touching (gap 0) there exerts no force, so its
/// stiffness k (a mode of about √(k/m), which bounds an explicit step)
/// is not in the modes. A short run (to [`CONTACT_PROBE_FRACTION`] ·
/// t_end) looks for the first output state where a penalty contact
/// penetrates; the modes are then linearised there. When none closes, the
/// report says that the modes cannot see the contacts.
fn contact_probe(
    model: &Model,
    sys: &jounce_mechanics::PlanarSystem,
    asm: &jounce_mechanics::Assembly,
    initial: State,
) -> Result<(f64, Vec<f64>, Vec<f64>, String, Option<String>), RunError> {
    let names = penalty_contacts(model);
    let (t0, q0, v0, label0) = initial;
    if names.is_empty() {
        return Ok((t0, q0, v0, label0, None));
    }
    let watch: Vec<(usize, String)> = (0..sys.n_switching_functions())
        .map(|i| (i, sys.switching_label(i)))
        .filter(|(_, n)| names.contains(&n.as_str()))
        .collect();
    let mut s = vec![0.0; sys.n_switching_functions()];
    sys.switching_functions(t0, &q0, &v0, &mut s);
    if let Some((_, name)) = watch.iter().find(|(i, _)| s[*i] < 0.0) {
        let note = format!("penalty contact '{name}' is closed at the initial state");
        return Ok((t0, q0, v0, label0, Some(note)));
    }
    let t_probe = CONTACT_PROBE_FRACTION * model.settings.t_end;
    let form_name = crate::setup::formulation_name(model.settings.formulation.kind);
    let independent =
        crate::redundancy::Redundancy::analyse(model, sys, asm).independent_rows(sys, form_name);
    let nc = form_rows(&independent, sys);
    let mut probe = ContactProbe {
        sys,
        watch,
        q: vec![0.0; sys.nq()],
        v: vec![0.0; sys.nv()],
        lam: vec![0.0; nc],
        s,
        found: None,
    };
    if let Err(e) = run_observed(model, sys, &asm.q, &asm.v, t_probe, &mut probe) {
        if probe.found.is_none() {
            let note = format!(
                "no penalty contact ({}) is closed at t = 0, and the short run to t = {t_probe} s \
                 that looked for one failed ({e}): the modes cannot see their stiffness; \
                 linearise where one is closed with --at T",
                names.join(", ")
            );
            return Ok((t0, q0, v0, label0, Some(note)));
        }
    }
    Ok(match probe.found {
        Some((t, q, v, name)) => {
            let note = format!(
                "no penalty contact is closed at t = 0 (a contact touching at gap 0 exerts no \
                 force, and its stiffness is not in the modes there); in a run to t = {t_probe} s \
                 contact '{name}' closes first at t = {t} s: the modes are linearised there \
                 (--at T chooses another time)"
            );
            let label = format!("state of a run at t = {t} s, where contact '{name}' is closed");
            (t, q, v, label, Some(note))
        }
        None => {
            let note = format!(
                "no penalty contact ({}) is closed at t = 0 nor in a run to t = {t_probe} s: the \
                 modes cannot see their stiffness k, which bounds an explicit step by about \
                 2/√(k/m) while a contact is closed; linearise where one is with --at T",
                names.join(", ")
            );
            (t0, q0, v0, label0, Some(note))
        }
    })
}

/// Positions and velocities of a run of `model` (its formulation and
/// integrator) at `t_at`.
fn state_of_run(
    model: &Model,
    sys: &jounce_mechanics::PlanarSystem,
    q0: &[f64],
    v0: &[f64],
    t_at: f64,
) -> Result<(Vec<f64>, Vec<f64>), RunError> {
    if t_at == 0.0 {
        return Ok((q0.to_vec(), v0.to_vec()));
    }
    run_observed(model, sys, q0, v0, t_at, &mut Discard)
}

/// Runs `model` (its formulation and integrator) from (q0, v0) to `t_at`
/// under `observer`; returns the physical state at `t_at`.
fn run_observed(
    model: &Model,
    sys: &jounce_mechanics::PlanarSystem,
    q0: &[f64],
    v0: &[f64],
    t_at: f64,
    observer: &mut dyn for<'f> Observer<dyn Formulation + 'f>,
) -> Result<(Vec<f64>, Vec<f64>), RunError> {
    let mut m = model.clone();
    m.settings.t_end = t_at;
    let (_entry, opts, mut stepper) = crate::validate::validate_run_settings(&m)?;
    let asm = assemble_model(&m, sys)?;
    let form_name = crate::setup::formulation_name(m.settings.formulation.kind);
    let redundancy = crate::redundancy::Redundancy::analyse(&m, sys, &asm);
    redundancy.refuse(&m, form_name)?;
    let independent = redundancy.independent_rows(sys, form_name);
    let mut form: Box<dyn Formulation + '_> = match &independent {
        Some(rows) => build_formulation(&m, rows)?,
        None => build_formulation(&m, sys)?,
    };
    let y0 = form
        .initial_state(0.0, q0, v0)
        .map_err(|e| RunError::Setup(format!("{}: {e}", m.source)))?;
    let solved = jounce_integrate::solve(
        form.as_mut(),
        stepper.as_mut(),
        0.0,
        &y0,
        t_at,
        &opts,
        observer,
    )
    .map_err(|f| {
        RunError::Setup(format!(
            "{}: the run to t = {t_at} s for the linearisation failed: {f}",
            m.source
        ))
    })?;
    let (nq, nv, nc) = (sys.nq(), sys.nv(), form_rows(&independent, sys));
    let (mut q, mut v, mut lam) = (vec![0.0; nq], vec![0.0; nv], vec![0.0; nc]);
    form.physical_state(solved.t, &solved.y, &mut q, &mut v, &mut lam)
        .map_err(|e| RunError::Setup(format!("{}: state at t = {t_at} s: {e}", m.source)))?;
    Ok((q, v))
}

fn form_rows<S: MechanicalSystem + ?Sized>(
    rows: &Option<jounce_mechanics::IndependentRows<'_, S>>,
    sys: &S,
) -> usize {
    match rows {
        Some(r) => r.nc(),
        None => sys.nc(),
    }
}

/// `x` to `digits` significant digits, without an exponent for ordinary
/// magnitudes.
fn sig(x: f64, digits: i32) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let e = x.abs().log10().floor() as i32;
    if !(-4..=7).contains(&e) {
        return format!("{:.*e}", (digits - 1).max(0) as usize, x);
    }
    let dec = (digits - 1 - e).max(0) as usize;
    format!("{x:.dec$}")
}

/// The printed report.
pub fn modes_text(r: &ModesReport) -> String {
    let a = &r.analysis;
    let mut out = format!(
        "{} ({}): modes linearised at the {} (t = {} s), {} DOF in {}\n",
        r.model,
        r.model_file,
        r.linearised_at,
        a.t,
        a.degrees_of_freedom,
        if let Some(c) = &r.coordinates {
            c.clone()
        } else if a.independent_coordinates.is_empty() && a.degrees_of_freedom > 0 {
            "independent coordinates (not listed)".to_string()
        } else {
            format!(
                "independent coordinates ({})",
                a.independent_coordinates.join(", ")
            )
        }
    );
    if let Some(p) = &a.partial_spectrum {
        out.push_str(&format!("  {p}\n"));
    }
    out.push_str(
        "  frequency = natural frequency |λ|/2π, damping ratio ζ = -Re λ/|λ|; damped frequency = |Im λ|/2π\n",
    );
    out.push_str(&format!(
        "  {:>4} {:>15} {:>13} {:>15} {:>28}  shape (largest motion first)\n",
        "mode", "frequency [Hz]", "damping ratio", "damped [Hz]", "eigenvalue λ [1/s]"
    ));
    for (i, m) in a.modes.iter().enumerate() {
        let shape = m.shape_text();
        match m.kind {
            ModeKind::RigidBody => out.push_str(&format!(
                "  {:>4} {:>15} {:>13} {:>15} {:>28}  {shape}\n",
                i + 1,
                "rigid-body",
                "-",
                "-",
                "0 (no stiffness)"
            )),
            ModeKind::Oscillatory => out.push_str(&format!(
                "  {:>4} {:>15} {:>13} {:>15} {:>28}  {shape}\n",
                i + 1,
                sig(m.natural_frequency_hz, 4),
                sig(
                    if m.damping_ratio.abs() < 1e-12 {
                        0.0
                    } else {
                        m.damping_ratio
                    },
                    3
                ),
                sig(m.damped_frequency_hz, 4),
                format!("{:.5e} ± {:.5e}i", m.eigenvalue_re, m.eigenvalue_im)
            )),
            ModeKind::Real => out.push_str(&format!(
                "  {:>4} {:>15} {:>13} {:>15} {:>28}  {shape}\n",
                i + 1,
                sig(m.natural_frequency_hz, 4),
                if m.eigenvalue_re < 0.0 {
                    "1 (real)".to_string()
                } else {
                    "unstable".to_string()
                },
                "0",
                format!("{:.5e}", m.eigenvalue_re)
            )),
        }
    }
    if a.modes.is_empty() {
        out.push_str("  (no degrees of freedom: no modes)\n");
    }
    if let Some(s) = a.stiffness_ratio {
        out.push_str(&format!(
            "  stiffness ratio (fastest / slowest |λ|): {}\n",
            sig(s, 4)
        ));
    }
    let rec = &r.recommendation;
    let fastest = a
        .vibration_modes()
        .map(|m| m.magnitude())
        .fold(0.0, f64::max);
    out.push_str(&format!(
        "  largest stable fixed step of each explicit method (fastest |λ| = {} 1/s, growth over t_end = {} s):\n",
        sig(fastest, 5),
        r.t_end
    ));
    out.push_str(&format!(
        "    {:<12} {:>6} {:>12} {:>12} {:>14}\n",
        "method", "stages", "h_max [s]", "steps", "f-evaluations"
    ));
    for l in &rec.explicit_limits {
        let f = |x: Option<f64>, p: usize| x.map_or("-".to_string(), |v| format!("{v:.p$e}"));
        out.push_str(&format!(
            "    {:<12} {:>6} {:>12} {:>12} {:>14}\n",
            l.method,
            l.stages,
            f(l.largest_stable_step, 3),
            l.steps_to_end
                .map_or("-".to_string(), |v| format!("{v:.0}")),
            f(l.rhs_evaluations, 2)
        ));
    }
    out.push_str(&format!(
        "  recommendation: {} — {} on {}, rtol = {:.0e} (run stiffness {})\n",
        rec.class,
        rec.method,
        rec.formulation,
        rec.rtol,
        sig(rec.run_stiffness, 3)
    ));
    for reason in &rec.reasons {
        out.push_str(&format!("    - {reason}\n"));
    }
    if let Some(c) = &r.contacts {
        out.push_str(&format!("  contacts: {c}\n"));
    }
    out
}
