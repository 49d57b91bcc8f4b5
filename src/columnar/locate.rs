//! `locate_quotes` over columns and tables. The algorithm is in
//! [`crate::metrics::locate`]; this module reads the quotes and the sources out of Polars
//! columns, builds one index per distinct set of sources, and writes the matches back as a
//! struct column or a table.
//!
//! Sources, per row: `str` (one document), `list[str]` (unnamed documents: `file` is null and
//! `source` is the position in the list), or `list[struct{file, text}]` (named documents). A
//! length-1 sources column (for example `pl.lit(...)`) is one corpus shared by every row and is
//! indexed once.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use polars::prelude::*;

use super::corpus::frame_documents;
use super::driver::{output_len, struct_series, StrColumn};
use crate::engines::embed::TextEmbedder;
use crate::metrics::citation::QuotedSpansOptions;
use crate::metrics::locate::embed;
use crate::metrics::locate::stats::{quote_stats, QuoteFigures};
use crate::metrics::locate::{LocateOptions, QuoteIndex, QuoteMatch};
use crate::metrics::retrieval::cosine;
use crate::text::quotes::extract_quoted_spans;

const METRIC: &str = "locate_quotes";

/// The fields of one located quote, in output order.
pub fn locate_quotes_dtype() -> DataType {
    DataType::Struct(
        [
            ("file", DataType::String),
            ("source", DataType::UInt32),
            ("start", DataType::Int64),
            ("end", DataType::Int64),
            ("span_text", DataType::String),
            ("context", DataType::String),
            ("bm25_score", DataType::Float64),
            ("bm25_ratio", DataType::Float64),
            ("match_ratio", DataType::Float64),
            ("found", DataType::Boolean),
            ("has_ellipsis", DataType::Boolean),
            ("head_start", DataType::Int64),
            ("head_end", DataType::Int64),
            ("tail_start", DataType::Int64),
            ("tail_end", DataType::Int64),
            ("global_start", DataType::Int64),
            ("global_end", DataType::Int64),
            ("cosine", DataType::Float64),
            ("error", DataType::String),
        ]
        .into_iter()
        .map(|(n, d)| Field::new(n.into(), d))
        .collect(),
    )
}

/// `list[struct{quote, ...the fields of locate_quotes...}]`: the quotes of an answer, located.
pub fn located_quotes_dtype() -> DataType {
    let DataType::Struct(fields) = locate_quotes_dtype() else {
        unreachable!("locate_quotes_dtype is a struct")
    };
    let mut with_quote = vec![Field::new("quote".into(), DataType::String)];
    with_quote.extend(fields);
    DataType::List(Box::new(DataType::Struct(with_quote)))
}

/// The documents of one row: `(position in the row's list, file name if any, text)`. A null
/// entry of the list is no document, but keeps its position, so `source` is always the position
/// in the list the user passed.
type Sources = Vec<(usize, Option<String>, String)>;

/// Reads the sources column into one document list per row (`None`: null row).
fn read_sources(s: &Series) -> PolarsResult<Vec<Option<Sources>>> {
    let bad = |dtype: &DataType| {
        polars_err!(
            SchemaMismatch: "{METRIC}: column '{}' (sources) must be str, list[str] or list[struct{{file, text}}], got {dtype}",
            s.name()
        )
    };
    let texts_of = |inner: &Series| -> PolarsResult<Sources> {
        match inner.dtype() {
            DataType::String => Ok(inner
                .str()?
                .iter()
                .enumerate()
                .filter_map(|(position, t)| t.map(|t| (position, None, t.to_string())))
                .collect()),
            DataType::Null => Ok(Vec::new()),
            DataType::Struct(_) => {
                let st = inner.struct_()?;
                let text = st.field_by_name("text").map_err(|_| bad(s.dtype()))?;
                let text = text.cast(&DataType::String)?;
                let file = st.field_by_name("file").ok();
                let file = file.map(|f| f.cast(&DataType::String)).transpose()?;
                let files: Vec<Option<String>> = match &file {
                    Some(f) => f.str()?.iter().map(|x| x.map(str::to_string)).collect(),
                    None => vec![None; text.len()],
                };
                Ok(text
                    .str()?
                    .iter()
                    .zip(files)
                    .enumerate()
                    .filter_map(|(position, (t, f))| t.map(|t| (position, f, t.to_string())))
                    .collect())
            }
            other => Err(bad(&DataType::List(Box::new(other.clone())))),
        }
    };
    match s.dtype() {
        DataType::String => Ok(s
            .str()?
            .iter()
            .map(|t| t.map(|t| vec![(0, None, t.to_string())]))
            .collect()),
        DataType::Null => Ok(vec![None; s.len()]),
        DataType::List(_) => {
            let ca = s.list()?;
            (0..ca.len())
                .map(|i| {
                    ca.get_as_series(i)
                        .map(|inner| texts_of(&inner))
                        .transpose()
                })
                .collect()
        }
        other => Err(bad(other)),
    }
}

