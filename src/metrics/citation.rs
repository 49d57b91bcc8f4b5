//! Quoted-span citation alignment: how many of the spans an answer puts in quotation marks appear
//! verbatim in the sources it was given.
//!
//! Per answer the kernel returns [`SpanCounts`] (`matched`, `total`); `score = matched / total`,
//! undefined (null) when the answer quotes nothing. Over a dataset, [`citation_alignment`] sums the
//! counts and divides, with Ragas' convention of 0.0 when nothing anywhere is quoted.
//!
//! Matching, in both quote styles (see [`crate::text::quotes`] for how spans are found):
//!
//! 1. spans are stripped and kept when they have at least `min_len` whitespace-separated words;
//! 2. the answer's sources are joined with one space (a span may straddle two passages);
//! 3. with `casefold = true` span and joined sources have whitespace runs collapsed to one space,
//!    are stripped and lowercased; with `casefold = false` nothing is normalised;
//! 4. a span matches when it is non-empty and a substring of the joined sources.
//!
//! `quotes = "ragas"` reproduces Ragas 0.4.3 `quoted_spans_alignment` bit for bit, including its
//! quote-mark defects and Python's whitespace class (U+001C..U+001F are whitespace).
//!
//! ```
//! use polars_rag::metrics::citation::{quoted_spans, QuotedSpansOptions, SpanCounts};
//! let answer = "Paris is “the capital of France” and “the largest city in Europe”.";
//! let sources = ["The capital of France is Paris.", "Paris is the capital of France."];
//! let counts = quoted_spans(answer, &sources, &QuotedSpansOptions::default());
//! assert_eq!(counts, SpanCounts { matched: 1, total: 2 });
//! assert_eq!(counts.score(), Some(0.5));
//! ```

use aho_corasick::AhoCorasick;
use memchr::memmem;
use serde::{Deserialize, Serialize};

use crate::text::normalize::{collapse_into, normalize, normalize_joined_into, Whitespace};
use crate::text::quotes::{for_each_quoted, QuoteStyle};

/// Options of `quoted_spans` and `citation_alignment`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QuotedSpansOptions {
    /// Collapse whitespace and lowercase both sides before matching (Ragas' `casefold`).
    pub casefold: bool,
    /// Minimum number of whitespace-separated words for a quoted span to count.
    pub min_len: usize,
    /// Which quotation marks delimit spans.
    pub quotes: QuoteStyle,
}

impl Default for QuotedSpansOptions {
    fn default() -> Self {
        QuotedSpansOptions {
            casefold: true,
            min_len: 3,
            quotes: QuoteStyle::Standard,
        }
    }
}

/// Matched and total quoted spans of one answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpanCounts {
    /// Spans found in the sources.
    pub matched: u32,
    /// Spans counted (at least `min_len` words).
    pub total: u32,
}

impl SpanCounts {
    /// `matched / total`, or `None` when the answer quotes nothing.
    pub fn score(&self) -> Option<f64> {
        (self.total > 0).then(|| f64::from(self.matched) / f64::from(self.total))
    }
}

/// From this many spans in one answer on, all spans are matched in one pass over the sources
/// (Aho-Corasick) rather than one substring search each, so time stays linear in the input
/// however many quotations an answer holds.
const MANY_SPANS: usize = 32;

/// Reusable buffers, so scoring a column allocates once per thread rather than once per row.
#[derive(Default)]
pub struct Scratch {
    key: String,
    joined: String,
    joined_ready: bool,
}

/// A prepared scorer: options resolved once, applied to many rows.
#[derive(Clone, Debug)]
pub struct QuotedSpans {
    options: QuotedSpansOptions,
    whitespace: Whitespace,
}

impl QuotedSpans {
    /// Prepares a scorer for `options`.
    pub fn new(options: QuotedSpansOptions) -> Self {
        let whitespace = options.quotes.whitespace();
        QuotedSpans {
            options,
            whitespace,
        }
    }

    /// The options this scorer applies.
    pub fn options(&self) -> &QuotedSpansOptions {
        &self.options
    }

