//! The metric table over Polars columns: for every [`MetricId`], one [`Columnar`] (the columnar
//! call, the output dtype and the corpus statistics) in one exhaustive `match` (a metric without
//! an arm does not compile). The `Expr` builders, the job and the Python plugin's shims all evaluate a metric
//! through [`evaluate`], so no face holds a per-metric branch of its own.
//!
//! ```
//! use polars::prelude::*;
//! use polars_rag::columnar::dispatch;
//! use polars_rag::registry::{MetricId, MetricOptions};
//! let answer = Series::new("answer".into(), ["the cat sat on the mat"]);
//! let reference = Series::new("reference".into(), ["the cat sat on the mat"]);
//! let options = MetricOptions::default();
//! let out = dispatch::evaluate(MetricId::ExactMatch, &[answer, reference], &options, false).unwrap();
//! assert_eq!(out.f64().unwrap().get(0), Some(1.0));
//! assert_eq!(dispatch::output_dtype(MetricId::ExactMatch), DataType::Float64);
//! assert!(dispatch::evaluate(MetricId::ExactMatch, &[], &options, false).is_err());
//! ```

use polars::prelude::*;

use crate::columnar::columns;
use crate::registry::{MetricId, MetricOptions};

/// Whether `metric`, row-wise otherwise, must see its whole input column at once under
/// `options`, so that streaming batches cannot change its rows: quote localisation with soak's
/// automatic window size (1.1 × the longest quote of the column). The `Expr` builders and the
/// plugin then declare it non-elementwise (computed per group in `group_by`).
///
/// ```
/// use polars_rag::metrics::locate::LocateOptions;
/// use polars_rag::columnar::dispatch::reads_whole_column;
/// use polars_rag::registry::{MetricId, MetricOptions};
/// let mut options = MetricOptions::default();
/// assert!(!reads_whole_column(MetricId::LocateQuotes, &options));
/// options.locate_quotes = LocateOptions::soak();
/// assert!(reads_whole_column(MetricId::LocateQuotes, &options));
/// assert!(!reads_whole_column(MetricId::Bleu, &options));
/// ```
pub fn reads_whole_column(metric: MetricId, options: &MetricOptions) -> bool {
    options
        .locate(metric)
        .is_some_and(crate::metrics::locate::LocateOptions::window_from_batch)
}

/// A columnar call over a metric's input columns (in the order of its
/// [`inputs`](crate::registry::MetricInfo::inputs)) with the options of every metric; `parallel`
/// is false when the caller already runs calls in parallel (Polars' streaming engine,
/// `group_by`).
type ColumnarCall = Box<dyn Fn(&[Series], &MetricOptions, bool) -> PolarsResult<Series>>;

/// How one metric runs over Polars columns: its output dtype, its columnar call and, for a
/// corpus-level metric, the call that gives its per-row statistics. [`columnar`] gives it for
/// every [`MetricId`] in one exhaustive `match`, the one place a metric is described for this
/// layer.
pub struct Columnar {
    metric: MetricId,
    dtype: DataType,
    call: ColumnarCall,
    stats: Option<ColumnarCall>,
}

impl Columnar {
    /// A metric over exactly `N` input columns; more or fewer is an error naming the metric.
    fn new<const N: usize>(
        metric: MetricId,
        dtype: DataType,
        call: impl Fn(&[Series; N], &MetricOptions, bool) -> PolarsResult<Series> + 'static,
    ) -> Self {
        Columnar {
            metric,
            dtype,
            call: Box::new(move |inputs, options, parallel| {
                call(columns_of::<N>(metric, inputs)?, options, parallel)
            }),
            stats: None,
        }
    }

    /// A metric whose number of input columns varies (an optional last column).
    fn over_slice(
        metric: MetricId,
        dtype: DataType,
        call: impl Fn(&[Series], &MetricOptions, bool) -> PolarsResult<Series> + 'static,
    ) -> Self {
        Columnar {
            metric,
            dtype,
            call: Box::new(call),
            stats: None,
        }
    }

    /// Adds the per-row statistics of a corpus-level metric, over the same `N` inputs.
    fn with_stats<const N: usize>(
        mut self,
        stats: impl Fn(&[Series; N], &MetricOptions, bool) -> PolarsResult<Series> + 'static,
    ) -> Self {
        let metric = self.metric;
        self.stats = Some(Box::new(move |inputs, options, parallel| {
            stats(columns_of::<N>(metric, inputs)?, options, parallel)
        }));
        self
    }

