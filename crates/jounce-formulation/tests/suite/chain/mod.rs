//! The pendulum chain of the tests: `n` uniform 1 m links pinned end to
//! end, the first to the ground at the origin, released horizontal under
//! gravity (the chains of `examples/benchmarks/`): n_q = 3n, m = 2n.

use jounce_mechanics::PlanarSystem;
use jounce_model::{Attachment, Body, BodyRef, Joint, JointKind, Model, Settings};

/// The chain's model.
pub fn chain_model(n: usize) -> Model {
    let bodies = (0..n)
        .map(|i| Body {
            name: format!("link{i}"),
            mass: 1.0,
            inertia: 1.0 / 12.0,
            position: [i as f64 + 0.5, 0.0],
            angle: 0.0,
            velocity: [0.0; 2],
            angular_velocity: 0.0,
            points: vec![],
        })
        .collect();
    let joints = (0..n)
        .map(|i| Joint {
            name: format!("pin{i}"),
            kind: JointKind::Revolute {
                a: Attachment {
                    body: if i == 0 {
                        BodyRef::Ground
                    } else {
                        BodyRef::Body(i - 1)
                    },
                    point: if i == 0 { [0.0, 0.0] } else { [0.5, 0.0] },
                },
                b: Attachment {
                    body: BodyRef::Body(i),
                    point: [-0.5, 0.0],
                },
            },
            friction: None,
        })
        .collect();
    Model {
        name: format!("chain of {n}"),
        source: "<test>".into(),
        gravity: [0.0, -9.81],
        bodies,
        joints,
        drivers: vec![],
        forces: vec![],
        settings: Settings::default(),
        spatial: None,
    }
}

/// The chain's system.
#[allow(dead_code)] // not every test binary that includes the module uses it
pub fn pendulum_chain(n: usize) -> PlanarSystem {
    PlanarSystem::from_model(&chain_model(n)).expect("valid chain")
}
