//! The metric ids. Each id is used unchanged as the Rust function name, the Python function and
//! plugin symbol, the CLI/config key and the benchmark id; tests check every face exposes every id.

/// How a metric maps rows to outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricKind {
    /// One output per input row (elementwise; runs in streaming queries).
    RowWise,
    /// One output per column or group (`returns_scalar`; use in `select` or `group_by().agg()`).
    Aggregate,
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
}

/// A metric known to every face.
#[derive(Clone, Copy, Debug)]
pub struct MetricInfo {
    /// The snake_case id.
    pub id: &'static str,
    /// Row-wise or aggregate.
    pub kind: MetricKind,
    /// The columns it reads.
    pub inputs: MetricInputs,
    /// One line for `polars-rag metrics` and docs.
    pub summary: &'static str,
    /// The reference implementation reproduced in compatibility mode (empty when the metric is
    /// specified by its documented examples rather than by a library).
    pub reference: &'static str,
}

/// Every metric, in catalogue order.
pub const METRICS: &[MetricInfo] = &[
    MetricInfo {
        id: "quoted_spans",
        kind: MetricKind::RowWise,
        inputs: MetricInputs::AnswerSources,
        summary: "quoted spans of the answer found verbatim in its sources: matched, total, score",
        reference: "Ragas 0.4.3 quoted_spans_alignment (quotes=\"ragas\")",
    },
    MetricInfo {
        id: "citation_alignment",
        kind: MetricKind::Aggregate,
        inputs: MetricInputs::AnswerSources,
        summary: "dataset citation alignment: Σ matched / Σ total quoted spans (0.0 when none)",
        reference: "Ragas 0.4.3 quoted_spans_alignment (quotes=\"ragas\")",
    },
    MetricInfo {
        id: "bleu",
        kind: MetricKind::RowWise,
        inputs: MetricInputs::AnswerReferences,
        summary: "sentence BLEU in [0, 1] (13a tokens, exp smoothing, effective order)",
        reference: "sacrebleu 2.6.0 sentence_bleu / 100",
    },
    MetricInfo {
        id: "corpus_bleu",
        kind: MetricKind::Aggregate,
        inputs: MetricInputs::AnswerReferences,
        summary: "corpus BLEU in [0, 1] over a column or group",
        reference: "sacrebleu 2.6.0 corpus_bleu / 100",
    },
    MetricInfo {
        id: "chrf",
        kind: MetricKind::RowWise,
        inputs: MetricInputs::AnswerReferences,
        summary: "character n-gram F-score in [0, 1] (chrF; word_order=2 gives chrF++)",
        reference: "sacrebleu 2.6.0 sentence_chrf / 100",
    },
    MetricInfo {
        id: "rouge",
        kind: MetricKind::RowWise,
        inputs: MetricInputs::AnswerReferences,
        summary: "ROUGE-1, ROUGE-2, ROUGE-L, ROUGE-Lsum precision / recall / F",
        reference: "rouge-score 0.1.2 RougeScorer (score_multi for several references)",
    },
    MetricInfo {
        id: "exact_match",
        kind: MetricKind::RowWise,
        inputs: MetricInputs::AnswerReferences,
        summary: "1.0 when the answer equals a reference after lowercasing and collapsing whitespace",
        reference: "",
    },
    MetricInfo {
        id: "string_similarity",
        kind: MetricKind::RowWise,
        inputs: MetricInputs::AnswerReferences,
        summary: "1 − normalised edit distance to the closest reference (levenshtein, hamming, jaro, jaro_winkler)",
        reference: "rapidfuzz 3.14.6; Ragas 0.4.3 NonLLMStringSimilarity",
    },
    MetricInfo {
        id: "string_presence",
        kind: MetricKind::RowWise,
        inputs: MetricInputs::AnswerReferences,
        summary: "1.0 when a reference occurs verbatim in the answer",
        reference: "Ragas 0.4.3 StringPresence",
    },
    MetricInfo {
        id: "keyword_coverage",
        kind: MetricKind::RowWise,
        inputs: MetricInputs::AnswerReferences,
        summary: "share of the reference's keywords (names, numbers, content words) found in the answer",
        reference: "",
    },
    MetricInfo {
        id: "number_match",
        kind: MetricKind::RowWise,
        inputs: MetricInputs::AnswerReferences,
        summary: "share of the reference's numbers found in the answer, compared as numbers",
        reference: "",
    },
    MetricInfo {
        id: "answer_completeness",
        kind: MetricKind::RowWise,
        inputs: MetricInputs::AnswerReferences,
        summary: "mean of the length ratio (capped at 1) and keyword coverage",
        reference: "",
    },
    MetricInfo {
        id: "citation_indicators",
        kind: MetricKind::RowWise,
        inputs: MetricInputs::Answer,
        summary: "min(citation phrases found / 3, 1): does the answer say where it comes from",
        reference: "",
    },
    MetricInfo {
        id: "checks",
        kind: MetricKind::RowWise,
        inputs: MetricInputs::AnswerChecks,
        summary: "weighted share of the question's declarative checks passed, and the names of those failed",
        reference: "",
    },
    MetricInfo {
        id: "precision_at_k",
        kind: MetricKind::RowWise,
        inputs: MetricInputs::RetrievedGroundTruth,
        summary: "relevant items in the top k / k",
        reference: "trec_eval P_k (pytrec_eval); datapizza precision_at_k (compat)",
    },
    MetricInfo {
        id: "recall_at_k",
        kind: MetricKind::RowWise,
        inputs: MetricInputs::RetrievedGroundTruth,
        summary: "relevant ground-truth items found in the top k / all relevant",
        reference: "trec_eval recall_k; datapizza recall_at_k (compat)",
    },
    MetricInfo {
        id: "f1_at_k",
        kind: MetricKind::RowWise,
        inputs: MetricInputs::RetrievedGroundTruth,
        summary: "harmonic mean of precision_at_k and recall_at_k",
        reference: "datapizza f1_at_k (compat)",
    },
    MetricInfo {
        id: "hybrid_log_rank",
        kind: MetricKind::RowWise,
        inputs: MetricInputs::RetrievedGroundTruth,
        summary: "alpha * recall + (1 - alpha) * mean log-rank score of the ground truth",
        reference: "datapizza hybrid_log_rank_score (compat)",
    },
    MetricInfo {
        id: "hit_rate_at_k",
        kind: MetricKind::RowWise,
        inputs: MetricInputs::RetrievedGroundTruth,
        summary: "1 when a relevant item is in the top k",
        reference: "trec_eval success_k",
    },
    MetricInfo {
        id: "mrr",
        kind: MetricKind::RowWise,
        inputs: MetricInputs::RetrievedGroundTruth,
        summary: "reciprocal rank of the first relevant item",
        reference: "trec_eval recip_rank",
    },
    MetricInfo {
        id: "average_precision",
        kind: MetricKind::RowWise,
        inputs: MetricInputs::RetrievedGroundTruth,
        summary: "mean of the precisions at each relevant item's rank (MAP per query)",
        reference: "trec_eval map",
    },
    MetricInfo {
        id: "ndcg_at_k",
        kind: MetricKind::RowWise,
        inputs: MetricInputs::RetrievedGroundTruth,
        summary: "normalised discounted cumulative gain at k (graded, linear gains)",
        reference: "trec_eval ndcg_cut_k",
    },
    MetricInfo {
        id: "r_precision",
        kind: MetricKind::RowWise,
        inputs: MetricInputs::RetrievedGroundTruth,
        summary: "precision at R, R = number of relevant items",
        reference: "trec_eval Rprec",
    },
    MetricInfo {
        id: "span_precision",
        kind: MetricKind::RowWise,
        inputs: MetricInputs::RetrievedSpans,
        summary: "retrieved characters inside golden spans / retrieved characters (merged, nothing counted twice)",
        reference: "Chroma chunking_evaluation precision (compat=\"chroma\")",
    },
    MetricInfo {
        id: "span_recall",
        kind: MetricKind::RowWise,
        inputs: MetricInputs::RetrievedSpans,
        summary: "golden characters retrieved / golden characters",
        reference: "Chroma chunking_evaluation recall (compat=\"chroma\")",
    },
    MetricInfo {
        id: "span_iou",
        kind: MetricKind::RowWise,
        inputs: MetricInputs::RetrievedSpans,
        summary: "retrieved ∩ golden characters / retrieved ∪ golden characters",
        reference: "Chroma chunking_evaluation IoU (compat=\"chroma\")",
    },
];

/// Looks a metric up by id.
///
/// ```
/// assert!(polars_rag::registry::find("quoted_spans").is_some());
/// assert!(polars_rag::registry::find("nope").is_none());
/// ```
pub fn find(id: &str) -> Option<&'static MetricInfo> {
    METRICS.iter().find(|m| m.id == id)
}

/// All ids, in catalogue order.
pub fn ids() -> impl Iterator<Item = &'static str> {
    METRICS.iter().map(|m| m.id)
}
