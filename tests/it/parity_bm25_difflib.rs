//! Parity of the quote-localisation primitives with their references: `text::bm25` with
//! rank_bm25 0.2.2's `BM25Okapi`, and `text::sequence_matcher` with Python's
//! `difflib.SequenceMatcher`. Both reproduce the reference arithmetic operation for operation,
//! so every float is compared for bit equality.
//!
//! Fixtures: tests/reference-vectors/vectors-seeds.json (rank_bm25 primitives), and
//! tests/fixtures/{bm25_quotes,bm25_generated,sequence_matcher}.json, written by
//! datasets/fixtures/make_bm25_difflib_fixtures.py (bm25_quotes.json is the BM25 part of the
//! shared soak vectors, vectors-quotes.json, copied unchanged).

use crate::common;

use std::path::{Path, PathBuf};

use polars_rag::text::bm25::Bm25Okapi;
use polars_rag::text::sequence_matcher::{Match, SequenceMatcher};
use serde_json::Value;

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).expect("valid JSON")
}

fn shared_vectors_quotes() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/reference-vectors/vectors-quotes.json")
}

fn token_lists(v: &Value) -> Vec<Vec<String>> {
    v.as_array()
        .expect("array")
        .iter()
        .map(common::strings)
        .collect()
}

/// A recorded float: a number, or the string "NaN".
fn float(v: &Value) -> f64 {
    match v {
        Value::String(s) if s == "NaN" => f64::NAN,
        _ => v.as_f64().unwrap_or_else(|| panic!("not a float: {v}")),
    }
}

