//! Text primitives shared by the metrics: whitespace classes, normalisation, quote extraction,
//! the Porter stemmer, the ROUGE tokenizers, BM25 Okapi ranking, difflib's sequence matcher and
//! NLTK's `word_tokenize` for lowercased English, the substring search of one row, and text from
//! the data as the text outputs show it.
//!
//! Nothing here knows about Polars; every function works on borrowed `&str`.

pub mod bm25;
pub mod normalize;
pub mod porter;
pub mod quotes;
pub mod rouge_tokenize;
pub mod sacrebleu;
pub mod search;
pub mod sequence_matcher;
pub(crate) mod shown;
pub mod word_tokenize;
