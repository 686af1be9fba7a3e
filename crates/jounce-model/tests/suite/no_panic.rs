//! The parser never panics: truncated, line-deleted and value-mangled
//! variants of a valid file give `Ok` or a located `Err`, and variants that
//! are certainly invalid give `Err`.

use jounce_model::{from_str, ModelError};

const TEXT: &str = include_str!("../data/slider_crank.toml");
const ORIGIN: &str = "mangled.toml";

fn check_located(e: &ModelError, text: &str) {
    let msg = e.to_string();
    assert!(msg.starts_with(ORIGIN), "{msg}");
    let line = e.line().expect("parse errors have a line");
    assert!(
        line >= 1 && line <= text.lines().count() + 1,
        "line {line} out of range: {msg}"
    );
    assert!(msg.contains(&format!("{ORIGIN}:{line}")), "{msg}");
}

#[test]
fn truncations_never_panic() {
    let mut errors = 0;
    for cut in (0..TEXT.len()).filter(|&i| TEXT.is_char_boundary(i)) {
        let t = &TEXT[..cut];
        if let Err(e) = from_str(t, ORIGIN) {
            check_located(&e, t);
            errors += 1;
        }
    }
    assert!(
        errors > TEXT.len() / 2,
        "most truncations are invalid, got {errors}"
    );
}

#[test]
fn deleting_any_line_never_panics() {
    let lines: Vec<&str> = TEXT.lines().collect();
    for i in 0..lines.len() {
        let t: String = lines
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, l)| format!("{l}\n"))
            .collect();
        if let Err(e) = from_str(&t, ORIGIN) {
            check_located(&e, &t);
        }
    }
}

#[test]
fn values_of_impossible_type_are_errors() {
    let lines: Vec<&str> = TEXT.lines().collect();
    let mut count = 0;
    for (i, l) in lines.iter().enumerate() {
        let Some(eq) = l.find(" = ") else { continue };
        if l.starts_with('#') {
            continue;
        }
        // No key of the format takes a boolean or a date.
        for bad in ["true", "1979-05-27", "-1e999"] {
            let mut v = lines.clone();
            let replaced = format!("{}= {bad}", &l[..eq + 1]);
            v[i] = &replaced;
            let t = v.join("\n");
            let e =
                from_str(&t, ORIGIN).expect_err(&format!("accepted line {}: {replaced}", i + 1));
            check_located(&e, &t);
            assert_eq!(e.line(), Some(i + 1), "{e}");
            count += 1;
        }
    }
    assert!(count > 100);
}

#[test]
fn byte_mangling_never_panics() {
    let bytes = TEXT.as_bytes();
    let subs = [b'"', b'[', b']', b'{', b'=', b'\n', b'x', b'-', b'.', b'0'];
    for i in (0..bytes.len()).step_by(3) {
        let mut b = bytes.to_vec();
        b[i] = subs[i % subs.len()];
        let Ok(t) = String::from_utf8(b) else {
            continue;
        };
        if let Err(e) = from_str(&t, ORIGIN) {
            check_located(&e, &t);
        }
    }
}

#[test]
fn deep_and_cyclic_functions_are_errors_not_overflows() {
    let mut f = String::from("1.0");
    for _ in 0..200 {
        f = format!("{{ type = \"shift\", function = {f} }}");
    }
    let text = format!("[functions]\ndeep = {f}\n");
    match from_str(&text, ORIGIN) {
        Err(e) => check_located(&e, &text),
        Ok(_) => panic!("200-deep nesting accepted"),
    }
    let mut chain = String::from("[functions]\n");
    for i in 0..500 {
        chain.push_str(&format!("f{i} = \"f{}\"\n", i + 1));
    }
    chain.push_str("f500 = 1.0\n");
    let e = from_str(&chain, ORIGIN).unwrap_err();
    assert!(e.to_string().contains("nested more than"), "{e}");
    let e = from_str("[functions]\nme = \"me\"\n", ORIGIN).unwrap_err();
    assert!(e.to_string().contains("cycle: me -> me"), "{e}");
}
