//! Implicit methods for stiff problems: methods as data, one driver per
//! structural class.
//!
//! - `dirk_tableau.rs` + `dirk.rs`: SDIRK/ESDIRK (backward Euler,
//!   trapezoidal, implicit midpoint, Nørsett SDIRK2/3, TR-BDF2,
//!   Kennedy–Carpenter ESDIRK4(3));
//! - `radau_core.rs` + `radau5.rs`: Radau IIA of order 5 (Hairer–Wanner's
//!   radau5.f), the reference solver: one core for the ODE form
//!   (`radau5.rs`) and the DAE form ([`crate::dae::radau`]);
//! - `rosenbrock_tableau.rs` + `rosenbrock.rs`: Rosenbrock/W methods
//!   (ode23s, Rodas4);
//! - `stability.rs`: stability functions R(z) in complex arithmetic.

pub mod dirk;
pub mod dirk_tableau;
pub mod radau5;
pub mod radau_core;
pub mod rosenbrock;
pub mod rosenbrock_tableau;
pub mod stability;

use crate::error::IntegrateError;
use crate::method::{check_params, Family, MethodEntry, MethodInfo, Stability};
use crate::options::SolverOptions;
use crate::stepper::Stepper;

pub use dirk::Dirk;
pub use dirk_tableau::{DirkKind, DirkTableau};
pub use radau5::Radau5;
pub use rosenbrock::Rosenbrock;
pub use rosenbrock_tableau::RosenbrockTableau;

fn build_backward_euler(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    check_params("backward_euler", o, &[])?;
    Ok(Box::new(Dirk::new(DirkTableau::backward_euler())))
}

fn build_trapezoidal(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    check_params("trapezoidal", o, &[])?;
    Ok(Box::new(Dirk::new(DirkTableau::trapezoidal())))
}

fn build_implicit_midpoint(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    check_params("implicit_midpoint", o, &[])?;
    Ok(Box::new(Dirk::new(DirkTableau::implicit_midpoint())))
}

fn build_sdirk2(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    check_params("sdirk2", o, &["alpha"])?;
    let alpha = o.param("alpha", DirkTableau::sdirk2_l_alpha());
    Ok(Box::new(Dirk::new(DirkTableau::norsett_sdirk2(
        "sdirk2", alpha,
    )?)))
}

fn build_sdirk2_l(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    check_params("sdirk2_l", o, &[])?;
    Ok(Box::new(Dirk::new(DirkTableau::norsett_sdirk2(
        "sdirk2_l",
        DirkTableau::sdirk2_l_alpha(),
    )?)))
}

fn build_sdirk3(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    check_params("sdirk3", o, &[])?;
    Ok(Box::new(Dirk::new(DirkTableau::norsett_sdirk2(
        "sdirk3",
        DirkTableau::sdirk3_alpha(),
    )?)))
}

fn build_trbdf2(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    check_params("trbdf2", o, &[])?;
    Ok(Box::new(Dirk::new(DirkTableau::trbdf2())))
}

fn build_esdirk43(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    check_params("esdirk43", o, &[])?;
    Ok(Box::new(Dirk::new(DirkTableau::esdirk43())))
}

fn build_radau5(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    check_params("radau5", o, &[])?;
    // the ODE form or, on an implicit DAE, with index-aware error scaling
    Ok(Box::new(crate::dae::OdeOrDae::new(
        Box::new(Radau5::new()),
        Box::new(crate::dae::DaeRadau5::new()),
    )))
}

fn build_ode23s(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    check_params("ode23s", o, &[])?;
    Ok(Box::new(Rosenbrock::new(RosenbrockTableau::ode23s())))
}

fn build_rodas4(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    check_params("rodas4", o, &[])?;
    Ok(Box::new(Rosenbrock::new(RosenbrockTableau::rodas4())))
}

const fn dirk_info(
    name: &'static str,
    title: &'static str,
    order: u32,
    embedded_order: Option<u32>,
    stability: Stability,
    source: &'static str,
    advice: &'static str,
) -> MethodInfo {
    MethodInfo {
        name,
        title,
        family: Family::ImplicitRk,
        order,
        embedded_order,
        implicit: true,
        stability,
        stiff: true,
        // with an embedded pair, or by step doubling (see dirk.rs)
        adaptive: true,
        source,
        advice,
    }
}

