//! Exact Jacobians and tangent matrices of every formulation (from the
//! differentiated KKT / penalty equations and the systems' exact second
//! derivatives) against difference quotients of the right-hand side, on
//! the hand-written test systems and on planar systems built from the
//! example models; and integrations with the exact Jacobian against the
//! same integrations with finite differences.

use std::path::Path;

use jounce_formulation::examples::models;
use jounce_formulation::{Augmented, Formulation, Partitioning, Penalty, Projection};
use jounce_integrate::jacobian::{fd_jacobian, fd_tangent};
use jounce_integrate::{
    method, solve, Discard, EvalError, OdeProblem, SecondOrderProblem, SolverOptions, Stats,
    StepFix,
};
use jounce_mechanics::{assemble, MechanicalSystem, PlanarSystem, SystemQueries};
use nalgebra::DMatrix;

/// Deterministic pseudo-random numbers in [−1, 1).
fn noise(seed: &mut u64) -> f64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
}

/// Central differences of f's right-hand side (error O(h²) ~ 1e-10).
fn central_jacobian(f: &mut dyn Formulation, t: f64, y: &[f64]) -> DMatrix<f64> {
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

/// max |a − b| / (1 + max |b|)
fn rel_diff(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    (a - b).amax() / (1.0 + b.amax())
}

/// Exact Jacobian of `f` at y0 perturbed by `eps` (off the constraint
/// manifold for the [q; v] formulations) against central differences
/// (to `tol`) and the integrators' forward differences (to 1e-2 only: with
/// increments sqrt(ε)·max(|y_j|, 1e-5) they are accurate to ~1e-4 where
/// components of y are small and to ~2e-3 on the penalty form, whose
/// entries are O(α); this inaccuracy is what the exact Jacobian removes).
fn check_jacobian(f: &mut dyn Formulation, y0: &[f64], eps: f64, tol: f64, what: &str) {
    let mut seed = 3;
    let y: Vec<f64> = y0.iter().map(|x| x + eps * noise(&mut seed)).collect();
    let t = 0.37;
    let n = y.len();
    assert!(f.has_exact_jacobian(), "{what}");
    let mut exact = DMatrix::zeros(n, n);
    f.jacobian(t, &y, &mut exact).unwrap();
    let central = central_jacobian(f, t, &y);
    let mut forward = DMatrix::zeros(n, n);
    fd_jacobian(f, t, &y, &mut forward).unwrap();
    let (ec, ef) = (rel_diff(&exact, &central), rel_diff(&exact, &forward));
    eprintln!(
        "{what} ({}): |J| = {:.2e}, vs central {ec:.1e}, vs forward {ef:.1e}",
        f.name(),
        exact.amax()
    );
    assert!(ec < tol, "{what} ({}): exact vs central {ec:e}", f.name());
    assert!(ef < 1e-2, "{what} ({}): exact vs forward {ef:e}", f.name());
    assert!(exact.amax() > 1.0, "{what}: the Jacobian must be exercised");
}

/// Exact tangent of the second-order form against central differences of
/// the residual and against `fd_tangent`.
fn check_tangent(f: &mut dyn Formulation, q0: &[f64], v0: &[f64], tol: f64, what: &str) {
    let n = q0.len();
    let mut seed = 17;
    let q: Vec<f64> = q0.iter().map(|x| x + 1e-3 * noise(&mut seed)).collect();
    let v: Vec<f64> = v0.iter().map(|x| x + 0.3 * noise(&mut seed)).collect();
    let a: Vec<f64> = (0..n).map(|_| 2.0 * noise(&mut seed)).collect();
    let t = 0.37;
    let name = f.name();
    let so = f.as_second_order().expect("second-order form");
    assert!(so.has_exact_tangent(), "{what}");
    let (mut k, mut c) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
    so.tangent(t, &q, &v, &a, &mut k, &mut c).unwrap();
    // central differences of r = M(q) a − f(t, q, v)
    let mut residual = |q: &[f64], v: &[f64]| -> Vec<f64> {
        let mut m = DMatrix::zeros(n, n);
        let mut force = vec![0.0; n];
        so.mass_matrix(t, q, &mut m).unwrap();
        so.forces(t, q, v, &mut force).unwrap();
        (0..n)
            .map(|i| (0..n).map(|j| m[(i, j)] * a[j]).sum::<f64>() - force[i])
            .collect()
    };
    let (mut kc, mut cc) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
    for j in 0..n {
        for (x0, out, is_q) in [(&q, &mut kc, true), (&v, &mut cc, false)] {
            let h = 1e-6 * (1.0 + x0[j].abs());
            let (mut xp, mut xm) = (x0.clone(), x0.clone());
            xp[j] += h;
            xm[j] -= h;
            let (rp, rm) = if is_q {
                (residual(&xp, &v), residual(&xm, &v))
            } else {
                (residual(&q, &xp), residual(&q, &xm))
            };
            for i in 0..n {
                out[(i, j)] = (rp[i] - rm[i]) / (2.0 * h);
            }
        }
    }
    let (mut kf, mut cf) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
    fd_tangent(so, t, &q, &v, &a, &mut kf, &mut cf).unwrap();
    let (ek, ec) = (rel_diff(&k, &kc), rel_diff(&c, &cc));
    let (ekf, ecf) = (rel_diff(&k, &kf), rel_diff(&c, &cf));
    eprintln!(
        "{what} ({name}) tangent: |K| = {:.2e}, |C| = {:.2e}, vs central {ek:.1e} {ec:.1e}, \
         vs forward {ekf:.1e} {ecf:.1e}",
        k.amax(),
        c.amax()
    );
    assert!(ek < tol && ec < tol, "{what} ({name}): K {ek:e}, C {ec:e}");
    // penalty's second-order form is the acceleration form a = M_p⁻¹ f_p:
    // forward differences of it are as inaccurate as those of its
    // first-order right-hand side (entries O(α) cancelled in the solve;
    // measured 2e-2 on the double pendulum), which is what the exact
    // tangent removes
    let fwd_tol = if name == "penalty" { 5e-2 } else { 1e-3 };
    assert!(
        ekf < fwd_tol && ecf < fwd_tol,
        "{what} ({name}): vs fd_tangent {ekf:e} {ecf:e}"
    );
}

/// Every formulation on one system at (q0, v0).
fn check_all<S: MechanicalSystem>(sys: &S, q0: &[f64], v0: &[f64], tol: f64, what: &str) {
    let y: Vec<f64> = q0.iter().chain(v0).copied().collect();
    let mut aug = Augmented::new(sys);
    aug.initial_state(0.0, q0, v0).unwrap();
    check_jacobian(&mut aug, &y, 1e-3, tol, what);
    check_tangent(&mut aug, q0, v0, tol, what);
    let mut baum = Augmented::new(sys).with_baumgarte(5.0, 7.0).unwrap();
    check_jacobian(&mut baum, &y, 1e-3, tol, &format!("{what}, Baumgarte"));
    check_tangent(&mut baum, q0, v0, tol, &format!("{what}, Baumgarte"));
    let mut proj = Projection::new(sys, 1e-10).unwrap();
    proj.initial_state(0.0, q0, v0).unwrap();
    check_jacobian(&mut proj, &y, 1e-3, tol, what);
    // moderate α keeps the difference quotients meaningful
    let mut pen = Penalty::new(sys, 1e3, 10.0, 1.0).unwrap();
    pen.initial_state(0.0, q0, v0).unwrap();
    check_jacobian(&mut pen, &y, 1e-3, tol, what);
    check_tangent(&mut pen, q0, v0, tol, what);
    if sys.nc() < sys.nq() {
        let mut part = Partitioning::new(sys, 2.0, 1e6).unwrap();
        let yi = part.initial_state(0.0, q0, v0).unwrap();
        check_jacobian(&mut part, &yi, 1e-4, tol, what);
    }
}

#[test]
fn exact_jacobians_match_differences_on_the_hand_written_systems() {
    let cases = [
        ("pendulum", models::pendulum(2.0, 1.5, 0.4, 0.7)),
        (
            "double pendulum",
            models::double_pendulum(1.0, 0.8, 1.0, 2.0, 0.3, -0.5, 1.0, 2.0, 5.0, 3.0),
        ),
        (
            "slider-crank",
            models::slider_crank(0.3, 1.0, 0.5, 1.5, 2.0, 0.9, 4.0),
        ),
        (
            "driven double pendulum",
            models::driven_double_pendulum(1.0, 1.0, 1.0, 1.0, 0.2, 0.3, 0.4, 3.0),
        ),
    ];
    for (what, (sys, q0, v0)) in cases {
        check_all(&sys, &q0, &v0, 1e-6, what);
    }
}

fn example(name: &str) -> (PlanarSystem, Vec<f64>, Vec<f64>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name);
    let model = jounce_model::load_file(&path).unwrap();
    let sys = PlanarSystem::from_model(&model).unwrap();
    let a = assemble(&sys, 0.0, &sys.initial_q(), &sys.initial_v(), 1e-12).unwrap();
    (sys, a.q, a.v)
}

