//! Reference problems with known solutions and convergence-order helpers,
//! shared by the tests of every method (and by the formulation tests).

use nalgebra::DMatrix;

use crate::constrained::ConstrainedSecondOrderProblem;
use crate::dae::{ConstrainedDae, DaeForm, DaeProblem};
use crate::error::EvalError;
use crate::method;
use crate::options::SolverOptions;
use crate::problem::{OdeProblem, OverdeterminedProblem, SecondOrderProblem};
use crate::solve::solve;
use crate::FirstOrderForm;

pub use crate::solve::Discard;

/// Least-squares slope of log(err) against log(h).
pub fn loglog_slope(h: &[f64], err: &[f64]) -> f64 {
    let n = h.len() as f64;
    let x: Vec<f64> = h.iter().map(|v| v.ln()).collect();
    let y: Vec<f64> = err.iter().map(|v| v.ln()).collect();
    let mx = x.iter().sum::<f64>() / n;
    let my = y.iter().sum::<f64>() / n;
    let mut sxy = 0.0;
    let mut sxx = 0.0;
    for i in 0..x.len() {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
    }
    sxy / sxx
}

/// The check of an analytic Jacobian `jac` (m × n) of f: R^n → R^m at
/// y: the largest |(f(y + h e_j) − f(y − h e_j))/(2h) − J_ij| over all
/// entries (central differences, error O(h²)), relative to
/// max(1, max |J_ij|).
pub fn jacobian_difference_error(
    mut f: impl FnMut(&[f64], &mut [f64]),
    y: &[f64],
    jac: &DMatrix<f64>,
    h: f64,
) -> f64 {
    let m = jac.nrows();
    let (mut fp, mut fm) = (vec![0.0; m], vec![0.0; m]);
    let scale = jac.iter().fold(1.0f64, |s, x| s.max(x.abs()));
    let (mut yp, mut ym) = (y.to_vec(), y.to_vec());
    let mut worst = 0.0f64;
    for j in 0..y.len() {
        yp[j] = y[j] + h;
        ym[j] = y[j] - h;
        f(&yp, &mut fp);
        f(&ym, &mut fm);
        yp[j] = y[j];
        ym[j] = y[j];
        for i in 0..m {
            let d = (fp[i] - fm[i]) / (2.0 * h) - jac[(i, j)];
            worst = worst.max(d.abs() / scale);
        }
    }
    worst
}

/// Max-norm of a − b.
pub fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// Integrate with method `name` at fixed step h from (t0, y0) to t1 and
/// return y(t1).
pub fn run_fixed(
    name: &str,
    p: &mut dyn OdeProblem,
    t0: f64,
    y0: &[f64],
    t1: f64,
    h: f64,
    extra: &SolverOptions,
) -> Result<Vec<f64>, String> {
    let mut opts = extra.clone();
    opts.fixed_step = Some(h);
    let mut st = method::build(name, &opts).map_err(|e| e.to_string())?;
    let r = solve(p, st.as_mut(), t0, y0, t1, &opts, &mut Discard).map_err(|e| e.to_string())?;
    Ok(r.y)
}

/// Empirical order of method `name` on `p` over [t0, t1]: the log-log slope
/// of the end-point error against h for h = h0, h0/2, ..., h0/2^(levels-1).
pub fn empirical_order(
    name: &str,
    p: &mut dyn OdeProblem,
    t0: f64,
    y0: &[f64],
    t1: f64,
    exact: &[f64],
    h0: f64,
    levels: u32,
    extra: &SolverOptions,
) -> Result<(f64, Vec<f64>), String> {
    let mut hs = Vec::new();
    let mut es = Vec::new();
    for l in 0..levels {
        let h = h0 / 2f64.powi(l as i32);
        let y = run_fixed(name, p, t0, y0, t1, h, extra)?;
        hs.push(h);
        es.push(max_abs_diff(&y, exact));
    }
    Ok((loglog_slope(&hs, &es), es))
}

pub use crate::reference_problems::InverseTimeRotation;

