//! Redundant constraints across jounce (issue 10): a parallelogram with a
//! redundant third crank runs with every formulation that accepts
//! redundancy and moves exactly like its non-redundant twin (the third
//! crank removed, the left crank's mass and inertia doubled), within 1e-8
//! at every output time; the reactions written are the minimum-norm ones,
//! the same for every formulation, and the run says they are not unique;
//! `jounce check` reports each redundant row's consistency; inconsistent
//! redundant rows (a crank 1 mm too long, a redundant driver that parts
//! from the other) and `joint` are refused before integrating; a chain of
//! 32 pendulums with a pin modelled twice runs on the sparse path.
//!
//! Models: `tests/data/parallelogram_*.toml` (cranks hanging down,
//! released at 0.7 rad: no singular pose in the window).

use crate::support;

use jounce::check::check_model;
use jounce::run::run_model;
use jounce::RunError;
use jounce_io::RunSummary;
use jounce_mechanics::{
    assemble, IndependentRows, MechanicalSystem, MinimumNormReactions, PlanarSystem,
};
use jounce_model::{LinearSolverKind, Model};
use nalgebra::{DMatrix, DVector};
use support::{repo, scratch, Series};

const REDUNDANT: &str = "tests/data/parallelogram_third_crank.toml";
const TWIN: &str = "tests/data/parallelogram_doubled_crank.toml";

fn load(rel: &str) -> Model {
    jounce_model::load_file(&repo(rel)).unwrap_or_else(|e| panic!("{e}"))
}

/// Run `model` with formulation `f` and method `method` (fixed `step`, or
/// rtol 1e-11, atol 1e-12).
fn run(
    mut model: Model,
    f: &str,
    method: &str,
    step: Option<f64>,
    tag: &str,
) -> (RunSummary, Series) {
    model.settings.formulation.kind = jounce::setup::formulation_kind(f).unwrap();
    model.settings.integrator.method = method.into();
    model.settings.integrator.rtol = 1e-11;
    model.settings.integrator.atol = 1e-12;
    model.settings.integrator.step = step;
    let out = scratch(tag);
    let s = run_model(&model, &out, None).unwrap_or_else(|e| panic!("{tag}: {e}"));
    let ts = Series::read(&out.join("timeseries.csv"));
    let _ = std::fs::remove_dir_all(&out);
    (s, ts)
}

/// max |a − b| over the coordinate columns of the bodies both models have,
/// at every output time.
fn position_difference(a: &Series, b: &Series) -> f64 {
    assert_eq!(a.col("t"), b.col("t"), "the same output times");
    let mut worst = 0.0_f64;
    for body in ["crank0", "crank1", "coupler0"] {
        for c in ["x", "y", "theta"] {
            let name = format!("{body}.{c}");
            for (x, y) in a.col(&name).iter().zip(b.col(&name)) {
                worst = worst.max((x - y).abs());
            }
        }
    }
    worst
}

/// The multipliers of the y row of joint `joint`.
fn lam_y(s: &Series, joint: &str) -> Vec<f64> {
    s.col(&format!("lambda[joint '{joint}' (y)]")).to_vec()
}

/// Every formulation that accepts redundancy, with a method that runs it;
/// (formulation, method, fixed step).
const RUNS: [(&str, &str, Option<f64>); 11] = [
    ("augmented", "dopri5", None),
    ("partitioning", "dopri5", None),
    ("projection", "dopri5", None),
    ("state_space", "dopri5", None),
    ("augmented", "radau5", None),
    ("index3", "radau5", None),
    ("index3", "generalized_alpha", Some(1e-3)),
    ("ggl", "radau5", None),
    ("odae", "bdf", None),
    // all rows, no selection: the augmented Lagrangian needs no full rank
    ("augmented_lagrangian", "generalized_alpha", Some(1e-3)),
    ("augmented_lagrangian", "newmark", Some(1e-3)),
];

