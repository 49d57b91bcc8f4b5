//! Quote extraction: find the quoted spans of an answer.
//!
//! Two rule sets, chosen by [`QuoteStyle`]:
//!
//! **`standard`** (the default) pairs real quotation marks:
//!
//! | opens | closes |
//! |---|---|
//! | `"` | `"` |
//! | `“` | `”` |
//! | `‘` | `’` |
//! | `„` | `“` or `”` |
//! | `‚` | `‘` or `’` |
//! | `«` | `»` |
//! | `‹` | `›` |
//! | `「` | `」` |
//! | `『` | `』` |
//!
//! * The straight apostrophe `'` is never a quotation mark, so `don't`, `it's` and `students'`
//!   never open or close a span.
//! * A curly `’` between two letters or digits (`don’t`, `it’s`) is an apostrophe and never closes
//!   a span; a `‘` right after a letter or digit never opens one. `students’` outside a span opens
//!   nothing, because only `‘` opens a single-quoted span.
//! * Spans pair left to right and do not nest: once a mark opens, everything up to its closing
//!   mark is the span (other marks inside are text). A span never crosses a line break; a mark
//!   with no closing mark on its line opens nothing and scanning goes on after it.
//!
//! ```
//! use polars_rag::text::quotes::{extract_quoted_spans, QuoteStyle};
//! let answer = "It’s “the capital of France”, don’t say ‘the capital of Spain’.";
//! assert_eq!(
//!     extract_quoted_spans(answer, QuoteStyle::Standard, 3),
//!     vec!["the capital of France", "the capital of Spain"]
//! );
//! ```
//!
//! **`ragas`** reproduces Ragas 0.4.3's regex `["'`´](.*?)["'`´]` exactly: any of the four marks
//! opens and any closes, the shortest span wins, no newline inside. Curly quotes are ignored and
//! apostrophes open spurious spans:
//!
//! ```
//! use polars_rag::text::quotes::{extract_quoted_spans, QuoteStyle};
//! let answer = "I don't think it's \"a good idea at all\" really.";
//! assert_eq!(
//!     extract_quoted_spans(answer, QuoteStyle::Ragas, 3),
//!     vec!["t think it", "a good idea at all"]
//! );
//! assert_eq!(extract_quoted_spans(answer, QuoteStyle::Standard, 3), vec!["a good idea at all"]);
//! ```
//!
//! Both scanners run in time linear in the answer's length, whatever the number of marks.

use serde::{Deserialize, Serialize};

use super::normalize::Whitespace;

/// Which characters delimit quoted spans.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QuoteStyle {
    /// Properly paired quotation marks in many typographic traditions (module docs).
    #[default]
    Standard,
    /// Ragas 0.4.3: `"` `'` `` ` `` `´`, any opens and any closes.
    Ragas,
}

crate::settings::from_str_by_serde!(QuoteStyle);

impl QuoteStyle {
    /// The whitespace class the style splits, strips and collapses with: Python's for `ragas`
    /// (bit-for-bit compatibility), Unicode's for `standard`.
    pub fn whitespace(self) -> Whitespace {
        match self {
            QuoteStyle::Standard => Whitespace::Unicode,
            QuoteStyle::Ragas => Whitespace::Python,
        }
    }
}

/// Calls `emit` with the raw text between each pair of quotation marks, in order, unstripped.
pub(crate) fn for_each_quoted<'a>(answer: &'a str, style: QuoteStyle, emit: impl FnMut(&'a str)) {
    match style {
        QuoteStyle::Ragas => scan_ragas(answer, emit),
        QuoteStyle::Standard => scan_standard(answer, emit),
    }
}

/// The quoted spans of `answer`, stripped, keeping those with at least `min_words`
/// whitespace-separated words (Ragas' `_extract_quoted_spans` for [`QuoteStyle::Ragas`]).
pub fn extract_quoted_spans(answer: &str, style: QuoteStyle, min_words: usize) -> Vec<&str> {
    let ws = style.whitespace();
    let mut spans = Vec::new();
    for_each_quoted(answer, style, |raw| {
        let span = ws.strip(raw);
        if ws.has_min_words(span, min_words) {
            spans.push(span);
        }
    });
    spans
}

