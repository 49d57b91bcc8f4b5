//! Citation recall and precision of an answer whose sentences cite passages by number, as ALCE
//! computes them (princeton-nlp/ALCE `eval.py`, `compute_autoais`, at commit 246c476): the
//! answer is split into sentences by NLTK's Punkt (this project's port), each sentence's markers
//! are read (`[1][2]`), and an entailment checker (ALCE's 11B NLI model; here any: a judge, a
//! smaller model, people) is asked only what ALCE asks.
//!
//! * **Recall**: the share of sentences their cited passages, joined, entail. A sentence without
//!   a marker, or with a marker past the last passage, scores 0 without a question asked.
//! * **Precision**: the share of citations that are needed. A sentence that cites one passage
//!   and is entailed counts its citation. A sentence that cites several and is entailed by them
//!   jointly asks, for each cited passage, whether it entails the sentence alone and, if not,
//!   whether the others entail it without it: then the passage was not needed.
//!
//! ALCE's reading of markers is kept, quirks included: `[1, 2]` cites passage 1 only (its
//! pattern takes the digits after a `[`), `[0]` is its index −1, the last passage, a repeated
//! marker counts twice (also among the citations precision divides by), only the first
//! `at_most_citations` (3) markers of a sentence are asked about, but a marker past the last
//! passage anywhere in the sentence rejects it. The digits are any Unicode decimal digits, as
//! Python's `\d` and `int()` read them: `[１]` (fullwidth) and `[١]` (Arabic-Indic) both cite
//! passage 1. With titles, a passage is written `Title: <title>\n<text>`, several joined by
//! newlines, as ALCE writes them. An answer without a sentence (empty, or only whitespace) has no
//! score: ALCE leaves it out of its means (alone, its mean is NaN).
//!
//! [`Reading::Qampari`] is ALCE's reading of QAMPARI answers (`compute_autoais(...,
//! qampari=True)`), lists of entities: the answer, without trailing whitespace, then trailing
//! periods, then trailing commas, is cut at every comma, and each item, stripped, becomes the claim
//! "question item" (the question, a space, the item). The claims' markers are read as above
//! (a marker in the question counts too). An empty answer is one claim, the question alone,
//! without citation: 0.
//!
//! ```
//! use polars_rag::metrics::alce::{citation_scores, Passage, Reading};
//! let passages = [Passage { title: Some("A"), text: "The bridge opened in 1932." },
//!                 Passage { title: Some("B"), text: "The tunnel closed in 1950." }];
//! // A stand-in checker: every word of the claim is in the premise.
//! let mut entails = |premise: &str, claim: &str| -> polars_rag::Result<bool> {
//!     Ok(claim.split_whitespace().all(|w| premise.contains(w.trim_end_matches('.'))))
//! };
//! let s = citation_scores("The bridge opened in 1932 [1][2]. The tunnel closed.", &passages, Some(3), Reading::Sentences, &mut entails)
//!     .unwrap()
//!     .unwrap();
//! // Both sentences entailed (recall 1); passage 2 was not needed for the first one, and the
//! // second sentence cites nothing.
//! assert_eq!((s.citation_recall, s.sentences, s.citations), (0.5, 2, 2));
//! assert_eq!(s.citation_precision, 0.5);
//! ```

use std::sync::OnceLock;

use regex::Regex;

use crate::text::normalize::Whitespace;

/// How an answer is cut into the claims whose citations are checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reading<'q> {
    /// Sentences, split by NLTK's Punkt (ALCE's default).
    Sentences,
    /// ALCE's QAMPARI reading: the answer is a comma-separated list, each item is checked as
    /// "question item".
    Qampari {
        /// The question the answer lists entities for.
        question: &'q str,
    },
}

