//! Text primitives shared by the metrics: whitespace classes, normalisation and quote extraction.
//!
//! Nothing here knows about Polars; every function works on borrowed `&str`.

pub mod normalize;
pub mod quotes;
