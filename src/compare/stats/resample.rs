//! The paired bootstrap and approximate randomization over many metrics at once, in blocks.

use super::*;

/// Items per block: the unit of work, of scheduling and of reproducibility (a multiple of 64,
/// the sign bits one random draw supplies). 1,024 items of 10 metrics are 80 KB, which stay in
/// the L2 cache while the block runs through all its resamples.
pub const RESAMPLE_BLOCK: usize = 1024;

/// Settings of [`paired_resampling`] and [`bootstrap_corpus`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResampleOptions {
    /// Bootstrap resamples and sign-flip permutations (the same count for both). Default 1,000.
    /// With 0 the interval is NaN and the p-value 1.
    pub resamples: usize,
    /// Confidence level of the interval, in (0, 1). Default 0.95.
    pub confidence: f64,
    /// Seed of the counter-based generator: the same seed gives the same numbers, whatever the
    /// thread count. Default 0.
    pub seed: u64,
    /// Threads; 0 = `std::thread::available_parallelism()`. Default 0.
    pub threads: usize,
}

impl Default for ResampleOptions {
    fn default() -> Self {
        ResampleOptions {
            resamples: 1000,
            confidence: 0.95,
            seed: 0,
            threads: 0,
        }
    }
}

impl ResampleOptions {
    /// The thread count to use: `threads`, or the available parallelism when 0.
    pub fn thread_count(&self) -> usize {
        match self.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
    }
}

/// The resampling summary of one metric's deltas.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairedResampling {
    /// Number of deltas.
    pub n: usize,
    /// Their mean.
    pub mean_delta: f64,
    /// Lower end of the percentile bootstrap interval of the mean delta.
    pub ci_low: f64,
    /// Upper end.
    pub ci_high: f64,
    /// Standard deviation of the bootstrap means (the bootstrap standard error).
    pub std_error: f64,
    /// Approximate-randomization p-value, two-sided: (1 + #{|Σ sᵢdᵢ| ≥ |Σ dᵢ|}) / (R + 1) over
    /// R random sign vectors s.
    pub p_randomization: f64,
    /// Bootstrap resamples behind the interval: R minus those whose weights were all zero
    /// (probability e⁻ⁿ per resample, so only for a handful of items).
    pub resamples_used: usize,
    /// One-sided randomization p-value for "the candidate scores higher":
    /// (1 + #{Σ sᵢdᵢ ≥ Σ dᵢ}) / (R + 1).
    pub p_greater: f64,
    /// One-sided randomization p-value for "the candidate scores lower":
    /// (1 + #{Σ sᵢdᵢ ≤ Σ dᵢ}) / (R + 1).
    pub p_less: f64,
}

impl PairedResampling {
    /// The randomization p-value under `alternative`.
    pub fn p_value_of(&self, alternative: Alternative) -> f64 {
        match alternative {
            Alternative::TwoSided => self.p_randomization,
            Alternative::Greater => self.p_greater,
            Alternative::Less => self.p_less,
        }
    }
}

/// The exact per-resample sums of a range of blocks: add up results from any partition of the
/// blocks with [`ResampleSums::merge`], in any order, and get the same bits.
///
/// Each block's sums are computed in `f64` in a fixed order, then added in fixed point (`i128`,
/// with a per-metric quantum ~2⁻¹²⁰ of the largest possible total), where addition is exact
/// and so associative: this is what makes the results independent of the thread count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResampleSums {
    pub(super) resamples: usize,
    /// Σ dᵢ per metric.
    pub(super) observed: Vec<i128>,
    /// Σ wᵢ dᵢ per (metric, resample), metric-major.
    pub(super) weighted: Vec<i128>,
    /// Σ sᵢ dᵢ per (metric, resample).
    pub(super) flipped: Vec<i128>,
    /// Σ wᵢ per (metric, resample).
    pub(super) weights: Vec<u64>,
}

impl ResampleSums {
    fn zeros(metrics: usize, resamples: usize) -> Self {
        ResampleSums {
            resamples,
            observed: vec![0; metrics],
            weighted: vec![0; metrics * resamples],
            flipped: vec![0; metrics * resamples],
            weights: vec![0; metrics * resamples],
        }
    }

