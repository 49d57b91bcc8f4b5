//! The scoring rules over verdicts someone else gave (a judge, an NLI model, people), as
//! columns: `nugget_scores` over a question's nuggets' importance and assessment lists, and
//! `claim_check_scores` over RAGChecker's four verdict tables. A row with a null input is null;
//! a row whose verdicts cannot be scored (an unknown label, tables of different shapes) is an
//! error naming the metric, the row and the problem.

use polars::prelude::*;

use super::driver::{output_len, struct_series};
use crate::metrics::claim_checks::{self, ClaimCheckOptions};
use crate::metrics::nuggets::{self, NuggetOptions};

/// A `list[str]` column's rows (a length-1 column broadcast to `len`); null texts inside a list
/// are an error, since every entry is a label.
fn label_lists(
    metric: &str,
    role: &str,
    s: &Series,
    len: usize,
) -> PolarsResult<Vec<Option<Vec<String>>>> {
    let bad = || polars_err!(SchemaMismatch: "{metric}: column '{}' ({role}) must be list[str], got {}", s.name(), s.dtype());
    let rows: Vec<Option<Vec<String>>> = match s.dtype() {
        DataType::Null => vec![None; s.len()],
        DataType::List(inner) if matches!(inner.as_ref(), DataType::String | DataType::Null) => {
            let mut rows = Vec::with_capacity(s.len());
            for (i, item) in s.list()?.amortized_iter().enumerate() {
                rows.push(match item {
                    None => None,
                    Some(items) => {
                        let items = items.as_ref().cast(&DataType::String)?;
                        let mut labels = Vec::with_capacity(items.len());
                        for label in items.str()?.iter() {
                            labels.push(label.map(String::from).ok_or_else(|| {
                                polars_err!(ComputeError: "{metric}: row {} of '{}' ({role}) holds a null label", i + 1, s.name())
                            })?);
                        }
                        Some(labels)
                    }
                });
            }
            rows
        }
        _ => return Err(bad()),
    };
    Ok(broadcast(rows, len))
}

/// A `list[list[str]]` column's rows (one list of labels per claim), broadcast to `len`.
fn label_tables(
    metric: &str,
    role: &str,
    s: &Series,
    len: usize,
) -> PolarsResult<Vec<Option<Vec<Vec<String>>>>> {
    let nested = match s.dtype() {
        DataType::Null => true,
        DataType::List(inner) => match inner.as_ref() {
            DataType::Null => true,
            DataType::List(item) => matches!(item.as_ref(), DataType::String | DataType::Null),
            _ => false,
        },
        _ => false,
    };
    if !nested {
        polars_bail!(SchemaMismatch: "{metric}: column '{}' ({role}) must be list[list[str]] (per claim, a verdict per chunk), got {}", s.name(), s.dtype());
    }
    if s.dtype() == &DataType::Null {
        return Ok(vec![None; len]);
    }
    let mut rows = Vec::with_capacity(s.len());
    for (i, item) in s.list()?.amortized_iter().enumerate() {
        rows.push(match item {
            None => None,
            Some(claims) => {
                let claims = claims.as_ref().clone();
                let lists = label_lists(metric, role, &claims, claims.len())
                    .map_err(|e| polars_err!(ComputeError: "{e} (row {})", i + 1))?;
                let mut table = Vec::with_capacity(lists.len());
                for (c, claim) in lists.into_iter().enumerate() {
                    table.push(claim.ok_or_else(|| {
                        polars_err!(ComputeError: "{metric}: row {} of '{}' ({role}) has a null list for claim {}", i + 1, s.name(), c + 1)
                    })?);
                }
                Some(table)
            }
        });
    }
    Ok(broadcast(rows, len))
}

fn broadcast<T: Clone>(rows: Vec<Option<T>>, len: usize) -> Vec<Option<T>> {
    if rows.len() == 1 && len != 1 {
        vec![rows[0].clone(); len]
    } else {
        rows
    }
}

