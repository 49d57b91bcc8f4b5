//! The scoring job as a library: golden ⋈ run ⋈ corpus → every metric whose inputs are there →
//! a scores table with signatures → a summary (per segment) → a comparison against a baseline.
//!
//! Every face is a thin call into this module: the `polars-rag` command fills a [`ScoreJob`]
//! from its flags and TOML config and calls [`run`]; Python's `pr.score` and the Ray driver call
//! the same command parser in process. Rust users build a [`ScoreJob`] themselves:
//!
//! ```no_run
//! use polars_rag::job::{self, ScoreJob};
//!
//! let job = ScoreJob {
//!     run: "run.parquet".into(),
//!     golden: Some("golden.parquet".into()),
//!     out: Some("run.scores.parquet".into()),
//!     ..ScoreJob::default()
//! };
//! let report = job::run(&job)?;
//! print!("{}", report.summary);
//! # Ok::<(), polars::prelude::PolarsError>(())
//! ```
//!
//! Rows: without a golden table, one output row per run row. With one, one row per golden row
//! (a left join on the id), with `in_run` false where the run has no answer for the question;
//! run rows whose id is not in the golden table, and ids that occur twice, are reported in the
//! summary, never dropped silently.
//!
//! The steps, one crate-private module each: `inputs` (read and join), `plan` (resolve the
//! columns, choose the metrics), `corpus` (check spans), `execute` (score in memory), `batches`
//! (score a large run in bounded memory, with `golden` streaming the golden table), `parts`
//! (blocks scored on several machines), `output` (the scores table and its signatures),
//! `summary` and `tally` (the mergeable summary). What a caller needs of them is re-exported
//! here; the public modules are the job's settings ([`config`]), the other jobs ([`calibrate`],
//! [`compare`], [`locate`], [`sample`], [`judge_eval`], [`validate`]) and [`progress`].

pub(crate) mod aggregates;
pub(crate) mod batches;
pub mod calibrate;
pub(crate) mod claims;
pub mod compare;
pub mod config;
pub(crate) mod corpus;
pub(crate) mod execute;
pub(crate) mod golden;
pub(crate) mod inputs;
pub mod judge_eval;
pub(crate) mod labels;
pub mod locate;
pub(crate) mod output;
pub(crate) mod parquet;
pub(crate) mod parts;
pub(crate) mod pipeline;
pub(crate) mod plan;
pub mod progress;
pub(crate) mod qrels;
pub mod sample;
pub(crate) mod summary;
pub(crate) mod tally;
pub mod validate;

use std::path::PathBuf;

use polars::prelude::*;

use crate::job::config::Columns;
use crate::job::corpus::SpanUnit;
use crate::metrics::judged::custom::CustomJudgeOptions;
use crate::registry::{self, MetricKind};
use crate::registry::{MetricId, MetricOptions};

pub use aggregates::Aggregate;
pub use inputs::Input;
pub use pipeline::run;
pub use summary::{default_out, Usage};
pub use tally::{Exact, Segment, Sum, SummaryTally};

/// The prefix of the Parquet metadata keys under which a scores table carries each metric's
/// signature (`polars-rag:signature:<metric id>`): what `compare` checks before it compares.
pub const SIGNATURE_KEY: &str = "polars-rag:signature:";

