//! Python Polars plugin: one `#[polars_expr]` symbol, `metric`, for every metric of the
//! library's table. No metric logic lives here: it decodes its keyword arguments (the metric's
//! id and options section) and evaluates through `polars_rag::columnar::dispatch`, the path the
//! Rust API and the job also take.

use polars::prelude::*;
use polars_rag::columnar::corpus::{self, Corpus, SpanUnit};
use polars_rag::columnar::driver;
use polars_rag::columnar::embedded;
use polars_rag::columnar::golden;
use polars_rag::columnar::locate;
use polars_rag::columnar::{dispatch, join};
use polars_rag::compare::tables as comparison;
use polars_rag::compare::CompareOptions;
use polars_rag::engines::embed::EmbedSettings;
use polars_rag::metrics::judged::custom::CustomJudgeOptions;
use polars_rag::metrics::locate::LocateOptions;
use polars_rag::registry::{MetricId, MetricOptions, SectionReader};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3_polars::derive::{polars_expr, CallerContext, DefaultKwargs};
use pyo3_polars::{PyDataFrame, PySeries};
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

/// An error of the `metric` symbol, starting with the id of the metric that failed: Polars
/// shows the symbol (`metric(...)`) as the failing expression, not which metric it ran.
fn naming_metric(metric: MetricId, e: PolarsError) -> PolarsError {
    let id = metric.as_str();
    e.wrap_msg(|m| {
        if m.starts_with(id) {
            m.to_string()
        } else {
            format!("{id}: {m}")
        }
    })
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

/// The output field of a call, after the input dtypes are checked (at planning time, before
/// Polars hands over any data).
fn checked_output(metric: MetricId, fields: &[Field]) -> PolarsResult<Field> {
    guarded(metric.as_str(), || {
        for field in fields {
            driver::check_input_field(metric.as_str(), field)?;
        }
        Ok(dispatch::output_field(metric))
    })
}

/// Reads a metric's options section from its pickled keyword arguments, blaming one argument
/// when one is to blame.
struct PickledKwargs {
    metric: MetricId,
    kwargs: DefaultKwargs,
}

impl SectionReader for PickledKwargs {
    fn read<T: DeserializeOwned>(self) -> polars_rag::Result<T> {
        options(self.metric.as_str(), self.kwargs).map_err(|e| {
            // `options` already names the metric; `with_section` names it again.
            let message = e.to_string();
            let prefix = format!("{}: invalid options: ", self.metric);
            polars_rag::Error::options(
                message
                    .strip_prefix(&prefix)
                    .map_or(message.clone(), str::to_string),
            )
        })
    }
}

/// The keyword arguments of the `metric` symbol: the metric's id and its options section, as
/// the Python function (`_common._plugin`) pickles them.
struct MetricCall {
    metric: MetricId,
    options: DefaultKwargs,
}

impl MetricCall {
    fn from_kwargs(kwargs: DefaultKwargs) -> PolarsResult<Self> {
        let serde_pickle::Value::Dict(mut entries) = kwargs else {
            polars_bail!(InvalidOperation: "metric: keyword arguments must be a dict");
        };
        let mut take = |key: &str| entries.remove(&serde_pickle::HashableValue::String(key.into()));
        let metric = match take("metric") {
            Some(serde_pickle::Value::String(id)) => id.parse::<MetricId>()?,
            _ => polars_bail!(InvalidOperation: "metric: no metric id among the keyword arguments"),
        };
        let options =
            take("options").unwrap_or_else(|| serde_pickle::Value::Dict(Default::default()));
        Ok(MetricCall { metric, options })
    }
}

/// The output field of a `metric` call, after the input dtypes are checked (at planning time).
fn metric_output_field(fields: &[Field], kwargs: DefaultKwargs) -> PolarsResult<Field> {
    let call = MetricCall::from_kwargs(kwargs)?;
    checked_output(call.metric, fields).map_err(|e| naming_metric(call.metric, e))
}

/// The plugin's one symbol for every metric of the table: the Python function of a metric
/// names its id, the symbol decodes the options section and evaluates through
/// `dispatch::evaluate`, so a new metric needs nothing here. `parallel` is false when Polars
/// already runs the call in parallel (streaming morsels, group_by), so the library does not
/// nest a second level of parallelism.
#[polars_expr(output_type_func_with_kwargs = metric_output_field)]
fn metric(
    series: &[Series],
    context: CallerContext,
    kwargs: DefaultKwargs,
) -> PolarsResult<Series> {
    let call = MetricCall::from_kwargs(kwargs)?;
    let metric = call.metric;
    guarded(metric.as_str(), || {
        let options = MetricOptions::with_section(
            metric,
            PickledKwargs {
                metric,
                kwargs: call.options,
            },
        )?;
        evaluate(metric, series, context, options)
    })
    .map_err(|e| naming_metric(metric, e))
}

/// A metric call's body: the inputs as the library reads them, evaluated through the metric table.
fn evaluate(
    metric: MetricId,
    series: &[Series],
    context: CallerContext,
    options: MetricOptions,
) -> PolarsResult<Series> {
    guarded(metric.as_str(), || {
        let inputs = readable_inputs(metric.as_str(), series)?;
        dispatch::evaluate(metric, &inputs, &options, !context.parallel())
    })
}

/// Decodes `embed`'s pickled keyword arguments (the embedder's settings).
fn embed_settings(kwargs: DefaultKwargs) -> PolarsResult<EmbedSettings> {
    options("embed", kwargs)
}

/// `embed`'s output: `array[f32, d]` named like its input, `d` from the model.
fn embed_output_field(fields: &[Field], kwargs: DefaultKwargs) -> PolarsResult<Field> {
    guarded("embed", || {
        for field in fields {
            driver::check_input_field("embed", field)?;
            if !matches!(
                field.dtype(),
                DataType::String | DataType::Null | DataType::Categorical(..) | DataType::Enum(..)
            ) {
                polars_bail!(SchemaMismatch: "embed: column '{}' (text) must be of type String, got {}", field.name(), field.dtype());
            }
        }
        let name = fields
            .first()
            .map_or_else(|| "embed".into(), |f| f.name().clone());
        Ok(Field::new(
            name,
            embedded::embed_dtype(&embed_settings(kwargs)?)?,
        ))
    })
}

/// Texts to embedding vectors (`pr.embed`).
#[polars_expr(output_type_func_with_kwargs = embed_output_field)]
fn embed(series: &[Series], kwargs: DefaultKwargs) -> PolarsResult<Series> {
    guarded("embed", || {
        let inputs = readable_inputs("embed", series)?;
        let [texts] = inputs.as_slice() else {
            polars_bail!(ComputeError: "embed: expected one text column, got {}", inputs.len());
        };
        embedded::embed(texts, &embed_settings(kwargs)?)
    })
}

fn claim_check_report_output_field(fields: &[Field]) -> PolarsResult<Field> {
    let name = fields
        .first()
        .map_or("claim_check_report".into(), |f| f.name().clone());
    Ok(Field::new(
        name,
        polars_rag::columnar::verdicts::claim_check_report_dtype(),
    ))
}

/// RAGChecker's dataset report over a column of per-answer claim-check scores (an aggregate).
#[polars_expr(output_type_func = claim_check_report_output_field)]
fn claim_check_report(series: &[Series], kwargs: DefaultKwargs) -> PolarsResult<Series> {
    guarded("claim_check_report", || {
        let options = options("claim_check_report", kwargs)?;
        let [scores] = series else {
            polars_bail!(ComputeError: "claim_check_report: expected one column of scores, got {}", series.len());
        };
        let mut out = polars_rag::columnar::verdicts::claim_check_report(scores, &options)?;
        out.rename(scores.name().clone());
        Ok(out)
    })
}

/// Decodes a custom judge's pickled keyword arguments (its card and judge settings).
fn custom_judge_options(kwargs: DefaultKwargs) -> PolarsResult<CustomJudgeOptions> {
    options("custom_judge", kwargs)
}

/// An error of a custom judge, named as the function the user called (`custom_judge`) as well
/// as by the card's id, which the library's messages name.
fn naming_custom_judge(e: PolarsError) -> PolarsError {
    e.wrap_msg(|m| {
        if m.starts_with("custom_judge") {
            m.to_string()
        } else {
            format!("custom_judge {m}")
        }
    })
}

/// A custom judge's output: a struct named after its card's id, one field per reply field.
fn custom_judge_output_field(fields: &[Field], kwargs: DefaultKwargs) -> PolarsResult<Field> {
    guarded("custom_judge", || {
        let options = custom_judge_options(kwargs)?;
        let card = options.card()?;
        for field in fields {
            driver::check_input_field(&card.id, field)?;
        }
        Ok(Field::new(
            card.id.as_str().into(),
            polars_rag::columnar::judged::custom_judge_dtype(&options)?,
        ))
    })
    .map_err(naming_custom_judge)
}

/// A judge defined as data (`pr.custom_judge`): the inputs in the card's order.
#[polars_expr(output_type_func_with_kwargs = custom_judge_output_field)]
fn custom_judge(series: &[Series], kwargs: DefaultKwargs) -> PolarsResult<Series> {
    guarded("custom_judge", || {
        let options = custom_judge_options(kwargs)?;
        let inputs = readable_inputs(&options.card()?.id, series)?;
        polars_rag::columnar::judged::custom_judge(&inputs, &options)
    })
    .map_err(naming_custom_judge)
}

/// A custom judge's card, checked, with the output field of each reply field, as JSON:
/// `{"card": {...}, "fields": [["name", "dtype"], ...], "signature": "..."}`.
/// Errors name `function` (`custom_judge` or `custom_judge_card`, the Python function called).
#[pyfunction]
fn custom_judge_card(options: &[u8], function: &str) -> PyResult<String> {
    let function: &'static str = if function == "custom_judge_card" {
        "custom_judge_card"
    } else {
        "custom_judge"
    };
    py_guarded(function, move || {
        let options: CustomJudgeOptions =
            serde_pickle::from_slice(options, serde_pickle::DeOptions::default())
                .map_err(|e| PyValueError::new_err(format!("{function}: invalid options: {e}")))?;
        let card = options.card().map_err(py_err_in(function))?;
        let dtype = polars_rag::columnar::judged::custom_judge_dtype(&options)
            .map_err(py_err_in(function))?;
        // `[name, dtype]` pairs, in the output's order (a JSON object would sort them).
        let fields: Vec<(String, String)> = match dtype {
            DataType::Struct(fields) => fields
                .iter()
                .map(|f| (f.name().to_string(), f.dtype().to_string()))
                .collect(),
            _ => Vec::new(),
        };
        Ok(serde_json::json!({
            "card": card,
            "fields": fields,
            "signature": polars_rag::metrics::judged::custom::signature(&options),
        })
        .to_string())
    })
}

