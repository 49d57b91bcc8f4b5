//! Tokenizers for ROUGE.
//!
//! * [`RougeTokenizer::RougeScore`] (`"rouge_score"`, the default) is rouge-score 0.1.2's
//!   `tokenize.tokenize`: lowercase (Python `str.lower`), every character outside `[a-z0-9]`
//!   becomes a separator, and with the stemmer on, tokens longer than three characters go
//!   through NLTK's Porter stemmer ([`crate::text::porter`]). Anything that is not ASCII
//!   disappears: `"Café crème"` gives `["caf", "cr", "me"]`, and Chinese or Japanese text gives
//!   no tokens at all (so it always scores 0).
//! * [`RougeTokenizer::Unicode`] (`"unicode"`) keeps the letters and digits of every script:
//!   a token is a run of characters for which `char::is_alphanumeric` holds, lowercased, with
//!   combining diacritical marks kept inside the token they follow (no Unicode normalisation is
//!   applied, so a precomposed `é` and `e` + U+0301 stay different tokens). Characters of
//!   scripts written without spaces (Han ideographs, Hiragana, Katakana, Thai, Lao, Khmer,
//!   Myanmar) are one token each, so CJK text is scored character by character. The stemmer,
//!   when on, stems only tokens made entirely of ASCII and longer than three characters.
//!
//! ```
//! use polars_rag::text::rouge_tokenize::{tokenize, RougeTokenizer};
//! assert_eq!(
//!     tokenize("The quick brown foxes jumped!", RougeTokenizer::RougeScore, true),
//!     ["the", "quick", "brown", "fox", "jump"]
//! );
//! assert_eq!(tokenize("Café crème", RougeTokenizer::RougeScore, false), ["caf", "cr", "me"]);
//! assert_eq!(tokenize("Café crème", RougeTokenizer::Unicode, false), ["café", "crème"]);
//! assert_eq!(
//!     tokenize("東京は日本 running", RougeTokenizer::Unicode, true),
//!     ["東", "京", "は", "日", "本", "run"]
//! );
//! ```

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use serde::{Deserialize, Serialize};

use crate::text::porter::PorterStemmer;

/// Which tokenizer ROUGE uses; see the [module documentation](self).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RougeTokenizer {
    /// rouge-score 0.1.2's tokenizer: ASCII letters and digits only.
    #[default]
    RougeScore,
    /// Letters and digits of every script; CJK and Thai one token per character.
    Unicode,
}

crate::settings::from_str_by_serde!(RougeTokenizer);

impl RougeTokenizer {
    /// The name used in options and signatures: `"rouge_score"` or `"unicode"`.
    pub fn name(self) -> &'static str {
        match self {
            RougeTokenizer::RougeScore => "rouge_score",
            RougeTokenizer::Unicode => "unicode",
        }
    }
}

/// Tokenizes `text` into owned tokens.
///
/// ```
/// use polars_rag::text::rouge_tokenize::{tokenize, RougeTokenizer};
/// assert_eq!(tokenize("e-mail 3.14", RougeTokenizer::RougeScore, false), ["e", "mail", "3", "14"]);
/// ```
pub fn tokenize(text: &str, tokenizer: RougeTokenizer, use_stemmer: bool) -> Vec<String> {
    let mut scratch = TokenScratch::default();
    let mut out = Vec::new();
    for_each_token(text, tokenizer, use_stemmer, &mut scratch, |t| {
        out.push(String::from_utf8_lossy(t).into_owned());
    });
    out
}

/// Buffers reused between calls to [`for_each_token`], and a cache of stems (a column's
/// vocabulary repeats, and stemming is the costliest step of tokenization).
#[derive(Default, Clone, Debug)]
pub(crate) struct TokenScratch {
    token: Vec<u8>,
    stemmed: Vec<u8>,
    stemmer: PorterStemmer,
    stems: HashMap<Box<[u8]>, Box<[u8]>, BuildHasherDefault<FxHasher>>,
}

/// Stems kept at most; the cache is emptied when it is full.
const STEM_CACHE_MAX: usize = 1 << 16;

/// A small multiplicative hasher for short byte strings.
#[derive(Default, Clone, Copy, Debug)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut h = self.0;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
        self.0 = h;
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (self.0.rotate_left(5) ^ n as u64).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

/// Calls `emit` with the UTF-8 bytes of every token of `text`, in order.
pub(crate) fn for_each_token(
    text: &str,
    tokenizer: RougeTokenizer,
    use_stemmer: bool,
    scratch: &mut TokenScratch,
    mut emit: impl FnMut(&[u8]),
) {
    scratch.token.clear();
    match tokenizer {
        RougeTokenizer::RougeScore => rouge_score_tokens(text, use_stemmer, scratch, &mut emit),
        RougeTokenizer::Unicode => unicode_tokens(text, use_stemmer, scratch, &mut emit),
    }
}

/// Emits the token collected in `scratch.token` (stemmed if asked and eligible) and clears it.
fn flush(use_stemmer: bool, scratch: &mut TokenScratch, emit: &mut impl FnMut(&[u8])) {
    let tok = &scratch.token;
    if tok.is_empty() {
        return;
    }
    // rouge_score stems tokens of more than three characters; the unicode mode only ASCII ones.
    if use_stemmer && tok.len() > 3 && tok.is_ascii() {
        if let Some(stem) = scratch.stems.get(tok.as_slice()) {
            if !stem.is_empty() {
                emit(stem);
            }
        } else {
            scratch.stemmed.clear();
            scratch.stemmer.stem_ascii_into(tok, &mut scratch.stemmed);
            if !scratch.stemmed.is_empty() {
                emit(&scratch.stemmed);
            }
            if scratch.stems.len() >= STEM_CACHE_MAX {
                scratch.stems.clear();
            }
            scratch
                .stems
                .insert(tok.as_slice().into(), scratch.stemmed.as_slice().into());
        }
    } else {
        emit(tok);
    }
    scratch.token.clear();
}

