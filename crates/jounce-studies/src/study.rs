//! `jounce study`: the seed studies of `studies.md`, run from their shipped
//! models in `examples/studies/` and printed as the kind of table the
//! source shows.
//!
//! S1 (jalon-bayo Example 7.2, Table 7.4): the springy double pendulum in
//! body coordinates, for the nine spring cases, integrated by the
//! trapezoidal rule with positions (here accelerations and multipliers) as
//! Newton unknowns on the index-3 equations at the book's fixed step
//! h = 1e-3 — in its energy-conserving form (newmark, energy_conserving =
//! 1: discrete-gradient constraint forces) and, for comparison, in the
//! end-point form with the dissipative velocity projection — against a
//! variable-order Adams code (`adams_vo`, as the book's Shampine–Gordon
//! DE) on the index-1 form with coordinate projection
//! (`projection`; on plain `augmented` the positions drift off the joints
//! by 2 % of the model's size within 7 s at rtol 1e-6 and the drift check
//! stops the run, so its CPU time would be that of a partial run): maximum
//! relative energy error, constraint violation, work and CPU time of the
//! integration alone, next to the book's figures.

use std::fmt::Write as _;
use std::path::Path;

use jounce_io::RunSummary;

use jounce::error::RunError;
use jounce::run::{apply_overrides, run_model, Overrides};

/// The nine spring cases (k1, k2) of S1 and their model file stems.
pub const S1_CASES: [(&str, &str); 9] = [
    ("0", "0"),
    ("1e2", "1e2"),
    ("1e4", "1e4"),
    ("1e6", "1e6"),
    ("1e8", "1e8"),
    ("0", "1e2"),
    ("0", "1e4"),
    ("0", "1e6"),
    ("0", "1e8"),
];

/// jalon-bayo Table 7.4, per case: maximum energy error of the
/// trapezoidal rule and of DE, CPU seconds of each (1990s hardware);
/// `None` where DE did not converge.
pub const S1_BOOK: [(f64, Option<f64>, f64, Option<f64>); 9] = [
    (4.6e-4, Some(3.4e-3), 14.6, Some(11.2)),
    (2.7e-3, Some(7.3e-3), 17.2, Some(14.2)),
    (2.3e-3, Some(3.8e-3), 14.7, Some(18.0)),
    (1.2e-3, Some(2.0e-3), 12.1, Some(48.4)),
    (7.7e-5, Some(4.9e-3), 9.2, Some(342.6)),
    (4.0e-4, Some(1.7e-3), 14.2, Some(10.9)),
    (6.0e-5, Some(6.0e-5), 14.0, Some(12.1)),
    (1.0e-3, Some(3.5e-2), 11.7, Some(47.3)),
    (3.7e-3, None, 8.8, None),
];

/// The two runs of one S1 case.
#[derive(Clone, Debug, serde::Serialize)]
pub struct S1Case {
    /// k1, k2 as written in the model file name.
    pub k: (&'static str, &'static str),
    /// newmark (β = 1/4, γ = 1/2) at h = 1e-3: on index3 its
    /// energy-conserving form (energy_conserving = 1), on joint the
    /// book's scheme.
    pub trapezoidal: RunSummary,
    /// index3 only: the end-point form of the same rule (energy_conserving
    /// = 0), whose velocity projection dissipates.
    pub end_point: Option<RunSummary>,
    /// adams_vo on projection at the study's tolerance.
    pub adams: Option<RunSummary>,
}

/// Settings of an S1 study run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct S1Options {
    /// End time (the study's 20 s by default).
    pub t_end: Option<f64>,
    /// Tolerance of the Adams runs (rtol = atol).
    pub adams_tol: f64,
    /// Skip the Adams runs (they take minutes on the stiff cases).
    pub skip_adams: bool,
    /// Formulation of the trapezoidal runs: `index3` (body coordinates,
    /// the descriptor form) or `joint` (the book's joint coordinates, built
    /// from the same body-coordinate models).
    pub trapezoidal_formulation: String,
}

impl Default for S1Options {
    fn default() -> Self {
        Self {
            t_end: None,
            adams_tol: 1e-6,
            skip_adams: false,
            trapezoidal_formulation: "index3".into(),
        }
    }
}

