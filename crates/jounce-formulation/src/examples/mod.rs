//! Small hand-written planar systems in body coordinates (x, y, θ per
//! body) for testing formulations independently of `jounce-mechanics`.
//!
//! [`ToySystem`] implements [`MechanicalSystem`] with exact Jacobians for
//! revolute joints, a horizontal slider guide, angle drivers, rotational
//! spring-dampers and uniform gravity (Nikravesh, *Computer-Aided Analysis
//! of Mechanical Systems*, 1988, ch. 6–7: the revolute joint
//! Φ = r_i + A_i s'_i − r_j − A_j s'_j, with Φ_q blocks [I, B_i s'_i] and
//! γ = A_i s'_i θ̇_i² − A_j s'_j θ̇_j², B = dA/dθ). [`models`] builds the
//! test mechanisms with consistent initial states.

pub mod models;

use jounce_mechanics::MechanicalSystem;
use nalgebra::DMatrix;

/// A rigid body: mass and centroidal inertia (either may be zero).
#[derive(Clone, Debug)]
pub struct ToyBody {
    /// Name used in labels.
    pub name: String,
    /// Mass (kg).
    pub mass: f64,
    /// Centroidal moment of inertia (kg m²).
    pub inertia: f64,
}

/// A constraint element.
#[derive(Clone, Debug)]
pub enum ToyJoint {
    /// Revolute joint: point s_i (body-i frame) of body i coincides with
    /// point s_j of body j (body-j frame), or the fixed point s_j when j is
    /// ground. Two equations (x, y).
    Revolute {
        /// Name.
        name: String,
        /// Body i.
        i: usize,
        /// Point on body i, local.
        si: [f64; 2],
        /// Body j, or `None` for ground.
        j: Option<usize>,
        /// Point on body j (local) or on ground (global).
        sj: [f64; 2],
    },
    /// Horizontal guide: y_i = y, θ_i = 0. Two equations.
    SliderX {
        /// Name.
        name: String,
        /// Body.
        i: usize,
        /// Height of the guide.
        y: f64,
    },
    /// Angle driver θ_i = θ0 + ω t + a sin(Ω t). One equation.
    AngleDriver {
        /// Name.
        name: String,
        /// Body.
        i: usize,
        /// θ0.
        theta0: f64,
        /// ω.
        omega: f64,
        /// a.
        amp: f64,
        /// Ω.
        freq: f64,
    },
}

/// Rotational spring-damper on θ_i − θ_j (θ_j = 0 for ground), free at 0:
/// torque on i: −k(θ_i − θ_j) − c(θ̇_i − θ̇_j), opposite on j.
#[derive(Clone, Debug)]
pub struct ToySpring {
    /// Body i.
    pub i: usize,
    /// Body j or ground.
    pub j: Option<usize>,
    /// Stiffness (N m/rad).
    pub k: f64,
    /// Damping (N m s/rad).
    pub c: f64,
}

/// A planar multibody system in body coordinates.
#[derive(Clone, Debug)]
pub struct ToySystem {
    /// Bodies; body b has coordinates 3b, 3b+1, 3b+2 = x, y, θ.
    pub bodies: Vec<ToyBody>,
    /// Joints and drivers.
    pub joints: Vec<ToyJoint>,
    /// Rotational spring-dampers.
    pub springs: Vec<ToySpring>,
    /// Gravity (m/s²).
    pub gravity: [f64; 2],
    /// Breakpoints reported to formulations.
    pub breakpoints: Vec<f64>,
    /// (joint, component) of each constraint row.
    rows: Vec<(usize, usize)>,
}

fn rot(th: f64, s: [f64; 2]) -> [f64; 2] {
    let (sn, c) = th.sin_cos();
    [c * s[0] - sn * s[1], sn * s[0] + c * s[1]]
}

fn drot(th: f64, s: [f64; 2]) -> [f64; 2] {
    let (sn, c) = th.sin_cos();
    [-sn * s[0] - c * s[1], c * s[0] - sn * s[1]]
}

impl ToySystem {
    /// A system of `bodies` with `joints`, `springs` and `gravity`.
    pub fn new(
        bodies: Vec<ToyBody>,
        joints: Vec<ToyJoint>,
        springs: Vec<ToySpring>,
        gravity: [f64; 2],
    ) -> Self {
        let mut rows = Vec::new();
        for (k, j) in joints.iter().enumerate() {
            let n = match j {
                ToyJoint::Revolute { .. } | ToyJoint::SliderX { .. } => 2,
                ToyJoint::AngleDriver { .. } => 1,
            };
            for c in 0..n {
                rows.push((k, c));
            }
        }
        Self {
            bodies,
            joints,
            springs,
            gravity,
            breakpoints: Vec::new(),
            rows,
        }
    }

