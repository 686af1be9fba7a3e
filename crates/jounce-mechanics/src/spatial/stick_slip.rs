//! Stick–slip Coulomb friction of spatial contacts as friction rows
//! ([`crate::FrictionRows`]): the tangential force is solved for with the
//! accelerations by the formulation, which decides stick and slip.
//!
//! The sliding velocity of a contact is the tangential part of the
//! relative velocity w = Ẋ_b − Ẋ_a of the material points at the contact
//! point X ([`super::contact`]); in 3-D it lies in the tangent plane, so
//! an element has **two rows**, its components along two orthonormal
//! tangent directions
//!
//! ```text
//! t₁ = (c × n)/|c × n|,   t₂ = n × t₁,   v_t,k = t_k · w  (k = 1, 2)
//! ```
//!
//! with n the contact normal and c = A_a c_a a helper direction fixed in
//! body a: for a sphere-plane contact c_a is a unit vector of the plane
//! (⊥ n_a), so |c × n| = 1 and the frame turns with the plane, smooth in
//! q; for a sphere-sphere contact c_a is the body-frame axis least aligned
//! with the normal at the start (|c·n| ≤ 1/√3 there), and the frame is
//! smooth while the normal stays away from c (it degenerates only after
//! the line of centres has turned by more than 54.7° in body a's frame).
//!
//! v_t is linear in v, so its row J_f = ∂v_t/∂v is v_t at unit velocities
//! (each of the 12 velocities of the two bodies), and
//! γ_f = −(∂v_t/∂q) q' is the derivative of v_t along q ⊕ ε v at fixed v
//! (dual numbers, the retraction's derivative being q' = T(q) v). The
//! force F = F₁ t₁ + F₂ t₂ on body b at X then enters the equations of
//! motion as J_fᵀ F (virtual power F · v_t); the normal force F_n is the
//! penalty law's at the state ([`super::contact::contact_state`]).
//!
//! Owns: the tangent frame and the kinematics of sliding of a spatial
//! contact. Must not: decide stick or slip (the formulation does).

use jounce_model::{Friction, FrictionLaw, SpatialContactGeometry};
use num_dual::Dual64;

use super::body::{Pose, NV_BODY};
use super::contact::{contact_frame, contact_state, relative_velocity, SpatialContactParams};
use super::forces::End;
use super::quaternion::{cross, dot, lift, mat_t_vec, mat_vec, scale, Vec3};
use super::system::{pose, pose_at, SpatialSystem};
use crate::capabilities::{FrictionRows, SwitchingFunctions};
use crate::kinematics::Scalar;
use crate::system::{FrictionRow, NormalForce};

/// Rows of a spatial friction element (the tangent plane).
pub const ROWS: usize = 2;

/// A spatial contact with stick–slip friction.
#[derive(Clone, Debug, PartialEq)]
pub struct ContactFriction {
    /// Index of the contact among the system's contacts (its switching
    /// function).
    pub contact: usize,
    /// The helper direction c_a of the tangent frame, body a's frame.
    pub helper: [f64; 3],
    /// Coefficients and law.
    pub friction: Friction,
}

impl ContactFriction {
    /// The element of contact number `contact` with parameters `p`, its
    /// helper direction chosen at the start poses `pa`, `pb`; `None` when
    /// its friction is not the stick–slip law.
    pub fn new(
        contact: usize,
        p: &SpatialContactParams,
        pa: &Pose<f64>,
        pb: &Pose<f64>,
    ) -> Option<Self> {
        let friction = p.friction?;
        if !matches!(friction.law, FrictionLaw::StickSlip { .. }) {
            return None;
        }
        // the normal in body a's frame: the plane's, or the start's
        let n_a = match p.geometry {
            SpatialContactGeometry::SpherePlane { normal, .. } => normal,
            SpatialContactGeometry::SphereSphere { .. } => {
                let (_, n, _) = contact_frame(p, pa, pb);
                mat_t_vec(&pa.a, &n)
            }
        };
        // the axis least aligned with n_a, made normal to it
        let j = (0..3)
            .min_by(|&i, &k| n_a[i].abs().total_cmp(&n_a[k].abs()))
            .unwrap_or(0);
        let mut e = [0.0; 3];
        e[j] = 1.0;
        let h = std::array::from_fn(|i| e[i] - n_a[j] * n_a[i]);
        let len = dot(&h, &h).sqrt();
        Some(Self {
            contact,
            helper: h.map(|x| x / len),
            friction,
        })
    }

