//! Checks of [`super::SpatialJointSystem`]: the three recursions against
//! each other (CRBA against RNEA columns, ABA against M⁻¹ f), the
//! joint-coordinate dynamics against the body-coordinate KKT dynamics of
//! the same [`SpatialSystem`], the round trip body state → joint state,
//! and energy conservation, on random trees (deterministic seeds).

use jounce_model::{
    BodyRef, SpatialAttachment, SpatialBody, SpatialForce, SpatialForceKind, SpatialFrame,
    SpatialJoint, SpatialJointKind, SpatialModel,
};
use nalgebra::{DMatrix, DVector, Matrix3, Vector3};

use super::*;
use crate::MechanicalSystem;

/// xorshift64*: a small deterministic generator.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [lo, hi).
    pub(crate) fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn vec3(&mut self, s: f64) -> [f64; 3] {
        [
            self.uniform(-s, s),
            self.uniform(-s, s),
            self.uniform(-s, s),
        ]
    }
    fn unit3(&mut self) -> [f64; 3] {
        loop {
            let v = self.vec3(1.0);
            let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
            if n > 0.2 && n < 1.0 {
                return v.map(|x| x / n);
            }
        }
    }
    fn quat(&mut self) -> [f64; 4] {
        loop {
            let p = [
                self.uniform(-1.0, 1.0),
                self.uniform(-1.0, 1.0),
                self.uniform(-1.0, 1.0),
                self.uniform(-1.0, 1.0),
            ];
            let n = p.iter().map(|x| x * x).sum::<f64>().sqrt();
            if n > 0.2 && n < 1.0 {
                return p.map(|x| x / n);
            }
        }
    }
}

/// Joint kinds of the random trees.
#[derive(Clone, Copy)]
pub(crate) enum Kinds {
    /// Revolute and prismatic only (what URDF has).
    RevolutePrismatic,
    /// Every tree kind: revolute, prismatic, cylindrical, universal,
    /// spherical, fixed.
    All,
    /// Spherical joints only.
    Spherical,
}

/// A random spatial tree of `n` bodies, each joined to ground or an
/// earlier body, assembled at the start (poses from the tree at zero
/// joint coordinates), with gravity; with `loads`, a point force, a body
/// torque and a spring-damper to ground.
pub(crate) fn random_tree(rng: &mut Rng, n: usize, kinds: Kinds, loads: bool) -> SpatialModel {
    let mut bodies: Vec<SpatialBody> = Vec::new();
    let mut joints = Vec::new();
    let mut poses: Vec<(Matrix3<f64>, Vector3<f64>)> = Vec::new();
    for i in 0..n {
        let parent = if i == 0 || rng.uniform(0.0, 1.0) < 0.15 {
            None
        } else if rng.uniform(0.0, 1.0) < 0.7 {
            Some(i - 1)
        } else {
            Some(rng.below(i))
        };
        let (ap, rp) = parent.map_or((Matrix3::identity(), Vector3::zeros()), |p| poses[p]);
        let rel = rot_of(&rng.quat());
        let ac = ap * rel;
        let s_p = rng.vec3(0.5);
        let s_c = rng.vec3(0.5);
        let rc = rp + ap * v3(&s_p) - ac * v3(&s_c);
        poses.push((ac, rc));
        let p = quat_of(&ac);
        let d: [f64; 3] = std::array::from_fn(|_| rng.uniform(0.5, 1.0));
        let qi = rot_of(&rng.quat());
        let j = qi * Matrix3::from_diagonal(&Vector3::new(d[0], d[1], d[2])) * qi.transpose();
        bodies.push(SpatialBody {
            name: format!("b{i}"),
            mass: rng.uniform(0.5, 2.0),
            inertia: std::array::from_fn(|r| std::array::from_fn(|c| j[(r, c)])),
            position: arr(&rc),
            orientation: p,
            velocity: [0.0; 3],
            angular_velocity: [0.0; 3],
            points: Vec::new(),
        });
        let body_ref = |b: Option<usize>| b.map_or(BodyRef::Ground, BodyRef::Body);
        let a = SpatialAttachment {
            body: body_ref(parent),
            point: s_p,
        };
        let b = SpatialAttachment {
            body: BodyRef::Body(i),
            point: s_c,
        };
        let axis_a = rng.unit3();
        let axis_b = arr(&(rel.transpose() * v3(&axis_a)));
        let pick = match kinds {
            Kinds::RevolutePrismatic => rng.below(2),
            Kinds::All => rng.below(6),
            Kinds::Spherical => 4,
        };
        let kind = match pick {
            0 => SpatialJointKind::Revolute {
                a,
                b,
                axis_a,
                axis_b,
            },
            1 => SpatialJointKind::Prismatic {
                a,
                b,
                axis_a,
                axis_b,
            },
            2 => SpatialJointKind::Cylindrical {
                a,
                b,
                axis_a,
                axis_b,
            },
            3 => {
                // axis_b ⊥ axis_a at the start
                let (f, _) = crate::spatial::revolute::perpendiculars(&axis_a);
                SpatialJointKind::Universal {
                    a,
                    b,
                    axis_a,
                    axis_b: arr(&(rel.transpose() * v3(&f))),
                }
            }
            4 => SpatialJointKind::Spherical { a, b },
            _ => {
                let frame_a: [[f64; 3]; 3] =
                    std::array::from_fn(|k| arr(&(ap.transpose() * Vector3::ith(k, 1.0))));
                let frame_b: [[f64; 3]; 3] =
                    std::array::from_fn(|k| arr(&(ac.transpose() * Vector3::ith(k, 1.0))));
                SpatialJointKind::Fixed {
                    a,
                    b,
                    frame_a,
                    frame_b,
                }
            }
        };
        // a third of the joints name the child first (body1 = child): the
        // tree must turn them round
        let kind = if rng.uniform(0.0, 1.0) < 0.3 {
            reversed(kind)
        } else {
            kind
        };
        joints.push(SpatialJoint {
            name: format!("j{i}"),
            kind,
        });
    }
    let mut forces = Vec::new();
    if loads {
        let k = rng.below(n);
        forces.push(SpatialForce {
            name: "push".into(),
            kind: SpatialForceKind::PointForce {
                at: SpatialAttachment {
                    body: BodyRef::Body(k),
                    point: rng.vec3(0.3),
                },
                force: rng.vec3(2.0),
                frame: SpatialFrame::Body,
            },
        });
        forces.push(SpatialForce {
            name: "twist".into(),
            kind: SpatialForceKind::Torque {
                body: rng.below(n),
                torque: rng.vec3(1.0),
                frame: SpatialFrame::World,
            },
        });
        forces.push(SpatialForce {
            name: "spring".into(),
            kind: SpatialForceKind::SpringDamper {
                a: SpatialAttachment {
                    body: BodyRef::Ground,
                    point: rng.vec3(1.0),
                },
                b: SpatialAttachment {
                    body: BodyRef::Body(rng.below(n)),
                    point: rng.vec3(0.3),
                },
                stiffness: 20.0,
                damping: 0.5,
                free_length: 0.3,
                actuator: None,
            },
        });
    }
    SpatialModel {
        gravity: [0.0, 0.5, -9.81],
        bodies,
        joints,
        forces,
        drivers: Vec::new(),
    }
}

