//! NLTK's `word_tokenize` for lowercased English text.
//!
//! [`nltk_word_tokenize`] returns the tokens of Python's `nltk.word_tokenize(text)` (NLTK 3.10,
//! `language="english"`, `preserve_line=False`): the text is split into sentences by the Punkt
//! sentence tokenizer with NLTK's English model, and each sentence is tokenized by
//! `NLTKWordTokenizer` (the Treebank rules with NLTK's quote, dash and ellipsis additions).
//!
//! Reproduced rule for rule, on code points (Python semantics, never bytes):
//!
//! * Punkt: the candidate ends (`.`, `?`, `!` followed by closing punctuation or by whitespace
//!   and a token), the context of the word before each candidate (including NLTK's quirks in
//!   finding that word and dropping overlapping candidates), Punkt's own word splitter, both
//!   annotation passes (abbreviations, ellipses, initials, numbers, collocations, the
//!   orthographic heuristic), boundary realignment (closing quotes and brackets after the end
//!   stay with the sentence), and the slicing of sentences (whitespace between sentences is
//!   dropped, whitespace inside a sentence is kept).
//! * `NLTKWordTokenizer`: every substitution in order (starting quotes, punctuation, brackets,
//!   double dashes, ending quotes, clitics, the MacIntyre contractions), each implemented as a
//!   hand-written scan instead of a regular expression, with the character classes of the
//!   engines NLTK uses (the `regex` module's Unicode `\w`, `\d` and `\s`; the standard `re`
//!   module's `\w` and `\s` for the contractions; Python's `str.isspace` for the final split).
//!
//! Simplified: only the parts of the English model that can change the result for lowercased
//! text are embedded (the abbreviations, the collocations, the sentence starters and the four
//! types whose orthographic evidence is undecided for a lowercase token). Punkt's orthographic
//! evidence for capitalised words (about 20,000 types) is left out, so a token that starts with
//! an uppercase letter is treated as never seen: after an abbreviation or an ellipsis it starts a
//! new sentence only if it is a frequent sentence starter ("The", "He", ...), and after an
//! initial it never does. Text that keeps its capitals may therefore split differently from
//! NLTK after abbreviations, ellipses and initials (NLTK splits `"X. Another"` into two
//! sentences, which keeps `X` and `.` apart; the port keeps `X.` whole); lowercased text matches
//! exactly (uppercase letters that `str.lower` leaves alone, such as `ℂ`, are handled as NLTK
//! handles them, since the model has no evidence for those types either). Character classes
//! come from Rust's Unicode tables (the `regex` crate's and the standard library's), which can
//! differ from Python's for code points assigned in the newest Unicode versions.
//!
//! ```
//! use polars_rag::text::word_tokenize::nltk_word_tokenize;
//! assert_eq!(
//!     nltk_word_tokenize("dr. smith went to washington. he said hi."),
//!     ["dr.", "smith", "went", "to", "washington", ".", "he", "said", "hi", "."]
//! );
//! assert_eq!(nltk_word_tokenize("don't stop... ever"), ["do", "n't", "stop", "...", "ever"]);
//! assert_eq!(
//!     nltk_word_tokenize("e.g. this and i.e. that."),
//!     ["e.g", ".", "this", "and", "i.e", ".", "that", "."]
//! );
//! // A number before a lowercase word is not a sentence end, so its period stays attached.
//! assert_eq!(nltk_word_tokenize("in 2023. the end."), ["in", "2023.", "the", "end", "."]);
//! ```

use std::borrow::Cow;
use std::cell::RefCell;
use std::sync::OnceLock;

use regex::Regex;

mod punkt;
mod treebank;

use punkt::*;
use treebank::*;

/// Tokens of `nltk.word_tokenize(text)` for lowercased English text.
///
/// See the [module documentation](self) for what is reproduced exactly. Never panics.
pub fn nltk_word_tokenize(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    nltk_word_tokenize_into(text, &mut tokens);
    tokens
}

/// The sentences of `nltk.sent_tokenize(text)` (English Punkt, as [`nltk_word_tokenize`]
/// splits sentences), as slices of `text`; an empty or inverted span gives an empty sentence,
/// as Python's slicing does. Exact for lowercased text; for text with capitals see the
/// [module documentation](self).
///
/// ```
/// use polars_rag::text::word_tokenize::nltk_sent_tokenize;
/// assert_eq!(nltk_sent_tokenize("It opened in 1932 [1]. It closed."), ["It opened in 1932 [1].", "It closed."]);
/// assert!(nltk_sent_tokenize("  ").is_empty());
/// ```
pub fn nltk_sent_tokenize(text: &str) -> Vec<&str> {
    let (mut slices, mut spans) = (Vec::new(), Vec::new());
    sentence_spans(text, &mut slices, &mut spans);
    spans
        .iter()
        .map(|&(start, end)| if start < end { &text[start..end] } else { "" })
        .collect()
}

