//! sacrebleu 2.6.0's BLEU tokenizers: `13a` (the mteval-v13a rules, sacrebleu's default),
//! `none` and `char`.
//!
//! `13a` works in three steps, each reproduced exactly:
//!
//! 1. language-independent clean-up: remove every `<skipped>`, join `-\n` line breaks, turn the
//!    remaining `\n` into spaces and, when the text holds a `&`, unescape `&quot;`, `&amp;`,
//!    `&lt;` and `&gt;` (in that order, each replacement applied to the whole text);
//! 2. the text is padded with one space on each side and sacrebleu's `TokenizerRegexp` rules run
//!    in order: split off the ASCII symbols ``{|}~[\]^_` !"#$%&()*+:;<=>?@/``; split off `.`
//!    and `,` unless preceded by an ASCII digit; split them off unless followed by an ASCII
//!    digit; split off `-` after an ASCII digit;
//! 3. the result is split on Python whitespace and joined with single spaces.
//!
//! Every rule of step 2 matches ASCII characters only, so they run on bytes: a multi-byte
//! character behaves exactly as the single "non-digit" character Python's `re` sees.
//!
//! ```
//! use polars_rag::text::sacrebleu::BleuTokenizer;
//! let mut out = String::new();
//! BleuTokenizer::Tok13a.tokenize_into("It's 3.14, not 3,14.", &mut out);
//! assert_eq!(out, "It's 3.14 , not 3,14 .");
//! BleuTokenizer::Tok13a.tokenize_into("fish &amp; chips", &mut out);
//! assert_eq!(out, "fish & chips");
//! ```

use serde::{Deserialize, Serialize};

use crate::text::normalize::Whitespace;

/// The tokenizer BLEU applies to hypotheses and references (sacrebleu's `tokenize`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum BleuTokenizer {
    /// mteval-v13a, sacrebleu's default.
    #[default]
    #[serde(rename = "13a")]
    Tok13a,
    /// No tokenization: the text is split on whitespace only.
    #[serde(rename = "none")]
    None,
    /// Every character is a token.
    #[serde(rename = "char")]
    Char,
    /// mteval-v14 international: Unicode punctuation and symbols become tokens, except
    /// punctuation between digits (sacrebleu's `intl`).
    #[serde(rename = "intl")]
    Intl,
}

impl BleuTokenizer {
    /// The name sacrebleu prints in signatures (`13a`, `none`, `char`, `intl`).
    ///
    /// ```
    /// use polars_rag::text::sacrebleu::BleuTokenizer;
    /// assert_eq!(BleuTokenizer::default().name(), "13a");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            BleuTokenizer::Tok13a => "13a",
            BleuTokenizer::None => "none",
            BleuTokenizer::Char => "char",
            BleuTokenizer::Intl => "intl",
        }
    }

    /// Tokenize `text` into `out` (cleared first), exactly as sacrebleu's tokenizer object does
    /// (without the `rstrip` and lowercasing that BLEU applies before it).
    ///
    /// ```
    /// use polars_rag::text::sacrebleu::BleuTokenizer;
    /// let mut out = String::new();
    /// BleuTokenizer::Char.tokenize_into("ab c", &mut out);
    /// assert_eq!(out, "a b   c");
    /// BleuTokenizer::None.tokenize_into(" x.y ", &mut out);
    /// assert_eq!(out, " x.y ");
    /// ```
    pub fn tokenize_into(&self, text: &str, out: &mut String) {
        let mut tmp = String::new();
        self.tokenize_with(text, out, &mut tmp);
    }

    /// [`tokenize_into`](Self::tokenize_into) with a caller-owned temporary buffer.
    pub(crate) fn tokenize_with(&self, text: &str, out: &mut String, tmp: &mut String) {
        out.clear();
        match self {
            BleuTokenizer::None => out.push_str(text),
            BleuTokenizer::Char => {
                for (i, c) in text.chars().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    out.push(c);
                }
            }
            BleuTokenizer::Tok13a => tokenize_13a(text, out, tmp),
            BleuTokenizer::Intl => tokenize_intl(text, out),
        }
    }
}

