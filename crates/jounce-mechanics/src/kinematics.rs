//! Planar kinematics shared by every element, generic over the scalar so
//! that the same code yields values (f64) and exact derivatives (dual
//! numbers).
//!
//! A pose is x = (x, y, θ) of a body's centre of mass; a body-fixed point
//! s has global position P = r + A(θ) s with
//! A(θ) = [[cos θ, −sin θ], [sin θ, cos θ]].

use num_dual::DualNum;

/// Scalar type of element evaluations: f64 or a dual number over f64.
pub trait Scalar: DualNum<Primitive = f64> + Copy {}

impl<T: DualNum<Primitive = f64> + Copy> Scalar for T {}

/// A constant lifted into the scalar type.
#[inline]
pub fn c<D: Scalar>(x: f64) -> D {
    D::from(x)
}

/// tanh x, finite with a finite derivative for every finite x.
///
/// num-dual forms the tanh of a dual number as sinh x / cosh x, whose
/// derivative part (cosh² − sinh²)/cosh² is inf/inf = NaN once cosh² x
/// overflows, |x| > 355: a regularised Coulomb force tanh(v_t/v_ε) with
/// v_ε = 1e-3 had a NaN Jacobian above 0.355 m/s of sliding. For
/// |x| ≥ 20 this takes tanh x = sign(x) (1 − e)/(1 + e) with
/// e = exp(−2|x|) ≤ e^{−40}, which cannot overflow (and has no
/// cancellation there); below, num-dual's own form, exact near 0.
#[inline]
pub fn tanh<D: Scalar>(x: D) -> D {
    const LARGE: f64 = 20.0;
    let tail = |y: D| {
        let e = (y * (-2.0)).exp();
        (D::one() - e) / (D::one() + e)
    };
    if x.re() >= LARGE {
        tail(x)
    } else if x.re() <= -LARGE {
        -tail(-x)
    } else {
        x.tanh()
    }
}

/// A(θ) s: body-fixed vector `s` rotated into the global frame.
#[inline]
pub fn rotate<D: Scalar>(theta: D, s: [f64; 2]) -> [D; 2] {
    let (sn, cs) = theta.sin_cos();
    [cs * s[0] - sn * s[1], sn * s[0] + cs * s[1]]
}

/// A(θ) u for a vector u in the scalar type.
#[inline]
pub fn rotate_d<D: Scalar>(theta: D, u: [D; 2]) -> [D; 2] {
    let (sn, cs) = theta.sin_cos();
    [cs * u[0] - sn * u[1], sn * u[0] + cs * u[1]]
}

/// Aᵀ(θ) u: global vector `u` expressed in the body frame.
#[inline]
pub fn rotate_back<D: Scalar>(theta: D, u: [D; 2]) -> [D; 2] {
    let (sn, cs) = theta.sin_cos();
    [cs * u[0] + sn * u[1], -sn * u[0] + cs * u[1]]
}

/// Global position P = r + A(θ) s of body-fixed point `s` on the body at pose `x`.
#[inline]
pub fn point<D: Scalar>(x: &[D], s: [f64; 2]) -> [D; 2] {
    let a = rotate(x[2], s);
    [x[0] + a[0], x[1] + a[1]]
}

/// Global velocity Ṗ = ṙ + θ̇ Ω A(θ) s (Ω the 90° rotation) of body-fixed
/// point `s`, body at pose `x` with velocity `v`.
#[inline]
pub fn point_velocity<D: Scalar>(x: &[D], v: &[D], s: [f64; 2]) -> [D; 2] {
    let a = rotate(x[2], s);
    [v[0] - v[2] * a[1], v[1] + v[2] * a[0]]
}

/// Planar cross product a × b = a_x b_y − a_y b_x.
#[inline]
pub fn cross<D: Scalar>(a: [D; 2], b: [D; 2]) -> D {
    a[0] * b[1] - a[1] * b[0]
}

/// Dot product.
#[inline]
pub fn dot<D: Scalar>(a: [D; 2], b: [D; 2]) -> D {
    a[0] * b[0] + a[1] * b[1]
}

/// Difference a − b.
#[inline]
pub fn sub<D: Scalar>(a: [D; 2], b: [D; 2]) -> [D; 2] {
    [a[0] - b[0], a[1] - b[1]]
}

#[cfg(test)]
mod tests {
    use super::tanh;
    use num_dual::{Dual64, DualNum};

    #[test]
    fn tanh_is_finite_with_its_derivative_at_any_argument() {
        for x in [
            -1e6, -2000.0, -356.0, -20.0, -19.9, -1.0, -1e-9, 0.0, 1e-9, 0.5, 3.0, 20.0, 355.5,
            1e4, 1e300,
        ] {
            let y = tanh(Dual64::from(x).derivative());
            assert!(
                (y.re - x.tanh()).abs() <= 4.0 * f64::EPSILON * x.tanh().abs(),
                "tanh({x}) = {} vs {}",
                y.re,
                x.tanh()
            );
            let d = 1.0 - x.tanh() * x.tanh();
            assert!(
                y.eps.is_finite() && (y.eps - d).abs() <= 1e-15 + 1e-13 * d,
                "d tanh({x}) = {} vs 1 − tanh² = {d}",
                y.eps
            );
        }
        // num-dual's own form is what this replaces
        assert!(Dual64::from(400.0).derivative().tanh().eps.is_nan());
    }
}
