//! Time functions at size (issue 31): a chain of named functions, each
//! defined from the previous one, compiles in linear time and memory (a
//! reference to a name shares the compiled function rather than copying
//! its tree), and a `sum` of many terms evaluates in O(terms).

use std::time::Instant;

use jounce_model::{from_str, ForceKind, Model, TimeFunction};

/// A free body pushed by `fx`, with `functions` as its `[functions]` lines.
fn model_text(fx: &str, functions: &str) -> String {
    format!(
        r#"[model]
name = "time functions at size"
gravity = [0.0, 0.0]
[[bodies]]
name = "b"
mass = 1.0
inertia = 1.0
position = [0.0, 0.0]
points = {{ P = [0.0, 0.0] }}
[[forces]]
name = "push"
type = "point_force"
body = "b"
point = "P"
fx = {fx}
[settings]
t_end = 1.0
[functions]
{functions}"#
    )
}

/// f0 = 1, f_i = f_{i-1} + 1e-4: the chain of `n` named functions.
fn chain(n: usize) -> String {
    let mut lines = String::from("f0 = 1.0\n");
    for i in 1..n {
        lines.push_str(&format!(
            "f{i} = {{ type = \"sum\", terms = [\"f{}\", 1e-4] }}\n",
            i - 1
        ));
    }
    model_text(&format!("\"f{}\"", n - 1), &lines)
}

fn push(model: &Model) -> &TimeFunction {
    match &model.forces[0].kind {
        ForceKind::PointForce { fx, .. } => fx,
        other => panic!("expected the point force, got {other:?}"),
    }
}

/// Old code: every reference copied the referenced tree, O(n²) — the
/// 10 000-function chain took 158 s and 8.6 GB in `jounce check`.
#[test]
fn a_chain_of_ten_thousand_named_functions_compiles_in_linear_time() {
    let n = 10_000;
    let text = chain(n);
    let start = Instant::now();
    let model = from_str(&text, "chain.toml").expect("the chain is a valid model");
    let secs = start.elapsed().as_secs_f64();
    assert!(
        secs < 2.0,
        "the chain of {n} functions took {secs:.2} s to compile"
    );
    // evaluated, it is 1 + (n - 1) 1e-4
    let (f, d1, d2) = push(&model).eval(0.5);
    assert!((f - (1.0 + (n - 1) as f64 * 1e-4)).abs() < 1e-9, "f = {f}");
    assert_eq!((d1, d2), (0.0, 0.0));
}

/// A sum of `n` steps at t = 1 + i 1e-6.
fn sum_of_steps(n: usize) -> Model {
    let terms: Vec<String> = (0..n)
        .map(|i| {
            format!(
                "{{ type = \"step\", time = {}, after = 1e-5 }}",
                1.0 + i as f64 * 1e-6
            )
        })
        .collect();
    let fx = format!("{{ type = \"sum\", terms = [{}] }}", terms.join(", "));
    from_str(&model_text(&fx, ""), "sum.toml").expect("the sum is a valid model")
}

/// Seconds per evaluation of `f` (the best of a few repetitions).
fn seconds_per_eval(f: &TimeFunction) -> f64 {
    let mut best = f64::INFINITY;
    let mut acc = 0.0;
    for rep in 0..5 {
        let start = Instant::now();
        for k in 0..20 {
            acc += f.eval(0.9 + 1e-3 * (rep * 20 + k) as f64).0;
        }
        best = best.min(start.elapsed().as_secs_f64() / 20.0);
    }
    assert!(acc.is_finite());
    best
}

#[test]
fn a_sum_of_a_hundred_thousand_steps_evaluates_in_well_under_a_millisecond() {
    let small = sum_of_steps(10_000);
    let large = sum_of_steps(100_000);
    let (t_small, t_large) = (
        seconds_per_eval(push(&small)),
        seconds_per_eval(push(&large)),
    );
    assert!(
        t_large < 1e-3,
        "one evaluation of a sum of 1e5 steps took {:.3} ms",
        t_large * 1e3
    );
    assert!(
        t_large < 30.0 * t_small.max(1e-6),
        "10x the terms cost {:.1}x the time ({t_small:.2e} s, {t_large:.2e} s)",
        t_large / t_small
    );
    eprintln!("sum of 1e4 steps: {t_small:.2e} s, of 1e5: {t_large:.2e} s per evaluation");
    // past every step the sum is n · 1e-5
    assert!((push(&large).eval(2.0).0 - 1.0).abs() < 1e-9);
}
