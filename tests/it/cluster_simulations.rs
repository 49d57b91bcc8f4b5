//! Clustered comparisons by simulation: items in clusters whose deltas share a cluster effect
//! (intra-class correlation 0 to 0.8), 30 to 200 clusters of equal and unequal sizes, 1,000
//! comparisons per design. The interval `compare_clustered` reports (the cluster-robust t
//! interval) covers the true delta in 95% of them within binomial error; the percentile
//! bootstrap of clusters, which it computes too, covers 91.5 to 94.5% (short of 95% with few
//! clusters, which is why it is not the interval reported); the same items treated as
//! independent cover it in 42 to 68% once the ICC is 0.3 or more.
//!
//! Run: `cargo test --features cli --test it cluster_simulations::`.

use polars_rag::compare::{compare_clustered, CompareOptions, MetricValues};

const COMPARISONS: usize = 1000;
const TRUE_DELTA: f64 = 0.1;

use crate::common::SplitMixNormal as Normal;

struct Design {
    icc: f64,
    clusters: usize,
    /// Items per cluster: all `size`, or 1 to 2·size − 1 in turn (the same mean).
    size: usize,
    equal: bool,
}

/// Shares of comparisons whose interval covers the true delta: (bootstrap, cluster-robust t,
/// bootstrap ignoring the clusters).
fn coverage(design: &Design, seed: u64) -> (f64, f64, f64) {
    let mut rng = Normal(seed);
    // 199 resamples: enough for a 95% percentile interval's coverage, a fifth of the time.
    let options = CompareOptions {
        resamples: 199,
        ..Default::default()
    };
    let (mut bootstrap, mut t, mut naive) = (0, 0, 0);
    for _ in 0..COMPARISONS {
        let mut ids = Vec::new();
        let mut candidate = Vec::new();
        for g in 0..design.clusters {
            let size = if design.equal {
                design.size
            } else {
                1 + g % (2 * design.size - 1)
            };
            let effect = design.icc.sqrt() * rng.draw();
            for _ in 0..size {
                ids.push(g as u64);
                candidate.push(TRUE_DELTA + effect + (1.0 - design.icc).sqrt() * rng.draw());
            }
        }
        let metrics = [MetricValues::mean(
            "m",
            vec![0.0; candidate.len()],
            candidate,
        )];
        let clustered = &compare_clustered(&metrics, None, Some(&ids), &options)[0];
        let independent = &compare_clustered(&metrics, None, None, &options)[0];
        let covers = |low: f64, high: f64| (low <= TRUE_DELTA && TRUE_DELTA <= high) as usize;
        // The interval reported is the cluster-robust t interval.
        assert_eq!(clustered.interval, "cluster-robust t");
        assert_eq!(
            (clustered.ci_low, clustered.ci_high),
            (clustered.t_ci_low.unwrap(), clustered.t_ci_high.unwrap())
        );
        t += covers(clustered.ci_low, clustered.ci_high);
        // The percentile bootstrap of the clusters' sums, as the comparison resamples them.
        bootstrap += covers_by_cluster_bootstrap(&candidate_of(&metrics), &ids, &options);
        naive += covers(independent.ci_low, independent.ci_high);
    }
    let share = |k: usize| k as f64 / COMPARISONS as f64;
    (share(bootstrap), share(t), share(naive))
}

