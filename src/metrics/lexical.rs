//! Lexical answer checks: does the answer carry the expected answer's keywords and numbers, is
//! it as complete, does it say where its facts come from.
//!
//! The rules, each illustrated by the examples on its function:
//!
//! * **numbers** ([`numbers`]): an optional sign (`-`, `+`, `−`) not glued to a preceding letter or
//!   digit, an optional currency symbol (`$ € £ ¥ ₹`), digits with optional thousands commas
//!   (`1,000`), an optional decimal part (`0.305`), an optional `%`. A trailing dot ends the
//!   sentence (`604.` is 604). Numbers compare as numbers: `$604` and `604` match, `1,000` and
//!   `1000` match, the sign matters, the `%` and the currency do not.
//! * **keywords** ([`keywords`]): capitalised phrases (a capitalised word followed by capitalised
//!   words or words with digits: `Territory 118`, `Rule C-1`, `New York`), numbers as above, and
//!   words of four or more letters of any script that are not English stop words.
//! * A keyword phrase or word is **found** in an answer when it occurs there, ignoring case, not
//!   inside a longer word; a number is found when the answer has the same number.
//!
//! ```
//! use polars_rag::metrics::lexical::{keyword_coverage, number_match};
//! let expected = "Territory 118 pays a fee of $604, or 0.305% of revenue.";
//! assert_eq!(number_match("The fee is 604 (0.305 %) in territory 118.", expected), Some(1.0));
//! // territory 118, territory, 118, pays, $604, 0.305%, revenue: four found
//! assert_eq!(keyword_coverage("In Territory 118 the fee is $604.", expected), Some(4.0 / 7.0));
//! ```

use serde::{Deserialize, Serialize};

/// English stop words of four or more letters (shorter words are never keywords).
const STOP_WORDS: &[&str] = &[
    "about",
    "above",
    "across",
    "after",
    "again",
    "against",
    "almost",
    "along",
    "already",
    "also",
    "although",
    "always",
    "among",
    "another",
    "anything",
    "around",
    "away",
    "been",
    "before",
    "behind",
    "being",
    "below",
    "between",
    "both",
    "cannot",
    "come",
    "could",
    "does",
    "doing",
    "done",
    "down",
    "during",
    "each",
    "either",
    "else",
    "enough",
    "even",
    "ever",
    "every",
    "from",
    "further",
    "have",
    "having",
    "here",
    "hers",
    "herself",
    "himself",
    "into",
    "itself",
    "just",
    "like",
    "made",
    "make",
    "many",
    "more",
    "most",
    "much",
    "must",
    "myself",
    "neither",
    "never",
    "none",
    "only",
    "other",
    "ours",
    "ourselves",
    "over",
    "same",
    "shall",
    "should",
    "since",
    "some",
    "such",
    "than",
    "that",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "therefore",
    "these",
    "they",
    "this",
    "those",
    "though",
    "through",
    "thus",
    "under",
    "until",
    "upon",
    "very",
    "want",
    "were",
    "what",
    "when",
    "where",
    "whether",
    "which",
    "while",
    "whom",
    "whose",
    "will",
    "with",
    "within",
    "without",
    "would",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "because",
    "according",
    "based",
];

const CURRENCY: &[char] = &['$', '€', '£', '¥', '₹'];

/// The numbers in `text`, in order, as values (see the module docs for what counts).
///
/// ```
/// use polars_rag::metrics::lexical::numbers;
/// assert_eq!(numbers("293 items, 0.305%, $604, -0.133% and 1,000 units; it was 604."),
///            vec![293.0, 0.305, 604.0, -0.133, 1000.0, 604.0]);
/// assert_eq!(numbers("Rule C-1, model A4"), Vec::<f64>::new()); // identifiers, not numbers
/// ```
pub fn numbers(text: &str) -> Vec<f64> {
    number_spans(text).into_iter().map(|(_, v)| v).collect()
}

