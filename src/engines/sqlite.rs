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

/// Writes a consistent copy of the store at `path` to `to` (SQLite's `VACUUM INTO`: a snapshot
/// of the committed entries, write-ahead log included, while other processes go on writing).
/// Returns `false` when there is no store at `path`.
pub(crate) fn snapshot_store(
    what: &str,
    path: &Path,
    schema: &str,
    to: &Path,
) -> crate::Result<bool> {
    if !path.is_file() {
        return Ok(false);
    }
    if let Some(folder) = to.parent() {
        std::fs::create_dir_all(folder).map_err(|e| store_error(what, to, e))?;
    }
    // VACUUM INTO refuses an existing file: an earlier snapshot is replaced.
    match std::fs::remove_file(to) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(store_error(what, to, e)),
        _ => {}
    }
    let connection = open_store(what, path, schema)?;
    let target = to
        .to_str()
        .ok_or_else(|| store_error(what, to, "the path is not UTF-8"))?;
    connection
        .execute("VACUUM INTO ?1", [target])
        .map_err(|e| store_error(what, path, e))?;
    Ok(true)
}

/// Adds to the store at `into` (created with `schema` when needed) every row of `table` in the
/// store file `from` whose key it does not hold yet; returns how many rows were added. Entries
/// are keyed by everything that determines them, so an entry present in both is the same entry.
pub(crate) fn merge_store(
    what: &str,
    into: &Path,
    schema: &str,
    from: &Path,
    table: &str,
) -> crate::Result<u64> {
    if !from.is_file() {
        return Err(store_error(what, from, "no such store"));
    }
    if let Some(folder) = into.parent() {
        std::fs::create_dir_all(folder).map_err(|e| store_error(what, into, e))?;
    }
    let connection = open_store(what, into, schema)?;
    let source = from
        .to_str()
        .ok_or_else(|| store_error(what, from, "the path is not UTF-8"))?;
    connection
        .execute("ATTACH DATABASE ?1 AS source", [source])
        .map_err(|e| store_error(what, from, e))?;
    let added = connection
        .execute(
            &format!("INSERT OR IGNORE INTO main.{table} SELECT * FROM source.{table}"),
            [],
        )
        .map_err(|e| store_error(what, from, e));
    let detached = connection
        .execute("DETACH DATABASE source", [])
        .map_err(|e| store_error(what, from, e));
    let added = added?;
    detached?;
    Ok(added as u64)
}
