//! The augmented (KKT) system of constrained dynamics, assembled and
//! solved on preallocated storage, and the diagnosis of its singularity.
//!
//! ```text
//! [ M(q)   Φ_qᵀ ] [ a ]   [ r₁ ]
//! [ Φ_q    0    ] [ λ ] = [ r₂ ]
//! ```
//!
//! With r₁ = Q(t, q, v) and r₂ = γ − 2α(Φ_q v + Φ_t) − β²Φ this is the
//! index-1 augmented form with Baumgarte stabilisation (Baumgarte 1972;
//! chandramouli slides "Stabilization Scheme"; jalon-bayo ch. 7, eq. 7.46).
//! The matrix is symmetric indefinite; it is regular when Φ_q has full row
//! rank and M is positive definite on the null space of Φ_q, which holds
//! for point masses with zero rotational inertia (studies.md S1).
//!
//! Two ways to solve it ([`LinearSolver`]):
//! * **sparse** (the range-space method, [`GramFactor`]): when M is
//!   diagonal and regular (planar body coordinates with positive masses
//!   and inertias), λ from the sparse Schur complement
//!   S = Φ_q M⁻¹ Φ_qᵀ,  S λ = Φ_q M⁻¹ r₁ − r₂,  then a = M⁻¹ (r₁ − Φ_qᵀ λ).
//!   S has the pattern of joints sharing a body; its ordering and symbolic
//!   factorisation are computed once, each factorisation is O(N) on a chain.
//! * **reduced** (under `auto`, small systems with a diagonal M that may
//!   be singular, `reduced_kkt.rs`): the coordinates with inertia
//!   eliminated, a dense system of order m + n_z (n_z massless
//!   coordinates) by LU with partial pivoting — S1's 10 × 10 KKT matrix
//!   becomes 6 × 6.
//! * **dense**: the whole KKT matrix by LU with full pivoting, which also
//!   handles a singular M (S1's point masses).
//!
//! When the sparse or reduced factorisation meets a vanishing pivot (Φ_q
//! rank deficient) the dense path is taken for that call, so the same
//! rank-revealing factorisation names the redundant constraints.

use jounce_integrate::EvalError;
use jounce_mechanics::{
    GramFactor, MechanicalSystem, Quantities, SparseMatrix, SystemData, SystemQueries,
};
use nalgebra::DMatrix;

use crate::linear_solver::LinearSolver;
use crate::lu::FullPivLu;
use crate::reduced_kkt::ReducedKkt;

/// Pivots below this fraction of the largest one count as zero.
pub(crate) const PIVOT_TOL: f64 = 1e-13;

/// Pivots of Φ_q M⁻¹ Φ_qᵀ below this fraction of their diagonal entry send
/// the factorisation to the dense path (where PIVOT_TOL decides).
const SCHUR_PIVOT_TOL: f64 = 1e-10;

/// `auto` uses the sparse path only when the smallest diagonal entry of M
/// is at least this fraction of the largest (a well-scaled M⁻¹).
const AUTO_MASS_RATIO: f64 = 1e-8;

/// `auto` uses the sparse path from this many coordinates n_v on: below,
/// the dense factorisation of the small KKT matrix is as fast.
pub const AUTO_SPARSE_MIN_COORDINATES: usize = 6;

/// `auto` sets up the reduced dense path for diagonal mass matrices up to
/// this order n + m (its buffers are (n + m)²).
const REDUCED_MAX_ORDER: usize = 400;

/// Which factorisation the last [`Kkt::factor_loaded`] produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Path {
    /// Full KKT matrix, LU with full pivoting.
    Dense,
    /// Multipliers and massless coordinates (`reduced_kkt.rs`).
    Reduced,
    /// Sparse Schur complement.
    Sparse,
}

/// The sparse path: Φ_q M⁻¹ Φ_qᵀ and M⁻¹.
#[derive(Clone, Debug)]
struct Schur {
    gram: GramFactor,
    /// Diagonal of M⁻¹ (len n), refreshed with M.
    minv: Vec<f64>,
}