/// The claims ALCE checks in `answer` under `reading` (see the module).
///
/// ```
/// use polars_rag::metrics::alce::{answer_claims, Reading};
/// let list = answer_claims("Oslo [1], Bergen [2],.", Reading::Qampari { question: "Which cities?" });
/// assert_eq!(list, ["Which cities? Oslo [1]", "Which cities? Bergen [2]"]);
/// assert_eq!(answer_claims("  ", Reading::Sentences), Vec::<String>::new());
/// ```
pub fn answer_claims(answer: &str, reading: Reading<'_>) -> Vec<String> {
    match reading {
        Reading::Sentences => crate::text::word_tokenize::nltk_sent_tokenize(answer)
            .into_iter()
            .map(String::from)
            .collect(),
        Reading::Qampari { question } => {
            // Python's `rstrip()`, `rstrip(".")`, `rstrip(",")`, in that order: a comma
            // before the final period goes, a period before a final comma stays.
            let list = answer
                .trim_end_matches(|c| Whitespace::Python.is_space(c))
                .trim_end_matches('.')
                .trim_end_matches(',');
            list.split(',')
                .map(|item| format!("{question} {}", Whitespace::Python.strip(item)))
                .collect()
        }
    }
}

/// A passage an answer may cite.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Passage<'a> {
    /// Its title, when passages have titles.
    pub title: Option<&'a str>,
    /// Its text.
    pub text: &'a str,
}

/// An answer's citation scores.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CitationScores {
    /// Sentences entailed by their cited passages, over sentences.
    pub citation_recall: f64,
    /// Needed citations over citations asked about (0 without any).
    pub citation_precision: f64,
    /// Sentences of the answer (with [`Reading::Qampari`], items of its list).
    pub sentences: usize,
    /// Citations asked about (within `at_most_citations` per sentence, of sentences whose
    /// markers all point at a passage).
    pub citations: usize,
    /// Sentences with a marker past the last passage (scored 0, as ALCE scores them).
    pub out_of_range: usize,
}

fn marker_pattern() -> &'static Regex {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    PATTERN.get_or_init(|| Regex::new(r"\[(\d+)").expect("a valid pattern"))
}

/// The passages a sentence cites, as ALCE reads its markers: each `[` followed by decimal digits
/// (any script's, as Python's `\d` and `int()` read them) gives the number minus one (so `[0]`
/// gives −1); numbers too large for an `i64` are past any passage.
pub fn cited_indices(sentence: &str) -> Vec<i64> {
    marker_pattern()
        .captures_iter(sentence)
        .map(|c| {
            c[1].chars()
                .try_fold(0i64, |n, d| {
                    n.checked_mul(10)?
                        .checked_add(i64::from(decimal_digit_value(d)))
                })
                .map_or(i64::MAX, |n| n - 1)
        })
        .collect()
}

/// The value of a character the marker pattern's `\d` (Unicode `Nd`) matched.
fn decimal_digit_value(digit: char) -> u32 {
    if let Some(value) = digit.to_digit(10) {
        return value;
    }
    // Unicode assigns decimal digits only in runs of ten, zero to nine, so a run of them (some
    // scripts' sets sit back to back) starts at a zero: the offset from its start, modulo ten,
    // is the value.
    static DIGIT: OnceLock<Regex> = OnceLock::new();
    let digit_class = DIGIT.get_or_init(|| Regex::new(r"^\d$").expect("a valid pattern"));
    let is_digit = |c: char| digit_class.is_match(c.encode_utf8(&mut [0u8; 4]));
    let mut start = digit as u32;
    while let Some(before) = start.checked_sub(1).and_then(char::from_u32)
        && is_digit(before)
    {
        start -= 1;
    }
    (digit as u32 - start) % 10
}

/// The sentence without its markers, as ALCE's `remove_citations`: ` [digits` and `[digits`
/// removed, then ` |` and every `]`.
pub fn remove_citations(sentence: &str) -> String {
    static SPACED: OnceLock<Regex> = OnceLock::new();
    let spaced = SPACED.get_or_init(|| Regex::new(r" \[\d+").expect("a valid pattern"));
    let once = spaced.replace_all(sentence, "");
    marker_pattern()
        .replace_all(&once, "")
        .replace(" |", "")
        .replace(']', "")
}

