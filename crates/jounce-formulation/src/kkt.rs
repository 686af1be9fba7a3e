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
//! for point masses with zero rotational inertia (studies.md S1), so it is
//! factored by LU with full pivoting and never through M⁻¹.

use jounce_integrate::EvalError;
use jounce_mechanics::{MechanicalSystem, Quantities, SystemData};
use nalgebra::DMatrix;

use crate::lu::FullPivLu;

/// Pivots below this fraction of the largest one count as zero.
pub(crate) const PIVOT_TOL: f64 = 1e-13;

/// KKT matrix, its factors and the system's workspace ([`SystemData`]:
/// M, Q, Φ, Φ_q, Φ', γ of the last evaluation).
#[derive(Clone, Debug)]
pub(crate) struct Kkt {
    pub n: usize,
    pub m: usize,
    /// The system's quantities at the last evaluated state.
    pub data: SystemData,
    lu: FullPivLu,
    /// Right-hand side on entry to [`Kkt::solve`], [a; λ] on exit.
    pub sol: Vec<f64>,
    work: Vec<f64>,
}

impl Kkt {
    /// Storage for `sys` (n = n_v velocities, m rows).
    pub fn new<S: MechanicalSystem + ?Sized>(sys: &S) -> Self {
        let data = sys.data();
        let (n, m) = (data.nv, data.nc);
        Self {
            n,
            m,
            data,
            lu: FullPivLu::new(n + m, n + m),
            sol: vec![0.0; n + m],
            work: vec![0.0; n + m],
        }
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

    /// Factor the KKT matrix of the M and Φ_q already in the buffers.
    pub fn factor_loaded<S: MechanicalSystem + ?Sized>(
        &mut self,
        sys: &S,
        t: f64,
    ) -> Result<(), EvalError> {
        let (n, m) = (self.n, self.m);
        self.lu.clear();
        for i in 0..n {
            for j in 0..n {
                self.lu.set(i, j, self.data.mass_matrix[(i, j)]);
            }
        }
        for i in 0..m {
            for j in 0..n {
                let v = self.data.constraint_jacobian[(i, j)];
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
                    &self.data.mass_matrix,
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
        self.lu.solve_in_place(&mut self.sol, &mut self.work);
    }

    /// Solve with the current factors for another right-hand side `b`
    /// (len n + m), in place; `work` is scratch of the same length.
    pub fn solve_other(&self, b: &mut [f64], work: &mut [f64]) {
        self.lu.solve_in_place(b, work);
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

/// Why [M Φ_qᵀ; Φ_q 0] (or M + αΦ_qᵀΦ_q with `alpha` > 0 meaning the
/// penalty matrix) is singular, naming elements: first the rank of Φ_q
/// (redundant constraint rows), then the coordinates along which M has no
/// inertia and no constraint acts (the columns left over by full pivoting
/// of M + s·Φ_qᵀΦ_q with s scaled to M). Cold path: allocates.
pub(crate) fn diagnose<S: MechanicalSystem + ?Sized>(
    sys: &S,
    mass: &DMatrix<f64>,
    jac: &DMatrix<f64>,
    alpha: f64,
) -> String {
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
    if parts.is_empty() {
        "numerically singular; check units and scaling of the model".into()
    } else {
        parts.join("; ")
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
