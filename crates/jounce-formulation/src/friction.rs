//! The augmented formulation with friction forces as unknowns: stick–slip
//! friction by events, and friction whose normal force is a multiplier
//! (translational joints).
//!
//! State y = [q; v] as in [`crate::Augmented`]. With the friction forces
//! F (one per friction row of [`SystemQueries::friction_row`]) the
//! accelerations solve
//!
//! ```text
//! [ M     Φ_qᵀ   −J_fᵀ ] [ a ]   [ Q                          ]
//! [ Φ_q   0      0     ] [ λ ] = [ γ − 2α Φ' − β² Φ           ]
//! [ S J_f C      D     ] [ F ]   [ friction row of each mode   ]
//! ```
//!
//! where each friction row says, by the element's mode (a 1-D element;
//! 2-D elements below):
//! - **stick**: J_f a = γ_f (v_t stays zero; F is the multiplier of the
//!   stick constraint);
//! - **slip** in direction s = ±1: F = −μ s F_n, with F_n either known
//!   (a contact's penalty force) or |λ_r| = σ λ_r, the normal reaction of
//!   a translational joint, so the row is F + μ s σ λ_r = 0 (Haug,
//!   *Computer-Aided Kinematics and Dynamics of Mechanical Systems*,
//!   1989, §11.4: friction in the equations of motion with the reaction
//!   as unknown). The sign σ of λ_r is iterated until it agrees with the
//!   solution;
//! - **smooth** (the regularised law on a joint): F + μ tanh(v_t/v_ε) σ λ_r
//!   = 0.
//!
//! Modes change at events located by the shared driver
//! ([`Formulation::mode_events`]): a slipping element sticks when v_t
//! returns to zero and the sticking force lies in the cone
//! |F| ≤ μ_s F_n (else it slips the other way); a sticking element slips
//! when its force leaves the cone, g = μ_s F_n − |F| = 0 (the multiplier
//! leaves the friction cone). On sticking, the velocities are projected
//! mass-orthogonally onto v_t = 0 (and the velocity constraints), so that
//! the stuck element does not creep by the event tolerance.
//!
//! **Two-dimensional elements** (a spatial contact: the tangent plane,
//! [`SystemQueries::friction_element_rows`] = 2) have two consecutive rows
//! with one isotropic Coulomb cone (Pfeiffer & Glocker 1996, *Multibody
//! Dynamics with Unilateral Contacts*, §4.3; Glocker 2001, ch. 7):
//! - **stick**: both rows J_f,k a = γ_f,k (F = (F₁, F₂) the multiplier);
//! - **slip**: F = −μ F_n e, e the unit direction of the sliding
//!   velocity v_t; slipping stops when v_t returns to zero, which |v_t|
//!   touches without a sign change, so the event function is the signed
//!   g = v_t · d, d = v_t/|v_t| frozen at the last mode decision (the
//!   1-D g = v_t, up to the sign s). Past that root (the driver evaluates
//!   there while locating it) e is continued smoothly as
//!   e = w/|w|, w = sign(v_t·d) v_t + η d, η = 10⁻¹⁰ m/s (`STICK_SPEED`; for a
//!   1-D element exactly the frozen sign s, as the planar law): with
//!   v_t ≈ s d near a stop, e ≈ d on both sides of s = 0 instead of
//!   flipping. The bias of η is η/|v_t| in direction (10⁻¹⁰ at 1 m/s).
//!   A root where |v_t| is still above max(η, 10⁻⁶ |v_t| at the last
//!   decision) is a slip direction that turned by 90° on a curved slip
//!   path: the element re-decides (d ← v_t/|v_t|) and keeps slipping;
//!   otherwise it sticks if its sticking force lies in the cone
//!   |F| ≤ μ_s F_n (the velocities then projected onto v_t = 0), else
//!   slips against that force;
//! - a sticking element slips against F, d = −F/|F|, when
//!   g = μ_s F_n − |F| crosses zero.
//!
//! **Positions that are not velocities** (n_q > n_v: unit quaternions of
//! spatial bodies) are handled as in [`crate::Augmented`]: q' = T(q) v
//! ([`MechanicalSystem::position_derivative`]), q retracted onto its
//! manifold after every accepted step and in the physical state
//! (q ⊕ 0, [`MechanicalSystem::integrate_position`]), no second-order
//! form.
//!
//! The matrix is not symmetric; it is factored by LU with full pivoting
//! at every evaluation (the friction models are small). The Jacobian of
//! the right-hand side is by differences.
//!
//! Owns: the friction modes and the extended KKT system. Must not: know
//! the kinematics of a friction element (the system's `friction_row`).