    /// The dtype of the metric's output.
    pub fn dtype(&self) -> &DataType {
        &self.dtype
    }
}

/// The columnar description of `metric`.
pub fn columnar(metric: MetricId) -> Columnar {
    use MetricId::*;
    match metric {
        QuotedSpans => Columnar::new::<2>(
            metric,
            columns::quoted_spans_dtype(),
            |[answer, sources], options, parallel| {
                columns::quoted_spans(answer, sources, &options.quoted_spans, parallel)
            },
        ),
        CitationAlignment => Columnar::new::<2>(
            metric,
            columns::citation_alignment_dtype(),
            |[answer, sources], options, parallel| {
                columns::citation_alignment_series(answer, sources, &options.quoted_spans, parallel)
            },
        )
        .with_stats(|[answer, sources], options, parallel| {
            columns::quoted_spans(answer, sources, &options.quoted_spans, parallel)
        }),
        Bleu => Columnar::new::<2>(
            metric,
            DataType::Float64,
            |[answer, references], options, parallel| {
                columns::bleu(answer, references, &options.bleu, parallel)
            },
        ),
        CorpusBleu => Columnar::new::<2>(
            metric,
            DataType::Float64,
            |[answer, references], options, parallel| {
                columns::corpus_bleu(answer, references, &options.corpus_bleu.0, parallel)
            },
        )
        .with_stats(|[answer, references], options, parallel| {
            columns::corpus_bleu_stats(answer, references, &options.corpus_bleu.0, parallel)
        }),
        Chrf => Columnar::new::<2>(
            metric,
            DataType::Float64,
            |[answer, references], options, parallel| {
                columns::chrf(answer, references, &options.chrf, parallel)
            },
        ),
        CorpusChrf => Columnar::new::<2>(
            metric,
            DataType::Float64,
            |[answer, references], options, parallel| {
                columns::corpus_chrf(answer, references, &options.corpus_chrf, parallel)
            },
        )
        .with_stats(|[answer, references], options, parallel| {
            columns::corpus_chrf_stats(answer, references, &options.corpus_chrf, parallel)
        }),
        Rouge => Columnar::new::<2>(
            metric,
            columns::rouge_dtype(),
            |[answer, references], options, parallel| {
                columns::rouge(answer, references, &options.rouge, parallel)
            },
        ),
        ExactMatch => Columnar::new::<2>(
            metric,
            DataType::Float64,
            |[answer, references], options, parallel| {
                columns::exact_match(answer, references, &options.exact_match, parallel)
            },
        ),
        StringSimilarity => Columnar::new::<2>(
            metric,
            DataType::Float64,
            |[answer, references], options, parallel| {
                columns::string_similarity(answer, references, &options.string_similarity, parallel)
            },
        ),
        SemanticSimilarity => Columnar::new::<2>(
            metric,
            DataType::Float64,
            |[answer, references], options, _| {
                crate::columnar::embedded::semantic_similarity(
                    answer,
                    references,
                    &options.semantic_similarity,
                )
            },
        ),
        StringPresence => Columnar::new::<2>(
            metric,
            DataType::Float64,
            |[answer, references], _, parallel| {
                columns::string_presence(answer, references, parallel)
            },
        ),
        KeywordCoverage => Columnar::new::<2>(
            metric,
            DataType::Float64,
            |[answer, references], _, parallel| {
                columns::keyword_coverage(answer, references, parallel)
            },
        ),
        NumberMatch => Columnar::new::<2>(
            metric,
            DataType::Float64,
            |[answer, references], _, parallel| columns::number_match(answer, references, parallel),
        ),
        AnswerCompleteness => Columnar::new::<2>(
            metric,
            DataType::Float64,
            |[answer, references], _, parallel| {
                columns::answer_completeness(answer, references, parallel)
            },
        ),
        CitationIndicators => {
            Columnar::new::<1>(metric, DataType::Float64, |[answer], options, parallel| {
                columns::citation_indicators(answer, &options.citation_indicators, parallel)
            })
        }
        Checks => Columnar::new::<2>(
            metric,
            columns::checks_dtype(),
            |[answer, checks], _, parallel| columns::checks(answer, checks, parallel),
        ),
        PrecisionAtK => Columnar::new::<2>(
            metric,
            DataType::Float64,
            |[retrieved, ground_truth], options, parallel| {
                crate::columnar::retrieval::ranked_metric(
                    crate::metrics::retrieval::RankedMetric::PrecisionAtK,
                    retrieved,
                    ground_truth,
                    &options.precision_at_k,
                    parallel,
                )
            },
        ),
        RecallAtK => Columnar::new::<2>(
            metric,
            DataType::Float64,
            |[retrieved, ground_truth], options, parallel| {
                crate::columnar::retrieval::ranked_metric(
                    crate::metrics::retrieval::RankedMetric::RecallAtK,
                    retrieved,
                    ground_truth,
                    &options.recall_at_k,
                    parallel,
                )
            },
        ),
        F1AtK => Columnar::new::<2>(
            metric,
            DataType::Float64,
            |[retrieved, ground_truth], options, parallel| {
                crate::columnar::retrieval::ranked_metric(
                    crate::metrics::retrieval::RankedMetric::F1AtK,
                    retrieved,
                    ground_truth,
                    &options.f1_at_k,
                    parallel,
                )
            },
        ),
        HybridLogRank => Columnar::new::<2>(
            metric,
            DataType::Float64,
            |[retrieved, ground_truth], options, parallel| {
                crate::columnar::retrieval::ranked_metric(
                    crate::metrics::retrieval::RankedMetric::HybridLogRank,
                    retrieved,
                    ground_truth,
                    &options.hybrid_log_rank,
                    parallel,
                )
            },
        ),
        HitRateAtK => Columnar::new::<2>(
            metric,
            DataType::Float64,
            |[retrieved, ground_truth], options, parallel| {
                crate::columnar::retrieval::ranked_metric(
                    crate::metrics::retrieval::RankedMetric::HitRateAtK,
                    retrieved,
                    ground_truth,
                    &options.hit_rate_at_k,
                    parallel,
                )
            },
        ),
        Mrr => Columnar::new::<2>(
            metric,
            DataType::Float64,
            |[retrieved, ground_truth], options, parallel| {
                crate::columnar::retrieval::ranked_metric(
                    crate::metrics::retrieval::RankedMetric::Mrr,
                    retrieved,
                    ground_truth,
                    &options.mrr,
                    parallel,
                )
            },
        ),
        AveragePrecision => Columnar::new::<2>(
            metric,
            DataType::Float64,
            |[retrieved, ground_truth], options, parallel| {
                crate::columnar::retrieval::ranked_metric(
                    crate::metrics::retrieval::RankedMetric::AveragePrecision,
                    retrieved,
                    ground_truth,
                    &options.average_precision,
                    parallel,
                )
            },
        ),
        NdcgAtK => Columnar::new::<2>(
            metric,
            DataType::Float64,
            |[retrieved, ground_truth], options, parallel| {
                crate::columnar::retrieval::ranked_metric(
                    crate::metrics::retrieval::RankedMetric::NdcgAtK,
                    retrieved,
                    ground_truth,
                    &options.ndcg_at_k,
                    parallel,
                )
            },
        ),
        RPrecision => Columnar::new::<2>(
            metric,
            DataType::Float64,
            |[retrieved, ground_truth], options, parallel| {
                crate::columnar::retrieval::ranked_metric(
                    crate::metrics::retrieval::RankedMetric::RPrecision,
                    retrieved,
                    ground_truth,
                    &options.r_precision,
                    parallel,
                )
            },
        ),
        SpanPrecision => Columnar::new::<2>(
            metric,
            DataType::Float64,
            |[retrieved, golden], options, parallel| {
                crate::columnar::retrieval::span_metric(
                    crate::columnar::retrieval::SpanMetric::Precision,
                    retrieved,
                    golden,
                    &options.span_precision,
                    parallel,
                )
            },
        ),
        SpanRecall => Columnar::new::<2>(
            metric,
            DataType::Float64,
            |[retrieved, golden], options, parallel| {
                crate::columnar::retrieval::span_metric(
                    crate::columnar::retrieval::SpanMetric::Recall,
                    retrieved,
                    golden,
                    &options.span_recall,
                    parallel,
                )
            },
        ),
        SpanIou => Columnar::new::<2>(
            metric,
            DataType::Float64,
            |[retrieved, golden], options, parallel| {
                crate::columnar::retrieval::span_metric(
                    crate::columnar::retrieval::SpanMetric::Iou,
                    retrieved,
                    golden,
                    &options.span_iou,
                    parallel,
                )
            },
        ),
        SpanPrecisionOmega => Columnar::new::<2>(
            metric,
            DataType::Float64,
            |[chunks, golden], options, parallel| {
                crate::columnar::retrieval::span_metric(
                    crate::columnar::retrieval::SpanMetric::PrecisionOmega,
                    chunks,
                    golden,
                    &options.span_precision_omega,
                    parallel,
                )
            },
        ),
        CitationSupport => Columnar::new::<2>(
            metric,
            crate::columnar::judged::citation_support_dtype(),
            |[claim, cited_span], options, _| {
                crate::columnar::judged::citation_support(
                    claim,
                    cited_span,
                    &options.citation_support,
                )
            },
        ),
        CitationPrecision => Columnar::new::<2>(
            metric,
            crate::columnar::judged::citation_precision_dtype(),
            |[claim, cited_span], options, _| {
                crate::columnar::judged::citation_precision(
                    claim,
                    cited_span,
                    &options.citation_precision,
                )
            },
        )
        .with_stats(|[claim, cited_span], options, _| {
            crate::columnar::judged::citation_support(
                claim,
                cited_span,
                &options.citation_precision,
            )
        }),
        AnswerMatch => Columnar::new::<3>(
            metric,
            crate::columnar::judged::answer_match_dtype(),
            |[question, answer, reference], options, _| {
                crate::columnar::judged::answer_match(
                    question,
                    answer,
                    reference,
                    &options.answer_match,
                )
            },
        ),
        GEval => Columnar::new::<3>(
            metric,
            crate::columnar::judged::g_eval_dtype(),
            |[question, answer, reference], options, _| {
                crate::columnar::judged::g_eval(question, answer, reference, &options.g_eval)
            },
        ),
        Faithfulness => Columnar::new::<3>(
            metric,
            crate::columnar::judged_rag::rag_dtype(
                crate::metrics::judged::rag::RagMetric::Faithfulness,
            ),
            |[question, answer, contexts], options, _| {
                crate::columnar::judged_rag::faithfulness(
                    question,
                    answer,
                    contexts,
                    &options.faithfulness,
                )
            },
        ),
        AnswerRelevancy => Columnar::new::<2>(
            metric,
            crate::columnar::judged_rag::rag_dtype(
                crate::metrics::judged::rag::RagMetric::AnswerRelevancy,
            ),
            |[question, answer], options, _| {
                crate::columnar::judged_rag::answer_relevancy(
                    question,
                    answer,
                    &options.answer_relevancy,
                )
            },
        ),
        ContextPrecision => Columnar::new::<3>(
            metric,
            crate::columnar::judged_rag::rag_dtype(
                crate::metrics::judged::rag::RagMetric::ContextPrecision,
            ),
            |[question, contexts, reference], options, _| {
                crate::columnar::judged_rag::context_precision(
                    crate::metrics::judged::rag::RagMetric::ContextPrecision,
                    question,
                    contexts,
                    reference,
                    &options.context_precision,
                )
            },
        ),
        ContextUtilization => Columnar::new::<3>(
            metric,
            crate::columnar::judged_rag::rag_dtype(
                crate::metrics::judged::rag::RagMetric::ContextUtilization,
            ),
            |[question, contexts, answer], options, _| {
                crate::columnar::judged_rag::context_precision(
                    crate::metrics::judged::rag::RagMetric::ContextUtilization,
                    question,
                    contexts,
                    answer,
                    &options.context_utilization,
                )
            },
        ),
        ContextRecall => Columnar::new::<3>(
            metric,
            crate::columnar::judged_rag::rag_dtype(
                crate::metrics::judged::rag::RagMetric::ContextRecall,
            ),
            |[question, contexts, reference], options, _| {
                crate::columnar::judged_rag::context_recall(
                    question,
                    contexts,
                    reference,
                    &options.context_recall,
                )
            },
        ),
        PpiMean => Columnar::new::<2>(
            metric,
            columns::ppi_mean_dtype(),
            |[judged, labels], options, _| columns::ppi_mean(judged, labels, &options.ppi_mean),
        ),
        CitationRecallPrecision => Columnar::over_slice(
            metric,
            crate::columnar::judged::citation_recall_precision_dtype(),
            move |inputs, options, _| {
                // ALCE's QAMPARI reading adds each answer's question as a third column.
                let (answer, passages, question) = match inputs {
                    [answer, passages, question] => (answer, passages, Some(question)),
                    _ => {
                        let [answer, passages] = columns_of::<2>(metric, inputs)?;
                        (answer, passages, None)
                    }
                };
                crate::columnar::judged::citation_recall_precision_with_questions(
                    answer,
                    passages,
                    question,
                    &options.citation_recall_precision,
                )
            },
        ),
        ClaimChecks => Columnar::new::<3>(
            metric,
            crate::columnar::judged::claim_checks_dtype(),
            |[answer, reference, contexts], options, _| {
                crate::columnar::judged::claim_checks(
                    answer,
                    reference,
                    contexts,
                    &options.claim_checks,
                )
            },
        ),
        CreateNuggets => Columnar::new::<2>(
            metric,
            crate::columnar::judged_nuggets::create_nuggets_dtype(),
            |[question, sources], options, _| {
                crate::columnar::judged_nuggets::create_nuggets(
                    question,
                    sources,
                    &options.create_nuggets,
                )
            },
        ),
        NuggetAssignment => Columnar::new::<2>(
            metric,
            crate::columnar::judged_nuggets::nugget_assignment_dtype(),
            |[answer, nuggets], options, _| {
                crate::columnar::judged_nuggets::nugget_assignment(
                    answer,
                    nuggets,
                    &options.nugget_assignment,
                )
            },
        ),
        RelevanceGrade => Columnar::new::<2>(
            metric,
            crate::columnar::judged::relevance_grade_dtype(),
            |[question, passage], options, _| {
                crate::columnar::judged::relevance_grade(
                    question,
                    passage,
                    &options.relevance_grade,
                )
            },
        ),
        NuggetScores => Columnar::new::<2>(
            metric,
            crate::columnar::verdicts::nugget_scores_dtype(),
            |[importance, assignment], options, _| {
                crate::columnar::verdicts::nugget_scores(
                    importance,
                    assignment,
                    &options.nugget_scores,
                )
            },
        ),
        ClaimCheckScores => Columnar::new::<4>(
            metric,
            crate::columnar::verdicts::claim_check_scores_dtype(),
            |[in_reference, in_response, response_chunks, reference_chunks], options, _| {
                crate::columnar::verdicts::claim_check_scores(
                    in_reference,
                    in_response,
                    response_chunks,
                    reference_chunks,
                    &options.claim_check_scores,
                )
            },
        ),
        SplitClaims => Columnar::new::<1>(
            metric,
            crate::columnar::judged::split_claims_dtype(),
            |[answer], options, _| {
                crate::columnar::judged::split_claims(answer, &options.split_claims)
            },
        ),
        LocateQuotes => Columnar::new::<2>(
            metric,
            crate::columnar::locate::locate_quotes_dtype(),
            |[quotes, sources], options, parallel| {
                crate::columnar::locate::locate_quotes(
                    quotes,
                    sources,
                    &options.locate_quotes,
                    parallel,
                )
            },
        ),
        ExtractQuotes => Columnar::new::<1>(
            metric,
            DataType::List(Box::new(DataType::String)),
            |[answer], options, _| {
                crate::columnar::locate::extract_quotes(answer, &options.quoted_spans)
            },
        ),
        EmbeddingCosine => Columnar::new::<2>(metric, DataType::Float64, |[a, b], _, _| {
            crate::columnar::locate::embedding_cosine(a, b)
        }),
    }
}

