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

/// What the library needs to know about a metric's options section, implemented beside the
/// section's type so that a metric's options are described once, where its kernel is. The
/// registry gathers the sections per metric id and reads everything else through this trait.
pub trait Section: std::any::Any + std::fmt::Debug + Send + Sync {
    /// The signature of the metric `id` under these options, in sacrebleu's style
    /// (`key:value|...`), ending with the version whose numbers it reproduces. `id` tells the
    /// metrics that share a section type (the ranked-list metrics, the judged RAG metrics) apart.
    fn signature(&self, id: &str) -> String;

    /// The judge settings of a judged metric's section (`None` for the others).
    fn judge_settings(&mut self) -> Option<&mut crate::engines::judge::JudgeSettings> {
        None
    }

    /// The embedding settings of a section whose metric embeds under these options.
    fn embed_settings(&mut self) -> Option<&mut crate::engines::embed::EmbedSettings> {
        None
    }
}

/// The signature of a metric without options: its id and the library's version.
pub fn plain_signature(id: &str) -> String {
    format!("{id}|version:polars-rag-{}", env!("CARGO_PKG_VERSION"))
}