/// The same joint with its two ends (and their axes or frames) swapped.
fn reversed(kind: SpatialJointKind) -> SpatialJointKind {
    use SpatialJointKind as K;
    match kind {
        K::Revolute {
            a,
            b,
            axis_a,
            axis_b,
        } => K::Revolute {
            a: b,
            b: a,
            axis_a: axis_b,
            axis_b: axis_a,
        },
        K::Prismatic {
            a,
            b,
            axis_a,
            axis_b,
        } => K::Prismatic {
            a: b,
            b: a,
            axis_a: axis_b,
            axis_b: axis_a,
        },
        K::Cylindrical {
            a,
            b,
            axis_a,
            axis_b,
        } => K::Cylindrical {
            a: b,
            b: a,
            axis_a: axis_b,
            axis_b: axis_a,
        },
        K::Universal {
            a,
            b,
            axis_a,
            axis_b,
        } => K::Universal {
            a: b,
            b: a,
            axis_a: axis_b,
            axis_b: axis_a,
        },
        K::Spherical { a, b } => K::Spherical { a: b, b: a },
        K::Fixed {
            a,
            b,
            frame_a,
            frame_b,
        } => K::Fixed {
            a: b,
            b: a,
            frame_a: frame_b,
            frame_b: frame_a,
        },
        other => other,
    }
}

fn random_state(rng: &mut Rng, n: usize) -> (Vec<f64>, Vec<f64>) {
    (
        (0..n).map(|_| rng.uniform(-1.0, 1.0)).collect(),
        (0..n).map(|_| rng.uniform(-1.0, 1.0)).collect(),
    )
}

fn max_abs(x: impl IntoIterator<Item = f64>) -> f64 {
    x.into_iter().fold(0.0, |m: f64, v| m.max(v.abs()))
}

fn system(model: &SpatialModel) -> (SpatialSystem, SpatialJointSystem) {
    let sys = SpatialSystem::from_spatial(model).unwrap();
    let js = SpatialJointSystem::new(&sys);
    assert!(js.unsupported.is_none(), "{:?}", js.unsupported);
    (sys, js)
}

/// (a) CRBA against RNEA: M e_i = τ(a = e_i) − τ(a = 0), column by
/// column, to 1e-12 relative to max |M|.
#[test]
fn crba_mass_matrix_equals_rnea_columns() {
    let mut rng = Rng::new(1);
    let mut worst: f64 = 0.0;
    for n in [1, 2, 3, 5, 8, 13, 21, 34, 50] {
        let model = random_tree(&mut rng, n, Kinds::All, true);
        let (_, js) = system(&model);
        let nd = js.nv();
        let mut data = js.data();
        let (q, v) = random_joint_state(&mut rng, &js);
        let mut m = DMatrix::zeros(nd, nd);
        js.mass_matrix(&mut data, &q, &mut m);
        let (mut t0, mut t1) = (vec![0.0; nd], vec![0.0; nd]);
        js.inverse_dynamics(&mut data, 0.3, &q, &v, &vec![0.0; nd], &mut t0);
        let scale = max_abs(m.iter().copied()).max(1.0);
        for i in 0..nd {
            let mut e = vec![0.0; nd];
            e[i] = 1.0;
            js.inverse_dynamics(&mut data, 0.3, &q, &v, &e, &mut t1);
            for k in 0..nd {
                let err = (m[(k, i)] - (t1[k] - t0[k])).abs() / scale;
                worst = worst.max(err);
            }
        }
        assert!(worst < 1e-12, "n = {n}: {worst:e}");
        // symmetric and positive definite
        assert!(m.clone().cholesky().is_some(), "n = {n}: M not SPD");
    }
    eprintln!("CRBA vs RNEA columns: worst relative difference {worst:e}");
}

/// (b) ABA against M⁻¹ f (CRBA and RNEA) on random trees of 1..50 bodies
/// with every joint kind, random inertias and states, to 1e-10.
#[test]
fn aba_equals_crba_rnea_solve() {
    let mut rng = Rng::new(2);
    let mut worst: f64 = 0.0;
    for n in 1..=50 {
        let model = random_tree(&mut rng, n, Kinds::All, n % 2 == 0);
        let (_, js) = system(&model);
        let nd = js.nv();
        let mut data = js.data();
        let (q, v) = random_joint_state(&mut rng, &js);
        let mut a = vec![0.0; nd];
        js.forward_dynamics(&mut data, 0.1, &q, &v, &mut a).unwrap();
        let mut m = DMatrix::zeros(nd, nd);
        js.mass_matrix(&mut data, &q, &mut m);
        let mut f = vec![0.0; nd];
        js.bias_forces(&mut data, 0.1, &q, &v, &mut f);
        let x = m.lu().solve(&DVector::from_vec(f)).unwrap();
        let scale = max_abs(x.iter().copied()).max(1.0);
        let err = max_abs((0..nd).map(|i| a[i] - x[i])) / scale;
        worst = worst.max(err);
        assert!(err < 1e-10, "n = {n}: {err:e}");
    }
    eprintln!("ABA vs CRBA/RNEA solve: worst relative difference {worst:e}");
}

