//! Stick–slip Coulomb friction on spatial contacts (issue 33) against
//! closed forms: a sphere launched sliding rolls at 5/7 v0 from
//! t = 2 v0/(7 μ g); a block on a skew incline sticks below the friction
//! angle and slides with a = g (sin α − μ cos α) above it; the planar
//! block on an incline is reproduced by a spatial model; a block pushed
//! sideways slides on a curved path to its closed-form stopping point and
//! sticks without creeping, its friction force inside the cone at every
//! row.
//!
//! The "blocks" are spheres whose inertia is so large (10⁹ kg m²) that the
//! friction moment turns them by nothing measurable: the contact point
//! then moves with the centre, as a block's would. Every penalty contact
//! starts at its static penetration m g cos α / k, critically damped, so
//! that its normal force is m g cos α from the start: the closed forms
//! then hold up to the integration error, which the tolerances bound.

use crate::support;

use jounce::run::{run_model, Overrides};
use jounce_io::RunSummary;
use support::{run_example, scratch, Series};

const G: f64 = 9.81;

/// Runs the model text; (summary, series).
fn run_text(text: &str, tag: &str) -> (RunSummary, Series) {
    let model = jounce_model::from_str(text, &format!("{tag}.toml")).unwrap();
    let out = scratch(tag);
    let summary = run_model(&model, &out, None).unwrap_or_else(|e| panic!("{tag}: {e}"));
    assert_eq!(summary.status, "completed", "{tag}");
    let series = Series::read(&out.join("timeseries.csv"));
    let _ = std::fs::remove_dir_all(&out);
    (summary, series)
}

/// |v_t| of contact `c` at every row, from its two tangent columns.
fn sliding_speed(ts: &Series, c: &str) -> Vec<f64> {
    let s1 = ts.col(&format!("{c}.t1.sliding_velocity"));
    let s2 = ts.col(&format!("{c}.t2.sliding_velocity"));
    s1.iter().zip(s2).map(|(a, b)| a.hypot(*b)).collect()
}

/// |F| of contact `c` at every row.
fn friction_magnitude(ts: &Series, c: &str) -> Vec<f64> {
    let f1 = ts.col(&format!("{c}.t1.friction_force"));
    let f2 = ts.col(&format!("{c}.t2.friction_force"));
    f1.iter().zip(f2).map(|(a, b)| a.hypot(*b)).collect()
}

/// The time the sliding speed reaches zero, extrapolated linearly from
/// the last two rows with |v_t| > `floor` (exact while the speed falls
/// linearly), and the index of the last of them.
fn stop_time(t: &[f64], speed: &[f64], floor: f64) -> (f64, usize) {
    let k = speed.iter().rposition(|&s| s > floor).unwrap();
    assert!(k >= 1 && k + 1 < t.len(), "no stop in the run");
    let slope = (speed[k - 1] - speed[k]) / (t[k] - t[k - 1]);
    (t[k] + speed[k] / slope, k)
}

