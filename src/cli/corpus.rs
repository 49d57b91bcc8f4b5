//! Reading a corpus from disk: a Parquet table (`file`, `text`) or a directory of UTF-8 files
//! whose ids are their paths relative to the root (`/`-separated).

use std::path::Path;

use polars::prelude::*;

pub use crate::polars::corpus::{check_spans, Corpus, SpanUnit};

/// Reads a corpus: a Parquet file with `file` and `text` columns, or a directory whose files
/// (recursively) are the documents.
///
/// In a directory, every path is resolved before it is read: a symbolic link whose target lies
/// outside the corpus root is an error naming the link (a corpus never reads a file it does not
/// contain), and a directory reached twice through links is read once.
pub fn load(path: &Path) -> Result<Corpus, String> {
    if path.is_dir() {
        return Ok(Corpus::from_documents(read_directory(path)?)?);
    }
    if !path.is_file() {
        return Err(format!("corpus not found: {}", path.display()));
    }
    let file = super::parquet_file(path, "corpus").map_err(|e| e.to_string())?;
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
