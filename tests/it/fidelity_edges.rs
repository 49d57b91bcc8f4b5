//! Fidelity edges of the judged faces against their references' recorded outputs:
//! `citation_recall_precision` through the judge engine on ALCE's edge answers and in its
//! QAMPARI reading (`tests/fixtures/alce_citations.json`, recorded from ALCE's own `eval.py`),
//! and `ppi_mean` with a judge that gives every item the same score
//! (`tests/fixtures/ppi_mean.json`, recorded from ppi_python).
#![cfg(feature = "polars")]

use polars::prelude::*;
use polars_rag::columnar::judged::{
    citation_recall_precision, citation_recall_precision_with_questions,
};
use polars_rag::metrics::judged::citation_recall::CitationRecallOptions;
use serde_json::Value;

fn alce_fixture() -> Value {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/alce_citations.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The cases of a fixture key, as columns: answers, passages (`list[struct{title, text}]`) and
/// questions.
fn columns(cases: &[&Value]) -> (Series, Series, Series) {
    let answers = Series::new(
        "answer".into(),
        cases
            .iter()
            .map(|c| c["answer"].as_str().unwrap())
            .collect::<Vec<_>>(),
    );
    let questions = Series::new(
        "question".into(),
        cases
            .iter()
            .map(|c| c["question"].as_str())
            .collect::<Vec<_>>(),
    );
    let passages: Vec<Series> = cases
        .iter()
        .map(|c| {
            let list = c["passages"].as_array().unwrap();
            let field = |name: &str| -> Vec<&str> {
                list.iter().map(|p| p[name].as_str().unwrap()).collect()
            };
            StructChunked::from_series(
                "".into(),
                list.len(),
                [
                    Series::new("title".into(), field("title")),
                    Series::new("text".into(), field("text")),
                ]
                .iter(),
            )
            .unwrap()
            .into_series()
        })
        .collect();
    (answers, Series::new("passages".into(), passages), questions)
}

fn judge_options(server: &crate::fake_judge::FakeJudge, cache: &str) -> CitationRecallOptions {
    let mut options = CitationRecallOptions::default();
    options.judge.endpoint.base_url = Some(server.base_url.clone());
    options.judge.endpoint.model = Some("fake-judge".into());
    options.judge.endpoint.cache = Some(
        crate::common::scratch_dir(cache)
            .to_string_lossy()
            .into_owned(),
    );
    options
}

/// Each row's recall and precision equal ALCE's recorded ones (null where ALCE has NaN).
fn assert_alce_numbers(out: &Series, cases: &[&Value]) {
    let fields = out.struct_().unwrap();
    let errors = fields.field_by_name("judge_error").unwrap();
    assert_eq!(errors.null_count(), errors.len(), "{errors}");
    for name in ["citation_recall", "citation_precision"] {
        let got: Vec<Option<f64>> = fields
            .field_by_name(name)
            .unwrap()
            .f64()
            .unwrap()
            .iter()
            .collect();
        for (case, got) in cases.iter().zip(got) {
            let want = case[name].as_f64();
            let same = match (got, want) {
                (Some(g), Some(w)) => (g - w).abs() < 1e-12,
                (g, w) => g == w,
            };
            assert!(
                same,
                "{name} of {:?}: {got:?}, ALCE {want:?}",
                case["answer"]
            );
        }
    }
}

/// Markers in other scripts' digits, repeated markers and empty answers through the judge:
/// ALCE's numbers, and a row without a sentence null (ALCE leaves it out of its means).
#[test]
fn citation_recall_precision_reads_alce_edges_as_alce() {
    let fixture = alce_fixture();
    let cases: Vec<&Value> = fixture["edge_groups"][2]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    let (answers, passages, _) = columns(&cases);
    let server = crate::fake_judge::FakeJudge::start();
    let options = judge_options(&server, "alce-edges");
    let out = citation_recall_precision(&answers, &passages, &options).unwrap();
    assert_alce_numbers(&out, &cases);
    // `[１]` reads as passage 1: in range, scored, not counted out of range.
    let fields = out.struct_().unwrap();
    let out_of_range = fields.field_by_name("out_of_range").unwrap();
    assert_eq!(out_of_range.u32().unwrap().get(0), Some(0));
    let citations = fields.field_by_name("citations").unwrap();
    // `[3][4][5][4]`: the first three markers are asked about, `[1][1][2][1]` likewise.
    let at = |answer: &str| {
        cases
            .iter()
            .position(|c| c["answer"].as_str() == Some(answer))
            .unwrap()
    };
    assert_eq!(
        citations
            .u32()
            .unwrap()
            .get(at("The bridge opened in 1921 [1][1][2][1].")),
        Some(3)
    );
}

/// ALCE's QAMPARI reading (`qampari = true`, the question column given): each item of the
/// answer's list is checked after the question, with ALCE's numbers; an empty answer scores 0
/// (the question alone, uncited), not null.
#[test]
fn citation_recall_precision_qampari_equals_alce() {
    let fixture = alce_fixture();
    let cases: Vec<&Value> = fixture["qampari_groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["cases"].as_array().unwrap())
        .collect();
    let (answers, passages, questions) = columns(&cases);
    let server = crate::fake_judge::FakeJudge::start();
    let mut options = judge_options(&server, "alce-qampari");
    options.qampari = true;
    let out =
        citation_recall_precision_with_questions(&answers, &passages, Some(&questions), &options)
            .unwrap();
    assert_alce_numbers(&out, &cases);
    assert_eq!(out.null_count(), 0);
    let asked = server.requests();
    let again =
        citation_recall_precision_with_questions(&answers, &passages, Some(&questions), &options)
            .unwrap();
    assert_eq!(server.requests(), asked, "a re-run is served by the cache");
    assert!(again.equals_missing(&out));
}

/// `qampari` without the question column, or the question column without `qampari`, is an
/// error naming the metric and what is missing or unused; a null question is a null row.
#[test]
fn citation_recall_precision_qampari_needs_its_question() {
    let answers = Series::new("answer".into(), ["1921 [1], 1948 [2]", "1921 [1]"]);
    let passages = Series::new("passages".into(), ["The bridge opened in 1921.", "x"]);
    let questions = Series::new("question".into(), [Some("The bridge opened in"), None]);
    let mut options = CitationRecallOptions {
        qampari: true,
        ..CitationRecallOptions::default()
    };
    let e = citation_recall_precision(&answers, &passages, &options).unwrap_err();
    assert!(
        e.to_string()
            .contains("citation_recall_precision: qampari reads each answer's question"),
        "{e}"
    );
    options.qampari = false;
    let e =
        citation_recall_precision_with_questions(&answers, &passages, Some(&questions), &options)
            .unwrap_err();
    assert!(
        e.to_string().contains("'question'") && e.to_string().contains("only with qampari"),
        "{e}"
    );
    let server = crate::fake_judge::FakeJudge::start();
    let mut options = judge_options(&server, "alce-qampari-null");
    options.qampari = true;
    let out =
        citation_recall_precision_with_questions(&answers, &passages, Some(&questions), &options)
            .unwrap();
    let recall = out
        .struct_()
        .unwrap()
        .field_by_name("citation_recall")
        .unwrap();
    // "The bridge opened in 1921" is entailed by passage 1; "... 1948" cites a passage past
    // the last one.
    assert_eq!(recall.f64().unwrap().get(0), Some(0.5));
    assert!(out.is_null().get(1).unwrap(), "{out}");
}

/// `ppi_mean` over columns with a judge that gave every item the same score, λ tuned: with
/// `compat = "ppi_py"` the fields are null and `reason` says it is ppi_python's NaN (its λ is
/// 0/0), as ppi_python gives on the recorded case; the standard mode gives the labels' estimate
/// and interval, λ = 0.
#[test]
fn ppi_mean_of_a_judge_with_one_score_follows_ppi_python_in_compat_mode() {
    use polars_rag::columnar::columns::ppi_mean;
    use polars_rag::metrics::ppi::{PpiCompat, PpiOptions};
    // The fixture's first edge case: labels 1, 0, 1, 1 and a judge scoring 1 everywhere.
    let judged = Series::new("judged".into(), [1.0; 7]);
    let labels = Series::new(
        "labels".into(),
        [Some(1.0), Some(0.0), Some(1.0), Some(1.0), None, None, None],
    );
    let compat = PpiOptions {
        compat: PpiCompat::PpiPy,
        ..PpiOptions::default()
    };
    let out = ppi_mean(&judged, &labels, &compat).unwrap();
    let fields = out.struct_().unwrap();
    let value = |name: &str| fields.field_by_name(name).unwrap().f64().unwrap().get(0);
    assert_eq!(
        (value("estimate"), value("ci_low"), value("lam")),
        (None, None, None)
    );
    let reason = fields.field_by_name("reason").unwrap();
    let reason = reason.str().unwrap().get(0).unwrap().to_string();
    assert!(reason.contains("ppi_python's tuned λ is 0/0"), "{reason}");
    let out = ppi_mean(&judged, &labels, &PpiOptions::default()).unwrap();
    let fields = out.struct_().unwrap();
    let value = |name: &str| fields.field_by_name(name).unwrap().f64().unwrap().get(0);
    assert_eq!(value("lam"), Some(0.0));
    assert_eq!(value("estimate"), Some(0.75));
    assert_eq!(value("ci_low"), value("classical_ci_low"));
    assert_eq!(value("ci_high"), value("classical_ci_high"));
}
