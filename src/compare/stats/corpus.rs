//! Resampling of corpus-level metrics from summed per-item statistics.

use super::*;

/// The resampling summary of a corpus-level metric.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CorpusResampling {
    /// Number of items.
    pub n: usize,
    /// The metric on the baseline's summed statistics.
    pub baseline: f64,
    /// The metric on the candidate's.
    pub candidate: f64,
    /// `candidate − baseline`.
    pub delta: f64,
    /// Lower end of the percentile bootstrap interval of the delta.
    pub ci_low: f64,
    /// Upper end.
    pub ci_high: f64,
    /// Standard deviation of the bootstrap deltas.
    pub std_error: f64,
    /// Approximate-randomization p-value, two-sided.
    pub p_randomization: f64,
    /// Bootstrap resamples behind the interval (those where the metric was finite).
    pub resamples_used: usize,
    /// One-sided randomization p-value for "the candidate scores higher".
    pub p_greater: f64,
    /// One-sided randomization p-value for "the candidate scores lower".
    pub p_less: f64,
}

impl CorpusResampling {
    /// The randomization p-value under `alternative`.
    pub fn p_value_of(&self, alternative: Alternative) -> f64 {
        match alternative {
            Alternative::TwoSided => self.p_randomization,
            Alternative::Greater => self.p_greater,
            Alternative::Less => self.p_less,
        }
    }
}

/// Paired bootstrap interval and approximate-randomization p-value of `metric(candidate sums) −
/// metric(baseline sums)`, for a corpus-level metric computed from per-item statistics summed
/// over the corpus (corpus BLEU: n-gram matches and totals, hypothesis and reference lengths).
///
/// `baseline[j]` and `candidate[j]` hold statistic j of every item (all of one length n);
/// `metric` receives one value per statistic, in that order.
///
/// * Bootstrap: each resample weights item i by the same Poisson(1) count in both runs (the
///   weights of [`paired_resampling`]), sums the weighted statistics, rescales the sums by
///   n / Σwᵢ (so that metrics that are not scale-invariant see a corpus of n items, as with
///   drawing n items with replacement) and takes the difference of `metric` on the two.
///   Resamples where the difference is not finite are dropped (see `resamples_used`).
/// * Randomization: each resample swaps the two runs' statistics of every item whose sign bit
///   is clear; p = (1 + #{|metric(swapped candidate) − metric(swapped baseline)| ≥ |delta|}) /
///   (R + 1), with a tie tolerance of 10⁻¹⁰ (|baseline| + |candidate|).
///
/// `None` when there are no items or a statistic is not finite; a NaN p-value when `metric` is
/// not finite on the observed sums.
///
/// # Panics
/// When the runs have different numbers of statistics, none, or columns of different lengths;
/// when `options.confidence` is not in (0, 1).
///
/// ```
/// use polars_rag::compare::stats::{bootstrap_corpus, ResampleOptions};
/// // Statistics per item: (correct tokens, total tokens); metric: corpus accuracy.
/// let totals: Vec<f64> = (0..400).map(|i| 5.0 + (i % 7) as f64).collect();
/// let base_correct: Vec<f64> = totals.iter().enumerate().map(|(i, t)| (t * 0.5).floor() - (i % 2) as f64).collect();
/// let cand_correct: Vec<f64> = totals.iter().map(|t| (t * 0.5).floor()).collect();
/// let accuracy = |s: &[f64]| s[0] / s[1];
/// let r = bootstrap_corpus(&[&base_correct, &totals], &[&cand_correct, &totals], accuracy,
///                          &ResampleOptions { seed: 1, ..Default::default() }).unwrap();
/// assert!(r.delta > 0.0 && r.ci_low > 0.0 && r.p_randomization < 0.01);
/// ```
pub fn bootstrap_corpus<F: Fn(&[f64]) -> f64>(
    baseline: &[&[f64]],
    candidate: &[&[f64]],
    metric: F,
    options: &ResampleOptions,
) -> Option<CorpusResampling> {
    let k = baseline.len();
    assert!(
        k > 0 && candidate.len() == k,
        "bootstrap_corpus: the runs need the same, non-zero, number of statistics"
    );
    let n = baseline[0].len();
    assert!(
        baseline.iter().chain(candidate).all(|c| c.len() == n),
        "bootstrap_corpus: statistic columns differ in length"
    );
    assert!(
        options.confidence > 0.0 && options.confidence < 1.0,
        "confidence must be in (0, 1), got {}",
        options.confidence
    );
    // Columns 0..k: the baseline's statistics; k..2k: the candidate's. The resampler's weighted
    // sums are the bootstrap sums, and its sign sums Σ sᵢxᵢ give the swapped sums: with sᵢ = +1
    // keeping item i and −1 swapping it, the swapped candidate sums to
    // (C + Σ sᵢcᵢ) / 2 + (B − Σ sᵢbᵢ) / 2 (exact for count statistics).
    let columns: Vec<&[f64]> = baseline.iter().chain(candidate).copied().collect();
    let resampler = PairedResampler::new(&columns, options.resamples, options.seed);
    if n == 0 || resampler.columns.iter().any(|c| !c.finite) {
        return None;
    }
    let sums = resampler.sums_parallel(options.thread_count());
    let mut sums = resampler.column_sums(&sums);
    let candidate_sums = sums.split_off(k);
    corpus_of_sums(&sums, &candidate_sums, metric, options.confidence)
}

