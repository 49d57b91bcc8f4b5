//! `polars-rag compare` and `polars-rag summary`: read scores tables (or score two runs against
//! one golden table first), compare them with [`crate::compare::tables`], and write the
//! Markdown summary, the HTML report, and JSON / Parquet summaries for machines.

use crate::atomic::AtomicFile;
use std::path::{Path, PathBuf};

use polars::prelude::*;

use crate::compare::report;
use crate::compare::source::{ScoresSource, READ_ROWS};
use crate::compare::streamed::{compare_sources, summarize_source, DEFAULT_MEMORY};
use crate::compare::tables::{
    compared_columns, integrity_frame, metrics_frame, regressions_frame, segments_frame,
    summary_frame,
};
use crate::compare::{check_gates, CompareOptions, Gate};
use crate::job::{self as score, ScoreJob};
use std::ops::Range;

use crate::job::SIGNATURE_KEY;
use crate::text::shown::{escaped, shown};

/// A `compare` job.
#[derive(Clone, Debug, Default)]
pub struct CompareJob {
    /// The baseline: a scores table, or a run table when `score` is set.
    pub baseline: PathBuf,
    /// The candidate, likewise.
    pub candidate: PathBuf,
    /// Score both runs with this job first (its `run` and `out` are replaced per run).
    pub score: Option<ScoreJob>,
    /// Where the scores of scored runs are written.
    pub scores_dir: PathBuf,
    /// The id column.
    pub id: String,
    /// The segment column.
    pub by: Option<String>,
    /// The cluster column: items with the same value are resampled and tested together.
    pub cluster: Option<String>,
    /// The completed share a gated value needs in each run for the gate to decide (default
    /// [`DEFAULT_MIN_COMPLETE`](crate::compare::integrity::DEFAULT_MIN_COMPLETE)).
    pub min_complete: Option<f64>,
    /// Statistics settings.
    pub options: CompareOptions,
    /// CI gates.
    pub gates: Vec<Gate>,
    /// The metrics whose rows are the family of tests (empty: every row); the other rows are
    /// decided as a family of their own.
    pub family: Vec<String>,
    /// HTML report path.
    pub html: Option<PathBuf>,
    /// JSON summary path.
    pub json: Option<PathBuf>,
    /// Parquet summary path.
    pub parquet: Option<PathBuf>,
    /// Labels of some items of both runs (baseline's, candidate's): judged deltas also
    /// estimated by PPI on the paired differences.
    pub labels: Option<(PathBuf, PathBuf)>,
    /// The settings of those estimates (`alpha` is taken from `options.confidence`).
    pub ppi: crate::metrics::ppi::PpiOptions,
    /// The same two runs scored by another judge setting (baseline's, candidate's): the report
    /// says which verdicts flip when the judge changes.
    pub rejudged: Option<(PathBuf, PathBuf)>,
}

/// What a comparison produced.
pub struct CompareReport {
    /// The Markdown summary.
    pub markdown: String,
    /// One line per tripped gate (empty: the gate passes).
    pub failures: Vec<String>,
    /// One line per gated value too incomplete to gate on (see
    /// [`crate::compare::integrity::check_integrity`]); not empty: the gate did not decide.
    pub incomplete: Vec<String>,
}

fn err(msg: String) -> PolarsError {
    PolarsError::ComputeError(msg.into())
}

/// A scores table in a Parquet file, read a slice of rows and a few columns at a time.
#[derive(Clone, Debug)]
pub struct ParquetScores {
    path: PathBuf,
    schema: Schema,
    height: usize,
    read_rows: usize,
}

impl ParquetScores {
    /// Opens a scores table: its schema and row count, from its metadata.
    pub fn open(path: &Path) -> PolarsResult<ParquetScores> {
        let mut reader =
            ParquetReader::new(crate::job::parquet::parquet_file(path, "scores table")?);
        let schema = Schema::from_arrow_schema(reader.schema()?.as_ref());
        let height = reader.num_rows()?;
        Ok(ParquetScores {
            path: path.to_path_buf(),
            schema,
            height,
            read_rows: READ_ROWS,
        })
    }

