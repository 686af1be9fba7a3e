//! The contacts' penetration watch on spatial runs (issue 33): each
//! planar case and its spatial twin (the same ball, circle_line ↔
//! sphere_plane, circle_circle ↔ sphere_sphere, gravity along −y ↔ −z)
//! get the same verdict, refused, failed, warned or completed, with the
//! same numbers.
//!
//! - an impact contact that starts penetrated is refused before
//!   integrating, with the flipped-normal hint when the body lies on the
//!   other side;
//! - an impact contact pressed in (a ball resting on it) fails the run;
//! - a penalty contact that starts deeper than an elastic indentation is
//!   warned;
//! - a penalty contact too soft for the impact, sinking past its radius,
//!   fails the run (or warns under `on_failure = "warn"`); a stiff one
//!   completes without a word;
//! - a fixed step beyond the stability limit is refused before the run;
//! - a fast small ball on a large fixed step does not tunnel through the
//!   floor (its impact is located between the steps), and a bullet
//!   through a post on a penalty contact entered and left within one step
//!   is located and bounces back, wherever the post stands.

use jounce::{RunFailure, RunOptions, RunResult, Simulation};
use jounce_model::OnCheckFailure;

/// A ball of radius `r` above a floor, planar or spatial: `height` of its
/// centre, vertical velocity `vz`, the contact's law lines.
fn ball(spatial: bool, height: f64, vz: f64, r: f64, law: &str, normal_sign: f64) -> String {
    let (model, body, contact) = if spatial {
        (
            "space = \"spatial\"\ngravity = [0.0, 0.0, -9.81]",
            format!(
                "inertia = [0.025, 0.025, 0.025]\nposition = [0.0, 0.0, {height}]\n\
                 velocity = [0.3, 0.0, {vz}]"
            ),
            format!(
                "type = \"sphere_plane\"\nbody1 = \"ground\"\npoint1 = [0.0, 0.0, 0.0]\n\
                 normal1 = [0.0, 0.0, {normal_sign:.1}]"
            ),
        )
    } else {
        (
            "gravity = [0.0, -9.81]",
            format!("inertia = 0.025\nposition = [0.0, {height}]\nvelocity = [0.3, {vz}]"),
            format!(
                "type = \"circle_line\"\nbody1 = \"ground\"\npoint1 = [0.0, 0.0]\n\
                 normal1 = [0.0, {normal_sign:.1}]\npoint2 = [0.0, 0.0]"
            ),
        )
    };
    format!(
        "[model]\nname = \"ball\"\n{model}\n\n[[bodies]]\nname = \"ball\"\nmass = 1.0\n{body}\n\n\
         [[contacts]]\nname = \"ground_contact\"\n{contact}\nbody2 = \"ball\"\nradius2 = {r}\n\
         {law}\n\n[settings]\nt_end = 3.0\noutput_interval = 0.001\n\n[settings.integrator]\n\
         method = \"dopri5\"\nrtol = 1e-8\natol = 1e-8\n"
    )
}

const IMPACT: &str = "law = \"impact\"\nrestitution = 0.8";

/// Each of the twins run with `o`.
fn twins(text: impl Fn(bool) -> String, o: &RunOptions) -> [Result<RunResult, RunFailure>; 2] {
    [false, true].map(|spatial| {
        Simulation::from_toml_str(&text(spatial), "ball.toml")
            .unwrap()
            .run(o)
    })
}

/// The run's failure message, or a panic naming the twin.
fn failure(r: Result<RunResult, RunFailure>, twin: usize) -> RunFailure {
    match r {
        Ok(r) => panic!(
            "twin {twin} completed: {:?}",
            (&r.summary.status, r.diagnostics())
        ),
        Err(f) => f,
    }
}