/// KKT matrix, its factors and the system's workspace ([`SystemData`]:
/// M, Q, Φ, Φ_q, Φ', γ of the last evaluation).
#[derive(Clone, Debug)]
pub(crate) struct Kkt {
    pub n: usize,
    pub m: usize,
    /// The system's quantities at the last evaluated state.
    pub data: SystemData,
    choice: LinearSolver,
    lu: FullPivLu,
    /// Set up when the system's M is diagonal and the choice allows it.
    schur: Option<Schur>,
    /// Set up under `auto` for small systems with a diagonal M.
    reduced: Option<ReducedKkt>,
    /// Diagonal of M (diagonal systems), and whether it is current for a
    /// constant M.
    mass_diag: Vec<f64>,
    mass_diag_current: bool,
    /// Every diagonal entry > 0; and within AUTO_MASS_RATIO of the largest.
    mass_positive: bool,
    mass_well_scaled: bool,
    /// The factorisation in the buffers.
    path: Path,
    /// Right-hand side on entry to [`Kkt::solve`], [a; λ] on exit.
    pub sol: Vec<f64>,
    work: Vec<f64>,
}

impl Kkt {
    /// Storage for `sys` (n = n_v velocities, m rows), linear solver
    /// chosen automatically.
    pub fn new<S: MechanicalSystem + ?Sized>(sys: &S) -> Self {
        Self::with_solver(sys, LinearSolver::Auto)
    }

    /// Storage for `sys` with the linear solver `choice`.
    pub fn with_solver<S: MechanicalSystem + ?Sized>(sys: &S, choice: LinearSolver) -> Self {
        let data = sys.data();
        let (n, m) = (data.nv, data.nc);
        let schur = (choice != LinearSolver::Dense
            && sys.mass_matrix_is_diagonal()
            && m > 0
            && (choice == LinearSolver::Sparse || n >= AUTO_SPARSE_MIN_COORDINATES))
            .then(|| Schur {
                gram: GramFactor::new(&data.constraint_jacobian),
                minv: vec![0.0; n],
            });
        let diagonal = sys.mass_matrix_is_diagonal();
        let reduced = (choice == LinearSolver::Auto && diagonal && n + m <= REDUCED_MAX_ORDER)
            .then(|| ReducedKkt::new(n, m));
        // the dense factors are allocated for the fallback of large systems
        // only when first needed (cold path)
        let dense = if schur.is_some() || reduced.is_some() {
            0
        } else {
            n + m
        };
        Self {
            n,
            m,
            data,
            choice,
            lu: FullPivLu::new(dense, dense),
            schur,
            reduced,
            mass_diag: vec![0.0; if diagonal { n } else { 0 }],
            mass_diag_current: false,
            mass_positive: false,
            mass_well_scaled: false,
            path: Path::Dense,
            sol: vec![0.0; n + m],
            work: vec![0.0; 2 * (n + m)],
        }
    }

    /// The linear solver asked for.
    pub fn choice(&self) -> LinearSolver {
        self.choice
    }

    /// Whether the last factorisation took the sparse path.
    pub fn is_sparse(&self) -> bool {
        self.path == Path::Sparse
    }

    /// Why the sparse path cannot be used for the M in the buffers
    /// (`None`: it can): M not diagonal, a diagonal entry not positive, or
    /// (under `auto`) badly scaled.
    pub fn sparse_unavailable<S: MechanicalSystem + ?Sized>(&self, sys: &S) -> Option<String> {
        if self.schur.is_none() {
            return Some(if self.m == 0 {
                "the system has no constraints".into()
            } else {
                "its mass matrix is not diagonal".into()
            });
        }
        let mut hi: f64 = 0.0;
        for i in 0..self.n {
            hi = hi.max(self.data.mass(i, i));
        }
        for i in 0..self.n {
            let d = self.data.mass(i, i);
            if !(d.is_finite() && d > 0.0) {
                return Some(format!(
                    "coordinate {} has mass or inertia {d} (the sparse solver needs M positive definite)",
                    sys.coordinate_label(i)
                ));
            }
            if self.choice == LinearSolver::Auto && d < AUTO_MASS_RATIO * hi {
                return Some(format!(
                    "coordinate {} has mass or inertia {d:e}, below {AUTO_MASS_RATIO:e} of the largest",
                    sys.coordinate_label(i)
                ));
            }
        }
        None
    }

