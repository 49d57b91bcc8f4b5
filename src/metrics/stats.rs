//! Paired comparison statistics: is a candidate run better or worse than a baseline scored on
//! the same items?
//!
//! Pure Rust over `&[f64]` (no Polars), the kernel of the `compare` command. Every function
//! takes per-item metric values of the two runs, paired by position, and reports on the delta
//! `candidate − baseline` (positive: the candidate scores higher).
//!
//! * [`paired_t_test`]: Student's paired t-test, equal to
//!   `scipy.stats.ttest_rel(candidate, baseline)` (statistic, two-sided p-value, degrees of
//!   freedom), with the mean and standard deviation of the deltas.
//! * [`effect_size`]: Cohen's d_z, the mean delta in units of the deltas' standard deviation.
//! * [`paired_resampling`]: for many metrics at once, a percentile bootstrap confidence interval
//!   of the mean delta and an approximate-randomization (sign-flip) p-value, built for
//!   10^6 items × 10 metrics × 1,000 resamples in seconds; [`PairedResampler`] exposes the
//!   blocks so that a caller can schedule them on its own thread pool.
//! * [`bootstrap_corpus`]: the same two procedures for a corpus-level metric computed from summed
//!   per-item statistics (corpus BLEU from n-gram match and length counts).
//! * The special functions underneath: [`ln_gamma`], [`regularized_incomplete_beta`],
//!   [`student_t_cdf`], [`student_t_sf`].
//!
//! Missing values: the functions take complete pairs. Drop the items that either run failed to
//! score with [`paired_deltas`] (per metric: each metric may keep a different number of items).
//!
//! ```
//! use polars_rag::metrics::stats::{paired_t_test, paired_resampling, ResampleOptions};
//! let baseline = [0.61, 0.42, 0.78, 0.55, 0.30];
//! let candidate = [0.66, 0.40, 0.85, 0.61, 0.38];
//! let t = paired_t_test(&baseline, &candidate).unwrap();
//! assert!((t.p_value - 0.05360396214530979).abs() < 1e-12); // scipy.stats.ttest_rel
//!
//! let deltas: Vec<f64> = candidate.iter().zip(&baseline).map(|(c, b)| c - b).collect();
//! let r = paired_resampling(&[&deltas], &ResampleOptions::default())[0].unwrap();
//! assert!(r.ci_low <= r.mean_delta && r.mean_delta <= r.ci_high);
//! ```

use std::ops::Range;

// ---------------------------------------------------------------------------------------------
// Special functions
// ---------------------------------------------------------------------------------------------

/// ln √(2π), the constant of Stirling's formula.
const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// Stirling's formula without its correction: `(z − ½) ln z − z + ln √(2π)`.
fn stirling_main(z: f64) -> f64 {
    (z - 0.5) * z.ln() - z + LN_SQRT_2PI
}

/// The asymptotic series of `ln Γ(z) − stirling_main(z)`, for `z ≥ 10`: the terms
/// B₂ₖ / (2k (2k − 1) z^(2k−1)) up to k = 8; the first omitted one is below 2·10⁻¹⁸ at z = 10.
fn stirling_series(z: f64) -> f64 {
    let r = 1.0 / z;
    let r2 = r * r;
    r * (1.0 / 12.0
        + r2 * (-1.0 / 360.0
            + r2 * (1.0 / 1260.0
                + r2 * (-1.0 / 1680.0
                    + r2 * (1.0 / 1188.0
                        + r2 * (-691.0 / 360_360.0
                            + r2 * (1.0 / 156.0 + r2 * (-3617.0 / 122_400.0))))))))
}

/// Below this argument, ln Γ is computed by shifting up to it with Γ(z + 1) = z Γ(z).
const STIRLING_FROM: f64 = 10.0;

/// `(z + k, ln(z (z + 1) ⋯ (z + k − 1)))` with `k` the number of unit steps that bring `z` to at
/// least [`STIRLING_FROM`] (0 when it is already there).
fn shift_up(z: f64) -> (f64, f64) {
    let mut product = 1.0;
    let mut k = 0.0;
    // `z + k` is formed afresh at each step (one rounding), not accumulated.
    while z + k < STIRLING_FROM {
        product *= z + k;
        k += 1.0;
    }
    (z + k, product.ln())
}

/// `ln Γ(z) − stirling_main(z)`, the small correction term that the power terms of the
/// incomplete beta function combine separately so that the large parts cancel analytically.
fn stirling_correction(z: f64) -> f64 {
    if z >= STIRLING_FROM {
        return stirling_series(z);
    }
    let (shifted, ln_product) = shift_up(z);
    stirling_series(shifted) + stirling_main(shifted) - stirling_main(z) - ln_product
}

/// The natural logarithm of the gamma function, for `z > 0` (NaN otherwise).
///
/// Stirling's series with eight correction terms at `z ≥ 10`, and the recurrence
/// Γ(z + 1) = z Γ(z) below; the absolute error is a few 10⁻¹⁵ (so near the zeros at 1 and 2
/// the relative error is larger).
///
/// ```
/// use polars_rag::metrics::stats::ln_gamma;
/// assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-14);
/// assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-14);
/// ```
pub fn ln_gamma(z: f64) -> f64 {
    if z.is_nan() || z <= 0.0 {
        return f64::NAN;
    }
    if z >= STIRLING_FROM {
        return stirling_main(z) + stirling_series(z);
    }
    let (shifted, ln_product) = shift_up(z);
    stirling_main(shifted) + stirling_series(shifted) - ln_product
}

