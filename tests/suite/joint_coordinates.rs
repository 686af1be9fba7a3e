//! The `joint` formulation on shipped models, through `jounce run`:
//!
//! * studies.md S1 in joint coordinates equals the body-coordinate
//!   (`augmented`) run within 1e-9 rad at t = 1 (dop853, rtol = atol =
//!   1e-12), and the closed-form S1 equations of studies.md
//!   (M = [[3 + 2 cos φ2, 1 + cos φ2], [1 + cos φ2, 1]]) integrated the same
//!   way;
//! * the closed loops (four-bar, driven slider-crank) agree with
//!   `augmented` at t = 1;
//! * issue 7's S1 energy criterion on joint coordinates: newmark
//!   (β = 1/4, γ = 1/2) at h = 1e-3 over 20 s, max relative energy error
//!   ≤ 5e-3 in every case but the chaotic (1e2, 1e2), where ≤ 1e-1.

use crate::support;

use jounce::run::Overrides;
use jounce_integrate::{method, Discard, EvalError, OdeProblem, SolverOptions};
use jounce_studies::study::S1_CASES;
use support::{run_example, Series};

fn tight(method: &str, formulation: &str, t_end: f64) -> Overrides {
    Overrides {
        method: Some(method.into()),
        formulation: Some(formulation.into()),
        rtol: Some(1e-12),
        atol: Some(1e-12),
        t_end: Some(t_end),
        ..Default::default()
    }
}

fn last(s: &Series, col: &str) -> f64 {
    *s.col(col).last().unwrap()
}

/// Largest difference of the multiplier columns at the last row, relative
/// to the largest multiplier of `b`.
fn multiplier_difference(a: &Series, b: &Series) -> f64 {
    let names: Vec<&String> = b
        .columns
        .keys()
        .filter(|k| k.starts_with("lambda["))
        .collect();
    assert!(!names.is_empty());
    let scale = names.iter().fold(1.0_f64, |m, k| m.max(last(b, k).abs()));
    names
        .iter()
        .map(|k| (last(a, k) - last(b, k)).abs() / scale)
        .fold(0.0, f64::max)
}

/// studies.md S1 in its own joint coordinates: M(φ) φ'' = −K φ − h(φ, φ')
/// with M = [[3 + 2 cos φ2, 1 + cos φ2], [1 + cos φ2, 1]] and
/// h = (−sin φ2 (2 φ1' φ2' + φ2'²), sin φ2 φ1'²).
struct S1ClosedForm {
    k1: f64,
    k2: f64,
}

impl OdeProblem for S1ClosedForm {
    fn dim(&self) -> usize {
        4
    }

    fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        let (p1, p2, w1, w2) = (y[0], y[1], y[2], y[3]);
        let (s, c) = p2.sin_cos();
        let (m11, m12, m22) = (3.0 + 2.0 * c, 1.0 + c, 1.0);
        let f1 = -self.k1 * p1 + s * (2.0 * w1 * w2 + w2 * w2);
        let f2 = -self.k2 * p2 - s * w1 * w1;
        let det = m11 * m22 - m12 * m12;
        dy[0] = w1;
        dy[1] = w2;
        dy[2] = (m22 * f1 - m12 * f2) / det;
        dy[3] = (m11 * f2 - m12 * f1) / det;
        Ok(())
    }
}

fn closed_form_at(k1: f64, k2: f64, t_end: f64) -> [f64; 2] {
    let opts = SolverOptions {
        rtol: 1e-12,
        atol: 1e-12,
        ..SolverOptions::default()
    };
    let mut stepper = method::build("dop853", &opts).unwrap();
    let mut p = S1ClosedForm { k1, k2 };
    let s = jounce_integrate::solve(
        &mut p,
        stepper.as_mut(),
        0.0,
        &[0.0, 0.0, 100.0, 100.0],
        t_end,
        &opts,
        &mut Discard,
    )
    .unwrap();
    [s.y[0], s.y[1]]
}

#[test]
fn s1_in_joint_coordinates_equals_body_coordinates_and_the_closed_form() {
    for (k1, k2) in [("0", "0"), ("1e2", "1e2"), ("1e6", "1e6"), ("0", "1e4")] {
        let model = format!("examples/studies/s1_k1_{k1}_k2_{k2}.toml");
        let (sj, joint) = run_example(&model, tight("dop853", "joint", 1.0), "s1j");
        let (sa, body) = run_example(&model, tight("dop853", "augmented", 1.0), "s1a");
        assert_eq!(
            (sj.status.as_str(), sa.status.as_str()),
            ("completed", "completed")
        );
        assert_eq!(last(&joint, "t"), 1.0);
        let cf = closed_form_at(k1.parse().unwrap(), k2.parse().unwrap(), 1.0);
        let (t1, t2) = (last(&joint, "mass1.theta"), last(&joint, "mass2.theta"));
        let d_body = (t1 - last(&body, "mass1.theta"))
            .abs()
            .max((t2 - last(&body, "mass2.theta")).abs());
        let d_closed = (t1 - cf[0]).abs().max((t2 - (cf[0] + cf[1])).abs());
        eprintln!(
            "S1 ({k1}, {k2}) at t = 1: |joint − body| = {d_body:.2e} rad, |joint − closed form| = \
             {d_closed:.2e} rad; rhs evaluations joint {} body {}",
            sj.work.rhs_evaluations, sa.work.rhs_evaluations
        );
        assert!(d_body <= 1e-9, "({k1}, {k2}): joint vs body {d_body:e} rad");
        assert!(
            d_closed <= 1e-9,
            "({k1}, {k2}): joint vs closed form {d_closed:e} rad"
        );
        // the output is in body coordinates, on the original joints
        assert!(sj.accuracy.max_position_violation < 1e-12);
        assert!(sj.accuracy.max_velocity_violation < 1e-9);
        assert!(sj.accuracy.max_relative_energy_error < 1e-9);
    }
}

