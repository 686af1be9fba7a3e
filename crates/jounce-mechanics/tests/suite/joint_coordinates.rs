//! Joint coordinates: the recursive algorithms against each other and
//! against closed forms — ABA = CRBA solve on random trees and chains, the
//! S1 mass matrix and velocity terms of studies.md, exact Jacobians
//! against finite differences, forward kinematics against the body
//! constraints, closure constraints of the four-bar.

use crate::common;

use common::*;
use jounce_mechanics::{
    JointCoordinateSystem, JointSpaceError, MechanicalSystem, PlanarJointSystem, PlanarSystem,
};
use jounce_model::{ForceFrame, ForceKind, Model, TimeFunction};
use nalgebra::{DMatrix, DVector};

/// A random tree of `nb` bodies: body i hangs from a random earlier body
/// (or ground) by a revolute or translational joint, written either way
/// round (body1 the parent or the child), with gravity, springs and forces.
fn random_tree(nb: usize, seed: &mut u64) -> Model {
    let mut bodies = Vec::new();
    let mut joints = Vec::new();
    for i in 0..nb {
        let mass = 0.5 + noise(seed).abs();
        // some point masses (zero centroidal inertia)
        let inertia = if i % 3 == 2 {
            0.0
        } else {
            0.1 + 0.1 * noise(seed).abs()
        };
        bodies.push(body(
            &format!("b{i}"),
            mass,
            inertia,
            noise(seed),
            noise(seed),
            noise(seed),
        ));
        let parent = if i == 0 {
            None
        } else {
            Some((noise(seed).abs() * i as f64) as usize)
        };
        let pa = [0.5 * noise(seed), 0.5 * noise(seed)];
        let pc = [0.4 + 0.3 * noise(seed), 0.3 * noise(seed)];
        let at_parent = match parent {
            None => ground(pa),
            Some(p) => on(p, pa),
        };
        let at_child = on(i, pc);
        let reversed = noise(seed) > 0.3 && parent.is_some();
        let (a, b) = if reversed {
            (at_child, at_parent)
        } else {
            (at_parent, at_child)
        };
        let name = format!("j{i}");
        joints.push(if noise(seed) > 0.2 {
            revolute(&name, a, b)
        } else {
            translational(&name, a, b, [noise(seed), 1.0])
        });
    }
    let mut forces = vec![
        force(
            "push",
            ForceKind::PointForce {
                at: on(nb - 1, [0.2, 0.1]),
                fx: TimeFunction::Constant(1.5),
                fy: TimeFunction::Constant(-0.7),
                frame: ForceFrame::Body,
            },
        ),
        force(
            "spring",
            ForceKind::SpringDamper {
                a: ground([1.0, 1.0]),
                b: on(nb / 2, [0.1, 0.0]),
                stiffness: 30.0,
                damping: 2.0,
                free_length: 0.5,
                actuator: None,
                one_sided: None,
            },
        ),
    ];
    if let Some(j) = joints
        .iter()
        .position(|j| matches!(j.kind, jounce_model::JointKind::Revolute { .. }))
    {
        forces.push(force(
            "torsion",
            ForceKind::RotationalSpring {
                joint: j,
                stiffness: 20.0,
                damping: 0.5,
                zero_angle: 0.3,
                actuator: Some(TimeFunction::Constant(0.4)),
                one_sided: None,
            },
        ));
    }
    let mut m = model("random tree", bodies, joints, vec![], forces);
    m.gravity = [0.3, -9.81];
    m
}

fn random_state(n: usize, seed: &mut u64) -> (Vec<f64>, Vec<f64>) {
    let q = (0..n).map(|_| noise(seed)).collect();
    let v = (0..n).map(|_| 2.0 * noise(seed)).collect();
    (q, v)
}

/// q'' by the articulated-body algorithm and by M⁻¹ f (CRBA, RNEA).
fn aba_and_crba(js: &PlanarJointSystem, q: &[f64], v: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let n = js.nv();
    let mut data = js.data();
    let mut a = vec![0.0; n];
    js.forward_dynamics(&mut data, 0.3, q, v, &mut a)
        .expect("regular tree");
    let mut m = DMatrix::zeros(n, n);
    js.mass_matrix(&mut data, q, &mut m);
    let mut f = vec![0.0; n];
    js.bias_forces(&mut data, 0.3, q, v, &mut f);
    let sol = m.lu().solve(&DVector::from_vec(f)).expect("M regular");
    (a, sol.as_slice().to_vec())
}

