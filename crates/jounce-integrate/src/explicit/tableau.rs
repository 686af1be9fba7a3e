//! Butcher tableaux of explicit Runge-Kutta methods, as data.

/// An explicit Runge-Kutta method as data: c, strictly lower A (row i holds
/// a_i1 .. a_i,i-1), weights b, optional embedded weights b̂ and optional
/// continuous-extension polynomials.
///
/// Dense output, when present: y(t0 + θh) = y0 + h Σ_i k_i Σ_j P_ij θ^(j+1).
#[derive(Debug)]
pub struct ButcherTableau {
    /// Registry name.
    pub name: &'static str,
    /// Order of the propagated solution (b).
    pub order: u32,
    /// Order of the embedded solution (b̂).
    pub embedded_order: Option<u32>,
    /// First stage of a step equals the last of the previous one.
    pub fsal: bool,
    /// Nodes c_i.
    pub c: &'static [f64],
    /// Strictly lower-triangular coefficients, row by row.
    pub a: &'static [&'static [f64]],
    /// Weights b_i.
    pub b: &'static [f64],
    /// Embedded weights b̂_i.
    pub b_hat: Option<&'static [f64]>,
    /// Continuous extension P (stages × degree), see the type's doc.
    pub dense: Option<&'static [&'static [f64]]>,
    /// Bound of h·ρ used by the stiffness test (Hairer's 3.25 for DOPRI5).
    pub stiffness_bound: Option<f64>,
}

impl ButcherTableau {
    /// Number of stages s.
    pub fn stages(&self) -> usize {
        self.c.len()
    }
}

/// Classic fourth-order Runge-Kutta method ("the" Runge-Kutta method).
/// Kutta (1901); Hairer–Nørsett–Wanner I, Table II.1.2, left.
#[rustfmt::skip]
pub const RK4: ButcherTableau = ButcherTableau {
    name: "rk4",
    order: 4,
    embedded_order: None,
    fsal: false,
    c: &[0.0, 0.5, 0.5, 1.0],
    a: &[
        &[],
        &[0.5],
        &[0.0, 0.5],
        &[0.0, 0.0, 1.0],
    ],
    b: &[1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0],
    b_hat: None,
    dense: None,
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
    embedded_order: Some(4),
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
    b_hat: Some(&[
        5179.0 / 57600.0, 0.0, 7571.0 / 16695.0, 393.0 / 640.0,
        -92097.0 / 339200.0, 187.0 / 2100.0, 1.0 / 40.0,
    ]),
    dense: Some(&[
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
