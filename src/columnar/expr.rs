//! Native Polars `Expr` builders (feature `lazy`). Each builder wraps the columnar function of
//! [`super::columns`] that the Python plugin and the CLI also call, so all faces agree.
//!
//! ```
//! use polars::prelude::*;
//! use polars_rag::metrics::citation::QuotedSpansOptions;
//! use polars_rag::columnar::expr;
//!
//! let df = df!(
//!     "answer" => ["It is “the capital of France”.", "No quotes."],
//!     "source" => ["Paris is the capital of France.", "Anything."],
//! )
//! .unwrap();
//! let out = df
//!     .lazy()
//!     .select([expr::quoted_spans(col("answer"), col("source"), QuotedSpansOptions::default())
//!         .struct_()
//!         .field_by_name("score")])
//!     .collect()
//!     .unwrap();
//! let score = out.column("score").unwrap().f64().unwrap();
//! assert_eq!(score.get(0), Some(1.0));
//! assert_eq!(score.get(1), None);
//! ```
//!
//! Any metric of the table by its id, with its options section (the README's Rust example):
//!
//! ```
//! use polars::prelude::*;
//! use polars_rag::columnar::expr;
//! use polars_rag::registry::{MetricId, MetricOptions};
//!
//! let df = df!("answer" => ["the cat sat"], "reference" => ["the cat sat"])?;
//! let rouge = expr::metric(MetricId::Rouge, [col("answer"), col("reference")], &MetricOptions::default());
//! let scores = df.lazy().select([rouge]).collect()?;
//! # let rouge_l = scores.column("rouge")?.as_materialized_series().struct_()?.field_by_name("rougeL")?;
//! # assert_eq!(rouge_l.struct_()?.field_by_name("fmeasure")?.f64()?.get(0), Some(1.0));
//! # Ok::<(), PolarsError>(())
//! ```

use polars::prelude::*;

use super::columns;
use super::dispatch;
use super::embedded;
use super::locate;
use super::retrieval::{self, SpanMetric};
use crate::engines::embed::EmbedSettings;
use crate::metrics::bleu::BleuOptions;
use crate::metrics::chrf::ChrfOptions;
use crate::metrics::citation::QuotedSpansOptions;
use crate::metrics::judged::custom::CustomJudgeOptions;
use crate::metrics::lexical::CitationIndicatorOptions;
use crate::metrics::locate::LocateOptions;
use crate::metrics::retrieval::{RankedMetric, RetrievalOptions};
use crate::metrics::rouge::RougeOptions;
use crate::metrics::semantic::SemanticSimilarityOptions;
use crate::metrics::similarity::{ExactMatchOptions, StringSimilarityOptions};
use crate::metrics::spans::SpanOptions;
use crate::registry::{MetricId, MetricOptions};

/// Per-row `struct{matched: u32, total: u32, score: f64}`, named `quoted_spans`. Elementwise, so
/// it runs in streaming queries. `sources` may be `list[str]`, `str`, or a list of structs with
/// a `text` field.
pub fn quoted_spans(answer: Expr, sources: Expr, options: QuotedSpansOptions) -> Expr {
    row_wise(
        "quoted_spans",
        [answer, sources],
        columns::quoted_spans_dtype(),
        move |[answer, sources]| columns::quoted_spans(answer, sources, &options, true),
    )
}

/// Where each quote is in its row's sources: a struct per row named `locate_quotes` (fields in
/// [`locate::locate_quotes_dtype`]). `sources` is `str`, `list[str]` or
/// `list[struct{file, text}]`; a length-1 sources column (a literal) is one shared corpus.
///
/// ```
/// use polars::prelude::*;
/// use polars_rag::metrics::locate::LocateOptions;
/// use polars_rag::columnar::expr;
/// let df = df!("quote" => ["barely manage a mile"],
///              "source" => ["At first I could barely manage a mile."]).unwrap();
/// let out = df.lazy()
///     .select([expr::locate_quotes(col("quote"), col("source"), LocateOptions::default())
///         .struct_().field_by_name("start")])
///     .collect().unwrap();
/// assert_eq!(out.column("start").unwrap().i64().unwrap().get(0), Some(17));
/// ```
pub fn locate_quotes(quotes: Expr, sources: Expr, options: LocateOptions) -> Expr {
    let whole = options.window_from_batch();
    let call = move |[quotes, sources]: [&Series; 2]| {
        locate::locate_quotes(quotes, sources, &options, true)
    };
    let dtype = locate::locate_quotes_dtype();
    if whole {
        // soak's window size reads every quote of the column: never a streaming morsel.
        whole_column("locate_quotes", [quotes, sources], dtype, call)
    } else {
        row_wise("locate_quotes", [quotes, sources], dtype, call)
    }
}

