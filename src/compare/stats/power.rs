//! Power and sample size of the paired (one-sample) t-test, and the noncentral t distribution
//! underneath.
//!
//! With n items whose deltas have mean μ and standard deviation σ, the t statistic follows the
//! noncentral t distribution with n − 1 degrees of freedom and noncentrality d·√n, d = μ/σ
//! (Cohen's d_z). The power is the probability that it falls beyond the test's critical value;
//! the functions here equal statsmodels' `TTestPower().power(...)` and, up to the tolerance of
//! its root finder, `TTestPower().solve_power(...)`.
//!
//! Clustered items: n items in clusters of m with intra-class correlation ICC carry the
//! information of n / (1 + (m − 1)·ICC) independent ones ([`design_effect`]); the clustered
//! functions inflate the sample size (or deflate the items at hand) by that factor.

use super::special::{incomplete_beta_parts, stirling_correction, LN_SQRT_2PI};
use super::*;

/// The cumulative distribution function P(T ≤ t) of the noncentral t distribution with `df > 0`
/// degrees of freedom and noncentrality `nc`; `scipy.stats.nct.cdf(t, df, nc)` (scipy's
/// `special.nctdtr(df, nc, t)`). NaN for NaN or non-finite parameters.
///
/// For t ≥ 0, the series of Lenth (1989, Applied Statistics algorithm AS 243):
/// F(t) = Φ(−δ) + ½ Σⱼ [Pⱼ I_x(j + ½, ν/2) + Qⱼ I_x(j + 1, ν/2)] with x = t² / (t² + ν),
/// Pⱼ the Poisson weights of mean δ²/2 and Qⱼ = Pⱼ · δ/√2 · j! / Γ(j + 3/2). For t < 0,
/// F(t; ν, δ) = P(T' ≥ −t) with T' noncentral of −δ, and that upper tail is the same series
/// with each I_x replaced by its complement (Σⱼ (Pⱼ + Qⱼ)/2 = Φ(δ)), so that a small lower
/// tail is summed directly instead of as 1 minus a number near 1. Unlike AS 243, which sums
/// from j = 0 and underflows once δ²/2 exceeds ~700, the sum starts at the largest Poisson
/// weight and runs both ways until the rest is negligible, that weight computed in its
/// saddle-point form so that it keeps full precision for the large noncentralities of a
/// t-test on many items.
///
/// Accuracy: about 10⁻¹³ relative where t and δ have the same sign (every term of the series
/// is then positive); where they have opposite signs the terms differ in sign and the result
/// is accurate to a few 10⁻¹⁴ absolute (a far tail there has no relative precision, but stays
/// within its exact bound Φ(−|δ|)).
///
/// ```
/// use polars_rag::compare::stats::{noncentral_t_cdf, student_t_cdf};
/// // Noncentrality 0 is Student's t.
/// assert!((noncentral_t_cdf(1.3, 7.0, 0.0) - student_t_cdf(1.3, 7.0)).abs() < 1e-15);
/// // scipy.stats.nct.cdf(2.0, 10, 1.5)
/// assert!((noncentral_t_cdf(2.0, 10.0, 1.5) - 0.6591540724421909).abs() < 1e-13);
/// ```
pub fn noncentral_t_cdf(t: f64, df: f64, nc: f64) -> f64 {
    if t.is_nan() || !(df > 0.0 && df.is_finite()) || !nc.is_finite() {
        return f64::NAN;
    }
    if nc == 0.0 {
        return student_t_cdf(t, df);
    }
    if !(t * t).is_finite() {
        // |t| beyond 1e154: the whole mass is on one side.
        return if t > 0.0 { 1.0 } else { 0.0 };
    }
    // P(T ≤ 0) = Φ(−δ) exactly (T ≤ 0 when Z + δ ≤ 0): the clamp keeps a value computed with
    // cancellation on the right side of it, and a far tail beyond a tiny Φ(−δ) within it.
    let at_zero = normal_cdf(-nc);
    if t == 0.0 {
        return at_zero;
    }
    if t > 0.0 {
        (at_zero + half_series(t, df, nc, Tail::Lower)).clamp(at_zero, 1.0)
    } else {
        half_series(-t, df, -nc, Tail::Upper).clamp(0.0, at_zero)
    }
}

