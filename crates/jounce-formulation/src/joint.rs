//! Joint-coordinate (relative, minimal) formulation.
//!
//! State y = [q; v] of the joint coordinates of the system's kinematic
//! tree ([`jounce_mechanics::JointCoordinateSystem`], from
//! [`MechanicalSystem::joint_coordinates`]). Right-hand side q' = v,
//! v' = a with
//!
//! * a tree (no cut joints, no drivers): M(q) a = f(t, q, v) solved by the
//!   articulated-body algorithm in O(N), without forming M (Featherstone,
//!   *Rigid Body Dynamics Algorithms*, 2008, ch. 7);
//! * closed loops and drivers (cut into m closure constraints Φ(t, q) = 0,
//!   termeer 1996, relative coordinates; jalon-bayo ch. 2):
//!
//!   ```text
//!   [ M(q)  Φ_qᵀ ] [ a ]   [ f(t, q, v) ]
//!   [ Φ_q   0    ] [ λ ] = [ γ          ]
//!   ```
//!
//!   with M by the composite-rigid-body algorithm and f = Q − C by
//!   recursive Newton–Euler, solved densely (these systems are small). As in `augmented` without Baumgarte terms, the
//!   closure constraints hold at acceleration level and may drift, unless
//!   Baumgarte terms ([`Joint::with_baumgarte`], `[settings.baumgarte]`)
//!   replace γ by γ − 2αΦ' − β²Φ.
//!
//! As a [`SecondOrderProblem`] (structural methods): for a tree,
//! M(q) q'' = f(t, q, v) with M from CRBA and the exact tangents
//! K = ∂(M a − f)/∂q, C = −∂f/∂v by recursive Newton–Euler in dual numbers;
//! with closure constraints, I q'' = a(t, q, v), the KKT acceleration.
//!
//! **Jacobian.** J = [[0, I], [∂a/∂q, ∂a/∂v]] with the columns of ∂a/∂q,
//! ∂a/∂v from the articulated-body algorithm (tree) or the KKT solve
//! (closed loops) run in dual numbers: exact.
//!
//! **Positions that are not rates** (n_q > n_v: the unit quaternion of
//! a free joint, the implicit root joint of a spatial body not joined to
//! ground; Featherstone 2008, sec. 4.5). q' = T(q) v
//! ([`JointCoordinateSystem::position_derivative`]) keeps |p| = 1 only to
//! the integrator's error; after every accepted step q is projected back,
//! q ← q ⊕ 0 ([`JointCoordinateSystem::integrate_position`]), reported as a
//! correction ([`StepFix::Corrected`]), as `augmented` does for body
//! coordinates. The Jacobian's upper blocks are then T(q) and
//! ∂(T(q) v)/∂q, exact (T(q) v is affine in q), its lower ones ∂a/∂q
//! (n_v × n_q) and ∂a/∂v as above. The second-order form is offered on the
//! manifold: M(q) v' = f(t, q, v) with the positions moved by the joint
//! system's retraction q ⊕ Δ ([`SecondOrderProblem::integrate_positions`],
//! the exponential map of the rotation increment, p ⊗ exp(Δ_ω), then
//! normalised), so that the structural methods update rotations as the
//! Lie-group Newmark and generalized-α methods of Brüls & Cardona (2010),
//! "On the use of Lie group time integrators in multibody dynamics",
//! J. Comput. Nonlinear Dynam. 5:031002, and as they do on `index3`; K is
//! then taken along Δ, K_Δ = (∂r/∂q) T(q) (T(q) = ∂(q ⊕ Δ)/∂Δ at Δ = 0,
//! the map of [`JointCoordinateSystem::position_derivative`]).
//!
//! **Output.** [`Formulation::physical_state`] maps (q, v) to body
//! coordinates by forward kinematics, so results, energies and the
//! constraint violations of the original joints are those of a body
//! coordinate run. The body multipliers λ (joint reactions, driver forces)
//! follow from the body equations M ẍ + Φ_xᵀ λ = Q at the body
//! accelerations ẍ of the joint motion, in the least-squares sense
//! (Φ_x Φ_xᵀ λ = Φ_x (Q − M ẍ), exact when the motion is), for systems of
//! at most [`MULTIPLIER_ROWS_MAX`] constraint rows (dense, output only);
//! larger systems report zeros.

