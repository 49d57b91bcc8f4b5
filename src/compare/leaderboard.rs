//! Many runs at once: per metric, each run's mean with its interval, the distribution of its
//! rank, and every pair's delta, from one bootstrap that resamples the items (or clusters)
//! jointly across the runs, so that the runs' means move together as they would on another
//! draw of questions.
//!
//! * Items: those with a value in every run (a run without a value for an item would compare
//!   the others on different questions).
//! * Means and intervals: the percentile interval of each run's resampled mean (Poisson(1)
//!   weights per item, the same weights for every run; with clusters, per cluster, the mean
//!   being Σ w·cluster sum / Σ w·cluster size).
//! * Ranks: in each resample the runs ranked by mean (1: the highest; ties share the lowest
//!   rank), then each run's rank interval (the same percentiles) and its share of resamples in
//!   first place.
//! * Pairs: each pair's delta with its resampled interval and its paired t-test (cluster-robust
//!   with clusters), the p-values decided as one family with the comparison's procedure over
//!   every pair of every metric.

use serde::Serialize;

use super::stats::{
    cluster_robust_mean_test, decide_family, percentile_interval, t_test_deltas, ColumnSums,
    PairedResampler,
};
use super::{cluster_sums, CompareOptions};

/// One run's standing on one metric.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Standing {
    /// The metric.
    pub metric: String,
    /// The run's name.
    pub run: String,
    /// Items compared (with a value in every run).
    pub n: usize,
    /// The run's mean.
    pub mean: f64,
    /// Lower end of its bootstrap interval.
    pub ci_low: f64,
    /// Upper end.
    pub ci_high: f64,
    /// Its rank by mean (1: the highest).
    pub rank: usize,
    /// Lower end of its rank interval (the best rank it plausibly has).
    pub rank_low: f64,
    /// Upper end.
    pub rank_high: f64,
    /// The share of resamples in which it ranks first.
    pub p_best: f64,
}

/// One pair of runs on one metric.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PairDelta {
    /// The metric.
    pub metric: String,
    /// The first run (the delta is `second − first`).
    pub first: String,
    /// The second run.
    pub second: String,
    /// Items compared.
    pub n: usize,
    /// mean(second) − mean(first).
    pub delta: f64,
    /// Lower end of its bootstrap interval.
    pub ci_low: f64,
    /// Upper end.
    pub ci_high: f64,
    /// The paired t-test's p-value (cluster-robust with clusters); NaN without a test.
    pub p_value: f64,
    /// Holm's adjusted p-value over every pair of every metric.
    pub p_holm: f64,
    /// The Benjamini–Hochberg q-value over the same family.
    pub q_bh: f64,
    /// Decided by the options' [`Adjust`](super::stats::Adjust) over the family.
    pub significant: bool,
}

/// A leaderboard: standings and pairs of every metric, the pairs decided as one family.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Leaderboard {
    /// The runs, in the order given.
    pub runs: Vec<String>,
    /// Per metric, each run's standing.
    pub standings: Vec<Standing>,
    /// Per metric, each pair of runs.
    pub pairs: Vec<PairDelta>,
    /// Items per metric left out because a run has no value for them.
    pub left_out: Vec<(String, usize)>,
}

