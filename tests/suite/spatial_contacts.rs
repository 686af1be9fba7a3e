//! Spatial sphere-plane and sphere-sphere contacts run through the library
//! (issue 33) against closed forms: bounce heights falling by e² under the
//! impact law, the static penetration m g / k of a penalty law, a sliding
//! sphere's deceleration μ g and rolling speed 5/7 v0, velocity exchange
//! and momentum in a head-on collision, and the planar bouncing ball
//! reproduced by a spatial model.

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
    let series = Series::read(&out.join("timeseries.csv"));
    let _ = std::fs::remove_dir_all(&out);
    (summary, series)
}

/// Apex heights above the contact, z − r + v_z²/(2g), of the first flight
/// (row 0, at rest vertically) and of each flight after a bounce (the
/// first row after v_z turns from − to +).
fn apex_heights(ts: &Series, body: &str, radius: f64) -> Vec<f64> {
    let (z, vz) = (ts.col(&format!("{body}.z")), ts.col(&format!("{body}.vz")));
    let h = |i: usize| z[i] - radius + vz[i] * vz[i] / (2.0 * G);
    let mut out = vec![h(0)];
    for i in 1..z.len() {
        if vz[i - 1] < 0.0 && vz[i] > 0.0 {
            out.push(h(i));
        }
    }
    out
}

/// The shipped example: four bounces, each apex e² = 0.64 of the one
/// before; the frictionless impact keeps the horizontal velocity and the
/// spin.
#[test]
fn spatial_bouncing_ball_apexes_fall_by_e_squared() {
    let (s, ts) = run_example(
        "examples/spatial_bouncing_ball.toml",
        Overrides::default(),
        "spatial-bounce",
    );
    assert_eq!(s.status, "completed");
    let h = apex_heights(&ts, "ball", 0.25);
    assert_eq!(h.len(), 5, "{h:?}");
    assert!((h[0] - 1.75).abs() < 1e-12, "{h:?}");
    for k in 1..h.len() {
        let ratio = h[k] / h[k - 1];
        let err = (ratio / 0.64 - 1.0).abs();
        eprintln!(
            "bounce {k}: apex {:.12} ratio {ratio:.12} rel. error {err:.2e}",
            h[k]
        );
        assert!(err < 1e-6, "bounce {k}: ratio {ratio} vs 0.64 ({err:e})");
    }
    let last = ts.col("t").len() - 1;
    for (col, want) in [("ball.vx", 0.3), ("ball.vy", -0.2), ("ball.wz_world", 5.0)] {
        let got = ts.col(col)[last];
        assert!((got - want).abs() < 1e-9, "{col}: {got} vs {want}");
    }
    // the gap and force columns of the contact are written
    let gap = ts.col("ground_contact.gap");
    assert!(gap.iter().all(|g| *g > -1e-6), "penetrated");
}

const BALL: &str = r#"
[model]
space = "spatial"

[[bodies]]
name = "ball"
mass = 1.0
inertia = [0.004, 0.004, 0.004]
position = [0.0, 0.0, Z0]
velocity = [V0, 0.0, 0.0]

[[contacts]]
name = "floor"
type = "sphere_plane"
body1 = "ground"
normal1 = [0.0, 0.0, 1.0]
body2 = "ball"
radius2 = 0.1
"#;

/// A linear penalty contact with damping: the dropped ball comes to rest
/// at the penetration m g / k, with the normal force m g.
#[test]
fn penalty_ball_rests_at_the_static_penetration() {
    let text = BALL.replace("Z0", "0.11").replace("V0", "0.0")
        + "law = \"linear\"\nstiffness = 1e5\ndamping = 200.0\n\n[settings]\nt_end = 1.0\noutput_interval = 0.01\n\n[settings.integrator]\nmethod = \"dopri5\"\nrtol = 1e-10\natol = 1e-12\n";
    let (s, ts) = run_text(&text, "spatial-rest");
    assert_eq!(s.status, "completed");
    let last = ts.col("t").len() - 1;
    let want = G / 1e5;
    let pen = 0.1 - ts.col("ball.z")[last];
    let err = (pen / want - 1.0).abs();
    eprintln!("penetration {pen:e} vs m g / k {want:e}: rel. error {err:.2e}");
    assert!(err < 1e-8, "{pen:e} vs {want:e}");
    let gap = ts.col("floor.gap")[last];
    assert!((gap + want).abs() < 1e-8 * want, "{gap:e}");
    let f = ts.col("floor.normal_force")[last];
    assert!((f - G).abs() < 1e-6 * G, "{f}");
}