    /// The same table read `rows` rows at a time (at least one).
    pub fn with_read_rows(mut self, rows: usize) -> ParquetScores {
        self.read_rows = rows.max(1);
        self
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl ScoresSource for ParquetScores {
    fn height(&self) -> usize {
        self.height
    }

    fn schema(&self) -> Schema {
        self.schema.clone()
    }

    fn read_rows(&self) -> usize {
        self.read_rows
    }

    fn file(&self) -> Option<&Path> {
        Some(&self.path)
    }

    fn read(&self, columns: &[String], rows: Range<usize>) -> PolarsResult<DataFrame> {
        let file = crate::job::parquet::parquet_file(&self.path, "scores table")?;
        ParquetReader::new(file)
            .with_columns(Some(columns.to_vec()))
            .with_slice(Some((rows.start, rows.len())))
            .finish()
            .map_err(|e| {
                crate::job::parquet::naming_read_errors(e, &[("scores table", &self.path)])
            })
    }
}

/// Opens a scores table for a comparison or a summary: read piecewise (see
/// [`crate::compare::streamed`]), with the signatures `score` recorded in its metadata.
pub fn open_scores(path: &Path, id: &str) -> PolarsResult<(ParquetScores, Vec<(String, String)>)> {
    if !path.is_file() {
        return Err(crate::job::not_found(format!(
            "scores table not found: {}",
            path.display()
        )));
    }
    let mut reader = ParquetReader::new(crate::job::parquet::parquet_file(path, "scores table")?);
    let signatures = reader
        .get_metadata()?
        .key_value_metadata
        .iter()
        .flatten()
        .filter_map(|kv| {
            let metric = kv.key.strip_prefix(SIGNATURE_KEY)?;
            Some((metric.to_string(), kv.value.clone().unwrap_or_default()))
        })
        .collect();
    let scores = ParquetScores::open(path)?;
    let schema = scores.schema();
    if !id.is_empty() && !schema.contains(id) {
        let names: Vec<&str> = schema.iter_names().map(|n| n.as_str()).collect();
        return Err(err(format!(
            "compare: {} has no id column '{id}' (columns: {})",
            path.display(),
            names.join(", ")
        )));
    }
    Ok((scores, signatures))
}

/// Reads the columns of a scores table that its values come from (see [`compared_columns`]:
/// numbers and keys, not the kept texts) whole, for the estimates that need both runs' judged
/// values in frames (labelled deltas, calibration against labels).
pub(crate) fn read_scores(path: &Path, id: &str, extra: &[&str]) -> PolarsResult<DataFrame> {
    let (scores, _) = open_scores(path, id)?;
    let schema = scores.schema();
    let mut columns = compared_columns(schema.iter_names().map(|n| n.as_str()), id, None);
    // The segment and cluster columns the caller names (an absent one is its error to give).
    columns.extend(
        extra
            .iter()
            .filter(|name| schema.contains(name) && !columns.iter().any(|c| c == *name))
            .map(|name| name.to_string())
            .collect::<Vec<_>>(),
    );
    // Judges defined as data: their card's column, recognised by its shape.
    columns.extend(
        schema
            .iter()
            .filter(|(name, dtype)| crate::columnar::dispatch::is_judge_card_column(name, dtype))
            .map(|(name, _)| name.to_string()),
    );
    scores.read(&columns, 0..scores.height())
}

pub(crate) fn create_parent(path: &Path) -> PolarsResult<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| crate::job::io_err(format!("cannot create {}: {e}", parent.display())))?;
    }
    Ok(())
}

fn write_text(path: &Path, text: &str) -> PolarsResult<()> {
    create_parent(path)?;
    crate::atomic::write(path, text.as_bytes())
        .map_err(|e| crate::job::io_err(format!("cannot write {}: {e}", path.display())))
}