/// Evaluates `metric` over its input columns (in the order of its
/// [`inputs`](crate::registry::MetricInfo::inputs)) with its section of `options`. `parallel` is
/// false when the caller already runs calls in parallel (Polars' streaming engine, `group_by`).
pub fn evaluate(
    metric: MetricId,
    inputs: &[Series],
    options: &MetricOptions,
    parallel: bool,
) -> PolarsResult<Series> {
    (columnar(metric).call)(inputs, options, parallel)
}

/// The dtype of `metric`'s output.
pub fn output_dtype(metric: MetricId) -> DataType {
    columnar(metric).dtype
}

/// The per-row statistics of a corpus-level metric (the column its
/// [`CorpusStats`](crate::registry::CorpusStats) names), `None` for other metrics.
pub fn evaluate_stats(
    metric: MetricId,
    inputs: &[Series],
    options: &MetricOptions,
    parallel: bool,
) -> PolarsResult<Option<Series>> {
    match columnar(metric).stats {
        Some(stats) => stats(inputs, options, parallel).map(Some),
        None => Ok(None),
    }
}

/// The `N` input columns of `metric`, or an error naming it and the count it got.
fn columns_of<const N: usize>(metric: MetricId, inputs: &[Series]) -> PolarsResult<&[Series; N]> {
    inputs.try_into().map_err(
        |_| polars_err!(InvalidOperation: "{metric}: expected {N} input columns, got {}", inputs.len()),
    )
}

