//! The helpers of quote localisation that work on one piece of text: windows, word snapping,
//! the truncation test, and the three ways of trimming a window to a quote (difflib alignment,
//! sliding BM25, and both). They follow soak 9c164e87's functions of the same names, over
//! code points; the default pipeline in [`super`] reuses the ones that are correct.

use crate::text::bm25::Bm25Okapi;
use crate::text::normalize::Whitespace;
use crate::text::sequence_matcher::{Match, SequenceMatcher};

/// A window of a text: `[start, end)` in code points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// First code point.
    pub start: usize,
    /// One past the last code point.
    pub end: usize,
}

/// Overlapping windows of `len` code points: a window of `size` starts every `size − overlap`
/// code points, the last one is cut at the end of the text (and a text shorter than `size` is
/// one window). An empty text has no windows.
///
/// `overlap` must be smaller than `size`; the caller checks (soak's `make_windows` would loop
/// forever).
///
/// ```
/// use polars_rag::metrics::locate::align::{windows, Window};
/// let w = windows(10, 4, 1);
/// assert_eq!(w, [Window { start: 0, end: 4 }, Window { start: 3, end: 7 },
///                Window { start: 6, end: 10 }, Window { start: 9, end: 10 }]);
/// ```
pub fn windows(len: usize, size: usize, overlap: usize) -> Vec<Window> {
    debug_assert!(size > overlap);
    let step = size - overlap;
    (0..len)
        .step_by(step.max(1))
        .map(|start| Window {
            start,
            end: (start + size).min(len),
        })
        .collect()
}

/// The characters soak's word snapping stops at.
fn is_word_boundary(c: char) -> bool {
    matches!(
        c,
        ' ' | '\n'
            | '\t'
            | '\r'
            | '.'
            | '!'
            | '?'
            | ','
            | ';'
            | ':'
            | '-'
            | '('
            | ')'
            | '['
            | ']'
            | '{'
            | '}'
            | '"'
            | '\''
            | '/'
            | '\\'
    )
}

fn is_snap_space(c: char) -> bool {
    matches!(c, ' ' | '\n' | '\t' | '\r')
}

/// Widens `[start, end)` outward to word boundaries, then drops leading and trailing
/// whitespace (soak's `snap_to_boundaries(..., snap_to="word")`). Offsets beyond the text are
/// clamped to it first.
///
/// ```
/// use polars_rag::metrics::locate::align::snap_to_words;
/// let text: Vec<char> = "the quick brown fox jumps".chars().collect();
/// assert_eq!(snap_to_words(&text, 5, 14), (4, 15)); // "quick brown"
/// ```
pub fn snap_to_words(text: &[char], start: usize, end: usize) -> (usize, usize) {
    let mut start = start.min(text.len());
    let mut end = end.min(text.len());
    while start > 0 && !is_word_boundary(text[start - 1]) {
        start -= 1;
    }
    while end < text.len() && !is_word_boundary(text[end]) {
        end += 1;
    }
    while start < end && is_snap_space(text[start]) {
        start += 1;
    }
    while end > start && is_snap_space(text[end - 1]) {
        end -= 1;
    }
    (start, end)
}

/// Widens `[start, end)` to sentence ends (`[.!?]` followed by whitespace): soak's
/// `snap_to_boundaries(..., snap_to="sentence")`.
///
/// ```
/// use polars_rag::metrics::locate::align::snap_to_sentences;
/// let text: Vec<char> = "First sentence. Second one. Third.".chars().collect();
/// assert_eq!(snap_to_sentences(&text, 17, 22), (16, 28));
/// ```
pub fn snap_to_sentences(text: &[char], start: usize, end: usize) -> (usize, usize) {
    // Positions just after each run of `[.!?]\s+`, as `re.finditer(r'[.!?][\s\n]+')` gives them.
    let mut sentence_ends = Vec::new();
    let mut i = 0;
    while i < text.len() {
        if matches!(text[i], '.' | '!' | '?')
            && i + 1 < text.len()
            && Whitespace::Python.is_space(text[i + 1])
        {
            let mut j = i + 1;
            while j < text.len() && Whitespace::Python.is_space(text[j]) {
                j += 1;
            }
            sentence_ends.push(j);
            i = j;
        } else {
            i += 1;
        }
    }
    let new_start = sentence_ends
        .iter()
        .take_while(|&&p| p < start)
        .last()
        .copied()
        .unwrap_or(0);
    let new_end = sentence_ends
        .iter()
        .find(|&&p| p > end)
        .copied()
        .unwrap_or(text.len());
    (new_start, new_end)
}

