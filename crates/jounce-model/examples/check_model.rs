//! Loads each model file given on the command line and prints either a
//! summary or the error (`cargo run -p jounce-model --example check_model -- FILE...`).

fn main() {
    for arg in std::env::args().skip(1) {
        match jounce_model::load_file(std::path::Path::new(&arg)) {
            Ok(m) => println!(
                "{arg}: ok: model '{}', {} bodies, {} joints, {} drivers, {} forces",
                m.name,
                m.bodies.len(),
                m.joints.len(),
                m.drivers.len(),
                m.forces.len()
            ),
            Err(e) => println!("{e}"),
        }
    }
}
