//! Time functions f(t) with exact first and second derivatives, used by
//! drivers (which need f, f', f'' for Φ, Φ_t and γ) and by forces.

/// A time function, compiled from the model file.
#[derive(Clone, Debug, PartialEq)]
pub enum TimeFunction {
    /// f = c.
    Constant(f64),
}

impl TimeFunction {
    /// (f(t), f'(t), f''(t)).
    pub fn eval(&self, _t: f64) -> (f64, f64, f64) {
        match self {
            TimeFunction::Constant(c) => (*c, 0.0, 0.0),
        }
    }

    /// Appends the times where f is not smooth (steps, knots, ends of
    /// ramps) to `out`.
    pub fn breakpoints(&self, _out: &mut Vec<f64>) {}
}