fn sources_key(sources: &Sources) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    sources.hash(&mut h);
    h.finish()
}

/// Builds the index of one row's sources. The index knows each document by its position in
/// the row's list (so a document without a name, or named like another's position, is never
/// confused with another); [`locate_row`] turns the position back into the file name. Two
/// documents with the same name are an error for the row, as `validate` and the corpus readers
/// treat them.
fn build_index(
    sources: &Sources,
    opts: &LocateOptions,
    quotes: &[&str],
) -> Result<QuoteIndex, String> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (position, file, _) in sources {
        if let Some(file) = file
            && let Some(first) = seen.insert(file.as_str(), *position)
        {
            return Err(format!(
                    "{METRIC}: two sources are named '{file}' (positions {first} and {position}); document names must be unique"
                ));
        }
    }
    let positions: Vec<String> = sources.iter().map(|(p, _, _)| p.to_string()).collect();
    let docs: Vec<(&str, &str)> = positions
        .iter()
        .zip(sources)
        .map(|(p, (_, _, t))| (p.as_str(), t.as_str()))
        .collect();
    QuoteIndex::new(&docs, opts, quotes).map_err(String::from)
}

/// One row's outcome: a match, a reason it has none, or a null row.
enum Row {
    Located(Box<QuoteMatch>, u32, bool),
    Failed(String),
    Null,
}

/// Locates each row's quote in that row's sources; see the module documentation for the
/// shapes accepted. A null quote or null sources give a null row; an empty quote or empty
/// sources give a row whose `error` says so. Options are checked first (an error for the call).
pub fn locate_quotes(
    quotes: &Series,
    sources: &Series,
    opts: &LocateOptions,
    parallel: bool,
) -> PolarsResult<Series> {
    opts.validate()?;
    let len = output_len(
        METRIC,
        &[
            (quotes.name().as_str(), quotes.len()),
            (sources.name().as_str(), sources.len()),
        ],
    )?;
    let quote_col = StrColumn::new(METRIC, "quotes", quotes)?;
    let all_quotes = quote_col.rows(0..len);
    let source_rows = read_sources(sources)?;
    let shared = sources.len() == 1;
    // One index per distinct set of sources; a shared corpus sees every quote (soak's automatic
    // window size reads the whole batch). A shared corpus is hashed once, not once per row.
    let batch_quotes: Vec<&str> = all_quotes.iter().flatten().copied().collect();
    let shared_key = match (shared, source_rows.first()) {
        (true, Some(Some(src))) => Some(sources_key(src)),
        _ => None,
    };
    let row_sources = |i: usize| {
        if shared {
            &source_rows[0]
        } else {
            &source_rows[i]
        }
    };
    // Rows → slot of their distinct source set; each set is indexed (in parallel) once, from
    // its first row.
    let mut slots: HashMap<u64, usize> = HashMap::new();
    let mut first_rows: Vec<usize> = Vec::new();
    let row_slot: Vec<Option<usize>> = (0..len)
        .map(|i| {
            let src = row_sources(i).as_ref()?;
            let key = shared_key.unwrap_or_else(|| sources_key(src));
            Some(*slots.entry(key).or_insert_with(|| {
                first_rows.push(i);
                first_rows.len() - 1
            }))
        })
        .collect();
    let indexes: Vec<Result<QuoteIndex, String>> = par_map(first_rows.len(), parallel, |k| {
        let i = first_rows[k];
        let batch: &[&str] = if shared {
            &batch_quotes
        } else {
            all_quotes[i].as_slice()
        };
        match row_sources(i) {
            Some(src) => build_index(src, opts, batch),
            None => Err(format!("{METRIC}: no sources")),
        }
    });
    let row_index: Vec<Option<&Result<QuoteIndex, String>>> =
        row_slot.iter().map(|s| s.map(|k| &indexes[k])).collect();
    // Row by row on the thread pool: quotes cost very different times (a verbatim quote is
    // cheap, an absent one is not), so fixed batches would leave a core idle.
    let mut rows: Vec<Row> = par_map(len, parallel, |i| match (all_quotes[i], row_index[i]) {
        (Some(q), Some(Ok(index))) => match row_sources(i) {
            Some(src) => locate_row(index, q, Some(src)),
            None => Row::Null,
        },
        (Some(_), Some(Err(e))) => Row::Failed(e.clone()),
        _ => Row::Null,
    });
    if let Some(settings) = &opts.embedder {
        embed_located(&mut rows, &all_quotes, settings)?;
    }
    rows_to_struct(&rows)
}

