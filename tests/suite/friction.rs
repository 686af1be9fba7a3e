//! Regularised Coulomb friction of a penalty contact (issue 11, point 3):
//! a block on an inclined plane slides with the closed-form acceleration
//! g (sin α − μ cos α) above the friction angle and creeps at the law's
//! stated velocity v_ε artanh(tan α / μ) below it.

use crate::support;

use support::{scratch, Series};

/// `examples/block_on_incline.toml` with the incline angle α [rad] and the
/// friction coefficient μ.
fn incline(alpha: f64, mu: f64) -> jounce_model::Model {
    let text = std::fs::read_to_string(support::repo("examples/block_on_incline.toml")).unwrap();
    let text = text
        .replace(
            "normal1 = [-0.5, 0.8660254037844386]",
            &format!("normal1 = [{:e}, {:e}]", -alpha.sin(), alpha.cos()),
        )
        .replace("friction = 0.3", &format!("friction = {mu:e}"))
        .replace("rtol = 1e-8", "rtol = 1e-11")
        .replace("atol = 1e-10", "atol = 1e-13");
    jounce_model::from_str(&text, "block_on_incline.toml").unwrap()
}

/// Velocity along the downhill direction (−cos α, −sin α) at every row.
fn downhill_velocity(ts: &Series, alpha: f64) -> Vec<f64> {
    let (vx, vy) = (ts.col("block.vx"), ts.col("block.vy"));
    vx.iter()
        .zip(vy)
        .map(|(x, y)| -x * alpha.cos() - y * alpha.sin())
        .collect()
}

fn run(alpha: f64, mu: f64, name: &str) -> Series {
    let out = scratch(name);
    let s = jounce::run::run_model(&incline(alpha, mu), &out, None).unwrap();
    assert_eq!(s.status, "completed");
    assert!(
        !s.accuracy.energy_conserved_by_model,
        "friction dissipates: the run must not claim energy conservation"
    );
    Series::read(&out.join("timeseries.csv"))
}

#[test]
fn above_the_friction_angle_the_block_slides_with_the_closed_form_acceleration() {
    let g = 9.81;
    for (deg, mu) in [(30.0f64, 0.3), (45.0, 0.5), (20.0, 0.1)] {
        let alpha = deg.to_radians();
        assert!(alpha.tan() > mu);
        let ts = run(alpha, mu, "slide");
        let (t, v) = (ts.col("t"), downhill_velocity(&ts, alpha));
        let i = t.iter().position(|&x| (x - 0.5).abs() < 1e-12).unwrap();
        let j = t.len() - 1;
        let measured = (v[j] - v[i]) / (t[j] - t[i]);
        let exact = g * (alpha.sin() - mu * alpha.cos());
        let rel = (measured - exact).abs() / exact;
        println!("α = {deg}°, μ = {mu}: a = {measured:.12} (exact {exact:.12}), relative error {rel:.1e}");
        assert!(rel < 1e-8, "α = {deg}°, μ = {mu}: {measured} vs {exact}");
    }
}

#[test]
fn below_the_friction_angle_the_block_creeps_at_the_stated_velocity() {
    let v_eps = 1e-3;
    for (deg, mu) in [(10.0f64, 0.3), (20.0, 0.5)] {
        let alpha = deg.to_radians();
        assert!(alpha.tan() < mu);
        let ts = run(alpha, mu, "stick");
        let v = downhill_velocity(&ts, alpha);
        // the stated error of the regularised law: a creep at
        // v_ε artanh(tan α / μ) where Coulomb's law sticks
        let creep = v_eps * (alpha.tan() / mu).atanh();
        let late = v[v.len() - 1];
        println!("α = {deg}°, μ = {mu}: creep {late:.9e} (law {creep:.9e})");
        assert!((late - creep).abs() < 1e-6 * creep, "{late} vs {creep}");
        assert!(v.iter().all(|&x| x <= creep * (1.0 + 1e-6)));
    }
}

