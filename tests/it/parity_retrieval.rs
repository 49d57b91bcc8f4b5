//! Parity with datapizza-ai `metrics.py` on every recorded retrieval case (P/R/F1@k exact and
//! by similarity, the log-rank score, both hybrid scores, the cosine matrix), and with Ragas
//! 0.4.3's id-based context precision and recall through the standard metrics.

use crate::common;

use polars_rag::metrics::retrieval::{cosine, datapizza, score, Judgments, RankedMetric};
use serde_json::Value;

/// Asserts a datapizza result against a recorded case: an `output` (equal within 1e-12, exact
/// sign included) or an `error` (our message names the same exception).
fn check(section: &str, case: &Value, got: polars_rag::Result<f64>) {
    let what = format!("{section}: {}", case["description"]);
    match (&case.get("output"), got.map_err(String::from)) {
        (Some(Value::Number(want)), Ok(got)) => {
            let want = want.as_f64().unwrap();
            assert!(
                (got - want).abs() <= 1e-12 && got.is_sign_negative() == want.is_sign_negative(),
                "{what}: got {got}, want {want}"
            );
        }
        (None, Err(message)) => {
            let error = &case["error"];
            let kind = error["type"].as_str().unwrap();
            let text = error["message"].as_str().unwrap();
            assert!(message.starts_with(kind), "{what}: {message} vs {kind}");
            // datapizza's own messages are reproduced word for word; Python's are annotated.
            let first_words: String = text.chars().take(24).collect();
            assert!(
                message.contains(&first_words),
                "{what}: {message} vs {text}"
            );
        }
        (want, got) => panic!("{what}: got {got:?}, want {want:?} / {}", case["error"]),
    }
}

fn texts(v: &Value) -> Vec<String> {
    common::strings(v)
}

fn vectors(v: &Value) -> Vec<Vec<f64>> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|row| {
            row.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect()
        })
        .collect()
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn slices(v: &[Vec<f64>]) -> Vec<&[f64]> {
    v.iter().map(Vec::as_slice).collect()
}

type ExactFn = fn(&[&str], &[&str], i64) -> polars_rag::Result<f64>;

#[test]
fn exact_precision_recall_f1() {
    let sections: [(&str, ExactFn); 3] = [
        (
            "datapizza.precision_at_k_exact",
            datapizza::precision_at_k_exact,
        ),
        ("datapizza.recall_at_k_exact", datapizza::recall_at_k_exact),
        ("datapizza.f1_at_k_exact", datapizza::f1_at_k_exact),
    ];
    let mut compared = 0;
    for (name, f) in sections {
        for case in common::section(name) {
            let input = &case["input"];
            let r = texts(&input["retrieved_chunks"]);
            let g = texts(&input["ground_truth_chunks"]);
            let k = input["k"].as_i64().unwrap();
            check(name, &case, f(&refs(&r), &refs(&g), k));
            compared += 1;
        }
    }
    assert_eq!(compared, 3 * 19);
}

type SimilarityFn = fn(&[&[f64]], &[&[f64]], i64, f64) -> polars_rag::Result<f64>;

#[test]
fn similarity_precision_recall_f1() {
    let sections: [(&str, SimilarityFn); 3] = [
        (
            "datapizza.precision_at_k_similarity",
            datapizza::precision_at_k_similarity,
        ),
        (
            "datapizza.recall_at_k_similarity",
            datapizza::recall_at_k_similarity,
        ),
        (
            "datapizza.f1_at_k_similarity",
            datapizza::f1_at_k_similarity,
        ),
    ];
    let mut compared = 0;
    for (name, f) in sections {
        for case in common::section(name) {
            let input = &case["input"];
            let r = vectors(&input["retrieved_embeddings"]);
            let g = vectors(&input["ground_truth_embeddings"]);
            let k = input["k"].as_i64().unwrap();
            let threshold = input["similarity_threshold"].as_f64().unwrap_or(0.8);
            check(name, &case, f(&slices(&r), &slices(&g), k, threshold));
            compared += 1;
        }
    }
    assert_eq!(compared, 3 * 18);
}