    /// Adds the sums of another, disjoint, range of blocks of the same [`PairedResampler`].
    ///
    /// # Panics
    /// When the two come from resamplers of different shapes.
    pub fn merge(&mut self, other: &ResampleSums) {
        assert!(
            self.resamples == other.resamples && self.observed.len() == other.observed.len(),
            "ResampleSums::merge: different shapes"
        );
        for (a, b) in self.observed.iter_mut().zip(&other.observed) {
            *a += b;
        }
        for (a, b) in self.weighted.iter_mut().zip(&other.weighted) {
            *a += b;
        }
        for (a, b) in self.flipped.iter_mut().zip(&other.flipped) {
            *a += b;
        }
        for (a, b) in self.weights.iter_mut().zip(&other.weights) {
            *a += b;
        }
    }
}

/// `x · 2^k`, exact unless the result under- or overflows (split so that 2^k itself never does).
pub(super) fn scale_pow2(mut x: f64, mut k: i32) -> f64 {
    while k != 0 {
        let step = k.clamp(-1000, 1000);
        x *= f64::from_bits(((step + 1023) as u64) << 52);
        k -= step;
    }
    x
}

/// A metric's column and the constants of its fixed-point accumulation.
#[derive(Clone, Debug)]
pub(super) struct Column<'a> {
    pub(super) values: &'a [f64],
    /// All values finite (else the metric is skipped and reported as `None`).
    pub(super) finite: bool,
    /// The fixed-point quantum is 2^exponent.
    pub(super) exponent: i32,
    /// Σ |dᵢ|, the scale of the tie tolerance of the randomization test.
    pub(super) abs_sum: f64,
}

impl Column<'_> {
    #[inline]
    pub(super) fn to_fixed(&self, x: f64) -> i128 {
        scale_pow2(x, -self.exponent).round() as i128
    }
}

/// Paired bootstrap and sign-flip randomization of several metrics' deltas, block by block.
///
/// [`paired_resampling`] is this with `std::thread::scope`; use the resampler directly to run
/// the blocks on another thread pool:
///
/// ```
/// use polars_rag::compare::stats::PairedResampler;
/// let a: Vec<f64> = (0..5000).map(|i| ((i as f64).sin() + 0.1) * 0.2).collect();
/// let b: Vec<f64> = (0..3000).map(|i| (i as f64 * 0.7).cos() * 0.1).collect();
/// let resampler = PairedResampler::new(&[&a, &b], 200, 42);
/// let blocks = resampler.block_count(); // 5 blocks of 1,024 items
/// let mut sums = resampler.sums(0..2); // e.g. on one worker ...
/// sums.merge(&resampler.sums(2..blocks)); // ... and on another
/// let results = resampler.summarize(&sums, 0.95);
/// assert_eq!(sums, resampler.sums(0..blocks)); // bit for bit
/// assert!(results[0].unwrap().p_randomization < 0.01);
/// ```
#[derive(Clone, Debug)]
pub struct PairedResampler<'a> {
    pub(super) columns: Vec<Column<'a>>,
    pub(super) resamples: usize,
    pub(super) seed: u64,
    /// Length of the longest column.
    pub(super) len: usize,
    pub(super) poisson: PoissonTable,
}

