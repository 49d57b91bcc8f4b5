//! The engines' persistent stores (the judge's replies, embedding vectors): SQLite files in WAL
//! mode with a long busy timeout, so several processes can share one (readers never block,
//! writers queue).

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension};

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
    // Switching a new file to WAL and creating its tables can be refused at once ("database is
    // locked", without the busy handler) while other processes open the same new file: retried
    // for as long as the busy timeout.
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    let mut pause = Duration::from_millis(10);
    loop {
        let connection = Connection::open(path).map_err(|e| store_error(what, path, e))?;
        connection
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| store_error(what, path, e))?;
        match connection.execute_batch(&format!(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = NORMAL;
             PRAGMA mmap_size = 1073741824;
             PRAGMA cache_size = -65536;
             {schema}"
        )) {
            Ok(()) => return Ok(connection),
            Err(e) if is_busy(&e) && std::time::Instant::now() < deadline => {
                drop(connection);
                crate::engines::interrupt::sleep(pause).map_err(|i| store_error(what, path, i))?;
                pause = (pause * 2).min(Duration::from_millis(500));
            }
            Err(e) => return Err(store_error(what, path, e)),
        }
    }
}

/// How long a store waits for another process's lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(120);

/// Whether `e` is SQLite's "database is busy / locked".
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
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

/// Whether the store at `path` has a table `table` (read-only: the file is not changed).
pub(crate) fn has_table(path: &Path, table: &str) -> rusqlite::Result<bool> {
    let connection = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    connection
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [table],
            |_| Ok(()),
        )
        .optional()
        .map(|found| found.is_some())
}

/// What a merge did: rows added, and rows of the source refused because a column held a value
/// of the wrong type (a later run could not read them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Merged {
    /// Rows the store did not hold and now does.
    pub added: u64,
    /// Rows of the source left out: a value of a type its column does not take.
    pub refused: u64,
}

/// The columns of `table` in `schema` of `connection` (`main` or an attached name), with the
/// storage classes SQLite may hold for each: `(name, ["text"])`, `(name, ["integer"])`,
/// `(name, ["real", "integer"])`, `(name, ["blob"])`.
fn typed_columns(
    connection: &Connection,
    schema: &str,
    table: &str,
) -> rusqlite::Result<Vec<(String, &'static [&'static str])>> {
    let mut statement = connection.prepare(&format!("PRAGMA {schema}.table_info({table})"))?;
    let rows = statement.query_map([], |row| {
        let name: String = row.get(1)?;
        let declared: String = row.get(2)?;
        let classes: &'static [&'static str] = match declared.to_ascii_uppercase().as_str() {
            "TEXT" => &["text"],
            "INTEGER" => &["integer"],
            "REAL" => &["real", "integer"],
            "BLOB" => &["blob"],
            _ => &["text", "integer", "real", "blob"],
        };
        Ok((name, classes))
    })?;
    rows.collect()
}

/// Adds to the store at `into` (created with `schema` when needed) every row of `table` in the
/// store file `from` whose key it does not hold yet.
///
/// Columns are matched by name, never by position, and only a table is read (a view in a
/// hostile file could run forever); a source row with a value of the wrong type in any column
/// is refused and counted, not copied. Entries are keyed by everything that determines them,
/// so an entry present in both is the same entry.
pub(crate) fn merge_store(
    what: &str,
    into: &Path,
    schema: &str,
    from: &Path,
    table: &str,
) -> crate::Result<Merged> {
    if !from.is_file() {
        return Err(store_error(
            what,
            from,
            "no such store (or not a regular file)",
        ));
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
    let merged = merge_attached(&connection, table).map_err(|e| store_error(what, from, e));
    let detached = connection
        .execute("DETACH DATABASE source", [])
        .map_err(|e| store_error(what, from, e));
    let merged = merged?;
    detached?;
    Ok(merged)
}

/// Whether `table` of `schema` (`main` or an attached name) of `connection` is a table with
/// every column `wanted` names; an error saying what it is otherwise (for the store `what`, e.g.
/// "a cache copy"). Only `sqlite_master` and the table's own declaration are read: a view or
/// trigger of a hostile file, which could run forever, never is.
pub(crate) fn check_table(
    connection: &Connection,
    schema: &str,
    table: &str,
    wanted: &[&str],
    what: &str,
) -> Result<(), String> {
    let kind: Option<String> = connection
        .query_row(
            &format!("SELECT type FROM {schema}.sqlite_master WHERE name = ?1"),
            [table],
            |row| row.get(0),
        )
        .optional()
        .map_err(|e| e.to_string())?;
    match kind.as_deref() {
        Some("table") => {}
        Some(other) => {
            return Err(format!(
                "`{table}` is a {other} there, not a table; this is not {what}"
            ));
        }
        None => return Err(format!("it has no `{table}` table; this is not {what}")),
    }
    let present: Vec<String> = typed_columns(connection, schema, table)
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    let missing: Vec<&str> = wanted
        .iter()
        .copied()
        .filter(|name| !present.iter().any(|p| p == name))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "its `{table}` table lacks the column(s) {}; this is not {what} of this version",
            missing.join(", ")
        ));
    }
    Ok(())
}

fn merge_attached(connection: &Connection, table: &str) -> Result<Merged, String> {
    let wanted = typed_columns(connection, "main", table).map_err(|e| e.to_string())?;
    let wanted_names: Vec<&str> = wanted.iter().map(|(name, _)| name.as_str()).collect();
    check_table(connection, "source", table, &wanted_names, "a cache copy")?;
    let names: Vec<String> = wanted
        .iter()
        .map(|(name, _)| format!("\"{name}\""))
        .collect();
    let readable = wanted
        .iter()
        .zip(&names)
        .map(|((_, classes), quoted)| {
            let classes: Vec<String> = classes.iter().map(|c| format!("'{c}'")).collect();
            format!("typeof({quoted}) IN ({})", classes.join(", "))
        })
        .collect::<Vec<_>>()
        .join(" AND ");
    let columns = names.join(", ");
    let added = connection
        .execute(
            &format!(
                "INSERT OR IGNORE INTO main.{table} ({columns}) SELECT {columns} FROM source.{table} WHERE {readable}"
            ),
            [],
        )
        .map_err(|e| e.to_string())?;
    let refused: i64 = connection
        .query_row(
            &format!("SELECT COUNT(*) FROM source.{table} WHERE NOT ({readable})"),
            [],
            |row| row.get(0),
        )
        .map_err(|e| e.to_string())?;
    Ok(Merged {
        added: added as u64,
        refused: refused.max(0) as u64,
    })
}
