//! Writing a job's outputs: the scores table with its signatures, the review workbook.

use std::path::Path;

use polars::prelude::*;

use super::plan::{Chosen, Resolved};
use super::ScoreJob;
use crate::atomic::AtomicFile;
use crate::job::Input;
use crate::registry::MetricOptions;

/// The review workbook of `score --review`: the judged rows to check by hand with their id,
/// claim and cited span, most suspicious first. Rows are added a batch at a time and only the
/// most suspicious that a worksheet holds ([`SHEET_ROWS`]) are kept, so the review of a run
/// of any size takes bounded memory.
#[derive(Default)]
pub(crate) struct Review {
    kept: Option<DataFrame>,
    flagged: usize,
    judged: usize,
    /// No citation_support was computed.
    skipped: bool,
}

/// The rows a worksheet holds below its header.
pub(crate) const SHEET_ROWS: usize = crate::metrics::locate::export::SHEET_ROWS;

impl Review {
    /// Adds the judged rows of a batch (its joined `frame` and its `scores`), the batch's
    /// first row being row `first_row` of the scores table.
    pub(crate) fn add(
        &mut self,
        frame: &DataFrame,
        id: &str,
        resolved: &Resolved,
        scores: &DataFrame,
        first_row: usize,
    ) -> PolarsResult<()> {
        let Ok(support) = scores.column("citation_support") else {
            self.skipped = true;
            return Ok(());
        };
        let mut columns: Vec<Column> = Vec::new();
        for name in [
            Some(id),
            resolved.claim.as_deref(),
            resolved.cited_span.as_deref(),
        ]
        .into_iter()
        .flatten()
        {
            if let Ok(c) = frame.column(name) {
                columns.push(c.clone());
            }
        }
        columns.push(support.clone());
        let judged = DataFrame::new(frame.height(), columns)?;
        let mut review = crate::columnar::judged::citation_review(&judged, "citation_support")?;
        let rows = review.column("row")?.cast(&DataType::UInt64)?;
        review.with_column(
            (rows.as_materialized_series() + first_row as u64)
                .with_name("row".into())
                .into_column(),
        )?;
        self.judged += frame.height();
        self.flagged += review.height();
        let kept = match self.kept.take() {
            Some(kept) => kept.vstack(&review)?,
            None => review,
        };
        self.kept = Some(if kept.height() > SHEET_ROWS {
            most_suspicious(&kept)?.head(Some(SHEET_ROWS))
        } else {
            kept
        });
        Ok(())
    }

    /// Writes the workbook and says what it holds.
    pub(crate) fn write(self, path: &Path, notes: &mut Vec<String>) -> PolarsResult<()> {
        if self.skipped {
            notes.push("`review` skipped: no citation_support was computed (it needs a judge and claim / cited_span columns)".into());
            return Ok(());
        }
        let Some(kept) = self.kept else {
            return Ok(());
        };
        let review = most_suspicious(&kept)?;
        crate::columnar::judged::write_citation_review(&review, path)?;
        let held = if self.flagged > review.height() {
            format!(
                " (the {} most suspicious of {} flagged: a worksheet holds no more)",
                review.height(),
                self.flagged
            )
        } else {
            String::new()
        };
        notes.push(format!(
            "review: {} of {} judged rows to check by hand, most suspicious first, in {}{held}",
            review.height(),
            self.judged,
            path.display()
        ));
        Ok(())
    }
}

/// Review rows most suspicious first, ties in row order.
fn most_suspicious(review: &DataFrame) -> PolarsResult<DataFrame> {
    review.sort(
        ["suspicion", "row"],
        SortMultipleOptions::default()
            .with_order_descending_multi([true, false])
            .with_maintain_order(true),
    )
}