/// Every quoted span of each answer located in the row's sources: `list[struct]` named
/// `locate_quotes` (see [`locate::locate_answer_quotes`]).
pub fn locate_answer_quotes(
    answer: Expr,
    sources: Expr,
    quoted: QuotedSpansOptions,
    options: LocateOptions,
) -> Expr {
    row_wise(
        "locate_quotes",
        [answer, sources],
        locate::located_quotes_dtype(),
        move |[answer, sources]| {
            locate::locate_answer_quotes(answer, sources, &quoted, &options, true)
        },
    )
}

/// Dataset-level alignment (one row per column or per group), named `citation_alignment`:
/// `struct{citation_alignment_quoted_spans, matched, total}` as Ragas returns it.
pub fn citation_alignment(answer: Expr, sources: Expr, options: QuotedSpansOptions) -> Expr {
    aggregate(
        "citation_alignment",
        [answer, sources],
        columns::citation_alignment_dtype(),
        move |[answer, sources]| {
            columns::citation_alignment_series(answer, sources, &options, true)
        },
    )
}

/// Sentence BLEU in [0, 1] (`Float64` named `bleu`), as sacrebleu 2.6.0 `sentence_bleu / 100`.
/// `references` is a `str` column or a `list[str]` column (several references, combined as
/// sacrebleu does).
///
/// ```
/// use polars::prelude::*;
/// use polars_rag::metrics::bleu::BleuOptions;
/// let df = df!("answer" => ["the cat sat on the mat"], "ref" => ["the cat sat on the mat"]).unwrap();
/// let out = df.lazy().select([polars_rag::columnar::expr::bleu(col("answer"), col("ref"), BleuOptions::default())])
///     .collect().unwrap();
/// assert!((out.column("bleu").unwrap().f64().unwrap().get(0).unwrap() - 1.0).abs() < 1e-12);
/// ```
pub fn bleu(answer: Expr, references: Expr, options: BleuOptions) -> Expr {
    row_wise(
        "bleu",
        [answer, references],
        DataType::Float64,
        move |[a, r]| columns::bleu(a, r, &options, true),
    )
}

/// Embeddings of a text column: `array[f32, d]` named `embed` (the model is loaded, or a server
/// asked once, when the expression is built, to know `d`). Elementwise; see
/// [`embedded::embed`].
pub fn embed(text: Expr, settings: EmbedSettings) -> PolarsResult<Expr> {
    let dtype = embedded::embed_dtype(&settings)?;
    Ok(row_wise("embed", [text], dtype, move |[text]| {
        embedded::embed(text, &settings)
    }))
}

/// A custom judge (a card given as data) over its input expressions, in the order of the card's
/// inputs: a struct named after the card's id with one field per reply field and
/// `judge_error`; see [`super::judged::custom_judge`].
///
/// ```no_run
/// use polars::prelude::*;
/// use polars_rag::metrics::judged::custom::CustomJudgeOptions;
/// use polars_rag::columnar::expr;
/// let mut options = CustomJudgeOptions::from_toml_card(&std::fs::read_to_string("tone.toml").unwrap()).unwrap();
/// options.judge.endpoint.base_url = Some("http://127.0.0.1:8080/v1".into());
/// options.judge.endpoint.model = Some("my-model".into());
/// let judged = expr::custom_judge([col("answer")], options).unwrap();
/// ```
pub fn custom_judge(inputs: impl AsRef<[Expr]>, options: CustomJudgeOptions) -> PolarsResult<Expr> {
    let dtype = super::judged::custom_judge_dtype(&options)?;
    let id = options.card()?.id;
    let name: PlSmallStr = id.as_str().into();
    let output_name = name.clone();
    Ok(map_multiple(
        move |cols: &mut [Column]| {
            let series: Vec<Series> = cols
                .iter()
                .map(|c| super::driver::readable_input(&id, c.as_materialized_series()))
                .collect::<PolarsResult<_>>()?;
            super::judged::custom_judge(&series, &options).map(Column::from)
        },
        inputs,
        move |_, _| Ok(Field::new(output_name.clone(), dtype.clone())),
    )
    .alias(name))
}