/// Whether a match `[start, end)` inside a span of `span_len` code points comes within
/// `threshold` of either edge, so that the quote may continue in a neighbouring window
/// (soak's `is_match_truncated`).
///
/// ```
/// use polars_rag::metrics::locate::align::touches_edge;
/// assert!(touches_edge(0, 50, 200, 30));
/// assert!(!touches_edge(40, 150, 200, 30));
/// ```
pub fn touches_edge(start: usize, end: usize, span_len: usize, threshold: usize) -> bool {
    start < threshold || (end as i64) > span_len as i64 - threshold as i64
}

/// soak's matching normalisation: strip, lowercase, collapse whitespace runs to one space
/// (`re.sub(r"\s+", " ", s.strip().lower())`), with Python's whitespace class.
///
/// ```
/// use polars_rag::metrics::locate::align::soak_clean;
/// let clean = |s: &str| soak_clean(&s.chars().collect::<Vec<_>>()).into_iter().collect::<String>();
/// assert_eq!(clean("  The  Quick\n\tFox "), "the quick fox");
/// // A capital sigma ending a word lowercases to a final sigma, as in Python.
/// assert_eq!(clean("  ΟΔΟΣ  Σοφια ΟΔΟΣ.  "), "οδος σοφια οδος.");
/// assert_eq!(clean("ΚΑΣΣΑΝΔΡΑΣ\tΣ"), "κασσανδρας σ");
/// ```
pub fn soak_clean(text: &[char]) -> Vec<char> {
    let ws = Whitespace::Python;
    let lo = text
        .iter()
        .position(|&c| !ws.is_space(c))
        .unwrap_or(text.len());
    let hi = text
        .iter()
        .rposition(|&c| !ws.is_space(c))
        .map_or(lo, |i| i + 1);
    let mut out = Vec::with_capacity(hi - lo);
    let mut in_space = false;
    // Whitespace runs become one space; everything else is kept.
    let mut push = |l: char, space: bool| {
        if !space {
            out.push(l);
        } else if !in_space {
            out.push(' ');
        }
        in_space = space;
    };
    if text[lo..hi].contains(&'\u{3A3}') {
        // Lowercasing a capital sigma depends on its neighbours: lowercase the string.
        let lowered = text[lo..hi].iter().collect::<String>().to_lowercase();
        lowered.chars().for_each(|l| push(l, ws.is_space(l)));
        return out;
    }
    for &c in &text[lo..hi] {
        // ASCII (most text) lowercases to one character and needs no Unicode tables.
        if c.is_ascii() {
            let space = matches!(
                c,
                ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r' | '\x1c'..='\x1f'
            );
            push(c.to_ascii_lowercase(), space);
        } else {
            c.to_lowercase().for_each(|l| push(l, ws.is_space(l)));
        }
    }
    out
}

/// The first position of `needle` in `hay` (Python's `str.index`), `None` when absent.
pub fn find_chars(hay: &[char], needle: &[char]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    if needle.len() > hay.len() {
        return None;
    }
    let first = needle[0];
    (0..=hay.len() - needle.len()).find(|&i| hay[i] == first && hay[i..i + needle.len()] == *needle)
}

/// Where a quote was aligned inside a span: `[start, end)` in the span's code points, and how
/// well it matched.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Alignment {
    /// First code point of the match in the span.
    pub start: usize,
    /// One past the last code point.
    pub end: usize,
    /// difflib ratio (fuzzy) or a BM25 score (sliding BM25, soak's convention).
    pub ratio: f64,
}