#[test]
fn an_impact_contact_that_starts_penetrated_is_refused_in_both() {
    for (height, sign, depth, hint) in [
        (0.1, 1.0, "1.5000e-1 m", None),
        (2.0, -1.0, "2.2500e0 m", Some("1.7500e0 m clear")),
    ] {
        let runs = twins(
            |s| ball(s, height, 0.0, 0.25, IMPACT, sign),
            &RunOptions::default(),
        );
        for (k, r) in runs.into_iter().enumerate() {
            let f = failure(r, k);
            assert_eq!(f.partial.summary.status, "failed");
            assert_eq!(f.partial.series.len(), 0, "refused before integrating");
            let msg = f.to_string();
            assert!(
                msg.contains(&format!(
                    "contact 'ground_contact' starts penetrated by {depth}"
                )) && msg.contains("pass through"),
                "{k}: {msg}"
            );
            match hint {
                Some(h) => assert!(msg.contains(h) && msg.contains("normal1 is flipped")),
                None => assert!(!msg.contains("flipped"), "{msg}"),
            }
        }
    }
    // `check` refuses the spatial twin as it does the planar one
    for spatial in [false, true] {
        let msg = Simulation::from_toml_str(&ball(spatial, 0.1, 0.0, 0.25, IMPACT, 1.0), "b.toml")
            .unwrap()
            .check()
            .unwrap_err()
            .to_string();
        assert!(msg.contains("starts penetrated by 1.5000e-1 m"), "{msg}");
    }
}

#[test]
fn an_impact_contact_pressed_in_fails_the_run_in_both() {
    let runs = twins(
        |s| ball(s, 0.25, 0.0, 0.25, IMPACT, 1.0).replace("0.3", "0.0"),
        &RunOptions::default(),
    );
    for (k, r) in runs.into_iter().enumerate() {
        let f = failure(r, k);
        let msg = f.to_string();
        assert!(
            msg.contains("contact 'ground_contact' is penetrated by")
                && msg.contains("passed through"),
            "{k}: {msg}"
        );
        assert!(f.partial.summary.t_reached < 0.01, "{msg}");
    }
}

#[test]
fn a_penalty_contact_that_starts_deep_is_warned_in_both() {
    // 0.05 m into a 0.25 m ball on k = 1e5: 20 % of the radius, 5000 N
    // against a weight of 9.81 N
    let law = "law = \"linear\"\nstiffness = 1e5";
    let want = "contact 'ground_contact' starts penetrated by 5.0000e-2 m";
    let o = RunOptions {
        t_end: Some(0.1),
        ..RunOptions::default()
    };
    for (k, r) in twins(|s| ball(s, 0.2, 0.0, 0.25, law, 1.0), &o)
        .into_iter()
        .enumerate()
    {
        let r = r.unwrap_or_else(|e| panic!("{k}: {e}"));
        assert!(
            r.diagnostics()
                .iter()
                .any(|d| d.starts_with("input warning: ") && d.contains(want)),
            "{k}: {:?}",
            r.diagnostics()
        );
    }
    // at rest on its static indentation m g / k: nothing
    for (k, r) in twins(
        |s| ball(s, 0.2499019, 0.0, 0.25, law, 1.0).replace("0.3", "0.0"),
        &o,
    )
    .into_iter()
    .enumerate()
    {
        let r = r.unwrap_or_else(|e| panic!("{k}: {e}"));
        assert!(
            !r.diagnostics().iter().any(|d| d.contains("penetrated")),
            "{k}: {:?}",
            r.diagnostics()
        );
    }
    let report = Simulation::from_toml_str(&ball(true, 0.2, 0.0, 0.25, law, 1.0), "b.toml")
        .unwrap()
        .check()
        .unwrap();
    assert!(
        report.warnings.iter().any(|w| w.contains(want)),
        "{:?}",
        report.warnings
    );
}

