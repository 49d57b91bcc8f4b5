//! `citation_recall_precision`: ALCE's citation recall and precision ([`crate::metrics::alce`])
//! with a judge as the entailment checker, through the built-in `entailment` card (a premise, a
//! hypothesis; the reply's `label` is `entailment`, `neutral` or `contradiction`). Only the
//! questions ALCE's algorithm asks are asked, in rounds: every sentence's joint question first,
//! then single passages where the joint set entails and has more than one citation, then
//! leave-one-out sets where a single passage does not.
//!
//! ```
//! use polars_rag::metrics::judged::citation_recall::entailed;
//! assert_eq!(entailed(&serde_json::json!({"label": "entailment", "reason": "stated"})).unwrap(), true);
//! assert_eq!(entailed(&serde_json::json!({"label": "neutral", "reason": ""})).unwrap(), false);
//! ```

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engines::judge::template::JudgeTemplate;
use crate::engines::judge::JudgeSettings;

/// Options of `citation_recall_precision`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CitationRecallOptions {
    /// The judge.
    pub judge: JudgeSettings,
    /// Citations of a sentence asked about (ALCE's `at_most_citations`); the rest are ignored.
    pub at_most_citations: usize,
    /// ALCE's QAMPARI reading (`compute_autoais(..., qampari=True)`): the answer is a
    /// comma-separated list and each item is checked after the question
    /// ([`crate::metrics::alce::Reading::Qampari`]); the question column is then required.
    pub qampari: bool,
}

impl Default for CitationRecallOptions {
    fn default() -> Self {
        CitationRecallOptions {
            judge: JudgeSettings::default(),
            at_most_citations: 3,
            qampari: false,
        }
    }
}

impl CitationRecallOptions {
    /// Checks the options.
    pub fn validate(&self) -> crate::Result<()> {
        if self.at_most_citations == 0 {
            return Err(crate::Error::options(
                "citation_recall_precision: at_most_citations must be at least 1, got 0",
            ));
        }
        Ok(())
    }
}

/// The signature of `citation_recall_precision` under `options`.
pub fn signature(options: &CitationRecallOptions) -> String {
    match JudgeTemplate::builtin("entailment") {
        Ok(card) => format!(
            "citation_recall_precision|at_most:{}{}|{}|version:alce-246c476",
            options.at_most_citations,
            if options.qampari { "|qampari" } else { "" },
            options.judge.signature(card, 1)
        ),
        Err(e) => e.to_string(),
    }
}

/// Whether a validated reply of the `entailment` card says the premise entails the hypothesis.
pub fn entailed(reply: &Value) -> crate::Result<bool> {
    match reply.get("label").and_then(Value::as_str) {
        Some("entailment") => Ok(true),
        Some("neutral" | "contradiction") => Ok(false),
        _ => Err(crate::Error::new(
            crate::ErrorKind::InvalidInput,
            "the reply's `label` is not entailment, neutral or contradiction",
        )),
    }
}

impl crate::metrics::Section for CitationRecallOptions {
    fn signature(&self, _id: &str) -> String {
        signature(self)
    }

    fn judge_settings(&mut self) -> Option<&mut crate::engines::judge::JudgeSettings> {
        Some(&mut self.judge)
    }
}
