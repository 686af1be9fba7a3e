//! `jounce sweep`: a parameter study. One model parameter, named by its
//! path in the model file, takes each of a list of values; every variant
//! runs in parallel (rayon, all cores), and the figures of each run's
//! summary (or the final value of an output column) are tabled and
//! plotted against the parameter.
//!
//! **Paths.** Dotted keys of the TOML file; an array of tables (`bodies`,
//! `joints`, `forces`, `contacts`, `drivers`) is entered by an element's
//! `name` (or its 0-based index): `forces.spring.stiffness`,
//! `bodies.bob.mass`, `settings.integrator.rtol`. A key the element does
//! not have yet is added (an optional key taking its default otherwise).
//! Each variant is validated as the model file is, so a value out of range
//! is refused with the element's name.
//!
//! **Figures.** A dotted path into `summary.json` (`work.cpu_seconds`,
//! `work.steps_accepted`, `accuracy.max_energy_error`, …), or
//! `final:<column>`, `max:<column>` or `min:<column>` of `timeseries.csv`
//! (its last row, its peak and its trough). A figure that names neither is
//! refused before any run, with the nearest name.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;

use crate::compare::dir_name;
use crate::error::RunError;
use crate::plot::{line_chart, log_log_chart, Chart, Curve, PlotFile, YScale};
use crate::run::run_model;
use crate::series::Series;

/// Figures tabled when none are asked for.
pub const DEFAULT_FIGURES: [&str; 4] = [
    "work.steps_accepted",
    "work.rhs_evaluations",
    "work.cpu_seconds",
    "accuracy.max_position_violation",
];

/// What `jounce sweep` runs.
#[derive(Clone, Debug)]
pub struct SweepOptions {
    /// Dotted path of the parameter in the model file.
    pub path: String,
    /// Its values (numbers or, for a string key, names).
    pub values: Vec<String>,
    /// Figures to table and plot (default [`DEFAULT_FIGURES`]).
    pub figures: Vec<String>,
    /// Output directory: one folder per value, the table and the plots.
    pub out_dir: PathBuf,
}

/// One variant's run.
#[derive(Clone, Debug, Serialize)]
pub struct SweepRow {
    /// The parameter value as given.
    pub value: String,
    /// As a number, when it is one.
    pub number: Option<f64>,
    /// "completed", "failed" or "refused".
    pub status: String,
    /// Why it failed or was refused.
    pub reason: Option<String>,
    /// The figures, in the order asked (NaN where absent).
    pub figures: Vec<f64>,
    /// Its output directory.
    pub dir: PathBuf,
}

/// A whole parameter study.
#[derive(Clone, Debug, Serialize)]
pub struct Sweep {
    /// Model file.
    pub model_file: String,
    /// The parameter's path.
    pub path: String,
    /// The figures' names.
    pub figures: Vec<String>,
    /// One row per value, in the order given.
    pub rows: Vec<SweepRow>,
    /// Wall-clock seconds of all runs.
    pub wall_seconds: f64,
    /// Worker threads.
    pub threads: usize,
}

/// The TOML text of `doc` with the key at `path` set to `value` (a number
/// when it parses as one, a boolean for true/false, else a string).
///
/// # Errors
/// A message naming the path segment that does not exist.
pub fn set_parameter(doc: &str, path: &str, value: &str) -> Result<String, String> {
    let mut root: toml::Table = doc.parse().map_err(|e| format!("{e}"))?;
    let parts: Vec<&str> = path.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(format!(
            "'{path}' is not a dotted path (e.g. forces.spring.stiffness)"
        ));
    }
    let new = if let Ok(i) = value.parse::<i64>() {
        toml::Value::Integer(i)
    } else if let Ok(x) = value.parse::<f64>() {
        toml::Value::Float(x)
    } else if let Ok(b) = value.parse::<bool>() {
        toml::Value::Boolean(b)
    } else {
        toml::Value::String(value.to_string())
    };
    let mut table = &mut root;
    let mut walked = String::new();
    for (k, part) in parts.iter().enumerate() {
        let last = k + 1 == parts.len();
        if last {
            table.insert((*part).to_string(), new);
            break;
        }
        let here = if walked.is_empty() {
            (*part).to_string()
        } else {
            format!("{walked}.{part}")
        };
        let entry = table
            .get_mut(*part)
            .ok_or_else(|| format!("the model has no '{here}'"))?;
        table = match entry {
            toml::Value::Table(t) => t,
            toml::Value::Array(items) => {
                // an array of tables: the next segment names the element
                let key = parts[k + 1];
                let names: Vec<String> = items
                    .iter()
                    .filter_map(|v| v.get("name")?.as_str().map(str::to_string))
                    .collect();
                let at = items
                    .iter()
                    .position(|v| v.get("name").and_then(|n| n.as_str()) == Some(key))
                    .or_else(|| key.parse::<usize>().ok().filter(|&i| i < items.len()))
                    .ok_or_else(|| {
                        format!(
                            "'{here}' has no element named '{key}' (it has: {})",
                            names.join(", ")
                        )
                    })?;
                if k + 2 == parts.len() {
                    return Err(format!(
                        "'{path}' names an element of '{here}', not a key: add the key (e.g. {path}.stiffness)"
                    ));
                }
                match &mut items[at] {
                    toml::Value::Table(t) => {
                        // the rest of the path within the element
                        let rest = parts[k + 2..].join(".");
                        let sub = toml::to_string(t).map_err(|e| e.to_string())?;
                        let updated = set_parameter(&sub, &rest, value)
                            .map_err(|e| format!("in '{here}.{key}': {e}"))?;
                        *t = updated.parse().map_err(|e| format!("{e}"))?;
                        return toml::to_string(&root).map_err(|e| e.to_string());
                    }
                    _ => return Err(format!("'{here}.{key}' is not a table")),
                }
            }
            _ => return Err(format!("'{here}' is a value, not a table")),
        };
        walked = here;
    }
    toml::to_string(&root).map_err(|e| e.to_string())
}

