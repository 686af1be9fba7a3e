//! Physical consistency of M, Q, γ and V together: integrating the index-1
//! equations of motion
//!
//! [M Φ_qᵀ; Φ_q 0] [q''; λ] = [Q; γ]
//!
//! with classical RK4 (small steps) keeps T + V constant for conservative
//! models and makes it decrease with damping.

use crate::common;

use common::*;
use jounce_mechanics::{assemble, MechanicalSystem, PlanarSystem};
use jounce_model::{ForceKind, Model, OneSided};
use nalgebra::{DMatrix, DVector};

/// Accelerations from the augmented system.
fn accel(sys: &PlanarSystem, t: f64, q: &[f64], v: &[f64]) -> Vec<f64> {
    let (n, m) = (sys.nq(), sys.nc());
    let mut mm = DMatrix::zeros(n, n);
    sys.mass_matrix(q, &mut mm);
    let mut jac = DMatrix::zeros(m, n);
    sys.constraint_jacobian(t, q, &mut jac);
    let mut f = vec![0.0; n];
    sys.generalized_forces(t, q, v, &mut f);
    let mut g = vec![0.0; m];
    sys.gamma(t, q, v, &mut g);
    let mut kkt = DMatrix::zeros(n + m, n + m);
    kkt.view_mut((0, 0), (n, n)).copy_from(&mm);
    kkt.view_mut((0, n), (n, m)).copy_from(&jac.transpose());
    kkt.view_mut((n, 0), (m, n)).copy_from(&jac);
    let rhs = DVector::from_iterator(n + m, f.into_iter().chain(g));
    let sol = kkt.lu().solve(&rhs).expect("regular KKT matrix");
    sol.as_slice()[..n].to_vec()
}

/// RK4 on (q, v) over [0, t_end] with step h; returns T + V at every step.
fn energies(sys: &PlanarSystem, q0: &[f64], v0: &[f64], h: f64, t_end: f64) -> Vec<f64> {
    let n = sys.nq();
    let (mut q, mut v) = (q0.to_vec(), v0.to_vec());
    let energy = |q: &[f64], v: &[f64]| sys.kinetic_energy(q, v) + sys.potential_energy(0.0, q);
    let mut out = vec![energy(&q, &v)];
    let steps = (t_end / h).round() as usize;
    for k in 0..steps {
        let t = k as f64 * h;
        let stage = |dt: f64, dq: &[f64], dv: &[f64]| -> (Vec<f64>, Vec<f64>) {
            let qs: Vec<f64> = (0..n).map(|i| q[i] + dt * dq[i]).collect();
            let vs: Vec<f64> = (0..n).map(|i| v[i] + dt * dv[i]).collect();
            let a = accel(sys, t + dt, &qs, &vs);
            (vs, a)
        };
        let zero = vec![0.0; n];
        let (k1q, k1v) = stage(0.0, &zero, &zero);
        let (k2q, k2v) = stage(h / 2.0, &k1q, &k1v);
        let (k3q, k3v) = stage(h / 2.0, &k2q, &k2v);
        let (k4q, k4v) = stage(h, &k3q, &k3v);
        for i in 0..n {
            q[i] += h / 6.0 * (k1q[i] + 2.0 * k2q[i] + 2.0 * k3q[i] + k4q[i]);
            v[i] += h / 6.0 * (k1v[i] + 2.0 * k2v[i] + 2.0 * k3v[i] + k4v[i]);
        }
        out.push(energy(&q, &v));
    }
    out
}

/// Double pendulum of unit bars with a spring to ground and an elbow spring.
fn double_pendulum(damping: f64, rope: Option<OneSided>) -> Model {
    let (t1, t2) = (
        -std::f64::consts::FRAC_PI_2 + 0.8,
        -std::f64::consts::FRAC_PI_2 + 1.5,
    );
    let tip1 = [t1.cos(), t1.sin()];
    let bodies = vec![
        bar("upper", 1.0, 0.5 * t1.cos(), 0.5 * t1.sin(), t1),
        bar(
            "lower",
            1.0,
            tip1[0] + 0.5 * t2.cos(),
            tip1[1] + 0.5 * t2.sin(),
            t2,
        ),
    ];
    let joints = vec![
        revolute("shoulder", ground([0.0, 0.0]), on(0, [-0.5, 0.0])),
        revolute("elbow", on(0, [0.5, 0.0]), on(1, [-0.5, 0.0])),
    ];
    let forces = vec![
        force(
            "spring",
            ForceKind::SpringDamper {
                a: ground([1.5, 0.5]),
                b: on(1, [0.5, 0.0]),
                stiffness: 20.0,
                damping,
                free_length: 0.8,
                actuator: None,
                one_sided: None,
            },
        ),
        force(
            "rope",
            ForceKind::SpringDamper {
                a: ground([-1.0, 0.0]),
                b: on(0, [0.0, 0.0]),
                stiffness: 50.0,
                damping,
                free_length: 1.3,
                actuator: None,
                one_sided: rope,
            },
        ),
        force(
            "elbow_spring",
            ForceKind::RotationalSpring {
                joint: 1,
                stiffness: 3.0,
                damping,
                zero_angle: 0.2,
                actuator: None,
                one_sided: None,
            },
        ),
    ];
    model("double pendulum", bodies, joints, vec![], forces)
}

