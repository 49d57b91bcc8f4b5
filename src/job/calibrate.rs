//! `polars-rag calibrate`: read scores tables and a labels table, calibrate the judge with
//! [`crate::compare::calibrate`], print a Markdown report and write the tables for machines.

use std::path::{Path, PathBuf};

use polars::prelude::*;

use crate::atomic::AtomicFile;
use crate::compare::calibrate::{
    calibrate_tables, calibration_frame, confusion_frame, CalibrateOptions, Calibration,
};
use crate::job::compare::{create_parent, read_scores};

/// A `calibrate` job.
#[derive(Clone, Debug, Default)]
pub struct CalibrateJob {
    /// Scores tables, as `polars-rag score` writes them.
    pub scores: Vec<PathBuf>,
    /// The labels table (Parquet): the id column and one column per labelled value.
    pub labels: PathBuf,
    /// The id column.
    pub id: String,
    /// The segment column of the scores tables.
    pub by: Option<String>,
    /// The settings of the prediction-powered estimates.
    pub options: CalibrateOptions,
    /// Write the calibration table here (Parquet), and its confusion matrices beside it
    /// (`<name>.confusion.parquet`).
    pub out: Option<PathBuf>,
}

/// The name each scores table goes by in the report: its file name without `.parquet`
/// (the whole path where two share a name).
fn run_names(paths: &[PathBuf]) -> Vec<String> {
    let short: Vec<String> = paths
        .iter()
        .map(|p| {
            let name = p.file_name().map_or_else(
                || p.display().to_string(),
                |n| n.to_string_lossy().to_string(),
            );
            name.strip_suffix(".parquet")
                .map_or(name.clone(), String::from)
        })
        .collect();
    short
        .iter()
        .zip(paths)
        .map(|(name, path)| {
            if short.iter().filter(|n| *n == name).count() > 1 {
                path.display().to_string()
            } else {
                name.clone()
            }
        })
        .collect()
}

/// The path of the confusion table written beside `out`.
pub fn confusion_path(out: &Path) -> PathBuf {
    let stem = out
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let stem = stem.strip_suffix(".parquet").unwrap_or(&stem).to_string();
    out.with_file_name(format!("{stem}.confusion.parquet"))
}

pub use super::labels::{read_labels, read_labels_keyed};

/// An error when an output of the job is one of its inputs (the labels, a scores table), which
/// writing it would destroy.
fn refuse_overwriting_inputs(job: &CalibrateJob, out: &Path) -> PolarsResult<()> {
    let inputs = std::iter::once(("labels table", &job.labels))
        .chain(job.scores.iter().map(|path| ("scores table", path)));
    for (what, input) in inputs {
        for output in [out.to_path_buf(), confusion_path(out)] {
            if crate::job::parquet::same_file(&output, input) {
                polars_bail!(InvalidOperation: "calibrate: refusing to write {}: it is the {what} of this job (choose another --out)", output.display());
            }
        }
    }
    Ok(())
}

/// Runs the job: the Markdown report.
pub fn run(job: &CalibrateJob) -> PolarsResult<String> {
    if let Some(out) = &job.out {
        refuse_overwriting_inputs(job, out)?;
    }
    let labels = read_labels_keyed(&job.labels, "calibrate", Some(job.id.as_str()))?;
    let names = run_names(&job.scores);
    let mut runs = Vec::with_capacity(job.scores.len());
    for (name, path) in names.into_iter().zip(&job.scores) {
        let extra: Vec<&str> = [job.by.as_deref(), job.options.cluster.as_deref()]
            .into_iter()
            .flatten()
            .collect();
        let table = read_scores(path, &job.id, &extra)?;
        runs.push((name, table));
    }
    let calibration = calibrate_tables(&runs, &labels, &job.id, job.by.as_deref(), &job.options)?;
    let mut text = markdown(&calibration, &job.labels, &job.options);
    if let Some(out) = &job.out {
        create_parent(out)?;
        for (path, mut frame) in [
            (out.clone(), calibration_frame(&calibration.rows)?),
            (
                confusion_path(out),
                confusion_frame(&calibration.confusion)?,
            ),
        ] {
            let mut file = AtomicFile::create(&path)?;
            ParquetWriter::new(file.file()?).finish(&mut frame)?;
            file.commit()?;
            text.push_str(&format!("written: {}\n", path.display()));
        }
    }
    Ok(text)
}

fn figure(value: Option<f64>) -> String {
    value.map_or_else(|| "–".to_string(), |v| format!("{v:.3}"))
}

/// The report: per scores table, one line per value and segment.
pub fn markdown(calibration: &Calibration, labels: &Path, options: &CalibrateOptions) -> String {
    let ppi = &options.ppi;
    let lam = ppi
        .lam
        .map_or_else(|| "tuned (PPI++)".to_string(), |l| l.to_string());
    let mut text = format!(
        "# Calibration against {}\n\nItems matched on {}. PPI: {:.0}% {} interval, judge weight λ {lam}.\n",
        labels.display(),
        calibration.keys.join(" + "),
        (1.0 - ppi.alpha) * 100.0,
        ppi.alternative.name(),
    );
    let mut reasons: Vec<String> = Vec::new();
    for (run, missing, examples) in &calibration.unmatched {
        text.push_str(&format!("\n## {run}\n\n"));
        if *missing > 0 {
            text.push_str(&format!(
                "{missing} labelled items are not in this table (e.g. {}).\n\n",
                examples
                    .iter()
                    .take(5)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        text.push_str("| value | segment | kind | labelled / items | accuracy | kappa | MAE | bias | Spearman | Kendall | judge mean | labels mean | PPI estimate [interval] | labels to halve |\n");
        text.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for r in calibration.rows.iter().filter(|r| &r.run == run) {
            let interval = match (r.ppi_estimate, r.ppi_ci_low, r.ppi_ci_high) {
                (Some(e), Some(lo), Some(hi)) => format!("{e:.3} [{lo:.3}, {hi:.3}]"),
                _ => "–".into(),
            };
            let kappa = match (r.kappa, r.kappa_weights) {
                (Some(k), Some("quadratic")) => format!("{k:.3} (quadratic)"),
                (k, _) => figure(k),
            };
            text.push_str(&format!(
                "| {} | {} | {} | {} / {} | {} | {kappa} | {} | {} | {} | {} | {} | {} | {interval} | {} |\n",
                r.metric,
                r.segment,
                r.kind,
                r.n_labelled,
                r.n_items,
                figure(r.accuracy),
                figure(r.mae),
                figure(r.bias),
                figure(r.spearman),
                figure(r.kendall),
                figure(r.judge_mean),
                figure(r.label_mean),
                r.labels_to_halve.map_or("–".into(), |m| m.to_string()),
            ));
            if let Some(reason) = &r.reason
                && r.kind != "categorical"
            {
                let line = format!("{} ({}): {reason}", r.metric, r.segment);
                if !reasons.contains(&line) {
                    reasons.push(line);
                }
            }
            if r.n_unjudged > 0 {
                reasons.push(format!(
                    "{} ({}): {} labelled items have no judge value (the judge failed) and are left out",
                    r.metric, r.segment, r.n_unjudged
                ));
            }
        }
    }
    if !reasons.is_empty() {
        text.push_str("\nNotes:\n");
        for reason in reasons {
            text.push_str(&format!("- {reason}\n"));
        }
    }
    if !calibration.unlabelled_values.is_empty() {
        text.push_str(&format!(
            "\nJudged values without a labels column: {}.\n",
            calibration.unlabelled_values.join(", ")
        ));
    }
    text
}
