//! `jounce methods`: the integrator registry as a table.

use jounce_integrate::method::{self, Family, MethodInfo};

fn family_label(f: Family) -> &'static str {
    match f {
        Family::ExplicitRk => "explicit RK",
        Family::Multistep => "multistep",
        Family::ImplicitRk => "implicit RK",
        Family::Rosenbrock => "Rosenbrock",
        Family::Structural => "structural",
        Family::Exponential => "exponential",
    }
}

/// The problem forms a method integrates, by their labels
/// ("ode", "second-order, index-3").
fn forms_label(i: &MethodInfo) -> String {
    let labels: Vec<&str> = i.accepts().iter().map(|f| f.label()).collect();
    labels.join(", ")
}

/// The registry as a plain-text table (one method per line).
pub fn methods_table() -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "{:<20} {:<12} {:>5} {:>8} {:<9} {:<14} {:<5} {:<8} {:<21} {}\n",
        "name",
        "family",
        "order",
        "embedded",
        "implicit",
        "stability",
        "stiff",
        "adaptive",
        "forms",
        "source"
    ));
    for m in method::all() {
        let i = &m.info;
        s.push_str(&format!(
            "{:<20} {:<12} {:>5} {:>8} {:<9} {:<14} {:<5} {:<8} {:<21} {}\n",
            i.name,
            family_label(i.family),
            i.order,
            i.embedded_order
                .map(|o| o.to_string())
                .unwrap_or_else(|| "-".into()),
            if i.implicit { "implicit" } else { "explicit" },
            i.stability.label(),
            if i.stiff { "yes" } else { "no" },
            if i.adaptive { "yes" } else { "no" },
            forms_label(i),
            i.source
        ));
    }
    s
}

/// The registry as JSON (for scripts).
pub fn methods_json() -> String {
    let rows: Vec<serde_json::Value> = method::all()
        .iter()
        .map(|m| {
            let i = &m.info;
            serde_json::json!({
                "name": i.name,
                "title": i.title,
                "family": family_label(i.family),
                "order": i.order,
                "embedded_order": i.embedded_order,
                "implicit": i.implicit,
                "stability": i.stability.label(),
                "stiff": i.stiff,
                "adaptive": i.adaptive,
                "forms": i.accepts().iter().map(|f| f.label()).collect::<Vec<_>>(),
                "source": i.source,
                "advice": i.advice,
            })
        })
        .collect();
    serde_json::to_string_pretty(&rows).unwrap_or_default()
}
