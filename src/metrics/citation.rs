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

use crate::text::normalize::{
    collapse_into, normalize, normalize_joined_fast, normalize_joined_into, Whitespace,
};
use crate::text::quotes::{for_each_quoted, QuoteStyle};
use crate::text::search::contains;

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
    lowered: String,
    joined: String,
    joined_ready: bool,
    /// Whether the current answer's sources hold a character whose lowercase depends on context
    /// or maps non-ASCII to ASCII; computed at most once per answer.
    sources_exotic: Option<bool>,
    /// Whether the current answer's sources were already collapsed, so that their normalised
    /// join could be built by lowercasing alone (then `joined` holds it); tried at most once
    /// per answer.
    sources_collapsed: Option<bool>,
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
        scratch.sources_exotic = None;
        scratch.sources_collapsed = None;
        if spans.len() >= MANY_SPANS
            && let Some(counts) = self.score_many(&spans, sources, scratch)
        {
            return counts;
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
    fn score_many(
        &self,
        spans: &[&str],
        sources: &[&str],
        scratch: &mut Scratch,
    ) -> Option<SpanCounts> {
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
        // One pattern per distinct non-empty key; repeated quotations share it.
        let mut pattern_of: std::collections::HashMap<&str, usize> = Default::default();
        for k in keys.iter().filter(|k| !k.is_empty()) {
            let next = pattern_of.len();
            pattern_of.entry(k.as_str()).or_insert(next);
        }
        let mut patterns = vec![""; pattern_of.len()];
        for (&k, &i) in &pattern_of {
            patterns[i] = k;
        }
        let automaton = AhoCorasick::new(&patterns).ok()?;
        let mut found = vec![false; patterns.len()];
        for m in automaton.find_overlapping_iter(scratch.joined.as_str()) {
            found[m.pattern().as_usize()] = true;
        }
        let matched = keys
            .iter()
            .filter(|k| pattern_of.get(k.as_str()).is_some_and(|&i| found[i]))
            .count();
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
        lowercase_into(&mut scratch.lowered, &scratch.key);
        // The definition itself, when the join normalises by lowercasing alone (prose without
        // line breaks or space runs): one bulk pass per answer, then one search per span. This
        // beats the pivot scan below, whose candidates are frequent in lowercase prose.
        let collapsed = *scratch.sources_collapsed.get_or_insert_with(|| {
            let ok = normalize_joined_fast(&mut scratch.joined, sources, ws);
            scratch.joined_ready = ok;
            ok
        });
        if collapsed {
            return contains(scratch.joined.as_bytes(), scratch.lowered.as_bytes());
        }
        let (cased, key) = (scratch.key.as_str(), scratch.lowered.as_str());
        if let Some(pivot) = Pivot::choose(cased, key) {
            let exotic = &mut scratch.sources_exotic;
            if let Some(found) = scan_candidates(cased, key, &pivot, sources, ws, exotic) {
                return found;
            }
        } else if !cased.contains('\u{3a3}') {
            // Verbatim occurrence of the collapsed span (see `scan_candidates` for why it implies
            // a match), for spans with no ASCII word.
            let finder = memmem::Finder::new(cased.as_bytes());
            if sources.iter().any(|s| finder.find(s.as_bytes()).is_some()) {
                return true;
            }
        }
        // The definition itself: normalise the join once per answer, then search.
        if !scratch.joined_ready {
            normalize_joined_into(&mut scratch.joined, sources, " ", ws);
            scratch.joined_ready = true;
        }
        contains(scratch.joined.as_bytes(), key.as_bytes())
    }
}

/// The search anchor of a span: the ASCII word holding its rarest byte.
struct Pivot {
    /// Byte offset of the word in the lowercase key.
    key_offset: usize,
    /// Byte offset of the word in the case-kept span.
    cased_offset: usize,
    /// Length of the word in bytes (ASCII, so equal in both).
    len: usize,
    /// Offset of the rarest byte within the word.
    byte_offset: usize,
    /// The rarest byte, lowercase.
    byte: u8,
}

impl Pivot {
    /// `None` when no word is ASCII in both forms.
    fn choose(cased: &str, key: &str) -> Option<Pivot> {
        let mut best: Option<(u8, Pivot)> = None;
        let mut cased_words = word_offsets(cased);
        for (key_offset, word) in word_offsets(key) {
            let (cased_offset, cased_word) = cased_words.next()?;
            if !word.is_ascii() || !cased_word.is_ascii() {
                continue;
            }
            for (byte_offset, b) in word.bytes().enumerate() {
                let rank = english_frequency_rank(b);
                if best.as_ref().is_none_or(|(r, _)| rank < *r) {
                    let len = word.len();
                    best = Some((
                        rank,
                        Pivot {
                            key_offset,
                            cased_offset,
                            len,
                            byte_offset,
                            byte: b,
                        },
                    ));
                }
            }
        }
        best.map(|(_, p)| p)
    }
}

