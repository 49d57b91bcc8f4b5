//! Plans through the judge's samples, by simulation: a judged metric whose pilot was scored
//! with some samples per item is planned for another number of samples (the judge's share of
//! an item's delta variance shrinks as 1 / samples), with and without clusters; the power the
//! plan predicts for a comparison of that design is the share of 1,000 simulated comparisons
//! that flag the delta, within 3 points, on 5 designs.
//!
//! Run: `cargo test --features cli --test it plan_simulations::`.

use polars_rag::compare::plan::{plan_row, PlanOptions};
use polars_rag::compare::stats::{
    cluster_robust_mean_test, clustered_t_test_power, minimum_detectable_effect, t_test_deltas,
    t_test_power, Alternative,
};
use polars_rag::compare::{compare_clustered, CompareOptions, MetricValues};

use crate::common::SplitMixNormal as Normal;

const COMPARISONS: usize = 1000;

/// A judged comparison's design: items (in clusters of `size` sharing an effect of variance
/// `icc`·`item_sd`², or independent with `clusters` 0), the spread of the items' true deltas,
/// the judge's noise per sample, and the samples per item and run.
#[derive(Clone, Copy)]
struct Design {
    clusters: usize,
    size: usize,
    icc: f64,
    item_sd: f64,
    judge_sd: f64,
}