#[test]
fn third_crank_moves_like_the_non_redundant_twin_with_every_formulation() {
    let (_, reference) = run(load(REDUNDANT), "augmented", "dopri5", None, "red-ref");
    let ref_lambda: Vec<Vec<f64>> = reference
        .columns
        .keys()
        .filter(|k| k.starts_with("lambda["))
        .map(|k| reference.col(k).to_vec())
        .collect();
    let lambda_scale = ref_lambda
        .iter()
        .flatten()
        .fold(0.0_f64, |m, x| m.max(x.abs()));
    for (f, method, step) in RUNS {
        let tag = format!("red-{f}-{method}");
        let (s, red) = run(load(REDUNDANT), f, method, step, &tag);
        let (_, twin) = run(load(TWIN), f, method, step, &format!("twin-{f}-{method}"));
        assert_eq!(s.status, "completed");
        let d = position_difference(&red, &twin);
        // the total vertical reaction of the ground is unique: the three
        // cranks of one model carry what the two of the other carry
        let ground = |s: &Series, rows: &[&str]| -> Vec<f64> {
            let cols: Vec<Vec<f64>> = rows.iter().map(|r| lam_y(s, r)).collect();
            (0..cols[0].len())
                .map(|i| cols.iter().map(|c| c[i]).sum())
                .collect()
        };
        let g_red = ground(&red, &["pivot0", "pivot1", "pivot_mid"]);
        let g_twin = ground(&twin, &["pivot0", "pivot1"]);
        let dg = g_red
            .iter()
            .zip(&g_twin)
            .fold(0.0_f64, |m, (a, b)| m.max((a - b).abs()));
        // the minimum-norm reactions agree between formulations
        let dl = reference
            .columns
            .keys()
            .filter(|k| k.starts_with("lambda["))
            .flat_map(|k| reference.col(k).iter().zip(red.col(k)))
            .fold(0.0_f64, |m, (a, b)| m.max((a - b).abs()));
        println!(
            "{f:>12} {method:>17}: max position difference {d:.2e}, ground reaction {dg:.2e}, \
             lambda vs augmented/dopri5 {dl:.2e} (scale {lambda_scale:.2e})"
        );
        assert!(d <= 1e-8, "{f}/{method}: positions differ by {d:e}");
        // multipliers: algebraic variables of index-3 and index-2 DAEs are
        // less accurate than the states (ground reaction and λ vs
        // augmented/dopri5, measured: index3 with radau5 at rtol 1e-11
        // 5.7e-5 and 1.3e-5, ggl 6.0e-6 and 1.8e-6, generalized-α at
        // h = 1e-3 1.0e-7 and 8.8e-5, of |λ| up to 18 N; the ODE
        // formulations 5e-9 at most)
        let lambda_tol = if matches!(f, "index3" | "ggl" | "augmented_lagrangian") {
            1e-5
        } else {
            1e-8
        };
        assert!(
            dg <= lambda_tol * lambda_scale.max(1.0) * 10.0,
            "{f}/{method}: ground reaction differs by {dg:e}"
        );
        assert!(
            dl <= lambda_tol * lambda_scale.max(1.0) * 10.0,
            "{f}/{method}: minimum-norm multipliers differ from augmented's by {dl:e}"
        );
        assert_eq!(s.non_unique_reactions, vec!["joint 'coupler0_mid' (y)"]);
        assert!(
            s.diagnostics.iter().any(|d| d.contains("not unique")
                && d.contains("minimum-norm")
                && d.contains("coupler0_mid")),
            "{f}: {:?}",
            s.diagnostics
        );
    }
}

/// Penalty runs all rows; its constraint error is O(1/α), so it is
/// compared at its own accuracy: the redundant model's difference from the
/// twin (run by augmented) is within 3x the twin's own penalty error.
#[test]
fn penalty_runs_the_third_crank_to_its_own_accuracy() {
    let (s, red) = run(load(REDUNDANT), "penalty", "radau5", None, "pen-red");
    let (_, twin_pen) = run(load(TWIN), "penalty", "radau5", None, "pen-twin");
    let (_, exact) = run(load(TWIN), "augmented", "dopri5", None, "pen-exact");
    let own = position_difference(&twin_pen, &exact);
    let d = position_difference(&red, &exact);
    println!("penalty: redundant vs exact {d:.2e}, twin's own penalty error {own:.2e}");
    assert!(d <= 3.0 * own.max(1e-10), "{d:e} vs {own:e}");
    assert_eq!(s.non_unique_reactions, vec!["joint 'coupler0_mid' (y)"]);
}

