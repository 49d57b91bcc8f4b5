//! `polars-rag score`: read a run table (and optionally a golden table joined on the id column),
//! compute the requested metrics, write a scores table and summarise.
//!
//! Rows: without a golden table, one output row per run row. With one, one row per golden row
//! (a left join on the id), with `in_run` false where the run has no answer for the question;
//! run rows whose id is not in the golden table, and ids that occur twice, are reported in the
//! summary, never dropped silently.

use std::path::{Path, PathBuf};

use polars::prelude::*;

use crate::atomic::AtomicFile;
use crate::cli::config::Columns;
use crate::cli::corpus::{check_spans, Corpus, SpanUnit};
use crate::cli::tally::SummaryTally;
use crate::metrics::judged::custom::CustomJudgeOptions;
use crate::metrics::retrieval::{RankedMetric, Relevance};
use crate::metrics::MetricOptions;
use crate::polars::driver::readable_frame;
use crate::polars::expr;
use crate::polars::{table, tables};
use crate::registry::{self, MetricInputs, MetricKind};

/// A fully resolved `score` job.
#[derive(Clone, Debug, Default)]
pub struct ScoreJob {
    /// Input run table.
    pub run: PathBuf,
    /// Golden table joined on the id column.
    pub golden: Option<PathBuf>,
    /// Output scores table.
    pub out: PathBuf,
    /// Metric ids; `None` computes every metric whose inputs the tables have.
    pub metrics: Option<Vec<String>>,
    /// Column names; `None` picks the documented defaults.
    pub columns: Columns,
    /// Per-metric options.
    pub options: MetricOptions,
    /// The documents spans point into (Parquet `file`, `text`, or a directory): spans are
    /// checked against it and retrieved spans without text get their text.
    pub corpus: Option<PathBuf>,
    /// The chunking (Parquet: file, start, end) that `span_precision_omega` scores.
    pub chunks: Option<PathBuf>,
    /// The unit of the tables' span offsets (converted to code points with the corpus).
    pub unit: SpanUnit,
    /// What to do with a span that does not fit the corpus.
    pub invalid_spans: InvalidSpans,
    /// A column (of the golden or run table) to break the summary down by.
    pub by: Option<String>,
    /// Print the time each stage took.
    pub timings: bool,
    /// When the progress line of judge calls and embeddings is shown (on stderr).
    pub progress: crate::cli::progress::ProgressMode,
    /// Locate each quoted span of the answers in the row's sources (`locate_quotes` column, named like the plugin's function),
    /// with `options.locate_quotes`.
    pub locate_quotes: bool,
    /// Write the rows of `citation_support` to check by hand here (`.xlsx`, most suspicious
    /// first).
    pub review: Option<PathBuf>,
    /// The judge of the judged metrics (already applied to their options); `None`: judged
    /// metrics are skipped unless asked for, and asking for one is an error.
    pub judge: Option<crate::engines::judge::JudgeSettings>,
    /// The embedding model of the metrics that embed (already applied to their options);
    /// `None`: those metrics are skipped unless asked for, and asking for one is an error.
    pub embedder: Option<crate::engines::embed::EmbedSettings>,
    /// Judges defined as data (`[judges.<id>]`, `--judge-card`), each scored into a column named
    /// after its card's id.
    pub custom_judges: Vec<CustomJudgeJob>,
    /// Score a run of more rows than this one batch at a time (bounded memory; see
    /// `run_in_batches`); 0 scores it in memory whatever its size.
    pub batch_rows: usize,
    /// Whether the run is the whole job or a part of one scored on several machines.
    pub parts: Parts,
}

/// How a `score` run relates to a job scored in parts, block by block on several machines
/// (the Ray driver of the Python package does this): each block is scored with
/// [`Parts::Block`], then one [`Parts::Summarise`] call completes and summarises the job. The
/// scores and summary are those of one `score` call over the whole run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Parts {
    /// The run is the whole job.
    #[default]
    Whole,
    /// The run is one block of the job: its rows are scored and written, the golden questions
    /// it does not answer are left to the job (another block may answer them), and no summary
    /// is computed.
    Block,
    /// Nothing of the run is scored (it gives the columns): the blocks are written, as the
    /// Parquet files matching this pattern. The golden questions that no block answers are
    /// scored into `out` (in_run = false, as one call would add them), and the summary is
    /// computed over the blocks and that file, corpus-level metrics from their per-row
    /// statistics.
    Summarise(String),
}

/// A judge defined as data that `score` runs: its card and judge, and the column each of the
/// card's inputs reads (an input left out reads the column of its own name).
#[derive(Clone, Debug)]
pub struct CustomJudgeJob {
    /// The card and the judge's settings.
    pub options: CustomJudgeOptions,
    /// Card input name → column of the joined table.
    pub columns: std::collections::BTreeMap<String, String>,
}

impl CustomJudgeJob {
    /// The card's id: the output column, its summary labels and its signature key.
    pub fn id(&self) -> String {
        self.options.card().map(|c| c.id).unwrap_or_default()
    }

    /// The input expressions in the card's order, or an error naming the judge, the input and
    /// the missing column.
    fn inputs(&self, schema: &Schema) -> PolarsResult<Vec<Expr>> {
        let card = self.options.card()?;
        card.inputs
            .iter()
            .map(|input| {
                let column = self.columns.get(input).unwrap_or(input);
                if schema.get(column).is_none() {
                    let known: Vec<&str> = schema.iter_names().map(|n| n.as_str()).collect();
                    return Err(err(format!(
                        "judge {}: input `{input}` reads column '{column}', which the tables do not have (map it with inputs = {{ {input} = \"COLUMN\" }}); columns: {}",
                        card.id,
                        known.join(", ")
                    )));
                }
                Ok(col(column.as_str()))
            })
            .collect()
    }
}

/// What `score` does with a span that does not fit its corpus.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InvalidSpans {
    /// Stop with an error naming the query and the span (the default).
    #[default]
    Error,
    /// Score that query's span-based metrics as null and say why in `span_issues`.
    Null,
}

/// What a job produced, for the summary.
pub struct ScoreReport {
    /// Lines of the human-readable summary.
    pub summary: String,
}

fn err(msg: String) -> PolarsError {
    PolarsError::ComputeError(msg.into())
}

/// Checks metric ids against the metric table (tools such as `locate_quotes` have switches of
/// their own and are not scored by id).
pub fn validate_metrics(ids: &[String]) -> PolarsResult<()> {
    for id in ids {
        let info = registry::require(id)?;
        if info.kind == MetricKind::Tool {
            return Err(err(format!(
                "{id} is not a score metric; use its own option or command (polars-rag metrics lists them)"
            )));
        }
    }
    Ok(())
}

pub(crate) fn scan(path: &Path, what: &str) -> PolarsResult<LazyFrame> {
    let name = path.to_string_lossy().to_string();
    if !path.exists() {
        return Err(err(format!("{what} table not found: {name}")));
    }
    super::parquet_file(path, &format!("{what} table"))?;
    LazyFrame::scan_parquet(name.as_str().into(), ScanArgsParquet::default())
}

/// The first of `names` that `schema` has.
fn pick(schema: &Schema, explicit: &Option<String>, defaults: &[&str]) -> Option<String> {
    match explicit {
        Some(name) => Some(name.clone()),
        None => defaults
            .iter()
            .find(|n| schema.contains(n))
            .map(|n| n.to_string()),
    }
}

fn require(schema: &Schema, table: &str, name: &str, what: &str) -> PolarsResult<()> {
    if schema.contains(name) {
        return Ok(());
    }
    let cols: Vec<&str> = schema.iter_names().map(|n| n.as_str()).collect();
    Err(err(format!(
        "{table}: no {what} column '{name}' (columns: {})",
        cols.join(", ")
    )))
}

