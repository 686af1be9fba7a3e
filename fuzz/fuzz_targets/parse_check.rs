//! libFuzzer target: any bytes through the model parser and, for a model,
//! `check_model`. A panic, an abort or a timeout is a finding; so is a
//! parse error that does not name the file, or a successful check that
//! reports a NaN or infinite value.
#![no_main]

use libfuzzer_sys::fuzz_target;

const ORIGIN: &str = "fuzz.toml";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match jounce_model::from_str(text, ORIGIN) {
        Err(e) => assert!(e.to_string().starts_with(ORIGIN), "{e}"),
        Ok(model) => match jounce::check::check_model(&model) {
            Ok(report) => {
                for v in report.lines().skip(1).flat_map(|l| l.split("= ").skip(1)) {
                    let w = v.split(|c: char| c.is_whitespace() || c == ',').next();
                    assert!(
                        !matches!(w, Some("NaN" | "inf" | "-inf")),
                        "non-finite value in:\n{report}"
                    );
                }
            }
            Err(e) => assert!(e.to_string().contains(ORIGIN), "{e}"),
        },
    }
});
