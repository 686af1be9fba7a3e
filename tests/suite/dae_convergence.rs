//! Issue 7's convergence and accuracy criteria on real mechanisms (body
//! coordinates): fixed-step order of hht and generalized-α on `index3` in
//! positions, velocities and multipliers; order k of bdf at fixed order
//! k = 1..5 on `index3` and `ggl`; and what adaptive runs of the DAE-level
//! methods deliver against the requested tolerance. Reference: the
//! augmented formulation with dop853 at rtol 1e-12 (q, v and λ agree
//! across formulations, see `formulations_agree.rs`).

use crate::support;

use jounce::run::run_model;
use jounce_model::Model;
use support::{repo, scratch, Series};

/// (q, v, λ) at the output times of a run, row after row in column order.
struct End {
    q: Vec<f64>,
    v: Vec<f64>,
    lambda: Vec<f64>,
}

fn free_slider_crank() -> String {
    let text = std::fs::read_to_string(repo("examples/slider_crank.toml")).unwrap();
    let start = text.find("[[drivers]]").unwrap();
    let end = text.find("[settings]").unwrap();
    format!("{}{}", &text[..start], &text[end..]).replacen(
        "angle = 0.0\npoints = { O",
        "angle = 0.0\nangular_velocity = 6.283185307179586\npoints = { O",
        1,
    )
}

fn model(tag: &str) -> Model {
    match tag {
        "double_pendulum" => {
            jounce_model::load_file(&repo("examples/double_pendulum.toml")).unwrap()
        }
        "slider_crank" => jounce_model::from_str(&free_slider_crank(), tag).unwrap(),
        _ => unreachable!(),
    }
}

/// Output interval of the hht/generalized-α and adaptive tests.
const OUTPUT: f64 = 0.05;

#[allow(clippy::too_many_arguments)]
fn run(
    tag: &str,
    f: &str,
    method: &str,
    step: Option<f64>,
    rtol: f64,
    t_end: f64,
    output: f64,
    params: &[(&str, f64)],
) -> (End, jounce_io::RunSummary) {
    let mut m = model(tag);
    m.settings.t_end = t_end;
    m.settings.output_interval = output;
    m.settings.formulation.kind = jounce::setup::formulation_kind(f).unwrap();
    m.settings.integrator.method = method.into();
    m.settings.integrator.step = step;
    m.settings.integrator.rtol = rtol;
    m.settings.integrator.atol = rtol;
    // The smallest steps of the order fits sit at the rounding floor of the
    // index-2 and -3 components, where a perturbation of λ0 by 1e-16
    // (another, equally accurate KKT solver) moves the last error by 30 %
    // (double pendulum, index3 bdf4: v slope 3.89 dense, 3.78 sparse). The
    // fits were calibrated with the dense KKT LU; keep it so that they
    // measure the methods, not the rounding of the start.
    m.settings.formulation.linear_solver = jounce_model::LinearSolverKind::Dense;
    for (k, v) in params {
        m.settings.integrator.params.insert((*k).into(), *v);
    }
    let out = scratch(&format!("dae-conv-{tag}-{f}-{method}-{params:?}"));
    let s = run_model(&m, &out, None).unwrap_or_else(|e| panic!("{tag} {f} {method}: {e}"));
    let ts = Series::read(&out.join("timeseries.csv"));
    let _ = std::fs::remove_dir_all(&out);
    let mut names: Vec<&String> = ts.columns.keys().collect();
    names.sort();
    let rows = ts.col("t").len();
    let tsr = &ts;
    let names_r = &names;
    let pick = |keep: &dyn Fn(&str) -> bool| -> Vec<f64> {
        let cols: Vec<&String> = names_r.iter().copied().filter(|n| keep(n)).collect();
        let mut out = Vec::with_capacity(rows * cols.len());
        for r in 0..rows {
            for n in &cols {
                out.push(tsr.col(n)[r]);
            }
        }
        out
    };
    let lambda = pick(&|n| n.starts_with("lambda["));
    (
        End {
            q: pick(&|n| n.ends_with(".x") || n.ends_with(".y") || n.ends_with(".theta")),
            v: pick(&|n| n.ends_with(".vx") || n.ends_with(".vy") || n.ends_with(".omega")),
            lambda,
        },
        s,
    )
}

