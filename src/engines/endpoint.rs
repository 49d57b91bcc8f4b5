//! [`Endpoint`]: how an engine reaches its server (or, for the embedder, where its model is) and
//! how hard it tries. The judge's and the embedder's settings both embed one (flattened: a
//! configuration still says `[judge] model = ...`), so the shared settings are declared, checked,
//! filled from the environment and overridden in one place.
//!
//! ```
//! use polars_rag::engines::endpoint::{EndpointOverrides, JudgeEndpoint};
//! let mut endpoint = JudgeEndpoint::default();
//! assert_eq!(endpoint.max_concurrency, 8);
//! endpoint.merge(&EndpointOverrides { model: Some("qwen".into()), timeout: Some(30.0), ..Default::default() });
//! assert_eq!(endpoint.model.as_deref(), Some("qwen"));
//! assert_eq!(endpoint.timeout, 30.0);
//! endpoint.max_retries = 101;
//! let e = endpoint.check("faithfulness").unwrap_err().to_string();
//! assert_eq!(e, "faithfulness: judge setting `max_retries` must be at most 100, got 101");
//! ```

use std::fmt::Debug;
use std::marker::PhantomData;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// What differs between the engines that reach a server: their names, environment variables and
/// defaults.
pub trait EngineKind: Clone + Debug + Default + PartialEq + Send + Sync + 'static {
    /// How errors name a setting of this engine (`judge setting`, `embedding setting`).
    const SETTING: &'static str;
    /// The prefix of the environment variables that fill unset settings
    /// (`POLARS_RAG_JUDGE` → `POLARS_RAG_JUDGE_BASE_URL`, `_MODEL`, `_API_KEY_ENV`).
    const ENV_PREFIX: &'static str;
    /// The default number of requests in flight.
    const MAX_CONCURRENCY: usize;
    /// The engine's folder under the library's cache root.
    const CACHE_FOLDER: &'static str;

    /// The default cache directory: [`cache_root`]`/CACHE_FOLDER`.
    fn default_cache_dir() -> PathBuf {
        cache_root().join(Self::CACHE_FOLDER)
    }
}

