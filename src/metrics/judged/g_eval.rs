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
//! use polars_rag::engines::judge::logprobs::field_candidates;
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
//! let candidates = field_candidates(content, &tokens, "score").unwrap();
//! let weighted = weighted_score(candidates, 1, 5).unwrap();
//! assert!((weighted - 3.8).abs() < 1e-12);
//! assert!((options.normalised(weighted) - 0.7).abs() < 1e-12);
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::engines::judge::logprobs;
pub use crate::engines::judge::logprobs::TokenChoice;
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

/// G-Eval's probability-weighted score over the `candidates` the judge weighed where it wrote
/// its score: those that are integers in `min..=max` with a probability of at least
/// [`MIN_TOKEN_PROBABILITY`], weighted by their probability. `None` when no candidate counts.
pub fn weighted_score(candidates: &[TokenChoice], min: i64, max: i64) -> Option<f64> {
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

/// The probability-weighted value of the template's weighted field in a judged `reply`, from
/// the candidates the engine recorded beside it, over the integers the field's schema allows
/// (its `enum`, else `minimum..=maximum`). `None` without candidates (the server gave no
/// log-probabilities) or when none counts.
pub fn weighted_of_reply(reply: &Value, template: &JudgeTemplate) -> Option<f64> {
    let field = template.weighted_score.as_deref()?;
    let (min, max) = score_range(template, field)?;
    match logprobs::recorded(reply) {
        Some(candidates) => weighted_score(&candidates, min, max),
        // A reply cached before the candidates were recorded carries its weighted value.
        None => reply.get(LEGACY_WEIGHTED_SCORE).and_then(Value::as_f64),
    }
}

/// Where replies cached by earlier versions of the engine kept their weighted value.
const LEGACY_WEIGHTED_SCORE: &str = "_weighted_score";

/// The integers integer field `field` of the template's schema allows: its `enum`'s least and
/// greatest, else `minimum..=maximum`.
fn score_range(template: &JudgeTemplate, field: &str) -> Option<(i64, i64)> {
    let spec = template.schema.pointer(&format!("/properties/{field}"))?;
    match spec.get("enum").and_then(Value::as_array) {
        Some(values) => {
            let ints: Vec<i64> = values.iter().filter_map(Value::as_i64).collect();
            Some((*ints.iter().min()?, *ints.iter().max()?))
        }
        None => Some((
            spec.get("minimum")?.as_i64()?,
            spec.get("maximum")?.as_i64()?,
        )),
    }
}

impl crate::metrics::Section for GEvalOptions {
    fn signature(&self, _id: &str) -> String {
        signature(self)
    }

    fn judge_settings(&mut self) -> Option<&mut crate::engines::judge::JudgeSettings> {
        Some(&mut self.judge)
    }
}

#[cfg(test)]
mod tests {
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
    fn candidates_under_the_cut_or_not_scores_do_not_count() {
        let candidates = vec![
            TokenChoice::new("10", 0.5),
            TokenChoice::new("9", 0.495),
            TokenChoice::new(" 8", 0.004),
            TokenChoice::new("x", 0.001),
        ];
        // 8 is under the 1 % cut; "x" is no score.
        let w = weighted_score(&candidates, 0, 10).unwrap();
        assert!((w - (10.0 * 0.5 + 9.0 * 0.495) / 0.995).abs() < 1e-12);
        assert_eq!(weighted_score(&[], 0, 10), None);
    }
}
