//! Contact on events (issue 11): studies.md S6 with every adaptive method
//! that runs it, Newton's impact law on a bouncing ball, and contact
//! models refused with the element named.

use crate::support;

use jounce::run::Overrides;
use support::run_example;

const S6: &str = "examples/studies/s6_two_balls.toml";

/// Number of separate intervals in which a sampled gap is negative.
fn contact_intervals(gap: &[f64]) -> usize {
    let mut n = 0;
    let mut inside = false;
    for &g in gap {
        if g < 0.0 && !inside {
            n += 1;
        }
        inside = g < 0.0;
    }
    n
}

/// S6: every contact begins and ends with a located event (2 events per
/// impact, the impacts counted independently on a 0.1 ms output grid of a
/// tight reference run); no ball sinks deeper than the penalty springs
/// allow; the energy of the undamped contacts is kept over 10 s.
#[test]
fn s6_contacts_are_located_by_every_adaptive_method() {
    let (reference, ts) = run_example(
        S6,
        Overrides {
            method: Some("dop853".into()),
            rtol: Some(1e-11),
            atol: Some(1e-11),
            ..Overrides::default()
        },
        "s6ref",
    );
    assert_eq!(reference.status, "completed");
    // a fine grid: each contact lasts π/ω ≈ 7-10 ms
    let mut fine = jounce_model::load_file(&support::repo(S6)).unwrap();
    fine.settings.output_interval = 1e-4;
    fine.settings.integrator.method = "dop853".into();
    fine.settings.integrator.rtol = 1e-11;
    fine.settings.integrator.atol = 1e-11;
    let out = support::scratch("s6fine");
    jounce::run::run_model(&fine, &out, None).unwrap();
    let fine_ts = support::Series::read(&out.join("timeseries.csv"));
    let impacts = contact_intervals(fine_ts.col("ball2_ground.gap"))
        + contact_intervals(fine_ts.col("ball1_ball2.gap"));
    assert!(impacts >= 20, "{impacts} impacts in 10 s");
    assert_eq!(reference.work.events, 2 * impacts as u64);
    let _ = ts;

    // penetration bound: the whole initial energy (44.145 J above the
    // ground) in one spring, ½ k δ² ≤ E0
    let e0 = 9.81 * (3.0 + 1.5);
    let max_penetration = (2.0 * e0 / 1e5f64).sqrt();
    for method in ["dopri5", "dop853", "radau5", "rodas4", "bdf", "llm"] {
        let (s, ts) = run_example(
            S6,
            Overrides {
                method: Some(method.into()),
                rtol: Some(1e-8),
                atol: Some(1e-8),
                ..Overrides::default()
            },
            "s6",
        );
        assert_eq!(s.status, "completed", "{method}");
        assert_eq!(
            s.work.events,
            2 * impacts as u64,
            "{method}: {} events for {impacts} impacts",
            s.work.events
        );
        let deepest = ts
            .col("ball2_ground.gap")
            .iter()
            .chain(ts.col("ball1_ball2.gap"))
            .fold(f64::INFINITY, |a, &b| a.min(b));
        assert!(
            deepest > -max_penetration,
            "{method}: penetration {deepest} beyond {max_penetration}"
        );
        assert!(
            s.accuracy.energy_conserved_by_model,
            "undamped penalty contacts conserve energy"
        );
        let e = s.accuracy.max_relative_energy_error;
        println!(
            "S6 {method}: {} steps, {} events, energy drift {e:.2e}",
            s.work.steps_accepted, s.work.events
        );
        assert!(e < 1e-4, "{method}: energy drift {e:e}");
    }
}