#[test]
fn clustered_intervals_cover_the_true_delta_at_their_confidence() {
    let designs = [
        Design {
            icc: 0.0,
            clusters: 30,
            size: 10,
            equal: true,
        },
        Design {
            icc: 0.3,
            clusters: 50,
            size: 8,
            equal: false,
        },
        Design {
            icc: 0.5,
            clusters: 40,
            size: 25,
            equal: true,
        },
        Design {
            icc: 0.8,
            clusters: 200,
            size: 5,
            equal: false,
        },
        Design {
            icc: 0.5,
            clusters: 30,
            size: 10,
            equal: false,
        },
    ];
    // Binomial error of 1,000 comparisons at 95%: 0.69 points.
    let error = (0.95f64 * 0.05 / COMPARISONS as f64).sqrt();
    for (k, design) in designs.iter().enumerate() {
        let (bootstrap, t, naive) = coverage(design, 100 + k as u64);
        let what = format!(
            "ICC {}, {} clusters of {} {} items: bootstrap {bootstrap}, cluster-robust t {t}, as independent items {naive}",
            design.icc,
            design.clusters,
            if design.equal { "" } else { "about" },
            design.size
        );
        // The interval reported (cluster-robust t): 95% within three binomial errors.
        assert!((t - 0.95).abs() <= 3.0 * error, "{what}");
        // The percentile bootstrap of clusters falls short by 1.5 to 3.5 points at 199
        // resamples (it estimates the variance without the G / (G − 1) correction and with
        // normal, not t, tails; at 999 resamples 0.6 to 2.7 points): not the interval
        // reported, but near 95% and far above the interval that ignores the clusters.
        assert!(
            bootstrap >= 0.95 - 0.045 && bootstrap <= 0.95 + 3.0 * error,
            "{what}"
        );
        if design.icc >= 0.3 {
            assert!(naive < 0.8 && bootstrap > naive + 0.1, "{what}");
        }
    }
}

/// The candidate values of a one-metric comparison against zeros: its deltas.
fn candidate_of(metrics: &[MetricValues]) -> Vec<f64> {
    match &metrics[0] {
        MetricValues::Mean { candidate, .. } => candidate.clone(),
        MetricValues::Corpus { .. } => unreachable!("the simulations compare means"),
    }
}

/// Whether the percentile bootstrap of the clusters' summed deltas over their summed sizes
/// (the resampling a clustered comparison runs) covers the true delta: a corpus-level metric
/// of two statistics, a cluster's delta sum and its size, against zeros.
fn covers_by_cluster_bootstrap(deltas: &[f64], ids: &[u64], options: &CompareOptions) -> usize {
    use polars_rag::compare::stats::{bootstrap_corpus, ResampleOptions};
    let mut index = std::collections::HashMap::new();
    let (mut sums, mut sizes) = (Vec::new(), Vec::new());
    for (&d, &g) in deltas.iter().zip(ids) {
        let k = *index.entry(g).or_insert_with(|| {
            sums.push(0.0);
            sizes.push(0.0);
            sums.len() - 1
        });
        sums[k] += d;
        sizes[k] += 1.0;
    }
    let zeros = vec![0.0; sums.len()];
    let resample = ResampleOptions {
        resamples: options.resamples,
        seed: options.seed,
        ..Default::default()
    };
    let r = bootstrap_corpus(
        &[&zeros, &sizes],
        &[&sums, &sizes],
        |s| s[0] / s[1],
        &resample,
    )
    .unwrap();
    usize::from(r.ci_low <= TRUE_DELTA && TRUE_DELTA <= r.ci_high)
}

/// Item deltas of one clustered comparison: `clusters` clusters of `size` items, a shared
/// cluster effect of variance `icc` and an item effect of variance 1 − `icc` around `delta`.
fn clustered_deltas(
    rng: &mut Normal,
    clusters: usize,
    size: usize,
    icc: f64,
    delta: f64,
) -> (Vec<f64>, Vec<u64>) {
    let mut deltas = Vec::with_capacity(clusters * size);
    let mut ids = Vec::with_capacity(clusters * size);
    for g in 0..clusters {
        let effect = icc.sqrt() * rng.draw();
        for _ in 0..size {
            deltas.push(delta + effect + (1.0 - icc).sqrt() * rng.draw());
            ids.push(g as u64);
        }
    }
    (deltas, ids)
}