/// Bit equality, NaN equal to NaN (the two zeros compare by sign too).
fn same(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

fn assert_scores(what: &str, got: &[f64], want: &Value) {
    let want: Vec<f64> = want.as_array().expect("scores").iter().map(float).collect();
    assert_eq!(got.len(), want.len(), "{what}: number of documents");
    for (d, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(same(*g, *w), "{what}: document {d}: got {g:?}, want {w:?}");
    }
}

/// Checks idf, average_idf and avgdl against a record that has them.
fn assert_index(what: &str, bm25: &Bm25Okapi, case: &Value) {
    let idf = case["idf"].as_object().expect("idf");
    assert_eq!(bm25.vocabulary_size(), idf.len(), "{what}: vocabulary");
    for (term, want) in idf {
        let got = bm25
            .idf(term)
            .unwrap_or_else(|| panic!("{what}: no idf for {term:?}"));
        assert!(
            same(got, float(want)),
            "{what}: idf({term:?}) = {got:?}, want {want}"
        );
    }
    for (name, got) in [("average_idf", bm25.average_idf()), ("avgdl", bm25.avgdl())] {
        let want = float(&case[name]);
        assert!(same(got, want), "{what}: {name} = {got:?}, want {want:?}");
    }
}

#[test]
fn bm25_seed_vectors() {
    let mut compared = 0;
    for (section, (k1, b, eps)) in [
        (
            "primitives.rank_bm25.BM25Okapi(k1=1.5,b=0.75,epsilon=0.25)",
            (1.5, 0.75, 0.25),
        ),
        (
            "primitives.rank_bm25.BM25Okapi corpus2 (negative idf floored to epsilon*average_idf)",
            (1.5, 0.75, 0.25),
        ),
    ] {
        // These two sections are single records rather than lists of cases.
        let text = std::fs::read_to_string(common::vectors_path()).unwrap();
        let all: Value = serde_json::from_str(&text).unwrap();
        let case = &all[section];
        let corpus = token_lists(&case["corpus_tokens"]);
        let bm25 = Bm25Okapi::new(&corpus, k1, b, eps);
        assert_index(section, &bm25, case);
        for q in case["queries"].as_array().unwrap() {
            let query = common::strings(&q["query"]);
            assert_scores(
                &format!("{section} {query:?}"),
                &bm25.scores(&query),
                &q["scores"],
            );
            compared += 1;
        }
    }
    assert_eq!(compared, 12);
}

#[test]
fn bm25_soak_quote_diagnostics() {
    let f = fixture("bm25_quotes.json");
    let (k1, b, eps) = (float(&f["k1"]), float(&f["b"]), float(&f["epsilon"]));
    assert_eq!((k1, b, eps), (1.5, 0.4, 0.25));
    let windows = token_lists(&f["windows_tokenized_lowercase"]);
    let bm25 = Bm25Okapi::new(&windows, k1, b, eps);
    let mut compared = 0;
    let mut out = Vec::new();
    for rec in f["per_quote"].as_array().unwrap() {
        let query = common::strings(&rec["query_tokens"]);
        bm25.scores_into(&query, &mut out);
        let what = format!("quote {} {}", rec["quote"], rec["part"]);
        assert_scores(&what, &out, &rec["scores"]);
        // numpy's argmax: the first maximum.
        let best = out
            .iter()
            .enumerate()
            .fold(0, |best, (i, &s)| if s > out[best] { i } else { best });
        assert_eq!(
            best as u64,
            rec["argmax"].as_u64().unwrap(),
            "{what}: argmax"
        );
        compared += 1;
    }
    assert_eq!(compared, 20);
}

#[test]
fn bm25_soak_unit_vectors() {
    let f = fixture("bm25_quotes.json");
    let u = &f["units_bm25okapi"];
    let corpus = token_lists(&u["corpus"]);
    let bm25 = Bm25Okapi::new(
        &corpus,
        float(&u["k1"]),
        float(&u["b"]),
        float(&u["epsilon"]),
    );
    assert_index("units.bm25okapi", &bm25, u);
    let queries = u["queries"].as_object().unwrap();
    for (query, want) in queries {
        let tokens: Vec<&str> = query.split_whitespace().collect();
        assert_scores(&format!("units {query:?}"), &bm25.scores(&tokens), want);
    }
    assert_eq!(queries.len(), 6);

    // One document: every idf is negative and floored to a negative epsilon × average_idf.
    let single = &u["single_doc_corpus"];
    let bm25 = Bm25Okapi::new(
        &token_lists(&single["corpus"]),
        float(&u["k1"]),
        float(&u["b"]),
        float(&u["epsilon"]),
    );
    for (term, want) in single["idf"].as_object().unwrap() {
        assert!(
            same(bm25.idf(term).unwrap(), float(want)),
            "single-doc idf({term})"
        );
    }
    assert_scores(
        "single-doc x",
        &bm25.scores(&["x"]),
        &single["scores_query_x"],
    );
}

#[test]
fn bm25_generated_by_rank_bm25() {
    let f = fixture("bm25_generated.json");
    assert_eq!(f["rank_bm25"], "0.2.2");
    let mut compared = 0;
    let mut nan = 0;
    for case in f["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let corpus = token_lists(&case["corpus_tokens"]);
        let bm25 = Bm25Okapi::new(
            &corpus,
            float(&case["k1"]),
            float(&case["b"]),
            float(&case["epsilon"]),
        );
        assert_index(name, &bm25, case);
        for q in case["queries"].as_array().unwrap() {
            let query = common::strings(&q["query"]);
            let got = bm25.scores(&query);
            nan += got.iter().filter(|s| s.is_nan()).count();
            assert_scores(&format!("{name} {query:?}"), &got, &q["scores"]);
            compared += 1;
        }
    }
    assert_eq!(compared, 8 * 16);
    assert!(nan > 0, "the degenerate cases must produce NaN");
}

/// The fixture is a verbatim copy: when the shared vectors are present, check it still is.
#[test]
fn bm25_fixture_matches_shared_vectors_when_present() {
    let path = shared_vectors_quotes();
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("skipped: {path:?} not present");
        return;
    };
    let shared: Value = serde_json::from_str(&text).unwrap();
    let f = fixture("bm25_quotes.json");
    assert_eq!(
        f["windows_tokenized_lowercase"],
        shared["windowing"]["windows_tokenized_lowercase"]
    );
    assert_eq!(f["units_bm25okapi"], shared["units"]["bm25okapi"]);
    let mut records = f["per_quote"].as_array().unwrap().iter();
    for q in shared["bm25_diagnostics"]["per_quote"].as_array().unwrap() {
        let parts: Vec<&Value> = if q["has_ellipsis"].as_bool().unwrap() {
            vec![&q["head"], &q["tail"]]
        } else {
            vec![q]
        };
        for part in parts {
            let rec = records.next().expect("a fixture record per query");
            assert_eq!(rec["query_tokens"], part["query_tokens"]);
            assert_eq!(rec["scores"], part["scores"]);
        }
    }
    assert!(records.next().is_none());
}