    /// The spans of `answer` that count: stripped, with at least `min_len` words.
    pub fn spans<'a>(&self, answer: &'a str) -> Vec<&'a str> {
        let ws = self.whitespace;
        let min_len = self.options.min_len;
        let mut spans = Vec::new();
        for_each_quoted(answer, self.options.quotes, |raw| {
            let span = ws.strip(raw);
            if ws.has_min_words(span, min_len) {
                spans.push(span);
            }
        });
        spans
    }

    /// Counts the matched and total spans of one answer against its sources.
    pub fn score(&self, answer: &str, sources: &[&str], scratch: &mut Scratch) -> SpanCounts {
        let spans = self.spans(answer);
        scratch.joined_ready = false;
        if spans.len() >= MANY_SPANS {
            if let Some(counts) = self.score_many(&spans, sources, scratch) {
                return counts;
            }
        }
        let mut counts = SpanCounts::default();
        for span in spans {
            counts.total += 1;
            let found = if self.options.casefold {
                self.found_casefolded(span, sources, scratch)
            } else {
                found_verbatim(span, sources, scratch)
            };
            counts.matched += u32::from(found);
        }
        counts
    }

    /// All spans against the joined sources in one automaton pass; `None` if the automaton
    /// cannot be built (then the per-span path runs).
    fn score_many(&self, spans: &[&str], sources: &[&str], scratch: &mut Scratch) -> Option<SpanCounts> {
        let keys: Vec<String> = spans
            .iter()
            .map(|s| {
                if self.options.casefold {
                    normalize(s, self.whitespace)
                } else {
                    (*s).to_owned()
                }
            })
            .collect();
        if self.options.casefold {
            normalize_joined_into(&mut scratch.joined, sources, " ", self.whitespace);
        } else {
            join_raw(&mut scratch.joined, sources);
        }
        scratch.joined_ready = true;
        let patterns: Vec<&str> = keys.iter().map(String::as_str).filter(|k| !k.is_empty()).collect();
        let automaton = AhoCorasick::new(&patterns).ok()?;
        let mut found = vec![false; patterns.len()];
        for m in automaton.find_overlapping_iter(scratch.joined.as_str()) {
            found[m.pattern().as_usize()] = true;
        }
        let found_keys: std::collections::HashSet<&str> = patterns
            .iter()
            .zip(&found)
            .filter_map(|(p, &f)| f.then_some(*p))
            .collect();
        let matched = keys.iter().filter(|k| found_keys.contains(k.as_str())).count();
        Some(SpanCounts {
            matched: matched as u32,
            total: spans.len() as u32,
        })
    }

    fn found_casefolded(&self, span: &str, sources: &[&str], scratch: &mut Scratch) -> bool {
        let ws = self.whitespace;
        collapse_into(&mut scratch.key, span, ws);
        if scratch.key.is_empty() {
            return false;
        }
        // Fast path, exact by construction: if the whitespace-collapsed span occurs verbatim in
        // one source, its lowercase occurs in the normalised join. Lowercasing is per character
        // except for capital sigma (final-sigma rule), so spans holding one take the slow path.
        if !scratch.key.contains('\u{3a3}') {
            let key = scratch.key.as_bytes();
            if sources
                .iter()
                .any(|s| memmem::find(s.as_bytes(), key).is_some())
            {
                return true;
            }
        }
        if !scratch.joined_ready {
            normalize_joined_into(&mut scratch.joined, sources, " ", ws);
            scratch.joined_ready = true;
        }
        let key = std::mem::take(&mut scratch.key);
        let mut lowered = key;
        if lowered.is_ascii() {
            lowered.make_ascii_lowercase();
        } else {
            lowered = lowered.to_lowercase();
        }
        let found = memmem::find(scratch.joined.as_bytes(), lowered.as_bytes()).is_some();
        scratch.key = lowered;
        found
    }
}

fn found_verbatim(span: &str, sources: &[&str], scratch: &mut Scratch) -> bool {
    if span.is_empty() {
        return false;
    }
    let needle = span.as_bytes();
    if sources
        .iter()
        .any(|s| memmem::find(s.as_bytes(), needle).is_some())
    {
        return true;
    }
    if sources.len() < 2 {
        return false;
    }
    // Only a span straddling two passages can still match; build the join once per answer.
    if !scratch.joined_ready {
        join_raw(&mut scratch.joined, sources);
        scratch.joined_ready = true;
    }
    memmem::find(scratch.joined.as_bytes(), needle).is_some()
}

