//! The LLM-as-judge engine: any OpenAI-compatible `POST {base_url}/chat/completions` server
//! (OpenAI, vLLM, llama.cpp's server, Ollama), asked for JSON constrained to a template's schema.
//!
//! A [`Judge`] is built once from [`JudgeSettings`] and shared ([`Judge::shared`] keeps one per
//! distinct settings in the process, so the Python plugin's per-batch calls and the CLI reuse
//! its connection pool, cache connection, concurrency bound, budget and accounting).
//! [`Judge::judge_rows`] judges a column of rows with one [`JudgeTemplate`]:
//!
//! 1. each row's messages are rendered (inputs as JSON data, never as instructions) and keyed by
//!    a SHA-256 of everything that determines the reply: base URL, model, template id and text
//!    hash, rendered messages, schema, temperature, seed, max_tokens and sample index;
//! 2. identical rows are asked once; cached replies are read in one transaction;
//! 3. the rest go to a bounded pool (`max_concurrency` requests in flight per judge, across all
//!    calls), retried with exponential backoff and jitter on 429, 5xx, timeouts and dropped
//!    connections, honouring `Retry-After`;
//! 4. every reply is validated against the schema; an invalid one is asked again once, with the
//!    validation error, then the row gets its reason;
//! 5. valid replies are cached as they arrive (the first stored for a request wins, and is what
//!    every run sharing the cache returns); failures are not cached.
//!
//! A failed row never fails the others: it comes back as `Err(reason)`. Only a spent budget
//! (`max_calls`, `max_total_tokens`, `max_seconds`) stops the call, after the requests in flight
//! have finished and been cached, with an error that says so; Ctrl-C stops it at once, the
//! requests in flight abandoned and the replies received cached.
//!
//! ```
//! use polars_rag::engines::judge::JudgeSettings;
//! let settings = JudgeSettings::default();
//! assert_eq!(settings.temperature, 0.0);
//! assert_eq!(settings.endpoint.max_concurrency, 8);
//! // No server and no POLARS_RAG_JUDGE_BASE_URL: the error names the metric and the setting.
//! # unsafe { std::env::remove_var("POLARS_RAG_JUDGE_BASE_URL") };
//! let e = settings.resolve("citation_support").unwrap_err();
//! assert!(e.to_string().contains("citation_support") && e.to_string().contains("base_url"));
//! ```

pub mod logprobs;
pub mod schema;
pub mod template;

#[cfg(feature = "judge")]
pub mod cache;
#[cfg(feature = "judge")]
mod engine;
#[cfg(feature = "judge")]
pub(crate) mod transport;
#[cfg(feature = "judge")]
pub use transport::parse_retry_after;

#[cfg(feature = "judge")]
pub use engine::{Judge, RowReply};

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::engines::endpoint::{self, JudgeEndpoint};
use template::JudgeTemplate;

/// The version of the judge engine, part of every judge signature: a change in how requests are
/// built or replies read gets a new version.
pub const ENGINE_VERSION: &str = "1";

/// How a judge is reached and run. Defaults: no base URL or model of its own (they come from
/// `POLARS_RAG_JUDGE_BASE_URL` / `POLARS_RAG_JUDGE_MODEL` when unset), temperature 0, seed 0,
/// 8 requests in flight, the cache in [`default_cache_dir`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct JudgeSettings {
    /// The server, the model, the key's variable, the cache and the request settings (written
    /// flat: `[judge] model = ...`).
    #[serde(flatten)]
    pub endpoint: JudgeEndpoint,
    /// Sampling temperature.
    pub temperature: f64,
    /// The sampling seed sent to the server (`None`: none is sent). Sample `k` of a repeated
    /// judgement (`strict`) is sent `seed + k`.
    pub seed: Option<u64>,
    /// The most tokens a reply may have.
    pub max_tokens: u32,
    /// The most HTTP requests this judge may make in the process (`None`: no limit).
    pub max_calls: Option<u64>,
    /// The most prompt + completion tokens this judge may spend in the process.
    pub max_total_tokens: Option<u64>,
    /// The most seconds this judge may spend in the process, counted from its first request:
    /// no request is sent and no retry is waited for past it, and each attempt ends by it
    /// (`None`: no limit). Like the other budgets, reaching it stops the call with an error;
    /// replies received are cached, so a re-run resumes.
    #[serde(default)]
    pub max_seconds: Option<f64>,
    /// The most items a list in one reply may hold (the claims of an answer, its statements,
    /// the nuggets of a question): every item of such a list costs requests of its own, so a
    /// reply listing more fails its row, with an error giving the list's size, rather than
    /// making thousands of requests for one row.
    #[serde(default = "default_max_reply_items")]
    pub max_reply_items: usize,
}

/// The default of [`JudgeSettings::max_reply_items`].
fn default_max_reply_items() -> usize {
    200
}

impl Default for JudgeSettings {
    fn default() -> Self {
        JudgeSettings {
            endpoint: JudgeEndpoint::default(),
            temperature: 0.0,
            seed: Some(0),
            max_tokens: 1024,
            max_calls: None,
            max_total_tokens: None,
            max_seconds: None,
            max_reply_items: default_max_reply_items(),
        }
    }
}