    fn driver(theta0: f64, omega: f64, amp: f64, freq: f64, t: f64) -> [f64; 3] {
        let (s, c) = (freq * t).sin_cos();
        [
            theta0 + omega * t + amp * s,
            omega + amp * freq * c,
            -amp * freq * freq * s,
        ]
    }
}

impl MechanicalSystem for ToySystem {
    fn nq(&self) -> usize {
        3 * self.bodies.len()
    }

    fn nc(&self) -> usize {
        self.rows.len()
    }

    fn mass_matrix(&self, _q: &[f64], m: &mut DMatrix<f64>) {
        m.fill(0.0);
        for (b, body) in self.bodies.iter().enumerate() {
            m[(3 * b, 3 * b)] = body.mass;
            m[(3 * b + 1, 3 * b + 1)] = body.mass;
            m[(3 * b + 2, 3 * b + 2)] = body.inertia;
        }
    }

    fn generalized_forces(&self, _t: f64, q: &[f64], v: &[f64], f: &mut [f64]) {
        for (b, body) in self.bodies.iter().enumerate() {
            f[3 * b] = body.mass * self.gravity[0];
            f[3 * b + 1] = body.mass * self.gravity[1];
            f[3 * b + 2] = 0.0;
        }
        for s in &self.springs {
            let (thj, wj) = s.j.map_or((0.0, 0.0), |j| (q[3 * j + 2], v[3 * j + 2]));
            let tq = -s.k * (q[3 * s.i + 2] - thj) - s.c * (v[3 * s.i + 2] - wj);
            f[3 * s.i + 2] += tq;
            if let Some(j) = s.j {
                f[3 * j + 2] -= tq;
            }
        }
    }

    fn force_jacobians(
        &self,
        _t: f64,
        _q: &[f64],
        _v: &[f64],
        dq: &mut DMatrix<f64>,
        dv: &mut DMatrix<f64>,
    ) {
        dq.fill(0.0);
        dv.fill(0.0);
        for s in &self.springs {
            let a = 3 * s.i + 2;
            dq[(a, a)] -= s.k;
            dv[(a, a)] -= s.c;
            if let Some(j) = s.j {
                let b = 3 * j + 2;
                dq[(a, b)] += s.k;
                dq[(b, a)] += s.k;
                dq[(b, b)] -= s.k;
                dv[(a, b)] += s.c;
                dv[(b, a)] += s.c;
                dv[(b, b)] -= s.c;
            }
        }
    }

    fn constraints(&self, t: f64, q: &[f64], phi: &mut [f64]) {
        let mut r = 0;
        for jt in &self.joints {
            match *jt {
                ToyJoint::Revolute { i, si, j, sj, .. } => {
                    let pi = rot(q[3 * i + 2], si);
                    let pj = match j {
                        Some(j) => {
                            let p = rot(q[3 * j + 2], sj);
                            [q[3 * j] + p[0], q[3 * j + 1] + p[1]]
                        }
                        None => sj,
                    };
                    phi[r] = q[3 * i] + pi[0] - pj[0];
                    phi[r + 1] = q[3 * i + 1] + pi[1] - pj[1];
                    r += 2;
                }
                ToyJoint::SliderX { i, y, .. } => {
                    phi[r] = q[3 * i + 1] - y;
                    phi[r + 1] = q[3 * i + 2];
                    r += 2;
                }
                ToyJoint::AngleDriver {
                    i,
                    theta0,
                    omega,
                    amp,
                    freq,
                    ..
                } => {
                    phi[r] = q[3 * i + 2] - Self::driver(theta0, omega, amp, freq, t)[0];
                    r += 1;
                }
            }
        }
    }

