//! `citation_support`: does a cited span support the claim it is attached to? The judge gives a
//! verdict (fully / partially / not supported), the supporting phrase, what is missing and the
//! basis of its decision; this module then makes the checks a reviewer would make by hand:
//!
//! * `phrase_verified`: the supporting phrase occurs in the cited span verbatim, up to runs of
//!   whitespace, and where (code points, end exclusive);
//! * `unverified_phrase`: a fully or partially supported verdict whose phrase is not in the span
//!   (or is empty) — the judge quoted something the source does not say;
//! * `lenient`: a fully supported verdict whose phrase holds less than `lenient_below` of the
//!   claim's keywords (names, numbers, content words; the `keyword_coverage` kernel);
//! * `echo`: a supporting verdict resting on a phrase of at most `echo_max_words` words;
//! * `compound_claim`: the claim splits into several by the rule-based claim splitter, so it
//!   should have been split before judging;
//! * with `strict`, the judge is asked twice (two cache entries) and the stricter verdict is kept
//!   (not < partially < fully), with `runs_agree` saying whether the two agreed.
//!
//! ```
//! use polars_rag::metrics::judged::citation_support::{score_reply, CitationSupportOptions, Verdict};
//! let reply = serde_json::json!({
//!     "verdict": "partially_supported",
//!     "supporting_phrase": "launched on  December 25, 2021",
//!     "missing_or_extra": "L2 arrival",
//!     "decision_basis": "The span gives the launch date only."
//! });
//! let support = score_reply(
//!     "JWST launched on December 25, 2021 and reached L2 in January 2022.",
//!     "JWST launched on December 25, 2021, on an Ariane 5.",
//!     &reply,
//!     &CitationSupportOptions::default(),
//! ).unwrap();
//! assert_eq!(support.verdict, Verdict::PartiallySupported);
//! assert_eq!(support.phrase_span, Some((5, 34)));
//! assert!(support.phrase_verified && !support.unverified_phrase);
//! assert!(support.compound_claim);
//! ```

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engines::judge::template::JudgeTemplate;
use crate::engines::judge::JudgeSettings;
use crate::metrics::lexical::keyword_coverage;

use super::claims::split_claims_by_rules;

/// A verdict, ordered from strictest to most lenient.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// The span does not establish the claim, or contradicts it.
    NotSupported,
    /// Some of the claim is supported, some is not.
    PartiallySupported,
    /// Every part of the claim follows from the span.
    FullySupported,
}

impl Verdict {
    /// The verdict's name in replies and outputs.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::NotSupported => "not_supported",
            Verdict::PartiallySupported => "partially_supported",
            Verdict::FullySupported => "fully_supported",
        }
    }

    /// Reads a verdict's name.
    pub fn parse(name: &str) -> Option<Verdict> {
        match name {
            "not_supported" => Some(Verdict::NotSupported),
            "partially_supported" => Some(Verdict::PartiallySupported),
            "fully_supported" => Some(Verdict::FullySupported),
            _ => None,
        }
    }
}

/// Options of `citation_support` (and `citation_precision`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CitationSupportOptions {
    /// The judge.
    pub judge: JudgeSettings,
    /// Ask twice and keep the stricter verdict.
    pub strict: bool,
    /// A fully supported verdict whose phrase covers less than this share of the claim's
    /// keywords is flagged `lenient`.
    pub lenient_below: f64,
    /// A supporting verdict whose phrase has at most this many words is flagged `echo`.
    pub echo_max_words: usize,
}

impl Default for CitationSupportOptions {
    fn default() -> Self {
        CitationSupportOptions {
            judge: JudgeSettings::default(),
            strict: false,
            lenient_below: 0.5,
            echo_max_words: 2,
        }
    }
}

impl CitationSupportOptions {
    /// Checks the options; errors name `metric`.
    pub fn validate(&self, metric: &str) -> crate::Result<()> {
        if !(self.lenient_below.is_finite() && (0.0..=1.0).contains(&self.lenient_below)) {
            return Err(crate::Error::options(format!(
                "{metric}: lenient_below must be in [0, 1], got {}",
                self.lenient_below
            )));
        }
        Ok(())
    }

    /// How many judgements a row gets.
    pub fn samples(&self) -> u32 {
        if self.strict {
            2
        } else {
            1
        }
    }
}

