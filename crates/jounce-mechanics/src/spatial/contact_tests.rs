//! Checks of the spatial contacts as parts of [`SpatialSystem`]: the
//! impulse direction is the gap's gradient in velocity space (w·v = ġ by
//! central differences along the motion), the undamped contact forces are
//! −∂V/∂q of the elastic energy along the retraction (so the energy
//! account holds), and the loads on the two bodies balance (equal and
//! opposite forces, moments about a common point cancel).

use super::body::{NQ_BODY, NV_BODY};
use super::SpatialSystem;
use crate::capabilities::SwitchingFunctions;
use crate::MechanicalSystem;

/// Two turned bodies: a plane on body a (off its centre, tilted normal)
/// and off-centre spheres on a and b; no gravity.
pub(crate) const MODEL: &str = r#"
[model]
space = "spatial"
gravity = [0.0, 0.0, 0.0]

[[bodies]]
name = "a"
mass = 1.0
inertia = [0.1, 0.2, 0.3]
position = [0.0, 0.0, 0.0]
orientation = [0.8, 0.36, 0.0, 0.48]

[[bodies]]
name = "b"
mass = 2.0
inertia = [0.2, 0.2, 0.1]
position = [0.1, 0.05, 0.35]
orientation = [0.9, 0.3, -0.2, 0.2449489742783178]

[[contacts]]
name = "plane"
type = "sphere_plane"
body1 = "a"
point1 = [0.0, 0.1, 0.05]
normal1 = [0.2, -0.1, 1.0]
body2 = "b"
point2 = [0.02, -0.03, 0.01]
radius2 = 0.3
law = "hertz"
stiffness = 1e4
exponent = 1.5

[[contacts]]
name = "pair"
type = "sphere_sphere"
body1 = "a"
point1 = [0.05, 0.0, 0.0]
radius1 = 0.2
body2 = "b"
point2 = [0.0, 0.04, -0.02]
radius2 = 0.2
law = "impact"
restitution = 0.5
"#;

fn system() -> (SpatialSystem, Vec<f64>, Vec<f64>) {
    let model = jounce_model::from_str(MODEL, "pair.toml").unwrap();
    let sys = SpatialSystem::from_model(&model).unwrap();
    let (q, _) = sys.initial_state();
    let v = vec![
        0.3, -0.2, 0.1, 1.1, -0.7, 0.4, -0.5, 0.2, -0.3, 0.6, 0.9, -1.2,
    ];
    (sys, q, v)
}

/// q ⊕ h δ.
fn moved(sys: &SpatialSystem, q: &[f64], delta: &[f64], h: f64) -> Vec<f64> {
    let d: Vec<f64> = delta.iter().map(|x| x * h).collect();
    let mut out = vec![0.0; q.len()];
    sys.integrate_position(q, &d, &mut out);
    out
}

#[test]
fn both_contacts_penetrate_at_the_test_pose() {
    let (sys, q, v) = system();
    assert_eq!(sys.switching_count(), 2);
    let mut s = [0.0; 2];
    sys.switching_values(0.0, &q, &v, &mut s);
    assert!(s[0] < 0.0 && s[1] < 0.0, "{s:?}");
    assert_eq!(sys.impact_restitution(0), None);
    assert_eq!(sys.impact_restitution(1), Some(0.5));
    assert_eq!(sys.switching_name(1), "pair");
    let (g, f) = sys.switching_state(0.0, &q, &v, 0);
    assert!(g == s[0] && f > 0.0, "{g} {f}");
}

/// w·v = d/dt g(q ⊕ t v) at t = 0, the impact's impulse direction.
#[test]
fn impulse_direction_is_the_gap_gradient() {
    let (sys, q, v) = system();
    let mut w = vec![0.0; sys.nv()];
    assert!(
        !sys.impulse_direction(0.0, &q, 0, &mut w),
        "penalty contact"
    );
    assert!(sys.impulse_direction(0.0, &q, 1, &mut w));
    let gap = |t: f64| {
        let mut s = [0.0; 2];
        sys.switching_values(0.0, &moved(&sys, &q, &v, t), &v, &mut s);
        s[1]
    };
    let h = 1e-6;
    let fd = (gap(h) - gap(-h)) / (2.0 * h);
    let wv: f64 = w.iter().zip(&v).map(|(a, b)| a * b).sum();
    assert!((wv - fd).abs() < 1e-8, "{wv} vs {fd}");
}

/// Q = −∂V/∂q along each velocity direction (undamped Hertz law, no
/// gravity), and the forces on a and b are equal and opposite.
#[test]
fn contact_forces_are_the_gradient_of_the_elastic_energy() {
    let (sys, q, _) = system();
    let zero = vec![0.0; sys.nv()];
    let mut f = vec![0.0; sys.nv()];
    sys.generalized_forces(0.0, &q, &zero, &mut f);
    assert!(f.iter().any(|x| x.abs() > 1.0), "{f:?}");
    for j in 0..sys.nv() {
        let mut e = vec![0.0; sys.nv()];
        e[j] = 1.0;
        let h = 1e-6;
        let dv = (sys.potential_energy(0.0, &moved(&sys, &q, &e, h))
            - sys.potential_energy(0.0, &moved(&sys, &q, &e, -h)))
            / (2.0 * h);
        assert!(
            (f[j] + dv).abs() < 1e-6 * (1.0 + dv.abs()),
            "column {j}: Q {} vs −dV {}",
            f[j],
            -dv
        );
    }
    for k in 0..3 {
        assert!((f[k] + f[NV_BODY + k]).abs() < 1e-9, "{f:?}");
    }
    assert_eq!(q.len(), 2 * NQ_BODY);
}
