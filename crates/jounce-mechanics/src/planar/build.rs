//! Building a [`PlanarSystem`] from a validated model: each body, joint,
//! driver and force element checked and turned into its runtime element,
//! errors naming the element.
//!
//! Owns: the translation model → elements. Must not: evaluate dynamics.

use jounce_model::{
    Attachment, BodyRef, Driver, DriverKind, Force, ForceFrame, ForceKind, Friction, Joint,
    JointKind, Model, TimeFunction,
};

use super::{beam_params, body_index, column, finite_point, nonnegative, unit_axis, PlanarSystem};
use crate::constraints::{ConstraintElement, ConstraintKind};
use crate::contact::ContactParams;
use crate::error::MechanicsError;
use crate::forces::{ForceElement, ForceElementKind};
use crate::friction::{FrictionElement, FrictionSite};
use crate::rigid::relative_pose;
use crate::rotational_spring::RotationalSpringParams;
use crate::sparse::SparseMatrix;
use crate::spring_damper::SpringDamperParams;

/// What the element builders share: the model, its number of moving bodies
/// and their initial poses and velocities.
struct Builder<'m> {
    model: &'m Model,
    nb: usize,
    q0: Vec<f64>,
    v0: Vec<f64>,
}

impl<'m> Builder<'m> {
    /// The bodies checked (mass > 0, inertia ≥ 0, finite pose and velocity)
    /// and their initial state.
    fn new(model: &'m Model) -> Result<Builder<'m>, MechanicsError> {
        let nb = model.bodies.len();
        if nb == 0 {
            return Err(MechanicsError::NoBodies);
        }
        let mut q0 = Vec::with_capacity(3 * nb);
        let mut v0 = Vec::with_capacity(3 * nb);
        for b in &model.bodies {
            let bad = |problem: String| MechanicsError::InvalidBody {
                body: b.name.clone(),
                problem,
            };
            if !(b.mass.is_finite() && b.mass > 0.0) {
                return Err(bad(format!("mass must be finite and > 0, got {}", b.mass)));
            }
            if !(b.inertia.is_finite() && b.inertia >= 0.0) {
                return Err(bad(format!(
                    "inertia must be finite and ≥ 0, got {}",
                    b.inertia
                )));
            }
            let pose = [b.position[0], b.position[1], b.angle];
            let vel = [b.velocity[0], b.velocity[1], b.angular_velocity];
            if !pose.iter().chain(vel.iter()).all(|x| x.is_finite()) {
                return Err(bad("initial pose or velocity is not finite".into()));
            }
            q0.extend_from_slice(&pose);
            v0.extend_from_slice(&vel);
        }
        Ok(Builder { model, nb, q0, v0 })
    }

    /// Initial pose (x, y, θ) of body `b` (ground: zero).
    fn pose0(&self, b: Option<usize>) -> [f64; 3] {
        b.map_or([0.0; 3], |i| {
            [self.q0[3 * i], self.q0[3 * i + 1], self.q0[3 * i + 2]]
        })
    }

    /// `body 'name'` or `ground`, for messages.
    fn body_name(&self, b: Option<usize>) -> String {
        b.map_or("ground".to_string(), |i| {
            format!("body '{}'", self.model.bodies[i].name)
        })
    }

    /// An element must connect two different bodies.
    fn distinct(
        &self,
        a: Option<usize>,
        b: Option<usize>,
        element: &str,
    ) -> Result<(), MechanicsError> {
        if a == b {
            Err(MechanicsError::SelfConnection {
                element: element.to_string(),
                what: self.body_name(a),
            })
        } else {
            Ok(())
        }
    }

    /// The body index and finite point of an attachment.
    fn attach(
        &self,
        at: &Attachment,
        element: &str,
    ) -> Result<(Option<usize>, [f64; 2]), MechanicsError> {
        Ok((
            body_index(at.body, self.nb, element)?,
            finite_point(at.point, element)?,
        ))
    }

    /// Joint `j` as a constraint element starting at row `row`, with the
    /// friction element of a translational joint with friction.
    fn joint(
        &self,
        j: &Joint,
        row: usize,
    ) -> Result<(ConstraintElement, Option<FrictionElement>), MechanicsError> {
        let label = format!("joint '{}'", j.name);
        let (kind, bodies) = match &j.kind {
            JointKind::Revolute { a, b } => {
                let ((ba, sa), (bb, sb)) = (self.attach(a, &label)?, self.attach(b, &label)?);
                self.distinct(ba, bb, &label)?;
                (ConstraintKind::Revolute { sa, sb }, [ba, bb])
            }
            JointKind::Translational { a, b, axis } => {
                let ((ba, sa), (bb, sb)) = (self.attach(a, &label)?, self.attach(b, &label)?);
                self.distinct(ba, bb, &label)?;
                let axis = unit_axis(*axis, &label)?;
                let dtheta0 = self.pose0(bb)[2] - self.pose0(ba)[2];
                (
                    ConstraintKind::Translational {
                        sa,
                        sb,
                        axis,
                        dtheta0,
                    },
                    [ba, bb],
                )
            }
            JointKind::Rigid { body_a, body_b } => {
                let ba = body_index(*body_a, self.nb, &label)?;
                let bb = body_index(*body_b, self.nb, &label)?;
                self.distinct(ba, bb, &label)?;
                (
                    ConstraintKind::Rigid {
                        rel0: relative_pose(self.pose0(ba), self.pose0(bb)),
                    },
                    [ba, bb],
                )
            }
            JointKind::Distance { a, b, length } => {
                let ((ba, sa), (bb, sb)) = (self.attach(a, &label)?, self.attach(b, &label)?);
                self.distinct(ba, bb, &label)?;
                if !(length.is_finite() && *length > 0.0) {
                    return Err(MechanicsError::InvalidParameter {
                        element: label,
                        problem: format!("length must be finite and > 0, got {length}"),
                    });
                }
                (
                    ConstraintKind::Distance {
                        sa,
                        sb,
                        length: *length,
                    },
                    [ba, bb],
                )
            }
        };
        let friction = match (j.friction, &kind) {
            (Some(friction), ConstraintKind::Translational { sa, sb, axis, .. }) => {
                Some(FrictionElement {
                    name: j.name.clone(),
                    bodies,
                    site: FrictionSite::Joint {
                        sa: *sa,
                        sb: *sb,
                        axis: *axis,
                        normal_row: row,
                    },
                    friction,
                })
            }
            _ => None,
        };
        Ok((
            ConstraintElement {
                label,
                kind,
                bodies,
                row,
            },
            friction,
        ))
    }

    /// Driver `d` as a constraint element starting at row `row`, on the
    /// joints in `constraints`.
    fn driver(
        &self,
        d: &Driver,
        constraints: &[ConstraintElement],
        row: usize,
    ) -> Result<ConstraintElement, MechanicsError> {
        let label = format!("driver '{}'", d.name);
        let function = d.function.clone();
        let (kind, bodies) = match &d.kind {
            DriverKind::Joint { joint } => {
                let Some(el) = constraints.get(*joint) else {
                    return Err(MechanicsError::JointIndex {
                        element: label,
                        index: *joint,
                        count: self.model.joints.len(),
                    });
                };
                match &el.kind {
                    ConstraintKind::Revolute { .. } => {
                        (ConstraintKind::RevoluteDriver { function }, el.bodies)
                    }
                    ConstraintKind::Translational { sa, sb, axis, .. } => (
                        ConstraintKind::TranslationalDriver {
                            sa: *sa,
                            sb: *sb,
                            axis: *axis,
                            function,
                        },
                        el.bodies,
                    ),
                    other => {
                        return Err(MechanicsError::WrongJointKind {
                            element: label,
                            joint: self.model.joints[*joint].name.clone(),
                            kind: if matches!(other, ConstraintKind::Rigid { .. }) {
                                "rigid"
                            } else {
                                "distance"
                            },
                            expected: "only revolute and translational joints can be driven",
                        })
                    }
                }
            }
            DriverKind::Distance { a, b } => {
                let ((ba, sa), (bb, sb)) = (self.attach(a, &label)?, self.attach(b, &label)?);
                self.distinct(ba, bb, &label)?;
                (
                    ConstraintKind::DistanceDriver { sa, sb, function },
                    [ba, bb],
                )
            }
        };
        Ok(ConstraintElement {
            label,
            kind,
            bodies,
            row,
        })
    }

    /// Force element `f` (rotational springs on the joints in
    /// `constraints`), with the friction element of a contact with
    /// stick–slip friction.
    fn force(
        &self,
        f: &Force,
        constraints: &[ConstraintElement],
    ) -> Result<(ForceElement, Option<FrictionElement>), MechanicsError> {
        let mut contact_friction = None;
        let label = format!("force '{}'", f.name);
        let el = match &f.kind {
            ForceKind::PointForce { at, fx, fy, frame } => {
                self.point_force(at, fx, fy, *frame, &label)?
            }
            ForceKind::Torque { body, torque } => {
                let b = body_index(BodyRef::Body(*body), self.nb, &label)?;
                ForceElement {
                    kind: ForceElementKind::Torque {
                        torque: torque.clone(),
                    },
                    bodies: [b, None],
                }
            }
            ForceKind::SpringDamper {
                a,
                b,
                stiffness,
                damping,
                free_length,
                actuator,
                one_sided,
            } => {
                let ((ba, sa), (bb, sb)) = self.ends(a, b, &label)?;
                let params = SpringDamperParams {
                    sa,
                    sb,
                    stiffness: nonnegative(*stiffness, "stiffness", &label)?,
                    damping: nonnegative(*damping, "damping", &label)?,
                    free_length: nonnegative(*free_length, "free length", &label)?,
                    one_sided: *one_sided,
                };
                ForceElement {
                    kind: ForceElementKind::SpringDamper {
                        params,
                        actuator: actuator.clone(),
                    },
                    bodies: [ba, bb],
                }
            }
            ForceKind::RotationalSpring {
                joint,
                stiffness,
                damping,
                zero_angle,
                actuator,
                one_sided,
            } => {
                let el = self.sprung_joint(*joint, constraints, &label)?;
                if !zero_angle.is_finite() {
                    return Err(MechanicsError::InvalidParameter {
                        element: label,
                        problem: format!("zero angle must be finite, got {zero_angle}"),
                    });
                }
                let params = RotationalSpringParams {
                    stiffness: nonnegative(*stiffness, "stiffness", &label)?,
                    damping: nonnegative(*damping, "damping", &label)?,
                    zero_angle: *zero_angle,
                    one_sided: *one_sided,
                };
                ForceElement {
                    kind: ForceElementKind::RotationalSpring {
                        params,
                        actuator: actuator.clone(),
                    },
                    bodies: el.bodies,
                }
            }
            ForceKind::Beam(beam) => {
                let ((ba, sa), (bb, sb)) = self.ends(&beam.a, &beam.b, &label)?;
                let params = beam_params(beam, ba, sa, bb, sb, &|b| self.pose0(b), &label)?;
                ForceElement {
                    kind: ForceElementKind::Beam { params },
                    bodies: [ba, bb],
                }
            }
            ForceKind::Contact {
                a,
                b,
                geometry,
                law,
                stiffness,
                damping,
                friction,
            } => {
                let ((ba, sa), (bb, sb)) = self.ends(a, b, &label)?;
                let params = ContactParams {
                    sa,
                    sb,
                    geometry: *geometry,
                    law: *law,
                    stiffness: nonnegative(*stiffness, "stiffness", &label)?,
                    damping: nonnegative(*damping, "damping", &label)?,
                    friction: *friction,
                };
                contact_friction = stick_slip_friction(&f.name, [ba, bb], params, *friction);
                ForceElement {
                    kind: ForceElementKind::Contact { params },
                    bodies: [ba, bb],
                }
            }
        };
        Ok((el, contact_friction))
    }

    /// A force (fx, fy) applied at a point of a moving body, in `frame`
    /// (applied to ground it would have no effect: refused).
    fn point_force(
        &self,
        at: &Attachment,
        fx: &TimeFunction,
        fy: &TimeFunction,
        frame: ForceFrame,
        label: &str,
    ) -> Result<ForceElement, MechanicsError> {
        let (b, s) = self.attach(at, label)?;
        if b.is_none() {
            return Err(MechanicsError::InvalidParameter {
                element: label.to_string(),
                problem: "applied to ground, where it has no effect".into(),
            });
        }
        Ok(ForceElement {
            kind: ForceElementKind::PointForce {
                s,
                fx: fx.clone(),
                fy: fy.clone(),
                frame,
            },
            bodies: [b, None],
        })
    }

    /// The two ends of a two-point element (spring-damper, beam, contact):
    /// body and local point of each, on different bodies.
    fn ends(&self, a: &Attachment, b: &Attachment, label: &str) -> Result<Ends, MechanicsError> {
        let ((ba, sa), (bb, sb)) = (self.attach(a, label)?, self.attach(b, label)?);
        self.distinct(ba, bb, label)?;
        Ok(((ba, sa), (bb, sb)))
    }

    /// The joint a rotational spring acts on: joint `joint` of the model,
    /// which must be revolute.
    fn sprung_joint<'c>(
        &self,
        joint: usize,
        constraints: &'c [ConstraintElement],
        label: &str,
    ) -> Result<&'c ConstraintElement, MechanicsError> {
        let Some(el) = constraints
            .get(joint)
            .filter(|_| joint < self.model.joints.len())
        else {
            return Err(MechanicsError::JointIndex {
                element: label.to_string(),
                index: joint,
                count: self.model.joints.len(),
            });
        };
        if !matches!(el.kind, ConstraintKind::Revolute { .. }) {
            return Err(MechanicsError::WrongJointKind {
                element: label.to_string(),
                joint: self.model.joints[joint].name.clone(),
                kind: match el.kind {
                    ConstraintKind::Translational { .. } => "translational",
                    ConstraintKind::Rigid { .. } => "rigid",
                    _ => "distance",
                },
                expected: "a rotational spring needs a revolute joint",
            });
        }
        Ok(el)
    }
}

