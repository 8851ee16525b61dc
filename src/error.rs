//! Errors shared by the library: every input error names the file, the line and the problem.

use std::fmt;

/// Where an input problem was found: a file (or other source name) and a 1-based line.
///
/// `line == 0` means the problem concerns the input as a whole (e.g. an empty file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file name or other description of the input (`"<stdin>"`, `"generated"`…).
    pub file: String,
    /// 1-based line number, 0 when no single line is to blame.
    pub line: u32,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.file)
        } else {
            write!(f, "{}:{}", self.file, self.line)
        }
    }
}

/// A problem with an input history: malformed syntax, or a history that cannot be built
/// (e.g. two writes of the same value to the same key).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{location}: {message}")]
pub struct InputError {
    /// Where the problem is.
    pub location: Location,
    /// What the problem is, in words.
    pub message: String,
}

impl InputError {
    /// An error at `file:line`.
    pub fn new(file: impl Into<String>, line: u32, message: impl Into<String>) -> Self {
        InputError {
            location: Location {
                file: file.into(),
                line,
            },
            message: message.into(),
        }
    }

    /// The 1-based line of the error (0 for the whole input).
    pub fn line(&self) -> u32 {
        self.location.line
    }
}