/// Fills `cosine` of every located row with the similarity of its quote and its span under
/// the model of `settings`: all quotes and all spans of the column in one call each, so the
/// shared embedder batches, dedupes and caches them.
fn embed_located(
    rows: &mut [Row],
    quotes: &[Option<&str>],
    settings: &crate::engines::embed::EmbedSettings,
) -> PolarsResult<()> {
    let located: Vec<usize> = (0..rows.len())
        .filter(|&i| matches!(rows[i], Row::Located(..)))
        .collect();
    if located.is_empty() {
        return Ok(());
    }
    let mut matches: Vec<QuoteMatch> = located
        .iter()
        .filter_map(|&i| match &rows[i] {
            Row::Located(m, ..) => Some((**m).clone()),
            _ => None,
        })
        .collect();
    let located_quotes: Vec<&str> = located.iter().map(|&i| quotes[i].unwrap_or("")).collect();
    let embedder = crate::engines::embed::Embedder::shared(settings, METRIC)?;
    embed::fill_cosine(&mut matches, &located_quotes, &*embedder)?;
    for (&i, filled) in located.iter().zip(matches) {
        if let Row::Located(m, ..) = &mut rows[i] {
            m.cosine = filled.cosine;
        }
    }
    Ok(())
}

/// One quote located against an index, with the position of its document. With a row's
/// `sources` the index names documents by position (see [`build_index`]): `source` is that
/// position and `file` the document's own name (null when it has none). Without, the index is a
/// corpus of named documents and `source` is the document's place in it.
fn locate_row(index: &QuoteIndex, quote: &str, sources: Option<&Sources>) -> Row {
    match index.locate(quote) {
        Ok(mut m) => {
            let source = match sources {
                Some(src) => {
                    let position = m.file.as_deref().and_then(|p| p.parse::<usize>().ok());
                    m.file = position.and_then(|p| {
                        src.iter()
                            .find(|(q, _, _)| *q == p)
                            .and_then(|(_, file, _)| file.clone())
                    });
                    position.map_or(u32::MAX, |p| u32::try_from(p).unwrap_or(u32::MAX))
                }
                None => m
                    .file
                    .as_deref()
                    .and_then(|f| index.document_position(f))
                    .unwrap_or(u32::MAX),
            };
            Row::Located(Box::new(m), source, true)
        }
        Err(e) => Row::Failed(e.to_string()),
    }
}

/// `f` over `0..n`, on Polars' thread pool with work stealing when `parallel`; in order.
fn par_map<T: Send>(n: usize, parallel: bool, f: impl Fn(usize) -> T + Sync + Send) -> Vec<T> {
    if parallel && n > 1 {
        use rayon::prelude::*;
        polars_core::runtime::THREAD_POOL.install(|| (0..n).into_par_iter().map(f).collect())
    } else {
        (0..n).map(f).collect()
    }
}