/// Φ(x), the standard normal distribution function, accurate in both tails.
fn normal_cdf(x: f64) -> f64 {
    0.5 * libm::erfc(-x / std::f64::consts::SQRT_2)
}

/// The Poisson probability of `j` at mean `lambda > 0`, in Loader's saddle-point form
/// `exp(−stirling_correction(j) − bd0) / √(2πj)` with bd0 = j ln(j/λ) + λ − j formed without
/// cancellation: a direct `exp(−λ + j ln λ − ln j!)` subtracts numbers of the order of λ ln λ and
/// keeps only about 16 − log₁₀(λ ln λ) digits.
fn poisson_probability(j: f64, lambda: f64) -> f64 {
    if j == 0.0 {
        return (-lambda).exp();
    }
    let bd0 = j * ((j - lambda) / lambda).ln_1p() + (lambda - j);
    (-stirling_correction(j) - bd0 - LN_SQRT_2PI).exp() / j.sqrt()
}

/// ln(Γ(j + 1) / Γ(j + 3/2)) for j ≥ 0, from Stirling's form so that the large parts cancel
/// analytically.
fn ln_gamma_ratio_half(j: f64) -> f64 {
    let z = j + 1.0;
    0.5 - 0.5 * z.ln() - z * (0.5 / z).ln_1p() + stirling_correction(z)
        - stirling_correction(z + 0.5)
}

/// Which tail the series of [`noncentral_t_cdf`] sums.
#[derive(Clone, Copy, PartialEq)]
enum Tail {
    /// F(t) − Φ(−δ), with I_x(a, ν/2), which decreases in j.
    Lower,
    /// 1 − F(t), with 1 − I_x(a, ν/2), which increases in j.
    Upper,
}

/// ½ Σⱼ [Pⱼ J(j + ½) + Qⱼ J(j + 1)] for t > 0, with J = I_x(·, ν/2) or its complement.
fn half_series(t: f64, df: f64, nc: f64, tail: Tail) -> f64 {
    let t2 = t * t;
    // x = t²/(t² + ν) and y = ν/(t² + ν), with their logarithms, each without cancellation.
    let denominator = t2 + df;
    let (x, y) = (t2 / denominator, df / denominator);
    let (ln_x, ln_y) = (-(df / t2).ln_1p(), -(t2 / df).ln_1p());
    let b = df / 2.0;
    let beta = |a: f64| {
        let (lower, upper) = incomplete_beta_parts(a, b, x, y, ln_x, ln_y);
        if tail == Tail::Lower {
            lower
        } else {
            upper
        }
    };
    let lambda = nc * nc / 2.0;
    if lambda == 0.0 {
        // |δ| below 1e-154: the Q terms are of order δ, below any precision here.
        return 0.5 * beta(0.5);
    }
    let mode = lambda.floor();
    let p_mode = poisson_probability(mode, lambda);
    let q_mode = p_mode * nc / std::f64::consts::SQRT_2 * ln_gamma_ratio_half(mode).exp();
    // Relative size below which what remains of the sum no longer changes it.
    const NEGLIGIBLE: f64 = 1e-17;
    // The rest of the sum in either direction is bounded by the weights alone (|J| ≤ 1), which
    // fall at least geometrically away from the mode; in the direction where J decreases, it
    // is also bounded by the current term, which stops the sum early when J vanishes.
    let mut sum = 0.0;
    let mut magnitude = 0.0;
    let (mut p, mut q, mut j) = (p_mode, q_mode, mode);
    loop {
        let term = p * beta(j + 0.5) + q * beta(j + 1.0);
        sum += term;
        magnitude += term.abs();
        let ratio = lambda / (j + 1.0);
        let rest = (p + q.abs()) * ratio / (1.0 - ratio);
        if rest <= NEGLIGIBLE * magnitude
            || rest < f64::MIN_POSITIVE
            || (tail == Tail::Lower && term.abs() <= NEGLIGIBLE * magnitude)
        {
            break;
        }
        p *= lambda / (j + 1.0);
        q *= lambda / (j + 1.5);
        j += 1.0;
    }
    let (mut p, mut q, mut j) = (p_mode, q_mode, mode);
    while j >= 1.0 {
        p *= j / lambda;
        q *= (j + 0.5) / lambda;
        j -= 1.0;
        let term = p * beta(j + 0.5) + q * beta(j + 1.0);
        sum += term;
        magnitude += term.abs();
        // The Q weights fall the slower of the two, by (j + ½)/λ per step.
        let ratio = (j + 0.5) / lambda;
        let rest = (p + q.abs()) * ratio / (1.0 - ratio);
        if rest <= NEGLIGIBLE * magnitude
            || rest < f64::MIN_POSITIVE
            || (tail == Tail::Upper && term.abs() <= NEGLIGIBLE * magnitude)
        {
            break;
        }
    }
    0.5 * sum
}