/// One metric's standings and pairs (the pairs not yet decided as a family: see
/// [`decide_pairs`]). `runs[k]` holds run k's value per item (NaN: none), all aligned;
/// `clusters[i]` item i's cluster. Returns also the items left out.
///
/// ```
/// use polars_rag::compare::{leaderboard::rank_metric, CompareOptions};
/// let a: Vec<f64> = (0..300).map(|i| 0.5 + 0.2 * (i as f64).sin()).collect();
/// let b: Vec<f64> = a.iter().map(|v| v + 0.1).collect();
/// let c: Vec<f64> = a.iter().map(|v| v - 0.1).collect();
/// let runs = [("a", a.as_slice()), ("b", b.as_slice()), ("c", c.as_slice())];
/// let (standings, pairs, left_out) = rank_metric("m", &runs, None, &CompareOptions::default());
/// let ranks: Vec<usize> = standings.iter().map(|s| s.rank).collect();
/// assert_eq!((ranks, left_out), (vec![2, 1, 3], 0));
/// assert_eq!((standings[1].rank_low, standings[1].rank_high, standings[1].p_best), (1.0, 1.0, 1.0));
/// assert_eq!(pairs.len(), 3);
/// ```
pub fn rank_metric(
    metric: &str,
    runs: &[(&str, &[f64])],
    clusters: Option<&[u64]>,
    options: &CompareOptions,
) -> (Vec<Standing>, Vec<PairDelta>, usize) {
    let k = runs.len();
    let items = runs.first().map_or(0, |(_, v)| v.len());
    let kept: Vec<usize> = (0..items)
        .filter(|&i| runs.iter().all(|(_, v)| v[i].is_finite()))
        .collect();
    let left_out = items - kept.len();
    let n = kept.len();
    let values: Vec<Vec<f64>> = runs
        .iter()
        .map(|(_, v)| kept.iter().map(|&i| v[i]).collect())
        .collect();
    let ids: Option<Vec<u64>> = clusters.map(|c| kept.iter().map(|&i| c[i]).collect());
    // The resampled columns: each run's values, or its cluster sums and the clusters' sizes
    // (the last column). One resampler: the same weights for every run.
    let columns: Vec<Vec<f64>> = match &ids {
        None => values.clone(),
        Some(ids) => values
            .iter()
            .map(|v| cluster_sums(v, ids))
            .chain([cluster_sums(&vec![1.0; n], ids)])
            .collect(),
    };
    let slices: Vec<&[f64]> = columns.iter().map(Vec::as_slice).collect();
    let resampler = PairedResampler::new(&slices, options.resamples, options.seed);
    let sums: Vec<ColumnSums> =
        resampler.column_sums(&resampler.sums_parallel(options.resample_options().thread_count()));
    let resampled_mean = |run: usize, r: usize| -> Option<f64> {
        match &ids {
            None => {
                let w = sums[run].weight(r);
                (w > 0).then(|| sums[run].weighted(r) / w as f64)
            }
            Some(_) => {
                let size = sums[k].weighted(r);
                (size > 0.0).then(|| sums[run].weighted(r) / size)
            }
        }
    };
    let means: Vec<f64> = values
        .iter()
        .map(|v| {
            if n == 0 {
                f64::NAN
            } else {
                v.iter().sum::<f64>() / n as f64
            }
        })
        .collect();
    let rank_of = |means: &[f64], run: usize| -> usize {
        // 1 + the runs strictly above: ties share the best rank among them.
        1 + means.iter().filter(|&&m| m > means[run]).count()
    };
    let resamples = options.resamples;
    let mut resampled: Vec<Vec<f64>> = vec![Vec::with_capacity(resamples); k];
    let mut ranks: Vec<Vec<f64>> = vec![Vec::with_capacity(resamples); k];
    let mut firsts = vec![0usize; k];
    let mut used = 0usize;
    if n > 0 {
        for r in 0..resamples {
            let Some(row) = (0..k)
                .map(|run| resampled_mean(run, r))
                .collect::<Option<Vec<f64>>>()
            else {
                continue;
            };
            used += 1;
            for run in 0..k {
                let rank = rank_of(&row, run);
                ranks[run].push(rank as f64);
                firsts[run] += usize::from(rank == 1);
                resampled[run].push(row[run]);
            }
        }
    }
    let standings = (0..k)
        .map(|run| {
            let (ci_low, ci_high, _) =
                percentile_interval(&mut resampled[run].clone(), options.confidence);
            let (rank_low, rank_high, _) =
                percentile_interval(&mut ranks[run].clone(), options.confidence);
            Standing {
                metric: metric.to_string(),
                run: runs[run].0.to_string(),
                n,
                mean: means[run],
                ci_low,
                ci_high,
                rank: rank_of(&means, run),
                rank_low,
                rank_high,
                p_best: if used == 0 {
                    f64::NAN
                } else {
                    firsts[run] as f64 / used as f64
                },
            }
        })
        .collect();
    let mut pairs = Vec::new();
    for first in 0..k {
        for second in first + 1..k {
            let mut deltas: Vec<f64> = resampled[second]
                .iter()
                .zip(&resampled[first])
                .map(|(b, a)| b - a)
                .collect();
            let (ci_low, ci_high, _) = percentile_interval(&mut deltas, options.confidence);
            let item_deltas: Vec<f64> = values[second]
                .iter()
                .zip(&values[first])
                .map(|(b, a)| b - a)
                .collect();
            let p_value = match &ids {
                None => t_test_deltas(&item_deltas).map(|t| t.p_value_of(options.alternative)),
                Some(ids) => cluster_robust_mean_test(&item_deltas, ids)
                    .ok()
                    .map(|t| t.p_value_of(options.alternative)),
            };
            pairs.push(PairDelta {
                metric: metric.to_string(),
                first: runs[first].0.to_string(),
                second: runs[second].0.to_string(),
                n,
                delta: means[second] - means[first],
                ci_low,
                ci_high,
                p_value: p_value.unwrap_or(f64::NAN),
                p_holm: f64::NAN,
                q_bh: f64::NAN,
                significant: false,
            });
        }
    }
    (standings, pairs, left_out)
}

/// Decides every pair of every metric as one family with the options' procedure (with
/// [`Adjust::None`](super::stats::Adjust::None), each p-value below the level on its own).
pub fn decide_pairs(pairs: &mut [PairDelta], options: &CompareOptions) {
    let p: Vec<f64> = pairs.iter().map(|p| p.p_value).collect();
    let decision = decide_family(&p, options.adjust, 1.0 - options.confidence);
    for (i, pair) in pairs.iter_mut().enumerate() {
        pair.p_holm = decision.holm[i];
        pair.q_bh = decision.bh[i];
        pair.significant = decision.reject[i];
    }
}