/// Up to five ids of `ids` as text, for a note.
fn examples(ids: &Series) -> PolarsResult<String> {
    let ids = ids.cast(&DataType::String)?;
    Ok(ids
        .str()?
        .iter()
        .take(5)
        .map(|v| v.unwrap_or("null"))
        .collect::<Vec<_>>()
        .join(", "))
}

/// The input table of a job (run, or golden ⋈ run) and what the join found.
struct Inputs {
    frame: DataFrame,
    notes: Vec<String>,
}

/// Reads the run (collapsing a long one) and, with a golden table, joins it (the table layer,
/// [`tables::join_golden`]); what the join found becomes notes.
fn load_inputs(job: &ScoreJob, id: &str) -> PolarsResult<Inputs> {
    let run_name = job.run.display().to_string();
    let mut run = scan(&job.run, "run")?;
    let run_schema = run.collect_schema()?;
    require(&run_schema, &run_name, id, "id")?;
    let mut notes = Vec::new();
    let retrieved_name = job.columns.retrieved.as_deref().unwrap_or("retrieved");
    // Categorical ids and texts are read as strings, small integers widened, as every face does.
    let mut run = readable_frame("score", &run.collect()?)?;
    if tables::is_long_run(&run_schema, retrieved_name) {
        if job.parts == Parts::Block {
            // A query's rows may sit in two blocks, which would collapse them apart.
            return Err(err(format!(
                "score --block: {run_name} has one row per retrieved item; collapse the run to one row per query first (polars_rag.collapse_run), so that no query is split across blocks"
            )));
        }
        notes.push(format!(
            "run: one row per retrieved item (doc_id); collapsed into a '{retrieved_name}' list per query{}",
            if run_schema.contains("rank") { ", ordered by rank" } else { ", in row order" }
        ));
        run = tables::collapse_run(&run, id)?;
        run.rename("retrieved", retrieved_name.into())?;
    }
    let duplicate_run = tables::duplicate_ids(&run, "run", id)?;
    if !duplicate_run.is_empty() {
        notes.push(format!(
            "run: {} ids occur more than once (e.g. {}); each row is scored",
            duplicate_run.len(),
            examples(&duplicate_run)?
        ));
    }
    let Some(golden_path) = &job.golden else {
        return Ok(Inputs { frame: run, notes });
    };
    let golden_name = golden_path.display().to_string();
    let mut golden = scan(golden_path, "golden")?;
    let golden_schema = golden.collect_schema()?;
    require(&golden_schema, &golden_name, id, "id")?;
    let golden = readable_frame("score", &golden.collect()?)?;
    let joined = tables::join_golden(&golden, &run, id)?;
    if !joined.duplicate_golden.is_empty() {
        notes.push(format!(
            "golden: {} ids occur more than once (e.g. {})",
            joined.duplicate_golden.len(),
            examples(&joined.duplicate_golden)?
        ));
    }
    if !joined.unknown.is_empty() {
        notes.push(format!(
            "run: {} rows have an id that is not in the golden table (e.g. {}); they are not scored",
            joined.unknown.len(),
            examples(&joined.unknown)?
        ));
    }
    if !joined.missing.is_empty() {
        notes.push(format!(
            "golden: {} of {} questions have no answer in the run (in_run = false; their scores are null)",
            joined.missing.len(),
            golden.height()
        ));
    }
    Ok(Inputs {
        frame: joined.frame,
        notes,
    })
}

/// Where each kind of metric input comes from in the joined table.
struct Resolved {
    answer: Option<String>,
    sources: Option<String>,
    references: Option<String>,
    checks: Option<String>,
    negatives: Option<String>,
    retrieved: Option<String>,
    /// Ground truth of the ranked metrics, and how its name says to judge it.
    relevant: Option<(String, Relevance)>,
    /// Golden spans, when the retrieved items are spans too.
    spans: Option<String>,
    claim: Option<String>,
    cited_span: Option<String>,
    question: Option<String>,
    /// The contexts of the judged RAG metrics.
    contexts: Option<String>,
    /// The question's golden spans, whatever the retrieved items are (for the chunking metric).
    golden_spans: Option<String>,
    /// The chunking: a `chunks` column of the tables, or the `--chunks` table as one list
    /// shared by every row.
    chunks: Option<Chunking>,
}

/// Where the chunking comes from.
enum Chunking {
    /// A column of the joined table.
    Column(String),
    /// One `list[struct{file, start, end}]` value read from the `--chunks` table.
    Shared(Series),
}

/// The name the chunking goes by in the metric inputs when it is the shared `--chunks` table.
const SHARED_CHUNKS: &str = "--chunks";