/// The power of the one-sample (paired) t-test of a standardized effect `effect_size`
/// (mean / standard deviation of the deltas: Cohen's d_z) with `n` items at level `alpha`:
/// `statsmodels.stats.power.TTestPower().power(effect_size, n, alpha, alternative=...)`, where
/// statsmodels' `"larger"` is [`Alternative::Greater`] and `"smaller"` is
/// [`Alternative::Less`]. `n` may be fractional (the degrees of freedom are n − 1).
///
/// Two-sided: P(T > t₁₋α/₂) + P(T < t_α/₂) under the noncentral t with n − 1 degrees of freedom
/// and noncentrality d·√n; one-sided, the one tail. NaN when n ≤ 1, alpha outside (0, 1) or an
/// input is NaN.
///
/// ```
/// use polars_rag::compare::stats::{t_test_power, Alternative};
/// // TTestPower().power(0.5, 34, 0.05)
/// let power = t_test_power(0.5, 34.0, 0.05, Alternative::TwoSided);
/// assert!((power - 0.8077775012792737).abs() < 1e-12);
/// // No effect: the power is the level.
/// assert!((t_test_power(0.0, 34.0, 0.05, Alternative::Greater) - 0.05).abs() < 1e-14);
/// ```
pub fn t_test_power(effect_size: f64, n: f64, alpha: f64, alternative: Alternative) -> f64 {
    if effect_size.is_nan() || !(n > 1.0 && n.is_finite()) || !(alpha > 0.0 && alpha < 1.0) {
        return f64::NAN;
    }
    t_power(effect_size * n.sqrt(), n - 1.0, alpha, alternative)
}

/// The power of a t-test whose statistic follows the noncentral t with `df` degrees of freedom
/// and noncentrality `nc` under the alternative.
fn t_power(nc: f64, df: f64, alpha: f64, alternative: Alternative) -> f64 {
    let tail_alpha = match alternative {
        Alternative::TwoSided => alpha / 2.0,
        Alternative::Greater | Alternative::Less => alpha,
    };
    // The lower critical value; the upper is its negative (the t distribution is symmetric).
    let critical = student_t_quantile(tail_alpha, df);
    let mut power = 0.0;
    if alternative != Alternative::Less {
        // statsmodels' survival function is 1 − cdf: the same here keeps the last digits equal.
        power += 1.0 - noncentral_t_cdf(-critical, df, nc);
    }
    if alternative != Alternative::Greater {
        power += noncentral_t_cdf(critical, df, nc);
    }
    power
}

/// Bisection of an increasing function `f` on `[low, high]` (with `f(low) < 0 ≤ f(high)`) down
/// to adjacent floats: the root to the last bit the function can resolve.
fn bisect(f: impl Fn(f64) -> f64, mut low: f64, mut high: f64) -> f64 {
    loop {
        let middle = low + 0.5 * (high - low);
        if middle <= low || middle >= high {
            return high;
        }
        if f(middle) < 0.0 {
            low = middle;
        } else {
            high = middle;
        }
    }
}