/// Writes the scores table atomically, with every metric's signature in its Parquet metadata.
pub(crate) fn write_scores(
    job: &ScoreJob,
    options: &MetricOptions,
    chosen: &Chosen,
    scores: &mut DataFrame,
) -> PolarsResult<()> {
    let Some(path) = &job.out else {
        return Ok(());
    };
    let mut out = create_output(job)?;
    ParquetWriter::new(out.file()?)
        .with_key_value_metadata(Some(KeyValueMetadata::from_static(signatures(
            job,
            options,
            chosen,
            scores.column(super::claims::CLAIM_AUDIT).is_ok(),
        ))))
        .finish(scores)
        .map_err(|e| super::parquet::write_error(path, e))?;
    out.commit()
        .map_err(|e| crate::job::io_err(format!("cannot write {}: {e}", path.display())))?;
    Ok(())
}

/// The job's output, as a temporary file beside it (its directory created) until committed.
pub(crate) fn create_output(job: &ScoreJob) -> PolarsResult<AtomicFile> {
    let path = job.out_path()?;
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| crate::job::io_err(format!("cannot create {}: {e}", parent.display())))?;
    }
    AtomicFile::create(path)
        .map_err(|e| crate::job::io_err(format!("cannot write {}: {e}", path.display())))
}

/// Every metric's signature, as the scores' Parquet metadata carries it (for `compare` and for
/// readers of the file, `pl.read_parquet_metadata`).
pub(crate) fn signatures(
    job: &ScoreJob,
    options: &MetricOptions,
    chosen: &Chosen,
    audited: bool,
) -> Vec<(String, String)> {
    chosen
        .iter()
        .map(|(m, _)| {
            let sig = options.signature(m.metric);
            (format!("{}{}", crate::job::SIGNATURE_KEY, m.id), sig)
        })
        .chain(job.scored_judges().map(|c| {
            (
                format!("{}{}", crate::job::SIGNATURE_KEY, c.id()),
                crate::metrics::judged::custom::signature(&c.options),
            )
        }))
        .chain(audited.then(|| {
            (
                format!(
                    "{}{}",
                    crate::job::SIGNATURE_KEY,
                    super::claims::CLAIM_AUDIT
                ),
                super::claims::signature(options),
            )
        }))
        .collect()
}

/// An error when the scores would be written over one of the job's own inputs (the run, the
/// golden table or the corpus file), which the write would destroy.
pub(crate) fn refuse_overwriting_inputs(job: &ScoreJob) -> PolarsResult<()> {
    if let Some(qrels) = &job.grade_relevance {
        for (what, path) in [
            ("run", job.run.path()),
            ("golden table", job.golden.as_ref().and_then(Input::path)),
            ("corpus", job.corpus.as_ref().and_then(Input::path)),
            ("scores table", job.out.as_deref()),
        ] {
            if path.is_some_and(|p| crate::job::parquet::same_file(p, qrels)) {
                polars_bail!(InvalidOperation: "refusing to write the relevance grades to {}: it is the {what} of this job", qrels.display());
            }
        }
        if job.parts != super::Parts::Whole {
            polars_bail!(InvalidOperation: "`grade_relevance` grades the whole run: it cannot run in parts (grade first, then score in parts with the qrels table as the `golden` table)");
        }
    }
    for (what, input) in [
        ("run", job.run.path()),
        ("golden table", job.golden.as_ref().and_then(Input::path)),
        ("corpus", job.corpus.as_ref().and_then(Input::path)),
    ] {
        let Some(out) = &job.out else { break };
        if input.is_some_and(|p| crate::job::parquet::same_file(p, out)) {
            polars_bail!(InvalidOperation: "refusing to write the scores to {}: it is the {what} of this job", out.display());
        }
        // The claims of an audit go beside the scores.
        let claims = super::claims::claims_path(out);
        if input.is_some_and(|p| crate::job::parquet::same_file(p, &claims)) {
            polars_bail!(InvalidOperation: "refusing to write the claims to {}: it is the {what} of this job (choose another `out`)", claims.display());
        }
    }
    Ok(())
}
