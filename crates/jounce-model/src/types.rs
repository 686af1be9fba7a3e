//! The validated model: what a model file says, with every reference
//! resolved to an index and every value checked. This is the contract
//! between the parser (`parse.rs`, `validate.rs`) and the mechanics layer,
//! which builds a runtime system from it. Immutable after loading.
//!
//! Units are SI throughout: m, kg, kg·m², s, rad, N, N·m.

use std::collections::BTreeMap;

use crate::time_function::TimeFunction;

/// A body reference: the fixed ground or a moving body (index into
/// [`Model::bodies`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyRef {
    /// The fixed ground frame (pose x = y = θ = 0).
    Ground,
    /// Moving body with this index.
    Body(usize),
}

impl BodyRef {
    /// The moving body's index, `None` for the ground.
    pub fn index(self) -> Option<usize> {
        match self {
            Self::Ground => None,
            Self::Body(i) => Some(i),
        }
    }
}

/// A planar rigid body. Coordinates are (x, y, θ) of its centre of mass.
#[derive(Clone, Debug, PartialEq)]
pub struct Body {
    /// Unique name.
    pub name: String,
    /// Mass m > 0 \[kg\].
    pub mass: f64,
    /// Moment of inertia about the centre of mass J ≥ 0 [kg·m²]
    /// (0 models a point mass; then M is singular in θ).
    pub inertia: f64,
    /// Initial position of the centre of mass \[m\], global frame.
    pub position: [f64; 2],
    /// Initial angle θ \[rad\].
    pub angle: f64,
    /// Initial velocity of the centre of mass [m/s].
    pub velocity: [f64; 2],
    /// Initial angular velocity [rad/s].
    pub angular_velocity: f64,
    /// Named points in body-fixed coordinates relative to the centre of mass \[m\].
    pub points: Vec<(String, [f64; 2])>,
}

/// A point on a body or on ground, in that body's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Attachment {
    /// The body.
    pub body: BodyRef,
    /// Body-fixed coordinates relative to the centre of mass (ground: global) \[m\].
    pub point: [f64; 2],
}

/// A kinematic joint (holonomic, scleronomic constraint).
#[derive(Clone, Debug, PartialEq)]
pub struct Joint {
    /// Unique name (among joints and drivers).
    pub name: String,
    /// Kind and geometry.
    pub kind: JointKind,
    /// Coulomb friction along the guide (translational joints only); the
    /// normal force is the joint's reaction normal to the guide.
    pub friction: Option<Friction>,
}

/// Joint kinds. Two equations each unless stated.
#[derive(Clone, Debug, PartialEq)]
pub enum JointKind {
    /// Points coincide: r1 + A1 s1 − r2 − A2 s2 = 0. Joint coordinate:
    /// relative angle θ2 − θ1.
    Revolute {
        /// First point.
        a: Attachment,
        /// Second point.
        b: Attachment,
    },
    /// Point b slides along the line through point a with direction
    /// `axis` (unit vector, body-a frame); relative rotation locked at its
    /// initial value. Joint coordinate: (P_b − P_a)·(A_a axis).
    Translational {
        /// Point on the guide body.
        a: Attachment,
        /// Point on the sliding body.
        b: Attachment,
        /// Unit sliding direction in body a's frame.
        axis: [f64; 2],
    },
    /// Weld: three equations, relative pose locked at its initial value.
    Rigid {
        /// First body.
        body_a: BodyRef,
        /// Second body.
        body_b: BodyRef,
    },
    /// Constant distance between two points (one equation):
    /// |P_b − P_a|² − L² = 0.
    Distance {
        /// First point.
        a: Attachment,
        /// Second point.
        b: Attachment,
        /// Length L > 0 \[m\].
        length: f64,
    },
}

/// A driver: a rheonomic constraint prescribing a coordinate as f(t).
#[derive(Clone, Debug, PartialEq)]
pub struct Driver {
    /// Unique name (among joints and drivers).
    pub name: String,
    /// What is driven.
    pub kind: DriverKind,
    /// The prescribed value f(t) [rad or m].
    pub function: TimeFunction,
}

