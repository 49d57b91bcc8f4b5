//! The claim-level and nugget scoring rules against values recorded from the real RAGChecker
//! 0.1.9 (`ragchecker/computation.py`) and nuggetizer 0.0.5 (`nuggetizer/core/metrics.py`)
//! (`datasets/fixtures/make_claim_fixtures.py`): every per-answer score, and the dataset
//! aggregates (RAGChecker's report numbers, nuggetizer's global means).

use std::path::Path;

use polars_rag::metrics::claim_checks::{
    aggregate_scores, claim_check_scores, parse_verdicts, ClaimCheckCompat, SCORE_NAMES,
};
use polars_rag::metrics::nuggets::{mean_scores, nugget_scores, NuggetCompat};
use serde_json::Value;

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect()
}

fn verdicts(v: &Value) -> Vec<bool> {
    parse_verdicts(&strings(v), ClaimCheckCompat::Ragchecker).unwrap()
}

fn table(v: &Value) -> Vec<Vec<bool>> {
    v.as_array().unwrap().iter().map(verdicts).collect()
}

#[test]
fn claim_check_scores_equal_ragchecker() {
    let fixture = fixture("claim_checks.json");
    let (mut cases, mut aggregates) = (0, 0);
    for (g, group) in fixture["groups"].as_array().unwrap().iter().enumerate() {
        let mut rows = Vec::new();
        for case in group["cases"].as_array().unwrap() {
            let labels = &case["labels"];
            let got = claim_check_scores(
                &verdicts(&labels["answer2response"]),
                &verdicts(&labels["response2answer"]),
                &table(&labels["retrieved2response"]),
                &table(&labels["retrieved2answer"]),
            )
            .unwrap();
            for (name, value) in SCORE_NAMES.iter().zip(got.values()) {
                let want = case["metrics"][*name]
                    .as_f64()
                    .unwrap_or_else(|| panic!("{name}: {}", case["metrics"][*name]));
                assert!(
                    (value - want).abs() <= 1e-12,
                    "group {g} {name}: {value} != {want}\n{labels}"
                );
            }
            rows.push(got);
            cases += 1;
        }
        let report = aggregate_scores(&rows, ClaimCheckCompat::Ragchecker).unwrap();
        for (name, value) in SCORE_NAMES.iter().zip(report.values()) {
            let want = group["aggregate"][*name].as_f64().unwrap();
            assert_eq!(value, want, "group {g} aggregate {name}");
            aggregates += 1;
        }
    }
    assert!(
        cases >= 100 && aggregates >= 400,
        "{cases} cases, {aggregates} aggregates"
    );
}

#[test]
fn nugget_scores_equal_nuggetizer() {
    let fixture = fixture("nugget_scores.json");
    let mut records = 0;
    for (g, group) in fixture["groups"].as_array().unwrap().iter().enumerate() {
        let mut rows = Vec::new();
        for (record, want) in group["records"]
            .as_array()
            .unwrap()
            .iter()
            .zip(group["scores"].as_array().unwrap())
        {
            let got = nugget_scores(
                &strings(&record["importance"]),
                &strings(&record["assignment"]),
                NuggetCompat::Nuggetizer,
            )
            .unwrap();
            for (name, value) in polars_rag::metrics::nuggets::SCORE_NAMES
                .iter()
                .zip(got.values())
            {
                assert_eq!(
                    value,
                    want[*name].as_f64().unwrap(),
                    "group {g} {name}: {record}"
                );
            }
            rows.push(got);
            records += 1;
        }
        let overall = mean_scores(&rows).unwrap();
        for (name, value) in polars_rag::metrics::nuggets::SCORE_NAMES
            .iter()
            .zip(overall.values())
        {
            assert_eq!(
                value,
                group["overall"][*name].as_f64().unwrap(),
                "group {g} overall {name}"
            );
        }
    }
    assert!(records >= 100, "{records} records");
}