#[test]
fn exact_jacobians_match_differences_on_the_example_models() {
    for name in ["double_pendulum.toml", "slider_crank.toml", "four_bar.toml"] {
        let (sys, q0, mut v0) = example(name);
        assert!(sys.has_exact_second_derivatives());
        // some motion, so that the velocity terms count (kept consistent
        // for partitioning by projecting onto Φ_q v = 0 through assembly)
        let mut seed = 23;
        for x in v0.iter_mut() {
            *x += noise(&mut seed);
        }
        let a = assemble(&sys, 0.0, &q0, &v0, 1e-12).unwrap();
        check_all(&sys, &a.q, &a.v, 1e-6, name);
    }
}

/// A formulation with its exact derivatives hidden, so that integrators
/// fall back to finite differences of the whole right-hand side.
struct FdOnly<'a>(&'a mut dyn Formulation);

impl OdeProblem for FdOnly<'_> {
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        self.0.rhs(t, y, dy)
    }
    fn after_step(&mut self, t: f64, y: &mut [f64]) -> Result<StepFix, EvalError> {
        self.0.after_step(t, y)
    }
    fn breakpoints(&self) -> &[f64] {
        self.0.breakpoints()
    }
    fn as_second_order(&mut self) -> Option<&mut dyn SecondOrderProblem> {
        Some(self)
    }
}

