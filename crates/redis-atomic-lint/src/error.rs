//! Why a source could not be linted: one typed error per cause, each printing as one line that
//! names the file (and, where there is one, the line and column) the way compilers do, so an
//! editor or CI log can jump to it.

use std::fmt;

/// A file or source that could not be linted. Its `Display` is one line, `file:line:col: what`
/// (or `file: what` when the file itself is unreadable).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LintError {
    /// The file (or a fragment it includes) is not a regular file, is over 1 MiB, or cannot be
    /// read.
    #[error("{path}: {reason}")]
    Read {
        /// The file.
        path: String,
        /// Why it was not read.
        reason: String,
    },
    /// A folder given to lint could not be listed.
    #[error("{reason}")]
    List {
        /// Why (names the folder).
        reason: String,
    },
    /// An `--@include` line names no fragment, a fragment includes another, or a name could leave
    /// `include/`.
    #[error("{}", Located(file, *line, 1, message))]
    Include {
        /// The including file.
        file: String,
        /// Its 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// Nested deeper than Redis' own Lua accepts (see [`crate::depth`]): refused before parsing.
    #[error("{}", Located(file, *line, 1, message))]
    TooDeep {
        /// The file (an included fragment when the bound was passed inside one).
        file: String,
        /// The 1-based line where the bound was passed.
        line: usize,
        /// Which bound.
        message: String,
    },
    /// Not Lua 5.1.
    #[error("{file}:{line}:{col}: parse error: {message}")]
    Parse {
        /// The file (an included fragment when the error is inside one).
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// The parser's message.
        message: String,
    },
    /// The paths given hold no `*.lua` file: nothing was linted (never "clean").
    #[error("no *.lua file in the given paths: nothing linted")]
    NothingToLint,
    /// The linter itself failed (its thread could not start, or it panicked on this source).
    #[error("{file}: {reason}")]
    Internal {
        /// The source being linted.
        file: String,
        /// What failed.
        reason: String,
    },
}

/// `file:line:col: message`.
struct Located<'a>(&'a str, usize, usize, &'a str);

impl fmt::Display for Located<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: {}", self.0, self.1, self.2, self.3)
    }
}
