//! The Polars side of polars-rag.
//!
//! * `driver`: the only code that touches `Series`: dtype checks with errors that name the
//!   metric and the column, nulls, length-1 broadcast and chunk-parallel evaluation.
//! * [`columns`]: per-metric glue: which inputs a metric takes and the schema of what it returns.
//!   It calls the kernels in [`crate::metrics`] and holds no metric math.
//! * [`dispatch`]: the metric table over columns: every id's columnar call and output dtype, the
//!   one path every face evaluates a metric through.
//! * [`catalogue`]: the metric table as data, for the reference pages.
//! * [`join`]: table plumbing of the golden-dataset job (long-run collapse, golden ⋈ run
//!   with its report), shared by the CLI, the Python functions and Rust users.
//! * [`judged`]: the judged metrics over columns, through the shared judge engine
//!   ([`judged_rag`]: Ragas' judged RAG metrics; [`judged_nuggets`]: nugget creation and
//!   assessment).
//! * [`embedded`]: text columns to embedding columns, and `semantic_similarity`.
//! * [`expr`] (feature `lazy`): native `Expr` builders over [`columns`] and [`dispatch`].

pub mod catalogue;
pub mod columns;
pub mod corpus;
// Input reading shared with the binary and the plugin crate; not part of the library's API.
pub mod dispatch;
#[doc(hidden)]
pub mod driver;
pub mod embedded;
#[cfg(feature = "lazy")]
pub mod expr;
pub mod golden;
pub mod join;
pub mod judged;
pub mod judged_nuggets;
pub mod judged_rag;
pub mod locate;
pub mod retrieval;
#[cfg(feature = "xlsx")]
pub mod sheets;
pub mod verdicts;