/// What a driver prescribes.
#[derive(Clone, Debug, PartialEq)]
pub enum DriverKind {
    /// The joint coordinate of a revolute (relative angle) or translational
    /// (relative displacement) joint, index into [`Model::joints`].
    Joint {
        /// Driven joint.
        joint: usize,
    },
    /// The distance between two points: |P_b − P_a| − f(t) = 0.
    Distance {
        /// First point.
        a: Attachment,
        /// Second point.
        b: Attachment,
    },
}

/// One-sided activity of a spring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OneSided {
    /// Active only in compression (length below the free length, or angle below zero angle).
    Compression,
    /// Active only in tension (length above the free length, or angle above zero angle).
    Tension,
}

/// Frame in which a point force's components are given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForceFrame {
    /// Global axes.
    Global,
    /// Body-fixed axes.
    Body,
}

/// A force element.
#[derive(Clone, Debug, PartialEq)]
pub struct Force {
    /// Unique name (among force elements).
    pub name: String,
    /// Kind.
    pub kind: ForceKind,
}

/// Force element kinds.
#[derive(Clone, Debug, PartialEq)]
pub enum ForceKind {
    /// Force (fx(t), fy(t)) applied at a point.
    PointForce {
        /// Point of application.
        at: Attachment,
        /// x component \[N\].
        fx: TimeFunction,
        /// y component \[N\].
        fy: TimeFunction,
        /// Frame of the components.
        frame: ForceFrame,
    },
    /// Torque τ(t) on a body [N·m].
    Torque {
        /// Body (index into [`Model::bodies`]).
        body: usize,
        /// Torque.
        torque: TimeFunction,
    },
    /// Translational spring-damper-actuator between two points:
    /// tension F = k (ℓ − ℓ0) + c ℓ' + f_act(t), acting along the line.
    SpringDamper {
        /// First point.
        a: Attachment,
        /// Second point.
        b: Attachment,
        /// Stiffness k ≥ 0 [N/m].
        stiffness: f64,
        /// Damping c ≥ 0 [N·s/m].
        damping: f64,
        /// Unstretched length ℓ0 ≥ 0 \[m\].
        free_length: f64,
        /// Actuator force (positive pulls the points together, like tension).
        actuator: Option<TimeFunction>,
        /// One-sided activity of the spring and damper.
        one_sided: Option<OneSided>,
    },
    /// Unilateral contact between two bodies ([\[contacts\]]): a penalty
    /// force law or an impact law on the gap g(q) of `geometry`; g is a
    /// switching function located as an event.
    Contact {
        /// Line point (or centre of circle a) on body a.
        a: Attachment,
        /// Circle centre (or point) on body b.
        b: Attachment,
        /// Shape of the pair.
        geometry: ContactGeometry,
        /// Force or impact law.
        law: ContactLaw,
        /// Stiffness k [N/m^e] (0 for the impact law).
        stiffness: f64,
        /// Damping c [N·s/m] (Hunt–Crossley: [s/m]).
        damping: f64,
        /// Coulomb friction in the contact plane (penalty laws only).
        friction: Option<Friction>,
    },
    /// Rotational spring-damper on a revolute joint's relative angle
    /// φ = θ_b − θ_a: torque τ = −k (φ − φ0) − c φ' + τ_act(t) on body b
    /// (and the reaction on body a).
    RotationalSpring {
        /// The revolute joint (index into [`Model::joints`]).
        joint: usize,
        /// Stiffness k ≥ 0 [N·m/rad].
        stiffness: f64,
        /// Damping c ≥ 0 [N·m·s/rad].
        damping: f64,
        /// Zero angle φ0 \[rad\].
        zero_angle: f64,
        /// Actuator torque.
        actuator: Option<TimeFunction>,
        /// One-sided: active only below (Compression) or above (Tension) φ0.
        one_sided: Option<OneSided>,
    },
    /// Massless planar beam between two body points (`crate::beam`).
    Beam(crate::beam::Beam),
}

/// Shape of a planar contact pair: body a carries the line or the first
/// circle, body b the circle or the point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ContactGeometry {
    /// A circle of radius r on body b against the line through point a of
    /// body a with unit normal n (body a's frame, pointing to the free
    /// side): gap g = n·(C_b − P_a) − r.
    CircleLine {
        /// Radius of the circle on body b \[m\].
        radius: f64,
        /// Unit normal of the line in body a's frame.
        normal: [f64; 2],
    },
    /// Two circles: g = |C_b − C_a| − r_a − r_b.
    CircleCircle {
        /// Radius of the circle on body a \[m\].
        radius_a: f64,
        /// Radius of the circle on body b \[m\].
        radius_b: f64,
    },
    /// Point b against the line through point a with unit normal n:
    /// g = n·(P_b − P_a).
    PointLine {
        /// Unit normal of the line in body a's frame.
        normal: [f64; 2],
    },
}