fn float_struct(metric: &str, names: &[&str], rows: &[Option<Vec<f64>>]) -> PolarsResult<Series> {
    let fields: Vec<Series> = names
        .iter()
        .enumerate()
        .map(|(k, name)| {
            Series::new(
                (*name).into(),
                rows.iter()
                    .map(|r| r.as_ref().map(|v| v[k]))
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    let valid: Vec<bool> = rows.iter().map(Option::is_some).collect();
    struct_series(metric, &fields, &valid)
}

fn float_struct_dtype(names: &[&str]) -> DataType {
    DataType::Struct(
        names
            .iter()
            .map(|n| Field::new((*n).into(), DataType::Float64))
            .collect(),
    )
}

/// Output dtype of `nugget_scores`: a struct of its four scores.
pub fn nugget_scores_dtype() -> DataType {
    float_struct_dtype(&nuggets::SCORE_NAMES)
}

/// Output dtype of `claim_check_scores`: a struct of RAGChecker's eleven scores.
pub fn claim_check_scores_dtype() -> DataType {
    float_struct_dtype(&claim_checks::SCORE_NAMES)
}

/// `nugget_scores` of each row's nuggets (see [`crate::metrics::nuggets`]).
///
/// ```
/// use polars::prelude::*;
/// use polars_rag::columnar::verdicts::nugget_scores;
/// let importance = Series::new("importance".into(), [Series::new("".into(), ["vital", "okay"])]);
/// let assignment = Series::new("assignment".into(), [Series::new("".into(), ["partial_support", "support"])]);
/// let out = nugget_scores(&importance, &assignment, &Default::default()).unwrap();
/// let all = out.struct_().unwrap().field_by_name("all_score").unwrap();
/// assert_eq!(all.f64().unwrap().get(0), Some(0.75));
/// ```
pub fn nugget_scores(
    importance: &Series,
    assignment: &Series,
    options: &NuggetOptions,
) -> PolarsResult<Series> {
    const METRIC: &str = "nugget_scores";
    let len = output_len(
        METRIC,
        &[
            ("importance", importance.len()),
            ("assignment", assignment.len()),
        ],
    )?;
    let importance = label_lists(METRIC, "importance", importance, len)?;
    let assignment = label_lists(METRIC, "assignment", assignment, len)?;
    let mut rows = Vec::with_capacity(len);
    for (i, (imp, asg)) in importance.iter().zip(&assignment).enumerate() {
        rows.push(match (imp, asg) {
            (Some(imp), Some(asg)) => {
                let imp: Vec<&str> = imp.iter().map(String::as_str).collect();
                let asg: Vec<&str> = asg.iter().map(String::as_str).collect();
                let s = nuggets::nugget_scores(&imp, &asg, options.compat)
                    .map_err(|e| polars_err!(ComputeError: "{} (row {})", e, i + 1))?;
                Some(s.values().to_vec())
            }
            _ => None,
        });
    }
    float_struct(METRIC, &nuggets::SCORE_NAMES, &rows)
}

/// `claim_check_scores` of each row's verdict tables (see [`crate::metrics::claim_checks`]).
///
/// ```
/// use polars::prelude::*;
/// use polars_rag::columnar::verdicts::claim_check_scores;
/// let list = |v: &[&str]| Series::new("".into(), v);
/// let one = |name: &str, v: &[&str]| Series::new(name.into(), [list(v)]);
/// let table = |name: &str, rows: &[&[&str]]| {
///     let inner: Vec<Series> = rows.iter().map(|r| list(r)).collect();
///     Series::new(name.into(), [Series::new("".into(), inner)])
/// };
/// let out = claim_check_scores(
///     &one("a", &["entailment", "neutral"]),
///     &one("b", &["entailment"]),
///     &table("c", &[&["entailment"], &["neutral"]]),
///     &table("d", &[&["entailment"]]),
///     &Default::default(),
/// )
/// .unwrap();
/// let precision = out.struct_().unwrap().field_by_name("precision").unwrap();
/// assert_eq!(precision.f64().unwrap().get(0), Some(0.5));
/// ```
pub fn claim_check_scores(
    response_in_reference: &Series,
    reference_in_response: &Series,
    response_in_chunks: &Series,
    reference_in_chunks: &Series,
    options: &ClaimCheckOptions,
) -> PolarsResult<Series> {
    const METRIC: &str = "claim_check_scores";
    let len = output_len(
        METRIC,
        &[
            ("response_in_reference", response_in_reference.len()),
            ("reference_in_response", reference_in_response.len()),
            ("response_in_chunks", response_in_chunks.len()),
            ("reference_in_chunks", reference_in_chunks.len()),
        ],
    )?;
    let a = label_lists(METRIC, "response_in_reference", response_in_reference, len)?;
    let b = label_lists(METRIC, "reference_in_response", reference_in_response, len)?;
    let c = label_tables(METRIC, "response_in_chunks", response_in_chunks, len)?;
    let d = label_tables(METRIC, "reference_in_chunks", reference_in_chunks, len)?;
    let compat = options.compat;
    let read = |labels: &[String]| -> crate::Result<Vec<bool>> {
        let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
        claim_checks::parse_verdicts(&labels, compat)
    };
    let mut rows = Vec::with_capacity(len);
    for i in 0..len {
        rows.push(match (&a[i], &b[i], &c[i], &d[i]) {
            (Some(a), Some(b), Some(c), Some(d)) => {
                let scored = (|| -> crate::Result<Vec<f64>> {
                    let c: Vec<Vec<bool>> =
                        c.iter().map(|r| read(r)).collect::<crate::Result<_>>()?;
                    let d: Vec<Vec<bool>> =
                        d.iter().map(|r| read(r)).collect::<crate::Result<_>>()?;
                    Ok(
                        claim_checks::claim_check_scores(&read(a)?, &read(b)?, &c, &d)?
                            .values()
                            .to_vec(),
                    )
                })();
                Some(scored.map_err(|e| polars_err!(ComputeError: "{} (row {})", e, i + 1))?)
            }
            _ => None,
        });
    }
    float_struct(METRIC, &claim_checks::SCORE_NAMES, &rows)
}

/// Output dtype of `claim_check_report`: the eleven scores.
pub fn claim_check_report_dtype() -> DataType {
    float_struct_dtype(&claim_checks::SCORE_NAMES)
}

/// RAGChecker's dataset report of per-answer scores: one row, each of the eleven scores' mean
/// over the answers that have them all (the struct `claim_check_scores` or `claim_checks`
/// writes; a null row or a row with a null score is left out), in [0, 1]; with
/// `compat="ragchecker"` the mean × 100 rounded to one decimal as RAGChecker's report gives it.
/// Null without such rows.
///
/// ```
/// use polars::prelude::*;
/// use polars_rag::columnar::verdicts::{claim_check_report, claim_check_scores};
/// use polars_rag::metrics::claim_checks::{ClaimCheckCompat, ClaimCheckOptions};
/// let list = |v: &[&str]| Series::new("".into(), v);
/// let table = |rows: &[&[&str]]| {
///     let inner: Vec<Series> = rows.iter().map(|r| list(r)).collect();
///     Series::new("".into(), inner)
/// };
/// let scores = claim_check_scores(
///     &Series::new("a".into(), [list(&["entailment", "neutral", "neutral"]), list(&["entailment"])]),
///     &Series::new("b".into(), [list(&["entailment"]), list(&["entailment"])]),
///     &Series::new("c".into(), [table(&[&["entailment"], &["neutral"], &["neutral"]]), table(&[&["entailment"]])]),
///     &Series::new("d".into(), [table(&[&["entailment"]]), table(&[&["entailment"]])]),
///     &Default::default(),
/// )
/// .unwrap();
/// let ragchecker = ClaimCheckOptions { compat: ClaimCheckCompat::Ragchecker };
/// let report = claim_check_report(&scores, &ragchecker).unwrap();
/// let precision = report.struct_().unwrap().field_by_name("precision").unwrap();
/// assert_eq!(precision.f64().unwrap().get(0), Some(66.7)); // (1/3 + 1) / 2 × 100
/// ```
pub fn claim_check_report(scores: &Series, options: &ClaimCheckOptions) -> PolarsResult<Series> {
    const METRIC: &str = "claim_check_report";
    let bad = || polars_err!(SchemaMismatch: "{METRIC}: column '{}' must be the struct claim_check_scores or claim_checks writes (its eleven float fields: precision, recall, ...), got {}", scores.name(), scores.dtype());
    let DataType::Struct(_) = scores.dtype() else {
        return Err(bad());
    };
    let fields = scores.struct_()?;
    let columns: Vec<Float64Chunked> = claim_checks::SCORE_NAMES
        .iter()
        .map(|name| {
            let field = fields.field_by_name(name).map_err(|_| bad())?;
            if !field.dtype().is_primitive_numeric() {
                return Err(bad());
            }
            Ok(field.cast(&DataType::Float64)?.f64()?.clone())
        })
        .collect::<PolarsResult<_>>()?;
    let valid = scores.is_not_null();
    let rows: Vec<claim_checks::ClaimCheckScores> = (0..scores.len())
        .filter(|&i| valid.get(i) == Some(true))
        .filter_map(|i| {
            let values: Option<Vec<f64>> = columns.iter().map(|c| c.get(i)).collect();
            let values: [f64; 11] = values?.try_into().ok()?;
            Some(claim_checks::ClaimCheckScores::from_values(values))
        })
        .collect();
    let report = claim_checks::aggregate_scores(&rows, options.compat);
    float_struct(
        METRIC,
        &claim_checks::SCORE_NAMES,
        &[report.map(|r| r.values().to_vec())],
    )
}
