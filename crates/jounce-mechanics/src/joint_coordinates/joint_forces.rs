//! Force elements that act across a tree joint, applied as generalized
//! forces of its coordinate.
//!
//! A rotational spring-damper-actuator between the two bodies of a
//! revolute tree joint k (the node's parent and its child) depends only on
//! their relative angle φ = θ_b − θ_a = ±σ_k q_k, and its couple pair
//! (τ on b, −τ on a) does work only through q_k: its generalized force is
//!
//! ```text
//! Q_k = (∂φ/∂q_k) τ(φ, φ'),   φ = (∂φ/∂q_k) q_k,   φ' = (∂φ/∂q_k) q'_k,   ∂φ/∂q_k = ±σ_k
//! ```
//!
//! (+ when b is the child, − when a is), and zero for every other
//! coordinate (Jᵀ of the couple pair: the joints above k carry both
//! couples, which cancel). This is how relative coordinates write joint
//! springs (jalon-bayo ch. 7, the S1 example: V = k φ²/2 in the joint
//! angle; Featherstone 2008, sec. 7.2, joint force τ_k in u_k = τ_k −
//! S_kᵀ p^A_k). The law τ(φ, φ') is the element's own
//! ([`rotational_spring`]), so actuators and one-sided springs behave as
//! in body coordinates; the recursions skip the body wrenches.

use jounce_model::TimeFunction;

use crate::forces::{ForceElement, ForceElementKind};
use crate::kinematics::Scalar;
use crate::rotational_spring::{rotational_spring, RotationalSpringParams};

use super::tree::{KinematicTree, TreeJointKind};

/// A force element applied to one joint coordinate.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct JointForce {
    /// The spring's parameters.
    pub params: RotationalSpringParams,
    /// The spring's actuator torque τ_act(t).
    pub actuator: Option<TimeFunction>,
    /// The node (= coordinate) it acts on.
    pub node: usize,
    /// ∂φ/∂q of the element's relative angle φ = θ_b − θ_a.
    pub dphi_dq: f64,
}

impl JointForce {
    /// The element as a force on one coordinate, if it is a rotational
    /// spring across a revolute tree joint; `bodies` are its bodies as
    /// nodes (None = ground).
    pub(crate) fn across_tree_joint(
        tree: &KinematicTree,
        element: &ForceElement,
        bodies: [Option<usize>; 2],
    ) -> Option<JointForce> {
        let ForceElementKind::RotationalSpring { params, actuator } = &element.kind else {
            return None;
        };
        let [a, b] = bodies;
        let revolute_below = |child: Option<usize>, parent: Option<usize>| {
            child.filter(|&k| {
                let n = &tree.nodes[k];
                n.kind == TreeJointKind::Revolute && n.parent == parent
            })
        };
        let (node, dphi_dq) = if let Some(k) = revolute_below(b, a) {
            (k, tree.nodes[k].sign)
        } else if let Some(k) = revolute_below(a, b) {
            (k, -tree.nodes[k].sign)
        } else {
            return None;
        };
        Some(JointForce {
            params: *params,
            actuator: actuator.clone(),
            node,
            dphi_dq,
        })
    }

    /// Adds Q_k at time `t` and joint position and rate (q_k, q'_k) to
    /// `out[k]`.
    #[inline]
    pub(crate) fn add_to<D: Scalar>(&self, t: f64, q: D, v: D, out: &mut [D]) {
        let z = D::from(0.0);
        let tau_act = self.actuator.as_ref().map_or(0.0, |f| f.eval(t).0);
        let (mut qa, mut qb) = ([z; 3], [z; 3]);
        rotational_spring(
            &self.params,
            &[z; 3],
            &[z; 3],
            &[z, z, q * self.dphi_dq],
            &[z, z, v * self.dphi_dq],
            tau_act,
            &mut qa,
            &mut qb,
        );
        out[self.node] += qb[2] * self.dphi_dq;
    }
}
