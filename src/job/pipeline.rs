//! Which path a job takes: in memory, one batch at a time, one block of a job scored in parts, or
//! the summary of the parts. Above the steps it chooses between (`execute`, `batches`, `parts`),
//! so that none of them needs to know of the others' callers.

use std::path::Path;

use polars::prelude::*;

use super::batches::{run_in_batches, Batched};
use super::claims::{self};
use super::corpus::{apply_corpus, CorpusTally};
use super::execute::*;
use super::inputs::{load_inputs, Inputs};
use super::output::{refuse_overwriting_inputs, write_scores, Review};
use super::parts::{block_report, summarise_parts, write_block_tally};
use super::plan::{choose_metrics, options_with_relevance, resolve_columns};
use super::summary::summarise;
use super::{validate_metric_ids, CustomJudgeJob, Parts, ScoreJob, ScoreReport};
use crate::job::Input;
use crate::registry::MetricId;

/// Runs the job as a pipeline of named steps: load (read and join), resolve the columns, check
/// the spans against the corpus, choose the metrics, plan and compute the scores, write, and
/// summarise. A run larger than `batch_rows` goes through the same steps one batch at a time
/// (see `run_in_batches`), so its memory does not grow with it.
pub fn run(job: &ScoreJob) -> PolarsResult<ScoreReport> {
    // A page that fails to decode surfaces when its rows are read, as Polars' error, which names
    // no file: the job's Parquet inputs are named beside it.
    let inputs = [
        ("run table", job.run.path()),
        ("golden table", job.golden.as_ref().and_then(Input::path)),
        ("corpus", job.corpus.as_ref().and_then(Input::path)),
        ("chunks table", job.chunks.as_deref()),
    ];
    // With a frame among the inputs, a decode error may be the frame's own scan: no file is
    // named rather than a wrong one.
    let has_frame = [Some(&job.run), job.golden.as_ref(), job.corpus.as_ref()]
        .into_iter()
        .flatten()
        .any(|input| matches!(input, Input::Frame(_)));
    let named: Vec<(&str, &Path)> = inputs
        .iter()
        .filter_map(|(role, path)| Some((*role, (*path)?)))
        .filter(|(_, path)| path.is_file() && !has_frame)
        .collect();
    // One job is one run: its judges' budgets and accounting start unspent.
    crate::engines::judge::Judge::forget_shared();
    run_job(&job.with_engines()).map_err(|e| crate::job::parquet::naming_read_errors(e, &named))
}

pub(crate) fn run_job(job: &ScoreJob) -> PolarsResult<ScoreReport> {
    refuse_overwriting_inputs(job)?;
    if let Some(ids) = &job.metrics {
        let judges: Vec<String> = job.custom_judges.iter().map(CustomJudgeJob::id).collect();
        validate_metric_ids(ids, &judges)?;
    }
    let id = job.columns.id.clone().unwrap_or_else(|| "query_id".into());
    if let Parts::Summarise(pattern) = &job.parts {
        return summarise_parts(job, &id, pattern);
    }
    let in_memory = match run_in_batches(job, &id)? {
        Batched::Done(report) => return Ok(*report),
        Batched::InMemory(why) => why,
    };
    let mut stages = Stages::start();
    let Inputs {
        mut frame,
        mut notes,
    } = load_inputs(job, &id)?;
    if job.parts == Parts::Block && job.golden.is_some() {
        // Unanswered golden questions are added once, by the job (Parts::Summarise).
        let in_run = frame.column("in_run")?.bool()?.clone();
        frame = frame.filter(&in_run)?;
    }
    notes.extend(in_memory);
    stages.lap("read and join");
    let resolved = resolve_columns(job, frame.schema())?;
    let options = options_with_relevance(job, &resolved);
    let corpus = load_corpus(job)?;
    let mut corpus_tally = CorpusTally::default();
    let frame = apply_corpus(
        job,
        corpus.as_ref(),
        frame,
        &id,
        &resolved,
        &mut corpus_tally,
    )?;
    if let Some(corpus) = &corpus {
        notes.extend(corpus_tally.notes(job, corpus));
    }
    stages.lap("corpus");
    let (frame, resolved, options) = match &job.grade_relevance {
        Some(path) => {
            let (frame, graded) =
                super::qrels::grade_relevance(frame, &id, &resolved, &options, path, &mut notes)?;
            stages.lap("relevance grades");
            if graded {
                // The grades are the ground truth now: the columns are found again.
                let resolved = resolve_columns(job, frame.schema())?;
                let options = options_with_relevance(job, &resolved);
                (frame, resolved, options)
            } else {
                (frame, resolved, options)
            }
        }
        None => (frame, resolved, options),
    };
    let chosen = choose_metrics(job, &resolved, &mut notes)?;
    let mut scores = compute_scores(job, &options, &resolved, &chosen, &frame, &mut notes)?;
    let audit = super::plan::audits_claims(job, &resolved)
        .then(|| claims::audit_claims(&options, &frame, &id, &resolved, 0))
        .transpose()?;
    if let Some(audit) = &audit {
        scores.with_column(audit.per_answer.clone())?;
    }
    stages.lap("score");
    let mut aggregates = aggregates_of_scores(&frame, &scores, &chosen, &options)?;
    write_scores(job, &options, &chosen, &mut scores)?;
    let (mut claims_table, mut claims_file) = (None, None);
    if let Some(mut audit) = audit {
        aggregates.push(claims::aggregate_of(&audit.sums));
        match &job.out {
            Some(out) => {
                let mut writer = claims::ClaimsWriter::beside(out)?;
                writer.write(&mut audit.claims)?;
                let (path, written) = writer.finish()?;
                notes.push(claims::note(written, audit.answers, &path));
                claims_file = Some(path);
            }
            None => claims_table = Some(audit.claims),
        }
    }
    if job.parts == Parts::Block {
        write_block_tally(job, &chosen, scores.clone().lazy())?;
        return Ok(block_report(job, scores.height()));
    }
    if let Some(path) = &job.review {
        let mut review = Review::default();
        review.add(&frame, &id, &resolved, &scores, 0)?;
        review.write(path, &mut notes)?;
    }
    stages.lap("aggregates and write");
    let ids: Vec<MetricId> = chosen.iter().map(|(m, _)| m.metric).collect();
    let tally = summarise(job, scores.clone().lazy(), &ids)?;
    let kept = job.out.is_none().then_some(scores);
    let outcome = Outcome {
        ids,
        tally,
        aggregates,
        notes,
        scores: kept,
        claims: claims_table,
        claims_file,
    };
    finish_report(job, &options, &chosen, outcome, stages)
}