/// The output field of `metric`, named after it.
pub fn output_field(metric: MetricId) -> Field {
    Field::new(metric.as_str().into(), output_dtype(metric))
}

/// A scores table's per-row values of metric `id` (its [`MetricInfo::values`]), as
/// `(label, Float64 values)`; empty when the table has no column of that name or it is not of
/// the metric's shape.
///
/// [`MetricInfo::values`]: crate::registry::MetricInfo::values
pub fn metric_values(scores: &DataFrame, id: &str) -> PolarsResult<Vec<(String, Series)>> {
    let Some(info) = crate::registry::find(id) else {
        return Ok(Vec::new());
    };
    let Ok(column) = scores.column(id) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for path in info.values {
        if let Some(values) = value_at(column.as_materialized_series(), path)? {
            out.push((crate::registry::value_label(id, path), values));
        }
    }
    Ok(out)
}

/// The per-row spread of a judged metric's samples (its struct's `spread` field), when the
/// scores table holds the metric and some row has a spread (it was scored with `samples` > 1).
pub fn judge_spread(scores: &DataFrame, id: &str) -> PolarsResult<Option<Series>> {
    let Ok(column) = scores.column(id) else {
        return Ok(None);
    };
    let spread = value_at(column.as_materialized_series(), "spread")?;
    Ok(spread.filter(|s| s.null_count() < s.len()))
}

