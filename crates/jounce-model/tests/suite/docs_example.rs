//! Every TOML block of docs/model-format.md is a valid model, and the
//! worked slider-crank example is consistent: its initial positions and
//! velocities satisfy the joints (to the 8 digits written in the file).

use jounce_model::{from_str, Attachment, BodyRef, JointKind, Model};

fn doc() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/model-format.md");
    std::fs::read_to_string(path).expect("docs/model-format.md exists")
}

fn toml_blocks(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        match (&mut current, line.trim_end()) {
            (None, "```toml") => current = Some((i + 1, String::new())),
            (Some(_), "```") => out.push(current.take().unwrap()),
            (Some((_, s)), l) => {
                s.push_str(l);
                s.push('\n');
            }
            _ => {}
        }
    }
    out
}

/// Global position and velocity of an attachment.
fn state(m: &Model, a: &Attachment) -> ([f64; 2], [f64; 2]) {
    match a.body {
        BodyRef::Ground => (a.point, [0.0, 0.0]),
        BodyRef::Body(i) => {
            let b = &m.bodies[i];
            let (s, c) = b.angle.sin_cos();
            let d = [
                c * a.point[0] - s * a.point[1],
                s * a.point[0] + c * a.point[1],
            ];
            let w = b.angular_velocity;
            (
                [b.position[0] + d[0], b.position[1] + d[1]],
                [b.velocity[0] - w * d[1], b.velocity[1] + w * d[0]],
            )
        }
    }
}

#[test]
fn all_doc_blocks_parse() {
    let blocks = toml_blocks(&doc());
    assert!(blocks.len() >= 3);
    // a block that includes a URDF names it relative to the model file:
    // the shipped examples' folder
    let origin = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/doc_block.toml");
    for (line, block) in &blocks {
        if let Err(e) = from_str(block, origin) {
            panic!("block at line {line}: {e}");
        }
    }
}

#[test]
fn worked_slider_crank_is_assembled_and_consistent() {
    // the last block of the planar sections (§14 on are spatial)
    let (_, block) = toml_blocks(&doc())
        .into_iter()
        .rfind(|(_, b)| b.contains("name = \"slider_crank\""))
        .unwrap();
    let m = from_str(&block, "slider_crank.toml").unwrap();
    assert_eq!(m.name, "slider_crank");
    assert_eq!((m.bodies.len(), m.joints.len(), m.drivers.len()), (3, 4, 1));
    for j in &m.joints {
        match &j.kind {
            JointKind::Revolute { a, b } => {
                let (pa, va) = state(&m, a);
                let (pb, vb) = state(&m, b);
                for k in 0..2 {
                    assert!(
                        (pa[k] - pb[k]).abs() < 1e-7,
                        "{}: positions {pa:?} {pb:?}",
                        j.name
                    );
                    assert!(
                        (va[k] - vb[k]).abs() < 1e-7,
                        "{}: velocities {va:?} {vb:?}",
                        j.name
                    );
                }
            }
            JointKind::Translational { a, b, axis } => {
                let (pa, _) = state(&m, a);
                let (pb, vb) = state(&m, b);
                let d = [pb[0] - pa[0], pb[1] - pa[1]];
                // Off-line distance and off-line velocity vanish (guide is ground).
                assert!((d[0] * axis[1] - d[1] * axis[0]).abs() < 1e-7);
                assert!((vb[0] * axis[1] - vb[1] * axis[0]).abs() < 1e-7);
            }
            k => panic!("unexpected joint {k:?}"),
        }
    }
    // Driver value and rate match the crank's initial angle and speed.
    let (f, df, _) = m.drivers[0].function.eval(0.0);
    assert!((f - m.bodies[0].angle).abs() < 1e-12);
    assert!((df - m.bodies[0].angular_velocity).abs() < 1e-12);
    // The gas force's breakpoints are the ends of its cycloidal rise.
    let bp = m.breakpoints();
    assert_eq!(bp.len(), 2);
    assert!((bp[0] - 0.1).abs() < 1e-15 && (bp[1] - 0.12).abs() < 1e-12);
}
