//! `polars-rag sample`: the items of a scores table to give people to label, written as a
//! workbook and a Parquet table with empty label columns (see [`crate::compare::labelling`]);
//! `polars-rag calibrate --labels` reads either back once filled in.

use std::path::{Path, PathBuf};

use polars::prelude::*;

use crate::atomic::AtomicFile;
use crate::compare::labelling::{labelling_sheet, write_labelling_sheet, LabelSampleOptions};
use crate::job::compare::create_parent;

/// A `sample` job.
#[derive(Clone, Debug, Default)]
pub struct SampleJob {
    /// The scores table (as `polars-rag score` writes it, with its texts).
    pub scores: PathBuf,
    /// The id column.
    pub id: String,
    /// The segment column to stratify by.
    pub by: Option<String>,
    /// The values to label (default: every judged value a person would label).
    pub values: Option<Vec<String>>,
    /// How many items, the seed, the minimum per stratum.
    pub options: LabelSampleOptions,
    /// Where the sheet goes: `<out>.xlsx` and `<out>.parquet` (a given extension is dropped).
    pub out: PathBuf,
}

/// The two files a sample is written to.
pub fn sample_paths(out: &Path) -> (PathBuf, PathBuf) {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "labels".into());
    let stem = name
        .strip_suffix(".xlsx")
        .or_else(|| name.strip_suffix(".parquet"))
        .unwrap_or(&name)
        .to_string();
    (
        out.with_file_name(format!("{stem}.xlsx")),
        out.with_file_name(format!("{stem}.parquet")),
    )
}

/// Runs the job: what was picked, where it was written, and what to do next.
pub fn run(job: &SampleJob) -> PolarsResult<String> {
    if std::fs::symlink_metadata(&job.scores).is_err() {
        return Err(crate::job::not_found(format!(
            "sample: scores table not found: {}",
            job.scores.display()
        )));
    }
    let (xlsx, parquet) = sample_paths(&job.out);
    for output in [&xlsx, &parquet] {
        if crate::job::parquet::same_file(output, &job.scores) {
            polars_bail!(InvalidOperation: "sample: refusing to write {}: it is the scores table of this job (choose another --out)", output.display());
        }
    }
    let scores = ParquetReader::new(crate::job::parquet::parquet_file(
        &job.scores,
        "scores table",
    )?)
    .finish()
    .map_err(|e| crate::job::parquet::naming_read_errors(e, &[("scores table", &job.scores)]))?;
    let sheet = labelling_sheet(
        &scores,
        &job.id,
        job.by.as_deref(),
        job.values.as_deref(),
        &job.options,
    )?;
    create_parent(&xlsx)?;
    write_labelling_sheet(&sheet, &xlsx, "sample")?;
    let mut frame = sheet.frame.clone();
    let mut file = AtomicFile::create(&parquet)?;
    ParquetWriter::new(file.file()?).finish(&mut frame)?;
    file.commit()?;
    let mut text = format!(
        "sample: {} of {} items of {} to label (seed {}), stratified by {}the judge's {}\n",
        sheet.frame.height(),
        scores.height(),
        job.scores.display(),
        job.options.seed,
        job.by
            .as_deref()
            .map_or(String::new(), |b| format!("{b} and ")),
        sheet.values[0],
    );
    for (stratum, items, picked) in &sheet.strata {
        text.push_str(&format!("  {stratum:<40} {picked:>5} of {items}\n"));
    }
    text.push_str(&format!(
        "written: {}\nwritten: {}\nFill in {} (leave a cell empty when unsure), then:\n  polars-rag calibrate {} --labels {}\n",
        xlsx.display(),
        parquet.display(),
        sheet.values.join(", "),
        job.scores.display(),
        xlsx.display()
    ));
    Ok(text)
}