/// Appends the tokens of `nltk.word_tokenize(text)` to `tokens` (which is not cleared).
pub(crate) fn nltk_word_tokenize_into(text: &str, tokens: &mut Vec<String>) {
    nltk_word_tokenize_for_each(text, |token| tokens.push(token.to_owned()));
}

/// Calls `f` with each token of `nltk.word_tokenize(text)`, in order, without allocating a
/// `String` per token (the token is borrowed from a buffer that is reused for the next
/// sentence). For callers that hash, count or intern the tokens.
///
/// ```
/// use polars_rag::text::word_tokenize::nltk_word_tokenize_for_each;
/// let mut lengths = Vec::new();
/// nltk_word_tokenize_for_each("i can't. ok", |token| lengths.push(token.len()));
/// assert_eq!(lengths, [1, 2, 3, 1, 2]); // "i", "ca", "n't", ".", "ok"
/// ```
pub fn nltk_word_tokenize_for_each(text: &str, mut f: impl FnMut(&str)) {
    // The sentence spans and the rewrite buffers are kept per thread, so that tokenizing many
    // short texts (the usual load) does not allocate them again for every text. If `f`
    // tokenizes on the same thread the scratch is already borrowed, and while the thread is
    // being torn down it is gone; both then use fresh buffers.
    let reused = SCRATCH
        .try_with(|cell| match cell.try_borrow_mut() {
            Ok(mut scratch) => {
                scratch.tokenize(text, &mut f);
                // Do not keep the memory of an unusually long text alive for the thread.
                if scratch.capacity() > MAX_KEPT_SCRATCH {
                    *scratch = Scratch::default();
                }
                true
            }
            Err(_) => false,
        })
        .unwrap_or(false);
    if !reused {
        Scratch::default().tokenize(text, &mut f);
    }
}

/// Bytes of scratch capacity a thread keeps between calls.
const MAX_KEPT_SCRATCH: usize = 1 << 16;

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// The reusable state of one tokenization.
#[derive(Default)]
struct Scratch {
    /// Punkt's sentence slices before realignment.
    slices: Vec<(usize, usize)>,
    /// The realigned sentence spans.
    spans: Vec<(usize, usize)>,
    buffers: RewriteBuffers,
}

impl Scratch {
    fn tokenize(&mut self, text: &str, f: &mut impl FnMut(&str)) {
        sentence_spans(text, &mut self.slices, &mut self.spans);
        for &(start, end) in &self.spans {
            // Python slices with start >= end are empty, and an empty sentence has no tokens.
            if start < end {
                tokenize_sentence(&text[start..end], &mut self.buffers, f);
            }
        }
    }

    /// Bytes held.
    fn capacity(&self) -> usize {
        let span = std::mem::size_of::<(usize, usize)>();
        (self.slices.capacity() + self.spans.capacity()) * span
            + self.buffers.text.capacity()
            + self.buffers.spare.capacity()
    }
}

// ---------------------------------------------------------------------------------------------
// Character classes
// ---------------------------------------------------------------------------------------------

/// `\s` of the `regex` module (what NLTK compiles its patterns with): Unicode White_Space.
fn is_regex_space(c: char) -> bool {
    c.is_whitespace()
}

/// Python's `str.isspace`, used by `str.split()` and `str.strip()`: White_Space plus the four
/// information separators U+001C..U+001F.
fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// `string.whitespace`, the only characters Punkt accepts before the word preceding a
/// candidate sentence end.
fn is_ascii_whitespace_byte(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c')
}

fn char_matches(cell: &'static OnceLock<Regex>, pattern: &str, c: char) -> bool {
    let re = cell.get_or_init(|| Regex::new(pattern).expect("constant character class"));
    let mut buf = [0u8; 4];
    re.is_match(c.encode_utf8(&mut buf))
}

/// `\w` of the `regex` module: alphabetic, marks, decimal digits, connector punctuation and
/// join controls (Unicode TR 18), the same definition as the `regex` crate's `\w`.
fn is_regex_word(c: char) -> bool {
    static WORD: OnceLock<Regex> = OnceLock::new();
    if c.is_ascii() {
        c.is_ascii_alphanumeric() || c == '_'
    } else {
        char_matches(&WORD, r"\w", c)
    }
}

