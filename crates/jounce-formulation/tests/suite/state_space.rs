//! The state-space formulation (Haug, Negrut & Iancu 1997) with implicit
//! integrators on studies.md S5, the stiff double pendulum: fixed steps
//! 40 times rk4's stable step, adaptive runs, agreement with the augmented
//! form, and the exact state-space Jacobian against differences.
//!
//! Measured (release build, this machine): rk4 on augmented is stable at
//! h = 1e-3 and blows up at 2e-3; dopri5 at rtol = atol = 1e-3 takes 6660
//! steps and changes the energy by 2.50 J (partitioning; 9.7 J on
//! augmented). On state_space at h = 0.04 (125 steps, one Jacobian, two
//! LU): sdirk2 4.5e-3 J, sdirk3 3.5e-2 J, esdirk43 3.2e-4 J, trapezoidal
//! 1.9e-2 J, in 0.002–0.008 s of CPU against dopri5's 0.2 s.

use crate::common;

use std::path::Path;
use std::sync::OnceLock;

use jounce_formulation::{Augmented, Formulation, Partitioning, StateSpace};
use jounce_integrate::{method, solve, OdeProblem, OutputGrid, Recorder, SolverOptions, Stats};
use jounce_mechanics::{assemble, MechanicalSystem, PlanarSystem};
use nalgebra::DMatrix;

const S5: &str = "studies/s5_stiff_double_pendulum.toml";

/// A shipped example, assembled: (system, q0, v0).
fn load(file: &str) -> (PlanarSystem, Vec<f64>, Vec<f64>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let model = jounce_model::load_file(&dir.join(file)).expect("model");
    let sys = PlanarSystem::from_model(&model).expect("system");
    let asm = assemble(&sys, 0.0, &sys.initial_q(), &sys.initial_v(), 1e-12).expect("assembly");
    (sys, asm.q, asm.v)
}

/// What a run did and how accurate it was, over outputs every 0.01 s (as
/// `jounce run` samples S5).
struct Outcome {
    stats: Stats,
    /// Error message of a failed run.
    error: Option<String>,
    t_reached: f64,
    /// max |E(t) − E(0)| / max(|E(0)|, T(0)), 1 J when both vanish (S5).
    energy: f64,
    /// max ‖Φ‖∞, max ‖Φ_q v + Φ_t‖∞.
    position_violation: f64,
    velocity_violation: f64,
    q: Vec<f64>,
    v: Vec<f64>,
}

fn integrate(
    sys: &PlanarSystem,
    f: &mut dyn Formulation,
    (q0, v0): (&[f64], &[f64]),
    method_name: &str,
    opts: SolverOptions,
    t1: f64,
) -> Outcome {
    let y0 = f.initial_state(0.0, q0, v0).expect("initial state");
    let opts = SolverOptions {
        output: OutputGrid::Every(0.01),
        ..opts
    };
    let mut stepper = method::build(method_name, &opts).expect("method");
    let mut rec = Recorder::default();
    let r = solve(f, stepper.as_mut(), 0.0, &y0, t1, &opts, &mut rec);
    let (stats, error) = match r {
        Ok(s) => (s.stats, None),
        Err(e) => (e.stats, Some(e.to_string())),
    };
    let (n, m) = (sys.nq(), sys.nc());
    let (mut q, mut v, mut lambda) = (vec![0.0; n], vec![0.0; n], vec![0.0; m]);
    let (mut phi, mut phi_t) = (vec![0.0; m], vec![0.0; m]);
    let mut jac = DMatrix::zeros(m, n);
    let mut out = Outcome {
        stats,
        error,
        t_reached: *rec.t.last().unwrap_or(&0.0),
        energy: 0.0,
        position_violation: 0.0,
        velocity_violation: 0.0,
        q: Vec::new(),
        v: Vec::new(),
    };
    let mut e0 = None;
    for (&t, y) in rec.t.iter().zip(&rec.y) {
        f.physical_state(t, y, &mut q, &mut v, &mut lambda)
            .expect("physical state");
        let kinetic = sys.kinetic_energy(&q, &v);
        let e = kinetic + sys.potential_energy(t, &q);
        let (e_start, scale) = *e0.get_or_insert((e, e.abs().max(kinetic)));
        let scale = if scale > 1e-12 { scale } else { 1.0 };
        out.energy = out.energy.max((e - e_start).abs() / scale);
        sys.constraints(t, &q, &mut phi);
        sys.constraint_jacobian(t, &q, &mut jac);
        sys.constraint_time_derivative(t, &q, &mut phi_t);
        for i in 0..m {
            out.position_violation = out.position_violation.max(phi[i].abs());
            let r: f64 = phi_t[i] + (0..n).map(|j| jac[(i, j)] * v[j]).sum::<f64>();
            out.velocity_violation = out.velocity_violation.max(r.abs());
        }
    }
    out.q = q;
    out.v = v;
    out
}

