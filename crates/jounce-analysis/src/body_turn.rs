//! The velocity turn of each body across a near-singular passage, for the
//! branch-switch test of [`crate::SingularityMonitor`].
//!
//! A switch need not move the whole system: in a chain of N parallelograms
//! one loop may fold while the others keep turning. If k of the B bodies
//! reverse their velocity, the turn of the whole system in the mass norm is
//! ‖v_out − v_in‖_M ≈ 2 √(k/B) ‖v‖_M, below any fixed fraction of the
//! speed once B is large (one crank of the P-C chain N = 10: 0.44 of the
//! speed; N = 40: 0.22). Measured body by body, the folding crank turns by
//! twice its own speed whatever N is.
//!
//! The bodies are the groups of velocity coordinates whose labels
//! ([`MechanicalSystem::velocity_label`]) share the element name before
//! the last dot (`crank3.x`, `crank3.y`, `crank3.theta`); a coordinate
//! whose label has no dot is a body of its own. Nothing here knows which
//! coordinates a body has.
//!
//! For body b, with ‖·‖_b the mass norm over its coordinates (diag(M) at
//! assembly), the test of a passage from (t_in, v_in) to (t, v) is
//!
//! - turn_b = ‖v − v_in‖_b > [`SWITCH_TURN`] · speed_b and
//! - jump_b > [`SWITCH_JUMP`] · speed_b,
//!
//! where jump_b = Σ_k ‖Δv_k‖_b over the passage's steps k whose rate
//! ‖Δv_k‖_b / h_k exceeds [`SWITCH_ACCELERATION`] a_ref (a_ref the largest
//! rate ‖Δv‖_M / h of the whole system over the regular steps of the run,
//! which bounds every body's rate there), and speed_b = max(‖v_in‖_b,
//! ‖v‖_b, [`BODY_SPEED_FLOOR`] ‖v‖_M / √B): the floor keeps a body nearly
//! at rest from being judged on the noise of its velocity. These are the
//! whole-system criteria of the monitor applied to each body: the body's
//! velocity turned by O(1) of its speed far faster than any force of the
//! run turned the system's velocity elsewhere.

use crate::singular_configuration::{SWITCH_ACCELERATION, SWITCH_JUMP, SWITCH_TURN};
use jounce_mechanics::MechanicalSystem;

/// Speed below which a body is judged against this fraction of the
/// system's speed over √(number of bodies) (module documentation).
pub const BODY_SPEED_FLOOR: f64 = 0.1;

/// A body whose velocity turned like a branch switch across a passage.
#[derive(Clone, Debug, PartialEq)]
pub struct BodyTurn {
    /// The body (the element name of its coordinates' labels).
    pub body: String,
    /// ‖v − v_in‖_b across the passage.
    pub turn: f64,
    /// The speed it is judged against (module documentation).
    pub speed: f64,
    /// The part of the turn made by steps faster than
    /// [`SWITCH_ACCELERATION`] a_ref.
    pub jump: f64,
}

/// The bodies of a system's velocity coordinates and the scratch space
/// to measure their turns without allocating.
#[derive(Clone, Debug)]
pub(crate) struct BodyTurns {
    /// The body of each velocity coordinate.
    body_of: Vec<usize>,
    names: Vec<String>,
    /// Per body: squared norms of v − v_in, v_in, v.
    sq: Vec<[f64; 3]>,
}

/// The element name of a coordinate label ("crank3.theta" → "crank3").
fn element_of(label: &str) -> &str {
    label.rsplit_once('.').map_or(label, |(body, _)| body)
}

impl BodyTurns {
    /// The bodies of the `sys.nv()` velocity coordinates of `sys`.
    pub(crate) fn new(sys: &dyn MechanicalSystem) -> Self {
        let mut names: Vec<String> = Vec::new();
        let mut body_of = Vec::with_capacity(sys.nv());
        for i in 0..sys.nv() {
            let label = sys.velocity_label(i);
            let name = element_of(&label);
            let b = match names.iter().position(|n| n == name) {
                Some(b) => b,
                None => {
                    names.push(name.to_string());
                    names.len() - 1
                }
            };
            body_of.push(b);
        }
        let sq = vec![[0.0; 3]; names.len()];
        Self { body_of, names, sq }
    }

    /// The number of bodies.
    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }

    /// Add to `jump` (one entry per body) each body's ‖v − v_prev‖_b of a
    /// step of length h whose rate ‖v − v_prev‖_b / h exceeds
    /// [`SWITCH_ACCELERATION`] a_ref.
    pub(crate) fn count_fast(
        &mut self,
        mass: &[f64],
        v: &[f64],
        v_prev: &[f64],
        h: f64,
        a_ref: f64,
        jump: &mut [f64],
    ) {
        if !(a_ref > 0.0 && h > 0.0) {
            return;
        }
        self.sq.iter_mut().for_each(|s| s[0] = 0.0);
        for (i, &b) in self.body_of.iter().enumerate() {
            let d = v[i] - v_prev[i];
            self.sq[b][0] += mass[i] * d * d;
        }
        for (s, j) in self.sq.iter().zip(jump.iter_mut()) {
            let dv = s[0].sqrt();
            if dv / h > SWITCH_ACCELERATION * a_ref && dv.is_finite() {
                *j += dv;
            }
        }
    }

    /// The body that turned most, relative to its speed, among those that
    /// turned like a switch from v_in to v with fast parts `jump`, the
    /// system's speed being `speed` (module documentation); `None` if no
    /// body did.
    pub(crate) fn switched(
        &mut self,
        mass: &[f64],
        v_in: &[f64],
        v: &[f64],
        jump: &[f64],
        speed: f64,
    ) -> Option<BodyTurn> {
        self.sq.iter_mut().for_each(|s| *s = [0.0; 3]);
        for (i, &b) in self.body_of.iter().enumerate() {
            let d = v[i] - v_in[i];
            let s = &mut self.sq[b];
            s[0] += mass[i] * d * d;
            s[1] += mass[i] * v_in[i] * v_in[i];
            s[2] += mass[i] * v[i] * v[i];
        }
        let floor = BODY_SPEED_FLOOR * speed / (self.len().max(1) as f64).sqrt();
        let mut worst: Option<(usize, f64, f64)> = None;
        for (b, (s, &j)) in self.sq.iter().zip(jump).enumerate() {
            let turn = s[0].sqrt();
            let speed_b = s[1].sqrt().max(s[2].sqrt()).max(floor);
            let switched = turn > SWITCH_TURN * speed_b && j > SWITCH_JUMP * speed_b;
            if switched
                && speed_b > 0.0
                && turn.is_finite()
                && worst.is_none_or(|(_, t, sp)| turn / speed_b > t / sp)
            {
                worst = Some((b, turn, speed_b));
            }
        }
        worst.map(|(b, turn, speed)| BodyTurn {
            body: self.names[b].clone(),
            turn,
            speed,
            jump: jump[b],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_names_group_the_coordinates() {
        assert_eq!(element_of("crank3.theta"), "crank3");
        assert_eq!(element_of("a.b.vx"), "a.b");
        assert_eq!(element_of("q7"), "q7");
    }
}
