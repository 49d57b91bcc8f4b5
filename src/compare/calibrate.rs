//! How far a judge can be trusted, from scores tables and a labels table: per judged value
//! (a metric's score, a verdict, a judge card's field) and per segment, the judge's agreement
//! with the labels ([`crate::metrics::calibration`], [`crate::metrics::judged::agreement`]),
//! the judge-only and labels-only means, the prediction-powered estimate of the mean with its
//! interval ([`crate::metrics::ppi`]) and how many more labels would halve that interval.
//!
//! Labels are a table with the scores tables' id column and one column per judged value, named
//! as `compare` names the value (`faithfulness.score`; a metric with one value may use its id,
//! `faithfulness`), or the raw grade or verdict a person gives (`g_eval.raw_score`,
//! `citation_support.verdict`), null where an item is unlabelled. The labels may
//! come from people or from another judge: a scores table written with a different judge setting
//! is a labels table as it is, so the same call measures judge drift.
//!
//! ```
//! use polars::prelude::*;
//! use polars_rag::compare::calibrate::{calibrate_tables, CalibrateOptions};
//! let ids: Vec<String> = (0..8).map(|i| format!("q{i}")).collect();
//! // A scores table's judged metric is a struct; `faithfulness.score` is the judge's value.
//! let judged = Series::new("score".into(), [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0]);
//! let faithfulness = StructChunked::from_series("faithfulness".into(), 8, [judged].iter()).unwrap();
//! let mut scores = df!("query_id" => &ids).unwrap();
//! scores.with_column(faithfulness.into_series().into_column()).unwrap();
//! // A person labelled four items; the judge disagreed on one.
//! let labels = df!(
//!     "query_id" => ["q0", "q1", "q2", "q3"],
//!     "faithfulness" => [1.0, 0.0, 0.0, 1.0],
//! ).unwrap();
//! let c = calibrate_tables(&[("run".into(), scores)], &labels, "query_id", None, &CalibrateOptions::default()).unwrap();
//! let row = &c.rows[0];
//! assert_eq!((row.metric.as_str(), row.kind, row.n_labelled, row.n_compared), ("faithfulness.score", "binary", 4, 4));
//! assert_eq!(row.accuracy, Some(0.75));
//! assert_eq!(row.judge_mean, Some(0.625));
//! assert!(row.ppi_estimate.is_some());
//! // Eight items are too few for more labels to halve the interval; the row says why.
//! assert!(row.labels_to_halve.is_none() && row.reason.is_some());
//! ```

use std::collections::HashMap;

use polars::prelude::*;

use crate::metrics::calibration::{numeric_agreement, GradeKind, KappaWeights};
use crate::metrics::judged::agreement::agreement;
use crate::metrics::ppi::{labels_to_halve, ppi_mean, PpiOptions};
use crate::registry;
use crate::text::shown::shown;

/// Settings of a calibration.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CalibrateOptions {
    /// The prediction-powered estimate's settings (`alpha`, `alternative`, `lam`, `compat`).
    pub ppi: PpiOptions,
    /// The column of a scores table whose values group its items into clusters (a document,
    /// a topic): the PPI and labels-only intervals are then cluster-robust
    /// ([`clustered_ppi_mean`](super::stats::clustered_ppi_mean)).
    pub cluster: Option<String>,
}

/// One judged value of one scores table, over one segment.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CalibrationRow {
    /// The scores table's name.
    pub run: String,
    /// The value, named as `compare` names it.
    pub metric: String,
    /// The segment value (`all`: every item).
    pub segment: String,
    /// `binary`, `ordinal`, `continuous` or `categorical`.
    pub kind: &'static str,
    /// Items of the scores table in the segment.
    pub n_items: usize,
    /// Of those, items with a label.
    pub n_labelled: usize,
    /// Items with both a label and a judge value: what the agreement figures are over.
    pub n_compared: usize,
    /// Items with a label but no judge value (the judge failed): left out of the figures.
    pub n_unjudged: usize,
    /// Share of exact agreements (grades and verdicts).
    pub accuracy: Option<f64>,
    /// Cohen's kappa.
    pub kappa: Option<f64>,
    /// `unweighted` (binary grades, verdicts) or `quadratic` (ordinal grades).
    pub kappa_weights: Option<&'static str>,
    /// Mean |judge − label|.
    pub mae: Option<f64>,
    /// Mean (judge − label).
    pub bias: Option<f64>,
    /// Spearman's ρ of judge and label.
    pub spearman: Option<f64>,
    /// Kendall's τ-b of judge and label.
    pub kendall: Option<f64>,
    /// The judge's mean over every judged item.
    pub judge_mean: Option<f64>,
    /// The labels' mean over every labelled item.
    pub label_mean: Option<f64>,
    /// The prediction-powered estimate of the labels' mean over all items.
    pub ppi_estimate: Option<f64>,
    /// Its interval's lower end.
    pub ppi_ci_low: Option<f64>,
    /// Its interval's upper end.
    pub ppi_ci_high: Option<f64>,
    /// The judge's weight λ used.
    pub ppi_lam: Option<f64>,
    /// The labels-only interval's lower end.
    pub classical_ci_low: Option<f64>,
    /// The labels-only interval's upper end.
    pub classical_ci_high: Option<f64>,
    /// More labels (from the unlabelled items) that would halve the PPI interval's width.
    pub labels_to_halve: Option<usize>,
    /// Why a figure is missing (no PPI estimate, no way to halve the interval).
    pub reason: Option<String>,
}

/// One cell of a confusion matrix.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ConfusionCell {
    /// The scores table's name.
    pub run: String,
    /// The value.
    pub metric: String,
    /// The segment.
    pub segment: String,
    /// The label.
    pub label: String,
    /// The judge's value.
    pub predicted: String,
    /// Items.
    pub count: usize,
}

/// Everything a calibration found.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Calibration {
    /// The key columns items were matched on.
    pub keys: Vec<String>,
    /// One row per scores table, value and segment (`all` first).
    pub rows: Vec<CalibrationRow>,
    /// The confusion matrices of grades and verdicts.
    pub confusion: Vec<ConfusionCell>,
    /// Per scores table: labelled keys it does not have (how many, and up to 20 of them).
    pub unmatched: Vec<(String, usize, Vec<String>)>,
    /// Values of the scores tables that no labels column names.
    pub unlabelled_values: Vec<String>,
}

/// A judged value's per-row values: numbers, or verdicts as text.
enum Values {
    Numbers(Vec<Option<f64>>),
    Verdicts(Vec<Option<String>>),
}

fn numbers(series: &Series) -> PolarsResult<Vec<Option<f64>>> {
    Ok(series
        .cast(&DataType::Float64)?
        .f64()?
        .iter()
        .map(|v| v.filter(|x| !x.is_nan()))
        .collect())
}

fn verdicts(series: &Series) -> PolarsResult<Vec<Option<String>>> {
    Ok(series
        .cast(&DataType::String)?
        .str()?
        .iter()
        .map(|v| v.map(String::from))
        .collect())
}

