//! Python Polars plugin: `#[polars_expr]` shims over `polars_rag::polars::columns`. No metric
//! logic lives here: each shim decodes its keyword arguments into the library's `Options` struct
//! and calls the columnar function the Rust API and the CLI also call.

use polars::prelude::*;
use polars_rag::compare::CompareOptions;
use polars_rag::metrics::bleu::{BleuOptions, CorpusBleuOptions};
use polars_rag::metrics::chrf::ChrfOptions;
use polars_rag::metrics::citation::QuotedSpansOptions;
use polars_rag::metrics::lexical::CitationIndicatorOptions;
use polars_rag::metrics::locate::LocateOptions;
use polars_rag::metrics::retrieval::{RankedMetric, RetrievalOptions};
use polars_rag::metrics::rouge::RougeOptions;
use polars_rag::metrics::similarity::StringSimilarityOptions;
use polars_rag::metrics::spans::SpanOptions;
use polars_rag::metrics::MetricOptions;
use polars_rag::polars::columns;
use polars_rag::polars::compare;
use polars_rag::polars::corpus::{self, Corpus, SpanUnit};
use polars_rag::polars::driver;
use polars_rag::polars::golden;
use polars_rag::polars::locate;
use polars_rag::polars::retrieval::{self, SpanMetric};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3_polars::derive::{polars_expr, CallerContext, DefaultKwargs};
use pyo3_polars::PyDataFrame;
use serde::de::DeserializeOwned;

/// Decodes pickled keyword arguments into `T`, with an error naming the metric and, when one
/// argument is to blame, that argument.
fn options<T: DeserializeOwned>(metric: &str, kwargs: DefaultKwargs) -> PolarsResult<T> {
    let whole = match serde_pickle::from_value::<T>(kwargs.clone()) {
        Ok(decoded) => return Ok(decoded),
        Err(e) => e,
    };
    // Every options type fills left-out fields with defaults, so decoding one argument alone
    // tells whether that argument is the bad one.
    if let serde_pickle::Value::Dict(entries) = &kwargs {
        for (key, value) in entries {
            let alone = serde_pickle::Value::Dict([(key.clone(), value.clone())].into());
            if let Err(e) = serde_pickle::from_value::<T>(alone) {
                let name = match key {
                    serde_pickle::HashableValue::String(k) => k.clone(),
                    other => format!("{other:?}"),
                };
                let problem = match value {
                    serde_pickle::Value::I64(_) | serde_pickle::Value::Int(_)
                        if e.to_string().contains("too large") =>
                    {
                        format!("{value} is outside the range this option accepts")
                    }
                    _ => e.to_string(),
                };
                polars_bail!(InvalidOperation: "{metric}: invalid options: option '{name}': {problem}");
            }
        }
    }
    polars_bail!(InvalidOperation: "{metric}: invalid options: {whole}")
}

/// An error as it may cross the plugin boundary: Polars passes plugin errors on as C strings,
/// so a NUL character in a message (an option value or column content quoted back) is shown
/// as `\0` instead of ending the message.
fn boundary_error(e: PolarsError) -> PolarsError {
    e.wrap_msg(|m| m.replace('\0', "\\0"))
}

/// Runs one plugin call: an error keeps its kind with a boundary-safe message, and a panic in
/// the library (a defect) becomes an error naming the metric instead of unwinding into Polars.
fn guarded<T>(metric: &str, call: impl FnOnce() -> PolarsResult<T>) -> PolarsResult<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)) {
        Ok(result) => result.map_err(boundary_error),
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown cause".into());
            Err(boundary_error(
                polars_err!(ComputeError: "{metric}: internal error ({what}); please report it with the input that caused it"),
            ))
        }
    }
}

/// The input columns of a call as the library reads them (Categorical as strings, small
/// integers widened, ...): see `driver::readable_input`.
fn readable_inputs(metric: &str, series: &[Series]) -> PolarsResult<Vec<Series>> {
    series
        .iter()
        .map(|s| driver::readable_input(metric, s))
        .collect()
}

