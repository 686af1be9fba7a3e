//! structural methods (being filled in; see the integrator-library issue).

use crate::method::MethodEntry;

/// The registered structural methods.
pub const METHODS: &[MethodEntry] = &[];
