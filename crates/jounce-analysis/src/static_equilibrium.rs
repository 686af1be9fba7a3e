//! Static equilibrium of a constrained mechanical system.
//!
//! With the velocities zero, the equations of motion
//! M q'' + Φ_qᵀ λ = Q (docs/conventions.md) are in equilibrium where
//!
//! ```text
//! r(q, λ) = [ Φ_qᵀ(q) λ − Q(t, q, 0) ]  = 0,
//!           [ Φ(t, q)               ]
//! ```
//!
//! solved by Newton's method on the KKT (saddle-point) system
//!
//! ```text
//! [ K_T + μ W   Φ_qᵀ ] [ Δq ]     [ Φ_qᵀλ − Q ]
//! [ Φ_q         0    ] [ Δλ ] = − [ Φ         ],   K_T = −∂Q/∂q + ∂(Φ_qᵀλ)/∂q,
//! ```
//!
//! with the exact derivatives of the system
//! ([`MechanicalSystem::force_jacobians`],
//! [`MechanicalSystem::constraint_force_jacobian`]); K_T is the tangent
//! stiffness of nonlinear finite-element statics (Bathe, *Finite Element
//! Procedures*, 2014, Section 8.4; Géradin & Cardona, *Flexible Multibody
//! Dynamics*, 2001, Section 11.2 for the constrained form). The step is
//! accepted when it lowers the scaled residual; otherwise a
//! Levenberg–Marquardt term μ W (W = M plus a small diagonal, so the
//! regularised step is a step of pseudo-transient relaxation, Kelley &
//! Keyes 1998) is raised until it does; near the solution μ → 0 and
//! Newton converges quadratically.
//!
//! Where positions and velocities differ in dimension (n_q ≠ n_v: the
//! unit quaternions of spatial bodies), Δq lives in velocity space (the
//! body's translation and rotation vector), the derivatives above are
//! taken along it, and the step moves q by the system's own map,
//! q ⊞ Δq ([`MechanicalSystem::integrate_position`]: the exponential map
//! and normalisation), so that every iterate is a valid configuration —
//! Newton on a manifold in a retraction (Absil, Mahony & Sepulchre,
//! *Optimization Algorithms on Matrix Manifolds*, 2008, Section 6.1).
//!
//! When Newton fails and the loads have a potential (Q = −∂V/∂q, checked
//! by differences of V at the start: gravity, springs, bushings), the
//! potential energy is descended on the constraint manifold: the same
//! regularised steps, each moved back onto Φ = 0 and accepted when V falls
//! (Levenberg–Marquardt on V; a trust region on a manifold, Absil, Mahony
//! & Sepulchre 2008, ch. 7), Newton again once the residual is small. A
//! stable equilibrium is a minimum of V on the manifold
//! (Lagrange–Dirichlet), so the descent does not stop where the residual
//! is merely stationary: a 1000-rod spatial chain released horizontally
//! hangs down in about 110 iterations, where the residual-based
//! iteration below ended in a false "no support".
//!
//! When that fails too, pseudo-transient continuation (the same steps with μ
//! lowered as the residual falls, no descent test) follows the overdamped
//! motion from the start; it passes configurations where the residual is
//! stationary and K_T singular (a pendulum released horizontally), where
//! a descent test stops Newton. When both fail, the load is applied in
//! steps: the Newton homotopy r(q, λ) − (1 − s) r(q₀, λ₀) = 0 is followed
//! from s = 0 (the initial state solves it) to s = 1, each step solved by
//! the same Newton iteration and halved on failure (Allgower & Georg,
//! *Introduction to Numerical Continuation Methods*, 2003, Section 2.1:
//! load stepping on the out-of-balance load).
//!
//! When both fail, the reduced stiffness Nᵀ K_T N at the start (N a basis
//! of the null space of Φ_q) is searched for directions of zero stiffness
//! along which the load does not vanish: a body that can move along them
//! has no support, and the error names it (`body 'x' has no support in
//! y`).
//!
//! **Large systems** (n + m above [`SPARSE_FROM_ORDER`], with a sparsity
//! pattern and a constant mass matrix; without them the dense path takes
//! up to [`MAX_DENSE_ORDER`]): the same iterations, with the KKT
//! matrix assembled straight into the system's tangent and Φ_q patterns
//! and factored by a sparse LU (faer's simplicial LU with a COLAMD
//! ordering, through `jounce_sparse::sparse_lu`) instead of the dense
//! SVD; storage and work per iteration O(nnz). Spatial systems (n_q ≠
//! n_v) take it too: K_T and Φ_q are filled along q ⊞ δ in their n_v
//! columns ([`jounce_mechanics::Sparsity::fill_tangent`]) and every step
//! moves q by [`MechanicalSystem::integrate_position`], as on the dense
//! path. Pseudo-transient
//! continuation there also refuses a step that violates the constraints
//! by more than a quarter of its size and lowers μ as the squared residual
//! ratio ([`MAX_PSEUDO_TRANSIENT_SPARSE`]). Its reduced-stiffness range
//! comes from Arnoldi iterations without the null-space basis
//! (`sparse_stiffness_range`): the smallest eigenvalue reported is the
//! one of least modulus, and a negative eigenvalue beyond it is found by
//! counting the negative pivots of a sparse LDLᵀ
//! (`least_reduced_stiffness_by_inertia`), so that an unstable
//! equilibrium is not called stable. The search for an unsupported
//! direction runs there by inverse iteration on the sparse KKT matrix
//! (`unsupported_direction_sparse`).

use std::cell::RefCell;

use nalgebra::{DMatrix, DVector, SymmetricEigen};

use jounce_mechanics::{MechanicalSystem, SparseMatrix};
use jounce_sparse::SparseLdlt;

use crate::sparse_kkt::{arnoldi, SparseKkt};

/// Newton iterations per solve (one load level).
pub const MAX_NEWTON: usize = 60;
/// Iterations of pseudo-transient continuation.
pub const MAX_PSEUDO_TRANSIENT: usize = 500;
/// Iterations of pseudo-transient continuation on the sparse path (large
/// models), where μ is lowered as the square of the residual ratio,
/// μ_{k+1} = μ_k (‖r_k‖/‖r_{k−1}‖)², and a step is also refused where it
/// violates the constraints by more than a quarter of its size: a
/// 1000-link chain released horizontally hangs down in about 620 such
/// steps (1500 with the plain ratio; with the dense path's trust region
/// alone, steps of up to 0.1 max|q| = 100 m, it diverges).
pub const MAX_PSEUDO_TRANSIENT_SPARSE: usize = 2000;
/// Iterations of the energy descent (loads with a potential).
pub const MAX_ENERGY_DESCENT: usize = 2000;
/// Smallest load step of the continuation.
pub const MIN_LOAD_STEP: f64 = 1e-6;
/// Largest number of load steps.
pub const MAX_LOAD_STEPS: usize = 400;
/// Force residual ‖Φ_qᵀλ − Q‖∞ accepted, relative to the load scale.
pub const FORCE_TOL: f64 = 1e-11;
/// Constraint residual ‖Φ‖∞ accepted [m or rad].
pub const CONSTRAINT_TOL: f64 = 1e-12;

/// A static equilibrium.
#[derive(Clone, Debug)]
pub struct StaticEquilibrium {
    /// Equilibrium configuration q (len n_q).
    pub q: Vec<f64>,
    /// Lagrange multipliers λ (len m): the constraint reactions
    /// (minimum-norm ones when constraints are redundant).
    pub lambda: Vec<f64>,
    /// Newton iterations, all load steps included.
    pub iterations: usize,
    /// Load steps taken (0: Newton converged directly).
    pub load_steps: usize,
    /// ‖Φ_qᵀλ − Q‖∞ at the solution [N or N·m].
    pub force_residual: f64,
    /// ‖Φ‖∞ at the solution.
    pub constraint_residual: f64,
    /// Smallest eigenvalue of the reduced tangent stiffness Nᵀ K_T N
    /// (symmetric part) at the solution: positive for a stable
    /// equilibrium, about zero for a neutral one (a free coordinate with
    /// no load on it), negative for an unstable one.
    pub min_reduced_stiffness: f64,
    /// Largest |eigenvalue| of the reduced stiffness (its scale).
    pub max_reduced_stiffness: f64,
}

impl StaticEquilibrium {
    /// "stable", "neutral" (a direction without stiffness) or "unstable".
    pub fn stability(&self) -> &'static str {
        let tol = 1e-9 * self.max_reduced_stiffness;
        if self.min_reduced_stiffness > tol {
            "stable"
        } else if self.min_reduced_stiffness >= -tol {
            "neutral"
        } else {
            "unstable"
        }
    }
}

