//! Sparse factorisations with a fixed pattern: symbolic analysis once,
//! numeric phases allocation-free.
//!
//! A caller states the pattern of its matrix once (positions (i, j) of the
//! nonzeros), writes values through the slots the factorisation returns,
//! and refactors and solves as often as it likes without allocation. This
//! crate owns
//!
//! * [`ColumnPattern`]: the compressed-column pattern and its slots, and
//!   [`FixedPattern`], the `dim` / `nnz` / `slot` interface of the
//!   factorisations whose values live in one;
//! * [`SparseLdlt`]: LDLᵀ of a symmetric matrix without pivoting (AMD
//!   ordering, Davis's simplicial LDL), its relative pivot test and its
//!   inertia count;
//! * [`SparseLuOf`] ([`SparseLu`] over `f64`): LU with partial pivoting
//!   (COLAMD ordering, Gilbert–Peierls, KLU-style refactorisation on the
//!   kept pivot sequence), real or complex;
//! * [`LdltOrLu`]: a [`SparseLdlt`] for values that are symmetric positive
//!   definite, the [`SparseLu`] of the same pattern for the others.
//!
//! It knows nothing of mechanics or integration: it is the one copy of the
//! sparse kernels the mechanics (Gram matrices), the formulations (penalty
//! mass matrix), the analyses (static inertia) and the integrators
//! (iteration matrices) share.

pub mod ldlt_or_lu;
pub mod pattern;
pub mod sparse_ldlt;
pub mod sparse_lu;
#[cfg(test)]
mod test_support;

/// The complex scalar of [`SparseLuOf`] (faer's, nalgebra's `Complex<f64>`).
pub use faer::c64;
pub use ldlt_or_lu::{LdltOrLu, SYMMETRY_TOL};
pub use pattern::{ColumnPattern, FixedPattern};
pub use sparse_ldlt::SparseLdlt;
pub use sparse_lu::{LuScalar, SparseLu, SparseLuOf};
