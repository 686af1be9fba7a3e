//! Redundant constraints together with every capability a model can have:
//! impacts, penalty contacts, stick–slip friction, dampers and drivers.
//!
//! Each model is run twice under every formulation, once as written and
//! once with a joint (or driver) declared a second time. The redundant twin
//! must either move as the original (the same events, positions within
//! 1e-8 at every output time) or be refused before integrating, as the
//! original is where a formulation cannot run it; no run may panic. Before
//! the narrow mechanics contract, the system without its redundant rows
//! silently lost the contact: a ball on a doubled guide fell through the
//! floor to y = −42 m with status "completed" and 0 events, and with
//! restitution 0.8 the run panicked.

use crate::support;

use std::panic::{catch_unwind, AssertUnwindSafe};

use jounce::run::run_model;
use jounce::RunError;
use support::{scratch, Series};

/// A ball of radius 0.25 dropped from y = 2 m onto the ground, held on a
/// vertical guide (declared twice when `doubled`), with contact `law`
/// (`impact` with `restitution`, or a penalty law) and, when `damper`, a
/// damper from a ground point above.
fn ball(doubled: bool, contact: &str, damper: bool) -> String {
    let guide = |name: &str| {
        format!(
            "[[joints]]\nname = \"{name}\"\ntype = \"translational\"\nbody1 = \"ground\"\n\
             point1 = [0.0, 0.0]\nbody2 = \"ball\"\npoint2 = [0.0, 0.0]\naxis = [0.0, 1.0]\n\n"
        )
    };
    let mut s = String::from(
        "[model]\nname = \"ball on a guide\"\ngravity = [0.0, -9.81]\n\n[[bodies]]\n\
         name = \"ball\"\nmass = 1.0\ninertia = 0.025\nposition = [0.0, 2.0]\n\n",
    );
    s += &guide("guide");
    if doubled {
        s += &guide("guide_again");
    }
    s += &format!(
        "[[contacts]]\nname = \"ground_contact\"\ntype = \"circle_line\"\nbody1 = \"ground\"\n\
         point1 = [0.0, 0.0]\nnormal1 = [0.0, 1.0]\nbody2 = \"ball\"\npoint2 = [0.0, 0.0]\n\
         radius2 = 0.25\n{contact}\n\n"
    );
    if damper {
        s += "[[forces]]\nname = \"damper\"\ntype = \"spring_damper\"\nbody1 = \"ground\"\n\
              point1 = [0.0, 5.0]\nbody2 = \"ball\"\npoint2 = [0.0, 0.0]\nstiffness = 0.0\n\
              damping = 0.5\nfree_length = 3.0\n\n";
    }
    s + "[settings]\nt_end = 3.0\noutput_interval = 0.01\n"
}

/// `examples/stick_slip.toml` (a block on a guide with stick–slip friction
/// on the guide's normal reaction) with a pendulum declared before it,
/// whose pivot is declared twice when `doubled`: the guide's rows then
/// follow two dropped rows, so its friction's normal-force row is
/// renumbered by the row selection.
fn stick_slip_with_pendulum(doubled: bool) -> String {
    let base = std::fs::read_to_string(support::repo("examples/stick_slip.toml")).unwrap();
    let pivot = |name: &str| {
        format!(
            "[[joints]]\nname = \"{name}\"\ntype = \"revolute\"\nbody1 = \"ground\"\n\
             point1 = [3.0, 0.0]\nbody2 = \"bob\"\npoint2 = [-0.5, 0.0]\n\n"
        )
    };
    let mut extra = String::from(
        "[[bodies]]\nname = \"bob\"\nmass = 0.5\ninertia = 0.01\nposition = [3.5, 0.0]\n\n",
    );
    extra += &pivot("pivot");
    if doubled {
        extra += &pivot("pivot_again");
    }
    let at = base.find("[[joints]]").unwrap();
    let (head, tail) = base.split_at(at);
    // the body before the joints, the pivots before the guide
    format!("{head}{extra}{tail}")
}

/// `examples/slider_crank.toml` with its slider guide and its motor
/// declared a second time when `doubled`.
fn slider_crank(doubled: bool) -> String {
    let base = std::fs::read_to_string(support::repo("examples/slider_crank.toml")).unwrap();
    if !doubled {
        return base;
    }
    let motor = "[[drivers]]\nname = \"motor_again\"\ntype = \"joint\"\njoint = \"crank_pivot\"\n\
                 function = { type = \"polynomial\", coefficients = [0.0, 6.283185307179586] }\n\n";
    let guide_at = base.find("name = \"guide\"").expect("the slider guide");
    let start = base[..guide_at].rfind("[[joints]]").unwrap();
    let end = start + base[start..].find("\n\n").unwrap() + 2;
    let again = base[start..end].replace("name = \"guide\"", "name = \"guide_again\"");
    let settings = base.find("[settings]").unwrap();
    format!(
        "{}{}{}{}",
        &base[..settings],
        again,
        motor,
        &base[settings..]
    )
}