/// [`bootstrap_corpus`] from each statistic's [`ColumnSums`] (the baseline's and the
/// candidate's, one per statistic, all over the same n items and from one seed and resample
/// count), for comparisons that resample their columns a group at a time: the same numbers.
///
/// ```
/// use polars_rag::compare::stats::{bootstrap_corpus, corpus_of_sums, ColumnSums, ResampleOptions};
/// let totals: Vec<f64> = (0..300).map(|i| 4.0 + (i % 5) as f64).collect();
/// let base: Vec<f64> = totals.iter().map(|t| (t * 0.4).floor()).collect();
/// let cand: Vec<f64> = totals.iter().map(|t| (t * 0.6).floor()).collect();
/// let options = ResampleOptions { resamples: 200, seed: 9, ..Default::default() };
/// let accuracy = |s: &[f64]| s[0] / s[1];
/// let sums = |c: &[f64]| ColumnSums::of(c, &options);
/// let apart = corpus_of_sums(&[sums(&base), sums(&totals)], &[sums(&cand), sums(&totals)], accuracy, 0.95);
/// assert_eq!(apart, bootstrap_corpus(&[&base, &totals], &[&cand, &totals], accuracy, &options));
/// ```
///
/// # Panics
/// When the runs have different numbers of statistics, none, or sums of different shapes;
/// when `confidence` is not in (0, 1).
pub fn corpus_of_sums<F: Fn(&[f64]) -> f64>(
    baseline: &[ColumnSums],
    candidate: &[ColumnSums],
    metric: F,
    confidence: f64,
) -> Option<CorpusResampling> {
    let k = baseline.len();
    assert!(
        k > 0 && candidate.len() == k,
        "corpus_of_sums: the runs need the same, non-zero, number of statistics"
    );
    let n = baseline[0].n;
    let resamples = baseline[0].resamples();
    assert!(
        baseline
            .iter()
            .chain(candidate)
            .all(|c| c.n == n && c.resamples() == resamples),
        "corpus_of_sums: statistic sums differ in shape"
    );
    assert!(
        confidence > 0.0 && confidence < 1.0,
        "confidence must be in (0, 1), got {confidence}"
    );
    if n == 0 || baseline.iter().chain(candidate).any(|c| !c.is_finite()) {
        return None;
    }
    let base_total: Vec<f64> = baseline.iter().map(ColumnSums::total).collect();
    let cand_total: Vec<f64> = candidate.iter().map(ColumnSums::total).collect();
    let base_value = metric(&base_total);
    let cand_value = metric(&cand_total);
    let delta = cand_value - base_value;

    let mut base = vec![0.0; k];
    let mut cand = vec![0.0; k];
    let mut deltas = Vec::with_capacity(resamples);
    let tolerance = 1e-10 * (base_value.abs() + cand_value.abs());
    let threshold = delta.abs() - tolerance;
    let (mut extreme, mut above, mut below) = (0usize, 0usize, 0usize);
    for r in 0..resamples {
        // Every column has the same items, hence the same total weight.
        let total_weight = baseline[0].weight(r);
        if total_weight > 0 {
            let rescale = n as f64 / total_weight as f64;
            for j in 0..k {
                base[j] = baseline[j].weighted(r) * rescale;
                cand[j] = candidate[j].weighted(r) * rescale;
            }
            let d = metric(&cand) - metric(&base);
            if d.is_finite() {
                deltas.push(d);
            }
        }
        for j in 0..k {
            let flipped_base = baseline[j].flipped(r);
            let flipped_cand = candidate[j].flipped(r);
            let (b, c) = (base_total[j], cand_total[j]);
            cand[j] = 0.5 * (c + flipped_cand) + 0.5 * (b - flipped_base);
            base[j] = 0.5 * (b + flipped_base) + 0.5 * (c - flipped_cand);
        }
        let swapped = metric(&cand) - metric(&base);
        extreme += usize::from(swapped.abs() >= threshold);
        above += usize::from(swapped >= delta - tolerance);
        below += usize::from(swapped <= delta + tolerance);
    }
    let (ci_low, ci_high, std_error) = percentile_interval(&mut deltas, confidence);
    let p = |count: usize| {
        if delta.is_finite() {
            (1 + count) as f64 / (resamples + 1) as f64
        } else {
            f64::NAN
        }
    };
    Some(CorpusResampling {
        n,
        baseline: base_value,
        candidate: cand_value,
        delta,
        ci_low,
        ci_high,
        std_error,
        p_randomization: p(extreme),
        resamples_used: deltas.len(),
        p_greater: p(above),
        p_less: p(below),
    })
}