/// The judged values of a scores table: `(name, metric id or card column, path, values)`.
fn judged_values(df: &DataFrame) -> PolarsResult<Vec<(String, String, String, Values)>> {
    let mut out = Vec::new();
    for info in registry::METRICS {
        if !info.engine.is_some_and(|e| e.judges()) {
            continue;
        }
        for (label, series) in crate::columnar::dispatch::metric_values(df, info.id)? {
            let path = label
                .strip_prefix(info.id)
                .unwrap_or("")
                .trim_start_matches('.')
                .to_string();
            out.push((
                label,
                info.id.to_string(),
                path,
                Values::Numbers(numbers(&series)?),
            ));
        }
        let Ok(column) = df.column(info.id) else {
            continue;
        };
        let series = column.as_materialized_series();
        // Besides the values `compare` reads, what a person labels: a raw grade (g_eval's 1–5)
        // and a verdict (citation_support's).
        if let Some(grade) = crate::columnar::dispatch::field_at(series, "raw_score")?
            && grade.dtype().is_integer()
        {
            let label = format!("{}.raw_score", info.id);
            out.push((
                label,
                info.id.to_string(),
                "raw_score".into(),
                Values::Numbers(numbers(&grade)?),
            ));
        }
        if let Some(verdict) = crate::columnar::dispatch::field_at(series, "verdict")?
            && verdict.dtype() == &DataType::String
        {
            out.push((
                format!("{}.verdict", info.id),
                info.id.to_string(),
                "verdict".into(),
                Values::Verdicts(verdicts(&verdict)?),
            ));
        }
    }
    for (name, dtype) in df.schema().iter() {
        if crate::columnar::dispatch::is_judge_card_column(name, dtype) {
            for (label, series) in crate::columnar::dispatch::judge_card_values(df, name)? {
                let path = label[name.len() + 1..].to_string();
                out.push((
                    label,
                    name.to_string(),
                    path,
                    Values::Numbers(numbers(&series)?),
                ));
            }
        }
    }
    Ok(out)
}

/// The judged values of a scores table a person would label, named as [`calibrate_tables`]
/// reads them: a metric's verdict (`citation_support.verdict`) or raw grade
/// (`g_eval.raw_score`) where it has one, else its values; a judge card's fields.
pub fn labelled_value_names(df: &DataFrame) -> PolarsResult<Vec<String>> {
    let values = judged_values(df)?;
    let by_person = |owner: &str| {
        values
            .iter()
            .any(|(_, o, path, _)| o == owner && (path == "verdict" || path == "raw_score"))
    };
    Ok(values
        .iter()
        .filter(|(_, owner, path, _)| path == "verdict" || path == "raw_score" || !by_person(owner))
        .map(|(name, ..)| name.clone())
        .collect())
}

/// The verdicts or values of judged value `name` in a scores table, as text (`None`: the judge
/// gave none); `None` when the table has no such value.
pub fn judged_value_texts(df: &DataFrame, name: &str) -> PolarsResult<Option<Vec<Option<String>>>> {
    Ok(judged_values(df)?
        .into_iter()
        .find(|(n, ..)| n == name)
        .map(|(_, _, _, values)| match values {
            Values::Verdicts(v) => v,
            Values::Numbers(v) => v.into_iter().map(|x| x.map(|x| x.to_string())).collect(),
        }))
}

/// The judge's numbers of judged value `name` (`None` when it has verdicts or is absent).
pub fn judged_value_numbers(df: &DataFrame, name: &str) -> PolarsResult<Option<Vec<Option<f64>>>> {
    Ok(judged_values(df)?
        .into_iter()
        .find(|(n, ..)| n == name)
        .and_then(|(_, _, _, values)| match values {
            Values::Numbers(v) => Some(v),
            Values::Verdicts(_) => None,
        }))
}

/// The labels of a judged value, with the name of the column they are in (for errors): the
/// labels table's column named as the value, or (for a metric with one value) after the
/// metric, or the value inside a scores table's struct column (`column.field`).
fn label_series(
    labels: &DataFrame,
    name: &str,
    owner: &str,
    path: &str,
    single: bool,
) -> PolarsResult<Option<(Series, String)>> {
    if let Ok(column) = labels.column(name) {
        return Ok(Some((column.as_materialized_series().clone(), name.into())));
    }
    let Ok(column) = labels.column(owner) else {
        return Ok(None);
    };
    let series = column.as_materialized_series();
    if !matches!(series.dtype(), DataType::Struct(_)) {
        return Ok(single.then(|| (series.clone(), owner.into())));
    }
    Ok(crate::columnar::dispatch::field_at(series, path)?
        .map(|field| (field, format!("{owner}.{path}"))))
}

/// The scale of a judged value, where it is known: the range its labels must lie in, as
/// `(low, high)`, or `None` when nothing bounds it (a judge card's numeric field).
///
/// A metric's values are shares or scores in [0, 1], but for `answer_relevancy` (a mean of
/// cosines, [−1, 1]) and `relevance_grade` (TREC's 0–3 grades); a raw grade is on its rubric's
/// scale, read from the table ([`grade_scale`]); a judge card's yes/no field is 0 or 1. The
/// judge's own values always fit: a range widens to hold them.
fn label_range(
    scores: &DataFrame,
    owner: &str,
    path: &str,
    judged: &[Option<f64>],
) -> PolarsResult<Option<(f64, f64)>> {
    let known = if registry::find(owner).is_some() {
        match (owner, path) {
            (_, "raw_score") => grade_scale(scores, owner)?,
            ("answer_relevancy", _) => Some((-1.0, 1.0)),
            ("relevance_grade", _) => Some((0.0, 3.0)),
            _ => Some((0.0, 1.0)),
        }
    } else {
        let field = match scores.column(owner) {
            Ok(column) => {
                crate::columnar::dispatch::field_at(column.as_materialized_series(), path)?
            }
            Err(_) => None,
        };
        field
            .filter(|f| f.dtype() == &DataType::Boolean)
            .map(|_| (0.0, 1.0))
    };
    Ok(known.map(|(low, high)| {
        judged
            .iter()
            .flatten()
            .fold((low, high), |(lo, hi), &v| (lo.min(v), hi.max(v)))
    }))
}

/// The grade scale of a rubric metric (`g_eval`) in a scores table: its `score` is the grade
/// (the probability-weighted one where the table has it) mapped linearly from the scale's
/// least and greatest grade to [0, 1], so two rows with different grades give the scale. With
/// fewer, the widest scale a rubric may have (100 grades apart) around the grades seen.
fn grade_scale(scores: &DataFrame, owner: &str) -> PolarsResult<Option<(f64, f64)>> {
    use crate::columnar::dispatch::field_at;
    let Ok(column) = scores.column(owner) else {
        return Ok(None);
    };
    let series = column.as_materialized_series();
    let (Some(score), Some(raw)) = (field_at(series, "score")?, field_at(series, "raw_score")?)
    else {
        return Ok(None);
    };
    let weighted = match field_at(series, "weighted_score")? {
        Some(w) => numbers(&w)?,
        None => vec![None; series.len()],
    };
    let points: Vec<(f64, f64)> = numbers(&score)?
        .into_iter()
        .zip(numbers(&raw)?)
        .zip(weighted)
        .filter_map(|((s, r), w)| Some((w.or(r)?, s?)))
        .collect();
    let Some(&(v1, s1)) = points.first() else {
        return Ok(None);
    };
    if let Some(&(v2, s2)) = points.iter().find(|(v, s)| *v != v1 && *s != s1) {
        let width = (v2 - v1) / (s2 - s1);
        let low = (v1 - s1 * width).round();
        let high = (low + width).round();
        if low.is_finite() && high.is_finite() && high > low && high - low <= 100.0 {
            return Ok(Some((low, high)));
        }
    }
    let seen = points
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (v, _)| {
            (lo.min(*v), hi.max(*v))
        });
    Ok(Some((seen.1 - 100.0, seen.0 + 100.0)))
}