/// Why no equilibrium was found.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum StaticError {
    /// A direction of zero stiffness carries load: e.g. a body in free fall.
    #[error("no static equilibrium: {what} has no support in {direction} (a load of {load:.4e} acts along a direction without stiffness or constraint)")]
    NoSupport {
        /// `body 'x'` (or the coordinate's label).
        what: String,
        /// The coordinate: x, y or theta.
        direction: String,
        /// The load along the unsupported direction [N or N·m].
        load: f64,
    },
    /// Newton and load stepping did not converge.
    #[error("no static equilibrium found: Newton's method and load stepping ({load_steps} load steps, smallest {min_step:.1e}) did not converge; force residual {force_residual:.3e}, constraint residual {constraint_residual:.3e}")]
    NotConverged {
        /// Load steps tried.
        load_steps: usize,
        /// Smallest load step tried.
        min_step: f64,
        /// Best force residual.
        force_residual: f64,
        /// Its constraint residual.
        constraint_residual: f64,
    },
    /// Input the method cannot take.
    #[error("static equilibrium: {0}")]
    Unsupported(String),
}

/// Scratch and evaluations of the residual and its Jacobian.
struct Statics<'a, S: MechanicalSystem + ?Sized> {
    sys: &'a S,
    t: f64,
    /// n_v: the velocity-space dimension, of the force residual, of the
    /// tangent and of the Newton step's Δq.
    n: usize,
    /// n_q: the positions' length; x = [q (n_q); λ (m)]. Where n_q ≠ n_v
    /// (unit quaternions of spatial bodies) a step Δq moves q by the
    /// system's own map, q ⊞ Δq ([`MechanicalSystem::integrate_position`]).
    nq: usize,
    m: usize,
    zero_v: Vec<f64>,
    /// Mass-like regularisation W (n × n; 0 × 0 on the sparse path,
    /// which keeps W on the tangent pattern).
    w: DMatrix<f64>,
    /// Largest |W_ij|.
    w_max: f64,
    /// Scale of the loads [N].
    f_scale: f64,
    /// The sparse KKT matrix of a large system (`None`: dense).
    sparse: Option<RefCell<SparseKkt>>,
}

/// K_T and Φ_q at one iterate: dense matrices, or (sparse path) K_T's
/// values on the tangent pattern with Φ_q at the same iterate (loaded
/// into the [`SparseKkt`] by [`Statics::step`]: a residual evaluated at a
/// trial point in between refills the KKT's own Φ_q there).
enum Tangent {
    Dense(DMatrix<f64>, DMatrix<f64>),
    Sparse(Vec<f64>, SparseMatrix),
}

impl Tangent {
    fn amax(&self) -> f64 {
        match self {
            Tangent::Dense(k, _) => k.amax(),
            Tangent::Sparse(k, _) => k.iter().fold(0.0_f64, |a, b| a.max(b.abs())),
        }
    }
}

impl<S: MechanicalSystem + ?Sized> Statics<'_, S> {
    /// r = [Φ_qᵀλ − Q; Φ] at x = [q; λ].
    fn residual(&self, x: &[f64]) -> DVector<f64> {
        let (n, m, nq) = (self.n, self.m, self.nq);
        let q = &x[..nq];
        let mut f = vec![0.0; n];
        self.sys.generalized_forces(self.t, q, &self.zero_v, &mut f);
        let reac = match &self.sparse {
            Some(sp) => {
                let mut sp = sp.borrow_mut();
                sp.fill_jacobian(self.sys, self.t, q);
                let mut reac = DVector::zeros(n);
                sp.jac.tr_mul_add(&x[nq..], reac.as_mut_slice());
                reac
            }
            None => {
                let lam = DVector::from_column_slice(&x[nq..]);
                let mut jac = DMatrix::zeros(m, n);
                self.sys.constraint_jacobian(self.t, q, &mut jac);
                jac.transpose() * lam
            }
        };
        let mut phi = vec![0.0; m];
        self.sys.constraints(self.t, q, &mut phi);
        let mut r = DVector::zeros(n + m);
        for i in 0..n {
            r[i] = reac[i] - f[i];
        }
        for i in 0..m {
            r[n + i] = phi[i];
        }
        r
    }

    /// K_T = −∂Q/∂q + ∂(Φ_qᵀλ)/∂q and Φ_q at x (sparse: `None` when
    /// the system cannot fill its sparse tangent there).
    fn tangent(&self, x: &[f64]) -> Option<Tangent> {
        let nq = self.nq;
        if let Some(sp) = &self.sparse {
            let mut sp = sp.borrow_mut();
            return sp
                .fill_tangent(self.sys, self.t, &x[..nq], &self.zero_v, &x[nq..])
                .then(|| Tangent::Sparse(sp.k.clone(), sp.jac.clone()));
        }
        let (k, jac) = self.dense_tangent(x);
        Some(Tangent::Dense(k, jac))
    }

    /// The dense K_T and Φ_q at x.
    fn dense_tangent(&self, x: &[f64]) -> (DMatrix<f64>, DMatrix<f64>) {
        let (n, m, nq) = (self.n, self.m, self.nq);
        let q = &x[..nq];
        let (mut dq, mut dv) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
        self.sys
            .force_jacobians(self.t, q, &self.zero_v, &mut dq, &mut dv);
        let mut kc = DMatrix::zeros(n, n);
        if m > 0 {
            self.sys
                .constraint_force_jacobian(self.t, q, &x[nq..], &mut kc);
        }
        let mut jac = DMatrix::zeros(m, n);
        self.sys.constraint_jacobian(self.t, q, &mut jac);
        (kc - dq, jac)
    }

    /// x ⊞ Δx: q moved by Δq (n_v) through the system's position map, λ
    /// by Δλ.
    fn advance(&self, x: &[f64], dx: &DVector<f64>) -> Vec<f64> {
        let (n, nq) = (self.n, self.nq);
        let mut out = x.to_vec();
        if nq == n {
            for (a, b) in out.iter_mut().zip(dx.iter()) {
                *a += b;
            }
        } else {
            self.sys
                .integrate_position(&x[..nq], &dx.as_slice()[..n], &mut out[..nq]);
            for (a, b) in out[nq..].iter_mut().zip(dx.iter().skip(n)) {
                *a += b;
            }
        }
        out
    }

    /// Merit: the force residual over the load scale plus the constraint
    /// residual (2-norms).
    fn merit(&self, r: &DVector<f64>) -> f64 {
        let n = self.n;
        r.rows(0, n).norm() / self.f_scale + r.rows(n, self.m).norm()
    }

    /// Sparse path only: whether the step Δq leaves the constraints
    /// violated by more than a quarter of its size, ‖Φ(q ⊞ Δq)‖∞ >
    /// ¼ ‖Δq‖∞ (Φ(q) + Φ_q Δq = 0 for the step, so this is the error of
    /// the linearisation, about α/2 for a rotation by α): a trust region
    /// on the curvature of the constraint manifold, free of the model's
    /// size (the dense path's 0.1 max|q| lets a 1000-link chain take steps
    /// of 100 m and diverge).
    fn too_nonlinear(&self, x: &[f64], r: &DVector<f64>, dx: &DVector<f64>) -> bool {
        if self.sparse.is_none() || self.m == 0 {
            return false;
        }
        let n = self.n;
        let moved = self.advance(x, dx);
        let mut phi = vec![0.0; self.m];
        self.sys.constraints(self.t, &moved[..self.nq], &mut phi);
        let base = r.rows(n, self.m).amax();
        let after = phi.iter().fold(0.0_f64, |a, b| a.max(b.abs()));
        !(after <= base + 0.25 * dx.rows(0, n).amax())
    }

    fn converged(&self, r: &DVector<f64>) -> bool {
        let n = self.n;
        r.rows(0, n).amax() <= FORCE_TOL * self.f_scale
            && (self.m == 0 || r.rows(n, self.m).amax() <= CONSTRAINT_TOL)
    }

    /// Close enough that round-off stops further progress.
    fn nearly_converged(&self, r: &DVector<f64>) -> bool {
        let n = self.n;
        r.rows(0, n).amax() <= 1e-8 * self.f_scale
            && (self.m == 0 || r.rows(n, self.m).amax() <= 1e-10)
    }

    /// Solve the regularised KKT system for the Newton step at x against
    /// the residual `r` (a pseudo-inverse: rank-deficient Φ_q from
    /// redundant joints gives the minimum-norm multipliers).
    fn step(&self, k: &Tangent, mu: f64, r: &DVector<f64>) -> DVector<f64> {
        let (n, m) = (self.n, self.m);
        let (k, jac) = match k {
            Tangent::Dense(k, jac) => (k, jac),
            Tangent::Sparse(kv, jac) => {
                // the same system, assembled into the sparse pattern and
                // solved by the sparse LU (a singular matrix gives no step,
                // so that the caller raises μ)
                let Some(sp) = &self.sparse else {
                    return DVector::zeros(n + m);
                };
                let mut sp = sp.borrow_mut();
                sp.jac.clone_from(jac);
                let mmax = sp.mass_max();
                // A = K_T + μ W, W = M + 1e-6 max|M| I
                if !sp.factor_with(|e, mij, dij| kv[e] + mu * (mij + 1e-6 * mmax * dij)) {
                    return DVector::zeros(n + m);
                }
                let mut b = -r;
                sp.solve(b.as_mut_slice());
                if b.iter().any(|x| !x.is_finite()) {
                    return DVector::zeros(n + m);
                }
                return b;
            }
        };
        let mut a = DMatrix::zeros(n + m, n + m);
        a.view_mut((0, 0), (n, n)).copy_from(&(k + &self.w * mu));
        a.view_mut((0, n), (n, m)).copy_from(&jac.transpose());
        a.view_mut((n, 0), (m, n)).copy_from(jac);
        // LU with partial pivoting where the matrix is clearly regular (a
        // tenth of the SVD's work); the SVD's pseudo-inverse where a pivot
        // is below 1e-10 of the largest (redundant rows, a direction
        // without stiffness at μ = 0): minimum-norm steps and multipliers
        let lu = a.clone().lu();
        let pivots = lu.u().diagonal().abs();
        if pivots.min() > 1e-10 * pivots.max() {
            if let Some(x) = lu.solve(&(-r)) {
                if x.iter().all(|v| v.is_finite()) {
                    return x;
                }
            }
        }
        let svd = a.svd(true, true);
        let smax = svd.singular_values.max();
        let eps = 1e-13 * smax.max(f64::MIN_POSITIVE);
        svd.solve(&(-r), eps)
            .unwrap_or_else(|_| DVector::zeros(n + m))
    }

    /// Newton with Levenberg–Marquardt safeguard on r(x) − shift = 0.
    /// Returns the iterations used, or `None` when it stalls.
    fn newton(&self, x: &mut [f64], shift: &DVector<f64>, iterations: &mut usize) -> bool {
        let mut r = self.residual(x) - shift;
        let mut phi = self.merit(&r);
        let mut mu = 0.0;
        for _ in 0..MAX_NEWTON {
            if self.converged(&r) {
                return true;
            }
            *iterations += 1;
            let Some(k) = self.tangent(x) else {
                return false;
            };
            let sigma = (k.amax() / self.w_max).max(1.0);
            let mut accepted = false;
            loop {
                let dx = self.step(&k, mu, &r);
                let trial = self.advance(x, &dx);
                let rt = self.residual(&trial) - shift;
                let pt = self.merit(&rt);
                if pt.is_finite() && pt < phi {
                    x.copy_from_slice(&trial);
                    r = rt;
                    phi = pt;
                    mu = if mu <= 1e-6 * sigma { 0.0 } else { mu / 10.0 };
                    accepted = true;
                    break;
                }
                mu = if mu == 0.0 { 1e-6 * sigma } else { mu * 10.0 };
                if mu > 1e12 * sigma {
                    break;
                }
            }
            if !accepted {
                return self.nearly_converged(&r);
            }
        }
        self.converged(&r) || self.nearly_converged(&r)
    }
}

