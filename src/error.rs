//! The error of polars-rag's public API: a kind and a message that names the metric or function,
//! the option or column, and the row when one is to blame.
//!
//! The kind survives every face. Inside the columnar layer and the job an error travels as a
//! Polars error (`From<Error> for PolarsError`), which carries it whole, so [`Error::from`] a
//! Polars error gives the kind back (and classifies Polars' own errors: a missing file is
//! [`ErrorKind::NotFound`], a missing column [`ErrorKind::InvalidInput`]). The command line turns
//! a kind into its exit status ([`ErrorKind::exit_status`]), the Python package into one class of
//! `polars_rag.exceptions`.
//!
//! ```
//! use polars_rag::metrics::chrf::ChrfOptions;
//! use polars_rag::ErrorKind;
//! let none = ChrfOptions { char_order: 0, word_order: 0, ..ChrfOptions::default() };
//! let e = none.validate("chrf").unwrap_err();
//! assert_eq!(e.kind(), ErrorKind::InvalidOptions);
//! assert!(e.to_string().starts_with("chrf: "));
//! ```

use std::fmt;

/// What kind of problem an [`Error`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// An id that is not in the metric table.
    UnknownMetric,
    /// An option value outside what the metric accepts.
    InvalidOptions,
    /// Input data the metric cannot score (a dtype, a span, a regex, a dimension).
    InvalidInput,
    /// An engine could not run: the judge's budget is spent, its cache cannot be opened, or the
    /// build has no judge engine; or a row could not be judged (its reason).
    Engine,
    /// A judge's reply that does not say what its prompt asks (a row's reason).
    InvalidReply,
    /// A file or folder the job was given does not exist.
    NotFound,
    /// Reading or writing a file failed for another reason than its absence (permissions, a
    /// full disk, a path that is a folder).
    Io,
    /// The judge's budget (`max_calls`, `max_total_tokens`, `max_seconds`) ran out before every
    /// row was judged. What was judged is cached: a larger budget resumes the run.
    BudgetSpent,
    /// Ctrl-C stopped the engine's calls. What was received is cached.
    Interrupted,
    /// Tables that do not belong together: the parts of a job that do not add up to it, a
    /// cache or summary file another version or job wrote.
    Integrity,
}

impl ErrorKind {
    /// The exit status of the `polars-rag` command for an error of this kind: 2 for a problem
    /// with what it was given (usage, input, options, files; as a usage error's), 4 for an engine
    /// that failed (the judge's or embedding model's server, its cache), 5 for a judge's budget
    /// spent, 130 for Ctrl-C (as a shell reports SIGINT). Status 1 (a finding: a failed gate,
    /// `validate` problems) and 3 (a gate that could not decide) are not errors.
    ///
    /// ```
    /// use polars_rag::ErrorKind;
    /// assert_eq!(ErrorKind::NotFound.exit_status(), 2);
    /// assert_eq!(ErrorKind::Engine.exit_status(), 4);
    /// assert_eq!(ErrorKind::BudgetSpent.exit_status(), 5);
    /// assert_eq!(ErrorKind::Interrupted.exit_status(), 130);
    /// ```
    pub fn exit_status(self) -> u8 {
        match self {
            ErrorKind::UnknownMetric
            | ErrorKind::InvalidOptions
            | ErrorKind::InvalidInput
            | ErrorKind::NotFound
            | ErrorKind::Io
            | ErrorKind::Integrity => 2,
            ErrorKind::Engine | ErrorKind::InvalidReply => 4,
            ErrorKind::BudgetSpent => 5,
            ErrorKind::Interrupted => 130,
        }
    }

    /// The kind's name as the Python package's exception classes and the documentation give it
    /// (`invalid_input`, `not_found`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::UnknownMetric => "unknown_metric",
            ErrorKind::InvalidOptions => "invalid_options",
            ErrorKind::InvalidInput => "invalid_input",
            ErrorKind::Engine => "engine",
            ErrorKind::InvalidReply => "invalid_reply",
            ErrorKind::NotFound => "not_found",
            ErrorKind::Io => "io",
            ErrorKind::BudgetSpent => "budget_spent",
            ErrorKind::Interrupted => "interrupted",
            ErrorKind::Integrity => "integrity",
        }
    }
}

/// An error of polars-rag's public API: a kind and a message that names the metric or function,
/// the option or column, and the row when one is to blame. It travels as a Polars error through
/// `From<Error> for PolarsError` without losing its kind, which `Error::from(PolarsError)`
/// gives back.
///
/// ```
/// use polars_rag::metrics::chrf::ChrfOptions;
/// use polars_rag::ErrorKind;
/// let none = ChrfOptions { char_order: 0, word_order: 0, ..ChrfOptions::default() };
/// let e = none.validate("chrf").unwrap_err();
/// assert_eq!(e.kind(), ErrorKind::InvalidOptions);
/// assert!(e.to_string().starts_with("chrf: "));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

