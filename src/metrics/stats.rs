//! Statistics shared by the metrics and the comparison: the alternative hypothesis of a test or
//! interval, and the standard normal quantile.

use serde::{Deserialize, Serialize};

/// The alternative hypothesis of a test or a one-sided interval, as scipy's `alternative`:
/// `two-sided`, `greater` (the quantity is above the null value: an interval with a lower bound
/// only), `less` (below it: an upper bound only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Alternative {
    /// The quantity differs from the null value.
    #[default]
    #[serde(rename = "two-sided")]
    TwoSided,
    /// The quantity is above the null value.
    #[serde(rename = "greater")]
    Greater,
    /// The quantity is below the null value.
    #[serde(rename = "less")]
    Less,
}

impl Alternative {
    /// The name, as scipy spells it.
    pub fn name(self) -> &'static str {
        match self {
            Alternative::TwoSided => "two-sided",
            Alternative::Greater => "greater",
            Alternative::Less => "less",
        }
    }
}

impl std::str::FromStr for Alternative {
    type Err = crate::Error;

    /// Parses scipy's names.
    ///
    /// ```
    /// use polars_rag::metrics::stats::Alternative;
    /// assert_eq!("greater".parse::<Alternative>().unwrap(), Alternative::Greater);
    /// assert!("bigger".parse::<Alternative>().unwrap_err().to_string().contains("two-sided, greater or less"));
    /// ```
    fn from_str(s: &str) -> crate::Result<Self> {
        [
            Alternative::TwoSided,
            Alternative::Greater,
            Alternative::Less,
        ]
        .into_iter()
        .find(|a| a.name() == s)
        .ok_or_else(|| {
            crate::Error::options(format!(
                "alternative must be two-sided, greater or less, got '{s}'"
            ))
        })
    }
}

/// The standard normal quantile (scipy's `norm.ppf`): the x with Φ(x) = `p`, −∞ at 0, +∞ at 1,
/// NaN outside [0, 1]. Acklam's rational approximation refined by one Halley step on `erfc`,
/// within a few units in the last place of scipy's value.
///
/// ```
/// use polars_rag::metrics::stats::normal_quantile;
/// assert!((normal_quantile(0.975) - 1.959963984540054).abs() < 1e-15);
/// assert_eq!(normal_quantile(0.5), 0.0);
/// assert!((normal_quantile(1e-10) + 6.361340902404056).abs() < 1e-13);
/// ```
pub fn normal_quantile(p: f64) -> f64 {
    if p.is_nan() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    if p == 0.5 {
        return 0.0;
    }
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.38357751867269e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e1,
        1.615858368580409e2,
        -1.556989798598866e2,
        6.680131188771972e1,
        -1.328068155288572e1,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [
        7.784695709041462e-3,
        3.224671290700398e-1,
        2.445134137142996,
        3.754408661907416,
    ];
    const LOW: f64 = 0.02425;
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    let mut x = if p < LOW {
        tail((-2.0 * p.ln()).sqrt())
    } else if p <= 1.0 - LOW {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    };
    // Halley's step on Φ(x) − p, Φ from erfc (accurate in both tails).
    for _ in 0..2 {
        let e = 0.5 * libm::erfc(-x / std::f64::consts::SQRT_2) - p;
        let u = e * (2.0 * std::f64::consts::PI).sqrt() * (x * x / 2.0).exp();
        x -= u / (1.0 + x * u / 2.0);
    }
    x
}

/// A normal interval around `mean` with standard error `se` at level `alpha`, as statsmodels'
/// `_zconfint_generic`: two-sided `mean ± z(1 − α/2)·se`; `Greater` from `mean + z(α)·se` to
/// +∞; `Less` from −∞ to `mean + z(1 − α)·se`.
pub fn normal_interval(mean: f64, se: f64, alpha: f64, alternative: Alternative) -> (f64, f64) {
    match alternative {
        Alternative::TwoSided => {
            let z = normal_quantile(1.0 - alpha / 2.0);
            (mean - z * se, mean + z * se)
        }
        Alternative::Greater => (mean + normal_quantile(alpha) * se, f64::INFINITY),
        Alternative::Less => (f64::NEG_INFINITY, mean + normal_quantile(1.0 - alpha) * se),
    }
}
