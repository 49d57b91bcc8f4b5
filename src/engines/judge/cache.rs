//! The judge's persistent reply cache: one SQLite file (`judge-cache.sqlite3`) in the cache
//! directory, in WAL mode with a busy timeout, so several processes (two CLI runs, a notebook and
//! a CLI run) can share it: readers never block, writers queue. A reply is stored once it has
//! passed schema validation, the moment it arrives, so an interrupted run resumes from what it
//! had; failures are never stored, so a re-run retries them.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{params, Connection, OptionalExtension};

use crate::engines::sqlite::{open_store, store_bytes, store_error};

/// The file name of the cache inside its directory.
pub const CACHE_FILE: &str = "judge-cache.sqlite3";

/// A cached reply: the validated JSON object and the tokens the call cost.
#[derive(Clone, Debug, PartialEq)]
pub struct CachedReply {
    /// The reply as JSON text.
    pub reply: String,
    /// Prompt tokens of the call that produced it.
    pub prompt_tokens: u64,
    /// Completion tokens of the call that produced it.
    pub completion_tokens: u64,
}

/// An open reply cache.
pub struct ReplyCache {
    connection: Mutex<Connection>,
    path: PathBuf,
}

fn sqlite_error(path: &Path, e: impl std::fmt::Display) -> crate::Error {
    store_error("judge cache", path, e)
}

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS replies (
             key TEXT PRIMARY KEY,
             template TEXT NOT NULL,
             model TEXT NOT NULL,
             reply TEXT NOT NULL,
             prompt_tokens INTEGER NOT NULL,
             completion_tokens INTEGER NOT NULL,
             created REAL NOT NULL
         ) WITHOUT ROWID;";

fn open_connection(path: &Path) -> crate::Result<Connection> {
    open_store("judge cache", path, SCHEMA)
}

/// Writes a consistent copy of the cache in `directory` to `to` (a directory; the file keeps
/// its name), for carrying a node's replies elsewhere; `false` when `directory` has none.
pub fn export_cache(directory: &Path, to: &Path) -> crate::Result<bool> {
    crate::engines::sqlite::snapshot_store(
        "judge cache",
        &directory.join(CACHE_FILE),
        SCHEMA,
        &to.join(CACHE_FILE),
    )
}

/// Adds the replies of the cache in `from` (a directory, e.g. an [`export_cache`] copy) that
/// the cache in `directory` lacks; returns how many were added, and how many
/// were refused for a value of the wrong type.
pub fn merge_cache(directory: &Path, from: &Path) -> crate::Result<crate::engines::Merged> {
    crate::engines::sqlite::merge_store(
        "judge cache",
        &directory.join(CACHE_FILE),
        SCHEMA,
        &from.join(CACHE_FILE),
        "replies",
    )
}

impl ReplyCache {
    /// Opens (creating it when needed) the cache in `directory`.
    pub fn open(directory: &Path) -> crate::Result<Self> {
        std::fs::create_dir_all(directory).map_err(|e| sqlite_error(directory, e))?;
        let path = directory.join(CACHE_FILE);
        let connection = open_connection(&path)?;
        Ok(ReplyCache {
            connection: Mutex::new(connection),
            path,
        })
    }

    /// The replies cached under `keys`, in order (`None` for a miss).
    ///
    /// Keys are looked up in sorted order: each lookup then descends the primary-key B-tree next
    /// to the previous one, so its pages are already in memory (random order touches a cold page
    /// per key once the file outgrows the page cache). A long list is split into one sorted run
    /// per core, each read in its own transaction on its own connection (WAL readers do not
    /// block each other).
    pub fn get_many(&self, keys: &[&str]) -> crate::Result<Vec<Option<CachedReply>>> {
        use rayon::prelude::*;
        const PER_READER: usize = 50_000;
        let mut order: Vec<usize> = (0..keys.len()).collect();
        order.par_sort_unstable_by_key(|&i| keys[i]);
        let readers = rayon::current_num_threads()
            .min(keys.len().div_ceil(PER_READER))
            .max(1);
        let runs: Vec<&[usize]> = order.chunks(order.len().div_ceil(readers).max(1)).collect();
        let found: Vec<Vec<(usize, Option<CachedReply>)>> = if runs.len() <= 1 {
            let mut connection = self.connection.lock().unwrap_or_else(|p| p.into_inner());
            vec![self.read_run(&mut connection, keys, &order)?]
        } else {
            runs.par_iter()
                .map(|run| {
                    let mut connection = open_connection(&self.path)?;
                    self.read_run(&mut connection, keys, run)
                })
                .collect::<crate::Result<_>>()?
        };
        let mut replies: Vec<Option<CachedReply>> = vec![None; keys.len()];
        for (i, reply) in found.into_iter().flatten() {
            replies[i] = reply;
        }
        Ok(replies)
    }