use jounce_integrate::{EvalError, EventAction, OdeProblem, SecondOrderProblem, StepFix};
use jounce_mechanics::{
    FrictionLaw, FrictionRow, MechanicalSystem, NormalForce, Quantities, SystemData, SystemQueries,
};
use nalgebra::DMatrix;

use crate::error::FormulationError;
use crate::formulation::Formulation;
use crate::lu::FullPivLu;

/// Sliding speed [m/s] below which an element at the start (or when a
/// contact closes) is tested for sticking rather than set slipping.
const STICK_SPEED: f64 = 1e-10;

/// Fraction of the sliding speed at the last mode decision below which a
/// root of g = v_t · d of a 2-D element is a stop (else the slip direction
/// turned by 90° and the element re-decides, still slipping).
const STOP_FRACTION: f64 = 1e-6;

/// Relative pivot tolerance of the extended KKT factorisation.
const PIVOT_TOL: f64 = 1e-13;

/// The mode of one friction element.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FrictionMode {
    /// The regularised law (no events).
    Smooth,
    /// Sticking: v_t = 0 is a constraint.
    Stick,
    /// Slipping: for a 1-D element with v_t of sign s = ±1 (the value);
    /// for a 2-D element, the value of each row is its component d_k of
    /// the unit slip direction d frozen at the last mode decision.
    Slip(f64),
}

/// The augmented formulation with friction forces solved for.
pub struct FrictionAugmented<'a, S: MechanicalSystem + ?Sized> {
    sys: &'a S,
    alpha: f64,
    beta: f64,
    n: usize,
    m: usize,
    data: SystemData,
    lu: FullPivLu,
    /// Solution [a; λ; F] of the last solve.
    sol: Vec<f64>,
    work: Vec<f64>,
    /// Rows J_f (nf × n) and the evaluated friction elements.
    jf: DMatrix<f64>,
    rows: Vec<FrictionRow>,
    modes: Vec<FrictionMode>,
    /// Sign σ of the normal multiplier assumed in a slip row.
    sigma: Vec<f64>,
    breakpoints: Vec<f64>,
    /// n_q (≥ n_v = `n`).
    nq: usize,
    q: Vec<f64>,
    v: Vec<f64>,
    /// Per row, the first row of its element and the element's rows.
    first: Vec<usize>,
    dims: Vec<usize>,
    /// Per element (at its first row), |v_t| at its last mode decision.
    decision_speed: Vec<f64>,
    /// Scratch for q ⊕ 0 (len n_q) and the zero increment (len n_v).
    projected: Vec<f64>,
    zero: Vec<f64>,
}

impl<'a, S: MechanicalSystem + ?Sized> FrictionAugmented<'a, S> {
    /// The formulation of `sys` with Baumgarte parameters α, β (0 = off).
    ///
    /// # Errors
    /// [`FormulationError::BadParameter`] for negative or non-finite α, β.
    pub fn new(sys: &'a S, alpha: f64, beta: f64) -> Result<Self, FormulationError> {
        if !(alpha.is_finite() && alpha >= 0.0 && beta.is_finite() && beta >= 0.0) {
            return Err(FormulationError::BadParameter {
                formulation: "augmented".into(),
                detail: format!("Baumgarte α, β must be finite and ≥ 0, got {alpha}, {beta}"),
            });
        }
        let (n, m, nf) = (sys.nv(), sys.nc(), sys.n_friction_rows());
        let k = n + m + nf;
        let (mut first, mut dims) = (vec![0; nf], vec![1; nf]);
        let mut i = 0;
        while i < nf {
            let d = sys.friction_element_rows(i);
            if !(1..=2).contains(&d) || i + d > nf {
                return Err(FormulationError::BadParameter {
                    formulation: "augmented".into(),
                    detail: format!(
                        "friction element '{}' has {d} rows from row {i} of {nf}: 1 or 2 are \
                         solved for",
                        sys.friction_label(i)
                    ),
                });
            }
            for r in i..i + d {
                first[r] = i;
                dims[r] = d;
            }
            i += d;
        }
        Ok(Self {
            sys,
            alpha,
            beta,
            n,
            m,
            data: sys.data(),
            lu: FullPivLu::new(k, k),
            sol: vec![0.0; k],
            work: vec![0.0; k],
            jf: DMatrix::zeros(nf, n),
            rows: Vec::with_capacity(nf),
            // set from the laws and the state by `initial_state`
            modes: vec![FrictionMode::Smooth; nf],
            sigma: vec![1.0; nf],
            breakpoints: sys.breakpoints(),
            nq: sys.nq(),
            q: vec![0.0; sys.nq()],
            v: vec![0.0; n],
            first,
            dims,
            decision_speed: vec![0.0; nf],
            projected: vec![0.0; sys.nq()],
            zero: vec![0.0; n],
        })
    }