impl<S: MechanicalSystem + ?Sized> Statics<'_, S> {
    /// Whether the loads at x are the negative gradient of the potential
    /// energy, Q = −∂V/∂q (along q ⊞ δ): central differences of
    /// V(t, q ⊞ ±ε d) against −Qᵀd in two directions d (Q itself and a
    /// fixed pseudo-random one), agreeing to 1e-6 of Σ|Q_i d_i|. Follower
    /// forces, a driven or time-dependent load and any element whose energy
    /// the system does not account fail it; gravity, springs and bushings
    /// pass.
    fn loads_have_potential(&self, x: &[f64]) -> bool {
        let (n, nq) = (self.n, self.nq);
        let q = &x[..nq];
        let mut f = vec![0.0; n];
        self.sys.generalized_forces(self.t, q, &self.zero_v, &mut f);
        let scale = q.iter().fold(1.0_f64, |a, b| a.max(b.abs()));
        let eps = 1e-6 * scale;
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let random: Vec<f64> = (0..n)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
            })
            .collect();
        let fnorm = f.iter().map(|v| v * v).sum::<f64>().sqrt();
        let mut dirs = vec![random];
        if fnorm > 0.0 {
            dirs.push(f.iter().map(|v| v / fnorm).collect());
        }
        let mut moved = vec![0.0; nq];
        for d in dirs {
            let mut energy_at = |sign: f64| {
                let step: Vec<f64> = d.iter().map(|v| sign * eps * v).collect();
                if nq == n {
                    for i in 0..n {
                        moved[i] = q[i] + step[i];
                    }
                } else {
                    self.sys.integrate_position(q, &step, &mut moved);
                }
                self.sys.potential_energy(self.t, &moved)
            };
            let dv = (energy_at(1.0) - energy_at(-1.0)) / (2.0 * eps);
            let work: f64 = f.iter().zip(&d).map(|(a, b)| a * b).sum();
            let size: f64 = f.iter().zip(&d).map(|(a, b)| (a * b).abs()).sum();
            let v0 = self.sys.potential_energy(self.t, q).abs();
            // round-off of the differences: ~1e-16 |V| / ε
            let noise = 1e-15 * v0.max(1.0) / eps;
            if !dv.is_finite() || (dv + work).abs() > 1e-6 * size + noise {
                return false;
            }
        }
        true
    }

    /// x moved back onto Φ(q) = 0 by Gauss–Newton steps of least W-norm,
    /// [W Φ_qᵀ; Φ_q 0][δ; ν] = [0; −Φ] (λ unchanged); false when ‖Φ‖∞
    /// does not fall below [`CONSTRAINT_TOL`] in a few steps.
    fn restore_constraints(&self, x: &mut Vec<f64>) -> bool {
        let (n, m) = (self.n, self.m);
        if m == 0 {
            return true;
        }
        let zeros = match &self.sparse {
            Some(sp) => vec![0.0; sp.borrow().pattern.len()],
            None => Vec::new(),
        };
        for _ in 0..8 {
            let r = self.residual(x);
            let phi = r.rows(n, m).amax();
            if !phi.is_finite() {
                return false;
            }
            if phi <= CONSTRAINT_TOL {
                return true;
            }
            let mut rc = DVector::zeros(n + m);
            rc.rows_mut(n, m).copy_from(&r.rows(n, m));
            // W and Φ_q at x (the residual above filled the sparse Φ_q)
            let k = match &self.sparse {
                Some(sp) => Tangent::Sparse(zeros.clone(), sp.borrow().jac.clone()),
                None => {
                    let mut jac = DMatrix::zeros(m, n);
                    self.sys
                        .constraint_jacobian(self.t, &x[..self.nq], &mut jac);
                    Tangent::Dense(DMatrix::zeros(n, n), jac)
                }
            };
            let mut dx = self.step(&k, 1.0, &rc);
            if dx.iter().all(|v| *v == 0.0) {
                return false;
            }
            // λ stays: only q moves
            dx.rows_mut(n, m).fill(0.0);
            *x = self.advance(x, &dx);
        }
        let r = self.residual(x);
        r.rows(n, m).amax() <= CONSTRAINT_TOL
    }

    /// Descent of the potential energy on the constraint manifold, for
    /// loads with a potential ([`Self::loads_have_potential`]): a stable
    /// equilibrium is a local minimum of V on Φ(q) = 0 (Lagrange–Dirichlet),
    /// so a sequence of feasible configurations of decreasing V cannot stop
    /// where the force residual is merely stationary (the pseudo-transient
    /// iteration's merit, ‖r‖, has such points along a chain released
    /// horizontally). Each step is the regularised Newton step on the
    /// Lagrangian, (K_T + μ W) Δq + Φ_qᵀ (λ + Δλ) = Q, Φ_q Δq = −Φ, moved
    /// onto the manifold by [`Self::restore_constraints`]; it is accepted
    /// when V falls (or, where V no longer changes beyond its round-off,
    /// when the residual falls), μ then lowered fourfold, otherwise raised
    /// fourfold — Levenberg–Marquardt on the energy, a trust-region
    /// method on a manifold (Absil, Mahony & Sepulchre 2008, ch. 7; Nocedal
    /// & Wright, *Numerical Optimization*, 2006, §10.3 for the μ update;
    /// with μ large the step is a step of the overdamped motion
    /// W Δq = Q − Φ_qᵀλ, whose λ are the multipliers of the motion at
    /// rest). μ never drops below 1e-10 σ, so that a direction without
    /// stiffness (a chain free to turn about the vertical) leaves the
    /// matrix regular.
    fn energy_descent(&self, x: &mut Vec<f64>, iterations: &mut usize) -> bool {
        if !self.restore_constraints(x) {
            return false;
        }
        let energy = |x: &[f64]| self.sys.potential_energy(self.t, &x[..self.nq]);
        let mut v = energy(x);
        let mut r = self.residual(x);
        let Some(k) = self.tangent(x) else {
            return false;
        };
        let sigma = (k.amax() / self.w_max).max(1.0);
        let mu_min = 1e-10 * sigma;
        let mut mu = sigma;
        for _ in 0..MAX_ENERGY_DESCENT {
            if self.converged(&r) {
                return true;
            }
            *iterations += 1;
            let Some(k) = self.tangent(x) else {
                return false;
            };
            let phi = self.merit(&r);
            let mut accepted = false;
            // a trust region on the motion: at most max(0.5, 0.1 max|q|)
            // (m or rad) per step, so that an angle does not wind past a
            // maximum of V to an equal minimum a turn away
            let limit = x[..self.nq]
                .iter()
                .fold(0.5_f64, |a, b| a.max(0.1 * b.abs()));
            while mu <= 1e12 * sigma {
                let dx = self.step(&k, mu, &r);
                if dx.rows(0, self.n).amax() > limit {
                    mu *= 4.0;
                    continue;
                }
                let mut trial = self.advance(x, &dx);
                if dx.iter().any(|v| *v != 0.0) && self.restore_constraints(&mut trial) {
                    let vt = energy(&trial);
                    let rt = self.residual(&trial);
                    let round_off = 1e-13 * v.abs().max(1.0);
                    if vt < v - round_off || (vt <= v + round_off && self.merit(&rt) < phi) {
                        *x = trial;
                        v = vt;
                        r = rt;
                        mu = (mu / 4.0).max(mu_min);
                        accepted = true;
                        break;
                    }
                }
                mu *= 4.0;
            }
            if !accepted {
                return self.nearly_converged(&r);
            }
            // close to the minimum: Newton's own iteration from here
            // (quadratic, with its residual merit), the descent again if it
            // fails
            if self.merit(&r) < 1e-4 {
                let mut polished = x.clone();
                let zero = DVector::zeros(self.n + self.m);
                if self.newton(&mut polished, &zero, iterations) {
                    *x = polished;
                    return true;
                }
            }
        }
        self.converged(&r)
    }

    /// Pseudo-transient continuation (Kelley & Keyes 1998): steps of
    /// (K_T + μ W) Δq + Φ_qᵀ Δλ = −r without a descent test, μ = 1/Δτ²
    /// lowered by switched evolution relaxation, μ_{k+1} = μ_k ‖r_k‖/‖r_{k−1}‖.
    /// The early steps follow the overdamped motion towards a stable
    /// equilibrium (it passes where K_T is singular and the residual is
    /// stationary, a pendulum released horizontally), the late ones are
    /// Newton steps.
    fn pseudo_transient(&self, x: &mut [f64], iterations: &mut usize) -> bool {
        let zero = DVector::zeros(self.n + self.m);
        let mut r = self.residual(x);
        let mut phi = self.merit(&r);
        let Some(k) = self.tangent(x) else {
            return false;
        };
        let sigma = (k.amax() / self.w_max).max(1.0);
        let mut mu = sigma;
        // the sparse path (large models): more iterations, and μ lowered
        // as the square of the residual ratio (see MAX_PSEUDO_TRANSIENT_SPARSE)
        let (iters, ser_power) = if self.sparse.is_some() {
            (MAX_PSEUDO_TRANSIENT_SPARSE, 2)
        } else {
            (MAX_PSEUDO_TRANSIENT, 1)
        };
        for _ in 0..iters {
            if self.converged(&r) {
                return true;
            }
            *iterations += 1;
            let Some(k) = self.tangent(x) else {
                return false;
            };
            let mut dx = self.step(&k, mu, &r);
            // a trust region on the motion: at most 0.1 (m or rad, relative
            // to the size of q) per step, by raising μ
            let limit = 0.1 * x[..self.nq].iter().fold(1.0_f64, |a, b| a.max(b.abs()));
            let mut tries = 0;
            while dx.rows(0, self.n).amax() > limit && tries < 40 {
                mu = if mu == 0.0 { sigma } else { mu * 4.0 };
                dx = self.step(&k, mu, &r);
                tries += 1;
            }
            while self.too_nonlinear(x, &r, &dx) && tries < 40 {
                mu = if mu == 0.0 { sigma } else { mu * 4.0 };
                dx = self.step(&k, mu, &r);
                tries += 1;
            }
            let moved = self.advance(x, &dx);
            x.copy_from_slice(&moved);
            let rn = self.residual(x);
            let pn = self.merit(&rn);
            if !pn.is_finite() {
                return false;
            }
            mu *= (pn / phi.max(f64::MIN_POSITIVE)).powi(ser_power).min(10.0);
            if mu < 1e-12 * sigma {
                mu = 0.0;
            }
            r = rn;
            phi = pn;
            if mu == 0.0 {
                // Newton from here
                return self.newton(x, &zero, iterations);
            }
        }
        self.converged(&r)
    }
}