/// Coulomb friction of a contact or a translational joint: the tangential
/// force on body b opposes the sliding velocity v_t of b relative to a,
/// with magnitude at most μ times the normal force F_n.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Friction {
    /// Kinetic friction coefficient μ ≥ 0.
    pub coefficient: f64,
    /// How sticking is modelled.
    pub law: FrictionLaw,
}

/// The friction law of a [`Friction`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FrictionLaw {
    /// F_t = −μ F_n tanh(v_t / v_ε): a smooth force. Sliding
    /// (|v_t| ≫ v_ε) gives μ F_n to a relative error
    /// 1 − tanh(|v_t|/v_ε) ≤ 2 e^{−2|v_t|/v_ε}; sticking is replaced by a
    /// creep at v_t = v_ε artanh(F/(μ F_n)) under a tangential load
    /// F < μ F_n.
    Regularised {
        /// Regularisation velocity v_ε > 0 [m/s].
        velocity: f64,
    },
    /// Stick–slip by events: while sticking, v_t = 0 is a constraint whose
    /// multiplier is the friction force; it slips when that force leaves
    /// the cone |F_t| ≤ μ_s F_n, with F_t = −μ F_n sign(v_t) while
    /// sliding, and sticks again when v_t returns to zero and the sticking
    /// force is inside the cone.
    StickSlip {
        /// Static coefficient μ_s ≥ μ.
        static_coefficient: f64,
    },
}

impl Friction {
    /// The regularisation velocity of the regularised law, `None` for
    /// stick–slip.
    pub fn regularisation(&self) -> Option<f64> {
        match self.law {
            FrictionLaw::Regularised { velocity } => Some(velocity),
            FrictionLaw::StickSlip { .. } => None,
        }
    }
}

/// Normal force law of a contact as a function of the penetration
/// δ = −g > 0 and its rate δ'; no force when δ ≤ 0, never adhesive.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ContactLaw {
    /// F = k δ + c δ'.
    Linear,
    /// Hertz: F = k δ^e + c δ'.
    Hertz {
        /// Exponent e (3/2 for spheres and cylinders of Hertz theory).
        exponent: f64,
    },
    /// Hunt & Crossley (1975): F = k δ^e (1 + c δ'), c in s/m.
    HuntCrossley {
        /// Exponent e.
        exponent: f64,
    },
    /// Rigid contact by Newton's impact law at the event g = 0 closing:
    /// the normal relative velocity g' changes to −e g' by an impulse
    /// consistent with the constraints.
    Impact {
        /// Coefficient of restitution e in [0, 1].
        restitution: f64,
    },
}

/// Which formulation turns the model into an integrable problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FormulationKind {
    /// Index-1 augmented (KKT) system with optional Baumgarte stabilisation.
    #[default]
    Augmented,
    /// Coordinate partitioning / embedding (independent coordinates).
    Partitioning,
    /// Augmented with projection onto Φ = 0 and Φ_q v = −Φ_t after each step.
    Projection,
    /// Penalty (stiff spring-dampers on the constraints).
    Penalty,
    /// The index-3 DAE itself, y = [q; v; λ], for the structural methods
    /// that accept it (newmark, hht, generalized_alpha, midpoint_rule) and
    /// the DAE methods (bdf, radau5).
    Index3,
    /// The stabilised index-2 DAE of Gear, Gupta & Leimkuhler,
    /// y = [q; v; λ; μ], for the DAE methods (bdf, radau5).
    Ggl,
    /// Implicit integration of the independent coordinates (Haug, Negrut
    /// & Iancu): partitioning made for implicit methods.
    StateSpace,
    /// The overdetermined DAE of Führer & Leimkuhler: augmented's
    /// y = [q; v] with the position and velocity constraints met at every
    /// step in the least-squares sense, for the BDFs (bdf, ndf).
    Odae,
    /// Joint (relative) coordinates of the kinematic tree: the
    /// articulated-body algorithm for trees, cut joints and drivers as
    /// constraints (KKT in joint coordinates) for closed loops.
    Joint,
    /// The index-3 augmented Lagrangian with mass-orthogonal projections
    /// (Bayo & Ledesma 1996; ALI3-P), y = [q; v; λ], for the structural
    /// methods (newmark, hht, generalized_alpha, midpoint_rule): runs
    /// singular mass matrices, redundant constraints and singular
    /// configurations.
    AugmentedLagrangian,
}

