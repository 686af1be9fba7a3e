//! The coefficients of the structural family as data: Newmark, HHT-α,
//! generalized-α, the midpoint rule, Wilson-θ and the collocation methods,
//! all as one set of numbers that the single driver in `driver.rs` reads.
//!
//! Every member uses the Newmark difference equations (jalon-bayo eqs. 7.28,
//! 7.29) over the step h:
//!
//! ```text
//! q_{n+1} = q_n + h v_n + h² [(1/2 − β) a_n + β a_{n+1}]
//! v_{n+1} = v_n + h [(1 − γ) a_n + γ a_{n+1}]
//! ```
//!
//! and differs only in *where* the equation of motion M(q) a = f(t, q, v) is
//! enforced. That "balance point" is an affine function of a_{n+1}:
//!
//! ```text
//! t_b = t_n + c h
//! q_b = q_n + c h v_n + h² (b0 a_n + b1 a_{n+1})
//! v_b = v_n + h (g0 a_n + g1 a_{n+1})
//! a_b = m0 a_n + m1 a_{n+1}
//! M(q_b) a_b = f(t_b, q_b, v_b)
//! ```
//!
//! - generalized-α (Chung & Hulbert 1993, J. Appl. Mech. 60:371–375, eqs. 5–7):
//!   x_b = (1 − α_f) x_{n+1} + α_f x_n for x ∈ {t, q, v}, a_b = (1 − α_m) a_{n+1} + α_m a_n,
//!   so c = 1 − α_f, b0 = c (1/2 − β), b1 = c β, g0 = c (1 − γ), g1 = c γ,
//!   m0 = α_m, m1 = 1 − α_m. Newmark is α_m = α_f = 0, HHT-α is α_m = 0,
//!   α_f = −α (Chung & Hulbert, Section 3), the midpoint rule
//!   (jalon-bayo eq. 7.35) is α_m = α_f = 1/2 with β = 1/4, γ = 1/2.
//! - collocation (Hilber & Hughes 1978, Earthquake Eng. Struct. Dyn. 6:99–117;
//!   jalon-bayo eqs. 7.37–7.41): the Newmark equations over θh give the
//!   balance point and a_b = (1 − θ) a_n + θ a_{n+1}, so c = θ,
//!   b0 = θ² (1/2 − βθ), b1 = βθ³, g0 = θ (1 − γθ), g1 = γθ², m0 = 1 − θ,
//!   m1 = θ. Wilson-θ (Wilson 1968; Bathe 1982) is β = 1/6, γ = 1/2.
//!
//! With θ = 1 and α_m = α_f = 0 both reduce to Newmark, so the family is
//! exactly one set of balance coefficients per method.

use nalgebra::Matrix3;

use crate::error::IntegrateError;

/// Coefficients of the balance point (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Balance {
    /// t_b = t_n + c h.
    pub c: f64,
    /// Weight of a_n in q_b (times h²).
    pub b0: f64,
    /// Weight of a_{n+1} in q_b (times h²).
    pub b1: f64,
    /// Weight of a_n in v_b (times h).
    pub g0: f64,
    /// Weight of a_{n+1} in v_b (times h).
    pub g1: f64,
    /// Weight of a_n in a_b.
    pub m0: f64,
    /// Weight of a_{n+1} in a_b.
    pub m1: f64,
}

/// One member of the structural family.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StructuralScheme {
    /// Registry name of the method.
    pub name: &'static str,
    /// Newmark β (> 0: this driver solves for q_{n+1}).
    pub beta: f64,
    /// Newmark γ.
    pub gamma: f64,
    /// Generalized-α weight α_m of a_n in the inertia term.
    pub alpha_m: f64,
    /// Generalized-α weight α_f of the step start in the forces.
    pub alpha_f: f64,
    /// Collocation parameter θ ≥ 1 (1 for the α-family).
    pub theta: f64,
    /// The energy-conserving form of the trapezoidal rule (Newmark β = 1/4,
    /// γ = 1/2 only): the equations of motion averaged over the step with
    /// the constraint forces through a discrete gradient of Φ (Gonzalez
    /// 1999), see [`StructuralScheme::energy_conserving`].
    pub discrete_gradient: bool,
}