/// Decodes pickled embedding settings for a pyfunction.
fn embed_settings_of(function: &str, settings: &[u8]) -> PyResult<EmbedSettings> {
    serde_pickle::from_slice(settings, serde_pickle::DeOptions::default())
        .map_err(|e| PyValueError::new_err(format!("{function}: invalid embedding settings: {e}")))
}

/// What the process's embedder for these (pickled) settings has done, as JSON (zeros when it
/// was never used), with its signature when it was built.
#[pyfunction]
fn embed_usage(settings: &[u8]) -> PyResult<String> {
    py_guarded("Embedder.usage", move || {
        let settings = embed_settings_of("Embedder.usage", settings)?;
        let existing = polars_rag::engines::embed::Embedder::existing(&settings);
        let usage = existing.as_ref().map(|e| e.usage()).unwrap_or_default();
        let mut value = serde_json::to_value(usage).map_err(py_err_in("Embedder.usage"))?;
        value["signature"] = existing.map(|e| e.signature()).into();
        Ok(value.to_string())
    })
}

/// The signature of the embeddings these (pickled) settings give (the model is loaded).
#[pyfunction]
fn embed_signature(settings: &[u8]) -> PyResult<String> {
    py_guarded("Embedder.signature", move || {
        let settings = embed_settings_of("Embedder.signature", settings)?;
        let embedder =
            polars_rag::engines::embed::Embedder::shared(&settings, "Embedder.signature")
                .map_err(py_err_in("Embedder.signature"))?;
        Ok(embedder.signature())
    })
}

/// The default embedding settings, as JSON.
#[pyfunction]
fn embed_defaults() -> PyResult<String> {
    serde_json::to_string(&EmbedSettings::default()).map_err(py_err_in("embed_defaults"))
}