/// A solid sphere launched sliding without spin on a plane with friction
/// μ: it decelerates at μ g while it slides and rolls without slipping
/// from t = 2 v0 / (7 μ g) on at v = 5/7 v0 (angular momentum about the
/// contact point is kept: m v r + I ω = m v0 r, I = 2/5 m r²).
#[test]
fn sliding_sphere_decelerates_at_mu_g_and_rolls_at_five_sevenths() {
    let (mu, v0, k) = (0.3, 2.0, 1e6);
    // start at the static penetration, so that the normal force is m g
    let z0 = 0.1 - G / k;
    let text = BALL
        .replace("Z0", &format!("{z0:e}"))
        .replace("V0", &format!("{v0}"))
        + &format!(
            "law = \"linear\"\nstiffness = {k:e}\ndamping = 1000.0\nfriction = {mu}\nfriction_velocity = 1e-4\n\n\
             [settings]\nt_end = 0.5\noutput_interval = 0.001\n\n[settings.integrator]\nmethod = \"dopri5\"\nrtol = 1e-9\natol = 1e-11\n"
        );
    let (s, ts) = run_text(&text, "spatial-slide");
    assert_eq!(s.status, "completed");
    let (t, vx, wy) = (ts.col("t"), ts.col("ball.vx"), ts.col("ball.wy_world"));
    // while sliding (t < 0.194 s): v = v0 − μ g t, ω = (5 μ g / 2 r) t
    let i = t.iter().position(|&x| (x - 0.1).abs() < 1e-9).unwrap();
    let want = v0 - mu * G * 0.1;
    let err = (vx[i] / want - 1.0).abs();
    eprintln!(
        "sliding: v(0.1) = {} vs v0 − μ g t = {want}: rel. error {err:.2e}",
        vx[i]
    );
    assert!(err < 1e-6, "{} vs {want}", vx[i]);
    let w_want = 2.5 * mu * G * 0.1 / 0.1;
    assert!((wy[i] / w_want - 1.0).abs() < 1e-6, "{} vs {w_want}", wy[i]);
    let last = t.len() - 1;
    let v_end = vx[last];
    let err = (v_end / (5.0 / 7.0 * v0) - 1.0).abs();
    let slip = (wy[last] * 0.1 / v_end - 1.0).abs();
    eprintln!("rolling: v = {v_end} vs 5/7 v0: rel. error {err:.2e}; |ω r / v − 1| = {slip:.2e}");
    assert!(err < 1e-3, "{v_end}");
    assert!(slip < 1e-3, "ω r = {} vs v = {v_end}", wy[last] * 0.1);
    // the energy account closes: friction's dissipation is the kinetic
    // energy lost, m v0²/2 − (m + I/r²) v²/2 = v0²/2 · 2/7
    let residual = ts.col("energy_balance_residual")[last];
    let lost = ts.col("energy_dissipated")[last];
    eprintln!(
        "energy dissipated {lost} vs 2/7 m v0²/2 = {}, balance residual {residual:e}",
        v0 * v0 / 7.0
    );
    assert!((lost / (v0 * v0 / 7.0) - 1.0).abs() < 1e-3, "{lost}");
    assert!(residual.abs() < 1e-6, "{residual:e}");
}

const PAIR: &str = r#"
[model]
space = "spatial"
gravity = [0.0, 0.0, 0.0]

[[bodies]]
name = "a"
mass = 1.0
inertia = [0.004, 0.004, 0.004]
velocity = [1.0, 0.0, 0.0]

[[bodies]]
name = "b"
mass = 1.0
inertia = [0.004, 0.004, 0.004]
position = [0.5, 0.0, 0.0]

[[contacts]]
name = "knock"
type = "sphere_sphere"
body1 = "a"
radius1 = 0.1
body2 = "b"
radius2 = 0.1
LAW