/// The shipped example: a sphere launched at v0 = 2 m/s along (3, 4, 0)/5
/// without spin slides with its contact point slowing at 7/2 μ g, stops
/// sliding at t* = 2 v0/(7 μ g) (one event) and rolls on at 5/7 v0 along
/// the launch direction, on a straight line, without friction force and
/// without creep; friction dissipates 2/7 of the kinetic energy.
#[test]
fn sphere_launched_sliding_rolls_at_five_sevenths_from_the_closed_form_time() {
    let (s, ts) = run_example(
        "examples/spatial_sphere_on_table.toml",
        Overrides::default(),
        "spatial-stick-slip-table",
    );
    assert_eq!(s.status, "completed");
    let (mu, v0, r) = (0.2, 2.0, 0.1);
    let dir = [0.6, 0.8];
    let t_star = 2.0 * v0 / (7.0 * mu * G);
    let t = ts.col("t");
    let speed = sliding_speed(&ts, "table");
    // sliding: |v_t| = v0 − 7/2 μ g t, |F| = μ m g
    let force = friction_magnitude(&ts, "table");
    let mut worst_slide = 0.0f64;
    for k in (0..t.len()).filter(|&k| t[k] < t_star - 1e-3) {
        let want = v0 - 3.5 * mu * G * t[k];
        worst_slide = worst_slide.max((speed[k] - want).abs() / v0);
        assert!((force[k] / (mu * G) - 1.0).abs() < 1e-7, "{}", force[k]);
    }
    let (t_stop, _) = stop_time(t, &speed, 1e-6);
    let t_err = (t_stop / t_star - 1.0).abs();
    // rolling: v = 5/7 v0 along the launch direction, ω r = v
    let (vx, vy) = (ts.col("ball.vx"), ts.col("ball.vy"));
    let (x, y) = (ts.col("ball.x"), ts.col("ball.y"));
    let (wx, wy) = (ts.col("ball.wx_world"), ts.col("ball.wy_world"));
    let vr = 5.0 / 7.0 * v0;
    let (mut worst_v, mut worst_creep, mut worst_line, mut worst_f) =
        (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for k in 0..t.len() {
        // a straight line along the launch direction throughout
        worst_line = worst_line.max((x[k] * dir[1] - y[k] * dir[0]).abs());
        if t[k] > t_star + 1e-3 {
            worst_v = worst_v
                .max((vx[k] - vr * dir[0]).abs() / vr)
                .max((vy[k] - vr * dir[1]).abs() / vr);
            worst_creep = worst_creep.max(speed[k]);
            worst_f = worst_f.max(force[k]);
            // rolling without slip: v = ω × (r e_z)
            assert!((wy[k] * r - vx[k]).abs() < 1e-9 && (-wx[k] * r - vy[k]).abs() < 1e-9);
        }
    }
    let last = t.len() - 1;
    let lost = ts.col("energy_dissipated")[last];
    let lost_err = (lost / (v0 * v0 / 7.0) - 1.0).abs();
    eprintln!(
        "5/7: {} events; |v_t| vs v0 − 7/2 μ g t: max rel. error {worst_slide:.1e}; stop at \
         {t_stop:.12} vs 2 v0/(7 μ g) = {t_star:.12}: rel. error {t_err:.1e}; rolling speed \
         rel. error {worst_v:.1e}, creep {worst_creep:.1e} m/s, |F| {worst_f:.1e} N, off the \
         launch line {worst_line:.1e} m; dissipated rel. error {lost_err:.1e}",
        s.work.events
    );
    assert_eq!(s.work.events, 1, "one event: the sliding stops");
    assert!(worst_slide < 1e-8, "{worst_slide}");
    assert!(t_err < 1e-6, "stop at {t_stop} vs {t_star}");
    assert!(worst_v < 1e-9, "{worst_v}");
    assert!(
        worst_creep < 1e-12,
        "rolling sphere slides at {worst_creep}"
    );
    assert!(worst_f < 1e-12, "{worst_f}");
    assert!(worst_line < 1e-9, "{worst_line}");
    assert!(lost_err < 1e-8, "{lost}");
}

/// A sphere of radius 0.05 m whose inertia (10⁹ kg m²) keeps it from
/// turning, on the plane through the origin with unit normal `n`
/// (gravity −z), penalty k = 10⁷ N/m critically damped, started at its
/// static penetration with velocity `v`; friction μ, μ_s.
fn block_on_plane(n: [f64; 3], v: [f64; 3], mu: f64, mu_s: f64, extra: &str, t_end: f64) -> String {
    let (r, k) = (0.05, 1e7);
    let delta = G * n[2] / k;
    let p = n.map(|x| x * (r - delta));
    format!(
        r#"[model]
space = "spatial"
gravity = [0.0, 0.0, -9.81]

[[bodies]]
name = "block"
mass = 1.0
inertia = [1e9, 1e9, 1e9]
position = [{:e}, {:e}, {:e}]
velocity = [{:e}, {:e}, {:e}]

[[contacts]]
name = "plane"
type = "sphere_plane"
body1 = "ground"
normal1 = [{:e}, {:e}, {:e}]
body2 = "block"
radius2 = {r}
law = "linear"
stiffness = {k:e}
damping = {:e}
friction = {mu}
static_friction = {mu_s}
friction_law = "stick_slip"
{extra}
[settings]
t_end = {t_end}
output_interval = 0.005

[settings.integrator]
method = "dopri5"
rtol = 1e-11
atol = 1e-13
"#,
        p[0],
        p[1],
        p[2],
        v[0],
        v[1],
        v[2],
        n[0],
        n[1],
        n[2],
        2.0 * k.sqrt()
    )
}

/// On a plane tilted by α about the horizontal axis at 0.7 rad from x
/// (normal n = (sin α cos 0.7, sin α sin 0.7, cos α), aligned with no
/// axis): from rest the block sticks where tan α < μ_s (even with
/// tan α > μ: the static coefficient holds it) and its velocity stays
/// zero; above μ_s it slides down the fall line with
/// a = g (sin α − μ cos α); launched downhill with tan α < μ it slows at
/// g (μ cos α − sin α), sticks at t* = v0/(g (μ cos α − sin α)) and stays.
#[test]
fn block_on_a_skew_incline_sticks_below_and_slides_above_the_friction_angle() {
    let plane = |deg: f64| {
        let (a, b) = (deg.to_radians(), 0.7f64);
        let n = [a.sin() * b.cos(), a.sin() * b.sin(), a.cos()];
        // the fall line: −e_z projected onto the plane, normalised
        let d = [n[0] * n[2], n[1] * n[2], n[2] * n[2] - 1.0].map(|x| x / a.sin());
        (a, n, d)
    };
    let speed_along = |ts: &Series, d: [f64; 3]| -> Vec<f64> {
        let (vx, vy, vz) = (ts.col("block.vx"), ts.col("block.vy"), ts.col("block.vz"));
        (0..vx.len())
            .map(|k| vx[k] * d[0] + vy[k] * d[1] + vz[k] * d[2])
            .collect()
    };
    let speed = |ts: &Series| -> Vec<f64> {
        let (vx, vy, vz) = (ts.col("block.vx"), ts.col("block.vy"), ts.col("block.vz"));
        (0..vx.len())
            .map(|k| (vx[k] * vx[k] + vy[k] * vy[k] + vz[k] * vz[k]).sqrt())
            .collect()
    };

    // 20°, μ = 0.3 < tan α = 0.364 < μ_s = 0.4: held by static friction
    let (a, n, _) = plane(20.0);
    let (s, ts) = run_text(&block_on_plane(n, [0.0; 3], 0.3, 0.4, "", 1.0), "skew-hold");
    let v_max = speed(&ts).iter().fold(0.0f64, |m, &x| m.max(x));
    let slide = sliding_speed(&ts, "plane")
        .iter()
        .fold(0.0f64, |m, &x| m.max(x));
    // the contact point is held; the sphere of 10⁹ kg m² may only roll
    // about it, at r ω with ω' ≤ r m g sin α / I: r² g sin α t_end / I
    let rolling = 0.05f64.powi(2) * G * a.sin() * 1.0 / 1e9;
    let f = friction_magnitude(&ts, "plane");
    let f_err = (f[f.len() - 1] / (G * a.sin()) - 1.0).abs();
    eprintln!(
        "skew 20°, μ_s 0.4: {} events, max |v_t| {slide:.1e} m/s, max |v| {v_max:.1e} m/s \
         (rolling bound {rolling:.1e}), |F| = m g sin α to {f_err:.1e}",
        s.work.events
    );
    assert!(slide < 1e-13, "the held block slides at {slide}");
    assert!(v_max < 1.1 * rolling, "the held block moves at {v_max}");
    assert!(f_err < 1e-9, "{f_err}");

    // 30°, tan α = 0.577 > μ_s = 0.35: slides with g (sin α − μ cos α)
    let (a, n, d) = plane(30.0);
    let (_, ts) = run_text(
        &block_on_plane(n, [0.0; 3], 0.3, 0.35, "", 1.0),
        "skew-slide",
    );
    let (t, v) = (ts.col("t"), speed_along(&ts, d));
    let exact = G * (a.sin() - 0.3 * a.cos());
    let last = t.len() - 1;
    let measured = v[last] / t[last];
    let rel = (measured / exact - 1.0).abs();
    // and along the fall line only
    let off = (speed(&ts)[last] - v[last]).abs();
    eprintln!("skew 30°: a = {measured:.12} vs g (sin α − μ cos α) = {exact:.12}: rel. error {rel:.1e}; off the fall line {off:.1e} m/s");
    assert!(rel < 1e-8, "{measured} vs {exact}");
    assert!(off < 1e-9, "{off}");

    // 20°, μ = 0.6: launched downhill at 1 m/s, slows down and sticks
    let (a, n, d) = plane(20.0);
    let decel = G * (0.6 * a.cos() - a.sin());
    let t_star = 1.0 / decel;
    let (s, ts) = run_text(&block_on_plane(n, d, 0.6, 0.7, "", 0.8), "skew-stop");
    let (t, v) = (ts.col("t"), speed_along(&ts, d));
    let slide = sliding_speed(&ts, "plane");
    let (t_stop, _) = stop_time(t, &slide, 1e-6);
    let t_err = (t_stop / t_star - 1.0).abs();
    let after: Vec<usize> = (0..t.len()).filter(|&k| t[k] > t_star + 1e-3).collect();
    let creep = after.iter().fold(0.0f64, |m, &k| m.max(speed(&ts)[k]));
    let slip_after = after.iter().fold(0.0f64, |m, &k| m.max(slide[k]));
    let i = t.iter().position(|&x| (x - 0.2).abs() < 1e-9).unwrap();
    let v_err = (v[i] - (1.0 - decel * 0.2)).abs();
    eprintln!(
        "skew stop: {} events; v(0.2) error {v_err:.1e}; stop at {t_stop:.12} vs {t_star:.12}: \
         rel. error {t_err:.1e}; after: |v| ≤ {creep:.1e}, |v_t| ≤ {slip_after:.1e}",
        s.work.events
    );
    assert!(v_err < 1e-9, "{v_err}");
    assert!(t_err < 1e-6, "{t_stop} vs {t_star}");
    assert!(s.work.events >= 1);
    assert!(creep < 1e-10 && slip_after < 1e-12, "{creep} {slip_after}");
}

/// `examples/block_on_incline.toml` (planar, a point contact) with the
/// stick–slip law, μ = μ_s = 0.3, at incline angle α, and its spatial
/// twin: the plane with normal (−sin α, cos α, 0) against a sphere of
/// radius 1 mm centred 1 mm above the block's point (10⁹ kg m², so it
/// does not turn), gravity −y; the same tolerances.
fn incline_twins(alpha: f64) -> (String, String) {
    let text = std::fs::read_to_string(support::repo("examples/block_on_incline.toml")).unwrap();
    let integrator = "method = \"dopri5\"\nrtol = 1e-11\natol = 1e-13";
    let planar = text
        .replace(
            "normal1 = [-0.5, 0.8660254037844386]",
            &format!("normal1 = [{:e}, {:e}]", -alpha.sin(), alpha.cos()),
        )
        .replace("friction_velocity = 1e-3", "friction_law = \"stick_slip\"")
        .replace("method = \"radau5\"\nrtol = 1e-8\natol = 1e-10", integrator);
    assert!(planar.contains("stick_slip") && planar.contains("dopri5"));
    let r = 1e-3;
    let n = [-alpha.sin(), alpha.cos(), 0.0];
    let spatial = format!(
        r#"[model]
space = "spatial"
gravity = [0.0, -9.81, 0.0]

[[bodies]]
name = "block"
mass = 1.0
inertia = [1e9, 1e9, 1e9]
position = [{:e}, {:e}, 0.0]

[[contacts]]
name = "incline"
type = "sphere_plane"
body1 = "ground"
normal1 = [{:e}, {:e}, 0.0]
body2 = "block"
radius2 = {r:e}
law = "linear"
stiffness = 1e6
damping = 2000.0
friction = 0.3
friction_law = "stick_slip"

[settings]
t_end = 1.0
output_interval = 0.01

[settings.integrator]
{integrator}
"#,
        r * n[0],
        r * n[1],
        n[0],
        n[1],
    );
    (planar, spatial)
}

/// The planar stick–slip block on an incline (it drops onto the plane
/// from gap 0, the critically damped contact settles, then it sticks at
/// 10° and slides at 30°) is reproduced by the spatial model: the same
/// number of events, the block's point (centre − r n) and the friction
/// force magnitude at every output row.
#[test]
fn spatial_twin_reproduces_the_planar_stick_slip_block_on_an_incline() {
    let r = 1e-3;
    for deg in [10.0f64, 30.0] {
        let alpha = deg.to_radians();
        let (planar, spatial) = incline_twins(alpha);
        let (sp, tp) = run_text(&planar, &format!("twin-planar-{deg}"));
        let (ss, ts) = run_text(&spatial, &format!("twin-spatial-{deg}"));
        let n = [-alpha.sin(), alpha.cos()];
        let (xp, yp) = (tp.col("block.x"), tp.col("block.y"));
        let (xs, ys, zs) = (ts.col("block.x"), ts.col("block.y"), ts.col("block.z"));
        let (fp, fs) = (
            tp.col("incline.friction_force"),
            friction_magnitude(&ts, "incline"),
        );
        assert_eq!(tp.col("t").len(), ts.col("t").len());
        let (mut dx, mut df) = (0.0f64, 0.0f64);
        for k in 0..xp.len() {
            dx = dx
                .max((xs[k] - r * n[0] - xp[k]).abs())
                .max((ys[k] - r * n[1] - yp[k]).abs())
                .max(zs[k].abs());
            df = df.max((fs[k] - fp[k].abs()).abs());
        }
        eprintln!(
            "twin at {deg}°: events planar {} spatial {}; max position difference {dx:.1e} m, \
             friction force {df:.1e} N",
            sp.work.events, ss.work.events
        );
        assert_eq!(sp.work.events, ss.work.events, "{deg}°");
        assert!(dx < 1e-8, "{deg}°: {dx}");
        assert!(df < 1e-6, "{deg}°: {df}");
    }
}

/// A block launched at s0 = 1 m/s along x on a horizontal table, pushed
/// along y by a constant force p m with p = μ g / 2 < μ g: with θ the
/// angle of its velocity from x, s' = p sin θ − μ g and s θ' = p cos θ, so
/// (k = μ g / p = 2, u = sec θ + tan θ)
///
/// ```text
/// s = s0 sec θ u^(−k),   t_stop = s0 μ g / ((μ g)² − p²),
/// X = (s0²/p) 2k/(4k² − 1),   Y = (s0²/p) / (4 (k² − 1))
/// ```
///
/// (separating ds/dθ and substituting u): the slip direction turns by 90°
/// to the push and the block stops there, then sticks (p < μ_s g) without
/// creeping, with |F| ≤ μ_s F_n at every row.
#[test]
fn block_pushed_sideways_slides_on_a_curved_path_and_sticks() {
    let (mu, mu_s, s0) = (0.3, 0.4, 1.0);
    let p = 0.5 * mu * G;
    let push = format!(
        "\n[[forces]]\nname = \"push\"\ntype = \"point_force\"\nbody = \"block\"\nforce = [0.0, {p:e}, 0.0]\n"
    );
    let text = block_on_plane([0.0, 0.0, 1.0], [s0, 0.0, 0.0], mu, mu_s, &push, 0.8);
    let (s, ts) = run_text(&text, "curved-slip");
    let f = mu * G;
    let k = f / p;
    let t_stop = s0 * f / (f * f - p * p);
    let x_stop = s0 * s0 / p * 2.0 * k / (4.0 * k * k - 1.0);
    let y_stop = s0 * s0 / p / (4.0 * (k * k - 1.0));
    let t = ts.col("t");
    let (x, y) = (ts.col("block.x"), ts.col("block.y"));
    let (vx, vy) = (ts.col("block.vx"), ts.col("block.vy"));
    // the path while sliding: s(θ) = s0 sec θ u^(−k)
    let mut worst_path = 0.0f64;
    for j in (0..t.len()).filter(|&j| t[j] < t_stop - 0.05) {
        let theta = vy[j].atan2(vx[j]);
        let u = 1.0 / theta.cos() + theta.tan();
        let want = s0 / theta.cos() * u.powf(-k);
        worst_path = worst_path.max((vx[j].hypot(vy[j]) / want - 1.0).abs());
    }
    let after: Vec<usize> = (0..t.len()).filter(|&j| t[j] > t_stop + 1e-3).collect();
    let last = t.len() - 1;
    let (ex, ey) = ((x[last] - x_stop).abs(), (y[last] - y_stop).abs());
    let creep = after.iter().fold(0.0f64, |m, &j| m.max(vx[j].hypot(vy[j])));
    let drift = after.iter().fold(0.0f64, |m, &j| {
        m.max((x[j] - x[last]).abs()).max((y[j] - y[last]).abs())
    });
    // the time the speed reaches zero: the first row at rest, less one interval
    let first_rest = after[0];
    let moving = (0..t.len())
        .rposition(|j| vx[j].hypot(vy[j]) > 1e-9)
        .unwrap();
    // the friction force inside the cone at every row
    let (fmag, fnorm) = (
        friction_magnitude(&ts, "plane"),
        ts.col("plane.normal_force"),
    );
    let cone = (0..t.len()).fold(f64::NEG_INFINITY, |m, j| m.max(fmag[j] - mu_s * fnorm[j]));
    // after sticking the force is the push's reaction
    let f_stick = (fmag[last] - p).abs();
    eprintln!(
        "curved slip: {} events; |v| vs s0 sec θ u^-k: max rel. error {worst_path:.1e}; stop \
         between t = {} and {} (closed form {t_stop:.6}); position at rest ({}, {}) vs \
         ({x_stop:.9}, {y_stop:.9}): errors {ex:.1e}, {ey:.1e} m; creep {creep:.1e} m/s, drift \
         {drift:.1e} m; max |F| − μ_s F_n = {cone:.2e} N; |F| − p after sticking {f_stick:.1e}",
        s.work.events, t[moving], t[first_rest], x[last], y[last]
    );
    assert!(worst_path < 1e-6, "{worst_path}");
    assert!(
        t[moving] < t_stop && t_stop <= t[moving + 1],
        "{}",
        t[moving]
    );
    assert!(ex < 1e-6 && ey < 1e-6, "({}, {})", x[last], y[last]);
    assert!(creep < 1e-10 && drift < 1e-10, "{creep} {drift}");
    assert!(cone <= 1e-9, "friction force outside the cone by {cone}");
    assert!(f_stick < 1e-9, "{}", fmag[last]);
}

/// Spatial stick–slip friction is solved with the accelerations, by the
/// augmented formulation only: the others refuse it naming the contact.
#[test]
fn spatial_stick_slip_is_refused_by_other_formulations_by_name() {
    let text =
        std::fs::read_to_string(support::repo("examples/spatial_sphere_on_table.toml")).unwrap();
    for kind in ["projection", "index3", "penalty", "joint"] {
        let mut m = jounce_model::from_str(&text, "table.toml").unwrap();
        m.settings.formulation.kind = kind.parse().unwrap();
        let e = run_model(&m, &scratch("spatial-refuse"), None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("table") && e.contains("augmented"),
            "{kind}: {e}"
        );
    }
}

/// A block-like sphere (r = 0.05 m, 10⁹ kg m²) on a fixed sphere of
/// radius 1 m (a sphere-sphere contact with ground), placed at θ from the
/// top at its static penetration m g cos θ / k.
fn ball_on_dome(theta: f64, t_end: f64) -> String {
    let (k, d) = (1e7f64, 1.05 - G * theta.cos() / 1e7);
    format!(
        r#"[model]
space = "spatial"
gravity = [0.0, 0.0, -9.81]

[[bodies]]
name = "ball"
mass = 1.0
inertia = [1e9, 1e9, 1e9]
position = [{:e}, 0.0, {:e}]

[[contacts]]
name = "dome"
type = "sphere_sphere"
body1 = "ground"
radius1 = 1.0
body2 = "ball"
radius2 = 0.05
law = "linear"
stiffness = {k:e}
damping = {:e}
friction = 0.2
static_friction = 0.3
friction_law = "stick_slip"

[settings]
t_end = {t_end}
output_interval = 0.005

[settings.integrator]
method = "dopri5"
rtol = 1e-11
atol = 1e-13
"#,
        d * theta.sin(),
        d * theta.cos(),
        2.0 * k.sqrt()
    )
}

/// Sphere-sphere contacts: at 15° from the top of a dome (tan θ = 0.27,
/// between μ = 0.2 and μ_s = 0.3) the ball is held by static friction
/// with |F| = m g sin θ and its contact point does not move; at 30° it
/// slides off, its friction force at every sliding row of magnitude
/// μ F_n and opposite to the sliding velocity (the isotropic cone's
/// boundary).
#[test]
fn ball_on_a_dome_sticks_below_and_slides_on_the_cone_above_the_friction_angle() {
    let theta = 15f64.to_radians();
    let (_, ts) = run_text(&ball_on_dome(theta, 0.5), "dome-hold");
    let slide = sliding_speed(&ts, "dome")
        .iter()
        .fold(0.0f64, |m, &x| m.max(x));
    let f = friction_magnitude(&ts, "dome");
    let f_err = (f[f.len() - 1] / (G * theta.sin()) - 1.0).abs();
    eprintln!("dome 15°: max |v_t| {slide:.1e} m/s, |F| = m g sin θ to {f_err:.1e}");
    assert!(slide < 1e-13, "{slide}");
    assert!(f_err < 1e-9, "{f_err}");

    let (_, ts) = run_text(&ball_on_dome(30f64.to_radians(), 0.3), "dome-slide");
    let (f1, f2) = (
        ts.col("dome.t1.friction_force"),
        ts.col("dome.t2.friction_force"),
    );
    let (s1, s2) = (
        ts.col("dome.t1.sliding_velocity"),
        ts.col("dome.t2.sliding_velocity"),
    );
    let fnorm = ts.col("dome.normal_force");
    let (mut rows, mut worst_mag, mut worst_dir) = (0, 0.0f64, 0.0f64);
    for k in 0..f1.len() {
        let (fm, sm) = (f1[k].hypot(f2[k]), s1[k].hypot(s2[k]));
        if sm < 1e-6 || fnorm[k] <= 0.0 {
            continue;
        }
        rows += 1;
        worst_mag = worst_mag.max((fm - 0.2 * fnorm[k]).abs() / fnorm[k]);
        worst_dir = worst_dir.max(((f1[k] * s1[k] + f2[k] * s2[k]) / (fm * sm) + 1.0).abs());
    }
    let v_end = sliding_speed(&ts, "dome")[f1.len() - 1];
    eprintln!(
        "dome 30°: {rows} sliding rows, ||F| − μ F_n|/F_n ≤ {worst_mag:.1e}, \
         1 + cos(F, v_t) ≤ {worst_dir:.1e}; sliding at {v_end:.3} m/s at the end"
    );
    assert!(rows > 50 && v_end > 0.1, "{rows} {v_end}");
    assert!(
        worst_mag < 1e-9 && worst_dir < 1e-9,
        "{worst_mag} {worst_dir}"
    );
}
