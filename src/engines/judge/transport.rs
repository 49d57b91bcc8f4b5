//! One chat-completions request over blocking HTTP (ureq with rustls), classified for the retry
//! loop: a reply, a failure worth retrying (429, 5xx, timeouts, refused or reset connections,
//! with the server's `Retry-After`), the server rejecting `json_schema` output, or a failure that
//! retrying cannot fix. The API key is read once and only ever sent in the `Authorization`
//! header; no message produced here contains it, and it is cut out, whatever its case, of every
//! text a server sends back (a server that echoes the request's headers, in an error body or
//! inside a valid reply) before that text is kept ([`Transport::redact`],
//! [`Transport::redact_reply`]). Each request runs on a thread of its own, so that Ctrl-C can
//! abandon it ([`Transport::post`]).
//! A base URL's credentials (`http://user:secret@host`) are never printed either: see
//! [`crate::engines::redact_url`].

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::engines::interrupt;
use crate::engines::{cut_secret, cut_secret_from_json, redact_url};

/// The fewest characters of an API key that is cut out of replies ([`Transport::reply_secret`]).
pub const SHORTEST_SECRET: usize = 8;

/// The outcome of one HTTP attempt.
pub enum Attempt {
    /// A 2xx reply body.
    Reply(String),
    /// Worth another attempt after a backoff (or after the server's `Retry-After`).
    Retry {
        /// Why, for the row's error when the retries run out.
        reason: String,
        /// The server's `Retry-After` in seconds, when it gave one (either form; unbounded
        /// here: [`Transport::wait_before_retry`] decides whether to wait that long).
        retry_after: Option<f64>,
    },
    /// The server refuses `response_format: json_schema`: fall back to `json_object`.
    SchemaFormatRejected,
    /// Retrying cannot help (a 4xx other than 408/409/429, a bad URL, TLS).
    Fatal(String),
    /// The job's deadline has passed: no request was sent.
    PastDeadline,
    /// Ctrl-C came: no request was sent, or the one in flight was abandoned.
    Interrupted,
}

/// Why no retry follows a retryable attempt.
#[derive(Debug)]
pub enum Retry {
    /// The server asked for a wait longer than allowed: the reason, naming server and wait.
    Refused(String),
    /// The wait would end past the job's deadline.
    PastDeadline,
    /// Ctrl-C came during the wait.
    Interrupted,
}

/// Idle connections kept per client unless told otherwise ([`Transport::keeping`]).
const DEFAULT_IDLE_CONNECTIONS: usize = 64;

/// The HTTP agent of a client: a whole-attempt `timeout`, statuses as values, no redirects
/// followed, and a pool of up to `idle` kept-alive connections (ureq's total pool, 10 by
/// default, is raised with the per-host one: one host is all a client talks to).
fn agent(timeout: Duration, idle: usize) -> ureq::Agent {
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        // A redirect is reported, not followed: a POST sent on to another address would
        // carry the key there.
        .max_redirects(0)
        .max_redirects_will_error(false)
        .max_idle_connections(idle)
        .max_idle_connections_per_host(idle)
        .build();
    ureq::Agent::new_with_config(config)
}

/// A configured HTTP client for one endpoint.
pub struct Transport {
    /// What a request needs, shared with the thread each request runs on.
    client: Arc<Client>,
}

