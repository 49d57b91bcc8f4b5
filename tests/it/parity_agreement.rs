//! The judge-agreement figures of `calibrate` against values recorded from the real scipy and
//! scikit-learn (`datasets/fixtures/make_agreement_fixtures.py`): `spearmanr`, `kendalltau`
//! (τ-b) and `cohen_kappa_score` unweighted, linear and quadratic, to 1e-12 (NaN where they
//! give NaN).

use std::path::Path;

use polars_rag::metrics::calibration::{kendall_tau_b, spearman, weighted_kappa, KappaWeights};
use serde_json::Value;

fn fixture() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/judge_agreement.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// The recorded value: `None` for the reference's NaN.
fn recorded(v: &Value) -> Option<f64> {
    match v {
        Value::String(s) if s == "NaN" => None,
        other => Some(other.as_f64().unwrap()),
    }
}

fn assert_close(what: &str, index: usize, got: Option<f64>, want: Option<f64>) {
    match (got, want) {
        (Some(g), Some(w)) => assert!(
            (g - w).abs() <= 1e-12 * w.abs().max(1.0),
            "case {index} {what}: {g} != {w}"
        ),
        (g, w) => assert_eq!(g, w, "case {index} {what}"),
    }
}

#[test]
fn rank_correlations_and_kappas_equal_scipy_and_scikit_learn() {
    let fixture = fixture();
    let cases = fixture["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 150);
    let (mut kappas, mut undefined) = (0, 0);
    for (i, case) in cases.iter().enumerate() {
        let labels = floats(&case["labels"]);
        let judged = floats(&case["judged"]);
        let spearman_want = recorded(&case["spearman"]);
        undefined += spearman_want.is_none() as usize;
        assert_close("spearman", i, spearman(&judged, &labels), spearman_want);
        assert_close(
            "kendall",
            i,
            kendall_tau_b(&judged, &labels),
            recorded(&case["kendall"]),
        );
        for (name, weights) in [
            ("kappa_unweighted", KappaWeights::Unweighted),
            ("kappa_linear", KappaWeights::Linear),
            ("kappa_quadratic", KappaWeights::Quadratic),
        ] {
            if let Some(want) = case.get(name) {
                kappas += 1;
                assert_close(
                    name,
                    i,
                    weighted_kappa(&labels, &judged, weights),
                    recorded(want),
                );
            }
        }
    }
    // The set holds grades and undefined cases, not only continuous scores.
    assert!(
        kappas >= 200 && undefined >= 20,
        "{kappas} kappas, {undefined} undefined"
    );
}