/// Each row's judge sample scores of a judged metric (its struct's `sample_scores` field; an
/// empty list where a row has none), when the scores table holds the metric and some row was
/// judged with `samples` > 1.
pub fn judge_samples(scores: &DataFrame, id: &str) -> PolarsResult<Option<Vec<Vec<f64>>>> {
    let Ok(column) = scores.column(id) else {
        return Ok(None);
    };
    let series = column.as_materialized_series();
    let DataType::Struct(_) = series.dtype() else {
        return Ok(None);
    };
    let Ok(field) = series.struct_()?.field_by_name("sample_scores") else {
        return Ok(None);
    };
    if field.null_count() == field.len() {
        return Ok(None);
    }
    let lists = field.cast(&DataType::List(Box::new(DataType::Float64)))?;
    let mut rows = Vec::with_capacity(lists.len());
    for item in lists.list()?.amortized_iter() {
        rows.push(match item {
            Some(values) => values
                .as_ref()
                .f64()?
                .iter()
                .flatten()
                .filter(|v| v.is_finite())
                .collect(),
            None => Vec::new(),
        });
    }
    Ok(Some(rows))
}

/// Whether a scores-table column holds a judge defined as data (a judge card's column): a
/// struct ending in the `judge_error` string field every such judge writes, under a name that
/// is not a metric of the table. Its numeric and boolean reply fields are its values (see
/// [`judge_card_values`]), which `compare` and `summary` read as they read a metric's.
///
/// ```
/// use polars::prelude::*;
/// use polars_rag::columnar::dispatch::is_judge_card_column;
/// let card = DataType::Struct(vec![
///     Field::new("score".into(), DataType::Int64),
///     Field::new("judge_error".into(), DataType::String),
/// ]);
/// assert!(is_judge_card_column("tone", &card));
/// assert!(!is_judge_card_column("faithfulness", &card)); // a metric of the table
/// assert!(!is_judge_card_column("tone", &DataType::Float64));
/// ```
pub fn is_judge_card_column(name: &str, dtype: &DataType) -> bool {
    let DataType::Struct(fields) = dtype else {
        return false;
    };
    crate::registry::find(name).is_none()
        && fields
            .last()
            .is_some_and(|f| f.name().as_str() == "judge_error" && f.dtype() == &DataType::String)
}