/// The single-space-separated words of a collapsed string, with their byte offsets.
fn word_offsets(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split(' ').scan(0, |offset, word| {
        let at = *offset;
        *offset += word.len() + 1;
        Some((at, word))
    })
}

/// Finds a normalised occurrence of the span without normalising the sources. `cased` is the
/// whitespace-collapsed span, `key` its lowercase (the normalised span). Returns `None` when
/// the answer needs the full definition.
///
/// Candidates are the positions of the pivot word (found by its rarest byte, either case). At
/// each:
/// * a verbatim occurrence of `cased` is a match: its whitespace is already single spaces between
///   non-spaces, so collapsing keeps it, and lowercasing is per character except for capital
///   sigma (final-sigma rule), so spans holding one skip this check;
/// * otherwise the text around it is normalised on the fly, forwards and backwards, and compared
///   with `key`. That is exact, and the candidates complete, when every source character
///   lowercases to exactly one character independently of context and no non-ASCII character
///   lowercases to ASCII; three code points break this (capital sigma, dotted capital I, Kelvin
///   sign), and sources holding one return `None`.
fn scan_candidates(
    cased: &str,
    key: &str,
    pivot: &Pivot,
    sources: &[&str],
    ws: Whitespace,
    exotic: &mut Option<bool>,
) -> Option<bool> {
    let word = &key.as_bytes()[pivot.key_offset..pivot.key_offset + pivot.len];
    let (lo, up) = (pivot.byte, pivot.byte.to_ascii_uppercase());
    let verbatim_is_match = !cased.contains('\u{3a3}');
    let (before, from_word) = key.split_at(pivot.key_offset);
    let is_exotic = |e: &mut Option<bool>| {
        *e.get_or_insert_with(|| sources.iter().any(|s| has_context_dependent_lowercase(s)))
    };
    for (si, source) in sources.iter().enumerate() {
        let bytes = source.as_bytes();
        for hit in memchr::memchr2_iter(lo, up, bytes) {
            let Some(at) = hit.checked_sub(pivot.byte_offset) else {
                continue;
            };
            let word_here = bytes.get(at..at + pivot.len);
            if !word_here.is_some_and(|w| w.eq_ignore_ascii_case(word)) {
                continue;
            }
            if verbatim_is_match {
                let start = at.checked_sub(pivot.cased_offset);
                if start.is_some_and(|s| bytes[s..].starts_with(cased.as_bytes())) {
                    return Some(true);
                }
            }
            if is_exotic(exotic) {
                return None;
            }
            if matches_normalised_at(from_word, sources, si, at, ws)
                && matches_normalised_before(before, sources, si, at, ws)
            {
                return Some(true);
            }
        }
    }
    if is_exotic(exotic) {
        None
    } else {
        Some(false)
    }
}

/// Whether the normalised join of `sources` ends with `prefix` just before byte `pos` of source
/// `si` (the mirror of [`matches_normalised_at`]).
fn matches_normalised_before(
    prefix: &str,
    sources: &[&str],
    si: usize,
    pos: usize,
    ws: Whitespace,
) -> bool {
    let mut stream = JoinedCharsBack::new(sources, si, pos).peekable();
    key_matches(prefix.chars().rev(), &mut stream, ws)
}

/// A stream of source characters that can look one character ahead.
trait Lookahead {
    fn peek_char(&mut self) -> Option<char>;
    fn next_char(&mut self) -> Option<char>;
}

impl<I: Iterator<Item = char>> Lookahead for std::iter::Peekable<I> {
    #[inline]
    fn peek_char(&mut self) -> Option<char> {
        self.peek().copied()
    }
    #[inline]
    fn next_char(&mut self) -> Option<char> {
        self.next()
    }
}

/// Whether the characters of `key` (already normalised) match `stream`: whitespace runs match
/// one key space, other characters match their lowercase. One rule for both directions of
/// [`matches_normalised_at`] and [`matches_normalised_before`].
#[inline]
fn key_matches(
    key: impl Iterator<Item = char>,
    stream: &mut impl Lookahead,
    ws: Whitespace,
) -> bool {
    for k in key {
        if k == ' ' {
            if !stream.peek_char().is_some_and(|c| ws.is_space(c)) {
                return false;
            }
            while stream.peek_char().is_some_and(|c| ws.is_space(c)) {
                stream.next_char();
            }
        } else {
            match stream.next_char() {
                Some(c) if !ws.is_space(c) && lowercase_one(c) == k => {}
                _ => return false,
            }
        }
    }
    true
}