/// Runs the comparison and writes the files asked for.
pub fn run(job: &CompareJob) -> PolarsResult<CompareReport> {
    if let Some(share) = job.min_complete
        && !(0.0..=1.0).contains(&share)
    {
        return Err(err(format!(
            "compare: min_complete must be a share in [0, 1], got {share}"
        )));
    }
    // The labels are read after the comparison, which may take long (or score both runs): a
    // labels path that is missing or not a file fails now.
    if let Some((baseline_labels, candidate_labels)) = &job.labels {
        for path in [baseline_labels, candidate_labels] {
            if std::fs::symlink_metadata(path).is_err() {
                return Err(crate::job::not_found(format!(
                    "compare: labels table not found: {}",
                    path.display()
                )));
            }
            crate::files::regular_file(path, "labels table")
                .map_err(|e| err(format!("compare: {e}")))?;
        }
    }
    let (baseline_path, candidate_path) = match &job.score {
        None => (job.baseline.clone(), job.candidate.clone()),
        Some(template) => {
            let mut paths = Vec::new();
            for run in [&job.baseline, &job.candidate] {
                let mut s = template.clone();
                let out = score::default_out(run, &job.scores_dir);
                s.run = run.clone().into();
                s.out = Some(out.clone());
                score::run(&s)?;
                paths.push(out);
            }
            (paths[0].clone(), paths[1].clone())
        }
    };
    let by = job.by.as_deref();
    let (baseline, b_sigs) = open_scores(&baseline_path, &job.id)?;
    let (candidate, c_sigs) = open_scores(&candidate_path, &job.id)?;
    let mut comparison = compare_sources(
        &baseline,
        &candidate,
        &job.id,
        by,
        job.cluster.as_deref(),
        &job.options,
        DEFAULT_MEMORY,
    )?;
    if let Some((baseline_labels, candidate_labels)) = &job.labels {
        let ppi = crate::metrics::ppi::PpiOptions {
            alpha: 1.0 - job.options.confidence,
            ..job.ppi.clone()
        };
        // The labelled estimates pair labels with judged values in frames: both runs' value
        // columns are read whole (about 8 bytes a row per value, twice).
        let labels = (
            crate::job::labels::read_labels_keyed(
                baseline_labels,
                "compare",
                Some(job.id.as_str()),
            )?,
            crate::job::labels::read_labels_keyed(
                candidate_labels,
                "compare",
                Some(job.id.as_str()),
            )?,
        );
        let extra: Vec<&str> = job.cluster.as_deref().into_iter().collect();
        comparison.labelled = crate::compare::calibrate::labelled_deltas_clustered(
            &read_scores(&baseline_path, &job.id, &extra)?,
            &read_scores(&candidate_path, &job.id, &extra)?,
            (&labels.0, &labels.1),
            &job.id,
            job.cluster.as_deref(),
            &ppi,
        )?;
    }
    if let Some((rejudged_baseline, rejudged_candidate)) = &job.rejudged {
        let (b, _) = open_scores(rejudged_baseline, &job.id)?;
        let (c, _) = open_scores(rejudged_candidate, &job.id)?;
        let other = compare_sources(
            &b,
            &c,
            &job.id,
            None,
            job.cluster.as_deref(),
            &job.options,
            DEFAULT_MEMORY,
        )?;
        comparison.judge_drift =
            crate::compare::verdict_changes(&comparison.metrics, &other.metrics);
    }
    if !job.family.is_empty() {
        comparison.decide_family_of(&job.family)?;
    }
    let failures = check_gates(&job.gates, &comparison.metrics)?;
    let gated: Vec<&str> = job.gates.iter().map(|g| g.metric.as_str()).collect();
    let incomplete = crate::compare::integrity::check_integrity(
        &gated,
        &comparison.integrity,
        job.min_complete
            .unwrap_or(crate::compare::integrity::DEFAULT_MIN_COMPLETE),
    );
    let b_name = baseline_path.display().to_string();
    let c_name = candidate_path.display().to_string();
    let mut signatures = b_sigs.clone();
    let mut differing = Vec::new();
    for (metric, sig) in &c_sigs {
        match signatures.iter().find(|(m, _)| m == metric) {
            Some((_, b)) if b != sig => {
                // The signatures come from the tables' metadata: printed as the text outputs
                // show data.
                differing.push(format!(
                    "warning: {} was not scored alike in the two runs (its judge or embedding signature \
                     differs), so its delta may come from the scorer rather than the system:\n  baseline:  {}\n  \
                     candidate: {}\n",
                    shown(metric),
                    escaped(b),
                    escaped(sig)
                ));
                signatures.push((format!("{metric} (candidate)"), sig.clone()))
            }
            Some(_) => {}
            None => signatures.push((metric.clone(), sig.clone())),
        }
    }
    // The warning leads the printed report too, not only the HTML and JSON files.
    let mut markdown = differing.concat();
    markdown.push_str(&report::markdown(&comparison, &b_name, &c_name, &failures));
    if let Some(path) = &job.html {
        write_text(
            path,
            &report::html(&comparison, &b_name, &c_name, &failures, &signatures),
        )?;
        markdown.push_str(&format!("\nHTML report: {}\n", path.display()));
    }
    if let Some(path) = &job.json {
        let value = serde_json::json!({
            "baseline": b_name,
            "candidate": c_name,
            "comparison": comparison,
            "signatures": signatures.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
            "gate_failures": failures,
        });
        let text = serde_json::to_string_pretty(&value).map_err(|e| err(e.to_string()))?;
        write_text(path, &text)?;
        markdown.push_str(&format!("JSON summary: {}\n", path.display()));
    }
    if let Some(path) = &job.parquet {
        let mut table = metrics_frame(&comparison.metrics, Some("all"))?;
        if !comparison.segments.is_empty() {
            table = table.vstack(&segments_frame(&comparison.segments)?)?;
        }
        create_parent(path)?;
        let mut kv = vec![
            ("polars-rag:seed".to_string(), job.options.seed.to_string()),
            (
                "polars-rag:resamples".to_string(),
                job.options.resamples.to_string(),
            ),
            (
                "polars-rag:confidence".to_string(),
                job.options.confidence.to_string(),
            ),
            (
                "polars-rag:alternative".to_string(),
                job.options.alternative.name().to_string(),
            ),
            (
                "polars-rag:adjust".to_string(),
                job.options.adjust.name().to_string(),
            ),
            ("polars-rag:baseline".to_string(), b_name.clone()),
            ("polars-rag:candidate".to_string(), c_name.clone()),
        ];
        kv.extend(
            signatures
                .iter()
                .map(|(m, s)| (format!("{SIGNATURE_KEY}{m}"), s.clone())),
        );
        let mut out = AtomicFile::create(path)?;
        ParquetWriter::new(out.file()?)
            .with_key_value_metadata(Some(KeyValueMetadata::from_static(kv)))
            .finish(&mut table)?;
        out.commit()?;
        let mut integrity = integrity_frame(&comparison.integrity)?;
        let integrity_path = path.with_extension("integrity.parquet");
        let mut out = AtomicFile::create(&integrity_path)?;
        ParquetWriter::new(out.file()?).finish(&mut integrity)?;
        out.commit()?;
        markdown.push_str(&format!("Run integrity: {}\n", integrity_path.display()));
        let mut regressions = regressions_frame(&comparison.regressions)?;
        let reg_path = path.with_extension("regressions.parquet");
        let mut out = AtomicFile::create(&reg_path)?;
        ParquetWriter::new(out.file()?).finish(&mut regressions)?;
        out.commit()?;
        markdown.push_str(&format!(
            "Parquet summary: {} (regressed items: {})\n",
            path.display(),
            reg_path.display()
        ));
        if !comparison.labelled.is_empty() {
            let mut labelled =
                crate::compare::calibrate::labelled_deltas_frame(&comparison.labelled)?;
            let labelled_path = path.with_extension("labelled.parquet");
            let mut out = AtomicFile::create(&labelled_path)?;
            ParquetWriter::new(out.file()?).finish(&mut labelled)?;
            out.commit()?;
            markdown.push_str(&format!(
                "Judged deltas with labels: {}\n",
                labelled_path.display()
            ));
        }
    }
    Ok(CompareReport {
        markdown,
        failures,
        incomplete,
    })
}

