//! Diagonally implicit Runge-Kutta tableaux (SDIRK, ESDIRK), as data.
//!
//! A DIRK method with s stages, lower-triangular A, weights b and nodes
//! c = A·1 computes, for i = 1..s,
//!
//! Y_i = y_n + h Σ_{j<i} a_ij k_j + h a_ii f(t_n + c_i h, Y_i),  k_i = f(t_n + c_i h, Y_i),
//!
//! y_{n+1} = y_n + h Σ b_i k_i (Hairer–Wanner II, Section IV.6).
//! [`DirkTableau::new`] proves the structure the driver relies on.

use crate::error::IntegrateError;
use crate::implicit::stability::{rk_stability, C64};

/// Structural class of a DIRK tableau, proved by [`DirkTableau::new`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DirkKind {
    /// Singly diagonally implicit: a_ii = γ ≠ 0 for every stage.
    Sdirk {
        /// The common diagonal γ.
        gamma: f64,
    },
    /// Explicit first stage (a_11 = 0, first row zero, so Y_1 = y_n), then a
    /// constant diagonal γ ≠ 0.
    Esdirk {
        /// The common diagonal γ of stages 2..s.
        gamma: f64,
    },
}

impl DirkKind {
    /// The diagonal γ of the implicit stages.
    pub fn gamma(&self) -> f64 {
        match *self {
            DirkKind::Sdirk { gamma } | DirkKind::Esdirk { gamma } => gamma,
        }
    }
}

/// A validated SDIRK/ESDIRK tableau.
#[derive(Clone, Debug, PartialEq)]
pub struct DirkTableau {
    /// Registry name.
    pub name: &'static str,
    /// Order of y_{n+1}.
    pub order: u32,
    /// Order of the embedded solution ŷ = y_n + h Σ b̂_i k_i.
    pub embedded_order: Option<u32>,
    /// Full s × s matrix A (row-major), lower triangular.
    pub a: Vec<Vec<f64>>,
    /// Weights b.
    pub b: Vec<f64>,
    /// Embedded weights b̂.
    pub b_hat: Option<Vec<f64>>,
    /// Nodes c = A·1.
    pub c: Vec<f64>,
    /// SDIRK or ESDIRK, with γ.
    pub kind: DirkKind,
    /// b equals the last row of A (y_{n+1} = Y_s, and c_s = 1).
    pub stiffly_accurate: bool,
}

fn bad(name: &str, msg: String) -> IntegrateError {
    IntegrateError::BadMethod(format!("DIRK tableau '{name}': {msg}"))
}

impl DirkTableau {
    /// Build and validate a tableau: A square s × s and lower triangular
    /// (a_ij = 0 for j > i); b (and b̂) of length s; all entries finite;
    /// the diagonal either constant and nonzero (SDIRK) or zero in the
    /// first stage, whose row must be zero, and constant nonzero after it
    /// (ESDIRK). The nodes are c = A·1.
    ///
    /// # Errors
    /// [`IntegrateError::BadMethod`] naming the offending entry.
    pub fn new(
        name: &'static str,
        order: u32,
        embedded_order: Option<u32>,
        a: Vec<Vec<f64>>,
        b: Vec<f64>,
        b_hat: Option<Vec<f64>>,
    ) -> Result<Self, IntegrateError> {
        let s = b.len();
        if s == 0 {
            return Err(bad(name, "no stages".into()));
        }
        if a.len() != s {
            return Err(bad(
                name,
                format!("A has {} rows, b has {s} entries", a.len()),
            ));
        }
        for (i, row) in a.iter().enumerate() {
            if row.len() != s {
                return Err(bad(
                    name,
                    format!("row {i} of A has {} entries, expected {s}", row.len()),
                ));
            }
            for (j, v) in row.iter().enumerate() {
                if !v.is_finite() {
                    return Err(bad(name, format!("a[{i}][{j}] = {v} is not finite")));
                }
                if j > i && *v != 0.0 {
                    return Err(bad(
                        name,
                        format!(
                            "a[{i}][{j}] = {v} lies above the diagonal: A must be lower triangular"
                        ),
                    ));
                }
            }
        }
        if let Some(v) = b.iter().find(|v| !v.is_finite()) {
            return Err(bad(name, format!("weight {v} is not finite")));
        }
        if let Some(bh) = &b_hat {
            if bh.len() != s {
                return Err(bad(
                    name,
                    format!("b_hat has {} entries, expected {s}", bh.len()),
                ));
            }
            if let Some(v) = bh.iter().find(|v| !v.is_finite()) {
                return Err(bad(name, format!("embedded weight {v} is not finite")));
            }
        }
        let kind = if a[0][0] == 0.0 {
            if s < 2 {
                return Err(bad(
                    name,
                    "a one-stage method needs a nonzero diagonal".into(),
                ));
            }
            let g = a[1][1];
            if a[0].iter().any(|v| *v != 0.0) {
                return Err(bad(
                    name,
                    "explicit first stage must have a zero first row".into(),
                ));
            }
            DirkKind::Esdirk { gamma: g }
        } else {
            DirkKind::Sdirk { gamma: a[0][0] }
        };
        let g = kind.gamma();
        let first_implicit = matches!(kind, DirkKind::Esdirk { .. }) as usize;
        for (i, row) in a.iter().enumerate().skip(first_implicit) {
            if row[i] != g || g == 0.0 {
                return Err(bad(
                    name,
                    format!(
                        "a[{i}][{i}] = {} differs from γ = {g}: the diagonal must be constant and nonzero",
                        row[i]
                    ),
                ));
            }
        }
        let c: Vec<f64> = a.iter().map(|row| row.iter().sum()).collect();
        let stiffly_accurate = a[s - 1] == b;
        Ok(Self {
            name,
            order,
            embedded_order,
            a,
            b,
            b_hat,
            c,
            kind,
            stiffly_accurate,
        })
    }

