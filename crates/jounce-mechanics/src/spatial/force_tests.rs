//! Checks of the spatial rotational spring and bushing against their
//! closed forms at small deflections from the start: the bushing's force
//! is −K times the offset in body a's axes and its torque −K_r times the
//! small turn, the rotational spring's torque −k (θ − θ0) about the axis.

use super::body::{NQ_BODY, NV_BODY};
use super::quaternion::{mat_vec, product, rotation};
use super::SpatialSystem;
use crate::MechanicalSystem;

/// Two turned bodies held by a bushing (markers at body points), and a
/// hinge between body a and ground with a rotational spring; no gravity.
const MODEL: &str = r#"
[model]
space = "spatial"
gravity = [0.0, 0.0, 0.0]

[[bodies]]
name = "a"
mass = 1.0
inertia = [0.1, 0.2, 0.3]
position = [0.0, 0.0, 0.5]
orientation = [0.8, 0.36, 0.0, 0.48]

[[bodies]]
name = "b"
mass = 2.0
inertia = [0.2, 0.2, 0.1]
position = [0.3, -0.1, 0.6]
orientation = [0.9, 0.3, -0.2, 0.2449489742783178]

[[joints]]
name = "hinge"
type = "revolute"
body1 = "ground"
point1 = [0.0, 0.0, 0.5]
body2 = "a"
point2 = [0.0, 0.0, 0.0]
axis = [0.0, 0.6, 0.8]

[[forces]]
name = "coil"
type = "rotational_spring"
joint = "hinge"
stiffness = 3.0
zero_angle = 0.1

[[forces]]
name = "mount"
type = "bushing"
body1 = "a"
point1 = [0.1, 0.0, 0.0]
body2 = "b"
point2 = [-0.1, 0.05, 0.0]
stiffness = [100.0, 200.0, 300.0]
rotational_stiffness = [5.0, 6.0, 7.0]
"#;

fn system() -> (SpatialSystem, Vec<f64>, Vec<f64>) {
    let model = jounce_model::from_str(MODEL, "mount.toml").unwrap();
    let sys = SpatialSystem::from_model(&model).unwrap();
    let (q, v) = sys.initial_state();
    (sys, q, v)
}

fn quat(q: &[f64], b: usize) -> [f64; 4] {
    std::array::from_fn(|k| q[NQ_BODY * b + 3 + k])
}

/// Q of body `b` (6 entries) at q (v = 0).
fn load(sys: &SpatialSystem, q: &[f64], b: usize) -> [f64; NV_BODY] {
    let mut f = vec![0.0; sys.nv()];
    sys.generalized_forces(0.0, q, &vec![0.0; sys.nv()], &mut f);
    std::array::from_fn(|k| f[NV_BODY * b + k])
}

/// The quaternion of a turn φ about the unit axis n.
fn turn(n: [f64; 3], phi: f64) -> [f64; 4] {
    let (s, c) = (0.5 * phi).sin_cos();
    [c, s * n[0], s * n[1], s * n[2]]
}

#[test]
fn at_the_start_neither_element_loads_the_bodies_but_the_spring_preload() {
    let (sys, q, _) = system();
    // the bushing is free at the start; the coil holds −k (0 − θ0) = 0.3
    // about the hinge axis on body a
    let fb = load(&sys, &q, 1);
    assert!(fb.iter().all(|x| x.abs() < 1e-14), "{fb:?}");
    let fa = load(&sys, &q, 0);
    let t_world = mat_vec(&rotation(&quat(&q, 0)), &[fa[3], fa[4], fa[5]]);
    for (k, h) in [0.0, 0.6, 0.8].iter().enumerate() {
        assert!((t_world[k] - 0.3 * h).abs() < 1e-14, "{t_world:?}");
    }
}

#[test]
fn bushing_force_at_a_small_offset_is_minus_k_times_the_offset() {
    let (sys, q0, _) = system();
    let a_a = rotation(&quat(&q0, 0));
    // move b by δ given in body a's axes: the force on b is A_a (−K δ)
    let delta = [1e-4, -2e-4, 3e-4];
    let mut q = q0.clone();
    let dw = mat_vec(&a_a, &delta);
    for k in 0..3 {
        q[NQ_BODY + k] += dw[k];
    }
    let fb = load(&sys, &q, 1);
    let want = mat_vec(
        &a_a,
        &[-100.0 * delta[0], -200.0 * delta[1], -300.0 * delta[2]],
    );
    for k in 0..3 {
        assert!((fb[k] - want[k]).abs() < 1e-12, "F = {fb:?} vs {want:?}");
    }
    // body a gets −F (and the coil's torque only in rotation)
    let fa = load(&sys, &q, 0);
    for k in 0..3 {
        assert!((fa[k] + want[k]).abs() < 1e-12, "{fa:?}");
    }
    // turn b by φ about body a's x axis (world A_a e_x): the torque on b
    // is −K_r sin φ about that axis (the small-angle vector sin φ n)
    let phi = 1e-3;
    let n = mat_vec(&a_a, &[1.0, 0.0, 0.0]);
    let pb = product(&turn(n, phi), &quat(&q0, 1));
    let mut q = q0.clone();
    q[NQ_BODY + 3..2 * NQ_BODY].copy_from_slice(&pb);
    // keep b's point where it was: move r_b by the point's swing
    let s_b = [-0.1, 0.05, 0.0];
    let (old, new) = (
        mat_vec(&rotation(&quat(&q0, 1)), &s_b),
        mat_vec(&rotation(&pb), &s_b),
    );
    for k in 0..3 {
        q[NQ_BODY + k] += old[k] - new[k];
    }
    let fb = load(&sys, &q, 1);
    let t_world = mat_vec(&rotation(&pb), &[fb[3], fb[4], fb[5]]);
    // the moment of the (zero) force about the centre is zero: only T
    for k in 0..3 {
        let want = -5.0 * phi.sin() * n[k];
        assert!((t_world[k] - want).abs() < 1e-12, "T = {t_world:?}");
    }
    // the potential energy ½ K_r sin²φ
    let e = sys.potential_energy(0.0, &q) - sys.potential_energy(0.0, &q0);
    assert!((e - 0.5 * 5.0 * phi.sin().powi(2)).abs() < 1e-15, "{e}");
}

