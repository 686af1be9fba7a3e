//! Redundant constraints in a run: which formulations run them and how,
//! whether they are consistent, and what is said about their reactions.
//!
//! Assembly names the redundant rows ([`Assembly::redundant_rows`]: rows
//! dependent on rows declared before them wherever the constraints hold).
//! Then:
//! - their consistency is measured ([`redundant_consistency()`]); a model
//!   with an inconsistent redundant row is refused before integrating;
//! - formulations that need Φ_q of full row rank (the KKT-based ones,
//!   partitioning, state_space) run on [`IndependentRows`], the system
//!   without the redundant rows; penalty and augmented_lagrangian run all
//!   rows as they are; `joint` (its closure rows in joint coordinates are
//!   not selected) refuses the model before integrating, naming the rows
//!   and the formulations that can run it;
//! - the multipliers written are the minimum-norm ones over all rows
//!   ([`MinimumNormReactions`]), and the run says that those of the
//!   redundant rows (and the rows they depend on) are not unique.
//!
//! The planar and the spatial run (and check) share all of it through
//! [`RunSystem`]: the system a formulation is built on, generic over the
//! mechanical system.

use jounce_formulation::{Formulation, FormulationKind};
use jounce_mechanics::{
    redundant_consistency, Assembly, IndependentRows, MechanicalSystem, MinimumNormReactions,
    NormalForce, RedundantRow, SystemQueries,
};
use jounce_model::Model;

use crate::error::RunError;
use crate::setup::{formulation_name, formulation_settings};

/// Times in (0, t_end] at which the consistency of redundant rows is
/// measured again when the model has drivers.
const DRIVER_SAMPLES: usize = 8;

/// Whether the formulation registered as `name` needs a constraint
/// Jacobian of full row rank, i.e. runs a redundant model on its
/// independent rows ([`IndependentRows`]):
/// [`FormulationKind::needs_independent_rows`] (true for an unknown name).
pub fn needs_independent_rows(name: &str) -> bool {
    name.parse()
        .map_or(true, FormulationKind::needs_independent_rows)
}

/// Whether the formulation registered as `name` can run a model with
/// redundant constraints: [`FormulationKind::runs_redundant`] (true for an
/// unknown name).
pub fn runs_redundant(name: &str) -> bool {
    name.parse().map_or(true, FormulationKind::runs_redundant)
}

/// The registered formulations that run a model with redundant rows.
pub fn formulations_for_redundant() -> Vec<&'static str> {
    FormulationKind::ALL
        .into_iter()
        .filter(|k| k.runs_redundant())
        .map(FormulationKind::name)
        .collect()
}

/// What a run knows about the model's redundant rows.
#[derive(Clone, Debug, Default)]
pub struct Redundancy {
    /// One entry per redundant row, with its consistency; empty when the
    /// model has none.
    pub rows: Vec<RedundantRow>,
    /// Row indices of `rows`.
    pub dropped: Vec<usize>,
    /// Friction elements whose normal force is the reaction of a redundant
    /// row or of a row a redundant row depends on, `(friction label, row
    /// label)`: that reaction is not unique, so neither is their friction,
    /// and every formulation refuses them.
    pub friction_on_redundant: Vec<(String, String)>,
}

/// The friction elements of `sys` whose normal force is the multiplier of
/// a row whose reaction is not unique: a redundant row, or a kept row a
/// redundant row depends on. Such a reaction is shared in any proportion
/// between the rows (statically indeterminate), and a formulation on the
/// independent rows, penalty and the augmented Lagrangian would each pick
/// another share, so the friction force would depend on the formulation.
fn friction_on_shared_reactions<S: MechanicalSystem + ?Sized>(
    sys: &S,
    asm: &Assembly,
    rows: &[RedundantRow],
) -> Vec<(String, String)> {
    let mut jf = vec![0.0; sys.nv()];
    (0..sys.n_friction_rows())
        .filter_map(|i| {
            let NormalForce::Multiplier(r) =
                sys.friction_row(0.0, &asm.q, &asm.v, i, &mut jf).normal
            else {
                return None;
            };
            let label = sys.constraint_label(r);
            let shared = rows
                .iter()
                .any(|red| red.row == r || red.depends_on.iter().any(|(l, _)| *l == label));
            shared.then(|| (sys.friction_label(i), label))
        })
        .collect()
}

