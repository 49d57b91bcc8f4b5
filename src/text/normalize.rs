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

crate::settings::from_str_by_serde!(Whitespace);

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
        // ASCII fast path: no char decoding, each word pushed whole.
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if ws.is_ascii_space(bytes[i]) {
                *pending_space = true;
                i += 1;
                continue;
            }
            let start = i;
            while i < bytes.len() && !ws.is_ascii_space(bytes[i]) {
                i += 1;
            }
            if *pending_space && !out.is_empty() {
                out.push(' ');
            }
            *pending_space = false;
            out.push_str(&text[start..i]);
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

/// [`normalize_joined_into`] with one space as separator, for pieces already collapsed: with
/// no whitespace but single spaces between non-spaces (and spaces at their ends), so
/// normalising is lowercasing. Returns `false` (leaving `out` unspecified) when a piece is not of that form or
/// holds a capital sigma (whose lowercase depends on its neighbours); the caller then
/// normalises the general way. The text is copied and its ASCII lowercased in bulk, so on prose
/// this costs about one copy.
///
/// ```
/// use polars_rag::text::normalize::{normalize_joined_fast, Whitespace};
/// let mut out = String::new();
/// assert!(normalize_joined_fast(&mut out, &["Hello World’s", "Éclair — OK"], Whitespace::Python));
/// assert_eq!(out, "hello world’s éclair — ok");
/// assert!(!normalize_joined_fast(&mut out, &["two  spaces"], Whitespace::Python));
/// assert!(!normalize_joined_fast(&mut out, &["line\nbreak"], Whitespace::Python));
/// ```
pub fn normalize_joined_fast(out: &mut String, pieces: &[&str], ws: Whitespace) -> bool {
    out.clear();
    for piece in pieces {
        // Spaces at a piece's ends merge with the separator (or are stripped at the ends of
        // the join), and a piece of spaces only adds nothing: only the rest of it is pushed.
        let bytes = piece.as_bytes();
        let start = bytes.iter().position(|&b| b != b' ').unwrap_or(bytes.len());
        let end = bytes
            .iter()
            .rposition(|&b| b != b' ')
            .map_or(start, |e| e + 1);
        let piece = &piece[start..end.max(start)];
        if piece.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        if !push_lowercase_collapsed(out, piece, ws) {
            return false;
        }
    }
    true
}

/// Appends the lowercase of `text` when `text` is already collapsed (see
/// [`normalize_joined_fast`]); `false` otherwise.
fn push_lowercase_collapsed(out: &mut String, text: &str, ws: Whitespace) -> bool {
    let Some(needs_mapping) = scan_collapsed(text, ws) else {
        return false;
    };
    static TWO_SPACES: std::sync::OnceLock<memchr::memmem::Finder<'static>> =
        std::sync::OnceLock::new();
    let two_spaces = TWO_SPACES.get_or_init(|| memchr::memmem::Finder::new(b"  "));
    if two_spaces.find(text.as_bytes()).is_some() {
        return false;
    }
    // ASCII letters are lowercased in bulk (UTF-8 lead and continuation bytes are >= 0x80, so
    // they pass unchanged); a non-ASCII character with a lowercase of its own (a capital `É`)
    // has the text rebuilt character by character.
    if needs_mapping {
        for c in text.chars() {
            out.extend(c.to_lowercase());
        }
    } else {
        let from = out.len();
        out.push_str(text);
        out[from..].make_ascii_lowercase();
    }
    true
}

