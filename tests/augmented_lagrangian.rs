//! Issue 10: the `augmented_lagrangian` formulation on the P-C chain of
//! N parallelograms (`../shared/peers/README.md`): every crank passes the
//! horizontal, where all bars are collinear and Φ_q loses rank, four times
//! in 10 s. At a fixed h = 1e-3 the crank angle at t = 10 s must be within
//! 1e-4 rad of the exact 1-DOF solution θ'' = c sin θ for N = 1, 10 and 40
//! (within 1e-5 at h = 1e-4), with the positions on the constraints to the
//! Newton tolerance; the same motion with a redundant third crank.
//!
//! The exact solution is integrated here by the classical Runge–Kutta
//! method at h = 1e-4 (global error ~1e-13 on this smooth 1-DOF equation).

mod support;

use jounce::run::run_model;
use support::{scratch, Series};

const G: f64 = 9.81;

/// The P-C model as `bench/pc_chain.py` writes it: N + 1 cranks of length
/// 1 pivoted at x = 0..N, N couplers on top, uniform rods of 1 kg, all
/// cranks vertical turning at 1 rad/s; `extra_crank` adds a third crank
/// at x = 0.5 pinned to the first coupler's middle (a redundant loop).
fn pc_chain(n: usize, method: &str, h: f64, t_end: f64, extra_crank: bool) -> String {
    let mut s = format!(
        "[model]\nname = \"P-C N = {n}\"\ngravity = [0.0, {}]\n\n",
        -G
    );
    let crank = |name: &str, x: f64| {
        format!(
            "[[bodies]]\nname = \"{name}\"\nmass = 1.0\ninertia = {}\nposition = [{x:?}, 0.5]\n\
             velocity = [-0.5, 0.0]\nangular_velocity = 1.0\n\
             points = {{ base = [0.0, -0.5], tip = [0.0, 0.5] }}\n\n",
            1.0 / 12.0
        )
    };
    for i in 0..=n {
        s += &crank(&format!("crank{i}"), i as f64);
    }
    for i in 0..n {
        s += &format!(
            "[[bodies]]\nname = \"coupler{i}\"\nmass = 1.0\ninertia = {}\nposition = [{:?}, 1.0]\n\
             velocity = [-1.0, 0.0]\npoints = {{ left = [-0.5, 0.0], right = [0.5, 0.0] }}\n\n",
            1.0 / 12.0,
            i as f64 + 0.5
        );
    }
    let revolute = |name: &str, b1: &str, p1: &str, b2: &str, p2: &str| {
        format!(
            "[[joints]]\nname = \"{name}\"\ntype = \"revolute\"\nbody1 = \"{b1}\"\npoint1 = {p1}\n\
             body2 = \"{b2}\"\npoint2 = {p2}\n\n"
        )
    };
    for i in 0..=n {
        s += &revolute(
            &format!("pivot{i}"),
            "ground",
            &format!("[{:?}, 0.0]", i as f64),
            &format!("crank{i}"),
            "\"base\"",
        );
    }
    for i in 0..n {
        for (side, c) in [("left", i), ("right", i + 1)] {
            s += &revolute(
                &format!("coupler{i}_{side}"),
                &format!("crank{c}"),
                "\"tip\"",
                &format!("coupler{i}"),
                &format!("\"{side}\""),
            );
        }
    }
    if extra_crank {
        s += &crank("crank_mid", 0.5);
        s += &revolute("pivot_mid", "ground", "[0.5, 0.0]", "crank_mid", "\"base\"");
        s += &revolute(
            "coupler0_mid",
            "crank_mid",
            "\"tip\"",
            "coupler0",
            "[0.0, 0.0]",
        );
    }
    s += &format!(
        "[settings]\nt_end = {t_end:?}\noutput_interval = 0.01\n\
         formulation = \"augmented_lagrangian\"\n\n[settings.integrator]\n\
         method = \"{method}\"\nstep = {h:?}\n"
    );
    if method == "generalized_alpha" {
        s += "\n[settings.integrator.params]\nrho_inf = 0.9\n";
    }
    s
}

