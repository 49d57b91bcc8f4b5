//! `locate_quotes` in its default mode: the behaviours where it departs from soak on purpose,
//! checked on soak's own test corpus and quotes (tests/fixtures/soak_quotes_9c164e87.json), and
//! properties over arbitrary text.

use polars_rag::metrics::locate::align::Trim;
use polars_rag::metrics::locate::{locate_quotes, LocateOptions, QuoteIndex, QuoteMatch};
use proptest::prelude::*;

use crate::common;

struct Case {
    docs: Vec<(String, String)>,
    quotes: Vec<String>,
}

fn case() -> Case {
    let v = common::soak_vectors();
    Case {
        docs: common::soak_documents(&v),
        quotes: common::soak_quotes(&v),
    }
}

impl Case {
    fn docs(&self) -> Vec<(&str, &str)> {
        common::doc_pairs(&self.docs)
    }
    fn quotes(&self) -> Vec<&str> {
        self.quotes.iter().map(|s| s.as_str()).collect()
    }
    fn text_of(&self, file: &str) -> Vec<char> {
        self.docs
            .iter()
            .find(|(f, _)| f == file)
            .unwrap()
            .1
            .chars()
            .collect()
    }
    fn slice(&self, m: &QuoteMatch) -> String {
        self.text_of(m.file.as_deref().unwrap())[m.start.unwrap()..m.end.unwrap()]
            .iter()
            .collect()
    }
}

fn locate(c: &Case) -> Vec<QuoteMatch> {
    locate_quotes(&c.quotes(), &c.docs(), &LocateOptions::default()).unwrap()
}

#[test]
fn spans_are_slices_of_their_own_file() {
    let c = case();
    for (q, m) in c.quotes().iter().zip(locate(&c)) {
        assert_eq!(c.slice(&m), m.span_text, "{q}");
        assert!(
            m.end.unwrap() <= c.text_of(m.file.as_deref().unwrap()).len(),
            "{q}"
        );
        let r = m.match_ratio.unwrap();
        assert!((0.0..=1.0).contains(&r), "{q}: match_ratio {r}");
    }
}

#[test]
fn verbatim_quotes_return_exactly_the_quoted_text() {
    let c = case();
    let found = locate(&c);
    // Label → (quote index, the exact source text the span must be).
    let expect = [
        (0, "interview_a.txt", "At first I could barely manage a mile without stopping, and honestly I hated every minute of it."),
        (1, "interview_a.txt", "pressure was too high. At first I could barely manage"),
        (6, "interview_b.txt", "Work  was   hard in the first year. My manager, Ms. Ødegård, expected reports in German"),
        (8, "interview_a.txt", "My neighbour Sarah used to laugh at me from her garden."),
        // soak shifts this one by two code points (offsets of the normalised window).
        (10, "closing.txt", "thank you for listening."),
        // A straight apostrophe against the source's curly one.
        (13, "interview_b.txt", "everyone seemed so relaxed — but I’ve come to love it."),
    ];
    for (i, file, text) in expect {
        let m = &found[i];
        assert_eq!(m.file.as_deref(), Some(file), "quote {i}");
        assert_eq!(m.span_text, text, "quote {i}");
        assert_eq!(m.match_ratio, Some(1.0), "quote {i}");
        assert!(m.found, "quote {i}");
    }
}

#[test]
fn ellipsis_quotes_are_attributed_to_the_file_that_holds_them() {
    let c = case();
    let found = locate(&c);
    // 3: "Moving to Zürich was not easy for me… but I’ve come to love it." (soak: interview_a.txt)
    let m = &found[3];
    assert_eq!(m.file.as_deref(), Some("interview_b.txt"));
    assert!(
        m.span_text
            .starts_with("Moving to Zürich was not easy for me"),
        "{}",
        m.span_text
    );
    assert!(m.span_text.ends_with("come to love it."), "{}", m.span_text);
    assert!(m.found);
    let text = c.text_of("interview_b.txt");
    let head: String = text[m.head_start.unwrap()..m.head_end.unwrap()]
        .iter()
        .collect();
    let tail: String = text[m.tail_start.unwrap()..m.tail_end.unwrap()]
        .iter()
        .collect();
    assert_eq!(head, "Moving to Zürich was not easy for me");
    assert_eq!(tail, "but I’ve come to love it.");
}

