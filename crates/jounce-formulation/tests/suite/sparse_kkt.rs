//! The sparse KKT path (Schur complement Φ_q M⁻¹ Φ_qᵀ, `kkt.rs`) against
//! the dense LU with full pivoting: the same accelerations and multipliers
//! on every shipped example and on pendulum chains, the same named error
//! for redundant constraints, and the choice validated.

use std::path::Path;

use jounce_formulation::{build, Augmented, Formulation, FormulationError, FormulationSettings};
use jounce_formulation::{LinearSolver, NAMES};
use jounce_integrate::{EvalError, OdeProblem};
use jounce_mechanics::{assemble, MechanicalSystem, PlanarSystem, SystemQueries};
use jounce_model::{Attachment, Body, BodyRef, Joint, JointKind, Model, Settings};

/// N uniform links of 1 kg and 1 m hanging at an angle, pinned to each
/// other and the first to the ground; `extra` adds a second pin at the
/// last joint (redundant).
fn chain(n: usize, extra: bool) -> PlanarSystem {
    let (c, s) = (0.8_f64, -0.6_f64);
    let bodies = (0..n)
        .map(|i| Body {
            name: format!("link{i}"),
            mass: 1.0 + 0.1 * (i % 3) as f64,
            inertia: 1.0 / 12.0,
            position: [(i as f64 + 0.5) * c, (i as f64 + 0.5) * s],
            angle: s.atan2(c),
            velocity: [0.0, 0.0],
            angular_velocity: 0.0,
            points: vec![],
        })
        .collect();
    let pin = |i: usize| Joint {
        name: format!("pin{i}"),
        kind: JointKind::Revolute {
            a: if i == 0 {
                Attachment {
                    body: BodyRef::Ground,
                    point: [0.0, 0.0],
                }
            } else {
                Attachment {
                    body: BodyRef::Body(i - 1),
                    point: [0.5, 0.0],
                }
            },
            b: Attachment {
                body: BodyRef::Body(i),
                point: [-0.5, 0.0],
            },
        },
        friction: None,
    };
    let mut joints: Vec<Joint> = (0..n).map(pin).collect();
    if extra {
        let mut j = pin(n - 1);
        j.name = "duplicate".into();
        joints.push(j);
    }
    let model = Model {
        name: format!("chain of {n}"),
        source: "<test>".into(),
        gravity: [0.0, -9.81],
        bodies,
        joints,
        drivers: vec![],
        forces: vec![],
        settings: Settings::default(),
        spatial: None,
    };
    PlanarSystem::from_model(&model).expect("valid chain")
}

fn noise(seed: &mut u64) -> f64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
}

/// [dy; λ] of augmented with `solver` at a perturbed state (Baumgarte
/// terms on, so that every right-hand side term is exercised), and whether
/// the sparse path was taken.
fn solution(sys: &PlanarSystem, solver: LinearSolver, q: &[f64], v: &[f64]) -> (Vec<f64>, bool) {
    let mut f = Augmented::new(sys)
        .with_baumgarte(5.0, 5.0)
        .unwrap()
        .with_linear_solver(solver);
    let n = sys.nq();
    let y: Vec<f64> = q.iter().chain(v).copied().collect();
    let mut out = vec![0.0; 2 * n];
    f.rhs(0.3, &y, &mut out).unwrap();
    let sparse = f.uses_sparse_solver();
    let (mut qq, mut vv, mut lambda) = (vec![0.0; n], vec![0.0; n], vec![0.0; sys.nc()]);
    f.physical_state(0.3, &y, &mut qq, &mut vv, &mut lambda)
        .unwrap();
    out.extend_from_slice(&lambda);
    (out, sparse)
}

/// max |a − b| / max |b|.
fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(0.0_f64, |s, x| s.max(x.abs())).max(1e-300);
    a.iter()
        .zip(b)
        .fold(0.0_f64, |s, (x, y)| s.max((x - y).abs()))
        / scale
}

