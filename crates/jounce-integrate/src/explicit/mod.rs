//! Explicit Runge-Kutta methods: tableaux as data, one driver.
//!
//! Owns the tableaux (`tableau.rs`), the driver (`erk.rs`) and the
//! variable-order Cash–Karp stepper (`cash_karp_vo.rs`), whose early-quit
//! logic selects among the embedded solutions of one tableau. Must not
//! contain per-method stepping code otherwise: a new method is a new tableau.

pub mod cash_karp_vo;
pub mod erk;
pub mod tableau;

use crate::error::IntegrateError;
use crate::method::{check_params, Family, MethodEntry, MethodInfo, Stability};
use crate::options::SolverOptions;
use crate::stepper::Stepper;

pub use cash_karp_vo::CashKarpVo;
pub use erk::ExplicitRk;
pub use tableau::{ButcherTableau, DenseOutput, ErrorEstimate};

/// Every tableau run by [`ExplicitRk`], for order-condition and stability
/// checks over the whole family.
pub const TABLEAUX: &[&ButcherTableau] = &[
    &tableau::EULER,
    &tableau::MIDPOINT,
    &tableau::HEUN,
    &tableau::RALSTON,
    &tableau::RK4,
    &tableau::RKF45,
    &tableau::CASH_KARP,
    &tableau::DOPRI5,
    &tableau::DOP853,
];

/// The tableau registered under `name`, if it is one of [`TABLEAUX`].
pub fn tableau(name: &str) -> Option<&'static ButcherTableau> {
    TABLEAUX.iter().copied().find(|t| t.name == name)
}

fn build_tab(
    tab: &'static ButcherTableau,
    o: &SolverOptions,
) -> Result<Box<dyn Stepper>, IntegrateError> {
    check_params(tab.name, o, &[])?;
    Ok(Box::new(ExplicitRk::new(tab)))
}

fn build_euler(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    build_tab(&tableau::EULER, o)
}
fn build_midpoint(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    build_tab(&tableau::MIDPOINT, o)
}
fn build_heun(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    build_tab(&tableau::HEUN, o)
}
fn build_ralston(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    build_tab(&tableau::RALSTON, o)
}
fn build_rk4(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    build_tab(&tableau::RK4, o)
}
fn build_rkf45(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    build_tab(&tableau::RKF45, o)
}
fn build_cash_karp(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    build_tab(&tableau::CASH_KARP, o)
}
fn build_dopri5(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    build_tab(&tableau::DOPRI5, o)
}
fn build_dop853(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    build_tab(&tableau::DOP853, o)
}
fn build_cash_karp_vo(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    check_params("cash_karp_vo", o, &[])?;
    Ok(Box::new(CashKarpVo::new()))
}

/// Facts shared by the explicit entries.
const fn info(
    name: &'static str,
    title: &'static str,
    order: u32,
    embedded_order: Option<u32>,
    source: &'static str,
    advice: &'static str,
) -> MethodInfo {
    MethodInfo {
        name,
        title,
        family: Family::ExplicitRk,
        order,
        embedded_order,
        implicit: false,
        stability: Stability::Conditional,
        stiff: false,
        adaptive: embedded_order.is_some(),
        source,
        advice,
    }
}

/// The explicit Runge-Kutta methods.
pub const METHODS: &[MethodEntry] = &[
    MethodEntry {
        info: info(
            "euler",
            "forward Euler, first order",
            1,
            None,
            "Euler (1768); Hairer-Norsett-Wanner I, Section I.7, eq. (7.3)",
            "teaching and baselines only: first order, small stability region",
        ),
        build: build_euler,
    },
    MethodEntry {
        info: info(
            "midpoint",
            "explicit midpoint (Runge), second order",
            2,
            None,
            "Runge (1895); Hairer-Norsett-Wanner I, Table II.1.1",
            "cheap fixed-step second-order method",
        ),
        build: build_midpoint,
    },
    MethodEntry {
        info: info(
            "heun",
            "Heun (explicit trapezoid) 2(1) with embedded Euler",
            2,
            Some(1),
            "Heun (1900); Hairer-Norsett-Wanner I, Table II.1.1",
            "low-accuracy adaptive runs (tolerances around 1e-3), or fixed steps",
        ),
        build: build_heun,
    },
    MethodEntry {
        info: info(
            "ralston",
            "Ralston's minimum-error second-order method",
            2,
            None,
            "Ralston, Math. Comp. 16 (1962) 431-437",
            "fixed-step second order with the smallest error constant of its class",
        ),
        build: build_ralston,
    },
    MethodEntry {
        info: info(
            "rk4",
            "classic Runge-Kutta, fourth order",
            4,
            None,
            "Kutta (1901); Hairer-Norsett-Wanner I, Table II.1.2",
            "fixed-step reference for smooth non-stiff problems; real-time use",
        ),
        build: build_rk4,
    },
    MethodEntry {
        info: info(
            "rkf45",
            "Runge-Kutta-Fehlberg 4(5), fourth order propagated",
            4,
            Some(5),
            "Fehlberg, NASA TR R-315 (1969), Table III; Hairer-Norsett-Wanner I, Table II.5.1",
            "classic adaptive method; dopri5 is usually more efficient",
        ),
        build: build_rkf45,
    },
    MethodEntry {
        info: info(
            "cash_karp",
            "Cash-Karp 5(4)",
            5,
            Some(4),
            "Cash & Karp, ACM TOMS 16 (1990) 201-222; Numerical Recipes in C 2nd ed., Section 16.2",
            "non-stiff problems at moderate tolerances",
        ),
        build: build_cash_karp,
    },
    MethodEntry {
        info: MethodInfo {
            adaptive: true,
            ..info(
                "cash_karp_vo",
                "Cash-Karp variable order 1-5 with early quit",
                5,
                Some(4),
                "Cash & Karp, ACM TOMS 16 (1990) 201-222, Sections 3-4",
                "non-stiff problems with sharp transients or rapidly varying right-hand sides",
            )
        },
        build: build_cash_karp_vo,
    },
    MethodEntry {
        info: info(
            "dopri5",
            "Dormand-Prince 5(4)",
            5,
            Some(4),
            "Dormand & Prince (1980); Hairer-Norsett-Wanner I, Table II.5.2",
            "default for non-stiff problems at moderate tolerances (ode45)",
        ),
        build: build_dopri5,
    },
    MethodEntry {
        info: info(
            "dop853",
            "Dormand-Prince 8(5,3) with 7th-order dense output",
            8,
            Some(5),
            "Prince & Dormand (1981); Hairer-Norsett-Wanner I, Section II.10, p. 254 (dop853.f)",
            "non-stiff problems at tight tolerances (1e-8 and below); long orbits",
        ),
        build: build_dop853,
    },
];