fn bad(name: &str, msg: String) -> IntegrateError {
    IntegrateError::BadMethod(format!("integrator '{name}': {msg}"))
}

fn finite(name: &str, what: &str, x: f64) -> Result<f64, IntegrateError> {
    if x.is_finite() {
        Ok(x)
    } else {
        Err(bad(
            name,
            format!("parameter '{what}' must be finite, got {x}"),
        ))
    }
}

impl StructuralScheme {
    /// Newmark (1959) with parameters β > 0, γ > 0 (jalon-bayo eqs. 7.28–7.29).
    /// β = 1/4, γ = 1/2 is the trapezoidal rule (average acceleration):
    /// second order, A-stable, no numerical damping. γ ≠ 1/2: first order;
    /// unconditionally stable for 2β ≥ γ ≥ 1/2.
    ///
    /// # Errors
    /// [`IntegrateError::BadMethod`] for β ≤ 0 or γ ≤ 0 or non-finite values.
    pub fn newmark(beta: f64, gamma: f64) -> Result<Self, IntegrateError> {
        let (beta, gamma) = (
            finite("newmark", "beta", beta)?,
            finite("newmark", "gamma", gamma)?,
        );
        if beta <= 0.0 {
            return Err(bad(
                "newmark",
                format!("beta = {beta} must be positive (beta = 0 is the explicit central-difference method, not supported by the implicit driver)"),
            ));
        }
        if gamma <= 0.0 {
            return Err(bad("newmark", format!("gamma = {gamma} must be positive")));
        }
        Ok(Self {
            name: "newmark",
            beta,
            gamma,
            alpha_m: 0.0,
            alpha_f: 0.0,
            theta: 1.0,
            discrete_gradient: false,
        })
    }

    /// The energy-conserving trapezoidal rule: Newmark β = 1/4, γ = 1/2
    /// (q_{n+1} − q_n = h (v_n + v_{n+1})/2) with the average acceleration
    /// ā = (v_{n+1} − v_n)/h of the step from the equations of motion
    /// averaged over it, and the constraint forces through a discrete
    /// gradient G(q_n, q_{n+1}) of Φ, G Δq = Φ(q_{n+1}) − Φ(q_n) (Gonzalez
    /// 1999, Physica D 132:165–174, the midpoint discrete gradient of
    /// Gonzalez 1996, J. Nonlinear Sci. 6:449–467):
    ///
    /// ```text
    /// M(q_{n+1/2}) ā = (Q_n + Q_{n+1})/2 − Gᵀ λ_{n+1/2},    Φ(t_{n+1}, q_{n+1}) = 0
    /// G_k = Φ_{k,q}(q_{n+1/2}) + [Φ_k(q_{n+1}) − Φ_k(q_n) − Φ_{k,q}(q_{n+1/2}) Δq] Δqᵀ/|Δq|²
    /// ```
    ///
    /// With a constant M (body coordinates) the kinetic energy changes by
    /// Δqᵀ(Q_n + Q_{n+1})/2 − (G Δq)ᵀλ: the constraint forces do no work
    /// at all (G Δq = ΔΦ = 0), and linear elastic forces conserve
    /// V exactly, so the energy of a conservative model is kept to the
    /// Newton tolerance whatever the step. The end-point form of the
    /// trapezoidal rule (Φ_q(q_{n+1})ᵀλ_{n+1} averaged with its value at
    /// q_n) lets the constraint forces work and needs the velocity
    /// projection that keeps its multipliers bounded, which dissipates.
    pub fn energy_conserving() -> Self {
        Self {
            name: "newmark",
            beta: 0.25,
            gamma: 0.5,
            alpha_m: 0.0,
            alpha_f: 0.0,
            theta: 1.0,
            discrete_gradient: true,
        }
    }

