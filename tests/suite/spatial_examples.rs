//! The shipped spatial examples against their closed forms (issue 33):
//! the heavy symmetric top's nutation bounds and precession rate, the
//! torque-free body's invariants and flip period; the quaternion norm in
//! every output row.

use crate::support;

use jounce::run::Overrides;
use support::{run_example, scratch, Series};

/// Body quaternion (w, x, y, z) of output row `i`.
fn quaternion(ts: &Series, body: &str, i: usize) -> [f64; 4] {
    ["qw", "qx", "qy", "qz"].map(|c| ts.col(&format!("{body}.{c}"))[i])
}

/// Body angular velocity ω' (body frame) of output row `i`.
fn omega(ts: &Series, body: &str, i: usize) -> [f64; 3] {
    ["wx", "wy", "wz"].map(|c| ts.col(&format!("{body}.{c}"))[i])
}

fn rotate(p: [f64; 4], s: [f64; 3]) -> [f64; 3] {
    let a = jounce_model::rotation_matrix(p);
    std::array::from_fn(|i| a[i][0] * s[0] + a[i][1] * s[1] + a[i][2] * s[2])
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// The largest |‖p‖ − 1| over the run.
fn norm_drift(ts: &Series, body: &str) -> f64 {
    (0..ts.col("t").len())
        .map(|i| {
            let p = quaternion(ts, body, i);
            (p.iter().map(|x| x * x).sum::<f64>().sqrt() - 1.0).abs()
        })
        .fold(0.0, f64::max)
}

/// The extremum of samples y[i-1], y[i], y[i+1] (equally spaced) by the
/// parabola through them.
fn parabola_peak(y0: f64, y1: f64, y2: f64) -> f64 {
    let denom = y0 - 2.0 * y1 + y2;
    if denom == 0.0 {
        return y1;
    }
    let s = 0.5 * (y0 - y2) / denom;
    y1 - 0.25 * (y0 - y2) * s
}

#[test]
fn heavy_top_nutates_between_the_roots_of_the_cubic_and_precesses_at_the_closed_form_rate() {
    heavy_top(Overrides::default(), 1e-9);
}

/// The same under the projection formulation: Φ kept to its tolerance.
#[test]
fn heavy_top_under_projection_keeps_the_closed_form_and_the_joint() {
    heavy_top(
        Overrides {
            formulation: Some("projection".into()),
            ..Overrides::default()
        },
        1e-10,
    );
}

/// The same in joint coordinates: the tip a spherical joint with a unit
/// quaternion (the `joint` formulation, Featherstone's articulated-body
/// algorithm); the joint holds by construction.
#[test]
fn heavy_top_in_joint_coordinates_keeps_the_closed_form() {
    heavy_top(
        Overrides {
            formulation: Some("joint".into()),
            ..Overrides::default()
        },
        1e-12,
    );
}

fn heavy_top(overrides: Overrides, violation: f64) {
    let (s, ts) = run_example("examples/heavy_top.toml", overrides, "top");
    assert_eq!(s.status, "completed");
    assert_eq!(s.degrees_of_freedom, 3);
    // the model's data
    let (m, g, l, a_cm, c) = (1.0f64, 9.81f64, 0.1f64, 0.01f64, 0.005f64);
    let theta0 = 30f64.to_radians();
    let w3 = 60.0;
    let a_tip = a_cm + m * l * l;
    let u0 = theta0.cos();
    // invariants: p_psi = C w3, p_phi = C w3 u0 (no precession at the
    // start), E = C w3^2 / 2 + m g l u0
    let a = c * w3 / a_tip;
    let b = a * u0;
    let energy = 0.5 * c * w3 * w3 + m * g * l * u0;
    let alpha = (2.0 * energy - c * w3 * w3) / a_tip;
    let beta = 2.0 * m * g * l / a_tip;
    let f = |u: f64| (alpha - beta * u) * (1.0 - u * u) - (b - a * u).powi(2);
    // the cubic's roots: u0 (f(u0) = 0 by the start) and those of
    // f(u)/(u0 - u) = beta (1 - u^2) - a^2 (u0 - u), the one in [-1, 1]
    assert!(f(u0).abs() < 1e-12);
    let disc = (a * a).powi(2) - 4.0 * beta * (a * a * u0 - beta);
    let u_low = (a * a - disc.sqrt()) / (2.0 * beta);
    assert!(
        f(u_low).abs() < 1e-9 && (-1.0..u0).contains(&u_low),
        "{u_low}"
    );

    // cos(theta) of the axis k = A e3 at each row, and the precession
    // rate phi' = (k_x k_y' - k_y k_x')/(k_x^2 + k_y^2), k' = A (w x e3)
    let n = ts.col("t").len();
    let mut u = Vec::with_capacity(n);
    let mut worst_rate = 0.0f64;
    let mut max_rate = 0.0f64;
    for i in 0..n {
        let p = quaternion(&ts, "top", i);
        let k = rotate(p, [0.0, 0.0, 1.0]);
        let kdot = rotate(p, cross(omega(&ts, "top", i), [0.0, 0.0, 1.0]));
        let rate = (k[0] * kdot[1] - k[1] * kdot[0]) / (k[0] * k[0] + k[1] * k[1]);
        let exact = (b - a * k[2]) / (1.0 - k[2] * k[2]);
        worst_rate = worst_rate.max((rate - exact).abs());
        max_rate = max_rate.max(exact.abs());
        u.push(k[2]);
    }
    let rate_error = worst_rate / max_rate;
    // the nutation extremes by parabolas through the samples
    let (mut low, mut high) = (f64::INFINITY, f64::NEG_INFINITY);
    let mut bottoms = 0;
    for i in 1..n - 1 {
        if u[i] <= u[i - 1] && u[i] < u[i + 1] {
            low = low.min(parabola_peak(u[i - 1], u[i], u[i + 1]));
            bottoms += 1;
        }
        if u[i] >= u[i - 1] && u[i] > u[i + 1] {
            high = high.max(parabola_peak(u[i - 1], u[i], u[i + 1]));
        }
    }
    let low_error = ((low - u_low) / u_low).abs();
    let high_error = ((high - u0) / u0).abs();
    let drift = norm_drift(&ts, "top");
    println!(
        "heavy top ({}): {bottoms} nutation periods; cos(theta) bounds {low:.12} and {high:.12} vs \
         roots {u_low:.12} and {u0:.12} (relative errors {low_error:.2e}, {high_error:.2e}); \
         precession rate error {rate_error:.2e} of its maximum {max_rate:.4} rad/s; \
         quaternion norm drift {drift:.2e}",
        s.formulation.name
    );
    assert!(bottoms >= 3, "only {bottoms} nutation periods");
    assert!(low_error < 1e-7, "lower nutation bound: {low} vs {u_low}");
    assert!(high_error < 1e-7, "upper nutation bound: {high} vs {u0}");
    assert!(rate_error < 1e-7, "precession rate error {rate_error:e}");
    assert!(drift <= 1e-12, "quaternion norm drift {drift:e}");
    // the pivot's load on the top (its reaction columns) and the weight
    // give the centre of mass its acceleration: F + m g = m a, a by
    // central differences of the velocity columns (O(dt²) ≈ 1e-6 of g)
    let t = ts.col("t");
    let vel = ["vx", "vy", "vz"].map(|c| ts.col(&format!("top.{c}")));
    let load = ["fx", "fy", "fz"].map(|c| ts.col(&format!("tip.{c}")));
    let mut worst_newton = 0.0f64;
    for i in 1..n - 1 {
        for k in 0..3 {
            let acc = (vel[k][i + 1] - vel[k][i - 1]) / (t[i + 1] - t[i - 1]);
            let weight = if k == 2 { -m * g } else { 0.0 };
            worst_newton = worst_newton.max((load[k][i] + weight - m * acc).abs() / (m * g));
        }
    }
    assert!(
        worst_newton < 1e-4,
        "pivot load + weight − m a off by {worst_newton:e} m g"
    );
    assert!(
        s.accuracy.max_position_violation < violation,
        "{}: position violation {:e}",
        s.formulation.name,
        s.accuracy.max_position_violation
    );
}

/// K(k) = π / (2 AGM(1, √(1 − k²))), the complete elliptic integral of the
/// first kind (Abramowitz & Stegun 17.6).
fn elliptic_k(k2: f64) -> f64 {
    let (mut a, mut b) = (1.0f64, (1.0 - k2).sqrt());
    for _ in 0..60 {
        let (an, bn) = (0.5 * (a + b), (a * b).sqrt());
        a = an;
        b = bn;
        if (a - b).abs() < 1e-16 * a {
            break;
        }
    }
    std::f64::consts::PI / (2.0 * a)
}

#[test]
fn tumbling_body_keeps_its_invariants_and_flips_with_the_elliptic_period() {
    let (s, ts) = run_example(
        "examples/tumbling_body.toml",
        Overrides::default(),
        "tumble",
    );
    assert_eq!(s.status, "completed");
    let inertia = [1.0f64, 2.0, 3.0];
    let n = ts.col("t").len();
    let world_momentum = |i: usize| {
        let w = omega(&ts, "body", i);
        rotate(
            quaternion(&ts, "body", i),
            std::array::from_fn(|k| inertia[k] * w[k]),
        )
    };
    let kinetic = |i: usize| {
        let w = omega(&ts, "body", i);
        0.5 * (0..3).map(|k| inertia[k] * w[k] * w[k]).sum::<f64>()
    };
    let (h0, e0) = (world_momentum(0), kinetic(0));
    let h0_norm = h0.iter().map(|x| x * x).sum::<f64>().sqrt();
    let (mut worst_h, mut worst_e) = (0.0f64, 0.0f64);
    for i in 0..n {
        let h = world_momentum(i);
        let dh = (0..3).map(|k| (h[k] - h0[k]).powi(2)).sum::<f64>().sqrt();
        worst_h = worst_h.max(dh / h0_norm);
        worst_e = worst_e.max(((kinetic(i) - e0) / e0).abs());
    }
    // the closed form (Landau & Lifshitz §37), L^2 > 2 T I2
    let w0 = omega(&ts, "body", 0);
    let l2: f64 = (0..3).map(|k| (inertia[k] * w0[k]).powi(2)).sum();
    let two_t = 2.0 * e0;
    let [i1, i2, i3] = inertia;
    assert!(l2 > two_t * i2);
    let lambda = ((i3 - i2) * (l2 - two_t * i1) / (i1 * i2 * i3)).sqrt();
    let k2 = (i2 - i1) * (two_t * i3 - l2) / ((i3 - i2) * (l2 - two_t * i1));
    let period = 4.0 * elliptic_k(k2) / lambda;
    // rising zero crossings of w_y (sn τ: straight through its zeros)
    let (t, wy) = (ts.col("t"), ts.col("body.wy"));
    let mut crossings = Vec::new();
    for i in 1..n {
        if wy[i - 1] < 0.0 && wy[i] >= 0.0 {
            let s = wy[i - 1] / (wy[i - 1] - wy[i]);
            crossings.push(t[i - 1] + s * (t[i] - t[i - 1]));
        }
    }
    assert!(crossings.len() >= 3, "{crossings:?}");
    let measured = (crossings[crossings.len() - 1] - crossings[0]) / (crossings.len() - 1) as f64;
    let period_error = ((measured - period) / period).abs();
    let drift = norm_drift(&ts, "body");
    println!(
        "tumbling body: flip period {measured:.9} s vs 4K(k)/lambda = {period:.9} s (k^2 = {k2}, \
         relative error {period_error:.2e}, {} periods); energy error {worst_e:.2e}, world \
         angular momentum error {worst_h:.2e}; quaternion norm drift {drift:.2e}",
        crossings.len() - 1
    );
    assert!(period_error < 1e-6, "flip period error {period_error:e}");
    assert!(worst_e < 1e-10, "energy error {worst_e:e}");
    assert!(worst_h < 1e-10, "angular momentum error {worst_h:e}");
    assert!(drift <= 1e-12, "quaternion norm drift {drift:e}");
    // the derived columns: Tait–Bryan angles that give back A(p), and A ω'
    let col = |c: &str| ts.col(&format!("body.{c}"));
    let (yaw, pitch, roll) = (col("yaw_zyx"), col("pitch_zyx"), col("roll_zyx"));
    let world_w = [col("wx_world"), col("wy_world"), col("wz_world")];
    let (mut worst_a, mut worst_w) = (0.0f64, 0.0f64);
    for i in 0..n {
        let (sy, cy) = yaw[i].sin_cos();
        let (sp, cp) = pitch[i].sin_cos();
        let (sr, cr) = roll[i].sin_cos();
        // R_z(yaw) R_y(pitch) R_x(roll)
        let a = [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ];
        let p = quaternion(&ts, "body", i);
        let want = jounce_model::rotation_matrix(p);
        for r in 0..3 {
            for c in 0..3 {
                worst_a = worst_a.max((a[r][c] - want[r][c]).abs());
            }
        }
        let w = rotate(p, omega(&ts, "body", i));
        for k in 0..3 {
            worst_w = worst_w.max((world_w[k][i] - w[k]).abs());
        }
    }
    assert!(worst_a < 1e-12, "Tait–Bryan angles off A(p) by {worst_a:e}");
    assert!(
        worst_w < 1e-12,
        "world angular velocity off A ω' by {worst_w:e}"
    );
}

/// The planar double pendulum and its spatial copy on spherical joints,
/// both at dop853 rtol 1e-12 over the first second (chaotic later: the
/// two runs' own errors grow apart).
#[test]
fn spatial_double_pendulum_started_in_a_plane_reproduces_the_planar_one() {
    let tight = || Overrides {
        method: Some("dop853".into()),
        rtol: Some(1e-12),
        atol: Some(1e-14),
        t_end: Some(1.0),
        ..Overrides::default()
    };
    let (sp, spatial) = run_example("examples/spatial_double_pendulum.toml", tight(), "sdp");
    let (_, planar) = run_example("examples/double_pendulum.toml", tight(), "pdp");
    assert_eq!(sp.status, "completed");
    assert_eq!(sp.degrees_of_freedom, 6);
    let (ts, tp) = (spatial.col("t"), planar.col("t"));
    assert_eq!(ts.len(), tp.len());
    let mut worst = 0.0f64;
    let mut out_of_plane = 0.0f64;
    for link in ["link1", "link2"] {
        for c in ["x", "y"] {
            let (a, b) = (
                spatial.col(&format!("{link}.{c}")),
                planar.col(&format!("{link}.{c}")),
            );
            for (x, y) in a.iter().zip(b) {
                worst = worst.max((x - y).abs());
            }
        }
        out_of_plane = spatial
            .col(&format!("{link}.z"))
            .iter()
            .fold(out_of_plane, |m, z| m.max(z.abs()));
    }
    println!(
        "spatial vs planar double pendulum to t = 1 s: max position difference {worst:.2e} m, \
         max |z| {out_of_plane:.2e} m"
    );
    assert!(worst < 1e-10, "spatial and planar differ by {worst:e} m");
    assert!(out_of_plane < 1e-12, "left the plane by {out_of_plane:e} m");
    assert!(norm_drift(&spatial, "link1").max(norm_drift(&spatial, "link2")) <= 1e-12);
}

/// The same pendulum swinging in 3-D (an out-of-plane velocity of the
/// lower link): energy and the angular momentum about the vertical
/// (y, through the fixed pivot) are kept.
#[test]
fn spatial_double_pendulum_in_3d_keeps_energy_and_vertical_angular_momentum() {
    let text = std::fs::read_to_string(support::repo("examples/spatial_double_pendulum.toml"))
        .unwrap()
        .replace(
            "position = [1.5, 0.0, 0.0]",
            "position = [1.5, 0.0, 0.0]\nvelocity = [0.0, 0.0, 1.0]\n\
             angular_velocity = [0.0, -1.0, 0.0]",
        )
        .replace(
            "position = [0.5, 0.0, 0.0]",
            "position = [0.5, 0.0, 0.0]\nvelocity = [0.0, 0.0, 0.5]\n\
             angular_velocity = [0.0, -1.0, 0.0]",
        );
    let model = jounce_model::from_str(&text, "spatial_double_pendulum_3d.toml").unwrap();
    let out = support::scratch("sdp3d");
    let s = jounce::run::run_model(&model, &out, None).unwrap();
    let ts = Series::read(&out.join("timeseries.csv"));
    let _ = std::fs::remove_dir_all(&out);
    assert_eq!(s.status, "completed");
    let inertia = [0.001, 1.0 / 12.0, 1.0 / 12.0];
    let n = ts.col("t").len();
    let h_y = |i: usize| -> f64 {
        let mut h = 0.0;
        for link in ["link1", "link2"] {
            let r = ["x", "y", "z"].map(|c| ts.col(&format!("{link}.{c}"))[i]);
            let v = ["vx", "vy", "vz"].map(|c| ts.col(&format!("{link}.{c}"))[i]);
            let w = omega(&ts, link, i);
            let spin = rotate(
                quaternion(&ts, link, i),
                std::array::from_fn(|k| inertia[k] * w[k]),
            );
            h += cross(r, v)[1] + spin[1];
        }
        h
    };
    let e = ts.col("total_energy");
    let (h0, e0) = (h_y(0), e[0]);
    let mut worst_h = 0.0f64;
    let mut max_z = 0.0f64;
    for i in 0..n {
        worst_h = worst_h.max((h_y(i) - h0).abs() / h0.abs());
        max_z = max_z.max(ts.col("link2.z")[i].abs());
    }
    let worst_e = e.iter().map(|x| ((x - e0) / e0).abs()).fold(0.0, f64::max);
    println!(
        "3-D double pendulum: H_y error {worst_h:.2e}, energy error {worst_e:.2e}, \
         max |z| of link2 {max_z:.3} m, position violation {:.2e}",
        s.accuracy.max_position_violation
    );
    assert!(max_z > 0.1, "the motion is out of the plane");
    assert!(
        worst_h < 1e-8,
        "vertical angular momentum error {worst_h:e}"
    );
    assert!(worst_e < 1e-8, "energy error {worst_e:e}");
    assert!(s.accuracy.max_position_violation < 1e-8);
    assert!(norm_drift(&ts, "link1").max(norm_drift(&ts, "link2")) <= 1e-12);
}

#[test]
fn check_reports_the_spatial_examples_degrees_of_freedom() {
    for (rel, dof, nq) in [
        ("examples/heavy_top.toml", 3, 7),
        ("examples/tumbling_body.toml", 6, 7),
        ("examples/spatial_double_pendulum.toml", 6, 14),
        ("examples/spatial_slider_crank.toml", 0, 21),
    ] {
        let model = jounce_model::load_file(&support::repo(rel)).unwrap();
        let r = jounce::check::check_report(&model).unwrap();
        assert_eq!((r.degrees_of_freedom, r.coordinates), (dof, nq), "{rel}");
        assert!(
            r.text.contains("spatial") && r.redundant.is_empty(),
            "{}",
            r.text
        );
    }
    // the driver is listed with its joint
    let model =
        jounce_model::load_file(&support::repo("examples/spatial_slider_crank.toml")).unwrap();
    let r = jounce::check::check_report(&model).unwrap();
    assert!(
        r.text.contains("drivers (1):") && r.text.contains("crank_drive      joint 'hinge'"),
        "{}",
        r.text
    );
}

/// Joint reaction columns at rest: a 2 kg beam welded to ground with its
/// centre 0.5 m out along x carries its weight, F = (0, 0, m g), and the
/// moment −c × W = (0, −0.5 m g, 0) about the weld's point (the world
/// origin); a 3 kg bob hanging 0.4 m below a hinge carries F = (0, 0, m g)
/// and no moment.
#[test]
fn joint_reactions_of_a_welded_beam_and_a_hanging_bob_balance_their_weights() {
    let dir = scratch("spatial_reactions");
    let file = dir.join("reactions.toml");
    std::fs::write(
        &file,
        r#"[model]
name = "reactions"
space = "spatial"

[[bodies]]
name = "beam"
mass = 2.0
inertia = [0.1, 0.2, 0.3]
position = [0.5, 0.0, 0.0]

[[bodies]]
name = "bob"
mass = 3.0
inertia = [0.05, 0.05, 0.02]
position = [0.0, 1.0, -0.4]
points = { pivot = [0.0, 0.0, 0.4] }

[[joints]]
name = "weld"
type = "fixed"
body1 = "ground"
body2 = "beam"

[[joints]]
name = "hinge"
type = "revolute"
body1 = "ground"
point1 = [0.0, 1.0, 0.0]
body2 = "bob"
point2 = "pivot"
axis = [1.0, 0.0, 0.0]

[settings]
t_end = 0.1
output_interval = 0.05

[settings.integrator]
method = "dop853"
rtol = 1e-10
atol = 1e-12
"#,
    )
    .unwrap();
    let (s, ts) = run_example(file.to_str().unwrap(), Overrides::default(), "reactions");
    assert_eq!(s.status, "completed");
    let g = 9.81;
    for (joint, want) in [
        ("weld", [0.0, 0.0, 2.0 * g, 0.0, -0.5 * 2.0 * g, 0.0]),
        ("hinge", [0.0, 0.0, 3.0 * g, 0.0, 0.0, 0.0]),
    ] {
        for (c, w) in ["fx", "fy", "fz", "mx", "my", "mz"].iter().zip(want) {
            for &got in ts.col(&format!("{joint}.{c}")) {
                assert!((got - w).abs() < 1e-9, "{joint}.{c} = {got}, want {w}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The driven spatial slider-crank (examples/spatial_slider_crank.toml):
/// the slider at the closed form x = √(L² − (R cos θ − d)² − (R sin θ −
/// h)²) with θ = ω t (measured 2.0e-11 m), the crank's turn about x equal
/// to the driver's f(t), the driver's multiplier the torque the hinge
/// reports (minus it, on the crank), the energy account closed by the
/// driver's work.
#[test]
fn spatial_slider_crank_follows_its_driver_and_the_closed_form_slider_position() {
    let (s, ts) = run_example(
        "examples/spatial_slider_crank.toml",
        Overrides::default(),
        "slider_crank",
    );
    assert_eq!(s.status, "completed", "{:?}", s.error);
    assert_eq!(s.degrees_of_freedom, 0);
    let (r, l, d, h) = (0.1f64, 0.3f64, 0.05f64, 0.02f64);
    let omega = 2.0 * std::f64::consts::PI;
    let t = ts.col("t");
    assert!((t[t.len() - 1] - 1.0).abs() < 1e-12 && t.len() > 100);
    let (mut slide, mut turn, mut torque) = (0.0f64, 0.0f64, 0.0f64);
    for (i, &ti) in t.iter().enumerate() {
        let th = omega * ti;
        let x = (l * l - (r * th.cos() - d).powi(2) - (r * th.sin() - h).powi(2)).sqrt();
        slide = slide.max((ts.col("slider.x")[i] - x).abs());
        // the crank turns about +x by θ: p = (cos θ/2, sin θ/2, 0, 0)
        let p = quaternion(&ts, "crank", i);
        let got = 2.0 * p[1].atan2(p[0]);
        let wrapped = (got - th + std::f64::consts::PI).rem_euclid(2.0 * std::f64::consts::PI)
            - std::f64::consts::PI;
        turn = turn.max(wrapped.abs());
        let lambda = ts.col("lambda[driver 'crank_drive']")[i];
        torque = torque.max((ts.col("hinge.mx")[i] + lambda).abs());
    }
    assert!(slide < 1e-8, "slider vs closed form: {slide:e}");
    assert!(turn < 1e-8, "crank angle vs f(t): {turn:e}");
    assert!(
        torque < 1e-9,
        "hinge torque vs −λ of the driver: {torque:e}"
    );
    // the driver's torque is not trivially zero, and its work closes the
    // energy account
    let lambda = ts.col("lambda[driver 'crank_drive']");
    assert!(
        lambda.iter().any(|x| x.abs() > 0.1),
        "driver torque {lambda:?}"
    );
    let residual = ts
        .col("energy_balance_residual")
        .iter()
        .fold(0.0f64, |m, x| m.max(x.abs()));
    assert!(residual < 1e-8, "energy balance residual {residual:e}");
}

/// Undamped spatial springs conserve energy: a body on a hinge about a
/// tilted axis with a rotational spring, a second body hung from it by a
/// spherical joint and a translational spring to ground, under gravity;
/// kinetic + gravity + spring energy over a dop853 run to 1e-8 relative
/// (measured in the message).
#[test]
fn undamped_spatial_springs_keep_the_total_energy() {
    let dir = scratch("spatial_springs");
    let file = dir.join("springs.toml");
    std::fs::write(
        &file,
        r#"[model]
name = "springs"
space = "spatial"

[[bodies]]
name = "arm"
mass = 1.5
inertia = [[0.02, 0.001, 0.0], [0.001, 0.03, 0.002], [0.0, 0.002, 0.04]]
position = [0.2, 0.0, 0.0]
angular_velocity = [0.0, 1.2, 1.6]
velocity = [0.0, 0.32, -0.24]
points = { pivot = [-0.2, 0.0, 0.0], tip = [0.2, 0.0, 0.0] }

[[bodies]]
name = "bob"
mass = 0.8
inertia = [0.004, 0.005, 0.006]
position = [0.4, 0.0, -0.3]
angular_velocity = [0.5, -0.3, 0.2]
points = { top = [0.0, 0.0, 0.3] }

[[joints]]
name = "hinge"
type = "revolute"
body1 = "ground"
point1 = [0.0, 0.0, 0.0]
body2 = "arm"
point2 = "pivot"
axis = [0.0, 0.6, 0.8]

[[joints]]
name = "ball"
type = "spherical"
body1 = "arm"
point1 = "tip"
body2 = "bob"
point2 = "top"

[[forces]]
name = "coil"
type = "rotational_spring"
joint = "hinge"
stiffness = 4.0
zero_angle = 0.3

[[forces]]
name = "spring"
type = "spring_damper"
body1 = "ground"
point1 = [0.5, 0.2, -0.5]
body2 = "bob"
point2 = [0.0, 0.0, -0.05]
stiffness = 60.0
free_length = 0.1

[settings]
t_end = 2.0
output_interval = 0.01

[settings.integrator]
method = "dop853"
rtol = 1e-12
atol = 1e-14
"#,
    )
    .unwrap();
    let (s, ts) = run_example(file.to_str().unwrap(), Overrides::default(), "springs");
    assert_eq!(s.status, "completed", "{:?}", s.error);
    let e = ts.col("total_energy");
    let k = ts.col("kinetic_energy");
    let scale = k.iter().fold(e[0].abs(), |m, x| m.max(x.abs()));
    let drift = e.iter().fold(0.0f64, |m, x| m.max((x - e[0]).abs())) / scale;
    assert!(drift < 1e-8, "relative energy drift {drift:e}");
    // the springs did work: the kinetic energy changed by far more
    let swing = k.iter().fold(0.0f64, |m, x| m.max((x - k[0]).abs()));
    assert!(swing > 0.1, "kinetic energy swing {swing}");
    eprintln!("springs: relative energy drift {drift:e}, kinetic swing {swing} J");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A prismatic driver holds the slide at f(t) through a run, across the
/// breakpoints of a ramp (integration stops there; measured 3.7e-11 m,
/// printed): a turned block on a
/// tilted guide, f = harmonic + ramp on [0.3, 0.6]; the block's centre
/// moves along the guide by f(t) from its start.
#[test]
fn a_prismatic_driver_holds_the_slide_at_f_of_t_in_a_run() {
    let dir = scratch("spatial_slide_driver");
    let file = dir.join("slide.toml");
    std::fs::write(
        &file,
        r#"[model]
name = "slide"
space = "spatial"

[functions]
shake = { type = "harmonic", amplitude = 0.05, frequency = 10.0 }
ramp = { type = "ramp", t0 = 0.3, t1 = 0.6, from = 0.0, to = 0.2 }
slide = { type = "sum", terms = ["shake", "ramp"] }

[[bodies]]
name = "block"
mass = 2.0
inertia = [[0.3, 0.02, 0.0], [0.02, 0.2, 0.01], [0.0, 0.01, 0.25]]
position = [0.6, 0.0, -0.8]
orientation = [0.8, 0.36, 0.0, 0.48]

[[joints]]
name = "guide"
type = "prismatic"
body1 = "ground"
point1 = [0.0, 0.0, 0.0]
body2 = "block"
point2 = [0.0, 0.0, 0.0]
axis = [0.6, 0.0, -0.8]

[[drivers]]
name = "push"
type = "joint"
joint = "guide"
function = "slide"

[settings]
t_end = 1.0
output_interval = 0.01

[settings.integrator]
method = "dop853"
rtol = 1e-10
atol = 1e-12
"#,
    )
    .unwrap();
    let model = jounce_model::load_file(&file).unwrap();
    assert_eq!(model.breakpoints(), vec![0.3, 0.6]);
    // projection: f′ jumps at the ramp's ends, and the projection onto
    // Φ_q v = −Φ_t after each step takes the velocity jump (augmented,
    // integrating Φ̈ = 0, keeps the old f′ and drifts by the ramp)
    let (s, ts) = run_example(
        file.to_str().unwrap(),
        Overrides {
            formulation: Some("projection".into()),
            ..Overrides::default()
        },
        "slide_driver",
    );
    assert_eq!(s.status, "completed", "{:?}", s.error);
    assert_eq!(s.degrees_of_freedom, 0);
    let mut err = 0.0f64;
    for (i, &t) in ts.col("t").iter().enumerate() {
        let ramp = (0.2 * (t - 0.3) / 0.3).clamp(0.0, 0.2);
        let f = 0.05 * (10.0 * t).sin() + ramp;
        let x = ts.col("block.x")[i];
        let z = ts.col("block.z")[i];
        // start (0.6, −0.8) plus f along (0.6, −0.8)
        err = err
            .max((x - 0.6 * (1.0 + f)).abs())
            .max((z + 0.8 * (1.0 + f)).abs());
    }
    assert!(err < 1e-8, "slide vs f(t): {err:e}");
    eprintln!("slide driver: max |position − closed form| {err:e}");
    // augmented drifts off the driver after the ramp starts: the run's
    // constraint-violation check (1 % of the model's size) stops it with
    // the remedy instead of reporting a wrong answer as completed
    let out = scratch("slide_driver_augmented");
    let mut model = model;
    model.settings.formulation.kind = jounce::setup::formulation_kind("augmented").unwrap();
    let e = jounce::run::run_model(&model, &out, None).expect_err("the drift is caught");
    let text = e.to_string();
    assert!(
        text.contains("constraint violation") && text.contains("projection"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The tumbling body with its orientation given by Tait–Bryan angles, and
/// by the equivalent axis and angle: the output's `yaw_zyx`, `pitch_zyx`,
/// `roll_zyx` at t = 0 are the angles given, and the two runs agree.
#[test]
fn euler_angles_and_axis_angle_in_the_model_start_the_run_where_they_say() {
    let text = std::fs::read_to_string(support::repo("examples/tumbling_body.toml")).unwrap();
    let quaternion_key = "orientation = [1.0, 0.0, 0.0, 0.0]";
    assert!(text.contains(quaternion_key));
    let (yaw, pitch, roll) = (0.4f64, -0.3f64, 1.1f64);
    // the same rotation as axis and angle, from its quaternion
    // q = qz(yaw) ⊗ qy(pitch) ⊗ qx(roll)
    let (cy, sy) = ((0.5 * yaw).cos(), (0.5 * yaw).sin());
    let (cp, sp) = ((0.5 * pitch).cos(), (0.5 * pitch).sin());
    let (cr, sr) = ((0.5 * roll).cos(), (0.5 * roll).sin());
    let q = [
        cr * cp * cy + sr * sp * sy,
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
    ];
    let angle = 2.0 * q[0].acos();
    let axis = [q[1], q[2], q[3]];
    let run = |key: String, tag: &str| {
        let dir = scratch(tag);
        let path = dir.join("body.toml");
        std::fs::write(&path, text.replace(quaternion_key, &key)).unwrap();
        let mut model = jounce_model::load_file(&path).unwrap();
        let overrides = Overrides {
            t_end: Some(0.5),
            ..Overrides::default()
        };
        jounce::run::apply_overrides(&mut model, &overrides).unwrap();
        let out = dir.join("out");
        let summary = jounce::run::run_model(&model, &out, None).unwrap();
        assert_eq!(summary.status, "completed");
        let series = Series::read(&out.join("timeseries.csv"));
        let _ = std::fs::remove_dir_all(&dir);
        series
    };
    let euler = run(
        format!("orientation_euler_zyx = [{yaw}, {pitch}, {roll}]"),
        "euler-zyx",
    );
    for (col, want) in [("yaw_zyx", yaw), ("pitch_zyx", pitch), ("roll_zyx", roll)] {
        let got = euler.col(&format!("body.{col}"))[0];
        assert!((got - want).abs() < 1e-12, "{col}: {got} vs {want}");
    }
    let axis_angle = run(
        format!(
            "orientation_axis_angle = [{:?}, {:?}, {:?}, {angle:?}]",
            axis[0], axis[1], axis[2]
        ),
        "axis-angle",
    );
    for c in [
        "body.qw", "body.qx", "body.qy", "body.qz", "body.wx", "body.wz",
    ] {
        let (a, b) = (euler.col(c), axis_angle.col(c));
        assert_eq!(a.len(), b.len());
        let worst = a
            .iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-12, "{c}: the two runs differ by {worst:e}");
    }
}
