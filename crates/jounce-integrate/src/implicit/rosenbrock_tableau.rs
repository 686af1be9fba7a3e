//! Rosenbrock methods as data, in the W-form of rodas.f.
//!
//! Stage i (Hairer–Wanner II, Section IV.7, "Implementation of
//! Rosenbrock-type methods"; the form of rodas.f):
//!
//! (1/(hγ) I − J) u_i = f(t + c_i h, y + Σ_{j<i} a_ij u_j) + Σ_{j<i} (c_ij/h) u_j + h d_i ∂f/∂t,
//!
//! y_{n+1} = y + Σ m_i u_i, error estimate Σ (m_i − m̂_i) u_i.
//! A method given in the classical form (I − hγJ) k_i = f(t + α_i h,
//! y + h Σ α_ij k_j) + hJ Σ_{j<i} γ_ij k_j + h γ_i ∂f/∂t, y_{n+1} = y + h Σ b_i k_i,
//! is converted with u = hΓk: (a_ij) = (α_ij)Γ⁻¹, (c_ij) = diag(γ⁻¹) − Γ⁻¹,
//! m = bᵀΓ⁻¹ (HW II, IV.7, same subsection).

use crate::implicit::stability::{solve_complex, C64};

/// A Rosenbrock method in W-form.
#[derive(Clone, Debug, PartialEq)]
pub struct RosenbrockTableau {
    /// Registry name.
    pub name: &'static str,
    /// Order of y_{n+1}.
    pub order: u32,
    /// Order of the embedded solution.
    pub embedded_order: u32,
    /// Diagonal γ.
    pub gamma: f64,
    /// Nodes c_i (times of the f evaluations).
    pub c: Vec<f64>,
    /// Coefficients d_i of h ∂f/∂t.
    pub d: Vec<f64>,
    /// Strictly lower a_ij (row i has i entries).
    pub a: Vec<Vec<f64>>,
    /// Strictly lower c_ij (row i has i entries).
    pub cm: Vec<Vec<f64>>,
    /// Weights of y_{n+1}.
    pub m: Vec<f64>,
    /// Weights of the embedded solution.
    pub m_hat: Vec<f64>,
}

impl RosenbrockTableau {
    /// Number of stages.
    pub fn stages(&self) -> usize {
        self.m.len()
    }

    /// The last stage is evaluated at (t + h, y_{n+1}), so f(t_{n+1}, y_{n+1})
    /// comes free with the step.
    pub fn fsal(&self) -> bool {
        let s = self.stages();
        self.c[s - 1] == 1.0 && self.m[s - 1] == 0.0 && self.a[s - 1][..] == self.m[..s - 1]
    }

    /// Convert a method given in classical form (Γ lower triangular with
    /// diagonal γ, α strictly lower, b, b̂) to the W-form.
    pub fn from_classical(
        name: &'static str,
        order: u32,
        embedded_order: u32,
        gam: &[Vec<f64>],
        alpha: &[Vec<f64>],
        b: &[f64],
        b_hat: &[f64],
    ) -> Self {
        let s = b.len();
        let gamma = gam[0][0];
        // Γ⁻¹ by forward substitution, column by column
        let mut gi = vec![vec![0.0; s]; s];
        for col in 0..s {
            for i in 0..s {
                let mut acc = if i == col { 1.0 } else { 0.0 };
                for j in 0..i {
                    acc -= gam[i][j] * gi[j][col];
                }
                gi[i][col] = acc / gam[i][i];
            }
        }
        let mut a = Vec::with_capacity(s);
        let mut cm = Vec::with_capacity(s);
        let mut c = Vec::with_capacity(s);
        let mut d = Vec::with_capacity(s);
        for i in 0..s {
            let ai: Vec<f64> = (0..i)
                .map(|j| (j..i).map(|k| alpha[i][k] * gi[k][j]).sum())
                .collect();
            a.push(ai);
            cm.push((0..i).map(|j| -gi[i][j]).collect());
            c.push((0..i).map(|k| alpha[i][k]).sum());
            d.push((0..=i).map(|k| gam[i][k]).sum());
        }
        let m = (0..s)
            .map(|j| (j..s).map(|k| b[k] * gi[k][j]).sum())
            .collect();
        let m_hat = (0..s)
            .map(|j| (j..s).map(|k| b_hat[k] * gi[k][j]).sum())
            .collect();
        Self {
            name,
            order,
            embedded_order,
            gamma,
            c,
            d,
            a,
            cm,
            m,
            m_hat,
        }
    }

