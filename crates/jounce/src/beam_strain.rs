//! Beams deformed beyond the small-strain range of their element.
//!
//! The beam element's loads are linear in its deformation
//! ([`jounce_mechanics::beam`]: small strains, a co-rotational frame on
//! body 1 only), so a result with the element deformed far beyond that
//! range is not one of the structure it models: a modulus given in GPa
//! where pascals are meant (1e9 too soft) gave a static "equilibrium
//! (stable)" at a tip rotation of 7140 rad. A result is warned, naming
//! the beam and the value, when any of
//!
//! - the bending rotation φ of node 2 against node 1 exceeds
//!   [`MAX_BEAM_ROTATION`] in magnitude,
//! - the chord from node 1 to node 2 turns by more than
//!   [`MAX_BEAM_ROTATION`] against the beam's axis,
//! - the axial strain exceeds [`MAX_AXIAL_STRAIN`] in magnitude.
//!
//! `jounce static` checks its equilibrium ([`beam_strain_warnings`], in the
//! state file's `warnings` and its report); a run checks every output row
//! ([`BeamStrainWatch`]) and reports the largest values in its
//! diagnostics.

use jounce_mechanics::PlanarSystem;
use jounce_model::Model;

/// Largest rotation of a beam (bending rotation, or turn of its chord)
/// inside the small-strain range \[rad\]: at 0.5 rad the linearisation
/// sin φ ≈ φ is 4 % off and cos φ ≈ 1 is 12 % off, so a linear beam's
/// loads are no longer those of the beam.
pub const MAX_BEAM_ROTATION: f64 = 0.5;

/// Largest axial strain of a beam inside the small-strain range: 5 %,
/// twenty times the yield strain of structural steel (about 0.2 %).
pub const MAX_AXIAL_STRAIN: f64 = 0.05;

/// Name of force element `k` of `model`.
fn beam_name(model: &Model, k: usize) -> String {
    model
        .forces
        .get(k)
        .map_or_else(|| format!("force element {k}"), |f| f.name.clone())
}

/// The largest value of each measure of one beam, with when it occurred.
#[derive(Clone, Copy, Debug, Default)]
struct Worst {
    rotation: (f64, f64),
    chord: (f64, f64),
    strain: (f64, f64),
}

impl Worst {
    fn update(&mut self, t: f64, d: &jounce_mechanics::beam::BeamDeformation) {
        for (slot, x) in [
            (&mut self.rotation, d.rotation),
            (&mut self.chord, d.chord_rotation),
            (&mut self.strain, d.axial_strain),
        ] {
            // NaN (a blown-up state) counts as beyond any bound
            if x.is_nan() || x.abs() > slot.0.abs() {
                slot.0 = x;
                slot.1 = t;
            }
        }
    }

    /// The messages of the measures beyond their bounds; `when` says at
    /// what time (or state) for a value found at time `t`.
    fn messages(&self, name: &str, context: &str, when: &dyn Fn(f64) -> String) -> Vec<String> {
        let mut out = Vec::new();
        let beyond = |x: f64, bound: f64| x.is_nan() || x.abs() > bound;
        let mut what = Vec::new();
        if beyond(self.rotation.0, MAX_BEAM_ROTATION) {
            what.push(format!(
                "its bending rotation (node 2 against node 1) reaches {:.4e} rad{}",
                self.rotation.0,
                when(self.rotation.1)
            ));
        }
        if beyond(self.chord.0, MAX_BEAM_ROTATION) {
            what.push(format!(
                "its chord turns by {:.4e} rad against its axis{}",
                self.chord.0,
                when(self.chord.1)
            ));
        }
        if beyond(self.strain.0, MAX_AXIAL_STRAIN) {
            what.push(format!(
                "its axial strain reaches {:.4e} ({:.3e} %){}",
                self.strain.0,
                100.0 * self.strain.0,
                when(self.strain.1)
            ));
        }
        if !what.is_empty() {
            out.push(format!(
                "beam '{name}'{context}: {}: beyond the element's small-strain range (rotations up to \
                 {MAX_BEAM_ROTATION} rad, axial strain up to {:.0} %), where its loads are \
                 linear in the deformation, so this result is not the beam's; check E, A and I \
                 and their units (E in Pa, not GPa or MPa)",
                what.join(", "),
                100.0 * MAX_AXIAL_STRAIN
            ));
        }
        out
    }
}

/// Warnings for the beams of `model` deformed beyond the small-strain
/// range at configuration `q` (module documentation); `at` names the
/// configuration, e.g. "at the static equilibrium".
pub fn beam_strain_warnings(model: &Model, sys: &PlanarSystem, q: &[f64], at: &str) -> Vec<String> {
    sys.beam_deformations(q)
        .iter()
        .flat_map(|(k, d)| {
            let mut w = Worst::default();
            w.update(0.0, d);
            w.messages(&beam_name(model, *k), &format!(" {at}"), &|_| String::new())
        })
        .collect()
}

/// The largest deformations of the beams along a run, checked against the
/// small-strain range at its end ([`BeamStrainWatch::warnings`]).
pub struct BeamStrainWatch<'a> {
    sys: &'a PlanarSystem,
    names: Vec<String>,
    worst: Vec<Worst>,
}

impl<'a> BeamStrainWatch<'a> {
    /// A watch on the beams of `sys`; `None` when it has none.
    pub fn new(model: &Model, sys: &'a PlanarSystem) -> Option<Self> {
        let beams = sys.beam_deformations(&sys.initial_q());
        if beams.is_empty() {
            return None;
        }
        Some(Self {
            sys,
            names: beams.iter().map(|(k, _)| beam_name(model, *k)).collect(),
            worst: vec![Worst::default(); beams.len()],
        })
    }

    /// Record the deformations at (t, q).
    pub fn observe(&mut self, t: f64, q: &[f64]) {
        for (w, (_, d)) in self.worst.iter_mut().zip(self.sys.beam_deformations(q)) {
            w.update(t, &d);
        }
    }

    /// The beams that went beyond the small-strain range, with their
    /// largest values and when.
    pub fn warnings(&self) -> Vec<String> {
        self.names
            .iter()
            .zip(&self.worst)
            .flat_map(|(name, w)| w.messages(name, "", &|t| format!(" at t = {t} s")))
            .collect()
    }
}