impl SecondOrderProblem for FdOnly<'_> {
    fn ndof(&self) -> usize {
        self.0.dim() / 2
    }
    fn mass_matrix(&mut self, t: f64, q: &[f64], m: &mut DMatrix<f64>) -> Result<(), EvalError> {
        self.0.as_second_order().unwrap().mass_matrix(t, q, m)
    }
    fn forces(&mut self, t: f64, q: &[f64], v: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        self.0.as_second_order().unwrap().forces(t, q, v, f)
    }
}

/// Final state and stats of `method` on p from y0 over [0, t1].
fn integrate(
    p: &mut dyn OdeProblem,
    y0: &[f64],
    t1: f64,
    name: &str,
    opts: &SolverOptions,
) -> (Vec<f64>, Stats) {
    let mut st = method::build(name, opts).unwrap();
    let r = solve(p, st.as_mut(), 0.0, y0, t1, opts, &mut Discard).unwrap();
    (r.y, r.stats)
}

#[test]
fn implicit_methods_with_exact_jacobians_agree_with_finite_differences_and_cost_less() {
    let (sys, q0, v0) = example("double_pendulum.toml");
    let opts = SolverOptions::default().with_tol(1e-8, 1e-10);
    let cases: [(&str, &str); 6] = [
        ("radau5", "augmented"),
        ("bdf", "augmented"),
        ("radau5", "augmented+baumgarte"),
        ("radau5", "projection"),
        ("radau5", "penalty"),
        ("radau5", "partitioning"),
    ];
    for (method_name, form) in cases {
        let mut f: Box<dyn Formulation> = match form {
            "augmented" => Box::new(Augmented::new(&sys)),
            "augmented+baumgarte" => {
                Box::new(Augmented::new(&sys).with_baumgarte(10.0, 10.0).unwrap())
            }
            "projection" => Box::new(Projection::new(&sys, 1e-10).unwrap()),
            "penalty" => Box::new(Penalty::new(&sys, 1e5, 10.0, 1.0).unwrap()),
            _ => Box::new(Partitioning::new(&sys, 2.0, 1e6).unwrap()),
        };
        let label = format!("{method_name}/{form}");
        let name = label.as_str();
        let y0 = f.initial_state(0.0, &q0, &v0).unwrap();
        let (y_ex, s_ex) = integrate(f.as_mut(), &y0, 2.0, method_name, &opts);
        let y0 = f.initial_state(0.0, &q0, &v0).unwrap();
        let (y_fd, s_fd) = integrate(&mut FdOnly(f.as_mut()), &y0, 2.0, method_name, &opts);
        let d = y_ex
            .iter()
            .zip(&y_fd)
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        eprintln!(
            "{name}: exact n_rhs {} n_jac {} n_steps {}; fd n_rhs {} n_jac {} n_steps {}; |Δy| {d:.1e}",
            s_ex.n_rhs,
            s_ex.n_jac,
            s_ex.n_steps(),
            s_fd.n_rhs,
            s_fd.n_jac,
            s_fd.n_steps()
        );
        assert!(d < 1e-6, "{name}: exact and FD runs differ by {d:e}");
        assert!(s_ex.n_jac > 0);
        if s_ex.n_steps() == s_fd.n_steps() && s_ex.n_jac == s_fd.n_jac {
            // the same steps: each FD Jacobian costs dim + 1 extra evaluations
            let dim = y0.len() as u64;
            assert_eq!(s_fd.n_rhs - s_ex.n_rhs, s_ex.n_jac * (dim + 1), "{name}");
        }
        assert!(s_ex.n_rhs < s_fd.n_rhs);
    }
}

