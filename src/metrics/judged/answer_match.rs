//! `answer_match`: does a system's answer match the reference answer to its question? The
//! judge replies `{"match": bool, "reasoning": str}` (datapizza's LLM-as-judge pattern, in this
//! project's own prompt).
//!
//! ```
//! use polars_rag::metrics::judged::answer_match::score_reply;
//! let m = score_reply(&serde_json::json!({"match": true, "reasoning": "Same city."})).unwrap();
//! assert!(m.matched);
//! assert_eq!(m.reasoning, "Same city.");
//! ```

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engines::judge::template::JudgeTemplate;
use crate::engines::judge::JudgeSettings;

/// Options of `answer_match`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AnswerMatchOptions {
    /// The judge.
    pub judge: JudgeSettings,
}

/// The signature of `answer_match` under `options`.
pub fn signature(options: &AnswerMatchOptions) -> String {
    match JudgeTemplate::builtin("answer_match") {
        Ok(card) => format!("answer_match|{}", options.judge.signature(card, 1)),
        Err(e) => e.to_string(),
    }
}

/// One judged answer.
#[derive(Clone, Debug, PartialEq)]
pub struct AnswerMatch {
    /// The judge's decision.
    pub matched: bool,
    /// Its explanation.
    pub reasoning: String,
}

/// Scores one validated reply of the `answer_match` card; a reply without a boolean `match` is
/// an [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) error saying so.
pub fn score_reply(reply: &Value) -> crate::Result<AnswerMatch> {
    score(reply).map_err(|e| crate::Error::new(crate::ErrorKind::InvalidInput, e))
}

fn score(reply: &Value) -> Result<AnswerMatch, String> {
    let matched = reply
        .get("match")
        .and_then(Value::as_bool)
        .ok_or("the reply's `match` is not a boolean")?;
    let reasoning = reply
        .get("reasoning")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    Ok(AnswerMatch { matched, reasoning })
}

impl crate::metrics::Section for AnswerMatchOptions {
    fn signature(&self, _id: &str) -> String {
        signature(self)
    }

    fn judge_settings(&mut self) -> Option<&mut crate::engines::judge::JudgeSettings> {
        Some(&mut self.judge)
    }
}