impl<'a> PairedResampler<'a> {
    /// A resampler over one slice of deltas per metric (lengths may differ: item `i` of every
    /// metric gets the same weight and sign in a given resample), `resamples` bootstrap and
    /// sign-flip resamples, and `seed`.
    pub fn new(deltas: &[&'a [f64]], resamples: usize, seed: u64) -> Self {
        let poisson = PoissonTable::new();
        let max_weight = poisson.max_weight().max(1) as f64;
        let columns = deltas
            .iter()
            .map(|&values| {
                let finite = values.iter().all(|v| v.is_finite());
                let max_abs = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                // |Σ wᵢdᵢ| ≤ max|d| · n · max w: give that bound 2¹²¹ quanta, so an i128 total
                // never overflows and its resolution is far below an f64 ulp of any sum.
                let bound = max_abs * values.len() as f64 * max_weight;
                let exponent = if finite && bound > 0.0 {
                    bound.log2().ceil() as i32 - 121
                } else {
                    0
                };
                Column {
                    values,
                    finite,
                    exponent,
                    abs_sum: values.iter().map(|v| v.abs()).sum(),
                }
            })
            .collect::<Vec<_>>();
        let len = columns.iter().map(|c| c.values.len()).max().unwrap_or(0);
        PairedResampler {
            columns,
            resamples,
            seed,
            len,
            poisson,
        }
    }

    /// Number of blocks of [`RESAMPLE_BLOCK`] items (the last one possibly shorter).
    pub fn block_count(&self) -> usize {
        self.len.div_ceil(RESAMPLE_BLOCK)
    }

    /// The sums of the blocks in `blocks` (a range of block indices).
    pub fn sums(&self, blocks: Range<usize>) -> ResampleSums {
        let mut sums = ResampleSums::zeros(self.columns.len(), self.resamples);
        let mut weights = vec![0.0; RESAMPLE_BLOCK];
        let mut signs = vec![0.0; RESAMPLE_BLOCK];
        for block in blocks.start..blocks.end.min(self.block_count()) {
            self.accumulate_block(block, &mut weights, &mut signs, &mut sums);
        }
        sums
    }

    /// The sums of all blocks, computed on `threads` scoped threads (contiguous ranges of
    /// blocks). Identical, bit for bit, for every thread count.
    pub fn sums_parallel(&self, threads: usize) -> ResampleSums {
        let blocks = self.block_count();
        let threads = threads.clamp(1, blocks.max(1));
        if threads == 1 {
            return self.sums(0..blocks);
        }
        let per_thread = blocks.div_ceil(threads);
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|t| {
                    let range = (t * per_thread).min(blocks)..((t + 1) * per_thread).min(blocks);
                    scope.spawn(move || self.sums(range))
                })
                .collect();
            let mut total = ResampleSums::zeros(self.columns.len(), self.resamples);
            for worker in workers {
                total.merge(&worker.join().expect("resampling worker panicked"));
            }
            total
        })
    }

    /// Runs one block through every resample: draws its weights and signs once per resample and
    /// applies them to every metric while the block's values are in cache.
    fn accumulate_block(
        &self,
        block: usize,
        weights: &mut [f64],
        signs: &mut [f64],
        sums: &mut ResampleSums,
    ) {
        let start = block * RESAMPLE_BLOCK;
        let end = (start + RESAMPLE_BLOCK).min(self.len);
        let resamples = self.resamples;
        for (m, column) in self.columns.iter().enumerate() {
            if column.finite && column.values.len() > start {
                let hi = column.values.len().min(end);
                sums.observed[m] += column.to_fixed(sum_lanes(&column.values[start..hi]));
            }
        }
        let weights = &mut weights[..end - start];
        let signs = &mut signs[..end - start];
        for r in 0..resamples {
            let total_weight = fill_poisson(
                &self.poisson,
                resample_key(self.seed, POISSON_STREAM, r),
                start,
                weights,
            );
            fill_signs(resample_key(self.seed, SIGN_STREAM, r), start, signs);
            for (m, column) in self.columns.iter().enumerate() {
                if !column.finite || column.values.len() <= start {
                    continue;
                }
                let hi = column.values.len().min(end);
                let k = hi - start;
                let (weighted, flipped) =
                    dot_weights_signs(&weights[..k], &signs[..k], &column.values[start..hi]);
                let at = m * resamples + r;
                sums.weighted[at] += column.to_fixed(weighted);
                sums.flipped[at] += column.to_fixed(flipped);
                sums.weights[at] += if hi == end {
                    total_weight
                } else {
                    // Small integers: the f64 sum is exact.
                    weights[..k].iter().sum::<f64>() as u64
                };
            }
        }
    }

    /// The per-metric summaries from the sums of all blocks; `None` for a metric with no deltas
    /// or a non-finite one. `confidence` is the interval's level, in (0, 1).
    ///
    /// The interval is the percentile interval of the R bootstrap means Σwᵢdᵢ / Σwᵢ (each wᵢ an
    /// independent Poisson(1) count, the large-sample equivalent of drawing n items with
    /// replacement, which lets every item be weighted on its own) at the quantiles
    /// (1 ± confidence) / 2, with numpy's default quantile rule (linear interpolation between
    /// the sorted values at position q·(R − 1)).
    ///
    /// The p-value counts the sign vectors whose |Σ sᵢdᵢ| reaches |Σ dᵢ| less a tolerance of
    /// 10⁻¹⁰ Σ|dᵢ|, so that rounding does not break exact ties (deltas with a few distinct
    /// values).
    ///
    /// # Panics
    /// When `confidence` is not in (0, 1), or `sums` has another shape.
    pub fn summarize(&self, sums: &ResampleSums, confidence: f64) -> Vec<Option<PairedResampling>> {
        self.column_sums(sums)
            .iter()
            .map(|column| column.summarize(confidence))
            .collect()
    }

    /// The sums of each column on its own (see [`ColumnSums`]): a column's sums depend on its
    /// values, the seed and the resample count only, not on the other columns resampled with it.
    ///
    /// # Panics
    /// When `sums` has another shape.
    pub fn column_sums(&self, sums: &ResampleSums) -> Vec<ColumnSums> {
        assert!(
            sums.resamples == self.resamples && sums.observed.len() == self.columns.len(),
            "column_sums: sums of another resampler"
        );
        let resamples = self.resamples;
        self.columns
            .iter()
            .enumerate()
            .map(|(m, column)| {
                let rows = m * resamples..(m + 1) * resamples;
                ColumnSums {
                    n: column.values.len(),
                    finite: column.finite,
                    exponent: column.exponent,
                    abs_sum: column.abs_sum,
                    observed: sums.observed[m],
                    weighted: sums.weighted[rows.clone()].to_vec(),
                    flipped: sums.flipped[rows.clone()].to_vec(),
                    weights: sums.weights[rows].to_vec(),
                }
            })
            .collect()
    }
}