/// `stats` or `clear` of the embedding cache in `directory` (None: the default), as JSON / a count.
#[pyfunction]
#[pyo3(signature = (action, directory))]
fn embed_cache(action: &str, directory: Option<String>) -> PyResult<String> {
    use polars_rag::engines::embed::{
        clear_embedding_cache, default_cache_dir, embedding_cache_stats,
    };
    py_guarded("embed_cache", move || {
        let function = "embed_cache";
        let dir = directory.map_or_else(default_cache_dir, std::path::PathBuf::from);
        match action {
            "stats" => {
                let stats = embedding_cache_stats(&dir).map_err(py_err_in(function))?;
                serde_json::to_string(&stats).map_err(py_err_in(function))
            }
            "clear" => Ok(clear_embedding_cache(&dir)
                .map_err(py_err_in(function))?
                .to_string()),
            other => Err(PyValueError::new_err(format!(
                "{function}: unknown action {other:?}"
            ))),
        }
    })
}

/// Decodes pickled `locate_quotes` options, with an error naming the option to blame.
fn locate_options(options: &[u8]) -> PyResult<LocateOptions> {
    let value = serde_pickle::value_from_slice(options, serde_pickle::DeOptions::default())
        .map_err(|e| {
            py_err_in("locate_quotes_in_corpus")(format!("locate_quotes: invalid options: {e}"))
        })?;
    self::options("locate_quotes", value).map_err(py_err_in("locate_quotes_in_corpus"))
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
fn write_locate_workbook(located: PyDataFrame, path: &str, options: &[u8]) -> PyResult<usize> {
    py_guarded("locate_quotes_in_corpus", move || {
        let opts = locate_options(options)?;
        locate::write_workbook(&located.0, std::path::Path::new(path), &opts)
            .map_err(py_err_in("locate_quotes_in_corpus"))
    })
}

/// The rows of a judged table to check by hand, most suspicious first; with `xlsx`, also
/// written as a workbook there.
#[pyfunction]
#[pyo3(signature = (frame, support, xlsx=None))]
fn citation_review(frame: PyDataFrame, support: &str, xlsx: Option<&str>) -> PyResult<PyDataFrame> {
    py_guarded("citation_review", move || {
        let frame = readable("citation_review", &frame.0)?;
        let review = polars_rag::columnar::judged::citation_review(&frame, support)
            .map_err(py_err_in("citation_review"))?;
        if let Some(path) = xlsx {
            polars_rag::columnar::judged::write_citation_review(
                &review,
                std::path::Path::new(path),
            )
            .map_err(py_err_in("citation_review"))?;
        }
        Ok(PyDataFrame(review))
    })
}

/// The metric ids this build exposes, from the library's registry.
#[pyfunction]
fn metric_ids() -> Vec<&'static str> {
    polars_rag::registry::ids().collect()
}

/// The metric table as JSON text: every entry with its output dtype, its options' defaults,
/// formula, example and reference (`polars_rag::columnar::catalogue`).
#[pyfunction]
fn metric_catalogue() -> PyResult<String> {
    let catalogue =
        polars_rag::columnar::catalogue::catalogue().map_err(py_err_in("metric_catalogue"))?;
    serde_json::to_string(&catalogue).map_err(py_err_in("metric_catalogue"))
}

/// The default options of `metric` as JSON text: an object from option name to value (empty for
/// a metric without options), read from the library's options types.
#[pyfunction]
fn option_defaults(metric: &str) -> PyResult<String> {
    py_guarded("option_defaults", move || {
        let metric: MetricId = metric.parse().map_err(py_err_in("option_defaults"))?;
        let mut text = Vec::new();
        MetricOptions::defaults_of(metric, &mut serde_json::Serializer::new(&mut text))
            .map_err(py_err_in("option_defaults"))?;
        String::from_utf8(text).map_err(|e| py_err_in("option_defaults")(e.to_string()))
    })
}

/// The default comparison settings (`CompareOptions`) as JSON text.
#[pyfunction]
fn compare_defaults() -> PyResult<String> {
    serde_json::to_string(&CompareOptions::default()).map_err(py_err_in("compare_defaults"))
}

/// The signature of `metric` under the pickled keyword options `options`.
#[pyfunction]
fn signature_of(metric: &str, options: &[u8]) -> PyResult<String> {
    py_guarded("signature", move || {
        let mut decoder =
            serde_pickle::Deserializer::new(options, serde_pickle::DeOptions::default());
        let metric: MetricId = metric.parse().map_err(py_err_in("signature"))?;
        let opts =
            MetricOptions::for_metric(metric, &mut decoder).map_err(py_err_in("signature"))?;
        Ok(opts.signature(metric))
    })
}

/// Whether `metric` must read its whole input column under the pickled keyword options (then the
/// Python side registers it as non-elementwise, so streaming batches cannot change a row). A
/// planning hint only: options that do not decode are reported by the metric's own call.
#[pyfunction]
fn reads_whole_column(metric: &str, options: &[u8]) -> bool {
    std::panic::catch_unwind(|| {
        let mut decoder =
            serde_pickle::Deserializer::new(options, serde_pickle::DeOptions::default());
        let Ok(metric) = metric.parse::<MetricId>() else {
            return false;
        };
        MetricOptions::for_metric(metric, &mut decoder)
            .is_ok_and(|o| dispatch::reads_whole_column(metric, &o))
    })
    .unwrap_or(false)
}

/// The agreement of a verdicts column with a labels column: a one-row summary and the
/// confusion matrix (`pr.judge_agreement`).
#[pyfunction]
fn judge_agreement(predicted: PySeries, labels: PySeries) -> PyResult<(PyDataFrame, PyDataFrame)> {
    py_guarded("judge_agreement", move || {
        let (summary, confusion) =
            polars_rag::columnar::judged::judge_agreement(&predicted.0, &labels.0)
                .map_err(py_err_in("judge_agreement"))?;
        Ok((PyDataFrame(summary), PyDataFrame(confusion)))
    })
}

/// Judge settings from pickled keyword settings, with errors naming `function`.
fn judge_settings(
    function: &'static str,
    settings: &[u8],
) -> PyResult<polars_rag::engines::judge::JudgeSettings> {
    let mut decoder = serde_pickle::Deserializer::new(settings, serde_pickle::DeOptions::default());
    serde::Deserialize::deserialize(&mut decoder)
        .map_err(|e| PyValueError::new_err(format!("{function}: invalid judge settings: {e}")))
}

/// What the process's judge for these (pickled) settings has spent, per prompt, as JSON (`{}`
/// when it has not been used).
#[pyfunction]
fn judge_usage(settings: &[u8]) -> PyResult<String> {
    py_guarded("Judge.usage", move || {
        let settings = judge_settings("Judge.usage", settings)?;
        let usage = polars_rag::engines::judge::Judge::existing(&settings)
            .map(|judge| judge.usage())
            .unwrap_or_default();
        serde_json::to_string(&usage).map_err(py_err_in("Judge.usage"))
    })
}

