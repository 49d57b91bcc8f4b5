//! `polars-rag score`: read a run table (and optionally a golden table joined on the id column),
//! compute the requested metrics, write a scores table and summarise.
//!
//! Rows: without a golden table, one output row per run row. With one, one row per golden row
//! (a left join on the id), with `in_run` false where the run has no answer for the question;
//! run rows whose id is not in the golden table, and ids that occur twice, are reported in the
//! summary, never dropped silently.

use std::fs::File;
use std::path::{Path, PathBuf};

use polars::prelude::*;

use crate::cli::config::Columns;
use crate::metrics::citation::{citation_alignment, SpanCounts};
use crate::metrics::MetricOptions;
use crate::polars::expr;
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
}

/// What a job produced, for the summary.
pub struct ScoreReport {
    /// The scores table as written.
    pub scores: DataFrame,
    /// Lines of the human-readable summary.
    pub summary: String,
}

fn err(msg: String) -> PolarsError {
    PolarsError::ComputeError(msg.into())
}

/// Checks metric ids against the registry.
pub fn validate_metrics(ids: &[String]) -> PolarsResult<()> {
    for id in ids {
        if registry::find(id).is_none() {
            let known: Vec<&str> = registry::ids().collect();
            return Err(err(format!(
                "unknown metric '{id}'; known metrics: {}",
                known.join(", ")
            )));
        }
    }
    Ok(())
}

fn scan(path: &Path, what: &str) -> PolarsResult<LazyFrame> {
    let name = path.to_string_lossy().to_string();
    if !path.is_file() {
        return Err(err(format!("{what} table not found: {name}")));
    }
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

/// Ids that occur more than once in `frame`: count and up to five examples.
fn duplicates(frame: &DataFrame, id: &str) -> PolarsResult<(usize, Vec<String>)> {
    let dup = frame
        .clone()
        .lazy()
        .group_by([col(id)])
        .agg([len().alias("n")])
        .filter(col("n").gt(lit(1)))
        .sort([id], Default::default())
        .collect()?;
    Ok((dup.height(), examples(&dup, id)?))
}

/// The id column as strings (ids may be of any type).
fn id_strings(frame: &DataFrame, id: &str) -> PolarsResult<StringChunked> {
    Ok(frame.column(id)?.cast(&DataType::String)?.str()?.clone())
}

fn examples(frame: &DataFrame, id: &str) -> PolarsResult<Vec<String>> {
    let ids = frame.column(id)?.cast(&DataType::String)?;
    Ok(ids
        .str()?
        .iter()
        .take(5)
        .map(|v| v.unwrap_or("null").to_string())
        .collect())
}

/// The input table of a job (run, or golden ⋈ run) and what the join found.
struct Inputs {
    frame: DataFrame,
    notes: Vec<String>,
}

fn load_inputs(job: &ScoreJob, id: &str, answer: &str) -> PolarsResult<Inputs> {
    let run_name = job.run.display().to_string();
    let mut run = scan(&job.run, "run")?;
    let run_schema = run.collect_schema()?;
    require(&run_schema, &run_name, id, "id")?;
    require(&run_schema, &run_name, answer, "answer")?;
    let run = run.collect()?;
    let mut notes = Vec::new();
    let (n, ex) = duplicates(&run, id)?;
    if n > 0 {
        notes.push(format!(
            "run: {n} ids occur more than once (e.g. {}); each row is scored",
            ex.join(", ")
        ));
    }
    let Some(golden_path) = &job.golden else {
        return Ok(Inputs { frame: run, notes });
    };
    let golden_name = golden_path.display().to_string();
    let mut golden = scan(golden_path, "golden")?;
    let golden_schema = golden.collect_schema()?;
    require(&golden_schema, &golden_name, id, "id")?;
    let golden = golden.collect()?;
    let (n, ex) = duplicates(&golden, id)?;
    if n > 0 {
        notes.push(format!(
            "golden: {n} ids occur more than once (e.g. {})",
            ex.join(", ")
        ));
    }
    let golden_ids = id_strings(&golden, id)?;
    let known: std::collections::HashSet<Option<&str>> = golden_ids.iter().collect();
    let run_ids = id_strings(&run, id)?;
    let orphans: Vec<&str> = run_ids
        .iter()
        .filter(|v| !known.contains(v))
        .map(|v| v.unwrap_or("null"))
        .collect();
    if !orphans.is_empty() {
        notes.push(format!(
            "run: {} rows have an id that is not in the golden table (e.g. {}); they are not scored",
            orphans.len(),
            orphans.iter().take(5).copied().collect::<Vec<_>>().join(", ")
        ));
    }
    let frame = golden
        .lazy()
        .join(
            run.lazy().with_column(lit(true).alias("in_run")),
            [col(id)],
            [col(id)],
            JoinArgs::new(JoinType::Left).with_suffix(Some("_run".into())),
        )
        .with_column(col("in_run").fill_null(lit(false)))
        .collect()?;
    let answered = frame
        .column("in_run")?
        .bool()?
        .sum()
        .map_or(0, |n| n as usize);
    let missing = frame.height() - answered;
    if missing > 0 {
        notes.push(format!(
            "golden: {missing} of {} questions have no answer in the run (in_run = false; their scores are null)",
            frame.height()
        ));
    }
    Ok(Inputs { frame, notes })
}

/// Where each kind of metric input comes from in the joined table.
struct Resolved {
    answer: String,
    sources: Option<String>,
    references: Option<String>,
    checks: Option<String>,
    negatives: Option<String>,
}

impl Resolved {
    fn column_for(&self, inputs: MetricInputs) -> Result<Option<&str>, &'static str> {
        let (col, what) = match inputs {
            MetricInputs::Answer => return Ok(None),
            MetricInputs::AnswerSources => (&self.sources, "sources (--sources-col)"),
            MetricInputs::AnswerChecks => (&self.checks, "checks (--checks-col)"),
            MetricInputs::AnswerReferences => (
                &self.references,
                "reference answers (--references-col, or a --golden table)",
            ),
        };
        col.as_deref().map(Some).ok_or(what)
    }
}