    /// HHT-α (Hilber, Hughes & Taylor 1977, Earthquake Eng. Struct. Dyn.
    /// 5:283–292; jalon-bayo eq. 7.36) with α ∈ [−1/3, 0]:
    /// β = (1 − α)²/4, γ = 1/2 − α, realised as the α_m = 0, α_f = −α member
    /// of generalized-α. Second order, A-stable, ρ∞ = (1 + α)/(1 − α).
    ///
    /// # Errors
    /// [`IntegrateError::BadMethod`] for α outside [−1/3, 0].
    pub fn hht(alpha: f64) -> Result<Self, IntegrateError> {
        let alpha = finite("hht", "alpha", alpha)?;
        if !(-1.0 / 3.0 - 1e-12..=0.0).contains(&alpha) {
            return Err(bad(
                "hht",
                format!("alpha = {alpha} must lie in [-1/3, 0] (Hilber-Hughes-Taylor 1977)"),
            ));
        }
        Ok(Self {
            name: "hht",
            beta: 0.25 * (1.0 - alpha).powi(2),
            gamma: 0.5 - alpha,
            alpha_m: 0.0,
            alpha_f: -alpha,
            theta: 1.0,
            discrete_gradient: false,
        })
    }

    /// Generalized-α (Chung & Hulbert 1993, eqs. 25 and 17, 20) with the
    /// spectral radius at infinity ρ∞ ∈ [0, 1]:
    /// α_m = (2ρ∞ − 1)/(ρ∞ + 1), α_f = ρ∞/(ρ∞ + 1), γ = 1/2 − α_m + α_f,
    /// β = (1 − α_m + α_f)²/4. Second order, A-stable, with minimal
    /// low-frequency damping for the chosen high-frequency damping.
    ///
    /// # Errors
    /// [`IntegrateError::BadMethod`] for ρ∞ outside [0, 1].
    pub fn generalized_alpha(rho_inf: f64) -> Result<Self, IntegrateError> {
        let rho = finite("generalized_alpha", "rho_inf", rho_inf)?;
        if !(0.0..=1.0).contains(&rho) {
            return Err(bad(
                "generalized_alpha",
                format!("rho_inf = {rho} must lie in [0, 1]"),
            ));
        }
        let am = (2.0 * rho - 1.0) / (rho + 1.0);
        let af = rho / (rho + 1.0);
        Ok(Self {
            name: "generalized_alpha",
            beta: 0.25 * (1.0 - am + af).powi(2),
            gamma: 0.5 - am + af,
            alpha_m: am,
            alpha_f: af,
            theta: 1.0,
            discrete_gradient: false,
        })
    }

    /// The midpoint rule (jalon-bayo eq. 7.35; Simo & Wong 1991): the Newmark
    /// trapezoidal interpolation with the equation of motion enforced at
    /// q_{n+1/2} = (q_n + q_{n+1})/2, v_{n+1/2}, a_{n+1/2}, t_{n+1/2} — the
    /// α_m = α_f = 1/2, β = 1/4, γ = 1/2 member of generalized-α. It is the
    /// implicit midpoint rule on y = [q; v]: second order, symmetric,
    /// energy conserving for linear systems, ρ∞ = 1.
    pub fn midpoint() -> Self {
        Self {
            name: "midpoint_rule",
            beta: 0.25,
            gamma: 0.5,
            alpha_m: 0.5,
            alpha_f: 0.5,
            theta: 1.0,
            discrete_gradient: false,
        }
    }

    /// Collocation (Hilber & Hughes 1978; jalon-bayo eqs. 7.37–7.42) with
    /// β > 0, γ > 0, θ ≥ 1. Second order and unconditionally stable for
    /// γ = 1/2, θ ≥ 1, θ/(2(θ + 1)) ≥ β ≥ (2θ² − 1)/(8θ³ − 4).
    ///
    /// # Errors
    /// [`IntegrateError::BadMethod`] for β ≤ 0, γ ≤ 0 or θ < 1.
    pub fn collocation(beta: f64, gamma: f64, theta: f64) -> Result<Self, IntegrateError> {
        Self::collocation_named("collocation", beta, gamma, theta)
    }

