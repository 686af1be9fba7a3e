//! Redundant rows on a hand-written system with a dense Φ_q (no sparsity
//! pattern): a point mass with Φ₁ = x − 1, Φ₂ = 2(x − 1) + e(t) (redundant;
//! consistent when e = 0) and Φ₃ = y − t (a driver). The independent-row
//! adapter presents rows 1 and 3, the minimum-norm multipliers are the
//! closed form λ = (a/5, 2a/5, b) for kept multipliers (a, b), and the
//! consistency test tells e = 0 from e = 10⁻³ and e = 10⁻³ t.

use jounce_mechanics::{
    assemble, redundant_consistency, IndependentRows, MechanicalSystem, MinimumNormReactions,
    Quantities, SystemQueries,
};
use nalgebra::DMatrix;

/// The point mass; `offset` and `drift` define e(t) = offset + drift t.
struct PointMass {
    offset: f64,
    drift: f64,
}

impl MechanicalSystem for PointMass {
    fn nq(&self) -> usize {
        2
    }
    fn nc(&self) -> usize {
        3
    }
    fn mass_matrix(&self, _q: &[f64], m: &mut DMatrix<f64>) {
        m.fill(0.0);
        m[(0, 0)] = 2.0;
        m[(1, 1)] = 2.0;
    }
    fn generalized_forces(&self, _t: f64, _q: &[f64], _v: &[f64], f: &mut [f64]) {
        f[0] = 0.0;
        f[1] = -19.62;
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
    }
    fn constraints(&self, t: f64, q: &[f64], phi: &mut [f64]) {
        phi[0] = q[0] - 1.0;
        phi[1] = 2.0 * (q[0] - 1.0) + self.offset + self.drift * t;
        phi[2] = q[1] - t;
    }
    fn constraint_jacobian(&self, _t: f64, _q: &[f64], jac: &mut DMatrix<f64>) {
        jac.fill(0.0);
        jac[(0, 0)] = 1.0;
        jac[(1, 0)] = 2.0;
        jac[(2, 1)] = 1.0;
    }
    fn constraint_time_derivative(&self, _t: f64, _q: &[f64], phi_t: &mut [f64]) {
        phi_t[0] = 0.0;
        phi_t[1] = self.drift;
        phi_t[2] = -1.0;
    }
    fn gamma(&self, _t: f64, _q: &[f64], _v: &[f64], gamma: &mut [f64]) {
        gamma.fill(0.0);
    }
    fn constraint_force_jacobian(
        &self,
        _t: f64,
        _q: &[f64],
        _lambda: &[f64],
        out: &mut DMatrix<f64>,
    ) {
        out.fill(0.0);
    }
    fn kinetic_energy(&self, _q: &[f64], v: &[f64]) -> f64 {
        v[0] * v[0] + v[1] * v[1]
    }
    fn potential_energy(&self, _t: f64, q: &[f64]) -> f64 {
        19.62 * q[1]
    }
    fn constraint_label(&self, row: usize) -> String {
        ["x", "twice x", "y driver"][row].into()
    }
    fn coordinate_label(&self, i: usize) -> String {
        ["p.x", "p.y"][i].into()
    }
    jounce_mechanics::test_system_core! {
        core: nv, position_derivative, integrate_position, position_increment,
            kinematic_map_derivative, manifold_constraints, data, evaluate, constraint_row_meaning, breakpoints;
        structure: jounce_mechanics::Structure {
            mass_matrix_is_constant: true,
            mass_matrix_is_diagonal: false,
        };
        absent: second_derivatives, sparsity, applied_loads, switching, friction, joint_coordinates;
    }
}

