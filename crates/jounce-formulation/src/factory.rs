//! Formulations by name, with one settings struct for all of them.

use jounce_integrate::ProblemForm;
use jounce_mechanics::{MechanicalSystem, SystemQueries};
pub use jounce_model::FormulationKind;

use crate::augmented::Augmented;
use crate::augmented_lagrangian::AugmentedLagrangian;
use crate::dae_formulation::DaeFormulation;
use crate::error::FormulationError;
use crate::formulation::Formulation;
use crate::friction::FrictionAugmented;
use crate::joint::Joint;
use crate::linear_solver::LinearSolver;
use crate::manifold_partitioning::ManifoldPartitioning;
use crate::odae::Odae;
use crate::partitioning::Partitioning;
use crate::penalty::Penalty;
use crate::projection::Projection;
use crate::state_space::StateSpace;

/// Registry names of the formulations, in the order `jounce` lists them
/// ([`FormulationKind::NAMES`]).
pub const NAMES: [&str; 10] = FormulationKind::NAMES;

/// The problem forms the formulation `kind` offers
/// ([`jounce_integrate::OdeProblem::forms`]); a method can run it when
/// one of these is among `MethodInfo::accepts`.
///
/// - augmented, projection, penalty, joint: the first-order ODE y = [q; v]
///   (joint: of the joint coordinates) and the second-order form for
///   structural methods;
/// - partitioning: the first-order ODE in the independent coordinates
///   only;
/// - state_space: the same, made for implicit methods (a partition the
///   constraints are linear in, warm starts from the accepted step, no
///   re-partitioning inside a step);
/// - index3: the index-3 DAE, as the constrained second-order problem of
///   the structural family and as the implicit DAE of bdf and radau5;
/// - ggl: the stabilised index-2 DAE only;
/// - odae: the overdetermined DAE only (augmented's ODE with the position
///   and velocity constraints as invariants, for bdf and ndf): an ODE
///   method would ignore the invariants and run augmented under another
///   name;
/// - augmented_lagrangian: its own index-3 form for the structural
///   methods.
///
/// (The forms are types of jounce-integrate, which the model crate that
/// defines [`FormulationKind`] does not depend on; this match is
/// exhaustive, so a new kind cannot be left out.)
pub const fn forms(kind: FormulationKind) -> &'static [ProblemForm] {
    use FormulationKind as K;
    match kind {
        K::Augmented | K::Projection | K::Penalty | K::Joint => {
            &[ProblemForm::FirstOrder, ProblemForm::SecondOrder]
        }
        K::Partitioning | K::StateSpace => &[ProblemForm::FirstOrder],
        K::Index3 => &[ProblemForm::ConstrainedSecondOrder, ProblemForm::Dae],
        K::Ggl => &[ProblemForm::Dae],
        K::Odae => &[ProblemForm::Overdetermined],
        K::AugmentedLagrangian => &[ProblemForm::AugmentedLagrangian],
    }
}

/// The command line help of `--formulation`: one line per
/// [`FormulationKind::ALL`], `name: description`.
pub fn help() -> String {
    let mut s = String::from("Formulation, overriding the model file; one of:");
    for k in FormulationKind::ALL {
        s.push_str(&format!("\n  {}: {}", k.name(), k.description()));
    }
    s
}

/// [`forms`] of the formulation registered as `name`; empty for an
/// unknown name.
pub fn provides(name: &str) -> &'static [ProblemForm] {
    name.parse().map_or(&[], forms)
}

/// Parameters of every formulation; each uses its own fields.
#[derive(Clone, Debug, PartialEq)]
pub struct FormulationSettings {
    /// Baumgarte damping α (1/s) of `augmented`; 0 = off.
    pub baumgarte_alpha: f64,
    /// Baumgarte frequency β (1/s) of `augmented`; 0 = off.
    pub baumgarte_beta: f64,
    /// Penalty factor α of `penalty` (units of mass; Bayo: ≈ 1e7).
    pub penalty_factor: f64,
    /// Natural frequency ω (rad/s) of the penalty constraint dynamics.
    pub penalty_omega: f64,
    /// Damping ratio ξ of the penalty constraint dynamics.
    pub penalty_xi: f64,
    /// `partitioning` and `state_space`: re-partition when κ₁(Φ_q,d)
    /// exceeds this multiple of the best block's.
    pub partition_ratio: f64,
    /// `partitioning` and `state_space`: re-partition when κ₁(Φ_q,d)
    /// exceeds this.
    pub partition_condition_max: f64,
    /// `projection`: project when ‖Φ‖∞ or ‖Φ'‖∞ exceeds this.
    pub projection_tol: f64,
    /// Penalty p of `augmented_lagrangian`, relative to the largest
    /// diagonal entry of M (dimensionless; the Newton matrix is
    /// M + … + p·max M_ii·Φ_qᵀΦ_q at every step size).
    pub al_penalty: f64,
    /// Linear solver of the KKT system (augmented, projection, index3,
    /// ggl, odae).
    pub linear_solver: LinearSolver,
}

impl Default for FormulationSettings {
    /// No Baumgarte terms; penalty α = 1e7, ω = 10, ξ = 1 (the values of
    /// Bayo et al. 1988 and jalon-bayo problem 7/4); re-partitioning at
    /// ratio 2 or κ₁ = 1e6; projection tolerance 1e-10; linear solver
    /// chosen automatically.
    fn default() -> Self {
        Self {
            baumgarte_alpha: 0.0,
            baumgarte_beta: 0.0,
            penalty_factor: 1e7,
            penalty_omega: 10.0,
            penalty_xi: 1.0,
            partition_ratio: 2.0,
            partition_condition_max: 1e6,
            projection_tol: 1e-10,
            al_penalty: 1e4,
            linear_solver: LinearSolver::Auto,
        }
    }
}

