//! The beam element (`type = "beam"`), one-sided springs as switching
//! functions and `jounce study s4` (studies.md S4; termeer 1996, tests 3
//! and 4).

use crate::support;

use jounce::run::{run_model, Overrides};
use jounce::static_cmd::static_state;
use support::{jounce, repo, run_example, scratch};

const CANTILEVER: &str = r#"
[model]
name = "cantilever"
gravity = [0.0, 0.0]

[[bodies]]
name = "tip"
mass = 1.0
inertia = 0.01
position = [0.5, 0.0]

[[forces]]
name = "beam"
type = "beam"
body1 = "ground"
point1 = [0.0, 0.0]
body2 = "tip"
point2 = [0.0, 0.0]
E = 2.1e11
A = 1e-3
I = 2.0833333333333334e-7
damping = 0.0

[[forces]]
name = "load"
type = "point_force"
body = "tip"
point = [0.0, 0.0]
LOAD
"#;

const E: f64 = 2.1e11;
const A: f64 = 1e-3;
const I: f64 = 2.0833333333333334e-7;
const L: f64 = 0.5;

fn cantilever_deflection(load: &str) -> (f64, f64, f64) {
    let text = CANTILEVER.replace("LOAD", load);
    let model = jounce_model::from_str(&text, "cantilever.toml").unwrap();
    let s = static_state(&model).unwrap();
    let d = &s.deflection[0];
    (d.dx, d.dy, d.dtheta)
}

#[test]
fn cantilever_tip_deflects_as_euler_bernoulli_under_a_transverse_load() {
    let p = 1000.0;
    let (dx, dy, dth) = cantilever_deflection("fy = -1000.0");
    let v = p * L.powi(3) / (3.0 * E * I);
    let th = p * L * L / (2.0 * E * I);
    assert!(
        ((-dy - v) / v).abs() < 1e-3,
        "tip deflection {dy} vs −PL³/(3EI) = {}",
        -v
    );
    assert!(
        ((-dth - th) / th).abs() < 1e-3,
        "tip rotation {dth} vs −PL²/(2EI) = {}",
        -th
    );
    // no axial load: the axial deflection is second order in v
    assert!(dx.abs() < v * v / L, "axial {dx}");
}

#[test]
fn cantilever_stretches_by_pl_over_ea_under_an_axial_load() {
    let p = 1e5;
    let (dx, dy, dth) = cantilever_deflection("fx = 1e5");
    let u = p * L / (E * A);
    assert!(
        ((dx - u) / u).abs() < 1e-6,
        "elongation {dx} vs PL/(EA) = {u}"
    );
    assert!(dy.abs() < 1e-12 && dth.abs() < 1e-12, "{dy} {dth}");
}

#[test]
fn undamped_beam_conserves_energy() {
    let mut model = jounce_model::load_file(&repo("examples/studies/s4_test3_m50.toml")).unwrap();
    for f in &mut model.forces {
        if let jounce_model::ForceKind::Beam(b) = &mut f.kind {
            b.damping = 0.0;
        }
    }
    let st = &mut model.settings;
    st.t_end = 0.02;
    st.integrator.method = "dopri5".into();
    st.integrator.rtol = 1e-10;
    st.integrator.atol = 1e-14;
    let out = scratch("beam-energy");
    let s = run_model(&model, &out, None).unwrap();
    let _ = std::fs::remove_dir_all(&out);
    assert!(s.accuracy.energy_conserved_by_model);
    assert!(
        s.accuracy.max_relative_energy_error < 1e-7,
        "energy error {}",
        s.accuracy.max_relative_energy_error
    );
}