impl FormulationKind {
    /// Every formulation, in the order `jounce` lists them: the one list
    /// from which the model parser, the formulation factory, the command
    /// line help, `jounce check` and the README's table are made.
    pub const ALL: [FormulationKind; 10] = [
        FormulationKind::Augmented,
        FormulationKind::Partitioning,
        FormulationKind::Projection,
        FormulationKind::Penalty,
        FormulationKind::Index3,
        FormulationKind::Ggl,
        FormulationKind::StateSpace,
        FormulationKind::Odae,
        FormulationKind::Joint,
        FormulationKind::AugmentedLagrangian,
    ];

    /// The names of [`FormulationKind::ALL`], in that order.
    pub const NAMES: [&'static str; 10] = {
        let mut names = [""; 10];
        let mut i = 0;
        while i < names.len() {
            names[i] = Self::ALL[i].name();
            i += 1;
        }
        names
    };

    /// The registry name, as `settings.formulation` and `--formulation`
    /// spell it.
    pub const fn name(self) -> &'static str {
        match self {
            FormulationKind::Augmented => "augmented",
            FormulationKind::Partitioning => "partitioning",
            FormulationKind::Projection => "projection",
            FormulationKind::Penalty => "penalty",
            FormulationKind::Index3 => "index3",
            FormulationKind::Ggl => "ggl",
            FormulationKind::StateSpace => "state_space",
            FormulationKind::Odae => "odae",
            FormulationKind::Joint => "joint",
            FormulationKind::AugmentedLagrangian => "augmented_lagrangian",
        }
    }

    /// One line on what the formulation integrates (the command line
    /// help and the README's formulation table show it).
    pub const fn description(self) -> &'static str {
        match self {
            FormulationKind::Augmented => {
                "index-1 KKT system on q, v, optional Baumgarte stabilisation (the default)"
            }
            FormulationKind::Partitioning => {
                "independent coordinates by LU with full pivoting, re-partitioned when ill-conditioned"
            }
            FormulationKind::Projection => {
                "augmented, projected onto the position and velocity constraints after each step"
            }
            FormulationKind::Penalty => "penalty spring-dampers on the constraints (Bayo)",
            FormulationKind::Index3 => {
                "the index-3 DAE on q, v, λ, for the structural methods and bdf, radau5"
            }
            FormulationKind::Ggl => {
                "the stabilised index-2 DAE of Gear, Gupta & Leimkuhler, for bdf, radau5"
            }
            FormulationKind::StateSpace => {
                "independent coordinates made for implicit methods (Haug, Negrut & Iancu)"
            }
            FormulationKind::Odae => {
                "the overdetermined DAE of Führer & Leimkuhler, for bdf, ndf"
            }
            FormulationKind::Joint => {
                "joint coordinates of the kinematic tree, O(N) articulated-body algorithm"
            }
            FormulationKind::AugmentedLagrangian => {
                "index-3 augmented Lagrangian with projections (Bayo & Ledesma), for the structural methods"
            }
        }
    }

    /// Whether the formulation needs a constraint Jacobian of full row
    /// rank, i.e. runs a model with redundant constraints on its
    /// independent rows. False for `penalty` (the penalty force
    /// α Φ_qᵀ(...) needs no inverse of Φ_q) and `augmented_lagrangian` (its
    /// iterated multipliers converge with dependent rows: Bayo & Ledesma
    /// 1996).
    pub const fn needs_independent_rows(self) -> bool {
        !matches!(
            self,
            FormulationKind::Penalty | FormulationKind::AugmentedLagrangian
        )
    }

    /// Whether the formulation can run a model with redundant
    /// constraints: all but `joint`, whose closure constraints live in
    /// joint coordinates, where the row selection of assembly does not
    /// apply.
    pub const fn runs_redundant(self) -> bool {
        !matches!(self, FormulationKind::Joint)
    }
}