/// What a labels column is read for, to name it in errors: the caller (`calibrate`,
/// `compare`), the table (`the labels table`), each labels row's key, the judged value.
struct LabelsContext<'a> {
    who: &'a str,
    table: &'a str,
    keys: &'a [String],
    value: &'a str,
    /// The judged value's scale, where it is known.
    range: Option<(f64, f64)>,
}

/// Checks a labels column (named `column`) against its judged value's kind and scale and reads
/// it; an error names the table, the column, the first bad row, its key and its value.
fn read_labels(
    series: &Series,
    column: &str,
    numeric: bool,
    at: &LabelsContext,
) -> PolarsResult<Values> {
    let LabelsContext {
        who, table, keys, ..
    } = *at;
    let dtype = series.dtype();
    if !numeric {
        return match dtype {
            DataType::String | DataType::Boolean | DataType::Null => {
                Ok(Values::Verdicts(verdicts(series)?))
            }
            other => {
                polars_bail!(SchemaMismatch: "{who}: labels column '{column}' of {table} must hold verdicts (text) to label {}, got {other}", at.value)
            }
        };
    }
    let is_number =
        dtype.is_primitive_numeric() || matches!(dtype, DataType::Boolean | DataType::Null);
    let values: Vec<Option<f64>> = if is_number {
        series.cast(&DataType::Float64)?.f64()?.iter().collect()
    } else if matches!(
        dtype,
        DataType::String | DataType::Categorical(..) | DataType::Enum(..)
    ) {
        // Numbers typed into a sheet may arrive as text: read them, and name the first that
        // is not a number.
        let text = series.cast(&DataType::String)?;
        let mut values = Vec::with_capacity(series.len());
        for (row, value) in text.str()?.iter().enumerate() {
            let value = value.map(str::trim).filter(|v| !v.is_empty());
            match value.map(|v| (v, v.parse::<f64>())) {
                None => values.push(None),
                Some((_, Ok(number))) => values.push(Some(number)),
                Some((v, Err(_))) => {
                    polars_bail!(SchemaMismatch: "{who}: labels column '{column}' of {table} must hold numbers (the judge's values of {} are numbers); row {} ({}) has {v:?}", at.value, row + 1, keys[row])
                }
            }
        }
        values
    } else {
        polars_bail!(SchemaMismatch: "{who}: labels column '{column}' of {table} is {dtype}; a label of {} is one number per row (or text holding one)", at.value);
    };
    if let Some(row) = values
        .iter()
        .position(|v| v.is_some_and(|x| !x.is_finite()))
    {
        polars_bail!(ComputeError: "{who}: labels column '{column}' of {table}: row {} ({}) has {}, not a finite number", row + 1, keys[row], values[row].unwrap_or(f64::NAN));
    }
    if let Some((low, high)) = at.range {
        // A hair of slack: a label written as 0.30000000000000004 is on the scale.
        let slack = 1e-9 * (high - low).abs().max(1.0);
        if let Some(row) = values
            .iter()
            .position(|v| v.is_some_and(|x| x < low - slack || x > high + slack))
        {
            polars_bail!(ComputeError: "{who}: labels column '{column}' of {table}: row {} ({}) has {}, outside the range of {} ({low} to {high}); a label is on the judged value's scale", row + 1, keys[row], values[row].unwrap_or(f64::NAN), at.value);
        }
    }
    Ok(Values::Numbers(values))
}

/// Each row's key: the text of its `keys` columns joined by `/`, as `compare` pairs rows. A
/// key column that cannot be read as text, or a row without a key (a null), is an error naming
/// the table (`table`: "the labels table", "scores table run"), the column and the row: a null
/// key matches nothing, and is never mistaken for the text `null`.
fn item_keys(df: &DataFrame, keys: &[String], who: &str, table: &str) -> PolarsResult<Vec<String>> {
    let mut out = vec![String::new(); df.height()];
    for (k, key) in keys.iter().enumerate() {
        let column = df.column(key)?;
        let dtype = column.dtype();
        if matches!(
            dtype,
            DataType::List(_) | DataType::Array(..) | DataType::Struct(_) | DataType::Binary
        ) {
            polars_bail!(SchemaMismatch: "{who}: key column '{key}' of {table} is {dtype}; a key is a text or a number");
        }
        let text = column.cast(&DataType::String).map_err(|e| {
            polars_err!(SchemaMismatch: "{who}: key column '{key}' of {table} ({dtype}) cannot be read as text: {e}")
        })?;
        for (row, (joined, value)) in out.iter_mut().zip(text.str()?.iter()).enumerate() {
            let Some(value) = value else {
                polars_bail!(ComputeError: "{who}: row {} of {table} has no {key} (it is empty); every row needs its key to be matched", row + 1);
            };
            if k > 0 {
                joined.push('/');
            }
            joined.push_str(value);
        }
    }
    Ok(out)
}

/// `labels` with each key column that holds numbers of another type than the scores table's
/// (integers where the scores have floats, as a sheet of numbers gives a float id back) cast
/// to the scores' type, so that both keys have one text form (`3.0`, not `3`). A cast that
/// would change a value (a fraction to an integer) is not made.
fn keys_typed_as(labels: &DataFrame, scores: &DataFrame, keys: &[String]) -> DataFrame {
    let mut typed = labels.clone();
    for key in keys {
        let (Ok(label), Ok(score)) = (labels.column(key), scores.column(key)) else {
            continue;
        };
        let (from, to) = (label.dtype(), score.dtype());
        if from == to || !from.is_primitive_numeric() || !to.is_primitive_numeric() {
            continue;
        }
        let label = label.as_materialized_series();
        let Ok(cast) = label.strict_cast(to) else {
            continue;
        };
        // Back to the labels' type unchanged: nothing was rounded away.
        let kept = cast.cast(from).is_ok_and(|back| back.equals_missing(label));
        if kept {
            let _ = typed.with_column(cast.into_column());
        }
    }
    typed
}

/// An error when a key occurs on more than one row of `table`: its labels or judge values would
/// count once per row. `hint` says how to tell the rows apart.
fn refuse_repeated_keys(
    table_keys: &[String],
    who: &str,
    table: &str,
    keys: &[String],
    hint: &str,
) -> PolarsResult<()> {
    let mut seen: std::collections::HashSet<&str> =
        std::collections::HashSet::with_capacity(table_keys.len());
    let repeated: Vec<&str> = table_keys
        .iter()
        .filter(|k| !seen.insert(k.as_str()))
        .map(String::as_str)
        .collect();
    if repeated.is_empty() {
        return Ok(());
    }
    let examples: Vec<&str> = repeated.iter().take(5).copied().collect();
    polars_bail!(ComputeError: "{who}: {} keys occur more than once in {table} (e.g. {}); items are matched on {keys:?}: {hint}", repeated.len(), examples.join(", "))
}

