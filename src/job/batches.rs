//! Scoring a run larger than a batch, one batch at a time, in bounded memory.

use polars::prelude::*;

use super::aggregates::{add_corpus_sums, aggregates_of_sums};
use super::corpus::{apply_corpus, CorpusTally};
use super::execute::Outcome;
use super::execute::{compute_scores, finish_report, load_corpus, why_not_streamed, Stages};
use super::golden::{id_hash, GoldenIndex};
use super::inputs::{require, scan};
use super::output::{create_output, signatures};
use super::parquet::write_error;
use super::parts::{block_report, write_block_tally};
use super::plan::{choose_metrics, options_with_relevance, resolve_columns};
use super::summary::summarise;
use super::{Parts, ScoreJob, ScoreReport};
use crate::columnar::driver::readable_frame;
use crate::columnar::join;

/// The run's id hashes seen so far, to find ids that occur twice across batches without
/// keeping the ids themselves.
#[derive(Default)]
pub(crate) struct SeenIds {
    pub(crate) hashes: std::collections::HashSet<u64>,
    pub(crate) twice: usize,
    pub(crate) examples: Vec<String>,
}

impl SeenIds {
    pub(crate) fn add(&mut self, ids: &StringChunked) {
        for key in ids.iter().flatten() {
            if !self.hashes.insert(id_hash(key)) {
                self.twice += 1;
                if self.examples.len() < 3 {
                    self.examples.push(key.to_string());
                }
            }
        }
    }
}

/// For a long run (one row per retrieved item): how many queries it has when each query's
/// rows are together, else `None`. One pass over the id column; a query is known by the hash of
/// its id (a collision can only make a run look unsorted, never the reverse).
fn contiguous_queries(run: &LazyFrame, id: &str, total: usize) -> PolarsResult<Option<usize>> {
    const STEP: usize = 1_000_000;
    let hash = |key: Option<&str>| match key {
        Some(key) => super::golden::id_hash(key),
        None => super::golden::id_hash("\0null"),
    };
    let mut closed: std::collections::HashSet<u64> = std::collections::HashSet::new();
    let mut current: Option<Option<String>> = None;
    let mut queries = 0usize;
    for offset in (0..total).step_by(STEP) {
        let ids = run
            .clone()
            .select([col(id).cast(DataType::String)])
            .slice(offset as i64, STEP as IdxSize)
            .collect()?;
        for key in ids.column(id)?.str()?.iter() {
            if current.as_ref().map(|c| c.as_deref()) == Some(key) {
                continue;
            }
            if let Some(previous) = current.take() {
                closed.insert(hash(previous.as_deref()));
            }
            if closed.contains(&hash(key)) {
                return Ok(None);
            }
            current = Some(key.map(String::from));
            queries += 1;
        }
    }
    Ok(Some(queries))
}

/// The row where the last query of `rows` starts (0 when every row is of one query).
fn start_of_last_query(rows: &DataFrame, id: &str) -> PolarsResult<usize> {
    let ids = rows.column(id)?.cast(&DataType::String)?;
    let ids = ids.str()?;
    let last = ids.get(ids.len().saturating_sub(1));
    let mut start = ids.len();
    while start > 0 && ids.get(start - 1) == last {
        start -= 1;
    }
    Ok(start)
}

/// The run's uncompressed size from its Parquet metadata (`None` for a frame): what holding
/// it whole costs at least.
fn run_bytes(job: &ScoreJob) -> Option<usize> {
    let file = std::fs::File::open(job.run.path()?).ok()?;
    let mut reader = ParquetReader::new(file);
    let metadata = reader.get_metadata().ok()?;
    Some(
        metadata
            .row_groups
            .iter()
            .map(|g| g.total_byte_size())
            .sum(),
    )
}