fn fixed(h: f64, tol: f64) -> SolverOptions {
    SolverOptions {
        fixed_step: Some(h),
        ..SolverOptions::default().with_tol(tol, tol)
    }
}

/// dopri5 at rtol = atol = 1e-3 on S5 (partitioning), run once for all
/// the tests of this file: (energy variation, CPU seconds).
fn dopri5_reference() -> (f64, f64) {
    static REF: OnceLock<(f64, f64)> = OnceLock::new();
    *REF.get_or_init(|| {
        let (sys, q0, v0) = load(S5);
        let mut f = Partitioning::new(&sys, 2.0, 1e6).unwrap();
        let opts = SolverOptions::default().with_tol(1e-3, 1e-3);
        let r = integrate(&sys, &mut f, (&q0, &v0), "dopri5", opts, 5.0);
        assert!(r.error.is_none(), "dopri5: {:?}", r.error);
        eprintln!(
            "dopri5 rtol 1e-3: {} steps, energy {:.3e}, CPU {:.3} s",
            r.stats.n_accept, r.energy, r.stats.cpu_seconds
        );
        (r.energy, r.stats.cpu_seconds)
    })
}

#[test]
fn s5_with_sdirk_at_forty_times_the_explicit_stable_step() {
    let (sys, q0, v0) = load(S5);
    // the chart: full pivoting (partitioning) integrates (y2, θ2), whose
    // map to q_d folds; state_space prefers the coordinates the
    // constraints are linear in as dependent, leaving the two angles
    let mut part = Partitioning::new(&sys, 2.0, 1e6).unwrap();
    part.initial_state(0.0, &q0, &v0).unwrap();
    assert_eq!(part.independent(), &[4, 5]);
    let mut probe = StateSpace::new(&sys, 2.0, 1e6).unwrap();
    probe.initial_state(0.0, &q0, &v0).unwrap();
    assert_eq!(probe.independent(), &[2, 5], "link1.theta, link2.theta");

    let (e_dopri5, cpu_dopri5) = dopri5_reference();
    // rk4 is stable at h = 1e-3 only: h = 0.04 is 40 times that
    let h = 0.04;
    // measured energy variation (J): sdirk2 4.5e-3, sdirk3 3.5e-2,
    // esdirk43 3.2e-4, trapezoidal 1.9e-2 (dopri5 at 1e-3: 2.5)
    for (name, bound) in [
        ("sdirk2", 1e-2),
        ("sdirk3", 1e-1),
        ("esdirk43", 1e-3),
        ("trapezoidal", 5e-2),
    ] {
        let mut f = StateSpace::new(&sys, 2.0, 1e6).unwrap();
        // the model file's tolerances (they set the Newton tolerance)
        let r = integrate(&sys, &mut f, (&q0, &v0), name, fixed(h, 1e-9), 5.0);
        eprintln!(
            "{name} h = {h}: {} steps, {} Jacobians, {} LU, {} Newton iterations, \
             energy {:.3e} (dopri5 {e_dopri5:.3e}), |Φ| {:.1e}, |Φ'| {:.1e}, CPU {:.4} s \
             (dopri5 {cpu_dopri5:.3} s)",
            r.stats.n_accept,
            r.stats.n_jac,
            r.stats.n_lu,
            r.stats.n_newton_iter,
            r.energy,
            r.position_violation,
            r.velocity_violation,
            r.stats.cpu_seconds
        );
        assert!(r.error.is_none(), "{name}: {:?}", r.error);
        assert_eq!(r.t_reached, 5.0, "{name}");
        assert_eq!(r.stats.n_accept, 125, "{name}");
        assert!(r.energy < e_dopri5, "{name}: {} vs {e_dopri5}", r.energy);
        assert!(r.energy < bound, "{name}: energy {:e}", r.energy);
        // constraints hold to the Newton precision of the recovery
        assert!(r.position_violation < 1e-12, "{name}");
        assert!(r.velocity_violation < 1e-12, "{name}");
        // the partition never changes, and one Jacobian serves the run
        assert_eq!(f.n_repartitions(), 0, "{name}");
        assert!(r.stats.n_jac <= 2, "{name}: {} Jacobians", r.stats.n_jac);
    }
}

