//! The metric table: every metric described once. Each id is used unchanged as the Rust function
//! name, the Python function and plugin symbol, the CLI/config key and the benchmark id.
//!
//! The table itself is [`metric_table!`](crate::metric_table), a list that other code expands
//! with a macro of its own, so that everything a face needs is derived from one entry:
//!
//! * here: [`METRICS`] (id, kind, inputs, options section, summary values, corpus statistics);
//! * [`crate::metrics::MetricOptions`]: one options section per metric, parsing of keyword
//!   arguments and TOML sections, and signatures;
//! * `polars::dispatch` (feature `polars`): the columnar call and output dtype of every id, which the
//!   `Expr` builders, the CLI's `score` and the Python plugin's shims all go through;
//! * the Python plugin crate expands the table into one `#[polars_expr]` shim per id.
//!
//! Adding a metric is: its kernel (in [`crate::metrics`]), its columnar function (in
//! `polars::columns` or beside it), one entry in [`metric_table!`](crate::metric_table), the
//! Python function (whose keyword arguments a test holds against the entry's options), tests.
//!
//! ```
//! use polars_rag::registry::{self, MetricKind};
//! let rouge = registry::find("rouge").unwrap();
//! assert_eq!(rouge.kind, MetricKind::RowWise);
//! assert_eq!(rouge.section, Some("rouge"));
//! assert!(registry::value_labels(rouge).any(|label| label == "rouge.rougeL.fmeasure"));
//! ```

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
    /// A `claim` and the `cited_span` the answer gave for it.
    ClaimSpan,
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

/// A metric known to every face: one entry of [`metric_table!`](crate::metric_table).
#[derive(Clone, Copy, Debug)]
pub struct MetricInfo {
    /// The snake_case id.
    pub id: &'static str,
    /// Row-wise, aggregate or tool.
    pub kind: MetricKind,
    /// The columns it reads.
    pub inputs: MetricInputs,
    /// The options section it reads (a TOML section of `score`'s configuration; the keyword
    /// arguments of its Python function), `None` when it takes no options.
    pub section: Option<&'static str>,
    /// The scalar values of one output row, as paths into its output: `""` is the output itself
    /// (a number), `"rougeL.fmeasure"` a field of a struct. Summaries and `compare` average these.
    pub values: &'static [&'static str],
    /// For a corpus-level metric: where its per-row statistics are and how they combine.
    pub corpus: Option<CorpusStats>,
    /// The engine the metric needs, if any (written `engine: Judge,` after `options:` in its
    /// table entry).
    pub engine: Option<Engine>,
    /// One line for `polars-rag metrics` and docs.
    pub summary: &'static str,
    /// The reference implementation reproduced in compatibility mode (empty when the metric is
    /// specified by its documented examples rather than by a library).
    pub reference: &'static str,
}