/// (c) The joint-coordinate forward dynamics mapped to body accelerations
/// equal the body-coordinate KKT forward dynamics of the same
/// [`SpatialSystem`] at the body state of forward kinematics:
/// [M Φ_xᵀ; Φ_x 0][ẍ; λ] = [Q; γ], to 1e-10.
#[test]
fn joint_dynamics_equals_body_kkt_dynamics() {
    let mut rng = Rng::new(3);
    let mut worst: f64 = 0.0;
    for n in [1, 2, 3, 4, 6, 9, 12, 16, 20] {
        let model = random_tree(&mut rng, n, Kinds::All, true);
        let (sys, js) = system(&model);
        let nd = js.nv();
        let mut data = js.data();
        let (q, v) = random_joint_state(&mut rng, &js);
        let mut a = vec![0.0; nd];
        js.forward_dynamics(&mut data, 0.2, &q, &v, &mut a).unwrap();
        let (nq, nv, nc) = (sys.nq(), sys.nv(), sys.nc());
        let (mut x, mut xd, mut xdd) = (vec![0.0; nq], vec![0.0; nv], vec![0.0; nv]);
        js.body_state(&mut data, &q, &v, &mut x, &mut xd);
        js.body_acceleration(&mut data, &q, &v, &a, &mut xdd);
        // the body state satisfies the joints
        let mut phi = vec![0.0; nc];
        sys.constraints(0.2, &x, &mut phi);
        assert!(max_abs(phi.iter().copied()) < 1e-12, "n = {n}: Φ = {phi:?}");
        let mut m = DMatrix::zeros(nv, nv);
        sys.mass_matrix(&x, &mut m);
        let mut qf = vec![0.0; nv];
        sys.generalized_forces(0.2, &x, &xd, &mut qf);
        let mut jac = DMatrix::zeros(nc, nv);
        sys.constraint_jacobian(0.2, &x, &mut jac);
        let mut gamma = vec![0.0; nc];
        sys.gamma(0.2, &x, &xd, &mut gamma);
        // the joint velocities satisfy the body velocity constraints
        let jv = &jac * DVector::from_column_slice(&xd);
        assert!(max_abs(jv.iter().copied()) < 1e-12, "n = {n}: Φ_q v = {jv}");
        let mut k = DMatrix::zeros(nv + nc, nv + nc);
        k.view_mut((0, 0), (nv, nv)).copy_from(&m);
        k.view_mut((nv, 0), (nc, nv)).copy_from(&jac);
        k.view_mut((0, nv), (nv, nc)).copy_from(&jac.transpose());
        let rhs = DVector::from_iterator(nv + nc, qf.iter().chain(&gamma).copied());
        let sol = k.full_piv_lu().solve(&rhs).unwrap();
        let scale = max_abs(sol.rows(0, nv).iter().copied()).max(1.0);
        let err = max_abs((0..nv).map(|i| sol[i] - xdd[i])) / scale;
        worst = worst.max(err);
        assert!(err < 1e-10, "n = {n}: {err:e}");
    }
    eprintln!("joint vs body KKT accelerations: worst relative difference {worst:e}");
}

/// joint_state inverts body_state (positions and rates), and a body state
/// off a joint is refused naming the joint.
#[test]
fn joint_state_round_trip_and_inconsistency() {
    let mut rng = Rng::new(4);
    for n in [1, 3, 7, 15] {
        let model = random_tree(&mut rng, n, Kinds::All, false);
        let (sys, js) = system(&model);
        let nd = js.nv();
        let mut data = js.data();
        let (q, v) = random_joint_state(&mut rng, &js);
        let (mut x, mut xd) = (vec![0.0; sys.nq()], vec![0.0; sys.nv()]);
        js.body_state(&mut data, &q, &v, &mut x, &mut xd);
        let (mut q2, mut v2) = (vec![0.0; js.nq()], vec![0.0; nd]);
        js.joint_state(&mut data, &x, &xd, 1e-10, &mut q2, &mut v2)
            .unwrap();
        let dq = position_difference(&js, &q, &q2);
        assert!(dq < 1e-10, "n = {n}: {dq:e}");
        for i in 0..nd {
            assert!((v[i] - v2[i]).abs() < 1e-9, "{}", js.coordinate_label(i));
        }
        x[NQ_BODY * (n - 1)] += 0.01;
        let err = js
            .joint_state(&mut data, &x, &xd, 1e-8, &mut q2, &mut v2)
            .unwrap_err();
        assert!(
            matches!(&err, JointSpaceError::Inconsistent { joint, .. } if joint.contains("j")),
            "{err}"
        );
    }
}

/// A random tree whose joints to ground are removed: every body that was
/// joined to ground becomes the root of a floating tree (a free joint),
/// with the loads and gravity of [`random_tree`].
fn floating(rng: &mut Rng, n: usize) -> SpatialModel {
    let mut model = random_tree(rng, n, Kinds::All, true);
    model.joints.retain(|j| {
        let (a, b) = j.kind.attachments();
        a.body != BodyRef::Ground && b.body != BodyRef::Ground
    });
    model
}

/// A random joint state (q, v) of `js`, its quaternions unit (q ⊕ 0).
fn random_joint_state(rng: &mut Rng, js: &SpatialJointSystem) -> (Vec<f64>, Vec<f64>) {
    let (q, v) = (random_state(rng, js.nq()).0, random_state(rng, js.nv()).1);
    let mut out = vec![0.0; js.nq()];
    js.integrate_position(&q, &vec![0.0; js.nv()], &mut out);
    (out, v)
}

/// max |q − q2| over the joint positions, the unit quaternions of free
/// and spherical joints up to sign (p and −p are the same orientation).
fn position_difference(js: &SpatialJointSystem, q: &[f64], q2: &[f64]) -> f64 {
    let mut worst: f64 = 0.0;
    for nd in &js.nodes {
        let Some(k) = nd.qdof else { continue };
        let (pos, quat) = match nd.kind {
            NodeKind::Free => (k..k + 3, k + 3..k + 7),
            NodeKind::Spherical => (k..k, k..k + 4),
            _ => (k..k + 1, k..k),
        };
        for i in pos {
            worst = worst.max((q[i] - q2[i]).abs());
        }
        let same = max_abs(quat.clone().map(|i| q[i] - q2[i]));
        let flip = max_abs(quat.map(|i| q[i] + q2[i]));
        worst = worst.max(same.min(flip));
    }
    worst
}

/// The joint positions of the model's initial configuration: every
/// coordinate zero, every spherical joint's quaternion (1, 0, 0, 0).
fn zero_configuration(js: &SpatialJointSystem) -> Vec<f64> {
    let mut q = vec![0.0; js.nq()];
    for nd in &js.nodes {
        if let (NodeKind::Spherical, Some(k)) = (nd.kind, nd.qdof) {
            q[k] = 1.0;
        }
    }
    q
}

