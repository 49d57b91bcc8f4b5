//! ALCE's citation recall and precision against values recorded from its own `eval.py`
//! (`compute_autoais`, commit 246c476), run unchanged with a stated rule in place of its NLI
//! model (`datasets/fixtures/make_alce_fixtures.py`): the sentences NLTK splits, each answer's
//! scores, and each group's means.

use std::path::Path;

use polars_rag::metrics::alce::{citation_scores, Passage};
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

fn rule(premise: &str, claim: &str) -> polars_rag::Result<bool> {
    let known = words(premise);
    Ok(words(claim).iter().all(|w| known.contains(w)))
}

#[test]
fn citation_scores_equal_alce() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/alce_citations.json");
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let (mut answers, mut partial) = (0, 0);
    for (g, group) in fixture["groups"].as_array().unwrap().iter().enumerate() {
        let (mut recalls, mut precisions) = (Vec::new(), Vec::new());
        for case in group["cases"].as_array().unwrap() {
            let answer = case["answer"].as_str().unwrap();
            let sentences: Vec<&str> = case["sentences"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap())
                .collect();
            assert_eq!(nltk_sent_tokenize(answer), sentences, "group {g}: {answer}");
            let passages: Vec<Passage> = case["passages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| Passage {
                    title: p["title"].as_str(),
                    text: p["text"].as_str().unwrap(),
                })
                .collect();
            let got = citation_scores(answer, &passages, Some(3), &mut rule).unwrap();
            match (got, case["citation_recall"].as_f64()) {
                (None, None) => {}
                (Some(s), Some(recall)) => {
                    let precision = case["citation_precision"].as_f64().unwrap();
                    assert!(
                        (s.citation_recall - recall).abs() < 1e-12,
                        "group {g} recall: {answer}"
                    );
                    assert!(
                        (s.citation_precision - precision).abs() < 1e-12,
                        "group {g} precision {} != {precision}: {answer}",
                        s.citation_precision
                    );
                    partial += usize::from(precision > 0.0 && precision < 1.0);
                    recalls.push(s.citation_recall);
                    precisions.push(s.citation_precision);
                }
                (got, want) => panic!("group {g}: {got:?} against {want:?}: {answer}"),
            }
            answers += 1;
        }
        if let Some(overall) = group["overall"].as_object() {
            let mean = |v: &[f64]| 100.0 * v.iter().sum::<f64>() / v.len() as f64;
            assert!(
                (mean(&recalls) - overall["citation_rec"].as_f64().unwrap()).abs() < 1e-9,
                "group {g}"
            );
            assert!(
                (mean(&precisions) - overall["citation_prec"].as_f64().unwrap()).abs() < 1e-9,
                "group {g}"
            );
        }
    }
    // The cases reach precision's leave-one-out questions, not only all-or-nothing answers.
    assert!(
        answers >= 60 && partial >= 10,
        "{answers} answers, {partial} with partial precision"
    );
}
