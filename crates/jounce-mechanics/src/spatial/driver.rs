//! Drivers of spatial joints: one rheonomic equation prescribing a
//! revolute joint's angle or a prismatic joint's slide as f(t), both
//! measured from the initial configuration (zero there). The value f(t)
//! comes in the scalar type, so that Φ_t, Φ_qt and the f', f'' terms of γ
//! come out of the same code when the caller seeds time (t + ε), as in the
//! planar drivers (`crate::driver`).
//!
//! **Revolute** (axis h_a on body a; f_a ⊥ h_a and g_a = h_a × f_a, so
//! (f_a, g_a, h_a) is right-handed; f_b⁰ = A_b0ᵀ A_a0 f_a, f_a's image on
//! body b at the start): the angle θ of body b relative to body a,
//! right-handed about the axis A_a h_a, has
//! cos θ = (A_a f_a)·(A_b f_b⁰), sin θ = (A_a g_a)·(A_b f_b⁰) while the
//! joint holds (A_b f_b⁰ ⊥ the axis). The driver is
//!
//! ```text
//! Φ = sin(θ − f) = (A_b f_b⁰)·(A_a (cos f g_a − sin f f_a)),
//! ```
//!
//! regular (∂Φ/∂θ = cos(θ − f) = 1) on Φ = 0 near θ = f, with no atan2
//! branch cut: the angle may turn without bound. Φ also vanishes at
//! θ = f + π (where ∂Φ/∂θ = −1): a motion started on θ = f stays there,
//! but assembly with f(0) more than π/2 from the start may find that root. Its multiplier λ is then
//! the torque about the axis that the driver applies to body a, −λ on
//! body b (M v̇ = Q − Φ_qᵀλ). Haug 1989, §9.5 (absolute and relative
//! drivers, "rotational driver" with the angle from two dot products).
//!
//! **Prismatic** (points s_a, s_b, axis h_a on body a):
//!
//! ```text
//! Φ = (r_b + A_b s_b − r_a − A_a s_a)·(A_a h_a) − d₀ − f,
//! ```
//!
//! d₀ the slide at the start; λ is the force along the axis on body a
//! (−λ on body b). Haug 1989, §9.5 ("translational driver").
//!
//! Owns: the two residuals. Must not: evaluate time functions.

use super::body::Pose;
use super::quaternion::{dot, lift, sub};
use crate::kinematics::Scalar;

/// Body-frame data of a driven joint.
#[derive(Clone, Copy, Debug)]
pub enum Drive {
    /// Angle about a revolute joint's axis.
    Angle {
        /// f_a ⊥ the axis, body a.
        f_a: [f64; 3],
        /// g_a = h_a × f_a, body a.
        g_a: [f64; 3],
        /// f_a's image on body b at the start.
        f_b: [f64; 3],
    },
    /// Slide along a prismatic joint's axis.
    Slide {
        /// Point on body a.
        s_a: [f64; 3],
        /// Point on body b.
        s_b: [f64; 3],
        /// The axis, body a.
        h_a: [f64; 3],
        /// The slide at the start \[m\].
        d0: f64,
    },
}

/// The driven coordinate (θ − f or slide − d₀ − f as Φ) of `drive` at the
/// poses, with f = f(t) in the scalar type.
pub fn residual<D: Scalar>(drive: &Drive, pa: &Pose<D>, pb: &Pose<D>, f: D) -> D {
    match drive {
        Drive::Angle { f_a, g_a, f_b } => {
            let (s, c) = (f.sin(), f.cos());
            let fa = pa.vector(&lift(f_a));
            let ga = pa.vector(&lift(g_a));
            let e: [D; 3] = std::array::from_fn(|k| ga[k] * c - fa[k] * s);
            dot(&pb.vector(&lift(f_b)), &e)
        }
        Drive::Slide { s_a, s_b, h_a, d0 } => {
            let d = sub(&pb.point(&lift(s_b)), &pa.point(&lift(s_a)));
            dot(&d, &pa.vector(&lift(h_a))) - *d0 - f
        }
    }
}

/// The angle θ ∈ (−π, π] of a revolute drive at the poses (for output
/// and tests): atan2 of the two dot products.
#[must_use]
pub fn angle(drive: &Drive, pa: &Pose<f64>, pb: &Pose<f64>) -> f64 {
    match drive {
        Drive::Angle { f_a, g_a, f_b } => {
            let fb = pb.vector(f_b);
            dot(&pa.vector(g_a), &fb).atan2(dot(&pa.vector(f_a), &fb))
        }
        Drive::Slide { .. } => residual(drive, pa, pb, 0.0),
    }
}