/// The signature of `citation_support` under `options`.
pub fn signature(options: &CitationSupportOptions) -> String {
    match JudgeTemplate::builtin("citation_support") {
        Ok(card) => format!(
            "citation_support|strict:{}|lenient_below:{}|echo_max_words:{}|{}",
            if options.strict { "yes" } else { "no" },
            options.lenient_below,
            options.echo_max_words,
            options.judge.signature(card, options.samples())
        ),
        Err(e) => e.to_string(),
    }
}

/// One judged (claim, cited_span) pair, with the automatic checks.
#[derive(Clone, Debug, PartialEq)]
pub struct CitationSupport {
    /// The verdict (the stricter of two with `strict`).
    pub verdict: Verdict,
    /// The judge's supporting phrase.
    pub supporting_phrase: String,
    /// What the span does not back.
    pub missing_or_extra: String,
    /// The judge's one-sentence reason.
    pub decision_basis: String,
    /// The phrase occurs in the span (whitespace normalised).
    pub phrase_verified: bool,
    /// Where, in code points of the span (end exclusive).
    pub phrase_span: Option<(usize, usize)>,
    /// A supporting verdict whose phrase is not in the span.
    pub unverified_phrase: bool,
    /// A fully supported verdict on a phrase with few of the claim's keywords.
    pub lenient: bool,
    /// A supporting verdict on a phrase of one or two words.
    pub echo: bool,
    /// The claim holds several facts.
    pub compound_claim: bool,
    /// With `strict`: whether the two judgements agreed.
    pub runs_agree: Option<bool>,
}

impl CitationSupport {
    /// Whether any check flags the row for a human to look at.
    pub fn flagged(&self) -> bool {
        self.unverified_phrase
            || self.lenient
            || self.echo
            || self.compound_claim
            || self.runs_agree == Some(false)
    }
}

