//! Lexical answer checks: does the answer carry the expected answer's keywords and numbers, is
//! it as complete, does it say where its facts come from.
//!
//! The rules, each illustrated by the examples on its function:
//!
//! * **numbers** ([`numbers`]): an optional sign (`-`, `+`, `−`) not glued to a preceding letter or
//!   digit, an optional currency symbol (`$ € £ ¥ ₹`), digits with optional thousands commas
//!   (`1,000`), an optional decimal part (`0.305`), an optional `%`. A trailing dot ends the
//!   sentence (`604.` is 604). Numbers compare exactly, as the decimals the texts write (never
//!   through a float tolerance): `$604` and `604` match, `1,000` and `1000` match, `2.50` and `2.5`
//!   match, `1234567891` and `1234567890` do not; the sign matters, the `%` and the currency do
//!   not.
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
    number_spans(text).into_iter().map(|n| n.value).collect()
}

/// One number found in a text.
struct NumberSpan<'a> {
    /// As written, with its sign, currency and percent sign.
    written: &'a str,
    /// As a float (for display and the public [`numbers`]).
    value: f64,
    /// The exact decimal the text writes, in one canonical spelling: comparisons use it, so
    /// 1234567891 never equals 1234567890 however close the floats are.
    exact: DecimalKey,
}

/// A decimal number as written, canonicalised: no sign for zero, no leading zeros in the
/// integer part, no trailing zeros in the fraction (`1,000` = `1000` = `1000.0`, `604.` = `604`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct DecimalKey(String);

impl DecimalKey {
    fn new(negative: bool, integer: &str, fraction: &str) -> Self {
        let integer = integer.trim_start_matches('0');
        let fraction = fraction.trim_end_matches('0');
        let mut key = String::with_capacity(integer.len() + fraction.len() + 3);
        if negative && !(integer.is_empty() && fraction.is_empty()) {
            key.push('-');
        }
        key.push_str(if integer.is_empty() { "0" } else { integer });
        if !fraction.is_empty() {
            key.push('.');
            key.push_str(fraction);
        }
        DecimalKey(key)
    }

    /// The key of a text that writes exactly one number, as [`keywords`] records it.
    fn of_written(written: &str) -> Option<Self> {
        number_spans(written).into_iter().next().map(|n| n.exact)
    }
}

/// Every number in `text`, as written, as a float and as an exact decimal.
fn number_spans(text: &str) -> Vec<NumberSpan<'_>> {
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
        let mut integer_len = 0;
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
        integer_len = integer_len.max(digits.len());
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
            let fraction = digits.get(integer_len + 1..).unwrap_or("");
            out.push(NumberSpan {
                written: &text[chars[start].0..end],
                value: if negative { -v } else { v },
                exact: DecimalKey::new(negative, &digits[..integer_len], fraction),
            });
        }
        i = j;
    }
    out
}

/// The exact decimals written in `text`.
fn decimal_keys(text: &str) -> Vec<DecimalKey> {
    number_spans(text).into_iter().map(|n| n.exact).collect()
}

