//! Forward dynamics with closure constraints (cut joints and drivers):
//! the KKT system in joint coordinates
//!
//! ```text
//! [ M(q)  Φ_qᵀ ] [ q'' ]   [ f(t, q, v) ]
//! [ Φ_q   0    ] [ λ   ] = [ γ(t, q, v) ]
//! ```
//!
//! (jalon-bayo ch. 3 and 4 in relative coordinates; termeer 1996), with M
//! by the composite-rigid-body algorithm, f = Q − C by recursive
//! Newton–Euler, Φ_q by first-order duals through forward kinematics
//! (column by column) and γ = −d²Φ(t + s, q + v s)/ds² by second-order
//! duals, all generic over the scalar so that the same code, run in dual
//! numbers, gives the exact ∂q''/∂q and ∂q''/∂v. The dense system (these
//! are small) is solved by Gaussian elimination with partial pivoting
//! (Golub & Van Loan, Algorithm 3.4.1).

use num_dual::{Dual, Dual2};

use crate::kinematics::Scalar;

use super::planar_joint::PlanarJointSystem;
use super::system::JointSpaceError;
use super::work::TreeWork;

/// Relative pivot size below which the KKT matrix counts as singular.
const PIVOT_TOL: f64 = 1e-13;

/// Buffers of one KKT evaluation in scalar D.
#[derive(Clone, Debug)]
pub(crate) struct KktWork<D: Scalar> {
    /// Tree recursions (q, v in; CRBA and RNEA buffers).
    pub tree: TreeWork<D>,
    /// Row-major M (n × n).
    mass: Vec<D>,
    /// Row-major Φ_q (m × n).
    jac: Vec<D>,
    /// Row-major KKT matrix ((n + m)²).
    kkt: Vec<D>,
    /// Right-hand side [f; γ], then the solution [q''; λ].
    pub sol: Vec<D>,
    /// Node poses in first-order duals over D (Φ_q).
    pose1: Vec<[Dual<D>; 3]>,
    /// Node poses in second-order duals over D (γ).
    pose2: Vec<[Dual2<D>; 3]>,
}

impl<D: Scalar> KktWork<D> {
    /// Buffers for n coordinates and m closure rows (empty when m = 0:
    /// trees use the articulated-body algorithm).
    pub fn new(n: usize, m: usize) -> Self {
        let (n, m) = if m == 0 { (0, 0) } else { (n, m) };
        let z = D::from(0.0);
        Self {
            tree: TreeWork::new(n),
            mass: vec![z; n * n],
            jac: vec![z; m * n],
            kkt: vec![z; (n + m) * (n + m)],
            sol: vec![z; n + m],
            pose1: vec![[Dual::from_re(z); 3]; n],
            pose2: vec![[Dual2::from_re(z); 3]; n],
        }
    }
}

impl PlanarJointSystem {
    /// q'' and λ into `w.sol` at (t, `w.tree.q`, `w.tree.v`), with the
    /// Baumgarte terms `baumgarte` = (α, β): the second rows read
    /// Φ_q q'' = γ − 2αΦ' − β²Φ, Φ and Φ' = dΦ/ds coming from the same
    /// second-order dual evaluation as γ.
    ///
    /// # Errors
    /// [`JointSpaceError::SingularClosure`] naming the closure constraints
    /// when the KKT matrix is singular (redundant cut joints, a singular
    /// configuration, or a joint that sees no inertia).
    pub(crate) fn kkt_dynamics<D: Scalar>(
        &self,
        t: f64,
        w: &mut KktWork<D>,
        baumgarte: [f64; 2],
    ) -> Result<(), JointSpaceError> {
        let n = self.tree.nodes.len();
        let m = self.closure_rows();
        let z = D::from(0.0);
        // f = −τ(q, v, q'' = 0)
        w.tree.a.iter_mut().for_each(|x| *x = z);
        self.rnea(t, &mut w.tree);
        for i in 0..n {
            w.sol[i] = -w.tree.a[i];
        }
        // M from the poses of the same kinematics pass
        self.crba(&mut w.tree, &mut w.mass);
        // Φ_q column by column
        let (q, v) = (&w.tree.q, &w.tree.v);
        for j in 0..n {
            self.pose_pass(
                |i| Dual::new(q[i], if i == j { D::from(1.0) } else { z }),
                &mut w.pose1,
            );
            let jac = &mut w.jac;
            self.closure_pass(
                t,
                &w.pose1,
                |f| Dual::from_re(D::from(f.0)),
                |r, x| jac[r * n + j] = x.eps,
            );
        }
        // γ = −d²Φ/ds² along (t + s, q + v s)
        self.pose_pass(|i| Dual2::new(q[i], v[i], z), &mut w.pose2);
        let sol = &mut w.sol;
        self.closure_pass(
            t,
            &w.pose2,
            |f| Dual2::new(D::from(f.0), D::from(f.1), D::from(f.2)),
            |r, x| {
                sol[n + r] =
                    -x.v2 - x.v1 * (2.0 * baumgarte[0]) - x.re * (baumgarte[1] * baumgarte[1])
            },
        );
        // KKT matrix
        let k = n + m;
        w.kkt.iter_mut().for_each(|x| *x = z);
        for i in 0..n {
            w.kkt[i * k..i * k + n].copy_from_slice(&w.mass[i * n..i * n + n]);
        }
        for r in 0..m {
            for j in 0..n {
                let x = w.jac[r * n + j];
                w.kkt[(n + r) * k + j] = x;
                w.kkt[j * k + n + r] = x;
            }
        }
        if !solve_in_place(&mut w.kkt, &mut w.sol, k) {
            let rows: Vec<String> = (0..m).map(|r| self.closure_label(r)).collect();
            return Err(JointSpaceError::SingularClosure(rows.join(", ")));
        }
        Ok(())
    }
}

/// Solve A x = b (A row-major k × k, overwritten; b becomes x) by Gaussian
/// elimination with partial pivoting; false when a pivot is below
/// [`PIVOT_TOL`] times the largest entry of A.
fn solve_in_place<D: Scalar>(a: &mut [D], b: &mut [D], k: usize) -> bool {
    let scale = a.iter().fold(0.0_f64, |s, x| s.max(x.re().abs()));
    if !(scale > 0.0) {
        return k == 0;
    }
    for c in 0..k {
        let (mut p, mut best) = (c, -1.0);
        for r in c..k {
            let x = a[r * k + c].re().abs();
            if x > best {
                (p, best) = (r, x);
            }
        }
        if !(best > PIVOT_TOL * scale) {
            return false;
        }
        if p != c {
            for j in 0..k {
                a.swap(c * k + j, p * k + j);
            }
            b.swap(c, p);
        }
        let piv = a[c * k + c];
        for r in c + 1..k {
            let l = a[r * k + c] / piv;
            if l.re() == 0.0 && l == D::from(0.0) {
                continue;
            }
            for j in c..k {
                let x = a[c * k + j];
                a[r * k + j] -= l * x;
            }
            let x = b[c];
            b[r] -= l * x;
        }
    }
    for r in (0..k).rev() {
        let mut s = b[r];
        for j in r + 1..k {
            s -= a[r * k + j] * b[j];
        }
        b[r] = s / a[r * k + r];
    }
    true
}
