//! Small inline models and finite-difference helpers shared by the tests.
#![allow(dead_code)]

use jounce_mechanics::{MechanicalSystem, PlanarSystem};
use jounce_model::{
    Attachment, Body, BodyRef, Driver, DriverKind, Force, ForceKind, Joint, JointKind, Model,
    Settings, TimeFunction,
};
use nalgebra::DMatrix;

/// A body with given inertial data and initial pose.
pub fn body(name: &str, mass: f64, inertia: f64, x: f64, y: f64, angle: f64) -> Body {
    Body {
        name: name.into(),
        mass,
        inertia,
        position: [x, y],
        angle,
        velocity: [0.0; 2],
        angular_velocity: 0.0,
        points: vec![],
    }
}

/// A slender bar of length `l` (1 kg/m, J = m l²/12) with CoM at (x, y).
pub fn bar(name: &str, l: f64, x: f64, y: f64, angle: f64) -> Body {
    body(name, l, l * l * l / 12.0, x, y, angle)
}

/// A point on ground (global coordinates).
pub fn ground(p: [f64; 2]) -> Attachment {
    Attachment {
        body: BodyRef::Ground,
        point: p,
    }
}

/// A point on body `i` (body frame).
pub fn on(i: usize, p: [f64; 2]) -> Attachment {
    Attachment {
        body: BodyRef::Body(i),
        point: p,
    }
}

pub fn revolute(name: &str, a: Attachment, b: Attachment) -> Joint {
    Joint {
        name: name.into(),
        kind: JointKind::Revolute { a, b },
        friction: None,
    }
}

pub fn translational(name: &str, a: Attachment, b: Attachment, axis: [f64; 2]) -> Joint {
    Joint {
        name: name.into(),
        kind: JointKind::Translational { a, b, axis },
        friction: None,
    }
}

pub fn joint_driver(name: &str, joint: usize, value: f64) -> Driver {
    Driver {
        name: name.into(),
        kind: DriverKind::Joint { joint },
        function: TimeFunction::Constant(value),
    }
}

pub fn force(name: &str, kind: ForceKind) -> Force {
    Force {
        name: name.into(),
        kind,
    }
}

/// A model with standard gravity.
pub fn model(
    name: &str,
    bodies: Vec<Body>,
    joints: Vec<Joint>,
    drivers: Vec<Driver>,
    forces: Vec<Force>,
) -> Model {
    Model {
        name: name.into(),
        source: "<test>".into(),
        gravity: [0.0, -9.81],
        bodies,
        joints,
        drivers,
        forces,
        settings: Settings::default(),
        spatial: None,
    }
}

pub fn system(m: &Model) -> PlanarSystem {
    PlanarSystem::from_model(m).expect("test model is valid")
}

/// Central finite-difference Jacobian of `f: Rⁿ → Rᵐ` at `x`.
pub fn fd_jacobian(f: impl Fn(&[f64], &mut [f64]), x: &[f64], m: usize) -> DMatrix<f64> {
    let n = x.len();
    let mut jac = DMatrix::zeros(m, n);
    let (mut fp, mut fm) = (vec![0.0; m], vec![0.0; m]);
    let mut xp = x.to_vec();
    for j in 0..n {
        let h = 1e-6 * (1.0 + x[j].abs());
        xp[j] = x[j] + h;
        f(&xp, &mut fp);
        xp[j] = x[j] - h;
        f(&xp, &mut fm);
        xp[j] = x[j];
        for i in 0..m {
            jac[(i, j)] = (fp[i] - fm[i]) / (2.0 * h);
        }
    }
    jac
}