/// How one run ended.
enum Outcome {
    Completed {
        series: Series,
        events: u64,
    },
    /// Refused before integrating (model, set-up or check).
    Refused(String),
    /// Failed while integrating.
    Failed(String),
}

/// Run the model text `toml` with `formulation`, `method`, fixed `step` or
/// rtol = atol = 1e-10; a panic fails the test, naming the run.
fn run(toml: &str, formulation: &str, method: &str, step: Option<f64>, tag: &str) -> Outcome {
    let text = toml.replacen(
        "[settings]\n",
        &format!("[settings]\nformulation = \"{formulation}\"\n"),
        1,
    );
    let text = match text.find("[settings.integrator]") {
        Some(i) => {
            let end = text[i..].find("\n\n").map_or(text.len(), |e| i + e);
            format!("{}{}", &text[..i], &text[end..])
        }
        None => text,
    };
    let step_line = step.map_or_else(String::new, |h| format!("step = {h}\n"));
    let text = format!(
        "{text}\n[settings.integrator]\nmethod = \"{method}\"\nrtol = 1e-10\natol = 1e-10\n{step_line}"
    );
    let model = match jounce_model::from_str(&text, tag) {
        Ok(m) => m,
        Err(e) => return Outcome::Refused(e.to_string()),
    };
    let out = scratch(tag);
    let result = catch_unwind(AssertUnwindSafe(|| run_model(&model, &out, None)))
        .unwrap_or_else(|_| panic!("{tag}: the run panicked"));
    let outcome = match result {
        Ok(s) => Outcome::Completed {
            series: Series::read(&out.join("timeseries.csv")),
            events: s.work.events,
        },
        Err(e @ RunError::Integration { .. }) => Outcome::Failed(e.to_string()),
        Err(e) => Outcome::Refused(e.to_string()),
    };
    let _ = std::fs::remove_dir_all(&out);
    outcome
}

/// max |a − b| over the position columns `cols` at every output time.
fn position_difference(a: &Series, b: &Series, cols: &[&str]) -> f64 {
    assert_eq!(a.col("t").len(), b.col("t").len(), "the same output rows");
    cols.iter()
        .flat_map(|c| a.col(c).iter().zip(b.col(c)))
        .fold(0.0_f64, |m, (x, y)| m.max((x - y).abs()))
}

/// Every formulation with a method that can run it (formulation, method,
/// fixed step).
const RUNS: [(&str, &str, Option<f64>); 11] = [
    ("augmented", "dopri5", None),
    ("projection", "dopri5", None),
    ("partitioning", "dopri5", None),
    ("state_space", "radau5", None),
    ("penalty", "radau5", None),
    ("index3", "radau5", None),
    ("ggl", "radau5", None),
    ("odae", "bdf", None),
    ("augmented_lagrangian", "generalized_alpha", Some(1e-3)),
    ("augmented_lagrangian", "newmark", Some(1e-3)),
    ("joint", "dopri5", None),
];

/// The redundant twin of `original` under every formulation of [`RUNS`]
/// (`only`: a subset by formulation name): the same events and motion
/// (within `tol`, penalty within its own constraint error), or refused
/// before integrating. Returns how many formulations ran it.
fn same_motion_or_refused(
    name: &str,
    original: &str,
    redundant: &str,
    cols: &[&str],
    tol: f64,
    min_events: u64,
) -> usize {
    let mut ran = 0;
    for (f, method, step) in RUNS {
        let tag = format!("{name}-{f}-{method}");
        let a = run(original, f, method, step, &format!("{tag}-original"));
        let b = run(redundant, f, method, step, &format!("{tag}-redundant"));
        match (&a, &b) {
            (
                Outcome::Completed {
                    series: sa,
                    events: ea,
                },
                Outcome::Completed {
                    series: sb,
                    events: eb,
                },
            ) => {
                let d = position_difference(sa, sb, cols);
                // penalty runs every row: a doubled row doubles its
                // stiffness, so its O(1/α) constraint error changes
                let bound = if f == "penalty" { 1e-5 } else { tol };
                println!("{tag}: {ea} / {eb} events, positions differ by {d:.2e}");
                assert_eq!(ea, eb, "{tag}: the redundant model has other events");
                assert!(
                    *ea >= min_events,
                    "{tag}: {ea} events, expected {min_events}"
                );
                assert!(d <= bound, "{tag}: positions differ by {d:e} > {bound:e}");
                ran += 1;
            }
            (_, Outcome::Refused(why)) => {
                println!("{tag}: refused: {why}");
                assert!(
                    f == "joint"
                        || !matches!(a, Outcome::Completed { .. })
                        || why.contains("friction"),
                    "{tag}: the original completes but the redundant model is refused: {why}"
                );
            }
            (Outcome::Completed { .. }, Outcome::Failed(why)) => {
                panic!("{tag}: the original completes, the redundant model fails: {why}")
            }
            (_, Outcome::Failed(why)) => {
                println!("{tag}: original and redundant model both fail: {why}");
            }
            (_, Outcome::Completed { .. }) => {
                panic!("{tag}: the original did not complete but the redundant model did")
            }
        }
    }
    ran
}