/// Newton's impact law: every impact multiplies the normal velocity by
/// −e, so successive apex heights above the contact height fall by e²
/// (from the velocities in the rows written just after each impact).
#[test]
fn bouncing_ball_apex_heights_fall_by_e_squared() {
    let e = 0.8f64;
    let (s, ts) = run_example(
        "examples/bouncing_ball.toml",
        Overrides::default(),
        "bounce",
    );
    assert_eq!(s.status, "completed");
    assert!(!s.accuracy.energy_conserved_by_model);
    let (t, vy, gap) = (ts.col("t"), ts.col("ball.vy"), ts.col("ground_contact.gap"));
    // the row after an impact has the same time as the one before it
    let mut rebound = Vec::new();
    for i in 1..t.len() {
        if t[i] == t[i - 1] && vy[i] > 0.0 && vy[i - 1] < 0.0 {
            assert!(
                gap[i].abs() < 1e-9,
                "impact away from the ground: {}",
                gap[i]
            );
            assert!(
                (vy[i] + e * vy[i - 1]).abs() < 1e-9 * vy[i],
                "restitution: {} after {}",
                vy[i],
                vy[i - 1]
            );
            rebound.push(vy[i]);
        }
    }
    assert_eq!(rebound.len() as u64, s.work.events, "{rebound:?}");
    assert!(rebound.len() >= 4, "{rebound:?}");
    let g = 9.81;
    let apex: Vec<f64> = rebound.iter().map(|v| v * v / (2.0 * g)).collect();
    for k in 1..apex.len() {
        let ratio = apex[k] / apex[k - 1];
        assert!(
            (ratio / (e * e) - 1.0).abs() < 1e-8,
            "apex {k}: ratio {ratio} vs e² = {}",
            e * e
        );
    }
    // the first apex from the drop: the ball falls 1.75 m to contact
    assert!((apex[0] / (e * e * 1.75) - 1.0).abs() < 1e-8, "{}", apex[0]);
}

/// Contacts run with every formulation that the ball's free body allows
/// and give the same motion (the gap is an event of each formulation).
#[test]
fn a_contact_is_an_event_of_every_formulation() {
    let mut last: Option<f64> = None;
    for f in ["augmented", "projection", "penalty", "index3", "joint"] {
        let method = if f == "index3" { "radau5" } else { "dopri5" };
        let (s, ts) = run_example(
            "examples/bouncing_ball.toml",
            Overrides {
                formulation: Some(f.into()),
                method: Some(method.into()),
                rtol: Some(1e-9),
                atol: Some(1e-9),
                ..Overrides::default()
            },
            "bounce_form",
        );
        assert_eq!(s.status, "completed", "{f}");
        // impacts at t = 0.60, 1.55, 2.32 and 2.93 s (the next is at 3.42)
        assert_eq!(s.work.events, 4, "{f}");
        let y_end = *ts.col("ball.y").last().unwrap();
        if let Some(y) = last {
            assert!((y - y_end).abs() < 1e-5, "{f}: {y_end} vs {y}");
        }
        last = Some(y_end);
    }
}

#[test]
fn bad_contacts_are_refused_naming_the_element() {
    let base = std::fs::read_to_string(support::repo("examples/bouncing_ball.toml")).unwrap();
    for (from, to, what) in [
        (
            "restitution = 0.8",
            "restitution = 1.5",
            "must be in [0, 1]",
        ),
        (
            "normal1 = [0.0, 1.0]",
            "normal1 = [0.0, 0.0]",
            "nonzero vector",
        ),
        (
            "law = \"impact\"\nrestitution = 0.8",
            "law = \"impact\"\nrestitution = 0.8\nstiffness = 1e5",
            "no stiffness",
        ),
        ("radius2 = 0.25", "radius2 = -0.25", "radius2"),
        ("law = \"impact\"", "law = \"elastic\"", "contact law"),
    ] {
        let text = base.replace(from, to);
        assert_ne!(text, base);
        let err = jounce_model::from_str(&text, "ball.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("ground_contact"), "{err}");
        assert!(err.contains(what), "{what}: {err}");
    }
}

/// A located root is taken where the redone step ends, even when on that
/// step's path the gap crosses only a rounding error later: S6 with
/// dopri5 has no sliver steps of 1e-14 s after its events (45 of its 76
/// events left one before; a few whose root lies further ahead remain).
#[test]
fn events_leave_no_sliver_steps() {
    let out = support::scratch("s6_slivers_steps");
    let model = jounce_model::load_file(&support::repo(S6)).unwrap();
    let s = jounce::run::run_model(&model, &out, None).unwrap();
    let steps = support::Series::read(&out.join("steps.csv"));
    let slivers = steps.col("h").iter().filter(|h| **h < 1e-9).count();
    println!("{} events, {slivers} steps below 1e-9 s", s.work.events);
    assert_eq!(s.work.events, 76);
    assert!(slivers <= 8, "{slivers} sliver steps");
}

/// The bouncing ball with `from` replaced by `to` (each must occur).
fn ball_variant(edits: &[(&str, &str)]) -> String {
    let mut text = std::fs::read_to_string(support::repo("examples/bouncing_ball.toml")).unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "{from}");
        text = text.replace(from, to);
    }
    text
}