fn rows_to_struct(rows: &[Row]) -> PolarsResult<Series> {
    let get = |f: &dyn Fn(&QuoteMatch, u32, bool) -> Option<i64>| -> Series {
        rows.iter()
            .map(|r| match r {
                Row::Located(m, s, n) => f(m, *s, *n),
                _ => None,
            })
            .collect::<Int64Chunked>()
            .into_series()
    };
    let getf = |f: &dyn Fn(&QuoteMatch) -> Option<f64>| -> Series {
        rows.iter()
            .map(|r| match r {
                Row::Located(m, _, _) => f(m),
                _ => None,
            })
            .collect::<Float64Chunked>()
            .into_series()
    };
    let gets = |f: &dyn Fn(&QuoteMatch, bool) -> Option<String>| -> Series {
        rows.iter()
            .map(|r| match r {
                Row::Located(m, _, n) => f(m, *n),
                _ => None,
            })
            .collect::<StringChunked>()
            .into_series()
    };
    let getb = |f: &dyn Fn(&QuoteMatch) -> bool| -> Series {
        rows.iter()
            .map(|r| match r {
                Row::Located(m, _, _) => Some(f(m)),
                _ => None,
            })
            .collect::<BooleanChunked>()
            .into_series()
    };
    let int = |v: Option<usize>| v.map(|x| x as i64);
    let source: Series = rows
        .iter()
        .map(|r| match r {
            Row::Located(_, s, _) if *s != u32::MAX => Some(*s),
            _ => None,
        })
        .collect::<UInt32Chunked>()
        .into_series();
    let error: Series = rows
        .iter()
        .map(|r| match r {
            Row::Failed(e) => Some(e.as_str()),
            _ => None,
        })
        .collect::<StringChunked>()
        .into_series();
    let fields = [
        gets(&|m, named| m.file.clone().filter(|_| named)).with_name("file".into()),
        source.with_name("source".into()),
        get(&|m, _, _| int(m.start)).with_name("start".into()),
        get(&|m, _, _| int(m.end)).with_name("end".into()),
        gets(&|m, _| Some(m.span_text.clone())).with_name("span_text".into()),
        gets(&|m, _| Some(m.context.clone())).with_name("context".into()),
        getf(&|m| Some(m.bm25_score)).with_name("bm25_score".into()),
        getf(&|m| Some(m.bm25_ratio)).with_name("bm25_ratio".into()),
        getf(&|m| m.match_ratio).with_name("match_ratio".into()),
        getb(&|m| m.found).with_name("found".into()),
        getb(&|m| m.has_ellipsis).with_name("has_ellipsis".into()),
        get(&|m, _, _| int(m.head_start)).with_name("head_start".into()),
        get(&|m, _, _| int(m.head_end)).with_name("head_end".into()),
        get(&|m, _, _| int(m.tail_start)).with_name("tail_start".into()),
        get(&|m, _, _| int(m.tail_end)).with_name("tail_end".into()),
        get(&|m, _, _| Some(m.global_start as i64)).with_name("global_start".into()),
        get(&|m, _, _| Some(m.global_end as i64)).with_name("global_end".into()),
        getf(&|m| m.cosine).with_name("cosine".into()),
        error.with_name("error".into()),
    ];
    let valid: Vec<bool> = rows.iter().map(|r| !matches!(r, Row::Null)).collect();
    struct_series(METRIC, &fields, &valid)
}

/// The `(file, text)` documents of a corpus table, in row order.
pub fn corpus_documents(corpus: &DataFrame) -> PolarsResult<Vec<(String, String)>> {
    frame_documents(corpus).map_err(|e| polars_err!(ComputeError: "{METRIC}: the corpus {e}"))
}

