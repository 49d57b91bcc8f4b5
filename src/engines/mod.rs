//! Engines: the stateful, I/O-bound parts a metric may need besides its kernel. They are built
//! once per job from settings and handed to the columnar calls, never constructed per row.
//!
//! * [`judge`]: an LLM-as-judge client for any OpenAI-compatible chat-completions server, with a
//!   persistent reply cache, bounded concurrency, retries, a budget and per-template accounting.
//! * [`embed`]: sentence embeddings from a local model (feature `embed`) or an OpenAI-compatible
//!   `/embeddings` server, with a persistent vector cache.
//! * [`endpoint`]: how both reach their server and how hard they try, declared once.
//! * [`progress`]: live counters of both engines' work, for a progress display.
//! * [`redact_url`]: a server URL as it may be shown (without its credentials).

pub mod embed;
pub mod endpoint;
#[cfg(feature = "judge")]
pub mod interrupt;
pub mod judge;
pub mod progress;
mod redact;
pub use redact::{cut_secret, cut_secret_from_json, redact_url, REDACTED};
#[cfg(feature = "judge")]
pub(crate) mod sqlite;
#[cfg(feature = "judge")]
pub use sqlite::Merged;
