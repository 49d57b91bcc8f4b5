//! `polars-rag locate`: every quote of a table (or a text file, one quote per line) located in a
//! corpus, written as a Parquet table, soak's `.xlsx` workbook and melted statistics CSV.

use std::path::{Path, PathBuf};

use polars::prelude::*;

use crate::atomic::AtomicFile;
use crate::columnar::driver::readable_frame;
use crate::columnar::locate::{
    corpus_documents, figures_of_frame, fill_cosine, locate_in_index, located_rows,
};
use crate::engines::progress::{Progress, Work};
use crate::metrics::locate::embed::HashEmbedder;
use crate::metrics::locate::export::{ReviewSheet, SHEET_ROWS};
use crate::metrics::locate::stats::{
    least_confident_first, melted_csv, stats_of_figures, QuoteFigures,
};
use crate::metrics::locate::{LocateOptions, QuoteIndex};

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
    pub embedder: Option<crate::engines::embed::EmbedSettings>,
    /// Quotes located, embedded and written per batch (memory is bounded by one batch and a
    /// few numbers per quote); 0: one batch.
    pub batch_rows: usize,
    /// When the progress line is drawn.
    pub progress: crate::job::progress::ProgressMode,
}

/// What a `locate` job wrote and printed.
pub struct LocateReport {
    /// The text printed on stdout.
    pub text: String,
}

/// Where the quotes come from, read one batch at a time.
enum QuoteSource {
    /// A Parquet table's column, read by row ranges (Parquet skips to them).
    Parquet {
        scan: Box<LazyFrame>,
        column: String,
    },
    /// A text file, one quote per line; blank lines are skipped.
    Lines { path: PathBuf },
}

/// Reads the quotes of a source in batches.
enum QuoteBatches {
    Parquet {
        scan: Box<LazyFrame>,
        column: String,
        offset: usize,
        total: usize,
    },
    Lines(std::io::Lines<std::io::BufReader<std::fs::File>>, PathBuf),
}

impl QuoteSource {
    fn open(path: &Path, column: &str) -> PolarsResult<Self> {
        if !path.is_file() {
            return Err(crate::job::not_found(format!(
                "locate: quotes not found: {}",
                path.display()
            )));
        }
        if path.extension().is_some_and(|e| e == "parquet") {
            crate::job::parquet::parquet_file(path, "quotes table")?;
            let mut scan = LazyFrame::scan_parquet(
                PlRefPath::new(path.display().to_string()),
                ScanArgsParquet::default(),
            )?;
            let schema = scan.collect_schema()?;
            match schema.get(column) {
                None => {
                    let names: Vec<&str> = schema.iter_names().map(|n| n.as_str()).collect();
                    polars_bail!(ColumnNotFound: "locate: {} has no column '{column}' (columns: {names:?}); choose one with `quote_col`", path.display());
                }
                Some(dtype) if dtype.is_nested() => {
                    polars_bail!(ComputeError: "locate: the column '{column}' of {} holds {dtype}, not one quote (text) per row; choose one with `quote_col`", path.display());
                }
                Some(_) => {}
            }
            return Ok(QuoteSource::Parquet {
                scan: Box::new(scan),
                column: column.to_string(),
            });
        }
        Ok(QuoteSource::Lines {
            path: path.to_path_buf(),
        })
    }

    fn batches(&self) -> PolarsResult<QuoteBatches> {
        Ok(match self {
            QuoteSource::Parquet { scan, column } => {
                let rows = scan
                    .as_ref()
                    .clone()
                    .select([len().alias("rows")])
                    .collect()?;
                let total = rows.column("rows")?.cast(&DataType::UInt64)?;
                QuoteBatches::Parquet {
                    scan: Box::new(scan.as_ref().clone().select([col(column.as_str())])),
                    column: column.clone(),
                    offset: 0,
                    total: total.u64()?.get(0).unwrap_or(0) as usize,
                }
            }
            QuoteSource::Lines { path } => {
                let file = std::fs::File::open(path).map_err(
                    |e| polars_err!(ComputeError: "locate: cannot read {}: {e}", path.display()),
                )?;
                use std::io::BufRead;
                QuoteBatches::Lines(std::io::BufReader::new(file).lines(), path.clone())
            }
        })
    }

    /// The number of quotes and the length in code points of the longest (what soak's
    /// automatic window size reads), in one pass over the quotes.
    fn measure(&self, batch_rows: usize) -> PolarsResult<(usize, Option<usize>)> {
        let (mut count, mut longest) = (0usize, None);
        let mut batches = self.batches()?;
        while let Some(batch) = batches.next_batch(batch_rows)? {
            count += batch.len();
            for quote in batch.str()?.iter().flatten() {
                longest = longest.max(Some(quote.chars().count()));
            }
        }
        Ok((count, longest))
    }
}