/// A body not joined to ground is the root of its own tree through a
/// free joint (RBDA sec. 4.5): 7 positions, 6 rates each.
#[test]
fn free_bodies_get_a_free_joint() {
    let mut rng = Rng::new(5);
    let mut model = random_tree(&mut rng, 2, Kinds::RevolutePrismatic, false);
    model.joints.remove(1);
    let (sys, js) = system(&model);
    assert_eq!(js.nv(), 1 + 6);
    assert_eq!(js.nq(), 1 + 7);
    let labels: Vec<String> = (0..js.nv()).map(|i| js.coordinate_label(i)).collect();
    assert!(labels[1].contains("free joint of body 'b1'"), "{labels:?}");
    let mut data = js.data();
    let (x, xd) = sys.initial_state();
    let (mut q, mut v) = (vec![0.0; js.nq()], vec![0.0; js.nv()]);
    js.joint_state(&mut data, &x, &xd, 1e-10, &mut q, &mut v)
        .unwrap();
    assert_eq!(&q[1..8], &x[7..14]);
}

/// (d) Free-floating trees (free roots with children of every joint
/// kind, loads, gravity): the articulated-body algorithm with a floating
/// base (RBDA sec. 9.3) equals M⁻¹ f (CRBA, RNEA), and its body
/// accelerations equal the body-coordinate KKT dynamics
/// [M Φ_xᵀ; Φ_x 0][ẍ; λ] = [Q; γ], both to 1e-10; joint_state inverts
/// body_state.
#[test]
fn floating_trees_match_crba_rnea_and_the_body_kkt_dynamics() {
    let mut rng = Rng::new(11);
    let (mut worst_aba, mut worst_kkt): (f64, f64) = (0.0, 0.0);
    for n in [1, 2, 3, 4, 6, 9, 12, 16, 20] {
        let model = floating(&mut rng, n);
        let (sys, js) = system(&model);
        assert!(js.nq() > js.nv(), "n = {n}: a free root");
        let nd = js.nv();
        let mut data = js.data();
        let (q, v) = random_joint_state(&mut rng, &js);
        let mut a = vec![0.0; nd];
        js.forward_dynamics(&mut data, 0.2, &q, &v, &mut a).unwrap();
        // ABA against CRBA / RNEA
        let mut m = DMatrix::zeros(nd, nd);
        js.mass_matrix(&mut data, &q, &mut m);
        assert!(m.clone().cholesky().is_some(), "n = {n}: M not SPD");
        let mut f = vec![0.0; nd];
        js.bias_forces(&mut data, 0.2, &q, &v, &mut f);
        let x = m.lu().solve(&DVector::from_vec(f)).unwrap();
        let scale = max_abs(x.iter().copied()).max(1.0);
        let err = max_abs((0..nd).map(|i| a[i] - x[i])) / scale;
        worst_aba = worst_aba.max(err);
        assert!(err < 1e-10, "n = {n}: ABA vs CRBA/RNEA {err:e}");
        // body accelerations against the body KKT system
        let (nq, nv, nc) = (sys.nq(), sys.nv(), sys.nc());
        let (mut x, mut xd, mut xdd) = (vec![0.0; nq], vec![0.0; nv], vec![0.0; nv]);
        js.body_state(&mut data, &q, &v, &mut x, &mut xd);
        js.body_acceleration(&mut data, &q, &v, &a, &mut xdd);
        let mut phi = vec![0.0; nc];
        sys.constraints(0.2, &x, &mut phi);
        assert!(max_abs(phi.iter().copied()) < 1e-12, "n = {n}: Φ = {phi:?}");
        let mut mb = DMatrix::zeros(nv, nv);
        sys.mass_matrix(&x, &mut mb);
        let mut qf = vec![0.0; nv];
        sys.generalized_forces(0.2, &x, &xd, &mut qf);
        let mut jac = DMatrix::zeros(nc, nv);
        sys.constraint_jacobian(0.2, &x, &mut jac);
        let mut gamma = vec![0.0; nc];
        sys.gamma(0.2, &x, &xd, &mut gamma);
        let mut k = DMatrix::zeros(nv + nc, nv + nc);
        k.view_mut((0, 0), (nv, nv)).copy_from(&mb);
        k.view_mut((nv, 0), (nc, nv)).copy_from(&jac);
        k.view_mut((0, nv), (nv, nc)).copy_from(&jac.transpose());
        let rhs = DVector::from_iterator(nv + nc, qf.iter().chain(&gamma).copied());
        let sol = k.full_piv_lu().solve(&rhs).unwrap();
        let scale = max_abs(sol.rows(0, nv).iter().copied()).max(1.0);
        let err = max_abs((0..nv).map(|i| sol[i] - xdd[i])) / scale;
        worst_kkt = worst_kkt.max(err);
        assert!(err < 1e-10, "n = {n}: joint vs body KKT {err:e}");
        // round trip
        let (mut q2, mut v2) = (vec![0.0; js.nq()], vec![0.0; nd]);
        js.joint_state(&mut data, &x, &xd, 1e-10, &mut q2, &mut v2)
            .unwrap();
        let dq = position_difference(&js, &q, &q2);
        assert!(dq < 1e-10, "n = {n}: {dq:e}");
        for i in 0..nd {
            assert!((v[i] - v2[i]).abs() < 1e-9, "{}", js.coordinate_label(i));
        }
    }
    eprintln!("floating trees: ABA vs CRBA/RNEA {worst_aba:e}, joint vs body KKT {worst_kkt:e}");
}

/// q' = T(q) v is the derivative of the retraction: d/ds (q ⊕ s v) at
/// s = 0 (central differences, to 1e-8), and q ⊕ 0 has unit quaternions.
#[test]
fn position_derivative_is_the_derivative_of_the_retraction() {
    let mut rng = Rng::new(12);
    // a floating tree with free and spherical joints
    let js = (0..50)
        .map(|_| system(&floating(&mut rng, 6)).1)
        .find(|js| js.nodes.iter().any(|nd| nd.kind == NodeKind::Spherical))
        .expect("a spherical joint among 50 random floating trees");
    let (nq, nv) = (js.nq(), js.nv());
    let (q, v) = random_state(&mut rng, nq.max(nv));
    let (q, v) = (&q[..nq], &v[..nv]);
    let mut q0 = vec![0.0; nq];
    js.integrate_position(q, &vec![0.0; nv], &mut q0);
    let mut qdot = vec![0.0; nq];
    js.position_derivative(&q0, v, &mut qdot);
    let h = 1e-5;
    let (mut qp, mut qm) = (vec![0.0; nq], vec![0.0; nq]);
    let dp: Vec<f64> = v.iter().map(|x| x * h).collect();
    let dm: Vec<f64> = v.iter().map(|x| -x * h).collect();
    js.integrate_position(&q0, &dp, &mut qp);
    js.integrate_position(&q0, &dm, &mut qm);
    let err = max_abs((0..nq).map(|i| (qp[i] - qm[i]) / (2.0 * h) - qdot[i]));
    assert!(err < 1e-8, "{err:e}");
    let mut quaternions = 0;
    let mut spherical = 0;
    for nd in &js.nodes {
        let k = match (nd.kind, nd.qdof) {
            (NodeKind::Free, Some(k)) => k + 3,
            (NodeKind::Spherical, Some(k)) => {
                spherical += 1;
                k
            }
            _ => continue,
        };
        let norm = q0[k..k + 4].iter().map(|x| x * x).sum::<f64>().sqrt();
        assert!((norm - 1.0).abs() < 1e-15);
        quaternions += 1;
    }
    assert!(
        quaternions > 0 && spherical > 0,
        "{quaternions} {spherical}"
    );
}

