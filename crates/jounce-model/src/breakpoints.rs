//! Model-level breakpoints: the union of the breakpoints of every time
//! function in drivers and forces, for integrators that must stop there.

use crate::time_function::TimeFunction;
use crate::types::{ForceKind, Model};

impl Model {
    /// Every time function of the model (drivers, then forces).
    pub fn time_functions(&self) -> Vec<&TimeFunction> {
        let mut out: Vec<&TimeFunction> = self.drivers.iter().map(|d| &d.function).collect();
        if let Some(sm) = &self.spatial {
            out.extend(sm.drivers.iter().map(|d| &d.function));
            for f in &sm.forces {
                if let crate::SpatialForceKind::SpringDamper {
                    actuator: Some(a), ..
                }
                | crate::SpatialForceKind::RotationalSpring {
                    actuator: Some(a), ..
                } = &f.kind
                {
                    out.push(a);
                }
            }
        }
        for f in &self.forces {
            match &f.kind {
                ForceKind::PointForce { fx, fy, .. } => {
                    out.push(fx);
                    out.push(fy);
                }
                ForceKind::Torque { torque, .. } => out.push(torque),
                ForceKind::SpringDamper { actuator, .. }
                | ForceKind::RotationalSpring { actuator, .. } => out.extend(actuator.iter()),
                ForceKind::Contact { .. } | ForceKind::Beam(_) => {}
            }
        }
        out
    }

    /// Breakpoints of all time functions in [0, t_end], sorted, without
    /// duplicates.
    pub fn breakpoints(&self) -> Vec<f64> {
        let mut out = Vec::new();
        for f in self.time_functions() {
            f.breakpoints(&mut out);
        }
        out.retain(|t| *t >= 0.0 && *t <= self.settings.t_end);
        out.sort_by(f64::total_cmp);
        out.dedup();
        out
    }
}
