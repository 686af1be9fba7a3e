//! The local linearization method on constrained systems
//! (gil-sanfelice-nikravesh, section 2, eqs. 10–15): the method needs the
//! Jacobian ∂f/∂y of the body-coordinate equations of motion, which the
//! paper writes through the multipliers,
//!
//! ```text
//! ∂f/∂y = [0, I; ∂q̈/∂q, ∂q̈/∂q̇]                                   (10)
//! ∂q̈/∂q = M⁻¹[(∂Dᵀ/∂q)λ + Dᵀ ∂λ/∂q + ∂h/∂q − (∂M/∂q) q̈]             (11)
//! ∂q̈/∂q̇ = M⁻¹[Dᵀ ∂λ/∂q̇ + ∂h/∂q̇]                                    (12)
//! (D M⁻¹ Dᵀ) λ = γ − D M⁻¹ h                                        (13)
//! ∂λ/∂q = (D M⁻¹ Dᵀ)⁻¹[∂γ/∂q − (∂D/∂q) q̈ − D M⁻¹ ∂h/∂q
//!                      − D M⁻¹ (∂Dᵀ/∂q) λ + D M⁻¹ (∂M/∂q) q̈]        (14)
//! ∂λ/∂q̇ = (D M⁻¹ Dᵀ)⁻¹[∂γ/∂q̇ − D M⁻¹ ∂h/∂q̇]                          (15)
//!
//! with M q̈ = Dᵀλ + h (the paper's sign of λ). In jounce `llm` runs on the
//! formulation the paper uses, `augmented` (body coordinates, multipliers
//! from the KKT system), whose exact Jacobian differentiates the KKT
//! system instead. This test evaluates eqs. 10–15 literally on the S5
//! model (regular M) and checks that the two agree, then runs S5 with LLM
//! at the paper's h = 0.02.

use jounce_formulation::{Augmented, Formulation};
use jounce_integrate::{method, solve, Discard, OdeProblem, SolverOptions};
use jounce_mechanics::{assemble, MechanicalSystem, PlanarSystem, SystemQueries};
use nalgebra::{DMatrix, DVector};

fn s5() -> (PlanarSystem, Vec<f64>, Vec<f64>) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/studies/s5_stiff_double_pendulum.toml"
    );
    let model = jounce_model::load_file(std::path::Path::new(path)).unwrap();
    let sys = PlanarSystem::from_model(&model).unwrap();
    let a = assemble(&sys, 0.0, &sys.initial_q(), &sys.initial_v(), 1e-12).unwrap();
    (sys, a.q, a.v)
}

/// ∂f/∂y by eqs. (10)–(15) at (t, q, v).
fn paper_jacobian(sys: &PlanarSystem, t: f64, q: &[f64], v: &[f64]) -> DMatrix<f64> {
    let (n, m) = (sys.nq(), sys.nc());
    let mut mass = DMatrix::zeros(n, n);
    sys.mass_matrix(q, &mut mass);
    let minv = mass
        .clone()
        .try_inverse()
        .expect("S5 has a regular mass matrix");
    let mut d = DMatrix::zeros(m, n);
    sys.constraint_jacobian(t, q, &mut d);
    let mut h = vec![0.0; n];
    sys.generalized_forces(t, q, v, &mut h);
    let h = DVector::from_vec(h);
    let mut g = vec![0.0; m];
    sys.gamma(t, q, v, &mut g);
    let g = DVector::from_vec(g);
    let a_mat = &d * &minv * d.transpose();
    let a_inv = a_mat.try_inverse().unwrap();
    let lambda = &a_inv * (&g - &d * &minv * &h); // (13)
    let qdd = &minv * (d.transpose() * &lambda + &h);
    let (mut hq, mut hv) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
    sys.force_jacobians(t, q, v, &mut hq, &mut hv);
    let (mut gq, mut gv) = (DMatrix::zeros(m, n), DMatrix::zeros(m, n));
    sys.gamma_jacobians(t, q, v, &mut gq, &mut gv);
    // (∂D/∂q) q̈ = ∂(D a)/∂q at fixed a; (∂Dᵀ/∂q) λ = ∂(Dᵀλ)/∂q at fixed λ
    let mut dq_qdd = DMatrix::zeros(m, n);
    sys.constraint_hessian_product(t, q, qdd.as_slice(), &mut dq_qdd);
    let mut dtq_l = DMatrix::zeros(n, n);
    sys.constraint_force_jacobian(t, q, lambda.as_slice(), &mut dtq_l);
    let mut mq_qdd = DMatrix::zeros(n, n);
    sys.mass_matrix_derivative(q, qdd.as_slice(), &mut mq_qdd);
    let dm = &d * &minv;
    let dl_dq = &a_inv * (&gq - &dq_qdd - &dm * &hq - &dm * &dtq_l + &dm * &mq_qdd); // (14)
    let dl_dv = &a_inv * (&gv - &dm * &hv); // (15)
    let da_dq = &minv * (&dtq_l + d.transpose() * &dl_dq + &hq - &mq_qdd); // (11)
    let da_dv = &minv * (d.transpose() * &dl_dv + &hv); // (12)
    let mut jac = DMatrix::zeros(2 * n, 2 * n); // (10)
    for i in 0..n {
        jac[(i, n + i)] = 1.0;
        for j in 0..n {
            jac[(n + i, j)] = da_dq[(i, j)];
            jac[(n + i, n + j)] = da_dv[(i, j)];
        }
    }
    jac
}

