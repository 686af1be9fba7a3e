//! Checks of [`super::SpatialSystem`] against independent computations:
//! Φ_q against central differences of Φ along the retraction, γ against
//! the second difference of Φ along the motion with constant v, the
//! second derivatives against differences of the first, M against the
//! kinetic energy, the gyroscopic moment against the rate of the world
//! angular momentum.

use nalgebra::DMatrix;

use super::body::{coordinates, retract, NQ_BODY, NV_BODY};
use super::SpatialSystem;
use crate::capabilities::SecondDerivatives;
use crate::MechanicalSystem;

/// Three bodies off their joints (Φ ≠ 0), every joint kind, every force
/// element, nonzero velocities.
pub(super) const MODEL: &str = r#"
[model]
space = "spatial"
gravity = [0.3, -1.0, -9.81]

[[bodies]]
name = "a"
mass = 2.0
inertia = [[0.5, 0.05, -0.02], [0.05, 0.4, 0.01], [-0.02, 0.01, 0.3]]
position = [0.1, 0.2, 0.9]
orientation = [0.8, 0.2, -0.4, 0.4]
velocity = [0.3, -0.2, 0.5]
angular_velocity = [1.0, -2.0, 3.0]
points = { top = [0.0, 0.1, 0.4], side = [0.2, 0.0, 0.0] }

[[bodies]]
name = "b"
mass = 1.5
inertia = [0.2, 0.3, 0.25]
products = [0.01, 0.0, -0.02]
position = [0.5, -0.3, 1.4]
orientation = [0.6, 0.0, 0.8, 0.0]
velocity = [-0.4, 0.1, 0.2]
angular_velocity = [-1.5, 0.5, 2.5]
angular_velocity_frame = "body"

[[bodies]]
name = "c"
mass = 0.7
inertia = [0.05, 0.06, 0.07]
position = [-0.4, 0.3, 0.5]
orientation = [0.5, 0.5, 0.5, 0.5]
velocity = [0.0, 0.6, -0.1]
angular_velocity = [0.7, 0.2, -0.9]

[[joints]]
name = "ball"
type = "spherical"
body1 = "ground"
point1 = [0.0, 0.0, 1.3]
body2 = "a"
point2 = "top"

[[joints]]
name = "hinge"
type = "revolute"
body1 = "a"
point1 = "side"
body2 = "b"
point2 = [0.0, 0.0, -0.3]
axis = [0.0, 0.6, 0.8]

[[joints]]
name = "cross"
type = "universal"
body1 = "b"
point1 = [0.1, 0.0, 0.0]
body2 = "c"
point2 = [0.0, 0.2, 0.0]
axis1 = [1.0, 0.0, 0.0]
axis2 = [0.0, 1.0, 0.0]

[[joints]]
name = "weld"
type = "fixed"
body1 = "c"
body2 = "ground"

[[joints]]
name = "rod"
type = "distance"
body1 = "a"
point1 = [0.0, 0.0, 0.0]
body2 = "c"
point2 = [0.1, 0.1, 0.1]
length = 0.9

[[bodies]]
name = "d"
mass = 0.4
inertia = [0.02, 0.03, 0.04]
position = [0.3, 0.6, -0.2]
orientation = [0.7, -0.1, 0.1, 0.7]
velocity = [0.2, 0.1, -0.3]
angular_velocity = [0.4, -0.6, 0.8]

[[bodies]]
name = "e"
mass = 0.5
inertia = [0.03, 0.02, 0.05]
position = [0.9, 0.1, 0.2]
orientation = [0.6, 0.48, 0.0, 0.64]
velocity = [-0.1, 0.3, 0.2]
angular_velocity = [-0.5, 0.9, 0.3]

[[joints]]
name = "slider"
type = "prismatic"
body1 = "b"
point1 = [0.0, 0.1, 0.0]
body2 = "d"
point2 = [0.1, 0.0, 0.0]
axis = [0.48, 0.6, 0.64]

