//! The Wilson score interval of a proportion (a win rate among decided items, say).

use crate::metrics::stats::normal_quantile;

/// The two-sided Wilson score interval of the proportion `successes / n` at level `confidence`
/// (e.g. 0.95): `statsmodels.stats.proportion.proportion_confint(successes, n,
/// alpha=1 − confidence, method="wilson")`.
///
/// With z the standard normal quantile of 1 − α/2 and p̂ = successes / n, the interval is
/// (p̂ + z²/2n ± z √(p̂(1 − p̂)/n + z²/4n²)) / (1 + z²/n), clipped to [0, 1]. Unlike the normal
/// interval p̂ ± z √(p̂(1 − p̂)/n), it keeps its coverage near 0 and 1 and never has zero width
/// at 0 or n successes.
///
/// NaN bounds when n is 0, successes exceed n, or `confidence` is outside (0, 1).
///
/// ```
/// use polars_rag::compare::stats::wilson_interval;
/// let (low, high) = wilson_interval(7, 20, 0.95);
/// // proportion_confint(7, 20, 0.05, method="wilson")
/// assert!((low - 0.18119182410108203).abs() < 1e-14 && (high - 0.5671457233147638).abs() < 1e-14);
/// let (low, high) = wilson_interval(0, 20, 0.95);
/// assert!(low == 0.0 && (high - 0.1611251580528194).abs() < 1e-14);
/// ```
pub fn wilson_interval(successes: u64, n: u64, confidence: f64) -> (f64, f64) {
    if n == 0 || successes > n || !(confidence > 0.0 && confidence < 1.0) {
        return (f64::NAN, f64::NAN);
    }
    let n = n as f64;
    let share = successes as f64 / n;
    // statsmodels' norm.isf(α/2), the upper quantile, is minus the lower one.
    let z = -normal_quantile((1.0 - confidence) / 2.0);
    let z2 = z * z;
    let denominator = 1.0 + z2 / n;
    let center = (share + z2 / (2.0 * n)) / denominator;
    let half_width = z * (share * (1.0 - share) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    // At 0 (or n) successes the low (high) end is exactly 0 (1); rounding may leave an ulp.
    let low = if successes == 0 {
        0.0
    } else {
        (center - half_width).clamp(0.0, 1.0)
    };
    let high = if successes as f64 == n {
        1.0
    } else {
        (center + half_width).clamp(0.0, 1.0)
    };
    (low, high)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn degenerate_inputs_give_nan() {
        assert!(wilson_interval(1, 0, 0.95).0.is_nan());
        assert!(wilson_interval(3, 2, 0.95).1.is_nan());
        assert!(wilson_interval(1, 2, 1.0).0.is_nan());
    }

    #[test]
    fn symmetric_in_successes_and_failures() {
        let (low, high) = wilson_interval(3, 17, 0.9);
        let (low2, high2) = wilson_interval(14, 17, 0.9);
        assert!((low - (1.0 - high2)).abs() < 1e-15 && (high - (1.0 - low2)).abs() < 1e-15);
    }
}