    fn constraint_jacobian(&self, _t: f64, q: &[f64], jac: &mut DMatrix<f64>) {
        jac.fill(0.0);
        let mut r = 0;
        for jt in &self.joints {
            match *jt {
                ToyJoint::Revolute { i, si, j, sj, .. } => {
                    let bi = drot(q[3 * i + 2], si);
                    jac[(r, 3 * i)] = 1.0;
                    jac[(r + 1, 3 * i + 1)] = 1.0;
                    jac[(r, 3 * i + 2)] = bi[0];
                    jac[(r + 1, 3 * i + 2)] = bi[1];
                    if let Some(j) = j {
                        let bj = drot(q[3 * j + 2], sj);
                        jac[(r, 3 * j)] = -1.0;
                        jac[(r + 1, 3 * j + 1)] = -1.0;
                        jac[(r, 3 * j + 2)] = -bj[0];
                        jac[(r + 1, 3 * j + 2)] = -bj[1];
                    }
                    r += 2;
                }
                ToyJoint::SliderX { i, .. } => {
                    jac[(r, 3 * i + 1)] = 1.0;
                    jac[(r + 1, 3 * i + 2)] = 1.0;
                    r += 2;
                }
                ToyJoint::AngleDriver { i, .. } => {
                    jac[(r, 3 * i + 2)] = 1.0;
                    r += 1;
                }
            }
        }
    }

    fn constraint_time_derivative(&self, t: f64, _q: &[f64], phi_t: &mut [f64]) {
        let mut r = 0;
        for jt in &self.joints {
            match *jt {
                ToyJoint::Revolute { .. } | ToyJoint::SliderX { .. } => {
                    phi_t[r] = 0.0;
                    phi_t[r + 1] = 0.0;
                    r += 2;
                }
                ToyJoint::AngleDriver {
                    theta0,
                    omega,
                    amp,
                    freq,
                    ..
                } => {
                    phi_t[r] = -Self::driver(theta0, omega, amp, freq, t)[1];
                    r += 1;
                }
            }
        }
    }

    fn gamma(&self, t: f64, q: &[f64], v: &[f64], gamma: &mut [f64]) {
        let mut r = 0;
        for jt in &self.joints {
            match *jt {
                ToyJoint::Revolute { i, si, j, sj, .. } => {
                    let wi = v[3 * i + 2];
                    let ai = rot(q[3 * i + 2], si);
                    let mut g = [ai[0] * wi * wi, ai[1] * wi * wi];
                    if let Some(j) = j {
                        let wj = v[3 * j + 2];
                        let aj = rot(q[3 * j + 2], sj);
                        g[0] -= aj[0] * wj * wj;
                        g[1] -= aj[1] * wj * wj;
                    }
                    gamma[r] = g[0];
                    gamma[r + 1] = g[1];
                    r += 2;
                }
                ToyJoint::SliderX { .. } => {
                    gamma[r] = 0.0;
                    gamma[r + 1] = 0.0;
                    r += 2;
                }
                ToyJoint::AngleDriver {
                    theta0,
                    omega,
                    amp,
                    freq,
                    ..
                } => {
                    // Φ = θ − f(t): Φ_q q'' = f''(t)
                    gamma[r] = Self::driver(theta0, omega, amp, freq, t)[2];
                    r += 1;
                }
            }
        }
    }

    fn constraint_force_jacobian(
        &self,
        _t: f64,
        q: &[f64],
        lambda: &[f64],
        out: &mut DMatrix<f64>,
    ) {
        out.fill(0.0);
        let mut r = 0;
        for jt in &self.joints {
            match *jt {
                ToyJoint::Revolute { i, si, j, sj, .. } => {
                    // ∂/∂θ_i of (B_i s_i)·λ = −(A_i s_i)·λ
                    let ai = rot(q[3 * i + 2], si);
                    out[(3 * i + 2, 3 * i + 2)] -= ai[0] * lambda[r] + ai[1] * lambda[r + 1];
                    if let Some(j) = j {
                        let aj = rot(q[3 * j + 2], sj);
                        out[(3 * j + 2, 3 * j + 2)] += aj[0] * lambda[r] + aj[1] * lambda[r + 1];
                    }
                    r += 2;
                }
                ToyJoint::SliderX { .. } => r += 2,
                ToyJoint::AngleDriver { .. } => r += 1,
            }
        }
    }

    fn kinetic_energy(&self, _q: &[f64], v: &[f64]) -> f64 {
        self.bodies
            .iter()
            .enumerate()
            .map(|(b, body)| {
                0.5 * body.mass * (v[3 * b] * v[3 * b] + v[3 * b + 1] * v[3 * b + 1])
                    + 0.5 * body.inertia * v[3 * b + 2] * v[3 * b + 2]
            })
            .sum()
    }