/// sacrebleu's `TokenizerV14International` rules, in order: `(\P{N})(\p{P})` → `$1 $2 `,
/// `(\p{P})(\P{N})` → ` $1 $2`, `(\p{S})` → ` $1 `, then whitespace runs collapsed.
fn intl_rules() -> Option<&'static [(regex::Regex, &'static str); 3]> {
    static RULES: std::sync::OnceLock<Option<[(regex::Regex, &'static str); 3]>> =
        std::sync::OnceLock::new();
    RULES
        .get_or_init(|| {
            Some([
                (regex::Regex::new(r"(\P{N})(\p{P})").ok()?, "${1} ${2} "),
                (regex::Regex::new(r"(\p{P})(\P{N})").ok()?, " ${1} ${2}"),
                (regex::Regex::new(r"(\p{S})").ok()?, " ${1} "),
            ])
        })
        .as_ref()
}

fn tokenize_intl(text: &str, out: &mut String) {
    out.clear();
    let mut line = std::borrow::Cow::Borrowed(text);
    // The patterns are constants that compile; without them the text is left as it is.
    if let Some(rules) = intl_rules() {
        for (re, replacement) in rules {
            let replaced = re.replace_all(&line, *replacement).into_owned();
            line = std::borrow::Cow::Owned(replaced);
        }
    }
    for tok in line.split(|c| Whitespace::Python.is_space(c)) {
        if tok.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(tok);
    }
}

/// Replace every `pat` in `src` by `rep` into `dst` (Python's `str.replace`).
fn replace_into(src: &str, pat: &str, rep: &str, dst: &mut String) {
    dst.clear();
    let mut last = 0;
    for (i, _) in src.match_indices(pat) {
        dst.push_str(&src[last..i]);
        dst.push_str(rep);
        last = i + pat.len();
    }
    dst.push_str(&src[last..]);
}

/// Apply `str.replace(pat, rep)` to the text held in `a`, using `b` as the other buffer.
fn replace_step(a: &mut String, b: &mut String, pat: &str, rep: &str) {
    if a.contains(pat) {
        replace_into(a, pat, rep, b);
        std::mem::swap(a, b);
    }
}

fn tokenize_13a(text: &str, out: &mut String, tmp: &mut String) {
    // Step 1 in `out` (with `tmp` as the second buffer), padded with one space on each side.
    out.clear();
    out.push(' ');
    out.push_str(text);
    out.push(' ');
    replace_step(out, tmp, "<skipped>", "");
    replace_step(out, tmp, "-\n", "");
    replace_step(out, tmp, "\n", " ");
    if out.contains('&') {
        replace_step(out, tmp, "&quot;", "\"");
        replace_step(out, tmp, "&amp;", "&");
        replace_step(out, tmp, "&lt;", "<");
        replace_step(out, tmp, "&gt;", ">");
    }
    // Step 2 on bytes. Every pass only inserts ASCII spaces next to ASCII bytes, so the byte
    // buffers stay valid UTF-8.
    let mut a = std::mem::take(out).into_bytes();
    let mut b = std::mem::take(tmp).into_bytes();
    // Rule 1: pad the ASCII symbols.
    b.clear();
    for &c in &a {
        if is_13a_symbol(c) {
            b.extend_from_slice(&[b' ', c, b' ']);
        } else {
            b.push(c);
        }
    }
    std::mem::swap(&mut a, &mut b);
    // Rule 2: `([^0-9])([\.,])` -> `\1 \2 `.
    pair_pass(
        &a,
        &mut b,
        |x, y| !x.is_ascii_digit() && is_dot_comma(y),
        |o, x, y| o.extend_from_slice(&[x, b' ', y, b' ']),
    );
    std::mem::swap(&mut a, &mut b);
    // Rule 3: `([\.,])([^0-9])` -> ` \1 \2`.
    pair_pass(
        &a,
        &mut b,
        |x, y| is_dot_comma(x) && !y.is_ascii_digit(),
        |o, x, y| o.extend_from_slice(&[b' ', x, b' ', y]),
    );
    std::mem::swap(&mut a, &mut b);
    // Rule 4: `([0-9])(-)` -> `\1 \2 `.
    pair_pass(
        &a,
        &mut b,
        |x, y| x.is_ascii_digit() && y == b'-',
        |o, x, y| o.extend_from_slice(&[x, b' ', y, b' ']),
    );
    // Step 3: split on Python whitespace, join with single spaces.
    let spaced = String::from_utf8(b).unwrap_or_default();
    out.clear();
    for tok in spaced.split(|c| Whitespace::Python.is_space(c)) {
        if tok.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(tok);
    }
    a.clear();
    *tmp = String::from_utf8(a).unwrap_or_default();
}

#[inline]
fn is_dot_comma(c: u8) -> bool {
    c == b'.' || c == b','
}

/// `[\{-\~\[-\` -\&\(-\+\:-\@\/]`.
#[inline]
fn is_13a_symbol(c: u8) -> bool {
    matches!(c, b'{'..=b'~' | b'['..=b'`' | b' '..=b'&' | b'('..=b'+' | b':'..=b'@' | b'/')
}

/// One `re.sub` of a two-character pattern: scan left to right, replacing each match and
/// resuming after it.
#[inline]
fn pair_pass(
    src: &[u8],
    dst: &mut Vec<u8>,
    matches: impl Fn(u8, u8) -> bool,
    emit: impl Fn(&mut Vec<u8>, u8, u8),
) {
    dst.clear();
    let mut i = 0;
    while i < src.len() {
        if i + 1 < src.len() && matches(src[i], src[i + 1]) {
            emit(dst, src[i], src[i + 1]);
            i += 2;
        } else {
            dst.push(src[i]);
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> String {
        let mut out = String::new();
        BleuTokenizer::Tok13a.tokenize_into(s, &mut out);
        out
    }

    #[test]
    fn intl_splits_unicode_punctuation_and_symbols_but_not_numbers() {
        let mut out = String::new();
        BleuTokenizer::Intl.tokenize_into("«Bonjour», dit-il: 3,14 € — fin.", &mut out);
        assert_eq!(out, "« Bonjour » , dit - il : 3,14 € — fin ."); // as sacrebleu 2.6.0
    }

    #[test]
    fn basics() {
        assert_eq!(t(""), "");
        assert_eq!(t("   "), "");
        assert_eq!(t("Hello, world!"), "Hello , world !");
        assert_eq!(t("a..b"), "a . . b");
        assert_eq!(t("1-2 e-mail"), "1 - 2 e-mail");
        assert_eq!(t("x<skipped>y"), "xy");
        assert_eq!(t("co-\nop\nx"), "coop x");
        assert_eq!(t("&amp;lt;"), "<");
        assert_eq!(t("été.Ça,"), "été . Ça ,");
        assert_eq!(t(".5"), ". 5");
    }
}