#[test]
fn impacts_with_restitution_one_on_a_doubled_guide() {
    let law = "law = \"impact\"\nrestitution = 1.0";
    let ran = same_motion_or_refused(
        "impact-e1",
        &ball(false, law, false),
        &ball(true, law, false),
        &["ball.y"],
        1e-8,
        3,
    );
    assert!(ran >= 3, "{ran} formulations ran the impacts");
}

#[test]
fn impacts_with_restitution_0_8_on_a_doubled_guide() {
    let law = "law = \"impact\"\nrestitution = 0.8";
    let ran = same_motion_or_refused(
        "impact-e08",
        &ball(false, law, false),
        &ball(true, law, false),
        &["ball.y"],
        1e-8,
        3,
    );
    assert!(ran >= 3, "{ran} formulations ran the impacts");
}

#[test]
fn impacts_and_a_damper_on_a_doubled_guide() {
    let law = "law = \"impact\"\nrestitution = 0.8";
    let ran = same_motion_or_refused(
        "impact-damper",
        &ball(false, law, true),
        &ball(true, law, true),
        &["ball.y"],
        1e-8,
        3,
    );
    assert!(ran >= 3, "{ran} formulations ran the damped impacts");
}

#[test]
fn penalty_contact_on_a_doubled_guide() {
    let law = "law = \"linear\"\nstiffness = 1e5\ndamping = 20.0";
    let ran = same_motion_or_refused(
        "contact",
        &ball(false, law, false),
        &ball(true, law, false),
        &["ball.y"],
        1e-8,
        2,
    );
    assert!(ran >= 3, "{ran} formulations ran the contact");
}

#[test]
fn stick_slip_friction_beside_a_doubled_pivot() {
    let ran = same_motion_or_refused(
        "friction",
        &stick_slip_with_pendulum(false),
        &stick_slip_with_pendulum(true),
        &["block.x", "bob.x", "bob.y", "bob.theta"],
        1e-8,
        2,
    );
    // stick–slip runs on augmented only; the others refuse both models
    assert!(ran >= 1, "{ran} formulations ran the friction");
}

#[test]
fn a_doubled_driver_and_guide_drive_the_same_slider_crank() {
    let ran = same_motion_or_refused(
        "driver",
        &slider_crank(false),
        &slider_crank(true),
        &["crank.theta", "slider.x", "rod.x", "rod.y"],
        1e-8,
        0,
    );
    assert!(ran >= 6, "{ran} formulations ran the driven slider-crank");
}

/// Friction whose normal force is a reaction that redundancy makes
/// non-unique is refused by `check` and `run` alike, naming the rows.
#[test]
fn friction_on_a_shared_reaction_is_refused_by_check_and_run_alike() {
    let base = std::fs::read_to_string(support::repo("examples/stick_slip.toml")).unwrap();
    let i = base.find("[[joints]]").unwrap();
    let j = base.find("[[forces]]").unwrap();
    let again = base[i..j].replace("name = \"guide\"", "name = \"guide_again\"");
    let text = format!("{}{}{}", &base[..j], again, &base[j..]);
    let model = jounce_model::from_str(&text, "doubled-friction-guide").unwrap();
    let check = jounce::check::check_model(&model).expect_err("check refuses");
    let out = scratch("doubled-friction-guide");
    let run = run_model(&model, &out, None).expect_err("run refuses");
    let _ = std::fs::remove_dir_all(&out);
    for msg in [check.to_string(), run.to_string()] {
        assert!(
            msg.contains("friction on a redundant joint")
                && msg.contains("joint 'guide_again' (normal)")
                && msg.contains("joint 'guide' (normal)"),
            "{msg}"
        );
    }
    assert_eq!(check.to_string(), run.to_string());
}