/// A random tree closed by a spherical joint from its last body to ground
/// and a distance joint between its first and last bodies, both
/// satisfied at the start (the zero joint coordinates).
fn looped(rng: &mut Rng, n: usize) -> SpatialModel {
    let mut model = random_tree(rng, n, Kinds::All, true);
    let world = |m: &SpatialModel, b: usize, s: [f64; 3]| {
        let body = &m.bodies[b];
        let a = rot_of(&body.orientation);
        v3(&body.position) + a * v3(&s)
    };
    let s = rng.vec3(0.3);
    let p = world(&model, n - 1, s);
    model.joints.push(SpatialJoint {
        name: "loop_ball".into(),
        kind: SpatialJointKind::Spherical {
            a: SpatialAttachment {
                body: BodyRef::Ground,
                point: arr(&p),
            },
            b: SpatialAttachment {
                body: BodyRef::Body(n - 1),
                point: s,
            },
        },
    });
    let (s0, s1) = (rng.vec3(0.3), rng.vec3(0.3));
    let length = (world(&model, 0, s0) - world(&model, n / 2, s1)).norm();
    model.joints.push(SpatialJoint {
        name: "loop_rod".into(),
        kind: SpatialJointKind::Distance {
            a: SpatialAttachment {
                body: BodyRef::Body(0),
                point: s0,
            },
            b: SpatialAttachment {
                body: BodyRef::Body(n / 2),
                point: s1,
            },
            length,
        },
    });
    model
}

/// Closed loops: the cut joints' closure constraints hold at the start,
/// Φ_q and γ agree with central differences of Φ along the motion, and
/// the KKT forward dynamics in joint coordinates, mapped to body
/// accelerations, equal the body-coordinate KKT dynamics (to 1e-10).
#[test]
fn closed_loops_by_cut_joints_match_the_body_kkt_dynamics() {
    let mut rng = Rng::new(8);
    let mut worst: f64 = 0.0;
    for n in [3, 5, 8, 12] {
        // a random tree whose closure rows are independent at the start
        // (a short path to ground may leave the ball fewer than 3 degrees
        // of freedom: redundant rows, a singular KKT matrix)
        let (sys, js) = (0..50)
            .find_map(|_| {
                let (sys, js) = system(&looped(&mut rng, n));
                let mut data = js.data();
                let mut jac = DMatrix::zeros(js.nc(), js.nv());
                js.constraint_jacobian(&mut data, 0.0, &zero_configuration(&js), &mut jac);
                let sv = jac.singular_values();
                (js.nc() <= js.nv() && sv.min() > 1e-3 * sv.max()).then_some((sys, js))
            })
            .expect("a regular loop among 50 random trees");
        let (nd, m) = (js.nv(), js.nc());
        // the breadth-first tree from ground may take the ball into the
        // tree and cut the last body's own joint instead; the rod is cut
        assert!(m >= 4, "{m}");
        assert!(js.constraint_label(m - 1).contains("loop_rod"));
        let mut data = js.data();
        let q = zero_configuration(&js);
        let mut phi = vec![0.0; m];
        js.constraints(&mut data, 0.0, &q, &mut phi);
        assert!(max_abs(phi.iter().copied()) < 1e-12, "Φ(0) = {phi:?}");
        let mut jac = DMatrix::zeros(m, nd);
        js.constraint_jacobian(&mut data, 0.0, &q, &mut jac);
        // v in the null space of Φ_q
        let vr = DVector::from_iterator(nd, (0..nd).map(|_| rng.uniform(-1.0, 1.0)));
        let jt = jac.transpose();
        let y = (&jac * &jt).lu().solve(&(&jac * &vr)).unwrap();
        let v: Vec<f64> = (vr - jt * y).iter().copied().collect();
        // Φ_q and γ against differences of Φ along q ⊕ s v (a motion at
        // constant rates: spherical joints turn at a constant ω')
        let h = 1e-4;
        let (mut pp, mut pm) = (vec![0.0; m], vec![0.0; m]);
        let qs = |s: f64| -> Vec<f64> {
            let d: Vec<f64> = v.iter().map(|x| s * x).collect();
            let mut out = vec![0.0; js.nq()];
            js.integrate_position(&q, &d, &mut out);
            out
        };
        js.constraints(&mut data, 0.0, &qs(h), &mut pp);
        js.constraints(&mut data, 0.0, &qs(-h), &mut pm);
        let mut gamma = vec![0.0; m];
        js.gamma(&mut data, 0.0, &q, &v, &mut gamma);
        for r in 0..m {
            let d1 = (pp[r] - pm[r]) / (2.0 * h);
            let d2 = (pp[r] - 2.0 * phi[r] + pm[r]) / (h * h);
            let jv: f64 = (0..nd).map(|j| jac[(r, j)] * v[j]).sum();
            assert!((d1 - jv).abs() < 1e-7, "row {r}: {d1} vs {jv}");
            assert!(
                (d2 + gamma[r]).abs() < 1e-5,
                "row {r}: {d2} vs {}",
                -gamma[r]
            );
        }
        // the dynamics against the body KKT system
        let mut a = vec![0.0; nd];
        js.forward_dynamics(&mut data, 0.2, &q, &v, &mut a).unwrap();
        let (nv, nc) = (sys.nv(), sys.nc());
        let (mut x, mut xd, mut xdd) = (vec![0.0; sys.nq()], vec![0.0; nv], vec![0.0; nv]);
        js.body_state(&mut data, &q, &v, &mut x, &mut xd);
        js.body_acceleration(&mut data, &q, &v, &a, &mut xdd);
        let mut mm = DMatrix::zeros(nv, nv);
        sys.mass_matrix(&x, &mut mm);
        let mut qf = vec![0.0; nv];
        sys.generalized_forces(0.2, &x, &xd, &mut qf);
        let mut bj = DMatrix::zeros(nc, nv);
        sys.constraint_jacobian(0.2, &x, &mut bj);
        let mut bg = vec![0.0; nc];
        sys.gamma(0.2, &x, &xd, &mut bg);
        // the body KKT system with the redundant tree rows removed: the
        // least-squares (minimum-norm) solution of the consistent system
        let mut k = DMatrix::zeros(nv + nc, nv + nc);
        k.view_mut((0, 0), (nv, nv)).copy_from(&mm);
        k.view_mut((nv, 0), (nc, nv)).copy_from(&bj);
        k.view_mut((0, nv), (nv, nc)).copy_from(&bj.transpose());
        let rhs = DVector::from_iterator(nv + nc, qf.iter().chain(&bg).copied());
        let sol = k.svd(true, true).solve(&rhs, 1e-11).unwrap();
        let scale = max_abs(sol.rows(0, nv).iter().copied()).max(1.0);
        let err = max_abs((0..nv).map(|i| sol[i] - xdd[i])) / scale;
        worst = worst.max(err);
        assert!(err < 1e-10, "n = {n}: {err:e}");
        // the finite-difference Jacobians of the KKT dynamics (smoke)
        let (mut dq, mut dv) = (DMatrix::zeros(nd, js.nq()), DMatrix::zeros(nd, nd));
        js.forward_dynamics_jacobians(&mut data, 0.2, &q, &v, &mut dq, &mut dv)
            .unwrap();
        let j = nd - 1;
        let mut v1 = v.clone();
        v1[j] += 1e-5;
        let mut a1 = vec![0.0; nd];
        js.forward_dynamics(&mut data, 0.2, &q, &v1, &mut a1)
            .unwrap();
        for i in 0..nd {
            let fd = (a1[i] - a[i]) / 1e-5;
            assert!(
                (fd - dv[(i, j)]).abs() < 1e-3 * (1.0 + fd.abs()),
                "{i}: {fd} vs {}",
                dv[(i, j)]
            );
        }
    }
    eprintln!("closed loops, joint KKT vs body KKT accelerations: worst {worst:e}");
}