/// A plan through the design effect: the spread and design effect measured on a pilot, the power
/// a comparison of G clusters has for a delta, against the share of 1,000 simulated comparisons
/// of that size that flag it (the cluster-robust test, a family of one). Within 3 points on 5
/// designs.
#[test]
fn the_power_planned_through_the_pilots_design_effect_is_the_power_simulated() {
    use polars_rag::compare::stats::{
        clustered_t_test_power, minimum_detectable_effect, Alternative,
    };
    let designs = [
        (0.1, 60, 5),
        (0.3, 50, 8),
        (0.5, 80, 4),
        (0.2, 100, 10),
        (0.05, 40, 20),
    ];
    let options = CompareOptions {
        resamples: 1,
        ..Default::default()
    };
    for (k, &(icc, clusters, size)) in designs.iter().enumerate() {
        let mut rng = Normal(500 + k as u64);
        // A pilot forty times the size: its spread and design effect (a smaller pilot adds its
        // own error to the plan; the guide says how large a pilot to take).
        let (pilot, ids) = clustered_deltas(&mut rng, 40 * clusters, size, icc, 0.0);
        let metrics = [MetricValues::mean("m", vec![0.0; pilot.len()], pilot)];
        let pilot = &compare_clustered(&metrics, None, Some(&ids), &options)[0];
        let (sd, deff) = (pilot.delta_sd.unwrap(), pilot.design_effect.unwrap());
        // The delta the true design detects with power 0.7, and the power the plan predicts.
        let true_deff = 1.0 + (size as f64 - 1.0) * icc;
        let n = (clusters * size) as f64;
        let delta = minimum_detectable_effect(n / true_deff, 0.7, 0.05, Alternative::TwoSided);
        let predicted = clustered_t_test_power(
            delta / sd,
            n,
            deff,
            clusters as f64,
            0.05,
            Alternative::TwoSided,
        );
        let mut flagged = 0;
        for _ in 0..COMPARISONS {
            let (deltas, ids) = clustered_deltas(&mut rng, clusters, size, icc, delta);
            let metrics = [MetricValues::mean("m", vec![0.0; deltas.len()], deltas)];
            flagged +=
                compare_clustered(&metrics, None, Some(&ids), &options)[0].significant as usize;
        }
        let simulated = flagged as f64 / COMPARISONS as f64;
        assert!(
            (predicted - simulated).abs() <= 0.03,
            "ICC {icc}, {clusters} clusters of {size}: planned power {predicted:.3}, simulated {simulated:.3}"
        );
    }
}

