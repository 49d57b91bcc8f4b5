//! Ragas 0.4.3 `quoted_spans_alignment`: its recorded cases are metric vectors
//! (`tests/vectors/quoted_spans.jsonl`: the spans each answer quotes, and the alignment), checked
//! through every face; here, where the quote styles differ, and the bundled copy of the shared
//! reference vectors.

use crate::common;

use polars_rag::metrics::citation::{QuotedSpans, QuotedSpansOptions};
use polars_rag::text::quotes::QuoteStyle;

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
