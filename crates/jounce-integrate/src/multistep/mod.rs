//! multistep methods (being filled in; see the integrator-library issue).

use crate::method::MethodEntry;

/// The registered multistep methods.
pub const METHODS: &[MethodEntry] = &[];