fn assert_close(a: &[f64], b: &[f64], tol: f64, what: &str) {
    let scale = 1.0 + b.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    for i in 0..a.len() {
        assert!(
            (a[i] - b[i]).abs() <= tol * scale,
            "{what}: entry {i}: {} vs {} (diff {:.3e})",
            a[i],
            b[i],
            (a[i] - b[i]).abs()
        );
    }
}

#[test]
fn aba_equals_crba_solve_on_random_trees() {
    let mut seed = 7;
    // up to 4 coordinates forward dynamics takes the small-tree path
    // (CRBA and LᵀDL), beyond it the articulated-body algorithm
    for nb in [1, 2, 3, 4, 5, 12] {
        let model = random_tree(nb, &mut seed);
        let sys = system(&model);
        let js = PlanarJointSystem::new(&sys);
        assert_eq!(
            (js.nv(), js.nc()),
            (nb, 0),
            "a tree has one coordinate per joint"
        );
        for _ in 0..3 {
            let (q, v) = random_state(nb, &mut seed);
            let (a, b) = aba_and_crba(&js, &q, &v);
            assert_close(&a, &b, 1e-10, &format!("random tree of {nb}"));
        }
    }
}

/// Without gravity and forces on the bodies (only rotational springs on
/// tree joints) the small-tree path evaluates the kinematics with the root
/// joints' angles at zero (rotation invariance) and, for chains, with every
/// index a constant, for two coordinates by Cramer's rule: q'' still equals
/// the CRBA solve at the actual angles, on chains and branched trees (two
/// branches from ground, or a body with two children), at random states.
#[test]
fn small_tree_in_a_field_free_plane_equals_crba_solve() {
    let mut seed = 23;
    let mut checked = 0;
    for nb in [1, 2, 3, 4, 5, 6] {
        for _ in 0..8 {
            let mut model = random_tree(nb, &mut seed);
            model.gravity = [0.0, 0.0];
            model
                .forces
                .retain(|f| matches!(f.kind, ForceKind::RotationalSpring { .. }));
            let sys = system(&model);
            let js = PlanarJointSystem::new(&sys);
            for _ in 0..3 {
                let (q, v) = random_state(nb, &mut seed);
                let (a, b) = aba_and_crba(&js, &q, &v);
                assert_close(&a, &b, 1e-10, &format!("field-free tree of {nb}"));
                checked += 1;
            }
        }
    }
    // two branches hanging from ground, and a chain, of two coordinates
    for (name, second_parent) in [("two roots", None), ("chain", Some(0))] {
        let bodies = vec![
            body("a", 1.3, 0.0, 1.0, 0.0, 0.0),
            body("b", 0.7, 0.05, 0.0, 1.0, 0.0),
        ];
        let at = |p: Option<usize>, s| p.map_or(ground(s), |p| on(p, s));
        let joints = vec![
            revolute("ja", ground([0.2, -0.1]), on(0, [-1.0, 0.0])),
            revolute("jb", at(second_parent, [0.3, 0.4]), on(1, [0.1, -0.6])),
        ];
        let springs = (0..2)
            .map(|j| {
                force(
                    &format!("k{j}"),
                    ForceKind::RotationalSpring {
                        joint: j,
                        stiffness: 50.0,
                        damping: 0.3,
                        zero_angle: 0.1,
                        actuator: None,
                        one_sided: None,
                    },
                )
            })
            .collect();
        let mut m = model(name, bodies, joints, vec![], springs);
        m.gravity = [0.0, 0.0];
        let js = PlanarJointSystem::new(&system(&m));
        for _ in 0..5 {
            let (q, v) = random_state(2, &mut seed);
            let (a, b) = aba_and_crba(&js, &q, &v);
            assert_close(&a, &b, 1e-12, name);
        }
    }
    assert_eq!(checked, 6 * 8 * 3);
}