/// soak's `find_alignment_fuzzy`: exact substring of the cleaned texts first (offsets then
/// applied to the raw span, as soak does), else difflib's longest matching block (> 5 code
/// points) padded by `pad` on each side; both snapped to words. No block: the whole span, 0.0.
///
/// ```
/// use polars_rag::metrics::locate::align::align_fuzzy_soak;
/// let span: Vec<char> = "Yesterday the Quick  brown fox jumped over the fence.".chars().collect();
/// let quote: Vec<char> = "the quick brown fox".chars().collect();
/// let a = align_fuzzy_soak(&quote, &span, 30);
/// assert_eq!((a.start, a.end, a.ratio), (10, 30, 1.0));
/// ```
pub fn align_fuzzy_soak(quote: &[char], span: &[char], pad: usize) -> Alignment {
    let quote_clean = soak_clean(quote);
    let span_clean = soak_clean(span);
    if quote_clean.is_empty() || span_clean.is_empty() {
        return Alignment {
            start: 0,
            end: 0,
            ratio: 0.0,
        };
    }
    if let Some(offset) = find_chars(&span_clean, &quote_clean) {
        let (start, end) = snap_to_words(span, offset, offset + quote_clean.len());
        return Alignment {
            start,
            end,
            ratio: 1.0,
        };
    }
    let matcher = SequenceMatcher::new(span_clean, quote_clean);
    let blocks = matcher.get_matching_blocks();
    let best = first_longest(blocks.iter().filter(|m| m.size > 5));
    let Some(best) = best else {
        return Alignment {
            start: 0,
            end: span.len(),
            ratio: 0.0,
        };
    };
    let ratio = matcher.ratio();
    let start = best.a.saturating_sub(pad);
    let end = (best.a + best.size + pad).min(span.len());
    let (start, end) = snap_to_words(span, start, end);
    Alignment { start, end, ratio }
}

/// The longest block, the first of equal ones (Python's `max(blocks, key=size)`).
pub fn first_longest<'a>(blocks: impl Iterator<Item = &'a Match>) -> Option<&'a Match> {
    blocks.fold(None, |best: Option<&Match>, m| match best {
        Some(b) if b.size >= m.size => Some(b),
        _ => Some(m),
    })
}

/// soak's `find_alignment_sliding_bm25`: the quote's tokens against every run of
/// `max(n, int(1.2 n))` consecutive span tokens, scored by a fresh BM25 index over those runs
/// (rank_bm25's defaults); the best run's token offset becomes an *approximate* character
/// offset, the length of the preceding tokens joined by spaces plus one. Returns the offset
/// and the best BM25 score, or `(0, 0.0)` when the span has fewer tokens than the quote.
pub fn align_sliding_bm25(
    quote: &[char],
    span: &[char],
    tokenize: &dyn Fn(&str) -> Vec<String>,
) -> (usize, f64) {
    let lower = |t: &[char]| -> String { t.iter().collect::<String>().to_lowercase() };
    let quote_tokens = tokenize(&lower(quote));
    let span_tokens = tokenize(&lower(span));
    if quote_tokens.len() > span_tokens.len() {
        return (0, 0.0);
    }
    let n = quote_tokens.len();
    let run = n.max((n as f64 * 1.2) as usize);
    // soak builds `range(len(span) - run + 1)` runs: none when the span is shorter than a run.
    if span_tokens.len() < run {
        return (0, 0.0);
    }
    let runs: Vec<&[String]> = (0..span_tokens.len() + 1 - run)
        .map(|i| &span_tokens[i..i + run])
        .collect();
    let bm25 = Bm25Okapi::with_defaults(&runs);
    let scores = bm25.scores(&quote_tokens);
    let best = argmax(&scores);
    let offset = if best > 0 {
        let joined: usize = span_tokens[..best]
            .iter()
            .map(|t| t.chars().count())
            .sum::<usize>()
            + (best - 1);
        joined + 1
    } else {
        0
    };
    (offset, scores[best])
}

/// `np.argmax`: the first index of the largest value (0 for an empty slice; NaN wins, as in
/// numpy).
pub fn argmax(values: &[f64]) -> usize {
    let mut best = 0;
    for (i, &v) in values.iter().enumerate() {
        if v.is_nan() {
            return i;
        }
        if v > values[best] {
            best = i;
        }
    }
    best
}

/// The two largest values (`np.sort(scores)[::-1][:2]`), 0.0 standing in for a missing one.
/// NaN scores (rank_bm25's 0/0 when no window of a source has a word token) are not scores: they
/// are skipped, so such a source reports a BM25 score and ratio of 0, never -inf or NaN.
///
/// ```
/// use polars_rag::metrics::locate::align::top_two;
/// assert_eq!(top_two(&[1.0, 3.0, 2.0]), (3.0, 2.0));
/// assert_eq!(top_two(&[f64::NAN, f64::NAN]), (0.0, 0.0));
/// ```
pub fn top_two(values: &[f64]) -> (f64, f64) {
    let mut first = f64::NEG_INFINITY;
    let mut second = f64::NEG_INFINITY;
    let mut scores = 0;
    for &v in values {
        if v.is_nan() {
            continue;
        }
        scores += 1;
        if v > first {
            second = first;
            first = v;
        } else if v > second {
            second = v;
        }
    }
    match scores {
        0 => (0.0, 0.0),
        1 => (first, 0.0),
        _ => (first, second),
    }
}