/// The two-level bootstrap over clusters: items in 40 clusters of 1 to 7 items whose deltas
/// share a cluster effect (ICC 0.5), each judged twice per run by a judge with noise of its
/// own. Resampling whole clusters in the outer stage covers the true delta within the
/// percentile bootstrap's usual shortfall; the two-level bootstrap of independent items, on the
/// same comparisons, falls far short.
#[test]
fn the_clustered_two_level_interval_covers_the_true_delta() {
    use polars_rag::compare::stats::{
        two_level_bootstrap, two_level_bootstrap_clustered, ItemSamples, ResampleOptions,
    };
    const CLUSTERS: usize = 40;
    const SAMPLES: usize = 2;
    let (icc, judge_noise) = (0.5f64, 0.5);
    let mut rng = Normal(7_000);
    let (mut clustered, mut naive) = (0usize, 0usize);
    for trial in 0..COMPARISONS {
        let mut ids = Vec::new();
        let mut judged: Vec<(Vec<f64>, Vec<f64>)> = Vec::new();
        for g in 0..CLUSTERS {
            let effect = icc.sqrt() * rng.draw();
            for _ in 0..1 + g % 7 {
                let quality = rng.draw();
                let delta = TRUE_DELTA + effect + (1.0 - icc).sqrt() * rng.draw();
                let baseline = (0..SAMPLES)
                    .map(|_| quality + judge_noise * rng.draw())
                    .collect();
                let candidate = (0..SAMPLES)
                    .map(|_| quality + delta + judge_noise * rng.draw())
                    .collect();
                judged.push((baseline, candidate));
                ids.push(g as u64);
            }
        }
        let items: Vec<ItemSamples> = judged
            .iter()
            .map(|(b, c)| ItemSamples {
                baseline: b,
                candidate: c,
            })
            .collect();
        let options = ResampleOptions {
            resamples: 199,
            seed: trial as u64,
            ..Default::default()
        };
        let covers = |low: f64, high: f64| usize::from(low <= TRUE_DELTA && TRUE_DELTA <= high);
        let r = two_level_bootstrap_clustered(&items, Some(&ids), &options).unwrap();
        clustered += covers(r.ci_low, r.ci_high);
        let r = two_level_bootstrap(&items, &options).unwrap();
        naive += covers(r.ci_low, r.ci_high);
    }
    let share = |k: usize| k as f64 / COMPARISONS as f64;
    let (clustered, naive) = (share(clustered), share(naive));
    let error = (0.95f64 * 0.05 / COMPARISONS as f64).sqrt();
    let what = format!("clustered two-level {clustered}, as independent items {naive}");
    // The percentile bootstrap's shortfall at 40 clusters, as in the test above.
    assert!(
        clustered >= 0.95 - 0.045 && clustered <= 0.95 + 3.0 * error,
        "{what}"
    );
    assert!(naive < 0.85 && clustered > naive + 0.05, "{what}");
}

/// The prediction-powered estimate with clustered items: 40 topics of 10 items whose true
/// values share a topic effect (ICC 0.5), a judge that overrates by 0.2 with noise of its own,
/// every fourth item labelled. The clustered interval covers the true mean within binomial
/// error of 95%; PPI's interval, which treats the items as independent, falls far short.
#[test]
fn the_clustered_ppi_interval_covers_the_true_mean() {
    use polars_rag::compare::stats::clustered_ppi_mean;
    use polars_rag::metrics::ppi::{ppi_mean, PpiOptions};
    const TOPICS: usize = 40;
    const SIZE: usize = 10;
    let (true_mean, icc) = (0.5f64, 0.5f64);
    let mut rng = Normal(8_000);
    let options = PpiOptions::default();
    let (mut clustered, mut plain) = (0usize, 0usize);
    for _ in 0..COMPARISONS {
        let (mut labelled, mut labelled_ids, mut unlabelled, mut unlabelled_ids) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for topic in 0..TOPICS {
            let effect = icc.sqrt() * rng.draw();
            for item in 0..SIZE {
                let truth = true_mean + effect + (1.0 - icc).sqrt() * rng.draw();
                let judge = truth + 0.2 + 0.5 * rng.draw();
                if item % 4 == 0 {
                    labelled.push((truth, judge));
                    labelled_ids.push(topic as u64);
                } else {
                    unlabelled.push(judge);
                    unlabelled_ids.push(topic as u64);
                }
            }
        }
        let covers = |low: f64, high: f64| usize::from(low <= true_mean && true_mean <= high);
        let r = clustered_ppi_mean(
            &labelled,
            &labelled_ids,
            &unlabelled,
            &unlabelled_ids,
            &options,
        )
        .unwrap();
        clustered += covers(r.ci_low, r.ci_high);
        let r = ppi_mean(&labelled, &unlabelled, &options).unwrap();
        plain += covers(r.ci_low, r.ci_high);
    }
    let share = |k: usize| k as f64 / COMPARISONS as f64;
    let (clustered, plain) = (share(clustered), share(plain));
    let error = (0.95f64 * 0.05 / COMPARISONS as f64).sqrt();
    let what = format!("clustered PPI {clustered}, PPI as independent items {plain}");
    assert!((clustered - 0.95).abs() <= 3.0 * error, "{what}");
    assert!(plain < 0.85, "{what}");
}
