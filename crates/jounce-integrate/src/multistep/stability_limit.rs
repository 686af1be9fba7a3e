//! Stability-limit control of the variable-order BDF/NDF code: keep the
//! order and step of [`super::bdf::BdfNdf`] where the formula damps the
//! mode that dominates its error estimate.
//!
//! BDF3–5 are not A-stable (Hairer–Wanner II, Section V.2, Table 2.1): a
//! lightly damped oscillation λ = −ζω ± iω with ζ ≪ 1 (a stiff spring with
//! little damping, P-B of the peer comparison) is *amplified* by BDF3 for
//! hω in about (0.35, 2), by BDF4 for about (0.5, 5), by BDF5 for about
//! (0.8, 10). Accuracy-based order and step selection (Shampine–Reichelt
//! 1997) then settles in a stability-limited regime: once the oscillation
//! has decayed, the solution is smooth, the error estimates favour order
//! 3–5 at hω ≈ 0.5, the formula sustains the oscillation at the error
//! tolerance instead of damping it, and the step stays there for the rest
//! of the run (tens of thousands of steps where 50 would do). Hindmarsh's
//! stability limit detection (CVODE's STALD; Hindmarsh, "Avoiding BDF
//! stability barriers in the MOL solution of advection-dominated
//! problems", Appl. Numer. Math. 17 (1995) 311–318) recognises the
//! regime from the Nordsieck history and lowers the order; here the
//! Jacobian, which the code holds anyway, names the mode directly:
//!
//! 1. **Mode** ([`ModeEstimate`]): Rayleigh–Ritz on the Krylov space
//!    K₂ = span{e, J e} of the error estimate e = ∇^{k+1} y_{n+1}, in the
//!    error-weighted inner product (W = diag(1/(atol + rtol |y_i|))):
//!    two steps of Arnoldi on W J W⁻¹ from W e give a 2 × 2 Hessenberg
//!    matrix whose eigenvalues λ₁, λ₂ approximate the (real or complex
//!    conjugate) pair that dominates e (Saad, "Numerical Methods for Large
//!    Eigenvalue Problems", 2nd ed., SIAM 2011, Sections 4.2 and 6.1). The
//!    pair is used only when K₂ is nearly invariant: the Arnoldi residual
//!    ‖(I − QQᵀ) W J W⁻¹ q₂‖ is at most [`RITZ_RESIDUAL`] × max |λ_i|;
//!    otherwise (e mixes several modes) no restriction applies.
//! 2. **Linear stability** ([`root_radius`]): the order-k formula applied
//!    to y' = λ y with step h has the characteristic equation
//!    Σ_{m=1}^{k} (1/m)(1 − ζ⁻¹)^m − κ_k γ_k (1 − ζ⁻¹)^{k+1} = z, z = hλ
//!    (Hairer–Wanner II, Section V.1, eq. (1.5); the NDF term of
//!    Shampine–Reichelt 1997, eq. (3)); ρ_k(z) is the largest modulus of
//!    its roots ζ.
//! 3. **Admissibility** ([`damps_enough`]): for a mode with Re z ≤ 0 the
//!    formula must damp it at least half as fast as the ODE does, up to
//!    [`DECAY_ENOUGH`] per step,
//!    ln ρ_k(z) ≤ max(Re z / 2, −[`DECAY_ENOUGH`]),
//!    unless its dissipation error is within the relative tolerance,
//!    ln ρ_k(z) − Re z ≤ η = rtol. Without the first term, order k at the
//!    edge of its stability region (ρ ≈ 1) would keep the spurious
//!    oscillation alive as before; the second term leaves strongly damped
//!    modes alone (BDF5 damps z = −2 by ρ = 0.78 per step, much less than
//!    e^{−2}, but it damps). The η term admits an oscillation that is
//!    resolved for accuracy: BDF3 amplifies y' = iωy at *every* step, by
//!    about 0.2 (hω)⁴ per step, which is truncation error the error test
//!    already bounds, and refusing it would refuse BDF3 and BDF4 on every
//!    undamped oscillation (a pendulum). Its limit: at loose tolerances
//!    (rtol ≥ 1e-2) it admits, e.g., BDF3 at hω = 0.4 on a mode with
//!    ζ = 0.01, inside the band where BDF3 amplifies it. BDF1 and BDF2
//!    meet the rule everywhere in the left half-plane with η = 0 (tested),
//!    so an admissible order always exists. Growing modes (Re z > 0)
//!    demand nothing.
//!
//! The BDF driver uses the rule twice: after every accepted step at order
//! k ≥ 3, an inadmissible (k, h) lowers the order to the highest
//! admissible one (the STALD action); and when it selects the next order
//! and step, each candidate's step is limited to the largest admissible
//! one ([`largest_admissible_step`]). Cost: two products with J (O(n²))
//! at each order decision and at least every k + 2 steps at order ≥ 3
//! (the estimate is kept in between: J itself is reused over many steps),
//! and per step one Schur–Cohn test ([`roots_within`], O(k²)); a capped
//! candidate costs 12 more tests.

