//! Jobs scored in parts (blocks on several machines) and summarised from their tallies.

use std::path::PathBuf;

use polars::prelude::*;

use super::aggregates::{add_corpus_sums, aggregates_of_sums};
use super::corpus::{apply_corpus, CorpusTally};
use super::execute::{compute_scores, finish_report, load_corpus, Stages};
use super::golden::id_hash;
use super::inputs::{require, scan};
use super::output::write_scores;
use super::plan::{choose_metrics, options_with_relevance, resolve_columns, Chosen};
use super::summary::summary_values;
use std::path::Path;

use super::execute::Outcome;
use super::{err, ScoreJob, ScoreReport};
use crate::columnar::driver::readable_frame;
use crate::columnar::join;
use crate::job::tally::SummaryTally;

/// The summary tally of a scores table of `chosen`'s metrics: its values' sums and counts and
/// its corpus-level statistics summed, in streaming passes. `values` are the summarised values
/// (from the schema of the job's scores).
pub(crate) fn tally_of_scores(
    job: &ScoreJob,
    chosen: &Chosen,
    values: &[(String, Expr)],
    mut scores: LazyFrame,
) -> PolarsResult<SummaryTally> {
    let schema = scores.collect_schema()?;
    let mut tally = SummaryTally::of(scores.clone(), values, job.by.as_deref())?;
    let mut stats_columns: Vec<Expr> = Vec::new();
    for (info, _) in chosen {
        if let Some(stats) = info.corpus.filter(|s| schema.contains(s.column))
            && !stats_columns.contains(&col(stats.column))
        {
            stats_columns.push(col(stats.column));
        }
    }
    if !stats_columns.is_empty() {
        let statistics = scores
            .clone()
            .select(stats_columns)
            .collect_with_engine(Engine::Streaming)?
            .unwrap_single();
        let mut sums: Vec<(&'static str, Vec<f64>)> = Vec::new();
        add_corpus_sums(chosen, &statistics, &mut sums)?;
        for (id, summed) in sums {
            tally.add_corpus(id, &summed);
        }
    }
    if schema.contains(super::claims::CLAIM_AUDIT) {
        // The claim audit's verdicts, summed: its aggregate over the parts.
        let audit = super::claims::CLAIM_AUDIT;
        let verdicts: Vec<Expr> = ["fully_supported", "partially_supported", "not_supported"]
            .iter()
            .map(|f| {
                col(audit)
                    .struct_()
                    .field_by_name(f)
                    .cast(DataType::Float64)
                    .sum()
                    .alias(*f)
            })
            .collect();
        let summed = scores
            .select(verdicts)
            .collect_with_engine(Engine::Streaming)?
            .unwrap_single();
        let sums: Vec<f64> = summed
            .columns()
            .iter()
            .map(|c| Ok(c.f64()?.get(0).unwrap_or(0.0)))
            .collect::<PolarsResult<_>>()?;
        tally.add_corpus(audit, &sums);
    }
    Ok(tally)
}

/// A block writes the tally of its scores beside them (`<out>.summary.json`), so the job's
/// summary merges the blocks' tallies instead of reading their rows again.
pub(crate) fn write_block_tally(
    job: &ScoreJob,
    chosen: &Chosen,
    mut scores: LazyFrame,
) -> PolarsResult<()> {
    let schema = scores.collect_schema()?;
    let ids: Vec<crate::registry::MetricId> = chosen.iter().map(|(m, _)| m.metric).collect();
    let values = summary_values(&schema, &ids, job);
    let tally = tally_of_scores(job, chosen, &values, scores)?;
    let path = SummaryTally::path_beside(job.out_path()?);
    tally
        .write(&path)
        .map_err(|e| crate::job::io_err(format!("cannot write {}: {e}", path.display())))
}

/// The files a `--summarise-parts` pattern names, in path order.
pub(crate) fn part_files(pattern: &str) -> PolarsResult<Vec<PathBuf>> {
    let paths = glob::glob(pattern).map_err(|e| {
        err(format!(
            "score: the parts pattern {pattern} is not a glob: {e}"
        ))
    })?;
    // A block's claims table sits beside its scores (`part-*.claims.parquet`): not a part.
    let mut files: Vec<PathBuf> = paths
        .filter_map(Result::ok)
        .filter(|p| p.is_file() && !super::claims::is_claims_file(p))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(err(format!("score: no parts match {pattern}")));
    }
    Ok(files)
}

/// What a block of a job scored in parts prints: its rows, no summary.
pub(crate) fn block_report(job: &ScoreJob, rows: usize) -> ScoreReport {
    ScoreReport {
        summary: format!(
            "block {}: {rows} rows scored -> {}\n",
            job.run.display(),
            job.out.as_deref().unwrap_or(Path::new("")).display()
        ),
        ..ScoreReport::default()
    }
}

