//! Shared helpers of the formulation tests: run a formulation with an
//! integrator and read back the physical state.
#![allow(dead_code)]

use jounce_formulation::Formulation;
use jounce_integrate::{method, solve, OutputGrid, Recorder, SolverOptions, Stats};
use jounce_mechanics::MechanicalSystem;

/// Result of one run: final q, v, λ, the stats and the constraint
/// violation max|Φ| over every recorded output.
pub struct Run {
    pub q: Vec<f64>,
    pub v: Vec<f64>,
    pub lambda: Vec<f64>,
    pub stats: Stats,
    pub drift: Vec<(f64, f64)>,
}

/// Integrate `f` from (0, q0, v0) to t1 with `method` at rtol/atol,
/// recording every accepted step.
pub fn run<S: MechanicalSystem + ?Sized>(
    sys: &S,
    f: &mut dyn Formulation,
    q0: &[f64],
    v0: &[f64],
    t1: f64,
    method_name: &str,
    rtol: f64,
    atol: f64,
) -> Run {
    let opts = SolverOptions::default().with_tol(rtol, atol);
    run_with(sys, f, q0, v0, t1, method_name, opts)
}

/// [`run`] with the given solver options (fixed steps, h0, ...); the
/// output grid is replaced by every step.
pub fn run_with<S: MechanicalSystem + ?Sized>(
    sys: &S,
    f: &mut dyn Formulation,
    q0: &[f64],
    v0: &[f64],
    t1: f64,
    method_name: &str,
    opts: SolverOptions,
) -> Run {
    let y0 = f.initial_state(0.0, q0, v0).expect("initial state");
    let opts = SolverOptions {
        output: OutputGrid::Steps,
        ..opts
    };
    let mut st = method::build(method_name, &opts).unwrap();
    let mut rec = Recorder::default();
    let r = solve(f, st.as_mut(), 0.0, &y0, t1, &opts, &mut rec)
        .unwrap_or_else(|e| panic!("{}: {e}", f.name()));
    let (n, m) = (sys.nq(), sys.nc());
    let (mut q, mut v, mut l) = (vec![0.0; n], vec![0.0; n], vec![0.0; m]);
    let mut phi = vec![0.0; m];
    let mut drift = Vec::new();
    for (t, y) in rec.t.iter().zip(&rec.y) {
        f.physical_state(*t, y, &mut q, &mut v, &mut l).unwrap();
        sys.constraints(*t, &q, &mut phi);
        drift.push((*t, phi.iter().fold(0.0f64, |a, b| a.max(b.abs()))));
    }
    assert_eq!(*rec.t.last().unwrap(), t1);
    Run {
        q,
        v,
        lambda: l,
        stats: r.stats,
        drift,
    }
}

/// max |a − b|
pub fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).fold(0.0, |m, (x, y)| m.max((x - y).abs()))
}

/// max |Φ| over outputs with t in [ta, tb]
pub fn max_drift(d: &[(f64, f64)], ta: f64, tb: f64) -> f64 {
    d.iter()
        .filter(|(t, _)| *t >= ta && *t <= tb)
        .fold(0.0, |m, (_, p)| m.max(*p))
}