/// (d) A conservative tree (gravity only) keeps its total energy over a
/// short classical Runge–Kutta run (h = 1e-3, 0.5 s) to 1e-8 relative.
#[test]
fn conservative_tree_keeps_its_energy() {
    let mut rng = Rng::new(6);
    let model = random_tree(&mut rng, 6, Kinds::All, false);
    let (sys, js) = system(&model);
    let (nq, nd) = (js.nq(), js.nv());
    let mut data = js.data();
    let (mut q, mut v) = random_joint_state(&mut rng, &js);
    let (mut x, mut xd) = (vec![0.0; sys.nq()], vec![0.0; sys.nv()]);
    let mut energy = |q: &[f64], v: &[f64], data: &mut JointData| {
        js.body_state(data, q, v, &mut x, &mut xd);
        sys.kinetic_energy(&x, &xd) + sys.potential_energy(0.0, &x)
    };
    let e0 = energy(&q, &v, &mut data);
    let h = 1e-3;
    let f = |q: &[f64], v: &[f64], data: &mut JointData| {
        let mut a = vec![0.0; nd];
        js.forward_dynamics(data, 0.0, q, v, &mut a).unwrap();
        let mut qdot = vec![0.0; nq];
        js.position_derivative(q, v, &mut qdot);
        (qdot, a)
    };
    let axpy = |x: &[f64], s: f64, d: &[f64]| -> Vec<f64> {
        x.iter().zip(d).map(|(x, d)| x + s * d).collect()
    };
    for _ in 0..500 {
        let (k1q, k1v) = f(&q, &v, &mut data);
        let (k2q, k2v) = f(
            &axpy(&q, h / 2.0, &k1q),
            &axpy(&v, h / 2.0, &k1v),
            &mut data,
        );
        let (k3q, k3v) = f(
            &axpy(&q, h / 2.0, &k2q),
            &axpy(&v, h / 2.0, &k2v),
            &mut data,
        );
        let (k4q, k4v) = f(&axpy(&q, h, &k3q), &axpy(&v, h, &k3v), &mut data);
        for i in 0..nq {
            q[i] += h / 6.0 * (k1q[i] + 2.0 * k2q[i] + 2.0 * k3q[i] + k4q[i]);
        }
        for i in 0..nd {
            v[i] += h / 6.0 * (k1v[i] + 2.0 * k2v[i] + 2.0 * k3v[i] + k4v[i]);
        }
    }
    let e1 = energy(&q, &v, &mut data);
    let rel = (e1 - e0).abs() / e0.abs().max(1.0);
    eprintln!("energy drift over 0.5 s (RK4, h = 1e-3): {rel:e}");
    assert!(rel < 1e-8, "E0 = {e0}, E1 = {e1}, {rel:e}");
}

/// The finite-difference Jacobians agree with a coarser difference of the
/// same dynamics (a smoke test of the stopgap: indices and signs).
#[test]
fn finite_difference_jacobians_are_consistent() {
    let mut rng = Rng::new(7);
    let model = random_tree(&mut rng, 4, Kinds::All, true);
    let (_, js) = system(&model);
    let (nq, nd) = (js.nq(), js.nv());
    let mut data = js.data();
    let (q, v) = random_joint_state(&mut rng, &js);
    let (mut dq, mut dv) = (DMatrix::zeros(nd, nq), DMatrix::zeros(nd, nd));
    js.forward_dynamics_jacobians(&mut data, 0.0, &q, &v, &mut dq, &mut dv)
        .unwrap();
    let (mut a0, mut a1) = (vec![0.0; nd], vec![0.0; nd]);
    let h = 1e-5;
    for j in 0..nq {
        let mut q1 = q.clone();
        q1[j] += h;
        let mut q0 = q.clone();
        q0[j] -= h;
        js.forward_dynamics(&mut data, 0.0, &q1, &v, &mut a1)
            .unwrap();
        js.forward_dynamics(&mut data, 0.0, &q0, &v, &mut a0)
            .unwrap();
        for i in 0..nd {
            let fd = (a1[i] - a0[i]) / (2.0 * h);
            assert!((fd - dq[(i, j)]).abs() < 1e-5 * (1.0 + fd.abs()), "{i},{j}");
        }
    }
    let mut k = DMatrix::zeros(nd, nq);
    let mut c = DMatrix::zeros(nd, nd);
    let a = vec![0.3; nd];
    js.inverse_dynamics_jacobians(&mut data, 0.0, &q, &v, &a, &mut k, &mut c);
    // C = ∂τ/∂v = −∂f/∂v; with a = M⁻¹(τ + f): ∂a/∂v = −M⁻¹ C at τ fixed
    let mut m = DMatrix::zeros(nd, nd);
    js.mass_matrix(&mut data, &q, &mut m);
    let mc = m.lu().solve(&c).unwrap();
    for i in 0..nd {
        for j in 0..nd {
            assert!((mc[(i, j)] + dv[(i, j)]).abs() < 1e-6 * (1.0 + dv[(i, j)].abs()));
        }
    }
}

