//! Multiplicity adjustment of a family of p-values: Holm's step-down procedure (the family-wise
//! error rate) and Benjamini–Hochberg's step-up procedure (the false discovery rate).
//!
//! Each function reproduces statsmodels' `multipletests(p, alpha, method="holm")` or
//! `method="fdr_bh"` operation for operation, so that the adjusted values agree to the last
//! bit or two and the rejections agree even at the boundary.
//!
//! Missing p-values: a NaN marks a test that could not be computed (no test on constant deltas,
//! say). It is left out of the family: the other p-values are adjusted as if it were absent
//! (the family size counts only the present ones), its adjusted value is NaN and it is never
//! rejected. statsmodels has no such rule: given a NaN, Holm counts it in the family size and
//! Benjamini–Hochberg returns NaN for every adjusted value, so the values here equal
//! statsmodels' on the p-values with the NaNs removed.
//!
//! The p-values are expected in [0, 1]; other values go through the same arithmetic as in
//! statsmodels (an adjusted value is capped at 1, never clamped below).

/// The positions of the present (non-NaN) p-values, sorted by p-value.
///
/// The order among equal p-values does not change any result: both procedures give tied
/// p-values the same adjusted value and the same decision (the running maximum, or minimum,
/// carries the value across the tie).
fn sorted_present(p: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..p.len()).filter(|&i| !p[i].is_nan()).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    order
}

/// Holm's adjusted p-values (`statsmodels.stats.multitest.multipletests(p, method="holm")[1]`):
/// with the m present p-values sorted, p₍ᵢ₎ (i = 1..m) is multiplied by m − i + 1, made
/// non-decreasing by a running maximum and capped at 1. Rejecting where the adjusted value is at
/// most α keeps the probability of any false rejection in the family at most α, whatever the
/// dependence between the tests.
///
/// NaN p-values are left out of the family and stay NaN (see the module documentation).
///
/// ```
/// use polars_rag::compare::stats::holm_adjust;
/// let adjusted = holm_adjust(&[0.01, 0.04, 0.03, f64::NAN]);
/// // statsmodels: multipletests([0.01, 0.04, 0.03], method="holm")[1] == [0.03, 0.06, 0.06]
/// assert_eq!(&adjusted[..3], &[0.03, 0.06, 0.06]);
/// assert!(adjusted[3].is_nan());
/// ```
pub fn holm_adjust(p: &[f64]) -> Vec<f64> {
    let order = sorted_present(p);
    let m = order.len();
    let mut adjusted = vec![f64::NAN; p.len()];
    let mut running_max = f64::NEG_INFINITY;
    for (rank, &i) in order.iter().enumerate() {
        let raw = p[i] * (m - rank) as f64;
        running_max = running_max.max(raw);
        adjusted[i] = running_max.min(1.0);
    }
    adjusted
}

/// Which p-values Holm's procedure rejects at level `alpha`, as
/// `multipletests(p, alpha, method="holm")[0]`: step down through the sorted p-values while
/// p₍ᵢ₎ ≤ α / (m − i + 1), and reject those passed.
///
/// This is [`holm_adjust`]` ≤ alpha` in exact arithmetic; it is computed as statsmodels does
/// (the raw p-value against a divided threshold) so that a p-value that lands exactly on a
/// threshold is decided the same way. NaN p-values are not rejected and not counted.
///
/// ```
/// use polars_rag::compare::stats::holm_reject;
/// assert_eq!(holm_reject(&[0.01, 0.04, 0.03], 0.05), vec![true, false, false]);
/// ```
pub fn holm_reject(p: &[f64], alpha: f64) -> Vec<bool> {
    let order = sorted_present(p);
    let m = order.len();
    let mut reject = vec![false; p.len()];
    for (rank, &i) in order.iter().enumerate() {
        if p[i] > alpha / (m - rank) as f64 {
            break;
        }
        reject[i] = true;
    }
    reject
}