    /// Evaluate M(q) and Φ_q(t, q) and factor the KKT matrix.
    ///
    /// # Errors
    /// [`EvalError::Singular`] naming the redundant constraints or the
    /// coordinates with neither inertia nor constraint.
    pub fn factor<S: MechanicalSystem + ?Sized>(
        &mut self,
        sys: &S,
        t: f64,
        q: &[f64],
    ) -> Result<(), EvalError> {
        sys.evaluate(
            &mut self.data,
            t,
            q,
            &[],
            Quantities::MASS_MATRIX | Quantities::CONSTRAINT_JACOBIAN,
        );
        self.factor_loaded(sys, t)
    }

    /// Factor the KKT matrix of the M and Φ_q already in the buffers:
    /// sparse when set up and M allows it, dense otherwise or when the
    /// sparse factorisation meets a vanishing pivot.
    pub fn factor_loaded<S: MechanicalSystem + ?Sized>(
        &mut self,
        sys: &S,
        t: f64,
    ) -> Result<(), EvalError> {
        let n = self.n;
        if self.mass_diag.len() == n && (self.schur.is_some() || self.reduced.is_some()) {
            if !(self.mass_diag_current && sys.mass_matrix_is_constant()) {
                let mut hi: f64 = 0.0;
                let mut positive = true;
                for i in 0..n {
                    let d = self.data.mass(i, i);
                    self.mass_diag[i] = d;
                    positive &= d.is_finite() && d > 0.0;
                    hi = hi.max(d);
                }
                self.mass_positive = positive;
                self.mass_well_scaled =
                    positive && self.mass_diag.iter().all(|&d| d >= AUTO_MASS_RATIO * hi);
                if let Some(schur) = self.schur.as_mut() {
                    for i in 0..n {
                        schur.minv[i] = 1.0 / self.mass_diag[i];
                    }
                }
                if let Some(red) = self.reduced.as_mut() {
                    red.set_mass(&self.mass_diag);
                }
                self.mass_diag_current = true;
            }
            let sparse_ok = self.mass_positive
                && (self.choice == LinearSolver::Sparse || self.mass_well_scaled);
            if let (true, Some(schur)) = (sparse_ok, self.schur.as_mut()) {
                if schur
                    .gram
                    .factor(&self.data.constraint_jacobian, &schur.minv, SCHUR_PIVOT_TOL)
                    .is_ok()
                {
                    self.path = Path::Sparse;
                    return Ok(());
                }
            }
            if let Some(red) = self.reduced.as_mut() {
                if (self.mass_well_scaled || !self.mass_positive)
                    && red.factor(&self.data.constraint_jacobian)
                {
                    self.path = Path::Reduced;
                    return Ok(());
                }
            }
        }
        self.path = Path::Dense;
        self.factor_dense(sys, t)
    }

    /// The whole KKT matrix by LU with full pivoting.
    fn factor_dense<S: MechanicalSystem + ?Sized>(
        &mut self,
        sys: &S,
        t: f64,
    ) -> Result<(), EvalError> {
        let (n, m) = (self.n, self.m);
        if self.lu.rows() != n + m {
            self.lu = FullPivLu::new(n + m, n + m);
        }
        self.lu.clear();
        for i in 0..n {
            for j in 0..n {
                self.lu.set(i, j, self.data.mass(i, j));
            }
        }
        let jac = &self.data.constraint_jacobian;
        for i in 0..m {
            let (cols, vals) = jac.row(i);
            for (&j, &v) in cols.iter().zip(vals) {
                self.lu.set(n + i, j, v);
                self.lu.set(j, n + i, v);
            }
        }
        self.lu.factor(PIVOT_TOL);
        if !self.lu.is_regular() {
            return Err(EvalError::Singular {
                what: "augmented (KKT) matrix [M Φ_qᵀ; Φ_q 0]".into(),
                t,
                detail: diagnose(
                    sys,
                    &self.data.mass_dense(),
                    &self.data.constraint_jacobian,
                    0.0,
                ),
            });
        }
        Ok(())
    }

    /// Solve with the current factors: `sol` holds [r₁; r₂] on entry and
    /// [a; λ] on exit.
    pub fn solve(&mut self) {
        let mut sol = std::mem::take(&mut self.sol);
        let mut work = std::mem::take(&mut self.work);
        self.solve_other(&mut sol, &mut work);
        self.sol = sol;
        self.work = work;
    }