/// Linear test equation as a real 2-vector: y' = [[a, −b], [b, a]] y, i.e.
/// z' = λ z with λ = a + i b, z = y0 + i y1.
pub struct LinearTest {
    /// Re λ.
    pub a: f64,
    /// Im λ.
    pub b: f64,
}

impl OdeProblem for LinearTest {
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        dy[0] = self.a * y[0] - self.b * y[1];
        dy[1] = self.b * y[0] + self.a * y[1];
        Ok(())
    }
    fn jacobian(&mut self, _t: f64, _y: &[f64], j: &mut DMatrix<f64>) -> Result<(), EvalError> {
        j[(0, 0)] = self.a;
        j[(0, 1)] = -self.b;
        j[(1, 0)] = self.b;
        j[(1, 1)] = self.a;
        Ok(())
    }
    fn has_exact_jacobian(&self) -> bool {
        true
    }
}

/// Forced Duffing oscillator with a manufactured solution:
/// m q'' = sin³ t − q − q³ with m = 1 has q(t) = sin t, v(t) = cos t.
/// Nonlinear, second order, mass matrix 2 (scaled: 2 q'' = 2(sin³t − q − q³)).
pub struct ForcedDuffing;

impl ForcedDuffing {
    /// Exact [q, v] at t.
    pub fn exact(t: f64) -> [f64; 2] {
        [t.sin(), t.cos()]
    }
}

impl SecondOrderProblem for ForcedDuffing {
    fn ndof(&self) -> usize {
        1
    }
    fn mass_matrix(&mut self, _t: f64, _q: &[f64], m: &mut DMatrix<f64>) -> Result<(), EvalError> {
        m[(0, 0)] = 2.0;
        Ok(())
    }
    fn forces(&mut self, t: f64, q: &[f64], _v: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        f[0] = 2.0 * (t.sin().powi(3) - q[0] - q[0].powi(3));
        Ok(())
    }
}

/// The Duffing problem in first-order form, y = [q, v].
pub fn forced_duffing() -> FirstOrderForm<ForcedDuffing> {
    FirstOrderForm::new(ForcedDuffing)
}

// ---- reference problems of adaptive-accuracy tests (HNW I) ----

/// Arenstorf's restricted three-body orbit (HNW I, eq. II.0.1): a periodic
/// orbit of a satellite in the Earth–Moon system, μ = 0.012277471.
pub struct Arenstorf;
/// Mass ratio μ of Arenstorf's Earth–Moon problem.
pub const ARENSTORF_MU: f64 = 0.012277471;
/// Period and initial value as published (HNW I, eq. II.0.2), all digits.
#[allow(clippy::excessive_precision)]
pub const ARENSTORF_T: f64 = 17.0652165601579625588917206249;
#[allow(clippy::excessive_precision)]
pub const ARENSTORF_Y0: [f64; 4] = [0.994, 0.0, 0.0, -2.00158510637908252240537862224];

impl OdeProblem for Arenstorf {
    fn dim(&self) -> usize {
        4
    }
    fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        let mup = 1.0 - ARENSTORF_MU;
        let d1 = ((y[0] + ARENSTORF_MU).powi(2) + y[1] * y[1]).powf(1.5);
        let d2 = ((y[0] - mup).powi(2) + y[1] * y[1]).powf(1.5);
        dy[0] = y[2];
        dy[1] = y[3];
        dy[2] =
            y[0] + 2.0 * y[3] - mup * (y[0] + ARENSTORF_MU) / d1 - ARENSTORF_MU * (y[0] - mup) / d2;
        dy[3] = y[1] - 2.0 * y[2] - mup * y[1] / d1 - ARENSTORF_MU * y[1] / d2;
        Ok(())
    }
}

/// Kepler two-body problem q'' = −q/|q|³ (HNW I, eq. I.14.10) with
/// eccentricity e: q(0) = (1 − e, 0), p(0) = (0, sqrt((1+e)/(1−e))).
pub struct Kepler;

impl OdeProblem for Kepler {
    fn dim(&self) -> usize {
        4
    }
    fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        let r3 = (y[0] * y[0] + y[1] * y[1]).powf(1.5);
        dy[0] = y[2];
        dy[1] = y[3];
        dy[2] = -y[0] / r3;
        dy[3] = -y[1] / r3;
        Ok(())
    }
}