/// Largest order n + m of the dense Newton system `[K Φ_qᵀ; Φ_q 0]` this
/// solver factors: its LU takes (n + m)² × 8 bytes and (n + m)³/3 flops
/// per iteration (about 32 MB and 1 s at the limit). Above it the same
/// iteration runs on the sparse KKT matrix (module documentation, *Large
/// systems*); a system without a sparsity pattern or with a
/// configuration-dependent mass matrix is refused up front there rather
/// than run for minutes (a 1000-link chain, order 5000, ran past 60 s
/// densely: issue 31).
pub const MAX_DENSE_ORDER: usize = 2000;

/// Order n + m from which the sparse KKT factorisation is used by default
/// when the system has a sparsity pattern and a constant mass matrix: a
/// 100-rod spatial chain released horizontally (order 1100) took 178 s of
/// dense factorisations, the sparse path about 2 s.
pub const SPARSE_FROM_ORDER: usize = 500;

/// The refusal of a system above [`MAX_DENSE_ORDER`], naming its size.
fn too_large(n: usize, m: usize) -> String {
    let order = n + m;
    format!(
        "{n} coordinates and {m} constraint equations make a dense Newton system of order {order}, \
         above this solver's budget of {MAX_DENSE_ORDER} ({:.0} MB and {:.1e} flops per iteration \
         against {:.0} MB and {:.1e} at the budget)",
        (order * order * 8) as f64 / 1e6,
        (order as f64).powi(3) / 3.0,
        (MAX_DENSE_ORDER * MAX_DENSE_ORDER * 8) as f64 / 1e6,
        (MAX_DENSE_ORDER as f64).powi(3) / 3.0,
    )
}

/// The static equilibrium of `sys` at time `t` (drivers held at their
/// value at t), from the configuration `q0` (e.g. the assembled initial
/// one); see the module documentation for the method.
///
/// # Errors
/// [`StaticError::NoSupport`] naming the body and direction without
/// support, [`StaticError::NotConverged`] when the iteration fails for
/// another reason, [`StaticError::Unsupported`] for non-finite input, or
/// n + m above [`MAX_DENSE_ORDER`] for a system the sparse path cannot
/// take (no sparsity pattern or a configuration-dependent mass matrix)
/// (refused before any evaluation, naming the size and the budget).
pub fn static_equilibrium<S: MechanicalSystem + ?Sized>(
    sys: &S,
    t: f64,
    q0: &[f64],
) -> Result<StaticEquilibrium, StaticError> {
    solve(sys, t, q0, None)
}

/// [`static_equilibrium()`] with the linear algebra chosen: `Some(true)`
/// the sparse KKT factorisation (refused, naming why, for a system
/// without a sparsity pattern or with a configuration-dependent mass
/// matrix), `Some(false)` the dense one (refused above
/// [`MAX_DENSE_ORDER`]), `None` the sparse one above
/// [`SPARSE_FROM_ORDER`] where the system allows it, else the dense one up
/// to [`MAX_DENSE_ORDER`]. For comparing the two paths.
///
/// # Errors
/// As [`static_equilibrium()`].
pub fn static_equilibrium_using<S: MechanicalSystem + ?Sized>(
    sys: &S,
    t: f64,
    q0: &[f64],
    sparse: Option<bool>,
) -> Result<StaticEquilibrium, StaticError> {
    solve(sys, t, q0, sparse)
}

