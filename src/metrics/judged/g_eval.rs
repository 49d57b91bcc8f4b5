//! `g_eval`: a rubric judge in the style of G-Eval (Liu et al., 2023) and DeepEval's `GEval`.
//! The user gives the criteria (and, optionally, the evaluation steps); the judge reads the
//! question, the answer and, when there is one, a reference answer, and gives an integer score
//! in `score_min..=score_max` with its reason. The score is normalised to [0, 1].
//!
//! When the server returns token log-probabilities (OpenAI, vLLM, llama.cpp's server do when
//! asked), the score is the probability-weighted mean of the candidate score tokens at the
//! position where the judge wrote its score, as G-Eval defines it: candidates that are integers
//! in the range and have a probability of at least 1 % count, weighted by their probability.
//! Without log-probabilities the integer the judge wrote is the score.
//!
//! The rubric card is built from the options: its text (criteria and steps) is part of the
//! prompt hash, so a changed rubric never reuses cached replies.
//!
//! ```
//! use polars_rag::metrics::judged::g_eval::{weighted_score, GEvalOptions, TokenChoice};
//! let options = GEvalOptions { criteria: "Is the answer correct?".into(), ..GEvalOptions::default() };
//! let card = options.card().unwrap();
//! assert_eq!(card.inputs, ["question", "answer", "reference"]);
//! // The judge wrote 4; the tokens it weighed were 4 (60 %), 3 (30 %) and 5 (10 %).
//! let content = r#"{"reason": "mostly right", "score": 4}"#;
//! let tokens = vec![
//!     (r#"{"reason": "mostly right", "score": "#.to_string(), vec![]),
//!     ("4".to_string(), vec![TokenChoice::new("4", 0.6), TokenChoice::new("3", 0.3), TokenChoice::new("5", 0.1)]),
//!     ("}".to_string(), vec![]),
//! ];
//! let weighted = weighted_score(content, &tokens, "score", 1, 5).unwrap();
//! assert!((weighted - 3.8).abs() < 1e-12);
//! assert!((options.normalised(weighted) - 0.7).abs() < 1e-12);
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::engines::judge::template::JudgeTemplate;
use crate::engines::judge::JudgeSettings;

/// Options of `g_eval`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GEvalOptions {
    /// The judge.
    pub judge: JudgeSettings,
    /// What to judge, in words (required): e.g. "Is the answer factually consistent with the
    /// reference and does it answer the question?".
    pub criteria: String,
    /// Steps the judge follows (optional; G-Eval writes them from the criteria once, here the
    /// user gives them so that they are part of the prompt and its hash).
    pub evaluation_steps: Vec<String>,
    /// The lowest score.
    pub score_min: i64,
    /// The highest score.
    pub score_max: i64,
    /// Ask for token log-probabilities and weight the score by them.
    pub logprobs: bool,
}

impl Default for GEvalOptions {
    fn default() -> Self {
        GEvalOptions {
            judge: JudgeSettings::default(),
            criteria: String::new(),
            evaluation_steps: Vec::new(),
            score_min: 1,
            score_max: 5,
            logprobs: true,
        }
    }
}

/// The field of the reply that holds the score.
pub const SCORE_FIELD: &str = "score";

/// The smallest probability of a candidate score token that counts (G-Eval's cut).
pub const MIN_TOKEN_PROBABILITY: f64 = 0.01;

const RUBRIC: &str = "You grade a system's answer against criteria. You get the question, the \
answer the system gave and a reference answer, which may be empty (then there is none and you \
grade without it). Read the criteria and the evaluation steps, follow the steps, then give one \
integer score: the lowest score when the answer does not meet the criteria at all, the highest \
when it meets them fully.";

impl GEvalOptions {
    /// Checks the options; errors name `metric`.
    pub fn validate(&self, metric: &str) -> crate::Result<()> {
        let bad = |what: String| Err(crate::Error::options(format!("{metric}: {what}")));
        if self.criteria.trim().is_empty() {
            return bad("criteria is required: say what to judge (criteria=\"...\")".into());
        }
        // The width in i128: at the i64 extremes the difference does not fit an i64.
        let width = i128::from(self.score_max) - i128::from(self.score_min);
        if !(1..=100).contains(&width) {
            return bad(format!(
                "score_min must be below score_max, at most 100 apart; got {} and {}",
                self.score_min, self.score_max
            ));
        }
        if self.evaluation_steps.iter().any(|s| s.trim().is_empty()) {
            return bad("evaluation_steps holds an empty step".into());
        }
        Ok(())
    }