impl QuoteBatches {
    /// The next batch of at most `rows` quotes as a `quote` string column; `None` at the end.
    fn next_batch(&mut self, rows: usize) -> PolarsResult<Option<Series>> {
        match self {
            QuoteBatches::Parquet {
                scan,
                column,
                offset,
                total,
            } => {
                if *offset >= *total {
                    return Ok(None);
                }
                let df = scan
                    .as_ref()
                    .clone()
                    .slice(*offset as i64, rows as IdxSize)
                    .collect()?;
                let df = readable_frame("locate", &df)?;
                *offset += df.height().max(1);
                let quotes = df
                    .column(column)?
                    .as_materialized_series()
                    .cast(&DataType::String)?;
                Ok(Some(quotes.with_name("quote".into())))
            }
            QuoteBatches::Lines(lines, path) => {
                let mut batch: Vec<String> = Vec::new();
                while batch.len() < rows {
                    match lines.next() {
                        Some(line) => {
                            let line = line.map_err(|e| {
                                crate::job::prefixed(
                                    &format!("locate: cannot read {}: ", path.display()),
                                    e,
                                )
                            })?;
                            if !line.trim().is_empty() {
                                batch.push(line);
                            }
                        }
                        None => break,
                    }
                }
                Ok((!batch.is_empty()).then(|| Series::new("quote".into(), batch)))
            }
        }
    }
}

/// The documents in join order: a Parquet table's row order, a directory's sorted paths.
fn read_corpus(path: &Path) -> PolarsResult<Vec<(String, String)>> {
    if path.is_dir() {
        let corpus =
            crate::job::corpus::load(path).map_err(|e| crate::job::prefixed("locate: ", e))?;
        return Ok(corpus
            .sorted_documents()
            .into_iter()
            .map(|(f, t)| (f.to_string(), t.to_string()))
            .collect());
    }
    if !path.is_file() {
        return Err(crate::job::not_found(format!(
            "locate: corpus not found: {}",
            path.display()
        )));
    }
    corpus_documents(
        &ParquetReader::new(crate::job::parquet::parquet_file(path, "corpus")?).finish()?,
    )
}

/// The files a job writes under its output folder.
const OUTPUTS: [&str; 3] = ["located.parquet", "quote_verification.xlsx", "stats.csv"];

/// An output that would replace one of the job's inputs is refused before anything is read.
fn refuse_overwriting_inputs(job: &LocateJob) -> PolarsResult<()> {
    for name in OUTPUTS {
        let output = job.out.join(name);
        for (what, input) in [("quotes", &job.quotes), ("corpus", &job.corpus)] {
            if crate::job::parquet::same_file(&output, input) {
                polars_bail!(ComputeError: "locate: the output {} is the job's {what} input; choose another `out`", output.display());
            }
        }
    }
    Ok(())
}

