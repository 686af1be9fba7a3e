//! implicit methods (being filled in; see the integrator-library issue).

use crate::method::MethodEntry;

/// The registered implicit methods.
pub const METHODS: &[MethodEntry] = &[];
