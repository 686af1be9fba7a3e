//! Every file in `tests/malformed/` must be rejected with an error whose
//! message contains the file's `# expect:` substring, the file path and
//! `:<line>:` with the line given by its `# line:` header.

use std::path::PathBuf;

fn folder() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/malformed")
}

#[test]
fn every_malformed_file_is_rejected_with_file_line_and_element() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(folder())
        .expect("tests/malformed exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 20, "only {} malformed files", files.len());
    let mut failures = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let mut lines = text.lines();
        let expect = lines
            .next()
            .and_then(|l| l.strip_prefix("# expect: "))
            .unwrap_or_else(|| panic!("{}: first line must be '# expect: ...'", path.display()));
        let line: usize = lines
            .next()
            .and_then(|l| l.strip_prefix("# line: "))
            .and_then(|l| l.trim().parse().ok())
            .unwrap_or_else(|| panic!("{}: second line must be '# line: N'", path.display()));
        let origin = path.display().to_string();
        match jounce_model::load_file(path) {
            Ok(_) => failures.push(format!("{origin}: loaded without error")),
            Err(e) => {
                let msg = e.to_string();
                let file_name = path.file_name().unwrap().to_string_lossy();
                let ok = msg.contains(expect)
                    && msg.contains(file_name.as_ref())
                    && msg.contains(&format!("{origin}:{line}:"))
                    && e.line() == Some(line);
                if !ok {
                    failures.push(format!(
                        "{file_name}: expected '{expect}' at line {line}\n    got: {msg}"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn missing_file_is_an_io_error_naming_the_file() {
    let e = jounce_model::load_file(std::path::Path::new("/nonexistent/model.toml")).unwrap_err();
    assert!(matches!(e, jounce_model::ModelError::Io { .. }));
    assert!(e.to_string().contains("/nonexistent/model.toml"));
    assert_eq!(e.line(), None);
}