/// The root of an increasing `f` above `low`: the bracket's upper end grows tenfold from
/// `high` (as statsmodels' solver brackets) until `f` is no longer negative there, then
/// [`bisect`]. NaN when no end below 10³⁰⁰ reaches it.
fn root_above(f: impl Fn(f64) -> f64, mut low: f64, mut high: f64) -> f64 {
    while f(high) < 0.0 {
        low = high;
        high *= 10.0;
        if high > 1e300 {
            return f64::NAN;
        }
    }
    bisect(f, low, high)
}

/// Whether the sign of `effect_size` can be detected under `alternative` at all.
fn detectable(effect_size: f64, alternative: Alternative) -> bool {
    match alternative {
        Alternative::TwoSided => effect_size != 0.0,
        Alternative::Greater => effect_size > 0.0,
        Alternative::Less => effect_size < 0.0,
    }
}

/// The number of items the paired t-test needs to detect a standardized effect `effect_size`
/// (Cohen's d_z) with probability `power` at level `alpha`: the n (fractional, as statsmodels
/// returns it; round up to plan) where [`t_test_power`] equals `power`.
/// `TTestPower().solve_power(effect_size, nobs=None, alpha=alpha, power=power,
/// alternative=...)` finds the same root to its solver's tolerance (1e-5 in n); this one is
/// exact to the last bit.
///
/// A t-test needs 2 items: when 2 already reach the power, the result is 2 (statsmodels falls
/// back on another solver there and may return less). NaN when no n reaches it: an effect of
/// 0, an effect of the wrong sign for a one-sided alternative, `power` outside (0, 1), `alpha`
/// outside (0, 1).
///
/// ```
/// use polars_rag::compare::stats::{t_test_power, t_test_sample_size, Alternative};
/// let n = t_test_sample_size(0.5, 0.8, 0.05, Alternative::TwoSided);
/// // TTestPower().solve_power(0.5, power=0.8, alpha=0.05) == 33.367129...
/// assert!((n - 33.36713).abs() < 2e-5);
/// assert!((t_test_power(0.5, n, 0.05, Alternative::TwoSided) - 0.8).abs() < 1e-13);
/// assert!(t_test_sample_size(-0.5, 0.8, 0.05, Alternative::Greater).is_nan());
/// ```
pub fn t_test_sample_size(
    effect_size: f64,
    power: f64,
    alpha: f64,
    alternative: Alternative,
) -> f64 {
    let valid = power > 0.0 && power < 1.0 && alpha > 0.0 && alpha < 1.0;
    if !valid || !effect_size.is_finite() || !detectable(effect_size, alternative) {
        return f64::NAN;
    }
    let shortfall = |n: f64| t_test_power(effect_size, n, alpha, alternative) - power;
    if shortfall(2.0) >= 0.0 {
        return 2.0;
    }
    // Bracket as statsmodels does, from 50 up by factors of 10.
    root_above(shortfall, 2.0, 50.0)
}

/// The smallest standardized effect (Cohen's d_z) that the paired t-test with `n` items detects
/// with probability `power` at level `alpha`: the root of [`t_test_power`] in the effect size,
/// as `TTestPower().solve_power(effect_size=None, nobs=n, alpha=alpha, power=power,
/// alternative=...)` finds it to its solver's tolerance. Positive for two-sided and
/// [`Alternative::Greater`], negative for [`Alternative::Less`] (as statsmodels returns it).
/// Multiply by the standard deviation of the deltas for the effect in the metric's units.
///
/// NaN when n ≤ 1, `power` is not between `alpha` and 1 (no effect is needed to reach a power
/// at most alpha), or `alpha` is outside (0, 1).
///
/// ```
/// use polars_rag::compare::stats::{minimum_detectable_effect, Alternative};
/// let d = minimum_detectable_effect(100.0, 0.8, 0.05, Alternative::TwoSided);
/// // TTestPower().solve_power(nobs=100, power=0.8, alpha=0.05) == 0.28291...
/// assert!((d - 0.2829).abs() < 1e-4);
/// assert_eq!(minimum_detectable_effect(100.0, 0.8, 0.05, Alternative::Less),
///            -minimum_detectable_effect(100.0, 0.8, 0.05, Alternative::Greater));
/// ```
pub fn minimum_detectable_effect(n: f64, power: f64, alpha: f64, alternative: Alternative) -> f64 {
    if !(n > 1.0 && n.is_finite() && alpha > 0.0 && alpha < 1.0 && power < 1.0 && power > alpha) {
        return f64::NAN;
    }
    // The power of a "less" test at −d is that of a "greater" test at d.
    let (search, sign) = match alternative {
        Alternative::Less => (Alternative::Greater, -1.0),
        other => (other, 1.0),
    };
    let shortfall = |d: f64| t_test_power(d, n, alpha, search) - power;
    sign * root_above(shortfall, 0.0, 1.0)
}

