//! A study by its name: what `jounce study NAME` and Python's
//! `jounce.study(NAME)` both call, with the command's defaults.
//!
//! [`run_study`] runs S1..S8 into `out/<name>/` and returns the printed
//! table, the study's data (its cases, rows and findings, serialised as
//! the study's own structs) and the charts it wrote.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

use jounce::error::RunError;

use crate::{study, study_s2, study_s3, study_s4, study_s5, study_s6, study_s7, study_s8};

/// The names of the studies, in order.
pub const STUDIES: [&str; 8] = ["s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8"];

/// The options of `jounce study` (its defaults are [`StudyOptions::default`]).
#[derive(Clone, Debug)]
pub struct StudyOptions {
    /// Folder of the study models (default `examples/studies`).
    pub models: PathBuf,
    /// Output directory; the study writes into `out/<name>` (default
    /// `out/study`).
    pub out: PathBuf,
    /// End time (S1 and S4; default: the study's).
    pub t_end: Option<f64>,
    /// Skip S1's Adams comparison runs.
    pub no_adams: bool,
    /// Formulation of S1's trapezoidal runs: `index3` or `joint`.
    pub formulation: String,
    /// Methods of S3 (empty: the study's default set).
    pub methods: Vec<String>,
}

impl Default for StudyOptions {
    fn default() -> Self {
        Self {
            models: PathBuf::from("examples/studies"),
            out: PathBuf::from("out/study"),
            t_end: None,
            no_adams: false,
            formulation: "index3".into(),
            methods: Vec::new(),
        }
    }
}

/// What a study returns: its table as printed, its data and its charts.
#[derive(Clone, Debug, Serialize)]
pub struct StudyOutput {
    /// The study's name, lower case (`s1`..`s8`).
    pub name: String,
    /// The table `jounce study NAME` prints.
    pub table: String,
    /// The study's folder (`out/<name>`).
    pub out_dir: PathBuf,
    /// The charts (SVG) the study wrote into its folder, sorted.
    pub figures: Vec<PathBuf>,
    /// The study's result (cases, rows, findings) as JSON.
    pub data: serde_json::Value,
}

fn json(v: &impl Serialize) -> Result<serde_json::Value, RunError> {
    serde_json::to_value(v).map_err(|e| RunError::Setup(format!("study data: {e}")))
}

/// The SVG files in `dir` (not its run folders) written since `since`.
fn charts(dir: &Path, since: SystemTime) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "svg"))
        .filter(|p| {
            std::fs::metadata(p)
                .and_then(|m| m.modified())
                .is_ok_and(|t| t >= since)
        })
        .collect();
    found.sort();
    found
}

/// Run the study `name` (`s1`..`s8`, any case) with `opts`.
///
/// # Errors
/// [`RunError::Setup`] for an unknown name (listing the studies); the
/// study's own errors otherwise.
pub fn run_study(given: &str, opts: &StudyOptions) -> Result<StudyOutput, RunError> {
    let name = given.to_ascii_lowercase();
    let out = opts.out.join(&name);
    // file times have a coarse resolution on some file systems
    let since = SystemTime::now() - std::time::Duration::from_secs(2);
    let models = &opts.models;
    let (table, data) = match name.as_str() {
        "s1" => {
            if !["index3", "joint"].contains(&opts.formulation.as_str()) {
                return Err(RunError::Setup(format!(
                    "study s1: formulation '{}': index3 or joint",
                    opts.formulation
                )));
            }
            let o = study::S1Options {
                t_end: opts.t_end,
                skip_adams: opts.no_adams,
                trapezoidal_formulation: opts.formulation.clone(),
                ..Default::default()
            };
            let cases = study::s1(models, &out, &o)?;
            (study::s1_table(&cases, &o), json(&cases)?)
        }
        "s2" => {
            let c = study_s2::s2(models, &out)?;
            (study_s2::s2_table(&c), json(&c)?)
        }
        "s3" => {
            let s = study_s3::s3(models, &out, &opts.methods)?;
            (study_s3::s3_table(&s), json(&s)?)
        }
        "s4" => {
            let o = study_s4::S4Options {
                t_end: opts.t_end,
                ..Default::default()
            };
            let s = study_s4::s4(models, &out, &o)?;
            (study_s4::s4_table(&s), json(&s)?)
        }
        "s5" => {
            let s = study_s5::s5(models, &out)?;
            (study_s5::s5_table(&s), json(&s)?)
        }
        "s6" => {
            let s = study_s6::s6(models, &out)?;
            (study_s6::s6_table(&s), json(&s)?)
        }
        "s7" => {
            let s = study_s7::s7(&out)?;
            (study_s7::s7_table(&s), json(&s)?)
        }
        "s8" => {
            let s = study_s8::s8(models, &out)?;
            (study_s8::s8_table(&s), json(&s)?)
        }
        _ => {
            return Err(RunError::Setup(format!(
                "unknown study '{given}'; available: {}",
                STUDIES.join(", ")
            )))
        }
    };
    Ok(StudyOutput {
        figures: charts(&out, since),
        name,
        table,
        out_dir: out,
        data,
    })
}