/// A horizontal chain of N uniform links hanging from ground.
fn chain(n: usize) -> Model {
    let bodies = (0..n)
        .map(|i| bar(&format!("l{i}"), 1.0, i as f64 + 0.5, 0.0, 0.0))
        .collect();
    let joints = (0..n)
        .map(|i| {
            let a = if i == 0 {
                ground([0.0, 0.0])
            } else {
                on(i - 1, [0.5, 0.0])
            };
            revolute(&format!("p{i}"), a, on(i, [-0.5, 0.0]))
        })
        .collect();
    model("chain", bodies, joints, vec![], vec![])
}

#[test]
fn aba_equals_crba_solve_on_chains() {
    let mut seed = 11;
    for n in [1, 3, 10, 40, 200] {
        let sys = system(&chain(n));
        let js = PlanarJointSystem::new(&sys);
        let (q, v) = random_state(n, &mut seed);
        let (a, b) = aba_and_crba(&js, &q, &v);
        assert_close(&a, &b, 1e-9, &format!("chain of {n}"));
    }
}

fn s1(k1: f64, k2: f64) -> PlanarSystem {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/studies");
    let model = jounce_model::load_file(&root.join("s1_k1_0_k2_0.toml")).expect("S1 model");
    let mut model = model;
    for f in &mut model.forces {
        if let ForceKind::RotationalSpring {
            stiffness, joint, ..
        } = &mut f.kind
        {
            *stiffness = if *joint == 0 { k1 } else { k2 };
        }
    }
    if model.forces.is_empty() {
        for (j, k) in [(0, k1), (1, k2)] {
            model.forces.push(force(
                &format!("k{j}"),
                ForceKind::RotationalSpring {
                    joint: j,
                    stiffness: k,
                    damping: 0.0,
                    zero_angle: 0.0,
                    actuator: None,
                    one_sided: None,
                },
            ));
        }
    }
    system(&model)
}

/// studies.md S1: M = [[3 + 2 cos φ2, 1 + cos φ2], [1 + cos φ2, 1]] and,
/// for point masses m = 1 on links l = 1, f = −K φ − h with
/// h = (−sin φ2 (2 φ1' φ2' + φ2'²), sin φ2 φ1'²).
#[test]
fn s1_mass_matrix_and_forces_are_the_closed_form() {
    let (k1, k2) = (3.0, 7.0);
    let sys = s1(k1, k2);
    let js = PlanarJointSystem::new(&sys);
    assert_eq!((js.nv(), js.nc()), (2, 0));
    assert_eq!(js.coordinate_label(1), "joint 'elbow' (angle)");
    let mut data = js.data();
    let mut seed = 3;
    for _ in 0..5 {
        let (q, v) = random_state(2, &mut seed);
        let (s, c) = q[1].sin_cos();
        let mut m = DMatrix::zeros(2, 2);
        js.mass_matrix(&mut data, &q, &mut m);
        let expect = DMatrix::from_row_slice(2, 2, &[3.0 + 2.0 * c, 1.0 + c, 1.0 + c, 1.0]);
        assert!((&m - &expect).amax() < 1e-13, "M = {m} vs {expect}");
        let mut f = [0.0; 2];
        js.bias_forces(&mut data, 0.0, &q, &v, &mut f);
        let h = [-s * (2.0 * v[0] * v[1] + v[1] * v[1]), s * v[0] * v[0]];
        let fe = [-k1 * q[0] - h[0], -k2 * q[1] - h[1]];
        assert_close(&f, &fe, 1e-13, "S1 f = −Kφ − h");
        let mut a = [0.0; 2];
        js.forward_dynamics(&mut data, 0.0, &q, &v, &mut a).unwrap();
        let sol = expect.lu().solve(&DVector::from_row_slice(&fe)).unwrap();
        assert_close(&a, sol.as_slice(), 1e-12, "S1 ABA");
        // kinetic energy in joint and in body coordinates
        let (mut x, mut xd) = (vec![0.0; 6], vec![0.0; 6]);
        js.body_state(&mut data, &q, &v, &mut x, &mut xd);
        let tj =
            0.5 * (m.clone() * DVector::from_column_slice(&v)).dot(&DVector::from_column_slice(&v));
        assert!((tj - sys.kinetic_energy(&x, &xd)).abs() < 1e-12);
    }
}