/// A passage as ALCE writes it for its checker.
pub fn format_passage(passage: &Passage<'_>) -> String {
    match passage.title {
        Some(title) => format!("Title: {title}\n{}", passage.text),
        None => passage.text.to_string(),
    }
}

/// ALCE's citation recall and precision of `answer` citing `passages`, its claims cut by
/// `reading`, asking `entails(premise, claim)` what ALCE asks (see the module). `None` for an
/// answer without a sentence; an error when the checker fails.
pub fn citation_scores(
    answer: &str,
    passages: &[Passage<'_>],
    at_most_citations: Option<usize>,
    reading: Reading<'_>,
    entails: &mut dyn FnMut(&str, &str) -> crate::Result<bool>,
) -> crate::Result<Option<CitationScores>> {
    let mut known = |premise: &str, claim: &str| entails(premise, claim).map(Some);
    match citation_progress(answer, passages, at_most_citations, reading, &mut known)? {
        Progress::Done(scores) => Ok(scores),
        Progress::Pending => unreachable!("every question was answered"),
    }
}

/// Where [`citation_progress`] stands: done (with the scores, `None` for an answer without a
/// sentence), or waiting for answers it asked for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Progress {
    /// Every question answered.
    Done(Option<CitationScores>),
    /// Some question is not answered yet (its checker said `None`).
    Pending,
}

