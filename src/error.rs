//! The error of polars-rag's public API: a kind and a message that names the metric or function,
//! the option or column, and the row when one is to blame. It becomes a Polars error in one place
//! (`From<Error> for PolarsError`) and a Python `ValueError` in one place (the plugin crate).
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
}

/// An error of polars-rag's public API: a kind and a message that names the metric or function,
/// the option or column, and the row when one is to blame. It becomes a Polars error through
/// `From<Error> for PolarsError` and a Python `ValueError` in the plugin crate, one place each.
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

#[cfg(feature = "polars")]
impl From<Error> for polars::prelude::PolarsError {
    fn from(e: Error) -> Self {
        use polars::prelude::PolarsError;
        match e.kind {
            ErrorKind::UnknownMetric | ErrorKind::InvalidOptions => {
                PolarsError::InvalidOperation(e.message.into())
            }
            ErrorKind::InvalidInput | ErrorKind::Engine | ErrorKind::InvalidReply => {
                PolarsError::ComputeError(e.message.into())
            }
        }
    }
}

/// The message, for code that still collects problems as text before giving them a kind.
impl From<Error> for String {
    fn from(e: Error) -> Self {
        e.message
    }
}
