//! Test mechanisms with consistent initial states (q0, v0) at t = 0.
//! Gravity is (0, −9.81) m/s² unless stated; angles are measured from the
//! global x axis.

use super::{ToyBody, ToyJoint, ToySpring, ToySystem};

/// (system, q0, v0)
pub type Model = (ToySystem, Vec<f64>, Vec<f64>);

const G: [f64; 2] = [0.0, -9.81];

fn body(name: &str, mass: f64, inertia: f64) -> ToyBody {
    ToyBody {
        name: name.into(),
        mass,
        inertia,
    }
}

fn revolute(name: &str, i: usize, si: [f64; 2], j: Option<usize>, sj: [f64; 2]) -> ToyJoint {
    ToyJoint::Revolute {
        name: name.into(),
        i,
        si,
        j,
        sj,
    }
}

/// Uniform rod of length `l` and mass `m` (centroidal inertia m l²/12)
/// pinned at one end to the ground origin; angle θ0, angular speed ω0.
/// Coordinates (x, y, θ) of the centre of mass: 3, constraints: 2.
pub fn pendulum(l: f64, m: f64, theta0: f64, omega0: f64) -> Model {
    let sys = ToySystem::new(
        vec![body("rod", m, m * l * l / 12.0)],
        vec![revolute("pivot", 0, [-l / 2.0, 0.0], None, [0.0, 0.0])],
        vec![],
        G,
    );
    let (s, c) = theta0.sin_cos();
    let h = l / 2.0;
    let q = vec![h * c, h * s, theta0];
    let v = vec![-h * s * omega0, h * c * omega0, omega0];
    (sys, q, v)
}

/// Double pendulum of two massless links (lengths l1, l2) carrying point
/// masses m1, m2 at their ends, in body coordinates: each link is a body
/// whose centre of mass is its point mass, with centroidal inertia **0**
/// (studies.md S1: M is singular, the KKT matrix is not). Absolute link
/// angles φ1, φ1 + φ2; rates w1, w1 + w2; rotational springs k1 (ground
/// joint, on φ1) and k2 (elbow, on φ2). Coordinates 6, constraints 4.
#[allow(clippy::too_many_arguments)]
pub fn double_pendulum(
    l1: f64,
    l2: f64,
    m1: f64,
    m2: f64,
    phi1: f64,
    phi2: f64,
    w1: f64,
    w2: f64,
    k1: f64,
    k2: f64,
) -> Model {
    let sys = ToySystem::new(
        vec![body("link1", m1, 0.0), body("link2", m2, 0.0)],
        vec![
            revolute("shoulder", 0, [-l1, 0.0], None, [0.0, 0.0]),
            revolute("elbow", 1, [-l2, 0.0], Some(0), [0.0, 0.0]),
        ],
        vec![
            ToySpring {
                i: 0,
                j: None,
                k: k1,
                c: 0.0,
            },
            ToySpring {
                i: 1,
                j: Some(0),
                k: k2,
                c: 0.0,
            },
        ],
        G,
    );
    let (t1, t2) = (phi1, phi1 + phi2);
    let (d1, d2) = (w1, w1 + w2);
    let (s1, c1) = t1.sin_cos();
    let (s2, c2) = t2.sin_cos();
    let r1 = [l1 * c1, l1 * s1];
    let r2 = [r1[0] + l2 * c2, r1[1] + l2 * s2];
    let v1 = [-l1 * s1 * d1, l1 * c1 * d1];
    let v2 = [v1[0] - l2 * s2 * d2, v1[1] + l2 * c2 * d2];
    (
        sys,
        vec![r1[0], r1[1], t1, r2[0], r2[1], t2],
        vec![v1[0], v1[1], d1, v2[0], v2[1], d2],
    )
}