[[joints]]
name = "sleeve"
type = "cylindrical"
body1 = "d"
point1 = [0.0, 0.0, 0.1]
body2 = "e"
point2 = [0.0, 0.1, 0.0]
axis = [0.0, 0.6, -0.8]

[[joints]]
name = "rail"
type = "point_on_line"
body1 = "a"
point1 = [0.02, -0.05, 0.1]
body2 = "e"
point2 = [0.03, 0.0, -0.1]
axis = [0.48, 0.6, 0.64]

[[forces]]
name = "spring"
type = "spring_damper"
body1 = "b"
point1 = [0.0, 0.1, 0.0]
body2 = "c"
point2 = [0.05, 0.0, 0.0]
stiffness = 40.0
damping = 1.5
free_length = 0.3

[[forces]]
name = "coil"
type = "rotational_spring"
joint = "hinge"
stiffness = 3.0
damping = 0.4
zero_angle = 0.2

[[forces]]
name = "mount"
type = "bushing"
body1 = "a"
point1 = [0.05, -0.02, 0.1]
body2 = "e"
point2 = [0.0, 0.03, -0.04]
stiffness = [100.0, 200.0, 300.0]
damping = [1.0, 2.0, 3.0]
rotational_stiffness = [5.0, 6.0, 7.0]
rotational_damping = [0.1, 0.2, 0.3]

[[forces]]
name = "push"
type = "point_force"
body = "a"
point = "side"
force = [1.0, 2.0, -0.5]
frame = "body"

[[forces]]
name = "twist"
type = "torque"
body = "b"
torque = [0.3, -0.1, 0.2]
"#;

fn system() -> (SpatialSystem, Vec<f64>, Vec<f64>) {
    let model = jounce_model::from_str(MODEL, "test.toml").unwrap();
    let sys = SpatialSystem::from_model(&model).unwrap();
    let (mut q, v) = sys.initial_state();
    // move the bodies off the start so that the joints are violated
    for (i, x) in q.iter_mut().enumerate() {
        *x += 0.03 * ((i as f64) * 1.7).sin();
    }
    sys.normalize(&mut q);
    (sys, q, v)
}

/// q ⊕ δ in f64.
fn plus(q: &[f64], delta: &[f64]) -> Vec<f64> {
    let mut out = q.to_vec();
    for b in 0..q.len() / NQ_BODY {
        let (r, p) = coordinates::<f64>(q, b);
        let d: [f64; NV_BODY] = std::array::from_fn(|k| delta[NV_BODY * b + k]);
        let (r, p) = retract(&r, &p, &d);
        out[NQ_BODY * b..NQ_BODY * b + 3].copy_from_slice(&r);
        out[NQ_BODY * b + 3..NQ_BODY * (b + 1)].copy_from_slice(&p);
    }
    out
}

fn unit(n: usize, j: usize, h: f64) -> Vec<f64> {
    let mut e = vec![0.0; n];
    e[j] = h;
    e
}

fn phi(sys: &SpatialSystem, q: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; sys.nc()];
    sys.constraints(0.0, q, &mut out);
    out
}

fn max_diff(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    (a - b).abs().max() / b.abs().max().max(1.0)
}

#[test]
fn constraint_jacobian_is_the_derivative_along_the_retraction() {
    let (sys, q, _) = system();
    let (m, n) = (sys.nc(), sys.nv());
    assert_eq!((sys.nq(), n, m), (35, 30, 30));
    let mut jac = DMatrix::zeros(m, n);
    sys.constraint_jacobian(0.0, &q, &mut jac);
    let h = 1e-6;
    let mut fd = DMatrix::zeros(m, n);
    for j in 0..n {
        let (pp, pm) = (
            phi(&sys, &plus(&q, &unit(n, j, h))),
            phi(&sys, &plus(&q, &unit(n, j, -h))),
        );
        for i in 0..m {
            fd[(i, j)] = (pp[i] - pm[i]) / (2.0 * h);
        }
    }
    let err = max_diff(&jac, &fd);
    assert!(err < 1e-8, "Φ_q vs central differences: {err:e}");
}

