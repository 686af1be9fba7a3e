//! Singular configurations, assembly-branch switches and lock-up, watched
//! at every accepted step of a run.
//!
//! **Singular configuration.** Φ_q(q) loses rank where two assembly
//! branches cross (a parallelogram whose bars are collinear) or where a
//! driver asks for a motion the mechanism cannot make (a toggle position).
//! The monitor estimates the smallest singular value of the mass-weighted
//! Jacobian J = Φ_q W^{1/2}, W = diag(M)⁻¹ at assembly, through the
//! smallest eigenvalue of the Gram matrix G = J Jᵀ = Φ_q W Φ_qᵀ (the Schur
//! complement of the augmented matrix [M Φ_qᵀ; Φ_q 0] for a diagonal M,
//! García de Jalón & Bayo 1994, ch. 7): σ_min(J)² = λ_min(G). G keeps the
//! sparsity of Φ_q and is factored by sparse LDLᵀ ([`GramFactor`]) with a
//! shift δ = 10⁻¹³ tr(G)/m, so that the factors exist at the singular
//! point itself. A few steps of inverse iteration x ← (G + δI)⁻¹x/‖·‖,
//! warm-started from the previous step's vector, converge to the
//! eigenvector u of λ_min (Golub & Van Loan, *Matrix Computations*, 4th
//! ed., §8.2.2); λ_min is its Rayleigh quotient uᵀGu, and the large entries
//! of u are the constraint rows — joints — that become dependent. The
//! iteration runs on two orthonormal vectors (orthogonal iteration,
//! §8.2.4) followed by the 2 × 2 Rayleigh–Ritz problem on them (§8.4.2),
//! so that two close small singular values far from a singular pose
//! separate at once instead of over many steps. A model with r redundant
//! rows (Φ_q rank-deficient throughout) has r zero eigenvalues: r more
//! vectors hold them and the monitor watches the (r + 1)-th. What is
//! reported is s = σ_min/σ_generic, σ_generic the largest σ_min of the run
//! so far.
//!
//! **Branch switch.** At a bifurcation both branches pass through the
//! same positions with different tangents, so a switch shows in the
//! velocities: the exact motion has a continuous velocity (its
//! accelerations stay bounded through the singular position), while a
//! numerical switch turns it by O(1) within one step. Over each
//! near-singular passage (steps with s < [`S_NEAR`]) the monitor measures
//! the turn ‖v_out − v_in‖_M (M = diag(M) at assembly; from the last step
//! before the passage to the first after) and the part of it made fast,
//! Σ ‖Δv_k‖_M over the steps k whose rate ‖Δv_k‖_M / h_k exceeds
//! [`SWITCH_ACCELERATION`] a_ref, a_ref the largest rate of the regular
//! steps of the run so far. A switch is a turn above [`SWITCH_TURN`] of
//! the speed of which at least [`SWITCH_JUMP`] of the speed was made fast:
//! the velocity turned by O(1) far faster
//! than any force of the run turned it elsewhere. The same test is made on
//! each body's own velocity and speed ([`crate::body_turn`]): when one
//! loop of a chain of N parallelograms folds, the whole system's turn is
//! only about 2/√N of its speed, the folding crank's twice its own. Both
//! tests are made at every step inside the passage too, from v_in to the
//! step's v, since a mechanism that switched may stay singular (a folded
//! loop lies collinear from then on) and the passage never end. A passage
//! the drivers push into (below) is judged only at its end and on the
//! whole system: approaching a toggle the velocities turn fast with no
//! branch to switch to, and the run's failure there is a lock-up. A step
//! so long that both its ends are regular is judged the same way when the
//! midpoint of its positions is near-singular (looked at only when an end
//! has s below [`S_MIDPOINT`]).
//!
//! **Lock-up.** A failure at a singular configuration whose dependent
//! rows u carry a driver (uᵀΦ_t ≠ 0: the velocity equation Φ_q v = −Φ_t
//! has no solution there) is a lock-up: the drivers push the mechanism
//! into a position it cannot pass.

use crate::body_turn::{BodyTurn, BodyTurns};
use jounce_mechanics::{GramFactor, MechanicalSystem, Quantities, SparseMatrix, SystemQueries};

/// s = σ_min/σ_generic below which a step is in a near-singular passage.
pub const S_NEAR: f64 = 0.1;
/// s below which a failure is said to happen at a singular configuration.
pub const S_FAILURE: f64 = 0.05;
/// Relative velocity turn across a passage above which it may be a switch.
pub const SWITCH_TURN: f64 = 0.5;
/// Velocity change made fast in a passage, relative to the speed, above
/// which it may be a switch.
pub const SWITCH_JUMP: f64 = 0.25;
/// Rate ‖Δv_k‖_M / h_k of a step over the run's largest elsewhere above
/// which its velocity change counts as made fast.
pub const SWITCH_ACCELERATION: f64 = 10.0;
/// s at either end of a step below which its midpoint is looked at too.
pub const S_MIDPOINT: f64 = 0.5;
/// s at the last accepted step of a failed run below which, falling, a
/// driven singular position is said to be approached.
pub const S_APPROACH: f64 = 0.25;
/// |uᵀΦ_t| relative to ‖Φ_t‖ above which a driver acts in the dependent
/// rows u.
const DRIVEN: f64 = 1e-3;
/// Change of the total energy across a passage, relative to the kinetic
/// energy, above which a conservative model switched branch.
pub const SWITCH_ENERGY: f64 = 0.1;
/// The least energy change across a passage, relative to the kinetic
/// energy, that stops a run whose tolerance asks for more accuracy
/// ([`SingularityMonitor::set_energy_bound`]): below it the change may be
/// the ordinary error of a run's steps across the passage.
pub const UNRESOLVED_ENERGY_FLOOR: f64 = 1e-3;
/// How the message of a [`BranchSwitch`] begins: a switch of assembly
/// branch, or a passage on the branch whose energy change the tolerance
/// does not allow.
pub const BRANCH_SWITCH: &str = "branch switch";
/// See [`BRANCH_SWITCH`].
pub const UNRESOLVED_PASSAGE: &str = "singular passage not resolved";
/// Consecutive accepted steps deep in a passage (s below [`S_FAILURE`]),
/// each at a pace that would spend more than [`STALL_MARGIN`] times the
/// run's step budget on the rest of the run, after which the run is said
/// to have stalled there ([`SingularityMonitor::stall`]).
pub const STALL_STEPS: usize = 50;
/// How far beyond the step budget the pace of a stalled run must reach
/// (as the stiffness forecast of the step loop, `FORECAST_MARGIN`).
pub const STALL_MARGIN: f64 = 2.0;
/// How the message of a [`Stall`] begins.
pub const STALLED: &str = "stalled at a singular configuration";
/// Consecutive steps at most that skip σ_min far from singular positions.
pub const MAX_SKIPPED: usize = 3;
/// Steps inside a passage from which the accelerations on its sides are
/// trusted to predict the velocity after it.
pub const RESOLVED_STEPS: usize = 3;
/// Entries of u, relative to its largest, above which a row is involved.
const INVOLVED: f64 = 0.25;
/// Inverse-iteration sweeps per accepted step (warm-started).
const ITERATIONS: usize = 2;
/// Sweeps at set-up, from a fixed start.
const ITERATIONS_START: usize = 40;

/// One near-singular passage of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Passage {
    /// Time of the smallest s.
    pub t: f64,
    /// Smallest s = σ_min/σ_generic.
    pub s_min: f64,
    /// Joints (or constraint rows) involved at that time.
    pub joints: Vec<String>,
    /// Whether a driver acts in the dependent rows there (uᵀΦ_t ≠ 0):
    /// the drivers push the mechanism into it (lock-up).
    pub driven: bool,
}

