//! The paired-comparison statistics (`polars_rag::compare::stats`): the t-test against scipy,
//! the calibration of the resampling procedures under simulated nulls, and their determinism.
//!
//! Run: `cargo test --test it stats::` (no Polars).

use polars_rag::compare::stats::{
    bootstrap_corpus, effect_size, paired_deltas, paired_resampling, paired_t_test, t_test_deltas,
    PairedResampler, ResampleOptions, RESAMPLE_BLOCK,
};

fn assert_close(actual: f64, expected: f64, rel: f64, what: &str) {
    assert!(
        (actual - expected).abs() <= rel * expected.abs(),
        "{what}: got {actual:e}, expected {expected:e} (relative error {:e})",
        ((actual - expected) / expected).abs()
    );
}

/// `(statistic, p-value, df)` of `scipy.stats.ttest_rel(candidate, baseline)`.
fn check_t_test(baseline: &[f64], candidate: &[f64], expected: (f64, f64, f64), name: &str) {
    let t = paired_t_test(baseline, candidate).unwrap();
    assert_close(t.statistic, expected.0, 1e-10, &format!("{name} statistic"));
    assert_close(t.p_value, expected.1, 1e-10, &format!("{name} p-value"));
    assert_eq!(t.df, expected.2, "{name} df");
    assert_eq!(t.n as f64, expected.2 + 1.0);
}

// Expected values: scipy 1.17.1, numpy 2.4.6. For each dataset,
//   from scipy import stats
//   r = stats.ttest_rel(candidate, baseline); (r.statistic, r.pvalue, r.df)
// and, for effect sizes, d = np.asarray(candidate) - np.asarray(baseline);
//   d.mean() / d.std(ddof=1).

#[test]
fn t_test_equals_scipy_on_small_samples() {
    check_t_test(
        &[0.61, 0.42, 0.78, 0.55, 0.30],
        &[0.66, 0.40, 0.85, 0.61, 0.38],
        (2.7087967103188832, 0.05360396214530979, 4.0),
        "five items",
    );
    check_t_test(
        &[0.2, 0.5],
        &[0.3, 0.9],
        (1.6666666666666665, 0.34404173924526144, 1.0),
        "two items",
    );
    check_t_test(
        &[0.9, 0.7, 0.8],
        &[0.85, 0.72, 0.6],
        (-1.1814306429562824, 0.3588811256612305, 2.0),
        "three items, worse",
    );
    // Scores on a 0-100 scale (sentence BLEU-like), candidate worse.
    let baseline = [
        41.2, 35.0, 50.3, 28.7, 33.3, 47.9, 39.4, 30.0, 44.1, 36.6, 29.8, 52.0,
    ];
    let candidate = [
        38.9, 35.5, 47.0, 27.1, 30.2, 46.0, 40.1, 26.3, 41.7, 35.0, 27.9, 49.4,
    ];
    check_t_test(
        &baseline,
        &candidate,
        (-4.938914929978406, 0.0004433514313468502, 11.0),
        "twelve items",
    );
    assert_close(
        effect_size(&baseline, &candidate).unwrap(),
        -1.425741932163847,
        1e-12,
        "effect size",
    );
    // Binary per-item outcomes (hit rate).
    let hits_a = [
        1., 0., 1., 1., 0., 1., 1., 1., 0., 1., 1., 1., 1., 0., 1., 1., 1., 1., 1., 1.,
    ];
    let hits_b = [
        1., 1., 1., 1., 0., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 0., 1., 1., 1., 1.,
    ];
    check_t_test(
        &hits_a,
        &hits_b,
        (1.0000000000000002, 0.3298768009211249, 19.0),
        "binary",
    );
}