/// The operations on an output column a figure may name: its value in the
/// last row, its largest and its smallest value over the run.
const COLUMN_FIGURES: [&str; 3] = ["final:", "max:", "min:"];

/// The figure `name` of a finished run in `dir` (NaN when the run did not
/// write it).
fn figure(dir: &Path, summary: &serde_json::Value, name: &str) -> f64 {
    if let Some((op, col)) = column_figure(name) {
        let Ok(s) = Series::read(&dir.join("timeseries.csv")) else {
            return f64::NAN;
        };
        let Some(i) = s.column_index(col) else {
            return f64::NAN;
        };
        let values = s.rows.iter().map(|r| r[i]);
        return match op {
            "final:" => s.rows.last().map_or(f64::NAN, |r| r[i]),
            "max:" => values.fold(f64::NAN, f64::max),
            _ => values.fold(f64::NAN, f64::min),
        };
    }
    let mut v = summary;
    for part in name.split('.') {
        match v.get(part) {
            Some(x) => v = x,
            None => return f64::NAN,
        }
    }
    v.as_f64().unwrap_or(f64::NAN)
}

/// `("max:", "ball.y")` for `max:ball.y`; `None` for a summary path.
fn column_figure(name: &str) -> Option<(&'static str, &str)> {
    COLUMN_FIGURES
        .iter()
        .find_map(|op| name.strip_prefix(op).map(|col| (*op, col)))
}

/// Refuse, before any run, a figure that names no number of
/// `summary.json` (checked against its full layout) or no column of the
/// model's `timeseries.csv`, with the nearest name: a misspelt figure
/// would otherwise be a column of NaN.
///
/// # Errors
/// [`RunError::Setup`] naming the figure.
fn check_figures(model: &jounce_model::Model, figures: &[String]) -> Result<(), RunError> {
    let columns: Option<Vec<String>> = jounce_mechanics::PlanarSystem::from_model(model)
        .ok()
        .map(|sys| crate::observer::timeseries_header(&sys));
    let summary = serde_json::to_value(jounce_io::RunSummary::default())
        .map_err(|e| RunError::Setup(e.to_string()))?;
    for name in figures {
        let bad = |why: String| {
            RunError::Setup(format!(
                "--figure '{name}': {why}; a figure is a dotted path to a number in \
                 summary.json (e.g. work.cpu_seconds) or final:, max: or min: of an output \
                 column (e.g. max:{})",
                columns
                    .as_ref()
                    .and_then(|c| c.get(2))
                    .map_or("body.y", String::as_str)
            ))
        };
        if let Some((_, col)) = column_figure(name) {
            if let Some(cols) = &columns {
                if !cols.iter().any(|c| c == col) {
                    return Err(bad(format!(
                        "timeseries.csv has no column '{col}'{}",
                        jounce_model::did_you_mean(col, cols)
                    )));
                }
            }
            continue;
        }
        // the optional blocks (cost_from) are absent from the default
        if name.starts_with("cost_from.") {
            continue;
        }
        let mut v = &summary;
        let mut walked = String::new();
        for part in name.split('.') {
            let keys: Vec<String> = v
                .as_object()
                .map(|o| {
                    o.keys()
                        .map(|k| {
                            if walked.is_empty() {
                                k.clone()
                            } else {
                                format!("{walked}.{k}")
                            }
                        })
                        .collect()
                })
                .unwrap_or_default();
            let here = if walked.is_empty() {
                part.to_string()
            } else {
                format!("{walked}.{part}")
            };
            match v.get(part) {
                Some(x) => v = x,
                None => {
                    return Err(bad(format!(
                        "summary.json has no '{here}'{}",
                        jounce_model::did_you_mean(&here, &keys)
                    )))
                }
            }
            walked = here;
        }
        if !(v.is_number() || v.is_null()) {
            return Err(bad(format!("'{name}' in summary.json is not a number")));
        }
    }
    Ok(())
}