/// Exact Kepler solution at t: solve E − e sin E = t by Newton, then
/// q = (cos E − e, sqrt(1−e²) sin E), p = q' (period 2π).
pub fn kepler_exact(e: f64, t: f64) -> [f64; 4] {
    let mut ea = t;
    for _ in 0..50 {
        let d = (ea - e * ea.sin() - t) / (1.0 - e * ea.cos());
        ea -= d;
        if d.abs() < 1e-16 {
            break;
        }
    }
    let (s, c) = ea.sin_cos();
    let w = (1.0 - e * e).sqrt();
    let den = 1.0 - e * c;
    [c - e, w * s, -s / den, w * c / den]
}

/// The Pleiades: seven bodies of masses m_i = i in the plane (HNW I,
/// Section II.10, eq. (10.3)), y = (x₁..x₇, y₁..y₇, x'₁..x'₇, y'₁..y'₇).
pub struct Pleiades;

impl OdeProblem for Pleiades {
    fn dim(&self) -> usize {
        28
    }
    fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        dy[..14].copy_from_slice(&y[14..]);
        for i in 0..7 {
            let (mut ax, mut ay) = (0.0, 0.0);
            for j in 0..7 {
                if j != i {
                    let (dx, dyy) = (y[j] - y[i], y[7 + j] - y[7 + i]);
                    let r3 = (dx * dx + dyy * dyy).powf(1.5);
                    ax += (j + 1) as f64 * dx / r3;
                    ay += (j + 1) as f64 * dyy / r3;
                }
            }
            dy[14 + i] = ax;
            dy[21 + i] = ay;
        }
        Ok(())
    }
}

/// Initial value of the Pleiades (HNW I, eq. II.10.4).
pub fn pleiades_y0() -> Vec<f64> {
    let mut y = vec![3.0, 3.0, -1.0, -3.0, 2.0, -2.0, 2.0];
    y.extend([3.0, -3.0, 2.0, 0.0, 0.0, -4.0, 4.0]);
    y.extend([0.0, 0.0, 0.0, 0.0, 0.0, 1.75, -1.5]);
    y.extend([0.0, 0.0, 0.0, -1.25, 1.0, 0.0, 0.0]);
    y
}

/// The reference solution at t = 3 of the Test Set for IVP Solvers
/// (Mazzia & Magherini, problem PLEI, report plei.pdf, Section 3.4), in
/// the same component order.
#[allow(clippy::excessive_precision)]
pub const PLEIADES_REF: [f64; 28] = [
    0.3706139143970502,
    0.3237284092057233e1,
    -0.3222559032418324e1,
    0.6597091455775310,
    0.3425581707156584,
    0.1562172101400631e1,
    -0.7003092922212495,
    -0.3943437585517392e1,
    -0.3271380973972550e1,
    0.5225081843456543e1,
    -0.2590612434977470e1,
    0.1198213693392275e1,
    -0.2429682344935824,
    0.1091449240428980e1,
    0.3417003806314313e1,
    0.1354584501625501e1,
    -0.2590065597810775e1,
    0.2025053734714242e1,
    -0.1155815100160448e1,
    -0.8072988170223021,
    0.5952396354208710,
    -0.3741244961234010e1,
    0.3773459685750630,
    0.9386858869551073,
    0.3667922227200571,
    -0.3474046353808490,
    0.2344915448180937e1,
    -0.1947020434263292e1,
];

// ---- stiff reference problems (Hairer-Wanner II, Section IV.1) ----

/// Robertson's chemical kinetics (Robertson 1966; Hairer–Wanner II,
/// Section IV.1, eq. (1.3)): y1' = −0.04 y1 + 1e4 y2 y3,
/// y3' = 3e7 y2², y2' = −y1' − y3'; y(0) = (1, 0, 0). Exact Jacobian.
pub struct Robertson;

