//! Structural-dynamics methods on M(q) q'' = f(t, q, q'): the Newmark family,
//! HHT-α, generalized-α, the midpoint rule, Wilson-θ and collocation.
//!
//! Owns the coefficient sets (`scheme.rs`) and the one driver (`driver.rs`).
//! A new member of the family is a new [`StructuralScheme`], never new
//! stepping code. The problem must expose its second-order form through
//! [`crate::OdeProblem::as_second_order`] (e.g. [`crate::FirstOrderForm`]).

pub mod augmented_lagrangian;
mod conjugate_projection;
pub mod driver;
pub mod scheme;

use crate::error::IntegrateError;
use crate::method::{check_params, Family, MethodEntry, MethodInfo, Stability};
use crate::options::SolverOptions;
use crate::stepper::Stepper;

pub use augmented_lagrangian::{AugmentedLagrangianStepper, KEEP_ITERATION_MATRIX};
pub use driver::StructuralStepper;
pub use scheme::{Balance, StructuralScheme};

fn boxed(s: StructuralScheme) -> Box<dyn Stepper> {
    Box::new(StructuralStepper::new(s))
}

fn build_newmark(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    check_params(
        "newmark",
        o,
        &["beta", "gamma", "energy_conserving", KEEP_ITERATION_MATRIX],
    )?;
    let (beta, gamma) = (o.param("beta", 0.25), o.param("gamma", 0.5));
    let energy_conserving = o.param("energy_conserving", 0.0);
    if energy_conserving == 0.0 {
        return Ok(boxed(StructuralScheme::newmark(beta, gamma)?));
    }
    match energy_conserving {
        1.0 => {
            if beta != 0.25 || gamma != 0.5 {
                return Err(IntegrateError::BadMethod(format!(
                    "integrator 'newmark': energy_conserving = 1 is the trapezoidal rule \
                     (beta = 1/4, gamma = 1/2), got beta = {beta}, gamma = {gamma}"
                )));
            }
            Ok(boxed(StructuralScheme::energy_conserving()))
        }
        x => Err(IntegrateError::BadMethod(format!(
            "integrator 'newmark': parameter 'energy_conserving' must be 0 (end-point form) \
             or 1 (discrete-gradient form), got {x}"
        ))),
    }
}

fn build_hht(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    check_params("hht", o, &["alpha", KEEP_ITERATION_MATRIX])?;
    Ok(boxed(StructuralScheme::hht(o.param("alpha", -0.1))?))
}

fn build_generalized_alpha(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    check_params("generalized_alpha", o, &["rho_inf", KEEP_ITERATION_MATRIX])?;
    Ok(boxed(StructuralScheme::generalized_alpha(
        o.param("rho_inf", 0.8),
    )?))
}

fn build_midpoint(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    check_params("midpoint_rule", o, &[KEEP_ITERATION_MATRIX])?;
    Ok(boxed(StructuralScheme::midpoint()))
}

fn build_wilson(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    check_params("wilson", o, &["theta", KEEP_ITERATION_MATRIX])?;
    Ok(boxed(StructuralScheme::wilson(o.param("theta", 1.4))?))
}

fn build_collocation(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    check_params(
        "collocation",
        o,
        &["beta", "gamma", "theta", KEEP_ITERATION_MATRIX],
    )?;
    let theta = o.param("theta", 1.4);
    // default β: the lower end of the unconditional-stability range (jalon-bayo eq. 7.42)
    let beta_default = (2.0 * theta * theta - 1.0) / (8.0 * theta.powi(3) - 4.0);
    Ok(boxed(StructuralScheme::collocation(
        o.param("beta", beta_default),
        o.param("gamma", 0.5),
        theta,
    )?))
}

