//! I/O errors that name the file.

use std::path::Path;

use thiserror::Error;

/// A file could not be read or written.
#[derive(Debug, Error)]
#[error("{path}: {message}")]
pub struct IoError {
    /// The file.
    pub path: String,
    /// What went wrong.
    pub message: String,
}

impl IoError {
    /// From an `std::io::Error`.
    pub fn new(path: &Path, e: std::io::Error) -> Self {
        Self::msg(path, e.to_string())
    }
    /// From a message.
    pub fn msg(path: &Path, message: String) -> Self {
        Self {
            path: path.display().to_string(),
            message,
        }
    }
}
