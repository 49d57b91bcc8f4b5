//! The job's plan: where each kind of metric input is in the joined table, which metrics its
//! inputs allow, and with which options.

use std::path::Path;

use polars::prelude::*;

use super::inputs::{pick, require, scan};
use super::CustomJudgeJob;
use super::{err, ScoreJob};
use crate::columnar::driver::readable_frame;
use crate::metrics::retrieval::Relevance;
use crate::registry::MetricOptions;
use crate::registry::{self, MetricInputs};

/// A metric to compute and the columns it reads, in the order of its inputs.
pub(crate) type Chosen = Vec<(&'static registry::MetricInfo, Vec<String>)>;

/// Where each kind of metric input comes from in the joined table.
pub(crate) struct Resolved {
    pub(crate) answer: Option<String>,
    pub(crate) sources: Option<String>,
    pub(crate) references: Option<String>,
    pub(crate) checks: Option<String>,
    pub(crate) negatives: Option<String>,
    pub(crate) retrieved: Option<String>,
    /// Ground truth of the ranked metrics, and how its name says to judge it.
    pub(crate) relevant: Option<(String, Relevance)>,
    /// Golden spans, when the retrieved items are spans too.
    pub(crate) spans: Option<String>,
    pub(crate) claim: Option<String>,
    pub(crate) cited_span: Option<String>,
    pub(crate) question: Option<String>,
    /// The contexts of the judged RAG metrics.
    pub(crate) contexts: Option<String>,
    /// The question's golden spans, whatever the retrieved items are (for the chunking metric).
    pub(crate) golden_spans: Option<String>,
    /// The chunking: a `chunks` column of the tables, or the `--chunks` table as one list
    /// shared by every row.
    pub(crate) chunks: Option<Chunking>,
    /// Verdicts given elsewhere, scored by `nugget_scores` and `claim_check_scores`, in columns
    /// of these names: `nugget_importance`, `nugget_assignment`, `response_in_reference`,
    /// `reference_in_response`, `response_in_chunks`, `reference_in_chunks`.
    pub(crate) verdicts: [Option<String>; 6],
    /// One passage per row, for `relevance_grade` (a `passage` column).
    pub(crate) passage: Option<String>,
    /// The question's nuggets, for `nugget_assignment` (a golden table's `nuggets` column, as
    /// `create_nuggets` writes it).
    pub(crate) nuggets: Option<String>,
}

/// The columns of verdicts given elsewhere, in the order of [`Resolved::verdicts`].
pub(crate) const VERDICT_COLUMNS: [&str; 6] = [
    "nugget_importance",
    "nugget_assignment",
    "response_in_reference",
    "reference_in_response",
    "response_in_chunks",
    "reference_in_chunks",
];

/// Where the chunking comes from.
pub(crate) enum Chunking {
    /// A column of the joined table.
    Column(String),
    /// One `list[struct{file, start, end}]` value read from the `--chunks` table.
    Shared(Series),
}

/// The name the chunking goes by in the metric inputs when it is the shared `--chunks` table.
pub(crate) const SHARED_CHUNKS: &str = "--chunks";

/// Reads the `--chunks` table (file, start, end) into one list of spans.
pub(crate) fn read_chunking(path: &Path) -> PolarsResult<Series> {
    let table = path.display().to_string();
    let mut chunks = scan(path, "chunks")?;
    let schema = chunks.collect_schema()?;
    for name in ["file", "start", "end"] {
        require(&schema, &table, name, "chunk span")?;
    }
    let frame = chunks
        .select([as_struct(vec![
            col("file").cast(DataType::String),
            col("start"),
            col("end"),
        ])
        .implode(true)
        .alias("chunks")])
        .collect()?;
    let frame = readable_frame("span_precision_omega", &frame)?;
    Ok(frame.column("chunks")?.as_materialized_series().clone())
}

impl Resolved {
    /// The columns a metric reads, in argument order, or what is missing.
    pub(crate) fn inputs_for(&self, inputs: MetricInputs) -> Result<Vec<&str>, &'static str> {
        fn need<'a>(c: &'a Option<String>, what: &'static str) -> Result<&'a str, &'static str> {
            c.as_deref().ok_or(what)
        }
        let answer = need(&self.answer, "answer (`columns.answer`)");
        Ok(match inputs {
            MetricInputs::Answer => vec![answer?],
            MetricInputs::AnswerSources => {
                vec![answer?, need(&self.sources, "sources (`columns.sources`)")?]
            }
            MetricInputs::AnswerChecks => vec![answer?, need(&self.checks, "checks (`columns.checks`)")?],
            MetricInputs::AnswerReferences => vec![
                answer?,
                need(
                    &self.references,
                    "reference answers (`columns.references`, or a `golden` table)",
                )?,
            ],
            MetricInputs::RetrievedGroundTruth => vec![
                need(&self.retrieved, "retrieved items (`columns.retrieved`)")?,
                self.relevant
                    .as_ref()
                    .map(|(c, _)| c.as_str())
                    .ok_or("ground truth (relevant_ids, relevant_chunks or relevant_spans; `columns.relevant`)")?,
            ],
            MetricInputs::QuoteSources | MetricInputs::Embeddings | MetricInputs::JudgedLabels => {
                return Err("its own option or command (it is not scored by id)")
            }
            MetricInputs::AnswerReferenceContexts => vec![
                answer?,
                need(&self.references, "reference answers (`columns.references`, or a `golden` table)")?,
                need(&self.contexts, "contexts (--contexts-col, or a sources list)")?,
            ],
            MetricInputs::QuestionPassage => vec![
                need(&self.question, "questions (--question-col)")?,
                need(&self.passage, "passages (a passage column)")?,
            ],
            MetricInputs::QuestionSources => vec![
                need(&self.question, "questions (--question-col)")?,
                need(&self.references, "reference answers (`columns.references`, or a `golden` table)")?,
            ],
            MetricInputs::AnswerNuggets => vec![
                answer?,
                need(&self.nuggets, "nuggets (a golden table's nuggets column, from create_nuggets)")?,
            ],
            MetricInputs::NuggetLabels => vec![
                need(&self.verdicts[0], "nugget importances (a nugget_importance column)")?,
                need(&self.verdicts[1], "nugget assessments (a nugget_assignment column)")?,
            ],
            MetricInputs::ClaimVerdicts => vec![
                need(&self.verdicts[2], "claim verdicts (a response_in_reference column)")?,
                need(&self.verdicts[3], "claim verdicts (a reference_in_response column)")?,
                need(&self.verdicts[4], "claim verdicts (a response_in_chunks column)")?,
                need(&self.verdicts[5], "claim verdicts (a reference_in_chunks column)")?,
            ],
            MetricInputs::ClaimSpan => vec![
                need(&self.claim, "claims (--claim-col)")?,
                need(&self.cited_span, "cited spans (--cited-span-col)")?,
            ],
            MetricInputs::QuestionAnswerReference => vec![
                need(&self.question, "questions (--question-col)")?,
                answer?,
                need(&self.references, "reference answers (`columns.references`, or a `golden` table)")?,
            ],
            MetricInputs::QuestionAnswerContexts => vec![
                need(&self.question, "questions (--question-col)")?,
                answer?,
                need(&self.contexts, "contexts (--contexts-col, or a sources list)")?,
            ],
            MetricInputs::QuestionAnswer => {
                vec![need(&self.question, "questions (--question-col)")?, answer?]
            }
            MetricInputs::QuestionContextsReference => vec![
                need(&self.question, "questions (--question-col)")?,
                need(&self.contexts, "contexts (--contexts-col, or a sources list)")?,
                need(&self.references, "reference answers (`columns.references`, or a `golden` table)")?,
            ],
            MetricInputs::QuestionContextsAnswer => vec![
                need(&self.question, "questions (--question-col)")?,
                need(&self.contexts, "contexts (--contexts-col, or a sources list)")?,
                answer?,
            ],
            MetricInputs::ChunkingSpans => vec![
                match &self.chunks {
                    Some(Chunking::Column(name)) => name.as_str(),
                    Some(Chunking::Shared(_)) => SHARED_CHUNKS,
                    None => return Err("the chunking (--chunks, or a chunks column)"),
                },
                need(&self.golden_spans, "golden spans (relevant_spans)")?,
            ],
            MetricInputs::RetrievedSpans => vec![
                need(&self.retrieved, "retrieved spans (--retrieved-col)")?,
                need(&self.spans, "golden spans (relevant_spans) and retrieved items with file, start, end")?,
            ],
        })
    }

    /// The expression that reads input `name`: its column, or the shared chunking.
    pub(crate) fn input_expr(&self, name: &str) -> Expr {
        match &self.chunks {
            Some(Chunking::Shared(chunks)) if name == SHARED_CHUNKS => lit(chunks.clone()),
            _ => col(name),
        }
    }

    pub(crate) fn relevance_hint(&self) -> Relevance {
        self.relevant.as_ref().map_or(Relevance::Auto, |(_, r)| *r)
    }
}

