//! `jounce animate`: a planar mechanism's run as a self-contained HTML
//! file a browser plays (no network, no external script: the data and the
//! player are inline). A spatial model's run plays in 3-D
//! ([`crate::animate_spatial`]).
//!
//! **Drawing.** Each body is a stick figure in its own frame: lines from
//! its centre of mass to every point the model attaches to it (joints,
//! springs, beams, contacts, named points), a dot at the centre, a circle
//! for a contact circle. Ground points are fixed dots, a contact line on
//! ground a long segment through its point, springs and beams lines
//! between their end points, a translational joint its guide through the
//! ground point. A frame of the run is P = r + A(θ) s for every local
//! point s, from the columns `<body>.x`, `.y`, `.theta` of
//! `timeseries.csv`, thinned to at most [`MAX_FRAMES`] frames.
//!
//! **Player.** Play/pause, a time slider, real-time playback (or faster
//! or slower by a factor), the time shown. The page records in
//! `document.body.dataset` how many frames it drew and whether a script
//! error or a console error happened (`status` = `ok` or the error), so a
//! headless browser can check that it plays.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use jounce_model::{Attachment, BodyRef, ContactGeometry, ForceKind, JointKind, Model};
use serde::Serialize;

use crate::error::RunError;
use crate::series::Series;

/// Most frames written into the page.
pub const MAX_FRAMES: usize = 2000;

/// A line between two points, each on a body (index) or on ground (None).
#[derive(Clone, Debug, Serialize)]
struct Link {
    a: (Option<usize>, [f64; 2]),
    b: (Option<usize>, [f64; 2]),
    kind: &'static str,
}

/// The geometry and the frames the page draws.
#[derive(Clone, Debug, Serialize)]
pub struct Scene {
    /// Model name.
    pub title: String,
    /// Body names.
    pub bodies: Vec<String>,
    /// Local points of each body (its stick figure).
    pub body_points: Vec<Vec<[f64; 2]>>,
    /// Circles of each body: (local centre, radius).
    pub body_circles: Vec<Vec<([f64; 2], f64)>>,
    /// Fixed ground points.
    ground_points: Vec<[f64; 2]>,
    /// Ground lines: (point, direction), drawn long.
    ground_lines: Vec<([f64; 2], [f64; 2])>,
    /// Force elements drawn between two points.
    links: Vec<Link>,
    /// Frame times.
    pub t: Vec<f64>,
    /// Per frame, per body: (x, y, θ).
    pub poses: Vec<Vec<[f64; 3]>>,
    /// Bounding box of everything over the run: [xmin, ymin, xmax, ymax].
    pub bounds: [f64; 4],
}

fn body_of(r: BodyRef) -> Option<usize> {
    match r {
        BodyRef::Ground => None,
        BodyRef::Body(i) => Some(i),
    }
}

/// What a model draws, in body frames: each body's points and circles,
/// the ground's points and lines, the links between bodies.
struct Geometry {
    body_points: Vec<Vec<[f64; 2]>>,
    body_circles: Vec<Vec<([f64; 2], f64)>>,
    ground_points: Vec<[f64; 2]>,
    ground_lines: Vec<([f64; 2], [f64; 2])>,
    links: Vec<Link>,
}