    /// Tangent frame (t₁, t₂) at the normal `n` and body a's pose `pa`.
    fn tangents<D: Scalar>(&self, pa: &Pose<D>, n: &Vec3<D>) -> [Vec3<D>; 2] {
        let c = mat_vec(&pa.a, &lift(&self.helper));
        let u = cross(&c, n);
        let t1 = scale(dot(&u, &u).sqrt().recip(), &u);
        let t2 = cross(n, &t1);
        [t1, t2]
    }

    /// The sliding velocity (v_t,1, v_t,2) of the ends `a`, `b` of contact
    /// `p`.
    pub fn sliding_velocity<D: Scalar>(
        &self,
        p: &SpatialContactParams,
        a: &End<'_, D>,
        b: &End<'_, D>,
    ) -> [D; ROWS] {
        let (_, n, at) = contact_frame(p, a.pose, b.pose);
        let w = relative_velocity(a, b, &at);
        let t = self.tangents(a.pose, &n);
        [dot(&t[0], &w), dot(&t[1], &w)]
    }
}

/// The end of body `b` (None: ground) at `pose` with velocities taken
/// from `v` by `lift`.
fn end_of<'a, D: Scalar>(
    pose: &'a Pose<D>,
    b: Option<usize>,
    velocity: impl Fn(usize) -> D,
) -> End<'a, D> {
    End {
        pose,
        velocity: match b {
            Some(b) => std::array::from_fn(|k| velocity(NV_BODY * b + k)),
            None => [D::zero(); NV_BODY],
        },
        point: [0.0; 3],
    }
}

/// Stick–slip friction of the contacts: two rows per contact (see the
/// module documentation), named `contact.t1` and `contact.t2`.
impl FrictionRows for SpatialSystem {
    fn friction_count(&self) -> usize {
        ROWS * self.frictions.len()
    }

    fn friction_element(
        &self,
        _t: f64,
        q: &[f64],
        v: &[f64],
        i: usize,
        jf: &mut [f64],
    ) -> FrictionRow {
        let (el, k) = (&self.frictions[i / ROWS], i % ROWS);
        let Some((p, bodies)) = self.contact(el.contact) else {
            unreachable!("friction elements are built from the contacts")
        };
        let poses = bodies.map(|b| pose_at(q, b));
        let ends = [0, 1].map(|s| end_of(&poses[s], bodies[s], |j| v[j]));
        let vt = el.sliding_velocity(p, &ends[0], &ends[1])[k];
        // J_f: v_t is linear in the velocities
        jf.fill(0.0);
        for side in 0..2 {
            let Some(b) = bodies[side] else {
                continue;
            };
            for j in 0..NV_BODY {
                let col = NV_BODY * b + j;
                let unit = |m: usize| if m == col { 1.0 } else { 0.0 };
                let e = [0, 1].map(|s| end_of(&poses[s], bodies[s], unit));
                jf[col] += el.sliding_velocity(p, &e[0], &e[1])[k];
            }
        }
        // γ_f = −d/dε v_t(q ⊕ ε v, v)
        let zero = [Dual64::from(0.0); NV_BODY];
        let seed = |b: Option<usize>| match b {
            Some(b) => std::array::from_fn(|j| Dual64::new(0.0, v[NV_BODY * b + j])),
            None => zero,
        };
        let dposes = bodies.map(|b| pose(q, b, &seed(b), &zero));
        let dends = [0, 1].map(|s| end_of(&dposes[s], bodies[s], |j| Dual64::from(v[j])));
        let gamma = -el.sliding_velocity(p, &dends[0], &dends[1])[k].eps;
        FrictionRow {
            sliding_velocity: vt,
            gamma,
            normal: NormalForce::Known(contact_state(p, &ends[0], &ends[1]).1),
            friction: el.friction,
        }
    }

    fn friction_name(&self, i: usize) -> String {
        self.frictions.get(i / ROWS).map_or_else(
            || format!("friction {i}"),
            |el| format!("{}.t{}", self.switching_name(el.contact), i % ROWS + 1),
        )
    }

    fn friction_dimension(&self, _i: usize) -> usize {
        ROWS
    }
}
