//! Property tests of the quoted-span kernel: bounds, no panics on arbitrary Unicode, and the fast
//! substring path agreeing with a direct implementation of the definition.

use polars_rag::metrics::citation::{quoted_spans, QuotedSpansOptions};
use polars_rag::text::normalize::normalize;
use polars_rag::text::quotes::{extract_quoted_spans, QuoteStyle};
use proptest::prelude::*;

/// Text drawn from a small alphabet rich in quote marks, apostrophes, whitespace classes,
/// case-changing letters (Σ, İ) and line breaks, so that interesting cases are frequent.
fn quotey_text() -> impl Strategy<Value = String> {
    let alphabet: Vec<char> = "ab AB\"'`´“”‘’„‚«»‹›「」『』\n\u{a0}\u{1f}\u{2003}ΣσςİıÉéK.,"
        .chars()
        .collect();
    prop::collection::vec(prop::sample::select(alphabet), 0..60)
        .prop_map(|cs| cs.into_iter().collect())
}

fn style() -> impl Strategy<Value = QuoteStyle> {
    prop_oneof![Just(QuoteStyle::Standard), Just(QuoteStyle::Ragas)]
}

/// The definition, spelled out with no shortcuts: normalise everything, then search.
fn by_definition(answer: &str, sources: &[&str], o: &QuotedSpansOptions) -> (u32, u32) {
    let ws = o.quotes.whitespace();
    let spans = extract_quoted_spans(answer, o.quotes, o.min_len);
    let joined = sources.join(" ");
    let hay = if o.casefold {
        normalize(&joined, ws)
    } else {
        joined
    };
    let mut matched = 0;
    for span in &spans {
        let needle = if o.casefold {
            normalize(span, ws)
        } else {
            span.to_string()
        };
        matched += u32::from(!needle.is_empty() && hay.contains(&needle));
    }
    (matched, spans.len() as u32)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn counts_equal_the_definition(
        answer in quotey_text(),
        sources in prop::collection::vec(quotey_text(), 0..4),
        casefold: bool,
        min_len in 0usize..4,
        quotes in style(),
    ) {
        let o = QuotedSpansOptions { casefold, min_len, quotes };
        let refs: Vec<&str> = sources.iter().map(String::as_str).collect();
        let got = quoted_spans(&answer, &refs, &o);
        prop_assert_eq!((got.matched, got.total), by_definition(&answer, &refs, &o));
        prop_assert!(got.matched <= got.total);
        if let Some(score) = got.score() {
            prop_assert!((0.0..=1.0).contains(&score));
        }
    }

    #[test]
    fn arbitrary_unicode_never_panics(answer in any::<String>(), source in any::<String>(), quotes in style()) {
        let o = QuotedSpansOptions { quotes, min_len: 1, ..Default::default() };
        let got = quoted_spans(&answer, &[source.as_str()], &o);
        prop_assert!(got.matched <= got.total);
    }

    #[test]
    fn spans_are_substrings_of_the_answer(answer in quotey_text(), quotes in style()) {
        for span in extract_quoted_spans(&answer, quotes, 0) {
            prop_assert!(answer.contains(span));
        }
    }
}

proptest! {
    // Each case builds an automaton, slow in debug builds: fewer cases.
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Answers with many quotations take the one-pass (automaton) path; it must agree too.
    #[test]
    fn many_spans_equal_the_definition(
        fragments in prop::collection::vec(quotey_text(), 32..64),
        sources in prop::collection::vec(quotey_text(), 0..4),
        casefold: bool,
        quotes in style(),
    ) {
        let open_close = if quotes == QuoteStyle::Ragas { ('"', '"') } else { ('“', '”') };
        let answer: String = fragments
            .iter()
            .map(|f| format!("{}{}{} ", open_close.0, f.replace(['\n', '"', '“', '”', '\'', '`', '´'], " "), open_close.1))
            .collect();
        let o = QuotedSpansOptions { casefold, min_len: 0, quotes };
        // Every other fragment appears in a source, so matches are frequent.
        let quoted_half: String = fragments.iter().step_by(2).cloned().collect::<Vec<_>>().join(" ");
        let mut refs: Vec<&str> = sources.iter().map(String::as_str).collect();
        refs.push(&quoted_half);
        let got = quoted_spans(&answer, &refs, &o);
        prop_assert!(got.total >= 32);
        prop_assert_eq!((got.matched, got.total), by_definition(&answer, &refs, &o));
    }

}

#[test]
fn a_ten_megabyte_answer_is_linear() {
    // 10 MB of prose with thousands of quotations and unmatched marks.
    let unit =
        "The report says “revenue grew by twelve percent” and ‘margins held steady’ while \"costs ";
    let answer = unit.repeat(10_000_000 / unit.len());
    let source = "revenue grew by twelve percent; margins held steady";
    let got = quoted_spans(&answer, &[source], &QuotedSpansOptions::default());
    assert!(got.total > 100_000, "{got:?}");
    assert!(got.matched > 0 && got.matched <= got.total);
}
