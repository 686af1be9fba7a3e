//! Tabulated time functions: piecewise-linear or natural cubic spline
//! interpolation through (t_i, y_i), constant extrapolation outside
//! [t_0, t_{n−1}].

/// Interpolation between the knots of a [`Table`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interpolation {
    /// Piecewise linear: f' jumps at every knot (all knots are breakpoints).
    Linear,
    /// Natural cubic spline (S'' = 0 at both ends): C² inside the range;
    /// only the two end knots are breakpoints.
    Cubic,
}

/// A validated table: at least two knots, strictly increasing finite times,
/// finite values.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    times: Vec<f64>,
    values: Vec<f64>,
    interpolation: Interpolation,
    /// Spline second derivatives M_i at the knots (all zero for linear).
    second: Vec<f64>,
}

/// Why a table was rejected.
#[derive(Clone, Debug, PartialEq)]
pub enum TableError {
    /// `times` and `values` differ in length.
    LengthMismatch(usize, usize),
    /// Fewer than two knots.
    TooShort(usize),
    /// times\[i\] ≤ times[i−1] (index i).
    NotIncreasing(usize),
    /// A time or value is NaN or infinite.
    NonFinite,
}

impl std::fmt::Display for TableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TableError::LengthMismatch(a, b) => write!(
                f,
                "times and values must have the same length, got {a} times and {b} values"
            ),
            TableError::TooShort(n) => write!(f, "needs at least 2 knots, got {n}"),
            TableError::NotIncreasing(i) => write!(
                f,
                "times must be strictly increasing, but times[{i}] <= times[{}]",
                i - 1
            ),
            TableError::NonFinite => write!(f, "times and values must be finite numbers"),
        }
    }
}

impl Table {
    /// Builds a table; for cubic interpolation solves the natural-spline
    /// tridiagonal system (Thomas algorithm) for the knot second derivatives
    /// M_i, i = 1..n−2, with M_0 = M_{n−1} = 0:
    /// h_{i−1} M_{i−1} + 2 (h_{i−1} + h_i) M_i + h_i M_{i+1}
    ///   = 6 [(y_{i+1} − y_i)/h_i − (y_i − y_{i−1})/h_{i−1}].
    pub fn new(
        times: Vec<f64>,
        values: Vec<f64>,
        interpolation: Interpolation,
    ) -> Result<Table, TableError> {
        if times.len() != values.len() {
            return Err(TableError::LengthMismatch(times.len(), values.len()));
        }
        let n = times.len();
        if n < 2 {
            return Err(TableError::TooShort(n));
        }
        if times.iter().chain(values.iter()).any(|v| !v.is_finite()) {
            return Err(TableError::NonFinite);
        }
        if let Some(i) = (1..n).find(|&i| times[i] <= times[i - 1]) {
            return Err(TableError::NotIncreasing(i));
        }
        let mut second = vec![0.0; n];
        if interpolation == Interpolation::Cubic && n > 2 {
            let m = n - 2;
            // Diagonal, super-diagonal (modified) and right-hand side.
            let mut diag = vec![0.0; m];
            let mut upper = vec![0.0; m];
            let mut rhs = vec![0.0; m];
            for k in 0..m {
                let i = k + 1;
                let h0 = times[i] - times[i - 1];
                let h1 = times[i + 1] - times[i];
                let b = 2.0 * (h0 + h1);
                let d = 6.0 * ((values[i + 1] - values[i]) / h1 - (values[i] - values[i - 1]) / h0);
                if k == 0 {
                    diag[k] = b;
                    rhs[k] = d;
                } else {
                    // Sub-diagonal entry is h0.
                    let w = h0 / diag[k - 1];
                    diag[k] = b - w * upper[k - 1];
                    rhs[k] = d - w * rhs[k - 1];
                }
                upper[k] = h1;
            }
            second[m] = rhs[m - 1] / diag[m - 1];
            for k in (0..m - 1).rev() {
                second[k + 1] = (rhs[k] - upper[k] * second[k + 2]) / diag[k];
            }
        }
        Ok(Table {
            times,
            values,
            interpolation,
            second,
        })
    }

    /// Knot times.
    pub fn times(&self) -> &[f64] {
        &self.times
    }

    /// Knot values.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Interpolation kind.
    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }

    /// (f, f', f'') at t. On [t_i, t_{i+1}] with h = t_{i+1} − t_i,
    /// a = (t_{i+1} − t)/h, b = (t − t_i)/h:
    /// linear: f = a y_i + b y_{i+1};
    /// cubic: f = a y_i + b y_{i+1} + [(a³ − a) M_i + (b³ − b) M_{i+1}] h²/6,
    /// f' = (y_{i+1} − y_i)/h − (3a² − 1) h M_i/6 + (3b² − 1) h M_{i+1}/6,
    /// f'' = a M_i + b M_{i+1}.
    /// Outside [t_0, t_{n−1}) the end value is held (f' = f'' = 0); at a
    /// knot the right-hand derivative is returned.
    pub fn eval(&self, t: f64) -> (f64, f64, f64) {
        let n = self.times.len();
        if t < self.times[0] {
            return (self.values[0], 0.0, 0.0);
        }
        if t >= self.times[n - 1] {
            return (self.values[n - 1], 0.0, 0.0);
        }
        if t.is_nan() {
            return (f64::NAN, f64::NAN, f64::NAN);
        }
        let i = (self.times.partition_point(|&x| x <= t) - 1).min(n - 2);
        let (t0, t1) = (self.times[i], self.times[i + 1]);
        let (y0, y1) = (self.values[i], self.values[i + 1]);
        let h = t1 - t0;
        let a = (t1 - t) / h;
        let b = (t - t0) / h;
        match self.interpolation {
            Interpolation::Linear => (a * y0 + b * y1, (y1 - y0) / h, 0.0),
            Interpolation::Cubic => {
                let (m0, m1) = (self.second[i], self.second[i + 1]);
                let f =
                    a * y0 + b * y1 + ((a * a * a - a) * m0 + (b * b * b - b) * m1) * h * h / 6.0;
                let df = (y1 - y0) / h - (3.0 * a * a - 1.0) * h * m0 / 6.0
                    + (3.0 * b * b - 1.0) * h * m1 / 6.0;
                (f, df, a * m0 + b * m1)
            }
        }
    }

    /// Linear: every knot; cubic: the two end knots.
    pub fn breakpoints(&self, out: &mut Vec<f64>) {
        match self.interpolation {
            Interpolation::Linear => out.extend_from_slice(&self.times),
            Interpolation::Cubic => {
                out.push(self.times[0]);
                out.push(self.times[self.times.len() - 1]);
            }
        }
    }
}