/// `(text as written, value)` of every number in `text`.
fn number_spans(text: &str) -> Vec<(&str, f64)> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let start = i;
        let glued = |k: usize| k > 0 && chars[k - 1].1.is_alphanumeric();
        let mut negative = false;
        let mut j = i;
        if matches!(chars[j].1, '-' | '+' | '−') && !glued(j) {
            negative = chars[j].1 != '+';
            j += 1;
        }
        if j < chars.len() && CURRENCY.contains(&chars[j].1) {
            j += 1;
        }
        if j < chars.len() && matches!(chars[j].1, '-' | '−') && !negative && j > start {
            negative = true;
            j += 1;
        }
        // Digits glued to a word ("A4", "C-1", "e-2") are part of an identifier, not a number.
        let identifier = j == start
            && (glued(j) || (j >= 2 && chars[j - 1].1 == '-' && chars[j - 2].1.is_alphanumeric()));
        if j >= chars.len() || !chars[j].1.is_ascii_digit() || identifier {
            i += 1;
            continue;
        }
        // Integer part with optional thousands groups.
        let mut digits = String::new();
        while j < chars.len() && chars[j].1.is_ascii_digit() {
            digits.push(chars[j].1);
            j += 1;
        }
        while j + 3 < chars.len()
            && chars[j].1 == ','
            && chars[j + 1..=j + 3].iter().all(|(_, c)| c.is_ascii_digit())
            && chars.get(j + 4).is_none_or(|(_, c)| !c.is_ascii_digit())
        {
            digits.extend(chars[j + 1..=j + 3].iter().map(|(_, c)| c));
            j += 4;
        }
        if j + 1 < chars.len() && chars[j].1 == '.' && chars[j + 1].1.is_ascii_digit() {
            digits.push('.');
            j += 1;
            while j < chars.len() && chars[j].1.is_ascii_digit() {
                digits.push(chars[j].1);
                j += 1;
            }
        }
        if j < chars.len() && chars[j].1 == '%' {
            j += 1;
        }
        if let Ok(v) = digits.parse::<f64>() {
            let end = chars.get(j).map_or(text.len(), |(b, _)| *b);
            out.push((&text[chars[start].0..end], if negative { -v } else { v }));
        }
        i = j;
    }
    out
}

fn same_number(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Share of the expected answer's distinct numbers that the answer also has; `None` when the
/// expected answer has no number.
///
/// ```
/// use polars_rag::metrics::lexical::number_match;
/// assert_eq!(number_match("It costs 604 for 1000 units", "$604 for 1,000 units."), Some(1.0));
/// assert_eq!(number_match("It fell 0.133%", "It fell -0.133%"), Some(0.0));
/// assert_eq!(number_match("anything", "no numbers"), None);
/// ```
pub fn number_match(answer: &str, expected: &str) -> Option<f64> {
    let mut wanted: Vec<f64> = Vec::new();
    for v in numbers(expected) {
        if !wanted.iter().any(|w| same_number(*w, v)) {
            wanted.push(v);
        }
    }
    if wanted.is_empty() {
        return None;
    }
    let have = numbers(answer);
    let found = wanted
        .iter()
        .filter(|w| have.iter().any(|h| same_number(**w, *h)))
        .count();
    Some(found as f64 / wanted.len() as f64)
}

/// A keyword of an expected answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Keyword {
    /// A capitalised phrase or a content word, lowercased.
    Text(String),
    /// A number, as written and as a value.
    Number(String, f64),
}

/// Words: maximal runs of letters, digits and inner hyphens.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '-'))
        .map(|w| w.trim_matches('-'))
        .filter(|w| !w.is_empty())
}

fn is_capitalised(word: &str) -> bool {
    word.chars().next().is_some_and(char::is_uppercase)
}

/// Short English function words that are capitalised only because they start a sentence.
const LEADING_FUNCTION_WORDS: &[&str] = &[
    "a", "an", "and", "as", "at", "but", "by", "for", "if", "in", "is", "it", "of", "on", "or",
    "so", "the", "to", "we", "our", "its",
];

fn is_function_word(word: &str) -> bool {
    let lower = word.to_lowercase();
    LEADING_FUNCTION_WORDS.contains(&lower.as_str()) || STOP_WORDS.contains(&lower.as_str())
}