/// The default judge settings, as JSON.
#[pyfunction]
fn judge_defaults() -> PyResult<String> {
    serde_json::to_string(&polars_rag::engines::judge::JudgeSettings::default())
        .map_err(py_err_in("Judge"))
}

/// `url` without the credentials of its authority (for what Python prints).
#[pyfunction]
fn redact_url(url: &str) -> String {
    polars_rag::engines::redact_url(url)
}

/// `stats` or `clear` of the judge cache in `directory` (None: the default directory), as JSON.
#[pyfunction]
#[pyo3(signature = (action, directory, template))]
fn judge_cache(
    action: &str,
    directory: Option<String>,
    template: Option<String>,
) -> PyResult<String> {
    use polars_rag::engines::judge::{cache, default_cache_dir};
    py_guarded("judge_cache", move || {
        let dir = directory
            .map(std::path::PathBuf::from)
            .unwrap_or_else(default_cache_dir);
        let function = "judge_cache";
        match action {
            "clear" => {
                let removed =
                    cache::clear_cache(&dir, template.as_deref()).map_err(py_err_in(function))?;
                Ok(removed.to_string())
            }
            _ => {
                let stats = cache::cache_stats(&dir).map_err(py_err_in(function))?;
                serde_json::to_string(&stats).map_err(py_err_in(function))
            }
        }
    })
}