/// One column's resampling sums, kept after its values are dropped: a comparison of more
/// items and metrics than fit in memory at once resamples its columns a group at a time and
/// summarises them from these, with the same numbers as one resampler over all columns.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnSums {
    /// Values in the column.
    pub n: usize,
    /// Whether all of them were finite (else the column has no summary).
    finite: bool,
    /// The fixed-point quantum is 2^exponent.
    exponent: i32,
    /// Σ |xᵢ|, the scale of the randomization test's tie tolerance.
    abs_sum: f64,
    observed: i128,
    weighted: Vec<i128>,
    flipped: Vec<i128>,
    weights: Vec<u64>,
}

impl ColumnSums {
    /// The sums of `values` resampled alone (the same as in a resampler with other columns).
    ///
    /// ```
    /// use polars_rag::compare::stats::{ColumnSums, PairedResampler, ResampleOptions};
    /// let a: Vec<f64> = (0..3000).map(|i| (i as f64).sin()).collect();
    /// let b: Vec<f64> = (0..2000).map(|i| (i as f64).cos()).collect();
    /// let options = ResampleOptions { resamples: 100, seed: 3, ..Default::default() };
    /// let together = PairedResampler::new(&[&a, &b], 100, 3);
    /// let sums = together.column_sums(&together.sums(0..together.block_count()));
    /// assert_eq!(sums[1], ColumnSums::of(&b, &options));
    /// ```
    pub fn of(values: &[f64], options: &ResampleOptions) -> ColumnSums {
        let resampler = PairedResampler::new(&[values], options.resamples, options.seed);
        let sums = resampler.sums_parallel(options.thread_count());
        resampler.column_sums(&sums).remove(0)
    }

    /// A column of zeros with the items (and so the weights) of this one.
    pub fn zeros_like(&self) -> ColumnSums {
        ColumnSums {
            n: self.n,
            finite: true,
            exponent: 0,
            abs_sum: 0.0,
            observed: 0,
            weighted: vec![0; self.weighted.len()],
            flipped: vec![0; self.flipped.len()],
            weights: self.weights.clone(),
        }
    }

    /// Resamples behind the sums.
    pub fn resamples(&self) -> usize {
        self.weighted.len()
    }

    /// Whether every value was finite.
    pub fn is_finite(&self) -> bool {
        self.finite
    }

    pub(super) fn to_f64(&self, v: i128) -> f64 {
        scale_pow2(v as f64, self.exponent)
    }

    /// Σ xᵢ.
    pub fn total(&self) -> f64 {
        self.to_f64(self.observed)
    }

    /// Σ wᵢxᵢ of resample `r`.
    pub fn weighted(&self, r: usize) -> f64 {
        self.to_f64(self.weighted[r])
    }

    /// Σ sᵢxᵢ of resample `r`.
    pub fn flipped(&self, r: usize) -> f64 {
        self.to_f64(self.flipped[r])
    }

