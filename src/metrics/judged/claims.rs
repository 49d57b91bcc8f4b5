//! Atomic claims of an answer, so that each can be checked against its citation.
//!
//! The default splitter is the judge (the `split_claims` card). The rule-based splitter
//! ([`split_claims_by_rules`]) needs no model and is what `citation_support` uses to flag a
//! compound claim:
//!
//! 1. the text is cut into sentences after `.`, `!` or `?` followed by whitespace and an upper-case
//!    letter, digit or quote (not after a single letter or a common abbreviation such as "e.g.",
//!    "Dr.", "U.S.");
//! 2. each sentence is cut at semicolons;
//! 3. each piece is cut before a coordinating `and`, `but`, `while`, `whereas` or `although`
//!    (with or without a comma before it) when both sides have at least three words; the
//!    conjunction is dropped;
//! 4. pieces are trimmed of whitespace and trailing `.,;:`; empty pieces are dropped.
//!
//! ```
//! use polars_rag::metrics::judged::claims::split_claims_by_rules;
//! let claims = split_claims_by_rules(
//!     "The James Webb Space Telescope launched on December 25, 2021 and reached L2 in January 2022. \
//!      It is run by NASA; ESA and CSA are partners.",
//! );
//! assert_eq!(claims, [
//!     "The James Webb Space Telescope launched on December 25, 2021",
//!     "reached L2 in January 2022",
//!     "It is run by NASA",
//!     "ESA and CSA are partners",
//! ]);
//! ```

use serde::{Deserialize, Serialize};

use crate::engines::judge::JudgeSettings;

/// How `split_claims` splits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimSplitter {
    /// The judge, with the `split_claims` card.
    #[default]
    Judge,
    /// [`split_claims_by_rules`], no model.
    Rules,
}

crate::settings::from_str_by_serde!(ClaimSplitter);

/// Options of `split_claims`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SplitClaimsOptions {
    /// The judge (used when `method` is `judge`).
    pub judge: JudgeSettings,
    /// `judge` (default) or `rules`.
    pub method: ClaimSplitter,
}

/// The signature of `split_claims` under `options`.
pub fn signature(options: &SplitClaimsOptions) -> String {
    match options.method {
        ClaimSplitter::Rules => "split_claims|method:rules|version:polars-rag-1".to_string(),
        ClaimSplitter::Judge => {
            match crate::engines::judge::template::JudgeTemplate::builtin("split_claims") {
                Ok(card) => format!("split_claims|{}", options.judge.signature(card, 1)),
                Err(e) => e.to_string(),
            }
        }
    }
}

