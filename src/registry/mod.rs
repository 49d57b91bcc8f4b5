//! The metric table: every metric described once, as plain Rust. Each id is used unchanged as
//! the Rust function name, the Python function and plugin symbol, the CLI/config key and the
//! benchmark id.
//!
//! A metric is described once per layer:
//!
//! * the table (`registry/table.rs`): its entry, [`MetricInfo`], from which the [`MetricId`]
//!   enum itself is generated; [`MetricId::ALL`] lists them and [`MetricId::info`] gives the
//!   entry;
//! * its options (`registry/options.rs`): one line naming its section's field and type, whose
//!   [`Section`](crate::metrics::Section) impl beside the kernel gives the signature and the
//!   engines' settings;
//! * over Polars columns (`columnar::dispatch`, feature `polars`): one
//!   [`Columnar`](crate::columnar::dispatch::Columnar) arm (the call, its output dtype, its
//!   corpus statistics), which the `Expr` builders, the job and the Python plugin all go
//!   through.
//!
//! A forgotten arm is a compile error. Adding a metric is a checklist in ARCHITECTURE.md
//! ("Adding a metric").
//!
//! ```
//! use polars_rag::registry::{MetricId, MetricKind};
//! let rouge = MetricId::Rouge.info();
//! assert_eq!(rouge.kind, MetricKind::RowWise);
//! assert_eq!(polars_rag::registry::MetricOptions::section_name(MetricId::Rouge), Some("rouge"));
//! assert_eq!("rouge".parse::<MetricId>().unwrap(), MetricId::Rouge);
//! assert!(polars_rag::registry::value_labels(rouge).any(|label| label == "rouge.rougeL.fmeasure"));
//! ```

mod id;
mod options;
mod table;

pub use options::{MetricOptions, SectionReader, SharedOptions};
pub use table::MetricId;

/// How a metric maps rows to outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricKind {
    /// One output per input row (elementwise; runs in streaming queries).
    RowWise,
    /// One output per column or group (`returns_scalar`; use in `select` or `group_by().agg()`).
    Aggregate,
    /// A row-wise building block that `score` does not compute on its own: it has its own
    /// switch or its own command (`locate_quotes`, `extract_quotes`, `embedding_cosine`).
    Tool,
}

/// The columns a metric reads, besides its options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricInputs {
    /// `answer` and its `sources` (passages the system was given).
    AnswerSources,
    /// `answer` and its `references` (one reference answer or several).
    AnswerReferences,
    /// `answer` alone.
    Answer,
    /// `answer` and the question's declarative `checks`.
    AnswerChecks,
    /// The `retrieved` list and the question's ground truth (`relevant_ids`, `relevant_chunks`,
    /// `relevant_spans` or embeddings).
    RetrievedGroundTruth,
    /// The `retrieved` spans and the question's `relevant_spans`.
    RetrievedSpans,
    /// Every chunk of the chunking (`chunks`, usually one list shared by all rows) and the
    /// question's `relevant_spans`.
    ChunkingSpans,
    /// A quote per row and the sources to find it in.
    QuoteSources,
    /// Two embedding columns.
    Embeddings,
    /// A judge's score per item and a human label where there is one (null where not).
    JudgedLabels,
    /// A `claim` and the `cited_span` the answer gave for it.
    ClaimSpan,
    /// The `question` and one `passage` retrieved for it.
    QuestionPassage,
    /// The `question` and the `sources` its nuggets are written from (reference answers or
    /// relevant passages).
    QuestionSources,
    /// The `answer` and the question's `nuggets` (`list[struct{text, importance}]`).
    AnswerNuggets,
    /// The `answer`, a `reference` answer and the `contexts` the system was given.
    AnswerReferenceContexts,
    /// Per nugget of a question, its `importance` (vital / okay) and its `assignment` in the
    /// answer (support / partial_support / not_support).
    NuggetLabels,
    /// Entailment verdicts: per response claim against the reference, per reference claim
    /// against the response, and per claim of each against each retrieved chunk.
    ClaimVerdicts,
    /// The `question`, the `answer` and a `reference` answer.
    QuestionAnswerReference,
    /// The `question`, the `answer` and the `contexts` the system was given.
    QuestionAnswerContexts,
    /// The `question` and the `answer`.
    QuestionAnswer,
    /// The `question`, the retrieved `contexts` in rank order and a `reference` answer.
    QuestionContextsReference,
    /// The `question`, the retrieved `contexts` in rank order and the system's `answer`.
    QuestionContextsAnswer,
}

/// How the per-row statistics of a corpus-level metric are stored in a scores table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatsLayout {
    /// Numeric fields of a struct column.
    Fields(&'static [&'static str]),
    /// A `list[f64]` of this many statistics.
    List(usize),
}

/// A metric computed from per-row statistics summed over the rows (corpus BLEU, citation
/// alignment), so that a comparison can resample it and shards combine exactly.
#[derive(Clone, Copy, Debug)]
pub struct CorpusStats {
    /// The column of a scores table that holds each row's statistics.
    pub column: &'static str,
    /// How the statistics sit in that column.
    pub layout: StatsLayout,
    /// The metric of summed statistics (default options).
    pub of_sums: fn(&[f64]) -> f64,
    /// What the summed statistics say, for a summary line (`(15 of 18 quoted spans found)`).
    pub describe: Option<fn(&[f64]) -> String>,
}