/// `polars-rag summary`: per-metric (and per-segment) means with bootstrap intervals (with
/// `cluster`, of whole clusters, and the cluster-robust t interval).
pub fn summary(
    scores: &Path,
    by: Option<&str>,
    cluster: Option<&str>,
    options: &CompareOptions,
    out: Option<&Path>,
) -> PolarsResult<String> {
    let (table, _) = open_scores(scores, "")?;
    let rows = summarize_source(&table, by, cluster, options, DEFAULT_MEMORY)?;
    let mut text = report::summary_markdown(
        &rows,
        &scores.display().to_string(),
        options.resamples,
        options.seed,
        options.confidence,
    );
    if let Some(out) = out {
        create_parent(out)?;
        let mut frame = summary_frame(&rows)?;
        let mut file = AtomicFile::create(out)?;
        ParquetWriter::new(file.file()?).finish(&mut frame)?;
        file.commit()?;
        text.push_str(&format!("\nwritten: {}\n", out.display()));
    }
    Ok(text)
}

/// `polars-rag leaderboard`: several scores tables ranked per metric (see
/// [`crate::compare::leaderboard`]), as Markdown; the standings and pairs as Parquet at `out`
/// (`out` and `out` with `.pairs.parquet`), the HTML report at `html`. A run's name is its file
/// name without `.parquet` (and `.scores`), unless `names` gives them.
pub fn leaderboard(
    paths: &[PathBuf],
    names: &[String],
    id: &str,
    cluster: Option<&str>,
    options: &CompareOptions,
    out: Option<&Path>,
    html: Option<&Path>,
) -> PolarsResult<String> {
    if !names.is_empty() && names.len() != paths.len() {
        return Err(err(format!(
            "leaderboard: {} names for {} runs",
            names.len(),
            paths.len()
        )));
    }
    let names: Vec<String> = if names.is_empty() {
        paths
            .iter()
            .map(|p| {
                let name = p
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
                let name = name.strip_suffix(".parquet").unwrap_or(&name);
                name.strip_suffix(".scores").unwrap_or(name).to_string()
            })
            .collect()
    } else {
        names.to_vec()
    };
    if let Some(repeated) = names
        .iter()
        .enumerate()
        .find(|(i, n)| names[..*i].contains(n))
    {
        return Err(err(format!(
            "leaderboard: two runs are named '{}': give `names`",
            shown(repeated.1)
        )));
    }
    let sources: Vec<ParquetScores> = paths
        .iter()
        .map(|p| open_scores(p, id).map(|(s, _)| s))
        .collect::<PolarsResult<_>>()?;
    let runs: Vec<(&str, &dyn ScoresSource)> = names
        .iter()
        .map(String::as_str)
        .zip(sources.iter().map(|s| s as &dyn ScoresSource))
        .collect();
    let board = crate::compare::streamed::leaderboard_sources(&runs, id, cluster, options)?;
    let mut text = report::leaderboard_markdown(&board, options);
    if let Some(out) = out {
        create_parent(out)?;
        for (path, mut frame) in [
            (
                out.to_path_buf(),
                crate::compare::tables::standings_frame(&board)?,
            ),
            (
                out.with_extension("pairs.parquet"),
                crate::compare::tables::pairs_frame(&board)?,
            ),
        ] {
            let mut file = AtomicFile::create(&path)?;
            ParquetWriter::new(file.file()?).finish(&mut frame)?;
            file.commit()?;
        }
        text.push_str(&format!(
            "\nwritten: {} (pairs: {})\n",
            out.display(),
            out.with_extension("pairs.parquet").display()
        ));
    }
    if let Some(html) = html {
        write_text(html, &report::leaderboard_html(&board, options))?;
        text.push_str(&format!("HTML report: {}\n", html.display()));
    }
    Ok(text)
}