    /// Σ wᵢ of resample `r`.
    pub fn weight(&self, r: usize) -> u64 {
        self.weights[r]
    }

    /// The bootstrap interval and randomization p-values of the column's mean (see
    /// [`PairedResampler::summarize`]); `None` for an empty column or a non-finite one.
    ///
    /// # Panics
    /// When `confidence` is not in (0, 1).
    pub fn summarize(&self, confidence: f64) -> Option<PairedResampling> {
        assert!(
            confidence > 0.0 && confidence < 1.0,
            "confidence must be in (0, 1), got {confidence}"
        );
        let n = self.n;
        if n == 0 || !self.finite {
            return None;
        }
        let resamples = self.resamples();
        let observed = self.total();
        let mut means: Vec<f64> = self
            .weighted
            .iter()
            .zip(&self.weights)
            .filter(|&(_, &w)| w > 0)
            .map(|(&s, &w)| self.to_f64(s) / w as f64)
            .collect();
        let tolerance = 1e-10 * self.abs_sum;
        let threshold = observed.abs() - tolerance;
        let (mut extreme, mut above, mut below) = (0usize, 0usize, 0usize);
        for &s in &self.flipped {
            let flipped = self.to_f64(s);
            extreme += usize::from(flipped.abs() >= threshold);
            above += usize::from(flipped >= observed - tolerance);
            below += usize::from(flipped <= observed + tolerance);
        }
        let p = |count: usize| (1 + count) as f64 / (resamples + 1) as f64;
        let (ci_low, ci_high, std_error) = percentile_interval(&mut means, confidence);
        Some(PairedResampling {
            n,
            mean_delta: observed / n as f64,
            ci_low,
            ci_high,
            std_error,
            p_randomization: p(extreme),
            resamples_used: means.len(),
            p_greater: p(above),
            p_less: p(below),
        })
    }
}

/// Sums with the 8-lane pattern of [`dot_weights_signs`], so that all signs +1 reproduce it
/// bit for bit (exact ties in the randomization test stay ties).
pub(super) fn sum_lanes(values: &[f64]) -> f64 {
    let mut lanes = [0.0f64; LANES];
    let split = values.len() - values.len() % LANES;
    for chunk in values[..split].chunks_exact(LANES) {
        for j in 0..LANES {
            lanes[j] += chunk[j];
        }
    }
    for &v in &values[split..] {
        lanes[0] += v;
    }
    combine_lanes(lanes)
}

/// Independent accumulators: they let the compiler keep the sums in vector registers without
/// reassociating floating-point additions, so the result is the same on every target.
pub(super) const LANES: usize = 8;

#[inline(always)]
pub(super) fn combine_lanes(l: [f64; LANES]) -> f64 {
    ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]))
}

/// `(Σ wᵢdᵢ, Σ sᵢdᵢ)` in one pass over the deltas.
#[inline]
pub(super) fn dot_weights_signs(weights: &[f64], signs: &[f64], values: &[f64]) -> (f64, f64) {
    let mut by_weight = [0.0f64; LANES];
    let mut by_sign = [0.0f64; LANES];
    let split = values.len() - values.len() % LANES;
    let chunks = weights[..split]
        .chunks_exact(LANES)
        .zip(signs[..split].chunks_exact(LANES))
        .zip(values[..split].chunks_exact(LANES));
    for ((w, s), d) in chunks {
        for j in 0..LANES {
            by_weight[j] += w[j] * d[j];
            by_sign[j] += s[j] * d[j];
        }
    }
    for i in split..values.len() {
        by_weight[0] += weights[i] * values[i];
        by_sign[0] += signs[i] * values[i];
    }
    (combine_lanes(by_weight), combine_lanes(by_sign))
}

/// Fills `weights` with the Poisson(1) weights of items `start..start + weights.len()` (two per
/// random draw; `start` is even) and returns their sum.
#[inline]
pub(super) fn fill_poisson(
    table: &PoissonTable,
    key: u64,
    start: usize,
    weights: &mut [f64],
) -> u64 {
    let first = (start / 2) as u64;
    let mut total = 0u64;
    for (j, pair) in weights.chunks_mut(2).enumerate() {
        let bits = draw(key, first + j as u64);
        let w0 = table.sample(bits as u32);
        pair[0] = w0 as f64;
        total += w0 as u64;
        if let Some(second) = pair.get_mut(1) {
            let w1 = table.sample((bits >> 32) as u32);
            *second = w1 as f64;
            total += w1 as u64;
        }
    }
    total
}

