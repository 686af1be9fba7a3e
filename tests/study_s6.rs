//! `jounce study s6` (studies.md S6; issue 12): the two-ball penalty
//! contact study's table, every criterion of S6 marked from its numbers.

mod support;

use support::{jounce, scratch};

/// `jounce study s6`: every method of the study meets S6's criteria,
/// marked from the numbers in the printed table.
#[test]
fn study_s6_prints_its_table_and_every_method_holds() {
    let out = scratch("study_s6");
    let (code, stdout, stderr) = jounce(&["study", "s6", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    println!("{stdout}");
    for m in ["dopri5", "dop853", "radau5", "rodas4", "bdf", "llm"] {
        let row = stdout
            .lines()
            .find(|l| l.starts_with(&format!("{m} ")))
            .unwrap_or_else(|| panic!("no row for {m}"));
        assert!(row.ends_with("all hold"), "{row}");
    }
    // step size and CPU of the six runs against simulated time
    let dir = out.join("s6");
    assert_eq!(support::svg_curves(&dir.join("step_size.svg")), 6);
    assert_eq!(support::svg_curves(&dir.join("cpu_time.svg")), 6);
}