/// The sources joined with one space, as Ragas joins them.
fn join_raw(out: &mut String, sources: &[&str]) {
    out.clear();
    for (i, s) in sources.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(s);
    }
}

/// Counts the matched and total quoted spans of one answer (allocates its own scratch; use
/// [`QuotedSpans`] to score many rows).
pub fn quoted_spans(answer: &str, sources: &[&str], options: &QuotedSpansOptions) -> SpanCounts {
    QuotedSpans::new(options.clone()).score(answer, sources, &mut Scratch::default())
}

/// Dataset-level citation alignment, field for field Ragas' result dictionary.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CitationAlignment {
    /// Σ matched / Σ total, 0.0 when no span was counted anywhere.
    pub citation_alignment_quoted_spans: f64,
    /// Σ matched.
    pub matched: f64,
    /// Σ total.
    pub total: f64,
}

/// Aggregates per-answer counts as Ragas does: spans are counted globally, not averaged per
/// answer.
///
/// ```
/// use polars_rag::metrics::citation::{citation_alignment, SpanCounts};
/// let rows = [SpanCounts { matched: 2, total: 2 }, SpanCounts::default(), SpanCounts { matched: 0, total: 1 }];
/// let agg = citation_alignment(rows);
/// assert_eq!((agg.matched, agg.total), (2.0, 3.0));
/// assert!((agg.citation_alignment_quoted_spans - 2.0 / 3.0).abs() < 1e-15);
/// assert_eq!(citation_alignment([]).citation_alignment_quoted_spans, 0.0);
/// ```
pub fn citation_alignment(counts: impl IntoIterator<Item = SpanCounts>) -> CitationAlignment {
    let (mut matched, mut total) = (0u64, 0u64);
    for c in counts {
        matched += u64::from(c.matched);
        total += u64::from(c.total);
    }
    let score = if total == 0 {
        0.0
    } else {
        matched as f64 / total as f64
    };
    CitationAlignment {
        citation_alignment_quoted_spans: score,
        matched: matched as f64,
        total: total as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(quotes: QuoteStyle, casefold: bool, min_len: usize) -> QuotedSpansOptions {
        QuotedSpansOptions {
            casefold,
            min_len,
            quotes,
        }
    }

    #[test]
    fn fast_and_slow_paths_agree() {
        let o = opts(QuoteStyle::Standard, true, 1);
        // verbatim (fast path), case differs (slow), whitespace differs (slow), straddles (slow)
        let s = ["The Capital  of France is Paris.", "Rome is old."];
        let c = |a: &str| quoted_spans(a, &s, &o);
        assert_eq!(c("“The Capital”").matched, 1);
        assert_eq!(c("“the capital”").matched, 1);
        assert_eq!(c("“capital of france”").matched, 1);
        assert_eq!(c("“Paris. Rome”").matched, 1);
        assert_eq!(c("“Paris.Rome”").matched, 0);
    }

    #[test]
    fn sigma_takes_the_exact_path() {
        let o = opts(QuoteStyle::Standard, true, 1);
        // "ΟΔΟΣ" lowercases to "οδος" with a final sigma; inside a longer word it would not.
        assert_eq!(quoted_spans("“ΟΔΟΣ”", &["ΟΔΟΣΑ"], &o).matched, 0);
        assert_eq!(quoted_spans("“ΟΔΟΣ”", &["x ΟΔΟΣ y"], &o).matched, 1);
        assert_eq!(quoted_spans("“ΟΔΟΣ”", &["οδος"], &o).matched, 1);
    }

    #[test]
    fn verbatim_mode_is_case_and_space_sensitive() {
        let o = opts(QuoteStyle::Standard, false, 1);
        assert_eq!(quoted_spans("“a  b”", &["a b"], &o).matched, 0);
        assert_eq!(quoted_spans("“A b”", &["a b"], &o).matched, 0);
        assert_eq!(quoted_spans("“b c”", &["a b", "c d"], &o).matched, 1);
    }

    #[test]
    fn empty_sources_count_but_never_match() {
        let o = QuotedSpansOptions::default();
        let c = quoted_spans("“one two three”", &[], &o);
        assert_eq!(
            c,
            SpanCounts {
                matched: 0,
                total: 1
            }
        );
        assert_eq!(c.score(), Some(0.0));
        assert_eq!(quoted_spans("no quotes", &["x"], &o).score(), None);
    }
}