/// Double pendulum with point masses m1, m2 whose first link
/// is driven: φ1(t) = φ1₀ + a sin(Ω t). One degree of freedom; exercises
/// Φ_t and Φ_tt. Coordinates 6, constraints 5.
#[allow(clippy::too_many_arguments)]
pub fn driven_double_pendulum(
    l1: f64,
    l2: f64,
    m1: f64,
    m2: f64,
    phi1: f64,
    phi2: f64,
    amp: f64,
    freq: f64,
) -> Model {
    let (mut sys, q, _) = double_pendulum(l1, l2, m1, m2, phi1, phi2, 0.0, 0.0, 0.0, 0.0);
    sys = ToySystem::new(
        sys.bodies,
        {
            let mut j = sys.joints;
            j.push(ToyJoint::AngleDriver {
                name: "motor".into(),
                i: 0,
                theta0: phi1,
                omega: 0.0,
                amp,
                freq,
            });
            j
        },
        vec![],
        G,
    );
    // φ1'(0) = a Ω, φ2'(0) = 0 (link 2 starts with the rate of link 1)
    let (_, _, v) = double_pendulum(l1, l2, m1, m2, phi1, phi2, amp * freq, 0.0, 0.0, 0.0);
    (sys, q, v)
}

/// Slider-crank: crank (length r, mass m1, centroidal inertia m1 r²/12)
/// pinned at the ground origin; connecting rod (length l, m2, m2 l²/12);
/// slider (m3, inertia m3·0.01) on the horizontal guide y = 0. Free crank
/// at angle θ0 with rate ω0 under gravity. Coordinates 9, constraints 8.
pub fn slider_crank(r: f64, l: f64, m1: f64, m2: f64, m3: f64, theta0: f64, omega0: f64) -> Model {
    let sys = ToySystem::new(
        vec![
            body("crank", m1, m1 * r * r / 12.0),
            body("rod", m2, m2 * l * l / 12.0),
            body("slider", m3, m3 * 0.01),
        ],
        vec![
            revolute("main", 0, [-r / 2.0, 0.0], None, [0.0, 0.0]),
            revolute("crank_pin", 1, [-l / 2.0, 0.0], Some(0), [r / 2.0, 0.0]),
            revolute("wrist_pin", 2, [0.0, 0.0], Some(1), [l / 2.0, 0.0]),
            ToyJoint::SliderX {
                name: "guide".into(),
                i: 2,
                y: 0.0,
            },
        ],
        vec![],
        G,
    );
    let (s1, c1) = theta0.sin_cos();
    let p = [r * c1, r * s1];
    let pd = [-r * s1 * omega0, r * c1 * omega0];
    let s2 = -p[1] / l;
    let c2 = (1.0 - s2 * s2).sqrt();
    let th2 = s2.atan2(c2);
    let w2 = -pd[1] / (l * c2);
    let xb = p[0] + l * c2;
    let xbd = pd[0] - l * s2 * w2;
    let q = vec![
        0.5 * p[0],
        0.5 * p[1],
        theta0,
        p[0] + 0.5 * l * c2,
        p[1] + 0.5 * l * s2,
        th2,
        xb,
        0.0,
        0.0,
    ];
    let v = vec![
        0.5 * pd[0],
        0.5 * pd[1],
        omega0,
        pd[0] - 0.5 * l * s2 * w2,
        pd[1] + 0.5 * l * c2 * w2,
        w2,
        xbd,
        0.0,
        0.0,
    ];
    (sys, q, v)
}

/// A body with zero rotational inertia pinned at its centre of mass: its
/// angle has neither inertia nor constraint, so no formulation can run it
/// (M, the KKT matrix and M + αΦ_qᵀΦ_q are all singular).
pub fn spinning_point_mass() -> Model {
    let sys = ToySystem::new(
        vec![body("bead", 1.0, 0.0)],
        vec![revolute("pin", 0, [0.0, 0.0], None, [0.0, 0.0])],
        vec![],
        G,
    );
    (sys, vec![0.0; 3], vec![0.0; 3])
}

/// A pendulum with its pivot modelled twice (redundant constraints).
pub fn redundant_pendulum() -> Model {
    let (mut sys, q, v) = pendulum(1.0, 1.0, 0.3, 0.0);
    let j = sys.joints[0].clone();
    if let ToyJoint::Revolute {
        i, si, j: jj, sj, ..
    } = j
    {
        sys = ToySystem::new(
            sys.bodies,
            vec![
                sys.joints[0].clone(),
                revolute("pivot_again", i, si, jj, sj),
            ],
            vec![],
            G,
        );
    }
    (sys, q, v)
}
