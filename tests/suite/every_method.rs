//! Every registered integrator runs the planar double pendulum (augmented
//! formulation, constrained, body coordinates) through the whole pipeline,
//! selected by name, and lands near a tight DOPRI5 reference with an error
//! consistent with its order.

use crate::support;

use jounce::run::Overrides;
use jounce_integrate::method;
use support::run_example;

fn final_positions(method: &str, step: Option<f64>, rtol: f64) -> Vec<f64> {
    let (s, ts) = run_example(
        "examples/double_pendulum.toml",
        Overrides {
            method: Some(method.into()),
            step,
            rtol: Some(rtol),
            atol: Some(rtol * 1e-2),
            t_end: Some(1.0),
            ..Overrides::default()
        },
        &format!("every-{method}"),
    );
    assert_eq!(s.status, "completed", "{method}");
    assert_eq!(s.integrator.method, method);
    ["link1.x", "link1.y", "link2.x", "link2.y"]
        .iter()
        .map(|c| *ts.col(c).last().unwrap())
        .collect()
}

#[test]
fn every_registered_method_runs_a_constrained_model_by_name() {
    let reference = final_positions("dopri5", None, 1e-12);
    let mut n = 0;
    for m in method::all() {
        let i = &m.info;
        // fixed step for methods without error control; tolerance otherwise
        let (step, rtol) = if i.adaptive {
            (None, 1e-8)
        } else {
            (Some(1e-3), 1e-8)
        };
        let y = final_positions(i.name, step, rtol);
        let err = y
            .iter()
            .zip(&reference)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        // fixed step h = 1e-3 gives O(h^p); adaptive methods at 1e-8 land
        // far below; first-order methods are the loosest
        let bound = match (i.adaptive, i.order) {
            (false, 1) => 5e-2,
            (false, 2) => 1e-4,
            (false, _) => 1e-6,
            (true, 1) => 1e-2,
            (true, 2) => 1e-4,
            (true, _) => 1e-5,
        };
        println!("{:<18} error {err:.2e} (bound {bound:.0e})", i.name);
        assert!(err < bound, "{}: error {err:e} above {bound:e}", i.name);
        n += 1;
    }
    assert!(n >= 40, "only {n} methods registered");
}