/// A passage in progress.
#[derive(Clone, Debug)]
struct OpenPassage {
    t_in: f64,
    v_in: Vec<f64>,
    /// The finite-difference acceleration of the step ending at t_in.
    a_in: Vec<f64>,
    /// Accepted steps that ended inside it, and the length of the step
    /// ending at t_in.
    steps: usize,
    h_in: f64,
    /// Total energy and kinetic energy at t_in (conservative models).
    energy_in: (f64, f64),
    s_min: f64,
    t_min: f64,
    joints: Vec<String>,
    driven: bool,
    /// Σ ‖Δv_k‖_M over its steps faster than [`SWITCH_ACCELERATION`] a_ref,
    /// and the largest ‖Δv_k‖_M / h_k.
    jump: (f64, f64),
    /// Σ ‖Δv_k‖_b of each body b over its steps faster than
    /// [`SWITCH_ACCELERATION`] a_ref ([`crate::body_turn`]).
    body_jump: Vec<f64>,
}

/// A passage that ended at t_out and waits for the next step's
/// acceleration to be judged.
#[derive(Clone, Debug)]
struct Pending {
    passage: Passage,
    t_in: f64,
    t_out: f64,
    /// v_in + (t_out − t_in)/2 a_in.
    v_half: Vec<f64>,
    v_out: Vec<f64>,
    turn: f64,
    speed: f64,
}

/// A branch switch found by [`SingularityMonitor::observe`].
#[derive(Clone, Debug, PartialEq)]
pub struct BranchSwitch {
    /// The passage where it happened.
    pub passage: Passage,
    /// ‖v_out − v_in‖_M across the passage.
    pub turn: f64,
    /// The larger of ‖v_in‖_M, ‖v_out‖_M.
    pub speed: f64,
    /// The part of the turn made by steps faster than
    /// [`SWITCH_ACCELERATION`] a_ref.
    pub jump: f64,
    /// The fastest step's ‖Δv_k‖_M / h_k over a_ref.
    pub ratio: f64,
    /// ‖v_out − v_pred‖_M, v_pred = v_in + (t_out − t_in)(a_in + a_out)/2
    /// from the accelerations on either side (0 when the fast turn
    /// decided).
    pub miss: f64,
    /// |ΔE|/T across the passage of a conservative model (0 when another
    /// test decided).
    pub energy_change: f64,
    /// The bound |ΔE|/T that `energy_change` passed (the run's
    /// [`SingularityMonitor::set_energy_bound`]).
    pub energy_bound: f64,
    /// The passage's ends.
    pub t_in: f64,
    /// The passage's ends.
    pub t_out: f64,
    /// The body whose own velocity turned like a switch, when the test on
    /// each body ([`crate::body_turn`]) decided.
    pub body: Option<BodyTurn>,
}

impl std::fmt::Display for BranchSwitch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.energy_change > 0.0 && self.energy_change <= SWITCH_ENERGY {
            // on its branch, but the passage cost energy that the run's
            // tolerance does not allow: what follows is off in phase
            return write!(
                f,
                "{UNRESOLVED_PASSAGE} at t = {}: the mechanism passed a singular \
                 configuration of joints {} (σ_min/σ_generic = {:.1e}) between t = {} and \
                 t = {}, and the total energy of the conservative model changed by {:.1} % of \
                 the kinetic energy within it, where the tolerance allows {:.1} %. The motion \
                 after it is wrong (it lags or leads the true one); use a smaller tolerance \
                 through the singular position, another method (radau5 resolves such \
                 passages), or a fixed step with a formulation that keeps positions on the \
                 constraints (index3, augmented_lagrangian)",
                self.passage.t,
                self.passage.joints.join(", "),
                self.passage.s_min,
                self.t_in,
                self.t_out,
                100.0 * self.energy_change,
                100.0 * self.energy_bound,
            );
        }
        write!(
            f,
            "{BRANCH_SWITCH} at t = {}: the mechanism passed a singular configuration of joints \
             {} (σ_min/σ_generic = {:.1e}) and came out on another assembly branch: its \
             velocity turned by ‖Δv‖_M = {:.3e} (speed {:.3e}) between t = {} and t = {}{}. \
             The motion after it is wrong; \
             use a smaller step or tolerance through the singular position, or a fixed step \
             with a formulation that keeps positions on the constraints (index3, \
             augmented_lagrangian)",
            self.passage.t,
            self.passage.joints.join(", "),
            self.passage.s_min,
            self.turn,
            self.speed,
            self.t_in,
            self.t_out,
            if let Some(b) = &self.body {
                format!(
                    "; body {} turned by ‖Δv‖_M = {:.3e} (its speed {:.3e}), {:.3e} of it in \
                     steps more than {SWITCH_ACCELERATION:.0} times faster than the run's largest \
                     acceleration elsewhere",
                    b.body, b.turn, b.speed, b.jump
                )
            } else if self.energy_change > 0.0 {
                format!(
                    ", and the total energy of the conservative model changed by {:.1} % of the \
                     kinetic energy within it",
                    100.0 * self.energy_change
                )
            } else if self.miss > 0.0 {
                format!(
                    ", {:.3e} more than the accelerations on either side account for",
                    self.miss
                )
            } else {
                format!(
                    ", {:.3e} of it in steps up to {:.0} times faster than the run's largest \
                     acceleration elsewhere",
                    self.jump, self.ratio
                )
            }
        )
    }
}

/// A run that creeps through a singular configuration at steps so short
/// that the rest of it would spend its step budget
/// ([`SingularityMonitor::stall`]): the formulation's vector field is
/// singular there off the constraints (an index-1 form: accelerations of
/// order drift/σ²), so the error control shrinks the steps without end
/// (bdf on `augmented`, P-C chain of 40 loops at rtol 1e-8: 8 562 steps
/// of about 10⁻¹⁰ s, 515 s of CPU, before the step size fell below what
/// the arithmetic resolves).
#[derive(Clone, Debug, PartialEq)]
pub struct Stall {
    /// Time of the last accepted step.
    pub t: f64,
    /// The longest of the last [`STALL_STEPS`] steps.
    pub h: f64,
    /// s = σ_min/σ_generic at the last step.
    pub s: f64,
    /// The joints whose rows become dependent.
    pub joints: Vec<String>,
    /// Steps the rest of the run would take at pace `h`.
    pub forecast: f64,
    /// Whether the drivers push the mechanism into the pose (a lock-up).
    pub driven: bool,
    /// The run's end and step budget.
    pub t_end: f64,
    /// See `t_end`.
    pub budget: u64,
}

impl std::fmt::Display for Stall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.driven {
            return write!(
                f,
                "lock-up at t = {} at a singular configuration of joints {} (σ_min/σ_generic = \
                 {:.1e}): the drivers demand a motion the mechanism cannot make there (a toggle \
                 position); the run stalled there (the last {STALL_STEPS} steps at most {:.1e} s \
                 long, about {:.1e} steps to t = {} at that pace, more than its budget of {}) \
                 and was stopped early; check the driver's range and the link lengths",
                self.t,
                self.joints.join(", "),
                self.s,
                self.h,
                self.forecast,
                self.t_end,
                self.budget
            );
        }
        write!(
            f,
            "{STALLED} of joints {} at t = {} (σ_min/σ_generic = {:.1e}): the last \
             {STALL_STEPS} steps were at most {:.1e} s long, a pace at which the run to \
             t = {} would take about {:.1e} steps, more than its budget of {}: stopped early \
             instead of spending it. The formulation cannot pass this pose at this \
             tolerance; another step size or tolerance, or the formulation made for such \
             poses (augmented_lagrangian at a fixed step), may pass it",
            self.joints.join(", "),
            self.t,
            self.s,
            self.h,
            self.t_end,
            self.forecast,
            self.budget
        )
    }
}

