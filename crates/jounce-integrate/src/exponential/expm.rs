//! The matrix exponential by scaling and squaring with Padé approximants,
//! in a workspace sized once (nalgebra's `Matrix::exp` allocates its own
//! work space at every call).
//!
//! Higham, "The scaling and squaring method for the matrix exponential
//! revisited", SIAM J. Matrix Anal. Appl. 26 (2005) 1179–1193, Algorithm
//! 2.3: with θ_m the largest ‖A‖₁ for which the [m/m] Padé approximant
//! r_m(A) = (V − U)⁻¹(V + U) has backward error ≤ 2⁻⁵³ (Table 2.3),
//! take the smallest m ∈ {3, 5, 7, 9} with ‖A‖₁ ≤ θ_m; otherwise m = 13,
//! A ← A/2^s with s = ⌈log₂(‖A‖₁/θ₁₃)⌉, and e^A = r₁₃(A/2^s)^(2^s).
//! U collects the odd, V the even terms of the Padé numerator
//! p_m(x) = Σ b_k x^k (coefficients b_k of Higham's Table 2.2 / eq. (2.1)).

use nalgebra::DMatrix;

use crate::dense_lu::DenseLu;
use crate::matmul::matmul;

/// θ_m of Higham (2005), Table 2.3, for m = 3, 5, 7, 9, 13.
const THETA: [f64; 5] = [
    1.495585217958292e-2,
    2.53939833006323e-1,
    9.504178996162932e-1,
    2.097847961257068e0,
    5.371920351148152e0,
];

/// Padé coefficients b_0..b_m for m = 3, 5, 7, 9 (Higham 2005, eq. (2.1)).
const B3: [f64; 4] = [120.0, 60.0, 12.0, 1.0];
const B5: [f64; 6] = [30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0];
const B7: [f64; 8] = [
    17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0,
];
const B9: [f64; 10] = [
    17643225600.0,
    8821612800.0,
    2075673600.0,
    302702400.0,
    30270240.0,
    2162160.0,
    110880.0,
    3960.0,
    90.0,
    1.0,
];
/// b_0..b_13 for m = 13.
const B13: [f64; 14] = [
    64764752532480000.0,
    32382376266240000.0,
    7771770303897600.0,
    1187353796428800.0,
    129060195264000.0,
    10559470521600.0,
    670442572800.0,
    33522128640.0,
    1323241920.0,
    40840800.0,
    960960.0,
    16380.0,
    182.0,
    1.0,
];

/// Workspace of [`Expm::exp`]: the powers A², A⁴, A⁶, U, V, a scratch
/// matrix and the LU factors of V − U.
pub struct Expm {
    a: DMatrix<f64>,
    a2: DMatrix<f64>,
    a4: DMatrix<f64>,
    a6: DMatrix<f64>,
    u: DMatrix<f64>,
    v: DMatrix<f64>,
    tmp: DMatrix<f64>,
    lu: DenseLu<f64>,
}

impl Default for Expm {
    fn default() -> Self {
        Self::new(0)
    }
}

impl Expm {
    /// A workspace for n × n matrices.
    pub fn new(n: usize) -> Self {
        let z = || DMatrix::zeros(n, n);
        let mut lu = DenseLu::new();
        lu.resize(n);
        Self {
            a: z(),
            a2: z(),
            a4: z(),
            a6: z(),
            u: z(),
            v: z(),
            tmp: z(),
            lu,
        }
    }

    /// Size of the matrices this workspace holds.
    pub fn dim(&self) -> usize {
        self.a.nrows()
    }

    /// e^A into `out` (both n × n, n = [`Expm::dim`]). Returns false when
    /// V − U is singular or A is not finite (then `out` is not meaningful).
    pub fn exp(&mut self, a: &DMatrix<f64>, out: &mut DMatrix<f64>) -> bool {
        let n = self.dim();
        debug_assert_eq!(a.nrows(), n);
        let norm1 = (0..n)
            .map(|j| a.column(j).iter().map(|x| x.abs()).sum::<f64>())
            .fold(0.0, f64::max);
        if !norm1.is_finite() {
            return false;
        }
        self.a.copy_from(a);
        let mut squarings = 0;
        matmul(&mut self.a2, &self.a, &self.a);
        if norm1 <= THETA[0] {
            self.odd_even(&B3);
        } else if norm1 <= THETA[1] {
            matmul(&mut self.a4, &self.a2, &self.a2);
            self.odd_even(&B5);
        } else if norm1 <= THETA[2] {
            matmul(&mut self.a4, &self.a2, &self.a2);
            matmul(&mut self.a6, &self.a4, &self.a2);
            self.odd_even(&B7);
        } else if norm1 <= THETA[3] {
            matmul(&mut self.a4, &self.a2, &self.a2);
            matmul(&mut self.a6, &self.a4, &self.a2);
            self.odd_even(&B9);
        } else {
            squarings = (norm1 / THETA[4]).log2().ceil().max(0.0) as i32;
            let scale = 0.5f64.powi(squarings);
            self.a *= scale;
            self.a2 *= scale * scale;
            matmul(&mut self.a4, &self.a2, &self.a2);
            matmul(&mut self.a6, &self.a4, &self.a2);
            self.pade13();
        }
        // r = (V − U)⁻¹ (V + U)
        for j in 0..n {
            for i in 0..n {
                let (u, v) = (self.u[(i, j)], self.v[(i, j)]);
                self.lu.lu[(i, j)] = v - u;
                out[(i, j)] = v + u;
            }
        }
        if !self.lu.factor() {
            return false;
        }
        for col in out.as_mut_slice().chunks_exact_mut(n.max(1)) {
            self.lu.solve(col);
        }
        for _ in 0..squarings {
            matmul(&mut self.tmp, out, out);
            out.copy_from(&self.tmp);
        }
        out.iter().all(|x| x.is_finite())
    }