/// λ_mn from a formulation run on the independent rows: Φ_qᵀλ_mn is the
/// constraint force the formulation computed, λ_mn is orthogonal to the
/// left null space of Φ_q (found independently by SVD), it is the
/// pseudo-inverse solution, penalty (all rows) gives the same, and the
/// three identical cranks carry the weight equally (the middle crank's top
/// joint a nonzero share).
#[test]
fn minimum_norm_reactions_reproduce_the_constraint_force() {
    let model = load(REDUNDANT);
    let sys = PlanarSystem::from_model(&model).unwrap();
    let a = assemble(&sys, 0.0, &sys.initial_q(), &sys.initial_v(), 1e-12).unwrap();
    assert_eq!(a.redundant, vec!["joint 'coupler0_mid' (y)"]);
    let (n, m) = (sys.nq(), sys.nc());
    let rows = IndependentRows::new(&sys, &a.redundant_rows);
    let settings = jounce_formulation::FormulationSettings::default();
    let mut form = jounce_formulation::build("augmented", &settings, &rows).unwrap();
    let y = form.initial_state(0.0, &a.q, &a.v).unwrap();
    let (mut q, mut v, mut lk) = (vec![0.0; n], vec![0.0; n], vec![0.0; m - 1]);
    form.physical_state(0.0, &y, &mut q, &mut v, &mut lk)
        .unwrap();
    let mut jac = DMatrix::zeros(m, n);
    sys.constraint_jacobian(0.0, &q, &mut jac);
    let mut full = DVector::zeros(m);
    for (&r, &l) in rows.kept_rows().iter().zip(&lk) {
        full[r] = l;
    }
    let force = jac.transpose() * &full;

    let mut mn = MinimumNormReactions::new(&sys, &a.redundant_rows, false);
    mn.input_mut().copy_from_slice(&lk);
    let mut lambda = vec![0.0; m];
    assert!(mn.apply(&sys, 0.0, &q, &mut lambda));
    let l = DVector::from_column_slice(&lambda);
    let f_mn = jac.transpose() * &l;
    assert!(
        (&f_mn - &force).amax() <= 1e-12 * force.amax(),
        "Φ_qᵀλ_mn differs from the constraint force by {:e}",
        (&f_mn - &force).amax()
    );
    // left null space of Φ_q by SVD: the columns of U with σ ≈ 0
    let svd = jac.clone().svd(true, false);
    let u = svd.u.unwrap();
    let smax = svd.singular_values.max();
    let null: Vec<usize> = (0..m)
        .filter(|&i| svd.singular_values[i] <= 1e-10 * smax)
        .collect();
    assert_eq!(null.len(), 1, "one redundant row");
    let proj = u.column(null[0]).dot(&l);
    assert!(proj.abs() <= 1e-12 * l.amax(), "λ_mn·N = {proj:e}");
    // the pseudo-inverse solution of Φ_qᵀλ = f
    let pinv = jac
        .transpose()
        .svd(true, true)
        .solve(&force, 1e-10 * smax)
        .unwrap();
    assert!((&pinv - &l).amax() <= 1e-10 * l.amax());

    // equal shares of the three cranks, nonzero in the redundant row
    let label = |r: usize| sys.constraint_label(r);
    let at = |name: &str| (0..m).find(|&r| label(r) == name).unwrap();
    let ys: Vec<f64> = ["pivot0", "pivot1", "pivot_mid"]
        .iter()
        .map(|p| lambda[at(&format!("joint '{p}' (y)"))])
        .collect();
    assert!(
        (ys[0] - ys[2]).abs() <= 1e-10 * ys[0].abs()
            && (ys[1] - ys[2]).abs() <= 1e-10 * ys[0].abs(),
        "{ys:?}"
    );
    let mid = lambda[at("joint 'coupler0_mid' (y)")];
    assert!(
        mid.abs() > 0.05 * l.amax(),
        "coupler0_mid (y) carries {mid}"
    );

    // penalty, all rows: the same minimum-norm multipliers to its accuracy
    let mut pen = jounce_formulation::build("penalty", &settings, &sys).unwrap();
    let yp = pen.initial_state(0.0, &a.q, &a.v).unwrap();
    let mut mn_all = MinimumNormReactions::new(&sys, &a.redundant_rows, true);
    pen.physical_state(0.0, &yp, &mut q, &mut v, mn_all.input_mut())
        .unwrap();
    let raw = mn_all.input_mut().to_vec();
    let mut lp = vec![0.0; m];
    assert!(mn_all.apply(&sys, 0.0, &q, &mut lp));
    let f_raw = jac.transpose() * DVector::from_column_slice(&raw);
    let f_pen = jac.transpose() * DVector::from_column_slice(&lp);
    assert!((&f_raw - &f_pen).amax() <= 1e-12 * f_raw.amax());
    let diff = lp
        .iter()
        .zip(&lambda)
        .fold(0.0_f64, |acc, (x, y)| acc.max((x - y).abs()));
    println!("penalty vs augmented minimum-norm multipliers at t = 0: {diff:.2e}");
    assert!(diff <= 1e-4 * l.amax(), "{diff:e}");
}

