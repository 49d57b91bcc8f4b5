//! Running a job in memory: the pipeline of named steps, the scores table and the aggregates.

use polars::prelude::*;

use super::aggregates::{add_corpus_sums, aggregates_of_sums, with_details, Aggregate};
use super::claims::CLAIM_AUDIT;
use super::output::signatures;
use super::plan::{fused_ranked, Chosen, Resolved};
use super::summary::{embed_accounting, judge_accounting, render_summary};
use super::tally::SummaryTally;
use super::SIGNATURE_KEY;
use super::{err, CustomJudgeJob, ScoreJob, ScoreReport};
use crate::columnar::dispatch;
use crate::columnar::expr;
use crate::job::corpus::Corpus;
use crate::job::Input;
use crate::metrics::retrieval::RankedMetric;
use crate::registry::MetricKind;
use crate::registry::{MetricId, MetricOptions};

/// Wall time per named step, for `--timings`.
pub(crate) struct Stages {
    pub(crate) started: std::time::Instant,
    pub(crate) last: std::time::Instant,
    pub(crate) laps: Vec<(&'static str, f64)>,
}

impl Stages {
    pub(crate) fn start() -> Self {
        let now = std::time::Instant::now();
        Stages {
            started: now,
            last: now,
            laps: Vec::new(),
        }
    }

    /// Ends the stage `name` now: its time since the last lap is added to the stage's (a
    /// stage lapped once per batch adds up over the batches).
    pub(crate) fn lap(&mut self, name: &'static str) {
        let now = std::time::Instant::now();
        let seconds = (now - self.last).as_secs_f64();
        match self.laps.iter_mut().find(|(stage, _)| *stage == name) {
            Some((_, total)) => *total += seconds,
            None => self.laps.push((name, seconds)),
        }
        self.last = now;
    }