/// The table-level form: every quote of `quotes` located in one corpus (a `file`, `text`
/// table). Returns a table with the quote and the fields of [`locate_quotes_dtype`] (minus
/// `source`), one row per quote, in input order.
pub fn locate_table(
    quotes: &Series,
    corpus: &DataFrame,
    opts: &LocateOptions,
) -> PolarsResult<DataFrame> {
    locate_in_documents(quotes, &corpus_documents(corpus)?, opts)
}

/// [`locate_table`] over `(file, text)` documents already read: one index for every quote.
pub fn locate_in_documents(
    quotes: &Series,
    docs: &[(String, String)],
    opts: &LocateOptions,
) -> PolarsResult<DataFrame> {
    opts.validate()?;
    if docs.is_empty() {
        polars_bail!(ComputeError: "{METRIC}: the corpus has no documents");
    }
    let rows_in = StrColumn::new(METRIC, "quotes", quotes)?.rows(0..quotes.len());
    let batch: Vec<&str> = rows_in.iter().flatten().copied().collect();
    let pairs: Vec<(&str, &str)> = docs.iter().map(|(f, t)| (f.as_str(), t.as_str())).collect();
    located_frame(quotes, &QuoteIndex::new(&pairs, opts, &batch))
}

/// [`locate_in_documents`] against an index already built (a streaming job builds one for all
/// its batches, [`QuoteIndex::for_longest_quote`]); an index that could not be built is every
/// row's error.
pub fn locate_in_index(
    quotes: &Series,
    index: &crate::Result<QuoteIndex>,
) -> PolarsResult<DataFrame> {
    located_frame(quotes, index)
}

fn located_frame(quotes: &Series, index: &crate::Result<QuoteIndex>) -> PolarsResult<DataFrame> {
    let rows_in = StrColumn::new(METRIC, "quotes", quotes)?.rows(0..quotes.len());
    let rows: Vec<Row> = par_map(rows_in.len(), true, |i| match (rows_in[i], index) {
        (Some(q), Ok(index)) => locate_row(index, q, None),
        (Some(_), Err(e)) => Row::Failed(e.to_string()),
        (None, _) => Row::Null,
    });
    let mut df = rows_to_struct(&rows)?.struct_()?.clone().unnest();
    df.drop_in_place("source")?;
    df.insert_column(0, quotes.clone().with_name("quote".into()).into_column())?;
    Ok(df)
}

/// Matches back out of a located table (as [`locate_table`] returns it, or the unnested struct
/// column), for statistics and exports. Rows with an error or a null match are skipped.
pub(crate) fn matches_from_frame(df: &DataFrame) -> PolarsResult<(Vec<String>, Vec<QuoteMatch>)> {
    let (_, quotes, matches) = located_rows(df)?;
    Ok((quotes, matches))
}

/// The figures (statistics and workbook order) of the located rows of a batch of a located
/// table whose first row is row `first_row` of the whole table.
pub fn figures_of_frame(df: &DataFrame, first_row: u64) -> PolarsResult<Vec<QuoteFigures>> {
    let (rows, quotes, matches) = located_rows(df)?;
    Ok(rows
        .iter()
        .zip(quotes.iter().zip(&matches))
        .map(|(&row, (quote, m))| QuoteFigures::of(first_row + row as u64, quote, m))
        .collect())
}