/// The `N` input columns of a call, or an error naming the metric: never an index panic.
fn input_columns<'a, const N: usize>(
    metric: &str,
    series: &'a [Series],
) -> PolarsResult<&'a [Series; N]> {
    series.try_into().map_err(
        |_| polars_err!(InvalidOperation: "{metric}: expected {N} input columns, got {}", series.len()),
    )
}

/// The output field of a call, after the input dtypes are checked (at planning time, before
/// Polars hands over any data).
fn checked_output(
    metric: &str,
    fields: &[Field],
    output: fn(&[Field]) -> PolarsResult<Field>,
) -> PolarsResult<Field> {
    guarded(metric, || {
        for field in fields {
            driver::check_input_field(metric, field)?;
        }
        output(fields)
    })
}

fn quoted_spans_field(_: &[Field]) -> PolarsResult<Field> {
    Ok(Field::new(
        "quoted_spans".into(),
        columns::quoted_spans_dtype(),
    ))
}

fn citation_alignment_field(_: &[Field]) -> PolarsResult<Field> {
    Ok(Field::new(
        "citation_alignment".into(),
        columns::citation_alignment_dtype(),
    ))
}

fn float_field(fields: &[Field]) -> PolarsResult<Field> {
    let name = fields
        .first()
        .map_or_else(|| "score".into(), |f| f.name().clone());
    Ok(Field::new(name, DataType::Float64))
}

fn checks_field(_: &[Field]) -> PolarsResult<Field> {
    Ok(Field::new("checks".into(), columns::checks_dtype()))
}

fn locate_quotes_field(_: &[Field]) -> PolarsResult<Field> {
    Ok(Field::new(
        "locate_quotes".into(),
        locate::locate_quotes_dtype(),
    ))
}

fn quotes_list_field(_: &[Field]) -> PolarsResult<Field> {
    Ok(Field::new(
        "quotes".into(),
        DataType::List(Box::new(DataType::String)),
    ))
}

fn cosine_field(_: &[Field]) -> PolarsResult<Field> {
    Ok(Field::new("cosine".into(), DataType::Float64))
}

fn rouge_field(_: &[Field]) -> PolarsResult<Field> {
    Ok(Field::new("rouge".into(), columns::rouge_dtype()))
}

/// One shim per metric id: check the input dtypes at planning time, decode the options, read the
/// inputs, call the columnar function. `parallel` is false when Polars already runs the call in
/// parallel (streaming morsels, group_by), so the library does not nest a second level of
/// parallelism.
macro_rules! shim {
    // Metrics without options take no keyword arguments (Polars sends none for an empty dict).
    ($id:ident, $field:ident, [$($input:ident),+], |$parallel:ident| $call:expr) => {
        paste::paste! {
            fn [<$id _output_field>](fields: &[Field]) -> PolarsResult<Field> {
                checked_output(stringify!($id), fields, $field)
            }

            #[polars_expr(output_type_func = [<$id _output_field>])]
            fn $id(series: &[Series], context: CallerContext) -> PolarsResult<Series> {
                let metric = stringify!($id);
                guarded(metric, || {
                    let inputs = readable_inputs(metric, series)?;
                    let [$($input),+] = input_columns(metric, &inputs)?;
                    let $parallel = !context.parallel();
                    $call
                })
            }
        }
    };
    ($id:ident, $field:ident, $options:ty, [$($input:ident),+], |$opts:ident, $parallel:ident| $call:expr) => {
        paste::paste! {
            fn [<$id _output_field>](fields: &[Field]) -> PolarsResult<Field> {
                checked_output(stringify!($id), fields, $field)
            }

            #[polars_expr(output_type_func = [<$id _output_field>])]
            fn $id(
                series: &[Series],
                context: CallerContext,
                kwargs: DefaultKwargs,
            ) -> PolarsResult<Series> {
                let metric = stringify!($id);
                guarded(metric, || {
                    let $opts: $options = options(metric, kwargs)?;
                    let inputs = readable_inputs(metric, series)?;
                    let [$($input),+] = input_columns(metric, &inputs)?;
                    let $parallel = !context.parallel();
                    $call
                })
            }
        }
    };
}