#[test]
fn dense_system_without_its_redundant_row() {
    let sys = PointMass {
        offset: 0.0,
        drift: 0.0,
    };
    let a = assemble(&sys, 0.0, &[1.2, 0.1], &[0.0, 0.0], 1e-12).unwrap();
    assert_eq!(a.redundant_rows, vec![1]);
    assert_eq!(a.redundant, vec!["twice x"]);
    let rows = IndependentRows::new(&sys, &a.redundant_rows);
    assert_eq!(
        (rows.nc(), rows.kept_rows(), rows.dropped_rows()),
        (2, &[0, 2][..], &[1][..])
    );
    assert!(rows.constraint_jacobian_pattern().is_none());
    assert_eq!(rows.constraint_label(1), "y driver");
    let mut data = rows.data();
    rows.evaluate(&mut data, 0.5, &[1.5, 0.3], &[0.1, 0.7], Quantities::ALL);
    assert_eq!(data.constraints, vec![0.5, 0.3 - 0.5]);
    assert_eq!(
        data.constraint_jacobian.to_dense(),
        DMatrix::from_row_slice(2, 2, &[1.0, 0.0, 0.0, 1.0])
    );
    assert_eq!(data.velocity_constraints, vec![0.1, 0.7 - 1.0]);
    assert_eq!(data.mass_matrix[(1, 1)], 2.0);
    assert_eq!(data.forces, vec![0.0, -19.62]);
    let mut phi = [0.0; 2];
    rows.constraints(0.5, &[1.5, 0.3], &mut phi);
    assert_eq!(phi, [0.5, -0.2]);

    // λ_K = (a, b) → λ_mn = (a/5, 2a/5, b): min ‖λ‖ with λ₁ + 2λ₂ = a
    let mut mn = MinimumNormReactions::new(&sys, &[1], false);
    mn.input_mut().copy_from_slice(&[5.0, -3.0]);
    let mut lambda = [0.0; 3];
    assert!(mn.apply(&sys, 0.0, &a.q, &mut lambda));
    for (x, y) in lambda.iter().zip([1.0, 2.0, -3.0]) {
        assert!((x - y).abs() < 1e-14, "{lambda:?}");
    }
    // all rows in (penalty): any split of the same force gives the same
    let mut all = MinimumNormReactions::new(&sys, &[1], true);
    all.input_mut().copy_from_slice(&[-1.0, 3.0, -3.0]);
    assert!(all.apply(&sys, 0.0, &a.q, &mut lambda));
    for (x, y) in lambda.iter().zip([1.0, 2.0, -3.0]) {
        assert!((x - y).abs() < 1e-14, "{lambda:?}");
    }
    let deps = mn.dependencies(&sys, 0.0, &a.q).unwrap();
    assert_eq!(deps, vec![vec![(0, 2.0)]]);

    let c = redundant_consistency(&sys, 0.0, &a.q, &a.v, &[1], 1e-12, &[0.5, 1.0]).unwrap();
    assert!(c[0].consistent, "{:?}", c[0]);
    assert_eq!(c[0].depends_on, vec![("x".to_string(), 2.0)]);
}

#[test]
fn inconsistent_redundant_rows_are_found_in_position_and_over_time() {
    // offset: Φ₂ cannot hold where Φ₁ does
    let sys = PointMass {
        offset: 1e-3,
        drift: 0.0,
    };
    let c = redundant_consistency(&sys, 0.0, &[1.0, 0.0], &[0.0, 1.0], &[1], 1e-12, &[]).unwrap();
    assert!(!c[0].consistent);
    assert!((c[0].position_residual - 1e-3).abs() < 1e-12, "{:?}", c[0]);
    assert!(c[0]
        .verdict()
        .starts_with("inconsistent (residual 1.000e-3"));
    // drift: consistent at t = 0 in position, not in velocity, nor later
    let sys = PointMass {
        offset: 0.0,
        drift: 1e-3,
    };
    let c = redundant_consistency(&sys, 0.0, &[1.0, 0.0], &[0.0, 1.0], &[1], 1e-12, &[]).unwrap();
    assert!(!c[0].consistent);
    assert!((c[0].velocity_residual - 1e-3).abs() < 1e-12, "{:?}", c[0]);
    assert!(c[0].position_residual < 1e-12);
    let c =
        redundant_consistency(&sys, 0.0, &[1.0, 0.0], &[0.0, 1.0], &[1], 1e-12, &[2.0]).unwrap();
    assert!((c[0].position_residual - 2e-3).abs() < 1e-12, "{:?}", c[0]);
}