/// A 1 kg ball of radius 0.25 m dropped from 1.75 m above the floor on a
/// linear penalty contact of k = 100 N/m: its impact at 5.86 m/s goes
/// v sqrt(m/k) = 0.59 m deep (0.69 m with gravity), past its centre; it
/// "completed" before. Both twins fail at the same time, just past the
/// radius; with on_failure = "warn" both complete with the warning; at
/// k = 1e5 (depth 0.02 m) both complete without it.
#[test]
fn a_penalty_contact_too_soft_for_the_impact_fails_in_both() {
    let soft = "law = \"linear\"\nstiffness = 100.0";
    let [planar, spatial] = twins(
        |s| ball(s, 2.0, 0.0, 0.25, soft, 1.0),
        &RunOptions::default(),
    )
    .map(|r| failure(r, 0));
    let mut t = Vec::new();
    for f in [&planar, &spatial] {
        let msg = f.to_string();
        assert!(
            msg.contains("contact 'ground_contact' is penetrated by")
                && msg.contains("more than the radius 0.25 m")
                && msg.contains("passing through each other"),
            "{msg}"
        );
        // the first output row past the radius: the ball's centre at the
        // floor, falling at 5.86 m/s from the first contact at t = 0.597 s
        let tr = f.partial.summary.t_reached;
        assert!(tr > 0.6 && tr < 0.7, "{tr}: {msg}");
        t.push(tr);
    }
    assert!((t[0] - t[1]).abs() < 0.01, "{t:?}");
    // warned, not failed, when asked
    let warn = RunOptions {
        on_check_failure: Some(OnCheckFailure::Warn),
        ..RunOptions::default()
    };
    for (k, r) in twins(|s| ball(s, 2.0, 0.0, 0.25, soft, 1.0), &warn)
        .into_iter()
        .enumerate()
    {
        let r = r.unwrap_or_else(|e| panic!("{k}: {e}"));
        assert!(
            r.diagnostics()
                .iter()
                .any(|d| d.starts_with("check failed at t = ")
                    && d.contains("more than the radius 0.25 m")),
            "{k}: {:?}",
            r.diagnostics()
        );
    }
    let stiff = "law = \"linear\"\nstiffness = 1e5";
    for (k, r) in twins(
        |s| ball(s, 2.0, 0.0, 0.25, stiff, 1.0),
        &RunOptions::default(),
    )
    .into_iter()
    .enumerate()
    {
        let r = r.unwrap_or_else(|e| panic!("{k}: {e}"));
        assert!(r.completed());
        assert!(
            !r.diagnostics().iter().any(|d| d.contains("penetrated")),
            "{k}: {:?}",
            r.diagnostics()
        );
    }
}

/// A ball of radius 1 cm falling at 100 m/s onto the floor, rk4 at a
/// fixed step of 0.05 s (5 m per step, 500 radii): the impact is located
/// between the steps in both twins, the ball does not tunnel, and both
/// rebound to the same height (e = 0.8: 80 m/s up) with the energy
/// (1 − e²) ½ m v² = 1800 J dissipated at the impact.
#[test]
fn a_fast_small_ball_on_a_large_fixed_step_does_not_tunnel_in_either() {
    let o = RunOptions {
        method: Some("rk4".into()),
        step: Some(0.05),
        ..RunOptions::default()
    };
    let [planar, spatial] =
        twins(|s| ball(s, 2.0, -100.0, 0.01, IMPACT, 1.0), &o).map(|r| r.unwrap());
    let height = |r: &RunResult, c: &str| {
        let col = r.series.column(c).unwrap();
        col[col.len() - 1]
    };
    let gap = |r: &RunResult| {
        r.series
            .column("ground_contact.gap")
            .unwrap()
            .iter()
            .fold(f64::INFINITY, |m, &g| m.min(g))
    };
    for r in [&planar, &spatial] {
        assert!(r.completed());
        assert!(gap(r) > -1e-9, "{}", gap(r));
        assert_eq!(r.summary.work.events, 1);
        let dissipated = r.summary.accuracy.energy_account.dissipated;
        // the drop's 2 m at 9.81 m/s² adds to the speed at the impact
        let v2 = 100.0f64.powi(2) + 2.0 * 9.81 * (2.0 - 0.01);
        let want = 0.5 * (1.0 - 0.64) * v2;
        assert!(
            (dissipated - want).abs() < 1e-4 * want,
            "{dissipated} {want}"
        );
    }
    let (yp, zs) = (height(&planar, "ball.y"), height(&spatial, "ball.z"));
    assert!(yp > 100.0, "{yp}");
    assert!((yp - zs).abs() < 1e-9 * yp, "{yp} {zs}");
}