#[test]
fn check_reports_consistency_and_who_runs_the_model() {
    let report = check_model(&load(REDUNDANT)).unwrap();
    for s in [
        "redundant constraints: joint 'coupler0_mid' (y)",
        "joint 'coupler0_mid' (y): consistent",
        "depends on:",
        "joint 'pivot_mid' (y)",
        "not unique",
        "formulations that run this model: augmented, partitioning, projection, index3, ggl, \
         state_space, odae (on the independent rows), penalty, augmented_lagrangian (all rows); not: joint",
    ] {
        assert!(report.contains(s), "missing '{s}' in\n{report}");
    }
    // consistent redundant drivers
    let report = check_model(&load("tests/data/parallelogram_third_crank_drivers.toml")).unwrap();
    assert!(
        report.contains("driver 'drive_mid': consistent"),
        "{report}"
    );
}

fn refusal(rel: &str, f: Option<&str>) -> String {
    let mut model = load(rel);
    if let Some(f) = f {
        model.settings.formulation.kind = jounce::setup::formulation_kind(f).unwrap();
    }
    let out = scratch("refused");
    let e = run_model(&model, &out, None).expect_err("refused");
    assert!(!matches!(e, RunError::Integration { .. }), "{e}");
    let summary: RunSummary =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary.status, "failed");
    let _ = std::fs::remove_dir_all(&out);
    let c = check_model(&model).expect_err("check refuses it too");
    assert_eq!(c.to_string(), e.to_string());
    e.to_string()
}

#[test]
fn inconsistent_redundancy_and_joint_are_refused_before_integrating() {
    // the third crank 1 mm too long: assembly cannot close it, and says why
    let e = refusal("tests/data/parallelogram_third_crank_too_long.toml", None);
    assert!(
        e.contains("inconsistent redundant constraint(s): joint 'coupler0_mid' (y): inconsistent (residual"),
        "{e}"
    );
    // a redundant driver that agrees at t = 0 (angle and rate) and parts later
    let e = refusal(
        "tests/data/parallelogram_third_crank_conflicting_drivers.toml",
        None,
    );
    assert!(
        e.contains(
            "inconsistent redundant constraint(s): driver 'drive_mid': inconsistent (residual"
        ),
        "{e}"
    );
    assert!(!e.contains("coupler0_mid"), "{e}");
    // joint: refused, naming the rows and the formulations that can
    let e = refusal(REDUNDANT, Some("joint"));
    assert!(
        e.contains("formulation 'joint' cannot run a model with redundant constraints (joint 'coupler0_mid' (y))")
            && e.contains("augmented, partitioning, projection, penalty, index3, ggl, state_space, odae"),
        "{e}"
    );
}