    pub(crate) fn line(&self) -> String {
        let mut out = String::from("timings:");
        for (name, secs) in &self.laps {
            out.push_str(&format!(" {name} {secs:.3} s;"));
        }
        out.push_str(&format!(
            " total {:.3} s\n",
            self.started.elapsed().as_secs_f64()
        ));
        out
    }
}

/// What a whole job found, before its report is made.
pub(crate) struct Outcome {
    /// The metrics scored.
    pub(crate) ids: Vec<MetricId>,
    /// The summary's numbers.
    pub(crate) tally: SummaryTally,
    pub(crate) aggregates: Vec<Aggregate>,
    pub(crate) notes: Vec<String>,
    /// The scores, when the job keeps them in memory.
    pub(crate) scores: Option<DataFrame>,
    /// The claims audited, when the job keeps them in memory.
    pub(crate) claims: Option<DataFrame>,
    /// Where the claims audited were written.
    pub(crate) claims_file: Option<std::path::PathBuf>,
}

/// The job's report: the summary's text with its closing lines (what the judges and embedding
/// models spent, the stage timings) and the same facts as data.
pub(crate) fn finish_report(
    job: &ScoreJob,
    options: &MetricOptions,
    chosen: &Chosen,
    outcome: Outcome,
    stages: Stages,
) -> PolarsResult<ScoreReport> {
    let Outcome {
        ids,
        tally,
        aggregates,
        notes,
        scores,
        claims,
        claims_file,
    } = outcome;
    let audited = tally.labels.iter().any(|l| l.starts_with(CLAIM_AUDIT));
    let mut summary = render_summary(job, options, &tally, &ids, &aggregates, &notes);
    let mut ids: Vec<MetricId> = ids;
    if job.locate_quotes {
        // Located quotes may embed (cosine): their model's work is counted with the rest.
        ids.push(MetricId::LocateQuotes);
    }
    if audited {
        // The claim audit's judges: the splitter's and the support judge's calls.
        ids.extend([MetricId::SplitClaims, MetricId::CitationSupport]);
    }
    let custom_settings: Vec<_> = job
        .scored_judges()
        .map(|c| c.options.judge.clone())
        .collect();
    let (judge_text, mut usage) = judge_accounting(options, &ids, &custom_settings)?;
    let (embed_text, embed_usage) = embed_accounting(options, &ids)?;
    summary.push_str(&judge_text);
    summary.push_str(&embed_text);
    usage.extend(embed_usage);
    if job.timings {
        summary.push_str(&stages.line());
    }
    let signatures = signatures(job, options, chosen, audited)
        .into_iter()
        .map(|(key, sig)| (key.trim_start_matches(SIGNATURE_KEY).to_string(), sig))
        .collect();
    Ok(ScoreReport {
        summary,
        scores,
        claims,
        claims_file,
        tally: Some(tally),
        aggregates,
        signatures,
        notes,
        usage,
    })
}

/// The job's corpus, read once.
pub(crate) fn load_corpus(job: &ScoreJob) -> PolarsResult<Option<Corpus>> {
    job.corpus
        .as_ref()
        .map(|input| match input {
            Input::File(path) => crate::job::corpus::load(path),
            Input::Frame(frame) => frame
                .as_ref()
                .clone()
                .collect()
                .and_then(|df| Ok(Corpus::from_frame(&df)?))
                .map_err(|e| err(format!("corpus frame: {e}"))),
        })
        .transpose()
}

/// Why a job cannot stream its run batch by batch with the same scores as in memory, or `None`
/// when it can: every metric must be row-wise or combine per-row statistics, and none may need
/// the whole column (soak's automatic window over a quote column). `--locate-quotes` streams:
/// it locates each answer's quotes in that row's sources, sizing soak's automatic window from
/// the row's own quotes.
pub(crate) fn why_not_streamed(chosen: &Chosen, options: &MetricOptions) -> Option<String> {
    let whole: Vec<&str> = chosen
        .iter()
        .filter(|(info, _)| {
            (info.kind == MetricKind::Aggregate && info.corpus.is_none())
                || dispatch::reads_whole_column(info.metric, options)
        })
        .map(|(info, _)| info.id)
        .collect();
    (!whole.is_empty()).then(|| format!("{} need the whole column at once", whole.join(", ")))
}

/// The scores table: the input columns that are kept, and one column (or struct) per chosen
/// row-wise metric, corpus statistics, located quotes and the negative-answer checks.
pub(crate) fn compute_scores(
    job: &ScoreJob,
    options: &MetricOptions,
    resolved: &Resolved,
    chosen: &Chosen,
    frame: &DataFrame,
    notes: &mut Vec<String>,
) -> PolarsResult<DataFrame> {
    let schema = frame.schema();
    // Keep every input column except the (large) texts scored, so keys and metadata survive.
    // (The checks column too: its output column has the same name.)
    // The answer stays: `compare` shows regressed answers side by side.
    let scored_texts: Vec<&str> = resolved
        .sources
        .as_deref()
        .into_iter()
        .chain(resolved.retrieved.as_deref())
        .chain(resolved.checks.as_deref())
        .chain(resolved.contexts.as_deref())
        .collect();
    let outputs: Vec<&str> = chosen
        .iter()
        .filter(|(m, _)| m.kind == MetricKind::RowWise)
        .map(|(m, _)| m.id)
        .chain(
            chosen
                .iter()
                .filter_map(|(m, _)| m.corpus.map(|c| c.column)),
        )
        .chain(["negative_chrf", "closer_to_negative"])
        .chain(super::plan::audits_claims(job, resolved).then_some(CLAIM_AUDIT))
        .collect();
    let custom_ids: Vec<String> = job.scored_judges().map(CustomJudgeJob::id).collect();
    let outputs: Vec<&str> = outputs
        .into_iter()
        .chain(custom_ids.iter().map(String::as_str))
        .collect();
    let mut select: Vec<Expr> = Vec::new();
    for name in schema.iter_names().map(|n| n.as_str()) {
        if scored_texts.contains(&name) {
            continue;
        }
        if outputs.contains(&name) {
            notes.push(format!(
                "input column '{name}' is replaced by the score of the same name"
            ));
            continue;
        }
        select.push(col(name));
    }
    let answer_expr = col(resolved.answer.as_deref().unwrap_or("answer"));
    // The metrics over a ranked list and its ground truth all read the same two columns: one
    // pass computes them all (the plan's rule, keyed on the input shape).
    let ranked: Vec<(RankedMetric, crate::metrics::retrieval::RetrievalOptions)> = chosen
        .iter()
        .filter(|(info, _)| fused_ranked(info))
        .map(|(info, _)| {
            let metric = RankedMetric::from_id(info.id).ok_or_else(|| {
                err(format!(
                    "{}: reads a ranked list but has no ranked kernel",
                    info.id
                ))
            })?;
            let settings = options.retrieval(info.metric).ok_or_else(|| {
                err(format!(
                    "{}: reads a ranked list but has no retrieval options",
                    info.id
                ))
            })?;
            Ok((metric, settings.clone()))
        })
        .collect::<PolarsResult<_>>()?;
    let mut unnest_retrieval = false;
    if let Some((_, inputs)) = chosen.iter().find(|(info, _)| fused_ranked(info)) {
        select.push(expr::ranked_many(
            ranked,
            col(inputs[0].as_str()),
            col(inputs[1].as_str()),
        ));
        unnest_retrieval = true;
    }
    for (info, inputs) in chosen {
        if info.kind != MetricKind::RowWise || fused_ranked(info) {
            continue;
        }
        let inputs: Vec<Expr> = inputs.iter().map(|c| resolved.input_expr(c)).collect();
        select.push(expr::metric(info.metric, inputs, options));
    }
    // Judges defined as data, each into a column named after its card.
    for custom in job.scored_judges() {
        select.push(expr::custom_judge(
            custom.inputs(schema)?,
            custom.options.clone(),
        )?);
    }
    // Corpus-level metrics keep their per-row statistics (quoted-span counts, BLEU statistics),
    // so the summary and `compare` can combine and resample them.
    let mut stats_columns: Vec<&str> = Vec::new();
    for (info, inputs) in chosen {
        let Some(stats) = info.corpus else { continue };
        let computed = chosen
            .iter()
            .any(|(m, _)| m.id == stats.column && m.kind == MetricKind::RowWise);
        if computed || stats_columns.contains(&stats.column) {
            continue;
        }
        let inputs: Vec<Expr> = inputs.iter().map(|c| col(c.as_str())).collect();
        if let Some(e) = expr::metric_stats(info.metric, inputs, options) {
            select.push(e);
            stats_columns.push(stats.column);
        }
    }
    // Where each quote of the answer is in its sources.
    if job.locate_quotes {
        match (&resolved.sources, &resolved.answer) {
            (Some(sources), Some(_)) => select.push(expr::locate_answer_quotes(
                answer_expr.clone(),
                col(sources.as_str()),
                job.options.quoted_spans.clone(),
                job.options.locate_quotes.clone(),
            )),
            _ => notes.push("--locate-quotes skipped: the run has no answer or no sources".into()),
        }
    }
    // Negative references: how close each answer is to an answer it must not give (chrF), and
    // whether that is closer than to the best reference.
    if let (Some(negatives), Some(references), Some(_)) =
        (&resolved.negatives, &resolved.references, &resolved.answer)
    {
        let chrf = |other: &str| expr::chrf(answer_expr.clone(), col(other), job.options.chrf);
        select.push(chrf(negatives).alias("negative_chrf"));
        select.push(
            chrf(negatives)
                .gt(chrf(references))
                .alias("closer_to_negative"),
        );
    }
    let mut scores = frame.clone().lazy().select(select).collect()?;
    if unnest_retrieval {
        scores = scores.unnest(["retrieval"], None)?;
    }
    Ok(scores)
}

/// The chosen aggregates of a job scored whole, with the summary's details. A corpus-level
/// metric combines the per-row statistics its scores table already holds (as the batches and
/// parts do), rather than computing them again from the texts (corpus_chrf's character n-grams
/// cost as much as the metric itself); the sums are of counts, so the value is the same. An
/// aggregate without per-row statistics, and any aggregate of an empty table, is computed over
/// the table.
pub(crate) fn aggregates_of_scores(
    frame: &DataFrame,
    scores: &DataFrame,
    chosen: &Chosen,
    options: &MetricOptions,
) -> PolarsResult<Vec<Aggregate>> {
    let mut sums: Vec<(&'static str, Vec<f64>)> = Vec::new();
    if scores.height() > 0 {
        add_corpus_sums(chosen, scores, &mut sums)?;
    }
    let (from_sums, from_table): (Chosen, Chosen) = chosen
        .iter()
        .filter(|(info, _)| info.kind == MetricKind::Aggregate)
        .cloned()
        .partition(|(info, _)| sums.iter().any(|(id, _)| *id == info.id));
    let mut values = compute_aggregates(frame, &from_table, options)?;
    values.extend(
        aggregates_of_sums(&from_sums, &sums)
            .into_iter()
            .map(|(name, value, _)| (name, value)),
    );
    // The table's order, whichever way each was computed.
    let position = |name: &str| chosen.iter().position(|(info, _)| info.id == name);
    values.sort_by_key(|(name, _)| position(name));
    Ok(with_details(values, |stats| {
        let columns = dispatch::corpus_stats(scores, stats).ok()??;
        Some(columns.iter().map(|c| c.iter().sum()).collect())
    }))
}

/// The chosen aggregates over the whole table, with their options.
pub(crate) fn compute_aggregates(
    frame: &DataFrame,
    chosen: &Chosen,
    options: &MetricOptions,
) -> PolarsResult<Vec<(String, f64)>> {
    let mut aggregates: Vec<(String, f64)> = Vec::new();
    for (info, inputs) in chosen {
        if info.kind != MetricKind::Aggregate {
            continue;
        }
        let inputs: Vec<Expr> = inputs.iter().map(|c| col(c.as_str())).collect();
        let value = frame
            .clone()
            .lazy()
            .select([expr::metric(info.metric, inputs, options)])
            .collect()?;
        let first = crate::columnar::dispatch::metric_values(&value, info.id)?
            .first()
            .and_then(|(_, v)| v.f64().ok()?.get(0));
        aggregates.push((info.id.to_string(), first.unwrap_or(f64::NAN)));
    }
    Ok(aggregates)
}
