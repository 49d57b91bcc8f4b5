//! `relevance_grade`: how well a passage answers a question, graded 0–3 by a judge as the TREC
//! 2024 RAG track's automatic relevance assessor (UMBRELA) grades it, in this project's own
//! prompt: 3 the passage is about the question and holds the answer; 2 it holds an answer that is
//! incomplete, unclear or buried; 1 on topic without the answer; 0 unrelated. The grades are
//! graded relevance judgements, so a run without human qrels gets judgements the ranked metrics
//! read as they read qrels (`relevance_level` sets which grade counts as relevant).
//!
//! ```
//! use polars_rag::metrics::judged::relevance::score_reply;
//! let g = score_reply(&serde_json::json!({"grade": 2, "reason": "The answer is there, unclear."})).unwrap();
//! assert_eq!(g.grade, 2);
//! assert!(score_reply(&serde_json::json!({"grade": 5, "reason": ""})).is_err());
//! ```

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engines::judge::template::JudgeTemplate;
use crate::engines::judge::JudgeSettings;

/// Options of `relevance_grade`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RelevanceGradeOptions {
    /// The judge.
    pub judge: JudgeSettings,
}

/// The signature of `relevance_grade` under `options`.
pub fn signature(options: &RelevanceGradeOptions) -> String {
    match JudgeTemplate::builtin("relevance_grade") {
        Ok(card) => format!("relevance_grade|{}", options.judge.signature(card, 1)),
        Err(e) => e.to_string(),
    }
}

/// One graded passage.
#[derive(Clone, Debug, PartialEq)]
pub struct RelevanceGrade {
    /// The grade, 0 to 3.
    pub grade: i64,
    /// The judge's explanation.
    pub reason: String,
}

/// Reads one validated reply of the `relevance_grade` card; a grade that is not an integer from
/// 0 to 3 is an [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) error saying so.
pub fn score_reply(reply: &Value) -> crate::Result<RelevanceGrade> {
    let grade = reply
        .get("grade")
        .and_then(Value::as_i64)
        .filter(|g| (0..=3).contains(g))
        .ok_or_else(|| {
            crate::Error::new(
                crate::ErrorKind::InvalidInput,
                "the reply's `grade` is not an integer from 0 to 3",
            )
        })?;
    let reason = reply
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    Ok(RelevanceGrade { grade, reason })
}

impl crate::metrics::Section for RelevanceGradeOptions {
    fn signature(&self, _id: &str) -> String {
        signature(self)
    }

    fn judge_settings(&mut self) -> Option<&mut crate::engines::judge::JudgeSettings> {
        Some(&mut self.judge)
    }
}
