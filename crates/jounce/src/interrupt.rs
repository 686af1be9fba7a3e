//! A stop asked from outside a run: Ctrl-C or SIGTERM in the CLI, a
//! `KeyboardInterrupt` in a Python session, a GUI's stop button.
//!
//! The library installs no signal handler itself (a library must not take
//! over its host's signals); a front end calls [`request_stop`] from its
//! handler. A run in progress sees the request at its next accepted step
//! or output row and ends like a failed one, with the status
//! `"interrupted"`: the rows up to that point and `summary.json` are
//! written, and the summary says when it stopped. [`clear_stop`] makes the
//! next run start afresh.

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether a stop was asked and not yet cleared.
static STOP: AtomicBool = AtomicBool::new(false);

/// The text of the error a run stopped by [`request_stop`] ends with.
pub const INTERRUPTED: &str = "interrupted: the run was stopped on request (Ctrl-C or SIGTERM)";

/// Ask every run in this process to stop at its next step (callable from a
/// signal handler: one atomic store).
pub fn request_stop() {
    STOP.store(true, Ordering::Relaxed);
}

/// Whether a stop has been asked.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Forget an earlier request (before starting another run).
pub fn clear_stop() {
    STOP.store(false, Ordering::Relaxed);
}