/// `\d` of the `regex` module: Unicode decimal digits (general category Nd).
fn is_decimal_digit(c: char) -> bool {
    static DIGIT: OnceLock<Regex> = OnceLock::new();
    if c.is_ascii() {
        c.is_ascii_digit()
    } else {
        c.is_numeric() && char_matches(&DIGIT, r"\d", c)
    }
}

/// `\w` of Python's standard `re` module (used only by the contraction rules): `str.isalnum()`
/// (letters and numbers of every kind) or `_`.
fn is_re_word(c: char) -> bool {
    static WORD: OnceLock<Regex> = OnceLock::new();
    if c.is_ascii() {
        c.is_ascii_alphanumeric() || c == '_'
    } else {
        char_matches(&WORD, r"[\p{L}\p{N}_]", c)
    }
}

// The classes below are `matches!` rather than `"...".contains(c)`, which searches the string
// for every character tested.

/// Characters that cannot appear inside a Punkt word token (`_re_non_word_chars`).
fn is_punkt_non_word(c: char) -> bool {
    matches!(
        c,
        ')' | '"'
            | ';'
            | '}'
            | ']'
            | '*'
            | ':'
            | '@'
            | '\''
            | '('
            | '{'
            | '['
            | '\u{2018}'
            | '\u{2019}'
            | '\u{201c}'
            | '\u{201d}'
            | '\u{ab}'
            | '\u{bb}'
            | '?'
            | '!'
    )
}

/// Characters that cannot start a Punkt word token (`_re_word_start` excludes them).
fn is_punkt_non_word_start(c: char) -> bool {
    matches!(
        c,
        '(' | '"'
            | '`'
            | '{'
            | '['
            | ':'
            | ';'
            | '&'
            | '#'
            | '*'
            | '@'
            | ')'
            | '}'
            | ']'
            | '-'
            | ','
    )
}

/// Closing punctuation that Punkt moves back onto the sentence before a boundary.
fn is_realigned_closer(c: char) -> bool {
    matches!(
        c,
        '"' | '\''
            | ')'
            | ']'
            | '}'
            | '\u{2018}'
            | '\u{2019}'
            | '\u{201c}'
            | '\u{201d}'
            | '\u{ab}'
            | '\u{bb}'
    )
}

fn char_at(s: &str, i: usize) -> Option<char> {
    s.get(i..).and_then(|rest| rest.chars().next())
}

fn char_before(s: &str, i: usize) -> Option<char> {
    s.get(..i).and_then(|head| head.chars().next_back())
}