/// Body and local point of each end of a two-point element.
type Ends = ((Option<usize>, [f64; 2]), (Option<usize>, [f64; 2]));

/// The friction element of a contact with stick–slip friction (a friction
/// law without regularisation), named after the force `name`; none for a
/// frictionless or regularised contact, whose friction is a force.
fn stick_slip_friction(
    name: &str,
    bodies: [Option<usize>; 2],
    params: ContactParams,
    friction: Option<Friction>,
) -> Option<FrictionElement> {
    friction
        .filter(|fr| fr.regularisation().is_none())
        .map(|fr| FrictionElement {
            name: name.to_string(),
            bodies,
            site: FrictionSite::Contact(params),
            friction: fr,
        })
}

/// The Φ_q pattern of the constraint elements (m = `rows`, n = 3 `nb`),
/// the slot of every element entry in it, and its number of entries.
fn jacobian_layout(
    constraints: &[ConstraintElement],
    rows: usize,
    nb: usize,
) -> (Vec<(usize, usize)>, Vec<[[usize; 6]; 3]>, usize) {
    // Φ_q pattern and the slot of every element entry in it
    let mut jac_pattern = Vec::new();
    for el in constraints {
        for r in 0..el.rows() {
            for k in 0..6 {
                if let Some(col) = column(el.bodies, k) {
                    jac_pattern.push((el.row + r, col));
                }
            }
        }
    }
    let probe = SparseMatrix::from_pattern(rows, 3 * nb, &jac_pattern);
    let jac_slots: Vec<[[usize; 6]; 3]> = constraints
        .iter()
        .map(|el| {
            let mut s = [[usize::MAX; 6]; 3];
            for (r, sr) in s.iter_mut().enumerate().take(el.rows()) {
                for (k, slot) in sr.iter_mut().enumerate() {
                    if let Some(col) = column(el.bodies, k) {
                        *slot = probe.index_of(el.row + r, col).expect("in the pattern");
                    }
                }
            }
            s
        })
        .collect();

    (jac_pattern, jac_slots, probe.nnz())
}

