//! `polars-rag locate`: every quote of a table (or a text file, one quote per line) located in a
//! corpus, written as a Parquet table, soak's `.xlsx` workbook and melted statistics CSV.

use std::path::{Path, PathBuf};

use polars::prelude::*;

use polars_rag::atomic::AtomicFile;

use polars_rag::metrics::locate::embed::HashEmbedder;
use polars_rag::metrics::locate::stats::melted_csv;
use polars_rag::metrics::locate::LocateOptions;
use polars_rag::polars::locate::{
    corpus_documents, fill_cosine, locate_in_documents, stats_of, write_workbook,
};

/// A `locate` job.
#[derive(Clone, Debug)]
pub struct LocateJob {
    /// Quotes: a Parquet table (column `quote_col`) or a text file, one quote per line.
    pub quotes: PathBuf,
    /// The quote column of a Parquet table.
    pub quote_col: String,
    /// The corpus: Parquet (`file`, `text`, joined in row order) or a directory (files sorted
    /// by path).
    pub corpus: PathBuf,
    /// Output folder.
    pub out: PathBuf,
    /// Algorithm options.
    pub options: LocateOptions,
    /// Fill `cosine` with the hashed bag-of-words stand-in embedding (no model).
    pub hash_embedding: Option<usize>,
    /// Fill `cosine` with this embedding model (soak's embedding stage: the quote and its span).
    pub embedder: Option<polars_rag::engines::embed::EmbedSettings>,
}

/// What a `locate` job wrote and printed.
pub struct LocateReport {
    /// The text printed on stdout.
    pub text: String,
}

fn read_quotes(path: &Path, column: &str) -> PolarsResult<Series> {
    if !path.is_file() {
        polars_bail!(ComputeError: "locate: quotes not found: {}", path.display());
    }
    let is_parquet = path.extension().is_some_and(|e| e == "parquet");
    if is_parquet {
        let df = ParquetReader::new(std::fs::File::open(path)?).finish()?;
        let col = df.column(column).map_err(|_| {
            polars_err!(ColumnNotFound: "locate: {} has no column '{column}' (columns: {:?}); choose one with --quote-col", path.display(), df.get_column_names())
        })?;
        return Ok(col
            .as_materialized_series()
            .cast(&DataType::String)?
            .with_name("quote".into()));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| polars_err!(ComputeError: "locate: cannot read {}: {e}", path.display()))?;
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    Ok(Series::new("quote".into(), lines))
}

/// The documents in join order: a Parquet table's row order, a directory's sorted paths.
fn read_corpus(path: &Path) -> PolarsResult<Vec<(String, String)>> {
    if path.is_dir() {
        let corpus =
            super::corpus::load(path).map_err(|e| polars_err!(ComputeError: "locate: {e}"))?;
        return Ok(corpus
            .sorted_documents()
            .into_iter()
            .map(|(f, t)| (f.to_string(), t.to_string()))
            .collect());
    }
    if !path.is_file() {
        polars_bail!(ComputeError: "locate: corpus not found: {}", path.display());
    }
    corpus_documents(&ParquetReader::new(std::fs::File::open(path)?).finish()?)
}

/// Runs the job: writes `located.parquet`, `quote_verification.xlsx` and `stats.csv` under
/// `out`, and returns the statistics with a printable summary.
pub fn run(job: &LocateJob) -> PolarsResult<LocateReport> {
    let quotes = read_quotes(&job.quotes, &job.quote_col)?;
    let corpus = read_corpus(&job.corpus)?;
    let mut located = locate_in_documents(&quotes, &corpus, &job.options)?;
    if let Some(settings) = &job.embedder {
        let embedder = polars_rag::engines::embed::Embedder::shared(settings, "locate")?;
        fill_cosine(&mut located, &*embedder)?;
    } else if let Some(dim) = job.hash_embedding {
        fill_cosine(&mut located, &HashEmbedder { dim })?;
    }
    std::fs::create_dir_all(&job.out)?;
    let mut parquet = AtomicFile::create(&job.out.join("located.parquet"))?;
    ParquetWriter::new(parquet.file()?).finish(&mut located.clone())?;
    parquet.commit()?;
    write_workbook(
        &located,
        &job.out.join("quote_verification.xlsx"),
        &job.options,
    )?;
    let stats = stats_of(&located, &job.options)?;
    polars_rag::atomic::write(&job.out.join("stats.csv"), melted_csv(&stats).as_bytes())?;

    let errors = located.column("error")?.len() - located.column("error")?.null_count();
    let mut text = format!(
        "located {} quotes in {} documents ({} with an error)\n",
        located.height(),
        corpus.len(),
        errors
    );
    for (name, value) in &stats {
        let v = value.map_or("-".to_string(), |v| format!("{v:.4}"));
        text.push_str(&format!("  {name:<24} {v}\n"));
    }
    text.push_str(&format!(
        "wrote {}/located.parquet, quote_verification.xlsx, stats.csv\n",
        job.out.display()
    ));
    Ok(LocateReport { text })
}