fn solve<S: MechanicalSystem + ?Sized>(
    sys: &S,
    t: f64,
    q0: &[f64],
    use_sparse: Option<bool>,
) -> Result<StaticEquilibrium, StaticError> {
    let (n, nq, m) = (sys.nv(), sys.nq(), sys.nc());
    if q0.len() != nq || q0.iter().any(|x| !x.is_finite()) || !t.is_finite() {
        return Err(StaticError::Unsupported(
            "the start configuration is not finite or has the wrong length".into(),
        ));
    }
    let want_sparse = use_sparse.unwrap_or(n + m > SPARSE_FROM_ORDER);
    let sparse =
        if want_sparse {
            match SparseKkt::new(sys, t, q0) {
                Some(sp) => Some(RefCell::new(sp)),
                // mid-size without a pattern: the dense path, as before
                None if use_sparse.is_none() && n + m <= MAX_DENSE_ORDER => None,
                None if n + m > MAX_DENSE_ORDER => {
                    return Err(StaticError::Unsupported(format!(
                        "{}; the system has no sparsity pattern or a configuration-dependent \
                     mass matrix, so the sparse factorisation cannot take it",
                        too_large(n, m)
                    )))
                }
                None => return Err(StaticError::Unsupported(
                    "the sparse factorisation needs a sparsity pattern and a constant mass matrix"
                        .into(),
                )),
            }
        } else {
            if n + m > MAX_DENSE_ORDER {
                return Err(StaticError::Unsupported(too_large(n, m)));
            }
            None
        };
    let zero_v = vec![0.0; n];
    let (w, w_max) = match &sparse {
        Some(sp) => {
            let mmax = sp.borrow().mass_max().max(f64::MIN_POSITIVE);
            (DMatrix::zeros(0, 0), mmax * (1.0 + 1e-6))
        }
        None => {
            let mut mass = DMatrix::zeros(n, n);
            sys.mass_matrix(q0, &mut mass);
            let mmax = mass.amax().max(f64::MIN_POSITIVE);
            let w = &mass + DMatrix::identity(n, n) * (1e-6 * mmax);
            let w_max = w.amax();
            (w, w_max)
        }
    };
    let mut f0 = vec![0.0; n];
    sys.generalized_forces(t, q0, &zero_v, &mut f0);
    let f_scale = f0.iter().fold(0.0_f64, |a, b| a.max(b.abs())).max(1e-300);
    let st = Statics {
        sys,
        t,
        n,
        nq,
        m,
        zero_v,
        w,
        w_max,
        f_scale: if f_scale > 1e-300 { f_scale } else { 1.0 },
        sparse,
    };

    // start: λ₀ from the KKT system at rest, [W Φ_qᵀ; Φ_q 0][a; λ] = [Q; 0]
    let mut x0 = q0.to_vec();
    x0.extend(std::iter::repeat_n(0.0, m));
    // (x0 = [q0; λ0] has n_q + m entries, a step n_v + m)
    if m > 0 {
        let r = st.residual(&x0);
        let k0 = match &st.sparse {
            Some(sp) => {
                let sp = sp.borrow();
                Tangent::Sparse(vec![0.0; sp.pattern.len()], sp.jac.clone())
            }
            None => {
                let mut jac = DMatrix::zeros(m, n);
                sys.constraint_jacobian(t, q0, &mut jac);
                Tangent::Dense(DMatrix::zeros(n, n), jac)
            }
        };
        let lam = st.step(&k0, 1.0, &r);
        for i in 0..m {
            x0[nq + i] = lam[n + i];
        }
    }
    if x0.iter().any(|v| !v.is_finite()) {
        return Err(StaticError::Unsupported(
            "the loads or constraint Jacobian are not finite at the start".into(),
        ));
    }

    let mut iterations = 0;
    let zero = DVector::zeros(n + m);
    let mut x = x0.clone();
    let mut load_steps = 0;
    let mut ok = st.newton(&mut x, &zero, &mut iterations);
    let mut min_step: f64 = 1.0;
    if !ok && st.loads_have_potential(&x0) {
        x.copy_from_slice(&x0);
        ok = st.energy_descent(&mut x, &mut iterations);
    }
    if !ok {
        x.copy_from_slice(&x0);
        ok = st.pseudo_transient(&mut x, &mut iterations);
    }
    if !ok {
        // load stepping on the out-of-balance load (Newton homotopy)
        let r0 = st.residual(&x0);
        x.copy_from_slice(&x0);
        let (mut s, mut ds) = (0.0_f64, 0.125_f64);
        while load_steps < MAX_LOAD_STEPS {
            let s_next = (s + ds).min(1.0);
            let shift = &r0 * (1.0 - s_next);
            let mut trial = x.clone();
            load_steps += 1;
            if st.newton(&mut trial, &shift, &mut iterations) {
                x = trial;
                s = s_next;
                if s >= 1.0 {
                    ok = true;
                    break;
                }
                ds = (2.0 * ds).min(0.5);
            } else {
                ds /= 4.0;
                min_step = min_step.min(ds);
                if ds < MIN_LOAD_STEP {
                    break;
                }
            }
        }
        if ok {
            // polish at full load
            ok = st.newton(&mut x, &zero, &mut iterations);
        }
    }
    if !ok {
        let unsupported = if st.sparse.is_none() {
            unsupported_direction(&st, &x0)
        } else {
            // where the iterations ended: a supported part has moved off
            // poses of zero stiffness (a chain released horizontally)
            unsupported_direction_sparse(&st, &x).or_else(|| unsupported_direction_sparse(&st, &x0))
        };
        if let Some(e) = unsupported {
            return Err(e);
        }
        let r = st.residual(&x);
        return Err(StaticError::NotConverged {
            load_steps,
            min_step,
            force_residual: r.rows(0, n).amax(),
            constraint_residual: if m > 0 { r.rows(n, m).amax() } else { 0.0 },
        });
    }
    let r = st.residual(&x);
    let (kmin, kmax) = if st.sparse.is_some() {
        sparse_stiffness_range(&st, &x)
    } else {
        reduced_stiffness_range(&st, &x)
    };
    Ok(StaticEquilibrium {
        q: x[..nq].to_vec(),
        lambda: x[nq..].to_vec(),
        iterations,
        load_steps,
        force_residual: r.rows(0, n).amax(),
        constraint_residual: if m > 0 { r.rows(n, m).amax() } else { 0.0 },
        min_reduced_stiffness: kmin,
        max_reduced_stiffness: kmax,
    })
}

/// An orthonormal basis N (n × (n − rank)) of the null space of Φ_q at
/// x: the motions the constraints allow.
fn null_space(jac: &DMatrix<f64>, n: usize) -> DMatrix<f64> {
    if jac.nrows() == 0 {
        return DMatrix::identity(n, n);
    }
    // SVD of the n × n matrix Φ_qᵀΦ_q keeps all n right singular vectors
    let g = jac.transpose() * jac;
    let eig = SymmetricEigen::new(g);
    let emax = eig.eigenvalues.amax().max(f64::MIN_POSITIVE);
    let cols: Vec<usize> = (0..n)
        .filter(|&j| eig.eigenvalues[j] <= 1e-10 * emax)
        .collect();
    let mut nmat = DMatrix::zeros(n, cols.len());
    for (k, &j) in cols.iter().enumerate() {
        nmat.set_column(k, &eig.eigenvectors.column(j));
    }
    nmat
}

/// Symmetric part of the reduced tangent stiffness Nᵀ K_T N at x, with N.
fn reduced_stiffness<S: MechanicalSystem + ?Sized>(
    st: &Statics<'_, S>,
    x: &[f64],
) -> (DMatrix<f64>, DMatrix<f64>) {
    let (k, jac) = st.dense_tangent(x);
    let nmat = null_space(&jac, st.n);
    let kr = nmat.transpose() * k * &nmat;
    ((&kr + kr.transpose()) * 0.5, nmat)
}

fn reduced_stiffness_range<S: MechanicalSystem + ?Sized>(
    st: &Statics<'_, S>,
    x: &[f64],
) -> (f64, f64) {
    let (kr, _) = reduced_stiffness(st, x);
    if kr.nrows() == 0 {
        return (0.0, 0.0);
    }
    let e = SymmetricEigen::new(kr).eigenvalues;
    (e.min(), e.amax())
}

/// The reduced stiffness range of the sparse path, without the null-space
/// basis N: the smallest |κ| of Nᵀ K_s N (K_s the symmetric part of K_T)
/// by Arnoldi on y = [K_s Φ_qᵀ; Φ_q 0]⁻¹[x; 0] = N (Nᵀ K_s N)⁻¹ Nᵀ x, whose
/// nonzero eigenvalues are 1/κ (shift-invert at 0, Ericsson & Ruhe 1980),
/// 0 when that matrix is singular (a neutral direction); the largest |κ|
/// by Arnoldi on P K_s P with P = I − Φ_qᵀ(Φ_qΦ_qᵀ)⁻¹Φ_q applied through
/// [I Φ_qᵀ; Φ_q 0]. The smallest is the one of least modulus; a negative
/// κ among smaller positive ones is then found by counting
/// ([`least_reduced_stiffness_by_inertia`]).
fn sparse_stiffness_range<S: MechanicalSystem + ?Sized>(
    st: &Statics<'_, S>,
    x: &[f64],
) -> (f64, f64) {
    let (n, m) = (st.n, st.m);
    let Some(sp) = &st.sparse else {
        return (0.0, 0.0);
    };
    let Some(Tangent::Sparse(k, _)) = st.tangent(x) else {
        return (0.0, 0.0);
    };
    let mut sp = sp.borrow_mut();
    let pattern = sp.pattern.clone();
    let ks = symmetric_part(&pattern, &k);
    let start: Vec<f64> = (0..n)
        .map(|i| 1.0 + 0.1 * ((i * 7919) % 13) as f64)
        .collect();
    let steps = 80.min(n.saturating_sub(m).max(1));
    // largest |κ|: P K_s P through the identity KKT matrix
    let ident: Vec<f64> = pattern
        .iter()
        .map(|&(i, j)| if i == j { 1.0 } else { 0.0 })
        .collect();
    let kmax = if sp.factor(&ident) {
        let mut b = vec![0.0; n + m];
        let mut project = |sp: &mut SparseKkt, v: &mut [f64]| {
            b[..n].copy_from_slice(v);
            b[n..].fill(0.0);
            sp.solve(&mut b);
            v.copy_from_slice(&b[..n]);
        };
        let mut tmp = vec![0.0; n];
        let mut op = |v: &[f64], out: &mut [f64]| {
            tmp.copy_from_slice(v);
            project(&mut sp, &mut tmp);
            out.fill(0.0);
            sp.mul_add(&ks, &tmp, out);
            project(&mut sp, out);
            true
        };
        arnoldi(n, &start, 1, &mut op, 1, steps, 1e-8)
            .and_then(|r| r.first().map(|r| r.value.norm()))
            .unwrap_or(0.0)
    } else {
        0.0
    };
    // smallest |κ| (signed): shift-invert at 0
    let kmin = if sp.factor(&ks) {
        let mut b = vec![0.0; n + m];
        let mut op = |v: &[f64], out: &mut [f64]| {
            b[..n].copy_from_slice(v);
            b[n..].fill(0.0);
            sp.solve(&mut b);
            out.copy_from_slice(&b[..n]);
            true
        };
        arnoldi(n, &start, 1, &mut op, 1, steps, 1e-10)
            .and_then(|r| r.first().map(|r| 1.0 / r.value.re))
            .filter(|v| v.is_finite())
            .unwrap_or(0.0)
    } else {
        0.0
    };
    let kmin = match least_reduced_stiffness_by_inertia(&pattern, &ks, &sp.jac, n) {
        Some(negative) => kmin.min(negative),
        None => kmin,
    };
    (kmin, kmax.max(kmin.abs()))
}

