//! Property tests of assembly (issue 9, deliverable 6) over random planar
//! mechanisms written as model files: 1–4 bodies with random poses (angles
//! up to ±10 rad), points, velocities; 0–6 revolute, translational, rigid
//! and distance joints between random bodies and ground; sometimes a joint
//! or distance driver. For every model the parser accepts:
//! - building the system and assembling never panic;
//! - `assemble` either succeeds with max|Φ(q)| ≤ tol, recomputed here from
//!   the system, and Φ_q v + Φ_t ≈ 0 (to 1e-8 relative to |Φ_q| |v|), all
//!   finite, DOF = n − generic rank; or fails with a non-empty message;
//! - assembly is idempotent: assembling the assembled (q, v) again takes
//!   0 Newton iterations and returns the same q and DOF and, to rounding,
//!   the same v.
//!
//! Fixed seed, 512 cases.

use jounce_mechanics::{assemble, MechanicalSystem, PlanarSystem};
use nalgebra::{DMatrix, DVector};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

fn config() -> Config {
    Config {
        cases: 512,
        rng_seed: RngSeed::Fixed(0x6173_7365_6d62),
        failure_persistence: None,
        ..Config::default()
    }
}

#[derive(Clone, Debug)]
struct BodySpec {
    mass: f64,
    inertia: f64,
    x: f64,
    y: f64,
    angle: f64,
    vx: f64,
    vy: f64,
    omega: f64,
}

#[derive(Clone, Debug)]
struct JointSpec {
    kind: usize,
    b1: usize,
    b2: usize,
    p1: [f64; 2],
    p2: [f64; 2],
    axis: [f64; 2],
    length: f64,
}

fn coord() -> impl Strategy<Value = f64> {
    prop_oneof![4 => -2.0..2.0f64, 1 => Just(0.0), 1 => -1e3..1e3f64]
}

fn body() -> impl Strategy<Value = BodySpec> {
    (
        (1e-3..1e3f64, prop_oneof![Just(0.0), 1e-4..1e2f64]),
        (coord(), coord(), -10.0..10.0f64),
        (-5.0..5.0f64, -5.0..5.0f64, -5.0..5.0f64),
    )
        .prop_map(
            |((mass, inertia), (x, y, angle), (vx, vy, omega))| BodySpec {
                mass,
                inertia,
                x,
                y,
                angle,
                vx,
                vy,
                omega,
            },
        )
}

fn joint() -> impl Strategy<Value = JointSpec> {
    (
        0..4usize,
        (0..5usize, 0..5usize),
        ([coord(), coord()], [coord(), coord()]),
        prop_oneof![
            Just([1.0, 0.0]),
            Just([0.0, 1.0]),
            [-1.0..1.0f64, -1.0..1.0f64]
        ],
        1e-3..3.0f64,
    )
        .prop_map(|(kind, (b1, b2), (p1, p2), axis, length)| JointSpec {
            kind,
            b1,
            b2,
            p1,
            p2,
            axis,
            length,
        })
}

/// A model file for the bodies, joints and optional driver (on joint
/// `driver.0`, a polynomial a + b t).
fn model_text(
    bodies: &[BodySpec],
    joints: &[JointSpec],
    driver: Option<(usize, f64, f64)>,
) -> String {
    // body 0 is ground; body2 differs from body1
    let nb = bodies.len();
    let name = |i: usize| {
        if i == 0 {
            "ground".to_string()
        } else {
            format!("b{i}")
        }
    };
    let mut s = String::from("[model]\nname = \"random mechanism\"\n\n");
    for (i, b) in bodies.iter().enumerate() {
        s.push_str(&format!(
            "[[bodies]]\nname = \"b{}\"\nmass = {:e}\ninertia = {:e}\nposition = [{:e}, {:e}]\nangle = {:e}\nvelocity = [{:e}, {:e}]\nangular_velocity = {:e}\n\n",
            i + 1, b.mass, b.inertia, b.x, b.y, b.angle, b.vx, b.vy, b.omega
        ));
    }
    for (k, j) in joints.iter().enumerate() {
        let kind = ["revolute", "translational", "rigid", "distance"][j.kind];
        s.push_str(&format!(
            "[[joints]]\nname = \"j{k}\"\ntype = \"{kind}\"\nbody1 = \"{}\"\nbody2 = \"{}\"\n",
            name(j.b1 % (nb + 1)),
            name((j.b1 % (nb + 1) + 1 + j.b2 % nb) % (nb + 1))
        ));
        if kind != "rigid" {
            s.push_str(&format!(
                "point1 = [{:e}, {:e}]\npoint2 = [{:e}, {:e}]\n",
                j.p1[0], j.p1[1], j.p2[0], j.p2[1]
            ));
        }
        if kind == "translational" {
            s.push_str(&format!("axis = [{:e}, {:e}]\n", j.axis[0], j.axis[1]));
        }
        if kind == "distance" {
            s.push_str(&format!("length = {:e}\n", j.length));
        }
        s.push('\n');
    }
    // a driver on a revolute or translational joint, if there is one
    let drivable: Vec<usize> = (0..joints.len()).filter(|&k| joints[k].kind < 2).collect();
    if let (Some((k, a, b)), false) = (driver, drivable.is_empty()) {
        let k = drivable[k % drivable.len()];
        s.push_str(&format!(
            "[[drivers]]\nname = \"d\"\ntype = \"joint\"\njoint = \"j{k}\"\nfunction = {{ type = \"polynomial\", coefficients = [{a:e}, {b:e}] }}\n\n"
        ));
    }
    s
}