/// Share of the expected answer's distinct numbers that the answer also has; `None` when the
/// expected answer has no number.
///
/// ```
/// use polars_rag::metrics::lexical::number_match;
/// assert_eq!(number_match("It costs 604 for 1000 units", "$604 for 1,000 units."), Some(1.0));
/// assert_eq!(number_match("It fell 0.133%", "It fell -0.133%"), Some(0.0));
/// assert_eq!(number_match("anything", "no numbers"), None);
/// // Numbers compare exactly as the decimals the texts write.
/// assert_eq!(number_match("id 1234567891", "id 1234567890"), Some(0.0));
/// assert_eq!(number_match("604. and 2.50", "604 and 2.5"), Some(1.0));
/// ```
pub fn number_match(answer: &str, expected: &str) -> Option<f64> {
    let mut wanted: Vec<DecimalKey> = Vec::new();
    for v in decimal_keys(expected) {
        if !wanted.contains(&v) {
            wanted.push(v);
        }
    }
    if wanted.is_empty() {
        return None;
    }
    let have = decimal_keys(answer);
    let found = wanted.iter().filter(|w| have.contains(w)).count();
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
            (Keyword::Number(a, _), Keyword::Number(b, _)) => {
                DecimalKey::of_written(a) == DecimalKey::of_written(b)
            }
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
    for n in number_spans(text) {
        let at = n.written.as_ptr() as usize - text.as_ptr() as usize;
        items.push((at, Keyword::Number(n.written.to_string(), n.value)));
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
    let have = decimal_keys(answer);
    let found = wanted
        .iter()
        .filter(|k| match k {
            Keyword::Text(t) => contains_word(&lower, t),
            Keyword::Number(written, _) => {
                DecimalKey::of_written(written).is_some_and(|key| have.contains(&key))
            }
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

// ------------------------------------------------------------------------------------------
// Declarative checks

/// What a [`Check`] tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    /// `value` occurs in the answer, ignoring case.
    Contains,
    /// `value` does not occur in the answer, ignoring case.
    NotContains,
    /// The regular expression `value` matches somewhere in the answer (Rust `regex` syntax,
    /// case-sensitive unless it starts with `(?i)`).
    Regex,
    /// The answer has the number `value`, compared as a number (see [`numbers`]).
    Number,
    /// At least one of `values` occurs in the answer, ignoring case.
    AnyOf,
    /// Every item of `values` occurs in the answer (partial credit: the share found). With only
    /// `value`, the items are its markdown list lines (`- `, `* `, `• `, `1. `).
    ListItems,
}

crate::settings::from_str_by_serde!(CheckKind);

impl CheckKind {
    fn name(self) -> &'static str {
        match self {
            CheckKind::Contains => "contains",
            CheckKind::NotContains => "not_contains",
            CheckKind::Regex => "regex",
            CheckKind::Number => "number",
            CheckKind::AnyOf => "any_of",
            CheckKind::ListItems => "list_items",
        }
    }
}

/// One fact a golden question expects of its answer, stored as data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// What is tested.
    pub kind: CheckKind,
    /// The text, pattern or number.
    #[serde(default)]
    pub value: Option<String>,
    /// The alternatives (`any_of`) or items (`list_items`).
    #[serde(default)]
    pub values: Option<Vec<String>>,
    /// Weight in the score (default 1).
    #[serde(default)]
    pub weight: Option<f64>,
    /// Name reported when the check fails (default `kind:value`).
    #[serde(default)]
    pub name: Option<String>,
}

/// A validated check, ready to run.
#[derive(Clone, Debug)]
struct Prepared {
    label: String,
    weight: f64,
    test: Test,
}

#[derive(Clone, Debug)]
enum Test {
    Contains(String),
    NotContains(String),
    Regex(regex::Regex),
    Number(DecimalKey),
    AnyOf(Vec<String>),
    Items(Vec<String>),
}

/// The checks of one question, validated once and run on its answer.
#[derive(Clone, Debug, Default)]
pub struct PreparedChecks {
    checks: Vec<Prepared>,
}

/// The result of running a question's checks.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckOutcome {
    /// Σ weight × credit / Σ weight; `None` when the question has no checks.
    pub score: Option<f64>,
    /// The names of the checks that did not fully pass, in order.
    pub failed: Vec<String>,
}

/// The markdown list items of `text`: lines starting with `-`, `*`, `•` or `1.`.
fn list_items(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim_start();
            let rest = ["- ", "* ", "• "]
                .iter()
                .find_map(|b| line.strip_prefix(b))
                .or_else(|| {
                    let digits =
                        line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                    (digits > 0)
                        .then(|| {
                            line[digits..]
                                .strip_prefix(". ")
                                .or(line[digits..].strip_prefix(") "))
                        })
                        .flatten()
                })?;
            let item = rest.trim();
            (!item.is_empty()).then(|| item.to_lowercase())
        })
        .collect()
}