#[test]
fn forward_kinematics_satisfies_the_body_constraints_and_inverts() {
    let mut seed = 5;
    let model = random_tree(8, &mut seed);
    let sys = system(&model);
    let js = PlanarJointSystem::new(&sys);
    let mut data = js.data();
    let (q, v) = random_state(8, &mut seed);
    let (mut x, mut xd) = (vec![0.0; 24], vec![0.0; 24]);
    js.body_state(&mut data, &q, &v, &mut x, &mut xd);
    let mut phi = vec![0.0; sys.nc()];
    sys.constraints(0.0, &x, &mut phi);
    let mut jac = DMatrix::zeros(sys.nc(), sys.nq());
    sys.constraint_jacobian(0.0, &x, &mut jac);
    let vel = &jac * DVector::from_column_slice(&xd);
    assert!(phi.iter().all(|p| p.abs() < 1e-12), "Φ(x(q)) = {phi:?}");
    assert!(vel.amax() < 1e-12, "Φ_q ẋ = {vel}");
    let (mut q2, mut v2) = (vec![0.0; 8], vec![0.0; 8]);
    js.joint_state(&mut data, &x, &xd, 1e-10, &mut q2, &mut v2)
        .unwrap();
    // angles come back up to 2π
    for i in 0..8 {
        let d = q2[i] - q[i];
        let d = if js.coordinate_label(i).ends_with("(angle)") {
            d - (d / std::f64::consts::TAU).round() * std::f64::consts::TAU
        } else {
            d
        };
        assert!(d.abs() < 1e-12, "q[{i}]: {} vs {}", q2[i], q[i]);
    }
    assert_close(&v2, &v, 1e-12, "joint rates from body velocities");
}

#[test]
fn exact_jacobians_match_finite_differences() {
    let mut seed = 9;
    let model = random_tree(6, &mut seed);
    let sys = system(&model);
    let js = PlanarJointSystem::new(&sys);
    let n = js.nv();
    let mut data = js.data();
    let (q, v) = random_state(n, &mut seed);
    let acc: Vec<f64> = (0..n).map(|_| noise(&mut seed)).collect();
    let t = 0.2;
    let (mut dq, mut dv) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
    js.forward_dynamics_jacobians(&mut data, t, &q, &v, &mut dq, &mut dv)
        .unwrap();
    let fa = |qq: &[f64], vv: &[f64], out: &mut [f64]| {
        let mut d = js.data();
        js.forward_dynamics(&mut d, t, qq, vv, out).unwrap();
    };
    let fdq = fd_jacobian(|x, out| fa(x, &v, out), &q, n);
    let fdv = fd_jacobian(|x, out| fa(&q, x, out), &v, n);
    assert_matrix_close(&sys, &dq, &fdq, 1e-6, "∂q''/∂q");
    assert_matrix_close(&sys, &dv, &fdv, 1e-6, "∂q''/∂v");
    js.inverse_dynamics_jacobians(&mut data, t, &q, &v, &acc, &mut dq, &mut dv);
    let fi = |qq: &[f64], vv: &[f64], out: &mut [f64]| {
        let mut d = js.data();
        js.inverse_dynamics(&mut d, t, qq, vv, &acc, out);
    };
    let fdq = fd_jacobian(|x, out| fi(x, &v, out), &q, n);
    let fdv = fd_jacobian(|x, out| fi(&q, x, out), &v, n);
    assert_matrix_close(&sys, &dq, &fdq, 1e-6, "K = ∂τ/∂q");
    assert_matrix_close(&sys, &dv, &fdv, 1e-6, "C = ∂τ/∂v");
}