/// The Benjamini–Hochberg adjusted p-values, or q-values
/// (`multipletests(p, method="fdr_bh")[1]`): with the m present p-values sorted, p₍ᵢ₎ is divided
/// by i / m, made non-decreasing by a running minimum from the largest down and capped at 1.
/// Rejecting where the q-value is at most α keeps the expected share of false rejections among
/// the rejections at most α for independent (or positively dependent) tests.
///
/// NaN p-values are left out of the family and stay NaN (see the module documentation).
///
/// ```
/// use polars_rag::compare::stats::benjamini_hochberg;
/// // statsmodels: multipletests([0.01, 0.04, 0.03, 0.2], method="fdr_bh")[1]
/// let q = benjamini_hochberg(&[0.01, 0.04, 0.03, 0.2]);
/// let expected = [0.04, 0.05333333333333334, 0.05333333333333334, 0.2];
/// for (got, want) in q.iter().zip(expected) {
///     assert!((got - want).abs() < 1e-15);
/// }
/// ```
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let order = sorted_present(p);
    let m = order.len();
    let mut adjusted = vec![f64::NAN; p.len()];
    let mut running_min = f64::INFINITY;
    for (rank, &i) in order.iter().enumerate().rev() {
        // statsmodels' order of operations: the empirical CDF i/m first, then the division.
        let ecdf = (rank + 1) as f64 / m as f64;
        running_min = running_min.min(p[i] / ecdf);
        adjusted[i] = running_min.min(1.0);
    }
    adjusted
}

/// Which p-values the Benjamini–Hochberg procedure rejects at false discovery rate `alpha`, as
/// `multipletests(p, alpha, method="fdr_bh")[0]`: find the largest i with
/// p₍ᵢ₎ ≤ (i / m)·α and reject the i smallest p-values.
///
/// [`benjamini_hochberg`]` ≤ alpha` in exact arithmetic, computed as statsmodels does so that
/// boundary cases agree. NaN p-values are not rejected and not counted.
///
/// ```
/// use polars_rag::compare::stats::benjamini_hochberg_reject;
/// // 0.03 > 0.05·2/4 on its own, but the largest, 0.04 ≤ 0.05·4/4, rejects all four.
/// assert_eq!(
///     benjamini_hochberg_reject(&[0.01, 0.04, 0.03, 0.035], 0.05),
///     vec![true, true, true, true]
/// );
/// ```
pub fn benjamini_hochberg_reject(p: &[f64], alpha: f64) -> Vec<bool> {
    let order = sorted_present(p);
    let m = order.len();
    let mut reject = vec![false; p.len()];
    let last = order
        .iter()
        .enumerate()
        .rposition(|(rank, &i)| p[i] <= (rank + 1) as f64 / m as f64 * alpha);
    if let Some(last) = last {
        for &i in &order[..=last] {
            reject[i] = true;
        }
    }
    reject
}

/// How a comparison controls the errors of its family of tests: which adjusted p-value decides
/// `significant`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Adjust {
    /// Each test on its own at level α (the family's chance of any false alarm grows with its
    /// size).
    None,
    /// Holm's step-down procedure: the chance of any false alarm in the family is at most α.
    #[default]
    Holm,
    /// Benjamini–Hochberg: the expected share of false alarms among the flagged tests is at
    /// most α.
    Bh,
}

impl Adjust {
    /// The name, as the command line and Python spell it.
    pub fn name(self) -> &'static str {
        match self {
            Adjust::None => "none",
            Adjust::Holm => "holm",
            Adjust::Bh => "bh",
        }
    }
}

impl std::str::FromStr for Adjust {
    type Err = crate::Error;

    /// Parses `none`, `holm` or `bh` (statsmodels' `fdr_bh` too).
    ///
    /// ```
    /// use polars_rag::compare::stats::Adjust;
    /// assert_eq!("fdr_bh".parse::<Adjust>().unwrap(), Adjust::Bh);
    /// assert!("bonferroni".parse::<Adjust>().unwrap_err().to_string().contains("none, holm or bh"));
    /// ```
    fn from_str(s: &str) -> crate::Result<Self> {
        match s {
            "none" => Ok(Adjust::None),
            "holm" => Ok(Adjust::Holm),
            "bh" | "fdr_bh" => Ok(Adjust::Bh),
            _ => Err(crate::Error::options(format!(
                "adjust must be none, holm or bh, got '{}'",
                crate::text::shown::shown(s)
            ))),
        }
    }
}