/// The registered structural methods.
pub const METHODS: &[MethodEntry] = &[
    MethodEntry {
        info: MethodInfo {
            name: "newmark",
            title: "Newmark beta-gamma (default trapezoidal rule beta = 1/4, gamma = 1/2)",
            family: Family::Structural,
            order: 2,
            embedded_order: Some(1),
            implicit: true,
            stability: Stability::AStable,
            stiff: true,
            adaptive: true,
            source: "Newmark (1959), J. Eng. Mech. Div. ASCE 85:67-94; jalon-bayo eqs. 7.28-7.33; \
                     error estimate Zienkiewicz & Xie (1991); energy_conserving: Gonzalez (1999), \
                     Physica D 132:165-174",
            advice: "parameters beta, gamma; trapezoidal default conserves energy of linear systems; \
                     gamma != 1/2 is first order but damps (A-stable for 2 beta >= gamma >= 1/2); \
                     energy_conserving = 1 (trapezoidal, fixed step): constraint forces through a \
                     discrete gradient (Gonzalez 1999), energy kept to the Newton tolerance",
        },
        build: build_newmark,
    },
    MethodEntry {
        info: MethodInfo {
            name: "hht",
            title: "Hilber-Hughes-Taylor alpha method",
            family: Family::Structural,
            order: 2,
            embedded_order: Some(1),
            implicit: true,
            stability: Stability::AStable,
            stiff: true,
            adaptive: true,
            source: "Hilber, Hughes & Taylor (1977), Earthquake Eng. Struct. Dyn. 5:283-292; \
                     jalon-bayo eq. 7.36; as generalized-alpha with alpha_m = 0 (Chung & Hulbert 1993)",
            advice: "parameter alpha in [-1/3, 0] (default -0.1): second-order with high-frequency \
                     damping, rho_inf = (1 + alpha)/(1 - alpha)",
        },
        build: build_hht,
    },
    MethodEntry {
        info: MethodInfo {
            name: "generalized_alpha",
            title: "generalized-alpha (Chung-Hulbert)",
            family: Family::Structural,
            order: 2,
            embedded_order: Some(1),
            implicit: true,
            stability: Stability::AStable,
            stiff: true,
            adaptive: true,
            source: "Chung & Hulbert (1993), J. Appl. Mech. 60:371-375, eqs. 17, 20, 25",
            advice: "parameter rho_inf in [0, 1] (default 0.8): controllable high-frequency \
                     dissipation with least low-frequency damping; default choice for stiff \
                     mechanical systems",
        },
        build: build_generalized_alpha,
    },
    MethodEntry {
        info: MethodInfo {
            name: "midpoint_rule",
            title: "midpoint rule (equilibrium at mid-step, Newmark trapezoidal interpolation)",
            family: Family::Structural,
            order: 2,
            embedded_order: Some(1),
            implicit: true,
            stability: Stability::AStable,
            stiff: true,
            adaptive: true,
            source: "jalon-bayo eq. 7.35; Simo & Wong (1991), Int. J. Numer. Meth. Eng. 31:19-52; \
                     generalized-alpha with alpha_m = alpha_f = 1/2",
            advice: "energy-conserving for linear systems and unconditionally stable in the \
                     nonlinear regime where the trapezoidal rule may not be; no damping",
        },
        build: build_midpoint,
    },
    MethodEntry {
        info: MethodInfo {
            name: "wilson",
            title: "Wilson-theta",
            family: Family::Structural,
            order: 2,
            embedded_order: None,
            implicit: true,
            stability: Stability::AStable,
            stiff: true,
            adaptive: false,
            source: "Wilson (1968); Bathe (1982), Section 9.2.3; jalon-bayo eqs. 7.37-7.39",
            advice: "fixed step only (no validated local error estimate for theta > 1); \
                     parameter theta >= 1.37 (default 1.4); damps high frequencies but \
                     overshoots in the first steps (Goudreau & Taylor 1973); prefer hht or \
                     generalized_alpha",
        },
        build: build_wilson,
    },
    MethodEntry {
        info: MethodInfo {
            name: "collocation",
            title: "Hilber-Hughes collocation (beta, gamma, theta)",
            family: Family::Structural,
            order: 2,
            embedded_order: None,
            implicit: true,
            stability: Stability::AStable,
            stiff: true,
            adaptive: false,
            source: "Hilber & Hughes (1978), Earthquake Eng. Struct. Dyn. 6:99-117; \
                     jalon-bayo eqs. 7.37-7.42",
            advice: "fixed step only when theta > 1 (no validated local error estimate); \
                     parameters beta, gamma (0.5), theta (1.4); default beta is the lower end of \
                     the unconditional-stability range (2 theta^2 - 1)/(8 theta^3 - 4); theta = 1 \
                     is Newmark",
        },
        build: build_collocation,
    },
];