/// The per-step monitor (module documentation). Set up once; `observe`
/// allocates only when a passage opens or closes.
pub struct SingularityMonitor {
    m: usize,
    nv: usize,
    nullity: usize,
    /// W = diag(M)⁻¹ at assembly (floored for massless coordinates).
    weight: Vec<f64>,
    /// diag(M) for ‖·‖_M.
    mass: Vec<f64>,
    jac: SparseMatrix,
    gram: GramFactor,
    /// The iteration's r + 1 vectors, each of length m.
    x: Vec<Vec<f64>>,
    work: Vec<f64>,
    jt_x: Vec<f64>,
    jt_y: Vec<f64>,
    /// The watched vector at the deepest point of the open passage.
    u_min: Vec<f64>,
    phi_t: Vec<f64>,
    q_mid: Vec<f64>,
    q_prev: Vec<f64>,
    sigma_ref: f64,
    s_last: f64,
    /// s at the step before the last.
    s_before_last: f64,
    /// s and t of the evaluation before the last (for the extrapolation
    /// that lets far steps skip σ_min), and steps skipped since.
    s_eval_prev: f64,
    t_eval_prev: f64,
    skipped: usize,
    t_last: f64,
    v_prev: Vec<f64>,
    /// Finite-difference acceleration (v − v_prev)/h of the last step.
    a_prev: Vec<f64>,
    /// The length of the last step.
    h_prev: f64,
    t_prev: f64,
    a_ref: f64,
    open: Option<OpenPassage>,
    pending: Option<Pending>,
    /// Whether the model conserves energy (no damping, no drivers, no
    /// time-dependent forces): then a passage must keep it too.
    conservative: bool,
    /// |ΔE|/T across a passage above which a conservative run stops
    /// ([`SingularityMonitor::set_energy_bound`]).
    energy_bound: f64,
    passages: Vec<Passage>,
    labels: Vec<String>,
    /// The bodies of the velocity coordinates, for the turn of each.
    bodies: BodyTurns,
    /// The run's end and step budget ([`SingularityMonitor::set_horizon`]).
    horizon: Option<(f64, u64)>,
    /// Consecutive steps deep in a passage at a stalling pace, and the
    /// longest of them.
    stalled: (usize, f64),
}

/// The joint name of a constraint row label ("joint 'pivot1' (x)" →
/// "pivot1"), or the label itself.
fn joint_of(label: &str) -> String {
    let mut parts = label.split('\'');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(_), Some(name), Some(_)) => name.to_string(),
        _ => label.to_string(),
    }
}

impl SingularityMonitor {
    /// A monitor for `sys` at its assembled state (t0, q0), whose Φ_q has
    /// `nullity` dependent rows (redundant constraints) there.
    pub fn new(sys: &dyn MechanicalSystem, t0: f64, q0: &[f64], nullity: usize) -> Self {
        let (m, nv) = (sys.nc(), sys.nv());
        // M's diagonal through the system's own storage (its diagonal
        // alone for planar bodies: no n_v × n_v matrix, issue 31)
        let mut data = sys.data();
        sys.evaluate(&mut data, t0, q0, &[], Quantities::MASS_MATRIX);
        let diag: Vec<f64> = (0..nv).map(|i| data.mass(i, i).abs()).collect();
        drop(data);
        // massless coordinates (point masses' rotations) weigh like a
        // thousandth of the typical one, not infinitely
        let mut positive: Vec<f64> = diag.iter().copied().filter(|&d| d > 0.0).collect();
        positive.sort_by(f64::total_cmp);
        let typical = positive.get(positive.len() / 2).copied().unwrap_or(1.0);
        let floor = 1e-3 * typical;
        let mass: Vec<f64> = diag.iter().map(|&d| d.max(floor)).collect();
        let weight = mass.iter().map(|&d| 1.0 / d).collect();
        let jac = match sys.constraint_jacobian_pattern() {
            Some(p) => SparseMatrix::from_pattern(m, nv, &p),
            None => SparseMatrix::dense(m, nv),
        };
        let gram = GramFactor::new(&jac);
        let nullity = nullity.min(m.saturating_sub(1));
        // the r null vectors, the watched one and the next (Rayleigh–Ritz
        // on the last two separates close singular values)
        let vectors = (nullity + 2).min(m.max(1));
        let x = (0..vectors)
            .map(|c| {
                (0..m)
                    .map(|i| 1.0 + ((i * 7 + c * 13) % 11) as f64 / 10.0)
                    .collect()
            })
            .collect();
        let mut mon = Self {
            m,
            nv,
            nullity,
            weight,
            mass,
            jac,
            gram,
            x,
            work: vec![0.0; m],
            jt_x: vec![0.0; nv],
            jt_y: vec![0.0; nv],
            u_min: vec![0.0; m],
            phi_t: vec![0.0; m],
            q_mid: q0.to_vec(),
            q_prev: q0.to_vec(),
            sigma_ref: 0.0,
            s_last: 1.0,
            s_before_last: 1.0,
            s_eval_prev: 1.0,
            t_eval_prev: f64::NAN,
            skipped: 0,
            t_last: t0,
            v_prev: vec![0.0; nv],
            a_prev: vec![0.0; nv],
            h_prev: f64::INFINITY,
            t_prev: f64::NAN,
            a_ref: 0.0,
            open: None,
            pending: None,
            conservative: false,
            energy_bound: SWITCH_ENERGY,
            passages: Vec::new(),
            labels: (0..m).map(|r| joint_of(&sys.constraint_label(r))).collect(),
            bodies: BodyTurns::new(sys),
            horizon: None,
            stalled: (0, 0.0),
        };
        if m > 0 {
            mon.sigma_ref = mon.sigma_min(sys, t0, q0, ITERATIONS_START);
        }
        mon
    }

    /// Tell the monitor that the model conserves energy: a passage that
    /// changes the total energy by more than [`SWITCH_ENERGY`] of the
    /// kinetic energy is then a branch switch too.
    pub fn set_conservative(&mut self, conservative: bool) {
        self.conservative = conservative;
    }

    /// The change of total energy across a passage, relative to the kinetic
    /// energy, that stops a conservative run: [`SWITCH_ENERGY`] (a branch
    /// switch) unless the run asks for more accuracy. An adaptive run at
    /// rtol is held to 10² rtol, between [`UNRESOLVED_ENERGY_FLOOR`] and
    /// [`SWITCH_ENERGY`]: a passage that loses several per cent of the
    /// energy at rtol = 1e-8 was not resolved by the error control, and the
    /// motion after it lags the true one by whole turns (P-C parallelogram,
    /// penalty with adaptive generalized-α at 1e-8: 4.6 % lost in one
    /// passage, 12.8 rad off at t = 10 s while the local errors claimed
    /// 1e-4), although it stays on its assembly branch. Why 10² rtol: a
    /// relative change ε = ΔE/T changes the speed by ε/2, so the phase
    /// after the passage drifts by about ε/2 · ωτ, a few radians times ε
    /// over the turns that follow; to stay within the 100 rtol of the
    /// crank angle that issue 31 asks, ε must stay near 10² rtol. At 10³
    /// rtol (and a floor of 1 %) radau5 on `index3` at rtol 1e-5 completed
    /// the 40-loop P-C chain 0.18 rad (1.8·10⁴ rtol) off the exact angle
    /// after gaining 0.4 % of the kinetic energy in its first passage.
    pub fn set_energy_bound(&mut self, rtol: Option<f64>) {
        self.energy_bound = rtol.map_or(SWITCH_ENERGY, |r| {
            (1e2 * r).clamp(UNRESOLVED_ENERGY_FLOOR, SWITCH_ENERGY)
        });
    }

    /// The run's end time and step budget (`max_steps`), which
    /// [`SingularityMonitor::stall`] needs; without them no run stalls.
    pub fn set_horizon(&mut self, t_end: f64, budget: u64) {
        self.horizon = Some((t_end, budget));
    }