impl OdeProblem for Robertson {
    fn dim(&self) -> usize {
        3
    }
    fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        dy[0] = -0.04 * y[0] + 1e4 * y[1] * y[2];
        dy[2] = 3e7 * y[1] * y[1];
        dy[1] = -dy[0] - dy[2];
        Ok(())
    }
    fn jacobian(&mut self, _t: f64, y: &[f64], j: &mut DMatrix<f64>) -> Result<(), EvalError> {
        j[(0, 0)] = -0.04;
        j[(0, 1)] = 1e4 * y[2];
        j[(0, 2)] = 1e4 * y[1];
        j[(2, 0)] = 0.0;
        j[(2, 1)] = 6e7 * y[1];
        j[(2, 2)] = 0.0;
        for c in 0..3 {
            j[(1, c)] = -j[(0, c)] - j[(2, c)];
        }
        Ok(())
    }
    fn has_exact_jacobian(&self) -> bool {
        true
    }
}

/// Van der Pol, unscaled: y1' = y2, y2' = μ((1 − y1²) y2 − y1)
/// (Hairer–Wanner II, Section IV.1, eq. (1.5) without the time scaling).
/// With μ = 1000 and y(0) = (2, 0) the slow time is O(1): the solution
/// follows y2 = y1/(1 − y1²) to the fold y1 = 1 at t = 1.5 − ln 2 ≈ 0.807
/// and jumps in O(1/μ). Exact Jacobian.
pub struct VanDerPol {
    /// Stiffness parameter μ.
    pub mu: f64,
}

impl OdeProblem for VanDerPol {
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        dy[0] = y[1];
        dy[1] = self.mu * ((1.0 - y[0] * y[0]) * y[1] - y[0]);
        Ok(())
    }
    fn jacobian(&mut self, _t: f64, y: &[f64], j: &mut DMatrix<f64>) -> Result<(), EvalError> {
        j[(0, 0)] = 0.0;
        j[(0, 1)] = 1.0;
        j[(1, 0)] = self.mu * (-2.0 * y[0] * y[1] - 1.0);
        j[(1, 1)] = self.mu * (1.0 - y[0] * y[0]);
        Ok(())
    }
    fn has_exact_jacobian(&self) -> bool {
        true
    }
}

/// Van der Pol in the scaled form of Hairer–Wanner II, Section IV.1,
/// eq. (1.5'): y1' = y2, ε y2' = (1 − y1²) y2 − y1 (ε = 1/μ², the form of
/// the Test Set for IVP Solvers, problem VDPOL). Exact Jacobian.
pub struct VanDerPolScaled {
    /// ε.
    pub eps: f64,
}

impl OdeProblem for VanDerPolScaled {
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        dy[0] = y[1];
        dy[1] = ((1.0 - y[0] * y[0]) * y[1] - y[0]) / self.eps;
        Ok(())
    }
    fn jacobian(&mut self, _t: f64, y: &[f64], j: &mut DMatrix<f64>) -> Result<(), EvalError> {
        j[(0, 0)] = 0.0;
        j[(0, 1)] = 1.0;
        j[(1, 0)] = (-2.0 * y[0] * y[1] - 1.0) / self.eps;
        j[(1, 1)] = (1.0 - y[0] * y[0]) / self.eps;
        Ok(())
    }
    fn has_exact_jacobian(&self) -> bool {
        true
    }
}

/// A point mass m on a circle of radius L in Cartesian coordinates, the
/// classic index-3 test problem (Hairer & Wanner, *Solving ODEs II*,
/// VII.1, eq. 1.46): q = (x, y), M = m I, Q = (0, −m g) − d v,
/// Φ = (x² + y² − L²)/2, so Φ_q = qᵀ and γ = −|v|².
///
/// With θ the angle from the downward vertical, the motion is
/// θ'' = −(g/L) sin θ − (d/m) θ' ([`CartesianPendulum::angle_ode`]) and
/// the multiplier λ = (qᵀQ + m|v|²)/L² ([`CartesianPendulum::state_from_angle`]),
/// which gives reference solutions for q, v and λ.
#[derive(Clone, Copy, Debug)]
pub struct CartesianPendulum {
    /// Mass m.
    pub mass: f64,
    /// Radius L.
    pub length: f64,
    /// Gravity g.
    pub gravity: f64,
    /// Linear damping d (force −d v).
    pub damping: f64,
}