/// [`citation_scores`] for a checker that answers in rounds (a judge asked in batches): where
/// `entails` says `None` (not known yet), the questions that depend on that answer are not asked
/// (a sentence's single-passage questions wait for its joint one, a leave-one-out question for
/// its single one), the other sentences' are, and the result is `Pending`. Called again once the
/// answers are in, it asks the next questions; it is `Done` when every question ALCE asks is
/// answered, and never asks one ALCE would not.
pub fn citation_progress(
    answer: &str,
    passages: &[Passage<'_>],
    at_most_citations: Option<usize>,
    reading: Reading<'_>,
    entails: &mut dyn FnMut(&str, &str) -> crate::Result<Option<bool>>,
) -> crate::Result<Progress> {
    let sentences = answer_claims(answer, reading);
    if sentences.is_empty() {
        return Ok(Progress::Done(None));
    }
    let n = passages.len() as i64;
    // Python's indexing: −1 is the last passage.
    let passage_at = |i: i64| &passages[if i < 0 { (n + i) as usize } else { i as usize }];
    let joined = |ids: &[i64]| {
        ids.iter()
            .map(|&i| format_passage(passage_at(i)))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let (mut entailed, mut needed, mut citations, mut out_of_range) =
        (0usize, 0usize, 0usize, 0usize);
    let mut pending = false;
    for sentence in &sentences {
        let claim = remove_citations(sentence);
        let claim = Whitespace::Python.strip(&claim);
        let mut ids = cited_indices(sentence);
        if ids.is_empty() {
            continue;
        }
        // ALCE checks `id >= len(docs)`; an index below −len would fail its indexing, which no
        // marker can give (the smallest is −1), except with no passage at all.
        if ids.iter().any(|&i| i >= n || i < -n) {
            out_of_range += 1;
            continue;
        }
        if let Some(most) = at_most_citations {
            ids.truncate(most);
        }
        citations += ids.len();
        match entails(&joined(&ids), claim)? {
            None => {
                pending = true;
                continue;
            }
            Some(false) => continue,
            Some(true) => entailed += 1,
        }
        if ids.len() == 1 {
            needed += 1;
            continue;
        }
        for (k, &id) in ids.iter().enumerate() {
            match entails(&format_passage(passage_at(id)), claim)? {
                None => {
                    pending = true;
                    continue;
                }
                Some(true) => {
                    needed += 1;
                    continue;
                }
                Some(false) => {}
            }
            // The others without this one (a repeated id: one occurrence removed, the first,
            // as Python's list.remove does).
            let first = ids.iter().position(|&x| x == id).unwrap_or(k);
            let rest: Vec<i64> = ids
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != first)
                .map(|(_, &x)| x)
                .collect();
            match entails(&joined(&rest), claim)? {
                None => pending = true,
                Some(true) => {}
                Some(false) => needed += 1,
            }
        }
    }
    if pending {
        return Ok(Progress::Pending);
    }
    Ok(Progress::Done(Some(CitationScores {
        citation_recall: entailed as f64 / sentences.len() as f64,
        citation_precision: if citations > 0 {
            needed as f64 / citations as f64
        } else {
            0.0
        },
        sentences: sentences.len(),
        citations,
        out_of_range,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_asked_in_rounds_are_the_ones_asked_at_once() {
        use std::collections::HashMap;
        let passages = [
            Passage {
                title: None,
                text: "the bridge opened",
            },
            Passage {
                title: None,
                text: "in 1932",
            },
            Passage {
                title: None,
                text: "the tunnel closed",
            },
        ];
        let answer = "the bridge opened in 1932 [1][2][3]. the tunnel closed [3]. nothing [2].";
        let rule = |premise: &str, claim: &str| {
            claim
                .trim_end_matches('.')
                .split(' ')
                .all(|w| premise.contains(w))
        };
        let mut asked_at_once = Vec::new();
        let at_once = citation_scores(
            answer,
            &passages,
            Some(3),
            Reading::Sentences,
            &mut |p, c| {
                asked_at_once.push((p.to_string(), c.to_string()));
                Ok(rule(p, c))
            },
        )
        .unwrap();
        // In rounds: answer only what was asked in earlier rounds.
        let mut answers: HashMap<(String, String), bool> = HashMap::new();
        let mut rounds = 0;
        let in_rounds = loop {
            rounds += 1;
            let mut new = Vec::new();
            let progress = citation_progress(
                answer,
                &passages,
                Some(3),
                Reading::Sentences,
                &mut |p, c| {
                    let key = (p.to_string(), c.to_string());
                    Ok(answers.get(&key).copied().or_else(|| {
                        new.push(key);
                        None
                    }))
                },
            )
            .unwrap();
            for key in new {
                let value = rule(&key.0, &key.1);
                answers.insert(key, value);
            }
            if let Progress::Done(scores) = progress {
                break scores;
            }
        };
        assert_eq!(in_rounds, at_once);
        assert_eq!(rounds, 4); // joint, singles, leave-one-outs, then done
        let mut asked: Vec<_> = answers.into_keys().collect();
        asked.sort();
        asked_at_once.sort();
        asked_at_once.dedup();
        assert_eq!(asked, asked_at_once, "the same questions, no more");
    }

    #[test]
    fn markers_are_read_as_alce_reads_them() {
        assert_eq!(cited_indices("a [1][2]."), [0, 1]);
        assert_eq!(cited_indices("a [1, 2]."), [0]);
        assert_eq!(cited_indices("a [0]."), [-1]);
        assert_eq!(cited_indices("no markers"), Vec::<i64>::new());
        // Python's `\d` and `int()`: any script's decimal digits, mixed too.
        assert_eq!(cited_indices("a [１][١][٢٣][1١]."), [0, 0, 22, 10]);
        assert_eq!(cited_indices("a [𝟘][𝟙][𝟬][𝟵]."), [-1, 0, -1, 8]);
        assert_eq!(cited_indices("a [99999999999999999999]."), [i64::MAX]);
        assert_eq!(remove_citations("The bridge [1][2]."), "The bridge.");
        assert_eq!(remove_citations("[3] The valley."), " The valley.");
    }
}