fn rouge_score_tokens(
    text: &str,
    use_stemmer: bool,
    scratch: &mut TokenScratch,
    emit: &mut impl FnMut(&[u8]),
) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii() {
            let l = b.to_ascii_lowercase();
            if l.is_ascii_lowercase() || l.is_ascii_digit() {
                scratch.token.push(l);
            } else {
                flush(use_stemmer, scratch, emit);
            }
            i += 1;
            continue;
        }
        // A non-ASCII character: only its lowercase forms that are ASCII letters survive
        // (KELVIN SIGN → 'k', 'İ' → 'i' + U+0307).
        let Some(c) = text[i..].chars().next() else {
            break;
        };
        for l in c.to_lowercase() {
            if l.is_ascii_lowercase() || l.is_ascii_digit() {
                scratch.token.push(l as u8);
            } else {
                flush(use_stemmer, scratch, emit);
            }
        }
        i += c.len_utf8();
    }
    flush(use_stemmer, scratch, emit);
}

/// Scripts written without spaces between words: each letter is a token.
fn is_unspaced_script(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF      // Thai, Lao
        | 0x1000..=0x109F    // Myanmar
        | 0x1780..=0x17FF    // Khmer
        | 0x19E0..=0x19FF    // Khmer symbols
        | 0x2E80..=0x2FDF    // CJK radicals, Kangxi radicals
        | 0x3005..=0x3007    // 々 〆 〇
        | 0x3021..=0x3029    // Hangzhou numerals
        | 0x3031..=0x3035    // kana repeat marks
        | 0x3038..=0x303C
        | 0x3040..=0x30FF    // Hiragana, Katakana
        | 0x31F0..=0x31FF    // Katakana phonetic extensions
        | 0x3400..=0x4DBF    // CJK Extension A
        | 0x4E00..=0x9FFF    // CJK Unified Ideographs
        | 0xF900..=0xFAFF    // CJK Compatibility Ideographs
        | 0xFF66..=0xFF9F    // halfwidth Katakana
        | 0x1B000..=0x1B16F  // Kana supplement / extended
        | 0x20000..=0x323AF  // CJK Extensions B..H, compatibility supplement
    )
}

/// Combining diacritical marks, kept inside the token they follow.
fn is_combining_mark(c: char) -> bool {
    matches!(c as u32,
        0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F
    )
}

fn unicode_tokens(
    text: &str,
    use_stemmer: bool,
    scratch: &mut TokenScratch,
    emit: &mut impl FnMut(&[u8]),
) {
    let mut buf = [0u8; 4];
    for c in text.chars() {
        if c.is_ascii() {
            if c.is_ascii_alphanumeric() {
                scratch.token.push(c.to_ascii_lowercase() as u8);
            } else {
                flush(use_stemmer, scratch, emit);
            }
            continue;
        }
        if is_combining_mark(c) {
            if !scratch.token.is_empty() {
                scratch
                    .token
                    .extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
            continue;
        }
        if !c.is_alphanumeric() {
            flush(use_stemmer, scratch, emit);
            continue;
        }
        if is_unspaced_script(c) {
            flush(use_stemmer, scratch, emit);
            for l in c.to_lowercase() {
                scratch
                    .token
                    .extend_from_slice(l.encode_utf8(&mut buf).as_bytes());
            }
            flush(use_stemmer, scratch, emit);
            continue;
        }
        for l in c.to_lowercase() {
            scratch
                .token
                .extend_from_slice(l.encode_utf8(&mut buf).as_bytes());
        }
    }
    flush(use_stemmer, scratch, emit);
}

#[cfg(test)]
mod tests {
    use super::{tokenize, RougeTokenizer::*};

    #[test]
    fn rouge_score_mode() {
        assert_eq!(
            tokenize("it's don't", RougeScore, true),
            ["it", "s", "don", "t"]
        );
        assert_eq!(tokenize("\u{212A}elvin", RougeScore, false), ["kelvin"]);
        assert_eq!(tokenize("İstanbul", RougeScore, false), ["i", "stanbul"]);
        assert!(tokenize("東京", RougeScore, true).is_empty());
    }

    #[test]
    fn unicode_mode_accents_and_cjk() {
        assert_eq!(tokenize("Über CAFÉ", Unicode, false), ["über", "café"]);
        assert_eq!(
            tokenize("cafe\u{301} x", Unicode, false),
            ["cafe\u{301}", "x"]
        );
        assert_eq!(tokenize("東京は日本の首都です。", Unicode, false).len(), 10);
        assert!(tokenize("สวัสดี", Unicode, false).len() >= 4);
        assert_eq!(tokenize("Привет, мир", Unicode, false), ["привет", "мир"]);
        assert_eq!(
            tokenize("running naïvely", Unicode, true),
            ["run", "naïvely"]
        );
        assert_eq!(tokenize("東京tower", Unicode, false), ["東", "京", "tower"]);
    }
}
