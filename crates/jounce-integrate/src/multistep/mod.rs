//! Linear multistep methods: Adams–Bashforth, Adams–Moulton, BDF as
//! coefficient tables with one fixed-step driver; variable-step Adams
//! predictor–correctors (PECE with Milne's device, and a variable-order
//! code in the manner of Shampine–Gordon's DE); variable-step
//! variable-order BDF and NDF in the manner of ode15s.
//!
//! Files: `coeffs.rs` (the tables), `start.rs` (starting values: RK4 and
//! extrapolated implicit Euler), `fixed.rs` (fixed-step driver),
//! `lagrange.rs` (variable-step Adams weights), `adams.rs` (pece,
//! adams_vo), `bdf.rs` (bdf, ndf), `stability_limit.rs` (the order and
//! step limits of bdf/ndf on lightly damped modes).
//!
//! Registered names and parameters ([`crate::method::build`]):
//!
//! | name | what | parameters |
//! |---|---|---|
//! | `ab1`..`ab5` | Adams–Bashforth, fixed step | — (needs `fixed_step`) |
//! | `am1`..`am5` | Adams–Moulton of order 1..5, fixed step, Newton | — (needs `fixed_step`) |
//! | `pece` | P(EC)^m E Adams, Milne's estimate, variable step | `order` 1..5 (default 4), `m` 1..10 (default 1), `final_eval` 0/1 (default 1) |
//! | `adams_vo` | variable-step variable-order Adams, orders 1..12 | `max_order` 1..12 (default 12) |
//! | `bdf` | BDF 1..5, variable step and order (ode15s form) | `max_order` 1..5 (default 5) |
//! | `ndf` | NDF 1..5 (Klopfenstein–Shampine), as `bdf` | `max_order` 1..5 (default 5) |
//!
//! `bdf` and `ndf` also integrate overdetermined DAEs (an ODE with
//! invariants, [`crate::OdeProblem::as_overdetermined`]), meeting the
//! invariants at every step (`bdf.rs`, [`crate::overdetermined`]).
//!
//! `pece`, `bdf`, `ndf` also run at a fixed step (`fixed_step`), at the
//! given order; `adams_vo` needs error control. `pece` and `adams_vo`
//! honour [`crate::ErrorPer`]; `bdf` and `ndf` control the error per step
//! (as ode15s).

pub mod adams;
pub mod bdf;
pub mod coeffs;
pub mod fixed;
pub mod lagrange;
pub mod stability_limit;
pub mod start;

use crate::error::IntegrateError;
use crate::method::{check_params, Family, MethodEntry, MethodInfo, Stability};
use crate::options::SolverOptions;
use crate::stepper::Stepper;

pub use adams::{AdamsMode, VarAdams};

/// The order a variable-order method chose for the retry after a
/// rejected trial (`pending`, set when the selection ran) takes effect:
/// the bookkeeping of the ODE `bdf`/`ndf` and the DAE `bdf` alike.
pub(crate) fn take_pending_order(k: &mut usize, pending: &mut Option<usize>) {
    if let Some(knew) = pending.take() {
        *k = knew;
    }
}
pub use bdf::{BdfNdf, BDF_KAPPA, NDF_KAPPA};
pub use coeffs::Lmm;
pub use fixed::FixedLmm;

/// Angles α of A(α)-stability of BDF1..5 in degrees (Hairer–Wanner II,
/// Section V.2, Table 2.1 (p. 246): 90, 90, 86.03, 73.35, 51.84).
pub const BDF_ALPHA_DEG: [f64; 5] = [90.0, 90.0, 86.03, 73.35, 51.84];
/// Angles α of A(α)-stability of NDF1..5 in degrees (Shampine & Reichelt
/// 1997, Table 1: 90, 90, 80, 66, 51).
pub const NDF_ALPHA_DEG: [f64; 5] = [90.0, 90.0, 80.0, 66.0, 51.0];