fn triple(m: Match) -> [usize; 3] {
    [m.a, m.b, m.size]
}

fn to_triple(v: &Value) -> [usize; 3] {
    let t = v.as_array().expect("[a, b, size]");
    [0, 1, 2].map(|i| t[i].as_u64().unwrap() as usize)
}

fn triples(v: &Value) -> Vec<[usize; 3]> {
    v.as_array().unwrap().iter().map(to_triple).collect()
}

#[test]
fn sequence_matcher_against_difflib() {
    let f = fixture("sequence_matcher.json");
    let cases = f["cases"].as_array().unwrap();
    let (mut compared, mut with_popular) = (0, 0);
    for case in cases {
        let tag = case["tag"].as_str().unwrap();
        let a = case["a"].as_str().unwrap();
        let b = case["b"].as_str().unwrap();
        let autojunk = case["autojunk"].as_bool().unwrap();
        let what = format!(
            "{tag} (a: {} chars, b: {} chars)",
            a.chars().count(),
            b.chars().count()
        );
        let m = SequenceMatcher::with_autojunk(a.chars().collect(), b.chars().collect(), autojunk);

        let mut popular: Vec<char> = m.popular().iter().copied().collect();
        popular.sort_unstable();
        let want_popular: Vec<char> = common::strings(&case["popular"])
            .iter()
            .map(|s| s.chars().next().unwrap())
            .collect();
        assert_eq!(popular, want_popular, "{what}: popular elements");
        with_popular += usize::from(!popular.is_empty());

        let longest = m.find_longest_match(0, m.a().len(), 0, m.b().len());
        assert_eq!(
            triple(longest),
            to_triple(&case["longest"]),
            "{what}: longest"
        );

        let blocks: Vec<[usize; 3]> = m.get_matching_blocks().into_iter().map(triple).collect();
        assert_eq!(blocks, triples(&case["blocks"]), "{what}: matching blocks");

        let want_m = case["matches"].as_u64().unwrap() as usize;
        assert_eq!(m.matches(), want_m, "{what}: M");
        let want_ratio = float(&case["ratio"]);
        assert!(
            same(m.ratio(), want_ratio),
            "{what}: ratio {} != {want_ratio}",
            m.ratio()
        );
        compared += 1;
    }
    assert_eq!(compared, cases.len());
    assert!(compared >= 390, "{compared} cases");
    assert!(
        with_popular >= 20,
        "autojunk exercised in {with_popular} cases"
    );
}

/// soak's `find_alignment_fuzzy` unit case that reaches `SequenceMatcher`: its recorded
/// `match_ratio` is `SequenceMatcher(None, span_clean, quote_clean).ratio()`.
#[test]
fn sequence_matcher_soak_unit_case() {
    let f = fixture("bm25_quotes.json");
    let cases = f["units_find_alignment_fuzzy"].as_array().unwrap();
    let clean = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    let case = cases
        .iter()
        .find(|c| c["quote"] == "the slow brown fox jumped")
        .expect("the fuzzy unit case");
    let span = clean(case["span"].as_str().unwrap());
    let quote = clean(case["quote"].as_str().unwrap());
    let m = SequenceMatcher::from_strs(&span, &quote);
    assert_eq!(m.ratio(), float(&case["result"]["match_ratio"]));
    assert_eq!(m.ratio(), 6.0 / 11.0);
}

/// A few thousand code points each way, with autojunk on and off: well under a second even
/// in a debug build (difflib's worst case is quadratic; this guards against a regression to
/// per-row allocation or hashing).
#[test]
fn sequence_matcher_long_inputs_fast() {
    let base = "In the beginning the quick brown fox, having jumped over the lazy dog, \
                kept running through the fields where the bees were humming. ";
    let a: String = base.repeat(40);
    let b: String = a
        .replace("the ", "a ")
        .replace("fox", "wolf")
        .replace("bees", "birds");
    assert!(a.chars().count() > 5000 && b.chars().count() > 4000);
    let start = std::time::Instant::now();
    for autojunk in [true, false] {
        let m = SequenceMatcher::with_autojunk(a.chars().collect(), b.chars().collect(), autojunk);
        let r = m.ratio();
        assert!(r > 0.0 && r < 1.0);
    }
    assert!(start.elapsed().as_secs_f64() < 5.0, "{:?}", start.elapsed());
}
