//! Constraint elements (joints and drivers) of a planar system and their
//! evaluation, written once for any scalar (see [`crate::kinematics`]).
//!
//! Each element couples at most two bodies; its local coordinates are
//! x = (x_a, y_a, θ_a, x_b, y_b, θ_b), ground entries held at zero. The
//! driver value f(t) is passed as a scalar so that the caller decides what
//! derivatives of time it carries.

use jounce_model::TimeFunction;

use crate::distance::distance;
use crate::driver::{distance_driver, revolute_driver, translational_driver};
use crate::kinematics::Scalar;
use crate::revolute::revolute;
use crate::rigid::rigid;
use crate::translational::translational;

/// Kind and constant geometry of a constraint element.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ConstraintKind {
    /// Revolute joint, points `sa`, `sb`.
    Revolute { sa: [f64; 2], sb: [f64; 2] },
    /// Translational joint with unit axis in a's frame and locked relative angle.
    Translational {
        sa: [f64; 2],
        sb: [f64; 2],
        axis: [f64; 2],
        dtheta0: f64,
    },
    /// Weld with locked relative pose.
    Rigid { rel0: [f64; 3] },
    /// Distance joint.
    Distance {
        sa: [f64; 2],
        sb: [f64; 2],
        length: f64,
    },
    /// Driver of a revolute joint's relative angle.
    RevoluteDriver { function: TimeFunction },
    /// Driver of a translational joint's slide coordinate.
    TranslationalDriver {
        sa: [f64; 2],
        sb: [f64; 2],
        axis: [f64; 2],
        function: TimeFunction,
    },
    /// Driver of the distance between two points.
    DistanceDriver {
        sa: [f64; 2],
        sb: [f64; 2],
        function: TimeFunction,
    },
}

/// A constraint element placed in the global constraint vector.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ConstraintElement {
    /// `joint 'name'` or `driver 'name'`.
    pub label: String,
    /// Kind and geometry.
    pub kind: ConstraintKind,
    /// Bodies a and b (None = ground).
    pub bodies: [Option<usize>; 2],
    /// First row in Φ.
    pub row: usize,
}

impl ConstraintElement {
    /// Number of equations.
    pub fn rows(&self) -> usize {
        match self.kind {
            ConstraintKind::Revolute { .. } | ConstraintKind::Translational { .. } => 2,
            ConstraintKind::Rigid { .. } => 3,
            _ => 1,
        }
    }

    /// Name of equation `r` of this element, e.g. `joint 'pin' (x)`.
    pub fn row_label(&self, r: usize) -> String {
        let suffix = match (&self.kind, r) {
            (ConstraintKind::Revolute { .. }, 0) | (ConstraintKind::Rigid { .. }, 0) => " (x)",
            (ConstraintKind::Revolute { .. }, _) | (ConstraintKind::Rigid { .. }, 1) => " (y)",
            (ConstraintKind::Rigid { .. }, _) => " (theta)",
            (ConstraintKind::Translational { .. }, 0) => " (normal)",
            (ConstraintKind::Translational { .. }, _) => " (angle)",
            (ConstraintKind::Distance { .. }, _) => " (length)",
            _ => "",
        };
        format!("{}{}", self.label, suffix)
    }

    /// Unit of row `r`'s multiplier λ and the load it stands for. The
    /// equations of motion are M q'' + Φ_qᵀ λ = Q, so row r applies the
    /// generalized force −λ_r ∂Φ_r/∂q; for each kind that is (with
    /// P = r + A(θ) s the joint points, d = P_b − P_a):
    pub fn row_meaning(&self, r: usize) -> String {
        let axis = if r == 0 { "x" } else { "y" };
        match &self.kind {
            ConstraintKind::Revolute { .. } => format!(
                "N; global {axis} component of the force the joint applies to body b at its \
                 point = +λ, to body a at its point = −λ (Φ = P_a − P_b)"
            ),
            ConstraintKind::Translational { .. } if r == 0 => "N; force on body b at its \
                 point = −λ n, n the guide's normal A(θ_a)·Ω·axis; +λ n on body a at P_b \
                 (Φ₁ = n·d)"
                .into(),
            ConstraintKind::Translational { .. } => "N·m; torque that locks the relative \
                 rotation: −λ on body b, +λ on body a (Φ₂ = θ_b − θ_a − Δθ₀)"
                .into(),
            ConstraintKind::Rigid { .. } if r < 2 => format!(
                "N; component along body a's {axis} axis of the force on body b = −λ, on body \
                 a = +λ (Φ = A(θ_a)ᵀ (r_b − r_a) − ρ₀)"
            ),
            ConstraintKind::Rigid { .. } => {
                "N·m; torque −λ on body b, +λ on body a (Φ₃ = θ_b − θ_a − Δθ₀)".into()
            }
            ConstraintKind::Distance { .. } => "N/m; force on body b = −2λ d, on body a = \
                 +2λ d (Φ = |d|² − L²): λ > 0 pulls the points together with tension 2λL"
                .into(),
            ConstraintKind::RevoluteDriver { .. } => "N·m; the driver's torque on body b is \
                 −λ, its reaction on body a +λ (Φ = θ_b − θ_a − f(t))"
                .into(),
            ConstraintKind::TranslationalDriver { .. } => "N; the driver's force on body b \
                 along the guide axis u = A(θ_a)·axis is −λ u, on body a +λ u (Φ = d·u − f(t))"
                .into(),
            ConstraintKind::DistanceDriver { .. } => "N; the driver's force on body b is \
                 −λ d/|d|, on body a +λ d/|d| (Φ = |d| − f(t)): λ > 0 pulls the points \
                 together"
                .into(),
        }
    }

    /// The driver's time function, if any.
    pub fn function(&self) -> Option<&TimeFunction> {
        match &self.kind {
            ConstraintKind::RevoluteDriver { function }
            | ConstraintKind::TranslationalDriver { function, .. }
            | ConstraintKind::DistanceDriver { function, .. } => Some(function),
            _ => None,
        }
    }

    /// (f, f', f'') of the driver at `t`, zeros for joints.
    pub fn driver_value(&self, t: f64) -> (f64, f64, f64) {
        self.function().map_or((0.0, 0.0, 0.0), |f| f.eval(t))
    }

    /// Φ of this element (`rows()` entries of `out`) at local coordinates
    /// `x` (len 6) with driver value `f`.
    #[inline]
    pub fn eval<D: Scalar>(&self, x: &[D], f: D, out: &mut [D]) {
        let (xa, xb) = (&x[0..3], &x[3..6]);
        match &self.kind {
            ConstraintKind::Revolute { sa, sb } => revolute(xa, *sa, xb, *sb, out),
            ConstraintKind::Translational {
                sa,
                sb,
                axis,
                dtheta0,
            } => translational(xa, *sa, xb, *sb, *axis, *dtheta0, out),
            ConstraintKind::Rigid { rel0 } => rigid(xa, xb, *rel0, out),
            ConstraintKind::Distance { sa, sb, length } => distance(xa, *sa, xb, *sb, *length, out),
            ConstraintKind::RevoluteDriver { .. } => revolute_driver(xa, xb, f, out),
            ConstraintKind::TranslationalDriver { sa, sb, axis, .. } => {
                translational_driver(xa, *sa, xb, *sb, *axis, f, out)
            }
            ConstraintKind::DistanceDriver { sa, sb, .. } => {
                distance_driver(xa, *sa, xb, *sb, f, out)
            }
        }
    }
}