/// 100,000 items, generated identically in Python with `math.sin`/`math.cos` (the C library's,
/// as Rust's `f64::sin`/`f64::cos` on this platform):
///
/// ```python
/// import math
/// n = 100000
/// b = [0.5 + 0.25 * math.cos(i) for i in range(n)]
/// c = [b[i] + 0.3 * math.sin(i) + offset for i in range(n)]   # offset 0.01 and 0.002
/// ```
#[test]
fn t_test_equals_scipy_at_large_df() {
    let n = 100_000;
    let baseline: Vec<f64> = (0..n).map(|i| 0.5 + 0.25 * (i as f64).cos()).collect();
    let cases = [
        // offset, statistic, p-value, effect size, sd of the deltas
        (
            0.01,
            14.915147300115184,
            2.9757033552903026e-50,
            0.04716583710527497,
        ),
        (
            0.002,
            2.989512336458166,
            0.0027949109846748975,
            0.009453668076379436,
        ),
    ];
    for (offset, statistic, p_value, d_z) in cases {
        let candidate: Vec<f64> = (0..n)
            .map(|i| baseline[i] + 0.3 * (i as f64).sin() + offset)
            .collect();
        let name = format!("n = 100000, offset {offset}");
        check_t_test(&baseline, &candidate, (statistic, p_value, 99_999.0), &name);
        let t = paired_t_test(&baseline, &candidate).unwrap();
        assert_close(t.effect_size(), d_z, 1e-10, &format!("{name} effect size"));
        assert_close(
            t.sd_delta,
            0.21213311792992617,
            1e-10,
            &format!("{name} sd"),
        );
    }
}

#[test]
fn t_test_on_deltas_and_missing_pairs() {
    let baseline = [0.5, f64::NAN, 0.2, 0.4, 0.9];
    let candidate = [0.75, 0.1, 0.25, f64::NAN, 0.8];
    let deltas = paired_deltas(&baseline, &candidate);
    assert_eq!(deltas.len(), 3);
    assert!(
        paired_t_test(&baseline, &candidate).is_none(),
        "NaN: drop pairs first"
    );
    let t = t_test_deltas(&deltas).unwrap();
    assert_eq!(t.n, 3);
    assert_eq!(
        Some(t),
        paired_t_test(&[0.5, 0.2, 0.9], &[0.75, 0.25, 0.8]),
        "t_test_deltas is paired_t_test on the deltas"
    );
    // Identical runs: no variability, no test (scipy: statistic and p-value NaN).
    assert!(paired_t_test(&[0.1, 0.2, 0.3], &[0.1, 0.2, 0.3]).is_none());
    assert!(effect_size(&[0.1, 0.2, 0.3], &[0.1, 0.2, 0.3]).is_none());
}

/// SplitMix64, for the simulated data only.
struct TestRng(u64);