/// One pass over `text` for [`push_lowercase_collapsed`]: `None` when it holds whitespace other
/// than the space or a capital sigma, else whether a non-ASCII character of it lowercases to
/// something else. Only the words of 8 bytes holding a non-ASCII byte are decoded.
fn scan_collapsed(text: &str, ws: Whitespace) -> Option<bool> {
    let bytes = text.as_bytes();
    // First one branch-free pass per 64 bytes (it vectorises): control bytes (every ASCII
    // whitespace but the space is one) and whether any byte is non-ASCII.
    let mut non_ascii = false;
    for chunk in bytes.chunks(64) {
        let (mut control, mut high) = (false, false);
        for &b in chunk {
            control |= b < 0x20;
            high |= b >= 0x80;
        }
        if control {
            return None;
        }
        non_ascii |= high;
    }
    if !non_ascii {
        return Some(false);
    }
    // Then the non-ASCII characters, skipping ASCII 8 bytes at a time.
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut needs_mapping = false;
    let mut i = 0;
    while i < bytes.len() {
        if let Some(word) = bytes.get(i..i + 8) {
            let w = u64::from_le_bytes(word.try_into().ok()?);
            if w & HIGH == 0 {
                i += 8;
                continue;
            }
        }
        let end = (i + 8).min(bytes.len());
        while i < end {
            if bytes[i] < 0x80 {
                i += 1;
                continue;
            }
            let c = text.get(i..)?.chars().next()?;
            if c == '\u{3a3}' || ws.is_space(c) {
                return None;
            }
            needs_mapping |= !lowercase_is_itself(c);
            i += c.len_utf8();
        }
    }
    Some(needs_mapping)
}

/// Whether `c` is its own lowercase; the blocks of prose punctuation and CJK (which have no
/// case) answer without the case-mapping table.
#[inline]
fn lowercase_is_itself(c: char) -> bool {
    if matches!(c, '\u{df}'..='\u{ff}' | '\u{2000}'..='\u{20ff}' | '\u{3000}'..='\u{9fff}') {
        return true;
    }
    let mut lower = c.to_lowercase();
    lower.next() == Some(c) && lower.next().is_none()
}

/// Writes into `out` the text with whitespace runs collapsed to one space and stripped, case
/// kept. Used as a search key on raw text (see `metrics::citation`).
pub(crate) fn collapse_into(out: &mut String, text: &str, ws: Whitespace) {
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
    fn fast_join_equals_the_general_normalisation() {
        let pieces_sets: [&[&str]; 7] = [
            &["Plain ASCII Prose.", "Second SOURCE here"],
            &[
                "Quotes “Like” This — and ’that’",
                "İstanbul K\u{212a}elvin ẞ Straße",
            ],
            &["ΟΔΟΣ ends in sigma"],
            &["a\u{a0}b", "c"],
            &["trailing ", "x"],
            &[" lead", "", "   ", "Mid ", " end "],
            &["tab\there"],
        ];
        for pieces in pieces_sets {
            for ws in [Whitespace::Python, Whitespace::Unicode] {
                let mut fast = String::new();
                let mut general = String::new();
                normalize_joined_into(&mut general, pieces, " ", ws);
                if normalize_joined_fast(&mut fast, pieces, ws) {
                    assert_eq!(fast, general, "{pieces:?}");
                }
            }
        }
        let mut out = String::new();
        assert!(normalize_joined_fast(
            &mut out,
            &["Quotes “Like” This"],
            Whitespace::Python
        ));
        assert!(!normalize_joined_fast(
            &mut out,
            &["ΟΔΟΣ"],
            Whitespace::Python
        ));
        assert!(!normalize_joined_fast(
            &mut out,
            &["a\u{a0}b"],
            Whitespace::Python
        ));
        assert!(normalize_joined_fast(
            &mut out,
            &[" a ", "", "  ", "b "],
            Whitespace::Python
        ));
        assert_eq!(out, "a b");
    }

    #[test]
    fn blocks_without_case_are_their_own_lowercase() {
        let blocks = [
            '\u{df}'..='\u{ff}',
            '\u{2000}'..='\u{20ff}',
            '\u{3000}'..='\u{9fff}',
        ];
        for c in blocks.into_iter().flatten() {
            let mut lower = c.to_lowercase();
            assert!(lower.next() == Some(c) && lower.next().is_none(), "{c:?}");
        }
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
