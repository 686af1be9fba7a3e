//! Linear multistep methods as data: Σ_{j=0}^{k} α_j y_{n+j} = h Σ_{j=0}^{k} β_j f_{n+j}.
//!
//! Coefficients are listed from the oldest value (j = 0) to the newest
//! (j = k). The method is explicit when β_k = 0. Consistency is
//! Σ α_j = 0; order p means Σ α_j j^q = q Σ β_j j^(q−1) for q = 1..p
//! (Hairer–Nørsett–Wanner I, Section III.2, Theorem 2.4).

use nalgebra::{Complex, DMatrix};

/// A linear multistep method Σ_{j=0}^{k} α_j y_{n+j} = h Σ_{j=0}^{k} β_j f_{n+j}.
#[derive(Debug)]
pub struct Lmm {
    /// Registry name.
    pub name: &'static str,
    /// α_0 .. α_k (oldest first).
    pub alpha: &'static [f64],
    /// β_0 .. β_k (oldest first); β_k = 0 for explicit methods.
    pub beta: &'static [f64],
    /// Order p.
    pub order: u32,
    /// Error constant C_{p+1} = (Σ α_j j^{p+1} − (p+1) Σ β_j j^p)/(p+1)! of
    /// the method with α_k = 1 (HNW I, Section III.2, eq. (2.3), without
    /// the division by σ(1)): local error ≈ C_{p+1} h^{p+1} y^{(p+1)}.
    /// Verified against the tables by the tests.
    pub error_constant: f64,
}

impl Lmm {
    /// Number of steps k.
    pub fn steps(&self) -> usize {
        self.alpha.len() - 1
    }
    /// Whether β_k ≠ 0.
    pub fn implicit(&self) -> bool {
        self.beta[self.steps()] != 0.0
    }

    /// Amplification per step on y' = λy at z = hλ: the largest modulus
    /// of the roots ζ of the characteristic equation
    /// Σ_j (α_j − z β_j) ζ^j = 0 (Hairer & Wanner II, Section V.1,
    /// eq. (1.5)), from the eigenvalues of its companion matrix; ∞ when
    /// the leading coefficient α_k − z β_k vanishes.
    pub fn amplification(&self, z: Complex<f64>) -> f64 {
        let k = self.steps();
        let c: Vec<Complex<f64>> = (0..=k)
            .map(|j| Complex::new(self.alpha[j], 0.0) - z * self.beta[j])
            .collect();
        let lead = c[k];
        if lead.norm() == 0.0 {
            return f64::INFINITY;
        }
        if k == 1 {
            return (c[0] / lead).norm();
        }
        // companion matrix of ζ^k + Σ_{j<k} (c_j / c_k) ζ^j
        let mut m = DMatrix::<Complex<f64>>::zeros(k, k);
        for j in 0..k {
            m[(0, j)] = -c[k - 1 - j] / lead;
        }
        for i in 1..k {
            m[(i, i - 1)] = Complex::new(1.0, 0.0);
        }
        // bounded: an unconverged Schur iteration (extreme z) is no verdict
        // of stability, reported as unbounded amplification
        match nalgebra::linalg::Schur::try_new(m, f64::EPSILON, 10_000)
            .and_then(|s| s.eigenvalues())
        {
            Some(ev) => ev.iter().fold(0.0f64, |r, e| r.max(e.norm())),
            None => f64::INFINITY,
        }
    }
}

/// The fixed-step table registered under `name` (ab1..ab5, am1..am5).
pub fn fixed_table(name: &str) -> Option<&'static Lmm> {
    [&AB1, &AB2, &AB3, &AB4, &AB5, &AM1, &AM2, &AM3, &AM4, &AM5]
        .into_iter()
        .find(|t| t.name == name)
}

// ---------------------------------------------------------------------------
// Adams–Bashforth: y_{n+k} − y_{n+k−1} = h Σ β_j f_{n+j}, order k.
// Hairer–Nørsett–Wanner I, Section III.1, Table 1.1 (p. 359) and eq. (1.5);
// jalon-bayo ch. 7, Table 7.1. Error constants γ_k: HNW I, Section III.2
// (1/2, 5/12, 3/8, 251/720, 95/288).
// ---------------------------------------------------------------------------