/// Scores a run larger than `job.batch_rows` one batch of rows at a time: each batch is read
/// from the Parquet file, joined with the golden rows of its ids (read from the golden file;
/// see [`GoldenIndex`]), checked against the corpus (held in memory), scored and appended to
/// the output as row groups; corpus-level metrics are combined from the per-row statistics
/// summed over the batches, and the summary is computed from the written scores by Polars'
/// streaming engine. Peak memory is one batch, the golden ids and the corpus, whatever the
/// run's size.
///
/// The scores are those of the in-memory path; the rows come in run order (golden order within
/// a batch), and golden questions without an answer come last. [`Batched::InMemory`] when the
/// run fits in one batch, or when the job must be scored in memory (then with the reason, which
/// the summary notes: memory grows with the run).
pub(crate) fn run_in_batches(job: &ScoreJob, id: &str) -> PolarsResult<Batched> {
    if job.batch_rows == 0 {
        return Ok(Batched::InMemory(None));
    }
    let run_name = job.run.named("run");
    let mut run_scan = job.run.scan("run")?;
    let run_schema = run_scan.collect_schema()?;
    require(&run_schema, &run_name, id, "id")?;
    let total = run_scan
        .clone()
        .select([len().alias("rows")])
        .collect()?
        .column("rows")?
        .cast(&DataType::UInt64)?
        .u64()?
        .get(0)
        .unwrap_or(0) as usize;
    if total <= job.batch_rows {
        return Ok(Batched::InMemory(None));
    }
    let in_memory = |why: &str| {
        let size = match run_bytes(job) {
            Some(bytes) => format!(
                ", {:.2} GB uncompressed: at least that much memory",
                bytes as f64 / 1e9
            ),
            None => String::new(),
        };
        Ok(Batched::InMemory(Some(format!(
            "scored in memory, not in batches of {} rows: {why}; memory grows with the run ({total} rows{size})",
            job.batch_rows
        ))))
    };
    let retrieved_name = job.columns.retrieved.as_deref().unwrap_or("retrieved");
    let long_run = join::is_long_run(&run_schema, retrieved_name);
    // A long run streams when each query's rows are together (the usual TREC file): a batch
    // then ends where a query does, and is collapsed on its own.
    let queries = match long_run {
        true => match contiguous_queries(&run_scan, id, total)? {
            Some(queries) => Some(queries),
            None => return in_memory(
                "the run has one row per retrieved item and some query's rows are not together (sort the run by query id to stream it)",
            ),
        },
        false => None,
    };
    if job.grade_relevance.is_some() {
        return in_memory("`grade_relevance` grades every query's retrieved passages together");
    }
    if job.out.is_none() {
        return in_memory("the scores are kept in memory (no output file)");
    }
    // Batches read slices of the run and of the golden table: a lazy plan would be run again for
    // each slice, and a plan whose row order is not fixed could give overlapping slices.
    if [Some(&job.run), job.golden.as_ref()]
        .into_iter()
        .flatten()
        .any(|input| matches!(input, super::Input::Frame(_)))
    {
        return in_memory("batches read Parquet files, and the run or golden table is a frame (write it with sink_parquet to stream it)");
    }
    let mut stages = Stages::start();
    let mut notes: Vec<String> = Vec::new();
    let golden = match &job.golden {
        Some(path) => {
            let mut scan_golden = path.scan("golden")?;
            let schema = scan_golden.collect_schema()?;
            require(&schema, &path.named("golden"), id, "id")?;
            Some(GoldenIndex::new(scan_golden, id)?)
        }
        None => None,
    };
    let read_batch = |offset: usize, rows: usize| -> PolarsResult<DataFrame> {
        readable_frame(
            "score",
            &run_scan
                .clone()
                .slice(offset as i64, rows as IdxSize)
                .collect()?,
        )
    };
    // A long run's rows, one row per query: its retrieved items collapsed into a list.
    let collapse = |raw: DataFrame| -> PolarsResult<DataFrame> {
        if !long_run {
            return Ok(raw);
        }
        let mut collapsed = join::collapse_run(&raw, id)?;
        collapsed.rename("retrieved", retrieved_name.into())?;
        Ok(collapsed)
    };
    // The next batch from row `offset` of the run, and the rows it took: `batch_rows` rows, or
    // for a long run the rows of the queries they complete (more when one query is longer).
    let next_batch = |offset: usize| -> PolarsResult<(DataFrame, usize)> {
        let mut want = job.batch_rows;
        loop {
            let raw = read_batch(offset, want)?;
            let taken = raw.height();
            if !long_run || offset + taken >= total {
                return Ok((collapse(raw)?, taken));
            }
            let cut = start_of_last_query(&raw, id)?;
            if cut > 0 {
                return Ok((collapse(raw.slice(0, cut))?, cut));
            }
            want *= 2;
        }
    };
    if long_run {
        notes.push(super::inputs::long_run_note(
            retrieved_name,
            run_schema.contains("rank"),
        ));
    }
    // The joined table's columns, from an empty batch: what the metrics are chosen from.
    let empty = collapse(read_batch(0, 0)?)?;
    let shape = match &golden {
        Some(golden) => golden.join(&empty, id)?.0,
        None => empty,
    };
    let resolved = resolve_columns(job, shape.schema())?;
    let options = options_with_relevance(job, &resolved);
    let chosen = choose_metrics(job, &resolved, &mut notes)?;
    if let Some(why) = why_not_streamed(&chosen, &options) {
        return in_memory(&why);
    }
    let audits = super::plan::audits_claims(job, &resolved);
    let corpus = load_corpus(job)?;
    stages.lap("read golden and corpus");

    let out_path = job.out_path()?;
    let mut out = create_output(job)?;
    let mut writer = None;
    let mut out_schema: Option<Schema> = None;
    let mut corpus_tally = CorpusTally::default();
    let mut batch_notes: Vec<String> = Vec::new();
    let mut seen = SeenIds::default();
    let (mut unknown, mut unknown_examples) = (0usize, Vec::<String>::new());
    let mut sums: Vec<(&'static str, Vec<f64>)> = Vec::new();
    let mut rows_written = 0usize;
    // The claim audit, batch by batch: its claims appended beside the scores, its verdicts summed.
    let mut claims_writer = if audits {
        Some(super::claims::ClaimsWriter::beside(out_path)?)
    } else {
        None
    };
    let (mut claim_sums, mut audited_answers) = ([0.0f64; 3], 0usize);
    // The review keeps the most suspicious rows a worksheet holds, batch by batch.
    let mut review = job
        .review
        .as_ref()
        .map(|_| super::output::Review::default());
    let file = out.file()?;
    let mut offset = 0usize;
    let mut golden_done = golden.is_none() || job.parts == Parts::Block;
    use crate::engines::progress::{Progress, Work};
    Progress::planned(Work::Rows, queries.unwrap_or(total) as u64, 0);
    loop {
        let batch = if offset < total {
            let (batch, taken) = next_batch(offset)?;
            offset += taken.max(1);
            seen.add(&batch.column(id)?.cast(&DataType::String)?.str()?.clone());
            match &golden {
                Some(golden) => {
                    let (joined, not_in_golden) = golden.join(&batch, id)?;
                    unknown += not_in_golden.len();
                    for key in not_in_golden.iter().take(3 - unknown_examples.len().min(3)) {
                        unknown_examples.push(key.clone());
                    }
                    joined
                }
                None => batch,
            }
        } else if !golden_done {
            // Golden questions the run never answered: in_run false, their scores null.
            golden_done = true;
            let golden = golden.as_ref().expect("a golden table");
            let missing = golden.unanswered(&collapse(read_batch(0, 0)?)?, id)?;
            if missing.height() > 0 {
                notes.push(format!(
                    "golden: {} of {} questions have no answer in the run (in_run = false; their scores are null)",
                    missing.height(),
                    golden.height()
                ));
            }
            missing
        } else {
            break;
        };
        stages.lap("read and join");
        if batch.height() == 0 {
            continue;
        }
        let frame = apply_corpus(
            job,
            corpus.as_ref(),
            batch,
            id,
            &resolved,
            &mut corpus_tally,
        )?;
        stages.lap("corpus check");
        let mut scores =
            compute_scores(job, &options, &resolved, &chosen, &frame, &mut batch_notes)?;
        if let Some(writer) = &mut claims_writer {
            let mut audit =
                super::claims::audit_claims(&options, &frame, id, &resolved, rows_written)?;
            scores.with_column(audit.per_answer)?;
            writer.write(&mut audit.claims)?;
            for (total, batch) in claim_sums.iter_mut().zip(audit.sums) {
                *total += batch;
            }
            audited_answers += audit.answers;
        }
        if let Some(review) = &mut review {
            review.add(&frame, id, &resolved, &scores, rows_written)?;
        }
        add_corpus_sums(&chosen, &scores, &mut sums)?;
        stages.lap("score");
        scores.rechunk_mut_par();
        if writer.is_none() {
            let schema = scores.schema().as_ref().clone();
            writer = Some(
                ParquetWriter::new(&mut *file)
                    .with_key_value_metadata(Some(KeyValueMetadata::from_static(signatures(
                        job, &options, &chosen, audits,
                    ))))
                    .batched(&schema)
                    .map_err(|e| write_error(out_path, e))?,
            );
            out_schema = Some(schema);
        }
        if out_schema.as_ref() != Some(scores.schema().as_ref()) {
            polars_bail!(ComputeError: "score: a batch of {} came out with other columns than the first ({:?} vs {:?}); score it in memory with `batch_rows` = 0", job.run.display(), scores.schema(), out_schema);
        }
        writer
            .as_mut()
            .expect("the writer was made above")
            .write_batch(&scores)
            .map_err(|e| write_error(out_path, e))?;
        rows_written += scores.height();
        stages.lap("write");
        Progress::finished(Work::Rows, frame.height() as u64);
    }
    match writer {
        Some(writer) => {
            writer.finish().map_err(|e| write_error(out_path, e))?;
        }
        None => polars_bail!(ComputeError: "score: {} has no rows to score", job.run.display()),
    }
    out.commit()
        .map_err(|e| crate::job::io_err(format!("cannot write {}: {e}", out_path.display())))?;
    let mut claims_file = None;
    if let Some(writer) = claims_writer {
        let (path, written) = writer.finish()?;
        notes.push(super::claims::note(written, audited_answers, &path));
        claims_file = Some(path);
    }
    stages.lap("write");
    if job.parts == Parts::Block {
        write_block_tally(job, &chosen, scan(out_path, "scores")?)?;
        return Ok(Batched::Done(Box::new(block_report(job, rows_written))));
    }
    if let (Some(review), Some(path)) = (review, &job.review) {
        review.write(path, &mut notes)?;
    }

    // The notes of the in-memory path, from what the batches found.
    let mut first_notes: Vec<String> = Vec::new();
    if seen.twice > 0 {
        first_notes.push(format!(
            "run: {} ids occur more than once (e.g. {}); each row is scored",
            seen.twice,
            seen.examples.join(", ")
        ));
    }
    if let Some(golden) = &golden
        && golden.duplicates > 0
    {
        first_notes.push(format!(
            "golden: {} ids occur more than once (e.g. {})",
            golden.duplicates,
            golden.duplicate_examples.join(", ")
        ));
    }
    if unknown > 0 {
        first_notes.push(format!(
            "run: {unknown} rows have an id that is not in the golden table (e.g. {}); they are not scored",
            unknown_examples.join(", ")
        ));
    }
    if let Some(corpus) = &corpus {
        first_notes.extend(corpus_tally.notes(job, corpus));
    }
    first_notes.push(format!(
        "streamed in batches of {} rows ({} rows read, {rows_written} scored)",
        job.batch_rows, total
    ));
    let mut all_notes = first_notes;
    all_notes.extend(notes);
    for note in batch_notes {
        if !all_notes.contains(&note) {
            all_notes.push(note);
        }
    }
    let mut aggregates = aggregates_of_sums(&chosen, &sums);
    if audits {
        aggregates.push(super::claims::aggregate_of(&claim_sums));
    }
    let written = LazyFrame::scan_parquet(
        PlRefPath::new(out_path.display().to_string()),
        ScanArgsParquet::default(),
    )?;
    let ids: Vec<crate::registry::MetricId> = chosen.iter().map(|(m, _)| m.metric).collect();
    let tally = summarise(job, written, &ids)?;
    stages.lap("summary");
    let outcome = Outcome {
        ids,
        tally,
        aggregates,
        notes: all_notes,
        scores: None,
        claims: None,
        claims_file,
    };
    finish_report(job, &options, &chosen, outcome, stages)
        .map(|report| Batched::Done(Box::new(report)))
}

/// What [`run_in_batches`] did.
pub(crate) enum Batched {
    /// The job was scored in batches: its report.
    Done(Box<ScoreReport>),
    /// The job is to be scored in memory; why, when the run is larger than a batch.
    InMemory(Option<String>),
}
