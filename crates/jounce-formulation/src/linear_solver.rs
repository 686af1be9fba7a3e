//! The choice of linear solver for the augmented (KKT) system
//! [M Φ_qᵀ; Φ_q 0], `settings.linear_solver` in a model.

use std::fmt;
use std::str::FromStr;

/// How the KKT-based formulations (augmented, projection, index3, ggl,
/// odae) solve [M Φ_qᵀ; Φ_q 0][a; λ] = [r₁; r₂] (see `kkt.rs`), and how
/// the structural methods on `index3` factor their iteration matrix
/// [M + γ'C + β'K, Φ_qᵀ; Φ_q, 0] and the DAE methods (bdf, radau5) on
/// `index3` and `ggl` theirs, G = ∂F/∂y + c ∂F/∂y': `Sparse` declares the
/// pattern to the driver (sparse LU, any M), `Dense` does not, `Auto`
/// from n + m = 40 on (`dae_formulation.rs`); and how `penalty` factors
/// M + αΦ_qᵀΦ_q (sparse LDLᵀ or dense full-pivot LU, `Auto` from
/// n + m = 40 on: `penalty.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LinearSolver {
    /// Sparse when M is diagonal with entries within 10⁸ of each other
    /// and the system has at least 6 coordinates; dense otherwise.
    #[default]
    Auto,
    /// Always the dense LU with full pivoting of the whole KKT matrix.
    Dense,
    /// Always the sparse Schur complement Φ_q M⁻¹ Φ_qᵀ; needs a diagonal,
    /// positive definite M (an error at the start otherwise).
    Sparse,
}

impl LinearSolver {
    /// The names accepted by [`LinearSolver::from_str`].
    pub const NAMES: [&'static str; 3] = ["auto", "dense", "sparse"];

    /// The setting's name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            LinearSolver::Auto => "auto",
            LinearSolver::Dense => "dense",
            LinearSolver::Sparse => "sparse",
        }
    }
}

impl fmt::Display for LinearSolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for LinearSolver {
    type Err = String;

    /// `auto`, `dense` or `sparse`; the error lists them.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(LinearSolver::Auto),
            "dense" => Ok(LinearSolver::Dense),
            "sparse" => Ok(LinearSolver::Sparse),
            other => Err(format!(
                "unknown linear solver '{other}'; expected one of {}",
                LinearSolver::NAMES.join(", ")
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_listed() {
        for n in LinearSolver::NAMES {
            assert_eq!(n.parse::<LinearSolver>().map(|s| s.name()), Ok(n));
        }
        let e = "lu".parse::<LinearSolver>().unwrap_err();
        assert!(
            e.contains("'lu'") && e.contains("auto, dense, sparse"),
            "{e}"
        );
    }
}
