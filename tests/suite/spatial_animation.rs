//! `jounce animate` of a spatial model (issue 33, point 5): the page draws
//! the bodies in 3-D through their points, and a real (headless) browser
//! plays it to the end, turns and zooms the view and resets it.
//!
//! The independent reference for every drawn point is the run's own
//! Tait–Bryan columns: P = r + R_z(yaw) R_y(pitch) R_x(roll) s, with r
//! from `<body>.x, .y, .z` and the angles from `<body>.yaw_zyx`,
//! `.pitch_zyx`, `.roll_zyx` of `timeseries.csv` — not the quaternion the
//! page is given.

use crate::animation::{animate, browser, scene};
use crate::support;

use std::path::Path;
use std::process::Command;

use support::Series;

type V3 = [f64; 3];

fn v3(v: &serde_json::Value) -> V3 {
    std::array::from_fn(|i| v[i].as_f64().unwrap())
}

fn dist(a: V3, b: V3) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// P = r + A(p) s with A(p) of the unit quaternion p = (w, x, y, z), body
/// to world (Nikravesh 1988, eq. 6.19): the scene's way, written here.
fn place_quaternion(pose: &serde_json::Value, s: V3) -> V3 {
    let q: Vec<f64> = (0..7).map(|i| pose[i].as_f64().unwrap()).collect();
    let (w, x, y, z) = (q[3], q[4], q[5], q[6]);
    let a = [
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y - w * z),
            2.0 * (x * z + w * y),
        ],
        [
            2.0 * (x * y + w * z),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z - w * x),
        ],
        [
            2.0 * (x * z - w * y),
            2.0 * (y * z + w * x),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ];
    std::array::from_fn(|i| q[i] + a[i][0] * s[0] + a[i][1] * s[1] + a[i][2] * s[2])
}

/// The independent reference: P = r + R_z(ψ) R_y(θ) R_x(φ) s from row
/// `k` of the run's columns of `body`.
fn place_euler(ts: &Series, body: &str, k: usize, s: V3) -> V3 {
    let c = |n: &str| ts.col(&format!("{body}.{n}"))[k];
    let (sz, cz) = c("yaw_zyx").sin_cos();
    let (sy, cy) = c("pitch_zyx").sin_cos();
    let (sx, cx) = c("roll_zyx").sin_cos();
    // R_x s, then R_y, then R_z
    let a = [s[0], cx * s[1] - sx * s[2], sx * s[1] + cx * s[2]];
    let b = [cy * a[0] + sy * a[2], a[1], -sy * a[0] + cy * a[2]];
    let d = [cz * b[0] - sz * b[1], sz * b[0] + cz * b[1], b[2]];
    [c("x") + d[0], c("y") + d[1], c("z") + d[2]]
}

/// The row of `ts` at each frame time of the scene (the frames are rows,
/// each time once: the output interval is far above 1e-12 s).
fn frame_rows(ts: &Series, s: &serde_json::Value) -> Vec<usize> {
    let t = ts.col("t");
    s["t"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tf| {
            let tf = tf.as_f64().unwrap();
            t.iter()
                // the test's JSON reader may miss the last bit
                .position(|&x| (x - tf).abs() <= 1e-12 * tf.abs().max(1.0))
                .unwrap_or_else(|| panic!("frame t = {tf} is no row of timeseries.csv"))
        })
        .collect()
}

