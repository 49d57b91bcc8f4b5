//! How closely a judge's numeric scores follow labels (a person's, or a stronger judge's): the
//! mean absolute error, the bias, Spearman's and Kendall's rank correlations and, when the
//! scores are grades (0/1 or small integers), the accuracy and Cohen's kappa, weighted for
//! ordinal grades. Each figure is computed as the library people check it with computes it:
//! `scipy.stats.spearmanr` and `kendalltau` (τ-b, ties corrected), scikit-learn's
//! `cohen_kappa_score` (its `weights`, which weigh classes by their position in the sorted
//! list of grades, not by their values).
//!
//! ```
//! use polars_rag::metrics::calibration::{numeric_agreement, GradeKind};
//! // (label, judge): the judge is one grade too generous on two of six items.
//! let pairs = [(1.0, 1.0), (2.0, 3.0), (3.0, 3.0), (4.0, 5.0), (5.0, 5.0), (2.0, 2.0)];
//! let a = numeric_agreement(&pairs);
//! assert_eq!(a.kind, GradeKind::Ordinal);
//! assert!((a.mae.unwrap() - 2.0 / 6.0).abs() < 1e-15);
//! assert!((a.bias.unwrap() - 2.0 / 6.0).abs() < 1e-15); // judge − label
//! assert!((a.accuracy.unwrap() - 4.0 / 6.0).abs() < 1e-15);
//! assert!(a.spearman.unwrap() > 0.9 && a.kendall.unwrap() > 0.8);
//! ```

use std::cmp::Ordering;

use super::numpy::numpy_sum;

/// What the scores are, which decides the figures that make sense for them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GradeKind {
    /// Every score and label is 0 or 1: accuracy and unweighted kappa as well.
    Binary,
    /// Every score and label is an integer, with at most [`MAX_ORDINAL_GRADES`] distinct values:
    /// accuracy and quadratic-weighted kappa as well.
    Ordinal,
    /// Anything else: no accuracy or kappa.
    Continuous,
    /// Verdicts as text (see [`crate::metrics::judged::agreement`]).
    Categorical,
}

impl GradeKind {
    /// The name in tables and reports.
    pub fn name(self) -> &'static str {
        match self {
            GradeKind::Binary => "binary",
            GradeKind::Ordinal => "ordinal",
            GradeKind::Continuous => "continuous",
            GradeKind::Categorical => "categorical",
        }
    }
}

/// The most distinct integer values a scale may have and still be read as grades.
pub const MAX_ORDINAL_GRADES: usize = 20;

/// How scikit-learn's `cohen_kappa_score` weighs a disagreement between the classes at sorted
/// positions i and j.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KappaWeights {
    /// Every disagreement weighs 1 (plain Cohen's kappa).
    Unweighted,
    /// |i − j|.
    Linear,
    /// (i − j)².
    Quadratic,
}

/// The agreement of judge scores with labels over the pairs that have both.
#[derive(Clone, Debug, PartialEq)]
pub struct NumericAgreement {
    /// Pairs compared.
    pub n: usize,
    /// Binary, ordinal or continuous.
    pub kind: GradeKind,
    /// Mean |judge − label|.
    pub mae: Option<f64>,
    /// Mean (judge − label): positive when the judge is more generous than the labels.
    pub bias: Option<f64>,
    /// Spearman's ρ; `None` when either side is constant (scipy: NaN).
    pub spearman: Option<f64>,
    /// Kendall's τ-b; `None` when either side is constant.
    pub kendall: Option<f64>,
    /// The share of exact agreements (grades only).
    pub accuracy: Option<f64>,
    /// Cohen's kappa: unweighted for binary grades, quadratic-weighted for ordinal ones.
    pub kappa: Option<f64>,
    /// The weighting of `kappa`.
    pub kappa_weights: Option<KappaWeights>,
}

