//! Text primitives shared by the metrics: whitespace classes, normalisation, quote extraction,
//! the Porter stemmer and the ROUGE tokenizers.
//!
//! Nothing here knows about Polars; every function works on borrowed `&str`.

pub mod normalize;
pub mod porter;
pub mod quotes;
pub mod rouge_tokenize;
pub mod sacrebleu;
