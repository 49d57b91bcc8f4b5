//! The metric table over Polars columns: for every id, the columnar call and the output dtype,
//! expanded from [`metric_table!`](crate::metric_table). The `Expr` builders, the CLI's `score`
//! and the Python plugin's shims all evaluate a metric through [`evaluate`], so no face holds a
//! per-metric branch of its own.
//!
//! ```
//! use polars::prelude::*;
//! use polars_rag::metrics::MetricOptions;
//! use polars_rag::polars::dispatch;
//! let answer = Series::new("answer".into(), ["the cat sat on the mat"]);
//! let reference = Series::new("reference".into(), ["the cat sat on the mat"]);
//! let options = MetricOptions::default();
//! let out = dispatch::evaluate("exact_match", &[answer, reference], &options, false).unwrap();
//! assert_eq!(out.f64().unwrap().get(0), Some(1.0));
//! assert_eq!(dispatch::output_dtype("exact_match").unwrap(), DataType::Float64);
//! assert!(dispatch::evaluate("nope", &[], &options, false).is_err());
//! ```

use polars::prelude::*;

use crate::metrics::locate::LocateOptions;
use crate::metrics::MetricOptions;

/// Whether metric `id`, row-wise otherwise, must see its whole input column at once under
/// `options`, so that streaming batches cannot change its rows: quote localisation with soak's
/// automatic window size (1.1 × the longest quote of the column). The `Expr` builders and the
/// plugin then declare it non-elementwise (computed per group in `group_by`).
///
/// ```
/// use polars_rag::metrics::locate::LocateOptions;
/// use polars_rag::metrics::MetricOptions;
/// use polars_rag::polars::dispatch::reads_whole_column;
/// let mut options = MetricOptions::default();
/// assert!(!reads_whole_column("locate_quotes", &options));
/// *options.section_mut::<LocateOptions>("locate_quotes").unwrap() = LocateOptions::soak();
/// assert!(reads_whole_column("locate_quotes", &options));
/// assert!(!reads_whole_column("bleu", &options));
/// ```
pub fn reads_whole_column(id: &str, options: &MetricOptions) -> bool {
    options
        .section::<LocateOptions>(id)
        .is_some_and(LocateOptions::window_from_batch)
}

/// Expands the table into [`evaluate`], [`output_dtype`] and [`evaluate_stats`].
macro_rules! metric_columns {
    (
        sections { $($sections:tt)* }
        metrics { $(
            $id:ident {
                kind: $kind:ident, inputs: $inputs:ident, options: $options:ident,
                $(engine: $engine:ident,)?
                values: [$($value:literal),*], corpus: $corpus:expr_2021,
                summary: $summary:literal, reference: $reference:literal,
                signature: |$so:ident| $signature:expr_2021,
                output: $dtype:expr_2021,
                column: |$o:ident, [$($arg:ident),+], $parallel:ident| $call:expr_2021,
                $( stats: |$stats_o:ident, [$($stats_arg:ident),+], $stats_parallel:ident| $stats_call:expr_2021, )?
            }
        )* }
    ) => {
        /// Evaluates metric `id` over its input columns (in the order of its inputs) with its
        /// section of `options`. `parallel` is false when the caller already runs calls in
        /// parallel (Polars' streaming engine, `group_by`).
        pub fn evaluate(id: &str, inputs: &[Series], options: &MetricOptions, parallel: bool) -> PolarsResult<Series> {
            match id {
                $( stringify!($id) => {
                    let [$($arg),+] = inputs else {
                        return Err(input_count(id, [$(stringify!($arg)),+].len(), inputs.len()));
                    };
                    let $o = options_of!(options, $options);
                    let $parallel = parallel;
                    $call
                } )*
                _ => Err(unknown(id)),
            }
        }

        /// The dtype of metric `id`'s output.
        pub fn output_dtype(id: &str) -> PolarsResult<DataType> {
            match id {
                $( stringify!($id) => Ok($dtype), )*
                _ => Err(unknown(id)),
            }
        }

        /// The per-row statistics of a corpus-level metric (the column its
        /// [`CorpusStats`](crate::registry::CorpusStats) names), `None` for other metrics.
        pub fn evaluate_stats(id: &str, inputs: &[Series], options: &MetricOptions, parallel: bool) -> PolarsResult<Option<Series>> {
            match id {
                $( $( stringify!($id) => {
                    let [$($stats_arg),+] = inputs else {
                        return Err(input_count(id, [$(stringify!($stats_arg)),+].len(), inputs.len()));
                    };
                    let $stats_o = options_of!(options, $options);
                    let $stats_parallel = parallel;
                    $stats_call.map(Some)
                } )? )*
                _ => Ok(None),
            }
        }
    };
}

/// The options section a metric reads (`none`: nothing).
macro_rules! options_of {
    ($options:ident, none) => {
        ()
    };
    ($options:ident, $section:ident) => {
        &$options.$section
    };
}

crate::metric_table!(metric_columns);

fn unknown(id: &str) -> PolarsError {
    match crate::registry::require(id) {
        Err(e) => e.into(),
        Ok(_) => polars_err!(InvalidOperation: "{id}: not in the metric table's columnar calls"),
    }
}

fn input_count(id: &str, expected: usize, got: usize) -> PolarsError {
    polars_err!(InvalidOperation: "{id}: expected {expected} input columns, got {got}")
}

/// The output field of metric `id`, named after it.
pub fn output_field(id: &str) -> PolarsResult<Field> {
    Ok(Field::new(id.into(), output_dtype(id)?))
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

/// Whether a scores-table column holds a judge defined as data (a judge card's column): a
/// struct ending in the `judge_error` string field every such judge writes, under a name that
/// is not a metric of the table. Its numeric and boolean reply fields are its values (see
/// [`judge_card_values`]), which `compare` and `summary` read as they read a metric's.
///
/// ```
/// use polars::prelude::*;
/// use polars_rag::polars::dispatch::is_judge_card_column;
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

/// The values at a dotted path into struct fields, as Float64; `None` when the column does not
/// have that shape.
fn value_at(series: &Series, path: &str) -> PolarsResult<Option<Series>> {
    let mut current = series.clone();
    for field in path.split('.').filter(|f| !f.is_empty()) {
        let DataType::Struct(_) = current.dtype() else {
            return Ok(None);
        };
        current = match current.struct_()?.field_by_name(field) {
            Ok(s) => s,
            Err(_) => return Ok(None),
        };
    }
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
            let lists = series.list()?;
            let mut out: Vec<Vec<f64>> = (0..width)
                .map(|_| Vec::with_capacity(scores.height()))
                .collect();
            for i in 0..lists.len() {
                let row = match lists.get_as_series(i) {
                    Some(s) => zero_null(&s)?,
                    None => Vec::new(),
                };
                for (j, col) in out.iter_mut().enumerate() {
                    col.push(row.get(j).copied().unwrap_or(0.0));
                }
            }
            Ok(Some(out))
        }
    }
}