/// Issue 31: a contact with the impact law that starts penetrated never
/// sees its closing event, so its bodies pass through each other (the
/// ball with its normal flipped fell to y = -42 m and "completed"). Every
/// command that sets the model up refuses it before integrating, naming
/// the contact and the depth; when the body lies on the other side of the
/// line, the message says the normal may be flipped.
#[test]
fn an_impact_contact_that_starts_penetrated_is_refused() {
    let flipped = ball_variant(&[("normal1 = [0.0, 1.0]", "normal1 = [0.0, -1.0]")]);
    let deep = ball_variant(&[("position = [0.0, 2.0]", "position = [0.0, -5.25]")]);
    for (text, depth, side) in [
        (&flipped, "2.2500e0 m", "1.7500e0 m clear"),
        (&deep, "5.5000e0 m", "5.0000e0 m clear"),
    ] {
        let sim = jounce::Simulation::from_toml_str(text, "ball.toml").unwrap();
        let check = sim.check().unwrap_err().to_string();
        let run = sim.run(&jounce::RunOptions::default()).unwrap_err();
        assert_eq!(run.partial.summary.status, "failed");
        assert_eq!(run.partial.series.len(), 0, "refused before integrating");
        let stat = sim.static_state().unwrap_err().to_string();
        let modes = sim
            .modes(jounce::modes::LinearisationPoint::Initial)
            .unwrap_err()
            .to_string();
        for msg in [check, run.to_string(), stat, modes] {
            assert!(
                msg.contains("contact 'ground_contact' starts penetrated by"),
                "{msg}"
            );
            assert!(msg.contains(depth), "{depth}: {msg}");
            assert!(msg.contains("pass through"), "{msg}");
            assert!(
                msg.contains(side) && msg.contains("normal1 is flipped"),
                "{msg}"
            );
        }
    }
    // below the line but not on its other side: no flipped-normal hint
    let sunk = ball_variant(&[("position = [0.0, 2.0]", "position = [0.0, 0.1]")]);
    let msg = jounce::Simulation::from_toml_str(&sunk, "ball.toml")
        .unwrap()
        .check()
        .unwrap_err()
        .to_string();
    assert!(msg.contains("starts penetrated by 1.5000e-1 m"), "{msg}");
    assert!(!msg.contains("flipped"), "{msg}");
    // touching within the tolerance runs
    let touching = ball_variant(&[("position = [0.0, 2.0]", "position = [0.0, 0.2499999999]")]);
    assert!(jounce::Simulation::from_toml_str(&touching, "ball.toml")
        .unwrap()
        .check()
        .is_ok());
}

/// Issue 31: an impact contact that rests at a zero gap and is pressed
/// in cannot be held by an impact law (its event needs a strict sign
/// change): the ball at rest on the ground fell through, 4.65 m in 1 s,
/// "completed". The run now fails at the first output row past the
/// tolerance, naming the contact and the depth, with the rows kept.
#[test]
fn an_impact_contact_passed_through_fails_the_run_by_name() {
    let resting = ball_variant(&[
        ("position = [0.0, 2.0]", "position = [0.0, 0.25]"),
        ("velocity = [0.3, 0.0]", "velocity = [0.0, 0.0]"),
    ]);
    let sim = jounce::Simulation::from_toml_str(&resting, "ball.toml").unwrap();
    let run = sim.run(&jounce::RunOptions::default()).unwrap_err();
    assert_eq!(run.partial.summary.status, "failed");
    let msg = run.to_string();
    assert!(
        msg.contains("contact 'ground_contact' is penetrated by")
            && msg.contains("passed through")
            && msg.contains("penalty contact"),
        "{msg}"
    );
    assert!(run.partial.summary.t_reached < 0.01, "{msg}");
    assert!(
        !run.partial.series.is_empty(),
        "the rows up to the failure are kept"
    );
}

