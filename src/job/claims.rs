//! Auditing raw answers claim by claim: a step of the job when it has a judge, answers and their
//! sources, and no `claim` / `cited_span` columns. Each answer is split into its atomic claims
//! (`split_claims`), each claim is paired with the span it quotes or cites, or with the answer's
//! sources ([`cited_span_of_claim`]), and each pair is judged (`citation_support`). The job
//! writes the per-claim table beside the scores (`<out stem>.claims.parquet`) and gives each
//! answer a `claim_audit` struct: its claims, how many were fully, partially and not supported,
//! how many judgements failed, and its citation precision (fully supported / judged). Over all
//! claims, `citation_precision` is the summary's aggregate.
//!
//! `claim_audit` ends in `judge_error` (why an answer has no claims), as a judge card's output
//! does, so `compare` and `summary` read its numbers as they read a card's.

use polars::prelude::*;

use super::plan::Resolved;
use crate::metrics::judged::citation_support::{describe_sums, precision_of_sums};
use crate::metrics::judged::claims::cited_span_of_claim;
use crate::registry::MetricOptions;

/// The per-answer column of the audit.
pub const CLAIM_AUDIT: &str = "claim_audit";

/// The audit's signature: the splitter's and the support judge's.
pub(crate) fn signature(options: &MetricOptions) -> String {
    format!(
        "{} + {}",
        crate::metrics::judged::claims::signature(&options.split_claims),
        crate::metrics::judged::citation_support::signature(&options.citation_support)
    )
}

/// The output of the audit of a table of answers.
pub(crate) struct ClaimAudit {
    /// Per answer row: the `claim_audit` struct.
    pub(crate) per_answer: Column,
    /// One row per claim: the answer's id, the claim's index in its answer, the claim, its
    /// cited span, how it was found, and the `citation_support` judgement.
    pub(crate) claims: DataFrame,
    /// Over all claims judged: fully, partially and not supported.
    pub(crate) sums: [f64; 3],
    /// The answers split into claims (rows with an answer).
    pub(crate) answers: usize,
}

/// The summary's aggregate over the claims of every answer, from the sums of their verdicts
/// (fully, partially and not supported): `("citation_precision", value, detail)`; NaN when no
/// claim was judged.
pub(crate) fn aggregate_of(sums: &[f64; 3]) -> (String, f64, String) {
    let judged: f64 = sums.iter().sum();
    (
        "citation_precision".to_string(),
        if judged > 0.0 {
            precision_of_sums(sums)
        } else {
            f64::NAN
        },
        format!("   {} over the answers' claims", describe_sums(sums)),
    )
}

/// Writes a job's claims table, batch by batch, to a temporary file beside its final path
/// until [`ClaimsWriter::finish`].
pub(crate) struct ClaimsWriter {
    path: std::path::PathBuf,
    file: crate::atomic::AtomicFile,
    writer: Option<polars::io::parquet::write::BatchedWriter<std::fs::File>>,
    rows: usize,
}

impl ClaimsWriter {
    /// A writer of the claims of the scores written to `scores`.
    pub(crate) fn beside(scores: &std::path::Path) -> PolarsResult<Self> {
        let path = claims_path(scores);
        let file = crate::atomic::AtomicFile::create(&path)
            .map_err(|e| crate::job::io_err(format!("cannot write {}: {e}", path.display())))?;
        Ok(ClaimsWriter {
            path,
            file,
            writer: None,
            rows: 0,
        })
    }

    /// Appends a batch of claims.
    pub(crate) fn write(&mut self, claims: &mut DataFrame) -> PolarsResult<()> {
        claims.rechunk_mut_par();
        if self.writer.is_none() {
            let file = self.file.file()?.try_clone().map_err(|e| {
                crate::job::io_err(format!("cannot write {}: {e}", self.path.display()))
            })?;
            self.writer = Some(ParquetWriter::new(file).batched(claims.schema())?);
        }
        let writer = self.writer.as_mut().expect("made above");
        writer
            .write_batch(claims)
            .map_err(|e| super::parquet::write_error(&self.path, e))?;
        self.rows += claims.height();
        Ok(())
    }

    /// Completes the file; its path and the claims written.
    pub(crate) fn finish(mut self) -> PolarsResult<(std::path::PathBuf, usize)> {
        if let Some(writer) = self.writer.take() {
            writer
                .finish()
                .map_err(|e| super::parquet::write_error(&self.path, e))?;
        }
        self.file.commit().map_err(|e| {
            crate::job::io_err(format!("cannot write {}: {e}", self.path.display()))
        })?;
        Ok((self.path, self.rows))
    }
}