shim!(
    quoted_spans,
    quoted_spans_field,
    QuotedSpansOptions,
    [answer, sources],
    |o, parallel| columns::quoted_spans(answer, sources, &o, parallel)
);
shim!(
    citation_alignment,
    citation_alignment_field,
    QuotedSpansOptions,
    [answer, sources],
    |o, parallel| columns::citation_alignment_series(answer, sources, &o, parallel)
);
shim!(
    bleu,
    float_field,
    BleuOptions,
    [answer, references],
    |o, parallel| columns::bleu(answer, references, &o, parallel)
);
shim!(
    corpus_bleu,
    float_field,
    CorpusBleuOptions,
    [answer, references],
    |o, parallel| columns::corpus_bleu(answer, references, &o.0, parallel)
);
shim!(
    chrf,
    float_field,
    ChrfOptions,
    [answer, references],
    |o, parallel| columns::chrf(answer, references, &o, parallel)
);
shim!(
    rouge,
    rouge_field,
    RougeOptions,
    [answer, references],
    |o, parallel| columns::rouge(answer, references, &o, parallel)
);

shim!(exact_match, float_field, [answer, references], |parallel| {
    columns::exact_match(answer, references, parallel)
});
shim!(
    string_similarity,
    float_field,
    StringSimilarityOptions,
    [answer, references],
    |o, parallel| columns::string_similarity(answer, references, &o, parallel)
);
shim!(
    string_presence,
    float_field,
    [answer, references],
    |parallel| columns::string_presence(answer, references, parallel)
);

shim!(
    keyword_coverage,
    float_field,
    [answer, references],
    |parallel| columns::keyword_coverage(answer, references, parallel)
);
shim!(
    number_match,
    float_field,
    [answer, references],
    |parallel| columns::number_match(answer, references, parallel)
);
shim!(
    answer_completeness,
    float_field,
    [answer, references],
    |parallel| columns::answer_completeness(answer, references, parallel)
);
shim!(
    citation_indicators,
    float_field,
    CitationIndicatorOptions,
    [answer],
    |o, parallel| columns::citation_indicators(answer, &o, parallel)
);

shim!(checks, checks_field, [answer, checks], |parallel| {
    columns::checks(answer, checks, parallel)
});

// Retrieval: ranked lists (judged by text, id, span or embedding) and character spans.
shim!(
    precision_at_k,
    float_field,
    RetrievalOptions,
    [retrieved, ground_truth],
    |o, parallel| retrieval::ranked_metric(
        RankedMetric::PrecisionAtK,
        retrieved,
        ground_truth,
        &o,
        parallel
    )
);
shim!(
    recall_at_k,
    float_field,
    RetrievalOptions,
    [retrieved, ground_truth],
    |o, parallel| retrieval::ranked_metric(
        RankedMetric::RecallAtK,
        retrieved,
        ground_truth,
        &o,
        parallel
    )
);
shim!(
    f1_at_k,
    float_field,
    RetrievalOptions,
    [retrieved, ground_truth],
    |o, parallel| retrieval::ranked_metric(
        RankedMetric::F1AtK,
        retrieved,
        ground_truth,
        &o,
        parallel
    )
);
shim!(
    hybrid_log_rank,
    float_field,
    RetrievalOptions,
    [retrieved, ground_truth],
    |o, parallel| retrieval::ranked_metric(
        RankedMetric::HybridLogRank,
        retrieved,
        ground_truth,
        &o,
        parallel
    )
);
shim!(
    hit_rate_at_k,
    float_field,
    RetrievalOptions,
    [retrieved, ground_truth],
    |o, parallel| retrieval::ranked_metric(
        RankedMetric::HitRateAtK,
        retrieved,
        ground_truth,
        &o,
        parallel
    )
);
shim!(
    mrr,
    float_field,
    RetrievalOptions,
    [retrieved, ground_truth],
    |o, parallel| retrieval::ranked_metric(
        RankedMetric::Mrr,
        retrieved,
        ground_truth,
        &o,
        parallel
    )
);
shim!(
    average_precision,
    float_field,
    RetrievalOptions,
    [retrieved, ground_truth],
    |o, parallel| retrieval::ranked_metric(
        RankedMetric::AveragePrecision,
        retrieved,
        ground_truth,
        &o,
        parallel
    )
);
shim!(
    ndcg_at_k,
    float_field,
    RetrievalOptions,
    [retrieved, ground_truth],
    |o, parallel| retrieval::ranked_metric(
        RankedMetric::NdcgAtK,
        retrieved,
        ground_truth,
        &o,
        parallel
    )
);
shim!(
    r_precision,
    float_field,
    RetrievalOptions,
    [retrieved, ground_truth],
    |o, parallel| retrieval::ranked_metric(
        RankedMetric::RPrecision,
        retrieved,
        ground_truth,
        &o,
        parallel
    )
);
shim!(
    span_precision,
    float_field,
    SpanOptions,
    [retrieved, golden],
    |o, parallel| retrieval::span_metric(SpanMetric::Precision, retrieved, golden, &o, parallel)
);
shim!(
    span_recall,
    float_field,
    SpanOptions,
    [retrieved, golden],
    |o, parallel| retrieval::span_metric(SpanMetric::Recall, retrieved, golden, &o, parallel)
);
shim!(
    span_iou,
    float_field,
    SpanOptions,
    [retrieved, golden],
    |o, parallel| retrieval::span_metric(SpanMetric::Iou, retrieved, golden, &o, parallel)
);

