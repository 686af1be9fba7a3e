//! Drivers: rheonomic constraints prescribing a coordinate as f(t)
//! (one equation each). The value f(t) is passed in the scalar type, so
//! that Φ_t = −f'(t) and the f'' term of γ come out of the same code
//! when the caller seeds time (see `constraints.rs`).
//!
//! * revolute joint driver:      Φ = θ_b − θ_a − f(t) = 0
//! * translational joint driver: Φ = (P_b − P_a)·(A(θ_a) e) − f(t) = 0
//! * distance driver:            Φ = |P_b − P_a| − f(t) = 0
//!
//! The distance driver uses the length form because f(t) is a length; its
//! gradient is undefined when the two points coincide (f(t) = 0), a
//! singular configuration that assembly reports.

use crate::kinematics::{dot, point, sub, Scalar};
use crate::revolute::revolute_angle;
use crate::translational::translational_coordinate;

/// Φ of a driver on a revolute joint's relative angle.
#[inline]
pub fn revolute_driver<D: Scalar>(xa: &[D], xb: &[D], f: D, out: &mut [D]) {
    out[0] = revolute_angle(xa, xb) - f;
}

/// Φ of a driver on a translational joint's slide coordinate.
#[inline]
pub fn translational_driver<D: Scalar>(
    xa: &[D],
    sa: [f64; 2],
    xb: &[D],
    sb: [f64; 2],
    axis: [f64; 2],
    f: D,
    out: &mut [D],
) {
    out[0] = translational_coordinate(xa, sa, xb, sb, axis) - f;
}

/// Φ of a distance driver.
#[inline]
pub fn distance_driver<D: Scalar>(
    xa: &[D],
    sa: [f64; 2],
    xb: &[D],
    sb: [f64; 2],
    f: D,
    out: &mut [D],
) {
    let d = sub(point(xb, sb), point(xa, sa));
    out[0] = dot(d, d).sqrt() - f;
}
