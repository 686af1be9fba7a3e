//! Exponential methods: the Local Linearization Method (`llm.rs`) and the
//! allocation-free matrix exponential it uses (`expm.rs`).
//!
//! Owns the methods that advance by the exact solution of a local linear
//! model through matrix exponentials (Van Loan block form).

pub mod expm;
pub mod llm;

use crate::error::IntegrateError;
use crate::method::{check_params, Family, MethodEntry, MethodInfo, Stability};
use crate::options::SolverOptions;
use crate::stepper::Stepper;

pub use llm::LocalLinearization;

fn build_llm(o: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    check_params("llm", o, &[])?;
    Ok(Box::new(LocalLinearization::new()))
}

/// The registered exponential methods.
pub const METHODS: &[MethodEntry] = &[MethodEntry {
    info: MethodInfo {
        name: "llm",
        title: "Local Linearization Method (exponential, Van Loan block form)",
        family: Family::Exponential,
        order: 2,
        embedded_order: None,
        implicit: false,
        stability: Stability::AStable,
        stiff: true,
        adaptive: true,
        source: "Gil, Sanfelice & Nikravesh, eqs. 1-6 (step), 29-33 (local error estimate), \
                 38-39 (EPS/EPUS control); Jimenez et al. (2002), Appl. Math. Comput. 126:63-81; \
                 Jimenez & Carbonell (2005), Appl. Math. Comput. 171:1282-1295; Van Loan (1978), \
                 IEEE Trans. Autom. Control 23:395-404",
        advice: "explicit but A-stable; exact for linear autonomous systems and piecewise-linear \
                 (penalty contact) dynamics; needs the Jacobian (give an exact one); fixed step \
                 with a fixed step size, else controlled by its local error estimate (EPS or EPUS)",
    },
    build: build_llm,
}];
