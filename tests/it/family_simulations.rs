//! The family of tests of a comparison, by simulation: with no true change anywhere, a
//! comparison of 12 metrics over all items and in 4 segments (60 tests) flags any of them in
//! about 5% of comparisons under Holm (against most of them without adjustment), and a metric
//! truly changed by the delta a plan says 400 items detect at 80% power is flagged in about 80%.
//!
//! Run: `cargo test --test it family_simulations::` (no Polars).

use polars_rag::compare::stats::{minimum_detectable_effect, Adjust, Alternative};
use polars_rag::compare::{compare_metrics, decide_rows, CompareOptions, MetricValues};

const METRICS: usize = 12;
const SEGMENTS: usize = 4;
const ITEMS: usize = 400;
const COMPARISONS: usize = 1000;

use crate::common::SplitMixNormal as Normal;

/// One comparison: per metric, item deltas N(shift, 1) (the first metric shifted by `shift`, the
/// others by 0); every metric over all items and in each of 4 segments, decided as one family.
/// Returns (any row flagged, the first metric's overall row flagged).
fn one_comparison(rng: &mut Normal, shift: f64, adjust: Adjust) -> (bool, bool) {
    // The decision under an adjustment rests on the t-tests' p-values: the resamples only
    // give the bootstrap intervals, which this simulation does not look at.
    let options = CompareOptions {
        resamples: if adjust == Adjust::None { 199 } else { 1 },
        adjust,
        ..Default::default()
    };
    let metrics: Vec<MetricValues> = (0..METRICS)
        .map(|m| {
            let effect = if m == 0 { shift } else { 0.0 };
            let candidate = (0..ITEMS).map(|_| effect + rng.draw()).collect();
            MetricValues::mean(&format!("m{m}"), vec![0.0; ITEMS], candidate)
        })
        .collect();
    let mut overall = compare_metrics(&metrics, None, &options);
    let mut segments: Vec<Vec<_>> = (0..SEGMENTS)
        .map(|s| {
            let items: Vec<usize> = (0..ITEMS).filter(|i| i % SEGMENTS == s).collect();
            compare_metrics(&metrics, Some(&items), &options)
        })
        .collect();
    let family = decide_rows(
        overall
            .iter_mut()
            .chain(segments.iter_mut().flat_map(|rows| rows.iter_mut())),
        &[],
        &options,
    );
    assert_eq!(family.size, METRICS * (SEGMENTS + 1));
    let any = overall
        .iter()
        .chain(segments.iter().flatten())
        .any(|r| r.significant);
    (any, overall[0].significant)
}

fn share(flags: impl Iterator<Item = bool>) -> f64 {
    flags.filter(|&f| f).count() as f64 / COMPARISONS as f64
}

#[test]
fn without_a_change_holm_keeps_the_chance_of_any_false_alarm_in_sixty_tests_at_five_percent() {
    let mut rng = Normal(7);
    let holm = share((0..COMPARISONS).map(|_| one_comparison(&mut rng, 0.0, Adjust::Holm).0));
    // Binomial error of 1,000 comparisons at 5%: 0.7 points; three of them above.
    let bound = 0.05 + 3.0 * (0.05f64 * 0.95 / COMPARISONS as f64).sqrt();
    assert!(
        holm <= bound,
        "any Holm-significant flag in {holm} of comparisons"
    );
    // Each test on its own: nearly every comparison raises a false alarm somewhere (the
    // reason for the family; 1 − 0.95^60 = 95% if the tests were independent).
    let mut rng = Normal(8);
    let none = share((0..200).map(|_| one_comparison(&mut rng, 0.0, Adjust::None).0)) * 5.0;
    assert!(none > 0.6, "any raw flag in {none} of comparisons");
}

#[test]
fn a_change_the_plan_says_400_items_detect_at_80_percent_is_flagged_in_80_percent() {
    // The plan for a family of 60 tests under Holm: the change must pass the smallest
    // threshold, alpha / 60, with 400 items (standard deviation of the deltas 1).
    let alpha = 0.05 / (METRICS * (SEGMENTS + 1)) as f64;
    let delta = minimum_detectable_effect(ITEMS as f64, 0.8, alpha, Alternative::TwoSided);
    assert!(delta > 0.2 && delta < 0.3, "{delta}");
    let mut rng = Normal(9);
    let flagged = share((0..COMPARISONS).map(|_| one_comparison(&mut rng, delta, Adjust::Holm).1));
    // 80% within 3 binomial errors (1.3 points each).
    let error = 3.0 * (0.8f64 * 0.2 / COMPARISONS as f64).sqrt();
    assert!(
        (flagged - 0.8).abs() <= error,
        "flagged in {flagged} of comparisons"
    );
}