/// A chain of `n` hanging pendulums (1 m links), released at 0.3 rad,
/// with pin `twice` declared a second time when given.
fn chain(n: usize, twice: Option<usize>) -> Model {
    let mut t = String::from("[model]\nname = \"chain\"\n\n");
    let (s, c) = (0.3_f64.sin(), 0.3_f64.cos());
    for i in 0..n {
        let k = i as f64 + 0.5;
        t.push_str(&format!(
            "[[bodies]]\nname = \"l{i}\"\nmass = 1.0\ninertia = 0.08333333333333333\n\
             position = [{}, {}]\nangle = 0.3\npoints = {{ top = [0.0, 0.5], bottom = [0.0, -0.5] }}\n\n",
            k * s,
            -k * c
        ));
    }
    let pin = |t: &mut String, name: String, i: usize| {
        let (b1, p1) = if i == 0 {
            ("ground".to_string(), "[0.0, 0.0]".to_string())
        } else {
            (format!("l{}", i - 1), "\"bottom\"".to_string())
        };
        t.push_str(&format!(
            "[[joints]]\nname = \"{name}\"\ntype = \"revolute\"\nbody1 = \"{b1}\"\npoint1 = {p1}\n\
             body2 = \"l{i}\"\npoint2 = \"top\"\n\n"
        ));
    };
    for i in 0..n {
        pin(&mut t, format!("pin{i}"), i);
    }
    if let Some(k) = twice {
        pin(&mut t, format!("pin{k}_again"), k);
    }
    t.push_str("[settings]\nt_end = 0.3\noutput_interval = 0.05\n");
    jounce_model::from_str(&t, "<chain>").unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn redundant_chain_runs_on_the_sparse_path() {
    for (f, method, step) in [
        ("augmented", "dopri5", None),
        ("index3", "generalized_alpha", Some(1e-3)),
    ] {
        let mut results = Vec::new();
        for twice in [Some(10), None] {
            let mut model = chain(32, twice);
            model.settings.formulation.linear_solver = LinearSolverKind::Sparse;
            let (s, ts) = run(model, f, method, step, &format!("chain-{f}-{twice:?}"));
            assert_eq!(s.constraints, if twice.is_some() { 66 } else { 64 });
            results.push((s, ts));
        }
        let (red, plain) = (&results[0], &results[1]);
        assert_eq!(
            red.0.non_unique_reactions,
            vec!["joint 'pin10_again' (x)", "joint 'pin10_again' (y)"]
        );
        assert!(plain.0.non_unique_reactions.is_empty());
        let mut worst = 0.0_f64;
        for i in 0..32 {
            for c in ["x", "y", "theta"] {
                let name = format!("l{i}.{c}");
                for (a, b) in red.1.col(&name).iter().zip(plain.1.col(&name)) {
                    worst = worst.max((a - b).abs());
                }
            }
        }
        println!("chain of 32, {f}/{method}, sparse: redundant vs plain {worst:.2e}");
        assert!(worst <= 1e-8, "{f}: {worst:e}");
        // the duplicated pin shares the load equally with the original
        for c in ["x", "y"] {
            let a = red.1.col(&format!("lambda[joint 'pin10' ({c})]"));
            let b = red.1.col(&format!("lambda[joint 'pin10_again' ({c})]"));
            let p = plain.1.col(&format!("lambda[joint 'pin10' ({c})]"));
            for i in 1..a.len() {
                assert!((a[i] - b[i]).abs() <= 1e-9 * p[i].abs().max(1.0), "{f} {c}");
                assert!(
                    (a[i] + b[i] - p[i]).abs() <= 1e-6 * p[i].abs().max(1.0),
                    "{f} {c}"
                );
            }
        }
    }
}