#[test]
fn structural_methods_with_exact_tangents_agree_with_finite_differences() {
    let (sys, q0, v0) = example("double_pendulum.toml");
    // adaptive: fixed-step Newmark on the penalty form fails in Newton with
    // either tangent (the 1e-10 relative Newton test at large α)
    let opts = SolverOptions::default().with_tol(1e-6, 1e-6);
    let t1 = 0.5;
    let run = |f: &mut dyn Formulation, exact: bool| {
        let y0 = f.initial_state(0.0, &q0, &v0).unwrap();
        if exact {
            integrate(f, &y0, t1, "newmark", &opts)
        } else {
            integrate(&mut FdOnly(f), &y0, t1, "newmark", &opts)
        }
    };
    let mut results = Vec::new();
    for exact in [true, false] {
        let mut aug = Augmented::new(&sys);
        let mut pen = Penalty::new(&sys, 1e5, 10.0, 1.0).unwrap();
        let forms: [&mut dyn Formulation; 2] = [&mut aug, &mut pen];
        for f in forms {
            let name = f.name();
            let (y, s) = run(f, exact);
            eprintln!(
                "newmark/{name} exact {exact}: n_rhs {} n_jac {} n_newton {}",
                s.n_rhs, s.n_jac, s.n_newton_iter
            );
            results.push((name, exact, y, s));
        }
    }
    // reference: the same formulations by radau5 at tight tolerance
    let tight = SolverOptions::default().with_tol(1e-10, 1e-12);
    let mut aug = Augmented::new(&sys);
    let y0 = aug.initial_state(0.0, &q0, &v0).unwrap();
    let (ra, _) = integrate(&mut aug, &y0, t1, "radau5", &tight);
    let mut pen = Penalty::new(&sys, 1e5, 10.0, 1.0).unwrap();
    let (rp, _) = integrate(&mut pen, &y0, t1, "radau5", &tight);
    let n = q0.len();
    let maxdiff = |x: &[f64], y: &[f64]| {
        x.iter()
            .zip(y)
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()))
    };
    for i in 0..2 {
        let reference = if i == 0 { &ra } else { &rp };
        let (name, _, ye, se) = &results[i];
        let (_, _, yf, sf) = &results[i + 2];
        let (ee, ef) = (
            maxdiff(&ye[..n], &reference[..n]),
            maxdiff(&yf[..n], &reference[..n]),
        );
        let d = maxdiff(ye, yf);
        eprintln!(
            "newmark/{name}: position error exact {ee:.1e}, fd {ef:.1e}; |Δy| exact − fd {d:.1e}; \
             n_rhs exact {} fd {}",
            se.n_rhs, sf.n_rhs
        );
        if i == 0 {
            // identical steps and Newton iterations: the same answer
            assert!(
                d < 1e-8,
                "newmark/{name}: exact and FD tangents differ by {d:e}"
            );
        } else {
            // different step sequences (the FD tangent is off by ~1e-3 at
            // α = 1e5): the same accuracy, not the same rounding
            assert!(
                ee <= 1.1 * ef + 1e-6,
                "newmark/{name}: error {ee:e} vs {ef:e}"
            );
        }
        assert!(
            se.n_rhs < sf.n_rhs,
            "newmark/{name}: {} vs {}",
            se.n_rhs,
            sf.n_rhs
        );
    }
}