/// The rows of a located table that hold a match: their positions, quotes and matches.
pub fn located_rows(df: &DataFrame) -> PolarsResult<(Vec<usize>, Vec<String>, Vec<QuoteMatch>)> {
    let s = |n: &str| -> PolarsResult<Series> {
        df.column(n)
            .map(|c| c.as_materialized_series().clone())
            .map_err(
                |_| polars_err!(ColumnNotFound: "{METRIC}: the located table has no column '{n}'"),
            )
    };
    let quote = s("quote")?.cast(&DataType::String)?;
    let quote = quote.str()?;
    let strs = |n: &str| -> PolarsResult<Vec<Option<String>>> {
        Ok(s(n)?
            .cast(&DataType::String)?
            .str()?
            .iter()
            .map(|x| x.map(str::to_string))
            .collect())
    };
    let ints = |n: &str| -> PolarsResult<Vec<Option<i64>>> {
        Ok(s(n)?.cast(&DataType::Int64)?.i64()?.iter().collect())
    };
    let floats = |n: &str| -> PolarsResult<Vec<Option<f64>>> {
        Ok(s(n)?.cast(&DataType::Float64)?.f64()?.iter().collect())
    };
    let bools = |n: &str| -> PolarsResult<Vec<Option<bool>>> { Ok(s(n)?.bool()?.iter().collect()) };
    let (file, span, context) = (strs("file")?, strs("span_text")?, strs("context")?);
    let (start, end, gs, ge) = (
        ints("start")?,
        ints("end")?,
        ints("global_start")?,
        ints("global_end")?,
    );
    let (hs, he, ts, te) = (
        ints("head_start")?,
        ints("head_end")?,
        ints("tail_start")?,
        ints("tail_end")?,
    );
    let (score, ratio, mr, cos) = (
        floats("bm25_score")?,
        floats("bm25_ratio")?,
        floats("match_ratio")?,
        floats("cosine")?,
    );
    let (found, ell) = (bools("found")?, bools("has_ellipsis")?);
    let u = |v: Option<i64>| v.map(|x| x as usize);
    let mut rows = Vec::new();
    let mut quotes = Vec::new();
    let mut matches = Vec::new();
    for i in 0..df.height() {
        let (Some(q), Some(span), Some(score), Some(ratio)) =
            (quote.get(i), span[i].clone(), score[i], ratio[i])
        else {
            continue;
        };
        rows.push(i);
        quotes.push(q.to_string());
        matches.push(QuoteMatch {
            file: file[i].clone(),
            start: u(start[i]),
            end: u(end[i]),
            global_start: u(gs[i]).unwrap_or(0),
            global_end: u(ge[i]).unwrap_or(0),
            span_text: span,
            context: context[i].clone().unwrap_or_default(),
            bm25_score: score,
            bm25_ratio: ratio,
            match_ratio: mr[i],
            found: found[i].unwrap_or(false),
            has_ellipsis: ell[i].unwrap_or(false),
            head_start: u(hs[i]),
            head_end: u(he[i]),
            tail_start: u(ts[i]),
            tail_end: u(te[i]),
            cosine: cos[i],
        });
    }
    Ok((rows, quotes, matches))
}

/// The aggregate statistics of a located table, `(name, value)` in soak's order.
pub fn stats_of(
    df: &DataFrame,
    opts: &LocateOptions,
) -> PolarsResult<Vec<(&'static str, Option<f64>)>> {
    let (quotes, matches) = matches_from_frame(df)?;
    let quotes: Vec<&str> = quotes.iter().map(|q| q.as_str()).collect();
    Ok(quote_stats(&quotes, &matches, opts))
}

/// Statistics as a `variable`, `value` table.
pub fn stats_frame(stats: &[(&str, Option<f64>)]) -> PolarsResult<DataFrame> {
    DataFrame::new(
        stats.len(),
        vec![
            Column::new(
                "variable".into(),
                stats.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
            ),
            Column::new(
                "value".into(),
                stats.iter().map(|(_, v)| *v).collect::<Vec<_>>(),
            ),
        ],
    )
}

/// Fills the `cosine` column of a located table with the similarity of each quote and its
/// span under `embedder` (rows without a match keep a null).
pub fn fill_cosine(df: &mut DataFrame, embedder: &dyn TextEmbedder) -> PolarsResult<()> {
    let (quotes, mut matches) = matches_from_frame(df)?;
    let quotes: Vec<&str> = quotes.iter().map(|q| q.as_str()).collect();
    embed::fill_cosine(&mut matches, &quotes, embedder)
        .map_err(|e| polars_err!(ComputeError: "{e}"))?;
    // matches_from_frame keeps exactly the rows with a span, in order.
    let mut located = matches.iter();
    let spans = df.column("span_text")?.str()?.clone();
    let cosine: Float64Chunked = spans
        .iter()
        .map(|s| s.and_then(|_| located.next().and_then(|m| m.cosine)))
        .collect();
    df.with_column(cosine.with_name("cosine".into()).into_column())?;
    Ok(())
}