/// max |E(t) − E(0)| over one second with step h.
fn energy_swing(sys: &PlanarSystem, h: f64) -> (f64, f64) {
    let a = assemble(
        sys,
        0.0,
        &sys.initial_q(),
        &[0.5, -0.3, 2.0, 0.1, 0.4, -1.0],
        1e-12,
    )
    .unwrap();
    let e = energies(sys, &a.q, &a.v, h, 1.0);
    let swing = e.iter().fold(0.0_f64, |m, x| m.max((x - e[0]).abs()));
    (swing, sys.kinetic_energy(&a.q, &a.v) + 1.0)
}

#[test]
fn double_pendulum_energy_error_vanishes_at_rk4_order() {
    // smooth conservative model: the only energy error is RK4's, O(h⁴)
    let sys = system(&double_pendulum(0.0, None));
    let (coarse, scale) = energy_swing(&sys, 1e-3);
    let (fine, _) = energy_swing(&sys, 5e-4);
    let order = (coarse / fine).log2();
    assert!(coarse < 1e-9 * scale, "T + V drifts by {coarse:.3e}");
    assert!(
        (order - 4.0).abs() < 0.2,
        "energy error order {order:.2} (errors {coarse:.3e}, {fine:.3e})"
    );
}

#[test]
fn double_pendulum_with_one_sided_rope_conserves_total_energy() {
    // the rope's switch limits RK4's accuracy, not the model's consistency
    let sys = system(&double_pendulum(0.0, Some(OneSided::Tension)));
    let (swing, scale) = energy_swing(&sys, 5e-4);
    assert!(swing < 1e-7 * scale, "T + V drifts by {swing:.3e}");
}

#[test]
fn double_pendulum_with_damping_loses_energy_monotonically() {
    let sys = system(&double_pendulum(0.5, Some(OneSided::Tension)));
    let a = assemble(
        &sys,
        0.0,
        &sys.initial_q(),
        &[0.5, -0.3, 2.0, 0.1, 0.4, -1.0],
        1e-12,
    )
    .unwrap();
    let e = energies(&sys, &a.q, &a.v, 1e-3, 1.0);
    for w in e.windows(2) {
        assert!(w[1] <= w[0] + 1e-9, "energy rose from {} to {}", w[0], w[1]);
    }
    assert!(
        e[0] - e[e.len() - 1] > 1e-2,
        "damping must dissipate: {} → {}",
        e[0],
        e[e.len() - 1]
    );
}

#[test]
fn mass_bouncing_on_a_compression_only_spring_conserves_energy() {
    // dropped from 0.5 m above the free length onto a stiff bumper: the
    // spring switches on and off, V counts it only while compressed
    let m = model(
        "bouncer",
        vec![body("ball", 1.0, 0.01, 0.0, 1.5, 0.0)],
        vec![],
        vec![],
        vec![force(
            "bumper",
            ForceKind::SpringDamper {
                a: ground([0.0, 0.0]),
                b: on(0, [0.0, 0.0]),
                stiffness: 2000.0,
                damping: 0.0,
                free_length: 1.0,
                actuator: None,
                one_sided: Some(OneSided::Compression),
            },
        )],
    );
    let sys = system(&m);
    let e = energies(&sys, &sys.initial_q(), &[0.0; 3], 2e-4, 1.0);
    let e0 = e[0];
    let swing = e.iter().fold(0.0_f64, |m, x| m.max((x - e0).abs()));
    assert!(
        swing < 1e-5 * e0.abs(),
        "T + V drifts by {swing:.3e} (E0 = {e0})"
    );
}

#[test]
fn point_mass_links_with_zero_inertia_conserve_energy() {
    // study S1 (jalon-bayo, Example 7.2) in body coordinates: unit point
    // masses at the ends of massless unit links, J = 0 (M singular, the
    // augmented matrix is not), springs k1 = k2 = 100 on the absolute and
    // relative angles, φ1' = φ2' = 100 rad/s, no gravity
    let mut m = model(
        "S1",
        vec![
            body("m1", 1.0, 0.0, 1.0, 0.0, 0.0),
            body("m2", 1.0, 0.0, 2.0, 0.0, 0.0),
        ],
        vec![
            revolute("ground_joint", ground([0.0, 0.0]), on(0, [-1.0, 0.0])),
            revolute("elbow", on(0, [0.0, 0.0]), on(1, [-1.0, 0.0])),
        ],
        vec![],
        (0..2)
            .map(|j| {
                force(
                    &format!("k{}", j + 1),
                    ForceKind::RotationalSpring {
                        joint: j,
                        stiffness: 100.0,
                        damping: 0.0,
                        zero_angle: 0.0,
                        actuator: None,
                        one_sided: None,
                    },
                )
            })
            .collect(),
    );
    m.gravity = [0.0, 0.0];
    let sys = system(&m);
    let v0 = [0.0, 100.0, 100.0, 0.0, 300.0, 200.0];
    let a = assemble(&sys, 0.0, &sys.initial_q(), &v0, 1e-12).unwrap();
    assert!(
        a.velocity_change < 1e-9,
        "the given velocities are consistent"
    );
    assert_eq!(a.dof, 2);
    let e = energies(&sys, &a.q, &a.v, 1e-4, 0.1);
    assert!((e[0] - 50_000.0).abs() < 1e-6);
    let swing = e.iter().fold(0.0_f64, |m, x| m.max((x - e[0]).abs()));
    assert!(
        swing < 1e-8 * e[0],
        "relative energy error {:.3e}",
        swing / e[0]
    );
}
