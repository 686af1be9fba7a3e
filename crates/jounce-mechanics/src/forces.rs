//! Force elements of a planar system and their evaluation, written once
//! for any scalar. Gravity is applied per body in [`crate::planar`]:
//! Q_body = (m gₓ, m gᵧ, 0), V = −m g·r.
//!
//! Local coordinates and velocities of an element are those of its bodies
//! a and b, x = (x_a, y_a, θ_a, x_b, y_b, θ_b), ground entries zero. Time
//! functions are evaluated in f64 (Q is not differentiated in t).

use jounce_model::{ForceFrame, TimeFunction};

use crate::beam::{beam, beam_potential, BeamParams};
use crate::contact::{contact_force, contact_potential, ContactParams};
use crate::kinematics::Scalar;
use crate::point_force::{point_force, torque};
use crate::rotational_spring::{
    rotational_spring, rotational_spring_potential, RotationalSpringParams,
};
use crate::spring_damper::{spring_damper, spring_damper_potential, SpringDamperParams};

/// Kind and parameters of a force element.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ForceElementKind {
    /// Force at point `s` of body a.
    PointForce {
        s: [f64; 2],
        fx: TimeFunction,
        fy: TimeFunction,
        frame: ForceFrame,
    },
    /// Torque on body a.
    Torque { torque: TimeFunction },
    /// Spring-damper-actuator between a and b.
    SpringDamper {
        params: SpringDamperParams,
        actuator: Option<TimeFunction>,
    },
    /// Rotational spring-damper-actuator between a and b.
    RotationalSpring {
        params: RotationalSpringParams,
        actuator: Option<TimeFunction>,
    },
    /// Unilateral contact between a and b (`crate::contact`).
    Contact { params: ContactParams },
    /// Beam from a to b (`crate::beam`).
    Beam { params: BeamParams },
}

/// A force element.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ForceElement {
    /// Kind and parameters.
    pub kind: ForceElementKind,
    /// Bodies a and b (None = ground).
    pub bodies: [Option<usize>; 2],
}

fn value(f: &Option<TimeFunction>, t: f64) -> f64 {
    f.as_ref().map_or(0.0, |f| f.eval(t).0)
}

impl ForceElement {
    /// Adds the element's generalized forces at time `t`, local coordinates
    /// `x` and velocities `v` (len 6 each) to `q` (len 6: body a then b).
    #[inline]
    pub fn eval<D: Scalar>(&self, t: f64, x: &[D], v: &[D], q: &mut [D]) {
        let (qa, qb) = q.split_at_mut(3);
        match &self.kind {
            ForceElementKind::PointForce { s, fx, fy, frame } => {
                point_force(&x[0..3], *s, [fx.eval(t).0, fy.eval(t).0], *frame, qa)
            }
            ForceElementKind::Torque { torque: tau } => torque(tau.eval(t).0, qa),
            ForceElementKind::SpringDamper { params, actuator } => spring_damper(
                params,
                &x[0..3],
                &v[0..3],
                &x[3..6],
                &v[3..6],
                value(actuator, t),
                qa,
                qb,
            ),
            ForceElementKind::RotationalSpring { params, actuator } => rotational_spring(
                params,
                &x[0..3],
                &v[0..3],
                &x[3..6],
                &v[3..6],
                value(actuator, t),
                qa,
                qb,
            ),
            ForceElementKind::Contact { params } => {
                contact_force(params, &x[0..3], &v[0..3], &x[3..6], &v[3..6], qa, qb)
            }
            ForceElementKind::Beam { params } => {
                beam(params, &x[0..3], &v[0..3], &x[3..6], &v[3..6], qa, qb)
            }
        }
    }

    /// Generalized forces Q_a (len 6, body a then b) of the element's
    /// applied part — neither potential nor dissipative — at time `t`,
    /// local coordinates `x` and velocities `v`: all of a point force or
    /// torque, the actuator force of a spring-damper-actuator (its spring
    /// is in the potential energy, its damper only dissipates), nothing for
    /// a passive element. Their work ∫ Q_aᵀ dq with the drivers' bounds
    /// the energy a correct solution can gain.
    pub fn applied_forces(&self, t: f64, x: &[f64], v: &[f64], q: &mut [f64; 6]) {
        *q = [0.0; 6];
        match &self.kind {
            ForceElementKind::PointForce { .. } | ForceElementKind::Torque { .. } => {
                self.eval(t, x, v, q);
            }
            ForceElementKind::SpringDamper { params, actuator } => {
                let Some(f) = actuator else { return };
                let (qa, qb) = q.split_at_mut(3);
                let mut q0 = [0.0; 6];
                let (q0a, q0b) = q0.split_at_mut(3);
                let (xa, xb, va, vb) = (&x[0..3], &x[3..6], &v[0..3], &v[3..6]);
                spring_damper(params, xa, va, xb, vb, f.eval(t).0, qa, qb);
                spring_damper(params, xa, va, xb, vb, 0.0, q0a, q0b);
                for k in 0..6 {
                    q[k] -= q0[k];
                }
            }
            ForceElementKind::RotationalSpring { params, actuator } => {
                let Some(f) = actuator else { return };
                let (qa, qb) = q.split_at_mut(3);
                let mut q0 = [0.0; 6];
                let (q0a, q0b) = q0.split_at_mut(3);
                let (xa, xb, va, vb) = (&x[0..3], &x[3..6], &v[0..3], &v[3..6]);
                rotational_spring(params, xa, va, xb, vb, f.eval(t).0, qa, qb);
                rotational_spring(params, xa, va, xb, vb, 0.0, q0a, q0b);
                for k in 0..6 {
                    q[k] -= q0[k];
                }
            }
            ForceElementKind::Contact { .. } | ForceElementKind::Beam { .. } => {}
        }
    }

    /// Potential energy stored in the element at local coordinates `x`.
    pub fn potential(&self, x: &[f64]) -> f64 {
        match &self.kind {
            ForceElementKind::SpringDamper { params, .. } => {
                spring_damper_potential(params, &x[0..3], &x[3..6])
            }
            ForceElementKind::RotationalSpring { params, .. } => {
                rotational_spring_potential(params, &x[0..3], &x[3..6])
            }
            ForceElementKind::Contact { params } => contact_potential(params, &x[0..3], &x[3..6]),
            ForceElementKind::Beam { params } => beam_potential(params, &x[0..3], &x[3..6]),
            _ => 0.0,
        }
    }

    /// Appends the breakpoints of the element's time functions.
    pub fn breakpoints(&self, out: &mut Vec<f64>) {
        match &self.kind {
            ForceElementKind::PointForce { fx, fy, .. } => {
                fx.breakpoints(out);
                fy.breakpoints(out);
            }
            ForceElementKind::Torque { torque } => torque.breakpoints(out),
            ForceElementKind::SpringDamper { actuator, .. }
            | ForceElementKind::RotationalSpring { actuator, .. } => {
                if let Some(f) = actuator {
                    f.breakpoints(out);
                }
            }
            ForceElementKind::Contact { .. } | ForceElementKind::Beam { .. } => {}
        }
    }
}