/// Completes and summarises a job scored in parts (see [`Parts::Summarise`]): the run gives
/// the columns, the blocks are the files matching `pattern`. Golden questions no block
/// answers are scored into `job.out`; the summary is [`summarise`]'s over the blocks and that
/// file, read by Polars' streaming engine, with corpus-level metrics from the per-row
/// statistics summed over all of them, so it is the summary one call over the whole run gives.
pub(crate) fn summarise_parts(
    job: &ScoreJob,
    id: &str,
    pattern: &str,
) -> PolarsResult<ScoreReport> {
    let mut stages = Stages::start();
    let mut run_scan = job.run.scan("run")?;
    let run_schema = run_scan.collect_schema()?;
    require(&run_schema, &job.run.named("run"), id, "id")?;
    let empty = readable_frame("score", &run_scan.slice(0, 0).collect()?)?;
    let golden = match &job.golden {
        Some(path) => {
            let mut golden = path.scan("golden")?;
            let schema = golden.collect_schema()?;
            require(&schema, &path.named("golden"), id, "id")?;
            Some(readable_frame("score", &golden.collect()?)?)
        }
        None => None,
    };
    let shape = match &golden {
        Some(golden) => join::join_golden(&golden.head(Some(0)), &empty, id)?.frame,
        None => empty.clone(),
    };
    let resolved = resolve_columns(job, shape.schema())?;
    let options = options_with_relevance(job, &resolved);
    let mut notes: Vec<String> = Vec::new();
    let chosen = choose_metrics(job, &resolved, &mut notes)?;
    let parts = part_files(pattern)?;
    let scan_parts = || -> PolarsResult<LazyFrame> {
        let scans = parts
            .iter()
            .map(|part| scan(part, "part"))
            .collect::<PolarsResult<Vec<_>>>()?;
        concat(scans, UnionArgs::default())
            .map_err(|e| err(format!("score: cannot read the parts {pattern}: {e}")))
    };
    let answered: std::collections::HashSet<u64> = scan_parts()?
        .select([col(id).cast(DataType::String)])
        .collect_with_engine(Engine::Streaming)?
        .unwrap_single()
        .column(id)?
        .str()?
        .iter()
        .flatten()
        .map(id_hash)
        .collect();
    stages.lap("read the parts' ids");
    let ids: Vec<crate::registry::MetricId> = chosen.iter().map(|(m, _)| m.metric).collect();
    let values = summary_values(&scan_parts()?.collect_schema()?.clone(), &ids, job);
    // Each part's tally: the one its block wrote beside it, else from its rows.
    let mut tally: Option<SummaryTally> = None;
    let mut merge = |part: SummaryTally| -> PolarsResult<()> {
        match &mut tally {
            Some(all) => all
                .merge(&part)
                .map_err(|e| crate::Error::integrity(format!("score: {e}")).into()),
            None => {
                tally = Some(part);
                Ok(())
            }
        }
    };
    let (mut written, mut read) = (0usize, 0usize);
    for part in parts.iter() {
        let beside = SummaryTally::path_beside(part);
        if beside.is_file() {
            merge(SummaryTally::read(&beside).map_err(|e| err(format!("score: {e}")))?)?;
            written += 1;
        } else {
            merge(tally_of_scores(job, &chosen, &values, scan(part, "part")?)?)?;
            read += 1;
        }
    }
    if let Some(golden) = &golden {
        let keys = golden.column(id)?.cast(&DataType::String)?;
        let unanswered: BooleanChunked = keys
            .str()?
            .iter()
            .map(|key| Some(!key.is_some_and(|k| answered.contains(&id_hash(k)))))
            .collect();
        let missing = golden.filter(&unanswered)?;
        if missing.height() > 0 {
            notes.push(format!(
                "golden: {} of {} questions have no answer in the run (in_run = false; their scores are null)",
                missing.height(),
                golden.height()
            ));
            let joined = join::join_golden(&missing, &empty, id)?.frame;
            let corpus = load_corpus(job)?;
            let mut corpus_tally = CorpusTally::default();
            let frame = apply_corpus(
                job,
                corpus.as_ref(),
                joined,
                id,
                &resolved,
                &mut corpus_tally,
            )?;
            let mut scores = compute_scores(job, &options, &resolved, &chosen, &frame, &mut notes)?;
            if super::plan::audits_claims(job, &resolved) {
                // The blocks' scores have the audit's column: so do these (no answers, no claims).
                let audit = super::claims::audit_claims(&options, &frame, id, &resolved, 0)?;
                scores.with_column(audit.per_answer)?;
            }
            write_scores(job, &options, &chosen, &mut scores)?;
            merge(tally_of_scores(job, &chosen, &values, scores.lazy())?)?;
        }
    }
    stages.lap("score the unanswered questions and merge the tallies");
    let tally = tally.expect("part_files returns at least one part");
    notes.push(format!(
        "summary of the parts {pattern}: the tallies their blocks wrote, {written} of {} parts{}",
        written + read,
        if read > 0 {
            " (the others' rows read)".to_string()
        } else {
            String::new()
        }
    ));
    let sums: Vec<(&'static str, Vec<f64>)> = chosen
        .iter()
        .filter_map(|(info, _)| {
            let (_, summed) = tally.corpus.iter().find(|(m, _)| m == info.id)?;
            Some((info.id, summed.iter().map(|x| x.0).collect()))
        })
        .collect();
    let mut aggregates = aggregates_of_sums(&chosen, &sums);
    if let Some((_, verdicts)) = tally
        .corpus
        .iter()
        .find(|(m, _)| m == super::claims::CLAIM_AUDIT)
    {
        let sums = [0, 1, 2].map(|i| verdicts.get(i).map_or(0.0, |v| v.0));
        aggregates.push(super::claims::aggregate_of(&sums));
    }
    stages.lap("summary");
    let outcome = Outcome {
        ids,
        tally,
        aggregates,
        notes,
        scores: None,
        claims: None,
        claims_file: None,
    };
    finish_report(job, &options, &chosen, outcome, stages)
}
