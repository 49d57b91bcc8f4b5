//! Parity with rapidfuzz 3.14.6 and Ragas 0.4.3's string metrics on every recorded case
//! (`primitives.rapidfuzz_similarity`, `ragas.pairwise_string_metrics`).

use crate::common;

use polars_rag::metrics::similarity::{
    exact_match, string_presence, string_similarity, ExactMatchCompat, StringDistance,
};

const DISTANCES: [(StringDistance, &str); 4] = [
    (StringDistance::Levenshtein, "levenshtein"),
    (StringDistance::Hamming, "hamming"),
    (StringDistance::Jaro, "jaro"),
    (StringDistance::JaroWinkler, "jaro_winkler"),
];

#[test]
fn rapidfuzz_similarities() {
    let cases = common::section("primitives.rapidfuzz_similarity");
    let mut compared = 0;
    for case in &cases {
        let reference = case["input"]["reference"].as_str().unwrap();
        let response = case["input"]["response"].as_str().unwrap();
        let expected = &case["output_similarity(1-normalized_distance)"];
        for (distance, name) in DISTANCES {
            let want = expected[name].as_f64().unwrap();
            let got = string_similarity(response, reference, distance);
            assert!(
                (got - want).abs() <= 1e-12,
                "{name} {reference:?} {response:?}: {got} vs {want}"
            );
            compared += 1;
        }
    }
    assert_eq!(compared, 9 * 4);
}

#[test]
fn ragas_string_presence_and_similarity() {
    let cases = common::section("ragas.pairwise_string_metrics");
    let mut compared = 0;
    for case in &cases {
        let what = case["description"].as_str().unwrap();
        let reference = case["input"]["reference"].as_str().unwrap();
        let response = case["input"]["response"].as_str().unwrap();
        let out = &case["outputs"];
        assert_eq!(
            string_presence(response, reference),
            out["StringPresence"]["output"].as_f64().unwrap(),
            "{what}"
        );
        assert_eq!(
            exact_match(response, reference, ExactMatchCompat::Ragas),
            out["ExactMatch"]["output"].as_f64().unwrap(),
            "{what}"
        );
        for (distance, name) in DISTANCES {
            let want = out[format!("NonLLMStringSimilarity.{name}")]["output"]
                .as_f64()
                .unwrap();
            let got = string_similarity(response, reference, distance);
            assert!(
                (got - want).abs() <= 1e-12,
                "{what} {name}: {got} vs {want}"
            );
        }
        compared += 1;
    }
    assert_eq!(compared, 20);
}