/// The HTTP agent and what every request to the endpoint carries.
struct Client {
    agent: ureq::Agent,
    /// The most one attempt may take, connection included.
    timeout: Duration,
    url: String,
    authorization: Option<String>,
    /// The key itself, to cut out of server texts.
    api_key: Option<String>,
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
        Transport {
            client: Arc::new(Client {
                agent: agent(timeout, DEFAULT_IDLE_CONNECTIONS),
                timeout,
                url: format!("{}/{path}", base_url.trim_end_matches('/')),
                authorization: api_key.as_ref().map(|key| format!("Bearer {key}")),
                api_key,
            }),
        }
    }

    /// The same client keeping up to `connections` idle connections open for reuse: one per
    /// concurrent worker, so that each request after a worker's first goes on a kept-alive
    /// connection (a smaller pool closes the extra connections after every request, and a
    /// busy engine then spends its time opening new ones).
    pub fn keeping(self, connections: usize) -> Self {
        let client = &self.client;
        Transport {
            client: Arc::new(Client {
                agent: agent(client.timeout, connections.max(DEFAULT_IDLE_CONNECTIONS)),
                timeout: client.timeout,
                url: client.url.clone(),
                authorization: client.authorization.clone(),
                api_key: client.api_key.clone(),
            }),
        }
    }

    /// The endpoint as it may be shown: without the URL's credentials.
    pub fn shown_url(&self) -> String {
        redact_url(&self.client.url)
    }

    /// Sleeps before retry number `attempt + 1`: the server's `Retry-After` when it gave one,
    /// else the backoff from `base_delay`. A server asking for more than `max_wait` seconds is
    /// not obeyed: the request fails at once with an error naming the server and the wait, so
    /// that one broken or hostile server cannot stall a job for hours. A wait that would end
    /// past the job's `deadline` is not begun ([`Retry::PastDeadline`]), and Ctrl-C ends a wait
    /// ([`Retry::Interrupted`], see [`crate::engines::interrupt`]).
    pub fn wait_before_retry(
        &self,
        retry_after: Option<f64>,
        base_delay: f64,
        attempt: u32,
        max_wait: f64,
        deadline: Option<Instant>,
    ) -> Result<(), Retry> {
        let wait = match retry_after {
            Some(seconds) if seconds > max_wait => {
                return Err(Retry::Refused(format!(
                    "the server at {} asked to wait {} s before retrying (Retry-After), longer than \
                     max_retry_wait = {max_wait} s",
                    self.shown_url(),
                    // 1e308 is shown as such, not as 309 digits.
                    if seconds < 1e9 { format!("{seconds}") } else { format!("{seconds:e}") }
                )));
            }
            Some(seconds) => Duration::from_secs_f64(seconds),
            None => backoff(base_delay, attempt),
        };
        if deadline.is_some_and(|deadline| Instant::now() + wait >= deadline) {
            return Err(Retry::PastDeadline);
        }
        interrupt::sleep(wait).map_err(|_| Retry::Interrupted)
    }

    /// `text` with the API key (the one this client sends) replaced by `[redacted]`, whatever
    /// its case: for the texts of errors, which may show anything a server sent.
    pub fn redact(&self, text: &str) -> String {
        self.client.redact(text)
    }

    /// The API key as it is cut out of the replies kept (the judge's verdicts, the cache, the
    /// log): `None` without a key, or for a key shorter than [`SHORTEST_SECRET`] characters.
    /// Such a key is a placeholder (`EMPTY`, `x`, `none`, as local servers are given), and
    /// cutting it out of replies would rewrite their ordinary words (an "empty context"), and
    /// with them the verdicts.
    pub fn reply_secret(&self) -> Option<&str> {
        self.client
            .api_key
            .as_deref()
            .filter(|key| key.chars().count() >= SHORTEST_SECRET)
    }

    /// Cuts the API key ([`Transport::reply_secret`]) out of every string of a server's reply.
    pub fn redact_reply(&self, value: &mut serde_json::Value) {
        if let Some(key) = self.reply_secret() {
            cut_secret_from_json(value, key);
        }
    }

    /// Posts one request body; the attempt ends at the timeout, or at the job's `deadline`
    /// when that comes first, or at Ctrl-C ([`Attempt::Interrupted`]).
    ///
    /// The request runs on a thread of its own while this one waits for it in slices, looking
    /// at the interrupt flag between them: a blocking read cannot be told to stop, but it can
    /// be left behind. An abandoned request ends on its own at its timeout; its reply, if any
    /// comes, is dropped.
    pub fn post(&self, body: &str, deadline: Option<Instant>) -> Attempt {
        use std::sync::mpsc::{channel, RecvTimeoutError};
        if interrupt::interrupted() {
            return Attempt::Interrupted;
        }
        let (sender, receiver) = channel();
        let client = Arc::clone(&self.client);
        let request = body.to_string();
        let spawned = std::thread::Builder::new()
            .name("polars-rag-request".into())
            .spawn(move || {
                let _ = sender.send(client.send(&request, deadline));
            });
        if spawned.is_err() {
            // No thread to spare: the request is made here, and Ctrl-C waits for it.
            return self.client.send(body, deadline);
        }
        loop {
            match receiver.recv_timeout(interrupt::SLICE) {
                Ok(attempt) => return attempt,
                Err(RecvTimeoutError::Timeout) if interrupt::interrupted() => {
                    return Attempt::Interrupted;
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    return Attempt::Fatal("the request ended without an outcome".into());
                }
            }
        }
    }
}