/// The library's cache root: `$POLARS_RAG_CACHE_DIR`, else `$XDG_CACHE_HOME/polars-rag`, else
/// `~/.cache/polars-rag` (the system's temporary folder without a home). Each engine keeps its
/// cache in a folder of its own under it (`judge`, `embed`).
pub fn cache_root() -> PathBuf {
    let env = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(root) = env("POLARS_RAG_CACHE_DIR") {
        return root;
    }
    env("XDG_CACHE_HOME")
        .or_else(|| env("HOME").map(|home| home.join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("polars-rag")
}

/// The LLM judge (`engines::judge`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Judge;

impl EngineKind for Judge {
    const SETTING: &'static str = "judge setting";
    const ENV_PREFIX: &'static str = "POLARS_RAG_JUDGE";
    const MAX_CONCURRENCY: usize = 8;
    const CACHE_FOLDER: &'static str = "judge";
}

/// The embedding model (`engines::embed`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Embed;

impl EngineKind for Embed {
    const SETTING: &'static str = "embedding setting";
    const ENV_PREFIX: &'static str = "POLARS_RAG_EMBED";
    const MAX_CONCURRENCY: usize = 4;
    const CACHE_FOLDER: &'static str = "embed";
}

/// The judge's endpoint.
pub type JudgeEndpoint = Endpoint<Judge>;
/// The embedder's endpoint.
pub type EmbedEndpoint = Endpoint<Embed>;

/// How an engine reaches its server and how hard it tries. Defaults: no base URL, model or key
/// variable of its own (the environment's, see [`Endpoint::base_url`]), 120 s per request,
/// 5 retries from 0.5 s doubling, `Retry-After` obeyed up to a minute, the engine's default
/// concurrency and cache directory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, bound = "")]
pub struct Endpoint<E: EngineKind> {
    /// The server's base URL, up to and including `/v1` (e.g. `http://127.0.0.1:8080/v1`).
    /// Unset: `<PREFIX>_BASE_URL`; for the embedder, unset there too means the local model.
    pub base_url: Option<String>,
    /// The model name sent with every request (the embedder's local backend: the model
    /// directory). Unset: `<PREFIX>_MODEL`.
    pub model: Option<String>,
    /// The *name* of the environment variable holding the API key (never the key itself). No
    /// `Authorization` header is sent when it is unset (and `<PREFIX>_API_KEY_ENV` is too).
    pub api_key_env: Option<String>,
    /// The cache directory; `None` for no cache.
    pub cache: Option<String>,
    /// Seconds one HTTP request may take, connection included.
    pub timeout: f64,
    /// The most requests in flight at once, for this engine across all calls.
    pub max_concurrency: usize,
    /// Retries of a request after a 429, 5xx, timeout or dropped connection.
    pub max_retries: u32,
    /// The first retry's backoff in seconds; each further retry doubles it (with jitter), up to
    /// a minute. A `Retry-After` from the server takes precedence.
    pub retry_base_delay: f64,
    /// The longest `Retry-After` (seconds) obeyed: a server asking for longer fails the request
    /// at once, with an error naming the server and the wait.
    pub max_retry_wait: f64,
    /// Which engine's defaults and environment variables apply (no data: a type).
    #[serde(skip)]
    pub engine: PhantomData<E>,
}

impl<E: EngineKind> Default for Endpoint<E> {
    fn default() -> Self {
        Endpoint {
            base_url: None,
            model: None,
            api_key_env: None,
            cache: Some(E::default_cache_dir().display().to_string()),
            timeout: 120.0,
            max_concurrency: E::MAX_CONCURRENCY,
            max_retries: 5,
            retry_base_delay: 0.5,
            max_retry_wait: 60.0,
            engine: PhantomData,
        }
    }
}

/// Endpoint settings given over others (the command's `--judge-*` / `--embed-*` flags): each one
/// set replaces the setting beneath it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EndpointOverrides {
    /// Over [`Endpoint::base_url`].
    pub base_url: Option<String>,
    /// Over [`Endpoint::model`].
    pub model: Option<String>,
    /// Over [`Endpoint::api_key_env`].
    pub api_key_env: Option<String>,
    /// Over [`Endpoint::cache`]: `Some(None)` turns the cache off.
    pub cache: Option<Option<String>>,
    /// Over [`Endpoint::timeout`].
    pub timeout: Option<f64>,
    /// Over [`Endpoint::max_concurrency`].
    pub max_concurrency: Option<usize>,
    /// Over [`Endpoint::max_retries`].
    pub max_retries: Option<u32>,
    /// Over [`Endpoint::max_retry_wait`].
    pub max_retry_wait: Option<f64>,
}

impl EndpointOverrides {
    /// Whether it overrides nothing.
    pub fn is_empty(&self) -> bool {
        *self == EndpointOverrides::default()
    }
}

impl<E: EngineKind> Endpoint<E> {
    /// Applies `over`: each setting it gives replaces this one's.
    pub fn merge(&mut self, over: &EndpointOverrides) {
        let EndpointOverrides {
            base_url,
            model,
            api_key_env,
            cache,
            timeout,
            max_concurrency,
            max_retries,
            max_retry_wait,
        } = over;
        if base_url.is_some() {
            self.base_url.clone_from(base_url);
        }
        if model.is_some() {
            self.model.clone_from(model);
        }
        if api_key_env.is_some() {
            self.api_key_env.clone_from(api_key_env);
        }
        if let Some(cache) = cache {
            self.cache.clone_from(cache);
        }
        self.timeout = timeout.unwrap_or(self.timeout);
        self.max_concurrency = max_concurrency.unwrap_or(self.max_concurrency);
        self.max_retries = max_retries.unwrap_or(self.max_retries);
        self.max_retry_wait = max_retry_wait.unwrap_or(self.max_retry_wait);
    }

    /// The base URL: the setting, else `<PREFIX>_BASE_URL` (blank counts as unset), checked to
    /// be an http(s) URL; `None` when neither gives one.
    pub fn base_url(&self, metric: &str) -> crate::Result<Option<String>> {
        let Some(url) = from_env(&self.base_url, &format!("{}_BASE_URL", E::ENV_PREFIX)) else {
            return Ok(None);
        };
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(bad::<E>(
                metric,
                format!(
                    "`base_url` must start with http:// or https://, got {:?}",
                    crate::engines::redact_url(&url)
                ),
            ));
        }
        Ok(Some(url.trim_end_matches('/').to_string()))
    }

    /// The model: the setting, else `<PREFIX>_MODEL`.
    pub fn model(&self) -> Option<String> {
        from_env(&self.model, &format!("{}_MODEL", E::ENV_PREFIX))
    }

    /// The name of the API key's variable: the setting, else `<PREFIX>_API_KEY_ENV`.
    pub fn api_key_env(&self) -> Option<String> {
        from_env(&self.api_key_env, &format!("{}_API_KEY_ENV", E::ENV_PREFIX))
    }

    /// The cache directory, `None` for none (an empty path counts as none).
    pub fn cache_dir(&self) -> Option<PathBuf> {
        self.cache
            .as_deref()
            .filter(|c| !c.is_empty())
            .map(PathBuf::from)
    }

    /// Checks the request settings; the error names `metric` and the setting.
    pub fn check(&self, metric: &str) -> crate::Result<()> {
        let bad = |what: String| Err(bad::<E>(metric, what));
        if !(self.timeout.is_finite() && self.timeout > 0.0 && self.timeout <= 86_400.0) {
            return bad(format!(
                "`timeout` must be a number of seconds in (0, 86400], got {}",
                self.timeout
            ));
        }
        if self.max_concurrency == 0 || self.max_concurrency > 1024 {
            return bad(format!(
                "`max_concurrency` must be in 1..=1024, got {}",
                self.max_concurrency
            ));
        }
        if self.max_retries > 100 {
            return bad(format!(
                "`max_retries` must be at most 100, got {}",
                self.max_retries
            ));
        }
        if !(self.retry_base_delay.is_finite() && (0.0..=600.0).contains(&self.retry_base_delay)) {
            return bad(format!(
                "`retry_base_delay` must be in [0, 600] seconds, got {}",
                self.retry_base_delay
            ));
        }
        if !(self.max_retry_wait.is_finite() && (0.0..=3600.0).contains(&self.max_retry_wait)) {
            return bad(format!(
                "`max_retry_wait` must be in [0, 3600] seconds, got {}",
                self.max_retry_wait
            ));
        }
        Ok(())
    }
}

/// An error about one of engine `E`'s settings, naming `metric`.
pub(crate) fn bad<E: EngineKind>(metric: &str, what: String) -> crate::Error {
    crate::Error::options(format!("{metric}: {} {what}", E::SETTING))
}

/// A setting, else the environment variable `name` (blank values count as unset).
fn from_env(value: &Option<String>, name: &str) -> Option<String> {
    value
        .clone()
        .filter(|v| !v.trim().is_empty())
        .or_else(|| std::env::var(name).ok().filter(|v| !v.trim().is_empty()))
}