/// The points, circles, lines and links the joints and forces of `model`
/// attach.
fn geometry(model: &Model) -> Geometry {
    let nb = model.bodies.len();
    let mut body_points: Vec<Vec<[f64; 2]>> = model
        .bodies
        .iter()
        .map(|b| b.points.iter().map(|(_, p)| *p).collect())
        .collect();
    let mut body_circles: Vec<Vec<([f64; 2], f64)>> = vec![Vec::new(); nb];
    let mut ground_points = Vec::new();
    let mut ground_lines = Vec::new();
    let mut links = Vec::new();
    let mut attach = |at: &Attachment| match body_of(at.body) {
        Some(i) if i < nb => body_points[i].push(at.point),
        Some(_) => {}
        None => ground_points.push(at.point),
    };
    for j in &model.joints {
        match &j.kind {
            JointKind::Revolute { a, b } | JointKind::Distance { a, b, .. } => {
                attach(a);
                attach(b);
                if let JointKind::Distance { .. } = j.kind {
                    links.push(Link {
                        a: (body_of(a.body), a.point),
                        b: (body_of(b.body), b.point),
                        kind: "link",
                    });
                }
            }
            JointKind::Translational { a, b, axis } => {
                attach(a);
                attach(b);
                if a.body == BodyRef::Ground {
                    ground_lines.push((a.point, *axis));
                }
            }
            JointKind::Rigid { .. } => {}
        }
    }
    for f in &model.forces {
        let pair = match &f.kind {
            ForceKind::SpringDamper { a, b, .. } => Some((a, b, "spring")),
            ForceKind::Beam(beam) => Some((&beam.a, &beam.b, "beam")),
            ForceKind::Contact { a, b, geometry, .. } => {
                attach(a);
                attach(b);
                let circle = |at: &Attachment, r: f64, circles: &mut Vec<Vec<([f64; 2], f64)>>| {
                    if let Some(i) = body_of(at.body).filter(|&i| i < nb) {
                        circles[i].push((at.point, r));
                    }
                };
                match geometry {
                    ContactGeometry::CircleLine { radius, normal } => {
                        circle(b, *radius, &mut body_circles);
                        if a.body == BodyRef::Ground {
                            ground_lines.push((a.point, [-normal[1], normal[0]]));
                        }
                    }
                    ContactGeometry::CircleCircle { radius_a, radius_b } => {
                        circle(a, *radius_a, &mut body_circles);
                        circle(b, *radius_b, &mut body_circles);
                    }
                    ContactGeometry::PointLine { normal } => {
                        if a.body == BodyRef::Ground {
                            ground_lines.push((a.point, [-normal[1], normal[0]]));
                        }
                    }
                }
                None
            }
            ForceKind::PointForce { at, .. } => {
                attach(at);
                None
            }
            ForceKind::Torque { .. } | ForceKind::RotationalSpring { .. } => None,
        };
        if let Some((a, b, kind)) = pair {
            attach(a);
            attach(b);
            links.push(Link {
                a: (body_of(a.body), a.point),
                b: (body_of(b.body), b.point),
                kind,
            });
        }
    }
    Geometry {
        body_points,
        body_circles,
        ground_points,
        ground_lines,
        links,
    }
}

/// The rows of `series` a page plays: every `stride`-th row and the last,
/// at most `max_frames` (stride = ⌈rows / max_frames⌉), without the rows
/// where a column of `cols` is not finite.
pub(crate) fn frame_rows<'s>(
    series: &'s Series,
    cols: &[usize],
    max_frames: usize,
) -> Vec<&'s Vec<f64>> {
    let stride = series.rows.len().div_ceil(max_frames.max(1)).max(1);
    series
        .rows
        .iter()
        .step_by(stride)
        .chain(
            series
                .rows
                .last()
                .filter(|_| !(series.rows.len() - 1).is_multiple_of(stride)),
        )
        .filter(|r| {
            cols.iter()
                .all(|&c| r.get(c).is_some_and(|v| v.is_finite()))
        })
        .collect()
}

/// `value` as JSON to put inline in a `<script>` element (no `</` may
/// close it early).
pub(crate) fn inline_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value)
        .unwrap_or_else(|_| "{}".into())
        .replace("</", "<\\/")
}

/// `text` with `&`, `<` and `>` escaped for HTML.
pub(crate) fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The scene of `model` and its run's `timeseries.csv`.
///
/// # Errors
/// A body whose pose columns the file lacks, or a file with no rows.
pub fn scene(model: &Model, series: &Series) -> Result<Scene, RunError> {
    let nb = model.bodies.len();
    let Geometry {
        body_points,
        body_circles,
        ground_points,
        ground_lines,
        links,
    } = geometry(model);
    // pose columns
    let mut cols = Vec::with_capacity(nb);
    for b in &model.bodies {
        let idx = ["x", "y", "theta"].map(|c| series.column_index(&format!("{}.{c}", b.name)));
        match idx {
            [Some(x), Some(y), Some(th)] => cols.push([x, y, th]),
            _ => {
                return Err(RunError::Setup(format!(
                    "{}: no pose columns of body '{}' ({0}.x, .y, .theta): is it the output of this model?",
                    series.path.display(),
                    b.name
                )))
            }
        }
    }
    if series.rows.is_empty() {
        return Err(RunError::Setup(format!(
            "{}: no rows to animate",
            series.path.display()
        )));
    }
    let mut t = Vec::new();
    let mut poses = Vec::new();
    let ti = series.column_index("t").unwrap_or(0);
    let flat: Vec<usize> = cols.iter().flatten().copied().collect();
    let rows = frame_rows(series, &flat, MAX_FRAMES);
    let mut bounds = [
        f64::INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
    ];
    let mut grow = |p: [f64; 2]| {
        bounds[0] = bounds[0].min(p[0]);
        bounds[1] = bounds[1].min(p[1]);
        bounds[2] = bounds[2].max(p[0]);
        bounds[3] = bounds[3].max(p[1]);
    };
    for p in &ground_points {
        grow(*p);
    }
    for r in rows {
        t.push(r[ti]);
        let frame: Vec<[f64; 3]> = cols.iter().map(|c| [r[c[0]], r[c[1]], r[c[2]]]).collect();
        for (i, pose) in frame.iter().enumerate() {
            let (s, c) = pose[2].sin_cos();
            grow([pose[0], pose[1]]);
            for p in &body_points[i] {
                grow([pose[0] + c * p[0] - s * p[1], pose[1] + s * p[0] + c * p[1]]);
            }
            for (p, rad) in &body_circles[i] {
                let cx = pose[0] + c * p[0] - s * p[1];
                let cy = pose[1] + s * p[0] + c * p[1];
                grow([cx - rad, cy - rad]);
                grow([cx + rad, cy + rad]);
            }
        }
        poses.push(frame);
    }
    if !bounds.iter().all(|b| b.is_finite()) {
        bounds = [-1.0, -1.0, 1.0, 1.0];
    }
    Ok(Scene {
        title: model.name.clone(),
        bodies: model.bodies.iter().map(|b| b.name.clone()).collect(),
        body_points,
        body_circles,
        ground_points,
        ground_lines,
        links,
        t,
        poses,
        bounds,
    })
}

