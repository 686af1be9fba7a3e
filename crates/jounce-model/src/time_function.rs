//! Time functions f(t) with exact first and second derivatives, used by
//! drivers (which need f, f', f'' for Φ, Φ_t and γ) and by forces.
//!
//! Each variant documents the equation it implements. Derivatives at a
//! breakpoint are the right-hand (t → t⁺) ones; integrators are expected to
//! stop at [`TimeFunction::breakpoints`] rather than step across them.

use std::f64::consts::{FRAC_PI_2, PI};
use std::sync::Arc;

pub use crate::table::{Interpolation, Table, TableError};

/// A time function, compiled from the model file.
#[derive(Clone, Debug, PartialEq)]
pub enum TimeFunction {
    /// f = c.
    Constant(f64),
    /// f = c₀ + c₁ t + c₂ t² + … (coefficients in increasing powers).
    Polynomial(Vec<f64>),
    /// f = offset + amplitude · sin(frequency · t + phase), frequency in rad/s.
    Harmonic {
        /// Amplitude.
        amplitude: f64,
        /// Angular frequency ω [rad/s].
        frequency: f64,
        /// Phase φ \[rad\].
        phase: f64,
        /// Offset.
        offset: f64,
    },
    /// f = before for t < time, after for t ≥ time (a jump; f' = f'' = 0).
    Step {
        /// Jump time \[s\].
        time: f64,
        /// Value before.
        before: f64,
        /// Value from `time` on.
        after: f64,
    },
    /// f = from for t < t0, linear from `from` to `to` on [t0, t1], `to` for
    /// t ≥ t1: f = from + (to − from)(t − t0)/(t1 − t0). Requires t1 > t0.
    /// Evaluated as f = (1 − λ) from + λ to with λ = (t − t0)/(t1 − t0) ∈
    /// [0, 1], which stays finite even when to − from overflows.
    Ramp {
        /// Start \[s\].
        t0: f64,
        /// End \[s\].
        t1: f64,
        /// Value up to t0.
        from: f64,
        /// Value from t1 on.
        to: f64,
    },
    /// Smoothed step (termeer test 2b, studies.md S3b):
    /// f = offset + amplitude · (atan(rate · (t − time)) + π/2).
    /// With u = rate (t − time): f' = amplitude · rate/(1 + u²),
    /// f'' = −2 amplitude · rate² u/(1 + u²)². Smooth: no breakpoints.
    /// For |u| > 1 these are evaluated with v = 1/u and rate · v =
    /// 1/(t − time) as f' = amplitude (rate v) v/(1 + v²),
    /// f'' = −2 amplitude (rate v)² v/(1 + v²)², so that u² never
    /// overflows (no NaN for any finite rate and t).
    Arctan {
        /// Amplitude (the total rise is π · amplitude).
        amplitude: f64,
        /// Rate A [1/s].
        rate: f64,
        /// Centre time t0 \[s\].
        time: f64,
        /// Offset.
        offset: f64,
    },
    /// Cycloidal ramp (termeer test 2c, studies.md S3c), s = t − time:
    /// f = 0 for s < 0, f = F (s/T − sin(2π s/T)/(2π)) for 0 ≤ s ≤ T,
    /// f = F for s > T; f' = (F/T)(1 − cos(2π s/T)),
    /// f'' = (2π F/T²) sin(2π s/T). Breakpoints at time and time + T.
    /// At s = 0 the right-hand values (0, 0, 0) are returned exactly, and
    /// F/T² is formed as (F/T)/T, so a tiny T gives ±∞, never NaN.
    Cycloidal {
        /// Start t0 \[s\].
        time: f64,
        /// Duration T > 0 \[s\].
        duration: f64,
        /// Final value F.
        magnitude: f64,
    },
    /// Tabulated values (see [`Table`]). Boxed so that the enum stays 40
    /// bytes: a `sum` of many terms is a contiguous array of them, and its
    /// evaluation is bound by the bytes it reads.
    Table(Box<Table>),
    /// f = Σ g_i.
    Sum(Vec<TimeFunction>),
    /// f = Π g_i; derivatives by the product rule applied pairwise:
    /// (pg)' = p'g + pg', (pg)'' = p''g + 2p'g' + pg''.
    Product(Vec<TimeFunction>),
    /// f(t) = scale · g(t − delay).
    Shift {
        /// g.
        function: Box<TimeFunction>,
        /// Delay \[s\].
        delay: f64,
        /// Scale factor.
        scale: f64,
    },
    /// f = g for a named entry g of `[functions]`, shared rather than
    /// copied: every reference to a name points at the one compiled
    /// function, so a chain of n functions each defined from the previous
    /// one compiles in O(n) time and memory instead of O(n²).
    Named {
        /// The entry's name in `[functions]`.
        name: Arc<str>,
        /// The compiled function g.
        function: Arc<TimeFunction>,
    },
}