impl std::fmt::Display for FormulationKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is none of [`FormulationKind::NAMES`]; its message lists
/// them and suggests the nearest.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown formulation '{given}'{}; known: {}",
    crate::error::did_you_mean(given, FormulationKind::NAMES),
    FormulationKind::NAMES.join(", ")
)]
pub struct UnknownFormulation {
    /// The name given.
    pub given: String,
}

impl std::str::FromStr for FormulationKind {
    type Err = UnknownFormulation;

    /// The kind named `s`, ignoring case and surrounding blanks.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let key = s.trim().to_ascii_lowercase();
        Self::ALL
            .into_iter()
            .find(|k| k.name() == key)
            .ok_or_else(|| UnknownFormulation {
                given: s.to_string(),
            })
    }
}

/// Formulation settings.
#[derive(Clone, Debug, PartialEq)]
pub struct FormulationSettings {
    /// Which formulation.
    pub kind: FormulationKind,
    /// Baumgarte α (velocity feedback) [1/s]; 0 = off.
    pub baumgarte_alpha: f64,
    /// Baumgarte β (position feedback) [1/s]; 0 = off.
    pub baumgarte_beta: f64,
    /// Penalty factor α_p [dimensionless, scales the constraint forces], e.g. 1e7.
    pub penalty_factor: f64,
    /// Penalty natural frequency ω [rad/s].
    pub penalty_omega: f64,
    /// Penalty damping ratio ξ.
    pub penalty_xi: f64,
    /// Penalty p of the augmented Lagrangian, relative to the largest
    /// diagonal entry of M (dimensionless), `[settings.augmented_lagrangian]`.
    pub al_penalty: f64,
    /// Linear solver of the augmented (KKT) system, `settings.linear_solver`.
    pub linear_solver: LinearSolverKind,
}

/// `settings.linear_solver`: how the KKT system [M Φ_qᵀ; Φ_q 0] is solved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LinearSolverKind {
    /// Sparse for diagonal, well-scaled mass matrices, dense otherwise.
    #[default]
    Auto,
    /// Dense LU with full pivoting.
    Dense,
    /// Sparse Schur complement Φ_q M⁻¹ Φ_qᵀ (needs M diagonal and regular).
    Sparse,
}

impl Default for FormulationSettings {
    fn default() -> Self {
        Self {
            kind: FormulationKind::Augmented,
            baumgarte_alpha: 0.0,
            baumgarte_beta: 0.0,
            penalty_factor: 1e7,
            penalty_omega: 10.0,
            penalty_xi: 1.0,
            al_penalty: 1e4,
            linear_solver: LinearSolverKind::Auto,
        }
    }
}

/// Integrator settings (the method name is checked against the registry by the caller).
#[derive(Clone, Debug, PartialEq)]
pub struct IntegratorSettings {
    /// Registry name of the method (see `jounce methods`).
    pub method: String,
    /// Relative tolerance.
    pub rtol: f64,
    /// Absolute tolerance.
    pub atol: f64,
    /// Fixed step size \[s\], for fixed-step methods.
    pub step: Option<f64>,
    /// Initial step size \[s\].
    pub h0: Option<f64>,
    /// Minimum step size \[s\]; 0: the smallest step the arithmetic
    /// resolves at t (10 ε |t|).
    pub h_min: f64,
    /// Maximum step size \[s\].
    pub h_max: f64,
    /// Maximum number of steps (accepted and rejected).
    pub max_steps: u64,
    /// Whether `max_steps` was set by the user (model file or command
    /// line) rather than left at its default: a run that uses up a budget
    /// the user chose says so instead of diagnosing the problem.
    pub max_steps_set: bool,
    /// Step-size controller: "elementary" or "pi".
    pub controller: String,
    /// "step" (error per step) or "unit_step" (error per unit step).
    pub error_per: String,
    /// Method parameters (beta, gamma, alpha, rho_inf, theta, order, ...).
    pub params: BTreeMap<String, f64>,
    /// Stop exactly at the breakpoints of the time functions
    /// ([`Model::breakpoints`]) and restart the integrator there.
    pub stop_at_breakpoints: bool,
}

impl Default for IntegratorSettings {
    fn default() -> Self {
        Self {
            method: "dopri5".into(),
            rtol: 1e-6,
            atol: 1e-8,
            step: None,
            h0: None,
            h_min: 0.0,
            h_max: f64::INFINITY,
            max_steps: 1_000_000,
            max_steps_set: false,
            controller: "elementary".into(),
            error_per: "step".into(),
            params: BTreeMap::new(),
            stop_at_breakpoints: true,
        }
    }
}

