//! The summary of a job: the values it averages, its text, and what the engines spent.

use std::path::{Path, PathBuf};

use polars::prelude::*;

use super::aggregates::Aggregate;
use super::{Parts, ScoreJob};
use crate::job::tally::SummaryTally;
use crate::registry::{self, MetricKind};
use crate::registry::{MetricId, MetricOptions};
use crate::text::shown::{escaped, shown};

pub(crate) fn line(
    out: &mut String,
    width: usize,
    name: &str,
    rows: usize,
    scored: &str,
    value: &str,
) {
    out.push_str(&format!(
        "{name:<width$} {rows:>8} {scored:>8} {value:>10}\n"
    ));
}

/// The type at a dotted path into struct fields of `dtype`, `None` when there is no such field.
pub(crate) fn dtype_at<'a>(dtype: &'a DataType, path: &str) -> Option<&'a DataType> {
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
pub(crate) fn summary_values(
    schema: &Schema,
    metrics: &[MetricId],
    job: &ScoreJob,
) -> Vec<(String, Expr)> {
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
    // Struct columns of reply fields: the claim audit's, then each judge card's.
    let cards = std::iter::once(super::claims::CLAIM_AUDIT.to_string())
        .chain(job.scored_judges().map(|custom| custom.id()));
    for id in cards {
        if let Some(DataType::Struct(fields)) = schema.get(&id) {
            for field in fields.iter().filter(|f| numeric(f.dtype())) {
                out.push((format!("{id}.{}", field.name()), at(&id, field.name())));
            }
        }
    }
    out
}

/// The tally of a scores table (in memory, or the written file scanned by Polars' streaming
/// engine) that the summary shows: per value, rows, rows scored and sum, overall and per
/// segment of `job.by`.
pub(crate) fn summarise(
    job: &ScoreJob,
    mut scores: LazyFrame,
    metrics: &[MetricId],
) -> PolarsResult<SummaryTally> {
    let schema = scores.collect_schema()?;
    // The segment column is checked in the input table, but the scores table does not keep the
    // texts it scored: without this, Polars would fail with a dump of its query plan.
    if let Some(by) = job.by.as_deref()
        && !schema.contains(by)
    {
        let table = match &job.out {
            Some(path) => format!(
                "the scores table ({})",
                escaped(&path.display().to_string())
            ),
            None => "the scores table".to_string(),
        };
        let columns: Vec<_> = schema.iter_names().map(|n| shown(n.as_str())).collect();
        polars_bail!(ComputeError: "{table} has no column `{}` to break the summary down by (`by`) (columns: {}); it does not keep the texts scored (sources, retrieved, checks, contexts)", shown(by), columns.join(", "));
    }
    let values = summary_values(&schema, metrics, job);
    SummaryTally::of(scores, &values, job.by.as_deref())
}