use jounce_integrate::{EvalError, OdeProblem, SecondOrderProblem, StepFix};
use jounce_mechanics::{JointCoordinateSystem, JointData, JointSpaceError, MechanicalSystem};
use nalgebra::DMatrix;

use crate::error::FormulationError;
use crate::formulation::Formulation;
use crate::lu::FullPivLu;

/// Largest number of body constraint rows for which the output carries
/// the body multipliers (a dense least-squares solve per output row).
pub const MULTIPLIER_ROWS_MAX: usize = 200;

/// Relative violation of a tree joint by the initial body state above
/// which the start is refused.
const TREE_TOL: f64 = 1e-6;

/// The joint-coordinate formulation of a body-coordinate system `S`.
pub struct Joint<'a, S: MechanicalSystem + ?Sized> {
    sys: &'a S,
    js: Box<dyn JointCoordinateSystem>,
    data: JointData,
    /// Number of joint rates n.
    n: usize,
    /// Number of joint positions n_q (> n with free joints).
    nq: usize,
    /// Zero rate increment, the projected positions, and the buffers of
    /// the kinematic block of the Jacobian (n_q ≠ n only).
    zero: Vec<f64>,
    projected: Vec<f64>,
    shifted: Vec<f64>,
    rate0: Vec<f64>,
    rate1: Vec<f64>,
    unit: Vec<f64>,
    /// Number of closure constraints m.
    m: usize,
    /// Body-coordinate sizes, for `physical_state`.
    body_nc: usize,
    /// Accelerations q''.
    acc: Vec<f64>,
    da_dq: DMatrix<f64>,
    da_dv: DMatrix<f64>,
    /// ∂r/∂q (n × n_q) of the second-order residual before the chain rule
    /// to the increments Δ (n_q ≠ n only; sized on the first tangent).
    k_q: DMatrix<f64>,
    /// The time cap of the second-order form ([`OdeProblem::set_time_cap`]):
    /// with n_q ≠ n the structural methods see this form unwrapped.
    t_cap: f64,
    breakpoints: Vec<f64>,
    /// Output buffers of the body multipliers (empty when not computed).
    body: BodyMultipliers,
}

/// Buffers of the body-multiplier solve of [`Formulation::physical_state`].
struct BodyMultipliers {
    acc: Vec<f64>,
    mass: DMatrix<f64>,
    forces: Vec<f64>,
    jac: DMatrix<f64>,
    lu: FullPivLu,
    rhs: Vec<f64>,
    work: Vec<f64>,
}

impl BodyMultipliers {
    fn new(nv: usize, nc: usize) -> Self {
        let (nv, nc) = if nc <= MULTIPLIER_ROWS_MAX {
            (nv, nc)
        } else {
            (0, 0)
        };
        Self {
            acc: vec![0.0; nv],
            mass: DMatrix::zeros(nv, nv),
            forces: vec![0.0; nv],
            jac: DMatrix::zeros(nc, nv),
            lu: FullPivLu::new(nc, nc),
            rhs: vec![0.0; nc],
            work: vec![0.0; nc],
        }
    }
}

fn eval_error(t: f64, e: JointSpaceError) -> EvalError {
    match e {
        JointSpaceError::ZeroArticulatedInertia { joint, value } => EvalError::Singular {
            what: "articulated inertia".into(),
            t,
            detail: format!("{joint} sees D = {value:e}; the bodies beyond it need mass or inertia in its direction"),
        },
        JointSpaceError::SingularClosure(rows) => EvalError::Singular {
            what: "joint-coordinate KKT matrix".into(),
            t,
            detail: format!("redundant or singular closure constraints among {rows}"),
        },
        other => EvalError::Other(format!("at t = {t}: {other}")),
    }
}