shim!(
    locate_quotes,
    locate_quotes_field,
    LocateOptions,
    [quotes, sources],
    |o, parallel| locate::locate_quotes(quotes, sources, &o, parallel)
);
shim!(
    extract_quotes,
    quotes_list_field,
    QuotedSpansOptions,
    [answer],
    |o, _parallel| locate::extract_quotes(answer, &o)
);
shim!(embedding_cosine, cosine_field, [a, b], |_parallel| {
    locate::embedding_cosine(a, b)
});

/// Decodes pickled `locate_quotes` options.
fn locate_options(options: &[u8]) -> PyResult<LocateOptions> {
    serde_pickle::from_slice(options, serde_pickle::DeOptions::default()).map_err(|e| {
        py_err_in("locate_quotes_in_corpus")(format!("locate_quotes: invalid options: {e}"))
    })
}

/// Every quote located in one corpus (`file`, `text` table): one row per quote.
#[pyfunction]
#[pyo3(signature = (quotes, corpus, options))]
fn locate_table(
    quotes: pyo3_polars::PySeries,
    corpus: PyDataFrame,
    options: &[u8],
) -> PyResult<PyDataFrame> {
    py_guarded("locate_quotes_in_corpus", move || {
        let opts = locate_options(options)?;
        let corpus = readable("locate_quotes_in_corpus", &corpus.0)?;
        let quotes = driver::readable_input("locate_quotes_in_corpus", &quotes.0)
            .map_err(py_err_in("locate_quotes_in_corpus"))?;
        let df = locate::locate_table(&quotes, &corpus, &opts)
            .map_err(py_err_in("locate_quotes_in_corpus"))?;
        Ok(PyDataFrame(df))
    })
}

/// The statistics of a located table: a `variable`, `value` table and soak's melted CSV text.
#[pyfunction]
#[pyo3(signature = (located, options))]
fn locate_stats(located: PyDataFrame, options: &[u8]) -> PyResult<(PyDataFrame, String)> {
    py_guarded("locate_quotes_in_corpus", move || {
        let opts = locate_options(options)?;
        let stats =
            locate::stats_of(&located.0, &opts).map_err(py_err_in("locate_quotes_in_corpus"))?;
        let frame = locate::stats_frame(&stats).map_err(py_err_in("locate_quotes_in_corpus"))?;
        let csv = polars_rag::metrics::locate::stats::melted_csv(&stats);
        Ok((PyDataFrame(frame), csv))
    })
}