#[test]
fn gamma_is_minus_the_second_derivative_along_the_motion() {
    let (sys, q, v) = system();
    let m = sys.nc();
    let mut gamma = vec![0.0; m];
    sys.gamma(0.0, &q, &v, &mut gamma);
    let h = 1e-4;
    let hv: Vec<f64> = v.iter().map(|x| x * h).collect();
    let mhv: Vec<f64> = v.iter().map(|x| -x * h).collect();
    let (pp, p0, pm) = (
        phi(&sys, &plus(&q, &hv)),
        phi(&sys, &q),
        phi(&sys, &plus(&q, &mhv)),
    );
    let scale = gamma.iter().fold(1.0f64, |a, x| a.max(x.abs()));
    for i in 0..m {
        let fd = -(pp[i] - 2.0 * p0[i] + pm[i]) / (h * h);
        assert!(
            (gamma[i] - fd).abs() < 1e-5 * scale,
            "γ row {} ({}): {} vs {fd}",
            i,
            sys.constraint_label(i),
            gamma[i]
        );
    }
}

#[test]
fn the_velocity_constraint_is_the_rate_of_phi_along_the_kinematic_map() {
    // Φ̇ = ∂Φ/∂q q̇ with q̇ = T(q) v (central difference in time along q + h q̇)
    let (sys, q, v) = system();
    let (m, n) = (sys.nc(), sys.nv());
    let mut qdot = vec![0.0; sys.nq()];
    sys.position_derivative(&q, &v, &mut qdot);
    let h = 1e-6;
    let qp: Vec<f64> = q.iter().zip(&qdot).map(|(a, b)| a + h * b).collect();
    let qm: Vec<f64> = q.iter().zip(&qdot).map(|(a, b)| a - h * b).collect();
    let (pp, pm) = (phi(&sys, &qp), phi(&sys, &qm));
    let mut jac = DMatrix::zeros(m, n);
    sys.constraint_jacobian(0.0, &q, &mut jac);
    let jv = &jac * nalgebra::DVector::from_column_slice(&v);
    for i in 0..m {
        let fd = (pp[i] - pm[i]) / (2.0 * h);
        assert!((jv[i] - fd).abs() < 1e-7, "row {i}: {} vs {fd}", jv[i]);
    }
}

#[test]
fn second_derivatives_match_differences_of_the_first() {
    let (sys, q, v) = system();
    let (m, n) = (sys.nc(), sys.nv());
    let h = 1e-6;
    let mut dq = DMatrix::zeros(m, n);
    let mut dv = DMatrix::zeros(m, n);
    sys.exact_gamma_jacobians(0.0, &q, &v, &mut dq, &mut dv);
    let a: Vec<f64> = (0..n).map(|i| ((i as f64) * 0.9).cos()).collect();
    let lambda: Vec<f64> = (0..m).map(|i| ((i as f64) * 1.3).sin()).collect();
    let mut hess = DMatrix::zeros(m, n);
    sys.exact_constraint_hessian_product(0.0, &q, &a, &mut hess);
    let mut kc = DMatrix::zeros(n, n);
    sys.constraint_force_jacobian(0.0, &q, &lambda, &mut kc);
    let (mut fdq, mut fdv, mut fdh, mut fdk) = (
        DMatrix::zeros(m, n),
        DMatrix::zeros(m, n),
        DMatrix::zeros(m, n),
        DMatrix::zeros(n, n),
    );
    let gamma_at = |q: &[f64], v: &[f64]| {
        let mut g = vec![0.0; m];
        sys.gamma(0.0, q, v, &mut g);
        g
    };
    let jac_at = |q: &[f64]| {
        let mut j = DMatrix::zeros(m, n);
        sys.constraint_jacobian(0.0, q, &mut j);
        j
    };
    let av = nalgebra::DVector::from_column_slice(&a);
    let lv = nalgebra::DVector::from_column_slice(&lambda);
    for k in 0..n {
        let (qp, qm) = (plus(&q, &unit(n, k, h)), plus(&q, &unit(n, k, -h)));
        let (gp, gm) = (gamma_at(&qp, &v), gamma_at(&qm, &v));
        let vp: Vec<f64> = v.iter().zip(unit(n, k, h)).map(|(a, b)| a + b).collect();
        let vm: Vec<f64> = v.iter().zip(unit(n, k, -h)).map(|(a, b)| a + b).collect();
        let (gvp, gvm) = (gamma_at(&q, &vp), gamma_at(&q, &vm));
        let (jp, jm) = (jac_at(&qp), jac_at(&qm));
        let (hp, hm) = (&jp * &av, &jm * &av);
        let (kp, km) = (jp.transpose() * &lv, jm.transpose() * &lv);
        for i in 0..m {
            fdq[(i, k)] = (gp[i] - gm[i]) / (2.0 * h);
            fdv[(i, k)] = (gvp[i] - gvm[i]) / (2.0 * h);
            fdh[(i, k)] = (hp[i] - hm[i]) / (2.0 * h);
        }
        for i in 0..n {
            fdk[(i, k)] = (kp[i] - km[i]) / (2.0 * h);
        }
    }
    for (name, exact, fd) in [
        ("∂γ/∂q", &dq, &fdq),
        ("∂γ/∂v", &dv, &fdv),
        ("∂(Φ_q a)/∂q", &hess, &fdh),
        ("∂(Φ_qᵀλ)/∂q", &kc, &fdk),
    ] {
        let err = max_diff(exact, fd);
        assert!(err < 1e-7, "{name} vs central differences: {err:e}");
    }
}