impl Client {
    /// `text` with the API key replaced by `[redacted]`, whatever its case.
    fn redact(&self, text: &str) -> String {
        match &self.api_key {
            Some(key) => cut_secret(text, key).into_owned(),
            None => text.to_string(),
        }
    }

    /// Posts one request body and waits for its outcome (see [`Transport::post`]).
    fn send(&self, body: &str, deadline: Option<Instant>) -> Attempt {
        let left = match deadline {
            Some(deadline) => deadline.saturating_duration_since(Instant::now()),
            None => self.timeout,
        };
        if left.is_zero() {
            return Attempt::PastDeadline;
        }
        let mut request = self
            .agent
            .post(&self.url)
            .config()
            .timeout_global(Some(left.min(self.timeout)))
            .build()
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
            .and_then(|value| parse_retry_after(value, SystemTime::now()));
        // A compressed body was not asked for (no Accept-Encoding is sent) and cannot be read:
        // said as such, not as a broken connection worth retrying.
        // (Only for a reply meant to be read: a retryable status is retried whatever its body.)
        if let Some(encoding) = response
            .headers()
            .get("content-encoding")
            .map(|v| v.to_str().unwrap_or("?").trim().to_ascii_lowercase())
            .filter(|e| !e.is_empty() && e != "identity")
            .filter(|_| (200..300).contains(&status))
        {
            return Attempt::Fatal(format!(
                "HTTP {status}: the server sent its reply compressed (Content-Encoding: {encoding}), \
                 which was not asked for and cannot be read; configure it to send plain JSON"
            ));
        }
        let bytes = match response
            .body_mut()
            .with_config()
            .limit(64 << 20)
            .read_to_vec()
        {
            Ok(bytes) => bytes,
            Err(e) => return classify_error(e),
        };
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) if !(200..300).contains(&status) => {
                String::from_utf8_lossy(e.as_bytes()).into_owned()
            }
            Err(e) => {
                return Attempt::Fatal(format!(
                    "HTTP {status}: the reply is not UTF-8 text (invalid byte at {})",
                    e.utf8_error().valid_up_to()
                ));
            }
        };
        match status {
            200..=299 => Attempt::Reply(text),
            408 | 409 | 429 | 500..=599 => Attempt::Retry {
                reason: format!("HTTP {status}{}", snippet(&self.redact(&text))),
                retry_after,
            },
            400 | 422 if mentions_response_format(&text) => Attempt::SchemaFormatRejected,
            300..=399 => Attempt::Fatal(format!(
                "HTTP {status}: the server redirects{} (redirects are not followed: give the final \
                 base_url)",
                response
                    .headers()
                    .get("location")
                    .and_then(|v| v.to_str().ok())
                    .map(|to| format!(" to {}", redact_url(&self.redact(to))))
                    .unwrap_or_default()
            )),
            _ => Attempt::Fatal(format!("HTTP {status}{}", snippet(&self.redact(&text)))),
        }
    }
}

/// The API key in environment variable `name` (`None` when no name is given), for the
/// `kind` of engine (`judge`, `embedding`) of `metric`. A variable that is unset or empty, or a
/// key with surrounding whitespace (a newline left by `export KEY=$(cat file)`), is an error that
/// says which, without the key.
pub fn read_api_key(metric: &str, kind: &str, name: Option<&str>) -> crate::Result<Option<String>> {
    let Some(name) = name else {
        return Ok(None);
    };
    let problem = match std::env::var(name) {
        Ok(key) if key.is_empty() => "which is empty",
        Ok(key) if key.trim() != key => {
            "whose value begins or ends with whitespace or a newline (remove it: the key is sent as it is)"
        }
        Ok(key) if key.chars().any(char::is_control) => "whose value holds a control character",
        Ok(key) => return Ok(Some(key)),
        Err(std::env::VarError::NotUnicode(_)) => "whose value is not valid UTF-8",
        Err(std::env::VarError::NotPresent) => "which is not set",
    };
    Err(crate::Error::options(format!(
        "{metric}: {kind} setting `api_key_env` names the environment variable {name}, {problem}"
    )))
}