    /// Number of stages s.
    pub fn stages(&self) -> usize {
        self.b.len()
    }

    /// Stability function R(z) = 1 + z bᵀ(I − zA)⁻¹1.
    pub fn stability(&self, z: C64) -> C64 {
        rk_stability(&self.a, &self.b, z)
    }

    /// Backward (implicit) Euler: y_{n+1} = y_n + h f(t_{n+1}, y_{n+1}).
    /// Order 1, L-stable (Hairer–Wanner II, IV.3, Table 3.1).
    pub fn backward_euler() -> Self {
        Self::new("backward_euler", 1, None, vec![vec![1.0]], vec![1.0], None)
            .expect("valid tableau")
    }

    /// Trapezoidal rule as a two-stage ESDIRK (Lobatto IIIA, s = 2):
    /// y_{n+1} = y_n + h/2 (f_n + f_{n+1}). Order 2, A-stable with
    /// |R(∞)| = 1 (Hairer–Wanner II, IV.3, Table 3.1; HNW I, II.7).
    pub fn trapezoidal() -> Self {
        Self::new(
            "trapezoidal",
            2,
            None,
            vec![vec![0.0, 0.0], vec![0.5, 0.5]],
            vec![0.5, 0.5],
            None,
        )
        .expect("valid tableau")
    }

    /// Implicit midpoint rule (Gauss, s = 1):
    /// y_{n+1} = y_n + h f(t_n + h/2, (y_n + y_{n+1})/2). Order 2, A-stable,
    /// symplectic (HNW I, II.7, Table 7.1; Hairer–Lubich–Wanner, GNI, II.1).
    pub fn implicit_midpoint() -> Self {
        Self::new(
            "implicit_midpoint",
            2,
            None,
            vec![vec![0.5]],
            vec![1.0],
            None,
        )
        .expect("valid tableau")
    }

    /// Nørsett's two-stage SDIRK family (Nørsett 1974; Hairer–Wanner II,
    /// IV.6, Table 6.1 with γ = α):
    ///
    /// A = [[α, 0], [1 − 2α, α]], b = [1/2, 1/2], c = [α, 1 − α].
    ///
    /// Order 2 for every α (bᵀc = 1/2); order 3 for α = (3 ± √3)/6
    /// (bᵀc² = 1/3). A-stable for α ≥ 1/4. R(∞) = (2α² − 4α + 1)/(2α²)
    /// vanishes at α = 1 − √2/2, which is then L-stable.
    ///
    /// # Errors
    /// When α is not finite or zero.
    pub fn norsett_sdirk2(name: &'static str, alpha: f64) -> Result<Self, IntegrateError> {
        if !alpha.is_finite() || alpha == 0.0 {
            return Err(bad(
                name,
                format!("parameter alpha = {alpha} must be finite and nonzero"),
            ));
        }
        let third = (3.0 + 3f64.sqrt()) / 6.0;
        let third_minus = (3.0 - 3f64.sqrt()) / 6.0;
        let order = if (alpha - third).abs() < 1e-14 || (alpha - third_minus).abs() < 1e-14 {
            3
        } else {
            2
        };
        Self::new(
            name,
            order,
            None,
            vec![vec![alpha, 0.0], vec![1.0 - 2.0 * alpha, alpha]],
            vec![0.5, 0.5],
            None,
        )
    }