/// The bullet of `tests/suite/contacts.rs` (planar) and its spatial twin:
/// a 0.01 kg sphere of radius 1 cm at 1000 m/s, no gravity, against a
/// fixed post of radius 0.1 m at x = `post`, a linear penalty contact of
/// stiffness `k`; t = 0 .. `t_end`, a row every `every` s.
fn bullet(spatial: bool, post: f64, k: &str, t_end: f64, every: f64) -> String {
    let (model, body, pair) = if spatial {
        (
            "space = \"spatial\"\ngravity = [0.0, 0.0, 0.0]".to_string(),
            "inertia = [1e-6, 1e-6, 1e-6]\nposition = [0.0, 0.0, 0.0]\nvelocity = [1000.0, 0.0, 0.0]",
            format!("type = \"sphere_sphere\"\nbody1 = \"ground\"\npoint1 = [{post:.2}, 0.0, 0.0]"),
        )
    } else {
        (
            "gravity = [0.0, 0.0]".to_string(),
            "inertia = 1e-6\nposition = [0.0, 0.0]\nvelocity = [1000.0, 0.0]",
            format!(
                "type = \"circle_circle\"\nbody1 = \"ground\"\npoint1 = [{post:.2}, 0.0]\n\
                 point2 = [0.0, 0.0]"
            ),
        )
    };
    format!(
        "[model]\nname = \"bullet\"\n{model}\n\n[[bodies]]\nname = \"bullet\"\nmass = 0.01\n\
         {body}\n\n[[contacts]]\nname = \"post\"\n{pair}\nradius1 = 0.1\nbody2 = \"bullet\"\n\
         radius2 = 0.01\nlaw = \"linear\"\nstiffness = {k}\n\n[settings]\nt_end = {t_end}\n\
         output_interval = {every}\n\n[settings.integrator]\nmethod = \"dopri5\"\n"
    )
}

/// The bullet on a stiff post (k = 1e7: stopped within 3.2 mm), a penalty
/// contact entered and left within one step of dopri5: both twins locate
/// the contact (two events) and bounce back at 1000 m/s.
#[test]
fn a_bullet_against_a_stiff_post_bounces_back_in_both() {
    for post in [99.7, 100.3] {
        for (k, r) in twins(|s| bullet(s, post, "1e7", 1.0, 0.5), &RunOptions::default())
            .into_iter()
            .enumerate()
        {
            let r = r.unwrap_or_else(|e| panic!("{post} {k}: {e}"));
            assert!(r.completed());
            assert_eq!(r.summary.work.events, 2, "{post} {k}");
            let vx = r.series.column("bullet.vx").unwrap();
            let x = r.series.column("bullet.x").unwrap();
            let (x_end, vx_end) = (x[x.len() - 1], vx[vx.len() - 1]);
            assert!((vx_end + 1000.0).abs() < 1.0, "{post} {k}: vx = {vx_end}");
            // back from the post's near side at 1000 m/s
            let want = 2.0 * (post - 0.11) - 1000.0;
            assert!(
                (x_end - want).abs() < 2.0,
                "{post} {k}: x = {x_end}, {want}"
            );
        }
    }
}

