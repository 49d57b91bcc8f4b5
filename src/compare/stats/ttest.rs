//! The paired t-test, the effect size and the pairing of values.

use super::*;

pub use crate::metrics::stats::Alternative;

/// The result of a paired t-test on the deltas `candidate − baseline`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TTest {
    /// Number of pairs.
    pub n: usize,
    /// t = mean / (sd / √n); positive when the candidate scores higher.
    pub statistic: f64,
    /// Degrees of freedom, n − 1.
    pub df: f64,
    /// Two-sided p-value P(|T| ≥ |t|).
    pub p_value: f64,
    /// Mean of the deltas.
    pub mean_delta: f64,
    /// Sample standard deviation of the deltas (divisor n − 1).
    pub sd_delta: f64,
}

impl TTest {
    /// Cohen's d_z = mean / sd of the deltas (also t / √n); see [`effect_size`].
    pub fn effect_size(&self) -> f64 {
        self.mean_delta / self.sd_delta
    }

    /// Standard error of the mean delta, sd / √n.
    pub fn standard_error(&self) -> f64 {
        (self.sd_delta * self.sd_delta / self.n as f64).sqrt()
    }

    /// The p-value under `alternative`: [`TTest::p_value`] for two-sided, P(T ≥ t) for greater,
    /// P(T ≤ t) for less (`scipy.stats.ttest_rel(candidate, baseline, alternative=...)`).
    ///
    /// ```
    /// use polars_rag::compare::stats::{t_test_deltas, Alternative};
    /// let t = t_test_deltas(&[0.1, 0.4, 0.2]).unwrap();
    /// // scipy.stats.ttest_1samp([0.1, 0.4, 0.2], 0, alternative=...).pvalue
    /// assert!((t.p_value_of(Alternative::Greater) - 0.05904144815590157).abs() < 1e-15);
    /// assert!((t.p_value_of(Alternative::Less) - 0.9409585518440984).abs() < 1e-15);
    /// ```
    pub fn p_value_of(&self, alternative: Alternative) -> f64 {
        t_p_value(self.statistic, self.df, self.p_value, alternative)
    }

    /// The t-based confidence interval of the mean delta at level `confidence` under
    /// `alternative`, as scipy's `ttest_rel(...).confidence_interval(confidence)`: mean ± the t
    /// quantile times the standard error; one-sided alternatives leave one end infinite.
    ///
    /// ```
    /// use polars_rag::compare::stats::{t_test_deltas, Alternative};
    /// let t = t_test_deltas(&[0.1, 0.4, 0.2]).unwrap();
    /// let (low, high) = t.confidence_interval(0.95, Alternative::TwoSided);
    /// // scipy: ConfidenceInterval(low=-0.14612497002634264, high=0.6127916366930093)
    /// assert!((low - -0.14612497002634264).abs() < 1e-12 && (high - 0.6127916366930093).abs() < 1e-12);
    /// assert_eq!(t.confidence_interval(0.95, Alternative::Greater).1, f64::INFINITY);
    /// ```
    pub fn confidence_interval(&self, confidence: f64, alternative: Alternative) -> (f64, f64) {
        let se = self.standard_error();
        t_interval(self.mean_delta, se, self.df, confidence, alternative)
    }
}

/// The p-value of a t statistic with `df` degrees of freedom under `alternative`, the two-sided
/// one as computed by its test (shared by the plain and the cluster-robust tests).
pub(super) fn t_p_value(statistic: f64, df: f64, two_sided: f64, alternative: Alternative) -> f64 {
    match alternative {
        Alternative::TwoSided => two_sided,
        Alternative::Greater => student_t_sf(statistic, df),
        Alternative::Less => student_t_cdf(statistic, df),
    }
}

/// The t-based interval of `mean` with standard error `se` at level `confidence`: mean ± the t
/// quantile times the standard error; one-sided alternatives leave one end infinite.
pub(super) fn t_interval(
    mean: f64,
    se: f64,
    df: f64,
    confidence: f64,
    alternative: Alternative,
) -> (f64, f64) {
    match alternative {
        Alternative::TwoSided => {
            let q = student_t_quantile(0.5 + 0.5 * confidence, df);
            (mean - q * se, mean + q * se)
        }
        Alternative::Greater => (
            mean - student_t_quantile(confidence, df) * se,
            f64::INFINITY,
        ),
        Alternative::Less => (
            f64::NEG_INFINITY,
            mean + student_t_quantile(confidence, df) * se,
        ),
    }
}

/// Neumaier-compensated sum: the mean and variance stay within a few ulps at 10⁷ items, where a
/// running sum can lose several digits.
pub(super) fn compensated_sum(values: impl Iterator<Item = f64>) -> f64 {
    let (mut sum, mut carry) = (0.0f64, 0.0f64);
    for v in values {
        let t = sum + v;
        carry += if sum.abs() >= v.abs() {
            (sum - t) + v
        } else {
            (v - t) + sum
        };
        sum = t;
    }
    sum + carry
}