/// The keywords of `text`, de-duplicated, in order of first appearance.
///
/// ```
/// use polars_rag::metrics::lexical::{keywords, Keyword};
/// let k = keywords("Under Rule C-1, Territory 118 pays $604 yearly.");
/// assert!(k.contains(&Keyword::Text("territory 118".into())));   // capitalised phrase
/// assert!(k.contains(&Keyword::Text("yearly".into())));          // content word
/// assert!(k.contains(&Keyword::Number("$604".into(), 604.0)));   // number
/// assert!(!k.contains(&Keyword::Text("under".into())));          // stop word
/// assert!(k.contains(&Keyword::Text("rule c-1".into())));        // "Under" starts no phrase
/// ```
pub fn keywords(text: &str) -> Vec<Keyword> {
    let mut phrases: Vec<String> = Vec::new();
    let mut content: Vec<String> = Vec::new();
    // Capitalised phrases run within a sentence part: punctuation other than hyphens ends them.
    for part in text.split(|c: char| {
        matches!(
            c,
            ',' | '.' | ';' | ':' | '!' | '?' | '(' | ')' | '"' | '“' | '”'
        )
    }) {
        let ws: Vec<&str> = words(part).collect();
        let mut i = 0;
        while i < ws.len() {
            if is_capitalised(ws[i]) && !is_function_word(ws[i]) {
                let mut j = i + 1;
                while j < ws.len()
                    && (is_capitalised(ws[j]) || ws[j].chars().any(|c| c.is_ascii_digit()))
                {
                    j += 1;
                }
                if j - i >= 2 {
                    phrases.push(ws[i..j].join(" ").to_lowercase());
                    i = j;
                    continue;
                }
            }
            i += 1;
        }
    }
    for w in words(text) {
        let lower = w.to_lowercase();
        if lower.chars().count() >= 4
            && lower.chars().all(char::is_alphabetic)
            && !STOP_WORDS.contains(&lower.as_str())
        {
            content.push(lower);
        }
    }
    let mut out: Vec<Keyword> = Vec::new();
    let mut push = |k: Keyword| {
        let duplicate = out.iter().any(|o| match (o, &k) {
            (Keyword::Text(a), Keyword::Text(b)) => a == b,
            (Keyword::Number(_, a), Keyword::Number(_, b)) => same_number(*a, *b),
            _ => false,
        });
        if !duplicate {
            out.push(k);
        }
    };
    // Order of appearance: phrases, the words inside them and the numbers by position.
    let mut items: Vec<(usize, Keyword)> = Vec::new();
    let lower_text = text.to_lowercase();
    let position = |needle: &str| lower_text.find(needle).unwrap_or(usize::MAX);
    for p in phrases {
        items.push((position(&p), Keyword::Text(p)));
    }
    for w in content {
        items.push((position(&w), Keyword::Text(w)));
    }
    for (written, v) in number_spans(text) {
        let at = written.as_ptr() as usize - text.as_ptr() as usize;
        items.push((at, Keyword::Number(written.to_string(), v)));
    }
    items.sort_by_key(|(at, _)| *at);
    for (_, k) in items {
        push(k);
    }
    out
}

