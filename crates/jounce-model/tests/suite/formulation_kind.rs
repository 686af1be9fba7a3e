//! `FormulationKind`: the one list of formulation names, its parsing and
//! the model file's validation and suggestion made from it.

use jounce_model::{from_str, FormulationKind};

#[test]
fn every_name_parses_back_to_its_kind_and_the_names_are_distinct() {
    for (i, k) in FormulationKind::ALL.into_iter().enumerate() {
        assert_eq!(FormulationKind::NAMES[i], k.name());
        assert_eq!(k.name().parse::<FormulationKind>(), Ok(k));
        assert_eq!(
            format!(" {} ", k.name().to_uppercase()).parse::<FormulationKind>(),
            Ok(k)
        );
        assert_eq!(k.to_string(), k.name());
        assert!(!k.description().is_empty() && !k.description().contains('\n'));
        let same = FormulationKind::NAMES
            .iter()
            .filter(|n| **n == k.name())
            .count();
        assert_eq!(same, 1, "{} listed twice", k.name());
    }
    // the default is the first listed
    assert_eq!(FormulationKind::default(), FormulationKind::ALL[0]);
}

#[test]
fn an_unknown_name_is_refused_with_the_nearest_and_the_list() {
    let e = "augmentd".parse::<FormulationKind>().unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "unknown formulation 'augmentd' (did you mean 'augmented'?); known: {}",
            FormulationKind::NAMES.join(", ")
        )
    );
    let e = "xyzzy".parse::<FormulationKind>().unwrap_err().to_string();
    assert!(!e.contains("did you mean"), "{e}");
}

#[test]
fn the_redundancy_properties_are_those_documented() {
    use FormulationKind as F;
    let all_rows: Vec<_> = F::ALL
        .into_iter()
        .filter(|k| !k.needs_independent_rows())
        .collect();
    assert_eq!(all_rows, [F::Penalty, F::AugmentedLagrangian]);
    let refused: Vec<_> = F::ALL.into_iter().filter(|k| !k.runs_redundant()).collect();
    assert_eq!(refused, [F::Joint]);
}

#[test]
fn the_model_file_accepts_every_name_and_suggests_the_nearest_for_a_near_miss() {
    for k in FormulationKind::ALL {
        let text = format!("[settings]\nformulation = \"{}\"\n", k.name());
        let m = from_str(&text, "m.toml").unwrap();
        assert_eq!(m.settings.formulation.kind, k);
    }
    let err = from_str("[settings]\nformulation = \"state-space\"\n", "m.toml")
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        format!(
            "m.toml:2: [settings]: unknown formulation 'state-space' (valid: {}) (did you mean \
             'state_space'?)",
            FormulationKind::NAMES.join(", ")
        )
    );
}
