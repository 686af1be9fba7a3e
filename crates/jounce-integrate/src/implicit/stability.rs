//! Linear stability functions of implicit methods, in complex arithmetic.
//!
//! For a Runge-Kutta method (A, b) applied to y' = λy with z = hλ, one step
//! multiplies y by R(z) = 1 + z bᵀ (I − zA)⁻¹ 1 (Hairer–Wanner II,
//! Section IV.3). Used to state and test A- and L-stability.

use nalgebra::Complex;

/// Complex number type of the stability functions.
pub type C64 = Complex<f64>;

/// Solve the dense complex system M x = r (s × s, row-major `m`) by
/// Gaussian elimination with partial pivoting; `None` when singular.
pub fn solve_complex(m: &mut [Vec<C64>], r: &mut [C64]) -> Option<()> {
    let s = r.len();
    for col in 0..s {
        let piv = (col..s).max_by(|&i, &j| m[i][col].norm().total_cmp(&m[j][col].norm()))?;
        if m[piv][col].norm() == 0.0 {
            return None;
        }
        m.swap(col, piv);
        r.swap(col, piv);
        for row in col + 1..s {
            let f = m[row][col] / m[col][col];
            for k in col..s {
                let v = m[col][k];
                m[row][k] -= f * v;
            }
            let v = r[col];
            r[row] -= f * v;
        }
    }
    for col in (0..s).rev() {
        let mut acc = r[col];
        for k in col + 1..s {
            acc -= m[col][k] * r[k];
        }
        r[col] = acc / m[col][col];
    }
    Some(())
}

/// R(z) = 1 + z bᵀ (I − zA)⁻¹ 1 of the Runge-Kutta method with the full
/// s × s matrix `a` (row-major) and weights `b`. Returns ∞ at a pole.
pub fn rk_stability(a: &[Vec<f64>], b: &[f64], z: C64) -> C64 {
    let s = b.len();
    let one = C64::new(1.0, 0.0);
    let mut m: Vec<Vec<C64>> = (0..s)
        .map(|i| {
            (0..s)
                .map(|j| if i == j { one } else { C64::new(0.0, 0.0) } - z * a[i][j])
                .collect()
        })
        .collect();
    let mut r = vec![one; s];
    if solve_complex(&mut m, &mut r).is_none() {
        return C64::new(f64::INFINITY, 0.0);
    }
    let mut acc = C64::new(0.0, 0.0);
    for i in 0..s {
        acc += r[i] * b[i];
    }
    one + z * acc
}
