//! Reading a corpus from disk: a Parquet table (`file`, `text`) or a directory of UTF-8 files
//! whose ids are their paths relative to the root (`/`-separated).

use std::path::Path;

use polars::prelude::*;

use super::plan::{holds_spans, Resolved};
use super::{err, InvalidSpans, ScoreJob};

pub use crate::columnar::corpus::{check_spans, Corpus, SpanUnit};

/// Reads a corpus: a Parquet file with `file` and `text` columns, or a directory whose files
/// (recursively) are the documents.
///
/// In a directory, every path is resolved before it is read: a symbolic link whose target lies
/// outside the corpus root is an error naming the link (a corpus never reads a file it does not
/// contain), and a directory reached twice through links is read once.
pub fn load(path: &Path) -> PolarsResult<Corpus> {
    if !path.is_dir() && !path.is_file() {
        return Err(crate::job::not_found(format!(
            "corpus not found: {}",
            path.display()
        )));
    }
    load_corpus(path).map_err(err)
}

fn load_corpus(path: &Path) -> Result<Corpus, String> {
    if path.is_dir() {
        return Ok(Corpus::from_documents(read_directory(path)?)?);
    }
    if !path.is_file() {
        return Err(format!("corpus not found: {}", path.display()));
    }
    let file = crate::job::parquet::parquet_file(path, "corpus").map_err(|e| e.to_string())?;
    let df = ParquetReader::new(file)
        .finish()
        .map_err(|e| format!("corpus {}: {e}", path.display()))?;
    Corpus::from_frame(&df).map_err(|e| format!("corpus {}: {e}", path.display()))
}

/// The `(id, text)` documents under the directory `root`; see [`load`].
/// The most bytes of one document of a corpus directory (a book is a few MB; a larger file is
/// most likely not a document, and is refused by name rather than read into memory).
const CORPUS_DOCUMENT_LIMIT: u64 = 512 * crate::files::MIB;

fn read_directory(root: &Path) -> Result<Vec<(String, String)>, String> {
    let real_root = root
        .canonicalize()
        .map_err(|e| format!("corpus: cannot read {}: {e}", root.display()))?;
    let mut docs = Vec::new();
    let mut found = Vec::new();
    let mut visited = std::collections::HashSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let real_dir = dir
            .canonicalize()
            .map_err(|e| format!("corpus: cannot read {}: {e}", dir.display()))?;
        if !visited.insert(real_dir) {
            continue;
        }
        let entries = std::fs::read_dir(&dir)
            .map_err(|e| format!("corpus: cannot read {}: {e}", dir.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("corpus: {e}"))?;
            let p = entry.path();
            let real = p
                .canonicalize()
                .map_err(|e| format!("corpus: cannot resolve {}: {e}", p.display()))?;
            if !real.starts_with(&real_root) {
                return Err(format!(
                    "corpus: {} is a link to {}, outside the corpus root {}; it is not read",
                    p.display(),
                    real.display(),
                    root.display()
                ));
            }
            if real.is_dir() {
                stack.push(p);
            } else if real.is_file() {
                let rel = p.strip_prefix(root).map_err(|e| e.to_string())?;
                let id = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
                found.push((id, p, real));
            }
        }
    }
    refuse_outside_hard_links(root, &found)?;
    for (id, _, real) in found {
        let text = crate::files::read_text(&real, "corpus document", CORPUS_DOCUMENT_LIMIT)
            .map_err(|e| format!("corpus: {e}"))?;
        docs.push((id, text));
    }
    Ok(docs)
}

/// A hard link is the file itself, so resolving paths cannot tell that one is shared with a
/// file outside the root (`ln /etc/shadow corpus/doc.txt` reads `/etc/shadow`). A document
/// whose link count exceeds the links to it found inside the root is refused by name; hard
/// links among the corpus's own files are read.
#[cfg(unix)]
fn refuse_outside_hard_links(
    root: &Path,
    found: &[(String, std::path::PathBuf, std::path::PathBuf)],
) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let mut inside: std::collections::HashMap<(u64, u64), u64> = Default::default();
    let mut distinct = std::collections::HashSet::new();
    let mut files = Vec::with_capacity(found.len());
    for (_, path, real) in found {
        let metadata = std::fs::metadata(real)
            .map_err(|e| format!("corpus: cannot read {}: {e}", path.display()))?;
        let inode = (metadata.dev(), metadata.ino());
        // A file reached through several symbolic links inside the root is one link.
        if distinct.insert(real) {
            *inside.entry(inode).or_default() += 1;
        }
        files.push((path, inode, metadata.nlink()));
    }
    for (path, inode, links) in files {
        let within = inside.get(&inode).copied().unwrap_or(0);
        if links > within {
            return Err(format!(
                "corpus: {} is a hard link with {links} names, {within} of them inside the corpus root {}; \
                 a file shared with a place outside the root is not read (copy it into the corpus instead)",
                path.display(),
                root.display()
            ));
        }
    }
    Ok(())
}