#[test]
fn reversed_ellipsis_parts_keep_their_own_texts() {
    let c = case();
    let found = locate(&c);
    // 14: "my blood pressure is back to normal... I started running in my forties"
    let m = &found[14];
    let text = c.text_of(m.file.as_deref().unwrap());
    let head: String = text[m.head_start.unwrap()..m.head_end.unwrap()]
        .iter()
        .collect();
    let tail: String = text[m.tail_start.unwrap()..m.tail_end.unwrap()]
        .iter()
        .collect();
    assert_eq!(head, "my blood pressure is back to normal");
    assert_eq!(tail, "I started running in my forties");
    assert!(
        m.tail_start < m.head_start,
        "the tail comes first in the source"
    );
    assert_eq!(m.match_ratio, Some(1.0));
    // With a gap limit of one window the parts are too far apart: not found.
    let opts = LocateOptions {
        ellipsis_max_gap: Some(1),
        ..Default::default()
    };
    let gap = locate_quotes(&[c.quotes[14].as_str()], &c.docs(), &opts).unwrap();
    assert!(!gap[0].found);
}

#[test]
fn absent_and_paraphrased_quotes_are_not_found() {
    let c = case();
    let found = locate(&c);
    for i in [4, 5] {
        assert!(!found[i].found, "quote {i}: {:?}", found[i]);
        assert!(found[i].match_ratio.unwrap() < 0.6, "quote {i}");
    }
}

#[test]
fn a_quote_does_not_depend_on_its_batch() {
    let c = case();
    let all = locate(&c);
    for (i, q) in c.quotes().iter().enumerate() {
        let alone = locate_quotes(&[q], &c.docs(), &LocateOptions::default()).unwrap();
        assert_eq!(alone[0], all[i], "quote {i}");
    }
}

#[test]
fn bad_options_and_inputs_are_errors() {
    let docs = [("a.txt", "some text here")];
    let err = |o: LocateOptions| {
        locate_quotes(&["some text"], &docs, &o)
            .unwrap_err()
            .to_string()
    };
    assert!(err(LocateOptions {
        window_size: Some(0),
        ..Default::default()
    })
    .contains("window_size"));
    assert!(err(LocateOptions {
        overlap: Some(0),
        ..Default::default()
    })
    .contains("overlap"));
    assert!(err(LocateOptions {
        window_size: Some(10),
        overlap: Some(10),
        ..Default::default()
    })
    .contains("overlap"));
    assert!(err(LocateOptions {
        trim: Trim::SlidingBm25,
        ..Default::default()
    })
    .contains("sliding_bm25"));
    assert!(locate_quotes(&["x"], &[], &LocateOptions::default())
        .unwrap_err()
        .to_string()
        .contains("sources are empty"));
    assert!(
        locate_quotes(&["x"], &[("a", "")], &LocateOptions::default())
            .unwrap_err()
            .to_string()
            .contains("empty")
    );
    assert!(locate_quotes(&[" ... "], &docs, &LocateOptions::default())
        .unwrap_err()
        .to_string()
        .contains("quote is empty"));
    // soak keeps its own reading of 0: "use the default".
    let soak = LocateOptions {
        window_size: Some(0),
        overlap: Some(0),
        ..LocateOptions::soak()
    };
    assert!(QuoteIndex::new(&docs, &soak, &["some text"]).is_ok());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn offsets_stay_inside_the_document(
        docs in prop::collection::vec("\\PC{0,300}", 1..4),
        quote in "\\PC{1,60}",
        window in 5usize..120,
    ) {
        let owned = common::numbered_documents(&docs);
        let named = common::doc_pairs(&owned);
        let opts = LocateOptions { window_size: Some(window), ..Default::default() };
        match locate_quotes(&[quote.as_str()], &named, &opts) {
            Ok(found) => {
                let m = &found[0];
                let file = m.file.as_deref().unwrap();
                let text: Vec<char> = named.iter().find(|(f, _)| *f == file).unwrap().1.chars().collect();
                let (s, e) = (m.start.unwrap(), m.end.unwrap());
                prop_assert!(s <= e && e <= text.len());
                prop_assert_eq!(text[s..e].iter().collect::<String>(), m.span_text.clone());
                let r = m.match_ratio.unwrap();
                prop_assert!((0.0..=1.0).contains(&r));
                if m.found && m.match_ratio == Some(1.0) {
                    prop_assert!(!m.span_text.is_empty());
                }
            }
            Err(e) => prop_assert!(e.to_string().starts_with("locate_quotes: "), "{}", e),
        }
    }

    #[test]
    fn soak_mode_never_panics(
        docs in prop::collection::vec("\\PC{0,200}", 1..3),
        quotes in prop::collection::vec("\\PC{0,80}", 1..4),
    ) {
        let owned = common::numbered_documents(&docs);
        let named = common::doc_pairs(&owned);
        let quotes: Vec<&str> = quotes.iter().map(|q| q.as_str()).collect();
        for trim in [Trim::Fuzzy, Trim::SlidingBm25, Trim::Hybrid, Trim::Off] {
            let opts = LocateOptions { trim, ellipsis_max_gap: Some(1), ..LocateOptions::soak() };
            if let Err(e) = locate_quotes(&quotes, &named, &opts) {
                prop_assert!(e.to_string().starts_with("locate_quotes: "), "{}", e);
            }
        }
    }
}
