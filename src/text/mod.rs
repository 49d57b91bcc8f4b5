//! Text primitives shared by the metrics: whitespace classes, normalisation, quote extraction,
//! the Porter stemmer, the ROUGE tokenizers, BM25 Okapi ranking and difflib's sequence matcher.
//!
//! Nothing here knows about Polars; every function works on borrowed `&str`.

pub mod bm25;
pub mod normalize;
pub mod porter;
pub mod quotes;
pub mod rouge_tokenize;
pub mod sacrebleu;
pub mod sequence_matcher;
