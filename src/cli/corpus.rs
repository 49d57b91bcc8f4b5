//! Reading a corpus from disk: a Parquet table (`file`, `text`) or a directory of UTF-8 files
//! whose ids are their paths relative to the root (`/`-separated).

use std::path::Path;

use polars::prelude::*;

pub use crate::polars::corpus::{check_spans, CheckedSpans, Corpus, SpanIssue, SpanUnit};

/// Reads a corpus: a Parquet file with `file` and `text` columns, or a directory whose files
/// (recursively) are the documents.
pub fn load(path: &Path) -> Result<Corpus, String> {
    if path.is_dir() {
        let mut docs = Vec::new();
        let mut stack = vec![path.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let entries = std::fs::read_dir(&dir)
                .map_err(|e| format!("corpus: cannot read {}: {e}", dir.display()))?;
            for entry in entries {
                let entry = entry.map_err(|e| format!("corpus: {e}"))?;
                let p = entry.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.is_file() {
                    let rel = p.strip_prefix(path).map_err(|e| e.to_string())?;
                    let id = rel
                        .components()
                        .map(|c| c.as_os_str().to_string_lossy())
                        .collect::<Vec<_>>()
                        .join("/");
                    let text = std::fs::read_to_string(&p)
                        .map_err(|e| format!("corpus: {} is not UTF-8 text: {e}", p.display()))?;
                    docs.push((id, text));
                }
            }
        }
        return Corpus::from_documents(docs);
    }
    if !path.is_file() {
        return Err(format!("corpus not found: {}", path.display()));
    }
    let file = std::fs::File::open(path)
        .map_err(|e| format!("corpus: cannot open {}: {e}", path.display()))?;
    let df = ParquetReader::new(file)
        .finish()
        .map_err(|e| format!("corpus {}: {e}", path.display()))?;
    Corpus::from_frame(&df).map_err(|e| format!("corpus {}: {e}", path.display()))
}