/// Two coordinates on the line q₀ + q₁ = 1 with a configuration-dependent
/// mass matrix M(q) = diag(1 + q₀², 2 + sin q₁), springs and a damper; only
/// the required trait methods, so the finite-difference defaults of the
/// second derivatives (including ∂(M a)/∂q) run inside the formulations.
struct VariableMass;

impl MechanicalSystem for VariableMass {
    fn nq(&self) -> usize {
        2
    }
    fn nc(&self) -> usize {
        1
    }
    fn mass_matrix(&self, q: &[f64], m: &mut DMatrix<f64>) {
        m.fill(0.0);
        m[(0, 0)] = 1.0 + q[0] * q[0];
        m[(1, 1)] = 2.0 + q[1].sin();
    }
    fn generalized_forces(&self, _t: f64, q: &[f64], v: &[f64], f: &mut [f64]) {
        f[0] = -3.0 * q[0] - q[0] * q[0] * q[0];
        f[1] = -q[1] - 0.4 * v[1] * v[0];
    }
    fn force_jacobians(
        &self,
        _t: f64,
        q: &[f64],
        v: &[f64],
        dq: &mut DMatrix<f64>,
        dv: &mut DMatrix<f64>,
    ) {
        dq.fill(0.0);
        dv.fill(0.0);
        dq[(0, 0)] = -3.0 - 3.0 * q[0] * q[0];
        dq[(1, 1)] = -1.0;
        dv[(1, 1)] = -0.4 * v[0];
        dv[(1, 0)] = -0.4 * v[1];
    }
    fn constraints(&self, _t: f64, q: &[f64], phi: &mut [f64]) {
        phi[0] = q[0] + q[1] - 1.0;
    }
    fn constraint_jacobian(&self, _t: f64, _q: &[f64], jac: &mut DMatrix<f64>) {
        jac[(0, 0)] = 1.0;
        jac[(0, 1)] = 1.0;
    }
    fn constraint_time_derivative(&self, _t: f64, _q: &[f64], phi_t: &mut [f64]) {
        phi_t[0] = 0.0;
    }
    fn gamma(&self, _t: f64, _q: &[f64], _v: &[f64], gamma: &mut [f64]) {
        gamma[0] = 0.0;
    }
    fn constraint_force_jacobian(&self, _t: f64, _q: &[f64], _l: &[f64], out: &mut DMatrix<f64>) {
        out.fill(0.0);
    }
    fn kinetic_energy(&self, q: &[f64], v: &[f64]) -> f64 {
        0.5 * ((1.0 + q[0] * q[0]) * v[0] * v[0] + (2.0 + q[1].sin()) * v[1] * v[1])
    }
    fn potential_energy(&self, _t: f64, q: &[f64]) -> f64 {
        1.5 * q[0] * q[0] + 0.25 * q[0].powi(4) + 0.5 * q[1] * q[1]
    }
    fn constraint_label(&self, row: usize) -> String {
        format!("line {row}")
    }
    fn coordinate_label(&self, i: usize) -> String {
        format!("q{i}")
    }
    jounce_mechanics::test_system_core! {
        core: nv, position_derivative, integrate_position, position_increment,
            kinematic_map_derivative, manifold_constraints, data, evaluate, constraint_row_meaning, breakpoints;
        structure: jounce_mechanics::Structure::GENERAL;
        absent: second_derivatives, sparsity, applied_loads, switching, friction, joint_coordinates;
    }
}