impl<'a, S: MechanicalSystem + ?Sized> Joint<'a, S> {
    /// The joint-coordinate form of `sys`.
    ///
    /// # Errors
    /// [`FormulationError::BadParameter`] when the system has no joint
    /// coordinates.
    pub fn new(sys: &'a S) -> Result<Self, FormulationError> {
        let js = sys
            .joint_coordinates()
            .ok_or_else(|| FormulationError::BadParameter {
                formulation: "joint".into(),
                detail: "this system has no joint-coordinate form (a kinematic tree of \
                         revolute and translational joints)"
                    .into(),
            })?;
        let (n, nq, m) = (js.nv(), js.nq(), js.nc());
        let extra = if nq == n { 0 } else { nq };
        Ok(Self {
            data: js.data(),
            n,
            nq,
            zero: vec![0.0; if nq == n { 0 } else { n }],
            projected: vec![0.0; extra],
            shifted: vec![0.0; extra],
            rate0: vec![0.0; extra],
            rate1: vec![0.0; extra],
            unit: vec![0.0; if nq == n { 0 } else { n }],
            m,
            body_nc: sys.nc(),
            acc: vec![0.0; n],
            // sized on the first Jacobian (implicit methods only): two
            // dense n × n blocks were 1.6 GB at build for 10 000 joints
            // that an explicit method never uses
            da_dq: DMatrix::zeros(0, 0),
            da_dv: DMatrix::zeros(0, 0),
            k_q: DMatrix::zeros(0, 0),
            t_cap: f64::INFINITY,
            breakpoints: js.breakpoints(),
            body: BodyMultipliers::new(sys.nv(), sys.nc()),
            sys,
            js,
        })
    }

    /// With Baumgarte parameters α (damping, 1/s) and β (frequency, 1/s)
    /// on the closure constraints (as `augmented`); 0 switches a term off.
    ///
    /// # Errors
    /// [`FormulationError::BadParameter`] for negative or non-finite values.
    pub fn with_baumgarte(mut self, alpha: f64, beta: f64) -> Result<Self, FormulationError> {
        for (name, v) in [
            ("[settings.baumgarte] alpha", alpha),
            ("[settings.baumgarte] beta", beta),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(FormulationError::BadParameter {
                    formulation: "joint".into(),
                    detail: format!("{name} must be finite and ≥ 0, got {v}"),
                });
            }
        }
        self.data.set_baumgarte(alpha, beta);
        Ok(self)
    }

    /// The joint-coordinate system integrated.
    pub fn joint_system(&self) -> &dyn JointCoordinateSystem {
        self.js.as_ref()
    }

    /// Number of closure constraints (cut joints and drivers).
    pub fn closure_constraints(&self) -> usize {
        self.m
    }

    /// Accelerations q'' into `self.acc`.
    fn accelerations(&mut self, t: f64, q: &[f64], v: &[f64]) -> Result<(), EvalError> {
        self.js
            .forward_dynamics(&mut self.data, t, q, v, &mut self.acc)
            .map_err(|e| eval_error(t, e))?;
        if self.acc.iter().any(|x| !x.is_finite()) {
            return Err(EvalError::NonFinite {
                what: "joint accelerations".into(),
                t,
            });
        }
        Ok(())
    }

    /// The Jacobian of q' = T(q) v, v' = a(t, q, v) (n_q ≠ n_v): see
    /// [`OdeProblem::jacobian`].
    fn jacobian_with_map(
        &mut self,
        t: f64,
        y: &[f64],
        jac: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        let (n, nq) = (self.n, self.nq);
        let (q, v) = y.split_at(nq);
        self.acceleration_jacobians(t, q, v)?;
        jac.fill(0.0);
        self.js.position_derivative(q, v, &mut self.rate0);
        self.shifted.copy_from_slice(q);
        for j in 0..nq {
            self.shifted[j] = q[j] + 1.0;
            self.js
                .position_derivative(&self.shifted, v, &mut self.rate1);
            self.shifted[j] = q[j];
            for i in 0..nq {
                jac[(i, j)] = self.rate1[i] - self.rate0[i];
            }
        }
        for j in 0..n {
            self.unit[j] = 1.0;
            self.js.position_derivative(q, &self.unit, &mut self.rate1);
            self.unit[j] = 0.0;
            for i in 0..nq {
                jac[(i, nq + j)] = self.rate1[i];
            }
        }
        for i in 0..n {
            for j in 0..nq {
                jac[(nq + i, j)] = self.da_dq[(i, j)];
            }
            for j in 0..n {
                jac[(nq + i, nq + j)] = self.da_dv[(i, j)];
            }
        }
        Ok(())
    }

    /// ∂q''/∂q and ∂q''/∂v into `da_dq` (n × n_q), `da_dv` (n × n), exact,
    /// sized on the first call.
    fn acceleration_jacobians(&mut self, t: f64, q: &[f64], v: &[f64]) -> Result<(), EvalError> {
        let (n, nq) = (self.n, self.nq);
        if self.da_dq.nrows() != n {
            self.da_dq = DMatrix::zeros(n, nq);
            self.da_dv = DMatrix::zeros(n, n);
        }
        self.js
            .forward_dynamics_jacobians(&mut self.data, t, q, v, &mut self.da_dq, &mut self.da_dv)
            .map_err(|e| eval_error(t, e))
    }
}

