//! A mutation test over every shipped example: each joint and each driver
//! in turn is declared a second time (a consistent redundant constraint),
//! and the mutated model is run under every formulation.
//!
//! Planar and spatial examples (up to 20 bodies) are two campaigns. Every
//! run must either complete with the original model's motion (every
//! body's x, y and θ, spatial x, y, z and quaternion, within 1e-8 of the
//! original's at t_end, or within a
//! tenth of the run's own error where that is larger: see [`judge`]) or be
//! refused by `jounce check` and `jounce run` alike, where the
//! original runs with a message naming the duplicated element's rows. No run
//! panics. Before the narrow mechanics contract 22 of these mutants
//! panicked at t = 0 (the slider-crank with its driver or guide declared
//! twice, the quarter car with a guide repeated) while `check` passed them.
//!
//! Runs are short (t_end = 0.02 s) and tight (rtol = atol = 1e-10), all in
//! parallel.

use crate::support;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use jounce::run::run_model;
use jounce::RunError;
use rayon::prelude::*;
use support::{repo, scratch, Series};

/// Simulated time of every run.
const T_END: f64 = 0.02;

/// Every formulation with a method that can run it (formulation, method,
/// fixed step).
const RUNS: [(&str, &str, Option<f64>); 11] = [
    ("augmented", "dopri5", None),
    ("projection", "dopri5", None),
    ("partitioning", "dopri5", None),
    ("state_space", "radau5", None),
    ("penalty", "radau5", None),
    ("index3", "radau5", None),
    ("ggl", "radau5", None),
    ("odae", "bdf", None),
    ("augmented_lagrangian", "generalized_alpha", Some(1e-4)),
    ("augmented_lagrangian", "newmark", Some(1e-4)),
    ("joint", "dopri5", None),
];

/// Largest spatial example (in bodies) whose mutants are run: the
/// 1000-body chain's 1000 mutants would dominate the campaign.
const SPATIAL_BODIES_MAX: usize = 20;

