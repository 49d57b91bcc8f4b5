//! The judge's persistent reply cache: one SQLite file (`judge-cache.sqlite3`) in the cache
//! directory, in WAL mode with a busy timeout, so several processes (two CLI runs, a notebook and
//! a CLI run) can share it: readers never block, writers queue. A reply is stored once it has
//! passed schema validation, the moment it arrives, so an interrupted run resumes from what it
//! had; failures are never stored, so a re-run retries them.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{params, Connection, OptionalExtension};

use crate::engines::sqlite::{check_table, open_store, store_bytes, store_error};

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

/// `replies`: what the cache serves. `calls`: what each reply was asked with, for the judge log
/// (a table of its own, so a cache written before it existed still serves and merges).
const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS replies (
             key TEXT PRIMARY KEY,
             template TEXT NOT NULL,
             model TEXT NOT NULL,
             reply TEXT NOT NULL,
             prompt_tokens INTEGER NOT NULL,
             completion_tokens INTEGER NOT NULL,
             created REAL NOT NULL
         ) WITHOUT ROWID;
         CREATE TABLE IF NOT EXISTS calls (
             key TEXT PRIMARY KEY,
             template_hash TEXT NOT NULL,
             base_url TEXT NOT NULL,
             sample INTEGER NOT NULL,
             messages TEXT NOT NULL,
             latency_ms REAL NOT NULL
         ) WITHOUT ROWID;";

/// How a cached reply was obtained: the request's prompt version, the server (its URL with any
/// credentials removed), the sample number, the messages sent (a JSON array of `{role,
/// content}`, a re-ask included) and the time from the first request to the valid reply. Never
/// the API key, which is not part of any of these.
#[derive(Clone, Debug, PartialEq)]
pub struct CallRecord {
    /// The prompt's hash (`JudgeTemplate::prompt_hash`).
    pub template_hash: String,
    /// The server's base URL, credentials redacted.
    pub base_url: String,
    /// The sample number of a repeated judgement (0 for the first).
    pub sample: u32,
    /// The messages sent, as a JSON array of `{"role", "content"}` objects.
    pub messages: String,
    /// Milliseconds from the first request to the valid reply (retries and a re-ask included).
    pub latency_ms: f64,
}

/// One row of the judge log: a cached reply, and how it was obtained when the cache recorded
/// it (`None` for replies cached before calls were recorded).
#[derive(Clone, Debug, PartialEq)]
pub struct LoggedCall {
    /// The cache key (a hash of everything that determines the reply).
    pub key: String,
    /// The prompt's id.
    pub template: String,
    /// The model.
    pub model: String,
    /// The validated reply, as JSON text.
    pub reply: String,
    /// Prompt tokens spent.
    pub prompt_tokens: u64,
    /// Completion tokens spent.
    pub completion_tokens: u64,
    /// When the reply was stored (seconds since the Unix epoch).
    pub created: f64,
    /// How it was obtained.
    pub call: Option<CallRecord>,
}

/// The columns of the tables of [`SCHEMA`], for checking a file before reading it.
const TABLES: [(&str, &[&str]); 2] = [
    (
        "replies",
        &[
            "key",
            "template",
            "model",
            "reply",
            "prompt_tokens",
            "completion_tokens",
            "created",
        ],
    ),
    (
        "calls",
        &[
            "key",
            "template_hash",
            "base_url",
            "sample",
            "messages",
            "latency_ms",
        ],
    ),
];