/// Build the formulation registered as `name` for `sys` (the name parsed
/// as a [`FormulationKind`], then [`build_kind`]).
///
/// # Errors
/// [`FormulationError::Unknown`] for an unknown name, and those of
/// [`build_kind`].
pub fn build<'a, S: MechanicalSystem + ?Sized>(
    name: &str,
    settings: &FormulationSettings,
    sys: &'a S,
) -> Result<Box<dyn Formulation + 'a>, FormulationError> {
    let kind = name
        .parse()
        .map_err(|_| FormulationError::Unknown(name.to_string()))?;
    build_kind(kind, settings, sys)
}

/// Whether the formulation `kind` takes `sys` by the rules that need no
/// construction (cheap: what `jounce check` lists without building every
/// formulation of a large model): positions that are not velocities,
/// friction solved with the accelerations. A formulation admitted here may
/// still refuse the system when built (no degrees of freedom for the
/// partitioning ones, redundant constraints, settings).
///
/// # Errors
/// As [`build_kind`], for these rules.
pub fn admits<S: MechanicalSystem + ?Sized>(
    kind: FormulationKind,
    sys: &S,
) -> Result<(), FormulationError> {
    use FormulationKind as K;
    // positions that are not velocities (unit quaternions): augmented,
    // projection, penalty, index3, ggl, odae and augmented_lagrangian
    // integrate q' = T(q) v (or update q by the exponential map) and keep
    // q on its manifold; partitioning and state_space partition
    // [Φ; |p|² − 1] (ManifoldPartitioning); joint integrates q' = T(q) v
    // of its own joint coordinates (the quaternions of free joints
    // normalised after each step, as augmented); friction rows are solved
    // for by augmented only (FrictionAugmented, on either kind of
    // positions), so that rule comes first and names the element
    if sys.n_friction_rows() > 0 && kind != K::Augmented {
        return Err(FormulationError::BadParameter {
            formulation: kind.name().to_string(),
            detail: format!(
                "the friction of '{}' (stick–slip, or on a translational joint, where the normal \
                 force is a multiplier) is solved for with the accelerations: only the augmented \
                 formulation runs it (regularised friction on contacts runs everywhere)",
                sys.friction_label(0)
            ),
        });
    }
    let manifold = sys.nq() != sys.nv();
    if manifold && kind == K::Joint && sys.joint_coordinates().is_none() {
        return Err(FormulationError::PositionsNotVelocities {
            formulation: kind.name().to_string(),
            nq: sys.nq(),
            nv: sys.nv(),
        });
    }
    Ok(())
}

/// Build the formulation `kind` for `sys`.
///
/// # Errors
/// [`FormulationError::BadParameter`] for settings out of range or
/// friction solved with the accelerations under another formulation than
/// `augmented`, [`FormulationError::PositionsNotVelocities`] for a system
/// whose positions and velocities differ in number (unit quaternions)
/// and `joint` without joint coordinates.
pub fn build_kind<'a, S: MechanicalSystem + ?Sized>(
    kind: FormulationKind,
    settings: &FormulationSettings,
    sys: &'a S,
) -> Result<Box<dyn Formulation + 'a>, FormulationError> {
    use FormulationKind as K;
    let s = settings;
    admits(kind, sys)?;
    let manifold = sys.nq() != sys.nv();
    let f: Box<dyn Formulation + 'a> = match kind {
        K::Augmented if sys.n_friction_rows() > 0 => Box::new(FrictionAugmented::new(
            sys,
            s.baumgarte_alpha,
            s.baumgarte_beta,
        )?),
        K::Augmented => Box::new(
            Augmented::with_solver(sys, s.linear_solver)
                .with_baumgarte(s.baumgarte_alpha, s.baumgarte_beta)?,
        ),
        K::Partitioning | K::StateSpace if manifold => Box::new(ManifoldPartitioning::new(
            sys,
            kind.name(),
            s.partition_ratio,
            s.partition_condition_max,
        )?),
        K::Partitioning => Box::new(Partitioning::new(
            sys,
            s.partition_ratio,
            s.partition_condition_max,
        )?),
        K::Projection => {
            Box::new(Projection::new(sys, s.projection_tol)?.with_linear_solver(s.linear_solver))
        }
        K::StateSpace => Box::new(StateSpace::new(
            sys,
            s.partition_ratio,
            s.partition_condition_max,
        )?),
        K::Penalty => Box::new(
            Penalty::new(sys, s.penalty_factor, s.penalty_omega, s.penalty_xi)?
                .with_linear_solver(s.linear_solver),
        ),
        K::Index3 => Box::new(DaeFormulation::index3(sys).with_linear_solver(s.linear_solver)),
        K::Ggl => Box::new(DaeFormulation::ggl(sys).with_linear_solver(s.linear_solver)),
        K::Odae => Box::new(Odae::new(sys).with_linear_solver(s.linear_solver)),
        K::AugmentedLagrangian => Box::new(
            AugmentedLagrangian::new(sys, s.al_penalty)?.with_linear_solver(s.linear_solver),
        ),
        K::Joint => Box::new(Joint::new(sys)?.with_baumgarte(s.baumgarte_alpha, s.baumgarte_beta)?),
    };
    // contact gaps and other switching functions become events of
    // whichever formulation runs the system
    Ok(
        if sys.n_switching_functions() > 0 || f.n_mode_events() > 0 {
            Box::new(crate::switching::Switched::new(f, sys))
        } else {
            f
        },
    )
}
