//! Explicit Runge-Kutta methods: tableaux as data, one driver.
//!
//! Owns the tableaux (`tableau.rs`) and the driver (`erk.rs`). Must not
//! contain per-method stepping code: a new method is a new tableau.

pub mod erk;
pub mod tableau;

use crate::error::IntegrateError;
use crate::method::{check_params, Family, MethodEntry, MethodInfo, Stability};
use crate::options::SolverOptions;
use crate::stepper::Stepper;

pub use erk::ExplicitRk;
pub use tableau::ButcherTableau;

fn build_rk4(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    check_params("rk4", o, &[])?;
    Ok(Box::new(ExplicitRk::new(&tableau::RK4)))
}

fn build_dopri5(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    check_params("dopri5", o, &[])?;
    Ok(Box::new(ExplicitRk::new(&tableau::DOPRI5)))
}

/// The explicit Runge-Kutta methods.
pub const METHODS: &[MethodEntry] = &[
    MethodEntry {
        info: MethodInfo {
            name: "rk4",
            title: "classic Runge-Kutta, fourth order",
            family: Family::ExplicitRk,
            order: 4,
            embedded_order: None,
            implicit: false,
            stability: Stability::Conditional,
            stiff: false,
            adaptive: false,
            source: "Kutta (1901); Hairer-Norsett-Wanner I, Table II.1.2",
            advice: "fixed-step reference for smooth non-stiff problems; real-time use",
        },
        build: build_rk4,
    },
    MethodEntry {
        info: MethodInfo {
            name: "dopri5",
            title: "Dormand-Prince 5(4)",
            family: Family::ExplicitRk,
            order: 5,
            embedded_order: Some(4),
            implicit: false,
            stability: Stability::Conditional,
            stiff: false,
            adaptive: true,
            source: "Dormand & Prince (1980); Hairer-Norsett-Wanner I, Table II.5.2",
            advice: "default for non-stiff problems at moderate tolerances (ode45)",
        },
        build: build_dopri5,
    },
];