fn run_case(
    examples: &Path,
    out: &Path,
    stem: &str,
    label: &str,
    o: Overrides,
) -> Result<RunSummary, RunError> {
    let file = examples.join(format!("{stem}.toml"));
    let mut model = jounce_model::load_file(&file)?;
    apply_overrides(&mut model, &o)?;
    let dir = out.join(format!("{stem}-{label}"));
    match run_model(&model, &dir, None) {
        Ok(s) => Ok(s),
        // a failed integration still wrote its summary: report it as a row
        Err(RunError::Integration { .. }) | Err(RunError::Setup(_)) => {
            let text = std::fs::read_to_string(dir.join("summary.json"))
                .map_err(|e| RunError::Io(jounce_io::IoError::new(&dir, e)))?;
            serde_json::from_str(&text).map_err(|e| RunError::Setup(format!("{stem}: {e}")))
        }
        Err(e) => Err(e),
    }
}

/// Run S1 from the models in `examples` (the `examples/studies` folder),
/// writing each run's output under `out`.
///
/// # Errors
/// A model that cannot be loaded or an output directory that cannot be
/// written; failed integrations are rows of the table, not errors.
pub fn s1(examples: &Path, out: &Path, opts: &S1Options) -> Result<Vec<S1Case>, RunError> {
    let mut cases = Vec::new();
    for k in S1_CASES {
        let stem = format!("s1_k1_{}_k2_{}", k.0, k.1);
        let body = opts.trapezoidal_formulation == "index3";
        let newmark = |energy_conserving: bool| Overrides {
            method: Some("newmark".into()),
            formulation: Some(opts.trapezoidal_formulation.clone()),
            step: Some(1e-3),
            t_end: opts.t_end,
            params: vec![(
                "energy_conserving".into(),
                if energy_conserving { 1.0 } else { 0.0 },
            )],
            ..Default::default()
        };
        let trapezoidal = run_case(examples, out, &stem, "newmark", newmark(body))?;
        let end_point = if body {
            Some(run_case(
                examples,
                out,
                &stem,
                "newmark-end-point",
                newmark(false),
            )?)
        } else {
            None
        };
        let adams = if opts.skip_adams {
            None
        } else {
            Some(run_case(
                examples,
                out,
                &stem,
                "adams_vo",
                Overrides {
                    method: Some("adams_vo".into()),
                    formulation: Some("projection".into()),
                    rtol: Some(opts.adams_tol),
                    atol: Some(opts.adams_tol),
                    t_end: opts.t_end,
                    ..Default::default()
                },
            )?)
        };
        cases.push(S1Case {
            k,
            trapezoidal,
            end_point,
            adams,
        });
    }
    // step size, CPU, energy and violations of every run against t: one
    // colour per spring case, one dash per scheme
    jounce::plot::styled_run_charts(
        out,
        &|_| true,
        "S1 springy double pendulum (colour: case k1, k2; dash: scheme)",
        &|labels| crate::style::grouped(labels, &|l| l.split('-').next().unwrap_or(l).to_string()),
    )?;
    Ok(cases)
}

fn energy(s: &RunSummary) -> String {
    if s.status == "completed" {
        format!("{:.1e}", s.accuracy.max_relative_energy_error)
    } else {
        "failed".into()
    }
}

/// The header of the S1 table, each trapezoidal column naming its variant
/// (accepted amendment of issue 31: on `index3` jounce's trapezoidal rule
/// is the energy-conserving form, in joint coordinates the book's plain
/// rule; the book's columns are the plain rule in joint coordinates).
pub fn s1_header(formulation: &str) -> String {
    let ours = if formulation == "index3" {
        "energy-conserving trapez. (index3, energy_conserving = 1)"
    } else {
        "plain trapez. (joint coordinates, as the book)"
    };
    format!(
        "| k1 | k2 | {ours} energy | max abs(Phi) | max abs(Phi_q v) | steps | Newton it. | \
         CPU s | end-point trapez. (index3, energy_conserving = 0) energy | Adams energy | \
         Adams steps | Adams CPU s | book plain trapez. (joint coordinates) energy | \
         book DE energy | book CPU plain trapez. / DE |"
    )
}