// ---------------------------------------------------------------------------------------------
// Punkt sentence splitting
// ---------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn tok(text: &str) -> Vec<String> {
        nltk_word_tokenize(text)
    }

    #[test]
    fn for_each_may_tokenize_again_from_its_callback() {
        // The inner call finds the thread's scratch borrowed and uses its own.
        let mut inner = Vec::new();
        nltk_word_tokenize_for_each("a b. c", |token| inner.push(tok(token)));
        // "b." is an initial before a lowercase word, so it stays whole in the outer call.
        assert_eq!(inner, [vec!["a"], vec!["b", "."], vec!["c"]]);
        assert_eq!(
            tok("it's gonna work."),
            ["it", "'s", "gon", "na", "work", "."]
        );
    }

    #[test]
    fn abbreviation_keys_match_the_table() {
        assert!(ABBREVIATIONS.iter().all(|a| a.len() <= 7));
        for a in ABBREVIATIONS {
            assert!(is_abbreviation(a));
            assert!(!is_abbreviation(&format!("{a}x")));
            assert_eq!(is_abbreviation(&a[1..]), ABBREVIATIONS.contains(&&a[1..]));
        }
        assert!(!is_abbreviation("") && !is_abbreviation("abcdefgh"));
    }

    #[test]
    fn tables_are_sorted_for_binary_search() {
        assert!(ABBREVIATIONS.windows(2).all(|w| w[0] < w[1]));
        assert!(COLLOCATIONS.windows(2).all(|w| w[0] < w[1]));
        assert!(SENTENCE_STARTERS.windows(2).all(|w| w[0] < w[1]));
    }

    /// Tokens joined by single spaces (tokens never contain whitespace).
    fn joined(text: &str) -> String {
        tok(text).join(" ")
    }

    #[test]
    fn recorded_examples() {
        let cases = [
            (
                "dr. smith went to washington. he said hi.",
                "dr. smith went to washington . he said hi .",
            ),
            ("e.g. this and i.e. that.", "e.g . this and i.e . that ."),
            ("don't stop... ever", "do n't stop ... ever"),
            (
                "i’ve come to love it — really!",
                "i ’ ve come to love it — really !",
            ),
            (
                "rule c-1 costs $604 (0.305%).",
                "rule c-1 costs $ 604 ( 0.305 % ) .",
            ),
            (
                "“you’ll never settle there.” she was wrong.",
                "“ you ’ ll never settle there . ” she was wrong .",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(joined(text), want, "{text:?}");
        }
    }

    #[test]
    fn capitalised_word_after_initial_is_treated_as_unseen() {
        // A documented simplification: NLTK gives `X`, `.`, `Another` for the capitalised text,
        // since its model has seen "another" in lowercase. Lowercased, both agree.
        assert_eq!(joined("It was X. Another one."), "It was X. Another one .");
        assert_eq!(joined("it was x. another one."), "it was x. another one .");
    }

    #[test]
    fn empty_and_blank_text_has_no_tokens() {
        assert!(tok("").is_empty());
        assert!(tok(" \n\t\u{a0}\u{1c}").is_empty());
    }

    #[test]
    fn into_appends() {
        let mut tokens = vec!["x".to_owned()];
        nltk_word_tokenize_into("a b.", &mut tokens);
        assert_eq!(tokens, ["x", "a", "b", "."]);
    }

    #[test]
    fn contractions_and_quotes() {
        assert_eq!(tok("i cannot gonna"), ["i", "can", "not", "gon", "na"]);
        // The opening-quote rule splits `'tis` before the contraction rule can see it.
        assert_eq!(tok("'tis fine"), ["'", "tis", "fine"]);
        assert_eq!(tok("\"hi\""), ["``", "hi", "''"]);
    }

    #[test]
    fn punkt_multi_char_punctuation() {
        assert_eq!(multi_char_punct_len("--- x"), Some(3));
        assert_eq!(multi_char_punct_len(".. x"), Some(2));
        assert_eq!(multi_char_punct_len(". . . x"), Some(5));
        assert_eq!(multi_char_punct_len(". . x"), None);
        assert_eq!(multi_char_punct_len(". . . .x"), Some(7));
        assert_eq!(multi_char_punct_len(". . . . x"), Some(7));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn never_panics_on_arbitrary_text(text in any::<String>()) {
            let tokens = tok(&text);
            prop_assert!(tokens.iter().all(|t| !t.is_empty() && !t.contains(char::is_whitespace)));
        }

        #[test]
        fn never_panics_on_punctuation(text in prop::collection::vec(prop::sample::select(
            "ab.?!,:;'\"`()[]{}<>-–—…‘’“”«»„*@#$%& \n\t\u{a0}\u{1c}\u{3000}İıſ5".chars().collect::<Vec<_>>()
        ), 0..40).prop_map(|cs| cs.into_iter().collect::<String>())) {
            let tokens = tok(&text);
            prop_assert!(tokens.iter().all(|t| !t.is_empty()));
        }

        /// The cheap filter in front of the MacIntyre rules never hides a match.
        #[test]
        fn macintyre_filter_never_misses(text in prop::collection::vec(prop::sample::select(vec![
            "can", "not", "CanNot", "d", "'ye", "D'YE", "gim", "g", "İ", "ı", "mme", "me", "gon",
            "na", "GOTTA", "got", "ta", "lem", "more", "'n", "wan", "x", " ", "\n", "'", "é",
        ]), 0..16).prop_map(|words| words.concat())) {
            let mut out = String::new();
            if macintyre_contractions(&text, &mut out) {
                prop_assert!(may_have_macintyre_contraction(&text));
            }
        }

        /// The word-at-a-time split agrees with a plain split.
        #[test]
        fn split_at_spaces_matches_split(text in "[a \n.]{0,40}", newline in any::<bool>()) {
            let mut pieces = Vec::new();
            split_at_spaces(&text, newline, &mut |piece: &str| pieces.push(piece.to_owned()));
            let expected: Vec<String> = text
                .split(|c| c == ' ' || (newline && c == '\n'))
                .filter(|piece| !piece.is_empty())
                .map(str::to_owned)
                .collect();
            prop_assert_eq!(pieces, expected);
        }
    }
}
