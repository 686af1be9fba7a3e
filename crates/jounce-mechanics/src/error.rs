//! Errors of building a runtime system from a model.

use thiserror::Error;

/// Why a model cannot be turned into a runtime system. Each variant names
/// the offending element.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum MechanicsError {
    /// The model has no bodies: no coordinates, nothing to simulate (the
    /// formulations' linear algebra would be of size zero).
    #[error("the model has no bodies: nothing to simulate (add a [[bodies]] entry)")]
    NoBodies,
    /// A body has invalid inertial data or a non-finite initial state.
    #[error("body '{body}': {problem}")]
    InvalidBody {
        /// Body name.
        body: String,
        /// What is wrong.
        problem: String,
    },
    /// An element refers to a body index that does not exist.
    #[error("{element}: body index {index} out of range (model has {count} bodies)")]
    BodyIndex {
        /// Element description, e.g. `joint 'pin'`.
        element: String,
        /// The bad index.
        index: usize,
        /// Number of bodies.
        count: usize,
    },
    /// An element refers to a joint index that does not exist.
    #[error("{element}: joint index {index} out of range (model has {count} joints)")]
    JointIndex {
        /// Element description.
        element: String,
        /// The bad index.
        index: usize,
        /// Number of joints.
        count: usize,
    },
    /// A driver or rotational spring refers to a joint of the wrong kind.
    #[error("{element}: joint '{joint}' is a {kind} joint; {expected}")]
    WrongJointKind {
        /// Element description.
        element: String,
        /// Joint name.
        joint: String,
        /// The joint's kind.
        kind: &'static str,
        /// What would be accepted.
        expected: &'static str,
    },
    /// An element connects a body to itself or ground to ground.
    #[error("{element}: connects {what} to itself")]
    SelfConnection {
        /// Element description.
        element: String,
        /// `ground` or the body name.
        what: String,
    },
    /// A geometric or physical parameter is invalid.
    #[error("{element}: {problem}")]
    InvalidParameter {
        /// Element description.
        element: String,
        /// What is wrong.
        problem: String,
    },
}
