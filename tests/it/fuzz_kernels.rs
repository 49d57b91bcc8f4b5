//! Property tests over the text kernels with arbitrary and hostile Unicode: the quote scanners,
//! the tokenizers, BM25, the difflib matcher, span merging and the metrics built on them never
//! panic and keep their documented ranges.
//!
//! The number of cases per property is proptest's `PROPTEST_CASES` (256 by default). A long run:
//!
//! ```text
//! PROPTEST_CASES=100000 cargo test --release --test it fuzz_kernels::
//! ```

use proptest::prelude::*;

use polars_rag::metrics::bleu::{bleu, BleuOptions, SmoothMethod};
use polars_rag::metrics::chrf::{chrf, ChrfOptions};
use polars_rag::metrics::lexical::{keyword_coverage, number_match, numbers};
use polars_rag::metrics::retrieval::{log_rank_score, Span};
use polars_rag::metrics::rouge::{rouge, RougeOptions};
use polars_rag::metrics::spans::{chroma_scores, merge, span_scores};
use polars_rag::text::bm25::Bm25Okapi;
use polars_rag::text::quotes::{extract_quoted_spans, QuoteStyle};
use polars_rag::text::rouge_tokenize::{tokenize, RougeTokenizer};
use polars_rag::text::sacrebleu::BleuTokenizer;
use polars_rag::text::sequence_matcher::{matching_blocks, ratio};
use polars_rag::text::word_tokenize::nltk_word_tokenize;

/// Text mixing what breaks tokenizers: NUL and control characters, combining marks, direction
/// marks, joiners, case-changing letters, CJK, emoji, quotes of every style, digits with
/// separators, ellipses and whitespace of several kinds.
fn hostile_text() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "\u{0}",
        "\u{1}",
        "\u{7f}",
        "\u{301}",
        "\u{200b}",
        "\u{200d}",
        "\u{200e}",
        "\u{202e}",
        "\u{feff}",
        "\u{fffd}",
        "Σ",
        "ς",
        "İ",
        "ß",
        "K",
        "東京",
        "ไทย",
        "😀",
        "👩‍👩‍👧",
        "“",
        "”",
        "«",
        "»",
        "\"",
        "'",
        "‘",
        "’",
        "...",
        "…",
        "-",
        "−",
        "$",
        "%",
        "1,000",
        "604.",
        "0.305",
        "e-2",
        " ",
        "\t",
        "\n",
        "\r\n",
        "\u{a0}",
        "\u{2028}",
        "word",
        "Word",
        "the",
        "a",
        ".",
        ",",
        "?",
    ]);
    prop_oneof![
        prop::collection::vec(pieces, 0..40).prop_map(|v| v.concat()),
        any::<String>(),
    ]
}

fn in_unit(x: f64) -> bool {
    (0.0..=1.0).contains(&x)
}

