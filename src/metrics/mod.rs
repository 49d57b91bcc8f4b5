//! Metric kernels: pure functions over borrowed text, each with a serde `Options` struct that the
//! Rust API, the Python plugin and the CLI configuration share.

pub mod bleu;
pub mod chrf;
pub mod citation;
pub mod rouge;