/// A result with polars-rag's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An error of `kind` with `message` (which names the metric, the option or column, and the
    /// row where one is to blame).
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
        }
    }

    /// An error of `kind` with `message`.
    pub fn of_kind(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error::new(kind, message)
    }

    /// An [`ErrorKind::InvalidOptions`] error.
    pub fn options(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::InvalidOptions, message)
    }

    /// An [`ErrorKind::InvalidInput`] error.
    pub fn input(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::InvalidInput, message)
    }

    /// An [`ErrorKind::Engine`] error.
    #[cfg(feature = "judge")]
    pub(crate) fn engine(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Engine, message)
    }

    /// An [`ErrorKind::NotFound`] error.
    pub fn not_found(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::NotFound, message)
    }

    /// An [`ErrorKind::Io`] error.
    pub fn io(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Io, message)
    }

    /// An [`ErrorKind::Integrity`] error.
    pub fn integrity(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Integrity, message)
    }

    /// An [`ErrorKind::InvalidReply`] error.
    pub(crate) fn reply(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::InvalidReply, message)
    }

    /// The kind of problem.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// An I/O error's kind as the error's kind: the one place an operating system's error is
/// classified.
fn kind_of_io(error: &std::io::Error) -> ErrorKind {
    match error.kind() {
        std::io::ErrorKind::NotFound => ErrorKind::NotFound,
        std::io::ErrorKind::Interrupted => ErrorKind::Interrupted,
        std::io::ErrorKind::InvalidInput | std::io::ErrorKind::InvalidData => {
            ErrorKind::InvalidInput
        }
        _ => ErrorKind::Io,
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        match e.get_ref().and_then(|inner| inner.downcast_ref::<Error>()) {
            Some(ours) => ours.clone(),
            None => Error::new(kind_of_io(&e), e.to_string()),
        }
    }
}

/// The error travels inside Polars' I/O variant, whose payload keeps it whole (Polars prints
/// just the message), so that [`Error::from`] the Polars error gives its kind back.
#[cfg(feature = "polars")]
impl From<Error> for polars::prelude::PolarsError {
    fn from(e: Error) -> Self {
        polars::prelude::PolarsError::IO {
            error: std::sync::Arc::new(std::io::Error::other(e)),
            msg: None,
        }
    }
}

/// A Polars error as polars-rag's: an error of ours that travelled inside it keeps its kind
/// and message; Polars' own are classified (a missing file is [`ErrorKind::NotFound`], other
/// I/O [`ErrorKind::Io`], everything about the data [`ErrorKind::InvalidInput`]). A context
/// Polars added is kept in the message.
#[cfg(feature = "polars")]
impl From<polars::prelude::PolarsError> for Error {
    fn from(e: polars::prelude::PolarsError) -> Self {
        Error::from(&e)
    }
}

#[cfg(feature = "polars")]
impl From<&polars::prelude::PolarsError> for Error {
    fn from(e: &polars::prelude::PolarsError) -> Self {
        use polars::prelude::PolarsError;
        match e {
            PolarsError::IO { error, msg } => {
                let inner = match error.get_ref().and_then(|i| i.downcast_ref::<Error>()) {
                    Some(ours) => ours.clone(),
                    None => Error::new(kind_of_io(error), error.to_string()),
                };
                match msg {
                    Some(msg) => Error::new(inner.kind, msg.to_string()),
                    None => inner,
                }
            }
            PolarsError::Context { error, .. } => {
                Error::new(Error::from(&**error).kind, e.to_string())
            }
            PolarsError::ExprContext { error, .. } => Error::from(&**error),
            // The data or the query: a column, a dtype, a shape, an operation the data does not
            // allow, a computation on it that failed.
            _ => Error::new(ErrorKind::InvalidInput, e.to_string()),
        }
    }
}

/// A value that is not the JSON it should be, or does not serialise as JSON (a setting, a
/// reply, options): [`ErrorKind::InvalidInput`].
impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::input(e.to_string())
    }
}

/// A message of the command line's own (a missing flag, two settings that exclude each other) as
/// an [`ErrorKind::InvalidInput`] error.
impl From<String> for Error {
    fn from(message: String) -> Self {
        Error::input(message)
    }
}

impl From<&str> for Error {
    fn from(message: &str) -> Self {
        Error::input(message)
    }
}

/// The message, for code that still collects problems as text before giving them a kind.
impl From<Error> for String {
    fn from(e: Error) -> Self {
        e.message
    }
}