impl<S: MechanicalSystem + ?Sized> OdeProblem for Joint<'_, S> {
    fn dim(&self) -> usize {
        self.nq + self.n
    }

    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        let n = self.n;
        let (q, v) = y.split_at(self.nq);
        let (dq, dv) = dy.split_at_mut(self.nq);
        // q'' straight into dy
        self.js
            .forward_dynamics(&mut self.data, t, q, v, dv)
            .map_err(|e| eval_error(t, e))?;
        // q' = v, and q'' finite; element by element (n is small where
        // the cost of this matters, and a call to memcpy is not)
        let mut finite = true;
        if self.nq == n {
            for ((dqi, &vi), &ai) in dq.iter_mut().zip(v).zip(dv.iter()) {
                *dqi = vi;
                finite &= ai.is_finite();
            }
        } else {
            self.js.position_derivative(q, v, dq);
            finite = dv.iter().all(|a| a.is_finite());
        }
        if !finite {
            return Err(EvalError::NonFinite {
                what: "joint accelerations".into(),
                t,
            });
        }
        Ok(())
    }

    /// J = [[0, I], [∂a/∂q, ∂a/∂v]], exact: dual numbers through the
    /// articulated-body algorithm (tree) or the KKT system (closed loops).
    /// When n_q ≠ n_v the upper blocks are those of q' = T(q) v: T(q)
    /// column by column (T(q) e_j, linear in v) and ∂(T(q) v)/∂q column by
    /// column as T(q + e_j) v − T(q) v, exact since T(q) v is affine in q
    /// (ṗ = ½ p ⊗ (0, ω') is linear in p, every other rate independent
    /// of q).
    fn jacobian(&mut self, t: f64, y: &[f64], jac: &mut DMatrix<f64>) -> Result<(), EvalError> {
        if self.nq != self.n {
            return self.jacobian_with_map(t, y, jac);
        }
        let n = self.n;
        let (q, v) = y.split_at(n);
        self.acceleration_jacobians(t, q, v)?;
        jac.fill(0.0);
        for i in 0..n {
            jac[(i, n + i)] = 1.0;
            for j in 0..n {
                jac[(n + i, j)] = self.da_dq[(i, j)];
                jac[(n + i, n + j)] = self.da_dv[(i, j)];
            }
        }
        Ok(())
    }

    /// Exact where the joint system's Jacobians are (planar trees); the
    /// spatial ones are difference quotients, so that the integrator may
    /// treat them as such.
    fn has_exact_jacobian(&self) -> bool {
        self.js.jacobians_are_exact()
    }

    fn breakpoints(&self) -> &[f64] {
        &self.breakpoints
    }

    /// q ← q ⊕ 0 when positions are not rates (unit quaternions
    /// normalised); nothing otherwise.
    fn after_step(&mut self, _t: f64, y: &mut [f64]) -> Result<StepFix, EvalError> {
        if self.nq == self.n {
            return Ok(StepFix::Unchanged);
        }
        let q = &mut y[..self.nq];
        self.js
            .integrate_position(q, &self.zero, &mut self.projected);
        if self.projected[..] == q[..] {
            return Ok(StepFix::Unchanged);
        }
        q.copy_from_slice(&self.projected);
        Ok(StepFix::Corrected)
    }

    fn set_time_cap(&mut self, t_cap: f64) {
        self.t_cap = t_cap;
    }

    /// M(q) v' = f(t, q, v), with q ⊕ Δ when the positions are not rates
    /// (module documentation).
    fn as_second_order(&mut self) -> Option<&mut dyn SecondOrderProblem> {
        Some(self)
    }
}