/// The native expression of a row-wise metric.
fn row_expr(id: &str, answer: Expr, other: Option<Expr>, o: &MetricOptions) -> Option<Expr> {
    let other = || other.clone();
    Some(match id {
        "quoted_spans" => expr::quoted_spans(answer, other()?, o.quoted_spans.clone()),
        "bleu" => expr::bleu(answer, other()?, o.bleu.clone()),
        "chrf" => expr::chrf(answer, other()?, o.chrf.clone()),
        "rouge" => expr::rouge(answer, other()?, o.rouge.clone()),
        "exact_match" => expr::exact_match(answer, other()?),
        "string_similarity" => expr::string_similarity(answer, other()?, o.string_similarity),
        "string_presence" => expr::string_presence(answer, other()?),
        "keyword_coverage" => expr::keyword_coverage(answer, other()?),
        "number_match" => expr::number_match(answer, other()?),
        "answer_completeness" => expr::answer_completeness(answer, other()?),
        "checks" => expr::checks(answer, other()?),
        "citation_indicators" => expr::citation_indicators(answer, o.citation_indicators.clone()),
        _ => return None,
    })
}

/// Runs the job: read (and join), score, write, summarise.
pub fn run(job: &ScoreJob) -> PolarsResult<ScoreReport> {
    if let Some(ids) = &job.metrics {
        validate_metrics(ids)?;
    }
    let id = job.columns.id.clone().unwrap_or_else(|| "query_id".into());
    let answer = job
        .columns
        .answer
        .clone()
        .unwrap_or_else(|| "answer".into());
    let Inputs { frame, mut notes } = load_inputs(job, &id, &answer)?;
    let schema = frame.schema().clone();
    let table = job.run.display().to_string();
    let resolved = Resolved {
        answer: answer.clone(),
        sources: pick(&schema, &job.columns.sources, &["sources", "retrieved"]),
        references: pick(
            &schema,
            &job.columns.references,
            &["reference_answers", "reference"],
        ),
        checks: pick(&schema, &job.columns.checks, &["checks"]),
        negatives: pick(&schema, &job.columns.negatives, &["negative_answers"]),
    };
    for (name, what) in [
        (&resolved.sources, "sources"),
        (&resolved.references, "references"),
        (&resolved.checks, "checks"),
        (&resolved.negatives, "negatives"),
    ] {
        if let Some(name) = name {
            require(&schema, &table, name, what)?;
        }
    }

    // The metrics to compute: those asked for (each must have its inputs), or every metric whose
    // inputs the tables have.
    let mut chosen: Vec<(&'static registry::MetricInfo, Option<String>)> = Vec::new();
    for info in registry::METRICS {
        let asked = job.metrics.as_ref().map(|m| m.iter().any(|x| x == info.id));
        if asked == Some(false) {
            continue;
        }
        match resolved.column_for(info.inputs) {
            Ok(other) => chosen.push((info, other.map(String::from))),
            Err(what) if asked == Some(true) => {
                return Err(err(format!("{}: needs {what}; {table} has none", info.id)))
            }
            Err(what) => notes.push(format!("{} skipped: no {what}", info.id)),
        }
    }

    // Keep every input column except the (large) texts scored, so keys and metadata survive.
    // (The checks column too: its output column has the same name.)
    let scored_texts: Vec<&str> = std::iter::once(resolved.answer.as_str())
        .chain(resolved.sources.as_deref())
        .chain(resolved.checks.as_deref())
        .collect();
    let outputs: Vec<&str> = chosen
        .iter()
        .filter(|(m, _)| m.kind == MetricKind::RowWise)
        .map(|(m, _)| m.id)
        .chain(["quoted_spans", "negative_chrf", "closer_to_negative"])
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
    let answer_expr = col(resolved.answer.as_str());
    let wants_spans = chosen
        .iter()
        .any(|(m, _)| m.id == "quoted_spans" || m.id == "citation_alignment");
    for (info, other) in &chosen {
        if info.kind != MetricKind::RowWise {
            continue;
        }
        let other = other.as_deref().map(col);
        if let Some(e) = row_expr(info.id, answer_expr.clone(), other, &job.options) {
            select.push(e);
        }
    }
    // citation_alignment is summarised from the per-row counts.
    if wants_spans && !chosen.iter().any(|(m, _)| m.id == "quoted_spans") {
        if let Some(sources) = &resolved.sources {
            select.push(expr::quoted_spans(
                answer_expr.clone(),
                col(sources.as_str()),
                job.options.quoted_spans.clone(),
            ));
        }
    }
    // Negative references: how close each answer is to an answer it must not give (chrF), and
    // whether that is closer than to the best reference.
    if let (Some(negatives), Some(references)) = (&resolved.negatives, &resolved.references) {
        let chrf =
            |other: &str| expr::chrf(answer_expr.clone(), col(other), job.options.chrf.clone());
        select.push(chrf(negatives).alias("negative_chrf"));
        select.push(
            chrf(negatives)
                .gt(chrf(references))
                .alias("closer_to_negative"),
        );
    }
    let mut scores = frame.clone().lazy().select(select).collect()?;

    // Aggregates over the whole table.
    let mut aggregates: Vec<(String, f64)> = Vec::new();
    for (info, other) in &chosen {
        if info.id == "corpus_bleu" {
            if let Some(refs) = other {
                let value = frame
                    .clone()
                    .lazy()
                    .select([expr::corpus_bleu(
                        answer_expr.clone(),
                        col(refs.as_str()),
                        job.options.corpus_bleu.0,
                    )])
                    .collect()?;
                let v = value.column("corpus_bleu")?.f64()?.get(0);
                aggregates.push(("corpus_bleu".into(), v.unwrap_or(f64::NAN)));
            }
        }
    }

    if let Some(parent) = job.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| err(format!("cannot create {}: {e}", parent.display())))?;
    }
    let file = File::create(&job.out)
        .map_err(|e| err(format!("cannot write {}: {e}", job.out.display())))?;
    ParquetWriter::new(file).finish(&mut scores)?;

    let ids: Vec<&str> = chosen.iter().map(|(m, _)| m.id).collect();
    let summary = summarise(job, &scores, &ids, &aggregates, &notes)?;
    Ok(ScoreReport { scores, summary })
}