#[test]
fn force_jacobians_match_differences_of_the_forces() {
    let (sys, q, v) = system();
    let n = sys.nv();
    let mut dq = DMatrix::zeros(n, n);
    let mut dv = DMatrix::zeros(n, n);
    sys.force_jacobians(0.0, &q, &v, &mut dq, &mut dv);
    let f_at = |q: &[f64], v: &[f64]| {
        let mut f = vec![0.0; n];
        sys.generalized_forces(0.0, q, v, &mut f);
        f
    };
    let h = 1e-6;
    let (mut fdq, mut fdv) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
    for k in 0..n {
        let (fp, fm) = (
            f_at(&plus(&q, &unit(n, k, h)), &v),
            f_at(&plus(&q, &unit(n, k, -h)), &v),
        );
        let vp: Vec<f64> = v.iter().zip(unit(n, k, h)).map(|(a, b)| a + b).collect();
        let vm: Vec<f64> = v.iter().zip(unit(n, k, -h)).map(|(a, b)| a + b).collect();
        let (gp, gm) = (f_at(&q, &vp), f_at(&q, &vm));
        for i in 0..n {
            fdq[(i, k)] = (fp[i] - fm[i]) / (2.0 * h);
            fdv[(i, k)] = (gp[i] - gm[i]) / (2.0 * h);
        }
    }
    assert!(
        max_diff(&dq, &fdq) < 1e-7,
        "∂Q/∂q: {:e}",
        max_diff(&dq, &fdq)
    );
    assert!(
        max_diff(&dv, &fdv) < 1e-7,
        "∂Q/∂v: {:e}",
        max_diff(&dv, &fdv)
    );
    assert!(
        dv.abs().max() > 0.1,
        "the damper and the gyroscopic moment depend on v"
    );
}

#[test]
fn kinetic_energy_is_the_mass_matrix_quadratic_form() {
    let (sys, q, v) = system();
    let n = sys.nv();
    let mut m = DMatrix::zeros(n, n);
    sys.mass_matrix(&q, &mut m);
    let vv = nalgebra::DVector::from_column_slice(&v);
    let t = 0.5 * vv.dot(&(&m * &vv));
    let e = sys.kinetic_energy(&q, &v);
    assert!((t - e).abs() < 1e-14 * e, "½ vᵀMv = {t}, T = {e}");
    assert!((&m - m.transpose()).abs().max() == 0.0);
    assert!(m.clone().cholesky().is_some(), "M is positive definite");
}

