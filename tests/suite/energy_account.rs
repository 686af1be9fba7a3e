//! Energy accounting (issue 12, point 8): the work of applied loads and
//! drivers and the energy dissipated, as columns and in the summary, with
//! a balance residual that measures the integration error.

use crate::support;

use jounce::run::Overrides;
use support::{run_example, Series};

fn col_max_abs(s: &Series, c: &str) -> f64 {
    s.col(c).iter().fold(0.0f64, |a, b| a.max(b.abs()))
}

/// S3's step force on the stiff oscillator (termeer test 2a): the load
/// does W = F Δx = 1e7 N × 0.1 m = 1e6 J, the spring keeps k Δx²/2 =
/// 5e5 J, so the damper dissipates 5e5 J; the account says so, and its
/// residual falls with the tolerance (it is integration error).
#[test]
fn the_step_force_does_its_closed_form_work_and_the_damper_takes_the_rest() {
    let mut residual = Vec::new();
    for rtol in [1e-6, 1e-9] {
        let o = Overrides {
            rtol: Some(rtol),
            atol: Some(1e-12),
            t_end: Some(2.5),
            ..Overrides::default()
        };
        let (s, ts) = run_example("examples/studies/s3_b2e2_step.toml", o, "energy_s3");
        let e = &s.accuracy.energy_account;
        let x = ts.col("mass.x");
        let exact_w = 1e7 * (x[x.len() - 1] - 0.5);
        println!(
            "rtol {rtol:e}: W {:.9e} (F Δx {exact_w:.9e}), D {:.6e}, residual {:.3e}",
            e.work_applied, e.dissipated, s.accuracy.max_energy_balance_residual
        );
        assert!((e.work_applied - exact_w).abs() < 1e-6 * exact_w);
        assert!((e.dissipated - 5e5).abs() < 1e-2 * 5e5, "{}", e.dissipated);
        assert_eq!(e.work_drivers, 0.0);
        residual.push(s.accuracy.max_energy_balance_residual);
        // the columns end where the summary does
        let d = ts.col("energy_dissipated");
        assert_eq!(d[d.len() - 1], e.dissipated);
    }
    assert!(residual[1] < 0.1 * residual[0], "{residual:?}");
}

/// The quarter car's dampers only dissipate: D grows monotonically and
/// equals E(0) − E(t) up to the balance residual, which is small against
/// it at a tight tolerance and large for an inaccurate fixed-step run.
#[test]
fn dampers_dissipate_what_the_energy_loses_and_a_bad_run_shows_in_the_residual() {
    let tight = Overrides {
        method: Some("radau5".into()),
        rtol: Some(1e-9),
        atol: Some(1e-12),
        ..Overrides::default()
    };
    let (s, ts) = run_example("examples/quarter_car.toml", tight, "energy_car");
    let d = ts.col("energy_dissipated");
    assert!(
        d.windows(2).all(|w| w[1] >= w[0] - 1e-9),
        "dissipation must not decrease"
    );
    let e = &s.accuracy.energy_account;
    let good = s.accuracy.max_energy_balance_residual;
    println!(
        "quarter car: D {:.6e} J, residual {good:.3e} J",
        e.dissipated
    );
    assert!(e.dissipated > 100.0);
    assert!(good < 1e-5 * e.dissipated, "{good}");
    assert!(col_max_abs(&ts, "energy_balance_residual") <= good);
    // rk4 at a step near its stability limit (the fast wheel hop mode,
    // h < 2.8/74 s) is inaccurate: the account says so
    let coarse = Overrides {
        method: Some("rk4".into()),
        step: Some(0.03),
        ..Overrides::default()
    };
    let (s, _) = run_example("examples/quarter_car.toml", coarse, "energy_car_rk4");
    let bad = s.accuracy.max_energy_balance_residual;
    println!("rk4 h = 0.03: residual {bad:.3e} J");
    assert!(bad > 1e3 * good, "{bad} vs {good}");
}

/// A crank driven at constant speed: the driver's work is the change of
/// the mechanism's energy (no other load, no damper).
#[test]
fn the_drivers_work_is_the_energy_change_of_a_driven_mechanism() {
    let (s, ts) = run_example(
        "examples/slider_crank.toml",
        Overrides::default(),
        "energy_crank",
    );
    let w = ts.col("work_drivers");
    let e = ts.col("total_energy");
    let swing = col_max_abs(&ts, "work_drivers");
    let e0 = e[0];
    let worst = w
        .iter()
        .zip(e)
        .map(|(w, e)| (e - e0 - w).abs())
        .fold(0.0, f64::max);
    println!("driver work swings {swing:.4e} J, max |ΔE − W| {worst:.3e} J");
    assert!(swing > 1e-2, "the motor must do work over a turn");
    assert!(worst < 1e-4 * swing, "{worst}");
    assert!(s.accuracy.max_energy_balance_residual < 1e-4 * swing);
}

/// Impacts: the energy a restitution impact takes is booked as
/// dissipation, so the bouncing ball's balance closes to rounding.
#[test]
fn impact_losses_are_booked_as_dissipation() {
    let (s, ts) = run_example(
        "examples/bouncing_ball.toml",
        Overrides::default(),
        "energy_ball",
    );
    let e = ts.col("total_energy");
    let lost = e[0] - e[e.len() - 1];
    let d = s.accuracy.energy_account.dissipated;
    println!("bouncing ball: lost {lost:.6e} J, dissipated {d:.6e} J");
    assert!(lost > 1.0);
    assert!((d - lost).abs() < 1e-9 * lost, "{d} vs {lost}");
    assert!(s.accuracy.max_energy_balance_residual < 1e-9 * lost);
}
