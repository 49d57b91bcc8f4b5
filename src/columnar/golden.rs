//! Checks of a golden dataset, shared by `polars-rag validate` and Python's
//! `polars_rag.validate_golden`:
//!
//! * query ids are unique and not null (`duplicate_id`, `null_id`);
//! * no question has empty ground truth: `reference_answers`, `relevant_spans`, `relevant_ids`,
//!   `relevant_chunks` (whichever the table has) null, empty, or only empty strings
//!   (`empty_ground_truth`);
//! * with a corpus, every golden span lies inside its document (`span_outside_document`) and a
//!   span's stored `text` / `content` equals the document's text at its offsets
//!   (`span_text_mismatch`).

use polars::prelude::*;

use super::corpus::{check_spans, Corpus, SpanUnit};

/// The ground-truth columns checked for emptiness, when the table has them.
pub const GROUND_TRUTH: [&str; 4] = [
    "reference_answers",
    "relevant_spans",
    "relevant_ids",
    "relevant_chunks",
];

/// One problem found in a golden table.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    /// Which check found it.
    pub check: &'static str,
    /// The question concerned (`None` for a null id).
    pub query_id: Option<String>,
    /// The column concerned.
    pub column: String,
    /// What is wrong.
    pub detail: String,
}

/// What the checks found.
#[derive(Clone, Debug, Default)]
pub struct Validation {
    /// Every problem, check by check.
    pub problems: Vec<Problem>,
    /// What was checked, for a report.
    pub checked: Vec<String>,
}

fn empty_row(value: AnyValue<'_>) -> PolarsResult<bool> {
    Ok(match value {
        AnyValue::Null => true,
        AnyValue::String(t) => t.trim().is_empty(),
        AnyValue::StringOwned(t) => t.trim().is_empty(),
        AnyValue::List(items) => {
            items.is_empty()
                || (items.dtype() == &DataType::String
                    && items
                        .str()?
                        .iter()
                        .all(|t| t.is_none_or(|t| t.trim().is_empty())))
        }
        _ => false,
    })
}

/// Runs every check on `golden` (id column `id`); spans are checked only with a corpus.
pub fn validate_golden(
    golden: &DataFrame,
    id: &str,
    corpus: Option<&Corpus>,
    unit: SpanUnit,
) -> PolarsResult<Validation> {
    if golden.column(id).is_err() {
        polars_bail!(ColumnNotFound: "golden table: no id column '{id}' (columns: {:?})", golden.get_column_names());
    }
    let ids = golden.column(id)?.cast(&DataType::String)?;
    let ids = ids.str()?.clone();
    let mut out = Validation::default();
    let problem = |check, query_id: Option<&str>, column: &str, detail: String| Problem {
        check,
        query_id: query_id.map(String::from),
        column: column.to_string(),
        detail,
    };
    out.checked
        .push(format!("{}: {} questions", id, golden.height()));
    let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
    for v in ids.iter() {
        match v {
            Some(v) => *counts.entry(v).or_insert(0) += 1,
            None => out
                .problems
                .push(problem("null_id", None, id, "the id is null".into())),
        }
    }
    for (v, n) in counts.iter().filter(|(_, n)| **n > 1) {
        out.problems.push(problem(
            "duplicate_id",
            Some(v),
            id,
            format!("occurs {n} times"),
        ));
    }
    for column in GROUND_TRUTH {
        let Ok(c) = golden.column(column) else {
            continue;
        };
        let s = c.as_materialized_series();
        let before = out.problems.len();
        for row in 0..s.len() {
            if empty_row(s.get(row)?)? {
                out.problems.push(problem(
                    "empty_ground_truth",
                    ids.get(row),
                    column,
                    "null, empty, or only empty strings".into(),
                ));
            }
        }
        if out.problems.len() == before {
            out.checked
                .push(format!("{column}: present for every question"));
        }
    }
    match (corpus, golden.column("relevant_spans").is_ok()) {
        (Some(corpus), true) => {
            let checked = check_spans(golden, id, "relevant_spans", corpus, unit, false)?;
            out.checked.push(format!(
                "relevant_spans: {} spans checked against {} documents",
                checked.spans,
                corpus.len()
            ));
            for issue in &checked.issues {
                out.problems.push(problem(
                    "span_outside_document",
                    Some(&issue.query),
                    "relevant_spans",
                    format!("span #{}: {}", issue.index, issue.problem),
                ));
            }
            for issue in &checked.text_mismatches {
                out.problems.push(problem(
                    "span_text_mismatch",
                    Some(&issue.query),
                    "relevant_spans",
                    format!("span #{}: {}", issue.index, issue.problem),
                ));
            }
        }
        (None, true) => out
            .checked
            .push("relevant_spans: not checked (no corpus)".into()),
        _ => {}
    }
    Ok(out)
}

/// The problems as a table: `check`, `query_id`, `column`, `detail`.
pub fn problems_frame(problems: &[Problem]) -> PolarsResult<DataFrame> {
    let col = |name: &str, f: &dyn Fn(&Problem) -> Option<String>| {
        Series::new(name.into(), problems.iter().map(f).collect::<Vec<_>>()).into_column()
    };
    DataFrame::new_infer_height(vec![
        col("check", &|p| Some(p.check.to_string())),
        col("query_id", &|p| p.query_id.clone()),
        col("column", &|p| Some(p.column.clone())),
        col("detail", &|p| Some(p.detail.clone())),
    ])
}