/// The shipped example files, planar or spatial (`spatial`; those of at
/// most [`SPATIAL_BODIES_MAX`] bodies).
fn examples(spatial: bool) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for dir in ["examples", "examples/studies", "examples/benchmarks"] {
        let Ok(entries) = std::fs::read_dir(repo(dir)) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            let is_spatial = text.contains("space = \"spatial\"");
            let small = text.matches("[[bodies]]").count() <= SPATIAL_BODIES_MAX;
            if p.extension().is_some_and(|x| x == "toml")
                && is_spatial == spatial
                && (!spatial || small)
            {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// The `[[section]]` blocks of a model text: (start, end) byte ranges,
/// each from its header to the next header.
fn blocks(text: &str, section: &str) -> Vec<(usize, usize)> {
    let header = format!("[[{section}]]");
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(i) = text[pos..].find(&header) {
        let start = pos + i;
        if start > 0 && !text[..start].ends_with('\n') {
            pos = start + header.len();
            continue;
        }
        let body = start + header.len();
        let end = text[body..]
            .match_indices("\n[")
            .next()
            .map_or(text.len(), |(k, _)| body + k + 1);
        out.push((start, end));
        pos = end;
    }
    out
}

/// The model text with block `range` declared again at the end under the
/// name `<name>_again`.
fn duplicate(text: &str, range: (usize, usize)) -> (String, String) {
    let block = &text[range.0..range.1];
    let name_line = block
        .lines()
        .find(|l| l.trim_start().starts_with("name"))
        .expect("a named element");
    let name = name_line
        .split('"')
        .nth(1)
        .expect("a quoted name")
        .to_string();
    let again = block.replacen(
        name_line,
        &name_line.replacen(&format!("\"{name}\""), &format!("\"{name}_again\""), 1),
        1,
    );
    (format!("{text}\n{again}\n"), format!("{name}_again"))
}

/// The model text run with `formulation`: its own `formulation` key
/// removed, the new one set.
fn with_formulation(text: &str, formulation: &str) -> String {
    let mut out = String::with_capacity(text.len() + 40);
    let mut in_settings = false;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with('[') {
            in_settings = t.starts_with("[settings]");
        }
        if in_settings && t.starts_with("formulation") {
            continue;
        }
        out.push_str(line);
        out.push('\n');
        if t.starts_with("[settings]") {
            out.push_str(&format!("formulation = \"{formulation}\"\n"));
        }
    }
    out
}

/// How one run ended: the final positions, or the reason.
enum Outcome {
    Completed(Vec<f64>),
    Refused(String),
    Failed(String),
}

/// Parse, shorten and run; also returns whether `jounce check` passed.
fn run(text: &str, origin: &str, f: &str, method: &str, step: Option<f64>) -> (Outcome, bool) {
    let text = with_formulation(text, f);
    let mut model = match jounce_model::from_str(&text, origin) {
        Ok(m) => m,
        Err(e) => return (Outcome::Refused(e.to_string()), false),
    };
    model.settings.t_end = T_END.min(model.settings.t_end);
    model.settings.integrator.method = method.into();
    model.settings.integrator.rtol = 1e-10;
    model.settings.integrator.atol = 1e-10;
    model.settings.integrator.step = step;
    let checked = jounce::check::check_model(&model).is_ok();
    let out = scratch("mutant");
    let result = catch_unwind(AssertUnwindSafe(|| run_model(&model, &out, None)))
        .unwrap_or_else(|_| panic!("{origin} under {f}/{method}: the run panicked"));
    let outcome = match result {
        Ok(_) => {
            let s = Series::read(&out.join("timeseries.csv"));
            // every body's position: x, y, θ; spatial x, y, z and its unit
            // quaternion (continuous from the same start: no sign flip)
            let columns: Vec<String> = match &model.spatial {
                Some(sm) => sm
                    .bodies
                    .iter()
                    .flat_map(|b| {
                        ["x", "y", "z", "qw", "qx", "qy", "qz"].map(|c| format!("{}.{c}", b.name))
                    })
                    .collect(),
                None => model
                    .bodies
                    .iter()
                    .flat_map(|b| ["x", "y", "theta"].map(|c| format!("{}.{c}", b.name)))
                    .collect(),
            };
            let last: Vec<f64> = columns
                .iter()
                .map(|c| *s.col(c).last().expect("a row"))
                .collect();
            Outcome::Completed(last)
        }
        Err(e @ RunError::Integration { .. }) => Outcome::Failed(e.to_string()),
        Err(e) => Outcome::Refused(e.to_string()),
    };
    let _ = std::fs::remove_dir_all(&out);
    (outcome, checked)
}

/// What one mutant under one formulation showed, or the violation.
///
/// The motion must agree within 1e-8, or within a tenth of the run's own
/// error where that is larger: the original's distance from the
/// `reference` (augmented with dopri5 at 1e-10). The augmented Lagrangian
/// at ωh ≈ 1 on S1's 1e8 N/m springs amplifies its Newton tolerance (up to
/// 8.5e-7) well inside its own error; penalty runs doubled rows as doubled
/// springs and is held to its own error.
fn judge(
    file: &Path,
    text: &str,
    original: &(Outcome, bool),
    reference: &Outcome,
    f: usize,
) -> Result<&'static str, String> {
    let (form, method, step) = RUNS[f];
    let tag = format!("{} {form}/{method}", file.display());
    let (mutant, checked) = run(text, &tag, form, method, step);
    let refused = matches!(mutant, Outcome::Refused(_));
    if checked == refused {
        return Err(format!(
            "{tag}: check {} but run {}",
            if checked { "passes" } else { "fails" },
            if refused {
                "refuses"
            } else {
                "does not refuse"
            }
        ));
    }
    match (&original.0, &mutant) {
        (Outcome::Completed(a), Outcome::Completed(b)) => {
            let d = a
                .iter()
                .zip(b)
                .fold(0.0_f64, |m, (x, y)| m.max((x - y).abs()));
            let own_error = match reference {
                Outcome::Completed(r) => a
                    .iter()
                    .zip(r)
                    .fold(0.0_f64, |m, (x, y)| m.max((x - y).abs())),
                _ => f64::INFINITY,
            };
            // penalty: a doubled row is a doubled penalty spring, which
            // halves that row's O(1/α) violation, so the motion moves by up
            // to its own error; every other formulation by a tenth at most
            let share = if form == "penalty" { 1.0 } else { 0.1 };
            let bound = (share * own_error).max(1e-8);
            if d <= bound {
                Ok("same motion")
            } else {
                Err(format!(
                    "{tag}: positions at t_end differ by {d:e} (the run's own error {own_error:e})"
                ))
            }
        }
        (_, Outcome::Refused(why)) => {
            if matches!(original.0, Outcome::Completed(_)) && !why.contains("_again") {
                Err(format!("{tag}: refused without naming the rows: {why}"))
            } else {
                Ok("refused")
            }
        }
        (Outcome::Completed(_), Outcome::Failed(why)) => Err(format!(
            "{tag}: the original completes, the mutant fails: {why}"
        )),
        (_, Outcome::Failed(_)) => Ok("fails like the original"),
        (_, Outcome::Completed(_)) => Err(format!(
            "{tag}: the original does not complete but the mutant does"
        )),
    }
}