/// The rows of each segment: `all` first, then each value of `by`, sorted.
fn segments(df: &DataFrame, by: Option<&str>) -> PolarsResult<Vec<(String, Vec<usize>)>> {
    let mut groups = vec![("all".to_string(), (0..df.height()).collect::<Vec<_>>())];
    let Some(by) = by else {
        return Ok(groups);
    };
    let column = df.column(by).map_err(
        |_| polars_err!(ColumnNotFound: "calibrate: no segment column '{by}' in the scores table"),
    )?;
    let values = column.cast(&DataType::String).map_err(|e| {
        polars_err!(SchemaMismatch: "calibrate: the scores table's segment column '{by}' ({}) cannot be read as text: {e}", column.dtype())
    })?;
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut extra: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, v) in values.str()?.iter().enumerate() {
        let v = v.unwrap_or("(null)").to_string();
        let at = *index.entry(v.clone()).or_insert_with(|| {
            extra.push((v, Vec::new()));
            extra.len() - 1
        });
        extra[at].1.push(i);
    }
    extra.sort_by(|a, b| a.0.cmp(&b.0));
    groups.extend(extra);
    Ok(groups)
}

/// Each row's cluster in `df` (rows with the same text in `column` share an id); an empty
/// cluster is an error naming the row's key.
fn cluster_ids(
    df: &DataFrame,
    column: &str,
    who: &str,
    table: &str,
    keys: &[String],
) -> PolarsResult<Vec<u64>> {
    let Ok(values) = df.column(column) else {
        polars_bail!(ColumnNotFound: "{who}: {table} has no cluster column '{}' (columns: {:?})", shown(column), df.get_column_names());
    };
    let values = values.cast(&DataType::String).map_err(|e| {
        polars_err!(ComputeError: "{who}: the cluster column '{}' of {table} cannot be read as text: {e}", shown(column))
    })?;
    let mut ids: HashMap<&str, u64> = HashMap::new();
    let texts = values.str()?;
    let mut out = Vec::with_capacity(texts.len());
    for (row, text) in texts.iter().enumerate() {
        let Some(text) = text else {
            polars_bail!(ComputeError: "{who}: item {} of {table} has no cluster (column '{}' is empty there); every item needs one", keys.get(row).map_or("?", String::as_str), shown(column));
        };
        let next = ids.len() as u64;
        out.push(*ids.entry(text).or_insert(next));
    }
    Ok(out)
}

/// A grade as text for the confusion matrix: integers without a fraction.
fn grade_text(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        v.to_string()
    }
}

/// Calibrates the judged values of each `(name, scores table)` against `labels`, matched on
/// `id` (and `sample` / `repeat` when both tables have them), overall and per value of `by`.
pub fn calibrate_tables(
    runs: &[(String, DataFrame)],
    labels: &DataFrame,
    id: &str,
    by: Option<&str>,
    options: &CalibrateOptions,
) -> PolarsResult<Calibration> {
    options.ppi.validate("calibrate")?;
    if runs.is_empty() {
        polars_bail!(ComputeError: "calibrate: no scores table given");
    }
    if labels.column(id).is_err() {
        polars_bail!(ColumnNotFound: "calibrate: the labels table has no id column '{id}' (columns: {:?})", labels.get_column_names());
    }
    let mut calibration = Calibration::default();
    let mut labelled_any = Vec::new();
    for (run, scores) in runs {
        if scores.column(id).is_err() {
            polars_bail!(ColumnNotFound: "calibrate: scores table {run} has no id column '{id}' (columns: {:?})", scores.get_column_names());
        }
        let mut keys = vec![id.to_string()];
        for extra in super::REPEAT_COLUMNS {
            if scores.column(extra).is_ok() && labels.column(extra).is_ok() {
                keys.push(extra.to_string());
            }
        }
        let label_keys = item_keys(
            &keys_typed_as(labels, scores, &keys),
            &keys,
            "calibrate",
            "the labels table",
        )?;
        let mut label_row: HashMap<&str, usize> = HashMap::with_capacity(label_keys.len());
        for (i, key) in label_keys.iter().enumerate() {
            if label_row.insert(key, i).is_some() {
                polars_bail!(ComputeError: "calibrate: the labels table has key {key} twice (rows are matched on {keys:?}; label each item once)");
            }
        }
        let table = format!("scores table {run}");
        let score_keys = item_keys(scores, &keys, "calibrate", &table)?;
        refuse_repeated_keys(
            &score_keys,
            "calibrate",
            &table,
            &keys,
            &repeats_hint(scores, labels, "the labels table"),
        )?;
        let in_scores: std::collections::HashSet<&str> =
            score_keys.iter().map(String::as_str).collect();
        let missing: Vec<&String> = label_keys
            .iter()
            .filter(|k| !in_scores.contains(k.as_str()))
            .collect();
        calibration.unmatched.push((
            run.clone(),
            missing.len(),
            missing.iter().take(20).map(|k| k.to_string()).collect(),
        ));
        let row_of: Vec<Option<usize>> = score_keys
            .iter()
            .map(|k| label_row.get(k.as_str()).copied())
            .collect();
        let clusters = match &options.cluster {
            Some(cluster) => Some(cluster_ids(
                scores,
                cluster,
                "calibrate",
                &table,
                &score_keys,
            )?),
            None => None,
        };
        let groups = segments(scores, by)?;
        let values = judged_values(scores)?;
        for (name, owner, path, judged) in values {
            let single = registry::find(&owner).is_some_and(|info| info.values.len() == 1);
            let Some((series, column)) = label_series(labels, &name, &owner, &path, single)? else {
                if !calibration.unlabelled_values.contains(&name) {
                    calibration.unlabelled_values.push(name);
                }
                continue;
            };
            let range = match &judged {
                Values::Numbers(j) => label_range(scores, &owner, &path, j)?,
                Values::Verdicts(_) => None,
            };
            let at = LabelsContext {
                who: "calibrate",
                table: "the labels table",
                keys: &label_keys,
                value: &name,
                range,
            };
            let numeric = matches!(judged, Values::Numbers(_));
            let label_values = read_labels(&series, &column, numeric, &at)?;
            labelled_any.push(name.clone());
            for (segment, items) in &groups {
                let context = (run.as_str(), name.as_str(), segment.as_str());
                let (row, cells) = match (&judged, &label_values) {
                    (Values::Numbers(j), Values::Numbers(l)) => numeric_row(
                        context,
                        items,
                        (j, l),
                        &row_of,
                        clusters.as_deref(),
                        &options.ppi,
                    ),
                    (Values::Verdicts(j), Values::Verdicts(l)) => {
                        verdict_row(context, items, j, l, &row_of)
                    }
                    _ => unreachable!("labels are read as the judged value's kind"),
                };
                calibration.rows.push(row);
                calibration.confusion.extend(cells);
            }
        }
        calibration.keys = keys;
    }
    if labelled_any.is_empty() {
        if calibration.unlabelled_values.is_empty() {
            // Nothing to calibrate at all: say what the scores tables hold instead.
            let (run, scores) = &runs[0];
            let misshapen = misshapen_judged_columns(scores);
            let held = if misshapen.is_empty() {
                format!("its columns: {:?}", scores.get_column_names())
            } else {
                misshapen.join("; ")
            };
            polars_bail!(ComputeError: "calibrate: scores table {run} holds no judged value to calibrate ({held}); score it with a judged metric or a judge card");
        }
        polars_bail!(ComputeError: "calibrate: no labels column names a judged value of the scores tables (judged values: {}; name a labels column as one of them, or after the metric when it has one value)", calibration.unlabelled_values.join(", "));
    }
    calibration
        .unlabelled_values
        .retain(|v| !labelled_any.contains(v));
    Ok(calibration)
}