/// Test 3: the axial mode does not overshoot at d = 2/ω_axial and does at
/// 2 % less damping, for each end mass — measured from the response.
#[test]
fn axial_mode_is_critically_damped_at_two_over_omega() {
    for m in [10, 50, 150] {
        let file = repo(&format!("examples/studies/s4_test3_m{m}.toml"));
        let dir = scratch("beam-crit");
        let model = jounce_model::load_file(&file).unwrap();
        let omega = (E * A / (L * model.bodies[0].mass)).sqrt();
        let (at, w) = jounce_studies::study_s4::axial_overshoot(&file, 2.0 / omega, &dir).unwrap();
        assert!((w - omega).abs() < 1e-9 * omega);
        let (below, _) =
            jounce_studies::study_s4::axial_overshoot(&file, 0.98 * 2.0 / omega, &dir).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let limit = jounce_studies::study_s4::OVERSHOOT_LIMIT;
        assert!(at <= limit, "{m} kg: overshoot {at:e} at d = 2/ω");
        assert!(
            below > limit,
            "{m} kg: no overshoot ({below:e}) at d = 0.98 · 2/ω"
        );
    }
}

/// The stop's engagement and release are located as events, and the bar
/// never sinks into the stop deeper than the spring's energy allows.
#[test]
fn pendulum_stop_is_located_as_events() {
    for method in ["dopri5", "radau5"] {
        let (s, ts) = run_example(
            "examples/pendulum_stop.toml",
            Overrides {
                method: Some(method.into()),
                rtol: Some(1e-8),
                atol: Some(1e-10),
                ..Overrides::default()
            },
            "stop",
        );
        assert_eq!(s.status, "completed", "{method}");
        assert!(s.work.events >= 2, "{method}: {} events", s.work.events);
        // ½ k δ² = m g (L/2) (sin 0.5 + sin δ) ≤ a (sin 0.5 + δ), a = m g L/2
        let (k, a) = (1e4, 9.81 * 0.5);
        let delta = (a + (a * a + 2.0 * k * a * 0.5f64.sin()).sqrt()) / k;
        let th = ts.col("bar.theta");
        let min = th.iter().copied().fold(f64::INFINITY, f64::min);
        assert!(
            min >= -delta * 1.001,
            "{method}: angle {min} below −{delta}"
        );
        assert!(
            min < -0.9 * delta,
            "{method}: the bar did not reach the stop ({min})"
        );
        // the switching value is output, and the stop pushes only below 0
        let dfl = ts.col("stop.deflection");
        let tq = ts.col("stop.torque");
        for (x, t) in dfl.iter().zip(tq) {
            assert!(
                *x < 0.0 || *t == 0.0,
                "{method}: torque {t} at deflection {x}"
            );
        }
    }
}