    /// The L-stable parameter of the Nørsett family, α = 1 − √2/2.
    pub fn sdirk2_l_alpha() -> f64 {
        1.0 - 0.5 * 2f64.sqrt()
    }

    /// The third-order A-stable parameter of the Nørsett family, α = (3 + √3)/6.
    pub fn sdirk3_alpha() -> f64 {
        (3.0 + 3f64.sqrt()) / 6.0
    }

    /// TR-BDF2 as a three-stage ESDIRK with embedded third-order error
    /// estimate: Bank, Coughran, Fichtner, Grosse, Rose, Smith, IEEE Trans.
    /// CAD 4 (1985); Hosea & Shampine, Appl. Numer. Math. 20 (1996) 21–37,
    /// Section 2 (the scheme of MATLAB's ode23tb). With γ = 2 − √2,
    /// d = γ/2, w = √2/4:
    ///
    /// A = [[0, 0, 0], [d, d, 0], [w, w, d]], b = [w, w, d],
    /// b̂ = [(1 − w)/3, (3w + 1)/3, d/3], c = [0, γ, 1].
    ///
    /// Order 2, L-stable, stiffly accurate; b̂ has order 3.
    pub fn trbdf2() -> Self {
        let g = 2.0 - 2f64.sqrt();
        let d = 0.5 * g;
        let w = 0.25 * 2f64.sqrt();
        Self::new(
            "trbdf2",
            2,
            Some(3),
            vec![vec![0.0, 0.0, 0.0], vec![d, d, 0.0], vec![w, w, d]],
            vec![w, w, d],
            Some(vec![(1.0 - w) / 3.0, (3.0 * w + 1.0) / 3.0, d / 3.0]),
        )
        .expect("valid tableau")
    }

    /// ESDIRK4(3)6L\[2\]SA of Kennedy & Carpenter, "Additive Runge-Kutta
    /// schemes for convection-diffusion-reaction equations", Appl. Numer.
    /// Math. 44 (2003) 139–181, Section 4 / Table 6 (the implicit part of
    /// ARK4(3)6L\[2\]SA; SUNDIALS ARKODE `ARK436L2SA_DIRK_6_3_4`). Six stages,
    /// γ = 1/4, c = (0, 1/2, 83/250, 31/50, 17/20, 1), stiffly accurate,
    /// L-stable, order 4 with an embedded third-order solution b̂.
    #[rustfmt::skip]
    pub fn esdirk43() -> Self {
        let g = 0.25;
        Self::new(
            "esdirk43",
            4,
            Some(3),
            vec![
                vec![0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                vec![g, g, 0.0, 0.0, 0.0, 0.0],
                vec![8611.0 / 62500.0, -1743.0 / 31250.0, g, 0.0, 0.0, 0.0],
                vec![5012029.0 / 34652500.0, -654441.0 / 2922500.0, 174375.0 / 388108.0, g, 0.0, 0.0],
                vec![15267082809.0 / 155376265600.0, -71443401.0 / 120774400.0, 730878875.0 / 902184768.0, 2285395.0 / 8070912.0, g, 0.0],
                vec![82889.0 / 524892.0, 0.0, 15625.0 / 83664.0, 69875.0 / 102672.0, -2260.0 / 8211.0, g],
            ],
            vec![82889.0 / 524892.0, 0.0, 15625.0 / 83664.0, 69875.0 / 102672.0, -2260.0 / 8211.0, g],
            Some(vec![
                4586570599.0 / 29645900160.0, 0.0, 178811875.0 / 945068544.0,
                814220225.0 / 1159782912.0, -3700637.0 / 11593932.0, 61727.0 / 225920.0,
            ]),
        )
        .expect("valid tableau")
    }
}