use nalgebra::{Complex, DMatrix};

/// Largest Arnoldi residual, relative to the largest Ritz value, at which
/// the Ritz pair is taken to describe the mode that dominates e.
pub const RITZ_RESIDUAL: f64 = 0.1;

/// Per-step damping (in ln ρ) that is always enough: ρ ≤ e^{−0.05} ≈ 0.95,
/// the mode falls by e in 20 steps.
pub const DECAY_ENOUGH: f64 = 0.05;

/// Coefficients a_0..a_d (of ζ^0..ζ^d, d = k + 1) of the characteristic
/// polynomial of the order-k BDF (κ = 0) or NDF (κ = κ_k) at z = hλ:
/// Σ_{m=1}^{k} (1/m) ζ^{k+1−m} (ζ − 1)^m − κ γ_k (ζ − 1)^{k+1} − z ζ^{k+1}
/// (the equation of step 2 of the module documentation times ζ^{k+1};
/// for κ = 0 it has the extra root ζ = 0). The leading coefficient
/// (1 − κ) γ_k − z vanishes only at a real z > 0.
fn char_poly(k: usize, kappa: f64, z: Complex<f64>) -> ([Complex<f64>; 8], usize) {
    let k = k.clamp(1, 6);
    let d = k + 1;
    // real coefficients c[i] of ζ^i, then the −z ζ^{k+1} term
    let mut c = [0.0f64; 8];
    let mut gamma = 0.0;
    for m in 1..=k {
        gamma += 1.0 / m as f64;
        // ζ^{d−m} (ζ − 1)^m / m
        let mut binom = 1.0;
        for i in 0..=m {
            let sign = if (m - i).is_multiple_of(2) { 1.0 } else { -1.0 };
            c[d - m + i] += sign * binom / m as f64;
            binom = binom * (m - i) as f64 / (i + 1) as f64;
        }
    }
    if kappa != 0.0 {
        let mut binom = 1.0;
        for (i, ci) in c.iter_mut().enumerate().take(d + 1) {
            let sign = if (d - i).is_multiple_of(2) { 1.0 } else { -1.0 };
            *ci -= kappa * gamma * sign * binom;
            binom = binom * (d - i) as f64 / (i + 1) as f64;
        }
    }
    let mut a = [Complex::new(0.0, 0.0); 8];
    for i in 0..=d {
        a[i] = Complex::new(c[i], 0.0);
    }
    a[d] -= z;
    (a, d)
}

