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