/// An integer parameter in [lo, hi].
fn int_param(
    method: &str,
    o: &SolverOptions,
    name: &str,
    default: usize,
    lo: usize,
    hi: usize,
) -> Result<usize, IntegrateError> {
    let v = o.param(name, default as f64);
    if v.fract() != 0.0 || v < lo as f64 || v > hi as f64 {
        return Err(IntegrateError::BadMethod(format!(
            "integrator '{method}': parameter '{name}' must be an integer in {lo}..={hi}, got {v}"
        )));
    }
    Ok(v as usize)
}

macro_rules! fixed_builder {
    ($fname:ident, $lmm:expr) => {
        fn $fname(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
            check_params($lmm.name, o, &[])?;
            Ok(Box::new(FixedLmm::new(&$lmm)))
        }
    };
}

fixed_builder!(build_ab1, coeffs::AB1);
fixed_builder!(build_ab2, coeffs::AB2);
fixed_builder!(build_ab3, coeffs::AB3);
fixed_builder!(build_ab4, coeffs::AB4);
fixed_builder!(build_ab5, coeffs::AB5);
fixed_builder!(build_am1, coeffs::AM1);
fixed_builder!(build_am2, coeffs::AM2);
fixed_builder!(build_am3, coeffs::AM3);
fixed_builder!(build_am4, coeffs::AM4);
fixed_builder!(build_am5, coeffs::AM5);

fn build_pece(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    check_params("pece", o, &["order", "m", "final_eval"])?;
    let order = int_param("pece", o, "order", 4, 1, 5)?;
    let m = int_param("pece", o, "m", 1, 1, 10)?;
    let final_eval = int_param("pece", o, "final_eval", 1, 0, 1)? == 1;
    Ok(Box::new(VarAdams::new(
        "pece",
        AdamsMode::Pece {
            order,
            m,
            final_eval,
        },
    )))
}

fn build_adams_vo(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    check_params("adams_vo", o, &["max_order"])?;
    let max_order = int_param("adams_vo", o, "max_order", 12, 1, 12)?;
    Ok(Box::new(VarAdams::new(
        "adams_vo",
        AdamsMode::VariableOrder { max_order },
    )))
}

fn build_bdf(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    check_params("bdf", o, &["max_order"])?;
    let k = int_param("bdf", o, "max_order", 5, 1, 5)?;
    // the ODE form (ode15s-style) or, on an implicit DAE, DASSL-style
    Ok(Box::new(crate::dae::OdeOrDae::new(
        Box::new(BdfNdf::new("bdf", BDF_KAPPA, k)),
        Box::new(crate::dae::DaeBdf::new(k)),
    )))
}

fn build_ndf(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    check_params("ndf", o, &["max_order"])?;
    let k = int_param("ndf", o, "max_order", 5, 1, 5)?;
    Ok(Box::new(BdfNdf::new("ndf", NDF_KAPPA, k)))
}

const AB_SRC: &str =
    "Bashforth & Adams (1883); Hairer-Norsett-Wanner I, Table III.1.1; jalon-bayo Table 7.1";
const AM_SRC: &str = "Moulton (1926); Hairer-Norsett-Wanner I, Table III.1.2; jalon-bayo Table 7.2";
const FIXED_ADVICE: &str = "fixed step only; RK4 starting values; teaching and comparison (use pece/adams_vo for error control)";

macro_rules! fixed_entry {
    ($name:expr, $title:expr, $order:expr, $implicit:expr, $stab:expr, $src:expr, $build:ident) => {
        MethodEntry {
            info: MethodInfo {
                name: $name,
                title: $title,
                family: Family::Multistep,
                order: $order,
                embedded_order: None,
                implicit: $implicit,
                stability: $stab,
                stiff: false,
                adaptive: false,
                source: $src,
                advice: FIXED_ADVICE,
            },
            build: $build,
        }
    };
}