/// The next Ragas mark (`"` `'` `` ` `` `´`) at or after byte `from`, as (position, byte length);
/// with `stop_at_newline`, a newline is returned as (position, 0). Scans bytes: every mark but
/// `´` (C2 B4) is ASCII, and 0xC2 is always a lead byte in UTF-8.
fn next_ragas_mark(bytes: &[u8], from: usize, stop_at_newline: bool) -> Option<(usize, usize)> {
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'"' | b'\'' | b'`' => return Some((i, 1)),
            0xc2 if bytes.get(i + 1) == Some(&0xb4) => return Some((i, 2)),
            b'\n' if stop_at_newline => return Some((i, 0)),
            _ => i += 1,
        }
    }
    None
}

fn scan_ragas<'a>(text: &'a str, mut emit: impl FnMut(&'a str)) {
    let bytes = text.as_bytes();
    let mut pos = 0;
    while let Some((open, open_len)) = next_ragas_mark(bytes, pos, false) {
        let inner = open + open_len;
        match next_ragas_mark(bytes, inner, true) {
            None => return,
            // `.` cannot cross the newline and no mark lies before it: the regex retries from
            // every later start up to here and fails, so resume after the newline.
            Some((at, 0)) => pos = at + 1,
            Some((at, len)) => {
                emit(&text[inner..at]);
                pos = at + len;
            }
        }
    }
}

/// Kinds of opening marks in `standard` style, with their closing marks.
const OPENERS: [(char, &[char]); 9] = [
    ('"', &['"']),
    ('\u{201c}', &['\u{201d}']),             // “ ”
    ('\u{2018}', &['\u{2019}']),             // ‘ ’
    ('\u{201e}', &['\u{201c}', '\u{201d}']), // „ “ or „ ”
    ('\u{201a}', &['\u{2018}', '\u{2019}']), // ‚ ‘ or ‚ ’
    ('\u{ab}', &['\u{bb}']),                 // « »
    ('\u{2039}', &['\u{203a}']),             // ‹ ›
    ('\u{300c}', &['\u{300d}']),             // 「 」
    ('\u{300e}', &['\u{300f}']),             // 『 』
];

fn is_line_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

fn is_word_char(c: Option<char>) -> bool {
    c.is_some_and(char::is_alphanumeric)
}

/// Single curly marks double as apostrophes: one between two word characters is not a quote.
fn is_apostrophe_like(c: char) -> bool {
    matches!(c, '\u{2019}' | '\u{2018}')
}

fn scan_standard<'a>(text: &'a str, mut emit: impl FnMut(&'a str)) {
    // For each opener kind, a byte position before which a search for its closing mark is known
    // to fail (the end of the line where an earlier search failed). This keeps the scan linear:
    // every region is searched at most once per kind.
    let mut dead_until = [0usize; OPENERS.len()];
    let mut prev: Option<char> = None;
    let mut pos = 0;
    let bytes = text.as_bytes();
    while pos < text.len() {
        // Every opening mark is `"` or non-ASCII: other ASCII bytes need no decoding.
        let b = bytes[pos];
        if b.is_ascii() && b != b'"' {
            prev = Some(b as char);
            pos += 1;
            continue;
        }
        let Some(c) = text[pos..].chars().next() else {
            break;
        };
        let after_open = pos + c.len_utf8();
        let kind = OPENERS.iter().position(|&(open, _)| open == c);
        if let Some(kind) = kind {
            let word_internal = is_apostrophe_like(c) && is_word_char(prev);
            if !word_internal && pos >= dead_until[kind] {
                match find_closer(text, after_open, OPENERS[kind].1) {
                    Ok((close_at, close_char)) => {
                        emit(&text[after_open..close_at]);
                        prev = Some(close_char);
                        pos = close_at + close_char.len_utf8();
                        continue;
                    }
                    Err(line_end) => dead_until[kind] = line_end,
                }
            }
        }
        prev = Some(c);
        pos = after_open;
    }
}