[settings]
t_end = 1.0
output_interval = 0.01

[settings.integrator]
method = "dopri5"
rtol = 1e-10
atol = 1e-12
"#;

/// Total x momentum over the run: the largest deviation from 1.
fn momentum_drift(ts: &Series) -> f64 {
    let (a, b) = (ts.col("a.vx"), ts.col("b.vx"));
    a.iter()
        .zip(b)
        .map(|(x, y)| (x + y - 1.0).abs())
        .fold(0.0, f64::max)
}

/// Equal masses, head on, e = 1: the velocities are exchanged.
#[test]
fn head_on_elastic_impact_exchanges_velocities() {
    let (s, ts) = run_text(
        &PAIR.replace("LAW", "law = \"impact\"\nrestitution = 1.0"),
        "spatial-knock",
    );
    assert_eq!(s.status, "completed");
    let last = ts.col("t").len() - 1;
    let (va, vb) = (ts.col("a.vx")[last], ts.col("b.vx")[last]);
    let drift = momentum_drift(&ts);
    eprintln!(
        "impact: a.vx {va:e}, b.vx − 1 {:e}, momentum drift {drift:e}",
        vb - 1.0
    );
    assert!(va.abs() < 1e-8 && (vb - 1.0).abs() < 1e-8, "{va} {vb}");
    assert!(drift < 1e-12, "{drift:e}");
}

/// The same with a Hertz penalty law: momentum is kept to 1e-10 (equal and
/// opposite forces), and the undamped contact exchanges the velocities.
#[test]
fn head_on_penalty_contact_conserves_momentum() {
    let (s, ts) = run_text(
        &PAIR.replace("LAW", "law = \"hertz\"\nstiffness = 1e7\nexponent = 1.5"),
        "spatial-knock-hertz",
    );
    assert_eq!(s.status, "completed");
    // the penalty law switches on and off at located events: two per impact
    assert_eq!(s.work.events, 2);
    let last = ts.col("t").len() - 1;
    let (va, vb) = (ts.col("a.vx")[last], ts.col("b.vx")[last]);
    let drift = momentum_drift(&ts);
    eprintln!(
        "hertz: a.vx {va:e}, b.vx − 1 {:e}, momentum drift {drift:e}",
        vb - 1.0
    );
    assert!(drift < 1e-10, "{drift:e}");
    // the elastic energy is in the potential: total energy is kept
    assert!(s.accuracy.energy_conserved_by_model);
    let e = s.accuracy.max_relative_energy_error;
    eprintln!("hertz: max relative energy error {e:e}");
    assert!(e < 1e-6, "{e:e}");
    assert!(va.abs() < 1e-6 && (vb - 1.0).abs() < 1e-6, "{va} {vb}");
}

/// examples/bouncing_ball.toml written as a spatial model (the plane y = 0,
/// gravity along −y): the same motion to 1e-8.
#[test]
fn planar_bouncing_ball_as_a_spatial_model_reproduces_the_planar_run() {
    let (_, planar) = run_example(
        "examples/bouncing_ball.toml",
        Overrides::default(),
        "planar-bounce",
    );
    let text = r#"
[model]
space = "spatial"
gravity = [0.0, -9.81, 0.0]

[[bodies]]
name = "ball"
mass = 1.0
inertia = [0.025, 0.025, 0.025]
position = [0.0, 2.0, 0.0]
velocity = [0.3, 0.0, 0.0]

[[contacts]]
name = "ground_contact"
type = "sphere_plane"
body1 = "ground"
point1 = [0.0, 0.0, 0.0]
normal1 = [0.0, 1.0, 0.0]
body2 = "ball"
radius2 = 0.25
law = "impact"
restitution = 0.8

[settings]
t_end = 3.0
output_interval = 0.001

[settings.integrator]
method = "dopri5"
rtol = 1e-10
atol = 1e-10
"#;
    let (s, spatial) = run_text(text, "spatial-as-planar");
    assert_eq!(s.status, "completed");
    let (tp, ts) = (planar.col("t"), spatial.col("t"));
    assert_eq!(tp.len(), ts.len());
    let mut worst: f64 = 0.0;
    for col in [
        "ball.x",
        "ball.y",
        "ball.vx",
        "ball.vy",
        "ground_contact.gap",
    ] {
        let (a, b) = (planar.col(col), spatial.col(col));
        for i in 0..tp.len() {
            assert!((tp[i] - ts[i]).abs() < 1e-12);
            worst = worst.max((a[i] - b[i]).abs());
        }
    }
    eprintln!("planar vs spatial bouncing ball: largest difference {worst:e}");
    assert!(worst < 1e-8, "{worst:e}");
}