    /// The modified Rosenbrock formula of MATLAB's ode23s: Shampine &
    /// Reichelt, "The MATLAB ODE suite", SIAM J. Sci. Comput. 18 (1997)
    /// 1–22, Section 3, with d = 1/(2 + √2), e32 = 6 + √2:
    ///
    /// W = I − hdJ; W k1 = F0 + hdT; F1 = f(t + h/2, y + h k1/2);
    /// W(k2 − k1) = F1 − k1; y_{n+1} = y + h k2; F2 = f(t + h, y_{n+1});
    /// W k3 = F2 − e32(k2 − F1) − 2(k1 − F0) + hdT; err = h(k1 − 2k2 + k3)/6.
    ///
    /// In classical Rosenbrock form (derived by eliminating F0, F1 with the
    /// stage equations): γ = d, γ21 = −d, γ31 = d(e32 − 2), γ32 = −d·e32,
    /// α21 = 1/2, α32 = 1, b = (0, 1, 0), b − b̂ = (1, −2, 1)/6.
    /// Order 2 (L-stable), error estimator of order 3.
    pub fn ode23s() -> Self {
        let d = 1.0 / (2.0 + 2f64.sqrt());
        let e32 = 6.0 + 2f64.sqrt();
        let gam = vec![
            vec![d, 0.0, 0.0],
            vec![-d, d, 0.0],
            vec![d * (e32 - 2.0), -d * e32, d],
        ];
        let alpha = vec![vec![0.0; 3], vec![0.5, 0.0, 0.0], vec![0.0, 1.0, 0.0]];
        let b = [0.0, 1.0, 0.0];
        let b_hat = [-1.0 / 6.0, 4.0 / 3.0, -1.0 / 6.0];
        Self::from_classical("ode23s", 2, 3, &gam, &alpha, &b, &b_hat)
    }

    /// Rodas4 (Hairer & Wanner, Solving ODEs II, 2nd ed., Section VI.4,
    /// "RODAS"; coefficients of rodas.f, subroutine ROCOE, METH = 1,
    /// already in W-form, with γ = 0.25). Six stages, stiffly accurate
    /// (y_{n+1} = stage-6 input + u6), order 4, embedded order 3
    /// (error estimate u6), L-stable.
    #[rustfmt::skip]
    #[allow(clippy::excessive_precision)] // verbatim from rodas.f
    pub fn rodas4() -> Self {
        let a5 = vec![0.1221224509226641e+01, 0.6019134481288629e+01, 0.1253708332932087e+02, -0.6878860361058950e+00];
        let mut a6 = a5.clone();
        a6.push(1.0);
        let mut m = a6.clone();
        m.push(1.0);
        let mut m_hat = a6.clone();
        m_hat.push(0.0);
        Self {
            name: "rodas4",
            order: 4,
            embedded_order: 3,
            gamma: 0.25,
            c: vec![0.0, 0.386, 0.21, 0.63, 1.0, 1.0],
            d: vec![0.25, -0.1043, 0.1035, -0.3620000000000023e-01, 0.0, 0.0],
            a: vec![
                vec![],
                vec![0.1544000000000000e+01],
                vec![0.9466785280815826e+00, 0.2557011698983284e+00],
                vec![0.3314825187068521e+01, 0.2896124015972201e+01, 0.9986419139977817e+00],
                a5,
                a6,
            ],
            cm: vec![
                vec![],
                vec![-0.5668800000000000e+01],
                vec![-0.2430093356833875e+01, -0.2063599157091915e+00],
                vec![-0.1073529058151375e+00, -0.9594562251023355e+01, -0.2047028614809616e+02],
                vec![0.7496443313967647e+01, -0.1024680431464352e+02, -0.3399990352819905e+02, 0.1170890893206160e+02],
                vec![0.8083246795921522e+01, -0.7981132988064893e+01, -0.3152159432874371e+02, 0.1631930543123136e+02, -0.6058818238834054e+01],
            ],
            m,
            m_hat,
        }
    }

    /// Stability function: one step on y' = λy with the exact Jacobian,
    /// z = hλ: (1/γ − z) ũ_i = z(1 + Σ a_ij ũ_j) + Σ c_ij ũ_j, R = 1 + Σ m_i ũ_i.
    pub fn stability(&self, z: C64) -> C64 {
        let s = self.stages();
        let mut u = vec![C64::new(0.0, 0.0); s];
        for i in 0..s {
            let mut arg = C64::new(1.0, 0.0);
            let mut acc = C64::new(0.0, 0.0);
            for j in 0..i {
                arg += u[j] * self.a[i][j];
                acc += u[j] * self.cm[i][j];
            }
            let mut m = vec![vec![C64::new(1.0 / self.gamma, 0.0) - z]];
            let mut r = [z * arg + acc];
            if solve_complex(&mut m, &mut r).is_none() {
                return C64::new(f64::INFINITY, 0.0);
            }
            u[i] = r[0];
        }
        let mut r = C64::new(1.0, 0.0);
        for i in 0..s {
            r += u[i] * self.m[i];
        }
        r
    }
}