/// Writes the `.xlsx` workbook of a located table, least confident first; returns how many
/// quotes did not fit in a worksheet (0 below Excel's 1,048,575 rows).
#[cfg(feature = "xlsx")]
pub fn write_workbook(
    df: &DataFrame,
    path: &std::path::Path,
    opts: &LocateOptions,
) -> PolarsResult<usize> {
    let (quotes, matches) = matches_from_frame(df)?;
    let quotes: Vec<&str> = quotes.iter().map(|q| q.as_str()).collect();
    crate::metrics::locate::export::write_workbook(path, &quotes, &matches, opts)
        .map_err(|e| polars_err!(ComputeError: "{e}"))
}

/// Every quoted span of each answer located in that row's sources: `list[struct]` per row
/// (the fields of [`locate_quotes_dtype`] plus `quote`), empty when the answer quotes nothing,
/// null when the answer or the sources are null. Quotes are extracted as `quoted_spans` does
/// (`quoted` options), then located with `options`.
pub fn locate_answer_quotes(
    answer: &Series,
    sources: &Series,
    quoted: &QuotedSpansOptions,
    options: &LocateOptions,
    parallel: bool,
) -> PolarsResult<Series> {
    options.validate()?;
    let len = output_len(
        METRIC,
        &[
            (answer.name().as_str(), answer.len()),
            (sources.name().as_str(), sources.len()),
        ],
    )?;
    let answers = StrColumn::new(METRIC, "answer", answer)?.rows(0..len);
    let source_rows = read_sources(sources)?;
    let mut per_row: Vec<Option<(Vec<String>, Vec<Row>)>> = par_map(len, parallel, |i| {
        let src = source_rows[if source_rows.len() == 1 { 0 } else { i }].as_ref()?;
        let quotes = extract_quoted_spans(answers[i]?, quoted.quotes, quoted.min_len);
        let rows = match build_index(src, options, &quotes) {
            Ok(index) => quotes
                .iter()
                .map(|q| locate_row(&index, q, Some(src)))
                .collect(),
            Err(e) => quotes.iter().map(|_| Row::Failed(e.clone())).collect(),
        };
        Some((quotes.iter().map(|q| q.to_string()).collect(), rows))
    });
    if let Some(settings) = &options.embedder {
        // Every located quote of the column in one embedding call, then back to its row.
        let mut flat: Vec<Row> = Vec::new();
        let mut counts: Vec<usize> = Vec::with_capacity(per_row.len());
        for (_, rows) in per_row.iter_mut().flatten() {
            counts.push(rows.len());
            flat.append(rows);
        }
        let quotes: Vec<Option<&str>> = per_row
            .iter()
            .flatten()
            .flat_map(|(quotes, _)| quotes.iter().map(|q| Some(q.as_str())))
            .collect();
        embed_located(&mut flat, &quotes, settings)?;
        let mut flat = flat.into_iter();
        for ((_, rows), count) in per_row.iter_mut().flatten().zip(counts) {
            rows.extend(flat.by_ref().take(count));
        }
    }
    let mut lists: Vec<Option<Series>> = Vec::with_capacity(len);
    for row in per_row {
        lists.push(match row {
            None => None,
            Some((quotes, rows)) => {
                let located = rows_to_struct(&rows)?;
                let mut df = located.struct_()?.clone().unnest();
                df.insert_column(0, Column::new("quote".into(), quotes))?;
                Some(df.into_struct("locate_quotes".into()).into_series())
            }
        });
    }
    let out: ListChunked = lists.into_iter().collect();
    // An all-empty or all-null column would otherwise come out with an inferred inner type.
    out.into_series()
        .with_name("locate_quotes".into())
        .cast(&located_quotes_dtype())
}