/// Whether a metric is computed with the others over the same ranked list and ground truth, in
/// one pass over the two columns: every row-wise metric of that input shape.
pub(crate) fn fused_ranked(info: &registry::MetricInfo) -> bool {
    info.inputs == MetricInputs::RetrievedGroundTruth && info.kind == registry::MetricKind::RowWise
}

/// Whether a column holds a list of spans (structs with `file`, `start` and `end`).
pub(crate) fn holds_spans(schema: &Schema, name: &str) -> bool {
    match schema.get(name) {
        Some(DataType::List(inner)) => match inner.as_ref() {
            DataType::Struct(fields) => ["file", "start", "end"]
                .iter()
                .all(|f| fields.iter().any(|x| x.name().as_str() == *f)),
            _ => false,
        },
        _ => false,
    }
}

/// Where each kind of metric input is in the joined table: the columns the job names, else the
/// documented defaults that the table has. Every named column must exist.
pub(crate) fn resolve_columns(job: &ScoreJob, schema: &Schema) -> PolarsResult<Resolved> {
    let table = job.run.named("run");
    let answer = job
        .columns
        .answer
        .clone()
        .unwrap_or_else(|| "answer".into());
    let retrieved = pick(schema, &job.columns.retrieved, &["retrieved"]);
    let retrieved_spans = retrieved.as_deref().is_some_and(|r| holds_spans(schema, r));
    let relevant = match &job.columns.relevant {
        Some(name) => Some(name.clone()),
        None => ["relevant_spans", "relevant_ids", "relevant_chunks"]
            .into_iter()
            .filter(|c| *c != "relevant_spans" || retrieved_spans)
            .find(|c| schema.contains(c))
            .map(String::from),
    };
    let relevant = relevant.map(|name| {
        let hint = match name.as_str() {
            "relevant_spans" => Relevance::Span,
            "relevant_ids" => Relevance::Id,
            "relevant_chunks" => Relevance::Text,
            _ => Relevance::Auto,
        };
        (name, hint)
    });
    let spans = pick(schema, &None, &["relevant_spans"])
        .filter(|g| retrieved_spans && holds_spans(schema, g));
    let resolved = Resolved {
        answer: (job.columns.answer.is_some() || schema.contains(&answer)).then_some(answer),
        sources: pick(schema, &job.columns.sources, &["sources", "retrieved"]),
        references: pick(
            schema,
            &job.columns.references,
            &["reference_answers", "reference"],
        ),
        checks: pick(schema, &job.columns.checks, &["checks"]),
        negatives: pick(schema, &job.columns.negatives, &["negative_answers"]),
        retrieved,
        relevant,
        spans,
        claim: pick(schema, &job.columns.claim, &["claim"]),
        cited_span: pick(schema, &job.columns.cited_span, &["cited_span"]),
        question: pick(schema, &job.columns.question, &["question", "query"]),
        contexts: pick(
            schema,
            &job.columns.contexts,
            &["contexts", "retrieved_contexts", "sources"],
        ),
        golden_spans: pick(schema, &None, &["relevant_spans"]).filter(|g| holds_spans(schema, g)),
        chunks: match &job.chunks {
            Some(path) => Some(Chunking::Shared(read_chunking(path)?)),
            None => pick(schema, &None, &["chunks"])
                .filter(|c| holds_spans(schema, c))
                .map(Chunking::Column),
        },
        verdicts: VERDICT_COLUMNS.map(|name| pick(schema, &None, &[name])),
        passage: pick(schema, &None, &["passage"]),
        nuggets: pick(schema, &None, &["nuggets"]),
    };
    for (name, what) in [
        (&resolved.answer, "answer"),
        (&resolved.sources, "sources"),
        (&resolved.references, "references"),
        (&resolved.checks, "checks"),
        (&resolved.negatives, "negatives"),
        (&resolved.retrieved, "retrieved"),
        (&resolved.claim, "claims"),
        (&resolved.cited_span, "cited spans"),
        (&resolved.question, "questions"),
        (&resolved.contexts, "contexts"),
        (
            &resolved.relevant.as_ref().map(|r| r.0.clone()),
            "ground truth",
        ),
    ] {
        if let Some(name) = name {
            require(schema, &table, name, what)?;
        }
    }
    if let Some(by) = &job.by {
        require(schema, &table, by, "segment (--by)")?;
    }
    Ok(resolved)
}

