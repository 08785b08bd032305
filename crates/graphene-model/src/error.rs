//! One error type for the library, rendered as a human report by the CLI.
//!
//! Readers know the file; the model knows the field. `Error::in_file` joins the two so that every
//! message names the file, then the line and column or the field, then what is wrong.

use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Wraps another error with the file it came from.
    #[error("{file}: {source}")]
    InFile { file: String, source: Box<Error> },
    /// A syntax or type error at a position in a text file.
    #[error("line {line}, column {column}: {message}")]
    Syntax { line: usize, column: usize, message: String },
    /// An error found on one line of a line-oriented file (a JSON-lines log).
    #[error("line {line}: {source}")]
    AtLine { line: usize, source: Box<Error> },
    /// A well-formed value that is not acceptable, named by its field path.
    #[error("{field}: {message}")]
    Field { field: String, message: String },
    /// A dependency cycle, as the stages along one cycle.
    #[error("the DAG has a cycle: {}", .0.join(" -> "))]
    Cycle(Vec<String>),
    /// A task that no machine of the cluster can hold.
    #[error("task {task} demands {demand} but no machine has that much capacity ({capacity})")]
    TaskTooBig { task: String, demand: String, capacity: String },
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Inconsistent flags or options.
    #[error("{0}")]
    Usage(String),
    /// An input larger than a configured limit, refused before anything is allocated for it.
    #[error("{field}: {value} exceeds the limit of {limit} ({hint})")]
    TooLarge { field: String, value: String, limit: String, hint: String },
    /// Work stopped at its deadline or was cancelled.
    #[error("{what} stopped: {}", match .limit { Some(l) => format!("time limit of {} reached", crate::error::secs(*l)), None => "cancelled".to_string() })]
    TimedOut { what: String, limit: Option<std::time::Duration> },
}

/// A duration as the CLI writes it ("10s", "0.5s").
pub fn secs(d: std::time::Duration) -> String {
    format!("{}s", d.as_secs_f64())
}

impl Error {
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Field { field: field.into(), message: message.into() }
    }

    /// A size over its limit; `hint` says how to raise the limit.
    pub fn too_large(
        field: impl Into<String>,
        value: impl std::fmt::Display,
        limit: impl std::fmt::Display,
        hint: impl Into<String>,
    ) -> Error {
        Error::TooLarge { field: field.into(), value: value.to_string(), limit: limit.to_string(), hint: hint.into() }
    }

    /// Places an error on line `line` (1-based) of the file it will be reported in.
    pub fn at_line(self, line: usize) -> Error {
        match self {
            // Work stopped at its deadline is nothing wrong with the input.
            stopped @ Error::TimedOut { .. } => stopped,
            other => Error::AtLine { line, source: Box::new(other) },
        }
    }

    pub fn in_file(self, file: &Path) -> Error {
        match self {
            already @ Error::InFile { .. } => already,
            stopped @ Error::TimedOut { .. } => stopped,
            other => Error::InFile { file: file.display().to_string(), source: Box::new(other) },
        }
    }

    /// Converts a serde_json error into a positioned syntax error.
    pub fn from_json(err: &serde_json::Error) -> Error {
        let message = err.to_string();
        // serde_json appends " at line L column C"; the position is reported separately.
        let message = match message.rfind(" at line ") {
            Some(i) => message[..i].to_string(),
            None => message,
        };
        if err.line() == 0 {
            // No position: a value rejected after it was read (a `try_from` check), whose
            // message starts with the field path.
            return match message.split_once(": ") {
                Some((field, rest)) => Error::field(field, rest),
                None => Error::Usage(message),
            };
        }
        Error::Syntax { line: err.line(), column: err.column(), message }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