    /// The current modes, one per friction element.
    pub fn modes(&self) -> &[FrictionMode] {
        &self.modes
    }

    /// Evaluate the system and the friction rows at (t, q, v).
    fn evaluate(&mut self, t: f64, q: &[f64], v: &[f64]) {
        let mut what = Quantities::EQUATIONS_OF_MOTION | Quantities::VELOCITY_CONSTRAINTS;
        if self.alpha != 0.0 || self.beta != 0.0 {
            what |= Quantities::CONSTRAINTS;
        }
        self.sys.evaluate(&mut self.data, t, q, v, what);
        self.rows.clear();
        for i in 0..self.modes.len() {
            // J_f row into contiguous scratch, then into the matrix
            let r = self.sys.friction_row(t, q, v, i, &mut self.work[..self.n]);
            for k in 0..self.n {
                self.jf[(i, k)] = self.work[k];
            }
            self.rows.push(r);
        }
    }

    /// μ and, for the stick–slip law, μ_s of element `i`.
    fn coefficients(&self, i: usize) -> (f64, f64) {
        let f = self.rows[i].friction;
        match f.law {
            FrictionLaw::StickSlip { static_coefficient } => (f.coefficient, static_coefficient),
            FrictionLaw::Regularised { .. } => (f.coefficient, f.coefficient),
        }
    }

    /// Normal force of element `i` from the last solution.
    fn normal_force(&self, i: usize) -> f64 {
        match self.rows[i].normal {
            NormalForce::Known(f) => f.max(0.0),
            NormalForce::Multiplier(r) => self.sol[self.n + r].abs(),
        }
    }

    /// |v_t| of the element whose first row is `f`.
    fn speed(&self, f: usize) -> f64 {
        if self.dims[f] == 1 {
            return self.rows[f].sliding_velocity.abs();
        }
        let v = self.rows[f..f + 2].iter().map(|r| r.sliding_velocity);
        v.map(|x| x * x).sum::<f64>().sqrt()
    }

    /// The friction force (F₁, F₂) of the 2-D element at row `f` from the
    /// last solve.
    fn force2(&self, f: usize) -> [f64; 2] {
        let k = self.n + self.m + f;
        [self.sol[k], self.sol[k + 1]]
    }

    /// Sets the 2-D element at row `f` slipping along the unit direction
    /// of `dir` (or, for `dir` = 0, along `fallback`), decided at sliding
    /// speed `speed`.
    fn set_slip2(&mut self, f: usize, dir: [f64; 2], fallback: [f64; 2], speed: f64) {
        let len = dir[0].hypot(dir[1]);
        let d = if len > 0.0 {
            dir.map(|x| x / len)
        } else {
            fallback
        };
        self.modes[f] = FrictionMode::Slip(d[0]);
        self.modes[f + 1] = FrictionMode::Slip(d[1]);
        self.decision_speed[f] = speed;
    }

    /// The slip direction d frozen in the modes of the 2-D element at `f`.
    fn frozen_direction(&self, f: usize) -> [f64; 2] {
        match (self.modes[f], self.modes[f + 1]) {
            (FrictionMode::Slip(a), FrictionMode::Slip(b)) => [a, b],
            _ => [1.0, 0.0],
        }
    }

    /// Component `k` of the unit direction e of the friction force
    /// −μ F_n e of the slipping 2-D element at `f`:
    /// e = w/|w|, w = sign(v_t·d) v_t + η d (see the module documentation).
    fn slip_unit(&self, f: usize, k: usize) -> f64 {
        let d = self.frozen_direction(f);
        let vt = [
            self.rows[f].sliding_velocity,
            self.rows[f + 1].sliding_velocity,
        ];
        let sign = if vt[0] * d[0] + vt[1] * d[1] < 0.0 {
            -1.0
        } else {
            1.0
        };
        let w = [
            sign * vt[0] + STICK_SPEED * d[0],
            sign * vt[1] + STICK_SPEED * d[1],
        ];
        w[k] / w[0].hypot(w[1])
    }