/// One comparison's items: each item's judge samples in both runs and its cluster.
fn judged_items(
    rng: &mut Normal,
    design: &Design,
    items: usize,
    samples: usize,
    delta: f64,
) -> (Vec<Vec<f64>>, Vec<Vec<f64>>, Vec<u64>) {
    let (mut baseline, mut candidate, mut ids) = (Vec::new(), Vec::new(), Vec::new());
    let size = if design.clusters == 0 { 1 } else { design.size };
    let mut effect = 0.0;
    for i in 0..items {
        if i % size == 0 {
            effect = design.icc.sqrt() * design.item_sd * rng.draw();
        }
        let quality = rng.draw();
        let item_delta = delta + effect + (1.0 - design.icc).sqrt() * design.item_sd * rng.draw();
        baseline.push(
            (0..samples)
                .map(|_| quality + design.judge_sd * rng.draw())
                .collect(),
        );
        candidate.push(
            (0..samples)
                .map(|_| quality + item_delta + design.judge_sd * rng.draw())
                .collect(),
        );
        ids.push((i / size) as u64);
    }
    (baseline, candidate, ids)
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

#[test]
fn the_power_planned_for_other_judge_samples_is_the_power_simulated() {
    // (design, pilot samples, planned samples, items of the planned comparison)
    let designs = [
        (
            Design {
                clusters: 0,
                size: 1,
                icc: 0.0,
                item_sd: 0.1,
                judge_sd: 0.3,
            },
            3,
            1,
            300,
        ),
        (
            Design {
                clusters: 0,
                size: 1,
                icc: 0.0,
                item_sd: 0.2,
                judge_sd: 0.4,
            },
            2,
            5,
            150,
        ),
        (
            Design {
                clusters: 0,
                size: 1,
                icc: 0.0,
                item_sd: 0.05,
                judge_sd: 0.2,
            },
            4,
            2,
            200,
        ),
        (
            Design {
                clusters: 1,
                size: 5,
                icc: 0.4,
                item_sd: 0.2,
                judge_sd: 0.3,
            },
            3,
            1,
            300,
        ),
        (
            Design {
                clusters: 1,
                size: 4,
                icc: 0.3,
                item_sd: 0.1,
                judge_sd: 0.3,
            },
            2,
            4,
            240,
        ),
    ];
    let alpha = 0.05;
    let options = CompareOptions {
        resamples: 1,
        ..Default::default()
    };
    for (k, &(design, pilot_samples, samples, items)) in designs.iter().enumerate() {
        let mut rng = Normal(900 + k as u64);
        let clustered = design.clusters > 0;
        // A pilot 400 times the planned size, so that its own error is negligible (a noisy judge hides the clusters: with a large judge share the plan for more samples is sensitive to the pilot's design effect), with no change, scored with the pilot's
        // samples: its spread, design effect and judge's share.
        let (b, c, ids) = judged_items(&mut rng, &design, 400 * items, pilot_samples, 0.0);
        let (mb, mc): (Vec<f64>, Vec<f64>) =
            b.iter().zip(&c).map(|(b, c)| (mean(b), mean(c))).unzip();
        let metrics = [MetricValues::mean("m", mb, mc).with_judge_samples(b, c)];
        let pilot = &compare_clustered(
            &metrics,
            None,
            clustered.then_some(ids.as_slice()),
            &options,
        )[0];
        // The true delta variance of an item at the planned samples, and a delta the design
        // detects about 70% of the time.
        let true_var = design.item_sd.powi(2) + 2.0 * design.judge_sd.powi(2) / samples as f64;
        let true_deff = if clustered {
            let icc = design.icc * design.item_sd.powi(2) / true_var;
            1.0 + (design.size as f64 - 1.0) * icc
        } else {
            1.0
        };
        let delta =
            minimum_detectable_effect(items as f64 / true_deff, 0.7, alpha, Alternative::TwoSided)
                * true_var.sqrt();
        let plan = plan_row(
            pilot,
            &PlanOptions {
                mde: delta,
                samples: Some(samples),
                ..Default::default()
            },
        );
        assert_eq!(plan.judge_samples, Some(samples as f64));
        let sd = plan.delta_sd.unwrap();
        let groups = (items / design.size) as f64;
        let predicted = if clustered {
            clustered_t_test_power(
                delta / sd,
                items as f64,
                plan.design_effect,
                groups,
                alpha,
                Alternative::TwoSided,
            )
        } else {
            t_test_power(delta / sd, items as f64, alpha, Alternative::TwoSided)
        };
        let mut flagged = 0;
        for _ in 0..COMPARISONS {
            let (b, c, ids) = judged_items(&mut rng, &design, items, samples, delta);
            let deltas: Vec<f64> = b.iter().zip(&c).map(|(b, c)| mean(c) - mean(b)).collect();
            let p = if clustered {
                cluster_robust_mean_test(&deltas, &ids).unwrap().p_value
            } else {
                t_test_deltas(&deltas).unwrap().p_value
            };
            flagged += usize::from(p < alpha);
        }
        let simulated = flagged as f64 / COMPARISONS as f64;
        assert!(
            (predicted - simulated).abs() <= 0.03,
            "design {k}: {} judge samples planned from a pilot of {pilot_samples}, {items} items: predicted power {predicted:.3}, simulated {simulated:.3} (judge share {:?}, sd {sd:.4}, design effect {:.3})",
            samples,
            plan.judge_share,
            plan.design_effect
        );
    }
}

/// Labels planned from a labelled pilot: the items to label among N for the prediction-powered
/// delta to detect a delta with power 0.8 (its variance projected from the pilot's spreads),
/// against the share of 1,000 simulated comparisons of N items with that many labels whose PPI
/// interval excludes 0: within 3 points, on 5 designs (judges from close to the labels to
/// barely related).
#[test]
fn the_labels_planned_for_a_delta_detect_it_at_the_planned_power() {
    use polars_rag::compare::plan::target_variance;
    use polars_rag::metrics::ppi::{labels_for_variance, ppi_mean, PpiOptions};
    // (items N, the spread of the labels' deltas, the judge's slope on them, the judge's own
    // noise, the delta)
    let designs = [
        (2000, 0.3, 0.9, 0.1, 0.04),
        (1000, 0.2, 1.0, 0.2, 0.05),
        (3000, 0.4, 0.5, 0.3, 0.03),
        (1500, 0.3, 0.8, 0.05, 0.03),
        (800, 0.25, 0.3, 0.3, 0.06),
    ];
    let ppi = PpiOptions::default();
    for (k, &(items, spread, slope, noise, delta)) in designs.iter().enumerate() {
        let mut rng = Normal(1_300 + k as u64);
        let mut item = |delta: f64| {
            let label = delta + spread * rng.draw();
            (label, slope * label + noise * rng.draw())
        };
        // A pilot of 20,000 items with no change, a tenth labelled.
        let pilot: Vec<(f64, f64)> = (0..20_000).map(|_| item(0.0)).collect();
        let (labelled, judged): (Vec<_>, Vec<_>) =
            pilot.iter().enumerate().partition(|(i, _)| i % 10 == 0);
        let labelled: Vec<(f64, f64)> = labelled.into_iter().map(|(_, p)| *p).collect();
        let unlabelled: Vec<f64> = judged.into_iter().map(|(_, p)| p.1).collect();
        let options = PlanOptions {
            mde: delta,
            power: 0.8,
            ..Default::default()
        };
        let n = labels_for_variance(
            &labelled,
            &unlabelled,
            &ppi,
            items,
            target_variance(&options),
        )
        .unwrap()
        .unwrap_or_else(|| panic!("design {k}: no number of labels among {items} items"));
        assert!(n >= 30 && n < items, "design {k}: {n} labels of {items}");
        let mut flagged = 0;
        for _ in 0..COMPARISONS {
            let all: Vec<(f64, f64)> = (0..items).map(|_| item(delta)).collect();
            let r = ppi_mean(
                &all[..n],
                &all[n..].iter().map(|p| p.1).collect::<Vec<_>>(),
                &ppi,
            )
            .unwrap();
            flagged += usize::from(r.ci_low > 0.0 || r.ci_high < 0.0);
        }
        let simulated = flagged as f64 / COMPARISONS as f64;
        assert!(
            (simulated - 0.8).abs() <= 0.03,
            "design {k}: {n} labels of {items} planned for power 0.8, simulated {simulated:.3}"
        );
    }
}