/// Reads the `--chunks` table (file, start, end) into one list of spans.
fn read_chunking(path: &Path) -> PolarsResult<Series> {
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
    fn inputs_for(&self, inputs: MetricInputs) -> Result<Vec<&str>, &'static str> {
        fn need<'a>(c: &'a Option<String>, what: &'static str) -> Result<&'a str, &'static str> {
            c.as_deref().ok_or(what)
        }
        let answer = need(&self.answer, "answer (--answer-col)");
        Ok(match inputs {
            MetricInputs::Answer => vec![answer?],
            MetricInputs::AnswerSources => {
                vec![answer?, need(&self.sources, "sources (--sources-col)")?]
            }
            MetricInputs::AnswerChecks => vec![answer?, need(&self.checks, "checks (--checks-col)")?],
            MetricInputs::AnswerReferences => vec![
                answer?,
                need(
                    &self.references,
                    "reference answers (--references-col, or a --golden table)",
                )?,
            ],
            MetricInputs::RetrievedGroundTruth => vec![
                need(&self.retrieved, "retrieved items (--retrieved-col)")?,
                self.relevant
                    .as_ref()
                    .map(|(c, _)| c.as_str())
                    .ok_or("ground truth (relevant_ids, relevant_chunks or relevant_spans; --relevant-col)")?,
            ],
            MetricInputs::QuoteSources | MetricInputs::Embeddings => {
                return Err("its own option or command (it is not scored by id)")
            }
            MetricInputs::ClaimSpan => vec![
                need(&self.claim, "claims (--claim-col)")?,
                need(&self.cited_span, "cited spans (--cited-span-col)")?,
            ],
            MetricInputs::QuestionAnswerReference => vec![
                need(&self.question, "questions (--question-col)")?,
                answer?,
                need(&self.references, "reference answers (--references-col, or a --golden table)")?,
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
                need(&self.references, "reference answers (--references-col, or a --golden table)")?,
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
    fn input_expr(&self, name: &str) -> Expr {
        match &self.chunks {
            Some(Chunking::Shared(chunks)) if name == SHARED_CHUNKS => lit(chunks.clone()),
            _ => col(name),
        }
    }

    fn relevance_hint(&self) -> Relevance {
        self.relevant.as_ref().map_or(Relevance::Auto, |(_, r)| *r)
    }
}

/// Whether a column holds a list of spans (structs with `file`, `start` and `end`).
fn holds_spans(schema: &Schema, name: &str) -> bool {
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

/// What checking spans against the corpus found, summed over the batches of a job.
#[derive(Default)]
struct CorpusTally {
    /// Per span column: spans whose stored text differs from the corpus, and a first example.
    text_mismatches: Vec<(String, usize, String)>,
    /// Queries whose spans do not fit the corpus (scored null).
    bad_queries: usize,
}

impl CorpusTally {
    /// The summary's notes on the corpus.
    fn notes(&self, job: &ScoreJob, corpus: &Corpus) -> Vec<String> {
        let Some(path) = &job.corpus else {
            return Vec::new();
        };
        let mut notes: Vec<String> = self
            .text_mismatches
            .iter()
            .map(|(name, n, example)| {
                format!("{name}: {n} spans' stored text differs from the corpus (e.g. {example})")
            })
            .collect();
        notes.push(format!(
            "corpus {}: {} documents; spans checked{}",
            path.display(),
            corpus.len(),
            if job.unit == SpanUnit::Bytes {
                " and converted from bytes to code points"
            } else {
                ""
            }
        ));
        if self.bad_queries > 0 {
            notes.push(format!(
                "{} queries have spans that do not fit the corpus: their span-based metrics are null (see span_issues)",
                self.bad_queries
            ));
        }
        notes
    }
}

/// Checks the span columns against the corpus (converting byte offsets, filling retrieved
/// texts); on a bad span, stops or nulls that row's spans as the job says. With
/// `--invalid-spans null` the frame always gets `span_issues` (null where a row's spans fit), so
/// every batch of a job has the same columns.
fn apply_corpus(
    job: &ScoreJob,
    corpus: Option<&Corpus>,
    frame: DataFrame,
    id: &str,
    resolved: &Resolved,
    tally: &mut CorpusTally,
) -> PolarsResult<DataFrame> {
    let (Some(path), Some(corpus)) = (&job.corpus, corpus) else {
        return Ok(frame);
    };
    let schema = frame.schema().clone();
    let mut frame = frame;
    let mut span_columns: Vec<(&str, bool)> = Vec::new();
    if let Some(r) = resolved
        .retrieved
        .as_deref()
        .filter(|r| holds_spans(&schema, r))
    {
        span_columns.push((r, true));
    }
    if let Some(g) = resolved.spans.as_deref() {
        span_columns.push((g, false));
    }
    let mut bad_rows: std::collections::BTreeMap<usize, Vec<String>> = Default::default();
    for (name, fill) in span_columns {
        let checked = check_spans(&frame, id, name, corpus, job.unit, fill)?;
        if let Some(first) = checked.text_mismatches.first() {
            match tally.text_mismatches.iter_mut().find(|(n, ..)| n == name) {
                Some(entry) => entry.1 += checked.text_mismatches.len(),
                None => tally.text_mismatches.push((
                    name.to_string(),
                    checked.text_mismatches.len(),
                    first.to_string(),
                )),
            }
        }
        if !checked.issues.is_empty() && job.invalid_spans == InvalidSpans::Error {
            let shown: Vec<String> = checked
                .issues
                .iter()
                .take(5)
                .map(|i| i.to_string())
                .collect();
            return Err(err(format!(
                "{name}: {} spans do not fit the corpus {} ({}); pass --invalid-spans null to score those queries' span metrics as null",
                checked.issues.len(),
                path.display(),
                shown.join("; ")
            )));
        }
        for issue in &checked.issues {
            bad_rows
                .entry(issue.row)
                .or_default()
                .push(format!("{name}: {issue}"));
        }
        frame.with_column(checked.column.into_column())?;
    }
    tally.bad_queries += bad_rows.len();
    if !bad_rows.is_empty() {
        let valid: BooleanChunked = (0..frame.height())
            .map(|row| Some(!bad_rows.contains_key(&row)))
            .collect();
        let mut exprs: Vec<Expr> = Vec::new();
        for name in [resolved.retrieved.as_deref(), resolved.spans.as_deref()]
            .into_iter()
            .flatten()
        {
            exprs.push(
                when(col("__span_ok"))
                    .then(col(name))
                    .otherwise(lit(NULL).cast(schema.get(name).cloned().unwrap_or(DataType::Null)))
                    .alias(name),
            );
        }
        frame = frame
            .hstack(&[valid.with_name("__span_ok".into()).into_column()])?
            .lazy()
            .with_columns(exprs)
            .collect()?
            .drop("__span_ok")?;
    }
    if job.invalid_spans == InvalidSpans::Null {
        let reasons: StringChunked = (0..frame.height())
            .map(|row| bad_rows.get(&row).map(|r| r.join("; ")))
            .collect();
        frame.with_column(reasons.with_name("span_issues".into()).into_column())?;
    }
    Ok(frame)
}

/// A metric to compute and the columns it reads, in the order of its inputs.
type Chosen = Vec<(&'static registry::MetricInfo, Vec<String>)>;

/// Wall time per named step, for `--timings`.
struct Stages {
    started: std::time::Instant,
    last: std::time::Instant,
    laps: Vec<(&'static str, f64)>,
}

impl Stages {
    fn start() -> Self {
        let now = std::time::Instant::now();
        Stages {
            started: now,
            last: now,
            laps: Vec::new(),
        }
    }

    fn lap(&mut self, name: &'static str) {
        let now = std::time::Instant::now();
        self.laps.push((name, (now - self.last).as_secs_f64()));
        self.last = now;
    }

    fn line(&self) -> String {
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

/// Runs the job as a pipeline of named steps: load (read and join), resolve the columns, check
/// the spans against the corpus, choose the metrics, plan and compute the scores, write, and
/// summarise. A run larger than `batch_rows` goes through the same steps one batch at a time
/// (see `run_in_batches`), so its memory does not grow with it.
pub fn run(job: &ScoreJob) -> PolarsResult<ScoreReport> {
    // A page that fails to decode surfaces when its rows are read, as Polars' error, which names
    // no file: the job's Parquet inputs are named beside it.
    let inputs = [
        ("run table", Some(&job.run)),
        ("golden table", job.golden.as_ref()),
        ("corpus", job.corpus.as_ref()),
        ("chunks table", job.chunks.as_ref()),
    ];
    let named: Vec<(&str, &Path)> = inputs
        .iter()
        .filter_map(|(role, path)| Some((*role, (*path)?.as_path())))
        .filter(|(_, path)| path.is_file())
        .collect();
    run_job(job).map_err(|e| super::naming_read_errors(e, &named))
}

fn run_job(job: &ScoreJob) -> PolarsResult<ScoreReport> {
    refuse_overwriting_inputs(job)?;
    if let Some(ids) = &job.metrics {
        validate_metrics(ids)?;
    }
    let id = job.columns.id.clone().unwrap_or_else(|| "query_id".into());
    if let Parts::Summarise(pattern) = &job.parts {
        return summarise_parts(job, &id, pattern);
    }
    if let Some(report) = run_in_batches(job, &id)? {
        return Ok(report);
    }
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
    let chosen = choose_metrics(job, &resolved, &mut notes)?;
    let mut scores = compute_scores(job, &options, &resolved, &chosen, &frame, &mut notes)?;
    stages.lap("score");
    let aggregates = compute_aggregates(&frame, &chosen, &options)?;
    let aggregates = with_details(aggregates, |stats| {
        let columns = table::corpus_stats(&scores, stats).ok()??;
        Some(columns.iter().map(|c| c.iter().sum()).collect())
    });
    write_scores(job, &options, &chosen, &mut scores)?;
    if job.parts == Parts::Block {
        write_block_tally(job, &chosen, scores.clone().lazy())?;
        return Ok(block_report(job, scores.height()));
    }
    if let Some(path) = &job.review {
        write_review(path, &frame, &id, &resolved, &scores, &mut notes)?;
    }
    stages.lap("aggregates and write");
    let ids: Vec<&str> = chosen.iter().map(|(m, _)| m.id).collect();
    let summary = summarise(job, &options, scores.lazy(), &ids, &aggregates, &notes)?;
    finish_report(job, &options, ids, summary, stages)
}

/// The summary's closing lines (what the judges and embedding models spent, the stage timings).
fn finish_report(
    job: &ScoreJob,
    options: &MetricOptions,
    mut ids: Vec<&str>,
    mut summary: String,
    stages: Stages,
) -> PolarsResult<ScoreReport> {
    if job.locate_quotes {
        // Located quotes may embed (cosine): their model's work is counted with the rest.
        ids.push("locate_quotes");
    }
    let custom_settings: Vec<_> = job
        .custom_judges
        .iter()
        .map(|c| c.options.judge.clone())
        .collect();
    summary.push_str(&judge_accounting(options, &ids, &custom_settings)?);
    summary.push_str(&embed_accounting(options, &ids)?);
    if job.timings {
        summary.push_str(&stages.line());
    }
    Ok(ScoreReport { summary })
}

/// The job's corpus, read once.
fn load_corpus(job: &ScoreJob) -> PolarsResult<Option<Corpus>> {
    job.corpus
        .as_ref()
        .map(|path| super::corpus::load(path).map_err(err))
        .transpose()
}

/// An aggregate's value with the summary's description of its summed statistics, when its
/// metric describes them (`(15 of 18 quoted spans found)`); `sums` gives a metric's summed
/// statistics.
type Aggregate = (String, f64, String);

fn with_details(
    aggregates: Vec<(String, f64)>,
    sums: impl Fn(&registry::CorpusStats) -> Option<Vec<f64>>,
) -> Vec<Aggregate> {
    aggregates
        .into_iter()
        .map(|(name, value)| {
            let detail = registry::find(&name)
                .and_then(|m| m.corpus)
                .and_then(|stats| Some(format!("   {}", (stats.describe?)(&sums(&stats)?))))
                .unwrap_or_default();
            (name, value, detail)
        })
        .collect()
}

/// Whether a job can stream its run batch by batch, with the same scores as in memory: every
/// metric is row-wise or combines per-row statistics, no metric needs the whole column (soak's
/// automatic window), the run has one row per query (a long run is collapsed whole), and no
/// review (sorted over all rows) is asked for.
fn streams(job: &ScoreJob, chosen: &Chosen, options: &MetricOptions) -> bool {
    job.review.is_none()
        && !(job.locate_quotes && job.options.locate_quotes.window_from_batch())
        && chosen.iter().all(|(info, _)| {
            (info.kind != MetricKind::Aggregate || info.corpus.is_some())
                && !table::reads_whole_column(info.id, options)
        })
}

/// The run's id hashes seen so far, to find ids that occur twice across batches without
/// keeping the ids themselves.
#[derive(Default)]
struct SeenIds {
    hashes: std::collections::HashSet<u64>,
    twice: usize,
    examples: Vec<String>,
}

impl SeenIds {
    fn add(&mut self, ids: &StringChunked) {
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

/// Scores a run larger than `job.batch_rows` one batch of rows at a time: each batch is read
/// from the Parquet file, joined with the golden rows of its ids (read from the golden file;
/// see [`GoldenIndex`]), checked against the corpus (held in memory), scored and appended to
/// the output as row groups; corpus-level metrics are combined from the per-row statistics
/// summed over the batches, and the summary is computed from the written scores by Polars'
/// streaming engine. Peak memory is one batch, the golden ids and the corpus, whatever the
/// run's size.
///
/// The scores are those of the in-memory path; the rows come in run order (golden order within
/// a batch), and golden questions without an answer come last. `None` when the job must be
/// scored in memory (see [`streams`]) or the run fits in one batch.
fn run_in_batches(job: &ScoreJob, id: &str) -> PolarsResult<Option<ScoreReport>> {
    if job.batch_rows == 0 || job.review.is_some() {
        return Ok(None);
    }
    let run_name = job.run.display().to_string();
    let mut run_scan = scan(&job.run, "run")?;
    let run_schema = run_scan.collect_schema()?;
    require(&run_schema, &run_name, id, "id")?;
    let retrieved_name = job.columns.retrieved.as_deref().unwrap_or("retrieved");
    if tables::is_long_run(&run_schema, retrieved_name) {
        return Ok(None);
    }
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
        return Ok(None);
    }
    let mut stages = Stages::start();
    let mut notes: Vec<String> = Vec::new();
    let golden = match &job.golden {
        Some(path) => {
            let mut scan_golden = scan(path, "golden")?;
            let schema = scan_golden.collect_schema()?;
            require(&schema, &path.display().to_string(), id, "id")?;
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
    // The joined table's columns, from an empty batch: what the metrics are chosen from.
    let empty = read_batch(0, 0)?;
    let shape = match &golden {
        Some(golden) => golden.join(&empty, id)?.0,
        None => empty,
    };
    let resolved = resolve_columns(job, shape.schema())?;
    let options = options_with_relevance(job, &resolved);
    let chosen = choose_metrics(job, &resolved, &mut notes)?;
    if !streams(job, &chosen, &options) {
        return Ok(None);
    }
    let corpus = load_corpus(job)?;
    stages.lap("read golden and corpus");

    let mut out = create_output(job)?;
    let mut writer = None;
    let mut out_schema: Option<Schema> = None;
    let mut corpus_tally = CorpusTally::default();
    let mut batch_notes: Vec<String> = Vec::new();
    let mut seen = SeenIds::default();
    let (mut unknown, mut unknown_examples) = (0usize, Vec::<String>::new());
    let mut sums: Vec<(&'static str, Vec<f64>)> = Vec::new();
    let mut rows_written = 0usize;
    let file = out.file()?;
    let mut offset = 0usize;
    let mut golden_done = golden.is_none() || job.parts == Parts::Block;
    use crate::engines::progress::{Progress, Work};
    Progress::planned(Work::Rows, total as u64, 0);
    loop {
        let batch = if offset < total {
            let batch = read_batch(offset, job.batch_rows)?;
            offset += batch.height().max(1);
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
            let missing = golden.unanswered(&read_batch(0, 0)?, id)?;
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
        let mut scores =
            compute_scores(job, &options, &resolved, &chosen, &frame, &mut batch_notes)?;
        add_corpus_sums(&chosen, &scores, &mut sums)?;
        scores.rechunk_mut_par();
        if writer.is_none() {
            let schema = scores.schema().as_ref().clone();
            writer = Some(
                ParquetWriter::new(&mut *file)
                    .with_key_value_metadata(Some(KeyValueMetadata::from_static(signatures(
                        job, &options, &chosen,
                    ))))
                    .batched(&schema)
                    .map_err(|e| write_error(&job.out, e))?,
            );
            out_schema = Some(schema);
        }
        if out_schema.as_ref() != Some(scores.schema().as_ref()) {
            polars_bail!(ComputeError: "score: a batch of {} came out with other columns than the first ({:?} vs {:?}); score it in memory with --batch-rows 0", job.run.display(), scores.schema(), out_schema);
        }
        writer
            .as_mut()
            .expect("the writer was made above")
            .write_batch(&scores)
            .map_err(|e| write_error(&job.out, e))?;
        rows_written += scores.height();
        Progress::finished(Work::Rows, frame.height() as u64);
    }
    match writer {
        Some(writer) => {
            writer.finish().map_err(|e| write_error(&job.out, e))?;
        }
        None => polars_bail!(ComputeError: "score: {} has no rows to score", job.run.display()),
    }
    out.commit()
        .map_err(|e| err(format!("cannot write {}: {e}", job.out.display())))?;
    stages.lap("score and write");
    if job.parts == Parts::Block {
        write_block_tally(job, &chosen, scan(&job.out, "scores")?)?;
        return Ok(Some(block_report(job, rows_written)));
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
    let aggregates = aggregates_of_sums(&chosen, &sums);
    let written = LazyFrame::scan_parquet(
        PlRefPath::new(job.out.display().to_string()),
        ScanArgsParquet::default(),
    )?;
    let ids: Vec<&str> = chosen.iter().map(|(m, _)| m.id).collect();
    let summary = summarise(job, &options, written, &ids, &aggregates, &all_notes)?;
    stages.lap("summary");
    finish_report(job, &options, ids, summary, stages).map(Some)
}

/// The corpus-level aggregates of `chosen` from their per-row statistics summed over the rows
/// (`sums`: metric id → summed statistics), with the summary's details.
fn aggregates_of_sums(chosen: &Chosen, sums: &[(&'static str, Vec<f64>)]) -> Vec<Aggregate> {
    let aggregates: Vec<(String, f64)> = chosen
        .iter()
        .filter(|(info, _)| info.kind == MetricKind::Aggregate)
        .map(|(info, _)| {
            let value = match (info.corpus, sums.iter().find(|(id, _)| *id == info.id)) {
                (Some(stats), Some((_, summed))) => (stats.of_sums)(summed),
                _ => f64::NAN,
            };
            (info.id.to_string(), value)
        })
        .collect();
    with_details(aggregates, |stats| {
        let id = chosen
            .iter()
            .find(|(info, _)| info.corpus.is_some_and(|c| c.column == stats.column))?
            .0
            .id;
        sums.iter().find(|(i, _)| *i == id).map(|(_, s)| s.clone())
    })
}

/// Adds the per-row statistics of `chosen`'s corpus-level metrics in `scores` to `sums`
/// (metric id → summed statistics), for their aggregates over all batches or parts.
fn add_corpus_sums(
    chosen: &Chosen,
    scores: &DataFrame,
    sums: &mut Vec<(&'static str, Vec<f64>)>,
) -> PolarsResult<()> {
    for (info, _) in chosen {
        let Some(stats) = info.corpus else { continue };
        let Some(columns) = table::corpus_stats(scores, &stats)? else {
            continue;
        };
        let summed: Vec<f64> = columns.iter().map(|c| c.iter().sum()).collect();
        match sums.iter_mut().find(|(id, _)| *id == info.id) {
            Some((_, total)) => total.iter_mut().zip(&summed).for_each(|(t, b)| *t += b),
            None => sums.push((info.id, summed)),
        }
    }
    Ok(())
}

/// The summary tally of a scores table of `chosen`'s metrics: its values' sums and counts and
/// its corpus-level statistics summed, in streaming passes. `values` are the summarised values
/// (from the schema of the job's scores).
fn tally_of_scores(
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
            .select(stats_columns)
            .collect_with_engine(Engine::Streaming)?
            .unwrap_single();
        let mut sums: Vec<(&'static str, Vec<f64>)> = Vec::new();
        add_corpus_sums(chosen, &statistics, &mut sums)?;
        for (id, summed) in sums {
            tally.add_corpus(id, &summed);
        }
    }
    Ok(tally)
}

/// A block writes the tally of its scores beside them (`<out>.summary.json`), so the job's
/// summary merges the blocks' tallies instead of reading their rows again.
fn write_block_tally(job: &ScoreJob, chosen: &Chosen, mut scores: LazyFrame) -> PolarsResult<()> {
    let schema = scores.collect_schema()?;
    let ids: Vec<&str> = chosen.iter().map(|(m, _)| m.id).collect();
    let values = summary_values(&schema, &ids, job);
    let tally = tally_of_scores(job, chosen, &values, scores)?;
    let path = SummaryTally::path_beside(&job.out);
    tally
        .write(&path)
        .map_err(|e| err(format!("cannot write {}: {e}", path.display())))
}

/// The files a `--summarise-parts` pattern names, in path order.
fn part_files(pattern: &str) -> PolarsResult<Vec<PathBuf>> {
    let paths = glob::glob(pattern).map_err(|e| {
        err(format!(
            "score: the parts pattern {pattern} is not a glob: {e}"
        ))
    })?;
    let mut files: Vec<PathBuf> = paths
        .filter_map(Result::ok)
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(err(format!("score: no parts match {pattern}")));
    }
    Ok(files)
}

/// What a block of a job scored in parts prints: its rows, no summary.
fn block_report(job: &ScoreJob, rows: usize) -> ScoreReport {
    ScoreReport {
        summary: format!(
            "block {}: {rows} rows scored -> {}\n",
            job.run.display(),
            job.out.display()
        ),
    }
}

/// Completes and summarises a job scored in parts (see [`Parts::Summarise`]): the run gives
/// the columns, the blocks are the files matching `pattern`. Golden questions no block
/// answers are scored into `job.out`; the summary is [`summarise`]'s over the blocks and that
/// file, read by Polars' streaming engine, with corpus-level metrics from the per-row
/// statistics summed over all of them, so it is the summary one call over the whole run gives.
fn summarise_parts(job: &ScoreJob, id: &str, pattern: &str) -> PolarsResult<ScoreReport> {
    let mut stages = Stages::start();
    let mut run_scan = scan(&job.run, "run")?;
    let run_schema = run_scan.collect_schema()?;
    require(&run_schema, &job.run.display().to_string(), id, "id")?;
    let empty = readable_frame("score", &run_scan.slice(0, 0).collect()?)?;
    let golden = match &job.golden {
        Some(path) => {
            let mut golden = scan(path, "golden")?;
            let schema = golden.collect_schema()?;
            require(&schema, &path.display().to_string(), id, "id")?;
            Some(readable_frame("score", &golden.collect()?)?)
        }
        None => None,
    };
    let shape = match &golden {
        Some(golden) => tables::join_golden(&golden.head(Some(0)), &empty, id)?.frame,
        None => empty.clone(),
    };
    let resolved = resolve_columns(job, shape.schema())?;
    let options = options_with_relevance(job, &resolved);
    let mut notes: Vec<String> = Vec::new();
    let chosen = choose_metrics(job, &resolved, &mut notes)?;
    let scan_parts = || {
        LazyFrame::scan_parquet(PlRefPath::new(pattern), ScanArgsParquet::default())
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
    let ids: Vec<&str> = chosen.iter().map(|(m, _)| m.id).collect();
    let values = summary_values(&scan_parts()?.collect_schema()?.clone(), &ids, job);
    // Each part's tally: the one its block wrote beside it, else from its rows.
    let mut tally: Option<SummaryTally> = None;
    let mut merge = |part: SummaryTally| -> PolarsResult<()> {
        match &mut tally {
            Some(all) => all.merge(&part).map_err(|e| err(format!("score: {e}"))),
            None => {
                tally = Some(part);
                Ok(())
            }
        }
    };
    let (mut written, mut read) = (0usize, 0usize);
    for part in part_files(pattern)? {
        let beside = SummaryTally::path_beside(&part);
        if beside.is_file() {
            merge(SummaryTally::read(&beside).map_err(|e| err(format!("score: {e}")))?)?;
            written += 1;
        } else {
            merge(tally_of_scores(
                job,
                &chosen,
                &values,
                scan(&part, "part")?,
            )?)?;
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
            let joined = tables::join_golden(&missing, &empty, id)?.frame;
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
    let aggregates = aggregates_of_sums(&chosen, &sums);
    let summary = render_summary(job, &options, &tally, &ids, &aggregates, &notes);
    stages.lap("summary");
    finish_report(job, &options, ids, summary, stages)
}

/// The golden table of a streamed job. Only its ids stay in memory, with an index from an id's
/// hash to its rows (16 bytes a question); a batch's golden rows are read from the Parquet file
/// when the batch needs them: one slice when they are contiguous (a golden table in the run's
/// order), else windows of the file from which the rows are taken. So a golden table with a
/// question per run row does not have to fit in memory either.
struct GoldenIndex {
    scan: LazyFrame,
    ids: StringChunked,
    /// `(hash of the id, row)`, sorted.
    by_hash: Vec<(u64, IdxSize)>,
    answered: std::cell::RefCell<Vec<bool>>,
    duplicates: usize,
    duplicate_examples: Vec<String>,
}

/// Rows of the golden file read at a time when a batch's rows are scattered over it.
const GOLDEN_WINDOW: IdxSize = 100_000;

fn id_hash(key: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut hasher);
    hasher.finish()
}

impl GoldenIndex {
    fn new(scan: LazyFrame, id: &str) -> PolarsResult<Self> {
        let ids = scan
            .clone()
            .select([col(id).cast(DataType::String)])
            .collect()?
            .column(id)?
            .str()?
            .rechunk()
            .into_owned();
        let mut by_hash: Vec<(u64, IdxSize)> = ids
            .iter()
            .enumerate()
            .filter_map(|(row, key)| key.map(|k| (id_hash(k), row as IdxSize)))
            .collect();
        by_hash.sort_unstable();
        // Ids that occur twice: equal ids have equal hashes, so they sit side by side.
        let mut duplicated: Vec<String> = Vec::new();
        for pair in by_hash.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            if a.0 == b.0 && ids.get(a.1 as usize) == ids.get(b.1 as usize) {
                let key = ids.get(a.1 as usize).unwrap_or("").to_string();
                if duplicated.last() != Some(&key) {
                    duplicated.push(key);
                }
            }
        }
        duplicated.sort();
        duplicated.dedup();
        let duplicates = duplicated.len();
        duplicated.truncate(3);
        Ok(GoldenIndex {
            answered: std::cell::RefCell::new(vec![false; ids.len()]),
            scan,
            ids,
            by_hash,
            duplicates,
            duplicate_examples: duplicated,
        })
    }

    fn height(&self) -> usize {
        self.ids.len()
    }

    /// The golden rows (ascending) whose id is `key`.
    fn rows_of(&self, key: &str, out: &mut Vec<IdxSize>) {
        let hash = id_hash(key);
        let first = self.by_hash.partition_point(|&(h, _)| h < hash);
        for &(h, row) in &self.by_hash[first..] {
            if h != hash {
                break;
            }
            if self.ids.get(row as usize) == Some(key) {
                out.push(row);
            }
        }
    }

    /// The golden rows at `rows` (ascending, distinct), as the library reads them.
    fn read_rows(&self, rows: &[IdxSize]) -> PolarsResult<DataFrame> {
        let mut parts: Vec<DataFrame> = Vec::new();
        let mut i = 0;
        while i < rows.len() {
            let start = rows[i];
            let end = start.saturating_add(GOLDEN_WINDOW);
            let j = i + rows[i..].partition_point(|&r| r < end);
            let last = rows[j - 1];
            let window = self
                .scan
                .clone()
                .slice(i64::from(start), last - start + 1)
                .collect()?;
            parts.push(if (last - start + 1) as usize == j - i {
                window
            } else {
                let local: Vec<IdxSize> = rows[i..j].iter().map(|r| r - start).collect();
                window.take(&IdxCa::from_vec("".into(), local))?
            });
            i = j;
        }
        let frame = match parts.len() {
            0 => self.scan.clone().slice(0, 0).collect()?,
            _ => {
                let mut parts = parts.into_iter();
                let mut frame = parts.next().expect("one part at least");
                for part in parts {
                    frame.vstack_mut(&part)?;
                }
                frame
            }
        };
        readable_frame("score", &frame)
    }

    /// A batch of the run joined with the golden rows of its ids, as the in-memory join does
    /// it ([`tables::join_golden`]) on that part of the golden table; and the batch's ids that
    /// the golden table does not have.
    fn join(&self, batch: &DataFrame, id: &str) -> PolarsResult<(DataFrame, Vec<String>)> {
        let keys = batch.column(id)?.cast(&DataType::String)?;
        let mut rows: Vec<IdxSize> = Vec::new();
        let mut unknown: Vec<String> = Vec::new();
        for key in keys.str()?.iter() {
            let before = rows.len();
            if let Some(key) = key {
                self.rows_of(key, &mut rows);
            }
            if rows.len() == before {
                unknown.push(key.unwrap_or("null").to_string());
            }
        }
        rows.sort_unstable();
        rows.dedup();
        let mut answered = self.answered.borrow_mut();
        for &row in &rows {
            answered[row as usize] = true;
        }
        let part = self.read_rows(&rows)?;
        let joined = tables::join_golden(&part, batch, id)?;
        let in_run = joined.frame.column("in_run")?.bool()?.clone();
        Ok((joined.frame.filter(&in_run)?, unknown))
    }

    /// The golden rows no batch answered, joined with an empty run (`in_run` false).
    fn unanswered(&self, empty_run: &DataFrame, id: &str) -> PolarsResult<DataFrame> {
        let rows: Vec<IdxSize> = self
            .answered
            .borrow()
            .iter()
            .enumerate()
            .filter(|(_, answered)| !**answered)
            .map(|(row, _)| row as IdxSize)
            .collect();
        let part = self.read_rows(&rows)?;
        Ok(tables::join_golden(&part, empty_run, id)?.frame)
    }
}

/// The distinct engine settings (`section` of each metric's options) of the metrics `ids`.
fn distinct_settings<T: Clone + PartialEq>(
    options: &MetricOptions,
    ids: &[&str],
    section: for<'o> fn(&'o mut MetricOptions, &str) -> Option<&'o mut T>,
) -> Vec<T> {
    let mut options = options.clone();
    let mut found: Vec<T> = Vec::new();
    for id in ids {
        if let Some(settings) = section(&mut options, id)
            && !found.contains(settings)
        {
            found.push(settings.clone());
        }
    }
    found
}

/// What the judges of the judged metrics spent, one line per prompt: rows, calls, cache hits,
/// retries, failures, tokens and wall time.
pub(crate) fn judge_accounting(
    options: &MetricOptions,
    ids: &[&str],
    more: &[crate::engines::judge::JudgeSettings],
) -> PolarsResult<String> {
    let mut text = String::new();
    let mut judges = distinct_settings(options, ids, MetricOptions::judge_mut);
    for settings in more {
        if !judges.contains(settings) {
            judges.push(settings.clone());
        }
    }
    for settings in &judges {
        let judge = crate::engines::judge::Judge::shared(settings, "score")?;
        for (prompt, u) in judge.usage() {
            text.push_str(&format!(
                "judge {prompt} ({}): {} rows, {} calls, {} cache hits, {} retries, {} failed, {} prompt + {} completion tokens, {:.1} s{}\n",
                judge.settings().model, u.rows, u.calls, u.cache_hits, u.retries, u.failures, u.prompt_tokens, u.completion_tokens, u.seconds,
                if u.cache_write_failures > 0 {
                    format!(" ({} replies kept but not cached: the cache could not be written)", u.cache_write_failures)
                } else {
                    String::new()
                }
            ));
        }
    }
    Ok(text)
}

/// What the embedding models of the metrics that embed did: texts, cache hits, texts cut at the
/// model's token limit, calls and wall time.
pub(crate) fn embed_accounting(options: &MetricOptions, ids: &[&str]) -> PolarsResult<String> {
    let mut text = String::new();
    for settings in &distinct_settings(options, ids, MetricOptions::embedder_mut) {
        // Only models that were used: a ranked metric judged by embeddings may have been given
        // vectors, and then no model was loaded.
        let Some(embedder) = crate::engines::embed::Embedder::existing(settings) else {
            continue;
        };
        let u = embedder.usage();
        text.push_str(&format!(
            "embeddings ({}): {} texts, {} distinct, {} cache hits, {} embedded, {} truncated at the token limit, {} calls, {:.1} s\n",
            embedder.signature(), u.texts, u.distinct, u.cache_hits, u.embedded, u.truncated, u.calls, u.seconds
        ));
    }
    Ok(text)
}

/// Where each kind of metric input is in the joined table: the columns the job names, else the
/// documented defaults that the table has. Every named column must exist.
fn resolve_columns(job: &ScoreJob, schema: &Schema) -> PolarsResult<Resolved> {
    let table = job.run.display().to_string();
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
        question: pick(schema, &job.columns.question, &["question"]),
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
fn options_with_relevance(job: &ScoreJob, resolved: &Resolved) -> MetricOptions {
    let mut options = job.options.clone();
    for info in registry::METRICS {
        if let Some(o) = options.retrieval_mut(info.id)
            && o.relevance == Relevance::Auto
        {
            o.relevance = resolved.relevance_hint();
        }
    }
    options
}

/// The metrics to compute: those asked for (each must have its inputs), or every metric whose
/// inputs the tables have (the others are noted as skipped).
fn choose_metrics(
    job: &ScoreJob,
    resolved: &Resolved,
    notes: &mut Vec<String>,
) -> PolarsResult<Chosen> {
    let table = job.run.display().to_string();
    let mut chosen: Vec<(&'static registry::MetricInfo, Vec<String>)> = Vec::new();
    let mut skipped: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
    for info in registry::scored() {
        let asked = job.metrics.as_ref().map(|m| m.iter().any(|x| x == info.id));
        if asked == Some(false) {
            continue;
        }
        let needs_judge = info.engine.is_some_and(registry::Engine::judges) && job.judge.is_none();
        let needs_embedder =
            info.engine.is_some_and(registry::Engine::embeds) && job.embedder.is_none();
        let inputs = if needs_judge {
            Err("a judge ([judge] section, --judge-model / --judge-base-url, or POLARS_RAG_JUDGE_MODEL)")
        } else if needs_embedder {
            Err("an embedding model ([embed] section, --embed-model / --embed-base-url, or POLARS_RAG_EMBED_MODEL)")
        } else if let Some(what) = job.options.unconfigured(info.id) {
            Err(what)
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
    if chosen.is_empty() && !job.locate_quotes {
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
        notes.push(format!("skipped (no {what}): {}", ids.join(", ")));
    }

    Ok(chosen)
}

/// The scores table: the input columns that are kept, and one column (or struct) per chosen
/// row-wise metric, corpus statistics, located quotes and the negative-answer checks.
fn compute_scores(
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
        .collect();
    let custom_ids: Vec<String> = job.custom_judges.iter().map(CustomJudgeJob::id).collect();
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
    // The ranked retrieval metrics all read the same two columns: one pass computes them all.
    let ranked: Vec<(RankedMetric, crate::metrics::retrieval::RetrievalOptions)> = chosen
        .iter()
        .filter_map(|(info, _)| {
            let metric = RankedMetric::from_id(info.id)?;
            Some((metric, options.retrieval(info.id)?.clone()))
        })
        .collect();
    let mut unnest_retrieval = false;
    if let (Some((_, inputs)), false) = (
        chosen
            .iter()
            .find(|(info, _)| RankedMetric::from_id(info.id).is_some()),
        ranked.is_empty(),
    ) {
        select.push(expr::ranked_many(
            ranked,
            col(inputs[0].as_str()),
            col(inputs[1].as_str()),
        ));
        unnest_retrieval = true;
    }
    for (info, inputs) in chosen {
        if info.kind != MetricKind::RowWise || RankedMetric::from_id(info.id).is_some() {
            continue;
        }
        let inputs: Vec<Expr> = inputs.iter().map(|c| resolved.input_expr(c)).collect();
        select.push(expr::metric(info.id, inputs, options)?);
    }
    // Judges defined as data, each into a column named after its card.
    for custom in &job.custom_judges {
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
        if let Some(e) = expr::metric_stats(info.id, inputs, options)? {
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

/// The chosen aggregates over the whole table, with their options.
fn compute_aggregates(
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
            .select([expr::metric(info.id, inputs, options)?])
            .collect()?;
        let first = crate::polars::table::metric_values(&value, info.id)?
            .first()
            .and_then(|(_, v)| v.f64().ok()?.get(0));
        aggregates.push((info.id.to_string(), first.unwrap_or(f64::NAN)));
    }
    Ok(aggregates)
}

/// Writes the scores table atomically, with every metric's signature in its Parquet metadata.
/// The review workbook of `score --review`: the judged rows to check by hand with their id,
/// claim and cited span, most suspicious first.
fn write_review(
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
    let review = crate::polars::judged::citation_review(&judged, "citation_support")?;
    crate::polars::judged::write_citation_review(&review, path)?;
    notes.push(format!(
        "review: {} of {} judged rows to check by hand, most suspicious first, in {}",
        review.height(),
        frame.height(),
        path.display()
    ));
    Ok(())
}

fn write_scores(
    job: &ScoreJob,
    options: &MetricOptions,
    chosen: &Chosen,
    scores: &mut DataFrame,
) -> PolarsResult<()> {
    let mut out = create_output(job)?;
    ParquetWriter::new(out.file()?)
        .with_key_value_metadata(Some(KeyValueMetadata::from_static(signatures(
            job, options, chosen,
        ))))
        .finish(scores)
        .map_err(|e| write_error(&job.out, e))?;
    out.commit()
        .map_err(|e| err(format!("cannot write {}: {e}", job.out.display())))?;
    Ok(())
}

/// A failed write of the output `path`, naming it (Polars' own error names no file).
pub(crate) fn write_error(path: &Path, e: PolarsError) -> PolarsError {
    let message = e.to_string();
    err(format!(
        "cannot write {}: {}",
        path.display(),
        super::parquet_problem(&message)
    ))
}

/// The job's output, as a temporary file beside it (its directory created) until committed.
fn create_output(job: &ScoreJob) -> PolarsResult<AtomicFile> {
    if let Some(parent) = job.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| err(format!("cannot create {}: {e}", parent.display())))?;
    }
    AtomicFile::create(&job.out)
        .map_err(|e| err(format!("cannot write {}: {e}", job.out.display())))
}

/// Every metric's signature, as the scores' Parquet metadata carries it (for `compare` and for
/// readers of the file, `pl.read_parquet_metadata`).
fn signatures(job: &ScoreJob, options: &MetricOptions, chosen: &Chosen) -> Vec<(String, String)> {
    chosen
        .iter()
        .filter_map(|(m, _)| {
            let sig = options.signature(m.id)?;
            Some((
                format!("{}{}", crate::cli::compare::SIGNATURE_KEY, m.id),
                sig,
            ))
        })
        .chain(job.custom_judges.iter().map(|c| {
            (
                format!("{}{}", crate::cli::compare::SIGNATURE_KEY, c.id()),
                crate::metrics::judged::custom::signature(&c.options),
            )
        }))
        .collect()
}

/// An error when the scores would be written over one of the job's own inputs (the run, the
/// golden table or the corpus file), which the write would destroy.
fn refuse_overwriting_inputs(job: &ScoreJob) -> PolarsResult<()> {
    for (what, input) in [
        ("run", Some(&job.run)),
        ("golden table", job.golden.as_ref()),
        ("corpus", job.corpus.as_ref()),
    ] {
        if input.is_some_and(|p| super::same_file(p, &job.out)) {
            polars_bail!(InvalidOperation: "refusing to write the scores to {}: it is the {what} of this job", job.out.display());
        }
    }
    Ok(())
}

fn line(out: &mut String, name: &str, rows: usize, scored: &str, value: &str) {
    out.push_str(&format!("{name:<26} {rows:>8} {scored:>8} {value:>10}\n"));
}

/// The type at a dotted path into struct fields of `dtype`, `None` when there is no such field.
fn dtype_at<'a>(dtype: &'a DataType, path: &str) -> Option<&'a DataType> {
    let mut current = dtype;
    for field in path.split('.').filter(|f| !f.is_empty()) {
        let DataType::Struct(fields) = current else {
            return None;
        };
        current = fields.iter().find(|f| f.name().as_str() == field)?.dtype();
    }
    Some(current)
}

/// The per-row values the summary averages, as `(label, Float64 expression)`: the chosen
/// metrics' values (see [`registry::MetricInfo::values`]) and the numeric and boolean reply
/// fields of the custom judges (booleans as 0/1). Only numeric values present in `schema`.
fn summary_values(schema: &Schema, metrics: &[&str], job: &ScoreJob) -> Vec<(String, Expr)> {
    let numeric = |d: &DataType| d.is_primitive_numeric() || d == &DataType::Boolean;
    let at = |id: &str, path: &str| -> Expr {
        let mut e = col(id);
        for field in path.split('.').filter(|f| !f.is_empty()) {
            e = e.struct_().field_by_name(field);
        }
        e.cast(DataType::Float64)
    };
    let mut out = Vec::new();
    for id in summarised(schema, metrics) {
        let (Some(info), Some(dtype)) = (registry::find(id), schema.get(id)) else {
            continue;
        };
        for path in info.values {
            if dtype_at(dtype, path).is_some_and(numeric) {
                out.push((registry::value_label(id, path), at(id, path)));
            }
        }
    }
    for custom in &job.custom_judges {
        let id = custom.id();
        if let Some(DataType::Struct(fields)) = schema.get(&id) {
            for field in fields.iter().filter(|f| numeric(f.dtype())) {
                out.push((format!("{id}.{}", field.name()), at(&id, field.name())));
            }
        }
    }
    out
}

/// The summary of a scores table (in memory, or the written file scanned by Polars' streaming
/// engine): one line per value (rows, rows scored, mean), the aggregates, located quotes, the
/// segment table, the negative-answer count and the signatures.
fn summarise(
    job: &ScoreJob,
    options: &MetricOptions,
    mut scores: LazyFrame,
    metrics: &[&str],
    aggregates: &[Aggregate],
    notes: &[String],
) -> PolarsResult<String> {
    let schema = scores.collect_schema()?;
    let values = summary_values(&schema, metrics, job);
    let tally = SummaryTally::of(scores, &values, job.by.as_deref())?;
    Ok(render_summary(
        job, options, &tally, metrics, aggregates, notes,
    ))
}

/// The summary's text from the tally of the scores (see [`summarise`]).
fn render_summary(
    job: &ScoreJob,
    options: &MetricOptions,
    tally: &SummaryTally,
    metrics: &[&str],
    aggregates: &[Aggregate],
    notes: &[String],
) -> String {
    let height = tally.rows as usize;
    let mut out = String::new();
    let source = match &job.golden {
        Some(g) => format!("golden {} ⋈ run {}", g.display(), job.run.display()),
        None => format!("run {}", job.run.display()),
    };
    let target = match &job.parts {
        Parts::Summarise(pattern) => pattern.clone(),
        _ => job.out.display().to_string(),
    };
    out.push_str(&format!("{source} ({height} rows) -> {target}\n"));
    for note in notes {
        out.push_str(&format!("note: {note}\n"));
    }
    out.push_str(&format!(
        "{:<26} {:>8} {:>8} {:>10}\n",
        "metric", "rows", "scored", "mean"
    ));
    let shown = |v: Option<f64>| v.map_or("-".to_string(), |m| format!("{m:.4}"));
    for (label, sum) in tally.labels.iter().zip(&tally.values) {
        line(
            &mut out,
            label,
            height,
            &sum.count.to_string(),
            &shown(sum.mean()),
        );
    }
    for (name, value, detail) in aggregates {
        out.push_str(&format!(
            "{name:<26} {height:>8} {:>8} {:>10}{detail}\n",
            "-",
            format!("{value:.4}")
        ));
    }
    if let Some((found, quotes)) = tally.located {
        out.push_str(&format!(
            "locate_quotes: {found} of {quotes} quoted spans located in their sources (found: verbatim or match ratio >= {})\n",
            job.options.locate_quotes.min_match_ratio
        ));
    }
    if let Some(by) = &tally.by {
        out.push_str(&by_segment(tally, by));
    }
    if let Some(closer) = tally.closer_to_negative {
        out.push_str(&format!(
            "{closer} answers are closer (chrF) to a negative answer than to the best reference\n"
        ));
    }
    out.push_str("signatures:\n");
    for id in metrics {
        if let Some(sig) = options.signature(id) {
            out.push_str(&format!("  {id:<22} {sig}\n"));
        }
    }
    for custom in &job.custom_judges {
        let sig = crate::metrics::judged::custom::signature(&custom.options);
        out.push_str(&format!("  {:<22} {sig}\n", custom.id()));
    }
    out
}

/// The output path used when none is given: `<run stem>.scores.parquet` beside the input's name
/// under `dir`.
pub fn default_out(run: &Path, dir: &Path) -> PathBuf {
    let stem = run
        .file_stem()
        .map_or("run".into(), |s| s.to_string_lossy().to_string());
    dir.join(format!("{stem}.scores.parquet"))
}

/// The metrics whose per-row values a summary shows: those scored, and the row-wise metrics
/// whose output holds a scored corpus-level metric's statistics (`quoted_spans` for
/// `citation_alignment`), in table order.
fn summarised(schema: &Schema, metrics: &[&str]) -> Vec<&'static str> {
    registry::METRICS
        .iter()
        .filter(|m| m.kind == MetricKind::RowWise && schema.contains(m.id))
        .filter(|m| {
            metrics.contains(&m.id)
                || metrics.iter().any(|id| {
                    registry::find(id)
                        .and_then(|a| a.corpus)
                        .is_some_and(|c| c.column == m.id)
                })
        })
        .map(|m| m.id)
        .collect()
}

/// A metric × segment table of means (one column per value of `by`, nulls skipped).
fn by_segment(tally: &SummaryTally, by: &str) -> String {
    let segments: Vec<String> = tally
        .segments
        .iter()
        .map(|s| s.key.clone().unwrap_or_else(|| "(null)".to_string()))
        .collect();
    let width = segments
        .iter()
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(8, 24);
    let mut out = format!("by {by}:\n{:<26}", "metric");
    for seg in &segments {
        let shown: String = seg.chars().take(width).collect();
        out.push_str(&format!(" {shown:>width$}"));
    }
    out.push_str(&format!("\n{:<26}", "rows"));
    for segment in &tally.segments {
        out.push_str(&format!(" {:>width$}", segment.rows));
    }
    out.push('\n');
    for (i, label) in tally.labels.iter().enumerate() {
        out.push_str(&format!("{label:<26}"));
        for segment in &tally.segments {
            let cell = segment.values[i]
                .mean()
                .map_or("-".to_string(), |v| format!("{v:.4}"));
            out.push_str(&format!(" {cell:>width$}"));
        }
        out.push('\n');
    }
    out
}