/// The quoted spans of each answer (`list[str]`), as the `quoted_spans` metric extracts them
/// (`quotes`, `min_len` from [`QuotedSpansOptions`]): the quotes to locate, one list per answer.
/// A null answer gives a null list.
pub fn extract_quotes(answer: &Series, options: &QuotedSpansOptions) -> PolarsResult<Series> {
    let col = StrColumn::new("extract_quotes", "answer", answer)?;
    let rows = col.rows(0..col.len());
    let mut builder = ListStringChunkedBuilder::new("quotes".into(), rows.len(), rows.len() * 2);
    for row in rows {
        match row {
            Some(a) => builder.append_values_iter(
                extract_quoted_spans(a, options.quotes, options.min_len).into_iter(),
            ),
            None => builder.append_null(),
        }
    }
    Ok(builder.finish().into_series())
}

/// Row-wise cosine similarity of two embedding columns (`list[f32|f64]` or `array[f32|f64, d]`):
/// 0.0 when either vector is all zeros, null when either row is null, an error naming the row
/// when the dimensions differ.
pub fn embedding_cosine(a: &Series, b: &Series) -> PolarsResult<Series> {
    let len = output_len(
        "embedding_cosine",
        &[(a.name().as_str(), a.len()), (b.name().as_str(), b.len())],
    )?;
    let lists = |s: &Series| -> PolarsResult<ListChunked> {
        match s.dtype() {
            DataType::List(inner) | DataType::Array(inner, _) if inner.is_primitive_numeric() => {
                Ok(s.cast(&DataType::List(Box::new(DataType::Float64)))?
                    .list()?
                    .clone())
            }
            other => {
                polars_bail!(SchemaMismatch: "embedding_cosine: column '{}' must be list[float] or array[float, d], got {other}", s.name())
            }
        }
    };
    let (la, lb) = (lists(a)?, lists(b)?);
    let vec_at = |l: &ListChunked, i: usize| -> PolarsResult<Option<Vec<f64>>> {
        let i = if l.len() == 1 { 0 } else { i };
        match l.get_as_series(i) {
            None => Ok(None),
            Some(s) => {
                let s = s.f64()?;
                if s.null_count() > 0 {
                    polars_bail!(ComputeError: "embedding_cosine: row {i} has a null component");
                }
                Ok(Some(s.into_no_null_iter().collect()))
            }
        }
    };
    let mut out: Vec<Option<f64>> = Vec::with_capacity(len);
    for i in 0..len {
        match (vec_at(&la, i)?, vec_at(&lb, i)?) {
            (Some(x), Some(y)) => {
                if x.len() != y.len() {
                    polars_bail!(ComputeError: "embedding_cosine: row {i}: '{}' has {} dimensions and '{}' has {}", a.name(), x.len(), b.name(), y.len());
                }
                out.push(Some(cosine(&x, &y)));
            }
            _ => out.push(None),
        }
    }
    Ok(Float64Chunked::from_iter_options("cosine".into(), out.into_iter()).into_series())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_corpus_and_per_row_sources() {
        let quotes = Series::new("q".into(), [Some("barely manage a mile"), None, Some("")]);
        let corpus = Series::new("s".into(), ["At first I could barely manage a mile."])
            .implode()
            .unwrap()
            .into_series();
        let out = locate_quotes(&quotes, &corpus, &LocateOptions::default(), false).unwrap();
        let df = out.struct_().unwrap().clone().unnest();
        assert_eq!(df.column("start").unwrap().i64().unwrap().get(0), Some(17));
        assert_eq!(df.column("source").unwrap().u32().unwrap().get(0), Some(0));
        assert_eq!(df.column("file").unwrap().str().unwrap().get(0), None);
        assert_eq!(out.null_count(), 1);
        let err = df
            .column("error")
            .unwrap()
            .str()
            .unwrap()
            .get(2)
            .unwrap()
            .to_string();
        assert!(err.contains("quote is empty"), "{err}");
    }

    #[test]
    fn cosine_errors_name_the_row() {
        let a = Series::new("a".into(), [Series::new("".into(), [1.0, 0.0])]);
        let b = Series::new("b".into(), [Series::new("".into(), [1.0, 0.0, 0.0])]);
        let err = embedding_cosine(&a, &b).unwrap_err().to_string();
        assert!(err.contains("row 0"), "{err}");
    }
}