/// BM25 confidence as soak reports it: top1 / (top2 + 1e-6).
pub fn bm25_ratio(values: &[f64]) -> f64 {
    let (top1, top2) = top_two(values);
    top1 / (top2 + 1e-6)
}

/// How a located window is narrowed down to the quote.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(
    feature = "job",
    derive(clap::ValueEnum),
    value(rename_all = "snake_case")
)]
#[serde(rename_all = "snake_case")]
pub enum Trim {
    /// difflib alignment (exact substring first).
    Fuzzy,
    /// Sliding BM25 over token runs.
    SlidingBm25,
    /// Fuzzy, falling back to sliding BM25 below `min_match_ratio`.
    Hybrid,
    /// Keep the whole window.
    Off,
}

crate::settings::from_str_by_serde!(Trim);

impl Trim {
    /// The option's spelling: `fuzzy`, `sliding_bm25`, `hybrid`, `off`.
    pub fn name(self) -> &'static str {
        match self {
            Trim::Fuzzy => "fuzzy",
            Trim::SlidingBm25 => "sliding_bm25",
            Trim::Hybrid => "hybrid",
            Trim::Off => "off",
        }
    }
}

/// soak's `trim_span_to_quote` (with its `min_span_length_multiplier = 1.2`): aligns `quote`
/// inside `span` with `method`, but returns the whole span (keeping the ratio) when the match
/// is shorter than `int(1.2 × len(quote))` and shorter than the span. Quotes under 20 code
/// points are never trimmed (ratio 0.0).
pub fn trim_soak(
    quote: &[char],
    span: &[char],
    method: Trim,
    min_ratio: f64,
    pad: usize,
    tokenize: &dyn Fn(&str) -> Vec<String>,
) -> Alignment {
    let whole = |ratio| Alignment {
        start: 0,
        end: span.len(),
        ratio,
    };
    if span.is_empty() || quote.is_empty() || quote.len() < 20 {
        return whole(0.0);
    }
    let snapped_sliding = |offset: usize, score: f64| {
        let (start, end) = snap_to_words(span, offset, span.len());
        Alignment {
            start,
            end,
            ratio: score,
        }
    };
    let result = match method {
        Trim::Fuzzy => align_fuzzy_soak(quote, span, pad),
        Trim::SlidingBm25 => {
            let (offset, score) = align_sliding_bm25(quote, span, tokenize);
            snapped_sliding(offset, score)
        }
        Trim::Hybrid => {
            let fuzzy = align_fuzzy_soak(quote, span, pad);
            if fuzzy.ratio < min_ratio {
                let (offset, score) = align_sliding_bm25(quote, span, tokenize);
                // soak's heuristic: trust the BM25 offset only in the first half of the span.
                if (offset as f64) < span.len() as f64 * 0.5 {
                    snapped_sliding(offset, score)
                } else {
                    fuzzy
                }
            } else {
                fuzzy
            }
        }
        Trim::Off => whole(0.0),
    };
    let min_len = (quote.len() as f64 * 1.2) as usize;
    let matched = result.end.saturating_sub(result.start);
    if matched < min_len && matched < span.len() {
        return whole(result.ratio);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    #[test]
    fn top_two_handles_short_inputs() {
        assert_eq!(top_two(&[]), (0.0, 0.0));
        assert_eq!(top_two(&[2.0]), (2.0, 0.0));
        assert_eq!(top_two(&[1.0, 3.0, 3.0]), (3.0, 3.0));
    }

    #[test]
    fn clean_strips_lowercases_and_collapses() {
        assert_eq!(soak_clean(&chars("  A\t\nB  c ")), chars("a b c"));
        assert_eq!(soak_clean(&chars("   ")), chars(""));
    }

    #[test]
    fn snap_clamps_out_of_range_offsets() {
        assert_eq!(snap_to_words(&chars("ab"), 5, 9), (0, 2));
    }
}