    /// Solve with the current factors for another right-hand side `b`
    /// (len n + m), in place; `work` is scratch of length 2 (n + m).
    ///
    /// The sparse path adds one step of iterative refinement on the whole
    /// KKT system (x ← x + K⁻¹(b − K x), Higham, *Accuracy and Stability of
    /// Numerical Algorithms*, 2nd ed., ch. 12): the Schur complement
    /// squares the conditioning of Φ_q, one refinement step brings the
    /// result back to the accuracy of the dense LU of K.
    pub fn solve_other(&self, b: &mut [f64], work: &mut [f64]) {
        let (n, m) = (self.n, self.m);
        let schur = match (self.path, self.schur.as_ref(), self.reduced.as_ref()) {
            (Path::Sparse, Some(schur), _) => schur,
            (Path::Reduced, _, Some(red)) => {
                red.solve(b, work);
                return;
            }
            _ => {
                self.lu.solve_in_place(b, &mut work[..n + m]);
                return;
            }
        };
        let (res, rest) = work.split_at_mut(n + m);
        res.copy_from_slice(b);
        self.schur_solve(schur, b, rest);
        // res = b − K x
        let jac = &self.data.constraint_jacobian;
        let (x_a, x_l) = b.split_at(n);
        let (r1, r2) = res.split_at_mut(n);
        for j in 0..n {
            r1[j] -= self.mass_diag[j] * x_a[j];
        }
        let ft = &mut rest[..n];
        ft.iter_mut().for_each(|x| *x = 0.0);
        jac.tr_mul_add(x_l, ft);
        for j in 0..n {
            r1[j] -= ft[j];
        }
        for i in 0..m {
            let (cols, vals) = jac.row(i);
            let mut s = 0.0;
            for (&j, &v) in cols.iter().zip(vals) {
                s += v * x_a[j];
            }
            r2[i] -= s;
        }
        self.schur_solve(schur, res, rest);
        for (x, d) in b.iter_mut().zip(res.iter()) {
            *x += d;
        }
    }

    /// [a; λ] from [r₁; r₂] in place by the Schur complement; `work` len
    /// ≥ max(n, m).
    fn schur_solve(&self, schur: &Schur, b: &mut [f64], work: &mut [f64]) {
        let (n, m) = (self.n, self.m);
        let jac = &self.data.constraint_jacobian;
        let (r1, r2) = b.split_at_mut(n);
        // Φ_q M⁻¹ r₁ − r₂ into r₂, then λ = S⁻¹ (…)
        for i in 0..m {
            let (cols, vals) = jac.row(i);
            let mut s = -r2[i];
            for (&j, &v) in cols.iter().zip(vals) {
                s += v * schur.minv[j] * r1[j];
            }
            r2[i] = s;
        }
        schur.gram.solve_in_place(r2, &mut work[..m]);
        // a = M⁻¹ (r₁ − Φ_qᵀ λ)
        let ft = &mut work[..n];
        ft.iter_mut().for_each(|x| *x = 0.0);
        jac.tr_mul_add(r2, ft);
        for j in 0..n {
            r1[j] = (r1[j] - ft[j]) * schur.minv[j];
        }
    }

    /// Accelerations a and multipliers λ of the index-1 equations with
    /// Baumgarte parameters (α, β) (0, 0 = none) at (t, q, v), into
    /// `sol` = [a; λ].
    pub fn accelerations<S: MechanicalSystem + ?Sized>(
        &mut self,
        sys: &S,
        t: f64,
        q: &[f64],
        v: &[f64],
        alpha: f64,
        beta: f64,
    ) -> Result<(), EvalError> {
        let mut what = Quantities::EQUATIONS_OF_MOTION;
        if alpha != 0.0 || beta != 0.0 {
            what |= Quantities::CONSTRAINTS | Quantities::VELOCITY_CONSTRAINTS;
        }
        sys.evaluate(&mut self.data, t, q, v, what);
        self.factor_loaded(sys, t)?;
        let n = self.n;
        let d = &self.data;
        self.sol[..n].copy_from_slice(&d.forces);
        self.sol[n..].copy_from_slice(&d.gamma);
        if alpha != 0.0 || beta != 0.0 {
            for (i, s) in self.sol[n..].iter_mut().enumerate() {
                *s -= 2.0 * alpha * d.velocity_constraints[i] + beta * beta * d.constraints[i];
            }
        }
        self.solve();
        Ok(())
    }
}