/// The augmented formulation's exact Jacobian is eqs. 10–15 (the KKT
/// multipliers are −λ of the paper, which the two differentiate the same
/// way), at the start and at a moving, off-equilibrium state: to 1e-9
/// relative (measured 2.9e-16 relative to max|J| ≈ 1.6e6: the same
/// derivatives by another elimination; a dropped term of eq. 14 gives
/// O(1)).
#[test]
fn augmented_jacobian_is_eqs_10_to_15() {
    let (sys, q0, v0) = s5();
    let n = sys.nq();
    let mut f = Augmented::new(&sys);
    assert!(f.has_exact_jacobian());
    let y0 = f.initial_state(0.0, &q0, &v0).unwrap();
    // a later state of the motion: 0.05 s of dopri5
    let opts = SolverOptions::default().with_tol(1e-10, 1e-10);
    let mut st = method::build("dopri5", &opts).unwrap();
    let y1 = solve(&mut f, st.as_mut(), 0.0, &y0, 0.05, &opts, &mut Discard)
        .unwrap()
        .y;
    for (t, y) in [(0.0, y0), (0.05, y1)] {
        let mut jac = DMatrix::zeros(2 * n, 2 * n);
        f.jacobian(t, &y, &mut jac).unwrap();
        let paper = paper_jacobian(&sys, t, &y[..n], &y[n..]);
        let scale = paper.abs().max();
        let diff = (&jac - &paper).abs().max() / scale;
        eprintln!(
            "t = {t}: |J_augmented − J_eqs10-15| / max|J| = {diff:.1e} (max|J| = {scale:.1e})"
        );
        assert!(scale > 1e3, "the stiff spring must show in J");
        assert!(diff < 1e-9, "t = {t}: the Jacobians differ by {diff:e}");
    }
}

/// S5 with LLM at the paper's uniform h = 0.02 (250 steps) completes on
/// `augmented`, with the paper's qualitative result: an energy variation
/// of a few percent (measured 2.9e-2) at a fraction of the work of
/// DOPRI5 at rtol 1e-3 (measured 501 against 59 234 evaluations, and an
/// energy change of 2.7 there).
#[test]
fn s5_runs_with_llm_at_the_papers_step() {
    let (sys, q0, v0) = s5();
    let energy = |y: &[f64]| {
        let n = sys.nq();
        sys.kinetic_energy(&y[..n], &y[n..]) + sys.potential_energy(0.0, &y[..n])
    };
    let worst = |name: &str, opts: SolverOptions| -> (f64, u64) {
        let mut f = Augmented::new(&sys);
        let y0 = f.initial_state(0.0, &q0, &v0).unwrap();
        let e0 = energy(&y0);
        let mut rec = jounce_integrate::Recorder::default();
        let mut st = method::build(name, &opts).unwrap();
        let r = solve(&mut f, st.as_mut(), 0.0, &y0, 5.0, &opts, &mut rec).unwrap();
        let de = rec
            .y
            .iter()
            // E(0) = 0 and T(0) = 0 (at rest, datum at the pivot): relative
            // to 1 J, as `jounce run` reports it
            .map(|y| (energy(y) - e0).abs() / e0.abs().max(1.0))
            .fold(0.0, f64::max);
        (de, r.stats.n_rhs)
    };
    let grid = jounce_integrate::OutputGrid::Every(0.01);
    let (de_llm, rhs_llm) = worst(
        "llm",
        SolverOptions {
            fixed_step: Some(0.02),
            output: grid.clone(),
            ..SolverOptions::default()
        },
    );
    let (de_dp, rhs_dp) = worst(
        "dopri5",
        SolverOptions {
            output: grid,
            ..SolverOptions::default().with_tol(1e-3, 1e-6)
        },
    );
    eprintln!(
        "S5: llm h = 0.02: dE {de_llm:.2e}, {rhs_llm} f; dopri5 1e-3: dE {de_dp:.2e}, {rhs_dp} f"
    );
    assert!(de_llm < 0.1, "LLM energy variation {de_llm:e}");
    assert!(
        de_llm < de_dp,
        "LLM must beat dopri5 at rtol 1e-3 on energy"
    );
    assert!(
        rhs_llm * 10 < rhs_dp,
        "LLM must be far cheaper: {rhs_llm} vs {rhs_dp}"
    );
}