#[test]
fn four_bar_closure_constraints_and_their_derivatives() {
    let model = four_bar(1.0, [0.0, 0.6], [1.2, 0.9]);
    let sys = system(&model);
    let js = PlanarJointSystem::new(&sys);
    // three bodies, three tree joints, one cut revolute (2 rows)
    assert_eq!((js.nv(), js.nc()), (3, 2));
    assert!(js.constraint_label(0).starts_with("joint '"));
    let mut data = js.data();
    let mut x = sys.initial_q();
    let xd = vec![0.0; 9];
    let (mut q, mut v) = (vec![0.0; 3], vec![0.0; 3]);
    js.joint_state(&mut data, &x, &xd, 1e-10, &mut q, &mut v)
        .unwrap();
    let mut phi = [0.0; 2];
    js.constraints(&mut data, 0.0, &q, &mut phi);
    assert!(
        phi.iter().all(|p| p.abs() < 1e-12),
        "closed at the model's pose: {phi:?}"
    );
    // Φ_q against finite differences, away from the closed pose
    let qs = [q[0] + 0.1, q[1] - 0.2, q[2] + 0.05];
    let mut jac = DMatrix::zeros(2, 3);
    js.constraint_jacobian(&mut data, 0.0, &qs, &mut jac);
    let fd = fd_jacobian(
        |x, out| {
            let mut d = js.data();
            js.constraints(&mut d, 0.0, x, out)
        },
        &qs,
        2,
    );
    assert_matrix_close(&sys, &jac, &fd, 1e-7, "Φ_q");
    // γ = −d²Φ/ds² along q + v s
    let vs = [0.7, -1.1, 0.4];
    let mut gamma = [0.0; 2];
    js.gamma(&mut data, 0.0, &qs, &vs, &mut gamma);
    let h = 1e-4;
    let phi_at = |s: f64| {
        let p: Vec<f64> = (0..3).map(|i| qs[i] + vs[i] * s).collect();
        let mut out = [0.0; 2];
        js.constraints(&mut js.data(), 0.0, &p, &mut out);
        out
    };
    let (p1, p0, m1) = (phi_at(h), phi_at(0.0), phi_at(-h));
    for r in 0..2 {
        let d2 = (p1[r] - 2.0 * p0[r] + m1[r]) / (h * h);
        assert!(
            (gamma[r] + d2).abs() < 1e-5,
            "γ[{r}] = {} vs {}",
            gamma[r],
            -d2
        );
    }
    x[0] += 0.1;
    assert!(matches!(
        js.joint_state(&mut data, &x, &xd, 1e-10, &mut q, &mut v),
        Err(JointSpaceError::Inconsistent { .. })
    ));
}

/// A point mass pinned at its own centre of mass sees no inertia about the
/// pin: the error names the joint.
#[test]
fn zero_articulated_inertia_names_the_joint() {
    let bodies = vec![body("dot", 1.0, 0.0, 0.0, 0.0, 0.0)];
    let joints = vec![revolute("pin", ground([0.0, 0.0]), on(0, [0.0, 0.0]))];
    let sys = system(&model("dot", bodies, joints, vec![], vec![]));
    let js = PlanarJointSystem::new(&sys);
    let mut a = [0.0];
    let err = js
        .forward_dynamics(&mut js.data(), 0.0, &[0.0], &[1.0], &mut a)
        .unwrap_err();
    assert!(err.to_string().contains("joint 'pin'"), "{err}");
    // two coordinates (Cramer's rule), in a field-free plane and under
    // gravity, point masses: the outer one pinned at its centre (its joint
    // sees nothing), and the outer one hanging from the inner one's pivot,
    // which is the inner one's centre (the inner joint sees nothing once
    // the outer one is free)
    for gravity in [[0.0, 0.0], [0.0, -9.81]] {
        for (case, ends, expect) in [
            ("outer", [[1.0, 0.0], [0.0, 0.0]], "joint 'jb'"),
            ("inner", [[0.0, 0.0], [-1.0, 0.0]], "joint 'ja'"),
        ] {
            let bodies = vec![
                body("a", 1.0, 0.0, 0.0, 0.0, 0.0),
                body("b", 1.0, 0.0, 1.0, 0.0, 0.0),
            ];
            let joints = vec![
                revolute("ja", ground([0.0, 0.0]), on(0, [0.0, 0.0])),
                revolute("jb", on(0, ends[0]), on(1, ends[1])),
            ];
            let mut m = model(case, bodies, joints, vec![], vec![]);
            m.gravity = gravity;
            let js = PlanarJointSystem::new(&system(&m));
            let mut a = [0.0; 2];
            let err = js
                .forward_dynamics(&mut js.data(), 0.0, &[0.3, -0.2], &[1.0, 2.0], &mut a)
                .unwrap_err();
            assert!(err.to_string().contains(expect), "{case}: {err}");
        }
    }
}

