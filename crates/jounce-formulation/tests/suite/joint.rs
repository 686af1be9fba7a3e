//! The `joint` formulation's exact Jacobian and structural tangent against
//! finite differences (S1, a tree; the four-bar, a closed loop), and its
//! refusal of a system without a joint-coordinate form.

use jounce_formulation::examples::models;
use jounce_formulation::{build, FormulationError, FormulationSettings};
use jounce_integrate::jacobian::{fd_jacobian, fd_tangent};
use jounce_mechanics::{assemble, PlanarSystem};
use nalgebra::DMatrix;

fn load(rel: &str) -> PlanarSystem {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(rel);
    PlanarSystem::from_model(&jounce_model::load_file(&file).unwrap()).unwrap()
}

fn assert_close(a: &DMatrix<f64>, b: &DMatrix<f64>, tol: f64, what: &str) {
    let d = (a - b).amax();
    assert!(
        d <= tol * (1.0 + b.amax()),
        "{what}: differs by {d:e}\n{a}\n{b}"
    );
}

#[test]
fn exact_jacobian_and_tangent_match_finite_differences() {
    // the four-bar also with Baumgarte terms, which enter the Jacobian
    let stabilised = FormulationSettings {
        baumgarte_alpha: 5.0,
        baumgarte_beta: 20.0,
        ..FormulationSettings::default()
    };
    for (file, closed, settings) in [
        (
            "studies/s1_k1_1e2_k2_1e2.toml",
            false,
            FormulationSettings::default(),
        ),
        ("four_bar.toml", true, FormulationSettings::default()),
        ("four_bar.toml", true, stabilised),
        ("slider_crank.toml", true, FormulationSettings::default()),
    ] {
        let sys = load(file);
        let mut f = build("joint", &settings, &sys).unwrap();
        let a = assemble(&sys, 0.0, &sys.initial_q(), &sys.initial_v(), 1e-12).unwrap();
        let mut y = f.initial_state(0.0, &a.q, &a.v).unwrap();
        let n = y.len() / 2;
        // off the start, moving (the derivatives need no consistency)
        for i in 0..n {
            y[i] += 0.05 * (i as f64 + 1.0);
            y[n + i] += 0.3 * (i as f64 - 0.5);
        }
        assert!(f.has_exact_jacobian(), "{file}");
        let mut jac = DMatrix::zeros(2 * n, 2 * n);
        f.jacobian(0.2, &y, &mut jac).unwrap();
        let mut fd = DMatrix::zeros(2 * n, 2 * n);
        fd_jacobian(f.as_mut(), 0.2, &y, &mut fd).unwrap();
        assert_close(&jac, &fd, 1e-5, &format!("{file}: Jacobian"));
        let so = f.as_second_order().unwrap();
        assert!(so.has_exact_tangent(), "{file}");
        let acc: Vec<f64> = (0..n).map(|i| 0.7 - 0.4 * i as f64).collect();
        let (mut k, mut c) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
        let (mut kf, mut cf) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
        so.tangent(0.2, &y[..n], &y[n..], &acc, &mut k, &mut c)
            .unwrap();
        fd_tangent(so, 0.2, &y[..n], &y[n..], &acc, &mut kf, &mut cf).unwrap();
        assert_close(&k, &kf, 1e-5, &format!("{file}: K"));
        assert_close(&c, &cf, 1e-5, &format!("{file}: C"));
        if !closed {
            // a tree: the mass matrix is the CRBA one, not the identity
            let mut m = DMatrix::zeros(n, n);
            so.mass_matrix(0.2, &y[..n], &mut m).unwrap();
            assert!(
                (m[(0, 1)] - (1.0 + (y[1]).cos())).abs() < 1e-12,
                "S1 M12 = {}",
                m[(0, 1)]
            );
        }
    }
}

#[test]
fn a_system_without_joint_coordinates_is_refused_by_name() {
    let (sys, _, _) = models::pendulum(1.0, 1.0, 0.2, 0.0);
    let e = build("joint", &FormulationSettings::default(), &sys)
        .err()
        .expect("hand-written systems have no joint form");
    assert!(matches!(e, FormulationError::BadParameter { .. }));
    assert!(e.to_string().contains("joint"), "{e}");
}

/// A point mass pinned at its centre of mass: the start is refused naming
/// the joint that sees no inertia.
#[test]
fn a_joint_without_inertia_is_refused_naming_it() {
    use jounce_model::{Attachment, Body, BodyRef, Joint, JointKind, Model, Settings};
    let model = Model {
        name: "dot".into(),
        source: "<test>".into(),
        gravity: [0.0, -9.81],
        bodies: vec![Body {
            name: "dot".into(),
            mass: 1.0,
            inertia: 0.0,
            position: [0.0, 0.0],
            angle: 0.0,
            velocity: [0.0; 2],
            angular_velocity: 0.0,
            points: vec![],
        }],
        joints: vec![Joint {
            name: "pin".into(),
            kind: JointKind::Revolute {
                a: Attachment {
                    body: BodyRef::Ground,
                    point: [0.0, 0.0],
                },
                b: Attachment {
                    body: BodyRef::Body(0),
                    point: [0.0, 0.0],
                },
            },
            friction: None,
        }],
        drivers: vec![],
        forces: vec![],
        settings: Settings::default(),
        spatial: None,
    };
    let sys = PlanarSystem::from_model(&model).unwrap();
    let mut f = build("joint", &FormulationSettings::default(), &sys).unwrap();
    let e = f.initial_state(0.0, &[0.0; 3], &[0.0; 3]).unwrap_err();
    assert!(matches!(e, FormulationError::SingularMass { .. }), "{e:?}");
    assert!(e.to_string().contains("joint 'pin'"), "{e}");
}