/// AB1 = explicit Euler.
pub const AB1: Lmm = Lmm {
    name: "ab1",
    alpha: &[-1.0, 1.0],
    beta: &[1.0, 0.0],
    order: 1,
    error_constant: 0.5,
};
/// AB2: y_{n+2} = y_{n+1} + h (3/2 f_{n+1} − 1/2 f_n).
pub const AB2: Lmm = Lmm {
    name: "ab2",
    alpha: &[0.0, -1.0, 1.0],
    beta: &[-0.5, 1.5, 0.0],
    order: 2,
    error_constant: 5.0 / 12.0,
};
/// AB3: y_{n+3} = y_{n+2} + h/12 (23 f_{n+2} − 16 f_{n+1} + 5 f_n).
pub const AB3: Lmm = Lmm {
    name: "ab3",
    alpha: &[0.0, 0.0, -1.0, 1.0],
    beta: &[5.0 / 12.0, -16.0 / 12.0, 23.0 / 12.0, 0.0],
    order: 3,
    error_constant: 3.0 / 8.0,
};
/// AB4: y_{n+4} = y_{n+3} + h/24 (55 f_{n+3} − 59 f_{n+2} + 37 f_{n+1} − 9 f_n)
/// (jalon-bayo eq. 7.22).
pub const AB4: Lmm = Lmm {
    name: "ab4",
    alpha: &[0.0, 0.0, 0.0, -1.0, 1.0],
    beta: &[-9.0 / 24.0, 37.0 / 24.0, -59.0 / 24.0, 55.0 / 24.0, 0.0],
    order: 4,
    error_constant: 251.0 / 720.0,
};
/// AB5: y_{n+5} = y_{n+4} + h/720 (1901 f_{n+4} − 2774 f_{n+3} + 2616 f_{n+2} − 1274 f_{n+1} + 251 f_n).
pub const AB5: Lmm = Lmm {
    name: "ab5",
    alpha: &[0.0, 0.0, 0.0, 0.0, -1.0, 1.0],
    beta: &[
        251.0 / 720.0,
        -1274.0 / 720.0,
        2616.0 / 720.0,
        -2774.0 / 720.0,
        1901.0 / 720.0,
        0.0,
    ],
    order: 5,
    error_constant: 95.0 / 288.0,
};

// ---------------------------------------------------------------------------
// Adams–Moulton of order p (p − 1 steps; p = 1 is implicit Euler, p = 2 the
// trapezoidal rule). HNW I, Section III.1, Table 1.2 (p. 361) and eq. (1.8);
// jalon-bayo ch. 7, Table 7.2 and eq. (7.23). Error constants γ*_p:
// HNW I, Section III.2 (−1/2, −1/12, −1/24, −19/720, −3/160).
// ---------------------------------------------------------------------------

/// AM1 = implicit Euler: y_{n+1} = y_n + h f_{n+1}.
pub const AM1: Lmm = Lmm {
    name: "am1",
    alpha: &[-1.0, 1.0],
    beta: &[0.0, 1.0],
    order: 1,
    error_constant: -0.5,
};
/// AM2 = trapezoidal rule: y_{n+1} = y_n + h/2 (f_{n+1} + f_n).
pub const AM2: Lmm = Lmm {
    name: "am2",
    alpha: &[-1.0, 1.0],
    beta: &[0.5, 0.5],
    order: 2,
    error_constant: -1.0 / 12.0,
};
/// AM3: y_{n+2} = y_{n+1} + h/12 (5 f_{n+2} + 8 f_{n+1} − f_n).
pub const AM3: Lmm = Lmm {
    name: "am3",
    alpha: &[0.0, -1.0, 1.0],
    beta: &[-1.0 / 12.0, 8.0 / 12.0, 5.0 / 12.0],
    order: 3,
    error_constant: -1.0 / 24.0,
};
/// AM4: y_{n+3} = y_{n+2} + h/24 (9 f_{n+3} + 19 f_{n+2} − 5 f_{n+1} + f_n).
pub const AM4: Lmm = Lmm {
    name: "am4",
    alpha: &[0.0, 0.0, -1.0, 1.0],
    beta: &[1.0 / 24.0, -5.0 / 24.0, 19.0 / 24.0, 9.0 / 24.0],
    order: 4,
    error_constant: -19.0 / 720.0,
};
/// AM5: y_{n+4} = y_{n+3} + h/720 (251 f_{n+4} + 646 f_{n+3} − 264 f_{n+2} + 106 f_{n+1} − 19 f_n).
pub const AM5: Lmm = Lmm {
    name: "am5",
    alpha: &[0.0, 0.0, 0.0, -1.0, 1.0],
    beta: &[
        -19.0 / 720.0,
        106.0 / 720.0,
        -264.0 / 720.0,
        646.0 / 720.0,
        251.0 / 720.0,
    ],
    order: 5,
    error_constant: -3.0 / 160.0,
};

// ---------------------------------------------------------------------------
// BDF: Σ_{j=1}^{k} (1/j) ∇^j y_{n+1} = h f_{n+1}, normalised to α_k = 1.
// HNW I, Section III.1, eq. (1.22'); Hairer–Wanner II, Section V.1.
// Error constants −β_k/(k+1) for α_k = 1.
// ---------------------------------------------------------------------------