/// Whether `needle` (lowercase) occurs in `haystack` (lowercase) not inside a longer word.
fn contains_word(haystack: &str, needle: &str) -> bool {
    haystack.match_indices(needle).any(|(at, _)| {
        let before = haystack[..at].chars().next_back();
        let after = haystack[at + needle.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// Share of the expected answer's [`keywords`] found in the answer; `None` when the expected
/// answer has none.
///
/// ```
/// use polars_rag::metrics::lexical::keyword_coverage;
/// assert_eq!(keyword_coverage("Rule C-1 applies", "Rule C-1"), Some(1.0));
/// assert_eq!(keyword_coverage("the territory", "Territory 118"), Some(1.0 / 3.0));
/// assert_eq!(keyword_coverage("anything", "it is so"), None);
/// ```
pub fn keyword_coverage(answer: &str, expected: &str) -> Option<f64> {
    let wanted = keywords(expected);
    if wanted.is_empty() {
        return None;
    }
    let lower = answer.to_lowercase();
    let have = numbers(answer);
    let found = wanted
        .iter()
        .filter(|k| match k {
            Keyword::Text(t) => contains_word(&lower, t),
            Keyword::Number(_, v) => have.iter().any(|h| same_number(*h, *v)),
        })
        .count();
    Some(found as f64 / wanted.len() as f64)
}

/// Mean of min(answer words / expected words, 1) and [`keyword_coverage`]; the length ratio
/// alone when the expected answer has no keywords; `None` when it has no words.
///
/// ```
/// use polars_rag::metrics::lexical::answer_completeness;
/// assert_eq!(answer_completeness("Territory 118", "Territory 118"), Some(1.0));
/// // half the words, a third of the keywords ("territory 118", "territory", 118)
/// assert_eq!(answer_completeness("territory", "Territory 118"), Some((0.5 + 1.0 / 3.0) / 2.0));
/// assert_eq!(answer_completeness("x", ""), None);
/// ```
pub fn answer_completeness(answer: &str, expected: &str) -> Option<f64> {
    let expected_words = expected.split_whitespace().count();
    if expected_words == 0 {
        return None;
    }
    let ratio = (answer.split_whitespace().count() as f64 / expected_words as f64).min(1.0);
    Some(match keyword_coverage(answer, expected) {
        Some(coverage) => (ratio + coverage) / 2.0,
        None => ratio,
    })
}

/// Options of `citation_indicators`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CitationIndicatorOptions {
    /// Phrases that show an answer cites its sources, matched ignoring case. A null value (Python's
    /// `None`) means the default list.
    #[serde(deserialize_with = "indicators_or_default")]
    pub indicators: Vec<String>,
}

fn indicators_or_default<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let given: Option<Vec<String>> = Option::deserialize(d)?;
    Ok(given.unwrap_or_else(|| CitationIndicatorOptions::default().indicators))
}

impl Default for CitationIndicatorOptions {
    fn default() -> Self {
        let phrases = [
            "source:",
            "table:",
            "page",
            "document",
            "pdf",
            "according to",
            "based on",
            "from",
        ];
        CitationIndicatorOptions {
            indicators: phrases.iter().map(|p| p.to_string()).collect(),
        }
    }
}

/// min(distinct indicator phrases found in the answer / 3, 1), ignoring case.
///
/// ```
/// use polars_rag::metrics::lexical::{citation_indicators, CitationIndicatorOptions};
/// let o = CitationIndicatorOptions::default();
/// assert_eq!(citation_indicators("According to the PDF, page 4 says so.", &o), 1.0);
/// assert_eq!(citation_indicators("Based on the report it rose.", &o), 1.0 / 3.0);
/// assert_eq!(citation_indicators("It rose.", &o), 0.0);
/// ```
pub fn citation_indicators(answer: &str, options: &CitationIndicatorOptions) -> f64 {
    let lower = answer.to_lowercase();
    let found = options
        .indicators
        .iter()
        .filter(|p| !p.is_empty() && lower.contains(&p.to_lowercase()))
        .count();
    (found as f64 / 3.0).min(1.0)
}

/// The settings behind a `citation_indicators` number.
pub fn citation_indicators_signature(options: &CitationIndicatorOptions) -> String {
    let default = options == &CitationIndicatorOptions::default();
    format!(
        "indicators:{}|saturation:3|version:polars-rag-{}",
        if default {
            "default".to_string()
        } else {
            options.indicators.len().to_string()
        },
        env!("CARGO_PKG_VERSION")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stated_examples() {
        assert_eq!(numbers("293"), vec![293.0]);
        assert_eq!(numbers("0.305%"), vec![0.305]);
        assert_eq!(numbers("$604"), vec![604.0]);
        assert_eq!(numbers("-0.133%"), vec![-0.133]);
        assert_eq!(numbers("$-5 and -$5"), vec![-5.0, -5.0]);
        assert_eq!(numbers("604."), vec![604.0]);
        assert_eq!(numbers("1,000 vs 1,00"), vec![1000.0, 1.0, 0.0]);
        assert_eq!(number_match("$604", "604"), Some(1.0));
        assert_eq!(number_match("1000", "1,000"), Some(1.0));
        let k = keywords("Territory 118 and Rule C-1");
        assert!(k.contains(&Keyword::Text("territory 118".into())));
        assert!(k.contains(&Keyword::Text("rule c-1".into())));
    }

    #[test]
    fn edge_cases_never_panic() {
        for text in [
            "",
            " ",
            "-",
            "$",
            "1,",
            ",000",
            "−",
            "é€5",
            "\u{2003}42\u{00a0}%",
            "a-1-b",
        ] {
            let _ = numbers(text);
            let _ = keywords(text);
            let _ = keyword_coverage(text, text);
            let _ = answer_completeness(text, text);
        }
        assert_eq!(keyword_coverage("", "Something important"), Some(0.0));
        assert_eq!(exact_words("naïve café"), 2);
    }

    fn exact_words(t: &str) -> usize {
        keywords(t).len()
    }

    #[test]
    fn null_indicators_mean_the_default_list() {
        let o: CitationIndicatorOptions = serde_json::from_str(r#"{"indicators": null}"#).unwrap();
        assert_eq!(o, CitationIndicatorOptions::default());
        let o: CitationIndicatorOptions = serde_json::from_str(r#"{"indicators": ["x"]}"#).unwrap();
        assert_eq!(o.indicators, ["x"]);
    }

    #[test]
    fn words_are_not_found_inside_longer_words() {
        assert_eq!(keyword_coverage("reframing", "frame"), Some(0.0));
        assert_eq!(keyword_coverage("the frame.", "frame"), Some(1.0));
    }
}
