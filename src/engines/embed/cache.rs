//! The persistent embedding cache: one SQLite file (`embed-cache.sqlite3`) in the cache
//! directory, shared safely by several processes (WAL). A vector is stored under a SHA-256 of the
//! model's signature and the text, as little-endian `f32` bytes, with whether the model cut the
//! text at its token limit.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{params, Connection, OptionalExtension};
use sha2::{Digest, Sha256};

use crate::engines::sqlite::{open_store, store_bytes, store_error};

/// The file name of the cache inside its directory.
pub const CACHE_FILE: &str = "embed-cache.sqlite3";

const WHAT: &str = "embedding cache";

/// A cached vector.
#[derive(Clone, Debug, PartialEq)]
pub struct CachedVector {
    /// The vector.
    pub vector: Vec<f32>,
    /// Whether the text was cut at the model's token limit.
    pub truncated: bool,
}

/// An open embedding cache.
pub struct VectorCache {
    connection: Mutex<Connection>,
    path: PathBuf,
}

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS vectors (
             key TEXT PRIMARY KEY,
             model TEXT NOT NULL,
             truncated INTEGER NOT NULL,
             vector BLOB NOT NULL
         ) WITHOUT ROWID;";

fn open_connection(path: &Path) -> crate::Result<Connection> {
    open_store(WHAT, path, SCHEMA)
}

/// Writes a consistent copy of the cache in `directory` to `to` (a directory; the file keeps
/// its name), for carrying a node's vectors elsewhere; `false` when `directory` has none.
pub fn export_embedding_cache(directory: &Path, to: &Path) -> crate::Result<bool> {
    crate::engines::sqlite::snapshot_store(
        WHAT,
        &directory.join(CACHE_FILE),
        SCHEMA,
        &to.join(CACHE_FILE),
    )
}

/// Adds the vectors of the cache in `from` (a directory, e.g. an [`export_embedding_cache`]
/// copy) that the cache in `directory` lacks; returns how many were added, and how many
/// were refused for a value of the wrong type.
pub fn merge_embedding_cache(
    directory: &Path,
    from: &Path,
) -> crate::Result<crate::engines::Merged> {
    crate::engines::sqlite::merge_store(
        WHAT,
        &directory.join(CACHE_FILE),
        SCHEMA,
        &from.join(CACHE_FILE),
        "vectors",
    )
}