/// The judge cache's default directory: `$POLARS_RAG_CACHE_DIR/judge`, else
/// `$XDG_CACHE_HOME/polars-rag/judge`, else `~/.cache/polars-rag/judge`.
pub fn default_cache_dir() -> PathBuf {
    use endpoint::EngineKind;
    endpoint::Judge::default_cache_dir()
}

/// Settings with the environment applied and checked: what a [`Judge`] runs with.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedSettings {
    /// The base URL, without a trailing slash.
    pub base_url: String,
    /// The model.
    pub model: String,
    /// The name of the key's environment variable, when one is used.
    pub api_key_env: Option<String>,
    /// The cache directory.
    pub cache: Option<PathBuf>,
    /// The settings as given (for the rest of the values).
    pub settings: JudgeSettings,
}

impl JudgeSettings {
    /// Fills the base URL and model from `POLARS_RAG_JUDGE_BASE_URL` / `POLARS_RAG_JUDGE_MODEL`
    /// (and the key's variable name from `POLARS_RAG_JUDGE_API_KEY_ENV`) when unset, and checks
    /// every value. Errors name `metric` and the setting.
    pub fn resolve(&self, metric: &str) -> crate::Result<ResolvedSettings> {
        let bad = |what: String| Err(endpoint::bad::<endpoint::Judge>(metric, what));
        let Some(base_url) = self.endpoint.base_url(metric)? else {
            return bad("`base_url` is not set (give it, or set POLARS_RAG_JUDGE_BASE_URL)".into());
        };
        let Some(model) = self.endpoint.model() else {
            return bad("`model` is not set (give it, or set POLARS_RAG_JUDGE_MODEL)".into());
        };
        if !(self.temperature.is_finite() && (0.0..=2.0).contains(&self.temperature)) {
            return bad(format!(
                "`temperature` must be in [0, 2], got {}",
                self.temperature
            ));
        }
        self.endpoint.check(metric)?;
        if let Some(seconds) = self.max_seconds
            && !(seconds.is_finite() && seconds > 0.0 && seconds <= 30.0 * 86_400.0)
        {
            return bad(format!(
                "`max_seconds` must be a number of seconds in (0, 2592000] (30 days), got {seconds}"
            ));
        }
        if self.max_tokens == 0 {
            return bad("`max_tokens` must be at least 1".into());
        }
        if self.max_reply_items == 0 {
            return bad("`max_reply_items` must be at least 1".into());
        }
        Ok(ResolvedSettings {
            base_url,
            model,
            api_key_env: self.endpoint.api_key_env(),
            cache: self.endpoint.cache_dir(),
            settings: self.clone(),
        })
    }

    /// The judge part of a metric's signature (`judge:model=..|prompt=id@version#hash|...`):
    /// what `compare` checks to know that two runs were judged alike. Unresolvable settings give
    /// `model=?`.
    pub fn signature(&self, template: &JudgeTemplate, samples: u32) -> String {
        self.signature_of_cards(&[template], samples)
    }

    /// [`JudgeSettings::signature`] of a metric that asks several prompts in turn (e.g.
    /// statements, then verdicts): each card's id, version and hash, joined by `+`.
    pub fn signature_of_cards(&self, templates: &[&JudgeTemplate], samples: u32) -> String {
        let model = self.endpoint.model().unwrap_or_else(|| "?".into());
        let prompts = templates
            .iter()
            .map(|t| format!("{}@{}#{}", t.id, t.version, t.prompt_hash()))
            .collect::<Vec<_>>()
            .join("+");
        let seed = self
            .seed
            .map_or_else(|| "none".to_string(), |s| s.to_string());
        format!(
            "judge|model:{model}|prompt:{prompts}|temp:{}|seed:{seed}|max_tokens:{}|samples:{samples}|engine:polars-rag-judge-{ENGINE_VERSION}",
            self.temperature,
            self.max_tokens,
        )
    }
}

/// What one judge spent on one template: calls, cache hits, failures, tokens and wall time.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Usage {
    /// Rows judged (cache hits included; null inputs and repeated rows excluded).
    pub rows: u64,
    /// HTTP requests made (retries and re-asks included).
    pub calls: u64,
    /// Rows answered from the cache.
    pub cache_hits: u64,
    /// Retries after a 429, 5xx, timeout or dropped connection.
    pub retries: u64,
    /// Rows that ended without a valid reply.
    pub failures: u64,
    /// Valid replies that could not be written to the cache (kept for the row all the same).
    pub cache_write_failures: u64,
    /// Prompt tokens of the requests made.
    pub prompt_tokens: u64,
    /// Completion tokens of the requests made.
    pub completion_tokens: u64,
    /// Wall time spent in `judge_rows`, in seconds.
    pub seconds: f64,
}

impl Usage {
    /// Adds `other` to these counts.
    pub fn add(&mut self, other: &Usage) {
        self.rows += other.rows;
        self.calls += other.calls;
        self.cache_hits += other.cache_hits;
        self.retries += other.retries;
        self.failures += other.failures;
        self.cache_write_failures += other.cache_write_failures;
        // Token counts come from servers: saturate rather than overflow.
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.completion_tokens = self
            .completion_tokens
            .saturating_add(other.completion_tokens);
        self.seconds += other.seconds;
    }
}

/// Usage per template id.
pub type UsageByTemplate = BTreeMap<String, Usage>;