/// Why [M Φ_qᵀ; Φ_q 0] (or M + αΦ_qᵀΦ_q) is singular ([`singularity`]):
/// the text only.
pub(crate) fn diagnose<S: MechanicalSystem + ?Sized>(
    sys: &S,
    mass: &DMatrix<f64>,
    jac: &SparseMatrix,
    alpha: f64,
) -> String {
    singularity(sys, mass, jac, alpha).detail
}

/// What [`singularity`] found.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Singularity {
    /// Φ_q has rank `.0` < `.1` rows (redundant or conflicting
    /// constraints), if so.
    pub jacobian_rank: Option<(usize, usize)>,
    /// The diagnosis, naming elements.
    pub detail: String,
}

/// Why [M Φ_qᵀ; Φ_q 0] (or M + αΦ_qᵀΦ_q with `alpha` > 0 meaning the
/// penalty matrix) is singular, naming elements: first the rank of Φ_q
/// (redundant constraint rows), then the coordinates along which M has no
/// inertia and no constraint acts (the columns left over by full pivoting
/// of M + s·Φ_qᵀΦ_q with s scaled to M). Cold path: allocates.
pub(crate) fn singularity<S: MechanicalSystem + ?Sized>(
    sys: &S,
    mass: &DMatrix<f64>,
    jac: &SparseMatrix,
    alpha: f64,
) -> Singularity {
    let jac = &jac.to_dense();
    let (m, n) = (jac.nrows(), jac.ncols());
    let mut parts = Vec::new();
    // rank of Φ_q: full pivoting of Φ_q itself, rows left over are redundant
    let mut lj = FullPivLu::new(m, n);
    lj.load(jac);
    let r = lj.factor(PIVOT_TOL);
    if r < m {
        let rows: Vec<String> = (r..m).map(|k| sys.constraint_label(lj.row_at(k))).collect();
        parts.push(format!(
            "constraint Jacobian has rank {r} < {m}: redundant or conflicting constraint(s) {}",
            rows.join(", ")
        ));
    }
    // coordinates with neither inertia nor constraint
    let mscale = mass.iter().fold(0.0f64, |a, b| a.max(b.abs())).max(1e-300);
    let jscale = jac.iter().fold(0.0f64, |a, b| a.max(b.abs())).max(1e-300);
    let s = if alpha > 0.0 {
        alpha
    } else {
        mscale / (jscale * jscale)
    };
    let mut lm = FullPivLu::new(n, n);
    for i in 0..n {
        for j in 0..n {
            let mut v = mass[(i, j)];
            for k in 0..m {
                v += s * jac[(k, i)] * jac[(k, j)];
            }
            lm.set(i, j, v);
        }
    }
    let rm = lm.factor(PIVOT_TOL);
    if rm < n {
        let cols: Vec<String> = (rm..n)
            .map(|k| sys.coordinate_label(lm.col_at(k)))
            .collect();
        parts.push(format!(
            "no inertia and no constraint along coordinate(s) {}",
            cols.join(", ")
        ));
    }
    let zero: Vec<String> = (0..n)
        .filter(|&i| mass[(i, i)].abs() <= 1e-14 * mscale)
        .map(|i| sys.coordinate_label(i))
        .collect();
    if !zero.is_empty() {
        parts.push(format!(
            "coordinates with zero inertia: {}",
            zero.join(", ")
        ));
    }
    let detail = if parts.is_empty() {
        "numerically singular; check units and scaling of the model".into()
    } else {
        parts.join("; ")
    };
    Singularity {
        jacobian_rank: (r < m).then_some((r, m)),
        detail,
    }
}

/// Largest |Φ_i| and the label of its row.
pub(crate) fn worst_row<S: MechanicalSystem + ?Sized>(sys: &S, r: &[f64]) -> (f64, String) {
    let mut k = 0;
    for i in 0..r.len() {
        if r[i].abs() > r[k].abs() {
            k = i;
        }
    }
    if r.is_empty() {
        (0.0, String::new())
    } else {
        (r[k].abs(), sys.constraint_label(k))
    }
}