/// The metric table. It expands to `$callback! { sections { .. } metrics { .. } }`: the
/// options sections (name: type), then one entry per metric (in catalogue order) with its kind,
/// inputs, options section (`none` for none), summary values, corpus statistics, the columnar
/// call and its output dtype; an entry that needs an engine says so with `engine: Judge,` (or
/// `Embedder`) after its options. The Polars tokens are only expanded by the callbacks of the
/// `polars` feature, so the table is also read without Polars.
#[macro_export]
#[doc(hidden)]
macro_rules! metric_table {
    ($callback:ident) => {
        $callback! {
            sections {
                /// `quoted_spans`, `citation_alignment` and `extract_quotes`.
                quoted_spans: $crate::metrics::citation::QuotedSpansOptions,
                /// `bleu`.
                bleu: $crate::metrics::bleu::BleuOptions,
                /// `corpus_bleu` (sacrebleu's corpus defaults: no effective order).
                corpus_bleu: $crate::metrics::bleu::CorpusBleuOptions,
                /// `chrf`.
                chrf: $crate::metrics::chrf::ChrfOptions,
                /// `corpus_chrf`.
                corpus_chrf: $crate::metrics::chrf::ChrfOptions,
                /// `rouge`.
                rouge: $crate::metrics::rouge::RougeOptions,
                /// `exact_match`.
                exact_match: $crate::metrics::similarity::ExactMatchOptions,
                /// `string_similarity`.
                string_similarity: $crate::metrics::similarity::StringSimilarityOptions,
                /// `citation_indicators`.
                citation_indicators: $crate::metrics::lexical::CitationIndicatorOptions,
                /// `precision_at_k`.
                precision_at_k: $crate::metrics::retrieval::RetrievalOptions,
                /// `recall_at_k`.
                recall_at_k: $crate::metrics::retrieval::RetrievalOptions,
                /// `f1_at_k`.
                f1_at_k: $crate::metrics::retrieval::RetrievalOptions,
                /// `hybrid_log_rank`.
                hybrid_log_rank: $crate::metrics::retrieval::RetrievalOptions,
                /// `hit_rate_at_k`.
                hit_rate_at_k: $crate::metrics::retrieval::RetrievalOptions,
                /// `mrr`.
                mrr: $crate::metrics::retrieval::RetrievalOptions,
                /// `average_precision`.
                average_precision: $crate::metrics::retrieval::RetrievalOptions,
                /// `ndcg_at_k`.
                ndcg_at_k: $crate::metrics::retrieval::RetrievalOptions,
                /// `r_precision`.
                r_precision: $crate::metrics::retrieval::RetrievalOptions,
                /// `span_precision`.
                span_precision: $crate::metrics::spans::SpanOptions,
                /// `span_recall`.
                span_recall: $crate::metrics::spans::SpanOptions,
                /// `span_iou`.
                span_iou: $crate::metrics::spans::SpanOptions,
                /// `span_precision_omega`.
                span_precision_omega: $crate::metrics::spans::SpanOptions,
                /// `locate_quotes` (also the `locate_quotes` column of `score --locate-quotes`).
                locate_quotes: $crate::metrics::locate::LocateOptions,
                /// `citation_support`.
                citation_support: $crate::metrics::judged::citation_support::CitationSupportOptions,
                /// `citation_precision`.
                citation_precision: $crate::metrics::judged::citation_support::CitationSupportOptions,
                /// `answer_match`.
                answer_match: $crate::metrics::judged::answer_match::AnswerMatchOptions,
                /// `split_claims`.
                split_claims: $crate::metrics::judged::claims::SplitClaimsOptions,
                /// `semantic_similarity`.
                semantic_similarity: $crate::metrics::semantic::SemanticSimilarityOptions,
                /// `g_eval`.
                g_eval: $crate::metrics::judged::g_eval::GEvalOptions,
                /// `faithfulness`.
                faithfulness: $crate::metrics::judged::rag::JudgedRagOptions,
                /// `answer_relevancy`.
                answer_relevancy: $crate::metrics::judged::rag::AnswerRelevancyOptions,
                /// `context_precision`.
                context_precision: $crate::metrics::judged::rag::JudgedRagOptions,
                /// `context_utilization`.
                context_utilization: $crate::metrics::judged::rag::JudgedRagOptions,
                /// `context_recall`.
                context_recall: $crate::metrics::judged::rag::JudgedRagOptions,
            }
            metrics {
                quoted_spans {
                    kind: RowWise, inputs: AnswerSources, options: quoted_spans,
                    values: ["score"], corpus: None,
                    summary: "quoted spans of the answer found verbatim in its sources: matched, total, score",
                    reference: "Ragas 0.4.3 quoted_spans_alignment (quotes=\"ragas\")",
                    signature: |o| $crate::metrics::citation::signature(o),
                    output: $crate::polars::columns::quoted_spans_dtype(),
                    column: |o, [answer, sources], parallel| $crate::polars::columns::quoted_spans(answer, sources, o, parallel),
                }
                citation_alignment {
                    kind: Aggregate, inputs: AnswerSources, options: quoted_spans,
                    values: ["citation_alignment_quoted_spans"],
                    corpus: Some($crate::registry::CorpusStats {
                        column: "quoted_spans",
                        layout: $crate::registry::StatsLayout::Fields(&["matched", "total"]),
                        of_sums: $crate::metrics::citation::alignment_of_sums,
                        describe: Some($crate::metrics::citation::describe_sums),
                    }),
                    summary: "dataset citation alignment: Σ matched / Σ total quoted spans (0.0 when none)",
                    reference: "Ragas 0.4.3 quoted_spans_alignment (quotes=\"ragas\")",
                    signature: |o| $crate::metrics::citation::signature(o),
                    output: $crate::polars::columns::citation_alignment_dtype(),
                    column: |o, [answer, sources], parallel| $crate::polars::columns::citation_alignment_series(answer, sources, o, parallel),
                    stats: |o, [answer, sources], parallel| $crate::polars::columns::quoted_spans(answer, sources, o, parallel),
                }
                bleu {
                    kind: RowWise, inputs: AnswerReferences, options: bleu,
                    values: [""], corpus: None,
                    summary: "sentence BLEU in [0, 1] (13a tokens, exp smoothing, effective order)",
                    reference: "sacrebleu 2.6.0 sentence_bleu / 100",
                    signature: |o| $crate::metrics::bleu::signature(o),
                    output: DataType::Float64,
                    column: |o, [answer, references], parallel| $crate::polars::columns::bleu(answer, references, o, parallel),
                }
                corpus_bleu {
                    kind: Aggregate, inputs: AnswerReferences, options: corpus_bleu,
                    values: [""],
                    corpus: Some($crate::registry::CorpusStats {
                        column: "corpus_bleu_stats",
                        layout: $crate::registry::StatsLayout::List($crate::metrics::bleu::CORPUS_STATS),
                        of_sums: $crate::metrics::bleu::corpus_bleu_of_sums,
                        describe: None,
                    }),
                    summary: "corpus BLEU in [0, 1] over a column or group",
                    reference: "sacrebleu 2.6.0 corpus_bleu / 100",
                    signature: |o| $crate::metrics::bleu::signature(&o.0),
                    output: DataType::Float64,
                    column: |o, [answer, references], parallel| $crate::polars::columns::corpus_bleu(answer, references, &o.0, parallel),
                    stats: |o, [answer, references], parallel| $crate::polars::columns::corpus_bleu_stats(answer, references, &o.0, parallel),
                }
                chrf {
                    kind: RowWise, inputs: AnswerReferences, options: chrf,
                    values: [""], corpus: None,
                    summary: "character n-gram F-score in [0, 1] (chrF; word_order=2 gives chrF++)",
                    reference: "sacrebleu 2.6.0 sentence_chrf / 100",
                    signature: |o| $crate::metrics::chrf::signature(o),
                    output: DataType::Float64,
                    column: |o, [answer, references], parallel| $crate::polars::columns::chrf(answer, references, o, parallel),
                }
                corpus_chrf {
                    kind: Aggregate, inputs: AnswerReferences, options: corpus_chrf,
                    values: [""],
                    corpus: Some($crate::registry::CorpusStats {
                        column: "corpus_chrf_stats",
                        layout: $crate::registry::StatsLayout::List($crate::metrics::chrf::CORPUS_STATS),
                        of_sums: $crate::metrics::chrf::corpus_chrf_of_sums,
                        describe: None,
                    }),
                    summary: "corpus chrF in [0, 1] over a column or group (statistics summed, then one F-score)",
                    reference: "sacrebleu 2.6.0 corpus_chrf / 100",
                    signature: |o| $crate::metrics::chrf::signature(o),
                    output: DataType::Float64,
                    column: |o, [answer, references], parallel| $crate::polars::columns::corpus_chrf(answer, references, o, parallel),
                    stats: |o, [answer, references], parallel| $crate::polars::columns::corpus_chrf_stats(answer, references, o, parallel),
                }
                rouge {
                    kind: RowWise, inputs: AnswerReferences, options: rouge,
                    values: ["rouge1.fmeasure", "rouge2.fmeasure", "rougeL.fmeasure", "rougeLsum.fmeasure"],
                    corpus: None,
                    summary: "ROUGE-1, ROUGE-2, ROUGE-L, ROUGE-Lsum precision / recall / F",
                    reference: "rouge-score 0.1.2 RougeScorer (score_multi for several references)",
                    signature: |o| $crate::metrics::rouge::signature(o),
                    output: $crate::polars::columns::rouge_dtype(),
                    column: |o, [answer, references], parallel| $crate::polars::columns::rouge(answer, references, o, parallel),
                }
                exact_match {
                    kind: RowWise, inputs: AnswerReferences, options: exact_match,
                    values: [""], corpus: None,
                    summary: "1.0 when the answer equals a reference after lowercasing and collapsing whitespace (compat=ragas: raw equality)",
                    reference: "Ragas 0.4.3 ExactMatch (compat=ragas)",
                    signature: |o| $crate::metrics::similarity::exact_match_signature(o),
                    output: DataType::Float64,
                    column: |o, [answer, references], parallel| $crate::polars::columns::exact_match(answer, references, o, parallel),
                }
                string_similarity {
                    kind: RowWise, inputs: AnswerReferences, options: string_similarity,
                    values: [""], corpus: None,
                    summary: "1 − normalised edit distance to the closest reference (levenshtein, hamming, jaro, jaro_winkler)",
                    reference: "rapidfuzz 3.14.6; Ragas 0.4.3 NonLLMStringSimilarity",
                    signature: |o| $crate::metrics::similarity::signature(o),
                    output: DataType::Float64,
                    column: |o, [answer, references], parallel| $crate::polars::columns::string_similarity(answer, references, o, parallel),
                }
                semantic_similarity {
                    kind: RowWise, inputs: AnswerReferences, options: semantic_similarity, engine: Embedder,
                    values: [""], corpus: None,
                    summary: "cosine of the answer's and the closest reference's embeddings (1/0 with a threshold)",
                    reference: "Ragas 0.4.3 SemanticSimilarity",
                    signature: |o| $crate::metrics::semantic::signature(o),
                    output: DataType::Float64,
                    column: |o, [answer, references], _parallel| $crate::polars::embedded::semantic_similarity(answer, references, o),
                }
                string_presence {
                    kind: RowWise, inputs: AnswerReferences, options: none,
                    values: [""], corpus: None,
                    summary: "1.0 when a reference occurs verbatim in the answer",
                    reference: "Ragas 0.4.3 StringPresence",
                    signature: |_o| $crate::registry::plain_signature("string_presence"),
                    output: DataType::Float64,
                    column: |_o, [answer, references], parallel| $crate::polars::columns::string_presence(answer, references, parallel),
                }
                keyword_coverage {
                    kind: RowWise, inputs: AnswerReferences, options: none,
                    values: [""], corpus: None,
                    summary: "share of the reference's keywords (names, numbers, content words) found in the answer",
                    reference: "",
                    signature: |_o| $crate::registry::plain_signature("keyword_coverage"),
                    output: DataType::Float64,
                    column: |_o, [answer, references], parallel| $crate::polars::columns::keyword_coverage(answer, references, parallel),
                }
                number_match {
                    kind: RowWise, inputs: AnswerReferences, options: none,
                    values: [""], corpus: None,
                    summary: "share of the reference's numbers found in the answer, compared as numbers",
                    reference: "",
                    signature: |_o| $crate::registry::plain_signature("number_match"),
                    output: DataType::Float64,
                    column: |_o, [answer, references], parallel| $crate::polars::columns::number_match(answer, references, parallel),
                }
                answer_completeness {
                    kind: RowWise, inputs: AnswerReferences, options: none,
                    values: [""], corpus: None,
                    summary: "mean of the length ratio (capped at 1) and keyword coverage",
                    reference: "",
                    signature: |_o| $crate::registry::plain_signature("answer_completeness"),
                    output: DataType::Float64,
                    column: |_o, [answer, references], parallel| $crate::polars::columns::answer_completeness(answer, references, parallel),
                }
                citation_indicators {
                    kind: RowWise, inputs: Answer, options: citation_indicators,
                    values: [""], corpus: None,
                    summary: "min(citation phrases found / 3, 1): does the answer say where it comes from",
                    reference: "",
                    signature: |o| $crate::metrics::lexical::citation_indicators_signature(o),
                    output: DataType::Float64,
                    column: |o, [answer], parallel| $crate::polars::columns::citation_indicators(answer, o, parallel),
                }
                checks {
                    kind: RowWise, inputs: AnswerChecks, options: none,
                    values: ["score"], corpus: None,
                    summary: "weighted share of the question's declarative checks passed, and the names of those failed",
                    reference: "",
                    signature: |_o| $crate::registry::plain_signature("checks"),
                    output: $crate::polars::columns::checks_dtype(),
                    column: |_o, [answer, checks], parallel| $crate::polars::columns::checks(answer, checks, parallel),
                }
                precision_at_k {
                    kind: RowWise, inputs: RetrievedGroundTruth, options: precision_at_k,
                    values: [""], corpus: None,
                    summary: "relevant items in the top k / k",
                    reference: "trec_eval P_k (pytrec_eval); datapizza precision_at_k (compat)",
                    signature: |o| $crate::metrics::retrieval::signature($crate::metrics::retrieval::RankedMetric::PrecisionAtK, o),
                    output: DataType::Float64,
                    column: |o, [retrieved, ground_truth], parallel| $crate::polars::retrieval::ranked_metric($crate::metrics::retrieval::RankedMetric::PrecisionAtK, retrieved, ground_truth, o, parallel),
                }
                recall_at_k {
                    kind: RowWise, inputs: RetrievedGroundTruth, options: recall_at_k,
                    values: [""], corpus: None,
                    summary: "relevant ground-truth items found in the top k / all relevant",
                    reference: "trec_eval recall_k; datapizza recall_at_k (compat)",
                    signature: |o| $crate::metrics::retrieval::signature($crate::metrics::retrieval::RankedMetric::RecallAtK, o),
                    output: DataType::Float64,
                    column: |o, [retrieved, ground_truth], parallel| $crate::polars::retrieval::ranked_metric($crate::metrics::retrieval::RankedMetric::RecallAtK, retrieved, ground_truth, o, parallel),
                }
                f1_at_k {
                    kind: RowWise, inputs: RetrievedGroundTruth, options: f1_at_k,
                    values: [""], corpus: None,
                    summary: "harmonic mean of precision_at_k and recall_at_k",
                    reference: "datapizza f1_at_k (compat)",
                    signature: |o| $crate::metrics::retrieval::signature($crate::metrics::retrieval::RankedMetric::F1AtK, o),
                    output: DataType::Float64,
                    column: |o, [retrieved, ground_truth], parallel| $crate::polars::retrieval::ranked_metric($crate::metrics::retrieval::RankedMetric::F1AtK, retrieved, ground_truth, o, parallel),
                }
                hybrid_log_rank {
                    kind: RowWise, inputs: RetrievedGroundTruth, options: hybrid_log_rank,
                    values: [""], corpus: None,
                    summary: "alpha * recall + (1 - alpha) * mean log-rank score of the ground truth",
                    reference: "datapizza hybrid_log_rank_score (compat)",
                    signature: |o| $crate::metrics::retrieval::signature($crate::metrics::retrieval::RankedMetric::HybridLogRank, o),
                    output: DataType::Float64,
                    column: |o, [retrieved, ground_truth], parallel| $crate::polars::retrieval::ranked_metric($crate::metrics::retrieval::RankedMetric::HybridLogRank, retrieved, ground_truth, o, parallel),
                }
                hit_rate_at_k {
                    kind: RowWise, inputs: RetrievedGroundTruth, options: hit_rate_at_k,
                    values: [""], corpus: None,
                    summary: "1 when a relevant item is in the top k",
                    reference: "trec_eval success_k",
                    signature: |o| $crate::metrics::retrieval::signature($crate::metrics::retrieval::RankedMetric::HitRateAtK, o),
                    output: DataType::Float64,
                    column: |o, [retrieved, ground_truth], parallel| $crate::polars::retrieval::ranked_metric($crate::metrics::retrieval::RankedMetric::HitRateAtK, retrieved, ground_truth, o, parallel),
                }
                mrr {
                    kind: RowWise, inputs: RetrievedGroundTruth, options: mrr,
                    values: [""], corpus: None,
                    summary: "reciprocal rank of the first relevant item",
                    reference: "trec_eval recip_rank",
                    signature: |o| $crate::metrics::retrieval::signature($crate::metrics::retrieval::RankedMetric::Mrr, o),
                    output: DataType::Float64,
                    column: |o, [retrieved, ground_truth], parallel| $crate::polars::retrieval::ranked_metric($crate::metrics::retrieval::RankedMetric::Mrr, retrieved, ground_truth, o, parallel),
                }
                average_precision {
                    kind: RowWise, inputs: RetrievedGroundTruth, options: average_precision,
                    values: [""], corpus: None,
                    summary: "mean of the precisions at each relevant item's rank (MAP per query)",
                    reference: "trec_eval map",
                    signature: |o| $crate::metrics::retrieval::signature($crate::metrics::retrieval::RankedMetric::AveragePrecision, o),
                    output: DataType::Float64,
                    column: |o, [retrieved, ground_truth], parallel| $crate::polars::retrieval::ranked_metric($crate::metrics::retrieval::RankedMetric::AveragePrecision, retrieved, ground_truth, o, parallel),
                }
                ndcg_at_k {
                    kind: RowWise, inputs: RetrievedGroundTruth, options: ndcg_at_k,
                    values: [""], corpus: None,
                    summary: "normalised discounted cumulative gain at k (graded, linear gains)",
                    reference: "trec_eval ndcg_cut_k",
                    signature: |o| $crate::metrics::retrieval::signature($crate::metrics::retrieval::RankedMetric::NdcgAtK, o),
                    output: DataType::Float64,
                    column: |o, [retrieved, ground_truth], parallel| $crate::polars::retrieval::ranked_metric($crate::metrics::retrieval::RankedMetric::NdcgAtK, retrieved, ground_truth, o, parallel),
                }
                r_precision {
                    kind: RowWise, inputs: RetrievedGroundTruth, options: r_precision,
                    values: [""], corpus: None,
                    summary: "precision at R, R = number of relevant items",
                    reference: "trec_eval Rprec",
                    signature: |o| $crate::metrics::retrieval::signature($crate::metrics::retrieval::RankedMetric::RPrecision, o),
                    output: DataType::Float64,
                    column: |o, [retrieved, ground_truth], parallel| $crate::polars::retrieval::ranked_metric($crate::metrics::retrieval::RankedMetric::RPrecision, retrieved, ground_truth, o, parallel),
                }
                span_precision {
                    kind: RowWise, inputs: RetrievedSpans, options: span_precision,
                    values: [""], corpus: None,
                    summary: "retrieved characters inside golden spans / retrieved characters (merged, nothing counted twice)",
                    reference: "Chroma chunking_evaluation precision (compat=\"chroma\")",
                    signature: |o| $crate::metrics::spans::signature(o),
                    output: DataType::Float64,
                    column: |o, [retrieved, golden], parallel| $crate::polars::retrieval::span_metric($crate::polars::retrieval::SpanMetric::Precision, retrieved, golden, o, parallel),
                }
                span_recall {
                    kind: RowWise, inputs: RetrievedSpans, options: span_recall,
                    values: [""], corpus: None,
                    summary: "golden characters retrieved / golden characters",
                    reference: "Chroma chunking_evaluation recall (compat=\"chroma\")",
                    signature: |o| $crate::metrics::spans::signature(o),
                    output: DataType::Float64,
                    column: |o, [retrieved, golden], parallel| $crate::polars::retrieval::span_metric($crate::polars::retrieval::SpanMetric::Recall, retrieved, golden, o, parallel),
                }
                span_iou {
                    kind: RowWise, inputs: RetrievedSpans, options: span_iou,
                    values: [""], corpus: None,
                    summary: "retrieved ∩ golden characters / retrieved ∪ golden characters",
                    reference: "Chroma chunking_evaluation IoU (compat=\"chroma\")",
                    signature: |o| $crate::metrics::spans::signature(o),
                    output: DataType::Float64,
                    column: |o, [retrieved, golden], parallel| $crate::polars::retrieval::span_metric($crate::polars::retrieval::SpanMetric::Iou, retrieved, golden, o, parallel),
                }
                span_precision_omega {
                    kind: RowWise, inputs: ChunkingSpans, options: span_precision_omega,
                    values: [""], corpus: None,
                    summary: "precision the chunking allows: golden characters / characters of the chunks overlapping the golden spans (∪ golden)",
                    reference: "Chroma chunking_evaluation precision Ω (compat=\"chroma\")",
                    signature: |o| $crate::metrics::spans::signature(o),
                    output: DataType::Float64,
                    column: |o, [chunks, golden], parallel| $crate::polars::retrieval::span_metric($crate::polars::retrieval::SpanMetric::PrecisionOmega, chunks, golden, o, parallel),
                }
                citation_support {
                    kind: RowWise, inputs: ClaimSpan, options: citation_support, engine: Judge,
                    values: ["fully_supported"], corpus: None,
                    summary: "LLM judge: is the claim fully, partially or not supported by its cited span; phrase verified, failure modes flagged",
                    reference: "",
                    signature: |o| $crate::metrics::judged::citation_support::signature(o),
                    output: $crate::polars::judged::citation_support_dtype(),
                    column: |o, [claim, cited_span], _parallel| $crate::polars::judged::citation_support(claim, cited_span, o),
                }
                citation_precision {
                    kind: Aggregate, inputs: ClaimSpan, options: citation_precision, engine: Judge,
                    values: ["citation_precision"],
                    corpus: Some($crate::registry::CorpusStats {
                        column: "citation_support",
                        layout: $crate::registry::StatsLayout::Fields(&["fully_supported", "partially_supported", "not_supported"]),
                        of_sums: $crate::metrics::judged::citation_support::precision_of_sums,
                        describe: Some($crate::metrics::judged::citation_support::describe_sums),
                    }),
                    summary: "share of judged (claim, cited_span) pairs fully supported (partial support counted separately)",
                    reference: "",
                    signature: |o| $crate::metrics::judged::citation_support::signature(o),
                    output: $crate::polars::judged::citation_precision_dtype(),
                    column: |o, [claim, cited_span], _parallel| $crate::polars::judged::citation_precision(claim, cited_span, o),
                    stats: |o, [claim, cited_span], _parallel| $crate::polars::judged::citation_support(claim, cited_span, o),
                }
                answer_match {
                    kind: RowWise, inputs: QuestionAnswerReference, options: answer_match, engine: Judge,
                    values: ["score"], corpus: None,
                    summary: "LLM judge: does the answer match the reference answer to the question (match, reasoning)",
                    reference: "datapizza LLM-as-judge (is_matching, reasoning)",
                    signature: |o| $crate::metrics::judged::answer_match::signature(o),
                    output: $crate::polars::judged::answer_match_dtype(),
                    column: |o, [question, answer, reference], _parallel| $crate::polars::judged::answer_match(question, answer, reference, o),
                }
                g_eval {
                    kind: RowWise, inputs: QuestionAnswerReference, options: g_eval, engine: Judge,
                    values: ["score"], corpus: None,
                    summary: "LLM rubric judge (G-Eval) on your criteria: an integer score mapped to [0, 1], probability-weighted when the server gives log-probabilities",
                    reference: "G-Eval (Liu et al., 2023); DeepEval GEval",
                    signature: |o| $crate::metrics::judged::g_eval::signature(o),
                    output: $crate::polars::judged::g_eval_dtype(),
                    column: |o, [question, answer, reference], _parallel| $crate::polars::judged::g_eval(question, answer, reference, o),
                }
                faithfulness {
                    kind: RowWise, inputs: QuestionAnswerContexts, options: faithfulness, engine: Judge,
                    values: ["score"], corpus: None,
                    summary: "LLM judge: share of the answer's statements that its contexts support (statements, verdicts, reasons)",
                    reference: "Ragas 0.4.3 Faithfulness",
                    signature: |o| $crate::metrics::judged::rag::signature($crate::metrics::judged::rag::RagMetric::Faithfulness, o),
                    output: $crate::polars::judged_rag::rag_dtype($crate::metrics::judged::rag::RagMetric::Faithfulness),
                    column: |o, [question, answer, contexts], _parallel| $crate::polars::judged_rag::faithfulness(question, answer, contexts, o),
                }
                answer_relevancy {
                    kind: RowWise, inputs: QuestionAnswer, options: answer_relevancy, engine: JudgeAndEmbedder,
                    values: ["score"], corpus: None,
                    summary: "LLM judge + embeddings: mean cosine of questions the answer would answer with the question (0 when noncommittal)",
                    reference: "Ragas 0.4.3 AnswerRelevancy",
                    signature: |o| $crate::metrics::judged::rag::answer_relevancy_signature(o),
                    output: $crate::polars::judged_rag::rag_dtype($crate::metrics::judged::rag::RagMetric::AnswerRelevancy),
                    column: |o, [question, answer], _parallel| $crate::polars::judged_rag::answer_relevancy(question, answer, o),
                }
                context_precision {
                    kind: RowWise, inputs: QuestionContextsReference, options: context_precision, engine: Judge,
                    values: ["score"], corpus: None,
                    summary: "LLM judge: average precision of the retrieved contexts judged useful for reaching the reference",
                    reference: "Ragas 0.4.3 ContextPrecision (with reference)",
                    signature: |o| $crate::metrics::judged::rag::signature($crate::metrics::judged::rag::RagMetric::ContextPrecision, o),
                    output: $crate::polars::judged_rag::rag_dtype($crate::metrics::judged::rag::RagMetric::ContextPrecision),
                    column: |o, [question, contexts, reference], _parallel| $crate::polars::judged_rag::context_precision($crate::metrics::judged::rag::RagMetric::ContextPrecision, question, contexts, reference, o),
                }
                context_utilization {
                    kind: RowWise, inputs: QuestionContextsAnswer, options: context_utilization, engine: Judge,
                    values: ["score"], corpus: None,
                    summary: "LLM judge: average precision of the retrieved contexts judged useful for the answer given (no reference)",
                    reference: "Ragas 0.4.3 ContextUtilization (context precision without reference)",
                    signature: |o| $crate::metrics::judged::rag::signature($crate::metrics::judged::rag::RagMetric::ContextUtilization, o),
                    output: $crate::polars::judged_rag::rag_dtype($crate::metrics::judged::rag::RagMetric::ContextUtilization),
                    column: |o, [question, contexts, answer], _parallel| $crate::polars::judged_rag::context_precision($crate::metrics::judged::rag::RagMetric::ContextUtilization, question, contexts, answer, o),
                }
                context_recall {
                    kind: RowWise, inputs: QuestionContextsReference, options: context_recall, engine: Judge,
                    values: ["score"], corpus: None,
                    summary: "LLM judge: share of the reference's statements attributable to the retrieved contexts",
                    reference: "Ragas 0.4.3 ContextRecall",
                    signature: |o| $crate::metrics::judged::rag::signature($crate::metrics::judged::rag::RagMetric::ContextRecall, o),
                    output: $crate::polars::judged_rag::rag_dtype($crate::metrics::judged::rag::RagMetric::ContextRecall),
                    column: |o, [question, contexts, reference], _parallel| $crate::polars::judged_rag::context_recall(question, contexts, reference, o),
                }
                split_claims {
                    kind: Tool, inputs: Answer, options: split_claims, engine: Judge,
                    values: [], corpus: None,
                    summary: "the atomic claims of an answer, by the judge or by rules (explode, then citation_support)",
                    reference: "",
                    signature: |o| $crate::metrics::judged::claims::signature(o),
                    output: $crate::polars::judged::split_claims_dtype(),
                    column: |o, [answer], _parallel| $crate::polars::judged::split_claims(answer, o),
                }
                locate_quotes {
                    kind: Tool, inputs: QuoteSources, options: locate_quotes,
                    values: [], corpus: None,
                    summary: "where a quote is in its sources: file, offsets, BM25 and match ratios, context",
                    reference: "soak 9c164e87 VerifyQuotes; rank_bm25 0.2.2 (compat=\"soak\")",
                    signature: |o| $crate::metrics::locate::signature(o),
                    output: $crate::polars::locate::locate_quotes_dtype(),
                    column: |o, [quotes, sources], parallel| $crate::polars::locate::locate_quotes(quotes, sources, o, parallel),
                }
                extract_quotes {
                    kind: Tool, inputs: Answer, options: quoted_spans,
                    values: [], corpus: None,
                    summary: "the quoted spans of an answer, as quoted_spans extracts them",
                    reference: "Ragas 0.4.3 quoted_spans_alignment (quotes=\"ragas\")",
                    signature: |o| $crate::metrics::citation::signature(o),
                    output: DataType::List(Box::new(DataType::String)),
                    column: |o, [answer], _parallel| $crate::polars::locate::extract_quotes(answer, o),
                }
                embedding_cosine {
                    kind: Tool, inputs: Embeddings, options: none,
                    values: [], corpus: None,
                    summary: "cosine similarity of two embedding columns (0.0 for a zero vector)",
                    reference: "",
                    signature: |_o| $crate::registry::plain_signature("embedding_cosine"),
                    output: DataType::Float64,
                    column: |_o, [a, b], _parallel| $crate::polars::locate::embedding_cosine(a, b),
                }
            }
        }
    };
}