proptest! {
    #[test]
    fn quote_scanners_return_substrings(text in hostile_text(), min_words in 0usize..4) {
        for style in [QuoteStyle::Standard, QuoteStyle::Ragas] {
            for span in extract_quoted_spans(&text, style, min_words) {
                prop_assert!(text.contains(span));
            }
        }
    }

    #[test]
    fn tokenizers_never_panic(text in hostile_text()) {
        let mut out = String::new();
        for t in [BleuTokenizer::Tok13a, BleuTokenizer::None, BleuTokenizer::Char, BleuTokenizer::Intl] {
            t.tokenize_into(&text, &mut out);
        }
        for t in [RougeTokenizer::RougeScore, RougeTokenizer::Unicode] {
            for stem in [false, true] {
                for token in tokenize(&text, t, stem) {
                    prop_assert!(!token.is_empty());
                }
            }
        }
        let _ = nltk_word_tokenize(&text.to_lowercase());
    }

    #[test]
    fn answer_metrics_stay_in_unit_range(answer in hostile_text(), reference in hostile_text()) {
        let refs = [reference.as_str()];
        for smooth_method in [SmoothMethod::Exp, SmoothMethod::None, SmoothMethod::Floor, SmoothMethod::AddK] {
            let opts = BleuOptions { smooth_method, ..BleuOptions::default() };
            let s = bleu(&answer, &refs, &opts).score;
            prop_assert!(in_unit(s), "bleu {s}");
        }
        let c = chrf(&answer, &refs, &ChrfOptions { word_order: 2, ..ChrfOptions::default() });
        prop_assert!(in_unit(c), "chrf {c}");
        let r = rouge(&answer, &refs, &RougeOptions::default());
        for prf in [r.rouge1, r.rouge2, r.rouge_l, r.rouge_lsum] {
            prop_assert!(in_unit(prf.precision) && in_unit(prf.recall) && in_unit(prf.fmeasure));
        }
        for v in [number_match(&answer, &reference), keyword_coverage(&answer, &reference)].into_iter().flatten() {
            prop_assert!(in_unit(v));
        }
        let _ = numbers(&answer);
    }

    #[test]
    fn a_text_matches_itself_fully(text in hostile_text()) {
        let refs = [text.as_str()];
        let s = bleu(&text, &refs, &BleuOptions::default()).score;
        prop_assert!(in_unit(s));
        if let Some(m) = number_match(&text, &text) {
            prop_assert_eq!(m, 1.0);
        }
    }

    #[test]
    fn difflib_blocks_are_real_matches(a in hostile_text(), b in hostile_text()) {
        let r = ratio(&a, &b);
        prop_assert!(in_unit(r), "ratio {r}");
        let (ac, bc): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
        for m in matching_blocks(&a, &b) {
            prop_assert!(m.a + m.size <= ac.len() && m.b + m.size <= bc.len());
            prop_assert_eq!(&ac[m.a..m.a + m.size], &bc[m.b..m.b + m.size]);
        }
    }

    #[test]
    fn bm25_scores_are_finite(docs in prop::collection::vec(hostile_text(), 1..6), query in hostile_text()) {
        let corpus: Vec<Vec<String>> = docs.iter().map(|d| nltk_word_tokenize(&d.to_lowercase())).collect();
        if corpus.iter().any(|d| !d.is_empty()) {
            let bm25 = Bm25Okapi::new(&corpus, 1.5, 0.75, 0.25);
            let q = nltk_word_tokenize(&query.to_lowercase());
            for s in bm25.scores(&q) {
                prop_assert!(s.is_finite(), "score {s}");
            }
        }
    }

    #[test]
    fn span_scores_are_fractions(
        retrieved in prop::collection::vec((0u8..3, 0u64..50, 0u64..50), 0..8),
        golden in prop::collection::vec((0u8..3, 0u64..50, 0u64..50), 0..8),
    ) {
        let files = ["a", "b", "c"];
        let spans = |v: &[(u8, u64, u64)]| -> Vec<Span<'static>> {
            v.iter()
                .map(|&(f, x, y)| Span { file: files[f as usize], start: x.min(y), end: x.max(y) })
                .collect()
        };
        let (r, g) = (spans(&retrieved), spans(&golden));
        let merged = merge(&r);
        for w in merged.windows(2) {
            prop_assert!(w[0].file != w[1].file || w[0].end < w[1].start);
        }
        if let Some(s) = span_scores(&r, &g) {
            prop_assert!(in_unit(s.precision) && in_unit(s.recall) && in_unit(s.iou));
        }
        if let Ok(s) = chroma_scores(&r, &g) {
            prop_assert!(s.precision.is_finite() && s.recall.is_finite() && s.iou.is_finite());
        }
    }

    #[test]
    fn log_rank_scores_stay_in_unit_range(rank in 1usize..50, extra in 0usize..50, exponent in -320.0f64..308.0) {
        let gamma = 10f64.powf(exponent);
        if gamma > 0.0 && gamma.is_finite() {
            let s = log_rank_score(rank, rank + extra, gamma);
            prop_assert!(in_unit(s), "gamma {gamma}: {s}");
        }
    }
}