/// The job's options, with the relevance a ground-truth column's name implies wherever a
/// ranked metric's section leaves it on `auto`, so the signatures show what was used.
pub(crate) fn options_with_relevance(job: &ScoreJob, resolved: &Resolved) -> MetricOptions {
    let mut options = job.options.clone();
    for info in registry::METRICS {
        if let Some(o) = options.retrieval_mut(info.metric)
            && o.relevance == Relevance::Auto
        {
            o.relevance = resolved.relevance_hint();
        }
    }
    options
}

/// The metrics to compute: those asked for (each must have its inputs), or every metric whose
/// inputs the tables have (the others are noted as skipped).
pub(crate) fn choose_metrics(
    job: &ScoreJob,
    resolved: &Resolved,
    notes: &mut Vec<String>,
) -> PolarsResult<Chosen> {
    let table = job.run.named("run");
    let mut chosen: Vec<(&'static registry::MetricInfo, Vec<String>)> = Vec::new();
    let mut skipped: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
    let mut sections = job.options.clone();
    for info in registry::scored() {
        let asked = job.metrics.as_ref().map(|m| m.iter().any(|x| x == info.id));
        if asked == Some(false) {
            continue;
        }
        if audited(info.id) && audits_claims(job, resolved) {
            // The tables have answers, not claims: the job audits the answers' claims instead.
            continue;
        }
        // A metric's own section may name its judge or model.
        let own_judge = sections
            .judge_mut(info.metric)
            .is_some_and(|j| *j != crate::engines::judge::JudgeSettings::default());
        let own_embedder = sections
            .embedder_mut(info.metric)
            .is_some_and(|e| *e != crate::engines::embed::EmbedSettings::default());
        let needs_judge =
            info.engine.is_some_and(registry::Engine::judges) && job.judge.is_none() && !own_judge;
        let needs_embedder = info.engine.is_some_and(registry::Engine::embeds)
            && job.embedder.is_none()
            && !own_embedder;
        let inputs = if needs_judge {
            Err("a judge ([judge] section, --judge-model / --judge-base-url, or POLARS_RAG_JUDGE_MODEL)")
        } else if needs_embedder {
            Err("an embedding model ([embed] section, --embed-model / --embed-base-url, or POLARS_RAG_EMBED_MODEL)")
        } else if let Some(what) = job.options.unconfigured(info.metric) {
            Err(what)
        } else if info.metric == registry::MetricId::CitationRecallPrecision
            && job.options.citation_recall_precision.qampari
        {
            // ALCE's QAMPARI reading also reads each answer's question.
            resolved.inputs_for(info.inputs).and_then(|mut cols| {
                cols.push(
                    resolved
                        .question
                        .as_deref()
                        .ok_or("questions (--question-col), which qampari reads")?,
                );
                Ok(cols)
            })
        } else {
            resolved.inputs_for(info.inputs)
        };
        match inputs {
            Ok(cols) => chosen.push((info, cols.into_iter().map(String::from).collect())),
            Err(what) if asked == Some(true) => {
                return Err(err(format!("{}: needs {what}; {table} has none", info.id)))
            }
            Err(what) => match skipped.iter_mut().find(|(w, _)| *w == what) {
                Some((_, ids)) => ids.push(info.id),
                None => skipped.push((what, vec![info.id])),
            },
        }
    }
    if chosen.is_empty()
        && !job.locate_quotes
        && job.scored_judges().next().is_none()
        && !audits_claims(job, resolved)
    {
        let why: Vec<String> = skipped
            .iter()
            .map(|(what, ids)| format!("{} need {what}", ids.join(", ")))
            .collect();
        return Err(err(format!(
            "nothing to score: {table} has the inputs of no metric ({}); name the columns with --answer-col, --retrieved-col, ... or a [columns] section",
            why.join("; ")
        )));
    }
    for (what, ids) in skipped {
        notes.push(format!("skipped (they need {what}): {}", ids.join(", ")));
    }
    let unlisted: Vec<String> = job
        .custom_judges
        .iter()
        .map(CustomJudgeJob::id)
        .filter(|id| job.scored_judges().all(|j| j.id() != *id))
        .collect();
    if !unlisted.is_empty() {
        notes.push(format!(
            "judges not scored (not in --metrics): {}",
            unlisted.join(", ")
        ));
    }

    Ok(chosen)
}

/// The metrics the audit stands in for when the tables have no claims to judge.
const AUDITED: [&str; 2] = ["citation_support", "citation_precision"];

/// Whether the job audits its answers' claims: a judge, answers and sources, no `claim` or
/// `cited_span` column, and `citation_support` or `citation_precision` asked for (or no metric
/// list: every metric whose inputs are there).
pub(crate) fn audits_claims(job: &ScoreJob, resolved: &Resolved) -> bool {
    job.judge.is_some()
        && resolved.answer.is_some()
        && resolved.sources.is_some()
        && resolved.claim.is_none()
        && resolved.cited_span.is_none()
        && job
            .metrics
            .as_ref()
            .is_none_or(|ids| ids.iter().any(|id| AUDITED.contains(&id.as_str())))
}

/// Whether `id` is one of the metrics the audit stands in for.
fn audited(id: &str) -> bool {
    AUDITED.contains(&id)
}