#[test]
fn gyroscopic_moment_keeps_the_world_angular_momentum_or_adds_the_torque() {
    // one free body with a world torque τ, no gravity: dH/dt = τ, where
    // H = A J' ω' and the motion is v̇ = M⁻¹ Q (H by central differences
    // along q ⊕ h v, v + h v̇)
    let text = r#"
[model]
space = "spatial"
gravity = [0.0, 0.0, 0.0]
[[bodies]]
name = "box"
mass = 3.0
inertia = [[0.4, 0.03, 0.01], [0.03, 0.9, -0.02], [0.01, -0.02, 1.3]]
orientation = [0.7, 0.1, 0.7, 0.1]
angular_velocity = [2.0, -3.0, 1.0]
[[forces]]
name = "tau"
type = "torque"
body = "box"
torque = [0.5, -0.2, 0.8]
"#;
    let model = jounce_model::from_str(text, "box.toml").unwrap();
    let sys = SpatialSystem::from_model(&model).unwrap();
    let (mut q, v) = sys.initial_state();
    sys.normalize(&mut q);
    let n = sys.nv();
    let mut m = DMatrix::zeros(n, n);
    sys.mass_matrix(&q, &mut m);
    let mut f = vec![0.0; n];
    sys.generalized_forces(0.0, &q, &v, &mut f);
    let a = m
        .lu()
        .solve(&nalgebra::DVector::from_column_slice(&f))
        .unwrap();
    let h = 1e-5;
    let at = |s: f64| {
        let d: Vec<f64> = v.iter().map(|x| x * s).collect();
        let vs: Vec<f64> = v.iter().zip(a.iter()).map(|(x, y)| x + s * y).collect();
        sys.angular_momentum(&plus(&q, &d), &vs)
    };
    let (hp, hm) = (at(h), at(-h));
    for k in 0..3 {
        let rate = (hp[k] - hm[k]) / (2.0 * h);
        assert!(
            (rate - [0.5, -0.2, 0.8][k]).abs() < 1e-8,
            "dH/dt[{k}] = {rate}"
        );
    }
}

#[test]
fn position_derivative_keeps_the_quaternion_norm_to_first_order() {
    let (sys, q, v) = system();
    let mut qdot = vec![0.0; sys.nq()];
    sys.position_derivative(&q, &v, &mut qdot);
    for b in 0..5 {
        let p = &q[NQ_BODY * b + 3..NQ_BODY * (b + 1)];
        let pd = &qdot[NQ_BODY * b + 3..NQ_BODY * (b + 1)];
        let d: f64 = p.iter().zip(pd).map(|(a, b)| a * b).sum();
        assert!(d.abs() < 1e-15, "d|p|²/dt = {d}");
    }
    assert_eq!(sys.coordinate_label(10), "b.qw");
    assert_eq!(sys.velocity_label(9), "b.wx");
    assert_eq!(sys.constraint_label(7), "joint 'hinge' (axis 2)");
}

#[test]
fn a_planar_model_is_refused_by_name() {
    let model = jounce_model::from_str(
        "[[bodies]]\nname = \"b\"\nmass = 1\ninertia = 1\n",
        "p.toml",
    )
    .unwrap();
    let err = SpatialSystem::from_model(&model).unwrap_err().to_string();
    assert!(err.contains("planar"), "{err}");
}