/// `ln(x^a y^b / B(a, b))`, the front factor of the incomplete beta function, from `ln x` and
/// `ln y` (y = 1 − x), which the caller computes without cancellation.
///
/// Written with Stirling's formula for the three gamma functions of B(a, b) so that the huge
/// terms cancel analytically: at a = 5·10⁶ (a t-test with 10⁷ items), `ln Γ(a)` is 7·10⁷ and a
/// direct difference of log-gammas would keep only ~8 significant digits of the result. Here
/// every term stays of the order of the result.
fn ln_beta_front(a: f64, b: f64, ln_x: f64, ln_y: f64) -> f64 {
    let ab = a + b;
    a * (ln_x + (b / a).ln_1p()) + b * (ln_y + (a / b).ln_1p()) + 0.5 * (a.ln() + (b / ab).ln())
        - LN_SQRT_2PI
        + stirling_correction(ab)
        - stirling_correction(a)
        - stirling_correction(b)
}

/// The continued fraction of I_x(a, b) (Numerical Recipes' `betacf`), evaluated by the modified
/// Lentz method; it converges fast for `x < (a + 1) / (a + b + 2)`. `y` is 1 − x.
fn beta_continued_fraction(a: f64, b: f64, x: f64, y: f64) -> f64 {
    // Lentz's guard against a zero denominator.
    const TINY: f64 = 1e-300;
    // The number of terms grows like √max(a, b) when both parameters are large and x is near
    // the switch point; the cap only stops a runaway on absurd inputs.
    let max_terms = 200 + (20.0 * a.max(b).sqrt()).min(1e8) as usize;
    let clamp = |v: f64| if v.abs() < TINY { TINY } else { v };
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    // The first denominator 1 − (a + b)x / (a + 1) nearly cancels when a is large and x close
    // to 1 (t-tests on many items), and the whole fraction is about its reciprocal: there the
    // equal form (1 − b + (a + b)y) / (a + 1) keeps the digits. Take the form whose terms are
    // smaller.
    let first = if qab * x / qap <= ((1.0 - b).abs() + qab * y) / qap {
        1.0 - qab * x / qap
    } else {
        (1.0 - b + qab * y) / qap
    };
    let mut d = 1.0 / clamp(first);
    let mut h = d;
    for m in 1..=max_terms {
        let m = m as f64;
        let m2 = 2.0 * m;
        // Even step.
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 / clamp(1.0 + aa * d);
        c = clamp(1.0 + aa / c);
        h *= d * c;
        // Odd step.
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 / clamp(1.0 + aa * d);
        c = clamp(1.0 + aa / c);
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() <= f64::EPSILON {
            break;
        }
    }
    h
}

/// `(I_x(a, b), 1 − I_x(a, b))`, each accurate in relative terms: the tail on the side of x
/// where the continued fraction converges is computed, and that is the smaller tail, so the
/// other one, formed as `1 − tail`, loses nothing that matters.
fn incomplete_beta_parts(a: f64, b: f64, x: f64, y: f64, ln_x: f64, ln_y: f64) -> (f64, f64) {
    if x < (a + 1.0) / (a + b + 2.0) {
        let lower = incomplete_beta_tail(a, b, x, y, ln_x, ln_y).min(1.0);
        (lower, 1.0 - lower)
    } else {
        // Symmetry: I_x(a, b) = 1 − I_y(b, a).
        let upper = incomplete_beta_tail(b, a, y, x, ln_y, ln_x).min(1.0);
        (1.0 - upper, upper)
    }
}

/// I_x(a, b) for `x < (a + 1) / (a + b + 2)`.
fn incomplete_beta_tail(a: f64, b: f64, x: f64, y: f64, ln_x: f64, ln_y: f64) -> f64 {
    // With a large and b ≤ 1 (the t distribution with many degrees of freedom: a = df/2,
    // b = ½), x is close to 1 and every step of the continued fraction subtracts numbers close
    // to 1: at df = 10⁷ it loses 5 digits. The asymptotic expansion in a has no such
    // cancellation and converges fastest exactly there.
    if a >= 100.0 && b <= 1.0 && x >= 0.5 {
        return beta_large_a_small_b(a, b, ln_x);
    }
    ln_beta_front(a, b, ln_x, ln_y).exp() * beta_continued_fraction(a, b, x, y) / a
}

/// (2k + 1)! for k = 0..=30, the denominators of [`beta_large_a_small_b`]'s coefficients.
fn odd_factorials() -> [f64; 31] {
    let mut table = [1.0; 31];
    let mut f = 1.0;
    for (k, slot) in table.iter_mut().enumerate().skip(1) {
        f *= (2 * k) as f64 * (2 * k + 1) as f64;
        *slot = f;
    }
    table
}

