//! `jounce study s2` (studies.md S2, termeer tests 1a-1d; issue 12):
//! the modes of the four chains to the seed's 3 digits, implicit advised
//! for 1a and explicit for 1c, and the measured costs of `compare`
//! agreeing with the advice.

use crate::support;

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
    // issue 31: every "explicit cheaper" is decided at equal error (1b
    // and 1d were marked holds at equal tolerance, where dopri5's error is
    // 8x radau5's) and only beyond the margin. Measured: 1b dopri5/radau5
    // = 1.12, 1d 1.06 at equal error (1c 0.47, 1a 2.28).
    for test in ["1a", "1b", "1c", "1d"] {
        let b = block(test);
        let line = b.lines().find(|l| l.contains("cheaper: ")).unwrap();
        let after = |key: &str| -> f64 {
            line.split(key)
                .nth(1)
                .and_then(|r| r.split([';', ' ', '%']).next())
                .unwrap_or_else(|| panic!("no {key} in {line}"))
                .parse()
                .unwrap()
        };
        assert!(line.contains("at equal error"), "{line}");
        let ratio = after("dopri5/radau5 = ");
        let margin = after("margin ") / 100.0;
        let explicit_holds = ratio * (1.0 + margin) <= 1.0;
        let seed_says_explicit = test != "1a";
        let marked = line.ends_with(") holds");
        if seed_says_explicit {
            assert_eq!(marked, explicit_holds, "{line}");
        }
    }
    // the step-size and CPU charts of both runs, per test
    for test in ["1a", "1c"] {
        let dir = out.join("s2").join(format!("s2_test_{test}"));
        assert_eq!(support::svg_curves(&dir.join("step_size.svg")), 2, "{test}");
        assert_eq!(support::svg_curves(&dir.join("cpu_time.svg")), 2, "{test}");
    }
}