    /// Assemble and factor the extended KKT matrix for the current modes
    /// and σ, and solve for [a; λ; F]; with `impulse`, the right-hand side
    /// of the velocity projection instead.
    fn assemble_and_solve(&mut self, t: f64, impulse: bool) -> Result<(), EvalError> {
        let (n, m) = (self.n, self.m);
        let nf = self.modes.len();
        let d = &self.data;
        self.lu.clear();
        for i in 0..n {
            for j in 0..n {
                self.lu.set(i, j, d.mass(i, j));
            }
        }
        for r in 0..m {
            let (cols, vals) = d.constraint_jacobian.row(r);
            for (&c, &x) in cols.iter().zip(vals) {
                self.lu.set(n + r, c, x);
                self.lu.set(c, n + r, x);
            }
        }
        for i in 0..nf {
            let k = n + m + i;
            for j in 0..n {
                self.lu.set(j, k, -self.jf[(i, j)]);
            }
        }
        // right-hand side
        for i in 0..n {
            self.sol[i] = if impulse { 0.0 } else { d.forces[i] };
        }
        for r in 0..m {
            self.sol[n + r] = if impulse {
                -d.velocity_constraints[r]
            } else {
                d.gamma[r]
                    - 2.0 * self.alpha * d.velocity_constraints[r]
                    - if self.beta != 0.0 {
                        self.beta * self.beta * d.constraints[r]
                    } else {
                        0.0
                    }
            };
        }
        for i in 0..nf {
            let k = n + m + i;
            let row = self.rows[i];
            let (mu, _) = self.coefficients(i);
            let (f, two) = (self.first[i], self.dims[i] == 2);
            // the factor φ of F = −φ F_n by mode
            let phi = match self.modes[i] {
                FrictionMode::Stick => {
                    for j in 0..n {
                        self.lu.set(k, j, self.jf[(i, j)]);
                    }
                    self.sol[k] = if impulse {
                        -row.sliding_velocity
                    } else {
                        row.gamma
                    };
                    continue;
                }
                FrictionMode::Slip(_) if two => mu * self.slip_unit(f, i - f),
                FrictionMode::Slip(s) => mu * s,
                FrictionMode::Smooth => {
                    let v_eps = row.friction.regularisation().unwrap_or(1.0);
                    if two {
                        // isotropic: μ tanh(|v_t|/v_ε) v_t,k/|v_t|
                        let speed = self.speed(f);
                        if speed > 0.0 {
                            mu * (speed / v_eps).tanh() * row.sliding_velocity / speed
                        } else {
                            0.0
                        }
                    } else {
                        mu * (row.sliding_velocity / v_eps).tanh()
                    }
                }
            };
            self.lu.set(k, k, 1.0);
            match row.normal {
                NormalForce::Known(f) => {
                    self.sol[k] = if impulse { 0.0 } else { -phi * f.max(0.0) };
                }
                NormalForce::Multiplier(r) => {
                    self.lu.set(k, n + r, phi * self.sigma[i]);
                    self.sol[k] = 0.0;
                }
            }
        }
        self.lu.factor(PIVOT_TOL);
        if !self.lu.is_regular() {
            return Err(EvalError::Singular {
                what: "augmented KKT matrix with friction".into(),
                t,
                detail: "[M Φ_qᵀ −J_fᵀ; Φ_q 0 0; friction rows] is singular: a sticking element \
                         may be locked by the joints already"
                    .into(),
            });
        }
        self.lu.solve_in_place(&mut self.sol, &mut self.work);
        if self.sol.iter().any(|x| !x.is_finite()) {
            return Err(EvalError::NonFinite {
                what: "accelerations with friction".into(),
                t,
            });
        }
        Ok(())
    }