/// The kind of a set of `(label, judge)` pairs: binary, ordinal or continuous.
pub fn grade_kind(pairs: &[(f64, f64)]) -> GradeKind {
    let values = || pairs.iter().flat_map(|&(l, j)| [l, j]);
    if values().all(|v| v == 0.0 || v == 1.0) {
        return GradeKind::Binary;
    }
    if values().all(|v| v.is_finite() && v.fract() == 0.0) {
        let mut distinct: Vec<f64> = values().collect();
        distinct.sort_by(f64::total_cmp);
        distinct.dedup();
        if distinct.len() <= MAX_ORDINAL_GRADES {
            return GradeKind::Ordinal;
        }
    }
    GradeKind::Continuous
}

/// The agreement of `(label, judge)` pairs (all finite). Empty input gives `None` figures.
pub fn numeric_agreement(pairs: &[(f64, f64)]) -> NumericAgreement {
    let n = pairs.len();
    let kind = grade_kind(pairs);
    let labels: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    let judged: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    let mean_of = |values: Vec<f64>| (n > 0).then(|| numpy_sum(&values) / n as f64);
    let mae = mean_of(pairs.iter().map(|(l, j)| (j - l).abs()).collect());
    let bias = mean_of(pairs.iter().map(|(l, j)| j - l).collect());
    let weights = match kind {
        GradeKind::Binary => Some(KappaWeights::Unweighted),
        GradeKind::Ordinal => Some(KappaWeights::Quadratic),
        GradeKind::Continuous | GradeKind::Categorical => None,
    };
    let accuracy = weights.and(mean_of(
        pairs
            .iter()
            .map(|(l, j)| if l == j { 1.0 } else { 0.0 })
            .collect(),
    ));
    NumericAgreement {
        n,
        kind,
        mae,
        bias,
        spearman: spearman(&judged, &labels),
        kendall: kendall_tau_b(&judged, &labels),
        accuracy,
        kappa: weights.and_then(|w| weighted_kappa(&labels, &judged, w)),
        kappa_weights: weights,
    }
}

/// Average ranks (1-based; ties share the mean of their positions), as `scipy.stats.rankdata`.
fn average_ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && values[order[end]] == values[order[start]] {
            end += 1;
        }
        // Positions start+1 ..= end share their mean.
        let rank = (start + 1 + end) as f64 / 2.0;
        for &i in &order[start..end] {
            ranks[i] = rank;
        }
        start = end;
    }
    ranks
}

/// Pearson's correlation; `None` when either side is constant or there are fewer than 2 pairs.
fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len();
    if n < 2 {
        return None;
    }
    let (mx, my) = (numpy_sum(x) / n as f64, numpy_sum(y) / n as f64);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        let (dx, dy) = (a - mx, b - my);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if sxx == 0.0 || syy == 0.0 {
        return None;
    }
    Some((sxy / (sxx.sqrt() * syy.sqrt())).clamp(-1.0, 1.0))
}

/// Spearman's rank correlation (`scipy.stats.spearmanr(x, y).statistic`): Pearson's
/// correlation of the average ranks. `None` where scipy gives NaN (a constant side, < 2 pairs).
///
/// ```
/// use polars_rag::metrics::calibration::spearman;
/// let rho = spearman(&[1.0, 2.0, 3.0], &[10.0, 40.0, 30.0]).unwrap();
/// assert!((rho - 0.5).abs() < 1e-12);
/// assert_eq!(spearman(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]), None);
/// ```
pub fn spearman(x: &[f64], y: &[f64]) -> Option<f64> {
    pearson(&average_ranks(x), &average_ranks(y))
}

/// Pairs tied within each run of equal values of `sorted` (already sorted).
fn tied_pairs(sorted: &[f64]) -> u64 {
    let mut ties = 0u64;
    let mut start = 0;
    while start < sorted.len() {
        let mut end = start + 1;
        while end < sorted.len() && sorted[end] == sorted[start] {
            end += 1;
        }
        let run = (end - start) as u64;
        ties += run * (run - 1) / 2;
        start = end;
    }
    ties
}

