//! Metric kernels: pure functions over borrowed text, each with a serde `Options` struct that the
//! Rust API, the Python plugin and the CLI configuration share (gathered per metric id in
//! [`crate::registry::MetricOptions`]).

pub mod alce;
pub mod bleu;
pub mod calibration;
pub mod chrf;
pub mod citation;
pub mod claim_checks;
pub mod judged;
pub mod lexical;
pub mod locate;
pub mod nuggets;
pub(crate) mod numpy;
pub mod ppi;
pub mod retrieval;
pub mod rouge;
pub mod semantic;
pub mod similarity;
pub mod spans;
pub mod stats;