/// The judge log of a cache directory as a table (`polars-rag judge-cache log`).
#[pyfunction]
#[pyo3(signature = (directory, template))]
fn judge_log(directory: Option<String>, template: Option<String>) -> PyResult<PyDataFrame> {
    use polars_rag::engines::judge::default_cache_dir;
    py_guarded("judge_log", move || {
        let dir = directory
            .map(std::path::PathBuf::from)
            .unwrap_or_else(default_cache_dir);
        let log = polars_rag::columnar::judged::judge_log_frame(&dir, template.as_deref())
            .map_err(py_err_in("judge_log"))?;
        Ok(PyDataFrame(log))
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

/// The Python exception of a library error: the class of its kind in `polars_rag.exceptions`
/// (each a subclass of the built-in class a caller would catch: `ValueError`,
/// `FileNotFoundError`, `OSError`, `RuntimeError`, `KeyboardInterrupt`), chosen by the kind and
/// never by the message. The one place a library error becomes a Python one.
fn py_error(kind: polars_rag::ErrorKind, message: String) -> PyErr {
    Python::attach(|py| {
        let made = py
            .import("polars_rag.exceptions")
            .and_then(|module| module.getattr("from_kind"))
            .and_then(|from_kind| from_kind.call1((kind.name(), message.as_str())));
        match made {
            Ok(exception) => PyErr::from_value(exception),
            // Only when the package's Python half is missing (the bare extension module).
            Err(_) => PyValueError::new_err(message),
        }
    })
}

/// An error of `function` as its Python exception ([`py_error`]), the message starting with the
/// function's name.
fn py_err_in<E: Into<polars_rag::Error>>(function: &'static str) -> impl Fn(E) -> PyErr {
    move |e| {
        let e: polars_rag::Error = e.into();
        let mut message = e.message().to_string();
        // Polars puts its error kind first ("not found: calibrate: ..."); the message that names
        // the function says more on its own.
        if let Some(at) = message.find(&format!("{function}: ")) {
            if at > 0 && at < 40 && message[..at].ends_with(": ") {
                message = message[at..].to_string();
            }
        }
        if !message.starts_with(function) {
            message = format!("{function}: {message}");
        }
        py_error(e.kind(), message)
    }
}

fn span_unit(function: &'static str, unit: &str) -> PyResult<SpanUnit> {
    unit.parse().map_err(py_err_in(function))
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
        let found = golden::validate_golden(
            &golden,
            id,
            corpus.as_ref(),
            span_unit("validate_golden", unit)?,
        )
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
        let checked = corpus::check_spans(
            &df,
            id,
            column,
            &corpus,
            span_unit("check_spans", unit)?,
            fill_text,
        )
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

/// A long run collapsed into one row per query (`polars-rag score` does the same).
#[pyfunction]
#[pyo3(signature = (run, id))]
fn collapse_run(run: PyDataFrame, id: &str) -> PyResult<PyDataFrame> {
    py_guarded("collapse_run", move || {
        let run = readable("collapse_run", &run.0)?;
        let collapsed = join::collapse_run(&run, id).map_err(py_err_in("collapse_run"))?;
        Ok(PyDataFrame(collapsed))
    })
}

/// A run joined to its golden table: the frame, then the missing, unknown, duplicate golden and
/// duplicate run ids.
#[pyfunction]
#[pyo3(signature = (golden, run, id))]
#[allow(clippy::type_complexity)]
fn join_golden(
    golden: PyDataFrame,
    run: PyDataFrame,
    id: &str,
) -> PyResult<(PyDataFrame, PySeries, PySeries, PySeries, PySeries)> {
    py_guarded("join_golden", move || {
        let golden = readable("join_golden", &golden.0)?;
        let run = readable("join_golden", &run.0)?;
        let joined = join::join_golden(&golden, &run, id).map_err(py_err_in("join_golden"))?;
        Ok((
            PyDataFrame(joined.frame),
            PySeries(joined.missing),
            PySeries(joined.unknown),
            PySeries(joined.duplicate_golden),
            PySeries(joined.duplicate_run),
        ))
    })
}

/// A column of p-values adjusted as one family (`pr.adjust_p_values`).
#[pyfunction]
#[pyo3(signature = (p, method))]
fn adjust_p_values(p: PySeries, method: &str) -> PyResult<PySeries> {
    py_guarded("adjust_p_values", move || {
        let method = method.parse().map_err(py_err_in("adjust_p_values"))?;
        let name = p.0.name().clone();
        let values: Vec<Option<f64>> =
            p.0.f64()
                .map_err(py_err_in("adjust_p_values"))?
                .iter()
                .collect();
        let adjusted =
            polars_rag::compare::stats::adjust_p_values("adjust_p_values", &values, method)
                .map_err(py_err_in("adjust_p_values"))?;
        Ok(PySeries(Series::new(name, adjusted)))
    })
}

fn compare_options(
    function: &'static str,
    resamples: usize,
    confidence: f64,
    seed: u64,
    top: usize,
    alternative: &str,
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
        alternative: alternative.parse().map_err(py_err_in(function))?,
        ..Default::default()
    })
}

/// A candidate scores table against a baseline one: per-metric rows, per-segment rows and the
/// regressed items (`polars-rag compare`).
#[pyfunction]
fn compare_tables(
    baseline: PyDataFrame,
    candidate: PyDataFrame,
    settings: &Bound<'_, pyo3::types::PyDict>,
) -> PyResult<(PyDataFrame, PyDataFrame, PyDataFrame, PyDataFrame)> {
    let s: ComparisonSettings = settings_of("compare", settings)?;
    py_guarded("compare", move || {
        let options = CompareOptions {
            adjust: s.adjust.parse().map_err(py_err_in("compare"))?,
            ..compare_options(
                "compare",
                s.resamples,
                s.confidence,
                s.seed,
                s.top,
                &s.alternative,
            )?
        };
        let mut c = comparison::compare_tables_clustered(
            &readable("compare", &baseline.0)?,
            &readable("compare", &candidate.0)?,
            &s.id,
            s.by.as_deref(),
            s.cluster.as_deref(),
            &options,
        )
        .map_err(py_err_in("compare"))?;
        if !s.family.is_empty() {
            c.decide_family_of(&s.family)
                .map_err(py_err_in("compare"))?;
        }
        Ok((
            PyDataFrame(comparison::metrics_frame(&c.metrics, None).map_err(py_err_in("compare"))?),
            PyDataFrame(comparison::segments_frame(&c.segments).map_err(py_err_in("compare"))?),
            PyDataFrame(
                comparison::regressions_frame(&c.regressions).map_err(py_err_in("compare"))?,
            ),
            PyDataFrame(comparison::integrity_frame(&c.integrity).map_err(py_err_in("compare"))?),
        ))
    })
}

/// Several scores tables ranked per metric (`polars-rag leaderboard`): the standings and the
/// pairs.
#[pyfunction]
fn leaderboard_tables(
    runs: Vec<(String, PyDataFrame)>,
    settings: &Bound<'_, pyo3::types::PyDict>,
) -> PyResult<(PyDataFrame, PyDataFrame)> {
    let s: ComparisonSettings = settings_of("leaderboard", settings)?;
    py_guarded("leaderboard", move || {
        let (id, cluster) = (s.id.as_str(), s.cluster.as_deref());
        let options = CompareOptions {
            adjust: s.adjust.parse().map_err(py_err_in("leaderboard"))?,
            ..compare_options(
                "leaderboard",
                s.resamples,
                s.confidence,
                s.seed,
                0,
                &s.alternative,
            )?
        };
        let frames: Vec<(String, DataFrame)> = runs
            .into_iter()
            .map(|(name, frame)| Ok((name, readable("leaderboard", &frame.0)?)))
            .collect::<PyResult<_>>()?;
        let sources: Vec<(&str, &dyn polars_rag::compare::source::ScoresSource)> = frames
            .iter()
            .map(|(name, frame)| {
                (
                    name.as_str(),
                    frame as &dyn polars_rag::compare::source::ScoresSource,
                )
            })
            .collect();
        let board =
            polars_rag::compare::streamed::leaderboard_sources(&sources, id, cluster, &options)
                .map_err(py_err_in("leaderboard"))?;
        Ok((
            PyDataFrame(comparison::standings_frame(&board).map_err(py_err_in("leaderboard"))?),
            PyDataFrame(comparison::pairs_frame(&board).map_err(py_err_in("leaderboard"))?),
        ))
    })
}

/// The next comparison's sample planned from a pilot pair of scores tables, or from one table
/// with an assumed correlation (`polars-rag plan`).
#[pyfunction]
#[pyo3(signature = (baseline, candidate, labels, settings))]
fn plan_tables(
    baseline: PyDataFrame,
    candidate: Option<PyDataFrame>,
    labels: Option<(PyDataFrame, PyDataFrame)>,
    settings: &Bound<'_, pyo3::types::PyDict>,
) -> PyResult<PyDataFrame> {
    let s: LabelledSettings = settings_of("plan", settings)?;
    py_guarded("plan", move || {
        let (id, cluster) = (s.id.as_str(), s.cluster.as_deref());
        let options = polars_rag::compare::plan::PlanOptions {
            mde: s.mde,
            power: s.power,
            alpha: s.alpha,
            tests: s.tests,
            alternative: s.alternative.parse().map_err(py_err_in("plan"))?,
            samples: s.samples,
            correlation: s.correlation,
        };
        let baseline = readable("plan", &baseline.0)?;
        let candidate = candidate.map(|c| readable("plan", &c.0)).transpose()?;
        let mut rows = match &candidate {
            Some(candidate) => comparison::plan_tables(&baseline, candidate, id, cluster, &options),
            None => comparison::plan_table(&baseline, cluster, &options),
        }
        .map_err(py_err_in("plan"))?;
        if let Some((baseline_labels, candidate_labels)) = labels {
            let Some(candidate) = &candidate else {
                return Err(PyValueError::new_err(
                    "plan: labels are planned from a labelled pilot pair of runs: give candidate",
                ));
            };
            comparison::plan_labels(
                &mut rows,
                &baseline,
                candidate,
                (
                    &readable("plan", &baseline_labels.0)?,
                    &readable("plan", &candidate_labels.0)?,
                ),
                id,
                cluster,
                &options,
            )
            .map_err(py_err_in("plan"))?;
        }
        Ok(PyDataFrame(
            comparison::plan_frame(&rows).map_err(py_err_in("plan"))?,
        ))
    })
}

/// Per-metric (and per-segment) means with bootstrap intervals (`polars-rag summary`).
#[pyfunction]
fn summarize_table(
    scores: PyDataFrame,
    settings: &Bound<'_, pyo3::types::PyDict>,
) -> PyResult<PyDataFrame> {
    let s: ComparisonSettings = settings_of("summary", settings)?;
    py_guarded("summary", move || {
        let options =
            compare_options("summary", s.resamples, s.confidence, s.seed, 0, "two-sided")?;
        let rows = comparison::summarize_table_clustered(
            &readable("summary", &scores.0)?,
            s.by.as_deref(),
            s.cluster.as_deref(),
            &options,
        )
        .map_err(py_err_in("summary"))?;
        Ok(PyDataFrame(
            comparison::summary_frame(&rows).map_err(py_err_in("summary"))?,
        ))
    })
}

/// Scores tables calibrated against labels: the calibration rows and the confusion cells
/// (`polars-rag calibrate`).
#[pyfunction]
fn calibrate_tables(
    runs: Vec<(String, PyDataFrame)>,
    labels: PyDataFrame,
    settings: &Bound<'_, pyo3::types::PyDict>,
) -> PyResult<(PyDataFrame, PyDataFrame)> {
    use polars_rag::compare::calibrate;
    let s: LabelledSettings = settings_of("calibrate", settings)?;
    py_guarded("calibrate", move || {
        let (id, by) = (s.id.as_str(), s.by.as_deref());
        let options = calibrate::CalibrateOptions {
            ppi: polars_rag::metrics::ppi::PpiOptions {
                alpha: s.alpha,
                alternative: s.alternative.parse().map_err(py_err_in("calibrate"))?,
                lam: s.lam,
                ..Default::default()
            },
            cluster: s.cluster.clone(),
        };
        let runs = runs
            .into_iter()
            .map(|(name, frame)| Ok((name, readable("calibrate", &frame.0)?)))
            .collect::<PyResult<Vec<_>>>()?;
        let c = calibrate::calibrate_tables(
            &runs,
            &readable("calibrate", &labels.0)?,
            id,
            by,
            &options,
        )
        .map_err(py_err_in("calibrate"))?;
        Ok((
            PyDataFrame(calibrate::calibration_frame(&c.rows).map_err(py_err_in("calibrate"))?),
            PyDataFrame(calibrate::confusion_frame(&c.confusion).map_err(py_err_in("calibrate"))?),
        ))
    })
}

/// Judge drift: the same two runs compared under two judge settings; the metrics whose delta
/// differs, with both verdicts (`polars-rag compare --rejudged-baseline ... --rejudged-candidate`).
#[pyfunction]
fn judge_drift(
    baseline: PyDataFrame,
    candidate: PyDataFrame,
    rejudged_baseline: PyDataFrame,
    rejudged_candidate: PyDataFrame,
    settings: &Bound<'_, pyo3::types::PyDict>,
) -> PyResult<PyDataFrame> {
    let s: ComparisonSettings = settings_of("judge_drift", settings)?;
    py_guarded("judge_drift", move || {
        let id = s.id.as_str();
        let options = compare_options(
            "judge_drift",
            s.resamples,
            s.confidence,
            s.seed,
            0,
            &s.alternative,
        )?;
        let first = comparison::compare_tables(
            &readable("judge_drift", &baseline.0)?,
            &readable("judge_drift", &candidate.0)?,
            id,
            None,
            &options,
        )
        .map_err(py_err_in("judge_drift"))?;
        let second = comparison::compare_tables(
            &readable("judge_drift", &rejudged_baseline.0)?,
            &readable("judge_drift", &rejudged_candidate.0)?,
            id,
            None,
            &options,
        )
        .map_err(py_err_in("judge_drift"))?;
        let changes = polars_rag::compare::verdict_changes(&first.metrics, &second.metrics);
        Ok(PyDataFrame(
            comparison::verdict_changes_frame(&changes).map_err(py_err_in("judge_drift"))?,
        ))
    })
}

/// Judged deltas between two scores tables estimated from labels of both runs
/// (`polars-rag compare --baseline-labels ... --candidate-labels ...`).
#[pyfunction]
fn labelled_deltas(
    baseline: PyDataFrame,
    candidate: PyDataFrame,
    baseline_labels: PyDataFrame,
    candidate_labels: PyDataFrame,
    settings: &Bound<'_, pyo3::types::PyDict>,
) -> PyResult<PyDataFrame> {
    use polars_rag::compare::calibrate;
    let s: LabelledSettings = settings_of("labelled_deltas", settings)?;
    py_guarded("labelled_deltas", move || {
        let (id, cluster) = (s.id.as_str(), s.cluster.as_deref());
        let ppi = polars_rag::metrics::ppi::PpiOptions {
            alpha: s.alpha,
            alternative: s
                .alternative
                .parse()
                .map_err(py_err_in("labelled_deltas"))?,
            lam: s.lam,
            ..Default::default()
        };
        let rows = calibrate::labelled_deltas_clustered(
            &readable("labelled_deltas", &baseline.0)?,
            &readable("labelled_deltas", &candidate.0)?,
            (
                &readable("labelled_deltas", &baseline_labels.0)?,
                &readable("labelled_deltas", &candidate_labels.0)?,
            ),
            id,
            cluster,
            &ppi,
        )
        .map_err(py_err_in("labelled_deltas"))?;
        Ok(PyDataFrame(
            calibrate::labelled_deltas_frame(&rows).map_err(py_err_in("labelled_deltas"))?,
        ))
    })
}

/// The items of a scores table to label (`polars-rag sample`): the sheet, and the workbook
/// written at `xlsx` when given.
#[pyfunction]
fn labelling_sheet(
    scores: PyDataFrame,
    settings: &Bound<'_, pyo3::types::PyDict>,
) -> PyResult<PyDataFrame> {
    use polars_rag::compare::labelling;
    let s: SampleSettings = settings_of("sample_for_labelling", settings)?;
    py_guarded("sample_for_labelling", move || {
        let options = labelling::LabelSampleOptions {
            n: s.n,
            seed: s.seed,
            min_per_stratum: s.min_per_stratum,
        };
        let sheet = labelling::labelling_sheet(
            &readable("sample_for_labelling", &scores.0)?,
            &s.id,
            s.by.as_deref(),
            s.values.as_deref(),
            &options,
        )
        .map_err(py_err_in("sample_for_labelling"))?;
        if let Some(path) = s.xlsx {
            labelling::write_labelling_sheet(
                &sheet,
                std::path::Path::new(&path),
                "sample_for_labelling",
            )
            .map_err(py_err_in("sample_for_labelling"))?;
        }
        Ok(PyDataFrame(sheet.frame))
    })
}

/// A labels table at `path`: a filled-in labelling workbook (`.xlsx`) or a Parquet file, read
/// as `polars-rag calibrate --labels` reads it, for the Python function `function`. The GIL is
/// released while the file is read. With `id`, a workbook's row that holds a label but no id is
/// an error naming the row.
#[pyfunction]
#[pyo3(signature = (path, function, id=None))]
fn read_labels(
    py: Python<'_>,
    path: String,
    function: &str,
    id: Option<&str>,
) -> PyResult<PyDataFrame> {
    let function = match function {
        "labelled_deltas" => "labelled_deltas",
        _ => "calibrate",
    };
    let id = id.map(str::to_string);
    py.detach(|| {
        py_guarded(function, move || {
            let path = std::path::Path::new(&path);
            let frame =
                polars_rag::job::calibrate::read_labels_keyed(path, function, id.as_deref())
                    .map_err(py_err_in(function))?;
            Ok(PyDataFrame(frame))
        })
    })
}

/// The `polars-rag` command line, run in this process on `argv` (program name first, as
/// `sys.argv`): the same parser and jobs as the cargo-built binary. Returns the exit status.
/// The GIL is released while it runs (a job may take hours, and other Python threads, such as
/// a local judge server, must go on).
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<String>) -> PyResult<u8> {
    py.detach(|| py_guarded("polars-rag", move || Ok(polars_rag::cli::app::run(argv))))
}

/// The name of an error's kind as `polars_rag.exceptions.from_kind` takes it; `None` without an
/// error.
type ErrorKindName = Option<&'static str>;

/// [`main`], keeping what the command prints: `(status, stdout, stderr, kind)`, `kind` the name
/// of its error's kind (`None` without one). Warnings and the progress line still go to the
/// process's stderr.
#[pyfunction]
fn main_captured(
    py: Python<'_>,
    argv: Vec<String>,
) -> PyResult<(u8, String, String, ErrorKindName)> {
    py.detach(|| {
        py_guarded("polars-rag", move || {
            let c = polars_rag::cli::app::run_captured(argv);
            Ok((c.status, c.out, c.err, c.kind.map(|k| k.name())))
        })
    })
}

/// A Python value of a function's settings (`pr.score`'s keywords, a table function's) as the
/// JSON value serde reads them from: `bool`, `int`, `float` (finite), `str`, a path
/// (`os.PathLike`), a list or tuple, a dict with `str` keys. `None` is refused: a setting left out
/// takes its default. Errors name `function` and the setting (`at`).
fn setting_value(
    value: &Bound<'_, PyAny>,
    function: &'static str,
    at: &str,
) -> PyResult<serde_json::Value> {
    use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
    let refused = |what: String| {
        py_error(
            polars_rag::ErrorKind::InvalidInput,
            format!("{function}: setting {at}: {what}"),
        )
    };
    if value.is_none() {
        return Err(refused(
            "None is not a value; leave the setting out for its default".into(),
        ));
    }
    if value.is_instance_of::<PyBool>() {
        return Ok(serde_json::Value::Bool(value.extract()?));
    }
    if value.is_instance_of::<PyInt>() {
        if let Ok(i) = value.extract::<i64>() {
            return Ok(i.into());
        }
        return value
            .extract::<u64>()
            .map(Into::into)
            .map_err(|_| refused("an integer out of the 64-bit range".into()));
    }
    if value.is_instance_of::<PyFloat>() {
        let number: f64 = value.extract()?;
        return serde_json::Number::from_f64(number)
            .map(serde_json::Value::Number)
            .ok_or_else(|| refused(format!("must be finite, got {number}")));
    }
    if value.is_instance_of::<PyString>() {
        return Ok(serde_json::Value::String(value.extract()?));
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        let mut fields = serde_json::Map::new();
        for (key, item) in dict.iter() {
            let key: String = key
                .extract()
                .map_err(|_| refused(format!("the key {key} is not a string")))?;
            let inner = setting_value(&item, function, &format!("{at}.{key}"))?;
            fields.insert(key, inner);
        }
        return Ok(serde_json::Value::Object(fields));
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let items = value
            .try_iter()?
            .enumerate()
            .map(|(i, item)| setting_value(&item?, function, &format!("{at}[{i}]")))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(serde_json::Value::Array(items));
    }
    let py = value.py();
    if value.is_instance(&py.import("os")?.getattr("PathLike")?)? {
        let path: std::path::PathBuf = value.extract()?;
        return Ok(serde_json::Value::String(path.display().to_string()));
    }
    Err(refused(format!(
        "a {} cannot be a setting (give a bool, number, string, path, list or dict)",
        value.get_type().name()?
    )))
}

/// The settings of a table function, one dict (Python's keywords, checked there, `None` left
/// out) read by serde into `T`; an error names the function.
fn settings_of<T: DeserializeOwned>(
    function: &'static str,
    settings: &Bound<'_, pyo3::types::PyDict>,
) -> PyResult<T> {
    let value = setting_value(settings.as_any(), function, "settings")?;
    serde_json::from_value(value).map_err(|e| {
        py_error(
            polars_rag::ErrorKind::InvalidInput,
            format!("{function}: {e}"),
        )
    })
}

/// The settings the comparison functions share (`compare`, `leaderboard`, `summary`,
/// `judge_drift`), as Python passes them.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ComparisonSettings {
    #[serde(default = "default_id")]
    id: String,
    by: Option<String>,
    cluster: Option<String>,
    resamples: usize,
    confidence: f64,
    seed: u64,
    #[serde(default)]
    top: usize,
    #[serde(default = "two_sided")]
    alternative: String,
    #[serde(default = "holm")]
    adjust: String,
    #[serde(default)]
    family: Vec<String>,
}

