//! Parity with Ragas 0.4.3 `quoted_spans_alignment` on every recorded case
//! (`ragas.quoted_spans_alignment` in the reference vectors).

use crate::common;

use polars_rag::metrics::citation::{citation_alignment, QuotedSpans, QuotedSpansOptions, Scratch};
use polars_rag::text::quotes::QuoteStyle;
use serde_json::Value;

fn options(input: &Value) -> QuotedSpansOptions {
    QuotedSpansOptions {
        casefold: input["casefold"].as_bool().unwrap_or(true),
        min_len: input["min_len"].as_u64().map_or(3, |n| n as usize),
        quotes: QuoteStyle::Ragas,
    }
}

#[test]
fn every_recorded_case_matches_ragas() {
    let cases = common::section("ragas.quoted_spans_alignment");
    assert_eq!(cases.len(), 28, "the section holds 28 cases");
    let mut compared = 0;
    for case in &cases {
        let what = case["description"].as_str().unwrap_or("?");
        let input = &case["input"];
        let scorer = QuotedSpans::new(options(input));
        let answers = common::strings(&input["answers"]);
        let sources: Vec<Vec<String>> = input["sources"]
            .as_array()
            .unwrap()
            .iter()
            .map(common::strings)
            .collect();

        // Extraction, span for span.
        let expected_spans: Vec<Vec<String>> = case["extracted_spans_per_answer"]
            .as_array()
            .unwrap()
            .iter()
            .map(common::strings)
            .collect();
        let got_spans: Vec<Vec<String>> = answers
            .iter()
            .map(|a| scorer.spans(a).into_iter().map(str::to_owned).collect())
            .collect();
        assert_eq!(got_spans, expected_spans, "spans: {what}");

        if case.get("error").is_some() {
            // Ragas raises on answers/sources of different lengths. In a Polars frame columns
            // always have equal lengths; the driver rejects unequal non-broadcastable inputs.
            assert_ne!(answers.len(), sources.len(), "error case: {what}");
            continue;
        }

        let mut scratch = Scratch::default();
        let counts: Vec<_> = answers
            .iter()
            .zip(&sources)
            .map(|(a, s)| {
                let s: Vec<&str> = s.iter().map(String::as_str).collect();
                scorer.score(a, &s, &mut scratch)
            })
            .collect();
        let got = citation_alignment(counts);
        let out = &case["output"];
        // Exact equality: the arithmetic (two integer sums and one division) is Ragas' own.
        assert_eq!(
            got.citation_alignment_quoted_spans,
            out["citation_alignment_quoted_spans"].as_f64().unwrap(),
            "score: {what}"
        );
        assert_eq!(
            got.matched,
            out["matched"].as_f64().unwrap(),
            "matched: {what}"
        );
        assert_eq!(got.total, out["total"].as_f64().unwrap(), "total: {what}");
        compared += 1;
    }
    assert_eq!(compared, 27);
}

/// Where the two quote styles differ, on the same recorded inputs: `standard` pairs curly quotes
/// and ignores apostrophes, `ragas` does the opposite.
#[test]
fn standard_style_differs_where_ragas_is_defective() {
    let standard = QuotedSpans::new(QuotedSpansOptions::default());
    let ragas = QuotedSpans::new(QuotedSpansOptions {
        quotes: QuoteStyle::Ragas,
        ..Default::default()
    });
    let curly = "He said “the capital of France” yesterday.";
    assert_eq!(ragas.spans(curly), Vec::<&str>::new());
    assert_eq!(standard.spans(curly), vec!["the capital of France"]);

    let apostrophes = "I don't think it's \"a good idea at all\" really.";
    assert_eq!(
        ragas.spans(apostrophes),
        vec!["t think it", "a good idea at all"]
    );
    assert_eq!(standard.spans(apostrophes), vec!["a good idea at all"]);

    let mixed = "He said \"the capital of France' ok";
    assert_eq!(ragas.spans(mixed), vec!["the capital of France"]);
    assert_eq!(standard.spans(mixed), Vec::<&str>::new());

    // U+001F is whitespace for Python (ragas mode) but not for Unicode (standard mode).
    let separators = "x \"one\u{1f}two\u{1e}three\" y";
    assert_eq!(ragas.spans(separators).len(), 1);
    assert_eq!(
        standard.spans(separators).len(),
        0,
        "one word, below min_len"
    );
}

/// The bundled copy must equal the shared reference folder when that folder is present.
#[test]
fn bundled_vectors_equal_the_shared_copy() {
    let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/reference-vectors/vectors-seeds.json");
    match std::fs::read(&shared) {
        Ok(bytes) => assert_eq!(
            bytes,
            std::fs::read(common::vectors_path()).unwrap(),
            "tests/reference-vectors is out of date"
        ),
        Err(_) => eprintln!("skipped: {} not present", shared.display()),
    }
}