    /// Solve for [a; λ; F] at (t, q, v), iterating the signs σ of the
    /// normal multipliers of slipping joint rows until they agree with the
    /// solution (at most nf + 1 solves; a multiplier that flips back and
    /// forth is near zero, and so is its friction force).
    fn solve(&mut self, t: f64, q: &[f64], v: &[f64]) -> Result<(), EvalError> {
        self.evaluate(t, q, v);
        let nf = self.modes.len();
        for _ in 0..=nf {
            self.assemble_and_solve(t, false)?;
            let mut flipped = false;
            for i in 0..nf {
                if self.modes[i] == FrictionMode::Stick {
                    continue;
                }
                if let NormalForce::Multiplier(r) = self.rows[i].normal {
                    let l = self.sol[self.n + r];
                    if l * self.sigma[i] < 0.0 {
                        self.sigma[i] = -self.sigma[i];
                        flipped = true;
                    }
                }
            }
            if !flipped {
                break;
            }
        }
        Ok(())
    }

    /// Whether the element at row `i` (its first row) can stick at the
    /// last solve's state (with its mode set to stick): its force inside
    /// the static cone |F| ≤ μ_s F_n and a normal force pressing.
    fn can_stick(&self, i: usize) -> bool {
        let (_, mu_s) = self.coefficients(i);
        let nf = self.normal_force(i);
        let f = if self.dims[i] == 2 {
            let f = self.force2(i);
            f[0].hypot(f[1])
        } else {
            self.sol[self.n + self.m + i].abs()
        };
        nf > 0.0 && f <= mu_s * nf * (1.0 + 1e-12)
    }

    /// Set the element at row `i` sticking (all its rows).
    fn set_stick(&mut self, i: usize) {
        for r in i..i + self.dims[i] {
            self.modes[r] = FrictionMode::Stick;
        }
    }

    /// Set the element at row `i`, whose sticking force left the cone,
    /// slipping against that force (from the last solve, in stick mode),
    /// decided at sliding speed `speed`.
    fn slip_against_force(&mut self, i: usize, speed: f64) {
        if self.dims[i] == 2 {
            let f = self.force2(i);
            self.set_slip2(i, [-f[0], -f[1]], [1.0, 0.0], speed);
        } else {
            let f = self.sol[self.n + self.m + i];
            self.modes[i] = FrictionMode::Slip(if f > 0.0 { -1.0 } else { 1.0 });
        }
    }

    /// Set the modes of the stick–slip elements (all of them at the start;
    /// later, when a contact closes or opens, those whose sliding speed is
    /// below [`STICK_SPEED`]): slip along v_t when it is faster, else
    /// stick where the sticking force is in the cone, else slip against
    /// it. Returns whether a mode changed.
    fn settle_modes(&mut self, t: f64, q: &[f64], v: &[f64], all: bool) -> Result<bool, EvalError> {
        self.evaluate(t, q, v);
        let old = self.modes.clone();
        let nf = self.modes.len();
        let stick_slip = |r: &FrictionRow| matches!(r.friction.law, FrictionLaw::StickSlip { .. });
        for i in 0..nf {
            if self.first[i] != i {
                continue;
            }
            let speed = self.speed(i);
            if !stick_slip(&self.rows[i]) {
                for r in i..i + self.dims[i] {
                    self.modes[r] = FrictionMode::Smooth;
                }
            } else if speed > STICK_SPEED && (all || self.modes[i] == FrictionMode::Stick) {
                if self.dims[i] == 2 {
                    let vt = [
                        self.rows[i].sliding_velocity,
                        self.rows[i + 1].sliding_velocity,
                    ];
                    self.set_slip2(i, vt, [1.0, 0.0], speed);
                } else {
                    self.modes[i] = FrictionMode::Slip(self.rows[i].sliding_velocity.signum());
                }
            }
        }
        for i in 0..nf {
            if self.first[i] != i || !stick_slip(&self.rows[i]) || self.speed(i) > STICK_SPEED {
                continue;
            }
            self.set_stick(i);
            self.solve(t, q, v)?;
            if !self.can_stick(i) {
                let speed = self.speed(i);
                self.slip_against_force(i, speed);
            }
        }
        Ok(self.modes != old)
    }

    /// q and v of the state y into the scratch `self.q`, `self.v`, copied
    /// out (the event handlers evaluate at them while changing `self`).
    fn motion(&mut self, y: &[f64]) -> (Vec<f64>, Vec<f64>) {
        self.q.copy_from_slice(&y[..self.nq]);
        self.v.copy_from_slice(&y[self.nq..self.nq + self.n]);
        (self.q.clone(), self.v.clone())
    }