/// The event locator, planar and spatial alike (a defect found by issue
/// 33's twins): when the contact's onset root was taken just before its
/// gap crossed zero, the gap was held at exactly 0 for the next step, and
/// neither the crossing test nor the tangents' dip (`tangent_dip` in
/// jounce-integrate, which needs g0 · g0' < 0) looked at a function that
/// starts at 0: the restarted step (0.9 s) carried the bullet through the
/// post untouched and the run "completed" with x = +1000 m (post at
/// x = 100 m: spatial tunnelled, planar bounced; at 101 m both tunnelled).
/// The gap is now held on its new side at the smallest normal magnitude,
/// so that leaving the post within the step is a crossing: both bounce
/// wherever the post stands.
#[test]
fn a_bullet_does_not_tunnel_wherever_the_post_stands() {
    for post in [99.7, 100.0, 100.05, 100.3, 101.0, 101.37, 102.5, 137.0] {
        for (k, r) in twins(|s| bullet(s, post, "1e7", 1.0, 0.5), &RunOptions::default())
            .into_iter()
            .enumerate()
        {
            let r = r.unwrap_or_else(|e| panic!("{post} {k}: {e}"));
            let vx = r.series.column("bullet.vx").unwrap();
            assert!(vx[vx.len() - 1] < 0.0, "{post} {k}: tunnelled");
        }
    }
}

/// The bullet on a post 10⁶ times softer (k = 10 N/m: the depth
/// v sqrt(m/k) would be 32 m, through the 0.22 m of the pair): with a row
/// every 10 µs both twins see the bullet's centre inside the post and fail
/// as passing through.
#[test]
fn a_bullet_through_a_soft_post_fails_in_both() {
    for (k, r) in twins(
        |s| bullet(s, 100.0, "10.0", 0.11, 1e-5),
        &RunOptions::default(),
    )
    .into_iter()
    .enumerate()
    {
        let msg = failure(r, k).to_string();
        assert!(
            msg.contains("contact 'post' is penetrated by")
                && msg.contains("more than the radius 0.01 m"),
            "{k}: {msg}"
        );
    }
}

/// Not a contact but the same rule: a 1 kg body on a spring of 1e6 N/m
/// (ω = 1000 rad/s) with rk4 at a fixed step of 10 ms (hω = 10, beyond
/// rk4's limit of 2.8) is refused before integrating, planar and spatial
/// alike, by the stability verdict on the linearisation at t = 0; at
/// 1 ms (hω = 1) both run.
#[test]
fn a_fixed_step_beyond_the_stability_limit_is_refused_in_both() {
    let spring = |spatial: bool| {
        let (model, body, ends) = if spatial {
            (
                "space = \"spatial\"\ngravity = [0.0, 0.0, -9.81]",
                "inertia = [0.01, 0.01, 0.01]\nposition = [0.0, 0.0, -1.0]",
                "point1 = [0.0, 0.0, 0.0]\nbody2 = \"bob\"\npoint2 = [0.0, 0.0, 0.0]",
            )
        } else {
            (
                "gravity = [0.0, -9.81]",
                "inertia = 0.01\nposition = [0.0, -1.0]",
                "point1 = [0.0, 0.0]\nbody2 = \"bob\"\npoint2 = [0.0, 0.0]",
            )
        };
        format!(
            "[model]\nname = \"bob\"\n{model}\n\n[[bodies]]\nname = \"bob\"\nmass = 1.0\n{body}\n\n\
             [[forces]]\nname = \"spring\"\ntype = \"spring_damper\"\nbody1 = \"ground\"\n{ends}\n\
             stiffness = 1e6\nfree_length = 0.99\n\n[settings]\nt_end = 1.0\n\
             output_interval = 0.01\n\n[settings.integrator]\nmethod = \"rk4\"\n"
        )
    };
    let at = |h: f64| RunOptions {
        step: Some(h),
        ..RunOptions::default()
    };
    for (k, r) in twins(spring, &at(0.01)).into_iter().enumerate() {
        let f = failure(r, k);
        assert_eq!(f.partial.series.len(), 0, "{k}: refused before integrating");
        let msg = f.to_string();
        assert!(
            msg.contains("the fixed step h = 0.01 s is beyond the stability limit of rk4"),
            "{k}: {msg}"
        );
    }
    for (k, r) in twins(spring, &at(0.001)).into_iter().enumerate() {
        let r = r.unwrap_or_else(|e| panic!("{k}: {e}"));
        assert!(r.completed(), "{k}");
    }
}