/// Scores one validated reply of the `citation_support` card.
pub fn score_reply(
    claim: &str,
    cited_span: &str,
    reply: &Value,
    options: &CitationSupportOptions,
) -> crate::Result<CitationSupport> {
    let text = |name: &str| {
        reply
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let verdict = reply
        .get("verdict")
        .and_then(Value::as_str)
        .and_then(Verdict::parse)
        .ok_or_else(|| {
            crate::Error::reply(format!(
                "the reply's verdict is not one of the three: {}",
                reply.get("verdict").unwrap_or(&Value::Null)
            ))
        })?;
    let supporting_phrase = text("supporting_phrase");
    let phrase_span = find_normalised(cited_span, &supporting_phrase);
    let supports = verdict != Verdict::NotSupported;
    let words = supporting_phrase.split_whitespace().count();
    let lenient = verdict == Verdict::FullySupported
        && keyword_coverage(&supporting_phrase, claim)
            .is_some_and(|share| share < options.lenient_below);
    Ok(CitationSupport {
        verdict,
        missing_or_extra: text("missing_or_extra"),
        decision_basis: text("decision_basis"),
        phrase_verified: phrase_span.is_some(),
        phrase_span,
        unverified_phrase: supports && phrase_span.is_none(),
        lenient,
        echo: supports && (1..=options.echo_max_words).contains(&words),
        compound_claim: split_claims_by_rules(claim).len() > 1,
        runs_agree: None,
        supporting_phrase,
    })
}

/// Of two judgements of the same pair, the stricter (the first when they agree), with
/// `runs_agree` set.
pub fn stricter(first: CitationSupport, second: CitationSupport) -> CitationSupport {
    let agree = first.verdict == second.verdict;
    let mut kept = if second.verdict < first.verdict {
        second
    } else {
        first
    };
    kept.runs_agree = Some(agree);
    kept
}

/// Where `needle` occurs in `haystack` when runs of whitespace count as one space and leading or
/// trailing whitespace is ignored: code points of `haystack`, end exclusive. `None` for an
/// empty needle or no occurrence.
pub(crate) fn find_normalised(haystack: &str, needle: &str) -> Option<(usize, usize)> {
    let needle: Vec<&str> = needle.split_whitespace().collect();
    if needle.is_empty() {
        return None;
    }
    let needle = needle.join(" ");
    // The haystack with whitespace runs collapsed, and the code point each character came from.
    let mut collapsed = String::with_capacity(haystack.len());
    let mut origin: Vec<usize> = Vec::with_capacity(haystack.len());
    let mut in_space = false;
    for (i, c) in haystack.chars().enumerate() {
        if c.is_whitespace() {
            if !in_space && !collapsed.is_empty() {
                collapsed.push(' ');
                origin.push(i);
            }
            in_space = true;
        } else {
            collapsed.push(c);
            origin.push(i);
            in_space = false;
        }
    }
    let at = collapsed.find(&needle)?;
    let first = collapsed[..at].chars().count();
    let last = first + needle.chars().count() - 1;
    Some((origin[first], origin[last] + 1))
}

/// `citation_precision` of summed verdict counts `[fully, partially, not]`: the share fully
/// supported among the judged pairs, 0.0 when none was judged.
///
/// ```
/// use polars_rag::metrics::judged::citation_support::precision_of_sums;
/// assert_eq!(precision_of_sums(&[3.0, 1.0, 0.0]), 0.75);
/// assert_eq!(precision_of_sums(&[0.0, 0.0, 0.0]), 0.0);
/// ```
pub fn precision_of_sums(sums: &[f64]) -> f64 {
    let judged: f64 = sums.iter().take(3).sum();
    if judged > 0.0 {
        sums[0] / judged
    } else {
        0.0
    }
}

/// What summed verdict counts say, for a summary line.
pub fn describe_sums(sums: &[f64]) -> String {
    let count = |i: usize| sums.get(i).copied().unwrap_or(0.0) as u64;
    format!(
        "({} fully, {} partially, {} not supported)",
        count(0),
        count(1),
        count(2)
    )
}

impl crate::metrics::Section for CitationSupportOptions {
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
    use serde_json::json;

    fn reply(verdict: &str, phrase: &str) -> Value {
        json!({"verdict": verdict, "supporting_phrase": phrase, "missing_or_extra": "", "decision_basis": "b"})
    }

    #[test]
    fn phrases_are_found_across_whitespace_in_code_points() {
        assert_eq!(find_normalised("é  a\n b c", "a b"), Some((3, 7)));
        assert_eq!(find_normalised("abc", "  "), None);
        assert_eq!(find_normalised("abc", "abd"), None);
        assert_eq!(find_normalised("  x", "x"), Some((2, 3)));
    }

    #[test]
    fn failure_modes_are_flagged() {
        let o = CitationSupportOptions::default();
        let span = "The bridge opened in 1932 after six years of work.";
        // A phrase the span does not contain.
        let made_up = score_reply(
            "The bridge opened in 1932.",
            span,
            &reply("fully_supported", "opened in 1931"),
            &o,
        )
        .unwrap();
        assert!(made_up.unverified_phrase && !made_up.phrase_verified && made_up.flagged());
        // Fully supported on a phrase without the claim's keywords.
        let lenient = score_reply(
            "The bridge opened in 1932 to traffic.",
            span,
            &reply("fully_supported", "after six years of work"),
            &o,
        )
        .unwrap();
        assert!(lenient.lenient && lenient.phrase_verified);
        // A one-word echo.
        let echo = score_reply(
            "The bridge is long.",
            span,
            &reply("partially_supported", "bridge"),
            &o,
        )
        .unwrap();
        assert!(echo.echo);
        // Not supported with an empty phrase is not flagged.
        let clean =
            score_reply("The tunnel opened.", span, &reply("not_supported", ""), &o).unwrap();
        assert!(!clean.flagged());
        // A sound verdict.
        let sound = score_reply(
            "The bridge opened in 1932.",
            span,
            &reply("fully_supported", "The bridge opened in 1932"),
            &o,
        )
        .unwrap();
        assert!(!sound.flagged() && sound.phrase_span == Some((0, 25)));
    }

    #[test]
    fn strict_keeps_the_stricter_verdict() {
        let o = CitationSupportOptions::default();
        let full = score_reply("c", "s", &reply("fully_supported", "s"), &o).unwrap();
        let partial = score_reply("c", "s", &reply("partially_supported", "s"), &o).unwrap();
        let kept = stricter(full.clone(), partial.clone());
        assert_eq!(
            (kept.verdict, kept.runs_agree),
            (Verdict::PartiallySupported, Some(false))
        );
        let kept = stricter(partial, full.clone());
        assert_eq!(kept.verdict, Verdict::PartiallySupported);
        assert_eq!(stricter(full.clone(), full).runs_agree, Some(true));
    }
}