/// The registered multistep methods.
pub const METHODS: &[MethodEntry] = &[
    fixed_entry!("ab1", "Adams-Bashforth 1 (explicit Euler)", 1, false, Stability::Conditional, AB_SRC, build_ab1),
    fixed_entry!("ab2", "Adams-Bashforth, 2 steps", 2, false, Stability::Conditional, AB_SRC, build_ab2),
    fixed_entry!("ab3", "Adams-Bashforth, 3 steps", 3, false, Stability::Conditional, AB_SRC, build_ab3),
    fixed_entry!("ab4", "Adams-Bashforth, 4 steps", 4, false, Stability::Conditional, AB_SRC, build_ab4),
    fixed_entry!("ab5", "Adams-Bashforth, 5 steps", 5, false, Stability::Conditional, AB_SRC, build_ab5),
    fixed_entry!("am1", "Adams-Moulton order 1 (implicit Euler)", 1, true, Stability::LStable, AM_SRC, build_am1),
    fixed_entry!("am2", "Adams-Moulton order 2 (trapezoidal rule)", 2, true, Stability::AStable, AM_SRC, build_am2),
    fixed_entry!("am3", "Adams-Moulton order 3 (2 steps)", 3, true, Stability::Conditional, AM_SRC, build_am3),
    fixed_entry!("am4", "Adams-Moulton order 4 (3 steps)", 4, true, Stability::Conditional, AM_SRC, build_am4),
    fixed_entry!("am5", "Adams-Moulton order 5 (4 steps)", 5, true, Stability::Conditional, AM_SRC, build_am5),
    MethodEntry {
        info: MethodInfo {
            name: "pece",
            title: "Adams predictor-corrector P(EC)^m E, variable step (params: order 1..5 [4], m [1], final_eval 0/1 [1])",
            family: Family::Multistep,
            order: 5,
            embedded_order: Some(5),
            implicit: false,
            stability: Stability::Conditional,
            stiff: false,
            adaptive: true,
            source: "AB/AM: Hairer-Norsett-Wanner I, III.1 and III.5 (variable step); Milne's device: jalon-bayo 7.1.3, eq. 7.27",
            advice: "smooth non-stiff problems with expensive f; one or two f per step",
        },
        build: build_pece,
    },
    MethodEntry {
        info: MethodInfo {
            name: "adams_vo",
            title: "variable-step variable-order Adams PECE, error-controlled orders 1-12, corrector one order higher (DE-like; param max_order [12])",
            family: Family::Multistep,
            order: 13,
            embedded_order: Some(12),
            implicit: false,
            stability: Stability::Conditional,
            stiff: false,
            adaptive: true,
            source: "Shampine & Gordon, Computer Solution of ODEs (1975), ch. 4-5; Hairer-Norsett-Wanner I, III.5 and III.7",
            advice: "smooth non-stiff problems at tight tolerances (orbits); few f per step",
        },
        build: build_adams_vo,
    },
    MethodEntry {
        info: MethodInfo {
            name: "bdf",
            title: "BDF orders 1-5, variable step and order (ode15s form; param max_order [5])",
            family: Family::Multistep,
            order: 5,
            embedded_order: None,
            implicit: true,
            stability: Stability::AAlpha(51.84),
            stiff: true,
            adaptive: true,
            source: "Curtiss & Hirschfelder (1952); Hairer-Wanner II, V.1 and Table V.2.1 (angles 90, 90, 86.03, 73.35, 51.84); Shampine & Reichelt (1997) for the implementation",
            advice: "stiff problems at moderate tolerances (DASSL/CVODE/ode15s family); lower max_order for oscillatory stiff problems",
        },
        build: build_bdf,
    },
    MethodEntry {
        info: MethodInfo {
            name: "ndf",
            title: "numerical differentiation formulas 1-5, variable step and order (ode15s; param max_order [5])",
            family: Family::Multistep,
            order: 5,
            embedded_order: None,
            implicit: true,
            stability: Stability::AAlpha(51.0),
            stiff: true,
            adaptive: true,
            source: "Klopfenstein (1971); Shampine & Reichelt, SIAM J. Sci. Comput. 18 (1997), Table 1 (kappa, angles 90, 90, 80, 66, 51)",
            advice: "stiff problems; ~26% larger steps than BDF at orders 1-3 for the same accuracy (MATLAB ode15s default)",
        },
        build: build_ndf,
    },
];
