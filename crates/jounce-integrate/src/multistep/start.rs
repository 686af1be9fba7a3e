//! The starting procedure of the fixed-step multistep methods: the classic
//! fourth-order Runge-Kutta method (Kutta 1901; Hairer–Nørsett–Wanner I,
//! Table II.1.2) supplies the k − 1 back values a k-step method needs.
//!
//! Its local error O(h⁵) keeps the global order of every method up to
//! order 5 (HNW I, Section III.2, Theorem 2.10: starting values need
//! errors O(h^p)). Being explicit, it limits the very first k − 1 steps to
//! |hλ| within RK4's stability region (≈ 2.78 on the negative axis); on
//! stiff problems use `bdf`/`ndf`, which start at order 1.

use crate::error::IntegrateError;
use crate::problem::OdeProblem;

/// Scratch space of one RK4 step (preallocated).
#[derive(Default)]
pub struct Rk4Scratch {
    k: [Vec<f64>; 4],
    tmp: Vec<f64>,
}

impl Rk4Scratch {
    /// Scratch for dimension n.
    pub fn new(n: usize) -> Self {
        Self {
            k: std::array::from_fn(|_| vec![0.0; n]),
            tmp: vec![0.0; n],
        }
    }

    /// One RK4 step y1 = y0 + h/6 (k1 + 2 k2 + 2 k3 + k4) with k1 = f0 = f(t0, y0).
    pub fn step(
        &mut self,
        p: &mut dyn OdeProblem,
        t0: f64,
        y0: &[f64],
        f0: &[f64],
        h: f64,
        y1: &mut [f64],
    ) -> Result<(), IntegrateError> {
        let n = y0.len();
        self.k[0].copy_from_slice(f0);
        for (s, c) in [(1usize, 0.5), (2, 0.5), (3, 1.0)] {
            for i in 0..n {
                self.tmp[i] = y0[i] + c * h * self.k[s - 1][i];
            }
            let (_, rest) = self.k.split_at_mut(s);
            p.rhs(t0 + c * h, &self.tmp, &mut rest[0])?;
        }
        for i in 0..n {
            y1[i] = y0[i]
                + h / 6.0 * (self.k[0][i] + 2.0 * self.k[1][i] + 2.0 * self.k[2][i] + self.k[3][i]);
        }
        Ok(())
    }
}