#[test]
fn assembly_closes_the_joints_by_the_exponential_map_keeping_unit_quaternions() {
    // a ball-jointed link and a hinged second link, the start moved off
    // the joints
    let text = r#"
[model]
space = "spatial"
[[bodies]]
name = "upper"
mass = 1.0
inertia = [0.1, 0.1, 0.02]
position = [0.0, 0.0, -0.5]
angular_velocity = [0.3, -0.2, 1.0]
[[bodies]]
name = "lower"
mass = 1.0
inertia = [0.1, 0.1, 0.02]
position = [0.0, 0.0, -1.5]
velocity = [0.4, 0.0, 0.1]
[[joints]]
name = "ball"
type = "spherical"
body1 = "ground"
point1 = [0.0, 0.0, 0.0]
body2 = "upper"
point2 = [0.0, 0.0, 0.5]
[[joints]]
name = "hinge"
type = "revolute"
body1 = "upper"
point1 = [0.0, 0.0, -0.5]
body2 = "lower"
point2 = [0.0, 0.0, 0.5]
axis = [1.0, 0.0, 0.0]
"#;
    let model = jounce_model::from_str(text, "chain.toml").unwrap();
    let sys = SpatialSystem::from_model(&model).unwrap();
    let (mut q, v) = sys.initial_state();
    for (i, x) in q.iter_mut().enumerate() {
        *x += 0.05 * ((i as f64) * 1.7).sin();
    }
    assert!(
        phi(&sys, &q).iter().any(|x| x.abs() > 1e-2),
        "start off the joints"
    );
    let a = crate::assemble(&sys, 0.0, &q, &v, 1e-12).unwrap();
    assert!(a.position_residual <= 1e-12);
    assert!(a.velocity_residual <= 1e-12, "{}", a.velocity_residual);
    for b in 0..2 {
        let p = &a.q[NQ_BODY * b + 3..NQ_BODY * (b + 1)];
        let norm = p.iter().map(|x| x * x).sum::<f64>().sqrt();
        assert!((norm - 1.0).abs() < 1e-14, "|p| = {norm}");
    }
    // 12 velocities − 3 (ball) − 5 (hinge) = 4 degrees of freedom
    assert_eq!(a.v.len(), sys.nv());
    assert_eq!((a.dof, a.redundant.len()), (4, 0));
}

#[test]
fn integrate_position_is_the_retraction_and_normalises() {
    let (sys, q, _) = system();
    let n = sys.nv();
    let delta: Vec<f64> = (0..n).map(|i| 0.1 * ((i as f64) * 0.7).sin()).collect();
    let mut out = vec![0.0; sys.nq()];
    sys.integrate_position(&q, &delta, &mut out);
    let expected = plus(&q, &delta);
    for (a, b) in out.iter().zip(&expected) {
        assert!((a - b).abs() < 1e-15);
    }
    let mut scaled = q.clone();
    scaled[3..7].iter_mut().for_each(|x| *x *= 1.01);
    sys.integrate_position(&scaled, &vec![0.0; n], &mut out);
    for (a, b) in out.iter().zip(&q) {
        assert!((a - b).abs() < 1e-15, "δ = 0 projects onto |p| = 1");
    }
}

/// [M Φ_qᵀ; Φ_q 0] [a; λ] = [Q; γ] at the model's start.
fn start_accelerations(text: &str) -> (SpatialSystem, Vec<f64>, usize) {
    let model = jounce_model::from_str(text, "guide.toml").unwrap();
    let sys = SpatialSystem::from_model(&model).unwrap();
    let (q, v) = sys.initial_state();
    let asm = crate::assemble(&sys, 0.0, &q, &v, 1e-12).unwrap();
    let (n, m) = (sys.nv(), sys.nc());
    let mut kkt = DMatrix::zeros(n + m, n + m);
    let mut mass = DMatrix::zeros(n, n);
    sys.mass_matrix(&asm.q, &mut mass);
    let mut jac = DMatrix::zeros(m, n);
    sys.constraint_jacobian(0.0, &asm.q, &mut jac);
    kkt.view_mut((0, 0), (n, n)).copy_from(&mass);
    kkt.view_mut((n, 0), (m, n)).copy_from(&jac);
    kkt.view_mut((0, n), (n, m)).copy_from(&jac.transpose());
    let mut rhs = nalgebra::DVector::zeros(n + m);
    let mut f = vec![0.0; n];
    sys.generalized_forces(0.0, &asm.q, &asm.v, &mut f);
    let mut g = vec![0.0; m];
    sys.gamma(0.0, &asm.q, &asm.v, &mut g);
    rhs.rows_mut(0, n).copy_from_slice(&f);
    rhs.rows_mut(n, m).copy_from_slice(&g);
    let sol = kkt.lu().solve(&rhs).unwrap();
    (sys, sol.as_slice()[..n].to_vec(), asm.dof)
}