/// I_x(a, b) for large a and b ≤ 1 by the asymptotic expansion of DiDonato & Morris
/// (ACM TOMS 18(3), 1992, "Algorithm 708", eq. 9–9.6; their BGRAT):
///
/// I_x(a, b) ≈ M Σₙ pₙ Jₙ(b, u), with T = a + (b − 1)/2 and u = −T ln x, where
/// M = Γ(a + b) / (Γ(a) Tᵇ) · uᵇ e⁻ᵘ / Γ(b), J₀ = Q(b, u) / (uᵇ e⁻ᵘ / Γ(b)), Q the regularized
/// upper incomplete gamma function, and pₙ, Jₙ from the recurrences in the loop. The leading
/// term is Q(b, u): for the t distribution, erfc(√u) with u ≈ t²/2.
fn beta_large_a_small_b(a: f64, b: f64, ln_x: f64) -> f64 {
    let t = a + (b - 1.0) / 2.0;
    let u = -t * ln_x;
    let ln_h = b * u.ln() - u - ln_gamma(b);
    // ln(Γ(a + b) / Γ(a)) − b ln T by Stirling's formula, arranged so that nothing cancels:
    // (a − ½) ln(1 + b/a) − b + b ln((a + b)/T) + the correction terms.
    let ln_prefix = ln_h + (a - 0.5) * (b / a).ln_1p() - b
        + b * ((b + 1.0) / (2.0 * t)).ln_1p()
        + stirling_correction(a + b)
        - stirling_correction(a);
    let prefix = ln_prefix.exp();
    if prefix == 0.0 {
        return 0.0;
    }
    let factorials = odd_factorials();
    let mut p = [0.0f64; 31];
    p[0] = 1.0;
    let mut j = upper_gamma_over_front(b, u);
    let mut sum = prefix * j;
    let half_lx = ln_x / 2.0;
    let lx2 = half_lx * half_lx;
    let mut lx_power = 1.0;
    let t4 = 4.0 * t * t;
    let mut b2n = b;
    for n in 1..p.len() {
        let mut pn = 0.0;
        for m in 1..n {
            pn += (m as f64 * b - n as f64) * p[n - m] / factorials[m];
        }
        p[n] = pn / n as f64 + (b - 1.0) / factorials[n];
        j = (b2n * (b2n + 1.0) * j + (u + b2n + 1.0) * lx_power) / t4;
        lx_power *= lx2;
        b2n += 2.0;
        let term = prefix * p[n] * j;
        sum += term;
        if term.abs() <= f64::EPSILON * sum.abs() {
            break;
        }
    }
    sum
}

/// Q(s, u) / (uˢ e⁻ᵘ / Γ(s)) for 0 < s ≤ 1 and u > 0: the regularized upper incomplete gamma
/// function divided by its front factor (which the caller folds into its own prefix, so that
/// nothing underflows separately).
fn upper_gamma_over_front(s: f64, u: f64) -> f64 {
    if u < 1.5 {
        // P(s, u) = front · Σₖ uᵏ / (s (s + 1) ⋯ (s + k)), and Q = 1 − P ≥ 0.08 here.
        let mut term = 1.0 / s;
        let mut series = term;
        for k in 1..200 {
            term *= u / (s + k as f64);
            series += term;
            if term < series * f64::EPSILON {
                break;
            }
        }
        let front = (s * u.ln() - u - ln_gamma(s)).exp();
        (1.0 - front * series) / front
    } else {
        // Legendre's continued fraction, modified Lentz.
        const TINY: f64 = 1e-300;
        let mut b = u + 1.0 - s;
        let mut c = 1.0 / TINY;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..500 {
            let an = -(i as f64) * (i as f64 - s);
            b += 2.0;
            d = an * d + b;
            if d.abs() < TINY {
                d = TINY;
            }
            c = b + an / c;
            if c.abs() < TINY {
                c = TINY;
            }
            d = 1.0 / d;
            let delta = d * c;
            h *= delta;
            if (delta - 1.0).abs() <= f64::EPSILON {
                break;
            }
        }
        h
    }
}

/// The regularized incomplete beta function I_x(a, b) = B(x; a, b) / B(a, b), for `a, b > 0`
/// finite and `0 ≤ x ≤ 1` (NaN outside); `scipy.special.betainc(a, b, x)`.
///
/// Continued fraction (modified Lentz) on the side that converges, and DiDonato & Morris's
/// asymptotic expansion for large `a` with `b ≤ 1` (or the reverse), with the front factor
/// computed so that large parameters keep full precision: relative error around 10⁻¹⁴ (checked
/// against 60-digit arithmetic), until both `a` and `b` exceed ~10⁵, where the continued
/// fraction starts losing digits (10⁻¹⁰ at a, b ~ 10⁶). For parameters in the millions the
/// function is also ill-conditioned in `x` (a relative change ε of x changes the result by
/// about `a·ε`), so prefer [`student_t_cdf`], which forms x from t and df without that rounding.
///
/// ```
/// use polars_rag::metrics::stats::regularized_incomplete_beta;
/// // I_x(2, 3) = 6x²(1 − x)² ... summed: the polynomial 1 − (1 − x)⁴ − 4x(1 − x)³.
/// let x: f64 = 0.4;
/// let exact = 1.0 - (1.0 - x).powi(4) - 4.0 * x * (1.0 - x).powi(3);
/// assert!((regularized_incomplete_beta(2.0, 3.0, x) - exact).abs() < 1e-15);
/// ```
pub fn regularized_incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if !(a > 0.0 && b > 0.0 && a.is_finite() && b.is_finite()) || x.is_nan() {
        return f64::NAN;
    }
    if !(0.0..=1.0).contains(&x) {
        return f64::NAN;
    }
    if x == 0.0 || x == 1.0 {
        return x;
    }
    incomplete_beta_parts(a, b, x, 1.0 - x, x.ln(), (-x).ln_1p()).0
}

