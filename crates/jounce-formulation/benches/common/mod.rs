//! Models shared by the benchmarks of this crate.

use jounce_mechanics::PlanarSystem;
use jounce_model::{Attachment, Body, BodyRef, Joint, JointKind, Model, Settings};

/// N uniform links of 1 kg and 1 m (I = 1/12 kg m²) in a horizontal line,
/// pinned to each other and the first to the ground at the origin; gravity
/// 9.81 m/s² in −y. Released at rest, the chain falls and swings.
pub fn chain(n: usize) -> PlanarSystem {
    let bodies = (0..n)
        .map(|i| Body {
            name: format!("link{i}"),
            mass: 1.0,
            inertia: 1.0 / 12.0,
            position: [i as f64 + 0.5, 0.0],
            angle: 0.0,
            velocity: [0.0, 0.0],
            angular_velocity: 0.0,
            points: vec![],
        })
        .collect();
    let joints = (0..n)
        .map(|i| Joint {
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
        })
        .collect();
    let model = Model {
        name: format!("chain of {n}"),
        source: "<bench>".into(),
        gravity: [0.0, -9.81],
        bodies,
        joints,
        drivers: vec![],
        forces: vec![],
        settings: Settings::default(),
        spatial: None,
    };
    PlanarSystem::from_model(&model).expect("the chain is a valid model")
}
