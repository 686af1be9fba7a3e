//! The sparse Φ_q and tangent of [`super::SpatialSystem`] against the
//! dense ones, on the models with every joint kind, every force element
//! and drivers, at random states off the joints.

use nalgebra::DMatrix;

use super::SpatialSystem;
use crate::capabilities::Sparsity;
use crate::data::Quantities;
use crate::sparse::SparseMatrix;
use crate::MechanicalSystem;

/// A deterministic uniform sample in [−1, 1) (64-bit LCG).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 11) as f64) / ((1u64 << 52) as f64) - 1.0
    }
}

/// The model's system and, per seed, a random state off the joints:
/// (t, q, v, λ).
fn cases(text: &str) -> (SpatialSystem, Vec<(f64, Vec<f64>, Vec<f64>, Vec<f64>)>) {
    let model = jounce_model::from_str(text, "test.toml").unwrap();
    let sys = SpatialSystem::from_model(&model).unwrap();
    let (q0, v0) = sys.initial_state();
    let states = (1..=5)
        .map(|seed| {
            let mut r = Lcg(seed);
            let mut q: Vec<f64> = q0.iter().map(|x| x + 0.2 * r.next()).collect();
            sys.normalize(&mut q);
            let v: Vec<f64> = v0.iter().map(|x| x + 2.0 * r.next()).collect();
            let lambda: Vec<f64> = (0..sys.nc()).map(|_| 10.0 * r.next()).collect();
            (0.3 + r.next().abs(), q, v, lambda)
        })
        .collect();
    (sys, states)
}

fn models() -> [&'static str; 3] {
    [
        super::tests::MODEL,
        super::drive_tests::MODEL,
        super::contact_tests::MODEL,
    ]
}

fn max_abs(a: &DMatrix<f64>) -> f64 {
    a.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

#[test]
fn sparse_constraint_jacobian_equals_the_dense_one_entry_for_entry() {
    for text in models() {
        let (sys, states) = cases(text);
        let (m, n) = (sys.nc(), sys.nv());
        let pattern = sys.jacobian_pattern();
        for (t, q, _, _) in states {
            let mut dense = DMatrix::zeros(m, n);
            sys.constraint_jacobian(t, &q, &mut dense);
            let mut sparse = SparseMatrix::from_pattern(m, n, &pattern);
            sys.fill_constraint_jacobian(t, &q, &mut sparse);
            let d = (&sparse.to_dense() - &dense).amax();
            assert!(d <= 1e-14 * max_abs(&dense).max(1.0), "|Δ| = {d:e}");
            // every nonzero of the dense Jacobian lies in the pattern
            for i in 0..m {
                for j in 0..n {
                    if dense[(i, j)] != 0.0 {
                        assert!(
                            sparse.index_of(i, j).is_some(),
                            "({i}, {j}) = {} outside the pattern ({})",
                            dense[(i, j)],
                            sys.constraint_label(i)
                        );
                    }
                }
            }
            // a dense SparseMatrix is filled too
            let mut full = SparseMatrix::dense(m, n);
            sys.fill_constraint_jacobian(t, &q, &mut full);
            assert!((&full.to_dense() - &dense).amax() <= 1e-14 * max_abs(&dense).max(1.0));
        }
    }
}

#[test]
fn evaluate_gives_the_sparse_jacobian_and_the_diagonal_mass_without_dense_storage() {
    for text in models() {
        let (sys, states) = cases(text);
        let mut data = sys.data();
        // (a model without constraints has an empty, dense, 0 × n_v Φ_q)
        assert!(sys.nc() == 0 || !data.constraint_jacobian.is_dense());
        assert_eq!(data.dense_jacobian.len(), 0);
        let diagonal = sys.structure().mass_matrix_is_diagonal;
        assert_eq!(data.mass_is_stored_diagonal(), diagonal);
        let mut mass = DMatrix::zeros(sys.nv(), sys.nv());
        sys.mass_matrix(&[], &mut mass);
        for (t, q, v, _) in states {
            sys.evaluate(&mut data, t, &q, &v, Quantities::ALL);
            assert_eq!(data.mass_dense(), mass);
            let mut dense = DMatrix::zeros(sys.nc(), sys.nv());
            sys.constraint_jacobian(t, &q, &mut dense);
            assert!(
                (&data.constraint_jacobian.to_dense() - &dense).amax()
                    <= 1e-14 * max_abs(&dense).max(1.0)
            );
            let mut phi_t = vec![0.0; sys.nc()];
            sys.constraint_time_derivative(t, &q, &mut phi_t);
            let vel = &dense * nalgebra::DVector::from_column_slice(&v);
            for i in 0..sys.nc() {
                let want = vel[i] + phi_t[i];
                assert!((data.velocity_constraints[i] - want).abs() <= 1e-13 * (1.0 + want.abs()));
            }
            let mut gamma = vec![0.0; sys.nc()];
            sys.gamma(t, &q, &v, &mut gamma);
            assert_eq!(data.gamma, gamma);
            let mut f = vec![0.0; sys.nv()];
            sys.generalized_forces(t, &q, &v, &mut f);
            assert_eq!(data.forces, f);
        }
    }
}

#[test]
fn sparse_tangent_equals_the_dense_force_and_constraint_force_jacobians() {
    for text in models() {
        let (sys, states) = cases(text);
        let n = sys.nv();
        let pattern = sys.tangent_entries();
        for (t, q, v, lambda) in states {
            let (mut fq, mut fv, mut h) = (
                DMatrix::zeros(n, n),
                DMatrix::zeros(n, n),
                DMatrix::zeros(n, n),
            );
            sys.force_jacobians(t, &q, &v, &mut fq, &mut fv);
            sys.constraint_force_jacobian(t, &q, &lambda, &mut h);
            let k_dense = &h - &fq;
            let c_dense = -&fv;
            let (mut k, mut c) = (vec![f64::NAN; pattern.len()], vec![f64::NAN; pattern.len()]);
            assert!(sys.fill_tangent(t, &q, &v, &lambda, &pattern, &mut k, &mut c));
            let (mut k_sparse, mut c_sparse) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
            for (e, &(i, j)) in pattern.iter().enumerate() {
                k_sparse[(i, j)] = k[e];
                c_sparse[(i, j)] = c[e];
            }
            // every nonzero of the dense tangent lies in the pattern
            for i in 0..n {
                for j in 0..n {
                    if k_dense[(i, j)] != 0.0 || c_dense[(i, j)] != 0.0 {
                        assert!(pattern.binary_search(&(i, j)).is_ok(), "({i}, {j})");
                    }
                }
            }
            let dk = (&k_sparse - &k_dense).amax();
            let dc = (&c_sparse - &c_dense).amax();
            assert!(dk <= 1e-12 * max_abs(&k_dense).max(1.0), "K: |Δ| = {dk:e}");
            assert!(dc <= 1e-12 * max_abs(&c_dense).max(1.0), "C: |Δ| = {dc:e}");
            // a pattern lacking an entry of a block is refused
            let short = &pattern[1..];
            let (mut k, mut c) = (vec![0.0; short.len()], vec![0.0; short.len()]);
            assert!(!sys.fill_tangent(t, &q, &v, &lambda, short, &mut k, &mut c));
        }
    }
}