    fn potential_energy(&self, _t: f64, q: &[f64]) -> f64 {
        let mut e = 0.0;
        for (b, body) in self.bodies.iter().enumerate() {
            e -= body.mass * (self.gravity[0] * q[3 * b] + self.gravity[1] * q[3 * b + 1]);
        }
        for s in &self.springs {
            let thj = s.j.map_or(0.0, |j| q[3 * j + 2]);
            let d = q[3 * s.i + 2] - thj;
            e += 0.5 * s.k * d * d;
        }
        e
    }

    fn constraint_label(&self, row: usize) -> String {
        let Some(&(k, c)) = self.rows.get(row) else {
            return format!("constraint row {row}");
        };
        match &self.joints[k] {
            ToyJoint::Revolute { name, .. } => {
                format!("joint '{name}' ({})", ["x", "y"][c])
            }
            ToyJoint::SliderX { name, .. } => {
                format!("joint '{name}' ({})", ["y", "theta"][c])
            }
            ToyJoint::AngleDriver { name, .. } => format!("driver '{name}'"),
        }
    }

    fn coordinate_label(&self, i: usize) -> String {
        match self.bodies.get(i / 3) {
            Some(b) => format!("{}.{}", b.name, ["x", "y", "theta"][i % 3]),
            None => format!("coordinate {i}"),
        }
    }

    fn breakpoints(&self) -> Vec<f64> {
        self.breakpoints.clone()
    }

    fn second_derivatives(&self) -> Option<&dyn jounce_mechanics::SecondDerivatives> {
        Some(self)
    }

    jounce_mechanics::test_system_core! {
        core: nv, position_derivative, integrate_position, position_increment,
            kinematic_map_derivative, manifold_constraints, data, evaluate, constraint_row_meaning;
        structure: jounce_mechanics::Structure {
            mass_matrix_is_constant: true,
            mass_matrix_is_diagonal: false,
        };
        absent: sparsity, applied_loads, switching, friction, joint_coordinates;
    }
}

impl jounce_mechanics::SecondDerivatives for ToySystem {
    /// Revolute rows: γ = A_i s_i θ̇_i² − A_j s_j θ̇_j², so
    /// ∂γ/∂θ_i = B_i s_i θ̇_i², ∂γ/∂θ̇_i = 2 A_i s_i θ̇_i (opposite signs for
    /// j); slider and driver rows do not depend on q or v.
    fn exact_gamma_jacobians(
        &self,
        _t: f64,
        q: &[f64],
        v: &[f64],
        dq: &mut DMatrix<f64>,
        dv: &mut DMatrix<f64>,
    ) {
        dq.fill(0.0);
        dv.fill(0.0);
        let mut r = 0;
        for jt in &self.joints {
            match *jt {
                ToyJoint::Revolute { i, si, j, sj, .. } => {
                    let sides = [(Some(i), si, 1.0), (j, sj, -1.0)];
                    for (b, s, sign) in sides {
                        let Some(b) = b else { continue };
                        let (w, th) = (v[3 * b + 2], q[3 * b + 2]);
                        let (a, bs) = (rot(th, s), drot(th, s));
                        for c in 0..2 {
                            dq[(r + c, 3 * b + 2)] += sign * bs[c] * w * w;
                            dv[(r + c, 3 * b + 2)] += sign * 2.0 * a[c] * w;
                        }
                    }
                    r += 2;
                }
                ToyJoint::SliderX { .. } => r += 2,
                ToyJoint::AngleDriver { .. } => r += 1,
            }
        }
    }

    /// Revolute rows: Φ_q a = a_ri + B_i s_i a_θi − a_rj − B_j s_j a_θj, so
    /// ∂/∂θ_i = −A_i s_i a_θi and ∂/∂θ_j = +A_j s_j a_θj.
    fn exact_constraint_hessian_product(
        &self,
        _t: f64,
        q: &[f64],
        a: &[f64],
        out: &mut DMatrix<f64>,
    ) {
        out.fill(0.0);
        let mut r = 0;
        for jt in &self.joints {
            match *jt {
                ToyJoint::Revolute { i, si, j, sj, .. } => {
                    let sides = [(Some(i), si, 1.0), (j, sj, -1.0)];
                    for (b, s, sign) in sides {
                        let Some(b) = b else { continue };
                        let p = rot(q[3 * b + 2], s);
                        for c in 0..2 {
                            out[(r + c, 3 * b + 2)] -= sign * p[c] * a[3 * b + 2];
                        }
                    }
                    r += 2;
                }
                ToyJoint::SliderX { .. } => r += 2,
                ToyJoint::AngleDriver { .. } => r += 1,
            }
        }
    }