/// The cache key of `text` under the model signature `model`.
pub fn vector_key(model: &str, text: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(model.as_bytes());
    hasher.update([0u8]);
    hasher.update(text.as_bytes());
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn to_bytes(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// The vector stored as `bytes`; `None` (a miss) for bytes that are not a whole, non-empty
/// number of floats, or hold a NaN or an infinity: a poisoned entry must not reach a cosine.
fn from_bytes(bytes: &[u8]) -> Option<Vec<f32>> {
    if bytes.is_empty() || !bytes.len().is_multiple_of(4) {
        return None;
    }
    let vector: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    vector.iter().all(|x| x.is_finite()).then_some(vector)
}

impl VectorCache {
    /// Opens (creating it when needed) the cache in `directory`.
    pub fn open(directory: &Path) -> crate::Result<Self> {
        std::fs::create_dir_all(directory).map_err(|e| store_error(WHAT, directory, e))?;
        let path = directory.join(CACHE_FILE);
        Ok(VectorCache {
            connection: Mutex::new(open_connection(&path)?),
            path,
        })
    }

    /// The vectors cached under `keys`, in order, read in one transaction. A stored value that is
    /// not a whole number of finite floats counts as a miss (it is replaced when re-embedded).
    pub fn get_many(&self, keys: &[String]) -> crate::Result<Vec<Option<CachedVector>>> {
        let error = |e: rusqlite::Error| store_error(WHAT, &self.path, e);
        let mut connection = self.connection.lock().unwrap_or_else(|p| p.into_inner());
        let transaction = connection.transaction().map_err(error)?;
        let mut found = Vec::with_capacity(keys.len());
        {
            let mut statement = transaction
                .prepare_cached("SELECT truncated, vector FROM vectors WHERE key = ?1")
                .map_err(error)?;
            for key in keys {
                let row = statement
                    .query_row(params![key], |row| {
                        // An entry of the wrong storage class (a text where the vector's bytes
                        // belong) is a miss like any unreadable entry, not an error of the job.
                        let truncated = row.get_ref(0)?.as_i64().ok();
                        let vector = match row.get_ref(1)? {
                            rusqlite::types::ValueRef::Blob(bytes) => from_bytes(bytes),
                            _ => None,
                        };
                        Ok(truncated.zip(vector))
                    })
                    .optional()
                    .map_err(error)?;
                found.push(row.flatten().map(|(truncated, vector)| CachedVector {
                    vector,
                    truncated: truncated != 0,
                }));
            }
        }
        transaction.commit().map_err(error)?;
        Ok(found)
    }

    /// Stores vectors (key, vector) of model `model` in one transaction.
    pub fn put_many(&self, model: &str, entries: &[(&str, &CachedVector)]) -> crate::Result<()> {
        let error = |e: rusqlite::Error| store_error(WHAT, &self.path, e);
        let mut connection = self.connection.lock().unwrap_or_else(|p| p.into_inner());
        // The write lock is taken at BEGIN, where SQLite waits for it (the busy timeout); a
        // deferred transaction taking it later may be refused at once to avoid a deadlock.
        let transaction = connection
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(error)?;
        {
            let mut statement = transaction
                .prepare_cached(
                    "INSERT OR REPLACE INTO vectors (key, model, truncated, vector) VALUES (?1, ?2, ?3, ?4)",
                )
                .map_err(error)?;
            for (key, value) in entries {
                statement
                    .execute(params![
                        key,
                        model,
                        value.truncated as i64,
                        to_bytes(&value.vector)
                    ])
                    .map_err(error)?;
            }
        }
        transaction.commit().map_err(error)
    }
}

/// What an embedding cache directory holds.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct EmbeddingCacheStats {
    /// The cache file.
    pub path: String,
    /// Cached vectors in all.
    pub entries: u64,
    /// Size of the file (and its write-ahead log) in bytes.
    pub bytes: u64,
    /// Cached vectors per model signature.
    pub by_model: Vec<(String, u64)>,
}

/// The contents of the embedding cache in `directory` (zero entries when it has none yet).
pub fn embedding_cache_stats(directory: &Path) -> crate::Result<EmbeddingCacheStats> {
    let path = directory.join(CACHE_FILE);
    if !path.exists() {
        return Ok(EmbeddingCacheStats {
            path: path.display().to_string(),
            ..EmbeddingCacheStats::default()
        });
    }
    let connection = open_connection(&path)?;
    let by_model = connection
        .prepare("SELECT model, COUNT(*) FROM vectors GROUP BY model ORDER BY model")
        .and_then(|mut statement| {
            statement
                .query_map([], |row| {
                    Ok((row.get(0)?, row.get::<_, i64>(1)?.max(0) as u64))
                })?
                .collect::<Result<Vec<(String, u64)>, _>>()
        })
        .map_err(|e| store_error(WHAT, &path, e))?;
    Ok(EmbeddingCacheStats {
        path: path.display().to_string(),
        entries: by_model.iter().map(|(_, n)| n).sum(),
        bytes: store_bytes(&path),
        by_model,
    })
}

/// Removes every cached vector from the cache in `directory`; returns how many were removed.
pub fn clear_embedding_cache(directory: &Path) -> crate::Result<u64> {
    let path = directory.join(CACHE_FILE);
    if !path.exists() {
        return Ok(0);
    }
    let connection = open_connection(&path)?;
    let removed = connection
        .execute("DELETE FROM vectors", [])
        .map_err(|e| store_error(WHAT, &path, e))?;
    connection
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE); VACUUM;")
        .map_err(|e| store_error(WHAT, &path, e))?;
    Ok(removed as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_round_trip_and_keys_depend_on_model_and_text() {
        let dir =
            std::env::temp_dir().join(format!("polars-rag-embed-cache-{}", std::process::id()));
        let cache = VectorCache::open(&dir).unwrap();
        let value = CachedVector {
            vector: vec![0.25, -1.5, f32::MIN_POSITIVE],
            truncated: true,
        };
        let key = vector_key("m1", "text");
        assert_ne!(key, vector_key("m2", "text"));
        assert_ne!(key, vector_key("m1", "text "));
        cache.put_many("m1", &[(&key, &value)]).unwrap();
        let got = cache
            .get_many(&[key.clone(), vector_key("m1", "other")])
            .unwrap();
        assert_eq!(got, vec![Some(value), None]);
        assert_eq!(embedding_cache_stats(&dir).unwrap().entries, 1);
        assert_eq!(clear_embedding_cache(&dir).unwrap(), 1);
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Entries poisoned by hand or by another program (a NaN or an infinity, no bytes, bytes
    /// that are not whole floats, text where bytes belong) read as misses, never as vectors.
    #[test]
    fn poisoned_entries_are_misses() {
        let dir = std::env::temp_dir().join(format!(
            "polars-rag-embed-cache-poison-{}",
            std::process::id()
        ));
        let cache = VectorCache::open(&dir).unwrap();
        let good = CachedVector {
            vector: vec![0.5, 0.5],
            truncated: false,
        };
        let keys: Vec<String> = (0..6).map(|i| vector_key("m", &i.to_string())).collect();
        cache.put_many("m", &[(&keys[0], &good)]).unwrap();
        let poison = rusqlite::Connection::open(dir.join(CACHE_FILE)).unwrap();
        let mut nan = to_bytes(&[0.5, f32::NAN]);
        let inf = to_bytes(&[f32::INFINITY, 0.5]);
        nan.truncate(8);
        for (key, value) in [
            (&keys[1], rusqlite::types::Value::Blob(nan)),
            (&keys[2], rusqlite::types::Value::Blob(inf)),
            (&keys[3], rusqlite::types::Value::Blob(Vec::new())),
            (&keys[4], rusqlite::types::Value::Blob(vec![1, 2, 3])),
            (&keys[5], rusqlite::types::Value::Text("0.5,0.5".into())),
        ] {
            poison
                .execute(
                    "INSERT INTO vectors (key, model, truncated, vector) VALUES (?1, 'm', 0, ?2)",
                    params![key, value],
                )
                .unwrap();
        }
        let got = cache.get_many(&keys).unwrap();
        assert_eq!(got[0], Some(good));
        assert!(got[1..].iter().all(Option::is_none), "{got:?}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