impl<S: MechanicalSystem + ?Sized> SecondOrderProblem for Joint<'_, S> {
    fn ndof(&self) -> usize {
        self.n
    }

    fn n_positions(&self) -> usize {
        self.nq
    }

    /// q ⊕ Δ of the joint system ([`JointCoordinateSystem::integrate_position`]):
    /// q + Δ but for a quaternion p ⊗ exp(Δ_ω)/|p ⊗ exp(Δ_ω)|.
    fn integrate_positions(&self, q: &[f64], delta: &[f64], out: &mut [f64]) {
        self.js.integrate_position(q, delta, out);
    }

    /// q' = T(q) v ([`JointCoordinateSystem::position_derivative`]).
    fn position_derivative(&self, q: &[f64], v: &[f64], qdot: &mut [f64]) {
        self.js.position_derivative(q, v, qdot);
    }

    /// M(q) by the composite-rigid-body algorithm for a tree; the identity
    /// with closure constraints (accelerations are solved for in `forces`).
    fn mass_matrix(&mut self, _t: f64, q: &[f64], m: &mut DMatrix<f64>) -> Result<(), EvalError> {
        if self.m == 0 {
            self.js.mass_matrix(&mut self.data, q, m);
        } else {
            m.fill_with_identity();
        }
        Ok(())
    }

    /// f = Q − C by recursive Newton–Euler for a tree; the KKT
    /// acceleration with closure constraints.
    fn forces(&mut self, t: f64, q: &[f64], v: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        let t = t.min(self.t_cap);
        if self.m == 0 {
            self.js.bias_forces(&mut self.data, t, q, v, f);
        } else {
            self.accelerations(t, q, v)?;
            f.copy_from_slice(&self.acc);
        }
        if f.iter().any(|x| !x.is_finite()) {
            return Err(EvalError::NonFinite {
                what: "joint forces".into(),
                t,
            });
        }
        Ok(())
    }

    /// K = ∂(M(q) a − f)/∂q, C = −∂f/∂v: recursive Newton–Euler in dual
    /// numbers for a tree; with closure constraints, of r = a − q''(t, q, v),
    /// K = −∂q''/∂q, C = −∂q''/∂v (dual numbers through the KKT system).
    /// When n_q ≠ n, K along the increments of q ⊕ Δ by the chain rule
    /// K_Δ = K_q T(q), column j of T(q) = ∂(q ⊕ Δ)/∂Δ_j at Δ = 0 being
    /// T(q) e_j ([`JointCoordinateSystem::position_derivative`]; a few
    /// nonzeros, so O(n n_q) per column at most).
    fn tangent(
        &mut self,
        t: f64,
        q: &[f64],
        v: &[f64],
        a: &[f64],
        k: &mut DMatrix<f64>,
        c: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        let t = t.min(self.t_cap);
        let (n, nq) = (self.n, self.nq);
        if self.m > 0 {
            self.acceleration_jacobians(t, q, v)?;
            for i in 0..n {
                for j in 0..n {
                    c[(i, j)] = -self.da_dv[(i, j)];
                }
            }
            if nq == n {
                for i in 0..n {
                    for j in 0..n {
                        k[(i, j)] = -self.da_dq[(i, j)];
                    }
                }
                return Ok(());
            }
            if self.k_q.shape() != (n, nq) {
                self.k_q = DMatrix::zeros(n, nq);
            }
            for i in 0..n {
                for j in 0..nq {
                    self.k_q[(i, j)] = -self.da_dq[(i, j)];
                }
            }
        } else if nq == n {
            self.js
                .inverse_dynamics_jacobians(&mut self.data, t, q, v, a, k, c);
            return Ok(());
        } else {
            if self.k_q.shape() != (n, nq) {
                self.k_q = DMatrix::zeros(n, nq);
            }
            self.js
                .inverse_dynamics_jacobians(&mut self.data, t, q, v, a, &mut self.k_q, c);
        }
        // K_Δ = K_q T(q), column by column
        for j in 0..n {
            self.unit[j] = 1.0;
            self.js.position_derivative(q, &self.unit, &mut self.rate1);
            self.unit[j] = 0.0;
            for i in 0..n {
                k[(i, j)] = 0.0;
            }
            for (l, &tl) in self.rate1.iter().enumerate() {
                if tl != 0.0 {
                    for i in 0..n {
                        k[(i, j)] += self.k_q[(i, l)] * tl;
                    }
                }
            }
        }
        Ok(())
    }

    fn has_exact_tangent(&self) -> bool {
        self.js.jacobians_are_exact()
    }
}