/// Ragas' semantic similarity of answer and reference (`Float64` named
/// `semantic_similarity`); see [`embedded::semantic_similarity`].
pub fn semantic_similarity(
    answer: Expr,
    references: Expr,
    options: SemanticSimilarityOptions,
) -> Expr {
    row_wise(
        "semantic_similarity",
        [answer, references],
        DataType::Float64,
        move |[a, r]| embedded::semantic_similarity(a, r, &options),
    )
}

/// Corpus BLEU in [0, 1] over a column or group (`returns_scalar`), as sacrebleu's `corpus_bleu`.
pub fn corpus_bleu(answer: Expr, references: Expr, options: BleuOptions) -> Expr {
    aggregate(
        "corpus_bleu",
        [answer, references],
        DataType::Float64,
        move |[a, r]| columns::corpus_bleu(a, r, &options, true),
    )
}

/// Per-row corpus BLEU statistics (`list[f64]`, named `corpus_bleu_stats`): matches and totals
/// for n = 1..4, hypothesis length, closest reference length.
pub fn corpus_bleu_stats(answer: Expr, references: Expr, options: BleuOptions) -> Expr {
    row_wise(
        "corpus_bleu_stats",
        [answer, references],
        DataType::List(Box::new(DataType::Float64)),
        move |[a, r]| columns::corpus_bleu_stats(a, r, &options, true),
    )
}

/// chrF (chrF++ with `word_order = 2`) in [0, 1], as sacrebleu's `sentence_chrf / 100`.
pub fn chrf(answer: Expr, references: Expr, options: ChrfOptions) -> Expr {
    row_wise(
        "chrf",
        [answer, references],
        DataType::Float64,
        move |[a, r]| columns::chrf(a, r, &options, true),
    )
}

/// ROUGE-1/2/L/Lsum as rouge-score 0.1.2, named `rouge`: a struct of `rouge1`, `rouge2`,
/// `rougeL`, `rougeLsum`, each `struct{precision, recall, fmeasure}`. `references` is a `str`
/// column or a `list[str]` column (several references, combined as `score_multi`).
///
/// ```
/// use polars::prelude::*;
/// use polars_rag::metrics::rouge::RougeOptions;
/// use polars_rag::columnar::expr;
/// let df = df!("answer" => ["the cat sat"], "reference" => ["the cat sat down"]).unwrap();
/// let recall = expr::rouge(col("answer"), col("reference"), RougeOptions::default())
///     .struct_().field_by_name("rouge1").struct_().field_by_name("recall");
/// let out = df.lazy().select([recall]).collect().unwrap();
/// assert_eq!(out.column("recall").unwrap().f64().unwrap().get(0), Some(0.75));
/// ```
pub fn rouge(answer: Expr, references: Expr, options: RougeOptions) -> Expr {
    row_wise(
        "rouge",
        [answer, references],
        columns::rouge_dtype(),
        move |[answer, references]| columns::rouge(answer, references, &options, true),
    )
}

/// 1 − normalised edit distance between the answer and its closest reference, named
/// `string_similarity` (rapidfuzz 3.14.6 distances; Ragas' `NonLLMStringSimilarity`).
pub fn string_similarity(answer: Expr, references: Expr, options: StringSimilarityOptions) -> Expr {
    row_wise(
        "string_similarity",
        [answer, references],
        DataType::Float64,
        move |[answer, references]| columns::string_similarity(answer, references, &options, true),
    )
}

