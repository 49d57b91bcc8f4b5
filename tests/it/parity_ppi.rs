//! `ppi_mean` against values recorded from the real ppi_python 0.2.3
//! (`datasets/fixtures/make_ppi_fixtures.py`): point estimates, intervals and the tuned λ of
//! `ppi_mean_pointestimate`, `ppi_mean_ci` and `classical_mean_ci`, to 1e-9 relative.

use std::path::Path;

use polars_rag::metrics::ppi::{ppi_mean, PpiCompat, PpiOptions};
use polars_rag::metrics::stats::Alternative;
use serde_json::Value;

fn fixture() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ppi_mean.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn number(v: &Value) -> f64 {
    match v {
        Value::String(s) if s == "inf" => f64::INFINITY,
        Value::String(s) if s == "-inf" => f64::NEG_INFINITY,
        Value::String(s) if s == "NaN" => f64::NAN,
        other => other.as_f64().unwrap(),
    }
}

fn close(got: f64, want: f64) -> bool {
    if want.is_infinite() {
        return got == want;
    }
    (got - want).abs() <= 1e-9 * want.abs().max(1.0)
}

struct Case {
    labelled: Vec<(f64, f64)>,
    unlabelled: Vec<f64>,
    options: PpiOptions,
}

fn case(record: &Value, compat: PpiCompat) -> Case {
    let labels = floats(&record["labels"]);
    let judged = floats(&record["judged"]);
    Case {
        labelled: labels.into_iter().zip(judged).collect(),
        unlabelled: floats(&record["judged_unlabelled"]),
        options: PpiOptions {
            alpha: record["alpha"].as_f64().unwrap(),
            alternative: record["alternative"].as_str().unwrap().parse().unwrap(),
            lam: record["lam"].as_f64(),
            compat,
        },
    }
}

#[test]
fn every_recorded_case_is_reproduced_in_compat_mode() {
    let fixture = fixture();
    let cases = fixture["cases"].as_array().unwrap();
    assert!(
        cases.len() >= 100,
        "the fixture holds {} cases",
        cases.len()
    );
    for (i, record) in cases.iter().enumerate() {
        let c = case(record, PpiCompat::PpiPy);
        let want = &record["output"];
        let got = ppi_mean(&c.labelled, &c.unlabelled, &c.options)
            .unwrap_or_else(|e| panic!("case {i}: {e}"));
        for (name, value) in [
            ("estimate", got.estimate),
            ("ci_low", got.ci_low),
            ("ci_high", got.ci_high),
            ("lam", got.lam),
            ("classical_estimate", got.classical_estimate),
            ("classical_ci_low", got.classical_ci_low),
            ("classical_ci_high", got.classical_ci_high),
        ] {
            let expected = number(&want[name]);
            assert!(
                close(value, expected),
                "case {i} {name}: got {value}, ppi_python {expected}"
            );
        }
        assert_eq!(got.n_labelled + got.n_unlabelled, {
            record["labels"].as_array().unwrap().len() + c.unlabelled.len()
        });
    }
}

/// The default honours `alternative` when λ is tuned, where ppi_python gives a two-sided
/// interval: the same estimate and λ, and a one-sided interval whose finite end is nearer.
#[test]
fn the_default_mode_keeps_a_one_sided_interval_one_sided() {
    let fixture = fixture();
    let mut checked = 0;
    for record in fixture["cases"].as_array().unwrap() {
        let c = case(record, PpiCompat::Standard);
        if c.options.lam.is_some() || c.options.alternative == Alternative::TwoSided {
            continue;
        }
        let compat = ppi_mean(
            &c.labelled,
            &c.unlabelled,
            &PpiOptions {
                compat: PpiCompat::PpiPy,
                ..c.options.clone()
            },
        )
        .unwrap();
        let standard = ppi_mean(&c.labelled, &c.unlabelled, &c.options).unwrap();
        assert_eq!(standard.estimate, compat.estimate);
        assert_eq!(standard.lam, compat.lam);
        match c.options.alternative {
            Alternative::Greater => {
                assert_eq!(standard.ci_high, f64::INFINITY);
                assert!(standard.ci_low > compat.ci_low);
            }
            Alternative::Less => {
                assert_eq!(standard.ci_low, f64::NEG_INFINITY);
                assert!(standard.ci_high < compat.ci_high);
            }
            Alternative::TwoSided => unreachable!(),
        }
        checked += 1;
    }
    assert!(checked > 5, "only {checked} one-sided tuned cases");
}

/// Where ppi_python divides by zero and returns NaN, an error says why.
#[test]
fn the_reference_nans_are_errors_that_say_why() {
    let fixture = fixture();
    let edges = fixture["edge_cases"].as_array().unwrap();
    let reasons = ["same score", "without a label"];
    for (record, reason) in edges.iter().zip(reasons) {
        assert!(number(&record["output"]["estimate"]).is_nan(), "{record}");
        let c = case(record, PpiCompat::PpiPy);
        let e = ppi_mean(&c.labelled, &c.unlabelled, &c.options).unwrap_err();
        assert!(e.to_string().contains(reason), "{e}");
    }
    let e = ppi_mean(&[], &[1.0], &PpiOptions::default()).unwrap_err();
    assert!(e.to_string().contains("no labelled item"), "{e}");
}

/// A judge that gave every item the same score, λ tuned: ppi_python's λ is 0/0 and its
/// estimate and interval NaN, which compat mode gives as an error (null with a reason), every
/// time. Where ppi_python's sums leave a rounding residue it returns a number instead, with an
/// arbitrary λ that changes nothing but λ itself: its estimate is the labels' mean. The standard
/// mode weighs such a judge down to nothing (λ = 0): the labels' estimate and interval.
#[test]
fn a_judge_with_one_score_is_ppi_pythons_nan_in_compat_mode() {
    let fixture = fixture();
    let records = fixture["constant_judge_cases"].as_array().unwrap();
    let mut nans = 0;
    for (i, record) in records.iter().enumerate() {
        let compat = case(record, PpiCompat::PpiPy);
        let e = ppi_mean(&compat.labelled, &compat.unlabelled, &compat.options).unwrap_err();
        assert!(
            e.to_string().contains("same score") && e.to_string().contains("NaN"),
            "case {i}: {e}"
        );
        let want = &record["output"];
        if number(&want["estimate"]).is_nan() {
            assert!(number(&want["ci_low"]).is_nan() && number(&want["ci_high"]).is_nan());
            nans += 1;
        } else {
            let (estimate, classical) = (
                number(&want["estimate"]),
                number(&want["classical_estimate"]),
            );
            assert!(
                close(estimate, classical),
                "case {i}: a residue's λ moved the estimate"
            );
        }
        let standard = case(record, PpiCompat::Standard);
        let got = ppi_mean(&standard.labelled, &standard.unlabelled, &standard.options)
            .unwrap_or_else(|e| panic!("case {i}: {e}"));
        assert_eq!(got.lam, 0.0, "case {i}");
        for (value, classical) in [
            (got.estimate, got.classical_estimate),
            (got.ci_low, got.classical_ci_low),
            (got.ci_high, got.classical_ci_high),
        ] {
            assert!(close(value, classical), "case {i}: {value} != {classical}");
        }
        // ppi_python's classical interval, recorded beside it.
        for (value, name) in [
            (got.classical_ci_low, "classical_ci_low"),
            (got.classical_ci_high, "classical_ci_high"),
        ] {
            assert!(close(value, number(&want[name])), "case {i} {name}");
        }
    }
    assert!(
        records.len() >= 20 && nans >= 10,
        "{} records, {nans} NaN",
        records.len()
    );
}