/// A family of tests decided together: Holm's adjusted p-values, the Benjamini–Hochberg
/// q-values and, per test, whether `adjust` rejects it at level `alpha` (with
/// [`Adjust::None`], the raw p-value below `alpha`, each test on its own). NaN p-values are
/// left out (see the module documentation).
///
/// ```
/// use polars_rag::compare::stats::{decide_family, Adjust};
/// let family = decide_family(&[0.01, 0.04, 0.03], Adjust::Holm, 0.05);
/// assert_eq!(family.reject, vec![true, false, false]);
/// assert_eq!(decide_family(&[0.01, 0.04, 0.03], Adjust::None, 0.05).reject, vec![true; 3]);
/// assert_eq!(family.size, 3);
/// ```
pub fn decide_family(p: &[f64], adjust: Adjust, alpha: f64) -> FamilyDecision {
    FamilyDecision {
        size: p.iter().filter(|v| !v.is_nan()).count(),
        holm: holm_adjust(p),
        bh: benjamini_hochberg(p),
        reject: match adjust {
            Adjust::None => p.iter().map(|&v| v < alpha).collect(),
            Adjust::Holm => holm_reject(p, alpha),
            Adjust::Bh => benjamini_hochberg_reject(p, alpha),
        },
    }
}

/// A column of p-values adjusted as one family by `method` (Holm's adjusted p-values, the
/// Benjamini–Hochberg q-values, or the p-values themselves with [`Adjust::None`]): a missing
/// or NaN p-value stays missing and is left out of the family. A p-value outside [0, 1] is an
/// error naming `function` and the row.
///
/// ```
/// use polars_rag::compare::stats::{adjust_p_values, Adjust};
/// let q = adjust_p_values("p_adjust", &[Some(0.01), None, Some(0.04), Some(0.03)], Adjust::Holm).unwrap();
/// assert_eq!(q, vec![Some(0.03), None, Some(0.06), Some(0.06)]);
/// assert!(adjust_p_values("p_adjust", &[Some(1.5)], Adjust::Bh).unwrap_err().to_string().contains("row 0"));
/// ```
pub fn adjust_p_values(
    function: &str,
    p: &[Option<f64>],
    method: Adjust,
) -> crate::Result<Vec<Option<f64>>> {
    if let Some((row, value)) = p.iter().enumerate().find_map(|(i, v)| {
        v.filter(|v| !(0.0..=1.0).contains(v) && !v.is_nan())
            .map(|v| (i, v))
    }) {
        return Err(crate::Error::new(
            crate::ErrorKind::InvalidInput,
            format!("{function}: a p-value must be in [0, 1], got {value} at row {row}"),
        ));
    }
    let values: Vec<f64> = p.iter().map(|v| v.unwrap_or(f64::NAN)).collect();
    let adjusted = match method {
        Adjust::None => values,
        Adjust::Holm => holm_adjust(&values),
        Adjust::Bh => benjamini_hochberg(&values),
    };
    Ok(adjusted
        .into_iter()
        .map(|v| (!v.is_nan()).then_some(v))
        .collect())
}

/// What [`decide_family`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct FamilyDecision {
    /// The tests in the family (p-values present).
    pub size: usize,
    /// Holm's adjusted p-value per test.
    pub holm: Vec<f64>,
    /// The Benjamini–Hochberg q-value per test.
    pub bh: Vec<f64>,
    /// Whether the chosen procedure rejects each test.
    pub reject: Vec<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_all_missing_families() {
        assert!(holm_adjust(&[]).is_empty());
        assert!(benjamini_hochberg_reject(&[], 0.05).is_empty());
        let missing = [f64::NAN, f64::NAN];
        assert!(holm_adjust(&missing).iter().all(|q| q.is_nan()));
        assert!(benjamini_hochberg(&missing).iter().all(|q| q.is_nan()));
        assert_eq!(holm_reject(&missing, 0.05), vec![false, false]);
    }

    #[test]
    fn a_missing_p_value_is_left_out_of_the_family() {
        let with = holm_adjust(&[0.01, f64::NAN, 0.03]);
        let without = holm_adjust(&[0.01, 0.03]);
        assert_eq!((with[0], with[2]), (without[0], without[1]));
        let with = benjamini_hochberg(&[f64::NAN, 0.02, 0.03]);
        assert_eq!(&with[1..], &benjamini_hochberg(&[0.02, 0.03])[..]);
    }

    #[test]
    fn adjusted_values_are_monotone_and_capped() {
        let p = [0.9, 0.001, 0.5, 0.5, 0.04, 1.0, 0.0];
        for adjusted in [holm_adjust(&p), benjamini_hochberg(&p)] {
            let mut pairs: Vec<(f64, f64)> = p.iter().copied().zip(adjusted).collect();
            pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
            for w in pairs.windows(2) {
                assert!(w[0].1 <= w[1].1, "{pairs:?}");
            }
            assert!(pairs.iter().all(|&(raw, q)| raw <= q && q <= 1.0));
        }
    }
}