    /// Wilson-θ (Wilson 1968; Bathe 1982, Section 9.2.3; jalon-bayo eqs.
    /// 7.37–7.39): collocation with β = 1/6, γ = 1/2 (linear acceleration)
    /// and θ ≥ 1.37 for unconditional stability. Second order.
    ///
    /// # Errors
    /// [`IntegrateError::BadMethod`] for θ < 1.37.
    pub fn wilson(theta: f64) -> Result<Self, IntegrateError> {
        let theta = finite("wilson", "theta", theta)?;
        if theta < 1.37 {
            return Err(bad(
                "wilson",
                format!("theta = {theta} must be at least 1.37 for unconditional stability (Wilson 1968)"),
            ));
        }
        Self::collocation_named("wilson", 1.0 / 6.0, 0.5, theta)
    }

    fn collocation_named(
        name: &'static str,
        beta: f64,
        gamma: f64,
        theta: f64,
    ) -> Result<Self, IntegrateError> {
        let beta = finite(name, "beta", beta)?;
        let gamma = finite(name, "gamma", gamma)?;
        let theta = finite(name, "theta", theta)?;
        if beta <= 0.0 {
            return Err(bad(name, format!("beta = {beta} must be positive")));
        }
        if gamma <= 0.0 {
            return Err(bad(name, format!("gamma = {gamma} must be positive")));
        }
        if theta < 1.0 {
            return Err(bad(name, format!("theta = {theta} must be at least 1")));
        }
        Ok(Self {
            name,
            beta,
            gamma,
            alpha_m: 0.0,
            alpha_f: 0.0,
            theta,
            discrete_gradient: false,
        })
    }

    /// The balance-point coefficients (module documentation).
    pub fn balance(&self) -> Balance {
        let (b, g, th) = (self.beta, self.gamma, self.theta);
        if th != 1.0 {
            Balance {
                c: th,
                b0: th * th * (0.5 - b * th),
                b1: b * th * th * th,
                g0: th * (1.0 - g * th),
                g1: g * th * th,
                m0: 1.0 - th,
                m1: th,
            }
        } else {
            let c = 1.0 - self.alpha_f;
            Balance {
                c,
                b0: c * (0.5 - b),
                b1: c * b,
                g0: c * (1.0 - g),
                g1: c * g,
                m0: self.alpha_m,
                m1: 1.0 - self.alpha_m,
            }
        }
    }

    /// Order of accuracy in q and v: 2 when γ = 1/2 − α_m + α_f
    /// (Chung & Hulbert 1993, eq. 17; for collocation γ = 1/2), else 1.
    pub fn order(&self) -> u32 {
        if (self.gamma - (0.5 - self.alpha_m + self.alpha_f)).abs() < 1e-12 {
            2
        } else {
            1
        }
    }

    /// Shift δ = α_m − α_f of the algorithmic accelerations:
    /// a_n ≈ q''(t_n + δ h) (Chung & Hulbert 1993, Section 2).
    fn shift(&self) -> f64 {
        self.alpha_m - self.alpha_f
    }

    /// Coefficients (e_q, e_v) of the local error estimate
    /// e_q = e_q · h² (a_{n+1} − a_n), e_v = e_v · h (a_{n+1} − a_n):
    /// the Zienkiewicz–Xie (1991, Earthquake Eng. Struct. Dyn. 20:871–887)
    /// estimate (β − 1/6) h² Δa for Newmark, extended to the shifted
    /// accelerations of generalized-α, a_n ≈ q''(t_n + δh), δ = α_m − α_f:
    /// e_q = β − 1/6 + δ/2, e_v = γ − 1/2 + δ (zero for second-order members).
    pub fn error_coefficients(&self) -> (f64, f64) {
        let d = self.shift();
        (self.beta - 1.0 / 6.0 + 0.5 * d, self.gamma - 0.5 + d)
    }

    /// Coefficient c_v of the velocity's local error c_v h³ q'''' of a
    /// second-order member (γ = 1/2 − δ), from the asymptotic expansion
    /// a_n = q̈ + δ h q''' + δ (α_m − 1/2) h² q'''' + O(h³) of the
    /// accelerations that solve the averaging
    /// (1 − α_m) a_{n+1} + α_m a_n = (1 − α_f) q̈_{n+1} + α_f q̈_n (exact
    /// for the index-3 end-point form, and for linear forces at the
    /// balance point): v_{n+1} − v(t_n + h) = c_v h³ q'''' + O(h⁴) with
    /// c_v = 1/12 + δ (α_m − 1/2 − δ). 1/12 for Newmark's trapezoidal
    /// rule and the midpoint rule (δ = 0), 0.123 for hht (α = −0.1),
    /// 0.090 for generalized-α (ρ∞ = 0.8).
    pub fn velocity_error_coefficient(&self) -> f64 {
        let d = self.shift();
        1.0 / 12.0 + d * (self.alpha_m - 0.5 - d)
    }
}

