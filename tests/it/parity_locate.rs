//! `locate_quotes` with `compat = "soak"` against soak 9c164e87's own outputs
//! (tests/fixtures/soak_quotes_9c164e87.json, a copy of the reference vectors): every helper's
//! unit cases, the windows and per-window BM25 scores, and the six recorded runs field by field,
//! with their statistics, melted CSV and workbook row order.

use polars_rag::metrics::locate::align::{
    align_fuzzy_soak, align_sliding_bm25, snap_to_sentences, snap_to_words, touches_edge,
    trim_soak, windows, Trim,
};
use polars_rag::metrics::locate::embed::{fill_cosine, HashEmbedder, TextEmbedder};
use polars_rag::metrics::locate::stats::{
    figures_of, least_confident_first, melted_csv, quote_stats,
};
use polars_rag::metrics::locate::{
    ellipsis_parts, has_ellipsis, locate_quotes, LocateOptions, QuoteIndex, QuoteTokenizer,
};
use serde_json::Value;

use crate::common;

fn chars(v: &Value) -> Vec<char> {
    v.as_str().unwrap().chars().collect()
}

fn nltk(s: &str) -> Vec<String> {
    QuoteTokenizer::Nltk.tokenize(s)
}

fn opt_usize(v: &Value) -> Option<usize> {
    v.as_u64().map(|x| x as usize)
}

#[test]
fn make_windows_units() {
    let v = common::soak_vectors();
    for case in v["units"]["make_windows"].as_array().unwrap() {
        let text = chars(&case["text"]);
        let quotes: Vec<&str> = case["extracted_sentences"]
            .as_array()
            .map(|a| a.iter().map(|q| q.as_str().unwrap()).collect())
            .unwrap_or_default();
        let opts = LocateOptions {
            window_size: opt_usize(&case["window_size"]),
            overlap: opt_usize(&case["overlap"]),
            ..LocateOptions::soak()
        };
        let (size, overlap) = opts.window_geometry(&quotes).unwrap();
        let got: Vec<(String, usize, usize)> = windows(text.len(), size, overlap)
            .iter()
            .map(|w| (text[w.start..w.end].iter().collect(), w.start, w.end))
            .collect();
        let want: Vec<(String, usize, usize)> = case["windows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| {
                (
                    w[0].as_str().unwrap().to_string(),
                    w[1].as_u64().unwrap() as usize,
                    w[2].as_u64().unwrap() as usize,
                )
            })
            .collect();
        assert_eq!(got, want, "make_windows {case}");
    }
}