#[cfg(not(unix))]
fn refuse_outside_hard_links(
    _root: &Path,
    _found: &[(String, std::path::PathBuf, std::path::PathBuf)],
) -> Result<(), String> {
    Ok(())
}

/// What checking spans against the corpus found, summed over the batches of a job.
#[derive(Default)]
pub(crate) struct CorpusTally {
    /// Per span column: spans whose stored text differs from the corpus, and a first example.
    pub(crate) text_mismatches: Vec<(String, usize, String)>,
    /// Queries whose spans do not fit the corpus (scored null).
    pub(crate) bad_queries: usize,
}

impl CorpusTally {
    /// The summary's notes on the corpus.
    pub(crate) fn notes(&self, job: &ScoreJob, corpus: &Corpus) -> Vec<String> {
        let Some(path) = &job.corpus else {
            return Vec::new();
        };
        let mut notes: Vec<String> = self
            .text_mismatches
            .iter()
            .map(|(name, n, example)| {
                format!("{name}: {n} spans' stored text differs from the corpus (e.g. {example})")
            })
            .collect();
        notes.push(format!(
            "corpus {}: {} documents; spans checked{}",
            path.display(),
            corpus.len(),
            if job.unit == SpanUnit::Bytes {
                " and converted from bytes to code points"
            } else {
                ""
            }
        ));
        if self.bad_queries > 0 {
            notes.push(format!(
                "{} queries have spans that do not fit the corpus: their span-based metrics are null (see span_issues)",
                self.bad_queries
            ));
        }
        notes
    }
}

/// Checks the span columns against the corpus (converting byte offsets, filling retrieved
/// texts); on a bad span, stops or nulls that row's spans as the job says. With
/// `--invalid-spans null` the frame always gets `span_issues` (null where a row's spans fit), so
/// every batch of a job has the same columns.
pub(crate) fn apply_corpus(
    job: &ScoreJob,
    corpus: Option<&Corpus>,
    frame: DataFrame,
    id: &str,
    resolved: &Resolved,
    tally: &mut CorpusTally,
) -> PolarsResult<DataFrame> {
    let (Some(path), Some(corpus)) = (&job.corpus, corpus) else {
        return Ok(frame);
    };
    let schema = frame.schema().clone();
    let mut frame = frame;
    let mut span_columns: Vec<(&str, bool)> = Vec::new();
    if let Some(r) = resolved
        .retrieved
        .as_deref()
        .filter(|r| holds_spans(&schema, r))
    {
        span_columns.push((r, true));
    }
    if let Some(g) = resolved.spans.as_deref() {
        span_columns.push((g, false));
    }
    let mut bad_rows: std::collections::BTreeMap<usize, Vec<String>> = Default::default();
    for (name, fill) in span_columns {
        let checked = check_spans(&frame, id, name, corpus, job.unit, fill)?;
        if let Some(first) = checked.text_mismatches.first() {
            match tally.text_mismatches.iter_mut().find(|(n, ..)| n == name) {
                Some(entry) => entry.1 += checked.text_mismatches.len(),
                None => tally.text_mismatches.push((
                    name.to_string(),
                    checked.text_mismatches.len(),
                    first.to_string(),
                )),
            }
        }
        if !checked.issues.is_empty() && job.invalid_spans == InvalidSpans::Error {
            let shown: Vec<String> = checked
                .issues
                .iter()
                .take(5)
                .map(|i| i.to_string())
                .collect();
            return Err(err(format!(
                "{name}: {} spans do not fit the corpus {} ({}); set `invalid_spans` to \"null\" to score those queries' span metrics as null",
                checked.issues.len(),
                path.display(),
                shown.join("; ")
            )));
        }
        for issue in &checked.issues {
            bad_rows
                .entry(issue.row)
                .or_default()
                .push(format!("{name}: {issue}"));
        }
        frame.with_column(checked.column.into_column())?;
    }
    tally.bad_queries += bad_rows.len();
    if !bad_rows.is_empty() {
        let valid: BooleanChunked = (0..frame.height())
            .map(|row| Some(!bad_rows.contains_key(&row)))
            .collect();
        let mut exprs: Vec<Expr> = Vec::new();
        for name in [resolved.retrieved.as_deref(), resolved.spans.as_deref()]
            .into_iter()
            .flatten()
        {
            exprs.push(
                when(col("__span_ok"))
                    .then(col(name))
                    .otherwise(lit(NULL).cast(schema.get(name).cloned().unwrap_or(DataType::Null)))
                    .alias(name),
            );
        }
        frame = frame
            .hstack(&[valid.with_name("__span_ok".into()).into_column()])?
            .lazy()
            .with_columns(exprs)
            .collect()?
            .drop("__span_ok")?;
    }
    if job.invalid_spans == InvalidSpans::Null {
        let reasons: StringChunked = (0..frame.height())
            .map(|row| bad_rows.get(&row).map(|r| r.join("; ")))
            .collect();
        frame.with_column(reasons.with_name("span_issues".into()).into_column())?;
    }
    Ok(frame)
}