/// Expands the table into [`METRICS`].
macro_rules! metric_infos {
    (
        sections { $($sections:tt)* }
        metrics { $(
            $id:ident {
                kind: $kind:ident, inputs: $inputs:ident, options: $section:ident,
                $(engine: $engine:ident,)?
                values: [$($value:literal),*], corpus: $corpus:expr_2021,
                summary: $summary:literal, reference: $reference:literal,
                $($rest:tt)*
            }
        )* }
    ) => {
        /// Every metric, in catalogue order.
        pub const METRICS: &[MetricInfo] = &[$(
            MetricInfo {
                id: stringify!($id),
                kind: MetricKind::$kind,
                inputs: MetricInputs::$inputs,
                section: section_name!($section),
                values: &[$($value),*],
                corpus: $corpus,
                engine: engine_of!($($engine)?),
                summary: $summary,
                reference: $reference,
            },
        )*];
    };
}

/// The engine of a table entry, `None` when it names none.
macro_rules! engine_of {
    () => {
        None
    };
    ($engine:ident) => {
        Some(Engine::$engine)
    };
}

/// The name of an options section, `None` for `none`.
macro_rules! section_name {
    (none) => {
        None
    };
    ($section:ident) => {
        Some(stringify!($section))
    };
}

metric_table!(metric_infos);