/// The body accelerations of the joint state (q, v) with joint
/// accelerations `a`, against the body-coordinate KKT dynamics
/// [M Φ_xᵀ; Φ_x 0][ẍ; λ] = [Q; γ] at the body state of forward kinematics
/// (relative difference); asserts that the body state satisfies the
/// joints (positions and velocities, to 1e-12).
fn body_kkt_difference(
    sys: &SpatialSystem,
    js: &SpatialJointSystem,
    data: &mut JointData,
    t: f64,
    (q, v, a): (&[f64], &[f64], &[f64]),
) -> f64 {
    let (nq, nv, nc) = (sys.nq(), sys.nv(), sys.nc());
    let (mut x, mut xd, mut xdd) = (vec![0.0; nq], vec![0.0; nv], vec![0.0; nv]);
    js.body_state(data, q, v, &mut x, &mut xd);
    js.body_acceleration(data, q, v, a, &mut xdd);
    let mut phi = vec![0.0; nc];
    sys.constraints(t, &x, &mut phi);
    assert!(max_abs(phi.iter().copied()) < 1e-12, "Φ = {phi:?}");
    let mut m = DMatrix::zeros(nv, nv);
    sys.mass_matrix(&x, &mut m);
    let mut qf = vec![0.0; nv];
    sys.generalized_forces(t, &x, &xd, &mut qf);
    let mut jac = DMatrix::zeros(nc, nv);
    sys.constraint_jacobian(t, &x, &mut jac);
    let jv = &jac * DVector::from_column_slice(&xd);
    assert!(max_abs(jv.iter().copied()) < 1e-12, "Φ_q v = {jv}");
    let mut gamma = vec![0.0; nc];
    sys.gamma(t, &x, &xd, &mut gamma);
    let mut k = DMatrix::zeros(nv + nc, nv + nc);
    k.view_mut((0, 0), (nv, nv)).copy_from(&m);
    k.view_mut((nv, 0), (nc, nv)).copy_from(&jac);
    k.view_mut((0, nv), (nv, nc)).copy_from(&jac.transpose());
    let rhs = DVector::from_iterator(nv + nc, qf.iter().chain(&gamma).copied());
    let sol = k.full_piv_lu().solve(&rhs).unwrap();
    let scale = max_abs(sol.rows(0, nv).iter().copied()).max(1.0);
    max_abs((0..nv).map(|i| sol[i] - xdd[i])) / scale
}

/// Spherical joints (unit quaternions) at the orientation where the
/// former three Cardan angles about a joint frame E = [e₁ e₂ e₃] (e₃
/// towards the child's centre of mass) were singular, W = E R_x(a)
/// R_y(90°) R_z(c) Eᵀ, the second angle at 90° (checked: (EᵀWE)₁₃ = 1):
/// chains and trees of spherical joints, random rates and loads; the
/// articulated-body algorithm equals M⁻¹ f (CRBA, RNEA), its body
/// accelerations equal the body-coordinate KKT dynamics, both to 1e-10,
/// and joint_state inverts body_state there.
#[test]
fn spherical_joints_at_the_former_cardan_singularity_are_regular() {
    let mut rng = Rng::new(9);
    let (mut worst_aba, mut worst_kkt): (f64, f64) = (0.0, 0.0);
    for n in [1, 2, 3, 5, 8, 13] {
        let model = random_tree(&mut rng, n, Kinds::Spherical, true);
        let (sys, js) = system(&model);
        assert_eq!((js.nq(), js.nv()), (4 * n, 3 * n));
        let (mut q, v) = random_joint_state(&mut rng, &js);
        for j in &js.joints {
            assert_eq!(j.kind, TreeKind::Spherical);
            let d = -(j.a0 * v3(&j.s_c));
            let e3 = if d.norm() > 1e-12 {
                d.normalize()
            } else {
                Vector3::z()
            };
            let (e1, e2) = crate::spatial::revolute::perpendiculars(&arr(&e3));
            let e = Matrix3::from_columns(&[v3(&e1), v3(&e2), e3]);
            let r = |axis: [f64; 3], angle: f64| rot_of(&axis_angle(&axis, angle));
            let cardan = r([1.0, 0.0, 0.0], rng.uniform(-3.0, 3.0))
                * r([0.0, 1.0, 0.0], std::f64::consts::FRAC_PI_2)
                * r([0.0, 0.0, 1.0], rng.uniform(-3.0, 3.0));
            let w = e * cardan * e.transpose();
            assert!(((e.transpose() * w * e)[(0, 2)] - 1.0).abs() < 1e-12);
            // A_C = A_P W A₀ (the Cardan joint) = A_P A₀ R(p)
            let p = quat_of(&(j.a0.transpose() * w * j.a0));
            q[j.first_q..j.first_q + 4].copy_from_slice(&p);
        }
        let nd = js.nv();
        let mut data = js.data();
        let mut a = vec![0.0; nd];
        js.forward_dynamics(&mut data, 0.4, &q, &v, &mut a).unwrap();
        let mut m = DMatrix::zeros(nd, nd);
        js.mass_matrix(&mut data, &q, &mut m);
        assert!(m.clone().cholesky().is_some(), "n = {n}: M not SPD");
        let mut f = vec![0.0; nd];
        js.bias_forces(&mut data, 0.4, &q, &v, &mut f);
        let x = m.lu().solve(&DVector::from_vec(f)).unwrap();
        let scale = max_abs(x.iter().copied()).max(1.0);
        let err = max_abs((0..nd).map(|i| a[i] - x[i])) / scale;
        worst_aba = worst_aba.max(err);
        assert!(err < 1e-10, "n = {n}: ABA vs CRBA/RNEA {err:e}");
        let err = body_kkt_difference(&sys, &js, &mut data, 0.4, (&q, &v, &a));
        worst_kkt = worst_kkt.max(err);
        assert!(err < 1e-10, "n = {n}: joint vs body KKT {err:e}");
        let (mut x, mut xd) = (vec![0.0; sys.nq()], vec![0.0; sys.nv()]);
        js.body_state(&mut data, &q, &v, &mut x, &mut xd);
        let (mut q2, mut v2) = (vec![0.0; js.nq()], vec![0.0; nd]);
        js.joint_state(&mut data, &x, &xd, 1e-10, &mut q2, &mut v2)
            .unwrap();
        let dq = position_difference(&js, &q, &q2);
        assert!(dq < 1e-10, "n = {n}: {dq:e}");
        let dv = max_abs((0..nd).map(|i| v[i] - v2[i]));
        assert!(dv < 1e-9, "n = {n}: {dv:e}");
    }
    eprintln!(
        "spherical joints at the former Cardan singularity: ABA vs CRBA/RNEA {worst_aba:e}, \
         joint vs body KKT {worst_kkt:e}"
    );
}