impl PlanarSystem {
    /// Builds the runtime system from a validated model.
    ///
    /// Joints become constraint rows in model order, then drivers. The
    /// locked relative angle of translational joints and the locked
    /// relative pose of rigid joints are taken from the model's initial
    /// poses.
    ///
    /// # Errors
    /// [`MechanicsError`] naming the element when a body or joint index is
    /// out of range, a driver or rotational spring refers to a joint of the
    /// wrong kind, an element connects a body to itself, or a parameter
    /// (mass, inertia, axis, stiffness, …) is invalid;
    /// [`MechanicsError::NoBodies`] for a model without bodies.
    pub fn from_model(model: &Model) -> Result<PlanarSystem, MechanicsError> {
        if model.spatial.is_some() {
            return Err(MechanicsError::InvalidParameter {
                element: "[model] space".into(),
                problem: "the model is spatial; build a SpatialSystem from it, not a planar one"
                    .into(),
            });
        }
        let b = Builder::new(model)?;
        let mut constraints = Vec::new();
        let mut frictions = Vec::new();
        let mut row = 0;
        for j in &model.joints {
            let (el, friction) = b.joint(j, row)?;
            frictions.extend(friction);
            row += el.rows();
            constraints.push(el);
        }
        for d in &model.drivers {
            let el = b.driver(d, &constraints, row)?;
            row += el.rows();
            constraints.push(el);
        }
        let mut row_owner = Vec::with_capacity(row);
        for (e, el) in constraints.iter().enumerate() {
            for r in 0..el.rows() {
                row_owner.push((e, r));
            }
        }
        let mut forces = Vec::new();
        let mut switching = Vec::new();
        let mut one_sided = Vec::new();
        for f in &model.forces {
            let (el, friction) = b.force(f, &constraints)?;
            frictions.extend(friction);
            let switches = match &el.kind {
                ForceElementKind::Contact { .. } => {
                    switching.push((forces.len(), f.name.clone()));
                    false
                }
                ForceElementKind::SpringDamper { params, .. } => params.one_sided.is_some(),
                ForceElementKind::RotationalSpring { params, .. } => params.one_sided.is_some(),
                _ => false,
            };
            if switches {
                one_sided.push((forces.len(), f.name.clone()));
            }
            forces.push(el);
        }
        // one list: the contacts, then the one-sided springs
        switching.extend(one_sided);
        if !model.gravity.iter().all(|g| g.is_finite()) {
            return Err(MechanicsError::InvalidParameter {
                element: "gravity".into(),
                problem: format!("{:?} is not finite", model.gravity),
            });
        }
        let (jac_pattern, jac_slots, jac_nnz) = jacobian_layout(&constraints, row, b.nb);
        let has_revolute = constraints
            .iter()
            .any(|el| matches!(el.kind, ConstraintKind::Revolute { .. }));
        Ok(PlanarSystem {
            has_revolute,
            jac_pattern,
            jac_slots,
            jac_nnz,
            body_names: model.bodies.iter().map(|b| b.name.clone()).collect(),
            mass: model.bodies.iter().map(|b| b.mass).collect(),
            inertia: model.bodies.iter().map(|b| b.inertia).collect(),
            gravity: model.gravity,
            q0: b.q0,
            v0: b.v0,
            constraints,
            row_owner,
            forces,
            switching,
            frictions,
        })
    }
}