impl StructuralScheme {
    /// The amplification matrix A(Ω) of one step (θ = 1 members: Newmark,
    /// HHT-α, generalized-α) on q'' + ω² q = 0 in the scaled state
    /// x = (q, h v, h² a), Ω = ωh, from the generalized-α equations (Chung &
    /// Hulbert 1993, J. Appl. Mech. 60:371–375, eqs. 5–7):
    ///
    /// ```text
    /// (1 − α_m) A₁ + α_m A₀ = −Ω² [(1 − α_f) q₁ + α_f q₀]
    /// q₁ = q₀ + h v₀ + (1/2 − β) A₀ + β A₁,   h v₁ = h v₀ + (1 − γ) A₀ + γ A₁
    /// ```
    ///
    /// with A = h² a. `None` for a collocation scheme (θ ≠ 1).
    pub fn amplification_matrix(&self, omega_h: f64) -> Option<Matrix3<f64>> {
        if self.theta != 1.0 {
            return None;
        }
        let o2 = omega_h * omega_h;
        let (am, af, b, g) = (self.alpha_m, self.alpha_f, self.beta, self.gamma);
        let d = (1.0 - am) + o2 * (1.0 - af) * b;
        // A₁ = (c_q q₀ + c_v h v₀ + c_a A₀) / d
        let a1 = [
            -o2 / d,
            -o2 * (1.0 - af) / d,
            (-am - o2 * (1.0 - af) * (0.5 - b)) / d,
        ];
        let mut m = Matrix3::zeros();
        for j in 0..3 {
            let e = |k: usize| if k == j { 1.0 } else { 0.0 };
            m[(2, j)] = a1[j];
            m[(0, j)] = e(0) + e(1) + (0.5 - b) * e(2) + b * a1[j];
            m[(1, j)] = e(1) + (1.0 - g) * e(2) + g * a1[j];
        }
        Some(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn family_members_reduce_to_newmark() {
        let nm = StructuralScheme::newmark(0.25, 0.5).unwrap().balance();
        assert_eq!(
            nm,
            Balance {
                c: 1.0,
                b0: 0.25,
                b1: 0.25,
                g0: 0.5,
                g1: 0.5,
                m0: 0.0,
                m1: 1.0
            }
        );
        let col = StructuralScheme::collocation(0.25, 0.5, 1.0)
            .unwrap()
            .balance();
        assert_eq!(col, nm);
        // generalized-α with ρ∞ = 1 is the midpoint-type α_m = α_f = 1/2 scheme
        let ga = StructuralScheme::generalized_alpha(1.0).unwrap();
        let mp = StructuralScheme::midpoint();
        assert!((ga.alpha_m - mp.alpha_m).abs() < 1e-15 && (ga.alpha_f - mp.alpha_f).abs() < 1e-15);
        assert_eq!(ga.order(), 2);
        assert_eq!(StructuralScheme::hht(-0.1).unwrap().order(), 2);
        assert_eq!(StructuralScheme::newmark(0.5, 1.0).unwrap().order(), 1);
    }

    #[test]
    fn bad_parameters_are_rejected() {
        assert!(StructuralScheme::newmark(0.0, 0.5).is_err());
        assert!(StructuralScheme::hht(-0.5).is_err());
        assert!(StructuralScheme::hht(0.1).is_err());
        assert!(StructuralScheme::generalized_alpha(1.5).is_err());
        assert!(StructuralScheme::wilson(1.2).is_err());
        assert!(StructuralScheme::collocation(0.2, 0.5, 0.9).is_err());
        assert!(StructuralScheme::newmark(f64::NAN, 0.5).is_err());
    }
}