/// The quaternion of a spherical joint carries 4 positions and 3 rates,
/// labelled by the child-frame angular rates; the model's initial
/// configuration is p = (1, 0, 0, 0); a non-finite quaternion is an
/// error naming the joint, not a panic.
#[test]
fn a_spherical_joint_has_a_quaternion_and_names_its_rates() {
    let mut rng = Rng::new(10);
    let model = random_tree(&mut rng, 1, Kinds::Spherical, false);
    let (sys, js) = system(&model);
    assert_eq!((js.nq(), js.nv()), (4, 3));
    let labels: Vec<String> = (0..3).map(|i| js.coordinate_label(i)).collect();
    assert_eq!(
        labels,
        ["joint 'j0' (ωx')", "joint 'j0' (ωy')", "joint 'j0' (ωz')"]
    );
    let mut data = js.data();
    let (x, xd) = sys.initial_state();
    let (mut q, mut v) = (vec![0.0; 4], vec![0.0; 3]);
    js.joint_state(&mut data, &x, &xd, 1e-12, &mut q, &mut v)
        .unwrap();
    assert!(position_difference(&js, &q, &[1.0, 0.0, 0.0, 0.0]) < 1e-15);
    let mut a = vec![0.0; 3];
    let err = js
        .forward_dynamics(&mut data, 0.0, &[f64::NAN, 0.0, 0.0, 0.0], &v, &mut a)
        .unwrap_err()
        .to_string();
    assert!(err.contains("joint 'j0'"), "{err}");
}

/// A floating tree closed by a distance joint (a cut joint: the KKT
/// system in joint coordinates with free roots): at the initial poses and
/// rates in the null space of Φ_q, the body accelerations equal the
/// body-coordinate KKT dynamics to 1e-10.
#[test]
fn floating_tree_with_a_closure_matches_the_body_kkt_dynamics() {
    let mut rng = Rng::new(13);
    let mut worst: f64 = 0.0;
    for n in [2, 4, 7] {
        let mut model = floating(&mut rng, n);
        let world = |m: &SpatialModel, b: usize, s: [f64; 3]| {
            let body = &m.bodies[b];
            v3(&body.position) + rot_of(&body.orientation) * v3(&s)
        };
        let (s0, s1) = (rng.vec3(0.3), rng.vec3(0.3));
        let length = (world(&model, 0, s0) - world(&model, n - 1, s1)).norm();
        model.joints.push(SpatialJoint {
            name: "rod".into(),
            kind: SpatialJointKind::Distance {
                a: SpatialAttachment {
                    body: BodyRef::Body(0),
                    point: s0,
                },
                b: SpatialAttachment {
                    body: BodyRef::Body(n - 1),
                    point: s1,
                },
                length,
            },
        });
        let (sys, js) = system(&model);
        let (nd, m) = (js.nv(), js.nc());
        assert_eq!(m, 1);
        let mut data = js.data();
        let (x0, xd0) = sys.initial_state();
        let (mut q, mut v) = (vec![0.0; js.nq()], vec![0.0; nd]);
        js.joint_state(&mut data, &x0, &xd0, 1e-10, &mut q, &mut v)
            .unwrap();
        let mut jac = DMatrix::zeros(m, nd);
        js.constraint_jacobian(&mut data, 0.0, &q, &mut jac);
        let vr = DVector::from_iterator(nd, (0..nd).map(|_| rng.uniform(-1.0, 1.0)));
        let jt = jac.transpose();
        let y = (&jac * &jt).lu().solve(&(&jac * &vr)).unwrap();
        let v: Vec<f64> = (vr - jt * y).iter().copied().collect();
        let mut a = vec![0.0; nd];
        js.forward_dynamics(&mut data, 0.0, &q, &v, &mut a).unwrap();
        let (nq, nv, nc) = (sys.nq(), sys.nv(), sys.nc());
        let (mut x, mut xd, mut xdd) = (vec![0.0; nq], vec![0.0; nv], vec![0.0; nv]);
        js.body_state(&mut data, &q, &v, &mut x, &mut xd);
        js.body_acceleration(&mut data, &q, &v, &a, &mut xdd);
        let mut mb = DMatrix::zeros(nv, nv);
        sys.mass_matrix(&x, &mut mb);
        let mut qf = vec![0.0; nv];
        sys.generalized_forces(0.0, &x, &xd, &mut qf);
        let mut bj = DMatrix::zeros(nc, nv);
        sys.constraint_jacobian(0.0, &x, &mut bj);
        let mut gamma = vec![0.0; nc];
        sys.gamma(0.0, &x, &xd, &mut gamma);
        let mut k = DMatrix::zeros(nv + nc, nv + nc);
        k.view_mut((0, 0), (nv, nv)).copy_from(&mb);
        k.view_mut((nv, 0), (nc, nv)).copy_from(&bj);
        k.view_mut((0, nv), (nv, nc)).copy_from(&bj.transpose());
        let rhs = DVector::from_iterator(nv + nc, qf.iter().chain(&gamma).copied());
        let sol = k.full_piv_lu().solve(&rhs).unwrap();
        let scale = max_abs(sol.rows(0, nv).iter().copied()).max(1.0);
        let err = max_abs((0..nv).map(|i| sol[i] - xdd[i])) / scale;
        worst = worst.max(err);
        assert!(err < 1e-10, "n = {n}: {err:e}");
    }
    eprintln!("floating tree with a distance closure vs body KKT: {worst:e}");
}