impl TimeFunction {
    /// (f(t), f'(t), f''(t)). Does not allocate.
    pub fn eval(&self, t: f64) -> (f64, f64, f64) {
        match self {
            TimeFunction::Constant(c) => (*c, 0.0, 0.0),
            TimeFunction::Polynomial(c) => {
                // Horner for f, f', f'' simultaneously.
                let (mut f, mut d1, mut d2) = (0.0, 0.0, 0.0);
                for &ci in c.iter().rev() {
                    d2 = d2 * t + 2.0 * d1;
                    d1 = d1 * t + f;
                    f = f * t + ci;
                }
                (f, d1, d2)
            }
            TimeFunction::Harmonic {
                amplitude,
                frequency,
                phase,
                offset,
            } => {
                let (s, c) = (frequency * t + phase).sin_cos();
                (
                    offset + amplitude * s,
                    amplitude * frequency * c,
                    -amplitude * frequency * frequency * s,
                )
            }
            TimeFunction::Step {
                time,
                before,
                after,
            } => {
                if t < *time {
                    (*before, 0.0, 0.0)
                } else {
                    (*after, 0.0, 0.0)
                }
            }
            TimeFunction::Ramp { t0, t1, from, to } => {
                if t < *t0 {
                    (*from, 0.0, 0.0)
                } else if t >= *t1 {
                    (*to, 0.0, 0.0)
                } else {
                    let lambda = (t - t0) / (t1 - t0);
                    let slope = (to - from) / (t1 - t0);
                    ((1.0 - lambda) * from + lambda * to, slope, 0.0)
                }
            }
            TimeFunction::Arctan {
                amplitude,
                rate,
                time,
                offset,
            } => {
                let u = rate * (t - time);
                let f = offset + amplitude * (u.atan() + FRAC_PI_2);
                if *amplitude == 0.0 || u == 0.0 {
                    (f, amplitude * rate, 0.0)
                } else if u.abs() <= 1.0 {
                    let w = 1.0 + u * u;
                    (
                        f,
                        amplitude * rate / w,
                        -2.0 * (amplitude * rate) * (rate * u) / (w * w),
                    )
                } else {
                    // v = 1/u, rate v = 1/(t − time): no u² to overflow
                    let v = 1.0 / u;
                    let rv = 1.0 / (t - time);
                    let c = 1.0 / (1.0 + v * v);
                    (
                        f,
                        amplitude * rv * v * c,
                        -2.0 * amplitude * rv * rv * v * c * c,
                    )
                }
            }
            TimeFunction::Cycloidal {
                time,
                duration,
                magnitude,
            } => {
                let s = t - time;
                if s <= 0.0 {
                    (0.0, 0.0, 0.0)
                } else if s > *duration {
                    (*magnitude, 0.0, 0.0)
                } else {
                    let x = 2.0 * PI * s / duration;
                    let (sx, cx) = x.sin_cos();
                    (
                        magnitude * (s / duration - sx / (2.0 * PI)),
                        magnitude / duration * (1.0 - cx),
                        2.0 * PI * (magnitude / duration) / duration * sx,
                    )
                }
            }
            TimeFunction::Table(table) => table.eval(t),
            TimeFunction::Sum(terms) => {
                // Steps and constants (f' = f'' = 0) are added inline: a sum
                // of 1e5 steps then costs a few ns per term, not a call each.
                let (mut f, mut d1, mut d2) = (0.0, 0.0, 0.0);
                for g in terms {
                    match g {
                        TimeFunction::Constant(c) => f += c,
                        TimeFunction::Step {
                            time,
                            before,
                            after,
                        } => f += if t < *time { *before } else { *after },
                        _ => {
                            let (g0, g1, g2) = g.eval(t);
                            f += g0;
                            d1 += g1;
                            d2 += g2;
                        }
                    }
                }
                (f, d1, d2)
            }
            TimeFunction::Product(factors) => {
                factors.iter().fold((1.0, 0.0, 0.0), |(p, p1, p2), g| {
                    let (f, d1, d2) = g.eval(t);
                    (p * f, p1 * f + p * d1, p2 * f + 2.0 * p1 * d1 + p * d2)
                })
            }
            TimeFunction::Shift {
                function,
                delay,
                scale,
            } => {
                let (f, d1, d2) = function.eval(t - delay);
                (scale * f, scale * d1, scale * d2)
            }
            TimeFunction::Named { function, .. } => function.eval(t),
        }
    }

    /// Appends the times where f, f' or f'' is not continuous (step times,
    /// ramp and cycloid ends, table knots) to `out`, unsorted and possibly
    /// with duplicates. See [`TimeFunction::breakpoints_sorted`].
    pub fn breakpoints(&self, out: &mut Vec<f64>) {
        match self {
            TimeFunction::Constant(_)
            | TimeFunction::Polynomial(_)
            | TimeFunction::Harmonic { .. }
            | TimeFunction::Arctan { .. } => {}
            TimeFunction::Step { time, .. } => out.push(*time),
            TimeFunction::Ramp { t0, t1, .. } => {
                out.push(*t0);
                out.push(*t1);
            }
            TimeFunction::Cycloidal { time, duration, .. } => {
                out.push(*time);
                out.push(time + duration);
            }
            TimeFunction::Table(table) => table.breakpoints(out),
            TimeFunction::Sum(fs) | TimeFunction::Product(fs) => {
                for g in fs {
                    g.breakpoints(out);
                }
            }
            TimeFunction::Shift {
                function, delay, ..
            } => {
                let start = out.len();
                function.breakpoints(out);
                for b in &mut out[start..] {
                    *b += delay;
                }
            }
            TimeFunction::Named { function, .. } => function.breakpoints(out),
        }
    }

    /// The breakpoints sorted ascending without duplicates.
    pub fn breakpoints_sorted(&self) -> Vec<f64> {
        let mut out = Vec::new();
        self.breakpoints(&mut out);
        out.sort_by(f64::total_cmp);
        out.dedup();
        out
    }

    /// True if f does not depend on t.
    pub fn is_constant(&self) -> bool {
        match self {
            TimeFunction::Constant(_) => true,
            TimeFunction::Polynomial(c) => c.iter().skip(1).all(|&ci| ci == 0.0),
            TimeFunction::Named { function, .. } => function.is_constant(),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::TimeFunction;

    /// A `sum` of n terms reads n of these: keep them small (see `Table`).
    #[test]
    fn a_time_function_is_at_most_forty_bytes() {
        assert!(std::mem::size_of::<TimeFunction>() <= 40);
    }
}
