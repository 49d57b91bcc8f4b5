//! Whitespace classes and the "collapse whitespace, strip, lowercase" normalisation.
//!
//! Two whitespace classes exist because two kinds of users exist:
//!
//! * [`Whitespace::Python`] is what Python's `str.isspace()`, `str.split()`, `str.strip()` and the
//!   regex class `\s` accept. It is Unicode's `White_Space` plus the four ASCII information
//!   separators U+001C..U+001F. Compatibility modes use it so that counts equal the reference.
//! * [`Whitespace::Unicode`] is Unicode's `White_Space` property (Rust's [`char::is_whitespace`]),
//!   the default everywhere else.

use serde::{Deserialize, Serialize};

/// Which characters count as whitespace when splitting, stripping and collapsing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Whitespace {
    /// Unicode `White_Space` (U+0009..U+000D, U+0020, U+0085, U+00A0, U+1680, U+2000..U+200A,
    /// U+2028, U+2029, U+202F, U+205F, U+3000).
    Unicode,
    /// Python's `str.isspace()`: Unicode `White_Space` plus U+001C..U+001F.
    Python,
}

impl Whitespace {
    /// Whether `c` is whitespace in this class.
    ///
    /// ```
    /// use polars_rag::text::normalize::Whitespace;
    /// assert!(Whitespace::Python.is_space('\u{1f}'));
    /// assert!(!Whitespace::Unicode.is_space('\u{1f}'));
    /// assert!(Whitespace::Unicode.is_space('\u{a0}'));
    /// ```
    #[inline]
    pub fn is_space(self, c: char) -> bool {
        match self {
            Whitespace::Unicode => c.is_whitespace(),
            Whitespace::Python => c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c),
        }
    }

    /// Byte-level test for ASCII bytes; only meaningful when `b < 0x80`.
    #[inline]
    fn is_ascii_space(self, b: u8) -> bool {
        match b {
            b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r' => true,
            0x1c..=0x1f => self == Whitespace::Python,
            _ => false,
        }
    }

    /// `text` without leading and trailing whitespace (Python's `str.strip()` for
    /// [`Whitespace::Python`]).
    ///
    /// ```
    /// use polars_rag::text::normalize::Whitespace;
    /// assert_eq!(Whitespace::Unicode.strip("\u{3000} a b \n"), "a b");
    /// ```
    pub fn strip(self, text: &str) -> &str {
        text.trim_matches(|c| self.is_space(c))
    }

    /// Whether `text` holds at least `min` whitespace-separated words. Stops counting as soon
    /// as the answer is known, so it is cheap on long spans.
    ///
    /// ```
    /// use polars_rag::text::normalize::Whitespace;
    /// assert!(Whitespace::Python.has_min_words("one  two three", 3));
    /// assert!(!Whitespace::Python.has_min_words("one two", 3));
    /// assert!(Whitespace::Python.has_min_words("", 0));
    /// ```
    pub fn has_min_words(self, text: &str, min: usize) -> bool {
        if min == 0 {
            return true;
        }
        let mut words = 0;
        let mut in_word = false;
        for c in text.chars() {
            if self.is_space(c) {
                in_word = false;
            } else if !in_word {
                in_word = true;
                words += 1;
                if words >= min {
                    return true;
                }
            }
        }
        false
    }
}

/// Appends `text` to `out` with every whitespace run replaced by one space; whitespace at the
/// start of `out` is dropped. A run that ends `text` is remembered in `pending_space` so that
/// several pieces can be appended as if they were one string.
fn push_collapsed(out: &mut String, text: &str, ws: Whitespace, pending_space: &mut bool) {
    if text.is_ascii() {
        // ASCII fast path: byte loop, no char decoding.
        // SAFETY of the `as char` pushes below: every byte is < 0x80.
        for &b in text.as_bytes() {
            if ws.is_ascii_space(b) {
                *pending_space = true;
            } else {
                if *pending_space && !out.is_empty() {
                    out.push(' ');
                }
                *pending_space = false;
                out.push(b as char);
            }
        }
    } else {
        for c in text.chars() {
            if ws.is_space(c) {
                *pending_space = true;
            } else {
                if *pending_space && !out.is_empty() {
                    out.push(' ');
                }
                *pending_space = false;
                out.push(c);
            }
        }
    }
}