/// Sparse vs dense on `sys` near its assembled state; returns whether the
/// sparse path applied.
fn agree(sys: &PlanarSystem, what: &str) -> bool {
    let a = assemble(sys, 0.0, &sys.initial_q(), &sys.initial_v(), 1e-12).unwrap();
    let mut seed = 11;
    let q: Vec<f64> = a.q.iter().map(|x| x + 1e-3 * noise(&mut seed)).collect();
    let v: Vec<f64> = a.v.iter().map(|x| x + 0.5 * noise(&mut seed)).collect();
    let (dense, dense_used_sparse) = solution(sys, LinearSolver::Dense, &q, &v);
    assert!(!dense_used_sparse, "{what}: dense was asked for");
    let (auto, _) = solution(sys, LinearSolver::Auto, &q, &v);
    // auto: sparse, or the reduced dense path (S1's point masses)
    let e = rel_diff(&auto, &dense);
    eprintln!("{what}: auto vs dense {e:.1e}");
    assert!(e <= 1e-12, "{what}: auto vs dense differ by {e:e}");
    if !sys.mass_matrix_is_diagonal() || sys.nc() == 0 {
        return false;
    }
    let mut mass = nalgebra::DMatrix::zeros(sys.nq(), sys.nq());
    sys.mass_matrix(&q, &mut mass);
    if (0..sys.nq()).any(|i| mass[(i, i)] <= 0.0) {
        return false;
    }
    let (sparse, used) = solution(sys, LinearSolver::Sparse, &q, &v);
    assert!(used, "{what}: the sparse path was taken");
    let e = rel_diff(&sparse, &dense);
    eprintln!("{what}: sparse vs dense {e:.1e}");
    assert!(e <= 1e-12, "{what}: sparse vs dense differ by {e:e}");
    assert!(rel_diff(&auto, &dense) <= 1e-12, "{what}: auto");
    true
}

#[test]
fn sparse_and_dense_agree_on_the_shipped_examples() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut sparse_models = 0;
    for dir in ["examples", "examples/studies"] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        for path in files {
            let model = jounce_model::load_file(&path).unwrap();
            if model.spatial.is_some() {
                // spatial systems have no sparse path yet (issue 33)
                continue;
            }
            let sys = PlanarSystem::from_model(&model).unwrap();
            if agree(&sys, &path.display().to_string()) {
                sparse_models += 1;
            }
        }
    }
    assert!(sparse_models >= 4, "the sparse path was exercised");
}

#[test]
fn sparse_and_dense_agree_on_chains() {
    for n in [2, 10, 40] {
        assert!(agree(&chain(n, false), &format!("chain of {n}")));
    }
}

#[test]
fn redundant_constraints_are_named_by_the_sparse_path_too() {
    // 1 link: auto takes the reduced dense path; 20 links: the sparse one
    for (links, solver) in [
        (1, LinearSolver::Auto),
        (20, LinearSolver::Auto),
        (20, LinearSolver::Sparse),
    ] {
        let sys = chain(links, true);
        let (q, v) = (sys.initial_q(), sys.initial_v());
        let settings = FormulationSettings {
            linear_solver: solver,
            ..FormulationSettings::default()
        };
        for name in ["augmented", "projection", "index3", "odae"] {
            assert!(NAMES.contains(&name));
            let mut f = build(name, &settings, &sys).unwrap();
            let e = f.initial_state(0.0, &q, &v).unwrap_err();
            assert!(
                matches!(e, FormulationError::SingularJacobian(_)),
                "{name}: {e:?}"
            );
            let msg = e.to_string();
            assert!(
                msg.contains("redundant") && msg.contains("joint 'duplicate'"),
                "{name} ({solver}): {msg}"
            );
        }
        let mut f = Augmented::new(&sys).with_linear_solver(solver);
        let y: Vec<f64> = q.iter().chain(&v).copied().collect();
        let mut dy = vec![0.0; y.len()];
        match f.rhs(0.0, &y, &mut dy) {
            Err(EvalError::Singular { detail, .. }) => {
                assert!(detail.contains("joint 'duplicate'"), "{detail}");
            }
            other => panic!("expected a singular KKT matrix, got {other:?}"),
        }
    }
}

#[test]
fn sparse_is_refused_with_a_singular_mass_matrix_naming_the_coordinate() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/studies/s1_k1_0_k2_0.toml");
    let model = jounce_model::load_file(&path).unwrap();
    let sys = PlanarSystem::from_model(&model).unwrap();
    let settings = FormulationSettings {
        linear_solver: LinearSolver::Sparse,
        ..FormulationSettings::default()
    };
    let mut f = build("augmented", &settings, &sys).unwrap();
    let e = f
        .initial_state(0.0, &sys.initial_q(), &sys.initial_v())
        .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("sparse") && msg.contains("mass1.theta"),
        "{msg}"
    );
    // auto falls back to dense and runs
    let mut f = build("augmented", &FormulationSettings::default(), &sys).unwrap();
    assert!(f
        .initial_state(0.0, &sys.initial_q(), &sys.initial_v())
        .is_ok());
}