/// The columns of a scores table named after a judged metric that do not hold its values (not
/// the struct the metric writes, or without a numeric or verdict field): each with its type.
fn misshapen_judged_columns(scores: &DataFrame) -> Vec<String> {
    let judged: Vec<String> = judged_values(scores)
        .map(|values| values.into_iter().map(|(_, owner, ..)| owner).collect())
        .unwrap_or_default();
    registry::METRICS
        .iter()
        .filter(|info| info.engine.is_some_and(|e| e.judges()))
        .filter(|info| !judged.iter().any(|owner| owner == info.id))
        .filter_map(|info| {
            let column = scores.column(info.id).ok()?;
            let fields = if info.values.is_empty() {
                String::new()
            } else {
                format!(" (with {})", info.values.join(", "))
            };
            Some(format!(
                "its column '{}' is {}, not the struct {} writes{fields}",
                info.id,
                column.dtype(),
                info.id
            ))
        })
        .collect()
}

/// How to tell a scores table's repeated rows apart when they share a key: by its `sample` or
/// `repeat` column, which `labels` (named `labels_table`) then needs too.
fn repeats_hint(scores: &DataFrame, labels: &DataFrame, labels_table: &str) -> String {
    let unmatched: Vec<&str> = super::REPEAT_COLUMNS
        .into_iter()
        .filter(|c| scores.column(c).is_ok() && labels.column(c).is_err())
        .collect();
    match unmatched.first() {
        Some(column) => format!(
            "the scores table tells its repeats apart by '{column}', which {labels_table} lacks: give {labels_table} the '{column}' column (a label per repeat), or calibrate a table with one row per item"
        ),
        None => "add a 'sample' or 'repeat' column to tell repeats apart".into(),
    }
}

type Context<'a> = (&'a str, &'a str, &'a str);

fn empty_row(context: Context, kind: GradeKind, n_items: usize) -> CalibrationRow {
    CalibrationRow {
        run: context.0.to_string(),
        metric: context.1.to_string(),
        segment: context.2.to_string(),
        kind: kind.name(),
        n_items,
        n_labelled: 0,
        n_compared: 0,
        n_unjudged: 0,
        accuracy: None,
        kappa: None,
        kappa_weights: None,
        mae: None,
        bias: None,
        spearman: None,
        kendall: None,
        judge_mean: None,
        label_mean: None,
        ppi_estimate: None,
        ppi_ci_low: None,
        ppi_ci_high: None,
        ppi_lam: None,
        classical_ci_low: None,
        classical_ci_high: None,
        labels_to_halve: None,
        reason: None,
    }
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| crate::metrics::numpy::numpy_sum(values) / values.len() as f64)
}

/// One calibration row of a numeric value over `items`: `judged_labels` holds the judge's
/// value of each scores row and each labels row's label; `clusters` each scores row's cluster.
fn numeric_row(
    context: Context,
    items: &[usize],
    (judged, labels): (&[Option<f64>], &[Option<f64>]),
    row_of: &[Option<usize>],
    clusters: Option<&[u64]>,
    ppi: &PpiOptions,
) -> (CalibrationRow, Vec<ConfusionCell>) {
    let (mut pairs, mut unlabelled, mut all_judged, mut all_labels) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut pair_clusters, mut unlabelled_clusters) = (Vec::new(), Vec::new());
    let cluster_of = |i: usize| clusters.map_or(0, |c| c[i]);
    let mut unjudged = 0;
    for &i in items {
        let label = row_of[i].and_then(|r| labels[r]);
        let judge = judged[i];
        if let Some(j) = judge {
            all_judged.push(j);
        }
        if let Some(l) = label {
            all_labels.push(l);
        }
        match (label, judge) {
            (Some(l), Some(j)) => {
                pairs.push((l, j));
                pair_clusters.push(cluster_of(i));
            }
            (Some(_), None) => unjudged += 1,
            (None, Some(j)) => {
                unlabelled.push(j);
                unlabelled_clusters.push(cluster_of(i));
            }
            (None, None) => {}
        }
    }
    let a = numeric_agreement(&pairs);
    let mut row = empty_row(context, a.kind, items.len());
    row.n_labelled = all_labels.len();
    row.n_compared = a.n;
    row.n_unjudged = unjudged;
    row.accuracy = a.accuracy;
    row.kappa = a.kappa;
    row.kappa_weights = a.kappa_weights.map(|w| match w {
        KappaWeights::Unweighted => "unweighted",
        KappaWeights::Linear => "linear",
        KappaWeights::Quadratic => "quadratic",
    });
    row.mae = a.mae;
    row.bias = a.bias;
    row.spearman = a.spearman;
    row.kendall = a.kendall;
    row.judge_mean = mean(&all_judged);
    row.label_mean = mean(&all_labels);
    let estimate = match clusters {
        None => ppi_mean(&pairs, &unlabelled, ppi),
        Some(_) => super::stats::clustered_ppi_mean(
            &pairs,
            &pair_clusters,
            &unlabelled,
            &unlabelled_clusters,
            ppi,
        ),
    };
    match estimate {
        Ok(p) => {
            row.ppi_estimate = Some(p.estimate);
            row.ppi_ci_low = Some(p.ci_low);
            row.ppi_ci_high = Some(p.ci_high);
            row.ppi_lam = Some(p.lam);
            row.classical_ci_low = Some(p.classical_ci_low);
            row.classical_ci_high = Some(p.classical_ci_high);
            match labels_to_halve(&pairs, &unlabelled, ppi) {
                _ if clusters.is_some() => {
                    row.reason = Some(
                        "the labels that would halve a clustered interval are not estimated: labelling more of the same clusters narrows it less than labels from new ones"
                            .into(),
                    )
                }
                _ if p.ci_high - p.ci_low == 0.0 => {
                    row.reason = Some(
                        "the interval has no width to halve: the labels and the judge's errors do not vary"
                            .into(),
                    )
                }
                Ok(Some(m)) => row.labels_to_halve = Some(m),
                Ok(None) => {
                    row.reason = Some(format!(
                        "labelling more of the {} unlabelled items would not halve the interval: the number of items bounds it, so more items (judged, and some labelled) would",
                        unlabelled.len()
                    ))
                }
                Err(e) => row.reason = Some(e.to_string()),
            }
        }
        Err(e) => row.reason = Some(e.to_string()),
    }
    let mut cells = Vec::new();
    if matches!(a.kind, GradeKind::Binary | GradeKind::Ordinal) {
        let mut counts: Vec<((f64, f64), usize)> = Vec::new();
        let mut sorted = pairs.clone();
        sorted.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.total_cmp(&y.1)));
        for pair in sorted {
            match counts.last_mut() {
                Some((last, n)) if *last == pair => *n += 1,
                _ => counts.push((pair, 1)),
            }
        }
        cells = counts
            .into_iter()
            .map(|((l, j), count)| ConfusionCell {
                run: context.0.to_string(),
                metric: context.1.to_string(),
                segment: context.2.to_string(),
                label: grade_text(l),
                predicted: grade_text(j),
                count,
            })
            .collect();
    }
    (row, cells)
}