#[test]
fn a_block_on_a_prismatic_guide_slides_down_it_without_turning() {
    // a turned block on a guide along h = (0.6, 0, -0.8): a = (g·h) h, ω̇ = 0
    let guide = |kind: &str| {
        format!(
            r#"
[model]
space = "spatial"
[[bodies]]
name = "block"
mass = 2.0
inertia = [[0.3, 0.02, 0.0], [0.02, 0.2, 0.01], [0.0, 0.01, 0.25]]
position = [0.6, 0.0, -0.8]
orientation = [0.8, 0.36, 0.0, 0.48]
[[joints]]
name = "guide"
type = "{kind}"
body1 = "ground"
point1 = [0.0, 0.0, 0.0]
body2 = "block"
point2 = [0.0, 0.0, 0.0]
axis = [0.6, 0.0, -0.8]
"#
        )
    };
    let (_, a, dof) = start_accelerations(&guide("prismatic"));
    assert_eq!(dof, 1);
    let along = 9.81 * 0.8;
    let expected = [0.6 * along, 0.0, -0.8 * along, 0.0, 0.0, 0.0];
    for k in 0..6 {
        assert!((a[k] - expected[k]).abs() < 1e-12, "a = {a:?}");
    }
    // cylindrical: the same slide, the turn about the guide free (2 DOF)
    let (_, a, dof) = start_accelerations(&guide("cylindrical"));
    assert_eq!(dof, 2);
    for k in 0..3 {
        assert!((a[k] - expected[k]).abs() < 1e-12, "a = {a:?}");
    }
}

#[test]
fn a_bead_on_a_point_on_line_rail_slides_down_it_and_turns_freely() {
    // the centre of mass on a line along h = (0.6, 0, −0.8) of ground:
    // a = (g·h) h, no torque, so ω̇ = J⁻¹(−ω × Jω) = 0 at rest; 4 DOF
    let text = r#"
[model]
space = "spatial"
[[bodies]]
name = "bead"
mass = 2.0
inertia = [[0.3, 0.02, 0.0], [0.02, 0.2, 0.01], [0.0, 0.01, 0.25]]
position = [0.6, 0.0, -0.8]
orientation = [0.8, 0.36, 0.0, 0.48]
[[joints]]
name = "rail"
type = "point_on_line"
body1 = "ground"
point1 = [0.0, 0.0, 0.0]
body2 = "bead"
point2 = [0.0, 0.0, 0.0]
axis = [0.6, 0.0, -0.8]
"#;
    let (sys, a, dof) = start_accelerations(text);
    assert_eq!(dof, 4);
    assert_eq!(sys.constraint_label(1), "joint 'rail' (offset 2)");
    let along = 9.81 * 0.8;
    let expected = [0.6 * along, 0.0, -0.8 * along, 0.0, 0.0, 0.0];
    for k in 0..6 {
        assert!((a[k] - expected[k]).abs() < 1e-12, "a = {a:?}");
    }
}