/// The seconds a `Retry-After` value asks for, in either of its forms: delay-seconds (a
/// non-negative number; fractions accepted, as some servers send them) or an HTTP-date
/// (`Sun, 06 Nov 1994 08:49:37 GMT`, counted from `now`; a date in the past is 0). `None` for
/// anything else.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<f64> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds >= 0.0 && !seconds.is_nan()).then_some(seconds);
    }
    let at = parse_http_date(value)?;
    let now = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .ok()?
        .as_secs_f64();
    Some((at as f64 - now).max(0.0))
}

/// Seconds since the Unix epoch of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form
/// HTTP requires senders to use.
fn parse_http_date(value: &str) -> Option<i64> {
    let (_weekday, rest) = value.split_once(", ")?;
    let parts: Vec<&str> = rest.split(' ').collect();
    let [day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let day: i64 = day.parse().ok().filter(|d| (1..=31).contains(d))?;
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| m == month)? as i64 + 1;
    let year: i64 = year.parse().ok().filter(|y| (1970..=9999).contains(y))?;
    let clock: Vec<i64> = time
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let [hour, minute, second] = clock.as_slice() else {
        return None;
    };
    if !(0..24).contains(hour) || !(0..60).contains(minute) || !(0..=60).contains(second) {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second)
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
pub(crate) fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_both_forms() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777); // Sun, 06 Nov 1994 08:49:37 GMT
        assert_eq!(parse_retry_after("2", now), Some(2.0));
        assert_eq!(parse_retry_after(" 0.5 ", now), Some(0.5));
        assert_eq!(parse_retry_after("1e308", now), Some(1e308));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:39 GMT", now),
            Some(2.0)
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:30 GMT", now),
            Some(0.0)
        );
        assert_eq!(
            parse_retry_after("Mon, 07 Nov 1994 08:49:37 GMT", now),
            Some(86_400.0)
        );
        for bad in [
            "-1",
            "NaN",
            "soon",
            "Sun, 06 Nov 1994 08:49:37 PST",
            "Sun, 32 Nov 1994 08:49:37 GMT",
        ] {
            assert_eq!(parse_retry_after(bad, now), None, "{bad}");
        }
    }

    #[test]
    fn civil_days_match_known_dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(2026, 11, 27), 20_784);
    }

    #[test]
    fn keys_with_whitespace_or_unset_are_named_without_the_key() {
        // SAFETY: a variable of this test alone; other test threads may read the environment
        // meanwhile, a risk these tests accept (Rust 2021 took it without the marker).
        unsafe { std::env::set_var("POLARS_RAG_UNIT_KEY_NEWLINE", "sk-unit-secret\n") };
        let e = read_api_key("m", "judge", Some("POLARS_RAG_UNIT_KEY_NEWLINE"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("POLARS_RAG_UNIT_KEY_NEWLINE") && e.contains("whitespace"),
            "{e}"
        );
        assert!(!e.contains("sk-unit-secret"), "{e}");
        let e = read_api_key("m", "judge", Some("POLARS_RAG_UNIT_KEY_UNSET"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not set"), "{e}");
        assert_eq!(read_api_key("m", "judge", None).unwrap(), None);
    }

    #[test]
    fn server_texts_lose_the_key_and_urls_their_credentials() {
        let t = Transport::new(
            "http://u:pw@127.0.0.1:9/v1",
            Duration::from_secs(1),
            Some("sk-abc".into()),
        );
        assert_eq!(t.redact("echo: Bearer sk-abc!"), "echo: Bearer [redacted]!");
        assert_eq!(t.redact("echo: BEARER SK-ABC!"), "echo: BEARER [redacted]!");
        // A six-character key is a placeholder: replies keep their words.
        assert_eq!(t.reply_secret(), None);
        assert_eq!(t.shown_url(), "http://***@127.0.0.1:9/v1/chat/completions");
        assert_eq!(redact_url("http://h/v1?u=a@b"), "http://h/v1?u=a@b");
    }
}
