//! The overdetermined DAE (ODAE) formulation: the index-1 equations of
//! [`Augmented`] (state y = [q; v], accelerations from the KKT system, so
//! that the acceleration constraints Φ_q q'' = γ hold in the right-hand
//! side) together with the position and velocity constraints as
//! invariants,
//!
//! ```text
//! q' = v,   v' = a(t, q, v)       [M Φ_qᵀ; Φ_q 0][a; λ] = [Q; γ]
//! 0  = g(t, y) = [ Φ(t, q)          ]
//!                [ Φ_q(t, q) v + Φ_t ]
//! G = ∂g/∂y   = [ Φ_q                 0   ]
//!                [ (Φ_q v)_q + Φ_qt    Φ_q ]
//! ```
//!
//! Position, velocity and acceleration constraints together with the
//! equations of motion are an overdetermined system (Führer & Leimkuhler,
//! "Numerical solution of differential-algebraic equations for constrained
//! mechanical motion", Numer. Math. 59 (1991) 55–69; Eich-Soellner &
//! Führer, *Numerical Methods in Multibody Dynamics*, Teubner 1998, ch. 5;
//! termeer 1996, sec. 4.6, where it is the implicit integration of
//! Pro/MECHANICA MOTION). A BDF discretisation of it has no exact
//! solution; the BDF of `jounce-integrate` (bdf, ndf) solves it in the
//! least-squares sense with Φ = 0 and Φ_q v + Φ_t = 0 met exactly at every
//! step ([`jounce_integrate::overdetermined`]), so the constraints do not
//! drift, while the state stays [q; v] and the multipliers are eliminated
//! as in augmented.
//!
//! The formulation offers only the overdetermined form
//! ([`OdeProblem::as_overdetermined`], [`jounce_integrate::ProblemForm::Overdetermined`]):
//! an ODE method would ignore the invariants and be augmented under
//! another name, so `jounce` refuses such pairings instead.
//!
//! **Positions that are not velocities** (n_q > n_v: unit quaternions).
//! q' = T(q) v ([`MechanicalSystem::position_derivative`]) and the
//! manifold's own constraints c(q) = 0 (|p|² − 1 per quaternion,
//! [`MechanicalSystem::manifold_constraints`]) join the invariants, so the
//! least-squares projection keeps the quaternions unit:
//!
//! ```text
//! g = [ Φ(t, q); Φ_v v + Φ_t; c(q) ]
//! G = [ Φ_v L                 0   ]
//!     [ ((Φ_v v)_v + Φ_vt) L   Φ_v ]
//!     [ c_q                   0   ]
//! ```
//!
//! with Φ_v the velocity Jacobian (n_c × n_v) and L(q) = T⁺ the map from a
//! position change to its velocity-space increment
//! ([`MechanicalSystem::position_increment`]): the system's derivatives
//! are along q ⊕ δ, whose derivative at δ = 0 is T, and do not change
//! along the radial direction of p (A(p/|p|)), which L annihilates, so
//! ∂Φ/∂q = Φ_v L exactly (and likewise for Φ_v v, Φ_t), also off
//! |p| = 1.
//!
//! G comes from the system's exact derivatives
//! ([`SystemQueries::constraint_hessian_product`],
//! [`SystemQueries::constraint_time_jacobian`]); the Jacobian of the
//! right-hand side is augmented's exact one.

use jounce_integrate::{EvalError, OdeProblem, OverdeterminedProblem};
use jounce_mechanics::{MechanicalSystem, SystemQueries};
use nalgebra::DMatrix;

use crate::augmented::Augmented;
use crate::error::FormulationError;
use crate::formulation::Formulation;
use crate::linear_solver::LinearSolver;

/// The `odae` formulation (module documentation).
pub struct Odae<'a, S: MechanicalSystem + ?Sized> {
    aug: Augmented<'a, S>,
    /// n_q positions, n_v velocities, m constraints, k = n_q − n_v
    /// manifold constraints.
    nq: usize,
    n: usize,
    m: usize,
    k: usize,
    /// Φ_t (m).
    phi_t: Vec<f64>,
    /// Φ_v, (Φ_v v)_v, Φ_vt (m × n_v each).
    jac: DMatrix<f64>,
    hess: DMatrix<f64>,
    phi_qt: DMatrix<f64>,
    /// L = T⁺ (n_v × n_q), c_q (k × n_q), and the unit vector and
    /// increment that build L column by column (empty when n_q = n_v).
    l: DMatrix<f64>,
    c_q: DMatrix<f64>,
    c: Vec<f64>,
    unit: Vec<f64>,
    delta: Vec<f64>,
}