/// The registered implicit methods.
pub const METHODS: &[MethodEntry] = &[
    MethodEntry {
        info: dirk_info(
            "backward_euler",
            "backward (implicit) Euler",
            1,
            None,
            Stability::LStable,
            "Hairer-Wanner II, Section IV.3, Table 3.1",
            "strongly damping first-order baseline for stiff problems; fixed step, or adaptive by step doubling",
        ),
        build: build_backward_euler,
    },
    MethodEntry {
        info: dirk_info(
            "trapezoidal",
            "trapezoidal rule (ESDIRK form)",
            2,
            None,
            Stability::AStable,
            "Hairer-Norsett-Wanner I, Section II.7; Hairer-Wanner II, Table IV.3.1",
            "no numerical damping (|R(inf)| = 1); conserves quadratic invariants of linear problems; fixed step, or adaptive by step doubling",
        ),
        build: build_trapezoidal,
    },
    MethodEntry {
        info: dirk_info(
            "implicit_midpoint",
            "implicit midpoint rule (1-stage Gauss)",
            2,
            None,
            Stability::AStable,
            "Hairer-Norsett-Wanner I, Table II.7.1; Hairer-Lubich-Wanner, Geometric Numerical Integration, II.1",
            "symplectic: long-time energy behaviour of conservative systems at a fixed step; adaptive by step doubling",
        ),
        build: build_implicit_midpoint,
    },
    MethodEntry {
        info: dirk_info(
            "sdirk2",
            "Norsett two-stage SDIRK (parameter alpha, default 1 - sqrt(2)/2)",
            2,
            None,
            Stability::LStable,
            "Norsett (1974); Hairer-Wanner II, Section IV.6, Table 6.1",
            "alpha = 1 - sqrt(2)/2 (default) is L-stable order 2, alpha = (3 + sqrt 3)/6 is A-stable order 3, alpha >= 1/4 A-stable; fixed step or step doubling",
        ),
        build: build_sdirk2,
    },
    MethodEntry {
        info: dirk_info(
            "sdirk2_l",
            "Norsett SDIRK, alpha = 1 - sqrt(2)/2 (L-stable, order 2)",
            2,
            None,
            Stability::LStable,
            "Norsett (1974); Hairer-Wanner II, Section IV.6, Table 6.1",
            "stiff integration with full damping of stiff components; fixed step or step doubling",
        ),
        build: build_sdirk2_l,
    },
    MethodEntry {
        info: dirk_info(
            "sdirk3",
            "Norsett SDIRK, alpha = (3 + sqrt 3)/6 (A-stable, order 3)",
            3,
            None,
            Stability::AStable,
            "Norsett (1974); Crouzeix (1975); Hairer-Wanner II, Section IV.6, Table 6.1",
            "third order, weak damping (R(inf) = 1 - sqrt 3); fixed step or step doubling",
        ),
        build: build_sdirk3,
    },
    MethodEntry {
        info: dirk_info(
            "trbdf2",
            "TR-BDF2 (ESDIRK 2(3), ode23tb)",
            2,
            Some(3),
            Stability::LStable,
            "Bank et al., IEEE Trans. CAD 4 (1985); Hosea & Shampine, Appl. Numer. Math. 20 (1996) 21-37",
            "adaptive, one-step, L-stable: stiff problems at crude to moderate tolerances, problems with discontinuities",
        ),
        build: build_trbdf2,
    },
    MethodEntry {
        info: dirk_info(
            "esdirk43",
            "ESDIRK4(3)6L[2]SA (Kennedy-Carpenter)",
            4,
            Some(3),
            Stability::LStable,
            "Kennedy & Carpenter, Appl. Numer. Math. 44 (2003) 139-181, ARK4(3)6L[2]SA implicit part",
            "adaptive fourth-order L-stable one-step method; stiff problems at moderate tolerances, cheap restarts",
        ),
        build: build_esdirk43,
    },
    MethodEntry {
        info: MethodInfo {
            name: "radau5",
            title: "Radau IIA, order 5 (3-stage collocation)",
            family: Family::ImplicitRk,
            order: 5,
            embedded_order: Some(3),
            implicit: true,
            stability: Stability::LStable,
            stiff: true,
            adaptive: true,
            source: "Hairer & Wanner, Solving ODEs II, Section IV.8 and radau5.f (1996)",
            advice: "reference solver: stiff problems at tight tolerances (down to rtol 1e-12)",
        },
        build: build_radau5,
    },
    MethodEntry {
        info: MethodInfo {
            name: "ode23s",
            title: "modified Rosenbrock 2(3) (MATLAB ode23s)",
            family: Family::Rosenbrock,
            order: 2,
            embedded_order: Some(3),
            implicit: true,
            stability: Stability::LStable,
            stiff: true,
            adaptive: true,
            source: "Shampine & Reichelt, SIAM J. Sci. Comput. 18 (1997) 1-22, Section 3",
            advice: "stiff problems at crude tolerances; one Jacobian and LU per step, no Newton iteration",
        },
        build: build_ode23s,
    },
    MethodEntry {
        info: MethodInfo {
            name: "rodas4",
            title: "Rodas4, stiffly accurate Rosenbrock 4(3)",
            family: Family::Rosenbrock,
            order: 4,
            embedded_order: Some(3),
            implicit: true,
            stability: Stability::LStable,
            stiff: true,
            adaptive: true,
            source: "Hairer & Wanner, Solving ODEs II, Section VI.4 (Table 4.2 ff.) and rodas.f coefficients (METH = 1)",
            advice: "stiff problems at moderate tolerances with a cheap exact Jacobian",
        },
        build: build_rodas4,
    },
];