#[test]
fn log_rank_and_hybrid_scores() {
    for case in common::section("datapizza.log_rank_score") {
        let input = &case["input"];
        let got = datapizza::log_rank_score(
            input["rank"].as_i64().unwrap(),
            input["n"].as_i64().unwrap(),
            input["gamma"].as_f64().unwrap(),
        );
        check("datapizza.log_rank_score", &case, got);
    }
    let name = "datapizza.hybrid_log_rank_score_exact";
    let cases = common::section(name);
    assert_eq!(cases.len(), 19);
    for case in &cases {
        let input = &case["input"];
        let r = texts(&input["retrieved_chunks"]);
        let g = texts(&input["ground_truth_chunks"]);
        let gamma = input["gamma"].as_f64().unwrap_or(1.0);
        let alpha = input["alpha"].as_f64().unwrap_or(0.5);
        check(
            name,
            case,
            datapizza::hybrid_log_rank_exact(&refs(&r), &refs(&g), gamma, alpha),
        );
    }
    let name = "datapizza.hybrid_log_rank_score_similarity";
    let cases = common::section(name);
    assert_eq!(cases.len(), 17);
    for case in &cases {
        let input = &case["input"];
        let r = vectors(&input["retrieved_embeddings"]);
        let g = vectors(&input["ground_truth_embeddings"]);
        let threshold = input["similarity_threshold"].as_f64().unwrap_or(0.8);
        let gamma = input["gamma"].as_f64().unwrap_or(1.0);
        let alpha = input["alpha"].as_f64().unwrap_or(0.5);
        let got = datapizza::hybrid_log_rank_similarity(
            &slices(&r),
            &slices(&g),
            threshold,
            gamma,
            alpha,
        );
        check(name, case, got);
    }
}

#[test]
fn cosine_matrices_match_scikit_learn() {
    for case in common::section("datapizza._cosine_matrices(sklearn)") {
        let r = vectors(&case["retrieved"]);
        let g = vectors(&case["ground_truth"]);
        let want = vectors(&case["cosine_matrix"]);
        for (i, row) in r.iter().enumerate() {
            for (j, col) in g.iter().enumerate() {
                let got = datapizza::cosine_matrix(&[row], &[col]).unwrap()[0][0];
                // The standard metrics' cosine agrees within rounding.
                assert!((cosine(row, col) - got).abs() <= 1e-15);
                assert!(
                    (got - want[i][j]).abs() <= 1e-15,
                    "{}: {got} vs {}",
                    case["description"],
                    want[i][j]
                );
            }
        }
    }
}

/// The standard metrics agree with datapizza wherever datapizza's definitions are the standard
/// ones: no duplicates, a positive k, non-empty ground truth.
#[test]
fn standard_metrics_equal_datapizza_on_its_regular_cases() {
    let mut compared = 0;
    for (name, metric) in [
        ("datapizza.precision_at_k_exact", RankedMetric::PrecisionAtK),
        ("datapizza.recall_at_k_exact", RankedMetric::RecallAtK),
        ("datapizza.f1_at_k_exact", RankedMetric::F1AtK),
    ] {
        for case in common::section(name) {
            let input = &case["input"];
            let r = texts(&input["retrieved_chunks"]);
            let g = texts(&input["ground_truth_chunks"]);
            let k = input["k"].as_i64().unwrap();
            let dupes = |v: &[String]| v.iter().enumerate().any(|(i, x)| v[..i].contains(x));
            if k < 1 || g.is_empty() || dupes(&r) || dupes(&g) {
                continue;
            }
            let mut j = Judgments::default();
            j.judge_keys(&r, &g);
            let got = score(metric, &j, Some(k as usize), &Default::default()).unwrap();
            let want = case["output"].as_f64().unwrap();
            assert!(
                (got - want).abs() <= 1e-12,
                "{name} {}: {got} vs {want}",
                case["description"]
            );
            compared += 1;
        }
    }
    assert!(compared >= 30, "{compared}");
}