/// The characters of `sources` joined with one space, backwards from a byte position of one
/// source.
struct JoinedCharsBack<'a> {
    sources: &'a [&'a str],
    source: usize,
    rest: std::iter::Rev<std::str::Chars<'a>>,
}

impl<'a> JoinedCharsBack<'a> {
    fn new(sources: &'a [&'a str], source: usize, pos: usize) -> Self {
        let rest = sources[source][..pos].chars().rev();
        JoinedCharsBack {
            sources,
            source,
            rest,
        }
    }
}

impl Iterator for JoinedCharsBack<'_> {
    type Item = char;
    fn next(&mut self) -> Option<char> {
        if let Some(c) = self.rest.next() {
            return Some(c);
        }
        if self.source > 0 {
            self.source -= 1;
            self.rest = self.sources[self.source].chars().rev();
            return Some(' ');
        }
        None
    }
}

/// `out` = Python's `text.lower()`.
fn lowercase_into(out: &mut String, text: &str) {
    out.clear();
    if text.is_ascii() {
        out.push_str(text);
        out.make_ascii_lowercase();
    } else {
        out.push_str(&text.to_lowercase());
    }
}

/// How common a byte is in English text (higher is more common), to pick a rare search pivot.
fn english_frequency_rank(b: u8) -> u8 {
    const LETTERS_BY_FREQUENCY: &[u8] = b"zqxjkvbpygfwmucldrhsnioate";
    match LETTERS_BY_FREQUENCY
        .iter()
        .position(|&l| l == b.to_ascii_lowercase())
    {
        Some(i) => 10 + i as u8,
        None if b.is_ascii_digit() => 8,
        None => 4,
    }
}

/// Capital sigma (U+03A3), capital I with dot (U+0130) and the Kelvin sign (U+212A).
fn has_context_dependent_lowercase(text: &str) -> bool {
    static KELVIN: std::sync::OnceLock<memmem::Finder<'static>> = std::sync::OnceLock::new();
    let bytes = text.as_bytes();
    // Lead bytes 0xCE and 0xC4 are rare in most text; 0xE2 (curly quotes, dashes) is not, so
    // the Kelvin sign is searched for as a whole.
    memchr::memchr2_iter(0xce, 0xc4, bytes).any(|i| {
        let rest = &bytes[i..];
        rest.starts_with(b"\xce\xa3") || rest.starts_with(b"\xc4\xb0")
    }) || KELVIN
        .get_or_init(|| memmem::Finder::new(b"\xe2\x84\xaa"))
        .find(bytes)
        .is_some()
}

/// Whether `key` (already normalised) matches the normalised join of `sources` at byte `pos` of
/// source `si`: whitespace runs (the joining space included) match one key space, other
/// characters match their lowercase.
fn matches_normalised_at(
    key: &str,
    sources: &[&str],
    si: usize,
    pos: usize,
    ws: Whitespace,
) -> bool {
    key_matches(key.chars(), &mut JoinedChars::new(sources, si, pos), ws)
}

fn lowercase_one(c: char) -> char {
    if c.is_ascii() {
        c.to_ascii_lowercase()
    } else {
        c.to_lowercase().next().unwrap_or(c)
    }
}

/// The characters of `sources` joined with one space, from a byte position of one source on.
struct JoinedChars<'a> {
    sources: &'a [&'a str],
    source: usize,
    rest: std::str::Chars<'a>,
    peeked: Option<Option<char>>,
}

impl<'a> JoinedChars<'a> {
    fn new(sources: &'a [&'a str], source: usize, pos: usize) -> Self {
        JoinedChars {
            sources,
            source,
            rest: sources[source][pos..].chars(),
            peeked: None,
        }
    }

    fn peek(&mut self) -> Option<char> {
        if self.peeked.is_none() {
            let c = self.advance();
            self.peeked = Some(c);
        }
        self.peeked.flatten()
    }

    fn advance(&mut self) -> Option<char> {
        if let Some(c) = self.rest.next() {
            return Some(c);
        }
        if self.source + 1 < self.sources.len() {
            self.source += 1;
            self.rest = self.sources[self.source].chars();
            return Some(' ');
        }
        None
    }
}

impl Lookahead for JoinedChars<'_> {
    #[inline]
    fn peek_char(&mut self) -> Option<char> {
        self.peek()
    }
    #[inline]
    fn next_char(&mut self) -> Option<char> {
        self.next()
    }
}

impl Iterator for JoinedChars<'_> {
    type Item = char;
    fn next(&mut self) -> Option<char> {
        match self.peeked.take() {
            Some(c) => c,
            None => self.advance(),
        }
    }
}

