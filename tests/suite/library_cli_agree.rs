//! The CLI and the library are one pipeline (issue 30, point 3): for every
//! shipped example, `jounce run` writes to `timeseries.csv` exactly the
//! values `Simulation::run` returns in memory (bit for bit, as printed),
//! and to `summary.json` the same summary, the timing fields aside.

use crate::support;

use std::path::Path;

use jounce::{RunOptions, RunResult, Simulation, TimeSeries};
use support::{jounce, repo, scratch};

/// Header and rows of a CSV file the CLI wrote.
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let mut lines = text.lines();
    let header = lines
        .next()
        .expect("a header line")
        .split(',')
        .map(|s| s.trim_matches('"').to_string())
        .collect();
    let rows = lines
        .map(|l| {
            l.split(',')
                .map(|v| v.parse().unwrap_or_else(|_| panic!("{path:?}: '{v}'")))
                .collect()
        })
        .collect();
    (header, rows)
}

/// Same value, bit for bit (any NaN equals any NaN: NaN prints as `NaN`).
fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// The file's rows equal the series' values, except in the columns named
/// in `skip` (CPU time).
fn assert_same_series(tag: &str, file: &Path, series: &TimeSeries, skip: &[&str]) {
    let (header, rows) = read_csv(file);
    assert_eq!(header, series.names(), "{tag}: header of {file:?}");
    assert_eq!(rows.len(), series.len(), "{tag}: rows of {file:?}");
    for (j, (name, column)) in header.iter().zip(series.columns()).enumerate() {
        if skip.contains(&name.as_str()) {
            continue;
        }
        for (i, row) in rows.iter().enumerate() {
            assert!(
                same(row[j], column[i]),
                "{tag}: {file:?} row {i} column {name}: CLI {} library {}",
                row[j],
                column[i]
            );
        }
    }
}

/// summary.json without the fields that time the run.
fn untimed(mut v: serde_json::Value) -> serde_json::Value {
    for block in ["work", "cost_from"] {
        if let Some(o) = v.get_mut(block).and_then(|b| b.as_object_mut()) {
            o.remove("cpu_seconds");
            o.remove("wall_seconds");
        }
    }
    v
}

/// Run `file` through the CLI (with `args`) and the library (with
/// `options`, the same settings) and compare what they give.
fn agree(file: &Path, args: &[&str], options: &RunOptions) {
    let tag = file.file_stem().unwrap().to_string_lossy().to_string();
    let out = scratch(&format!("agree-{tag}"));
    let path = file.to_str().unwrap();
    let mut cli = vec!["run", path, "-o", out.to_str().unwrap(), "-q"];
    cli.extend_from_slice(args);
    let (code, _, stderr) = jounce(&cli);

    let sim = Simulation::from_file(file).unwrap();
    let (lib, failed): (RunResult, bool) = match sim.run(options) {
        Ok(r) => (r, false),
        Err(f) => (*f.partial, true),
    };
    assert_eq!(code != 0, failed, "{tag}: CLI exit {code} ({stderr})");

    assert_same_series(&tag, &out.join("timeseries.csv"), &lib.series, &[]);
    let cli_summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    // both through the same text → value parse (serde_json's parse of a
    // printed f64 may differ from the f64 in the last bit)
    let lib_summary: serde_json::Value =
        serde_json::from_str(&serde_json::to_string(&lib.summary).unwrap()).unwrap();
    assert_eq!(untimed(cli_summary), untimed(lib_summary), "{tag}: summary");
    match &lib.steps {
        Some(steps) => assert_same_series(&tag, &out.join("steps.csv"), steps, &["cpu_seconds"]),
        None => assert!(!out.join("steps.csv").exists(), "{tag}: steps.csv"),
    }
    let _ = std::fs::remove_dir_all(&out);
}

fn tomls(dir: &str) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(repo(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

/// Every example of examples/, as shipped.
#[test]
fn every_example_gives_the_same_output_from_the_cli_and_the_library() {
    let files = tomls("examples");
    assert!(files.len() >= 10, "{files:?}");
    for file in &files {
        agree(file, &[], &RunOptions::default());
    }
}

/// Every study model of examples/studies/, over its first 50 ms (some
/// run for minutes to their end), with the same --t-end on both sides.
#[test]
fn every_study_model_gives_the_same_output_from_the_cli_and_the_library() {
    let files = tomls("examples/studies");
    assert!(files.len() >= 30, "{files:?}");
    let options = RunOptions {
        t_end: Some(0.05),
        ..RunOptions::default()
    };
    for file in &files {
        agree(file, &["--t-end", "0.05"], &options);
    }
}

/// A run that fails: the partial result is what the CLI leaves on disk.
#[test]
fn a_failed_run_gives_the_same_partial_output() {
    let file = repo("examples/slider_crank.toml");
    let options = RunOptions {
        max_steps: Some(20),
        ..RunOptions::default()
    };
    let failure = Simulation::from_file(&file)
        .unwrap()
        .run(&options)
        .expect_err("20 steps do not reach t_end");
    assert!(failure.partial.series.len() > 1);
    assert_eq!(failure.partial.summary.status, "failed");
    agree(&file, &["--max-steps", "20"], &options);
}