#[test]
fn rotational_spring_torque_is_minus_k_times_the_turn_from_its_zero_angle() {
    let (sys, q0, _) = system();
    let h = [0.0, 0.6, 0.8];
    for phi in [-0.4, 0.05, 0.1, 1.3] {
        let mut q = q0.clone();
        let pa = product(&turn(h, phi), &quat(&q0, 0));
        q[3..NQ_BODY].copy_from_slice(&pa);
        // turn b with a about the hinge so that the bushing stays free
        let mut qb = q.clone();
        let pb = product(&turn(h, phi), &quat(&q0, 1));
        qb[NQ_BODY + 3..2 * NQ_BODY].copy_from_slice(&pb);
        let c = [0.0, 0.0, 0.5];
        let r: Vec<f64> = (0..3).map(|k| q0[NQ_BODY + k] - c[k]).collect();
        let rot = rotation(&turn(h, phi));
        let rr = mat_vec(&rot, &[r[0], r[1], r[2]]);
        for k in 0..3 {
            qb[NQ_BODY + k] = c[k] + rr[k];
        }
        let fb = load(&sys, &qb, 1);
        assert!(
            fb.iter().all(|x| x.abs() < 1e-12),
            "bushing not free: {fb:?}"
        );
        let fa = load(&sys, &qb, 0);
        let t_body = [fa[3], fa[4], fa[5]];
        let t_world = mat_vec(&rotation(&pa), &t_body);
        let want = -3.0 * (phi - 0.1);
        for k in 0..3 {
            assert!(
                (t_world[k] - want * h[k]).abs() < 1e-12,
                "φ = {phi}: {t_world:?} vs {want} h"
            );
        }
        let e = sys.potential_energy(0.0, &qb);
        assert!((e - 1.5 * (phi - 0.1f64).powi(2)).abs() < 1e-13, "{e}");
    }
}

#[test]
fn actuators_add_their_time_function_and_are_the_applied_loads() {
    use crate::capabilities::AppliedLoads;
    let text = MODEL.replace(
        "zero_angle = 0.1",
        "zero_angle = 0.1\nactuator = { type = \"ramp\", t0 = 0.0, t1 = 0.5, from = 0.0, to = 2.0 }",
    ) + r#"
[[forces]]
name = "strut"
type = "spring_damper"
body1 = "ground"
point1 = [0.3, -0.1, 1.6]
body2 = "b"
point2 = [0.0, 0.0, 0.0]
stiffness = 0.0
free_length = 0.5
actuator = 5.0
"#;
    let model = jounce_model::from_str(&text, "act.toml").unwrap();
    let sys = SpatialSystem::from_model(&model).unwrap();
    assert_eq!(sys.breakpoints(), vec![0.0, 0.5]);
    assert_eq!(model.breakpoints(), vec![0.0, 0.5]);
    let (q, v) = sys.initial_state();
    let t = 0.25; // the ramp at 1.0 N·m
    let mut all = vec![0.0; sys.nv()];
    sys.generalized_forces(t, &q, &v, &mut all);
    let mut applied = vec![0.0; sys.nv()];
    sys.applied_load_forces(t, &q, &v, &mut applied);
    let h = [0.0, 0.6, 0.8];
    let a_a = rotation(&quat(&q, 0));
    let total = mat_vec(&a_a, &[all[3], all[4], all[5]]);
    let act = mat_vec(&a_a, &[applied[3], applied[4], applied[5]]);
    for k in 0..3 {
        // spring 0.3 (θ0 = 0.1 at θ = 0) plus the actuator's 1.0
        assert!((total[k] - 1.3 * h[k]).abs() < 1e-14, "{total:?}");
        assert!((act[k] - 1.0 * h[k]).abs() < 1e-14, "{act:?}");
    }
    // the strut pulls b up towards (0.3, −0.1, 1.6) with 5 N: +z
    for (k, want) in [0.0, 0.0, 5.0].iter().enumerate() {
        assert!((all[NV_BODY + k] - want).abs() < 1e-14, "{all:?}");
        assert!((applied[NV_BODY + k] - want).abs() < 1e-14, "{applied:?}");
    }
}
