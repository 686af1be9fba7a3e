//! Plots: every SVG written by `jounce plot` and `jounce compare` parses
//! as XML and holds one curve (a `<polyline>` of stroke width 2) per
//! column or run.

use crate::support;

use std::path::Path;
use std::process::Command;

use jounce::compare::{compare, CompareOptions, Reference, RunStatus};
use jounce::run::{apply_overrides, run_model, Overrides};
use support::{repo, scratch};

/// Parse `path` as SVG and count its curves.
fn curves(path: &Path) -> usize {
    support::svg_curves(path)
}

/// The texts of an SVG's `<text>` elements.
fn texts(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect()
}

fn double_pendulum_run(tag: &str) -> std::path::PathBuf {
    let mut m = jounce_model::load_file(&repo("examples/double_pendulum.toml")).unwrap();
    apply_overrides(
        &mut m,
        &Overrides {
            t_end: Some(1.0),
            ..Overrides::default()
        },
    )
    .unwrap();
    let dir = scratch(tag);
    run_model(&m, &dir, None).unwrap();
    dir
}

#[test]
fn plot_draws_one_curve_per_column() {
    let dir = double_pendulum_run("plot-run");
    // default: the position coordinates (six for two links)
    let p = jounce::plot::plot_run(&dir, &[], None).unwrap();
    assert_eq!(p.path, dir.join("plot.svg"));
    assert_eq!(p.curves, 6);
    assert_eq!(curves(&p.path), 6);
    let t = texts(&p.path);
    assert!(t.iter().any(|s| s == "link2.theta"), "legend: {t:?}");

    // named columns, through the binary
    let out = dir.join("energy.svg");
    let status = Command::new(env!("CARGO_BIN_EXE_jounce"))
        .args([
            "plot",
            dir.to_str().unwrap(),
            "kinetic_energy",
            "potential_energy",
            "total_energy",
        ])
        .args(["-o", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    assert_eq!(curves(&out), 3);

    // a column that does not exist: an error naming it, not a panic
    let bad = Command::new(env!("CARGO_BIN_EXE_jounce"))
        .args(["plot", dir.to_str().unwrap(), "link3.x"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("no column 'link3.x'"), "{err}");
    // a directory without a run
    let e = jounce::plot::plot_run(&dir.join("nothing"), &[], None).unwrap_err();
    assert!(e.to_string().contains("no timeseries.csv"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compare_writes_one_curve_per_run_in_every_chart() {
    let out = scratch("plot-compare");
    let m = jounce_model::load_file(&repo("examples/double_pendulum.toml")).unwrap();
    let opts = CompareOptions {
        // dopri5 on index3 is refused: no data, no curve
        methods: vec!["dopri5".into(), "radau5".into(), "hht".into()],
        formulations: vec!["augmented".into(), "index3".into()],
        rtol: Some(1e-6),
        atol: Some(1e-6),
        step: None,
        t_end: Some(1.0),
        reference: Reference::Auto,
        out_dir: out.clone(),
    };
    let c = compare(&m, &opts).unwrap();
    let ran = c
        .rows
        .iter()
        .filter(|r| r.status != RunStatus::Refused)
        .count();
    assert_eq!(ran, 5);
    jounce::compare::write_outputs(&c, &out).unwrap();
    for name in jounce::plot::COMPARE_PLOTS {
        let path = out.join(name);
        assert_eq!(curves(&path), ran, "{name}");
    }
    // step size and violations on log axes: ticks are powers of ten
    for name in ["step_size.svg", "position_violation.svg"] {
        let t = texts(&out.join(name));
        assert!(
            t.iter().filter(|s| s.starts_with("1.0e-")).count() >= 2,
            "{name}: no log ticks in {t:?}"
        );
    }
    let legend = texts(&out.join("step_size.svg"));
    assert!(legend.iter().any(|s| s == "hht / index3"), "{legend:?}");
    let _ = std::fs::remove_dir_all(&out);
}