    /// Whether the run has stalled at a singular configuration, judged
    /// after [`SingularityMonitor::observe`] of each accepted step: the
    /// last [`STALL_STEPS`] steps all ended deep in one passage (s below
    /// [`S_FAILURE`]), each shorter than (t_end − t)/([`STALL_MARGIN`] ·
    /// budget), so that at their pace the rest of the run would take more
    /// than [`STALL_MARGIN`] times the step budget. The same forecast as the
    /// step loop's for stiffness, on the steps of the passage only, since a
    /// step size that collapses at a singular pose stays collapsed (module
    /// documentation of [`Stall`]).
    pub fn stall(&mut self, t: f64) -> Option<Stall> {
        let (t_end, budget) = self.horizon?;
        let h = self.h_prev;
        let pace = (t_end - t) / (STALL_MARGIN * budget as f64);
        let deep = self.open.is_some() && self.s_last < S_FAILURE;
        if !(deep && h.is_finite() && h < pace) {
            self.stalled = (0, 0.0);
            return None;
        }
        self.stalled.0 += 1;
        self.stalled.1 = self.stalled.1.max(h);
        if self.stalled.0 < STALL_STEPS {
            return None;
        }
        let h = self.stalled.1;
        let o = self.open.as_ref()?;
        let joints = if o.joints.is_empty() {
            self.joints_of(&self.u_min)
        } else {
            o.joints.clone()
        };
        Some(Stall {
            t,
            h,
            s: self.s_last,
            joints,
            forecast: (t_end - t) / h,
            driven: o.driven,
            t_end,
            budget,
        })
    }

    /// (E, T) at (t, q, v) when the model is conservative, else zeros.
    fn energy(&self, sys: &dyn MechanicalSystem, t: f64, q: &[f64], v: &[f64]) -> (f64, f64) {
        if !self.conservative {
            return (0.0, 0.0);
        }
        let kinetic = sys.kinetic_energy(q, v);
        (kinetic + sys.potential_energy(t, q), kinetic)
    }

    /// Rows dependent at assembly (redundant constraints).
    pub fn nullity(&self) -> usize {
        self.nullity
    }

    /// s = σ_min/σ_generic at the last observed step.
    pub fn s_last(&self) -> f64 {
        self.s_last
    }

    /// The passages of the run so far.
    pub fn passages(&self) -> &[Passage] {
        &self.passages
    }

    /// σ_min of J at (t, q) (the (r + 1)-th smallest for r redundant rows);
    /// its vector is the last of `x`.
    fn sigma_min(&mut self, sys: &dyn MechanicalSystem, t: f64, q: &[f64], sweeps: usize) -> f64 {
        sys.sparse_constraint_jacobian(t, q, &mut self.jac);
        let mut trace = 0.0;
        for i in 0..self.m {
            for p in self.jac.row_range(i) {
                let v = self.jac.values[p];
                trace += v * v * self.weight[self.jac.col_indices()[p]];
            }
        }
        let shift = 1e-13 * trace / self.m as f64 + f64::MIN_POSITIVE;
        if self
            .gram
            .factor_shifted(&self.jac, &self.weight, shift, 0.0)
            .is_err()
        {
            // not even G + δI could be factored (a non-finite Φ_q)
            return 0.0;
        }
        let p = self.x.len();
        for _ in 0..sweeps {
            for c in 0..p {
                let (done, rest) = self.x.split_at_mut(c);
                let xc = &mut rest[0];
                self.gram.solve_in_place(xc, &mut self.work);
                // Gram-Schmidt against the vectors before it
                for b in done.iter() {
                    let dot: f64 = b.iter().zip(xc.iter()).map(|(a, b)| a * b).sum();
                    xc.iter_mut().zip(b).for_each(|(x, b)| *x -= dot * b);
                }
                let nrm = xc.iter().map(|x| x * x).sum::<f64>().sqrt();
                if nrm > 0.0 && nrm.is_finite() {
                    xc.iter_mut().for_each(|x| *x /= nrm);
                } else {
                    for (i, x) in xc.iter_mut().enumerate() {
                        *x = 1.0 / (1.0 + (i + c) as f64);
                    }
                }
            }
        }
        // Rayleigh quotients xᵀGx = Σ_j w_j (Jᵀx)_j² of the watched vector
        // and, with a next one, the 2 × 2 Rayleigh–Ritz problem on both
        // (Golub & Van Loan §8.1.7 and §8.4.2): close singular values far
        // from a singular pose would otherwise take many sweeps to separate
        let k = self.watched();
        self.jt_x.iter_mut().for_each(|x| *x = 0.0);
        self.jac.tr_mul_add(&self.x[k], &mut self.jt_x);
        let h11: f64 = self
            .jt_x
            .iter()
            .zip(&self.weight)
            .map(|(y, w)| w * y * y)
            .sum();
        if k + 1 >= p {
            return h11.max(0.0).sqrt();
        }
        self.jt_y.iter_mut().for_each(|x| *x = 0.0);
        self.jac.tr_mul_add(&self.x[k + 1], &mut self.jt_y);
        let (mut h22, mut h12) = (0.0, 0.0);
        for j in 0..self.nv {
            h22 += self.weight[j] * self.jt_y[j] * self.jt_y[j];
            h12 += self.weight[j] * self.jt_x[j] * self.jt_y[j];
        }
        // the rotation (c, s) taking (x_k, x_k+1) to the Ritz vectors
        let theta = 0.5 * (2.0 * h12).atan2(h22 - h11);
        let (sn, cs) = theta.sin_cos();
        let (a, b) = self.x.split_at_mut(k + 1);
        for (xa, xb) in a[k].iter_mut().zip(b[0].iter_mut()) {
            let (u, w) = (*xa, *xb);
            *xa = cs * u - sn * w;
            *xb = sn * u + cs * w;
        }
        let mean = 0.5 * (h11 + h22);
        let radius = (0.25 * (h11 - h22) * (h11 - h22) + h12 * h12).sqrt();
        (mean - radius).max(0.0).sqrt()
    }

    /// Index in `x` of the watched vector (after the r null vectors).
    fn watched(&self) -> usize {
        self.nullity.min(self.x.len() - 1)
    }

    /// The joints of the rows that make up the watched singular vector.
    fn involved(&self) -> Vec<String> {
        self.joints_of(&self.x[self.watched()])
    }

    /// The joints of the rows that make up the singular vector `u`.
    fn joints_of(&self, u: &[f64]) -> Vec<String> {
        let umax = u.iter().fold(0.0_f64, |a, x| a.max(x.abs()));
        let mut out: Vec<String> = Vec::new();
        for (i, x) in u.iter().enumerate() {
            if x.abs() >= INVOLVED * umax && !out.contains(&self.labels[i]) {
                out.push(self.labels[i].clone());
            }
        }
        out
    }

    fn norm_m(&self, a: &[f64], b: Option<&[f64]>) -> f64 {
        let mut s = 0.0;
        for i in 0..self.nv {
            let d = a[i] - b.map_or(0.0, |b| b[i]);
            s += self.mass[i] * d * d;
        }
        s.sqrt()
    }

    /// s at (t, q), updating σ_generic.
    fn ratio_at(&mut self, sys: &dyn MechanicalSystem, t: f64, q: &[f64]) -> f64 {
        let sigma = self.sigma_min(sys, t, q, ITERATIONS);
        if sigma > self.sigma_ref {
            self.sigma_ref = sigma;
        }
        if self.sigma_ref > 0.0 {
            sigma / self.sigma_ref
        } else {
            1.0
        }
    }

