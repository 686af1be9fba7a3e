//! Checks of the spatial drivers ([`super::driver`]) inside
//! [`super::SpatialSystem`]: Φ_q, Φ_t, Φ_qt, γ and the second derivatives
//! against finite differences in q (along the retraction) and t, away
//! from the start (Φ ≠ 0, f(t) ≠ 0); the driven coordinate equals f(t)
//! once assembled; the labels and breakpoints.

use nalgebra::DMatrix;

use super::body::{coordinates, retract, NQ_BODY, NV_BODY};
use super::SpatialSystem;
use crate::capabilities::SecondDerivatives;
use crate::MechanicalSystem;

/// A crank on a tilted hinge driven by a harmonic angle and a block on a
/// tilted guide driven by a quadratic slide; a ramp's breakpoints.
pub(super) const MODEL: &str = r#"
[model]
space = "spatial"

[functions]
wobble = { type = "harmonic", amplitude = 0.4, frequency = 3.0, phase = 0.2, offset = 0.1 }

[[bodies]]
name = "crank"
mass = 1.0
inertia = [[0.02, 0.001, 0.0], [0.001, 0.03, 0.002], [0.0, 0.002, 0.04]]
position = [0.1, 0.05, 0.2]
orientation = [0.9, 0.3, -0.2, 0.2449489742783178]
velocity = [0.3, -0.2, 0.1]
angular_velocity = [1.0, -2.0, 0.5]
points = { pin = [-0.1, -0.05, -0.2] }

[[bodies]]
name = "block"
mass = 2.0
inertia = [0.3, 0.2, 0.25]
position = [0.6, 0.0, -0.8]
orientation = [0.8, 0.36, 0.0, 0.48]
velocity = [0.2, 0.1, -0.3]
angular_velocity = [0.4, 0.3, -0.2]

[[joints]]
name = "hinge"
type = "revolute"
body1 = "ground"
point1 = [0.0, 0.0, 0.0]
body2 = "crank"
point2 = "pin"
axis = [0.0, 0.6, 0.8]

[[joints]]
name = "guide"
type = "prismatic"
body1 = "crank"
point1 = [0.0, 0.0, 0.0]
body2 = "block"
point2 = [0.0, 0.0, 0.0]
axis = [0.6, 0.0, -0.8]

[[drivers]]
name = "spin"
type = "joint"
joint = "hinge"
function = "wobble"

[[drivers]]
name = "push"
type = "joint"
joint = "guide"
function = { type = "sum", terms = [{ type = "polynomial", coefficients = [0.0, 0.3, 0.5] }, { type = "ramp", t0 = 0.5, t1 = 1.5, from = 0.0, to = 0.2 }] }
"#;

const T: f64 = 0.7;

fn system() -> (SpatialSystem, Vec<f64>, Vec<f64>) {
    let model = jounce_model::from_str(MODEL, "drive.toml").unwrap();
    let sys = SpatialSystem::from_model(&model).unwrap();
    let (mut q, v) = sys.initial_state();
    for (i, x) in q.iter_mut().enumerate() {
        *x += 0.03 * ((i as f64) * 1.7).sin();
    }
    sys.normalize(&mut q);
    (sys, q, v)
}

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

fn phi(sys: &SpatialSystem, t: f64, q: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; sys.nc()];
    sys.constraints(t, q, &mut out);
    out
}

fn max_diff(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    (a - b).abs().max() / b.abs().max().max(1.0)
}

#[test]
fn driver_rows_follow_the_joints_and_are_labelled_by_name() {
    let (sys, _, _) = system();
    assert_eq!(sys.nc(), 5 + 5 + 2);
    assert_eq!((sys.joint_count(), sys.driver_count()), (2, 2));
    assert_eq!(sys.constraint_label(10), "driver 'spin'");
    assert_eq!(sys.constraint_label(11), "driver 'push'");
    assert_eq!(sys.breakpoints(), vec![0.5, 1.5]);
}

#[test]
fn driver_jacobian_and_time_derivatives_match_differences() {
    let (sys, q, _) = system();
    let (m, n) = (sys.nc(), sys.nv());
    let mut jac = DMatrix::zeros(m, n);
    sys.constraint_jacobian(T, &q, &mut jac);
    let h = 1e-6;
    let mut fd = DMatrix::zeros(m, n);
    for j in 0..n {
        let (pp, pm) = (
            phi(&sys, T, &plus(&q, &unit(n, j, h))),
            phi(&sys, T, &plus(&q, &unit(n, j, -h))),
        );
        for i in 0..m {
            fd[(i, j)] = (pp[i] - pm[i]) / (2.0 * h);
        }
    }
    let err = max_diff(&jac, &fd);
    assert!(err < 1e-8, "Φ_q vs central differences: {err:e}");
    // Φ_t
    let mut phi_t = vec![0.0; m];
    sys.constraint_time_derivative(T, &q, &mut phi_t);
    let (pp, pm) = (phi(&sys, T + h, &q), phi(&sys, T - h, &q));
    for i in 0..m {
        let fd = (pp[i] - pm[i]) / (2.0 * h);
        assert!(
            (phi_t[i] - fd).abs() < 1e-8,
            "Φ_t row {i}: {} vs {fd}",
            phi_t[i]
        );
    }
    assert!(phi_t[10].abs() > 0.1 && phi_t[11].abs() > 0.1, "{phi_t:?}");
    // Φ_qt
    let mut qt = DMatrix::zeros(m, n);
    sys.exact_constraint_time_jacobian(T, &q, &mut qt);
    let (mut jp, mut jm) = (DMatrix::zeros(m, n), DMatrix::zeros(m, n));
    sys.constraint_jacobian(T + h, &q, &mut jp);
    sys.constraint_jacobian(T - h, &q, &mut jm);
    let fd = (jp - jm) / (2.0 * h);
    let err = max_diff(&qt, &fd);
    assert!(err < 1e-8, "Φ_qt vs central differences: {err:e}");
    assert!(qt.abs().max() > 0.1);
}