/// The bits of −1.0.
pub(super) const MINUS_ONE_BITS: u64 = 0xbff0_0000_0000_0000;

/// Fills `signs` with ±1 for items `start..start + signs.len()` (64 per random draw; `start` is a
/// multiple of 64).
#[inline]
pub(super) fn fill_signs(key: u64, start: usize, signs: &mut [f64]) {
    let first = (start / 64) as u64;
    for (j, chunk) in signs.chunks_mut(64).enumerate() {
        let bits = draw(key, first + j as u64);
        for (b, s) in chunk.iter_mut().enumerate() {
            // −1.0 with its sign bit flipped when the item's bit is set: branch-free, so the
            // loop vectorizes.
            *s = f64::from_bits(MINUS_ONE_BITS ^ (((bits >> b) & 1) << 63));
        }
    }
}

/// `(low, high, standard deviation)` of a bootstrap distribution (sorted in place): the
/// quantiles (1 ∓ confidence) / 2 by linear interpolation between order statistics at position
/// q·(N − 1) (numpy's default `method="linear"`, Hyndman & Fan type 7). NaN when empty (and
/// the deviation when fewer than two).
pub(crate) fn percentile_interval(values: &mut [f64], confidence: f64) -> (f64, f64, f64) {
    if values.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    values.sort_unstable_by(f64::total_cmp);
    let quantile = |q: f64| {
        let position = q * (values.len() - 1) as f64;
        let below = position.floor() as usize;
        let above = (below + 1).min(values.len() - 1);
        let fraction = position - below as f64;
        values[below] + fraction * (values[above] - values[below])
    };
    let alpha = 1.0 - confidence;
    let (low, high) = (quantile(alpha / 2.0), quantile(1.0 - alpha / 2.0));
    let sd = if values.len() >= 2 {
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        (values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        f64::NAN
    };
    (low, high, sd)
}

/// Bootstrap confidence interval and approximate-randomization p-value of the mean delta of
/// each metric; one slice of deltas `candidate − baseline` per metric (see [`paired_deltas`]),
/// `None` for a metric with no deltas or a non-finite one.
///
/// * Bootstrap: R resamples, each giving every item an independent Poisson(1) weight wᵢ; the
///   resampled mean is Σwᵢdᵢ / Σwᵢ; percentile interval at `options.confidence` (quantile rule
///   in [`PairedResampler::summarize`]), and the standard deviation of the R means as standard
///   error.
/// * Randomization: under "no difference" each delta is as likely to have either sign; R random
///   sign vectors give p = (1 + #{|Σsᵢdᵢ| ≥ |Σdᵢ|}) / (R + 1), two-sided, never 0.
///
/// Cost ∝ items × metrics × R; item i's weight and sign in resample r are a hash of
/// (seed, r, i), so the numbers depend on the seed only, not on `options.threads`.
///
/// # Panics
/// When `options.confidence` is not in (0, 1).
///
/// ```
/// use polars_rag::compare::stats::{paired_resampling, ResampleOptions};
/// // A clear improvement and pure noise, 500 items each.
/// let better: Vec<f64> = (0..500).map(|i| 0.05 + 0.1 * (i as f64 * 1.3).sin()).collect();
/// let noise: Vec<f64> = (0..500).map(|i| 0.1 * (i as f64 * 1.3).sin()).collect();
/// let options = ResampleOptions { resamples: 999, seed: 7, ..Default::default() };
/// let results = paired_resampling(&[&better, &noise], &options);
/// let (better, noise) = (results[0].unwrap(), results[1].unwrap());
/// assert!(better.ci_low > 0.0 && better.p_randomization == 0.001); // no sign flip reaches it
/// assert!(noise.ci_low < noise.mean_delta && noise.mean_delta < noise.ci_high);
/// ```
pub fn paired_resampling(
    deltas: &[&[f64]],
    options: &ResampleOptions,
) -> Vec<Option<PairedResampling>> {
    let resampler = PairedResampler::new(deltas, options.resamples, options.seed);
    let sums = resampler.sums_parallel(options.thread_count());
    resampler.summarize(&sums, options.confidence)
}