/// Run the study of `opts` on the model file `model_file`.
///
/// # Errors
/// [`RunError::Setup`] for no values, a path the model does not have, or
/// an unknown figure; a variant that fails or is refused is a row.
pub fn sweep(model_file: &Path, opts: &SweepOptions) -> Result<Sweep, RunError> {
    if opts.values.is_empty() {
        return Err(RunError::Setup(
            "--set: give at least one value (path=v1,v2,...)".into(),
        ));
    }
    let text = std::fs::read_to_string(model_file)
        .map_err(|e| RunError::Io(jounce_io::IoError::new(model_file, e)))?;
    let origin = model_file.display().to_string();
    // the path must exist for the first value before anything runs
    set_parameter(&text, &opts.path, &opts.values[0])
        .map_err(|e| RunError::Setup(format!("--set {}: {e}", opts.path)))?;
    let figures = if opts.figures.is_empty() {
        DEFAULT_FIGURES.iter().map(|s| s.to_string()).collect()
    } else {
        opts.figures.clone()
    };
    if let Ok(model) = jounce_model::from_str(&text, &origin) {
        check_figures(&model, &figures)?;
    }
    std::fs::create_dir_all(&opts.out_dir)
        .map_err(|e| RunError::Io(jounce_io::IoError::new(&opts.out_dir, e)))?;
    let wall = std::time::Instant::now();
    let rows: Vec<SweepRow> = opts
        .values
        .par_iter()
        .map(|value| {
            let dir = opts
                .out_dir
                .join(dir_name(&format!("{}={value}", opts.path)));
            let mut row = SweepRow {
                value: value.clone(),
                number: value.parse().ok(),
                status: "refused".into(),
                reason: None,
                figures: vec![f64::NAN; figures.len()],
                dir: dir.clone(),
            };
            let variant = set_parameter(&text, &opts.path, value).and_then(|t| {
                jounce_model::from_str(&t, &format!("{origin} ({}={value})", opts.path))
                    .map_err(|e| e.to_string())
            });
            let model = match variant {
                Ok(m) => m,
                Err(e) => {
                    row.reason = Some(e);
                    return row;
                }
            };
            let summary = match run_model(&model, &dir, None) {
                Ok(s) => {
                    row.status = "completed".into();
                    s
                }
                Err(RunError::Integration { summary, .. }) => {
                    row.status = "failed".into();
                    row.reason = summary.error.clone();
                    *summary
                }
                Err(e) => {
                    row.reason = Some(e.to_string());
                    return row;
                }
            };
            let json = serde_json::to_value(&summary).unwrap_or(serde_json::Value::Null);
            for (f, name) in row.figures.iter_mut().zip(&figures) {
                *f = figure(&dir, &json, name);
            }
            row
        })
        .collect();
    Ok(Sweep {
        model_file: origin,
        path: opts.path.clone(),
        figures,
        rows,
        wall_seconds: wall.elapsed().as_secs_f64(),
        threads: rayon::current_num_threads(),
    })
}

/// The study as a table.
pub fn sweep_table(s: &Sweep) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "sweep of {} in {} ({} runs in {:.2} s wall on {} threads)",
        s.path,
        s.model_file,
        s.rows.len(),
        s.wall_seconds,
        s.threads
    );
    let _ = write!(
        out,
        "{:>14} {:>10}",
        s.path.rsplit('.').next().unwrap_or(""),
        "status"
    );
    for f in &s.figures {
        let short = if column_figure(f).is_some() {
            f.as_str()
        } else {
            f.rsplit('.').next().unwrap_or(f)
        };
        let _ = write!(out, " {short:>16}");
    }
    out.push('\n');
    for r in &s.rows {
        let _ = write!(out, "{:>14} {:>10}", r.value, r.status);
        for f in &r.figures {
            let _ = write!(out, " {f:>16.6e}");
        }
        out.push('\n');
    }
    for r in s.rows.iter().filter(|r| r.reason.is_some()) {
        let _ = writeln!(
            out,
            "{} = {}: {}",
            s.path,
            r.value,
            r.reason.as_deref().unwrap_or("")
        );
    }
    out
}