/// The settings of the functions that estimate with labels (`calibrate`, `labelled_deltas`,
/// `plan`), as Python passes them.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct LabelledSettings {
    #[serde(default = "default_id")]
    id: String,
    by: Option<String>,
    cluster: Option<String>,
    #[serde(default)]
    alpha: f64,
    #[serde(default = "two_sided")]
    alternative: String,
    lam: Option<f64>,
    #[serde(default)]
    mde: f64,
    #[serde(default)]
    power: f64,
    #[serde(default)]
    tests: usize,
    samples: Option<usize>,
    correlation: Option<f64>,
}

/// The settings of `sample_for_labelling`, as Python passes them.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SampleSettings {
    n: usize,
    #[serde(default = "default_id")]
    id: String,
    by: Option<String>,
    values: Option<Vec<String>>,
    seed: u64,
    min_per_stratum: usize,
    xlsx: Option<String>,
}

fn default_id() -> String {
    "query_id".into()
}

fn two_sided() -> String {
    "two-sided".into()
}

fn holm() -> String {
    "holm".into()
}

/// A JSON value (a report's usage rows) as the Python value it reads as.
fn py_json<'py>(py: Python<'py>, value: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use pyo3::types::{PyDict, PyList};
    Ok(match value {
        serde_json::Value::Null => py.None().into_bound(py),
        serde_json::Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        serde_json::Value::String(text) => text.into_pyobject(py)?.into_any(),
        serde_json::Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(py_json(py, item)?)?;
            }
            list.into_any()
        }
        serde_json::Value::Object(fields) => {
            let dict = PyDict::new(py);
            for (key, item) in fields {
                dict.set_item(key, py_json(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

/// The scoring job on frames, in memory: what `pr.score` calls. `run`, `golden` and `corpus`
/// are frames (Arrow, no file), or `None` where `settings` names a Parquet file (`run = path`);
/// `settings` holds the job's keys as a config file does (`metrics`, `columns`, `by`, `out`,
/// `batch_rows`, `[judge]`, a metric's section, ...), laid over the file `config` when given. The
/// scores stay in memory unless `settings` has `out`. Returns the report as a dict: `scores` and
/// `claims` (frames or `None`), `summary` (the summary table), `text`, `aggregates`
/// (`(metric, value)`), `signatures`, `notes`, `usage` (dicts), `out`.
#[pyfunction]
#[pyo3(signature = (run, golden, corpus, settings, config=None))]
fn score_job<'py>(
    py: Python<'py>,
    run: Option<PyDataFrame>,
    golden: Option<PyDataFrame>,
    corpus: Option<PyDataFrame>,
    settings: &Bound<'py, pyo3::types::PyDict>,
    config: Option<std::path::PathBuf>,
) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    let json = setting_value(settings.as_any(), "score", "settings")?;
    let table = match toml::Value::try_from(json) {
        Ok(toml::Value::Table(table)) => table,
        Ok(_) => unreachable!("a dict is read as a table"),
        Err(e) => {
            return Err(py_error(
                polars_rag::ErrorKind::InvalidInput,
                format!("score: settings: {e}"),
            ))
        }
    };
    let frames = [run, golden, corpus].map(|frame| frame.map(|f| f.0));
    let report = py.detach(move || {
        py_guarded("score", move || {
            let cfg = polars_rag::job::config::ScoreConfig::layered(config.as_deref(), table)
                .map_err(py_err_in("score"))?;
            let [run, golden, corpus] = frames;
            let mut job = cfg.into_job().map_err(py_err_in("score"))?;
            // No progress line, as the command's --quiet: the caller holds the result.
            job.progress = polars_rag::job::progress::ProgressMode::Never;
            if let Some(run) = run {
                job.run = readable("score", &run)?.lazy().into();
            } else if matches!(job.run.path(), Some(path) if path.as_os_str().is_empty()) {
                return Err(py_error(
                    polars_rag::ErrorKind::InvalidInput,
                    "score: no run table: give a frame or a Parquet path".into(),
                ));
            }
            if let Some(golden) = golden {
                job.golden = Some(readable("score", &golden)?.lazy().into());
            }
            if let Some(corpus) = corpus {
                job.corpus = Some(readable("score", &corpus)?.lazy().into());
            }
            polars_rag::job::run(&job).map_err(py_err_in("score"))
        })
    })?;
    let summary = report.summary_table().map_err(py_err_in("score"))?;
    let out = pyo3::types::PyDict::new(py);
    out.set_item("scores", report.scores.map(PyDataFrame))?;
    out.set_item("claims", report.claims.map(PyDataFrame))?;
    out.set_item("summary", PyDataFrame(summary))?;
    out.set_item("text", report.summary)?;
    let aggregates: Vec<(String, Option<f64>)> = report
        .aggregates
        .iter()
        .map(|(id, value, _)| (id.clone(), value.is_finite().then_some(*value)))
        .collect();
    out.set_item("aggregates", aggregates)?;
    out.set_item("signatures", report.signatures)?;
    out.set_item("notes", report.notes)?;
    let usage = serde_json::to_value(&report.usage).map_err(py_err_in("score"))?;
    out.set_item("usage", py_json(py, &usage)?)?;
    out.set_item("claims_file", report.claims_file)?;
    Ok(out)
}

#[pymodule]
fn _internal(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(main, m)?)?;
    m.add_function(wrap_pyfunction!(main_captured, m)?)?;
    m.add_function(wrap_pyfunction!(score_job, m)?)?;
    m.add_function(wrap_pyfunction!(compare_tables, m)?)?;
    m.add_function(wrap_pyfunction!(adjust_p_values, m)?)?;
    m.add_function(wrap_pyfunction!(plan_tables, m)?)?;
    m.add_function(wrap_pyfunction!(leaderboard_tables, m)?)?;
    m.add_function(wrap_pyfunction!(summarize_table, m)?)?;
    m.add_function(wrap_pyfunction!(calibrate_tables, m)?)?;
    m.add_function(wrap_pyfunction!(labelling_sheet, m)?)?;
    m.add_function(wrap_pyfunction!(labelled_deltas, m)?)?;
    m.add_function(wrap_pyfunction!(judge_drift, m)?)?;
    m.add_function(wrap_pyfunction!(read_labels, m)?)?;
    m.add_function(wrap_pyfunction!(metric_ids, m)?)?;
    m.add_function(wrap_pyfunction!(metric_catalogue, m)?)?;
    m.add_function(wrap_pyfunction!(validate_golden, m)?)?;
    m.add_function(wrap_pyfunction!(check_spans, m)?)?;
    m.add_function(wrap_pyfunction!(collapse_run, m)?)?;
    m.add_function(wrap_pyfunction!(join_golden, m)?)?;
    m.add_function(wrap_pyfunction!(signature_of, m)?)?;
    m.add_function(wrap_pyfunction!(option_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(compare_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(reads_whole_column, m)?)?;
    m.add_function(wrap_pyfunction!(judge_agreement, m)?)?;
    m.add_function(wrap_pyfunction!(judge_usage, m)?)?;
    m.add_function(wrap_pyfunction!(judge_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(redact_url, m)?)?;
    m.add_function(wrap_pyfunction!(custom_judge_card, m)?)?;
    m.add_function(wrap_pyfunction!(judge_cache, m)?)?;
    m.add_function(wrap_pyfunction!(judge_log, m)?)?;
    m.add_function(wrap_pyfunction!(embed_usage, m)?)?;
    m.add_function(wrap_pyfunction!(embed_signature, m)?)?;
    m.add_function(wrap_pyfunction!(embed_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(embed_cache, m)?)?;
    m.add_function(wrap_pyfunction!(locate_table, m)?)?;
    m.add_function(wrap_pyfunction!(locate_stats, m)?)?;
    m.add_function(wrap_pyfunction!(write_locate_workbook, m)?)?;
    m.add_function(wrap_pyfunction!(citation_review, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