impl<'a, S: MechanicalSystem + ?Sized> Odae<'a, S> {
    /// The ODAE of `sys` (augmented without Baumgarte terms); every buffer
    /// is allocated here.
    pub fn new(sys: &'a S) -> Self {
        let (nq, n, m) = (sys.nq(), sys.nv(), sys.nc());
        let k = nq - n;
        let (ln, lq) = if k == 0 { (0, 0) } else { (n, nq) };
        Self {
            aug: Augmented::new(sys),
            nq,
            n,
            m,
            k,
            phi_t: vec![0.0; m],
            jac: DMatrix::zeros(m, n),
            hess: DMatrix::zeros(m, n),
            phi_qt: DMatrix::zeros(m, n),
            l: DMatrix::zeros(ln, lq),
            c_q: DMatrix::zeros(k, lq),
            c: vec![0.0; k],
            unit: vec![0.0; lq],
            delta: vec![0.0; ln],
        }
    }

    /// Solve the KKT system with `solver` (default [`LinearSolver::Auto`]).
    #[must_use]
    pub fn with_linear_solver(mut self, solver: LinearSolver) -> Self {
        self.aug = self.aug.with_linear_solver(solver);
        self
    }

    /// The system formulated.
    pub fn system(&self) -> &'a S {
        self.aug.system()
    }
}

impl<S: MechanicalSystem + ?Sized> OdeProblem for Odae<'_, S> {
    fn dim(&self) -> usize {
        self.nq + self.n
    }

    /// [v; a] with a from the KKT system (augmented's right-hand side).
    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        self.aug.rhs(t, y, dy)
    }

    /// Augmented's exact J = [[0, I], [∂a/∂q, ∂a/∂v]].
    fn jacobian(&mut self, t: f64, y: &[f64], jac: &mut DMatrix<f64>) -> Result<(), EvalError> {
        self.aug.jacobian(t, y, jac)
    }

    fn has_exact_jacobian(&self) -> bool {
        self.aug.has_exact_jacobian()
    }

    fn breakpoints(&self) -> &[f64] {
        self.aug.breakpoints()
    }

    fn as_overdetermined(&mut self) -> Option<&mut dyn OverdeterminedProblem> {
        Some(self)
    }
}