#[test]
fn s5_adaptive_implicit_methods_complete_at_rtol_1e_3() {
    let (sys, q0, v0) = load(S5);
    let (e_dopri5, _) = dopri5_reference();
    // measured: steps (energy variation, J) sdirk2 35 (2.7e-2), sdirk3 42
    // (0.59), esdirk43 24 (0.74), trbdf2 57 (0.11), trapezoidal 256
    // (0.10), bdf 85 (0.20), radau5 50 (6.6e-2)
    for name in [
        "sdirk2",
        "sdirk3",
        "esdirk43",
        "trbdf2",
        "trapezoidal",
        "bdf",
        "radau5",
    ] {
        let mut f = StateSpace::new(&sys, 2.0, 1e6).unwrap();
        let opts = SolverOptions::default().with_tol(1e-3, 1e-3);
        let r = integrate(&sys, &mut f, (&q0, &v0), name, opts, 5.0);
        eprintln!(
            "{name} rtol 1e-3: {} steps / {} rejected, {} Jacobians, energy {:.3e}, CPU {:.4} s",
            r.stats.n_accept, r.stats.n_reject, r.stats.n_jac, r.energy, r.stats.cpu_seconds
        );
        assert!(r.error.is_none(), "{name}: {:?}", r.error);
        assert_eq!(r.t_reached, 5.0, "{name}");
        assert!(r.stats.n_accept < 300, "{name}: {} steps", r.stats.n_accept);
        assert!(r.energy < e_dopri5, "{name}: {} vs {e_dopri5}", r.energy);
        assert!(r.position_violation < 1e-12, "{name}");
    }
}

#[test]
fn state_space_agrees_with_augmented_on_the_double_pendulum() {
    let (sys, q0, v0) = load("double_pendulum.toml");
    let t1 = 2.0;
    let mut aug = Augmented::new(&sys);
    let opts = SolverOptions::default().with_tol(1e-11, 1e-13);
    let reference = integrate(&sys, &mut aug, (&q0, &v0), "dopri5", opts, t1);
    assert!(reference.error.is_none());
    // measured max |Δq|, |Δv| at t = 2 (rtol 1e-10): radau5 9.8e-11,
    // 1.3e-9 (656 steps); esdirk43 7.1e-10, 1.1e-8 (1064 steps)
    for name in ["radau5", "esdirk43"] {
        let mut f = StateSpace::new(&sys, 2.0, 1e6).unwrap();
        let opts = SolverOptions::default().with_tol(1e-10, 1e-12);
        let r = integrate(&sys, &mut f, (&q0, &v0), name, opts, t1);
        assert!(r.error.is_none(), "{name}: {:?}", r.error);
        let dq = common::max_diff(&r.q, &reference.q);
        let dv = common::max_diff(&r.v, &reference.v);
        eprintln!(
            "{name}: |Δq| {dq:.2e}, |Δv| {dv:.2e}, {} steps",
            r.stats.n_accept
        );
        assert!(dq < 1e-7 && dv < 1e-7, "{name}: {dq:e} {dv:e}");
    }
}

/// Central differences of the right-hand side.
fn central_jacobian(f: &mut dyn OdeProblem, t: f64, y: &[f64]) -> DMatrix<f64> {
    let n = y.len();
    let mut jac = DMatrix::zeros(n, n);
    let (mut fp, mut fm) = (vec![0.0; n], vec![0.0; n]);
    let mut x = y.to_vec();
    for j in 0..n {
        let h = 1e-6 * (1.0 + y[j].abs());
        x[j] = y[j] + h;
        f.rhs(t, &x, &mut fp).unwrap();
        x[j] = y[j] - h;
        f.rhs(t, &x, &mut fm).unwrap();
        x[j] = y[j];
        for i in 0..n {
            jac[(i, j)] = (fp[i] - fm[i]) / (2.0 * h);
        }
    }
    jac
}