impl CartesianPendulum {
    /// m = 1.3, L = 0.9, g = 9.81 and damping d.
    pub fn damped(damping: f64) -> Self {
        Self {
            mass: 1.3,
            length: 0.9,
            gravity: 9.81,
            damping,
        }
    }

    /// [q; v; λ] (len 5) on the motion with angle θ and rate ω.
    pub fn state_from_angle(&self, theta: f64, omega: f64) -> [f64; 5] {
        let (l, m) = (self.length, self.mass);
        let q = [l * theta.sin(), -l * theta.cos()];
        let v = [l * omega * theta.cos(), l * omega * theta.sin()];
        let f = [
            -self.damping * v[0],
            -m * self.gravity - self.damping * v[1],
        ];
        let lambda = (q[0] * f[0] + q[1] * f[1] + m * (v[0] * v[0] + v[1] * v[1])) / (l * l);
        [q[0], q[1], v[0], v[1], lambda]
    }

    /// The angle ODE y = [θ, ω] of the same motion, for reference runs.
    pub fn angle_ode(&self) -> PendulumAngle {
        PendulumAngle(*self)
    }

    /// The reference [q; v; λ] at time t from (θ0, ω0), by dop853 on the
    /// angle ODE at rtol = atol = 1e-13.
    pub fn reference(&self, theta0: f64, omega0: f64, t: f64) -> [f64; 5] {
        if t == 0.0 {
            return self.state_from_angle(theta0, omega0);
        }
        let opts = SolverOptions::default().with_tol(1e-13, 1e-13);
        let mut st = method::build("dop853", &opts).expect("dop853 is registered");
        let r = solve(
            &mut self.angle_ode(),
            st.as_mut(),
            0.0,
            &[theta0, omega0],
            t,
            &opts,
            &mut Discard,
        )
        .expect("the angle ODE integrates");
        self.state_from_angle(r.y[0], r.y[1])
    }
}

/// θ'' = −(g/L) sin θ − (d/m) θ' ([`CartesianPendulum::angle_ode`]).
pub struct PendulumAngle(CartesianPendulum);

impl OdeProblem for PendulumAngle {
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&mut self, _: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        let p = &self.0;
        dy[0] = y[1];
        dy[1] = -(p.gravity / p.length) * y[0].sin() - (p.damping / p.mass) * y[1];
        Ok(())
    }
}

impl ConstrainedSecondOrderProblem for CartesianPendulum {
    fn n_positions(&self) -> usize {
        2
    }
    fn n_velocities(&self) -> usize {
        2
    }
    fn n_constraints(&self) -> usize {
        1
    }
    fn mass_matrix(&mut self, _: f64, _: &[f64], m: &mut DMatrix<f64>) -> Result<(), EvalError> {
        m.fill(0.0);
        m[(0, 0)] = self.mass;
        m[(1, 1)] = self.mass;
        Ok(())
    }
    fn forces(&mut self, _: f64, _: &[f64], v: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        f[0] = -self.damping * v[0];
        f[1] = -self.mass * self.gravity - self.damping * v[1];
        Ok(())
    }
    fn constraints(&mut self, _: f64, q: &[f64], phi: &mut [f64]) -> Result<(), EvalError> {
        phi[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] - self.length * self.length);
        Ok(())
    }
    fn constraint_jacobian(
        &mut self,
        _: f64,
        q: &[f64],
        jac: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        jac[(0, 0)] = q[0];
        jac[(0, 1)] = q[1];
        Ok(())
    }
    fn velocity_rhs(&mut self, _: f64, _: &[f64], nu: &mut [f64]) -> Result<(), EvalError> {
        nu[0] = 0.0;
        Ok(())
    }
    fn gamma(&mut self, _: f64, _: &[f64], v: &[f64], g: &mut [f64]) -> Result<(), EvalError> {
        g[0] = -(v[0] * v[0] + v[1] * v[1]);
        Ok(())
    }
    /// K = λ I (from Φ_qᵀλ = λ q), C = d I.
    fn tangent(
        &mut self,
        _: f64,
        _: &[f64],
        _: &[f64],
        _: &[f64],
        lambda: &[f64],
        k: &mut DMatrix<f64>,
        c: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        k.fill(0.0);
        c.fill(0.0);
        for i in 0..2 {
            k[(i, i)] = lambda[0];
            c[(i, i)] = self.damping;
        }
        Ok(())
    }
    fn has_exact_tangent(&self) -> bool {
        true
    }
}