/// θ(t_end) of the exact reduction T = ½((N+1)/3 + N) θ'², V = g (½(N+1)
/// + N) cos θ, i.e. θ'' = c sin θ, θ(0) = 0, θ'(0) = 1, by RK4 at 1e-4.
fn exact_angle(n: usize, t_end: f64) -> f64 {
    let nf = n as f64;
    let c = G * (0.5 * (nf + 1.0) + nf) / ((nf + 1.0) / 3.0 + nf);
    let f = |y: [f64; 2]| [y[1], c * y[0].sin()];
    let steps = (t_end / 1e-4).round() as usize;
    let h = t_end / steps as f64;
    let mut y = [0.0, 1.0];
    for _ in 0..steps {
        let k1 = f(y);
        let k2 = f([y[0] + 0.5 * h * k1[0], y[1] + 0.5 * h * k1[1]]);
        let k3 = f([y[0] + 0.5 * h * k2[0], y[1] + 0.5 * h * k2[1]]);
        let k4 = f([y[0] + h * k3[0], y[1] + h * k3[1]]);
        for i in 0..2 {
            y[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
    }
    y[0]
}

/// Run a model text; the summary and the series.
fn run_text(text: &str, tag: &str) -> (jounce_io::RunSummary, Series) {
    let model = jounce_model::from_str(text, tag).unwrap();
    let out = scratch(tag);
    let s = run_model(&model, &out, false).unwrap_or_else(|e| panic!("{tag}: {e}"));
    let series = Series::read(&out.join("timeseries.csv"));
    let _ = std::fs::remove_dir_all(&out);
    (s, series)
}

/// Crank-angle error at t = 10 s and the largest |Φ| of a P-C run.
fn pc_error(n: usize, method: &str, h: f64) -> (f64, f64) {
    let (s, series) = run_text(&pc_chain(n, method, h, 10.0, false), "pc");
    assert_eq!(
        s.status, "completed",
        "N = {n}, {method}, h = {h}: {:?}",
        s.error
    );
    let theta = *series.col("crank0.theta").last().unwrap();
    let err = (theta - exact_angle(n, 10.0)).abs();
    eprintln!(
        "P-C N = {n}, {method}, h = {h}: error {err:.2e}, |Phi| {:.1e}, {} Newton iterations, CPU {:.2} s",
        s.accuracy.max_position_violation, s.work.newton_iterations, s.work.cpu_seconds
    );
    (err, s.accuracy.max_position_violation)
}

#[test]
fn pc_chain_passes_its_singular_poses_within_1e_4_at_h_1e_3() {
    // measured: 6.0e-5 (N = 1), 3.4e-5 (N = 10), 3.4e-5 (N = 40),
    // |Phi| <= 1e-10 (the Newton tolerance)
    for n in [1, 10, 40] {
        let (err, phi) = pc_error(n, "generalized_alpha", 1e-3);
        assert!(err <= 1e-4, "N = {n}: crank angle off by {err:e}");
        assert!(phi <= 1.01e-10, "N = {n}: |Phi| = {phi:e}");
    }
    // the trapezoidal rule of the original method (Bayo & Ledesma 1996)
    let (err, _) = pc_error(1, "newmark", 1e-3);
    assert!(err <= 1e-4, "newmark: {err:e}");
}

#[test]
fn pc_chain_within_1e_5_at_h_1e_4() {
    // measured: 5.1e-7 (N = 1)
    let (err, phi) = pc_error(1, "generalized_alpha", 1e-4);
    assert!(err <= 1e-5, "crank angle off by {err:e}");
    assert!(phi <= 1.01e-10, "|Phi| = {phi:e}");
}

/// The full table of the issue: N = 1, 10, 40 at h = 1e-3, 1e-4, 1e-5
/// (about 6 minutes: `cargo test --release --test augmented_lagrangian --
/// --ignored --nocapture`). Measured: every run at h >= 1e-4 meets its
/// bound (errors 6.0e-5, 2.8e-5, 3.5e-5 at 1e-3; 4.6e-7, 1.6e-6, 1.6e-6 at
/// 1e-4) and N = 1 at 1e-5 (4.1e-9). N = 10 and 40 at h = 1e-5 do NOT
/// (issue 10, open): Newton stalls at the first singular pose (t ≈ 0.72 s)
/// in the rounding of the penalty forces α ε |q| (α ∝ 1/h²) and the run
/// fails there; what this test holds them to is that they never complete
/// off the bound.
#[test]
#[ignore]
fn pc_chain_full_table() {
    for n in [1, 10, 40] {
        for h in [1e-3, 1e-4, 1e-5] {
            let bound = if h >= 1e-3 { 1e-4 } else { 1e-5 };
            let model = jounce_model::from_str(
                &pc_chain(n, "generalized_alpha", h, 10.0, false),
                "pc-table",
            )
            .unwrap();
            let out = scratch("pc-table");
            let result = run_model(&model, &out, false);
            match result {
                Ok(s) => {
                    let series = Series::read(&out.join("timeseries.csv"));
                    let theta = *series.col("crank0.theta").last().unwrap();
                    let err = (theta - exact_angle(n, 10.0)).abs();
                    eprintln!(
                        "N = {n}, h = {h}: completed, error {err:.2e}, |Phi| {:.1e}, CPU {:.2} s",
                        s.accuracy.max_position_violation, s.work.cpu_seconds
                    );
                    assert!(err <= bound, "N = {n}, h = {h}: completed {err:e} off");
                    assert!(s.accuracy.max_position_violation <= 1.01e-10);
                }
                Err(e) => {
                    eprintln!("N = {n}, h = {h}: failed: {e}");
                    assert!(h < 1e-4 && n > 1, "N = {n}, h = {h} must complete: {e}");
                }
            }
            let _ = std::fs::remove_dir_all(&out);
        }
    }
}

/// A third crank pinned to the coupler's middle makes one constraint row
/// redundant (rank 11 of 12), which the KKT matrix of the index-1 and
/// index-3 formulations cannot factor; the augmented Lagrangian runs it
/// unchanged, through the singular poses, with the motion of the
/// parallelogram whose left crank carries the third crank's mass and
/// inertia (the third crank is a rigid copy of it shifted by 0.5 m). The
/// two models have other coordinates, so their discretisations differ
/// slightly: before the first singular pose (t ≈ 0.7 s) by 3e-13 at
/// h = 1e-4; through it the coupler's angle by up to 6.2e-8 (measured):
/// along the direction in which Φ_q is singular Φ is quadratic, so |Φ| ≤
/// 1e-10 fixes the positions there only to about its square root. The
/// window ends at 1.2 s: near the top (θ = 2π at t ≈ 2.7 s) the chain is
/// an inverted pendulum that amplifies any difference exponentially
/// (6e-7 by t = 3 s). The 1e-8 agreement of issue 10 away from singular
/// poses is tests/redundant_constraints.rs.
#[test]
fn a_redundant_third_crank_gives_the_motion_of_the_plain_parallelogram() {
    let redundant = pc_chain(1, "generalized_alpha", 1e-4, 1.2, true);
    let plain = pc_chain(1, "generalized_alpha", 1e-4, 1.2, false).replacen(
        "mass = 1.0\ninertia = 0.08333333333333333",
        "mass = 2.0\ninertia = 0.16666666666666666",
        1,
    );
    assert!(plain.contains("mass = 2.0"), "the left crank doubled");
    let (sr, a) = run_text(&redundant, "pc-redundant");
    let (sp, b) = run_text(&plain, "pc-plain");
    assert_eq!(sr.status, "completed", "{:?}", sr.error);
    assert_eq!(sp.status, "completed", "{:?}", sp.error);
    let mut d = 0.0f64;
    for col in [
        "crank0.theta",
        "crank1.x",
        "crank1.y",
        "coupler0.x",
        "coupler0.y",
        "coupler0.theta",
    ] {
        for (x, y) in a.col(col).iter().zip(b.col(col)) {
            d = d.max((x - y).abs());
        }
    }
    // the middle crank moves as the left one, shifted by 0.5 m
    for (x, y) in a.col("crank_mid.x").iter().zip(a.col("crank0.x")) {
        d = d.max((x - y - 0.5).abs());
    }
    eprintln!("redundant vs plain: max difference {d:.2e}");
    assert!(d <= 1e-7, "the motions differ by {d:e}");
}
