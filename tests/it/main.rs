//! The integration tests of polars-rag, one test crate with a module per area.
//!
//! One crate rather than a binary per file: under `--features cli` every test binary links
//! Polars, so one binary links it once. Run one area with a filter on its module path, e.g.
//! `cargo test --test it judge::` or `cargo test --features cli --test it compare_faces::`.
//!
//! The modules that need the columnar layer, the judge or the embedding model carry their own
//! `#![cfg(feature = ...)]` and vanish from a kernels-only build.

mod common;
mod fake_judge;
mod parts;

mod cache_merge;
mod calibrate;
mod cli_hostile;
// The simulations need no Polars, but the kernels-only pass would only run them twice.
#[cfg(feature = "cli")]
mod cluster_simulations;
mod compare_faces;
mod custom_judge;
mod embed;
mod engine_hostile;
mod error_kinds;
mod faces;
#[cfg(feature = "cli")]
mod family_simulations;
mod fidelity_edges;
mod fuzz_kernels;
mod hardening;
mod judge;
mod judge_cli;
mod labels_hostile;
mod locate_default;
mod locate_faces;
mod parity_agreement;
mod parity_alce;
mod parity_bm25_difflib;
mod parity_claims;
mod parity_judged;
mod parity_locate;
mod parity_ppi;
mod parity_quoted_spans;
mod parity_retrieval;
mod parity_rouge;
mod parity_rouge_generated;
mod parity_sacrebleu;
mod parity_verdicts;
mod parity_word_tokenize;
#[cfg(feature = "cli")]
mod plan_simulations;
mod properties;
mod retrieval_faces;
mod score_batches;
mod score_job;
mod stats;
mod tables;
mod vectors;
mod workbook_hostile;