    /// Watch the accepted step ending at t with positions q, velocities v
    /// (the physical state, after the formulation's corrections).
    ///
    /// # Errors
    /// The branch switch, when the step ended a passage like one.
    pub fn observe(
        &mut self,
        sys: &dyn MechanicalSystem,
        t: f64,
        q: &[f64],
        v: &[f64],
    ) -> Result<(), BranchSwitch> {
        if self.m == 0 || !q.iter().chain(v).all(|x| x.is_finite()) {
            return Ok(());
        }
        let started = self.t_prev.is_finite() && t > self.t_prev;
        // this step's velocity change and its rate
        let (dv, rate) = if started {
            let dv = self.norm_m(v, Some(&self.v_prev));
            (dv, dv / (t - self.t_prev))
        } else {
            (0.0, 0.0)
        };
        // far from any singular position σ_min need not be computed at
        // every step: it is when s, extrapolated linearly from the last
        // two evaluations to twice this step's distance, may fall below
        // S_MIDPOINT, and at least every MAX_SKIPPED + 1 steps
        let slope = if self.t_last > self.t_eval_prev {
            (self.s_last - self.s_eval_prev) / (self.t_last - self.t_eval_prev)
        } else {
            0.0
        };
        let s_reach = self.s_last + 2.0 * slope.min(0.0) * (t - self.t_last);
        let due = !started
            || self.open.is_some()
            || self.pending.is_some()
            || self.skipped >= MAX_SKIPPED
            || !(s_reach >= S_MIDPOINT);
        if !due {
            self.skipped += 1;
            if rate.is_finite() {
                self.a_ref = self.a_ref.max(rate);
            }
            self.end_step(t, q, v);
            return Ok(());
        }
        self.skipped = 0;
        let s_before = self.s_last;
        self.s_before_last = s_before;
        self.s_eval_prev = s_before;
        self.t_eval_prev = self.t_last;
        let s = self.ratio_at(sys, t, q);
        self.s_last = s;
        self.t_last = t;
        let mut result = Ok(());
        if let Some(p) = self.pending.take() {
            if started {
                result = self.judge(p, t, v);
            }
        }
        if s < S_NEAR {
            let deeper = self.open.as_ref().is_none_or(|o| s < o.s_min);
            // the vector at the deepest point is kept (no allocation); its
            // joints are named when the passage ends or the run fails
            let driven = deeper && self.driven(sys, t, q);
            if deeper {
                let k = self.watched();
                self.u_min.copy_from_slice(&self.x[k]);
            }
            let joints = Vec::new();
            match &mut self.open {
                None => {
                    // from the last step before the passage
                    let (t_in, v_in) = if started {
                        (self.t_prev, self.v_prev.clone())
                    } else {
                        (t, v.to_vec())
                    };
                    let a_in = self.a_prev.clone();
                    let energy_in = if started {
                        self.energy(sys, self.t_prev, &self.q_prev, &self.v_prev)
                    } else {
                        self.energy(sys, t, q, v)
                    };
                    self.open = Some(OpenPassage {
                        energy_in,
                        t_in,
                        v_in,
                        a_in,
                        steps: 1,
                        h_in: self.h_prev,
                        s_min: s,
                        t_min: t,
                        joints,
                        driven,
                        jump: (0.0, 0.0),
                        body_jump: vec![0.0; self.bodies.len()],
                    });
                    self.count_fast(dv, rate, t, v);
                }
                Some(o) => {
                    o.steps += 1;
                    if deeper {
                        o.s_min = s;
                        o.t_min = t;
                        o.driven = driven;
                    }
                    self.count_fast(dv, rate, t, v);
                }
            }
            result = result.and(self.judge_open(t, v));
        } else if self.open.is_some() {
            self.count_fast(dv, rate, t, v);
            let o = self.open.take().expect("a passage is open");
            result = result.and(self.close(sys, t, q, v, o));
        } else if started && s.min(s_before) < S_MIDPOINT {
            // a long step whose ends are both regular but not far from a
            // singular position may have crossed it: look at its middle
            for ((m, a), b) in self.q_mid.iter_mut().zip(&self.q_prev).zip(q) {
                *m = 0.5 * (a + b);
            }
            let t_mid = 0.5 * (self.t_prev + t);
            let q_mid = std::mem::take(&mut self.q_mid);
            let s_mid = self.ratio_at(sys, t_mid, &q_mid);
            self.q_mid = q_mid;
            if s_mid < S_NEAR {
                let o = OpenPassage {
                    energy_in: self.energy(sys, self.t_prev, &self.q_prev, &self.v_prev),
                    t_in: self.t_prev,
                    v_in: self.v_prev.clone(),
                    a_in: self.a_prev.clone(),
                    steps: 0,
                    h_in: self.h_prev,
                    s_min: s_mid,
                    t_min: t_mid,
                    joints: self.involved(),
                    driven: self.driven(sys, t_mid, &self.q_mid.clone()),
                    jump: (0.0, 0.0),
                    body_jump: vec![0.0; self.bodies.len()],
                };
                self.open = Some(o);
                self.count_fast(dv, rate, t, v);
                let o = self.open.take().expect("a passage is open");
                result = result.and(self.close(sys, t, q, v, o));
            } else {
                self.a_ref = self.a_ref.max(rate);
            }
            // Φ_q and the vector of the step's end for the next warm start
            self.sigma_min(sys, t, q, 1);
        } else if started && rate.is_finite() {
            self.a_ref = self.a_ref.max(rate);
        }
        self.end_step(t, q, v);
        result
    }

    /// The step ending at (t, q, v) becomes the previous one.
    fn end_step(&mut self, t: f64, q: &[f64], v: &[f64]) {
        if self.t_prev.is_finite() && t > self.t_prev {
            let h = t - self.t_prev;
            self.h_prev = h;
            for ((a, x), y) in self.a_prev.iter_mut().zip(v).zip(&self.v_prev) {
                *a = (x - y) / h;
            }
        }
        self.v_prev.copy_from_slice(v);
        self.q_prev.copy_from_slice(q);
        self.t_prev = t;
    }

    /// Count a step of the open passage ending at (t, v) with velocity
    /// change dv at `rate`: for the whole system and for each body.
    fn count_fast(&mut self, dv: f64, rate: f64, t: f64, v: &[f64]) {
        let fast = self.a_ref > 0.0 && rate > SWITCH_ACCELERATION * self.a_ref;
        if let Some(o) = &mut self.open {
            if fast {
                o.jump.0 += dv;
            }
            o.jump.1 = o.jump.1.max(rate);
            if self.t_prev.is_finite() && t > self.t_prev {
                self.bodies.count_fast(
                    &self.mass,
                    v,
                    &self.v_prev,
                    t - self.t_prev,
                    self.a_ref,
                    &mut o.body_jump,
                );
            }
        }
    }

    /// Judge the open passage at its step ending at (t, v), before it
    /// ends: a mechanism that came out on another branch may stay singular
    /// (a folded loop of a parallelogram chain lies collinear from then
    /// on), so that the passage never closes. A switch is the same turn as
    /// at its end ([`SingularityMonitor::close`]), of the whole system or
    /// of one body, measured from v_in. A passage the drivers push into is
    /// left to its end or to the lock-up it leads to: approaching a toggle
    /// the velocity turns fast without any branch to switch to.
    fn judge_open(&mut self, t: f64, v: &[f64]) -> Result<(), BranchSwitch> {
        let Some(o) = self.open.as_ref().filter(|o| !o.driven) else {
            return Ok(());
        };
        let turn = self.norm_m(v, Some(&o.v_in));
        let speed = self.norm_m(v, None).max(self.norm_m(&o.v_in, None));
        let (jump, rate) = o.jump;
        let body = if turn > SWITCH_TURN * speed && jump > SWITCH_JUMP * speed {
            None
        } else {
            match self
                .bodies
                .switched(&self.mass, &o.v_in, v, &o.body_jump, speed)
            {
                Some(b) => Some(b),
                None => return Ok(()),
            }
        };
        let o = self.open.take().expect("a passage is open");
        let passage = Passage {
            t: o.t_min,
            s_min: o.s_min,
            joints: if o.joints.is_empty() {
                self.joints_of(&self.u_min)
            } else {
                o.joints
            },
            driven: o.driven,
        };
        self.passages.push(passage.clone());
        Err(self.turn_switch(passage, (turn, speed, jump, rate), (o.t_in, t), body))
    }

    /// The switch found by the velocity turn across a passage from t_in to
    /// t_out, of the whole system or of `body`: (turn, speed, jump, rate)
    /// as measured, the rate relative to the run's largest elsewhere.
    fn turn_switch(
        &self,
        passage: Passage,
        (turn, speed, jump, rate): (f64, f64, f64, f64),
        (t_in, t_out): (f64, f64),
        body: Option<BodyTurn>,
    ) -> BranchSwitch {
        BranchSwitch {
            passage,
            turn,
            speed,
            jump,
            ratio: rate / self.a_ref,
            miss: 0.0,
            energy_change: 0.0,
            energy_bound: self.energy_bound,
            t_in,
            t_out,
            body,
        }
    }

