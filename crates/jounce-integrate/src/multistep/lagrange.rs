//! Integrals of Lagrange basis polynomials on arbitrary nodes: the
//! coefficients of the variable-step Adams formulas.
//!
//! With nodes s_0 .. s_{m−1} (times relative to an anchor, in units of h),
//! w_i(θ) = ∫_0^θ ℓ_i(s) ds, ℓ_i(s) = Π_{j≠i} (s − s_j)/(s_i − s_j), so that
//! y(t_a + θh) ≈ y(t_a) + h Σ_i w_i(θ) f(t_a + s_i h) integrates the
//! interpolation polynomial of f through the nodes (HNW I, Section III.5,
//! eq. (5.3): the variable-step Adams methods). The integral is exact by
//! Gauss–Legendre quadrature with ⌈m/2⌉ points (degree ≤ 2⌈m/2⌉ − 1, so
//! up to 16 nodes with 8 points).

/// Largest number of interpolation nodes supported.
pub const MAX_NODES: usize = 16;

/// The Gauss–Legendre rules of 1 to 8 points on [0, 1]; an integral of
/// the Lagrange basis on m nodes (degree m − 1) takes the rule of
/// ⌈m/2⌉ points, exact to degree 2⌈m/2⌉ − 1 ≥ m − 1.
#[derive(Clone, Copy, Debug)]
pub struct Gauss8 {
    /// `x[n − 1][..n]`, `w[n − 1][..n]`: the n-point rule.
    x: [[f64; 8]; 8],
    w: [[f64; 8]; 8],
}

impl Default for Gauss8 {
    fn default() -> Self {
        Self::new()
    }
}

impl Gauss8 {
    /// Nodes and weights as roots of P_n, n = 1..8, by Newton's method on
    /// the three-term recurrence (Abramowitz & Stegun 25.4.29, Table 25.4).
    pub fn new() -> Self {
        let mut x = [[0.0; 8]; 8];
        let mut w = [[0.0; 8]; 8];
        for n in 1..=8usize {
            for i in 0..n {
                let mut z = (std::f64::consts::PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
                let mut dp = 1.0;
                for _ in 0..100 {
                    let (mut p0, mut p1) = (1.0, z);
                    for k in 2..=n {
                        let p2 = ((2 * k - 1) as f64 * z * p1 - (k - 1) as f64 * p0) / k as f64;
                        p0 = p1;
                        p1 = p2;
                    }
                    dp = n as f64 * (z * p1 - p0) / (z * z - 1.0);
                    let dz = p1 / dp;
                    z -= dz;
                    if dz.abs() < 1e-16 {
                        break;
                    }
                }
                x[n - 1][i] = 0.5 * (1.0 + z);
                w[n - 1][i] = 1.0 / ((1.0 - z * z) * dp * dp);
            }
        }
        Self { x, w }
    }

    /// w_i = ∫_0^θ ℓ_i(s) ds for the Lagrange basis on `nodes` (distinct),
    /// written into `out[..nodes.len()]`.
    ///
    /// The basis is evaluated in the barycentric form
    /// ℓ_i(s) = b_i Π_j (s − s_j) / (s − s_i), b_i = 1 / Π_{j≠i} (s_i − s_j)
    /// (Berrut & Trefethen, "Barycentric Lagrange interpolation", SIAM
    /// Review 46(3), 2004, eq. (3.1)): the weights b_i once per call (m
    /// divisions), then O(m) per quadrature point, instead of a product of
    /// m − 1 quotients for every basis function at every point. A
    /// quadrature point on a node (only possible for nodes inside (0, θ))
    /// takes the product form.
    pub fn lagrange_integrals(&self, nodes: &[f64], theta: f64, out: &mut [f64]) {
        let m = nodes.len();
        let mut bary = [0.0; MAX_NODES];
        for i in 0..m {
            let mut p = 1.0;
            for j in 0..m {
                if j != i {
                    p *= nodes[i] - nodes[j];
                }
            }
            bary[i] = 1.0 / p;
        }
        for o in out.iter_mut().take(m) {
            *o = 0.0;
        }
        let mut diff = [0.0; MAX_NODES];
        let points = m.div_ceil(2).clamp(1, 8);
        let (xs, ws) = (&self.x[points - 1], &self.w[points - 1]);
        for g in 0..points {
            let s = theta * xs[g];
            let wg = theta * ws[g];
            let mut full = 1.0;
            let mut on_node = false;
            for j in 0..m {
                diff[j] = s - nodes[j];
                on_node |= diff[j] == 0.0;
                full *= diff[j];
            }
            for i in 0..m {
                let l = if on_node {
                    (0..m).filter(|&j| j != i).map(|j| diff[j]).product::<f64>() * bary[i]
                } else {
                    bary[i] * full / diff[i]
                };
                out[i] += wg * l;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equidistant_nodes_give_the_adams_coefficients() {
        let g = Gauss8::new();
        let mut w = [0.0; 4];
        // AB4: nodes 0, -1, -2, -3 → 55/24, -59/24, 37/24, -9/24
        g.lagrange_integrals(&[0.0, -1.0, -2.0, -3.0], 1.0, &mut w);
        let ab4 = [55.0 / 24.0, -59.0 / 24.0, 37.0 / 24.0, -9.0 / 24.0];
        for i in 0..4 {
            assert!((w[i] - ab4[i]).abs() < 1e-14, "{w:?}");
        }
        // AM4 (order 4): nodes 1, 0, -1, -2 → 9/24, 19/24, -5/24, 1/24
        g.lagrange_integrals(&[1.0, 0.0, -1.0, -2.0], 1.0, &mut w);
        let am4 = [9.0 / 24.0, 19.0 / 24.0, -5.0 / 24.0, 1.0 / 24.0];
        for i in 0..4 {
            assert!((w[i] - am4[i]).abs() < 1e-14, "{w:?}");
        }
    }

    #[test]
    fn weights_integrate_polynomials_exactly_on_unequal_nodes() {
        // the variable-step Adams weights are the unique ones exact for degree < m
        let g = Gauss8::new();
        let nodes = [
            1.0, 0.0, -0.7, -1.9, -2.4, -3.8, -4.1, -5.5, -7.0, -7.3, -9.0, -10.2, -11.0,
        ];
        let mut w = [0.0; MAX_NODES];
        for m in 1..=nodes.len() {
            for theta in [1.0, 0.37, -0.6] {
                g.lagrange_integrals(&nodes[..m], theta, &mut w);
                for d in 0..m {
                    let q: f64 = (0..m).map(|i| w[i] * nodes[i].powi(d as i32)).sum();
                    let exact = theta.powi(d as i32 + 1) / (d as f64 + 1.0);
                    let scale = 1.0f64.max(w.iter().map(|x| x.abs()).sum::<f64>());
                    assert!(
                        (q - exact).abs() < 1e-11 * scale * 11f64.powi(d as i32),
                        "m {m} degree {d}: {q} vs {exact}"
                    );
                }
            }
        }
    }
}
