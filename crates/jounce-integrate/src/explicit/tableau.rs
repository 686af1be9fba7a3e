//! Butcher tableaux of explicit Runge-Kutta methods, as data.
//!
//! A method is a [`ButcherTableau`]: nodes, coefficients, weights, how its
//! local error is estimated ([`ErrorEstimate`]) and how its continuous
//! solution is formed ([`DenseOutput`]). The one driver in `erk.rs` reads
//! these; no method has stepping code of its own.

use nalgebra::Complex;

/// How a tableau estimates the local error of a step of size h.
#[derive(Debug, Clone, Copy)]
pub enum ErrorEstimate {
    /// No estimator: fixed steps only.
    None,
    /// One embedded solution ŷ₁ = y₀ + h Σ b̂_i k_i of order `order`:
    /// e = y₁ − ŷ₁ = h Σ (b_i − b̂_i) k_i, controlled as ‖e‖ ≤ 1
    /// (Hairer–Nørsett–Wanner I, eq. II.4.11).
    Embedded {
        /// Embedded weights b̂_i.
        b_hat: &'static [f64],
        /// Order of ŷ₁.
        order: u32,
    },
    /// Hairer's DOP853 estimator (dop853.f, HNW I, Section II.10, p. 254):
    /// e₅ = h Σ E5_i k_i and e₃ = h Σ (b_i − b̂3_i) k_i, combined as
    /// err = ‖e₅‖² / sqrt(‖e₅‖² + 0.01 ‖e₃‖²), which behaves like O(h⁸)
    /// and is controlled with exponent 1/8.
    Combined53 {
        /// E5_i = b_i − b̂5_i, with b̂5 of order 5.
        e5: &'static [f64],
        /// Third-order embedded weights b̂3_i.
        b_hat3: &'static [f64],
    },
}

/// The continuous solution a tableau provides on [t₀, t₀ + h].
#[derive(Debug, Clone, Copy)]
pub enum DenseOutput {
    /// None of its own: the driver uses the cubic Hermite interpolant
    /// (third order, [`crate::dense::hermite_cubic`]).
    Hermite,
    /// y(t₀ + θh) = y₀ + h Σ_i k_i Σ_j P_ij θ^(j+1) (P: stages × degree).
    Polynomial(&'static [&'static [f64]]),
    /// Hairer's DOP853 continuous extension of order 7 (dop853.f,
    /// CONTD8; HNW I, Section II.6 and II.10): three extra stages
    /// k₁₄..k₁₆ with nodes `c` and rows `a` (over k₁..k₁₅), then with
    /// Δ = y₁ − y₀, F₀ = Δ, F₁ = h k₁ − Δ, F₂ = 2Δ − h (k₁ + f(t₁, y₁)),
    /// F₃₊ᵣ = h Σ_j d_rj k_j (r = 0..3),
    /// y(t₀ + θh) = y₀ + θ(F₀ + (1−θ)(F₁ + θ(F₂ + (1−θ)(F₃ + θ(F₄ + (1−θ)(F₅ + θ F₆)))))).
    Dop853 {
        /// Nodes of the extra stages.
        c: &'static [f64],
        /// Rows of the extra stages (row r has 13 + r entries).
        a: &'static [&'static [f64]],
        /// The four rows d_r (16 entries each).
        d: &'static [&'static [f64]],
    },
}

/// An explicit Runge-Kutta method as data: c, strictly lower A (row i holds
/// a_i1 .. a_i,i-1), weights b, its error estimator and continuous extension.
///
/// One step: k_i = f(t₀ + c_i h, y₀ + h Σ_{j<i} a_ij k_j), y₁ = y₀ + h Σ b_i k_i.
#[derive(Debug)]
pub struct ButcherTableau {
    /// Registry name.
    pub name: &'static str,
    /// Order of the propagated solution (b).
    pub order: u32,
    /// First stage of a step equals the last of the previous one: the last
    /// row of A equals b and c_s = 1, so k_s = f(t₁, y₁).
    pub fsal: bool,
    /// Nodes c_i.
    pub c: &'static [f64],
    /// Strictly lower-triangular coefficients, row by row.
    pub a: &'static [&'static [f64]],
    /// Weights b_i.
    pub b: &'static [f64],
    /// Local error estimator.
    pub error: ErrorEstimate,
    /// Continuous extension.
    pub dense: DenseOutput,
    /// Bound of h·ρ used by the stiffness test (Hairer's 3.25 for DOPRI5,
    /// 6.1 for DOP853), `None` to skip the test.
    pub stiffness_bound: Option<f64>,
}