/// Trees with gravity, translational joints, spring-dampers and
/// rotational springs: the force elements applied through forward
/// kinematics in joint coordinates give the body-coordinate motion (point
/// forces and torques: `crates/jounce-mechanics/tests/suite/joint_coordinates.rs`).
#[test]
fn trees_with_every_force_element_agree_with_the_body_coordinates() {
    for (file, col, t_end) in [
        ("examples/double_pendulum.toml", "link2.theta", 1.0),
        (
            "examples/studies/s5_stiff_double_pendulum.toml",
            "link2.theta",
            1.0,
        ),
        ("examples/studies/s2_test_1c.toml", "mass2.x", 1.0),
    ] {
        let (sj, joint) = run_example(file, tight("dop853", "joint", t_end), "treej");
        let (_, aug) = run_example(file, tight("dop853", "augmented", t_end), "treea");
        assert_eq!(sj.status, "completed", "{file}: {:?}", sj.error);
        let d = (last(&joint, col) - last(&aug, col)).abs();
        let dl = multiplier_difference(&joint, &aug);
        eprintln!(
            "{file}: {col} at t = {t_end}: |joint − augmented| = {d:.2e}, multipliers {dl:.2e}"
        );
        assert!(d <= 1e-8, "{file}: {col} differs by {d:e}");
        assert!(dl <= 1e-6, "{file}: multipliers differ by {dl:e}");
    }
}

#[test]
fn closed_loops_agree_with_the_body_coordinates() {
    for (file, body, col) in [
        ("examples/four_bar.toml", "rocker", "theta"),
        ("examples/slider_crank.toml", "slider", "x"),
    ] {
        let (sj, joint) = run_example(file, tight("dop853", "joint", 1.0), "loopj");
        let (_, aug) = run_example(file, tight("dop853", "augmented", 1.0), "loopa");
        assert_eq!(sj.status, "completed", "{file}: {:?}", sj.error);
        let name = format!("{body}.{col}");
        let d = (last(&joint, &name) - last(&aug, &name)).abs();
        let dl = multiplier_difference(&joint, &aug);
        eprintln!(
            "{file}: {name} at t = 1: |joint − augmented| = {d:.2e}, multipliers {dl:.2e}, |Φ| ≤ {:.1e}",
            sj.accuracy.max_position_violation
        );
        assert!(dl <= 1e-6, "{file}: multipliers differ by {dl:e}");
        assert!(d <= 1e-8, "{file}: {name} differs by {d:e}");
        assert!(sj.accuracy.max_position_violation < 1e-8);
    }
}

#[test]
fn s1_newmark_in_joint_coordinates_meets_the_books_energy_errors() {
    let mut table = String::from("case (k1, k2) | max rel. energy error | CPU s | Newton it.\n");
    let mut failures = Vec::new();
    for (k1, k2) in S1_CASES {
        let model = format!("examples/studies/s1_k1_{k1}_k2_{k2}.toml");
        let (s, series) = run_example(
            &model,
            Overrides {
                method: Some("newmark".into()),
                formulation: Some("joint".into()),
                step: Some(1e-3),
                ..Default::default()
            },
            "s1nm",
        );
        assert_eq!(s.status, "completed", "({k1}, {k2}): {:?}", s.error);
        assert_eq!(s.work.steps_accepted, 20_000);
        assert_eq!(last(&series, "t"), 20.0);
        let de = s.accuracy.max_relative_energy_error;
        table += &format!(
            "({k1}, {k2}) | {de:.2e} | {:.3} | {}\n",
            s.work.cpu_seconds, s.work.newton_iterations
        );
        let bound = if (k1, k2) == ("1e2", "1e2") {
            1e-1
        } else {
            5e-3
        };
        if !(de <= bound) {
            failures.push(format!("({k1}, {k2}): {de:e} > {bound:e}"));
        }
    }
    eprintln!("{table}");
    assert!(failures.is_empty(), "{failures:?}\n{table}");
}

/// Baumgarte terms on the closure constraints (`[settings.baumgarte]`)
/// keep the four-bar's cut joint closed: hht at rtol 1e-6 lets |Φ| drift
/// to ~7e-4 without them, and they cut it by at least 10x.
#[test]
fn baumgarte_terms_keep_the_closure_constraints_closed() {
    use jounce::run::{apply_overrides, run_model};
    let mut worst = Vec::new();
    for (alpha, beta) in [(0.0, 0.0), (20.0, 20.0)] {
        let mut model = jounce_model::load_file(&support::repo("examples/four_bar.toml")).unwrap();
        let o = Overrides {
            method: Some("hht".into()),
            formulation: Some("joint".into()),
            rtol: Some(1e-6),
            atol: Some(1e-8),
            ..Default::default()
        };
        apply_overrides(&mut model, &o).unwrap();
        model.settings.formulation.baumgarte_alpha = alpha;
        model.settings.formulation.baumgarte_beta = beta;
        let out = support::scratch("baumgarte");
        let s = run_model(&model, &out, None).unwrap();
        let _ = std::fs::remove_dir_all(&out);
        eprintln!(
            "four-bar, joint + hht, Baumgarte ({alpha}, {beta}): max |Φ| = {:.2e}",
            s.accuracy.max_position_violation
        );
        worst.push(s.accuracy.max_position_violation);
    }
    assert!(
        worst[0] > 1e-5,
        "the unstabilised run should drift: {worst:?}"
    );
    assert!(worst[1] < worst[0] / 10.0, "{worst:?}");
}