impl<S: MechanicalSystem + ?Sized> Formulation for Joint<'_, S> {
    fn name(&self) -> &'static str {
        "joint"
    }

    /// The joint coordinates of the assembled body state (q0, v0); refuses
    /// a state that violates a tree joint, a joint that sees no inertia and
    /// a singular KKT matrix, naming the joint or the closure constraints.
    fn initial_state(
        &mut self,
        t0: f64,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<Vec<f64>, FormulationError> {
        let bad = |detail: String| FormulationError::BadParameter {
            formulation: "joint".into(),
            detail,
        };
        if q0.len() != self.js.body_nq() || v0.len() != self.js.body_nv() {
            return Err(bad(format!(
                "initial state has {} coordinates and {} velocities, the body system {}",
                q0.len(),
                v0.len(),
                self.js.body_nq()
            )));
        }
        let mut y = vec![0.0; self.nq + self.n];
        let (q, v) = y.split_at_mut(self.nq);
        self.js
            .joint_state(&mut self.data, q0, v0, TREE_TOL, q, v)
            .map_err(|e| bad(format!("initial state: {e}")))?;
        let (q, v) = (q.to_vec(), v.to_vec());
        match self
            .js
            .forward_dynamics(&mut self.data, t0, &q, &v, &mut self.acc)
        {
            Ok(()) => Ok(y),
            Err(e @ JointSpaceError::ZeroArticulatedInertia { .. }) => {
                Err(FormulationError::SingularMass {
                    formulation: "joint".into(),
                    detail: format!("at t = {t0}: {e}"),
                })
            }
            Err(e @ JointSpaceError::SingularClosure(_)) => Err(
                FormulationError::SingularJacobian(format!("at t = {t0}: {e}")),
            ),
            Err(e) => Err(bad(format!("initial state: {e}"))),
        }
    }

    fn physical_state(
        &mut self,
        t: f64,
        y: &[f64],
        q: &mut [f64],
        v: &mut [f64],
        lambda: &mut [f64],
    ) -> Result<(), EvalError> {
        let (yq, yv) = y.split_at(self.nq);
        self.js.body_state(&mut self.data, yq, yv, q, v);
        let nc = self.body_nc;
        lambda[..nc].fill(0.0);
        if nc == 0 || nc > MULTIPLIER_ROWS_MAX {
            return Ok(());
        }
        // Φ_x Φ_xᵀ λ = Φ_x (Q − M ẍ)
        self.accelerations(t, yq, yv)?;
        let b = &mut self.body;
        self.js
            .body_acceleration(&mut self.data, yq, yv, &self.acc, &mut b.acc);
        self.sys.mass_matrix(q, &mut b.mass);
        self.sys.generalized_forces(t, q, v, &mut b.forces);
        self.sys.constraint_jacobian(t, q, &mut b.jac);
        let nv = b.forces.len();
        for i in 0..nv {
            let mut s = b.forces[i];
            for j in 0..nv {
                s -= b.mass[(i, j)] * b.acc[j];
            }
            b.forces[i] = s;
        }
        for r in 0..nc {
            b.rhs[r] = (0..nv).map(|j| b.jac[(r, j)] * b.forces[j]).sum();
            for k in 0..nc {
                let s = (0..nv).map(|j| b.jac[(r, j)] * b.jac[(k, j)]).sum();
                b.lu.set(r, k, s);
            }
        }
        b.lu.factor(1e-13);
        if b.lu.is_regular() {
            b.lu.solve_in_place(&mut b.rhs, &mut b.work);
            lambda[..nc].copy_from_slice(&b.rhs);
        }
        Ok(())
    }

    fn physical_motion(
        &mut self,
        _t: f64,
        y: &[f64],
        q: &mut [f64],
        v: &mut [f64],
        _lambda: &mut [f64],
    ) -> Result<(), EvalError> {
        // forward kinematics only: the multipliers need the accelerations
        let (yq, yv) = y.split_at(self.nq);
        self.js.body_state(&mut self.data, yq, yv, q, v);
        Ok(())
    }
}