/// The claims of a judge's `split_claims` reply (`{"claims": [..]}`), trimmed, empty ones dropped.
pub fn claims_of_reply(reply: &serde_json::Value) -> Vec<String> {
    reply
        .get("claims")
        .and_then(serde_json::Value::as_array)
        .map(|claims| {
            claims
                .iter()
                .filter_map(serde_json::Value::as_str)
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

const ABBREVIATIONS: &[&str] = &[
    "e.g", "i.e", "etc", "vs", "dr", "mr", "mrs", "ms", "prof", "st", "no", "fig", "approx", "u.s",
    "u.k", "inc", "ltd", "co", "jr", "sr", "cf", "al",
];

const CONJUNCTIONS: &[&str] = &["and", "but", "while", "whereas", "although"];

/// Splits `text` into claims by the rules of the module documentation.
pub fn split_claims_by_rules(text: &str) -> Vec<String> {
    let mut claims = Vec::new();
    for sentence in sentences(text) {
        for piece in sentence.split(';') {
            split_at_conjunctions(piece, &mut claims);
        }
    }
    claims
}

/// Sentences of `text` (rule 1).
fn sentences(text: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &(at, c)) in chars.iter().enumerate() {
        if !matches!(c, '.' | '!' | '?') {
            continue;
        }
        let Some(&(_, next)) = chars.get(i + 1) else {
            continue;
        };
        if !next.is_whitespace() {
            continue;
        }
        let after = chars[i + 1..]
            .iter()
            .map(|&(_, c)| c)
            .find(|c| !c.is_whitespace());
        if !after.is_some_and(|c| {
            c.is_uppercase() || c.is_ascii_digit() || matches!(c, '"' | '\'' | '“' | '‘')
        }) {
            continue;
        }
        if c == '.' {
            let word: String = text[start..at]
                .rsplit(|c: char| c.is_whitespace() || c == '(')
                .next()
                .unwrap_or("")
                .to_lowercase();
            if word.chars().count() == 1 || ABBREVIATIONS.contains(&word.as_str()) {
                continue;
            }
        }
        out.push(&text[start..at + c.len_utf8()]);
        start = at + c.len_utf8();
    }
    out.push(&text[start..]);
    out
}

/// Rule 3 and 4 on one piece.
fn split_at_conjunctions(piece: &str, claims: &mut Vec<String>) {
    let words: Vec<&str> = piece.split_whitespace().collect();
    let cut = (3..words.len().saturating_sub(2)).find(|&i| {
        let word = words[i].to_lowercase();
        // At least three words after the conjunction.
        CONJUNCTIONS.contains(&word.as_str()) && words.len() - i > 3
    });
    match cut {
        Some(i) => {
            let mut head = words[..i].join(" ");
            if head.ends_with(',') {
                head.pop();
            }
            push_claim(&head, claims);
            split_at_conjunctions(&words[i + 1..].join(" "), claims);
        }
        None => push_claim(&words.join(" "), claims),
    }
}

fn push_claim(text: &str, claims: &mut Vec<String>) {
    let claim = text.trim().trim_end_matches(['.', ',', ';', ':']).trim();
    if !claim.is_empty() {
        claims.push(claim.to_string());
    }
}

impl crate::metrics::Section for SplitClaimsOptions {
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
    fn abbreviations_initials_and_short_conjunctions_do_not_split() {
        assert_eq!(
            split_claims_by_rules(
                "Dr. Smith, e.g. in 2020, used J. R. Tolkien's notes. Salt and pepper."
            ),
            [
                "Dr. Smith, e.g. in 2020, used J. R. Tolkien's notes",
                "Salt and pepper"
            ]
        );
        assert!(split_claims_by_rules("  ").is_empty());
        assert_eq!(
            split_claims_by_rules("Revenue grew 12%, but costs rose by 20% too."),
            ["Revenue grew 12%", "costs rose by 20% too"]
        );
        assert_eq!(
            split_claims_by_rules("One! Two? Three."),
            ["One!", "Two?", "Three"]
        );
    }

    #[test]
    fn judge_replies_are_trimmed() {
        let reply = serde_json::json!({"claims": [" A. ", "", "B"]});
        assert_eq!(claims_of_reply(&reply), ["A.", "B"]);
        assert!(claims_of_reply(&serde_json::json!({})).is_empty());
    }
}

/// How a claim's cited span was found (see [`cited_span_of_claim`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CitedBy {
    /// The claim quotes a passage, found verbatim in this source.
    Quote,
    /// The claim carries a citation marker `[n]` naming the n-th source (1-based).
    Marker,
    /// Neither: the claim is audited against all of the answer's sources.
    Sources,
}

impl CitedBy {
    /// The name the claims table gives it: `quote`, `marker` or `sources`.
    pub fn as_str(self) -> &'static str {
        match self {
            CitedBy::Quote => "quote",
            CitedBy::Marker => "marker",
            CitedBy::Sources => "sources",
        }
    }
}

/// The span a claim of an answer is audited against, and how it was found: the source that
/// holds, verbatim, the first passage the claim quotes (quoted spans of at least `min_words`
/// words, `style` as `quoted_spans` reads them); else the source that the claim's first
/// citation marker `[n]` names (1-based, within the sources); else all of the sources, joined
/// by blank lines. `None` when the answer has no sources.
///
/// ```
/// use polars_rag::metrics::judged::claims::{cited_span_of_claim, CitedBy};
/// use polars_rag::text::quotes::QuoteStyle;
/// let sources = ["Paris is the capital of France.", "Lyon lies on the Rhône."];
/// let cite = |claim| cited_span_of_claim(claim, &sources, QuoteStyle::default(), 2).unwrap();
/// assert_eq!(cite("It says \"lies on the Rhône\""), (sources[1].to_string(), CitedBy::Quote));
/// assert_eq!(cite("Paris is the capital [1]"), (sources[0].to_string(), CitedBy::Marker));
/// assert_eq!(cite("France has a capital [7]").1, CitedBy::Sources); // no 7th source
/// assert_eq!(cite("France has a capital").0, sources.join("\n\n"));
/// ```
pub fn cited_span_of_claim(
    claim: &str,
    sources: &[&str],
    style: crate::text::quotes::QuoteStyle,
    min_words: usize,
) -> Option<(String, CitedBy)> {
    if sources.is_empty() {
        return None;
    }
    for quoted in crate::text::quotes::extract_quoted_spans(claim, style, min_words) {
        if let Some(source) = sources.iter().find(|s| s.contains(quoted)) {
            return Some((source.to_string(), CitedBy::Quote));
        }
    }
    if let Some(n) = first_marker(claim)
        && let Some(source) = n.checked_sub(1).and_then(|i| sources.get(i))
    {
        return Some((source.to_string(), CitedBy::Marker));
    }
    Some((sources.join("\n\n"), CitedBy::Sources))
}

/// The number of the first citation marker `[n]` of `text` (digits only between the brackets).
fn first_marker(text: &str) -> Option<usize> {
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 && after[digits..].starts_with(']') {
            return after[..digits].parse().ok();
        }
        rest = after;
    }
    None
}