/// Run settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// End time \[s\] (start is 0).
    pub t_end: f64,
    /// Output interval \[s\].
    pub output_interval: f64,
    /// Write `steps.csv`, one row per accepted step (default true; false
    /// for benchmarks: the history reads the CPU clock at every step).
    pub step_history: bool,
    /// Report the cost (steps, Newton iterations, CPU) of the steps ending
    /// after this time, s (`jounce run --cost-from T`).
    pub cost_from: Option<f64>,
    /// Formulation.
    pub formulation: FormulationSettings,
    /// Integrator.
    pub integrator: IntegratorSettings,
    /// Tolerance of assembly (position and velocity Newton) [m, rad].
    pub assembly_tol: f64,
    /// Checks on the solution during a run (`[settings.checks]`).
    pub checks: CheckSettings,
}

/// What a run does when a check on its solution fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OnCheckFailure {
    /// Stop the run with status "failed" (default): a wrong answer must
    /// never be reported as completed.
    #[default]
    Fail,
    /// Finish the run, report status "completed" with a warning in the
    /// diagnostics (for studies of unstable settings).
    Warn,
}

/// Checks on the solution during a run (`[settings.checks]`): blow-up
/// detection and the output-size budget.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckSettings {
    /// What a failed check does (`on_failure = "fail" | "warn"`).
    pub on_failure: OnCheckFailure,
    /// Largest ‖Φ‖∞ [m, rad] the solution may reach; `None`: 1 % of the
    /// model's size (the largest distance between its initial body
    /// positions and points, at least 1 mm).
    pub max_constraint_violation: Option<f64>,
    /// Energy gain allowed beyond the work put in, as a multiple of the
    /// model's energy scale (see the run's documentation).
    pub energy_growth: f64,
    /// Largest number of output rows a run may write without `--force`.
    pub max_output_rows: u64,
    /// Largest size in bytes of `timeseries.csv` a run may write without
    /// `--force`, estimated before the run as rows × columns × bytes per
    /// value.
    pub max_output_bytes: u64,
    /// Estimate the run's global error by a second run at a tighter
    /// tolerance (a fixed step: at h/2) and report it
    /// (`error_estimate = true`; `jounce run --error-estimate`).
    pub error_estimate: bool,
}

impl Default for CheckSettings {
    fn default() -> Self {
        Self {
            on_failure: OnCheckFailure::Fail,
            max_constraint_violation: None,
            energy_growth: 1.0,
            max_output_rows: 10_000_000,
            max_output_bytes: 1_000_000_000,
            error_estimate: false,
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            t_end: 1.0,
            output_interval: 0.01,
            step_history: true,
            cost_from: None,
            formulation: FormulationSettings::default(),
            integrator: IntegratorSettings::default(),
            assembly_tol: 1e-10,
            checks: CheckSettings::default(),
        }
    }
}

/// A validated model: planar (the lists of bodies, joints, drivers and
/// forces) or spatial ([`Model::spatial`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// Model name.
    pub name: String,
    /// Where it was loaded from (file path, or `"<string>"`).
    pub source: String,
    /// Gravitational acceleration [m/s²], global frame.
    pub gravity: [f64; 2],
    /// Moving bodies.
    pub bodies: Vec<Body>,
    /// Joints.
    pub joints: Vec<Joint>,
    /// Drivers.
    pub drivers: Vec<Driver>,
    /// Force elements.
    pub forces: Vec<Force>,
    /// Run settings.
    pub settings: Settings,
    /// The spatial bodies, joints and forces of a model declared
    /// `[model] space = "spatial"`; `None` for a planar model, whose
    /// elements are the lists above (which a spatial model leaves empty).
    pub spatial: Option<crate::spatial::SpatialModel>,
}

impl Model {
    /// The space the model lives in: [`crate::Space::Spatial`] exactly when
    /// [`Model::spatial`] is set (one field, so the two cannot disagree).
    #[must_use]
    pub fn space(&self) -> crate::spatial::Space {
        if self.spatial.is_some() {
            crate::spatial::Space::Spatial
        } else {
            crate::spatial::Space::Planar
        }
    }
}