fn diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

fn slope(h: &[f64], e: &[f64]) -> f64 {
    let n = h.len() as f64;
    let x: Vec<f64> = h.iter().map(|v| v.ln()).collect();
    let y: Vec<f64> = e.iter().map(|v| v.ln()).collect();
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let sxy: f64 = x.iter().zip(&y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = x.iter().map(|a| (a - mx) * (a - mx)).sum();
    sxy / sxx
}

/// Output rows of a run to t_end at every `output` s (t = 0 included).
fn n_rows(t_end: f64, output: f64) -> usize {
    (t_end / output).round() as usize + 1
}

fn sci(v: &[f64]) -> String {
    v.iter()
        .map(|x| format!("{x:.1e}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The reference at the outputs every `output` s: augmented + dop853 at
/// rtol = atol = 1e-12, within 2e-12 in q, 2e-11 in v and 7e-11 in λ of
/// the same at 1e-14 (both mechanisms, every 0.01 s to t = 1 and 2 s).
fn reference(tag: &str, t_end: f64, output: f64) -> End {
    run(tag, "augmented", "dop853", None, 1e-12, t_end, output, &[]).0
}

/// Which output rows an error is the largest over.
#[derive(Clone, Copy)]
enum Rows {
    /// The last one (t = t_end), outputs every 0.05 s.
    Last,
    /// Outputs every `every` s, those from t = `from` on.
    From { every: f64, from: f64 },
}

/// Slopes of the largest q, v, λ errors over the rows `rows` over the
/// step sizes `hs`.
fn slopes(
    rows: Rows,
    tag: &str,
    f: &str,
    method: &str,
    hs: &[f64],
    params: &[(&str, f64)],
    t_end: f64,
) -> [f64; 3] {
    let output = match rows {
        Rows::Last => OUTPUT,
        Rows::From { every, .. } => every,
    };
    let r = reference(tag, t_end, output);
    let n = n_rows(t_end, output);
    let first = match rows {
        Rows::Last => n - 1,
        Rows::From { every, from } => (from / every).round() as usize,
    };
    let (mut eq, mut ev, mut el) = (vec![], vec![], vec![]);
    for &h in hs {
        let (e, _) = run(tag, f, method, Some(h), 1e-9, t_end, output, params);
        let d = |a: &[f64], b: &[f64]| {
            let skip = first * (a.len() / n);
            diff(&a[skip..], &b[skip..])
        };
        eq.push(d(&e.q, &r.q));
        ev.push(d(&e.v, &r.v));
        el.push(d(&e.lambda, &r.lambda));
    }
    let s = [slope(hs, &eq), slope(hs, &ev), slope(hs, &el)];
    println!("{tag}: {f} + {method} {params:?}: slopes q {:.2} v {:.2} λ {:.2} (errors q {}, v {}, λ {})", s[0], s[1], s[2], sci(&eq), sci(&ev), sci(&el));
    s
}

/// hht and generalized-α on index3 converge at order 2 in q, v and λ on
/// both mechanisms (the structural driver's starting values keep λ second
/// order, Arnold & Brüls 2007). h = 4e-3 .. 5e-4, t = 0.5 s.
#[test]
fn hht_and_generalized_alpha_are_second_order_in_q_v_lambda_on_index3() {
    let hs = [4e-3, 2e-3, 1e-3, 5e-4];
    for tag in ["double_pendulum", "slider_crank"] {
        for method in ["hht", "generalized_alpha"] {
            let s = slopes(Rows::Last, tag, "index3", method, &hs, &[], 0.5);
            for (what, x) in ["q", "v", "λ"].iter().zip(s) {
                assert!((x - 2.0).abs() < 0.2, "{tag} {method}: {what} slope {x}");
            }
        }
    }
}

/// The energy-conserving trapezoidal rule (newmark, energy_conserving = 1:
/// discrete-gradient constraint forces, velocities projected onto the
/// velocity constraints at the step's kinetic energy, λ_{n+1} extrapolated
/// from the step multipliers λ_{n±1/2}) converges at order 2 in q, v and λ
/// on index3, both mechanisms, h = 4e-3 .. 5e-4, t = 0.5 s.
#[test]
fn energy_conserving_newmark_is_second_order_in_q_v_lambda_on_index3() {
    let hs = [4e-3, 2e-3, 1e-3, 5e-4];
    for tag in ["double_pendulum", "slider_crank"] {
        let s = slopes(
            Rows::Last,
            tag,
            "index3",
            "newmark",
            &hs,
            &[("energy_conserving", 1.0)],
            0.5,
        );
        for (what, x) in ["q", "v", "λ"].iter().zip(s) {
            assert!((x - 2.0).abs() < 0.2, "{tag}: {what} slope {x}");
        }
    }
}

/// bdf at fixed order k = 1..5 converges at order k in q, v and λ on
/// index3 and ggl, on both mechanisms (issue 7), every slope within 0.2
/// of k. Error: the largest over the outputs every 0.01 s from t = 0.05 s
/// to t_end (double pendulum 1 s; slider-crank 2 s, two turns of the
/// crank), fitted over `n` step sizes halving from h0 (each divides
/// 0.01 s: every output is a step point). Measured slopes q v λ:
///
/// | mechanism       | k | h0      | n | index3         | ggl            |
/// |-----------------|---|---------|---|----------------|----------------|
/// | double pendulum | 1 | 2e-3    | 4 | 0.98 0.97 0.96 | 0.98 0.98 0.97 |
/// |                 | 2 | 5e-3    | 4 | 1.98 2.00 1.99 | 1.98 2.00 1.99 |
/// |                 | 3 | 5e-3    | 4 | 3.01 3.01 3.01 | 3.01 3.00 3.04 |
/// |                 | 4 | 5e-3    | 4 | 3.95 4.01 4.02 | 3.98 4.00 4.00 |
/// |                 | 5 | 5e-3    | 3 | 5.04 4.95 4.97 | 5.01 4.96 4.97 |
/// | slider-crank    | 1 | 1.25e-4 | 4 | 0.96 0.95 0.95 | 0.97 0.97 0.97 |
/// |                 | 2 | 1e-3    | 4 | 1.99 1.98 1.98 | 1.99 1.98 1.98 |
/// |                 | 3 | 2.5e-3  | 4 | 3.02 3.03 3.04 | 3.02 3.03 3.04 |
/// |                 | 4 | 5e-3    | 3 | 3.93 3.90 3.98 | 4.03 4.03 3.96 |
/// |                 | 5 | 5e-3    | 3 | 5.01 5.10 5.00 | 5.07 5.13 5.06 |
///
/// What the choices rest on (each measured):
/// - From t = 0.05 s (0.05 ≥ 2k h for every h here): the index-3
///   multipliers see the first steps after the start through two
///   difference quotients (÷ h²) of positions that pass from the start
///   values to the BDF solution; Brenan, Campbell & Petzold (Thm. 3.2.3)
///   have order k only after the first k + 1 steps. At bdf5 on the
///   slider-crank, h = 1.25e-3, λ is 1.2e-4 off over steps 6..9 and
///   6.4e-6 over steps 10..20; on the double pendulum, h = 6.25e-4, 4e-5
///   at steps 6..9, falling by about 0.45 a step. With the outputs at
///   0.01..0.04 s, which fall into those steps for some h, index3 λ at
///   k = 5 fits 4.53 (double pendulum) and 3.87 (slider-crank); no other
///   slope moves.
/// - Outputs every 0.01 s, so that the largest is that over the
///   trajectory: every 0.05 s, the double pendulum's index3 bdf5 λ fits
///   5.67 on the same steps, its largest error sampled at t = 0.60 s
///   (3.1e-5, 5.8e-7 at h = 2.5e-3, 1.25e-3), in the whip of the second
///   link, where one instant is not yet h⁵; every 0.01 s it is at
///   0.59 s (5.3e-5, 1.6e-6). To t = 0.5 s the largest error sits at
///   the end, in the whip's onset, not yet asymptotic at k = 5 above the
///   floor (ggl λ fits 4.4–4.7 on any 3 or 4 steps from 5e-3 to
///   1.25e-3, index3 3.0–5.0).
/// - The start (an inner run at 1e-12) is not the limit: with its
///   tolerance at 1e-10 or 1e-14 no slope above moves by more than 0.03.
/// - The reference is not the limit: it is 1000× below every fitted
///   error ([`reference`]).
/// - The smallest steps: at k = 5 the index-3 multipliers reach their
///   rounding floor (ε|q| through two BDF5 difference quotients, about
///   1e-13/h²) at the next halving on the double pendulum (4.1e-7 at
///   6.25e-4 where h⁵ gives 5e-8), below 6.25e-4 on the slider-crank
///   (2.8e-7 at 4.2e-4 where h⁵ gives 9e-8). A fourth halving on the
///   slider-crank fits 3.93 3.86 3.95 | 4.00 4.00 3.91 at k = 4 and
///   4.96 5.03 4.97 | 5.10 5.13 5.11 at k = 5.
/// - The slider-crank at k = 5 has local slopes 4.8–5.3 between 5e-3 and
///   1.25e-3 (ggl down to 3e-4): its error is not yet a clean h⁵ where
///   it can be measured, and the fits are 5.0–5.1. BDF1 on it is still
///   pre-asymptotic at h = 2.5e-4 (q off by 0.1, local slopes 0.77–0.86
///   to 1.25e-4).
/// - The fixed-step Newton iteration goes to round-off (`dae/bdf.rs`):
///   with its former stop (s = 1e-14 in weights scaled by h² for λ) the
///   double pendulum's index-3 λ fitted 3.64 (k = 4) and 4.47 (k = 5) on
///   these steps, 3.1e-6 instead of 1.3e-6 and 1.6e-6 at the smallest.
#[test]
fn bdf_of_fixed_order_k_converges_at_order_k() {
    // (mechanism, t_end, per k: the largest step h0 and the number n of
    // step sizes, each half the last)
    let sweeps: [(&str, f64, [(f64, usize); 5]); 2] = [
        (
            "double_pendulum",
            1.0,
            [(2e-3, 4), (5e-3, 4), (5e-3, 4), (5e-3, 4), (5e-3, 3)],
        ),
        (
            "slider_crank",
            2.0,
            [(1.25e-4, 4), (1e-3, 4), (2.5e-3, 4), (5e-3, 3), (5e-3, 3)],
        ),
    ];
    let rows = Rows::From {
        every: 0.01,
        from: 0.05,
    };
    for (tag, t_end, per_k) in sweeps {
        for f in ["index3", "ggl"] {
            for (k, (h0, points)) in (1..=5usize).zip(per_k) {
                let hs: Vec<f64> = (0..points).map(|i| h0 / f64::from(1 << i)).collect();
                let s = slopes(rows, tag, f, "bdf", &hs, &[("max_order", k as f64)], t_end);
                for (what, x) in ["q", "v", "λ"].iter().zip(s) {
                    assert!(
                        (x - k as f64).abs() < 0.2,
                        "{tag} {f} bdf{k}: {what} slope {x}"
                    );
                }
            }
        }
    }
}

/// Adaptive runs on the double pendulum at rtol = atol = 1e-4, 1e-6, 1e-8
/// to t = 1 s: the final position and velocity errors in units of the
/// tolerance, printed as a table with accepted and rejected steps and
/// force/residual evaluations (`-- --nocapture`). Issue 7 asks for "within
/// 10x", and every pairing below is held to it. Measured (q, v in
/// tolerances, worst of the three; steps at 1e-4, 1e-6, 1e-8):
///
/// | pairing             | q   | v   | steps            | before (q, v; steps)        |
/// |---------------------|-----|-----|------------------|-----------------------------|
/// | index3 + hht        | 0.5 | 3.5 | 791 7933 79 365  | 3065, 36 596; 48 171 804    |
/// | index3 + gen.-α     | 0.5 | 3.5 | 712 7148 71 522  | 2714, 31 967; 49 168 780    |
/// | index3 + bdf        | 0.5 | 6.4 | 112 277 541      | 22, 308; 55 117 244         |
/// | index3 + radau5     | 0.9 | 4.1 | 54 135 361       | 22, 5556; 32 44 91          |
/// | ggl + bdf           | 0.0 | 0.7 | 155 389 891      | 3.1, 98; 80 171 336         |
/// | ggl + radau5        | 1.0 | 6.5 | 26 54 112        | (unchanged)                 |
/// | augmented + radau5  | 0.3 | 2.4 | 28 55 117        | (the index-1 baseline)      |
///
/// "Before" is error per step: a method of order p over N steps leaves a
/// global error of about N tol ∝ tol^{p/(p+1)}, and radau5.f and DASSL
/// relax the tolerance of the index-2 velocities of index3 by 1/h. Now
/// the structural methods (`structural/driver.rs`, "Control law"), bdf
/// and radau5 on index3 (`dae/bdf.rs`, `dae/radau.rs`) scale their
/// per-step tolerance by σ = 0.1 rtol^{1/p}
/// ([`jounce_integrate::controller::proportional_scale`]), which makes the
/// global error proportional to rtol.
#[test]
fn adaptive_dae_runs_against_the_requested_tolerance() {
    let r = reference("double_pendulum", 1.0, OUTPUT);
    let cases: [(&str, &str, f64, f64); 7] = [
        // (formulation, method, bound on q error / tol, bound on v error / tol)
        ("index3", "hht", 10.0, 10.0),
        ("index3", "generalized_alpha", 10.0, 10.0),
        ("index3", "bdf", 10.0, 10.0),
        ("index3", "radau5", 10.0, 10.0),
        ("ggl", "bdf", 10.0, 10.0),
        ("ggl", "radau5", 10.0, 10.0),
        ("augmented", "radau5", 10.0, 10.0),
    ];
    for (f, method, bq, bv) in cases {
        for tol in [1e-4, 1e-6, 1e-8] {
            let (e, s) = run("double_pendulum", f, method, None, tol, 1.0, OUTPUT, &[]);
            let nq = r.q.len() / n_rows(1.0, OUTPUT);
            let last = |a: &[f64]| a[a.len() - nq..].to_vec();
            let (xq, xv) = (
                diff(&last(&e.q), &last(&r.q)) / tol,
                diff(&last(&e.v), &last(&r.v)) / tol,
            );
            let warned = s.diagnostics.iter().any(|d| d.contains("accuracy warning"));
            println!(
                "| {f} | {method} | {tol:.0e} | {} | {} | {} | {xq:.1} | {xv:.1} | {} |",
                s.work.steps_accepted,
                s.work.steps_rejected,
                s.work.rhs_evaluations,
                if warned { "warns" } else { "" }
            );
            assert!(xq <= bq, "{f} + {method} at {tol:e}: q error {xq:.1} x tol");
            assert!(xv <= bv, "{f} + {method} at {tol:e}: v error {xv:.1} x tol");
        }
    }
}
