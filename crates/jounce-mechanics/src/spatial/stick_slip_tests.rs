//! Checks of the stick–slip friction rows of spatial contacts
//! ([`super::stick_slip`]) on the two turned bodies of the contact tests
//! (a tilted plane and a sphere pair, both penetrating): two rows per
//! contact whose sliding velocities are the components of the tangential
//! relative velocity w − (n·w) n in an orthonormal tangent frame, rows
//! J_f with J_f v = v_t, and γ_f = −d/dt v_t(q ⊕ t v, v) by central
//! differences along the motion.

use super::body::Pose;
use super::contact::{contact_frame, relative_velocity};
use super::contact_tests::MODEL;
use super::forces::End;
use super::quaternion::dot;
use super::system::pose_at;
use super::SpatialSystem;
use crate::capabilities::SwitchingFunctions;
use crate::system::NormalForce;
use crate::{MechanicalSystem, SystemQueries};

fn system() -> (SpatialSystem, Vec<f64>, Vec<f64>) {
    let text = MODEL
        .replace(
            "law = \"impact\"\nrestitution = 0.5",
            "law = \"linear\"\nstiffness = 1e4",
        )
        .replace(
            "exponent = 1.5\n",
            "exponent = 1.5\nfriction = 0.3\nfriction_law = \"stick_slip\"\n",
        );
    // the pair is the last element: its friction keys follow
    let text = text + "friction = 0.2\nstatic_friction = 0.25\nfriction_law = \"stick_slip\"\n";
    let model = jounce_model::from_str(&text, "pair.toml").unwrap();
    let sys = SpatialSystem::from_model(&model).unwrap();
    let (q, _) = sys.initial_state();
    let v = vec![
        0.3, -0.2, 0.1, 1.1, -0.7, 0.4, -0.5, 0.2, -0.3, 0.6, 0.9, -1.2,
    ];
    (sys, q, v)
}

/// (v_t,1, v_t,2) of contact `c` at (q, v).
fn sliding(sys: &SpatialSystem, q: &[f64], v: &[f64], c: usize) -> [f64; 2] {
    let mut jf = vec![0.0; sys.nv()];
    [0, 1].map(|k| {
        sys.friction_row(0.0, q, v, 2 * c + k, &mut jf)
            .sliding_velocity
    })
}

#[test]
fn each_contact_has_two_named_rows_with_the_penalty_normal_force() {
    let (sys, q, v) = system();
    assert_eq!(sys.n_friction_rows(), 4);
    let names: Vec<String> = (0..4).map(|i| sys.friction_label(i)).collect();
    assert_eq!(names, ["plane.t1", "plane.t2", "pair.t1", "pair.t2"]);
    assert!((0..4).all(|i| sys.friction_element_rows(i) == 2));
    let mut jf = vec![0.0; sys.nv()];
    for i in 0..4 {
        let row = sys.friction_row(0.0, &q, &v, i, &mut jf);
        let (_, fn_) = sys.switching_state(0.0, &q, &v, i / 2);
        assert_eq!(row.normal, NormalForce::Known(fn_));
        assert!(fn_ > 0.0);
    }
}

/// |v_t|² = |w|² − (n·w)² (an orthonormal frame of the tangent plane),
/// J_f v = v_t and, v_t being linear in v, J_f e_j = v_t(q, e_j).
#[test]
fn rows_are_the_tangential_relative_velocity_in_an_orthonormal_frame() {
    let (sys, q, v) = system();
    let mut jf = vec![0.0; sys.nv()];
    for c in 0..2 {
        let (p, bodies) = sys.contact(c).unwrap();
        let poses: [Pose<f64>; 2] = bodies.map(|b| pose_at(&q, b));
        let ends: [End<'_, f64>; 2] = std::array::from_fn(|s| End {
            pose: &poses[s],
            velocity: std::array::from_fn(|k| bodies[s].map_or(0.0, |b| v[6 * b + k])),
            point: [0.0; 3],
        });
        let (_, n, at) = contact_frame(p, &poses[0], &poses[1]);
        let w = relative_velocity(&ends[0], &ends[1], &at);
        let tangential = dot(&w, &w) - dot(&n, &w).powi(2);
        let vt = sliding(&sys, &q, &v, c);
        assert!(tangential > 0.01, "{tangential}");
        assert!(
            (vt[0] * vt[0] + vt[1] * vt[1] - tangential).abs() < 1e-12,
            "{vt:?} vs {tangential}"
        );
        for k in 0..2 {
            let row = sys.friction_row(0.0, &q, &v, 2 * c + k, &mut jf);
            let jv: f64 = jf.iter().zip(&v).map(|(a, b)| a * b).sum();
            assert!((jv - row.sliding_velocity).abs() < 1e-13);
            let jf = jf.clone();
            for (j, &jj) in jf.iter().enumerate() {
                let mut e = vec![0.0; sys.nv()];
                e[j] = 1.0;
                assert!(
                    (sliding(&sys, &q, &e, c)[k] - jj).abs() < 1e-13,
                    "column {j}"
                );
            }
        }
    }
}

/// γ_f = −(∂v_t/∂q) q' = −d/dt v_t(q ⊕ t v, v) at t = 0.
#[test]
fn gamma_is_minus_the_rate_of_the_sliding_velocity_along_the_motion() {
    let (sys, q, v) = system();
    let moved = |h: f64| {
        let d: Vec<f64> = v.iter().map(|x| x * h).collect();
        let mut out = vec![0.0; q.len()];
        sys.integrate_position(&q, &d, &mut out);
        out
    };
    let h = 1e-6;
    let mut jf = vec![0.0; sys.nv()];
    for i in 0..4 {
        let gamma = sys.friction_row(0.0, &q, &v, i, &mut jf).gamma;
        let rate = (sliding(&sys, &moved(h), &v, i / 2)[i % 2]
            - sliding(&sys, &moved(-h), &v, i / 2)[i % 2])
            / (2.0 * h);
        assert!(gamma.abs() > 1e-3, "row {i}: {gamma}");
        assert!(
            (gamma + rate).abs() < 1e-7,
            "row {i}: γ_f {gamma} vs −rate {}",
            -rate
        );
    }
}