/// K_s = (K + Kᵀ)/2 on the (structurally symmetric) tangent pattern.
fn symmetric_part(pattern: &[(usize, usize)], k: &[f64]) -> Vec<f64> {
    pattern
        .iter()
        .enumerate()
        .map(|(e, &(i, j))| match pattern.binary_search(&(j, i)) {
            Ok(f) => 0.5 * (k[e] + k[f]),
            Err(_) => k[e],
        })
        .collect()
}

/// The sparse path's search for a loaded direction of zero reduced
/// stiffness at x0 (the dense path's [`unsupported_direction`], without
/// the null-space basis): two steps of inverse iteration on the reduced
/// stiffness shifted by δ = 10⁻⁹ ‖K_s‖, y = [K_s + δI Φ_qᵀ; Φ_q 0]⁻¹[f; 0]
/// from the load f = Q(t, q0, 0), which stay in the null space of Φ_q and
/// amplify the directions of stiffness κ by 1/(κ + δ): a loaded direction
/// of zero stiffness dominates them by 10³ or more over every direction
/// stiffer than 10⁻⁶ ‖K_s‖ (Golub & Van Loan, *Matrix Computations*,
/// 4th ed., Section 8.2.2). It is reported when its Rayleigh quotient
/// zᵀK_s z is zero to 10⁻⁸ ‖K_s‖ and the load along it, zᵀf, is not
/// negligible (10⁻⁹ of the load scale, as the dense search), named by the
/// coordinate that moves most along it.
fn unsupported_direction_sparse<S: MechanicalSystem + ?Sized>(
    st: &Statics<'_, S>,
    x0: &[f64],
) -> Option<StaticError> {
    let (n, m) = (st.n, st.m);
    let sp = st.sparse.as_ref()?;
    let Some(Tangent::Sparse(k, _)) = st.tangent(x0) else {
        return None;
    };
    let mut sp = sp.borrow_mut();
    let pattern = sp.pattern.clone();
    let ks = symmetric_part(&pattern, &k);
    let mut row_sum = vec![0.0_f64; n];
    for (&(i, _), &kv) in pattern.iter().zip(&ks) {
        row_sum[i] += kv.abs();
    }
    let k_norm = row_sum.iter().fold(0.0_f64, |a, &b| a.max(b));
    let k_norm = if k_norm > 0.0 { k_norm } else { sp.mass_max() };
    let delta = 1e-9 * k_norm;
    let shifted: Vec<f64> = pattern
        .iter()
        .zip(&ks)
        .map(|(&(i, j), &kv)| if i == j { kv + delta } else { kv })
        .collect();
    if !sp.factor(&shifted) {
        return None;
    }
    let mut f = vec![0.0; n];
    st.sys
        .generalized_forces(st.t, &x0[..st.nq], &st.zero_v, &mut f);
    let mut b = vec![0.0; n + m];
    b[..n].copy_from_slice(&f);
    let mut z = vec![0.0; n];
    for _ in 0..2 {
        b[n..].fill(0.0);
        sp.solve(&mut b);
        let norm = b[..n].iter().map(|x| x * x).sum::<f64>().sqrt();
        if !(norm > 0.0 && norm.is_finite()) {
            return None;
        }
        for (zi, bi) in z.iter_mut().zip(&b[..n]) {
            *zi = bi / norm;
        }
        b[..n].copy_from_slice(&z);
    }
    let mut kz = vec![0.0; n];
    sp.mul_add(&ks, &z, &mut kz);
    let rayleigh: f64 = z.iter().zip(&kz).map(|(a, b)| a * b).sum();
    let load: f64 = z.iter().zip(&f).map(|(a, b)| a * b).sum::<f64>().abs();
    if rayleigh.abs() > 1e-8 * k_norm || load <= 1e-9 * st.f_scale {
        return None;
    }
    let i = (0..n).max_by(|&a, &b| z[a].abs().total_cmp(&z[b].abs()))?;
    Some(no_support(st.sys.tangent_coordinate_label(i), load))
}

/// [`StaticError::NoSupport`] for a direction in which coordinate
/// `label` moves most.
fn no_support(label: String, load: f64) -> StaticError {
    let (what, direction) = match label.rsplit_once('.') {
        Some((body, c)) => (format!("body '{body}'"), c.to_string()),
        None => (format!("coordinate '{label}'"), "its direction".to_string()),
    };
    StaticError::NoSupport {
        what,
        direction,
        load,
    }
}

/// The least eigenvalue of the reduced stiffness Nᵀ K_s N when it is
/// negative beyond the resolution of the count (`None` when no such
/// eigenvalue exists), found by counting instead of by iteration, so that
/// a negative eigenvalue among smaller positive ones is not missed.
///
/// The count: for ρ large enough, K_s − σI + ρ Φ_qᵀΦ_q has as many
/// negative eigenvalues as Nᵀ K_s N has below σ (Debreu's lemma, in the
/// counting form of Birgin & Martínez, *Practical Augmented Lagrangian
/// Methods*, 2014, Section 4; Nocedal & Wright, *Numerical Optimization*,
/// 2006, Thm. 17.5), and that is the number of negative pivots of its
/// LDLᵀ (Sylvester's law of inertia, [`SparseLdlt::negative_eigenvalues`]).
/// The range-space coupling perturbs the reduced block by about
/// ‖K_s‖²/(ρ σ_min²(Φ_q)) and round-off by ε ρ ‖Φ_q‖²; ρ ‖Φ_q‖² = 10⁸ ‖K_s‖
/// (ε^(−1/2) ‖K_s‖) balances the two, so the count is right for the
/// eigenvalues beyond about 10⁻⁶ ‖K_s‖ in modulus, the resolution used
/// here (‖K_s‖ by Gershgorin). The least eigenvalue is then bracketed by
/// bisection on σ between −‖K_s‖ (no eigenvalue below) and the resolution
/// (Parlett, *The Symmetric Eigenvalue Problem*, 1998, Section 3.3:
/// spectrum slicing). Storage O(nnz of the factor); about 50
/// factorisations.
fn least_reduced_stiffness_by_inertia(
    pattern: &[(usize, usize)],
    ks: &[f64],
    jac: &SparseMatrix,
    n: usize,
) -> Option<f64> {
    // ‖K_s‖ bound (row sums) and the scale of Φ_qᵀΦ_q (its largest diagonal)
    let mut row_sum = vec![0.0_f64; n];
    for (&(i, _), &k) in pattern.iter().zip(ks) {
        row_sum[i] += k.abs();
    }
    let k_norm = row_sum.iter().fold(0.0_f64, |a, &b| a.max(b));
    if !(k_norm > 0.0 && k_norm.is_finite()) {
        return None;
    }
    let mut gram_diag = vec![0.0_f64; n];
    let mut entries: Vec<(usize, usize)> =
        pattern.iter().filter(|&&(i, j)| i <= j).copied().collect();
    for r in 0..jac.nrows() {
        let (cols, vals) = jac.row(r);
        for (a, (&i, &vi)) in cols.iter().zip(vals).enumerate() {
            gram_diag[i] += vi * vi;
            for &j in &cols[a..] {
                entries.push((i.min(j), i.max(j)));
            }
        }
    }
    let gram_max = gram_diag.iter().fold(0.0_f64, |a, &b| a.max(b));
    let rho = if gram_max > 0.0 {
        1e8 * k_norm / gram_max
    } else {
        0.0
    };
    let mut ldlt = SparseLdlt::new(n, &entries);
    let k_slots: Vec<Option<usize>> = pattern
        .iter()
        .map(|&(i, j)| if i <= j { ldlt.slot(i, j) } else { None })
        .collect();
    let mut count_below = |sigma: f64| -> Option<usize> {
        ldlt.clear();
        for (slot, &k) in k_slots.iter().zip(ks) {
            if let Some(s) = *slot {
                ldlt.ax[s] += k;
            }
        }
        for r in 0..jac.nrows() {
            let (cols, vals) = jac.row(r);
            for (a, (&i, &vi)) in cols.iter().zip(vals).enumerate() {
                for (&j, &vj) in cols[a..].iter().zip(&vals[a..]) {
                    let s = ldlt.slot(i, j)?;
                    ldlt.ax[s] += rho * vi * vj;
                }
            }
        }
        ldlt.add_to_diagonal(-sigma);
        ldlt.negative_eigenvalues(1e-14)
    };
    let resolution = 1e-6 * k_norm;
    let (mut lo, mut hi) = (-1.01 * k_norm, -resolution);
    if count_below(hi)? == 0 {
        return None;
    }
    for _ in 0..60 {
        if hi - lo <= 1e-9 * k_norm {
            break;
        }
        let mid = 0.5 * (lo + hi);
        match count_below(mid) {
            Some(0) => lo = mid,
            Some(_) => hi = mid,
            None => break,
        }
    }
    Some(hi)
}

