//! Euler parameters (unit quaternions) and 3-vectors, generic over the
//! scalar (f64 or dual numbers) so that the same code gives values and
//! exact derivatives.
//!
//! A body's orientation is p = (w, x, y, z), |p| = 1, rotating body-frame
//! vectors into the world frame: a = A(p) s (Nikravesh 1988,
//! *Computer-Aided Analysis of Mechanical Systems*, §6.3, eq. 6.19;
//! Haug 1989, *Computer-Aided Kinematics and Dynamics of Mechanical
//! Systems*, §9.3). With the angular velocity ω in the body frame the
//! kinematic map is ṗ = ½ p ⊗ (0, ω) (Haug eq. 9.3.29), and the rotation
//! increment δ (body frame) acts as p ⊕ δ = p ⊗ exp(δ), exp(δ) =
//! (cos(|δ|/2), sin(|δ|/2) δ/|δ|): the exponential map, exact for a
//! constant body-frame ω over a step.
//!
//! Owns: quaternion product, rotation matrix, exponential map, vector
//! algebra. Must not: know bodies or elements.

use crate::kinematics::Scalar;

/// A 3-vector.
pub type Vec3<D> = [D; 3];
/// A quaternion (w, x, y, z).
pub type Quat<D> = [D; 4];
/// A 3×3 matrix, rows.
pub type Mat3<D> = [[D; 3]; 3];

