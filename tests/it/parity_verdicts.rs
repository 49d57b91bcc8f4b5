//! The verdict kernels against values recorded from statsmodels 0.15 and scipy 1.17
//! (`datasets/fixtures/make_verdict_fixtures.py`, `tests/fixtures/verdicts.json`).
//!
//! Tolerances, each from how the two sides compute:
//! * Holm and Benjamini–Hochberg: the same operations in the same order as statsmodels, so the
//!   adjusted values are bit-identical and the rejections identical, thresholds included.
//! * The cluster-robust test: 1e-10 relative. statsmodels forms the mean by least squares (a
//!   pseudo-inverse) and the sandwich by matrix products; the kernel by compensated sums. They
//!   agree to ~1e-13 (4e-12 for a p-value, which magnifies the error of t); the margin covers
//!   data such as a mean 10⁹ times its spread.
//! * The noncentral t distribution function: 1e-10 relative where t and the noncentrality
//!   are on the same side of 0 (the series' terms share a sign) and the value is above 1e-100,
//!   1e-13 absolute elsewhere. The margin is scipy's: against a 30-digit quadrature (mpmath) at
//!   df = 1e5, scipy 1.17's `nct.cdf(-3, 1e5, -0.1)` is off by 2.8e-12 relative and
//!   `nct.cdf(-3, 1e5, 1.5)` by 5.6e-14 absolute, where the kernel is within 8e-14 relative
//!   and 3e-14 absolute (a unit test of `power.rs`); in the far tails scipy is further off
//!   (`nct.cdf(0.5, 1, 40)` is 6.8e-158 for a true value near 1e-280) or NaN (there the value
//!   is held to the exact bound Φ(−nc) instead).
//! * Power: 1e-12 absolute (a probability of a few tenths; statsmodels' survival function is
//!   1 − cdf, so below 1e-16 neither side resolves anything).
//! * `solve_power`: statsmodels' `brentq_expanding` stops once its bracket is narrower than
//!   xtol = 1e-5 plus 4ε·|root|, so its root is that close to the exact one; the kernel's root
//!   is exact to the last bit. Allowed: 1e-5 + 1e-9·|root|.
//! * Wilson: 1e-14 absolute (the normal quantile agrees with scipy's to a few ulps).

use std::path::Path;

use polars_rag::compare::stats::{
    benjamini_hochberg, benjamini_hochberg_reject, cluster_robust_mean_test, holm_adjust,
    holm_reject, minimum_detectable_effect, noncentral_t_cdf, t_test_power, t_test_sample_size,
    wilson_interval, Alternative,
};
use serde_json::Value;

fn fixture() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/verdicts.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn number(v: &Value) -> f64 {
    match v {
        Value::String(s) if s == "inf" => f64::INFINITY,
        Value::String(s) if s == "-inf" => f64::NEG_INFINITY,
        Value::String(s) if s == "NaN" => f64::NAN,
        other => other.as_f64().unwrap(),
    }
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(number).collect()
}

fn cases<'a>(fixture: &'a Value, key: &str) -> &'a [Value] {
    let cases = fixture[key].as_array().unwrap();
    assert!(!cases.is_empty(), "no {key} cases recorded");
    cases
}

fn alternative(record: &Value) -> Alternative {
    record["alternative"].as_str().unwrap().parse().unwrap()
}

fn same_bits_or_both_nan(got: f64, want: f64) -> bool {
    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan())
}

fn relative_close(got: f64, want: f64, rel: f64) -> bool {
    (got - want).abs() <= rel * want.abs()
}

#[test]
fn holm_and_benjamini_hochberg_equal_statsmodels() {
    let fixture = fixture();
    for (index, record) in cases(&fixture, "multiplicity").iter().enumerate() {
        let p = numbers(&record["p"]);
        let alpha = record["alpha"].as_f64().unwrap();
        let expected_reject = |key: &str| -> Vec<bool> {
            record[key]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_bool().unwrap())
                .collect()
        };
        for (name, adjusted, reject) in [
            ("holm", holm_adjust(&p), holm_reject(&p, alpha)),
            (
                "fdr_bh",
                benjamini_hochberg(&p),
                benjamini_hochberg_reject(&p, alpha),
            ),
        ] {
            let want = numbers(&record[name]);
            assert_eq!(adjusted.len(), want.len());
            for (i, (g, w)) in adjusted.iter().zip(&want).enumerate() {
                assert!(
                    same_bits_or_both_nan(*g, *w),
                    "case {index} {name}[{i}]: {g:e}, statsmodels {w:e} (p = {p:?})"
                );
            }
            assert_eq!(
                reject,
                expected_reject(&format!("{name}_reject")),
                "case {index} {name} rejections at α = {alpha} (p = {p:?})"
            );
        }
    }
}