/// `(P(|T| ≥ |t|), P(|T| < |t|))` for Student's t with `df` degrees of freedom, both accurate in
/// relative terms: I_x(df/2, ½) with x = df / (df + t²), its complement I_y(½, df/2).
///
/// x and 1 − x and their logarithms are formed from u = t²/df with `ln_1p`, never as
/// `df / (df + t²)` rounded first: at df = 10⁷ that rounding alone would cost 10⁻⁹ relative.
fn t_two_sided(t: f64, df: f64) -> (f64, f64) {
    let t = t.abs();
    if t == 0.0 {
        return (1.0, 0.0);
    }
    if t.is_infinite() {
        return (0.0, 1.0);
    }
    let t2 = t * t;
    let (u, ln_u) = if t2.is_finite() && t2 >= f64::MIN_POSITIVE {
        let u = t2 / df;
        (u, u.ln())
    } else {
        // |t| beyond 1e154 (or below 1e-154): stay in logarithms.
        let ln_u = 2.0 * t.ln() - df.ln();
        (ln_u.exp(), ln_u)
    };
    let (x, y, ln_x, ln_y) = if ln_u <= 0.0 {
        let l = u.ln_1p();
        (1.0 / (1.0 + u), u / (1.0 + u), -l, ln_u - l)
    } else {
        let v = 1.0 / u;
        let l = v.ln_1p();
        (v / (1.0 + v), 1.0 / (1.0 + v), -ln_u - l, -l)
    };
    incomplete_beta_parts(df / 2.0, 0.5, x, y, ln_x, ln_y)
}

/// The cumulative distribution function P(T ≤ t) of Student's t with `df > 0` degrees of freedom
/// (finite; NaN otherwise); `scipy.special.stdtr(df, t)`.
///
/// Relative error around 10⁻¹⁴ in either tail (at most 1.3·10⁻¹³ down to 10⁻²⁶⁷ in a check
/// against 60-digit arithmetic), for df from below 1 to 10⁷ and beyond; under a microsecond per
/// call at any df.
///
/// ```
/// use polars_rag::metrics::stats::student_t_cdf;
/// // One degree of freedom is the Cauchy distribution: ½ + atan(t)/π.
/// let t = -1.7f64;
/// assert!((student_t_cdf(t, 1.0) - (0.5 + t.atan() / std::f64::consts::PI)).abs() < 1e-15);
/// assert_eq!(student_t_cdf(0.0, 12.0), 0.5);
/// ```
pub fn student_t_cdf(t: f64, df: f64) -> f64 {
    if t.is_nan() || !(df > 0.0 && df.is_finite()) {
        return f64::NAN;
    }
    let (tails, inside) = t_two_sided(t, df);
    if t < 0.0 {
        0.5 * tails
    } else {
        0.5 + 0.5 * inside
    }
}

/// The survival function P(T > t) = [`student_t_cdf`]`(−t, df)`, accurate in the upper tail.
///
/// ```
/// use polars_rag::metrics::stats::student_t_sf;
/// assert!((student_t_sf(2.5, 29.0) - 0.009162672169213043).abs() < 1e-16); // stdtr(29, -2.5)
/// ```
pub fn student_t_sf(t: f64, df: f64) -> f64 {
    student_t_cdf(-t, df)
}

// ---------------------------------------------------------------------------------------------
// Paired t-test and effect size
// ---------------------------------------------------------------------------------------------

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
}