#[test]
fn study_s4_prints_its_table() {
    // over the models' full second (the release, the swing, the impacts on
    // the stop and the rebound)
    let out = scratch("s4");
    let (code, stdout, stderr) = jounce(&[
        "study",
        "s4",
        "--models",
        repo("examples/studies").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    for needle in [
        "S4 test 3",
        "S4 test 4",
        "S4 test 4a: bdf f-evaluations against d",
        "Seed findings",
        "test 4c",
        "csv:",
    ] {
        assert!(stdout.contains(needle), "no '{needle}' in\n{stdout}");
    }
    assert!(stdout.contains("holds"), "{stdout}");
    for file in [
        "findings.csv",
        "test3_axial.svg",
        "test4a_cost.csv",
        "test4a_cost.svg",
    ] {
        assert!(out.join("s4").join(file).exists(), "no {file}");
    }
    // the bisection's d_crit is within 2 % of 2/ω for every mass, and the
    // run at 2/ω does not overshoot
    let text = std::fs::read_to_string(out.join("s4/test3.csv")).unwrap();
    let rows: Vec<Vec<f64>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 3);
    for r in &rows {
        assert!(r[10].abs() < 0.02, "deviation {} for {} kg", r[10], r[0]);
        assert!(r[5] <= jounce_studies::study_s4::OVERSHOOT_LIMIT, "{r:?}");
    }
    let findings = std::fs::read_to_string(out.join("s4/findings.csv")).unwrap();
    let row = |test: &str, hub: Option<&str>, claim: &str| -> String {
        findings
            .lines()
            .find(|l| {
                l.starts_with(test)
                    && l.contains(claim)
                    && hub.is_none_or(|j| l.contains(&format!("hub J = {j} kg")))
            })
            .unwrap_or_else(|| panic!("no {test} '{claim}' (hub {hub:?}) in\n{findings}"))
            .to_string()
    };
    // the seed's explanation of 4a on the axial mode alone: bdf is
    // cheapest at critical damping (measured 292 f-evaluations at ζ = 1.09,
    // 312 to 751 elsewhere)
    let r = row(
        "4a,",
        None,
        "the seed's explanation, on the axial mode alone",
    );
    assert!(r.ends_with(",holds"), "{r}");
    // the seed's "critically damped for 0.001" against its own data
    // (2/ω = 4.59e-4): a fact of the data, not of a run
    let r = row("4a,", None, "critically damped at d = 1e-3");
    assert!(
        r.ends_with(",does not hold") && r.contains("2.18 × 2/ω"),
        "{r}"
    );
    // issue 31: "fastest with the default d = 1e-3" was marked holds for
    // a tie within the scatter; now 1e-3 must beat each of the other three
    // beyond it. Measured (bdf f-evals, hub 0.5): d = 1e-3 4185
    // (4147-4222) against d = 2e-3 4144 (4081-4219): a tie, does not hold
    let r = row("4a,", Some("0.5"), "fastest with the default d = 1e-3");
    assert!(
        r.ends_with(",does not hold") && r.contains("(ties and cheaper): 2e-3"),
        "{r}"
    );
    for hub in ["0.5", "5"] {
        // 4a as measured, for d of every load and for the axial load's
        // alone. With bdf's Newton test of 02eb342 and before (FNEWT 0.03,
        // two iterations per step) the cost fell steeply to critical
        // damping (1.45 to 2.03 times from ζ = 0.22) and the claim held.
        // With CVODE's test (one iteration per step, issue 32) the
        // oscillation below critical damping no longer costs a second
        // Newton iteration at every step: d = 1e-4 still costs 1.24-1.45
        // times the d nearest 2/ω and the least cost is still at or above
        // 2/ω, but d = 2.5e-4 ties with 5e-4 within the scatter (hub 0.5,
        // every load: 3848 (3818-3861) against 3761 (3693-3833)), so
        // "every d below 2/ω dearer beyond the scatter" fails and the
        // claim does not hold as stated
        // The accepted criterion of 4a (the amendment: the least cost at
        // or above 2/ω) holds on both hubs and both series
        for what in ["as d rises", "as d_a rises"] {
            let r = row(
                "4a,",
                Some(hub),
                &format!("the accepted criterion: {what} from"),
            );
            assert!(r.ends_with(",holds"), "{r}");
        }
        for what in ["as d rises", "as d_a rises"] {
            let r = row("4a,", Some(hub), &format!("the cost falls steeply {what}"));
            assert!(r.ends_with(",does not hold"), "{r}");
            // the number after the last `key` (the measured part; the
            // claim itself quotes "costs ≥ 1.3")
            let after = |key: &str| -> f64 {
                let i = r.rfind(key).unwrap_or_else(|| panic!("no '{key}' in {r}")) + key.len();
                let tail = &r[i..];
                let end = tail
                    .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                    .unwrap();
                tail[..end].parse().unwrap()
            };
            assert!(after("costs ") >= 1.2, "{r}");
            let least = r.rfind(" = ").map(|i| &r[i + 3..]).unwrap();
            let x: f64 = least.split(' ').next().unwrap().parse().unwrap();
            assert!(x >= 1.0 && least.contains("× 2/ω"), "least below 2/ω: {r}");
        }
        // 4b and 4c hold on both hubs
        for test in ["4b,", "4c,"] {
            let rows: Vec<&str> = findings
                .lines()
                .filter(|l| l.starts_with(test) && l.contains(&format!("hub J = {hub} kg")))
                .collect();
            assert!(!rows.is_empty(), "no {test} finding in\n{findings}");
            for r in rows {
                if r.contains("explicit integration becomes the cheapest") {
                    // judged by CPU (the seed's measure) with a 10 % margin:
                    // on hub 5 dopri5 0.005 s against bdf 0.006 s, near
                    // the margin, so the verdict must follow the printed
                    // times rather than be fixed (measured: holds)
                    let secs = |after: &str| -> f64 {
                        let i = r.find(after).unwrap_or_else(|| panic!("{after}: {r}"));
                        let rest = &r[i + after.len()..];
                        rest.trim_start()
                            .split(' ')
                            .next()
                            .unwrap()
                            .parse()
                            .unwrap_or_else(|e| panic!("{after}: {e}: {r}"))
                    };
                    let (x, b, a) = (secs("dopri5"), secs("bdf locked"), secs("bdf on 4a"));
                    let holds = x * 1.1 <= b && x * 1.1 <= a;
                    assert_eq!(r.ends_with(",holds"), holds, "{r}");
                } else {
                    assert!(r.ends_with(",holds"), "{r}");
                }
            }
        }
    }
    // the cost points: BDF pays for an underdamped axial mode (d = 1e-4,
    // ζ = 0.22) more than 1.3 times the cost at the d nearest 2/ω
    let costs = std::fs::read_to_string(out.join("s4/test4a_cost.csv")).unwrap();
    let mean = |series: &str, hub: &str, d: &str| -> f64 {
        costs
            .lines()
            .map(|l| l.split(',').collect::<Vec<_>>())
            .find(|c| c[0] == series && c[1] == hub && c[2] == d)
            .map(|c| c[5].parse().unwrap())
            .unwrap_or_else(|| panic!("no {series} {hub} {d} row in\n{costs}"))
    };
    for hub in ["0.5", "5"] {
        let (under, near) = (
            mean("all loads", hub, "0.0001"),
            mean("all loads", hub, "0.0005"),
        );
        assert!(
            under > 1.3 * near,
            "4a, hub {hub}: {under} f-evals at d = 1e-4, {near} at 5e-4"
        );
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// Issue 31: the cantilever with E given in GPa (210 instead of 2.1e11,
/// 1e9 too soft) under its 1 kN tip load. `jounce static` found an
/// "equilibrium (stable)" at a tip rotation of about 7100 rad and said
/// nothing; it now warns, naming the beam and the rotation, in the state
/// file and its report, and a run warns in its diagnostics. The beam in
/// pascals, deflected by 2.9e-3 rad, is not warned.
#[test]
fn a_beam_beyond_small_strain_is_warned() {
    let soft = CANTILEVER
        .replace("LOAD", "fy = -1000.0")
        .replace("E = 2.1e11", "E = 210.0");
    let model = jounce_model::from_str(&soft, "cantilever.toml").unwrap();
    let s = static_state(&model).unwrap();
    assert!(
        s.deflection[0].dtheta.abs() > 1000.0,
        "{}",
        s.deflection[0].dtheta
    );
    let w = s.warnings.join("\n");
    assert!(
        w.contains("beam 'beam' at the static equilibrium")
            && w.contains("bending rotation (node 2 against node 1) reaches -7.1")
            && w.contains("rad")
            && w.contains("small-strain range"),
        "{w}"
    );
    let text = jounce::static_cmd::static_text(&s);
    assert!(text.contains("warning: beam 'beam'"), "{text}");

    let sim = jounce::Simulation::from_model(model);
    let r = sim
        .run(&jounce::RunOptions {
            t_end: Some(0.5),
            ..jounce::RunOptions::default()
        })
        .unwrap();
    assert!(
        r.diagnostics()
            .iter()
            .any(|d| d.starts_with("small-strain warning: beam 'beam': ")
                && d.contains(" rad")
                && d.contains(" at t = ")),
        "{:?}",
        r.diagnostics()
    );

    let stiff = CANTILEVER.replace("LOAD", "fy = -1000.0");
    let model = jounce_model::from_str(&stiff, "cantilever.toml").unwrap();
    assert!(static_state(&model).unwrap().warnings.is_empty());
    let r = jounce::Simulation::from_model(model)
        .run(&jounce::RunOptions {
            t_end: Some(0.05),
            ..jounce::RunOptions::default()
        })
        .unwrap();
    assert!(
        !r.diagnostics().iter().any(|d| d.contains("small-strain")),
        "{:?}",
        r.diagnostics()
    );
}