#[test]
fn cluster_robust_test_equals_statsmodels_ols_cluster() {
    let fixture = fixture();
    let mut tested = 0;
    let mut worst = 0.0f64;
    for (index, record) in cases(&fixture, "cluster").iter().enumerate() {
        let deltas = numbers(&record["deltas"]);
        let clusters: Vec<u64> = record["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        let result = cluster_robust_mean_test(&deltas, &clusters);
        if let Some(reason) = record.get("no_test") {
            assert!(
                result.is_err(),
                "case {index}: statsmodels has no finite test ({reason}), got {result:?}"
            );
            continue;
        }
        let test = result.unwrap_or_else(|e| panic!("case {index}: no test ({e})"));
        tested += 1;
        let rel = 1e-10;
        let checks = [
            ("params", test.mean_delta, number(&record["params"])),
            ("bse", test.standard_error, number(&record["bse"])),
            ("tvalues", test.statistic, number(&record["tvalues"])),
            ("pvalues", test.p_value, number(&record["pvalues"])),
            (
                "p greater",
                test.p_value_of(Alternative::Greater),
                number(&record["p_greater"]),
            ),
            (
                "p less",
                test.p_value_of(Alternative::Less),
                number(&record["p_less"]),
            ),
            (
                "design effect",
                test.design_effect,
                number(&record["design_effect"]),
            ),
            (
                "effective n",
                test.effective_n,
                number(&record["effective_n"]),
            ),
        ];
        for (name, got, want) in checks {
            worst = worst.max((got - want).abs() / want.abs());
            assert!(
                relative_close(got, want, rel),
                "case {index} {name}: {got:e}, statsmodels {want:e}"
            );
        }
        assert_eq!(test.df, number(&record["df"]), "case {index} df");
        assert_eq!(
            test.clusters as u64,
            record["n_clusters"].as_u64().unwrap(),
            "case {index} clusters"
        );
        let (low, high) = test.confidence_interval(0.95, Alternative::TwoSided);
        let interval = numbers(&record["conf_int_95"]);
        // The interval's ends are mean ± q·se: compare on the scale of its width, plus the
        // rounding of the sum itself (a few ulps of the mean when it dwarfs the width).
        let scale = (interval[1] - interval[0]).abs();
        let close_end = |got: f64, want: f64| {
            (got - want).abs() <= rel * scale + 4.0 * f64::EPSILON * want.abs()
        };
        assert!(
            close_end(low, interval[0]) && close_end(high, interval[1]),
            "case {index} conf_int: ({low}, {high}), statsmodels {interval:?}"
        );
    }
    assert!(tested >= 20, "only {tested} cluster cases with a test");
    eprintln!("cluster-robust test: largest relative difference {worst:e}");
}

#[test]
fn noncentral_t_cdf_equals_scipy() {
    let fixture = fixture();
    let mut worst = 0.0f64;
    for record in cases(&fixture, "nct_cdf") {
        let (t, df, nc) = (
            number(&record["t"]),
            number(&record["df"]),
            number(&record["nc"]),
        );
        let want = number(&record["cdf"]);
        let got = noncentral_t_cdf(t, df, nc);
        if want.is_nan() {
            // scipy fails in the far lower tail: hold the value to the exact bound instead.
            let bound = number(&record["bound"]);
            assert!(
                (0.0..=bound * (1.0 + 1e-12)).contains(&got),
                "nct.cdf({t}, {df}, {nc}): {got:e}, outside [0, Φ(−nc) = {bound:e}]"
            );
            continue;
        }
        // Where t and the noncentrality lie on opposite sides of 0, the value is 1 minus a sum
        // near 1 (on either side): only absolute precision exists there.
        let ok = if t * nc >= 0.0 && want >= 1e-100 {
            worst = worst.max((got - want).abs() / want);
            relative_close(got, want, 1e-10)
        } else {
            (got - want).abs() <= 1e-13
        };
        assert!(
            ok,
            "nct.cdf({t}, {df}, {nc}): {got:e}, scipy {want:e} (relative {:e})",
            (got - want).abs() / want
        );
    }
    eprintln!("noncentral t cdf: largest relative difference {worst:e}");
}

#[test]
fn t_test_power_equals_statsmodels() {
    let fixture = fixture();
    let mut worst = 0.0f64;
    for record in cases(&fixture, "power") {
        let (d, n, alpha) = (
            number(&record["effect_size"]),
            number(&record["nobs"]),
            number(&record["alpha"]),
        );
        let want = number(&record["power"]);
        let got = t_test_power(d, n, alpha, alternative(record));
        worst = worst.max((got - want).abs());
        if want.is_nan() {
            // statsmodels' power is NaN where scipy's lower tail is: the upper tail as recorded
            // plus a lower tail within its bound.
            let upper = number(&record["upper_tail"]);
            let bound = number(&record["lower_tail_bound"]);
            assert!(
                got >= upper - 1e-12 && got <= upper + bound + 1e-12,
                "power({d}, {n}, {alpha}, {:?}): {got:e}, not the upper tail {upper:e} plus at \
                 most {bound:e}",
                alternative(record)
            );
            continue;
        }
        assert!(
            (got - want).abs() <= 1e-12,
            "power({d}, {n}, {alpha}, {:?}): {got:e}, statsmodels {want:e}",
            alternative(record)
        );
    }
    eprintln!("power: largest absolute difference {worst:e}");
}

/// statsmodels' solver tolerance around its root (see the module documentation).
fn within_solver_tolerance(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-5 + 1e-9 * want.abs()
}

#[test]
fn sample_size_and_minimum_detectable_effect_equal_solve_power() {
    let fixture = fixture();
    let mut worst = [0.0f64; 2];
    for record in cases(&fixture, "sample_size") {
        let (d, power, alpha) = (
            number(&record["effect_size"]),
            number(&record["power"]),
            number(&record["alpha"]),
        );
        let want = number(&record["nobs"]);
        let got = t_test_sample_size(d, power, alpha, alternative(record));
        worst[0] = worst[0].max((got - want).abs());
        assert!(
            within_solver_tolerance(got, want),
            "solve_power(nobs; d = {d}, power = {power}, alpha = {alpha}, {:?}): {got}, \
             statsmodels {want}",
            alternative(record)
        );
    }
    for record in cases(&fixture, "mde") {
        let (n, power, alpha) = (
            number(&record["nobs"]),
            number(&record["power"]),
            number(&record["alpha"]),
        );
        let want = number(&record["effect_size"]);
        let got = minimum_detectable_effect(n, power, alpha, alternative(record));
        worst[1] = worst[1].max((got - want).abs());
        assert!(
            within_solver_tolerance(got, want),
            "solve_power(effect_size; n = {n}, power = {power}, alpha = {alpha}, {:?}): {got}, \
             statsmodels {want}",
            alternative(record)
        );
    }
    eprintln!(
        "solve_power: largest absolute difference {:e} in n, {:e} in the effect size",
        worst[0], worst[1]
    );
}

#[test]
fn wilson_interval_equals_statsmodels() {
    let fixture = fixture();
    let mut worst = 0.0f64;
    for record in cases(&fixture, "wilson") {
        let count = record["count"].as_u64().unwrap();
        let n = record["nobs"].as_u64().unwrap();
        let alpha = number(&record["alpha"]);
        let (low, high) = wilson_interval(count, n, 1.0 - alpha);
        let (want_low, want_high) = (number(&record["low"]), number(&record["high"]));
        worst = worst
            .max((low - want_low).abs())
            .max((high - want_high).abs());
        assert!(
            (low - want_low).abs() <= 1e-14 && (high - want_high).abs() <= 1e-14,
            "wilson({count}, {n}, α = {alpha}): ({low}, {high}), statsmodels ({want_low}, \
             {want_high})"
        );
    }
    eprintln!("wilson: largest absolute difference {worst:e}");
}