/// Neumaier-compensated sum: the mean and variance stay within a few ulps at 10⁷ items, where a
/// running sum can lose several digits.
fn compensated_sum(values: impl Iterator<Item = f64>) -> f64 {
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
fn mean_sd(values: &[f64]) -> (f64, f64) {
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
fn testable(deltas: &[f64]) -> bool {
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
/// use polars_rag::metrics::stats::paired_t_test;
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
/// use polars_rag::metrics::stats::t_test_deltas;
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
/// use polars_rag::metrics::stats::effect_size;
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
/// use polars_rag::metrics::stats::paired_deltas;
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

// ---------------------------------------------------------------------------------------------
// Counter-based random numbers
// ---------------------------------------------------------------------------------------------
//
// Every random draw is a pure function of (seed, stream, resample, item): the output of
// SplitMix64 at position `counter` of a sequence whose starting point is itself a SplitMix64
// output for (seed, stream, resample). No generator state is carried from item to item, so a
// block of items draws the same numbers whichever thread processes it and in whatever order.

/// SplitMix64's increment (2⁶⁴ / golden ratio, odd).
const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;
/// Stream tags, so that the bootstrap weights and the sign flips are independent.
const POISSON_STREAM: u64 = 0x706f_6973_736f_6e31; // "poisson1"
const SIGN_STREAM: u64 = 0x7369_676e_666c_6970; // "signflip"

/// SplitMix64's output function (Stafford's variant 13 of the MurmurHash3 finalizer).
#[inline(always)]
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The key of one resample's stream.
fn resample_key(seed: u64, stream: u64, resample: usize) -> u64 {
    mix64(mix64(seed ^ stream).wrapping_add((resample as u64).wrapping_mul(GOLDEN_GAMMA)))
}

/// The `counter`-th 64 random bits of the stream `key`.
#[inline(always)]
fn draw(key: u64, counter: u64) -> u64 {
    mix64(key.wrapping_add(counter.wrapping_mul(GOLDEN_GAMMA)))
}

/// Poisson(1) by inversion of a 32-bit uniform: the weight is the number of thresholds
/// `round(P(X ≤ k) · 2³²)` that the uniform reaches, so each probability is exact to 2⁻³²
/// (weights stop at 12, whose probability 8·10⁻¹⁰ is 3.6 · 2⁻³²).
#[derive(Clone, Debug)]
struct PoissonTable {
    thresholds: Vec<u32>,
    /// The weight of every uniform with these top 12 bits, or [`PoissonTable::MIXED`] for the
    /// ~12 of 4,096 cells that a threshold splits.
    fast: Box<[u8; 4096]>,
}

impl PoissonTable {
    const MIXED: u8 = u8::MAX;

    fn new() -> Self {
        let scale = 4_294_967_296.0; // 2³²
        let mut thresholds = Vec::new();
        let mut probability = (-1.0f64).exp();
        let mut cdf = 0.0;
        for k in 1.. {
            cdf += probability;
            let threshold = (cdf * scale).round();
            if threshold >= scale {
                break;
            }
            thresholds.push(threshold as u32);
            probability /= k as f64;
        }
        let mut table = PoissonTable {
            thresholds,
            fast: Box::new([0; 4096]),
        };
        for cell in 0..4096u32 {
            let (low, high) = (cell << 20, (cell << 20) | 0xf_ffff);
            let (w_low, w_high) = (table.slow(low), table.slow(high));
            table.fast[cell as usize] = if w_low == w_high {
                w_low as u8
            } else {
                Self::MIXED
            };
        }
        table
    }

    fn slow(&self, uniform: u32) -> u32 {
        self.thresholds.iter().filter(|&&t| uniform >= t).count() as u32
    }

    #[inline(always)]
    fn sample(&self, uniform: u32) -> u32 {
        let fast = self.fast[(uniform >> 20) as usize];
        if fast != Self::MIXED {
            fast as u32
        } else {
            self.slow(uniform)
        }
    }

    /// The largest weight drawn.
    fn max_weight(&self) -> u32 {
        self.thresholds.len() as u32
    }
}

// ---------------------------------------------------------------------------------------------
// Paired bootstrap and approximate randomization
// ---------------------------------------------------------------------------------------------

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
}

/// The exact per-resample sums of a range of blocks: add up results from any partition of the
/// blocks with [`ResampleSums::merge`], in any order, and get the same bits.
///
/// Each block's sums are computed in `f64` in a fixed order, then added in fixed point (`i128`,
/// with a per-metric quantum ~2⁻¹²⁰ of the largest possible total), where addition is exact
/// and so associative: this is what makes the results independent of the thread count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResampleSums {
    resamples: usize,
    /// Σ dᵢ per metric.
    observed: Vec<i128>,
    /// Σ wᵢ dᵢ per (metric, resample), metric-major.
    weighted: Vec<i128>,
    /// Σ sᵢ dᵢ per (metric, resample).
    flipped: Vec<i128>,
    /// Σ wᵢ per (metric, resample).
    weights: Vec<u64>,
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
fn scale_pow2(mut x: f64, mut k: i32) -> f64 {
    while k != 0 {
        let step = k.clamp(-1000, 1000);
        x *= f64::from_bits(((step + 1023) as u64) << 52);
        k -= step;
    }
    x
}

/// A metric's column and the constants of its fixed-point accumulation.
#[derive(Clone, Debug)]
struct Column<'a> {
    values: &'a [f64],
    /// All values finite (else the metric is skipped and reported as `None`).
    finite: bool,
    /// The fixed-point quantum is 2^exponent.
    exponent: i32,
    /// Σ |dᵢ|, the scale of the tie tolerance of the randomization test.
    abs_sum: f64,
}

impl Column<'_> {
    #[inline]
    fn to_fixed(&self, x: f64) -> i128 {
        scale_pow2(x, -self.exponent).round() as i128
    }

    fn fixed_to_f64(&self, v: i128) -> f64 {
        scale_pow2(v as f64, self.exponent)
    }
}