/// The page: the scene as inline JSON and the player.
pub fn html(scene: &Scene) -> String {
    let data = inline_json(scene);
    let title = escape_html(&scene.title);
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title} — jounce</title>
<style>
body {{ font-family: sans-serif; margin: 12px; }}
#controls {{ display: flex; gap: 8px; align-items: center; margin: 6px 0; }}
#slider {{ flex: 1; }}
canvas {{ border: 1px solid #ccc; background: #fff; }}
</style>
</head>
<body data-status="loading" data-frames-drawn="0">
<h3>{title}</h3>
<canvas id="view" width="900" height="600"></canvas>
<div id="controls">
<button id="play">pause</button>
<input id="slider" type="range" min="0" value="0">
<label>speed <select id="speed"><option>0.1</option><option>0.25</option><option>0.5</option><option selected>1</option><option>2</option><option>5</option></select></label>
<span id="time"></span>
</div>
<script id="scene" type="application/json">{data}</script>
<script>
"use strict";
window.addEventListener("error", function (e) {{
  document.body.dataset.status = "error: " + e.message;
}});
// a console error is recorded too (the headless check reads the status)
const consoleError = console.error.bind(console);
console.error = function (...args) {{
  document.body.dataset.status = "error: " + args.join(" ");
  consoleError(...args);
}};
(function () {{
  const S = JSON.parse(document.getElementById("scene").textContent);
  const canvas = document.getElementById("view");
  const ctx = canvas.getContext("2d");
  const slider = document.getElementById("slider");
  const play = document.getElementById("play");
  const speed = document.getElementById("speed");
  const label = document.getElementById("time");
  const n = S.t.length;
  slider.max = String(n - 1);
  const b = S.bounds;
  const pad = 0.08 * Math.max(b[2] - b[0], b[3] - b[1], 1e-3);
  const w = b[2] - b[0] + 2 * pad, h = b[3] - b[1] + 2 * pad;
  const scale = Math.min(canvas.width / w, canvas.height / h);
  const X = (x) => (x - b[0] + pad) * scale + (canvas.width - w * scale) / 2;
  const Y = (y) => canvas.height - ((y - b[1] + pad) * scale + (canvas.height - h * scale) / 2);
  const colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"];
  function place(frame, body, p) {{
    if (body === null) return p;
    const q = frame[body], c = Math.cos(q[2]), s = Math.sin(q[2]);
    return [q[0] + c * p[0] - s * p[1], q[1] + s * p[0] + c * p[1]];
  }}
  function line(p, q, color, width) {{
    ctx.strokeStyle = color; ctx.lineWidth = width;
    ctx.beginPath(); ctx.moveTo(X(p[0]), Y(p[1])); ctx.lineTo(X(q[0]), Y(q[1])); ctx.stroke();
  }}
  let k = 0, drawn = 0;
  function draw() {{
    const f = S.poses[k];
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    const far = 10 * Math.max(w, h);
    for (const [p, d] of S.ground_lines) {{
      line([p[0] - far * d[0], p[1] - far * d[1]], [p[0] + far * d[0], p[1] + far * d[1]], "#999", 1);
    }}
    for (const L of S.links) {{
      const p = place(f, L.a[0], L.a[1]), q = place(f, L.b[0], L.b[1]);
      line(p, q, L.kind === "spring" ? "#2ca02c" : "#555", L.kind === "spring" ? 1 : 3);
    }}
    S.bodies.forEach(function (_, i) {{
      const color = colors[i % colors.length];
      const c = place(f, i, [0, 0]);
      for (const p of S.body_points[i]) line(c, place(f, i, p), color, 4);
      for (const [p, r] of S.body_circles[i]) {{
        const q = place(f, i, p);
        ctx.strokeStyle = color; ctx.lineWidth = 2;
        ctx.beginPath(); ctx.arc(X(q[0]), Y(q[1]), r * scale, 0, 2 * Math.PI); ctx.stroke();
      }}
      ctx.fillStyle = color;
      ctx.beginPath(); ctx.arc(X(c[0]), Y(c[1]), 4, 0, 2 * Math.PI); ctx.fill();
    }});
    ctx.fillStyle = "#000";
    for (const p of S.ground_points) {{ ctx.fillRect(X(p[0]) - 4, Y(p[1]) - 4, 8, 8); }}
    slider.value = String(k);
    label.textContent = "t = " + S.t[k].toFixed(4) + " s";
    drawn += 1;
    document.body.dataset.framesDrawn = String(drawn);
    document.body.dataset.frame = String(k);
    document.body.dataset.frames = String(n);
    if (document.body.dataset.status === "loading") document.body.dataset.status = "ok";
  }}
  // playback: each tick on the next animation frame, or after 40 ms if
  // none comes first (a headless browser's virtual time runs timers but
  // hardly any animation frames); ticks stop while paused
  let playing = true, t0 = null, start = 0, frameId = 0, timerId = 0;
  function schedule() {{
    window.cancelAnimationFrame(frameId);
    window.clearTimeout(timerId);
    frameId = window.requestAnimationFrame(tick);
    timerId = window.setTimeout(tick, 40);
  }}
  function tick() {{
    window.cancelAnimationFrame(frameId);
    window.clearTimeout(timerId);
    if (!playing) return;
    const now = performance.now();
    if (t0 === null) {{ t0 = now; start = S.t[k]; }}
    const target = start + (now - t0) / 1000 * Number(speed.value);
    while (k < n - 1 && S.t[k + 1] <= target) k += 1;
    if (k >= n - 1) {{ playing = false; play.textContent = "play"; }}
    draw();
    if (playing) schedule();
  }}
  play.addEventListener("click", function () {{
    playing = !playing;
    if (playing && k >= n - 1) k = 0;
    t0 = null;
    play.textContent = playing ? "pause" : "play";
    if (playing) schedule();
  }});
  slider.addEventListener("input", function () {{ k = Number(slider.value); t0 = null; draw(); }});
  speed.addEventListener("change", function () {{ t0 = null; }});
  draw();
  schedule();
}})();
</script>
</body>
</html>
"##
    );
    s
}

