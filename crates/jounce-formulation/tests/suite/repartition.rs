//! Coordinate partitioning changes its independent coordinates when the
//! first choice degenerates, and stays accurate through the change.

use crate::common;

use common::run;
use jounce_formulation::examples::models;
use jounce_formulation::Partitioning;
use jounce_integrate::{method, solve, EvalError, OdeProblem, SolverOptions};

/// The same rod pendulum in its one joint coordinate θ:
/// (m l²/3) θ'' = −m g (l/2) cos θ.
struct AngleOnly {
    l: f64,
}

impl OdeProblem for AngleOnly {
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        dy[0] = y[1];
        dy[1] = -9.81 * (self.l / 2.0) * y[0].cos() / (self.l * self.l / 3.0);
        Ok(())
    }
}

#[test]
fn pendulum_swinging_through_bottom_repartitions_and_stays_accurate() {
    // rod of length 4 m released 0.3 rad above the horizontal: full
    // pivoting of Φ_q = [1 0 2 sinθ; 0 1 −2 cosθ] first picks y as the
    // independent coordinate, which is singular at the bottom (θ = −π/2)
    let (l, th0) = (4.0, 0.3);
    let (sys, q0, v0) = models::pendulum(l, 1.0, th0, 0.0);
    let mut f = Partitioning::new(&sys, 10.0, 1e6).unwrap();
    let t1 = 2.0;
    let r = run(&sys, &mut f, &q0, &v0, t1, "dopri5", 1e-10, 1e-12);
    let hist: Vec<_> = f.history().to_vec();
    eprintln!("partitions: {hist:?}, restarts {}", r.stats.n_restart);
    assert_eq!(hist[0].1, vec![0, 2], "first choice: x, θ dependent");
    assert!(f.n_repartitions() >= 1, "no re-partitioning happened");
    assert!(r.stats.n_restart >= f.n_repartitions() as u64);
    assert!(hist.iter().any(|(_, d)| d != &hist[0].1));

    // reference: the one-coordinate equation, integrated tightly
    let opts = SolverOptions::default().with_tol(1e-12, 1e-14);
    let mut st = method::build("dopri5", &opts).unwrap();
    let refsol = solve(
        &mut AngleOnly { l },
        st.as_mut(),
        0.0,
        &[th0, 0.0],
        t1,
        &opts,
        &mut jounce_integrate::testkit::Discard,
    )
    .unwrap();
    let th_ref = refsol.y[0];
    assert!(
        th_ref < -std::f64::consts::FRAC_PI_2,
        "must pass the bottom: θ = {th_ref}"
    );
    let err = (r.q[2] - th_ref).abs().max((r.v[2] - refsol.y[1]).abs());
    eprintln!("θ(2) = {} (reference {th_ref}), error {err:.2e}", r.q[2]);
    assert!(err < 1e-6, "error {err:e}");
    // every recorded output, read with the partition in force at its time,
    // satisfies the constraints
    assert!(common::max_drift(&r.drift, 0.0, t1) < 1e-11);
    // and the centre of mass is on the circle
    let rr = (r.q[0] * r.q[0] + r.q[1] * r.q[1]).sqrt();
    assert!((rr - l / 2.0).abs() < 1e-12);
}

#[test]
fn without_repartitioning_the_first_partition_fails_at_the_bottom() {
    let (sys, q0, v0) = models::pendulum(4.0, 1.0, 0.3, 0.0);
    let mut f = Partitioning::new(&sys, 1e300, 1e300).unwrap();
    let y0 = jounce_formulation::Formulation::initial_state(&mut f, 0.0, &q0, &v0).unwrap();
    let opts = SolverOptions::default().with_tol(1e-10, 1e-12);
    let mut st = method::build("dopri5", &opts).unwrap();
    let r = solve(
        &mut f,
        st.as_mut(),
        0.0,
        &y0,
        2.0,
        &opts,
        &mut jounce_integrate::testkit::Discard,
    );
    eprintln!("{r:?}");
    let e = r.expect_err("y cannot stay independent through the bottom");
    assert_eq!(f.n_repartitions(), 0);
    assert!(e.t < 1.2, "failed at t = {}", e.t);
    let msg = e.to_string();
    assert!(msg.contains("rod.x, rod.theta"), "{msg}");
}
