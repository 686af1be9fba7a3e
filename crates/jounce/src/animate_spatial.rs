//! `jounce animate` for a spatial model (`[model] space = "spatial"`, or a
//! URDF file): the run in 3-D as a self-contained HTML page (no network,
//! no external script; the data and the player are inline).
//!
//! **Drawing.** Each body is a stick figure in its own frame: lines from
//! its centre of mass to every point the model attaches to it (joint
//! points, named points, spring, bushing, force and contact points), a
//! dot at the centre, a circle for each contact sphere (a sphere projects
//! to a circle of the same radius in the page's orthographic view) and a
//! faded triad of its body axes, so that a body without points (a ball,
//! a tumbling body) shows its turning. Ground points are squares, a
//! contact plane a square grid, a prismatic, cylindrical or
//! point-on-line joint's line a long segment, springs, bushings and
//! distance joints lines between their end points; the world axes at the
//! origin and, in a corner, the view's orientation. A frame of the run
//! is P = r + A(p) s for every local point s (Nikravesh 1988,
//! *Computer-Aided Analysis of Mechanical Systems*, §6.3, A(p) eq. 6.19),
//! from the columns `<body>.x`, `.y`, `.z`, `.qw`, `.qx`, `.qy`, `.qz` of
//! `timeseries.csv`, thinned to at most [`crate::animate::MAX_FRAMES`]
//! frames and at most [`MAX_BODY_FRAMES`] body poses (so that a
//! 1000-body chain makes a page of tens of megabytes at most).
//!
//! **View.** Orthographic, orbiting about the centre of the bounding box
//! of all frames: dragging turns it (yaw about the world's up, the
//! direction against gravity, and pitch), the wheel zooms, `reset`
//! restores the initial view, which fits that bounding box. The player is
//! the planar page's: play/pause, a time slider, the playback speed.
//!
//! **Checks.** The page records in `document.body.dataset` the frames it
//! drew (`framesDrawn`), the frame shown (`frame`, of `frames`), the
//! camera (`camera` = "yaw,pitch,zoom") and whether a script or console
//! error happened (`status` = `ok` or the error); `window.jounceAnimation`
//! gives the world position of a body point in a frame as the page draws
//! it, so that a headless browser can check the drawing's geometry.

use jounce_model::{
    rotation_matrix, BodyRef, Model, SpatialAttachment, SpatialContactGeometry, SpatialForceKind,
    SpatialJointKind, SpatialModel,
};
use serde::Serialize;

use crate::animate::{escape_html, frame_rows, inline_json, MAX_FRAMES};
use crate::error::RunError;
use crate::series::Series;

/// Most body poses (frames × bodies) written into the page: at about 140
/// bytes a pose in JSON, some 20 MB.
pub const MAX_BODY_FRAMES: usize = 150_000;

/// The pose columns of a spatial body, in the order of a pose of the scene.
const POSE: [&str; 7] = ["x", "y", "z", "qw", "qx", "qy", "qz"];

/// A line between two points, each on a body (index) or on ground (None).
#[derive(Clone, Debug, Serialize)]
struct Link {
    a: (Option<usize>, [f64; 3]),
    b: (Option<usize>, [f64; 3]),
    /// `spring`, `bushing` or `link` (a distance joint).
    kind: &'static str,
}

/// A plane through a point with a unit normal, on a body or on ground.
#[derive(Clone, Debug, Serialize)]
struct Plane {
    body: Option<usize>,
    point: [f64; 3],
    normal: [f64; 3],
}

/// A line through a point along a direction, on a body or on ground.
#[derive(Clone, Debug, Serialize)]
struct Guide {
    body: Option<usize>,
    point: [f64; 3],
    direction: [f64; 3],
}