impl Redundancy {
    /// The redundant rows of an assembled model and their consistency.
    pub fn analyse<S: MechanicalSystem + ?Sized>(
        model: &Model,
        sys: &S,
        asm: &Assembly,
    ) -> Redundancy {
        if asm.redundant_rows.is_empty() {
            return Redundancy::default();
        }
        // drivers move Φ with t: sample the run's interval too (a spatial
        // model's drivers are its own: `model.drivers` is the plane's)
        let driven = match &model.spatial {
            Some(sm) => !sm.drivers.is_empty(),
            None => !model.drivers.is_empty(),
        };
        let later: Vec<f64> = if !driven {
            Vec::new()
        } else {
            (1..=DRIVER_SAMPLES)
                .map(|k| model.settings.t_end * k as f64 / DRIVER_SAMPLES as f64)
                .collect()
        };
        let rows = redundant_consistency(
            sys,
            0.0,
            &asm.q,
            &asm.v,
            &asm.redundant_rows,
            model.settings.assembly_tol,
            &later,
        )
        .unwrap_or_else(|| {
            // the kept rows could not be assembled alone from the
            // assembled pose: nothing measured, so nothing claimed
            asm.redundant_rows
                .iter()
                .map(|&r| RedundantRow {
                    row: r,
                    label: sys.constraint_label(r),
                    depends_on: Vec::new(),
                    position_residual: f64::NAN,
                    velocity_residual: f64::NAN,
                    consistent: false,
                })
                .collect()
        });
        let friction_on_redundant = friction_on_shared_reactions(sys, asm, &rows);
        Redundancy {
            dropped: asm.redundant_rows.clone(),
            rows,
            friction_on_redundant,
        }
    }

    /// Whether there is anything redundant.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The labels of the redundant rows, comma-separated.
    pub fn labels(&self) -> String {
        self.rows
            .iter()
            .map(|r| r.label.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Why `formulation` cannot run this model, before integrating: an
    /// inconsistent redundant row or friction whose normal force is a
    /// redundant row's reaction (any formulation), or redundancy under
    /// `joint`.
    ///
    /// # Errors
    /// [`RunError::Setup`] naming the model file and the rows.
    pub fn refuse(&self, model: &Model, formulation: &str) -> Result<(), RunError> {
        let bad: Vec<String> = self
            .rows
            .iter()
            .filter(|r| !r.consistent)
            .map(|r| format!("{}: {}", r.label, r.verdict()))
            .collect();
        if !bad.is_empty() {
            return Err(RunError::Setup(format!(
                "{}: inconsistent redundant constraint(s): {}; a redundant row must hold \
                 wherever the rows it depends on hold (check the dimensions of the \
                 elements that close the loop twice, and drivers on redundant rows)",
                model.source,
                bad.join("; ")
            )));
        }
        if !self.friction_on_redundant.is_empty() {
            let which: Vec<String> = self
                .friction_on_redundant
                .iter()
                .map(|(f, r)| format!("friction of '{f}' on the reaction {r}"))
                .collect();
            return Err(RunError::Setup(format!(
                "{}: friction on a redundant joint: {}; that reaction is not unique (a \
                 redundant joint shares its load with the rows it depends on in any \
                 proportion), so neither is the friction force; remove the redundant \
                 joint, or model the friction on a joint that shares no load",
                model.source,
                which.join("; ")
            )));
        }
        if !self.is_empty() && !runs_redundant(formulation) {
            return Err(RunError::Setup(format!(
                "{}: formulation '{formulation}' cannot run a model with redundant constraints \
                 ({}): its closure constraints are solved in joint coordinates and need \
                 independent rows; remove the redundant joint(s) or use one of the \
                 formulations {}",
                model.source,
                self.labels(),
                formulations_for_redundant().join(", ")
            )));
        }
        Ok(())
    }

    /// The system `formulation` should run on: the independent rows when it
    /// needs them and the model has redundant rows, else `None` (the full
    /// system).
    pub fn independent_rows<'a, S: MechanicalSystem + ?Sized>(
        &self,
        sys: &'a S,
        formulation: &str,
    ) -> Option<IndependentRows<'a, S>> {
        (!self.is_empty() && needs_independent_rows(formulation))
            .then(|| IndependentRows::new(sys, &self.dropped))
    }

    /// The map from the formulation's multipliers to the minimum-norm ones
    /// over all rows, when the model has redundant rows.
    pub fn reactions<S: MechanicalSystem + ?Sized>(
        &self,
        sys: &S,
        formulation: &str,
    ) -> Option<MinimumNormReactions> {
        (!self.is_empty()).then(|| {
            MinimumNormReactions::new(sys, &self.dropped, !needs_independent_rows(formulation))
        })
    }

    /// The note a run writes about its reactions.
    pub fn reactions_note(&self) -> Option<String> {
        (!self.is_empty()).then(|| {
            format!(
                "redundant constraints: {} (consistent); reactions in these rows and the rows \
                 they depend on are not unique: the lambda columns hold the minimum-norm \
                 multipliers over all rows (the same for every formulation)",
                self.labels()
            )
        })
    }

