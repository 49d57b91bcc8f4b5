//! The paired bootstrap of a judged metric scored with several samples per item: items are
//! resampled, and within each item the judge's samples of both runs, so the interval and its
//! variance split say how much of the delta's uncertainty is the judge's own.
//!
//! A naive two-stage bootstrap (items with replacement, then samples with replacement) counts
//! the judge's noise twice: an item's mean of samples already carries it, so resampling the
//! items alone already spreads it, and the inner stage adds it again. This is the adjusted
//! two-stage bootstrap (Davison & Hinkley, *Bootstrap Methods and their Application*, 1997,
//! §3.8): the outer stage resamples items whose mean deltas are shrunk toward the overall mean
//! so that they vary only as much as the items themselves do (the between-item variance, the
//! judge's share removed), and the inner stage resamples each item's samples as residuals
//! around their mean, scaled by √(k/(k−1)) so their variance is unbiased. The two stages then
//! add up to the variance of the mean delta, each stage's share measured, and the percentile
//! interval covers the true delta at its nominal rate (tested by simulation).
//!
//! ```
//! use polars_rag::compare::stats::{two_level_bootstrap, ItemSamples, ResampleOptions};
//! // 80 items, 3 judge samples per run each: the candidate is better by 0.1 on average (by
//! // 0 to 0.2, depending on the item), the judge noisy.
//! let mut state = 1u64;
//! let mut noise = || {
//!     state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
//!     ((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 0.3
//! };
//! let items: Vec<(Vec<f64>, Vec<f64>)> = (0..80)
//!     .map(|i| {
//!         let quality = (i % 10) as f64 / 10.0;
//!         let better = quality + 0.1 + 0.1 * ((i % 3) as f64 - 1.0);
//!         ((0..3).map(|_| quality + noise()).collect(), (0..3).map(|_| better + noise()).collect())
//!     })
//!     .collect();
//! let samples: Vec<ItemSamples> = items.iter().map(|(b, c)| ItemSamples { baseline: b, candidate: c }).collect();
//! let r = two_level_bootstrap(&samples, &ResampleOptions::default()).unwrap();
//! assert!(r.ci_low < 0.1 && 0.1 < r.ci_high);
//! assert!(r.judge_share > 0.0 && r.judge_share < 1.0);
//! ```

use super::random::{draw, resample_key};
use super::resample::percentile_interval;
use super::ResampleOptions;

/// One item's judge samples in both runs (each at least one score).
#[derive(Clone, Copy, Debug)]
pub struct ItemSamples<'a> {
    /// The baseline's sample scores.
    pub baseline: &'a [f64],
    /// The candidate's sample scores.
    pub candidate: &'a [f64],
}

/// What the two-level bootstrap found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoLevel {
    /// Items.
    pub n: usize,
    /// The mean of the items' mean deltas.
    pub mean_delta: f64,
    /// The percentile interval's lower end.
    pub ci_low: f64,
    /// Its upper end.
    pub ci_high: f64,
    /// The share of the variance of an item's mean delta that is the judge's own (its samples'
    /// spread), in [0, 1]: the rest is how much the items differ.
    pub judge_share: f64,
}

/// The stream of the two-level draws.
const TWO_LEVEL_STREAM: u64 = 0x7477_6f6c_6576_656c; // "twolevel"

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// The sample variance (n − 1) of `values`; 0 for a single value.
fn sample_variance(values: &[f64], mean: f64) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (values.len() - 1) as f64
}