/// The summary's text from the tally of the scores (see [`summarise`]).
pub(crate) fn render_summary(
    job: &ScoreJob,
    options: &MetricOptions,
    tally: &SummaryTally,
    metrics: &[MetricId],
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
        _ => job
            .out
            .as_ref()
            .map_or("(in memory)".to_string(), |p| p.display().to_string()),
    };
    out.push_str(&format!("{source} ({height} rows) -> {target}\n"));
    for note in notes {
        out.push_str(&format!("note: {note}\n"));
    }
    // The metric column is as wide as its longest label (at least 26), so columns stay aligned.
    let width = tally
        .labels
        .iter()
        .map(String::as_str)
        .chain(aggregates.iter().map(|(name, _, _)| name.as_str()))
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0)
        .max(26);
    out.push_str(&format!(
        "{:<width$} {:>8} {:>8} {:>10}\n",
        "metric", "rows", "scored", "mean"
    ));
    let shown = |v: Option<f64>| v.map_or("-".to_string(), |m| format!("{m:.4}"));
    for (label, sum) in tally.labels.iter().zip(&tally.values) {
        line(
            &mut out,
            width,
            label,
            height,
            &sum.count.to_string(),
            &shown(sum.mean()),
        );
    }
    for (name, value, detail) in aggregates {
        out.push_str(&format!(
            "{name:<width$} {height:>8} {:>8} {:>10}{detail}\n",
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
    for &metric in metrics {
        let sig = options.signature(metric);
        out.push_str(&format!("  {:<22} {sig}\n", metric.as_str()));
    }
    if tally
        .labels
        .iter()
        .any(|l| l.starts_with(super::claims::CLAIM_AUDIT))
    {
        let sig = super::claims::signature(options);
        out.push_str(&format!("  {:<22} {sig}\n", super::claims::CLAIM_AUDIT));
    }
    for custom in job.scored_judges() {
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
pub(crate) fn summarised(schema: &Schema, metrics: &[MetricId]) -> Vec<&'static str> {
    registry::METRICS
        .iter()
        .filter(|m| m.kind == MetricKind::RowWise && schema.contains(m.id))
        .filter(|m| {
            metrics.contains(&m.metric)
                || metrics
                    .iter()
                    .any(|a| a.info().corpus.is_some_and(|c| c.column == m.id))
        })
        .map(|m| m.id)
        .collect()
}

/// A metric × segment table of means (one column per value of `by`, nulls skipped).
pub(crate) fn by_segment(tally: &SummaryTally, by: &str) -> String {
    // Segments are values of the run: shown as the text outputs show data (escaped, cut).
    let segments: Vec<String> = tally
        .segments
        .iter()
        .map(|s| {
            s.key
                .as_deref()
                .map_or_else(|| "(null)".to_string(), |k| shown(k).into_owned())
        })
        .collect();
    let width = segments
        .iter()
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(8, 24);
    let mut out = format!("by {}:\n{:<26}", shown(by), "metric");
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

/// The distinct engine settings (`section` of each metric's options) of `metrics`.
pub(crate) fn distinct_settings<T: Clone + PartialEq>(
    options: &MetricOptions,
    metrics: &[MetricId],
    section: for<'o> fn(&'o mut MetricOptions, MetricId) -> Option<&'o mut T>,
) -> Vec<T> {
    let mut options = options.clone();
    let mut found: Vec<T> = Vec::new();
    for &metric in metrics {
        if let Some(settings) = section(&mut options, metric)
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
    metrics: &[MetricId],
    more: &[crate::engines::judge::JudgeSettings],
) -> PolarsResult<(String, Vec<Usage>)> {
    let mut text = String::new();
    let mut usage = Vec::new();
    let mut judges = distinct_settings(options, metrics, MetricOptions::judge_mut);
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
            usage.push(Usage::Judge {
                model: judge.settings().model.clone(),
                prompt: prompt.to_string(),
                usage: u,
            });
        }
    }
    Ok((text, usage))
}

/// What the embedding models of the metrics that embed did: texts, cache hits, texts cut at the
/// model's token limit, calls and wall time.
pub(crate) fn embed_accounting(
    options: &MetricOptions,
    metrics: &[MetricId],
) -> PolarsResult<(String, Vec<Usage>)> {
    let mut text = String::new();
    let mut usage = Vec::new();
    for settings in &distinct_settings(options, metrics, MetricOptions::embedder_mut) {
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
        usage.push(Usage::Embed {
            model: embedder.signature(),
            usage: u,
        });
    }
    Ok((text, usage))
}

/// What one engine spent on a job: a judge on one prompt, or an embedding model.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(tag = "engine", rename_all = "snake_case")]
pub enum Usage {
    /// A judge's calls on one prompt (template).
    Judge {
        /// The judge's model.
        model: String,
        /// The prompt's name.
        prompt: String,
        /// Rows, calls, cache hits, retries, failures, tokens and seconds.
        #[serde(flatten)]
        usage: crate::engines::judge::Usage,
    },
    /// An embedding model's work.
    Embed {
        /// The model's signature.
        model: String,
        /// Texts, cache hits, truncations, calls and seconds.
        #[serde(flatten)]
        usage: crate::engines::embed::EmbedUsage,
    },
}