    /// Forget the previous step (after an event that changed the state):
    /// no passage or acceleration spans the restart.
    pub fn restart(&mut self) {
        self.t_prev = f64::NAN;
        self.open = None;
        self.pending = None;
    }

    /// A passage ended at t with velocity v: record it, and judge whether
    /// the velocity turned like a branch switch (module documentation).
    fn close(
        &mut self,
        sys: &dyn MechanicalSystem,
        t: f64,
        q: &[f64],
        v: &[f64],
        o: OpenPassage,
    ) -> Result<(), BranchSwitch> {
        let turn = self.norm_m(v, Some(&o.v_in));
        let speed = self.norm_m(v, None).max(self.norm_m(&o.v_in, None));
        let (jump, rate) = o.jump;
        let joints = if o.joints.is_empty() {
            self.joints_of(&self.u_min)
        } else {
            o.joints
        };
        let passage = Passage {
            t: o.t_min,
            s_min: o.s_min,
            joints,
            driven: o.driven,
        };
        self.passages.push(passage.clone());
        // judged once the run has had a regular step to compare with
        if self.conservative {
            let (e_out, k_out) = self.energy(sys, t, q, v);
            let (e_in, k_in) = o.energy_in;
            let change = (e_out - e_in).abs() / k_in.max(k_out).max(f64::MIN_POSITIVE);
            if change > self.energy_bound && change.is_finite() {
                return Err(BranchSwitch {
                    passage,
                    turn,
                    speed,
                    jump: 0.0,
                    ratio: 0.0,
                    miss: 0.0,
                    energy_change: change,
                    energy_bound: self.energy_bound,
                    t_in: o.t_in,
                    t_out: t,
                    body: None,
                });
            }
        }
        let measured = (turn, speed, jump, rate);
        if turn > SWITCH_TURN * speed && jump > SWITCH_JUMP * speed {
            return Err(self.turn_switch(passage, measured, (o.t_in, t), None));
        }
        // one body may have switched while the rest kept turning (not
        // judged where drivers push into the pose: a lock-up, no branch)
        let body = if passage.driven {
            None
        } else {
            self.bodies
                .switched(&self.mass, &o.v_in, v, &o.body_jump, speed)
        };
        if let Some(body) = body {
            return Err(self.turn_switch(passage, measured, (o.t_in, t), Some(body)));
        }
        // the accelerations on either side predict v_out only when the
        // integrator resolved the passage: some steps inside it, each
        // side's step shorter than the passage
        let dt = t - o.t_in;
        let resolved = o.steps >= RESOLVED_STEPS && o.h_in < dt;
        if turn > SWITCH_TURN * speed && resolved {
            let v_half = o
                .v_in
                .iter()
                .zip(&o.a_in)
                .map(|(v, a)| v + 0.5 * dt * a)
                .collect();
            self.pending = Some(Pending {
                passage,
                t_in: o.t_in,
                t_out: t,
                v_half,
                v_out: v.to_vec(),
                turn,
                speed,
            });
        }
        Ok(())
    }

    /// A passage with a large turn, judged at the step after it (ending at
    /// (t, v)): a_out = (v − v_out)/(t − t_out), and the turn is a switch
    /// when v_out misses v_in + (t_out − t_in)(a_in + a_out)/2 by more than
    /// [`SWITCH_TURN`] of the speed (module documentation).
    fn judge(&mut self, p: Pending, t: f64, v: &[f64]) -> Result<(), BranchSwitch> {
        let (dt, h) = (p.t_out - p.t_in, t - p.t_out);
        if h >= dt {
            return Ok(());
        }
        let mut miss2 = 0.0;
        for i in 0..self.nv {
            let a_out = (v[i] - p.v_out[i]) / h;
            let d = p.v_out[i] - (p.v_half[i] + 0.5 * dt * a_out);
            miss2 += self.mass[i] * d * d;
        }
        let miss = miss2.sqrt();
        if miss > SWITCH_TURN * p.speed && miss.is_finite() {
            return Err(BranchSwitch {
                passage: p.passage,
                turn: p.turn,
                speed: p.speed,
                jump: 0.0,
                ratio: 0.0,
                miss,
                energy_change: 0.0,
                energy_bound: self.energy_bound,
                t_in: p.t_in,
                t_out: p.t_out,
                body: None,
            });
        }
        Ok(())
    }

    /// Lines for a run's diagnostics: the passages (at most ten listed).
    pub fn diagnostics(&self) -> Vec<String> {
        const SHOWN: usize = 10;
        let mut out = Vec::new();
        for p in self.passages.iter().take(SHOWN) {
            // the saddle-point matrices [M Φ_qᵀ; Φ_q 0] the formulations
            // factor have a Schur complement Φ_q M⁻¹ Φ_qᵀ of condition
            // ∝ 1/σ_min²
            out.push(format!(
                "singular configuration at t = {:.6} s: joints {} (σ_min/σ_generic = {:.1e}; \
                 the condition of the constrained iteration matrices grows by about {:.0e} there)",
                p.t,
                p.joints.join(", "),
                p.s_min,
                1.0 / (p.s_min * p.s_min).max(f64::MIN_POSITIVE)
            ));
        }
        if self.passages.len() > SHOWN {
            out.push(format!(
                "singular configurations: {} more passages not listed",
                self.passages.len() - SHOWN
            ));
        }
        out
    }

    /// Whether the dependent rows u at (t, q) carry a driver: uᵀΦ_t ≠ 0
    /// relative to ‖Φ_t‖ (the velocity equation Φ_q v = −Φ_t then has no
    /// solution at the singular point).
    fn driven(&mut self, sys: &dyn MechanicalSystem, t: f64, q: &[f64]) -> bool {
        sys.constraint_time_derivative(t, q, &mut self.phi_t);
        let u = &self.x[self.watched()];
        let ut: f64 = u.iter().zip(&self.phi_t).map(|(a, b)| a * b).sum();
        let ft = self.phi_t.iter().map(|x| x * x).sum::<f64>().sqrt();
        ft > 0.0 && ut.abs() > DRIVEN * ft
    }