#[test]
fn the_spatial_double_pendulums_scene_draws_its_joints_where_the_run_puts_them() {
    let (dir, html) = animate(
        "examples/spatial_double_pendulum.toml",
        "animate_spatial_pendulum",
    );
    for bad in ["http://", "https://", " src=", "@import"] {
        assert!(!html.contains(bad), "the page refers to {bad}");
    }
    let s = scene(&html);
    let ts = Series::read(&dir.join("timeseries.csv"));
    let names: Vec<&str> = s["bodies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_str().unwrap())
        .collect();
    assert_eq!(names, ["link1", "link2"]);
    // the stick figures: each link through its two joint points, the
    // shoulder on ground at the origin
    let points = |i: usize| -> Vec<V3> {
        s["body_points"][i]
            .as_array()
            .unwrap()
            .iter()
            .map(v3)
            .collect()
    };
    assert_eq!(points(0), [[-0.5, 0.0, 0.0], [0.5, 0.0, 0.0]]);
    assert_eq!(points(1), [[-0.5, 0.0, 0.0], [0.5, 0.0, 0.0]]);
    let ground: Vec<V3> = s["ground_points"]
        .as_array()
        .unwrap()
        .iter()
        .map(v3)
        .collect();
    assert_eq!(ground, [[0.0, 0.0, 0.0]]);
    // the view's up is against gravity (−y here)
    assert_eq!(v3(&s["up"]), [0.0, 1.0, 0.0]);
    // 5 s at 10 ms: every row is a frame
    let rows = frame_rows(&ts, &s);
    assert_eq!(rows.len(), ts.col("t").len());
    let b = v3(&s["bounds"]);
    let hi: V3 = std::array::from_fn(|i| s["bounds"][i + 3].as_f64().unwrap());
    let (mut worst, mut pivot, mut elbow, mut reach) = (0.0_f64, 0.0_f64, 0.0_f64, 0.0_f64);
    for (f, &k) in rows.iter().enumerate() {
        let mut world = Vec::new();
        for (i, name) in names.iter().enumerate() {
            let pose = &s["poses"][f][i];
            for p in points(i) {
                let drawn = place_quaternion(pose, p);
                let reference = place_euler(&ts, name, k, p);
                worst = worst.max(dist(drawn, reference));
                for c in 0..3 {
                    assert!(
                        drawn[c] >= b[c] - 1e-12 && drawn[c] <= hi[c] + 1e-12,
                        "frame {f}: point outside the bounds"
                    );
                }
                world.push(drawn);
            }
        }
        // link1's O on the pivot; link1's A on link2's A (the elbow)
        pivot = pivot.max(dist(world[0], [0.0; 3]));
        elbow = elbow.max(dist(world[1], world[2]));
        reach = reach.max(dist(world[3], [2.0, 0.0, 0.0]));
    }
    println!(
        "spatial double pendulum, {} frames: drawn points vs Tait–Bryan columns {worst:.2e} m; \
         pivot moves {pivot:.2e} m; elbow points apart {elbow:.2e} m; tip travels {reach:.3} m",
        rows.len()
    );
    assert!(worst <= 1e-9, "drawn points off the run's by {worst:e} m");
    assert!(pivot <= 1e-7, "the pivot moves by {pivot:e} m");
    assert!(elbow <= 1e-7, "the elbow comes apart by {elbow:e} m");
    // not a still picture: the tip leaves its start by more than a link
    assert!(reach > 1.0, "the tip travels only {reach} m");
}

#[test]
fn the_1000_body_chain_makes_a_page_of_reasonable_size() {
    let (_, html) = animate("examples/spatial_chain_1000.toml", "animate_spatial_chain");
    let s = scene(&html);
    let bodies = s["bodies"].as_array().unwrap().len();
    let frames = s["t"].as_array().unwrap().len();
    println!(
        "1000-body chain: {bodies} bodies, {frames} frames, page {} bytes",
        html.len()
    );
    assert_eq!(bodies, 1000);
    assert!(frames > 1);
    assert!(html.len() < 30_000_000, "page of {} bytes", html.len());
    // every rod through its two hinge points (the last: its one)
    for i in [0, 500, 998] {
        assert_eq!(s["body_points"][i].as_array().unwrap().len(), 2, "rod{i}");
    }
    assert_eq!(s["body_points"][999].as_array().unwrap().len(), 1);
}

/// A script put after the page's own (in a copy of the page): a drag and
/// a wheel on the canvas and a click on `reset`, recording the camera
/// before and after each; then the world positions the page draws for the
/// centre, the axis triad's ends and the points of the first bodies in
/// three frames, as
/// `frame,body,point,x,y,z;...` (numbers in JavaScript's shortest
/// round-trip form).
const PROBE: &str = r#"<script>
(function () {
  const d = document.body.dataset, c = document.getElementById("view");
  const r = c.getBoundingClientRect();
  const at = (x, y) => ({ clientX: r.left + x, clientY: r.top + y, bubbles: true, pointerId: 1 });
  d.camera0 = d.camera;
  c.dispatchEvent(new PointerEvent("pointerdown", at(450, 300)));
  window.dispatchEvent(new PointerEvent("pointermove", at(520, 340)));
  window.dispatchEvent(new PointerEvent("pointerup", at(520, 340)));
  d.cameraDrag = d.camera;
  c.dispatchEvent(new WheelEvent("wheel", { deltaY: -240, clientX: r.left + 450, clientY: r.top + 300, bubbles: true, cancelable: true }));
  d.cameraWheel = d.camera;
  document.getElementById("reset").click();
  d.cameraReset = d.camera;
  const S = JSON.parse(document.getElementById("scene").textContent);
  const n = window.jounceAnimation.frames, out = [];
  for (const k of [0, Math.floor(n / 2), n - 1]) {
    for (let i = 0; i < Math.min(S.bodies.length, 4); i++) {
      const l = S.body_axes[i];
      const pts = [[0, 0, 0], [l, 0, 0], [0, l, 0], [0, 0, l]].concat(S.body_points[i]);
      pts.forEach(function (s, j) {
        out.push([k, i, j].concat(window.jounceAnimation.place(k, i, s)).join(","));
      });
    }
  }
  d.probe = out.join(";");
})();
</script>
"#;

/// An attribute of the page's `<body>` element.
fn attribute<'a>(body: &'a str, name: &str) -> &'a str {
    body.split(&format!("{name}=\""))
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap_or_else(|| panic!("no {name} in {body}"))
}