/// The second-order form of spatial joint coordinates with n_q ≠ n_v (a
/// free joint: the tumbling body; spherical joints: the spatial double
/// pendulum, also closed by a distance rod into a loop): K is taken along
/// the increments of the retraction q ⊕ Δ, so it equals central
/// differences of r(Δ) = M(q ⊕ Δ) a − f(t, q ⊕ Δ, v) at Δ = 0 (and C
/// those of r in v) to 1e-6 relative; q ⊕ 0 leaves a q on the manifold
/// in place. (The tumbling body's K is zero:
/// torque-free, with body-frame rates its residual does not depend on q;
/// the pendulums' is not.)
#[test]
fn spatial_tangent_along_the_retraction_matches_central_differences() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let pendulum = std::fs::read_to_string(root.join("spatial_double_pendulum.toml")).unwrap();
    let looped = pendulum.clone()
        + r#"
[[joints]]
name = "closing_rod"
type = "distance"
body1 = "ground"
point1 = [1.5, 1.0, 0.0]
body2 = "link2"
point2 = [0.0, 0.0, 0.0]
"#;
    let tumbling = std::fs::read_to_string(root.join("tumbling_body.toml")).unwrap();
    for (name, text, gravity) in [
        ("tumbling body", tumbling, false),
        ("spatial double pendulum", pendulum, true),
        ("closed spatial double pendulum", looped, true),
    ] {
        let model = jounce_model::from_str(&text, name).unwrap();
        let sys = jounce_mechanics::SpatialSystem::from_model(&model).unwrap();
        let mut f = build("joint", &FormulationSettings::default(), &sys).unwrap();
        let (q0, v0) = sys.initial_state();
        let y = f.initial_state(0.0, &q0, &v0).unwrap();
        let so = f.as_second_order().expect("second-order form");
        let (nq, n) = (so.n_positions(), so.ndof());
        assert!(nq > n, "{name}: n_q = {nq}, n = {n}");
        // a moved, turning state on the manifold
        let turn: Vec<f64> = (0..n)
            .map(|k| 0.4 * ((k as f64) * 0.9 + 0.3).sin())
            .collect();
        let mut q = vec![0.0; nq];
        so.integrate_positions(&y[..nq], &turn, &mut q);
        let v: Vec<f64> = (0..n)
            .map(|k| y[nq + k] + 0.5 * ((k as f64) * 1.3).cos())
            .collect();
        let acc: Vec<f64> = (0..n).map(|k| 0.7 - 0.2 * k as f64).collect();
        let (mut k, mut c) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
        so.tangent(0.2, &q, &v, &acc, &mut k, &mut c).unwrap();
        let mut mass = DMatrix::zeros(n, n);
        let mut forces = vec![0.0; n];
        let mut residual =
            |so: &mut dyn jounce_integrate::SecondOrderProblem, q: &[f64], v: &[f64]| -> Vec<f64> {
                so.mass_matrix(0.2, q, &mut mass).unwrap();
                so.forces(0.2, q, v, &mut forces).unwrap();
                (0..n)
                    .map(|i| (0..n).map(|j| mass[(i, j)] * acc[j]).sum::<f64>() - forces[i])
                    .collect()
            };
        let (mut kf, mut cf) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
        let h = 1e-6;
        let (mut qp, mut qm) = (vec![0.0; nq], vec![0.0; nq]);
        for j in 0..n {
            let mut d = vec![0.0; n];
            d[j] = h;
            so.integrate_positions(&q, &d, &mut qp);
            d[j] = -h;
            so.integrate_positions(&q, &d, &mut qm);
            let (rp, rm) = (residual(so, &qp, &v), residual(so, &qm, &v));
            let (mut vp, mut vm) = (v.clone(), v.clone());
            vp[j] += h;
            vm[j] -= h;
            let (sp, sm) = (residual(so, &q, &vp), residual(so, &q, &vm));
            for i in 0..n {
                kf[(i, j)] = (rp[i] - rm[i]) / (2.0 * h);
                cf[(i, j)] = (sp[i] - sm[i]) / (2.0 * h);
            }
        }
        let (dk, dc) = ((&k - &kf).amax(), (&c - &cf).amax());
        eprintln!("{name}: K along q ⊕ Δ off central differences by {dk:e}, C by {dc:e}");
        assert_eq!(kf.amax() > 1e-3, gravity, "{name}: |K| = {:e}", kf.amax());
        assert_close(&k, &kf, 1e-6, &format!("{name}: K"));
        assert_close(&c, &cf, 1e-6, &format!("{name}: C"));
        // q ⊕ 0 is q normalised (q is on the manifold already)
        let mut same = vec![0.0; nq];
        so.integrate_positions(&q, &vec![0.0; n], &mut same);
        let off = (0..nq).map(|i| (same[i] - q[i]).abs()).fold(0.0, f64::max);
        assert!(off < 1e-15, "{name}: q ⊕ 0 moved q by {off:e}");
    }
}