/// The two-level bootstrap of the mean delta over `items` (see the module). `None` without
/// items, with an item that has no sample in a run, or with a value that is not finite.
pub fn two_level_bootstrap(
    items: &[ItemSamples<'_>],
    options: &ResampleOptions,
) -> Option<TwoLevel> {
    two_level_bootstrap_clustered(items, None, options)
}

/// The two-level bootstrap with the items grouped into clusters (`clusters[i]` is item `i`'s
/// cluster id): the outer stage resamples whole clusters, each cluster's summed mean delta
/// shrunk toward its size times the overall mean so that the clusters vary only as much as
/// they do without the judge's noise; the inner stage resamples every item's samples as
/// without clusters. The mean delta is Σ deltas / Σ sizes of the clusters drawn. With clusters
/// of one item (or `None`) it is [`two_level_bootstrap`], draw for draw.
///
/// ```
/// use polars_rag::compare::stats::{two_level_bootstrap, two_level_bootstrap_clustered, ItemSamples, ResampleOptions};
/// let values: Vec<(Vec<f64>, Vec<f64>)> = (0..40)
///     .map(|i| {
///         let q = (i / 4) as f64 / 10.0; // 10 topics of 4 items, each topic its own quality
///         (vec![q, q + 0.1], vec![q + 0.05 * (i % 3) as f64, q + 0.1])
///     })
///     .collect();
/// let items: Vec<ItemSamples> = values.iter().map(|(b, c)| ItemSamples { baseline: b, candidate: c }).collect();
/// let topics: Vec<u64> = (0..40).map(|i| i / 4).collect();
/// let options = ResampleOptions::default();
/// let clustered = two_level_bootstrap_clustered(&items, Some(&topics), &options).unwrap();
/// let plain = two_level_bootstrap(&items, &options).unwrap();
/// assert_eq!(clustered.mean_delta, plain.mean_delta);
/// let singletons: Vec<u64> = (0..40).collect();
/// assert_eq!(two_level_bootstrap_clustered(&items, Some(&singletons), &options), Some(plain));
/// ```
pub fn two_level_bootstrap_clustered(
    items: &[ItemSamples<'_>],
    clusters: Option<&[u64]>,
    options: &ResampleOptions,
) -> Option<TwoLevel> {
    let n = items.len();
    let finite = |s: &[f64]| !s.is_empty() && s.iter().all(|v| v.is_finite());
    if n == 0
        || clusters.is_some_and(|c| c.len() != n)
        || !items
            .iter()
            .all(|i| finite(i.baseline) && finite(i.candidate))
    {
        return None;
    }
    // Per item: its mean delta, the within-item variance of that mean, and the residuals of
    // each run's samples scaled to unbiased variance.
    struct Item {
        delta: f64,
        within: f64,
        baseline_residuals: Vec<f64>,
        candidate_residuals: Vec<f64>,
    }
    let residuals = |s: &[f64], m: f64| -> Vec<f64> {
        let scale = if s.len() > 1 {
            (s.len() as f64 / (s.len() - 1) as f64).sqrt()
        } else {
            0.0
        };
        s.iter().map(|v| (v - m) * scale).collect()
    };
    let prepared: Vec<Item> = items
        .iter()
        .map(|i| {
            let (mb, mc) = (mean(i.baseline), mean(i.candidate));
            Item {
                delta: mc - mb,
                within: sample_variance(i.baseline, mb) / i.baseline.len() as f64
                    + sample_variance(i.candidate, mc) / i.candidate.len() as f64,
                baseline_residuals: residuals(i.baseline, mb),
                candidate_residuals: residuals(i.candidate, mc),
            }
        })
        .collect();
    // The clusters in the order of their first item: their items, sizes, summed deltas and
    // summed judge variances.
    struct Cluster {
        items: Vec<usize>,
        size: f64,
        delta: f64,
        within: f64,
    }
    let mut grouped: Vec<Cluster> = Vec::new();
    let mut index: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    for (i, item) in prepared.iter().enumerate() {
        let g = match clusters {
            Some(ids) => *index.entry(ids[i]).or_insert_with(|| {
                grouped.push(Cluster {
                    items: Vec::new(),
                    size: 0.0,
                    delta: 0.0,
                    within: 0.0,
                });
                grouped.len() - 1
            }),
            None => {
                grouped.push(Cluster {
                    items: Vec::new(),
                    size: 0.0,
                    delta: 0.0,
                    within: 0.0,
                });
                i
            }
        };
        let cluster = &mut grouped[g];
        cluster.items.push(i);
        cluster.size += 1.0;
        cluster.delta += item.delta;
        cluster.within += item.within;
    }
    let g_count = grouped.len();
    let mean_delta = grouped.iter().map(|c| c.delta).sum::<f64>() / n as f64;
    // A cluster's deviation from its share of the mean: what the outer stage resamples.
    let deviations: Vec<f64> = grouped
        .iter()
        .map(|c| c.delta - c.size * mean_delta)
        .collect();
    // Variances at rounding level (identical samples whose mean is not exactly their value)
    // are zero, so that noise-free judges get no judge share.
    let scale = items
        .iter()
        .flat_map(|i| i.baseline.iter().chain(i.candidate))
        .fold(0.0f64, |m, v| m.max(v.abs()));
    let negligible = (1e-12 * scale).powi(2);
    let clean = |v: f64| if v <= negligible { 0.0 } else { v };
    let within = clean(grouped.iter().map(|c| c.within).sum::<f64>() / g_count as f64);
    let total = clean(if g_count < 2 {
        0.0
    } else {
        deviations.iter().map(|e| e * e).sum::<f64>() / (g_count - 1) as f64
    });
    let between = (total - within).max(0.0);
    let shrink = if total > 0.0 {
        (between / total).sqrt()
    } else {
        0.0
    };
    let judge_share = if total > 0.0 {
        (within / total).clamp(0.0, 1.0)
    } else if within > 0.0 {
        1.0
    } else {
        0.0
    };
    let inner_mean = |key: u64, counter: &mut u64, residuals: &[f64]| -> f64 {
        let k = residuals.len();
        let mut sum = 0.0;
        for _ in 0..k {
            let pick = (draw(key, *counter) % k as u64) as usize;
            *counter += 1;
            sum += residuals[pick];
        }
        sum / k as f64
    };
    let mut means: Vec<f64> = (0..options.resamples)
        .map(|r| {
            let key = resample_key(options.seed, TWO_LEVEL_STREAM, r);
            let mut counter = 0u64;
            let (mut sum, mut size) = (0.0, 0.0);
            for _ in 0..g_count {
                let g = (draw(key, counter) % g_count as u64) as usize;
                counter += 1;
                let cluster = &grouped[g];
                let mut drawn = cluster.size * mean_delta + shrink * deviations[g];
                for &i in &cluster.items {
                    let candidate = inner_mean(key, &mut counter, &prepared[i].candidate_residuals);
                    let baseline = inner_mean(key, &mut counter, &prepared[i].baseline_residuals);
                    drawn = drawn + candidate - baseline;
                }
                sum += drawn;
                size += cluster.size;
            }
            sum / size
        })
        .collect();
    let (ci_low, ci_high, _) = percentile_interval(&mut means, options.confidence);
    Some(TwoLevel {
        n,
        mean_delta,
        ci_low,
        ci_high,
        judge_share,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_samples_make_it_the_items_bootstrap_with_no_judge_share() {
        let values: Vec<(Vec<f64>, Vec<f64>)> = (0..50)
            .map(|i| (vec![i as f64 / 50.0; 3], vec![i as f64 / 50.0 + 0.1; 3]))
            .collect();
        let items: Vec<ItemSamples> = values
            .iter()
            .map(|(b, c)| ItemSamples {
                baseline: b,
                candidate: c,
            })
            .collect();
        let r = two_level_bootstrap(&items, &ResampleOptions::default()).unwrap();
        // Every item's delta is 0.1 exactly: nothing varies.
        assert_eq!(r.judge_share, 0.0);
        assert!((r.ci_low - 0.1).abs() < 1e-12 && (r.ci_high - 0.1).abs() < 1e-12);
    }

    #[test]
    fn missing_samples_give_none() {
        let empty: [f64; 0] = [];
        let items = [ItemSamples {
            baseline: &[0.5],
            candidate: &empty,
        }];
        assert!(two_level_bootstrap(&items, &ResampleOptions::default()).is_none());
        assert!(two_level_bootstrap(&[], &ResampleOptions::default()).is_none());
    }
}