/// A body held by no revolute or translational joint gets a free joint:
/// its coordinates are its own (x, y, θ), and it falls freely.
#[test]
fn free_bodies_fall_freely() {
    let bodies = vec![body("rock", 2.0, 0.3, 1.0, 2.0, 0.5)];
    let sys = system(&model("rock", bodies, vec![], vec![], vec![]));
    let js = PlanarJointSystem::new(&sys);
    assert_eq!(js.nv(), 3);
    let mut a = [0.0; 3];
    js.forward_dynamics(
        &mut js.data(),
        0.0,
        &[1.0, 2.0, 0.5],
        &[0.3, -0.2, 4.0],
        &mut a,
    )
    .unwrap();
    assert_close(&a, &[0.0, -9.81, 0.0], 1e-12, "free fall");
}

/// With closure constraints (the four-bar's cut pin; the driven
/// slider-crank's cut pin and motor) q'' comes from the KKT system in joint
/// coordinates: it satisfies Φ_q q'' = γ and M q'' + Φ_qᵀλ = f, and its
/// exact Jacobians match finite differences.
#[test]
fn closed_loop_dynamics_and_its_exact_jacobians() {
    for (model, nv, nc) in [
        (four_bar(1.0, [0.0, 0.6], [1.2, 0.9]), 3, 2),
        (slider_crank(0.3, 1.0, 0.4, true), 3, 3),
    ] {
        let sys = system(&model);
        let js = PlanarJointSystem::new(&sys);
        assert_eq!((js.nv(), js.nc()), (nv, nc), "{}", model.name);
        let mut data = js.data();
        let (mut q, mut v) = (vec![0.0; nv], vec![0.0; nv]);
        let xd = vec![0.0; sys.nq()];
        js.joint_state(&mut data, &sys.initial_q(), &xd, 1e-9, &mut q, &mut v)
            .unwrap();
        // a consistent velocity: v in the null space of Φ_q
        let mut jac = DMatrix::zeros(nc, nv);
        js.constraint_jacobian(&mut data, 0.0, &q, &mut jac);
        if nc == 2 {
            // three coordinates, two rows: the null space is the cross
            // product of the rows
            let (r0, r1) = (jac.row(0), jac.row(1));
            v = vec![
                r0[1] * r1[2] - r0[2] * r1[1],
                r0[2] * r1[0] - r0[0] * r1[2],
                r0[0] * r1[1] - r0[1] * r1[0],
            ];
        }
        let mut a = vec![0.0; nv];
        js.forward_dynamics(&mut data, 0.1, &q, &v, &mut a).unwrap();
        let mut gamma = vec![0.0; nc];
        js.gamma(&mut data, 0.1, &q, &v, &mut gamma);
        let r = &jac * DVector::from_column_slice(&a);
        assert_close(r.as_slice(), &gamma, 1e-10, "Φ_q q'' = γ");
        let (mut dq, mut dv) = (DMatrix::zeros(nv, nv), DMatrix::zeros(nv, nv));
        js.forward_dynamics_jacobians(&mut data, 0.1, &q, &v, &mut dq, &mut dv)
            .unwrap();
        let fa = |qq: &[f64], vv: &[f64], out: &mut [f64]| {
            js.forward_dynamics(&mut js.data(), 0.1, qq, vv, out)
                .unwrap();
        };
        let fdq = fd_jacobian(|x, out| fa(x, &v, out), &q, nv);
        let fdv = fd_jacobian(|x, out| fa(&q, x, out), &v, nv);
        assert_matrix_close(&sys, &dq, &fdq, 1e-6, "closed loop ∂q''/∂q");
        assert_matrix_close(&sys, &dv, &fdv, 1e-6, "closed loop ∂q''/∂v");
    }
}

/// The joint-coordinate motion satisfies the body-coordinate equations of
/// motion: on a random tree with gravity, a point force, a spring-damper
/// and a rotational spring-actuator, the body accelerations ẍ of
/// q'' (by central differences of forward kinematics along the motion)
/// leave a residual M ẍ − Q(x, ẋ) that the joints can carry, Φ_xᵀ λ
/// (least squares residual ~ 0), and meet Φ_x ẍ = γ.
#[test]
fn joint_motion_satisfies_the_body_equations_with_every_force_element() {
    let mut seed = 21;
    let model = random_tree(6, &mut seed);
    assert_body_equations(&model, &mut seed);
}