impl ButcherTableau {
    /// Number of stages s.
    pub fn stages(&self) -> usize {
        self.c.len()
    }

    /// Whether the tableau can control its step size.
    pub fn adaptive(&self) -> bool {
        !matches!(self.error, ErrorEstimate::None)
    }

    /// Every embedded weight vector with its order, for order-condition
    /// checks: b̂ of [`ErrorEstimate::Embedded`], or b − E5 (order 5) and
    /// b̂3 (order 3) of [`ErrorEstimate::Combined53`].
    pub fn embedded_weights(&self) -> Vec<(Vec<f64>, u32)> {
        match self.error {
            ErrorEstimate::None => Vec::new(),
            ErrorEstimate::Embedded { b_hat, order } => vec![(b_hat.to_vec(), order)],
            ErrorEstimate::Combined53 { e5, b_hat3 } => vec![
                (self.b.iter().zip(e5).map(|(b, e)| b - e).collect(), 5),
                (b_hat3.to_vec(), 3),
            ],
        }
    }

    /// Linear stability function R(z) of the propagated solution: one step
    /// of size h on y' = λy maps y₀ to R(hλ) y₀, with
    /// R(z) = 1 + Σ_{j=1..s} z^j bᵀ A^(j−1) 1 (an explicit method's A is
    /// nilpotent; Hairer–Wanner II, eq. IV.2.8 expanded).
    ///
    /// On an undamped mode (λ = iω) the step multiplies the mode's energy by
    /// |R(iωh)|², so 1 − |R(iωh)|² is the method's numerical dissipation
    /// per step: the source of the energy drift of an explicit method on a
    /// conservative model.
    pub fn stability_function(&self, z: Complex<f64>) -> Complex<f64> {
        let s = self.stages();
        let mut v = vec![1.0; s]; // A^(j−1) 1
        let mut next = vec![0.0; s];
        let mut r = Complex::new(1.0, 0.0);
        let mut zj = Complex::new(1.0, 0.0);
        for _ in 0..s {
            zj *= z;
            let btv: f64 = self.b.iter().zip(&v).map(|(b, x)| b * x).sum();
            r += zj * btv;
            for (i, row) in self.a.iter().enumerate() {
                next[i] = row.iter().zip(&v).map(|(a, x)| a * x).sum();
            }
            std::mem::swap(&mut v, &mut next);
        }
        r
    }

    /// Order q used by the step-size controller: h_new = h · fac · err^(−1/(q+1)).
    /// The lower order of an embedded pair; 7 for the DOP853 estimator
    /// (dop853.f: exponent 1/8).
    pub fn controller_order(&self) -> u32 {
        match self.error {
            ErrorEstimate::None => self.order,
            ErrorEstimate::Embedded { order, .. } => order.min(self.order),
            ErrorEstimate::Combined53 { .. } => 7,
        }
    }
}

/// Classic fourth-order Runge-Kutta method ("the" Runge-Kutta method).
/// Kutta (1901); Hairer–Nørsett–Wanner I, Table II.1.2, left.
#[rustfmt::skip]
pub const RK4: ButcherTableau = ButcherTableau {
    name: "rk4",
    order: 4,
    fsal: false,
    c: &[0.0, 0.5, 0.5, 1.0],
    a: &[
        &[],
        &[0.5],
        &[0.0, 0.5],
        &[0.0, 0.0, 1.0],
    ],
    b: &[1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0],
    error: ErrorEstimate::None,
    dense: DenseOutput::Hermite,
    stiffness_bound: None,
};

