//! Input files read whole (configs, judge cards, gates, model files, corpus documents): only
//! regular files, and only up to a size limit that names itself.
//!
//! Opening a FIFO blocks until a writer comes, and reading `/dev/zero` never ends: a path given
//! by a user is checked (links followed) before it is opened, and read through a cap, so that a
//! special file or an oversized one is an error naming the file, what it is and the limit, not a
//! hang or an exhausted memory.
//!
//! ```
//! use polars_rag::files::read_text;
//! let e = read_text(std::path::Path::new("/dev/zero"), "config", 1 << 20).unwrap_err().to_string();
//! assert!(e.contains("/dev/zero") && e.contains("not a regular file"), "{e}");
//! ```

use std::io::Read;
use std::path::Path;

/// Mebibytes, for the limits below.
pub const MIB: u64 = 1 << 20;

/// The most bytes of a TOML config, judge card or gates file.
pub const CONFIG_LIMIT: u64 = 16 * MIB;

/// The bytes of the regular file `path` (a `what`: "config", "judge card", ...), at most
/// `limit` of them; an input error naming the file otherwise.
pub fn read_bytes(path: &Path, what: &str, limit: u64) -> crate::Result<Vec<u8>> {
    checked_bytes(path, what, limit).map_err(crate::Error::input)
}

/// The metadata of `path` (a `what`) when it is a regular file (links followed); an input error
/// naming the file otherwise. Checked before a file is opened, since opening a FIFO blocks
/// until a writer comes.
pub fn regular_file(path: &Path, what: &str) -> crate::Result<std::fs::Metadata> {
    regular_metadata(path, what).map_err(crate::Error::input)
}

fn regular_metadata(path: &Path, what: &str) -> Result<std::fs::Metadata, String> {
    let shown = path.display();
    let metadata =
        std::fs::metadata(path).map_err(|e| format!("cannot read {what} {shown}: {e}"))?;
    if !metadata.is_file() {
        let kind = if metadata.is_dir() {
            "a directory"
        } else {
            "a FIFO, socket or device"
        };
        return Err(format!(
            "{what} {shown} is not a regular file ({kind}); give the path of a file"
        ));
    }
    Ok(metadata)
}

fn checked_bytes(path: &Path, what: &str, limit: u64) -> Result<Vec<u8>, String> {
    let shown = path.display();
    let metadata = regular_metadata(path, what)?;
    if metadata.len() > limit {
        return Err(too_large(path, what, metadata.len(), limit));
    }
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {what} {shown}: {e}"))?;
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    // The cap holds even if the file grows while it is read.
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {what} {shown}: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(path, what, bytes.len() as u64, limit));
    }
    Ok(bytes)
}

/// [`read_bytes`] as UTF-8 text.
pub fn read_text(path: &Path, what: &str, limit: u64) -> crate::Result<String> {
    String::from_utf8(read_bytes(path, what, limit)?).map_err(|e| {
        crate::Error::input(format!("{what} {} is not UTF-8 text: {e}", path.display()))
    })
}

fn too_large(path: &Path, what: &str, size: u64, limit: u64) -> String {
    format!(
        "{what} {} is {size} bytes, more than the {} MiB a {what} may have",
        path.display(),
        limit / MIB
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_and_oversized_files_are_named() {
        let dir = std::env::temp_dir().join(format!("polars-rag-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let e = read_text(&dir, "config", MIB).unwrap_err().to_string();
        assert!(e.contains("a directory"), "{e}");
        let big = dir.join("big.toml");
        std::fs::write(&big, vec![b'#'; 2048]).unwrap();
        let e = read_text(&big, "config", 1024).unwrap_err().to_string();
        assert!(e.contains("big.toml") && e.contains("2048 bytes"), "{e}");
        assert_eq!(read_text(&big, "config", 4096).unwrap().len(), 2048);
        let e = read_text(&dir.join("missing.toml"), "config", MIB)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("cannot read config"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
