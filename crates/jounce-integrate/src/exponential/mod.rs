//! exponential methods (being filled in; see the integrator-library issue).

use crate::method::MethodEntry;

/// The registered exponential methods.
pub const METHODS: &[MethodEntry] = &[];
