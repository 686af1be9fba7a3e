//! Rigid (weld) joint: the relative pose of body b seen from body a is
//! locked at its initial value (three equations).
//!
//! Φ₁,₂ = A(θ_a)ᵀ (r_b − r_a) − ρ₀ = 0,   Φ₃ = θ_b − θ_a − Δθ₀ = 0,
//!
//! with ρ₀ and Δθ₀ the relative position (in a's frame) and angle in the
//! model's initial configuration.

use crate::kinematics::{c, rotate_back, Scalar};

/// Φ (3 rows) of a rigid joint; `rel0` = (ρ₀ₓ, ρ₀ᵧ, Δθ₀).
#[inline]
pub fn rigid<D: Scalar>(xa: &[D], xb: &[D], rel0: [f64; 3], out: &mut [D]) {
    let rho = rotate_back(xa[2], [xb[0] - xa[0], xb[1] - xa[1]]);
    out[0] = rho[0] - c::<D>(rel0[0]);
    out[1] = rho[1] - c::<D>(rel0[1]);
    out[2] = xb[2] - xa[2] - c::<D>(rel0[2]);
}

/// The relative pose (ρₓ, ρᵧ, Δθ) of pose `xb` seen from pose `xa`, in f64.
pub fn relative_pose(xa: [f64; 3], xb: [f64; 3]) -> [f64; 3] {
    let rho = rotate_back(xa[2], [xb[0] - xa[0], xb[1] - xa[1]]);
    [rho[0], rho[1], xb[2] - xa[2]]
}