fn mechanism() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(body(), 1..5),
        prop::collection::vec(joint(), 0..7),
        prop::option::weighted(0.3, (0..7usize, -3.0..3.0f64, -3.0..3.0f64)),
    )
        .prop_map(|(b, j, d)| model_text(&b, &j, d))
}

fn amax(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |m, v| m.max(v.abs()))
}

/// The properties on one model; returns what happened.
fn check_assembly(text: &str, tol: f64) -> Result<&'static str, TestCaseError> {
    let model = match jounce_model::from_str(text, "random.toml") {
        Ok(m) => m,
        Err(e) => {
            prop_assert!(!e.to_string().is_empty());
            return Ok("rejected by the parser");
        }
    };
    let sys = match PlanarSystem::from_model(&model) {
        Ok(s) => s,
        Err(e) => {
            prop_assert!(!e.to_string().is_empty());
            return Ok("rejected by the mechanics");
        }
    };
    let (n, m) = (sys.nq(), sys.nc());
    let a = match assemble(&sys, 0.0, &sys.initial_q(), &sys.initial_v(), tol) {
        Ok(a) => a,
        Err(e) => {
            prop_assert!(e.to_string().len() > 10, "terse error {e}");
            return Ok("assembly failed with a message");
        }
    };
    prop_assert!(a.q.iter().chain(&a.v).all(|x| x.is_finite()), "{a:?}");
    // |Φ| recomputed from the system, not the report
    let mut phi = vec![0.0; m];
    sys.constraints(0.0, &a.q, &mut phi);
    prop_assert!(
        amax(&phi) <= tol,
        "|Phi| = {} > tol {tol}\n{text}",
        amax(&phi)
    );
    prop_assert!(a.position_residual <= tol);
    // velocity level: Φ_q v + Φ_t = 0 to rounding of Φ_q v
    let mut jac = DMatrix::zeros(m, n);
    sys.constraint_jacobian(0.0, &a.q, &mut jac);
    let mut phi_t = vec![0.0; m];
    sys.constraint_time_derivative(0.0, &a.q, &mut phi_t);
    let v = DVector::from_column_slice(&a.v);
    let res = (&jac * &v + DVector::from_column_slice(&phi_t)).amax();
    let scale = 1.0 + jac.amax() * v.amax() + amax(&phi_t);
    prop_assert!(res <= 1e-8 * scale, "|Phi_q v + Phi_t| = {res}\n{text}");
    prop_assert!(a.dof == n - a.generic_rank && a.rank <= a.generic_rank);

    // idempotent: the assembled state is already assembled
    let b = assemble(&sys, 0.0, &a.q, &a.v, tol);
    prop_assert!(b.is_ok(), "re-assembly failed: {:?}\n{text}", b.err());
    let b = b.unwrap();
    prop_assert_eq!(b.iterations, 0);
    prop_assert_eq!(&b.q, &a.q);
    prop_assert_eq!(b.dof, a.dof);
    let dv =
        a.v.iter()
            .zip(&b.v)
            .fold(0.0f64, |d, (x, y)| d.max((x - y).abs()));
    prop_assert!(dv <= 1e-8 * (1.0 + amax(&a.v)), "v moved by {dv}");
    Ok(if m == 0 {
        "assembled (no constraints)"
    } else {
        "assembled"
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn assembly_meets_its_tolerance_or_explains(text in mechanism(), tol_exp in -12i32..-4) {
        check_assembly(&text, 10f64.powi(tol_exp))?;
    }
}

/// The generator reaches assembly: most models parse, and a good share
/// of them assemble with constraints (the property is not vacuous).
#[test]
fn generated_mechanisms_reach_assembly() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::new(config());
    let mut counts = std::collections::BTreeMap::new();
    for _ in 0..256 {
        let text = mechanism().new_tree(&mut runner).unwrap().current();
        let what = check_assembly(&text, 1e-10).unwrap();
        *counts.entry(what).or_insert(0) += 1;
    }
    println!("{counts:?}");
    assert!(
        counts.get("assembled").copied().unwrap_or(0) >= 40,
        "{counts:?}"
    );
    assert!(
        counts
            .get("assembly failed with a message")
            .copied()
            .unwrap_or(0)
            >= 10,
        "{counts:?}"
    );
}