#[test]
fn a_headless_browser_plays_every_spatial_example_and_turns_the_view() {
    let Some(chrome) = browser() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install a headless browser (.ci/run installs chromium)"
        );
        eprintln!("no chromium here: the browser check runs in CI");
        return;
    };
    for (model, tag) in [
        ("examples/spatial_double_pendulum.toml", "anim3d_pendulum"),
        ("examples/heavy_top.toml", "anim3d_top"),
        ("examples/tumbling_body.toml", "anim3d_tumbling"),
        ("examples/spatial_slider_crank.toml", "anim3d_crank"),
        ("examples/spatial_bouncing_ball.toml", "anim3d_ball"),
        ("examples/spatial_chain_1000.toml", "anim3d_chain"),
        ("examples/six_axis_arm.urdf", "anim3d_arm"),
    ] {
        let (dir, html) = animate(model, tag);
        let s = scene(&html);
        let ts = Series::read(&dir.join("timeseries.csv"));
        let file = dir.join("probe.html");
        let close = html.rfind("</body>").unwrap();
        std::fs::write(
            &file,
            format!("{}{PROBE}{}", &html[..close], &html[close..]),
        )
        .unwrap();
        let url = format!(
            "file://{}",
            Path::new(&file).canonicalize().unwrap().display()
        );
        // virtual time for the whole run at speed 1, and 3 s more
        let t_last = s["t"].as_array().unwrap().last().unwrap().as_f64().unwrap();
        let budget = format!("--virtual-time-budget={}", (t_last * 1000.0) as u64 + 3000);
        let out = Command::new(chrome)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                &budget,
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
        let probe = attribute(body, "data-probe");
        let body_short = body.replace(probe, "…");
        println!("{model}: {body_short}");
        assert_eq!(
            attribute(body, "data-status"),
            "ok",
            "{model}: {body_short}"
        );
        let drawn: usize = attribute(body, "data-frames-drawn").parse().unwrap();
        let frames: usize = attribute(body, "data-frames").parse().unwrap();
        let last: usize = attribute(body, "data-frame").parse().unwrap();
        assert!(drawn > 1, "{model}: {drawn} frames drawn");
        assert_eq!(
            last + 1,
            frames,
            "{model}: played to frame {last} of {frames}"
        );
        // the drag turns the view, the wheel zooms it, reset restores it
        let cam = |n: &str| -> Vec<f64> {
            attribute(body, n)
                .split(',')
                .map(|x| x.parse().unwrap())
                .collect()
        };
        let (c0, drag, wheel, reset) = (
            cam("data-camera0"),
            cam("data-camera-drag"),
            cam("data-camera-wheel"),
            cam("data-camera-reset"),
        );
        assert!(
            c0[0] != drag[0] && c0[1] != drag[1],
            "{model}: the drag does not turn the view"
        );
        assert!(
            wheel[2] > drag[2] && wheel[..2] == drag[..2],
            "{model}: the wheel does not zoom in"
        );
        assert_eq!(reset, c0, "{model}: reset does not restore the view");
        // the points the page draws are where the run puts them
        let rows = frame_rows(&ts, &s);
        let names: Vec<&str> = s["bodies"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b.as_str().unwrap())
            .collect();
        let mut worst = 0.0_f64;
        let mut count = 0;
        for item in probe.split(';') {
            let v: Vec<f64> = item.split(',').map(|x| x.parse().unwrap()).collect();
            let (f, i, j) = (v[0] as usize, v[1] as usize, v[2] as usize);
            // the centre, the ends of the body's axis triad, its points
            let l = s["body_axes"][i].as_f64().unwrap();
            let local = match j {
                0 => [0.0; 3],
                1..=3 => std::array::from_fn(|c| if c + 1 == j { l } else { 0.0 }),
                _ => v3(&s["body_points"][i][j - 4]),
            };
            let reference = place_euler(&ts, names[i], rows[f], local);
            worst = worst.max(dist([v[3], v[4], v[5]], reference));
            count += 1;
        }
        println!("{model}: {count} drawn points vs Tait–Bryan columns: {worst:.2e} m");
        assert!(count >= 12, "{model}: {count} points probed");
        assert!(worst <= 1e-9, "{model}: drawn points off by {worst:e} m");
    }
}