/// Finds the first valid closing mark at or after `from` on the same line: `Ok((at, mark))`, or
/// `Err(line_end)` with the byte position where the search stopped.
fn find_closer(text: &str, from: usize, closers: &[char]) -> Result<(usize, char), usize> {
    let mut prev = text[..from].chars().next_back();
    let mut chars = text[from..].char_indices().peekable();
    while let Some((rel, c)) = chars.next() {
        if is_line_break(c) {
            return Err(from + rel);
        }
        if closers.contains(&c) {
            let next = chars.peek().map(|&(_, n)| n);
            let apostrophe = is_apostrophe_like(c) && is_word_char(prev) && is_word_char(next);
            if !apostrophe {
                return Ok((from + rel, c));
            }
        }
        prev = Some(c);
    }
    Err(text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn std3(s: &str) -> Vec<&str> {
        extract_quoted_spans(s, QuoteStyle::Standard, 1)
    }

    #[test]
    fn standard_pairs_every_listed_tradition() {
        assert_eq!(std3("a \"b c\" d"), vec!["b c"]);
        assert_eq!(std3("a “b c” d"), vec!["b c"]);
        assert_eq!(std3("a ‘b c’ d"), vec!["b c"]);
        assert_eq!(std3("a „b c“ d „e f” g"), vec!["b c", "e f"]);
        assert_eq!(std3("a ‚b c‘ d"), vec!["b c"]);
        assert_eq!(std3("a « b c » d ‹e›"), vec!["b c", "e"]);
        assert_eq!(
            std3("他说「你好 世界」和『书名』"),
            vec!["你好 世界", "书名"]
        );
    }

    #[test]
    fn standard_apostrophes_never_delimit() {
        assert_eq!(std3("don't it's students' books"), Vec::<&str>::new());
        assert_eq!(std3("don’t it’s students’ books"), Vec::<&str>::new());
        assert_eq!(std3("‘don’t stop’ now"), vec!["don’t stop"]);
        assert_eq!(std3("rock‘n’roll"), Vec::<&str>::new());
    }

    #[test]
    fn standard_does_not_cross_lines_and_recovers() {
        assert_eq!(std3("“one two\nthree” and “four five”"), vec!["four five"]);
        assert_eq!(std3("\"a b c\" and \"d e f"), vec!["a b c"]);
        // An unclosed curly opener does not swallow later straight quotes.
        assert_eq!(std3("“x y \"z w\""), vec!["z w"]);
    }

    #[test]
    fn standard_marks_inside_a_span_are_text() {
        assert_eq!(
            std3("“he said ‘hi there’ today”"),
            vec!["he said ‘hi there’ today"]
        );
    }

    #[test]
    fn ragas_mixed_marks_and_newlines() {
        let r = |s| extract_quoted_spans(s, QuoteStyle::Ragas, 0);
        assert_eq!(
            r("He said \"the capital of France' ok"),
            vec!["the capital of France"]
        );
        assert_eq!(r("\"one two\nthree four\" and \"five six\""), vec!["and"]);
        assert_eq!(r("´a b´"), vec!["a b"]);
        assert_eq!(r("Empty \"\" x"), vec![""]);
    }

    #[test]
    fn many_unclosed_marks_stay_linear() {
        // 200k unclosed openers on one line: quadratic scanning would take minutes.
        let text = "“".repeat(200_000);
        assert!(std3(&text).is_empty());
        let text = "‘a ".repeat(100_000);
        assert!(std3(&text).is_empty());
        let text = "\"".repeat(200_001);
        assert_eq!(
            extract_quoted_spans(&text, QuoteStyle::Ragas, 0).len(),
            100_000
        );
    }
}