    /// Project v mass-orthogonally onto Φ' = 0 and v_t = 0 of the sticking
    /// elements: [M Φ_qᵀ −J_fᵀ; Φ_q; J_f] [Δv; μ; ν] = [0; −Φ'; −v_t].
    fn project_velocities(&mut self, t: f64, y: &mut [f64]) -> Result<(), EvalError> {
        let (n, nq) = (self.n, self.nq);
        let (q, v) = self.motion(y);
        self.evaluate(t, &q, &v);
        self.assemble_and_solve(t, true)?;
        for k in 0..n {
            y[nq + k] += self.sol[k];
        }
        Ok(())
    }

    /// q of the state y, on the manifold (q ⊕ 0) when positions are not
    /// velocities.
    fn positions(&self, y: &[f64], q: &mut [f64]) {
        if self.nq == self.n {
            q.copy_from_slice(&y[..self.nq]);
        } else {
            self.sys.integrate_position(&y[..self.nq], &self.zero, q);
        }
    }
}

impl<S: MechanicalSystem + ?Sized> OdeProblem for FrictionAugmented<'_, S> {
    fn dim(&self) -> usize {
        self.nq + self.n
    }

    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        let (n, nq) = (self.n, self.nq);
        let (q, v) = y.split_at(nq);
        self.solve(t, q, v)?;
        if nq == n {
            dy[..n].copy_from_slice(v);
        } else {
            self.sys.position_derivative(q, v, &mut dy[..nq]);
        }
        dy[nq..].copy_from_slice(&self.sol[..n]);
        Ok(())
    }

    fn breakpoints(&self) -> &[f64] {
        &self.breakpoints
    }

    /// q ← q ⊕ 0 when positions are not velocities (unit quaternions
    /// normalised), as [`crate::Augmented`]; nothing otherwise.
    fn after_step(&mut self, _t: f64, y: &mut [f64]) -> Result<StepFix, EvalError> {
        if self.nq == self.n {
            return Ok(StepFix::Unchanged);
        }
        Ok(crate::formulation::retract_positions(
            self.sys,
            &mut y[..self.nq],
            &self.zero,
            &mut self.projected,
        ))
    }

    /// I q'' = a(t, q, v), only when q' = v (n_q = n_v).
    fn as_second_order(&mut self) -> Option<&mut dyn SecondOrderProblem> {
        if self.nq == self.n {
            Some(self)
        } else {
            None
        }
    }
}

impl<S: MechanicalSystem + ?Sized> SecondOrderProblem for FrictionAugmented<'_, S> {
    fn ndof(&self) -> usize {
        self.n
    }

    /// The identity (accelerations are solved for in `forces`).
    fn mass_matrix(&mut self, _t: f64, _q: &[f64], m: &mut DMatrix<f64>) -> Result<(), EvalError> {
        m.fill_with_identity();
        Ok(())
    }

    fn forces(&mut self, t: f64, q: &[f64], v: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        self.solve(t, q, v)?;
        f.copy_from_slice(&self.sol[..self.n]);
        Ok(())
    }
}