/// A loaded direction of zero reduced stiffness at x0, named by the
/// coordinate that moves most along it.
fn unsupported_direction<S: MechanicalSystem + ?Sized>(
    st: &Statics<'_, S>,
    x0: &[f64],
) -> Option<StaticError> {
    let (kr, nmat) = reduced_stiffness(st, x0);
    let p = kr.nrows();
    if p == 0 {
        return None;
    }
    let eig = SymmetricEigen::new(kr);
    let kmax = eig.eigenvalues.amax();
    let zero: Vec<usize> = (0..p)
        .filter(|&j| eig.eigenvalues[j].abs() <= 1e-9 * kmax)
        .collect();
    if zero.is_empty() {
        return None;
    }
    // the load within the zero-stiffness subspace: g = Zᵀ Nᵀ Q
    let mut f = vec![0.0; st.n];
    st.sys
        .generalized_forces(st.t, &x0[..st.nq], &st.zero_v, &mut f);
    let f = DVector::from_vec(f);
    let mut z = DMatrix::zeros(p, zero.len());
    for (k, &j) in zero.iter().enumerate() {
        z.set_column(k, &eig.eigenvectors.column(j));
    }
    let basis = &nmat * z;
    let g = basis.transpose() * &f;
    let load = g.norm();
    if load <= 1e-9 * st.f_scale {
        return None;
    }
    let d = basis * g;
    Some(no_support(st.sys.tangent_coordinate_label(d.iamax()), load))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use jounce_mechanics::PlanarSystem;

    fn system(text: &str) -> PlanarSystem {
        let model = jounce_model::from_str(text, "test.toml").expect("valid model");
        PlanarSystem::from_model(&model).expect("valid system")
    }

    /// A spatial double pendulum on spherical joints (unit links of 1 kg
    /// along their body x, gravity −y), both links started along the
    /// tilted unit vector u = (0.6, −0.48, 0.64), the bodies turned onto it
    /// by axis and angle.
    pub(crate) const SPATIAL_DOUBLE_PENDULUM: &str = r#"
[model]
space = "spatial"
gravity = [0.0, -9.81, 0.0]

[[bodies]]
name = "link1"
mass = 1.0
inertia = [0.001, 0.08333333333333333, 0.08333333333333333]
position = [0.3, -0.24, 0.32]
orientation_axis_angle = [0.0, -0.8, -0.6, 0.9272952180016122]
points = { O = [-0.5, 0.0, 0.0], A = [0.5, 0.0, 0.0] }

[[bodies]]
name = "link2"
mass = 1.0
inertia = [0.001, 0.08333333333333333, 0.08333333333333333]
position = [0.9, -0.72, 0.96]
orientation_axis_angle = [0.0, -0.8, -0.6, 0.9272952180016122]
points = { A = [-0.5, 0.0, 0.0], B = [0.5, 0.0, 0.0] }

[[joints]]
name = "shoulder"
type = "spherical"
body1 = "ground"
point1 = [0.0, 0.0, 0.0]
body2 = "link1"
point2 = "O"

[[joints]]
name = "elbow"
type = "spherical"
body1 = "link1"
point1 = "A"
body2 = "link2"
point2 = "A"
"#;

    /// Statics on unit quaternions (n_q = 14 ≠ n_v = 12): from the tilted
    /// start the chain hangs straight down, centres of mass at (0, −½, 0)
    /// and (0, −3/2, 0), the shoulder carrying both weights and the elbow
    /// one, every iterate's quaternion of unit norm.
    #[test]
    fn a_spatial_chain_on_spherical_joints_hangs_straight_down() {
        let model = jounce_model::from_str(SPATIAL_DOUBLE_PENDULUM, "sdp.toml").unwrap();
        let sys = jounce_mechanics::SpatialSystem::from_model(&model).unwrap();
        assert_eq!((sys.nq(), sys.nv(), sys.nc()), (14, 12, 6));
        let (q0, _) = sys.initial_state();
        // the start is assembled: the links meet at the joints
        let mut phi = vec![0.0; 6];
        sys.constraints(0.0, &q0, &mut phi);
        assert!(phi.iter().all(|x| x.abs() < 1e-12), "{phi:?}");
        let eq = static_equilibrium(&sys, 0.0, &q0).unwrap();
        let want = [[0.0, -0.5, 0.0], [0.0, -1.5, 0.0]];
        for (b, w) in want.iter().enumerate() {
            for k in 0..3 {
                assert!(
                    (eq.q[7 * b + k] - w[k]).abs() < 1e-9,
                    "{:?}",
                    &eq.q[7 * b..7 * b + 3]
                );
            }
            let norm: f64 = eq.q[7 * b + 3..7 * b + 7].iter().map(|x| x * x).sum();
            assert!((norm.sqrt() - 1.0).abs() < 1e-14);
        }
        // |λ| of the joints' three rows: the weights they carry
        let carried = |j: usize| {
            eq.lambda[3 * j..3 * j + 3]
                .iter()
                .map(|x| x * x)
                .sum::<f64>()
                .sqrt()
        };
        assert!((carried(0) - 2.0 * 9.81).abs() < 1e-8, "{}", carried(0));
        assert!((carried(1) - 9.81).abs() < 1e-8, "{}", carried(1));
        assert!(eq.force_residual < 1e-8 && eq.constraint_residual < 1e-10);
        assert_ne!(eq.stability(), "unstable");
        // the sparse path takes the quaternions too (Newton in velocity
        // space on the sparse KKT, q moved by q ⊞ Δq) and ends at the same
        // equilibrium with the same reactions and stiffness range
        let sparse = static_equilibrium_using(&sys, 0.0, &q0, Some(true)).unwrap();
        let dense = static_equilibrium_using(&sys, 0.0, &q0, Some(false)).unwrap();
        for b in 0..2 {
            // the same pose: positions, and the quaternions up to sign
            let (pd, ps) = (&dense.q[7 * b..7 * b + 7], &sparse.q[7 * b..7 * b + 7]);
            for k in 0..3 {
                assert!((pd[k] - ps[k]).abs() < 1e-10, "{pd:?} vs {ps:?}");
            }
            let dot: f64 = (3..7).map(|k| pd[k] * ps[k]).sum();
            assert!(1.0 - dot.abs() < 1e-12, "{pd:?} vs {ps:?}");
            let norm: f64 = ps[3..].iter().map(|x| x * x).sum();
            assert!((norm.sqrt() - 1.0).abs() < 1e-14);
        }
        for (a, b) in dense.lambda.iter().zip(&sparse.lambda) {
            assert!((a - b).abs() < 1e-10 * (1.0 + a.abs()), "{a} vs {b}");
        }
        assert!(sparse.force_residual < 1e-8 && sparse.constraint_residual < 1e-10);
        assert_eq!(sparse.stability(), dense.stability());
        assert!(
            (dense.max_reduced_stiffness - sparse.max_reduced_stiffness).abs()
                < 1e-6 * dense.max_reduced_stiffness,
            "{dense:?} {sparse:?}"
        );
    }

    /// A spatial body held by a fixed joint and a free one: the free one
    /// is named with its tangent direction (velocity index 8 is
    /// `loose.z`, where the position labels of 7 a body would say
    /// `loose.y`), on both paths.
    #[test]
    fn a_free_spatial_body_has_no_support_in_z_on_both_paths() {
        let text = r#"
[model]
space = "spatial"
gravity = [0.0, 0.0, -9.81]

[[bodies]]
name = "anchor"
mass = 1.0
inertia = [0.1, 0.1, 0.1]
position = [0.0, 0.0, 0.0]

[[bodies]]
name = "loose"
mass = 2.0
inertia = [0.1, 0.1, 0.1]
position = [3.0, 0.0, 1.0]

[[joints]]
name = "weld"
type = "fixed"
body1 = "ground"
body2 = "anchor"
"#;
        let model = jounce_model::from_str(text, "loose.toml").unwrap();
        let sys = jounce_mechanics::SpatialSystem::from_model(&model).unwrap();
        let (q0, _) = sys.initial_state();
        for sparse in [false, true] {
            match static_equilibrium_using(&sys, 0.0, &q0, Some(sparse)) {
                Err(StaticError::NoSupport {
                    what,
                    direction,
                    load,
                }) => {
                    assert_eq!(what, "body 'loose'", "sparse: {sparse}");
                    assert_eq!(direction, "z", "sparse: {sparse}");
                    assert!((load - 2.0 * 9.81).abs() < 1e-6, "sparse: {sparse}: {load}");
                }
                other => panic!("sparse: {sparse}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_body_in_free_fall_has_no_support_in_y() {
        let sys = system(
            r#"
[model]
name = "free fall"
[[bodies]]
name = "ball"
mass = 2
inertia = 0.1
position = [0.0, 1.0]
[settings]
t_end = 1.0
"#,
        );
        let e = static_equilibrium(&sys, 0.0, &sys.initial_q()).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("no static equilibrium: body 'ball' has no support in y"),
            "{e}"
        );
    }

    #[test]
    fn a_pendulum_released_horizontally_hangs_down() {
        // a rod of length 2 pinned at its end at the origin; K_T is singular
        // where it starts (horizontal), so the regularised steps carry it
        let sys = system(
            r#"
[model]
name = "pendulum"
[[bodies]]
name = "rod"
mass = 1
inertia = 0.3333333333333333
position = [1.0, 0.0]
points = { end = [-1.0, 0.0] }
[[joints]]
name = "pin"
type = "revolute"
body1 = "ground"
point1 = [0.0, 0.0]
body2 = "rod"
point2 = "end"
[settings]
t_end = 1.0
"#,
        );
        let eq = static_equilibrium(&sys, 0.0, &sys.initial_q()).unwrap();
        let q = &eq.q;
        assert!(q[0].abs() < 1e-9 && (q[1] + 1.0).abs() < 1e-9, "{q:?}");
        assert!((q[2] + std::f64::consts::FRAC_PI_2).abs() < 1e-9, "{q:?}");
        assert!(eq.load_steps == 0, "{eq:?}");
        // the pin carries the weight: Φ_qᵀλ = Q, λ_y = −m g in the y row
        assert!((eq.lambda[1] + 9.81).abs() < 1e-9 || (eq.lambda[1] - 9.81).abs() < 1e-9);
        assert_eq!(eq.stability(), "stable");
    }

    /// The N-link chain of `tests/suite/scale.rs`: links of 1 kg and 1 m in a
    /// horizontal line, pinned to each other and the first to the ground.
    pub(crate) fn chain(n: usize) -> String {
        let mut s = String::from(
            "[model]\nname = \"chain\"\ngravity = [0.0, -9.81]\n[settings]\nt_end = 1.0\n",
        );
        for i in 0..n {
            s += &format!(
                "[[bodies]]\nname = \"link{i}\"\nmass = 1.0\ninertia = 0.08333333333333333\nposition = [{}, 0.0]\n",
                i as f64 + 0.5
            );
        }
        for i in 0..n {
            let a = if i == 0 {
                "body1 = \"ground\"\npoint1 = [0.0, 0.0]".to_string()
            } else {
                format!("body1 = \"link{}\"\npoint1 = [0.5, 0.0]", i - 1)
            };
            s += &format!(
                "[[joints]]\nname = \"pin{i}\"\ntype = \"revolute\"\n{a}\nbody2 = \"link{i}\"\npoint2 = [-0.5, 0.0]\n"
            );
        }
        s
    }

    #[test]
    fn the_sparse_path_finds_the_dense_paths_equilibrium_of_a_chain() {
        // a 30-link chain released horizontally hangs straight down; the
        // sparse KKT factorisation takes the same Newton, pseudo-transient
        // and load steps as the dense SVD, so both end at the same pose
        let sys = system(&chain(30));
        let q0 = sys.initial_q();
        let dense = static_equilibrium_using(&sys, 0.0, &q0, Some(false)).unwrap();
        let sparse = static_equilibrium_using(&sys, 0.0, &q0, Some(true)).unwrap();
        for i in 0..30 {
            let (x, y, th) = (sparse.q[3 * i], sparse.q[3 * i + 1], sparse.q[3 * i + 2]);
            assert!(x.abs() < 1e-9, "link {i}: x = {x}");
            assert!((y + i as f64 + 0.5).abs() < 1e-9, "link {i}: y = {y}");
            let d = (th + std::f64::consts::FRAC_PI_2).rem_euclid(std::f64::consts::TAU);
            assert!(
                d.min(std::f64::consts::TAU - d) < 1e-9,
                "link {i}: θ = {th}"
            );
        }
        for (a, b) in dense.q.iter().zip(&sparse.q) {
            assert!((a - b).abs() < 1e-9, "{a} vs {b}");
        }
        for (a, b) in dense.lambda.iter().zip(&sparse.lambda) {
            assert!((a - b).abs() < 1e-7 * (1.0 + a.abs()), "{a} vs {b}");
        }
        assert_eq!(dense.stability(), "stable");
        assert_eq!(sparse.stability(), "stable");
        assert!(
            (dense.min_reduced_stiffness - sparse.min_reduced_stiffness).abs()
                < 1e-6 * dense.min_reduced_stiffness,
            "{dense:?} {sparse:?}"
        );
        assert!(
            (dense.max_reduced_stiffness - sparse.max_reduced_stiffness).abs()
                < 1e-3 * dense.max_reduced_stiffness,
            "{dense:?} {sparse:?}"
        );
    }

    /// An N-link chain hanging straight down with its last link standing
    /// upright on the one below: an equilibrium with one unstable direction
    /// among N − 1 stable ones, the least of which is much smaller in
    /// modulus than the unstable one.
    fn chain_with_its_last_link_upright(n: usize) -> String {
        hanging_chain(n, true)
    }

    /// An N-link chain hanging straight down (its last link upright when
    /// `upright_last`).
    fn hanging_chain(n: usize, upright_last: bool) -> String {
        let mut s = chain(n);
        for i in 0..n {
            let (y, angle) = if i + 1 < n || !upright_last {
                (-(i as f64) - 0.5, -std::f64::consts::FRAC_PI_2)
            } else {
                (-(i as f64) + 0.5, std::f64::consts::FRAC_PI_2)
            };
            s = s.replacen(
                &format!("position = [{}, 0.0]\n", i as f64 + 0.5),
                &format!("position = [0.0, {y}]\nangle = {angle}\n"),
                1,
            );
        }
        s
    }

    #[test]
    fn the_sparse_path_counts_an_unstable_direction_hidden_among_stable_ones() {
        // the least |κ| of the reduced stiffness is a slow stable mode of the
        // hanging part; the upright link's negative κ is larger in modulus,
        // so only the inertia count of the sparse path finds it
        let sys = system(&chain_with_its_last_link_upright(30));
        let q0 = sys.initial_q();
        let dense = static_equilibrium_using(&sys, 0.0, &q0, Some(false)).unwrap();
        let sparse = static_equilibrium_using(&sys, 0.0, &q0, Some(true)).unwrap();
        assert!(dense.q.iter().zip(&q0).all(|(a, b)| (a - b).abs() < 1e-9));
        assert_eq!(dense.stability(), "unstable", "{dense:?}");
        assert_eq!(sparse.stability(), "unstable", "{sparse:?}");
        assert!(
            (dense.min_reduced_stiffness - sparse.min_reduced_stiffness).abs()
                < 1e-6 * dense.max_reduced_stiffness,
            "least κ: dense {} sparse {}",
            dense.min_reduced_stiffness,
            sparse.min_reduced_stiffness
        );
    }

    #[test]
    fn the_sparse_path_names_a_body_without_support() {
        // the dense path's free-fall diagnosis, on the sparse path: a
        // hanging chain with one more body that nothing holds (a chain
        // released horizontally has no stiffness either at its start:
        // its reactions are vertical, its arms horizontal)
        let loose =
            "[[bodies]]\nname = \"loose\"\nmass = 2.0\ninertia = 0.1\nposition = [40.0, 3.0]\n";
        let sys = system(&(hanging_chain(5, false) + loose));
        let q0 = sys.initial_q();
        for sparse in [false, true] {
            match static_equilibrium_using(&sys, 0.0, &q0, Some(sparse)) {
                Err(StaticError::NoSupport {
                    what,
                    direction,
                    load,
                }) => {
                    assert_eq!(what, "body 'loose'", "sparse: {sparse}");
                    assert_eq!(direction, "y", "sparse: {sparse}");
                    assert!(
                        (load - 2.0 * 9.81).abs() < 1e-6,
                        "sparse: {sparse}: load {load}"
                    );
                }
                other => panic!("sparse: {sparse}: {other:?}"),
            }
        }
    }
}
