//! Nugget evaluation with a judge, as the TREC 2024 RAG track's AutoNuggetizer does it (castorini's
//! nuggetizer), in two metrics:
//!
//! * `create_nuggets`: a question's nuggets (atomic facts a good answer contains) written from its
//!   sources (reference answers or relevant passages), updated window by window of
//!   [`CreateNuggetsOptions::window`] sources as nuggetizer does (the `create_nuggets` card), then
//!   each labelled `vital` or `okay` (the `nugget_importance` card), ranked vital first (in the
//!   order written) and cut to
//!   [`CreateNuggetsOptions::max_nuggets`] ([`rank_nuggets`]). Meant to be run once and written
//!   into the golden table, so the nuggets do not change between the runs being compared.
//! * `nugget_assignment`: each nugget of a question assessed against an answer (`support`,
//!   `partial_support`, `not_support`; the `nugget_support` card) and the four nugget scores of
//!   [`crate::metrics::nuggets`].
//!
//! Unlike nuggetizer, which labels and assesses ten nuggets per call, each nugget is its own
//! question: a label then does not depend on which nuggets share its window, each is cached on
//! its own, and a reply cannot label the wrong number of nuggets (small models often do).
//!
//! ```
//! use polars_rag::metrics::judged::nuggets::{rank_nuggets, Nugget};
//! let written = vec![
//!     Nugget::new("Paris is the capital", "okay"),
//!     Nugget::new("France is in Europe", "vital"),
//!     Nugget::new("The Seine flows through Paris", "vital"),
//! ];
//! let kept = rank_nuggets(written, 2);
//! assert_eq!(kept[0].text, "France is in Europe");
//! assert_eq!(kept[1].text, "The Seine flows through Paris");
//! ```

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engines::judge::template::JudgeTemplate;
use crate::engines::judge::JudgeSettings;

/// Options of `create_nuggets`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CreateNuggetsOptions {
    /// The judge.
    pub judge: JudgeSettings,
    /// The most nuggets kept per question (nuggetizer: 30).
    pub max_nuggets: usize,
    /// Sources read per call (nuggetizer: 10).
    pub window: usize,
}

impl Default for CreateNuggetsOptions {
    fn default() -> Self {
        CreateNuggetsOptions {
            judge: JudgeSettings::default(),
            max_nuggets: 30,
            window: 10,
        }
    }
}

/// Options of `nugget_assignment`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NuggetAssignmentOptions {
    /// The judge.
    pub judge: JudgeSettings,
}

fn cards_signature(id: &str, cards: &[&str], judge: &JudgeSettings, extra: &str) -> String {
    let found: crate::Result<Vec<&JudgeTemplate>> =
        cards.iter().map(|c| JudgeTemplate::builtin(c)).collect();
    match found {
        Ok(found) => format!(
            "{id}|{}{extra}|version:nuggetizer-0.0.5",
            judge.signature_of_cards(&found, 1)
        ),
        Err(e) => e.to_string(),
    }
}

/// The signature of `create_nuggets` under `options`: both cards, the cut and the window.
pub fn create_signature(options: &CreateNuggetsOptions) -> String {
    cards_signature(
        "create_nuggets",
        &["create_nuggets", "nugget_importance"],
        &options.judge,
        &format!(
            "|max_nuggets:{}|window:{}",
            options.max_nuggets, options.window
        ),
    )
}

/// The signature of `nugget_assignment` under `options`.
pub fn assignment_signature(options: &NuggetAssignmentOptions) -> String {
    cards_signature("nugget_assignment", &["nugget_support"], &options.judge, "")
}

/// One nugget: its text and importance (`vital` or `okay`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Nugget {
    /// The atomic fact.
    pub text: String,
    /// `vital` or `okay`.
    pub importance: String,
}

impl Nugget {
    /// A nugget of this text and importance.
    pub fn new(text: &str, importance: &str) -> Self {
        Nugget {
            text: text.to_string(),
            importance: importance.to_string(),
        }
    }
}

/// nuggetizer's ranking of labelled nuggets: the vital ones first, each group in the order
/// written, then the first `max_nuggets`.
pub fn rank_nuggets(mut nuggets: Vec<Nugget>, max_nuggets: usize) -> Vec<Nugget> {
    // A stable sort keeps the written order within each group, as nuggetizer's key does.
    nuggets.sort_by_key(|n| n.importance != "vital");
    nuggets.truncate(max_nuggets);
    nuggets
}