    /// U = A Σ_{k odd} b_k A^{k−1}, V = Σ_{k even} b_k A^k for m ≤ 9, from
    /// A, A² (and A⁴, A⁶, A⁸ = A⁴A⁴ when m ≥ 5, 7, 9).
    fn odd_even(&mut self, b: &[f64]) {
        let m = b.len() - 1;
        let n = self.dim();
        // tmp = Σ_{k odd} b_k A^{k−1}, v = Σ_{k even} b_k A^k
        self.tmp.fill(0.0);
        self.v.fill(0.0);
        for i in 0..n {
            self.tmp[(i, i)] = b[1];
            self.v[(i, i)] = b[0];
        }
        let powers: [(usize, &DMatrix<f64>); 3] = [(2, &self.a2), (4, &self.a4), (6, &self.a6)];
        for (p, ap) in powers {
            if p < m {
                self.tmp.zip_apply(ap, |t, x| *t += b[p + 1] * x);
            }
            if p <= m {
                self.v.zip_apply(ap, |v, x| *v += b[p] * x);
            }
        }
        if m == 9 {
            // A⁸ = A⁴ A⁴ into u (scratch), then the b_9 and b_8 terms
            matmul(&mut self.u, &self.a4, &self.a4);
            self.tmp.zip_apply(&self.u, |t, x| *t += b[9] * x);
            self.v.zip_apply(&self.u, |v, x| *v += b[8] * x);
        }
        matmul(&mut self.u, &self.a, &self.tmp);
    }

    /// Higham (2005), Algorithm 2.3, m = 13:
    /// U = A[A⁶(b₁₃A⁶ + b₁₁A⁴ + b₉A²) + b₇A⁶ + b₅A⁴ + b₃A² + b₁I],
    /// V = A⁶(b₁₂A⁶ + b₁₀A⁴ + b₈A²) + b₆A⁶ + b₄A⁴ + b₂A² + b₀I.
    fn pade13(&mut self) {
        let b = &B13;
        let n = self.dim();
        // tmp = b13 A6 + b11 A4 + b9 A2; u = A6 tmp + b7 A6 + b5 A4 + b3 A2 + b1 I
        for j in 0..n {
            for i in 0..n {
                self.tmp[(i, j)] =
                    b[13] * self.a6[(i, j)] + b[11] * self.a4[(i, j)] + b[9] * self.a2[(i, j)];
            }
        }
        matmul(&mut self.v, &self.a6, &self.tmp);
        for j in 0..n {
            for i in 0..n {
                self.v[(i, j)] +=
                    b[7] * self.a6[(i, j)] + b[5] * self.a4[(i, j)] + b[3] * self.a2[(i, j)];
            }
            self.v[(j, j)] += b[1];
        }
        matmul(&mut self.u, &self.a, &self.v);
        // v = A6 (b12 A6 + b10 A4 + b8 A2) + b6 A6 + b4 A4 + b2 A2 + b0 I
        for j in 0..n {
            for i in 0..n {
                self.tmp[(i, j)] =
                    b[12] * self.a6[(i, j)] + b[10] * self.a4[(i, j)] + b[8] * self.a2[(i, j)];
            }
        }
        matmul(&mut self.v, &self.a6, &self.tmp);
        for j in 0..n {
            for i in 0..n {
                self.v[(i, j)] +=
                    b[6] * self.a6[(i, j)] + b[4] * self.a4[(i, j)] + b[2] * self.a2[(i, j)];
            }
            self.v[(j, j)] += b[0];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(a: DMatrix<f64>, tol: f64) {
        let n = a.nrows();
        let reference = a.clone().exp();
        let mut w = Expm::new(n);
        let mut out = DMatrix::zeros(n, n);
        assert!(w.exp(&a, &mut out));
        let err = (&out - &reference).abs().max() / reference.abs().max().max(1e-300);
        assert!(
            err < tol,
            "relative error {err} for ‖A‖ = {}",
            a.abs().max()
        );
    }

    #[test]
    fn agrees_with_nalgebra_at_every_pade_degree() {
        // ‖A‖₁ across the θ_m thresholds: degrees 3, 5, 7, 9, 13 and squaring
        let base = DMatrix::from_row_slice(
            4,
            4,
            &[
                -1.0, 0.5, 0.0, 0.2, 0.3, -2.0, 0.1, 0.0, 0.0, 0.4, -0.5, 1.0, 0.1, 0.0, -1.0, -0.3,
            ],
        );
        for scale in [1e-3, 3e-2, 0.2, 0.5, 1.0, 3.0, 30.0, 300.0] {
            check(&base * scale, 1e-12);
        }
    }

    #[test]
    fn exponential_of_a_rotation_generator_is_a_rotation() {
        // exp([[0, −w], [w, 0]]) = [[cos w, −sin w], [sin w, cos w]]
        for w in [0.01, 1.0, 10.0, 100.0] {
            let a = DMatrix::from_row_slice(2, 2, &[0.0, -w, w, 0.0]);
            let mut e = Expm::new(2);
            let mut out = DMatrix::zeros(2, 2);
            assert!(e.exp(&a, &mut out));
            let (c, s) = (w.cos(), w.sin());
            let err = (out[(0, 0)] - c)
                .abs()
                .max((out[(1, 0)] - s).abs())
                .max((out[(0, 1)] + s).abs());
            assert!(err < 1e-12 * w.max(1.0), "w = {w}: {err}");
        }
    }
}
