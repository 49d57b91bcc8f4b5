//! `polars-rag validate`: the golden-dataset checks of [`crate::columnar::golden`] on a Parquet
//! table and a corpus on disk, reported as counts with examples.

use std::path::PathBuf;

use polars::prelude::*;

use crate::columnar::golden::{validate_golden, Problem};
use crate::job::corpus::SpanUnit;

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
    /// Every problem.
    pub problems: Vec<Problem>,
    /// The human-readable report.
    pub text: String,
}

/// Runs the checks and words the report: one line per (check, column) with a count and up to
/// five examples.
pub fn run(job: &ValidateJob) -> PolarsResult<ValidateReport> {
    let name = job.golden.display().to_string();
    if !job.golden.is_file() {
        return Err(crate::job::not_found(format!(
            "golden table not found: {name}"
        )));
    }
    let golden = crate::columnar::driver::readable_frame(
        "validate",
        &ParquetReader::new(crate::job::parquet::parquet_file(
            &job.golden,
            "golden table",
        )?)
        .finish()?,
    )?;
    let corpus = match &job.corpus {
        Some(path) => Some(crate::job::corpus::load(path)?),
        None => None,
    };
    let found = validate_golden(&golden, &job.id, corpus.as_ref(), job.unit)?;
    let mut text = format!("golden {name}\n");
    for line in &found.checked {
        text.push_str(&format!("  {line}\n"));
    }
    let mut groups: Vec<(&str, &str, Vec<&Problem>)> = Vec::new();
    for p in &found.problems {
        match groups
            .iter_mut()
            .find(|(c, col, _)| *c == p.check && *col == p.column)
        {
            Some((_, _, list)) => list.push(p),
            None => groups.push((p.check, &p.column, vec![p])),
        }
    }
    if groups.is_empty() {
        text.push_str("no problems found\n");
    }
    for (check, column, list) in groups {
        let examples: Vec<String> = list
            .iter()
            .take(5)
            .map(|p| format!("{} {}", p.query_id.as_deref().unwrap_or("null"), p.detail))
            .collect();
        let more = if list.len() > 5 { "; ..." } else { "" };
        text.push_str(&format!(
            "problem: {check} in {column}: {} (e.g. {}{more})\n",
            list.len(),
            examples.join("; ")
        ));
    }
    Ok(ValidateReport {
        problems: found.problems,
        text,
    })
}