/// Kendall's τ-b (`scipy.stats.kendalltau(x, y).statistic`), in O(n log n): concordant minus
/// discordant pairs over the geometric mean of the pairs untied in x and untied in y. `None`
/// where scipy gives NaN (every pair tied on a side, < 2 pairs).
///
/// ```
/// use polars_rag::metrics::calibration::kendall_tau_b;
/// assert_eq!(kendall_tau_b(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]), Some(-1.0));
/// // Two concordant pairs and one tied in x: τ-b = 2 / √(2 · 3).
/// let tau = kendall_tau_b(&[1.0, 1.0, 2.0], &[1.0, 2.0, 3.0]).unwrap();
/// assert!((tau - 2.0 / (2.0f64 * 3.0).sqrt()).abs() < 1e-15);
/// ```
pub fn kendall_tau_b(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len();
    if n < 2 {
        return None;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| x[a].total_cmp(&x[b]).then_with(|| y[a].total_cmp(&y[b])));
    let xs: Vec<f64> = order.iter().map(|&i| x[i]).collect();
    let ys: Vec<f64> = order.iter().map(|&i| y[i]).collect();
    // Pairs tied on both sides.
    let mut joint = 0u64;
    let mut start = 0;
    while start < n {
        let mut end = start + 1;
        while end < n && xs[end] == xs[start] && ys[end] == ys[start] {
            end += 1;
        }
        let run = (end - start) as u64;
        joint += run * (run - 1) / 2;
        start = end;
    }
    let x_ties = tied_pairs(&xs);
    let mut y_sorted = ys.clone();
    y_sorted.sort_by(f64::total_cmp);
    let y_ties = tied_pairs(&y_sorted);
    // Discordant pairs: i before j in (x, y) order with y_i > y_j strictly. Ties in x are
    // ordered by y, so they are never counted. A Fenwick tree over the ranks of y.
    let rank_of = |v: f64| y_sorted.partition_point(|w| w.total_cmp(&v) == Ordering::Less);
    let mut tree = vec![0u64; n + 1];
    let mut discordant = 0u64;
    for (seen, &v) in ys.iter().enumerate() {
        // Earlier values ≤ v: count the prefix up to the last position of v.
        let upper = y_sorted.partition_point(|w| w.total_cmp(&v) != Ordering::Greater);
        let mut at_most = 0u64;
        let mut i = upper;
        while i > 0 {
            at_most += tree[i];
            i &= i - 1;
        }
        discordant += seen as u64 - at_most;
        let mut i = rank_of(v) + 1;
        while i <= n {
            tree[i] += 1;
            i += i & i.wrapping_neg();
        }
    }
    let total = (n as u64) * (n as u64 - 1) / 2;
    if x_ties == total || y_ties == total {
        return None;
    }
    let concordant_minus_discordant =
        total as f64 - x_ties as f64 - y_ties as f64 + joint as f64 - 2.0 * discordant as f64;
    let tau = concordant_minus_discordant
        / (total as f64 - x_ties as f64).sqrt()
        / (total as f64 - y_ties as f64).sqrt();
    Some(tau.clamp(-1.0, 1.0))
}