fn verdict_row(
    context: Context,
    items: &[usize],
    judged: &[Option<String>],
    labels: &[Option<String>],
    row_of: &[Option<usize>],
) -> (CalibrationRow, Vec<ConfusionCell>) {
    let pairs: Vec<(Option<&str>, Option<&str>)> = items
        .iter()
        .map(|&i| {
            let label = row_of[i].and_then(|r| labels[r].as_deref());
            (judged[i].as_deref(), label)
        })
        .collect();
    let a = agreement(pairs.iter().copied());
    let mut row = empty_row(context, GradeKind::Categorical, items.len());
    row.n_labelled = pairs.iter().filter(|p| p.1.is_some()).count();
    row.n_compared = a.n;
    row.n_unjudged = a.failed;
    row.accuracy = a.accuracy;
    row.kappa = a.kappa;
    row.kappa_weights = Some("unweighted");
    row.reason = Some("verdicts have no mean: label the value's number to estimate one".into());
    let cells = a
        .confusion
        .into_iter()
        .map(|(label, predicted, count)| ConfusionCell {
            run: context.0.to_string(),
            metric: context.1.to_string(),
            segment: context.2.to_string(),
            label,
            predicted,
            count,
        })
        .collect();
    (row, cells)
}

/// The calibration rows as a table, one column per field of [`CalibrationRow`].
pub fn calibration_frame(rows: &[CalibrationRow]) -> PolarsResult<DataFrame> {
    let text = |name: &str, f: &dyn Fn(&CalibrationRow) -> &str| {
        Series::new(name.into(), rows.iter().map(f).collect::<Vec<_>>()).into_column()
    };
    let count = |name: &str, f: &dyn Fn(&CalibrationRow) -> usize| {
        Series::new(
            name.into(),
            rows.iter().map(|r| f(r) as u64).collect::<Vec<_>>(),
        )
        .into_column()
    };
    let number = |name: &str, f: &dyn Fn(&CalibrationRow) -> Option<f64>| {
        Series::new(name.into(), rows.iter().map(f).collect::<Vec<_>>()).into_column()
    };
    DataFrame::new_infer_height(vec![
        text("run", &|r| &r.run),
        text("metric", &|r| &r.metric),
        text("segment", &|r| &r.segment),
        text("kind", &|r| r.kind),
        count("n_items", &|r| r.n_items),
        count("n_labelled", &|r| r.n_labelled),
        count("n_compared", &|r| r.n_compared),
        count("n_unjudged", &|r| r.n_unjudged),
        number("accuracy", &|r| r.accuracy),
        number("kappa", &|r| r.kappa),
        Series::new(
            "kappa_weights".into(),
            rows.iter().map(|r| r.kappa_weights).collect::<Vec<_>>(),
        )
        .into_column(),
        number("mae", &|r| r.mae),
        number("bias", &|r| r.bias),
        number("spearman", &|r| r.spearman),
        number("kendall", &|r| r.kendall),
        number("judge_mean", &|r| r.judge_mean),
        number("label_mean", &|r| r.label_mean),
        number("ppi_estimate", &|r| r.ppi_estimate),
        number("ppi_ci_low", &|r| r.ppi_ci_low),
        number("ppi_ci_high", &|r| r.ppi_ci_high),
        number("ppi_lam", &|r| r.ppi_lam),
        number("classical_ci_low", &|r| r.classical_ci_low),
        number("classical_ci_high", &|r| r.classical_ci_high),
        Series::new(
            "labels_to_halve".into(),
            rows.iter()
                .map(|r| r.labels_to_halve.map(|m| m as u64))
                .collect::<Vec<_>>(),
        )
        .into_column(),
        Series::new(
            "reason".into(),
            rows.iter().map(|r| r.reason.as_deref()).collect::<Vec<_>>(),
        )
        .into_column(),
    ])
}

/// The confusion cells as a table: `run`, `metric`, `segment`, `label`, `predicted`, `count`.
pub fn confusion_frame(cells: &[ConfusionCell]) -> PolarsResult<DataFrame> {
    let text = |name: &str, f: &dyn Fn(&ConfusionCell) -> &str| {
        Series::new(name.into(), cells.iter().map(f).collect::<Vec<_>>()).into_column()
    };
    DataFrame::new_infer_height(vec![
        text("run", &|c| &c.run),
        text("metric", &|c| &c.metric),
        text("segment", &|c| &c.segment),
        text("label", &|c| &c.label),
        text("predicted", &|c| &c.predicted),
        Series::new(
            "count".into(),
            cells.iter().map(|c| c.count as u64).collect::<Vec<_>>(),
        )
        .into_column(),
    ])
}

/// The run-versus-baseline delta of one judged value, estimated from the judge's per-item
/// deltas on every matched item and the labels' deltas on the items labelled in both runs.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LabelledDelta {
    /// The value, named as `compare` names it.
    pub metric: String,
    /// Items with a judge value in both runs.
    pub n_items: usize,
    /// Of those, items labelled in both runs.
    pub n_labelled: usize,
    /// The judge's delta: the mean of candidate − baseline over `n_items`.
    pub judge_delta: Option<f64>,
    /// The prediction-powered estimate of the labels' delta over all items.
    pub ppi_delta: Option<f64>,
    /// Its interval's lower end.
    pub ppi_ci_low: Option<f64>,
    /// Its interval's upper end.
    pub ppi_ci_high: Option<f64>,
    /// The judge's weight λ used.
    pub ppi_lam: Option<f64>,
    /// The labels' delta on the labelled items alone.
    pub labels_delta: Option<f64>,
    /// Its interval's lower end.
    pub labels_ci_low: Option<f64>,
    /// Its interval's upper end.
    pub labels_ci_high: Option<f64>,
    /// How far the labels moved the estimate: `ppi_delta − judge_delta`.
    pub shift: Option<f64>,
    /// The labelled items (up to 20 keys).
    pub labelled_keys: Vec<String>,
    /// Why there is no estimate.
    pub reason: Option<String>,
}

/// A judged value's name, the judge's value of each row and the label of each row.
type AlignedValue = (String, Vec<Option<f64>>, Vec<Option<f64>>);

/// The labels of one scores table's judged numeric values, aligned with its rows: per value
/// name, the label of each row (`None`: unlabelled).
fn aligned_numeric_labels(
    scores: &DataFrame,
    score_keys: &[String],
    labels: &DataFrame,
    labels_table: &str,
    keys: &[String],
) -> PolarsResult<Vec<AlignedValue>> {
    let label_keys = item_keys(
        &keys_typed_as(labels, scores, keys),
        keys,
        "compare",
        labels_table,
    )?;
    let mut label_row: HashMap<&str, usize> = HashMap::with_capacity(label_keys.len());
    for (i, key) in label_keys.iter().enumerate() {
        if label_row.insert(key, i).is_some() {
            polars_bail!(ComputeError: "compare: {labels_table} has key {key} twice (rows are matched on {keys:?}; label each item once)");
        }
    }
    let row_of: Vec<Option<usize>> = score_keys
        .iter()
        .map(|k| label_row.get(k.as_str()).copied())
        .collect();
    let mut out = Vec::new();
    for (name, owner, path, judged) in judged_values(scores)? {
        let Values::Numbers(judged) = judged else {
            continue;
        };
        let single = registry::find(&owner).is_some_and(|info| info.values.len() == 1);
        let Some((series, column)) = label_series(labels, &name, &owner, &path, single)? else {
            continue;
        };
        let at = LabelsContext {
            who: "compare",
            table: labels_table,
            keys: &label_keys,
            value: &name,
            range: label_range(scores, &owner, &path, &judged)?,
        };
        let Values::Numbers(values) = read_labels(&series, &column, true, &at)? else {
            continue;
        };
        let aligned = row_of.iter().map(|r| r.and_then(|r| values[r])).collect();
        out.push((name, judged, aligned));
    }
    Ok(out)
}

