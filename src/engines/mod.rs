//! Engines: the stateful, I/O-bound parts a metric may need besides its kernel. They are built
//! once per job from settings and handed to the columnar calls, never constructed per row.
//!
//! * [`judge`]: an LLM-as-judge client for any OpenAI-compatible chat-completions server, with a
//!   persistent reply cache, bounded concurrency, retries, a budget and per-template accounting.

pub mod judge;
