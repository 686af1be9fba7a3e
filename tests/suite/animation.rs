//! `jounce animate` (issue 12, point 6): a run of a planar mechanism as a
//! self-contained HTML file that a real (headless) browser opens and
//! plays without a script error.

use crate::support;

use std::path::Path;
use std::process::Command;

use support::{jounce, scratch, Series};

/// The inline scene of an animation page.
pub(crate) fn scene(html: &str) -> serde_json::Value {
    let start = html
        .find(r#"<script id="scene" type="application/json">"#)
        .unwrap();
    let rest = &html[start..];
    let open = rest.find('>').unwrap() + 1;
    let close = rest.find("</script>").unwrap();
    serde_json::from_str(&rest[open..close].replace("<\\/", "</")).unwrap()
}

/// A headless Chromium (the CI script installs Debian's `chromium`).
pub(crate) fn browser() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

pub(crate) fn animate(model: &str, tag: &str) -> (std::path::PathBuf, String) {
    let dir = scratch(tag);
    let model = support::repo(model);
    let (code, out, err) = jounce(&[
        "run",
        model.to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = jounce(&["animate", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let file = dir.join("animation.html");
    let html = std::fs::read_to_string(&file).unwrap();
    (dir, html)
}

#[test]
fn the_page_is_self_contained_and_holds_the_runs_poses() {
    let (dir, html) = animate("examples/slider_crank.toml", "animate_crank");
    // nothing loaded from outside
    for bad in ["http://", "https://", " src=", "@import"] {
        assert!(!html.contains(bad), "the page refers to {bad}");
    }
    let s = scene(&html);
    let bodies = s["bodies"].as_array().unwrap();
    assert_eq!(bodies.len(), 3, "crank, rod, slider");
    // frames are the rows of timeseries.csv (401 rows: 2 s at 5 ms)
    let ts = Series::read(&dir.join("timeseries.csv"));
    let t = s["t"].as_array().unwrap();
    assert_eq!(t.len(), ts.col("t").len());
    let k = 137;
    let pose = &s["poses"][k][1];
    let rod = bodies.iter().position(|b| b == "rod").unwrap();
    let pose_rod = &s["poses"][k][rod];
    assert_eq!(pose_rod[0].as_f64().unwrap(), ts.col("rod.x")[k]);
    assert_eq!(pose_rod[2].as_f64().unwrap(), ts.col("rod.theta")[k]);
    assert!(pose.is_array());
}

#[test]
fn a_headless_browser_plays_the_page_without_a_script_error() {
    let Some(chrome) = browser() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install a headless browser (.ci/run installs chromium)"
        );
        eprintln!("no chromium here: the browser check runs in CI");
        return;
    };
    for (model, tag) in [
        ("examples/slider_crank.toml", "animate_browser_crank"),
        ("examples/bouncing_ball.toml", "animate_browser_ball"),
    ] {
        let (dir, _) = animate(model, tag);
        let file = dir.join("animation.html");
        let url = format!(
            "file://{}",
            Path::new(&file).canonicalize().unwrap().display()
        );
        let out = Command::new(chrome)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--virtual-time-budget=8000",
                "--dump-dom",
                &url,
            ])
            .output()
            .unwrap();
        let dom = String::from_utf8_lossy(&out.stdout);
        let body = dom
            .find("<body")
            .map(|i| &dom[i..i + dom[i..].find('>').unwrap()])
            .unwrap_or_else(|| {
                panic!(
                    "{model}: no page rendered: {}",
                    String::from_utf8_lossy(&out.stderr)
                )
            });
        println!("{model}: {body}");
        assert!(body.contains(r#"data-status="ok""#), "{model}: {body}");
        let drawn: usize = body
            .split("data-frames-drawn=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .and_then(|n| n.parse().ok())
            .unwrap();
        let attribute = |name: &str| -> usize {
            body.split(&format!("data-{name}=\""))
                .nth(1)
                .and_then(|r| r.split('"').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("{model}: no data-{name} in {body}"))
        };
        // the runs last 2 s and 3 s: in 8 s of virtual time the player
        // reaches the last frame, drawing many on the way
        assert!(drawn > 10, "{model}: {drawn} frames drawn");
        assert_eq!(
            attribute("frame") + 1,
            attribute("frames"),
            "{model}: the player did not reach the last frame"
        );
    }
}
