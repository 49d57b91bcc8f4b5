//! `polars-rag score`: read a run table, compute the requested metrics, write a scores table with
//! one row per input row, and summarise.

use std::fs::File;
use std::path::{Path, PathBuf};

use polars::prelude::*;

use crate::metrics::citation::{citation_alignment, QuotedSpansOptions, SpanCounts};
use crate::polars::expr;
use crate::registry::{self, MetricKind};

/// A fully resolved `score` job.
#[derive(Clone, Debug)]
pub struct ScoreJob {
    /// Input run table.
    pub run: PathBuf,
    /// Output scores table.
    pub out: PathBuf,
    /// Metric ids, validated against the registry.
    pub metrics: Vec<String>,
    /// Row key column.
    pub id_col: String,
    /// Answer column.
    pub answer_col: String,
    /// Sources column; `None` picks `sources`, else `retrieved`.
    pub sources_col: Option<String>,
    /// Options of the quoted-span metrics.
    pub quoted_spans: QuotedSpansOptions,
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

/// Runs the job: scan, score, write, summarise.
pub fn run(job: &ScoreJob) -> PolarsResult<ScoreReport> {
    validate_metrics(&job.metrics)?;
    let path = job.run.to_string_lossy().to_string();
    if !job.run.is_file() {
        return Err(err(format!("run table not found: {path}")));
    }
    let mut lf = LazyFrame::scan_parquet(path.as_str().into(), ScanArgsParquet::default())?;
    let schema = lf.collect_schema()?;
    let need = |name: &str, what: &str| -> PolarsResult<()> {
        if schema.contains(name) {
            Ok(())
        } else {
            let cols: Vec<&str> = schema.iter_names().map(|n| n.as_str()).collect();
            Err(err(format!(
                "{path}: no {what} column '{name}' (columns: {})",
                cols.join(", ")
            )))
        }
    };
    need(&job.id_col, "id")?;
    need(&job.answer_col, "answer")?;
    let sources_col = match &job.sources_col {
        Some(c) => c.clone(),
        None if schema.contains("sources") => "sources".to_string(),
        None if schema.contains("retrieved") => "retrieved".to_string(),
        None => {
            return Err(err(format!(
                "{path}: no sources column: name one with --sources-col (list[str], str, or list[struct] with a 'text' field)"
            )))
        }
    };
    need(&sources_col, "sources")?;

    // Keep every input column except the (large) texts scored, so keys and metadata survive.
    let mut keep: Vec<Expr> = schema
        .iter_names()
        .filter(|n| n.as_str() != job.answer_col && n.as_str() != sources_col)
        .map(|n| col(n.clone()))
        .collect();
    let (answer, sources) = (col(job.answer_col.as_str()), col(sources_col.as_str()));
    let row_metrics: Vec<&String> = job
        .metrics
        .iter()
        .filter(|id| registry::find(id).is_some_and(|m| m.kind == MetricKind::RowWise))
        .collect();
    // citation_alignment is summarised from the per-row counts, so quoted_spans is computed
    // whenever either is asked for.
    let wants_spans = job
        .metrics
        .iter()
        .any(|m| m == "quoted_spans" || m == "citation_alignment");
    if wants_spans {
        keep.push(expr::quoted_spans(
            answer.clone(),
            sources.clone(),
            job.quoted_spans.clone(),
        ));
    }
    debug_assert!(row_metrics.iter().all(|m| m.as_str() == "quoted_spans"));
    let mut scores = lf.select(keep).collect()?;

    if let Some(parent) = job.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| err(format!("cannot create {}: {e}", parent.display())))?;
    }
    let file = File::create(&job.out)
        .map_err(|e| err(format!("cannot write {}: {e}", job.out.display())))?;
    ParquetWriter::new(file).finish(&mut scores)?;

    let summary = summarise(job, &scores, wants_spans)?;
    Ok(ScoreReport { scores, summary })
}

fn summarise(job: &ScoreJob, scores: &DataFrame, spans: bool) -> PolarsResult<String> {
    let mut out = String::new();
    out.push_str(&format!(
        "run {} ({} rows) -> {}\n",
        job.run.display(),
        scores.height(),
        job.out.display()
    ));
    out.push_str(&format!(
        "{:<22} {:>8} {:>8} {:>10}\n",
        "metric", "rows", "scored", "value"
    ));
    if spans {
        let st = scores.column("quoted_spans")?.struct_()?.clone();
        let matched = st.field_by_name("matched")?;
        let total = st.field_by_name("total")?;
        let score = st.field_by_name("score")?;
        let (matched, total, score) = (matched.u32()?, total.u32()?, score.f64()?);
        let scored = score.len() - score.null_count();
        let mean = score.mean();
        out.push_str(&format!(
            "{:<22} {:>8} {:>8} {:>10}\n",
            "quoted_spans.score",
            scores.height(),
            scored,
            mean.map_or("-".to_string(), |m| format!("{m:.4}"))
        ));
        // Null-answer rows carry zero counts, so they add nothing to the sums.
        let counts = matched.iter().zip(total.iter()).map(|(m, t)| SpanCounts {
            matched: m.unwrap_or(0),
            total: t.unwrap_or(0),
        });
        let agg = citation_alignment(counts);
        out.push_str(&format!(
            "{:<22} {:>8} {:>8} {:>10.4}   ({} of {} quoted spans found)\n",
            "citation_alignment",
            scores.height(),
            "-",
            agg.citation_alignment_quoted_spans,
            agg.matched,
            agg.total
        ));
        out.push_str(&format!("signature: {}\n", signature(&job.quoted_spans)));
    }
    Ok(out)
}

/// A sacrebleu-style signature of the quoted-span settings, so a number can be reproduced.
///
/// ```
/// use polars_rag::cli::score::signature;
/// use polars_rag::metrics::citation::QuotedSpansOptions;
/// assert!(signature(&QuotedSpansOptions::default()).starts_with("quotes:standard|casefold:yes|min_len:3|"));
/// ```
pub fn signature(o: &QuotedSpansOptions) -> String {
    let quotes = match o.quotes {
        crate::text::quotes::QuoteStyle::Standard => "standard",
        crate::text::quotes::QuoteStyle::Ragas => "ragas",
    };
    format!(
        "quotes:{quotes}|casefold:{}|min_len:{}|version:{}",
        if o.casefold { "yes" } else { "no" },
        o.min_len,
        env!("CARGO_PKG_VERSION")
    )
}

/// The output path used when none is given: `<run stem>.scores.parquet` beside the input's name
/// under `dir`.
pub fn default_out(run: &Path, dir: &Path) -> PathBuf {
    let stem = run
        .file_stem()
        .map_or("run".into(), |s| s.to_string_lossy().to_string());
    dir.join(format!("{stem}.scores.parquet"))
}