#[test]
fn configuration_dependent_mass_and_finite_difference_defaults() {
    let sys = VariableMass;
    assert!(!sys.mass_matrix_is_constant() && !sys.has_exact_second_derivatives());
    let (q0, v0) = ([0.7, 0.3], [0.9, -0.9]);
    let y: Vec<f64> = q0.iter().chain(&v0).copied().collect();
    let forms: Vec<Box<dyn Formulation>> = vec![
        Box::new(Augmented::new(&sys).with_baumgarte(3.0, 4.0).unwrap()),
        Box::new(Penalty::new(&sys, 1e3, 10.0, 1.0).unwrap()),
        Box::new(Projection::new(&sys, 1e-10).unwrap()),
        Box::new(Partitioning::new(&sys, 2.0, 1e6).unwrap()),
    ];
    for mut f in forms {
        let y0 = f.initial_state(0.0, &q0, &v0).unwrap();
        // not reported exact (the system's second derivatives are
        // difference quotients), but the structured Jacobian is still right
        assert!(!f.has_exact_jacobian());
        let mut seed = 5;
        let eps = if y0.len() < y.len() { 0.0 } else { 1e-2 };
        let yp: Vec<f64> = y0.iter().map(|x| x + eps * noise(&mut seed)).collect();
        let n = yp.len();
        let mut jac = DMatrix::zeros(n, n);
        f.jacobian(0.2, &yp, &mut jac).unwrap();
        let central = central_jacobian(f.as_mut(), 0.2, &yp);
        let e = rel_diff(&jac, &central);
        eprintln!(
            "variable mass ({}): |J| {:.2e}, vs central {e:.1e}",
            f.name(),
            jac.amax()
        );
        assert!(e < 1e-7, "{}: {e:e}", f.name());
        if let Some(so) = f.as_second_order() {
            let a = [0.3, -1.1];
            let (mut k, mut c) = (DMatrix::zeros(2, 2), DMatrix::zeros(2, 2));
            let (mut kf, mut cf) = (DMatrix::zeros(2, 2), DMatrix::zeros(2, 2));
            so.tangent(0.2, &yp[..2], &yp[2..], &a, &mut k, &mut c)
                .unwrap();
            fd_tangent(so, 0.2, &yp[..2], &yp[2..], &a, &mut kf, &mut cf).unwrap();
            assert!(rel_diff(&k, &kf) < 1e-5 && rel_diff(&c, &cf) < 1e-5);
        }
    }
}

/// The system's sparse tangent (K = ∂(Φ_qᵀλ)/∂q − ∂Q/∂q and C = −∂Q/∂v on
/// the tangent pattern, no n × n fill; what the augmented Lagrangian's
/// Newton matrix is assembled from) equals the dense force and
/// constraint-force Jacobians entry by entry, and those vanish off the
/// pattern; on models with spring-dampers, a driver and closed loops.
#[test]
fn sparse_tangent_equals_the_dense_jacobians_on_the_pattern() {
    for name in ["quarter_car.toml", "slider_crank.toml", "four_bar.toml"] {
        let (sys, q, mut v) = example(name);
        assert!(sys.mass_matrix_is_constant());
        let mut seed = 7;
        for x in v.iter_mut() {
            *x += noise(&mut seed);
        }
        let lambda: Vec<f64> = (0..sys.nc()).map(|_| 10.0 * noise(&mut seed)).collect();
        let n = q.len();
        let t = 0.3;
        let pattern = sys.tangent_pattern().unwrap();
        let (mut k, mut c) = (vec![f64::NAN; pattern.len()], vec![f64::NAN; pattern.len()]);
        assert!(sys.sparse_tangent(t, &q, &v, &lambda, &pattern, &mut k, &mut c));
        let (mut fq, mut fv, mut kl) = (
            DMatrix::zeros(n, n),
            DMatrix::zeros(n, n),
            DMatrix::zeros(n, n),
        );
        sys.force_jacobians(t, &q, &v, &mut fq, &mut fv);
        sys.constraint_force_jacobian(t, &q, &lambda, &mut kl);
        let dense_k = &kl - &fq;
        let scale = dense_k.amax().max(fv.amax()).max(1.0);
        let mut on_pattern = DMatrix::from_element(n, n, false);
        for (e, &(i, j)) in pattern.iter().enumerate() {
            on_pattern[(i, j)] = true;
            assert!(
                (k[e] - dense_k[(i, j)]).abs() <= 1e-14 * scale,
                "{name}: K({i}, {j}) {} against {}",
                k[e],
                dense_k[(i, j)]
            );
            assert!(
                (c[e] + fv[(i, j)]).abs() <= 1e-14 * scale,
                "{name}: C({i}, {j}) {} against {}",
                c[e],
                -fv[(i, j)]
            );
        }
        for i in 0..n {
            for j in 0..n {
                if !on_pattern[(i, j)] {
                    assert_eq!(dense_k[(i, j)], 0.0, "{name}: K({i}, {j}) off the pattern");
                    assert_eq!(fv[(i, j)], 0.0, "{name}: C({i}, {j}) off the pattern");
                }
            }
        }
        // a pattern that misses an entry is refused, not written past
        let short = &pattern[1..];
        assert!(!sys.sparse_tangent(t, &q, &v, &lambda, short, &mut k[1..], &mut c[1..]));
    }
}
