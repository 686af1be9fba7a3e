//! studies.md S7 (issue 12): `jounce study s7` prints the LLM's estimated
//! and true local errors for h in [1e-4, 1e-1]; the estimate tracks the
//! truth within a factor 2 for h ≤ 1e-2, both with the local order 3, and
//! the log-log plot is a valid SVG with its two curves.

use crate::support;

use jounce_studies::study_s7::{s7, s7_slope, s7_table, S7_SMALL_H};

#[test]
fn the_llm_error_estimate_tracks_the_true_local_error() {
    let out = support::scratch("s7");
    let study = s7(&out).unwrap();
    println!("{}", s7_table(&study));
    assert_eq!(study.rows.len(), 25);
    assert!((study.rows[0].h - 1e-4).abs() < 1e-16 && (study.rows[24].h - 0.1).abs() < 1e-15);
    for r in study.rows.iter().filter(|r| r.h <= S7_SMALL_H) {
        assert!(
            (0.5..=2.0).contains(&r.ratio()),
            "h = {}: ratio {}",
            r.h,
            r.ratio()
        );
    }
    for f in [
        (|r: &jounce_studies::study_s7::S7Row| r.true_error) as fn(&_) -> f64,
        |r| r.estimate,
    ] {
        let slope = s7_slope(&study.rows, S7_SMALL_H, f);
        assert!((slope - 3.0).abs() < 0.2, "slope {slope}");
    }
    // issue 31: the title says what the chart plots (it named only the
    // problem before)
    let svg = std::fs::read_to_string(&study.plot).unwrap();
    assert!(
        svg.contains("local error (2-norm) of one LLM step"),
        "title"
    );
    let curves = support::svg_curves(&study.plot);
    assert_eq!(curves, 2);
}