/// The signature of a metric without options: its id and the library version.
pub(crate) fn plain_signature(id: &str) -> String {
    format!("{id}|version:polars-rag-{}", env!("CARGO_PKG_VERSION"))
}

/// Looks a metric up by id.
///
/// ```
/// assert!(polars_rag::registry::find("quoted_spans").is_some());
/// assert!(polars_rag::registry::find("nope").is_none());
/// ```
pub fn find(id: &str) -> Option<&'static MetricInfo> {
    METRICS.iter().find(|m| m.id == id)
}

/// Looks a metric up by id, or an error listing the known ids.
pub fn require(id: &str) -> crate::Result<&'static MetricInfo> {
    find(id).ok_or_else(|| {
        let known: Vec<&str> = ids().collect();
        crate::Error::new(
            crate::ErrorKind::UnknownMetric,
            format!("unknown metric '{id}'; known metrics: {}", known.join(", ")),
        )
    })
}

/// All ids, in catalogue order.
pub fn ids() -> impl Iterator<Item = &'static str> {
    METRICS.iter().map(|m| m.id)
}

/// The metrics `score` computes when their inputs are there (row-wise and aggregate ones).
pub fn scored() -> impl Iterator<Item = &'static MetricInfo> {
    METRICS.iter().filter(|m| m.kind != MetricKind::Tool)
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
