//! `jounce study s6` (studies.md S6; issue 12): the two-ball penalty
//! contact study's table, every criterion of S6 marked from its numbers.

use crate::support;

use support::{jounce, scratch};

/// `jounce study s6`: every method of the study meets S6's criteria,
/// marked from the numbers in the printed table.
#[test]
fn study_s6_prints_its_table_and_every_method_holds() {
    let out = scratch("study_s6");
    let (code, stdout, stderr) = jounce(&["study", "s6", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    println!("{stdout}");
    let reference: f64 = stdout
        .split("the reference's ")
        .nth(1)
        .and_then(|r| r.split(" m)").next())
        .unwrap()
        .parse()
        .unwrap();
    for m in ["dopri5", "dop853", "radau5", "rodas4", "bdf", "llm"] {
        let row = stdout
            .lines()
            .find(|l| l.starts_with(&format!("{m} ")))
            .unwrap_or_else(|| panic!("no row for {m}"));
        assert!(row.ends_with("all hold"), "{row}");
        // issue 31: the deepest penetration is the run's own, not the
        // 0.01 s output rows' (3.6 % shallow): within 0.1 % of the
        // reference's (measured -2.0144e-2 m for every method, the rows
        // -1.943e-2 .. -1.949e-2 m)
        let f: Vec<&str> = row.split_whitespace().collect();
        let (deepest, on_rows): (f64, f64) = (f[6].parse().unwrap(), f[7].parse().unwrap());
        assert!(
            (deepest / reference - 1.0).abs() < 1e-3,
            "{m}: {deepest} against the reference's {reference}"
        );
        assert!(deepest < on_rows, "{row}");
    }
    // step size and CPU of the six runs against simulated time
    let dir = out.join("s6");
    assert_eq!(support::svg_curves(&dir.join("step_size.svg")), 6);
    assert_eq!(support::svg_curves(&dir.join("cpu_time.svg")), 6);
}