/// L = T⁺ (`position_increment`) is a left inverse of the kinematic map,
/// L T(q) v = v, annihilates the radial direction of every quaternion,
/// L (0, …, p_b, …) = 0, also off |p| = 1 (p scaled by 1.3). The manifold constraints
/// are |p_b|² − 1 with gradient 2 p_bᵀ (checked by central differences).
#[test]
fn the_position_increment_inverts_the_kinematic_map_and_the_manifold_is_unit_norm() {
    let (sys, mut q, _) = system();
    let (nq, nv, nb) = (sys.nq(), sys.nv(), sys.body_count());
    for b in 0..nb {
        for k in 3..7 {
            q[NQ_BODY * b + k] *= 1.3;
        }
    }
    let v: Vec<f64> = (0..nv)
        .map(|i| 0.4 * ((i as f64) * 1.3).cos() + 0.1)
        .collect();
    let mut qdot = vec![0.0; nq];
    sys.position_derivative(&q, &v, &mut qdot);
    let mut back = vec![0.0; nv];
    sys.position_increment(&q, &qdot, &mut back);
    let worst = back
        .iter()
        .zip(&v)
        .fold(0.0f64, |s, (a, b)| s.max((a - b).abs()));
    assert!(worst < 1e-14, "L T v − v: {worst:e}");
    for b in 0..nb {
        let mut radial = vec![0.0; nq];
        radial[NQ_BODY * b + 3..NQ_BODY * (b + 1)]
            .copy_from_slice(&q[NQ_BODY * b + 3..NQ_BODY * (b + 1)]);
        sys.position_increment(&q, &radial, &mut back);
        let r = back.iter().fold(0.0f64, |s, x| s.max(x.abs()));
        assert!(r < 1e-15, "body {b}: L p = {r:e}");
    }
    let k = nq - nv;
    assert_eq!(k, nb);
    let (mut c, mut grad) = (vec![0.0; k], DMatrix::zeros(k, nq));
    sys.manifold_constraints(&q, &mut c, &mut grad);
    for b in 0..nb {
        let p = &q[NQ_BODY * b + 3..NQ_BODY * (b + 1)];
        let n2: f64 = p.iter().map(|x| x * x).sum();
        assert!((c[b] - (n2 - 1.0)).abs() < 1e-15 && c[b] > 0.1);
    }
    let h = 1e-6;
    let (mut cp, mut cm, mut g2) = (vec![0.0; k], vec![0.0; k], DMatrix::zeros(k, nq));
    for j in 0..nq {
        let (mut qp, mut qm) = (q.clone(), q.clone());
        qp[j] += h;
        qm[j] -= h;
        sys.manifold_constraints(&qp, &mut cp, &mut g2);
        sys.manifold_constraints(&qm, &mut cm, &mut g2);
        for i in 0..k {
            let d = (cp[i] - cm[i]) / (2.0 * h) - grad[(i, j)];
            assert!(d.abs() < 1e-8, "∂c_{i}/∂q_{j}: {d:e}");
        }
    }
}

/// ∂(T(q) v)/∂q · dq (`kinematic_map_derivative`) against central
/// differences of q' = T(q) v along dq (T is linear in p, so the
/// difference is exact to rounding: below 1e-9), and zero along the
/// centres of mass.
#[test]
fn the_kinematic_map_derivative_is_the_derivative_of_the_position_rate() {
    let (sys, q, _) = system();
    let (nq, nv) = (sys.nq(), sys.nv());
    let v: Vec<f64> = (0..nv)
        .map(|i| 0.7 * ((i as f64) * 0.9).sin() - 0.2)
        .collect();
    let dq: Vec<f64> = (0..nq).map(|i| ((i as f64) * 1.1).cos()).collect();
    let mut out = vec![0.0; nq];
    sys.kinematic_map_derivative(&q, &v, &dq, &mut out);
    let h = 1e-5;
    let qp: Vec<f64> = q.iter().zip(&dq).map(|(a, b)| a + h * b).collect();
    let qm: Vec<f64> = q.iter().zip(&dq).map(|(a, b)| a - h * b).collect();
    let (mut fp, mut fm) = (vec![0.0; nq], vec![0.0; nq]);
    sys.position_derivative(&qp, &v, &mut fp);
    sys.position_derivative(&qm, &v, &mut fm);
    let mut worst = 0.0f64;
    for i in 0..nq {
        worst = worst.max(((fp[i] - fm[i]) / (2.0 * h) - out[i]).abs());
    }
    assert!(worst < 1e-9, "{worst:e}");
    let quat = (0..nq)
        .filter(|i| i % NQ_BODY >= 3)
        .fold(0.0f64, |s, i| s.max(out[i].abs()));
    assert!(quat > 1e-2, "the quaternion rows must move: {quat}");
    for b in 0..sys.body_count() {
        assert_eq!(&out[NQ_BODY * b..NQ_BODY * b + 3], &[0.0; 3]);
    }
}