/// Animate the run in `run_dir` (its `timeseries.csv`) of the model in
/// `model_file` (default: the `model_file` its `summary.json` names) into
/// `out` (default `run_dir/animation.html`); returns the file and the
/// number of frames.
///
/// # Errors
/// A missing or unreadable file, a model that is not the run's.
pub fn animate(
    run_dir: &Path,
    model_file: Option<&Path>,
    out: Option<&Path>,
) -> Result<(PathBuf, usize), RunError> {
    let model_path = match model_file {
        Some(p) => p.to_path_buf(),
        None => {
            let path = run_dir.join("summary.json");
            let text = std::fs::read_to_string(&path)
                .map_err(|e| RunError::Io(jounce_io::IoError::new(&path, e)))?;
            let v: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| RunError::Setup(format!("{}: {e}", path.display())))?;
            match v["model_file"].as_str() {
                Some(f) => PathBuf::from(f),
                None => {
                    return Err(RunError::Setup(format!(
                        "{}: names no model file; give it with --model",
                        path.display()
                    )))
                }
            }
        }
    };
    let model = jounce_model::load_file(&model_path).map_err(RunError::from)?;
    let series = Series::read(&run_dir.join("timeseries.csv"))?;
    // a spatial model plays in 3-D (crate::animate_spatial)
    let (page, frames) = if model.spatial.is_some() {
        let sc = crate::animate_spatial::spatial_scene(&model, &series)?;
        (crate::animate_spatial::spatial_html(&sc), sc.t.len())
    } else {
        let sc = scene(&model, &series)?;
        (html(&sc), sc.t.len())
    };
    let file = out.map_or_else(|| run_dir.join("animation.html"), Path::to_path_buf);
    std::fs::write(&file, page).map_err(|e| RunError::Io(jounce_io::IoError::new(&file, e)))?;
    Ok((file, frames))
}