/// The shipped example under every formulation a free spatial body allows
/// (`joint` through the ball's free joint): the same four impacts (events
/// of each formulation) and final height.
#[test]
fn a_spatial_contact_is_an_event_of_every_formulation() {
    let mut last: Option<f64> = None;
    for f in [
        "augmented",
        "projection",
        "penalty",
        "index3",
        "ggl",
        "joint",
    ] {
        let method = if f == "index3" || f == "ggl" {
            "radau5"
        } else {
            "dopri5"
        };
        let (s, ts) = run_example(
            "examples/spatial_bouncing_ball.toml",
            Overrides {
                formulation: Some(f.into()),
                method: Some(method.into()),
                rtol: Some(1e-9),
                atol: Some(1e-9),
                ..Overrides::default()
            },
            "spatial-bounce-form",
        );
        assert_eq!(s.status, "completed", "{f}");
        assert_eq!(s.work.events, 4, "{f}");
        let z_end = *ts.col("ball.z").last().unwrap();
        if let Some(z) = last {
            assert!((z - z_end).abs() < 1e-5, "{f}: {z_end} vs {z}");
        }
        last = Some(z_end);
    }
}

/// The CLI runs the example and its solution checks pass (exit code 0).
#[test]
fn the_cli_runs_the_spatial_contact_example() {
    let out = scratch("spatial-bounce-cli");
    let model = support::repo("examples/spatial_bouncing_ball.toml");
    let (code, stdout, stderr) =
        support::jounce(&["run", model.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let ts = Series::read(&out.join("timeseries.csv"));
    assert!(ts
        .col("ground_contact.normal_force")
        .iter()
        .all(|f| *f == 0.0));
    let _ = std::fs::remove_dir_all(&out);
}

/// A spherical pendulum whose bob hits a plane (impact law, e = 1) at a
/// joint: the impulse keeps the joint (Φ_q Δv = 0) and the energy, and
/// body-coordinate and joint-coordinate formulations agree.
#[test]
fn an_impact_on_a_jointed_body_keeps_the_joint_and_the_energy() {
    let text = r#"
[model]
space = "spatial"

[[bodies]]
name = "bob"
mass = 1.0
inertia = [0.004, 0.004, 0.004]
position = [0.5, 0.0, 1.0]

[[joints]]
name = "pivot"
type = "spherical"
body1 = "ground"
point1 = [0.0, 0.0, 1.0]
body2 = "bob"
point2 = [-0.5, 0.0, 0.0]

[[contacts]]
name = "stop"
type = "sphere_plane"
body1 = "ground"
point1 = [0.0, 0.0, 0.45]
normal1 = [0.0, 0.0, 1.0]
body2 = "bob"
radius2 = 0.1
law = "impact"
restitution = 1.0

[settings]
t_end = 1.0
output_interval = 0.01
formulation = "FORM"

[settings.integrator]
method = "METHOD"
rtol = 1e-10
atol = 1e-10
"#;
    let mut last: Option<(f64, f64)> = None;
    for (form, method) in [
        ("augmented", "dopri5"),
        ("projection", "dopri5"),
        ("index3", "radau5"),
        ("joint", "dopri5"),
    ] {
        let (s, ts) = run_text(
            &text.replace("FORM", form).replace("METHOD", method),
            &format!("spatial-stop-{form}"),
        );
        assert_eq!(s.status, "completed", "{form}");
        assert!(s.work.events >= 1, "{form}: {} events", s.work.events);
        assert!(s.accuracy.energy_conserved_by_model);
        let e = s.accuracy.max_relative_energy_error;
        let end = ts.col("t").len() - 1;
        let (x, z) = (ts.col("bob.x")[end], ts.col("bob.z")[end]);
        let rod = (x * x + (z - 1.0).powi(2) + ts.col("bob.y")[end].powi(2)).sqrt();
        eprintln!(
            "{form}: {} events, energy error {e:e}, bob at ({x}, {z}), |rod| − 0.5 = {:e}",
            s.work.events,
            rod - 0.5
        );
        assert!(e < 1e-6, "{form}: energy error {e:e}");
        assert!((rod - 0.5).abs() < 1e-6, "{form}: rod {rod}");
        if let Some((x0, z0)) = last {
            assert!(
                (x - x0).abs() < 1e-5 && (z - z0).abs() < 1e-5,
                "{form}: ({x}, {z}) vs ({x0}, {z0})"
            );
        }
        last = Some((x, z));
    }
}

/// The same comparison with a damped Hunt–Crossley penalty law, friction
/// and spin: the penalty force, its events, the friction force at the
/// contact point and its moment match the planar contact's to 1e-8
/// (measured 1.9e-10, on v_y, scaled by each column's largest value). Both
/// at rtol = atol = 1e-12: at 1e-10 the two runs, whose step sequences
/// differ (13 against 7 unknowns in the error norm), differ by their
/// integration errors, 4.2e-8 through the stiff contact phases.
#[test]
fn planar_penalty_ball_with_friction_and_spin_as_a_spatial_model() {
    let law = "law = \"impact\"\nrestitution = 0.8";
    let penalty = "law = \"hunt_crossley\"\nstiffness = 1e6\nexponent = 1.5\ndamping = 0.5\nfriction = 0.3\nfriction_velocity = 1e-3";
    let planar_text = std::fs::read_to_string(support::repo("examples/bouncing_ball.toml"))
        .unwrap()
        .replace(law, penalty)
        .replace(
            "velocity = [0.3, 0.0]",
            "velocity = [0.3, 0.0]\nangular_velocity = 5.0",
        )
        .replace("t_end = 3.0", "t_end = 2.0")
        .replace("rtol = 1e-10\natol = 1e-10", "rtol = 1e-12\natol = 1e-12");
    assert!(planar_text.contains("hunt_crossley") && planar_text.contains("angular_velocity"));
    let spatial_text = format!(
        r#"
[model]
space = "spatial"
gravity = [0.0, -9.81, 0.0]

[[bodies]]
name = "ball"
mass = 1.0
inertia = [0.025, 0.025, 0.025]
position = [0.0, 2.0, 0.0]
velocity = [0.3, 0.0, 0.0]
angular_velocity = [0.0, 0.0, 5.0]

[[contacts]]
name = "ground_contact"
type = "sphere_plane"
body1 = "ground"
normal1 = [0.0, 1.0, 0.0]
body2 = "ball"
radius2 = 0.25
{penalty}

[settings]
t_end = 2.0
output_interval = 0.001

[settings.integrator]
method = "dopri5"
rtol = 1e-12
atol = 1e-12
"#
    );
    let (sp, planar) = run_text(&planar_text, "planar-penalty-ball");
    let (ss, spatial) = run_text(&spatial_text, "spatial-penalty-ball");
    assert_eq!(sp.status, "completed");
    assert_eq!(ss.status, "completed");
    assert!(ss.work.events >= 2, "{} events", ss.work.events);
    // rows on the output grid (event rows fall at slightly different
    // times in the two runs, whose step sequences differ)
    let grid = |t: &[f64]| -> std::collections::BTreeMap<i64, usize> {
        t.iter()
            .enumerate()
            .filter(|(_, x)| ((*x * 1000.0) - (*x * 1000.0).round()).abs() < 1e-6)
            .map(|(i, x)| ((x * 1000.0).round() as i64, i))
            .collect()
    };
    let (gp, gs) = (grid(planar.col("t")), grid(spatial.col("t")));
    assert_eq!(gp.len(), 2001);
    assert_eq!(gp.keys().collect::<Vec<_>>(), gs.keys().collect::<Vec<_>>());
    let mut worst: f64 = 0.0;
    for (pc, sc) in [
        ("ball.x", "ball.x"),
        ("ball.y", "ball.y"),
        ("ball.vx", "ball.vx"),
        ("ball.vy", "ball.vy"),
        ("ball.omega", "ball.wz_world"),
        ("ground_contact.normal_force", "ground_contact.normal_force"),
    ] {
        let (a, b) = (planar.col(pc), spatial.col(sc));
        let scale = a.iter().fold(1.0f64, |m, x| m.max(x.abs()));
        let mut col_worst: f64 = 0.0;
        for (k, &i) in &gp {
            col_worst = col_worst.max((a[i] - b[gs[k]]).abs() / scale);
        }
        eprintln!("{pc}: largest difference {col_worst:e} (scale {scale})");
        worst = worst.max(col_worst);
    }
    // the spin was changed by friction (the contact did slide)
    let w_end = *spatial.col("ball.wz_world").last().unwrap();
    eprintln!("planar vs spatial penalty ball: largest scaled difference {worst:e}, ω end {w_end}");
    assert!((w_end - 5.0).abs() > 0.1, "{w_end}");
    assert!(worst < 1e-8, "{worst:e}");
}

/// A solid sphere released on a plane tilted by α about x, with friction
/// enough to roll (μ > 2/7 tan α): it rolls down the slope at
/// a = 5/7 g sin α, with ω r = v about the horizontal axis; the
/// regularised law's creep v_ε artanh(2/7 tan α / μ) is the only slip.
#[test]
fn sphere_rolls_down_a_tilted_plane_at_five_sevenths_g_sin_alpha() {
    let (alpha, r, k, mu): (f64, f64, f64, f64) = (0.3, 0.1, 1e6, 0.5);
    let n = [0.0, -alpha.sin(), alpha.cos()];
    // rest on the plane at the static penetration m g cos α / k
    let depth = r - G * alpha.cos() / k;
    let text = format!(
        r#"
[model]
space = "spatial"

[[bodies]]
name = "ball"
mass = 1.0
inertia = [0.004, 0.004, 0.004]
position = [0.0, {y}, {z}]

[[contacts]]
name = "slope"
type = "sphere_plane"
body1 = "ground"
normal1 = [0.0, {ny}, {nz}]
body2 = "ball"
radius2 = {r}
law = "linear"
stiffness = {k:e}
damping = 1000.0
friction = {mu}
friction_velocity = 1e-4

[settings]
t_end = 1.0
output_interval = 0.01

[settings.integrator]
method = "dopri5"
rtol = 1e-9
atol = 1e-11
"#,
        y = depth * n[1],
        z = depth * n[2],
        ny = n[1],
        nz = n[2],
    );
    let (s, ts) = run_text(&text, "spatial-slope");
    assert_eq!(s.status, "completed");
    let last = ts.col("t").len() - 1;
    // downhill: (0, −cos α, −sin α)
    let v = -ts.col("ball.vy")[last] * alpha.cos() - ts.col("ball.vz")[last] * alpha.sin();
    let want = 5.0 / 7.0 * G * alpha.sin() * 1.0;
    let err = (v / want - 1.0).abs();
    // rolling: ω = (v / r) n × d = (v / r) e_x
    let w = ts.col("ball.wx_world")[last];
    let slip = (w * r / v - 1.0).abs();
    let off = ts.col("ball.vx")[last].abs() + ts.col("ball.wy_world")[last].abs();
    eprintln!("slope: v(1) = {v} vs 5/7 g sin α t = {want}: rel. error {err:.2e}; |ω r / v − 1| = {slip:.2e}");
    assert!(err < 1e-3, "{v} vs {want}");
    assert!(slip < 1e-3, "ω r = {} vs v = {v}", w * r);
    assert!(off < 1e-9, "off-plane motion {off:e}");
    // the creep is the regularised law's: F_t = 2/7 m g sin α needs
    // v_t = v_ε artanh(F_t / (μ F_n)) (measured 1.79e-5 m/s, 9e-6 relative)
    let creep = v - w * r;
    let creep_want = 1e-4 * (2.0 / 7.0 * alpha.tan() / mu).atanh();
    eprintln!("slope: creep {creep:e} vs v_ε artanh(2/7 tan α / μ) = {creep_want:e}");
    assert!((creep / creep_want - 1.0).abs() < 1e-4, "{creep:e}");
}
