//! `claim_checks`: RAGChecker's claim-level evaluation with a judge doing both of its model's
//! jobs: the claims of the response and of the reference answer are extracted by the judge (the
//! `split_claims` card), then each is checked by the judge (the `entailment` card) against the
//! other answer and against each retrieved chunk, and the eleven scores follow from the four
//! verdict tables by RAGChecker's rule ([`crate::metrics::claim_checks`]). The verdicts are kept
//! with the scores, so a user can see which claim made a score.
//!
//! ```
//! use polars_rag::metrics::judged::claim_checks::{signature, ClaimChecksOptions};
//! assert!(signature(&ClaimChecksOptions::default()).starts_with("claim_checks|"));
//! ```

use serde::{Deserialize, Serialize};

use crate::engines::judge::template::JudgeTemplate;
use crate::engines::judge::JudgeSettings;

/// Options of `claim_checks`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClaimChecksOptions {
    /// The judge.
    pub judge: JudgeSettings,
}

/// The signature of `claim_checks` under `options`: both cards it asks.
pub fn signature(options: &ClaimChecksOptions) -> String {
    let cards: crate::Result<Vec<&JudgeTemplate>> = ["split_claims", "entailment"]
        .iter()
        .map(|id| JudgeTemplate::builtin(id))
        .collect();
    match cards {
        Ok(cards) => format!(
            "claim_checks|{}|version:ragchecker-0.1.9",
            options.judge.signature_of_cards(&cards, 1)
        ),
        Err(e) => e.to_string(),
    }
}

impl crate::metrics::Section for ClaimChecksOptions {
    fn signature(&self, _id: &str) -> String {
        signature(self)
    }

    fn judge_settings(&mut self) -> Option<&mut crate::engines::judge::JudgeSettings> {
        Some(&mut self.judge)
    }
}