    /// What a run that failed should say about the mechanism: a lock-up
    /// when the last accepted step was in a passage the drivers push into,
    /// or when such a passage came before the failure (a penalty
    /// formulation runs past it off the constraints); the singular
    /// configuration when the last accepted step was in an undriven one.
    pub fn failure_note(&mut self, sys: &dyn MechanicalSystem) -> Option<String> {
        if self.m == 0 {
            return None;
        }
        if self.open.is_none()
            && self.s_last < S_APPROACH
            && self.s_last < self.s_before_last
            && self.t_prev.is_finite()
        {
            // approaching a singular position: the iteration vector and
            // the positions are those of the last accepted step
            let q = self.q_prev.clone();
            if self.driven(sys, self.t_prev, &q) {
                return Some(format!(
                    "approaching a lock-up at t = {}: joints {} near a singular configuration \
                     (σ_min/σ_generic = {:.1e} and falling) that the drivers push into (a toggle \
                     position); check the driver's range and the link lengths",
                    self.t_prev,
                    self.involved().join(", "),
                    self.s_last
                ));
            }
        }
        let (p, s) = match &self.open {
            Some(o) => (
                Passage {
                    t: o.t_min,
                    s_min: o.s_min,
                    joints: if o.joints.is_empty() {
                        self.joints_of(&self.u_min)
                    } else {
                        o.joints.clone()
                    },
                    driven: o.driven,
                },
                self.s_last.min(o.s_min),
            ),
            None => {
                let p = self
                    .passages
                    .last()
                    .filter(|p| p.driven && p.s_min <= S_FAILURE)?;
                (p.clone(), p.s_min)
            }
        };
        let joints = if p.joints.is_empty() {
            self.involved()
        } else {
            p.joints.clone()
        };
        Some(if p.driven {
            format!(
                "lock-up at t = {} at a singular configuration of joints {} (σ_min/σ_generic = \
                 {s:.1e}): the drivers demand a motion the mechanism cannot make there (a toggle \
                 position); check the driver's range and the link lengths",
                p.t,
                joints.join(", ")
            )
        } else {
            format!(
                "at a singular configuration of joints {} at t = {} (σ_min/σ_generic = {s:.1e}): \
                 the constraints lose rank there (bars collinear, assembly branches crossing); \
                 another step size or tolerance, or the formulation made for such poses \
                 (augmented_lagrangian at a fixed step), may pass it",
                joints.join(", "),
                p.t
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jounce_mechanics::PlanarSystem;
    use nalgebra::DMatrix;

    /// A parallelogram: cranks of length 1 pivoted at x = 0 and 1, a
    /// coupler on their tips; all bars collinear when the cranks lie
    /// horizontal (φ = ±π/2), where the parallelogram and the folded
    /// branch cross.
    fn parallelogram() -> PlanarSystem {
        let text = r#"
[model]
name = "parallelogram"
gravity = [0.0, -9.81]

[[bodies]]
name = "crank0"
mass = 1.0
inertia = 0.0833333333333
position = [0.0, 0.5]
points = { base = [0.0, -0.5], tip = [0.0, 0.5] }

[[bodies]]
name = "crank1"
mass = 1.0
inertia = 0.0833333333333
position = [1.0, 0.5]
points = { base = [0.0, -0.5], tip = [0.0, 0.5] }

[[bodies]]
name = "coupler"
mass = 1.0
inertia = 0.0833333333333
position = [0.5, 1.0]
points = { left = [-0.5, 0.0], right = [0.5, 0.0] }

[[joints]]
name = "pivot0"
type = "revolute"
body1 = "ground"
point1 = [0.0, 0.0]
body2 = "crank0"
point2 = "base"

[[joints]]
name = "pivot1"
type = "revolute"
body1 = "ground"
point1 = [1.0, 0.0]
body2 = "crank1"
point2 = "base"

[[joints]]
name = "left"
type = "revolute"
body1 = "crank0"
point1 = "tip"
body2 = "coupler"
point2 = "left"

[[joints]]
name = "right"
type = "revolute"
body1 = "crank1"
point1 = "tip"
body2 = "coupler"
point2 = "right"

[settings]
t_end = 1.0
"#;
        let model = jounce_model::from_str(text, "parallelogram.toml").expect("valid model");
        PlanarSystem::from_model(&model).expect("valid system")
    }

    /// Positions and velocities on the parallelogram branch at crank angle
    /// φ turning at ω (body angle φ, the crank's axis along its y axis).
    fn state(phi: f64, omega: f64) -> (Vec<f64>, Vec<f64>) {
        let (s, c) = phi.sin_cos();
        let q = vec![
            -0.5 * s,
            0.5 * c,
            phi,
            1.0 - 0.5 * s,
            0.5 * c,
            phi,
            0.5 - s,
            c,
            0.0,
        ];
        let v = vec![
            -0.5 * c * omega,
            -0.5 * s * omega,
            omega,
            -0.5 * c * omega,
            -0.5 * s * omega,
            omega,
            -c * omega,
            -s * omega,
            0.0,
        ];
        (q, v)
    }

    /// σ_min of Φ_q diag(M)^{-1/2} by a dense SVD.
    fn dense_sigma_min(sys: &PlanarSystem, q: &[f64]) -> f64 {
        let (m, n) = (sys.nc(), sys.nv());
        let mut jac = DMatrix::zeros(m, n);
        sys.constraint_jacobian(0.0, q, &mut jac);
        let mut mass = DMatrix::zeros(n, n);
        sys.mass_matrix(q, &mut mass);
        for j in 0..n {
            let w = 1.0 / mass[(j, j)].sqrt();
            for i in 0..m {
                jac[(i, j)] *= w;
            }
        }
        jac.singular_values()
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min)
    }

    #[test]
    fn the_ratio_follows_the_dense_smallest_singular_value_to_the_singular_pose() {
        let sys = parallelogram();
        let (q0, _) = state(0.0, 1.0);
        let mut mon = SingularityMonitor::new(&sys, 0.0, &q0, 0);
        let mut sigma_max = dense_sigma_min(&sys, &q0);
        let mut worst: f64 = 0.0;
        let half_pi = std::f64::consts::FRAC_PI_2;
        for k in 1..=100 {
            let phi = half_pi * k as f64 / 100.0;
            let (q, v) = state(phi, 1.0);
            mon.observe(&sys, phi, &q, &v)
                .expect("no switch on the branch");
            let sigma = dense_sigma_min(&sys, &q);
            sigma_max = sigma_max.max(sigma);
            let expected = sigma / sigma_max;
            // far from the pose (s ≥ S_MIDPOINT, not falling fast) the
            // monitor may skip steps and keep the last s
            if expected >= S_MIDPOINT {
                continue;
            }
            let tol = 1e-3;
            worst = worst.max((mon.s_last() - expected).abs() / expected);
            assert!(
                (mon.s_last() - expected).abs() <= tol * expected,
                "φ = {phi}: s = {} against {expected}",
                mon.s_last()
            );
        }
        assert!(
            mon.s_last() < 1e-6,
            "s = {} at the singular pose",
            mon.s_last()
        );
        eprintln!("largest relative deviation of s: {worst:.2e}");
    }

    #[test]
    fn a_smooth_passage_is_listed_and_a_velocity_jump_in_it_is_a_switch() {
        let sys = parallelogram();
        let half_pi = std::f64::consts::FRAC_PI_2;
        let run = |jump: bool| {
            let (q0, _) = state(0.0, 1.0);
            let mut mon = SingularityMonitor::new(&sys, 0.0, &q0, 0);
            let h = 0.01;
            let mut out = Ok(());
            for k in 1..=300 {
                let t = h * k as f64;
                let phi = t;
                // on the jumping run the velocity reverses within the step
                // that crosses the singular pose
                let omega = if jump && phi > half_pi { -1.0 } else { 1.0 };
                let (q, v) = state(phi, omega);
                out = mon.observe(&sys, t, &q, &v);
                if out.is_err() {
                    break;
                }
            }
            (mon, out)
        };
        let (mon, out) = run(false);
        assert!(out.is_ok(), "{:?}", out);
        assert_eq!(mon.passages().len(), 1, "{:?}", mon.passages());
        let p = &mon.passages()[0];
        assert!((p.t - half_pi).abs() < 0.02, "{p:?}");
        assert!(!p.driven);
        for joint in ["pivot0", "pivot1", "left", "right"] {
            assert!(p.joints.iter().any(|j| j == joint), "{p:?}");
        }
        let (_, out) = run(true);
        let switch = out.expect_err("the reversal is a switch");
        assert!((switch.passage.t - half_pi).abs() < 0.02, "{switch:?}");
        let text = switch.to_string();
        assert!(text.starts_with("branch switch at t = 1.57"), "{text}");
        assert!(text.contains("pivot0"), "{text}");
    }

    /// Steps on the parallelogram branch from φ = 1.5 towards the
    /// singular pose π/2, each a fixed fraction of the way left, as an
    /// integrator whose step size collapses there takes them; `budget`
    /// and t_end = 3 the horizon. Returns the step count at which the
    /// monitor said the run stalled, and its message.
    fn creep(fraction: f64, budget: Option<u64>) -> Option<(usize, String)> {
        let sys = parallelogram();
        let half_pi = std::f64::consts::FRAC_PI_2;
        let (q0, _) = state(0.0, 1.0);
        let mut mon = SingularityMonitor::new(&sys, 0.0, &q0, 0);
        if let Some(b) = budget {
            mon.set_horizon(3.0, b);
        }
        let mut t = 0.0;
        // regular steps to φ = 1.5, then the creep
        for k in 1..=150 {
            t = 0.01 * k as f64;
            let (q, v) = state(t, 1.0);
            mon.observe(&sys, t, &q, &v).expect("no switch");
            assert!(
                mon.stall(t).is_none(),
                "stalled at t = {t} far from the pose"
            );
        }
        for k in 1..=400 {
            t += fraction * (half_pi - t);
            let (q, v) = state(t, 1.0);
            mon.observe(&sys, t, &q, &v).expect("no switch");
            if let Some(stall) = mon.stall(t) {
                return Some((k, stall.to_string()));
            }
        }
        None
    }

    #[test]
    fn a_run_creeping_into_a_singular_pose_has_stalled_after_stall_steps_there() {
        // steps of a tenth of the distance left: within about 60 steps
        // they are shorter than 3/(2 · 1e6) and s is below S_FAILURE
        let (k, text) = creep(0.1, Some(1_000_000)).expect("the creep is a stall");
        assert!(
            (STALL_STEPS..STALL_STEPS + 120).contains(&k),
            "stalled after {k} creeping steps"
        );
        assert!(text.starts_with(STALLED), "{text}");
        for joint in ["pivot0", "pivot1", "left", "right"] {
            assert!(text.contains(joint), "{text}");
        }
        // the same creep with a budget that its pace does not exceed goes
        // on: the steps of 10⁻¹⁸ s at the end are within 3e18 / 2
        assert!(creep(0.1, Some(u64::MAX / 2)).is_none());
        // no horizon, no judgement
        assert!(creep(0.1, None).is_none());
    }

    /// A chain of n parallelograms (the P-C chain of `bench/pc_chain.py`):
    /// cranks of length 1 pivoted at x = 0..n, couplers on their tips.
    fn chain(n: usize) -> PlanarSystem {
        let mut text = String::from("[model]\nname = \"chain\"\n\n");
        for i in 0..=n {
            text += &format!(
                "[[bodies]]\nname = \"crank{i}\"\nmass = 1.0\ninertia = 0.0833333333333\n\
                 position = [{i}.0, 0.5]\npoints = {{ base = [0.0, -0.5], tip = [0.0, 0.5] }}\n\n\
                 [[joints]]\nname = \"pivot{i}\"\ntype = \"revolute\"\nbody1 = \"ground\"\n\
                 point1 = [{i}.0, 0.0]\nbody2 = \"crank{i}\"\npoint2 = \"base\"\n\n"
            );
        }
        for i in 0..n {
            text += &format!(
                "[[bodies]]\nname = \"coupler{i}\"\nmass = 1.0\ninertia = 0.0833333333333\n\
                 position = [{i}.5, 1.0]\npoints = {{ left = [-0.5, 0.0], right = [0.5, 0.0] }}\n\n"
            );
            for (side, c) in [("left", i), ("right", i + 1)] {
                text += &format!(
                    "[[joints]]\nname = \"coupler{i}_{side}\"\ntype = \"revolute\"\n\
                     body1 = \"crank{c}\"\npoint1 = \"tip\"\nbody2 = \"coupler{i}\"\n\
                     point2 = \"{side}\"\n\n"
                );
            }
        }
        text += "[settings]\nt_end = 1.0\n";
        let model = jounce_model::from_str(&text, "chain.toml").expect("valid model");
        PlanarSystem::from_model(&model).expect("valid system")
    }

    /// Positions and velocities of the chain of n parallelograms at crank
    /// angle φ turning at ω, the last crank turning at `omega_last`.
    fn chain_state(n: usize, phi: f64, omega: f64, omega_last: f64) -> (Vec<f64>, Vec<f64>) {
        let (s, c) = phi.sin_cos();
        let (mut q, mut v) = (Vec::new(), Vec::new());
        for i in 0..=n {
            let w = if i == n { omega_last } else { omega };
            q.extend([i as f64 - 0.5 * s, 0.5 * c, phi]);
            v.extend([-0.5 * c * w, -0.5 * s * w, w]);
        }
        for i in 0..n {
            q.extend([i as f64 + 0.5 - s, c, 0.0]);
            v.extend([-c * omega, -s * omega, 0.0]);
        }
        (q, v)
    }

    /// In a chain of ten parallelograms the last crank alone reverses as
    /// the chain crosses the singular pose: the whole system's velocity
    /// turns by 0.31 of its speed (below [`SWITCH_TURN`], which the test
    /// of the whole system alone missed), the crank's own by twice its
    /// speed. The switch is found within the passage, at the step that
    /// made it, and names the crank; the same run without the reversal
    /// passes.
    #[test]
    fn one_crank_of_a_chain_folding_is_a_switch() {
        let n = 10;
        let sys = chain(n);
        let half_pi = std::f64::consts::FRAC_PI_2;
        let run = |fold: bool| {
            let (q0, _) = chain_state(n, 0.0, 1.0, 1.0);
            let mut mon = SingularityMonitor::new(&sys, 0.0, &q0, 0);
            let h = 0.01;
            for k in 1..=300 {
                let t = h * k as f64;
                let last = if fold && t > half_pi { -1.0 } else { 1.0 };
                let (q, v) = chain_state(n, t, 1.0, last);
                mon.observe(&sys, t, &q, &v)?;
            }
            Ok::<_, BranchSwitch>(mon.passages().len())
        };
        assert_eq!(run(false).expect("no switch on the branch"), 1);
        let switch = run(true).expect_err("the folded crank is a switch");
        assert!(
            switch.turn < SWITCH_TURN * switch.speed,
            "the whole system turned by {} of {}",
            switch.turn,
            switch.speed
        );
        assert!(switch.t_out < half_pi + 0.015, "{switch:?}");
        let body = switch.body.clone().expect("a body turned");
        assert_eq!(body.body, format!("crank{n}"));
        assert!(body.turn > 1.9 * body.speed, "{body:?}");
        let text = switch.to_string();
        assert!(text.starts_with("branch switch at t = 1.57"), "{text}");
        assert!(text.contains(&format!("body crank{n} turned")), "{text}");
    }

    /// A conservative run that loses 3 % of its kinetic energy in a passage
    /// (its speed falls by 1.5 %, on its branch) goes on at a fixed step
    /// (bound 10 %) and at rtol = 1e-3 (10²·rtol = 10 %), and stops at
    /// rtol = 1e-8 (bound 0.1 %), naming the unresolved passage, not a
    /// branch switch.
    #[test]
    fn energy_lost_in_a_passage_stops_a_run_whose_tolerance_forbids_it() {
        let sys = parallelogram();
        let half_pi = std::f64::consts::FRAC_PI_2;
        let run = |rtol: Option<f64>| {
            let (q0, _) = state(0.0, 1.0);
            let mut mon = SingularityMonitor::new(&sys, 0.0, &q0, 0);
            mon.set_conservative(true);
            mon.set_energy_bound(rtol);
            let h = 0.01;
            for k in 1..=300 {
                let t = h * k as f64;
                // the speed that keeps E = 10 J along the path, 1.5 % less
                // after the singular pose
                let (q, v1) = state(t, 1.0);
                let unit = sys.kinetic_energy(&q, &v1);
                let omega = ((10.0 - sys.potential_energy(t, &q)) / unit).sqrt();
                let omega = if t > half_pi { 0.985 * omega } else { omega };
                let (q, v) = state(t, omega);
                mon.observe(&sys, t, &q, &v)?;
            }
            Ok::<_, BranchSwitch>(mon.passages().len())
        };
        assert_eq!(run(None).expect("within 10 %"), 1);
        assert_eq!(run(Some(1e-3)).expect("within 10 %"), 1);
        let stop = run(Some(1e-8)).expect_err("3 % is more than rtol 1e-8 allows");
        assert!(
            stop.energy_change > 0.02 && stop.energy_change < 0.04,
            "{stop:?}"
        );
        let text = stop.to_string();
        assert!(
            text.starts_with("singular passage not resolved at t = 1.57"),
            "{text}"
        );
        assert!(text.contains("allows 0.1 %"), "{text}");
    }
}