#[test]
fn contact_spheres_planes_and_joint_lines_are_drawn_where_the_model_puts_them() {
    // the bouncing ball: its sphere (r = 0.25 m at its centre) above the
    // ground plane z = 0 in every frame, touching it at the impacts
    let (_, html) = animate(
        "examples/spatial_bouncing_ball.toml",
        "animate_spatial_ball",
    );
    let s = scene(&html);
    assert_eq!(
        s["body_spheres"][0][0][0],
        serde_json::json!([0.0, 0.0, 0.0])
    );
    assert_eq!(s["body_spheres"][0][0][1].as_f64().unwrap(), 0.25);
    let plane = &s["planes"][0];
    assert!(plane["body"].is_null(), "the plane is on ground");
    assert_eq!(v3(&plane["point"]), [0.0; 3]);
    assert_eq!(v3(&plane["normal"]), [0.0, 0.0, 1.0]);
    let lowest = s["poses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f[0][2].as_f64().unwrap() - 0.25)
        .fold(f64::INFINITY, f64::min);
    println!("bouncing ball: lowest point of the drawn sphere {lowest:.2e} m above the plane");
    assert!(lowest > -1e-6 && lowest < 1e-2, "lowest {lowest}");
    // the box holds the sphere, not only its centre
    assert!(s["bounds"][5].as_f64().unwrap() >= 2.25 - 1e-12);

    // the slider-crank: the slider's point on the prismatic guide's line
    // (ground, through (0, 0.05, 0.02) along x) in every frame
    let (_, html) = animate(
        "examples/spatial_slider_crank.toml",
        "animate_spatial_crank",
    );
    let s = scene(&html);
    let guide = &s["guides"][0];
    assert!(guide["body"].is_null());
    assert_eq!(v3(&guide["point"]), [0.0, 0.05, 0.02]);
    assert_eq!(v3(&guide["direction"]), [1.0, 0.0, 0.0]);
    let slider = s["bodies"]
        .as_array()
        .unwrap()
        .iter()
        .position(|b| b == "slider")
        .unwrap();
    let mut off = 0.0_f64;
    let mut stroke = (f64::INFINITY, f64::NEG_INFINITY);
    for f in s["poses"].as_array().unwrap() {
        let p = place_quaternion(&f[slider], [0.0; 3]);
        off = off.max(dist([0.0, p[1], p[2]], [0.0, 0.05, 0.02]));
        stroke = (stroke.0.min(p[0]), stroke.1.max(p[0]));
    }
    println!(
        "slider-crank: slider off its guide by {off:.2e} m, stroke {:.4} m",
        stroke.1 - stroke.0
    );
    assert!(off < 1e-8, "the slider leaves its guide by {off} m");
    // closed form: the pin on the circle of radius r = 0.1 m about x, the
    // guide at distance d = √(0.05² + 0.02²) m from that axis, the rod
    // L = 0.3 m: x_slider = √(L² − |pin − guide|²) between
    // √(L² − (r + d)²) and √(L² − (r − d)²) over the crank's full turn
    // (frames 3.6° apart: within 1e-4 m of the extremes)
    let (l, r, d) = (0.3_f64, 0.1_f64, 0.05_f64.hypot(0.02));
    let (lo, hi) = (
        (l * l - (r + d).powi(2)).sqrt(),
        (l * l - (r - d).powi(2)).sqrt(),
    );
    assert!(
        (stroke.0 - lo).abs() < 1e-4 && (stroke.1 - hi).abs() < 1e-4,
        "stroke {stroke:?}, closed form ({lo}, {hi})"
    );
}