impl PreparedChecks {
    /// Validates `checks`: every check needs what its kind reads, weights must be finite and
    /// non-negative, regexes must compile, numbers must parse. The error names the check (its
    /// `name`, else its position and kind) and the problem.
    ///
    /// ```
    /// use polars_rag::metrics::lexical::{Check, CheckKind, PreparedChecks};
    /// let check = |kind, value: &str| Check {
    ///     kind, value: Some(value.into()), values: None, weight: None, name: None,
    /// };
    /// let prepared = PreparedChecks::new(&[
    ///     check(CheckKind::Contains, "territory 118"),
    ///     check(CheckKind::Number, "$604"),
    ///     check(CheckKind::Regex, r"Rule C-\d"),
    /// ]).unwrap();
    /// let outcome = prepared.run("Territory 118 pays 604 under Rule C-2.");
    /// assert_eq!(outcome.score, Some(1.0));
    /// let outcome = prepared.run("Territory 118 pays 605.");
    /// assert_eq!(outcome.failed, ["number:$604", "regex:Rule C-\\d"]);
    /// let err = PreparedChecks::new(&[check(CheckKind::Regex, "(open")]).unwrap_err().to_string();
    /// assert!(err.starts_with("check #1 (regex): invalid regex"), "{err}");
    /// ```
    pub fn new(checks: &[Check]) -> crate::Result<PreparedChecks> {
        // Problems are found as messages; their kind is given once, here.
        let checked = || -> Result<PreparedChecks, String> {
            let mut prepared = Vec::with_capacity(checks.len());
            for (i, check) in checks.iter().enumerate() {
                let kind = check.kind.name();
                let who = match &check.name {
                    Some(name) => format!("check '{name}'"),
                    None => format!("check #{} ({kind})", i + 1),
                };
                let value = || {
                    check
                        .value
                        .as_deref()
                        .filter(|v| !v.is_empty())
                        .ok_or_else(|| format!("{who}: needs a non-empty value"))
                };
                let values = || match &check.values {
                    Some(v) if !v.is_empty() => Ok(v.iter().map(|x| x.to_lowercase()).collect()),
                    _ => Err(format!("{who}: needs a non-empty list of values")),
                };
                let weight = check.weight.unwrap_or(1.0);
                if !weight.is_finite() || weight < 0.0 {
                    return Err(format!(
                        "{who}: weight must be a finite number ≥ 0, got {weight}"
                    ));
                }
                let test = match check.kind {
                    CheckKind::Contains => Test::Contains(value()?.to_lowercase()),
                    CheckKind::NotContains => Test::NotContains(value()?.to_lowercase()),
                    CheckKind::Regex => Test::Regex(
                        regex::Regex::new(value()?)
                            .map_err(|e| format!("{who}: invalid regex: {e}"))?,
                    ),
                    CheckKind::Number => {
                        let v = value()?;
                        match decimal_keys(v).as_slice() {
                            [n] => Test::Number(n.clone()),
                            _ => return Err(format!("{who}: value '{v}' is not one number")),
                        }
                    }
                    CheckKind::AnyOf => Test::AnyOf(values()?),
                    CheckKind::ListItems => match &check.values {
                        Some(_) => Test::Items(values()?),
                        None => {
                            let items = list_items(value()?);
                            if items.is_empty() {
                                return Err(format!("{who}: value has no markdown list items"));
                            }
                            Test::Items(items)
                        }
                    },
                };
                let label =
                    check
                        .name
                        .clone()
                        .unwrap_or_else(|| match (&check.value, &check.values) {
                            (Some(v), _) => format!("{kind}:{v}"),
                            (None, Some(vs)) => format!("{kind}:{}", vs.join("|")),
                            (None, None) => kind.to_string(),
                        });
                prepared.push(Prepared {
                    label,
                    weight,
                    test,
                });
            }
            Ok(PreparedChecks { checks: prepared })
        };
        checked().map_err(crate::Error::input)
    }