    /// The lines `jounce check` prints per redundant row.
    pub fn report(&self) -> String {
        let mut s = String::new();
        for r in &self.rows {
            s.push_str(&format!("    {}: {}\n", r.label, r.verdict()));
            if !r.depends_on.is_empty() {
                let deps: Vec<String> = r
                    .depends_on
                    .iter()
                    .map(|(l, c)| format!("{c:+.4} {l}"))
                    .collect();
                s.push_str(&format!(
                    "      depends on: {} (at the assembled configuration)\n",
                    deps.join(", ")
                ));
            }
            s.push_str(
                "      its reaction is not unique (the load is shared with the rows it depends \
                 on): runs report the minimum-norm multipliers\n",
            );
        }
        if !self.is_empty() {
            let all = formulations_for_redundant();
            let indep: Vec<&str> = all
                .iter()
                .copied()
                .filter(|n| needs_independent_rows(n))
                .collect();
            let full: Vec<&str> = all
                .iter()
                .copied()
                .filter(|n| !needs_independent_rows(n))
                .collect();
            s.push_str(&format!(
                "    formulations that run this model: {} (on the independent rows), {} (all rows); \
                 not: {}\n",
                indep.join(", "),
                full.join(", "),
                FormulationKind::ALL
                    .into_iter()
                    .filter(|k| !k.runs_redundant())
                    .map(FormulationKind::name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        s
    }
}

/// The system a run builds its formulation on, with what it knows about
/// the model's redundant rows: the model's system for a model without
/// them and for the formulations that run all rows (penalty,
/// augmented_lagrangian), else its independent rows ([`IndependentRows`],
/// built once at set-up). Generic over the mechanical system: the planar
/// and the spatial run and check build and start their formulations
/// through it alike.
pub struct RunSystem<'a, S: MechanicalSystem + ?Sized> {
    sys: &'a S,
    /// The model's redundant rows, their consistency and the friction on
    /// them.
    pub redundancy: Redundancy,
    /// The system without its redundant rows, when it has any.
    independent: Option<IndependentRows<'a, S>>,
}

impl<'a, S: MechanicalSystem + ?Sized> RunSystem<'a, S> {
    /// The redundant rows of the assembled model analysed
    /// ([`Redundancy::analyse`]), and the independent rows set up when
    /// there are any. Refuses nothing: see [`RunSystem::refuse`].
    pub fn new(model: &Model, sys: &'a S, asm: &Assembly) -> RunSystem<'a, S> {
        let redundancy = Redundancy::analyse(model, sys, asm);
        let independent =
            (!redundancy.is_empty()).then(|| IndependentRows::new(sys, &redundancy.dropped));
        RunSystem {
            sys,
            redundancy,
            independent,
        }
    }

    /// Why the model's own formulation cannot run it
    /// ([`Redundancy::refuse`]).
    ///
    /// # Errors
    /// [`RunError::Setup`] naming the model file and the rows.
    pub fn refuse(&self, model: &Model) -> Result<(), RunError> {
        self.redundancy
            .refuse(model, formulation_name(model.settings.formulation.kind))
    }

    /// The formulation `kind` with the model's settings, built on the
    /// independent rows when it needs Φ_q of full row rank and the model
    /// has redundant rows, else on the model's system. Refuses nothing
    /// about redundancy itself (see [`RunSystem::refuse`]).
    ///
    /// # Errors
    /// [`RunError::Setup`] naming the model file when the factory refuses.
    pub fn build(
        &self,
        model: &Model,
        kind: FormulationKind,
    ) -> Result<Box<dyn Formulation + '_>, RunError> {
        let settings = formulation_settings(model);
        let built = match &self.independent {
            Some(rows) if kind.needs_independent_rows() => {
                jounce_formulation::build_kind(kind, &settings, rows)
            }
            _ => jounce_formulation::build_kind(kind, &settings, self.sys),
        };
        built.map_err(|e| RunError::Setup(format!("{}: {e}", model.source)))
    }

    /// The model's own formulation refused ([`RunSystem::refuse`]) or
    /// built ([`RunSystem::build`]) and started at the assembled state:
    /// the formulation and its initial state y₀.
    ///
    /// # Errors
    /// [`RunError::Setup`] naming the model file: the refusal, the
    /// factory's, or the formulation's at the initial state.
    pub fn start(
        &self,
        model: &Model,
        asm: &Assembly,
    ) -> Result<(Box<dyn Formulation + '_>, Vec<f64>), RunError> {
        self.refuse(model)?;
        let mut form = self.build(model, model.settings.formulation.kind)?;
        let y0 = form
            .initial_state(0.0, &asm.q, &asm.v)
            .map_err(|e| RunError::Setup(format!("{}: {e}", model.source)))?;
        Ok((form, y0))
    }

    /// Whether formulation `kind` runs the model as far as its start: it
    /// runs redundant rows if the model has them
    /// ([`FormulationKind::runs_redundant`]), is built
    /// ([`RunSystem::build`]) and starts at the assembled state.
    pub fn starts(&self, model: &Model, kind: FormulationKind, asm: &Assembly) -> bool {
        (self.redundancy.is_empty() || kind.runs_redundant())
            && self
                .build(model, kind)
                .is_ok_and(|mut f| f.initial_state(0.0, &asm.q, &asm.v).is_ok())
    }

    /// The map from the multipliers of the model's formulation to the
    /// minimum-norm ones over all rows, when the model has redundant rows
    /// ([`Redundancy::reactions`]), for the run's observer.
    pub fn reactions(&self, model: &Model) -> Option<MinimumNormReactions> {
        self.redundancy
            .reactions(self.sys, formulation_name(model.settings.formulation.kind))
    }

    /// The labels of the rows whose reactions are not unique (the
    /// summary's `non_unique_reactions`).
    pub fn non_unique_reactions(&self) -> Vec<String> {
        self.redundancy
            .rows
            .iter()
            .map(|r| r.label.clone())
            .collect()
    }
}
