//! Text from the tables or the command line as the text outputs print it (the Markdown of
//! `compare` and `summary`, the summary of `score`, the messages that echo a gate or a key).
//!
//! A segment name, an id or a column's name is data: it may hold an ESC or BEL sequence that,
//! printed raw, moves the cursor, retitles or clears the terminal, or a bidirectional control
//! that reorders what follows; it may be megabytes long. The text outputs show each such value
//! through [`shown`], as the HTML report escapes markup. The machine-readable outputs (JSON,
//! Parquet) keep the exact values.

use std::borrow::Cow;
use std::fmt::Write;

/// The most characters of one value (a segment, an id, a metric's or a column's name, a gate, a
/// configuration key) that a text output shows; far above any real name.
pub(crate) const SHOWN_CHARS: usize = 200;

/// `text` as a text output shows a value taken from the data or the command line: each control
/// character (C0, DEL, C1), line or paragraph separator and bidirectional formatting character
/// written as its escape (`\u{1b}`), and a value longer than [`SHOWN_CHARS`] characters cut
/// there, with an ellipsis and its length. Ordinary text comes back as it is.
pub(crate) fn shown(text: &str) -> Cow<'_, str> {
    visible(text, SHOWN_CHARS)
}

/// `text` with the characters [`shown`] escapes escaped, whole: for a line built from values
/// already shown (or not from the data), whose length is its own.
// Its callers (the tables' reports) come with the `polars` feature.
#[cfg_attr(not(feature = "polars"), allow(dead_code))]
pub(crate) fn escaped(text: &str) -> Cow<'_, str> {
    visible(text, usize::MAX)
}

/// Whether a terminal would act on `c` rather than print it, or reorder the text around it.
fn acts(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
        )
}

fn visible(text: &str, limit: usize) -> Cow<'_, str> {
    // A string of at most `limit` bytes has at most `limit` characters: no count needed.
    let long = text.len() > limit && text.chars().nth(limit).is_some();
    if !long && !text.chars().any(acts) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len().min(limit.saturating_mul(4)) + 32);
    for c in text.chars().take(limit) {
        if acts(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    if long {
        let _ = write!(out, "… ({} characters)", text.chars().count());
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_text_is_borrowed_as_it_is() {
        for text in [
            "",
            "faithfulness.score",
            "ségment ☃ 中文",
            &"x".repeat(SHOWN_CHARS),
        ] {
            assert!(
                matches!(shown(text), Cow::Borrowed(t) if t == text),
                "{text}"
            );
        }
    }

    #[test]
    fn control_and_bidi_characters_are_escaped() {
        assert_eq!(
            shown("a\u{1b}]0;owned\u{7}b\u{9b}c\u{202e}d\r\n\t"),
            "a\\u{1b}]0;owned\\u{7}b\\u{9b}c\\u{202e}d\\u{d}\\u{a}\\u{9}"
        );
        assert_eq!(escaped("\u{1}"), "\\u{1}");
    }

    #[test]
    fn long_values_are_cut_with_their_length() {
        let long = format!("{}\u{1b}", "é".repeat(10 * SHOWN_CHARS));
        let s = shown(&long);
        assert_eq!(
            s,
            format!(
                "{}… ({} characters)",
                "é".repeat(SHOWN_CHARS),
                10 * SHOWN_CHARS + 1
            )
        );
        assert_eq!(escaped(&long).chars().count(), 10 * SHOWN_CHARS + 6);
    }
}
