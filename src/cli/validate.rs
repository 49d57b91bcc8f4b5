//! `polars-rag validate`: checks a golden dataset before anyone scores against it.
//!
//! * every golden span lies inside its document (known file, 0 ≤ start ≤ end ≤ length);
//! * a span's stored `text` / `content` equals the corpus text at its offsets;
//! * query ids are unique and not null;
//! * no question has empty ground truth: `reference_answers`, `relevant_spans`, `relevant_ids`,
//!   `relevant_chunks` (whichever the table has) null, empty, or holding only empty strings.

use std::path::PathBuf;

use polars::prelude::*;

use super::corpus::{check_spans, Corpus, SpanUnit};

/// A `validate` job.
#[derive(Clone, Debug)]
pub struct ValidateJob {
    /// The golden table (Parquet).
    pub golden: PathBuf,
    /// The corpus (Parquet `file`, `text`, or a directory); without it spans are not checked.
    pub corpus: Option<PathBuf>,
    /// Row key column.
    pub id: String,
    /// The unit of the span offsets.
    pub unit: SpanUnit,
}

/// What `validate` found.
pub struct ValidateReport {
    /// One line per problem kind, with counts and examples.
    pub problems: Vec<String>,
    /// The human-readable report.
    pub text: String,
}

const GROUND_TRUTH: [&str; 4] = [
    "reference_answers",
    "relevant_spans",
    "relevant_ids",
    "relevant_chunks",
];

fn examples(items: &[String]) -> String {
    let shown: Vec<&str> = items.iter().take(5).map(String::as_str).collect();
    let more = if items.len() > 5 { ", ..." } else { "" };
    format!("{}{more}", shown.join("; "))
}

/// Runs the checks.
pub fn run(job: &ValidateJob) -> PolarsResult<ValidateReport> {
    let name = job.golden.display().to_string();
    if !job.golden.is_file() {
        polars_bail!(ComputeError: "golden table not found: {name}");
    }
    let file = std::fs::File::open(&job.golden)?;
    let golden = ParquetReader::new(file).finish()?;
    let id = job.id.as_str();
    if golden.column(id).is_err() {
        polars_bail!(ColumnNotFound: "{name}: no id column '{id}' (columns: {:?})", golden.get_column_names());
    }
    let ids = golden.column(id)?.cast(&DataType::String)?;
    let ids = ids.str()?;
    let mut problems = Vec::new();
    let mut lines = vec![format!("golden {name}: {} questions", golden.height())];

    let nulls = ids.null_count();
    if nulls > 0 {
        problems.push(format!("{nulls} questions have a null {id}"));
    }
    let mut seen = std::collections::HashMap::new();
    for v in ids.iter().flatten() {
        *seen.entry(v).or_insert(0usize) += 1;
    }
    let mut dup: Vec<String> = seen
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(k, n)| format!("{k} ({n}×)"))
        .collect();
    dup.sort();
    if !dup.is_empty() {
        problems.push(format!(
            "{} ids occur more than once: {}",
            dup.len(),
            examples(&dup)
        ));
    }

    for column in GROUND_TRUTH {
        let Ok(c) = golden.column(column) else {
            continue;
        };
        let s = c.as_materialized_series();
        let mut empty = Vec::new();
        for row in 0..s.len() {
            let is_empty = match s.get(row)? {
                AnyValue::Null => true,
                AnyValue::String(t) => t.trim().is_empty(),
                AnyValue::List(items) => {
                    items.is_empty()
                        || (items.dtype() == &DataType::String
                            && items.str()?.iter().all(|t| t.is_none_or(|t| t.trim().is_empty())))
                }
                _ => false,
            };
            if is_empty {
                empty.push(ids.get(row).unwrap_or("null").to_string());
            }
        }
        if empty.is_empty() {
            lines.push(format!("{column}: present for every question"));
        } else {
            problems.push(format!(
                "{column}: {} questions have none (e.g. {})",
                empty.len(),
                examples(&empty)
            ));
        }
    }

    match (&job.corpus, golden.column("relevant_spans").is_ok()) {
        (Some(path), true) => {
            let corpus = Corpus::load(path).map_err(|e| polars_err!(ComputeError: "{e}"))?;
            let checked = check_spans(&golden, id, "relevant_spans", &corpus, job.unit, false)?;
            let n = checked.spans;
            lines.push(format!(
                "relevant_spans: {n} spans checked against {} ({} documents)",
                path.display(),
                corpus.len()
            ));
            if !checked.issues.is_empty() {
                let all: Vec<String> = checked.issues.iter().map(|i| i.to_string()).collect();
                problems.push(format!(
                    "relevant_spans: {} spans do not fit their documents: {}",
                    all.len(),
                    examples(&all)
                ));
            }
            if !checked.text_mismatches.is_empty() {
                let all: Vec<String> = checked
                    .text_mismatches
                    .iter()
                    .map(|i| i.to_string())
                    .collect();
                problems.push(format!(
                    "relevant_spans: {} spans' stored text differs from the corpus: {}",
                    all.len(),
                    examples(&all)
                ));
            }
        }
        (None, true) => lines.push("relevant_spans: not checked (no --corpus)".into()),
        _ => {}
    }
    let mut text = lines.join("\n");
    text.push('\n');
    if problems.is_empty() {
        text.push_str("no problems found\n");
    } else {
        for p in &problems {
            text.push_str(&format!("problem: {p}\n"));
        }
    }
    Ok(ValidateReport { problems, text })
}