/// Rotational springs across tree joints act on their coordinate
/// (joint_forces.rs), with the joint written either way round (φ = ±σq),
/// damping, an actuator and one-sided activity on both sides of the zero
/// angle: the motion satisfies the body equations, where the springs are
/// couple pairs on the bodies. In the small-tree path (3 coordinates)
/// and the articulated-body algorithm (5).
#[test]
fn rotational_springs_on_tree_joints_act_as_in_body_coordinates() {
    let mut seed = 5;
    for nb in [3, 5] {
        for reversed in [false, true] {
            let bodies = (0..nb)
                .map(|i| {
                    body(
                        &format!("b{i}"),
                        1.0 + 0.1 * i as f64,
                        0.05,
                        i as f64,
                        0.0,
                        0.0,
                    )
                })
                .collect();
            let joints = (0..nb)
                .map(|i| {
                    let parent = if i == 0 {
                        ground([0.0, 0.0])
                    } else {
                        on(i - 1, [0.5, 0.0])
                    };
                    let child = on(i, [-0.5, 0.0]);
                    let name = format!("j{i}");
                    if reversed && i % 2 == 1 {
                        revolute(&name, child, parent)
                    } else {
                        revolute(&name, parent, child)
                    }
                })
                .collect();
            let one_sided = [
                None,
                Some(jounce_model::OneSided::Compression),
                Some(jounce_model::OneSided::Tension),
            ];
            let forces = (0..nb)
                .map(|j| {
                    force(
                        &format!("k{j}"),
                        ForceKind::RotationalSpring {
                            joint: j,
                            stiffness: 10.0 + 2.0 * j as f64,
                            damping: 0.7,
                            zero_angle: 0.2 * noise(&mut seed),
                            actuator: Some(TimeFunction::Constant(0.3)),
                            one_sided: one_sided[j % 3],
                        },
                    )
                })
                .collect();
            let mut m = model("sprung chain", bodies, joints, vec![], forces);
            m.gravity = [0.0, -9.81];
            assert_body_equations(&m, &mut seed);
        }
    }
}

/// Joint-coordinate forward dynamics at a random state of `model`'s tree
/// satisfies the body equations M ẍ + Φ_xᵀ λ = Q, Φ_x ẍ = γ.
fn assert_body_equations(model: &Model, seed: &mut u64) {
    let sys = system(model);
    let js = PlanarJointSystem::new(&sys);
    let (nq, n) = (sys.nq(), js.nv());
    let mut data = js.data();
    let (q, v) = random_state(n, seed);
    let t = 0.4;
    let mut a = vec![0.0; n];
    js.forward_dynamics(&mut data, t, &q, &v, &mut a).unwrap();
    let h = 1e-5;
    let at = |s: f64, data: &mut jounce_mechanics::JointData| {
        let qs: Vec<f64> = (0..n)
            .map(|i| q[i] + v[i] * s + 0.5 * a[i] * s * s)
            .collect();
        let vs: Vec<f64> = (0..n).map(|i| v[i] + a[i] * s).collect();
        let (mut x, mut xd) = (vec![0.0; nq], vec![0.0; nq]);
        js.body_state(data, &qs, &vs, &mut x, &mut xd);
        (x, xd)
    };
    let (x, xd) = at(0.0, &mut data);
    let (_, xp) = at(h, &mut data);
    let (_, xm) = at(-h, &mut data);
    let xdd: Vec<f64> = (0..nq).map(|k| (xp[k] - xm[k]) / (2.0 * h)).collect();
    let mut m = DMatrix::zeros(nq, nq);
    sys.mass_matrix(&x, &mut m);
    let mut qf = vec![0.0; nq];
    sys.generalized_forces(t, &x, &xd, &mut qf);
    let r = &m * DVector::from_column_slice(&xdd) - DVector::from_column_slice(&qf);
    let mut jac = DMatrix::zeros(sys.nc(), nq);
    sys.constraint_jacobian(t, &x, &mut jac);
    // λ minimising |Φ_xᵀ λ − r|
    let jt = jac.transpose();
    let lambda = (&jac * &jt).lu().solve(&(&jac * &r)).unwrap();
    let res = &jt * lambda - &r;
    assert!(res.amax() < 1e-6 * (1.0 + r.amax()), "body residual {res}");
    let mut gamma = vec![0.0; sys.nc()];
    sys.gamma(t, &x, &xd, &mut gamma);
    let c = &jac * DVector::from_column_slice(&xdd);
    assert_close(c.as_slice(), &gamma, 1e-6, "Φ_x ẍ = γ");
}
