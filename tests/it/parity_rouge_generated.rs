//! Parity with rouge-score 0.1.2 and NLTK 3.10.4 on generated data (`tests/fixtures/rouge.json`,
//! written by `datasets/fixtures/make_rouge_fixtures.py` with the real libraries): about 2000
//! corpus words through the Porter stemmer and the tokens of 300 prediction/reference pairs
//! (multi-line, multi-reference, punctuation, numbers, empty strings, with and without the
//! stemmer). The pairs' scores are metric vectors (`tests/vectors/rouge.jsonl`), checked to the
//! bit through every face.

use std::path::Path;

use polars_rag::metrics::rouge::{rouge, RougeOptions, Scratch};
use polars_rag::text::porter::stem;
use polars_rag::text::rouge_tokenize::{tokenize, RougeTokenizer};
use serde_json::Value;

fn fixtures() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rouge.json");
    let text = std::fs::read_to_string(path).expect("tests/fixtures/rouge.json");
    serde_json::from_str(&text).expect("valid JSON")
}

#[test]
fn stems_match_nltk() {
    let all = fixtures();
    let stems = all["stems"].as_array().expect("stems");
    let mut compared = 0;
    for pair in stems {
        let word = pair[0].as_str().unwrap();
        let want = pair[1].as_str().unwrap();
        assert_eq!(stem(word), want, "stem({word:?})");
        compared += 1;
    }
    assert_eq!(compared, 1999);
}

#[test]
fn pairs_tokenize_as_rouge_score() {
    let all = fixtures();
    let pairs = all["pairs"].as_array().expect("pairs");
    let mut scratch = Scratch::default();
    let mut compared = 0;
    for (n, pair) in pairs.iter().enumerate() {
        let prediction = pair["prediction"].as_str().unwrap();
        let references: Vec<&str> = pair["references"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let opts = RougeOptions {
            use_stemmer: pair["use_stemmer"].as_bool().unwrap(),
            tokenizer: RougeTokenizer::RougeScore,
            ..RougeOptions::default()
        };
        let what = format!("pair {n} {prediction:?} vs {references:?} {opts:?}");

        let tokens: Vec<String> = pair["reference_tokens"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            tokenize(references[0], opts.tokenizer, opts.use_stemmer),
            tokens,
            "{what}"
        );

        // The scores are checked through the faces against the same recorded pairs
        // (tests/vectors/rouge.jsonl); here the scratch buffers must not change them.
        assert_eq!(
            scratch.rouge(prediction, &references, &opts),
            rouge(prediction, &references, &opts),
            "{what}: scratch reuse"
        );
        compared += 1;
    }
    assert_eq!(compared, 300);
}