/// A text without a list marker in front (`3. `, `3) `, `- `, `* `): judges copy the numbers of
/// the numbered lists they are shown into the nuggets they write.
fn without_list_marker(text: &str) -> &str {
    let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let rest = &text[digits..];
    let unmarked = if digits > 0 {
        rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") "))
    } else {
        text.strip_prefix("- ").or_else(|| text.strip_prefix("* "))
    };
    unmarked.map_or(text, str::trim_start)
}

/// The nuggets of a `create_nuggets` reply: its non-blank texts, trimmed and without a list
/// marker in front, the first of any repeated text kept, at most `max_nuggets` (nuggetizer keeps
/// the first ones after every call).
pub fn nuggets_of_reply(reply: &Value, max_nuggets: usize) -> Vec<String> {
    let mut nuggets: Vec<String> = Vec::new();
    // Repeats are found by hashing: a long reply is read in linear time.
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for text in reply
        .get("nuggets")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|t| without_list_marker(t.trim()))
        .filter(|t| !t.is_empty())
    {
        if nuggets.len() >= max_nuggets {
            break;
        }
        if seen.insert(text) {
            nuggets.push(text.to_string());
        }
    }
    nuggets
}

/// The `label` of a reply, trimmed and lowercased, when it is one of `allowed`; else an error
/// naming what the judge gave as `what`.
fn label_of_reply(reply: &Value, allowed: &[&str], what: &str) -> crate::Result<String> {
    let label = reply
        .get("label")
        .and_then(Value::as_str)
        .map(|l| l.trim().to_ascii_lowercase())
        .unwrap_or_default();
    if allowed.contains(&label.as_str()) {
        Ok(label)
    } else {
        Err(crate::Error::input(format!(
            "the judge gave the {what} {label:?} ({})",
            allowed.join(" or ")
        )))
    }
}

/// The label of a `nugget_importance` reply: `vital` or `okay`.
pub fn importance_of_reply(reply: &Value) -> crate::Result<String> {
    label_of_reply(reply, &["vital", "okay"], "importance")
}

/// The label of a `nugget_support` reply: `support`, `partial_support` or `not_support`.
pub fn support_of_reply(reply: &Value) -> crate::Result<String> {
    label_of_reply(
        reply,
        &["support", "partial_support", "not_support"],
        "assessment",
    )
}

/// Numbered lines, `1. first`, as the cards read lists.
pub fn numbered(items: &[&str]) -> String {
    items
        .iter()
        .enumerate()
        .map(|(k, item)| format!("{}. {}", k + 1, item.replace('\n', " ")))
        .collect::<Vec<_>>()
        .join("\n")
}

impl crate::metrics::Section for CreateNuggetsOptions {
    fn signature(&self, _id: &str) -> String {
        create_signature(self)
    }

    fn judge_settings(&mut self) -> Option<&mut crate::engines::judge::JudgeSettings> {
        Some(&mut self.judge)
    }
}

impl crate::metrics::Section for NuggetAssignmentOptions {
    fn signature(&self, _id: &str) -> String {
        assignment_signature(self)
    }

    fn judge_settings(&mut self) -> Option<&mut crate::engines::judge::JudgeSettings> {
        Some(&mut self.judge)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ranking_is_vital_first_in_written_order_then_cut() {
        let n = |t: &str, i: &str| Nugget::new(t, i);
        let ranked = rank_nuggets(
            vec![
                n("a", "okay"),
                n("b", "vital"),
                n("c", "okay"),
                n("d", "vital"),
            ],
            3,
        );
        let texts: Vec<&str> = ranked.iter().map(|n| n.text.as_str()).collect();
        assert_eq!(texts, ["b", "d", "a"]);
    }

    #[test]
    fn replies_are_read_or_refused_with_the_reason() {
        let r = json!({"nuggets": [" x ", "", "2. y", "x", "z"]});
        assert_eq!(nuggets_of_reply(&r, 2), ["x", "y"]);
        let marked = json!({"nuggets": ["1) a", "- b", "1937. c", "1937 d", "-e"]});
        assert_eq!(
            nuggets_of_reply(&marked, 9),
            ["a", "b", "c", "1937 d", "-e"]
        );
        assert_eq!(
            importance_of_reply(&json!({"label": " Vital"})).unwrap(),
            "vital"
        );
        let bad = importance_of_reply(&json!({"label": "maybe"})).unwrap_err();
        assert!(bad.to_string().contains("\"maybe\" (vital or okay)"));
        assert_eq!(
            support_of_reply(&json!({"label": "partial_support"})).unwrap(),
            "partial_support"
        );
        assert!(support_of_reply(&json!({"label": "yes"})).is_err());
        assert_eq!(numbered(&["a\nb", "c"]), "1. a b\n2. c");
    }
}