/// Whether every root ζ of the characteristic polynomial (`char_poly`)
/// has |ζ| < r, by the Schur–Cohn algorithm (Henrici, Applied and
/// Computational Complex Analysis I, Wiley 1974, Section 6.8): with
/// q(w) = p(r w) = Σ_{i=0}^{n} a_i w^i, q*(w) = Σ conj(a_{n−i}) w^i and
/// T q = conj(a_0) q − a_n q* (degree n − 1, T q(0) = |a_0|² − |a_n|²),
/// the number N(q) of zeros in the open unit disc satisfies
/// N(T q) = N(q) when T q(0) > 0 and N(T q) = n − N(q) when T q(0) < 0
/// (Henrici, Theorem 6.8b); the recursion down to a constant counts
/// N(q), and all roots lie inside iff N(q) = n. O(k²) operations and no
/// iteration; T q(0) = 0 (a root on the circle or a degenerate case)
/// answers false.
pub fn roots_within(k: usize, kappa: f64, z: Complex<f64>, r: f64) -> bool {
    let (a, d) = char_poly(k, kappa, z);
    if a[d].norm() == 0.0 || !(r > 0.0) {
        return false;
    }
    let mut q = [Complex::new(0.0, 0.0); 8];
    let mut ri = 1.0;
    for i in 0..=d {
        q[i] = a[i] * ri;
        ri *= r;
    }
    // negative[n]: T q(0) < 0 at the stage where q has degree n
    let mut negative = [false; 8];
    let mut n = d;
    while n > 0 {
        let (q0, qn) = (q[0], q[n]);
        let delta = q0.norm_sqr() - qn.norm_sqr();
        if delta == 0.0 || !delta.is_finite() {
            return false;
        }
        negative[n] = delta < 0.0;
        let mut t = [Complex::new(0.0, 0.0); 8];
        let mut big = 0.0f64;
        for i in 0..n {
            t[i] = q0.conj() * q[i] - qn * q[n - i].conj();
            big = big.max(t[i].norm());
        }
        if !(big > 0.0 && big.is_finite()) {
            return false;
        }
        // a positive scale keeps the signs and the numbers in range
        for ti in t.iter_mut().take(n) {
            *ti /= big;
        }
        q = t;
        n -= 1;
    }
    // unwind: a constant has no zeros
    let mut inside = 0;
    for (m, &neg) in negative.iter().enumerate().take(d + 1).skip(1) {
        if neg {
            inside = m - inside;
        }
    }
    inside == d
}

/// Largest modulus ρ_k(z) of the roots ζ of the characteristic polynomial
/// (`char_poly`), by the Weierstrass (Durand–Kerner) iteration on the
/// monic polynomial (Press et al., Numerical Recipes, 3rd ed., Section
/// 9.5). For analysis and tests; the driver uses [`roots_within`].
pub fn root_radius(k: usize, kappa: f64, z: Complex<f64>) -> f64 {
    let (mut a, d) = char_poly(k, kappa, z);
    let lead = a[d];
    if lead.norm() == 0.0 {
        // z = (1 − κ) γ_k: a root at infinity
        return f64::INFINITY;
    }
    for ai in a.iter_mut().take(d + 1) {
        *ai /= lead;
    }
    let eval = |x: Complex<f64>| {
        let mut p = Complex::new(1.0, 0.0);
        for i in (0..d).rev() {
            p = p * x + a[i];
        }
        p
    };
    let mut r = [Complex::new(0.0, 0.0); 7];
    let seed = Complex::new(0.4, 0.9);
    let mut s = Complex::new(1.0, 0.0);
    for ri in r.iter_mut().take(d) {
        *ri = s;
        s *= seed;
    }
    for _ in 0..500 {
        let mut biggest = 0.0f64;
        for i in 0..d {
            let mut den = Complex::new(1.0, 0.0);
            for j in 0..d {
                if j != i {
                    den *= r[i] - r[j];
                }
            }
            if den.norm() == 0.0 {
                den = Complex::new(f64::EPSILON, 0.0);
            }
            let delta = eval(r[i]) / den;
            r[i] -= delta;
            biggest = biggest.max(delta.norm() / (1.0 + r[i].norm()));
        }
        if biggest < 1e-14 {
            break;
        }
    }
    r.iter().take(d).map(|x| x.norm()).fold(0.0, f64::max)
}

