//! Fuzz harness over the model parser and `jounce check` (issue 9,
//! deliverable 6), on stable Rust under `cargo test`: proptest drives
//! inputs from a fixed seed for a bounded number of cases, in process
//! (thousands of cases in seconds; the mutation campaign runs the command
//! itself). The seed corpus is every `*.toml` under `examples/` and
//! `tests/`. Inputs:
//! - mutants of a corpus file (the operators of `mutation/mod.rs`, 1–3
//!   stacked), including invalid UTF-8 (then through `load_file`);
//! - splices: the head of one corpus file and the tail of another;
//! - raw bytes biased to TOML punctuation.
//!
//! Every input must give, without panicking or hanging:
//! - a parse error that names the file and a line within it, or a model;
//! - for a model, `check_model` either a report without NaN or inf
//!   values, or an error naming the file.
//!
//! `JOUNCE_FUZZ_CASES` (default 10 000) and `JOUNCE_FUZZ_SEED` set the
//! budget and the seed; a failure prints the minimal input proptest
//! shrank it to. Developers with a nightly toolchain can also run the
//! libFuzzer target in `fuzz/` (see `fuzz/README.md`).

use crate::mutation;
use crate::support;

use std::path::PathBuf;
use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

const ORIGIN: &str = "fuzz.toml";

fn corpus() -> &'static [(PathBuf, Vec<u8>)] {
    static C: OnceLock<Vec<(PathBuf, Vec<u8>)>> = OnceLock::new();
    C.get_or_init(|| mutation::seed_corpus(&support::repo(""), 50_000))
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn config() -> Config {
    Config {
        cases: env_or("JOUNCE_FUZZ_CASES", 10_000),
        rng_seed: RngSeed::Fixed(env_or("JOUNCE_FUZZ_SEED", 0x6675_7a7a)),
        failure_persistence: None,
        max_shrink_iters: 2000,
        ..Config::default()
    }
}

/// A mutant of a corpus file, as case 0 of a mutation campaign with a
/// random seed (three in four from an example, 1-3 stacked operators).
fn mutant() -> impl Strategy<Value = Vec<u8>> {
    any::<u64>().prop_map(|seed| mutation::case(corpus(), seed, 0).0)
}

/// The head of one corpus file and the tail of another.
fn splice() -> impl Strategy<Value = Vec<u8>> {
    (
        any::<prop::sample::Index>(),
        any::<prop::sample::Index>(),
        any::<prop::sample::Index>(),
        any::<prop::sample::Index>(),
    )
        .prop_map(|(a, b, ca, cb)| {
            let c = corpus();
            let (x, y) = (&c[a.index(c.len())].1, &c[b.index(c.len())].1);
            let mut out = x[..ca.index(x.len() + 1)].to_vec();
            out.extend_from_slice(&y[cb.index(y.len() + 1)..]);
            out
        })
}

/// Raw bytes, half of them TOML punctuation, digits and key letters.
fn raw() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        any::<u8>(),
        prop::sample::select(b"[]{}=\",.#\n 0123456789e-+_abcdefghijklmnopqrstuvwxyz".to_vec()),
    ];
    prop::collection::vec(byte, 0..600)
}

fn input() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![8 => mutant(), 2 => splice(), 1 => raw()]
}

/// A value printed as NaN or inf after an `= ` in a check report (names
/// come before the `=`; the model's name is on the first line).
fn non_finite_value(report: &str) -> Option<&str> {
    report
        .lines()
        .skip(1)
        .flat_map(|l| l.split("= ").skip(1))
        .filter_map(|v| v.split(|c: char| c.is_whitespace() || c == ',').next())
        .find(|w| matches!(*w, "NaN" | "inf" | "-inf"))
}

/// Parse and check one input; `Err` describes a broken promise.
fn parse_and_check(bytes: &[u8]) -> Result<&'static str, TestCaseError> {
    let (parsed, lines) = match std::str::from_utf8(bytes) {
        Ok(text) => (
            jounce_model::from_str(text, ORIGIN),
            text.lines().count() + 1,
        ),
        Err(_) => {
            // not UTF-8: through the file loader, as `jounce check` reads it
            let dir = support::scratch("fuzz-utf8");
            let path = dir.join(ORIGIN);
            std::fs::write(&path, bytes).unwrap();
            let r = jounce_model::load_file(&path);
            let _ = std::fs::remove_dir_all(&dir);
            let e = r.expect_err("invalid UTF-8 is an error");
            prop_assert!(e.to_string().contains(ORIGIN), "{e}");
            return Ok("not UTF-8");
        }
    };
    let model = match parsed {
        Ok(m) => m,
        Err(e) => {
            let msg = e.to_string();
            prop_assert!(
                msg.starts_with(ORIGIN),
                "error does not name the file: {msg}"
            );
            if let Some(line) = e.line() {
                prop_assert!(line >= 1 && line <= lines, "line {line} of {lines}: {msg}");
            }
            return Ok("parse error");
        }
    };
    match jounce::check::check_model(&model) {
        Ok(report) => {
            prop_assert!(
                non_finite_value(&report).is_none(),
                "check succeeded with a non-finite value:\n{report}"
            );
            Ok("checked")
        }
        Err(e) => {
            let msg = e.to_string();
            prop_assert!(
                msg.contains(ORIGIN),
                "check error does not name the file: {msg}"
            );
            Ok("check error")
        }
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn parser_and_check_never_panic(bytes in input()) {
        parse_and_check(&bytes).map_err(|e| {
            TestCaseError::fail(format!("{e}\ninput:\n{}", String::from_utf8_lossy(&bytes)))
        })?;
    }
}

/// The harness is not vacuous: its inputs reach every outcome, and the
/// unmutated corpus parses (the examples) and checks.
#[test]
fn inputs_reach_parse_and_check() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::new(Config {
        cases: 1,
        ..config()
    });
    let mut counts = std::collections::BTreeMap::new();
    for _ in 0..1000 {
        let b = input().new_tree(&mut runner).unwrap().current();
        *counts.entry(parse_and_check(&b).unwrap()).or_insert(0) += 1;
    }
    println!("{counts:?}");
    for what in ["parse error", "checked", "check error", "not UTF-8"] {
        assert!(counts.get(what).copied().unwrap_or(0) >= 4, "{counts:?}");
    }
    let examples = corpus()
        .iter()
        .filter(|(p, _)| p.starts_with(support::repo("examples")));
    for (p, b) in examples {
        assert_eq!(parse_and_check(b).unwrap(), "checked", "{}", p.display());
    }
}