#[test]
fn the_state_space_jacobian_is_exact() {
    for (file, t1) in [
        (S5, 0.37),
        ("double_pendulum.toml", 0.8),
        ("four_bar.toml", 0.3),
    ] {
        let (sys, q0, v0) = load(file);
        let mut f = StateSpace::new(&sys, 2.0, 1e6).unwrap();
        assert!(f.has_exact_jacobian());
        // a state in motion, away from the assembled one
        let y0 = f.initial_state(0.0, &q0, &v0).unwrap();
        let opts = SolverOptions::default().with_tol(1e-8, 1e-10);
        let mut st = method::build("radau5", &opts).unwrap();
        let r = solve(
            &mut f,
            st.as_mut(),
            0.0,
            &y0,
            t1,
            &opts,
            &mut jounce_integrate::testkit::Discard,
        )
        .unwrap();
        let y = r.y.clone();
        let mut exact = DMatrix::zeros(y.len(), y.len());
        f.jacobian(t1, &y, &mut exact).unwrap();
        let diff = central_jacobian(&mut f, t1, &y);
        let rel = (&exact - &diff).amax() / (1.0 + diff.amax());
        eprintln!("{file}: |J − J_fd| / (1 + |J_fd|) = {rel:.1e}");
        assert!(rel < 1e-7, "{file}: {rel:e}");
        // and the right-hand side is a function of y alone: evaluating
        // far away and back does not change it (no warm start from the
        // last evaluation)
        let (mut a, mut b) = (vec![0.0; y.len()], vec![0.0; y.len()]);
        f.rhs(t1, &y, &mut a).unwrap();
        let mut far = y.clone();
        far[0] += 0.5;
        f.rhs(t1, &far, &mut b).unwrap();
        f.rhs(t1, &y, &mut b).unwrap();
        assert!(
            common::max_diff(&a, &b) <= 1e-9 * (1.0 + a.iter().fold(0.0f64, |m, x| m.max(x.abs())))
        );
    }
}

/// `partitioning` re-partitions S5 at t = 0.5100000000000002, which rounds
/// to the output time 0.51: the output there must be read in the meaning y
/// has (`jounce run` reported an energy change of 1.2e4 J from it).
#[test]
fn partitioning_reads_outputs_at_a_switch_time_in_the_right_partition() {
    let (sys, q0, v0) = load(S5);
    let mut f = Partitioning::new(&sys, 2.0, 1e6).unwrap();
    let r = integrate(&sys, &mut f, (&q0, &v0), "sdirk2", fixed(0.01, 1e-9), 1.0);
    assert!(r.error.is_none(), "{:?}", r.error);
    let switch = f.history()[1].0;
    eprintln!("partitions {:?}; energy {:.3e}", f.history(), r.energy);
    let grid = (switch / 0.01).round() * 0.01;
    assert!(
        switch != grid && (switch - grid).abs() < 1e-12,
        "switch at {switch}"
    );
    // measured 9.7e-3 J
    assert!(r.energy < 0.05, "energy {:e}", r.energy);
}

/// The four-bar's crank acceleration falls from 130 to 0 rad/s² within
/// 0.4 rad: at h = 0.02 the Jacobian at a step's start does not contract
/// the later stages, and the SDIRK driver solves them by full Newton
/// (it stopped with "Newton iteration failed at t = 1.72" before).
#[test]
fn four_bar_at_large_fixed_steps() {
    let (sys, q0, v0) = load("four_bar.toml");
    // measured relative energy variation: 1.9e-2 (150 steps, 7 Jacobians),
    // 9.9e-2 (60 steps, 61 Jacobians)
    for (h, bound) in [(0.02, 0.05), (0.05, 0.2)] {
        let mut f = StateSpace::new(&sys, 2.0, 1e6).unwrap();
        let r = integrate(&sys, &mut f, (&q0, &v0), "sdirk2", fixed(h, 1e-6), 3.0);
        eprintln!(
            "four-bar sdirk2 h = {h}: {} steps, {} Jacobians, energy {:.2e}, dependent {:?}",
            r.stats.n_accept,
            r.stats.n_jac,
            r.energy,
            f.dependent()
        );
        assert!(r.error.is_none(), "h = {h}: {:?}", r.error);
        // the crank angle is the independent coordinate throughout
        assert_eq!(f.independent(), &[2]);
        assert_eq!(f.n_repartitions(), 0);
        assert!(r.position_violation < 1e-12);
        assert!(r.energy < bound, "h = {h}: energy {:e}", r.energy);
    }
}