/// Asserts max |a − b| ≤ tol (1 + max |b|), naming the worst entry.
pub fn assert_matrix_close(
    sys: &impl MechanicalSystem,
    a: &DMatrix<f64>,
    b: &DMatrix<f64>,
    tol: f64,
    what: &str,
) {
    assert_eq!(a.shape(), b.shape(), "{what}: shape");
    let scale = 1.0 + b.amax();
    let mut worst = (0.0, 0, 0);
    for i in 0..a.nrows() {
        for j in 0..a.ncols() {
            let e = (a[(i, j)] - b[(i, j)]).abs();
            if e > worst.0 {
                worst = (e, i, j);
            }
        }
    }
    assert!(
        worst.0 <= tol * scale,
        "{what}: entry ({}, {}) [col {}] differs by {:.3e}: {} vs {}",
        worst.1,
        worst.2,
        sys.coordinate_label(worst.2),
        worst.0,
        a[(worst.1, worst.2)],
        b[(worst.1, worst.2)]
    );
}

/// Slider-crank: crank (length r) pivoted at the origin, rod (length l),
/// slider on the x axis. Optionally the crank angle is driven to `phi`.
pub fn slider_crank(r: f64, l: f64, phi: f64, driven: bool) -> Model {
    // exact pose at crank angle phi
    let (px, py) = (r * phi.cos(), r * phi.sin());
    let xs = px + (l * l - py * py).sqrt();
    let beta = (-py).atan2(xs - px);
    let bodies = vec![
        bar("crank", r, px / 2.0, py / 2.0, phi),
        bar("rod", l, (px + xs) / 2.0, py / 2.0, beta),
        body("slider", 0.5, 0.01, xs, 0.0, 0.0),
    ];
    let joints = vec![
        revolute("crank_pivot", ground([0.0, 0.0]), on(0, [-r / 2.0, 0.0])),
        revolute("crank_pin", on(0, [r / 2.0, 0.0]), on(1, [-l / 2.0, 0.0])),
        revolute("wrist_pin", on(1, [l / 2.0, 0.0]), on(2, [0.0, 0.0])),
        translational("guide", ground([0.0, 0.0]), on(2, [0.0, 0.0]), [1.0, 0.0]),
    ];
    let drivers = if driven {
        vec![joint_driver("motor", 0, phi)]
    } else {
        vec![]
    };
    model("slider-crank", bodies, joints, drivers, vec![])
}

/// Four-bar: ground pivots at (0, 0) and (d, 0); crank a, coupler b, rocker c
/// given by their pin positions p1 (crank tip) and p2 (rocker tip).
pub fn four_bar(d: f64, p1: [f64; 2], p2: [f64; 2]) -> Model {
    let len = |a: [f64; 2], b: [f64; 2]| ((b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2)).sqrt();
    let ang = |a: [f64; 2], b: [f64; 2]| (b[1] - a[1]).atan2(b[0] - a[0]);
    let mid = |a: [f64; 2], b: [f64; 2]| [(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0];
    let (o2, o4) = ([0.0, 0.0], [d, 0.0]);
    let (a, b, c) = (len(o2, p1), len(p1, p2), len(o4, p2));
    let (m1, m2, m3) = (mid(o2, p1), mid(p1, p2), mid(o4, p2));
    let bodies = vec![
        bar("crank", a, m1[0], m1[1], ang(o2, p1)),
        bar("coupler", b, m2[0], m2[1], ang(p1, p2)),
        bar("rocker", c, m3[0], m3[1], ang(o4, p2)),
    ];
    let joints = vec![
        revolute("crank_pivot", ground(o2), on(0, [-a / 2.0, 0.0])),
        revolute("crank_pin", on(0, [a / 2.0, 0.0]), on(1, [-b / 2.0, 0.0])),
        revolute("rocker_pin", on(1, [b / 2.0, 0.0]), on(2, [c / 2.0, 0.0])),
        revolute("rocker_pivot", ground(o4), on(2, [-c / 2.0, 0.0])),
    ];
    model("four-bar", bodies, joints, vec![], vec![])
}

/// Deterministic pseudo-random numbers in [−1, 1).
pub fn noise(seed: &mut u64) -> f64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    2.0 * ((*seed >> 11) as f64 / (1u64 << 53) as f64) - 1.0
}