/// `polars-rag plan`: the next comparison's sample from a pilot pair of scores tables, as
/// Markdown (and a Parquet table at `out`).
pub fn plan(
    baseline: &Path,
    candidate: Option<&Path>,
    id: &str,
    cluster: Option<&str>,
    labels: Option<(&Path, &Path)>,
    options: &crate::compare::plan::PlanOptions,
    out: Option<&Path>,
) -> PolarsResult<String> {
    let (b, _) = open_scores(baseline, id)?;
    let mut rows = match candidate {
        Some(candidate) => {
            let (c, _) = open_scores(candidate, id)?;
            crate::compare::tables::plan_tables(&b, &c, id, cluster, options)?
        }
        None => crate::compare::tables::plan_table(&b, cluster, options)?,
    };
    if let Some((baseline_labels, candidate_labels)) = labels {
        let Some(candidate) = candidate else {
            return Err(err(
                "plan: labels are planned from a labelled pilot pair of runs: give `candidate`"
                    .to_string(),
            ));
        };
        let read = |path: &Path| crate::job::labels::read_labels_keyed(path, "plan", Some(id));
        crate::compare::tables::plan_labels(
            &mut rows,
            &read_scores(baseline, id, &[])?,
            &read_scores(candidate, id, &[])?,
            (&read(baseline_labels)?, &read(candidate_labels)?),
            id,
            cluster,
            options,
        )?;
    }
    let candidate = candidate.map(|c| c.display().to_string());
    let mut text = report::plan_markdown(
        &rows,
        &baseline.display().to_string(),
        candidate.as_deref(),
        options,
    );
    if let Some(out) = out {
        create_parent(out)?;
        let mut frame = crate::compare::tables::plan_frame(&rows)?;
        let mut file = AtomicFile::create(out)?;
        ParquetWriter::new(file.file()?).finish(&mut frame)?;
        file.commit()?;
        text.push_str(&format!("\nwritten: {}\n", out.display()));
    }
    Ok(text)
}