/// Writes the `.xlsx` workbook of a located table.
#[pyfunction]
#[pyo3(signature = (located, path, options))]
fn write_locate_workbook(located: PyDataFrame, path: &str, options: &[u8]) -> PyResult<()> {
    py_guarded("locate_quotes_in_corpus", move || {
        let opts = locate_options(options)?;
        locate::write_workbook(&located.0, std::path::Path::new(path), &opts)
            .map_err(py_err_in("locate_quotes_in_corpus"))
    })
}

/// The metric ids this build exposes, from the library's registry.
#[pyfunction]
fn metric_ids() -> Vec<&'static str> {
    polars_rag::registry::ids().collect()
}

/// The signature of `metric` under the pickled keyword options `options`.
#[pyfunction]
fn signature_of(metric: &str, options: &[u8]) -> PyResult<String> {
    py_guarded("signature", move || {
        let mut decoder =
            serde_pickle::Deserializer::new(options, serde_pickle::DeOptions::default());
        let opts =
            MetricOptions::for_metric(metric, &mut decoder).map_err(PyValueError::new_err)?;
        opts.signature(metric)
            .ok_or_else(|| PyValueError::new_err(format!("unknown metric '{metric}'")))
    })
}

/// Runs the body of a Python function: a panic in the library (a defect) becomes a `ValueError`
/// naming the function instead of pyo3's `PanicException`.
fn py_guarded<T>(function: &'static str, call: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)).unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown cause".into());
        Err(PyValueError::new_err(format!(
            "{function}: internal error ({what}); please report it with the input that caused it"
        )))
    })
}

/// A frame from Python as the library reads it (Categorical as strings, small integers
/// widened, ...), or a `ValueError` naming `function`.
fn readable(function: &'static str, df: &DataFrame) -> PyResult<DataFrame> {
    driver::readable_frame(function, df).map_err(py_err_in(function))
}

/// A `ValueError` whose message starts with the Python function it comes from.
fn py_err_in<E: std::fmt::Display>(function: &'static str) -> impl Fn(E) -> PyErr {
    move |e| {
        let message = e.to_string();
        if message.starts_with(function) {
            PyValueError::new_err(message)
        } else {
            PyValueError::new_err(format!("{function}: {message}"))
        }
    }
}

fn span_unit(unit: &str) -> PyResult<SpanUnit> {
    match unit {
        "codepoints" => Ok(SpanUnit::CodePoints),
        "bytes" => Ok(SpanUnit::Bytes),
        other => Err(py_err_in("check_spans")(format!(
            "unit must be 'codepoints' or 'bytes', got '{other}'"
        ))),
    }
}

/// The golden-dataset checks (`polars-rag validate`) on a DataFrame: one row per problem.
#[pyfunction]
#[pyo3(signature = (golden, corpus, id, unit))]
fn validate_golden(
    golden: PyDataFrame,
    corpus: Option<PyDataFrame>,
    id: &str,
    unit: &str,
) -> PyResult<PyDataFrame> {
    py_guarded("validate_golden", move || {
        let corpus = corpus
            .map(|c| {
                readable("validate_golden", &c.0)
                    .and_then(|c| Corpus::from_frame(&c).map_err(py_err_in("validate_golden")))
            })
            .transpose()?;
        let golden = readable("validate_golden", &golden.0)?;
        let found = golden::validate_golden(&golden, id, corpus.as_ref(), span_unit(unit)?)
            .map_err(py_err_in("validate_golden"))?;
        Ok(PyDataFrame(
            golden::problems_frame(&found.problems).map_err(py_err_in("validate_golden"))?,
        ))
    })
}

