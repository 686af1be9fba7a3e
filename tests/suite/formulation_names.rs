//! The formulation names are `FormulationKind::ALL` everywhere they are
//! listed: the README's formulation table, `jounce run --help` and the
//! formulations `jounce check` says can run a model. A formulation added
//! to the enum and forgotten in one of them (as `augmented_lagrangian` was
//! in `--help`) fails here.

use crate::support;

use jounce_model::FormulationKind;
use support::{jounce, repo};

fn all_names() -> Vec<String> {
    FormulationKind::ALL
        .iter()
        .map(|k| k.name().to_string())
        .collect()
}

/// The first-column names of the table under "## Formulations".
fn readme_table() -> Vec<String> {
    let text = std::fs::read_to_string(repo("README.md")).unwrap();
    let section = text
        .split("\n## Formulations\n")
        .nth(1)
        .expect("README has a Formulations section");
    section
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2) // header and rule
        .map(|l| {
            let cell = l.split('|').nth(1).unwrap().trim();
            let name = cell.split('`').nth(1).unwrap_or(cell);
            name.to_string()
        })
        .collect()
}

/// The `name: description` lines of `--formulation` in `jounce run --help`.
fn run_help() -> Vec<String> {
    let (code, out, err) = jounce(&["run", "--help"]);
    assert_eq!(code, 0, "{err}");
    let section = out
        .split("--formulation <FORMULATION>")
        .nth(1)
        .unwrap_or_else(|| panic!("no --formulation in:\n{out}"));
    section
        .lines()
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with('-'))
        .filter_map(|l| l.trim().split_once(": ").map(|(n, _)| n.to_string()))
        .collect()
}

/// The formulations `jounce check` lists as able to run `model`.
fn check_list(model: &str) -> Vec<String> {
    let (code, out, err) = jounce(&["check", repo(model).to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let line = out
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("formulations that can run this model: ")
        })
        .unwrap_or_else(|| panic!("no formulation list in:\n{out}"));
    line.split(", ").map(str::to_string).collect()
}

#[test]
fn readme_run_help_and_check_list_the_formulations_of_formulation_kind_all() {
    let all = all_names();
    assert_eq!(readme_table(), all, "README.md's formulation table");
    assert_eq!(run_help(), all, "jounce run --help, --formulation");
    // a model without redundant constraints: every formulation can run it
    assert_eq!(
        check_list("examples/four_bar.toml"),
        all,
        "jounce check examples/four_bar.toml"
    );
}

/// `--method`'s help lists the method registry, and `check` names the
/// formulations the model's integrator runs among those that can run it.
#[test]
fn run_help_lists_the_method_registry_and_check_the_pairings() {
    let (code, out, err) = jounce(&["run", "--help"]);
    assert_eq!(code, 0, "{err}");
    let help: String = out.split_whitespace().collect::<Vec<_>>().join(" ");
    let names = jounce_integrate::method::names();
    assert!(names.len() > 10);
    assert!(
        help.contains(&format!("one of: {} (", names.join(", "))),
        "{out}"
    );
    let (code, out, err) = jounce(&["check", repo("examples/four_bar.toml").to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let model = jounce_model::load_file(&repo("examples/four_bar.toml")).unwrap();
    let method = &model.settings.integrator.method;
    let info = &jounce_integrate::method::find(method).unwrap().info;
    let want: Vec<&str> = FormulationKind::ALL
        .iter()
        .map(|k| k.name())
        .filter(|n| jounce::setup::incompatibility(info, n).is_none())
        .collect();
    assert!(!want.is_empty());
    assert!(
        out.contains(&format!(
            "of those, integrator '{}' runs: {}\n",
            info.name,
            want.join(", ")
        )),
        "{out}"
    );
}

/// On a spatial model `check` lists exactly the formulations that run it:
/// each one listed runs 10 ms of the model with an integrator that takes
/// its form (radau5 for the DAE forms, generalized-α for the augmented
/// Lagrangian, dop853 otherwise); each one left out is refused by `run`.
#[test]
fn check_lists_the_formulations_that_run_a_spatial_model() {
    for model in [
        "examples/heavy_top.toml",
        "examples/tumbling_body.toml",
        "examples/spatial_slider_crank.toml",
    ] {
        let listed = check_list(model);
        assert!(
            listed.iter().any(|n| n == "augmented"),
            "{model}: {listed:?}"
        );
        for name in all_names() {
            let method = match name.as_str() {
                "index3" | "ggl" => "radau5",
                "odae" => "bdf",
                "augmented_lagrangian" => "generalized_alpha",
                _ => "dop853",
            };
            let out = support::scratch(&format!("check_spatial_{name}"));
            let (code, stdout, err) = jounce(&[
                "run",
                repo(model).to_str().unwrap(),
                "--formulation",
                &name,
                "--method",
                method,
                "--t-end",
                "0.01",
                "-q",
                "-o",
                out.to_str().unwrap(),
            ]);
            if listed.contains(&name) {
                assert_eq!(
                    code, 0,
                    "{model}: {name} is listed but fails:\n{stdout}{err}"
                );
            } else {
                assert_ne!(code, 0, "{model}: {name} is not listed but runs");
                assert!(
                    err.contains(&name),
                    "{model}: {name} refused without its name: {err}"
                );
            }
        }
    }
}
