//! How far a judge can be trusted: its agreement with labels (or with a second run), as accuracy,
//! Cohen's kappa and the confusion matrix. Kappa is computed as scikit-learn's
//! `cohen_kappa_score` does (1 − observed / expected disagreement from the confusion matrix), so
//! the numbers match it.
//!
//! ```
//! use polars_rag::metrics::judged::agreement::agreement;
//! // Two raters, 50 items: both yes 20, yes/no 5, no/yes 10, both no 15: kappa 0.4.
//! let mut pairs = Vec::new();
//! for (a, b, n) in [("yes", "yes", 20), ("yes", "no", 5), ("no", "yes", 10), ("no", "no", 15)] {
//!     pairs.extend(std::iter::repeat((Some(a), Some(b))).take(n));
//! }
//! let a = agreement(pairs);
//! assert_eq!((a.n, a.accuracy), (50, Some(0.7)));
//! assert!((a.kappa.unwrap() - 0.4).abs() < 1e-12);
//! ```

use std::collections::BTreeMap;

use crate::metrics::numpy::numpy_sum;

/// Agreement of predictions with labels.
#[derive(Clone, Debug, PartialEq)]
pub struct Agreement {
    /// Pairs compared (both sides present).
    pub n: usize,
    /// Pairs with a label but no prediction (the judge failed): left out of the figures.
    pub failed: usize,
    /// Share of compared pairs where prediction and label are equal; `None` when none compared.
    pub accuracy: Option<f64>,
    /// Cohen's kappa; `None` when it is undefined (no pair, or no disagreement is possible by
    /// chance: one category on both sides).
    pub kappa: Option<f64>,
    /// `(label, predicted, count)` for every combination that occurs, sorted by label then
    /// prediction.
    pub confusion: Vec<(String, String, usize)>,
}

/// The agreement of `(predicted, label)` pairs. A pair without a label is left out; one with a
/// label but no prediction counts as `failed`.
pub fn agreement<'a>(
    pairs: impl IntoIterator<Item = (Option<&'a str>, Option<&'a str>)>,
) -> Agreement {
    let mut cells: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut failed = 0usize;
    for (predicted, label) in pairs {
        match (predicted, label) {
            (Some(p), Some(l)) => *cells.entry((l, p)).or_default() += 1,
            (None, Some(_)) => failed += 1,
            _ => {}
        }
    }
    let n: usize = cells.values().sum();
    let agree: usize = cells
        .iter()
        .filter(|((l, p), _)| l == p)
        .map(|(_, c)| c)
        .sum();
    let accuracy = (n > 0).then(|| agree as f64 / n as f64);
    Agreement {
        n,
        failed,
        accuracy,
        kappa: cohen_kappa(&cells, n),
        confusion: cells
            .into_iter()
            .map(|((l, p), c)| (l.to_string(), p.to_string(), c))
            .collect(),
    }
}

/// scikit-learn's `cohen_kappa_score(labels, predicted)`: with the confusion matrix C over the
/// sorted categories and E the outer product of its column and row sums over n,
/// κ = 1 − Σᵢ≠ⱼ Cᵢⱼ / Σᵢ≠ⱼ Eᵢⱼ, each sum numpy's over the row-major matrix (zeros on the
/// diagonal), so the last bit is scikit-learn's too.
fn cohen_kappa(cells: &BTreeMap<(&str, &str), usize>, n: usize) -> Option<f64> {
    let mut categories: Vec<&str> = cells.keys().flat_map(|(l, p)| [*l, *p]).collect();
    categories.sort_unstable();
    categories.dedup();
    let k = categories.len();
    let index = |c: &str| categories.binary_search(&c).unwrap_or(0);
    let mut matrix = vec![0.0f64; k * k];
    for ((l, p), c) in cells {
        matrix[index(l) * k + index(p)] = *c as f64;
    }
    let column_sums: Vec<f64> = (0..k)
        .map(|j| (0..k).map(|i| matrix[i * k + j]).sum())
        .collect();
    let row_sums: Vec<f64> = (0..k)
        .map(|i| matrix[i * k..(i + 1) * k].iter().sum())
        .collect();
    let total: f64 = column_sums.iter().sum();
    let off_diagonal = |f: &dyn Fn(usize, usize) -> f64| -> Vec<f64> {
        (0..k * k)
            .map(|x| {
                let (i, j) = (x / k, x % k);
                if i == j {
                    0.0
                } else {
                    f(i, j)
                }
            })
            .collect()
    };
    let observed = numpy_sum(&off_diagonal(&|i, j| matrix[i * k + j]));
    let expected = numpy_sum(&off_diagonal(&|i, j| column_sums[i] * row_sums[j] / total));
    let kappa = 1.0 - observed / expected;
    (n > 0 && kappa.is_finite()).then_some(kappa)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_and_missing_labels() {
        let a = agreement([
            (Some("a"), Some("a")),
            (None, Some("b")),
            (Some("b"), None),
            (Some("b"), Some("a")),
        ]);
        assert_eq!((a.n, a.failed, a.accuracy), (2, 1, Some(0.5)));
        assert_eq!(
            a.confusion,
            vec![("a".into(), "a".into(), 1), ("a".into(), "b".into(), 1)]
        );
        // One category everywhere: kappa is undefined, as in scikit-learn (NaN).
        assert_eq!(agreement([(Some("x"), Some("x"))]).kappa, None);
        assert_eq!(agreement([]).accuracy, None);
    }
}