/// Write `sweep.csv`, `sweep.json` and one chart per figure
/// (`sweep_<figure>.svg`, the figure against the parameter; log-log when
/// both span more than two decades and are positive) into `dir`. Returns
/// the charts.
///
/// # Errors
/// [`RunError::Io`] naming a file that cannot be written.
pub fn write_sweep(s: &Sweep, dir: &Path) -> Result<Vec<PlotFile>, RunError> {
    let io = |p: &Path, e: std::io::Error| RunError::Io(jounce_io::IoError::new(p, e));
    let mut csv = format!("{},status,{}\n", s.path, s.figures.join(","));
    for r in &s.rows {
        let figs: Vec<String> = r.figures.iter().map(|f| format!("{f:e}")).collect();
        let _ = writeln!(csv, "{},{},{}", r.value, r.status, figs.join(","));
    }
    let path = dir.join("sweep.csv");
    std::fs::write(&path, csv).map_err(|e| io(&path, e))?;
    let path = dir.join("sweep.json");
    let json = serde_json::to_string_pretty(s).map_err(|e| RunError::Setup(e.to_string()))?;
    std::fs::write(&path, json).map_err(|e| io(&path, e))?;
    let mut charts = Vec::new();
    for (k, name) in s.figures.iter().enumerate() {
        let mut points: Vec<(f64, f64)> = s
            .rows
            .iter()
            .filter_map(|r| Some((r.number?, r.figures[k])))
            .filter(|p| p.0.is_finite() && p.1.is_finite())
            .collect();
        if points.is_empty() {
            continue;
        }
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let spans = |f: fn(&(f64, f64)) -> f64| {
            let (lo, hi) = points
                .iter()
                .map(f)
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                    (a.min(v), b.max(v))
                });
            lo > 0.0 && hi / lo > 100.0
        };
        let log_log = spans(|p| p.0) && spans(|p| p.1);
        let title = format!("{name} against {}", s.path);
        let chart = Chart {
            title: &title,
            x_label: &s.path,
            y_label: name,
            y_scale: YScale::Auto,
        };
        let file = dir.join(format!("sweep_{}.svg", dir_name(name)));
        let curve = [Curve {
            label: name.clone(),
            points,
        }];
        charts.push(if log_log {
            log_log_chart(&file, &chart, &curve)?
        } else {
            line_chart(&file, &chart, &curve)?
        });
    }
    Ok(charts)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODEL: &str = r#"
[model]
name = "m"

[[bodies]]
name = "bob"
mass = 1.0

[[forces]]
name = "spring"
type = "spring_damper"
stiffness = 10.0

[settings.integrator]
rtol = 1e-6
"#;

    #[test]
    fn a_parameter_is_set_by_its_path_through_named_elements() {
        let t = set_parameter(MODEL, "forces.spring.stiffness", "250").unwrap();
        let doc: toml::Table = t.parse().unwrap();
        assert_eq!(doc["forces"][0]["stiffness"].as_integer(), Some(250));
        let t = set_parameter(MODEL, "bodies.0.mass", "2.5").unwrap();
        let doc: toml::Table = t.parse().unwrap();
        assert_eq!(doc["bodies"][0]["mass"].as_float(), Some(2.5));
        let t = set_parameter(MODEL, "settings.integrator.method", "radau5").unwrap();
        let doc: toml::Table = t.parse().unwrap();
        assert_eq!(
            doc["settings"]["integrator"]["method"].as_str(),
            Some("radau5")
        );
        assert_eq!(doc["settings"]["integrator"]["rtol"].as_float(), Some(1e-6));
    }

    #[test]
    fn a_path_the_model_lacks_is_named() {
        let e = set_parameter(MODEL, "forces.damper.damping", "1").unwrap_err();
        assert!(e.contains("damper") && e.contains("spring"), "{e}");
        let e = set_parameter(MODEL, "solver.tol", "1").unwrap_err();
        assert!(e.contains("solver"), "{e}");
        let e = set_parameter(MODEL, "forces.spring", "1").unwrap_err();
        assert!(e.contains("not a key"), "{e}");
    }
}
