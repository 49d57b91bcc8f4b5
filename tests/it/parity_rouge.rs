//! Parity with rouge-score 0.1.2 / NLTK 3.10.4 and with the datapizza-ai and Ragas 0.4.3
//! wrappers, on every recorded case of the reference vectors.

use crate::common;

use polars_rag::metrics::rouge::{
    datapizza_corpus_rouge_scores, datapizza_rouge_score, ragas_rouge_score, DatapizzaRouge, Prf,
    RagasRougeMode, RagasRougeType,
};
use polars_rag::text::porter::stem;
use polars_rag::text::rouge_tokenize::{tokenize, RougeTokenizer};
use serde_json::Value;

/// The arithmetic is reproduced operation for operation: every float must be bit-identical.
fn close(a: f64, b: f64) -> bool {
    a == b
}

fn check_prf(what: &str, got: &Prf, want: &Value) {
    for (name, g) in [
        ("precision", got.precision),
        ("recall", got.recall),
        ("fmeasure", got.fmeasure),
    ] {
        let w = want[name]
            .as_f64()
            .unwrap_or_else(|| panic!("{what}: {name}"));
        assert!(close(g, w), "{what} {name}: got {g}, want {w}");
    }
}

fn check_datapizza(what: &str, got: &DatapizzaRouge, want: &Value) {
    check_prf(&format!("{what} rouge1"), &got.rouge1, &want["rouge1"]);
    check_prf(&format!("{what} rouge2"), &got.rouge2, &want["rouge2"]);
    check_prf(&format!("{what} rougeL"), &got.rouge_l, &want["rougeL"]);
}

#[test]
fn porter_stem_every_case() {
    let cases = common::section("primitives.nltk_porter_stem(mode=NLTK_EXTENSIONS default)");
    let mut compared = 0;
    for case in &cases {
        let word = case["input"].as_str().unwrap();
        let want = case["output"].as_str().unwrap();
        assert_eq!(stem(word), want, "stem({word:?})");
        compared += 1;
    }
    assert_eq!(compared, 104);
}

#[test]
fn rouge_score_tokenize_every_case() {
    let mut compared = 0;
    for (section, stemmer) in [
        ("primitives.rouge_score_tokenize(stemmer=Porter)", true),
        ("primitives.rouge_score_tokenize(no stemmer)", false),
    ] {
        for case in &common::section(section) {
            let text = case["input"].as_str().unwrap();
            let want = common::strings(&case["output"]);
            assert_eq!(
                tokenize(text, RougeTokenizer::RougeScore, stemmer),
                want,
                "{section}: {text:?}"
            );
            compared += 1;
        }
    }
    assert_eq!(compared, 22);
}

#[test]
fn datapizza_rouge_score_every_case() {
    let mut compared = 0;
    for case in &common::section("datapizza.rouge_score") {
        let what = case["description"].as_str().unwrap_or("?");
        let input = &case["input"];
        let got = datapizza_rouge_score(
            input["retrieved_chunk"].as_str().unwrap(),
            input["ground_truth_chunk"].as_str().unwrap(),
        );
        check_datapizza(what, &got, &case["output"]);
        compared += 1;
    }
    assert_eq!(compared, 15);
}

#[test]
fn datapizza_corpus_rouge_scores_every_case() {
    let mut compared = 0;
    for case in &common::section("datapizza.corpus_rouge_scores") {
        let what = case["description"].as_str().unwrap_or("?");
        let input = &case["input"];
        let retrieved = common::strings(&input["retrieved_chunks"]);
        let truths = common::strings(&input["ground_truth_chunks"]);
        let retrieved: Vec<&str> = retrieved.iter().map(String::as_str).collect();
        let truths: Vec<&str> = truths.iter().map(String::as_str).collect();
        let got = datapizza_corpus_rouge_scores(&retrieved, &truths);
        if let Some(err) = case.get("error") {
            assert_eq!(err["type"], "ValueError", "{what}");
            assert_eq!(
                got.as_ref().err().map(polars_rag::Error::message),
                err["message"].as_str(),
                "{what}"
            );
        } else {
            let got = got.unwrap_or_else(|e| panic!("{what}: unexpected error {e}"));
            check_datapizza(what, &got, &case["output"]);
        }
        compared += 1;
    }
    assert_eq!(compared, 12);
}

#[test]
fn ragas_rouge_score_every_case() {
    let mut compared = 0;
    for case in &common::section("ragas.pairwise_string_metrics") {
        let what = case["description"].as_str().unwrap_or("?");
        let reference = case["input"]["reference"].as_str().unwrap();
        let response = case["input"]["response"].as_str().unwrap();
        for outputs in [&case["outputs"], &case["collections_api_outputs"]] {
            let Some(map) = outputs.as_object() else {
                continue;
            };
            for (key, value) in map {
                let Some(spec) = key.strip_prefix("RougeScore.") else {
                    continue;
                };
                let (rouge_type, mode) = match spec {
                    "rougeL.fmeasure(default)" => {
                        (RagasRougeType::RougeL, RagasRougeMode::Fmeasure)
                    }
                    "rougeL.precision" => (RagasRougeType::RougeL, RagasRougeMode::Precision),
                    "rougeL.recall" => (RagasRougeType::RougeL, RagasRougeMode::Recall),
                    "rouge1.fmeasure" => (RagasRougeType::Rouge1, RagasRougeMode::Fmeasure),
                    "rouge1.precision" => (RagasRougeType::Rouge1, RagasRougeMode::Precision),
                    "rouge1.recall" => (RagasRougeType::Rouge1, RagasRougeMode::Recall),
                    other => panic!("unknown key RougeScore.{other}"),
                };
                let want = value["output"].as_f64().unwrap();
                let got = ragas_rouge_score(reference, response, rouge_type, mode);
                assert!(close(got, want), "{what} {key}: got {got}, want {want}");
                compared += 1;
            }
        }
    }
    // 20 cases × (6 single-turn keys + 1 collections key).
    assert_eq!(compared, 140);
}