/// The power of the cluster-robust t-test (see
/// [`cluster_robust_mean_test`](super::cluster_robust_mean_test)) of a standardized effect
/// `effect_size` (mean delta / standard deviation of the item deltas) with `n` items in
/// `clusters` clusters whose design effect is `design_effect`: the noncentral t with
/// G − 1 degrees of freedom and noncentrality d · √(n / design effect). With few clusters this
/// is lower than the power of n / design effect independent items, whose t has more degrees of
/// freedom. NaN when there are fewer than 2 clusters or an input is not a number.
///
/// ```
/// use polars_rag::compare::stats::{clustered_t_test_power, t_test_power, Alternative};
/// // One item per cluster: the paired t-test's power.
/// let plain = t_test_power(0.3, 100.0, 0.05, Alternative::TwoSided);
/// assert!((clustered_t_test_power(0.3, 100.0, 1.0, 100.0, 0.05, Alternative::TwoSided) - plain).abs() < 1e-14);
/// // 400 items worth 100, in 20 clusters: less power than 100 independent items.
/// assert!(clustered_t_test_power(0.3, 400.0, 4.0, 20.0, 0.05, Alternative::TwoSided) < plain);
/// ```
pub fn clustered_t_test_power(
    effect_size: f64,
    n: f64,
    design_effect: f64,
    clusters: f64,
    alpha: f64,
    alternative: Alternative,
) -> f64 {
    let valid = clusters >= 2.0
        && clusters.is_finite()
        && n > 0.0
        && design_effect > 0.0
        && alpha > 0.0
        && alpha < 1.0;
    if !valid || effect_size.is_nan() || design_effect.is_nan() || n.is_nan() {
        return f64::NAN;
    }
    t_power(
        effect_size * (n / design_effect).sqrt(),
        clusters - 1.0,
        alpha,
        alternative,
    )
}

/// The clusters of `cluster_size` items (with `design_effect`) that the cluster-robust t-test
/// needs to detect `effect_size` with probability `power`: the root in G of
/// [`clustered_t_test_power`] with n = G · cluster size (fractional; round up to plan). NaN
/// when no number of clusters reaches it.
///
/// ```
/// use polars_rag::compare::stats::{clustered_t_test_power, clusters_needed, Alternative};
/// let g = clusters_needed(0.2, 0.8, 0.05, Alternative::TwoSided, 10.0, 3.0);
/// let power = clustered_t_test_power(0.2, g * 10.0, 3.0, g, 0.05, Alternative::TwoSided);
/// assert!((power - 0.8).abs() < 1e-9);
/// ```
pub fn clusters_needed(
    effect_size: f64,
    power: f64,
    alpha: f64,
    alternative: Alternative,
    cluster_size: f64,
    design_effect: f64,
) -> f64 {
    let valid = power > 0.0 && power < 1.0 && alpha > 0.0 && alpha < 1.0 && cluster_size > 0.0;
    if !valid || !effect_size.is_finite() || !detectable(effect_size, alternative) {
        return f64::NAN;
    }
    let shortfall = |g: f64| {
        clustered_t_test_power(
            effect_size,
            g * cluster_size,
            design_effect,
            g,
            alpha,
            alternative,
        ) - power
    };
    if shortfall(2.0) >= 0.0 {
        return 2.0;
    }
    root_above(shortfall, 2.0, 50.0)
}