fn line(out: &mut String, name: &str, rows: usize, scored: &str, value: &str) {
    out.push_str(&format!("{name:<26} {rows:>8} {scored:>8} {value:>10}\n"));
}

fn mean_line(out: &mut String, name: &str, values: &Float64Chunked) {
    let scored = values.len() - values.null_count();
    let mean = values.mean().map_or("-".to_string(), |m| format!("{m:.4}"));
    line(out, name, values.len(), &scored.to_string(), &mean);
}

fn summarise(
    job: &ScoreJob,
    scores: &DataFrame,
    metrics: &[&str],
    aggregates: &[(String, f64)],
    notes: &[String],
) -> PolarsResult<String> {
    let mut out = String::new();
    let source = match &job.golden {
        Some(g) => format!("golden {} ⋈ run {}", g.display(), job.run.display()),
        None => format!("run {}", job.run.display()),
    };
    out.push_str(&format!(
        "{source} ({} rows) -> {}\n",
        scores.height(),
        job.out.display()
    ));
    for note in notes {
        out.push_str(&format!("note: {note}\n"));
    }
    out.push_str(&format!(
        "{:<26} {:>8} {:>8} {:>10}\n",
        "metric", "rows", "scored", "mean"
    ));
    for id in metrics {
        match *id {
            "quoted_spans" | "citation_alignment" | "corpus_bleu" => {}
            "checks" => {
                let st = scores.column("checks")?.struct_()?.clone();
                let f = st.field_by_name("score")?;
                mean_line(&mut out, "checks.score", f.f64()?);
            }
            "rouge" => {
                let st = scores.column("rouge")?.struct_()?.clone();
                for field in ["rouge1", "rouge2", "rougeL", "rougeLsum"] {
                    let f = st.field_by_name(field)?;
                    let f = f.struct_()?.field_by_name("fmeasure")?;
                    mean_line(&mut out, &format!("rouge.{field}.fmeasure"), f.f64()?);
                }
            }
            other => {
                if let Ok(c) = scores.column(other) {
                    mean_line(&mut out, other, c.f64()?);
                }
            }
        }
    }
    if metrics.contains(&"quoted_spans") || metrics.contains(&"citation_alignment") {
        if let Ok(c) = scores.column("quoted_spans") {
            let st = c.struct_()?.clone();
            let (matched, total, score) = (
                st.field_by_name("matched")?,
                st.field_by_name("total")?,
                st.field_by_name("score")?,
            );
            mean_line(&mut out, "quoted_spans.score", score.f64()?);
            // Null-answer rows carry zero counts, so they add nothing to the sums.
            let counts = matched
                .u32()?
                .iter()
                .zip(total.u32()?.iter())
                .map(|(m, t)| SpanCounts {
                    matched: m.unwrap_or(0),
                    total: t.unwrap_or(0),
                });
            let agg = citation_alignment(counts);
            out.push_str(&format!(
                "{:<26} {:>8} {:>8} {:>10.4}   ({} of {} quoted spans found)\n",
                "citation_alignment",
                scores.height(),
                "-",
                agg.citation_alignment_quoted_spans,
                agg.matched,
                agg.total
            ));
        }
    }
    for (name, value) in aggregates {
        line(&mut out, name, scores.height(), "-", &format!("{value:.4}"));
    }
    if let Ok(flag) = scores.column("closer_to_negative") {
        let n = flag.bool()?.sum().unwrap_or(0);
        out.push_str(&format!(
            "{n} answers are closer (chrF) to a negative answer than to the best reference\n"
        ));
    }
    out.push_str("signatures:\n");
    for id in metrics {
        if let Some(sig) = job.options.signature(id) {
            out.push_str(&format!("  {id:<22} {sig}\n"));
        }
    }
    Ok(out)
}

/// The output path used when none is given: `<run stem>.scores.parquet` beside the input's name
/// under `dir`.
pub fn default_out(run: &Path, dir: &Path) -> PathBuf {
    let stem = run
        .file_stem()
        .map_or("run".into(), |s| s.to_string_lossy().to_string());
    dir.join(format!("{stem}.scores.parquet"))
}
