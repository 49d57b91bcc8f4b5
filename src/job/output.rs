//! Writing a job's outputs: the scores table with its signatures, the review workbook.

use std::path::Path;

use polars::prelude::*;

use super::plan::{Chosen, Resolved};
use super::{err, ScoreJob};
use crate::atomic::AtomicFile;
use crate::job::Input;
use crate::registry::MetricOptions;

/// The review workbook of `score --review`: the judged rows to check by hand with their id,
/// claim and cited span, most suspicious first.
pub(crate) fn write_review(
    path: &Path,
    frame: &DataFrame,
    id: &str,
    resolved: &Resolved,
    scores: &DataFrame,
    notes: &mut Vec<String>,
) -> PolarsResult<()> {
    let Ok(support) = scores.column("citation_support") else {
        notes.push("--review skipped: no citation_support was computed (it needs a judge and claim / cited_span columns)".into());
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
    let review = crate::columnar::judged::citation_review(&judged, "citation_support")?;
    crate::columnar::judged::write_citation_review(&review, path)?;
    notes.push(format!(
        "review: {} of {} judged rows to check by hand, most suspicious first, in {}",
        review.height(),
        frame.height(),
        path.display()
    ));
    Ok(())
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
        .map_err(|e| write_error(path, e))?;
    out.commit()
        .map_err(|e| err(format!("cannot write {}: {e}", path.display())))?;
    Ok(())
}

/// A failed write of the output `path`, naming it (Polars' own error names no file).
pub(crate) fn write_error(path: &Path, e: PolarsError) -> PolarsError {
    let message = e.to_string();
    err(format!(
        "cannot write {}: {}",
        path.display(),
        crate::job::parquet::parquet_problem(&message)
    ))
}

/// The job's output, as a temporary file beside it (its directory created) until committed.
pub(crate) fn create_output(job: &ScoreJob) -> PolarsResult<AtomicFile> {
    let path = job.out_path()?;
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| err(format!("cannot create {}: {e}", parent.display())))?;
    }
    AtomicFile::create(path).map_err(|e| err(format!("cannot write {}: {e}", path.display())))
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
            polars_bail!(InvalidOperation: "--grade-relevance grades the whole run: it cannot run in parts (grade first, then score in parts with the qrels table as --golden)");
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
            polars_bail!(InvalidOperation: "refusing to write the claims to {}: it is the {what} of this job (choose another --out)", claims.display());
        }
    }
    Ok(())
}