/// The smallest standardized effect the cluster-robust t-test detects with probability
/// `power` with `n` items in `clusters` clusters of `design_effect`: the root in the effect of
/// [`clustered_t_test_power`], signed as [`minimum_detectable_effect`]'s.
///
/// ```
/// use polars_rag::compare::stats::{clustered_detectable_effect, minimum_detectable_effect, Alternative};
/// let d = clustered_detectable_effect(100.0, 1.0, 100.0, 0.8, 0.05, Alternative::TwoSided);
/// assert!((d - minimum_detectable_effect(100.0, 0.8, 0.05, Alternative::TwoSided)).abs() < 1e-12);
/// ```
pub fn clustered_detectable_effect(
    n: f64,
    design_effect: f64,
    clusters: f64,
    power: f64,
    alpha: f64,
    alternative: Alternative,
) -> f64 {
    if !(clusters >= 2.0 && power < 1.0 && power > alpha && alpha > 0.0 && alpha < 1.0) {
        return f64::NAN;
    }
    let (search, sign) = match alternative {
        Alternative::Less => (Alternative::Greater, -1.0),
        other => (other, 1.0),
    };
    let shortfall =
        |d: f64| clustered_t_test_power(d, n, design_effect, clusters, alpha, search) - power;
    if shortfall(0.0).is_nan() {
        return f64::NAN;
    }
    sign * root_above(shortfall, 0.0, 1.0)
}

/// The design effect of clusters of `cluster_size` items (m, the mean size; for unequal sizes
/// a common approximation takes the mean) with intra-class correlation `icc`:
/// 1 + (m − 1)·ICC, the factor by which clustering inflates the variance of a mean over that
/// of independent items.
///
/// ```
/// use polars_rag::compare::stats::design_effect;
/// assert_eq!(design_effect(25.0, 0.5), 13.0);
/// assert_eq!(design_effect(1.0, 0.9), 1.0);
/// ```
pub fn design_effect(cluster_size: f64, icc: f64) -> f64 {
    1.0 + (cluster_size - 1.0) * icc
}

/// A clustered sample size, from [`clustered_sample_size`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClusteredSampleSize {
    /// Items needed: the unclustered sample size times the design effect.
    pub items: f64,
    /// Clusters needed: items / cluster size.
    pub clusters: f64,
    /// The design effect used, 1 + (m − 1)·ICC.
    pub design_effect: f64,
}

/// The sample size of [`t_test_sample_size`] for items in clusters of `cluster_size` with
/// intra-class correlation `icc`: the independent-item size inflated by the
/// [`design_effect`]. The inflation keeps the t-test's n − 1 degrees of freedom; the
/// cluster-robust test has G − 1, so with few clusters (below ~20) the real power is somewhat
/// lower than planned.
///
/// ```
/// use polars_rag::compare::stats::{clustered_sample_size, t_test_sample_size, Alternative};
/// let plan = clustered_sample_size(0.2, 0.8, 0.05, Alternative::TwoSided, 10.0, 0.1);
/// let plain = t_test_sample_size(0.2, 0.8, 0.05, Alternative::TwoSided);
/// assert!((plan.items - 1.9 * plain).abs() < 1e-9 && (plan.clusters - plan.items / 10.0).abs() < 1e-12);
/// ```
pub fn clustered_sample_size(
    effect_size: f64,
    power: f64,
    alpha: f64,
    alternative: Alternative,
    cluster_size: f64,
    icc: f64,
) -> ClusteredSampleSize {
    let deff = design_effect(cluster_size, icc);
    let items = t_test_sample_size(effect_size, power, alpha, alternative) * deff;
    ClusteredSampleSize {
        items,
        clusters: items / cluster_size,
        design_effect: deff,
    }
}

