//! `jounce study s2` (studies.md S2, termeer tests 1a-1d; issue 12):
//! the modes of the four chains to the seed's 3 digits, implicit advised
//! for 1a and explicit for 1c, and the measured costs of `compare`
//! agreeing with the advice.

mod support;

use support::{jounce, scratch};

#[test]
fn study_s2_prints_the_modes_and_its_costs_agree_with_the_recommendation() {
    let out = scratch("study_s2");
    let (code, stdout, stderr) = jounce(&["study", "s2", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    println!("{stdout}");
    let block = |test: &str| {
        let start = stdout.find(&format!("test {test} ")).unwrap();
        let rest = &stdout[start..];
        let end = rest[5..].find("\ntest ").map_or(rest.len(), |e| e + 5);
        rest[..end].to_string()
    };
    for test in ["1a", "1b", "1c", "1d"] {
        let b = block(test);
        // both modes of every test match the seed's three digits
        let rows: Vec<&str> = b
            .lines()
            .filter(|l| l.trim_start().starts_with(['1', '2']))
            .collect();
        assert_eq!(rows.len(), 2, "{b}");
        for r in rows {
            assert!(r.trim_end().ends_with("yes"), "test {test}: {r}");
        }
    }
    let a = block("1a");
    assert!(a.contains("recommended: implicit"), "{a}");
    assert!(
        a.contains("cheaper: implicit") && a.contains("agrees with the measured cost"),
        "{a}"
    );
    let c = block("1c");
    assert!(c.contains("recommended: explicit"), "{c}");
    assert!(
        c.contains("cheaper: explicit") && c.contains("agrees with the measured cost"),
        "{c}"
    );
    // the step-size and CPU charts of both runs, per test
    for test in ["1a", "1c"] {
        let dir = out.join("s2").join(format!("s2_test_{test}"));
        assert_eq!(support::svg_curves(&dir.join("step_size.svg")), 2, "{test}");
        assert_eq!(support::svg_curves(&dir.join("cpu_time.svg")), 2, "{test}");
    }
}