#[test]
fn snap_truncation_and_ellipsis_units() {
    let v = common::soak_vectors();
    for case in v["units"]["snap_to_boundaries"].as_array().unwrap() {
        let text = chars(&case["text"]);
        let (s, e) = (
            opt_usize(&case["start"]).unwrap(),
            opt_usize(&case["end"]).unwrap(),
        );
        let got = match case["snap_to"].as_str().unwrap() {
            "word" => snap_to_words(&text, s, e),
            _ => snap_to_sentences(&text, s, e),
        };
        let want = (
            opt_usize(&case["result"][0]).unwrap(),
            opt_usize(&case["result"][1]).unwrap(),
        );
        assert_eq!(got, want, "snap {case}");
    }
    for case in v["units"]["is_match_truncated"].as_array().unwrap() {
        let got = touches_edge(
            opt_usize(&case["match_result"]["start_char"]).unwrap(),
            opt_usize(&case["match_result"]["end_char"]).unwrap(),
            opt_usize(&case["span_len"]).unwrap(),
            opt_usize(&case["boundary_threshold"]).unwrap(),
        );
        assert_eq!(got, case["result"].as_bool().unwrap(), "truncated {case}");
    }
    for case in v["units"]["ellipsis_split"].as_array().unwrap() {
        let quote = case["quote"].as_str().unwrap();
        assert_eq!(
            has_ellipsis(quote),
            case["has_ellipsis"].as_bool().unwrap(),
            "{case}"
        );
        if has_ellipsis(quote) {
            let want: Vec<&str> = case["parts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap())
                .collect();
            assert_eq!(ellipsis_parts(quote), want, "{case}");
        }
    }
}

#[test]
fn alignment_units() {
    let v = common::soak_vectors();
    for case in v["units"]["find_alignment_fuzzy"].as_array().unwrap() {
        let span = chars(&case["span"]);
        let a = align_fuzzy_soak(
            &chars(&case["quote"]),
            &span,
            opt_usize(&case["context_pad"]).unwrap(),
        );
        let r = &case["result"];
        assert_eq!(a.start, opt_usize(&r["start_char"]).unwrap(), "{case}");
        assert_eq!(a.end, opt_usize(&r["end_char"]).unwrap(), "{case}");
        assert_eq!(a.ratio, r["match_ratio"].as_f64().unwrap(), "{case}");
        let text: String = span[a.start..a.end].iter().collect();
        assert_eq!(text, r["matched_text"].as_str().unwrap(), "{case}");
    }
    for case in v["units"]["find_alignment_sliding_bm25"]
        .as_array()
        .unwrap()
    {
        let (offset, score) =
            align_sliding_bm25(&chars(&case["quote"]), &chars(&case["span"]), &nltk);
        assert_eq!(offset, opt_usize(&case["char_offset"]).unwrap(), "{case}");
        assert_eq!(score, case["score"].as_f64().unwrap(), "{case}");
    }
    for case in v["units"]["trim_span_to_quote"].as_array().unwrap() {
        let method = match case["method"].as_str().unwrap() {
            "fuzzy" => Trim::Fuzzy,
            "sliding_bm25" => Trim::SlidingBm25,
            "hybrid" => Trim::Hybrid,
            _ => Trim::Off,
        };
        let span = chars(&case["span"]);
        let min = case["min_fuzzy_ratio"].as_f64().unwrap();
        let a = trim_soak(&chars(&case["quote"]), &span, method, min, 30, &nltk);
        let r = &case["result"];
        assert_eq!(
            (a.start, a.end),
            (
                opt_usize(&r["start_char"]).unwrap(),
                opt_usize(&r["end_char"]).unwrap()
            ),
            "{case}"
        );
        assert_eq!(a.ratio, r["match_ratio"].as_f64().unwrap(), "{case}");
        let text: String = span[a.start..a.end].iter().collect();
        assert_eq!(text, r["matched_text"].as_str().unwrap(), "{case}");
    }
}

#[test]
fn hash_embedding_units() {
    let v = common::soak_vectors();
    let e = HashEmbedder { dim: 16 };
    for (text, want) in v["units"]["dummy_embedding_examples"].as_object().unwrap() {
        let want: Vec<f64> = want
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert_eq!(e.embed(&[text.as_str()]).unwrap()[0], want, "{text}");
    }
}

fn scores_of(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

#[test]
fn windows_and_bm25_scores() {
    let v = common::soak_vectors();
    let docs = common::soak_documents(&v);
    let docs = common::doc_pairs(&docs);
    let quotes = common::soak_quotes(&v);
    let quotes: Vec<&str> = quotes.iter().map(|s| s.as_str()).collect();
    let index = QuoteIndex::new(&docs, &LocateOptions::soak(), &quotes).unwrap();
    assert_eq!(index.joined_text(), v["corpus"]["text"].as_str().unwrap());
    let want = v["windowing"]["windows"].as_array().unwrap();
    assert_eq!(index.windows().len(), want.len());
    for (w, want) in index.windows().iter().zip(want) {
        assert_eq!(
            (w.start, w.end),
            (opt_usize(&want[1]).unwrap(), opt_usize(&want[2]).unwrap())
        );
    }
    for rec in v["bm25_diagnostics"]["per_quote"].as_array().unwrap() {
        if rec["has_ellipsis"].as_bool().unwrap() {
            for part in ["head", "tail"] {
                let p = &rec[part];
                assert_eq!(
                    index.window_scores(p["text"].as_str().unwrap()),
                    scores_of(&p["scores"]),
                    "{rec}"
                );
            }
        } else {
            assert_eq!(
                index.window_scores(rec["quote"].as_str().unwrap()),
                scores_of(&rec["scores"]),
                "{rec}"
            );
        }
    }
}

/// A capital sigma lowercases to `ς` or `σ` depending on its neighbours, so a window that cuts
/// through a word holding one must be lowercased on its own, as soak lowercases each window;
/// the other windows are slices of the text lowercased once. Either way the index is the one
/// built from each window's own lowercased text.
#[test]
fn windows_with_a_capital_sigma_are_lowercased_on_their_own() {
    let greek: String = (0..40)
        .map(|i| format!("ΚΑΣΣΑΝΔΡΑ{} ΟΔΟΣ ", "Σ".repeat(i % 3)))
        .collect();
    let body = greek + &"Plain ascii text without any Greek letters at all, ".repeat(20);
    let docs = [("greek.txt", body.as_str())];
    let quotes = ["a quote of about forty characters long....."];
    let opts = LocateOptions::soak();
    let index = QuoteIndex::new(&docs, &opts, &quotes).unwrap();
    let text: Vec<char> = index.joined_text().chars().collect();
    let per_window: Vec<Vec<String>> = index
        .windows()
        .iter()
        .map(|w| {
            nltk(
                &text[w.start..w.end]
                    .iter()
                    .collect::<String>()
                    .to_lowercase(),
            )
        })
        .collect();
    // Some window cuts a word right after an inner sigma, which then becomes final.
    let lowered_once: Vec<char> = index.joined_text().to_lowercase().chars().collect();
    assert!(index.windows().iter().any(|w| {
        let alone: String = text[w.start..w.end]
            .iter()
            .collect::<String>()
            .to_lowercase();
        alone != lowered_once[w.start..w.end].iter().collect::<String>()
    }));
    let want = polars_rag::text::bm25::Bm25Okapi::new(&per_window, opts.k1, opts.b, 0.25);
    assert_eq!(index.bm25(), &want);
}

fn options_of(params: &Value) -> LocateOptions {
    let trim = if params["trim_spans"].as_bool() == Some(false) {
        Trim::Off
    } else {
        match params["trim_method"].as_str().unwrap_or("fuzzy") {
            "sliding_bm25" => Trim::SlidingBm25,
            "hybrid" => Trim::Hybrid,
            _ => Trim::Fuzzy,
        }
    };
    LocateOptions {
        k1: params["bm25_k1"].as_f64().unwrap(),
        b: params["bm25_b"].as_f64().unwrap(),
        trim,
        min_match_ratio: params["min_fuzzy_ratio"].as_f64().unwrap(),
        expand_neighbors: opt_usize(&params["expand_window_neighbors"]).unwrap(),
        context_chars: opt_usize(&params["context_chars"]).unwrap(),
        ellipsis_max_gap: opt_usize(&params["ellipsis_max_gap"]),
        ..LocateOptions::soak()
    }
}

#[test]
fn recorded_runs() {
    let v = common::soak_vectors();
    let docs = common::soak_documents(&v);
    let docs = common::doc_pairs(&docs);
    let quotes = common::soak_quotes(&v);
    let quotes: Vec<&str> = quotes.iter().map(|s| s.as_str()).collect();
    let runs = v["runs_9c164e87"].as_object().unwrap();
    assert_eq!(runs.len(), 6);
    for (name, run) in runs {
        let opts = options_of(&run["params"]);
        let mut got = locate_quotes(&quotes, &docs, &opts).unwrap();
        fill_cosine(&mut got, &quotes, &HashEmbedder { dim: 16 }).unwrap();
        let want = run["results"].as_array().unwrap();
        assert_eq!(got.len(), want.len());
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            let ctx = format!("run {name}, quote {i}");
            assert_eq!(
                g.file.as_deref(),
                w["source_doc"].as_str(),
                "{ctx}: source_doc"
            );
            assert_eq!(
                g.span_text,
                w["span_text"].as_str().unwrap(),
                "{ctx}: span_text"
            );
            assert_eq!(
                g.context,
                w["context_window"].as_str().unwrap(),
                "{ctx}: context"
            );
            assert_eq!(
                g.bm25_score,
                w["bm25_score"].as_f64().unwrap(),
                "{ctx}: bm25_score"
            );
            assert_eq!(
                g.bm25_ratio,
                w["bm25_ratio"].as_f64().unwrap(),
                "{ctx}: bm25_ratio"
            );
            assert_eq!(
                g.global_start,
                opt_usize(&w["global_start"]).unwrap(),
                "{ctx}: global_start"
            );
            assert_eq!(
                g.global_end,
                opt_usize(&w["global_end"]).unwrap(),
                "{ctx}: global_end"
            );
            assert_eq!(
                g.match_ratio,
                w["match_ratio"].as_f64(),
                "{ctx}: match_ratio"
            );
            let cos = w["cosine_similarity"].as_f64().unwrap();
            assert!(
                (g.cosine.unwrap() - cos).abs() <= 1e-15,
                "{ctx}: cosine {:?} vs {cos}",
                g.cosine
            );
        }
        let stats = quote_stats(&quotes, &got, &opts);
        let want_stats = run["stats"].as_object().unwrap();
        // The JSON object's key order is not kept here; the melted CSV below checks the order.
        let mut names: Vec<&str> = stats.iter().map(|(n, _)| *n).collect();
        names.sort_unstable();
        let want_names: Vec<&str> = want_stats.keys().map(|k| k.as_str()).collect();
        assert_eq!(names, want_names, "run {name}: statistics");
        for (n, value) in &stats {
            let w = want_stats[*n].as_f64();
            let g = value.unwrap();
            // Cosines come from the stand-in embedding (summed in another order than numpy's
            // dot product), so they are compared to 1e-15; everything else is exact.
            if n.contains("cosine") {
                assert!(
                    (g - w.unwrap()).abs() <= 1e-15,
                    "run {name}: {n} {g} vs {w:?}"
                );
            } else {
                assert_eq!(Some(g), w, "run {name}: {n}");
            }
        }
        // The melted CSV: same lines in the same order; the stand-in embedding's cosines may
        // differ in the last bit (numpy's dot product sums in another order).
        let csv = melted_csv(&stats);
        let want_csv = run["stats_csv_melted"].as_str().unwrap();
        assert_eq!(
            csv.lines().count(),
            want_csv.lines().count(),
            "run {name}: melted CSV"
        );
        for (g, w) in csv.lines().zip(want_csv.lines()) {
            if g.contains("cosine,") {
                let (gn, gv) = g.split_once(',').unwrap();
                let (wn, wv) = w.split_once(',').unwrap();
                assert_eq!(gn, wn, "run {name}: melted CSV");
                let (gv, wv): (f64, f64) = (gv.parse().unwrap(), wv.parse().unwrap());
                assert!((gv - wv).abs() <= 1e-15, "run {name}: {g} vs {w}");
            } else {
                assert_eq!(g, w, "run {name}: melted CSV");
            }
        }
        let order = least_confident_first(&figures_of(&quotes, &got));
        let want_order: Vec<usize> = run["excel_row_order_by_input_index"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(order, want_order, "run {name}: workbook order");
    }
}