/// Dormand–Prince 5(4), FSAL, seven stages.
/// Dormand & Prince, J. Comput. Appl. Math. 6 (1980) 19–26;
/// Hairer–Nørsett–Wanner I, Table II.5.2 (p. 178). Dense output: the
/// fourth-order continuous extension of Shampine (1986), HNW I, II.6,
/// eq. (6.12), in the polynomial form of scipy's `RK45.P`.
#[rustfmt::skip]
pub const DOPRI5: ButcherTableau = ButcherTableau {
    name: "dopri5",
    order: 5,
    fsal: true,
    c: &[0.0, 1.0 / 5.0, 3.0 / 10.0, 4.0 / 5.0, 8.0 / 9.0, 1.0, 1.0],
    a: &[
        &[],
        &[1.0 / 5.0],
        &[3.0 / 40.0, 9.0 / 40.0],
        &[44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0],
        &[19372.0 / 6561.0, -25360.0 / 2187.0, 64448.0 / 6561.0, -212.0 / 729.0],
        &[9017.0 / 3168.0, -355.0 / 33.0, 46732.0 / 5247.0, 49.0 / 176.0, -5103.0 / 18656.0],
        &[35.0 / 384.0, 0.0, 500.0 / 1113.0, 125.0 / 192.0, -2187.0 / 6784.0, 11.0 / 84.0],
    ],
    b: &[35.0 / 384.0, 0.0, 500.0 / 1113.0, 125.0 / 192.0, -2187.0 / 6784.0, 11.0 / 84.0, 0.0],
    error: ErrorEstimate::Embedded {
        b_hat: &[
            5179.0 / 57600.0, 0.0, 7571.0 / 16695.0, 393.0 / 640.0,
            -92097.0 / 339200.0, 187.0 / 2100.0, 1.0 / 40.0,
        ],
        order: 4,
    },
    dense: DenseOutput::Polynomial(&[
        &[1.0, -8048581381.0 / 2820520608.0, 8663915743.0 / 2820520608.0, -12715105075.0 / 11282082432.0],
        &[0.0, 0.0, 0.0, 0.0],
        &[0.0, 131558114200.0 / 32700410799.0, -68118460800.0 / 10900136933.0, 87487479700.0 / 32700410799.0],
        &[0.0, -1754552775.0 / 470086768.0, 14199869525.0 / 1410260304.0, -10690763975.0 / 1880347072.0],
        &[0.0, 127303824393.0 / 49829197408.0, -318862633887.0 / 49829197408.0, 701980252875.0 / 199316789632.0],
        &[0.0, -282668133.0 / 205662961.0, 2019193451.0 / 616988883.0, -1453857185.0 / 822651844.0],
        &[0.0, 40617522.0 / 29380423.0, -110615467.0 / 29380423.0, 69997945.0 / 29380423.0],
    ]),
    stiffness_bound: Some(3.25),
};

/// Forward Euler: y₁ = y₀ + h f(t₀, y₀), first order.
/// Euler (1768); Hairer–Nørsett–Wanner I, Section I.7, eq. (7.3).
#[rustfmt::skip]
pub const EULER: ButcherTableau = ButcherTableau {
    name: "euler",
    order: 1,
    fsal: false,
    c: &[0.0],
    a: &[&[]],
    b: &[1.0],
    error: ErrorEstimate::None,
    dense: DenseOutput::Hermite,
    stiffness_bound: None,
};

/// Explicit midpoint rule (Runge 1895): k₂ = f(t₀ + h/2, y₀ + h/2 k₁),
/// y₁ = y₀ + h k₂, second order.
/// Hairer–Nørsett–Wanner I, Section II.1, eq. (1.6) and Table II.1.1 (left).
#[rustfmt::skip]
pub const MIDPOINT: ButcherTableau = ButcherTableau {
    name: "midpoint",
    order: 2,
    fsal: false,
    c: &[0.0, 0.5],
    a: &[&[], &[0.5]],
    b: &[0.0, 1.0],
    error: ErrorEstimate::None,
    dense: DenseOutput::Hermite,
    stiffness_bound: None,
};

/// Heun's method (explicit trapezoid), second order, with forward Euler
/// embedded (b̂ = (1, 0)) for error control: the Heun–Euler 2(1) pair.
/// Heun, Z. Math. Phys. 45 (1900) 23–38; Hairer–Nørsett–Wanner I,
/// Table II.1.1 (right); the pair as in Shampine, *Numerical Solution of
/// ODEs* (1994), Section 3.2.
#[rustfmt::skip]
pub const HEUN: ButcherTableau = ButcherTableau {
    name: "heun",
    order: 2,
    fsal: false,
    c: &[0.0, 1.0],
    a: &[&[], &[1.0]],
    b: &[0.5, 0.5],
    error: ErrorEstimate::Embedded { b_hat: &[1.0, 0.0], order: 1 },
    dense: DenseOutput::Hermite,
    stiffness_bound: None,
};