/// Runs the job: writes `located.parquet`, `quote_verification.xlsx` and `stats.csv` under
/// `out`, and returns the statistics with a printable summary.
///
/// The quotes stream: each batch is located against one index of the corpus, embedded when
/// asked, and appended to `located.parquet`; only a few numbers per quote stay in memory (the
/// statistics' medians and the workbook's order need every quote's). The workbook is then
/// written least confident first from `located.parquet`, one batch of rows per pass.
pub fn run(job: &LocateJob) -> PolarsResult<LocateReport> {
    refuse_overwriting_inputs(job)?;
    let batch_rows = if job.batch_rows == 0 {
        usize::MAX
    } else {
        job.batch_rows
    };
    job.options.validate()?;
    let source = QuoteSource::open(&job.quotes, &job.quote_col)?;
    let corpus = read_corpus(&job.corpus)?;
    if corpus.is_empty() {
        polars_bail!(ComputeError: "locate_quotes: the corpus has no documents");
    }
    let (total, longest) = source.measure(batch_rows)?;
    let documents: Vec<(&str, &str)> = corpus
        .iter()
        .map(|(f, t)| (f.as_str(), t.as_str()))
        .collect();
    // One index for every batch: soak's automatic window reads only the longest quote.
    let index = QuoteIndex::for_longest_quote(&documents, &job.options, longest);
    let embedder = match &job.embedder {
        Some(settings) => Some(crate::engines::embed::Embedder::shared(settings, "locate")?),
        None => None,
    };

    std::fs::create_dir_all(&job.out)?;
    let located_path = job.out.join("located.parquet");
    let mut parquet = AtomicFile::create(&located_path)?;
    let file = parquet.file()?;
    let mut writer = None;
    let mut figures: Vec<QuoteFigures> = Vec::new();
    let (mut rows, mut errors) = (0usize, 0usize);
    Progress::planned(Work::Rows, total as u64, 0);
    let mut batches = source.batches()?;
    loop {
        let quotes = match batches.next_batch(batch_rows)? {
            Some(quotes) => quotes,
            // An empty job still writes an empty table with every column.
            None if writer.is_none() => Series::new_empty("quote".into(), &DataType::String),
            None => break,
        };
        let mut located = locate_in_index(&quotes, &index)?;
        if let Some(embedder) = &embedder {
            fill_cosine(&mut located, &**embedder)?;
        } else if let Some(dim) = job.hash_embedding {
            fill_cosine(&mut located, &HashEmbedder { dim })?;
        }
        figures.extend(figures_of_frame(&located, rows as u64)?);
        errors += located.column("error")?.len() - located.column("error")?.null_count();
        rows += located.height();
        // The batch writer needs the columns cut into chunks alike.
        located.rechunk_mut_par();
        if writer.is_none() {
            writer = Some(ParquetWriter::new(&mut *file).batched(located.schema())?);
        }
        let writer = writer.as_mut().expect("the writer was made above");
        writer.write_batch(&located)?;
        Progress::finished(Work::Rows, located.height() as u64);
        if quotes.is_empty() {
            break;
        }
    }
    writer.expect("at least one batch").finish()?;
    parquet.commit()?;

    let left_out = write_review_sheet(job, &located_path, &figures, batch_rows)?;
    let stats = stats_of_figures(&figures, &job.options);
    crate::atomic::write(&job.out.join("stats.csv"), melted_csv(&stats).as_bytes())?;

    let mut text = format!(
        "located {rows} quotes in {} documents ({errors} with an error)\n",
        corpus.len(),
    );
    for (name, value) in &stats {
        let v = value.map_or("-".to_string(), |v| format!("{v:.4}"));
        text.push_str(&format!("  {name:<24} {v}\n"));
    }
    text.push_str(&format!(
        "wrote {}/located.parquet, quote_verification.xlsx, stats.csv\n",
        job.out.display()
    ));
    if left_out > 0 {
        text.push_str(&format!(
            "note: quote_verification.xlsx holds the {SHEET_ROWS} least confident quotes, the most a worksheet holds; the other {left_out} are in located.parquet\n"
        ));
    }
    Ok(LocateReport { text })
}

/// Writes `quote_verification.xlsx`: the located quotes least confident first, read back from
/// the located table a batch of rows per pass (each pass gathers the rows of the next
/// `batch_rows` places, wherever they are in the table). Returns how many quotes did not fit
/// in a worksheet.
fn write_review_sheet(
    job: &LocateJob,
    located_path: &Path,
    figures: &[QuoteFigures],
    batch_rows: usize,
) -> PolarsResult<usize> {
    let err = |e: crate::Error| polars_err!(ComputeError: "{e}");
    let mut sheet =
        ReviewSheet::new(&job.out.join("quote_verification.xlsx"), &job.options).map_err(err)?;
    let order = least_confident_first(figures);
    let shown = &order[..order.len().min(SHEET_ROWS)];
    let located = LazyFrame::scan_parquet(
        PlRefPath::new(located_path.display().to_string()),
        ScanArgsParquet::default(),
    )?;
    for places in shown.chunks(batch_rows.min(SHEET_ROWS)) {
        // (row in the located table, place in this pass), in table order.
        let mut wanted: Vec<(u64, usize)> = places
            .iter()
            .enumerate()
            .map(|(place, &k)| (figures[k].row, place))
            .collect();
        wanted.sort_unstable();
        let mut gathered: Vec<Option<(String, crate::metrics::locate::QuoteMatch)>> =
            vec![None; places.len()];
        let mut next = 0;
        while next < wanted.len() {
            let first = wanted[next].0;
            let length = batch_rows.min(u32::MAX as usize) as u64;
            let slice = located
                .clone()
                .slice(first as i64, length as IdxSize)
                .collect()?;
            let mut take: Vec<IdxSize> = Vec::new();
            let mut into: Vec<usize> = Vec::new();
            while next < wanted.len() && wanted[next].0 < first + length {
                take.push((wanted[next].0 - first) as IdxSize);
                into.push(wanted[next].1);
                next += 1;
            }
            let rows = slice.take(&IdxCa::from_vec("row".into(), take))?;
            let (_, quotes, matches) = located_rows(&rows)?;
            if quotes.len() != into.len() {
                polars_bail!(ComputeError: "locate: {} changed while its workbook was written", located_path.display());
            }
            for ((quote, m), place) in quotes.into_iter().zip(matches).zip(into) {
                gathered[place] = Some((quote, m));
            }
        }
        for (quote, m) in gathered.into_iter().flatten() {
            sheet.push(&quote, &m).map_err(err)?;
        }
    }
    sheet.save().map_err(err)?;
    Ok(order.len() - shown.len())
}