impl<S: MechanicalSystem + ?Sized> OverdeterminedProblem for Odae<'_, S> {
    /// 2m + k: the position and the velocity constraints, and the
    /// manifold's (one per unit quaternion).
    fn n_invariants(&self) -> usize {
        2 * self.m + self.k
    }

    /// g = [Φ(t, q); Φ_v v + Φ_t; c(q)].
    fn invariants(&mut self, t: f64, y: &[f64], g: &mut [f64]) -> Result<(), EvalError> {
        let (nq, n, m) = (self.nq, self.n, self.m);
        let (q, v) = y.split_at(nq);
        let sys = self.aug.system();
        sys.constraints(t, q, &mut g[..m]);
        sys.constraint_jacobian(t, q, &mut self.jac);
        sys.constraint_time_derivative(t, q, &mut self.phi_t);
        for i in 0..m {
            let mut s = self.phi_t[i];
            for j in 0..n {
                s += self.jac[(i, j)] * v[j];
            }
            g[m + i] = s;
        }
        if self.k > 0 {
            sys.manifold_constraints(q, &mut g[2 * m..], &mut self.c_q);
        }
        Ok(())
    }

    /// G = [[Φ_q, 0], [(Φ_q v)_q + Φ_qt, Φ_q]] when n_q = n_v; with the
    /// chain through L = T⁺ and the rows c_q otherwise (module
    /// documentation).
    fn invariant_jacobian(
        &mut self,
        t: f64,
        y: &[f64],
        gy: &mut DMatrix<f64>,
    ) -> Result<(), EvalError> {
        let (nq, n, m) = (self.nq, self.n, self.m);
        let (q, v) = y.split_at(nq);
        let sys = self.aug.system();
        sys.constraint_jacobian(t, q, &mut self.jac);
        sys.constraint_hessian_product(t, q, v, &mut self.hess);
        sys.constraint_time_jacobian(t, q, &mut self.phi_qt);
        if self.k == 0 {
            for i in 0..m {
                for j in 0..n {
                    let pq = self.jac[(i, j)];
                    gy[(i, j)] = pq;
                    gy[(i, n + j)] = 0.0;
                    gy[(m + i, j)] = self.hess[(i, j)] + self.phi_qt[(i, j)];
                    gy[(m + i, n + j)] = pq;
                }
            }
            return Ok(());
        }
        // L column by column: L e_j, the increment of a unit change of q_j
        for j in 0..nq {
            self.unit[j] = 1.0;
            sys.position_increment(q, &self.unit, &mut self.delta);
            self.unit[j] = 0.0;
            for r in 0..n {
                self.l[(r, j)] = self.delta[r];
            }
        }
        gy.fill(0.0);
        // [Φ_v L; (H + Φ_vt) L], skipping the zeros of L (a few per column)
        for j in 0..nq {
            for r in 0..n {
                let l = self.l[(r, j)];
                if l == 0.0 {
                    continue;
                }
                for i in 0..m {
                    gy[(i, j)] += self.jac[(i, r)] * l;
                    gy[(m + i, j)] += (self.hess[(i, r)] + self.phi_qt[(i, r)]) * l;
                }
            }
        }
        for i in 0..m {
            for r in 0..n {
                gy[(m + i, nq + r)] = self.jac[(i, r)];
            }
        }
        sys.manifold_constraints(q, &mut self.c, &mut self.c_q);
        for i in 0..self.k {
            for j in 0..nq {
                gy[(2 * m + i, j)] = self.c_q[(i, j)];
            }
        }
        Ok(())
    }
}