/// Cohen's kappa of two raters' grades, as scikit-learn's `cohen_kappa_score(first, second,
/// weights=...)`: over the sorted distinct grades of both, 1 − Σ w·observed / Σ w·expected.
/// `None` where scikit-learn gives NaN (no disagreement possible by chance) or no pair.
///
/// ```
/// use polars_rag::metrics::calibration::{weighted_kappa, KappaWeights};
/// let labels = [1.0, 2.0, 3.0, 4.0, 5.0, 3.0];
/// let judged = [1.0, 3.0, 3.0, 5.0, 5.0, 2.0];
/// let unweighted = weighted_kappa(&labels, &judged, KappaWeights::Unweighted).unwrap();
/// let quadratic = weighted_kappa(&labels, &judged, KappaWeights::Quadratic).unwrap();
/// // Near misses cost little once disagreements are weighed by distance.
/// assert!(quadratic > unweighted);
/// ```
pub fn weighted_kappa(first: &[f64], second: &[f64], weights: KappaWeights) -> Option<f64> {
    let n = first.len().min(second.len());
    if n == 0 {
        return None;
    }
    let mut classes: Vec<f64> = first[..n].iter().chain(&second[..n]).copied().collect();
    classes.sort_by(f64::total_cmp);
    classes.dedup();
    let k = classes.len();
    let index = |v: f64| classes.partition_point(|c| c.total_cmp(&v) == Ordering::Less);
    let mut confusion = vec![0.0f64; k * k];
    let (mut rows, mut columns) = (vec![0.0f64; k], vec![0.0f64; k]);
    for (&a, &b) in first[..n].iter().zip(&second[..n]) {
        let (i, j) = (index(a), index(b));
        confusion[i * k + j] += 1.0;
        rows[i] += 1.0;
        columns[j] += 1.0;
    }
    let weight = |i: usize, j: usize| -> f64 {
        let d = i.abs_diff(j) as f64;
        match weights {
            KappaWeights::Unweighted => (i != j) as u8 as f64,
            KappaWeights::Linear => d,
            KappaWeights::Quadratic => d * d,
        }
    };
    let total = n as f64;
    let (mut observed, mut expected) = (0.0, 0.0);
    for i in 0..k {
        for j in 0..k {
            let w = weight(i, j);
            observed += w * confusion[i * k + j];
            expected += w * columns[i] * rows[j] / total;
        }
    }
    let kappa = 1.0 - observed / expected;
    kappa.is_finite().then_some(kappa)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// τ-b by its definition, over every pair: the O(n log n) count must equal it.
    fn kendall_by_pairs(x: &[f64], y: &[f64]) -> Option<f64> {
        let (mut concordant, mut discordant, mut x_ties, mut y_ties) =
            (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        let n = x.len();
        let mut total = 0.0f64;
        for i in 0..n {
            for j in i + 1..n {
                total += 1.0;
                let (dx, dy) = (x[i] - x[j], y[i] - y[j]);
                if dx == 0.0 {
                    x_ties += 1.0;
                }
                if dy == 0.0 {
                    y_ties += 1.0;
                }
                if dx * dy > 0.0 {
                    concordant += 1.0;
                } else if dx * dy < 0.0 {
                    discordant += 1.0;
                }
            }
        }
        if x_ties == total || y_ties == total || n < 2 {
            return None;
        }
        Some((concordant - discordant) / ((total - x_ties) * (total - y_ties)).sqrt())
    }

    #[test]
    fn kendall_counts_equal_the_pairwise_definition() {
        let mut state = 7u64;
        let mut next = |m: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) % m) as f64
        };
        for size in [2, 3, 5, 17, 60] {
            for grades in [2, 3, 6, 1000] {
                let x: Vec<f64> = (0..size).map(|_| next(grades)).collect();
                let y: Vec<f64> = (0..size).map(|_| next(grades)).collect();
                let (fast, slow) = (kendall_tau_b(&x, &y), kendall_by_pairs(&x, &y));
                match (fast, slow) {
                    (Some(a), Some(b)) => assert!((a - b).abs() < 1e-12, "{x:?} {y:?}: {a} {b}"),
                    (a, b) => assert_eq!(a, b, "{x:?} {y:?}"),
                }
            }
        }
    }

    #[test]
    fn average_ranks_share_ties() {
        assert_eq!(average_ranks(&[3.0, 1.0, 3.0, 2.0]), [3.5, 1.0, 3.5, 2.0]);
    }

    #[test]
    fn kinds_follow_the_values() {
        assert_eq!(grade_kind(&[(0.0, 1.0), (1.0, 1.0)]), GradeKind::Binary);
        assert_eq!(grade_kind(&[(0.0, 2.0), (1.0, 1.0)]), GradeKind::Ordinal);
        assert_eq!(grade_kind(&[(0.5, 1.0)]), GradeKind::Continuous);
        let wide: Vec<(f64, f64)> = (0..30).map(|i| (i as f64, i as f64)).collect();
        assert_eq!(grade_kind(&wide), GradeKind::Continuous);
    }

    #[test]
    fn continuous_scores_have_no_accuracy_or_kappa() {
        let a = numeric_agreement(&[(0.2, 0.3), (0.9, 0.7), (0.5, 0.5)]);
        assert_eq!((a.accuracy, a.kappa, a.kappa_weights), (None, None, None));
        assert!((a.mae.unwrap() - 0.1).abs() < 1e-12);
    }

    #[test]
    fn nothing_to_compare_gives_no_figures() {
        let a = numeric_agreement(&[]);
        assert_eq!((a.n, a.mae, a.spearman, a.kappa), (0, None, None, None));
    }
}
