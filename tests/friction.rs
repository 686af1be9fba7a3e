//! Regularised Coulomb friction of a penalty contact (issue 11, point 3):
//! a block on an inclined plane slides with the closed-form acceleration
//! g (sin α − μ cos α) above the friction angle and creeps at the law's
//! stated velocity v_ε artanh(tan α / μ) below it.

mod support;

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
    let s = jounce::run::run_model(&incline(alpha, mu), &out, false).unwrap();
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
