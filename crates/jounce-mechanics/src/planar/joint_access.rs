//! Read access to the parts of a [`PlanarSystem`] that the joint-coordinate
//! layer ([`crate::joint_coordinates`]) builds its kinematic tree from:
//! inertial data, gravity, constraint and force elements. Crate-private, so
//! the layers above still see the system only through its traits.

use super::PlanarSystem;
use crate::constraints::ConstraintElement;
use crate::forces::ForceElement;

impl PlanarSystem {
    /// Masses m \[kg\], by body.
    pub(crate) fn masses(&self) -> &[f64] {
        &self.mass
    }

    /// Centroidal inertias J \[kg·m²\], by body.
    pub(crate) fn inertias(&self) -> &[f64] {
        &self.inertia
    }

    /// Gravity g \[m/s²\].
    pub(crate) fn gravity(&self) -> [f64; 2] {
        self.gravity
    }

    /// Joints then drivers, in model order.
    pub(crate) fn constraint_elements(&self) -> &[ConstraintElement] {
        &self.constraints
    }

    /// Force elements, in model order.
    pub(crate) fn force_elements(&self) -> &[ForceElement] {
        &self.forces
    }
}