/// What the campaign over `files` found: the number of mutants and one
/// verdict per mutant and formulation.
fn campaign(files: &[std::path::PathBuf]) -> (usize, Vec<Result<&'static str, String>>) {
    // (file, mutated text) for every joint and driver of every example
    let mut mutants = Vec::new();
    let mut originals = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        let ranges: Vec<(usize, usize)> = blocks(&text, "joints")
            .into_iter()
            .chain(blocks(&text, "drivers"))
            .collect();
        if ranges.is_empty() {
            continue;
        }
        let o = originals.len();
        originals.push((file.clone(), text.clone()));
        for r in ranges {
            mutants.push((o, duplicate(&text, r).0));
        }
    }
    let original_runs: Vec<Vec<(Outcome, bool)>> = originals
        .par_iter()
        .map(|(file, text)| {
            (0..RUNS.len())
                .into_par_iter()
                .map(|f| {
                    let (form, method, step) = RUNS[f];
                    run(text, &file.display().to_string(), form, method, step)
                })
                .collect()
        })
        .collect();
    let verdicts: Vec<Result<&'static str, String>> = mutants
        .par_iter()
        .flat_map(|(o, text)| {
            let (file, _) = &originals[*o];
            let runs = &original_runs[*o];
            (0..RUNS.len())
                .into_par_iter()
                .map(move |f| judge(file, text, &runs[f], &runs[0].0, f))
        })
        .collect();
    (mutants.len(), verdicts)
}

/// Print the campaign's counts and violations; assert there are none and
/// that at least five formulations per mutant compared motions.
fn report(mutants: usize, verdicts: &[Result<&'static str, String>]) {
    let count = |what: &str| verdicts.iter().filter(|v| v.as_deref() == Ok(what)).count();
    let failures: Vec<&String> = verdicts.iter().filter_map(|v| v.as_ref().err()).collect();
    println!(
        "{} mutants x {} formulations: {} same motion, {} refused by name, {} fail like the original, {} violations",
        mutants,
        RUNS.len(),
        count("same motion"),
        count("refused"),
        count("fails like the original"),
        failures.len()
    );
    for f in &failures {
        println!("  {f}");
    }
    assert!(failures.is_empty(), "{} violations", failures.len());
    assert!(count("same motion") >= mutants * 5, "too few runs compared");
}

#[test]
fn every_joint_and_driver_declared_twice_runs_as_the_original_or_is_refused_by_name() {
    let files = examples(false);
    assert!(files.len() >= 40, "{} example files", files.len());
    let (mutants, verdicts) = campaign(&files);
    assert!(mutants >= 90, "{mutants} mutants");
    report(mutants, &verdicts);
}

/// The same campaign over the spatial examples (issue 33): the double
/// pendulum, the heavy top, the slider-crank, the double wishbone.
#[test]
fn every_spatial_joint_and_driver_declared_twice_runs_as_the_original_or_is_refused_by_name() {
    let files = examples(true);
    assert!(files.len() >= 4, "{} spatial example files", files.len());
    let (mutants, verdicts) = campaign(&files);
    assert!(mutants >= 15, "{mutants} mutants");
    report(mutants, &verdicts);
}