/// A span column checked against a corpus: the frame with the column converted to code points
/// (and texts filled when asked), and one row per problem.
#[pyfunction]
#[pyo3(signature = (frame, column, corpus, id, unit, fill_text))]
fn check_spans(
    frame: PyDataFrame,
    column: &str,
    corpus: PyDataFrame,
    id: &str,
    unit: &str,
    fill_text: bool,
) -> PyResult<(PyDataFrame, PyDataFrame)> {
    py_guarded("check_spans", move || {
        let corpus = Corpus::from_frame(&readable("check_spans", &corpus.0)?)
            .map_err(py_err_in("check_spans"))?;
        let mut df = readable("check_spans", &frame.0)?;
        let checked = corpus::check_spans(&df, id, column, &corpus, span_unit(unit)?, fill_text)
            .map_err(py_err_in("check_spans"))?;
        df.with_column(checked.column.into_column())
            .map_err(py_err_in("check_spans"))?;
        let problems: Vec<golden::Problem> = checked
            .issues
            .iter()
            .map(|i| ("span_outside_document", i))
            .chain(
                checked
                    .text_mismatches
                    .iter()
                    .map(|i| ("span_text_mismatch", i)),
            )
            .map(|(check, i)| golden::Problem {
                check,
                query_id: Some(i.query.clone()),
                column: column.to_string(),
                detail: format!("span #{}: {}", i.index, i.problem),
            })
            .collect();
        let problems = golden::problems_frame(&problems).map_err(py_err_in("check_spans"))?;
        Ok((PyDataFrame(df), PyDataFrame(problems)))
    })
}

fn compare_options(
    function: &'static str,
    resamples: usize,
    confidence: f64,
    seed: u64,
    top: usize,
) -> PyResult<CompareOptions> {
    if !(confidence > 0.0 && confidence < 1.0) {
        return Err(py_err_in(function)(format!(
            "confidence must be in (0, 1), got {confidence}"
        )));
    }
    Ok(CompareOptions {
        resamples,
        confidence,
        seed,
        top,
        ..Default::default()
    })
}

/// A candidate scores table against a baseline one: per-metric rows, per-segment rows and the
/// regressed items (`polars-rag compare`).
#[pyfunction]
#[pyo3(signature = (baseline, candidate, id, by, resamples, confidence, seed, top))]
#[allow(clippy::too_many_arguments)]
fn compare_tables(
    baseline: PyDataFrame,
    candidate: PyDataFrame,
    id: &str,
    by: Option<&str>,
    resamples: usize,
    confidence: f64,
    seed: u64,
    top: usize,
) -> PyResult<(PyDataFrame, PyDataFrame, PyDataFrame)> {
    py_guarded("compare", move || {
        let options = compare_options("compare", resamples, confidence, seed, top)?;
        let c = compare::compare_tables(
            &readable("compare", &baseline.0)?,
            &readable("compare", &candidate.0)?,
            id,
            by,
            &options,
        )
        .map_err(py_err_in("compare"))?;
        Ok((
            PyDataFrame(compare::metrics_frame(&c.metrics, None).map_err(py_err_in("compare"))?),
            PyDataFrame(compare::segments_frame(&c.segments).map_err(py_err_in("compare"))?),
            PyDataFrame(compare::regressions_frame(&c.regressions).map_err(py_err_in("compare"))?),
        ))
    })
}

/// Per-metric (and per-segment) means with bootstrap intervals (`polars-rag summary`).
#[pyfunction]
#[pyo3(signature = (scores, by, resamples, confidence, seed))]
fn summarize_table(
    scores: PyDataFrame,
    by: Option<&str>,
    resamples: usize,
    confidence: f64,
    seed: u64,
) -> PyResult<PyDataFrame> {
    py_guarded("summary", move || {
        let options = compare_options("summary", resamples, confidence, seed, 0)?;
        let rows = compare::summarize_table(&readable("summary", &scores.0)?, by, &options)
            .map_err(py_err_in("summary"))?;
        Ok(PyDataFrame(
            compare::summary_frame(&rows).map_err(py_err_in("summary"))?,
        ))
    })
}

#[pymodule]
fn _internal(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(compare_tables, m)?)?;
    m.add_function(wrap_pyfunction!(summarize_table, m)?)?;
    m.add_function(wrap_pyfunction!(metric_ids, m)?)?;
    m.add_function(wrap_pyfunction!(validate_golden, m)?)?;
    m.add_function(wrap_pyfunction!(check_spans, m)?)?;
    m.add_function(wrap_pyfunction!(signature_of, m)?)?;
    m.add_function(wrap_pyfunction!(locate_table, m)?)?;
    m.add_function(wrap_pyfunction!(locate_stats, m)?)?;
    m.add_function(wrap_pyfunction!(write_locate_workbook, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