/// The delta of each judged numeric value between two scores tables, estimated by PPI on the
/// paired differences: the judge's per-item deltas on every item both runs judged, the labels'
/// deltas on the items labelled in both runs (`baseline_labels`, `candidate_labels`: tables as
/// [`calibrate_tables`] reads them). Items are matched on `id`; a value needs labels in both.
///
/// ```
/// use polars::prelude::*;
/// use polars_rag::compare::calibrate::labelled_deltas;
/// use polars_rag::metrics::ppi::PpiOptions;
/// let scores = |values: &[f64]| {
///     let ids: Vec<String> = (0..values.len()).map(|i| format!("q{i}")).collect();
///     let score = Series::new("score".into(), values);
///     let column = StructChunked::from_series("faithfulness".into(), values.len(), [score].iter()).unwrap();
///     let mut frame = df!("query_id" => ids).unwrap();
///     frame.with_column(column.into_series().into_column()).unwrap();
///     frame
/// };
/// let baseline = scores(&[0.5, 0.6, 0.4, 0.7, 0.5, 0.6, 0.5, 0.4]);
/// // The judge sees a gain of 0.2 on every item ...
/// let candidate = scores(&[0.7, 0.8, 0.6, 0.9, 0.7, 0.8, 0.7, 0.6]);
/// // ... where a person sees half of it on the four items labelled in both runs.
/// let labelled = |values: [f64; 4]| df!("query_id" => ["q0", "q1", "q2", "q3"], "faithfulness" => values).unwrap();
/// let rows = labelled_deltas(&baseline, &candidate, &labelled([0.5, 0.6, 0.4, 0.7]), &labelled([0.6, 0.7, 0.5, 0.8]), "query_id", &PpiOptions { lam: Some(1.0), ..Default::default() }).unwrap();
/// let row = &rows[0];
/// assert_eq!((row.n_items, row.n_labelled), (8, 4));
/// assert!((row.judge_delta.unwrap() - 0.2).abs() < 1e-12);
/// assert!((row.ppi_delta.unwrap() - 0.1).abs() < 1e-12 && (row.shift.unwrap() + 0.1).abs() < 1e-12);
/// ```
pub fn labelled_deltas(
    baseline: &DataFrame,
    candidate: &DataFrame,
    baseline_labels: &DataFrame,
    candidate_labels: &DataFrame,
    id: &str,
    ppi: &PpiOptions,
) -> PolarsResult<Vec<LabelledDelta>> {
    labelled_deltas_clustered(
        baseline,
        candidate,
        (baseline_labels, candidate_labels),
        id,
        None,
        ppi,
    )
}

/// [`labelled_deltas`] with the items grouped into clusters by the baseline's `cluster`
/// column: the PPI and labels-only intervals are cluster-robust
/// ([`clustered_ppi_mean`](super::stats::clustered_ppi_mean)).
pub fn labelled_deltas_clustered(
    baseline: &DataFrame,
    candidate: &DataFrame,
    labels: (&DataFrame, &DataFrame),
    id: &str,
    cluster: Option<&str>,
    ppi: &PpiOptions,
) -> PolarsResult<Vec<LabelledDelta>> {
    ppi.validate("compare")?;
    let values = paired_label_deltas(baseline, candidate, labels, id, cluster)?;
    let mut out = Vec::new();
    for value in values {
        let PairedLabelDeltas {
            name,
            labelled,
            unlabelled,
            labelled_clusters,
            unlabelled_clusters,
            keys_labelled,
            clustered,
        } = value;
        let clusters = clustered.then_some(());
        let all: Vec<f64> = labelled
            .iter()
            .map(|p| p.1)
            .chain(unlabelled.iter().copied())
            .collect();
        let judge_delta = mean(&all);
        let mut row = LabelledDelta {
            metric: name.clone(),
            n_items: all.len(),
            n_labelled: labelled.len(),
            judge_delta,
            ppi_delta: None,
            ppi_ci_low: None,
            ppi_ci_high: None,
            ppi_lam: None,
            labels_delta: None,
            labels_ci_low: None,
            labels_ci_high: None,
            shift: None,
            labelled_keys: keys_labelled.into_iter().take(20).collect(),
            reason: None,
        };
        let estimate = match clusters {
            None => ppi_mean(&labelled, &unlabelled, ppi),
            Some(_) => super::stats::clustered_ppi_mean(
                &labelled,
                &labelled_clusters,
                &unlabelled,
                &unlabelled_clusters,
                ppi,
            ),
        };
        match estimate {
            Ok(p) => {
                row.ppi_delta = Some(p.estimate);
                row.ppi_ci_low = Some(p.ci_low);
                row.ppi_ci_high = Some(p.ci_high);
                row.ppi_lam = Some(p.lam);
                row.labels_delta = Some(p.classical_estimate);
                row.labels_ci_low = Some(p.classical_ci_low);
                row.labels_ci_high = Some(p.classical_ci_high);
                row.shift = judge_delta.map(|j| p.estimate - j);
            }
            Err(e) => {
                row.labels_delta = mean(&labelled.iter().map(|p| p.0).collect::<Vec<_>>());
                row.reason = Some(e.to_string());
            }
        }
        out.push(row);
    }
    if out.is_empty() {
        polars_bail!(ComputeError: "compare: the labels name no judged value that both scores tables have (name a labels column as compare names the value, e.g. faithfulness.score)");
    }
    Ok(out)
}

/// The labels a comparison needs for one judged value (see [`labels_needed`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LabelsNeeded {
    /// The value, named as `compare` names it.
    pub metric: String,
    /// Items with a judge value in both runs of the pilot: the items the labels are among.
    pub items: usize,
    /// Of those, the items the pilot has labelled in both runs.
    pub pilot_labels: usize,
    /// Items to label in both runs (among `items`) for the prediction-powered delta's variance
    /// to be at most the target.
    pub labels: Option<usize>,
    /// Why there is no number.
    pub reason: Option<String>,
}

