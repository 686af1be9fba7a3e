//! Planar spatial vector algebra (Featherstone, *Rigid Body Dynamics
//! Algorithms*, Springer 2008, sec. 2.16 "Planar vectors"), generic over the
//! scalar so that the same code gives values (f64) and exact derivatives
//! (dual numbers).
//!
//! Every quantity is expressed in one frame: the world frame at its origin
//! O. A motion vector is m = (ω, v_x, v_y), with v the velocity of the
//! body-fixed point that coincides with O; a force vector is
//! f = (n, f_x, f_y), with n the moment about O. Because the frame is
//! fixed, no coordinate transforms appear between bodies, and the time
//! derivative of a motion vector is its plain derivative.
//!
//! Cross products (Featherstone eq. 2.44 in planar form):
//!
//! ```text
//! v × m  = (0,  v_y m_ω − ω m_y,  −v_x m_ω + ω m_x)
//! v ×* f = (−v_y f_x + v_x f_y,  −ω f_y,  ω f_x)
//! ```
//!
//! The spatial inertia of a body of mass m and centroidal inertia J whose
//! centre of mass is at c (Featherstone eq. 2.63, shifted to O):
//!
//! ```text
//! I = [ J + m|c|²   −m c_y   m c_x ]
//!     [ −m c_y       m        0    ]
//!     [  m c_x       0        m    ]
//! ```

use crate::kinematics::Scalar;

/// A planar motion or force vector (ω or n first).
pub type Vec3<D> = [D; 3];

/// A symmetric 3 × 3 matrix stored as its upper triangle
/// (00, 01, 02, 11, 12, 22): spatial and articulated inertias.
pub type Sym3<D> = [D; 6];

/// The zero vector.
#[inline]
pub fn zero3<D: Scalar>() -> Vec3<D> {
    [D::from(0.0); 3]
}

/// The zero symmetric matrix.
#[inline]
pub fn zero_sym<D: Scalar>() -> Sym3<D> {
    [D::from(0.0); 6]
}

/// a + b.
#[inline]
pub fn add<D: Scalar>(a: Vec3<D>, b: Vec3<D>) -> Vec3<D> {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

/// s a.
#[inline]
pub fn scale<D: Scalar>(s: D, a: Vec3<D>) -> Vec3<D> {
    [s * a[0], s * a[1], s * a[2]]
}

/// aᵀ b (a force applied to a motion: power).
#[inline]
pub fn dot3<D: Scalar>(a: Vec3<D>, b: Vec3<D>) -> D {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// I m for a symmetric I.
#[inline]
pub fn mul_sym<D: Scalar>(i: &Sym3<D>, m: Vec3<D>) -> Vec3<D> {
    [
        i[0] * m[0] + i[1] * m[1] + i[2] * m[2],
        i[1] * m[0] + i[3] * m[1] + i[4] * m[2],
        i[2] * m[0] + i[4] * m[1] + i[5] * m[2],
    ]
}

/// A + B.
#[inline]
pub fn add_sym<D: Scalar>(a: &mut Sym3<D>, b: &Sym3<D>) {
    for k in 0..6 {
        a[k] += b[k];
    }
}

/// A − u uᵀ d⁻¹ (the rank-one update of the articulated-body algorithm),
/// given `inv_d` = d⁻¹.
#[inline]
pub fn sub_outer<D: Scalar>(a: &Sym3<D>, u: Vec3<D>, inv_d: D) -> Sym3<D> {
    let w = [u[0] * inv_d, u[1] * inv_d, u[2] * inv_d];
    [
        a[0] - u[0] * w[0],
        a[1] - u[0] * w[1],
        a[2] - u[0] * w[2],
        a[3] - u[1] * w[1],
        a[4] - u[1] * w[2],
        a[5] - u[2] * w[2],
    ]
}

/// Largest magnitude of the entries (a scale for singularity tests).
#[inline]
pub fn max_abs_sym<D: Scalar>(a: &Sym3<D>) -> f64 {
    a.iter().fold(0.0, |m: f64, x| m.max(x.re().abs()))
}

/// Motion cross product v × m.
#[inline]
pub fn cross_motion<D: Scalar>(v: Vec3<D>, m: Vec3<D>) -> Vec3<D> {
    [
        D::from(0.0),
        v[2] * m[0] - v[0] * m[2],
        v[0] * m[1] - v[1] * m[0],
    ]
}

/// Force cross product v ×* f.
#[inline]
pub fn cross_force<D: Scalar>(v: Vec3<D>, f: Vec3<D>) -> Vec3<D> {
    [v[1] * f[2] - v[2] * f[1], -(v[0] * f[2]), v[0] * f[1]]
}

/// Spatial inertia at O of a body of mass `m`, centroidal inertia `j`,
/// centre of mass at `c`.
#[inline]
pub fn body_inertia<D: Scalar>(m: f64, j: f64, c: [D; 2]) -> Sym3<D> {
    let (mx, my) = (c[0] * m, c[1] * m);
    [
        (c[0] * c[0] + c[1] * c[1]) * m + j,
        -my,
        mx,
        D::from(m),
        D::from(0.0),
        D::from(m),
    ]
}

/// Spatial velocity at O, (ω, ṙ − ω × r), of a body whose centre of mass is
/// at `r` moving with ṙ and ω.
#[inline]
pub fn velocity_at_origin<D: Scalar>(r: [D; 2], rdot: [D; 2], omega: D) -> Vec3<D> {
    [omega, rdot[0] + omega * r[1], rdot[1] - omega * r[0]]
}

/// The force vector at O of a force `f` through `r` plus a couple `n`
/// (a body's generalized force (f_x, f_y, n) in body coordinates, moment
/// about its centre of mass at r): (n + r × f, f_x, f_y).
#[inline]
pub fn force_at_origin<D: Scalar>(r: [D; 2], f: [D; 2], n: D) -> Vec3<D> {
    [n + r[0] * f[1] - r[1] * f[0], f[0], f[1]]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// v ×* f = −(v ×)ᵀ f: the force cross product is the dual of the
    /// motion cross product, (v × m)·f + m·(v ×* f) = 0.
    #[test]
    fn cross_products_are_dual() {
        let v: [f64; 3] = [0.3, -1.2, 0.7];
        let m = [1.1, 0.4, -0.9];
        let f = [-0.5, 2.0, 0.25];
        let s = dot3(cross_motion(v, m), f) + dot3(m, cross_force(v, f));
        assert!(s.abs() < 1e-14, "{s}");
    }

    /// Kinetic energy ½ Vᵀ I V at O equals ½ m |ṙ|² + ½ J ω².
    #[test]
    fn inertia_at_origin_gives_the_kinetic_energy() {
        let (m, j, r, rd, w) = (2.0, 0.3, [0.7, -1.4], [0.2, 0.9], -1.3);
        let v = velocity_at_origin(r, rd, w);
        let e = 0.5 * dot3(v, mul_sym(&body_inertia(m, j, r), v));
        let expect = 0.5 * m * (rd[0] * rd[0] + rd[1] * rd[1]) + 0.5 * j * w * w;
        assert!((e - expect).abs() < 1e-13, "{e} vs {expect}");
    }
}