/// Ragas' `IDBasedContextPrecision` is |set(retrieved) ∩ set(reference)| / |set(retrieved)| and
/// `IDBasedContextRecall` the same over |set(reference)|: precision and recall at k = the number
/// of distinct retrieved ids. Ragas gives NaN where the denominator is 0; polars-rag gives null
/// for empty ground truth and 0 for an empty retrieved list.
#[test]
fn ragas_id_based_context_precision_and_recall() {
    let mut compared = 0;
    for case in common::section("ragas.id_based_context_precision_recall") {
        let input = &case["input"];
        let as_text = |v: &Value| -> Vec<String> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|x| match x {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect()
        };
        let r = as_text(&input["retrieved_context_ids"]);
        let g = as_text(&input["reference_context_ids"]);
        let mut j = Judgments::default();
        j.judge_keys(&r, &g);
        let distinct_retrieved = j.retrieved_len()
            - r.iter()
                .enumerate()
                .filter(|(i, x)| r[..*i].contains(x))
                .count();
        let outputs = &case["outputs"];
        let want_p = &outputs["IDBasedContextPrecision"]["output"];
        let want_r = &outputs["IDBasedContextRecall"]["output"];
        // Precision over the distinct retrieved ids: duplicates removed before ranking.
        let mut dedup: Vec<String> = Vec::new();
        for x in &r {
            if !dedup.contains(x) {
                dedup.push(x.clone());
            }
        }
        j.judge_keys(&dedup, &g);
        let k = Some(distinct_retrieved.max(1));
        let p = score(RankedMetric::PrecisionAtK, &j, k, &Default::default());
        let rec = score(RankedMetric::RecallAtK, &j, k, &Default::default());
        if g.is_empty() {
            assert_eq!((p, rec), (None, None));
        } else {
            if want_p.as_str() != Some("NaN") {
                let want = want_p.as_f64().unwrap();
                assert!(
                    (p.unwrap() - want).abs() <= 1e-12,
                    "{}: {p:?} vs {want}",
                    case["description"]
                );
            } else {
                assert_eq!(p, Some(0.0), "empty retrieved list");
            }
            let want = want_r.as_f64().unwrap();
            assert!(
                (rec.unwrap() - want).abs() <= 1e-12,
                "{}: {rec:?} vs {want}",
                case["description"]
            );
        }
        compared += 1;
    }
    assert_eq!(compared, 15);
}

/// A Ragas output: a number, or `None` for NaN and for an error (polars-rag's null).
fn ragas_output(v: &Value) -> Option<f64> {
    v.get("output").and_then(Value::as_f64)
}

fn assert_ragas(what: &str, got: Option<f64>, want: Option<f64>) {
    match (got, want) {
        (Some(g), Some(w)) => assert!((g - w).abs() <= 1e-15, "{what}: {g} vs {w}"),
        (g, w) => assert_eq!(g, w, "{what}"),
    }
}

/// `compat = "ragas"`: `IDBasedContextPrecision` / `IDBasedContextRecall` exactly, NaN as null.
#[test]
fn ragas_mode_id_based_context_precision_and_recall() {
    use polars_rag::metrics::retrieval::ragas;
    let mut compared = 0;
    for case in common::section("ragas.id_based_context_precision_recall") {
        // Ragas compares ids through str(): 1 and "1" are the same id.
        let as_text = |v: &Value| -> Vec<String> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
                .collect()
        };
        let r = as_text(&case["input"]["retrieved_context_ids"]);
        let g = as_text(&case["input"]["reference_context_ids"]);
        let what = case["description"].to_string();
        let outputs = &case["outputs"];
        assert_ragas(
            &what,
            ragas::id_precision(&refs(&r), &refs(&g)),
            ragas_output(&outputs["IDBasedContextPrecision"]),
        );
        assert_ragas(
            &what,
            ragas::id_recall(&refs(&r), &refs(&g)),
            ragas_output(&outputs["IDBasedContextRecall"]),
        );
        compared += 1;
    }
    assert_eq!(compared, 15);
}

/// `compat = "ragas"` with `relevance = "similarity"`: `NonLLMContextPrecisionWithReference` and
/// `NonLLMContextRecall` (Levenshtein, threshold 0.5), errors and NaN as null.
#[test]
fn ragas_mode_non_llm_context_precision_and_recall() {
    use polars_rag::metrics::retrieval::ragas;
    use polars_rag::metrics::similarity::StringDistance;
    let mut compared = 0;
    for case in common::section("ragas.non_llm_context_precision_recall") {
        let r = texts(&case["input"]["retrieved_contexts"]);
        let g = texts(&case["input"]["reference_contexts"]);
        let what = case["description"].to_string();
        let outputs = &case["outputs"];
        let d = StringDistance::Levenshtein;
        assert_ragas(
            &what,
            ragas::context_precision_similarity(&refs(&r), &refs(&g), d, 0.5),
            ragas_output(&outputs["NonLLMContextPrecisionWithReference"]),
        );
        assert_ragas(
            &what,
            ragas::context_recall_similarity(&refs(&r), &refs(&g), d, 0.5),
            ragas_output(&outputs["NonLLMContextRecall"]),
        );
        compared += 1;
    }
    assert_eq!(compared, 15);
}

