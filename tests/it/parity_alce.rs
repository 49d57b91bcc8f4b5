//! ALCE's citation recall and precision against values recorded from its own `eval.py`
//! (`compute_autoais`, commit 246c476), run unchanged with a stated rule in place of its NLI
//! model (`datasets/fixtures/make_alce_fixtures.py`): the sentences NLTK splits, the entailment
//! questions asked (in ALCE's order), each answer's scores, and each group's means; on random
//! answers, on written edges of ALCE's reading (other scripts' digits, repeated markers, empty
//! answers), and in its QAMPARI reading.

use std::path::Path;

use polars_rag::metrics::alce::{citation_scores, Passage, Reading};
use polars_rag::text::word_tokenize::nltk_sent_tokenize;
use serde_json::Value;

/// The fixture's rule: every `[a-z0-9]+` word of the lowercased claim is a word of the
/// lowercased premise.
fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect()
}

fn rule(premise: &str, claim: &str) -> bool {
    let known = words(premise);
    words(claim).iter().all(|w| known.contains(w))
}

fn fixture() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/alce_citations.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// What the checks of a set of groups covered.
#[derive(Default)]
struct Covered {
    answers: usize,
    partial: usize,
    unscored: usize,
}

/// Checks every case of `groups` (a fixture key) against the port, each read as `qampari`
/// says: the questions asked, the scores, and each group's means.
fn check_groups(fixture: &Value, key: &str, qampari: bool) -> Covered {
    let mut covered = Covered::default();
    for (g, group) in fixture[key].as_array().unwrap().iter().enumerate() {
        // ALCE's `at_most_citations`: null asks about every marker.
        let at_most = group["at_most_citations"].as_u64().map(|n| n as usize);
        let (mut recalls, mut precisions) = (Vec::new(), Vec::new());
        for case in group["cases"].as_array().unwrap() {
            let answer = case["answer"].as_str().unwrap();
            let reading = if qampari {
                Reading::Qampari {
                    question: case["question"].as_str().unwrap(),
                }
            } else {
                let sentences: Vec<&str> = case["sentences"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s.as_str().unwrap())
                    .collect();
                assert_eq!(
                    nltk_sent_tokenize(answer),
                    sentences,
                    "{key} {g}: {answer:?}"
                );
                Reading::Sentences
            };
            let passages: Vec<Passage> = case["passages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| Passage {
                    title: p["title"].as_str(),
                    text: p["text"].as_str().unwrap(),
                })
                .collect();
            let mut asked: Vec<(String, String)> = Vec::new();
            let got = citation_scores(answer, &passages, at_most, reading, &mut |p, c| {
                asked.push((p.to_string(), c.to_string()));
                Ok(rule(p, c))
            })
            .unwrap();
            let want_asked: Vec<(String, String)> = case["asked"]
                .as_array()
                .unwrap()
                .iter()
                .map(|pair| {
                    (
                        pair[0].as_str().unwrap().to_string(),
                        pair[1].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            assert_eq!(asked, want_asked, "{key} {g}: the questions of {answer:?}");
            match (got, case["citation_recall"].as_f64()) {
                (None, None) => covered.unscored += 1,
                (Some(s), Some(recall)) => {
                    let precision = case["citation_precision"].as_f64().unwrap();
                    assert!(
                        (s.citation_recall - recall).abs() < 1e-12,
                        "{key} {g} recall {} != {recall}: {answer:?}",
                        s.citation_recall
                    );
                    assert!(
                        (s.citation_precision - precision).abs() < 1e-12,
                        "{key} {g} precision {} != {precision}: {answer:?}",
                        s.citation_precision
                    );
                    covered.partial += usize::from(precision > 0.0 && precision < 1.0);
                    recalls.push(s.citation_recall);
                    precisions.push(s.citation_precision);
                }
                (got, want) => panic!("{key} {g}: {got:?} against {want:?}: {answer:?}"),
            }
            covered.answers += 1;
        }
        // ALCE's means leave out the answers without a sentence; with none left, NaN (null).
        match group["overall"].as_object() {
            Some(overall) => {
                let mean = |v: &[f64]| 100.0 * v.iter().sum::<f64>() / v.len() as f64;
                assert!(
                    (mean(&recalls) - overall["citation_rec"].as_f64().unwrap()).abs() < 1e-9,
                    "{key} {g}"
                );
                assert!(
                    (mean(&precisions) - overall["citation_prec"].as_f64().unwrap()).abs() < 1e-9,
                    "{key} {g}"
                );
            }
            None => assert!(recalls.is_empty(), "{key} {g}: ALCE's mean is NaN"),
        }
    }
    covered
}

#[test]
fn citation_scores_equal_alce() {
    let covered = check_groups(&fixture(), "groups", false);
    // The cases reach precision's leave-one-out questions, not only all-or-nothing answers.
    assert!(
        covered.answers >= 60 && covered.partial >= 10,
        "{} answers, {} with partial precision",
        covered.answers,
        covered.partial
    );
}

/// Markers in other scripts' digits (`[１]`, `[١]`, `[𝟙]`, `[१]`: passage 1, as Python's `\d` and
/// `int()` read them), repeated markers (counted twice in precision's denominator, within the
/// first three markers and without that cap), and empty, whitespace-only or punctuation-only
/// answers (no score where ALCE has no sentence).
#[test]
fn edges_of_the_marker_reading_equal_alce() {
    let fixture = fixture();
    let covered = check_groups(&fixture, "edge_groups", false);
    assert!(covered.partial >= 3 && covered.unscored >= 6);
    assert!(fixture["edge_groups"][3]["at_most_citations"].is_null());
    let answers: Vec<&str> = fixture["edge_groups"][2]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["answer"].as_str().unwrap())
        .collect();
    for edge in ["[１]", "[١]", "[3][4][5][4]", "[1][3][1]", "\u{3000}"] {
        assert!(
            answers.iter().any(|a| a.contains(edge)),
            "the fixture lost {edge}"
        );
    }
    assert!(answers.contains(&""));
}

/// ALCE's QAMPARI reading (`qampari=True`): the answer is a comma-separated list, each item
/// checked after the question; an empty answer is the question alone, scored 0, not left out.
#[test]
fn the_qampari_reading_equals_alce() {
    let fixture = fixture();
    let covered = check_groups(&fixture, "qampari_groups", true);
    assert!(
        covered.answers >= 40 && covered.partial >= 5 && covered.unscored == 0,
        "{} answers, {} with partial precision",
        covered.answers,
        covered.partial
    );
}