/// 1.0 when any reference occurs verbatim in the answer (Ragas' `StringPresence`), named
/// `string_presence`.
pub fn string_presence(answer: Expr, references: Expr) -> Expr {
    row_wise(
        "string_presence",
        [answer, references],
        DataType::Float64,
        |[answer, references]| columns::string_presence(answer, references, true),
    )
}

/// 1.0 when the answer equals any reference after lowercasing and collapsing whitespace (raw
/// equality, Ragas' `ExactMatch`, with `compat: Ragas`), named `exact_match`.
///
/// ```
/// use polars::prelude::*;
/// use polars_rag::columnar::expr;
/// let df = df!("answer" => ["  PARIS "], "reference" => ["paris"]).unwrap();
/// let out = df.lazy().select([expr::exact_match(col("answer"), col("reference"), Default::default())]).collect().unwrap();
/// assert_eq!(out.column("exact_match").unwrap().f64().unwrap().get(0), Some(1.0));
/// ```
pub fn exact_match(answer: Expr, references: Expr, options: ExactMatchOptions) -> Expr {
    row_wise(
        "exact_match",
        [answer, references],
        DataType::Float64,
        move |[answer, references]| columns::exact_match(answer, references, &options, true),
    )
}

/// How many citation phrases the answer uses, as min(found / 3, 1), named
/// `citation_indicators`.
pub fn citation_indicators(answer: Expr, options: CitationIndicatorOptions) -> Expr {
    row_wise(
        "citation_indicators",
        [answer],
        DataType::Float64,
        move |[answer]| columns::citation_indicators(answer, &options, true),
    )
}

/// The question's declarative checks run on its answer, named `checks`:
/// `struct{score: f64, failed: list[str]}` (see [`crate::metrics::lexical::PreparedChecks`]).
pub fn checks(answer: Expr, checks: Expr) -> Expr {
    row_wise(
        "checks",
        [answer, checks],
        columns::checks_dtype(),
        |[answer, checks]| columns::checks(answer, checks, true),
    )
}

