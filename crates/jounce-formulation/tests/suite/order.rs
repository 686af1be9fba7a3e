//! The formulations are smooth enough for a method to keep its order:
//! classical RK4 at fixed steps converges with slope 4 through each of
//! them (the partitioning Newton solve is converged to rounding level).

use jounce_formulation::examples::models;
use jounce_formulation::{build, Formulation, FormulationSettings};
use jounce_integrate::testkit::{empirical_order, Discard};
use jounce_integrate::{method, solve, SolverOptions};

#[test]
fn rk4_keeps_order_four_through_every_formulation() {
    let (sys, q0, v0) = models::slider_crank(0.3, 1.0, 0.5, 1.5, 2.0, 0.9, 4.0);
    let settings = FormulationSettings {
        penalty_factor: 1e3,
        ..Default::default()
    };
    let t1 = 0.5;
    for name in ["augmented", "partitioning", "penalty"] {
        let mut f = build(name, &settings, &sys).unwrap();
        let y0 = f.initial_state(0.0, &q0, &v0).unwrap();
        let opts = SolverOptions::default().with_tol(1e-13, 1e-15);
        let mut st = method::build("dopri5", &opts).unwrap();
        let exact = solve(f.as_mut(), st.as_mut(), 0.0, &y0, t1, &opts, &mut Discard)
            .unwrap()
            .y;
        let mut f = build(name, &settings, &sys).unwrap();
        let y0 = f.initial_state(0.0, &q0, &v0).unwrap();
        let (slope, errs) = empirical_order(
            "rk4",
            f.as_mut(),
            0.0,
            &y0,
            t1,
            &exact,
            0.005,
            4,
            &SolverOptions::default(),
        )
        .unwrap();
        eprintln!("{name}: slope {slope:.3}, errors {errs:?}");
        assert!((slope - 4.0).abs() < 0.2, "{name}: slope {slope}, {errs:?}");
        let _: &dyn Formulation = f.as_ref();
    }
}