/// Mean and sample standard deviation of `values` (at least two, finite, not all equal).
pub(super) fn mean_sd(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = compensated_sum(values.iter().copied()) / n;
    // Corrected two-pass formula: the second term removes what rounding left in `mean`.
    let deviation = compensated_sum(values.iter().map(|v| v - mean));
    let squares = compensated_sum(values.iter().map(|v| (v - mean) * (v - mean)));
    let var = (squares - deviation * deviation / n) / (n - 1.0);
    (mean, var.sqrt())
}

/// Whether a t-test (or an effect size) is defined on these deltas: at least two, all finite,
/// not all equal.
pub(super) fn testable(deltas: &[f64]) -> bool {
    deltas.len() >= 2
        && deltas.iter().all(|d| d.is_finite())
        && deltas.iter().any(|&d| d != deltas[0])
}

/// The paired t-test of `candidate` against `baseline` (same items, same order):
/// `scipy.stats.ttest_rel(candidate, baseline)`, two-sided.
///
/// `None` when no test is possible:
/// * fewer than two pairs;
/// * every delta equal (identical runs, or a constant shift), where the standard deviation is
///   0 and scipy returns a NaN (0/0) or infinite statistic;
/// * a non-finite value (drop missing pairs first, with [`paired_deltas`]).
///
/// # Panics
/// When the slices differ in length.
///
/// ```
/// use polars_rag::compare::stats::paired_t_test;
/// let baseline = [41.2, 35.0, 50.3, 28.7, 33.3, 47.9, 39.4, 30.0, 44.1, 36.6, 29.8, 52.0];
/// let candidate = [38.9, 35.5, 47.0, 27.1, 30.2, 46.0, 40.1, 26.3, 41.7, 35.0, 27.9, 49.4];
/// let t = paired_t_test(&baseline, &candidate).unwrap();
/// // scipy.stats.ttest_rel(candidate, baseline): the candidate is worse.
/// assert!((t.statistic - -4.938914929978406).abs() < 1e-12);
/// assert!((t.p_value - 0.0004433514313468502).abs() < 1e-15);
/// assert_eq!(t.df, 11.0);
/// assert!(paired_t_test(&baseline, &baseline).is_none());
/// ```
pub fn paired_t_test(baseline: &[f64], candidate: &[f64]) -> Option<TTest> {
    assert_eq!(
        baseline.len(),
        candidate.len(),
        "paired_t_test: baseline and candidate differ in length"
    );
    let deltas: Vec<f64> = candidate.iter().zip(baseline).map(|(c, b)| c - b).collect();
    t_test_deltas(&deltas)
}

/// [`paired_t_test`] on precomputed deltas `candidate − baseline` (a one-sample t-test of mean
/// 0: `scipy.stats.ttest_1samp(deltas, 0)`).
///
/// ```
/// use polars_rag::compare::stats::t_test_deltas;
/// let t = t_test_deltas(&[0.1, 0.4]).unwrap();
/// assert!((t.p_value - 0.34404173924526144).abs() < 1e-14); // scipy.stats.ttest_1samp
/// assert!(t_test_deltas(&[0.5]).is_none());
/// ```
pub fn t_test_deltas(deltas: &[f64]) -> Option<TTest> {
    if !testable(deltas) {
        return None;
    }
    let n = deltas.len();
    let (mean_delta, sd_delta) = mean_sd(deltas);
    // scipy's order of operations: t = mean / sqrt(var / n).
    let statistic = mean_delta / (sd_delta * sd_delta / n as f64).sqrt();
    let df = (n - 1) as f64;
    Some(TTest {
        n,
        statistic,
        df,
        p_value: t_two_sided(statistic, df).0,
        mean_delta,
        sd_delta,
    })
}

/// Cohen's d_z for paired data: mean(delta) / sd(delta), with the sample standard deviation
/// (divisor n − 1) and delta = candidate − baseline. About 0.2 is conventionally "small", 0.5
/// "medium", 0.8 "large".
///
/// `None` in the cases where [`paired_t_test`] gives none.
///
/// # Panics
/// When the slices differ in length.
///
/// ```
/// use polars_rag::compare::stats::effect_size;
/// // Deltas 0.1, 0.2, 0.3: mean 0.2, sd 0.1.
/// let d = effect_size(&[0.5, 0.5, 0.5], &[0.6, 0.7, 0.8]).unwrap();
/// assert!((d - 2.0).abs() < 1e-12);
/// ```
pub fn effect_size(baseline: &[f64], candidate: &[f64]) -> Option<f64> {
    paired_t_test(baseline, candidate).map(|t| t.effect_size())
}

/// The deltas `candidate − baseline` of the pairs where both values are present: a NaN in
/// either run marks an item that run could not score, and the pair is dropped.
///
/// # Panics
/// When the slices differ in length.
///
/// ```
/// use polars_rag::compare::stats::paired_deltas;
/// assert_eq!(paired_deltas(&[0.5, f64::NAN, 0.25], &[0.75, 0.125, f64::NAN]), vec![0.25]);
/// ```
pub fn paired_deltas(baseline: &[f64], candidate: &[f64]) -> Vec<f64> {
    assert_eq!(
        baseline.len(),
        candidate.len(),
        "paired_deltas: baseline and candidate differ in length"
    );
    candidate
        .iter()
        .zip(baseline)
        .filter(|(c, b)| !c.is_nan() && !b.is_nan())
        .map(|(c, b)| c - b)
        .collect()
}
