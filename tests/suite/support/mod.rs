//! Shared helpers of the root tests: run an example and read its output.

#![allow(dead_code)]

pub mod chain;
pub mod pc_chain;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use jounce::run::{apply_overrides, run_model, Overrides};
use jounce_io::RunSummary;

/// Absolute path of a file in the repository.
pub fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// A fresh scratch directory, unique per call: tests run in parallel
/// threads of one process, so the process id alone does not separate them.
pub fn scratch(name: &str) -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let k = NEXT.fetch_add(1, Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("jounce-test-{}-{k}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Time series read back from `timeseries.csv`: column name → values.
pub struct Series {
    pub columns: HashMap<String, Vec<f64>>,
}

impl Series {
    pub fn read(path: &Path) -> Self {
        let text = std::fs::read_to_string(path).unwrap();
        let mut lines = text.lines();
        let header: Vec<String> = lines
            .next()
            .unwrap()
            .split(',')
            .map(|s| s.trim_matches('"').to_string())
            .collect();
        let mut columns: HashMap<String, Vec<f64>> =
            header.iter().map(|h| (h.clone(), Vec::new())).collect();
        for line in lines {
            for (h, v) in header.iter().zip(line.split(',')) {
                columns.get_mut(h).unwrap().push(v.parse().unwrap());
            }
        }
        Self { columns }
    }

    pub fn col(&self, name: &str) -> &[f64] {
        self.columns
            .get(name)
            .unwrap_or_else(|| panic!("no column '{name}'"))
    }
}

/// Run the example at `rel` with `overrides`; returns the summary and the series.
pub fn run_example(rel: &str, overrides: Overrides, tag: &str) -> (RunSummary, Series) {
    let mut model = jounce_model::load_file(&repo(rel)).unwrap();
    apply_overrides(&mut model, &overrides).unwrap();
    let out = scratch(tag);
    let summary = run_model(&model, &out, None).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let series = Series::read(&out.join("timeseries.csv"));
    let _ = std::fs::remove_dir_all(&out);
    (summary, series)
}

/// Run the `jounce` binary with `args`: (exit code, stdout, stderr).
pub fn jounce(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_jounce"))
        .args(args)
        .output()
        .expect("jounce runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Parse `path` as SVG and count its curves (one `<polyline>` of stroke
/// width 2 each, as `jounce::plot` draws them); panics naming the file
/// when it is not valid XML with an `<svg>` root.
pub fn svg_curves(path: &Path) -> usize {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc = roxmltree::Document::parse(&text)
        .unwrap_or_else(|e| panic!("{} is not valid XML: {e}", path.display()));
    assert_eq!(
        doc.root_element().tag_name().name(),
        "svg",
        "{}",
        path.display()
    );
    doc.descendants()
        .filter(|n| n.has_tag_name("polyline") && n.attribute("stroke-width") == Some("2"))
        .count()
}

/// Whether `python3` can import Pinocchio (PyPI `pin`, installed by
/// `.ci/run`), for the tests that compare with it. Outside CI a missing
/// Pinocchio skips the comparison (`false`, the reason printed); in CI
/// (`CI` set) it fails the test, so that no comparison is skipped silently.
pub fn pinocchio_available(what: &str) -> bool {
    let reason = match Command::new("python3")
        .args(["-c", "import pinocchio"])
        .output()
    {
        Ok(o) if o.status.success() => return true,
        Ok(o) => format!(
            "python3 cannot import pinocchio ({})",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => format!("no python3 ({e})"),
    };
    assert!(
        std::env::var_os("CI").is_none(),
        "{what}: {reason}; CI installs it (`python3 -m pip install pin==4.1.0`)"
    );
    eprintln!("{what} skipped: {reason}");
    false
}