/// Paired bootstrap and sign-flip randomization of several metrics' deltas, block by block.
///
/// [`paired_resampling`] is this with `std::thread::scope`; use the resampler directly to run
/// the blocks on another thread pool:
///
/// ```
/// use polars_rag::metrics::stats::PairedResampler;
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
    columns: Vec<Column<'a>>,
    resamples: usize,
    seed: u64,
    /// Length of the longest column.
    len: usize,
    poisson: PoissonTable,
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
        assert!(
            confidence > 0.0 && confidence < 1.0,
            "confidence must be in (0, 1), got {confidence}"
        );
        assert!(
            sums.resamples == self.resamples && sums.observed.len() == self.columns.len(),
            "summarize: sums of another resampler"
        );
        let resamples = self.resamples;
        self.columns
            .iter()
            .enumerate()
            .map(|(m, column)| {
                let n = column.values.len();
                if n == 0 || !column.finite {
                    return None;
                }
                let observed = column.fixed_to_f64(sums.observed[m]);
                let rows = m * resamples..(m + 1) * resamples;
                let mut means: Vec<f64> = sums.weighted[rows.clone()]
                    .iter()
                    .zip(&sums.weights[rows.clone()])
                    .filter(|(_, &w)| w > 0)
                    .map(|(&s, &w)| column.fixed_to_f64(s) / w as f64)
                    .collect();
                let threshold = observed.abs() - 1e-10 * column.abs_sum;
                let extreme = sums.flipped[rows]
                    .iter()
                    .filter(|&&s| column.fixed_to_f64(s).abs() >= threshold)
                    .count();
                let (ci_low, ci_high, std_error) = percentile_interval(&mut means, confidence);
                Some(PairedResampling {
                    n,
                    mean_delta: observed / n as f64,
                    ci_low,
                    ci_high,
                    std_error,
                    p_randomization: (1 + extreme) as f64 / (resamples + 1) as f64,
                    resamples_used: means.len(),
                })
            })
            .collect()
    }
}

/// Sums with the 8-lane pattern of [`dot_weights_signs`], so that all signs +1 reproduce it
/// bit for bit (exact ties in the randomization test stay ties).
fn sum_lanes(values: &[f64]) -> f64 {
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
const LANES: usize = 8;

#[inline(always)]
fn combine_lanes(l: [f64; LANES]) -> f64 {
    ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]))
}