/// The gates of a TOML file: `fail_if = ["METRIC OP VALUE", ...]` and optionally
/// `family = ["METRIC", ...]`; any other key is an error.
pub fn read_gates(path: &Path) -> PolarsResult<GateFile> {
    let text = crate::files::read_text(path, "gates file", crate::files::CONFIG_LIMIT)?;
    toml::from_str(&text).map_err(|e| err(format!("invalid gates file {}: {e}", path.display())))
}

/// A gates file: the gates, and the metrics whose rows are the family of tests the gates are
/// decided in (empty: every row of the comparison).
#[derive(Debug, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateFile {
    /// `"METRIC OP VALUE"` gates.
    pub fail_if: Vec<String>,
    /// The family's metrics: their rows over all items and per segment are decided together,
    /// the other rows as a family of their own.
    #[serde(default)]
    pub family: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gates_are_read_from_fail_if_and_other_keys_are_errors() {
        let dir = std::env::temp_dir().join(format!("gates-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("gates.toml");
        std::fs::write(&path, "fail_if = [\"mrr < -0.02\"]").unwrap();
        assert_eq!(read_gates(&path).unwrap().fail_if, vec!["mrr < -0.02"]);
        std::fs::write(&path, "fail_if = []\nfamily = [\"mrr\"]").unwrap();
        assert_eq!(read_gates(&path).unwrap().family, vec!["mrr"]);
        std::fs::write(&path, "fail = []").unwrap();
        assert!(read_gates(&path).is_err());
        std::fs::remove_dir_all(&dir).ok();
    }
}
