//! Tokenization as sentence-transformers does it for a BERT model: the text stripped of leading
//! and trailing whitespace (Python's `str.strip`), then the model's own `tokenizer.json` (Hugging
//! Face `tokenizers`) with `[CLS]`/`[SEP]`, truncated to the model's `max_seq_length` from the
//! right (longest-first, as `truncation=True` asks), never padded here.

use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

/// A loaded `tokenizer.json`, set up as sentence-transformers calls it.
pub struct TextTokenizer {
    tokenizer: Tokenizer,
}

/// The token ids of one text and whether the model's limit cut it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tokens {
    /// Token ids, `[CLS]` first and `[SEP]` last.
    pub ids: Vec<u32>,
    /// True when the text had more tokens than the model reads.
    pub truncated: bool,
}

/// Python's `str.strip()` with no argument: Unicode whitespace plus the four information
/// separators (U+001C..U+001F) that Python counts as whitespace and Rust does not.
pub fn python_strip(text: &str) -> &str {
    text.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

impl TextTokenizer {
    /// Reads the contents of `tokenizer.json` and sets truncation to `max_seq_length` tokens
    /// (special tokens included) and no padding, whatever the file says (the file's own
    /// truncation, 128 for all-MiniLM-L6-v2, is replaced at call time by sentence-transformers
    /// too).
    pub(crate) fn from_json_bytes(bytes: &[u8], max_seq_length: usize) -> Result<Self, String> {
        let mut tokenizer = Tokenizer::from_bytes(bytes).map_err(|e| e.to_string())?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_seq_length,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
                direction: TruncationDirection::Right,
            }))
            .map_err(|e| e.to_string())?;
        tokenizer.with_padding(None);
        Ok(TextTokenizer { tokenizer })
    }

    /// The ids the model reads for `text`.
    pub(crate) fn tokens(&self, text: &str) -> Result<Tokens, String> {
        let encoding = self
            .tokenizer
            .encode(python_strip(text), true)
            .map_err(|e| e.to_string())?;
        Ok(Tokens {
            ids: encoding.get_ids().to_vec(),
            truncated: !encoding.get_overflowing().is_empty(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::python_strip;

    #[test]
    fn strips_what_python_strips() {
        assert_eq!(python_strip("\u{1c} a b\u{a0}\n\u{3000}"), "a b");
        assert_eq!(python_strip("\u{200b}x"), "\u{200b}x"); // zero-width space is not whitespace
        assert_eq!(python_strip(" \t "), "");
    }
}
