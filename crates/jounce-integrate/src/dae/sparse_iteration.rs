//! The iteration matrix G = ∂F/∂y + c ∂F/∂y' of a DAE method in the
//! sparse form its problem declares ([`DaeProblem::sparsity`]): the
//! entries in the problem's order, the slot of each in a fixed
//! compressed-column pattern with its fill-reducing column ordering
//! ([`SparseLu`], set up once per pattern), and the problem's values of
//! the last evaluation. A refactorisation scatters the values into the
//! pattern (O(nnz)) and refactors numerically; nothing is allocated after
//! set-up.
//!
//! Used by bdf (G, scaled as R G C: [`crate::dae::bdf`]) and radau5
//! (J and M, combined into E1 = J + (γ/h) M and the complex
//! E2 = J + ((α + iβ)/h) M: [`crate::dae::radau`]).

use crate::dae::DaeProblem;
use crate::error::IntegrateError;
use jounce_sparse::c64;
use jounce_sparse::{FixedPattern, SparseLu, SparseLuOf};

/// The sparse iteration matrix of a DAE method (module documentation).
pub(crate) struct SparseIteration {
    /// The problem's entries (i, j), in its order.
    pub(crate) entries: Vec<(usize, usize)>,
    /// The slot of each entry in the LU's values.
    pub(crate) slots: Vec<usize>,
    /// The row of each slot of the LU's values.
    pub(crate) slot_rows: Vec<usize>,
    /// The problem's values of the last evaluation, in entry order (G for
    /// bdf, J = ∂F/∂y for radau5).
    pub(crate) values: Vec<f64>,
    /// ∂F/∂y' in entry order (radau5 only; empty for bdf).
    pub(crate) derivative: Vec<f64>,
    /// The factorisation of the real matrix.
    pub(crate) lu: SparseLu,
    /// The factorisation of a complex matrix in the same pattern
    /// (radau5's E2; `None` for bdf).
    pub(crate) complex: Option<SparseLuOf<c64>>,
}

impl SparseIteration {
    /// The sparse form of `dae`'s iteration matrix, or `None` when the
    /// problem declares no pattern or has no exact iteration matrix (its
    /// difference quotients are dense). Reuses `old` (its ordering and
    /// storage) when the pattern is the same. `with_derivative` keeps
    /// room for ∂F/∂y' and a complex factorisation (radau5).
    ///
    /// # Errors
    /// [`IntegrateError::Unsupported`] when the pattern has an entry
    /// outside the n × n matrix.
    pub(crate) fn set_up(
        dae: &mut dyn DaeProblem,
        old: Option<Self>,
        with_derivative: bool,
        method: &str,
    ) -> Result<Option<Self>, IntegrateError> {
        let n = dae.dim();
        if !dae.has_exact_jacobian() {
            return Ok(None);
        }
        let Some(entries) = dae.sparsity() else {
            return Ok(None);
        };
        if let Some(&(i, j)) = entries.iter().find(|&&(i, j)| i >= n || j >= n) {
            return Err(IntegrateError::Unsupported {
                method: method.into(),
                detail: format!(
                    "the DAE declares an entry ({i}, {j}) of its iteration matrix \
                     outside {n} × {n}"
                ),
            });
        }
        if let Some(s) = old {
            if s.entries == entries && s.lu.dim() == n && s.complex.is_some() == with_derivative {
                return Ok(Some(s));
            }
        }
        let lu = SparseLu::new(n, &entries);
        let slots = entries
            .iter()
            .map(|&(i, j)| {
                lu.slot(i, j)
                    .expect("every declared entry is in the pattern")
            })
            .collect();
        // the pattern is the entries and the diagonal
        let mut slot_rows = vec![0; lu.nnz()];
        for &(i, j) in &entries {
            if let Some(s) = lu.slot(i, j) {
                slot_rows[s] = i;
            }
        }
        for i in 0..n {
            if let Some(s) = lu.slot(i, i) {
                slot_rows[s] = i;
            }
        }
        let len = entries.len();
        let complex = with_derivative.then(|| SparseLuOf::new(n, &entries));
        Ok(Some(Self {
            entries,
            slots,
            slot_rows,
            values: vec![0.0; len],
            derivative: if with_derivative {
                vec![0.0; len]
            } else {
                Vec::new()
            },
            lu,
            complex,
        }))
    }
}