    /// Zero: Φ_t = −f'(t) of the angle drivers does not depend on q.
    fn exact_constraint_time_jacobian(&self, _t: f64, _q: &[f64], out: &mut DMatrix<f64>) {
        out.fill(0.0);
    }

    fn exact_mass_matrix_derivative(&self, q: &[f64], a: &[f64], out: &mut DMatrix<f64>) {
        jounce_mechanics::finite_differences::mass_matrix_derivative(self, q, a, out);
    }
}

#[cfg(test)]
mod tests {
    use super::models;
    use super::*;

    /// Φ_q, Φ_t and γ of every model agree with central differences of Φ.
    #[test]
    fn derivatives_match_finite_differences() {
        let cases = [
            models::pendulum(2.0, 1.5, 0.4, 0.7),
            models::double_pendulum(1.0, 0.8, 1.0, 2.0, 0.3, -0.5, 1.0, 2.0, 5.0, 3.0),
            models::slider_crank(0.3, 1.0, 0.5, 1.5, 2.0, 0.9, 4.0),
            models::driven_double_pendulum(1.0, 1.0, 1.0, 1.0, 0.2, 0.3, 0.4, 3.0),
        ];
        for (sys, q, v) in cases {
            let (n, m) = (sys.nq(), sys.nc());
            let t = 0.37;
            let h = 1e-6;
            let mut jac = DMatrix::zeros(m, n);
            sys.constraint_jacobian(t, &q, &mut jac);
            let (mut p1, mut p2) = (vec![0.0; m], vec![0.0; m]);
            for c in 0..n {
                let (mut qa, mut qb) = (q.clone(), q.clone());
                qa[c] += h;
                qb[c] -= h;
                sys.constraints(t, &qa, &mut p1);
                sys.constraints(t, &qb, &mut p2);
                for r in 0..m {
                    let fd = (p1[r] - p2[r]) / (2.0 * h);
                    assert!((fd - jac[(r, c)]).abs() < 1e-7, "Φ_q[{r},{c}]");
                }
            }
            // Φ_t
            let mut pt = vec![0.0; m];
            sys.constraint_time_derivative(t, &q, &mut pt);
            sys.constraints(t + h, &q, &mut p1);
            sys.constraints(t - h, &q, &mut p2);
            for r in 0..m {
                assert!(((p1[r] - p2[r]) / (2.0 * h) - pt[r]).abs() < 1e-7);
            }
            // γ = −d/dt(Φ_q v + Φ_t) at constant acceleration 0 along q + v t
            let mut g = vec![0.0; m];
            sys.gamma(t, &q, &v, &mut g);
            let dphi = |tt: f64| -> Vec<f64> {
                let qq: Vec<f64> = q.iter().zip(&v).map(|(a, b)| a + b * (tt - t)).collect();
                let mut j = DMatrix::zeros(m, n);
                let mut ptt = vec![0.0; m];
                sys.constraint_jacobian(tt, &qq, &mut j);
                sys.constraint_time_derivative(tt, &qq, &mut ptt);
                (0..m)
                    .map(|r| ptt[r] + (0..n).map(|c| j[(r, c)] * v[c]).sum::<f64>())
                    .collect()
            };
            let (a, b) = (dphi(t + 1e-5), dphi(t - 1e-5));
            for r in 0..m {
                let fd = -(a[r] - b[r]) / 2e-5;
                assert!((fd - g[r]).abs() < 1e-5, "γ[{r}]: {fd} vs {}", g[r]);
            }
            // initial states are consistent
            sys.constraints(0.0, &q, &mut p1);
            sys.constraint_jacobian(0.0, &q, &mut jac);
            sys.constraint_time_derivative(0.0, &q, &mut pt);
            for r in 0..m {
                assert!(p1[r].abs() < 1e-12, "Φ[{r}] = {}", p1[r]);
                let d: f64 = pt[r] + (0..n).map(|c| jac[(r, c)] * v[c]).sum::<f64>();
                assert!(d.abs() < 1e-12, "Φ'[{r}] = {d}");
            }
        }
    }
}