/// The Cartesian pendulum as the index-3 problem of the structural family
/// (y = [q; v; λ], [`OdeProblem::as_constrained_second_order`]); `rhs`,
/// [v; a; 0] with λ = (qᵀQ + m|v|²)/|q|², serves only for initial-step
/// estimates.
impl OdeProblem for CartesianPendulum {
    fn dim(&self) -> usize {
        5
    }
    fn rhs(&mut self, _: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        let (q, v) = (&y[..2], &y[2..4]);
        let f = [
            -self.damping * v[0],
            -self.mass * self.gravity - self.damping * v[1],
        ];
        let lambda = (q[0] * f[0] + q[1] * f[1] + self.mass * (v[0] * v[0] + v[1] * v[1]))
            / (q[0] * q[0] + q[1] * q[1]);
        dy[..2].copy_from_slice(v);
        for i in 0..2 {
            dy[2 + i] = (f[i] - q[i] * lambda) / self.mass;
        }
        dy[4] = 0.0;
        Ok(())
    }
    fn as_constrained_second_order(&mut self) -> Option<&mut dyn ConstrainedSecondOrderProblem> {
        Some(self)
    }
}

/// The Cartesian pendulum as an [`OdeProblem`] that is a DAE in `form`
/// (index 3: y = [q; v; λ]; GGL: y = [q; v; λ; μ]), the way a
/// formulation offers one: [`OdeProblem::as_dae`] returns it and `rhs`
/// ([v; a; 0]) serves only for initial-step estimates.
pub struct DaePendulum {
    /// The DAE.
    pub dae: ConstrainedDae<CartesianPendulum>,
}

impl DaePendulum {
    /// The pendulum with damping d as a DAE in `form`.
    pub fn new(damping: f64, form: DaeForm) -> Self {
        Self {
            dae: ConstrainedDae::new(CartesianPendulum::damped(damping), form)
                .expect("equal position and velocity sizes"),
        }
    }

    /// A consistent y0 on the motion (θ0, ω0) (μ = 0 for GGL).
    pub fn y0(&self, theta0: f64, omega0: f64) -> Vec<f64> {
        let mut y = self.dae.problem.state_from_angle(theta0, omega0).to_vec();
        if self.dae.form() == DaeForm::Ggl {
            y.push(0.0);
        }
        y
    }
}

impl OdeProblem for DaePendulum {
    fn dim(&self) -> usize {
        self.dae.dim()
    }
    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        self.dae.consistent_derivative(t, y, dy)
    }
    fn as_dae(&mut self) -> Option<&mut dyn DaeProblem> {
        Some(&mut self.dae)
    }
}

/// The Cartesian pendulum as an ODE with invariants, the overdetermined
/// DAE of Führer & Leimkuhler (1991): y = [q; v], y' = [v; a] with the
/// acceleration a = (Q − q λ)/m, λ = (qᵀQ + m|v|²)/|q|², which meets the
/// acceleration constraint Φ_q a = γ (the index-1 form), and the position
/// and velocity constraints as invariants,
/// g = [(|q|² − L²)/2; qᵀv], G = [[qᵀ, 0]; [vᵀ, qᵀ]].
///
/// With `keep_invariants` false it offers no invariants: the same ODE for
/// the ODE methods, whose solutions drift off |q| = L.
/// Exact Jacobians of f and g.
#[derive(Clone, Copy, Debug)]
pub struct OdaePendulum {
    /// The pendulum.
    pub pendulum: CartesianPendulum,
    /// Offer g to the integrator ([`OdeProblem::as_overdetermined`]).
    pub keep_invariants: bool,
}

impl OdaePendulum {
    /// The pendulum with damping d, offering its invariants.
    pub fn new(damping: f64) -> Self {
        Self {
            pendulum: CartesianPendulum::damped(damping),
            keep_invariants: true,
        }
    }