/// Issue 31: a penalty contact that starts 5.5 m deep is warned by name
/// with its depth, by `check` and in the run's diagnostics (the run then
/// fails: the depth is past the radius); a ball resting at its static
/// indentation (m g / k) is not.
#[test]
fn a_penalty_contact_that_starts_deep_is_warned() {
    let penalty = (
        "law = \"impact\"\nrestitution = 0.8",
        "law = \"linear\"\nstiffness = 1e5",
    );
    let deep = ball_variant(&[
        penalty,
        ("position = [0.0, 2.0]", "position = [0.0, -5.25]"),
    ]);
    let sim = jounce::Simulation::from_toml_str(&deep, "ball.toml").unwrap();
    let want = "contact 'ground_contact' starts penetrated by 5.5000e0 m";
    let report = sim.check().unwrap();
    assert!(
        report.warnings.iter().any(|w| w.contains(want)),
        "{:?}",
        report.warnings
    );
    assert!(report.text.contains(want), "{}", report.text);
    // 5.5 m is past the ball's radius: the run fails at its first row
    // (issue 33: a penalty contact pressed beyond its radius), its summary
    // with the input warning
    let run = sim
        .run(&jounce::RunOptions {
            t_end: Some(0.1),
            ..jounce::RunOptions::default()
        })
        .unwrap_err();
    assert!(
        run.to_string().contains("more than the radius 0.25 m"),
        "{run}"
    );
    assert!(
        run.partial
            .summary
            .diagnostics
            .iter()
            .any(|d| d.starts_with("input warning: ") && d.contains(want)),
        "{:?}",
        run.partial.summary.diagnostics
    );
    // at rest on the contact: indentation m g / k = 9.81e-5 m
    let resting = ball_variant(&[
        penalty,
        ("position = [0.0, 2.0]", "position = [0.0, 0.2499019]"),
        ("velocity = [0.3, 0.0]", "velocity = [0.0, 0.0]"),
    ]);
    let sim = jounce::Simulation::from_toml_str(&resting, "ball.toml").unwrap();
    let report = sim.check().unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let run = sim
        .run(&jounce::RunOptions {
            t_end: Some(0.1),
            ..jounce::RunOptions::default()
        })
        .unwrap();
    assert!(
        !run.diagnostics().iter().any(|d| d.contains("penetrated")),
        "{:?}",
        run.diagnostics()
    );
}

/// A bullet (m = 0.01 kg, r = 0.01 m) at 1000 m/s against a fixed post of
/// radius 0.1 m at x = 100 m, a penalty contact stiff enough to stop it
/// within 0.032 m, no gravity: the steps grow to most of the run, and the
/// gap (the distance of the centres less the radii) is positive at both
/// ends of the step that carries the bullet past the post.
const BULLET: &str = r#"
[model]
name = "bullet and post"
gravity = [0.0, 0.0]

[[bodies]]
name = "bullet"
mass = 0.01
inertia = 1e-6
position = [0.0, 0.0]
velocity = [1000.0, 0.0]

[[contacts]]
name = "post"
type = "circle_circle"
body1 = "ground"
point1 = [100.0, 0.0]
radius1 = 0.1
body2 = "bullet"
point2 = [0.0, 0.0]
radius2 = 0.01
law = "linear"
stiffness = 1e7

[settings]
t_end = 1.0
output_interval = 0.5

[settings.integrator]
method = "dopri5"
"#;

/// Issue 31: a penalty contact entered and left within one step (the gap
/// positive at both of its ends) was never seen: the bullet flew through
/// the post and the run "completed". The event locator now also samples
/// where the tangents of the gap at the step's ends cross (the time of
/// closest approach of a straight pass), so the contact's onset is
/// located, the step is cut there and the bullet bounces back.
#[test]
fn a_penalty_contact_crossed_within_one_step_is_located() {
    let sim = jounce::Simulation::from_toml_str(BULLET, "bullet.toml").unwrap();
    for method in ["dopri5", "dop853", "radau5"] {
        let r = sim
            .run(&jounce::RunOptions {
                method: Some(method.into()),
                ..jounce::RunOptions::default()
            })
            .unwrap();
        assert!(r.completed(), "{method}");
        // contact begins and ends: two located events
        assert_eq!(r.summary.work.events, 2, "{method}");
        let x = r.series.column("bullet.x").unwrap();
        let vx = r.series.column("bullet.vx").unwrap();
        let (x_end, vx_end) = (x[x.len() - 1], vx[vx.len() - 1]);
        assert!(
            vx_end < 0.0 && x_end < 0.0,
            "{method}: x = {x_end}, vx = {vx_end}"
        );
        if method == "radau5" {
            // its restart takes the whole contact (0.1 ms) in one step of
            // 0.2 s, whose L-stable damping keeps 29 % of the speed: the
            // energy check says so
            assert!(
                r.diagnostics()
                    .iter()
                    .any(|d| d.starts_with("accuracy warning: the model conserves energy")),
                "{:?}",
                r.diagnostics()
            );
            continue;
        }
        // elastic rebound: back at 1000 m/s, 100 - 0.11 - 900 m at t = 1 s
        assert!((vx_end + 1000.0).abs() < 1.0, "{method}: vx = {vx_end}");
        assert!(x_end < -790.0 && x_end > -810.0, "{method}: x = {x_end}");
    }
}