/// Opens the cache file at `path` (creating its tables when needed) once it is known to hold
/// the cache's tables: a file whose `replies` or `calls` is a view (which a query could run
/// forever, a recursive one) or lacks a column is refused with an error naming the file and
/// the table, as `judge-cache merge` refuses such a copy.
fn open_connection(path: &Path) -> crate::Result<Connection> {
    let connection = open_store("judge cache", path, SCHEMA)?;
    for (table, columns) in TABLES {
        check_table(&connection, "main", table, columns, "a judge cache")
            .map_err(|e| sqlite_error(path, e))?;
    }
    Ok(connection)
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
    let (into, source) = (directory.join(CACHE_FILE), from.join(CACHE_FILE));
    let merged =
        crate::engines::sqlite::merge_store("judge cache", &into, SCHEMA, &source, "replies")?;
    // The calls of the replies, when the copy recorded them (a copy from before the log has no
    // `calls` table: its replies merge all the same).
    if crate::engines::sqlite::has_table(&source, "calls").map_err(|e| sqlite_error(&source, e))? {
        crate::engines::sqlite::merge_store("judge cache", &into, SCHEMA, &source, "calls")?;
    }
    Ok(merged)
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

    /// Stores a validated reply, with how it was obtained when `call` is given, unless the cache
    /// already holds a reply to the same request (see [`ReplyCache::store`]).
    pub fn put(
        &self,
        key: &str,
        template: &str,
        model: &str,
        reply: &CachedReply,
        call: Option<&CallRecord>,
    ) -> crate::Result<()> {
        self.store(key, template, model, reply, call, &|_| true)
            .map(drop)
    }

    /// Stores a validated reply, with how it was obtained when `call` is given (in one
    /// transaction: the log never names a reply the cache lacks), and returns the reply the
    /// cache holds for `key` afterwards.
    ///
    /// The first reply stored wins: when the cache already holds one that `usable` accepts
    /// (another run, or another process, asked the same request meanwhile), it is kept and
    /// returned, and `reply` is not written. Every run then returns what a re-run reads from
    /// the cache, however the runs interleave. A stored reply `usable` refuses (an entry
    /// edited by hand, a value of the wrong type) is replaced.
    pub fn store(
        &self,
        key: &str,
        template: &str,
        model: &str,
        reply: &CachedReply,
        call: Option<&CallRecord>,
        usable: &dyn Fn(&str) -> bool,
    ) -> crate::Result<CachedReply> {
        let mut connection = self.connection.lock().unwrap_or_else(|p| p.into_inner());
        let created = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        let written =
            (|| -> rusqlite::Result<CachedReply> {
                // Immediate: the read below and the write after it are one step for every other
                // writer (a deferred transaction would let two runs both see no reply).
                let transaction = connection
                    .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let held = transaction
                .prepare_cached(
                    "SELECT reply, prompt_tokens, completion_tokens FROM replies WHERE key = ?1",
                )?
                .query_row(params![key], |row| {
                    let reply = row.get_ref(0)?.as_str().ok().map(str::to_string);
                    let tokens = |at: usize| -> rusqlite::Result<u64> {
                        Ok(row.get_ref(at)?.as_i64().map(|n| n.max(0) as u64).unwrap_or(0))
                    };
                    Ok(reply.map(|reply| CachedReply {
                        reply,
                        prompt_tokens: tokens(1).unwrap_or(0),
                        completion_tokens: tokens(2).unwrap_or(0),
                    }))
                })
                .optional()?
                .flatten()
                .filter(|held| usable(&held.reply));
                if let Some(held) = held {
                    transaction.commit()?;
                    return Ok(held);
                }
                transaction
                    .prepare_cached(
                        "INSERT OR REPLACE INTO replies
                     (key, template, model, reply, prompt_tokens, completion_tokens, created)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    )?
                    .execute(params![
                        key,
                        template,
                        model,
                        reply.reply,
                        reply.prompt_tokens as i64,
                        reply.completion_tokens as i64,
                        created
                    ])?;
                if let Some(call) = call {
                    transaction
                        .prepare_cached(
                            "INSERT OR REPLACE INTO calls
                         (key, template_hash, base_url, sample, messages, latency_ms)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                        )?
                        .execute(params![
                            key,
                            call.template_hash,
                            call.base_url,
                            call.sample,
                            call.messages,
                            call.latency_ms
                        ])?;
                }
                transaction.commit()?;
                Ok(reply.clone())
            })();
        written.map_err(|e| sqlite_error(&self.path, e))
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

/// The judge log of the cache in `directory`: every cached reply with how it was obtained, in
/// the order they were stored; only those of prompt `template` when given. Empty when the
/// directory has no cache.
pub fn judge_log(directory: &Path, template: Option<&str>) -> crate::Result<Vec<LoggedCall>> {
    let path = directory.join(CACHE_FILE);
    if !path.exists() {
        return Ok(Vec::new());
    }
    let connection = open_connection(&path)?;
    let mut statement = connection
        .prepare(
            "SELECT r.key, r.template, r.model, r.reply, r.prompt_tokens, r.completion_tokens,
                    r.created, c.template_hash, c.base_url, c.sample, c.messages, c.latency_ms
             FROM replies r LEFT JOIN calls c ON c.key = r.key
             WHERE ?1 IS NULL OR r.template = ?1
             ORDER BY r.created, r.key",
        )
        .map_err(|e| sqlite_error(&path, e))?;
    let rows = statement
        .query_map(params![template], |row| {
            let call = match row.get::<_, Option<String>>(7)? {
                Some(template_hash) => Some(CallRecord {
                    template_hash,
                    base_url: row.get(8)?,
                    sample: row.get::<_, i64>(9)?.clamp(0, u32::MAX as i64) as u32,
                    messages: row.get(10)?,
                    latency_ms: row.get(11)?,
                }),
                None => None,
            };
            Ok(LoggedCall {
                key: row.get(0)?,
                template: row.get(1)?,
                model: row.get(2)?,
                reply: row.get(3)?,
                prompt_tokens: row.get::<_, i64>(4)?.max(0) as u64,
                completion_tokens: row.get::<_, i64>(5)?.max(0) as u64,
                created: row.get(6)?,
                call,
            })
        })
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(|e| sqlite_error(&path, e))?;
    Ok(rows)
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
    // The log of a removed reply goes with it.
    connection
        .execute(
            "DELETE FROM calls WHERE key NOT IN (SELECT key FROM replies)",
            [],
        )
        .map_err(|e| sqlite_error(&path, e))?;
    connection
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE); VACUUM;")
        .map_err(|e| sqlite_error(&path, e))?;
    Ok(removed as u64)
}