impl<S: MechanicalSystem + ?Sized> Formulation for FrictionAugmented<'_, S> {
    fn name(&self) -> &'static str {
        "augmented"
    }

    fn initial_state(
        &mut self,
        t0: f64,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<Vec<f64>, FormulationError> {
        let (n, nq) = (self.n, self.nq);
        crate::formulation::check_state_dimensions("augmented", nq, n, q0, v0)?;
        let err = |e: EvalError| FormulationError::BadParameter {
            formulation: "augmented".into(),
            detail: format!("friction at t = {t0}: {e}"),
        };
        self.settle_modes(t0, q0, v0, true).map_err(err)?;
        let mut y = q0.to_vec();
        y.extend_from_slice(v0);
        if self.modes.contains(&FrictionMode::Stick) {
            self.project_velocities(t0, &mut y).map_err(err)?;
        }
        self.solve(t0, q0, &y[nq..]).map_err(err)?;
        Ok(y)
    }

    fn physical_state(
        &mut self,
        t: f64,
        y: &[f64],
        q: &mut [f64],
        v: &mut [f64],
        lambda: &mut [f64],
    ) -> Result<(), EvalError> {
        self.positions(y, q);
        v.copy_from_slice(&y[self.nq..self.nq + self.n]);
        self.solve(t, q, v)?;
        lambda.copy_from_slice(&self.sol[self.n..self.n + self.m]);
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
        self.positions(y, q);
        v.copy_from_slice(&y[self.nq..self.nq + self.n]);
        Ok(())
    }

    fn n_mode_events(&self) -> usize {
        self.modes.len()
    }

    /// Per element, at its first row (the others: g = 1, never): stick:
    /// g = μ_s F_n − |F| (the force leaves the cone); slip: g = v_t (1-D;
    /// the sliding stops) or g = v_t · d (2-D, d the frozen slip
    /// direction); smooth: g = 1 (never).
    fn mode_events(&mut self, t: f64, y: &[f64], g: &mut [f64]) -> Result<(), EvalError> {
        let (n, nq) = (self.n, self.nq);
        let (q, v) = y.split_at(nq);
        self.solve(t, q, v)?;
        for i in 0..self.modes.len() {
            if self.first[i] != i {
                g[i] = 1.0;
                continue;
            }
            let two = self.dims[i] == 2;
            g[i] = match self.modes[i] {
                FrictionMode::Smooth => 1.0,
                FrictionMode::Slip(_) if two => {
                    let d = self.frozen_direction(i);
                    self.rows[i].sliding_velocity * d[0] + self.rows[i + 1].sliding_velocity * d[1]
                }
                FrictionMode::Slip(_) => self.rows[i].sliding_velocity,
                FrictionMode::Stick => {
                    let (_, mu_s) = self.coefficients(i);
                    let f = if two {
                        let f = self.force2(i);
                        f[0].hypot(f[1])
                    } else {
                        self.sol[n + self.m + i].abs()
                    };
                    mu_s * self.normal_force(i) - f
                }
            };
        }
        Ok(())
    }

    fn handle_mode_event(
        &mut self,
        i: usize,
        t: f64,
        y: &mut [f64],
    ) -> Result<EventAction, EvalError> {
        if self.first[i] != i {
            return Ok(EventAction::Continue);
        }
        let n = self.n;
        let (q, v) = self.motion(y);
        let two = self.dims[i] == 2;
        match self.modes[i] {
            FrictionMode::Smooth => return Ok(EventAction::Continue),
            FrictionMode::Stick => {
                // the force has left the cone: slip against it
                self.solve(t, &q, &v)?;
                let speed = self.speed(i);
                self.slip_against_force(i, speed);
            }
            FrictionMode::Slip(_) if two => {
                self.evaluate(t, &q, &v);
                let speed = self.speed(i);
                let d = self.frozen_direction(i);
                if speed > STICK_SPEED.max(STOP_FRACTION * self.decision_speed[i]) {
                    // the slip direction turned by 90°: decide again
                    let vt = [
                        self.rows[i].sliding_velocity,
                        self.rows[i + 1].sliding_velocity,
                    ];
                    self.set_slip2(i, vt, d, speed);
                } else {
                    self.set_stick(i);
                    self.solve(t, &q, &v)?;
                    if self.can_stick(i) {
                        self.project_velocities(t, y)?;
                    } else {
                        let f = self.force2(i);
                        self.set_slip2(i, [-f[0], -f[1]], [-d[0], -d[1]], speed);
                    }
                }
            }
            FrictionMode::Slip(s) => {
                self.modes[i] = FrictionMode::Stick;
                self.solve(t, &q, &v)?;
                if self.can_stick(i) {
                    self.project_velocities(t, y)?;
                } else {
                    let f = self.sol[n + self.m + i];
                    let dir = if f > 0.0 {
                        -1.0
                    } else if f < 0.0 {
                        1.0
                    } else {
                        -s
                    };
                    self.modes[i] = FrictionMode::Slip(dir);
                }
            }
        }
        Ok(EventAction::StateChanged)
    }

    fn after_system_event(&mut self, t: f64, y: &mut [f64]) -> Result<bool, EvalError> {
        let (q, v) = self.motion(y);
        let changed = self.settle_modes(t, &q, &v, false)?;
        if changed && self.modes.contains(&FrictionMode::Stick) {
            self.project_velocities(t, y)?;
        }
        Ok(changed)
    }

    fn friction_forces(&mut self, t: f64, y: &[f64], out: &mut [f64]) -> Result<bool, EvalError> {
        let (n, nq) = (self.n, self.nq);
        let (q, v) = y.split_at(nq);
        self.solve(t, q, v)?;
        out.copy_from_slice(&self.sol[n + self.m..]);
        Ok(true)
    }
}