/// Ralston's second-order method, the two-stage method of minimum error
/// bound: c₂ = 2/3, b = (1/4, 3/4).
/// Ralston, Math. Comp. 16 (1962) 431–437, eq. (3.5); Butcher,
/// *Numerical Methods for ODEs* (2016), Section 232.
#[rustfmt::skip]
pub const RALSTON: ButcherTableau = ButcherTableau {
    name: "ralston",
    order: 2,
    fsal: false,
    c: &[0.0, 2.0 / 3.0],
    a: &[&[], &[2.0 / 3.0]],
    b: &[0.25, 0.75],
    error: ErrorEstimate::None,
    dense: DenseOutput::Hermite,
    stiffness_bound: None,
};

/// Runge–Kutta–Fehlberg 4(5), six stages. As Fehlberg intended, the
/// fourth-order solution is propagated and the fifth-order one only
/// estimates its error (so the estimate is of the propagated solution).
/// Fehlberg, NASA TR R-315 (1969), Table III; Hairer–Nørsett–Wanner I,
/// Table II.5.1 (p. 177).
#[rustfmt::skip]
pub const RKF45: ButcherTableau = ButcherTableau {
    name: "rkf45",
    order: 4,
    fsal: false,
    c: &[0.0, 1.0 / 4.0, 3.0 / 8.0, 12.0 / 13.0, 1.0, 1.0 / 2.0],
    a: &[
        &[],
        &[1.0 / 4.0],
        &[3.0 / 32.0, 9.0 / 32.0],
        &[1932.0 / 2197.0, -7200.0 / 2197.0, 7296.0 / 2197.0],
        &[439.0 / 216.0, -8.0, 3680.0 / 513.0, -845.0 / 4104.0],
        &[-8.0 / 27.0, 2.0, -3544.0 / 2565.0, 1859.0 / 4104.0, -11.0 / 40.0],
    ],
    b: &[25.0 / 216.0, 0.0, 1408.0 / 2565.0, 2197.0 / 4104.0, -1.0 / 5.0, 0.0],
    error: ErrorEstimate::Embedded {
        b_hat: &[16.0 / 135.0, 0.0, 6656.0 / 12825.0, 28561.0 / 56430.0, -9.0 / 50.0, 2.0 / 55.0],
        order: 5,
    },
    dense: DenseOutput::Hermite,
    stiffness_bound: None,
};

/// Cash–Karp 5(4), six stages; the fifth-order solution is propagated.
/// Cash & Karp, ACM TOMS 16 (1990) 201–222, the 5(4) pair of Section 3
/// (as tabulated in Press et al., *Numerical Recipes in C*, 2nd ed.,
/// Section 16.2, p. 717).
#[rustfmt::skip]
pub const CASH_KARP: ButcherTableau = ButcherTableau {
    name: "cash_karp",
    order: 5,
    fsal: false,
    c: &[0.0, 1.0 / 5.0, 3.0 / 10.0, 3.0 / 5.0, 1.0, 7.0 / 8.0],
    a: &[
        &[],
        &[1.0 / 5.0],
        &[3.0 / 40.0, 9.0 / 40.0],
        &[3.0 / 10.0, -9.0 / 10.0, 6.0 / 5.0],
        &[-11.0 / 54.0, 5.0 / 2.0, -70.0 / 27.0, 35.0 / 27.0],
        &[1631.0 / 55296.0, 175.0 / 512.0, 575.0 / 13824.0, 44275.0 / 110592.0, 253.0 / 4096.0],
    ],
    b: &[37.0 / 378.0, 0.0, 250.0 / 621.0, 125.0 / 594.0, 0.0, 512.0 / 1771.0],
    error: ErrorEstimate::Embedded {
        b_hat: &[2825.0 / 27648.0, 0.0, 18575.0 / 48384.0, 13525.0 / 55296.0, 277.0 / 14336.0, 1.0 / 4.0],
        order: 4,
    },
    dense: DenseOutput::Hermite,
    stiffness_bound: None,
};

/// The embedded solutions of orders 1, 2, 3 of the Cash–Karp tableau, on
/// its first 1, 2 and 4 stages (Cash & Karp 1990, Section 3):
/// y⁽¹⁾ = y₀ + h k₁, y⁽²⁾ = y₀ + h(−3/2 k₁ + 5/2 k₂),
/// y⁽³⁾ = y₀ + h(19/54 k₁ − 10/27 k₃ + 55/54 k₄); orders 4 and 5 are the
/// b̂ and b of [`CASH_KARP`].
pub const CASH_KARP_LOW_ORDER: [&[f64]; 3] = [
    &[1.0],
    &[-3.0 / 2.0, 5.0 / 2.0],
    &[19.0 / 54.0, 0.0, -10.0 / 27.0, 55.0 / 54.0],
];