fn found_verbatim(span: &str, sources: &[&str], scratch: &mut Scratch) -> bool {
    if span.is_empty() {
        return false;
    }
    let needle = span.as_bytes();
    if sources.iter().any(|s| contains(s.as_bytes(), needle)) {
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
    contains(scratch.joined.as_bytes(), needle)
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

/// Citation alignment of summed per-row statistics `[matched, total]` (as a comparison resamples
/// them): Σ matched / Σ total, 0.0 when nothing is quoted.
///
/// ```
/// use polars_rag::metrics::citation::alignment_of_sums;
/// assert_eq!(alignment_of_sums(&[15.0, 18.0]), 15.0 / 18.0);
/// assert_eq!(alignment_of_sums(&[0.0, 0.0]), 0.0);
/// ```
pub fn alignment_of_sums(sums: &[f64]) -> f64 {
    match sums {
        [matched, total, ..] if *total != 0.0 => matched / total,
        _ => 0.0,
    }
}

/// What summed `[matched, total]` statistics say, for a summary line.
///
/// ```
/// assert_eq!(polars_rag::metrics::citation::describe_sums(&[15.0, 18.0]), "(15 of 18 quoted spans found)");
/// ```
pub fn describe_sums(sums: &[f64]) -> String {
    let (matched, total) = (
        sums.first().copied().unwrap_or(0.0),
        sums.get(1).copied().unwrap_or(0.0),
    );
    format!("({matched} of {total} quoted spans found)")
}

/// A sacrebleu-style signature of the quoted-span settings, so a number can be reproduced.
///
/// ```
/// use polars_rag::metrics::citation::{signature, QuotedSpansOptions};
/// assert!(signature(&QuotedSpansOptions::default()).starts_with("quotes:standard|casefold:yes|min_len:3|"));
/// ```
pub fn signature(o: &QuotedSpansOptions) -> String {
    let quotes = match o.quotes {
        QuoteStyle::Standard => "standard",
        QuoteStyle::Ragas => "ragas",
    };
    format!(
        "quotes:{quotes}|casefold:{}|min_len:{}|version:polars-rag-{}",
        if o.casefold { "yes" } else { "no" },
        o.min_len,
        env!("CARGO_PKG_VERSION")
    )
}

impl crate::metrics::Section for QuotedSpansOptions {
    fn signature(&self, _id: &str) -> String {
        signature(self)
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

    mod definition {
        use super::*;
        use proptest::prelude::*;

        /// Text over an alphabet that reaches every path of the matcher: ASCII and non-ASCII
        /// capitals, a context-dependent lowercase (Σ), characters whose lowercase is longer or
        /// ASCII (İ, the Kelvin sign), punctuation, and each kind of whitespace.
        fn text(max: usize) -> impl Strategy<Value = String> {
            proptest::collection::vec(
                prop_oneof![
                    8 => proptest::sample::select(vec!['a', 'b', 'A', 'B', ' ']),
                    1 => proptest::sample::select(vec![
                        'é', 'É', 'Σ', 'σ', '’', '—', 'İ', '\u{212a}', 'k', '\t', '\n',
                        '\u{a0}', '\u{1f}', '\u{2003}',
                    ]),
                ],
                0..max,
            )
            .prop_map(|chars| chars.into_iter().collect())
        }

        proptest! {
            /// Every shortcut of the matcher (verbatim hits, the pivot scan, the lowercased join
            /// of collapsed sources) agrees with the definition: normalise the span and the
            /// joined sources, then search.
            #[test]
            fn matches_the_definition(
                sources in proptest::collection::vec(text(40), 0..4),
                spans in proptest::collection::vec(text(8), 1..4),
                ragas in any::<bool>(),
            ) {
                let quotes = if ragas { QuoteStyle::Ragas } else { QuoteStyle::Standard };
                let scorer = QuotedSpans::new(QuotedSpansOptions { casefold: true, min_len: 1, quotes });
                let (open, close) = if ragas { ("\"", "\"") } else { ("“", "”") };
                let answer: String = spans
                    .iter()
                    .filter(|s| !s.contains(['"', '\n']))
                    .map(|s| format!("x {open}{s}{close} y "))
                    .collect();
                let sources: Vec<&str> = sources.iter().map(String::as_str).collect();
                let ws = quotes.whitespace();
                let joined = normalize(&sources.join(" "), ws);
                let expected = scorer
                    .spans(&answer)
                    .iter()
                    .filter(|span| {
                        let key = normalize(span, ws);
                        !key.is_empty() && joined.contains(key.as_str())
                    })
                    .count();
                let counts = scorer.score(&answer, &sources, &mut Scratch::default());
                prop_assert_eq!(counts.matched as usize, expected);
            }
        }
    }
}