/// `(Σ wᵢdᵢ, Σ sᵢdᵢ)` in one pass over the deltas.
#[inline]
fn dot_weights_signs(weights: &[f64], signs: &[f64], values: &[f64]) -> (f64, f64) {
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
fn fill_poisson(table: &PoissonTable, key: u64, start: usize, weights: &mut [f64]) -> u64 {
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
const MINUS_ONE_BITS: u64 = 0xbff0_0000_0000_0000;

/// Fills `signs` with ±1 for items `start..start + signs.len()` (64 per random draw; `start` is a
/// multiple of 64).
#[inline]
fn fill_signs(key: u64, start: usize, signs: &mut [f64]) {
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
fn percentile_interval(values: &mut [f64], confidence: f64) -> (f64, f64, f64) {
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
/// use polars_rag::metrics::stats::{paired_resampling, ResampleOptions};
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

// ---------------------------------------------------------------------------------------------
// Corpus-level metrics
// ---------------------------------------------------------------------------------------------

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
/// use polars_rag::metrics::stats::{bootstrap_corpus, ResampleOptions};
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
    let resamples = options.resamples;
    let column_sum = |j: usize, v: i128| resampler.columns[j].fixed_to_f64(v);
    let totals: Vec<f64> = (0..2 * k)
        .map(|j| column_sum(j, sums.observed[j]))
        .collect();
    let (base_total, cand_total) = totals.split_at(k);
    let base_value = metric(base_total);
    let cand_value = metric(cand_total);
    let delta = cand_value - base_value;

    let mut base = vec![0.0; k];
    let mut cand = vec![0.0; k];
    let mut deltas = Vec::with_capacity(resamples);
    let threshold = delta.abs() - 1e-10 * (base_value.abs() + cand_value.abs());
    let mut extreme = 0usize;
    for r in 0..resamples {
        // Every column has the same items, hence the same total weight.
        let total_weight = sums.weights[r];
        if total_weight > 0 {
            let rescale = n as f64 / total_weight as f64;
            for j in 0..k {
                base[j] = column_sum(j, sums.weighted[j * resamples + r]) * rescale;
                cand[j] = column_sum(k + j, sums.weighted[(k + j) * resamples + r]) * rescale;
            }
            let d = metric(&cand) - metric(&base);
            if d.is_finite() {
                deltas.push(d);
            }
        }
        for j in 0..k {
            let flipped_base = column_sum(j, sums.flipped[j * resamples + r]);
            let flipped_cand = column_sum(k + j, sums.flipped[(k + j) * resamples + r]);
            let (b, c) = (base_total[j], cand_total[j]);
            cand[j] = 0.5 * (c + flipped_cand) + 0.5 * (b - flipped_base);
            base[j] = 0.5 * (b + flipped_base) + 0.5 * (c - flipped_cand);
        }
        if (metric(&cand) - metric(&base)).abs() >= threshold {
            extreme += 1;
        }
    }
    let (ci_low, ci_high, std_error) = percentile_interval(&mut deltas, options.confidence);
    Some(CorpusResampling {
        n,
        baseline: base_value,
        candidate: cand_value,
        delta,
        ci_low,
        ci_high,
        std_error,
        p_randomization: if delta.is_finite() {
            (1 + extreme) as f64 / (resamples + 1) as f64
        } else {
            f64::NAN
        },
        resamples_used: deltas.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(actual: f64, expected: f64, rel: f64) -> bool {
        (actual - expected).abs() <= rel * expected.abs()
    }

    #[test]
    fn ln_gamma_matches_scipy() {
        // from scipy import special
        // [special.gammaln(z) for z in [1e-3, 0.5, 1.0, 2.5, 9.9, 10.0, 123.4, 1e7]]
        let cases = [
            (1e-3, 6.907178885383853),
            (0.5, 0.5723649429247),
            (2.5, 0.2846828704729192),
            (9.9, 12.57717990421988),
            (10.0, 12.801827480081469),
            (123.4, 469.3360974421906),
            (1e7, 151180949.36947393),
        ];
        for (z, expected) in cases {
            assert!(
                close(ln_gamma(z), expected, 1e-14),
                "ln_gamma({z}) = {}",
                ln_gamma(z)
            );
        }
        assert!(ln_gamma(1.0).abs() < 1e-14);
        assert!(ln_gamma(0.0).is_nan() && ln_gamma(-1.0).is_nan());
    }

    #[test]
    fn incomplete_beta_matches_scipy() {
        // from scipy import special
        // special.betainc(a, b, x) for each (a, b, x) below
        let cases = [
            (0.5, 0.5, 0.3, 0.36901011956554536),
            (2.0, 3.0, 0.4, 0.5247999999999999),
            (10.0, 0.5, 0.97, 0.4408041535957583),
            (0.5, 10.0, 0.03, 0.5591958464042414),
            (50.0, 60.0, 0.45, 0.4642352914306031),
            (1e3, 1e3, 0.51, 0.8144473405684881),
            (1e-3, 2.0, 0.5, 0.9998067465369478),
            (7.0, 1.0, 0.999, 0.993020965034979),
            // Large a, b ≤ 1: the asymptotic expansion.
            (100.0, 0.3, 0.99, 0.08413883162586826),
            (2000.0, 1.0, 0.999, 0.13519992539749948),
            (120.0, 0.5, 0.9999, 0.8770090171834202),
            (300.0, 0.9, 0.5, 2.7819956033258763e-91),
        ];
        for (a, b, x, expected) in cases {
            let got = regularized_incomplete_beta(a, b, x);
            assert!(
                close(got, expected, 1e-13),
                "I({x}; {a}, {b}) = {got}, want {expected}"
            );
        }
        // a = 5e6: x itself carries a relative rounding of 1e-16, amplified by a = 5e6.
        let got = regularized_incomplete_beta(5e6, 0.5, 0.9999995);
        assert!(close(got, 0.02534730403850864, 1e-9), "{got}");
        assert_eq!(regularized_incomplete_beta(2.0, 3.0, 0.0), 0.0);
        assert_eq!(regularized_incomplete_beta(2.0, 3.0, 1.0), 1.0);
        assert!(regularized_incomplete_beta(0.0, 3.0, 0.5).is_nan());
        assert!(regularized_incomplete_beta(2.0, 3.0, 1.5).is_nan());
    }

    #[test]
    fn student_t_cdf_matches_scipy() {
        // from scipy import special
        // [special.stdtr(df, t) for t in [-40.0, -5.0, -1.7, -0.3, 0.0, 0.8, 2.5]]
        let ts = [-40.0, -5.0, -1.7, -0.3, 0.0, 0.8, 2.5];
        #[rustfmt::skip]
        let table: [(f64, [f64; 7]); 7] = [
            (1.0, [0.007956089912025812, 0.0628329581890012, 0.1692530273303327,
                   0.4072264209222577, 0.5, 0.7147767125227227, 0.8788810584091566]),
            (2.0, [0.0003122073360923703, 0.018874775675311862, 0.11561671310078561,
                   0.3962428304200888, 0.5, 0.7461829819586654, 0.9351941398892446]),
            (3.0, [1.7190340394579253e-05, 0.007696219036651147, 0.09384532077670502,
                   0.3918816460199595, 0.5, 0.7589005241244589, 0.9561466764959672]),
            (7.5, [2.559528381854894e-10, 0.0006381114017584908, 0.06503304917866852,
                   0.38616132928438907, 0.5, 0.77584736526769, 0.9805898708631873]),
            (29.0, [3.173438664864671e-27, 1.2683157867711645e-05, 0.04991689574423466,
                    0.3831585466644839, 0.5, 0.7848921657248402, 0.9908373278307869]),
            (1e5, [0.0, 2.8713508393208397e-07, 0.04456701762433149,
                   0.3820888895951688, 0.5, 0.7881436512303094, 0.9937895404037205]),
            (1e7, [0.0, 2.866564037504268e-07, 0.044565478307206724,
                   0.3820885809288926, 0.5, 0.7881445919147207, 0.9937903267317107]),
        ];
        for (df, expected) in table {
            for (t, want) in ts.iter().zip(expected) {
                let got = student_t_cdf(*t, df);
                if want == 0.0 {
                    // Below the smallest f64 (about 1e-350): any underflow to (near) zero.
                    assert!(got < 1e-300, "stdtr({df}, {t}) = {got}");
                } else {
                    assert!(
                        close(got, want, 1e-12),
                        "stdtr({df}, {t}) = {got}, want {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn student_t_edge_cases() {
        assert_eq!(student_t_cdf(f64::INFINITY, 3.0), 1.0);
        assert_eq!(student_t_cdf(f64::NEG_INFINITY, 3.0), 0.0);
        assert!(student_t_cdf(f64::NAN, 3.0).is_nan());
        assert!(student_t_cdf(1.0, 0.0).is_nan());
        assert!(student_t_cdf(1.0, f64::INFINITY).is_nan());
        // Cauchy tail beyond t² overflow: P(T > t) = atan(1/t)/π ≈ 1/(πt).
        let t = 1e200;
        assert!(close(
            student_t_sf(t, 1.0),
            1.0 / (std::f64::consts::PI * t),
            1e-13
        ));
        // Tiny t: cdf ≈ ½ + t·f(0).
        assert!(close(student_t_cdf(1e-200, 1.0) - 0.5, 0.0, 1.0));
    }

    #[test]
    fn t_test_degenerate_inputs() {
        assert!(paired_t_test(&[], &[]).is_none());
        assert!(paired_t_test(&[1.0], &[2.0]).is_none());
        assert!(paired_t_test(&[1.0, 2.0], &[1.0, 2.0]).is_none());
        assert!(paired_t_test(&[0.0, 0.0, 0.0], &[0.5, 0.5, 0.5]).is_none());
        assert!(paired_t_test(&[0.0, f64::NAN], &[0.5, 0.7]).is_none());
        assert!(effect_size(&[0.0, 0.0], &[1.0, 1.0]).is_none());
    }

    #[test]
    fn poisson_table_probabilities() {
        let table = PoissonTable::new();
        assert_eq!(table.max_weight(), 12);
        let scale = 4_294_967_296.0;
        let mut previous = 0.0;
        let mut probability = (-1.0f64).exp();
        for (k, &t) in table.thresholds.iter().enumerate() {
            let p = (t as f64 - previous) / scale;
            assert!((p - probability).abs() <= 1.0 / scale, "P({k}) = {p}");
            previous = t as f64;
            probability /= (k + 1) as f64;
        }
        // The fast path agrees with the comparisons everywhere they could differ.
        for &t in &table.thresholds {
            for u in [t.wrapping_sub(1), t, t.wrapping_add(1)] {
                assert_eq!(table.sample(u), table.slow(u));
            }
        }
        for cell in 0..4096u32 {
            let u = cell << 20 | 0x5_5555;
            assert_eq!(table.sample(u), table.slow(u));
        }
        // Drawn weights: mean 1, variance 1.
        let key = resample_key(3, POISSON_STREAM, 0);
        let mut weights = vec![0.0; 200_000];
        let total = fill_poisson(&table, key, 0, &mut weights);
        let mean = total as f64 / weights.len() as f64;
        let var =
            weights.iter().map(|w| (w - mean) * (w - mean)).sum::<f64>() / weights.len() as f64;
        assert!(
            (mean - 1.0).abs() < 0.01 && (var - 1.0).abs() < 0.02,
            "{mean} {var}"
        );
    }

    #[test]
    fn signs_are_balanced_and_independent_of_offset() {
        let key = resample_key(9, SIGN_STREAM, 4);
        let mut all = vec![0.0; 4096];
        fill_signs(key, 0, &mut all);
        let mut tail = vec![0.0; 1024];
        fill_signs(key, 2048, &mut tail);
        assert_eq!(&all[2048..3072], &tail[..]);
        let plus = all.iter().filter(|&&s| s == 1.0).count();
        assert!((1900..2200).contains(&plus), "{plus}");
    }

    #[test]
    fn fixed_point_round_trip() {
        let values = [0.1, -3.5, 2.0];
        let resampler = PairedResampler::new(&[&values], 1, 0);
        let column = &resampler.columns[0];
        for x in [0.1, -3.5, 1e-3, 12.345] {
            assert!(close(column.fixed_to_f64(column.to_fixed(x)), x, 1e-30));
        }
        assert_eq!(scale_pow2(1.5, 2000), f64::INFINITY);
        // Beyond the range of one power of two: 1e300 · 2⁻¹¹⁰⁰ is a normal number.
        assert_eq!(scale_pow2(scale_pow2(1e300, -1100), 1100), 1e300);
    }

    #[test]
    fn quantile_rule_is_numpys_linear() {
        // numpy.percentile([1, 2, 3, 4, 10], [2.5, 97.5]) == [1.1, 9.4]
        let mut v = vec![10.0, 3.0, 1.0, 4.0, 2.0];
        let (low, high, sd) = percentile_interval(&mut v, 0.95);
        assert!(
            (low - 1.1).abs() < 1e-12 && (high - 9.4).abs() < 1e-12,
            "{low} {high}"
        );
        assert!((sd - 3.5355339059327378).abs() < 1e-12);
    }
}
