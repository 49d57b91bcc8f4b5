//! The engines' persistent stores (the judge's replies, embedding vectors): SQLite files in WAL
//! mode with a long busy timeout, so several processes can share one (readers never block,
//! writers queue).

use std::path::Path;
use std::time::Duration;

use rusqlite::Connection;

/// An error of the store `what` (`judge cache`, `embedding cache`) at `path`.
pub(crate) fn store_error(what: &str, path: &Path, e: impl std::fmt::Display) -> crate::Error {
    crate::Error::new(
        crate::ErrorKind::Engine,
        format!("{what} {}: {e}", path.display()),
    )
}

/// Opens (creating it when needed) the SQLite file at `path` in WAL mode and runs `schema`.
///
/// Reads go through a memory map (up to 1 GiB of the file) and a 64 MiB page cache: a fully
/// cached column reads one entry per row, and with `pread` into SQLite's default 2 MiB cache,
/// copying pages out of the kernel was a sixth of a cached row's cost.
pub(crate) fn open_store(what: &str, path: &Path, schema: &str) -> crate::Result<Connection> {
    let connection = Connection::open(path).map_err(|e| store_error(what, path, e))?;
    connection
        .busy_timeout(Duration::from_secs(120))
        .map_err(|e| store_error(what, path, e))?;
    connection
        .execute_batch(&format!(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = NORMAL;
             PRAGMA mmap_size = 1073741824;
             PRAGMA cache_size = -65536;
             {schema}"
        ))
        .map_err(|e| store_error(what, path, e))?;
    Ok(connection)
}

/// The size of a store file and its write-ahead log, in bytes.
pub(crate) fn store_bytes(path: &Path) -> u64 {
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    size(path) + size(Path::new(&wal))
}