    /// Reads the keys at positions `run` (sorted by key) in one transaction of `connection`.
    fn read_run(
        &self,
        connection: &mut Connection,
        keys: &[&str],
        run: &[usize],
    ) -> crate::Result<Vec<(usize, Option<CachedReply>)>> {
        let transaction = connection
            .transaction()
            .map_err(|e| sqlite_error(&self.path, e))?;
        let mut found = Vec::with_capacity(run.len());
        {
            let mut statement = transaction
                .prepare_cached(
                    "SELECT reply, prompt_tokens, completion_tokens FROM replies WHERE key = ?1",
                )
                .map_err(|e| sqlite_error(&self.path, e))?;
            for &i in run {
                let row = statement
                    .query_row(params![keys[i]], |row| {
                        // An entry of the wrong storage class (bytes where the reply's text
                        // belongs) is a miss, asked again, not an error of the whole job.
                        let reply = row.get_ref(0)?.as_str().ok().map(str::to_string);
                        let tokens = |at: usize| -> rusqlite::Result<Option<u64>> {
                            Ok(row.get_ref(at)?.as_i64().ok().map(|n| n.max(0) as u64))
                        };
                        Ok(match (reply, tokens(1)?, tokens(2)?) {
                            (Some(reply), Some(prompt_tokens), Some(completion_tokens)) => {
                                Some(CachedReply {
                                    reply,
                                    prompt_tokens,
                                    completion_tokens,
                                })
                            }
                            _ => None,
                        })
                    })
                    .optional()
                    .map_err(|e| sqlite_error(&self.path, e))?;
                found.push((i, row.flatten()));
            }
        }
        transaction
            .commit()
            .map_err(|e| sqlite_error(&self.path, e))?;
        Ok(found)
    }

    /// Stores a validated reply.
    pub fn put(
        &self,
        key: &str,
        template: &str,
        model: &str,
        reply: &CachedReply,
    ) -> crate::Result<()> {
        let connection = self.connection.lock().unwrap_or_else(|p| p.into_inner());
        let created = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        connection
            .prepare_cached(
                "INSERT OR REPLACE INTO replies
                 (key, template, model, reply, prompt_tokens, completion_tokens, created)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )
            .and_then(|mut statement| {
                statement.execute(params![
                    key,
                    template,
                    model,
                    reply.reply,
                    reply.prompt_tokens as i64,
                    reply.completion_tokens as i64,
                    created
                ])
            })
            .map_err(|e| sqlite_error(&self.path, e))?;
        Ok(())
    }
}

/// What a cache directory holds.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct CacheStats {
    /// The cache file.
    pub path: String,
    /// Cached replies in all.
    pub entries: u64,
    /// Size of the file (and its write-ahead log) in bytes.
    pub bytes: u64,
    /// Cached replies per (template, model).
    pub by_template: Vec<(String, String, u64)>,
}

/// The contents of the cache in `directory` (zero entries when it has none yet).
pub fn cache_stats(directory: &Path) -> crate::Result<CacheStats> {
    let path = directory.join(CACHE_FILE);
    if !path.exists() {
        return Ok(CacheStats {
            path: path.display().to_string(),
            ..CacheStats::default()
        });
    }
    let connection = open_connection(&path)?;
    let mut statement = connection
        .prepare("SELECT template, model, COUNT(*) FROM replies GROUP BY template, model ORDER BY template, model")
        .map_err(|e| sqlite_error(&path, e))?;
    let by_template = statement
        .query_map([], |row| {
            Ok((
                row.get(0)?,
                row.get(1)?,
                row.get::<_, i64>(2)?.max(0) as u64,
            ))
        })
        .and_then(|rows| rows.collect::<Result<Vec<(String, String, u64)>, _>>())
        .map_err(|e| sqlite_error(&path, e))?;
    let bytes = store_bytes(&path);
    Ok(CacheStats {
        path: path.display().to_string(),
        entries: by_template.iter().map(|(_, _, n)| n).sum(),
        bytes,
        by_template,
    })
}

/// Removes cached replies from the cache in `directory`: all of them, or those of one template
/// id. Returns how many were removed.
pub fn clear_cache(directory: &Path, template: Option<&str>) -> crate::Result<u64> {
    let path = directory.join(CACHE_FILE);
    if !path.exists() {
        return Ok(0);
    }
    let connection = open_connection(&path)?;
    let removed = match template {
        Some(id) => connection.execute("DELETE FROM replies WHERE template = ?1", params![id]),
        None => connection.execute("DELETE FROM replies", []),
    }
    .map_err(|e| sqlite_error(&path, e))?;
    connection
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE); VACUUM;")
        .map_err(|e| sqlite_error(&path, e))?;
    Ok(removed as u64)
}