/// The geometry and the frames the spatial page draws.
#[derive(Clone, Debug, Serialize)]
pub struct SpatialScene {
    /// Model name.
    pub title: String,
    /// Body names.
    pub bodies: Vec<String>,
    /// Local points of each body (its stick figure), body frame relative
    /// to the centre of mass.
    pub body_points: Vec<Vec<[f64; 3]>>,
    /// Contact spheres of each body: (local centre, radius).
    pub body_spheres: Vec<Vec<([f64; 3], f64)>>,
    /// Length of each body's axis triad \[m\].
    pub body_axes: Vec<f64>,
    /// Fixed ground points, world frame.
    pub ground_points: Vec<[f64; 3]>,
    /// Contact spheres on ground: (centre, radius).
    ground_spheres: Vec<([f64; 3], f64)>,
    /// Contact planes.
    planes: Vec<Plane>,
    /// Joint lines (prismatic, cylindrical, point on line), drawn long.
    guides: Vec<Guide>,
    /// Force elements and distance joints drawn between two points.
    links: Vec<Link>,
    /// The world's up for the view: −g/|g|, or z without gravity.
    pub up: [f64; 3],
    /// Frame times.
    pub t: Vec<f64>,
    /// Per frame, per body: (x, y, z, qw, qx, qy, qz), the centre of mass
    /// (world) and the quaternion (body to world).
    pub poses: Vec<Vec<[f64; 7]>>,
    /// Bounding box of everything drawn over the run:
    /// [xmin, ymin, zmin, xmax, ymax, zmax].
    pub bounds: [f64; 6],
}

fn body_of(r: BodyRef) -> Option<usize> {
    match r {
        BodyRef::Ground => None,
        BodyRef::Body(i) => Some(i),
    }
}

/// What a spatial model draws besides the frames.
struct Geometry {
    body_points: Vec<Vec<[f64; 3]>>,
    body_spheres: Vec<Vec<([f64; 3], f64)>>,
    ground_points: Vec<[f64; 3]>,
    ground_spheres: Vec<([f64; 3], f64)>,
    planes: Vec<Plane>,
    guides: Vec<Guide>,
    links: Vec<Link>,
}

/// The points, spheres, planes, lines and links the joints and forces of
/// `sm` attach (each body point once).
fn geometry(sm: &SpatialModel) -> Geometry {
    let nb = sm.bodies.len();
    let mut g = Geometry {
        body_points: sm
            .bodies
            .iter()
            .map(|b| b.points.iter().map(|(_, p)| *p).collect())
            .collect(),
        body_spheres: vec![Vec::new(); nb],
        ground_points: Vec::new(),
        ground_spheres: Vec::new(),
        planes: Vec::new(),
        guides: Vec::new(),
        links: Vec::new(),
    };
    fn attach(g: &mut Geometry, at: &SpatialAttachment) {
        let list = match body_of(at.body) {
            Some(i) => match g.body_points.get_mut(i) {
                Some(l) => l,
                None => return,
            },
            None => &mut g.ground_points,
        };
        if !list.contains(&at.point) {
            list.push(at.point);
        }
    }
    fn link(g: &mut Geometry, a: &SpatialAttachment, b: &SpatialAttachment, kind: &'static str) {
        g.links.push(Link {
            a: (body_of(a.body), a.point),
            b: (body_of(b.body), b.point),
            kind,
        });
    }
    fn sphere(g: &mut Geometry, at: &SpatialAttachment, radius: f64) {
        match body_of(at.body) {
            Some(i) => {
                if let Some(l) = g.body_spheres.get_mut(i) {
                    l.push((at.point, radius));
                }
            }
            None => g.ground_spheres.push((at.point, radius)),
        }
    }
    for j in &sm.joints {
        let (a, b) = j.kind.attachments();
        attach(&mut g, &a);
        attach(&mut g, &b);
        match &j.kind {
            SpatialJointKind::Distance { .. } => link(&mut g, &a, &b, "link"),
            SpatialJointKind::Prismatic { axis_a, .. }
            | SpatialJointKind::Cylindrical { axis_a, .. }
            | SpatialJointKind::PointOnLine { axis_a, .. } => g.guides.push(Guide {
                body: body_of(a.body),
                point: a.point,
                direction: *axis_a,
            }),
            SpatialJointKind::Spherical { .. }
            | SpatialJointKind::Revolute { .. }
            | SpatialJointKind::Universal { .. }
            | SpatialJointKind::Fixed { .. } => {}
        }
    }
    for f in &sm.forces {
        match &f.kind {
            SpatialForceKind::PointForce { at, .. } => attach(&mut g, at),
            SpatialForceKind::SpringDamper { a, b, .. } => {
                attach(&mut g, a);
                attach(&mut g, b);
                link(&mut g, a, b, "spring");
            }
            SpatialForceKind::Bushing { a, b, .. } => {
                attach(&mut g, a);
                attach(&mut g, b);
                link(&mut g, a, b, "bushing");
            }
            SpatialForceKind::Contact { a, b, geometry, .. } => {
                attach(&mut g, b);
                match geometry {
                    SpatialContactGeometry::SpherePlane { radius, normal } => {
                        sphere(&mut g, b, *radius);
                        g.planes.push(Plane {
                            body: body_of(a.body),
                            point: a.point,
                            normal: *normal,
                        });
                    }
                    SpatialContactGeometry::SphereSphere { radius_a, radius_b } => {
                        attach(&mut g, a);
                        sphere(&mut g, a, *radius_a);
                        sphere(&mut g, b, *radius_b);
                    }
                }
            }
            SpatialForceKind::Torque { .. } | SpatialForceKind::RotationalSpring { .. } => {}
        }
    }
    // a body's origin is its centre of mass: no line to itself
    for points in &mut g.body_points {
        points.retain(|p| *p != [0.0; 3]);
    }
    g
}