    /// The same ODE without invariants.
    pub fn plain(damping: f64) -> Self {
        Self {
            keep_invariants: false,
            ..Self::new(damping)
        }
    }

    /// y = [q; v] on the motion with angle θ and rate ω.
    pub fn y0(&self, theta0: f64, omega0: f64) -> [f64; 4] {
        let s = self.pendulum.state_from_angle(theta0, omega0);
        [s[0], s[1], s[2], s[3]]
    }

    /// The reference y at t ([`CartesianPendulum::reference`]).
    pub fn reference(&self, theta0: f64, omega0: f64, t: f64) -> [f64; 4] {
        let s = self.pendulum.reference(theta0, omega0, t);
        [s[0], s[1], s[2], s[3]]
    }

    /// (λ, N, s) with λ = N/s, N = qᵀQ + m|v|², s = |q|².
    fn multiplier(&self, y: &[f64]) -> (f64, f64, f64) {
        let p = &self.pendulum;
        let (x, yy, u, w) = (y[0], y[1], y[2], y[3]);
        let n = -p.damping * (x * u + yy * w) - p.mass * p.gravity * yy + p.mass * (u * u + w * w);
        let s = x * x + yy * yy;
        (n / s, n, s)
    }
}

impl OdeProblem for OdaePendulum {
    fn dim(&self) -> usize {
        4
    }
    fn rhs(&mut self, _: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        let p = &self.pendulum;
        let (lambda, _, _) = self.multiplier(y);
        dy[0] = y[2];
        dy[1] = y[3];
        dy[2] = (-p.damping * y[2] - y[0] * lambda) / p.mass;
        dy[3] = (-p.mass * p.gravity - p.damping * y[3] - y[1] * lambda) / p.mass;
        Ok(())
    }
    /// J = [[0, I], [∂a/∂q, ∂a/∂v]], a_i = (Q_i − q_i λ)/m.
    fn jacobian(&mut self, _: f64, y: &[f64], jac: &mut DMatrix<f64>) -> Result<(), EvalError> {
        let p = &self.pendulum;
        let (m, d) = (p.mass, p.damping);
        let (x, yy, u, w) = (y[0], y[1], y[2], y[3]);
        let (lambda, n, s) = self.multiplier(y);
        // ∂λ/∂(x, y, u, w)
        let dl = [
            -d * u / s - n * 2.0 * x / (s * s),
            (-d * w - m * p.gravity) / s - n * 2.0 * yy / (s * s),
            (-d * x + 2.0 * m * u) / s,
            (-d * yy + 2.0 * m * w) / s,
        ];
        jac.fill(0.0);
        jac[(0, 2)] = 1.0;
        jac[(1, 3)] = 1.0;
        for (i, qi) in [x, yy].into_iter().enumerate() {
            for j in 0..4 {
                jac[(2 + i, j)] = -qi * dl[j] / m;
            }
            jac[(2 + i, i)] -= lambda / m;
            jac[(2 + i, 2 + i)] -= d / m;
        }
        Ok(())
    }
    fn has_exact_jacobian(&self) -> bool {
        true
    }
    fn as_overdetermined(&mut self) -> Option<&mut dyn OverdeterminedProblem> {
        if self.keep_invariants {
            Some(self)
        } else {
            None
        }
    }
}

impl OverdeterminedProblem for OdaePendulum {
    fn n_invariants(&self) -> usize {
        2
    }
    fn invariants(&mut self, _: f64, y: &[f64], g: &mut [f64]) -> Result<(), EvalError> {
        let l = self.pendulum.length;
        g[0] = 0.5 * (y[0] * y[0] + y[1] * y[1] - l * l);
        g[1] = y[0] * y[2] + y[1] * y[3];
        Ok(())
    }
    fn invariant_jacobian(
        &mut self,
        _: f64,
        y: &[f64],
        gy: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        gy.fill(0.0);
        gy[(0, 0)] = y[0];
        gy[(0, 1)] = y[1];
        gy[(1, 0)] = y[2];
        gy[(1, 1)] = y[3];
        gy[(1, 2)] = y[0];
        gy[(1, 3)] = y[1];
        Ok(())
    }
}