    /// Runs the checks on `answer`.
    pub fn run(&self, answer: &str) -> CheckOutcome {
        if self.checks.is_empty() {
            return CheckOutcome {
                score: None,
                failed: Vec::new(),
            };
        }
        let lower = answer.to_lowercase();
        let mut have: Option<Vec<DecimalKey>> = None;
        let (mut earned, mut total) = (0.0, 0.0);
        let mut failed = Vec::new();
        for check in &self.checks {
            let credit = match &check.test {
                Test::Contains(v) => f64::from(u8::from(lower.contains(v.as_str()))),
                Test::NotContains(v) => f64::from(u8::from(!lower.contains(v.as_str()))),
                Test::Regex(re) => f64::from(u8::from(re.is_match(answer))),
                Test::Number(n) => {
                    let have = have.get_or_insert_with(|| decimal_keys(answer));
                    f64::from(u8::from(have.contains(n)))
                }
                Test::AnyOf(vs) => {
                    f64::from(u8::from(vs.iter().any(|v| lower.contains(v.as_str()))))
                }
                Test::Items(items) => {
                    let found = items.iter().filter(|v| lower.contains(v.as_str())).count();
                    found as f64 / items.len() as f64
                }
            };
            if credit < 1.0 {
                failed.push(check.label.clone());
            }
            earned += check.weight * credit;
            total += check.weight;
        }
        // All weights zero: every check counts the same.
        let score = if total > 0.0 {
            earned / total
        } else {
            (self.checks.len() - failed.len()) as f64 / self.checks.len() as f64
        };
        CheckOutcome {
            score: Some(score),
            failed,
        }
    }
}

impl crate::metrics::Section for CitationIndicatorOptions {
    fn signature(&self, _id: &str) -> String {
        citation_indicators_signature(self)
    }
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

    fn check(
        kind: CheckKind,
        value: Option<&str>,
        values: Option<&[&str]>,
        weight: Option<f64>,
    ) -> Check {
        Check {
            kind,
            value: value.map(String::from),
            values: values.map(|v| v.iter().map(|s| s.to_string()).collect()),
            weight,
            name: None,
        }
    }

    #[test]
    fn checks_weigh_credit_and_report_failures() {
        let prepared = PreparedChecks::new(&[
            check(CheckKind::Contains, Some("Paris"), None, Some(2.0)),
            check(CheckKind::NotContains, Some("london"), None, None),
            check(CheckKind::AnyOf, None, Some(&["capital", "seat"]), None),
            check(
                CheckKind::ListItems,
                Some("Items:\n- apples\n* pears\n1. plums"),
                None,
                Some(3.0),
            ),
        ])
        .unwrap();
        let out = prepared.run("Paris is the capital; it sells apples and plums, not London's.");
        // 2 + 0 + 1 + 3 × 2/3 over 7
        assert_eq!(out.score, Some(5.0 / 7.0));
        assert_eq!(out.failed.len(), 2);
        assert!(out.failed[0].starts_with("not_contains:london"));
        assert!(out.failed[1].starts_with("list_items:"));
        assert_eq!(PreparedChecks::new(&[]).unwrap().run("x").score, None);
    }

    #[test]
    fn invalid_checks_are_named_errors() {
        let err = |c: Check| PreparedChecks::new(&[c]).unwrap_err().to_string();
        assert!(
            err(check(CheckKind::Contains, None, None, None)).contains("needs a non-empty value")
        );
        assert!(err(check(CheckKind::AnyOf, None, Some(&[]), None)).contains("list of values"));
        assert!(err(check(CheckKind::Number, Some("many"), None, None)).contains("not one number"));
        assert!(err(check(CheckKind::Contains, Some("x"), None, Some(-1.0))).contains("weight"));
        let mut named = check(CheckKind::Regex, Some("[a-"), None, None);
        named.name = Some("fee rule".into());
        assert!(err(named).starts_with("check 'fee rule': invalid regex"));
        assert!(err(check(CheckKind::ListItems, Some("no list"), None, None)).contains("markdown"));
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