/// A stateful engine a metric needs besides its kernel, built once per job from settings and
/// handed to the columnar call (see the README's architecture section). The judged metrics
/// carry the judge's settings in their options section (`judge`), and their columnar calls get
/// the process's shared [`Judge`](crate::engines::judge) for those settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// An LLM-as-judge client (OpenAI-compatible chat completions, with a persistent cache).
    Judge,
    /// A sentence-embedding model (local or remote).
    Embedder,
    /// Both: a judge writes texts that an embedding model compares (`answer_relevancy`).
    JudgeAndEmbedder,
}

impl Engine {
    /// Whether the metric asks a judge.
    pub fn judges(self) -> bool {
        matches!(self, Engine::Judge | Engine::JudgeAndEmbedder)
    }

    /// Whether the metric embeds texts.
    pub fn embeds(self) -> bool {
        matches!(self, Engine::Embedder | Engine::JudgeAndEmbedder)
    }
}

/// A metric known to every face: one entry of the table (`registry/table.rs`).
#[derive(Clone, Copy, Debug)]
pub struct MetricInfo {
    /// The metric this entry describes.
    pub metric: MetricId,
    /// The snake_case id ([`MetricId::as_str`]).
    pub id: &'static str,
    /// Row-wise, aggregate or tool.
    pub kind: MetricKind,
    /// The columns it reads.
    pub inputs: MetricInputs,
    /// The scalar values of one output row, as paths into its output: `""` is the output itself
    /// (a number), `"rougeL.fmeasure"` a field of a struct. Summaries and `compare` average these.
    pub values: &'static [&'static str],
    /// For a corpus-level metric: where its per-row statistics are and how they combine.
    pub corpus: Option<CorpusStats>,
    /// The engine the metric needs, if any.
    pub engine: Option<Engine>,
    /// One line for `polars-rag metrics` and docs.
    pub summary: &'static str,
    /// The reference implementation reproduced in compatibility mode (empty when the metric is
    /// specified by its documented examples rather than by a library).
    pub reference: &'static str,
    /// What it computes, as a formula in plain text (the reference pages show it).
    pub formula: &'static str,
    /// A call of its Python function, with one option set (`judge` names a `pr.Judge`).
    pub example: &'static str,
    /// A paragraph for its reference page: what it measures, how it reads its inputs, its
    /// edge cases and its compatibility modes.
    pub doc: &'static str,
}

/// Every metric, in catalogue order (the order of [`MetricId::ALL`]).
pub const METRICS: &[MetricInfo] = &{
    let mut table = [MetricId::QuotedSpans.entry(); MetricId::ALL.len()];
    let mut i = 0;
    while i < table.len() {
        table[i] = MetricId::ALL[i].entry();
        // `MetricId::info` indexes this table by discriminant.
        assert!(table[i].metric as usize == i);
        i += 1;
    }
    table
};

/// Looks a metric up by id.
///
/// ```
/// assert!(polars_rag::registry::find("quoted_spans").is_some());
/// assert!(polars_rag::registry::find("nope").is_none());
/// ```
pub fn find(id: &str) -> Option<&'static MetricInfo> {
    id.parse::<MetricId>().ok().map(MetricId::info)
}

/// Looks a metric up by id, or an error listing the known ids.
pub fn require(id: &str) -> crate::Result<&'static MetricInfo> {
    id.parse::<MetricId>().map(MetricId::info)
}

/// All ids, in catalogue order.
pub fn ids() -> impl Iterator<Item = &'static str> {
    METRICS.iter().map(|m| m.id)
}

/// The metrics `score` computes when their inputs are there (row-wise and aggregate ones whose
/// inputs are columns of its tables).
pub fn scored() -> impl Iterator<Item = &'static MetricInfo> {
    METRICS
        .iter()
        .filter(|m| m.kind != MetricKind::Tool && m.inputs.in_score_tables())
}

impl MetricInputs {
    /// Whether `score` finds these inputs in its tables. Human labels are not a column of a
    /// run or a golden table: `ppi_mean` is computed over a scores table joined to labels.
    pub fn in_score_tables(self) -> bool {
        !matches!(
            self,
            MetricInputs::QuoteSources | MetricInputs::Embeddings | MetricInputs::JudgedLabels
        )
    }
}

/// The label of one of a metric's [`MetricInfo::values`]: the id, or `id.path`.
pub fn value_label(id: &str, path: &str) -> String {
    if path.is_empty() {
        id.to_string()
    } else {
        format!("{id}.{path}")
    }
}

/// The labels of a metric's per-row values (`rouge.rouge1.fmeasure`, ...).
pub fn value_labels(info: &MetricInfo) -> impl Iterator<Item = String> + '_ {
    info.values.iter().map(|p| value_label(info.id, p))
}