/// BDF1 = implicit Euler (as a BDF).
pub const BDF1: Lmm = Lmm {
    name: "bdf1",
    alpha: &[-1.0, 1.0],
    beta: &[0.0, 1.0],
    order: 1,
    error_constant: -0.5,
};
/// BDF2: y_{n+2} − 4/3 y_{n+1} + 1/3 y_n = 2/3 h f_{n+2}.
pub const BDF2: Lmm = Lmm {
    name: "bdf2",
    alpha: &[1.0 / 3.0, -4.0 / 3.0, 1.0],
    beta: &[0.0, 0.0, 2.0 / 3.0],
    order: 2,
    error_constant: -2.0 / 9.0,
};
/// BDF3: y_{n+3} − 18/11 y_{n+2} + 9/11 y_{n+1} − 2/11 y_n = 6/11 h f_{n+3}.
pub const BDF3: Lmm = Lmm {
    name: "bdf3",
    alpha: &[-2.0 / 11.0, 9.0 / 11.0, -18.0 / 11.0, 1.0],
    beta: &[0.0, 0.0, 0.0, 6.0 / 11.0],
    order: 3,
    error_constant: -3.0 / 22.0,
};
/// BDF4: y_{n+4} − 48/25 y_{n+3} + 36/25 y_{n+2} − 16/25 y_{n+1} + 3/25 y_n = 12/25 h f_{n+4}.
pub const BDF4: Lmm = Lmm {
    name: "bdf4",
    alpha: &[3.0 / 25.0, -16.0 / 25.0, 36.0 / 25.0, -48.0 / 25.0, 1.0],
    beta: &[0.0, 0.0, 0.0, 0.0, 12.0 / 25.0],
    order: 4,
    error_constant: -12.0 / 125.0,
};
/// BDF5: y_{n+5} − 300/137 y_{n+4} + 300/137 y_{n+3} − 200/137 y_{n+2}
/// + 75/137 y_{n+1} − 12/137 y_n = 60/137 h f_{n+5}.
pub const BDF5: Lmm = Lmm {
    name: "bdf5",
    alpha: &[
        -12.0 / 137.0,
        75.0 / 137.0,
        -200.0 / 137.0,
        300.0 / 137.0,
        -300.0 / 137.0,
        1.0,
    ],
    beta: &[0.0, 0.0, 0.0, 0.0, 0.0, 60.0 / 137.0],
    order: 5,
    error_constant: -10.0 / 137.0,
};

/// Adams–Bashforth methods of order 1..5.
pub const ADAMS_BASHFORTH: [&Lmm; 5] = [&AB1, &AB2, &AB3, &AB4, &AB5];
/// Adams–Moulton methods of order 1..5.
pub const ADAMS_MOULTON: [&Lmm; 5] = [&AM1, &AM2, &AM3, &AM4, &AM5];
/// BDF methods of order 1..5.
pub const BDF: [&Lmm; 5] = [&BDF1, &BDF2, &BDF3, &BDF4, &BDF5];

/// Milne's device (jalon-bayo 7.1.3, eq. 7.27; HNW I, III.1): with an
/// order-p Adams–Bashforth predictor y^P and an order-p Adams–Moulton
/// corrector y^C, the local error of the corrector is
/// y(t) − y^C ≈ C*/(C − C*) (y^C − y^P), C, C* their error constants
/// (for p = 4: −19/270).
pub fn milne_factor(p: usize) -> f64 {
    let c = ADAMS_BASHFORTH[p - 1].error_constant;
    let cs = ADAMS_MOULTON[p - 1].error_constant;
    cs / (c - cs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amplification_is_the_root_modulus_of_the_characteristic_equation() {
        let z = |re: f64, im: f64| Complex::new(re, im);
        // AB1 is forward Euler: |1 + z|
        for w in [z(-0.5, 0.3), z(-2.5, 0.0), z(0.0, 1.0)] {
            assert!((AB1.amplification(w) - (Complex::new(1.0, 0.0) + w).norm()).abs() < 1e-14);
        }
        // AB2's real stability interval is [-1, 0]: ζ = −1 is a root at z = −1
        assert!((AB2.amplification(z(-1.0, 0.0)) - 1.0).abs() < 1e-9);
        assert!(AB2.amplification(z(-0.9, 0.0)) < 1.0);
        assert!(AB2.amplification(z(-1.1, 0.0)) > 1.0);
        // AM2 is the trapezoidal rule: |(1 + z/2)/(1 − z/2)|, A-stable
        let w = z(-3.0, 7.0);
        let r = (Complex::new(1.0, 0.0) + w / 2.0) / (Complex::new(1.0, 0.0) - w / 2.0);
        assert!((AM2.amplification(w) - r.norm()).abs() < 1e-12);
        for t in fixed_table("ab4").into_iter().chain(fixed_table("am5")) {
            // consistent and zero-stable: the principal root at z = 0 is 1
            assert!(
                (t.amplification(z(0.0, 0.0)) - 1.0).abs() < 1e-9,
                "{}",
                t.name
            );
        }
        assert!(fixed_table("bdf9").is_none());
    }
}