#[test]
fn friction_without_a_normal_force_law_is_refused() {
    let text = std::fs::read_to_string(support::repo("examples/block_on_incline.toml")).unwrap();
    let impact = text
        .replace("law = \"linear\"", "law = \"impact\"\nrestitution = 0.5")
        .replace("stiffness = 1e6\n", "")
        .replace("damping = 2000.0\n", "");
    let e = jounce_model::from_str(&impact, "incline.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("incline") && e.contains("friction"), "{e}");
    let negative = text.replace("friction = 0.3", "friction = -0.3");
    let e = jounce_model::from_str(&negative, "incline.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("friction"), "{e}");
    let zero_velocity = text.replace("friction_velocity = 1e-3", "friction_velocity = 0");
    let e = jounce_model::from_str(&zero_velocity, "incline.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("friction_velocity"), "{e}");
}

// ---------------------------------------------------------------------
// Friction on translational joints and the stick–slip law (events)
// ---------------------------------------------------------------------

/// A block on a translational joint inclined at α (axis (cos α, sin α)),
/// from rest, with the given friction keys; `push` = amplitude of a
/// harmonic force 2π rad/s along the guide.
fn guide(alpha: f64, friction: &str, push: f64, method: &str) -> jounce_model::Model {
    let text = std::fs::read_to_string(support::repo("examples/stick_slip.toml")).unwrap();
    let keys = "friction = 0.2\nstatic_friction = 0.3\nfriction_law = \"stick_slip\"";
    assert!(text.contains(keys));
    let text = text
        .replace(keys, friction)
        .replace(
            "axis = [1.0, 0.0]",
            &format!("axis = [{:e}, {:e}]", alpha.cos(), alpha.sin()),
        )
        .replace(
            "fx = { type = \"harmonic\", amplitude = 3.5, frequency = 6.283185307179586 }",
            &format!(
                "fx = {{ type = \"harmonic\", amplitude = {:e}, frequency = 6.283185307179586 }}\n\
                 fy = {{ type = \"harmonic\", amplitude = {:e}, frequency = 6.283185307179586 }}",
                push * alpha.cos(),
                push * alpha.sin()
            ),
        )
        .replace("method = \"dopri5\"", &format!("method = \"{method}\""));
    jounce_model::from_str(&text, "stick_slip.toml").unwrap()
}

/// Slide velocity along the guide (cos α, sin α) at every row.
fn along(ts: &Series, alpha: f64) -> Vec<f64> {
    let (vx, vy) = (ts.col("block.vx"), ts.col("block.vy"));
    vx.iter()
        .zip(vy)
        .map(|(x, y)| x * alpha.cos() + y * alpha.sin())
        .collect()
}

fn run_model(model: &jounce_model::Model, name: &str) -> (Series, jounce_io::RunSummary) {
    let out = scratch(name);
    let s = jounce::run::run_model(model, &out, None).unwrap();
    assert_eq!(s.status, "completed", "{name}");
    assert!(!s.accuracy.energy_conserved_by_model);
    (Series::read(&out.join("timeseries.csv")), s)
}

/// Above the friction angle the block slides down the guide with
/// a = −g (sin α − μ cos α) along the axis, for the stick–slip law (the
/// normal force is the joint's multiplier, solved with the accelerations)
/// and for the regularised law (exact to 2 e^{−2|v|/v_ε} once sliding).
#[test]
fn on_a_guide_above_the_friction_angle_both_laws_give_the_closed_form_acceleration() {
    let g = 9.81;
    let laws = [
        (
            "stick_slip",
            "friction = 0.3\nfriction_law = \"stick_slip\"\nstatic_friction = 0.35",
        ),
        ("regularised", "friction = 0.3\nfriction_velocity = 1e-3"),
    ];
    for (law, keys) in laws {
        for method in ["dopri5", "radau5"] {
            let alpha = 30f64.to_radians();
            let (ts, _) = run_model(&guide(alpha, keys, 0.0, method), "guide_slide");
            let (t, v) = (ts.col("t"), along(&ts, alpha));
            let i = t.iter().position(|&x| (x - 1.0).abs() < 1e-12).unwrap();
            let j = t.len() - 1;
            let measured = (v[j] - v[i]) / (t[j] - t[i]);
            let exact = -g * (alpha.sin() - 0.3 * alpha.cos());
            let rel = ((measured - exact) / exact).abs();
            println!("{law} ({method}): a = {measured:.12} (exact {exact:.12}), {rel:.1e}");
            assert!(rel < 1e-8, "{law} {method}: {measured} vs {exact}");
            // the friction force is μ N = μ m g cos α, up the guide
            let f = ts.col("guide.friction_force");
            let fe = 0.3 * g * alpha.cos();
            assert!(
                (f[j] - fe).abs() < 1e-8 * fe,
                "{law}: friction {} vs {fe}",
                f[j]
            );
        }
    }
}

/// Below the friction angle the stick–slip law holds the block exactly
/// (no creep), with the sticking force m g sin α, where the regularised
/// law creeps at v_ε artanh(tan α / μ).
#[test]
fn on_a_guide_below_the_friction_angle_the_event_law_sticks_exactly() {
    let g = 9.81;
    let alpha = 10f64.to_radians();
    for method in ["dopri5", "radau5", "bdf"] {
        let keys = "friction = 0.3\nfriction_law = \"stick_slip\"";
        let (ts, s) = run_model(&guide(alpha, keys, 0.0, method), "guide_stick");
        let v = along(&ts, alpha);
        let x = ts.col("block.x");
        let worst = v.iter().fold(0.0f64, |a, b| a.max(b.abs()));
        println!(
            "{method}: max |v| {worst:.1e}, final x {:.1e}",
            x[x.len() - 1]
        );
        assert!(worst < 1e-12, "{method}: sticking block moved at {worst}");
        assert!(x.iter().all(|x| x.abs() < 1e-12));
        assert_eq!(s.work.events, 0, "{method}: nothing to switch");
        let f = ts.col("guide.friction_force");
        let fe = g * alpha.sin();
        assert!(
            f.iter().all(|f| (f - fe).abs() < 1e-9),
            "{method}: sticking force {} vs m g sin α = {fe}",
            f[1]
        );
    }
    let keys = "friction = 0.3\nfriction_velocity = 1e-3";
    let (ts, _) = run_model(&guide(alpha, keys, 0.0, "radau5"), "guide_creep");
    let v = along(&ts, alpha);
    let creep = -1e-3 * (alpha.tan() / 0.3).atanh();
    let late = v[v.len() - 1];
    assert!(
        (late - creep).abs() < 1e-6 * creep.abs(),
        "{late} vs {creep}"
    );
}

/// Closed-form stick–slip of the block of `examples/stick_slip.toml`
/// (horizontal guide, N = m g, F(t) = A sin ωt): slip phases integrate
/// m v' = F(t) − s μ N exactly; a slip ends where v = 0 (root by
/// bisection) and sticks if |F| ≤ μ_s N there, else reverses; a stick
/// ends where |F| reaches μ_s N. Returns x at each time of `ts` and the
/// number of mode changes up to the last.
fn stick_slip_reference(ts: &[f64]) -> (Vec<f64>, usize) {
    let (a, w, n, mu, mu_s) = (3.5, 2.0 * std::f64::consts::PI, 9.81, 0.2, 0.3);
    let force = |t: f64| a * (w * t).sin();
    // slip from (ta, xa, va) in direction s
    let vel = |ta: f64, va: f64, s: f64, t: f64| {
        va + a / w * ((w * ta).cos() - (w * t).cos()) - s * mu * n * (t - ta)
    };
    let pos = |ta: f64, xa: f64, va: f64, s: f64, t: f64| {
        let d = t - ta;
        xa + va * d + a / w * ((w * ta).cos() * d - ((w * t).sin() - (w * ta).sin()) / w)
            - s * mu * n * d * d / 2.0
    };
    let root = |f: &dyn Fn(f64) -> f64, mut lo: f64, mut hi: f64| {
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if f(mid) > 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    };
    // phases: (start, x, v, mode) with mode 0 = stick, ±1 = slip direction
    let t_end = ts[ts.len() - 1];
    let mut phases = vec![(0.0f64, 0.0f64, 0.0f64, 0.0f64)];
    let dt = 1e-4;
    while phases.last().unwrap().0 < t_end {
        let (ta, xa, va, s) = *phases.last().unwrap();
        let mut t = ta + dt;
        if s == 0.0 {
            let g = |t: f64| mu_s * n - force(t).abs();
            while g(t) > 0.0 && t < t_end + 1.0 {
                t += dt;
            }
            let tb = root(&g, t - dt, t);
            phases.push((tb, xa, 0.0, force(tb).signum()));
        } else {
            let g = |t: f64| s * vel(ta, va, s, t);
            while g(t) > 0.0 && t < t_end + 1.0 {
                t += dt;
            }
            let tb = root(&g, t - dt, t);
            let xb = pos(ta, xa, va, s, tb);
            let next = if force(tb).abs() <= mu_s * n {
                0.0
            } else {
                force(tb).signum()
            };
            phases.push((tb, xb, 0.0, next));
        }
    }
    let x = ts
        .iter()
        .map(|&t| {
            let &(ta, xa, va, s) = phases.iter().rev().find(|p| p.0 <= t).unwrap();
            if s == 0.0 {
                xa
            } else {
                pos(ta, xa, va, s, t)
            }
        })
        .collect();
    (
        x,
        phases.iter().filter(|p| p.0 > 0.0 && p.0 <= t_end).count(),
    )
}

/// The shipped stick–slip example against the closed-form solution:
/// every stick and slip located (the event count equals the reference's
/// mode changes) and the position within 1e-7 m at every output, with an
/// explicit and an implicit method.
#[test]
fn stick_slip_cycles_match_the_closed_form_solution() {
    for method in ["dopri5", "radau5"] {
        let model = guide(
            0.0,
            "friction = 0.2\nstatic_friction = 0.3\nfriction_law = \"stick_slip\"",
            3.5,
            method,
        );
        let (ts, s) = run_model(&model, "stick_slip");
        let t = ts.col("t");
        let (x_ref, changes) = stick_slip_reference(t);
        let x = ts.col("block.x");
        let err = x
            .iter()
            .zip(&x_ref)
            .fold(0.0f64, |a, (p, q)| a.max((p - q).abs()));
        println!(
            "{method}: {} events (reference {changes}), max position error {err:.2e}",
            s.work.events
        );
        assert_eq!(s.work.events as usize, changes, "{method}");
        assert!(err < 1e-7, "{method}: position error {err}");
        // while it sticks the block does not move at all
        let v = ts.col("block.vx");
        let f = ts.col("guide.friction_force");
        for k in 0..t.len() {
            if v[k] == 0.0 {
                assert!(
                    f[k].abs() <= 0.3 * 9.81 * (1.0 + 1e-9),
                    "sticking force out of the cone"
                );
            } else {
                assert!(
                    (f[k].abs() - 0.2 * 9.81).abs() < 1e-9,
                    "slip force {} at t = {}",
                    f[k],
                    t[k]
                );
            }
        }
    }
}

/// Stick–slip friction on a penalty contact: the block of
/// `examples/block_on_incline.toml` sticks exactly below the friction
/// angle once the contact has settled, and slides with the closed-form
/// acceleration above it.
#[test]
fn contact_stick_slip_sticks_below_and_slides_above_the_friction_angle() {
    let g = 9.81;
    let with_law = |alpha: f64, mu: f64| {
        let text =
            std::fs::read_to_string(support::repo("examples/block_on_incline.toml")).unwrap();
        let text = text
            .replace(
                "normal1 = [-0.5, 0.8660254037844386]",
                &format!("normal1 = [{:e}, {:e}]", -alpha.sin(), alpha.cos()),
            )
            .replace("friction = 0.3", &format!("friction = {mu:e}"))
            .replace("friction_velocity = 1e-3", "friction_law = \"stick_slip\"");
        jounce_model::from_str(&text, "block_on_incline.toml").unwrap()
    };
    let alpha = 10f64.to_radians();
    let (ts, s) = run_model(&with_law(alpha, 0.3), "contact_stick");
    let (t, v) = (ts.col("t"), downhill_velocity(&ts, alpha));
    let late: Vec<usize> = (0..t.len()).filter(|&k| t[k] >= 0.5).collect();
    let worst = late.iter().fold(0.0f64, |a, &k| a.max(v[k].abs()));
    println!(
        "contact stick: {} events, max |v| after 0.5 s {worst:.1e}",
        s.work.events
    );
    assert!(s.work.events >= 1, "the block must stick by an event");
    assert!(worst < 1e-9, "sticking block creeps at {worst}");
    let f = ts.col("incline.friction_force");
    let fe = g * alpha.sin();
    assert!(
        (f[t.len() - 1].abs() - fe).abs() < 1e-6 * fe,
        "{} vs {fe}",
        f[t.len() - 1]
    );

    let alpha = 30f64.to_radians();
    let (ts, _) = run_model(&with_law(alpha, 0.3), "contact_slide");
    let (t, v) = (ts.col("t"), downhill_velocity(&ts, alpha));
    let i = t.iter().position(|&x| (x - 0.5).abs() < 1e-12).unwrap();
    let j = t.len() - 1;
    let measured = (v[j] - v[i]) / (t[j] - t[i]);
    let exact = g * (alpha.sin() - 0.3 * alpha.cos());
    assert!(
        ((measured - exact) / exact).abs() < 1e-8,
        "{measured} vs {exact}"
    );
}

/// Friction that only the augmented formulation solves is refused by the
/// others, naming the element; keys of one law are refused on the other.
#[test]
fn stick_slip_is_refused_where_it_cannot_run_and_checked_in_the_model() {
    let model = guide(
        0.0,
        "friction = 0.2\nfriction_law = \"stick_slip\"",
        0.0,
        "dopri5",
    );
    let mut m = model.clone();
    m.settings.formulation.kind = jounce_model::FormulationKind::Projection;
    let e = jounce::run::run_model(&m, &scratch("refuse"), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("guide") && e.contains("augmented"), "{e}");
    let text = std::fs::read_to_string(support::repo("examples/stick_slip.toml")).unwrap();
    for (bad, key) in [
        ("static_friction = 0.3", "static_friction = 0.1"),
        (
            "friction_law = \"stick_slip\"",
            "friction_law = \"stick_slip\"\nfriction_velocity = 1e-3",
        ),
        ("friction_law = \"stick_slip\"", "friction_law = \"sticky\""),
    ] {
        let e = jounce_model::from_str(&text.replace(bad, key), "stick_slip.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("guide"), "{e}");
    }
}

/// The regularised law's exact Jacobian is finite at any sliding speed
/// (its tanh(v_t/v_ε) as dual numbers overflowed above v_t = 355 v_ε, so
/// the Newton matrix of every structural run held NaN from 0.355 m/s on
/// and the augmented Lagrangian stopped at t = 0.1495 s, blaming M): the
/// structural methods slide the block down the 30° incline with the
/// closed-form acceleration to 1 s (2.36 m/s, 2360 v_ε), and agree with
/// radau5.
#[test]
fn structural_methods_slide_the_block_past_355_regularisation_velocities() {
    let alpha = 30f64.to_radians();
    let mu = 0.3;
    let (reference, _) = run_model(&incline(alpha, mu), "incline-radau5");
    let exact = 9.81 * (alpha.sin() - mu * alpha.cos());
    for (formulation, kind) in [
        (
            "augmented_lagrangian",
            jounce_model::FormulationKind::AugmentedLagrangian,
        ),
        ("index3", jounce_model::FormulationKind::Index3),
    ] {
        let mut model = incline(alpha, mu);
        model.settings.formulation.kind = kind;
        model.settings.integrator.method = "generalized_alpha".into();
        model.settings.integrator.step = Some(1e-4);
        let (ts, _) = run_model(&model, &format!("incline-{formulation}"));
        let (t, v) = (ts.col("t"), downhill_velocity(&ts, alpha));
        let i = t.iter().position(|&x| (x - 0.5).abs() < 1e-9).unwrap();
        let j = t.len() - 1;
        assert!(
            (t[j] - 1.0).abs() < 1e-9,
            "{formulation} stopped at {}",
            t[j]
        );
        assert!(v[j] > 355e-3, "{formulation}: {} m/s", v[j]);
        let measured = (v[j] - v[i]) / (t[j] - t[i]);
        let rel = (measured - exact).abs() / exact;
        println!("{formulation}: a = {measured:.12} (exact {exact:.12}), relative error {rel:.1e}");
        assert!(rel < 1e-6, "{formulation}: {measured} vs {exact}");
        let (x, xr) = (ts.col("block.x"), reference.col("block.x"));
        let dx = (x[j] - xr[xr.len() - 1]).abs();
        assert!(dx < 1e-5, "{formulation}: x differs from radau5 by {dx}");
    }
}