    /// The rubric card these options make (id `g_eval`; the criteria, steps and range are its
    /// text, the score an integer in the range).
    pub fn card(&self) -> crate::Result<JudgeTemplate> {
        self.validate("g_eval")?;
        let mut system = format!("{RUBRIC}\n\nCriteria:\n{}\n", self.criteria.trim());
        if !self.evaluation_steps.is_empty() {
            system.push_str("\nEvaluation steps:\n");
            for (i, step) in self.evaluation_steps.iter().enumerate() {
                system.push_str(&format!("{}. {}\n", i + 1, step.trim()));
            }
        }
        system.push_str(&format!(
            "\nFields of the reply:\n- reason: one or two sentences explaining the score, citing the answer;\n\
             - score: an integer from {} (worst) to {} (best).\n",
            self.score_min, self.score_max
        ));
        let scores: Vec<i64> = (self.score_min..=self.score_max).collect();
        let mut card = JudgeTemplate::from_json(json!({
            "id": "g_eval",
            "version": "1",
            "inputs": ["question", "answer", "reference"],
            "system": system,
            "schema": {
                "type": "object",
                "required": ["reason", SCORE_FIELD],
                "additionalProperties": false,
                "properties": {
                    "reason": {"type": "string"},
                    SCORE_FIELD: {"type": "integer", "enum": scores}
                }
            }
        }))?;
        if self.logprobs {
            card.weighted_score = Some(SCORE_FIELD.to_string());
        }
        Ok(card)
    }

    /// A score in the range mapped to [0, 1].
    pub fn normalised(&self, score: f64) -> f64 {
        (score - self.score_min as f64) / (self.score_max - self.score_min) as f64
    }
}

/// The signature of `g_eval` under `options`: the judge's, with the rubric's hash.
pub fn signature(options: &GEvalOptions) -> String {
    match options.card() {
        Ok(card) => format!(
            "g_eval|range:{}-{}|logprobs:{}|{}",
            options.score_min,
            options.score_max,
            options.logprobs,
            options.judge.signature(&card, 1)
        ),
        Err(e) => e.to_string(),
    }
}

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

/// The probability-weighted score of `field` in a reply's `content`, from its `tokens`: the
/// token that starts the field's value (the concatenated token texts must spell `content`), and
/// among its candidates those that are integers in `min..=max` with a probability of at least
/// [`MIN_TOKEN_PROBABILITY`]. `None` when the value or the candidates cannot be found.
pub fn weighted_score(
    content: &str,
    tokens: &[(String, Vec<TokenChoice>)],
    field: &str,
    min: i64,
    max: i64,
) -> Option<f64> {
    let at = value_offset(content, field)?;
    let mut offset = 0;
    let (_, candidates) = tokens.iter().find(|(token, _)| {
        let start = offset;
        offset += token.len();
        start <= at && at < offset
    })?;
    let (mut weighted, mut total) = (0.0, 0.0);
    for choice in candidates {
        let Ok(value) = choice.token.trim().parse::<i64>() else {
            continue;
        };
        if (min..=max).contains(&value) && choice.probability >= MIN_TOKEN_PROBABILITY {
            weighted += value as f64 * choice.probability;
            total += choice.probability;
        }
    }
    (total > 0.0).then(|| weighted / total)
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
    use serde_json::json;

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

    use super::*;

    #[test]
    fn the_rubric_is_part_of_the_prompt_hash() {
        let a = GEvalOptions {
            criteria: "Correct?".into(),
            ..GEvalOptions::default()
        };
        let b = GEvalOptions {
            criteria: "Concise?".into(),
            ..a.clone()
        };
        assert_ne!(
            a.card().unwrap().prompt_hash(),
            b.card().unwrap().prompt_hash()
        );
        assert!(GEvalOptions::default().card().is_err());
        let bad_range = GEvalOptions {
            score_min: 5,
            score_max: 5,
            ..a
        };
        assert!(bad_range.validate("g_eval").is_err());
        let extremes = GEvalOptions {
            criteria: "x".into(),
            score_min: i64::MIN,
            score_max: i64::MAX,
            ..GEvalOptions::default()
        };
        let e = extremes.validate("g_eval").unwrap_err().to_string();
        assert!(e.contains("at most 100 apart"), "{e}");
    }

    #[test]
    fn the_score_token_is_found_by_its_offset() {
        let content = "{\"score\": 10, \"reason\": \"score 3 of 10\"}";
        assert_eq!(value_offset(content, "score"), Some(10));
        let tokens = vec![
            ("{\"score\": ".to_string(), vec![]),
            (
                "10".to_string(),
                vec![
                    TokenChoice::new("10", 0.5),
                    TokenChoice::new("9", 0.495),
                    TokenChoice::new(" 8", 0.004),
                    TokenChoice::new("x", 0.001),
                ],
            ),
            (", \"reason\": \"score 3 of 10\"}".to_string(), vec![]),
        ];
        // 8 is under the 1 % cut; "x" is no score.
        let w = weighted_score(content, &tokens, "score", 0, 10).unwrap();
        assert!((w - (10.0 * 0.5 + 9.0 * 0.495) / 0.995).abs() < 1e-12);
        assert_eq!(weighted_score(content, &tokens[..1], "score", 0, 10), None);
    }
}
