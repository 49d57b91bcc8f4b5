//! # polars-rag
//!
//! RAG-evaluation metrics as columnar kernels, served three ways from one implementation:
//! native Rust functions and Polars expressions, a Python Polars plugin, and the `polars-rag`
//! Parquet CLI.
//!
//! * [`text`]: normalisation and quote extraction (no Polars types).
//! * [`metrics`]: one module per metric family; each metric is a pure function over borrowed
//!   inputs plus a serde `Options` struct shared by every face.
//! * [`registry`]: the metric table: [`registry::MetricId`], each metric's entry and options.
//! * [`engines`]: the LLM judge (HTTP client, reply cache, concurrency, retries, accounting) and
//!   the embedding model.
//! * `columnar` (feature `polars`): the columnar layer, the only code that touches Polars
//!   series (the driver, the dispatch of every metric over columns, joins); with feature `lazy`
//!   also native [`Expr`](::polars::prelude::Expr) builders.
//!
//! Offsets everywhere are Unicode code points, end exclusive, unless an option says otherwise.
//!
//! ```
//! use polars_rag::metrics::citation::{quoted_spans, QuotedSpansOptions};
//! let counts = quoted_spans(
//!     "The report says “revenue grew by 12 percent”.",
//!     &["In 2023 revenue grew by 12 percent."],
//!     &QuotedSpansOptions::default(),
//! );
//! assert_eq!((counts.matched, counts.total), (1, 1));
//! ```

#![deny(missing_docs)]

// Atomic file writes for the binary; not part of the library's API.
#[doc(hidden)]
pub mod atomic;
mod error;
pub mod files;
pub use error::{Error, ErrorKind, Result};
pub mod compare;
pub mod engines;
pub mod metrics;
pub mod registry;
pub mod settings;
pub mod text;
#[cfg(feature = "xlsx")]
pub mod workbook;

#[cfg(feature = "polars")]
pub mod columnar;

#[cfg(feature = "job")]
pub mod job;

#[cfg(feature = "cli")]
pub mod cli;