/// a · b.
#[inline]
pub fn dot<D: Scalar>(a: &Vec3<D>, b: &Vec3<D>) -> D {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// a × b.
#[inline]
pub fn cross<D: Scalar>(a: &Vec3<D>, b: &Vec3<D>) -> Vec3<D> {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// a + b.
#[inline]
pub fn add<D: Scalar>(a: &Vec3<D>, b: &Vec3<D>) -> Vec3<D> {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

/// a − b.
#[inline]
pub fn sub<D: Scalar>(a: &Vec3<D>, b: &Vec3<D>) -> Vec3<D> {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// s a.
#[inline]
pub fn scale<D: Scalar>(s: D, a: &Vec3<D>) -> Vec3<D> {
    [a[0] * s, a[1] * s, a[2] * s]
}

/// A constant vector lifted into the scalar type.
#[inline]
pub fn lift<D: Scalar>(a: &[f64; 3]) -> Vec3<D> {
    [D::from(a[0]), D::from(a[1]), D::from(a[2])]
}

/// M x.
#[inline]
pub fn mat_vec<D: Scalar>(m: &Mat3<D>, x: &Vec3<D>) -> Vec3<D> {
    [dot(&m[0], x), dot(&m[1], x), dot(&m[2], x)]
}

/// Mᵀ x.
#[inline]
pub fn mat_t_vec<D: Scalar>(m: &Mat3<D>, x: &Vec3<D>) -> Vec3<D> {
    std::array::from_fn(|i| m[0][i] * x[0] + m[1][i] * x[1] + m[2][i] * x[2])
}

/// The Hamilton product a ⊗ b.
#[inline]
pub fn product<D: Scalar>(a: &Quat<D>, b: &Quat<D>) -> Quat<D> {
    [
        a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
        a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
        a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
    ]
}

/// The rotation matrix A(p/|p|), body to world (Nikravesh eq. 6.19). The
/// quaternion is normalised here, so that the dynamics does not depend on
/// the integration error in |p| (which the formulations remove by
/// normalising after each step).
pub fn rotation<D: Scalar>(p: &Quat<D>) -> Mat3<D> {
    let n2 = p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3];
    let two = D::from(2.0) / n2;
    let [w, x, y, z] = *p;
    let one = D::one();
    [
        [
            one - two * (y * y + z * z),
            two * (x * y - w * z),
            two * (x * z + w * y),
        ],
        [
            two * (x * y + w * z),
            one - two * (x * x + z * z),
            two * (y * z - w * x),
        ],
        [
            two * (x * z - w * y),
            two * (y * z + w * x),
            one - two * (x * x + y * y),
        ],
    ]
}

/// exp(δ) = (cos(θ/2), sin(θ/2)/θ δ), θ = |δ|, the unit quaternion of the
/// rotation vector δ. Both functions of θ² are evaluated by their Taylor
/// series for θ² < 0.01, so that derivatives at δ = 0 (where θ = √0 has
/// none) are exact.
pub fn exp<D: Scalar>(delta: &Vec3<D>) -> Quat<D> {
    let s = dot(delta, delta);
    let (c, k) = if s.re() < 0.01 {
        // cos(θ/2) = Σ (−s/4)^n/(2n)!, sin(θ/2)/θ = ½ Σ (−s/4)^n/(2n+1)!
        let x = s * (-0.25);
        let mut term_c = D::one();
        let mut term_s = D::from(0.5);
        let mut c = term_c;
        let mut k = term_s;
        for n in 1..9 {
            let n = f64::from(n);
            term_c = term_c * x / ((2.0 * n - 1.0) * (2.0 * n));
            term_s = term_s * x / ((2.0 * n) * (2.0 * n + 1.0));
            c += term_c;
            k += term_s;
        }
        (c, k)
    } else {
        let theta = s.sqrt();
        let half = theta * 0.5;
        (half.cos(), half.sin() / theta)
    };
    [c, delta[0] * k, delta[1] * k, delta[2] * k]
}

/// p ⊕ δ = p ⊗ exp(δ): the orientation turned by the body-frame rotation
/// vector δ (the retraction of the position update).
pub fn turn<D: Scalar>(p: &Quat<D>, delta: &Vec3<D>) -> Quat<D> {
    product(p, &exp(delta))
}

/// ṗ = ½ p ⊗ (0, ω), ω in the body frame (Haug eq. 9.3.29).
pub fn quaternion_rate(p: &[f64; 4], omega: &[f64; 3]) -> [f64; 4] {
    let q = product(p, &[0.0, omega[0], omega[1], omega[2]]);
    q.map(|x| 0.5 * x)
}

/// Tait–Bryan angles (yaw, pitch, roll) of the z-y′-x″ sequence of p:
/// A(p) = R_z(yaw) R_y(pitch) R_x(roll), the aerospace convention and
/// URDF's fixed-axis roll-pitch-yaw (the 3-2-1 sequence of Diebel 2006,
/// *Representing attitude: Euler angles, unit quaternions, and rotation
/// vectors*, read off the rotation matrix). yaw, roll ∈ (−π, π], pitch ∈
/// [−π/2, π/2]; at pitch = ±π/2 (gimbal lock) only yaw ∓ roll is defined
/// and roll is reported as 0.
pub fn euler_zyx(p: &[f64; 4]) -> [f64; 3] {
    let a = rotation(p);
    // A[2][0] = −sin(pitch); A[1][0], A[0][0] = cos(pitch) (sin, cos)(yaw);
    // A[2][1], A[2][2] = cos(pitch) (sin, cos)(roll)
    let sp = (-a[2][0]).clamp(-1.0, 1.0);
    let pitch = sp.asin();
    let cp = a[0][0].hypot(a[1][0]);
    if cp > 1e-12 {
        [a[1][0].atan2(a[0][0]), pitch, a[2][1].atan2(a[2][2])]
    } else {
        // gimbal lock: A = R_z(yaw) R_y(±π/2) with roll folded into yaw
        [(-a[0][1]).atan2(a[1][1]), pitch, 0.0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_dual::Dual64;

    /// R_z(yaw) R_y(pitch) R_x(roll) as a quaternion (product of the three
    /// axis quaternions).
    fn from_zyx(yaw: f64, pitch: f64, roll: f64) -> [f64; 4] {
        let qz = [(yaw / 2.0).cos(), 0.0, 0.0, (yaw / 2.0).sin()];
        let qy = [(pitch / 2.0).cos(), 0.0, (pitch / 2.0).sin(), 0.0];
        let qx = [(roll / 2.0).cos(), (roll / 2.0).sin(), 0.0, 0.0];
        product(&product(&qz, &qy), &qx)
    }

    #[test]
    fn euler_zyx_inverts_the_z_y_x_product_and_handles_gimbal_lock() {
        for &(yaw, pitch, roll) in &[
            (0.3, -0.2, 1.1),
            (-2.9, 1.4, -3.0),
            (3.0, -1.5, 0.0),
            (0.0, 0.0, 0.0),
            (1.0, 0.7, -0.4),
        ] {
            let p = from_zyx(yaw, pitch, roll);
            let e = euler_zyx(&p);
            for (got, want) in e.iter().zip([yaw, pitch, roll]) {
                assert!((got - want).abs() < 1e-12, "{e:?} for {yaw} {pitch} {roll}");
            }
            // the negated quaternion is the same rotation
            let e2 = euler_zyx(&p.map(|x| -x));
            assert!(e.iter().zip(e2).all(|(a, b)| (a - b).abs() < 1e-12));
        }
        // gimbal lock: only yaw − roll is defined at pitch = +π/2
        let p = from_zyx(0.9, std::f64::consts::FRAC_PI_2, 0.4);
        let e = euler_zyx(&p);
        assert!((e[1] - std::f64::consts::FRAC_PI_2).abs() < 1e-7, "{e:?}");
        assert!(e[2] == 0.0 && (e[0] - 0.5).abs() < 1e-7, "{e:?}");
        let back = rotation(&from_zyx(e[0], e[1], e[2]));
        let a = rotation(&p);
        for i in 0..3 {
            for j in 0..3 {
                assert!((back[i][j] - a[i][j]).abs() < 1e-7);
            }
        }
    }

    fn unit(p: [f64; 4]) -> [f64; 4] {
        let n = p.iter().map(|x| x * x).sum::<f64>().sqrt();
        p.map(|x| x / n)
    }

    #[test]
    fn rotation_matches_the_quaternion_sandwich_and_is_orthogonal() {
        let p = unit([0.3, -0.5, 0.7, 0.2]);
        let a = rotation(&p);
        let s = [0.4, -1.1, 2.0];
        let conj = [p[0], -p[1], -p[2], -p[3]];
        let sw = product(&product(&p, &[0.0, s[0], s[1], s[2]]), &conj);
        let as_ = mat_vec(&a, &s);
        for i in 0..3 {
            assert!((as_[i] - sw[i + 1]).abs() < 1e-14, "{as_:?} vs {sw:?}");
            for j in 0..3 {
                let aat: f64 = (0..3).map(|k| a[i][k] * a[j][k]).sum();
                assert!((aat - f64::from(u8::from(i == j))).abs() < 1e-14);
            }
        }
    }

    #[test]
    fn exp_series_and_closed_form_agree_and_have_unit_norm() {
        for &theta in &[1e-3f64, 0.099, 0.1001, 1.0, 3.0] {
            let axis = [0.6f64, 0.0, 0.8];
            let d = axis.map(|x| x * theta);
            let e: [f64; 4] = exp(&d);
            let exact = [
                (theta / 2.0).cos(),
                0.6 * (theta / 2.0).sin(),
                0.0,
                0.8 * (theta / 2.0).sin(),
            ];
            for k in 0..4 {
                assert!((e[k] - exact[k]).abs() < 1e-15, "θ = {theta}: {e:?}");
            }
        }
        // the derivative at δ = 0 is finite: d exp(ε e_x)/dε = (0, ½, 0, 0)
        let d = [
            Dual64::from_re(0.0).derivative(),
            Dual64::from_re(0.0),
            Dual64::from_re(0.0),
        ];
        let e = exp(&d);
        assert_eq!(e[1].eps, 0.5);
        assert_eq!(e[0].eps, 0.0);
    }

    #[test]
    fn the_kinematic_map_is_the_derivative_of_the_turn() {
        // d/dh (p ⊗ exp(h ω)) at h = 0 equals ½ p ⊗ (0, ω)
        let p = unit([0.9, 0.1, -0.3, 0.2]);
        let w = [1.5, -0.4, 2.0];
        let h = Dual64::from_re(0.0).derivative();
        let pd: [Dual64; 4] = p.map(Dual64::from_re);
        let turned = turn(&pd, &w.map(|x| h * x));
        let rate = quaternion_rate(&p, &w);
        for k in 0..4 {
            assert!((turned[k].eps - rate[k]).abs() < 1e-15);
        }
    }
}