impl<S: MechanicalSystem + ?Sized> Formulation for Odae<'_, S> {
    fn name(&self) -> &'static str {
        "odae"
    }

    fn initial_state(
        &mut self,
        t0: f64,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<Vec<f64>, FormulationError> {
        self.aug.initial_state_as("odae", t0, q0, v0)
    }

    /// q, v from y; λ from the KKT system, as augmented.
    fn physical_state(
        &mut self,
        t: f64,
        y: &[f64],
        q: &mut [f64],
        v: &mut [f64],
        lambda: &mut [f64],
    ) -> Result<(), EvalError> {
        self.aug.physical_state(t, y, q, v, lambda)
    }

    fn physical_motion(
        &mut self,
        t: f64,
        y: &[f64],
        q: &mut [f64],
        v: &mut [f64],
        lambda: &mut [f64],
    ) -> Result<(), EvalError> {
        self.aug.physical_motion(t, y, q, v, lambda)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::examples::models;
    use jounce_integrate::ProblemForm;

    /// The example mechanisms: a pendulum, a damped double pendulum, a
    /// slider-crank and a driven double pendulum (Φ_t ≠ 0).
    fn cases() -> Vec<(&'static str, models::Model)> {
        vec![
            ("pendulum", models::pendulum(2.0, 1.5, 0.4, 0.7)),
            (
                "double pendulum",
                models::double_pendulum(1.0, 0.7, 1.0, 0.5, -0.4, 0.8, 1.0, -2.0, 30.0, 10.0),
            ),
            (
                "slider-crank",
                models::slider_crank(0.3, 1.0, 0.5, 1.5, 2.0, 0.9, 4.0),
            ),
            (
                "driven double pendulum",
                models::driven_double_pendulum(1.0, 1.0, 1.0, 1.0, 0.2, 0.3, 0.4, 3.0),
            ),
        ]
    }

    /// G agrees with central differences of g at an inconsistent point
    /// (every block exercised), relative to max(1, |G|): below 1e-8
    /// (measured 5.9e-11 to 1.4e-10; central differences with h = 1e-6
    /// have truncation ~h² |g'''| and rounding ~ε/h ≈ 1e-10; a wrong block
    /// gives O(1)). g vanishes on the assembled initial state of every
    /// model (measured ≤ 5.6e-17).
    #[test]
    fn invariant_jacobian_matches_central_differences() {
        for (what, (sys, q0, v0)) in cases() {
            let mut p = Odae::new(&sys);
            let y0 = p.initial_state(0.0, &q0, &v0).unwrap();
            let (n, m) = (sys.nq(), sys.nc());
            let nd = 2 * n;
            let pp = 2 * m;
            assert_eq!((p.dim(), p.n_invariants()), (nd, pp));
            let mut g = vec![1.0; pp];
            p.invariants(0.0, &y0, &mut g).unwrap();
            let g0 = g.iter().fold(0.0f64, |s, x| s.max(x.abs()));
            let t = 0.37;
            let y: Vec<f64> = y0
                .iter()
                .enumerate()
                .map(|(i, x)| x + 0.03 * ((i % 7) as f64 - 3.0) + 0.01)
                .collect();
            let mut gy = DMatrix::from_element(pp, nd, f64::NAN);
            p.invariant_jacobian(t, &y, &mut gy).unwrap();
            let worst = jounce_integrate::testkit::jacobian_difference_error(
                |y, g| p.invariants(t, y, g).unwrap(),
                &y,
                &gy,
                1e-6,
            );
            // the velocity rows depend on q: the (Φ_q v)_q block is exercised
            let hess = (0..m)
                .flat_map(|i| (0..n).map(move |j| (i, j)))
                .fold(0.0f64, |s, (i, j)| s.max(gy[(m + i, j)].abs()));
            eprintln!(
                "{what}: |g(y0)| {g0:.1e}, G vs differences {worst:.1e}, |(Φ_q v)_q| {hess:.1e}"
            );
            assert!(g0 < 1e-9, "{what}: g(y0) = {g0:e}");
            assert!(worst < 1e-8, "{what}: G differs by {worst:e}");
            assert!(hess > 1e-3, "{what}: the velocity block is trivial");
        }
    }

    /// The driver's Φ_t enters the velocity invariant: g₂ = Φ_q v + Φ_t
    /// vanishes on the assembled motion, Φ_q v alone does not.
    #[test]
    fn the_velocity_invariant_carries_phi_t() {
        let (sys, q0, v0) = models::driven_double_pendulum(1.0, 1.0, 1.0, 1.0, 0.2, 0.3, 0.4, 3.0);
        let mut p = Odae::new(&sys);
        let y0 = p.initial_state(0.0, &q0, &v0).unwrap();
        let m = sys.nc();
        let mut g = vec![0.0; 2 * m];
        p.invariants(0.0, &y0, &mut g).unwrap();
        let mut phi_t = vec![0.0; m];
        sys.constraint_time_derivative(0.0, &q0, &mut phi_t);
        let pt = phi_t.iter().fold(0.0f64, |s, x| s.max(x.abs()));
        let gv = g[m..].iter().fold(0.0f64, |s, x| s.max(x.abs()));
        assert!(pt > 0.1, "the driver must move: {pt}");
        assert!(gv < 1e-9, "{gv:e}");
    }

    /// odae offers the overdetermined form only, its right-hand side,
    /// Jacobian and multipliers are augmented's, and a singular start is
    /// refused under its own name.
    #[test]
    fn offers_only_the_overdetermined_form() {
        let (sys, q0, v0) = models::slider_crank(0.3, 1.0, 0.5, 1.5, 2.0, 0.9, 4.0);
        let mut p = Odae::new(&sys);
        assert_eq!(p.forms(), vec![ProblemForm::Overdetermined]);
        assert!(p.as_second_order().is_none() && p.as_dae().is_none());
        assert!(p.has_exact_jacobian());
        let y0 = p.initial_state(0.0, &q0, &v0).unwrap();
        let mut a = Augmented::new(&sys);
        let ya = a.initial_state(0.0, &q0, &v0).unwrap();
        assert_eq!(y0, ya);
        let nd = y0.len();
        let (mut f1, mut f2) = (vec![0.0; nd], vec![0.0; nd]);
        p.rhs(0.1, &y0, &mut f1).unwrap();
        a.rhs(0.1, &ya, &mut f2).unwrap();
        assert_eq!(f1, f2);
        let (mut j1, mut j2) = (DMatrix::zeros(nd, nd), DMatrix::zeros(nd, nd));
        p.jacobian(0.1, &y0, &mut j1).unwrap();
        a.jacobian(0.1, &ya, &mut j2).unwrap();
        assert_eq!(j1, j2);
        let n = sys.nq();
        let (mut q, mut v, mut l1, mut l2) = (
            vec![0.0; n],
            vec![0.0; n],
            vec![0.0; sys.nc()],
            vec![0.0; sys.nc()],
        );
        p.physical_state(0.1, &y0, &mut q, &mut v, &mut l1).unwrap();
        a.physical_state(0.1, &ya, &mut q, &mut v, &mut l2).unwrap();
        assert_eq!(l1, l2);
        let (sys, q0, v0) = models::spinning_point_mass();
        let e = Odae::new(&sys).initial_state(0.0, &q0, &v0).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("odae") && msg.contains("bead.theta"), "{msg}");
    }
    /// The spatial models (n_q = 7 per body > n_v = 6): the heavy top,
    /// the spatial double pendulum and the driven spatial slider-crank
    /// (Φ_t ≠ 0). G = ∂g/∂y in y = [q; v] (n_q + n_v columns, the
    /// quaternions' radial direction included) agrees with central
    /// differences of g at a point off the manifold (|p| ≠ 1, Φ ≠ 0,
    /// Φ_v v + Φ_t ≠ 0), relative to max(1, |G|): below 1e-7 (a missing
    /// chain through L, or a radial part, gives O(1)); g has 2m + n_b
    /// rows, its last the |p|² − 1 of each body, and vanishes on the
    /// assembled initial state.
    #[test]
    fn spatial_invariant_jacobian_matches_central_differences() {
        use jounce_mechanics::{assemble, SpatialSystem};
        let files = [
            (
                "heavy top",
                include_str!("../../../examples/heavy_top.toml"),
            ),
            (
                "spatial double pendulum",
                include_str!("../../../examples/spatial_double_pendulum.toml"),
            ),
            (
                "spatial slider-crank",
                include_str!("../../../examples/spatial_slider_crank.toml"),
            ),
        ];
        for (what, text) in files {
            let model = jounce_model::from_str(text, what).unwrap();
            let sys = SpatialSystem::from_model(&model).unwrap();
            let (q0, v0) = sys.initial_state();
            let asm = assemble(&sys, 0.0, &q0, &v0, 1e-12).unwrap();
            let (nq, n, m) = (sys.nq(), sys.nv(), sys.nc());
            let k = nq - n;
            assert_eq!(k, sys.body_count());
            let mut p = Odae::new(&sys);
            let y0 = p.initial_state(0.0, &asm.q, &asm.v).unwrap();
            let (nd, pp) = (nq + n, 2 * m + k);
            assert_eq!((p.dim(), p.n_invariants(), y0.len()), (nd, pp, nd));
            let mut g = vec![1.0; pp];
            p.invariants(0.0, &y0, &mut g).unwrap();
            let g0 = g.iter().fold(0.0f64, |s, x| s.max(x.abs()));
            let t = 0.23;
            let y: Vec<f64> = y0
                .iter()
                .enumerate()
                .map(|(i, x)| x + 0.02 * ((i % 5) as f64 - 2.0) + 0.007)
                .collect();
            p.invariants(t, &y, &mut g).unwrap();
            let off = g[2 * m..].iter().fold(0.0f64, |s, x| s.max(x.abs()));
            let mut gy = DMatrix::from_element(pp, nd, f64::NAN);
            p.invariant_jacobian(t, &y, &mut gy).unwrap();
            let worst = jounce_integrate::testkit::jacobian_difference_error(
                |y, g| p.invariants(t, y, g).unwrap(),
                &y,
                &gy,
                1e-6,
            );
            eprintln!("{what}: |g(y0)| {g0:.1e}, |c(y)| {off:.1e}, G vs differences {worst:.1e}");
            assert!(g0 < 1e-9, "{what}: g(y0) = {g0:e}");
            assert!(off > 1e-3, "{what}: the point must be off the manifold");
            assert!(worst < 1e-7, "{what}: G differs by {worst:e}");
        }
    }
}