#[test]
fn driver_gamma_is_minus_the_second_derivative_along_time_and_the_motion() {
    let (sys, q, v) = system();
    let m = sys.nc();
    let mut gamma = vec![0.0; m];
    sys.gamma(T, &q, &v, &mut gamma);
    let h = 1e-4;
    let hv: Vec<f64> = v.iter().map(|x| x * h).collect();
    let mhv: Vec<f64> = v.iter().map(|x| -x * h).collect();
    let (pp, p0, pm) = (
        phi(&sys, T + h, &plus(&q, &hv)),
        phi(&sys, T, &q),
        phi(&sys, T - h, &plus(&q, &mhv)),
    );
    let scale = gamma.iter().fold(1.0f64, |a, x| a.max(x.abs()));
    for i in 0..m {
        let fd = -(pp[i] - 2.0 * p0[i] + pm[i]) / (h * h);
        assert!(
            (gamma[i] - fd).abs() < 1e-5 * scale,
            "γ row {i} ({}): {} vs {fd}",
            sys.constraint_label(i),
            gamma[i]
        );
    }
}

#[test]
fn driver_second_derivatives_match_differences_of_the_first() {
    let (sys, q, v) = system();
    let (m, n) = (sys.nc(), sys.nv());
    let h = 1e-6;
    let mut dq = DMatrix::zeros(m, n);
    let mut dv = DMatrix::zeros(m, n);
    sys.exact_gamma_jacobians(T, &q, &v, &mut dq, &mut dv);
    let a: Vec<f64> = (0..n).map(|i| ((i as f64) * 0.9).cos()).collect();
    let lambda: Vec<f64> = (0..m).map(|i| ((i as f64) * 1.3).sin()).collect();
    let mut hess = DMatrix::zeros(m, n);
    sys.exact_constraint_hessian_product(T, &q, &a, &mut hess);
    let mut kc = DMatrix::zeros(n, n);
    sys.constraint_force_jacobian(T, &q, &lambda, &mut kc);
    let gamma_at = |q: &[f64], v: &[f64]| {
        let mut g = vec![0.0; m];
        sys.gamma(T, q, v, &mut g);
        g
    };
    let jac_at = |q: &[f64]| {
        let mut j = DMatrix::zeros(m, n);
        sys.constraint_jacobian(T, q, &mut j);
        j
    };
    let av = nalgebra::DVector::from_column_slice(&a);
    let lv = nalgebra::DVector::from_column_slice(&lambda);
    let (mut fdq, mut fdv, mut fdh, mut fdk) = (
        DMatrix::zeros(m, n),
        DMatrix::zeros(m, n),
        DMatrix::zeros(m, n),
        DMatrix::zeros(n, n),
    );
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
fn assembly_at_a_time_puts_the_driven_coordinates_at_f_of_t() {
    let model = jounce_model::from_str(MODEL, "drive.toml").unwrap();
    let sys = SpatialSystem::from_model(&model).unwrap();
    let (q, v) = sys.initial_state();
    // at the start both coordinates are zero by definition
    assert!(sys.driven_coordinate(0, &q).abs() < 1e-15);
    assert!(sys.driven_coordinate(1, &q).abs() < 1e-15);
    let asm = crate::assemble(&sys, T, &q, &v, 1e-13).unwrap();
    assert_eq!(asm.dof, 0);
    let angle = 0.1 + 0.4 * (3.0 * T + 0.2).sin();
    let slide = 0.3 * T + 0.5 * T * T + 0.2 * (T - 0.5);
    let got = (
        sys.driven_coordinate(0, &asm.q),
        sys.driven_coordinate(1, &asm.q),
    );
    assert!((got.0 - angle).abs() < 1e-12, "θ = {} vs {angle}", got.0);
    assert!((got.1 - slide).abs() < 1e-12, "d = {} vs {slide}", got.1);
}

#[test]
fn a_driver_of_a_missing_or_undrivable_joint_is_refused_by_name() {
    let model = jounce_model::from_str(MODEL, "drive.toml").unwrap();
    let mut sm = model.spatial.clone().unwrap();
    sm.drivers[0].joint = 7;
    let err = SpatialSystem::from_spatial(&sm).unwrap_err().to_string();
    assert!(err.contains("driver 'spin'"), "{err}");
    // a built model cannot name a spherical joint, a hand-made one can
    let mut sm = model.spatial.clone().unwrap();
    sm.joints[0].kind = jounce_model::SpatialJointKind::Spherical {
        a: sm.joints[0].kind.attachments().0,
        b: sm.joints[0].kind.attachments().1,
    };
    let err = SpatialSystem::from_spatial(&sm).unwrap_err().to_string();
    assert!(
        err.contains("driver 'spin'") && err.contains("cannot be driven"),
        "{err}"
    );
}
