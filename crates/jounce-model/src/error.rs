//! Errors of model loading. Every error except a failed file read names the
//! file (origin), the 1-based line and the model element, followed by what is
//! wrong, e.g. `examples/x.toml:14: body 'crank': mass must be positive, got -1`.

use std::fmt;

/// Where an error was found: file, 1-based line, element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// File path (or the origin string given to [`crate::from_str`]).
    pub origin: String,
    /// 1-based line number.
    pub line: usize,
    /// The element, e.g. `joint 'crank_pin'`, `[settings.integrator]`;
    /// empty for TOML syntax errors.
    pub element: String,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.element.is_empty() {
            write!(f, "{}:{}", self.origin, self.line)
        } else {
            write!(f, "{}:{}: {}", self.origin, self.line, self.element)
        }
    }
}

/// The candidate closest to `given` (Jaro–Winkler similarity ≥ 0.75 on
/// lower case), as " (did you mean 'x'?)", or nothing.
pub fn did_you_mean<S: AsRef<str>>(given: &str, candidates: impl IntoIterator<Item = S>) -> String {
    let g = given.trim().to_ascii_lowercase();
    let best = candidates
        .into_iter()
        .map(|c| {
            let score = strsim::jaro_winkler(&g, &c.as_ref().to_ascii_lowercase());
            (score, c)
        })
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match best {
        Some((score, c)) if score >= 0.75 => format!(" (did you mean '{}'?)", c.as_ref()),
        _ => String::new(),
    }
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

/// An error loading a model file.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The file could not be read.
    #[error("{origin}: cannot read model file: {message}")]
    Io {
        /// File path.
        origin: String,
        /// OS error message.
        message: String,
    },
    /// The text is not valid TOML.
    #[error("{at}: TOML syntax error: {message}")]
    Syntax {
        /// Location.
        at: Location,
        /// Parser message.
        message: String,
    },
    /// A key that the element does not accept.
    #[error("{at}: unknown key '{key}' (valid keys: {})", list(valid))]
    UnknownKey {
        /// Location (line of the key).
        at: Location,
        /// The key (path for nested tables).
        key: String,
        /// Keys accepted here.
        valid: Vec<String>,
    },
    /// A required key is absent.
    #[error("{at}: missing required key '{key}'")]
    MissingKey {
        /// Location (line of the element's header).
        at: Location,
        /// The key.
        key: String,
    },
    /// A value of the wrong TOML type.
    #[error("{at}: {key} must be {expected}, got {found}")]
    WrongType {
        /// Location (line of the value).
        at: Location,
        /// The key (path).
        key: String,
        /// What was expected, e.g. "a number".
        expected: String,
        /// What was found, e.g. "string \"abc\"".
        found: String,
    },
    /// A value out of its physical or admissible range.
    #[error("{at}: {key} {message}")]
    InvalidValue {
        /// Location (line of the value).
        at: Location,
        /// The key (path).
        key: String,
        /// What is wrong, e.g. "must be positive, got -1".
        message: String,
    },
    /// A `type` (or other enumerated string) that is not recognised.
    #[error(
        "{at}: unknown {what} '{given}' (valid: {}){}",
        list(valid),
        did_you_mean(given, valid)
    )]
    UnknownType {
        /// Location.
        at: Location,
        /// What kind of choice, e.g. "joint type".
        what: String,
        /// The given string.
        given: String,
        /// Valid choices.
        valid: Vec<String>,
    },
    /// A reference to a body, point, joint or function that does not exist.
    #[error(
        "{at}: unknown {kind} '{name}'{scope} (available: {})",
        list(available)
    )]
    UnknownReference {
        /// Location (line of the reference).
        at: Location,
        /// "body", "point", "joint", "function".
        kind: String,
        /// The referenced name.
        name: String,
        /// Where it was looked up, e.g. " on body 'crank'" (may be empty).
        scope: String,
        /// Names that exist.
        available: Vec<String>,
    },
    /// A name used twice in one namespace.
    #[error("{at}: duplicate {kind} name '{name}' (first defined on line {first_line})")]
    DuplicateName {
        /// Location of the second definition.
        at: Location,
        /// Namespace, e.g. "body", "joint/driver".
        kind: String,
        /// The name.
        name: String,
        /// Line of the first definition.
        first_line: usize,
    },
    /// Named time functions that refer to each other in a cycle.
    #[error("{at}: time functions refer to each other in a cycle: {}", cycle.join(" -> "))]
    FunctionCycle {
        /// Location of the reference that closes the cycle.
        at: Location,
        /// The names along the cycle, first repeated at the end.
        cycle: Vec<String>,
    },
    /// Any other inconsistency (joint connecting a body to itself, driver on
    /// a joint that cannot be driven, ...).
    #[error("{at}: {message}")]
    Invalid {
        /// Location.
        at: Location,
        /// What is wrong.
        message: String,
    },
}

impl ModelError {
    /// The location (file, line, element), if the error has one (all but `Io`).
    pub fn location(&self) -> Option<&Location> {
        match self {
            ModelError::Io { .. } => None,
            ModelError::Syntax { at, .. }
            | ModelError::UnknownKey { at, .. }
            | ModelError::MissingKey { at, .. }
            | ModelError::WrongType { at, .. }
            | ModelError::InvalidValue { at, .. }
            | ModelError::UnknownType { at, .. }
            | ModelError::UnknownReference { at, .. }
            | ModelError::DuplicateName { at, .. }
            | ModelError::FunctionCycle { at, .. }
            | ModelError::Invalid { at, .. } => Some(at),
        }
    }

    /// 1-based line of the error, if any.
    pub fn line(&self) -> Option<usize> {
        self.location().map(|l| l.line)
    }

    /// The element named by the error (e.g. `joint 'crank_pin'`), if any.
    pub fn element(&self) -> Option<&str> {
        self.location()
            .map(|l| l.element.as_str())
            .filter(|e| !e.is_empty())
    }

    /// The file (origin) the error refers to.
    pub fn origin(&self) -> &str {
        match self {
            ModelError::Io { origin, .. } => origin,
            _ => self
                .location()
                .map(|l| l.origin.as_str())
                .unwrap_or_default(),
        }
    }
}
