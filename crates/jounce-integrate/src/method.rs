//! The method registry: every integrator by name, with the facts
//! `jounce methods` prints and a builder for its stepper.
//!
//! Each family (explicit/, multistep/, implicit/, structural/, exponential/)
//! exports its own `METHODS` list; this module only concatenates them, so
//! that adding a method touches its family's files alone.

use crate::error::IntegrateError;
use crate::options::SolverOptions;
use crate::problem::ProblemForm;
use crate::stepper::Stepper;

/// Broad class of a method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Explicit Runge-Kutta.
    ExplicitRk,
    /// Linear multistep (Adams, BDF, NDF, predictor-corrector).
    Multistep,
    /// Implicit Runge-Kutta (SDIRK, collocation, implicit midpoint/trapezoid).
    ImplicitRk,
    /// Rosenbrock (linearly implicit).
    Rosenbrock,
    /// Second-order structural family (Newmark, HHT, generalized-α).
    Structural,
    /// Exponential (local linearization).
    Exponential,
}

/// Linear stability class on y' = λ y.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stability {
    /// A bounded stability region (explicit methods, Adams).
    Conditional,
    /// A(α)-stable with the given angle in degrees (BDF3-5, NDF).
    AAlpha(f64),
    /// A-stable: |R(z)| ≤ 1 on Re z ≤ 0.
    AStable,
    /// L-stable: A-stable and R(∞) = 0.
    LStable,
}

impl Stability {
    /// Short label for tables.
    pub fn label(&self) -> String {
        match self {
            Stability::Conditional => "conditional".into(),
            Stability::AAlpha(a) => format!("A({a:.0}°)"),
            Stability::AStable => "A-stable".into(),
            Stability::LStable => "L-stable".into(),
        }
    }
}

/// What is known about a method.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MethodInfo {
    /// Registry name, as used in model files and on the command line.
    pub name: &'static str,
    /// Full name.
    pub title: &'static str,
    /// Family.
    pub family: Family,
    /// Order of the propagated solution (for variable-order methods, the maximum).
    pub order: u32,
    /// Order of the embedded error estimator, if any.
    pub embedded_order: Option<u32>,
    /// Implicit (needs Newton iteration or linear solves).
    pub implicit: bool,
    /// Linear stability class.
    pub stability: Stability,
    /// Suited to stiff problems.
    pub stiff: bool,
    /// Has error-controlled variable steps.
    pub adaptive: bool,
    /// Where the coefficients come from (paper, table, page).
    pub source: &'static str,
    /// When to use it.
    pub advice: &'static str,
}

impl MethodInfo {
    /// The problem forms this method integrates: the structural family the
    /// second-order form and, for members whose equilibrium is enforced at
    /// the step's end or inside it (θ = 1: newmark, hht, generalized_alpha,
    /// midpoint_rule), the index-3 DAE; bdf and radau5 the first-order ODE
    /// and the implicit DAE F(t, y, y') = 0 (index-3 or GGL); bdf and ndf
    /// also the overdetermined DAE (an ODE with invariants, solved in the
    /// least-squares sense, [`crate::overdetermined`]); every other method
    /// the first-order ODE.
    pub fn accepts(&self) -> &'static [ProblemForm] {
        match (self.family, self.name) {
            (Family::Structural, "wilson" | "collocation") => &[ProblemForm::SecondOrder],
            (Family::Structural, _) => &[
                ProblemForm::SecondOrder,
                ProblemForm::ConstrainedSecondOrder,
                ProblemForm::AugmentedLagrangian,
            ],
            (_, "bdf") => &[
                ProblemForm::FirstOrder,
                ProblemForm::Dae,
                ProblemForm::Overdetermined,
            ],
            (_, "ndf") => &[ProblemForm::FirstOrder, ProblemForm::Overdetermined],
            (_, "radau5") => &[ProblemForm::FirstOrder, ProblemForm::Dae],
            _ => &[ProblemForm::FirstOrder],
        }
    }
}

/// A registered method: its facts and how to build its stepper from options.
pub struct MethodEntry {
    /// Facts.
    pub info: MethodInfo,
    /// Builds a stepper; rejects unknown or invalid parameters.
    pub build: fn(&SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError>,
}

/// Every registered method, family by family.
pub fn all() -> Vec<&'static MethodEntry> {
    let families: [&'static [MethodEntry]; 5] = [
        crate::explicit::METHODS,
        crate::multistep::METHODS,
        crate::implicit::METHODS,
        crate::structural::METHODS,
        crate::exponential::METHODS,
    ];
    families.iter().flat_map(|f| f.iter()).collect()
}

/// The names of [`all`], in its order.
pub fn names() -> Vec<&'static str> {
    all().iter().map(|m| m.info.name).collect()
}

/// The command line help of `--method`: the registered names.
pub fn help() -> String {
    format!(
        "Integrator, overriding the model file; one of: {} (`jounce methods` describes them)",
        names().join(", ")
    )
}

/// The method registered under `name`, ignoring ASCII case and
/// surrounding blanks (`RK4`, ` Radau5` find rk4, radau5).
///
/// # Errors
/// [`IntegrateError::BadMethod`] naming the known methods.
pub fn find(name: &str) -> Result<&'static MethodEntry, IntegrateError> {
    let all = all();
    let key = name.trim();
    all.iter()
        .copied()
        .find(|m| m.info.name.eq_ignore_ascii_case(key))
        .ok_or_else(|| {
            let names: Vec<&str> = all.iter().map(|m| m.info.name).collect();
            IntegrateError::BadMethod(format!(
                "unknown integrator '{name}'; known: {}",
                names.join(", ")
            ))
        })
}

/// Build the stepper of method `name` with `opts`.
pub fn build(name: &str, opts: &SolverOptions) -> Result<Box<dyn Stepper>, IntegrateError> {
    (find(name)?.build)(opts)
}

/// Reject parameters a method does not know (helper for builders).
pub fn check_params(
    method: &str,
    opts: &SolverOptions,
    known: &[&str],
) -> Result<(), IntegrateError> {
    for k in opts.params.keys() {
        if !known.contains(&k.as_str()) {
            return Err(IntegrateError::BadMethod(format!(
                "integrator '{method}' has no parameter '{k}'{}",
                if known.is_empty() {
                    String::new()
                } else {
                    format!(" (it accepts: {})", known.join(", "))
                }
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_findable() {
        let all = all();
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a.info.name, b.info.name, "duplicate method name");
            }
            assert_eq!(find(a.info.name).unwrap().info.name, a.info.name);
            assert!(!a.info.source.is_empty(), "{} cites no source", a.info.name);
        }
        assert!(find("no-such-method").is_err());
        assert_eq!(find("RK4").unwrap().info.name, "rk4");
        assert_eq!(find(" Radau5 ").unwrap().info.name, "radau5");
    }
}
