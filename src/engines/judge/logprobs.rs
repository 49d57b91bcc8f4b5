//! Token log-probabilities of a judge's reply, read raw: the candidates the model weighed at
//! the position where it wrote a field's value. The engine records them beside the reply
//! (under [`SCORE_CANDIDATES`]); what they mean for a score (G-Eval's weighting) is a kernel
//! over the recorded reply, in `metrics::judged::g_eval`.

use serde_json::{json, Value};

/// The key under which the engine records, beside a reply, the candidate tokens at the start of
/// the value of the template's [`weighted_score`](super::template::JudgeTemplate::weighted_score)
/// field, as `[[token, probability], ...]`. Keys the engine adds start with `_` and are not part
/// of the schema (a server's own `_` keys are dropped, so a reply cannot spoof them).
pub const SCORE_CANDIDATES: &str = "_score_candidates";

/// One candidate for a generated token: its text and probability.
#[derive(Clone, Debug, PartialEq)]
pub struct TokenChoice {
    /// The token's text.
    pub token: String,
    /// Its probability (`exp` of the log-probability).
    pub probability: f64,
}

impl TokenChoice {
    /// A candidate.
    pub fn new(token: &str, probability: f64) -> Self {
        TokenChoice {
            token: token.to_string(),
            probability,
        }
    }
}

/// The generated tokens of a reply with their top candidates, as an OpenAI-compatible server
/// returns them (`choices[0].logprobs.content[*].token` and `.top_logprobs`); `None` when the
/// reply has none.
pub fn tokens_of_reply(reply: &Value) -> Option<Vec<(String, Vec<TokenChoice>)>> {
    let content = reply.pointer("/choices/0/logprobs/content")?.as_array()?;
    let tokens: Vec<(String, Vec<TokenChoice>)> = content
        .iter()
        .filter_map(|entry| {
            let token = entry.get("token")?.as_str()?.to_string();
            let top = entry
                .get("top_logprobs")
                .and_then(Value::as_array)
                .map(|top| {
                    top.iter()
                        .filter_map(|c| {
                            // A log-probability above 0 (a probability above 1) or not finite
                            // is not one: such a candidate is left out rather than weighted.
                            let logprob = c.get("logprob")?.as_f64()?;
                            (logprob.is_finite() && logprob <= 0.0).then_some(())?;
                            Some(TokenChoice::new(c.get("token")?.as_str()?, logprob.exp()))
                        })
                        .collect()
                })
                .unwrap_or_default();
            Some((token, top))
        })
        .collect();
    (!tokens.is_empty()).then_some(tokens)
}

/// The candidates at the token that starts the value of top-level key `field` in `content` (a
/// JSON object's text spelled by the concatenated `tokens`); `None` when the value or its token
/// cannot be found.
pub fn field_candidates<'t>(
    content: &str,
    tokens: &'t [(String, Vec<TokenChoice>)],
    field: &str,
) -> Option<&'t [TokenChoice]> {
    let at = value_offset(content, field)?;
    let mut offset = 0;
    let (_, candidates) = tokens.iter().find(|(token, _)| {
        let start = offset;
        offset += token.len();
        start <= at && at < offset
    })?;
    Some(candidates)
}

/// Candidates as recorded beside a reply (see [`SCORE_CANDIDATES`]).
pub fn record(candidates: &[TokenChoice]) -> Value {
    Value::Array(
        candidates
            .iter()
            .map(|c| json!([c.token, c.probability]))
            .collect(),
    )
}

/// The candidates recorded beside a reply (see [`SCORE_CANDIDATES`]), `None` when it has none.
pub fn recorded(reply: &Value) -> Option<Vec<TokenChoice>> {
    let entries = reply.get(SCORE_CANDIDATES)?.as_array()?;
    Some(
        entries
            .iter()
            .filter_map(|e| Some(TokenChoice::new(e.get(0)?.as_str()?, e.get(1)?.as_f64()?)))
            .collect(),
    )
}

/// The byte offset in `content` (a JSON object's text) where the value of top-level key
/// `field` starts.
fn value_offset(content: &str, field: &str) -> Option<usize> {
    let key = format!("\"{field}\"");
    let mut from = 0;
    while let Some(found) = content[from..].find(&key) {
        let after = from + found + key.len();
        let rest = &content[after..];
        let trimmed = rest.trim_start();
        if let Some(value) = trimmed.strip_prefix(':') {
            let value_start = value.len() - value.trim_start().len();
            return Some(after + (rest.len() - trimmed.len()) + 1 + value_start);
        }
        from = after;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_with_a_probability_above_one_are_left_out() {
        let reply = json!({"choices": [{"logprobs": {"content": [{
            "token": "4",
            "top_logprobs": [
                {"token": "4", "logprob": -0.1},
                {"token": "5", "logprob": 3.0}
            ]
        }]}}]});
        let tokens = tokens_of_reply(&reply).unwrap();
        let kept: Vec<&str> = tokens[0].1.iter().map(|c| c.token.as_str()).collect();
        assert_eq!(kept, ["4"]);
    }

    #[test]
    fn the_score_token_is_found_by_its_offset_and_recorded() {
        let content = "{\"score\": 10, \"reason\": \"score 3 of 10\"}";
        assert_eq!(value_offset(content, "score"), Some(10));
        let tokens = vec![
            ("{\"score\": ".to_string(), vec![]),
            (
                "10".to_string(),
                vec![TokenChoice::new("10", 0.5), TokenChoice::new("9", 0.5)],
            ),
            (", \"reason\": \"score 3 of 10\"}".to_string(), vec![]),
        ];
        let found = field_candidates(content, &tokens, "score").unwrap();
        assert_eq!(found, &tokens[1].1[..]);
        assert_eq!(field_candidates(content, &tokens[..1], "score"), None);
        let reply = json!({ SCORE_CANDIDATES: record(found) });
        assert_eq!(recorded(&reply).unwrap(), found);
    }
}