/// A fully resolved `score` job.
#[derive(Clone, Debug, Default)]
pub struct ScoreJob {
    /// Input run table.
    pub run: Input,
    /// Golden table joined on the id column.
    pub golden: Option<Input>,
    /// Output scores table (Parquet, the signatures in its metadata). `None` keeps the scores
    /// in memory, in [`ScoreReport::scores`] (a run larger than `batch_rows` is then scored in
    /// memory, and the report notes it); a block of a job scored in parts needs a file.
    pub out: Option<PathBuf>,
    /// Metric ids; `None` computes every metric whose inputs the tables have.
    pub metrics: Option<Vec<String>>,
    /// Column names; `None` picks the documented defaults.
    pub columns: Columns,
    /// Per-metric options.
    pub options: MetricOptions,
    /// The documents spans point into (Parquet `file`, `text`, or a directory): spans are
    /// checked against it and retrieved spans without text get their text.
    pub corpus: Option<Input>,
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
    pub progress: crate::job::progress::ProgressMode,
    /// Locate each quoted span of the answers in the row's sources (`locate_quotes` column, named like the plugin's function),
    /// with `options.locate_quotes`.
    pub locate_quotes: bool,
    /// Write the rows of `citation_support` to check by hand here (`.xlsx`, most suspicious
    /// first).
    pub review: Option<PathBuf>,
    /// Grade the run's retrieved passages with the judge (`relevance_grade`) into this qrels
    /// table, each (query, item) pair once across runs; without ground truth of its own, the
    /// ranked metrics are scored against the grades (the job's `qrels` step).
    pub grade_relevance: Option<PathBuf>,
    /// The judge of the judged metrics (given to each section without its own, see
    /// [`ScoreJob::with_engines`]); `None`: judged
    /// metrics are skipped unless asked for, and asking for one is an error.
    pub judge: Option<crate::engines::judge::JudgeSettings>,
    /// The embedding model of the metrics that embed (given likewise);
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
/// scores and summary are those of one `score` call over the whole run. As a setting:
/// `parts = "block"` or `parts = { summarise = "scores/part-*.parquet" }`.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
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
    pub(crate) fn inputs(&self, schema: &Schema) -> PolarsResult<Vec<Expr>> {
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

/// What `score` does with a span that does not fit its corpus (`invalid_spans = "error"` or
/// `"null"`).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
#[value(rename_all = "lower")]
pub enum InvalidSpans {
    /// Stop with an error naming the query and the span (the default).
    #[default]
    Error,
    /// Score that query's span-based metrics as null and say why in `span_issues`.
    Null,
}

crate::settings::from_str_by_serde!(InvalidSpans);

/// What a job produced: the summary as the command prints it, and the same facts as data.
#[derive(Clone, Debug, Default)]
pub struct ScoreReport {
    /// The human-readable summary (what `polars-rag score` prints).
    pub summary: String,
    /// The scores table, when the job kept it in memory ([`ScoreJob::out`] `None`).
    pub scores: Option<DataFrame>,
    /// The claims the job audited (the job's `claims` step), when it kept them in memory; with
    /// an output file they are written beside it (`run.scores.parquet` → `run.claims.parquet`).
    pub claims: Option<DataFrame>,
    /// Where the claims the job audited were written (beside its scores).
    pub claims_file: Option<PathBuf>,
    /// The summary's numbers: per value its rows scored and sum, overall and per segment
    /// (`None` for a block of a job scored in parts, which summarises nothing).
    pub tally: Option<SummaryTally>,
    /// The corpus-level metrics: `(metric id, value, how it was combined)`.
    pub aggregates: Vec<Aggregate>,
    /// Each metric's signature (the settings that produced its numbers): `(metric id, signature)`.
    pub signatures: Vec<(String, String)>,
    /// What the job noticed: unmatched and repeated ids, skipped metrics and why, span problems.
    pub notes: Vec<String>,
    /// What the judges and embedding models spent.
    pub usage: Vec<Usage>,
}

impl ScoreReport {
    /// The summary as a table: one row per summarised value and segment (`segment` null for
    /// the whole table; a segment's rows follow when the job has `by`), with `rows`, `scored`
    /// (non-null values) and `mean`; then one row per corpus-level metric (`scored` null,
    /// `mean` its value). Empty for a block.
    ///
    /// ```
    /// use polars::prelude::*;
    /// use polars_rag::job::{self, ScoreJob};
    ///
    /// let run = df!("query_id" => ["q1", "q2"], "answer" => ["Paris", "Lyon"],
    ///               "reference" => ["Paris", "Paris"])?;
    /// let report = job::score(run.lazy(), None, None, &ScoreJob::default())?;
    /// let table = report.summary_table()?;
    /// let em = table.filter(&table.column("value")?.str()?.equal("exact_match"))?;
    /// assert_eq!(em.column("mean")?.f64()?.get(0), Some(0.5));
    /// # Ok::<(), PolarsError>(())
    /// ```
    pub fn summary_table(&self) -> PolarsResult<DataFrame> {
        let rows = self.summary_rows();
        df!(
            "segment" => rows.iter().map(|r| r.segment.clone()).collect::<Vec<_>>(),
            "value" => rows.iter().map(|r| r.value.clone()).collect::<Vec<_>>(),
            "rows" => rows.iter().map(|r| r.rows).collect::<Vec<_>>(),
            "scored" => rows.iter().map(|r| r.scored).collect::<Vec<_>>(),
            "mean" => rows.iter().map(|r| r.mean).collect::<Vec<_>>(),
        )
    }

    /// The rows of [`summary_table`](Self::summary_table).
    pub fn summary_rows(&self) -> Vec<SummaryRow> {
        let Some(tally) = &self.tally else {
            return Vec::new();
        };
        let row = |segment: Option<String>, label: &str, rows: u64, sum: &tally::Sum| SummaryRow {
            segment,
            value: label.to_string(),
            rows,
            scored: Some(sum.count),
            mean: sum.mean(),
        };
        let mut out: Vec<SummaryRow> = tally
            .labels
            .iter()
            .zip(&tally.values)
            .map(|(label, sum)| row(None, label, tally.rows, sum))
            .collect();
        for part in &tally.segments {
            let key = part.key.clone().unwrap_or_else(|| "(null)".into());
            for (label, sum) in tally.labels.iter().zip(&part.values) {
                out.push(row(Some(key.clone()), label, part.rows, sum));
            }
        }
        for (name, value, _) in &self.aggregates {
            out.push(SummaryRow {
                segment: None,
                value: name.clone(),
                rows: tally.rows,
                scored: None,
                mean: Some(*value).filter(|v| !v.is_nan()),
            });
        }
        out
    }
}

/// One row of a job's summary table (see [`ScoreReport::summary_table`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SummaryRow {
    /// The segment of `by`, `None` for the whole table.
    pub segment: Option<String>,
    /// The value's label (`rouge.rougeL_f`, a metric id, a custom judge's field).
    pub value: String,
    /// Rows of the table (or of the segment).
    pub rows: u64,
    /// Rows with a value; `None` for a corpus-level metric.
    pub scored: Option<u64>,
    /// The mean over the rows with a value, or a corpus-level metric's value.
    pub mean: Option<f64>,
}

/// Scores a run given as a frame (with its golden table and corpus, as frames too): the same
/// job as [`run`], for callers that hold their tables in memory or as lazy queries. `settings`
/// gives the rest (metrics, columns, options, judge, ...; its `run`, `golden` and `corpus` are
/// replaced). Without `settings.out` the scores come back in [`ScoreReport::scores`]; with it,
/// they are written there (a run larger than `settings.batch_rows` in batches, without being
/// collected whole).
///
/// ```
/// use polars::prelude::*;
/// use polars_rag::job::{self, ScoreJob};
///
/// let golden = df!("query_id" => ["q1", "q2"], "reference" => ["Paris", "Berlin"])?;
/// let run = df!("query_id" => ["q1", "q3"], "answer" => ["Paris", "Rome"])?;
/// let settings = ScoreJob { metrics: Some(vec!["exact_match".into()]), ..ScoreJob::default() };
/// let report = job::score(run.lazy(), Some(golden.lazy()), None, &settings)?;
/// let scores = report.scores.expect("kept in memory");
/// // One row per golden question; q2 has no answer, q3 is not a golden question.
/// assert_eq!(scores.height(), 2);
/// assert_eq!(scores.column("exact_match")?.f64()?.get(0), Some(1.0));
/// assert!(report.notes.iter().any(|n| n.contains("not in the golden table")));
/// # Ok::<(), PolarsError>(())
/// ```
pub fn score(
    run: LazyFrame,
    golden: Option<LazyFrame>,
    corpus: Option<LazyFrame>,
    settings: &ScoreJob,
) -> PolarsResult<ScoreReport> {
    let job = ScoreJob {
        run: run.into(),
        golden: golden.map(Into::into),
        corpus: corpus.map(Into::into),
        ..settings.clone()
    };
    pipeline::run(&job)
}

impl ScoreJob {
    /// The job with its judge and embedding model given to every metric whose section sets
    /// none of its own (a section that names its own judge or model keeps it): what [`run`]
    /// scores with, so that a job built in code needs `judge` / `embedder` set once, as the
    /// command's `[judge]` / `[embed]` sections and flags do.
    pub fn with_engines(&self) -> ScoreJob {
        let mut job = self.clone();
        for &metric in MetricId::ALL {
            if let Some(embedder) = &self.embedder
                && let Some(own) = job
                    .options
                    .embedder_mut(metric)
                    .filter(|own| **own == crate::engines::embed::EmbedSettings::default())
            {
                *own = embedder.clone();
            }
            if let Some(judge) = &self.judge
                && let Some(own) = job
                    .options
                    .judge_mut(metric)
                    .filter(|own| **own == crate::engines::judge::JudgeSettings::default())
            {
                *own = judge.clone();
            }
        }
        // Judges defined as data without a judge of their own use the job's too.
        if let Some(judge) = &self.judge {
            for custom in &mut job.custom_judges {
                if custom.options.judge == crate::engines::judge::JudgeSettings::default() {
                    custom.options.judge = judge.clone();
                }
            }
        }
        job
    }