/// The S1 table: jounce's runs next to the book's Table 7.4.
pub fn s1_table(cases: &[S1Case], opts: &S1Options) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "S1 springy double pendulum (jalon-bayo Table 7.4), from the body-coordinate models, t = 0 .. {} s",
        cases.first().map_or(20.0, |c| c.trapezoidal.t_end)
    );
    let body = opts.trapezoidal_formulation == "index3";
    let _ = writeln!(
        t,
        "trapezoidal = newmark (beta 1/4, gamma 1/2) on {}{}, h = 1e-3; Adams = adams_vo on \
         projection, rtol = atol = {:e}; energy = max |E(t) - E(0)| / |E(0)|; CPU of the \
         integration alone",
        opts.trapezoidal_formulation,
        if body {
            " with energy_conserving = 1 (discrete-gradient constraint forces); end-point = \
             the same rule with energy_conserving = 0 (end-point constraint forces, \
             dissipative velocity projection)"
        } else {
            ""
        },
        opts.adams_tol
    );
    let _ = writeln!(t, "{}", s1_header(&opts.trapezoidal_formulation));
    let _ = writeln!(t, "|{}", "---|".repeat(15));
    for (c, book) in cases.iter().zip(S1_BOOK) {
        let tr = &c.trapezoidal;
        let (ae, asteps, acpu) = match &c.adams {
            Some(a) => (
                energy(a),
                format!("{}", a.work.steps_accepted),
                format!("{:.3}", a.work.cpu_seconds),
            ),
            None => ("-".into(), "-".into(), "-".into()),
        };
        let _ = writeln!(
            t,
            "| {} | {} | {} | {:.1e} | {:.1e} | {} | {} | {:.3} | {} | {} | {} | {} | {:.1e} | {} | {} / {} |",
            c.k.0,
            c.k.1,
            energy(tr),
            tr.accuracy.max_position_violation,
            tr.accuracy.max_velocity_violation,
            tr.work.steps_accepted,
            tr.work.newton_iterations,
            tr.work.cpu_seconds,
            c.end_point.as_ref().map_or("-".into(), energy),
            ae,
            asteps,
            acpu,
            book.0,
            book.1.map_or("no conv.".into(), |e| format!("{e:.1e}")),
            book.2,
            book.3.map_or("no conv.".into(), |e| format!("{e}")),
        );
    }
    if let (Some(first), Some(last)) = (cases.first(), cases.get(4)) {
        let ratio = last.trapezoidal.work.cpu_seconds / first.trapezoidal.work.cpu_seconds;
        let _ = write!(
            t,
            "CPU ratio (1e8, 1e8) / (0, 0): trapezoidal {ratio:.2} (book 0.63)"
        );
        if let (Some(a0), Some(a4)) = (&first.adams, &last.adams) {
            let _ = write!(
                t,
                ", Adams {:.1}{} (book 30.6)",
                a4.work.cpu_seconds / a0.work.cpu_seconds,
                if a4.status == "completed" {
                    ""
                } else {
                    " (failed)"
                }
            );
        }
        let _ = writeln!(t);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 31: the first column compared the energy-conserving variant
    /// with the book's plain trapezoidal rule without saying so.
    #[test]
    fn the_table_says_which_trapezoidal_rule_each_column_is() {
        let case = S1Case {
            k: ("0", "0"),
            trapezoidal: RunSummary::default(),
            end_point: None,
            adams: None,
        };
        let body = s1_table(std::slice::from_ref(&case), &S1Options::default());
        let header = body.lines().find(|l| l.starts_with("| k1")).unwrap();
        assert!(
            header.contains("| energy-conserving trapez. (index3"),
            "{header}"
        );
        assert!(header.contains("| end-point trapez. (index3"), "{header}");
        assert!(
            header.contains("| book plain trapez. (joint coordinates) energy"),
            "{header}"
        );
        let joint = S1Options {
            trapezoidal_formulation: "joint".into(),
            ..S1Options::default()
        };
        let header = s1_header(&joint.trapezoidal_formulation);
        assert!(
            header.contains("| plain trapez. (joint coordinates, as the book) energy"),
            "{header}"
        );
    }
}