/// How many of a comparison's items need labels in both runs for the prediction-powered delta
/// of each judged value to have a variance of at most `target_variance` (a plan's: the squared
/// standard error that detects its delta at its power), projected from a labelled pilot pair
/// of runs as [`labels_for_variance`](crate::metrics::ppi::labels_for_variance) projects them,
/// among the pilot's items. Clustered items are not planned (their labels count by cluster).
pub fn labels_needed(
    baseline: &DataFrame,
    candidate: &DataFrame,
    labels: (&DataFrame, &DataFrame),
    id: &str,
    ppi: &PpiOptions,
    target_variance: f64,
) -> PolarsResult<Vec<LabelsNeeded>> {
    ppi.validate("plan")?;
    let values = paired_label_deltas(baseline, candidate, labels, id, None)?;
    Ok(values
        .into_iter()
        .map(|v| {
            let items = v.labelled.len() + v.unlabelled.len();
            let mut row = LabelsNeeded {
                metric: v.name,
                items,
                pilot_labels: v.labelled.len(),
                labels: None,
                reason: None,
            };
            match crate::metrics::ppi::labels_for_variance(
                &v.labelled,
                &v.unlabelled,
                ppi,
                items,
                target_variance,
            ) {
                Ok(Some(n)) => row.labels = Some(n),
                Ok(None) => {
                    row.reason = Some(format!(
                        "labelling all {items} items would not detect the delta: more items (judged, and some labelled) would"
                    ))
                }
                Err(e) => row.reason = Some(e.to_string()),
            }
            row
        })
        .collect())
}

/// One judged value's deltas of two runs: (label delta, judge delta) on the items labelled in
/// both runs, the judge's delta on the others, each item's cluster and the labelled keys.
struct PairedLabelDeltas {
    name: String,
    labelled: Vec<(f64, f64)>,
    unlabelled: Vec<f64>,
    labelled_clusters: Vec<u64>,
    unlabelled_clusters: Vec<u64>,
    keys_labelled: Vec<String>,
    clustered: bool,
}

/// The judged values two scores tables and their labels share, paired item by item (see
/// [`labelled_deltas`]).
fn paired_label_deltas(
    baseline: &DataFrame,
    candidate: &DataFrame,
    (baseline_labels, candidate_labels): (&DataFrame, &DataFrame),
    id: &str,
    cluster: Option<&str>,
) -> PolarsResult<Vec<PairedLabelDeltas>> {
    for (what, frame) in [
        ("baseline", baseline),
        ("candidate", candidate),
        ("baseline labels", baseline_labels),
        ("candidate labels", candidate_labels),
    ] {
        if frame.column(id).is_err() {
            polars_bail!(ColumnNotFound: "compare: the {what} table has no id column '{id}' (columns: {:?})", frame.get_column_names());
        }
    }
    let mut keys = vec![id.to_string()];
    for extra in super::REPEAT_COLUMNS {
        if [baseline, candidate, baseline_labels, candidate_labels]
            .iter()
            .all(|f| f.column(extra).is_ok())
        {
            keys.push(extra.to_string());
        }
    }
    let b_keys = item_keys(baseline, &keys, "compare", "the baseline table")?;
    let c_keys = item_keys(candidate, &keys, "compare", "the candidate table")?;
    let clusters = match cluster {
        Some(cluster) => Some(cluster_ids(
            baseline,
            cluster,
            "compare",
            "the baseline table",
            &b_keys,
        )?),
        None => None,
    };
    for (table, table_keys, scores, labels) in [
        ("the baseline table", &b_keys, baseline, baseline_labels),
        ("the candidate table", &c_keys, candidate, candidate_labels),
    ] {
        let hint = repeats_hint(scores, labels, "its labels table");
        refuse_repeated_keys(table_keys, "compare", table, &keys, &hint)?;
    }
    let b_row: HashMap<&str, usize> = b_keys
        .iter()
        .enumerate()
        .map(|(i, k)| (k.as_str(), i))
        .collect();
    let pairs: Vec<(usize, usize)> = c_keys
        .iter()
        .enumerate()
        .filter_map(|(j, k)| b_row.get(k.as_str()).map(|&i| (i, j)))
        .collect();
    let b_values = aligned_numeric_labels(
        baseline,
        &b_keys,
        baseline_labels,
        "the baseline labels table",
        &keys,
    )?;
    let c_values = aligned_numeric_labels(
        candidate,
        &c_keys,
        candidate_labels,
        "the candidate labels table",
        &keys,
    )?;
    let mut out = Vec::new();
    for (name, b_judged, b_labels) in &b_values {
        let Some((_, c_judged, c_labels)) = c_values.iter().find(|(n, ..)| n == name) else {
            continue;
        };
        let (mut labelled, mut unlabelled, mut keys_labelled) =
            (Vec::new(), Vec::new(), Vec::new());
        let (mut labelled_clusters, mut unlabelled_clusters) = (Vec::new(), Vec::new());
        let cluster_of = |i: usize| clusters.as_ref().map_or(0, |c| c[i]);
        for &(i, j) in &pairs {
            let (Some(b), Some(c)) = (b_judged[i], c_judged[j]) else {
                continue;
            };
            match (b_labels[i], c_labels[j]) {
                (Some(lb), Some(lc)) => {
                    labelled.push((lc - lb, c - b));
                    labelled_clusters.push(cluster_of(i));
                    keys_labelled.push(c_keys[j].clone());
                }
                _ => {
                    unlabelled.push(c - b);
                    unlabelled_clusters.push(cluster_of(i));
                }
            }
        }
        out.push(PairedLabelDeltas {
            name: name.clone(),
            labelled,
            unlabelled,
            labelled_clusters,
            unlabelled_clusters,
            keys_labelled,
            clustered: clusters.is_some(),
        });
    }
    if out.is_empty() {
        polars_bail!(ComputeError: "compare: the labels name no judged value that both scores tables have (name a labels column as compare names the value, e.g. faithfulness.score)");
    }
    Ok(out)
}

/// Labelled deltas as a table: one row per value, the fields of [`LabelledDelta`]
/// (`labelled_keys` as a list).
pub fn labelled_deltas_frame(rows: &[LabelledDelta]) -> PolarsResult<DataFrame> {
    let number = |name: &str, f: &dyn Fn(&LabelledDelta) -> Option<f64>| {
        Series::new(name.into(), rows.iter().map(f).collect::<Vec<_>>()).into_column()
    };
    let mut keys =
        ListStringChunkedBuilder::new("labelled_keys".into(), rows.len(), rows.len() * 20);
    for r in rows {
        keys.append_values_iter(r.labelled_keys.iter().map(String::as_str));
    }
    DataFrame::new_infer_height(vec![
        Series::new(
            "metric".into(),
            rows.iter().map(|r| r.metric.as_str()).collect::<Vec<_>>(),
        )
        .into_column(),
        Series::new(
            "n_items".into(),
            rows.iter().map(|r| r.n_items as u64).collect::<Vec<_>>(),
        )
        .into_column(),
        Series::new(
            "n_labelled".into(),
            rows.iter().map(|r| r.n_labelled as u64).collect::<Vec<_>>(),
        )
        .into_column(),
        number("judge_delta", &|r| r.judge_delta),
        number("ppi_delta", &|r| r.ppi_delta),
        number("ppi_ci_low", &|r| r.ppi_ci_low),
        number("ppi_ci_high", &|r| r.ppi_ci_high),
        number("ppi_lam", &|r| r.ppi_lam),
        number("labels_delta", &|r| r.labels_delta),
        number("labels_ci_low", &|r| r.labels_ci_low),
        number("labels_ci_high", &|r| r.labels_ci_high),
        number("shift", &|r| r.shift),
        keys.finish().into_series().into_column(),
        Series::new(
            "reason".into(),
            rows.iter().map(|r| r.reason.as_deref()).collect::<Vec<_>>(),
        )
        .into_column(),
    ])
}
