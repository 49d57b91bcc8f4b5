//! Parity of `text::word_tokenize::nltk_word_tokenize` with NLTK 3.10.4's
//! `nltk.word_tokenize` (English punkt_tab model) on lowercased text: exact token equality.
//!
//! Fixtures:
//! * tests/fixtures/soak_quotes_9c164e87.json: soak's recorded tokenizations (the unit cases,
//!   the lowercased windows and the BM25 query tokens of the lowercased quotes).
//! * tests/fixtures/word_tokenize.json, written by
//!   datasets/fixtures/make_word_tokenize_fixtures.py: windows of real documents, hand-written
//!   punctuation, quote, abbreviation and whitespace cases, and seeded random strings. Its
//!   `known_differences` list holds the cases the port is known not to reproduce (with a reason);
//!   they are the only ones allowed to differ, and they must still differ.

use std::path::Path;

use polars_rag::text::word_tokenize::nltk_word_tokenize;
use serde_json::Value;

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).expect("valid JSON")
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|s| s.as_str().expect("string").to_owned())
        .collect()
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}"))
}

/// Tokenizes every `(what, input, expected)` case and returns a report of the mismatches.
fn mismatches<'a>(cases: impl IntoIterator<Item = (String, &'a str, Vec<String>)>) -> Vec<String> {
    let mut report = Vec::new();
    for (what, input, want) in cases {
        let got = nltk_word_tokenize(input);
        if got != want {
            report.push(format!(
                "{what}\n  input:    {input:?}\n  expected: {want:?}\n  got:      {got:?}"
            ));
        }
    }
    report
}

fn assert_no_mismatches(count: usize, report: &[String]) {
    assert!(
        report.is_empty(),
        "{} of {count} cases differ:\n{}",
        report.len(),
        report.join("\n")
    );
}

#[test]
fn soak_recorded_tokenizations() {
    let soak = fixture("soak_quotes_9c164e87.json");
    let mut cases: Vec<(String, &str, Vec<String>)> = Vec::new();

    for (i, unit) in soak["units"]["nltk_word_tokenize_lowercased"]
        .as_array()
        .expect("unit cases")
        .iter()
        .enumerate()
    {
        cases.push((
            format!("units[{i}]"),
            text(&unit["lower"]),
            strings(&unit["tokens"]),
        ));
    }

    // Soak tokenizes each window's text lowercased; Rust's lowercasing equals Python's here.
    let windows = soak["windowing"]["windows"].as_array().expect("windows");
    let tokenized = soak["windowing"]["windows_tokenized_lowercase"]
        .as_array()
        .expect("window tokens");
    assert_eq!(windows.len(), tokenized.len());
    let lowered: Vec<String> = windows.iter().map(|w| text(&w[0]).to_lowercase()).collect();
    for (i, (window, tokens)) in lowered.iter().zip(tokenized).enumerate() {
        cases.push((format!("window {i}"), window, strings(tokens)));
    }

    // BM25 queries: the whole quote, or for quotes with an ellipsis the head and tail parts.
    let mut queries: Vec<(String, String, Vec<String>)> = Vec::new();
    for (i, q) in soak["bm25_diagnostics"]["per_quote"]
        .as_array()
        .expect("per_quote")
        .iter()
        .enumerate()
    {
        if q["has_ellipsis"].as_bool().expect("has_ellipsis") {
            for part in ["head", "tail"] {
                queries.push((
                    format!("quote {i} {part}"),
                    text(&q[part]["text"]).to_lowercase(),
                    strings(&q[part]["query_tokens"]),
                ));
            }
        } else {
            queries.push((
                format!("quote {i}"),
                text(&q["quote"]).to_lowercase(),
                strings(&q["query_tokens"]),
            ));
        }
    }
    cases.extend(
        queries
            .iter()
            .map(|(what, input, want)| (what.clone(), input.as_str(), want.clone())),
    );

    let count = cases.len();
    assert!(
        count >= 7 + 16 + 15,
        "expected every recorded case, found {count}"
    );
    assert_no_mismatches(count, &mismatches(cases));
}

#[test]
fn generated_cases() {
    let fixture = fixture("word_tokenize.json");
    let cases = fixture["cases"].as_array().expect("cases");
    assert!(cases.len() > 300, "only {} cases", cases.len());
    let report = mismatches(cases.iter().map(|case| {
        (
            format!("group {}", text(&case["group"])),
            text(&case["text"]),
            strings(&case["tokens"]),
        )
    }));
    assert_no_mismatches(cases.len(), &report);
}

#[test]
fn known_differences_still_differ() {
    let fixture = fixture("word_tokenize.json");
    for known in fixture["known_differences"]
        .as_array()
        .expect("known_differences")
    {
        let input = text(&known["text"]);
        let want = strings(&known["tokens"]);
        let got = nltk_word_tokenize(input);
        assert_ne!(
            got,
            want,
            "{input:?} now matches NLTK; move it from known_differences to the cases ({})",
            text(&known["reason"])
        );
    }
}

#[test]
fn fixture_groups_are_all_present() {
    let fixture = fixture("word_tokenize.json");
    let groups: std::collections::BTreeSet<&str> = fixture["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|case| text(&case["group"]))
        .collect();
    for group in [
        "chroma_w110",
        "chroma_w300",
        "soak_w110",
        "soak_w300",
        "soak_quotes",
        "handwritten",
        "random",
    ] {
        assert!(groups.contains(group), "no {group} cases");
    }
}
