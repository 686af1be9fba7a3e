//! Massless planar beam element between node 1 (point s_a on body a) and
//! node 2 (point s_b on body b): three generalized loads from the relative
//! displacement and rotation of node 2 in the frame of node 1, written once
//! for any scalar (exact Jacobians by dual numbers).
//!
//! # Kinematics (co-rotational with body a)
//! The beam frame is body a's frame turned by the axis angle α,
//! B = A(θ_a + α). With d = P_b − P_a and w = Bᵀ d (node 2 seen from
//! node 1, in the beam frame) the beam coordinates are
//!
//! ```text
//! u_x = |w| − L          axial elongation (chord length)
//! u_y = w_y              transverse displacement
//! φ   = θ_b − θ_a − φ0   bending rotation of node 2 against node 1
//! ```
//!
//! For small deflections u_x = w_x − L to first order, the relative
//! displacement of MECHANICA MOTION's beam load (termeer 1996, section
//! 6.4); the chord length makes the axial coordinate exactly zero under a
//! constant-length constraint between the nodes (termeer's test 4b locks
//! the axial degree of freedom that way).
//!
//! # Loads
//! The stiffness is that of a planar Euler–Bernoulli cantilever clamped at
//! node 1 (Przemieniecki 1968, *Theory of Matrix Structural Analysis*,
//! sec. 5.2; the node-2 block of the beam element matrix):
//!
//! ```text
//! K = diag(EA/L, K_b),   K_b = [ 12EI/L³  −6EI/L² ]
//!                              [ −6EI/L²   4EI/L  ]
//! ```
//!
//! and the damping is stiffness-proportional, C = d K (termeer 1996, sec.
//! 6.4: the damping value d multiplies every stiffness, c_i = d k_i), with
//! the axial load's value d_a separately settable (default d):
//! C = diag(d_a EA/L, d K_b). With C = d K every mode i of a beam and its
//! masses has the damping ratio ζ_i = d ω_i / 2, so the axial mode, the
//! fastest, is critically damped at d = 2/ω_axial while the bending modes
//! stay underdamped; d_a damps the axial mode alone. The
//! loads on node 2 in the beam frame are f = (N, V, M) = K u + C u̇ and
//! the generalized forces are Q = −(∂u/∂q)ᵀ f. With d = 0 this is the
//! gradient of V = ½ uᵀ K u: the element conserves energy, and since u is
//! invariant under rigid motions of the pair it exerts no net force or
//! moment (node 1's reaction carries the moment of the lever w).
//!
//! # Restrictions
//! Small strains: the loads are linear in u. When the nodes (nearly)
//! coincide, |w| < [`MIN_LENGTH`], the axial direction is undefined and the
//! axial load is dropped.

use crate::kinematics::{c, cross, point, point_velocity, rotate, rotate_back, sub, Scalar};
use crate::spring_damper::MIN_LENGTH;

/// Constant parameters of a beam element.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BeamParams {
    /// Node 1 on body a (body frame).
    pub sa: [f64; 2],
    /// Node 2 on body b (body frame).
    pub sb: [f64; 2],
    /// Axis angle α of the beam in body a's frame \[rad\].
    pub axis_angle: f64,
    /// Unstressed length L \[m\].
    pub length: f64,
    /// Unstressed relative rotation φ0 = θ_b − θ_a \[rad\].
    pub zero_angle: f64,
    /// Axial stiffness EA/L \[N/m\].
    pub axial: f64,
    /// Bending block K_b (transverse, rotation) \[N/m, N, N·m/rad\].
    pub bending: [[f64; 2]; 2],
    /// Damping value d \[s\] of the bending block: C_b = d K_b.
    pub damping: f64,
    /// Damping value d_a \[s\] of the axial load: c_x = d_a EA/L.
    pub axial_damping: f64,
}

impl BeamParams {
    /// Parameters from the section and material: E \[Pa\], A \[m²\],
    /// I \[m⁴\], L \[m\], damping value d \[s\] of every load (see
    /// [`BeamParams::with_axial_damping`] for the axial one alone).
    pub fn new(
        sa: [f64; 2],
        sb: [f64; 2],
        axis_angle: f64,
        zero_angle: f64,
        e: f64,
        a: f64,
        i: f64,
        l: f64,
        damping: f64,
    ) -> Self {
        let ei = e * i;
        Self {
            sa,
            sb,
            axis_angle,
            length: l,
            zero_angle,
            axial: e * a / l,
            bending: [
                [12.0 * ei / (l * l * l), -6.0 * ei / (l * l)],
                [-6.0 * ei / (l * l), 4.0 * ei / l],
            ],
            damping,
            axial_damping: damping,
        }
    }