    /// The judges defined as data that the job scores. A judge is a metric id of its job:
    /// when `metrics` names any of the job's judges, only those named are scored; otherwise all
    /// of them are (the judges given are the caller's choice, and `metrics` then chooses among
    /// the built-in metrics).
    pub fn scored_judges(&self) -> impl Iterator<Item = &CustomJudgeJob> {
        let named: Option<Vec<String>> = self.metrics.as_ref().and_then(|ids| {
            let judges: Vec<String> = self
                .custom_judges
                .iter()
                .map(CustomJudgeJob::id)
                .filter(|id| ids.contains(id))
                .collect();
            (!judges.is_empty()).then_some(judges)
        });
        self.custom_judges
            .iter()
            .filter(move |judge| named.as_ref().is_none_or(|n| n.contains(&judge.id())))
    }

    /// The output path, or an error for a job that must write its scores (in batches, in
    /// parts) and has none.
    pub(crate) fn out_path(&self) -> PolarsResult<&std::path::Path> {
        self.out.as_deref().ok_or_else(|| {
            err("score: this job writes its scores as it goes (in batches or in parts) and needs an output path (out)".into())
        })
    }
}

pub(crate) fn err(msg: String) -> PolarsError {
    PolarsError::ComputeError(msg.into())
}

/// Reading or writing a file failed (not for its absence): an [`ErrorKind::Io`](crate::ErrorKind)
/// error, travelling as a Polars error.
pub(crate) fn io_err(msg: String) -> PolarsError {
    crate::Error::io(msg).into()
}

/// `e` with `prefix` before its message (the file, the step), its kind kept: a wrapper that
/// names where an error happened must not make a missing file or a failed engine look like
/// bad input.
pub(crate) fn prefixed(prefix: &str, e: impl Into<crate::Error>) -> PolarsError {
    let e: crate::Error = e.into();
    crate::Error::of_kind(e.kind(), format!("{prefix}{}", e.message())).into()
}

/// A file or folder the job was given is missing: an [`ErrorKind::NotFound`](crate::ErrorKind)
/// error, travelling as a Polars error.
pub(crate) fn not_found(msg: String) -> PolarsError {
    crate::Error::not_found(msg).into()
}

/// Checks metric ids against the metric table (tools such as `locate_quotes` have switches of
/// their own and are not scored by id).
pub fn validate_metrics(ids: &[String]) -> PolarsResult<()> {
    validate_metric_ids(ids, &[])
}

/// [`validate_metrics`], with the ids of the job's own judges (defined as data) allowed too.
pub(crate) fn validate_metric_ids(ids: &[String], judges: &[String]) -> PolarsResult<()> {
    for id in ids {
        if judges.contains(id) {
            continue;
        }
        let info = registry::require(id).map_err(|e| {
            if judges.is_empty() {
                e.into()
            } else {
                err(format!(
                    "{e} (nor a judge of this job: {})",
                    judges.join(", ")
                ))
            }
        })?;
        if info.kind == MetricKind::Tool {
            return Err(err(format!(
                "{id} is not a score metric; use its own option or command (polars-rag metrics lists them)"
            )));
        }
        if !info.inputs.in_score_tables() {
            let columns = crate::columnar::catalogue::input_columns(info.inputs).join(", ");
            return Err(err(format!(
                "{id} is not computed by score: its inputs ({columns}) are not columns of a run or a golden table; call it on a table that has them (its Python or Rust function)"
            )));
        }
    }
    Ok(())
}