/// Lowercases `buf` in place as Python's `str.lower()` does (full Unicode mappings, final sigma).
fn lowercase_in_place(buf: &mut String) {
    if buf.is_ascii() {
        buf.make_ascii_lowercase();
    } else {
        *buf = buf.to_lowercase();
    }
}

/// Writes into `out` the normalisation `re.sub(r"\s+", " ", text).strip().lower()` of the
/// concatenation of `pieces` separated by `separator`, without building the concatenation.
///
/// ```
/// use polars_rag::text::normalize::{normalize_joined_into, Whitespace};
/// let mut out = String::new();
/// normalize_joined_into(&mut out, &["  Hello\n", "WORLD  "], " ", Whitespace::Python);
/// assert_eq!(out, "hello world");
/// ```
pub fn normalize_joined_into(out: &mut String, pieces: &[&str], separator: &str, ws: Whitespace) {
    out.clear();
    let mut pending_space = false;
    for (i, piece) in pieces.iter().enumerate() {
        if i > 0 {
            push_collapsed(out, separator, ws, &mut pending_space);
        }
        push_collapsed(out, piece, ws, &mut pending_space);
    }
    lowercase_in_place(out);
}

/// Writes into `out` the text with whitespace runs collapsed to one space and stripped, case
/// kept. Used as a search key on raw text (see `metrics::citation`).
pub fn collapse_into(out: &mut String, text: &str, ws: Whitespace) {
    out.clear();
    let mut pending_space = false;
    push_collapsed(out, text, ws, &mut pending_space);
}

/// `re.sub(r"\s+", " ", text).strip().lower()` as a new string.
///
/// ```
/// use polars_rag::text::normalize::{normalize, Whitespace};
/// assert_eq!(normalize("  Delta   E    = mc  ^ 2", Whitespace::Python), "delta e = mc ^ 2");
/// assert_eq!(normalize("ΟΔΟΣ", Whitespace::Unicode), "οδος");
/// ```
pub fn normalize(text: &str, ws: Whitespace) -> String {
    let mut out = String::with_capacity(text.len());
    normalize_joined_into(&mut out, &[text], "", ws);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_whitespace_set_matches_cpython() {
        // The exact set printed by CPython 3.11: [hex(i) for i in range(0x110000) if chr(i).isspace()]
        let expected: Vec<u32> = vec![
            0x9, 0xa, 0xb, 0xc, 0xd, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000,
            0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028,
            0x2029, 0x202f, 0x205f, 0x3000,
        ];
        let got: Vec<u32> = (0..=0x10ffffu32)
            .filter_map(char::from_u32)
            .filter(|&c| Whitespace::Python.is_space(c))
            .map(|c| c as u32)
            .collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn collapse_and_join() {
        let mut out = String::new();
        normalize_joined_into(&mut out, &["a ", " b", "", "c"], " ", Whitespace::Unicode);
        assert_eq!(out, "a b c");
        normalize_joined_into(&mut out, &[], " ", Whitespace::Unicode);
        assert_eq!(out, "");
        collapse_into(&mut out, " \u{2003}X \t Y\u{a0}", Whitespace::Unicode);
        assert_eq!(out, "X Y");
    }

    #[test]
    fn lowercase_is_full_unicode() {
        assert_eq!(
            normalize("CAFÉ AU LAIT", Whitespace::Python),
            "café au lait"
        );
        // U+0130 lowercases to two code points, as in Python.
        assert_eq!(normalize("İ", Whitespace::Python), "i\u{307}");
    }
}