/// The datapizza mode's cosine matrix equals scikit-learn's to the bit on recorded matrices
/// (numpy's row norms; OpenBLAS's GEMM for 4 × 8 of dimension 2 to 520, its ddot for 1 × 1 and
/// its dgemv for 1 × n and m × 1, of dimension 1 to 3,072), so a similarity at the threshold is
/// decided as datapizza decides it.
fn check_sklearn_cosine(file: &str, kernels: datapizza::BlasKernels) -> (usize, usize) {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/reference-vectors")
            .join(file),
    )
    .unwrap();
    let file: Value = serde_json::from_str(&text).unwrap();
    let hex = |v: &Value| -> f64 {
        // float.hex(): [-]0x1.<hex>p<exp>, or 0x0.0p+0.
        let s = v.as_str().unwrap();
        let (negative, s) = s.strip_prefix('-').map_or((false, s), |r| (true, r));
        let s = s.strip_prefix("0x").unwrap();
        let (mantissa, exp) = s.split_once('p').unwrap();
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let mut value = u64::from_str_radix(int, 16).unwrap() as f64;
        for (i, c) in frac.chars().enumerate() {
            value += c.to_digit(16).unwrap() as f64 / 16f64.powi(i as i32 + 1);
        }
        let value = value * 2f64.powi(exp.parse().unwrap());
        if negative {
            -value
        } else {
            value
        }
    };
    let mut compared = 0;
    let mut shapes = std::collections::BTreeSet::new();
    for case in file["cases"].as_array().unwrap() {
        let r = vectors(&case["retrieved"]);
        let g = vectors(&case["ground_truth"]);
        let got = datapizza::cosine_matrix_with(&slices(&r), &slices(&g), kernels).unwrap();
        for (i, row) in case["cosine_matrix"].as_array().unwrap().iter().enumerate() {
            for (j, want) in row.as_array().unwrap().iter().enumerate() {
                let want = hex(want);
                assert_eq!(
                    got[i][j].to_bits(),
                    want.to_bits(),
                    "{file}: dim {} [{i}][{j}]: {} vs {want}",
                    case["dim"],
                    got[i][j]
                );
                compared += 1;
            }
        }
        // At a threshold equal to the largest recorded similarity, precision over the whole
        // matrix (the recorded shape, so the same BLAS kernel) counts exactly the rows that
        // reach it (>=).
        let recorded: Vec<Vec<f64>> = case["cosine_matrix"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row.as_array().unwrap().iter().map(hex).collect())
            .collect();
        let threshold = recorded.iter().flatten().copied().fold(f64::MIN, f64::max);
        let reaching = recorded
            .iter()
            .filter(|row| row.iter().any(|&v| v >= threshold))
            .count();
        // The metrics use this machine's kernel set.
        if kernels == datapizza::BlasKernels::detect() {
            let k = r.len() as i64;
            let p = datapizza::precision_at_k_similarity(&slices(&r), &slices(&g), k, threshold)
                .unwrap();
            assert_eq!(p, reaching as f64 / k as f64, "dim {}", case["dim"]);
        }
        shapes.insert((r.len().min(2), g.len().min(2)));
    }
    (compared, shapes.len())
}

/// The datapizza mode's cosine matrix equals scikit-learn's to the bit, for both kernel sets
/// numpy's OpenBLAS picks on x86-64: matrices recorded on an AVX-512 machine (GEMM's small and
/// blocked kernels, ddot for 1 × 1, dgemv for 1 × n and m × 1; dimensions 1 to 3,072) and 4 × 8
/// matrices of dimension 2 to 520 recorded on an AVX2 machine.
#[test]
fn datapizza_cosine_matrix_is_scikit_learns_to_the_bit() {
    let (compared, shapes) =
        check_sklearn_cosine("sklearn-cosine.json", datapizza::BlasKernels::SkylakeX);
    // GEMM (4 × 8), ddot (1 × 1) and dgemv (1 × n, m × 1) were all exercised.
    assert_eq!(shapes, 4);
    assert!(compared > 600, "{compared}");
    let (compared, _) = check_sklearn_cosine(
        "sklearn-cosine-haswell.json",
        datapizza::BlasKernels::Haswell,
    );
    assert_eq!(compared, 10 * 32);
}