    /// The same beam with the axial load's damping value d_a \[s\].
    #[must_use]
    pub fn with_axial_damping(self, axial_damping: f64) -> Self {
        Self {
            axial_damping,
            ..self
        }
    }

    /// The 3 × 3 stiffness K in the beam coordinates (u_x, u_y, φ).
    pub fn stiffness(&self) -> [[f64; 3]; 3] {
        let b = self.bending;
        [
            [self.axial, 0.0, 0.0],
            [0.0, b[0][0], b[0][1]],
            [0.0, b[1][0], b[1][1]],
        ]
    }
}

/// Beam coordinates at local poses: w (node 2 from node 1 in the beam
/// frame), u = (u_x, u_y, φ) and the beam frame angle θ_a + α.
#[inline]
fn coordinates<D: Scalar>(p: &BeamParams, xa: &[D], xb: &[D]) -> ([D; 2], [D; 3], D) {
    let beta = xa[2] + p.axis_angle;
    let w = rotate_back(beta, sub(point(xb, p.sb), point(xa, p.sa)));
    let len = (w[0] * w[0] + w[1] * w[1]).sqrt();
    let ux = len - c::<D>(p.length);
    (w, [ux, w[1], xb[2] - xa[2] - c::<D>(p.zero_angle)], beta)
}

/// Beam coordinates u = (u_x, u_y, φ) at local poses `xa`, `xb` (f64), for
/// output and tests.
pub fn beam_coordinates(p: &BeamParams, xa: &[f64], xb: &[f64]) -> [f64; 3] {
    coordinates(p, xa, xb).1
}

/// How far a beam is deformed, in the measures its small-strain range is
/// judged by (the loads are linear in u, see the module's restrictions).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BeamDeformation {
    /// Axial strain u_x / L (chord length over unstressed length, less 1).
    pub axial_strain: f64,
    /// Rotation of the chord from node 1 to node 2 against the beam axis
    /// (atan2(w_y, w_x)) \[rad\], in (−π, π].
    pub chord_rotation: f64,
    /// Bending rotation φ = θ_b − θ_a − φ0 of node 2 against node 1
    /// \[rad\], not wrapped.
    pub rotation: f64,
}

/// The deformation of the beam at local poses `xa`, `xb`.
pub fn beam_deformation(p: &BeamParams, xa: &[f64], xb: &[f64]) -> BeamDeformation {
    let (w, u, _) = coordinates(p, xa, xb);
    BeamDeformation {
        axial_strain: u[0] / p.length,
        chord_rotation: w[1].atan2(w[0]),
        rotation: u[2],
    }
}

/// Adds the generalized forces of the beam to `qa` and `qb` (3 each: fx,
/// fy, moment about the CoM).
#[inline]
pub fn beam<D: Scalar>(
    p: &BeamParams,
    xa: &[D],
    va: &[D],
    xb: &[D],
    vb: &[D],
    qa: &mut [D],
    qb: &mut [D],
) {
    let (w, u, beta) = coordinates(p, xa, xb);
    let len = u[0] + c::<D>(p.length);
    let axial_defined = len.re() >= MIN_LENGTH;
    // ẇ = Bᵀ (Ṗ_b − Ṗ_a) − θ̇_a Ω w, Ω the 90° rotation
    let rel = rotate_back(
        beta,
        sub(point_velocity(xb, vb, p.sb), point_velocity(xa, va, p.sa)),
    );
    let wd = [rel[0] + va[2] * w[1], rel[1] - va[2] * w[0]];
    let phid = vb[2] - va[2];
    let kb = p.bending;
    // f = K (u + d u̇) in the beam frame
    let (ey, py) = (u[1] + wd[1] * p.damping, u[2] + phid * p.damping);
    let fy = ey * kb[0][0] + py * kb[0][1];
    let m = ey * kb[1][0] + py * kb[1][1];
    // g = (∂u/∂w)ᵀ f: the axial load along e = w/|w|, the transverse one along y
    let mut g = [c::<D>(0.0), fy];
    if axial_defined {
        let e = [w[0] / len, w[1] / len];
        let uxd = e[0] * wd[0] + e[1] * wd[1];
        let n = (u[0] + uxd * p.axial_damping) * p.axial;
        g[0] += n * e[0];
        g[1] += n * e[1];
    }
    // global F = B g; Q = −(∂u/∂q)ᵀ f
    let f = crate::kinematics::rotate_d(beta, g);
    let arm_a = rotate(xa[2], p.sa);
    let arm_b = rotate(xb[2], p.sb);
    qb[0] -= f[0];
    qb[1] -= f[1];
    qb[2] -= cross(arm_b, f) + m;
    qa[0] += f[0];
    qa[1] += f[1];
    qa[2] += cross(arm_a, f) + m - (w[1] * g[0] - w[0] * g[1]);
}

