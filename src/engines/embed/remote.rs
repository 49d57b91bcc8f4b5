//! The remote backend: batches of texts posted to an OpenAI-compatible `/embeddings` endpoint
//! (`{"model": .., "input": [..]}` → `data[i].embedding`, ordered by `index`), through the judge
//! engine's HTTP client and retry rule (429, 5xx, timeouts, dropped connections; `Retry-After`).

use std::time::Duration;

use serde_json::{json, Value};

use crate::engines::judge::transport::{read_api_key, Attempt, Retry, Transport};

use super::EmbedSettings;

/// A client for one server and model.
pub struct RemoteModel {
    transport: Transport,
    base_url: String,
    model: String,
    max_retries: u32,
    retry_base_delay: f64,
    max_retry_wait: f64,
}

/// One batch's vectors and what it cost.
pub struct RemoteBatch {
    /// One vector per text, in order.
    pub vectors: Vec<Vec<f32>>,
    /// HTTP requests made (retries included).
    pub calls: u64,
    /// Tokens the server reports.
    pub tokens: u64,
}

impl RemoteModel {
    /// A client; `api_key_env` names the variable with the key (its value is only ever sent in
    /// the `Authorization` header).
    pub fn new(
        metric: &str,
        base_url: &str,
        model: &str,
        api_key_env: Option<&str>,
        settings: &EmbedSettings,
    ) -> crate::Result<Self> {
        let api_key = read_api_key(metric, "embedding", api_key_env)?;
        Ok(RemoteModel {
            transport: Transport::endpoint(
                base_url,
                "embeddings",
                Duration::from_secs_f64(settings.endpoint.timeout),
                api_key,
            )
            .keeping(settings.endpoint.max_concurrency),
            base_url: base_url.to_string(),
            model: model.to_string(),
            max_retries: settings.endpoint.max_retries,
            retry_base_delay: settings.endpoint.retry_base_delay,
            max_retry_wait: settings.endpoint.max_retry_wait,
        })
    }

    /// The model part of a signature.
    pub fn signature(&self) -> String {
        format!(
            "remote:{}|model:{}",
            crate::engines::redact_url(&self.base_url),
            self.model
        )
    }

    /// Embeds one batch, retrying what is worth retrying. The error says why the batch failed.
    pub(crate) fn embed_batch(&self, texts: &[&str]) -> Result<RemoteBatch, String> {
        let body = json!({ "model": self.model, "input": texts }).to_string();
        let mut calls = 0u64;
        let mut attempt = 0u32;
        // Embedding has no time budget of its own: each attempt ends at the timeout.
        let deadline = None;
        loop {
            if crate::engines::interrupt::interrupted() {
                return Err(crate::engines::interrupt::INTERRUPTED_MESSAGE.to_string());
            }
            calls += 1;
            match self.transport.post(&body, deadline) {
                Attempt::Reply(text) => {
                    let (vectors, tokens) = read_embeddings(&text, texts.len())?;
                    return Ok(RemoteBatch {
                        vectors,
                        calls,
                        tokens,
                    });
                }
                Attempt::Retry {
                    reason,
                    retry_after,
                } => {
                    if attempt >= self.max_retries {
                        return Err(format!("{reason} (after {} attempts)", attempt + 1));
                    }
                    self.transport
                        .wait_before_retry(
                            retry_after,
                            self.retry_base_delay,
                            attempt,
                            self.max_retry_wait,
                            deadline,
                        )
                        .map_err(|stopped| match stopped {
                            Retry::Refused(why) => format!("{reason}: {why}"),
                            Retry::Interrupted => {
                                crate::engines::interrupt::INTERRUPTED_MESSAGE.to_string()
                            }
                            Retry::PastDeadline => format!("{reason}: the deadline passed"),
                        })?;
                    attempt += 1;
                }
                Attempt::SchemaFormatRejected => {
                    return Err("the server rejected the request".into())
                }
                Attempt::Fatal(reason) => return Err(reason),
                Attempt::PastDeadline => return Err("the deadline passed".into()),
                Attempt::Interrupted => {
                    return Err(crate::engines::interrupt::INTERRUPTED_MESSAGE.to_string())
                }
            }
        }
    }
}

/// The vectors of an `/embeddings` reply, in input order, and the tokens it reports.
fn read_embeddings(text: &str, expected: usize) -> Result<(Vec<Vec<f32>>, u64), String> {
    let reply: Value =
        serde_json::from_str(text).map_err(|e| format!("the reply is not JSON: {e}"))?;
    let data = reply
        .get("data")
        .and_then(Value::as_array)
        .ok_or("the reply has no `data` list")?;
    if data.len() != expected {
        return Err(format!(
            "the reply has {} embeddings for {expected} texts",
            data.len()
        ));
    }
    let mut vectors: Vec<Option<Vec<f32>>> = vec![None; expected];
    for (position, item) in data.iter().enumerate() {
        let index = item
            .get("index")
            .and_then(Value::as_u64)
            .map_or(position, |i| i as usize);
        let values = item
            .get("embedding")
            .and_then(Value::as_array)
            .ok_or("an item of `data` has no `embedding` list (base64 encoding is not read)")?;
        let vector = values
            .iter()
            .map(|v| v.as_f64().map(|x| x as f32))
            .collect::<Option<Vec<f32>>>()
            .ok_or("an embedding holds a value that is not a number")?;
        if vector.is_empty() {
            return Err(format!(
                "the embedding of text {index} is empty (0 dimensions)"
            ));
        }
        // A value past f32's range becomes infinite here; NaN and infinities would flow into
        // every cosine and score computed from the vector.
        if let Some(bad) = vector.iter().position(|x| !x.is_finite()) {
            return Err(format!(
                "the embedding of text {index} has a value that is not a finite f32 at dimension {bad}"
            ));
        }
        let slot = vectors
            .get_mut(index)
            .ok_or_else(|| format!("an embedding has index {index}, beyond the batch"))?;
        *slot = Some(vector);
    }
    let vectors = vectors
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or("the reply repeats an index and misses another")?;
    let tokens = reply
        .pointer("/usage/prompt_tokens")
        .or_else(|| reply.pointer("/usage/total_tokens"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    Ok((vectors, tokens))
}

#[cfg(test)]
mod tests {
    use super::read_embeddings;

    #[test]
    fn replies_are_put_back_in_input_order_and_checked() {
        let reply = r#"{"data":[{"index":1,"embedding":[3,4]},{"index":0,"embedding":[1,2]}],"usage":{"prompt_tokens":7}}"#;
        let (vectors, tokens) = read_embeddings(reply, 2).unwrap();
        assert_eq!(vectors, vec![vec![1.0, 2.0], vec![3.0, 4.0]]);
        assert_eq!(tokens, 7);
        assert!(read_embeddings(reply, 3)
            .unwrap_err()
            .contains("2 embeddings for 3"));
        let repeated = r#"{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[2]}]}"#;
        assert!(read_embeddings(repeated, 2).is_err());
        assert!(read_embeddings("{\"data\":[{\"embedding\":\"AAAA\"}]}", 1).is_err());
    }
}