/// The admissibility rule of the module documentation (step 3): whether
/// the order-k formula treats the mode z = hλ acceptably: always for
/// Re z > 0; otherwise when it damps it enough,
/// ln ρ_k(z) ≤ max(Re z / 2, −[`DECAY_ENOUGH`]),
/// or when its dissipation error is within the tolerance,
/// ln ρ_k(z) − Re z ≤ η (η = rtol: the mode is resolved for accuracy).
pub fn damps_enough(k: usize, kappa: f64, z: Complex<f64>, eta: f64) -> bool {
    if z.re > 0.0 {
        return true;
    }
    // ln ρ ≤ max(Re z / 2, −DECAY_ENOUGH) or ln ρ ≤ Re z + η: one radius
    let ln_r = (0.5 * z.re).max(-DECAY_ENOUGH).max(z.re + eta);
    roots_within(k, kappa, z, ln_r.exp())
}

/// Whether step h at order k treats every mode of `modes` acceptably
/// ([`damps_enough`] with the dissipation tolerance η).
pub fn admissible(k: usize, kappa: f64, h: f64, modes: &[Complex<f64>; 2], eta: f64) -> bool {
    // the polynomial has real coefficients but for z: ρ_k(z̄) = ρ_k(z)
    damps_enough(k, kappa, modes[0] * h, eta)
        && (modes[1] == modes[0].conj() || damps_enough(k, kappa, modes[1] * h, eta))
}

/// Bisection steps of [`largest_admissible_step`] (relative resolution
/// 2^-12 of the interval).
const BISECTIONS: usize = 12;

