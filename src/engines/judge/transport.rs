//! One chat-completions request over blocking HTTP (ureq with rustls), classified for the retry
//! loop: a reply, a failure worth retrying (429, 5xx, timeouts, refused or reset connections,
//! with the server's `Retry-After`), the server rejecting `json_schema` output, or a failure that
//! retrying cannot fix. The API key is read once and only ever sent in the `Authorization`
//! header; no message produced here contains it.

use std::time::{Duration, Instant};

/// The outcome of one HTTP attempt.
pub enum Attempt {
    /// A 2xx reply body.
    Reply(String),
    /// Worth another attempt after a backoff (or after the server's `Retry-After`).
    Retry {
        /// Why, for the row's error when the retries run out.
        reason: String,
        /// The server's `Retry-After`, when it gave one.
        retry_after: Option<Duration>,
    },
    /// The server refuses `response_format: json_schema`: fall back to `json_object`.
    SchemaFormatRejected,
    /// Retrying cannot help (a 4xx other than 408/409/429, a bad URL, TLS).
    Fatal(String),
}

/// A configured HTTP client for one endpoint.
pub struct Transport {
    agent: ureq::Agent,
    url: String,
    authorization: Option<String>,
}

impl Transport {
    /// A client posting to `{base_url}/chat/completions` with a per-request `timeout`.
    pub fn new(base_url: &str, timeout: Duration, api_key: Option<String>) -> Self {
        Self::endpoint(base_url, "chat/completions", timeout, api_key)
    }

    /// A client posting to `{base_url}/{path}` (`embeddings`, `chat/completions`).
    pub fn endpoint(
        base_url: &str,
        path: &str,
        timeout: Duration,
        api_key: Option<String>,
    ) -> Self {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .max_idle_connections_per_host(64)
            .build();
        Transport {
            agent: ureq::Agent::new_with_config(config),
            url: format!("{}/{path}", base_url.trim_end_matches('/')),
            authorization: api_key.map(|key| format!("Bearer {key}")),
        }
    }

    /// Posts one request body.
    pub fn post(&self, body: &str) -> Attempt {
        let mut request = self
            .agent
            .post(&self.url)
            .header("Content-Type", "application/json");
        if let Some(authorization) = &self.authorization {
            request = request.header("Authorization", authorization);
        }
        let mut response = match request.send(body) {
            Ok(response) => response,
            Err(e) => return classify_error(e),
        };
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.trim().parse::<f64>().ok())
            .filter(|seconds| seconds.is_finite() && *seconds >= 0.0)
            .map(|seconds| Duration::from_secs_f64(seconds.min(600.0)));
        let text = match response
            .body_mut()
            .with_config()
            .limit(64 << 20)
            .read_to_string()
        {
            Ok(text) => text,
            Err(e) => return classify_error(e),
        };
        match status {
            200..=299 => Attempt::Reply(text),
            408 | 409 | 429 | 500..=599 => Attempt::Retry {
                reason: format!("HTTP {status}{}", snippet(&text)),
                retry_after,
            },
            400 | 422 if mentions_response_format(&text) => Attempt::SchemaFormatRejected,
            _ => Attempt::Fatal(format!("HTTP {status}{}", snippet(&text))),
        }
    }
}

fn mentions_response_format(text: &str) -> bool {
    let lower = text.to_lowercase();
    lower.contains("response_format") || lower.contains("json_schema")
}

/// The first line of a server's error text, short, for a row's error.
fn snippet(text: &str) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    if line.is_empty() {
        return String::new();
    }
    let cut: String = line.chars().take(160).collect();
    format!(": {cut}")
}

fn classify_error(e: ureq::Error) -> Attempt {
    use ureq::Error as E;
    match e {
        E::Timeout(what) => Attempt::Retry {
            reason: format!("timed out ({what})"),
            retry_after: None,
        },
        E::Io(io) => Attempt::Retry {
            reason: format!("connection error: {io}"),
            retry_after: None,
        },
        E::ConnectionFailed => Attempt::Retry {
            reason: "connection failed".into(),
            retry_after: None,
        },
        E::Protocol(p) => Attempt::Retry {
            reason: format!("protocol error: {p}"),
            retry_after: None,
        },
        E::HostNotFound => Attempt::Fatal("host not found".into()),
        E::BodyExceedsLimit(n) => Attempt::Fatal(format!("reply larger than {n} bytes")),
        other => Attempt::Fatal(other.to_string()),
    }
}

/// Exponential backoff with jitter: between half and all of `base * 2^attempt`, at most a minute.
pub(crate) fn backoff(base: f64, attempt: u32) -> Duration {
    let ceiling = (base * 2f64.powi(attempt.min(30) as i32)).min(60.0);
    Duration::from_secs_f64(ceiling * (0.5 + 0.5 * jitter()))
}

/// A number in [0, 1) that differs between threads and calls (no need for a real RNG here).
fn jitter() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(Instant::now().elapsed().as_nanos());
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}