/// Lexical checks of the answer against its best reference, `Float64` named after the metric.
macro_rules! lexical_expr {
    ($($(#[$doc:meta])* $id:ident),+ $(,)?) => {$(
        $(#[$doc])*
        pub fn $id(answer: Expr, references: Expr) -> Expr {
            row_wise(stringify!($id), [answer, references], DataType::Float64, |[a, r]| {
                columns::$id(a, r, true)
            })
        }
    )+};
}

lexical_expr!(
    /// Share of the reference's keywords found in the answer (best reference), named
    /// `keyword_coverage`.
    keyword_coverage,
    /// Share of the reference's numbers found in the answer, compared as numbers (best
    /// reference), named `number_match`.
    number_match,
    /// Mean of the length ratio (capped at 1) and keyword coverage (best reference), named
    /// `answer_completeness`.
    answer_completeness,
);

/// A ranked-list retrieval metric, named after its id: `retrieved` (texts, ids, spans or
/// embeddings per row, in rank order) against the question's ground truth. See
/// [`crate::metrics::retrieval`] for the definitions and [`super::retrieval`] for the shapes.
///
/// ```
/// use polars::prelude::*;
/// use polars_rag::metrics::retrieval::{RankedMetric, RetrievalOptions};
/// use polars_rag::columnar::expr;
/// let retrieved = Series::new("retrieved".into(), [Series::new("".into(), ["a", "b", "c"])]);
/// let relevant = Series::new("relevant".into(), [Series::new("".into(), ["c", "z"])]);
/// let df = DataFrame::new_infer_height(vec![retrieved.into(), relevant.into()]).unwrap();
/// let out = df.lazy().select([
///     expr::ranked(RankedMetric::Mrr, col("retrieved"), col("relevant"), RetrievalOptions::default()),
///     expr::recall_at_k(col("retrieved"), col("relevant"), RetrievalOptions { k: Some(3), ..Default::default() }),
/// ]).collect().unwrap();
/// assert_eq!(out.column("mrr").unwrap().f64().unwrap().get(0), Some(1.0 / 3.0));
/// assert_eq!(out.column("recall_at_k").unwrap().f64().unwrap().get(0), Some(0.5));
/// ```
pub fn ranked(
    metric: RankedMetric,
    retrieved: Expr,
    ground_truth: Expr,
    options: RetrievalOptions,
) -> Expr {
    row_wise(
        metric.id(),
        [retrieved, ground_truth],
        DataType::Float64,
        move |[r, g]| retrieval::ranked_metric(metric, r, g, &options, true),
    )
}

/// Several ranked-list metrics over the same two columns in one pass (the columns are read and
/// relevance judged once per row): a struct named `retrieval` with one `Float64` field per
/// metric id, equal to the metrics' own expressions. Unnest it to get the columns.
pub fn ranked_many(
    metrics: Vec<(RankedMetric, RetrievalOptions)>,
    retrieved: Expr,
    ground_truth: Expr,
) -> Expr {
    let dtype = DataType::Struct(
        metrics
            .iter()
            .map(|(m, _)| Field::new(m.id().into(), DataType::Float64))
            .collect(),
    );
    row_wise(
        "retrieval",
        [retrieved, ground_truth],
        dtype,
        move |[r, g]| {
            let fields = retrieval::ranked_metrics(&metrics, r, g, true)?;
            let valid = vec![true; fields.first().map_or(r.len().max(g.len()), |f| f.len())];
            super::driver::struct_series("retrieval", &fields, &valid)
        },
    )
}

macro_rules! ranked_expr {
    ($($(#[$doc:meta])* $name:ident => $metric:ident,)+) => {$(
        $(#[$doc])*
        pub fn $name(retrieved: Expr, ground_truth: Expr, options: RetrievalOptions) -> Expr {
            ranked(RankedMetric::$metric, retrieved, ground_truth, options)
        }
    )+};
}

ranked_expr!(
    /// Relevant items in the top k / k (trec_eval `P_k`), named `precision_at_k`.
    precision_at_k => PrecisionAtK,
    /// Relevant ground-truth items found in the top k / all relevant (trec_eval `recall_k`).
    recall_at_k => RecallAtK,
    /// Harmonic mean of precision and recall at k.
    f1_at_k => F1AtK,
    /// α · recall + (1 − α) · mean log-rank score of the ground truth.
    hybrid_log_rank => HybridLogRank,
    /// 1 when a relevant item is in the top k.
    hit_rate_at_k => HitRateAtK,
    /// Reciprocal rank of the first relevant item (trec_eval `recip_rank`).
    mrr => Mrr,
    /// Average precision of one query (trec_eval `map`).
    average_precision => AveragePrecision,
    /// nDCG at k with linear gains (trec_eval `ndcg_cut_k`).
    ndcg_at_k => NdcgAtK,
    /// Precision at R, R the number of relevant items (trec_eval `Rprec`).
    r_precision => RPrecision,
);

/// A span metric (`span_precision`, `span_recall`, `span_iou`) of retrieved spans against golden
/// spans, both lists of `struct{file, start, end}`.
pub fn span(metric: SpanMetric, retrieved: Expr, golden: Expr, options: SpanOptions) -> Expr {
    row_wise(
        metric.id(),
        [retrieved, golden],
        DataType::Float64,
        move |[r, g]| retrieval::span_metric(metric, r, g, &options, true),
    )
}

/// Retrieved characters inside golden spans / retrieved characters, named `span_precision`.
pub fn span_precision(retrieved: Expr, golden: Expr, options: SpanOptions) -> Expr {
    span(SpanMetric::Precision, retrieved, golden, options)
}

/// Golden characters retrieved / golden characters, named `span_recall`.
pub fn span_recall(retrieved: Expr, golden: Expr, options: SpanOptions) -> Expr {
    span(SpanMetric::Recall, retrieved, golden, options)
}

/// Shared characters / characters of either, named `span_iou`.
pub fn span_iou(retrieved: Expr, golden: Expr, options: SpanOptions) -> Expr {
    span(SpanMetric::Iou, retrieved, golden, options)
}

/// The precision the chunking allows (Chroma's precision Ω), named `span_precision_omega`:
/// `chunks` is every chunk of the chunking, usually one list literal shared by every row (see
/// [`crate::metrics::spans::precision_omega`]).
pub fn span_precision_omega(chunks: Expr, golden: Expr, options: SpanOptions) -> Expr {
    span(SpanMetric::PrecisionOmega, chunks, golden, options)
}

/// `ppi_mean` of a column of judge scores and a column of labels (null where an item is not
/// labelled): one row per column or group (see [`crate::metrics::ppi`]).
pub fn ppi_mean(judged: Expr, labels: Expr, options: crate::metrics::ppi::PpiOptions) -> Expr {
    let all = MetricOptions {
        ppi_mean: options,
        ..MetricOptions::default()
    };
    metric(MetricId::PpiMean, [judged, labels], &all)
}

/// `nugget_scores` of each row's nuggets: their importance and their assessment in the answer
/// (see [`crate::metrics::nuggets`]).
pub fn nugget_scores(
    importance: Expr,
    assignment: Expr,
    options: crate::metrics::nuggets::NuggetOptions,
) -> Expr {
    let all = MetricOptions {
        nugget_scores: options,
        ..MetricOptions::default()
    };
    metric(MetricId::NuggetScores, [importance, assignment], &all)
}

/// `claim_check_scores` of each row's four verdict tables (see
/// [`crate::metrics::claim_checks`]).
pub fn claim_check_scores(
    response_in_reference: Expr,
    reference_in_response: Expr,
    response_in_chunks: Expr,
    reference_in_chunks: Expr,
    options: crate::metrics::claim_checks::ClaimCheckOptions,
) -> Expr {
    let all = MetricOptions {
        claim_check_scores: options,
        ..MetricOptions::default()
    };
    metric(
        MetricId::ClaimCheckScores,
        [
            response_in_reference,
            reference_in_response,
            response_in_chunks,
            reference_in_chunks,
        ],
        &all,
    )
}

/// `metric` over its input expressions (in the order of its inputs), with its section of
/// `options`, named after it: elementwise for row-wise metrics, one row per column or group for
/// aggregates. This is the builder `score` uses for every metric.
///
/// ```
/// use polars::prelude::*;
/// use polars_rag::columnar::expr;
/// use polars_rag::registry::{MetricId, MetricOptions};
/// let df = df!("answer" => ["the cat sat"], "ref" => ["the cat sat"]).unwrap();
/// let options = MetricOptions::default();
/// let out = df.lazy()
///     .select([expr::metric(MetricId::ExactMatch, [col("answer"), col("ref")], &options)])
///     .collect().unwrap();
/// assert_eq!(out.column("exact_match").unwrap().f64().unwrap().get(0), Some(1.0));
/// ```
pub fn metric(metric: MetricId, inputs: impl AsRef<[Expr]>, options: &MetricOptions) -> Expr {
    let info = metric.info();
    let dtype = dispatch::output_dtype(metric);
    let evaluate = table_call(metric, options, dispatch::evaluate);
    let output = move |_: &Schema, _: &[Field]| Ok(Field::new(info.id.into(), dtype.clone()));
    match info.kind {
        crate::registry::MetricKind::Aggregate => apply_multiple(evaluate, inputs, output, true),
        _ if dispatch::reads_whole_column(metric, options) => {
            apply_multiple(evaluate, inputs, output, false)
        }
        _ => map_multiple(evaluate, inputs, output),
    }
    .alias(info.id)
}

/// The per-row statistics of corpus-level `metric` (named as its
/// [`CorpusStats::column`](crate::registry::CorpusStats::column)), or `None` when it is not
/// corpus-level. `compare` resamples the metric from them.
pub fn metric_stats(
    metric: MetricId,
    inputs: impl AsRef<[Expr]>,
    options: &MetricOptions,
) -> Option<Expr> {
    let stats = metric.info().corpus?;
    let evaluate = table_call(metric, options, |metric, inputs, options, parallel| {
        dispatch::evaluate_stats(metric, inputs, options, parallel)?
            .ok_or_else(|| polars_err!(InvalidOperation: "{metric}: no per-row statistics"))
    });
    // The statistics dtype is known only from a call: ask the columnar function on empty input.
    let output = move |_: &Schema, fields: &[Field]| {
        let empty: Vec<Series> = fields
            .iter()
            .map(|f| Series::new_empty(f.name().clone(), f.dtype()))
            .collect();
        let options = MetricOptions::default();
        let out = dispatch::evaluate_stats(metric, &empty, &options, false)?
            .ok_or_else(|| polars_err!(InvalidOperation: "{metric}: no per-row statistics"))?;
        Ok(Field::new(stats.column.into(), out.dtype().clone()))
    };
    Some(map_multiple(evaluate, inputs, output).alias(stats.column))
}

/// A closure calling `call(metric, series, options, parallel)` on the input columns of a UDF.
fn table_call(
    metric: MetricId,
    options: &MetricOptions,
    call: fn(MetricId, &[Series], &MetricOptions, bool) -> PolarsResult<Series>,
) -> impl Fn(&mut [Column]) -> PolarsResult<Column> + Send + Sync + 'static + use<> {
    let options = std::sync::Arc::new(options.clone());
    move |cols: &mut [Column]| {
        let series: Vec<Series> = cols
            .iter()
            .map(|c| c.as_materialized_series().clone())
            .collect();
        call(metric, &series, &options, true).map(Column::from)
    }
}

/// An elementwise metric expression named `id` over `N` input expressions.
fn row_wise<const N: usize, F>(id: &'static str, inputs: [Expr; N], dtype: DataType, f: F) -> Expr
where
    F: Fn([&Series; N]) -> PolarsResult<Series> + Send + Sync + 'static,
{
    map_multiple(
        move |cols: &mut [Column]| f(series_array(id, cols)?).map(Column::from),
        inputs,
        move |_, _| Ok(Field::new(id.into(), dtype.clone())),
    )
    .alias(id)
}

/// A metric expression named `id` with a row per input row that reads its whole input column
/// (per group in `group_by`), so that how Polars splits a table cannot change a row.
fn whole_column<const N: usize, F>(
    id: &'static str,
    inputs: [Expr; N],
    dtype: DataType,
    f: F,
) -> Expr
where
    F: Fn([&Series; N]) -> PolarsResult<Series> + Send + Sync + 'static,
{
    groupwise(id, inputs, dtype, f, false)
}

/// An aggregating metric expression named `id` (one row per column or group) over `N` inputs.
fn aggregate<const N: usize, F>(id: &'static str, inputs: [Expr; N], dtype: DataType, f: F) -> Expr
where
    F: Fn([&Series; N]) -> PolarsResult<Series> + Send + Sync + 'static,
{
    groupwise(id, inputs, dtype, f, true)
}

/// A metric expression named `id` over the whole column or group: one value (`returns_scalar`)
/// or one per row.
fn groupwise<const N: usize, F>(
    id: &'static str,
    inputs: [Expr; N],
    dtype: DataType,
    f: F,
    returns_scalar: bool,
) -> Expr
where
    F: Fn([&Series; N]) -> PolarsResult<Series> + Send + Sync + 'static,
{
    apply_multiple(
        move |cols: &mut [Column]| f(series_array(id, cols)?).map(Column::from),
        inputs,
        move |_, _| Ok(Field::new(id.into(), dtype.clone())),
        returns_scalar,
    )
    .alias(id)
}

/// The input columns as `N` series, or an error naming the metric when Polars passed another count.
fn series_array<'a, const N: usize>(
    metric: &str,
    cols: &'a [Column],
) -> PolarsResult<[&'a Series; N]> {
    let series: Vec<&Series> = cols.iter().map(Column::as_materialized_series).collect();
    series.try_into().map_err(
        |got: Vec<&Series>| polars_err!(InvalidOperation: "{metric}: expected {N} inputs, got {}", got.len()),
    )
}