/// Dormand–Prince 8(5,3) as in Hairer's DOP853: twelve stages plus the
/// FSAL stage k₁₃ = f(t₁, y₁) (row 13 of A = b), error estimators of
/// orders 5 and 3 combined ([`ErrorEstimate::Combined53`]), and the
/// seventh-order continuous extension with three extra stages.
/// Prince & Dormand, J. Comput. Appl. Math. 7 (1981) 67–75;
/// Hairer–Nørsett–Wanner I, Section II.10, p. 254 and the code dop853.f
/// (coefficients as transcribed to 30 digits in scipy's
/// `dop853_coefficients.py`).
#[rustfmt::skip]
#[allow(clippy::excessive_precision)]
pub const DOP853: ButcherTableau = ButcherTableau {
    name: "dop853",
    order: 8,
    fsal: true,
    c: &[
        0.0,
        0.526001519587677318785587544488e-01,
        0.789002279381515978178381316732e-01,
        0.118350341907227396726757197510,
        0.281649658092772603273242802490,
        0.333333333333333333333333333333,
        0.25,
        0.307692307692307692307692307692,
        0.651282051282051282051282051282,
        0.6,
        0.857142857142857142857142857142,
        1.0,
        1.0,
    ],
    a: &[
        &[],
        &[5.26001519587677318785587544488e-2],
        &[1.97250569845378994544595329183e-2, 5.91751709536136983633785987549e-2],
        &[2.95875854768068491816892993775e-2, 0.0, 8.87627564304205475450678981324e-2],
        &[2.41365134159266685502369798665e-1, 0.0, -8.84549479328286085344864962717e-1, 9.24834003261792003115737966543e-1],
        &[3.7037037037037037037037037037e-2, 0.0, 0.0, 1.70828608729473871279604482173e-1, 1.25467687566822425016691814123e-1],
        &[3.7109375e-2, 0.0, 0.0, 1.70252211019544039314978060272e-1, 6.02165389804559606850219397283e-2, -1.7578125e-2],
        &[3.70920001185047927108779319836e-2, 0.0, 0.0, 1.70383925712239993810214054705e-1, 1.07262030446373284651809199168e-1, -1.53194377486244017527936158236e-2, 8.27378916381402288758473766002e-3],
        &[6.24110958716075717114429577812e-1, 0.0, 0.0, -3.36089262944694129406857109825, -8.68219346841726006818189891453e-1, 2.75920996994467083049415600797e1, 2.01540675504778934086186788979e1, -4.34898841810699588477366255144e1],
        &[4.77662536438264365890433908527e-1, 0.0, 0.0, -2.48811461997166764192642586468, -5.90290826836842996371446475743e-1, 2.12300514481811942347288949897e1, 1.52792336328824235832596922938e1, -3.32882109689848629194453265587e1, -2.03312017085086261358222928593e-2],
        &[-9.3714243008598732571704021658e-1, 0.0, 0.0, 5.18637242884406370830023853209, 1.09143734899672957818500254654, -8.14978701074692612513997267357, -1.85200656599969598641566180701e1, 2.27394870993505042818970056734e1, 2.49360555267965238987089396762, -3.0467644718982195003823669022],
        &[2.27331014751653820792359768449, 0.0, 0.0, -1.05344954667372501984066689879e1, -2.00087205822486249909675718444, -1.79589318631187989172765950534e1, 2.79488845294199600508499808837e1, -2.85899827713502369474065508674, -8.87285693353062954433549289258, 1.23605671757943030647266201528e1, 6.43392746015763530355970484046e-1],
        &[5.42937341165687622380535766363e-2, 0.0, 0.0, 0.0, 0.0, 4.45031289275240888144113950566, 1.89151789931450038304281599044, -5.8012039600105847814672114227, 3.1116436695781989440891606237e-1, -1.52160949662516078556178806805e-1, 2.01365400804030348374776537501e-1, 4.47106157277725905176885569043e-2],
    ],
    b: &[5.42937341165687622380535766363e-2, 0.0, 0.0, 0.0, 0.0, 4.45031289275240888144113950566, 1.89151789931450038304281599044, -5.8012039600105847814672114227, 3.1116436695781989440891606237e-1, -1.52160949662516078556178806805e-1, 2.01365400804030348374776537501e-1, 4.47106157277725905176885569043e-2, 0.0],
    error: ErrorEstimate::Combined53 {
        e5: &[0.1312004499419488073250102996e-1, 0.0, 0.0, 0.0, 0.0, -0.1225156446376204440720569753e1, -0.4957589496572501915214079952, 0.1664377182454986536961530415e1, -0.3503288487499736816886487290, 0.3341791187130174790297318841, 0.8192320648511571246570742613e-1, -0.2235530786388629525884427845e-1, 0.0],
        b_hat3: &[0.244094488188976377952755905512, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.733846688281611857341361741547, 0.0, 0.0, 0.220588235294117647058823529412e-1, 0.0],
    },
    dense: DenseOutput::Dop853 {
        c: &[0.1, 0.2, 0.777777777777777777777777777778],
        a: &[
            &[5.61675022830479523392909219681e-2, 0.0, 0.0, 0.0, 0.0, 0.0, 2.53500210216624811088794765333e-1, -2.46239037470802489917441475441e-1, -1.24191423263816360469010140626e-1, 1.5329179827876569731206322685e-1, 8.20105229563468988491666602057e-3, 7.56789766054569976138603589584e-3, -8.298e-3],
            &[3.18346481635021405060768473261e-2, 0.0, 0.0, 0.0, 0.0, 2.83009096723667755288322961402e-2, 5.35419883074385676223797384372e-2, -5.49237485713909884646569340306e-2, 0.0, 0.0, -1.08347328697249322858509316994e-4, 3.82571090835658412954920192323e-4, -3.40465008687404560802977114492e-4, 1.41312443674632500278074618366e-1],
            &[-4.28896301583791923408573538692e-1, 0.0, 0.0, 0.0, 0.0, -4.69762141536116384314449447206, 7.68342119606259904184240953878, 4.06898981839711007970213554331, 3.56727187455281109270669543021e-1, 0.0, 0.0, 0.0, -1.39902416515901462129418009734e-3, 2.9475147891527723389556272149, -9.15095847217987001081870187138],
        ],
        d: &[
            &[-0.84289382761090128651353491142e1, 0.0, 0.0, 0.0, 0.0, 0.56671495351937776962531783590, -0.30689499459498916912797304727e1, 0.23846676565120698287728149680e1, 0.21170345824450282767155149946e1, -0.87139158377797299206789907490, 0.22404374302607882758541771650e1, 0.63157877876946881815570249290, -0.88990336451333310820698117400e-1, 0.18148505520854727256656404962e2, -0.91946323924783554000451984436e1, -0.44360363875948939664310572000e1],
            &[0.10427508642579134603413151009e2, 0.0, 0.0, 0.0, 0.0, 0.24228349177525818288430175319e3, 0.16520045171727028198505394887e3, -0.37454675472269020279518312152e3, -0.22113666853125306036270938578e2, 0.77334326684722638389603898808e1, -0.30674084731089398182061213626e2, -0.93321305264302278729567221706e1, 0.15697238121770843886131091075e2, -0.31139403219565177677282850411e2, -0.93529243588444783865713862664e1, 0.35816841486394083752465898540e2],
            &[0.19985053242002433820987653617e2, 0.0, 0.0, 0.0, 0.0, -0.38703730874935176555105901742e3, -0.18917813819516756882830838328e3, 0.52780815920542364900561016686e3, -0.11573902539959630126141871134e2, 0.68812326946963000169666922661e1, -0.10006050966910838403183860980e1, 0.77771377980534432092869265740, -0.27782057523535084065932004339e1, -0.60196695231264120758267380846e2, 0.84320405506677161018159903784e2, 0.11992291136182789328035130030e2],
            &[-0.25693933462703749003312586129e2, 0.0, 0.0, 0.0, 0.0, -0.15418974869023643374053993627e3, -0.23152937917604549567536039109e3, 0.35763911791061412378285349910e3, 0.93405324183624310003907691704e2, -0.37458323136451633156875139351e2, 0.10409964950896230045147246184e3, 0.29840293426660503123344363579e2, -0.43533456590011143754432175058e2, 0.96324553959188282948394950600e2, -0.39177261675615439165231486172e2, -0.14972683625798562581422125276e3],
        ],
    },
    stiffness_bound: Some(6.1),
};