/// Audits the answers of `frame` (see the module's documentation); `first_row` is the row of
/// the scores table that `frame`'s first row becomes (a batch's offset), recorded with each claim
/// so that it maps back to its answer whatever the ids.
pub(crate) fn audit_claims(
    options: &MetricOptions,
    frame: &DataFrame,
    id: &str,
    resolved: &Resolved,
    first_row: usize,
) -> PolarsResult<ClaimAudit> {
    let answer_name = resolved.answer.as_deref().unwrap_or("answer");
    let sources_name = resolved.sources.as_deref().unwrap_or("sources");
    let answers = frame.column(answer_name)?.as_materialized_series().clone();
    let sources = frame.column(sources_name)?.as_materialized_series().clone();
    // Texts, a list of texts, or retrieved items with a `text` field, as every metric reads them.
    let sources = crate::columnar::driver::TextListColumn::new(CLAIM_AUDIT, "sources", &sources)?;
    let sources = sources.rows(0..frame.height());
    let split = crate::columnar::judged::split_claims(&answers, &options.split_claims)?;
    let split = split.struct_()?;
    let claim_lists = split.field_by_name("claims")?;
    let split_errors = split.field_by_name("judge_error")?;
    let claim_lists = claim_lists.list()?;
    let ids = frame.column(id)?.as_materialized_series().clone();

    // One row per claim, with the answer row it came from.
    let (mut rows, mut index, mut claims, mut cited, mut cited_by) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let style = options.quoted_spans.quotes;
    let min_words = options.quoted_spans.min_len;
    for row in 0..frame.height() {
        let Some(list) = claim_lists.get_as_series(row) else {
            continue;
        };
        let texts: &[&str] = sources.get(row).unwrap_or(&[]);
        for (i, claim) in list.str()?.iter().enumerate() {
            let Some(claim) = claim else { continue };
            let pair = cited_span_of_claim(claim, texts, style, min_words);
            rows.push(row as IdxSize);
            index.push(i as u32);
            claims.push(claim.to_string());
            cited.push(pair.as_ref().map(|(span, _)| span.clone()));
            cited_by.push(pair.map(|(_, by)| by.as_str()));
        }
    }
    let claim_series =
        StringChunked::from_iter_values("claim".into(), claims.iter().map(String::as_str))
            .into_series();
    let cited_series =
        StringChunked::from_iter_options("cited_span".into(), cited.iter().map(|c| c.as_deref()))
            .into_series();
    let support = crate::columnar::judged::citation_support(
        &claim_series,
        &cited_series,
        &options.citation_support,
    )?
    .with_name("citation_support".into());

    // Per answer: the counts of its claims' verdicts.
    let fields = support.struct_()?;
    let count = |name: &str| -> PolarsResult<Vec<f64>> {
        Ok(fields
            .field_by_name(name)?
            .cast(&DataType::Float64)?
            .f64()?
            .iter()
            .map(|v| v.unwrap_or(0.0))
            .collect())
    };
    let (fully, partially, not) = (
        count("fully_supported")?,
        count("partially_supported")?,
        count("not_supported")?,
    );
    let failed: Vec<bool> = fields
        .field_by_name("judge_error")?
        .str()?
        .iter()
        .map(|e| e.is_some())
        .collect();
    let height = frame.height();
    let mut per = vec![[0u32; 5]; height];
    for (k, &row) in rows.iter().enumerate() {
        let counts = &mut per[row as usize];
        counts[0] += 1;
        counts[1] += fully[k] as u32;
        counts[2] += partially[k] as u32;
        counts[3] += not[k] as u32;
        counts[4] += failed[k] as u32;
    }
    let answered: Vec<bool> = (0..height)
        .map(|row| claim_lists.get_as_series(row).is_some())
        .collect();
    let column = |name: &str, at: usize| {
        UInt32Chunked::from_iter_options(
            name.into(),
            (0..height).map(|row| answered[row].then_some(per[row][at])),
        )
        .into_series()
    };
    let precision: Float64Chunked = (0..height)
        .map(|row| {
            let [_, f, p, n, _] = per[row];
            let judged = f + p + n;
            (answered[row] && judged > 0).then(|| f as f64 / judged as f64)
        })
        .collect();
    let per_answer = StructChunked::from_series(
        CLAIM_AUDIT.into(),
        height,
        [
            column("claims", 0),
            column("fully_supported", 1),
            column("partially_supported", 2),
            column("not_supported", 3),
            column("failed", 4),
            precision
                .with_name("citation_precision".into())
                .into_series(),
            split_errors.with_name("judge_error".into()),
        ]
        .iter(),
    )?
    .into_series()
    .into_column();

    let answer_rows: Vec<u64> = rows
        .iter()
        .map(|&r| (first_row + r as usize) as u64)
        .collect();
    let row_index = IdxCa::from_vec("row".into(), rows);
    let claims_table = DataFrame::new(
        claims.len(),
        vec![
            ids.take(&row_index)?.into_column(),
            UInt64Chunked::from_vec("answer_row".into(), answer_rows).into_column(),
            UInt32Chunked::from_vec("claim_index".into(), index).into_column(),
            claim_series.into_column(),
            cited_series.into_column(),
            StringChunked::from_iter_options("cited_by".into(), cited_by.into_iter()).into_column(),
            support.into_column(),
        ],
    )?;
    let sums = [fully.iter().sum(), partially.iter().sum(), not.iter().sum()];
    Ok(ClaimAudit {
        per_answer,
        claims: claims_table,
        sums,
        answers: answered.iter().filter(|a| **a).count(),
    })
}

/// The summary's note on the claims written.
pub(crate) fn note(claims: usize, answers: usize, path: &std::path::Path) -> String {
    format!(
        "claims: {claims} claims of {answers} answers judged against the spans they quote or cite (else their sources) -> {}",
        path.display()
    )
}

/// Whether `path` is a claims table written beside scores (see [`claims_path`]).
pub(crate) fn is_claims_file(path: &std::path::Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().ends_with(".claims.parquet"))
}

/// Where the claims table of a job's scores goes: `<scores stem>.claims.parquet` beside them.
pub fn claims_path(scores: &std::path::Path) -> std::path::PathBuf {
    let stem = scores
        .file_stem()
        .map_or("scores".into(), |s| s.to_string_lossy().to_string());
    let stem = stem.strip_suffix(".scores").unwrap_or(&stem).to_string();
    scores.with_file_name(format!("{stem}.claims.parquet"))
}