/// Potential energy ½ uᵀ K u.
pub fn beam_potential(p: &BeamParams, xa: &[f64], xb: &[f64]) -> f64 {
    let (_, u, _) = coordinates(p, xa, xb);
    let k = p.stiffness();
    let mut v = 0.0;
    for i in 0..3 {
        for j in 0..3 {
            v += 0.5 * u[i] * k[i][j] * u[j];
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_dual::DualSVec64;

    fn params(d: f64) -> BeamParams {
        // a slender steel beam, 0.5 m, axis turned 0.3 rad in body a
        BeamParams::new(
            [0.1, -0.05],
            [-0.2, 0.02],
            0.3,
            0.1,
            2.1e11,
            1e-4,
            1e-9,
            0.5,
            d,
        )
    }

    /// Poses near the unstressed configuration of `params`: body b's
    /// node at L along the axis, rotated by φ0, plus a deflection.
    fn poses(p: &BeamParams, dx: [f64; 3]) -> ([f64; 3], [f64; 3]) {
        let xa = [0.3, -0.2, 0.4];
        let beta = xa[2] + p.axis_angle;
        let pa = point(&xa, p.sa);
        let tip = [pa[0] + p.length * beta.cos(), pa[1] + p.length * beta.sin()];
        let tb = xa[2] + p.zero_angle;
        let arm = rotate(tb, p.sb);
        (
            [xa[0], xa[1], xa[2]],
            [tip[0] - arm[0] + dx[0], tip[1] - arm[1] + dx[1], tb + dx[2]],
        )
    }

    fn eval(p: &BeamParams, x: &[f64; 6], v: &[f64; 6]) -> [f64; 6] {
        let mut q = [0.0; 6];
        let (qa, qb) = q.split_at_mut(3);
        beam(p, &x[0..3], &v[0..3], &x[3..6], &v[3..6], qa, qb);
        q
    }

    #[test]
    fn unstressed_configuration_has_no_loads_and_deflection_gives_them() {
        let p = params(1e-3);
        let (xa, xb) = poses(&p, [0.0; 3]);
        let x = [xa[0], xa[1], xa[2], xb[0], xb[1], xb[2]];
        let u = beam_coordinates(&p, &xa, &xb);
        assert!(u.iter().all(|u| u.abs() < 1e-12), "{u:?}");
        assert!(eval(&p, &x, &[0.0; 6]).iter().all(|q| q.abs() < 1e-3));
        let (xa, xb) = poses(&p, [1e-4, 2e-4, 1e-3]);
        let x = [xa[0], xa[1], xa[2], xb[0], xb[1], xb[2]];
        assert!(eval(&p, &x, &[0.0; 6]).iter().any(|q| q.abs() > 1.0));
    }

    /// Small deflections give the planar Euler–Bernoulli element matrix
    /// (Przemieniecki 1968, sec. 5.2) with node 1 clamped: on node 2
    /// −(12EI/L³ v − 6EI/L² θ, −6EI/L² v + 4EI/L θ), on node 1 the
    /// couples 6EI/L² v and −2EI/L θ, and −EA/L u axially.
    #[test]
    fn small_deflections_give_the_element_stiffness_matrix() {
        let (e, a, i, l) = (2.0e11, 1e-3, 1e-8, 0.5);
        let p = BeamParams::new([0.0; 2], [0.0; 2], 0.0, 0.0, e, a, i, l, 0.0);
        let ei = e * i;
        let check = |xb: [f64; 3], expect: [f64; 6]| {
            let x = [0.0, 0.0, 0.0, xb[0], xb[1], xb[2]];
            let q = eval(&p, &x, &[0.0; 6]);
            for k in 0..6 {
                let scale = expect.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                assert!(
                    (q[k] - expect[k]).abs() <= 1e-5 * scale,
                    "{xb:?}: Q[{k}] = {} vs {}",
                    q[k],
                    expect[k]
                );
            }
        };
        // small enough that the chord's v²/(2L) is below rounding
        let (v, th, u) = (1e-9, 1e-9, 1e-9);
        let (f, m) = (12.0 * ei / l.powi(3) * v, -6.0 * ei / (l * l) * v);
        check([l, v, 0.0], [0.0, f, 6.0 * ei / (l * l) * v, 0.0, -f, -m]);
        let (f, m) = (-6.0 * ei / (l * l) * th, 4.0 * ei / l * th);
        check([l, 0.0, th], [0.0, f, -2.0 * ei / l * th, 0.0, -f, -m]);
        let n = e * a / l * u;
        check([l + u, 0.0, 0.0], [n, 0.0, 0.0, -n, 0.0, 0.0]);
    }

    #[test]
    fn stiffness_is_symmetric_and_positive_definite() {
        let k = params(0.0).stiffness();
        for i in 0..3 {
            for j in 0..3 {
                assert_eq!(k[i][j], k[j][i]);
            }
        }
        // leading minors of K
        assert!(k[0][0] > 0.0 && k[1][1] > 0.0);
        assert!(k[1][1] * k[2][2] - k[1][2] * k[2][1] > 0.0);
    }

    #[test]
    fn tangent_stiffness_at_rest_is_symmetric() {
        // the Hessian of V at the unstressed configuration, in the six
        // local coordinates, is −∂Q/∂x: symmetric (conservative) and
        // singular in the three rigid motions
        let p = params(0.0);
        let (xa, xb) = poses(&p, [0.0; 3]);
        let x0 = [xa[0], xa[1], xa[2], xb[0], xb[1], xb[2]];
        let x: [DualSVec64<6>; 6] =
            std::array::from_fn(|k| DualSVec64::from_re(x0[k]).derivative(k));
        let v = [DualSVec64::<6>::from_re(0.0); 6];
        let mut q = [DualSVec64::<6>::from_re(0.0); 6];
        let (qa, qb) = q.split_at_mut(3);
        beam(&p, &x[0..3], &v[0..3], &x[3..6], &v[3..6], qa, qb);
        let jac: Vec<[f64; 6]> = q
            .iter()
            .map(|qi| {
                let g = qi.eps.0.as_ref().expect("derivatives");
                std::array::from_fn(|k| g[k])
            })
            .collect();
        let scale = p.axial;
        for i in 0..6 {
            for j in 0..6 {
                assert!(
                    (jac[i][j] - jac[j][i]).abs() <= 1e-9 * scale,
                    "K[{i}][{j}] = {} vs {}",
                    jac[i][j],
                    jac[j][i]
                );
            }
            // a rigid translation in x and y exerts nothing
            assert!((jac[i][0] + jac[i][3]).abs() <= 1e-9 * scale);
            assert!((jac[i][1] + jac[i][4]).abs() <= 1e-9 * scale);
        }
    }

    #[test]
    fn dual_jacobian_matches_finite_differences() {
        let p = params(2e-3);
        let (xa, xb) = poses(&p, [3e-4, -2e-3, 0.02]);
        let x0 = [xa[0], xa[1], xa[2], xb[0], xb[1], xb[2]];
        let v0 = [0.3, -0.2, 1.1, -0.4, 0.7, -0.9];
        let x: [DualSVec64<12>; 6] =
            std::array::from_fn(|k| DualSVec64::from_re(x0[k]).derivative(k));
        let v: [DualSVec64<12>; 6] =
            std::array::from_fn(|k| DualSVec64::from_re(v0[k]).derivative(6 + k));
        let mut q = [DualSVec64::<12>::from_re(0.0); 6];
        let (qa, qb) = q.split_at_mut(3);
        beam(&p, &x[0..3], &v[0..3], &x[3..6], &v[3..6], qa, qb);
        let q0 = eval(&p, &x0, &v0);
        for k in 0..12 {
            let h = 1e-7;
            let (mut xp, mut xm, mut vp, mut vm) = (x0, x0, v0, v0);
            if k < 6 {
                xp[k] += h;
                xm[k] -= h;
            } else {
                vp[k - 6] += h;
                vm[k - 6] -= h;
            }
            let (fp, fm) = (eval(&p, &xp, &vp), eval(&p, &xm, &vm));
            for i in 0..6 {
                assert_eq!(q[i].re, q0[i]);
                let fd = (fp[i] - fm[i]) / (2.0 * h);
                let exact = q[i].eps.0.as_ref().expect("derivatives")[k];
                assert!(
                    (fd - exact).abs() <= 1e-5 * (1.0 + exact.abs()) + 1e-6 * p.axial * 1e-3,
                    "dQ{i}/dy{k}: fd {fd} vs dual {exact}"
                );
            }
        }
    }

    #[test]
    fn forces_are_minus_the_gradient_of_the_potential() {
        let p = params(0.0);
        let (xa, xb) = poses(&p, [2e-4, 1e-3, -0.03]);
        let x0 = [xa[0], xa[1], xa[2], xb[0], xb[1], xb[2]];
        let q = eval(&p, &x0, &[0.0; 6]);
        for k in 0..6 {
            let h = 1e-7;
            let (mut xp, mut xm) = (x0, x0);
            xp[k] += h;
            xm[k] -= h;
            let grad = (beam_potential(&p, &xp[0..3], &xp[3..6])
                - beam_potential(&p, &xm[0..3], &xm[3..6]))
                / (2.0 * h);
            assert!(
                (q[k] + grad).abs() <= 1e-5 * (1.0 + q[k].abs()),
                "Q{k} = {} vs −dV = {}",
                q[k],
                -grad
            );
        }
    }

    #[test]
    fn damping_dissipates_and_rigid_motion_is_not_damped() {
        let p = params(1e-3);
        let (xa, xb) = poses(&p, [1e-4, 1e-3, 0.01]);
        let x = [xa[0], xa[1], xa[2], xb[0], xb[1], xb[2]];
        let p0 = BeamParams {
            damping: 0.0,
            axial_damping: 0.0,
            ..p
        };
        let v = [0.1, -0.3, 0.5, 0.2, 0.4, -0.7];
        let (qd, q0) = (eval(&p, &x, &v), eval(&p0, &x, &v));
        let power: f64 = (0..6).map(|k| (qd[k] - q0[k]) * v[k]).sum();
        assert!(power < 0.0, "damper power {power}");
        // a rigid rotation ω about P_a with the matching translation
        let (xa, xb) = poses(&p, [0.0; 3]);
        let x = [xa[0], xa[1], xa[2], xb[0], xb[1], xb[2]];
        let w = 2.0;
        let v = [-w * xa[1], w * xa[0], w, -w * xb[1], w * xb[0], w];
        assert!(eval(&p, &x, &v)
            .iter()
            .all(|q| q.abs() < 1e-6 * p.axial * 1e-6));
    }

    #[test]
    fn axial_damping_value_damps_the_axial_load_alone() {
        // node 2 at rest in the unstressed pose, body b translating with
        // speed s along the axis, then across it: the axial damping force
        // is d_a EA/L s, the transverse one d 12EI/L³ s whatever d_a is
        let (d, da, s) = (1e-3, 4e-4, 0.7);
        let p = params(d);
        let pa = p.with_axial_damping(da);
        assert_eq!((pa.damping, pa.axial_damping), (d, da));
        let (xa, xb) = poses(&p, [0.0; 3]);
        let x = [xa[0], xa[1], xa[2], xb[0], xb[1], xb[2]];
        let beta = xa[2] + p.axis_angle;
        let (e, n) = ([beta.cos(), beta.sin()], [-beta.sin(), beta.cos()]);
        let along = [0.0, 0.0, 0.0, s * e[0], s * e[1], 0.0];
        let across = [0.0, 0.0, 0.0, s * n[0], s * n[1], 0.0];
        let force = |q: [f64; 6], dir: [f64; 2]| q[3] * dir[0] + q[4] * dir[1];
        let axial = force(eval(&pa, &x, &along), e);
        assert!(
            (axial + da * p.axial * s).abs() < 1e-9 * da * p.axial * s,
            "axial damping force {axial} vs −d_a EA/L s = {}",
            -da * p.axial * s
        );
        let (t_a, t_d) = (
            force(eval(&pa, &x, &across), n),
            force(eval(&p, &x, &across), n),
        );
        let expected = -d * p.bending[0][0] * s;
        assert!(
            (t_a - expected).abs() < 1e-9 * expected.abs() && t_a == t_d,
            "transverse damping force {t_a} (d_a = d: {t_d}) vs −d 12EI/L³ s = {expected}"
        );
    }
}