/// The values of a judge card's column `name` (see [`is_judge_card_column`]): each numeric or
/// boolean reply field as Float64 (booleans 0/1), labelled `<name>.<field>`; empty when the
/// table has no such column.
pub fn judge_card_values(scores: &DataFrame, name: &str) -> PolarsResult<Vec<(String, Series)>> {
    let Ok(column) = scores.column(name) else {
        return Ok(Vec::new());
    };
    let DataType::Struct(fields) = column.dtype() else {
        return Ok(Vec::new());
    };
    if !is_judge_card_column(name, column.dtype()) {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for field in fields {
        if let Some(values) = value_at(column.as_materialized_series(), field.name())? {
            out.push((format!("{name}.{}", field.name()), values));
        }
    }
    Ok(out)
}

/// The field at a dotted path into struct fields, as it is; `None` when the series has no such
/// field.
pub fn field_at(series: &Series, path: &str) -> PolarsResult<Option<Series>> {
    let mut current = series.clone();
    for field in path.split('.').filter(|f| !f.is_empty()) {
        let DataType::Struct(_) = current.dtype() else {
            return Ok(None);
        };
        match current.struct_()?.field_by_name(field) {
            Ok(s) => current = s,
            Err(_) => return Ok(None),
        }
    }
    Ok(Some(current))
}

/// The values at a dotted path into struct fields, as Float64; `None` when the column does not
/// have that shape.
pub(crate) fn value_at(series: &Series, path: &str) -> PolarsResult<Option<Series>> {
    let Some(current) = field_at(series, path)? else {
        return Ok(None);
    };
    let numeric = current.dtype().is_primitive_numeric() || current.dtype() == &DataType::Boolean;
    if !numeric {
        return Ok(None);
    }
    Ok(Some(current.cast(&DataType::Float64)?))
}

/// A corpus-level metric's per-row statistics in a scores table, one `Vec` per statistic (0.0
/// where a row has none, so it adds nothing to the sums); `None` when the table lacks them.
pub fn corpus_stats(
    scores: &DataFrame,
    stats: &crate::registry::CorpusStats,
) -> PolarsResult<Option<Vec<Vec<f64>>>> {
    use crate::registry::StatsLayout;
    let Ok(column) = scores.column(stats.column) else {
        return Ok(None);
    };
    let series = column.as_materialized_series();
    let zero_null = |s: &Series| -> PolarsResult<Vec<f64>> {
        Ok(s.cast(&DataType::Float64)?
            .f64()?
            .iter()
            .map(|v| v.filter(|v| !v.is_nan()).unwrap_or(0.0))
            .collect())
    };
    match stats.layout {
        StatsLayout::Fields(fields) => {
            let DataType::Struct(_) = series.dtype() else {
                return Ok(None);
            };
            let st = series.struct_()?;
            let mut out = Vec::with_capacity(fields.len());
            for f in fields {
                out.push(zero_null(&st.field_by_name(f)?)?);
            }
            Ok(Some(out))
        }
        StatsLayout::List(width) => {
            use polars_arrow::array::Array;
            series.list()?;
            // Read from the lists' flat values and offsets: a series per row would cost more
            // than the resampling of the statistics it holds.
            let lists = series.cast(&DataType::List(Box::new(DataType::Float64)))?;
            let mut out: Vec<Vec<f64>> = (0..width)
                .map(|_| Vec::with_capacity(scores.height()))
                .collect();
            for array in lists.list()?.downcast_iter() {
                let values = array
                    .values()
                    .as_any()
                    .downcast_ref::<polars_arrow::array::PrimitiveArray<f64>>()
                    .ok_or_else(|| polars_err!(ComputeError: "{}: statistics are not numbers", stats.column))?;
                for i in 0..array.len() {
                    let (start, end) = array.offsets().start_end(i);
                    let end = if array.is_valid(i) { end } else { start };
                    for (j, col) in out.iter_mut().enumerate() {
                        let at = start + j;
                        let v = if at < end && values.is_valid(at) {
                            values.value(at)
                        } else {
                            0.0
                        };
                        col.push(if v.is_nan() { 0.0 } else { v });
                    }
                }
            }
            Ok(Some(out))
        }
    }
}