impl TestRng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal (Box-Muller).
    fn normal(&mut self) -> f64 {
        let u = 1.0 - self.uniform();
        let v = self.uniform();
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// 400 simulated comparisons of 200 items, 500 resamples each, three metrics:
/// * symmetric noise around 0 (uniform): no difference;
/// * the same under a different distribution (normal, heavier tails);
/// * a true improvement of 0.25 with skewed noise (exponential, centred).
///
/// The randomization p-values of the null metrics should be about uniform, so about 5 % below
/// 0.05; the 95 % intervals should cover the true mean delta about 95 % of the time.
#[test]
fn resampling_is_calibrated_under_simulated_nulls() {
    let (simulations, n) = (400, 200);
    let mut rng = TestRng(2024);
    let mut below_05 = [0usize; 2];
    let mut below_20 = [0usize; 2];
    let mut covered = [0usize; 3];
    for s in 0..simulations {
        let uniform: Vec<f64> = (0..n).map(|_| 2.0 * rng.uniform() - 1.0).collect();
        let normal: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
        let shifted: Vec<f64> = (0..n)
            .map(|_| 0.25 + (-(1.0 - rng.uniform()).ln() - 1.0))
            .collect();
        let options = ResampleOptions {
            resamples: 500,
            seed: s as u64,
            threads: 1,
            ..Default::default()
        };
        let results = paired_resampling(&[&uniform, &normal, &shifted], &options);
        for (m, truth) in [0.0, 0.0, 0.25].into_iter().enumerate() {
            let r = results[m].unwrap();
            if r.ci_low <= truth && truth <= r.ci_high {
                covered[m] += 1;
            }
            if m < 2 {
                below_05[m] += (r.p_randomization < 0.05) as usize;
                below_20[m] += (r.p_randomization < 0.20) as usize;
            }
        }
    }
    let rate = |count: usize| count as f64 / simulations as f64;
    for m in 0..2 {
        assert!(
            (0.02..=0.09).contains(&rate(below_05[m])),
            "metric {m}: P(p < 0.05) = {}",
            rate(below_05[m])
        );
        assert!(
            (0.15..=0.25).contains(&rate(below_20[m])),
            "metric {m}: P(p < 0.20) = {}",
            rate(below_20[m])
        );
    }
    for (m, &c) in covered.iter().enumerate() {
        assert!(
            (0.91..=0.98).contains(&rate(c)),
            "metric {m}: coverage {}",
            rate(c)
        );
    }
}

/// With a real difference and many items, the randomization test agrees with the t-test and the
/// bootstrap standard error with sd/√n (both are the same normal approximation there).
#[test]
fn resampling_agrees_with_the_t_test_on_large_samples() {
    let n = 3000;
    let mut rng = TestRng(7);
    // mean 0.05, sd 1: t ≈ 0.05 · √3000 ≈ 2.7 (this sample: t = 1.99, p = 0.046).
    let deltas: Vec<f64> = (0..n).map(|_| 0.05 + rng.normal()).collect();
    let t = t_test_deltas(&deltas).unwrap();
    let options = ResampleOptions {
        resamples: 4000,
        seed: 11,
        threads: 2,
        ..Default::default()
    };
    let r = paired_resampling(&[&deltas], &options)[0].unwrap();
    assert_close(r.mean_delta, t.mean_delta, 1e-12, "mean delta");
    assert_close(
        r.std_error,
        t.standard_error(),
        0.08,
        "bootstrap standard error",
    );
    assert!(
        (r.p_randomization - t.p_value).abs() < 0.4 * t.p_value + 0.004,
        "randomization p {} vs t-test p {}",
        r.p_randomization,
        t.p_value
    );
    // The percentile interval is close to mean ± 1.96 se for a mean of 3000 values.
    let half_width = 1.959_963_984_540_054 * t.standard_error();
    for (end, expected) in [
        (r.ci_low, t.mean_delta - half_width),
        (r.ci_high, t.mean_delta + half_width),
    ] {
        assert!(
            (end - expected).abs() < 0.1 * half_width,
            "interval end {end}, expected {expected}"
        );
    }
}

/// Deltas for the determinism tests: several blocks, metrics of different lengths.
fn metrics_of_different_lengths() -> Vec<Vec<f64>> {
    let mut rng = TestRng(99);
    [
        5 * RESAMPLE_BLOCK + 17,
        3 * RESAMPLE_BLOCK,
        2 * RESAMPLE_BLOCK + 1,
        700,
    ]
    .into_iter()
    .enumerate()
    .map(|(m, n)| {
        (0..n)
            .map(|_| 0.01 * m as f64 + 0.3 * rng.normal())
            .collect()
    })
    .collect()
}

#[test]
fn same_seed_same_numbers_whatever_the_threads() {
    let data = metrics_of_different_lengths();
    let columns: Vec<&[f64]> = data.iter().map(|c| c.as_slice()).collect();
    let options = |threads, seed| ResampleOptions {
        resamples: 300,
        seed,
        threads,
        ..Default::default()
    };
    let reference = paired_resampling(&columns, &options(1, 5));
    assert!(reference.iter().all(|r| r.is_some()));
    assert_eq!(reference, paired_resampling(&columns, &options(1, 5)));
    for threads in [2, 3, 4, 6, 64] {
        assert_eq!(
            reference,
            paired_resampling(&columns, &options(threads, 5)),
            "{threads} threads"
        );
    }
    assert_ne!(
        reference,
        paired_resampling(&columns, &options(1, 6)),
        "another seed"
    );
}

#[test]
fn any_partition_of_the_blocks_gives_the_same_sums() {
    let data = metrics_of_different_lengths();
    let columns: Vec<&[f64]> = data.iter().map(|c| c.as_slice()).collect();
    let resampler = PairedResampler::new(&columns, 120, 3);
    let blocks = resampler.block_count();
    assert_eq!(blocks, 6);
    let whole = resampler.sums(0..blocks);
    for cuts in [vec![1], vec![2, 3], vec![1, 2, 3, 4, 5], vec![5]] {
        let mut bounds = vec![0];
        bounds.extend(cuts);
        bounds.push(blocks);
        // Merge the pieces back to front, to vary the order too.
        let mut merged = resampler.sums(bounds[bounds.len() - 2]..blocks);
        for w in bounds.windows(2).rev().skip(1) {
            merged.merge(&resampler.sums(w[0]..w[1]));
        }
        assert_eq!(merged, whole, "blocks split at {bounds:?}");
    }
    assert_eq!(resampler.sums_parallel(4), whole);
}

/// A metric's results depend on its own deltas and the seed only, not on which other metrics
/// share the call (they share item weights by position, not results).
#[test]
fn metrics_do_not_influence_each_other() {
    let data = metrics_of_different_lengths();
    let columns: Vec<&[f64]> = data.iter().map(|c| c.as_slice()).collect();
    let options = ResampleOptions {
        resamples: 200,
        seed: 8,
        threads: 2,
        ..Default::default()
    };
    let together = paired_resampling(&columns, &options);
    for (m, column) in columns.iter().enumerate() {
        assert_eq!(
            paired_resampling(&[column], &options)[0],
            together[m],
            "metric {m}"
        );
    }
}

#[test]
fn resampling_edge_cases() {
    let options = ResampleOptions {
        resamples: 99,
        threads: 1,
        ..Default::default()
    };
    let empty: [f64; 0] = [];
    let results = paired_resampling(&[&empty, &[f64::NAN, 1.0], &[0.25], &[0.0; 10]], &options);
    assert_eq!(results[0], None, "no deltas");
    assert_eq!(results[1], None, "NaN delta");
    let single = results[2].unwrap();
    assert_eq!(
        (single.ci_low, single.ci_high, single.mean_delta),
        (0.25, 0.25, 0.25)
    );
    assert_eq!(
        single.p_randomization, 1.0,
        "one delta: every sign flip is as extreme"
    );
    assert!(
        single.resamples_used < 99,
        "Poisson weight 0 drops the item about 37 % of the time"
    );
    let zeros = results[3].unwrap();
    assert_eq!(
        (zeros.ci_low, zeros.ci_high, zeros.p_randomization),
        (0.0, 0.0, 1.0)
    );
    // Ties: with deltas 0.1, 0.2, 0.3, −0.3 (tenths of integers), several sign vectors give
    // |Σ sᵢdᵢ| = |Σ dᵢ| = 0.3 exactly in real arithmetic but not in floating point; the
    // p-value must count them. The exact proportion, from the 16 sign vectors in integers:
    let tenths = [1i64, 2, 3, -3];
    let observed = tenths.iter().sum::<i64>().abs();
    let extreme = (0..16u32)
        .filter(|bits| {
            let flipped: i64 = (0..4)
                .map(|i| {
                    if bits >> i & 1 == 1 {
                        tenths[i]
                    } else {
                        -tenths[i]
                    }
                })
                .sum();
            flipped.abs() >= observed
        })
        .count();
    let exact = extreme as f64 / 16.0;
    assert_eq!(exact, 0.75);
    let deltas = [0.1, 0.2, 0.3, -0.3];
    let many = ResampleOptions {
        resamples: 20_000,
        ..options
    };
    let p = paired_resampling(&[&deltas], &many)[0]
        .unwrap()
        .p_randomization;
    assert!((p - exact).abs() < 0.015, "p = {p}, exact {exact}");
    // Two equal deltas: (+, +) and (−, −) reach |Σ d|, the others give 0.
    let p = paired_resampling(&[&[0.1, 0.1]], &many)[0]
        .unwrap()
        .p_randomization;
    assert!((p - 0.5).abs() < 0.015, "p = {p}");
}

/// Corpus-level resampling with a metric that is a mean (statistics: value, 1) is the paired
/// resampling of the per-item deltas.
#[test]
fn corpus_resampling_of_a_mean_is_paired_resampling() {
    let mut rng = TestRng(31);
    let n = 2500;
    let base: Vec<f64> = (0..n).map(|_| rng.uniform()).collect();
    let cand: Vec<f64> = base.iter().map(|b| b + 0.02 + 0.2 * rng.normal()).collect();
    let ones = vec![1.0; n];
    let options = ResampleOptions {
        resamples: 500,
        seed: 4,
        threads: 2,
        ..Default::default()
    };
    let mean = |s: &[f64]| s[0] / s[1];
    let corpus = bootstrap_corpus(&[&base, &ones], &[&cand, &ones], mean, &options).unwrap();
    let deltas = paired_deltas(&base, &cand);
    let paired = paired_resampling(&[&deltas], &options)[0].unwrap();
    assert_close(corpus.delta, paired.mean_delta, 1e-11, "delta");
    assert_close(corpus.ci_low, paired.ci_low, 1e-11, "ci_low");
    assert_close(corpus.ci_high, paired.ci_high, 1e-11, "ci_high");
    assert_close(corpus.std_error, paired.std_error, 1e-9, "std_error");
    assert_eq!(corpus.p_randomization, paired.p_randomization);
    assert_eq!(corpus.resamples_used, 500);

    // A metric that is not scale-invariant (a plain sum) sees resampled corpora of n items:
    // n times the mean's distribution.
    let sum = |s: &[f64]| s[0];
    let summed = bootstrap_corpus(&[&base], &[&cand], sum, &options).unwrap();
    assert_close(
        summed.delta,
        n as f64 * paired.mean_delta,
        1e-11,
        "sum delta",
    );
    assert_close(summed.ci_low, n as f64 * paired.ci_low, 1e-9, "sum ci_low");
    assert_close(
        summed.ci_high,
        n as f64 * paired.ci_high,
        1e-9,
        "sum ci_high",
    );
}

/// Corpus BLEU-like statistics: per item, matches and totals of 1..4-grams and the two lengths.
fn bleu_like_stats(rng: &mut TestRng, n: usize, quality: f64) -> Vec<Vec<f64>> {
    let mut columns: Vec<Vec<f64>> = (0..10).map(|_| Vec::with_capacity(n)).collect();
    for _ in 0..n {
        let hyp_len = 8.0 + (rng.uniform() * 20.0).floor();
        let ref_len = (hyp_len + (rng.uniform() * 6.0).floor() - 2.0).max(1.0);
        for order in 0..4 {
            let total = (hyp_len - order as f64).max(0.0);
            let p = quality.powi(order as i32 + 1) * (0.7 + 0.6 * rng.uniform());
            columns[order].push((total * p.min(1.0)).floor());
            columns[4 + order].push(total);
        }
        columns[8].push(hyp_len);
        columns[9].push(ref_len);
    }
    columns
}

fn bleu_of_sums(s: &[f64]) -> f64 {
    let log_precision: f64 = (0..4).map(|k| (s[k] / s[4 + k]).ln()).sum::<f64>() / 4.0;
    let brevity = if s[8] < s[9] { 1.0 - s[9] / s[8] } else { 0.0 };
    100.0 * (log_precision + brevity).exp()
}

#[test]
fn corpus_resampling_of_bleu_like_statistics() {
    let mut rng = TestRng(77);
    let n = 1500;
    let base = bleu_like_stats(&mut rng, n, 0.55);
    let cand = bleu_like_stats(&mut rng, n, 0.58);
    let base: Vec<&[f64]> = base.iter().map(|c| c.as_slice()).collect();
    let cand: Vec<&[f64]> = cand.iter().map(|c| c.as_slice()).collect();
    let options = |threads| ResampleOptions {
        resamples: 400,
        seed: 12,
        threads,
        ..Default::default()
    };
    let r = bootstrap_corpus(&base, &cand, bleu_of_sums, &options(1)).unwrap();
    assert_eq!(
        Some(r),
        bootstrap_corpus(&base, &cand, bleu_of_sums, &options(3)),
        "thread count"
    );
    assert_close(r.delta, r.candidate - r.baseline, 1e-15, "delta");
    assert!(r.baseline > 5.0 && r.candidate > r.baseline, "{r:?}");
    assert!(r.ci_low < r.delta && r.delta < r.ci_high, "{r:?}");
    assert!(r.std_error > 0.0 && r.p_randomization > 0.0 && r.p_randomization <= 1.0);

    // Swapping the runs negates the delta and the interval; the p-value is unchanged.
    let swapped = bootstrap_corpus(&cand, &base, bleu_of_sums, &options(2)).unwrap();
    assert_eq!(swapped.delta, -r.delta);
    assert_close(swapped.ci_low, -r.ci_high, 1e-12, "swapped ci_low");
    assert_close(swapped.ci_high, -r.ci_low, 1e-12, "swapped ci_high");
    assert_eq!(swapped.p_randomization, r.p_randomization);

    // A run against itself: delta 0, every permutation as extreme.
    let same = bootstrap_corpus(&base, &base, bleu_of_sums, &options(1)).unwrap();
    assert_eq!(
        (same.delta, same.ci_low, same.ci_high, same.p_randomization),
        (0.0, 0.0, 0.0, 1.0)
    );
}

/// 1,000 simulated comparisons of a judged metric scored with 3 samples per item and run: items
/// of varying quality, a candidate better by 0.03 on average (by how much varies by item), and a
/// judge whose samples scatter by 0.2 around each item's true score. The two-level interval
/// covers the true delta at its nominal 95% within binomial error (±2.6 standard errors of a
/// proportion over 1,000 trials), and the judge's share of the variance is what the simulation
/// put in.
#[test]
fn the_two_level_interval_covers_the_true_delta_at_its_nominal_rate() {
    use crate::common::Normal;
    use polars_rag::compare::stats::{two_level_bootstrap, ItemSamples};
    const TRIALS: usize = 1000;
    const ITEMS: usize = 100;
    const SAMPLES: usize = 3;
    let (true_delta, delta_spread, judge_noise) = (0.03, 0.05, 0.2);
    let mut normal = Normal(20261127);
    let (mut covered, mut share_sum) = (0usize, 0.0);
    for trial in 0..TRIALS {
        let items: Vec<(Vec<f64>, Vec<f64>)> = (0..ITEMS)
            .map(|_| {
                let quality = 0.5 + 0.15 * normal.next();
                let better = quality + true_delta + delta_spread * normal.next();
                let baseline = (0..SAMPLES)
                    .map(|_| quality + judge_noise * normal.next())
                    .collect();
                let candidate = (0..SAMPLES)
                    .map(|_| better + judge_noise * normal.next())
                    .collect();
                (baseline, candidate)
            })
            .collect();
        let samples: Vec<ItemSamples> = items
            .iter()
            .map(|(b, c)| ItemSamples {
                baseline: b,
                candidate: c,
            })
            .collect();
        let options = ResampleOptions {
            resamples: 200,
            seed: trial as u64,
            ..Default::default()
        };
        let r = two_level_bootstrap(&samples, &options).unwrap();
        covered += usize::from(r.ci_low <= true_delta && true_delta <= r.ci_high);
        share_sum += r.judge_share;
    }
    let coverage = covered as f64 / TRIALS as f64;
    let standard_error = (0.95f64 * 0.05 / TRIALS as f64).sqrt();
    assert!(
        (coverage - 0.95).abs() <= 2.6 * standard_error,
        "coverage {coverage} outside 0.95 ± {}",
        2.6 * standard_error
    );
    // Judge variance of an item's mean delta: 2 runs × 0.2² / 3 samples; items': 0.05².
    let judge = 2.0 * judge_noise * judge_noise / SAMPLES as f64;
    let expected_share = judge / (judge + delta_spread * delta_spread);
    let share = share_sum / TRIALS as f64;
    assert!(
        (share - expected_share).abs() < 0.03,
        "judge share {share}, expected {expected_share}"
    );
}