/// The [`minimum_detectable_effect`] of `n` items in clusters of `cluster_size` with intra-class
/// correlation `icc`: that of the n / design effect independent items they are worth (NaN when
/// that is at most 1).
///
/// ```
/// use polars_rag::compare::stats::{clustered_minimum_detectable_effect, minimum_detectable_effect, Alternative};
/// let d = clustered_minimum_detectable_effect(1000.0, 25.0, 0.5, 0.8, 0.05, Alternative::TwoSided);
/// assert_eq!(d, minimum_detectable_effect(1000.0 / 13.0, 0.8, 0.05, Alternative::TwoSided));
/// ```
pub fn clustered_minimum_detectable_effect(
    n: f64,
    cluster_size: f64,
    icc: f64,
    power: f64,
    alpha: f64,
    alternative: Alternative,
) -> f64 {
    minimum_detectable_effect(
        n / design_effect(cluster_size, icc),
        power,
        alpha,
        alternative,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_weights_sum_to_one() {
        for lambda in [0.3, 4.5, 1250.0, 1e5] {
            let mode = f64::floor(lambda);
            let direct: f64 = (0..=(mode as usize * 3 + 60))
                .map(|j| poisson_probability(j as f64, lambda))
                .sum();
            assert!((direct - 1.0).abs() < 1e-12, "λ = {lambda}: {direct}");
        }
    }

    #[test]
    fn gamma_ratio_matches_ln_gamma() {
        for j in [0.0, 1.0, 7.0, 30.0] {
            let direct = ln_gamma(j + 1.0) - ln_gamma(j + 1.5);
            assert!((ln_gamma_ratio_half(j) - direct).abs() < 1e-13, "{j}");
        }
    }

    #[test]
    fn noncentral_t_reflection_and_limits() {
        let (df, nc) = (12.0, 1.7);
        for t in [0.4, 1.0, 2.5] {
            let lower = noncentral_t_cdf(-t, df, nc);
            let upper = noncentral_t_cdf(t, df, -nc);
            assert!((lower + upper - 1.0).abs() < 1e-14);
        }
        assert_eq!(noncentral_t_cdf(f64::INFINITY, 3.0, 2.0), 1.0);
        assert!(noncentral_t_cdf(1.0, 0.0, 2.0).is_nan());
        // At t = 0 only the normal part remains: Φ(−δ).
        assert!((noncentral_t_cdf(0.0, 5.0, 1.0) - 0.15865525393145707).abs() < 1e-16);
    }

    #[test]
    fn noncentral_t_matches_quadrature_where_scipy_drifts() {
        // 30-digit quadrature with mpmath, F(t) = ∫ Φ(t·√(v/ν) − δ) χ²_ν(v) dv, at df = 1e5,
        // where scipy 1.17's nct.cdf is off by up to 3e-12 relative (same side) and 6e-14
        // absolute (opposite sides, where the series cancels here too: 3e-14).
        let df = 1e5;
        for (nc, exact) in [(-1.0, 0.02275296650681988), (-0.1, 0.0018662463726963038)] {
            let got = noncentral_t_cdf(-3.0, df, nc);
            assert!((got - exact).abs() <= 1e-13 * exact, "{nc}: {got:e}");
        }
        for (nc, exact) in [(0.5, 0.00023270435552784933), (1.5, 3.399411685797146e-6)] {
            let got = noncentral_t_cdf(-3.0, df, nc);
            assert!((got - exact).abs() <= 5e-14, "{nc}: {got:e}");
        }
    }

    #[test]
    fn solvers_invert_the_power() {
        for alternative in [Alternative::TwoSided, Alternative::Greater] {
            let n = t_test_sample_size(0.3, 0.9, 0.01, alternative);
            assert!((t_test_power(0.3, n, 0.01, alternative) - 0.9).abs() < 1e-12);
            let d = minimum_detectable_effect(n, 0.9, 0.01, alternative);
            assert!((d - 0.3).abs() < 1e-10, "{d}");
        }
        assert_eq!(
            t_test_sample_size(50.0, 0.8, 0.05, Alternative::TwoSided),
            2.0
        );
        assert!(t_test_sample_size(0.0, 0.8, 0.05, Alternative::TwoSided).is_nan());
        assert!(minimum_detectable_effect(50.0, 0.04, 0.05, Alternative::TwoSided).is_nan());
    }
}