/// P = r + A(p) s (Nikravesh 1988, §6.3).
fn place(pose: &[f64; 7], a: &[[f64; 3]; 3], s: &[f64; 3]) -> [f64; 3] {
    std::array::from_fn(|i| pose[i] + a[i][0] * s[0] + a[i][1] * s[1] + a[i][2] * s[2])
}

/// The length of a body's axis triad: its largest sphere's radius, else a
/// quarter of its farthest point's distance, else the radius of the
/// uniform sphere of its mass and inertia trace, r = √(5 tr J / (6 m))
/// (a solid sphere has J = (2/5) m r² about each axis).
fn triad_length(
    points: &[[f64; 3]],
    spheres: &[([f64; 3], f64)],
    mass: f64,
    inertia: &[[f64; 3]; 3],
) -> f64 {
    let r_sphere = spheres.iter().map(|s| s.1).fold(0.0, f64::max);
    let r_point = points
        .iter()
        .map(|p| (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt())
        .fold(0.0, f64::max);
    let trace = inertia[0][0] + inertia[1][1] + inertia[2][2];
    if r_sphere > 0.0 {
        r_sphere
    } else if r_point > 0.0 {
        0.25 * r_point
    } else if mass > 0.0 && trace > 0.0 {
        (5.0 * trace / (6.0 * mass)).sqrt()
    } else {
        0.1
    }
}

/// The scene of the spatial model `model` (its [`Model::spatial`]) and its
/// run's `timeseries.csv`.
///
/// # Errors
/// A model that is not spatial, a body whose pose columns the file lacks,
/// or a file with no rows.
pub fn spatial_scene(model: &Model, series: &Series) -> Result<SpatialScene, RunError> {
    let Some(sm) = model.spatial.as_ref() else {
        return Err(RunError::Setup(format!(
            "{}: not a spatial model ([model] space = \"spatial\")",
            model.source
        )));
    };
    let nb = sm.bodies.len();
    let Geometry {
        body_points,
        body_spheres,
        ground_points,
        ground_spheres,
        planes,
        guides,
        links,
    } = geometry(sm);
    let mut cols: Vec<[usize; 7]> = Vec::with_capacity(nb);
    for b in &sm.bodies {
        let idx = POSE.map(|c| series.column_index(&format!("{}.{c}", b.name)));
        if let Some(missing) = POSE.iter().zip(&idx).find(|(_, i)| i.is_none()) {
            return Err(RunError::Setup(format!(
                "{}: no pose column '{name}.{}' of body '{name}' (x, y, z, qw, qx, qy, qz): is it the output of this spatial model?",
                series.path.display(),
                missing.0,
                name = b.name,
            )));
        }
        cols.push(idx.map(|i| i.unwrap_or(0)));
    }
    if series.rows.is_empty() {
        return Err(RunError::Setup(format!(
            "{}: no rows to animate",
            series.path.display()
        )));
    }
    let max_frames = MAX_FRAMES.min((MAX_BODY_FRAMES / nb.max(1)).max(2));
    let flat: Vec<usize> = cols.iter().flatten().copied().collect();
    let rows = frame_rows(series, &flat, max_frames);
    let ti = series.column_index("t").unwrap_or(0);
    let mut bounds = [
        f64::INFINITY,
        f64::INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
    ];
    let mut grow = |p: [f64; 3], r: f64| {
        for i in 0..3 {
            bounds[i] = bounds[i].min(p[i] - r);
            bounds[i + 3] = bounds[i + 3].max(p[i] + r);
        }
    };
    for p in &ground_points {
        grow(*p, 0.0);
    }
    for (p, r) in &ground_spheres {
        grow(*p, *r);
    }
    for pl in planes.iter().filter(|p| p.body.is_none()) {
        grow(pl.point, 0.0);
    }
    let mut t = Vec::with_capacity(rows.len());
    let mut poses = Vec::with_capacity(rows.len());
    for r in rows {
        t.push(r[ti]);
        let frame: Vec<[f64; 7]> = cols.iter().map(|c| c.map(|i| r[i])).collect();
        for (i, pose) in frame.iter().enumerate() {
            let a = rotation_matrix([pose[3], pose[4], pose[5], pose[6]]);
            grow([pose[0], pose[1], pose[2]], 0.0);
            for p in &body_points[i] {
                grow(place(pose, &a, p), 0.0);
            }
            for (p, rad) in &body_spheres[i] {
                grow(place(pose, &a, p), *rad);
            }
        }
        poses.push(frame);
    }
    if !bounds.iter().all(|b| b.is_finite()) {
        bounds = [-1.0, -1.0, -1.0, 1.0, 1.0, 1.0];
    }
    let g = sm.gravity;
    let gn = (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt();
    let up = if gn > 0.0 && gn.is_finite() {
        [-g[0] / gn, -g[1] / gn, -g[2] / gn]
    } else {
        [0.0, 0.0, 1.0]
    };
    let body_axes = sm
        .bodies
        .iter()
        .enumerate()
        .map(|(i, b)| triad_length(&body_points[i], &body_spheres[i], b.mass, &b.inertia))
        .collect();
    Ok(SpatialScene {
        title: model.name.clone(),
        bodies: sm.bodies.iter().map(|b| b.name.clone()).collect(),
        body_points,
        body_spheres,
        body_axes,
        ground_points,
        ground_spheres,
        planes,
        guides,
        links,
        up,
        t,
        poses,
        bounds,
    })
}

/// The page: the scene as inline JSON and the 3-D player.
pub fn spatial_html(scene: &SpatialScene) -> String {
    let title = escape_html(&scene.title);
    // the data is put in whole, after the title is put in the template
    // around it: nothing in either is taken for a placeholder
    let (head, tail) = PAGE.split_once("{data}").unwrap_or((PAGE, ""));
    let mut s = head.replace("{title}", &title);
    s.push_str(&inline_json(scene));
    s.push_str(tail);
    s
}

/// The page template: `{title}` (in the part before the data) and
/// `{data}` (once) are put in.
const PAGE: &str = r##"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title} — jounce</title>
<style>
body { font-family: sans-serif; margin: 12px; }
#controls { display: flex; gap: 8px; align-items: center; margin: 6px 0; }
#slider { flex: 1; }
canvas { border: 1px solid #ccc; background: #fff; cursor: grab; touch-action: none; }
#hint { color: #777; font-size: 90%; }
</style>
</head>
<body data-status="loading" data-frames-drawn="0">
<h3>{title}</h3>
<canvas id="view" width="900" height="600"></canvas>
<div id="controls">
<button id="play">pause</button>
<input id="slider" type="range" min="0" value="0">
<label>speed <select id="speed"><option>0.1</option><option>0.25</option><option>0.5</option><option selected>1</option><option>2</option><option>5</option><option>10</option><option>50</option></select></label>
<button id="reset">reset view</button>
<span id="time"></span>
</div>
<div id="hint">drag to turn the view, wheel to zoom</div>
<script id="scene" type="application/json">{data}</script>
<script>
"use strict";
window.addEventListener("error", function (e) {
  document.body.dataset.status = "error: " + e.message;
});
// a console error is recorded too (the headless check reads the status)
const consoleError = console.error.bind(console);
console.error = function (...args) {
  document.body.dataset.status = "error: " + args.join(" ");
  consoleError(...args);
};
(function () {
  const S = JSON.parse(document.getElementById("scene").textContent);
  const canvas = document.getElementById("view");
  const ctx = canvas.getContext("2d");
  const slider = document.getElementById("slider");
  const play = document.getElementById("play");
  const speed = document.getElementById("speed");
  const label = document.getElementById("time");
  const n = S.t.length;
  slider.max = String(n - 1);
  document.body.dataset.frames = String(n);
  // small vector algebra
  const dot = (a, c) => a[0] * c[0] + a[1] * c[1] + a[2] * c[2];
  const cross = (a, c) => [a[1] * c[2] - a[2] * c[1], a[2] * c[0] - a[0] * c[2], a[0] * c[1] - a[1] * c[0]];
  const add = (a, c) => [a[0] + c[0], a[1] + c[1], a[2] + c[2]];
  const sub = (a, c) => [a[0] - c[0], a[1] - c[1], a[2] - c[2]];
  const mul = (a, k) => [a[0] * k, a[1] * k, a[2] * k];
  const unit = (a) => mul(a, 1 / Math.hypot(a[0], a[1], a[2]));
  // A(p), body to world, of the unit quaternion p = (w, x, y, z)
  // (Nikravesh 1988, eq. 6.19), row-major
  function rotation(q) {
    const w = q[3], x = q[4], y = q[5], z = q[6];
    return [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
            2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
            2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)];
  }
  // P = r + A(p) s
  function placeWith(q, A, s) {
    return [q[0] + A[0] * s[0] + A[1] * s[1] + A[2] * s[2],
            q[1] + A[3] * s[0] + A[4] * s[1] + A[5] * s[2],
            q[2] + A[6] * s[0] + A[7] * s[1] + A[8] * s[2]];
  }
  const turn = (A, s) => [A[0] * s[0] + A[1] * s[1] + A[2] * s[2], A[3] * s[0] + A[4] * s[1] + A[5] * s[2], A[6] * s[0] + A[7] * s[1] + A[8] * s[2]];
  // the scene's box and the orbit's basis: u up, h1 ⊥ u, h2 = u × h1
  const b = S.bounds;
  const centre = [(b[0] + b[3]) / 2, (b[1] + b[4]) / 2, (b[2] + b[5]) / 2];
  const size = Math.max(b[3] - b[0], b[4] - b[1], b[5] - b[2], 1e-3);
  const u = unit(S.up);
  const e = Math.abs(u[0]) < 0.9 ? [1, 0, 0] : [0, 1, 0];
  const h1 = unit(sub(e, mul(u, dot(e, u))));
  const h2 = cross(u, h1);
  // the camera: yaw about u, pitch above the horizontal, zoom
  const home = { yaw: -Math.PI / 2 + 0.5, pitch: 0.4, zoom: 1 };
  const V = { yaw: home.yaw, pitch: home.pitch, zoom: home.zoom };
  let R = [1, 0, 0], U = [0, 1, 0];
  function orient(view) {
    const cy = Math.cos(view.yaw), sy = Math.sin(view.yaw), cp = Math.cos(view.pitch), sp = Math.sin(view.pitch);
    const f = add(mul(h1, cy), mul(h2, sy));
    R = add(mul(h1, -sy), mul(h2, cy));
    U = add(mul(f, -sp), mul(u, cp));
  }
  // fit: the box's corners in the initial view fill 90 % of the canvas
  orient(home);
  let wx = 1e-3 * size, wy = 1e-3 * size;
  for (let i = 0; i < 8; i++) {
    const c = sub([b[(i & 1) ? 3 : 0], b[(i & 2) ? 4 : 1], b[(i & 4) ? 5 : 2]], centre);
    wx = Math.max(wx, 2 * Math.abs(dot(c, R)));
    wy = Math.max(wy, 2 * Math.abs(dot(c, U)));
  }
  const fit = 0.9 * Math.min(canvas.width / wx, canvas.height / wy);
  let k = fit;
  function camera() {
    orient(V);
    k = fit * V.zoom;
    document.body.dataset.camera = V.yaw.toFixed(6) + "," + V.pitch.toFixed(6) + "," + V.zoom.toFixed(6);
  }
  const X = (p) => { const d = sub(p, centre); return [canvas.width / 2 + k * dot(d, R), canvas.height / 2 - k * dot(d, U)]; };
  function line(p, q, color, width) {
    const a = X(p), c = X(q);
    ctx.strokeStyle = color; ctx.lineWidth = width;
    ctx.beginPath(); ctx.moveTo(a[0], a[1]); ctx.lineTo(c[0], c[1]); ctx.stroke();
  }
  function circle(p, r, color) {
    const a = X(p);
    ctx.strokeStyle = color; ctx.lineWidth = 2;
    ctx.beginPath(); ctx.arc(a[0], a[1], Math.max(r * k, 1), 0, 2 * Math.PI); ctx.stroke();
  }
  const colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"];
  let f = 0, drawn = 0;
  let mats = [];
  function frameMats(i) { return S.poses[i].map(rotation); }
  function place(body, s) { return body === null ? s : placeWith(S.poses[f][body], mats[body], s); }
  function frameOf(body, s) {
    if (body === null) return { at: (p) => p, dir: (d) => d };
    const q = S.poses[f][body], A = mats[body];
    return { at: (p) => placeWith(q, A, p), dir: (d) => turn(A, d) };
  }
  function draw() {
    mats = frameMats(f);
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    // contact planes: a 10 x 10 grid about the box centre's foot
    const half = 0.5 * size;
    for (const P of S.planes) {
      const F = frameOf(P.body), p0 = F.at(P.point), nrm = unit(F.dir(P.normal));
      const t1 = unit(Math.abs(nrm[0]) < 0.9 ? cross(nrm, [1, 0, 0]) : cross(nrm, [0, 1, 0]));
      const t2 = cross(nrm, t1);
      const o = sub(centre, mul(nrm, dot(sub(centre, p0), nrm)));
      for (let i = -5; i <= 5; i++) {
        const a = i * half / 5;
        line(add(o, add(mul(t1, a), mul(t2, -half))), add(o, add(mul(t1, a), mul(t2, half))), "#ccc", 1);
        line(add(o, add(mul(t2, a), mul(t1, -half))), add(o, add(mul(t2, a), mul(t1, half))), "#ccc", 1);
      }
    }
    for (const G of S.guides) {
      const F = frameOf(G.body), p = F.at(G.point), d = unit(F.dir(G.direction));
      line(sub(p, mul(d, size)), add(p, mul(d, size)), "#999", 1);
    }
    // world axes at the origin
    const ax = 0.15 * size;
    line([0, 0, 0], [ax, 0, 0], "#d62728", 1); line([0, 0, 0], [0, ax, 0], "#2ca02c", 1); line([0, 0, 0], [0, 0, ax], "#1f77b4", 1);
    for (const L of S.links) {
      const p = place(L.a[0], L.a[1]), q = place(L.b[0], L.b[1]);
      line(p, q, L.kind === "spring" ? "#2ca02c" : "#555", L.kind === "spring" ? 1 : 3);
    }
    S.bodies.forEach(function (_, i) {
      const color = colors[i % colors.length];
      const c = place(i, [0, 0, 0]);
      const l = S.body_axes[i];
      ctx.globalAlpha = 0.45;
      line(c, place(i, [l, 0, 0]), "#d62728", 1); line(c, place(i, [0, l, 0]), "#2ca02c", 1); line(c, place(i, [0, 0, l]), "#1f77b4", 1);
      ctx.globalAlpha = 1;
      for (const p of S.body_points[i]) line(c, place(i, p), color, 3);
      for (const [p, r] of S.body_spheres[i]) circle(place(i, p), r, color);
      const a = X(c);
      ctx.fillStyle = color;
      ctx.beginPath(); ctx.arc(a[0], a[1], 3, 0, 2 * Math.PI); ctx.fill();
    });
    for (const [p, r] of S.ground_spheres) circle(p, r, "#000");
    ctx.fillStyle = "#000";
    for (const p of S.ground_points) { const a = X(p); ctx.fillRect(a[0] - 4, a[1] - 4, 8, 8); }
    // the view's orientation, bottom left
    const g0 = [40, canvas.height - 40];
    [[[1, 0, 0], "#d62728", "x"], [[0, 1, 0], "#2ca02c", "y"], [[0, 0, 1], "#1f77b4", "z"]].forEach(function ([d, col, name]) {
      const e1 = [g0[0] + 28 * dot(d, R), g0[1] - 28 * dot(d, U)];
      ctx.strokeStyle = col; ctx.lineWidth = 2;
      ctx.beginPath(); ctx.moveTo(g0[0], g0[1]); ctx.lineTo(e1[0], e1[1]); ctx.stroke();
      ctx.fillStyle = col; ctx.fillText(name, e1[0] + 2, e1[1] - 2);
    });
    slider.value = String(f);
    label.textContent = "t = " + S.t[f].toFixed(4) + " s";
    drawn += 1;
    document.body.dataset.framesDrawn = String(drawn);
    document.body.dataset.frame = String(f);
    if (document.body.dataset.status === "loading") document.body.dataset.status = "ok";
  }
  // the view: drag turns, wheel zooms, reset restores
  let drag = null;
  canvas.addEventListener("pointerdown", function (ev) { drag = [ev.clientX, ev.clientY]; canvas.style.cursor = "grabbing"; });
  window.addEventListener("pointermove", function (ev) {
    if (drag === null) return;
    V.yaw -= 0.01 * (ev.clientX - drag[0]);
    V.pitch = Math.max(-1.55, Math.min(1.55, V.pitch + 0.01 * (ev.clientY - drag[1])));
    drag = [ev.clientX, ev.clientY];
    camera(); draw();
  });
  window.addEventListener("pointerup", function () { drag = null; canvas.style.cursor = "grab"; });
  canvas.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    V.zoom = Math.max(0.02, Math.min(100, V.zoom * Math.exp(-0.0015 * ev.deltaY)));
    camera(); draw();
  }, { passive: false });
  document.getElementById("reset").addEventListener("click", function () {
    V.yaw = home.yaw; V.pitch = home.pitch; V.zoom = home.zoom;
    camera(); draw();
  });
  // the drawing's geometry, for checks: body point s in frame i, world
  window.jounceAnimation = {
    frames: n,
    place: function (i, body, s) { const q = S.poses[i][body]; return placeWith(q, rotation(q), s); },
  };
  // playback: each tick on the next animation frame, or after 40 ms if
  // none comes first (a headless browser's virtual time runs timers, not
  // animation frames); ticks stop while paused
  let playing = true, t0 = null, start = 0, frameId = 0, timerId = 0;
  function schedule() {
    window.cancelAnimationFrame(frameId);
    window.clearTimeout(timerId);
    frameId = window.requestAnimationFrame(run);
    timerId = window.setTimeout(run, 40);
  }
  function run() {
    window.cancelAnimationFrame(frameId);
    window.clearTimeout(timerId);
    if (!playing) return;
    const now = performance.now();
    if (t0 === null) { t0 = now; start = S.t[f]; }
    const target = start + (now - t0) / 1000 * Number(speed.value);
    while (f < n - 1 && S.t[f + 1] <= target) f += 1;
    if (f >= n - 1) { playing = false; play.textContent = "play"; }
    draw();
    if (playing) schedule();
  }
  play.addEventListener("click", function () {
    playing = !playing;
    if (playing && f >= n - 1) f = 0;
    t0 = null;
    play.textContent = playing ? "pause" : "play";
    if (playing) schedule();
  });
  slider.addEventListener("input", function () { f = Number(slider.value); t0 = null; draw(); });
  speed.addEventListener("change", function () { t0 = null; });
  camera();
  draw();
  schedule();
})();
</script>
</body>
</html>
"##;

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain of `n` rods along x on spherical joints, gravity −z.
    fn chain(n: usize) -> Model {
        let mut text = String::from(
            "[model]\nname = \"chain\"\nspace = \"spatial\"\ngravity = [0.0, 0.0, -9.81]\n",
        );
        for i in 0..n {
            let x = 0.2 * i as f64 + 0.1;
            text += &format!(
                "[[bodies]]\nname = \"rod{i}\"\nmass = 1.0\ninertia = [0.001, 0.01, 0.01]\nposition = [{x}, 0.0, 0.0]\n"
            );
        }
        for i in 0..n {
            let (b1, p1) = if i == 0 {
                ("ground".to_string(), "[0.0, 0.0, 0.0]")
            } else {
                (format!("rod{}", i - 1), "[0.1, 0.0, 0.0]")
            };
            text += &format!(
                "[[joints]]\nname = \"j{i}\"\ntype = \"spherical\"\nbody1 = \"{b1}\"\npoint1 = {p1}\nbody2 = \"rod{i}\"\npoint2 = [-0.1, 0.0, 0.0]\n"
            );
        }
        text += "[settings]\nt_end = 1.0\n";
        jounce_model::from_str(&text, "chain.toml").unwrap()
    }

    /// `rows` rows of every body's pose: the rods turning about z at
    /// rates that make every digit of the numbers count.
    fn series(model: &Model, rows: usize) -> Series {
        let sm = model.spatial.as_ref().unwrap();
        let mut header = vec!["t".to_string()];
        for b in &sm.bodies {
            header.extend(POSE.iter().map(|c| format!("{}.{c}", b.name)));
        }
        let rows = (0..rows)
            .map(|k| {
                let t = k as f64 * 1e-3;
                let mut row = vec![t];
                for (i, b) in sm.bodies.iter().enumerate() {
                    let h = 0.5 * (1.0 + i as f64 / 7.0) * t;
                    let p = b.position;
                    row.extend([p[0], p[1], p[2], h.cos(), 0.0, 0.0, h.sin()]);
                }
                row
            })
            .collect();
        Series {
            path: "timeseries.csv".into(),
            header,
            rows,
        }
    }

    #[test]
    fn a_long_run_of_many_bodies_is_thinned_to_the_pose_budget() {
        let model = chain(100);
        let s = spatial_scene(&model, &series(&model, 4001)).unwrap();
        let frames = s.t.len();
        // 150 000 poses / 100 bodies = 1500 frames at most: every third row
        // of 4001 and the last
        assert_eq!(frames, 1335);
        assert!(frames * 100 <= MAX_BODY_FRAMES);
        assert_eq!(s.t[1], 3e-3);
        assert_eq!(*s.t.last().unwrap(), 4.0);
        // each rod through its joint points (the last has no outer joint),
        // the first joint on ground
        assert!(s.body_points[..99].iter().all(|p| p.len() == 2));
        assert_eq!(s.body_points[99], [[-0.1, 0.0, 0.0]]);
        assert_eq!(s.ground_points, [[0.0; 3]]);
        // the page at the budget stays well under 30 MB
        let page = spatial_html(&s).len();
        let at_budget = page as f64 / (frames * 100) as f64 * MAX_BODY_FRAMES as f64;
        assert!(at_budget < 30e6, "{at_budget} bytes at the budget");
    }

    #[test]
    fn a_series_without_a_bodys_pose_columns_is_refused_by_name() {
        let model = chain(2);
        let mut ts = series(&model, 3);
        let qz = ts.column_index("rod1.qz").unwrap();
        ts.header[qz] = "rod1.q_z".into();
        let e = spatial_scene(&model, &ts).unwrap_err().to_string();
        assert!(e.contains("'rod1.qz'") && e.contains("body 'rod1'"), "{e}");
        let empty = Series {
            rows: Vec::new(),
            ..series(&model, 0)
        };
        let e = spatial_scene(&model, &empty).unwrap_err().to_string();
        assert!(e.contains("no rows"), "{e}");
    }

    #[test]
    fn a_body_point_is_placed_by_its_quaternion() {
        // a quarter turn about z takes body x to world y: P = r + A s
        let h = std::f64::consts::FRAC_PI_4;
        let pose = [1.0, 2.0, 3.0, h.cos(), 0.0, 0.0, h.sin()];
        let a = rotation_matrix([pose[3], pose[4], pose[5], pose[6]]);
        let p = place(&pose, &a, &[0.5, 0.0, 0.0]);
        for (x, e) in p.iter().zip([1.0, 2.5, 3.0]) {
            assert!((x - e).abs() < 1e-15, "{p:?}");
        }
    }
}