/// The largest step in [h_lo, h_hi] at which order k is admissible, by
/// bisection, given that h_lo is admissible (or zero) and h_hi is not: the
/// lower edge of the band of inadmissible steps below h_hi. Returns h_hi
/// when it is admissible.
pub fn largest_admissible_step(
    k: usize,
    kappa: f64,
    h_lo: f64,
    h_hi: f64,
    modes: &[Complex<f64>; 2],
    eta: f64,
) -> f64 {
    if admissible(k, kappa, h_hi, modes, eta) {
        return h_hi;
    }
    let (mut lo, mut hi) = (h_lo, h_hi);
    for _ in 0..BISECTIONS {
        let mid = 0.5 * (lo + hi);
        if admissible(k, kappa, mid, modes, eta) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Work space of the Rayleigh–Ritz estimate of the mode that dominates
/// an error estimate (step 1 of the module documentation).
#[derive(Default)]
pub struct ModeEstimate {
    q1: Vec<f64>,
    q2: Vec<f64>,
    t: Vec<f64>,
    a: Vec<f64>,
}

impl ModeEstimate {
    /// Work space for dimension n.
    pub fn new(n: usize) -> Self {
        Self {
            q1: vec![0.0; n],
            q2: vec![0.0; n],
            t: vec![0.0; n],
            a: vec![0.0; n],
        }
    }

    /// a = W J W⁻¹ q (w = the diagonal of W).
    fn apply(jac: &DMatrix<f64>, w: &[f64], q: &[f64], t: &mut [f64], a: &mut [f64]) {
        let n = q.len();
        for i in 0..n {
            t[i] = q[i] / w[i];
        }
        a.fill(0.0);
        for (c, &tc) in t.iter().enumerate() {
            if tc != 0.0 {
                for (r, ar) in a.iter_mut().enumerate() {
                    *ar += jac[(r, c)] * tc;
                }
            }
        }
        for i in 0..n {
            a[i] *= w[i];
        }
    }

    /// The Ritz values λ₁, λ₂ of J on span{e, J e} in the inner product
    /// weighted by w, or None when e vanishes, is not finite, or the
    /// span is not nearly invariant (residual > [`RITZ_RESIDUAL`] max |λ|).
    /// An eigenvector e gives λ₁ = λ₂ = its eigenvalue.
    pub fn estimate(
        &mut self,
        jac: &DMatrix<f64>,
        e: &[f64],
        w: &[f64],
    ) -> Option<[Complex<f64>; 2]> {
        let n = e.len();
        if n == 0 || self.q1.len() != n || jac.nrows() != n || jac.ncols() != n {
            return None;
        }
        let mut s = 0.0;
        for i in 0..n {
            self.q1[i] = e[i] * w[i];
            s += self.q1[i] * self.q1[i];
        }
        let norm = s.sqrt();
        if !(norm > 0.0 && norm.is_finite()) {
            return None;
        }
        for q in self.q1.iter_mut() {
            *q /= norm;
        }
        Self::apply(jac, w, &self.q1, &mut self.t, &mut self.a);
        let h11 = dot(&self.q1, &self.a);
        let mut s = 0.0;
        for i in 0..n {
            self.q2[i] = self.a[i] - h11 * self.q1[i];
            s += self.q2[i] * self.q2[i];
        }
        let h21 = s.sqrt();
        let anorm = dot(&self.a, &self.a).sqrt();
        if !h11.is_finite() || !h21.is_finite() {
            return None;
        }
        if h21 <= 1e-12 * anorm || anorm == 0.0 {
            // e is an eigenvector (or in the null space): λ = h11
            let l = Complex::new(h11, 0.0);
            return Some([l, l]);
        }
        for q in self.q2.iter_mut() {
            *q /= h21;
        }
        Self::apply(jac, w, &self.q2, &mut self.t, &mut self.a);
        let h12 = dot(&self.q1, &self.a);
        let h22 = dot(&self.q2, &self.a);
        let mut res = 0.0;
        for i in 0..n {
            let r = self.a[i] - h12 * self.q1[i] - h22 * self.q2[i];
            res += r * r;
        }
        let res = res.sqrt();
        // eigenvalues of [[h11, h12], [h21, h22]]
        let half_tr = 0.5 * (h11 + h22);
        let det = h11 * h22 - h12 * h21;
        let disc = Complex::new(half_tr * half_tr - det, 0.0).sqrt();
        let l1 = Complex::new(half_tr, 0.0) + disc;
        let l2 = Complex::new(half_tr, 0.0) - disc;
        let lmax = l1.norm().max(l2.norm());
        if !(lmax.is_finite() && res <= RITZ_RESIDUAL * lmax) {
            return None;
        }
        Some([l1, l2])
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::multistep::{BDF_ALPHA_DEG, NDF_ALPHA_DEG, NDF_KAPPA};

    fn c(re: f64, im: f64) -> Complex<f64> {
        Complex::new(re, im)
    }

    #[test]
    fn the_schur_cohn_test_agrees_with_the_roots() {
        let mut n = 0;
        for k in 1..=5 {
            for kappa in [0.0, NDF_KAPPA[k - 1]] {
                for i in 0..40 {
                    let m = 10f64.powf(-2.0 + 4.0 * i as f64 / 39.0);
                    for j in 0..=18 {
                        let th = (90.0 + 5.0 * j as f64).to_radians();
                        let z = c(m * th.cos(), m * th.sin());
                        let rho = root_radius(k, kappa, z);
                        for r in [0.5, 0.9, 0.99, 1.0, 1.01] {
                            if (rho - r).abs() > 1e-7 {
                                assert_eq!(
                                    roots_within(k, kappa, z, r),
                                    rho < r,
                                    "k {k} κ {kappa} z {z} ρ {rho} r {r}"
                                );
                                n += 1;
                            }
                        }
                    }
                }
            }
        }
        assert!(n > 30_000);
    }

    #[test]
    fn implicit_euler_radius_is_one_over_one_minus_z() {
        for z in [c(-0.3, 0.0), c(-0.01, 0.5), c(-5.0, 20.0), c(0.2, 0.1)] {
            let r = root_radius(1, 0.0, z);
            assert!((r - 1.0 / (1.0 - z).norm()).abs() < 1e-12, "{z}: {r}");
        }
    }

    #[test]
    fn the_formulas_are_zero_stable_and_consistent() {
        // z = 0: the principal root ζ = 1, the others inside the unit disc
        for k in 1..=5 {
            for kappa in [0.0, NDF_KAPPA[k - 1]] {
                let r = root_radius(k, kappa, c(0.0, 0.0));
                assert!((r - 1.0).abs() < 1e-9, "k {k} κ {kappa}: {r}");
            }
        }
    }

    #[test]
    fn bdf3_amplifies_a_lightly_damped_oscillation_near_h_omega_one_half() {
        // values computed independently (numpy.roots of the same polynomial)
        let z = c(-0.004, 0.4);
        assert!((root_radius(3, 0.0, z) - 1.0014).abs() < 1e-4);
        assert!((root_radius(2, 0.0, z) - 0.9919).abs() < 1e-4);
        assert!((root_radius(4, 0.0, z) - 0.9972).abs() < 1e-4);
        let z = c(-0.01, 1.0);
        assert!((root_radius(5, 0.0, z) - 1.1272).abs() < 1e-4);
    }

    /// The A(α) angles (Hairer–Wanner II, Table V.2.1; Shampine–Reichelt
    /// Table 1): inside the sector |arg(−z)| < α every |z| is stable; just
    /// outside it some |z| is not.
    #[test]
    fn the_stability_sectors_have_the_published_angles() {
        for k in 3..=5 {
            for (kappa, alpha) in [
                (0.0, BDF_ALPHA_DEG[k - 1]),
                (NDF_KAPPA[k - 1], NDF_ALPHA_DEG[k - 1]),
            ] {
                let radii: Vec<f64> = (0..400)
                    .map(|i| 10f64.powf(-2.0 + 5.0 * i as f64 / 399.0))
                    .collect();
                let worst = |deg: f64| {
                    let th = (180.0 - deg).to_radians();
                    radii
                        .iter()
                        .map(|&r| root_radius(k, kappa, c(r * th.cos(), r * th.sin())))
                        .fold(0.0, f64::max)
                };
                assert!(worst(alpha - 1.0) <= 1.0 + 1e-9, "k {k} κ {kappa} inside");
                assert!(worst(alpha + 1.5) > 1.0, "k {k} κ {kappa} outside");
            }
        }
    }

    #[test]
    fn a_stable_orders_are_always_admissible_in_the_left_half_plane() {
        for k in [1, 2] {
            for kappa in [0.0, NDF_KAPPA[k - 1]] {
                for i in 0..60 {
                    let r = 10f64.powf(-3.0 + 7.0 * i as f64 / 59.0);
                    for j in 0..=45 {
                        let th = (90.0 + 2.0 * j as f64).to_radians();
                        let z = c(r * th.cos(), r * th.sin());
                        assert!(damps_enough(k, kappa, z, 0.0), "k {k} κ {kappa} z {z}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_rule_caps_bdf3_to_4_but_not_bdf5_on_a_lightly_damped_mode() {
        // ζ = 0.01, ω = 1e4 (P-B): BDF3 inadmissible at hω = 0.4,
        // admissible at 0.2 and again at 3; BDF5 admissible at 0.5
        let l = c(-100.0, 1e4 * (1.0f64 - 1e-4).sqrt());
        let modes = [l, l.conj()];
        let eta = 1e-4;
        assert!(!admissible(3, 0.0, 0.4e-4, &modes, eta));
        assert!(admissible(3, 0.0, 0.2e-4, &modes, eta));
        assert!(admissible(3, 0.0, 3e-4, &modes, eta));
        assert!(admissible(5, 0.0, 0.5e-4, &modes, eta));
        assert!(!admissible(4, 0.0, 0.6e-4, &modes, eta));
        let h = largest_admissible_step(3, 0.0, 0.0, 0.4e-4, &modes, eta);
        assert!(h > 0.2e-4 && h < 0.4e-4, "{h}");
        assert!(!admissible(3, 0.0, h * 1.01, &modes, eta));
        assert!(admissible(3, 0.0, h, &modes, eta));
        // a loose tolerance accepts BDF3's dissipation error at hω = 0.4
        assert!(admissible(3, 0.0, 0.4e-4, &modes, 1e-2));
    }

    #[test]
    fn an_undamped_oscillation_resolved_for_accuracy_is_admissible() {
        // BDF3 amplifies y' = iωy at every small hω, by about 0.2 (hω)^4 per
        // step: accuracy, not instability, when within the tolerance
        let modes = [c(0.0, 1.0), c(0.0, -1.0)];
        let r = root_radius(3, 0.0, c(0.0, 0.05));
        assert!(r > 1.0 && r - 1.0 < 1e-5, "{r}");
        assert!(!admissible(3, 0.0, 0.05, &modes, 0.0));
        assert!(admissible(3, 0.0, 0.05, &modes, 1e-5));
        assert!(!admissible(3, 0.0, 0.5, &modes, 1e-5));
    }

    #[test]
    fn ritz_values_of_an_oscillator_are_its_eigenvalues() {
        // x'' = −k x − b x' as y = (x, v): λ = −b/2 ± i √(k − b²/4)
        let (k, b) = (1e8, 2e2);
        let j = DMatrix::from_row_slice(2, 2, &[0.0, 1.0, -k, -b]);
        let mut m = ModeEstimate::new(2);
        let w = [1e6, 1e3];
        let l = m.estimate(&j, &[1e-7, 3e-4], &w).unwrap();
        let im = (k - b * b / 4.0).sqrt();
        let mut ims = [l[0].im, l[1].im];
        ims.sort_by(f64::total_cmp);
        assert!((l[0].re + 100.0).abs() < 1e-6 * im && (l[1].re + 100.0).abs() < 1e-6 * im);
        assert!(
            (ims[0] + im).abs() < 1e-9 * im && (ims[1] - im).abs() < 1e-9 * im,
            "{l:?}"
        );
    }

    #[test]
    fn a_vector_mixing_distinct_modes_gives_no_estimate() {
        // two undamped oscillators, ω = 1 and ω = 3, e along both
        #[rustfmt::skip]
        let j = DMatrix::from_row_slice(4, 4, &[
            0.0, 1.0, 0.0, 0.0,
            -1.0, 0.0, 0.0, 0.0,
            0.0, 0.0, 0.0, 1.0,
            0.0, 0.0, -9.0, 0.0,
        ]);
        let mut m = ModeEstimate::new(4);
        assert!(m.estimate(&j, &[1.0, 0.0, 1.0, 0.0], &[1.0; 4]).is_none());
        // e along one of them gives its pair ±3i
        let l = m.estimate(&j, &[0.0, 0.0, 1.0, 0.5], &[1.0; 4]).unwrap();
        assert!(
            (l[0].norm() - 3.0).abs() < 1e-12 && l[0].re.abs() < 1e-12,
            "{l:?}"
        );
        // an eigenvector gives its eigenvalue
        let j = DMatrix::from_diagonal(&nalgebra::DVector::from_vec(vec![-1.0, -100.0, -1e4]));
        let mut m = ModeEstimate::new(3);
        let l = m.estimate(&j, &[0.0, 2.0, 0.0], &[1.0; 3]).unwrap();
        assert_eq!(l[0], Complex::new(-100.0, 0.0));
    }
}
